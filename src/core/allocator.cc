#include "core/allocator.h"

#include <atomic>

#include "msrt/core/errors.h"

namespace msrt {
namespace {
std::atomic<Allocator*> g_allocator{nullptr};  // constant-initialised: set before any dynamic initialiser reads it
}  // namespace

void InstallAllocator(Allocator* allocator) { g_allocator.store(allocator, std::memory_order_release); }

Allocator& TensorAllocator() {
  Allocator* allocator = g_allocator.load(std::memory_order_acquire);
  if (allocator == nullptr) {
    throw RuntimeError("No tensor allocator is installed (the memory layer installs one when libmsrt loads).");
  }
  return *allocator;
}

}  // namespace msrt
