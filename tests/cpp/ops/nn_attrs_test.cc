// The NN ops' attributes: parsed once into one canonical form (AttrType),
// related attributes checked together (OpDef::attrs_check), and MindSpore
// parameters the op does not take bound `p->~` in the Python forms.
#include <gtest/gtest.h>

#include <string>

#include "msrt/core/errors.h"
#include "ops/op_def.h"
#include "ops/op_test_util.h"

namespace msrt::ops {
namespace {

Value Ints(std::initializer_list<int64_t> values) {
  List items;
  for (int64_t v : values) items.emplace_back(v);
  return Value(std::move(items));
}

TEST(NnAttrs, ConvAttributesTakeOneCanonicalForm) {
  Dict attrs = NormalizeAttrs(GetOp("conv2d"), Dict{{"stride", Value(2)},
                                                    {"dilation", Ints({1, 1, 3, 2})},
                                                    {"pad_mode", Value("PAD")},
                                                    {"pad", Value(1)}});
  EXPECT_EQ(AttrInts(attrs, "stride"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(AttrInts(attrs, "dilation"), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(AttrString(attrs, "pad_mode"), "pad");
  EXPECT_EQ(AttrInts(attrs, "pad"), (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(AttrString(attrs, "data_format"), "NCHW");
  EXPECT_EQ(AttrInt(attrs, "group"), 1);
}

TEST(NnAttrs, Conv3dAttributesTakeOneCanonicalForm) {
  Dict attrs = NormalizeAttrs(GetOp("conv3d"), Dict{{"stride", Ints({1, 1, 2, 1, 3})},
                                                    {"dilation", Value(2)},
                                                    {"pad_mode", Value("Pad")},
                                                    {"pad", Value(1)}});
  EXPECT_EQ(AttrInts(attrs, "stride"), (std::vector<int64_t>{2, 1, 3}));
  EXPECT_EQ(AttrInts(attrs, "dilation"), (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(AttrInts(attrs, "pad"), (std::vector<int64_t>{1, 1, 1, 1, 1, 1}));
  EXPECT_EQ(AttrString(attrs, "data_format"), "NCDHW");
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(GetOp("conv3d"), Dict{{"data_format", Value("NCHW")}});
            }).find("[conv3d] attribute 'data_format'"),
            std::string::npos);
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(GetOp("max_pool3d"),
                             Dict{{"kernel_size", Value(2)}, {"pad_mode", Value("pad")}, {"pad", Value(2)}});
            }).find("[max_pool3d] each 'pad' must be smaller than the window"),
            std::string::npos);
}

TEST(NnAttrs, BadValuesNameTheOpAndAttribute) {
  const OpDef& conv = GetOp("conv2d");
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(conv, Dict{{"pad_mode", Value("pad")}, {"pad", Ints({1, 2})}});
            }).find("[conv2d] attribute 'pad' must be a non-negative int or a list of 4"),
            std::string::npos);
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(conv, Dict{{"pad_mode", Value("full")}});
            }).find("[conv2d] 'pad_mode' must be one of 'same', 'valid' or 'pad'; but got 'full'"),
            std::string::npos);
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(conv, Dict{{"data_format", Value("NCWH")}});
            }).find("'data_format' must be 'NCHW' or 'NHWC'; but got 'NCWH'"),
            std::string::npos);
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(GetOp("avg_pool2d"), Dict{{"pad_mode", Value("Pad")}});
            }).find("[avg_pool2d] 'pad_mode' must be one of 'same' or 'valid'; but got 'pad'"),
            std::string::npos);
  EXPECT_THROW(NormalizeAttrs(GetOp("matmul"), Dict{{"transpose_a", Value(1)}}), TypeError);
  EXPECT_THROW(NormalizeAttrs(GetOp("dropout"), Dict{{"keep_prob", Value(0.0)}}), ValueError);
  EXPECT_THROW(NormalizeAttrs(GetOp("batch_norm"), Dict{{"momentum", Value(2.0)}}), ValueError);
}

TEST(NnAttrs, PaddingNeedsPadModeWhereverBothAreGiven) {
  const OpDef& conv = GetOp("conv2d");
  // At a call the default pad_mode ('same') meets the padding.
  EXPECT_NE(Message<ValueError>([&] {
              NormalizeAttrs(conv, Dict{{"pad", Value(1)}});
            }).find("'pad' must be zero when 'pad_mode' is not 'pad'"),
            std::string::npos);
  // A primitive's constructor checks what it is given: padding alone is fine...
  EXPECT_EQ(AttrInts(CheckAttrs(conv, Dict{{"pad", Value(1)}}), "pad"), (std::vector<int64_t>{1, 1, 1, 1}));
  // ...padding with a pad_mode that is not 'pad' is not.
  EXPECT_THROW(CheckAttrs(conv, Dict{{"pad", Value(1)}, {"pad_mode", Value("valid")}}), ValueError);
  EXPECT_NO_THROW(CheckAttrs(conv, Dict{{"pad", Value(1)}, {"pad_mode", Value("Pad")}}));
}

TEST(NnAttrs, RecordedParametersBindNoInputOrAttribute) {
  const OpDef& conv = GetOp("conv2d");
  ParsedForm form = ParseApiForm(conv,
                                 Primitive("Conv2D(out_channel->~, kernel_size->~, mode->~=1, pad=0)(x, weight)"));
  ASSERT_EQ(form.init.size(), 4u);
  EXPECT_EQ(form.init[0].binds, ApiParam::Binds::kRecorded);
  EXPECT_FALSE(form.init[0].default_value.has_value());  // may be required, unlike p->!
  EXPECT_EQ(form.init[2].binds, ApiParam::Binds::kRecorded);
  EXPECT_EQ(form.init[3].binds, ApiParam::Binds::kAttr);
  EXPECT_THROW(ParseApiForm(conv, Primitive("Conv2D(out_channel->!)(x, weight)")), ValueError);
  // The declared Conv2D form records out_channel, kernel_size and mode.
  bool found = false;
  for (const ParsedForm& f : ApiForms(conv)) {
    if (f.names[0] != "Conv2D") continue;
    found = true;
    EXPECT_EQ(f.init[0].name, "out_channel");
    EXPECT_EQ(f.init[0].binds, ApiParam::Binds::kRecorded);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace msrt::ops
