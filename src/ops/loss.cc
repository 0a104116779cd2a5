// Losses: sparse_softmax_cross_entropy, softmax_cross_entropy and nll_loss
// (kernels), and the composites built from ops: mse_loss, l1_loss, l2_loss,
// sigmoid_cross_entropy_with_logits, binary_cross_entropy_with_logits and
// softmax_cross_entropy_with_logits.
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
                  .api = {Primitive("L2Loss()(input_x->x)")}});

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
                  .api = {Primitive("SigmoidCrossEntropyWithLogits()(logits, label->labels)")}});

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
                  .api = {Primitive("SoftmaxCrossEntropyWithLogits()(logits, labels)")}});

}  // namespace
}  // namespace msrt::ops
