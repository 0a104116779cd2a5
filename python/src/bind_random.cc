// The global random generator's seed (Note [Random streams] in core/random.h).
#include "bindings.h"
#include "core/random.h"
#include "msrt/core/errors.h"

namespace msrt::python {

void BindRandom(py::module_& m) {
  m.def(
      "set_seed",
      [](py::handle seed) {
        if (!PyLong_Check(seed.ptr()) || PyBool_Check(seed.ptr())) {
          std::string type = py::str(seed.get_type().attr("__name__"));
          throw TypeError(StrCat("set_seed: 'seed' must be an int, but got ", type, "."));
        }
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(seed.ptr(), &overflow);
        if (overflow != 0 || value < 0) {
          std::string repr = py::repr(seed);
          throw ValueError(StrCat("set_seed: 'seed' must be in [0, 2**63 - 1], but got ", repr, "."));
        }
        random::SetSeed(static_cast<uint64_t>(value));
      },
      py::arg("seed"), "Sets the global seed of random ops and restarts their streams.");
  m.def(
      "get_seed", [] { return static_cast<int64_t>(random::GetSeed()); }, "The global seed (0 until set).");
}

}  // namespace msrt::python
