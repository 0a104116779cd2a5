// libFuzzer target over the JPEG/PNG decoder (src/io/image.cc). Properties:
// nothing crashes, only msrt::RuntimeError escapes, the header read alone
// agrees with the decoded image, and a decoded image holds height * width * 3
// bytes. Images declaring over 2^20 pixels are only checked from the header,
// so that each input decodes quickly under the sanitizers.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/image.h"
#include "msrt/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  msrt::io::ImageInfo info;
  try {
    info = msrt::io::ReadImageInfo(bytes);
  } catch (const msrt::RuntimeError&) {
    return 0;
  }
  if (info.format != msrt::io::DetectImageFormat(bytes) || info.height <= 0 || info.width <= 0 ||
      info.height * info.width > msrt::io::kMaxImagePixels) {
    std::abort();
  }
  if (info.height * info.width > (int64_t{1} << 20)) return 0;
  try {
    msrt::io::DecodedImage image = msrt::io::DecodeImage(bytes);
    if (image.height != info.height || image.width != info.width ||
        image.pixels.size() != static_cast<size_t>(image.height * image.width * 3)) {
      std::abort();
    }
  } catch (const msrt::RuntimeError&) {
  }
  return 0;
}
