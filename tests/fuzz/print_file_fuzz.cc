// libFuzzer target over the print file reader (parse_print; Note [Print file
// format] in src/runtime/print_sink.cc). Properties: nothing crashes and only
// msrt::RuntimeError escapes.
#include <cstdint>
#include <string>

#include "msrt/core/errors.h"
#include "runtime/print_sink.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    msrt::runtime::ParsePrintFile(std::string(reinterpret_cast<const char*>(data), size), "fuzz.print");
  } catch (const msrt::RuntimeError&) {
  }
  return 0;
}
