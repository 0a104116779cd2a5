// Note [Dump layout]
// With enable_dump on, each kernel launch writes
//   <save_dump_path>/rank_<id>/<graph>/<iteration>/<name>.input.<i>.npy
//   <save_dump_path>/rank_<id>/<graph>/<iteration>/<name>.output.<i>.npy
// inputs before the kernel runs (so in-place ops show what they read),
// outputs after. <graph> is the compiled graph's name and <name> the IR
// node's name, both made file-safe (SanitizeFileName), with the graph
// executor's execution count as <iteration>. In PYNATIVE_MODE <graph> is
// "pynative", <iteration> the training step the op was called in (Note
// [Eager iterations]) and <name> "<op>_<n>", n counting the launches of that
// step from 0. Each launch appends one JSON line to rank_<id>/index.jsonl:
//   {"graph", "iteration", "name", "node", "op", "kernel", "inputs": [...],
//    "outputs": [...]}, each tensor as {"file" (relative to rank_<id>),
//    "dtype", "shape"}.
// save_dump_path and the rank are read at each launch; relative paths are
// taken from the working directory then.
#include "runtime/kernel_dump.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "context/option_spec.h"
#include "context/options.h"
#include "core/file_io.h"
#include "msrt/context/context.h"
#include "msrt/core/errors.h"
#include "runtime/eager.h"
#include "runtime/launch.h"
#include "runtime/rank.h"

namespace msrt::runtime {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
namespace opts = context::runtime_options;
using context::Printable;

std::string_view NpyDescr(DType dtype) {
  switch (dtype) {
    case DType::kBool: return "|b1";
    case DType::kUInt8: return "|u1";
    case DType::kInt8: return "|i1";
    case DType::kInt16: return "<i2";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kFloat16: return "<f2";
    case DType::kBFloat16: return "<u2";
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kUInt16: return "<u2";
    case DType::kUInt32: return "<u4";
    case DType::kUInt64: return "<u8";
    case DType::kComplex64: return "<c8";
    case DType::kComplex128: return "<c16";
  }
  return "|u1";
}

Json Describe(const std::string& file, const Tensor& t) {
  return Json{{"file", file}, {"dtype", std::string(DTypeAttrName(t.dtype()))}, {"shape", t.shape()}};
}

// Where one launch's files go; made in Before, finished in After.
// The implicit move runs Json's noexcept move constructor; clang-tidy 14 reports throws below noexcept callees.
struct Pending {       // NOLINT(bugprone-exception-escape)
  fs::path dir;        // rank_<id>
  std::string folder;  // <graph>/<iteration>, relative to dir
  std::string name;
  Json inputs;
};

class KernelDumper final : public KernelObserver {
 public:
  KernelDumper() {
    using context::Global;
    Global().DeclareConsumer(opts::SaveDumpPath(), "kernel dump");
    subscription_ = Global().Subscribe({opts::EnableDump()}, "kernel dump",
                                       [this](const context::Change&) { Refresh(); });
    // enable_dump with a save_dump_path that can not be written fails the call that asked for it.
    validator_ = Global().AddValidator(
        {opts::EnableDump(), opts::SaveDumpPath()}, "kernel dump", [](const context::Store::PendingGet& get) {
          if (!opts::EnableDump().Pending(get)) return;
          std::string path = opts::SaveDumpPath().Pending(get);
          std::string dir = context::RealPath(path.empty() ? "." : path);
          if (std::string why = WhyNotCreatable(dir); !why.empty()) {
            throw OSError(StrCat("For 'context.set_context', enable_dump can not write under save_dump_path '",
                                 Printable(dir), "': ", why, "."));
          }
        });
    Refresh();
  }

  void Before(const LaunchEvent& event) override {
    Pending p;
    std::string path = opts::SaveDumpPath().Get();
    p.dir = fs::path(context::RealPath(path.empty() ? "." : path)) / StrCat("rank_", RankId());
    bool eager = event.site.graph.empty();
    std::string graph = eager ? "pynative" : SanitizeFileName(event.site.graph);
    p.folder = StrCat(graph, "/", event.site.iteration);
    if (!eager && !event.site.node.empty()) {
      p.name = SanitizeFileName(event.site.node);
    } else {
      p.name = StrCat(SanitizeFileName(event.op.name), "_", NextIndex(p.dir.string() + "/" + p.folder));
    }
    try {
      CreateDirectories((p.dir / p.folder).string());
    } catch (const OSError& e) {
      throw OSError(StrCat("enable_dump: ", e.message()));
    }
    p.inputs = Json::array();
    for (size_t i = 0; i < event.inputs.size(); ++i) {
      if (event.inputs[i].defined() && event.inputs[i].symbolic()) {
        // A meta-only input (Note [Meta-only inputs] in graph_executor.cc): the op never reads its elements.
        p.inputs.push_back(Json{{"dtype", std::string(DTypeAttrName(event.inputs[i].dtype()))},
                                {"shape", event.inputs[i].shape()},
                                {"meta_only", true}});
        continue;
      }
      std::string file = StrCat(p.folder, "/", p.name, ".input.", i, ".npy");
      WriteNpy((p.dir / file).string(), event.inputs[i]);
      p.inputs.push_back(Describe(file, event.inputs[i]));
    }
    t_pending.push_back(std::move(p));
  }

  void After(const LaunchEvent& event) override {
    if (t_pending.empty()) return;
    Pending p = std::move(t_pending.back());
    t_pending.pop_back();
    Json outputs = Json::array();
    for (size_t i = 0; i < event.outputs.size(); ++i) {
      std::string file = StrCat(p.folder, "/", p.name, ".output.", i, ".npy");
      WriteNpy((p.dir / file).string(), event.outputs[i]);
      outputs.push_back(Describe(file, event.outputs[i]));
    }
    Json line{{"graph", event.site.graph.empty() ? "pynative" : std::string(event.site.graph)},
              {"iteration", event.site.iteration},
              {"name", p.name},
              {"node", std::string(event.site.node)},
              {"op", std::string(event.op.name)},
              {"kernel", StrCat(DeviceTargetName(event.kernel.device), ":", event.kernel.impl)},
              {"inputs", std::move(p.inputs)},
              {"outputs", std::move(outputs)}};
    std::string text = line.dump() + "\n";
    std::lock_guard lock(mutex_);
    try {
      AppendFile((p.dir / "index.jsonl").string()).Append(text);
    } catch (const OSError& e) {
      throw OSError(StrCat("enable_dump: ", e.message()));
    }
  }

 private:
  // The switch takes effect between ops: kernels already queued finish
  // under the old setting.
  void Refresh() {
    bool enabled = opts::EnableDump().Get();
    Synchronize();
    if (enabled) {
      AddKernelObserver(this);
    } else {
      RemoveKernelObserver(this);
    }
  }

  // The launch's index within its folder; a folder's count starts at 0.
  uint64_t NextIndex(const std::string& folder) {
    std::lock_guard lock(mutex_);
    return counters_[folder]++;
  }

  // Kernels may nest (a kernel that launches others), so pending launches stack.
  static thread_local std::vector<Pending> t_pending;
  std::mutex mutex_;
  std::map<std::string, uint64_t> counters_;
  context::Subscription subscription_;
  context::Subscription validator_;
};

thread_local std::vector<Pending> KernelDumper::t_pending;

const bool kInstalled = (new KernelDumper(), true);  // lives as long as the process

}  // namespace

std::string SanitizeFileName(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
                c == '_';
    if (!safe) c = '_';
  }
  if (out.empty()) return "_";
  if (out[0] == '.') out[0] = '_';
  return out;
}

void WriteNpy(const std::string& path, const Tensor& tensor) {
  if (tensor.device() != DeviceTarget::kCPU) {
    throw RuntimeError(StrCat("enable_dump: can only dump host (CPU) tensors in this build, but got one on ",
                              DeviceTargetName(tensor.device()), "."));
  }
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) shape += StrCat(i ? ", " : "", tensor.shape()[i]);
  if (tensor.shape().size() == 1) shape += ",";
  shape += ")";
  std::string header = StrCat("{'descr': '", NpyDescr(tensor.dtype()), "', 'fortran_order': False, 'shape': ", shape,
                              ", }");
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a
  // multiple of 64 and ended by a newline.
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string prefix = "\x93NUMPY";
  prefix += '\x01';
  prefix += '\x00';
  uint16_t length = static_cast<uint16_t>(header.size());
  prefix.append(reinterpret_cast<const char*>(&length), sizeof(length));
  std::string bytes = prefix + header;
  bytes.append(static_cast<const char*>(tensor.raw()), tensor.nbytes());
  try {
    WriteFileAtomic(path, bytes, Durability::kNoSync);
  } catch (const OSError& e) {
    throw OSError(StrCat("enable_dump: ", e.message()));
  }
}

}  // namespace msrt::runtime
