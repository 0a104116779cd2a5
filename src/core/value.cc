#include "msrt/core/value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "msrt/core/errors.h"

namespace msrt {

struct Value::Payload {
  std::string text;  // kString; the type name for kObject
  std::string repr;  // kObject
  List list;
  Dict dict;
};

std::string_view KindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone: return "NoneType";
    case ValueKind::kBool: return "bool";
    case ValueKind::kInt: return "int";
    case ValueKind::kFloat: return "float";
    case ValueKind::kString: return "str";
    case ValueKind::kList: return "list";
    case ValueKind::kTuple: return "tuple";
    case ValueKind::kDict: return "dict";
    case ValueKind::kObject: return "object";
  }
  return "object";
}

Value::Value(const char* s) : Value(std::string(s)) {}
Value::Value(std::string_view s) : Value(std::string(s)) {}
Value::Value(std::string s) : kind_(ValueKind::kString) {
  auto p = std::make_shared<Payload>();
  p->text = std::move(s);
  payload_ = std::move(p);
}
Value::Value(List items) : kind_(ValueKind::kList) {
  auto p = std::make_shared<Payload>();
  p->list = std::move(items);
  payload_ = std::move(p);
}
Value::Value(Dict items) : kind_(ValueKind::kDict) {
  auto p = std::make_shared<Payload>();
  p->dict = std::move(items);
  payload_ = std::move(p);
}
Value Value::Tuple(List items) {
  Value v(std::move(items));
  v.kind_ = ValueKind::kTuple;
  return v;
}
Value Value::Object(std::string type_name, std::string repr) {
  Value v;
  v.kind_ = ValueKind::kObject;
  auto p = std::make_shared<Payload>();
  p->text = std::move(type_name);
  p->repr = std::move(repr);
  v.payload_ = std::move(p);
  return v;
}

namespace {
[[noreturn]] void WrongKind(const char* wanted, const Value& v) {
  MSRT_INTERNAL_ASSERT(false, "expected a ", wanted, " value, found ", v.type_name());
  std::abort();
}
}  // namespace

bool Value::as_bool() const {
  if (!is_int_like()) WrongKind("bool", *this);
  return int_ != 0;
}
int64_t Value::as_int() const {
  if (!is_int_like()) WrongKind("int", *this);
  return int_;
}
double Value::as_float() const {
  if (is_float()) return float_;
  if (!is_int_like()) WrongKind("float", *this);
  return static_cast<double>(int_);
}
const std::string& Value::as_string() const {
  if (!is_string()) WrongKind("str", *this);
  return payload_->text;
}
const List& Value::as_list() const {
  if (!is_sequence()) WrongKind("list", *this);
  return payload_->list;
}
const Dict& Value::as_dict() const {
  if (!is_dict()) WrongKind("dict", *this);
  return payload_->dict;
}

std::string Value::type_name() const {
  if (kind_ == ValueKind::kObject) return payload_->text;
  return std::string(KindName(kind_));
}

namespace {

std::string QuoteString(const std::string& s) {
  // Python prefers single quotes unless the text holds one and no double.
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == static_cast<unsigned char>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += quote;
  return out;
}

std::string FloatRepr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest text that reads back to the same double, as Python prints.
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string out = buf;
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";
  return out;
}

}  // namespace

std::string Value::repr() const {
  switch (kind_) {
    case ValueKind::kNone: return "None";
    case ValueKind::kBool: return int_ ? "True" : "False";
    case ValueKind::kInt: return std::to_string(int_);
    case ValueKind::kFloat: return FloatRepr(float_);
    case ValueKind::kString: return QuoteString(payload_->text);
    case ValueKind::kObject: return payload_->repr;
    case ValueKind::kList:
    case ValueKind::kTuple: {
      bool tuple = kind_ == ValueKind::kTuple;
      std::string out = tuple ? "(" : "[";
      const List& items = payload_->list;
      for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        out += items[i].repr();
      }
      if (tuple && items.size() == 1) out += ",";
      return out + (tuple ? ")" : "]");
    }
    case ValueKind::kDict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, value] : payload_->dict) {
        if (!first) out += ", ";
        first = false;
        out += QuoteString(key) + ": " + value.repr();
      }
      return out + "}";
    }
  }
  return "?";
}

std::string Value::str() const { return is_string() ? payload_->text : repr(); }

bool Value::operator==(const Value& other) const {
  if (kind_ != other.kind_) return false;
  switch (kind_) {
    case ValueKind::kNone: return true;
    case ValueKind::kBool:
    case ValueKind::kInt: return int_ == other.int_;
    case ValueKind::kFloat: return float_ == other.float_;
    case ValueKind::kString: return payload_->text == other.payload_->text;
    case ValueKind::kObject: return payload_->text == other.payload_->text && payload_->repr == other.payload_->repr;
    case ValueKind::kList:
    case ValueKind::kTuple: return payload_->list == other.payload_->list;
    case ValueKind::kDict: return payload_->dict == other.payload_->dict;
  }
  return false;
}

namespace {
// FNV-1a, 64 bit: stable across runs, platforms and processes.
constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;
uint64_t Mix(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= kFnvPrime;
  }
  return h;
}
uint64_t MixString(uint64_t h, const std::string& s) {
  uint64_t n = s.size();
  h = Mix(h, &n, sizeof(n));
  return Mix(h, s.data(), s.size());
}
}  // namespace

uint64_t Value::StableHash() const {
  uint64_t h = kFnvOffset;
  auto kind = static_cast<uint8_t>(kind_);
  h = Mix(h, &kind, 1);
  switch (kind_) {
    case ValueKind::kNone: break;
    case ValueKind::kBool:
    case ValueKind::kInt: h = Mix(h, &int_, sizeof(int_)); break;
    case ValueKind::kFloat: h = Mix(h, &float_, sizeof(float_)); break;
    case ValueKind::kString: h = MixString(h, payload_->text); break;
    case ValueKind::kObject:
      h = MixString(h, payload_->text);
      h = MixString(h, payload_->repr);
      break;
    case ValueKind::kList:
    case ValueKind::kTuple:
      for (const Value& item : payload_->list) {
        uint64_t sub = item.StableHash();
        h = Mix(h, &sub, sizeof(sub));
      }
      break;
    case ValueKind::kDict: {
      // Order-independent, matching operator==.
      uint64_t sum = 0;
      for (const auto& [key, value] : payload_->dict) {
        uint64_t sub = value.StableHash();
        sum += Mix(MixString(kFnvOffset, key), &sub, sizeof(sub));
      }
      h = Mix(h, &sum, sizeof(sum));
      break;
    }
  }
  return h;
}

Dict::Dict(std::initializer_list<Item> items) {
  for (const Item& item : items) Set(item.first, item.second);
}

const Value* Dict::Find(std::string_view key) const {
  for (const Item& item : items_) {
    if (item.first == key) return &item.second;
  }
  return nullptr;
}

void Dict::Set(std::string key, Value value) {
  for (Item& item : items_) {
    if (item.first == key) {
      item.second = std::move(value);
      return;
    }
  }
  items_.emplace_back(std::move(key), std::move(value));
}

bool Dict::Erase(std::string_view key) {
  for (auto it = items_.begin(); it != items_.end(); ++it) {
    if (it->first == key) {
      items_.erase(it);
      return true;
    }
  }
  return false;
}

bool Dict::operator==(const Dict& other) const {
  if (size() != other.size()) return false;
  for (const Item& item : items_) {
    const Value* v = other.Find(item.first);
    if (v == nullptr || *v != item.second) return false;
  }
  return true;
}

Value IntList(const std::vector<int64_t>& values) {
  List items;
  items.reserve(values.size());
  for (int64_t v : values) items.emplace_back(v);
  return Value(std::move(items));
}

}  // namespace msrt
