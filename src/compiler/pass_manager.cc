#include "compiler/pass_manager.h"

#include <chrono>

namespace msrt::compiler {

bool PassManager::RunPasses(ir::Graph& graph, const std::vector<Pass>& passes) {
  bool any = false;
  for (const Pass& pass : passes) {
    auto start = std::chrono::steady_clock::now();
    bool changed = pass.run(graph);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    any |= changed;
    for (const auto& instrument : instruments_) instrument->AfterPass(pass.name, graph, changed, seconds);
  }
  return any;
}

void PassManager::RunStage(std::string_view stage, ir::Graph& graph, const std::vector<Pass>& passes,
                           int max_rounds) {
  for (int round = 0; round < max_rounds; ++round) {
    if (!RunPasses(graph, passes)) break;
  }
  EndStage(stage, graph);
}

void PassManager::EndStage(std::string_view stage, const ir::Graph& graph) {
  for (const auto& instrument : instruments_) instrument->AfterStage(stage, graph);
}

void PassManager::Artifact(std::string_view name, int min_level, const std::string& text) {
  for (const auto& instrument : instruments_) instrument->Artifact(name, min_level, text);
}

}  // namespace msrt::compiler
