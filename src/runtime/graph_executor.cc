// See Note [Graph execution] in graph_executor.h.
#include "runtime/graph_executor.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include "core/interrupt.h"
#include "core/thread_pool.h"

#include "core/observer_list.h"
#include "core/random.h"
#include "core/views.h"
#include "runtime/eager.h"
#include "runtime/fused_kernel.h"
#include "runtime/launch.h"

namespace msrt::runtime {
namespace {

ObserverList<GraphObserver>& GraphObservers() {
  static auto* list = new ObserverList<GraphObserver>();  // graphs may run during exit
  return *list;
}

bool SameMeta(const ops::TensorMeta& m, const Tensor& t) { return m.shape == t.shape() && m.dtype == t.dtype(); }

std::string Describe(const std::vector<Tensor>& tensors) {
  std::string out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    out += StrCat(i ? ", " : "", DTypeName(tensors[i].dtype()), ShapeRepr(tensors[i].shape()));
  }
  return out;
}

// Threads that run graph steps concurrently (inter_op_parallel_num), kept
// for the process. One concurrent run at a time uses them; another run
// meanwhile gets none and runs its steps on its own thread.
class SchedulerThreads {
 public:
  static SchedulerThreads& Get() {
    static auto* threads = new SchedulerThreads();
    return *threads;
  }

  /// Runs `work` on the caller and on up to `helpers` other threads; returns
  /// when every one has returned.
  void Run(int helpers, const std::function<void()>& work) {
    std::unique_lock run(run_mutex_, std::try_to_lock);
    if (!run.owns_lock()) helpers = 0;
    if (helpers > 0) {
      std::lock_guard lock(mutex_);
      while (static_cast<int>(threads_.size()) < helpers) {
        int index = static_cast<int>(threads_.size());
        threads_.emplace_back([this, index] { Loop(index); });
        pthread_setname_np(threads_.back().native_handle(), "msrt-sched");
        threads_.back().detach();
      }
      work_ = &work;
      helpers_ = helpers;
      outstanding_ = helpers;
      ++generation_;
    }
    wake_.notify_all();
    work();
    if (helpers > 0) {
      std::unique_lock lock(mutex_);
      done_.wait(lock, [this] { return outstanding_ == 0; });
      work_ = nullptr;
    }
  }

 private:
  void Loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void()>* work;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return generation_ != seen && work_ != nullptr; });
        seen = generation_;
        if (index >= helpers_) continue;
        work = work_;
      }
      (*work)();
      std::lock_guard lock(mutex_);
      if (--outstanding_ == 0) done_.notify_all();
    }
  }

  std::mutex run_mutex_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void()>* work_ = nullptr;
  int helpers_ = 0;
  int outstanding_ = 0;
  uint64_t generation_ = 0;
};

bool HasDynamicShapes(const ir::Graph& g) {
  for (const ir::Node& n : g.nodes()) {
    if (n.dead) continue;
    for (const ops::TensorMeta& m : n.outputs) {
      if (IsDynamic(m.shape)) return true;
    }
  }
  return false;
}

// `general` with the shapes its nodes have for `inputs` (whose shapes fit the
// graph's inputs): inference again, node by node. Every static dimension must
// come out as compiled, and an operand of an elementwise op (fused or not)
// that the graph gives its result's shape must have it still (fusion and the
// layout pass rely on it: Note [Dynamic shapes]).
std::shared_ptr<ir::Graph> SpecializeGraph(const ir::Graph& general, const std::vector<Tensor>& inputs) {
  auto g = std::make_shared<ir::Graph>(general);
  auto refuse = [&](int32_t id, const std::string& what) {
    const ir::Node& n = g->node(id);
    throw RuntimeError(StrCat("Graph '", g->name(), "' was compiled once for dynamic shapes, but with inputs ",
                              Describe(inputs), ", node ", g->NodeName(id),
                              n.op != nullptr ? StrCat(" ('", n.op->name, "')") : std::string(),
                              n.source.empty() ? "" : ", defined at " + n.source, ", ", what,
                              ". Leave the dimensions that make the difference fixed in set_inputs (or "
                              "input_signature) to compile one graph per shape."));
  };
  auto settle = [&](int32_t id, const ops::TensorMeta& compiled, const ops::TensorMeta& now) {
    if (now.dtype != compiled.dtype || !ShapeMatches(compiled.shape, now.shape)) {
      refuse(id, StrCat("gives ", DTypeName(now.dtype), ShapeRepr(now.shape), " where the graph has ",
                        DTypeName(compiled.dtype), ShapeRepr(compiled.shape)));
    }
  };
  // Operands (compiled, now) against a result (compiled, now).
  auto same_as_result = [&](int32_t id, const std::vector<ops::TensorMeta>& compiled_in,
                            const std::vector<ops::TensorMeta>& now_in, const ops::TensorMeta& compiled_out,
                            const ops::TensorMeta& now_out) {
    for (size_t k = 0; k < compiled_in.size(); ++k) {
      if (IsDynamic(compiled_in[k].shape) && compiled_in[k].shape == compiled_out.shape &&
          now_in[k].shape != now_out.shape) {
        refuse(id, StrCat("operand ", k, " is ", ShapeRepr(now_in[k].shape), " and its result ",
                          ShapeRepr(now_out.shape), ", where the graph gives both ", ShapeRepr(compiled_out.shape)));
      }
    }
  };
  for (size_t k = 0; k < inputs.size(); ++k) {
    int32_t id = g->inputs()[k];
    ops::TensorMeta now{inputs[k].shape(), inputs[k].dtype()};
    settle(id, g->node(id).outputs[0], now);
    g->node(id).outputs[0] = now;
  }
  for (size_t i = 0; i < g->nodes().size(); ++i) {
    auto id = static_cast<int32_t>(i);
    ir::Node& n = g->node(id);
    if (n.dead || n.kind != ir::NodeKind::kOp) continue;
    std::vector<ops::TensorMeta> compiled_in, now_in;
    for (const ir::ValueRef& v : n.inputs) {
      compiled_in.push_back(general.Meta(v));
      now_in.push_back(g->Meta(v));
    }
    std::vector<ops::TensorMeta> now;
    if (n.fused.empty()) {
      now = n.op->infer(now_in, n.attrs);
    } else {
      for (ir::FusedOp& step : n.fused) {
        std::vector<ops::TensorMeta> compiled_operands, operands;
        for (int32_t o : step.operands) {
          auto u = static_cast<size_t>(o >= 0 ? o : -o - 1);
          compiled_operands.push_back(o >= 0 ? compiled_in.at(u) : general.node(id).fused.at(u).output);
          operands.push_back(o >= 0 ? now_in.at(u) : n.fused.at(u).output);
        }
        ops::TensorMeta out = step.op->infer(operands, step.attrs).at(0);
        settle(id, step.output, out);
        same_as_result(id, compiled_operands, operands, step.output, out);
        step.output = out;
      }
      for (int32_t step : n.fused_outputs) now.push_back(n.fused.at(static_cast<size_t>(step)).output);
    }
    if (now.size() != n.outputs.size()) refuse(id, "gives another number of outputs");
    for (size_t k = 0; k < now.size(); ++k) {
      settle(id, n.outputs[k], now[k]);
      if (n.fused.empty() && n.op->props.elementwise) same_as_result(id, compiled_in, now_in, n.outputs[k], now[k]);
      n.outputs[k] = now[k];
    }
  }
  return g;
}

}  // namespace

GraphExecutable::GraphExecutable(std::shared_ptr<const ir::Graph> graph, GraphOptions options)
    : graph_(std::move(graph)), options_(options) {
  dynamic_ = HasDynamicShapes(*graph_);
  if (dynamic_) {  // planned per input shapes, in Run
    const auto& nodes = graph_->nodes();
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (!nodes[i].dead && nodes[i].kind == ir::NodeKind::kWeight)
        weight_bindings_.push_back({-1, static_cast<int32_t>(i)});
    }
    return;
  }
  Build();
  if (options_.memory_level != 0 && options_.buffer_reuse) RecomputeAcrossPeaks();
  PlanMemory();
  BuildDependencies();
  PlanKeptResults();
}

// Note [Results kept from weights]
// A step that reads only weights and constants, or results of such steps,
// computes the same results on every run while its inputs keep their
// contents: the float16 rounding of each weight in an amp network's
// inference (Note [float16 held in float32] in compiler/half_in_float32.h),
// which reads and writes as many bytes as the layer's product reads. Such a
// step remembers the storages, offsets and stamps (Note [Storage stamps] in
// msrt/tensor/tensor.h) of the inputs it read; when the same contents come a
// second time it writes its results into memory of its own instead of the
// arena and keeps them, and later runs that find the same contents use them
// without running the kernel. Any write to an input (an optimizer update, a
// load) gives it a new stamp, and the step computes again into the arena
// and lets the kept results go. So a training step, whose weights change
// every step, keeps nothing, and inference keeps each weight's rounded copy.
// Only pure steps (no side effects, no random stream, no in-place write),
// whose results are neither returned (the caller may write them) nor
// written in place by a later step nor views; never for memory shared with
// the host (NumPy arrays change without a stamp); at most kMaxKeptBytes per
// executable. The results are those the kernel would compute: nothing but
// the step writes the kept memory, and its stamps are checked too.
void GraphExecutable::PlanKeptResults() {
  const ir::Graph& g = *graph_;
  std::vector<bool> derived(slot_meta_.size(), false);  // holds weights, constants or results derived from them
  for (const Binding& b : weight_bindings_) derived[static_cast<size_t>(b.slot)] = true;
  for (const Binding& b : constant_bindings_) derived[static_cast<size_t>(b.slot)] = true;
  std::vector<bool> returned(slot_meta_.size(), false);
  for (int32_t s : output_slots_) returned[static_cast<size_t>(Root(s))] = true;
  for (Step& step : steps_) {
    const ops::OpProperties& p = step.op->props;
    bool pure = !p.random && !p.side_effect && !p.data_dependent_shape && !g.HasSideEffects(step.node) &&
                !step.inputs.empty() && !step.outputs.empty() && step.meta_stand_ins.empty();
    for (int32_t in : step.inputs) pure = pure && derived[static_cast<size_t>(Root(in))];
    for (int32_t out : step.outputs) {
      const auto o = static_cast<size_t>(out);
      pure = pure && alias_of_[o] < 0 && view_of_[o] < 0 && Root(out) == out && !written_[o] && !returned[o];
    }
    if (!pure) continue;
    step.kept = std::make_shared<Kept>();
    for (int32_t out : step.outputs) derived[static_cast<size_t>(out)] = true;
  }
}

void GraphExecutable::RunKept(const Step& step, std::vector<Tensor>& slots, const std::vector<Tensor>& in,
                              const Dict& attrs, const LaunchSite& site) {
  Kept& kept = *step.kept;
  bool same = kept.storages.size() == in.size();
  bool host = false;
  std::vector<uint64_t> stamps;
  for (size_t k = 0; k < in.size(); ++k) {
    const std::shared_ptr<Storage>& storage = in[k].impl()->storage;
    host = host || storage == nullptr || storage->shared_with_host();
    stamps.push_back(storage == nullptr ? 0 : storage->stamp());
    same = same && storage != nullptr && kept.storages[k].lock() == storage &&
           kept.offsets[k] == in[k].impl()->offset && kept.stamps[k] == stamps[k];
  }
  for (size_t k = 0; same && k < kept.outputs.size(); ++k) {
    same = kept.outputs[k].impl()->storage->stamp() == kept.output_stamps[k];
  }
  if (same && !kept.outputs.empty() && !host) {
    for (size_t k = 0; k < step.outputs.size(); ++k) slots[static_cast<size_t>(step.outputs[k])] = kept.outputs[k];
    kept_reuses_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  size_t bytes = 0;
  for (int32_t s : step.outputs) bytes += MetaBytes(slot_meta_[static_cast<size_t>(s)]);
  if (!kept.outputs.empty()) {  // new contents: the kept results go
    kept.outputs.clear();
    kept.output_stamps.clear();
    kept_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
  }
  // The same contents a second time: keep what the step computes now.
  bool keep = same && !host && kept_bytes_.load(std::memory_order_relaxed) + bytes <= kMaxKeptBytes;
  std::vector<Tensor> out;
  for (int32_t s : step.outputs) {
    const ops::TensorMeta& m = slot_meta_[static_cast<size_t>(s)];
    out.push_back(keep ? Tensor::Empty(m.shape, m.dtype, options_.device) : OutputTensor(s, m, slots));
    slots[static_cast<size_t>(s)] = out.back();
  }
  Launch(step, in, out, attrs, site);
  kept.storages.clear();
  kept.offsets.clear();
  for (const Tensor& t : in) {
    kept.storages.push_back(t.impl()->storage);
    kept.offsets.push_back(t.impl()->offset);
  }
  kept.stamps = std::move(stamps);
  if (keep) {
    for (const Tensor& t : out) kept.output_stamps.push_back(t.impl()->storage->stamp());
    kept.outputs = std::move(out);
    kept_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }
}

std::shared_ptr<GraphExecutable> GraphExecutable::PlanFor(const std::vector<Tensor>& inputs) {
  std::vector<Shape> key;
  key.reserve(inputs.size());
  for (const Tensor& t : inputs) key.push_back(t.shape());
  for (auto it = plans_.begin(); it != plans_.end(); ++it) {
    if (it->first == key) {
      plans_.splice(plans_.begin(), plans_, it);
      return plans_.front().second;
    }
  }
  auto plan = std::make_shared<GraphExecutable>(SpecializeGraph(*graph_, inputs), options_);
  plans_.emplace_front(std::move(key), plan);
  ++plans_made_;
  if (plans_.size() > kMaxShapePlans) plans_.pop_back();
  return plan;
}

void GraphExecutable::BuildDependencies() {
  size_t n = steps_.size();
  std::vector<std::set<int32_t>> preds(n);
  auto root = [this](int32_t s) { return Root(s); };
  written_.assign(slot_meta_.size(), false);
  std::vector<int32_t> last_writer(slot_meta_.size(), -1);
  std::vector<std::vector<int32_t>> readers(slot_meta_.size());
  std::vector<std::vector<int32_t>> users(slot_meta_.size());  // every step touching a slot's bytes
  int32_t last_side_effect = -1;
  for (size_t i = 0; i < n; ++i) {
    const Step& step = steps_[i];
    auto me = static_cast<int32_t>(i);
    std::vector<int32_t> writes;
    if (step.plan == nullptr) {
      if (step.op->props.inplace) writes.push_back(root(step.inputs.at(0)));
      for (int w : step.op->props.writes_inputs) writes.push_back(root(step.inputs.at(static_cast<size_t>(w))));
    }
    // A meta-only input (Note [Meta-only inputs]) is no read of its bytes:
    // its step is no user of them, and O1 may hand them to a value made
    // earlier in the order (a dependency on it would close a cycle).
    auto reads_bytes = [&step](size_t k) {
      return !(k < step.meta_stand_ins.size() && step.meta_stand_ins[k].defined());
    };
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      int32_t r = root(step.inputs[k]);
      if (last_writer[static_cast<size_t>(r)] >= 0) preds[i].insert(last_writer[static_cast<size_t>(r)]);
      if (reads_bytes(k)) users[static_cast<size_t>(r)].push_back(me);
    }
    for (int32_t w : writes) {
      written_[static_cast<size_t>(w)] = true;
      for (int32_t reader : readers[static_cast<size_t>(w)]) preds[i].insert(reader);
      readers[static_cast<size_t>(w)].clear();
      last_writer[static_cast<size_t>(w)] = me;
    }
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      int32_t r = root(step.inputs[k]);
      if (reads_bytes(k) && std::find(writes.begin(), writes.end(), r) == writes.end()) {
        readers[static_cast<size_t>(r)].push_back(me);
      }
    }
    for (int32_t s : step.outputs) {
      if (view_of_[static_cast<size_t>(s)] >= 0) {
        // A view is made by its step: readers of the view (found as readers of
        // its source's bytes) run after it.
        last_writer[static_cast<size_t>(root(s))] = me;
      } else if (alias_of_[static_cast<size_t>(s)] < 0) {
        last_writer[static_cast<size_t>(s)] = me;
        users[static_cast<size_t>(s)].push_back(me);
      }
    }
    if (step.op->props.side_effect) {
      if (last_side_effect >= 0) preds[i].insert(last_side_effect);
      last_side_effect = me;
    }
  }
  // O1: a buffer's producer waits for every user of the bytes it reuses.
  std::vector<int32_t> producer(slot_meta_.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t s : steps_[i].outputs) producer[static_cast<size_t>(s)] = static_cast<int32_t>(i);
  }
  for (size_t b = 0; b < slot_meta_.size(); ++b) {
    if (arena_offset_[b] < 0) continue;
    size_t b_lo = static_cast<size_t>(arena_offset_[b]), b_hi = b_lo + MetaBytes(slot_meta_[b]);
    for (size_t a = 0; a < slot_meta_.size(); ++a) {
      if (a == b || arena_offset_[a] < 0 || producer[a] >= producer[b]) continue;
      size_t a_lo = static_cast<size_t>(arena_offset_[a]), a_hi = a_lo + MetaBytes(slot_meta_[a]);
      if (a_lo < b_hi && b_lo < a_hi) {
        for (int32_t user : users[a]) {
          if (user != producer[b]) preds[static_cast<size_t>(producer[b])].insert(user);
        }
      }
    }
  }
  successors_.assign(n, {});
  predecessor_count_.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t p : preds[i]) {
      successors_[static_cast<size_t>(p)].push_back(static_cast<int32_t>(i));
      ++predecessor_count_[i];
    }
  }
}

void GraphExecutable::Build() {
  const ir::Graph& g = *graph_;
  const auto& nodes = g.nodes();
  slot_of_node_.assign(nodes.size(), -1);
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].dead) continue;
    slot_of_node_[i] = static_cast<int32_t>(slot_meta_.size());
    for (const auto& m : nodes[i].outputs) slot_meta_.push_back(m);
  }
  alias_of_.assign(slot_meta_.size(), -1);
  view_of_.assign(slot_meta_.size(), -1);
  auto slot = [this](ir::ValueRef v) {
    int32_t s = slot_of_node_.at(static_cast<size_t>(v.node)) + v.index;
    while (alias_of_[static_cast<size_t>(s)] >= 0) s = alias_of_[static_cast<size_t>(s)];
    return s;
  };
  for (int32_t id : g.inputs()) input_bindings_.push_back({slot_of_node_[static_cast<size_t>(id)], id});
  for (size_t i = 0; i < nodes.size(); ++i) {
    const ir::Node& n = nodes[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead) continue;
    if (n.kind == ir::NodeKind::kWeight) weight_bindings_.push_back({slot_of_node_[i], id});
    if (n.kind == ir::NodeKind::kConstant) constant_bindings_.push_back({slot_of_node_[i], id});
    if (n.kind != ir::NodeKind::kOp) continue;
    Step step;
    step.node = id;
    step.op = n.op;
    step.attrs = n.attrs;
    step.name = g.NodeName(id);
    std::vector<ops::TensorMeta> metas;
    for (const ir::ValueRef& v : n.inputs) {
      step.inputs.push_back(slot(v));
      metas.push_back(g.Meta(v));
    }
    if (!n.fused.empty()) {
      step.op = &FusedOp();
      step.kernel = &FusedKernel();
      step.plan = std::make_shared<FusedPlan>(BuildFusedPlan(g, id, options_.device));
    } else {
      step.kernel = kernels::SelectKernelOrConvert(n.op->name, options_.device, metas, n.attrs);
    }
    if (step.kernel == nullptr) {
      std::string described;
      for (size_t k = 0; k < metas.size(); ++k) {
        described += StrCat(k ? ", " : "", DTypeName(metas[k].dtype), ShapeRepr(metas[k].shape));
      }
      throw TypeError(StrCat("[", n.op->name, "] has no ", DeviceTargetName(options_.device), " kernel for inputs ",
                             described, " (graph node ", step.name, n.source.empty() ? "" : ", defined at ", n.source,
                             ")."));
    }
    if (const Value* tail = n.attrs.Find(kernels::kInPlaceTailAttr)) {
      for (const Value& name : tail->as_list()) {
        Step::TailOp t;
        t.op = &ops::GetOp(name.as_string());
        t.attrs = ops::NormalizeAttrs(*t.op, {});
        t.kernel = kernels::SelectKernel(t.op->name, options_.device, {n.outputs.at(0)}, t.attrs);
        t.name = StrCat(step.name, "/", t.op->name, "-tail", step.tail.size());
        MSRT_INTERNAL_ASSERT(t.kernel != nullptr, "no kernel for the in-place tail op ", t.op->name, " of ", step.name);
        step.tail.push_back(std::move(t));
      }
    }
    if (n.fused.empty() && !n.op->props.meta_only_inputs.empty()) {
      step.meta_stand_ins.resize(metas.size());
      for (int k : n.op->props.meta_only_inputs) {
        const ops::TensorMeta& m = metas.at(static_cast<size_t>(k));
        step.meta_stand_ins[static_cast<size_t>(k)] = Tensor::Symbolic(m.shape, m.dtype, options_.device);
      }
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      int32_t out = slot_of_node_[i] + static_cast<int32_t>(k);
      if (k == 0 && n.fused.empty() && n.op->props.inplace) alias_of_[static_cast<size_t>(out)] = step.inputs.at(0);
      if (k == 0 && n.fused.empty() && n.op->props.view && options_.device == DeviceTarget::kCPU) {
        view_of_[static_cast<size_t>(out)] = step.inputs.at(0);
      }
      step.outputs.push_back(out);
    }
    steps_.push_back(std::move(step));
  }
  for (const ir::ValueRef& v : g.outputs()) output_slots_.push_back(slot(v));
  PlanViews();
  HoistInPlaceUpdates();
}

Tensor GraphExecutable::OutputTensor(int32_t slot, const ops::TensorMeta& meta, std::vector<Tensor>& slots) {
  int32_t alias = alias_of_[static_cast<size_t>(slot)];
  if (alias >= 0) return slots[static_cast<size_t>(alias)];
  int32_t source = view_of_[static_cast<size_t>(slot)];
  if (source >= 0) return slots[static_cast<size_t>(source)].Reshaped(meta.shape);
  int64_t offset = arena_offset_[static_cast<size_t>(slot)];
  if (offset < 0) return Tensor::Empty(meta.shape, meta.dtype, options_.device);
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = arena_.impl()->storage;
  impl->offset = arena_.impl()->offset + static_cast<size_t>(offset);
  impl->shape = meta.shape;
  impl->dtype = meta.dtype;
  return Tensor(std::move(impl));
}

std::vector<std::string> GraphExecutable::WeightNames() const {
  std::vector<std::string> names;
  for (const Binding& b : weight_bindings_) names.push_back(graph_->node(b.node).name);
  return names;
}

std::vector<Tensor> GraphExecutable::CapturedWeights() const {
  std::vector<Tensor> out;
  for (const Binding& b : weight_bindings_) out.push_back(graph_->node(b.node).value);
  return out;
}

std::vector<Tensor> GraphExecutable::Run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& weights) {
  std::lock_guard lock(run_mutex_);
  const ir::Graph& g = *graph_;
  if (inputs.size() != g.inputs().size()) {
    throw TypeError(
        StrCat("Graph '", g.name(), "' takes ", g.inputs().size(), " inputs, but got ", inputs.size(), "."));
  }
  if (!weights.empty() && weights.size() != weight_bindings_.size()) {
    throw TypeError(
        StrCat("Graph '", g.name(), "' binds ", weight_bindings_.size(), " weights, but got ", weights.size(), "."));
  }
  if (dynamic_) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ops::TensorMeta& m = g.node(g.inputs()[i]).outputs[0];
      if (!inputs[i].defined() || m.dtype != inputs[i].dtype() || !ShapeMatches(m.shape, inputs[i].shape())) {
        throw ValueError(StrCat("Graph '", g.name(), "' input ", i, " must be ", DTypeName(m.dtype), ShapeRepr(m.shape),
                                " (-1: any size), but got ",
                                inputs[i].defined() ? inputs[i].Describe() : "an undefined tensor", "."));
      }
    }
    std::shared_ptr<GraphExecutable> plan = PlanFor(inputs);
    std::vector<Tensor> results = plan->Run(inputs, weights);
    ++runs_;
    memory_stats_ = plan->memory_stats();
    int best = max_concurrent_.load();
    while (plan->max_concurrent_kernels() > best &&
           !max_concurrent_.compare_exchange_weak(best, plan->max_concurrent_kernels())) {
    }
    return results;
  }
  Synchronize();  // eager ops queued before this call run first (they may read what the graph writes)
  run_interrupts_ = InterruptCount();  // an interrupt from now on stops the run before its next step
  std::vector<Tensor> slots(slot_meta_.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ops::TensorMeta& m = slot_meta_[static_cast<size_t>(input_bindings_[i].slot)];
    if (!inputs[i].defined() || !SameMeta(m, inputs[i])) {
      throw ValueError(StrCat("Graph '", g.name(), "' input ", i, " must be ", DTypeName(m.dtype), ShapeRepr(m.shape),
                              ", but got ", inputs[i].defined() ? inputs[i].Describe() : "an undefined tensor", "."));
    }
    inputs[i].Sync();
    // Written in place: views of it keep their values (Note [Views] in src/core/tensor.cc).
    if (written_[static_cast<size_t>(input_bindings_[i].slot)]) DetachFromViews(inputs[i]);
    slots[static_cast<size_t>(input_bindings_[i].slot)] = inputs[i];
  }
  for (size_t i = 0; i < weight_bindings_.size(); ++i) {
    const Binding& b = weight_bindings_[i];
    Tensor t = (!weights.empty() && weights[i].defined()) ? weights[i] : g.node(b.node).value;
    const ops::TensorMeta& m = slot_meta_[static_cast<size_t>(b.slot)];
    if (!t.defined()) {
      throw ValueError(StrCat("Graph '", g.name(), "' needs weight '", g.node(b.node).name, "' (", DTypeName(m.dtype),
                              ShapeRepr(m.shape), "), but none was bound."));
    }
    if (!SameMeta(m, t)) {
      throw ValueError(StrCat("Graph '", g.name(), "' was compiled for weight '", g.node(b.node).name, "' as ",
                              DTypeName(m.dtype), ShapeRepr(m.shape), ", but it is now ", t.Describe(), "."));
    }
    t.Sync();
    if (written_[static_cast<size_t>(b.slot)]) DetachFromViews(t);
    slots[static_cast<size_t>(b.slot)] = std::move(t);
  }
  for (const Binding& b : constant_bindings_) slots[static_cast<size_t>(b.slot)] = g.node(b.node).value;
  if (arena_bytes_ > 0 && !arena_.defined()) {
    arena_ = Tensor::Empty({static_cast<int64_t>(arena_bytes_)}, DType::kUInt8, options_.device);
  }

  // Random ops take their streams in program order, whatever order they run in.
  std::vector<Dict> random_attrs(steps_.size());
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].op->props.random) continue;
    random_attrs[i] = steps_[i].attrs;
    random::ReserveStream(random_attrs[i]);
  }
  int threads = CurrentThreadPlan().inter_op;
  if (threads > 1 && steps_.size() > 1) {
    RunConcurrently(threads, slots, random_attrs);
  } else {
    for (size_t i = 0; i < steps_.size(); ++i) {
      RunStep(i, slots, steps_[i].op->props.random ? random_attrs[i] : steps_[i].attrs);
      if (i < release_after_.size()) {
        for (int32_t s : release_after_[i]) slots[static_cast<size_t>(s)] = Tensor();
      }
    }
  }
  ++runs_;
  if (!GraphObservers().empty()) {
    for (GraphObserver* o : *GraphObservers().snapshot()) o->Ran(*this);
  }
  std::vector<Tensor> results;
  results.reserve(output_slots_.size());
  for (int32_t s : output_slots_) results.push_back(slots[static_cast<size_t>(s)]);
  return results;
}

void GraphExecutable::Launch(const Step& step, const std::vector<Tensor>& in, std::vector<Tensor>& out,
                             const Dict& attrs, const LaunchSite& site) {
  LaunchKernel(*step.kernel, *step.op, in, out, attrs, site, step.plan.get());
  if (step.tail.empty()) return;
  std::vector<Tensor> result{out.at(0)};
  for (const Step::TailOp& t : step.tail) {
    LaunchSite tail_site{site.graph, t.name, site.iteration};
    LaunchKernel(*t.kernel, *t.op, result, result, t.attrs, tail_site);
  }
}

void GraphExecutable::RunStep(size_t index, std::vector<Tensor>& slots, const Dict& attrs) {
  CheckInterrupt(run_interrupts_, "running a graph");
  const Step& step = steps_[index];
  const ir::Graph& g = *graph_;
  std::vector<Tensor> in, out;
  in.reserve(step.inputs.size());
  for (size_t k = 0; k < step.inputs.size(); ++k) {
    const bool meta_only = k < step.meta_stand_ins.size() && step.meta_stand_ins[k].defined();
    in.push_back(meta_only ? step.meta_stand_ins[k] : slots[static_cast<size_t>(step.inputs[k])]);
  }
  LaunchSite site{g.name(), step.name, runs_};
  try {
    if (step.kept != nullptr) {
      RunKept(step, slots, in, attrs, site);
      return;
    }
    for (int32_t s : step.outputs) {  // inside: a MemoryError names the step too
      out.push_back(OutputTensor(s, slot_meta_[static_cast<size_t>(s)], slots));
      slots[static_cast<size_t>(s)] = out.back();
    }
    if (!step.outputs.empty() && view_of_[static_cast<size_t>(step.outputs[0])] >= 0) return;  // a view: no kernel
    Launch(step, in, out, attrs, site);
  } catch (const Error& e) {
    const ir::Node& n = g.node(step.node);
    std::string message = StrCat(e.message(), " [while running '", step.op->name, "' (graph '", g.name(), "', node ",
                                 step.name, n.source.empty() ? "" : ", defined at " + n.source, ") on inputs ",
                                 Describe(in), "]");
    if (!GraphObservers().empty()) {  // e.g. the running data recorder
      GraphFailure failure{index, step.op->name, step.name, n.source, e.kind(), message, in};
      for (GraphObserver* o : *GraphObservers().snapshot()) o->Failed(*this, failure);
    }
    ThrowError(e.kind(), std::move(message));
  } catch (const std::bad_alloc&) {
    throw MemoryError(
        StrCat("Out of memory while running '", step.op->name, "' (graph '", g.name(), "', node ", step.name, ")"));
  }
}

void GraphExecutable::RunConcurrently(int threads, std::vector<Tensor>& slots, const std::vector<Dict>& attrs) {
  std::mutex mutex;
  std::condition_variable ready_changed;
  std::vector<int32_t> waiting = predecessor_count_;
  std::vector<int32_t> ready;
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (waiting[i] == 0) ready.push_back(static_cast<int32_t>(i));
  }
  std::reverse(ready.begin(), ready.end());  // program order first
  size_t remaining = steps_.size();
  int in_flight = 0;
  std::exception_ptr error;
  auto work = [&] {
    std::unique_lock lock(mutex);
    for (;;) {
      ready_changed.wait(lock, [&] { return !ready.empty() || remaining == 0 || error; });
      if (remaining == 0 || error) return;
      int32_t index = ready.back();
      ready.pop_back();
      ++in_flight;
      int observed = in_flight;
      lock.unlock();
      int best = max_concurrent_.load();
      while (observed > best && !max_concurrent_.compare_exchange_weak(best, observed)) {
      }
      std::exception_ptr failed;
      try {
        const Step& step = steps_[static_cast<size_t>(index)];
        RunStep(static_cast<size_t>(index), slots,
                step.op->props.random ? attrs[static_cast<size_t>(index)] : step.attrs);
      } catch (...) {
        failed = std::current_exception();
      }
      lock.lock();
      --in_flight;
      --remaining;
      if (failed && !error) error = failed;
      for (int32_t next : successors_[static_cast<size_t>(index)]) {
        if (--waiting[static_cast<size_t>(next)] == 0) ready.push_back(next);
      }
      ready_changed.notify_all();
    }
  };
  SchedulerThreads::Get().Run(threads - 1, work);
  if (error) {
    // Steps already started have finished; the rest never ran.
    std::rethrow_exception(error);
  }
}

std::string GraphExecutable::ExecutionOrderText(int64_t failed_step) const {
  std::ostringstream out;
  const char* level = options_.memory_level == 0 ? "O0" : "O1";
  out << "# msrt execution order v1\n# graph: " << graph_->name() << "\n# device: " << DeviceTargetName(options_.device)
      << ", memory_optimize_level: " << level << ", buffer reuse: " << (options_.buffer_reuse ? "on" : "off")
      << "\n# intermediates: " << memory_stats_.intermediate_count << ", planned bytes: " << memory_stats_.planned_bytes
      << ", peak live bytes: " << memory_stats_.peak_live_bytes << "\n";
  if (dynamic_) {
    out << "# dynamic shapes: kernels and memory are planned per input shapes when the graph runs ("
        << plans_made_.load() << " so far)\n";
    return out.str();
  }
  if (failed_step >= 0) out << "# failed at step " << failed_step << " (marked =>)\n";
  out << "\n";
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    if (failed_step >= 0) out << (static_cast<int64_t>(i) == failed_step ? "=> " : "   ");
    out << i << ": " << s.op->name << " [" << s.kernel->impl << "]";
    for (const Step::TailOp& t : s.tail) out << " then " << t.op->name << " in place [" << t.kernel->impl << "]";
    out << " " << s.name << "\n    in:";
    for (int32_t slot : s.inputs) out << " $" << slot;
    out << "  out:";
    for (int32_t slot : s.outputs) {
      out << " $" << slot;
      int64_t offset = arena_offset_[static_cast<size_t>(slot)];
      if (alias_of_[static_cast<size_t>(slot)] >= 0) {
        out << "(in place of $" << alias_of_[static_cast<size_t>(slot)] << ")";
      } else if (view_of_[static_cast<size_t>(slot)] >= 0) {
        out << "(view of $" << view_of_[static_cast<size_t>(slot)] << ")";
      } else if (offset >= 0) {
        out << "@" << offset << "+" << Aligned(MetaBytes(slot_meta_[static_cast<size_t>(slot)]));
      }
    }
    out << "\n";
  }
  out << "return:";
  for (int32_t s : output_slots_) out << " $" << s;
  out << "\n";
  return out.str();
}

void AddGraphObserver(GraphObserver* observer) { GraphObservers().Add(observer); }
void RemoveGraphObserver(GraphObserver* observer) { GraphObservers().Remove(observer); }

}  // namespace msrt::runtime
