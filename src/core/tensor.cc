#include "msrt/tensor/tensor.h"

#include "core/interrupt.h"

#include <complex>
#include <cstring>

#include "core/allocator.h"
#include "core/float_to_int.h"
#include "msrt/core/errors.h"

namespace msrt {

void Completion::Finish() {
  {
    std::lock_guard lock(mutex_);
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void Completion::Fail(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void Completion::Wait() const {
  if (!done_.load(std::memory_order_acquire)) {
    const uint64_t seen = InterruptCount();
    BlockingRegion blocked;
    std::unique_lock lock(mutex_);
    InterruptibleWait(
        cv_, lock, [this] { return done_.load(std::memory_order_acquire); }, "waiting for a tensor's value");
    // An interrupt that came while waiting fails the op; the waiter reports the interrupt.
    if (error_) CheckInterrupt(seen, "waiting for a tensor's value");
  }
  if (error_) std::rethrow_exception(error_);
}

std::exception_ptr Completion::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

// Note [Foreign and host-shared memory]
// A tensor's storage usually comes from the device's pool, which counts it
// against max_device_memory and hands it out again once freed. Foreign
// storage (Storage::Foreign) wraps memory another owner keeps, such as the
// NumPy array of Tensor.from_numpy: the pool never sees it, and dropping the
// last reference runs the owner's release callback instead (the Python
// binding's takes the interpreter lock, as that may happen on a dispatcher
// or executor thread). Memory is shared with the host while it is foreign
// or a NumPy array from asnumpy() over it is alive: Python may then write
// it between two calls, so the eager executor runs the ops that touch it at
// the call instead of queueing them (src/runtime/eager.cc), and asnumpy()
// waits for every queued op first. NumPy reads and writes are thus ordered
// with the ops as the program orders them, as if every op ran at once.
std::shared_ptr<Storage> Storage::Foreign(void* data, size_t nbytes, DeviceTarget device,
                                          std::function<void()> release) {
  auto storage = std::make_shared<Storage>(data, nbytes, device, nullptr);
  storage->foreign_ = true;
  storage->foreign_release_ = std::move(release);
  return storage;
}

Storage::~Storage() {
  if (release_ != nullptr) release_(data_, nbytes_);
  if (foreign_release_) foreign_release_();
}

Tensor Tensor::Symbolic(const Shape& shape, DType dtype, DeviceTarget device) {
  CheckShape(shape, dtype);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<Storage>(nullptr, 0, device, nullptr);
  impl->shape = shape;
  impl->dtype = dtype;
  impl->symbolic = true;
  return Tensor(std::move(impl));
}

// Stamps need only be unique (Note [Storage stamps]), not ordered: each
// thread takes them from a run of its own, reserved from the process-wide
// counter a run at a time (a small op makes three: one atomic add per call
// costs a real share of it).
uint64_t NextStorageStamp() {
  constexpr uint64_t kRun = 1024;
  static std::atomic<uint64_t> counter{1};
  static thread_local uint64_t next = 0;
  static thread_local uint64_t end = 0;
  if (next == end) {
    next = counter.fetch_add(kRun, std::memory_order_relaxed);
    end = next + kRun;
  }
  return next++;
}

Tensor Tensor::Empty(const Shape& shape, DType dtype, DeviceTarget device) {
  size_t nbytes = NumBytes(shape, dtype);  // ValueError for negative or overflowing shapes
  auto impl = std::make_shared<TensorImpl>();
  impl->shape = shape;
  impl->dtype = dtype;
  impl->storage = TensorAllocator().Allocate(nbytes, device);
  impl->storage->MarkWritten();  // new contents, whatever the allocator reused (Note [Storage stamps])
  return Tensor(std::move(impl));
}

Tensor Tensor::Zeros(const Shape& shape, DType dtype, DeviceTarget device) {
  Tensor t = Empty(shape, dtype, device);
  std::memset(t.raw(), 0, t.nbytes());
  return t;
}

Tensor Tensor::FromHost(const void* data, size_t nbytes, const Shape& shape, DType dtype) {
  Tensor t = Empty(shape, dtype);
  MSRT_CHECK_VALUE(nbytes == t.nbytes(), "FromHost: ", nbytes, " bytes do not fill a tensor of shape ",
                   ShapeRepr(shape), " and dtype ", DTypeName(dtype), " (", t.nbytes(), " bytes).");
  if (nbytes != 0) std::memcpy(t.raw(), data, nbytes);
  return t;
}

Tensor Tensor::FromStorage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype, size_t offset) {
  MSRT_CHECK(storage != nullptr, "FromStorage: no storage");
  size_t nbytes = NumBytes(shape, dtype);  // ValueError for negative or overflowing shapes
  MSRT_CHECK_VALUE(offset <= storage->nbytes() && nbytes <= storage->nbytes() - offset,
                   "FromStorage: a tensor of shape ", ShapeRepr(shape), " and dtype ", DTypeName(dtype), " (", nbytes,
                   " bytes) from byte ", offset, " does not fit in a storage of ", storage->nbytes(), " bytes.");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->offset = offset;
  impl->shape = shape;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::Scalar(double value, DType dtype) {
  Tensor t = Empty({}, dtype);
  void* p = t.raw();
  switch (dtype) {
    case DType::kBool: *static_cast<bool*>(p) = value != 0; break;
    case DType::kUInt8: *static_cast<uint8_t*>(p) = FloatToInt<uint8_t>(value); break;
    case DType::kInt8: *static_cast<int8_t*>(p) = FloatToInt<int8_t>(value); break;
    case DType::kInt16: *static_cast<int16_t*>(p) = FloatToInt<int16_t>(value); break;
    case DType::kInt32: *static_cast<int32_t*>(p) = FloatToInt<int32_t>(value); break;
    case DType::kInt64: *static_cast<int64_t*>(p) = FloatToInt<int64_t>(value); break;
    case DType::kFloat16: *static_cast<Half*>(p) = FloatToHalf(static_cast<float>(value)); break;
    case DType::kBFloat16: *static_cast<BFloat16*>(p) = FloatToBFloat16(static_cast<float>(value)); break;
    case DType::kFloat32: *static_cast<float*>(p) = static_cast<float>(value); break;
    case DType::kFloat64: *static_cast<double*>(p) = value; break;
    case DType::kUInt16: *static_cast<uint16_t*>(p) = FloatToInt<uint16_t>(value); break;
    case DType::kUInt32: *static_cast<uint32_t*>(p) = FloatToInt<uint32_t>(value); break;
    case DType::kUInt64: *static_cast<uint64_t*>(p) = FloatToInt<uint64_t>(value); break;
    case DType::kComplex64: *static_cast<std::complex<float>*>(p) = {static_cast<float>(value), 0.0F}; break;
    case DType::kComplex128: *static_cast<std::complex<double>*>(p) = {value, 0.0}; break;
  }
  return t;
}

std::shared_ptr<Completion> Tensor::pending() const {
  if (!impl_->has_pending.load(std::memory_order_acquire)) return nullptr;
  std::lock_guard lock(impl_->pending_mutex);
  return impl_->pending;
}

void Tensor::set_pending(std::shared_ptr<Completion> completion) const {
  std::lock_guard lock(impl_->pending_mutex);
  impl_->pending = std::move(completion);
  impl_->has_pending.store(impl_->pending != nullptr, std::memory_order_release);
}

void Tensor::Sync() const {
  if (impl_->symbolic) {
    throw GraphCaptureError(
        StrCat("The value of a Tensor", (impl_->name.empty() ? "" : " '" + impl_->name + "'"), " of shape ",
               ShapeRepr(impl_->shape),
               " is not known while a graph is being compiled (GRAPH_MODE or ms.jit): "
               "Python code read it (e.g. 'if x.sum() > 0:', 'float(x)', 'x.asnumpy()'). Use tensor ops (ops.select, "
               "ops.where) instead of Python control flow on Tensor values, or run this code in PYNATIVE_MODE."));
  }
  std::shared_ptr<Completion> p = pending();
  if (p) {
    p->Wait();
    std::lock_guard lock(impl_->pending_mutex);
    if (impl_->pending == p) {
      impl_->pending.reset();
      impl_->has_pending.store(false, std::memory_order_release);
    }
  }
}

const void* Tensor::data() const {
  Sync();
  return raw();
}

void* Tensor::mutable_data() {
  Sync();
  return raw();
}

Tensor Tensor::Reshaped(const Shape& shape) const {
  MSRT_CHECK_VALUE(NumElements(shape) == numel(), "Can not reshape a tensor of shape ", ShapeRepr(this->shape()), " (",
                   numel(), " elements) to ", ShapeRepr(shape), ".");
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = impl_->storage;
  impl->offset = impl_->offset;
  impl->shape = shape;
  impl->dtype = impl_->dtype;
  impl->symbolic = impl_->symbolic;
  impl->pending = pending();
  impl->has_pending.store(impl->pending != nullptr, std::memory_order_relaxed);  // not yet shared
  return Tensor(std::move(impl));
}

std::string Tensor::Describe() const {
  if (!defined()) return "Tensor(undefined)";
  return StrCat("Tensor(shape=", ShapeRepr(shape()), ", dtype=", DTypeName(dtype()), ")");
}

}  // namespace msrt
