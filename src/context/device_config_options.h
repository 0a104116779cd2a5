// Sub-keys of set_context's dict-valued keys: the device-specific ones and
// jit_config (see runtime_options.cc).
#pragma once

#include <vector>

#include "context/option_spec.h"

namespace msrt::context {

std::vector<SubKey> AscendConfigKeys();
std::vector<SubKey> GpuConfigKeys();
std::vector<SubKey> AoeConfigKeys();
std::vector<SubKey> JitConfigKeys();
/// jit_config's sub-dict, the relation MindSpore checks between its keys,
/// and warnings for the values that act only on Ascend.
Value ParseJitConfig(const Value& in, const KeyEnv& env);

}  // namespace msrt::context
