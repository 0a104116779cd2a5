// Graph capture, compilation and execution for msrt/_jit.py, and its front
// door: _C.CompiledFunction (src/compiler/compiled_function.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "compiler/capture.h"
#include "compiler/compiled_function.h"
#include "compiler/dynamic_shape.h"
#include "compiler/pipeline.h"
#include "ir/serialize.h"
#include "msrt/context/context.h"

namespace msrt::python {
namespace {

// A capture and, while inside `with`, its installation on this thread.
struct PyCapture {
  std::unique_ptr<compiler::Capture> capture;
  std::unique_ptr<compiler::CaptureScope> scope;
};

// A compiled graph with its compile report.
struct PyCompiled {
  compiler::Compiled compiled;
};

// A captured graph not compiled yet (Note [Dynamic shapes]).
struct PyGraph {
  std::shared_ptr<ir::Graph> graph;
};

py::dict ReportDict(const compiler::CompileReport& r, const runtime::GraphExecutable& exe) {
  py::dict d;
  d["graph_id"] = r.graph_id;
  d["captured_ops"] = r.captured_ops;
  d["final_ops"] = r.final_ops;
  d["fused_chains"] = r.fused_chains;
  d["fused_epilogues"] = r.fused_epilogues;
  d["fused_pairs"] = r.fused_pairs;
  d["in_place_tails"] = r.in_place_tails;
  d["channels_last_ops"] = r.channels_last_ops;
  d["layout_conversions"] = r.layout_conversions;
  d["float16_in_float32_ops"] = r.float16_in_float32_ops;
  d["float16_roundings"] = r.float16_roundings;
  d["float16_conversions"] = r.float16_conversions;
  d["float16_kept"] = r.float16_kept;
  d["optimize_seconds"] = r.optimize_seconds;
  d["backend_seconds"] = r.backend_seconds;
  py::list passes;
  for (const auto& [name, seconds] : r.pass_seconds) passes.append(py::make_tuple(name, seconds));
  d["passes"] = passes;
  d["files"] = r.files;
  runtime::GraphMemoryStats m = exe.memory_stats();
  d["planned_bytes"] = m.planned_bytes;
  d["peak_live_bytes"] = m.peak_live_bytes;
  d["intermediates"] = m.intermediate_count;
  d["recomputed_steps"] = m.recomputed_steps;
  d["memory_optimize_level"] = exe.options().memory_level;
  d["max_concurrent_kernels"] = exe.max_concurrent_kernels();
  d["dynamic"] = exe.dynamic();
  d["shape_plans"] = exe.shape_plans();
  return d;
}

// --- the compiled-function front door ---------------------------------------------------------

// An entry's Python side (msrt/_jit.py's _Entry); released with the GIL held.
struct PyPayload final : compiler::EntryPayload {
  explicit PyPayload(py::object o) : object(std::move(o)) {}
  ~PyPayload() override {
    py::gil_scoped_acquire gil;
    object = py::object();
  }
  py::object object;
};

py::object PayloadOf(const compiler::CompiledEntry& entry) {
  auto* payload = dynamic_cast<PyPayload*>(entry.payload.get());
  return payload != nullptr ? payload->object : py::none();
}

std::string QualifiedTypeName(py::handle value) {
  PyTypeObject* raw = Py_TYPE(value.ptr());
  if (!(raw->tp_flags & Py_TPFLAGS_HEAPTYPE)) return raw->tp_name;  // "int", "numpy.float32": already qualified
  py::handle type = reinterpret_cast<PyObject*>(raw);
  std::string name = py::str(type.attr("__qualname__"));
  std::string module = py::str(type.attr("__module__"));
  return module == "builtins" ? name : module + "." + name;
}

// ascii(value); a value whose repr raises is named by its type and id.
std::string AsciiRepr(py::handle value) {
  PyObject* text = PyObject_ASCII(value.ptr());
  if (text == nullptr) {
    PyErr_Clear();
    return StrCat("<", QualifiedTypeName(value), " at ", reinterpret_cast<uintptr_t>(value.ptr()), ">");
  }
  return py::reinterpret_steal<py::str>(text);
}

// Note [Compiled function keys]: what _jit.py's signature of (args, kwargs) was --
// tensors by shape and dtype, tuples, lists and dicts by their items, other values by value.
void WalkSignature(py::handle value, py::handle tensor_type, compiler::CallSignature& sig, int depth) {
  if (depth > 1000) {
    PyErr_SetString(PyExc_RecursionError, "the arguments of a compiled call nest too deeply");
    throw py::error_already_set();
  }
  if (py::isinstance(value, tensor_type)) {
    Tensor t = value.attr("_t").cast<Tensor>();
    sig.AddTensor(t.shape(), t.dtype());
  } else if (PyTuple_Check(value.ptr()) || PyList_Check(value.ptr())) {
    sig.Begin(py::str(py::type::of(value).attr("__name__")).cast<std::string>());
    for (py::handle item : value) WalkSignature(item, tensor_type, sig, depth + 1);
    sig.End();
  } else if (PyDict_Check(value.ptr())) {
    sig.Begin("dict");
    for (auto [k, v] : value.cast<py::dict>()) {
      sig.AddKey(AsciiRepr(k));
      WalkSignature(v, tensor_type, sig, depth + 1);
    }
    sig.End();
  } else {
    Py_hash_t hash = PyObject_Hash(value.ptr());
    if (hash == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      sig.AddUnhashable(QualifiedTypeName(value), AsciiRepr(value));
    } else {
      sig.AddConstant(QualifiedTypeName(value), AsciiRepr(value), hash);
    }
  }
}

// The Python callbacks of one call being compiled: `front` is msrt/_jit.py's _FRONT_END.
class PyHooks final : public compiler::CallHooks {
 public:
  PyHooks(py::handle front, py::handle body, py::handle args, py::handle kwargs, std::string name, py::handle owner,
          py::handle dynamic)
      : front_(front),
        body_(body),
        args_(args),
        kwargs_(kwargs),
        name_(std::move(name)),
        owner_(owner),
        dynamic_(dynamic) {}

  compiler::TraceResult Trace() override {
    py::object traced = front_.attr("trace")(body_, args_, kwargs_, name_, owner_, dynamic_);
    compiler::TraceResult result;
    if (py::isinstance<py::tuple>(traced)) {  // (where, error): the capture failed
      auto failure = traced.cast<py::tuple>();
      result.failed_at = py::str(failure[0]);
      result.error = py::str(failure[1]);
      return result;
    }
    result.compiled = std::make_shared<const compiler::Compiled>(traced.attr("compiled").cast<PyCompiled&>().compiled);
    result.payload = std::make_shared<PyPayload>(traced);
    return result;
  }

  std::vector<std::string> SourceFiles() override {
    return front_.attr("source_files")(body_, owner_).cast<std::vector<std::string>>();
  }

  std::shared_ptr<compiler::EntryPayload> Adopt(const std::shared_ptr<const compiler::Compiled>& compiled,
                                                const std::string& template_json, const std::string& file) override {
    py::object graph = py::cast(PyCompiled{*compiled});
    py::object entry = front_.attr("adopt")(graph, template_json, file, body_, args_, kwargs_, name_, owner_);
    if (entry.is_none()) return nullptr;
    return std::make_shared<PyPayload>(entry);
  }

  std::optional<std::string> CacheTemplate(const compiler::CompiledEntry& entry, std::string* why_not) override {
    auto answer = front_.attr("cache_template")(PayloadOf(entry)).cast<std::pair<py::object, py::object>>();
    if (answer.first.is_none()) {
      *why_not = py::str(answer.second);
      return std::nullopt;
    }
    return answer.first.cast<std::string>();
  }

 private:
  py::handle front_, body_, args_, kwargs_;
  std::string name_;
  py::handle owner_;
  py::handle dynamic_;
};

// Which object a call compiles for (its parameters are the graph's weights).
enum class OwnerPolicy {
  kBound,          // the one given at construction (a GRAPH_MODE Cell, a Cell's gradient), or none
  kFirstArgument,  // args[0] when it is an owner (a jit method of a Cell)
};

struct PyCompiledFunction {
  compiler::CompiledFunction function;
  py::object front;        // msrt/_jit.py's _FRONT_END: the callbacks
  py::object tensor_type;  // msrt.Tensor, from the front end
  py::object owner_type;   // msrt._jit.GraphOwner, from the front end
  py::object owner;        // OwnerPolicy::kBound's owner, or None
  OwnerPolicy policy = OwnerPolicy::kBound;
  bool key_training = false;  // the owner's training flag is part of the key
  std::string per_shape;      // why the body is compiled per shape although dimensions were declared dynamic

  // `dynamic`: None, or per positional argument the declared shape of a
  // Tensor with dynamic dimensions (-1) or None (Note [Dynamic shapes]).
  py::object Call(const py::object& body, const py::tuple& args, const py::dict& kwargs, const py::object& dynamic) {
    if (!dynamic.is_none() && per_shape.empty()) {
      try {
        return CallWith(body, args, kwargs, dynamic);
      } catch (py::error_already_set& e) {
        if (!e.matches(front.attr("NotPolymorphic"))) throw;
        per_shape = py::str(e.value());
      }
    }
    return CallWith(body, args, kwargs, py::none());
  }

  py::object CallWith(const py::object& body, const py::tuple& args, const py::dict& kwargs,
                      const py::object& dynamic) {
    py::object call_owner = owner;
    if (policy == OwnerPolicy::kFirstArgument) {
      call_owner = args.size() > 0 && py::isinstance(args[0], owner_type) ? py::object(args[0]) : py::none();
    }
    std::optional<int64_t> owner_id;
    std::optional<bool> training;
    if (!call_owner.is_none()) {
      owner_id = static_cast<int64_t>(reinterpret_cast<uintptr_t>(call_owner.ptr()));
      if (key_training) training = call_owner.attr("training").cast<bool>();
    }
    compiler::CallSignature sig;
    if (dynamic.is_none()) {
      WalkSignature(py::make_tuple(args, kwargs), tensor_type, sig, 0);
    } else {  // as the walk of (args, kwargs), with the declared shapes
      auto declared = dynamic.cast<std::vector<std::optional<Shape>>>();
      if (declared.size() != args.size()) throw InternalError("a dynamic signature per positional argument");
      sig.Begin("tuple");
      sig.Begin("tuple");
      for (size_t i = 0; i < args.size(); ++i) {
        if (declared[i] && py::isinstance(args[i], tensor_type)) {
          sig.AddTensor(*declared[i], args[i].attr("_t").cast<Tensor>().dtype());
        } else {
          WalkSignature(args[i], tensor_type, sig, 2);
        }
      }
      sig.End();
      WalkSignature(kwargs, tensor_type, sig, 1);
      sig.End();
    }
    compiler::CallKey key = compiler::MakeCallKey(compiler::CallIdentity(owner_id, training), sig);
    auto entry = function.Lookup(key);
    if (entry == nullptr) {
      std::string owner_name = call_owner.is_none() ? "-" : py::str(py::type::of(call_owner).attr("__qualname__"));
      std::string disk_key = StrCat(function.name(), " of ", owner_name,
                                    ", training=", training ? (*training ? "true" : "false") : "none", ": ",
                                    sig.text());
      PyHooks hooks(front, body, args, kwargs, function.name(), call_owner, dynamic);
      entry = function.Resolve(key, disk_key, hooks);
    }
    if (entry->eager()) return body(*args, **kwargs);
    if (GetContext("precompile_only").as_bool()) return py::none();
    return PayloadOf(*entry).attr("run")(args, kwargs);
  }

  py::list Report() const {
    py::list out;
    for (const auto& [key, entry] : function.entries()) {
      if (entry->eager()) continue;
      py::dict d = ReportDict(entry->compiled->report, *entry->compiled->executable);
      d["seconds"] = entry->seconds;
      switch (entry->cache) {
        case compiler::CacheUse::kNone: d["compile_cache"] = py::none(); break;
        case compiler::CacheUse::kLoaded: d["compile_cache"] = "loaded"; break;
        case compiler::CacheUse::kStored: d["compile_cache"] = "stored"; break;
      }
      if (!entry->file.empty()) d["file"] = entry->file;
      out.append(d);
    }
    return out;
  }

  // {signature text: entry payload (None: runs eagerly)}, in the order the entries were made.
  py::dict AsDict() const {
    py::dict d;
    for (const auto& [key, entry] : function.entries()) {
      d[py::str(StrCat(key.identity, " ", key.signature, " ", key.context_hash))] = PayloadOf(*entry);
    }
    return d;
  }
};

}  // namespace

void BindGraph(py::module_& m) {
  py::class_<PyCapture>(m, "GraphCapture")
      .def(py::init([](const std::string& name, int64_t max_call_depth, bool whole_stack) {
             auto c = std::make_unique<PyCapture>();
             c->capture = std::make_unique<compiler::Capture>(name, max_call_depth, whole_stack);
             return c;
           }),
           py::arg("name"), py::arg("max_call_depth"), py::arg("whole_stack") = false)
      .def("input",
           [](PyCapture& c, const std::vector<int64_t>& shape, const std::string& dtype, const std::string& name) {
             auto d = ParseDType(dtype);
             if (!d) throw TypeError(StrCat("unknown dtype '", dtype, "'"));
             return c.capture->AddInput(shape, *d, DeviceTarget::kCPU, name);
           })
      .def(
          "set_replay", [](PyCapture& c, bool replay) { c.capture->set_replay(replay); },
          "Leaves out side effects and writes copies of written tensors (a backward graph's recompute).")
      .def("push_scope", [](PyCapture& c, std::string scope) { c.capture->PushScope(std::move(scope)); })
      .def("pop_scope", [](PyCapture& c) { c.capture->PopScope(); })
      .def_property_readonly("depth", [](const PyCapture& c) { return c.capture->depth(); })
      .def(
          "__enter__",
          [](PyCapture& c) {
            c.scope = std::make_unique<compiler::CaptureScope>(c.capture.get());
            return &c;
          },
          py::return_value_policy::reference)
      .def("__exit__", [](PyCapture& c, const py::args&) { c.scope.reset(); })
      .def(
          "finish",
          [](PyCapture& c, const std::vector<Tensor>& outputs) {
            if (c.scope != nullptr) throw RuntimeError("finish the capture after leaving its with-block");
            return PyGraph{c.capture->Finish(outputs)};
          },
          "Ends capture with these outputs; the graph is compiled by compile_dynamic.")
      .def(
          "compile",
          [](PyCapture& c, const std::vector<Tensor>& outputs) {
            if (c.scope != nullptr) throw RuntimeError("compile the capture after leaving its with-block");
            auto graph = c.capture->Finish(outputs);
            int64_t id = compiler::NextGraphId();
            return PyCompiled{compiler::Compile(graph, id)};
          },
          "Ends capture with these outputs and compiles the graph.");

  py::class_<PyGraph>(m, "CapturedGraph", "A finished capture, not compiled yet (GraphCapture.finish).")
      .def("__repr__", [](const PyGraph& g) {
        return StrCat("<CapturedGraph '", g.graph->name(), "' with ", g.graph->OpCount(), " ops>");
      });
  m.def(
      "compile_dynamic",
      [](const PyGraph& a, const PyGraph& b) {
        auto general = compiler::GeneralizeGraphs(*a.graph, *b.graph);
        return PyCompiled{compiler::Compile(general, compiler::NextGraphId())};
      },
      py::arg("a"), py::arg("b"),
      "Note [Dynamic shapes]: one graph for two captures of a body at the probe sizes, with their differing "
      "dimensions dynamic (-1), compiled; ValueError saying why when they differ otherwise.");
  m.attr("DYNAMIC_PROBE_SIZES") = py::make_tuple(compiler::kProbeSizes[0], compiler::kProbeSizes[1]);

  py::class_<PyCompiled>(m, "CompiledGraph")
      .def(
          "run",
          [](PyCompiled& c, const std::vector<Tensor>& inputs, const std::vector<std::optional<Tensor>>& weights) {
            std::vector<Tensor> bound;
            bound.reserve(weights.size());
            for (const auto& w : weights) bound.push_back(w ? *w : Tensor());
            py::gil_scoped_release release;
            return c.compiled.executable->Run(inputs, bound);
          },
          py::arg("inputs"), py::arg("weights") = std::vector<std::optional<Tensor>>())
      .def(
          "inline",
          [](PyCompiled& c, const std::vector<Tensor>& inputs) {
            return compiler::InlineGraph(*c.compiled.optimized, inputs);
          },
          py::arg("inputs"),
          "Calls the graph's program op by op: inlined into a capture in progress, eagerly otherwise.")
      .def("weight_names", [](const PyCompiled& c) { return c.compiled.executable->WeightNames(); })
      .def(
          "captured_weights", [](const PyCompiled& c) { return c.compiled.executable->CapturedWeights(); },
          "The tensors bound to the weights at capture, in weight_names() order.")
      .def(
          "ir", [](const PyCompiled& c) { return ir::PrintText(c.compiled.executable->graph()); },
          "The optimised graph as text (docs/ir.md).")
      .def("execution_order", [](const PyCompiled& c) { return c.compiled.executable->ExecutionOrderText(); })
      .def("report", [](const PyCompiled& c) { return ReportDict(c.compiled.report, *c.compiled.executable); })
      .def_property_readonly("runs", [](const PyCompiled& c) { return c.compiled.executable->runs(); })
      .def_property_readonly(
          "dynamic", [](const PyCompiled& c) { return c.compiled.executable->dynamic(); },
          "Whether the graph has dynamic dimensions (Note [Dynamic shapes]).")
      .def_property_readonly(
          "shape_plans", [](const PyCompiled& c) { return c.compiled.executable->shape_plans(); },
          "A dynamic graph's executables made so far, one per input shapes.")
      .def(
          "serialize",
          [](const PyCompiled& c, bool embed_weights, const py::bytes& metadata) {
            return py::bytes(ir::SerializeGraph(*c.compiled.optimized, embed_weights, std::string(metadata)));
          },
          py::arg("embed_weights"), py::arg("metadata"),
          "The optimised graph as bytes (the compile cache and ms.export format).");

  m.def(
      "load_graph",
      [](const py::bytes& data, const std::string& what) {
        ir::LoadedGraph loaded = ir::DeserializeGraph(std::string(data), what);
        int64_t id = compiler::NextGraphId();
        PyCompiled compiled{compiler::Compile(loaded.graph, id, /*front_end=*/false)};
        return py::make_tuple(std::move(compiled), py::bytes(loaded.metadata));
      },
      py::arg("data"), py::arg("what"), "Compiles a saved graph; returns (CompiledGraph, metadata bytes).");

  // Its entries hold Python objects that may refer back to it (a Cell owning its
  // _graph_cache): the garbage collector sees them through tp_traverse.
  py::class_<PyCompiledFunction>(
      m, "CompiledFunction", py::custom_type_setup([](PyHeapTypeObject* heap_type) {
        auto* type = &heap_type->ht_type;
        type->tp_flags |= Py_TPFLAGS_HAVE_GC;
        type->tp_traverse = [](PyObject* self_base, visitproc visit, void* arg) {
          Py_VISIT(Py_TYPE(self_base));
          auto* inst = reinterpret_cast<py::detail::instance*>(self_base);
          if (!inst->get_value_and_holder().holder_constructed()) return 0;
          auto& self = py::cast<PyCompiledFunction&>(py::handle(self_base));
          Py_VISIT(self.front.ptr());
          Py_VISIT(self.tensor_type.ptr());
          Py_VISIT(self.owner_type.ptr());
          Py_VISIT(self.owner.ptr());
          for (const auto& [key, entry] : self.function.entries()) {
            if (auto* payload = dynamic_cast<PyPayload*>(entry->payload.get())) Py_VISIT(payload->object.ptr());
          }
          return 0;
        };
        type->tp_clear = [](PyObject* self_base) {
          auto* inst = reinterpret_cast<py::detail::instance*>(self_base);
          if (!inst->get_value_and_holder().holder_constructed()) return 0;
          auto& self = py::cast<PyCompiledFunction&>(py::handle(self_base));
          self.function.Clear();
          self.front = py::none();
          self.tensor_type = py::none();
          self.owner_type = py::none();
          self.owner = py::none();
          return 0;
        };
      }),
      "A compiled callable: its cache of graphs by call key, the compile cache on disk and the eager fallback "
      "(Note [Compiled function keys] in src/compiler/compiled_function.h). Reads as a mapping of its entries.")
      .def(py::init([](std::string name, py::object front, py::object owner, bool owner_is_first_argument,
                       bool key_training, bool allow_fallback) {
             py::object tensor_type = front.attr("tensor_type");
             py::object owner_type = front.attr("owner_type");
             return std::make_unique<PyCompiledFunction>(
                 PyCompiledFunction{compiler::CompiledFunction(std::move(name), allow_fallback),
                                    std::move(front),
                                    std::move(tensor_type),
                                    std::move(owner_type),
                                    std::move(owner),
                                    owner_is_first_argument ? OwnerPolicy::kFirstArgument : OwnerPolicy::kBound,
                                    key_training,
                                    {}});
           }),
           py::arg("name"), py::arg("front_end"), py::arg("owner") = py::none(),
           py::arg("owner_is_first_argument") = false, py::arg("key_training") = false,
           py::arg("allow_fallback") = true,
           "`owner`: the object whose parameters are the graph's weights (or, with owner_is_first_argument, the "
           "first argument when it is one: a jit method); key_training: its training flag is part of the key.")
      .def_static(
          "compile_once",
          [](const py::object& code, const py::object& make) {
            // Never destroyed: it lives as long as the functions it serves.
            static auto* shared = new py::dict();
            if (!shared->contains(code)) (*shared)[code] = make();
            return py::object((*shared)[code]);
          },
          py::arg("code"), py::arg("make"),
          "jit(compile_once=True): one CompiledFunction per code object, made by make() the first time, so a "
          "function created again (a closure, a decorator applied in a loop) reuses its graphs.")
      .def_property_readonly("name", [](const PyCompiledFunction& f) { return f.function.name(); })
      .def_property_readonly(
          "per_shape", [](const PyCompiledFunction& f) { return f.per_shape; },
          "Why dimensions declared dynamic are compiled per shape (Note [Dynamic shapes]); empty when they are not.")
      .def("__call__", &PyCompiledFunction::Call, py::arg("body"), py::arg("args"), py::arg("kwargs"),
           py::arg("dynamic") = py::none(),
           "body(*args, **kwargs) through its compiled graph for this call's key (compiled or loaded on a miss), "
           "eagerly when its capture fell back, or None with precompile_only.")
      .def("report", &PyCompiledFunction::Report, "The compile reports of its graphs, in the order they were made.")
      .def("as_dict", &PyCompiledFunction::AsDict)
      .def("__len__", [](const PyCompiledFunction& f) { return f.function.size(); })
      .def("__iter__", [](const PyCompiledFunction& f) { return py::iter(f.AsDict()); })
      .def("values", [](const PyCompiledFunction& f) { return f.AsDict().attr("values")(); })
      .def("__eq__",
           [](const PyCompiledFunction& f, const py::object& other) -> py::object {
             if (!py::isinstance<py::dict>(other)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(f.AsDict().equal(other));
           })
      .def("__repr__", [](const PyCompiledFunction& f) {
        return StrCat("<CompiledFunction '", f.function.name(), "' with ", f.function.size(), " graphs>");
      });

  m.def("capture_fallback", &compiler::DecideFallback, py::arg("name"), py::arg("failed_at"), py::arg("error"),
        py::arg("allow_fallback"),
        "Note [Capture fallback]: RuntimeError when a failed capture must not fall back, else a warning.");
  m.def(
      "version", [] { return std::string(compiler::Version()); }, "msrt's version, as the build knows it.");
}

}  // namespace msrt::python
