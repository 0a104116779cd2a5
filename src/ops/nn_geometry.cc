#include "ops/nn_geometry.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

namespace msrt::ops {
namespace {

// One spatial axis: output size, (before, after) padding and, in ceil mode,
// how far the last window reaches past the trailing padding.
struct Axis {
  int64_t out;
  int64_t pad_before;
  int64_t pad_after;
  int64_t overhang = 0;
};

Axis WindowAxis(std::string_view op, std::string_view axis_name, const std::string& mode, int64_t in,
                int64_t dilated_kernel, int64_t stride, int64_t pad_before, int64_t pad_after, bool ceil = false) {
  Axis a{0, 0, 0};
  if (mode == "same") {
    a.out = in > 0 ? (in - 1) / stride + 1 : 0;  // ceil(in / stride) without overflow
    int64_t needed = std::max<int64_t>(0, CheckedAdd(CheckedMul(a.out - 1, stride, op), dilated_kernel, op) - in);
    a.pad_before = needed / 2;
    a.pad_after = needed - a.pad_before;
  } else if (mode == "valid") {
    a.out = in >= dilated_kernel ? (in - dilated_kernel) / stride + 1 : 0;
  } else {
    a.pad_before = pad_before;
    a.pad_after = pad_after;
    int64_t padded = CheckedAdd(CheckedAdd(in, pad_before, op), pad_after, op);
    if (padded >= dilated_kernel) {
      int64_t span = padded - dilated_kernel;
      a.out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
      // Note [Ceil mode]: a last window starting past the input and its leading padding is dropped.
      if (ceil && (a.out - 1) * stride >= in + pad_before) --a.out;
      a.overhang = std::max<int64_t>(0, (a.out - 1) * stride + dilated_kernel - padded);
    }
  }
  if (a.out <= 0) {
    OpError(ErrorKind::kValue, op,
            StrCat("the ", axis_name, " of the input (", in, mode == "pad" ? " plus padding " : "",
                   mode == "pad" ? std::to_string(a.pad_before + a.pad_after) : std::string(),
                   ") is smaller than the (dilated) window; expected at least ", dilated_kernel, ", but got ",
                   mode == "pad" ? in + a.pad_before + a.pad_after : in));
  }
  return a;
}

// x's (N, C, D, H, W) (D = 1 for 2-D ops) as `attrs`' data format lays them
// out; ValueError (naming `op`) unless x has 2 + `spatial` axes.
struct Activation {
  int64_t n, c, d, h, w;
  bool channels_last;
};
Activation SplitActivation(std::string_view op, const Shape& x, const Dict& attrs, int spatial) {
  bool channels_last = ChannelsLast(attrs);
  if (spatial == 3) {
    if (x.size() != 5) {
      OpError(ErrorKind::kValue, op, StrCat("x must be a 5-D tensor (N, C, D, H, W); but got shape ", ShapeRepr(x)));
    }
    return {x[0], x[1], x[2], x[3], x[4], false};
  }
  if (x.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("x must be a 4-D tensor ", channels_last ? "(N, H, W, C)" : "(N, C, H, W)", "; but got shape ",
                   ShapeRepr(x)));
  }
  if (channels_last) return {x[0], x[3], 1, x[1], x[2], true};
  return {x[0], x[1], 1, x[2], x[3], false};
}

// A parsed window attribute (kPair or kTriple) as (d, h, w), d = 1 for a pair.
std::array<int64_t, 3> Window3(const Dict& attrs, std::string_view name) {
  std::vector<int64_t> v = AttrInts(attrs, name);
  MSRT_INTERNAL_ASSERT(v.size() == 2 || v.size() == 3, "attribute ", name, " is not a parsed pair or triple");
  if (v.size() == 2) return {1, v[0], v[1]};
  return {v[0], v[1], v[2]};
}

// Parsed padding (kPadding or kPadding6) as (front, back, top, bottom, left, right).
std::array<int64_t, 6> Padding6(const Dict& attrs, std::string_view name) {
  const Value* found = attrs.Find(name);
  if (found == nullptr) return {0, 0, 0, 0, 0, 0};
  std::vector<int64_t> p = AttrInts(attrs, name);
  MSRT_INTERNAL_ASSERT(p.size() == 4 || p.size() == 6, "attribute ", name, " is not parsed padding");
  if (p.size() == 4) return {0, 0, p[0], p[1], p[2], p[3]};
  return {p[0], p[1], p[2], p[3], p[4], p[5]};
}

}  // namespace

bool ChannelsLast(const Dict& attrs) { return AttrString(attrs, kDataFormatAttr) == kChannelsLast; }

Shape ActivationShape(bool channels_last, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (channels_last) return {n, h, w, c};
  return {n, c, h, w};
}

ActivationSteps ActivationStrides(bool channels_last, int64_t c, int64_t d, int64_t h, int64_t w) {
  if (channels_last) return {d * h * w * c, 1, h * w * c, w * c, c};
  return {c * d * h * w, d * h * w, h * w, w, 1};
}

ConvDims ConvGeometry(std::string_view op, const Shape& x, const Shape& w, const Dict& attrs) {
  int spatial = static_cast<int>(AttrInts(attrs, "stride").size());
  Activation dims = SplitActivation(op, x, attrs, spatial);
  size_t rank = static_cast<size_t>(spatial) + 2;
  if (w.size() != rank) {
    OpError(ErrorKind::kValue, op,
            StrCat("weight must be a ", rank, "-D tensor (out_channels, in_channels / group, ",
                   spatial == 3 ? "kd, kh, kw" : "kh, kw", "); but got shape ", ShapeRepr(w)));
  }
  ConvDims g;
  g.spatial = spatial;
  g.channels_last = dims.channels_last;
  g.batch = dims.n;
  g.in_channels = dims.c;
  g.in_d = dims.d;
  g.in_h = dims.h;
  g.in_w = dims.w;
  g.out_channels = w[0];
  g.kernel_d = spatial == 3 ? w[2] : 1;
  g.kernel_h = w[rank - 2];
  g.kernel_w = w[rank - 1];
  g.group = AttrInt(attrs, "group");
  if (w[1] <= 0 || g.kernel_d <= 0 || g.kernel_h <= 0 || g.kernel_w <= 0 || g.out_channels <= 0) {
    OpError(ErrorKind::kValue, op, StrCat("weight must have positive sizes; but got shape ", ShapeRepr(w)));
  }
  if (g.out_channels % g.group != 0) {
    OpError(ErrorKind::kValue, op,
            StrCat("the output channels (weight.shape[0]) must be divisible by group ", g.group, "; but got ",
                   g.out_channels));
  }
  if (CheckedMul(w[1], g.group, op) != g.in_channels) {
    OpError(ErrorKind::kValue, op,
            StrCat("x's channels must equal weight.shape[1] * group; expected ", w[1] * g.group, " (", w[1], " * ",
                   g.group, "), but got ", g.in_channels, " (x shape ", ShapeRepr(x), ", weight shape ", ShapeRepr(w),
                   ")"));
  }
  // stride, dilation, pad_mode and pad are parsed (kPair or kTriple, kPadMode,
  // kPadding or kPadding6) and checked together (nn_conv.cc) before any
  // geometry is asked for.
  std::tie(g.stride_d, g.stride_h, g.stride_w) = std::tuple_cat(Window3(attrs, "stride"));
  std::tie(g.dilation_d, g.dilation_h, g.dilation_w) = std::tuple_cat(Window3(attrs, "dilation"));
  std::string mode = AttrString(attrs, "pad_mode");
  std::array<int64_t, 6> pad = Padding6(attrs, "pad");
  Axis d = WindowAxis(op, "depth", mode, g.in_d, CheckedMul(g.kernel_d - 1, g.dilation_d, op) + 1, g.stride_d, pad[0],
                      pad[1]);
  Axis h = WindowAxis(op, "height", mode, g.in_h, CheckedMul(g.kernel_h - 1, g.dilation_h, op) + 1, g.stride_h, pad[2],
                      pad[3]);
  Axis wd = WindowAxis(op, "width", mode, g.in_w, CheckedMul(g.kernel_w - 1, g.dilation_w, op) + 1, g.stride_w, pad[4],
                       pad[5]);
  g.out_d = d.out;
  g.pad_front = d.pad_before;
  g.pad_back = d.pad_after;
  g.out_h = h.out;
  g.pad_top = h.pad_before;
  g.pad_bottom = h.pad_after;
  g.out_w = wd.out;
  g.pad_left = wd.pad_before;
  g.pad_right = wd.pad_after;
  return g;
}

PoolDims PoolGeometry(std::string_view op, const Shape& x, const Dict& attrs) {
  int spatial = static_cast<int>(AttrInts(attrs, "kernel_size").size());
  Activation dims = SplitActivation(op, x, attrs, spatial);
  PoolDims g;
  g.spatial = spatial;
  g.channels_last = dims.channels_last;
  g.batch = dims.n;
  g.channels = dims.c;
  g.in_d = dims.d;
  g.in_h = dims.h;
  g.in_w = dims.w;
  std::tie(g.kernel_d, g.kernel_h, g.kernel_w) = std::tuple_cat(Window3(attrs, "kernel_size"));
  std::tie(g.stride_d, g.stride_h, g.stride_w) = std::tuple_cat(Window3(attrs, "strides"));
  std::string mode = AttrString(attrs, "pad_mode");  // 'pad' only where the op has a 'pad' (nn_pool.cc)
  std::array<int64_t, 6> pad = Padding6(attrs, "pad");
  const Value* ceil_mode = attrs.Find("ceil_mode");
  bool ceil = ceil_mode != nullptr && ceil_mode->is_bool() && ceil_mode->as_bool();
  Axis d = WindowAxis(op, "depth", mode, g.in_d, g.kernel_d, g.stride_d, pad[0], pad[1], ceil);
  Axis h = WindowAxis(op, "height", mode, g.in_h, g.kernel_h, g.stride_h, pad[2], pad[3], ceil);
  Axis w = WindowAxis(op, "width", mode, g.in_w, g.kernel_w, g.stride_w, pad[4], pad[5], ceil);
  g.out_d = d.out;
  g.pad_front = d.pad_before;
  g.pad_back = d.pad_after;
  g.ceil_d = d.overhang;
  g.out_h = h.out;
  g.pad_top = h.pad_before;
  g.pad_bottom = h.pad_after;
  g.ceil_h = h.overhang;
  g.out_w = w.out;
  g.pad_left = w.pad_before;
  g.pad_right = w.pad_after;
  g.ceil_w = w.overhang;
  return g;
}

void CheckPadWithMode(std::string_view op, const Dict& attrs) {
  const Value* mode = attrs.Find("pad_mode");
  const Value* pad = attrs.Find("pad");
  if (mode == nullptr || pad == nullptr || mode->as_string() == "pad") return;
  for (const Value& p : pad->as_list()) {
    if (p.as_int() != 0) {
      OpError(ErrorKind::kValue, op,
              StrCat("'pad' must be zero when 'pad_mode' is not 'pad'; but got pad ", pad->repr(), " with pad_mode '",
                     mode->as_string(), "'"));
    }
  }
}

Value ParseAxisPadding(std::string_view op, const Value& padding, int spatial) {
  static const AttrSpec kPad2{"padding", Value(), "", AttrType::kPadding};
  static const AttrSpec kPad3{"padding", Value(), "", AttrType::kPadding6};
  const AttrSpec& spec = spatial == 3 ? kPad3 : kPad2;
  if (padding.is_sequence() && padding.as_list().size() == static_cast<size_t>(spatial)) {
    List sides;  // one per axis: the same on both sides
    for (const Value& p : padding.as_list()) sides.insert(sides.end(), {p, p});
    return ParseAttr(op, spec, Value(sides));
  }
  return ParseAttr(op, spec, padding);
}

Dict ConvAttrs(const Dict& attrs) {
  Dict out;
  using Names = std::initializer_list<std::string_view>;
  for (std::string_view name : Names{"stride", "pad_mode", "pad", "dilation", "group", kDataFormatAttr}) {
    out.Set(std::string(name), Attr(attrs, name));
  }
  return out;
}

}  // namespace msrt::ops
