// Kernels: the per-device code of an op.
//
// Several kernels may serve one op on one device; they are tried in order of
// priority (e.g. oneDNN, then a vectorised loop, then a reference loop) and
// the first whose `supports` accepts the inputs runs. Dispatch never names
// an op: it asks SelectKernel.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ops/op_def.h"

namespace msrt::kernels {

/// Attribute the fuse_epilogues pass gives an op with props.accepts_epilogue:
/// a list of unary elementwise op names applied in order to its output 0.
/// Kernels that cannot apply an epilogue must not claim support when it is
/// present.
inline constexpr std::string_view kEpilogueAttr = "__epilogue";
/// Attribute the fuse_epilogues pass gives an op that writes its output 0
/// fresh, for the unary elementwise ops after it that its kernel does not
/// apply: their names, run in order with their own kernels on that output, in
/// place, right after it (Note [In-place tails] in src/compiler/fusion.cc).
/// Kernels ignore it; the graph executor runs them.
inline constexpr std::string_view kInPlaceTailAttr = "__in_place_tail";

struct KernelArgs {
  const ops::OpDef& op;
  const std::vector<Tensor>& inputs;
  std::vector<Tensor>& outputs;  // allocated from inference (aliases for in-place ops)
  const Dict& attrs;
  /// Executor-built data for compiler-generated kernels (a fused chain's plan); null otherwise.
  const void* plan = nullptr;
};

using KernelFn = void (*)(KernelArgs& args);
using SupportsFn = bool (*)(const std::vector<ops::TensorMeta>& inputs, const Dict& attrs);

struct KernelDef {
  std::string_view op;
  DeviceTarget device = DeviceTarget::kCPU;
  std::string_view impl;          // "onednn", "vectorized", "reference", ...
  int priority = 0;               // higher is tried first
  SupportsFn supports = nullptr;  // null: supports everything the op accepts
  KernelFn run = nullptr;
};

bool RegisterKernel(KernelDef def);
/// The kernel that runs `op` on `device` for these inputs, or nullptr.
const KernelDef* SelectKernel(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                              const Dict& attrs);
/// SelectKernel, else -- when no kernel takes the inputs' floating dtype but
/// one takes a substitute (Note [Reduced precision]) -- a kernel that converts
/// those inputs to the substitute, runs that kernel and converts the results
/// back. The context key enable_reduce_precision allows the substitution (with
/// a one-time warning per op and dtypes); when it is False this raises
/// TypeError naming the op and dtype. nullptr when no dtype helps either.
const KernelDef* SelectKernelOrConvert(std::string_view op, DeviceTarget device,
                                       const std::vector<ops::TensorMeta>& inputs, const Dict& attrs);
/// Whether SelectKernelOrConvert would give a kernel (without building a
/// converting one or warning): a kernel for these inputs, or a substitute
/// dtype's kernel while enable_reduce_precision allows converting. For
/// passes that choose a form an op can run in (a float16 convolution runs
/// channels-last through its float32 kernel as well as float32 does).
bool HasKernelOrSubstitute(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                           const Dict& attrs);
/// Every kernel registered for `op` (any device), best first.
std::vector<const KernelDef*> KernelsOf(std::string_view op);
/// The ops that have at least one kernel on `device`, sorted.
std::vector<std::string> OpsWithKernelsOn(DeviceTarget device);

}  // namespace msrt::kernels

#define MSRT_KERNEL_CONCAT_INNER_(a, b) a##b
#define MSRT_KERNEL_CONCAT_(a, b) MSRT_KERNEL_CONCAT_INNER_(a, b)
/// MSRT_REGISTER_KERNEL({.op = "relu", .impl = "vectorized", .run = &Relu});
#define MSRT_REGISTER_KERNEL(...)                                                                           \
  static const bool MSRT_KERNEL_CONCAT_(kKernelRegistered_, __COUNTER__) = ::msrt::kernels::RegisterKernel( \
      ::msrt::kernels::KernelDef __VA_ARGS__)
