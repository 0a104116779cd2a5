// Where tensors get their memory. Core only declares the interface; the
// memory layer (src/memory/allocator.cc) implements it and installs itself
// when the library loads, so core depends on nothing above it.
#pragma once

#include <cstddef>
#include <memory>

#include "msrt/tensor/tensor.h"

namespace msrt {

class Allocator {
 public:
  virtual ~Allocator() = default;
  /// `nbytes` (64-byte aligned) on `device`; raises MemoryError when it does not fit.
  virtual std::shared_ptr<Storage> Allocate(size_t nbytes, DeviceTarget device) = 0;
};

/// Installs the allocator Tensor::Empty uses; `allocator` must outlive every
/// tensor it hands memory to.
void InstallAllocator(Allocator* allocator);
/// The installed allocator; RuntimeError when none is.
Allocator& TensorAllocator();

}  // namespace msrt
