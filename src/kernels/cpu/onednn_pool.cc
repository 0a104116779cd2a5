// max_pool2d, avg_pool2d and their gradient ops on CPU.
//
// max_pool2d, avg_pool2d and avg_pool2d_grad: oneDNN pooling for float32
// (and bfloat16 where oneDNN has it), computed in channels-last layout with
// cached reorders from and to plain NCHW (oneDNN's only plain-NCHW pooling
// is a scalar loop, three to four times slower here; NHWC tensors need no
// reorder). Reference loops for float64, in either data format.
//
// Note [max_pool2d_grad without oneDNN]
// oneDNN's max-pooling backward reads a workspace (where each window's
// maximum was) that only its training-mode forward writes; max_pool2d has
// one output (the catalogue's), so the gradient op would have to re-run that
// forward first. Measured on this project's AMD AVX2 machines, the forward
// with workspace plus the backward took 60 ms for LeNet's first pooling at
// batch 256, against about 5 ms for one pass that finds each window's first
// maximum in x and adds dy there. So max_pool2d_grad is that loop, for
// float32 and float64 alike.
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
using ops::Pool2dGeometry;

using dn::kReferencePriority;

Pool2dGeometry Geometry(const KernelArgs& a) { return ops::PoolGeometry(a.op.name, a.inputs[0].shape(), a.attrs); }

// ---------------------------------------------------------------------------
// oneDNN

struct PoolDescs {
  memory::desc src_stored, dst_stored, src, dst;  // src, dst: channels-last, where oneDNN computes
  memory::dims strides, kernel, pad_l, pad_r;

  PoolDescs(const Pool2dGeometry& g, DType dtype)
      : src_stored(dn::ActivationDesc({g.batch, g.channels, g.in_h, g.in_w}, dtype, g.channels_last)),
        dst_stored(dn::ActivationDesc({g.batch, g.channels, g.out_h, g.out_w}, dtype, g.channels_last)),
        src({g.batch, g.channels, g.in_h, g.in_w}, dn::DataType(dtype), memory::format_tag::nhwc),
        dst({g.batch, g.channels, g.out_h, g.out_w}, dn::DataType(dtype), memory::format_tag::nhwc),
        strides{g.stride_h, g.stride_w},
        kernel{g.kernel_h, g.kernel_w},
        pad_l{g.pad_top, g.pad_left},
        pad_r{g.pad_bottom, g.pad_right} {}

  dnnl::pooling_forward::primitive_desc Forward(dnnl::prop_kind kind, dnnl::algorithm algorithm) const {
    return {dnnl::pooling_forward::desc(kind, algorithm, src, dst, strides, kernel, pad_l, pad_r), dn::Engine()};
  }
};

dn::Key PoolKey(std::string_view op, const Pool2dGeometry& g, DType dtype) {
  int64_t work = g.batch * g.channels * g.out_h * g.out_w * g.kernel_h * g.kernel_w;
  return std::move(dn::Key(op, dn::ThreadLimitForElements(work))
                       .AddAll(dtype, g.input_shape(), g.channels_last, g.kernel_h, g.kernel_w, g.stride_h, g.stride_w,
                               g.pad_top, g.pad_bottom, g.pad_left, g.pad_right));
}

bool IsMax(std::string_view op) { return op.starts_with("max"); }

dnnl::algorithm Algorithm(std::string_view op) {
  // Average pooling divides by the window's elements inside the input.
  return IsMax(op) ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
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
  Pool2dGeometry g = Geometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  auto prim = dn::Cached<PoolForward>(PoolKey(args.op.name, g, dtype), [&] {
    PoolDescs d(g, dtype);
    return PoolForward{dnnl::pooling_forward(d.Forward(dnnl::prop_kind::forward_inference, Algorithm(args.op.name))),
                       dn::Layout::Input(d.src_stored, d.src), dn::Layout::Output(d.dst_stored, d.dst)};
  });
  dn::Scratch scratch;
  memory dst = prim->dst.Out(args.outputs[0], scratch);
  dn::Execute(prim->primitive, {{DNNL_ARG_SRC, prim->src.In(args.inputs[0], scratch)}, {DNNL_ARG_DST, dst}});
  prim->dst.Finish(dst, args.outputs[0]);
}

void AvgPoolGradOneDnn(KernelArgs& args) {
  Pool2dGeometry g = Geometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  const Tensor& dy = args.inputs[1];
  if (dy.numel() == 0) {
    std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
    return;
  }
  auto prim = dn::Cached<AvgPoolBackward>(PoolKey(args.op.name, g, dtype), [&] {
    PoolDescs d(g, dtype);
    dnnl::algorithm algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
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
// element (h, w) lies at h * row + w * column from the plane's start.

struct Planes {
  int64_t channels, in_n, in_c, in_row, in_column, out_n, out_c, out_row, out_column;

  explicit Planes(const Pool2dGeometry& g) : channels(g.channels) {
    ops::Strides4 in = ops::ActivationStrides(g.channels_last, g.channels, g.in_h, g.in_w);
    ops::Strides4 out = ops::ActivationStrides(g.channels_last, g.channels, g.out_h, g.out_w);
    in_n = in.n, in_c = in.c, in_row = in.h, in_column = in.w;
    out_n = out.n, out_c = out.c, out_row = out.h, out_column = out.w;
  }
  int64_t in(int64_t plane) const { return plane / channels * in_n + plane % channels * in_c; }
  int64_t out(int64_t plane) const { return plane / channels * out_n + plane % channels * out_c; }
  int64_t in_at(int64_t h, int64_t w) const { return h * in_row + w * in_column; }
};

// Input rows [h0, h1) and columns [w0, w1) of a window, clipped to the input.
struct Window {
  int64_t h0, h1, w0, w1;
  int64_t count() const { return (h1 - h0) * (w1 - w0); }
};

Window WindowAt(const Pool2dGeometry& g, int64_t oh, int64_t ow) {
  int64_t h = oh * g.stride_h - g.pad_top, w = ow * g.stride_w - g.pad_left;
  return {std::max<int64_t>(h, 0), std::min(h + g.kernel_h, g.in_h), std::max<int64_t>(w, 0),
          std::min(w + g.kernel_w, g.in_w)};
}

// Calls fn(plane, output offset, window) for every output, planes split over
// the thread pool (a plane's windows only touch that plane).
template <typename Fn>
void ForEachWindow(const Pool2dGeometry& g, const Planes& at, Fn&& fn) {
  int64_t planes = g.batch * g.channels;
  int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, g.in_h * g.in_w));
  ParallelFor(planes, grain, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          fn(p, at.out(p) + oh * at.out_row + ow * at.out_column, WindowAt(g, oh, ow));
        }
      }
    }
  });
}

// Offset (within the plane) of the window's first maximum in row-major order.
template <typename T>
int64_t ArgMax(const T* plane, const Planes& at, const Window& win) {
  int64_t best = at.in_at(win.h0, win.w0);
  T value = plane[best];
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) {
      if (plane[at.in_at(h, w)] > value) {
        value = plane[at.in_at(h, w)];
        best = at.in_at(h, w);
      }
    }
  }
  return best;
}

template <typename T>
T WindowMean(const T* plane, const Planes& at, const Window& win) {
  double sum = 0;
  for (int64_t h = win.h0; h < win.h1; ++h) {
    for (int64_t w = win.w0; w < win.w1; ++w) sum += static_cast<double>(plane[at.in_at(h, w)]);
  }
  return static_cast<T>(sum / static_cast<double>(win.count()));
}

void PoolReference(KernelArgs& args) {
  Pool2dGeometry g = Geometry(args);
  Planes at(g);
  bool max = IsMax(args.op.name);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* x = args.inputs[0].raw<T>();
    T* y = args.outputs[0].raw<T>();
    ForEachWindow(g, at, [&](int64_t p, int64_t o, const Window& win) {
      const T* plane = x + at.in(p);
      y[o] = max ? plane[ArgMax(plane, at, win)] : WindowMean(plane, at, win);
    });
  });
}

// dy of each window added at its first maximum in x (Note [max_pool2d_grad
// without oneDNN]); y is not read.
void MaxPoolGrad(KernelArgs& args) {
  Pool2dGeometry g = Geometry(args);
  Planes at(g);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* x = args.inputs[0].raw<T>();
    const T* dy = args.inputs[2].raw<T>();
    T* dx = args.outputs[0].raw<T>();
    std::memset(static_cast<void*>(dx), 0, args.outputs[0].nbytes());
    ForEachWindow(g, at, [&](int64_t p, int64_t o, const Window& win) {
      dx[at.in(p) + ArgMax(x + at.in(p), at, win)] += dy[o];
    });
  });
}

void AvgPoolGradReference(KernelArgs& args) {
  Pool2dGeometry g = Geometry(args);
  Planes at(g);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* dy = args.inputs[1].raw<T>();
    T* dx = args.outputs[0].raw<T>();
    std::memset(static_cast<void*>(dx), 0, args.outputs[0].nbytes());
    ForEachWindow(g, at, [&](int64_t p, int64_t o, const Window& win) {
      T share = dy[o] / static_cast<T>(win.count());
      T* plane = dx + at.in(p);
      for (int64_t h = win.h0; h < win.h1; ++h) {
        for (int64_t w = win.w0; w < win.w1; ++w) plane[at.in_at(h, w)] += share;
      }
    });
  });
}

MSRT_ONEDNN_KERNELS("max_pool2d", PoolOneDnn, PoolReference);
MSRT_ONEDNN_KERNELS("avg_pool2d", PoolOneDnn, PoolReference);
MSRT_ONEDNN_KERNELS("avg_pool2d_grad", AvgPoolGradOneDnn, AvgPoolGradReference);
MSRT_REGISTER_KERNEL({.op = "max_pool2d_grad",
                      .impl = "reference",
                      .priority = kReferencePriority,
                      .supports = &dn::ReferenceSupports,
                      .run = &MaxPoolGrad});

}  // namespace
}  // namespace msrt::kernels
