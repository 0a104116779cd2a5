// Losses: sparse_softmax_cross_entropy, softmax_cross_entropy, nll_loss and
// mse_loss (a composite).
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
                  .infer = [](const Metas& in, const Dict&) {
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
                  .infer = [](const Metas& in, const Dict&) {
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

const std::vector<std::string_view> kReductions = {"mean", "sum", "none"};

MSRT_REGISTER_OP({.name = "nll_loss",
                  .inputs = {"log_probs", "target"},
                  .attrs = {{"reduction", "mean", "'mean', 'sum' or 'none'"}},
                  .infer = [](const Metas& in, const Dict& attrs) {
                    constexpr std::string_view op = "nll_loss";
                    std::string reduction = ChoiceAttr(op, attrs, "reduction", kReductions);
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
                  .attrs = {{"reduction", "mean", "'mean', 'sum' or 'none'"}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "mse_loss";
                    std::string reduction = ChoiceAttr(op, attrs, "reduction", kReductions);
                    CheckDType(op, "x", {in[0].shape(), in[0].dtype()}, DTypeClass::kFloat);
                    CheckDType(op, "y", {in[1].shape(), in[1].dtype()}, DTypeClass::kFloat);
                    BroadcastShapes(op, in[0].shape(), in[1].shape());
                    Tensor sq = fn::Square(fn::Sub(in[0], in[1]));
                    if (reduction == "none") return {sq};
                    Dict all{{"axis", Value(List{})}, {"keep_dims", false}};
                    return {Call1(reduction == "mean" ? "reduce_mean" : "reduce_sum", {sq}, all)};
                  },
                  .doc = "(x - y)^2, averaged, summed or elementwise (composite)"});

}  // namespace
}  // namespace msrt::ops
