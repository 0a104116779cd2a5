// The pass table and the pass manager's instruments (Note [Pass table] in
// src/compiler/pass_manager.h): every entry runs and is timed through the
// compile pipeline, and graph_kernel_flags switches entries off and on.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "compiler/capture_test_util.h"
#include "compiler/pass_manager.h"
#include "compiler/pipeline.h"
#include "msrt/context/context.h"
#include "ops/call.h"
#include "runtime/graph_executor.h"

namespace msrt {
namespace {

using compiler::testing::CaptureOf;
using compiler::testing::Read;
using compiler::testing::Vec;

std::vector<std::string> PassesRun(const compiler::CompileReport& report) {
  std::vector<std::string> names;
  for (const auto& [name, seconds] : report.pass_seconds) {
    EXPECT_GE(seconds, 0.0) << name;
    names.push_back(name);
  }
  return names;
}

bool Ran(const std::vector<std::string>& names, std::string_view pass) {
  return std::find(names.begin(), names.end(), pass) != names.end();
}

// (x * (2 + 2)) feeding a fusable elementwise chain: something for every pass.
std::shared_ptr<ir::Graph> Program() {
  Tensor two = Vec({2, 2, 2});
  return CaptureOf([two](const Tensor& x) {
    Tensor four = ops::Call1("add", {two, two});  // constant: folds
    Tensor y = ops::Call1("tanh", {ops::Call1("mul", {x, four})});
    return std::vector<Tensor>{ops::Call1("neg", {y})};
  });
}

compiler::Compiled CompileWith(const std::string& flags) {
  context::ScopedOverride keys(context::Family::kRuntime,
                               Dict{{"enable_graph_kernel", Value(true)}, {"graph_kernel_flags", Value(flags)}});
  return compiler::Compile(Program(), compiler::NextGraphId());
}

TEST(PassTable, EntriesHaveUniqueNamesAndKnownPhases) {
  std::set<std::string_view> names;
  for (const compiler::PassDef& pass : compiler::PassTable()) {
    EXPECT_TRUE(names.insert(pass.name).second) << "two passes named " << pass.name;
    EXPECT_NE(pass.run, nullptr) << pass.name;
    EXPECT_EQ(compiler::PhaseInfo(pass.phase).phase, pass.phase) << pass.name;
  }
  EXPECT_GE(names.size(), 7u);
}

TEST(PassTable, EveryEntryRunsAndIsTimedByThePassManager) {
  compiler::Compiled compiled = CompileWith("");
  std::vector<std::string> ran = PassesRun(compiled.report);
  for (const compiler::PassDef& pass : compiler::PassTable()) {
    EXPECT_TRUE(Ran(ran, pass.name)) << pass.name << " missing from the pass timings";
  }
  Tensor x = Vec({0, 1, -1});
  runtime::GraphExecutable unoptimized(Program(), {});
  EXPECT_EQ(Read(compiled.executable->Run({x})[0]), Read(unoptimized.Run({x})[0]));
}

TEST(PassTable, DisablePassFlagKeepsThatPassFromRunning) {
  compiler::Compiled plain = CompileWith("");
  compiler::Compiled unfolded = CompileWith("--disable_pass=fold_constants");
  std::vector<std::string> ran = PassesRun(unfolded.report);
  EXPECT_FALSE(Ran(ran, "fold_constants"));
  EXPECT_TRUE(Ran(ran, "eliminate_dead_code"));
  EXPECT_TRUE(Ran(ran, "fuse_elementwise"));
  // The constant add is still there without folding; results are the same.
  EXPECT_GT(unfolded.optimized->OpCount(), plain.optimized->OpCount());
  Tensor x = Vec({0.5f, -2, 3});
  EXPECT_EQ(Read(unfolded.executable->Run({x})[0]), Read(plain.executable->Run({x})[0]));
}

TEST(PassTable, SwitchOffPhasesRunNothingWhateverTheLists) {
  context::ScopedOverride keys(context::Family::kRuntime,
                               Dict{{"enable_graph_kernel", Value(false)},
                                    {"graph_kernel_flags", Value("--enable_pass=fuse_elementwise")}});
  compiler::Compiled compiled = compiler::Compile(Program(), compiler::NextGraphId());
  std::vector<std::string> ran = PassesRun(compiled.report);
  EXPECT_FALSE(Ran(ran, "fuse_elementwise"));
  // Epilogue fusion is a backend pass of its own switch (always on), not graph-kernel fusion's.
  EXPECT_TRUE(Ran(ran, "fuse_pairs"));
  EXPECT_TRUE(Ran(ran, "fuse_epilogues"));
  EXPECT_TRUE(Ran(ran, "channels_last"));
}

TEST(PassTable, EnablePassTurnsOnADefaultOffPass) {
  compiler::PassDef off{"an_experiment",
                        compiler::Phase::kOptimize,
                        compiler::PassSwitch::kAlways,
                        false,
                        false,
                        [](ir::Graph&, compiler::PassContext&) { return false; }};
  compiler::PassContext context;
  EXPECT_FALSE(compiler::PassEnabled(off, context));
  context.flags.enable_pass = {"an_experiment"};
  EXPECT_TRUE(compiler::PassEnabled(off, context));
  context.flags.disable_pass = {"an_experiment"};  // off by default: only enable_pass counts
  EXPECT_TRUE(compiler::PassEnabled(off, context));
  compiler::PassDef gated{"gated",
                          compiler::Phase::kGraphKernelFusion,
                          compiler::PassSwitch::kGraphKernel,
                          true,
                          false,
                          [](ir::Graph&, compiler::PassContext&) { return false; }};
  EXPECT_FALSE(compiler::PassEnabled(gated, context));  // graph-kernel fusion is off
  context.flags.opt_level = context::kGraphKernelOptLevelBasic;
  EXPECT_TRUE(compiler::PassEnabled(gated, context));
}

compiler::Compiled CompileAtLevel(const std::string& level, bool graph_kernel, const std::string& flags = "") {
  Dict keys_set{{"enable_graph_kernel", Value(graph_kernel)}, {"graph_kernel_flags", Value(flags)}};
  if (!level.empty()) keys_set.Set("jit_config", Value(Dict{{"jit_level", Value(level)}}));  // else unset
  context::ScopedOverride keys(context::Family::kRuntime, keys_set);
  return compiler::Compile(Program(), compiler::NextGraphId());
}

TEST(PassTable, JitLevelO0RunsOnlyThePassesAGraphNeeds) {
  compiler::Compiled o0 = CompileAtLevel("O0", /*graph_kernel=*/true);
  std::vector<std::string> ran = PassesRun(o0.report);
  for (const compiler::PassDef& pass : compiler::PassTable()) {
    EXPECT_EQ(Ran(ran, pass.name), pass.at_o0) << pass.name;
  }
  EXPECT_TRUE(Ran(ran, "eliminate_dead_code"));
  EXPECT_EQ(o0.report.fused_chains, 0u);
  // The constant add stays unfolded; the results are those of the optimised graph.
  compiler::Compiled o1 = CompileAtLevel("O1", /*graph_kernel=*/false);
  EXPECT_GT(o0.optimized->OpCount(), o1.optimized->OpCount());
  Tensor x = Vec({0.25f, -1, 2});
  EXPECT_EQ(Read(o0.executable->Run({x})[0]), Read(o1.executable->Run({x})[0]));
}

TEST(PassTable, JitLevelO1AndO2FuseWithoutEnableGraphKernel) {
  for (const char* level : {"O1", "O2"}) {
    compiler::Compiled compiled = CompileAtLevel(level, /*graph_kernel=*/false);
    std::vector<std::string> ran = PassesRun(compiled.report);
    EXPECT_TRUE(Ran(ran, "fuse_elementwise")) << level;
    EXPECT_TRUE(Ran(ran, "fold_constants")) << level;
    EXPECT_GE(compiled.report.fused_chains, 1u) << level;
  }
  // Unset: fusion only when asked for, as before.
  compiler::Compiled unset = CompileAtLevel("", /*graph_kernel=*/false);
  EXPECT_FALSE(Ran(PassesRun(unset.report), "fuse_elementwise"));
}

TEST(PassTable, PassListsWinOverTheJitLevel) {
  compiler::Compiled o0 = CompileAtLevel("O0", /*graph_kernel=*/false, "--enable_pass=fold_constants");
  EXPECT_TRUE(Ran(PassesRun(o0.report), "fold_constants"));
  compiler::Compiled o1 = CompileAtLevel("O1", /*graph_kernel=*/false, "--disable_pass=fuse_elementwise");
  std::vector<std::string> ran = PassesRun(o1.report);
  EXPECT_FALSE(Ran(ran, "fuse_elementwise"));
  EXPECT_TRUE(Ran(ran, "fuse_epilogues"));
}

}  // namespace
}  // namespace msrt
