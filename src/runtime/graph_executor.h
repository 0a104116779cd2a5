// Running a compiled graph.
//
// Note [Graph execution]
// A GraphExecutable turns a Graph into steps: one kernel per op node,
// chosen once at build time, in program order (which keeps in-place
// updates and Print in the program's order). Every node output gets a
// slot. Inputs are bound per call; weights and constants are bound to the
// tensors captured with the graph, and weights may be rebound per call (a
// Parameter whose data object was replaced). Runs are synchronous on the
// calling thread (kernels parallelise on the runtime pool) and serialised
// per executable. Memory (memory_optimize_level):
//  - O0: each intermediate is allocated from the pool when produced and
//    returned after the last step using it (when the run ends if steps run
//    concurrently): no planning, nothing shared.
//  - O1: a static plan gives each intermediate an offset in one arena by
//    lifetime (buffers whose lifetimes do not overlap share bytes; with
//    sys.mem_Reuse=false none do); the arena is allocated once and kept.
// Graph outputs never live in the arena: they outlive the run.
//
// A graph with dynamic dimensions (Note [Dynamic shapes] in
// src/compiler/dynamic_shape.h) has no steps of its own: each call infers
// the graph's shapes for its input shapes, checks them against the graph,
// and runs an executable made for those shapes (kernels chosen, memory
// planned), kept for later calls with the same shapes (the
// kMaxShapePlans most recently used).
//
// With inter_op_parallel_num = n > 1, steps whose inputs are ready run
// concurrently on n scheduler threads (the caller and n - 1 helpers). The
// order that matters is kept as dependencies: data, in-place writes after
// every earlier read and write of what they write, reads after the write
// they follow, side effects (Print) in program order, and in O1 a buffer's
// producer after every user of the bytes it reuses. Random ops take their
// streams in program order before the run, so results match a serial run.
#pragma once

#include <atomic>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "kernels/kernel.h"
#include "msrt/core/shape.h"

namespace msrt::runtime {

struct GraphOptions {
  DeviceTarget device = DeviceTarget::kCPU;
  int memory_level = 0;      // memory_optimize_level: 0 or 1
  bool buffer_reuse = true;  // env_config_path sys.mem_Reuse
};

struct GraphMemoryStats {
  size_t planned_bytes = 0;       // O1: the arena; O0: the sum of every intermediate
  size_t peak_live_bytes = 0;     // the most intermediates alive at once (lower bound of any plan)
  size_t intermediate_count = 0;  // planned buffers
  size_t recomputed_steps = 0;    // O1: elementwise steps run again later (Note [Recomputed elementwise values])
};

class GraphExecutable {
 public:
  GraphExecutable(std::shared_ptr<const ir::Graph> graph, GraphOptions options);

  /// One tensor per graph input (metadata must match); `weights`: one per
  /// weight (an undefined tensor keeps the captured one), or empty.
  std::vector<Tensor> Run(const std::vector<Tensor>& inputs, const std::vector<Tensor>& weights = {});

  const ir::Graph& graph() const { return *graph_; }
  const std::shared_ptr<const ir::Graph>& shared_graph() const { return graph_; }
  const GraphOptions& options() const { return options_; }
  /// Names of the weights, in the order Run's `weights` takes them.
  std::vector<std::string> WeightNames() const;
  /// The tensors bound to the weights at capture, in the same order.
  std::vector<Tensor> CapturedWeights() const;
  /// Kernels in execution order with their memory: the final execution-order IR.
  /// `failed_step` >= 0 marks that step "=>" (the running data recorder's view).
  std::string ExecutionOrderText(int64_t failed_step = -1) const;
  GraphMemoryStats memory_stats() const { return memory_stats_; }
  uint64_t runs() const { return runs_; }
  /// Steps skipped so far because their kept results were current, and the
  /// bytes kept now (Note [Results kept from weights] in graph_executor.cc).
  uint64_t kept_reuses() const { return kept_reuses_.load(); }
  size_t kept_bytes() const { return kept_bytes_.load(); }
  /// At most this many bytes of results kept per executable.
  static constexpr size_t kMaxKeptBytes = size_t{64} << 20;
  /// Whether the graph has dynamic dimensions (planned per input shapes).
  bool dynamic() const { return dynamic_; }
  /// Dynamic graphs: how many per-shape executables were made so far.
  size_t shape_plans() const { return plans_made_; }
  static constexpr size_t kMaxShapePlans = 16;
  /// The most kernels that ran at the same time in any run so far.
  int max_concurrent_kernels() const { return max_concurrent_.load(); }

 private:
  /// Arena offsets and sizes are multiples of this many bytes.
  static constexpr size_t kAlignment = 64;
  static size_t Aligned(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }
  static size_t MetaBytes(const ops::TensorMeta& m) { return NumBytes(m.shape, m.dtype); }

  // What a step whose results derive from weights alone keeps between runs
  // (Note [Results kept from weights] in graph_executor.cc).
  struct Kept {
    std::vector<std::weak_ptr<Storage>> storages;  // the inputs the step read last, with their offsets and stamps
    std::vector<size_t> offsets;
    std::vector<uint64_t> stamps;
    std::vector<Tensor> outputs;          // the kept results (none until the same inputs come a second time)
    std::vector<uint64_t> output_stamps;  // their stamps when the step wrote them
  };
  struct Step {
    int32_t node = -1;
    const kernels::KernelDef* kernel = nullptr;
    const ops::OpDef* op = nullptr;
    Dict attrs;
    std::vector<int32_t> inputs;   // slots
    std::vector<int32_t> outputs;  // slots
    std::string name;
    std::shared_ptr<const struct FusedPlan> plan;  // fused nodes
    std::vector<Tensor> meta_stand_ins;            // per input: its shape and dtype, for a meta-only input
    std::shared_ptr<Kept> kept;                    // results derived from weights alone; null otherwise
    struct TailOp {
      const ops::OpDef* op = nullptr;
      const kernels::KernelDef* kernel = nullptr;
      Dict attrs;
      std::string name;  // its launches' node name: the step's, then the op's (kernel dumps tell the two apart)
    };
    std::vector<TailOp> tail;  // run on output 0 in place after the kernel (Note [In-place tails], fusion.cc)
  };
  struct Binding {
    int32_t slot;
    int32_t node;
  };

  void Build();
  std::shared_ptr<GraphExecutable> PlanFor(const std::vector<Tensor>& inputs);
  void PlanMemory();
  void BuildDependencies();
  void RunStep(size_t index, std::vector<Tensor>& slots, const Dict& attrs);
  /// The step's kernel on `in` into `out`, then its in-place tail.
  static void Launch(const Step& step, const std::vector<Tensor>& in, std::vector<Tensor>& out, const Dict& attrs,
                     const struct LaunchSite& site);
  void RunConcurrently(int threads, std::vector<Tensor>& slots, const std::vector<Dict>& attrs);
  Tensor OutputTensor(int32_t slot, const ops::TensorMeta& meta, std::vector<Tensor>& slots);

  std::shared_ptr<const ir::Graph> graph_;
  GraphOptions options_;
  uint64_t run_interrupts_ = 0;  // InterruptCount() when the current run started (under run_mutex_)
  std::vector<Step> steps_;
  std::vector<int32_t> slot_of_node_;  // first output slot of each node
  std::vector<ops::TensorMeta> slot_meta_;
  std::vector<Binding> input_bindings_;   // graph inputs, in argument order
  std::vector<Binding> weight_bindings_;  // weights, in Run's order
  std::vector<Binding> constant_bindings_;
  std::vector<int32_t> output_slots_;
  std::vector<int64_t> arena_offset_;                // per slot; -1: not in the arena
  std::vector<std::vector<int32_t>> release_after_;  // O0, per step: slots whose bytes it uses last
  std::vector<bool> written_;                        // per slot: a step writes it in place
  std::vector<int32_t> view_of_;  // per slot: a view's source slot (Note [Views] in src/core/tensor.cc); -1 otherwise
  int32_t Root(int32_t slot) const;  // the slot owning a slot's bytes (through in-place aliases and views)
  void PlanViews();
  void PlanKeptResults();  // Note [Results kept from weights] in graph_executor.cc
  void RunKept(const Step& step, std::vector<Tensor>& slots, const std::vector<Tensor>& in, const Dict& attrs,
               const struct LaunchSite& site);
  void HoistInPlaceUpdates();   // Note [Hoisted in-place updates] in graph_executor.cc
  void RecomputeAcrossPeaks();  // Note [Recomputed elementwise values] in graph_executor.cc
  bool RecomputeOneAcrossPeak();
  std::vector<int32_t> alias_of_;                 // per slot: in-place outputs alias their input's slot; -1 otherwise
  std::vector<std::vector<int32_t>> successors_;  // per step
  std::vector<int32_t> predecessor_count_;        // per step
  std::atomic<int> max_concurrent_{1};
  std::atomic<uint64_t> kept_reuses_{0};
  std::atomic<size_t> kept_bytes_{0};
  size_t arena_bytes_ = 0;
  Tensor arena_;
  GraphMemoryStats memory_stats_;
  std::mutex run_mutex_;
  uint64_t runs_ = 0;
  bool dynamic_ = false;
  // Dynamic graphs: executables by input shapes, most recently used first (under run_mutex_).
  std::list<std::pair<std::vector<Shape>, std::shared_ptr<GraphExecutable>>> plans_;
  std::atomic<size_t> plans_made_{0};
};

/// What failed in a graph execution.
struct GraphFailure {
  size_t step;              // index in the execution order
  std::string_view op;      // op name
  std::string_view node;    // IR node name
  std::string_view source;  // where the node was defined ("" if unknown)
  ErrorKind kind;
  std::string_view message;           // the error as raised to the caller
  const std::vector<Tensor>& inputs;  // the failing step's inputs
};

/// Watches graph executions from outside the executor (the running data
/// recorder is one). Called on the running thread: Ran() after a run
/// completes, Failed() when a step fails, before the error reaches the
/// caller. Neither may throw.
class GraphObserver {
 public:
  virtual ~GraphObserver() = default;
  virtual void Ran(const GraphExecutable& executable) noexcept { (void)executable; }
  virtual void Failed(const GraphExecutable& executable, const GraphFailure& failure) noexcept {
    (void)executable;
    (void)failure;
  }
};

/// Observers are called in the order they were added; adding or removing one
/// while graphs run is safe. One relaxed load per run when there are none.
void AddGraphObserver(GraphObserver* observer);
void RemoveGraphObserver(GraphObserver* observer);

}  // namespace msrt::runtime
