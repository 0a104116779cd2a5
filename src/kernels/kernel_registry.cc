// Note [Reduced precision]
// Some kernels exist only for some float dtypes: the CPU convolution, matmul,
// pooling and batch-norm kernels take float32 and float64, and bfloat16 only
// where oneDNN computes it (AVX-512 cores); nothing takes float16. When no
// kernel takes an op's floating dtype, SelectKernelOrConvert looks for one
// that takes a substitute, nearest first: half types go to float32 (then
// float64), float64 to float32, float32 to float64. The chosen kernel is
// wrapped by a converting kernel ("<impl> via float32") that casts the inputs
// of the missing dtype, runs, and casts the outputs of that dtype back (in
// place for inputs the op writes). enable_reduce_precision decides whether
// that is allowed; it is read when a kernel is chosen, i.e. per eager call and
// when a graph is built (the key recompiles graphs).
#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "context/options.h"
#include "kernels/kernel.h"
#include "msrt/context/context.h"
#include "msrt/core/logging.h"

namespace msrt::kernels {
namespace {

std::map<std::string, std::vector<KernelDef>, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, std::vector<KernelDef>, std::less<>>();
  return *registry;
}

}  // namespace

bool RegisterKernel(KernelDef def) {
  MSRT_INTERNAL_ASSERT(def.run != nullptr, "kernel for ", def.op, " has no function");
  auto& list = Registry()[std::string(def.op)];
  list.push_back(def);
  std::stable_sort(list.begin(), list.end(),
                   [](const KernelDef& a, const KernelDef& b) { return a.priority > b.priority; });
  return true;
}

namespace {

// Note [Kernel list cache]
// Every eager call selects a kernel, by the op's name. Each thread keeps the
// lists it looked up by the address of the name's characters (op names are
// the OpDefs' own, living as long as the process), checking the name itself
// on a hit, since a name built at run time may reuse an address. Kernels
// register at start-up; the map's lists stay where they are.
const std::vector<KernelDef>* KernelList(std::string_view op) {
  thread_local std::unordered_map<const char*, const std::vector<KernelDef>*> cache;
  if (auto hit = cache.find(op.data()); hit != cache.end() && hit->second->front().op == op) return hit->second;
  auto it = Registry().find(op);
  if (it == Registry().end()) return nullptr;
  constexpr size_t kMaxNames = 4096;
  if (cache.size() >= kMaxNames) cache.clear();
  cache[op.data()] = &it->second;
  return &it->second;
}

}  // namespace

const KernelDef* SelectKernel(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                              const Dict& attrs) {
  const std::vector<KernelDef>* list = KernelList(op);
  if (list == nullptr) return nullptr;
  for (const KernelDef& k : *list) {
    if (k.device == device && (k.supports == nullptr || k.supports(inputs, attrs))) return &k;
  }
  return nullptr;
}

namespace {

// The dtypes tried instead of `dtype`, nearest first.
std::vector<DType> Substitutes(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: return {DType::kFloat32, DType::kFloat64};
    case DType::kFloat32: return {DType::kFloat64};
    case DType::kFloat64: return {DType::kFloat32};
    default: return {};
  }
}

// The dtype being substituted: the first floating input's.
std::optional<DType> FloatingDType(const std::vector<ops::TensorMeta>& inputs) {
  for (const ops::TensorMeta& m : inputs) {
    if (IsFloating(m.dtype)) return m.dtype;
  }
  return std::nullopt;
}

std::vector<ops::TensorMeta> Converted(std::vector<ops::TensorMeta> metas, DType from, DType to) {
  for (ops::TensorMeta& m : metas) {
    if (m.dtype == from) m.dtype = to;
  }
  return metas;
}

struct Substitution {
  const KernelDef* kernel = nullptr;
  DType from = DType::kFloat32, to = DType::kFloat32;
};

Substitution FindSubstitute(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                            const Dict& attrs) {
  std::optional<DType> from = FloatingDType(inputs);
  if (!from) return {};
  for (DType to : Substitutes(*from)) {
    if (const KernelDef* k = SelectKernel(op, device, Converted(inputs, *from, to), attrs)) return {k, *from, to};
  }
  return {};
}

Tensor CastTo(const Tensor& t, DType dtype) {
  static const ops::OpDef& cast = ops::GetOp("cast");
  Dict attrs{{"dtype", Value(std::string(DTypeAttrName(dtype)))}};
  const KernelDef* kernel = SelectKernel("cast", t.device(), {ops::TensorMeta{t.shape(), t.dtype()}}, attrs);
  MSRT_INTERNAL_ASSERT(kernel != nullptr, "no cast kernel on ", DeviceTargetName(t.device()));
  std::vector<Tensor> in{t};
  std::vector<Tensor> out{Tensor::Empty(t.shape(), dtype, t.device())};
  KernelArgs args{cast, in, out, attrs};
  kernel->run(args);
  return out[0];
}

void CastInto(const Tensor& src, const Tensor& dst) {
  static const ops::OpDef& cast = ops::GetOp("cast");
  Dict attrs{{"dtype", Value(std::string(DTypeAttrName(dst.dtype())))}};
  const KernelDef* kernel = SelectKernel("cast", src.device(), {ops::TensorMeta{src.shape(), src.dtype()}}, attrs);
  MSRT_INTERNAL_ASSERT(kernel != nullptr, "no cast kernel on ", DeviceTargetName(src.device()));
  std::vector<Tensor> in{src};
  std::vector<Tensor> out{dst};
  KernelArgs args{cast, in, out, attrs};
  kernel->run(args);
}

// The converting kernel's body: finds the substitute again (a pure function
// of the inputs) and runs it on converted copies.
void RunConverted(KernelArgs& args) {
  std::vector<ops::TensorMeta> metas;
  for (const Tensor& t : args.inputs) metas.push_back({t.shape(), t.dtype()});
  Substitution sub = FindSubstitute(args.op.name, args.inputs.at(0).device(), metas, args.attrs);
  MSRT_INTERNAL_ASSERT(sub.kernel != nullptr, "converting kernel of ", args.op.name, " lost its substitute");
  std::vector<Tensor> inputs;
  inputs.reserve(args.inputs.size());
  for (const Tensor& t : args.inputs) inputs.push_back(t.dtype() == sub.from ? CastTo(t, sub.to) : t);
  std::vector<Tensor> outputs;
  outputs.reserve(args.outputs.size());
  for (size_t k = 0; k < args.outputs.size(); ++k) {
    const Tensor& o = args.outputs[k];
    if (k == 0 && args.op.props.inplace) {
      outputs.push_back(inputs.at(0));
    } else {
      outputs.push_back(o.dtype() == sub.from ? Tensor::Empty(o.shape(), sub.to, o.device()) : o);
    }
  }
  KernelArgs inner{args.op, inputs, outputs, args.attrs, args.plan};
  sub.kernel->run(inner);
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].same(args.outputs[k])) CastInto(outputs[k], args.outputs[k]);
  }
  for (int i : args.op.props.writes_inputs) {
    auto idx = static_cast<size_t>(i);
    if (!inputs.at(idx).same(args.inputs[idx]) && !(args.op.props.inplace && idx == 0)) {
      CastInto(inputs[idx], args.inputs[idx]);
    }
  }
}

// Converting kernels live as long as the process (executors keep pointers).
struct ConvertingKernels {
  std::mutex mutex;
  std::deque<std::string> names;
  std::deque<KernelDef> kernels;
  std::map<std::tuple<const KernelDef*, DType, DType>, const KernelDef*> index;
  std::set<std::tuple<std::string, DType, DType, DeviceTarget>> warned;
};

ConvertingKernels& Converting() {
  static auto* c = new ConvertingKernels();
  return *c;
}

const bool kConsumerDeclared = [] {
  context::Global().DeclareConsumer(context::runtime_options::EnableReducePrecision(),
                                    "kernel selection (dtype substitution)");
  return true;
}();

}  // namespace

const KernelDef* SelectKernelOrConvert(std::string_view op, DeviceTarget device,
                                       const std::vector<ops::TensorMeta>& inputs, const Dict& attrs) {
  if (const KernelDef* k = SelectKernel(op, device, inputs, attrs)) return k;
  Substitution sub = FindSubstitute(op, device, inputs, attrs);
  if (sub.kernel == nullptr) return nullptr;
  if (!context::runtime_options::EnableReducePrecision().Get()) {
    throw TypeError(StrCat("[", op, "] has no ", DeviceTargetName(device), " kernel for dtype ", DTypeName(sub.from),
                           " and enable_reduce_precision is False; a ", DTypeName(sub.to),
                           " kernel exists. Set enable_reduce_precision=True to compute in ", DTypeName(sub.to),
                           ", or cast the inputs."));
  }
  ConvertingKernels& c = Converting();
  std::lock_guard lock(c.mutex);
  if (c.warned.emplace(std::string(op), sub.from, sub.to, device).second) {
    Warn(WarningKind::kGeneral,
         StrCat("[", op, "] has no ", DeviceTargetName(device), " kernel for dtype ", DTypeName(sub.from),
                "; computing in ", DTypeName(sub.to), " and converting back (enable_reduce_precision=True)."));
  }
  auto key = std::make_tuple(sub.kernel, sub.from, sub.to);
  if (auto it = c.index.find(key); it != c.index.end()) return it->second;
  c.names.push_back(StrCat(sub.kernel->impl, " via ", DTypeAttrName(sub.to)));
  c.kernels.push_back(KernelDef{.op = sub.kernel->op,
                                .device = device,
                                .impl = c.names.back(),
                                .priority = sub.kernel->priority,
                                .supports = nullptr,
                                .run = &RunConverted});
  return c.index[key] = &c.kernels.back();
}

bool HasKernelOrSubstitute(std::string_view op, DeviceTarget device, const std::vector<ops::TensorMeta>& inputs,
                           const Dict& attrs) {
  if (SelectKernel(op, device, inputs, attrs) != nullptr) return true;
  return FindSubstitute(op, device, inputs, attrs).kernel != nullptr &&
         context::runtime_options::EnableReducePrecision().Get();
}

std::vector<const KernelDef*> KernelsOf(std::string_view op) {
  std::vector<const KernelDef*> out;
  auto it = Registry().find(op);
  if (it != Registry().end()) {
    for (const KernelDef& k : it->second) out.push_back(&k);
  }
  return out;
}

std::vector<std::string> OpsWithKernelsOn(DeviceTarget device) {
  std::vector<std::string> out;
  for (const auto& [op, kernels] : Registry()) {
    if (std::any_of(kernels.begin(), kernels.end(), [&](const KernelDef& k) { return k.device == device; })) {
      out.push_back(op);
    }
  }
  return out;
}

}  // namespace msrt::kernels
