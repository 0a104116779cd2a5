// Losses: sparse_softmax_cross_entropy, softmax_cross_entropy and nll_loss
// (kernels), and the composites built from ops: mse_loss, l1_loss, l2_loss,
// sigmoid_cross_entropy_with_logits, binary_cross_entropy_with_logits,
// softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits,
// cross_entropy, negative_log_likelihood, nll_loss_with_total_weight, binary_cross_entropy,
// smooth_l1_loss, huber_loss, kl_div, cosine_embedding_loss and margin_ranking_loss.
#include <optional>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;
using fn::Scalar;

void CheckLogits(std::string_view op, std::string_view name, const TensorMeta& logits) {
  CheckDType(op, name, logits, DTypeClass::kFloat);
  CheckRank(op, name, logits, 2);
}

void CheckBatch(std::string_view op, std::string_view a_name, const TensorMeta& a, std::string_view b_name,
                const TensorMeta& b) {
  if (b.shape.empty() || b.shape[0] != a.shape[0]) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", b_name, "' must have one entry per row of '", a_name, "'; expected ", a.shape[0],
                   " rows, but got shape ", ShapeRepr(b.shape)));
  }
}

// (N,) gradient as (N, 1), to scale rows.
Tensor Column(const Tensor& dy) { return fn::ExpandDims(dy, 1); }

MSRT_REGISTER_OP({.name = "sparse_softmax_cross_entropy",
                  .inputs = {"logits", "labels"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        constexpr std::string_view op = "sparse_softmax_cross_entropy";
                        CheckLogits(op, "logits", in[0]);
                        CheckDType(op, "labels", in[1], DTypeClass::kIndex);
                        CheckRank(op, "labels", in[1], 1);
                        CheckBatch(op, "logits", in[0], "labels", in[1]);
                        return Metas{{{in[0].shape[0]}, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor(), Tensor()};
                    const Tensor& logits = a.inputs[0];
                    Tensor onehot = fn::OneHot(a.inputs[1], logits.shape()[1], logits.dtype());
                    Tensor d = fn::Sub(fn::Softmax(logits, 1), onehot);
                    return {fn::Mul(d, Column(a.dys[0])), Tensor()};
                  },
                  .doc = "per-sample -log softmax(logits)[label] (labels out of range raise IndexError)"});

MSRT_REGISTER_OP({.name = "softmax_cross_entropy",
                  .inputs = {"logits", "labels"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        constexpr std::string_view op = "softmax_cross_entropy";
                        CheckLogits(op, "logits", in[0]);
                        CheckSameDType(op, "logits", in[0], "labels", in[1]);
                        if (in[1].shape != in[0].shape) {
                          OpError(ErrorKind::kValue, op,
                                  StrCat("'labels' must have the shape of 'logits'; expected ", ShapeRepr(in[0].shape),
                                         ", but got ", ShapeRepr(in[1].shape)));
                        }
                        return Metas{{{in[0].shape[0]}, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor(), Tensor()};
                    const Tensor& logits = a.inputs[0];
                    const Tensor& labels = a.inputs[1];
                    Tensor dy = Column(a.dys[0]);
                    std::vector<Tensor> out(2);
                    if (a.needs[0]) {
                      // d/dlogits = softmax * sum(labels) - labels
                      Tensor mass = fn::ReduceSum(labels, {1}, true);
                      Tensor d = fn::Sub(fn::Mul(fn::Softmax(logits, 1), mass), labels);
                      out[0] = fn::Mul(d, dy);
                    }
                    if (a.needs[1]) {
                      Tensor log_probs = Call1("log_softmax", {logits}, Dict{{"axis", Value(1)}});
                      out[1] = fn::Neg(fn::Mul(log_probs, dy));
                    }
                    return out;
                  },
                  .doc = "per-sample -sum(labels * log softmax(logits))"});

// How a loss reduces its per-element values.
const AttrSpec kReductionAttr{
    "reduction", "mean", "'mean', 'sum' or 'none'", AttrType::kString, {"mean", "sum", "none"}};

// `loss` averaged, summed or as it is, as `reduction` says.
Tensor Reduce(const Tensor& loss, const Dict& attrs) {
  std::string reduction = AttrString(attrs, "reduction");
  if (reduction == "none") return loss;
  Dict all{{"axis", Value(List{})}, {"keep_dims", false}};
  return Call1(reduction == "mean" ? "reduce_mean" : "reduce_sum", {loss}, all);
}

void CheckFloat(std::string_view op, std::string_view name, const Tensor& t) {
  CheckDType(op, name, {t.shape(), t.dtype()}, DTypeClass::kFloat);
}

MSRT_REGISTER_OP({.name = "nll_loss",
                  .inputs = {"log_probs", "target"},
                  .attrs = {kReductionAttr},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        constexpr std::string_view op = "nll_loss";
                        std::string reduction = AttrString(attrs, "reduction");
                        CheckLogits(op, "log_probs", in[0]);
                        CheckDType(op, "target", in[1], DTypeClass::kIndex);
                        CheckRank(op, "target", in[1], 1);
                        CheckBatch(op, "log_probs", in[0], "target", in[1]);
                        Shape out = reduction == "none" ? Shape{in[0].shape[0]} : Shape{};
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor(), Tensor()};
                    const Tensor& log_probs = a.inputs[0];
                    std::string reduction = AttrString(a.attrs, "reduction");
                    Tensor onehot = fn::OneHot(a.inputs[1], log_probs.shape()[1], log_probs.dtype());
                    Tensor scale = a.dys[0];
                    if (reduction == "none") {
                      scale = Column(scale);
                    } else if (reduction == "mean" && log_probs.shape()[0] > 0) {
                      scale = fn::Div(scale, Scalar(static_cast<double>(log_probs.shape()[0]), scale));
                    }
                    return {fn::Neg(fn::Mul(onehot, scale)), Tensor()};
                  },
                  .doc = "-log_probs[i, target[i]], averaged, summed or per sample"});

MSRT_REGISTER_OP({.name = "mse_loss",
                  .inputs = {"x", "y"},
                  .attrs = {kReductionAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "mse_loss";
                    CheckFloat(op, "x", in[0]);
                    CheckFloat(op, "y", in[1]);
                    BroadcastShapes(op, in[0].shape(), in[1].shape());
                    return {Reduce(fn::Square(fn::Sub(in[0], in[1])), attrs)};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "(x - y)^2, averaged, summed or elementwise (composite)",
                  .api = {Function("mse_loss(input->x, target->y, reduction='mean')")}});

MSRT_REGISTER_OP({.name = "l1_loss",
                  .inputs = {"x", "y"},
                  .attrs = {kReductionAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    BroadcastShapes("l1_loss", in[0].shape(), in[1].shape());
                    return {Reduce(Call1("abs", {fn::Sub(in[0], in[1])}), attrs)};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "|x - y|, averaged, summed or elementwise (composite)",
                  .api = {Function("l1_loss(input->x, target->y, reduction='mean')")}});

MSRT_REGISTER_OP({.name = "l2_loss",
                  .inputs = {"x"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    Tensor total = fn::ReduceSum(fn::Square(in[0]), {}, false);
                    return {fn::Mul(total, Scalar(0.5, total))};
                  },
                  .doc = "sum(x^2) / 2 (composite)",
                  .api = {Primitive("nn_ops.L2Loss()(input_x->x)")}});

// log(1 + exp(-|x|)): the softplus of -|x|, which cannot overflow.
Tensor LogOnePlusExpNegAbs(const Tensor& x) {
  return fn::Log(fn::Add(fn::Exp(fn::Neg(Call1("abs", {x}))), Scalar(1.0, x)));
}

// Labels may be of any numeric dtype: the ops below promote them.
void CheckLogitsAndLabels(std::string_view op, const std::vector<Tensor>& in) {
  CheckFloat(op, "logits", in[0]);
  BroadcastShapes(op, in[0].shape(), in[1].shape());
}

MSRT_REGISTER_OP({.name = "sigmoid_cross_entropy_with_logits",
                  .inputs = {"logits", "labels"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    CheckLogitsAndLabels("sigmoid_cross_entropy_with_logits", in);
                    const Tensor& x = in[0];
                    // max(x, 0) - x * y + log(1 + exp(-|x|)) = -(y log sigmoid(x) + (1 - y) log(1 - sigmoid(x)))
                    return {fn::Add(fn::Sub(Call1("relu", {x}), fn::Mul(x, in[1])), LogOnePlusExpNegAbs(x))};
                  },
                  .props = {.promotes_scalars = true},
                  .doc = "elementwise binary cross entropy of sigmoid(logits) against labels (composite)",
                  .api = {Primitive("nn_ops.SigmoidCrossEntropyWithLogits()(logits, label->labels)")}});

MSRT_REGISTER_OP(
    {.name = "binary_cross_entropy_with_logits",
     .inputs = {"logits", "labels", "weight?", "pos_weight?"},
     .attrs = {kReductionAttr},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "binary_cross_entropy_with_logits";
       CheckLogitsAndLabels(op, in);
       const Tensor& x = in[0];
       const Tensor& y = in[1];
       Tensor loss;
       if (in[3].defined()) {
         // (1 - y) x + (1 + (pos_weight - 1) y) (log(1 + exp(-|x|)) + max(-x, 0))
         Tensor coeff = fn::Add(fn::Mul(fn::Sub(in[3], Scalar(1.0, in[3])), y), Scalar(1.0, y));
         Tensor softplus_neg = fn::Add(LogOnePlusExpNegAbs(x), Call1("relu", {fn::Neg(x)}));
         loss = fn::Add(fn::Mul(fn::Sub(Scalar(1.0, y), y), x), fn::Mul(coeff, softplus_neg));
       } else {
         loss = Call1("sigmoid_cross_entropy_with_logits", {x, y});
       }
       if (in[2].defined()) loss = fn::Mul(loss, in[2]);
       return {Reduce(loss, attrs)};
     },
     .props = {.promotes_scalars = true},
     .doc = "binary cross entropy of sigmoid(logits) against labels, optionally weighted per element and per "
            "positive class, averaged, summed or elementwise (composite)",
     .api = {Function("binary_cross_entropy_with_logits(input->logits, target->labels, weight=None, "
                      "pos_weight=None, reduction='mean')")}});

MSRT_REGISTER_OP({.name = "softmax_cross_entropy_with_logits",
                  .inputs = {"logits", "labels"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    Tensor loss = Call1("softmax_cross_entropy", {in[0], in[1]});
                    return {loss, fn::Sub(fn::Softmax(in[0], -1), in[1])};
                  },
                  .doc = "(per-sample softmax cross entropy, its gradient softmax(logits) - labels) (composite)",
                  .api = {Primitive("nn_ops.SoftmaxCrossEntropyWithLogits()(logits, labels)")}});

MSRT_REGISTER_OP(
    {.name = "sparse_softmax_cross_entropy_with_logits",
     .inputs = {"logits", "labels"},
     .attrs = {{"is_grad", false, "return the gradient w.r.t. the logits instead of the loss", AttrType::kBool}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       const Tensor& logits = in[0];
       if (!AttrBool(attrs, "is_grad")) {
         Dict all{{"axis", Value(List{})}, {"keep_dims", false}};
         return {Call1("reduce_mean", {Call1("sparse_softmax_cross_entropy", {logits, in[1]})}, all)};
       }
       CheckLogits("sparse_softmax_cross_entropy_with_logits", "logits", {logits.shape(), logits.dtype()});
       Tensor onehot = fn::OneHot(in[1], logits.shape()[1], logits.dtype());
       Tensor d = fn::Sub(fn::Softmax(logits, -1), onehot);
       return {fn::Div(d, Scalar(static_cast<double>(logits.shape()[0]), d))};
     },
     .doc = "the mean sparse softmax cross entropy over the batch, or (is_grad) its gradient (softmax(logits) - "
            "onehot(labels)) / N (composite)",
     .api = {Primitive("nn_ops.SparseSoftmaxCrossEntropyWithLogits(is_grad=False)(logits, labels)")}});

// --- Losses over classes: (N, C) or (N, C, d1, ...) inputs ------------------------------------------------
// Note [Class losses]
// cross_entropy and negative_log_likelihood (ms.ops.nll_loss) take inputs
// (N, C) or (N, C, d1, ...) with targets (N,) or (N, d1, ...): the extra
// dimensions are moved before the classes and flattened, so every sample is
// one row of (N*d1*..., C), and the per-sample losses are reshaped back for
// reduction 'none'. Samples whose target is `ignore_index` have loss 0 and do
// not count in the mean. Without class weights or label smoothing the
// per-sample ops (sparse_softmax_cross_entropy, nll_loss) compute the loss;
// otherwise it is built from one-hot targets:
//   loss_i = -(1 - s) * w[t_i] * logp[i, t_i] - s / C * sum_c w[c] * logp[i, c]
// and the mean divides by sum_i w[t_i] over the kept samples.

const AttrSpec kIgnoreIndexAttr{"ignore_index", int64_t{-100}, "the target value whose samples are left out",
                                AttrType::kInt};
const AttrSpec kLabelSmoothingAttr{"label_smoothing", 0.0, "the probability mass spread over every class",
                                   AttrType::kFloat};

void CheckHasClasses(std::string_view op, std::string_view name, const Tensor& x) {
  if (x.shape().size() < 2) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", name, "' must be (N, C) or (N, C, d1, ...), but got shape ", ShapeRepr(x.shape())));
  }
}

// `t` (of rank `rank`, classes in dimension 1) as rows of `classes` (Note [Class losses]).
Tensor ClassesLast(const Tensor& t, size_t rank, int64_t classes) {
  std::vector<int64_t> perm{0};
  for (size_t i = 2; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  perm.push_back(1);
  return fn::Reshape(fn::Transpose(t, perm), {-1, classes});
}

// The samples kept (target != ignore_index): `safe` targets ignored samples at
// class 0, and `mask` (1 or 0, in the loss's dtype) zeroes their loss.
struct Kept {
  Tensor safe, mask;
};
Kept KeepTargets(const Tensor& target, int64_t ignore_index, DType dtype) {
  Tensor keep = Call1("not_equal", {target, Scalar(static_cast<double>(ignore_index), target)});
  return {fn::Select(keep, target, fn::ZerosLike(target)), fn::Cast(keep, dtype)};
}

// Per-sample `loss` reduced: 'mean' divides by the sum of `sample_weight`.
Tensor ReduceSamples(const Tensor& loss, const Tensor& sample_weight, const Dict& attrs,
                     const std::optional<Shape>& restore) {
  std::string reduction = AttrString(attrs, "reduction");
  if (reduction == "none") return restore ? fn::Reshape(loss, *restore) : loss;
  Tensor total = fn::ReduceSum(loss, {}, false);
  if (reduction == "sum") return total;
  return fn::Div(total, fn::ReduceSum(sample_weight, {}, false));
}

// The loss of log-probabilities `logp` (rows, C) at `target` (rows,) with
// class weights and label smoothing (Note [Class losses]); `fn_name` is the
// ms.ops function named in errors.
Tensor WeightedNll(std::string_view fn_name, const Tensor& logp, const Tensor& target, const Tensor& weight,
                   const Dict& attrs, const std::optional<Shape>& restore) {
  int64_t classes = logp.shape()[1];
  if (weight.defined() && weight.shape() != Shape{classes}) {
    ThrowError(ErrorKind::kValue,
               StrCat("For '", fn_name, "', the shape of 'weight' must be (C,) = (", classes, ",) for inputs with ",
                      classes, " classes, but got ", ShapeRepr(weight.shape()), "."));
  }
  Kept kept = KeepTargets(target, AttrInt(attrs, "ignore_index"), logp.dtype());
  Tensor hot = fn::OneHot(kept.safe, classes, logp.dtype());
  Tensor weighted_hot = hot;
  Tensor sample_weight = kept.mask;
  if (weight.defined()) {
    weighted_hot = fn::Mul(hot, weight);
    sample_weight = fn::Mul(fn::ReduceSum(weighted_hot, {1}, false), kept.mask);
  }
  Tensor loss = fn::Neg(fn::Mul(fn::ReduceSum(fn::Mul(weighted_hot, logp), {1}, false), kept.mask));
  double smoothing = AttrFloat(attrs, "label_smoothing");
  if (smoothing != 0.0) {
    Tensor per_class = weight.defined() ? fn::Mul(logp, weight) : logp;
    Tensor smooth = fn::Neg(fn::Mul(fn::ReduceSum(per_class, {1}, false), kept.mask));
    loss = fn::Add(fn::Mul(loss, Scalar(1.0 - smoothing, loss)),
                   fn::Mul(smooth, Scalar(smoothing / static_cast<double>(classes), smooth)));
  }
  return ReduceSamples(loss, sample_weight, attrs, restore);
}

// The negative log-likelihood of `logp` (N, C[, d...]) at `target` (Note [Class losses]).
Tensor Nll(std::string_view fn_name, Tensor logp, Tensor target, const Tensor& weight, const Dict& attrs) {
  std::optional<Shape> restore;
  if (logp.shape().size() > 2) {
    restore = target.shape();
    logp = ClassesLast(logp, logp.shape().size(), logp.shape()[1]);
    target = fn::Reshape(target, {-1});
  }
  if (weight.defined() || AttrFloat(attrs, "label_smoothing") != 0.0) {
    return WeightedNll(fn_name, logp, target, weight, attrs, restore);
  }
  Kept kept = KeepTargets(target, AttrInt(attrs, "ignore_index"), logp.dtype());
  Tensor loss = Call1("nll_loss", {logp, kept.safe}, Dict{{"reduction", Value(std::string("none"))}});
  return ReduceSamples(fn::Mul(loss, kept.mask), kept.mask, attrs, restore);
}

Tensor LogSoftmaxOverClasses(const Tensor& x) { return Call1("log_softmax", {x}, Dict{{"axis", Value(1)}}); }

// Cross entropy against class probabilities (a float `probs` shaped as `x`).
Tensor CrossEntropyOfProbabilities(const Tensor& x, Tensor probs, const Tensor& weight, const Dict& attrs) {
  size_t rank = x.shape().size();
  int64_t classes = x.shape()[1];
  Tensor logits = x;
  if (rank > 2) {
    logits = ClassesLast(x, rank, classes);
    probs = ClassesLast(probs, rank, classes);
  }
  double smoothing = AttrFloat(attrs, "label_smoothing");
  if (smoothing != 0.0) {
    probs = fn::Add(fn::Mul(probs, Scalar(1.0 - smoothing, probs)),
                    Scalar(smoothing / static_cast<double>(classes), probs));
  }
  Tensor logp = LogSoftmaxOverClasses(logits);
  if (weight.defined()) logp = fn::Mul(logp, weight);
  Tensor loss = fn::Neg(fn::ReduceSum(fn::Mul(probs, logp), {1}, false));
  if (AttrString(attrs, "reduction") == "none" && rank > 2) {
    Shape per_sample{x.shape()[0]};
    per_sample.insert(per_sample.end(), x.shape().begin() + 2, x.shape().end());
    return fn::Reshape(loss, per_sample);
  }
  return Reduce(loss, attrs);
}

MSRT_REGISTER_OP(
    {.name = "cross_entropy",
     .inputs = {"input", "target", "weight?"},
     .attrs = {kIgnoreIndexAttr, kReductionAttr, kLabelSmoothingAttr},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       const Tensor& x = in[0];
       const Tensor& target = in[1];
       const Tensor& weight = in[2];
       CheckHasClasses("cross_entropy", "input", x);
       if (IsFloating(target.dtype())) return {CrossEntropyOfProbabilities(x, target, weight, attrs)};
       if (weight.defined() || AttrFloat(attrs, "label_smoothing") != 0.0) {
         return {Nll("cross_entropy", LogSoftmaxOverClasses(x), target, weight, attrs)};
       }
       Tensor logits = x;
       Tensor labels = target;
       std::optional<Shape> restore;
       if (x.shape().size() > 2) {
         restore = target.shape();
         logits = ClassesLast(x, x.shape().size(), x.shape()[1]);
         labels = fn::Reshape(target, {-1});
       }
       Kept kept = KeepTargets(labels, AttrInt(attrs, "ignore_index"), x.dtype());
       Tensor loss = Call1("sparse_softmax_cross_entropy", {logits, kept.safe});
       return {ReduceSamples(fn::Mul(loss, kept.mask), kept.mask, attrs, restore)};
     },
     .doc = "cross entropy of logits (N, C[, d1, ...]) against class indices or (float) class probabilities, with "
            "class weights, ignore_index and label smoothing, averaged, summed or per sample (composite; Note "
            "[Class losses])",
     .api = {Function("cross_entropy(input, target, weight=None, ignore_index=-100, reduction='mean', "
                      "label_smoothing=0.0)")}});

MSRT_REGISTER_OP({.name = "negative_log_likelihood",
                  .inputs = {"input", "target", "weight?"},
                  .attrs = {kIgnoreIndexAttr, kReductionAttr, kLabelSmoothingAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    CheckHasClasses("negative_log_likelihood", "input", in[0]);
                    return {Nll("nll_loss", in[0], in[1], in[2], attrs)};
                  },
                  .doc = "ms.ops.nll_loss: nll_loss of log-probabilities (N, C[, d1, ...]) with class weights, "
                         "ignore_index and label smoothing, averaged, summed or per sample (composite; Note "
                         "[Class losses])",
                  .api = {Function("nll_loss(inputs->input, target, weight=None, ignore_index=-100, "
                                   "reduction='mean', label_smoothing=0.0)")}});

MSRT_REGISTER_OP(
    {.name = "nll_loss_with_total_weight",
     .inputs = {"logits", "labels", "weight"},
     .attrs = {kReductionAttr, kIgnoreIndexAttr},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       const Tensor& logits = in[0];
       CheckHasClasses("nll_loss_with_total_weight", "logits", logits);
       Dict nll{{"ignore_index", *attrs.Find("ignore_index")}, {"reduction", *attrs.Find("reduction")}};
       Tensor loss = Call1("negative_log_likelihood", {logits, in[1], in[2]}, nll);
       // Labels out of [0, C) (ignore_index among them) have an all-zero one-hot row: no weight.
       Tensor hot = fn::OneHot(in[1], logits.shape()[1], logits.dtype());
       return {loss, fn::ReduceSum(fn::Mul(hot, in[2]), {}, false)};
     },
     .doc = "(the negative log-likelihood with class weights, the total weight of the targets) (composite)",
     .api = {Primitive("nn_ops.NLLLoss(reduction='mean', ignore_index=-100)(logits, labels, weight)")}});

// --- Elementwise losses of two tensors (MindSpore's functional names) ----------------------------------------

// A positive float attribute (beta, delta).
AttrSpec PositiveAttr(std::string_view name, std::string_view doc) {
  return {name, 1.0, doc, AttrType::kFloat, {}, false, [name](std::string_view op, const Value& v) {
            if (!(v.as_float() > 0))
              OpError(ErrorKind::kValue, op, StrCat("'", name, "' must be positive; but got ", v.as_float()));
          }};
}

AttrSpec FloatAttr(std::string_view name, double value, std::string_view doc) {
  return {name, value, doc, AttrType::kFloat};
}

void CheckSameShape(std::string_view op, std::string_view a_name, const Tensor& a, std::string_view b_name,
                    const Tensor& b) {
  if (a.shape() != b.shape()) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", b_name, "' must have the shape of '", a_name, "'; expected ", ShapeRepr(a.shape()),
                   ", but got ", ShapeRepr(b.shape())));
  }
}

MSRT_REGISTER_OP(
    {.name = "binary_cross_entropy",
     .inputs = {"logits", "labels", "weight?"},
     .attrs = {kReductionAttr},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "binary_cross_entropy";
       const Tensor& x = in[0];
       const Tensor& y = in[1];
       CheckFloat(op, "logits", x);
       CheckFloat(op, "labels", y);
       CheckSameShape(op, "logits", x, "labels", y);
       // log clamped at -100, so a probability of 0 or 1 gives a finite loss (as PyTorch)
       Tensor floor = Scalar(-100.0, x);
       Tensor log_p = Call1("maximum", {fn::Log(x), floor});
       Tensor log_q = Call1("maximum", {fn::Log(fn::Sub(Scalar(1.0, x), x)), floor});
       Tensor loss = fn::Neg(fn::Add(fn::Mul(y, log_p), fn::Mul(fn::Sub(Scalar(1.0, y), y), log_q)));
       if (in[2].defined()) loss = fn::Mul(loss, in[2]);
       return {Reduce(loss, attrs)};
     },
     .doc = "-(labels * log(logits) + (1 - labels) * log(1 - logits)) of probabilities, the logs clamped at -100, "
            "optionally weighted, averaged, summed or elementwise (composite)",
     .api = {Function("binary_cross_entropy(logits, labels, weight=None, reduction='mean')"),
             Primitive("nn_ops.BinaryCrossEntropy(reduction='mean')(logits, labels, weight=None)")}});

// 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta elsewhere (times `scale`).
Tensor SmoothL1(const Tensor& x, const Tensor& y, double beta, double scale) {
  Tensor d = Call1("abs", {fn::Sub(x, y)});
  Tensor quadratic = fn::Mul(fn::Square(d), Scalar(0.5 * scale / beta, d));
  Tensor linear = fn::Mul(fn::Sub(d, Scalar(0.5 * beta, d)), Scalar(scale, d));
  return fn::Select(Call1("less", {d, Scalar(beta, d)}), quadratic, linear);
}

MSRT_REGISTER_OP(
    {.name = "smooth_l1_loss",
     .inputs = {"x", "y"},
     .attrs = {PositiveAttr("beta", "where the loss turns from quadratic to linear"),
               {"reduction", "none", "'mean', 'sum' or 'none'", AttrType::kString, {"mean", "sum", "none"}}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "smooth_l1_loss";
       CheckFloat(op, "input", in[0]);
       CheckSameDType(op, "input", {in[0].shape(), in[0].dtype()}, "target", {in[1].shape(), in[1].dtype()});
       CheckSameShape(op, "input", in[0], "target", in[1]);
       return {Reduce(SmoothL1(in[0], in[1], AttrFloat(attrs, "beta"), 1.0), attrs)};
     },
     .doc = "0.5 (x - y)^2 / beta where |x - y| < beta, else |x - y| - 0.5 beta; elementwise by "
            "default (composite)",
     .api = {Function("smooth_l1_loss(input->x, target->y, beta=1.0, reduction='none')"),
             Primitive("nn_ops.SmoothL1Loss(beta=1.0, reduction='none')(logits->x, labels->y)")}});

MSRT_REGISTER_OP(
    {.name = "huber_loss",
     .inputs = {"x", "y"},
     .attrs = {kReductionAttr, PositiveAttr("delta", "where the loss turns from quadratic to linear")},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "huber_loss";
       CheckFloat(op, "input", in[0]);
       CheckSameDType(op, "input", {in[0].shape(), in[0].dtype()}, "target", {in[1].shape(), in[1].dtype()});
       BroadcastShapes(op, in[0].shape(), in[1].shape());
       double delta = AttrFloat(attrs, "delta");
       return {Reduce(SmoothL1(in[0], in[1], delta, delta), attrs)};
     },
     .doc = "0.5 (x - y)^2 where |x - y| < delta, else delta (|x - y| - 0.5 delta) (composite)",
     .api = {Function("huber_loss(input->x, target->y, reduction='mean', delta=1.0)")}});

MSRT_REGISTER_OP(
    {.name = "kl_div",
     .inputs = {"logits", "labels"},
     .attrs = {{"reduction",
                "mean",
                "'mean', 'batchmean', 'sum' or 'none'",
                AttrType::kString,
                {"mean", "batchmean", "sum", "none"}}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "kl_div";
       const Tensor& x = in[0];
       const Tensor& y = in[1];
       CheckFloat(op, "logits", x);
       CheckSameDType(op, "logits", {x.shape(), x.dtype()}, "labels", {y.shape(), y.dtype()});
       BroadcastShapes(op, x.shape(), y.shape());
       // labels * (log(labels) - logits), 0 where labels is 0
       Tensor positive = fn::Greater(y, Scalar(0.0, y));
       Tensor safe = fn::Select(positive, y, fn::OnesLike(y));
       Tensor loss = fn::Mul(y, fn::Sub(fn::Log(safe), x));
       std::string reduction = AttrString(attrs, "reduction");
       if (reduction != "batchmean") return {Reduce(loss, attrs)};
       Tensor total = fn::ReduceSum(loss, {}, false);
       double batch = x.shape().empty() ? 1.0 : static_cast<double>(x.shape()[0]);
       return {fn::Div(total, Scalar(batch, total))};
     },
     .doc = "Kullback-Leibler divergence labels * (log(labels) - logits) of log-probabilities logits, averaged, "
            "averaged over the batch ('batchmean'), summed or elementwise (composite)",
     .api = {Function("kl_div(logits, labels, reduction='mean')"),
             Primitive("nn_ops.KLDivLoss(reduction='mean')(logits, labels)")}});

MSRT_REGISTER_OP(
    {.name = "cosine_embedding_loss",
     .inputs = {"x1", "x2", "target"},
     .attrs = {FloatAttr("margin", 0.0, "the cosine below which dissimilar pairs cost nothing"), kReductionAttr},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "cosine_embedding_loss";
       const Tensor& a = in[0];
       const Tensor& b = in[1];
       CheckFloat(op, "input1", a);
       CheckSameDType(op, "input1", {a.shape(), a.dtype()}, "input2", {b.shape(), b.dtype()});
       CheckSameShape(op, "input1", a, "input2", b);
       if (a.shape().empty()) OpError(ErrorKind::kValue, op, "'input1' must have rank 1 or more; but got shape ()");
       Shape rows(a.shape().begin(), a.shape().end() - 1);
       if (in[2].shape() != rows) {
         OpError(ErrorKind::kValue, op,
                 StrCat("'target' must have the shape of the inputs without their last axis; expected ",
                        ShapeRepr(rows), ", but got ", ShapeRepr(in[2].shape())));
       }
       const int64_t last = static_cast<int64_t>(a.shape().size()) - 1;
       constexpr double kEpsilon = 1e-12;  // as PyTorch: sqrt((|a|^2 + eps) (|b|^2 + eps))
       Tensor dot = fn::ReduceSum(fn::Mul(a, b), {last}, false);
       Tensor aa = fn::Add(fn::ReduceSum(fn::Square(a), {last}, false), Scalar(kEpsilon, a));
       Tensor bb = fn::Add(fn::ReduceSum(fn::Square(b), {last}, false), Scalar(kEpsilon, b));
       Tensor cosine = fn::Div(dot, Call1("sqrt", {fn::Mul(aa, bb)}));
       Tensor target = fn::Cast(in[2], a.dtype());
       Tensor similar = fn::Sub(Scalar(1.0, cosine), cosine);
       Tensor dissimilar = Call1("relu", {fn::Sub(cosine, Scalar(AttrFloat(attrs, "margin"), cosine))});
       Tensor zeros = fn::ZerosLike(cosine);
       Tensor loss = fn::Select(fn::Equal(target, Scalar(1.0, target)), similar,
                                fn::Select(fn::Equal(target, Scalar(-1.0, target)), dissimilar, zeros));
       return {Reduce(loss, attrs)};
     },
     .doc = "1 - cos(x1, x2) for target 1, max(0, cos(x1, x2) - margin) for target -1, along the last axis "
            "(composite)",
     .api = {Function("cosine_embedding_loss(input1->x1, input2->x2, target, margin=0.0, reduction='mean')")}});

MSRT_REGISTER_OP({.name = "margin_ranking_loss",
                  .inputs = {"x1", "x2", "target"},
                  .attrs = {FloatAttr("margin", 0.0, "how far x1 must lead x2 in target's direction"), kReductionAttr},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "margin_ranking_loss";
                    const Tensor& a = in[0];
                    CheckFloat(op, "input1", a);
                    CheckSameDType(op, "input1", {a.shape(), a.dtype()}, "input2", {in[1].shape(), in[1].dtype()});
                    CheckSameDType(op, "input1", {a.shape(), a.dtype()}, "target", {in[2].shape(), in[2].dtype()});
                    CheckSameShape(op, "input1", a, "input2", in[1]);
                    CheckSameShape(op, "input1", a, "target", in[2]);
                    Tensor gap = fn::Mul(fn::Neg(in[2]), fn::Sub(a, in[1]));
                    return {Reduce(Call1("relu", {fn::Add(gap, Scalar(AttrFloat(attrs, "margin"), gap))}), attrs)};
                  },
                  .doc = "max(0, -target * (x1 - x2) + margin) (composite)",
                  .api = {
                      Function("margin_ranking_loss(input1->x1, input2->x2, target, margin=0.0, reduction='mean')")}});

}  // namespace
}  // namespace msrt::ops
