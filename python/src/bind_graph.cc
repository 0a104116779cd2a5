// Graph capture, compilation and execution for msrt/_jit.py.
#include <pybind11/stl.h>

#include "bindings.h"
#include "compiler/capture.h"
#include "compiler/pipeline.h"
#include "ir/serialize.h"

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

py::dict ReportDict(const compiler::CompileReport& r, const runtime::GraphExecutable& exe) {
  py::dict d;
  d["graph_id"] = r.graph_id;
  d["captured_ops"] = r.captured_ops;
  d["final_ops"] = r.final_ops;
  d["fused_chains"] = r.fused_chains;
  d["fused_epilogues"] = r.fused_epilogues;
  d["channels_last_ops"] = r.channels_last_ops;
  d["layout_conversions"] = r.layout_conversions;
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
  d["memory_optimize_level"] = exe.options().memory_level;
  d["max_concurrent_kernels"] = exe.max_concurrent_kernels();
  return d;
}

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
      .def("set_replay", [](PyCapture& c, bool replay) { c.capture->set_replay(replay); },
           "Leaves out side effects and writes copies of written tensors (a backward graph's recompute).")
      .def("push_scope", [](PyCapture& c, std::string scope) { c.capture->PushScope(std::move(scope)); })
      .def("pop_scope", [](PyCapture& c) { c.capture->PopScope(); })
      .def_property_readonly("depth", [](const PyCapture& c) { return c.capture->depth(); })
      .def("__enter__",
           [](PyCapture& c) {
             c.scope = std::make_unique<compiler::CaptureScope>(c.capture.get());
             return &c;
           },
           py::return_value_policy::reference)
      .def("__exit__", [](PyCapture& c, const py::args&) { c.scope.reset(); })
      .def(
          "compile",
          [](PyCapture& c, const std::vector<Tensor>& outputs) {
            if (c.scope != nullptr) throw RuntimeError("compile the capture after leaving its with-block");
            auto graph = c.capture->Finish(outputs);
            int64_t id = compiler::NextGraphId();
            return PyCompiled{compiler::Compile(std::move(graph), id)};
          },
          "Ends capture with these outputs and compiles the graph.");

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
          [](PyCompiled& c, const std::vector<Tensor>& inputs) { return compiler::InlineGraph(*c.compiled.optimized, inputs); },
          py::arg("inputs"),
          "Calls the graph's program op by op: inlined into a capture in progress, eagerly otherwise.")
      .def("weight_names", [](const PyCompiled& c) { return c.compiled.executable->WeightNames(); })
      .def("captured_weights", [](const PyCompiled& c) { return c.compiled.executable->CapturedWeights(); },
           "The tensors bound to the weights at capture, in weight_names() order.")
      .def("ir", [](const PyCompiled& c) { return ir::PrintText(c.compiled.executable->graph()); },
           "The optimised graph as text (docs/ir.md).")
      .def("execution_order", [](const PyCompiled& c) { return c.compiled.executable->ExecutionOrderText(); })
      .def("report", [](const PyCompiled& c) { return ReportDict(c.compiled.report, *c.compiled.executable); })
      .def_property_readonly("runs", [](const PyCompiled& c) { return c.compiled.executable->runs(); })
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
        PyCompiled compiled{compiler::Compile(std::move(loaded.graph), id, /*front_end=*/false)};
        return py::make_tuple(std::move(compiled), py::bytes(loaded.metadata));
      },
      py::arg("data"), py::arg("what"), "Compiles a saved graph; returns (CompiledGraph, metadata bytes).");
}

}  // namespace msrt::python
