// matmul, batch_matmul, dense and bias_add on CPU: oneDNN matmul / binary
// primitives for float32 (and bfloat16 where oneDNN has it), reference
// loops (float64, and float32 when oneDNN declines a shape), and a blocked
// loop for complex64 and complex128 matmul / batch_matmul.
#include <algorithm>
#include <complex>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/dtype_dispatch.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/kernel.h"

namespace msrt::kernels {
namespace {

namespace dn = onednn;
using cpu::Strides;
using dnnl::memory;

// ---------------------------------------------------------------------------
// The product op(a) @ op(b) over broadcast batch dims, as both kernels see it.

struct Product {
  Shape batch;             // output batch dims
  Shape a_batch, b_batch;  // the operands' batch dims, left-padded with 1 to batch's rank
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
};

Product DescribeProduct(const Tensor& a, const Tensor& b, const Tensor& out, const Dict& attrs) {
  Product p;
  p.ta = ops::AttrBool(attrs, "transpose_a");
  p.tb = ops::AttrBool(attrs, "transpose_b");
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const Shape& os = out.shape();
  size_t r = os.size();
  p.m = os[r - 2];
  p.n = os[r - 1];
  p.k = p.ta ? as[as.size() - 2] : as[as.size() - 1];
  p.batch.assign(os.begin(), os.end() - 2);
  p.a_batch.assign(r - as.size(), 1);
  p.a_batch.insert(p.a_batch.end(), as.begin(), as.end() - 2);
  p.b_batch.assign(r - bs.size(), 1);
  p.b_batch.insert(p.b_batch.end(), bs.begin(), bs.end() - 2);
  return p;
}

template <typename T>
void ReferenceProduct(const Product& p, const T* a, const T* b, T* out, const T* bias, bool serial = false) {
  int64_t batches = NumElements(p.batch);
  auto a_strides = Strides(p.a_batch);
  auto b_strides = Strides(p.b_batch);
  auto out_strides = Strides(p.batch);
  int64_t mk = p.m * p.k, kn = p.k * p.n;
  // Element (i, j) of op(a): a is stored (m, k), or (k, m) when transposed.
  int64_t a_row = p.ta ? 1 : p.k, a_col = p.ta ? p.m : 1;
  int64_t b_row = p.tb ? 1 : p.n, b_col = p.tb ? p.k : 1;
  ParallelFor(batches * p.m, serial ? std::max<int64_t>(batches * p.m, 1) : 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      CancellationPoint();  // a large float64 product runs for seconds
      int64_t bi = row / p.m, i = row % p.m;
      int64_t a_off = 0, b_off = 0;
      for (size_t d = 0; d < p.batch.size(); ++d) {
        int64_t idx = (bi / out_strides[d]) % p.batch[d];
        if (p.a_batch[d] != 1) a_off += idx * a_strides[d];
        if (p.b_batch[d] != 1) b_off += idx * b_strides[d];
      }
      const T* pa = a + a_off * mk + i * a_row;
      const T* pb = b + b_off * kn;
      T* po = out + row * p.n;
      for (int64_t j = 0; j < p.n; ++j) {
        double acc = bias != nullptr ? static_cast<double>(bias[j]) : 0.0;
        for (int64_t q = 0; q < p.k; ++q) {
          acc += static_cast<double>(pa[q * a_col]) * static_cast<double>(pb[q * b_row + j * b_col]);
        }
        po[j] = static_cast<T>(acc);
      }
    }
  });
}

void RunReferenceProduct(const Product& p, const Tensor& a, const Tensor& b, Tensor& out, const Tensor* bias,
                         std::string_view op, bool serial = false) {
  dn::DispatchFloat(a.dtype(), op, [&]<typename T>() {
    ReferenceProduct<T>(p, a.raw<T>(), b.raw<T>(), out.raw<T>(), bias ? bias->raw<T>() : nullptr, serial);
  });
}

// Note [Tiny products]
// Below this many multiply-adds, running a oneDNN primitive (the cache
// lookup by a key of the shapes, wrapping each operand, the primitive's own
// setup) costs several times the arithmetic: the reference loop does them
// on the calling thread instead.
constexpr int64_t kTinyProductMacs = 4096;

bool TinyProduct(const Product& p, DType dtype) {
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64) return false;
  const int64_t macs = NumElements(p.batch) * p.m * p.n * p.k;
  return macs <= kTinyProductMacs;
}

// ---------------------------------------------------------------------------
// oneDNN matmul with plain (possibly transposed) operands: no reorders.

struct MatmulPrimitive {
  bool available = false;  // oneDNN has an implementation
  dnnl::matmul primitive;
  memory::desc a, b, bias, out;
  bool has_bias = false;
};

// oneDNN dims and strides of op(x) for x stored row-major as batch + (rows, cols).
memory::desc OperandDesc(const Shape& batch, int64_t rows, int64_t cols, bool transposed, DType dtype) {
  // Logical (rows, cols); stored (cols, rows) when transposed.
  Shape stored = batch;
  stored.push_back(transposed ? cols : rows);
  stored.push_back(transposed ? rows : cols);
  auto strides = Strides(stored);
  memory::dims dims(batch.begin(), batch.end());
  dims.push_back(rows);
  dims.push_back(cols);
  memory::dims st(strides.begin(), strides.end());
  if (transposed) std::swap(st[st.size() - 1], st[st.size() - 2]);
  return dn::StridedDesc(dims, st, dtype);
}

// Not `available` when oneDNN has no implementation for this product (the
// caller falls back to the reference loop; the answer is cached too).
std::shared_ptr<MatmulPrimitive> MatmulFor(std::string_view op, const Product& p, DType dtype, bool has_bias,
                                           const dn::Epilogue& epilogue) {
  dn::Key key(op, dn::ThreadLimitForFlops(2 * NumElements(p.batch) * p.m * p.n * p.k));
  key.AddAll(dtype, p.batch, p.a_batch, p.b_batch, p.m, p.n, p.k, p.ta, p.tb, has_bias, epilogue.ops);
  if (auto hit = dn::CacheFind(key)) return std::static_pointer_cast<MatmulPrimitive>(hit);
  auto built = std::make_shared<MatmulPrimitive>();
  built->a = OperandDesc(p.a_batch, p.m, p.k, p.ta, dtype);
  built->b = OperandDesc(p.b_batch, p.k, p.n, p.tb, dtype);
  Shape out_dims = p.batch;
  out_dims.push_back(p.m);
  out_dims.push_back(p.n);
  built->out = dn::PlainDesc(dn::Dims(out_dims), dtype);
  built->has_bias = has_bias;
  dnnl::primitive_attr attr;
  attr.set_post_ops(epilogue.post_ops);
  try {
    if (has_bias) {
      memory::dims bias_dims(out_dims.size(), 1);
      bias_dims.back() = p.n;
      built->bias = dn::PlainDesc(bias_dims, dtype);
      built->primitive = dnnl::matmul(
          dnnl::matmul::primitive_desc(dnnl::matmul::desc(built->a, built->b, built->bias, built->out), attr,
                                       dn::Engine()));
    } else {
      built->primitive = dnnl::matmul(
          dnnl::matmul::primitive_desc(dnnl::matmul::desc(built->a, built->b, built->out), attr, dn::Engine()));
    }
    built->available = true;
  } catch (const dnnl::error&) {
    built->available = false;
  }
  dn::CacheInsert(key, built);
  return built;
}

// Handles empty products; returns true when nothing is left to compute.
bool TrivialProduct(const Product& p, Tensor& out, const Tensor* bias) {
  if (out.numel() == 0) return true;
  if (p.k != 0) return false;
  // An empty sum: zeros, plus the bias.
  DispatchDType<kFloatTypes | kHalfTypes>(out.dtype(), "matmul", [&]<typename T>() {
    T* o = out.raw<T>();
    for (int64_t i = 0; i < out.numel(); ++i) {
      if (bias != nullptr) {
        o[i] = bias->raw<T>()[i % p.n];
      } else {
        std::memset(&o[i], 0, sizeof(T));
      }
    }
  });
  return true;
}

void RunProduct(std::string_view op, const Product& p, const Tensor& a, const Tensor& b, Tensor& out,
                const Tensor* bias, const dn::Epilogue& epilogue = {}) {
  if (TrivialProduct(p, out, bias)) {
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  if (TinyProduct(p, a.dtype())) {
    RunReferenceProduct(p, a, b, out, bias, op, /*serial=*/true);
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  auto prim = MatmulFor(op, p, a.dtype(), bias != nullptr, epilogue);
  if (!prim->available) {
    RunReferenceProduct(p, a, b, out, bias, op);
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, dn::Wrap(prim->a, a)},
                                       {DNNL_ARG_WEIGHTS, dn::Wrap(prim->b, b)},
                                       {DNNL_ARG_DST, dn::Wrap(prim->out, out)}};
  if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, dn::Wrap(prim->bias, *bias));
  dn::Execute(prim->primitive, args);
}

void MatmulOneDnn(KernelArgs& args) {
  Product p = DescribeProduct(args.inputs[0], args.inputs[1], args.outputs[0], args.attrs);
  RunProduct(args.op.name, p, args.inputs[0], args.inputs[1], args.outputs[0], nullptr, dn::EpilogueOf(args.attrs));
}

void MatmulReference(KernelArgs& args) {
  Product p = DescribeProduct(args.inputs[0], args.inputs[1], args.outputs[0], args.attrs);
  if (TrivialProduct(p, args.outputs[0], nullptr)) return;
  RunReferenceProduct(p, args.inputs[0], args.inputs[1], args.outputs[0], nullptr, args.op.name);
}

// ---------------------------------------------------------------------------
// Complex products: rows of op(a) against op(b) packed row-major, in column
// blocks whose real and imaginary accumulators stay in L1.

template <typename R>
void ComplexProduct(const Product& p, const std::complex<R>* a, const std::complex<R>* b, std::complex<R>* out) {
  using C = std::complex<R>;
  constexpr int64_t kBlockN = 256;
  const int64_t batches = NumElements(p.batch);
  const int64_t b_batches = NumElements(p.b_batch);
  auto a_strides = Strides(p.a_batch);
  auto b_strides = Strides(p.b_batch);
  auto out_strides = Strides(p.batch);
  const int64_t mk = p.m * p.k, kn = p.k * p.n;
  const int64_t a_row = p.ta ? 1 : p.k, a_col = p.ta ? p.m : 1;
  // op(b) as (k, n) rows: b itself, or its transpose packed once.
  std::vector<C> packed;
  const C* rows_b = b;
  if (p.tb) {
    packed.resize(static_cast<size_t>(b_batches * kn));
    for (int64_t bb = 0; bb < b_batches; ++bb) {
      for (int64_t q = 0; q < p.k; ++q) {
        for (int64_t j = 0; j < p.n; ++j) packed[bb * kn + q * p.n + j] = b[bb * kn + j * p.k + q];
      }
    }
    rows_b = packed.data();
  }
  ParallelFor(batches * p.m, 1, [&](int64_t begin, int64_t end) {
    std::vector<R> acc_re(kBlockN), acc_im(kBlockN);
    for (int64_t row = begin; row < end; ++row) {
      CancellationPoint();
      const int64_t bi = row / p.m, i = row % p.m;
      int64_t a_off = 0, b_off = 0;
      for (size_t d = 0; d < p.batch.size(); ++d) {
        int64_t idx = (bi / out_strides[d]) % p.batch[d];
        if (p.a_batch[d] != 1) a_off += idx * a_strides[d];
        if (p.b_batch[d] != 1) b_off += idx * b_strides[d];
      }
      const C* pa = a + a_off * mk + i * a_row;
      const C* pb = rows_b + b_off * kn;
      C* po = out + row * p.n;
      for (int64_t j0 = 0; j0 < p.n; j0 += kBlockN) {
        const int64_t w = std::min(kBlockN, p.n - j0);
        std::fill(acc_re.begin(), acc_re.begin() + w, R(0));
        std::fill(acc_im.begin(), acc_im.begin() + w, R(0));
        R* re = acc_re.data();
        R* im = acc_im.data();
        for (int64_t q = 0; q < p.k; ++q) {
          const C av = pa[q * a_col];
          const R ar = av.real(), ai = av.imag();
          const R* brow = reinterpret_cast<const R*>(pb + q * p.n + j0);  // interleaved (re, im)
          for (int64_t j = 0; j < w; ++j) {
            const R br = brow[2 * j], bim = brow[2 * j + 1];
            re[j] += ar * br - ai * bim;
            im[j] += ar * bim + ai * br;
          }
        }
        for (int64_t j = 0; j < w; ++j) po[j0 + j] = C(re[j], im[j]);
      }
    }
  });
}

void MatmulComplex(KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  Tensor& out = args.outputs[0];
  Product p = DescribeProduct(a, args.inputs[1], out, args.attrs);
  DispatchDType<kComplexTypes>(a.dtype(), args.op.name, [&]<typename C>() {
    if (out.numel() == 0) return;
    if (p.k == 0) {
      std::fill(out.raw<C>(), out.raw<C>() + out.numel(), C(0));
      return;
    }
    ComplexProduct<typename C::value_type>(p, a.raw<C>(), args.inputs[1].raw<C>(), out.raw<C>());
  });
}

bool ComplexSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return IsComplex(in[0].dtype) && !attrs.Contains(kEpilogueAttr);
}

// dense: rows of x times weight^T (weight is (out, in), i.e. transposed b).
Product DenseProduct(const Tensor& x, const Tensor& w) {
  Product p;
  p.k = w.shape()[1];
  p.n = w.shape()[0];
  p.m = NumElements(Shape(x.shape().begin(), x.shape().end() - 1));
  p.tb = true;
  return p;
}

void DenseOneDnn(KernelArgs& args) {
  Product p = DenseProduct(args.inputs[0], args.inputs[1]);
  RunProduct("dense", p, args.inputs[0], args.inputs[1], args.outputs[0], &args.inputs[2], dn::EpilogueOf(args.attrs));
}

void DenseReference(KernelArgs& args) {
  Product p = DenseProduct(args.inputs[0], args.inputs[1]);
  if (TrivialProduct(p, args.outputs[0], &args.inputs[2])) return;
  RunReferenceProduct(p, args.inputs[0], args.inputs[1], args.outputs[0], &args.inputs[2], "dense");
}

// ---------------------------------------------------------------------------
// bias_add: x viewed as (outer, C, inner) plus bias viewed as (1, C, 1):
// (N, C, rest) for data_format "NCHW", (N * rest, C, 1) for "NHWC".

struct BinaryPrimitive {
  dnnl::binary primitive;
  memory::desc x, bias;
};

Shape ChannelView(const Shape& x, const Dict& attrs) {
  if (ops::AttrString(attrs, ops::kDataFormatAttr) == ops::kChannelsLast) {
    return {NumElements(Shape(x.begin(), x.end() - 1)), x.back(), 1};
  }
  return {x[0], x[1], NumElements(Shape(x.begin() + 2, x.end()))};
}

void BiasAddOneDnn(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (x.numel() == 0) return;
  Shape view = ChannelView(x.shape(), args.attrs);
  dn::Epilogue epilogue = dn::EpilogueOf(args.attrs);  // fused elementwise ops, as post-ops
  auto prim = dn::Cached<BinaryPrimitive>(
      dn::Key("bias_add", dn::ThreadLimitForElements(x.numel())).AddAll(x.dtype(), view, epilogue.ops), [&] {
        BinaryPrimitive b;
        b.x = dn::PlainDesc(dn::Dims(view), x.dtype());
        b.bias = dn::PlainDesc({1, view[1], 1}, x.dtype());
        dnnl::primitive_attr attr;
        attr.set_post_ops(epilogue.post_ops);
        b.primitive = dnnl::binary(
            dnnl::binary::primitive_desc(dnnl::binary::desc(dnnl::algorithm::binary_add, b.x, b.bias, b.x), attr,
                                         dn::Engine()));
        return b;
      });
  dn::Execute(prim->primitive, {{DNNL_ARG_SRC_0, dn::Wrap(prim->x, x)},
                                {DNNL_ARG_SRC_1, dn::Wrap(prim->bias, args.inputs[1])},
                                {DNNL_ARG_DST, dn::Wrap(prim->x, args.outputs[0])}});
}

void BiasAddReference(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Shape view = ChannelView(x.shape(), args.attrs);
  dn::DispatchFloat(x.dtype(), "bias_add", [&]<typename T>() {
    const T* px = x.raw<T>();
    const T* pb = args.inputs[1].raw<T>();
    T* po = args.outputs[0].raw<T>();
    int64_t channels = view[1], inner = view[2];
    ParallelFor(view[0] * channels, std::max<int64_t>(1, 4096 / std::max<int64_t>(inner, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    T b = pb[r % channels];
                    for (int64_t i = 0; i < inner; ++i) po[r * inner + i] = px[r * inner + i] + b;
                  }
                });
  });
}

// bias_add_grad: dy viewed as (outer, C, inner) summed over outer and inner
// per channel, in double for float64 and float otherwise. Channels-last rows
// add whole rows of C into the sums, so neither layout needs a transpose.
template <typename T>
auto Widen(T v) {
  if constexpr (std::is_same_v<T, Half>) {
    return HalfToFloat(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return BFloat16ToFloat(v);
  } else {
    return v;
  }
}

template <typename T, typename Acc>
T Narrow(Acc v) {
  if constexpr (std::is_same_v<T, Half>) {
    return FloatToHalf(v);
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return FloatToBFloat16(v);
  } else {
    return static_cast<T>(v);
  }
}

void BiasAddGrad(KernelArgs& args) {
  const Tensor& dy = args.inputs[0];
  Shape view = ChannelView(dy.shape(), args.attrs);
  int64_t outer = view[0], channels = view[1], inner = view[2];
  DispatchDType<kFloatTypes | kHalfTypes>(dy.dtype(), "bias_add_grad", [&]<typename T>() {
    using Acc = decltype(Widen(T{}));
    const T* p = dy.raw<T>();
    std::vector<Acc> sums(static_cast<size_t>(channels), Acc(0));
    Acc* out = sums.data();
    for (int64_t o = 0; o < outer; ++o) {
      const T* block = p + o * channels * inner;
      if (inner == 1) {
        for (int64_t c = 0; c < channels; ++c) out[c] += Widen(block[c]);
      } else {
        for (int64_t c = 0; c < channels; ++c) {
          const T* row = block + c * inner;
          Acc s = 0;
          for (int64_t i = 0; i < inner; ++i) s += Widen(row[i]);
          out[c] += s;
        }
      }
    }
    T* result = args.outputs[0].raw<T>();
    for (int64_t c = 0; c < channels; ++c) result[c] = Narrow<T>(sums[static_cast<size_t>(c)]);
  });
}

MSRT_ONEDNN_KERNELS("matmul", MatmulOneDnn, MatmulReference);
MSRT_ONEDNN_KERNELS("batch_matmul", MatmulOneDnn, MatmulReference);
MSRT_REGISTER_KERNEL(
    {.op = "matmul", .impl = "blocked complex", .priority = 1, .supports = &ComplexSupports, .run = &MatmulComplex});
MSRT_REGISTER_KERNEL({.op = "batch_matmul",
                      .impl = "blocked complex",
                      .priority = 1,
                      .supports = &ComplexSupports,
                      .run = &MatmulComplex});
MSRT_ONEDNN_KERNELS("dense", DenseOneDnn, DenseReference);
MSRT_ONEDNN_KERNELS("bias_add", BiasAddOneDnn, BiasAddReference);
MSRT_REGISTER_KERNEL({.op = "bias_add_grad", .impl = "loop", .run = &BiasAddGrad});

}  // namespace
}  // namespace msrt::kernels
