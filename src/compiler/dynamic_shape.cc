// See Note [Dynamic shapes] in dynamic_shape.h.
#include "compiler/dynamic_shape.h"

#include <cstring>

#include "msrt/core/errors.h"

namespace msrt::compiler {
namespace {

std::string Where(const ir::Graph& g, int32_t id) {
  const ir::Node& n = g.node(id);
  std::string what = n.kind == ir::NodeKind::kOp ? StrCat("'", n.op->name, "'") : ir::NodeKindName(n.kind);
  return StrCat("node ", g.NodeName(id), " (", what, n.source.empty() ? "" : ", defined at " + n.source, ")");
}

// Whether two bound tensors are the same value: the same tensor, or equal bytes.
bool SameValue(const Tensor& a, const Tensor& b) {
  if (a.impl() == b.impl()) return true;
  if (a.shape() != b.shape() || a.dtype() != b.dtype() || a.symbolic() || b.symbolic()) return false;
  a.Sync();
  b.Sync();
  return std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

}  // namespace

std::shared_ptr<ir::Graph> GeneralizeGraphs(const ir::Graph& a, const ir::Graph& b) {
  auto differ = [&](const std::string& what) {
    throw ValueError(StrCat("the graph captured at another size differs: ", what, "."));
  };
  if (a.nodes().size() != b.nodes().size()) {
    differ(StrCat("it has ", b.nodes().size(), " nodes instead of ", a.nodes().size(),
                  " (Python control flow depends on a dynamic dimension)"));
  }
  if (a.inputs() != b.inputs() || a.outputs() != b.outputs()) differ("its inputs or outputs are other nodes");
  auto out = std::make_shared<ir::Graph>(a);
  for (size_t i = 0; i < a.nodes().size(); ++i) {
    auto id = static_cast<int32_t>(i);
    const ir::Node& x = a.nodes()[i];
    const ir::Node& y = b.nodes()[i];
    if (x.kind != y.kind || x.op != y.op || x.dead != y.dead || x.inputs != y.inputs ||
        x.outputs.size() != y.outputs.size()) {
      differ(StrCat(Where(a, id), " is another operation (Python control flow depends on a dynamic dimension)"));
    }
    if (!(x.attrs == y.attrs)) {
      for (const auto& [key, value] : x.attrs) {
        const Value* other = y.attrs.Find(key);
        if (other == nullptr || *other != value) {
          differ(StrCat(Where(a, id), " has ", key, "=", value.repr(), " at one size and ",
                        other ? other->repr() : "nothing",
                        " at the other: an attribute depends on a dynamic "
                        "dimension (a shape read in Python, such as x.shape[0])"));
        }
      }
      differ(StrCat(Where(a, id), " has other attributes"));
    }
    if ((x.kind == ir::NodeKind::kWeight || x.kind == ir::NodeKind::kConstant) &&
        (x.name != y.name || !SameValue(x.value, y.value))) {
      differ(StrCat(Where(a, id), " holds another value: a constant depends on a dynamic dimension"));
    }
    if (x.kind == ir::NodeKind::kInput && x.name != y.name) differ(StrCat(Where(a, id), " is another input"));
    ir::Node& general = out->node(id);
    for (size_t k = 0; k < x.outputs.size(); ++k) {
      const ops::TensorMeta& mx = x.outputs[k];
      const ops::TensorMeta& my = y.outputs[k];
      if (mx.dtype != my.dtype || mx.shape.size() != my.shape.size()) {
        differ(StrCat(Where(a, id), " gives ", DTypeName(mx.dtype), ShapeRepr(mx.shape), " at one size and ",
                      DTypeName(my.dtype), ShapeRepr(my.shape), " at the other"));
      }
      for (size_t d = 0; d < mx.shape.size(); ++d) {
        if (mx.shape[d] != my.shape[d]) general.outputs[k].shape[d] = kDynamicDim;
      }
    }
  }
  return out;
}

}  // namespace msrt::compiler
