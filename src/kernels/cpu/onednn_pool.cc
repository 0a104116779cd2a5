// max_pool2d, avg_pool2d, max_pool3d, avg_pool3d and their gradient ops on
// CPU. A 2-D pooling is the 3-D one with depth 1 (PoolDims), so one set of
// code runs both.
//
// max_pool2d/3d, avg_pool2d/3d and avg_pool2d/3d_grad: oneDNN pooling for
// float32 (and bfloat16 where oneDNN has it), computed in channels-last
// layout with cached reorders from and to plain NCHW / NCDHW (oneDNN's only
// plain-NCHW pooling is a scalar loop, three to four times slower here; NHWC
// tensors need no reorder). Reference loops for float64, in either data
// format, and for an average whose padding counts and whose ceil_mode windows
// reach past the padding (oneDNN would count that part too).
//
// Note [max_pool2d_grad without oneDNN]
// oneDNN's max-pooling backward reads a workspace (where each window's
// maximum was) that only its training-mode forward writes; max_pool2d has
// one output (the catalogue's), so the gradient op would have to re-run that
// forward first. Measured on this project's AMD AVX2 machines, the forward
// with workspace plus the backward took 60 ms for LeNet's first pooling at
// batch 256, against about 5 ms for one pass that finds each window's first
// maximum in x and adds dy there. So max_pool2d_grad (and max_pool3d_grad)
// is that loop, for float32 and float64 alike.
#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/nn_geometry.h"

namespace msrt::kernels {
namespace {

namespace dn = onednn;
using dnnl::memory;
using ops::PoolDims;

using dn::kReferencePriority;

PoolDims Geometry(const KernelArgs& a) { return ops::PoolGeometry(a.op.name, a.inputs[0].shape(), a.attrs); }

// ---------------------------------------------------------------------------
// oneDNN

// Whether an average pooling counts its padding (count_include_pad, 3-D only).
bool CountsPadding(const Dict& attrs) {
  const Value* v = attrs.Find("count_include_pad");
  return v != nullptr && v->as_bool();
}

struct PoolDescs {
  memory::desc src_stored, dst_stored, src, dst;  // src, dst: channels-last, where oneDNN computes
  memory::dims strides, kernel, pad_l, pad_r;

  PoolDescs(const PoolDims& g, DType dtype) {
    bool three = g.spatial == 3;
    auto spatial = [three](int64_t d, int64_t h, int64_t w) {
      return three ? memory::dims{d, h, w} : memory::dims{h, w};
    };
    auto activation = [&](int64_t d, int64_t h, int64_t w) {
      memory::dims dims{g.batch, g.channels};
      memory::dims tail = spatial(d, h, w);
      dims.insert(dims.end(), tail.begin(), tail.end());
      return dims;
    };
    memory::dims in = activation(g.in_d, g.in_h, g.in_w), out = activation(g.out_d, g.out_h, g.out_w);
    memory::format_tag last = three ? memory::format_tag::ndhwc : memory::format_tag::nhwc;
    src_stored = dn::ActivationDesc(in, dtype, g.channels_last);
    dst_stored = dn::ActivationDesc(out, dtype, g.channels_last);
    src = memory::desc(in, dn::DataType(dtype), last);
    dst = memory::desc(out, dn::DataType(dtype), last);
    strides = spatial(g.stride_d, g.stride_h, g.stride_w);
    kernel = spatial(g.kernel_d, g.kernel_h, g.kernel_w);
    pad_l = spatial(g.pad_front, g.pad_top, g.pad_left);
    // ceil_mode's last windows reach past the padding (Note [Ceil mode]).
    pad_r = spatial(g.pad_back + g.ceil_d, g.pad_bottom + g.ceil_h, g.pad_right + g.ceil_w);
  }

  dnnl::pooling_forward::primitive_desc Forward(dnnl::prop_kind kind, dnnl::algorithm algorithm) const {
    return {dnnl::pooling_forward::desc(kind, algorithm, src, dst, strides, kernel, pad_l, pad_r), dn::Engine()};
  }
};

dn::Key PoolKey(std::string_view op, const PoolDims& g, DType dtype, bool counts_padding) {
  int64_t work = g.batch * g.channels * g.out_d * g.out_h * g.out_w * g.kernel_d * g.kernel_h * g.kernel_w;
  return std::move(dn::Key(op, dn::ThreadLimitForElements(work))
                       .AddAll(dtype, g.input_shape(), g.channels_last, g.kernel_d, g.kernel_h, g.kernel_w, g.stride_d,
                               g.stride_h, g.stride_w, g.pad_front, g.pad_back, g.pad_top, g.pad_bottom, g.pad_left,
                               g.pad_right, g.ceil_d, g.ceil_h, g.ceil_w, counts_padding));
}

bool IsMax(std::string_view op) { return op.starts_with("max"); }

dnnl::algorithm Algorithm(std::string_view op, bool counts_padding) {
  if (IsMax(op)) return dnnl::algorithm::pooling_max;
  return counts_padding ? dnnl::algorithm::pooling_avg_include_padding : dnnl::algorithm::pooling_avg_exclude_padding;
}

// oneDNN's average with padding counted divides by the whole window, even
// where a ceil_mode window reaches past the padding: the loops run those.
bool PoolOneDnnSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  if (!dn::OneDnnSupports(in, attrs)) return false;
  if (!CountsPadding(attrs)) return true;
  return !ops::PoolGeometry("avg_pool3d", in[0].shape, attrs).ceil_overhang();
}

struct PoolForward {
  dnnl::pooling_forward primitive;
  dn::Layout src, dst;
};

struct AvgPoolBackward {
  dnnl::pooling_backward primitive;
  dn::Layout diff_dst, diff_src;
};

void PoolOneDnn(KernelArgs& args) {
  PoolDims g = Geometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  bool counts_padding = CountsPadding(args.attrs);
  auto prim = dn::Cached<PoolForward>(PoolKey(args.op.name, g, dtype, counts_padding), [&] {
    PoolDescs d(g, dtype);
    dnnl::algorithm algorithm = Algorithm(args.op.name, counts_padding);
    return PoolForward{dnnl::pooling_forward(d.Forward(dnnl::prop_kind::forward_inference, algorithm)),
                       dn::Layout::Input(d.src_stored, d.src), dn::Layout::Output(d.dst_stored, d.dst)};
  });
  dn::Scratch scratch;
  memory dst = prim->dst.Out(args.outputs[0], scratch);
  dn::Execute(prim->primitive, {{DNNL_ARG_SRC, prim->src.In(args.inputs[0], scratch)}, {DNNL_ARG_DST, dst}});
  prim->dst.Finish(dst, args.outputs[0]);
}

void AvgPoolGradOneDnn(KernelArgs& args) {
  PoolDims g = Geometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  const Tensor& dy = args.inputs[1];
  if (dy.numel() == 0) {
    std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
    return;
  }
  bool counts_padding = CountsPadding(args.attrs);
  auto prim = dn::Cached<AvgPoolBackward>(PoolKey(args.op.name, g, dtype, counts_padding), [&] {
    PoolDescs d(g, dtype);
    dnnl::algorithm algorithm = Algorithm(args.op.name, counts_padding);
    dnnl::pooling_backward::primitive_desc pd(dnnl::pooling_backward::desc(algorithm, d.src, d.dst, d.strides, d.kernel,
                                                                           d.pad_l, d.pad_r),
                                              dn::Engine(), d.Forward(dnnl::prop_kind::forward_training, algorithm));
    return AvgPoolBackward{dnnl::pooling_backward(pd), dn::Layout::Input(d.dst_stored, d.dst),
                           dn::Layout::Output(d.src_stored, d.src)};
  });
  dn::Scratch scratch;
  memory diff_src = prim->diff_src.Out(args.outputs[0], scratch);
  dn::Execute(prim->primitive, {{DNNL_ARG_DIFF_DST, prim->diff_dst.In(dy, scratch)}, {DNNL_ARG_DIFF_SRC, diff_src}});
  prim->diff_src.Finish(diff_src, args.outputs[0]);
}

// ---------------------------------------------------------------------------
// Loops over one (n, c) plane at a time, in either data format: a plane's
// element (d, h, w) lies at d * slice + h * row + w * column from the
// plane's start (d = 0 for 2-D).

struct Planes {
  int64_t channels, in_n, in_c, in_slice, in_row, in_column, out_n, out_c, out_slice, out_row, out_column;

  explicit Planes(const PoolDims& g) : channels(g.channels) {
    ops::ActivationSteps in = ops::ActivationStrides(g.channels_last, g.channels, g.in_d, g.in_h, g.in_w);
    ops::ActivationSteps out = ops::ActivationStrides(g.channels_last, g.channels, g.out_d, g.out_h, g.out_w);
    in_n = in.n, in_c = in.c, in_slice = in.d, in_row = in.h, in_column = in.w;
    out_n = out.n, out_c = out.c, out_slice = out.d, out_row = out.h, out_column = out.w;
  }
  int64_t in(int64_t plane) const { return plane / channels * in_n + plane % channels * in_c; }
  int64_t out(int64_t plane) const { return plane / channels * out_n + plane % channels * out_c; }
  int64_t in_at(int64_t d, int64_t h, int64_t w) const { return d * in_slice + h * in_row + w * in_column; }
};

// Input slices [d0, d1), rows [h0, h1) and columns [w0, w1) of a window,
// clipped to the input, and what its mean divides by.
struct Window {
  int64_t d0, d1, h0, h1, w0, w1;
  int64_t divisor;
  int64_t count() const { return (d1 - d0) * (h1 - h0) * (w1 - w0); }
};

// One axis of a window: [start, start + kernel) clipped to the input, and
// to the padded input for the count that includes padding.
struct Span {
  int64_t lo, hi, padded;
};
Span SpanAt(int64_t o, int64_t stride, int64_t pad_before, int64_t pad_after, int64_t kernel, int64_t in) {
  int64_t start = o * stride - pad_before;
  int64_t end = start + kernel;
  return {std::max<int64_t>(start, 0), std::min(end, in), std::min(end, in + pad_after) - start};
}

Window WindowAt(const PoolDims& g, int64_t od, int64_t oh, int64_t ow, bool counts_padding) {
  Span d = SpanAt(od, g.stride_d, g.pad_front, g.pad_back, g.kernel_d, g.in_d);
  Span h = SpanAt(oh, g.stride_h, g.pad_top, g.pad_bottom, g.kernel_h, g.in_h);
  Span w = SpanAt(ow, g.stride_w, g.pad_left, g.pad_right, g.kernel_w, g.in_w);
  Window win{d.lo, d.hi, h.lo, h.hi, w.lo, w.hi, 0};
  win.divisor = counts_padding ? d.padded * h.padded * w.padded : win.count();
  return win;
}

// Calls fn(plane, output offset, window) for every output, planes split over
// the thread pool (a plane's windows only touch that plane).
template <typename Fn>
void ForEachWindow(const PoolDims& g, const Planes& at, bool counts_padding, Fn&& fn) {
  int64_t planes = g.batch * g.channels;
  int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.in_d * g.in_h * g.in_w));
  ParallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      for (int64_t od = 0; od < g.out_d; ++od) {
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            fn(p, at.out(p) + od * at.out_slice + oh * at.out_row + ow * at.out_column,
               WindowAt(g, od, oh, ow, counts_padding));
          }
        }
      }
    }
  });
}

// Calls fn(offset within the plane) for each input element of a window, in
// row-major order.
template <typename Fn>
void ForEachElement(const Planes& at, const Window& win, Fn&& fn) {
  for (int64_t d = win.d0; d < win.d1; ++d) {
    for (int64_t h = win.h0; h < win.h1; ++h) {
      for (int64_t w = win.w0; w < win.w1; ++w) fn(at.in_at(d, h, w));
    }
  }
}

// Offset (within the plane) of the window's first maximum in row-major order.
template <typename T>
int64_t ArgMax(const T* plane, const Planes& at, const Window& win) {
  int64_t best = at.in_at(win.d0, win.h0, win.w0);
  T value = plane[best];
  ForEachElement(at, win, [&](int64_t i) {
    if (plane[i] > value) {
      value = plane[i];
      best = i;
    }
  });
  return best;
}

template <typename T>
T WindowMean(const T* plane, const Planes& at, const Window& win) {
  double sum = 0;
  ForEachElement(at, win, [&](int64_t i) { sum += static_cast<double>(plane[i]); });
  return static_cast<T>(sum / static_cast<double>(win.divisor));
}

void PoolReference(KernelArgs& args) {
  PoolDims g = Geometry(args);
  Planes at(g);
  bool max = IsMax(args.op.name);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* x = args.inputs[0].raw<T>();
    T* y = args.outputs[0].raw<T>();
    ForEachWindow(g, at, CountsPadding(args.attrs), [&](int64_t p, int64_t o, const Window& win) {
      const T* plane = x + at.in(p);
      y[o] = max ? plane[ArgMax(plane, at, win)] : WindowMean(plane, at, win);
    });
  });
}

// dy of each window added at its first maximum in x (Note [max_pool2d_grad
// without oneDNN]); y is not read.
void MaxPoolGrad(KernelArgs& args) {
  PoolDims g = Geometry(args);
  Planes at(g);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* x = args.inputs[0].raw<T>();
    const T* dy = args.inputs[2].raw<T>();
    T* dx = args.outputs[0].raw<T>();
    std::memset(static_cast<void*>(dx), 0, args.outputs[0].nbytes());
    ForEachWindow(g, at, false, [&](int64_t p, int64_t o, const Window& win) {
      dx[at.in(p) + ArgMax(x + at.in(p), at, win)] += dy[o];
    });
  });
}

void AvgPoolGradReference(KernelArgs& args) {
  PoolDims g = Geometry(args);
  Planes at(g);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* dy = args.inputs[1].raw<T>();
    T* dx = args.outputs[0].raw<T>();
    std::memset(static_cast<void*>(dx), 0, args.outputs[0].nbytes());
    ForEachWindow(g, at, CountsPadding(args.attrs), [&](int64_t p, int64_t o, const Window& win) {
      T share = dy[o] / static_cast<T>(win.divisor);
      T* plane = dx + at.in(p);
      ForEachElement(at, win, [&](int64_t i) { plane[i] += share; });
    });
  });
}

// A pooling's oneDNN kernel (PoolOneDnnSupports) above its reference loop.
#define MSRT_POOL_KERNELS(op_name, onednn_fn, reference_fn) \
  MSRT_REGISTER_KERNEL({.op = op_name,                      \
                        .impl = "onednn",                   \
                        .priority = dn::kOneDnnPriority,    \
                        .supports = &PoolOneDnnSupports,    \
                        .run = &onednn_fn});                \
  MSRT_REGISTER_KERNEL({.op = op_name,                      \
                        .impl = "reference",                \
                        .priority = kReferencePriority,     \
                        .supports = &dn::ReferenceSupports, \
                        .run = &reference_fn})

MSRT_POOL_KERNELS("max_pool2d", PoolOneDnn, PoolReference);
MSRT_POOL_KERNELS("avg_pool2d", PoolOneDnn, PoolReference);
MSRT_POOL_KERNELS("avg_pool2d_grad", AvgPoolGradOneDnn, AvgPoolGradReference);
MSRT_POOL_KERNELS("max_pool3d", PoolOneDnn, PoolReference);
MSRT_POOL_KERNELS("avg_pool3d", PoolOneDnn, PoolReference);
MSRT_POOL_KERNELS("avg_pool3d_grad", AvgPoolGradOneDnn, AvgPoolGradReference);
MSRT_REGISTER_KERNEL({.op = "max_pool2d_grad",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &dn::ReferenceSupports,
                      .run = &MaxPoolGrad});
MSRT_REGISTER_KERNEL({.op = "max_pool3d_grad",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &dn::ReferenceSupports,
                      .run = &MaxPoolGrad});

}  // namespace
}  // namespace msrt::kernels
