// Ops whose output is their first input's elements, in order, in another
// shape (the reshape family): executors may give a view of that input's
// storage instead of running the kernel (Note [Views] in src/core/views.cc).
// An op's file marks it, beside its declaration.
#pragma once

#include <string_view>

#include "ops/op_def.h"

namespace msrt::ops {

/// Marks op `name` (registered or not yet) as a view op; returns true.
bool RegisterViewOp(std::string_view name);
/// Whether `op` is a view op.
bool IsViewOp(const OpDef& op);

}  // namespace msrt::ops
