// Runtime instruments: parse_print, the training-step counter and the
// profiler's session and span API.
#include <pybind11/stl.h>

#include "bindings.h"
#include "kernels/cpu/half_convert.h"
#include "runtime/print_sink.h"
#include "runtime/profiler.h"
#include "runtime/rank.h"
#include "runtime/step.h"

namespace msrt::python {

void BindRuntime(py::module_& m) {
  m.def(
      "parse_print",
      [](const std::string& path) {
        std::vector<kernels::PrintItem> items;
        {
          py::gil_scoped_release release;
          items = runtime::ReadPrintFile(path);
        }
        py::list out;
        for (auto& item : items) {
          if (auto* text = std::get_if<std::string>(&item)) {
            out.append(py::str(*text));
          } else {
            out.append(py::cast(std::get<Tensor>(item)));
          }
        }
        return out;
      },
      py::arg("path"), "The values of a print file in order: str, or TensorBase.");
  m.def(
      "current_step", [] { return runtime::CurrentStep(); },
      "Completed training steps (PYNATIVE_MODE's iteration; Note [Eager iterations]).");
  m.def("rank_id", &runtime::RankId, "This process's rank (rank_<id> folders of dumps and caches).");
  m.def(
      "rank_place", [](const std::string& base) { return runtime::RankPlace(base).string(); }, py::arg("base"),
      "base/rank_<id> in a distributed job, else base (Note [Per-rank places]).");
  m.def(
      "advance_step", [] { return runtime::AdvanceStep(); }, "Ends a training step; returns the new count.");

  namespace prof = runtime::profiler;
  py::class_<prof::Session>(m, "ProfilerSession")
      .def("start", &prof::Session::Start)
      .def("stop", &prof::Session::Stop, py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("running", &prof::Session::running)
      .def_property_readonly("output_path", [](const prof::Session& s) { return s.options().output_path; })
      .def("write", &prof::Session::Write, py::call_guard<py::gil_scoped_release>(),
           "Writes the trace and the op summary; returns their paths.");
  m.def(
      "_profiler_session",
      [](const py::dict& kwargs) {
        bool start = true;
        prof::Options options = prof::ParseProfilerArgs(ToDict(kwargs), &start);
        return py::make_tuple(std::make_unique<prof::Session>(std::move(options)), start);
      },
      py::arg("kwargs"), "A profiling session for ms.Profiler(**kwargs), and whether to start it now.");
  m.def("_profiler_active", &prof::Active);
  // Which float32 <-> float16 / bfloat16 conversion loops run (Note [Half conversions]).
  m.def("_half_convert_path", [] { return std::string(kernels::cpu::HalfConvertPath()); });
  m.def("_profiler_begin_span", &prof::BeginSpan, py::arg("name"));
  m.def("_profiler_end_span", &prof::EndSpan);
}

}  // namespace msrt::python
