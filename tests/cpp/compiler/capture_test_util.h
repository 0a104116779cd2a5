// What the compiler tests share: tensors from host values and graphs
// captured from C++ lambdas.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "compiler/capture.h"
#include "ops/call.h"

namespace msrt::compiler::testing {

inline Tensor Vec(std::vector<float> values) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(float), {static_cast<int64_t>(values.size())},
                          DType::kFloat32);
}

/// A float32 tensor of `shape` holding `values`.
inline Tensor Filled(const Shape& shape, const std::vector<float>& values) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(float), shape, DType::kFloat32);
}

inline std::vector<float> Read(const Tensor& t) {
  const float* p = t.data<float>();
  return {p, p + t.numel()};
}

/// The graph of `body` applied to one float32 input of `shape`.
inline std::shared_ptr<ir::Graph> CaptureOf(const std::function<std::vector<Tensor>(const Tensor&)>& body,
                                            const Shape& shape = {3}) {
  Capture capture("test", /*max_call_depth=*/100, /*whole_stack=*/false);
  Tensor x = capture.AddInput(shape, DType::kFloat32, DeviceTarget::kCPU, "x");
  std::vector<Tensor> outs;
  {
    CaptureScope scope(&capture);
    outs = body(x);
  }
  return capture.Finish(outs);
}

}  // namespace msrt::compiler::testing
