// Hooks for test suites only; nothing in the runtime calls them.
#pragma once

#include <string_view>

#include "msrt/context/context.h"

namespace msrt::context::testing {

/// Forgets that the runtime uses `key` (undoes MarkInEffect), so a test
/// process can change it again.
void ForgetInEffect(Store& store, Family family, std::string_view key);

}  // namespace msrt::context::testing
