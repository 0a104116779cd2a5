// Random ops. They draw from the global generator (src/core/random.h); see
// Note [Random streams] for how a draw is tied to the seed at dispatch time.
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

MSRT_REGISTER_OP({.name = "dropout",
                  .inputs = {"x"},
                  .attrs = {{"keep_prob",
                             0.5,
                             "probability of keeping an element, in (0, 1]",
                             AttrType::kFloat,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               double keep = v.as_float();
                               if (!(keep > 0.0 && keep <= 1.0)) {
                                 OpError(ErrorKind::kValue, op,
                                         StrCat("attribute 'keep_prob' must be in (0, 1]; expected 0 < keep_prob <= 1, "
                                                "but got ",
                                                v.repr()));
                               }
                             }}},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        CheckDType("dropout", "x", in[0], DTypeClass::kFloat);
                        return Metas{in[0], in[0]};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor()};
                    return {fn::Mul(a.dys[0], a.outputs[1])};
                  },
                  .props = {.random = true},
                  .doc = "(x * mask, mask): mask holds 0 or 1/keep_prob, kept with probability keep_prob",
                  // MindSpore's seeds: msrt draws from the global generator (Note [Random streams]).
                  .api = {Primitive("nn_ops.Dropout(keep_prob=0.5, Seed0->~=0, Seed1->~=0)(x)")}});

}  // namespace
}  // namespace msrt::ops
