#include "ops/shape_utils.h"

#include "ops/op_checks.h"

namespace msrt::ops {

Shape ReshapeTarget(std::string_view op, const Shape& from, const std::vector<int64_t>& to) {
  int64_t known = 1;
  int inferred = -1;
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] == -1) {
      if (inferred >= 0) {
        OpError(ErrorKind::kValue, op,
                StrCat("attribute 'shape' may hold one -1; expected at most one, but got ", IntsRepr(to)));
      }
      inferred = static_cast<int>(i);
    } else if (to[i] < 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("attribute 'shape' may hold sizes >= 0 and one -1, but got ", IntsRepr(to)));
    } else {
      known = CheckedMul(known, to[i], op);
    }
  }
  int64_t total = NumElements(from);
  Shape out(to.begin(), to.end());
  if (inferred >= 0) {
    if (known == 0 || total % known != 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("can not infer the -1 in ", IntsRepr(to), " for a tensor of shape ", ShapeRepr(from), " (", total,
                     " elements); expected the other sizes to divide ", total, ", but got their product ", known));
    }
    out[inferred] = total / known;
  } else if (known != total) {
    OpError(ErrorKind::kValue, op,
            StrCat("can not reshape a tensor of shape ", ShapeRepr(from), " into ", IntsRepr(to), "; expected ", total,
                   " elements, but got ", known));
  }
  return out;
}

std::vector<int64_t> CheckPermutation(std::string_view op, const std::vector<int64_t>& perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("attribute 'perm' must have one entry per axis; expected ", rank, " entries, but got ",
                   IntsRepr(perm)));
  }
  std::vector<int64_t> out;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t p : perm) {
    int64_t n = NormalizeAxis(op, p, rank);
    if (seen[n]) {
      OpError(ErrorKind::kValue, op,
              StrCat("attribute 'perm' must be a permutation of the axes; expected each axis once, but got ",
                     IntsRepr(perm)));
    }
    seen[n] = true;
    out.push_back(n);
  }
  return out;
}

Shape CheckConcat(std::string_view op, const std::vector<TensorMeta>& inputs, int64_t axis) {
  if (inputs.empty()) {
    OpError(ErrorKind::kValue, op, "needs at least one tensor; expected 1 or more, but got 0");
  }
  const Shape& first = inputs[0].shape;
  if (first.empty()) {
    OpError(ErrorKind::kValue, op, "can not concatenate 0-d tensors; expected rank >= 1, but got shape ()");
  }
  int64_t a = NormalizeAxis(op, axis, static_cast<int64_t>(first.size()));
  Shape out = first;
  for (size_t i = 1; i < inputs.size(); ++i) {
    const Shape& s = inputs[i].shape;
    CheckSameDType(op, "xs[0]", inputs[0], StrCat("xs[", i, "]"), inputs[i]);
    bool ok = s.size() == first.size();
    for (size_t d = 0; ok && d < s.size(); ++d) ok = static_cast<int64_t>(d) == a || s[d] == first[d];
    if (!ok) {
      OpError(ErrorKind::kValue, op,
              StrCat("all tensors must match except along axis ", a, "; expected a shape like ", ShapeRepr(first),
                     ", but got ", ShapeRepr(s), " for xs[", i, "]"));
    }
    out[a] = CheckedAdd(out[a], s[a], op);
  }
  return out;
}

SliceSpec ResolveSlice(const Shape& shape, const Dict& attrs) {
  constexpr std::string_view op = "strided_slice";
  auto begin = ShapeAttr(op, attrs, "begin", INT64_MIN);
  auto end = ShapeAttr(op, attrs, "end", INT64_MIN);
  auto strides = ShapeAttr(op, attrs, "strides", INT64_MIN);
  if (begin.size() != end.size() || begin.size() != strides.size()) {
    OpError(ErrorKind::kValue, op,
            StrCat("'begin', 'end' and 'strides' must have the same length; expected equal lengths, but got ",
                   begin.size(), ", ", end.size(), " and ", strides.size()));
  }
  if (begin.size() > shape.size()) {
    OpError(ErrorKind::kValue, op,
            StrCat("too many slice entries for a tensor of shape ", ShapeRepr(shape), "; expected at most ",
                   shape.size(), ", but got ", begin.size()));
  }
  SliceSpec spec;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d];
    if (d >= begin.size()) {
      spec.start.push_back(0);
      spec.step.push_back(1);
      spec.out_shape.push_back(n);
      continue;
    }
    int64_t step = strides[d];
    if (step == 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("slice step can not be zero; expected a non-zero stride, but got ", IntsRepr(strides)));
    }
    // Python's slice.indices(n).
    int64_t lower = step > 0 ? 0 : -1;
    int64_t upper = step > 0 ? n : n - 1;
    auto clamp = [&](int64_t v) {
      if (v < 0) {
        v += n;
        if (v < lower) v = lower;
      } else if (v > upper) {
        v = upper;
      }
      return v;
    };
    int64_t start = clamp(begin[d]);
    int64_t stop = clamp(end[d]);
    // Counted without overflow for any step (INT64_MIN included): the span is at most n.
    int64_t length = 0;
    uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : static_cast<uint64_t>(-(step + 1)) + 1;
    int64_t span = step > 0 ? stop - start : start - stop;
    if (span > 0) length = static_cast<int64_t>(static_cast<uint64_t>(span - 1) / magnitude + 1);
    spec.start.push_back(length > 0 ? start : 0);
    spec.step.push_back(step);
    spec.out_shape.push_back(length);
  }
  return spec;
}

Shape BroadcastTarget(std::string_view op, const Shape& from, const std::vector<int64_t>& to) {
  if (to.size() < from.size()) {
    OpError(ErrorKind::kValue, op,
            StrCat("the target shape has fewer dimensions than x; expected at least ", from.size(), ", but got ",
                   IntsRepr(to)));
  }
  Shape out(to.begin(), to.end());
  size_t lead = to.size() - from.size();
  for (size_t i = 0; i < to.size(); ++i) {
    int64_t x = i < lead ? 1 : from[i - lead];
    if (to[i] == -1) {
      if (i < lead) {
        OpError(ErrorKind::kValue, op,
                StrCat("-1 in 'shape' must face a dimension of x; expected a size at position ", i, ", but got ",
                       IntsRepr(to)));
      }
      out[i] = x;
    } else if (x != 1 && x != to[i]) {
      OpError(ErrorKind::kValue, op,
              StrCat("can not broadcast a tensor of shape ", ShapeRepr(from), " to ", IntsRepr(to),
                     "; expected each dimension of x to be 1 or the target size, but got ", x, " against ", to[i]));
    }
  }
  return out;
}

Shape PadShape(std::string_view op, const Shape& shape, const std::vector<int64_t>& multiples) {
  if (multiples.size() < shape.size()) {
    OpError(ErrorKind::kValue, op,
            StrCat("attribute 'multiples' needs an entry per axis of x; expected at least ", shape.size(),
                   " entries, but got ", IntsRepr(multiples)));
  }
  Shape out(multiples.size() - shape.size(), 1);
  out.insert(out.end(), shape.begin(), shape.end());
  return out;
}

}  // namespace msrt::ops
