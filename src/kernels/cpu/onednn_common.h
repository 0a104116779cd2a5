// What the oneDNN kernels share: the per-thread engine and stream, the
// OpenMP thread count, the primitive cache, and moving tensors in and out of
// the memory formats oneDNN picks.
//
// Note [oneDNN primitive cache]
// Building a primitive descriptor searches oneDNN's implementations (and may
// JIT-compile code); a training loop calls the same shapes every step. Each
// kernel keeps what it built (primitives, their chosen layouts, the reorders
// to and from plain layouts) in one LRU keyed by a string of everything that
// shaped it: op, dtype, shapes, attributes, the thread's engine (primitives
// are bound to an engine, and each executing thread has its own) and the
// thread count (oneDNN sizes its work split when it builds a primitive).
// Entries are shared_ptrs, so one evicted while in use lives on until done.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernels/cpu/onednn_cache.h"
#include "msrt/tensor/tensor.h"
#include "ops/op_def.h"

namespace msrt::kernels::onednn {

/// This thread's CPU engine and in-order stream.
dnnl::engine& Engine();
dnnl::stream& Stream();

/// Makes this thread's OpenMP team (oneDNN's threads) follow IntraOpThreads(),
/// i.e. the context key runtime_num_threads, or `limit` when that is smaller
/// (and positive), or 1 when deterministic="ON"; returns the count.
int SyncThreads(int limit = 0);

/// Thread limits for small primitives, which run on one thread: waking a
/// second one costs more than it saves (tens of microseconds when OpenMP
/// threads wait passively or other processes share the cores). Below 16 M
/// FLOP (about 100 us on one core): the 3x3 convolutions of a CIFAR ResNet
/// at batch 1 (4.7 and 9.4 M FLOP) took 30 and 53 us on one thread and 58
/// and 82 us on two, best of 400 on the 2-core benchmark machine.
inline constexpr int64_t kSingleThreadFlops = int64_t{1} << 24;
inline int ThreadLimitForFlops(int64_t flops, int64_t single_thread_below = kSingleThreadFlops) {
  return flops < single_thread_below ? 1 : 0;
}
inline int ThreadLimitForElements(int64_t elements) { return elements < (int64_t{1} << 15) ? 1 : 0; }

/// Whether the oneDNN kernels take `dtype` on this CPU: float32 always,
/// bfloat16 where oneDNN computes it natively (AVX-512 cores).
bool Supports(DType dtype);
dnnl::memory::data_type DataType(DType dtype);

dnnl::memory::dims Dims(const Shape& shape);
/// Row-major contiguous layout of `dims`.
dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, DType dtype);
/// How a conv or pooling activation of (N, C, H, W) `dims` is stored:
/// plain NCHW, or NHWC when the op's data_format is "NHWC".
dnnl::memory::desc ActivationDesc(const dnnl::memory::dims& dims, DType dtype, bool channels_last);
/// Layout with explicit strides.
dnnl::memory::desc StridedDesc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides, DType dtype);
/// A layout for oneDNN to choose.
dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims, DType dtype);

/// The epilogue (kernels::kEpilogueAttr) of `attrs`: its op names (empty
/// when there is none). `supported` is false when an op has no oneDNN eltwise
/// equivalent. The oneDNN post-ops are made only when a primitive is built
/// (PostOps): making them allocates, and most calls find their primitive in
/// the cache or run no primitive at all (Note [Tiny products]).
struct Epilogue {
  std::vector<std::string> ops;
  bool supported = true;
  bool empty() const { return ops.empty(); }
  /// The supported ops as oneDNN eltwise post-ops, in order.
  dnnl::post_ops PostOps() const;
};
Epilogue EpilogueOf(const Dict& attrs);
/// Runs the epilogue's ops on `t` in place with their own kernels (for paths
/// that compute without oneDNN).
void ApplyEpilogueInPlace(const Epilogue& epilogue, Tensor& t);

/// Kernel priorities of the ops that have a oneDNN kernel and a reference loop.
inline constexpr int kOneDnnPriority = 20;
inline constexpr int kReferencePriority = 0;
/// `supports` of those kernels: oneDNN takes input 0's dtype (Supports) and
/// any epilogue it can apply; the reference loops take float32 and float64
/// and no epilogue.
bool OneDnnSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs);
bool ReferenceSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs);

/// `t`'s data seen through `desc` (no copy).
dnnl::memory Wrap(const dnnl::memory::desc& desc, const Tensor& t);

/// Temporary oneDNN memory whose storage comes from msrt's allocator; the
/// tensors that own it live as long as the Scratch.
class Scratch {
 public:
  dnnl::memory Allocate(const dnnl::memory::desc& desc);
  /// Keeps `t` alive as long as the Scratch (memory the call uses but does not own).
  void Keep(Tensor t) { buffers_.push_back(std::move(t)); }

 private:
  std::vector<Tensor> buffers_;
};

/// A copy between two layouts of one small float32 tensor by a table of
/// element offsets (Note [Small reorders]).
class OffsetReorder {
 public:
  /// Elements up to which a reorder runs by table.
  static constexpr int64_t kMaxElements = 16384;
  /// The table for copying `from` into `to`, or an empty reorder when either
  /// is not float32 or has more than kMaxElements elements (padding included).
  static OffsetReorder Build(const dnnl::memory::desc& from, const dnnl::memory::desc& to);
  bool empty() const { return offsets_ == nullptr; }
  /// to[i] = from[offsets[i]], 0 where `to` is padding.
  void Run(const void* from, void* to) const;

 private:
  std::shared_ptr<const std::vector<int32_t>> offsets_;  // per element of `to`; -1: padding
};

// Note [Cached weight reorders]
// oneDNN may choose a blocked layout for a convolution's weights; the
// weights then go through a reorder on every call. In inference the weights
// do not change between calls: the ResNet's 9 weight reorders were about 23
// us of its 0.2-0.28 ms batch-1 inference call. So a Weight layout keeps the
// reordered copy of a weight, keyed by the weight's storage, offset and the
// layout, with the storage's stamp (Note [Storage stamps] in
// msrt/tensor/tensor.h): a call with the same stamp uses the copy, any write
// to the weight (an optimizer step, a load) makes the next call reorder
// again. A copy is made when the same contents come a second time in the
// same layout: fresh tensors never get one, nor do training weights, which
// the optimizer writes every step, unless one step uses a weight twice in
// one layout (then the later uses of that step read the copy, which stays
// until the next step's write). Never for memory shared with the host
// (NumPy arrays, which change without a stamp); the copies kept are bounded
// (kWeightCacheBytes, least recently used out first). In the suite's
// training steps the forward and backward-data convolutions took their
// weights in different layouts, so they kept none.
inline constexpr size_t kWeightCacheBytes = size_t{64} << 20;

/// Weight-cache counters (for tests): uses of a kept copy, copies made.
struct WeightCacheStats {
  int64_t hits = 0, copies = 0;
  size_t bytes = 0;
};
WeightCacheStats GetWeightCacheStats();

/// A tensor's plain layout and the layout a primitive chose for it, with the
/// reorder between them when they differ (built once, cached with the
/// primitive).
class Layout {
 public:
  Layout() = default;
  /// For an input: reorders plain -> chosen.
  static Layout Input(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);
  /// For a weight (Note [Cached weight reorders]): as Input, but the
  /// reordered copy is kept and used again while the weight's storage keeps
  /// its stamp.
  static Layout Weight(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);
  /// For an output: reorders chosen -> plain.
  static Layout Output(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen);

  /// Input: `t` in the chosen layout (reordered into scratch when needed).
  dnnl::memory In(const Tensor& t, Scratch& scratch) const;
  /// Output: where the primitive writes; call Finish after it ran.
  dnnl::memory Out(const Tensor& t, Scratch& scratch) const;
  /// Output: copies the primitive's result into `t` when it used scratch.
  void Finish(const dnnl::memory& written, const Tensor& t) const;
  /// The layout the primitive chose.
  const dnnl::memory::desc& chosen() const { return chosen_; }

 private:
  dnnl::memory::desc plain_, chosen_;
  bool reorder_ = false;
  uint64_t cache_id_ = 0;  // Weight layouts: the pair of layouts' key in the weight cache (0: not cached)
  dnnl::reorder reorder_primitive_;
  OffsetReorder table_;  // replaces the primitive for small tensors
};

/// Runs `primitive` on this thread's stream and waits for it.
void Execute(const dnnl::primitive& primitive, const std::unordered_map<int, dnnl::memory>& args);

/// A cache key: the op, this thread's engine and thread count (syncing the
/// thread count, see SyncThreads), then whatever the kernel adds. Values
/// are appended as raw bytes: keys are built on every call.
class Key {
 public:
  explicit Key(std::string_view op, int thread_limit = 0);
  Key& Add(int64_t value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(value));
    return *this;
  }
  Key& Add(double value) {
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(value));
    return *this;
  }
  Key& Add(bool value) { return Add(static_cast<int64_t>(value)); }
  Key& Add(std::string_view text) {
    Add(static_cast<int64_t>(text.size()));
    bytes_.append(text);
    return *this;
  }
  Key& Add(const std::vector<std::string>& texts) {
    Add(static_cast<int64_t>(texts.size()));
    for (const std::string& t : texts) Add(std::string_view(t));
    return *this;
  }
  Key& Add(DType value) { return Add(static_cast<int64_t>(value)); }
  Key& Add(const Shape& shape) {
    Add(static_cast<int64_t>(shape.size()));
    for (int64_t d : shape) Add(d);
    return *this;
  }
  template <typename... Values>
  Key& AddAll(const Values&... values) {
    (Add(values), ...);
    return *this;
  }
  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

std::shared_ptr<void> CacheFind(const Key& key);
void CacheInsert(const Key& key, std::shared_ptr<void> value);

/// The cached T under `key`, built by make() (returning a T) on a miss.
template <typename T, typename Make>
std::shared_ptr<T> Cached(const Key& key, Make&& make) {
  if (auto hit = CacheFind(key)) return std::static_pointer_cast<T>(hit);
  auto built = std::make_shared<T>(make());
  CacheInsert(key, built);
  return built;
}

/// Calls body.template operator()<T>() with T float or double (the reference
/// kernels' types); TypeError naming `op` for other dtypes.
template <typename Body>
void DispatchFloat(DType dtype, std::string_view op, Body&& body) {
  if (dtype == DType::kFloat32) return body.template operator()<float>();
  if (dtype == DType::kFloat64) return body.template operator()<double>();
  ops::OpError(ErrorKind::kType, op, StrCat("has no reference kernel for dtype ", DTypeName(dtype)));
}

}  // namespace msrt::kernels::onednn

/// Registers an op's oneDNN kernel and, below it, the reference kernel that
/// runs the cases oneDNN does not support.
#define MSRT_ONEDNN_KERNELS(op_name, onednn_fn, reference_fn)                    \
  MSRT_REGISTER_KERNEL({.op = op_name,                                           \
                        .impl = "onednn",                                        \
                        .priority = ::msrt::kernels::onednn::kOneDnnPriority,    \
                        .supports = &::msrt::kernels::onednn::OneDnnSupports,    \
                        .run = &onednn_fn});                                     \
  MSRT_REGISTER_KERNEL({.op = op_name,                                           \
                        .impl = "reference",                                     \
                        .priority = ::msrt::kernels::onednn::kReferencePriority, \
                        .supports = &::msrt::kernels::onednn::ReferenceSupports, \
                        .run = &reference_fn})

/// Registers an op's half-type kernel that runs one-thread float32 oneDNN
/// primitives on converted slices (Note [float16 products]), above the op's
/// oneDNN kernel.
#define MSRT_HALF_SLICES_KERNEL(op_name, supports_fn, run_fn)                     \
  MSRT_REGISTER_KERNEL({.op = op_name,                                            \
                        .impl = "onednn float32 slices",                          \
                        .priority = ::msrt::kernels::onednn::kOneDnnPriority + 1, \
                        .supports = &supports_fn,                                 \
                        .run = &run_fn})
