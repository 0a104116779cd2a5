// The op declarations' shared attribute parsers (AttrType), their Python
// forms (ApiForm signatures) and the generated public C++ op API (msrt/ops.h).
#include <gtest/gtest.h>

#include <msrt/ops.h>

#include "ops/op_def.h"

namespace msrt::ops {
namespace {

Value Parse(AttrType type, const Value& v, std::vector<std::string_view> choices = {}) {
  AttrSpec spec{"a", Value(), "", type, std::move(choices)};
  return ParseAttr("test_op", spec, v);
}

Value Ints(std::initializer_list<int64_t> values) {
  List items;
  for (int64_t v : values) items.emplace_back(v);
  return Value(std::move(items));
}

TEST(AttrTypeTest, IntListsTakeOneCanonicalForm) {
  EXPECT_EQ(Parse(AttrType::kInts, Value(3)).repr(), Ints({3}).repr());
  EXPECT_EQ(Parse(AttrType::kAxes, Value()).repr(), Value(List{}).repr());
  EXPECT_EQ(Parse(AttrType::kAxes, Value::Tuple({Value(0), Value(1)})).repr(), Ints({0, 1}).repr());
  EXPECT_EQ(Parse(AttrType::kAxis, Ints({2})).as_int(), 2);
  EXPECT_EQ(Parse(AttrType::kPair, Value(3)).repr(), Ints({3, 3}).repr());
  EXPECT_EQ(Parse(AttrType::kPair, Ints({1, 1, 2, 3})).repr(), Ints({2, 3}).repr());
  EXPECT_EQ(Parse(AttrType::kPadding, Value(1)).repr(), Ints({1, 1, 1, 1}).repr());
  EXPECT_EQ(Parse(AttrType::kPadding, Ints({1, 2, 3, 4})).repr(), Ints({1, 2, 3, 4}).repr());
  EXPECT_THROW(Parse(AttrType::kPadding, Ints({1, 2})), ValueError);  // MindSpore: an int or 4 values
  EXPECT_EQ(Parse(AttrType::kShape, Ints({-1, 4})).repr(), Ints({-1, 4}).repr());
}

// A list of ints already in the canonical form is kept as given; anything
// else in it is still checked.
TEST(AttrTypeTest, IntListsAlreadyCanonicalPassAndOthersAreStillChecked) {
  EXPECT_EQ(Parse(AttrType::kInts, Ints({2, -3})).repr(), Ints({2, -3}).repr());
  EXPECT_EQ(Parse(AttrType::kAxes, Ints({})).repr(), Value(List{}).repr());
  EXPECT_TRUE(Parse(AttrType::kShape, Value::Tuple({Value(2), Value(2)})).is_list());
  EXPECT_THROW(Parse(AttrType::kShape, Ints({2, -2})), ValueError);
  EXPECT_THROW(Parse(AttrType::kShape, Value(List{Value(2), Value(true)})), TypeError);
  EXPECT_THROW(Parse(AttrType::kInts, Value(List{Value(1), Value(1.5)})), TypeError);
  EXPECT_THROW(Parse(AttrType::kAxes, Value(List{Value(0), Value("1")})), TypeError);
}

TEST(AttrTypeTest, ThreeDimensionalWindowsAndPaddingTakeOneCanonicalForm) {
  EXPECT_EQ(Parse(AttrType::kTriple, Value(2)).repr(), Ints({2, 2, 2}).repr());
  EXPECT_EQ(Parse(AttrType::kTriple, Ints({1, 2, 3})).repr(), Ints({1, 2, 3}).repr());
  EXPECT_EQ(Parse(AttrType::kTriple, Ints({1, 1, 2, 3, 4})).repr(), Ints({2, 3, 4}).repr());
  EXPECT_EQ(Parse(AttrType::kPadding6, Value(1)).repr(), Ints({1, 1, 1, 1, 1, 1}).repr());
  EXPECT_EQ(Parse(AttrType::kPadding6, Ints({0, 1, 2, 3, 4, 5})).repr(), Ints({0, 1, 2, 3, 4, 5}).repr());
  EXPECT_THROW(Parse(AttrType::kTriple, Ints({2, 2})), ValueError);
  EXPECT_THROW(Parse(AttrType::kTriple, Ints({2, 1, 2, 3, 4})), ValueError);  // 5 must begin with 1, 1
  EXPECT_THROW(Parse(AttrType::kTriple, Ints({0, 1, 1})), ValueError);
  EXPECT_THROW(Parse(AttrType::kTriple, Value(1.5)), TypeError);
  EXPECT_THROW(Parse(AttrType::kPadding6, Ints({1, 2, 3, 4})), ValueError);
  EXPECT_THROW(Parse(AttrType::kPadding6, Ints({0, 0, 0, 0, 0, -1})), ValueError);
}

TEST(AttrTypeTest, ScalarsKeepTheirKind) {
  EXPECT_TRUE(Parse(AttrType::kScalar, Value(true)).is_bool());
  EXPECT_TRUE(Parse(AttrType::kScalar, Value(3)).is_int());
  EXPECT_TRUE(Parse(AttrType::kScalar, Value(2.5)).is_float());
  EXPECT_THROW(Parse(AttrType::kScalar, Value("3")), TypeError);
  EXPECT_THROW(Parse(AttrType::kScalar, Ints({3})), TypeError);
}

TEST(AttrTypeTest, BadValuesAreTypedErrorsNamingTheOpAndAttribute) {
  EXPECT_THROW(Parse(AttrType::kBool, Value(1)), TypeError);
  EXPECT_THROW(Parse(AttrType::kInt, Value(true)), TypeError);
  EXPECT_THROW(Parse(AttrType::kInt, Value(1.5)), TypeError);
  EXPECT_THROW(Parse(AttrType::kShape, Value(6)), TypeError);
  EXPECT_THROW(Parse(AttrType::kShape, Ints({-2})), ValueError);
  EXPECT_THROW(Parse(AttrType::kPair, Ints({0, 1})), ValueError);
  EXPECT_THROW(Parse(AttrType::kPair, Ints({2, 2, 2})), ValueError);
  EXPECT_THROW(Parse(AttrType::kPadding, Ints({-1})), ValueError);
  EXPECT_THROW(Parse(AttrType::kAxis, Ints({0, 1})), ValueError);
  EXPECT_THROW(Parse(AttrType::kDataFormat, Value("NCWH")), ValueError);
  EXPECT_THROW(Parse(AttrType::kString, Value("max"), {"mean", "sum"}), ValueError);
  try {
    Parse(AttrType::kDType, Value("float128"));
    FAIL() << "no error";
  } catch (const TypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[test_op] attribute 'a'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("float128"), std::string::npos) << e.what();
  }
}

TEST(AttrTypeTest, StringsAndDTypesAreNormalized) {
  EXPECT_EQ(Parse(AttrType::kPadMode, Value("SAME")).as_string(), "same");
  EXPECT_EQ(Parse(AttrType::kDType, Value("Float32")).as_string(),
            Parse(AttrType::kDType, Value("float32")).as_string());
  EXPECT_EQ(Parse(AttrType::kFloat, Value(2)).as_float(), 2.0);
}

TEST(AttrTypeTest, ChecksRunOnTheParsedValue) {
  AttrSpec spec{"p", Value(0.5), "", AttrType::kFloat};
  spec.check = [](std::string_view op, const Value& v) {
    if (v.as_float() > 1) OpError(ErrorKind::kValue, op, "'p' must be at most 1");
  };
  EXPECT_EQ(ParseAttr("op", spec, Value(1)).as_float(), 1.0);
  EXPECT_THROW(ParseAttr("op", spec, Value(2)), ValueError);
}

TEST(OpApiTest, EveryDeclaredFormParses) {
  size_t forms = 0;
  for (const OpDef* op : AllOps()) {
    ASSERT_NO_THROW(forms += ApiForms(*op).size()) << op->name;
  }
  EXPECT_GT(forms, 50u);
}

TEST(OpApiTest, SignaturesBindInputsAndAttributes) {
  const OpDef& op = GetOp("reduce_mean");
  ParsedForm form = ParseApiForm(op, Primitive("ReduceMean|Mean(keep_dims=False)(x, axis=())"));
  EXPECT_EQ(form.names, (std::vector<std::string>{"ReduceMean", "Mean"}));
  ASSERT_EQ(form.init.size(), 1u);
  EXPECT_EQ(form.init[0].binds, ApiParam::Binds::kAttr);
  ASSERT_EQ(form.params.size(), 2u);
  EXPECT_EQ(form.params[0].binds, ApiParam::Binds::kInput);
  EXPECT_EQ(form.params[1].target, "axis");
  EXPECT_TRUE(form.params[1].default_value->is_tuple());

  ParsedForm f = ParseApiForm(op, Function("mean(input->x, dim->axis=None, *, keepdim->keep_dims=False, extra->!=0)"));
  EXPECT_EQ(f.params[1].name, "dim");
  EXPECT_TRUE(f.params[1].default_value->is_none());
  EXPECT_TRUE(f.params[2].keyword_only);
  EXPECT_EQ(f.params[3].binds, ApiParam::Binds::kUnsupported);
  EXPECT_EQ(f.params[3].default_value->as_int(), 0);

  ParsedForm c = ParseApiForm(GetOp("concat"), Function("cat(tensors->xs..., axis=-1)"));
  EXPECT_EQ(c.params[0].binds, ApiParam::Binds::kInputs);
  EXPECT_EQ(c.params[1].default_value->as_int(), -1);
}

TEST(OpApiTest, APrimitiveMayNameItsModule) {
  const OpDef& op = GetOp("reduce_mean");
  ParsedForm form = ParseApiForm(op, Primitive("math_ops.ReduceMean|Mean(keep_dims=False)(x, axis=())"));
  EXPECT_EQ(form.module, "math_ops");
  EXPECT_EQ(form.names, (std::vector<std::string>{"ReduceMean", "Mean"}));
  EXPECT_EQ(ParseApiForm(op, Primitive("ReduceMean(keep_dims=False)(x, axis=())")).module, "");
  EXPECT_THROW(ParseApiForm(op, Primitive("maths_ops.ReduceMean(keep_dims=False)(x, axis=())")), ValueError);
  EXPECT_THROW(ParseApiForm(op, Function("math_ops.mean(x)")), ValueError);  // functions have no module
}

TEST(OpApiTest, StarParametersTakeTheRemainingPositionalArguments) {
  const OpDef& op = GetOp("reshape");
  ParsedForm m = ParseApiForm(op, Method("reshape(self->x, *shape)"));
  ASSERT_EQ(m.params.size(), 2u);
  EXPECT_TRUE(m.params[1].varargs);
  EXPECT_FALSE(m.params[1].keyword_only);
  EXPECT_FALSE(m.params[1].default_value.has_value());
  EXPECT_EQ(m.params[1].binds, ApiParam::Binds::kAttr);
  const OpDef& mean = GetOp("reduce_mean");
  ParsedForm f = ParseApiForm(mean, Function("mean(x, *dims->axis, keep_dims=False)"));
  EXPECT_TRUE(f.params[1].varargs);
  EXPECT_TRUE(f.params[2].keyword_only);                                              // after *dims, as in Python
  EXPECT_THROW(ParseApiForm(op, Method("reshape(self->x, *shape=())")), ValueError);  // no default
  EXPECT_THROW(ParseApiForm(op, Method("reshape(self->x, *x)")), ValueError);         // an input
  EXPECT_THROW(ParseApiForm(mean, Function("mean(x, *dims->axis, *, keep_dims=False)")), ValueError);
  // Into a variadic input (meshgrid(*inputs)), never a single one.
  ParsedForm g = ParseApiForm(GetOp("meshgrid"), Function("meshgrid(*inputs->xs..., indexing='xy')"));
  EXPECT_TRUE(g.params[0].varargs);
  EXPECT_EQ(g.params[0].binds, ApiParam::Binds::kInputs);
  EXPECT_TRUE(g.params[1].keyword_only);
  EXPECT_THROW(ParseApiForm(GetOp("meshgrid"), Function("meshgrid(*inputs->xs...=(), indexing='xy')")), ValueError);
}

TEST(OpApiTest, MalformedSignaturesAreRejected) {
  const OpDef& op = GetOp("reduce_mean");
  EXPECT_THROW(ParseApiForm(op, Function("mean(input->nothing)")), ValueError);           // not an input or attribute
  EXPECT_THROW(ParseApiForm(op, Function("mean(x, axis=None, keep_dims)")), ValueError);  // default order
  EXPECT_THROW(ParseApiForm(op, Function("mean(x, x)")), ValueError);
  EXPECT_THROW(ParseApiForm(op, Function("mean(x")), ValueError);
  EXPECT_THROW(ParseApiForm(op, Function("mean(x, axis=oops)")), ValueError);
  EXPECT_THROW(ParseApiForm(op, Function("mean(x, extra->!)")), ValueError);  // unsupported needs a default
  EXPECT_THROW(ParseApiForm(op, Method("mean(axis)")), ValueError);           // a method starts with the Tensor
  EXPECT_THROW(ParseApiForm(op, Primitive("ReduceMean(x)(x)")), ValueError);  // constructors take attributes
  EXPECT_THROW(ParseApiForm(op, Function("mean(axis)")), ValueError);         // input x not given
  EXPECT_THROW(ParseApiForm(op, Function("mean(x, a->axis, b->axis=0)")), ValueError);  // axis given twice
  EXPECT_THROW(ParseApiForm(op, Primitive("ReduceMean(axis=())(x, axis=())")), ValueError);
  const OpDef& assign = GetOp("assign");
  EXPECT_EQ(ParseApiForm(assign, Function("assign(variable, value) -> variable")).returns,
            std::vector<std::string>{"variable"});
  EXPECT_THROW(ParseApiForm(assign, Function("assign(variable, value) -> other")), ValueError);
  EXPECT_THROW(ParseApiForm(assign, Function("assign(variable, value) -> (variable")), ValueError);
}

TEST(OpApiTest, CheckAttrsParsesOnlyWhatIsGiven) {
  const OpDef& op = GetOp("reduce_mean");
  Dict parsed = CheckAttrs(op, Dict{{"axis", Value(1)}});
  EXPECT_EQ(parsed.size(), 1u);
  EXPECT_EQ(parsed.Find("axis")->repr(), Ints({1}).repr());
  EXPECT_THROW(CheckAttrs(op, Dict{{"keep_dims", Value(1)}}), TypeError);
  EXPECT_THROW(CheckAttrs(op, Dict{{"keepdims", Value(true)}}), TypeError);
}

// The generated msrt/ops.h: one typed function per op.
TEST(PublicOpApiTest, GeneratedFunctionsCallTheOps) {
  const float data[] = {-1, 2, 3, -4};
  Tensor x = Tensor::FromHost(data, sizeof data, {2, 2}, DType::kFloat32);
  Tensor y = ops::reduce_sum(ops::relu(x), {0}, /*keep_dims=*/true);
  y.Sync();
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_FLOAT_EQ(y.data<float>()[0], 3);
  EXPECT_FLOAT_EQ(y.data<float>()[1], 2);
  Tensor z = ops::cast(ops::transpose(x, {1, 0}), "int32");
  z.Sync();
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_EQ(z.data<int32_t>()[1], 3);
  ops::Outputs parts = ops::split(x, /*output_num=*/2);
  EXPECT_EQ(parts.size(), 2u);
  EXPECT_THROW(
      {
        Tensor one = parts;  // two outputs do not make one Tensor
        (void)one;
      },
      ValueError);
  EXPECT_THROW(ops::reshape(x, {3}), ValueError);
  EXPECT_THROW(ops::reduce_sum(x, {5}), ValueError);
}

}  // namespace
}  // namespace msrt::ops
