// One declaration per op.
//
// An OpDef says what an op takes (inputs, attributes with defaults), how its
// output shapes and dtypes follow from its inputs, how its gradient is made
// from other ops (or that it *is* other ops: a composite, which then needs
// no kernel and no gradient), and properties passes read. Eager dispatch,
// graph IR, autodiff, the binding and the op tests all read the OpDef;
// kernels register per device in src/kernels (kernel.h).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "msrt/core/errors.h"
#include "msrt/core/value.h"
#include "msrt/tensor/tensor.h"

namespace msrt::ops {

/// What inference sees of a tensor.
struct TensorMeta {
  Shape shape;
  DType dtype;
};

/// The attribute that says how an op with a LayoutSpec lays out its 4-D
/// activations, and its two values.
inline constexpr std::string_view kDataFormatAttr = "data_format";
inline constexpr std::string_view kChannelsFirst = "NCHW";  // the default
inline constexpr std::string_view kChannelsLast = "NHWC";

/// Ops with a `data_format` attribute ("NCHW" or "NHWC") that says how their
/// 4-D activations are laid out (Note [Channels-last graphs] in
/// compiler/layout.h): which inputs and outputs are such activations, and
/// which attributes hold an activation's shape. The graph compiler reads this
/// to run them channels-last.
struct LayoutSpec {
  std::vector<int> activation_inputs;
  std::vector<int> activation_outputs;
  std::vector<std::string_view> shape_attrs = {};
  /// Channels-last is worth transposes to reach (convolutions); ops without
  /// it (pooling) run channels-last only when their neighbours already do.
  bool prefers_channels_last = false;
};

struct OpProperties {
  bool elementwise = false;  // output[i] depends only on inputs[i] (after broadcasting)
  bool inplace = false;      // writes its first input and returns it as output 0
  std::vector<int> writes_inputs = {};  // other inputs it updates in place (e.g. optimizer state)
  bool random = false;       // draws from the generator (not pure)
  bool reduction = false;
  bool side_effect = false;  // has an effect beyond its outputs (printing, I/O): passes never drop or merge it
  // Algebraic simplification (graph mode): `x op c` (right) or `c op x`
  // (left) is x when c is a constant filled with this value and the result
  // keeps x's shape and dtype.
  std::optional<double> right_identity = std::nullopt;
  std::optional<double> left_identity = std::nullopt;
  bool noop_if_same_meta = false;  // output is input 0 when shape and dtype do not change
  // Graph-kernel fusion may attach unary elementwise ops to run on this op's
  // output inside its kernel (attribute kernels::kEpilogueAttr), when the
  // chosen kernel supports them.
  bool accepts_epilogue = false;
  std::optional<LayoutSpec> layout = std::nullopt;
};

/// An attribute and its default. A None default marks a required attribute.
struct AttrSpec {
  std::string_view name;
  Value default_value;
  std::string_view doc = {};
};

/// What a gradient rule receives. `dys[i]` is the gradient of output i, or
/// an undefined tensor when nothing depends on that output.
struct GradArgs {
  const std::vector<Tensor>& inputs;
  const std::vector<Tensor>& outputs;
  const std::vector<Tensor>& dys;
  const Dict& attrs;
  /// needs[i]: whether the gradient of input i is wanted (skip work if not).
  const std::vector<bool>& needs;
};

using InferFn = std::function<std::vector<TensorMeta>(const std::vector<TensorMeta>& inputs, const Dict& attrs)>;
/// Returns one tensor per input (undefined where there is no gradient).
using GradFn = std::function<std::vector<Tensor>(const GradArgs& args)>;
using CompositeFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Dict& attrs)>;

struct OpDef {
  std::string_view name;
  /// Input names; a single entry ending in "..." makes the op variadic.
  std::vector<std::string_view> inputs;
  std::vector<AttrSpec> attrs = {};
  InferFn infer = nullptr;          // required unless composite
  GradFn grad = nullptr;            // null: not differentiable
  CompositeFn composite = nullptr;  // set: built from other ops
  OpProperties props = {};
  std::string_view doc = {};
};

/// Registers an op at static-initialisation time.
bool RegisterOp(OpDef def);
/// The op called `name`, or nullptr.
const OpDef* FindOp(std::string_view name);
/// The op called `name`; ValueError naming close ones if there is none.
const OpDef& GetOp(std::string_view name);
/// Every registered op, sorted by name.
std::vector<const OpDef*> AllOps();

/// Fills defaults and rejects unknown or missing attributes (TypeError).
Dict NormalizeAttrs(const OpDef& op, const Dict& given);

// Attribute accessors for infer/grad/kernels (attributes are normalized).
int64_t AttrInt(const Dict& attrs, std::string_view name);
double AttrFloat(const Dict& attrs, std::string_view name);
bool AttrBool(const Dict& attrs, std::string_view name);
std::string AttrString(const Dict& attrs, std::string_view name);
std::vector<int64_t> AttrInts(const Dict& attrs, std::string_view name);  // an int or a sequence of ints
const Value& Attr(const Dict& attrs, std::string_view name);

/// Errors raised by ops: "[op] what is wrong; expected X, but got Y."
[[noreturn]] void OpError(ErrorKind kind, std::string_view op, std::string_view message);

/// Shape of broadcasting a and b (NumPy rules); ValueError naming the op.
Shape BroadcastShapes(std::string_view op, const Shape& a, const Shape& b);
/// Normalizes a possibly negative axis for rank `ndim`; ValueError if out of range.
int64_t NormalizeAxis(std::string_view op, int64_t axis, int64_t ndim);

}  // namespace msrt::ops

#define MSRT_OP_CONCAT_INNER_(a, b) a##b
#define MSRT_OP_CONCAT_(a, b) MSRT_OP_CONCAT_INNER_(a, b)
/// MSRT_REGISTER_OP({.name = "relu", ...});
#define MSRT_REGISTER_OP(...) \
  static const bool MSRT_OP_CONCAT_(kOpRegistered_, __COUNTER__) = ::msrt::ops::RegisterOp(::msrt::ops::OpDef __VA_ARGS__)
