// Values, errors and warnings across the Python boundary.
#include <array>

#include "bindings.h"
#include "msrt/core/device.h"
#include "msrt/core/errors.h"
#include "msrt/core/logging.h"

namespace msrt::python {
namespace {

std::string TypeName(py::handle object) {
  py::handle type = reinterpret_cast<PyObject*>(Py_TYPE(object.ptr()));
  std::string name = py::str(type.attr("__qualname__"));
  std::string module = py::str(type.attr("__module__"));
  return module == "builtins" ? name : module + "." + name;
}

// Python warning classes for each WarningKind, set by msrt/_warnings.py.
std::array<PyObject*, 3> g_warning_classes{};

void PythonWarningSink(WarningKind kind, const std::string& message) {
  PyObject* category = g_warning_classes[static_cast<int>(kind)];
  if (category == nullptr || !PyGILState_Check()) {
    // Not on a Python thread holding the GIL: log instead of waiting for it.
    LogMessage(LogLevel::kWarning, nullptr, 0, message);
    return;
  }
  if (PyErr_WarnEx(category, message.c_str(), 1) < 0) throw py::error_already_set();
}

// Containers nested deeper than this (or containing themselves) are refused:
// converting them recurses once per level and would overflow the stack.
constexpr int kMaxNestingDepth = 100;

[[noreturn]] void ThrowNestedTooDeep() {
  throw ValueError(StrCat("The value is nested deeper than ", kMaxNestingDepth,
                          " levels (lists, tuples or dicts inside each other, or a container that contains itself); "
                          "expected at most ",
                          kMaxNestingDepth, " levels."));
}

Value ToValueAt(py::handle object, int depth);

// `depth`: how many containers enclose `mapping`.
Dict ToDictAt(py::handle mapping, int depth) {
  if (depth >= kMaxNestingDepth) ThrowNestedTooDeep();
  Dict out;
  out.Reserve(static_cast<size_t>(PyDict_Size(mapping.ptr())));
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t position = 0;
  while (PyDict_Next(mapping.ptr(), &position, &key, &value)) {
    Py_ssize_t size = 0;
    const char* text = PyUnicode_Check(key) ? PyUnicode_AsUTF8AndSize(key, &size) : nullptr;
    if (PyUnicode_Check(key) && text == nullptr) throw py::error_already_set();
    std::string name = text != nullptr ? std::string(text, static_cast<size_t>(size))
                                       : std::string(py::repr(py::handle(key)));
    out.Set(std::move(name), ToValueAt(py::handle(value), depth + 1));
  }
  return out;
}

Value ToValueAt(py::handle object, int depth) {
  PyObject* o = object.ptr();
  if (o == Py_None) return Value();
  if (PyBool_Check(o)) return Value(o == Py_True);
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return Value::Object("int", py::repr(object));
    }
    return Value(static_cast<int64_t>(v));
  }
  if (PyFloat_Check(o)) return Value(PyFloat_AS_DOUBLE(o));
  if (PyUnicode_Check(o)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(o, &size);
    if (data == nullptr) {
      PyErr_Clear();
      return Value::Object("str", py::repr(object));
    }
    return Value(std::string(data, static_cast<size_t>(size)));
  }
  if (PyList_Check(o) || PyTuple_Check(o)) {
    if (depth >= kMaxNestingDepth) ThrowNestedTooDeep();
    const bool tuple = PyTuple_Check(o) != 0;
    List items;
    if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
      // By index, one allocation (shapes and axes come through here on every call that gives them).
      const Py_ssize_t size = tuple ? PyTuple_GET_SIZE(o) : PyList_GET_SIZE(o);
      items.reserve(static_cast<size_t>(size));
      for (Py_ssize_t i = 0; i < size; ++i) {
        // A list may change while an item converts (an object's repr): read the size again.
        if (!tuple && i >= PyList_GET_SIZE(o)) break;
        auto item = py::reinterpret_borrow<py::object>(tuple ? PyTuple_GET_ITEM(o, i) : PyList_GET_ITEM(o, i));
        items.push_back(ToValueAt(item, depth + 1));
      }
    } else {
      for (py::handle item : object) items.push_back(ToValueAt(item, depth + 1));
    }
    return tuple ? Value::Tuple(std::move(items)) : Value(std::move(items));
  }
  if (PyDict_Check(o)) return Value(ToDictAt(object, depth));
  return Value::Object(TypeName(object), py::repr(object));
}

}  // namespace

Value ToValue(py::handle object) { return ToValueAt(object, 0); }

Dict ToDict(py::handle mapping) { return ToDictAt(mapping, 0); }

py::object FromValue(const Value& value) {
  switch (value.kind()) {
    case ValueKind::kNone: return py::none();
    case ValueKind::kBool: return py::bool_(value.as_bool());
    case ValueKind::kInt: return py::int_(value.as_int());
    case ValueKind::kFloat: return py::float_(value.as_float());
    case ValueKind::kString: return py::str(value.as_string());
    case ValueKind::kList: {
      py::list out;
      for (const Value& item : value.as_list()) out.append(FromValue(item));
      return out;
    }
    case ValueKind::kTuple: {
      const List& items = value.as_list();
      py::tuple out(items.size());
      for (size_t i = 0; i < items.size(); ++i) out[i] = FromValue(items[i]);
      return out;
    }
    case ValueKind::kDict: {
      py::dict out;
      for (const auto& [key, item] : value.as_dict()) out[py::str(key)] = FromValue(item);
      return out;
    }
    case ValueKind::kObject: return py::str(value.repr());
  }
  return py::none();
}

// msrt.GraphCaptureError: a RuntimeError that graph compilation catches to
// fall back to eager execution (jit_syntax_level LAX/COMPATIBLE).
PyObject* GraphCaptureErrorType() {
  static PyObject* type = PyErr_NewExceptionWithDoc(
      "msrt.GraphCaptureError",
      "A Tensor's value was needed while a graph was being compiled (tensor-dependent Python control flow).",
      PyExc_RuntimeError, nullptr);
  return type;
}

void BindCore(py::module_& m) {
  m.attr("GraphCaptureError") = py::reinterpret_borrow<py::object>(GraphCaptureErrorType());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const Error& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.kind()) {
        case ErrorKind::kType: type = PyExc_TypeError; break;
        case ErrorKind::kValue: type = PyExc_ValueError; break;
        case ErrorKind::kKey: type = PyExc_KeyError; break;
        case ErrorKind::kMemory: type = PyExc_MemoryError; break;
        case ErrorKind::kOS: type = PyExc_OSError; break;
        case ErrorKind::kIndex: type = PyExc_IndexError; break;
        case ErrorKind::kNotImplemented: type = PyExc_NotImplementedError; break;
        case ErrorKind::kRuntime:
        case ErrorKind::kInternal: type = PyExc_RuntimeError; break;
        case ErrorKind::kGraphCapture: type = GraphCaptureErrorType(); break;
        case ErrorKind::kInterrupted:
          // Python's own SIGINT handler has a KeyboardInterrupt pending: raise that one, once.
          if (PyErr_CheckSignals() != 0) return;
          type = PyExc_KeyboardInterrupt;
          break;
      }
      PyErr_SetString(type, e.what());
    }
  });

  m.def(
      "_set_warning_classes",
      [](py::object general, py::object deprecated, py::object not_applicable) {
        for (PyObject* old : g_warning_classes) Py_XDECREF(old);
        g_warning_classes = {general.release().ptr(), deprecated.release().ptr(), not_applicable.release().ptr()};
        SetWarningSink(&PythonWarningSink);
      },
      "Routes msrt warnings to these Python warning classes.");

  m.def("build_info", [] {
    std::string why_not;
    int devices = VisibleCudaDevices(&why_not);
    py::dict info;
    info["cuda"] = BuiltWithCuda();
    info["gpu_kernels"] = BuiltWithGpuKernels();
    info["cuda_devices"] = devices;
    info["cuda_unavailable_reason"] = why_not;
    info["best_device"] = std::string(DeviceTargetName(BestAvailableDevice()));
    info["hardware_concurrency"] = HardwareConcurrency();
    return info;
  });
  m.def("log_level", [] { return static_cast<int>(CurrentLogLevel()); });
}

}  // namespace msrt::python
