// libFuzzer target over the MindSpore checkpoint reader (src/io/mindspore_checkpoint.cc).
// Properties: nothing crashes, only msrt::ValueError escapes, every accepted
// tensor holds exactly the bytes its shape and dtype need, and what is
// accepted encodes to a file that decodes and encodes back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/mindspore_checkpoint.h"
#include "msrt/core/errors.h"
#include "msrt/core/shape.h"

namespace {

std::vector<msrt::io::CheckpointTensorView> Views(const msrt::io::MindSporeCheckpoint& checkpoint) {
  std::vector<msrt::io::CheckpointTensorView> views;
  for (const auto& e : checkpoint.entries) {
    msrt::io::CheckpointTensorView view{e.name, e.dtype, e.shape, e.is_string ? e.text : e.data};
    view.is_string = e.is_string;
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  msrt::io::MindSporeCheckpoint first;
  try {
    first = msrt::io::DecodeMindSporeCheckpoint(bytes, "fuzz.ckpt");
  } catch (const msrt::ValueError&) {
    return 0;
  }
  for (const auto& e : first.entries) {
    if (e.is_string) continue;
    // bfloat16 is decoded as float32 values.
    msrt::DType stored = e.dtype == msrt::DType::kBFloat16 ? msrt::DType::kFloat32 : e.dtype;
    if (msrt::NumBytes(e.shape, stored) != e.data.size()) {
      std::abort();
    }
  }
  // Small slices, so that slicing and joining are exercised too. A file of
  // nothing needs its trailer (an empty file is refused).
  std::vector<msrt::io::CheckpointTensorView> views = Views(first);
  std::string encoded = msrt::io::EncodeMindSporeCheckpoint(views, first.has_crc || views.empty(), 16);
  msrt::io::MindSporeCheckpoint second = msrt::io::DecodeMindSporeCheckpoint(encoded, "again.ckpt");
  if (msrt::io::EncodeMindSporeCheckpoint(Views(second), second.has_crc, 16) != encoded) std::abort();
  return 0;
}
