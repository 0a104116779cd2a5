// Elementwise ops: unary math, binary arithmetic and comparisons (NumPy
// broadcasting, PromoteTypes), logical ops, select and cast.
#include <cmath>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;
using fn::Scalar;

InferFn UnaryInfer(std::string_view op, DTypeClass cls) {
  return [op, cls](const Metas& in, const Dict&) {
    CheckDType(op, "x", in[0], cls);
    return Metas{in[0]};
  };
}

// How a binary op types its output.
enum class BinaryKind {
  kArithmetic,      // promoted dtype, not bool
  kRealArithmetic,  // as kArithmetic, not complex (ordering, rounding, powers)
  kDivision,        // promoted dtype; integers give float32
  kEquality,        // any dtypes, bool output
  kComparison,      // any dtypes but complex (not ordered), bool output
  kLogical,         // bool inputs, bool output
};

// TypeError when either operand is complex (ordering, rounding and powers).
void CheckReal(std::string_view op, const Metas& in) {
  for (size_t i = 0; i < 2; ++i) {
    if (IsComplex(in[i].dtype)) {
      OpError(ErrorKind::kType, op,
              StrCat("does not compute on complex values; expected real dtypes in 'x' and 'y', but got ",
                     DTypeName(in[0].dtype), " and ", DTypeName(in[1].dtype)));
    }
  }
}

InferFn BinaryInfer(std::string_view op, BinaryKind kind) {
  return [op, kind](const Metas& in, const Dict&) {
    Shape shape = BroadcastShapes(op, in[0].shape, in[1].shape);
    DType promoted = PromoteTypes(in[0].dtype, in[1].dtype);
    switch (kind) {
      case BinaryKind::kRealArithmetic: CheckReal(op, in); [[fallthrough]];
      case BinaryKind::kArithmetic:
      case BinaryKind::kDivision:
        if (promoted == DType::kBool) {
          OpError(ErrorKind::kType, op,
                  StrCat("does not compute on two Bool tensors; expected an integer or floating-point dtype in "
                         "'x' or 'y', but got Bool and Bool"));
        }
        if (kind == BinaryKind::kDivision && !IsFloating(promoted) && !IsComplex(promoted)) {
          promoted = DType::kFloat32;
        }
        return Metas{{shape, promoted}};
      case BinaryKind::kComparison: CheckReal(op, in); return Metas{{shape, DType::kBool}};
      case BinaryKind::kEquality: return Metas{{shape, DType::kBool}};
      case BinaryKind::kLogical:
        CheckDType(op, "x", in[0], DTypeClass::kBool);
        CheckDType(op, "y", in[1], DTypeClass::kBool);
        return Metas{{shape, DType::kBool}};
    }
    return Metas{};
  };
}

// Gradient rules of unary ops: the gradient of x from x, y = op(x) and dy.
using UnaryGrad = Tensor (*)(const Tensor& x, const Tensor& y, const Tensor& dy, const Dict& attrs);

GradFn Unary(UnaryGrad rule) {
  return [rule](const GradArgs& a) -> std::vector<Tensor> {
    if (!a.dys[0].defined() || !Differentiable(a.inputs[0].dtype())) return {Tensor()};
    return {rule(a.inputs[0], a.outputs[0], a.dys[0], a.attrs)};
  };
}

constexpr OpProperties kElementwise = {.elementwise = true};
// Elementwise, and its gradient rule handles complex values.
const OpProperties kComplexElementwise = {.elementwise = true, .complex_grad = true};
// Their results on float16 values are float16 values (they select, move or
// negate elements): Note [float16 held in float32] needs no rounding after them.
constexpr OpProperties kExactElementwise = {.elementwise = true, .half_compute = HalfCompute::kExact};
const OpProperties kExactComplexElementwise = {.elementwise = true,
                                               .half_compute = HalfCompute::kExact,
                                               .complex_grad = true};

// Note [Activation gradients]
// An activation's gradient is one op with its own kernel (relu_grad,
// sigmoid_grad, ...: MindSpore's ReluGrad, SigmoidGrad, ...), taking dy and
// the activation's output y where the derivative is a function of y (relu,
// sigmoid, tanh: the input need not be kept, so relu can still fuse into the
// kernel that produced x) and its input x otherwise. They are not in the
// catalogue. Each is differentiable (linear in dy; in y or x from ops), so
// higher-order gradients go through them.

// dy as the activation's gradient kernel takes it: the dtype and shape of
// the value it is paired with (a gradient seeded with another dtype or a
// broadcast one gets them here).
Tensor AsGradOf(const Tensor& dy, const Tensor& like) {
  Tensor out = dy.dtype() == like.dtype() ? dy : fn::Cast(dy, like.dtype());
  return out.shape() == like.shape() ? out : fn::BroadcastTo(out, like.shape());
}

// (dy, v) of one float dtype and shape; the output is dx, like v.
InferFn ActivationGradInfer(std::string_view op, std::string_view v_name) {
  return [op, v_name](const Metas& in, const Dict&) {
    CheckDType(op, v_name, in[1], DTypeClass::kFloat);
    CheckSameDType(op, v_name, in[1], "dy", in[0]);
    if (in[0].shape != in[1].shape) {
      OpError(ErrorKind::kValue, op,
              StrCat("'dy' must have the shape of '", v_name, "'; expected ", ShapeRepr(in[1].shape), ", but got ",
                     ShapeRepr(in[0].shape)));
    }
    return Metas{in[1]};
  };
}

// The gradient rule of an activation gradient op g(dy, v) = dy * f'(v):
// linear in dy (the same op on the incoming gradient), and `dv` (from the
// incoming gradient, dy, v and the attributes) for v, or none where f' is
// piecewise constant.
using SecondDerivative = Tensor (*)(const Tensor& ddx, const Tensor& dy, const Tensor& v, const Dict& attrs);

GradFn ActivationGradGrad(std::string_view op, SecondDerivative dv) {
  return [op, dv](const GradArgs& a) -> std::vector<Tensor> {
    std::vector<Tensor> grads(a.inputs.size());
    const Tensor& ddx = a.dys[0];
    if (!ddx.defined()) return grads;
    if (a.needs[0]) grads[0] = Call1(op, {AsGradOf(ddx, a.inputs[1]), a.inputs[1]}, a.attrs);
    if (a.needs[1] && dv != nullptr) grads[1] = dv(ddx, a.inputs[0], a.inputs[1], a.attrs);
    return grads;
  };
}

MSRT_REGISTER_OP(
    {.name = "neg",
     .inputs = {"x"},
     .infer = UnaryInfer("neg", DTypeClass::kNumberOrComplex),
     .grad = Unary([](const Tensor&, const Tensor&, const Tensor& dy, const Dict&) { return fn::Neg(dy); }),
     .props = kExactComplexElementwise,
     .doc = "-x",
     .api = {Function("neg|negative(input->x)"), Method("neg|negative(self->x)"), Primitive("math_ops.Neg()(x)")}});

MSRT_REGISTER_OP({.name = "abs",
                  .inputs = {"x"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckDType("abs", "x", in[0], DTypeClass::kNumberOrComplex);
                        return Metas{{in[0].shape, RealPartDType(in[0].dtype)}};  // complex: the modulus
                      },
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict&) {
                    return fn::Mul(dy, Call1("sign", {x}));
                  }),
                  .props = kExactElementwise,
                  .doc = "|x|",
                  .api = {Function("abs|absolute(input->x)"), Method("abs|absolute(self->x)"),
                          Primitive("math_ops.Abs()(x)")}});

MSRT_REGISTER_OP({.name = "sign",
                  .inputs = {"x"},
                  .infer = UnaryInfer("sign", DTypeClass::kNumber),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor&, const Dict&) {
                    return fn::ZerosLike(x);
                  }),
                  .props = kElementwise,
                  .doc = "-1, 0 or 1 (NaN stays NaN)",
                  .api = {Function("sign(input->x)"), Method("sign(self->x)"), Primitive("math_ops.Sign()(x)")}});

MSRT_REGISTER_OP({.name = "floor",
                  .inputs = {"x"},
                  .infer = UnaryInfer("floor", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor&, const Dict&) {
                    return fn::ZerosLike(x);
                  }),
                  .props = kElementwise,
                  .doc = "the largest integer <= x",
                  .api = {Function("floor(input->x)"), Method("floor(self->x)"), Primitive("math_ops.Floor()(x)")}});

MSRT_REGISTER_OP({.name = "exp",
                  .inputs = {"x"},
                  .infer = UnaryInfer("exp", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return fn::Mul(dy, y);
                  }),
                  .props = kElementwise,
                  .doc = "e^x",
                  .api = {Function("exp(input->x)"), Method("exp(self->x)"), Primitive("math_ops.Exp()(x)")}});

MSRT_REGISTER_OP({.name = "log",
                  .inputs = {"x"},
                  .infer = UnaryInfer("log", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict&) {
                    return fn::Div(dy, x);
                  }),
                  .props = kElementwise,
                  .doc = "natural logarithm",
                  .api = {Function("log(input->x)"), Method("log(self->x)"), Primitive("math_ops.Log()(x)")}});

MSRT_REGISTER_OP({.name = "sqrt",
                  .inputs = {"x"},
                  .infer = UnaryInfer("sqrt", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return fn::Div(dy, fn::Mul(y, Scalar(2, y)));
                  }),
                  .props = kElementwise,
                  .doc = "square root",
                  .api = {Function("sqrt(x)"), Method("sqrt(self->x)"), Primitive("math_ops.Sqrt()(x)")}});

MSRT_REGISTER_OP({.name = "rsqrt",
                  .inputs = {"x"},
                  .infer = UnaryInfer("rsqrt", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    // d/dx x^-1/2 = -1/2 y^3
                    return fn::Mul(dy, fn::Mul(fn::Mul(y, fn::Square(y)), Scalar(-0.5, y)));
                  }),
                  .props = kElementwise,
                  .doc = "1 / sqrt(x)",
                  .api = {Function("rsqrt(input->x)"), Method("rsqrt(self->x)"), Primitive("math_ops.Rsqrt()(x)")}});

MSRT_REGISTER_OP({.name = "square",
                  .inputs = {"x"},
                  .infer = UnaryInfer("square", DTypeClass::kNumberOrComplex),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict&) {
                    return fn::Mul(dy, fn::Mul(x, Scalar(2, x)));
                  }),
                  .props = kElementwise,
                  .doc = "x * x",
                  .api = {Function("square(input->x)"), Method("square(self->x)"), Primitive("math_ops.Square()(x)")}});

MSRT_REGISTER_OP({.name = "reciprocal",
                  .inputs = {"x"},
                  .infer = UnaryInfer("reciprocal", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return fn::Neg(fn::Mul(dy, fn::Square(y)));
                  }),
                  .props = kElementwise,
                  .doc = "1 / x",
                  .api = {Function("reciprocal(input->x)"), Method("reciprocal(self->x)"),
                          Primitive("math_ops.Reciprocal()(x)")}});

MSRT_REGISTER_OP({.name = "sigmoid",
                  .inputs = {"x"},
                  .infer = UnaryInfer("sigmoid", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return Call1("sigmoid_grad", {AsGradOf(dy, y), y});
                  }),
                  .props = kElementwise,
                  .doc = "1 / (1 + e^-x)",
                  .api = {Function("sigmoid(input->x)"), Method("sigmoid(self->x)"),
                          Primitive("nn_ops.Sigmoid()(x)")}});

MSRT_REGISTER_OP({.name = "tanh",
                  .inputs = {"x"},
                  .infer = UnaryInfer("tanh", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return Call1("tanh_grad", {AsGradOf(dy, y), y});
                  }),
                  .props = kElementwise,
                  .doc = "hyperbolic tangent",
                  .api = {Function("tanh(input->x)"), Method("tanh(self->x)"), Primitive("nn_ops.Tanh()(x)")}});

MSRT_REGISTER_OP({.name = "relu",
                  .inputs = {"x"},
                  .infer = UnaryInfer("relu", DTypeClass::kNumber),
                  // From the output (y > 0 exactly where x > 0): the input
                  // need not be kept, so a graph can fuse relu into the
                  // kernel that produced x (an epilogue) even when training.
                  .grad = Unary([](const Tensor&, const Tensor& y, const Tensor& dy, const Dict&) {
                    return Call1("relu_grad", {AsGradOf(dy, y), y});
                  }),
                  .props = kExactElementwise,
                  .doc = "max(x, 0) (NaN stays NaN)",
                  .api = {Function("relu(input->x)"), Method("relu(self->x)"), Primitive("nn_ops.ReLU()(x)")}});

MSRT_REGISTER_OP({.name = "relu6",
                  .inputs = {"x"},
                  .infer = UnaryInfer("relu6", DTypeClass::kNumber),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict&) {
                    return Call1("relu6_grad", {AsGradOf(dy, x), x});
                  }),
                  .props = kElementwise,
                  .doc = "min(max(x, 0), 6)",
                  .api = {Function("relu6(x)"), Primitive("nn_ops.ReLU6()(x)")}});

MSRT_REGISTER_OP({.name = "silu",
                  .inputs = {"x"},
                  .infer = UnaryInfer("silu", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict&) {
                    return Call1("silu_grad", {AsGradOf(dy, x), x});
                  }),
                  .props = kElementwise,
                  .doc = "x * sigmoid(x)",
                  .api = {Function("silu(input->x)"), Primitive("nn_ops.SiLU()(x)")}});

MSRT_REGISTER_OP({.name = "gelu",
                  .inputs = {"x"},
                  .attrs = {{"approximate", true, "tanh form when True, erf form when False", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        BoolAttr("gelu", attrs, "approximate");
                        return UnaryInfer("gelu", DTypeClass::kFloat)(in, attrs);
                      },
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict& attrs) {
                    return Call1("gelu_grad", {AsGradOf(dy, x), x}, Dict{{"approximate", Attr(attrs, "approximate")}});
                  }),
                  .props = kElementwise,
                  .doc = "x * Phi(x); tanh approximation by default",
                  // MindSpore's GeLU primitive computes the tanh form, the op's default.
                  .api = {Primitive("nn_ops.GeLU|GELU()(x)")}});

// Not in the catalogue: the derivative of gelu needs erf, which no other op
// provides (MindSpore has GeLUGrad for the same reason).
MSRT_REGISTER_OP({.name = "gelu_grad",
                  .inputs = {"dy", "x"},
                  .attrs = {{"approximate", true, "tanh form when True, erf form when False", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        BoolAttr("gelu_grad", attrs, "approximate");
                        CheckDType("gelu_grad", "x", in[1], DTypeClass::kFloat);
                        CheckSameDType("gelu_grad", "x", in[1], "dy", in[0]);
                        if (in[0].shape != in[1].shape) {
                          OpError(ErrorKind::kValue, "gelu_grad",
                                  StrCat("'dy' must have the shape of 'x'; expected ", ShapeRepr(in[1].shape),
                                         ", but got ", ShapeRepr(in[0].shape)));
                        }
                        return Metas{in[1]};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    // Linear in dy; the second derivative in x is not provided.
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor(), Tensor()};
                    return {Call1("gelu_grad", {a.dys[0], a.inputs[1]}, a.attrs), Tensor()};
                  },
                  .props = kElementwise,
                  .doc = "dy * gelu'(x) (internal: the gradient of gelu; differentiable in dy only)"});

// The activations' gradients (Note [Activation gradients]).
MSRT_REGISTER_OP({.name = "relu_grad",
                  .inputs = {"dy", "y"},
                  .infer = ActivationGradInfer("relu_grad", "y"),
                  .grad = ActivationGradGrad("relu_grad", nullptr),
                  .props = kExactElementwise,
                  .doc = "dy where y > 0, else 0 (internal: the gradient of relu from its output)"});

MSRT_REGISTER_OP({.name = "relu6_grad",
                  .inputs = {"dy", "x"},
                  .infer = ActivationGradInfer("relu6_grad", "x"),
                  .grad = ActivationGradGrad("relu6_grad", nullptr),
                  .props = kElementwise,
                  .doc = "dy where 0 < x < 6, else 0 (internal: the gradient of relu6)"});

MSRT_REGISTER_OP({.name = "sigmoid_grad",
                  .inputs = {"dy", "y"},
                  .infer = ActivationGradInfer("sigmoid_grad", "y"),
                  .grad = ActivationGradGrad("sigmoid_grad",
                                             [](const Tensor& ddx, const Tensor& dy, const Tensor& y, const Dict&) {
                                               // d/dy of dy y (1 - y): dy (1 - 2 y)
                                               Tensor slope = fn::Sub(Scalar(1, y), fn::Mul(y, Scalar(2, y)));
                                               return fn::Mul(fn::Mul(ddx, dy), slope);
                                             }),
                  .props = kElementwise,
                  .doc = "dy * y * (1 - y) (internal: the gradient of sigmoid from its output)"});

MSRT_REGISTER_OP({.name = "tanh_grad",
                  .inputs = {"dy", "y"},
                  .infer = ActivationGradInfer("tanh_grad", "y"),
                  .grad = ActivationGradGrad("tanh_grad",
                                             [](const Tensor& ddx, const Tensor& dy, const Tensor& y, const Dict&) {
                                               // d/dy of dy (1 - y^2): -2 dy y
                                               return fn::Mul(fn::Mul(ddx, dy), fn::Mul(y, Scalar(-2, y)));
                                             }),
                  .props = kElementwise,
                  .doc = "dy * (1 - y^2) (internal: the gradient of tanh from its output)"});

MSRT_REGISTER_OP({.name = "silu_grad",
                  .inputs = {"dy", "x"},
                  .infer = ActivationGradInfer("silu_grad", "x"),
                  .grad = ActivationGradGrad("silu_grad",
                                             [](const Tensor& ddx, const Tensor& dy, const Tensor& x, const Dict&) {
                                               // silu'' = s (1 - s) (2 + x (1 - 2 s)), s = sigmoid(x)
                                               Tensor s = Call1("sigmoid", {x});
                                               Tensor one_minus = fn::Sub(Scalar(1, s), s);
                                               Tensor inner = fn::Add(Scalar(2, x), fn::Mul(x, fn::Sub(one_minus, s)));
                                               return fn::Mul(fn::Mul(ddx, dy), fn::Mul(fn::Mul(s, one_minus), inner));
                                             }),
                  .props = kElementwise,
                  .doc = "dy * sigmoid(x) * (1 + x * (1 - sigmoid(x))) (internal: the gradient of silu)"});

MSRT_REGISTER_OP({.name = "leaky_relu",
                  .inputs = {"x"},
                  .attrs = {{"alpha", 0.2, "the slope for x <= 0", AttrType::kFloat}},
                  .infer = UnaryInfer("leaky_relu", DTypeClass::kFloat),
                  .grad = Unary([](const Tensor& x, const Tensor&, const Tensor& dy, const Dict& attrs) {
                    return Call1("leaky_relu_grad", {AsGradOf(dy, x), x}, Dict{{"alpha", Attr(attrs, "alpha")}});
                  }),
                  .props = kElementwise,
                  .doc = "x where x > 0, else alpha * x",
                  .api = {Function("leaky_relu(input->x, alpha=0.2)")}});

MSRT_REGISTER_OP({.name = "leaky_relu_grad",
                  .inputs = {"dy", "x"},
                  .attrs = {{"alpha", 0.2, "the slope for x <= 0", AttrType::kFloat}},
                  .infer = ActivationGradInfer("leaky_relu_grad", "x"),
                  .grad = ActivationGradGrad("leaky_relu_grad", nullptr),
                  .props = kElementwise,
                  .doc = "dy where x > 0, else alpha * dy (internal: the gradient of leaky_relu)"});

MSRT_REGISTER_OP({.name = "logical_not",
                  .inputs = {"x"},
                  .infer = UnaryInfer("logical_not", DTypeClass::kBool),
                  .props = kElementwise,
                  .doc = "not x (bool)",
                  .api = {Function("logical_not(input->x)"), Method("logical_not(self->x)"),
                          Primitive("math_ops.LogicalNot()(x)")}});

MSRT_REGISTER_OP({.name = "ones_like",
                  .inputs = {"x"},
                  .infer = UnaryInfer("ones_like", DTypeClass::kAny),
                  .props = {.elementwise = true, .half_compute = HalfCompute::kExact, .meta_only_inputs = {0}},
                  .doc = "ones of x's shape and dtype",
                  .api = {Method("ones_like(self->x)"), Primitive("array_ops.OnesLike()(x)")}});

MSRT_REGISTER_OP({.name = "zeros_like",
                  .inputs = {"x"},
                  .infer = UnaryInfer("zeros_like", DTypeClass::kAny),
                  .props = {.elementwise = true, .half_compute = HalfCompute::kExact, .meta_only_inputs = {0}},
                  .doc = "zeros of x's shape and dtype",
                  .api = {Method("zeros_like(self->x)"), Primitive("array_ops.ZerosLike()(x)")}});

MSRT_REGISTER_OP({.name = "identity",
                  .inputs = {"x"},
                  .infer = UnaryInfer("identity", DTypeClass::kAny),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> { return {a.dys[0]}; },
                  .props = kExactComplexElementwise,
                  .doc = "a copy of x",
                  .api = {Function("identity(input->x)"), Method("copy|clone(self->x)"),
                          Primitive("array_ops.Identity()(x)")}});

MSRT_REGISTER_OP({.name = "cast",
                  .inputs = {"x"},
                  .attrs = {{"dtype", Value(), "target dtype name, e.g. 'float32'", AttrType::kDType}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        return Metas{{in[0].shape, DTypeAttr("cast", attrs, "dtype")}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !Differentiable(a.inputs[0].dtype()) ||
                        !Differentiable(a.dys[0].dtype())) {
                      return {Tensor()};
                    }
                    return {fn::Cast(a.dys[0], a.inputs[0].dtype())};  // complex to real: the real part
                  },
                  .props = {.elementwise = true, .noop_if_same_meta = true, .complex_grad = true},
                  .doc = "x converted to another dtype",
                  .api = {Function("cast(input->x, dtype)"), Method("to(self->x, dtype)"),
                          Primitive("array_ops.Cast()(input_x->x, dtype)")}});

MSRT_REGISTER_OP({.name = "round_to_float16",
                  .inputs = {"x"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        if (in[0].dtype != DType::kFloat32) {
                          OpError(ErrorKind::kType, "round_to_float16",
                                  StrCat("input 'x' must be float32, but got ", DTypeName(in[0].dtype)));
                        }
                        return Metas{in[0]};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> { return {a.dys[0]}; },
                  .props = {.elementwise = true, .half_compute = HalfCompute::kExact},
                  .doc = "x (float32) rounded to the nearest float16 value, kept in float32: what a cast to float16 "
                         "and back gives (internal: Note [float16 held in float32])"});

// ---- binary ----

// Gradient of an input of a binary op, computed only when needed.
template <typename F>
Tensor IfNeeded(const GradArgs& a, size_t i, F make) {
  if (!a.needs[i] || !a.dys[0].defined() || !Differentiable(a.inputs[i].dtype())) return Tensor();
  return GradFor(make(), a.inputs[i]);
}

MSRT_REGISTER_OP({.name = "add",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("add", BinaryKind::kArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    return {IfNeeded(a, 0, [&] { return dy; }), IfNeeded(a, 1, [&] { return dy; })};
                  },
                  .props = {.elementwise = true, .right_identity = 0.0, .left_identity = 0.0, .complex_grad = true},
                  .doc = "x + y",
                  .api = {Function("add|tensor_add(input->x, other->y)"),
                          Primitive("math_ops.Add|TensorAdd()(x, y)")}});

MSRT_REGISTER_OP({.name = "sub",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("sub", BinaryKind::kArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    return {IfNeeded(a, 0, [&] { return dy; }), IfNeeded(a, 1, [&] { return fn::Neg(dy); })};
                  },
                  .props = {.elementwise = true, .right_identity = 0.0, .complex_grad = true},
                  .doc = "x - y",
                  .api = {Function("sub|tensor_sub(input->x, other->y)"), Primitive("math_ops.Sub()(x, y)")}});

MSRT_REGISTER_OP({.name = "mul",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("mul", BinaryKind::kArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    const Tensor& x = a.inputs[0];
                    const Tensor& y = a.inputs[1];
                    // Complex: dy times the other factor's conjugate.
                    return {IfNeeded(a, 0, [&] { return fn::Mul(dy, fn::Conj(y)); }),
                            IfNeeded(a, 1, [&] { return fn::Mul(dy, fn::Conj(x)); })};
                  },
                  .props = {.elementwise = true, .right_identity = 1.0, .left_identity = 1.0, .complex_grad = true},
                  .doc = "x * y",
                  .api = {Function("mul|tensor_mul(input->x, other->y)"), Method("mul(self->x, other->y)"),
                          Primitive("math_ops.Mul()(x, y)")}});

MSRT_REGISTER_OP({.name = "div",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("div", BinaryKind::kDivision),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    const Tensor& y = a.inputs[1];
                    const Tensor& out = a.outputs[0];
                    return {IfNeeded(a, 0, [&] { return fn::Div(dy, y); }),
                            IfNeeded(a, 1, [&] { return fn::Neg(fn::Mul(fn::Div(dy, y), out)); })};
                  },
                  .props = {.elementwise = true, .right_identity = 1.0},
                  .doc = "x / y (true division: integer inputs give float32)",
                  .api = {Primitive("math_ops.Div|RealDiv()(x, y)")}});

MSRT_REGISTER_OP({.name = "pow",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("pow", BinaryKind::kRealArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    const Tensor& x = a.inputs[0];
                    const Tensor& y = a.inputs[1];
                    const Tensor& out = a.outputs[0];
                    return {IfNeeded(a, 0,
                                     [&] {
                                       Tensor ym1 = fn::Sub(y, Scalar(1, y));
                                       return fn::Mul(dy, fn::Mul(y, Call1("pow", {x, ym1})));
                                     }),
                            IfNeeded(a, 1, [&] {
                              // d/dy x^y = x^y log x, taken as 0 where x <= 0.
                              Tensor positive = fn::Greater(x, Scalar(0, x));
                              Tensor safe_x = fn::Select(positive, x, Scalar(1, x));
                              return fn::Mul(dy, fn::Mul(out, fn::Log(safe_x)));
                            })};
                  },
                  .props = kElementwise,
                  .doc = "x ** y",
                  .api = {Function("pow|tensor_pow(input->x, exponent->y)"), Method("pow(self->x, exponent->y)"),
                          Primitive("math_ops.Pow()(x, y)")}});

// Floor division and its remainder, exact for integers (computed in the
// integer type, not through float) and taking the divisor's sign for the
// remainder, as Python's // and %.
MSRT_REGISTER_OP({.name = "floor_div",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("floor_div", BinaryKind::kRealArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    // Piecewise constant: zero almost everywhere.
                    return {IfNeeded(a, 0, [&] { return fn::ZerosLike(a.dys[0]); }),
                            IfNeeded(a, 1, [&] { return fn::ZerosLike(a.dys[0]); })};
                  },
                  .props = kElementwise,
                  .doc = "floor(x / y); integers: exact, and 0 where y is 0",
                  .api = {Function("floor_divide|floor_div(input->x, other->y)"),
                          Method("floor_divide(self->x, value->y)"), Primitive("math_ops.FloorDiv()(x, y)")}});

MSRT_REGISTER_OP({.name = "floor_mod",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("floor_mod", BinaryKind::kRealArithmetic),
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    // x - floor(x / y) * y: d/dx = 1, d/dy = -floor(x / y).
                    return {IfNeeded(a, 0, [&] { return dy; }), IfNeeded(a, 1, [&] {
                              return fn::Neg(fn::Mul(dy, Call1("floor_div", {a.inputs[0], a.inputs[1]})));
                            })};
                  },
                  .props = kElementwise,
                  .doc = "x - floor(x / y) * y, with y's sign (Python's %); integers: 0 where y is 0",
                  .api = {Function("floor_mod(x, y)"), Function("remainder(input->x, other->y)"),
                          Method("remainder(self->x, divisor->y)"), Primitive("math_ops.FloorMod()(x, y)")}});

GradFn MinMaxGrad(std::string_view compare) {
  return [compare](const GradArgs& a) -> std::vector<Tensor> {
    const Tensor& dy = a.dys[0];
    if (!dy.defined()) return {Tensor(), Tensor()};
    // Ties send the gradient to x.
    Tensor take_x = Call1(compare, {a.inputs[0], a.inputs[1]});
    Tensor zero = Scalar(0, dy);
    return {IfNeeded(a, 0, [&] { return fn::Select(take_x, dy, zero); }),
            IfNeeded(a, 1, [&] { return fn::Select(take_x, zero, dy); })};
  };
}

MSRT_REGISTER_OP({.name = "maximum",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("maximum", BinaryKind::kRealArithmetic),
                  .grad = MinMaxGrad("greater_equal"),
                  .props = kExactElementwise,
                  .doc = "elementwise max (NaN propagates)",
                  .api = {Function("maximum(input->x, other->y)"), Method("maximum(self->x, other->y)"),
                          Primitive("math_ops.Maximum()(x, y)")}});

MSRT_REGISTER_OP({.name = "minimum",
                  .inputs = {"x", "y"},
                  .infer = BinaryInfer("minimum", BinaryKind::kRealArithmetic),
                  .grad = MinMaxGrad("less_equal"),
                  .props = kExactElementwise,
                  .doc = "elementwise min (NaN propagates)",
                  .api = {Function("minimum(input->x, other->y)"), Method("minimum(self->x, other->y)"),
                          Primitive("math_ops.Minimum()(x, y)")}});

OpDef ComparisonOp(std::string_view name, BinaryKind kind, std::string_view doc, std::vector<ApiForm> api) {
  return {.name = name,
          .inputs = {"x", "y"},
          .infer = BinaryInfer(name, kind),
          .props = kElementwise,
          .doc = doc,
          .api = std::move(api)};
}

const bool kComparisonsRegistered = [] {
  constexpr BinaryKind kCompare = BinaryKind::kComparison;
  constexpr BinaryKind kEquality = BinaryKind::kEquality;
  constexpr BinaryKind kLogical = BinaryKind::kLogical;
  RegisterOp(ComparisonOp("equal", kEquality, "x == y (bool)",
                          {Function("equal(input->x, other->y)"), Method("equal(self->x, other->y)"),
                           Primitive("math_ops.Equal()(x, y)")}));
  RegisterOp(ComparisonOp("not_equal", kEquality, "x != y (bool)",
                          {Function("not_equal|ne(input->x, other->y)"), Primitive("math_ops.NotEqual()(x, y)")}));
  RegisterOp(ComparisonOp("less", kCompare, "x < y (bool)",
                          {Function("less|lt|tensor_lt(input->x, other->y)"), Primitive("math_ops.Less()(x, y)")}));
  RegisterOp(
      ComparisonOp("less_equal", kCompare, "x <= y (bool)",
                   {Function("less_equal|le|tensor_le(input->x, other->y)"), Primitive("math_ops.LessEqual()(x, y)")}));
  RegisterOp(
      ComparisonOp("greater", kCompare, "x > y (bool)",
                   {Function("greater|gt|tensor_gt(input->x, other->y)"), Primitive("math_ops.Greater()(x, y)")}));
  RegisterOp(ComparisonOp("greater_equal", kCompare, "x >= y (bool)",
                          {Function("greater_equal|ge|tensor_ge(input->x, other->y)"),
                           Primitive("math_ops.GreaterEqual()(x, y)")}));
  RegisterOp(ComparisonOp("logical_and", kLogical, "x and y (bool)",
                          {Function("logical_and(input->x, other->y)"), Primitive("math_ops.LogicalAnd()(x, y)")}));
  RegisterOp(ComparisonOp("logical_or", kLogical, "x or y (bool)",
                          {Function("logical_or(input->x, other->y)"), Primitive("math_ops.LogicalOr()(x, y)")}));
  RegisterOp(ComparisonOp("logical_xor", kLogical, "x xor y (bool)",
                          {Function("logical_xor(input->x, other->y)"), Primitive("math_ops.LogicalXor()(x, y)")}));
  return true;
}();

// ---- complex parts ----

// real, imag and conj: a complex input's part (or conjugate); a real input
// gives itself (real, conj) or zeros (imag), as MindSpore does.
InferFn PartInfer(std::string_view op, bool conjugate) {
  return [op, conjugate](const Metas& in, const Dict&) {
    CheckDType(op, "x", in[0], DTypeClass::kNumberOrComplex);
    return Metas{{in[0].shape, conjugate ? in[0].dtype : RealPartDType(in[0].dtype)}};
  };
}

// The parts' gradients, with the convention grad = dL/dre + i dL/dim.
GradFn PartGrad(std::string_view part) {
  return [part](const GradArgs& a) -> std::vector<Tensor> {
    const Tensor& x = a.inputs[0];
    const Tensor& dy = a.dys[0];
    if (!dy.defined() || !Differentiable(x.dtype())) return {Tensor()};
    if (part == "conj") return {fn::Conj(dy)};
    if (part == "real") return {fn::Cast(dy, x.dtype())};
    if (!IsComplex(x.dtype())) return {fn::ZerosLike(x)};  // imag of a real tensor: zeros
    return {Call1("complex", {fn::ZerosLike(dy), dy})};    // imag: i dy
  };
}

MSRT_REGISTER_OP({.name = "real",
                  .inputs = {"x"},
                  .infer = PartInfer("real", false),
                  .grad = PartGrad("real"),
                  .props = kComplexElementwise,
                  .doc = "the real part of x (x itself when real)",
                  .api = {Function("real(input->x)"), Method("real(self->x)"),
                          Primitive("math_ops.Real()(input->x)")}});

MSRT_REGISTER_OP({.name = "imag",
                  .inputs = {"x"},
                  .infer = PartInfer("imag", false),
                  .grad = PartGrad("imag"),
                  .props = kComplexElementwise,
                  .doc = "the imaginary part of x (zeros when x is real)",
                  .api = {Function("imag(input->x)"), Method("imag(self->x)"),
                          Primitive("math_ops.Imag()(input->x)")}});

MSRT_REGISTER_OP({.name = "conj",
                  .inputs = {"x"},
                  .infer = PartInfer("conj", true),
                  .grad = PartGrad("conj"),
                  .props = kComplexElementwise,
                  .doc = "the complex conjugate of x (x itself when real)",
                  .api = {Function("conj(input->x)"), Method("conj(self->x)"),
                          Primitive("math_ops.Conj()(input->x)")}});

MSRT_REGISTER_OP({.name = "complex",
                  .inputs = {"real", "imag"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        constexpr std::string_view op = "complex";
                        if (in[0].dtype != DType::kFloat32 && in[0].dtype != DType::kFloat64) {
                          OpError(ErrorKind::kType, op,
                                  StrCat("input 'real' has an unsupported dtype; expected Float32 or Float64, but got ",
                                         DTypeName(in[0].dtype)));
                        }
                        CheckSameDType(op, "real", in[0], "imag", in[1]);
                        return Metas{{BroadcastShapes(op, in[0].shape, in[1].shape), ComplexOfDType(in[0].dtype)}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    return {IfNeeded(a, 0, [&] { return Call1("real", {dy}); }),
                            IfNeeded(a, 1, [&] { return Call1("imag", {dy}); })};
                  },
                  .props = kComplexElementwise,
                  .doc = "real + imag * 1j (float32 parts give complex64, float64 parts complex128)",
                  .api = {Function("complex(real, imag)"), Primitive("math_ops.Complex()(real, imag)")}});

MSRT_REGISTER_OP({.name = "addn",
                  .inputs = {"xs..."},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    if (in.empty()) OpError(ErrorKind::kValue, "addn", "needs at least one input, but got none");
                    Tensor sum = in[0];
                    for (size_t i = 1; i < in.size(); ++i) sum = fn::Add(sum, in[i]);
                    return {sum};
                  },
                  .doc = "the elementwise sum of the inputs",
                  .api = {Function("addn(x->xs...)"), Primitive("math_ops.AddN()(inputs->xs...)")}});

MSRT_REGISTER_OP({.name = "select",
                  .inputs = {"condition", "x", "y"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckDType("select", "condition", in[0], DTypeClass::kBool);
                        Shape shape = BroadcastShapes("select", BroadcastShapes("select", in[0].shape, in[1].shape),
                                                      in[2].shape);
                        return Metas{{shape, PromoteTypes(in[1].dtype, in[2].dtype)}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    const Tensor& dy = a.dys[0];
                    if (!dy.defined()) return {Tensor(), Tensor(), Tensor()};
                    const Tensor& c = a.inputs[0];
                    Tensor zero = Scalar(0, dy);
                    return {Tensor(), IfNeeded(a, 1, [&] { return fn::Select(c, dy, zero); }),
                            IfNeeded(a, 2, [&] { return fn::Select(c, zero, dy); })};
                  },
                  .props = kExactElementwise,
                  .doc = "condition ? x : y, broadcasting all three",
                  .api = {Function("select(cond->condition, x, y)"), Function("where(condition, x, y)"),
                          Primitive("array_ops.Select()(cond->condition, x, y)")}});

// x / y, or rounded toward zero ('trunc') or down ('floor'); integer
// inputs rounded give their promoted integer type.
MSRT_REGISTER_OP({.name = "divide",
                  .inputs = {"x", "y"},
                  .attrs = {{.name = "rounding_mode",
                             .default_value = Value(),
                             .doc = "None (true division), 'trunc' or 'floor'",
                             .type = AttrType::kString,
                             .choices = {"trunc", "floor"},
                             .optional = true}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    const Value& mode = Attr(attrs, "rounding_mode");
                    DType a = in[0].dtype(), b = in[1].dtype();
                    if (!mode.is_none() && IsIntegral(a) && IsIntegral(b)) {
                      // Exact in the integer type: floor_div, moved toward zero for 'trunc'
                      // where a remainder is left and the signs differ.
                      Tensor q = Call1("floor_div", {in[0], in[1]});
                      if (mode.as_string() == "floor") return {q};
                      Tensor r = Call1("floor_mod", {in[0], in[1]});
                      Tensor zero = Scalar(0, r);
                      Tensor differ = Call1("logical_xor", {Call1("less", {in[0], Scalar(0, in[0])}),
                                                            Call1("less", {in[1], Scalar(0, in[1])})});
                      Tensor up = Call1("logical_and", {Call1("not_equal", {r, zero}), differ});
                      return {fn::Add(q, fn::Cast(up, q.dtype()))};
                    }
                    Tensor q = fn::Div(in[0], in[1]);
                    if (mode.is_none()) return {q};
                    Tensor down = Call1("floor", {q});
                    if (mode.as_string() == "trunc") {
                      Tensor up = fn::Neg(Call1("floor", {fn::Neg(q)}));
                      down = fn::Select(Call1("less", {q, Scalar(0, q)}), up, down);
                    }
                    return {down};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "x / y, optionally rounded ('trunc' or 'floor')",
                  .api = {Function("div|divide|true_divide|tensor_div(input->x, other->y, *, rounding_mode=None)"),
                          Method("div|divide|true_divide(self->x, other->y, *, rounding_mode=None)")}});

// x + alpha * y and x - alpha * y (Tensor.add / Tensor.sub with alpha).
OpDef Scaled(std::string_view name, std::string_view op) {
  return {.name = name,
          .inputs = {"x", "y"},
          .attrs = {{"alpha", 1, "the factor of y", AttrType::kScalar}},
          .composite = [op](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
            const Value& alpha = Attr(attrs, "alpha");
            bool one = alpha.as_float() == 1.0 && !alpha.is_bool();
            return {Call1(op, {in[0], one ? in[1] : fn::Mul(in[1], Scalar(alpha.as_float(), in[1]))})};
          },
          .props = {.promotes_scalars = true},
          .doc = "x + alpha * y (or -)",
          .api = {Method(StrCat(op, "(self->x, other->y, *, alpha=1)"))}};
}
const bool kScaledRegistered = [] {
  RegisterOp(Scaled("add_scaled", "add"));
  RegisterOp(Scaled("sub_scaled", "sub"));
  return true;
}();

// x bounded below by min and above by max (either may be left out).
MSRT_REGISTER_OP({.name = "clamp",
                  .inputs = {"x", "min?", "max?"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    if (!in[1].defined() && !in[2].defined()) {
                      OpError(ErrorKind::kValue, "clamp", "at least one of 'min' and 'max' must be set");
                    }
                    Tensor out = in[0];
                    if (in[1].defined()) out = Call1("maximum", {out, in[1]});
                    if (in[2].defined()) out = Call1("minimum", {out, in[2]});
                    return {out};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "x clamped to [min, max]",
                  .api = {Function("clamp|clip(input->x, min=None, max=None)"),
                          Function("clip_by_value(x, clip_value_min->min=None, clip_value_max->max=None)"),
                          Method("clamp|clip(self->x, min=None, max=None)")}});

}  // namespace
}  // namespace msrt::ops
