// libFuzzer target over the rendezvous store's request decoder
// (src/parallel/store.cc). The first byte is the frame's op, the rest its
// payload. Properties: nothing crashes or throws; a refused frame says why;
// an accepted one re-encodes to exactly its payload (one encoding per
// request, so nothing in the bytes is skipped or invented).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "parallel/store.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  msrt::parallel::Bytes payload(data + 1, data + size);
  std::string error;
  auto request = msrt::parallel::store_wire::DecodeRequest(data[0], payload, &error);
  if (!request) {
    if (error.empty()) std::abort();
    return 0;
  }
  if (msrt::parallel::store_wire::EncodeRequest(*request) != payload) std::abort();
  return 0;
}
