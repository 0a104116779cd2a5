// max_pool2d and max_pool2d_grad for the common 2x2 window with stride 2 and
// no padding, on plain NCHW: each output reads two input rows once, with no
// layout conversion. For LeNet's first pooling at batch 32 the general paths
// took about 230 us (oneDNN with its channels-last reorders) and 190 us (the
// windowed loop); this takes a fraction of that.
#include <algorithm>
#include <type_traits>

#include "core/thread_pool.h"
#include "kernels/cpu/dtype_dispatch.h"
#include "kernels/kernel.h"
#include "ops/nn_geometry.h"

namespace msrt::kernels {
namespace {

using ops::Pool2dGeometry;

constexpr int kPriority = 30; // ahead of oneDNN (20) and the general loops

bool Is2x2(const std::vector<ops::TensorMeta> &in, const Dict &attrs,
           std::string_view op) {
  if (in[0].dtype != DType::kFloat32 && in[0].dtype != DType::kFloat64)
    return false;
  if (in[0].shape.size() != 4)
    return false;
  Pool2dGeometry g = ops::PoolGeometry(op, in[0].shape, attrs);
  return g.kernel_h == 2 && g.kernel_w == 2 && g.stride_h == 2 &&
         g.stride_w == 2 && g.pad_top == 0 && g.pad_bottom == 0 &&
         g.pad_left == 0 && g.pad_right == 0 && g.out_h == g.in_h / 2 &&
         g.out_w == g.in_w / 2;
}

bool ForwardSupports(const std::vector<ops::TensorMeta> &in,
                     const Dict &attrs) {
  return Is2x2(in, attrs, "max_pool2d");
}
bool GradSupports(const std::vector<ops::TensorMeta> &in, const Dict &attrs) {
  return Is2x2(in, attrs, "max_pool2d_grad");
}

// Planes per parallel chunk: enough work to be worth a thread.
int64_t PlaneGrain(const Pool2dGeometry &g) {
  return std::max<int64_t>(1, 32768 / std::max<int64_t>(1, g.in_h * g.in_w));
}

void MaxPool2x2(KernelArgs &args) {
  Pool2dGeometry g =
      ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs);
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  DispatchDType(
      args.inputs[0].dtype(), "max_pool2d", kFloatTypes, [&]<typename T>() {
        if constexpr (std::is_floating_point_v<T>) {
          const T *x = args.inputs[0].raw<T>();
          T *y = args.outputs[0].raw<T>();
          ParallelFor(g.batch * g.channels, PlaneGrain(g),
                      [&](int64_t begin, int64_t end) {
                        for (int64_t p = begin; p < end; ++p) {
                          for (int64_t oh = 0; oh < g.out_h; ++oh) {
                            const T *r0 = x + p * in_plane + 2 * oh * g.in_w;
                            const T *r1 = r0 + g.in_w;
                            T *out = y + p * out_plane + oh * g.out_w;
                            for (int64_t ow = 0; ow < g.out_w; ++ow) {
                              T a = r0[2 * ow] < r0[2 * ow + 1] ? r0[2 * ow + 1]
                                                                : r0[2 * ow];
                              T b = r1[2 * ow] < r1[2 * ow + 1] ? r1[2 * ow + 1]
                                                                : r1[2 * ow];
                              out[ow] = a < b ? b : a;
                            }
                          }
                        }
                      });
        }
      });
}

// dy goes to each window's first maximum (row-major order), as the general
// loop does (Note [max_pool2d_grad without oneDNN]); windows do not overlap,
// so every input element is written exactly once.
void MaxPool2x2Grad(KernelArgs &args) {
  Pool2dGeometry g =
      ops::PoolGeometry(args.op.name, args.inputs[0].shape(), args.attrs);
  const int64_t in_plane = g.in_h * g.in_w, out_plane = g.out_h * g.out_w;
  DispatchDType(args.inputs[0].dtype(), "max_pool2d_grad", kFloatTypes,
                [&]<typename T>() {
                  if constexpr (std::is_floating_point_v<T>) {
                    const T *x = args.inputs[0].raw<T>();
                    const T *dy = args.inputs[2].raw<T>();
                    T *dx = args.outputs[0].raw<T>();
                    ParallelFor(g.batch * g.channels, PlaneGrain(g),
                                [&](int64_t begin, int64_t end) {
                                  for (int64_t p = begin; p < end; ++p) {
                                    T *plane = dx + p * in_plane;
                                    std::fill(plane, plane + in_plane, T(0));
                                    for (int64_t oh = 0; oh < g.out_h; ++oh) {
                                      const T *r0 =
                                          x + p * in_plane + 2 * oh * g.in_w;
                                      const T *r1 = r0 + g.in_w;
                                      const T *d =
                                          dy + p * out_plane + oh * g.out_w;
                                      T *w0 = plane + 2 * oh * g.in_w;
                                      T *w1 = w0 + g.in_w;
                                      for (int64_t ow = 0; ow < g.out_w; ++ow) {
                                        const int64_t c = 2 * ow;
                                        T *best = w0 + c;
                                        T value = r0[c];
                                        if (r0[c + 1] > value) {
                                          value = r0[c + 1];
                                          best = w0 + c + 1;
                                        }
                                        if (r1[c] > value) {
                                          value = r1[c];
                                          best = w1 + c;
                                        }
                                        if (r1[c + 1] > value)
                                          best = w1 + c + 1;
                                        *best = d[ow];
                                      }
                                    }
                                  }
                                });
                  }
                });
}

MSRT_REGISTER_KERNEL({.op = "max_pool2d",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &ForwardSupports,
                      .run = &MaxPool2x2});
MSRT_REGISTER_KERNEL({.op = "max_pool2d_grad",
                      .impl = "vectorized",
                      .priority = kPriority,
                      .supports = &GradSupports,
                      .run = &MaxPool2x2Grad});

} // namespace
} // namespace msrt::kernels
