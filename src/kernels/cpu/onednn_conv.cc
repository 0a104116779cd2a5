// conv2d and conv3d, and their backprop_input and backprop_filter ops, on
// CPU: oneDNN convolution forward / backward data / backward weights for
// float32 (and bfloat16 where oneDNN has it), with oneDNN choosing the memory
// formats and cached reorders from and to plain NCHW / OIHW (NCDHW / OIDHW)
// -- NHWC activations (data_format "NHWC") are computed as they are;
// reference loops for float64, in either data format. A 2-D convolution is
// the 3-D one with depth 1 (ConvDims), so one set of code runs both.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"
#include "ops/nn_geometry.h"

namespace msrt::kernels {
namespace {

namespace dn = onednn;
using dnnl::memory;
using ops::ConvDims;

// Geometry of each op from its inputs and attributes (validated by inference).
ConvDims ForwardGeometry(const KernelArgs& a) {
  return ops::ConvGeometry(a.op.name, a.inputs[0].shape(), a.inputs[1].shape(), a.attrs);
}
ConvDims BackpropInputGeometry(const KernelArgs& a) {
  return ops::ConvGeometry(a.op.name, a.outputs[0].shape(), a.inputs[1].shape(), a.attrs);
}
ConvDims BackpropFilterGeometry(const KernelArgs& a) {
  return ops::ConvGeometry(a.op.name, a.inputs[1].shape(), a.outputs[0].shape(), a.attrs);
}

// ---------------------------------------------------------------------------
// oneDNN
//
// Note [Padded layouts]
// oneDNN's AVX2 convolutions block channels by 8. With fewer channels (a
// first layer's 1 or 3 input channels) backward data pads them to 8 and
// does up to 8 times the work: for LeNet's first layer at batch 256 it took
// 5.5 ms on 2 threads against 2.8 ms for oneDNN's plain-layout (im2col +
// GEMM) implementation. So a forward or backward-data primitive whose chosen
// layouts are more than twice the plain size is rebuilt with plain layouts.
// Backward weights keeps oneDNN's choice: its plain-layout implementation
// synchronizes threads once per image and was slower on 2 threads (8.9 ms
// against 4.9 ms) and erratic when other processes compete for the cores.

// Note [Convolution scratchpads]
// The convolution primitives take their scratchpad (im2col buffers of the
// plain-layout implementation, reduction buffers) from the call's Scratch,
// not from oneDNN's per-thread global one: with the global one, a graph run
// after eager calls of the same 3-D convolution (the same primitive built on
// two threads, other libraries in the process sharing libdnnl) crashed inside
// oneDNN's im2col, writing past that buffer.
dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

struct ConvDescs {
  memory::dims src, weights, dst, strides, dilates, pad_l, pad_r;
  DType dtype;
  bool channels_last;

  ConvDescs(const ConvDims& g, DType dt) : dtype(dt), channels_last(g.channels_last) {
    // (h, w) and, for 3-D, (d, h, w): `spatial(d, h, w)` lists one axis' values.
    bool three = g.spatial == 3;
    auto spatial = [three](int64_t d, int64_t h, int64_t w) {
      return three ? memory::dims{d, h, w} : memory::dims{h, w};
    };
    auto with = [](memory::dims head, const memory::dims& tail) {
      head.insert(head.end(), tail.begin(), tail.end());
      return head;
    };
    src = with({g.batch, g.in_channels}, spatial(g.in_d, g.in_h, g.in_w));
    dst = with({g.batch, g.out_channels}, spatial(g.out_d, g.out_h, g.out_w));
    // Grouped weights (G, O/G, I/G, k...) share OI...'s plain layout.
    memory::dims kernel = spatial(g.kernel_d, g.kernel_h, g.kernel_w);
    if (g.group == 1) {
      weights = with({g.out_channels, g.in_channels}, kernel);
    } else {
      weights = with({g.group, g.out_channels / g.group, g.in_channels / g.group}, kernel);
    }
    strides = spatial(g.stride_d, g.stride_h, g.stride_w);
    dilates = spatial(g.dilation_d - 1, g.dilation_h - 1, g.dilation_w - 1);  // oneDNN counts the gaps
    pad_l = spatial(g.pad_front, g.pad_top, g.pad_left);
    pad_r = spatial(g.pad_back, g.pad_bottom, g.pad_right);
  }
  memory::desc Plain(const memory::dims& d) const { return dn::PlainDesc(d, dtype); }
  // How an activation (x, y, dy, dx) is stored: NC(D)HW, or NHWC with data_format "NHWC".
  memory::desc Stored(const memory::dims& d) const { return dn::ActivationDesc(d, dtype, channels_last); }
  // Formats for oneDNN to choose, or plain ones (see Note [Padded layouts]).
  bool plain_only = false;
  memory::desc Any(const memory::dims& d) const { return plain_only ? Plain(d) : dn::AnyDesc(d, dtype); }
  // Activations: channels-last tensors are computed as they are (no
  // reorders: that is why a graph keeps them channels-last), plain ones in
  // the layout oneDNN prefers.
  memory::desc Activation(const memory::dims& d) const { return channels_last ? Stored(d) : Any(d); }

  // Whether oneDNN chose for `dims` a blocked layout more than twice the
  // plain one's size (channels padded up to the SIMD width).
  bool Padded(const memory::desc& chosen, const memory::dims& d) const {
    return chosen.get_size() > 2 * Plain(d).get_size();
  }

  dnnl::convolution_forward::primitive_desc Forward(dnnl::prop_kind kind, const dnnl::primitive_attr& attr = {},
                                                    bool with_bias = false) const {
    if (with_bias) {  // conv2d_bias: a 1-D bias of the output channels, added before the epilogue
      return {dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, Activation(src), Any(weights),
                                              Plain({dst[1]}), Activation(dst), strides, dilates, pad_l, pad_r),
              attr, dn::Engine()};
    }
    return {dnnl::convolution_forward::desc(kind, dnnl::algorithm::convolution_direct, Activation(src), Any(weights),
                                            Activation(dst), strides, dilates, pad_l, pad_r),
            attr, dn::Engine()};
  }
};

// Multiply-adds of the convolution, twice (its FLOPs).
int64_t ConvFlops(const ConvDims& g) {
  return 2 * g.batch * g.out_channels * g.out_d * g.out_h * g.out_w * (g.in_channels / g.group) * g.kernel_d *
         g.kernel_h * g.kernel_w;
}

dn::Key ConvKey(std::string_view op, const ConvDims& g, DType dtype,
                int64_t single_thread_below = dn::kSingleThreadFlops) {
  // Small convolutions run on one thread: waking the pool costs more than it saves.
  return std::move(dn::Key(op, dn::ThreadLimitForFlops(ConvFlops(g), single_thread_below))
                       .AddAll(dtype, g.input_shape(), g.filter_shape(), g.channels_last, g.group, g.stride_d,
                               g.stride_h, g.stride_w, g.dilation_d, g.dilation_h, g.dilation_w, g.pad_front,
                               g.pad_back, g.pad_top, g.pad_bottom, g.pad_left, g.pad_right));
}

struct ConvForward {
  dnnl::convolution_forward primitive;
  dn::Layout src, weights, dst;
  memory::desc scratchpad;
};

struct ConvBackwardData {
  dnnl::convolution_backward_data primitive;
  dn::Layout diff_dst, weights, diff_src;
  memory::desc scratchpad;
};

struct ConvBackwardWeights {
  dnnl::convolution_backward_weights primitive;
  dn::Layout src, diff_dst, diff_weights;
  memory::desc scratchpad;
};

ConvForward BuildForward(const ConvDims& g, DType dtype, const dn::Epilogue& epilogue, bool with_bias) {
  ConvDescs d(g, dtype);
  dnnl::primitive_attr attr = UserScratchpad();  // Note [Convolution scratchpads]
  attr.set_post_ops(epilogue.PostOps());
  auto pd = d.Forward(dnnl::prop_kind::forward_inference, attr, with_bias);
  if (d.Padded(pd.src_desc(), d.src) || d.Padded(pd.dst_desc(), d.dst)) {
    d.plain_only = true;
    pd = d.Forward(dnnl::prop_kind::forward_inference, attr, with_bias);
  }
  return ConvForward{dnnl::convolution_forward(pd), dn::Layout::Input(d.Stored(d.src), pd.src_desc()),
                     dn::Layout::Weight(d.Plain(d.weights), pd.weights_desc()),
                     dn::Layout::Output(d.Stored(d.dst), pd.dst_desc()), pd.scratchpad_desc()};
}

// `bias` (conv2d_bias's, plain 1-D) when the primitive was built with one.
void RunForward(const ConvForward& prim, const Tensor& x, const Tensor& w, const Tensor& y,
                const Tensor* bias = nullptr) {
  dn::Scratch scratch;
  memory dst = prim.dst.Out(y, scratch);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, prim.src.In(x, scratch)},
                                       {DNNL_ARG_WEIGHTS, prim.weights.In(w, scratch)},
                                       {DNNL_ARG_DST, dst},
                                       {DNNL_ARG_SCRATCHPAD, scratch.Allocate(prim.scratchpad)}};
  if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, dn::Wrap(dn::PlainDesc({bias->numel()}, bias->dtype()), *bias));
  dn::Execute(prim.primitive, args);
  prim.dst.Finish(dst, y);
}

// conv2d and conv3d; conv2d_bias (a third input) adds its bias in the same primitive.
void ConvOneDnn(KernelArgs& args) {
  ConvDims g = ForwardGeometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  const bool with_bias = args.inputs.size() == 3;
  dn::Epilogue epilogue = dn::EpilogueOf(args.attrs);  // fused elementwise ops, as post-ops
  auto prim = dn::Cached<ConvForward>(ConvKey(args.op.name, g, dtype).Add(epilogue.ops),
                                      [&] { return BuildForward(g, dtype, epilogue, with_bias); });
  RunForward(*prim, args.inputs[0], args.inputs[1], args.outputs[0], with_bias ? &args.inputs[2] : nullptr);
}

ConvBackwardData BuildBackwardData(const ConvDims& g, DType dtype) {
  ConvDescs d(g, dtype);
  auto build = [&] {
    return dnnl::convolution_backward_data::primitive_desc(
        dnnl::convolution_backward_data::desc(dnnl::algorithm::convolution_direct, d.Activation(d.src),
                                              d.Any(d.weights), d.Activation(d.dst), d.strides, d.dilates, d.pad_l,
                                              d.pad_r),
        UserScratchpad(), dn::Engine(), d.Forward(dnnl::prop_kind::forward_training));
  };
  auto pd = build();
  if (d.Padded(pd.diff_src_desc(), d.src) || d.Padded(pd.diff_dst_desc(), d.dst)) {
    d.plain_only = true;
    pd = build();
  }
  return ConvBackwardData{dnnl::convolution_backward_data(pd), dn::Layout::Input(d.Stored(d.dst), pd.diff_dst_desc()),
                          dn::Layout::Weight(d.Plain(d.weights), pd.weights_desc()),
                          dn::Layout::Output(d.Stored(d.src), pd.diff_src_desc()), pd.scratchpad_desc()};
}

void RunBackwardData(const ConvBackwardData& prim, const Tensor& dy, const Tensor& w, const Tensor& dx) {
  dn::Scratch scratch;
  memory diff_src = prim.diff_src.Out(dx, scratch);
  dn::Execute(prim.primitive, {{DNNL_ARG_DIFF_DST, prim.diff_dst.In(dy, scratch)},
                               {DNNL_ARG_WEIGHTS, prim.weights.In(w, scratch)},
                               {DNNL_ARG_DIFF_SRC, diff_src},
                               {DNNL_ARG_SCRATCHPAD, scratch.Allocate(prim.scratchpad)}});
  prim.diff_src.Finish(diff_src, dx);
}

void ConvBackpropInputOneDnn(KernelArgs& args) {
  ConvDims g = BackpropInputGeometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.outputs[0].numel() == 0) return;
  auto prim = dn::Cached<ConvBackwardData>(ConvKey(args.op.name, g, dtype),
                                           [&] { return BuildBackwardData(g, dtype); });
  RunBackwardData(*prim, args.inputs[0], args.inputs[1], args.outputs[0]);
}

// float32 backward weights split by batch (Note [float32 backward weights]),
// defined with the half-type slices below.
bool SplitFloat32BackwardWeights(const ConvDims& g);
void Float32BackpropFilterSlices(KernelArgs& args, const ConvDims& g);

ConvBackwardWeights BuildBackwardWeights(const ConvDims& g, DType dtype) {
  ConvDescs d(g, dtype);
  auto pd = dnnl::convolution_backward_weights::primitive_desc(
      dnnl::convolution_backward_weights::desc(dnnl::algorithm::convolution_direct, d.Activation(d.src),
                                               d.Any(d.weights), d.Activation(d.dst), d.strides, d.dilates, d.pad_l,
                                               d.pad_r),
      UserScratchpad(), dn::Engine(), d.Forward(dnnl::prop_kind::forward_training));
  return ConvBackwardWeights{dnnl::convolution_backward_weights(pd), dn::Layout::Input(d.Stored(d.src), pd.src_desc()),
                             dn::Layout::Input(d.Stored(d.dst), pd.diff_dst_desc()),
                             dn::Layout::Output(d.Plain(d.weights), pd.diff_weights_desc()), pd.scratchpad_desc()};
}

// The primitive on x and dy, its weights gradient into `diff_weights` (in
// the primitive's layout).
void ExecuteBackwardWeights(const ConvBackwardWeights& prim, const Tensor& x, const Tensor& dy,
                            const memory& diff_weights, dn::Scratch& scratch) {
  dn::Execute(prim.primitive, {{DNNL_ARG_SRC, prim.src.In(x, scratch)},
                               {DNNL_ARG_DIFF_DST, prim.diff_dst.In(dy, scratch)},
                               {DNNL_ARG_DIFF_WEIGHTS, diff_weights},
                               {DNNL_ARG_SCRATCHPAD, scratch.Allocate(prim.scratchpad)}});
}

// The primitive on x and dy, its weights gradient into `out` (plain).
void RunBackwardWeights(const ConvBackwardWeights& prim, const Tensor& x, const Tensor& dy, const Tensor& out) {
  dn::Scratch scratch;
  memory diff_weights = prim.diff_weights.Out(out, scratch);
  ExecuteBackwardWeights(prim, x, dy, diff_weights, scratch);
  prim.diff_weights.Finish(diff_weights, out);
}

void ConvBackpropFilterOneDnn(KernelArgs& args) {
  ConvDims g = BackpropFilterGeometry(args);
  DType dtype = args.inputs[0].dtype();
  if (args.inputs[0].numel() == 0) {  // an empty batch: no contributions
    std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
    return;
  }
  if (dtype == DType::kFloat32 && SplitFloat32BackwardWeights(g)) return Float32BackpropFilterSlices(args, g);
  auto prim = dn::Cached<ConvBackwardWeights>(ConvKey(args.op.name, g, dtype),
                                              [&] { return BuildBackwardWeights(g, dtype); });
  RunBackwardWeights(*prim, args.inputs[1], args.inputs[0], args.outputs[0]);
}

// ---------------------------------------------------------------------------
// float16 and bfloat16 backward weights
//
// Note [bfloat16 backward weights]
// oneDNN 2.6's bfloat16 backward-weights convolution (jit_bf16:avx512_core_bf16)
// was 6-9 times slower than its float32 one on one thread for the CIFAR
// ResNet's 3x3 layers (3.8 ms against 0.43 ms for 64 channels at 8x8,
// batch 32), and slower again on two threads, where it reduces the threads'
// partial weights; it took 60% of the ResNet's bfloat16 training step. It has
// no float16 convolution at all without AVX512-FP16. So a half-typed
// backward weights is computed in float32 instead, split by batch over msrt's
// thread pool into one slice per thread. Each thread takes its slice in
// chunks of images whose float32 copies of x and dy fit in
// kConvertedChunkBytes (part of a core's L2): it converts a chunk to float32
// (Note [Half conversions]) into buffers it reuses, runs a one-thread
// float32 primitive on it (cached per chunk size) while the copies are in
// cache, and adds the chunk's weights into its slice's running sum, kept in
// the primitive's layout and reordered to plain once. The slices' partials
// are summed in slice order (reproducible for a thread count;
// deterministic="ON" runs one slice) and rounded to the half type once. Two
// one-thread primitives need no synchronisation inside oneDNN, which also
// makes them steadier than one two-thread primitive when other processes
// share the cores. Converting whole slices instead wrote float32 copies
// of x and dy twice the size of the inputs to memory and read them back:
// the bfloat16 ResNet's backward weights took 1.47-1.55 ms per call at batch
// 128, against 1.19-1.21 ms in 512 KiB chunks (its step 40.1-41.8 -> 36.0-
// 36.4 ms, alternating runs); LeNet at batch 256 7.96-8.01 -> 7.17-7.32 ms.
//
// Note [float32 backward weights]
// The float32 backward weights takes the same batch split (without the
// conversions: each slice's primitive reads its images of x and dy in
// place, and slice 0 writes the output itself) when there is more than one
// thread, at least one image per thread and at least kSingleThreadFlops of
// work (below that the unsplit primitive runs on one thread). On the 2-core
// benchmark machine with other processes on it (load 4.5-5.7), median per
// call, unsplit two-thread primitive -> split: the CIFAR ResNet's 3x3
// layers at batch 32 NHWC 4.0 -> 0.19-0.62 ms at 32x32 and 16x16, unchanged
// at 8x8 NHWC (0.42-0.58 ms) and slower at 8x8 NCHW (0.90 -> 1.15 ms); at
// batch 128 NHWC 2.7-5.8 -> 0.6-3.9 ms; LeNet's at batch 256 4.0-6.0 ->
// 1.0-1.2 ms. The two-thread primitive often took
// a scheduler quantum (4 ms) waiting for its second OpenMP thread; the
// pool's slices do not wait for a descheduled thread that has not started
// one. Partials are summed in slice order: the same inputs and thread count
// give the same bits run to run; deterministic="ON" runs the unsplit
// primitive on one thread.

// ConvKey's fields, on one thread.
dn::Key SliceKey(const ConvDims& g) {
  return std::move(dn::Key("conv_backprop_filter_float32_slice", 1)
                       .AddAll(g.input_shape(), g.filter_shape(), g.channels_last, g.group, g.stride_d, g.stride_h,
                               g.stride_w, g.dilation_d, g.dilation_h, g.dilation_w, g.pad_front, g.pad_back, g.pad_top,
                               g.pad_bottom, g.pad_left, g.pad_right));
}

// A view of images [first, first + count) of a contiguous float32 N... tensor.
Tensor BatchSlice(const Tensor& t, const Shape& shape, int64_t first, int64_t image_elements) {
  return Tensor::FromStorage(t.impl()->storage, shape, t.dtype(),
                             t.impl()->offset + static_cast<size_t>(first * image_elements) * sizeof(float));
}

// The one-thread float32 backward-weights primitive for a slice of `g`'s
// batch (slice.batch images), cached per slice size.
std::shared_ptr<ConvBackwardWeights> SlicePrimitive(const ConvDims& slice) {
  return dn::Cached<ConvBackwardWeights>(SliceKey(slice), [&] { return BuildBackwardWeights(slice, DType::kFloat32); });
}

// sum[i] += part[i] for n floats.
void AddFloats(float* sum, const float* part, int64_t n) {
  for (int64_t i = 0; i < n; ++i) sum[i] += part[i];
}

// Runs run_slice(first, count, out) for batch slices [first, first + count)
// over msrt's pool, each filling `out` (float32, the weights' shape) with its
// images' weights gradient, and sums the partials in slice order into
// partial 0, which it returns (partial 0 is `into` itself when `into` is
// float32).
template <typename RunSlice>
Tensor BackpropFilterSlices(const ConvDims& g, int64_t wanted, const Tensor& into, RunSlice&& run_slice) {
  const int64_t per = (g.batch + wanted - 1) / wanted;
  const int64_t slices = (g.batch + per - 1) / per;  // 5 images for 4 threads: 3 slices of 2, 2, 1
  std::vector<Tensor> partial(static_cast<size_t>(slices));
  ParallelFor(slices, 1, [&](int64_t begin, int64_t end) {
    for (int64_t s = begin; s < end; ++s) {
      const int64_t first = s * per, count = std::min(per, g.batch - first);
      Tensor out = s == 0 && into.dtype() == DType::kFloat32 ? into : Tensor::Empty(into.shape(), DType::kFloat32);
      run_slice(first, count, out);
      partial[static_cast<size_t>(s)] = out;
    }
  });
  for (int64_t s = 1; s < slices; ++s)
    AddFloats(partial[0].raw<float>(), partial[static_cast<size_t>(s)].raw<float>(), into.numel());
  return partial[0];
}

// Bytes of float32 images (x and dy together) one chunk of a half-typed
// backward weights converts at a time (Note [bfloat16 backward weights]): a
// part of a core's L2, so that the primitive reads them from there.
constexpr int64_t kConvertedChunkBytes = int64_t{512} << 10;

template <typename H>
void HalfBackpropFilterSlices(KernelArgs& args, const ConvDims& g) {
  const Tensor& dy = args.inputs[0];
  const Tensor& x = args.inputs[1];
  Tensor& dw = args.outputs[0];
  const int64_t slices = DeterministicKernels() ? 1 : std::min<int64_t>(IntraOpThreads(), g.batch);
  const int64_t x_image = x.numel() / g.batch, dy_image = dy.numel() / g.batch;
  const int64_t image_bytes = (x_image + dy_image) * static_cast<int64_t>(sizeof(float));
  const int64_t chunk = std::max<int64_t>(1, kConvertedChunkBytes / std::max<int64_t>(image_bytes, 1));
  Tensor sum = BackpropFilterSlices(g, slices, dw, [&](int64_t first, int64_t count, const Tensor& out) {
    ConvDims c = g;
    c.batch = std::min(chunk, count);
    const Tensor xbuf = Tensor::Empty(c.input_shape(), DType::kFloat32);
    const Tensor dybuf = Tensor::Empty(c.output_shape(), DType::kFloat32);
    dn::Scratch kept;  // the running sum, in the first chunk's layout
    memory running;
    std::shared_ptr<ConvBackwardWeights> running_prim;
    for (int64_t at = first; at < first + count; at += chunk) {
      c.batch = std::min(chunk, first + count - at);
      auto prim = SlicePrimitive(c);
      const Tensor xs = BatchSlice(xbuf, c.input_shape(), 0, x_image);
      const Tensor dys = BatchSlice(dybuf, c.output_shape(), 0, dy_image);
      cpu::ToFloatN(x.raw<H>() + at * x_image, xs.raw<float>(), c.batch * x_image);
      cpu::ToFloatN(dy.raw<H>() + at * dy_image, dys.raw<float>(), c.batch * dy_image);
      dn::Scratch scratch;
      memory written = at == first ? prim->diff_weights.Out(out, kept) : scratch.Allocate(prim->diff_weights.chosen());
      ExecuteBackwardWeights(*prim, xs, dys, written, scratch);
      if (at == first) {
        running = written;
        running_prim = prim;
        continue;
      }
      if (written.get_desc() != running.get_desc()) {  // a last, smaller chunk whose primitive chose another layout
        memory same = scratch.Allocate(running.get_desc());
        dnnl::reorder(written, same).execute(dn::Stream(), written, same);
        dn::Stream().wait();
        written = same;
      }
      // oneDNN keeps a blocked layout's padding zero, so it adds as it is
      AddFloats(static_cast<float*>(running.get_data_handle()), static_cast<const float*>(written.get_data_handle()),
                static_cast<int64_t>(running.get_desc().get_size() / sizeof(float)));
    }
    running_prim->diff_weights.Finish(running, out);
  });
  cpu::FromFloatN(sum.raw<float>(), dw.raw<H>(), dw.numel());
}

bool SplitFloat32BackwardWeights(const ConvDims& g) {
  const int threads = IntraOpThreads();
  return !DeterministicKernels() && threads > 1 && g.batch >= threads && ConvFlops(g) >= dn::kSingleThreadFlops;
}

void Float32BackpropFilterSlices(KernelArgs& args, const ConvDims& g) {
  const Tensor& dy = args.inputs[0];
  const Tensor& x = args.inputs[1];
  const int64_t slices = std::min<int64_t>(IntraOpThreads(), g.batch);
  const int64_t x_image = x.numel() / g.batch, dy_image = dy.numel() / g.batch;
  BackpropFilterSlices(g, slices, args.outputs[0], [&](int64_t first, int64_t count, const Tensor& out) {
    ConvDims slice = g;
    slice.batch = count;
    RunBackwardWeights(*SlicePrimitive(slice), BatchSlice(x, slice.input_shape(), first, x_image),
                       BatchSlice(dy, slice.output_shape(), first, dy_image), out);
  });
}

void HalfConvBackpropFilter(KernelArgs& args) {
  ConvDims g = BackpropFilterGeometry(args);
  if (args.inputs[0].numel() == 0) {  // an empty batch: no contributions
    std::memset(args.outputs[0].raw(), 0, args.outputs[0].nbytes());
    return;
  }
  if (args.inputs[0].dtype() == DType::kFloat16) return HalfBackpropFilterSlices<Half>(args, g);
  HalfBackpropFilterSlices<BFloat16>(args, g);
}

bool HalfBackpropFilterSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return (in[0].dtype == DType::kFloat16 || in[0].dtype == DType::kBFloat16) && in[1].dtype == in[0].dtype &&
         !attrs.Contains(kEpilogueAttr);
}

// ---------------------------------------------------------------------------
// float16 forward and backward data
//
// Note [float16 convolutions]
// oneDNN 2.6 has no float16 convolution without AVX512-FP16. As for the
// products (Note [float16 products]), a float16 forward or backward-data
// convolution is split by batch over msrt's thread pool: each thread converts
// its images (x, or dy) to float32, runs a one-thread float32 primitive
// (cached per slice size, with the epilogue as post-ops) and converts its
// images of the result back while they are in cache; the weights are
// converted once. Each image's sums are the float32 primitive's, so the
// split does not change them; a batch of one, a small convolution or
// deterministic="ON" runs as one slice on oneDNN's own threads.

struct HalfSlices {
  int64_t count = 1, per = 1;
};

HalfSlices SliceBatch(const ConvDims& g) {
  const int64_t flops = 2 * g.batch * g.out_channels * g.out_d * g.out_h * g.out_w * (g.in_channels / g.group) *
                        g.kernel_d * g.kernel_h * g.kernel_w;
  int64_t wanted = DeterministicKernels() || flops < dn::kSingleThreadFlops ? 1 : IntraOpThreads();
  HalfSlices s;
  s.count = std::max<int64_t>(1, std::min(wanted, g.batch));
  s.per = (g.batch + s.count - 1) / s.count;
  return s;
}

// Runs run(slice geometry, first image, images, one_thread) for each slice.
template <typename Run>
void ForEachBatchSlice(const ConvDims& g, Run&& run) {
  HalfSlices s = SliceBatch(g);
  if (s.count == 1) return run(g, int64_t{0}, g.batch, false);
  ParallelFor(s.count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t first = i * s.per, n = std::min(s.per, g.batch - first);
      if (n <= 0) continue;
      ConvDims slice = g;
      slice.batch = n;
      run(slice, first, n, true);
    }
  });
}

constexpr int64_t kAlwaysOneThread = std::numeric_limits<int64_t>::max();

Tensor WeightsInFloat32(const Tensor& w) {
  Tensor w32 = Tensor::Empty(w.shape(), DType::kFloat32);
  cpu::ToFloatN(w.raw<Half>(), w32.raw<float>(), w.numel());
  return w32;
}

void HalfConvForward(KernelArgs& args) {
  ConvDims g = ForwardGeometry(args);
  if (args.outputs[0].numel() == 0) return;
  dn::Epilogue epilogue = dn::EpilogueOf(args.attrs);
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  Tensor w32 = WeightsInFloat32(args.inputs[1]);
  const bool with_bias = args.inputs.size() == 3;  // conv2d_bias
  Tensor b32 = with_bias ? WeightsInFloat32(args.inputs[2]) : Tensor();
  const int64_t x_image = x.numel() / g.batch, y_image = y.numel() / g.batch;
  ForEachBatchSlice(g, [&](const ConvDims& slice, int64_t first, int64_t n, bool one_thread) {
    auto key = ConvKey("conv_float32_slice", slice, DType::kFloat32,
                       one_thread ? kAlwaysOneThread : dn::kSingleThreadFlops);
    auto prim = dn::Cached<ConvForward>(key.AddAll(epilogue.ops, with_bias),
                                        [&] { return BuildForward(slice, DType::kFloat32, epilogue, with_bias); });
    Tensor xs = Tensor::Empty(slice.input_shape(), DType::kFloat32);
    Tensor ys = Tensor::Empty(slice.output_shape(), DType::kFloat32);
    cpu::ToFloatN(x.raw<Half>() + first * x_image, xs.raw<float>(), n * x_image);
    RunForward(*prim, xs, w32, ys, with_bias ? &b32 : nullptr);
    cpu::FromFloatN(ys.raw<float>(), y.raw<Half>() + first * y_image, n * y_image);
  });
}

void HalfConvBackpropInput(KernelArgs& args) {
  ConvDims g = BackpropInputGeometry(args);
  if (args.outputs[0].numel() == 0) return;
  const Tensor& dy = args.inputs[0];
  Tensor& dx = args.outputs[0];
  Tensor w32 = WeightsInFloat32(args.inputs[1]);
  const int64_t dy_image = dy.numel() / g.batch, dx_image = dx.numel() / g.batch;
  ForEachBatchSlice(g, [&](const ConvDims& slice, int64_t first, int64_t n, bool one_thread) {
    auto key = ConvKey("conv_backprop_input_float32_slice", slice, DType::kFloat32,
                       one_thread ? kAlwaysOneThread : dn::kSingleThreadFlops);
    auto prim = dn::Cached<ConvBackwardData>(key, [&] { return BuildBackwardData(slice, DType::kFloat32); });
    Tensor dys = Tensor::Empty(slice.output_shape(), DType::kFloat32);
    Tensor dxs = Tensor::Empty(slice.input_shape(), DType::kFloat32);
    cpu::ToFloatN(dy.raw<Half>() + first * dy_image, dys.raw<float>(), n * dy_image);
    RunBackwardData(*prim, dys, w32, dxs);
    cpu::FromFloatN(dxs.raw<float>(), dx.raw<Half>() + first * dx_image, n * dx_image);
  });
}

// float16 inputs (all of them) and an epilogue oneDNN can apply.
bool HalfConvSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return std::all_of(in.begin(), in.end(), [](const ops::TensorMeta& m) { return m.dtype == DType::kFloat16; }) &&
         dn::EpilogueOf(attrs).supported;
}

// ---------------------------------------------------------------------------
// Reference loops (sums in double).

// Index helpers over the activations' layout (NC(D)HW or NHWC) and OI(D)HW
// weights; a 2-D convolution has depth 1.
struct Index {
  const ConvDims& g;
  ops::ActivationSteps xs = ops::ActivationStrides(g.channels_last, g.in_channels, g.in_d, g.in_h, g.in_w);
  ops::ActivationSteps ys = ops::ActivationStrides(g.channels_last, g.out_channels, g.out_d, g.out_h, g.out_w);
  int64_t group_in() const { return g.in_channels / g.group; }
  int64_t group_out() const { return g.out_channels / g.group; }
  int64_t x(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return n * xs.n + c * xs.c + d * xs.d + h * xs.h + w * xs.w;
  }
  int64_t y(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return n * ys.n + c * ys.c + d * ys.d + h * ys.h + w * ys.w;
  }
  int64_t k(int64_t o, int64_t i, int64_t d, int64_t h, int64_t w) const {
    return (((o * group_in() + i) * g.kernel_d + d) * g.kernel_h + h) * g.kernel_w + w;
  }
};

// Input position along one axis that output position `o` meets at kernel
// tap `k`, or -1 when it falls in the padding.
inline int64_t InputAt(int64_t o, int64_t k, int64_t pad, int64_t dilation, int64_t stride, int64_t in) {
  int64_t i = o * stride - pad + k * dilation;
  return i >= 0 && i < in ? i : -1;
}

// Output position along one axis that input position `i` meets at kernel
// tap `k`, or -1.
inline int64_t OutputAt(int64_t i, int64_t k, int64_t pad, int64_t dilation, int64_t stride, int64_t out) {
  int64_t v = i + pad - k * dilation;
  if (v < 0 || v % stride != 0) return -1;
  v /= stride;
  return v < out ? v : -1;
}

// Calls fn(od, oh, ow, kd, kh, kw, id, ih, iw) for every output position and
// kernel tap that meets the input.
template <typename Fn>
void ForEachTap(const ConvDims& g, Fn&& fn) {
  for (int64_t od = 0; od < g.out_d; ++od) {
    for (int64_t kd = 0; kd < g.kernel_d; ++kd) {
      int64_t id = InputAt(od, kd, g.pad_front, g.dilation_d, g.stride_d, g.in_d);
      if (id < 0) continue;
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
          int64_t ih = InputAt(oh, kh, g.pad_top, g.dilation_h, g.stride_h, g.in_h);
          if (ih < 0) continue;
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
              int64_t iw = InputAt(ow, kw, g.pad_left, g.dilation_w, g.stride_w, g.in_w);
              if (iw >= 0) fn(od, oh, ow, kd, kh, kw, id, ih, iw);
            }
          }
        }
      }
    }
  }
}

// y = conv(x, w), plus bias[oc] when `bias` is given (conv2d_bias).
template <typename T>
void ForwardLoops(const ConvDims& g, const T* x, const T* w, T* y, const T* bias = nullptr) {
  Index at{g};
  int64_t positions = g.out_d * g.out_h * g.out_w;
  ParallelFor(g.batch * g.out_channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(static_cast<size_t>(positions));
    for (int64_t item = begin; item < end; ++item) {
      int64_t n = item / g.out_channels, oc = item % g.out_channels;
      int64_t first_in = (oc / at.group_out()) * at.group_in();
      std::fill(acc.begin(), acc.end(), bias != nullptr ? static_cast<double>(bias[oc]) : 0.0);
      for (int64_t ic = 0; ic < at.group_in(); ++ic) {
        ForEachTap(g, [&](int64_t od, int64_t oh, int64_t ow, int64_t kd, int64_t kh, int64_t kw, int64_t id,
                          int64_t ih, int64_t iw) {
          acc[static_cast<size_t>((od * g.out_h + oh) * g.out_w + ow)] +=
              static_cast<double>(x[at.x(n, first_in + ic, id, ih, iw)]) *
              static_cast<double>(w[at.k(oc, ic, kd, kh, kw)]);
        });
      }
      for (int64_t od = 0; od < g.out_d; ++od) {
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          for (int64_t ow = 0; ow < g.out_w; ++ow) {
            y[at.y(n, oc, od, oh, ow)] = static_cast<T>(acc[static_cast<size_t>((od * g.out_h + oh) * g.out_w + ow)]);
          }
        }
      }
    }
  });
}

template <typename T>
void BackpropInputLoops(const ConvDims& g, const T* dy, const T* w, T* dx) {
  Index at{g};
  ParallelFor(g.batch * g.in_channels, 1, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      int64_t n = item / g.in_channels, c = item % g.in_channels;
      int64_t group = c / at.group_in(), ic = c % at.group_in();
      for (int64_t id = 0; id < g.in_d; ++id) {
        for (int64_t ih = 0; ih < g.in_h; ++ih) {
          for (int64_t iw = 0; iw < g.in_w; ++iw) {
            double acc = 0;
            for (int64_t kd = 0; kd < g.kernel_d; ++kd) {
              int64_t od = OutputAt(id, kd, g.pad_front, g.dilation_d, g.stride_d, g.out_d);
              if (od < 0) continue;
              for (int64_t kh = 0; kh < g.kernel_h; ++kh) {
                int64_t oh = OutputAt(ih, kh, g.pad_top, g.dilation_h, g.stride_h, g.out_h);
                if (oh < 0) continue;
                for (int64_t kw = 0; kw < g.kernel_w; ++kw) {
                  int64_t ow = OutputAt(iw, kw, g.pad_left, g.dilation_w, g.stride_w, g.out_w);
                  if (ow < 0) continue;
                  for (int64_t j = 0; j < at.group_out(); ++j) {
                    int64_t oc = group * at.group_out() + j;
                    acc += static_cast<double>(dy[at.y(n, oc, od, oh, ow)]) *
                           static_cast<double>(w[at.k(oc, ic, kd, kh, kw)]);
                  }
                }
              }
            }
            dx[at.x(n, c, id, ih, iw)] = static_cast<T>(acc);
          }
        }
      }
    }
  });
}

template <typename T>
void BackpropFilterLoops(const ConvDims& g, const T* dy, const T* x, T* dw) {
  Index at{g};
  int64_t taps = g.kernel_d * g.kernel_h * g.kernel_w;
  ParallelFor(g.out_channels, 1, [&](int64_t begin, int64_t end) {
    std::vector<double> acc(static_cast<size_t>(taps));
    for (int64_t oc = begin; oc < end; ++oc) {
      int64_t first_in = (oc / at.group_out()) * at.group_in();
      for (int64_t ic = 0; ic < at.group_in(); ++ic) {
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t n = 0; n < g.batch; ++n) {
          ForEachTap(g, [&](int64_t od, int64_t oh, int64_t ow, int64_t kd, int64_t kh, int64_t kw, int64_t id,
                            int64_t ih, int64_t iw) {
            acc[static_cast<size_t>((kd * g.kernel_h + kh) * g.kernel_w + kw)] +=
                static_cast<double>(dy[at.y(n, oc, od, oh, ow)]) *
                static_cast<double>(x[at.x(n, first_in + ic, id, ih, iw)]);
          });
        }
        for (int64_t t = 0; t < taps; ++t) dw[at.k(oc, ic, 0, 0, 0) + t] = static_cast<T>(acc[static_cast<size_t>(t)]);
      }
    }
  });
}

void ConvReference(KernelArgs& args) {
  ConvDims g = ForwardGeometry(args);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    const T* bias = args.inputs.size() == 3 ? args.inputs[2].raw<T>() : nullptr;  // conv2d_bias
    ForwardLoops<T>(g, args.inputs[0].raw<T>(), args.inputs[1].raw<T>(), args.outputs[0].raw<T>(), bias);
  });
}

void ConvBackpropInputReference(KernelArgs& args) {
  ConvDims g = BackpropInputGeometry(args);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    BackpropInputLoops<T>(g, args.inputs[0].raw<T>(), args.inputs[1].raw<T>(), args.outputs[0].raw<T>());
  });
}

void ConvBackpropFilterReference(KernelArgs& args) {
  ConvDims g = BackpropFilterGeometry(args);
  dn::DispatchFloat(args.inputs[0].dtype(), args.op.name, [&]<typename T>() {
    BackpropFilterLoops<T>(g, args.inputs[0].raw<T>(), args.inputs[1].raw<T>(), args.outputs[0].raw<T>());
  });
}

MSRT_ONEDNN_KERNELS("conv2d", ConvOneDnn, ConvReference);
MSRT_ONEDNN_KERNELS("conv2d_bias", ConvOneDnn, ConvReference);
MSRT_ONEDNN_KERNELS("conv2d_backprop_input", ConvBackpropInputOneDnn, ConvBackpropInputReference);
MSRT_ONEDNN_KERNELS("conv2d_backprop_filter", ConvBackpropFilterOneDnn, ConvBackpropFilterReference);
MSRT_ONEDNN_KERNELS("conv3d", ConvOneDnn, ConvReference);
MSRT_ONEDNN_KERNELS("conv3d_backprop_input", ConvBackpropInputOneDnn, ConvBackpropInputReference);
MSRT_ONEDNN_KERNELS("conv3d_backprop_filter", ConvBackpropFilterOneDnn, ConvBackpropFilterReference);
// Note [bfloat16 backward weights]: above the oneDNN kernel for the half types.
MSRT_HALF_SLICES_KERNEL("conv2d_backprop_filter", HalfBackpropFilterSupports, HalfConvBackpropFilter);
MSRT_HALF_SLICES_KERNEL("conv3d_backprop_filter", HalfBackpropFilterSupports, HalfConvBackpropFilter);
// Note [float16 convolutions]: above the oneDNN kernels, which do not take float16.
MSRT_HALF_SLICES_KERNEL("conv2d", HalfConvSupports, HalfConvForward);
MSRT_HALF_SLICES_KERNEL("conv2d_bias", HalfConvSupports, HalfConvForward);
MSRT_HALF_SLICES_KERNEL("conv2d_backprop_input", HalfConvSupports, HalfConvBackpropInput);
MSRT_HALF_SLICES_KERNEL("conv3d", HalfConvSupports, HalfConvForward);
MSRT_HALF_SLICES_KERNEL("conv3d_backprop_input", HalfConvSupports, HalfConvBackpropInput);

}  // namespace
}  // namespace msrt::kernels
