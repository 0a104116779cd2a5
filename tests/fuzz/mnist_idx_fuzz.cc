// libFuzzer target over the MNIST IDX header check (src/io/idx.cc). The first
// byte picks images or labels. Properties: nothing crashes, only
// msrt::ValueError escapes, and an accepted file holds exactly the bytes its
// header declares.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/idx.h"
#include "msrt/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  bool images = data[0] & 1;
  std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    auto idx = msrt::io::CheckMnistIdx(bytes, "fuzz",
                                       images ? msrt::io::MnistKind::kImages : msrt::io::MnistKind::kLabels);
    uint64_t per_item = images ? 28 * 28 : 1;
    if (idx.data_offset + idx.count * per_item != bytes.size()) std::abort();
  } catch (const msrt::ValueError&) {
  }
  return 0;
}
