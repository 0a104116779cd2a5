// Note [Profiler output]
// A session writes two files into <output_path>/profiler/:
// - trace_<rank>.json, Chrome's trace-event format (Perfetto and
//   chrome://tracing open it): "X" events of category "op" (one per kernel
//   launch, on the thread that ran it, args: step, kernel, and graph/node in
//   GRAPH_MODE, input dtypes/shapes with op_details) and of category "step"
//   (host spans: "step", "data", "forward_backward", "update"), "C" counter
//   events "memory <device>" (allocated/reserved/peak bytes after each kernel)
//   with profile_memory, and "M" events naming the process and threads.
//   Times are microseconds since the session first started.
// - op_summary_<rank>.csv: op_type, calls, total_us, avg_us, share_percent
//   (of all kernel time), the most expensive first.
// In PYNATIVE_MODE kernels run on the dispatcher thread while Python goes on,
// so a step span (host time) may end before its kernels do; each op span's
// `step` arg says which step launched it.
#include "runtime/profiler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <tuple>

#include "context/option_spec.h"
#include "context/options.h"
#include "core/file_io.h"
#include "memory/allocator.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"
#include "runtime/eager.h"
#include "runtime/launch.h"
#include "runtime/rank.h"
#include "runtime/step.h"

namespace msrt::runtime::profiler {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace opts = context::runtime_options;

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Small, stable ids for threads (what the trace shows as tid).
int ThreadId() {
  static std::atomic<int> next{1};
  thread_local int id = next.fetch_add(1);
  return id;
}

struct Event {
  enum Kind : uint8_t { kOp, kSpan, kCounter } kind = kOp;
  int tid = 0;
  int64_t start_ns = 0;
  int64_t dur_ns = 0;
  int64_t step = -1;
  std::string name;    // op, span or counter name
  std::string kernel;  // "CPU:onednn"
  std::string graph, node, inputs;
  bool updates = false;                           // the op writes its inputs in place (an optimizer update)
  int64_t allocated = 0, reserved = 0, peak = 0;  // memory counters
};

std::string DescribeInputs(const std::vector<Tensor>& inputs) {
  std::string out;
  for (size_t i = 0; i < inputs.size(); ++i) {
    out += StrCat(i ? ", " : "", DTypeAttrName(inputs[i].dtype()), ShapeRepr(inputs[i].shape()));
  }
  return out;
}

}  // namespace

struct Session::State {
  Options options;
  mutable std::mutex mutex;
  std::vector<Event> events;
  bool running = false;
  int64_t origin_ns = -1;  // the first Start

  void Record(Event event) {
    std::lock_guard lock(mutex);
    if (running) events.push_back(std::move(event));
  }
};

namespace {

using StateList = std::vector<std::shared_ptr<Session::State>>;

// Times kernels for every running session: one observer however many run.
class Hub final : public KernelObserver {
 public:
  void Add(const std::shared_ptr<Session::State>& state) {
    Edit([&](StateList& list) { list.push_back(state); });
  }
  void Remove(const Session::State* state) {
    Edit([&](StateList& list) { std::erase_if(list, [&](const auto& s) { return s.get() == state; }); });
  }
  std::shared_ptr<const StateList> Running() const { return std::atomic_load(&running_); }
  bool active() const { return active_.load(std::memory_order_relaxed); }

  void Before(const LaunchEvent& event) override {
    (void)event;
    t_starts.push_back(NowNs());
  }

  void After(const LaunchEvent& event) override {
    if (t_starts.empty()) return;  // started while this kernel ran
    int64_t start = t_starts.back();
    t_starts.pop_back();
    int64_t end = NowNs();
    auto running = Running();
    bool details = false, memory = false;
    for (const auto& s : *running) {
      details = details || s->options.op_details;
      memory = memory || s->options.profile_memory;
    }
    Event op;
    op.kind = Event::kOp;
    op.tid = ThreadId();
    op.start_ns = start;
    op.dur_ns = end - start;
    op.step = static_cast<int64_t>(event.site.iteration);
    op.name = event.op.name;
    op.kernel = StrCat(DeviceTargetName(event.kernel.device), ":", event.kernel.impl);
    op.graph = event.site.graph;
    op.node = event.site.node;
    op.updates = event.op.props.inplace || !event.op.props.writes_inputs.empty();
    Event counter;
    if (memory) {
      auto stats = memory::Stats(event.kernel.device);
      counter.kind = Event::kCounter;
      counter.tid = op.tid;
      counter.start_ns = end;
      counter.name = StrCat("memory ", DeviceTargetName(event.kernel.device));
      counter.allocated = stats.allocated;
      counter.reserved = stats.reserved;
      counter.peak = stats.peak_allocated;
    }
    std::string inputs = details ? DescribeInputs(event.inputs) : std::string();
    for (const auto& s : *running) {
      Event copy = op;
      if (s->options.op_details) copy.inputs = inputs;
      s->Record(std::move(copy));
      if (s->options.profile_memory) s->Record(counter);
    }
  }

 private:
  void Edit(const std::function<void(StateList&)>& edit) {
    std::lock_guard lock(mutex_);
    auto next = std::make_shared<StateList>(*std::atomic_load(&running_));
    edit(*next);
    bool any = !next->empty();
    std::atomic_store(&running_, std::shared_ptr<const StateList>(std::move(next)));
    if (any && !active_.load()) AddKernelObserver(this);
    if (!any && active_.load()) RemoveKernelObserver(this);
    active_.store(any);
  }

  static thread_local std::vector<int64_t> t_starts;
  std::mutex mutex_;
  std::shared_ptr<const StateList> running_ = std::make_shared<StateList>();
  std::atomic<bool> active_{false};
};

thread_local std::vector<int64_t> Hub::t_starts;

Hub& GlobalHub() {
  static auto* hub = new Hub();
  return *hub;
}

struct OpenSpan {
  std::string name;
  int64_t step;
  int64_t start_ns;
};
thread_local std::vector<OpenSpan> t_spans;

bool SwitchOn(const Json& options, std::string_view key) {
  auto it = options.find(key);
  if (it == options.end()) return false;
  return it->is_boolean() ? it->get<bool>() : it->get<std::string>() == "on";
}

// "12.034": microseconds with three decimals.
std::string Micros(int64_t ns) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buffer;
}

}  // namespace

// --- options -----------------------------------------------------------------

Options ParseProfilerArgs(const Dict& kwargs, bool* start) {
  Options options;
  *start = true;
  for (const auto& [name, value] : kwargs) {
    // clang 14 cannot capture structured bindings: capture them by name.
    auto expect = [&name = name, &value = value](bool ok, std::string_view type) {
      if (!ok) {
        throw TypeError(StrCat("For 'Profiler', the parameter '", name, "' must be ", type, ", but got ",
                               value.type_name(), " (", value.repr(), ")."));
      }
    };
    if (name == "output_path") {
      expect(value.is_string(), "str");
      options.output_path = value.as_string();
    } else if (name == "profile_memory") {
      expect(value.is_bool(), "bool");
      options.profile_memory = value.as_bool();
    } else if (name == "start_profile") {
      expect(value.is_bool(), "bool");
      *start = value.as_bool();
    } else {
      throw TypeError(StrCat("For 'Profiler', got an unexpected argument '", name,
                             "'; the arguments are output_path, profile_memory and start_profile."));
    }
  }
  if (options.output_path.empty()) {
    throw ValueError("For 'Profiler', the parameter 'output_path' must be a directory path, but got ''.");
  }
  return options;
}

Options ParseProfilingOptions(const std::string& text) {
  Options options;
  if (text.find('{') == std::string::npos) {  // a trace name, "a:b" for two
    options.training_trace = text.find("training_trace") != std::string::npos;
    options.op_details = text.find("task_trace") != std::string::npos || text.find("op_trace") != std::string::npos;
    return options;
  }
  Json json = Json::parse(text);
  for (const char* key : {"output", "result_path"}) {
    auto it = json.find(key);
    if (it != json.end() && !it->get<std::string>().empty()) {
      options.output_path = it->get<std::string>();
      break;
    }
  }
  options.training_trace = SwitchOn(json, "training_trace");
  options.op_details = SwitchOn(json, "task_trace") || SwitchOn(json, "op_trace");
  options.profile_memory = SwitchOn(json, "profile_memory");
  return options;
}

// --- sessions ------------------------------------------------------------------

// The results go to <output_path>/profiler/: refuse a session that could
// not write them when it starts, not when it ends.
void CheckOutputPath(const std::string& output_path) {
  CheckPath(output_path, "For 'Profiler', the parameter 'output_path'");
  std::error_code ec;
  if (fs::exists(output_path, ec) && !fs::is_directory(output_path, ec)) {
    throw OSError(StrCat("For 'Profiler', the output path '", context::Printable(output_path),
                         "' is a file; expected a directory."));
  }
  if (std::string why = WhyNotCreatable((fs::path(output_path) / "profiler").string()); !why.empty()) {
    throw OSError(StrCat("For 'Profiler', the results can not be written under the output path '",
                         context::Printable(output_path), "': ", why, "."));
  }
}

Session::Session(Options options) : state_(std::make_shared<State>()) {
  CheckPath(options.output_path, "For 'Profiler', the parameter 'output_path'");
  options.output_path = context::RealPath(options.output_path);
  CheckOutputPath(options.output_path);
  state_->options = std::move(options);
}

Session::~Session() {
  if (running()) GlobalHub().Remove(state_.get());
}

void Session::Start() {
  {
    std::lock_guard lock(state_->mutex);
    if (state_->running) throw RuntimeError("The profiler has already started; call stop() before starting it again.");
    state_->running = true;
    if (state_->origin_ns < 0) state_->origin_ns = NowNs();
  }
  GlobalHub().Add(state_);
}

void Session::Stop() {
  Synchronize();  // kernels queued while it ran belong to it
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->running) throw RuntimeError("The profiler has not started; call start() before stop().");
    state_->running = false;
  }
  GlobalHub().Remove(state_.get());
}

bool Session::running() const {
  std::lock_guard lock(state_->mutex);
  return state_->running;
}

const Options& Session::options() const { return state_->options; }

bool Session::empty() const {
  std::lock_guard lock(state_->mutex);
  return state_->events.empty();
}

std::vector<std::string> Session::Write() const {
  std::vector<Event> events;
  int64_t origin;
  {
    std::lock_guard lock(state_->mutex);
    events = state_->events;
    origin = std::max<int64_t>(state_->origin_ns, 0);
  }
  const int64_t rank = RankId();
  fs::path dir = fs::path(state_->options.output_path) / "profiler";
  try {
    CreateDirectories(dir.string());
  } catch (const OSError& e) {
    throw OSError(StrCat("Profiler: ", e.message()));
  }

  // Thread names: the kernel threads (those that ran kernels; the host thread
  // too when it ran small ops at the call, Note [Inline small ops] in
  // eager.cc) and the host threads that only marked spans.
  struct ThreadRole {
    bool host = false;
    bool kernels = false;
  };
  std::map<int, ThreadRole> threads;
  for (const Event& e : events) {
    ThreadRole& role = threads[e.tid];
    role.host = role.host || e.kind == Event::kSpan;
    role.kernels = role.kernels || e.kind == Event::kOp;
  }
  std::string trace = "{\"traceEvents\": [\n";
  auto add = [&trace, first = true](const Json& event) mutable {
    trace += first ? "" : ",\n";
    trace += event.dump();
    first = false;
  };
  add(Json{{"name", "process_name"}, {"ph", "M"}, {"pid", rank}, {"args", {{"name", StrCat("msrt rank ", rank)}}}});
  for (const auto& [tid, role] : threads) {
    const std::string name = role.kernels ? StrCat("kernel thread ", tid, role.host ? " (host)" : "")
                                          : StrCat("host thread ", tid);
    add(Json{{"name", "thread_name"}, {"ph", "M"}, {"pid", rank}, {"tid", tid}, {"args", {{"name", name}}}});
  }
  struct Totals {
    int64_t calls = 0;
    int64_t ns = 0;
  };
  std::map<std::string, Totals> per_op;
  int64_t all_ns = 0;
  for (const Event& e : events) {
    // Raw JSON numbers keep microseconds with nanosecond digits.
    Json::number_float_t ts = static_cast<double>(std::max<int64_t>(e.start_ns - origin, 0)) / 1000.0;
    Json::number_float_t dur = static_cast<double>(e.dur_ns) / 1000.0;
    if (e.kind == Event::kCounter) {
      add(Json{{"name", e.name},
               {"ph", "C"},
               {"ts", ts},
               {"pid", rank},
               {"tid", e.tid},
               {"args", {{"allocated", e.allocated}, {"reserved", e.reserved}, {"peak_allocated", e.peak}}}});
      continue;
    }
    Json args = Json::object();
    if (e.step >= 0) args["step"] = e.step;
    if (e.kind == Event::kOp) {
      args["kernel"] = e.kernel;
      if (!e.graph.empty()) args["graph"] = e.graph;
      if (!e.node.empty()) args["node"] = e.node;
      if (!e.inputs.empty()) args["inputs"] = e.inputs;
      Totals& t = per_op[e.name];
      ++t.calls;
      t.ns += e.dur_ns;
      all_ns += e.dur_ns;
    }
    add(Json{{"name", e.name},
             {"cat", e.kind == Event::kOp ? "op" : "step"},
             {"ph", "X"},
             {"ts", ts},
             {"dur", dur},
             {"pid", rank},
             {"tid", e.tid},
             {"args", args}});
  }
  // Graph runs have no host code per phase: their phases are the spans of
  // their kernels, forward and backward first, then the in-place updates.
  std::map<std::tuple<std::string, int64_t, bool>, std::pair<int64_t, int64_t>> phases;
  for (const Event& e : events) {
    if (e.kind != Event::kOp || e.graph.empty()) continue;
    auto [it, fresh] = phases.try_emplace({e.graph, e.step, e.updates}, e.start_ns, e.start_ns + e.dur_ns);
    if (!fresh) {
      it->second.first = std::min(it->second.first, e.start_ns);
      it->second.second = std::max(it->second.second, e.start_ns + e.dur_ns);
    }
  }
  for (const auto& [key, range] : phases) {
    const auto& [graph, step, updates] = key;
    Json::number_float_t ts = static_cast<double>(std::max<int64_t>(range.first - origin, 0)) / 1000.0;
    Json::number_float_t dur = static_cast<double>(range.second - range.first) / 1000.0;
    add(Json{{"name", updates ? "update" : "forward_backward"},
             {"cat", "step"},
             {"ph", "X"},
             {"ts", ts},
             {"dur", dur},
             {"pid", rank},
             {"tid", 0},
             {"args", {{"graph", graph}, {"step", step}}}});
  }
  trace += StrCat("\n], \"displayTimeUnit\": \"ms\", \"otherData\": ",
                  Json{{"producer", "msrt"}, {"format_version", 1}, {"rank", rank}}.dump(), "}\n");

  std::vector<std::pair<std::string, Totals>> rows(per_op.begin(), per_op.end());
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  std::string csv = "op_type,calls,total_us,avg_us,share_percent\n";
  for (const auto& [name, t] : rows) {
    char share[32];
    std::snprintf(share, sizeof(share), "%.2f",
                  all_ns > 0 ? 100.0 * static_cast<double>(t.ns) / static_cast<double>(all_ns) : 0.0);
    csv += StrCat(name, ",", t.calls, ",", Micros(t.ns), ",", Micros(t.ns / t.calls), ",", share, "\n");
  }

  std::vector<std::string> paths = {(dir / StrCat("trace_", rank, ".json")).string(),
                                    (dir / StrCat("op_summary_", rank, ".csv")).string()};
  const std::string* contents[] = {&trace, &csv};
  for (size_t i = 0; i < paths.size(); ++i) {
    try {
      WriteFileAtomic(paths[i], *contents[i], Durability::kNoSync);
    } catch (const OSError& e) {
      throw OSError(StrCat("Profiler: ", e.message()));
    }
  }
  return paths;
}

// --- host spans -------------------------------------------------------------------

void BeginSpan(std::string name) { t_spans.push_back({std::move(name), static_cast<int64_t>(CurrentStep()), NowNs()}); }

void EndSpan() {
  if (t_spans.empty()) return;
  OpenSpan span = std::move(t_spans.back());
  t_spans.pop_back();
  auto running = GlobalHub().Running();
  if (running->empty()) return;
  Event e;
  e.kind = Event::kSpan;
  e.tid = ThreadId();
  e.start_ns = span.start_ns;
  e.dur_ns = NowNs() - span.start_ns;
  e.step = span.step;
  e.name = std::move(span.name);
  for (const auto& s : *running) {
    if (s->options.training_trace) s->Record(e);
  }
}

bool Active() { return GlobalHub().active(); }

// --- the context keys ------------------------------------------------------------------

namespace {

// enable_profiling=True starts a session configured by profiling_options;
// False (or the end of the process) stops it and writes its results.
class ContextProfiling {
 public:
  ContextProfiling() {
    context::Global().DeclareConsumer(opts::ProfilingOptions(), "profiler");
    subscription_ = context::Global().Subscribe({opts::EnableProfiling()}, "profiler",
                                                [this](const context::Change&) { Refresh(); });
    // enable_profiling that could not write its results fails the set_context call that asked for it.
    validator_ = context::Global().AddValidator(
        {opts::EnableProfiling(), opts::ProfilingOptions()}, "profiler", [](const context::Store::PendingGet& get) {
          if (!opts::EnableProfiling().Pending(get)) return;
          Options options;
          try {
            options = ParseProfilingOptions(opts::ProfilingOptions().Pending(get));
          } catch (const Error&) {
            throw;
          } catch (const std::exception& e) {
            throw ValueError(
                StrCat("For 'context.set_context', the argument 'profiling_options' is invalid: ", e.what()));
          }
          CheckOutputPath(context::RealPath(options.output_path));
        });
    Refresh();
  }

  void Refresh() {
    std::lock_guard lock(mutex_);
    bool enabled = opts::EnableProfiling().Get();
    if (enabled && session_ == nullptr) {
      Synchronize();  // kernels queued before belong to no session
      std::string text = opts::ProfilingOptions().Get();
      session_ = std::make_unique<Session>(ParseProfilingOptions(text));
      session_->Start();
      static const bool kAtExit = (std::atexit([] { Global().Finish(); }), true);
      (void)kAtExit;
    } else if (!enabled && session_ != nullptr) {
      FinishLocked();
    }
  }

  void Finish() {
    std::lock_guard lock(mutex_);
    if (session_ != nullptr) FinishLocked();
  }

  static ContextProfiling& Global() {
    static auto* instance = new ContextProfiling();
    return *instance;
  }

 private:
  void FinishLocked() {
    std::unique_ptr<Session> session = std::move(session_);
    session->Stop();
    if (session->empty()) {  // switched on and off with nothing run: no files
      MSRT_LOG(Info) << "profiler: nothing was recorded; no results written";
      return;
    }
    try {
      std::vector<std::string> paths = session->Write();
      MSRT_LOG(Info) << "profiler: wrote " << paths[0] << " and " << paths[1];
    } catch (const std::exception& e) {  // also reached from atexit, where nothing may escape
      MSRT_LOG(Error) << "profiler: " << e.what();
    }
  }

  std::mutex mutex_;
  std::unique_ptr<Session> session_;
  context::Subscription subscription_;
  context::Subscription validator_;
};

const bool kContextProfiling = (ContextProfiling::Global(), true);

}  // namespace

}  // namespace msrt::runtime::profiler
