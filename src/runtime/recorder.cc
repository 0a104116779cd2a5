// Note [Running data recorder]
// env_config_path's {"rdr": {"enable": true, "mode": 1|2, "path": "/abs"}}
// switches the recorder on. Each record is a new folder
//   <rdr.path>/rank_<id>/rdr/<kind>_<pid>_<n>/
// (rdr.path unset: the working directory; <kind> "failure" or "exit"; n the
// first number not taken, so records of earlier runs stay). A failure folder
// is written at once, on the failing thread, before the error reaches the
// caller:
//   failure.json          what failed: graph, run, step, node, op, source,
//                         inputs' dtype and shape, error type and message
//   <graph>.ir            the graph's IR text (GRAPH_MODE)
//   <graph>.exec_order    the execution order, the failing step marked "=>"
//   memory.json           the device pool's statistics (+ the graph's plan)
//   context.json          snapshot of the four contexts (runtime, auto-parallel, parameter server, offload)
// The recorder observes the executors only while it is on: graph runs as a
// GraphObserver (Ran, Failed), and in PYNATIVE_MODE kernel launches as a
// KernelObserver, recording a kernel that fails (Aborted). With
// rdr.mode 2 the normal end of the process also writes an "exit" folder:
// the .ir and .exec_order of every graph that ran while the recorder was on,
// graphs.json (name, runs, files, memory plan), memory.json and
// context.json. The recorder never masks the error it records: if it cannot
// write, it logs why.
#include "runtime/recorder.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "context/env_config.h"
#include "context/options.h"
#include "core/file_io.h"
#include "ir/graph.h"
#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "msrt/core/logging.h"
#include "runtime/graph_executor.h"
#include "runtime/kernel_dump.h"
#include "runtime/launch.h"
#include "runtime/rank.h"

namespace msrt::runtime::recorder {

namespace detail {
std::atomic<bool> g_enabled{false};
}

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
namespace opts = context::runtime_options;

constexpr std::string_view kConsumer = "running data recorder (rdr.enable, rdr.mode, rdr.path)";

struct Settings {
  bool enable = false;
  int mode = 1;
  std::string path;
};

Json ValueToJson(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNone: return nullptr;
    case ValueKind::kBool: return v.as_bool();
    case ValueKind::kInt: return v.as_int();
    case ValueKind::kFloat: return v.as_float();
    case ValueKind::kString: return v.as_string();
    case ValueKind::kList:
    case ValueKind::kTuple: {
      Json out = Json::array();
      for (const Value& item : v.as_list()) out.push_back(ValueToJson(item));
      return out;
    }
    case ValueKind::kDict: {
      Json out = Json::object();
      for (const auto& [key, item] : v.as_dict()) out[key] = ValueToJson(item);
      return out;
    }
    case ValueKind::kObject: return v.repr();
  }
  return v.repr();
}

Json TensorsToJson(const std::vector<Tensor>& tensors) {
  Json out = Json::array();
  for (const Tensor& t : tensors) {
    if (!t.defined()) {
      out.push_back(nullptr);
      continue;
    }
    out.push_back({{"dtype", std::string(DTypeAttrName(t.dtype()))},
                   {"shape", t.shape()},
                   {"device", std::string(DeviceTargetName(t.device()))}});
  }
  return out;
}

Json PoolToJson(DeviceTarget device) {
  memory::PoolStats s = memory::Stats(device);
  return {{"device", std::string(DeviceTargetName(device))},
          {"allocated_bytes", s.allocated},
          {"peak_allocated_bytes", s.peak_allocated},
          {"reserved_bytes", s.reserved},
          {"peak_reserved_bytes", s.peak_reserved},
          {"cap_bytes", s.cap},
          {"block_size_bytes", s.block_size},
          {"buffer_reuse", s.reuse},
          {"blocks", s.blocks},
          {"live_buffers", s.live_pieces},
          {"allocations", s.allocations},
          {"reused_allocations", s.reused_allocations},
          {"failed_allocations", s.failed_allocations}};
}

Json PlanToJson(const GraphMemoryStats& m) {
  return {{"planned_bytes", m.planned_bytes},
          {"peak_live_bytes", m.peak_live_bytes},
          {"intermediates", m.intermediate_count}};
}

std::string UtcNow() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

void WriteFile(const fs::path& path, const std::string& text) {
  WriteFileAtomic(path.string(), text, Durability::kNoSync);
}

// Claims a new record folder; earlier records (other runs, same pid) stay.
fs::path NewRecordFolder(const Settings& settings, std::string_view kind) {
  fs::path root = settings.path.empty() ? fs::current_path() : fs::path(settings.path);
  fs::path base = root / StrCat("rank_", RankId()) / "rdr";
  CreateDirectories(base.string());
  for (int n = 0;; ++n) {
    fs::path folder = base / StrCat(kind, "_", static_cast<int64_t>(getpid()), "_", n);
    std::error_code ec;  // mkdir never follows a symlink planted at the name: it only fails
    if (fs::create_directory(folder, ec)) return folder;
    if (ec) throw OSError(StrCat("cannot create '", folder.string(), "': ", ec.message()));
  }
}

// What the exit record needs of a graph that ran, kept apart from the
// executable, which may be gone by then.
struct RanGraph {
  std::weak_ptr<const ir::Graph> graph;  // tells a new executable at a reused address apart
  std::string name;
  std::string ir_text;
  std::string execution_order;
  GraphMemoryStats plan;
  DeviceTarget device;
  uint64_t runs = 0;
};

class Recorder final : public KernelObserver, public GraphObserver {
 public:
  Recorder() {
    context::Global().DeclareConsumer(opts::EnvConfigPath(), std::string(kConsumer));
    subscription_ = context::Global().Subscribe({opts::EnvConfigPath()}, std::string(kConsumer),
                                                [this](const context::Change&) { Refresh(); });
    Refresh();
  }

  static Recorder& Global() {
    static auto* instance = new Recorder();  // used from atexit
    return *instance;
  }

  void Refresh() {
    std::lock_guard lock(mutex_);
    std::string file = opts::EnvConfigPath().Get();
    Settings next;
    if (!file.empty()) {
      try {
        context::EnvConfig config = context::LoadEnvConfigFile(file);
        next = {config.rdr_enable, config.rdr_mode, config.rdr_path};
      } catch (const Error& e) {  // set_context checked it; it changed on disk since
        MSRT_LOG(Warning) << "running data recorder: keeping the previous settings: " << e.what();
        return;
      }
    }
    bool was = settings_.enable;
    settings_ = next;
    if (next.enable && !was) {
      AddKernelObserver(this);
      AddGraphObserver(this);
      static const bool kAtExit = (std::atexit([] { WriteExitRecord(); }), true);
      (void)kAtExit;
    } else if (!next.enable && was) {
      RemoveKernelObserver(this);
      RemoveGraphObserver(this);
    }
    if (!next.enable || next.mode != 2) {  // the exit record lists graphs run while mode 2 is on
      ran_.clear();
      latest_.clear();
    }
    detail::g_enabled.store(next.enable, std::memory_order_relaxed);
  }

  void Aborted(const LaunchEvent& event) noexcept override {
    if (!event.site.graph.empty()) return;  // graph launches: the executor reports with its step
    try {
      RecordEagerFailure(event);
    } catch (const std::exception& e) {
      MSRT_LOG(Error) << "running data recorder: " << e.what();
    }
  }

  void RecordEagerFailure(const LaunchEvent& event) {
    std::string type = "RuntimeError", message = "unknown error";
    if (std::exception_ptr error = std::current_exception()) {  // Aborted runs inside LaunchKernel's catch
      try {
        std::rethrow_exception(error);
      } catch (const Error& e) {
        type = ErrorKindName(e.kind());
        message = e.message();
      } catch (const std::bad_alloc&) {
        type = "MemoryError";
        message = "Out of memory";
      } catch (const std::exception& e) {
        message = e.what();
      } catch (...) {
      }
    }
    Json failure = {{"execution", "pynative"},
                    {"op", std::string(event.op.name)},
                    {"kernel", StrCat(DeviceTargetName(event.kernel.device), ":", event.kernel.impl)},
                    {"step", event.site.iteration},
                    {"attrs", ValueToJson(Value(event.attrs))},
                    {"inputs", TensorsToJson(event.inputs)},
                    {"outputs", TensorsToJson(event.outputs)},
                    {"error", {{"type", type}, {"message", message}}}};
    WriteFailure(std::move(failure), event.kernel.device, nullptr, -1);
  }

  void Ran(const GraphExecutable& exe) noexcept override {
    try {
      Note(exe, /*ran=*/true);
    } catch (const std::exception& e) {
      MSRT_LOG(Error) << "running data recorder: " << e.what();
    }
  }

  void Failed(const GraphExecutable& exe, const GraphFailure& f) noexcept override {
    try {
      GraphFailed(exe, f);
    } catch (const std::exception& e) {
      MSRT_LOG(Error) << "running data recorder: " << e.what();
    }
  }

  void GraphFailed(const GraphExecutable& exe, const GraphFailure& f) {
    Note(exe, /*ran=*/false);
    Json failure = {{"execution", "graph"},
                    {"graph", exe.graph().name()},
                    {"run", exe.runs()},
                    {"step", f.step},
                    {"node", std::string(f.node)},
                    {"op", std::string(f.op)},
                    {"source", std::string(f.source)},
                    {"inputs", TensorsToJson(f.inputs)},
                    {"error", {{"type", ErrorKindName(f.kind)}, {"message", std::string(f.message)}}}};
    WriteFailure(std::move(failure), exe.options().device, &exe, static_cast<int64_t>(f.step));
  }

  void Note(const GraphExecutable& exe, bool ran) {
    std::lock_guard lock(mutex_);
    if (!settings_.enable || settings_.mode != 2) return;
    auto it = latest_.find(&exe);
    if (it != latest_.end() && ran_[it->second].graph.lock().get() == &exe.graph()) {
      if (ran) ++ran_[it->second].runs;
      return;
    }
    // Texts are taken now: the executable's order is fixed once built, and
    // printing at exit would race the teardown of what the IR refers to.
    ran_.push_back(RanGraph{exe.shared_graph(), exe.graph().name(), ir::PrintText(exe.graph()),
                            exe.ExecutionOrderText(), exe.memory_stats(), exe.options().device, ran ? 1u : 0u});
    latest_[&exe] = ran_.size() - 1;
  }

  std::string WriteExit() noexcept {
    std::lock_guard lock(mutex_);
    if (!settings_.enable || settings_.mode != 2) return "";
    try {
      fs::path folder = NewRecordFolder(settings_, "exit");
      Json graphs = Json::array();
      std::map<std::string, int> used;
      for (const RanGraph& g : ran_) {
        std::string stem = UniqueStem(g.name, used);
        WriteFile(folder / (stem + ".ir"), g.ir_text);
        WriteFile(folder / (stem + ".exec_order"), g.execution_order);
        graphs.push_back({{"graph", g.name},
                          {"runs", g.runs},
                          {"device", std::string(DeviceTargetName(g.device))},
                          {"ir", stem + ".ir"},
                          {"exec_order", stem + ".exec_order"},
                          {"memory_plan", PlanToJson(g.plan)}});
      }
      WriteFile(folder / "graphs.json", graphs.dump(2) + "\n");
      WriteCommon(folder, DeviceTarget::kCPU, nullptr);
      MSRT_LOG(Warning) << "running data recorder: wrote the exit record " << folder.string();
      return folder.string();
    } catch (const std::exception& e) {  // also reached from atexit, where nothing may escape
      MSRT_LOG(Error) << "running data recorder: could not write the exit record: " << e.what();
      return "";
    }
  }

 private:
  static std::string UniqueStem(const std::string& name, std::map<std::string, int>& used) {
    std::string stem = SanitizeFileName(name);
    int n = used[stem]++;
    return n == 0 ? stem : StrCat(stem, "_", n);
  }

  static void WriteCommon(const fs::path& folder, DeviceTarget device, const GraphExecutable* exe) {
    Json memory = {{"pool", PoolToJson(device)}, {"pool_summary", memory::Summary(device)}};
    if (exe != nullptr) memory["graph_plan"] = PlanToJson(exe->memory_stats());
    WriteFile(folder / "memory.json", memory.dump(2) + "\n");
    WriteFile(folder / "context.json", ValueToJson(context::Global().Snapshot()).dump(2) + "\n");
  }

  void WriteFailure(Json failure, DeviceTarget device, const GraphExecutable* exe, int64_t step) noexcept {
    try {
      std::lock_guard lock(mutex_);
      if (!settings_.enable) return;
      fs::path folder = NewRecordFolder(settings_, "failure");
      failure["time"] = UtcNow();
      failure["pid"] = static_cast<int64_t>(getpid());
      failure["rank"] = RankId();
      Json files = {"failure.json", "memory.json", "context.json"};
      if (exe != nullptr) {
        std::string stem = SanitizeFileName(exe->graph().name());
        WriteFile(folder / (stem + ".ir"), ir::PrintText(exe->graph()));
        WriteFile(folder / (stem + ".exec_order"), exe->ExecutionOrderText(step));
        files.push_back(stem + ".ir");
        files.push_back(stem + ".exec_order");
      }
      failure["files"] = files;
      WriteCommon(folder, device, exe);
      WriteFile(folder / "failure.json", failure.dump(2) + "\n");
      MSRT_LOG(Warning) << "running data recorder: wrote " << folder.string();
    } catch (const std::exception& e) {
      MSRT_LOG(Error) << "running data recorder: could not write the failure record: " << e.what();
    }
  }

  std::mutex mutex_;
  Settings settings_;
  std::vector<RanGraph> ran_;             // in the order they first ran
  std::map<const void*, size_t> latest_;  // executable -> its entry in ran_
  context::Subscription subscription_;
};

const bool kRecorder = (Recorder::Global(), true);

}  // namespace

std::string WriteExitRecord() noexcept { return Recorder::Global().WriteExit(); }

}  // namespace msrt::runtime::recorder
