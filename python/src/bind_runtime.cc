// Runtime instruments: parse_print, the training-step counter and the
// profiler's session and span API.
#include <pybind11/stl.h>

#include "bindings.h"
#include "runtime/print_sink.h"
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
  m.def("current_step", [] { return runtime::CurrentStep(); },
        "Completed training steps (PYNATIVE_MODE's iteration; Note [Eager iterations]).");
  m.def("advance_step", [] { return runtime::AdvanceStep(); }, "Ends a training step; returns the new count.");
}

}  // namespace msrt::python
