#include "core/views.h"

#include <cstring>

#include "msrt/core/errors.h"

namespace msrt {

// Note [Views]
// reshape, flatten, expand_dims and squeeze of a CPU tensor (the ops listed
// whose OpDef sets props.view) give a view: a new tensor over the same storage and
// offset, in another shape (tensors are contiguous, so nothing else
// changes), made without a copy by the eager executor and by the graph
// executor's memory plan. msrt keeps the value semantics these ops had when
// they copied: a write never shows through another tensor. A tensor about to
// be written in place (an in-place op, an optimizer update, a graph writing
// its input, a collective, or an asnumpy() array, through which Python may
// write) first takes a copy of its own when another tensor holds its storage
// (DetachFromViews). Memory shared with the host (from_numpy, live asnumpy()
// arrays) is never viewed: those ops copy it, so the only tensor over such
// memory is its own, and writes through the array reach it as before.
// Another holder of a storage (a graph's arena) only makes the answer
// cautious: a copy is always correct. A view of a run of first-axis rows
// (FirstAxisView: x[i] and x[a:b] in the Python binding, Note [Host
// shortcuts] in runtime/eager.h) starts at the first row's byte; it is as
// contiguous as the others, and is detached the same way.
bool SharesStorage(const Tensor& t) {
  const std::shared_ptr<Storage>& storage = t.impl()->storage;
  return storage.use_count() > 1 && !storage->shared_with_host();
}

Tensor FirstAxisView(const Tensor& t, int64_t start, int64_t stop, bool drop_axis) {
  const Shape& shape = t.shape();
  MSRT_INTERNAL_ASSERT(!shape.empty() && 0 <= start && start <= stop && stop <= shape[0] &&
                           (!drop_axis || stop == start + 1),
                       "FirstAxisView: rows [", start, ", ", stop, ") of shape ", ShapeRepr(shape));
  const int64_t n = shape[0];
  const size_t row_bytes = n == 0 ? 0 : t.nbytes() / static_cast<size_t>(n);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = t.impl()->storage;
  impl->offset = t.impl()->offset + static_cast<size_t>(start) * row_bytes;
  impl->shape.assign(shape.begin() + (drop_axis ? 1 : 0), shape.end());
  if (!drop_axis) impl->shape[0] = stop - start;
  impl->dtype = t.dtype();
  impl->symbolic = t.symbolic();
  impl->pending = t.pending();
  impl->has_pending.store(impl->pending != nullptr, std::memory_order_relaxed);  // not yet shared
  return Tensor(std::move(impl));
}

void DetachFromViews(const Tensor& t) {
  if (!SharesStorage(t)) return;
  MSRT_INTERNAL_ASSERT(t.device() == DeviceTarget::kCPU, "a view of memory outside the host");
  Tensor own = Tensor::Empty(t.shape(), t.dtype(), t.device());
  if (t.nbytes() > 0) std::memcpy(own.raw(), t.raw(), t.nbytes());
  TensorImpl* impl = t.impl();
  impl->storage = own.impl()->storage;
  impl->offset = own.impl()->offset;
}

}  // namespace msrt
