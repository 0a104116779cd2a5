// Pass manager: runs the passes of the pass table phase by phase, with
// instruments around them.
//
// Note [Pass table]
// Every graph pass is one entry of the pass table (PassTable(), passes.cc):
// its name, the phase it runs in, the switch that enables it, whether it is
// on by default, whether it runs at jit_level O0, and its function. RunPhase
// runs a phase's entries in table order. jit_config's jit_level (or a
// network's ms.JitConfig) picks the default set: O0 the passes marked for
// it, O1/O2 the default ones plus graph-kernel fusion, unset the default
// ones. graph_kernel_flags `--disable_pass=<name>` turns a pass off and
// `--enable_pass=<name>` turns one on, whatever the level; a pass whose
// switch is closed (e.g. fusion while graph-kernel fusion is off) does not
// run either way. Instruments (pass timing, the
// verifier, save_graphs' IR dumps) see every pass from outside; no pass
// knows about them, so a pass gets them by being in the table. Adding a
// pass: its function and one table entry.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "context/graph_kernel_flags.h"
#include "ir/graph.h"

namespace msrt::compiler {

/// The phases of a compile that run table passes, in compile order.
enum class Phase : uint8_t {
  kOptimize,           // front end: algebra, folding, CSE, DCE to a fixpoint
  kLayout,             // backend: activation layouts (Note [Channels-last graphs])
  kGraphKernelFusion,  // backend: graph-kernel fusion
};

/// What must be on, besides the pass's own default and graph_kernel_flags'
/// enable_pass / disable_pass lists, for a pass to run.
enum class PassSwitch : uint8_t {
  kAlways,       // nothing more
  kGraphKernel,  // graph-kernel fusion: enable_graph_kernel, graph_kernel_flags --opt_level >= 1, or jit_level O1/O2
};

/// The compile level jit_config (or a network's ms.JitConfig) asks for.
/// kAuto keeps each pass's default; O0 runs only the passes declared for it
/// (what a graph needs); O1 and O2 run every default pass and graph-kernel
/// fusion (O2's whole-graph sinking is Ascend's).
enum class JitLevel : uint8_t { kAuto, kO0, kO1, kO2 };
/// "" → kAuto, "O0".."O2"; anything else is an internal error (the context validated it).
JitLevel ParseJitLevel(std::string_view text);

/// What passes read and report besides the graph (one per compile).
struct PassContext {
  DeviceTarget device = DeviceTarget::kCPU;
  JitLevel jit_level = JitLevel::kAuto;
  context::GraphKernelFlags flags;  // graph_kernel_flags as read for this compile
  std::string decisions;            // what layout and fusion passes did, one line each
  size_t channels_last_ops = 0;     // ops run on NHWC activations
  size_t layout_conversions = 0;    // transposes added where NHWC values meet NCHW ones
  // Note [float16 held in float32] (compiler/half_in_float32.h):
  size_t float16_in_float32_ops = 0;  // ops computing float16 values in float32
  size_t float16_roundings = 0;       // round_to_float16 ops added after them
  size_t float16_conversions = 0;     // casts added where held values meet ops that keep float16
  std::string float16_kept;           // "op x2, ...": ops that keep float16 values
};

/// One entry of the pass table.
struct PassDef {
  std::string_view name;
  Phase phase;
  PassSwitch enabled_by;
  bool default_on;
  bool at_o0;  // runs at jit_level O0 too: a graph needs it, not only a faster one
  bool (*run)(ir::Graph& graph, PassContext& context);  // returns whether the graph changed
};

/// How a phase runs: the stage it announces to instruments (save_graphs
/// writes one file per announced stage) and how often its passes repeat.
struct PhaseDef {
  Phase phase;
  std::string_view stage;
  int max_rounds;  // the pass list repeats while a pass changed the graph, at most this often
  bool announce;   // false: part of a stage announced later ("backend")
};

/// The pass table (passes.cc), in run order within each phase.
std::span<const PassDef> PassTable();
const PhaseDef& PhaseInfo(Phase phase);
/// Whether `pass`'s switch is on for `context`.
bool SwitchOn(PassSwitch which, const PassContext& context);
/// Whether `pass` runs for `context` (Note [Pass table]).
bool PassEnabled(const PassDef& pass, const PassContext& context);

class PassInstrument {
 public:
  virtual ~PassInstrument() = default;
  /// A compile stage ended ("capture", "optimize", "fusion"...): the graph as it stands.
  virtual void AfterStage(std::string_view stage, const ir::Graph& graph) {
    (void)stage;
    (void)graph;
  }
  virtual void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) {
    (void)pass;
    (void)graph;
    (void)changed;
    (void)seconds;
  }
  /// A free-form artifact of the compile (e.g. the execution order).
  virtual void Artifact(std::string_view name, int min_level, const std::string& text) {
    (void)name;
    (void)min_level;
    (void)text;
  }
};

/// Where a compile's pass manager records what its instruments saw.
struct PassRecords {
  std::vector<std::pair<std::string, double>>* pass_seconds = nullptr;  // every pass run, in order
  std::vector<std::string>* files = nullptr;                            // save_graphs files written
};

class PassManager {
 public:
  PassManager() = default;
  /// With the compile's instruments: the verifier (debug builds, or
  /// MSRT_VERIFY_IR=1), pass timing into `records`, and save_graphs' IR
  /// dumps (MS_DEV_SAVE_GRAPHS / MS_DEV_SAVE_GRAPHS_PATH win over the
  /// context) numbered for `graph_id`.
  static PassManager ForCompile(int64_t graph_id, PassRecords records);

  void AddInstrument(std::shared_ptr<PassInstrument> instrument) { instruments_.push_back(std::move(instrument)); }
  const std::vector<std::shared_ptr<PassInstrument>>& instruments() const { return instruments_; }

  /// Runs the enabled passes of `phase` (PassTable order), repeating them as
  /// PhaseInfo says, then announces its stage. A phase none of whose passes
  /// has its switch on does nothing, not even announce.
  void RunPhase(Phase phase, ir::Graph& graph, PassContext& context);
  /// Announces a stage whose work was done elsewhere (capture, backend).
  void EndStage(std::string_view stage, const ir::Graph& graph);
  void Artifact(std::string_view name, int min_level, const std::string& text);

 private:
  /// Runs `passes` once each, in order; returns whether any changed the graph.
  bool RunPasses(ir::Graph& graph, const std::vector<const PassDef*>& passes, PassContext& context);

  std::vector<std::shared_ptr<PassInstrument>> instruments_;
};

// The generic graph passes (passes.cc).
/// Removes nodes whose results nobody uses and which have no side effects.
bool EliminateDeadCode(ir::Graph& graph);
/// Merges pure nodes computing the same op on the same values with the same
/// attributes (and equal small constants); reads of a weight merge only
/// between the same writes.
bool EliminateCommonSubexpressions(ir::Graph& graph);
/// Evaluates pure nodes whose inputs are all constants (results up to
/// `kFoldLimitElements` elements) at compile time.
bool FoldConstants(ir::Graph& graph);
/// Identities the ops declare: x+0, x*1, x/1, reshape/cast to the same
/// shape and dtype...
bool SimplifyAlgebra(ir::Graph& graph);

inline constexpr int64_t kFoldLimitElements = 1 << 16;

}  // namespace msrt::compiler
