// The compiled-function front door: call keys, the eager fallback decision and
// the compile cache on disk (src/compiler/compiled_function.h).
#include "compiler/compiled_function.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <vector>

#include "compiler/capture_test_util.h"
#include "context/context_test_util.h"
#include "core/file_io.h"
#include "msrt/context/context.h"
#include "ops/call.h"
#include "runtime/rank.h"

namespace msrt {
namespace {

namespace fs = std::filesystem;
using compiler::CacheUse;
using compiler::CallHooks;
using compiler::CallKey;
using compiler::CallSignature;
using compiler::CompileCache;
using compiler::CompiledEntry;
using compiler::CompiledFunction;
using compiler::TraceResult;
using context::testing::WarningRecorder;

CallSignature SignatureOf(const Shape& shape, DType dtype, int64_t constant) {
  CallSignature sig;
  sig.Begin("tuple");
  sig.Begin("tuple");
  sig.AddTensor(shape, dtype);
  sig.AddConstant("int", std::to_string(constant), constant);
  sig.End();
  sig.Begin("dict");
  sig.End();
  sig.End();
  return sig;
}

CallKey KeyOf(const Shape& shape, DType dtype = DType::kFloat32, int64_t constant = 1) {
  return compiler::MakeCallKey(compiler::CallIdentity(std::nullopt, std::nullopt), SignatureOf(shape, dtype, constant));
}

struct Payload final : compiler::EntryPayload {};

// A front end whose body is exp(x) on a float32 vector of 3.
class FakeHooks final : public CallHooks {
 public:
  int traces = 0;
  int adopted = 0;
  bool fail = false;
  std::vector<std::string> sources;
  std::string template_json = R"({"t": "slot"})";
  std::string adopted_template;

  TraceResult Trace() override {
    ++traces;
    TraceResult result;
    if (fail) {
      result.failed_at = "model.py:3: 'if x.sum() > 0:'";
      result.error = "the value of a symbolic tensor was read";
      return result;
    }
    auto graph = compiler::testing::CaptureOf(
        [](const Tensor& x) { return std::vector<Tensor>{ops::Call1("exp", {x})}; });
    result.compiled = std::make_shared<const compiler::Compiled>(compiler::Compile(graph, compiler::NextGraphId()));
    result.payload = std::make_shared<Payload>();
    return result;
  }
  std::vector<std::string> SourceFiles() override { return sources; }
  std::shared_ptr<compiler::EntryPayload> Adopt(const std::shared_ptr<const compiler::Compiled>&,
                                                const std::string& json, const std::string&) override {
    ++adopted;
    adopted_template = json;
    return std::make_shared<Payload>();
  }
  std::optional<std::string> CacheTemplate(const CompiledEntry&, std::string*) override { return template_json; }
};

class CompiledFunctionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("msrt_compiled_function_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    SetContext(Dict{{"enable_compile_cache", Value(false)},
                    {"compile_cache_path", Value("")},
                    {"jit_syntax_level", Value(2)},
                    {"memory_optimize_level", Value("O0")}});
    fs::remove_all(dir_);
  }
  void EnableCache() {
    SetContext(Dict{{"enable_compile_cache", Value(true)}, {"compile_cache_path", Value((dir_ / "cache").string())}});
    CompileCache::ResetIndexForTesting();
  }
  std::string WriteSource(const std::string& text) {
    std::string path = (dir_ / "net.py").string();
    std::ofstream(path) << text;
    return path;
  }
  fs::path Folder() const { return dir_ / "cache" / ("rank_" + std::to_string(runtime::RankId())) / "graph_cache"; }
  fs::path dir_;
};

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CallSignature, SameArgumentsGiveTheSameKeyAndAChangedShapeDtypeOrValueAnother) {
  EXPECT_EQ(KeyOf({2, 3}), KeyOf({2, 3}));
  EXPECT_FALSE(KeyOf({2, 3}) == KeyOf({3, 2}));
  EXPECT_FALSE(KeyOf({2, 3}) == KeyOf({2, 3}, DType::kFloat16));
  EXPECT_FALSE(KeyOf({2, 3}) == KeyOf({2, 3}, DType::kFloat32, 2));
  EXPECT_EQ(SignatureOf({2, 3}, DType::kFloat32, 1).text(), "tuple(tuple(Tensor[Float32](2, 3), int:1), dict())");
}

TEST(CallSignature, HashesAreInTheMemoryKeyOnly) {
  CallSignature a, b;
  a.AddConstant("Config", "Config()", 1);
  b.AddConstant("Config", "Config()", 2);  // equal repr, different objects
  EXPECT_EQ(a.text(), b.text());           // what the compile cache compares across processes
  EXPECT_NE(a.memory_text(), b.memory_text());
  CallSignature c, d;
  c.AddConstant("int", "1", 1);
  d.AddConstant("bool", "True", 1);  // equal in Python, but another type
  EXPECT_NE(c.memory_text(), d.memory_text());
}

TEST(CallSignature, TheIdentityAndTheCompileAffectingContextKeysArePartOfTheKey) {
  CallSignature sig = SignatureOf({4}, DType::kFloat32, 1);
  auto train = compiler::MakeCallKey(compiler::CallIdentity(7, true), sig);
  auto eval = compiler::MakeCallKey(compiler::CallIdentity(7, false), sig);
  auto other_owner = compiler::MakeCallKey(compiler::CallIdentity(8, true), sig);
  EXPECT_FALSE(train == eval);
  EXPECT_FALSE(train == other_owner);
  SetContext(Dict{{"memory_optimize_level", Value("O1")}});  // affects compile
  auto changed = compiler::MakeCallKey(compiler::CallIdentity(7, true), sig);
  SetContext(Dict{{"memory_optimize_level", Value("O0")}});
  EXPECT_FALSE(train == changed);
  EXPECT_EQ(train, compiler::MakeCallKey(compiler::CallIdentity(7, true), sig));
}

TEST(Sha256, MatchesTheStandardVectors) {
  EXPECT_EQ(compiler::Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(compiler::Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(compiler::Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_F(CompiledFunctionTest, TheDependencyHashFollowsSourcesContextAndNothingElse) {
  std::string path = WriteSource("x * 2.0\n");
  std::string first = compiler::DependencyHash(5, {path});
  EXPECT_EQ(first.size(), 64u);
  EXPECT_EQ(first, compiler::DependencyHash(5, {path}));
  EXPECT_NE(first, compiler::DependencyHash(6, {path}));
  WriteSource("x * 3.0\n");
  EXPECT_NE(first, compiler::DependencyHash(5, {path}));
  EXPECT_NE(compiler::DependencyHash(5, {(dir_ / "missing.py").string()}), compiler::DependencyHash(5, {}));
}

TEST_F(CompiledFunctionTest, AHitReusesTheEntryAndAMissTracesAgain) {
  CompiledFunction fn("f");
  FakeHooks hooks;
  bool fresh = false;
  auto first = fn.Resolve(KeyOf({3}), "k", hooks, &fresh);
  EXPECT_TRUE(fresh);
  auto again = fn.Resolve(KeyOf({3}), "k", hooks, &fresh);
  EXPECT_FALSE(fresh);
  EXPECT_EQ(first, again);
  EXPECT_EQ(hooks.traces, 1);
  fn.Resolve(KeyOf({3}, DType::kFloat32, 2), "k2", hooks, &fresh);
  EXPECT_TRUE(fresh);
  EXPECT_EQ(hooks.traces, 2);
  EXPECT_EQ(fn.size(), 2u);
  EXPECT_EQ(fn.entries()[0].second, first);  // in the order they were made
  EXPECT_EQ(first->cache, CacheUse::kNone);
  Tensor x = compiler::testing::Vec({0, 1, 2});
  auto out = compiler::testing::Read(first->compiled->executable->Run({x})[0]);
  EXPECT_NEAR(out[2], std::exp(2.0f), 1e-5);
}

TEST_F(CompiledFunctionTest, AFailedCaptureRaisesUnderStrictAndOtherwiseRunsEagerlyOnceWarned) {
  FakeHooks hooks;
  hooks.fail = true;
  SetContext(Dict{{"jit_syntax_level", Value(0)}});
  CompiledFunction strict("net");
  try {
    strict.Resolve(KeyOf({3}), "k", hooks);
    FAIL() << "expected RuntimeError";
  } catch (const RuntimeError& e) {
    EXPECT_TRUE(Contains(e.what(), "Graph compilation of 'net' failed at model.py:3: 'if x.sum() > 0:'"));
  }
  EXPECT_EQ(strict.size(), 0u);  // nothing cached: the next call tries again

  SetContext(Dict{{"jit_syntax_level", Value(2)}});
  WarningRecorder recorder;
  CompiledFunction lax("net");
  auto entry = lax.Resolve(KeyOf({3}), "k", hooks);
  EXPECT_TRUE(entry->eager());
  auto warnings = recorder.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0].message, "'net' runs in PYNATIVE mode instead of as a graph"));
  lax.Resolve(KeyOf({3}), "k", hooks);  // the decision is cached
  EXPECT_EQ(recorder.Count(), 0u);
  EXPECT_EQ(hooks.traces, 2);

  CompiledFunction no_fallback("export", /*allow_fallback=*/false);
  EXPECT_THROW(no_fallback.Resolve(KeyOf({3}), "k", hooks), RuntimeError);
}

TEST_F(CompiledFunctionTest, TheCompileCacheRoundTripsAnEntryToALaterProcess) {
  EnableCache();
  FakeHooks hooks;
  hooks.sources = {WriteSource("x * 2.0\n")};
  hooks.template_json = R"({"t": "tuple", "items": [{"t": "slot"}, {"t": "int", "v": "3"}]})";
  CompiledFunction first("f");
  auto stored = first.Resolve(KeyOf({3}), "f: (3,)", hooks);
  EXPECT_EQ(stored->cache, CacheUse::kStored);
  fs::path folder = Folder();
  EXPECT_EQ(stored->file, (folder / "compile_cache_0.msgraph").string());
  ASSERT_TRUE(fs::is_regular_file(folder / "compile_dependency.hash"));
  std::string hashes = ReadFile((folder / "compile_dependency.hash").string());
  EXPECT_EQ(hashes, "0 " + compiler::DependencyHash(context::Global().CompileKeyHash(), hooks.sources) + "\n");

  // A later process: a new function, the index counting from 0 again.
  CompileCache::ResetIndexForTesting();
  WarningRecorder recorder;
  CompiledFunction second("f");
  auto loaded = second.Resolve(KeyOf({3}), "f: (3,)", hooks);
  EXPECT_EQ(loaded->cache, CacheUse::kLoaded);
  EXPECT_EQ(hooks.traces, 1);
  EXPECT_EQ(hooks.adopted, 1);
  EXPECT_EQ(hooks.adopted_template, R"({"items":[{"t":"slot"},{"t":"int","v":"3"}],"t":"tuple"})");
  EXPECT_EQ(recorder.Count(), 0u);
  Tensor x = compiler::testing::Vec({0, 1, 2});
  auto out = compiler::testing::Read(loaded->compiled->executable->Run({x})[0]);
  EXPECT_NEAR(out[1], std::exp(1.0f), 1e-5);
}

std::vector<std::string> Messages(WarningRecorder& recorder) {
  std::vector<std::string> out;
  for (const auto& w : recorder.Take()) out.push_back(w.message);
  return out;
}

bool AnyContains(const std::vector<std::string>& messages, const std::string& part) {
  for (const auto& m : messages) {
    if (Contains(m, part)) return true;
  }
  return false;
}

TEST_F(CompiledFunctionTest, ChangedSourcesOrAnotherCallOrADamagedFileCompileAgainWithAWarning) {
  EnableCache();
  FakeHooks hooks;
  hooks.sources = {WriteSource("x * 2.0\n")};
  CompiledFunction("f").Resolve(KeyOf({3}), "f: (3,)", hooks);
  WarningRecorder recorder;

  WriteSource("x * 3.0\n");  // the network's source changed
  CompileCache::ResetIndexForTesting();
  auto entry = CompiledFunction("f").Resolve(KeyOf({3}), "f: (3,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kStored);  // compiled again and rewritten
  EXPECT_TRUE(AnyContains(Messages(recorder), "is out of date"));

  CompileCache::ResetIndexForTesting();
  entry = CompiledFunction("f").Resolve(KeyOf({4}), "f: (4,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kStored);
  EXPECT_TRUE(AnyContains(Messages(recorder), "was compiled for another call (f: (3,)), not f: (4,)"));

  fs::path file = Folder() / "compile_cache_0.msgraph";
  std::string bytes = ReadFile(file.string());
  bytes[bytes.size() / 2] ^= 0x10;
  WriteFileAtomic(file.string(), bytes);
  CompileCache::ResetIndexForTesting();
  entry = CompiledFunction("f").Resolve(KeyOf({4}), "f: (4,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kStored);
  EXPECT_TRUE(AnyContains(Messages(recorder), "can not be read"));

  CompileCache::ResetIndexForTesting();
  entry = CompiledFunction("f").Resolve(KeyOf({4}), "f: (4,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kLoaded);  // the rewritten entry serves the next one
  EXPECT_EQ(recorder.Count(), 0u);
  EXPECT_EQ(hooks.traces, 4);
}

TEST_F(CompiledFunctionTest, AnUnwritableCacheFolderWarnsAndTheEntryStillRuns) {
  std::ofstream((dir_ / "file").string()) << "x";
  SetContext(
      Dict{{"enable_compile_cache", Value(true)}, {"compile_cache_path", Value((dir_ / "file" / "cache").string())}});
  WarningRecorder recorder;
  FakeHooks hooks;
  auto entry = CompiledFunction("f").Resolve(KeyOf({3}), "f: (3,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kNone);
  EXPECT_FALSE(entry->eager());
  EXPECT_TRUE(AnyContains(Messages(recorder), "The compile cache can not be written"));
}

TEST_F(CompiledFunctionTest, AnEntryThatCanNotBeCachedSaysWhy) {
  EnableCache();
  class Uncacheable final : public CallHooks {
   public:
    FakeHooks inner;
    TraceResult Trace() override { return inner.Trace(); }
    std::vector<std::string> SourceFiles() override { return {}; }
    std::shared_ptr<compiler::EntryPayload> Adopt(const std::shared_ptr<const compiler::Compiled>&, const std::string&,
                                                  const std::string&) override {
      return nullptr;
    }
    std::optional<std::string> CacheTemplate(const CompiledEntry&, std::string* why_not) override {
      *why_not = "'f' runs Python code on every step: it is not cached.";
      return std::nullopt;
    }
  } hooks;
  WarningRecorder recorder;
  auto entry = CompiledFunction("f").Resolve(KeyOf({3}), "f: (3,)", hooks);
  EXPECT_EQ(entry->cache, CacheUse::kNone);
  EXPECT_EQ(Messages(recorder), std::vector<std::string>{"'f' runs Python code on every step: it is not cached."});
  EXPECT_FALSE(fs::exists(Folder() / "compile_cache_0.msgraph"));
}

}  // namespace
}  // namespace msrt
