// MindSpore's checkpoint format (src/io/mindspore_checkpoint.cc). Files are
// also assembled here byte by byte from the protobuf wire format, so the
// reader is checked against the format, not only against our own writer.
#include "io/mindspore_checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <string>

#include "core/file_io.h"
#include "msrt/core/errors.h"

namespace msrt::io {
namespace {

// --- protobuf wire format, by hand -------------------------------------------------------------------
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
  return out;
}
std::string Field(int number, std::string_view bytes) {  // length-delimited
  return Varint((static_cast<uint64_t>(number) << 3) | 2) + Varint(bytes.size()) + std::string(bytes);
}
std::string Tensor(const std::vector<int64_t>& dims, std::string_view type, std::string_view content) {
  std::string out;
  for (int64_t d : dims) out += Varint(1 << 3) + Varint(static_cast<uint64_t>(d));  // int64, unpacked
  return out + Field(2, type) + Field(3, content);
}
std::string Record(std::string_view tag, const std::string& tensor) {
  return Field(1, Field(1, tag) + Field(2, tensor));
}
std::string WithCrc(std::string body) {
  uint32_t crc = Crc32Ieee(body.data(), body.size());
  body += "crc_num";
  body.append(6, '\0');
  for (int shift = 24; shift >= 0; shift -= 8) body += static_cast<char>((crc >> shift) & 0xFF);
  return body;
}
template <typename T>
std::string Bytes(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

std::string DecodeError(const std::string& bytes) {
  try {
    DecodeMindSporeCheckpoint(bytes, "bad.ckpt");
  } catch (const ValueError& e) {
    return e.what();
  }
  return "no error";
}

// --- writing -------------------------------------------------------------------------------------------
TEST(MindSporeCheckpoint, WritesTheBytesMindSporeWrites) {
  std::string w = Bytes<float>({1, 2, 3, 4, 5, 6});
  std::string step = Bytes<int64_t>({7});
  std::vector<CheckpointTensorView> tensors = {{"fc.weight", DType::kFloat32, {2, 3}, w},
                                               {"step", DType::kInt64, {}, step}};
  // A scalar has no dims, as current MindSpore writes it.
  std::string expected = Record("fc.weight", Tensor({2, 3}, "Float32", w)) + Record("step", Tensor({}, "Int64", step));
  EXPECT_EQ(EncodeMindSporeCheckpoint(tensors, false), expected);
  EXPECT_EQ(EncodeMindSporeCheckpoint(tensors, true), WithCrc(expected));
}

TEST(MindSporeCheckpoint, RoundTripsEveryDType) {
  for (int code = 0; code < kDTypeCount; ++code) {
    auto dtype = static_cast<DType>(code);
    size_t stored = StoredItemSize(dtype);
    std::string data(6 * stored, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(dtype == DType::kBool ? i % 2 : i * 7 + 1);
    if (dtype == DType::kBFloat16) data = Bytes<float>({1.5f, -2.0f, 0.0f, 3.0f, 65536.0f, -0.125f});
    for (bool crc : {false, true}) {
      MindSporeCheckpoint back = DecodeMindSporeCheckpoint(EncodeMindSporeCheckpoint({{"t", dtype, {2, 3}, data}}, crc),
                                                           "x.ckpt");
      ASSERT_EQ(back.entries.size(), 1u) << DTypeName(dtype);
      EXPECT_EQ(back.has_crc, crc);
      EXPECT_EQ(back.entries[0].dtype, dtype);
      EXPECT_EQ(back.entries[0].shape, (std::vector<int64_t>{2, 3}));
      EXPECT_EQ(back.entries[0].data, data) << DTypeName(dtype);
    }
  }
}

TEST(MindSporeCheckpoint, ScalarsAndEmptyTensors) {
  std::string one = Bytes<double>({2.5});
  auto back = DecodeMindSporeCheckpoint(EncodeMindSporeCheckpoint({{"s", DType::kFloat64, {}, one},
                                                                   {"e", DType::kInt32, {0}, ""},
                                                                   {"m", DType::kFloat32, {0, 4}, ""}},
                                                                  true),
                                        "x.ckpt");
  ASSERT_EQ(back.entries.size(), 3u);
  EXPECT_TRUE(back.entries[0].shape.empty());
  EXPECT_EQ(back.entries[0].data, one);
  EXPECT_EQ(back.entries[1].shape, (std::vector<int64_t>{0}));
  EXPECT_EQ(back.entries[2].shape, (std::vector<int64_t>{0, 4}));
}

TEST(MindSporeCheckpoint, OlderScalarsWithDimsZeroAreScalars) {
  std::string one = Bytes<int32_t>({5});
  auto back = DecodeMindSporeCheckpoint(Record("s", Tensor({0}, "Int32", one)) + Record("e", Tensor({0}, "Int32", "")),
                                        "x.ckpt");
  EXPECT_TRUE(back.entries[0].shape.empty());
  EXPECT_EQ(back.entries[0].data, one);
  EXPECT_EQ(back.entries[1].shape, (std::vector<int64_t>{0}));
  EXPECT_NE(DecodeError(Record("s", Tensor({0}, "Int32", Bytes<int32_t>({1, 2})))).find("should hold 0 bytes"),
            std::string::npos);
}

TEST(MindSporeCheckpoint, LargeTensorsAreSlicedAndJoined) {
  std::string data = Bytes<int32_t>({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  std::vector<CheckpointTensorView> tensors = {{"big", DType::kInt32, {10}, data},
                                               {"after", DType::kInt32, {1}, data.substr(0, 4)}};
  std::string sliced = EncodeMindSporeCheckpoint(tensors, true, 12);  // three elements a record
  std::string expected;
  for (size_t offset = 0; offset < data.size(); offset += 12) {
    expected += Record("big", Tensor({10}, "Int32", data.substr(offset, 12)));
  }
  expected += Record("after", Tensor({1}, "Int32", data.substr(0, 4)));
  EXPECT_EQ(sliced, WithCrc(expected));
  auto back = DecodeMindSporeCheckpoint(sliced, "x.ckpt");
  ASSERT_EQ(back.entries.size(), 2u);
  EXPECT_EQ(back.entries[0].data, data);
  // Slices that disagree are corruption.
  std::string bad = Record("big", Tensor({2}, "Int32", data.substr(0, 4))) +
                    Record("big", Tensor({3}, "Int32", data.substr(4, 4)));
  EXPECT_NE(DecodeError(bad).find("slices of tensor 'big' disagree"), std::string::npos);
}

TEST(MindSporeCheckpoint, BFloat16InBothLayouts) {
  // Current MindSpore: 2-byte bfloat16; older: float32 values. Both read as float32 values.
  std::string native = Bytes<uint16_t>({0x3FC0, 0xC000});  // 1.5, -2
  std::string widened = Bytes<float>({1.5f, -2.0f});
  for (const std::string& content : {native, widened}) {
    auto back = DecodeMindSporeCheckpoint(Record("b", Tensor({2}, "BFloat16", content)), "x.ckpt");
    EXPECT_EQ(back.entries[0].dtype, DType::kBFloat16);
    EXPECT_EQ(back.entries[0].data, widened);
  }
  EXPECT_EQ(EncodeMindSporeCheckpoint({{"b", DType::kBFloat16, {2}, widened}}, false),
            Record("b", Tensor({2}, "BFloat16", native)));
}

TEST(MindSporeCheckpoint, StringsAreUtf32) {
  std::string text = Bytes<uint32_t>({'e', 'p', 0xE9, 0x1F600, 0, 0});  // NUL padding is dropped
  auto back = DecodeMindSporeCheckpoint(Record("name", Tensor({0}, "str", text)), "x.ckpt");
  ASSERT_TRUE(back.entries[0].is_string);
  EXPECT_EQ(back.entries[0].text, "ep\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_NE(DecodeError(Record("s", Tensor({0}, "str", "abc"))).find("multiple of 4"), std::string::npos);
  // Written as MindSpore writes them: dims [0], "str", NumPy's UTF-32 (one NUL for "").
  CheckpointTensorView text_view{"name", DType::kUInt8, {}, "ep\xC3\xA9\xF0\x9F\x98\x80"};
  text_view.is_string = true;
  CheckpointTensorView empty_view{"empty", DType::kUInt8, {}, ""};
  empty_view.is_string = true;
  EXPECT_EQ(EncodeMindSporeCheckpoint({text_view, empty_view}, false),
            Record("name", Tensor({0}, "str", Bytes<uint32_t>({'e', 'p', 0xE9, 0x1F600}))) +
                Record("empty", Tensor({0}, "str", Bytes<uint32_t>({0}))));
  auto round = DecodeMindSporeCheckpoint(EncodeMindSporeCheckpoint({text_view, empty_view}, true), "x.ckpt");
  EXPECT_EQ(round.entries[0].text, "ep\xC3\xA9\xF0\x9F\x98\x80");
  EXPECT_EQ(round.entries[1].text, "");
  CheckpointTensorView bad_view{"bad", DType::kUInt8, {}, "\xff"};
  bad_view.is_string = true;
  EXPECT_THROW(EncodeMindSporeCheckpoint({bad_view}, true), ValueError);
  EXPECT_THROW(EncodeCheckpoint({text_view}), ValueError);  // msrt's format holds no strings
  EXPECT_NE(DecodeError(Record("s", Tensor({0}, "str", Bytes<uint32_t>({0xD800})))).find("invalid code point"),
            std::string::npos);
}

TEST(MindSporeCheckpoint, DetectsTheFormat) {
  EXPECT_EQ(DetectCheckpointFormat(EncodeCheckpoint({})), CheckpointFormat::kMsrt);
  EXPECT_EQ(DetectCheckpointFormat(EncodeMindSporeCheckpoint({}, true)), CheckpointFormat::kMindSpore);
  EXPECT_EQ(DecodeMindSporeCheckpoint(EncodeMindSporeCheckpoint({}, true), "x.ckpt").entries.size(), 0u);
  EXPECT_NE(DecodeError("").find("'bad.ckpt' is empty"), std::string::npos);
}

// --- faults --------------------------------------------------------------------------------------------
TEST(MindSporeCheckpoint, RefusesWhatIsNotACheckpoint) {
  EXPECT_NE(DecodeError("PK\x03\x04 a zip file").find("'bad.ckpt' is not a checkpoint"), std::string::npos);
  EXPECT_NE(DecodeError("\n\x03"
                        "abc")
                .find("not a valid Checkpoint.Value"),
            std::string::npos);
  std::string good = Record("a", Tensor({1}, "Int8", "\x01"));
  EXPECT_NE(DecodeError(good + "\x10\x01").find("holds field 2"), std::string::npos);
}

TEST(MindSporeCheckpoint, ContentMustMatchDimsAndType) {
  EXPECT_NE(DecodeError(Record("w", Tensor({2, 3}, "Float32", std::string(20, '\0'))))
                .find("should hold 24 bytes, but its content has 20"),
            std::string::npos);
  EXPECT_NE(DecodeError(Record("w", Tensor({-1}, "Float32", ""))).find("negative dimension"), std::string::npos);
  EXPECT_NE(DecodeError(Record("w", Tensor({int64_t{1} << 62, int64_t{1} << 62}, "Float32", ""))).find("overflows"),
            std::string::npos);
  EXPECT_NE(DecodeError(Record("w", Tensor({1}, "Bool", "\x02"))).find("booleans are 0 or 1"), std::string::npos);
  EXPECT_NE(DecodeError(Record("w", Tensor(std::vector<int64_t>(65, 1), "Int8", "\x01"))).find("65 dimensions"),
            std::string::npos);
}

TEST(MindSporeCheckpoint, ReadsTheUnsignedAndComplexTypeNames) {
  const std::pair<const char*, DType> types[] = {{"UInt16", DType::kUInt16},
                                                 {"UInt32", DType::kUInt32},
                                                 {"UInt64", DType::kUInt64},
                                                 {"Complex64", DType::kComplex64},
                                                 {"Complex128", DType::kComplex128}};
  for (const auto& [name, dtype] : types) {
    std::string data(2 * ItemSize(dtype), '\x05');
    MindSporeCheckpoint back = DecodeMindSporeCheckpoint(Record("q", Tensor({2}, name, data)), "x.ckpt");
    ASSERT_EQ(back.entries.size(), 1u) << name;
    EXPECT_EQ(back.entries[0].dtype, dtype);
    EXPECT_EQ(back.entries[0].data, data);
  }
}

TEST(MindSporeCheckpoint, UnknownAndUnsupportedTypesAreNamed) {
  std::string error = DecodeError(Record("q", Tensor({1}, "Int4", "\0")));
  EXPECT_NE(error.find("'bad.ckpt' holds 'q' of tensor_type 'Int4', which msrt does not support"), std::string::npos);
  std::string map = Field(1, Field(1, "m") + Field(3, Field(1, Tensor({1}, "Int64", std::string(8, '\0')))));
  EXPECT_NE(DecodeError(map).find("MapParameter"), std::string::npos);
}

TEST(MindSporeCheckpoint, MissingRequiredFieldsAndDuplicates) {
  std::string no_type = Field(1, Field(1, "w") + Field(2, Field(3, "")));
  EXPECT_NE(DecodeError(no_type).find("lacks required fields"), std::string::npos);
  std::string no_tensor = Field(1, Field(1, "w"));
  EXPECT_NE(DecodeError(no_tensor).find("holds no tensor"), std::string::npos);
  std::string a = Record("a", Tensor({1}, "Int8", "\x01"));
  std::string b = Record("b", Tensor({1}, "Int8", "\x01"));
  EXPECT_NE(DecodeError(a + b + a).find("'a' appears twice"), std::string::npos);
  EXPECT_NE(DecodeError(Record("\xff", Tensor({1}, "Int8", "\x01"))).find("not UTF-8"), std::string::npos);
}

TEST(MindSporeCheckpoint, EveryBitFlipOfAFileWithCrcIsDetected) {
  std::string w = Bytes<float>({1, 2, 3});
  std::string bytes = EncodeMindSporeCheckpoint({{"w", DType::kFloat32, {3}, w},
                                                 {"f", DType::kBool, {2}, std::string_view("\x01\x00", 2)}},
                                                true);
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << bit));
      EXPECT_THROW(DecodeMindSporeCheckpoint(corrupt, "x.ckpt"), ValueError) << "byte " << i << " bit " << bit;
    }
  }
}

// A cut-off file raises, except a cut exactly after a record, which leaves a
// shorter valid file without the trailer (MindSpore's format cannot tell).
TEST(MindSporeCheckpoint, TruncationRaisesOrLeavesAPrefixWithoutCrc) {
  std::string w = Bytes<float>({1, 2, 3});
  std::string bytes = EncodeMindSporeCheckpoint({{"w", DType::kFloat32, {3}, w},
                                                 {"v", DType::kFloat32, {3}, w},
                                                 {"f", DType::kBool, {2}, std::string_view("\x01\x00", 2)}},
                                                true);
  size_t accepted = 0;
  for (size_t n = 0; n < bytes.size(); ++n) {
    try {
      MindSporeCheckpoint back = DecodeMindSporeCheckpoint(bytes.substr(0, n), "x.ckpt");
      EXPECT_FALSE(back.has_crc);
      EXPECT_LT(back.entries.size(), 3u + (n + 17 == bytes.size() ? 1u : 0u));
      ++accepted;
    } catch (const ValueError& e) {
      EXPECT_NE(std::string(e.what()).find("x.ckpt"), std::string::npos);
    }
  }
  EXPECT_EQ(accepted, 3u);  // after each of the 3 records
}

}  // namespace
}  // namespace msrt::io
