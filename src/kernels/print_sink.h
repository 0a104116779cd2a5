// Where Print kernels send what they print. A kernel only gathers host
// values; the runtime's print sink (src/runtime/print_sink.cc) decides
// between the screen and print_file_path and installs itself here.
#pragma once

#include <string>
#include <variant>
#include <vector>

#include "msrt/tensor/tensor.h"

namespace msrt::kernels {

/// One printed value: text, or a tensor whose data is on the host.
using PrintItem = std::variant<std::string, Tensor>;

using PrintSinkFn = void (*)(const std::vector<PrintItem>& items);
void SetPrintSink(PrintSinkFn sink);
/// Hands one Print call's items to the sink; RuntimeError if none is installed.
void EmitPrint(const std::vector<PrintItem>& items);

}  // namespace msrt::kernels
