#include "io/image.h"

#include <png.h>
#include <turbojpeg.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "msrt/core/errors.h"
#include "msrt/core/shape.h"

namespace msrt::io {
namespace {

constexpr unsigned char kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

bool StartsWith(std::string_view bytes, std::string_view magic) {
  return bytes.size() >= magic.size() && bytes.substr(0, magic.size()) == magic;
}

// Names the formats MindSpore's Decode knows but msrt does not, for the error.
std::string_view OtherFormatName(std::string_view bytes) {
  if (StartsWith(bytes, "BM")) return "a BMP image";
  if (StartsWith(bytes, "GIF87a") || StartsWith(bytes, "GIF89a")) return "a GIF image";
  if (StartsWith(bytes, std::string_view("II*\0", 4)) || StartsWith(bytes, std::string_view("MM\0*", 4))) {
    return "a TIFF image";
  }
  if (bytes.size() >= 12 && StartsWith(bytes, "RIFF") && bytes.substr(8, 4) == "WEBP") return "a WebP image";
  return {};
}

std::string FirstBytes(std::string_view bytes) {
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 8; ++i) {
    char hex[4];
    std::snprintf(hex, sizeof hex, "%s%02x", i ? " " : "", static_cast<unsigned char>(bytes[i]));
    out += hex;
  }
  return out;
}

[[noreturn]] void Unsupported(std::string_view bytes) {
  if (bytes.empty()) throw RuntimeError("Decode: invalid image data: the input is empty.");
  std::string_view other = OtherFormatName(bytes);
  throw RuntimeError(StrCat("Decode: image format is not supported: msrt decodes JPEG and PNG, and the data (",
                            bytes.size(), " bytes, beginning ", FirstBytes(bytes), ") is ",
                            other.empty() ? std::string_view("neither") : other, "."));
}

// Height * width, checked against kMaxImagePixels.
void CheckImageSize(int64_t height, int64_t width, std::string_view format) {
  if (height <= 0 || width <= 0) {
    throw RuntimeError(
        StrCat("Decode: invalid ", format, " data: its header declares an empty image (", height, "x", width, ")."));
  }
  int64_t pixels = CheckedMul(height, width, "Decode: image size");
  if (pixels > kMaxImagePixels) {
    throw RuntimeError(StrCat("Decode: the ", format, " image is too large: ", height, "x", width,
                              " pixels, more than the ", kMaxImagePixels, " msrt decodes."));
  }
}

// ---------------------------------------------------------------- JPEG

struct TurboJpegCloser {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using TurboJpegHandle = std::unique_ptr<void, TurboJpegCloser>;

TurboJpegHandle OpenJpegDecoder() {
  TurboJpegHandle handle(tjInitDecompress());
  if (!handle) throw RuntimeError(StrCat("Decode: cannot start the JPEG decoder: ", tjGetErrorStr2(nullptr), "."));
  return handle;
}

[[noreturn]] void JpegFailure(void* handle) {
  throw RuntimeError(StrCat("Decode: invalid JPEG data: ", tjGetErrorStr2(handle), "."));
}

struct JpegHeader {
  ImageInfo info;
  bool cmyk = false;
};

JpegHeader ReadJpegHeader(void* handle, std::string_view bytes) {
  int width = 0, height = 0, subsampling = 0, colorspace = 0;
  if (tjDecompressHeader3(handle, reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<unsigned long>(bytes.size()), &width, &height, &subsampling, &colorspace) != 0) {
    JpegFailure(handle);
  }
  CheckImageSize(height, width, "JPEG");
  return {{ImageFormat::kJpeg, height, width}, colorspace == TJCS_CMYK || colorspace == TJCS_YCCK};
}

// Inverted CMYK (as Adobe's encoders store it, 255 = no ink) to RGB with
// OpenCV's integer formula, which MindSpore's Decode uses: R = K - (255 - C) * K / 256.
void CmykToRgb(const uint8_t* cmyk, uint8_t* rgb, int64_t pixels) {
  for (int64_t i = 0; i < pixels; ++i, cmyk += 4, rgb += 3) {
    int k = cmyk[3];
    for (int c = 0; c < 3; ++c) rgb[c] = static_cast<uint8_t>(k - (((255 - cmyk[c]) * k) >> 8));
  }
}

DecodedImage DecodeJpeg(std::string_view bytes) {
  TurboJpegHandle handle = OpenJpegDecoder();
  JpegHeader header = ReadJpegHeader(handle.get(), bytes);
  const int64_t pixels = header.info.height * header.info.width;
  DecodedImage image{header.info.height, header.info.width, {}};
  image.pixels.resize(static_cast<size_t>(pixels * 3));
  std::vector<uint8_t> cmyk(header.cmyk ? static_cast<size_t>(pixels * 4) : 0);
  // Warnings (truncated or corrupt entropy data) are failures: the pixels would be made up.
  // LIMITSCANS refuses progressive images of over 500 scans, a denial-of-service pattern.
  // CMYK images decode only to CMYK.
  if (tjDecompress2(handle.get(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    static_cast<unsigned long>(bytes.size()), header.cmyk ? cmyk.data() : image.pixels.data(),
                    static_cast<int>(header.info.width), 0, static_cast<int>(header.info.height),
                    header.cmyk ? TJPF_CMYK : TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    JpegFailure(handle.get());
  }
  if (header.cmyk) CmykToRgb(cmyk.data(), image.pixels.data(), pixels);
  return image;
}

// ---------------------------------------------------------------- PNG
// libpng reports errors by longjmp. The functions that call setjmp
// (PngReadHeader, PngReadRows) hold only trivially destructible locals, and
// libpng's frames between are C; the C++ caller owns every resource.

struct PngSource {
  const char* data;
  size_t size;
  size_t offset;
  char message[256];
};

void PngError(png_structp png, png_const_charp message) {
  auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
  std::snprintf(source->message, sizeof source->message, "%s", message);
  png_longjmp(png, 1);
}

void PngWarning(png_structp, png_const_charp) {}

void PngRead(png_structp png, png_bytep out, size_t count) {
  auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
  if (count > source->size - source->offset) png_error(png, "the data ends early (truncated)");
  std::memcpy(out, source->data + source->offset, count);
  source->offset += count;
}

struct PngHeader {
  png_uint_32 width;
  png_uint_32 height;
  int bit_depth;
  int color_type;
  size_t row_bytes;    // after the transforms below
  int channels;        // after the transforms below
  uint64_t raw_bytes;  // the filtered scanlines the compressed stream must inflate to
};

// Reads the header and sets the transforms to 8-bit RGB; false (the reason in
// the source's message) on a libpng error.
bool PngReadHeader(png_structp png, png_infop info, PngHeader* header) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_info(png, info);
  header->width = png_get_image_width(png, info);
  header->height = png_get_image_height(png, info);
  header->bit_depth = png_get_bit_depth(png, info);
  header->color_type = png_get_color_type(png, info);
  uint64_t bits_per_row = uint64_t{header->width} * png_get_channels(png, info) * header->bit_depth;
  header->raw_bytes = uint64_t{header->height} * ((bits_per_row + 7) / 8 + 1);
  if (header->color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (header->color_type == PNG_COLOR_TYPE_GRAY && header->bit_depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (header->bit_depth == 16) png_set_strip_16(png);
  if (header->color_type == PNG_COLOR_TYPE_GRAY || header->color_type == PNG_COLOR_TYPE_GRAY_ALPHA) {
    png_set_gray_to_rgb(png);
  }
  // Palette expansion turns a tRNS chunk into alpha; it is dropped with the rest.
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  header->row_bytes = png_get_rowbytes(png, info);
  header->channels = png_get_channels(png, info);
  return true;
}

bool PngReadRows(png_structp png, png_bytepp rows) {
  if (setjmp(png_jmpbuf(png))) return false;
  png_read_image(png, rows);
  return true;
}

struct PngReadState {
  png_structp png = nullptr;
  png_infop info = nullptr;
  ~PngReadState() { png_destroy_read_struct(&png, info ? &info : nullptr, nullptr); }
};

// Reads the header of a PNG image; `state` and `source` live on for the rows.
PngHeader OpenPng(std::string_view bytes, PngReadState& state, PngSource& source) {
  source = PngSource{bytes.data(), bytes.size(), 0, {}};
  state.png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, PngError, PngWarning);
  if (state.png) state.info = png_create_info_struct(state.png);
  if (!state.png || !state.info) throw MemoryError("Decode: cannot start the PNG decoder.");
  png_set_read_fn(state.png, &source, PngRead);
  PngHeader header{};
  if (!PngReadHeader(state.png, state.info, &header)) {
    throw RuntimeError(StrCat("Decode: invalid PNG data: ", source.message, "."));
  }
  CheckImageSize(header.height, header.width, "PNG");
  // Deflate expands at most 1032 to 1: a stream shorter than that bound cannot
  // hold the image, whatever its header says (and nothing is allocated for it).
  if (header.raw_bytes / 1032 > bytes.size()) {
    throw RuntimeError(StrCat("Decode: invalid PNG data: ", bytes.size(), " bytes cannot hold the ", header.height, "x",
                              header.width, " image its header declares (truncated)."));
  }
  if (header.channels != 3 || header.row_bytes != size_t{header.width} * 3) {
    throw InternalError(StrCat("Decode: libpng gave ", header.channels, " channels and ", header.row_bytes,
                               " bytes per row for a PNG image of width ", header.width, ", expected RGB."));
  }
  return header;
}

DecodedImage DecodePng(std::string_view bytes) {
  PngReadState state;
  PngSource source{};
  PngHeader header = OpenPng(bytes, state, source);
  DecodedImage image{header.height, header.width, {}};
  image.pixels.resize(size_t{header.height} * header.row_bytes);
  std::vector<png_bytep> rows(header.height);
  for (png_uint_32 y = 0; y < header.height; ++y) rows[y] = image.pixels.data() + size_t{y} * header.row_bytes;
  if (!PngReadRows(state.png, rows.data())) {
    throw RuntimeError(StrCat("Decode: invalid PNG data: ", source.message, "."));
  }
  return image;
}

}  // namespace

ImageFormat DetectImageFormat(std::string_view bytes) {
  if (bytes.size() >= 3 && static_cast<unsigned char>(bytes[0]) == 0xFF &&
      static_cast<unsigned char>(bytes[1]) == 0xD8 && static_cast<unsigned char>(bytes[2]) == 0xFF) {
    return ImageFormat::kJpeg;
  }
  if (StartsWith(bytes, std::string_view(reinterpret_cast<const char*>(kPngSignature), sizeof kPngSignature))) {
    return ImageFormat::kPng;
  }
  return ImageFormat::kUnknown;
}

ImageInfo ReadImageInfo(std::string_view bytes) {
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kJpeg: {
      TurboJpegHandle handle = OpenJpegDecoder();
      return ReadJpegHeader(handle.get(), bytes).info;
    }
    case ImageFormat::kPng: {
      PngReadState state;
      PngSource source{};
      PngHeader header = OpenPng(bytes, state, source);
      return {ImageFormat::kPng, header.height, header.width};
    }
    case ImageFormat::kUnknown: break;
  }
  Unsupported(bytes);
}

DecodedImage DecodeImage(std::string_view bytes) {
  switch (DetectImageFormat(bytes)) {
    case ImageFormat::kJpeg: return DecodeJpeg(bytes);
    case ImageFormat::kPng: return DecodePng(bytes);
    case ImageFormat::kUnknown: break;
  }
  Unsupported(bytes);
}

}  // namespace msrt::io
