#include "bindings.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "msrt native core";
  msrt::python::BindCore(m);
  msrt::python::BindContext(m);
  msrt::python::BindTensor(m);
  msrt::python::BindRandom(m);
  msrt::python::BindGraph(m);
  msrt::python::BindRuntime(m);
  msrt::python::BindMemory(m);
  msrt::python::BindProcess(m);
  msrt::python::BindIo(m);
  msrt::python::BindParallel(m);
}
