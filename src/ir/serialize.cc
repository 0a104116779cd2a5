// Graph files: the compile cache and ms.export/ms.load share this format.
//
// Note [Graph file format]
//   bytes 0-7   magic "MSRTGRPH"
//   bytes 8-11  format version (uint32, little endian), 2
//   bytes 12-19 header length H (uint64)
//   H bytes     header: JSON {graph, inputs, outputs, nodes[...], metadata_bytes}
//   then        the caller's metadata (a JSON record, Note [Graph record]:
//               written by compiler::CompileCache and msrt/_export.py; never pickle)
//   then        tensor data, each constant (and embedded weight) at the offset
//               its node names, contiguous, native byte order
//   last 4      CRC-32C of every byte before it
// The checksum is checked before anything else is read, the JSON is parsed
// with a nesting limit, and every read is bounds-checked: a truncated or
// corrupt file raises ValueError and never yields a partial graph. Version 1
// files (whose metadata was pickled) are refused with a request to export
// them again.
#include "ir/serialize.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>
#include "core/file_io.h"
#include "msrt/core/shape.h"

namespace msrt::ir {
namespace {

using Json = nlohmann::json;

constexpr char kMagic[8] = {'M', 'S', 'R', 'T', 'G', 'R', 'P', 'H'};
constexpr uint32_t kVersion = 2;
constexpr int kMaxJsonDepth = 64;

Json ToJson(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNone: return nullptr;
    case ValueKind::kBool: return v.as_bool();
    case ValueKind::kInt: return v.as_int();
    case ValueKind::kFloat: return Json{{"f", v.as_float()}};
    case ValueKind::kString: return Json{{"s", v.as_string()}};
    case ValueKind::kList:
    case ValueKind::kTuple: {
      Json items = Json::array();
      for (const Value& item : v.as_list()) items.push_back(ToJson(item));
      return Json{{v.is_tuple() ? "t" : "l", items}};
    }
    case ValueKind::kDict: {
      Json items = Json::array();
      for (const auto& [key, item] : v.as_dict()) items.push_back(Json::array({key, ToJson(item)}));
      return Json{{"d", items}};
    }
    case ValueKind::kObject: break;
  }
  throw ValueError(StrCat("a graph attribute of type ", v.repr(), " can not be saved"));
}

Value FromJson(const Json& j, int depth = 0) {
  if (depth > kMaxJsonDepth) throw ValueError("attributes nested too deeply");
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<int64_t>());
  if (!j.is_object() || j.size() != 1) throw ValueError("bad attribute encoding");
  const auto first = j.cbegin();  // not a binding into a temporary's items()
  const std::string& tag = first.key();
  const Json& body = first.value();
  if (tag == "f") return Value(body.get<double>());
  if (tag == "s") return Value(body.get<std::string>());
  if (tag == "l" || tag == "t") {
    List items;
    for (const Json& item : body) items.push_back(FromJson(item, depth + 1));
    return tag == "t" ? Value::Tuple(std::move(items)) : Value(std::move(items));
  }
  if (tag == "d") {
    Dict items;
    for (const Json& pair : body) items.Set(pair.at(0).get<std::string>(), FromJson(pair.at(1), depth + 1));
    return Value(std::move(items));
  }
  throw ValueError(StrCat("bad attribute tag '", tag, "'"));
}

Json MetaJson(const ops::TensorMeta& m) { return Json{{"shape", m.shape}, {"dtype", DTypeAttrName(m.dtype)}}; }

ops::TensorMeta MetaFromJson(const Json& j) {
  auto dtype = ParseDType(j.at("dtype").get<std::string>());
  if (!dtype) throw ValueError("unknown dtype");
  return {j.at("shape").get<Shape>(), *dtype};
}

template <typename T>
void Put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

}  // namespace

std::string SerializeGraph(const Graph& graph, bool embed_weights, std::string_view metadata) {
  Json nodes = Json::array();
  std::string data;
  for (const Node& n : graph.nodes()) {
    if (n.dead) throw InternalError("serialising a graph with deleted nodes");
    if (!n.fused.empty()) throw InternalError("serialising a fused graph (save before the backend stage)");
    Json j{{"kind", NodeKindName(n.kind)}, {"scope", n.scope}, {"source", n.source}, {"name", n.name}};
    Json outputs = Json::array();
    for (const auto& m : n.outputs) outputs.push_back(MetaJson(m));
    j["outputs"] = outputs;
    if (n.kind == NodeKind::kOp) {
      j["op"] = n.op->name;
      Json inputs = Json::array();
      for (const ValueRef& v : n.inputs) inputs.push_back(Json::array({v.node, v.index}));
      j["inputs"] = inputs;
      Json attrs = Json::array();
      for (const auto& [key, value] : n.attrs) attrs.push_back(Json::array({key, ToJson(value)}));
      j["attrs"] = attrs;
    }
    bool store = n.kind == NodeKind::kConstant || (n.kind == NodeKind::kWeight && embed_weights);
    if (store) {
      if (!n.value.defined()) throw ValueError(StrCat("weight '", n.name, "' has no data to save"));
      j["offset"] = data.size();
      j["nbytes"] = n.value.nbytes();
      data.append(static_cast<const char*>(n.value.data()), n.value.nbytes());
    }
    nodes.push_back(std::move(j));
  }
  Json refs = Json::array();
  for (const ValueRef& v : graph.outputs()) refs.push_back(Json::array({v.node, v.index}));
  Json header{{"graph", graph.name()}, {"inputs", graph.inputs()},          {"outputs", refs},
              {"nodes", nodes},        {"metadata_bytes", metadata.size()}, {"data_bytes", data.size()}};
  std::string text = header.dump();
  std::string out(kMagic, sizeof kMagic);
  Put(out, kVersion);
  Put(out, static_cast<uint64_t>(text.size()));
  out += text;
  out.append(metadata);
  out += data;
  Put(out, Crc32c(out));
  return out;
}

LoadedGraph DeserializeGraph(std::string_view bytes, std::string_view what) {
  auto corrupt = [what](const std::string& why) -> ValueError {
    return ValueError(StrCat("'", what, "' is not a valid msrt graph file: ", why, "."));
  };
  constexpr size_t kFixed = sizeof kMagic + sizeof(uint32_t) + sizeof(uint64_t);
  if (bytes.size() < kFixed || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) throw corrupt("bad magic");
  uint32_t version;
  uint64_t header_size;
  std::memcpy(&version, bytes.data() + 8, sizeof version);
  std::memcpy(&header_size, bytes.data() + 12, sizeof header_size);
  if (version == 1) {
    throw corrupt(
        "it was written by an older msrt (graph format version 1, whose pickled record is not read because it "
        "could run code); export it again with this msrt (ms.export), or delete it if it is a compile cache entry");
  }
  if (version != kVersion) throw corrupt(StrCat("format version ", version, ", this msrt reads ", kVersion));
  if (bytes.size() < kFixed + sizeof(uint32_t)) throw corrupt("truncated checksum");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - sizeof stored, sizeof stored);
  bytes.remove_suffix(sizeof stored);
  if (Crc32c(bytes) != stored) throw corrupt("its checksum (CRC32C) does not match: the file is corrupt or truncated");
  if (header_size > bytes.size() - kFixed) throw corrupt("truncated header");
  LoadedGraph loaded;
  try {
    Json header = Json::parse(bytes.substr(kFixed, header_size), [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxJsonDepth) throw std::length_error(StrCat("its header nests deeper than ", kMaxJsonDepth));
      return true;
    });
    size_t metadata_size = header.at("metadata_bytes").get<size_t>();
    size_t data_size = header.at("data_bytes").get<size_t>();
    size_t body = kFixed + header_size;
    if (metadata_size > bytes.size() - body || data_size != bytes.size() - body - metadata_size) {
      throw corrupt("truncated or padded body");
    }
    loaded.metadata = std::string(bytes.substr(body, metadata_size));
    std::string_view data = bytes.substr(body + metadata_size);
    auto graph = std::make_shared<Graph>(header.at("graph").get<std::string>());
    for (const Json& j : header.at("nodes")) {
      Node n;
      std::string kind = j.at("kind").get<std::string>();
      n.kind = kind == "input"      ? NodeKind::kInput
               : kind == "weight"   ? NodeKind::kWeight
               : kind == "constant" ? NodeKind::kConstant
               : kind == "op"       ? NodeKind::kOp
                                    : throw corrupt(StrCat("unknown node kind '", kind, "'"));
      n.scope = j.at("scope").get<std::string>();
      n.source = j.at("source").get<std::string>();
      n.name = j.at("name").get<std::string>();
      for (const Json& m : j.at("outputs")) n.outputs.push_back(MetaFromJson(m));
      if (n.kind == NodeKind::kOp) {
        n.op = ops::FindOp(j.at("op").get<std::string>());
        if (n.op == nullptr) throw corrupt(StrCat("unknown op '", j.at("op").get<std::string>(), "'"));
        for (const Json& v : j.at("inputs")) n.inputs.push_back({v.at(0).get<int32_t>(), v.at(1).get<int32_t>()});
        for (const Json& a : j.at("attrs")) n.attrs.Set(a.at(0).get<std::string>(), FromJson(a.at(1)));
      }
      if (j.contains("offset")) {
        size_t offset = j.at("offset").get<size_t>(), nbytes = j.at("nbytes").get<size_t>();
        if (n.outputs.size() != 1 || offset > data.size() || nbytes > data.size() - offset) {
          throw corrupt("tensor data out of range");
        }
        const ops::TensorMeta& m = n.outputs[0];
        size_t expected = 0;
        try {
          expected = NumBytes(m.shape, m.dtype);  // overflow-checked (msrt/core/shape.h)
        } catch (const Error&) {
          throw corrupt("invalid tensor shape");
        }
        if (nbytes != expected) throw corrupt("tensor size");
        n.value = Tensor::FromHost(data.data() + offset, nbytes, m.shape, m.dtype);
        n.value.impl()->name = n.name;
      }
      graph->Add(std::move(n));
    }
    graph->inputs() = header.at("inputs").get<std::vector<int32_t>>();
    for (const Json& v : header.at("outputs"))
      graph->outputs().push_back({v.at(0).get<int32_t>(), v.at(1).get<int32_t>()});
    Verify(*graph, "load");
    loaded.graph = std::move(graph);
  } catch (const ValueError&) {
    throw;
  } catch (const std::exception& e) {
    throw corrupt(e.what());
  }
  return loaded;
}

// Note [Graph record]
//   {"schema": "msrt-graph-record", "version": 1, "kind": "export" | "compile_cache",
//    "key": str, "dependency": str            (compile_cache)
//    "inputs": [[[dims...], dtype name], ...]  (export)
//    "template": value}
//   value: {"t": "slot"} | {"t": "none"} | {"t": "bool", "v": bool}
//        | {"t": "int", "v": decimal str} | {"t": "float", "v": Python repr str}
//        | {"t": "str", "v": str} | {"t": "tuple" | "list", "items": [value...]}
//        | {"t": "dict", "items": [[hashable value, value]...]}
// Written by compiler::CompileCache (src/compiler/compiled_function.cc) and
// ms.export (python/msrt/_export.py, templates by msrt/_graph_files.py); never pickle.
namespace {

constexpr int kMaxRecordDepth = 200;

bool IsDecimal(const std::string& s) {
  size_t start = !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() == start || s.size() > 4300) return false;
  for (size_t i = start; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
  }
  return true;
}

bool IsFloatText(const std::string& s) {
  if (s == "nan" || s == "inf" || s == "-inf") return true;
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+')) return false;
  }
  char* end = nullptr;
  std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Throws std::invalid_argument (turned into the caller's ValueError) for a bad value.
void CheckTemplate(const Json& j, bool must_hash) {
  auto bad = [&j](std::string_view why) {
    std::string text = j.dump();
    if (text.size() > 80) text = text.substr(0, 80) + "...";
    throw std::invalid_argument(StrCat("the template value ", text, " ", why));
  };
  if (!j.is_object() || !j.contains("t") || !j.at("t").is_string()) bad("is not an object with a tag 't'");
  const std::string tag = j.at("t").get<std::string>();
  auto value = [&](auto&& ok) {
    if (!j.contains("v") || !ok(j.at("v"))) bad("has no valid 'v'");
  };
  if (tag == "slot" || tag == "none") return;
  if (tag == "bool") return value([](const Json& v) { return v.is_boolean(); });
  if (tag == "str") return value([](const Json& v) { return v.is_string(); });
  if (tag == "int") return value([](const Json& v) { return v.is_string() && IsDecimal(v.get<std::string>()); });
  if (tag == "float") return value([](const Json& v) { return v.is_string() && IsFloatText(v.get<std::string>()); });
  if (!j.contains("items") || !j.at("items").is_array()) bad("has no 'items' list");
  if (tag == "tuple" || tag == "list") {
    if (must_hash && tag == "list") bad("is a dict key that is not hashable");
    for (const Json& item : j.at("items")) CheckTemplate(item, must_hash);
    return;
  }
  if (tag == "dict") {
    if (must_hash) bad("is a dict key that is not hashable");
    for (const Json& pair : j.at("items")) {
      if (!pair.is_array() || pair.size() != 2) bad("has an item that is not a [key, value] pair");
      CheckTemplate(pair.at(0), /*must_hash=*/true);
      CheckTemplate(pair.at(1), /*must_hash=*/false);
    }
    return;
  }
  bad("has an unknown tag");
}

}  // namespace

void CheckGraphRecord(std::string_view json, std::string_view kind, std::string_view what) {
  auto bad = [what](const std::string& why) {
    return ValueError(StrCat("'", what, "' is not a valid msrt graph file: its record ", why, "."));
  };
  if (!json.empty() && static_cast<unsigned char>(json[0]) == 0x80) {
    throw bad("is pickled (written by an older msrt); export the graph again with this msrt");
  }
  Json record;
  try {
    record = Json::parse(json, [](int depth, Json::parse_event_t, Json&) {
      if (depth > kMaxRecordDepth) throw std::length_error(StrCat("nests deeper than ", kMaxRecordDepth, " levels"));
      return true;
    });
  } catch (const std::length_error& e) {
    throw bad(e.what());
  } catch (const std::exception& e) {
    throw bad(StrCat("is not JSON (", e.what(), ")"));
  }
  try {
    if (!record.is_object() || record.value("schema", Json()) != "msrt-graph-record") {
      throw std::invalid_argument("has no 'msrt-graph-record' schema");
    }
    if (record.value("version", Json()) != 1) {
      throw std::invalid_argument(
          StrCat("has version ", record.value("version", Json()).dump(), "; this msrt reads version 1"));
    }
    if (record.value("kind", Json()) != std::string(kind)) {
      throw std::invalid_argument(StrCat("is of kind ", record.value("kind", Json()).dump(), ", not '", kind, "'",
                                         kind == "export" ? " (it may be a compile cache entry)" : ""));
    }
    if (kind == "compile_cache") {
      for (const char* field : {"key", "dependency"}) {
        if (!record.contains(field) || !record.at(field).is_string()) {
          throw std::invalid_argument(StrCat("has no '", field, "' string"));
        }
      }
    } else {
      const Json inputs = record.value("inputs", Json());
      bool ok = inputs.is_array();
      for (const Json& input : inputs) {
        ok = ok && input.is_array() && input.size() == 2 && input.at(0).is_array() && input.at(1).is_string() &&
             ParseDType(input.at(1).get<std::string>()).has_value();
        if (!ok) break;
        for (const Json& d : input.at(0)) ok = ok && d.is_number_unsigned();
      }
      if (!ok) throw std::invalid_argument("has invalid 'inputs'");
    }
    if (!record.contains("template")) throw std::invalid_argument("has no 'template'");
    CheckTemplate(record.at("template"), false);
  } catch (const std::invalid_argument& e) {
    throw bad(e.what());
  }
}

}  // namespace msrt::ir
