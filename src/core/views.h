// Views: tensors over another tensor's memory in another shape (Note [Views]
// in views.cc).
#pragma once

#include "msrt/tensor/tensor.h"

namespace msrt {

/// Whether `t`'s storage is shared with another tensor that a write to `t`
/// must not reach (a view of it, or the tensor it views).
bool SharesStorage(const Tensor& t);

/// A view of rows [start, stop) of `t`'s first axis (0 <= start <= stop <=
/// its size, `t` of at least one dimension): shape (stop - start, ...), or
/// the rest of the shape alone when `drop_axis` (one row, x[i]). It shares
/// `t`'s storage from the first row's byte and `t`'s pending write.
Tensor FirstAxisView(const Tensor& t, int64_t start, int64_t stop, bool drop_axis);

/// Before `t`'s memory is written in place (or handed to Python): when it
/// shares its storage (SharesStorage), gives it a copy of its own, so the
/// write is not seen through the other tensors. The caller makes sure no
/// queued op still uses that storage, and that `t`'s value is written.
void DetachFromViews(const Tensor& t);

}  // namespace msrt
