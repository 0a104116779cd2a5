// libFuzzer target over the checkpoint reader (src/io/checkpoint.cc).
// Properties: nothing crashes, only msrt::ValueError escapes, and whatever is
// accepted lies inside the input and encodes back to the same bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/checkpoint.h"
#include "msrt/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    auto tensors = msrt::io::DecodeCheckpoint(bytes, "fuzz.ckpt");
    std::vector<msrt::io::CheckpointTensorView> views;
    for (const auto& t : tensors) {
      if (t.data_offset > size || t.data_size > size - t.data_offset) std::abort();
      views.push_back({t.name, t.dtype, t.shape, bytes.substr(t.data_offset, t.data_size)});
    }
    // Version 2 files re-encode to themselves.
    if (size >= 12 && data[8] == 2 && msrt::io::EncodeCheckpoint(views) != bytes) std::abort();
  } catch (const msrt::ValueError&) {
  }
  return 0;
}
