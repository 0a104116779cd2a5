// The plan of a graph's steps and memory, made once per GraphExecutable after
// Build(): in-place updates hoisted, values recomputed across the memory peak
// (O1), views, and the arena offsets of every slot. See Note [Graph execution]
// in graph_executor.h; running the plan is in graph_executor.cc.
#include <algorithm>
#include <functional>
#include <set>

#include "runtime/graph_executor.h"

namespace msrt::runtime {

// Note [Meta-only inputs]
// An op reads only the shape and dtype of the inputs its declaration lists
// in props.meta_only_inputs (zeros_like's x, reshape_like's `like`, which
// gradients use to shape a value like a forward one). Its step gets a
// stand-in of that shape and dtype without elements (Tensor::Symbolic), so
// the memory plan ends the input's lifetime at its last real read: a
// backward step shaping a gradient like a forward activation no longer keeps
// that activation's bytes alive to the end of the backward. PYNATIVE queues
// and the autodiff tape keep stand-ins too, not the tensors.

// Note [Hoisted in-place updates]
// A training step's program order puts the optimizer's in-place updates
// after the whole backward, so every weight gradient lives until the end of
// the step, all of them at once. An update may run as soon as the last step
// that conflicts with it has: the one that produces what it reads (the
// gradient), or reads or writes what it writes (the weight's last reader in
// the backward, the moment slot), or writes what it reads. Moved there, each
// gradient dies right after its update, so the plan (O1) reuses its bytes and
// O0 frees it, and the step's results are those of program order: nothing
// between the old and the new place touches what the update reads or
// writes. Ops with side effects or random streams, and fused steps, keep
// their place; the moved ones keep their order among themselves.
void GraphExecutable::HoistInPlaceUpdates() {
  const size_t n = steps_.size();
  const auto writes_of = [this](const Step& step) {
    std::vector<int32_t> writes;
    if (step.plan != nullptr) return writes;
    if (step.op->props.inplace) writes.push_back(Root(step.inputs.at(0)));
    for (int w : step.op->props.writes_inputs) writes.push_back(Root(step.inputs.at(static_cast<size_t>(w))));
    return writes;
  };
  // Roots each step reads, writes and produces.
  std::vector<std::vector<int32_t>> reads(n), writes(n), makes(n);
  for (size_t i = 0; i < n; ++i) {
    for (int32_t in : steps_[i].inputs) reads[i].push_back(Root(in));
    writes[i] = writes_of(steps_[i]);
    for (int32_t out : steps_[i].outputs) makes[i].push_back(Root(out));
  }
  const auto meets = [](const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    for (int32_t x : a) {
      if (std::find(b.begin(), b.end(), x) != b.end()) return true;
    }
    return false;
  };
  // order[k]: the original index of the step at position k.
  std::vector<size_t> order;
  order.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Step& step = steps_[i];
    const bool movable = step.plan == nullptr && !writes[i].empty() && !step.op->props.side_effect &&
                         !step.op->props.random && !step.op->props.data_dependent_shape;
    size_t at = order.size();
    if (movable) {
      // After the last placed step it conflicts with.
      while (at > 0) {
        const size_t j = order[at - 1];
        const bool conflicts = meets(makes[j], reads[i]) || meets(makes[j], writes[i]) || meets(writes[j], reads[i]) ||
                               meets(writes[j], writes[i]) || meets(reads[j], writes[i]) ||
                               steps_[j].op->props.side_effect;
        if (conflicts) break;
        --at;
      }
    }
    order.insert(order.begin() + static_cast<std::ptrdiff_t>(at), i);
  }
  std::vector<Step> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(steps_[i]));
  steps_ = std::move(sorted);
}

// Note [Recomputed elementwise values]
// A training step keeps a forward value alive from its forward readers to
// the backward step that reads it again, across the point where the most
// bytes are alive (the start of the backward). When the value is made by
// an elementwise step whose inputs stay alive to that backward read anyway
// (GELU's output: its input is kept for gelu_grad), the O1 plan lets the
// value die after its last read before the peak and runs the step again
// right before its first read after it: the same kernel on the same bytes
// (nothing writes them in between), so the same result, for one more
// elementwise pass per step. Views of the value read late are made again
// from the new one. Both lifetimes lie inside the old one, so no step has
// more bytes alive than before, and the peak loses the value's bytes. Done
// again while the peak (which may move) crosses such a value; the largest
// first. Elementwise steps, and steps whose op declares
// `cheap_to_recompute` (about one pass over its bytes: split's parts of a
// weight, read by the forward projection and again by the backward, or
// layer_norm's output and statistics, its input kept for the residual's
// gradient); a step of several outputs runs again when all of them cross
// the peak, before the first late read of any. A product or a reduction
// costs more than its bytes are worth.
void GraphExecutable::RecomputeAcrossPeaks() {
  for (size_t round = 0; round < steps_.size() && RecomputeOneAcrossPeak(); ++round) {
  }
}

bool GraphExecutable::RecomputeOneAcrossPeak() {
  const size_t n = steps_.size(), count = slot_meta_.size();
  auto real = [](const Step& step, size_t k) {
    return !(k < step.meta_stand_ins.size() && step.meta_stand_ins[k].defined());
  };
  std::vector<int64_t> first(count, -1), last(count, -1);
  std::vector<std::vector<int32_t>> writes(n);
  for (size_t i = 0; i < n; ++i) {
    const Step& step = steps_[i];
    auto at = static_cast<int64_t>(i);
    for (int32_t s : step.outputs) {
      if (alias_of_[static_cast<size_t>(s)] < 0 && view_of_[static_cast<size_t>(s)] < 0) {
        first[static_cast<size_t>(s)] = at;
      }
      last[static_cast<size_t>(Root(s))] = at;
    }
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      if (real(step, k)) last[static_cast<size_t>(Root(step.inputs[k]))] = at;
    }
    if (step.plan == nullptr) {
      if (step.op->props.inplace) writes[i].push_back(Root(step.inputs.at(0)));
      for (int w : step.op->props.writes_inputs) writes[i].push_back(Root(step.inputs.at(static_cast<size_t>(w))));
    }
  }
  std::vector<bool> escapes(count, false);
  for (int32_t s : output_slots_) escapes[static_cast<size_t>(Root(s))] = true;
  // The step with the most intermediate bytes alive (the first such).
  std::vector<int64_t> delta(n + 1, 0);
  for (size_t s = 0; s < count; ++s) {
    if (first[s] < 0 || escapes[s]) continue;
    auto bytes = static_cast<int64_t>(Aligned(MetaBytes(slot_meta_[s])));
    delta[static_cast<size_t>(first[s])] += bytes;
    delta[static_cast<size_t>(last[s]) + 1] -= bytes;
  }
  size_t peak = 0;
  int64_t live = 0, most = -1;
  for (size_t i = 0; i < n; ++i) {
    live += delta[i];
    if (live > most) most = live, peak = i;
  }
  // Per root: the steps reading its bytes (with the slot read) and the steps writing them.
  std::vector<std::vector<std::pair<size_t, int32_t>>> reads(count);
  std::vector<std::vector<size_t>> writers(count);
  std::vector<int64_t> producer(count, -1);
  for (size_t j = 0; j < n; ++j) {
    const Step& step = steps_[j];
    for (size_t k = 0; k < step.inputs.size(); ++k) {
      if (real(step, k)) reads[static_cast<size_t>(Root(step.inputs[k]))].emplace_back(j, step.inputs[k]);
    }
    for (int32_t w : writes[j]) writers[static_cast<size_t>(w)].push_back(j);
    for (int32_t out : step.outputs) producer[static_cast<size_t>(out)] = static_cast<int64_t>(j);
  }
  auto written_between = [&](int32_t root, size_t from, size_t to) {  // by a step in (from, to)
    for (size_t j : writers[static_cast<size_t>(root)]) {
      if (j > from && j < to) return true;
    }
    return false;
  };
  // A slot read late reaches the value through views whose steps read nothing else.
  auto view_chain_fits = [&](int32_t slot, int32_t value) {
    for (int32_t s = slot; s != value; s = view_of_[static_cast<size_t>(s)]) {
      if (view_of_[static_cast<size_t>(s)] < 0 || producer[static_cast<size_t>(s)] < 0) return false;
      const Step& view = steps_[static_cast<size_t>(producer[static_cast<size_t>(s)])];
      for (size_t k = 1; k < view.inputs.size(); ++k) {
        if (real(view, k)) return false;
      }
    }
    return true;
  };
  // The step whose values (all of its outputs) cross the peak unread with the most bytes, and can be made again.
  size_t best = n, best_late = 0, best_bytes = 0;
  for (size_t i = 0; i < peak; ++i) {
    const Step& step = steps_[i];
    const ops::OpProperties& props = step.op->props;
    if (step.plan != nullptr || !(props.elementwise || props.cheap_to_recompute) || props.inplace ||
        !props.writes_inputs.empty() || props.random || props.side_effect || props.view || step.outputs.empty()) {
      continue;
    }
    // Each output's reads after the peak (none at the peak), through views made again from it alone; the
    // step runs again before the first of them.
    size_t bytes = 0, late = n;
    bool fits = true;
    for (int32_t value : step.outputs) {
      const auto v = static_cast<size_t>(value);
      if (first[v] != static_cast<int64_t>(i) || escapes[v] || last[v] <= static_cast<int64_t>(peak) ||
          !writers[v].empty()) {
        fits = false;
        break;
      }
      bytes += MetaBytes(slot_meta_[v]);
      for (const auto& [j, slot] : reads[v]) {
        if (j == peak) fits = false;
        if (j > peak) {
          late = std::min(late, j);
          if (!view_chain_fits(slot, value)) fits = false;
        }
      }
    }
    if (!fits || late == n || bytes <= best_bytes) continue;
    // Its inputs hold the same bytes at `late`: alive there anyway (or the caller's), written by nobody between.
    for (size_t k = 0; k < step.inputs.size() && fits; ++k) {
      if (!real(step, k)) continue;
      const int32_t root = Root(step.inputs[k]);
      const auto r = static_cast<size_t>(root);
      if (first[r] >= 0 && !escapes[r] && last[r] < static_cast<int64_t>(late)) fits = false;
      if (written_between(root, i, late)) fits = false;
    }
    if (fits) best = i, best_late = late, best_bytes = bytes;
  }
  if (best == n) return false;

  // The step again (and views made again) right before `best_late`, feeding the reads from there on.
  const std::vector<int32_t> values = steps_[best].outputs;
  auto new_slot = [this](int32_t like) {
    slot_meta_.push_back(slot_meta_[static_cast<size_t>(like)]);
    alias_of_.push_back(-1);
    view_of_.push_back(-1);
    return static_cast<int32_t>(slot_meta_.size() - 1);
  };
  std::vector<Step> made;
  std::vector<std::pair<int32_t, int32_t>> renamed;  // (slot, its new twin)
  Step again = steps_[best];
  again.name += "/recompute";
  for (int32_t& out : again.outputs) {
    const int32_t fresh = new_slot(out);
    renamed.emplace_back(out, fresh);
    out = fresh;
  }
  made.push_back(std::move(again));
  std::function<int32_t(int32_t)> twin = [&](int32_t slot) {
    for (const auto& [old, fresh] : renamed) {
      if (old == slot) return fresh;
    }
    // A view of the value: its step again, reading the source's twin.
    Step view = steps_[static_cast<size_t>(producer[static_cast<size_t>(slot)])];
    const int32_t source = twin(view.inputs.at(0));
    view.name += "/recompute";
    view.inputs[0] = source;
    view.outputs = {new_slot(slot)};
    const int32_t fresh = view.outputs[0];
    view_of_[static_cast<size_t>(fresh)] = source;
    renamed.emplace_back(slot, fresh);
    made.push_back(std::move(view));
    return fresh;
  };
  for (size_t j = best_late; j < n; ++j) {
    Step& reader = steps_[j];
    for (size_t k = 0; k < reader.inputs.size(); ++k) {
      const int32_t old = reader.inputs[k];
      if (std::find(values.begin(), values.end(), Root(old)) == values.end()) continue;
      reader.inputs[k] = twin(old);
      for (int32_t out : reader.outputs) {  // a view made late follows its source
        if (view_of_[static_cast<size_t>(out)] == old) view_of_[static_cast<size_t>(out)] = reader.inputs[k];
      }
    }
  }
  steps_.insert(steps_.begin() + static_cast<std::ptrdiff_t>(best_late), std::make_move_iterator(made.begin()),
                std::make_move_iterator(made.end()));
  ++memory_stats_.recomputed_steps;
  return true;
}

int32_t GraphExecutable::Root(int32_t slot) const {
  for (;;) {
    auto s = static_cast<size_t>(slot);
    if (alias_of_[s] >= 0) {
      slot = alias_of_[s];
    } else if (view_of_[s] >= 0) {
      slot = view_of_[s];
    } else {
      return slot;
    }
  }
}

// Note [Views] in src/core/tensor.cc: a reshape-family step gives a view of
// its input's buffer (no copy, no buffer of its own) unless those bytes are
// the caller's (a graph input, weight or constant) or some step writes them
// in place; then it copies, so no write shows through another value.
void GraphExecutable::PlanViews() {
  const size_t count = slot_meta_.size();
  std::vector<bool> bound(count, false);
  for (const auto* bindings : {&input_bindings_, &weight_bindings_, &constant_bindings_}) {
    for (const Binding& b : *bindings) bound[static_cast<size_t>(b.slot)] = true;
  }
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> written(count, false);
    for (const Step& step : steps_) {
      if (step.plan != nullptr) continue;
      if (step.op->props.inplace) written[static_cast<size_t>(Root(step.inputs.at(0)))] = true;
      for (int w : step.op->props.writes_inputs) {
        written[static_cast<size_t>(Root(step.inputs.at(static_cast<size_t>(w))))] = true;
      }
    }
    for (size_t s = 0; s < count; ++s) {
      if (view_of_[s] < 0) continue;
      auto source = static_cast<size_t>(Root(static_cast<int32_t>(s)));
      if (bound[source] || written[source]) {
        view_of_[s] = -1;
        changed = true;
      }
    }
  }
}

// Note [Elementwise buffer handover]
// An elementwise op computes output[i] from inputs[i] alone, so its kernel
// may write its output over an input of the same shape and dtype: each
// element is read before it is written. When such an input dies at that
// step (no later step reads it, it is no graph output and not a weight or
// an input of the graph), the O1 plan gives the output that input's bytes
// instead of a buffer of its own (gelu_grad writing over the gradient it
// scales): the two never need to be alive at once. A view of the buffer
// (a reshape: the whole buffer, in order) donates it when the view has the
// output's shape; each buffer is handed over once per step, and a chain of
// handovers keeps one buffer. The dependency
// rule of O1 (a buffer's producer waits for every user of the bytes it
// reuses) already orders the input's other readers before the step.

void GraphExecutable::PlanMemory() {
  // Intermediates: op outputs that are not aliases and not graph outputs.
  size_t count = slot_meta_.size();
  std::vector<int64_t> first(count, -1), last(count, -1);
  auto root = [this](int32_t s) { return Root(s); };
  for (size_t i = 0; i < steps_.size(); ++i) {
    auto at = static_cast<int64_t>(i);
    for (int32_t s : steps_[i].outputs) {
      if (alias_of_[static_cast<size_t>(s)] < 0 && view_of_[static_cast<size_t>(s)] < 0) {
        first[static_cast<size_t>(s)] = at;
      }
      last[static_cast<size_t>(root(s))] = at;
    }
    const auto& stand_ins = steps_[i].meta_stand_ins;
    for (size_t k = 0; k < steps_[i].inputs.size(); ++k) {
      if (k < stand_ins.size() && stand_ins[k].defined()) continue;  // Note [Meta-only inputs]
      last[static_cast<size_t>(root(steps_[i].inputs[k]))] = at;
    }
  }
  std::vector<bool> escapes(count, false);
  for (int32_t s : output_slots_) escapes[static_cast<size_t>(root(s))] = true;

  struct Buffer {
    int32_t slot;
    size_t bytes;
    int64_t begin, end;
    size_t offset = 0;
  };
  // O1: an elementwise step's output takes the buffer of an input of the
  // same shape and dtype that dies at that step (Note [Elementwise buffer
  // handover]); share_of[o] is the slot whose buffer o writes.
  std::vector<int32_t> share_of(count, -1);
  if (options_.memory_level != 0 && options_.buffer_reuse) {
    std::vector<bool> donated(count, false);
    auto owner = [&share_of](int32_t s) {
      while (share_of[static_cast<size_t>(s)] >= 0) s = share_of[static_cast<size_t>(s)];
      return s;
    };
    for (size_t i = 0; i < steps_.size(); ++i) {
      const Step& step = steps_[i];
      const ops::OpProperties& props = step.op->props;
      if (!props.elementwise || props.inplace || !props.writes_inputs.empty() || step.plan != nullptr) continue;
      const auto& stand_ins = step.meta_stand_ins;
      for (int32_t o : step.outputs) {
        auto out = static_cast<size_t>(o);
        if (first[out] != static_cast<int64_t>(i) || escapes[out]) continue;
        for (size_t k = 0; k < step.inputs.size(); ++k) {
          if (k < stand_ins.size() && stand_ins[k].defined()) continue;
          int32_t in = step.inputs[k];
          auto r = static_cast<size_t>(root(in));
          if (first[r] < 0 || escapes[r] || donated[r] || last[r] != static_cast<int64_t>(i)) continue;
          if (alias_of_[static_cast<size_t>(in)] >= 0) continue;  // an in-place result: its own bytes differ
          // The input as the kernel sees it (a view reshapes the whole buffer) and the buffer's size.
          const ops::TensorMeta& a = slot_meta_[static_cast<size_t>(in)];
          const ops::TensorMeta& b = slot_meta_[out];
          if (a.dtype != b.dtype || a.shape != b.shape || MetaBytes(slot_meta_[r]) != MetaBytes(b)) continue;
          donated[r] = true;
          share_of[out] = owner(static_cast<int32_t>(r));
          break;
        }
      }
    }
  }
  std::vector<Buffer> buffers;
  std::vector<int64_t> buffer_of(count, -1);
  for (size_t s = 0; s < count; ++s) {
    if (first[s] < 0 || escapes[s] || share_of[s] >= 0) continue;
    buffer_of[s] = static_cast<int64_t>(buffers.size());
    buffers.push_back(
        {static_cast<int32_t>(s), Aligned(std::max<size_t>(MetaBytes(slot_meta_[s]), 1)), first[s], last[s]});
  }
  for (size_t s = 0; s < count; ++s) {
    if (share_of[s] < 0) continue;
    int32_t o = share_of[s];
    while (share_of[static_cast<size_t>(o)] >= 0) o = share_of[static_cast<size_t>(o)];
    Buffer& b = buffers[static_cast<size_t>(buffer_of[static_cast<size_t>(o)])];
    b.end = std::max(b.end, last[s]);
  }
  // The most bytes alive at once.
  std::vector<int64_t> delta(steps_.size() + 1, 0);
  size_t total = 0;
  for (const Buffer& b : buffers) {
    delta[static_cast<size_t>(b.begin)] += static_cast<int64_t>(b.bytes);
    delta[static_cast<size_t>(b.end) + 1] -= static_cast<int64_t>(b.bytes);
    total += b.bytes;
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  memory_stats_.peak_live_bytes = static_cast<size_t>(peak);
  memory_stats_.intermediate_count = buffers.size();
  arena_offset_.assign(count, -1);
  if (options_.memory_level == 0) {
    memory_stats_.planned_bytes = total;
    // O0 run serially: a slot is dropped after the last step using its bytes,
    // which returns an intermediate to the pool there (graph outputs stay).
    release_after_.assign(steps_.size(), {});
    for (size_t s = 0; s < count; ++s) {
      auto r = static_cast<size_t>(root(static_cast<int32_t>(s)));
      if (last[r] >= 0 && !escapes[r]) release_after_[static_cast<size_t>(last[r])].push_back(static_cast<int32_t>(s));
    }
    return;
  }
  // Largest first; each buffer takes the lowest offset that overlaps no
  // placed buffer alive at the same time.
  std::vector<size_t> order(buffers.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return buffers[a].bytes > buffers[b].bytes; });
  std::vector<size_t> placed;
  size_t arena = 0;
  for (size_t i : order) {
    Buffer& b = buffers[i];
    std::vector<std::pair<size_t, size_t>> taken;  // address ranges of buffers alive with b
    for (size_t j : placed) {
      const Buffer& p = buffers[j];
      bool overlap_in_time = !options_.buffer_reuse || (p.begin <= b.end && b.begin <= p.end);
      if (overlap_in_time) taken.emplace_back(p.offset, p.offset + p.bytes);
    }
    std::sort(taken.begin(), taken.end());
    size_t offset = 0;
    for (const auto& [lo, hi] : taken) {
      if (offset + b.bytes <= lo) break;
      offset = std::max(offset, hi);
    }
    b.offset = offset;
    arena = std::max(arena, offset + b.bytes);
    arena_offset_[static_cast<size_t>(b.slot)] = static_cast<int64_t>(offset);
    placed.push_back(i);
  }
  for (size_t s = 0; s < count; ++s) {
    if (share_of[s] < 0) continue;
    int32_t o = share_of[s];
    while (share_of[static_cast<size_t>(o)] >= 0) o = share_of[static_cast<size_t>(o)];
    arena_offset_[s] = arena_offset_[static_cast<size_t>(o)];
  }
  arena_bytes_ = arena;
  memory_stats_.planned_bytes = arena;
}

}  // namespace msrt::runtime
