// Activations of the NN family built from other ops (composites: no kernel,
// no gradient of their own).
#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

MSRT_REGISTER_OP({
    .name = "leaky_relu",
    .inputs = {"x"},
    .attrs = {{"alpha", 0.2, "the slope for x <= 0", AttrType::kFloat}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      const Tensor& x = in[0];
      Tensor scaled = fn::Mul(x, fn::Scalar(AttrFloat(attrs, "alpha"), x));
      return {fn::Select(fn::Greater(x, fn::Scalar(0.0, x)), x, scaled)};
    },
    .doc = "x where x > 0, else alpha * x (composite)",
    .api = {Function("leaky_relu(input->x, alpha=0.2)")},
});

}  // namespace
}  // namespace msrt::ops
