#include "io/image.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>
#include <zlib.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "msrt/core/errors.h"

namespace msrt::io {
namespace {

// ------------------------------------------------------------ a PNG writer
// Written by hand (zlib for the deflate stream) so that each colour type and
// bit depth, and broken files, can be made exactly.

void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xFF);
}

void PutChunk(std::string& out, const char* type, const std::string& data) {
  PutBigEndian32(out, static_cast<uint32_t>(data.size()));
  std::string body = std::string(type, 4) + data;
  out += body;
  PutBigEndian32(out, static_cast<uint32_t>(
                          crc32(0, reinterpret_cast<const Bytef*>(body.data()), static_cast<uInt>(body.size()))));
}

// A non-interlaced PNG whose scanlines (each without its filter byte) are `rows`.
std::string MakePng(uint32_t width, uint32_t height, int bit_depth, int color_type,
                    const std::vector<std::string>& rows, const std::string& palette = {},
                    const std::string& transparency = {}) {
  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  PutBigEndian32(header, width);
  PutBigEndian32(header, height);
  header += static_cast<char>(bit_depth);
  header += static_cast<char>(color_type);
  header += std::string(3, '\0');  // deflate, adaptive filtering, no interlace
  PutChunk(out, "IHDR", header);
  if (!palette.empty()) PutChunk(out, "PLTE", palette);
  if (!transparency.empty()) PutChunk(out, "tRNS", transparency);
  std::string raw;
  for (const std::string& row : rows) raw += '\0' + row;  // filter type 0 (none)
  uLongf size = compressBound(static_cast<uLong>(raw.size()));
  std::string compressed(size, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(compressed.data()), &size, reinterpret_cast<const Bytef*>(raw.data()),
                     static_cast<uLong>(raw.size())),
            Z_OK);
  compressed.resize(size);
  PutChunk(out, "IDAT", compressed);
  PutChunk(out, "IEND", "");
  return out;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string out;
  for (int v : values) out += static_cast<char>(v);
  return out;
}

std::vector<uint8_t> Rgb(std::initializer_list<int> values) { return {values.begin(), values.end()}; }

TEST(ImageTest, DetectsFormatsByMagicBytes) {
  EXPECT_EQ(DetectImageFormat(Bytes({0xFF, 0xD8, 0xFF, 0xE0})), ImageFormat::kJpeg);
  EXPECT_EQ(DetectImageFormat(MakePng(1, 1, 8, 0, {Bytes({7})})), ImageFormat::kPng);
  EXPECT_EQ(DetectImageFormat("GIF89a"), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(Bytes({0xFF, 0xD8})), ImageFormat::kUnknown);
  EXPECT_EQ(DetectImageFormat(""), ImageFormat::kUnknown);
}

TEST(ImageTest, DecodesRgbPngExactly) {
  std::string png = MakePng(3, 2, 8, 2,
                            {Bytes({1, 2, 3, 4, 5, 6, 7, 8, 9}), Bytes({10, 11, 12, 13, 14, 15, 16, 17, 255})});
  DecodedImage image = DecodeImage(png);
  EXPECT_EQ(image.height, 2);
  EXPECT_EQ(image.width, 3);
  EXPECT_EQ(image.pixels, Rgb({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 255}));
  ImageInfo info = ReadImageInfo(png);
  EXPECT_EQ(info.format, ImageFormat::kPng);
  EXPECT_EQ(info.height, 2);
  EXPECT_EQ(info.width, 3);
}

TEST(ImageTest, ExpandsGrayscaleAndDropsAlpha) {
  DecodedImage gray = DecodeImage(MakePng(2, 1, 8, 0, {Bytes({0, 200})}));
  EXPECT_EQ(gray.pixels, Rgb({0, 0, 0, 200, 200, 200}));
  // 1-bit grayscale: 0b10100000 over 3 pixels.
  DecodedImage bits = DecodeImage(MakePng(3, 1, 1, 0, {Bytes({0xA0})}));
  EXPECT_EQ(bits.pixels, Rgb({255, 255, 255, 0, 0, 0, 255, 255, 255}));
  DecodedImage gray_alpha = DecodeImage(MakePng(2, 1, 8, 4, {Bytes({50, 0, 60, 128})}));
  EXPECT_EQ(gray_alpha.pixels, Rgb({50, 50, 50, 60, 60, 60}));
  DecodedImage rgba = DecodeImage(MakePng(2, 1, 8, 6, {Bytes({1, 2, 3, 0, 4, 5, 6, 77})}));
  EXPECT_EQ(rgba.pixels, Rgb({1, 2, 3, 4, 5, 6}));
}

TEST(ImageTest, ExpandsPalettesIgnoringTransparency) {
  std::string palette = Bytes({10, 20, 30, 40, 50, 60, 70, 80, 90});
  DecodedImage image = DecodeImage(MakePng(3, 1, 8, 3, {Bytes({2, 0, 1})}, palette, Bytes({0, 128})));
  EXPECT_EQ(image.pixels, Rgb({70, 80, 90, 10, 20, 30, 40, 50, 60}));
  // 2-bit indices: 0b01'10'00'00.
  DecodedImage packed = DecodeImage(MakePng(3, 1, 2, 3, {Bytes({0x60})}, palette));
  EXPECT_EQ(packed.pixels, Rgb({40, 50, 60, 70, 80, 90, 10, 20, 30}));
}

TEST(ImageTest, Keeps16BitSamplesHighByte) {
  DecodedImage rgb = DecodeImage(MakePng(1, 1, 16, 2, {Bytes({0x12, 0xFF, 0xAB, 0x01, 0x00, 0x80})}));
  EXPECT_EQ(rgb.pixels, Rgb({0x12, 0xAB, 0x00}));
  DecodedImage gray = DecodeImage(MakePng(1, 1, 16, 0, {Bytes({0xFE, 0xFF})}));
  EXPECT_EQ(gray.pixels, Rgb({0xFE, 0xFE, 0xFE}));
}

// ------------------------------------------------------------ JPEG

std::string MakeJpeg(int width, int height, const std::vector<uint8_t>& pixels, int pixel_format, int subsampling) {
  tjhandle handle = tjInitCompress();
  EXPECT_NE(handle, nullptr);
  unsigned char* data = nullptr;
  unsigned long size = 0;
  EXPECT_EQ(tjCompress2(handle, pixels.data(), width, 0, height, pixel_format, &data, &size, subsampling, 95, 0), 0)
      << tjGetErrorStr2(handle);
  std::string out(reinterpret_cast<const char*>(data), size);
  tjFree(data);
  tjDestroy(handle);
  return out;
}

// A smooth 16x16 gradient: JPEG keeps it within a few levels.
std::vector<uint8_t> Gradient(int width, int height) {
  std::vector<uint8_t> pixels;
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      pixels.push_back(static_cast<uint8_t>(x * 12));
      pixels.push_back(static_cast<uint8_t>(y * 10));
      pixels.push_back(static_cast<uint8_t>(100 + x + y));
    }
  }
  return pixels;
}

int MaxDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  EXPECT_EQ(a.size(), b.size());
  int most = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) most = std::max(most, std::abs(int{a[i]} - int{b[i]}));
  return most;
}

TEST(ImageTest, DecodesJpegWithinTolerance) {
  std::vector<uint8_t> source = Gradient(16, 12);
  for (int subsampling : {TJSAMP_444, TJSAMP_420}) {
    DecodedImage image = DecodeImage(MakeJpeg(16, 12, source, TJPF_RGB, subsampling));
    EXPECT_EQ(image.height, 12);
    EXPECT_EQ(image.width, 16);
    EXPECT_LE(MaxDifference(image.pixels, source), subsampling == TJSAMP_444 ? 6 : 12);
  }
  std::vector<uint8_t> gray;
  for (int i = 0; i < 8 * 8; ++i) gray.push_back(static_cast<uint8_t>(i * 3));
  DecodedImage image = DecodeImage(MakeJpeg(8, 8, gray, TJPF_GRAY, TJSAMP_GRAY));
  ASSERT_EQ(image.pixels.size(), 8u * 8 * 3);
  for (int i = 0; i < 8 * 8; ++i) {
    EXPECT_EQ(image.pixels[i * 3], image.pixels[i * 3 + 1]);
    EXPECT_EQ(image.pixels[i * 3], image.pixels[i * 3 + 2]);
    EXPECT_LE(std::abs(int{image.pixels[i * 3]} - int{gray[i]}), 4);
  }
}

TEST(ImageTest, ConvertsCmykJpegToRgb) {
  // Inverted CMYK (255 = no ink), as Adobe's encoders write it.
  std::vector<uint8_t> cmyk;
  std::vector<uint8_t> expected;
  for (int i = 0; i < 16 * 8; ++i) {
    uint8_t sample[4] = {static_cast<uint8_t>(200 + i % 8), static_cast<uint8_t>(120 + i / 16 * 4),
                         static_cast<uint8_t>(60), static_cast<uint8_t>(230)};
    cmyk.insert(cmyk.end(), sample, sample + 4);
    for (int c = 0; c < 3; ++c) expected.push_back(static_cast<uint8_t>(230 - (((255 - sample[c]) * 230) >> 8)));
  }
  DecodedImage image = DecodeImage(MakeJpeg(16, 8, cmyk, TJPF_CMYK, TJSAMP_444));
  EXPECT_EQ(image.height, 8);
  EXPECT_EQ(image.width, 16);
  EXPECT_LE(MaxDifference(image.pixels, expected), 6);
}

// ------------------------------------------------------------ bad input

void ExpectDecodeError(const std::string& bytes, const std::string& fragment) {
  try {
    DecodeImage(bytes);
    ADD_FAILURE() << "decoded " << bytes.size() << " bad bytes";
  } catch (const RuntimeError& error) {
    EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).rfind("Decode: ", 0), 0u) << error.what();
  }
}

TEST(ImageTest, RejectsUnknownFormatsNamingThem) {
  ExpectDecodeError("", "empty");
  ExpectDecodeError("hello world", "not supported");
  ExpectDecodeError("GIF89a\x01\x00\x01\x00", "a GIF image");
  ExpectDecodeError("BM\x36\x00\x00\x00", "a BMP image");
  ExpectDecodeError(std::string("RIFF\0\0\0\0WEBPVP8 ", 16), "a WebP image");
  EXPECT_THROW(ReadImageInfo("plain text"), RuntimeError);
}

TEST(ImageTest, RejectsTruncatedAndCorruptPng) {
  std::vector<std::string> rows(8, std::string(8 * 3, '\x55'));
  std::string png = MakePng(8, 8, 8, 2, rows);
  ASSERT_EQ(DecodeImage(png).pixels.size(), 8u * 8 * 3);
  for (size_t keep : {9ul, 20ul, 33ul, 45ul, png.size() - 12 - 8}) {
    ExpectDecodeError(png.substr(0, keep), "invalid PNG data");
  }
  std::string bad_crc = png;
  bad_crc[29] ^= 1;  // IHDR's CRC
  ExpectDecodeError(bad_crc, "invalid PNG data");
  std::string bad_depth = MakePng(1, 1, 7, 2, {Bytes({1, 2, 3})});
  ExpectDecodeError(bad_depth, "invalid PNG data");
  // Palette indices with no palette.
  ExpectDecodeError(MakePng(1, 1, 8, 3, {Bytes({0})}), "invalid PNG data");
  // Fewer scanlines than the header declares.
  ExpectDecodeError(MakePng(4, 4, 8, 0, {std::string(4, 'a')}), "invalid PNG data");
}

TEST(ImageTest, BoundsDeclaredSizeBeforeAllocating) {
  // Headers declaring huge images over a few bytes of data: rejected from the
  // header (size limit, or more pixels than the data could inflate to).
  ExpectDecodeError(MakePng(1000000, 1000000, 8, 2, {}), "too large");
  ExpectDecodeError(MakePng(16000, 16000, 8, 2, {}), "cannot hold");
  ExpectDecodeError(MakePng(0, 5, 8, 2, {}), "invalid PNG data");
  std::string jpeg = MakeJpeg(16, 12, Gradient(16, 12), TJPF_RGB, TJSAMP_444);
  // SOF0's height and width, big-endian, follow its marker, length and precision.
  size_t sof = jpeg.find("\xFF\xC0");
  ASSERT_NE(sof, std::string::npos);
  std::string huge = jpeg;
  huge[sof + 5] = huge[sof + 7] = '\x60';  // 24576x24576: within JPEG's limit, over msrt's
  huge[sof + 6] = huge[sof + 8] = '\0';
  ExpectDecodeError(huge, "too large");
}

TEST(ImageTest, RejectsTruncatedAndCorruptJpeg) {
  std::string jpeg = MakeJpeg(16, 12, Gradient(16, 12), TJPF_RGB, TJSAMP_420);
  ASSERT_EQ(DecodeImage(jpeg).pixels.size(), 16u * 12 * 3);
  for (size_t keep : {3ul, 20ul, jpeg.size() / 2, jpeg.size() - 2}) {
    ExpectDecodeError(jpeg.substr(0, keep), "invalid JPEG data");
  }
  std::string garbage = jpeg.substr(0, 4) + std::string(200, '\x13');
  ExpectDecodeError(garbage, "invalid JPEG data");
}

}  // namespace
}  // namespace msrt::io
