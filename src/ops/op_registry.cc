#include "ops/op_registry.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/strings.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

// Ops register during static initialisation, from many files; a function
// local map is constructed before the first of them runs.
std::map<std::string, OpDef, std::less<>>& Registry() {
  static auto* registry = new std::map<std::string, OpDef, std::less<>>();
  return *registry;
}

// Every registered op by name, for FindOp: composites look ops up by name on
// every call. Keys view the registry's own (map nodes do not move); filled
// with the registry, read without a lock as the registry is.
std::unordered_map<std::string_view, const OpDef*>& ByName() {
  static auto* index = new std::unordered_map<std::string_view, const OpDef*>();
  return *index;
}

// Note [Default attributes]
// Most calls give an op no attribute, and normalizing none gives the same
// attributes every time (the declared defaults, which attrs_check accepts or
// not the same way each time). Each registered op has a slot for them,
// filled at its first such call and kept for the process; the table of
// slots is filled with the registry.
struct DefaultsSlot {
  std::atomic<const Dict*> attrs{nullptr};
};
std::unordered_map<const OpDef*, std::unique_ptr<DefaultsSlot>>& Defaults() {
  static auto* slots = new std::unordered_map<const OpDef*, std::unique_ptr<DefaultsSlot>>();
  return *slots;
}

}  // namespace

bool IsOptionalInput(const OpDef& op, size_t i) { return i < op.inputs.size() && op.inputs[i].ends_with("?"); }

bool RegisterOp(OpDef def) {
  MSRT_INTERNAL_ASSERT(def.infer || def.composite, "op ", def.name, " needs infer or composite");
  for (size_t i = 0; i < def.inputs.size(); ++i) {
    MSRT_INTERNAL_ASSERT(!IsOptionalInput(def, i) || def.composite, "op ", def.name,
                         ": only composite ops take optional inputs (Note [Optional inputs])");
  }
  std::string name(def.name);
  auto [it, inserted] = Registry().emplace(name, std::move(def));
  MSRT_INTERNAL_ASSERT(inserted, "op ", name, " registered twice");
  ByName().emplace(std::string_view(it->first), &it->second);
  Defaults().emplace(&it->second, std::make_unique<DefaultsSlot>());
  return true;
}

const OpDef* FindOp(std::string_view name) {
  auto it = ByName().find(name);
  return it == ByName().end() ? nullptr : it->second;
}

const Dict& NormalizedAttrs(const OpDef& op, const Dict& given, Dict& storage) {
  if (given.empty()) {
    static const Dict kNone;
    if (op.attrs.empty() && !op.attrs_check) return kNone;  // no attribute to fill in or check
    auto slot = Defaults().find(&op);
    if (slot != Defaults().end()) {
      if (const Dict* kept = slot->second->attrs.load(std::memory_order_acquire)) return *kept;
      auto made = std::make_unique<const Dict>(NormalizeAttrs(op, given));  // raises as every call would
      const Dict* expected = nullptr;
      if (slot->second->attrs.compare_exchange_strong(expected, made.get(), std::memory_order_acq_rel)) {
        return *made.release();  // kept for the process
      }
      return *expected;  // another thread's, the same
    }
  }
  storage = NormalizeAttrs(op, given);
  return storage;
}

const OpDef& GetOp(std::string_view name) {
  if (const OpDef* op = FindOp(name)) return *op;
  std::string message = StrCat("There is no op named '", name, "'.");
  std::vector<std::pair<size_t, std::string_view>> close;
  for (const auto& [other, def] : Registry()) {
    size_t d = EditDistance(name, other);
    if (d <= std::max<size_t>(2, name.size() / 3)) close.emplace_back(d, other);
  }
  std::sort(close.begin(), close.end());
  if (!close.empty()) message += StrCat(" Did you mean '", close.front().second, "'?");
  throw ValueError(message);
}

std::vector<const OpDef*> AllOps() {
  std::vector<const OpDef*> out;
  for (const auto& [name, def] : Registry()) out.push_back(&def);
  return out;
}

Dict NormalizeAttrs(const OpDef& op, const Dict& given) {
  Dict out;
  out.Reserve(op.attrs.size());
  for (const AttrSpec& spec : op.attrs) {
    const Value* v = given.Find(spec.name);
    if (v != nullptr) {
      out.Set(std::string(spec.name), ParseAttr(op.name, spec, *v));
    } else if (spec.default_value.is_none() && !spec.optional) {
      OpError(ErrorKind::kType, op.name, StrCat("missing the required attribute '", spec.name, "'"));
    } else {
      out.Set(std::string(spec.name), spec.default_value);
    }
  }
  for (const auto& [name, value] : given) {
    bool known = std::any_of(op.attrs.begin(), op.attrs.end(), [&n = name](const AttrSpec& s) { return s.name == n; });
    if (!known) OpError(ErrorKind::kType, op.name, StrCat("got an unknown attribute '", name, "'"));
  }
  if (op.attrs_check) op.attrs_check(op.name, out);
  return out;
}

Dict CheckAttrs(const OpDef& op, const Dict& given) {
  Dict out;
  for (const auto& [name, value] : given) {
    auto spec = std::find_if(op.attrs.begin(), op.attrs.end(), [&n = name](const AttrSpec& s) { return s.name == n; });
    if (spec == op.attrs.end()) OpError(ErrorKind::kType, op.name, StrCat("got an unknown attribute '", name, "'"));
    out.Set(name, ParseAttr(op.name, *spec, value));
  }
  if (op.attrs_check) op.attrs_check(op.name, out);
  return out;
}

const Value& Attr(const Dict& attrs, std::string_view name) {
  const Value* v = attrs.Find(name);
  MSRT_INTERNAL_ASSERT(v != nullptr, "attribute ", name, " missing after normalization");
  return *v;
}

int64_t AttrInt(const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  MSRT_CHECK_TYPE(v.is_int_like(), "attribute '", name, "' must be int, but got ", v.type_name(), ".");
  return v.as_int();
}

double AttrFloat(const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  MSRT_CHECK_TYPE(v.is_float() || v.is_int_like(), "attribute '", name, "' must be float, but got ", v.type_name(),
                  ".");
  return v.as_float();
}

bool AttrBool(const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  MSRT_CHECK_TYPE(v.is_bool(), "attribute '", name, "' must be bool, but got ", v.type_name(), ".");
  return v.as_bool();
}

std::string AttrString(const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  MSRT_CHECK_TYPE(v.is_string(), "attribute '", name, "' must be str, but got ", v.type_name(), ".");
  return v.as_string();
}

std::vector<int64_t> AttrInts(const Dict& attrs, std::string_view name) {
  const Value& v = Attr(attrs, name);
  if (v.is_int_like()) return {v.as_int()};
  MSRT_CHECK_TYPE(v.is_sequence(), "attribute '", name, "' must be an int or a sequence of ints, but got ",
                  v.type_name(), ".");
  std::vector<int64_t> out;
  for (const Value& item : v.as_list()) {
    MSRT_CHECK_TYPE(item.is_int_like(), "attribute '", name, "' must hold ints, but got ", item.repr(), ".");
    out.push_back(item.as_int());
  }
  return out;
}

void OpError(ErrorKind kind, std::string_view op, std::string_view message) {
  ThrowError(kind, StrCat("[", op, "] ", message, "."));
}

Shape BroadcastShapes(std::string_view op, const Shape& a, const Shape& b) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1) {
      OpError(ErrorKind::kValue, op,
              StrCat("shapes ", ShapeRepr(a), " and ", ShapeRepr(b), " can not be broadcast together"));
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t NormalizeAxis(std::string_view op, int64_t axis, int64_t ndim) {
  int64_t lo = ndim == 0 ? -1 : -ndim;
  int64_t hi = ndim == 0 ? 0 : ndim - 1;
  if (axis < lo || axis > hi) {
    OpError(ErrorKind::kValue, op,
            StrCat("axis ", axis, " is out of range for a tensor of rank ", ndim, "; expected it in [", lo, ", ", hi,
                   "]"));
  }
  return axis < 0 ? axis + std::max<int64_t>(ndim, 1) : axis;
}

}  // namespace msrt::ops
