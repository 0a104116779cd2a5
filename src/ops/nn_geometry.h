// Window geometry of the NN ops (2-D and 3-D convolution and pooling), computed once from
// shapes and attributes with MindSpore's rules, and read by inference,
// gradient rules and every kernel (oneDNN and reference) alike.
//
// Note [Same padding]
// "same" gives out = ceil(in / stride) and pads (out - 1) * stride +
// dilated_kernel - in in total, the smaller half at the top/left and the
// extra row/column at the bottom/right (as TensorFlow and MindSpore do).
// "valid" pads nothing: out = ceil((in - dilated_kernel + 1) / stride).
// "pad" (conv, and 3-D pooling) takes explicit (top, bottom, left, right)
// padding, and (front, back) for depth:
// out = floor((in + top + bottom - dilated_kernel) / stride) + 1.
//
// Note [Ceil mode]
// 3-D pooling's ceil_mode (pad mode only) rounds that division up, as
// PyTorch and MindSpore do, unless the last window would then start past the
// input and its leading padding (it is dropped). Such a last window may reach
// past the trailing padding: that overhang is never counted by average
// pooling, even with count_include_pad.
#pragma once

#include <cstdint>
#include <string_view>

#include "ops/op_def.h"

namespace msrt::ops {

/// The conv and pooling ops' kDataFormatAttr (op_def.h): "NCHW" (plain, the
/// default) or "NHWC" (channels-last) for the 2-D ops, "NCDHW" for the 3-D
/// ones. Shapes of x, y and dy follow it; weights are always (out, in /
/// group, kh, kw), or (out, in / group, kd, kh, kw).
/// Whether `attrs` (parsed: kDataFormat) say NHWC.
bool ChannelsLast(const Dict& attrs);
/// (N, C, H, W) laid out as the data format says.
Shape ActivationShape(bool channels_last, int64_t n, int64_t c, int64_t h, int64_t w);
/// Offsets of one step along N, C, D, H and W in a contiguous 4-D tensor
/// (d: the plane size, never stepped along) or 5-D NCDHW tensor.
struct ActivationSteps {
  int64_t n, c, d, h, w;
};
ActivationSteps ActivationStrides(bool channels_last, int64_t c, int64_t d, int64_t h, int64_t w);

/// Convolution and pooling windows over 2 or 3 spatial axes. A 2-D op is
/// the 3-D case with a depth of 1 (its depth window, stride and dilation 1,
/// no depth padding), so kernels loop over depth once and only the tensors'
/// ranks (`spatial`) tell the two apart.
struct ConvDims {
  int spatial = 2;  // 2: (N, C, H, W) activations; 3: (N, C, D, H, W)
  int64_t batch = 0, in_channels = 0, in_d = 1, in_h = 0, in_w = 0;
  int64_t out_channels = 0, kernel_d = 1, kernel_h = 0, kernel_w = 0, group = 1;
  int64_t stride_d = 1, stride_h = 1, stride_w = 1, dilation_d = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_front = 0, pad_back = 0, pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_d = 1, out_h = 0, out_w = 0;
  bool channels_last = false;

  /// x's and y's shapes in the data format.
  Shape input_shape() const { return Activation(in_channels, in_d, in_h, in_w); }
  Shape filter_shape() const {
    if (spatial == 3) return {out_channels, in_channels / group, kernel_d, kernel_h, kernel_w};
    return {out_channels, in_channels / group, kernel_h, kernel_w};
  }
  Shape output_shape() const { return Activation(out_channels, out_d, out_h, out_w); }

 private:
  Shape Activation(int64_t c, int64_t d, int64_t h, int64_t w) const {
    if (spatial == 3) return {batch, c, d, h, w};
    return ActivationShape(channels_last, batch, c, h, w);
  }
};

/// Geometry of a convolution of x with weight for attributes {stride,
/// pad_mode, pad, dilation, group, data_format}: 2-D when stride is a pair
/// (pad: top, bottom, left, right), 3-D when it is a triple (pad: front,
/// back, top, bottom, left, right); ValueError (naming `op`) for bad shapes
/// or attributes.
ConvDims ConvGeometry(std::string_view op, const Shape& x, const Shape& weight, const Dict& attrs);

struct PoolDims {
  int spatial = 2;
  int64_t batch = 0, channels = 0, in_d = 1, in_h = 0, in_w = 0;
  int64_t kernel_d = 1, kernel_h = 1, kernel_w = 1, stride_d = 1, stride_h = 1, stride_w = 1;
  int64_t pad_front = 0, pad_back = 0, pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  /// ceil_mode's windows past the padding (Note [Ceil mode]), per axis.
  int64_t ceil_d = 0, ceil_h = 0, ceil_w = 0;
  int64_t out_d = 1, out_h = 0, out_w = 0;
  bool channels_last = false;

  /// x's and y's shapes in the data format.
  Shape input_shape() const { return Activation(in_d, in_h, in_w); }
  Shape output_shape() const { return Activation(out_d, out_h, out_w); }
  bool ceil_overhang() const { return ceil_d > 0 || ceil_h > 0 || ceil_w > 0; }

 private:
  Shape Activation(int64_t d, int64_t h, int64_t w) const {
    if (spatial == 3) return {batch, channels, d, h, w};
    return ActivationShape(channels_last, batch, channels, h, w);
  }
};

/// Geometry of a pooling of x for attributes {kernel_size, strides,
/// pad_mode, data_format} and, when present, {pad, ceil_mode}: 2-D when
/// kernel_size is a pair, 3-D when it is a triple; ValueError (naming `op`)
/// for bad shapes or attributes.
PoolDims PoolGeometry(std::string_view op, const Shape& x, const Dict& attrs);

/// Explicit padding (attribute "pad") needs pad_mode 'pad': ValueError
/// otherwise. An attrs_check: checks only where both are given.
void CheckPadWithMode(std::string_view op, const Dict& attrs);

/// MindSpore's functional `padding` of a 2-D or 3-D op parsed as kPadding or
/// kPadding6: an int, one int per spatial axis (both sides) or one per side.
Value ParseAxisPadding(std::string_view op, const Value& padding, int spatial);

/// The conv2d attributes {stride, pad_mode, pad, dilation, group,
/// data_format} of `attrs` (what the conv2d family passes between its
/// members in gradient rules).
Dict ConvAttrs(const Dict& attrs);

}  // namespace msrt::ops
