// MindSpore's shape functions that check their arguments or compose shape
// ops: flatten over a range of axes, split by a size or by sections,
// strided_slice with masks, slice by sizes, tile with fewer dims than the
// input, and one_hot with tensor values. Composites: no kernel and no
// gradient of their own (the ops they call have them).
#include "core/strings.h"
#include "ops/grad_utils.h"
#include "ops/op_checks.h"
#include "ops/shape_utils.h"

namespace msrt::ops {
namespace {

Tensor Reshape(const Tensor& x, const std::vector<int64_t>& shape) {
  return Call1("reshape", {x}, Dict{{"shape", IntList(shape)}});
}

Tensor StridedSlice(const Tensor& x, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                    const std::vector<int64_t>& strides) {
  return Call1("strided_slice", {x},
               Dict{{"begin", IntList(begin)}, {"end", IntList(end)}, {"strides", IntList(strides)}});
}

MSRT_REGISTER_OP({.name = "flatten_dims",
                  .inputs = {"x"},
                  .attrs = {{"order", "C", "'C' (row-major; 'F' is not supported)", AttrType::kString, {"C", "F"}},
                            {"start_dim", 1, "the first axis flattened", AttrType::kInt},
                            {"end_dim", -1, "the last axis flattened", AttrType::kInt}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "flatten_dims";
                    if (AttrString(attrs, "order") == "F") {
                      OpError(ErrorKind::kNotImplemented, op,
                              "order='F' is not supported by msrt; expected 'C', but got 'F'");
                    }
                    const Tensor& x = in[0];
                    int64_t nd = x.ndim();
                    if (nd <= 1) return {Reshape(x, {-1})};
                    int64_t start_dim = AttrInt(attrs, "start_dim");
                    int64_t end_dim = AttrInt(attrs, "end_dim");
                    int64_t start = start_dim < 0 ? start_dim + nd : start_dim;
                    int64_t end = end_dim < 0 ? end_dim + nd : end_dim;
                    if (start < 0 || start >= nd || end < 0 || end >= nd) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("'start_dim' and 'end_dim' must be in [", -nd, ", ", nd, "), but got ", start_dim,
                                     " and ", end_dim));
                    }
                    if (start > end) {
                      OpError(ErrorKind::kValue, op,
                              StrCat("'start_dim' (", start_dim, ") must not come after 'end_dim' (", end_dim, ")"));
                    }
                    if (start == 1 && end == nd - 1) return {Call1("flatten", {x})};
                    const Shape& shape = x.shape();
                    std::vector<int64_t> target(shape.begin(), shape.begin() + start);
                    target.push_back(-1);
                    target.insert(target.end(), shape.begin() + end + 1, shape.end());
                    return {Reshape(x, target)};
                  },
                  .doc = "the axes start_dim..end_dim joined into one (composite)",
                  .api = {Function("flatten(input->x, order='C', *, start_dim=1, end_dim=-1)"),
                          Method("flatten(self->x, order='C', *, start_dim=0, end_dim=-1)")}});

bool IsInt(const Value& v) { return v.is_int() && !v.is_bool(); }

// split always returns a tuple, one part included (props.tuple_outputs).
MSRT_REGISTER_OP(
    {.name = "split_sections",
     .inputs = {"x"},
     .attrs = {{"split_size_or_sections",
                Value(),
                "every part's size (the last may be smaller), or each part's",
                AttrType::kAny,
                {},
                false,
                [](std::string_view op, const Value& v) {
                  bool ok = IsInt(v);
                  if (!ok && v.is_sequence()) {
                    ok = true;
                    for (const Value& item : v.as_list()) ok = ok && IsInt(item);
                  }
                  if (!ok) {
                    OpError(ErrorKind::kType, op,
                            StrCat("attribute 'split_size_or_sections' must be an int or a sequence of ints, but got ",
                                   v.type_name(), " ", v.repr()));
                  }
                }},
               {"axis", 0, "the axis", AttrType::kInt}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "split_sections";
       const Tensor& x = in[0];
       int64_t axis = AttrInt(attrs, "axis");
       int64_t nd = x.ndim();
       int64_t ax = NormalizeAxis(op, axis, nd);
       int64_t n = x.shape()[ax];
       const Value& spec = Attr(attrs, "split_size_or_sections");
       std::vector<int64_t> sizes;
       if (IsInt(spec)) {
         int64_t size = spec.as_int();
         if (size <= 0) {
           OpError(ErrorKind::kValue, op, StrCat("'split_size_or_sections' must be positive, but got ", size));
         }
         if (n % size == 0) return Call("split", {x}, Dict{{"axis", Value(axis)}, {"output_num", Value(n / size)}});
         sizes.assign(static_cast<size_t>(n / size), size);
         sizes.push_back(n % size);
       } else {
         int64_t total = 0;
         for (const Value& item : spec.as_list()) {
           sizes.push_back(item.as_int());
           total += item.as_int();
         }
         if (total != n) {
           OpError(ErrorKind::kValue, op,
                   StrCat("the sections ", IntsRepr(sizes), " must add up to the size of axis ", axis, " (", n, ")"));
         }
       }
       std::vector<Tensor> out;
       int64_t start = 0;
       for (int64_t s : sizes) {
         std::vector<int64_t> begin(static_cast<size_t>(nd), 0), end(x.shape().begin(), x.shape().end());
         begin[ax] = start;
         end[ax] = start + s;
         out.push_back(StridedSlice(x, begin, end, std::vector<int64_t>(static_cast<size_t>(nd), 1)));
         start += s;
       }
       return out;
     },
     .props = {.tuple_outputs = true},
     .doc = "x cut along axis into parts of split_size_or_sections (an int: that size each, the last smaller; a "
            "list: those sizes) (composite)",
     .api = {Function("split(tensor->x, split_size_or_sections, axis=0)"),
             Method("split(self->x, split_size_or_sections, axis=0)")}});

bool Bit(int64_t mask, size_t i) { return i < 64 && ((static_cast<uint64_t>(mask) >> i) & 1U) != 0; }

MSRT_REGISTER_OP(
    {.name = "strided_slice_masked",
     .inputs = {"x"},
     .attrs = {{"begin", Value(), "the first index per axis", AttrType::kInts},
               {"end", Value(), "the end (exclusive) per axis", AttrType::kInts},
               {"strides", Value(), "the step per axis", AttrType::kInts},
               {"begin_mask", 0, "bit i set: axis i begins at its start", AttrType::kInt},
               {"end_mask", 0, "bit i set: axis i runs to its end", AttrType::kInt},
               {"shrink_axis_mask", 0, "bit i set: axis i (of size 1) is removed", AttrType::kInt}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       const Tensor& x = in[0];
       const Shape& shape = x.shape();
       size_t nd = shape.size();
       std::vector<int64_t> begin = AttrInts(attrs, "begin");
       std::vector<int64_t> end = AttrInts(attrs, "end");
       std::vector<int64_t> strides = AttrInts(attrs, "strides");
       // Axes past `begin` are taken whole (strided_slice checks the lengths agree).
       for (size_t i = begin.size(); i < nd; ++i) {
         begin.push_back(0);
         end.push_back(shape[i]);
         strides.push_back(1);
       }
       int64_t begin_mask = AttrInt(attrs, "begin_mask");
       int64_t end_mask = AttrInt(attrs, "end_mask");
       for (size_t i = 0; i < nd && i < end.size() && i < strides.size(); ++i) {
         if (Bit(begin_mask, i)) begin[i] = strides[i] > 0 ? 0 : shape[i] - 1;
         if (Bit(end_mask, i)) end[i] = strides[i] > 0 ? shape[i] : -shape[i] - 1;
       }
       Tensor out = StridedSlice(x, begin, end, strides);
       int64_t shrink = AttrInt(attrs, "shrink_axis_mask");
       if (shrink == 0) return {out};
       std::vector<int64_t> axes;
       for (size_t i = 0; i < nd; ++i) {
         if (Bit(shrink, i)) axes.push_back(static_cast<int64_t>(i));
       }
       return {Call1("squeeze", {out}, Dict{{"axis", IntList(axes)}})};
     },
     .doc = "x[begin:end:strides] per axis, with masks that take an axis from its start or to its end, or remove "
            "it (composite)",
     .api = {Function("strided_slice(input_x->x, begin, end, strides, begin_mask=0, end_mask=0, "
                      "ellipsis_mask->!=0, new_axis_mask->!=0, shrink_axis_mask=0)"),
             Primitive("array_ops.StridedSlice(begin_mask=0, end_mask=0, ellipsis_mask->!=0, new_axis_mask->!=0, "
                       "shrink_axis_mask=0)(input_x->x, begin, end, strides)")}});

// Tensor.transpose(*axes): no axes (or None) reverses them.
MSRT_REGISTER_OP({.name = "transpose_axes",
                  .inputs = {"x"},
                  .attrs = {{"axes",
                             Value(List{}),
                             "a permutation of the axes; empty or (None,): reversed",
                             AttrType::kAny,
                             {},
                             false,
                             [](std::string_view op, const Value& v) {
                               bool ok = v.is_none() || v.is_sequence();
                               if (ok && v.is_sequence()) {
                                 const List& items = v.as_list();
                                 bool none = items.size() == 1 && items[0].is_none();
                                 for (const Value& item : items) ok = ok && (none || IsInt(item));
                               }
                               if (!ok) {
                                 OpError(ErrorKind::kType, op,
                                         StrCat("attribute 'axes' must be None or a sequence of ints, but got ",
                                                v.type_name(), " ", v.repr()));
                               }
                             }}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    const Value& axes = Attr(attrs, "axes");
                    std::vector<int64_t> perm;
                    if (axes.is_none() || axes.as_list().empty() || axes.as_list()[0].is_none()) {
                      for (int64_t i = in[0].ndim() - 1; i >= 0; --i) perm.push_back(i);
                    } else {
                      for (const Value& item : axes.as_list()) perm.push_back(item.as_int());
                    }
                    return {Call1("transpose", {in[0]}, Dict{{"perm", IntList(perm)}})};
                  },
                  .doc = "x with its axes permuted; no axes: reversed (composite)",
                  .api = {Method("transpose(self->x, *axes)")}});

// Its errors say "For 'Slice'", as MindSpore's do (tests/python/tensor/test_inputs.py).
MSRT_REGISTER_OP(
    {.name = "slice",
     .inputs = {"x"},
     .attrs = {{"begin", Value(), "the first index per axis", AttrType::kInts},
               {"size", Value(), "the size per axis; -1 runs to the end", AttrType::kInts}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "slice";
       const Tensor& x = in[0];
       const Shape& shape = x.shape();
       std::vector<int64_t> begin = AttrInts(attrs, "begin");
       std::vector<int64_t> size = AttrInts(attrs, "size");
       if (begin.size() != shape.size() || size.size() != shape.size()) {
         OpError(ErrorKind::kValue, op,
                 StrCat("For 'Slice', 'begin' and 'size' must have one entry per dimension of the input ",
                        ShapeRepr(shape), ", but got begin=", IntsRepr(begin), " and size=", IntsRepr(size)));
       }
       std::vector<int64_t> end;
       for (size_t i = 0; i < shape.size(); ++i) {
         int64_t b = begin[i];
         int64_t s = size[i];
         int64_t e = s == -1 ? shape[i] : b + s;
         if (!(0 <= b && b <= e && e <= shape[i]) || s < -1) {
           OpError(ErrorKind::kValue, op,
                   StrCat("For 'Slice', the slice of dimension ", i, " must lie in [0, ", shape[i],
                          "] (size -1: up to the end), but got begin=", b, " and size=", s));
         }
         end.push_back(e);
       }
       return {StridedSlice(x, begin, end, std::vector<int64_t>(shape.size(), 1))};
     },
     .doc = "x[begin[i]:begin[i] + size[i]] per axis (size -1: to the end) (composite)",
     .api = {Function("slice(input_x->x, begin, size)"), Primitive("array_ops.Slice()(input_x->x, begin, size)")}});

MSRT_REGISTER_OP({.name = "tile_dims",
                  .inputs = {"x"},
                  .attrs = {{"dims", Value(), "repetitions per axis; missing leading ones are 1", AttrType::kInts}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    std::vector<int64_t> dims = AttrInts(attrs, "dims");
                    size_t nd = in[0].shape().size();
                    if (dims.size() < nd) dims.insert(dims.begin(), nd - dims.size(), 1);
                    return {Call1("tile", {in[0]}, Dict{{"multiples", IntList(dims)}})};
                  },
                  .doc = "x repeated dims[i] times along axis i, dims padded with leading 1s to x's rank (composite)",
                  .api = {Function("tile(input->x, dims)"), Method("tile(self->x, *reps->dims)"),
                          Primitive("array_ops.Tile()(input_x->x, multiples->dims)")}});

// The value a one-element tensor holds (read on the host, as MindSpore reads
// one_hot's on_value and off_value).
double Item(std::string_view op, std::string_view name, const Tensor& t) {
  if (t.numel() != 1) {
    OpError(ErrorKind::kValue, op,
            StrCat("input '", name, "' must hold one value; expected 1 element, but got shape ", ShapeRepr(t.shape())));
  }
  const void* p = t.data();
  switch (t.dtype()) {
    case DType::kBool: return *static_cast<const bool*>(p) ? 1.0 : 0.0;
    case DType::kUInt8: return *static_cast<const uint8_t*>(p);
    case DType::kInt8: return *static_cast<const int8_t*>(p);
    case DType::kInt16: return *static_cast<const int16_t*>(p);
    case DType::kInt32: return *static_cast<const int32_t*>(p);
    case DType::kInt64: return static_cast<double>(*static_cast<const int64_t*>(p));
    case DType::kFloat16: return HalfToFloat(*static_cast<const Half*>(p));
    case DType::kBFloat16: return BFloat16ToFloat(*static_cast<const BFloat16*>(p));
    case DType::kFloat32: return *static_cast<const float*>(p);
    case DType::kFloat64: return *static_cast<const double*>(p);
    case DType::kUInt16: return *static_cast<const uint16_t*>(p);
    case DType::kUInt32: return *static_cast<const uint32_t*>(p);
    case DType::kUInt64: return static_cast<double>(*static_cast<const uint64_t*>(p));
    case DType::kComplex64:
    case DType::kComplex128: break;
  }
  OpError(ErrorKind::kType, op,
          StrCat("input '", name, "' must hold a real value; expected a real dtype, but got ", DTypeName(t.dtype())));
}

MSRT_REGISTER_OP(
    {.name = "one_hot_values",
     .inputs = {"indices", "on_value", "off_value"},
     .attrs = {{"depth", Value(), "number of classes", AttrType::kInt},
               {"axis", -1, "where the new axis goes", AttrType::kInt}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "one_hot_values";
       Dict args{{"depth", Attr(attrs, "depth")},
                 {"on_value", Value(Item(op, "on_value", in[1]))},
                 {"off_value", Value(Item(op, "off_value", in[2]))},
                 {"axis", Attr(attrs, "axis")},
                 {"dtype", Value(std::string(DTypeAttrName(in[1].dtype())))}};
       return {Call1("one_hot", {in[0]}, args)};
     },
     .doc = "one_hot whose values are tensors (a Python int is an int64 one, a float a float32 one); the output "
            "has on_value's dtype (composite)",
     .api = {Function("one_hot(indices, depth, on_value=1, off_value=0, axis=-1)"),
             Primitive("nn_ops.OneHot(axis=-1)(indices, depth, on_value, off_value)")}});

// Tensor conveniences over reshape, broadcast_to and transpose.
MSRT_REGISTER_OP({.name = "reshape_as",
                  .inputs = {"x", "other"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    return {fn::Reshape(in[0], in[1].shape())};
                  },
                  .doc = "x in other's shape (composite)",
                  .api = {Method("reshape_as|view_as(self->x, other)")}});

MSRT_REGISTER_OP({.name = "expand_as",
                  .inputs = {"x", "other"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    return {fn::BroadcastTo(in[0], in[1].shape())};
                  },
                  .doc = "x broadcast to other's shape (composite)",
                  .api = {Method("expand_as(self->x, other)")}});

MSRT_REGISTER_OP({.name = "ravel",
                  .inputs = {"x"},
                  .composite = [](const std::vector<Tensor>& in, const Dict&) -> std::vector<Tensor> {
                    return {fn::Reshape(in[0], {-1})};
                  },
                  .doc = "x flattened to one dimension (composite)",
                  .api = {Function("ravel(input->x)"), Method("ravel(self->x)")}});

MSRT_REGISTER_OP({.name = "swapaxes",
                  .inputs = {"x"},
                  .attrs = {{"axis0", Value(), "one axis", AttrType::kInt},
                            {"axis1", Value(), "the other", AttrType::kInt}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    int64_t nd = in[0].ndim();
                    std::vector<int64_t> perm(static_cast<size_t>(nd));
                    for (int64_t i = 0; i < nd; ++i) perm[static_cast<size_t>(i)] = i;
                    std::swap(perm[static_cast<size_t>(NormalizeAxis("swapaxes", AttrInt(attrs, "axis0"), nd))],
                              perm[static_cast<size_t>(NormalizeAxis("swapaxes", AttrInt(attrs, "axis1"), nd))]);
                    return {fn::Transpose(in[0], perm)};
                  },
                  .doc = "x with two axes exchanged (composite)",
                  .api = {Function("swapaxes(input->x, axis0, axis1)"), Method("swapaxes(self->x, axis0, axis1)")}});

}  // namespace
}  // namespace msrt::ops
