// The context store: atomic calls, device-first ordering, key resolution,
// deprecations, freezing, resets, profiles, environment variables, the
// compile-key hash, snapshots, explain and summary. Every test uses its own
// Store, never the process-wide one.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "context/context_test_util.h"

namespace msrt::context {
namespace {

using testing::CleanContextEnv;
using testing::Contains;
using testing::MessageOf;
using testing::ScopedEnv;
using testing::WarningRecorder;

constexpr Family kRt = Family::kRuntime;
constexpr Family kAp = Family::kAutoParallel;
constexpr Family kPs = Family::kParameterServer;

class StoreTest : public testing::ContextTest {
 protected:
  Store store_{Profile::kR2_3};
};

// ---------------------------------------------------------------------------
// Atomicity.

TEST_F(StoreTest, BadValueChangesNothingIncludingEarlierKeys) {
  Value before = store_.Snapshot();
  uint64_t hash = store_.CompileKeyHash();
  std::string message = MessageOf<ValueError>([&] {
    store_.Set(kRt, {{"mode", 0}, {"runtime_num_threads", 4}, {"device_id", 5000}});
  });
  EXPECT_TRUE(Contains(message, "'device_id'")) << message;
  EXPECT_TRUE(Contains(message, "[0, 4095]")) << message;
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(30));
  EXPECT_EQ(store_.Snapshot(), before);
  EXPECT_EQ(store_.CompileKeyHash(), hash);
  EXPECT_EQ(warnings_.Count(), 0u);
}

TEST_F(StoreTest, BadTypeChangesNothing) {
  Value before = store_.Snapshot();
  std::string message = MessageOf<TypeError>([&] {
    store_.Set(kRt, {{"max_device_memory", "2GB"}, {"max_call_depth", "10"}});
  });
  EXPECT_EQ(message,
            "For 'context.set_context', the parameter 'max_call_depth' must be int, but got str "
            "('10').");
  EXPECT_EQ(store_.Get(kRt, "max_device_memory"), Value(1024.0));
  EXPECT_EQ(store_.Snapshot(), before);
}

TEST_F(StoreTest, UnknownKeyAfterGoodKeysChangesNothing) {
  EXPECT_THROW(store_.Set(kRt, {{"mode", 0}, {"no_such_key", 1}}), ValueError);
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
}

TEST_F(StoreTest, FailedCallIssuesNoWarnings) {
  // Each of these keys alone warns; the call fails, so none may be issued.
  EXPECT_THROW(store_.Set(kRt, {{"enable_sparse", true},
                                {"variable_memory_max_size", "6GB"},
                                {"gpu_config", Dict{{"matmul_allow_tf32", true}}},
                                {"device_target", "CPU"},
                                {"max_call_depth", 0}}),
               ValueError);
  EXPECT_THROW(store_.Set(kAp, {{"mirror_mean", true}, {"device_num", 0}}), ValueError);
  EXPECT_EQ(warnings_.Count(), 0u);
  EXPECT_EQ(store_.Get(kRt, "variable_memory_max_size"), Value("0"));
  EXPECT_EQ(store_.Get(kAp, "gradients_mean"), Value(false));
}

TEST_F(StoreTest, SuccessfulCallStoresEveryKey) {
  store_.Set(kRt, {{"mode", 0}, {"runtime_num_threads", 4}, {"max_device_memory", "3.5GB"}});
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(4));
  EXPECT_EQ(store_.Get(kRt, "max_device_memory"), Value(3.5));
  EXPECT_EQ(warnings_.Count(), 0u);
}

// ---------------------------------------------------------------------------
// device_target is applied first.

TEST_F(StoreTest, DeviceTargetFirstMakesGpuConfigApply) {
  store_.Set(kRt, {{"device_target", "CPU"}});
  // gpu_config comes before device_target in the call, yet sees "GPU".
  store_.Set(kRt, {{"gpu_config", Dict{{"matmul_allow_tf32", true}}}, {"device_target", "GPU"}});
  EXPECT_EQ(warnings_.Count(), 0u);
  EXPECT_EQ(store_.Get(kRt, "device_target"), Value("GPU"));
  Value config = store_.Get(kRt, "gpu_config");
  ASSERT_TRUE(config.is_dict());
  EXPECT_EQ(*config.as_dict().Find("matmul_allow_tf32"), Value(true));
  EXPECT_EQ(*config.as_dict().Find("conv_fprop_algo"), Value("normal"));
}

TEST_F(StoreTest, DeviceTargetFirstMakesGpuConfigNotApplicable) {
  store_.Set(kRt, {{"device_target", "GPU"}});
  store_.Set(kRt, {{"gpu_config", Dict{{"matmul_allow_tf32", true}}}, {"device_target", "CPU"}});
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kNotApplicable);
  EXPECT_EQ(warnings[0].message,
            "For 'context.set_context', when set the argument 'gpu_config', the argument "
            "'device_target' only supports devices in ['GPU'], but got 'CPU', ignore it.");
  EXPECT_EQ(store_.Get(kRt, "device_target"), Value("CPU"));
  // Reading it on the wrong device warns but still returns the (default) value.
  Value config = store_.Get(kRt, "gpu_config");
  EXPECT_EQ(*config.as_dict().Find("matmul_allow_tf32"), Value(false));
  warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kNotApplicable);
  EXPECT_TRUE(Contains(warnings[0].message, "'gpu_config' only applies on devices in ['GPU']")) << warnings[0].message;
}

TEST_F(StoreTest, DavinciIsStoredAsAscendWithADeprecationWarning) {
  store_.Set(kRt, {{"device_target", "Davinci"}});
  EXPECT_EQ(store_.Get(kRt, "device_target"), Value("Ascend"));
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
  EXPECT_THROW(store_.Set(kRt, {{"device_target", "gpu"}}), ValueError);  // case-sensitive
}

// ---------------------------------------------------------------------------
// Key resolution.

TEST_F(StoreTest, UnknownKeySuggestsClosestNames) {
  std::string message = MessageOf<ValueError>([&] { store_.Set(kRt, {{"mdoe", 0}}); });
  EXPECT_EQ(message,
            "For 'context.set_context', the keyword argument mdoe is not recognized! Did you mean "
            "'mode'?");
  message = MessageOf<ValueError>([&] { store_.Get(kRt, "runtime_num_thread"); });
  EXPECT_TRUE(Contains(message,
                       "For 'context.get_context', the argument runtime_num_thread is "
                       "not recognized!"))
      << message;
  EXPECT_TRUE(Contains(message, "'runtime_num_threads'")) << message;
  message = MessageOf<ValueError>([&] { store_.Set(kAp, {{"device_nums", 2}}); });
  EXPECT_TRUE(Contains(message, "Set context keyword device_nums is not recognized!")) << message;
  EXPECT_TRUE(Contains(message, "'device_num'")) << message;
  message = MessageOf<ValueError>([&] { store_.Get(kPs, "enable_pss"); });
  EXPECT_TRUE(Contains(message, "Get PS context keyword enable_pss is not recognized!")) << message;
  // Nothing close: no suggestion.
  message = MessageOf<ValueError>([&] { store_.Set(kRt, {{"zzzzzzzzzzzzzzzzzzzz", 0}}); });
  EXPECT_FALSE(Contains(message, "Did you mean")) << message;
}

TEST_F(StoreTest, UnknownKeyMessageFollowsTheProfile) {
  Store old(Profile::kR1_6);
  std::string message = MessageOf<ValueError>([&] { old.Set(kRt, {{"foo", 1}}); });
  EXPECT_TRUE(Contains(message, "Set context keyword foo is not recognized!")) << message;
}

TEST_F(StoreTest, HiddenKeysAreNeitherReadableNorSettable) {
  EXPECT_THROW(store_.Get(kRt, "_graph_memory_max_size"), ValueError);
  EXPECT_THROW(store_.Set(kRt, {{"_graph_memory_max_size", "0"}}), ValueError);
  EXPECT_THROW(store_.Get(kAp, "_comm_fusion_record"), ValueError);
  EXPECT_THROW(store_.Set(kPs, {{"_role", "MS_WORKER"}}), ValueError);
}

TEST_F(StoreTest, MovedKeyNamesAscendConfig) {
  std::string message = MessageOf<ValueError>([&] {
    store_.Set(kRt, {{"mode", 0}, {"precision_mode", "force_fp16"}});
  });
  EXPECT_EQ(message,
            "For 'context.set_context', the argument 'precision_mode' can no longer be set "
            "directly. Please set 'precision_mode' through parameter ascend_config, e.g. "
            "ascend_config={'precision_mode': ...}.");
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_THROW(store_.Set(kRt, {{"jit_compile", true}}), ValueError);
}

// ---------------------------------------------------------------------------
// Aliases and deprecations.

TEST_F(StoreTest, AliasWarnsWhereDeprecated) {
  store_.Set(kAp, {{"mirror_mean", true}});
  EXPECT_EQ(store_.Get(kAp, "gradients_mean"), Value(true));
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
  EXPECT_EQ(warnings[0].message,
            "For 'context.set_auto_parallel_context', the argument 'mirror_mean' is deprecated "
            "since r1.0; use 'gradients_mean' instead.");
  // Reading through the alias works too, and warns the same way.
  EXPECT_EQ(store_.Get(kAp, "mirror_mean"), Value(true));
  warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_TRUE(Contains(warnings[0].message, "context.get_auto_parallel_context")) << warnings[0].message;
}

TEST_F(StoreTest, AliasIsSilentBeforeItsDeprecation) {
  Store old(Profile::kR0_5);
  old.Set(kAp, {{"mirror_mean", true}, {"cast_before_mirror", false}});
  EXPECT_EQ(old.Get(kAp, "gradients_mean"), Value(true));
  EXPECT_EQ(old.Get(kAp, "gradient_fp32_sync"), Value(false));
  EXPECT_EQ(warnings_.Count(), 0u);

  // auto_parallel_search_mode is deprecated since r1.6 only.
  Store r10(Profile::kR1_0);
  r10.Set(kAp, {{"auto_parallel_search_mode", "recursive_programming"}});
  EXPECT_EQ(warnings_.Count(), 0u);
  Store r16(Profile::kR1_6);
  r16.Set(kAp, {{"auto_parallel_search_mode", "recursive_programming"}});
  EXPECT_EQ(r16.Get(kAp, "search_mode"), Value("recursive_programming"));
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
}

TEST_F(StoreTest, DeprecatedAndIgnoredKeyKeepsItsDefault) {
  store_.Set(kRt, {{"enable_sparse", true}, {"mode", 0}});
  EXPECT_EQ(store_.Get(kRt, "enable_sparse"), Value(false));
  EXPECT_EQ(store_.Explain(kRt, "enable_sparse").source, Source::kDefault);
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));  // the rest of the call applies
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
  EXPECT_EQ(warnings[0].message,
            "For 'context.set_context', the argument 'enable_sparse' is deprecated since r2.3 "
            "and is ignored. Sparse tensors no longer need a switch.");

  // Live under r1.6.
  Store old(Profile::kR1_6);
  old.Set(kRt, {{"enable_sparse", true}});
  EXPECT_EQ(old.Get(kRt, "enable_sparse"), Value(true));
  EXPECT_EQ(warnings_.Count(), 0u);
}

TEST_F(StoreTest, DeprecatedAndAppliedKeyIsStored) {
  store_.Set(kRt, {{"variable_memory_max_size", "6GB"}});
  EXPECT_EQ(store_.Get(kRt, "variable_memory_max_size"), Value("6 * 1024 * 1024 * 1024"));
  EXPECT_EQ(*store_.Snapshot().as_dict().Find("context")->as_dict().Find("_graph_memory_max_size"),
            Value("25 * 1024 * 1024 * 1024"));
  auto warnings = warnings_.Take();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].kind, WarningKind::kDeprecated);
  EXPECT_TRUE(Contains(warnings[0].message, "Use 'max_device_memory' instead.")) << warnings[0].message;
}

// ---------------------------------------------------------------------------
// Freezing.

TEST_F(StoreTest, FrozenKeyAcceptsTheSameValueOnly) {
  store_.Set(kRt, {{"device_id", 2}});
  EXPECT_FALSE(store_.IsInEffect(kRt, "device_id"));
  store_.MarkInEffect(kRt, "device_id", "the device was opened");
  EXPECT_TRUE(store_.IsInEffect(kRt, "device_id"));
  store_.Set(kRt, {{"device_id", 2}});  // same value: fine
  std::string message = MessageOf<RuntimeError>([&] { store_.Set(kRt, {{"mode", 0}, {"device_id", 3}}); });
  EXPECT_EQ(message,
            "For 'context.set_context', 'device_id' can not be changed to 3: its value 2 has been "
            "in effect since the device was opened. Set it before that happens (e.g. at the top "
            "of the script), or start a new process.");
  EXPECT_EQ(store_.Get(kRt, "device_id"), Value(2));
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));  // atomic
}

TEST_F(StoreTest, FirstReasonIsKept) {
  store_.MarkInEffect(kRt, "max_device_memory", "the memory pool was created");
  store_.MarkInEffect(kRt, "max_device_memory", "something later");
  std::string message = MessageOf<RuntimeError>([&] { store_.Set(kRt, {{"max_device_memory", "2GB"}}); });
  EXPECT_TRUE(Contains(message, "'max_device_memory'")) << message;
  EXPECT_TRUE(Contains(message, "the memory pool was created")) << message;
  EXPECT_FALSE(Contains(message, "something later")) << message;
}

TEST_F(StoreTest, KeysThatNeverFreezeIgnoreMarkInEffect) {
  store_.MarkInEffect(kRt, "mode", "a graph was compiled");
  store_.Set(kRt, {{"mode", 0}});
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_FALSE(store_.Explain(kRt, "mode").frozen);
}

TEST_F(StoreTest, FreezeHoldsThroughLoadAndOverride) {
  Value snapshot = store_.Snapshot();
  store_.Set(kRt, {{"device_id", 1}});
  store_.MarkInEffect(kRt, "device_id", "the device was opened");
  // The snapshot holds device_id 0.
  std::string message = MessageOf<RuntimeError>([&] { store_.Load(snapshot); });
  EXPECT_TRUE(Contains(message, "For 'context.load', 'device_id' can not be changed to 0")) << message;
  EXPECT_TRUE(Contains(message, "the device was opened")) << message;
  EXPECT_EQ(store_.Get(kRt, "device_id"), Value(1));

  message = MessageOf<RuntimeError>([&] { ScopedOverride o(kRt, {{"device_id", 5}}, store_); });
  EXPECT_TRUE(Contains(message, "'device_id' can not be changed to 5")) << message;
  EXPECT_EQ(store_.Get(kRt, "device_id"), Value(1));
  {
    ScopedOverride same(kRt, {{"device_id", 1}, {"mode", 0}}, store_);
    EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  }
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
}

TEST_F(StoreTest, FreezeComparesWithTheEnvironmentDefaultInEffect) {
  // DEVICE_ID supplies device_id; the runtime opened that device. Setting
  // the same id explicitly is fine, another one is refused.
  ScopedEnv device_id("DEVICE_ID", "3");
  store_.MarkInEffect(kRt, "device_id", "the device was opened");
  store_.Set(kRt, {{"device_id", 3}});
  EXPECT_EQ(store_.Get(kRt, "device_id"), Value(3));
  std::string message = MessageOf<RuntimeError>([&] { store_.Set(kRt, {{"device_id", 0}}); });
  EXPECT_TRUE(Contains(message, "can not be changed to 0: its value 3 has been in effect")) << message;
}

TEST_F(StoreTest, ResetOfAFrozenEnvironmentDefaultIsAllowed) {
  ScopedEnv device_id("DEVICE_ID", "3");
  store_.Set(kRt, {{"device_id", 3}});
  store_.MarkInEffect(kRt, "device_id", "the device was opened");
  store_.Reset(kRt);  // back to the default, which DEVICE_ID makes 3 again
  EXPECT_EQ(store_.Get(kRt, "device_id"), Value(3));
  EXPECT_EQ(store_.Explain(kRt, "device_id").source, Source::kEnvironment);
}

// ---------------------------------------------------------------------------
// Reset.

TEST_F(StoreTest, ResetAutoParallelRestoresDefaults) {
  store_.Set(kAp, {{"device_num", 8},
                   {"gradients_mean", true},
                   {"parallel_mode", "data_parallel"},
                   {"group_ckpt_save_file", "group.ckpt"},
                   {"comm_fusion", Dict{{"allreduce", Dict{{"mode", "size"}, {"config", 32}}}}}});
  Value fusion_set = store_.Get(kAp, "comm_fusion");
  EXPECT_EQ(*fusion_set.as_dict().Find("allreduce"), Value(Dict{{"mode", "size"}, {"config", 32}}));
  Store fresh(Profile::kR2_3);
  store_.Reset(kAp);
  EXPECT_EQ(store_.Get(kAp, "device_num"), Value(1));
  EXPECT_EQ(store_.Get(kAp, "gradients_mean"), Value(false));
  EXPECT_EQ(store_.Get(kAp, "parallel_mode"), Value("stand_alone"));
  EXPECT_EQ(store_.Get(kAp, "comm_fusion"), fresh.Get(kAp, "comm_fusion"));
  EXPECT_EQ(store_.Get(kAp, "group_ckpt_save_file"), Value("group.ckpt"));  // kept on reset
  Value hidden = *store_.Snapshot().as_dict().Find("auto_parallel_context");
  EXPECT_EQ(*hidden.as_dict().Find("_all_reduce_fusion_threshold"), Value(64));
  EXPECT_EQ(*hidden.as_dict().Find("_device_num_is_set"), Value(false));
  EXPECT_EQ(store_.Explain(kAp, "device_num").source, Source::kDefault);
}

TEST_F(StoreTest, ResetPsKeepsAllButEnableAndRole) {
  store_.Set(kPs, {{"enable_ps", true},
                   {"ms_role", "MS_WORKER"},
                   {"worker_num", 4},
                   {"scheduler_ip", "10.0.0.1"},
                   {"enable_ssl", true}});
  EXPECT_EQ(store_.Get(kPs, "enable_ps"), Value(true));
  EXPECT_EQ(store_.Get(kPs, "ms_role"), Value("MS_WORKER"));
  EXPECT_EQ(store_.Get(kPs, "worker_num"), Value(4));
  EXPECT_EQ(store_.Get(kPs, "server_mode"), Value("PARAMETER_SERVER"));
  store_.Reset(kPs);
  EXPECT_EQ(store_.Get(kPs, "enable_ps"), Value(false));
  EXPECT_EQ(store_.Get(kPs, "ms_role"), Value("MS_NOT_PS"));
  EXPECT_EQ(store_.Get(kPs, "worker_num"), Value(4));
  EXPECT_EQ(store_.Get(kPs, "scheduler_ip"), Value("10.0.0.1"));
  EXPECT_EQ(store_.Get(kPs, "enable_ssl"), Value(true));
  EXPECT_EQ(store_.Get(kPs, "server_mode"), Value("PARAMETER_SERVER"));
  EXPECT_EQ(*store_.Snapshot().as_dict().Find("ps_context")->as_dict().Find("_role"), Value(""));
}

TEST_F(StoreTest, ResetLeavesOtherFamiliesAlone) {
  store_.Set(kRt, {{"mode", 0}});
  store_.Set(kPs, {{"worker_num", 2}});
  store_.Reset(kAp);
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(store_.Get(kPs, "worker_num"), Value(2));
}

// ---------------------------------------------------------------------------
// Profiles.

TEST_F(StoreTest, ProfileDefaults) {
  Store r16(Profile::kR1_6);
  EXPECT_EQ(r16.profile(), Profile::kR1_6);
  EXPECT_EQ(r16.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(r16.Explain(kRt, "mode").source_detail, "profile r1.6");
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
  Store r05(Profile::kR0_5);
  EXPECT_EQ(r05.Get(kRt, "enable_auto_mixed_precision"), Value(true));
  EXPECT_EQ(store_.Get(kRt, "enable_auto_mixed_precision"), Value(false));
}

TEST_F(StoreTest, ProfileFromEnvironment) {
  {
    ScopedEnv profile("MSRT_CONTEXT_PROFILE", "r1.6");
    Store from_env;
    EXPECT_EQ(from_env.profile(), Profile::kR1_6);
    EXPECT_EQ(from_env.Get(kRt, "mode"), Value(kGraphMode));
  }
  {
    // A bad variable must not make every later call fail: it warns, naming
    // the variable, and the default profile applies.
    ScopedEnv profile("MSRT_CONTEXT_PROFILE", "r3.0");
    WarningRecorder recorder;
    Store bad;
    EXPECT_EQ(bad.profile(), kDefaultProfile);
    auto warnings = recorder.Take();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].message.find("MSRT_CONTEXT_PROFILE='r3.0'"), std::string::npos);
  }
  Store plain;
  EXPECT_EQ(plain.profile(), kDefaultProfile);
}

TEST_F(StoreTest, ParseProfileNamesTheChoices) {
  EXPECT_EQ(ParseProfile("r1.0"), Profile::kR1_0);
  std::string message = MessageOf<ValueError>([] { ParseProfile("1.6"); });
  EXPECT_EQ(message, "The context profile must be one of ['r0.5', 'r1.0', 'r1.6', 'r2.3'], but got '1.6'.");
}

TEST_F(StoreTest, SetProfileMovesOnlyKeysStillAtDefault) {
  Store a(Profile::kR2_3);
  a.SetProfile(Profile::kR1_6);
  EXPECT_EQ(a.profile(), Profile::kR1_6);
  EXPECT_EQ(a.Get(kRt, "mode"), Value(kGraphMode));

  Store b(Profile::kR2_3);
  b.Set(kRt, {{"mode", kPynativeMode}});  // explicitly, although it is the default
  b.SetProfile(Profile::kR1_6);
  EXPECT_EQ(b.Get(kRt, "mode"), Value(kPynativeMode));
  EXPECT_EQ(b.Explain(kRt, "mode").source, Source::kApi);

  // Deprecations follow the new profile as well.
  b.SetProfile(Profile::kR0_5);
  EXPECT_EQ(b.Get(kRt, "enable_auto_mixed_precision"), Value(true));
  b.Set(kAp, {{"mirror_mean", true}});
  EXPECT_EQ(warnings_.Count(), 0u);
}

// ---------------------------------------------------------------------------
// Environment variables.

TEST_F(StoreTest, DeviceIdDefaultsFromTheEnvironment) {
  {
    ScopedEnv device_id("DEVICE_ID", "3");
    EXPECT_EQ(store_.Get(kRt, "device_id"), Value(3));
    Explanation e = store_.Explain(kRt, "device_id");
    EXPECT_EQ(e.source, Source::kEnvironment);
    EXPECT_EQ(e.source_detail, "env DEVICE_ID=3");
    store_.Set(kRt, {{"device_id", 2}});  // the user's value wins
    EXPECT_EQ(store_.Get(kRt, "device_id"), Value(2));
    EXPECT_EQ(store_.Explain(kRt, "device_id").source, Source::kApi);
  }
  Store fresh(Profile::kR2_3);
  EXPECT_EQ(fresh.Get(kRt, "device_id"), Value(0));
  {
    ScopedEnv device_id("DEVICE_ID", "abc");
    EXPECT_EQ(fresh.Get(kRt, "device_id"), Value(0));
    auto warnings = warnings_.Take();
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_TRUE(Contains(warnings[0].message, "DEVICE_ID is 'abc'")) << warnings[0].message;
  }
}

TEST_F(StoreTest, SaveGraphsEnvironmentOverrideShowsInEffectiveOnly) {
  store_.Set(kRt, {{"save_graphs", 1}});
  {
    ScopedEnv level("MS_DEV_SAVE_GRAPHS", "3");
    EXPECT_EQ(store_.Get(kRt, "save_graphs"), Value(1));
    EXPECT_EQ(store_.Effective(kRt, "save_graphs"), Value(3));
    Explanation e = store_.Explain(kRt, "save_graphs");
    EXPECT_EQ(e.requested, Value(1));
    EXPECT_EQ(e.effective, Value(3));
    EXPECT_EQ(e.source, Source::kEnvironment);
    EXPECT_TRUE(Contains(e.source_detail, "MS_DEV_SAVE_GRAPHS=3")) << e.source_detail;
  }
  EXPECT_EQ(store_.Effective(kRt, "save_graphs"), Value(1));
  {
    ScopedEnv level("MS_DEV_SAVE_GRAPHS", "9");
    std::string message = MessageOf<ValueError>([&] { store_.Effective(kRt, "save_graphs"); });
    EXPECT_TRUE(Contains(message, "MS_DEV_SAVE_GRAPHS")) << message;
    EXPECT_EQ(store_.Get(kRt, "save_graphs"), Value(1));
  }
}

// ---------------------------------------------------------------------------
// Compile-key hash.

TEST_F(StoreTest, CompileKeyHashTracksCompileAffectingKeys) {
  uint64_t initial = store_.CompileKeyHash();
  store_.Set(kRt, {{"runtime_num_threads", 4}, {"pynative_synchronize", true}});
  EXPECT_EQ(store_.CompileKeyHash(), initial);
  store_.Set(kRt, {{"mode", 0}});
  uint64_t graph = store_.CompileKeyHash();
  EXPECT_NE(graph, initial);
  store_.Set(kAp, {{"gradients_mean", true}});
  uint64_t mean = store_.CompileKeyHash();
  EXPECT_NE(mean, graph);
  store_.Set(kAp, {{"gradients_mean", false}});
  store_.Set(kRt, {{"mode", 1}});
  EXPECT_EQ(store_.CompileKeyHash(), initial);  // a function of the values only

  Store other(Profile::kR2_3);
  other.Set(kRt, {{"mode", 0}});
  EXPECT_EQ(other.CompileKeyHash(), graph);
}

TEST_F(StoreTest, CompileKeyHashSeesOverridesOnThisThreadOnly) {
  uint64_t initial = store_.CompileKeyHash();
  Store graph_store(Profile::kR2_3);
  graph_store.Set(kRt, {{"mode", 0}});
  uint64_t graph = graph_store.CompileKeyHash();
  {
    ScopedOverride o(kRt, {{"mode", 0}}, store_);
    EXPECT_EQ(store_.CompileKeyHash(), graph);
    uint64_t seen_elsewhere = 0;
    std::thread([&] { seen_elsewhere = store_.CompileKeyHash(); }).join();
    EXPECT_EQ(seen_elsewhere, initial);
  }
  EXPECT_EQ(store_.CompileKeyHash(), initial);
}

TEST_F(StoreTest, CompileKeyHashSeesPerThreadKeysOnThisThreadOnly) {
  uint64_t initial = store_.CompileKeyHash();
  std::thread([&] {
    store_.Set(kRt, {{"reserve_class_name_in_scope", false}});
    EXPECT_NE(store_.CompileKeyHash(), initial);
  }).join();
  EXPECT_EQ(store_.CompileKeyHash(), initial);
}

// ---------------------------------------------------------------------------
// Snapshots.

TEST_F(StoreTest, SnapshotLoadRoundTripIncludesHiddenState) {
  store_.Set(kRt, {{"mode", 0}, {"max_device_memory", "3.5GB"}, {"variable_memory_max_size", "6GB"}});
  store_.Set(kAp, {{"device_num", 8},
                   {"dataset_strategy", Value::Tuple({Value::Tuple({2, 1}), Value::Tuple({2, 1})})},
                   {"comm_fusion", Dict{{"allreduce", Dict{{"mode", "size"}, {"config", 32}}},
                                        {"allgather", Dict{{"mode", "size"}, {"config", 16}}}}}});
  store_.Set(kPs, {{"worker_num", 3}});
  Value snapshot = store_.Snapshot();
  ASSERT_TRUE(snapshot.is_dict());
  EXPECT_EQ(*snapshot.as_dict().Find("profile"), Value("r2.3"));
  const Dict& ap = snapshot.as_dict().Find("auto_parallel_context")->as_dict();
  EXPECT_EQ(*ap.Find("_all_reduce_fusion_threshold"), Value(32));
  EXPECT_EQ(*ap.Find("_all_gather_fusion_threshold"), Value(16));
  EXPECT_EQ(*ap.Find("_fusion_mode"), Value("size"));

  Store copy(Profile::kR2_3);
  copy.Load(snapshot);
  EXPECT_EQ(copy.Snapshot(), snapshot);
  EXPECT_EQ(copy.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(copy.Get(kRt, "max_device_memory"), Value(3.5));
  EXPECT_EQ(copy.Get(kRt, "variable_memory_max_size"), Value("6 * 1024 * 1024 * 1024"));
  EXPECT_EQ(copy.Get(kAp, "device_num"), Value(8));
  EXPECT_EQ(copy.Get(kAp, "comm_fusion"), store_.Get(kAp, "comm_fusion"));
  EXPECT_EQ(copy.Get(kAp, "dataset_strategy"), Value(List{List{2, 1}, List{2, 1}}));
  EXPECT_EQ(copy.Get(kPs, "worker_num"), Value(3));
  EXPECT_EQ(copy.Explain(kAp, "device_num").source, Source::kLoad);
  EXPECT_EQ(copy.CompileKeyHash(), store_.CompileKeyHash());
}

TEST_F(StoreTest, SnapshotCarriesTheProfile) {
  Store old(Profile::kR1_6);
  old.Set(kRt, {{"runtime_num_threads", 8}});
  store_.Load(old.Snapshot());
  EXPECT_EQ(store_.profile(), Profile::kR1_6);
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kGraphMode));
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(8));
}

TEST_F(StoreTest, LoadOfABadSnapshotChangesNothing) {
  store_.Set(kRt, {{"mode", 0}, {"runtime_num_threads", 6}});
  Value good = store_.Snapshot();
  Store target(Profile::kR1_0);
  target.Set(kAp, {{"device_num", 4}});
  Value before = target.Snapshot();

  auto with = [&](std::string_view section, std::string key, Value value) {
    Dict root = good.as_dict();
    Dict part = root.Find(section)->as_dict();
    part.Set(std::move(key), std::move(value));
    root.Set(std::string(section), Value(std::move(part)));
    return Value(std::move(root));
  };
  EXPECT_THROW(target.Load(with("context", "mode", 7)), ValueError);
  EXPECT_THROW(target.Load(with("context", "runtime_num_threads", "many")), TypeError);
  EXPECT_THROW(target.Load(with("context", "no_such_key", 1)), ValueError);
  EXPECT_THROW(target.Load(with("auto_parallel_context", "_all_reduce_fusion_threshold", "x")), TypeError);
  EXPECT_THROW(target.Load(with("ps_context", "scheduler_port", 70000)), ValueError);
  // Hidden slots are validated by their own parsers.
  EXPECT_THROW(target.Load(with("ps_context", "_role", "MS_BOGUS")), ValueError);
  EXPECT_THROW(target.Load(with("auto_parallel_context", "_all_reduce_fusion_threshold", -5)), ValueError);
  EXPECT_THROW(target.Load(with("auto_parallel_context", "_fusion_mode", "sometimes")), ValueError);
  EXPECT_THROW(target.Load(with("context", "_graph_memory_max_size", "5GB")), ValueError);
  Dict unknown_section = good.as_dict();
  unknown_section.Set("jit_context", Value(Dict{}));
  EXPECT_THROW(target.Load(Value(unknown_section)), ValueError);
  Dict bad_profile = good.as_dict();
  bad_profile.Set("profile", "r9");
  EXPECT_THROW(target.Load(Value(bad_profile)), ValueError);
  EXPECT_THROW(target.Load(Value(List{})), TypeError);

  EXPECT_EQ(target.Snapshot(), before);
  EXPECT_EQ(target.profile(), Profile::kR1_0);
  EXPECT_EQ(warnings_.Count(), 0u);
}

TEST_F(StoreTest, LoadResetsKeysTheSnapshotLeavesOut) {
  store_.Set(kRt, {{"runtime_num_threads", 6}, {"mode", 0}});
  store_.Load(Value(Dict{{"context", Dict{{"runtime_num_threads", 2}}}}));
  EXPECT_EQ(store_.Get(kRt, "runtime_num_threads"), Value(2));
  EXPECT_EQ(store_.Get(kRt, "mode"), Value(kPynativeMode));
}

// ---------------------------------------------------------------------------
// Explain and Summary.

TEST_F(StoreTest, ExplainSources) {
  store_.Set(kRt, {{"mode", 0}});
  Explanation api = store_.Explain(kRt, "mode");
  EXPECT_EQ(api.info.name, "mode");
  EXPECT_EQ(api.requested, Value(kGraphMode));
  EXPECT_EQ(api.effective, Value(kGraphMode));
  EXPECT_EQ(api.source, Source::kApi);
  EXPECT_TRUE(api.info.affects_compile);
  EXPECT_EQ(api.info.default_value, Value(kPynativeMode));
  Dict as_dict = api.ToDict();
  EXPECT_EQ(*as_dict.Find("source"), Value("api"));
  EXPECT_EQ(*as_dict.Find("requested"), Value(kGraphMode));

  Explanation def = store_.Explain(kRt, "runtime_num_threads");
  EXPECT_EQ(def.source, Source::kDefault);
  EXPECT_EQ(def.requested, Value(30));
  EXPECT_FALSE(def.info.affects_compile);

  Explanation derived = store_.Explain(kAp, "parallel_mode");
  EXPECT_EQ(derived.source, Source::kDerived);
  EXPECT_EQ(derived.requested, Value("stand_alone"));
}

TEST_F(StoreTest, ExplainApplicability) {
  store_.Set(kRt, {{"device_target", "CPU"}});
  Explanation gpu = store_.Explain(kRt, "gpu_config");
  EXPECT_FALSE(gpu.applies);
  EXPECT_EQ(gpu.applies_reason, "msrt uses 'gpu_config' only on ['GPU']; the device target is 'CPU'");
  EXPECT_EQ(warnings_.Count(), 0u);  // explaining is not using

  Explanation dump = store_.Explain(kRt, "enable_dump");
  EXPECT_TRUE(dump.applies);
  EXPECT_EQ(dump.applies_reason, "msrt's kernel data dump works on every device.");
  EXPECT_EQ(dump.info.mindspore_devices, kAscendOnly);

  Explanation mode = store_.Explain(kRt, "mode");
  EXPECT_TRUE(mode.applies);
  EXPECT_EQ(mode.applies_reason, "");

  store_.Set(kRt, {{"device_target", "GPU"}});
  EXPECT_TRUE(store_.Explain(kRt, "gpu_config").applies);
}

TEST_F(StoreTest, ExplainFrozen) {
  EXPECT_FALSE(store_.Explain(kRt, "device_target").frozen);
  store_.MarkInEffect(kRt, "device_target", "kernels were launched");
  Explanation e = store_.Explain(kRt, "device_target");
  EXPECT_TRUE(e.frozen);
  EXPECT_EQ(e.frozen_reason, "kernels were launched");
  EXPECT_TRUE(e.info.freezes);
  EXPECT_TRUE(Contains(e.ToString(), "frozen:    yes")) << e.ToString();
}

TEST_F(StoreTest, ExplainListsSubscribedConsumers) {
  EXPECT_TRUE(store_.Explain(kRt, "mode").consumers.empty());
  Subscription compiler = store_.Subscribe(kRt, {"mode", "jit_syntax_level"}, "graph_compiler", [](const Change&) {});
  Subscription dispatcher = store_.Subscribe(kRt, {"mode"}, "eager_dispatcher", [](const Change&) {});
  EXPECT_EQ(store_.Explain(kRt, "mode").consumers, (std::vector<std::string>{"graph_compiler", "eager_dispatcher"}));
  EXPECT_EQ(store_.Explain(kRt, "jit_syntax_level").consumers, (std::vector<std::string>{"graph_compiler"}));
  compiler.Reset();
  EXPECT_EQ(store_.Explain(kRt, "mode").consumers, (std::vector<std::string>{"eager_dispatcher"}));
}

TEST_F(StoreTest, ExplainOfUnknownKeyThrows) {
  EXPECT_THROW(store_.Explain(kRt, "mdoe"), ValueError);
  EXPECT_THROW(store_.Explain(kRt, "_graph_memory_max_size"), ValueError);
}

TEST_F(StoreTest, SummaryListsChangedKeys) {
  std::string initial = store_.Summary();
  EXPECT_TRUE(Contains(initial, "msrt context (profile r2.3, device ")) << initial;
  EXPECT_TRUE(Contains(initial, "\n  mode ")) << initial;  // always listed
  EXPECT_FALSE(Contains(initial, "runtime_num_threads")) << initial;
  EXPECT_FALSE(Contains(initial, "gradients_mean")) << initial;

  store_.Set(kRt, {{"runtime_num_threads", 4}});
  store_.Set(kAp, {{"gradients_mean", true}});
  std::string changed = store_.Summary();
  auto line_of = [&](const std::string& key) {
    size_t at = changed.find("  " + key + " ");
    if (at == std::string::npos) return std::string();
    return changed.substr(at, changed.find('\n', at) - at);
  };
  std::string threads = line_of("runtime_num_threads");
  EXPECT_TRUE(Contains(threads, " 4 ")) << changed;
  EXPECT_TRUE(Contains(threads, "api")) << changed;
  std::string mean = line_of("auto_parallel_context.gradients_mean");
  EXPECT_TRUE(Contains(mean, "True")) << changed;
  EXPECT_FALSE(Contains(changed, "max_call_depth")) << changed;

  std::string all = store_.Summary(/*all=*/true);
  EXPECT_TRUE(Contains(all, "max_call_depth")) << all;
  EXPECT_TRUE(Contains(all, "ps_context.scheduler_port")) << all;
  EXPECT_FALSE(Contains(all, "_graph_memory_max_size")) << all;
}

TEST_F(StoreTest, OptionsDescribePublicKeysOnly) {
  auto options = store_.Options(kRt);
  auto find = [&](std::string_view name) {
    return std::find_if(options.begin(), options.end(), [&](const OptionInfo& o) { return o.name == name; });
  };
  ASSERT_NE(find("mode"), options.end());
  EXPECT_EQ(find("_graph_memory_max_size"), options.end());
  auto device_id = find("device_id");
  ASSERT_NE(device_id, options.end());
  EXPECT_EQ(device_id->env_var, "DEVICE_ID");
  EXPECT_EQ(device_id->env_role, "default");
  EXPECT_TRUE(device_id->freezes);
  auto reserve = find("reserve_class_name_in_scope");
  ASSERT_NE(reserve, options.end());
  EXPECT_TRUE(reserve->per_thread);
}

TEST_F(StoreTest, EveryKeyReadsExplainsAndRoundTripsInEveryProfile) {
  for (int p = 0; p < kProfileCount; ++p) {
    auto profile = static_cast<Profile>(p);
    SCOPED_TRACE(std::string(ProfileName(profile)));
    Store fresh(profile);
    for (Family family : {kRt, kAp, kPs}) {
      for (const OptionInfo& info : fresh.Options(family)) {
        SCOPED_TRACE(info.name);
        Value value;
        EXPECT_NO_THROW(value = fresh.Get(family, info.name));
        Explanation e = fresh.Explain(family, info.name);
        EXPECT_EQ(e.requested, value);
        EXPECT_EQ(e.info.default_value, info.default_value);
        if (e.source != Source::kDerived) {
          EXPECT_EQ(e.source, Source::kDefault);
          EXPECT_EQ(value, info.default_value);
        }
      }
    }
    Value snapshot = fresh.Snapshot();
    Store copy(Profile::kR2_3);
    EXPECT_NO_THROW(copy.Load(snapshot));
    EXPECT_EQ(copy.profile(), profile);
    EXPECT_EQ(copy.Snapshot(), snapshot);
    EXPECT_EQ(copy.CompileKeyHash(), fresh.CompileKeyHash());
  }
  warnings_.Clear();  // get on keys of other devices warns
}

}  // namespace
}  // namespace msrt::context
