// Shared pieces of the pybind11 module.
#pragma once

#include <pybind11/pybind11.h>

#include "msrt/core/value.h"

namespace msrt::python {

namespace py = pybind11;

/// Python object → Value (bool before int; other types kept by name).
Value ToValue(py::handle object);
/// Value → Python object (tuples stay tuples, dicts keep their order).
py::object FromValue(const Value& value);
/// A Python dict of keyword arguments → Dict.
Dict ToDict(py::handle mapping);

void BindCore(py::module_& m);
void BindContext(py::module_& m);
void BindTensor(py::module_& m);
void BindRandom(py::module_& m);
void BindGraph(py::module_& m);
void BindRuntime(py::module_& m);
void BindMemory(py::module_& m);
void BindProcess(py::module_& m);
void BindIo(py::module_& m);
void BindParallel(py::module_& m);

}  // namespace msrt::python
