// A dynamically typed, immutable value: what context keys take and return.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace msrt {

class Value;
class Dict;
using List = std::vector<Value>;

/// The kinds a Value can hold. They mirror the Python types a context key
/// accepts; `kObject` stands for any other Python object (kept by type name so
/// that errors can say what was given).
enum class ValueKind { kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict, kObject };

/// Python-style name of a kind ("int", "str", "NoneType", ...).
std::string_view KindName(ValueKind kind);

/// An immutable value. Heap kinds share their payload, so copies are cheap.
class Value {
 public:
  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(ValueKind::kBool), int_(b ? 1 : 0) {}
  Value(int i) : kind_(ValueKind::kInt), int_(i) {}
  Value(int64_t i) : kind_(ValueKind::kInt), int_(i) {}
  Value(double d) : kind_(ValueKind::kFloat), float_(d) {}
  Value(const char* s);
  Value(std::string_view s);
  Value(std::string s);
  Value(List items);
  Value(Dict items);
  /// A tuple: like a list, but Python code gave it as a tuple.
  static Value Tuple(List items);
  /// An object of another Python type, known by its type name and repr.
  static Value Object(std::string type_name, std::string repr);

  ValueKind kind() const { return kind_; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_bool() const { return kind_ == ValueKind::kBool; }
  /// Strictly an int (a bool is not an int here; see `is_int_like`).
  bool is_int() const { return kind_ == ValueKind::kInt; }
  /// An int or a bool, as Python's isinstance(v, int) sees it.
  bool is_int_like() const { return is_int() || is_bool(); }
  bool is_float() const { return kind_ == ValueKind::kFloat; }
  bool is_string() const { return kind_ == ValueKind::kString; }
  bool is_list() const { return kind_ == ValueKind::kList; }
  bool is_tuple() const { return kind_ == ValueKind::kTuple; }
  /// A list or a tuple.
  bool is_sequence() const { return is_list() || is_tuple(); }
  bool is_dict() const { return kind_ == ValueKind::kDict; }

  bool as_bool() const;
  int64_t as_int() const;   // int or bool
  double as_float() const;  // float, int or bool
  const std::string& as_string() const;
  const List& as_list() const;  // list or tuple
  const Dict& as_dict() const;

  /// Python type name of the value: "int", "str", "numpy.int64", ...
  std::string type_name() const;
  /// Python-style repr: True, 3, 1.5, 'text', [1, 2], (1,), {'a': 1}, None.
  std::string repr() const;
  /// Python-style str: like repr, but strings print without quotes.
  std::string str() const;

  /// Deep equality of kind and content (True != 1, 1 != 1.0).
  bool operator==(const Value& other) const;
  bool operator!=(const Value& other) const { return !(*this == other); }
  /// A hash stable across runs and processes (used for compile-cache keys).
  uint64_t StableHash() const;

 private:
  struct Payload;
  ValueKind kind_ = ValueKind::kNone;
  int64_t int_ = 0;
  double float_ = 0.0;
  std::shared_ptr<const Payload> payload_;  // strings, objects, lists, dicts
};

/// A string-keyed dictionary that keeps insertion order, like a Python dict.
class Dict {
 public:
  using Item = std::pair<std::string, Value>;
  Dict() = default;
  Dict(std::initializer_list<Item> items);

  /// The value under `key`, or nullptr.
  const Value* Find(std::string_view key) const;
  bool Contains(std::string_view key) const { return Find(key) != nullptr; }
  /// Inserts or replaces; a replaced key keeps its position.
  void Set(std::string key, Value value);
  bool Erase(std::string_view key);
  /// Room for `n` items without reallocating.
  void Reserve(size_t n) { items_.reserve(n); }

  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  auto begin() const { return items_.begin(); }
  auto end() const { return items_.end(); }
  /// Python semantics: same keys and values, in any order.
  bool operator==(const Dict& other) const;

 private:
  std::vector<Item> items_;
};

/// A list Value of ints (an attribute's shape, axes or sizes).
Value IntList(const std::vector<int64_t>& values);

}  // namespace msrt
