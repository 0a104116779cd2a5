// Window geometry of the NN ops (conv2d and 2-D pooling), computed once from
// shapes and attributes with MindSpore's rules, and read by inference,
// gradient rules and every kernel (oneDNN and reference) alike.
//
// Note [Same padding]
// "same" gives out = ceil(in / stride) and pads (out - 1) * stride +
// dilated_kernel - in in total, the smaller half at the top/left and the
// extra row/column at the bottom/right (as TensorFlow and MindSpore do).
// "valid" pads nothing: out = ceil((in - dilated_kernel + 1) / stride).
// "pad" (conv only) takes explicit (top, bottom, left, right) padding:
// out = floor((in + top + bottom - dilated_kernel) / stride) + 1.
#pragma once

#include <cstdint>
#include <string_view>

#include "ops/op_def.h"

namespace msrt::ops {

/// The conv and pooling ops' kDataFormatAttr (op_def.h): "NCHW" (plain, the
/// default) or "NHWC" (channels-last). Shapes of x, y and dy follow it;
/// weights are always (out, in / group, kh, kw).
/// Whether `attrs` (parsed: kDataFormat) say NHWC.
bool ChannelsLast(const Dict& attrs);
/// (N, C, H, W) laid out as the data format says.
Shape ActivationShape(bool channels_last, int64_t n, int64_t c, int64_t h, int64_t w);
/// Offsets of one step along N, C, H and W in a contiguous 4-D tensor.
struct Strides4 {
  int64_t n, c, h, w;
};
Strides4 ActivationStrides(bool channels_last, int64_t c, int64_t h, int64_t w);

struct Conv2dGeometry {
  int64_t batch = 0, in_channels = 0, in_h = 0, in_w = 0;
  int64_t out_channels = 0, kernel_h = 0, kernel_w = 0, group = 1;
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_h = 0, out_w = 0;
  bool channels_last = false;

  /// x's and y's shapes in the data format.
  Shape input_shape() const { return ActivationShape(channels_last, batch, in_channels, in_h, in_w); }
  Shape filter_shape() const { return {out_channels, in_channels / group, kernel_h, kernel_w}; }
  Shape output_shape() const { return ActivationShape(channels_last, batch, out_channels, out_h, out_w); }
};

/// Geometry of conv2d(x, weight) for attributes {stride, pad_mode, pad,
/// dilation, group, data_format}; ValueError (naming `op`) for bad shapes or
/// attributes.
Conv2dGeometry ConvGeometry(std::string_view op, const Shape& x, const Shape& weight, const Dict& attrs);

struct Pool2dGeometry {
  int64_t batch = 0, channels = 0, in_h = 0, in_w = 0;
  int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t out_h = 0, out_w = 0;
  bool channels_last = false;

  /// x's and y's shapes in the data format.
  Shape input_shape() const { return ActivationShape(channels_last, batch, channels, in_h, in_w); }
  Shape output_shape() const { return ActivationShape(channels_last, batch, channels, out_h, out_w); }
};

/// Geometry of a 2-D pooling of x for attributes {kernel_size, strides,
/// pad_mode, data_format}; ValueError (naming `op`) for bad shapes or
/// attributes.
Pool2dGeometry PoolGeometry(std::string_view op, const Shape& x, const Dict& attrs);

/// The conv2d attributes {stride, pad_mode, pad, dilation, group,
/// data_format} of `attrs` (what the conv2d family passes between its
/// members in gradient rules).
Dict ConvAttrs(const Dict& attrs);

}  // namespace msrt::ops
