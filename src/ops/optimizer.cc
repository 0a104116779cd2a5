// In-place updates: assign, assign_add, assign_sub and the fused optimizer
// steps. Each writes its first input (returned as output 0); the optimizers
// also write their state inputs, listed in props.writes_inputs so that
// readers wait for the write. None has a gradient. And clip_by_global_norm,
// the gradient clipping optimizers apply first.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

// value must broadcast to variable's shape; any numeric dtype converts.
InferFn AssignInfer(std::string_view op, DTypeClass cls) {
  return [op, cls](const Metas& in, const Dict&) {
    CheckDType(op, "variable", in[0], cls);
    CheckDType(op, "value", in[1], cls);
    Shape shape = BroadcastShapes(op, in[0].shape, in[1].shape);
    if (shape != in[0].shape) {
      OpError(ErrorKind::kValue, op,
              StrCat("'value' must broadcast to the shape of 'variable'; expected a shape broadcastable to ",
                     ShapeRepr(in[0].shape), ", but got ", ShapeRepr(in[1].shape)));
    }
    return Metas{in[0]};
  };
}

MSRT_REGISTER_OP({.name = "assign",
                  .inputs = {"variable", "value"},
                  .infer = AssignInfer("assign", DTypeClass::kAny),
                  .props = {.promotes_scalars = true, .inplace = true},
                  .doc = "variable = value (in place; returns variable)",
                  .api = {Function("assign(variable, value) -> variable"),
                          Method("assign_value(self->variable, value) -> self"),
                          Primitive("other_ops.Assign()(variable, value) -> variable")}});

MSRT_REGISTER_OP({.name = "assign_add",
                  .inputs = {"variable", "value"},
                  .infer = AssignInfer("assign_add", DTypeClass::kNumber),
                  .props = {.promotes_scalars = true, .inplace = true},
                  .doc = "variable += value (in place; returns variable)",
                  .api = {Function("assign_add(variable, value) -> variable"),
                          Primitive("math_ops.AssignAdd()(variable, value) -> variable")}});

MSRT_REGISTER_OP({.name = "assign_sub",
                  .inputs = {"variable", "value"},
                  .infer = AssignInfer("assign_sub", DTypeClass::kNumber),
                  .props = {.promotes_scalars = true, .inplace = true},
                  .doc = "variable -= value (in place; returns variable)",
                  .api = {Function("assign_sub(variable, value) -> variable"),
                          Primitive("math_ops.AssignSub()(variable, value) -> variable")}});

// Checks an optimizer's inputs: tensors named in `same_shape` must have the
// variable's shape and dtype, those in `scalars` hold one number.
void CheckOptimizer(std::string_view op, const std::vector<std::string_view>& names, const Metas& in,
                    const std::vector<int>& same_shape, const std::vector<int>& scalars) {
  const TensorMeta& var = in[0];
  CheckDType(op, names[0], var, DTypeClass::kFloat);
  for (int i : same_shape) {
    CheckSameDType(op, names[0], var, names[i], in[i]);
    if (in[i].shape != var.shape) {
      OpError(ErrorKind::kValue, op,
              StrCat("'", names[i], "' must have the shape of '", names[0], "'; expected ", ShapeRepr(var.shape),
                     ", but got ", ShapeRepr(in[i].shape)));
    }
  }
  for (int i : scalars) {
    CheckDType(op, names[i], in[i], DTypeClass::kFloat);
    CheckScalarLike(op, names[i], in[i]);
  }
}

MSRT_REGISTER_OP({.name = "apply_momentum",
                  .inputs = {"variable", "accumulation", "learning_rate", "gradient", "momentum"},
                  .attrs = {{"use_nesterov", false, "the Nesterov step", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("apply_momentum",
                                       {"variable", "accumulation", "learning_rate", "gradient", "momentum"}, in,
                                       {1, 3}, {2, 4});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1}},
                  .doc = "accum = accum * momentum + grad; variable -= lr * accum (or the Nesterov step)",
                  .api = {
                      Primitive("nn_ops.ApplyMomentum(use_nesterov=False, use_locking->~=False, gradient_scale->!=1.0)"
                                "(variable, accumulation, learning_rate, gradient, momentum) -> variable")}});

// matmul then apply_momentum of its product as the gradient, as one op: the
// fuse_pairs pass makes it of a weight gradient dy^T x whose only reader is
// the update (Note [Fused pairs] in src/compiler/fusion.cc). Its kernel
// writes momentum * accum + op(a) @ op(b) straight into accum, so the
// gradient is never stored (Note [Products into the accumulation] in
// src/kernels/cpu/onednn_matmul.cc).
MSRT_REGISTER_OP(
    {.name = "matmul_apply_momentum",
     .inputs = {"variable", "accumulation", "learning_rate", "a", "b", "momentum"},
     .attrs = {{"transpose_a", Value(false), "use a's transpose", AttrType::kBool},
               {"transpose_b", Value(false), "use b's transpose", AttrType::kBool},
               {"use_nesterov", false, "the Nesterov step", AttrType::kBool}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           constexpr std::string_view op = "matmul_apply_momentum";
           const OpDef* matmul = FindOp("matmul");
           Metas product = matmul->infer({in[3], in[4]}, attrs);
           CheckOptimizer(op, {"variable", "accumulation", "learning_rate", "a @ b", "momentum"},
                          {in[0], in[1], in[2], product[0], in[5]}, {1, 3}, {2, 4});
           return Metas{in[0]};
         },
     .props = {.inplace = true, .writes_inputs = {1}, .fuses = {"matmul", "apply_momentum"}, .fuses_input = 3},
     .doc = "accum = accum * momentum + op(a) @ op(b); variable -= lr * accum (or the Nesterov step) "
            "(internal: what a graph runs for a matmul whose only reader is apply_momentum's "
            "gradient)"});

MSRT_REGISTER_OP({.name = "apply_gradient_descent",
                  .inputs = {"variable", "alpha", "delta"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("apply_gradient_descent", {"variable", "alpha", "delta"}, in, {2}, {1});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true},
                  .doc = "variable -= alpha * delta",
                  .api = {Primitive("nn_ops.ApplyGradientDescent()(var->variable, alpha, delta) -> var")}});

MSRT_REGISTER_OP({.name = "adam",
                  .inputs = {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon",
                             "gradient"},
                  .attrs = {{"use_nesterov", false, "the Nesterov step", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("adam",
                                       {"var", "m", "v", "beta1_power", "beta2_power", "lr", "beta1", "beta2",
                                        "epsilon", "gradient"},
                                       in, {1, 2, 9}, {3, 4, 5, 6, 7, 8});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1, 2}},
                  .doc = "MindSpore's Adam step; updates var, m and v in place",
                  .api = {Primitive("nn_ops.Adam(use_locking->~=False, use_nesterov=False)(var, m, v, beta1_power, "
                                    "beta2_power, lr, beta1, beta2, epsilon, gradient) -> (var, m, v)")}});

MSRT_REGISTER_OP({.name = "adam_weight_decay",
                  .inputs = {"var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("adam_weight_decay",
                                       {"var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "gradient"}, in,
                                       {1, 2, 8}, {3, 4, 5, 6, 7});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1, 2}},
                  .doc = "MindSpore's AdamWeightDecay step; updates var, m and v in place",
                  .api = {
                      Primitive("nn_ops.AdamWeightDecay(use_locking->~=False)(var, m, v, lr, beta1, beta2, epsilon, "
                                "decay, gradient) -> (var, m, v)")}});

MSRT_REGISTER_OP({.name = "apply_rms_prop",
                  .inputs = {"var", "mean_square", "moment", "learning_rate", "grad", "decay", "momentum", "epsilon"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("apply_rms_prop",
                                       {"var", "mean_square", "moment", "learning_rate", "grad", "decay", "momentum",
                                        "epsilon"},
                                       in, {1, 2, 4}, {3, 5, 6, 7});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1, 2}},
                  .doc = "MindSpore's RMSProp step: ms = decay * ms + (1 - decay) * grad^2; "
                         "moment = momentum * moment + lr * grad / sqrt(ms + epsilon); var -= moment",
                  .api = {Primitive("nn_ops.ApplyRMSProp(use_locking->~=False)(var, mean_square, moment, "
                                    "learning_rate, grad, decay, momentum, epsilon) -> var")}});

MSRT_REGISTER_OP({.name = "apply_centered_rms_prop",
                  .inputs = {"var", "mean_gradient", "mean_square", "moment", "grad", "learning_rate", "decay",
                             "momentum", "epsilon"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("apply_centered_rms_prop",
                                       {"var", "mean_gradient", "mean_square", "moment", "grad", "learning_rate",
                                        "decay", "momentum", "epsilon"},
                                       in, {1, 2, 3, 4}, {5, 6, 7, 8});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1, 2, 3}},
                  .doc = "MindSpore's centered RMSProp step: mg = decay * mg + (1 - decay) * grad; "
                         "ms = decay * ms + (1 - decay) * grad^2; "
                         "moment = momentum * moment + lr * grad / sqrt(ms - mg^2 + epsilon); var -= moment",
                  .api = {Primitive("nn_ops.ApplyCenteredRMSProp(use_locking->~=False)(var, mean_gradient, "
                                    "mean_square, moment, grad, learning_rate, decay, momentum, epsilon) -> var")}});

MSRT_REGISTER_OP({.name = "apply_adagrad",
                  .inputs = {"var", "accum", "lr", "grad"},
                  .attrs = {{"update_slots", true, "accumulate grad^2 into accum", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("apply_adagrad", {"var", "accum", "lr", "grad"}, in, {1, 3}, {2});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1}},
                  .doc = "MindSpore's Adagrad step: accum += grad^2 (if update_slots); var -= lr * grad / sqrt(accum)",
                  .api = {Primitive("nn_ops.ApplyAdagrad(update_slots=True)(var, accum, lr, grad) -> (var, accum)")}});

// MindSpore's nn.Lamb step for one parameter (t is the step, from 1):
//   m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//   m^ = m / (1 - beta1^t);  v^ = v / (1 - beta2^t)
//   ratio = ||var|| / ||m^ / sqrt(v^ + eps) + decay * var|| when ||var|| > 0 and ||g|| > 0, else 1;
//           clipped to [0, 10]
//   var -= ratio * lr * (m^ / (sqrt(v^) + eps) + decay * var)   (the decay term only if decay_flag)
MSRT_REGISTER_OP({.name = "lamb",
                  .inputs = {"var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "step", "gradient"},
                  .attrs = {{"decay_flag", true, "add decay * var to the update", AttrType::kBool}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckOptimizer("lamb",
                                       {"var", "m", "v", "lr", "beta1", "beta2", "epsilon", "decay", "step",
                                        "gradient"},
                                       in, {1, 2, 9}, {3, 4, 5, 6, 7, 8});
                        return Metas{in[0]};
                      },
                  .props = {.promotes_scalars = true, .inplace = true, .writes_inputs = {1, 2}},
                  .doc = "MindSpore's Lamb step (Adam moments, a trust ratio per parameter); updates var, m and v "
                         "in place"});

// The tensors scaled by clip_norm / max(global norm, clip_norm), the global
// norm being the L2 norm of all of them together (computed in float32).
MSRT_REGISTER_OP({.name = "clip_by_global_norm",
                  .inputs = {"xs..."},
                  .attrs = {{"clip_norm",
                             1.0,
                             "the largest global norm kept",
                             AttrType::kFloat,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               if (!(v.as_float() > 0)) {
                                 OpError(ErrorKind::kValue, op,
                                         StrCat("'clip_norm' must be positive, but got ", v.as_float()));
                               }
                             }}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    if (in.empty()) return {};
                    std::vector<Tensor> squares;
                    squares.reserve(in.size());
                    for (const Tensor& t : in) {
                      squares.push_back(fn::ReduceSum(fn::Square(fn::Cast(t, DType::kFloat32)), {}, false));
                    }
                    Tensor norm = Call1("sqrt", {Call1("addn", squares)});
                    Tensor clip = fn::Scalar(AttrFloat(attrs, "clip_norm"), norm);
                    Tensor scale = fn::Div(clip, Call1("maximum", {norm, clip}));
                    std::vector<Tensor> out;
                    out.reserve(in.size());
                    for (const Tensor& t : in) out.push_back(fn::Mul(t, fn::Cast(scale, t.dtype())));
                    return out;
                  },
                  .props = {.tuple_outputs = true},
                  .doc = "the tensors scaled so that their global L2 norm is at most clip_norm",
                  .api = {Function("clip_by_global_norm(x->xs..., clip_norm=1.0, use_norm->!=None)")}});

}  // namespace
}  // namespace msrt::ops
