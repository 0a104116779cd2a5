// The one entry through which C++ users call ops. `msrt/ops.h` (generated at
// build time from the op declarations) defines one typed function per op on
// top of it: `msrt::ops::add(x, y)`, `msrt::ops::reduce_sum(x, {1}, true)`.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "msrt/core/errors.h"
#include "msrt/core/value.h"
#include "msrt/tensor/tensor.h"

namespace msrt::ops {

/// The outputs of one op call; converts to a Tensor when there is exactly one.
class Outputs {
 public:
  explicit Outputs(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {}
  operator Tensor() const {  // NOLINT(google-explicit-constructor): `Tensor y = ops::relu(x);`
    if (tensors_.size() != 1) {
      throw ValueError("This op returns " + std::to_string(tensors_.size()) +
                       " outputs; index them (outputs[i]) instead of converting to one Tensor.");
    }
    return tensors_[0];
  }
  const Tensor& operator[](size_t i) const { return tensors_.at(i); }
  size_t size() const { return tensors_.size(); }
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
};

/// Calls op `name` on `inputs` with attributes `attrs` (checked and completed
/// with defaults by the op's declaration); eager or captured into a graph as
/// the thread's executor says, recorded on a gradient tape when one records.
Outputs CallOp(std::string_view name, const std::vector<Tensor>& inputs, const Dict& attrs = {});

}  // namespace msrt::ops
