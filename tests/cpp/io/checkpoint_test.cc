#include "io/checkpoint.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "io/idx.h"
#include "msrt/core/errors.h"

namespace msrt::io {
namespace {

std::string Sample() {
  float w[6] = {1, 2, 3, 4, 5, 6};
  char flags[2] = {1, 0};
  std::vector<CheckpointTensorView> tensors = {
      {"w", DType::kFloat32, {2, 3}, std::string_view(reinterpret_cast<const char*>(w), sizeof w)},
      {"flag", DType::kBool, {2}, std::string_view(flags, 2)},
      {"empty", DType::kInt64, {0, 4}, std::string_view()},
  };
  return EncodeCheckpoint(tensors);
}

TEST(Checkpoint, RoundTrip) {
  std::string bytes = Sample();
  auto tensors = DecodeCheckpoint(bytes, "x.ckpt");
  ASSERT_EQ(tensors.size(), 3u);
  EXPECT_EQ(tensors[0].name, "w");
  EXPECT_EQ(tensors[0].shape, (std::vector<int64_t>{2, 3}));
  float w[6];
  std::memcpy(w, bytes.data() + tensors[0].data_offset, sizeof w);
  EXPECT_EQ(w[5], 6.0f);
  EXPECT_EQ(tensors[1].dtype, DType::kBool);
  EXPECT_EQ(tensors[2].data_size, 0u);
}

// Every single-bit flip anywhere in the file is detected: never a wrong value.
TEST(Checkpoint, EveryBitFlipIsDetected) {
  std::string bytes = Sample();
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string corrupt = bytes;
      corrupt[i] = static_cast<char>(corrupt[i] ^ (1 << bit));
      EXPECT_THROW(DecodeCheckpoint(corrupt, "x.ckpt"), ValueError) << "byte " << i << " bit " << bit;
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) EXPECT_THROW(DecodeCheckpoint(bytes.substr(0, n), "x.ckpt"), ValueError);
}

TEST(Checkpoint, RejectsInvalidBooleansAndOverflowingShapes) {
  char bad[1] = {2};
  std::string bytes = EncodeCheckpoint({{"b", DType::kBool, {1}, std::string_view(bad, 1)}});
  try {
    DecodeCheckpoint(bytes, "b.ckpt");
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("booleans are 0 or 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("b.ckpt"), std::string::npos);
  }
  EXPECT_THROW(EncodeCheckpoint({{"x", DType::kFloat32, {INT64_MAX, 4}, std::string_view()}}), ValueError);
  EXPECT_THROW(EncodeCheckpoint({{"x", DType::kFloat32, {1}, std::string_view()}}), ValueError);
  EXPECT_THROW(EncodeCheckpoint({{"x", DType::kFloat32, {}, std::string_view("abcd", 4)},
                                 {"x", DType::kFloat32, {}, std::string_view("abcd", 4)}}),
               ValueError);
}

TEST(MnistIdx, ChecksTheHeader) {
  std::string labels = std::string("\0\0\x08\x01\0\0\0\x02", 8) + "\x03\x04";
  EXPECT_EQ(CheckMnistIdx(labels, "l", MnistKind::kLabels).count, 2u);
  EXPECT_THROW(CheckMnistIdx(labels, "l", MnistKind::kImages), ValueError);
  EXPECT_THROW(CheckMnistIdx(labels.substr(0, 9), "l", MnistKind::kLabels), ValueError);
  std::string images = std::string("\0\0\x08\x03\xff\xff\xff\xff\0\0\0\x1c\0\0\0\x1c", 16);
  EXPECT_THROW(CheckMnistIdx(images, "i", MnistKind::kImages), ValueError);  // 2^32-1 images declared
}

}  // namespace
}  // namespace msrt::io
