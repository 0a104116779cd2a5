// Pass manager: runs graph passes in order, with instruments around them.
//
// Passes transform a Graph and say whether they changed it. Instruments
// (the IR dumper behind save_graphs, the verifier, pass timing) see every
// pass and every stage from outside; no pass knows about them.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace msrt::compiler {

struct Pass {
  std::string name;
  std::function<bool(ir::Graph&)> run;  // returns whether the graph changed
};

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

/// Runs `passes` over `graph` once each, in order, then repeats the whole
/// list while any pass changed the graph (at most `max_rounds` times).
/// Instruments hear every pass and, at the end, the stage.
class PassManager {
 public:
  void AddInstrument(std::shared_ptr<PassInstrument> instrument) { instruments_.push_back(std::move(instrument)); }
  const std::vector<std::shared_ptr<PassInstrument>>& instruments() const { return instruments_; }

  void RunStage(std::string_view stage, ir::Graph& graph, const std::vector<Pass>& passes, int max_rounds = 1);
  /// Runs `passes` once each, in order, as part of a stage announced later.
  /// Returns whether any changed the graph.
  bool RunPasses(ir::Graph& graph, const std::vector<Pass>& passes);
  /// Announces a stage whose work was done elsewhere (capture).
  void EndStage(std::string_view stage, const ir::Graph& graph);
  void Artifact(std::string_view name, int min_level, const std::string& text);

 private:
  std::vector<std::shared_ptr<PassInstrument>> instruments_;
};

// The graph passes (passes.cc).
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
