// Image decoding for the data pipeline (vision.Decode,
// ImageFolderDataset(decode=True)): JPEG through libturbojpeg, PNG through
// libpng, always to 8-bit RGB in HWC order, as MindSpore's Decode gives.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace msrt::io {

/// What the first bytes of an encoded image say it is.
enum class ImageFormat { kUnknown, kJpeg, kPng };

/// The format named by the magic bytes at the start of `bytes`.
ImageFormat DetectImageFormat(std::string_view bytes);

/// Largest image decoded, in pixels (height * width): 2^28, 768 MiB of RGB.
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

/// Size of an encoded image, read from its header.
struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0;
  int64_t width = 0;
};

/// Format and size from the header of `bytes` alone (the pixels are not
/// checked). RuntimeError, as DecodeImage, when they cannot be read.
ImageInfo ReadImageInfo(std::string_view bytes);

/// A decoded image: height * width * 3 bytes, rows top to bottom, RGB.
struct DecodedImage {
  int64_t height = 0;
  int64_t width = 0;
  std::vector<uint8_t> pixels;
};

/// Decodes a JPEG or PNG image to 8-bit RGB. Grayscale and palette images
/// are expanded to RGB, CMYK JPEGs converted, an alpha channel is dropped
/// (not blended), 16-bit samples keep their high byte. RuntimeError
/// ("Decode: ...") for another format, corrupt or truncated data, or an
/// image over kMaxImagePixels.
DecodedImage DecodeImage(std::string_view bytes);

}  // namespace msrt::io
