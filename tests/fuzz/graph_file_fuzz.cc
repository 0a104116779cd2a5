// libFuzzer target over the graph file reader shared by ms.load and the
// compile cache (Note [Graph file format] in src/ir/serialize.cc). Inputs
// whose checksum does not match are rejected before anything else, so the
// target fixes up the trailing CRC-32C of every input (first byte odd) to
// reach the parser too. Properties: nothing crashes and only msrt::ValueError
// escapes.
#include <cstdint>
#include <cstring>
#include <string>

#include "core/file_io.h"
#include "ir/serialize.h"
#include "msrt/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((data[0] & 1) && bytes.size() >= 4) {
    uint32_t crc = msrt::Crc32c(bytes.data(), bytes.size() - 4);
    std::memcpy(bytes.data() + bytes.size() - 4, &crc, 4);
  }
  try {
    msrt::ir::DeserializeGraph(bytes, "fuzz.mindir");
  } catch (const msrt::ValueError&) {
  }
  return 0;
}
