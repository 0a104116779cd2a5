// The op registry's lookups for calls: FindOp by name, and the normalized
// attributes kept for calls that give none (Note [Default attributes] in
// src/ops/op_registry.cc).
#include "ops/op_registry.h"

#include <gtest/gtest.h>

#include "msrt/core/errors.h"

namespace msrt::ops {
namespace {

TEST(OpRegistry, FindsEveryOpByItsNameAndNothingElse) {
  for (const OpDef* op : AllOps()) EXPECT_EQ(FindOp(op->name), op) << op->name;
  EXPECT_EQ(FindOp("no_such_op"), nullptr);
  EXPECT_EQ(FindOp(""), nullptr);
  const std::string built = std::string("re") + "lu";  // another string's characters
  EXPECT_EQ(FindOp(built), &GetOp("relu"));
}

TEST(OpRegistry, CallsWithoutAttributesShareTheDefaultsNormalizedOnce) {
  const OpDef& sum = GetOp("sum");
  Dict storage;
  const Dict& first = NormalizedAttrs(sum, Dict(), storage);
  const Dict& again = NormalizedAttrs(sum, Dict(), storage);
  EXPECT_EQ(&first, &again);
  EXPECT_NE(&first, &storage);
  EXPECT_EQ(first, NormalizeAttrs(sum, Dict()));
  // Given attributes are normalized into the caller's storage, every time.
  const Dict& given = NormalizedAttrs(sum, Dict{{"keep_dims", Value(true)}}, storage);
  EXPECT_EQ(&given, &storage);
  EXPECT_TRUE(given.Find("keep_dims")->as_bool());
  EXPECT_TRUE(first.Find("keep_dims") == nullptr || !first.Find("keep_dims")->as_bool());
}

TEST(OpRegistry, AMissingRequiredAttributeRaisesOnEveryCall) {
  const OpDef& reshape = GetOp("reshape");
  Dict storage;
  for (int i = 0; i < 2; ++i) EXPECT_THROW(NormalizedAttrs(reshape, Dict(), storage), TypeError);
}

TEST(OpRegistry, AnOpOutsideTheRegistryIsNormalizedEachTime) {
  const OpDef local{.name = "local_op",
                    .inputs = {"x"},
                    .attrs = {{"factor", Value(2), "a factor", AttrType::kInt}},
                    .infer = [](const std::vector<TensorMeta>& in, const Dict&) { return in; }};
  Dict storage;
  const Dict& attrs = NormalizedAttrs(local, Dict(), storage);
  EXPECT_EQ(&attrs, &storage);
  EXPECT_EQ(attrs.Find("factor")->as_int(), 2);
}

}  // namespace
}  // namespace msrt::ops
