// MindSpore's functions made of other ops: logsumexp, norm (vector and
// matrix norms), chunk, meshgrid, pad (constant, reflect, replicate,
// circular) and einsum. Composites: no kernel and no gradient of their own.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "ops/grad_utils.h"
#include "ops/op_checks.h"

namespace msrt::ops {
namespace {

Tensor Reduce(std::string_view op, const Tensor& x, const std::vector<int64_t>& axes, bool keep_dims) {
  return Call1(op, {x}, Dict{{"axis", IntList(axes)}, {"keep_dims", Value(keep_dims)}});
}

Tensor Abs(const Tensor& x) { return Call1("abs", {x}); }

Value DTypeValue(DType dtype) { return Value(std::string(DTypeAttrName(dtype))); }

// ---- logsumexp ----

MSRT_REGISTER_OP({.name = "logsumexp",
                  .inputs = {"x"},
                  .attrs = {{"axis", Value(), "an int or ints ([]: every axis)", AttrType::kAxes},
                            {"keep_dims", false, "keep reduced axes with size 1", AttrType::kBool}},
                  .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
                    constexpr std::string_view op = "logsumexp";
                    Tensor x = in[0];
                    CheckDType(op, "x", {x.shape(), x.dtype()}, DTypeClass::kNumber);
                    if (!IsFloating(x.dtype())) x = fn::Cast(x, DType::kFloat32);
                    const auto axes = ReductionAxes(op, AttrInts(attrs, "axis"), x.ndim());
                    const bool keep = AttrBool(attrs, "keep_dims");
                    // Shifted by the max (0 where the max is infinite, so inf - inf never appears).
                    Tensor m = Reduce("reduce_max", x, axes, true);
                    Tensor infinite = fn::Equal(Abs(m), fn::Scalar(std::numeric_limits<double>::infinity(), m));
                    m = fn::Select(infinite, fn::ZerosLike(m), m);
                    Tensor sum = Reduce("reduce_sum", fn::Exp(fn::Sub(x, m)), axes, keep);
                    return {fn::Add(fn::Log(sum), keep ? m : fn::Reshape(m, sum.shape()))};
                  },
                  .doc = "log(sum(exp(x))) over axes, computed shifted by the max (integers give float32) (composite)",
                  .api = {Function("logsumexp(input->x, axis, keep_dims=False)"),
                          Method("logsumexp(self->x, axis, keepdims->keep_dims=False)")}});

// ---- norm ----

// ord: None, a number (inf included) or 'fro' / 'nuc'.
void CheckOrd(std::string_view op, const Value& v) {
  if (v.is_none() || v.is_float() || v.is_int()) return;
  if (v.is_string() && (v.as_string() == "fro" || v.as_string() == "nuc")) return;
  OpError(ErrorKind::kType, op,
          StrCat("attribute 'ord' must be None, a number, 'fro' or 'nuc', but got ", v.type_name(), " ", v.repr()));
}

// dim: None, an int, or one or two ints.
void CheckNormDim(std::string_view op, const Value& v) {
  bool ok = v.is_none() || v.is_int();
  if (v.is_sequence()) {
    ok = !v.as_list().empty() && v.as_list().size() <= 2;
    for (const Value& item : v.as_list()) ok = ok && item.is_int();
  }
  if (!ok) {
    OpError(ErrorKind::kType, op,
            StrCat("attribute 'dim' must be None, an int or a tuple of 1 or 2 ints, but got ", v.type_name(), " ",
                   v.repr()));
  }
}

// s ** exponent (> 0) with a zero gradient where s is 0 (where the root's
// own derivative is infinite), as PyTorch's norms give at the zero vector.
Tensor Root(const Tensor& s, double exponent) {
  if (exponent < 0) return Call1("pow", {s, fn::Scalar(exponent, s)});  // 0 ** -k is inf, its derivative too
  Tensor zero = fn::Equal(s, fn::Scalar(0, s));
  Tensor safe = fn::Select(zero, fn::OnesLike(s), s);
  Tensor root = exponent == 0.5 ? Call1("sqrt", {safe}) : Call1("pow", {safe, fn::Scalar(exponent, s)});
  return fn::Select(zero, fn::ZerosLike(s), root);
}

Tensor VectorNorm(std::string_view op, const Tensor& x, const Value& ord, const std::vector<int64_t>& axes) {
  if (ord.is_string()) {
    OpError(ErrorKind::kType, op,
            StrCat("ord ", ord.repr(),
                   " is a matrix norm; expected a number for a vector norm (an int 'dim'), but "
                   "got a string"));
  }
  const double p = ord.is_none() ? 2.0 : ord.as_float();
  if (std::isinf(p)) return Reduce(p > 0 ? "reduce_max" : "reduce_min", Abs(x), axes, true);
  if (p == 0) return Reduce("reduce_sum", fn::Cast(Call1("not_equal", {x, fn::Scalar(0, x)}), x.dtype()), axes, true);
  if (p == 1) return Reduce("reduce_sum", Abs(x), axes, true);
  if (p == 2) return Root(Reduce("reduce_sum", fn::Square(x), axes, true), 0.5);
  Tensor powered = p < 1 ? Root(Abs(x), p) : Call1("pow", {Abs(x), fn::Scalar(p, x)});  // |x| ** p
  return Root(Reduce("reduce_sum", powered, axes, true), 1.0 / p);
}

Tensor MatrixNorm(std::string_view op, const Tensor& x, const Value& ord, int64_t row, int64_t col) {
  if (ord.is_none() || (ord.is_string() && ord.as_string() == "fro")) {
    return Root(Reduce("reduce_sum", fn::Square(x), {std::min(row, col), std::max(row, col)}, true), 0.5);
  }
  if (ord.is_string() || ord.as_float() == 2 || ord.as_float() == -2) {
    OpError(ErrorKind::kNotImplemented, op,
            StrCat("the matrix norm ord=", ord.repr(),
                   " needs singular values, which msrt does not compute; expected None, 'fro', 1, -1, inf or -inf"));
  }
  const double p = ord.as_float();
  // inf: the largest row sum of |x| (sum over columns); 1: the largest column sum.
  if (std::isinf(p) || p == 1 || p == -1) {
    const bool rows = std::isinf(p);
    Tensor sums = Reduce("reduce_sum", Abs(x), {rows ? col : row}, true);
    return Reduce(p > 0 ? "reduce_max" : "reduce_min", sums, {rows ? row : col}, true);
  }
  OpError(ErrorKind::kValue, op,
          StrCat("ord ", ord.repr(), " is not a matrix norm; expected None, 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2"));
}

MSRT_REGISTER_OP(
    {.name = "norm",
     .inputs = {"x"},
     .attrs = {{.name = "ord",
                .default_value = Value(),
                .doc = "None, a number (inf included), 'fro' or 'nuc'",
                .type = AttrType::kAny,
                .optional = true,
                .check = CheckOrd},
               {.name = "dim",
                .default_value = Value(),
                .doc = "None, an int (a vector norm) or two ints (a matrix norm)",
                .type = AttrType::kAny,
                .optional = true,
                .check = CheckNormDim},
               {"keepdim", false, "keep reduced axes with size 1", AttrType::kBool},
               {.name = "dtype",
                .default_value = Value(),
                .doc = "the dtype x is cast to first",
                .type = AttrType::kDType,
                .optional = true}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "norm";
       Tensor x = in[0];
       if (!Attr(attrs, "dtype").is_none()) x = fn::Cast(x, DTypeAttr(op, attrs, "dtype"));
       CheckDType(op, "x", {x.shape(), x.dtype()}, DTypeClass::kFloat);
       const Value& ord = Attr(attrs, "ord");
       const Value& dim = Attr(attrs, "dim");
       const int64_t nd = x.ndim();
       std::vector<int64_t> axes;
       if (dim.is_none()) {
         if (ord.is_none()) {
           for (int64_t i = 0; i < nd; ++i) axes.push_back(i);
         } else if (nd == 1 || nd == 2) {
           for (int64_t i = 0; i < nd; ++i) axes.push_back(i);
         } else {
           OpError(ErrorKind::kValue, op,
                   StrCat("with 'ord' given and 'dim' None the input must be 1-D or 2-D; expected rank 1 or 2, but "
                          "got shape ",
                          ShapeRepr(x.shape())));
         }
       } else if (dim.is_int()) {
         axes.push_back(NormalizeAxis(op, dim.as_int(), nd));
       } else {
         for (const Value& d : dim.as_list()) axes.push_back(NormalizeAxis(op, d.as_int(), nd));
         if (axes.size() == 2 && axes[0] == axes[1]) {
           OpError(ErrorKind::kValue, op, StrCat("the two axes of 'dim' must differ, but got ", dim.repr()));
         }
       }
       const bool matrix = (dim.is_sequence() && axes.size() == 2) || (dim.is_none() && !ord.is_none() && nd == 2);
       Tensor out = matrix
                        ? MatrixNorm(op, x, ord, axes[0], axes[1])
                        : (axes.empty() ? VectorNorm(op, fn::Reshape(x, {1}), ord, {0}) : VectorNorm(op, x, ord, axes));
       if (axes.empty()) return {fn::Reshape(out, x.shape())};  // a 0-d x
       if (AttrBool(attrs, "keepdim")) return {out};
       return {Call1("squeeze", {out}, Dict{{"axis", IntList(axes)}})};
     },
     .doc = "a vector norm (ord None/2, 1, inf, -inf, 0 or any p; an int dim) or a matrix norm ('fro', 1, -1, inf, "
            "-inf; two dims) (composite)",
     .api = {Function("norm(A->x, ord=None, dim=None, keepdim=False, *, dtype=None)"),
             Method("norm(self->x, ord=None, dim=None, keepdim=False, *, dtype=None)")}});

// ---- chunk ----

MSRT_REGISTER_OP(
    {.name = "chunk",
     .inputs = {"x"},
     .attrs = {{"chunks", Value(), "how many parts at most (> 0)", AttrType::kInt},
               {"axis", 0, "the axis", AttrType::kInt}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "chunk";
       const Tensor& x = in[0];
       const int64_t chunks = AttrInt(attrs, "chunks");
       if (chunks <= 0) {
         OpError(ErrorKind::kValue, op, StrCat("'chunks' must be positive, but got ", chunks));
       }
       if (x.ndim() == 0) {
         OpError(ErrorKind::kValue, op, "input 'x' must have rank at least 1, but got shape ()");
       }
       const int64_t axis = AttrInt(attrs, "axis");
       const int64_t n = x.shape()[NormalizeAxis(op, axis, x.ndim())];
       if (n == 0) return {Call1("identity", {x})};
       const int64_t size = (n + chunks - 1) / chunks;  // every part but the last has this size
       return Call("split_sections", {x}, Dict{{"split_size_or_sections", Value(size)}, {"axis", Value(axis)}});
     },
     .props = {.tuple_outputs = true},
     .doc = "x cut along axis into at most `chunks` parts of ceil(n / chunks) (the last smaller) "
            "(composite)",
     .api = {Function("chunk(input->x, chunks, axis=0)"), Method("chunk(self->x, chunks, axis=0)")}});

// ---- meshgrid ----

MSRT_REGISTER_OP(
    {.name = "meshgrid",
     .inputs = {"xs..."},
     .attrs = {{"indexing",
                "xy",
                "'xy' (Cartesian: the first two axes swapped) or 'ij' (matrix)",
                AttrType::kString,
                {"xy", "ij"}}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "meshgrid";
       if (in.empty()) OpError(ErrorKind::kValue, op, "expected at least one input tensor, but got none");
       Shape shape;
       for (size_t i = 0; i < in.size(); ++i) {
         if (in[i].ndim() != 1) {
           OpError(ErrorKind::kValue, op,
                   StrCat("every input must be 1-D; expected rank 1, but input ", i, " has shape ",
                          ShapeRepr(in[i].shape())));
         }
         if (in[i].dtype() != in[0].dtype()) {
           OpError(ErrorKind::kType, op,
                   StrCat("every input must have the dtype of the first; expected ", DTypeName(in[0].dtype()),
                          ", but input ", i, " has ", DTypeName(in[i].dtype())));
         }
         shape.push_back(in[i].shape()[0]);
       }
       const bool xy = AttrString(attrs, "indexing") == "xy" && in.size() >= 2;
       if (xy) std::swap(shape[0], shape[1]);
       std::vector<Tensor> out;
       for (size_t i = 0; i < in.size(); ++i) {
         size_t at = i;
         if (xy && i < 2) at = 1 - i;
         Shape view(shape.size(), 1);
         view[at] = shape[at];
         out.push_back(fn::BroadcastTo(fn::Reshape(in[i], view), shape));
       }
       return out;
     },
     .props = {.tuple_outputs = true},
     .doc = "coordinate grids of the 1-D inputs, one per input ('xy': the first two axes swapped) (composite)",
     .api = {Function("meshgrid(*inputs->xs..., indexing='xy')"),
             Primitive("array_ops.Meshgrid(indexing='xy')(inputs->xs...)")}});

// ---- pad ----

// Where output position j along axis `axis` of x (size n) reads, for the
// pads left and right; `n` (one past the end) is the constant's slot.
std::vector<int64_t> PadMap(std::string_view op, std::string_view mode, const Tensor& x, int64_t left, int64_t right,
                            int64_t axis) {
  const int64_t n = x.shape()[axis];
  const int64_t length = CheckedAdd(CheckedAdd(n, left, op), right, op);
  if (length < 0) {
    OpError(ErrorKind::kValue, op,
            StrCat("the padding (", left, ", ", right, ") of axis ", axis, " of size ", n,
                   " leaves a negative size; expected a size >= 0, but got ", length));
  }
  if (mode == "reflect" && (left >= n || right >= n)) {
    OpError(ErrorKind::kValue, op,
            StrCat("reflect padding must be smaller than the axis; expected pads < ", n, " on axis ", axis,
                   ", but got (", left, ", ", right, ")"));
  }
  if ((mode == "replicate" || mode == "circular") && n == 0 && length > 0) {
    OpError(ErrorKind::kValue, op, StrCat(mode, " padding needs a non-empty axis, but axis ", axis, " has size 0"));
  }
  if (mode == "circular" && (left > n || right > n)) {
    OpError(ErrorKind::kValue, op,
            StrCat("circular padding must not exceed the axis; expected pads <= ", n, " on axis ", axis, ", but got (",
                   left, ", ", right, ")"));
  }
  Shape padded = x.shape();  // checked before the map is made for it
  padded[axis] = length;
  CheckShape(padded, x.dtype(), op);
  std::vector<int64_t> map(static_cast<size_t>(length));
  for (int64_t j = 0; j < length; ++j) {
    int64_t src = j - left;
    if (src < 0 || src >= n) {
      if (mode == "constant") {
        src = n;
      } else if (mode == "reflect") {
        src = src < 0 ? -src : 2 * (n - 1) - src;
      } else if (mode == "replicate") {
        src = src < 0 ? 0 : n - 1;
      } else {
        src = ((src % n) + n) % n;
      }
    }
    map[static_cast<size_t>(j)] = src;
  }
  return map;
}

MSRT_REGISTER_OP(
    {.name = "pad",
     .inputs = {"x"},
     .attrs = {{"padding", Value(), "(left, right) pairs from the last axis backwards (negative crops)",
                AttrType::kInts},
               {"mode",
                "constant",
                "'constant', 'reflect', 'replicate' or 'circular'",
                AttrType::kString,
                {"constant", "reflect", "replicate", "circular"}},
               {.name = "value",
                .default_value = Value(),
                .doc = "the fill of constant mode (None: 0)",
                .type = AttrType::kFloat,
                .optional = true}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "pad";
       Tensor x = in[0];
       const auto padding = AttrInts(attrs, "padding");
       const std::string mode = AttrString(attrs, "mode");
       const Value& value = Attr(attrs, "value");
       const int64_t nd = x.ndim();
       if (padding.size() % 2 != 0 || static_cast<int64_t>(padding.size()) > 2 * nd) {
         OpError(ErrorKind::kValue, op,
                 StrCat("'padding' must hold (left, right) pairs for at most every axis; expected an even length <= ",
                        2 * nd, ", but got ", IntsRepr(padding), " for shape ", ShapeRepr(x.shape())));
       }
       if (mode != "constant" && !value.is_none()) {
         OpError(ErrorKind::kValue, op,
                 StrCat("'value' is only for mode 'constant'; expected None for mode '", mode, "', but got ",
                        value.repr()));
       }
       const double fill = value.is_none() ? 0.0 : value.as_float();
       for (size_t i = 0; i < padding.size() / 2; ++i) {
         const int64_t axis = nd - 1 - static_cast<int64_t>(i);
         const int64_t left = padding[2 * i], right = padding[2 * i + 1];
         if (left == 0 && right == 0) continue;
         std::vector<int64_t> map = PadMap(op, mode, x, left, right, axis);
         Tensor source = x;
         if (mode == "constant" && (left > 0 || right > 0)) {
           Shape slot = x.shape();
           slot[axis] = 1;
           source = fn::Concat({x, fn::Fill(slot, fill, x.dtype())}, axis);
         }
         x = fn::Gather(source, fn::Int64Tensor(map), axis);
       }
       return {x.same(in[0]) ? Call1("identity", {x}) : x};
     },
     .doc = "x padded (or cropped) by (left, right) pairs from the last axis: a constant, a reflection without the "
            "edge, the edge repeated, or the other end (circular) (composite)",
     .api = {Function("pad(input_x->x, padding, mode='constant', value=None)")}});

// ---- einsum ----

// Note [einsum as contractions]
// Each subscript (a letter, or one axis of an ellipsis) is a label. Within
// an operand, a repeated label takes the diagonal (x * eye, summed over the
// second axis). Labels no other operand and not the output use are summed
// out first. Operands then contract left to right: shared labels still
// needed later are batch axes, the other shared labels are contracted, and
// the pair becomes one batch_matmul of (batch, free, contracted) by (batch,
// contracted, free). A size-1 axis broadcasts against a larger one.
constexpr int kLetters = 52;  // a-z, A-Z; ellipsis axes are labels from 52 on

struct Operand {
  Tensor x;
  std::vector<int> labels;  // one per axis
};

int LetterLabel(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : 26 + (c - 'A'); }

// Labels of one subscript string for an operand of rank `rank`; `ellipsis`
// is the number of axes "..." stands for in the widest operand (labels
// kLetters .. kLetters + ellipsis - 1, right-aligned).
std::vector<int> ParseSubscripts(std::string_view op, std::string_view text, int64_t rank, int64_t ellipsis,
                                 bool is_output) {
  std::vector<int> labels;
  int64_t letters = 0;
  bool seen_ellipsis = false;
  for (char c : text) letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(LetterLabel(c));
    } else if (text.substr(i, 3) == "..." && !seen_ellipsis) {
      seen_ellipsis = true;
      const int64_t count = is_output ? ellipsis : rank - letters;
      if (count < 0) break;  // reported below as a rank mismatch
      for (int64_t k = ellipsis - count; k < ellipsis; ++k) labels.push_back(kLetters + static_cast<int>(k));
      i += 2;
    } else {
      OpError(ErrorKind::kValue, op,
              StrCat("the equation may hold letters, one '...' per operand, ',' and '->'; but got '", std::string(1, c),
                     "' in '", text, "'"));
    }
  }
  if (!is_output && static_cast<int64_t>(labels.size()) != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("the subscripts '", text, "' name ", labels.size(),
                   " axes; expected one per axis of an operand of rank ", rank));
  }
  return labels;
}

std::string LabelName(int label) {
  if (label >= kLetters) return "...";
  return std::string(1, label < 26 ? static_cast<char>('a' + label) : static_cast<char>('A' + label - 26));
}

// The operand with its repeated labels reduced to their diagonal.
void TakeDiagonals(std::string_view op, Operand& o) {
  for (bool found = true; found;) {
    found = false;
    for (size_t a = 0; a < o.labels.size() && !found; ++a) {
      for (size_t b = a + 1; b < o.labels.size() && !found; ++b) {
        if (o.labels[a] != o.labels[b]) continue;
        found = true;
        const int64_t n = o.x.shape()[a];
        if (o.x.shape()[b] != n) {
          OpError(ErrorKind::kValue, op,
                  StrCat("subscript '", LabelName(o.labels[a]), "' repeats over axes of sizes ", n, " and ",
                         o.x.shape()[b], "; expected equal sizes"));
        }
        Tensor eye = Call1("eye", {}, Dict{{"n", Value(n)}, {"m", Value(n)}, {"dtype", DTypeValue(o.x.dtype())}});
        Shape mask(o.labels.size(), 1);
        mask[a] = n;
        mask[b] = n;
        o.x = Reduce("reduce_sum", fn::Mul(o.x, fn::Reshape(eye, mask)), {static_cast<int64_t>(b)}, false);
        o.labels.erase(o.labels.begin() + static_cast<std::ptrdiff_t>(b));
      }
    }
  }
}

// Sums out the labels of `o` that `needed` does not hold.
void SumUnneeded(Operand& o, const std::vector<bool>& needed) {
  std::vector<int64_t> axes;
  std::vector<int> kept;
  for (size_t i = 0; i < o.labels.size(); ++i) {
    if (needed[o.labels[i]]) {
      kept.push_back(o.labels[i]);
    } else {
      axes.push_back(static_cast<int64_t>(i));
    }
  }
  if (axes.empty()) return;
  o.x = Reduce("reduce_sum", o.x, axes, false);
  o.labels = kept;
}

// `o` with its axes in the order of `labels` (each of o's labels once).
Tensor Arrange(const Operand& o, const std::vector<int>& labels) {
  std::vector<int64_t> perm;
  bool identity = true;
  for (int l : labels) {
    const auto at = std::find(o.labels.begin(), o.labels.end(), l) - o.labels.begin();
    identity = identity && at == static_cast<int64_t>(perm.size());
    perm.push_back(at);
  }
  return identity ? o.x : fn::Transpose(o.x, perm);
}

// a and b contracted over the labels they share that `needed` does not hold.
Operand Contract(const Operand& a, const Operand& b, const std::vector<bool>& needed,
                 const std::vector<int64_t>& size) {
  std::vector<int> batch, contract, a_free, b_free;
  for (int l : a.labels) {
    const bool shared = std::find(b.labels.begin(), b.labels.end(), l) != b.labels.end();
    (shared ? (needed[l] ? batch : contract) : a_free).push_back(l);
  }
  for (int l : b.labels) {
    if (std::find(a.labels.begin(), a.labels.end(), l) == a.labels.end()) b_free.push_back(l);
  }
  auto product = [&](const std::vector<int>& labels) {
    int64_t p = 1;
    for (int l : labels) p *= size[l];
    return p;
  };
  auto concat = [](std::vector<int> x, const std::vector<int>& y, const std::vector<int>& z) {
    x.insert(x.end(), y.begin(), y.end());
    x.insert(x.end(), z.begin(), z.end());
    return x;
  };
  Tensor left = fn::Reshape(Arrange(a, concat(batch, a_free, contract)),
                            {product(batch), product(a_free), product(contract)});
  Tensor right = fn::Reshape(Arrange(b, concat(batch, contract, b_free)),
                             {product(batch), product(contract), product(b_free)});
  Tensor out = Call1("batch_matmul", {left, right}, Dict{{"transpose_a", Value(false)}, {"transpose_b", Value(false)}});
  Operand result;
  result.labels = concat(batch, a_free, b_free);
  Shape shape;
  for (int l : result.labels) shape.push_back(size[l]);
  result.x = fn::Reshape(out, shape);
  return result;
}

MSRT_REGISTER_OP(
    {.name = "einsum",
     .inputs = {"xs..."},
     .attrs = {{"equation", Value(), "subscripts per operand, ',' between them, then optionally '->' and the output's",
                AttrType::kString}},
     .composite = [](const std::vector<Tensor>& in, const Dict& attrs) -> std::vector<Tensor> {
       constexpr std::string_view op = "einsum";
       std::string equation;
       for (char c : AttrString(attrs, "equation")) {
         if (c != ' ') equation.push_back(c);
       }
       const size_t arrow = equation.find("->");
       const std::string lhs = equation.substr(0, arrow);
       std::vector<std::string> terms;
       for (size_t start = 0;;) {
         const size_t comma = lhs.find(',', start);
         terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
         if (comma == std::string::npos) break;
         start = comma + 1;
       }
       if (terms.size() != in.size()) {
         OpError(ErrorKind::kValue, op,
                 StrCat("the equation '", AttrString(attrs, "equation"), "' has subscripts for ", terms.size(),
                        " operands; expected one term per operand, but got ", in.size(), " operands"));
       }
       // The widest ellipsis among the operands.
       int64_t ellipsis = 0;
       for (size_t i = 0; i < in.size(); ++i) {
         if (terms[i].find("...") == std::string::npos) continue;
         int64_t letters = 0;
         for (char c : terms[i]) letters += std::isalpha(static_cast<unsigned char>(c)) ? 1 : 0;
         ellipsis = std::max<int64_t>(ellipsis, in[i].ndim() - letters);
       }
       const int labels_count = kLetters + static_cast<int>(ellipsis);
       std::vector<Operand> operands;
       std::vector<int> uses(static_cast<size_t>(labels_count), 0);
       std::vector<int64_t> size(static_cast<size_t>(labels_count), 1);
       std::vector<bool> sized(static_cast<size_t>(labels_count), false);
       for (size_t i = 0; i < in.size(); ++i) {
         Operand o{in[i], ParseSubscripts(op, terms[i], in[i].ndim(), ellipsis, false)};
         for (size_t k = 0; k < o.labels.size(); ++k) {
           const int l = o.labels[k];
           ++uses[l];
           const int64_t n = o.x.shape()[k];
           if (sized[l] && n != size[l] && n != 1 && size[l] != 1) {
             OpError(ErrorKind::kValue, op,
                     StrCat("subscript '", LabelName(l), "' has size ", size[l], " and ", n,
                            " in different places; expected equal sizes (or 1)"));
           }
           if (!sized[l] || size[l] == 1) size[l] = n;
           sized[l] = true;
         }
         operands.push_back(std::move(o));
       }
       std::vector<int> output;
       if (arrow == std::string::npos) {  // implicit: the ellipsis, then letters used once, in order
         for (int l = kLetters; l < labels_count; ++l) {
           if (uses[l] > 0) output.push_back(l);
         }
         for (char c : std::string_view("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")) {
           if (uses[LetterLabel(c)] == 1) output.push_back(LetterLabel(c));
         }
       } else {
         output = ParseSubscripts(op, equation.substr(arrow + 2), 0, ellipsis, true);
         std::vector<bool> seen(static_cast<size_t>(labels_count), false);
         for (int l : output) {
           if (seen[l] || uses[l] == 0) {
             OpError(ErrorKind::kValue, op,
                     StrCat("output subscript '", LabelName(l), "' ",
                            seen[l] ? "appears more than once" : "appears in no operand",
                            "; expected each output subscript once, from the operands"));
           }
           seen[l] = true;
         }
       }
       // A size-1 axis broadcasts to its label's size.
       for (Operand& o : operands) {
         TakeDiagonals(op, o);
         Shape target;
         for (int l : o.labels) target.push_back(size[l]);
         if (target != o.x.shape()) o.x = fn::BroadcastTo(o.x, target);
       }
       std::vector<bool> in_output(static_cast<size_t>(labels_count), false);
       for (int l : output) in_output[l] = true;
       // needed_after[i]: labels the output or operands after i use.
       std::vector<std::vector<bool>> needed_after(operands.size(), in_output);
       for (size_t i = operands.size(); i-- > 1;) {
         needed_after[i - 1] = needed_after[i];
         for (int l : operands[i].labels) needed_after[i - 1][l] = true;
       }
       Operand result = operands[0];
       for (size_t i = 0; i < operands.size(); ++i) {
         std::vector<bool> needed = needed_after[i];
         if (i == 0) {
           SumUnneeded(result, needed);
           continue;
         }
         Operand next = operands[i];
         // Before contracting, each side keeps what the other or later operands need.
         std::vector<bool> for_result = needed, for_next = needed;
         for (int l : next.labels) for_result[l] = true;
         for (int l : result.labels) for_next[l] = true;
         SumUnneeded(result, for_result);
         SumUnneeded(next, for_next);
         result = Contract(result, next, needed, size);
       }
       SumUnneeded(result, in_output);
       Tensor out = Arrange(result, output);
       return {out.same(in[0]) ? Call1("identity", {out}) : out};
     },
     .doc = "the sum of products over the subscripts of an equation ('ij,jk->ik'; '...' for leading axes; without "
            "'->', the subscripts used once, in order), as diagonals, sums and batch_matmuls (composite)",
     .api = {Function("einsum(equation, *operands->xs...)"), Primitive("math_ops.Einsum(equation)(x->xs...)")}});

}  // namespace
}  // namespace msrt::ops
