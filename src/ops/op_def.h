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
  /// it (pooling, batch_norm) run channels-last only when their neighbours
  /// already do.
  bool prefers_channels_last = false;
};

/// How an op's float16 results relate to its float32 ones, which lets a CPU
/// graph hold its float16 values in float32 (Note [float16 held in float32]
/// in src/compiler/half_in_float32.h).
enum class HalfCompute : uint8_t {
  kUndeclared,  // nothing is claimed: its float16 values stay float16
  // Its float16 kernels compute in float32 on the widened inputs and round
  // each float16 output once: given inputs that are float16 values held in
  // float32, its float32 result rounded to float16 is its float16 result.
  kRoundedFloat32,
  // As kRoundedFloat32, and its float32 result on float16 values is a float16
  // value already (it moves, selects or compares elements): no rounding. A
  // one-input op declared so must also commute with rounding to float16
  // (round(f(x)) == f(round(x)) up to the sign of a zero: moves, relu, max,
  // neg), which lets the rounding of its operand move after it.
  kExact,
};

/// The inputs an op takes in float16 or bfloat16 while its other floating
/// inputs stay float32, and the outputs that then take their dtype
/// (OpProperties::mixed_precision).
struct MixedPrecisionSpec {
  std::vector<int> half_inputs;
  std::vector<int> half_outputs;
};

struct OpProperties {
  bool elementwise = false;  // output[i] depends only on inputs[i] (after broadcasting)
  // Unset (kUndeclared) on an elementwise op means kRoundedFloat32: the
  // elementwise drivers compute half types in float32 (Note [Half blocks]).
  HalfCompute half_compute = HalfCompute::kUndeclared;
  // A Python scalar given for one of its inputs becomes a 0-d tensor of the
  // first tensor input's dtype (as MindSpore promotes scalars); elementwise
  // ops always do. Otherwise a scalar becomes a tensor of its own type.
  bool promotes_scalars = false;
  // Its number of outputs follows its inputs or attributes (one per input,
  // one per section): Python always gets a tuple, even of one.
  bool tuple_outputs = false;
  bool inplace = false;  // writes its first input and returns it as output 0
  // Inputs of which it reads only the shape and dtype, never the elements
  // (zeros_like's x, reshape_like's `like`): a graph's memory plan does not
  // keep their bytes alive for it (Note [Meta-only inputs] in
  // src/runtime/graph_executor.cc).
  std::vector<int> meta_only_inputs = {};
  std::vector<int> writes_inputs = {};  // other inputs it updates in place (e.g. optimizer state)
  bool random = false;                  // draws from the generator (not pure)
  bool reduction = false;
  // Its kernel costs about one pass over its inputs' and outputs' bytes (a
  // copy of parts of its input, a normalization): the O1 memory plan may run
  // it again rather than keep its outputs alive across the step's peak, as it
  // does for elementwise ops (Note [Recomputed elementwise values] in
  // src/runtime/graph_executor.cc).
  bool cheap_to_recompute = false;
  bool side_effect = false;  // has an effect beyond its outputs (printing, I/O): passes never drop or merge it
  // A side effect whose eager call waits only for its inputs, not for every
  // queued op: it still runs at the call, in call order with the other side
  // effects, while earlier queued ops that it does not read keep running on
  // the dispatcher (the gradient reducer's all-reduce beside the rest of the
  // backward pass). Only for ops that write nothing but their fresh outputs.
  bool waits_for_inputs_only = false;
  // Output shapes depend on the input values (unique): inference gives each
  // output's largest shape, the kernel replaces an output with a view of the
  // size it found. Eager calls run it synchronously; graph capture refuses it.
  bool data_dependent_shape = false;
  // Algebraic simplification (graph mode): `x op c` (right) or `c op x`
  // (left) is x when c is a constant filled with this value and the result
  // keeps x's shape and dtype.
  std::optional<double> right_identity = std::nullopt;
  std::optional<double> left_identity = std::nullopt;
  bool noop_if_same_meta = false;  // output is input 0 when shape and dtype do not change
  // Output 0 is input 0's elements, in order, in another shape (the reshape
  // family): executors may give a view of that input's storage instead of
  // running the kernel (Note [Views] in src/core/views.cc).
  bool view = false;
  // The fuse_epilogues pass may attach unary elementwise ops to run on this
  // op's output inside its kernel (attribute kernels::kEpilogueAttr), when
  // the chosen kernel supports them.
  bool accepts_epilogue = false;
  // This op is {producer, consumer}: the consumer applied to the producer's
  // output 0 as its input `fuses_input`, as one kernel (conv2d_bias is
  // {"conv2d", "bias_add"} at input 0). Its inputs are the consumer's with
  // that one replaced by the producer's inputs; its attributes are the
  // producer's and the consumer's; it writes in place what the consumer
  // writes. The fuse_pairs pass replaces such a pair by it (Note [Fused
  // pairs] in src/compiler/fusion.cc).
  std::vector<std::string_view> fuses = {};
  int fuses_input = 0;
  std::optional<LayoutSpec> layout = std::nullopt;
  // Given float16 or bfloat16 values (one dtype) for its half_inputs and
  // float32 for its other floating inputs, it computes as its float32 form
  // on the widened values and rounds each of its half_outputs once to that
  // dtype: round(op(widen(x))) is op(x). The fold_precision_casts pass then
  // drops the casts mixed precision puts around its float32 form (Note
  // [Casts folded into mixed-precision ops] in compiler/precision_casts.h).
  std::optional<MixedPrecisionSpec> mixed_precision = std::nullopt;
  // Its gradient rule handles complex values (conjugates where the chain
  // rule needs them, as PyTorch and MindSpore do): a gradient may flow
  // through it from or into a complex tensor (Note [Complex gradients]).
  bool complex_grad = false;
};

/// How an attribute is read from what a caller gave. Every op shares these
/// parsers (attr_types.cc): a value is checked and brought to one canonical
/// form once, at the call, so inference, gradients and kernels read it
/// without checking again, and graphs and cache keys see one spelling.
enum class AttrType {
  kAny,         // stored as given
  kBool,        // True or False (not 0 or 1)
  kInt,         // an int (not a bool)
  kFloat,       // a float or an int → float
  kString,      // a str; one of `choices` when they are given
  kInts,        // an int or a sequence of ints → list of ints
  kAxes,        // None, an int or a sequence of ints → list of ints ([] = every axis)
  kAxis,        // an int, or a sequence of one int → int
  kShape,       // a sequence of ints ≥ -1 → list of ints
  kDType,       // a dtype name ("float32", "Float32", "bool_") → canonical name
  kDataFormat,  // "NCHW" or "NHWC"
  kPadMode,     // "valid", "same" or "pad", any case → lower case
  kPair,        // an int or 2 ints (or 4 with leading 1, 1) of positive ints → [h, w]
  kPadding,     // an int or 4 ints (top, bottom, left, right) ≥ 0 → 4 ints
  kTriple,      // an int or 3 ints (or 5 with leading 1, 1) of positive ints → [d, h, w]
  kPadding6,    // an int or 6 ints (front, back, top, bottom, left, right) ≥ 0 → 6 ints
  kScalar,      // a bool, an int or a float, kept as given (a composite may read its kind)
};

/// An attribute: its name, default, how it is parsed and, optionally, the
/// strings it may take and a check of its parsed value. A None default marks
/// a required attribute unless `optional` (then None means "not given").
struct AttrSpec {
  std::string_view name;
  Value default_value;
  std::string_view doc = {};
  AttrType type = AttrType::kAny;
  std::vector<std::string_view> choices = {};
  bool optional = false;
  /// Extra check of the parsed value (a range, a relation): raises naming the op.
  std::function<void(std::string_view op, const Value& value)> check = nullptr;
};

/// The Python (MindSpore) forms of an op, each a signature in Python syntax
/// with MindSpore's names (op_api.cc parses them at registration):
///   "sum|reduce_sum(input->x, dim->axis=None, keepdim->keep_dims=False, *, dtype=None)"
/// `a|b` are the names (the first is canonical, the rest aliases); `p->t`
/// binds parameter p to the op's input or attribute t (the same name when
/// no arrow; an optional input "w?" is bound as "w", and None gives it as
/// absent: Note [Optional inputs]); `p->x...` binds a sequence to a variadic
/// input; `*` starts the keyword-only parameters, and `*p` (or `*p->t`)
/// takes the remaining positional arguments into attribute t, one sequence
/// argument being the whole value (MindSpore's `Tensor.reshape(*shape)`:
/// `x.reshape(2, 3)` and `x.reshape((2, 3))`), or with `*p->xs...` into a
/// variadic input (`meshgrid(*inputs->xs...)`); `p->!` is accepted and must
/// keep its default (the feature is not supported; other values raise
/// NotImplementedError); `p->~` is accepted and not passed to the op (a
/// MindSpore parameter the op does not need, e.g. Conv2D's out_channel: a
/// Primitive records it as an attribute; it may be required).
/// A primitive has two lists, its constructor's then its call's, and may
/// name the module of `mindspore.ops.operations` MindSpore keeps it in
/// (one of kPrimitiveModules): "math_ops.ReduceSum(keep_dims=False)(x, axis->axis=())".
/// A method's first parameter is the Tensor itself. `-> p` or `-> (p, q)`
/// after the call's parameters makes the form return the objects given for
/// those tensor parameters (an in-place op's updated inputs, e.g. Assign's
/// variable: a Parameter stays the same object), not new Tensors.
enum class ApiKind { kFunction, kMethod, kPrimitive };
/// The modules of `ops.operations` a Primitive form may name.
inline constexpr std::string_view kPrimitiveModules[] = {"array_ops", "math_ops",   "nn_ops",  "other_ops",
                                                         "debug_ops", "random_ops", "comm_ops"};
struct ApiForm {
  ApiKind kind;
  std::string signature;
};
/// Shorthands for declarations.
inline ApiForm Function(std::string signature) { return {ApiKind::kFunction, std::move(signature)}; }
inline ApiForm Method(std::string signature) { return {ApiKind::kMethod, std::move(signature)}; }
inline ApiForm Primitive(std::string signature) { return {ApiKind::kPrimitive, std::move(signature)}; }

/// One parameter of a parsed form.
struct ApiParam {
  std::string name;
  std::string target;  // the input or attribute it fills; "!" for unsupported, "~" for recorded only
  enum class Binds { kInput, kInputs, kAttr, kUnsupported, kRecorded, kOptionalInput } binds = Binds::kInput;
  std::optional<Value> default_value;  // nullopt: required
  bool keyword_only = false;
  bool varargs = false;  // `*p`: the remaining positional arguments (an attribute or a variadic input)
};
struct ParsedForm {
  ApiKind kind = ApiKind::kFunction;
  std::string module;  // a Primitive's MindSpore module ("nn_ops" in "nn_ops.ReLU()(x)"), or ""
  std::vector<std::string> names;
  std::vector<ApiParam> init;        // a primitive's constructor
  std::vector<ApiParam> params;      // the call
  std::vector<std::string> returns;  // `-> p` / `-> (p, q)`: the given objects returned, not the op's outputs
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
/// Checks relations between parsed attributes (each already checked alone).
/// It sees every attribute at a call (NormalizeAttrs) but only those given
/// to CheckAttrs (a Primitive's constructor), so it checks those present.
using AttrsCheckFn = std::function<void(std::string_view op, const Dict& attrs)>;

struct OpDef {
  std::string_view name;
  /// Input names; a single entry ending in "..." makes the op variadic. A
  /// name ending in "?" is an optional input (Note [Optional inputs]).
  std::vector<std::string_view> inputs;
  std::vector<AttrSpec> attrs = {};
  InferFn infer = nullptr;          // required unless composite
  GradFn grad = nullptr;            // null: not differentiable
  CompositeFn composite = nullptr;  // set: built from other ops
  OpProperties props = {};
  std::string_view doc = {};
  /// The Python surface: functions in ms.ops, Tensor methods, Primitive classes.
  std::vector<ApiForm> api = {};
  AttrsCheckFn attrs_check = nullptr;  // relations between attributes, if any
};

// Note [Optional inputs]
// A composite op may take inputs that callers can leave out, such as a loss's
// class weights: their names end in "?" ({"logits", "labels", "weight?"}).
// A caller passes an undefined Tensor for one it leaves out, and the
// composite tests `in[i].defined()`. Only composites take them: what they
// expand to has only defined inputs, so graphs, gradients and kernels never
// meet an absent one. A Python form binds one by its name without the "?"
// ("weight=None"); None there means absent (the binding's `call` takes None
// for it), and the parameter's default, if any, must be None.

/// Whether input `i` of `op` is optional (Note [Optional inputs]).
bool IsOptionalInput(const OpDef& op, size_t i);

/// Registers an op at static-initialisation time.
bool RegisterOp(OpDef def);
/// The op called `name`, or nullptr.
const OpDef* FindOp(std::string_view name);
/// The op called `name`; ValueError naming close ones if there is none.
const OpDef& GetOp(std::string_view name);
/// Every registered op, sorted by name.
std::vector<const OpDef*> AllOps();

/// Parses given attributes (AttrType), fills defaults, rejects unknown or
/// missing attributes (TypeError) and runs the op's attrs_check.
Dict NormalizeAttrs(const OpDef& op, const Dict& given);
/// Names the binding and the docs use for an AttrType ("axes", "pad_mode"...),
/// for a parameter's binding ("input", "attr"...) and for a form's kind.
std::string_view AttrTypeName(AttrType type);
std::string_view BindsName(ApiParam::Binds binds);
std::string_view ApiKindName(ApiKind kind);
/// Parses and checks the attributes in `given` only (a Primitive's
/// constructor checks its own), then the op's attrs_check on them; returns
/// them parsed.
Dict CheckAttrs(const OpDef& op, const Dict& given);
/// `value` parsed as `spec` says; TypeError or ValueError naming `op`.
Value ParseAttr(std::string_view op, const AttrSpec& spec, const Value& value);
/// The parsed forms of `op.api` (parsed and checked at registration).
const std::vector<ParsedForm>& ApiForms(const OpDef& op);
/// Parses one form's signature; throws on a malformed one or a target the op lacks.
ParsedForm ParseApiForm(const OpDef& op, const ApiForm& form);

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
#define MSRT_REGISTER_OP(...)                       \
  static const bool MSRT_OP_CONCAT_(kOpRegistered_, \
                                    __COUNTER__) = ::msrt::ops::RegisterOp(::msrt::ops::OpDef __VA_ARGS__)
