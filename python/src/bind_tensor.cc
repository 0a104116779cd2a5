// Tensors, op calls and gradient tapes. Ops are called by name through one
// generic function: the binding knows no op.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <frameobject.h>
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "autodiff/autodiff.h"
#include "bindings.h"
#include "core/views.h"
#include "kernels/kernel.h"
#include "msrt/core/errors.h"
#include "ops/call.h"
#include "ops/op_registry.h"
#include "runtime/eager.h"

namespace msrt::python {
namespace {

// Records every op call (ops::CallObserver) between start() and stop():
// which ops a function runs and with which parsed attributes.
class CallTrace : public ops::CallObserver {
 public:
  ~CallTrace() override { Stop(); }
  void Start() {
    std::lock_guard lock(mutex_);
    calls_.clear();
    ops::AddCallObserver(this);
  }
  void Stop() { ops::RemoveCallObserver(this); }
  void OnCall(const ops::OpDef& op, const Dict& attrs) override {
    std::lock_guard lock(mutex_);
    calls_.emplace_back(std::string(op.name), attrs);
  }
  py::list Calls() {
    std::lock_guard lock(mutex_);
    py::list out;
    for (const auto& [name, attrs] : calls_) out.append(py::make_tuple(name, FromValue(Value(attrs))));
    return out;
  }

 private:
  std::mutex mutex_;
  std::vector<std::pair<std::string, Dict>> calls_;
};

std::optional<DType> FromNumpy(const py::dtype& dt) {
  char kind = dt.kind();
  auto size = dt.itemsize();
  if (kind == 'b') return DType::kBool;
  if (kind == 'u') {
    switch (size) {
      case 1: return DType::kUInt8;
      case 2: return DType::kUInt16;
      case 4: return DType::kUInt32;
      case 8: return DType::kUInt64;
    }
  }
  if (kind == 'c') {
    switch (size) {
      case 8: return DType::kComplex64;
      case 16: return DType::kComplex128;
    }
  }
  if (kind == 'i') {
    switch (size) {
      case 1: return DType::kInt8;
      case 2: return DType::kInt16;
      case 4: return DType::kInt32;
      case 8: return DType::kInt64;
    }
  }
  if (kind == 'f') {
    switch (size) {
      case 2: return DType::kFloat16;
      case 4: return DType::kFloat32;
      case 8: return DType::kFloat64;
    }
  }
  return std::nullopt;
}

py::dtype ToNumpy(DType dtype) {
  switch (dtype) {
    case DType::kBool: return py::dtype("bool");
    case DType::kUInt8: return py::dtype("uint8");
    case DType::kInt8: return py::dtype("int8");
    case DType::kInt16: return py::dtype("int16");
    case DType::kInt32: return py::dtype("int32");
    case DType::kInt64: return py::dtype("int64");
    case DType::kFloat16: return py::dtype("float16");
    case DType::kBFloat16:  // NumPy has no bfloat16
    case DType::kFloat32: return py::dtype("float32");
    case DType::kFloat64: return py::dtype("float64");
    case DType::kUInt16: return py::dtype("uint16");
    case DType::kUInt32: return py::dtype("uint32");
    case DType::kUInt64: return py::dtype("uint64");
    case DType::kComplex64: return py::dtype("complex64");
    case DType::kComplex128: return py::dtype("complex128");
  }
  return py::dtype("float32");
}

DType SupportedDType(const py::dtype& dt, std::string_view api) {
  auto dtype = FromNumpy(dt);
  if (!dtype) {
    throw TypeError(StrCat(api, ": NumPy dtype '", std::string(py::str(py::handle(dt))),
                           "' is not supported; expected bool, uint8, uint16, uint32, uint64, int8, int16, "
                           "int32, int64, float16, float32, float64, complex64 or complex128."));
  }
  return *dtype;
}

Tensor FromArray(const py::array& input, std::optional<std::string> dtype_name) {
  py::array array = py::array::ensure(input, py::array::c_style);
  if (!array) throw py::error_already_set();
  if (!array.dtype().attr("isnative").cast<bool>()) {
    // Non-native byte order ('>f4' on this machine): NumPy swaps the bytes.
    array = py::array::ensure(array.attr("astype")(array.dtype().attr("newbyteorder")("=")), py::array::c_style);
    if (!array) throw py::error_already_set();
  }
  const DType dtype = SupportedDType(array.dtype(), "Tensor");
  Shape shape(array.shape(), array.shape() + array.ndim());
  CheckShape(shape, dtype, "Tensor");
  Tensor t = Tensor::FromHost(array.data(), static_cast<size_t>(array.nbytes()), shape, dtype);
  if (dtype_name && *dtype_name != DTypeAttrName(dtype)) {
    auto target = ParseDType(*dtype_name);
    if (!target) throw TypeError(StrCat("Tensor: unknown dtype '", *dtype_name, "'."));
    t = ops::Call1("cast", {t}, Dict{{"dtype", Value(std::string(DTypeAttrName(*target)))}});
  }
  return t;
}

bool InterpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

// Drops a reference the core holds on a Python object, from any thread: a
// tensor may be freed on the eager dispatcher or a graph executor's worker,
// which take the interpreter lock first. Once the interpreter is gone (C++
// objects destroyed at exit), or going while this thread does not hold the
// lock (it could not take it), the object is left as it is.
void ReleasePythonReference(PyObject* object) {
  if (!Py_IsInitialized()) return;
  if (PyGILState_Check()) {
    Py_DECREF(object);
    return;
  }
  if (InterpreterFinalizing()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_DECREF(object);
  PyGILState_Release(gil);
}

// Tensor.from_numpy: a tensor over the array's own memory (Note [Foreign and
// host-shared memory] in src/core/tensor.cc), which keeps the array alive.
// As in MindSpore, an array that is not C-contiguous is copied to a
// contiguous tensor; so is one msrt cannot write in place: read-only,
// misaligned or in the other byte order.
Tensor ShareArray(py::array array) {
  const DType dtype = SupportedDType(array.dtype(), "For 'Tensor.from_numpy'");
  const int flags = array.flags();
  const int needed = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | py::detail::npy_api::NPY_ARRAY_ALIGNED_ |
                     py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  if ((flags & needed) != needed || !array.dtype().attr("isnative").cast<bool>()) return FromArray(array, {});
  Shape shape(array.shape(), array.shape() + array.ndim());
  CheckShape(shape, dtype, "Tensor.from_numpy");
  PyObject* owner = array.ptr();
  auto storage = Storage::Foreign(array.mutable_data(), static_cast<size_t>(array.nbytes()), DeviceTarget::kCPU,
                                  [owner] { ReleasePythonReference(owner); });
  Py_INCREF(owner);  // after the storage exists: its release drops this reference
  return Tensor::FromStorage(std::move(storage), shape, dtype);
}

// What an asnumpy() array keeps alive: the tensor's storage (not the tensor,
// whose autodiff history it does not need), counted as a host view while the
// array lives.
struct HostView {
  explicit HostView(std::shared_ptr<Storage> s) : storage(std::move(s)) { storage->AddHostView(); }
  ~HostView() { storage->RemoveHostView(); }
  HostView(const HostView&) = delete;
  HostView& operator=(const HostView&) = delete;
  std::shared_ptr<Storage> storage;
};

py::array ToArray(const Tensor& t) {
  {
    py::gil_scoped_release release;
    t.Sync();
    // Queued ops may still read this memory; the array may write it next.
    runtime::Synchronize();
  }
  if (t.device() != DeviceTarget::kCPU) {
    throw RuntimeError(StrCat("asnumpy: the tensor lives on ", DeviceTargetName(t.device()),
                              "; this build of msrt has no copy from that device to the host."));
  }
  Tensor source = t;
  if (t.dtype() == DType::kBFloat16) source = ops::Call1("cast", {t}, Dict{{"dtype", Value("float32")}});
  source.Sync();
  // Python may write through the array: it must not show through views (Note [Views]).
  DetachFromViews(source);
  std::vector<py::ssize_t> shape(source.shape().begin(), source.shape().end());
  // The array shares the tensor's memory; the capsule keeps that memory alive.
  auto* view = new HostView(source.impl()->storage);
  py::capsule owner(view, [](void* p) { delete static_cast<HostView*>(p); });
  return py::array(ToNumpy(source.dtype()), shape, {}, source.raw(), owner);
}

// "file.py:42" for the innermost Python frame outside the msrt package.
std::string PythonOrigin() {
  PyFrameObject* frame = PyEval_GetFrame();
  int depth = 0;
  while (frame != nullptr && depth < 32) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    bool internal = file != nullptr && std::strstr(file, "/msrt/") != nullptr &&
                    std::strstr(file, "/tests/") == nullptr;
    if (!internal) {
      std::string out = StrCat(file ? file : "?", ":", PyFrame_GetLineNumber(frame));
      Py_DECREF(code);
      return out;
    }
    Py_DECREF(code);
    frame = PyFrame_GetBack(frame);          // new reference in 3.11
    if (frame != nullptr) Py_DECREF(frame);  // the frame stays alive on the stack
    ++depth;
  }
  return "";
}

// "a.py:3 <- b.py:10 <- ...": the Python stack (innermost first), msrt's own
// frames included, for graph nodes compiled with debug_level=DEBUG.
std::string PythonStack() {
  std::string out;
  PyFrameObject* frame = PyEval_GetFrame();
  for (int depth = 0; frame != nullptr && depth < 24; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    const char* func = PyUnicode_AsUTF8(code->co_name);
    out += StrCat(out.empty() ? "" : " <- ", file ? file : "?", ":", PyFrame_GetLineNumber(frame), " (",
                  func ? func : "?", ")");
    Py_DECREF(code);
    frame = PyFrame_GetBack(frame);
    if (frame != nullptr) Py_DECREF(frame);
  }
  return out;
}

// Note [Custom gradients from Python]
// A Cell with a `bprop` method differentiates through that method rather
// than through the ops of its forward pass. msrt/_grad.py runs the forward
// unrecorded, then records one node of `kCustomBpropOp` (not in the op
// registry) whose inputs are the cell's tensor inputs and whose outputs are
// fresh handles on its outputs. The node's gradient calls back the Python
// handler with the node's id and the output gradients (None where none
// flows); the handler runs the bprop and returns one gradient (or None) per
// input. Gradients run with recording paused and the GIL held (the tape's
// `gradient` is called from Python).
py::object* g_custom_grad_handler = nullptr;  // leaked: must outlive interpreter teardown

std::vector<Tensor> CustomGradient(const ops::GradArgs& args) {
  if (g_custom_grad_handler == nullptr) throw RuntimeError("custom_bprop: no gradient handler is installed.");
  py::gil_scoped_acquire gil;
  py::list dys;
  for (const Tensor& dy : args.dys) {
    if (dy.defined()) {
      dys.append(py::cast(dy));
    } else {
      dys.append(py::none());
    }
  }
  const Value* id = args.attrs.Find("id");
  py::object result = (*g_custom_grad_handler)(id ? id->as_int() : 0, dys);
  std::vector<Tensor> grads(args.inputs.size());
  size_t i = 0;
  for (py::handle item : result) {
    if (i >= grads.size()) break;
    if (!item.is_none()) {
      Tensor g = item.cast<Tensor>();
      if (g.shape() != args.inputs[i].shape()) {
        throw ValueError(StrCat("custom bprop: the gradient of input ", i, " has shape ", ShapeRepr(g.shape()),
                                ", but the input has shape ", ShapeRepr(args.inputs[i].shape()), "."));
      }
      grads[i] = std::move(g);
    }
    ++i;
  }
  return grads;
}

const ops::OpDef kCustomBpropOp{
    .name = "custom_bprop",
    .inputs = {"xs..."},
    .grad = &CustomGradient,
    .doc = "A Python-defined gradient (a Cell's bprop); recorded by msrt/_grad.py, never called.",
};

std::string TypeName(py::handle object) { return py::str(py::type::handle_of(object).attr("__name__")); }

// Note [The op call binding]
// Every Python op call comes through `call`, so it is a plain CPython
// function reading its arguments directly rather than through pybind11's
// generic conversions: a TensorBase's handle is taken from the instance when
// its type is exactly TensorBase, None stands for an optional input left out
// (Note [Optional inputs] in ops/op_def.h), and outputs are wrapped with the
// TensorBase type found once. Errors raise as from any pybind11 function.
const py::detail::type_info* TensorBaseInfo() {
  static const py::detail::type_info* info = py::detail::get_type_info(typeid(Tensor));
  return info;
}

// Note [Wrapping op outputs]
// An op's output becomes a new TensorBase owning a moved handle, as
// pybind11's move cast would make it, without the two steps of that cast
// that cost a real share of a small op's call: looking for a Python object
// already registered at the source's address (a local here, never
// registered), and finding the class's type record again by its C++ type
// name (class_::init_instance hashes typeid's name on every object). The
// instance is laid out and given its holder (TensorBase's default,
// std::unique_ptr) as init_instance does, but not entered in pybind11's
// registry of instances by C++ address, which costs a node allocation and
// two hash updates per object: that registry serves only casts of C++
// pointers and references back to their existing Python object, and no
// binding returns a reference or pointer to a TensorBase's Tensor (each
// output's Tensor is new and owned by its object alone). pybind11's own
// deallocation skips the registry for an instance never entered in it.
using TensorBaseClass = py::class_<Tensor>;  // bound in BindTensor

py::object WrapTensor(Tensor&& t) {
  using Holder = TensorBaseClass::holder_type;
  static_assert(std::is_same_v<Holder, std::unique_ptr<Tensor>>, "WrapTensor makes unique_ptr holders");
  const py::detail::type_info* tinfo = TensorBaseInfo();
  auto object = py::reinterpret_steal<py::object>(py::detail::make_new_instance(tinfo->type));
  auto* instance = reinterpret_cast<py::detail::instance*>(object.ptr());
  py::detail::value_and_holder v_h = instance->get_value_and_holder(tinfo);
  auto* value = new Tensor(std::move(t));
  v_h.value_ptr() = value;
  instance->owned = true;
  new (std::addressof(v_h.holder<Holder>())) Holder(value);
  v_h.set_holder_constructed();
  return object;
}

// Note [Op lookup cache]
// The op of a call is found by the name's str object, which the cache holds
// a reference to (so its address names that string while it is there): the
// wrappers pass the same few interned names on every call. A name that is
// no op is not kept, and raises on every call. Ops are registered once, at
// start-up, and live as long as the process. Used with the interpreter lock.
const ops::OpDef& FindCallOp(py::handle op) {
  static auto* cache = new std::unordered_map<PyObject*, const ops::OpDef*>();
  if (auto it = cache->find(op.ptr()); it != cache->end()) return *it->second;
  Py_ssize_t name_size = 0;
  const char* name = PyUnicode_Check(op.ptr()) ? PyUnicode_AsUTF8AndSize(op.ptr(), &name_size) : nullptr;
  if (name == nullptr) {
    PyErr_Clear();
    throw TypeError(StrCat("call(): 'op' must be a str, but got ", TypeName(op), "."));
  }
  const ops::OpDef& def = ops::GetOp(std::string_view(name, static_cast<size_t>(name_size)));
  if (!PyUnicode_CheckExact(op.ptr())) return def;
  constexpr size_t kMaxNames = 4096;  // names built at run time (f-strings) do not pile up
  if (cache->size() >= kMaxNames) {
    for (const auto& entry : *cache) Py_DECREF(entry.first);
    cache->clear();
  }
  Py_INCREF(op.ptr());
  cache->emplace(op.ptr(), &def);
  return def;
}

// What call returns: the list of outputs (call), the one output itself
// (call1: TypeError for an op of several), or the one output itself for an
// op of one and the list for an op of several (call_any: for callers that
// do not know how many an op gives, without a list for the common one).
enum class Returns { kList, kSingle, kSingleOrList };

py::object CallOp(py::handle op, py::handle inputs, py::handle attrs, Returns returns) {
  if (!PyUnicode_Check(op.ptr())) throw TypeError(StrCat("call(): 'op' must be a str, but got ", TypeName(op), "."));
  if (!PyDict_Check(attrs.ptr())) {
    throw TypeError(StrCat("call(): 'attrs' must be a dict, but got ", TypeName(attrs), "."));
  }
  if (PyUnicode_Check(inputs.ptr()) || PyBytes_Check(inputs.ptr())) {
    throw TypeError(StrCat("call(): 'inputs' must be a list of TensorBase, but got ", TypeName(inputs), "."));
  }
  std::vector<Tensor> given;
  {
    PyObject* sequence = PySequence_Fast(inputs.ptr(), "");  // a new reference (the list itself for a list)
    if (sequence == nullptr) {
      PyErr_Clear();
      throw TypeError(StrCat("call(): 'inputs' must be a list of TensorBase, but got ", TypeName(inputs), "."));
    }
    py::object held = py::reinterpret_steal<py::object>(sequence);
    const Py_ssize_t count = PySequence_Fast_GET_SIZE(sequence);
    PyObject** items = PySequence_Fast_ITEMS(sequence);
    PyTypeObject* tensor_type = TensorBaseInfo()->type;
    given.reserve(static_cast<size_t>(count));
    for (Py_ssize_t i = 0; i < count; ++i) {
      py::handle item(items[i]);
      if (item.is_none()) {
        given.emplace_back();
      } else if (Py_TYPE(item.ptr()) == tensor_type) {
        auto* instance = reinterpret_cast<py::detail::instance*>(item.ptr());
        given.push_back(*static_cast<Tensor*>(instance->get_value_and_holder().value_ptr()));
      } else {
        try {
          given.push_back(item.cast<Tensor>());
        } catch (const py::cast_error&) {
          throw TypeError(StrCat("call(): input ", i, " must be a TensorBase or None, but got ", TypeName(item), "."));
        }
      }
    }
  }
  Dict attr_values = PyDict_GET_SIZE(attrs.ptr()) == 0 ? Dict() : ToDict(attrs);
  const ops::OpDef& def = FindCallOp(op);
  std::vector<Tensor> outputs = ops::Call(def, given, attr_values);
  if (returns == Returns::kSingleOrList && outputs.size() == 1) return WrapTensor(std::move(outputs[0]));
  if (returns == Returns::kSingle) {
    if (outputs.size() != 1) {
      throw TypeError(StrCat("call1(): op '", def.name, "' gave ", outputs.size(), " outputs; call1 takes ops of one ",
                             "output (use call)."));
    }
    return WrapTensor(std::move(outputs[0]));
  }
  py::list out(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    PyList_SET_ITEM(out.ptr(), static_cast<Py_ssize_t>(i), WrapTensor(std::move(outputs[i])).release().ptr());
  }
  return out;
}

// The pending C++ exception as the Python error pybind11 would raise.
PyObject* RaiseCurrentException() {
  try {
    throw;
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (...) {
    if (!py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) &&
        !py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators)) {
      PyErr_SetString(PyExc_SystemError, "an exception escaped the exception translators");
    }
  }
  return nullptr;
}

// A METH_FASTCALL function as the PyCFunction a PyMethodDef holds (CPython
// calls it by its flags' signature).
template <typename F>
PyCFunction AsCFunction(F* f) {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

template <Returns kReturns>
PyObject* CallBinding(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  constexpr std::string_view kName = kReturns == Returns::kList     ? "call"
                                     : kReturns == Returns::kSingle ? "call1"
                                                                    : "call_any";
  try {
    constexpr std::array<std::string_view, 3> kNames{"op", "inputs", "attrs"};
    std::array<py::handle, 3> given{};
    if (nargs > 3) throw TypeError(StrCat(kName, "() takes at most 3 arguments (", nargs, " given)"));
    for (Py_ssize_t i = 0; i < nargs; ++i) given.at(static_cast<size_t>(i)) = args[i];
    const Py_ssize_t keywords = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < keywords; ++k) {
      const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k));
      const std::string_view name = key != nullptr ? key : "";
      const auto* at = std::find(kNames.begin(), kNames.end(), name);
      if (at == kNames.end()) throw TypeError(StrCat(kName, "() got an unexpected keyword argument '", name, "'"));
      auto index = static_cast<size_t>(at - kNames.begin());
      if (given.at(index)) throw TypeError(StrCat(kName, "() got multiple values for argument '", name, "'"));
      given.at(index) = args[nargs + k];
    }
    if (!given[0] || !given[1]) throw TypeError(StrCat(kName, "() missing required arguments: 'op' and 'inputs'"));
    py::dict empty;
    return CallOp(given[0], given[1], given[2] ? given[2] : py::handle(empty), kReturns).release().ptr();
  } catch (...) {
    return RaiseCurrentException();
  }
}

// The tensor of a TensorBase, when `object` is exactly one (nullptr otherwise).
const Tensor* ExactTensor(PyObject* object) {
  if (Py_TYPE(object) != TensorBaseInfo()->type) return nullptr;
  auto* instance = reinterpret_cast<py::detail::instance*>(object);
  return static_cast<const Tensor*>(instance->get_value_and_holder().value_ptr());
}

// Note [Host shortcuts] in runtime/eager.h.
// The rows an int or slice index picks on a first axis of `n` rows. False
// for any other index, an int out of range and a slice that does not
// unpack: the general path raises its errors for them.
struct Rows {
  Py_ssize_t start = 0;
  Py_ssize_t step = 1;
  Py_ssize_t count = 0;
  bool drop_axis = false;  // an int index: the axis goes
};

bool FirstAxisRows(PyObject* index, int64_t n, Rows* rows) {
  if (PyLong_CheckExact(index)) {  // not bool (a mask), not NumPy integers
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(index, &overflow);
    if (overflow != 0 || (i == -1 && PyErr_Occurred() != nullptr)) {
      PyErr_Clear();
      return false;
    }
    if (i < -n || i >= n) return false;
    *rows = {.start = static_cast<Py_ssize_t>(i < 0 ? i + n : i), .step = 1, .count = 1, .drop_axis = true};
    return true;
  }
  if (PySlice_Check(index) == 0) return false;
  Py_ssize_t start = 0;
  Py_ssize_t stop = 0;
  Py_ssize_t step = 0;
  if (PySlice_Unpack(index, &start, &stop, &step) < 0) {
    PyErr_Clear();
    return false;
  }
  const Py_ssize_t count = PySlice_AdjustIndices(static_cast<Py_ssize_t>(n), &start, &stop, step);
  *rows = {.start = count == 0 ? 0 : start, .step = count <= 1 ? 1 : step, .count = count, .drop_axis = false};
  return true;
}

// Whether `t` is a written CPU tensor of this process's own memory: no
// pending or failed write, not captured, not shared with the host.
bool PlainHostTensor(const Tensor& t) {
  if (!t.defined() || t.symbolic() || t.device() != DeviceTarget::kCPU || t.impl()->storage->shared_with_host()) {
    return false;
  }
  const std::shared_ptr<Completion> write = t.pending();
  return !write || (write->done() && !write->error());
}

// first_axis(base, index): x[i] or x[a:b] (a step of 1, or one row) as a
// view of the rows; `base` itself for every row; None where the ops must run.
PyObject* FirstAxisBinding(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 2) throw TypeError(StrCat("first_axis() takes 2 arguments (", nargs, " given)"));
    const Tensor* t = ExactTensor(args[0]);
    Rows rows;
    if (t == nullptr || !t->defined() || t->ndim() == 0 || !FirstAxisRows(args[1], t->shape()[0], &rows) ||
        rows.step != 1 || !PlainHostTensor(*t) || !runtime::HostShortcutAllowed(false)) {
      Py_RETURN_NONE;
    }
    if (!rows.drop_axis && rows.start == 0 && rows.count == t->shape()[0]) return Py_NewRef(args[0]);
    return WrapTensor(FirstAxisView(*t, rows.start, rows.start + rows.count, rows.drop_axis)).release().ptr();
  } catch (...) {
    return RaiseCurrentException();
  }
}

// fill_first_axis(base, index, value): x[i] = v or x[a:b:c] = v for a 0-d
// `value` of x's dtype, written in place; True when done, None where the
// ops must run.
PyObject* FillFirstAxisBinding(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 3) throw TypeError(StrCat("fill_first_axis() takes 3 arguments (", nargs, " given)"));
    const Tensor* t = ExactTensor(args[0]);
    const Tensor* v = ExactTensor(args[2]);
    Rows rows;
    if (t == nullptr || v == nullptr || !t->defined() || !v->defined() || t->ndim() == 0 || v->ndim() != 0 ||
        v->dtype() != t->dtype() || !FirstAxisRows(args[1], t->shape()[0], &rows) || !PlainHostTensor(*t) ||
        !PlainHostTensor(*v) || !runtime::HostShortcutAllowed(true)) {
      Py_RETURN_NONE;
    }
    if (rows.count == 0) Py_RETURN_TRUE;  // nothing picked (so the axis has rows below)
    const size_t item = ItemSize(t->dtype());
    const size_t row_bytes = t->nbytes() / static_cast<size_t>(t->shape()[0]);
    if (item == 0 || item > 16 || row_bytes % item != 0) Py_RETURN_NONE;
    std::array<unsigned char, 16> value{};
    std::memcpy(value.data(), v->raw(), item);  // before detaching: `value` may be a view of `base`
    DetachFromViews(*t);  // as an in-place op does; nothing queued uses the storage (the dispatcher is idle)
    auto* data = static_cast<unsigned char*>(t->raw());
    for (Py_ssize_t r = 0; r < rows.count; ++r) {
      if (row_bytes == 0) break;
      unsigned char* row = data + static_cast<size_t>(rows.start + r * rows.step) * row_bytes;
      std::memcpy(row, value.data(), item);
      for (size_t done = item; done < row_bytes;) {  // doubling copies of what is written
        const size_t chunk = std::min(done, row_bytes - done);
        std::memcpy(row + done, row, chunk);
        done += chunk;
      }
    }
    t->impl()->storage->MarkWritten();
    Py_RETURN_TRUE;
  } catch (...) {
    return RaiseCurrentException();
  }
}

// Note [Host shortcuts] in runtime/eager.h.
// The ints of a shape given as a tuple or list of Python ints (with
// `varargs`, the positional arguments of `x.reshape(*shape)`, where one tuple
// or list is the whole shape); false for anything else, which the op's
// attribute conversion takes with its errors.
bool ShapeInts(PyObject* shape, bool varargs, std::vector<int64_t>* out) {
  if (!PyTuple_CheckExact(shape) && !PyList_CheckExact(shape)) return false;
  if (varargs && PySequence_Fast_GET_SIZE(shape) == 1) {
    PyObject* only = PySequence_Fast_GET_ITEM(shape, 0);
    if (PyTuple_CheckExact(only) || PyList_CheckExact(only)) shape = only;
  }
  const Py_ssize_t n = PySequence_Fast_GET_SIZE(shape);
  PyObject** items = PySequence_Fast_ITEMS(shape);
  out->resize(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!PyLong_CheckExact(items[i])) return false;  // not bool, not NumPy integers
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(items[i], &overflow);
    if (overflow != 0 || (v == -1 && PyErr_Occurred() != nullptr)) {
      PyErr_Clear();
      return false;
    }
    (*out)[static_cast<size_t>(i)] = v;
  }
  return true;
}

// view_shape(op, base, shape, varargs): the output of view op `op` (one
// input, one shape attribute: reshape) on `base`, made here as the eager
// executor makes it (Note [Views] in core/views.cc), without converting a
// dict of attributes or selecting a kernel; None where the op must run
// (anything observed, another device, a shape that is not ints, a shape
// the op refuses: the op raises its own error).
PyObject* ViewShapeBinding(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs) {
  try {
    if (nargs != 4) throw TypeError(StrCat("view_shape() takes 4 arguments (", nargs, " given)"));
    const ops::OpDef& def = FindCallOp(args[0]);
    const Tensor* t = ExactTensor(args[1]);
    if (!def.props.view || def.inputs.size() != 1 || def.attrs.size() != 1 ||
        def.attrs[0].type != ops::AttrType::kShape || !def.props.meta_only_inputs.empty() || t == nullptr ||
        !t->defined() || t->symbolic() || t->device() != DeviceTarget::kCPU || t->impl()->storage->shared_with_host() ||
        !runtime::HostShortcutAllowed(false)) {
      Py_RETURN_NONE;
    }
    std::vector<int64_t> ints;
    if (!ShapeInts(args[2], PyObject_IsTrue(args[3]) == 1, &ints)) Py_RETURN_NONE;
    Shape target;
    try {
      Dict storage;
      const Dict& attrs = ops::NormalizedAttrs(def, Dict{{std::string(def.attrs[0].name), IntList(ints)}}, storage);
      std::vector<ops::TensorMeta> metas = def.infer({ops::TensorMeta{t->shape(), t->dtype()}}, attrs);
      if (metas.size() != 1 || metas[0].dtype != t->dtype()) Py_RETURN_NONE;
      CheckShape(metas[0].shape, metas[0].dtype, def.name);
      target = std::move(metas[0].shape);
    } catch (const Error&) {
      Py_RETURN_NONE;  // the op raises it, as from any call
    }
    return WrapTensor(t->Reshaped(target)).release().ptr();
  } catch (...) {
    return RaiseCurrentException();
  }
}

}  // namespace

void BindTensor(py::module_& m) {
  runtime::SetOriginHook(&PythonOrigin);
  runtime::SetStackHook(&PythonStack);

  TensorBaseClass(m, "TensorBase")
      .def(py::init([](const py::array& array, std::optional<std::string> dtype) {
             return FromArray(array, std::move(dtype));
           }),
           py::arg("array"), py::arg("dtype") = py::none())
      .def(py::init<const Tensor&>(), py::arg("other"), "Another handle on the same tensor (shares data).")
      .def_static("from_numpy", &ShareArray, py::arg("array"),
                  "A tensor sharing the array's memory (a copy when it is not C-contiguous, aligned, writeable "
                  "and in native byte order).")
      .def_property_readonly(
          "_host_shared", [](const Tensor& t) { return t.impl()->storage->shared_with_host(); },
          "Whether Python may touch this tensor's memory between ops (from_numpy, or a live asnumpy() array).")
      .def_property_readonly(
          "_foreign", [](const Tensor& t) { return t.impl()->storage->foreign(); },
          "Whether the memory is another owner's (from_numpy), not the memory pool's.")
      .def_property_readonly("shape",
                             [](const Tensor& t) {
                               py::tuple out(t.ndim());
                               for (int i = 0; i < t.ndim(); ++i) out[i] = t.shape()[i];
                               return out;
                             })
      .def_property_readonly("dtype_name", [](const Tensor& t) { return std::string(DTypeAttrName(t.dtype())); })
      .def_property_readonly("ndim", &Tensor::ndim)
      .def_property_readonly("symbolic", &Tensor::symbolic, "Whether this is a value being captured into a graph.")
      .def_property_readonly("size", &Tensor::numel)
      .def_property_readonly("nbytes", &Tensor::nbytes)
      .def_property(
          "requires_grad", [](const Tensor& t) { return t.impl()->requires_grad; },
          [](const Tensor& t, bool v) { t.impl()->requires_grad = v; })
      .def_property(
          "param_name", [](const Tensor& t) { return t.impl()->name; },
          [](const Tensor& t, const std::string& v) { t.impl()->name = v; })
      .def("asnumpy", &ToArray, "The data as a NumPy array sharing memory (waits for pending ops).")
      .def("_sync",
           [](const Tensor& t) {
             py::gil_scoped_release release;
             t.Sync();
           })
      .def("_same", &Tensor::same)
      .def_property_readonly(
          "_data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw()); },
          "The address of the first element (no waiting): views share it (Note [Views] in src/core/tensor.cc).")
      .def("_reshaped", &Tensor::Reshaped)
      .def("_describe", &Tensor::Describe);

  // Note [The op call binding]: plain CPython functions (no generic
  // argument conversion), as every Python op call comes through them; the
  // host shortcuts (Note [Host shortcuts] in runtime/eager.h) make x[i],
  // x[a:b], x[i] = v and x.reshape(...) without ops.
  static PyMethodDef fast_defs[] = {
      {"call", AsCFunction(&CallBinding<Returns::kList>), METH_FASTCALL | METH_KEYWORDS,
       "call(op, inputs, attrs={})\n--\n\nCalls an op by name on a list of TensorBase (None: an optional input "
       "left out); returns the list of its outputs."},
      {"call1", AsCFunction(&CallBinding<Returns::kSingle>), METH_FASTCALL | METH_KEYWORDS,
       "call1(op, inputs, attrs={})\n--\n\nAs call, for an op of one output: returns that output itself "
       "(TypeError for an op of several)."},
      {"call_any", AsCFunction(&CallBinding<Returns::kSingleOrList>), METH_FASTCALL | METH_KEYWORDS,
       "call_any(op, inputs, attrs={})\n--\n\nAs call, but an op of one output returns that output itself (a "
       "TensorBase) and an op of several the list of them."},
      {"first_axis", AsCFunction(&FirstAxisBinding), METH_FASTCALL,
       "first_axis(base, index)\n--\n\nbase[index] for an int or a slice of step 1 on the first axis, as a view "
       "of the rows (base itself for all of them); None where the indexing ops must run."},
      {"fill_first_axis", AsCFunction(&FillFirstAxisBinding), METH_FASTCALL,
       "fill_first_axis(base, index, value)\n--\n\nbase[index] = value in place, for an int or slice index on "
       "the first axis and a 0-d value of base's dtype; True when written, None where the ops must run."},
      {"view_shape", AsCFunction(&ViewShapeBinding), METH_FASTCALL,
       "view_shape(op, base, shape, varargs)\n--\n\nThe output of view op `op` (one input, one shape attribute) "
       "on `base` for a shape of Python ints, made without the op call; None where the op must run."},
  };
  for (PyMethodDef& def : fast_defs) {
    m.attr(def.ml_name) = py::reinterpret_steal<py::object>(PyCFunction_NewEx(&def, nullptr, m.attr("__name__").ptr()));
  }
  m.def(
      "_testing_release_on_thread",
      [](Tensor& handle) {
        Tensor held = std::move(handle);  // the handle is left undefined: drop it
        py::gil_scoped_release release;
        std::thread([dropped = std::move(held)]() mutable { dropped = Tensor(); }).join();
      },
      py::arg("handle"),
      "Test suites only: moves the tensor out of `handle` and drops that reference on a new C++ thread.");
  m.def("scalar", [](double value, const std::string& dtype) {
    auto d = ParseDType(dtype);
    if (!d) throw TypeError(StrCat("unknown dtype '", dtype, "'"));
    return Tensor::Scalar(value, *d);
  });
  m.def("synchronize", [] {
    py::gil_scoped_release release;
    runtime::Synchronize();
  });
  m.def("op_names", [] {
    std::vector<std::string> out;
    for (const ops::OpDef* op : ops::AllOps()) out.emplace_back(op->name);
    return out;
  });
  m.def("op_info", [](const std::string& name) {
    const ops::OpDef& op = ops::GetOp(name);
    py::dict d;
    d["name"] = std::string(op.name);
    std::vector<std::string> inputs(op.inputs.begin(), op.inputs.end());
    d["inputs"] = inputs;
    py::dict attrs;
    for (const auto& a : op.attrs) attrs[py::str(std::string(a.name))] = FromValue(a.default_value);
    d["attrs"] = attrs;
    d["differentiable"] = static_cast<bool>(op.grad);
    d["composite"] = static_cast<bool>(op.composite);
    d["elementwise"] = op.props.elementwise;
    d["inplace"] = op.props.inplace;
    d["side_effect"] = op.props.side_effect;
    d["view"] = op.props.view;
    d["waits_for_inputs_only"] = op.props.waits_for_inputs_only;
    std::vector<std::string> kernels;
    for (const auto* k : kernels::KernelsOf(name)) {
      kernels.push_back(StrCat(DeviceTargetName(k->device), ":", k->impl));
    }
    d["kernels"] = kernels;
    d["doc"] = std::string(op.doc);
    return d;
  });

  m.def(
      "op_api",
      [] {
        // Every op's Python forms (ApiForm), for msrt.ops._api to bind.
        py::list out;
        for (const ops::OpDef* op : ops::AllOps()) {
          for (const ops::ParsedForm& form : ops::ApiForms(*op)) {
            auto params = [](const std::vector<ops::ApiParam>& list) {
              py::list ps;
              for (const ops::ApiParam& p : list) {
                py::dict d;
                d["name"] = p.name;
                d["target"] = p.target;
                d["binds"] = std::string(ops::BindsName(p.binds));
                d["required"] = !p.default_value.has_value();
                d["default"] = p.default_value ? FromValue(*p.default_value) : py::none();
                d["keyword_only"] = p.keyword_only;
                d["varargs"] = p.varargs;
                ps.append(d);
              }
              return ps;
            };
            py::dict f;
            f["op"] = std::string(op->name);
            f["kind"] = std::string(ops::ApiKindName(form.kind));
            f["names"] = form.names;
            f["module"] = form.module;
            f["init"] = params(form.init);
            f["params"] = params(form.params);
            f["returns"] = form.returns;
            f["doc"] = std::string(op->doc);
            f["promotes_scalars"] = op->props.elementwise || op->props.promotes_scalars;
            f["tuple"] = op->props.tuple_outputs;
            out.append(f);
          }
        }
        return out;
      },
      "The Python forms (functions, Tensor methods, Primitive classes) every op declares.");
  m.def(
      "op_attr_types",
      [](const std::string& name) {
        py::dict out;
        for (const ops::AttrSpec& a : ops::GetOp(name).attrs) {
          out[py::str(std::string(a.name))] = std::string(ops::AttrTypeName(a.type));
        }
        return out;
      },
      py::arg("op"), "Each attribute's AttrType, by name.");
  m.def(
      "check_attrs",
      [](const std::string& name, const py::dict& attrs) {
        return FromValue(Value(ops::CheckAttrs(ops::GetOp(name), ToDict(attrs))));
      },
      py::arg("op"), py::arg("attrs"), "Parses and checks the given attributes of `op` (a Primitive's constructor).");

  m.def("_is_recording", &autodiff::IsRecording, "Whether a gradient tape records on this thread.");
  m.def("_is_tracked", &autodiff::IsTracked, py::arg("tensor"),
        "Whether the recording tape of this thread tracks `tensor` (gradients flow to it).");
  m.def(
      "_set_custom_grad_handler",
      [](py::object handler) {
        if (g_custom_grad_handler == nullptr) {
          g_custom_grad_handler = new py::object(std::move(handler));
        } else {
          *g_custom_grad_handler = std::move(handler);
        }
      },
      "Installs handler(id, dys) -> gradients, called for nodes recorded by _record_custom.");
  m.def(
      "_record_custom",
      [](const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs, int64_t id) {
        if (!autodiff::IsRecording()) return false;
        autodiff::RecordCall(kCustomBpropOp, Dict{{"id", Value(id)}}, inputs, outputs);
        return true;
      },
      py::arg("inputs"), py::arg("outputs"), py::arg("id"),
      "Records a node whose gradient calls the custom gradient handler with `id` (see Note [Custom gradients from "
      "Python]); False when no tape records.");

  py::class_<autodiff::GradTape>(m, "GradTape")
      .def(py::init<>())
      .def("gradient", &autodiff::GradTape::Gradient, py::arg("outputs"), py::arg("sens"), py::arg("wrt"),
           py::arg("create_graph") = false, py::arg("retain_graph") = false,
           "Gradients of sum(sens * outputs) with respect to wrt. Unless retain_graph (or create_graph), the "
           "tape frees its saved values on the way and a second gradient on it raises RuntimeError.")
      .def("end", &autodiff::GradTape::End);

  py::class_<CallTrace>(m, "CallTrace",
                        "Records the op calls (name, parsed attributes) made between start() and stop(), "
                        "composites and the calls inside them included, outer call first.")
      .def(py::init<>())
      .def("start", &CallTrace::Start, "Clears the record and starts recording.")
      .def("stop", &CallTrace::Stop)
      .def("calls", &CallTrace::Calls, "The recorded calls: a list of (op name, attributes).");
}

}  // namespace msrt::python
