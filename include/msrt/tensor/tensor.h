// Tensors: typed, shaped, contiguous device buffers shared by reference.
//
// A tensor's contents may still be in flight: eager ops run on a dispatcher
// thread, so a tensor records the completion of the last op that writes it.
// Reading data (`data()`) waits for it and re-raises the op's error with the
// op name, shapes and where it was launched (see Note [Async errors] in
// src/runtime/dispatcher.cc).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "msrt/core/device.h"
#include "msrt/core/dtype.h"
#include "msrt/core/shape.h"

namespace msrt {

/// Signals that a queued op has finished, successfully or not.
class Completion {
 public:
  /// Marks success and wakes waiters.
  void Finish();
  /// Marks failure; `error` is re-raised to every reader.
  void Fail(std::exception_ptr error);
  /// Blocks until finished; rethrows the op's error.
  void Wait() const;
  bool done() const { return done_.load(std::memory_order_acquire); }
  std::exception_ptr error() const;

 private:
  std::atomic<bool> done_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::exception_ptr error_;
};

/// A new value of the counter Storage stamps come from (Note [Storage stamps]).
uint64_t NextStorageStamp();

/// A block of device memory. Memory an allocator handed out goes back to it
/// when the last reference goes; foreign memory (another library's buffer,
/// e.g. a NumPy array's) never belongs to a pool: its owner's release
/// callback runs instead (Note [Foreign and host-shared memory]).
class Storage {
 public:
  Storage(void* data, size_t nbytes, DeviceTarget device, void (*release)(void*, size_t))
      : data_(data), nbytes_(nbytes), device_(device), release_(release) {}
  /// Memory msrt did not allocate: `release` (which must not throw) runs
  /// once, on whichever thread drops the last reference; no pool counts,
  /// caps or reuses it.
  static std::shared_ptr<Storage> Foreign(void* data, size_t nbytes, DeviceTarget device,
                                          std::function<void()> release);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  DeviceTarget device() const { return device_; }
  bool foreign() const { return foreign_; }

  /// Host arrays (NumPy) handed out over this memory, counted while they
  /// live (Python may have written through one once it is gone: a new stamp).
  void AddHostView() {
    host_views_.fetch_add(1, std::memory_order_acq_rel);
    MarkWritten();
  }
  void RemoveHostView() {
    MarkWritten();
    host_views_.fetch_sub(1, std::memory_order_acq_rel);
  }
  /// Whether code outside msrt may read or write this memory between ops:
  /// it is foreign, or a host array over it is alive.
  bool shared_with_host() const { return foreign_ || host_views_.load(std::memory_order_acquire) > 0; }

  // Note [Storage stamps]
  // A stamp names the contents of a storage: no two storages, and no two
  // contents of one storage, have the same stamp (they come from one
  // process-wide counter). Whatever writes existing memory moves it: a
  // kernel launch for its outputs and the inputs its op writes in place
  // (runtime/launch.cc), a collective for the tensor it writes, a host view
  // as it comes and goes, a new tensor's storage. So a value derived from a
  // storage's contents (a weight in the layout a oneDNN primitive chose,
  // Note [Cached weight reorders] in kernels/cpu/onednn_common.h) may be kept
  // under the stamp and used while the stamp is the same. Memory shared with
  // the host (shared_with_host) can change without one.
  uint64_t stamp() const { return stamp_.load(std::memory_order_acquire); }
  void MarkWritten() { stamp_.store(NextStorageStamp(), std::memory_order_release); }

 private:
  void* data_;
  size_t nbytes_;
  DeviceTarget device_;
  void (*release_)(void*, size_t);
  bool foreign_ = false;
  std::function<void()> foreign_release_;
  std::atomic<int> host_views_{0};
  std::atomic<uint64_t> stamp_{NextStorageStamp()};
};

namespace autodiff {
struct Node;
}

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  size_t offset = 0;  // bytes
  Shape shape;
  DType dtype = DType::kFloat32;
  // The last write still running (null when the contents are ready).
  std::shared_ptr<Completion> pending;
  std::mutex pending_mutex;
  // Whether `pending` is set, written with it under pending_mutex: a reader
  // that finds it false needs no lock (every small op's call asks).
  std::atomic<bool> has_pending{false};
  // Autodiff: whether gradients flow to this tensor, and the node that
  // produced it while a gradient was being recorded.
  bool requires_grad = false;
  std::shared_ptr<autodiff::Node> grad_node;
  int grad_output_index = 0;
  std::string name;  // parameters carry their name
  // A value in a graph being captured: shape and dtype only, no data
  // (reading it raises GraphCaptureError).
  bool symbolic = false;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  /// Uninitialised contents.
  static Tensor Empty(const Shape& shape, DType dtype, DeviceTarget device = DeviceTarget::kCPU);
  static Tensor Zeros(const Shape& shape, DType dtype, DeviceTarget device = DeviceTarget::kCPU);
  /// Copies `nbytes` from host memory; `nbytes` must match shape and dtype.
  static Tensor FromHost(const void* data, size_t nbytes, const Shape& shape, DType dtype);
  /// A tensor over `storage` from byte `offset` (e.g. foreign memory,
  /// Storage::Foreign); ValueError when the storage is too small for it.
  static Tensor FromStorage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype, size_t offset = 0);
  /// A 0-d tensor holding `value` converted to `dtype`.
  static Tensor Scalar(double value, DType dtype);
  /// A value of a graph being captured: metadata and a storage identity, no data.
  static Tensor Symbolic(const Shape& shape, DType dtype, DeviceTarget device);

  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl_->shape; }
  DType dtype() const { return impl_->dtype; }
  int ndim() const { return static_cast<int>(impl_->shape.size()); }
  int64_t numel() const { return NumElements(impl_->shape); }
  size_t nbytes() const { return NumBytes(impl_->shape, impl_->dtype); }
  DeviceTarget device() const { return impl_->storage->device(); }
  TensorImpl* impl() const { return impl_.get(); }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool same(const Tensor& other) const { return impl_ == other.impl_; }
  bool symbolic() const { return impl_->symbolic; }

  /// Waits for pending writes (re-raising their error), then the data.
  const void* data() const;
  void* mutable_data();
  template <typename T>
  const T* data() const {
    return static_cast<const T*>(data());
  }
  template <typename T>
  T* mutable_data() {
    return static_cast<T*>(mutable_data());
  }
  /// The data without waiting: for kernels, which the dispatcher runs only
  /// after their inputs are written.
  void* raw() const { return static_cast<char*>(impl_->storage->data()) + impl_->offset; }
  template <typename T>
  T* raw() const {
    return static_cast<T*>(raw());
  }

  /// Waits for pending writes to finish; rethrows their error.
  void Sync() const;
  /// The completion a reader must wait for (null when ready).
  std::shared_ptr<Completion> pending() const;
  void set_pending(std::shared_ptr<Completion> completion) const;

  /// A tensor of another shape (same number of elements) sharing storage.
  Tensor Reshaped(const Shape& shape) const;

  /// "Tensor(shape=(2, 3), dtype=Float32)" — no data, no waiting.
  std::string Describe() const;

 private:
  std::shared_ptr<TensorImpl> impl_;
};

}  // namespace msrt
