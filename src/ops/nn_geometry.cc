#include "ops/nn_geometry.h"

#include <algorithm>
#include <utility>

namespace msrt::ops {
namespace {

// A kPair attribute: [h, w] (AttrType parsed and checked it).
std::pair<int64_t, int64_t> Pair(const Dict& attrs, std::string_view name) {
  std::vector<int64_t> v = AttrInts(attrs, name);
  MSRT_INTERNAL_ASSERT(v.size() == 2, "attribute ", name, " is not a parsed pair");
  return {v[0], v[1]};
}

// One spatial axis: output size and (before, after) padding.
struct Axis {
  int64_t out;
  int64_t pad_before;
  int64_t pad_after;
};

Axis WindowAxis(std::string_view op, std::string_view axis_name, const std::string& mode, int64_t in,
                int64_t dilated_kernel, int64_t stride, int64_t pad_before, int64_t pad_after) {
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
    a.out = padded >= dilated_kernel ? (padded - dilated_kernel) / stride + 1 : 0;
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

// x's (N, C, H, W) as `attrs`' data format lays them out; ValueError
// (naming `op`) unless x is 4-D.
struct Nchw {
  int64_t n, c, h, w;
  bool channels_last;
};
Nchw SplitActivation(std::string_view op, const Shape& x, const Dict& attrs) {
  bool channels_last = ChannelsLast(attrs);
  if (x.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("x must be a 4-D tensor ", channels_last ? "(N, H, W, C)" : "(N, C, H, W)", "; but got shape ",
                   ShapeRepr(x)));
  }
  if (channels_last) return {x[0], x[3], x[1], x[2], true};
  return {x[0], x[1], x[2], x[3], false};
}

}  // namespace

bool ChannelsLast(const Dict& attrs) { return AttrString(attrs, kDataFormatAttr) == kChannelsLast; }

Shape ActivationShape(bool channels_last, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (channels_last) return {n, h, w, c};
  return {n, c, h, w};
}

Strides4 ActivationStrides(bool channels_last, int64_t c, int64_t h, int64_t w) {
  if (channels_last) return {h * w * c, 1, w * c, c};
  return {c * h * w, h * w, w, 1};
}

Conv2dGeometry ConvGeometry(std::string_view op, const Shape& x, const Shape& w, const Dict& attrs) {
  Nchw dims = SplitActivation(op, x, attrs);
  if (w.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("weight must be a 4-D tensor (out_channels, in_channels / group, kh, kw); but got shape ",
                   ShapeRepr(w)));
  }
  Conv2dGeometry g;
  g.channels_last = dims.channels_last;
  g.batch = dims.n;
  g.in_channels = dims.c;
  g.in_h = dims.h;
  g.in_w = dims.w;
  g.out_channels = w[0];
  g.kernel_h = w[2];
  g.kernel_w = w[3];
  g.group = AttrInt(attrs, "group");
  if (w[1] <= 0 || g.kernel_h <= 0 || g.kernel_w <= 0 || g.out_channels <= 0) {
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
  // stride, dilation, pad_mode and pad are parsed (kPair, kPadMode, kPadding) and
  // checked together (nn_conv.cc) before any geometry is asked for.
  std::tie(g.stride_h, g.stride_w) = Pair(attrs, "stride");
  std::tie(g.dilation_h, g.dilation_w) = Pair(attrs, "dilation");
  std::string mode = AttrString(attrs, "pad_mode");
  std::vector<int64_t> pad = AttrInts(attrs, "pad");
  MSRT_INTERNAL_ASSERT(pad.size() == 4, "attribute pad is not parsed padding");
  Axis h = WindowAxis(op, "height", mode, g.in_h, CheckedMul(g.kernel_h - 1, g.dilation_h, op) + 1, g.stride_h, pad[0],
                      pad[1]);
  Axis wd = WindowAxis(op, "width", mode, g.in_w, CheckedMul(g.kernel_w - 1, g.dilation_w, op) + 1, g.stride_w, pad[2],
                       pad[3]);
  g.out_h = h.out;
  g.pad_top = h.pad_before;
  g.pad_bottom = h.pad_after;
  g.out_w = wd.out;
  g.pad_left = wd.pad_before;
  g.pad_right = wd.pad_after;
  return g;
}

Pool2dGeometry PoolGeometry(std::string_view op, const Shape& x, const Dict& attrs) {
  Nchw dims = SplitActivation(op, x, attrs);
  Pool2dGeometry g;
  g.channels_last = dims.channels_last;
  g.batch = dims.n;
  g.channels = dims.c;
  g.in_h = dims.h;
  g.in_w = dims.w;
  std::tie(g.kernel_h, g.kernel_w) = Pair(attrs, "kernel_size");
  std::tie(g.stride_h, g.stride_w) = Pair(attrs, "strides");
  std::string mode = AttrString(attrs, "pad_mode");  // 'valid' or 'same' (nn_pool.cc)
  Axis h = WindowAxis(op, "height", mode, g.in_h, g.kernel_h, g.stride_h, 0, 0);
  Axis w = WindowAxis(op, "width", mode, g.in_w, g.kernel_w, g.stride_w, 0, 0);
  g.out_h = h.out;
  g.pad_top = h.pad_before;
  g.pad_bottom = h.pad_after;
  g.out_w = w.out;
  g.pad_left = w.pad_before;
  g.pad_right = w.pad_after;
  return g;
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
