#include "compiler/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "context/options.h"
#include "core/file_io.h"
#include "msrt/core/errors.h"
#include "runtime/rank.h"

namespace msrt::compiler {
namespace {

namespace opts = context::runtime_options;

bool Listed(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// save_graphs: one file per stage (level 1), per pass and the execution
// order (2), graphviz and detailed sources (3).
class IrDumper final : public PassInstrument {
 public:
  IrDumper(int level, std::filesystem::path dir, int64_t graph_id, std::vector<std::string>* files)
      : level_(level), dir_(std::move(dir)), graph_id_(graph_id), files_(files) {}

  void AfterStage(std::string_view stage, const ir::Graph& graph) override {
    if (level_ >= 1) Write(stage, graph);
  }
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)changed;
    (void)seconds;
    if (level_ >= 2) Write(pass, graph);
  }
  void Artifact(std::string_view name, int min_level, const std::string& text) override {
    if (level_ >= min_level) WriteFile(StrCat(Prefix(name), ".ir"), text);
  }

 private:
  std::string Prefix(std::string_view what) {
    char number[8];
    std::snprintf(number, sizeof number, "%02d", index_++);
    char id[16];
    std::snprintf(id, sizeof id, "%04lld", static_cast<long long>(graph_id_));
    return StrCat(number, "_", what, "_", id);
  }
  void Write(std::string_view what, const ir::Graph& graph) {
    std::string prefix = Prefix(what);
    WriteFile(prefix + ".ir", ir::PrintText(graph));
    if (level_ >= 3) WriteFile(prefix + ".dot", ir::PrintDot(graph));
  }
  void WriteFile(const std::string& name, const std::string& text) {
    std::filesystem::path path = dir_ / name;
    try {
      CreateDirectories(dir_.string());
      WriteFileAtomic(path.string(), text, Durability::kNoSync);
    } catch (const OSError& e) {
      throw OSError(StrCat("save_graphs: ", e.message()));
    }
    if (files_ != nullptr) files_->push_back(path.string());
  }

  int level_;
  std::filesystem::path dir_;
  int64_t graph_id_;
  std::vector<std::string>* files_;
  int index_ = 0;
};

class Verifier final : public PassInstrument {
 public:
  void AfterStage(std::string_view stage, const ir::Graph& graph) override { ir::Verify(graph, stage); }
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)seconds;
    if (changed) ir::Verify(graph, pass);
  }
};

class PassTimer final : public PassInstrument {
 public:
  explicit PassTimer(std::vector<std::pair<std::string, double>>* seconds) : seconds_(seconds) {}
  void AfterPass(std::string_view pass, const ir::Graph& graph, bool changed, double seconds) override {
    (void)graph;
    (void)changed;
    seconds_->emplace_back(std::string(pass), seconds);
  }

 private:
  std::vector<std::pair<std::string, double>>* seconds_;
};

// The verifier runs after every pass in debug builds, and wherever
// MSRT_VERIFY_IR=1 (the test suites set it).
bool VerifyEnabled() {
  const char* env = std::getenv("MSRT_VERIFY_IR");
  if (env != nullptr) return std::string_view(env) == "1";
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

}  // namespace

JitLevel ParseJitLevel(std::string_view text) {
  if (text.empty()) return JitLevel::kAuto;
  if (text == "O0") return JitLevel::kO0;
  if (text == "O1") return JitLevel::kO1;
  MSRT_INTERNAL_ASSERT(text == "O2", "unknown jit_level '", text, "'");
  return JitLevel::kO2;
}

bool SwitchOn(PassSwitch which, const PassContext& context) {
  switch (which) {
    case PassSwitch::kAlways: return true;
    case PassSwitch::kGraphKernel:
      return context.flags.enabled() || context.jit_level == JitLevel::kO1 || context.jit_level == JitLevel::kO2;
  }
  return false;
}

bool PassEnabled(const PassDef& pass, const PassContext& context) {
  if (!SwitchOn(pass.enabled_by, context)) return false;
  // graph_kernel_flags' lists name passes one by one, so they win over the level.
  if (Listed(context.flags.enable_pass, pass.name)) return true;
  if (Listed(context.flags.disable_pass, pass.name)) return false;
  if (context.jit_level == JitLevel::kO0) return pass.at_o0;
  return pass.default_on;
}

PassManager PassManager::ForCompile(int64_t graph_id, PassRecords records) {
  PassManager manager;
  if (VerifyEnabled()) manager.AddInstrument(std::make_shared<Verifier>());
  if (records.pass_seconds != nullptr) manager.AddInstrument(std::make_shared<PassTimer>(records.pass_seconds));
  // MS_DEV_SAVE_GRAPHS / MS_DEV_SAVE_GRAPHS_PATH win over the context values.
  int64_t level = opts::SaveGraphs().Effective();
  if (level > 0) {
    std::string dir = opts::SaveGraphsPath().Effective();
    // A rank of a distributed job writes under rank_<id>/ (Note [Per-rank places]).
    std::filesystem::path path = runtime::RankPlace(dir.empty() ? "." : dir);
    manager.AddInstrument(std::make_shared<IrDumper>(static_cast<int>(level), path, graph_id, records.files));
  }
  return manager;
}

bool PassManager::RunPasses(ir::Graph& graph, const std::vector<const PassDef*>& passes, PassContext& context) {
  bool any = false;
  for (const PassDef* pass : passes) {
    auto start = std::chrono::steady_clock::now();
    bool changed = pass->run(graph, context);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    any |= changed;
    for (const auto& instrument : instruments_) instrument->AfterPass(pass->name, graph, changed, seconds);
  }
  return any;
}

void PassManager::RunPhase(Phase phase, ir::Graph& graph, PassContext& context) {
  std::vector<const PassDef*> passes;
  bool switched_on = false;
  for (const PassDef& pass : PassTable()) {
    if (pass.phase != phase) continue;
    switched_on |= SwitchOn(pass.enabled_by, context);
    if (PassEnabled(pass, context)) passes.push_back(&pass);
  }
  if (!switched_on) return;
  const PhaseDef& info = PhaseInfo(phase);
  for (int round = 0; round < info.max_rounds; ++round) {
    if (!RunPasses(graph, passes, context)) break;
  }
  if (info.announce) EndStage(info.stage, graph);
}

void PassManager::EndStage(std::string_view stage, const ir::Graph& graph) {
  for (const auto& instrument : instruments_) instrument->AfterStage(stage, graph);
}

void PassManager::Artifact(std::string_view name, int min_level, const std::string& text) {
  for (const auto& instrument : instruments_) instrument->Artifact(name, min_level, text);
}

}  // namespace msrt::compiler
