// Sub-keys of set_context's device-specific dicts (see runtime_options.cc).
#pragma once

#include <vector>

#include "context/option_spec.h"

namespace msrt::context {

std::vector<SubKey> AscendConfigKeys();
std::vector<SubKey> GpuConfigKeys();
std::vector<SubKey> AoeConfigKeys();

}  // namespace msrt::context
