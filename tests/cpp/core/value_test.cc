#include "msrt/core/value.h"

#include <gtest/gtest.h>

#include "msrt/core/errors.h"

namespace msrt {
namespace {

TEST(ValueTest, KindsFollowPython) {
  EXPECT_TRUE(Value().is_none());
  EXPECT_TRUE(Value(true).is_bool());
  EXPECT_FALSE(Value(true).is_int());
  EXPECT_TRUE(Value(true).is_int_like());
  EXPECT_TRUE(Value(3).is_int());
  EXPECT_TRUE(Value(1.5).is_float());
  EXPECT_TRUE(Value("abc").is_string());  // not a bool, despite const char*
  EXPECT_TRUE(Value(List{1, 2}).is_list());
  EXPECT_TRUE(Value::Tuple({1}).is_tuple());
  EXPECT_TRUE(Value(Dict{{"a", 1}}).is_dict());
}

TEST(ValueTest, ReprMatchesPython) {
  EXPECT_EQ(Value().repr(), "None");
  EXPECT_EQ(Value(true).repr(), "True");
  EXPECT_EQ(Value(-7).repr(), "-7");
  EXPECT_EQ(Value(1024.0).repr(), "1024.0");
  EXPECT_EQ(Value(3.5).repr(), "3.5");
  EXPECT_EQ(Value(0.1).repr(), "0.1");
  EXPECT_EQ(Value(1e20).repr(), "1e+20");
  EXPECT_EQ(Value("it's").repr(), "\"it's\"");
  EXPECT_EQ(Value("a\nb").repr(), "'a\\nb'");
  EXPECT_EQ(Value(List{1, "x"}).repr(), "[1, 'x']");
  EXPECT_EQ(Value::Tuple({1}).repr(), "(1,)");
  EXPECT_EQ(Value(Dict{{"k", List{}}}).repr(), "{'k': []}");
  EXPECT_EQ(Value::Object("numpy.int64", "np.int64(3)").type_name(), "numpy.int64");
}

TEST(ValueTest, EqualityIsStrictAboutKinds) {
  EXPECT_NE(Value(true), Value(1));
  EXPECT_NE(Value(1), Value(1.0));
  EXPECT_NE(Value(List{1}), Value::Tuple({1}));
  EXPECT_EQ(Value(List{1, "a"}), Value(List{1, "a"}));
  // Dicts compare like Python dicts: order does not matter.
  EXPECT_EQ(Value(Dict{{"a", 1}, {"b", 2}}), Value(Dict{{"b", 2}, {"a", 1}}));
  EXPECT_EQ(Value(Dict{{"a", 1}, {"b", 2}}).StableHash(), Value(Dict{{"b", 2}, {"a", 1}}).StableHash());
  EXPECT_NE(Value("a").StableHash(), Value("b").StableHash());
  EXPECT_NE(Value(1).StableHash(), Value(true).StableHash());
}

TEST(ValueTest, DictKeepsInsertionOrderAndReplacesInPlace) {
  Dict d{{"b", 1}, {"a", 2}};
  d.Set("b", 3);
  d.Set("c", 4);
  std::vector<std::string> keys;
  for (const auto& [k, v] : d) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"b", "a", "c"}));
  EXPECT_EQ(d.Find("b")->as_int(), 3);
  EXPECT_TRUE(d.Erase("a"));
  EXPECT_EQ(d.Find("a"), nullptr);
}

TEST(ValueTest, WrongAccessorIsAnInternalError) {
  EXPECT_THROW(Value("x").as_int(), InternalError);
  EXPECT_THROW(Value(1).as_string(), InternalError);
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_EQ(Value(2).as_float(), 2.0);
}

}  // namespace
}  // namespace msrt
