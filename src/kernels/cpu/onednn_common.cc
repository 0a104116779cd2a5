#include "kernels/cpu/onednn_common.h"

#include <pthread.h>

#include <omp.h>

#include <atomic>
#include <list>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "core/thread_pool.h"
#include "kernels/kernel.h"
#include "msrt/core/errors.h"

namespace msrt::kernels::onednn {
namespace {

struct ThreadEngine {
  int index;
  dnnl::engine engine;
  dnnl::stream stream;
};

ThreadEngine& Current() {
  static std::atomic<int> next_index{0};
  // Never destroyed: cached primitives refer to their engine, and a thread's
  // cache entries (keyed by its index) may outlive the thread.
  thread_local ThreadEngine* current = [] {
    auto* t = new ThreadEngine{next_index.fetch_add(1), dnnl::engine(dnnl::engine::kind::cpu, 0), {}};
    t->stream = dnnl::stream(t->engine);
    return t;
  }();
  return *current;
}

// The LRU of Note [oneDNN primitive cache].
class PrimitiveCache {
 public:
  static constexpr size_t kCapacity = 256;

  std::shared_ptr<void> Find(const std::string& key) {
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return nullptr;
    }
    ++hits_;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
  }

  void Insert(const std::string& key, std::shared_ptr<void> value) {
    std::shared_ptr<void> evicted;  // released outside the lock
    std::lock_guard lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      it->second->second = std::move(value);
      entries_.splice(entries_.begin(), entries_, it->second);
      return;
    }
    entries_.emplace_front(key, std::move(value));
    index_[key] = entries_.begin();
    if (entries_.size() > kCapacity) {
      evicted = std::move(entries_.back().second);
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
  }

  PrimitiveCacheStats Stats() {
    std::lock_guard lock(mutex_);
    return {hits_, misses_, static_cast<int64_t>(entries_.size()), static_cast<int64_t>(kCapacity)};
  }

  void Clear() {
    std::list<std::pair<std::string, std::shared_ptr<void>>> dropped;
    std::lock_guard lock(mutex_);
    dropped.swap(entries_);
    index_.clear();
    hits_ = misses_ = 0;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<std::string, std::shared_ptr<void>>> entries_;  // most recent first
  std::unordered_map<std::string, std::list<std::pair<std::string, std::shared_ptr<void>>>::iterator> index_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

PrimitiveCache& Cache() {
  static auto* cache = new PrimitiveCache();
  return *cache;
}

// msrt's unary elementwise ops that oneDNN applies as eltwise post-ops.
std::optional<dnnl::algorithm> EltwiseFor(std::string_view op) {
  using A = dnnl::algorithm;
  static const std::pair<std::string_view, A> kTable[] = {
      {"relu", A::eltwise_relu},     {"sigmoid", A::eltwise_logistic}, {"tanh", A::eltwise_tanh},
      {"exp", A::eltwise_exp},       {"abs", A::eltwise_abs},          {"sqrt", A::eltwise_sqrt},
      {"square", A::eltwise_square}, {"log", A::eltwise_log}};
  for (const auto& [name, algorithm] : kTable) {
    if (name == op) return algorithm;
  }
  return std::nullopt;
}

}  // namespace

Epilogue EpilogueOf(const Dict& attrs) {
  Epilogue out;
  const Value* list = attrs.Find(::msrt::kernels::kEpilogueAttr);
  if (list == nullptr) return out;
  for (const Value& name : list->as_list()) {
    out.ops.push_back(name.as_string());
    if (!EltwiseFor(out.ops.back())) out.supported = false;
  }
  return out;
}

dnnl::post_ops Epilogue::PostOps() const {
  dnnl::post_ops post_ops;
  for (const std::string& name : ops) {
    if (auto algorithm = EltwiseFor(name)) post_ops.append_eltwise(1.0f, *algorithm, 0.0f, 0.0f);
  }
  return post_ops;
}

bool OneDnnSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return Supports(in[0].dtype) && EpilogueOf(attrs).supported;
}

bool ReferenceSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return (in[0].dtype == DType::kFloat64 || in[0].dtype == DType::kFloat32) &&
         !attrs.Contains(::msrt::kernels::kEpilogueAttr);
}

void ApplyEpilogueInPlace(const Epilogue& epilogue, Tensor& t) {
  for (const std::string& name : epilogue.ops) {
    const ops::OpDef& op = ops::GetOp(name);
    std::vector<ops::TensorMeta> metas{{t.shape(), t.dtype()}};
    Dict attrs = ops::NormalizeAttrs(op, {});
    const kernels::KernelDef* kernel = kernels::SelectKernel(name, t.device(), metas, attrs);
    MSRT_INTERNAL_ASSERT(kernel != nullptr, "no kernel for epilogue op ", name);
    std::vector<Tensor> in{t}, out{t};
    kernels::KernelArgs args{op, in, out, attrs};
    kernel->run(args);
  }
}

dnnl::engine& Engine() { return Current().engine; }
dnnl::stream& Stream() { return Current().stream; }

namespace {
// Whether this thread led an OpenMP team, and whether that team stayed
// behind in the parent of a fork (Note [Fork] in src/runtime/fork.cc).
thread_local bool t_led_team = false;
thread_local bool t_team_lost = false;
}  // namespace

int SyncThreads(int limit) {
  thread_local int applied = -1;
  // oneDNN splits its work (reductions included) by the team size, so
  // deterministic="ON" runs its primitives on one thread.
  int threads = DeterministicKernels() ? 1 : IntraOpThreads();
  if (limit > 0 && limit < threads) threads = limit;
  // GNU OpenMP keeps a thread's team across parallel regions and does not
  // rebuild it in a fork child: a thread whose team stayed behind runs its
  // primitives on itself alone (other threads start teams of their own).
  if (t_team_lost) threads = 1;
  if (threads > 1) t_led_team = true;
  if (threads != applied) {
    omp_set_num_threads(threads);
    applied = threads;
  }
  return threads;
}

namespace {
// Runs in the child on the thread that forked.
void ForgetTeamInForkChild() { t_team_lost = t_team_lost || t_led_team; }
const bool kForkHandlerInstalled = (pthread_atfork(nullptr, nullptr, &ForgetTeamInForkChild), true);
}  // namespace

bool Supports(DType dtype) {
  if (dtype == DType::kFloat32) return true;
  if (dtype == DType::kBFloat16) {
    static const bool avx512 = [] {
      auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
      auto needed = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
      return (isa & needed) == needed;
    }();
    return avx512;
  }
  return false;
}

dnnl::memory::data_type DataType(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return dnnl::memory::data_type::f32;
    case DType::kBFloat16: return dnnl::memory::data_type::bf16;
    default: break;
  }
  MSRT_INTERNAL_ASSERT(false, "oneDNN kernels got dtype ", DTypeName(dtype));
  return dnnl::memory::data_type::undef;
}

dnnl::memory::dims Dims(const Shape& shape) { return dnnl::memory::dims(shape.begin(), shape.end()); }

dnnl::memory::desc PlainDesc(const dnnl::memory::dims& dims, DType dtype) {
  dnnl::memory::dims strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<dnnl::memory::dim>(dims[i], 1);
  return dnnl::memory::desc(dims, DataType(dtype), strides);
}

dnnl::memory::desc ActivationDesc(const dnnl::memory::dims& dims, DType dtype, bool channels_last) {
  if (!channels_last) return PlainDesc(dims, dtype);
  return dnnl::memory::desc(dims, DataType(dtype), dnnl::memory::format_tag::nhwc);
}

dnnl::memory::desc StridedDesc(const dnnl::memory::dims& dims, const dnnl::memory::dims& strides, DType dtype) {
  return dnnl::memory::desc(dims, DataType(dtype), strides);
}

dnnl::memory::desc AnyDesc(const dnnl::memory::dims& dims, DType dtype) {
  return dnnl::memory::desc(dims, DataType(dtype), dnnl::memory::format_tag::any);
}

dnnl::memory Wrap(const dnnl::memory::desc& desc, const Tensor& t) { return dnnl::memory(desc, Engine(), t.raw()); }

dnnl::memory Scratch::Allocate(const dnnl::memory::desc& desc) {
  auto bytes = static_cast<int64_t>(desc.get_size());
  buffers_.push_back(Tensor::Empty({std::max<int64_t>(bytes, 1)}, DType::kUInt8));
  return dnnl::memory(desc, Engine(), buffers_.back().raw());
}

// Note [Small reorders]
// A primitive's weights are usually in a blocked layout of oneDNN's choice,
// and a training step reorders them from plain (and their gradient back)
// every step. For the small weights of small networks, running a reorder
// primitive (argument checks, an OpenMP region: waking the other threads)
// costs several times the copy itself. A tensor of at most
// OffsetReorder::kMaxElements elements is instead copied through a table of
// element offsets, built once with the layouts (by running the reorder
// primitive once on the elements' own indices) and cached with the
// primitive that chose them.
OffsetReorder OffsetReorder::Build(const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
  OffsetReorder out;
  using dt = dnnl::memory::data_type;
  if (from.data_type() != dt::f32 || to.data_type() != dt::f32) return out;
  auto from_elements = static_cast<int64_t>(from.get_size() / sizeof(float));
  auto to_elements = static_cast<int64_t>(to.get_size() / sizeof(float));
  if (from_elements > kMaxElements || to_elements > kMaxElements || from_elements == 0 || to_elements == 0) return out;
  // The table writes every element of `to`: not for a plain strided `to` with
  // gaps (a view into a larger tensor), whose gaps are not this tensor's.
  int64_t dense = 1;
  for (dnnl::memory::dim d : to.dims()) dense *= d;
  const dnnl_memory_desc_t& c = to.data;
  if (c.format_kind != dnnl_blocked || (c.format_desc.blocking.inner_nblks == 0 && to_elements != dense)) return out;
  // Each source element holds its index + 1 (exact in float32 this small);
  // where the reorder writes 0 the destination is padding.
  std::vector<float> indices(static_cast<size_t>(from_elements));
  for (int64_t i = 0; i < from_elements; ++i) indices[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  std::vector<float> placed(static_cast<size_t>(to_elements), 0.0f);
  dnnl::memory src(from, Engine(), indices.data());
  dnnl::memory dst(to, Engine(), placed.data());
  dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to)).execute(Stream(), src, dst);
  Stream().wait();
  auto offsets = std::make_shared<std::vector<int32_t>>(static_cast<size_t>(to_elements));
  for (int64_t i = 0; i < to_elements; ++i) (*offsets)[static_cast<size_t>(i)] = static_cast<int32_t>(placed[i]) - 1;
  out.offsets_ = std::move(offsets);
  return out;
}

void OffsetReorder::Run(const void* from, void* to) const {
  const auto* src = static_cast<const float*>(from);
  auto* dst = static_cast<float*>(to);
  const int32_t* offsets = offsets_->data();
  size_t n = offsets_->size();
  for (size_t i = 0; i < n; ++i) dst[i] = offsets[i] >= 0 ? src[offsets[i]] : 0.0f;
}

Layout Layout::Input(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen) {
  Layout l;
  l.plain_ = plain;
  l.chosen_ = chosen;
  l.reorder_ = plain != chosen;
  if (l.reorder_) {
    l.table_ = OffsetReorder::Build(plain, chosen);
    if (l.table_.empty())
      l.reorder_primitive_ = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), chosen));
  }
  return l;
}

Layout Layout::Output(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen) {
  Layout l;
  l.plain_ = plain;
  l.chosen_ = chosen;
  l.reorder_ = plain != chosen;
  if (l.reorder_) {
    l.table_ = OffsetReorder::Build(chosen, plain);
    if (l.table_.empty())
      l.reorder_primitive_ = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), chosen, Engine(), plain));
  }
  return l;
}

namespace {

// The kept copies of Note [Cached weight reorders].
class WeightCache {
 public:
  static constexpr size_t kMaxEntries = 4096;

  struct Key {
    const Storage* storage;
    size_t offset;
    uint64_t layout;
    bool operator==(const Key&) const = default;
  };
  // What to do for a weight: use `copy`, or reorder (into a copy to keep when `keep`).
  struct Decision {
    Tensor copy;
    bool keep = false;
  };

  Decision Find(const Key& key, const std::shared_ptr<Storage>& storage, uint64_t stamp) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      lru_.push_front(key);
      entries_.emplace(key, Entry{storage, stamp, Tensor(), lru_.begin()});
      while (entries_.size() > kMaxEntries) Evict();
      return {};
    }
    Entry& e = it->second;
    lru_.splice(lru_.begin(), lru_, e.lru);
    if (e.owner.lock() != storage || e.stamp != stamp) {  // another storage at that address, or new contents
      Drop(e);
      e.owner = storage;
      e.stamp = stamp;
      return {};
    }
    if (e.copy.defined()) {
      ++stats_.hits;
      return {e.copy, false};
    }
    return {Tensor(), true};  // the same contents a second time
  }

  void Keep(const Key& key, uint64_t stamp, Tensor copy) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.stamp != stamp || it->second.copy.defined()) return;
    stats_.bytes += copy.nbytes();
    ++stats_.copies;
    it->second.copy = std::move(copy);
    while (stats_.bytes > kWeightCacheBytes && !lru_.empty()) Evict();
  }

  WeightCacheStats stats() {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  struct KeyHash {
    size_t operator()(const Key& k) const {
      size_t h = std::hash<const void*>()(k.storage);
      h ^= std::hash<size_t>()(k.offset) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h ^= std::hash<uint64_t>()(k.layout) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      return h;
    }
  };
  struct Entry {
    std::weak_ptr<Storage> owner;
    uint64_t stamp;
    Tensor copy;
    std::list<Key>::iterator lru;
  };

  void Drop(Entry& e) {
    if (!e.copy.defined()) return;
    stats_.bytes -= e.copy.nbytes();
    e.copy = Tensor();
  }
  void Evict() {
    auto it = entries_.find(lru_.back());
    Drop(it->second);
    entries_.erase(it);
    lru_.pop_back();
  }

  std::mutex mutex_;
  std::unordered_map<Key, Entry, KeyHash> entries_;
  std::list<Key> lru_;  // most recently used first
  WeightCacheStats stats_;
};

WeightCache& Weights() {
  static auto* cache = new WeightCache();  // kernels may run during exit
  return *cache;
}

}  // namespace

WeightCacheStats GetWeightCacheStats() { return Weights().stats(); }

Layout Layout::Weight(const dnnl::memory::desc& plain, const dnnl::memory::desc& chosen) {
  Layout l = Input(plain, chosen);
  if (!l.reorder_) return l;
  // One id per pair of layouts, whichever primitive (thread, thread count) uses them.
  static std::mutex mutex;
  static auto* ids = new std::unordered_map<std::string, uint64_t>();
  std::string layouts(reinterpret_cast<const char*>(&plain.data), sizeof(plain.data));
  layouts.append(reinterpret_cast<const char*>(&chosen.data), sizeof(chosen.data));
  std::lock_guard<std::mutex> lock(mutex);
  l.cache_id_ = ids->emplace(std::move(layouts), ids->size() + 1).first->second;
  return l;
}

dnnl::memory Layout::In(const Tensor& t, Scratch& scratch) const {
  dnnl::memory user = Wrap(plain_, t);
  if (!reorder_) return user;
  const std::shared_ptr<Storage>& storage = t.impl()->storage;
  if (cache_id_ != 0 && !storage->shared_with_host()) {
    const uint64_t stamp = storage->stamp();
    WeightCache::Key key{storage.get(), t.impl()->offset, cache_id_};
    WeightCache::Decision d = Weights().Find(key, storage, stamp);
    if (d.copy.defined()) {
      scratch.Keep(d.copy);
      return Wrap(chosen_, d.copy);
    }
    if (d.keep) {
      Tensor copy = Tensor::Empty({static_cast<int64_t>(chosen_.get_size())}, DType::kUInt8);
      dnnl::memory converted = Wrap(chosen_, copy);
      if (!table_.empty()) {
        table_.Run(t.raw(), converted.get_data_handle());
      } else {
        reorder_primitive_.execute(Stream(), user, converted);
        Stream().wait();  // complete before another thread may read it
      }
      Weights().Keep(key, stamp, copy);
      scratch.Keep(std::move(copy));
      return converted;
    }
  }
  dnnl::memory converted = scratch.Allocate(chosen_);
  if (!table_.empty()) {
    table_.Run(t.raw(), converted.get_data_handle());
  } else {
    reorder_primitive_.execute(Stream(), user, converted);
  }
  return converted;
}

dnnl::memory Layout::Out(const Tensor& t, Scratch& scratch) const {
  return reorder_ ? scratch.Allocate(chosen_) : Wrap(plain_, t);
}

void Layout::Finish(const dnnl::memory& written, const Tensor& t) const {
  if (!reorder_) return;
  if (!table_.empty()) {
    table_.Run(written.get_data_handle(), t.raw());
    return;
  }
  dnnl::memory user = Wrap(plain_, t);
  reorder_primitive_.execute(Stream(), const_cast<dnnl::memory&>(written), user);
  Stream().wait();
}

void Execute(const dnnl::primitive& primitive, const std::unordered_map<int, dnnl::memory>& args) {
  primitive.execute(Stream(), args);
  Stream().wait();
}

Key::Key(std::string_view op, int thread_limit) : bytes_(op) {
  bytes_.push_back('\0');
  Add(static_cast<int64_t>(Current().index));
  Add(static_cast<int64_t>(SyncThreads(thread_limit)));
}

std::shared_ptr<void> CacheFind(const Key& key) { return Cache().Find(key.str()); }
void CacheInsert(const Key& key, std::shared_ptr<void> value) { Cache().Insert(key.str(), std::move(value)); }

PrimitiveCacheStats CacheStats() { return Cache().Stats(); }
void ClearCache() { Cache().Clear(); }

}  // namespace msrt::kernels::onednn
