// libFuzzer target over the graph record check (Note [Graph record] in
// src/ir/serialize.cc): the JSON record of exported graphs and compile-cache
// entries. The first byte picks the kind. Properties: nothing crashes and only
// msrt::ValueError escapes.
#include <cstdint>
#include <string_view>

#include "ir/serialize.h"
#include "msrt/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view record(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    msrt::ir::CheckGraphRecord(record, (data[0] & 1) ? "export" : "compile_cache", "fuzz");
  } catch (const msrt::ValueError&) {
  }
  return 0;
}
