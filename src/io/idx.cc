#include "io/idx.h"

#include <cstdio>

#include "msrt/core/errors.h"

namespace msrt::io {
namespace {

constexpr uint32_t kImageMagic = 2051;  // 0x00000803: unsigned bytes, 3 dimensions
constexpr uint32_t kLabelMagic = 2049;  // 0x00000801: unsigned bytes, 1 dimension
constexpr uint64_t kSide = 28;

uint32_t BigEndian32(std::string_view bytes, size_t at) {
  auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])); };
  return (b(0) << 24) | (b(1) << 16) | (b(2) << 8) | b(3);
}

std::string Hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%08x", v);
  return text;
}

}  // namespace

MnistIdx CheckMnistIdx(std::string_view bytes, std::string_view what, MnistKind kind) {
  const bool images = kind == MnistKind::kImages;
  const std::string_view noun = images ? "image" : "label";
  const size_t header = images ? 16 : 8;
  auto fail = [&](const std::string& why) -> ValueError {
    return ValueError(StrCat("MnistDataset: '", what, "' ", why, "."));
  };
  if (bytes.size() < header) {
    throw fail(
        StrCat("is truncated: ", bytes.size(), " bytes, shorter than the ", header, "-byte IDX ", noun, " header"));
  }
  uint32_t magic = BigEndian32(bytes, 0);
  uint32_t expected = images ? kImageMagic : kLabelMagic;
  if (magic != expected) {
    uint32_t type_code = (magic >> 8) & 0xFF, dims = magic & 0xFF;
    std::string why;
    if (magic == kImageMagic || magic == kLabelMagic) {
      why = StrCat("bad magic number ", magic, ", that of an MNIST ", magic == kImageMagic ? "image" : "label",
                   " file; expected ", expected);
    } else if (magic >> 16 == 0 && type_code == 0x08) {
      why = StrCat("wrong dimension count: its header declares ", dims, " dimension(s), an MNIST ", noun, " file has ",
                   images ? 3 : 1);
    } else {
      why = StrCat("bad magic number ", magic, " (", Hex(magic), "), expected ", expected, " (", Hex(expected), ")");
    }
    throw fail(StrCat("is not an MNIST ", noun, " file: ", why));
  }
  MnistIdx out;
  out.count = BigEndian32(bytes, 4);
  out.data_offset = header;
  uint64_t per_item = 1;
  if (images) {
    out.rows = BigEndian32(bytes, 8);
    out.cols = BigEndian32(bytes, 12);
    if (out.rows != kSide || out.cols != kSide) {
      throw fail(StrCat("holds images of shape (", out.rows, ", ", out.cols, "), MNIST images are (28, 28)"));
    }
    per_item = kSide * kSide;
  }
  uint64_t declared = out.count * per_item;  // < 2^32 * 784: no overflow
  uint64_t actual = bytes.size() - header;
  if (actual != declared) {
    std::string problem = actual < declared ? "truncated" : "longer than its header says";
    if (images) {
      throw fail(StrCat("is ", problem, ": its header declares ", out.count, " images of ", out.rows, "x", out.cols,
                        " (", declared, " bytes of pixels), but it holds ", actual, " bytes after the header"));
    }
    throw fail(StrCat("is ", problem, ": its header declares ", out.count, " labels, but it holds ", actual,
                      " bytes after the header"));
  }
  return out;
}

}  // namespace msrt::io
