// The op registry's helpers for calls (ops/call.cc).
#pragma once

#include "ops/op_def.h"

namespace msrt::ops {

/// NormalizeAttrs(op, given), kept once per registered op for calls that
/// give no attribute (Note [Default attributes] in op_registry.cc);
/// otherwise normalized into `storage`. The result is `storage` or lives as
/// long as the process.
const Dict& NormalizedAttrs(const OpDef& op, const Dict& given, Dict& storage);

}  // namespace msrt::ops
