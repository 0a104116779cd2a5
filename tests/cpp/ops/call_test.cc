// ops::Call's observers see every call before it runs: the outer composite
// first, then the calls its body makes, each with its parsed attributes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ops/call.h"

namespace msrt {
namespace {

class Recording : public ops::CallObserver {
 public:
  void OnCall(const ops::OpDef& op, const Dict& attrs) override { calls.emplace_back(std::string(op.name), attrs); }
  std::vector<std::pair<std::string, Dict>> calls;
};

Tensor Floats(const std::vector<float>& values, const Shape& shape) {
  return Tensor::FromHost(values.data(), values.size() * sizeof(float), shape, DType::kFloat32);
}

TEST(CallObserver, SeesCompositesThenTheirBodiesWithParsedAttributes) {
  Recording recording;
  ops::AddCallObserver(&recording);
  Tensor x = Floats({1, 2, 3, 4}, {2, 2});
  ops::Call1("gelu_ext", {x}, {{"approximate", "tanh"}});
  ops::RemoveCallObserver(&recording);
  ASSERT_GE(recording.calls.size(), 2u);
  EXPECT_EQ(recording.calls[0].first, "gelu_ext");
  EXPECT_EQ(recording.calls[0].second.Find("approximate")->as_string(), "tanh");
  EXPECT_EQ(recording.calls[1].first, "gelu");
  EXPECT_TRUE(recording.calls[1].second.Find("approximate")->as_bool());
  for (size_t i = 1; i < recording.calls.size(); ++i) EXPECT_NE(recording.calls[i].first, "gelu_ext");
}

TEST(CallObserver, SeesNothingOnceRemovedAndNotFailedCalls) {
  Recording recording;
  ops::AddCallObserver(&recording);
  Tensor x = Floats({1, 2}, {2});
  EXPECT_ANY_THROW(ops::Call1("reduce_sum", {x}, {{"keep_dims", "yes"}}));
  EXPECT_TRUE(recording.calls.empty());  // a call whose attributes do not parse never runs
  ops::Call1("reduce_sum", {x}, {{"axis", int64_t{0}}});
  ASSERT_EQ(recording.calls.size(), 1u);
  // The axis is in its canonical form: a list.
  EXPECT_EQ(recording.calls[0].second.Find("axis")->repr(), "[0]");
  ops::RemoveCallObserver(&recording);
  ops::Call1("neg", {x});
  EXPECT_EQ(recording.calls.size(), 1u);
}

}  // namespace
}  // namespace msrt
