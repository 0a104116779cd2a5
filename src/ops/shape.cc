// Shape ops: reshape, transpose, expand_dims, squeeze, flatten, concat,
// stack, split, strided_slice, gather, one_hot, broadcast_to, tile, fill.
#include <algorithm>
#include <numeric>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "ops/shape_utils.h"

namespace msrt::ops {
namespace {

using Metas = std::vector<TensorMeta>;

// `t` in the shape of `like`, through reshape_like: no size in an attribute.
Tensor ReshapeLike(const Tensor& t, const Tensor& like) {
  if (t.shape() == like.shape()) return t;
  return Call1("reshape_like", {t, like});
}

// The gradient of an op that only rearranges x's elements into another shape.
GradFn ReshapeBack() {
  return [](const GradArgs& a) -> std::vector<Tensor> {
    if (!a.dys[0].defined()) return {Tensor()};
    return {ReshapeLike(a.dys[0], a.inputs[0])};
  };
}

// What gradients use to bring a value back to an input's shape: the shape
// comes from a tensor, so a graph with dynamic dimensions keeps one form at
// every size (Note [Dynamic shapes] in compiler/dynamic_shape.h).
MSRT_REGISTER_OP(
    {.name = "reshape_like",
     .inputs = {"x", "like"},
     .infer =
         [](const Metas& in, const Dict&) {
           if (NumElements(in[0].shape) != NumElements(in[1].shape)) {
             OpError(ErrorKind::kValue, "reshape_like",
                     StrCat("can not put the ", NumElements(in[0].shape), " elements of shape ", ShapeRepr(in[0].shape),
                            " in shape ", ShapeRepr(in[1].shape), "; expected shapes of as many elements"));
           }
           return Metas{{in[1].shape, in[0].dtype}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       if (!a.dys[0].defined()) return {Tensor(), Tensor()};
       return {ReshapeLike(a.dys[0], a.inputs[0]), Tensor()};
     },
     .props = {.half_compute = HalfCompute::kExact, .meta_only_inputs = {1}, .noop_if_same_meta = true, .view = true},
     .doc = "x's elements in the shape of `like` (gradients' reshape back to an input's shape)"});

MSRT_REGISTER_OP(
    {.name = "reshape",
     .inputs = {"x"},
     .attrs = {{"shape", Value(), "the new shape; one entry may be -1", AttrType::kShape}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           return Metas{{ReshapeTarget("reshape", in[0].shape, ShapeAttr("reshape", attrs, "shape", -1)), in[0].dtype}};
         },
     .grad = ReshapeBack(),
     .props = {.half_compute = HalfCompute::kExact, .noop_if_same_meta = true, .view = true, .complex_grad = true},
     .doc = "the same elements in another shape",
     .api = {Function("reshape(input->x, shape)"), Method("reshape(self->x, *shape)"), Method("view(self->x, *shape)"),
             Primitive("array_ops.Reshape()(input_x->x, input_shape->shape)")}});

MSRT_REGISTER_OP({.name = "transpose",
                  .inputs = {"x"},
                  .attrs = {{"perm", Value(), "a permutation of the axes", AttrType::kInts}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        auto perm = CheckPermutation("transpose", ShapeAttr("transpose", attrs, "perm", INT64_MIN),
                                                     static_cast<int64_t>(in[0].shape.size()));
                        Shape out;
                        for (int64_t p : perm) out.push_back(in[0].shape[p]);
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    auto perm = CheckPermutation("transpose", ShapeAttr("transpose", a.attrs, "perm", INT64_MIN),
                                                 a.inputs[0].ndim());
                    std::vector<int64_t> inverse(perm.size());
                    for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
                    return {fn::Transpose(a.dys[0], inverse)};
                  },
                  .props = {.half_compute = HalfCompute::kExact, .cheap_to_recompute = true, .complex_grad = true},
                  .doc = "axes permuted: out.shape[i] = x.shape[perm[i]]",
                  .api = {Function("transpose(input->x, input_perm->perm)"), Function("permute(input->x, axis->perm)"),
                          Method("permute(self->x, *axis->perm)"),
                          Primitive("array_ops.Transpose()(input_x->x, input_perm->perm)")}});

MSRT_REGISTER_OP({.name = "expand_dims",
                  .inputs = {"x"},
                  .attrs = {{"axis", Value(), "where the new size-1 axis goes", AttrType::kInt}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        int64_t rank = static_cast<int64_t>(in[0].shape.size());
                        int64_t axis = NormalizeAxis("expand_dims", IntAttr("expand_dims", attrs, "axis"), rank + 1);
                        Shape out = in[0].shape;
                        out.insert(out.begin() + axis, 1);
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = ReshapeBack(),
                  .props = {.half_compute = HalfCompute::kExact, .view = true, .complex_grad = true},
                  .doc = "x with a size-1 axis inserted",
                  .api = {Function("expand_dims(input_x->x, axis)"), Function("unsqueeze(input->x, dim->axis)"),
                          Method("expand_dims(self->x, axis)"), Method("unsqueeze(self->x, dim->axis)"),
                          Primitive("array_ops.ExpandDims()(input_x->x, axis)")}});

MSRT_REGISTER_OP({.name = "squeeze",
                  .inputs = {"x"},
                  .attrs = {{"axis", Value(List{}), "size-1 axes to remove; [] removes all", AttrType::kAxes}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        const Shape& shape = in[0].shape;
                        int64_t rank = static_cast<int64_t>(shape.size());
                        auto axes = IntsAttr("squeeze", attrs, "axis");
                        std::vector<bool> drop(shape.size(), false);
                        if (axes.empty()) {
                          for (size_t i = 0; i < shape.size(); ++i) drop[i] = shape[i] == 1;
                        }
                        for (int64_t a : axes) {
                          int64_t n = NormalizeAxis("squeeze", a, rank);
                          if (rank == 0) continue;
                          if (shape[n] != 1) {
                            OpError(ErrorKind::kValue, "squeeze",
                                    StrCat("can not squeeze axis ", a,
                                           "; expected a dimension of size 1, but got size ", shape[n], " in shape ",
                                           ShapeRepr(shape)));
                          }
                          drop[n] = true;
                        }
                        Shape out;
                        for (size_t i = 0; i < shape.size(); ++i) {
                          if (!drop[i]) out.push_back(shape[i]);
                        }
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = ReshapeBack(),
                  .props = {.half_compute = HalfCompute::kExact, .noop_if_same_meta = true, .view = true},
                  .doc = "x without size-1 axes",
                  .api = {Function("squeeze(input->x, axis=None)"), Method("squeeze(self->x, axis=None)"),
                          Primitive("array_ops.Squeeze(axis=())(input_x->x)")}});

MSRT_REGISTER_OP({.name = "flatten",
                  .inputs = {"x"},
                  .infer =
                      [](const Metas& in, const Dict&) {
                        const Shape& shape = in[0].shape;
                        if (shape.empty()) {
                          OpError(ErrorKind::kValue, "flatten",
                                  "input 'x' must have at least one dimension; expected rank >= 1, but got shape ()");
                        }
                        int64_t rest = 1;
                        for (size_t i = 1; i < shape.size(); ++i) rest *= shape[i];
                        return Metas{{{shape[0], rest}, in[0].dtype}};
                      },
                  .grad = ReshapeBack(),
                  .props = {.half_compute = HalfCompute::kExact, .noop_if_same_meta = true, .view = true},
                  .doc = "(N, ...) to (N, rest)",
                  .api = {Primitive("nn_ops.Flatten()(input_x->x)")}});

MSRT_REGISTER_OP({.name = "concat",
                  .inputs = {"xs..."},
                  .attrs = {{"axis", 0, "the axis", AttrType::kInt}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        Shape out = CheckConcat("concat", in, IntAttr("concat", attrs, "axis"));
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    std::vector<Tensor> out(a.inputs.size());
                    if (!a.dys[0].defined()) return out;
                    int64_t axis = NormalizeAxis("concat", AttrInt(a.attrs, "axis"), a.inputs[0].ndim());
                    int64_t offset = 0;
                    for (size_t i = 0; i < a.inputs.size(); ++i) {
                      const Shape& s = a.inputs[i].shape();
                      if (a.needs[i]) {
                        std::vector<int64_t> begin(s.size(), 0), end(s.begin(), s.end()), strides(s.size(), 1);
                        begin[axis] = offset;
                        end[axis] = offset + s[axis];
                        Dict slice{{"begin", IntList(begin)}, {"end", IntList(end)}, {"strides", IntList(strides)}};
                        out[i] = Call1("strided_slice", {a.dys[0]}, slice);
                      }
                      offset += s[axis];
                    }
                    return out;
                  },
                  .props = {.half_compute = HalfCompute::kExact},
                  .doc = "tensors joined along an existing axis",
                  .api = {Function("concat|cat(tensors->xs..., axis=0)"),
                          Primitive("array_ops.Concat(axis=0)(input_x->xs...)")}});

MSRT_REGISTER_OP({.name = "stack",
                  .inputs = {"xs..."},
                  .attrs = {{"axis", 0, "the axis", AttrType::kInt}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        if (in.empty()) {
                          OpError(ErrorKind::kValue, "stack",
                                  "needs at least one tensor; expected 1 or more, but got 0");
                        }
                        for (size_t i = 1; i < in.size(); ++i) {
                          CheckSameDType("stack", "xs[0]", in[0], StrCat("xs[", i, "]"), in[i]);
                          if (in[i].shape != in[0].shape) {
                            OpError(ErrorKind::kValue, "stack",
                                    StrCat("all tensors must have the same shape; expected ", ShapeRepr(in[0].shape),
                                           ", but got ", ShapeRepr(in[i].shape), " for xs[", i, "]"));
                          }
                        }
                        int64_t rank = static_cast<int64_t>(in[0].shape.size());
                        int64_t axis = NormalizeAxis("stack", IntAttr("stack", attrs, "axis"), rank + 1);
                        Shape out = in[0].shape;
                        out.insert(out.begin() + axis, static_cast<int64_t>(in.size()));
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    std::vector<Tensor> out(a.inputs.size());
                    if (!a.dys[0].defined()) return out;
                    int64_t axis = NormalizeAxis("stack", AttrInt(a.attrs, "axis"), a.inputs[0].ndim() + 1);
                    if (a.inputs.size() == 1) return {fn::Reshape(a.dys[0], a.inputs[0].shape())};
                    Value count(static_cast<int64_t>(a.inputs.size()));
                    auto parts = Call("split", {a.dys[0]}, Dict{{"axis", Value(axis)}, {"output_num", count}});
                    for (size_t i = 0; i < out.size(); ++i) {
                      if (a.needs[i]) out[i] = fn::Reshape(parts[i], a.inputs[i].shape());
                    }
                    return out;
                  },
                  .props = {.half_compute = HalfCompute::kExact},
                  .doc = "tensors of one shape joined along a new axis",
                  .api = {Function("stack(tensors->xs..., axis=0)"),
                          Primitive("array_ops.Stack(axis=0)(input_x->xs...)")}});

MSRT_REGISTER_OP({.name = "split",
                  .inputs = {"x"},
                  .attrs = {{"axis", 0, "the axis", AttrType::kInt},
                            {"output_num", Value(), "how many equal parts", AttrType::kInt}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        const Shape& shape = in[0].shape;
                        if (shape.empty()) {
                          OpError(ErrorKind::kValue, "split",
                                  "input 'x' must have at least one dimension; expected rank >= 1, but got shape ()");
                        }
                        int64_t axis = NormalizeAxis("split", IntAttr("split", attrs, "axis"),
                                                     static_cast<int64_t>(shape.size()));
                        int64_t n = IntAttr("split", attrs, "output_num");
                        if (n < 1) {
                          OpError(ErrorKind::kValue, "split",
                                  StrCat("attribute 'output_num' must be positive; expected >= 1, but got ", n));
                        }
                        if (shape[axis] % n != 0) {
                          OpError(ErrorKind::kValue, "split",
                                  StrCat("axis ", axis, " of size ", shape[axis], " can not be split into ", n,
                                         " equal parts; expected a multiple of ", n, ", but got ", shape[axis]));
                        }
                        Shape part = shape;
                        part[axis] /= n;
                        return Metas(static_cast<size_t>(n), TensorMeta{part, in[0].dtype});
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    std::vector<Tensor> parts;
                    bool any = false;
                    for (size_t i = 0; i < a.dys.size(); ++i) {
                      if (a.dys[i].defined()) {
                        parts.push_back(a.dys[i]);
                        any = true;
                      } else {
                        parts.push_back(fn::ZerosLike(a.outputs[i]));
                      }
                    }
                    if (!any) return {Tensor()};
                    int64_t axis = NormalizeAxis("split", AttrInt(a.attrs, "axis"), a.inputs[0].ndim());
                    return {fn::Concat(parts, axis)};
                  },
                  .props = {.half_compute = HalfCompute::kExact, .tuple_outputs = true, .cheap_to_recompute = true},
                  .doc = "x cut into output_num equal parts along axis",
                  .api = {Primitive("array_ops.Split(axis=0, output_num=1)(x)")}});

MSRT_REGISTER_OP({.name = "strided_slice",
                  .inputs = {"x"},
                  .attrs = {{"begin", Value()}, {"end", Value()}, {"strides", Value()}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        SliceSpec spec = ResolveSlice(in[0].shape, attrs);
                        return Metas{{spec.out_shape, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    const Tensor& x = a.inputs[0];
                    SliceSpec spec = ResolveSlice(x.shape(), a.attrs);
                    // Scatter dy back one axis at a time: pad the axis with a zero slice,
                    // then gather every position of x's axis from dy (or from the pad).
                    Tensor g = a.dys[0];
                    for (size_t d = 0; d < x.shape().size(); ++d) {
                      int64_t n = x.shape()[d];
                      int64_t len = spec.out_shape[d];
                      if (spec.start[d] == 0 && spec.step[d] == 1 && len == n) continue;
                      std::vector<int64_t> map(static_cast<size_t>(n), len);
                      for (int64_t k = 0; k < len; ++k) map[spec.start[d] + k * spec.step[d]] = k;
                      Shape pad_shape = g.shape();
                      pad_shape[d] = 1;
                      Tensor padded = fn::Concat({g, fn::Fill(pad_shape, 0.0, g.dtype())}, static_cast<int64_t>(d));
                      g = fn::Gather(padded, fn::Int64Tensor(map), static_cast<int64_t>(d));
                    }
                    return {g};
                  },
                  .props = {.half_compute = HalfCompute::kExact},
                  .doc = "x[begin:end:strides] per axis, with Python slice semantics"});

MSRT_REGISTER_OP(
    {.name = "gather",
     .inputs = {"params", "indices"},
     .attrs = {{"axis", 0, "the axis", AttrType::kInt}},
     .infer =
         [](const Metas& in, const Dict& attrs) {
           CheckDType("gather", "indices", in[1], DTypeClass::kIndex);
           const Shape& p = in[0].shape;
           if (p.empty()) {
             OpError(ErrorKind::kValue, "gather",
                     "input 'params' must have at least one dimension; expected rank >= 1, but got shape ()");
           }
           int64_t rank = static_cast<int64_t>(p.size());
           int64_t axis = NormalizeAxis("gather", IntAttr("gather", attrs, "axis"), rank);
           Shape out(p.begin(), p.begin() + axis);
           out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
           out.insert(out.end(), p.begin() + axis + 1, p.end());
           return Metas{{out, in[0].dtype}};
         },
     .grad = [](const GradArgs& a) -> std::vector<Tensor> {
       if (!a.dys[0].defined() || !a.needs[0]) return {Tensor(), Tensor()};
       const Tensor& params = a.inputs[0];
       int64_t axis = NormalizeAxis("gather", AttrInt(a.attrs, "axis"), params.ndim());
       Tensor g = Call1("gather_grad", {a.dys[0], a.inputs[1]},
                        Dict{{"axis", Value(axis)}, {"dim_size", Value(params.shape()[axis])}});
       return {g, Tensor()};
     },
     .props = {.half_compute = HalfCompute::kExact},
     .doc = "slices of params along axis picked by indices (out of range raises IndexError)",
     .api = {Function("gather(input_params->params, input_indices->indices, axis, batch_dims->!=0)"),
             Method("gather(self->params, input_indices->indices, axis, batch_dims->!=0)"),
             Primitive(
                 "array_ops.Gather|GatherV2(batch_dims->!=0)(input_params->params, input_indices->indices, axis)")}});

// Not in the catalogue: gather's gradient is a scatter-add, which no
// catalogue op does in linear time (MindSpore uses UnsortedSegmentSum).
MSRT_REGISTER_OP({.name = "gather_grad",
                  .inputs = {"dy", "indices"},
                  .attrs = {{"axis", 0, "the axis", AttrType::kInt},
                            {"dim_size", Value(), "size of params along axis", AttrType::kInt}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckDType("gather_grad", "indices", in[1], DTypeClass::kIndex);
                        CheckDType("gather_grad", "dy", in[0], DTypeClass::kNumber);
                        int64_t axis = IntAttr("gather_grad", attrs, "axis");
                        int64_t dim = IntAttr("gather_grad", attrs, "dim_size");
                        const Shape& dy = in[0].shape;
                        int64_t k = static_cast<int64_t>(in[1].shape.size());
                        if (axis < 0 || dim < 0 || axis + k > static_cast<int64_t>(dy.size()) ||
                            !std::equal(in[1].shape.begin(), in[1].shape.end(), dy.begin() + axis)) {
                          OpError(ErrorKind::kValue, "gather_grad",
                                  StrCat("'dy' does not match 'indices' at axis ", axis, "; expected indices shape ",
                                         ShapeRepr(in[1].shape), " inside dy, but got dy shape ", ShapeRepr(dy)));
                        }
                        Shape out(dy.begin(), dy.begin() + axis);
                        out.push_back(dim);
                        out.insert(out.end(), dy.begin() + axis + k, dy.end());
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined() || !a.needs[0]) return {Tensor(), Tensor()};
                    return {fn::Gather(a.dys[0], a.inputs[1], AttrInt(a.attrs, "axis")), Tensor()};
                  },
                  .props = {.half_compute = HalfCompute::kRoundedFloat32},
                  .doc = "scatter-add of dy into dim_size slots along axis (internal: the gradient of gather)"});

MSRT_REGISTER_OP({.name = "one_hot",
                  .inputs = {"indices"},
                  .attrs = {{"depth", Value(), "number of classes", AttrType::kInt},
                            {"on_value", 1.0, "value at the index", AttrType::kFloat},
                            {"off_value", 0.0, "value elsewhere", AttrType::kFloat},
                            {"axis", -1, "where the new axis goes", AttrType::kInt},
                            {"dtype", "float32", "output dtype", AttrType::kDType}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        CheckDType("one_hot", "indices", in[0], DTypeClass::kIndex);
                        int64_t depth = IntAttr("one_hot", attrs, "depth");
                        if (depth < 0) {
                          OpError(ErrorKind::kValue, "one_hot",
                                  StrCat("attribute 'depth' must not be negative; expected >= 0, but got ", depth));
                        }
                        FloatAttr("one_hot", attrs, "on_value");
                        FloatAttr("one_hot", attrs, "off_value");
                        int64_t rank = static_cast<int64_t>(in[0].shape.size());
                        int64_t axis = IntAttr("one_hot", attrs, "axis");
                        if (axis < -1 || axis > rank) {
                          OpError(ErrorKind::kValue, "one_hot",
                                  StrCat("attribute 'axis' is out of range; expected it in [-1, ", rank, "], but got ",
                                         axis));
                        }
                        Shape out = in[0].shape;
                        out.insert(axis == -1 ? out.end() : out.begin() + axis, depth);
                        return Metas{{out, DTypeAttr("one_hot", attrs, "dtype")}};
                      },
                  .doc = "on_value where the index matches, off_value elsewhere (out-of-range indices give all off)"});

MSRT_REGISTER_OP({.name = "broadcast_to",
                  .inputs = {"x"},
                  .attrs = {{"shape", Value(), "target shape; -1 keeps x's size", AttrType::kShape}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        auto target = ShapeAttr("broadcast_to", attrs, "shape", -1);
                        return Metas{{BroadcastTarget("broadcast_to", in[0].shape, target), in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    return {SumToShape(a.dys[0], a.inputs[0].shape())};
                  },
                  .props = {.half_compute = HalfCompute::kExact, .noop_if_same_meta = true},
                  .doc = "x broadcast to shape (NumPy rules)",
                  .api = {Function("broadcast_to(input->x, shape)"), Method("broadcast_to(self->x, shape)"),
                          Primitive("array_ops.BroadcastTo(shape)(input_x->x)")}});

MSRT_REGISTER_OP({.name = "tile",
                  .inputs = {"x"},
                  .attrs = {{"multiples", Value(), "repetitions per axis; at least x's rank entries", AttrType::kInts}},
                  .infer =
                      [](const Metas& in, const Dict& attrs) {
                        auto multiples = ShapeAttr("tile", attrs, "multiples", 0);
                        Shape padded = PadShape("tile", in[0].shape, multiples);
                        Shape out(padded.size());
                        for (size_t i = 0; i < padded.size(); ++i) out[i] = CheckedMul(padded[i], multiples[i], "tile");
                        return Metas{{out, in[0].dtype}};
                      },
                  .grad = [](const GradArgs& a) -> std::vector<Tensor> {
                    if (!a.dys[0].defined()) return {Tensor()};
                    const Tensor& x = a.inputs[0];
                    auto multiples = ShapeAttr("tile", a.attrs, "multiples", 0);
                    Shape padded = PadShape("tile", x.shape(), multiples);
                    // dy viewed as (m0, d0, m1, d1, ...), summed over the m axes.
                    Shape interleaved;
                    std::vector<int64_t> axes;
                    for (size_t i = 0; i < padded.size(); ++i) {
                      axes.push_back(static_cast<int64_t>(interleaved.size()));
                      interleaved.push_back(multiples[i]);
                      interleaved.push_back(padded[i]);
                    }
                    Tensor summed = fn::ReduceSum(fn::Reshape(a.dys[0], interleaved), axes, false);
                    return {fn::Reshape(summed, x.shape())};
                  },
                  .props = {.half_compute = HalfCompute::kExact},
                  .doc = "x repeated multiples[i] times along axis i"});

MSRT_REGISTER_OP({.name = "fill",
                  .inputs = {},
                  .attrs = {{"shape", Value(), "the output shape (sizes >= 0)", AttrType::kInts},
                            {"value", Value(), "the fill value", AttrType::kFloat},
                            {"dtype", "float32", "output dtype (None: float32)", AttrType::kDType, {}, true}},
                  .infer =
                      [](const Metas&, const Dict& attrs) {
                        FloatAttr("fill", attrs, "value");
                        auto shape = ShapeAttr("fill", attrs, "shape", 0);
                        DType dtype = Attr(attrs, "dtype").is_none() ? DType::kFloat32
                                                                     : DTypeAttr("fill", attrs, "dtype");
                        return Metas{{Shape(shape.begin(), shape.end()), dtype}};
                      },
                  .doc = "a tensor of shape filled with value",
                  .api = {Function("fill(type->dtype, shape, value)"),
                          Primitive("array_ops.Fill()(type->dtype, shape, value)")}});

}  // namespace
}  // namespace msrt::ops
