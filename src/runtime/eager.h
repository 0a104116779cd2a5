// Eager execution (see Note [Async errors] in eager.cc).
#pragma once

#include <string>

#include "msrt/core/device.h"

namespace msrt::runtime {

/// Returns where the current op call comes from (e.g. "train.py:42"); the
/// Python binding installs one so async errors can name the Python line.
using OriginFn = std::string (*)();
void SetOriginHook(OriginFn hook);
/// Like the origin hook, but the whole Python stack of the call
/// ("model.py:12 <- train.py:40"), for graphs compiled with debug_level=DEBUG.
void SetStackHook(OriginFn hook);
/// Where the current call comes from: the innermost line, or the whole stack.
std::string CallOrigin(bool whole_stack = false);

/// device_target as executors act on it, parsed once per change (Note
/// [Parsed device target] in eager.cc).
DeviceTarget CurrentDevice();

// Note [Host shortcuts]
// x[i] and x[a:b] on the first axis, and x[i] = scalar, cost a small op's
// call each (gather, strided_slice, select and assign), several times what
// they do. The Python binding answers them itself when that gives exactly
// the ops' result: a read as a view of the rows (Note [Views] in
// core/views.cc: a write never shows through it), a write as a fill of the
// rows in place, after the same detaching from views that an in-place op
// does. It does so only while HostShortcutAllowed: the current device is
// the CPU and no capture, call observer or gradient recording would have
// seen the op (ops::CallsUnobserved); a `write` also needs the dispatcher
// idle (no queued op may still read or write the memory). Anything else
// (other indices, memory shared with the host, a pending or failed write)
// takes the ops as before, with their errors.
// x.reshape(*shape) (and any function or method of a view op of one input
// and one shape attribute) is answered the same way for a shape of Python
// ints: the op's own attribute check and inference give the shape, and the
// output is the view the eager executor makes (Note [Views]), without a
// dict of attributes to convert or a kernel to select; a shape the op
// refuses goes to the op, which raises.
bool HostShortcutAllowed(bool write);

/// Waits until every queued op has run (Interrupted on Ctrl-C).
void Synchronize();

/// Around fork() (runtime/fork.cc): waits for the queue to drain; in the
/// child, starts a new dispatcher.
void DrainForFork();
void ResetDispatcherInForkChild();

}  // namespace msrt::runtime
