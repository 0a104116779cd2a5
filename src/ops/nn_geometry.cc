#include "ops/nn_geometry.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace msrt::ops {
namespace {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// An (h, w) pair from an int, a list of 2, or a list of 4 in NCHW order
// whose first two entries are 1 (MindSpore accepts all three).
std::pair<int64_t, int64_t> PositivePair(std::string_view op, const Dict& attrs, std::string_view name) {
  std::vector<int64_t> v = AttrInts(attrs, name);
  bool ok = v.size() == 1 || v.size() == 2 || (v.size() == 4 && v[0] == 1 && v[1] == 1);
  ok = ok && std::all_of(v.begin(), v.end(), [](int64_t x) { return x > 0; });
  if (!ok) {
    OpError(ErrorKind::kValue, op,
            StrCat("'", name, "' must be a positive int, a list of 2 positive ints or (1, 1, h, w); but got ",
                   Attr(attrs, name).repr()));
  }
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() == 2) return {v[0], v[1]};
  return {v[2], v[3]};
}

std::string PadMode(std::string_view op, const Dict& attrs, bool allow_pad) {
  std::string mode = Lower(AttrString(attrs, "pad_mode"));
  if (mode == "same" || mode == "valid" || (allow_pad && mode == "pad")) return mode;
  OpError(ErrorKind::kValue, op,
          StrCat("'pad_mode' must be one of ", allow_pad ? "'same', 'valid' or 'pad'" : "'same' or 'valid'",
                 "; but got '", AttrString(attrs, "pad_mode"), "'"));
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
  bool channels_last = ChannelsLast(op, attrs);
  if (x.size() != 4) {
    OpError(ErrorKind::kValue, op,
            StrCat("x must be a 4-D tensor ", channels_last ? "(N, H, W, C)" : "(N, C, H, W)", "; but got shape ",
                   ShapeRepr(x)));
  }
  if (channels_last) return {x[0], x[3], x[1], x[2], true};
  return {x[0], x[1], x[2], x[3], false};
}

}  // namespace

bool ChannelsLast(std::string_view op, const Dict& attrs) {
  std::string format = AttrString(attrs, kDataFormatAttr);
  if (format == kChannelsFirst) return false;
  if (format == kChannelsLast) return true;
  OpError(ErrorKind::kValue, op, StrCat("'data_format' must be 'NCHW' or 'NHWC'; but got '", format, "'"));
}

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
  if (g.group < 1) OpError(ErrorKind::kValue, op, StrCat("'group' must be at least 1; but got ", g.group));
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
            StrCat("x's channels must equal weight.shape[1] * group; expected ", w[1] * g.group, " (", w[1],
                   " * ", g.group, "), but got ", g.in_channels, " (x shape ", ShapeRepr(x), ", weight shape ",
                   ShapeRepr(w), ")"));
  }
  std::tie(g.stride_h, g.stride_w) = PositivePair(op, attrs, "stride");
  std::tie(g.dilation_h, g.dilation_w) = PositivePair(op, attrs, "dilation");
  std::string mode = PadMode(op, attrs, /*allow_pad=*/true);
  std::vector<int64_t> pad = AttrInts(attrs, "pad");
  if (pad.size() == 1) pad.assign(4, pad[0]);
  if (pad.size() != 4 || std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p < 0; })) {
    OpError(ErrorKind::kValue, op,
            StrCat("'pad' must be a non-negative int or a list of 4 (top, bottom, left, right); but got ",
                   Attr(attrs, "pad").repr()));
  }
  if (mode != "pad" && std::any_of(pad.begin(), pad.end(), [](int64_t p) { return p != 0; })) {
    OpError(ErrorKind::kValue, op,
            StrCat("'pad' must be zero when 'pad_mode' is not 'pad'; but got pad ", Attr(attrs, "pad").repr(),
                   " with pad_mode '", mode, "'"));
  }
  Axis h = WindowAxis(op, "height", mode, g.in_h, CheckedMul(g.kernel_h - 1, g.dilation_h, op) + 1, g.stride_h, pad[0], pad[1]);
  Axis wd = WindowAxis(op, "width", mode, g.in_w, CheckedMul(g.kernel_w - 1, g.dilation_w, op) + 1, g.stride_w, pad[2], pad[3]);
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
  std::tie(g.kernel_h, g.kernel_w) = PositivePair(op, attrs, "kernel_size");
  std::tie(g.stride_h, g.stride_w) = PositivePair(op, attrs, "strides");
  std::string mode = PadMode(op, attrs, /*allow_pad=*/false);
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
