// Text (.ir) and graphviz (.dot) forms of a graph; docs/ir.md describes the text.
#include <complex>
#include <sstream>

#include "core/random.h"
#include "ir/graph.h"

namespace msrt::ir {
namespace {

std::string Ref(const Graph& graph, ValueRef v) {
  return graph.node(v.node).outputs.size() == 1 ? StrCat("%", v.node) : StrCat("%", v.node, ".", v.index);
}

std::string MetaText(const ops::TensorMeta& m) { return StrCat(DTypeName(m.dtype), ShapeRepr(m.shape)); }

double ElementAsDouble(const Tensor& t, int64_t i) {
  const void* p = t.data();
  switch (t.dtype()) {
    case DType::kBool: return static_cast<const bool*>(p)[i] ? 1 : 0;
    case DType::kUInt8: return static_cast<const uint8_t*>(p)[i];
    case DType::kInt8: return static_cast<const int8_t*>(p)[i];
    case DType::kInt16: return static_cast<const int16_t*>(p)[i];
    case DType::kInt32: return static_cast<const int32_t*>(p)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kFloat16: return HalfToFloat(static_cast<const Half*>(p)[i]);
    case DType::kBFloat16: return BFloat16ToFloat(static_cast<const BFloat16*>(p)[i]);
    case DType::kFloat32: return static_cast<const float*>(p)[i];
    case DType::kFloat64: return static_cast<const double*>(p)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(p)[i];
    case DType::kUInt32: return static_cast<const uint32_t*>(p)[i];
    case DType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    // Complex values print through ElementText.
    case DType::kComplex64:
    case DType::kComplex128: break;
  }
  return 0;
}

// One element: a number, or "re+imj" for complex values.
std::string ElementText(const Tensor& t, int64_t i) {
  std::ostringstream out;
  if (t.dtype() == DType::kComplex64) {
    std::complex<float> v = static_cast<const std::complex<float>*>(t.data())[i];
    out << v.real() << (v.imag() < 0 ? "" : "+") << v.imag() << "j";
  } else if (t.dtype() == DType::kComplex128) {
    std::complex<double> v = static_cast<const std::complex<double>*>(t.data())[i];
    out << v.real() << (v.imag() < 0 ? "" : "+") << v.imag() << "j";
  } else if (t.dtype() == DType::kUInt64) {
    out << static_cast<const uint64_t*>(t.data())[i];
  } else if (t.dtype() == DType::kInt64) {
    out << static_cast<const int64_t*>(t.data())[i];
  } else {
    out << ElementAsDouble(t, i);
  }
  return out.str();
}

// Small constants print their values: "[0.5]" or "[1, 2, 3]".
std::string ValueText(const Tensor& t) {
  constexpr int64_t kMaxShown = 8;
  if (t.numel() > kMaxShown) return "";
  std::ostringstream out;
  out << " = [";
  for (int64_t i = 0; i < t.numel(); ++i) out << (i ? ", " : "") << ElementText(t, i);
  out << "]";
  return out.str();
}

std::string AttrText(const Dict& attrs) {
  std::string out;
  for (const auto& [key, value] : attrs) {
    // Random streams are the executor's (reserved per run); other "__" attributes
    // are compile decisions (e.g. an epilogue fused into the kernel) and print.
    if (key == random::kSeedAttr || key == random::kStreamAttr) continue;
    out += StrCat(out.empty() ? " {" : ", ", key, ": ", value.repr());
  }
  return out.empty() ? out : out + "}";
}

std::string OpText(const Graph& graph, int32_t id) {
  const Node& n = graph.node(id);
  std::string args;
  for (const ValueRef& v : n.inputs) args += StrCat(args.empty() ? "" : ", ", Ref(graph, v));
  if (n.fused.empty()) return StrCat(n.op->name, "(", args, ")", AttrText(n.attrs));
  std::string steps;
  for (const FusedOp& f : n.fused) steps += StrCat(steps.empty() ? "" : ", ", f.op->name);
  std::string outs;
  for (int32_t k : n.fused_outputs) outs += StrCat(outs.empty() ? "" : ", ", k);
  return StrCat("fused_elementwise[", steps, "](", args, ") {outputs of steps: ", outs, "}");
}

std::string DotEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace

std::string PrintText(const Graph& graph, const PrintOptions& options) {
  size_t counts[4] = {0, 0, 0, 0};
  for (const Node& n : graph.nodes()) counts[static_cast<int>(n.kind)] += n.dead ? 0 : 1;
  std::ostringstream out;
  out << "# msrt IR v1\n# graph: " << graph.name() << "\n# inputs: " << counts[0] << ", weights: " << counts[1]
      << ", constants: " << counts[2] << ", ops: " << counts[3] << "\n\n";
  out << "graph @" << graph.name() << "(";
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    int32_t id = graph.inputs()[i];
    out << (i ? ", " : "") << "%" << id << ": " << MetaText(graph.node(id).outputs[0]);
  }
  out << ") {\n";
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    auto id = static_cast<int32_t>(i);
    if (n.dead) continue;
    out << "  %" << id << " = ";
    switch (n.kind) {
      case NodeKind::kInput: out << "input \"" << n.name << "\""; break;
      case NodeKind::kWeight: out << "weight \"" << n.name << "\""; break;
      case NodeKind::kConstant: out << "constant" << ValueText(n.value); break;
      case NodeKind::kOp: out << OpText(graph, id); break;
    }
    out << " : ";
    if (n.outputs.size() == 1) {
      out << MetaText(n.outputs[0]);
    } else {
      out << "(";
      for (size_t k = 0; k < n.outputs.size(); ++k) out << (k ? ", " : "") << MetaText(n.outputs[k]);
      out << ")";
    }
    if (n.kind == NodeKind::kOp) {
      out << "\n      # " << graph.NodeName(id);
      if (options.sources && !n.source.empty()) out << "\n      # source: " << n.source;
      for (const FusedOp& f : n.fused) out << "\n      #   " << f.op->name << AttrText(f.attrs);
    }
    out << "\n";
  }
  out << "  return (";
  for (size_t i = 0; i < graph.outputs().size(); ++i) out << (i ? ", " : "") << Ref(graph, graph.outputs()[i]);
  out << ")\n}\n";
  return out.str();
}

std::string PrintDot(const Graph& graph) {
  std::ostringstream out;
  out << "digraph \"" << DotEscape(graph.name()) << "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\"];\n";
  for (size_t i = 0; i < graph.nodes().size(); ++i) {
    const Node& n = graph.nodes()[i];
    if (n.dead) continue;
    std::string label;
    std::string shape = "box";
    switch (n.kind) {
      case NodeKind::kInput:
        label = DotEscape(StrCat("input ", n.name));
        shape = "ellipse";
        break;
      case NodeKind::kWeight:
        label = DotEscape(StrCat("weight ", n.name));
        shape = "ellipse";
        break;
      case NodeKind::kConstant:
        label = "constant";
        shape = "ellipse";
        break;
      case NodeKind::kOp:
        label = StrCat(DotEscape(n.fused.empty() ? std::string(n.op->name) : "fused"), "\\n", DotEscape(n.scope));
        break;
    }
    out << "  n" << i << " [shape=" << shape << ", label=\"%" << i << " " << label << "\\n"
        << MetaText(n.outputs.at(0)) << "\"];\n";
    for (const ValueRef& v : n.inputs) out << "  n" << v.node << " -> n" << i << ";\n";
  }
  out << "  return [shape=doubleoctagon];\n";
  for (const ValueRef& v : graph.outputs()) out << "  n" << v.node << " -> return;\n";
  out << "}\n";
  return out.str();
}

}  // namespace msrt::ir
