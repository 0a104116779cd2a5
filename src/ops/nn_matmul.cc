// Matrix products of the NN family: matmul, batch_matmul, dense, bias_add,
// and the composites behind MindSpore's functional forms of them.
#include <algorithm>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "ops/op_def.h"

namespace msrt::ops {
namespace {

Dict Transposes(bool ta, bool tb) { return Dict{{"transpose_a", Value(ta)}, {"transpose_b", Value(tb)}}; }

void CheckFloatPair(std::string_view op, const std::vector<TensorMeta>& in, std::string_view a, std::string_view b,
                    DTypeClass cls = DTypeClass::kFloat) {
  CheckDType(op, a, in[0], cls);
  CheckSameDType(op, a, in[0], b, in[1]);
}

// (M, N) of op(a) @ op(b) for the last two dims; ValueError when K differs.
std::pair<int64_t, int64_t> ProductDims(std::string_view op, const Shape& a, const Shape& b, bool ta, bool tb) {
  size_t ra = a.size(), rb = b.size();
  int64_t m = ta ? a[ra - 1] : a[ra - 2];
  int64_t ka = ta ? a[ra - 2] : a[ra - 1];
  int64_t kb = tb ? b[rb - 1] : b[rb - 2];
  int64_t n = tb ? b[rb - 2] : b[rb - 1];
  if (ka != kb) {
    OpError(ErrorKind::kValue, op,
            StrCat("the inner dimensions of the product do not match; expected a's ", ka, " to equal b's, but got ", kb,
                   " (a ", ShapeRepr(a), ", transpose_a ", ta ? "True" : "False", "; b ", ShapeRepr(b),
                   ", transpose_b ", tb ? "True" : "False", ")"));
  }
  return {m, n};
}

// Gradients of op(a) @ op(b) (the batch dims, if any, are those of dy);
// complex operands enter conjugated (da = dy @ conj(b)^T...).
std::pair<Tensor, Tensor> ProductGrads(std::string_view op, const Tensor& a_in, const Tensor& b_in, const Tensor& dy,
                                       bool ta, bool tb, bool need_a, bool need_b) {
  const Tensor a = need_b ? fn::Conj(a_in) : a_in;
  const Tensor b = need_a ? fn::Conj(b_in) : b_in;
  auto grad_a = [&] {
    if (!ta && !tb) return Call1(op, {dy, b}, Transposes(false, true));
    if (!ta && tb) return Call1(op, {dy, b}, Transposes(false, false));
    if (ta && !tb) return Call1(op, {b, dy}, Transposes(false, true));
    return Call1(op, {b, dy}, Transposes(true, true));
  };
  auto grad_b = [&] {
    if (!ta && !tb) return Call1(op, {a, dy}, Transposes(true, false));
    if (!ta && tb) return Call1(op, {dy, a}, Transposes(true, false));
    if (ta && !tb) return Call1(op, {a, dy}, Transposes(false, false));
    return Call1(op, {dy, a}, Transposes(true, true));
  };
  // Note [Smaller gradient first]: the gradient of the smaller operand is
  // the product that reads the larger one, which is often that operand's
  // last use (a saved activation); made first, the larger buffer is free
  // before the larger gradient is allocated. Graph steps and eager ops run
  // in the order the gradients are made, so this lowers the peak of both.
  Tensor da, db;
  if (need_b && (!need_a || b_in.numel() < a_in.numel())) {
    db = grad_b();
    if (need_a) da = grad_a();
  } else {
    if (need_a) da = grad_a();
    if (need_b) db = grad_b();
  }
  return {da, db};
}

const std::vector<AttrSpec> kTransposeAttrs = {
    {"transpose_a", Value(false), "use a's transpose", AttrType::kBool},
    {"transpose_b", Value(false), "use b's transpose", AttrType::kBool},
};

MSRT_REGISTER_OP({
    .name = "matmul",
    .inputs = {"a", "b"},
    .attrs = kTransposeAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      CheckFloatPair("matmul", in, "a", "b", DTypeClass::kFloatOrComplex);
      CheckRank("matmul", "a", in[0], 2);
      CheckRank("matmul", "b", in[1], 2);
      auto [m, n] = ProductDims("matmul", in[0].shape, in[1].shape, AttrBool(attrs, "transpose_a"),
                                AttrBool(attrs, "transpose_b"));
      return {{{m, n}, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      auto [da, db] = ProductGrads("matmul", g.inputs[0], g.inputs[1], g.dys[0], AttrBool(g.attrs, "transpose_a"),
                                   AttrBool(g.attrs, "transpose_b"), g.needs[0], g.needs[1]);
      return {da, db};
    },
    .props = {.half_compute = HalfCompute::kRoundedFloat32, .accepts_epilogue = true, .complex_grad = true},
    .doc = "op(a) @ op(b) for 2-D a and b, op transposing when asked.",
    .api = {Function("mm(input->a, mat2->b)"),
            Primitive("math_ops.MatMul(transpose_a=False, transpose_b=False)(x->a, y->b)")},
});

MSRT_REGISTER_OP({
    .name = "batch_matmul",
    .inputs = {"a", "b"},
    .attrs = kTransposeAttrs,
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      CheckFloatPair("batch_matmul", in, "a", "b", DTypeClass::kFloatOrComplex);
      for (size_t i = 0; i < 2; ++i) {
        if (in[i].shape.size() < 3) {
          OpError(ErrorKind::kValue, "batch_matmul",
                  StrCat("input '", i == 0 ? "a" : "b", "' must have rank 3 or more; expected (..., rows, cols), ",
                         "but got shape ", ShapeRepr(in[i].shape)));
        }
      }
      const Shape& a = in[0].shape;
      const Shape& b = in[1].shape;
      auto [m, n] = ProductDims("batch_matmul", a, b, AttrBool(attrs, "transpose_a"), AttrBool(attrs, "transpose_b"));
      Shape out = BroadcastShapes("batch_matmul", Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
      out.push_back(m);
      out.push_back(n);
      return {{out, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      auto [da, db] = ProductGrads("batch_matmul", g.inputs[0], g.inputs[1], g.dys[0], AttrBool(g.attrs, "transpose_a"),
                                   AttrBool(g.attrs, "transpose_b"), g.needs[0], g.needs[1]);
      // Broadcast batch dims: sum the gradient back over them.
      if (da.defined()) da = SumToShape(da, g.inputs[0].shape());
      if (db.defined()) db = SumToShape(db, g.inputs[1].shape());
      return {da, db};
    },
    .props = {.half_compute = HalfCompute::kRoundedFloat32, .complex_grad = true},
    .doc = "Batched op(a) @ op(b) over the leading dims, which broadcast.",
    .api = {Function("bmm(input_x->a, mat2->b)"),
            Function("batch_matmul(x->a, y->b, transpose_a=False, transpose_b=False)"),
            Primitive("math_ops.BatchMatMul(transpose_a=False, transpose_b=False)(x->a, y->b)")},
});

// bias_add's channel axis: 1, or the last one for data_format "NHWC"
// (channels-last activations, Note [Channels-last graphs]).
size_t BiasChannelAxis(const Shape& x, const Dict& attrs) {
  return AttrString(attrs, kDataFormatAttr) == kChannelsLast ? x.size() - 1 : 1;
}

AttrSpec BiasDataFormat() {
  return {kDataFormatAttr, Value(kChannelsFirst),
          "layout of x: 'NCHW' (channels on axis 1) or 'NHWC' (channels on the last axis)", AttrType::kDataFormat};
}

MSRT_REGISTER_OP({
    .name = "bias_add",
    .inputs = {"x", "bias"},
    .attrs = {BiasDataFormat()},
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      CheckFloatPair("bias_add", in, "x", "bias");
      if (in[0].shape.size() < 2) {
        OpError(ErrorKind::kValue, "bias_add",
                StrCat("input 'x' must have rank 2 or more (batch and channels); but got shape ",
                       ShapeRepr(in[0].shape)));
      }
      size_t axis = BiasChannelAxis(in[0].shape, attrs);
      if (in[1].shape.size() != 1 || in[1].shape[0] != in[0].shape[axis]) {
        OpError(ErrorKind::kValue, "bias_add",
                StrCat("input 'bias' must be 1-D with x's channels (axis ", axis, "); expected shape (",
                       in[0].shape[axis], ",), but got ", ShapeRepr(in[1].shape)));
      }
      return {{in[0].shape, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      Tensor dx, dbias;
      if (g.needs[0]) dx = g.dys[0];
      if (g.needs[1]) dbias = Call1("bias_add_grad", {g.dys[0]}, g.attrs);
      return {dx, dbias};
    },
    .props = {.half_compute = HalfCompute::kRoundedFloat32,
              .accepts_epilogue = true,
              .layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {0}}},
    .doc = "x + bias, bias broadcast along the channel axis (axis 1, or the last for data_format 'NHWC').",
});

MSRT_REGISTER_OP({
    .name = "bias_add_grad",
    .inputs = {"dy"},
    .attrs = {BiasDataFormat()},
    .infer = [](const std::vector<TensorMeta>& in, const Dict& attrs) -> std::vector<TensorMeta> {
      CheckDType("bias_add_grad", "dy", in[0], DTypeClass::kFloat);
      if (in[0].shape.size() < 2) {
        OpError(ErrorKind::kValue, "bias_add_grad",
                StrCat("input 'dy' must have rank 2 or more (batch and channels); but got shape ",
                       ShapeRepr(in[0].shape)));
      }
      return {{{in[0].shape[BiasChannelAxis(in[0].shape, attrs)]}, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      // Linear: the gradient spreads ddbias back over every position.
      const Tensor& dy = g.inputs[0];
      return {Call1("bias_add", {Call1("zeros_like", {dy}), g.dys[0]}, g.attrs)};
    },
    .props = {.half_compute = HalfCompute::kRoundedFloat32,
              .layout = LayoutSpec{.activation_inputs = {0}, .activation_outputs = {}}},
    .doc = "dy summed over every axis but the channel axis (internal: the gradient of bias_add's bias).",
});

MSRT_REGISTER_OP({
    .name = "dense",
    .inputs = {"x", "weight", "bias"},
    .infer = [](const std::vector<TensorMeta>& in, const Dict&) -> std::vector<TensorMeta> {
      CheckDType("dense", "x", in[0], DTypeClass::kFloat);
      CheckSameDType("dense", "x", in[0], "weight", in[1]);
      CheckSameDType("dense", "x", in[0], "bias", in[2]);
      CheckRank("dense", "weight", in[1], 2);
      const Shape& x = in[0].shape;
      const Shape& w = in[1].shape;
      if (x.empty() || x.back() != w[1]) {
        OpError(ErrorKind::kValue, "dense",
                StrCat("x's last dim must equal weight's in_channels (weight is (out, in)); expected ", w[1],
                       ", but got x of shape ", ShapeRepr(x)));
      }
      if (in[2].shape != Shape{w[0]}) {
        OpError(ErrorKind::kValue, "dense",
                StrCat("input 'bias' must have shape (out_channels,); expected (", w[0], ",), but got ",
                       ShapeRepr(in[2].shape)));
      }
      Shape out(x.begin(), x.end() - 1);
      out.push_back(w[0]);
      return {{out, in[0].dtype}};
    },
    .grad = [](const GradArgs& g) -> std::vector<Tensor> {
      const Tensor& x = g.inputs[0];
      const Tensor& w = g.inputs[1];
      int64_t in = w.shape()[1], out = w.shape()[0];
      int64_t rows = NumElements(Shape(x.shape().begin(), x.shape().end() - 1));
      // Rows of x against weight: the products are 2-D matmuls.
      Tensor x2 = x.ndim() == 2 ? x : fn::Reshape(x, {rows, in});
      Tensor dy2 = x.ndim() == 2 ? g.dys[0] : fn::Reshape(g.dys[0], {rows, out});
      Tensor dx, dw, db;
      // The smaller gradient first (Note [Smaller gradient first]).
      const bool weight_first = w.numel() < x.numel();
      auto weight_grad = [&] {
        if (g.needs[1]) dw = Call1("matmul", {dy2, x2}, Transposes(true, false));
      };
      if (weight_first) weight_grad();
      if (g.needs[0]) {
        dx = Call1("matmul", {dy2, w}, Transposes(false, false));
        if (x.ndim() != 2) dx = fn::Reshape(dx, x.shape());
      }
      if (!weight_first) weight_grad();
      if (g.needs[2]) db = fn::ReduceSum(dy2, {0}, false);
      return {dx, dw, db};
    },
    .props = {.half_compute = HalfCompute::kRoundedFloat32, .accepts_epilogue = true},
    .doc = "x @ weight^T + bias, weight of shape (out_channels, in_channels).",
});

// NumPy's matmul: 1-D operands are promoted (a to a row, b to a column) and
// the added axis squeezed away; 2-D by 2-D is matmul, anything else
// batch_matmul with the batch dims broadcast.
MSRT_REGISTER_OP({
    .name = "matmul_ext",
    .inputs = {"a", "b"},
    .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
      // Two matrices: matmul at its defaults (no transposes), on the inputs as given.
      static const OpDef& matmul = GetOp("matmul");
      if (in[0].ndim() == 2 && in[1].ndim() == 2) return Call(matmul, in);
      Tensor a = in[0], b = in[1];
      if (a.ndim() == 0 || b.ndim() == 0) {
        OpError(ErrorKind::kValue, "matmul_ext",
                StrCat("the inputs must have rank 1 or more (not scalars); but got shapes ", ShapeRepr(a.shape()),
                       " and ", ShapeRepr(b.shape())));
      }
      std::vector<int64_t> squeeze;  // axes of the result, counted from its end
      if (a.ndim() == 1) {
        a = fn::ExpandDims(a, 0);
        squeeze.push_back(-2);
      }
      if (b.ndim() == 1) {
        b = fn::ExpandDims(b, 1);
        squeeze.push_back(-1);
      }
      Tensor out;
      if (a.ndim() == 2 && b.ndim() == 2) {
        out = Call1("matmul", {a, b});  // no transposes: matmul's defaults, which it need not parse
      } else {
        if (a.ndim() == 2) a = fn::ExpandDims(a, 0);
        if (b.ndim() == 2) b = fn::ExpandDims(b, 0);
        out = Call1("batch_matmul", {a, b}, Transposes(false, false));
      }
      if (!squeeze.empty()) {
        for (int64_t& axis : squeeze) axis += out.ndim();
        out = Call1("squeeze", {out}, Dict{{"axis", IntList(squeeze)}});
      }
      return {out};
    },
    .doc = "NumPy's matmul of a and b (rank 1 or more): matmul for 2-D operands, batch_matmul with broadcast batch "
           "dims otherwise; a 1-D operand is a row (a) or a column (b) whose axis the result drops (composite)",
    .api = {Function("matmul(input->a, other->b)"), Method("matmul(self->a, other->b)")},
});

// MindSpore's dense with an optional bias: the dense op when there is one,
// otherwise a product with weight transposed.
MSRT_REGISTER_OP({
    .name = "dense_ext",
    .inputs = {"x", "weight", "bias?"},
    .attrs = {{"has_bias", Value(true), "add bias (when given); False ignores it", AttrType::kBool}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      const Tensor& x = in[0];
      const Tensor& w = in[1];
      if (in[2].defined() && AttrBool(attrs, "has_bias")) return {Call1("dense", {x, w, in[2]})};
      if (x.ndim() == 2) return {Call1("matmul", {x, w}, Transposes(false, true))};
      return {Call1("matmul_ext", {x, fn::Transpose(w, {1, 0})})};
    },
    .doc = "x @ weight^T (+ bias when given and has_bias), weight of shape (out_channels, in_channels); x of any "
           "rank >= 1 (composite)",
    .api = {Function("dense(input->x, weight, bias=None)"),
            Primitive("nn_ops.Dense(has_bias=True)(x, w->weight, b->bias=None)")},
});

// bias_add adds along axis 1 at any rank, so MindSpore's 'NCDHW' is its 'NCHW'.
MSRT_REGISTER_OP({
    .name = "bias_add_ext",
    .inputs = {"x", "bias"},
    .attrs = {{"data_format",
               Value("NCHW"),
               "channels on axis 1 ('NCHW' or 'NCDHW') or last ('NHWC')",
               AttrType::kString,
               {"NCHW", "NHWC", "NCDHW"}}},
    .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
      bool last = AttrString(attrs, "data_format") == kChannelsLast;
      return {Call1("bias_add", {in[0], in[1]},
                    Dict{{std::string(kDataFormatAttr), Value(last ? kChannelsLast : kChannelsFirst)}})};
    },
    .doc = "bias_add with MindSpore's data_format argument ('NCHW' or 'NCDHW': channels on axis 1; 'NHWC': on the "
           "last axis) (composite)",
    .api = {Function("bias_add(input_x->x, bias, data_format='NCHW')"),
            Primitive("nn_ops.BiasAdd(data_format='NCHW')(input_x->x, bias)")},
});

}  // namespace
}  // namespace msrt::ops
