// matmul, batch_matmul, dense and bias_add on CPU: oneDNN matmul / binary
// primitives for float32 (and bfloat16 where oneDNN has it), reference
// loops (float64, and float32 when oneDNN declines a shape), and a blocked
// loop for complex64 and complex128 matmul / batch_matmul.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/cpu/axis_view.h"
#include "kernels/cpu/dtype_dispatch.h"
#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/half_convert.h"
#include "kernels/cpu/onednn_common.h"
#include "kernels/cpu/optimizer_loops.h"
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
  const bool batched = !p.batch.empty();
  const auto rows = [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      CancellationPoint();  // a large float64 product runs for seconds
      const int64_t bi = batched ? row / p.m : 0, i = batched ? row % p.m : row;  // no divisions for matrices
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
  };
  if (serial) {
    rows(0, batches * p.m);  // on this thread, as one chunk would run (Note [Tiny products])
  } else {
    ParallelFor(batches * p.m, 1, rows);
  }
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
  memory::desc a, b, bias, out, scratchpad;
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

// Note [Matmul scratchpads]
// oneDNN's own scratchpad mode gives every matmul primitive a scratchpad of
// its own, allocated with it and kept in the primitive cache: partial sums
// of the threads' shares of a product's reduction, packed panels. A
// training step's products held them all at once (3.5 MiB for an MLP
// 784-1024-1024-10 at batch 512) though one runs at a time. The primitives
// take their scratchpad from each call instead (the pool hands the same
// bytes to the next product), which also lets two threads run one primitive
// at once.

// Not `available` when oneDNN has no implementation for this product (the
// caller falls back to the reference loop; the answer is cached too).
// `one_thread`: a primitive for one thread whatever the product's size.
// `accumulate`: the product is added to the destination's elements times
// this scale (a oneDNN sum post-op) instead of replacing them.
std::shared_ptr<MatmulPrimitive> MatmulFor(std::string_view op, const Product& p, DType dtype, bool has_bias,
                                           const dn::Epilogue& epilogue, bool one_thread = false,
                                           std::optional<float> accumulate = std::nullopt) {
  dn::Key key(op, one_thread ? 1 : dn::ThreadLimitForFlops(2 * NumElements(p.batch) * p.m * p.n * p.k));
  key.AddAll(dtype, p.batch, p.a_batch, p.b_batch, p.m, p.n, p.k, p.ta, p.tb, has_bias, epilogue.ops);
  if (accumulate) key.Add(static_cast<double>(*accumulate));
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
  dnnl::post_ops post_ops = epilogue.PostOps();
  if (accumulate) {
    MSRT_INTERNAL_ASSERT(epilogue.empty(), op, ": a product into its destination takes no epilogue");
    post_ops.append_sum(*accumulate);
  }
  attr.set_post_ops(post_ops);
  // Note [Matmul scratchpads]: the call's scratchpad, not the primitive's own.
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    if (has_bias) {
      memory::dims bias_dims(out_dims.size(), 1);
      bias_dims.back() = p.n;
      built->bias = dn::PlainDesc(bias_dims, dtype);
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(built->a, built->b, built->bias, built->out), attr,
                                      dn::Engine());
      built->primitive = dnnl::matmul(pd);
      built->scratchpad = pd.scratchpad_desc();
    } else {
      dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(built->a, built->b, built->out), attr, dn::Engine());
      built->primitive = dnnl::matmul(pd);
      built->scratchpad = pd.scratchpad_desc();
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
                const Tensor* bias, const dn::Epilogue& epilogue = {}, bool one_thread = false) {
  if (TrivialProduct(p, out, bias)) {
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  if (TinyProduct(p, a.dtype())) {
    RunReferenceProduct(p, a, b, out, bias, op, /*serial=*/true);
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  auto prim = MatmulFor(op, p, a.dtype(), bias != nullptr, epilogue, one_thread);
  if (!prim->available) {
    RunReferenceProduct(p, a, b, out, bias, op, /*serial=*/one_thread);
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, dn::Wrap(prim->a, a)},
                                       {DNNL_ARG_WEIGHTS, dn::Wrap(prim->b, b)},
                                       {DNNL_ARG_DST, dn::Wrap(prim->out, out)}};
  if (bias != nullptr) args.emplace(DNNL_ARG_BIAS, dn::Wrap(prim->bias, *bias));
  dn::Scratch scratch;
  if (prim->scratchpad.get_size() > 0) args.emplace(DNNL_ARG_SCRATCHPAD, scratch.Allocate(prim->scratchpad));
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
// Note [Products into the accumulation]
// matmul_apply_momentum (a weight gradient's matmul fused with the Momentum
// update that alone reads it, Note [Fused pairs]): accum = momentum * accum
// + op(a) @ op(b), then variable -= lr * accum. The product runs as a oneDNN
// matmul whose destination is accum itself, with a sum post-op of scale
// momentum (oneDNN's gemm with beta = momentum): the gradient is never
// stored, so a training step neither holds its bytes nor passes over them
// twice; one more pass updates the variable. oneDNN fixes the scale when it
// builds the primitive, so the momentum's value is part of the cache key (a
// momentum that changes every step builds a primitive each step, as a new
// shape would). The product goes to a temporary first and the update is
// apply_momentum's loop where the product would not run in a oneDNN
// primitive (tiny, empty, none available), where a or b shares bytes with
// accum (the product would read what it writes), and where the momentum is
// 0 or not finite (a gemm with beta 0 does not read its destination, and
// the unfused update would carry a NaN or infinity of accum on). The fused
// path differs from the unfused pair by rounding only: oneDNN may scale
// accum by momentum and add the product in two roundings where
// apply_momentum's loop contracts them into one fused multiply-add, half a
// unit in the last place of accum per step.

bool SharesBytes(const Tensor& x, const Tensor& y) {
  const auto* x0 = static_cast<const char*>(x.raw());
  const auto* y0 = static_cast<const char*>(y.raw());
  return x.nbytes() > 0 && y.nbytes() > 0 && x0 < y0 + y.nbytes() && y0 < x0 + x.nbytes();
}

void MatmulApplyMomentum(KernelArgs& args) {
  Tensor& var = args.outputs[0];
  const Tensor& accum = args.inputs[1];
  const Tensor& a = args.inputs[3];
  const Tensor& b = args.inputs[4];
  const float lr = args.inputs[2].raw<float>()[0];
  const float momentum = args.inputs[5].raw<float>()[0];
  Product p = DescribeProduct(a, b, accum, args.attrs);
  float* w = var.raw<float>();
  float* acc = accum.raw<float>();
  const int64_t n = var.numel();
  const bool fused = momentum != 0.0f && std::isfinite(momentum) && p.k != 0 && accum.numel() != 0 &&
                     !TinyProduct(p, a.dtype()) && !SharesBytes(a, accum) && !SharesBytes(b, accum);
  std::shared_ptr<MatmulPrimitive> prim;
  if (fused) prim = MatmulFor(args.op.name, p, DType::kFloat32, false, {}, false, momentum);
  if (prim != nullptr && prim->available) {
    std::unordered_map<int, memory> call{{DNNL_ARG_SRC, dn::Wrap(prim->a, a)},
                                         {DNNL_ARG_WEIGHTS, dn::Wrap(prim->b, b)},
                                         {DNNL_ARG_DST, dn::Wrap(prim->out, accum)}};
    dn::Scratch scratch;
    if (prim->scratchpad.get_size() > 0) call.emplace(DNNL_ARG_SCRATCHPAD, scratch.Allocate(prim->scratchpad));
    dn::Execute(prim->primitive, call);
    cpu::DescentLoop(w, acc, lr, n);
    return;
  }
  // apply_momentum (use_nesterov=False) of the product, as the unfused pair runs.
  Tensor grad = Tensor::Empty(accum.shape(), DType::kFloat32);
  RunProduct("matmul", p, a, b, grad, nullptr);
  cpu::MomentumLoop(w, acc, grad.raw<float>(), lr, momentum, n);
}

// float32 throughout, 2-D operands, the plain momentum step (Nesterov's
// reads the gradient again after the accumulation).
bool MatmulApplyMomentumSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  return !ops::AttrBool(attrs, "use_nesterov") && !attrs.Contains(kEpilogueAttr) && in[3].shape.size() == 2 &&
         in[4].shape.size() == 2 &&
         std::all_of(in.begin(), in.end(), [](const ops::TensorMeta& m) { return m.dtype == DType::kFloat32; });
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
// float16 products in float32
//
// Note [float16 products]
// oneDNN 2.6 has no float16 matmul without AVX512-FP16, and converting whole
// operands to float32 tensors, running the float32 primitive and converting
// the whole result back (the generic "via float32" kernel, Note [Reduced
// precision]) made a float16 product about twice the float32 one: three
// passes over memory-sized buffers around the product. Here the product is
// split over msrt's thread pool instead, like Note [bfloat16 backward
// weights]: each thread converts its slice of the operands to float32
// (Note [Half conversions]), runs a one-thread float32 primitive (cached by
// slice shape) while the slice is still in cache, applies the epilogue there
// and converts its slice of the result back. A slice is a range of the
// output's batch (batch_matmul: operands whose batch dims are all broadcast
// or all present) or, for a single product with a plain first operand, a
// range of its rows (matmul, dense); the shared operand is converted once.
// A single product of a transposed first operand and a plain second one
// (dense's weight gradient dy^T x, summing over the batch) is split over k
// instead: each slice's float32 partial product is summed in slice order
// (reproducible for a thread count) and rounded once. Other shapes (partly
// broadcast batch dims, an epilogue on a split k) run as one slice on
// oneDNN's threads with operands converted whole. Sums are float32 as in the
// float32 kernel; deterministic="ON" runs one slice.

// What each slice of a float16 product reads and writes.
struct ProductSlices {
  Product sub;            // one full slice's product (the last may be shorter)
  int64_t count = 1;      // slices
  int64_t per = 0;        // batches (by_batch) or rows per slice
  int64_t total = 0;      // batches or rows in all
  bool by_batch = false;  // slicing the batch (else the rows of a single product)
  bool split_k = false;   // slicing k of a single product: partial sums
  bool a_sliced = true, b_sliced = false;
};

bool AllOnes(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d == 1; });
}

ProductSlices SliceProduct(const Product& p, bool has_epilogue) {
  ProductSlices s;
  s.sub = p;
  const int64_t batches = NumElements(p.batch);
  const int64_t flops = 2 * batches * p.m * p.n * p.k;
  int64_t wanted = DeterministicKernels() || flops < dn::kSingleThreadFlops ? 1 : IntraOpThreads();
  const bool a_full = p.a_batch == p.batch, b_full = p.b_batch == p.batch;
  if (batches > 1 && (a_full || AllOnes(p.a_batch)) && (b_full || AllOnes(p.b_batch))) {
    s.by_batch = true;
    s.total = batches;
    s.a_sliced = a_full;
    s.b_sliced = b_full;
  } else if (batches == 1 && !p.ta) {
    s.total = p.m;
    s.a_sliced = true;
    s.b_sliced = false;
  } else if (batches == 1 && p.ta && !p.tb && !has_epilogue && wanted > 1) {
    s.split_k = true;
    s.total = p.k;
    s.a_sliced = true;
    s.b_sliced = true;
  } else {
    wanted = 1;
    s.total = 1;
  }
  s.count = std::max<int64_t>(1, std::min(wanted, s.total));
  s.per = (s.total + s.count - 1) / s.count;
  return s;
}

// The product of slice `first` .. `first + n` (batches or rows).
Product SliceOf(const ProductSlices& s, int64_t n) {
  Product sub = s.sub;
  if (s.count == 1 && !s.by_batch && s.total == 1) return sub;  // the whole product
  if (s.by_batch) {
    sub.batch = {n};
    sub.a_batch = {s.a_sliced ? n : 1};
    sub.b_batch = {s.b_sliced ? n : 1};
  } else if (s.split_k) {
    sub.k = n;
  } else {
    sub.m = n;
  }
  return sub;
}

void HalfProduct(std::string_view op, const Product& p, const Tensor& a, const Tensor& b, Tensor& out,
                 const Tensor* bias, const dn::Epilogue& epilogue) {
  if (TrivialProduct(p, out, bias)) {
    dn::ApplyEpilogueInPlace(epilogue, out);
    return;
  }
  ProductSlices s = SliceProduct(p, !epilogue.empty());
  const bool whole = !s.by_batch && !s.split_k && s.total == 1;
  // Elements of one batch, row or k-step of each operand and of the output.
  const int64_t a_unit = s.by_batch ? p.m * p.k : s.split_k ? p.m : p.k;
  const int64_t b_unit = s.by_batch ? p.k * p.n : s.split_k ? p.n : 0;
  const int64_t out_unit = s.by_batch ? p.m * p.n : s.split_k ? 0 : p.n;
  const Half* ha = a.raw<Half>();
  const Half* hb = b.raw<Half>();
  Half* hout = out.raw<Half>();
  // Operands every slice reads whole: converted once, on the thread pool.
  Tensor shared_a, shared_b, bias32;
  if (whole || !s.a_sliced) shared_a = cpu::ConvertTensor(a, DType::kFloat32);
  if (whole || !s.b_sliced) shared_b = cpu::ConvertTensor(b, DType::kFloat32);
  if (bias != nullptr) bias32 = cpu::ConvertTensor(*bias, DType::kFloat32);
  const Tensor* bias_ptr = bias != nullptr ? &bias32 : nullptr;
  if (whole) {
    Tensor out32 = Tensor::Empty(out.shape(), DType::kFloat32);
    RunProduct(op, p, shared_a, shared_b, out32, bias_ptr, epilogue);
    cpu::ConvertInto(out32, out);
    return;
  }
  const bool one_thread = s.count > 1;
  std::vector<Tensor> partial(s.split_k ? static_cast<size_t>(s.count) : 0);
  ParallelFor(s.count, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t first = i * s.per, n = std::min(s.per, s.total - first);
      if (n <= 0) continue;
      Product sub = SliceOf(s, n);
      Tensor a32 = shared_a, b32 = shared_b;
      if (s.a_sliced) {
        a32 = Tensor::Empty({n * a_unit}, DType::kFloat32);
        cpu::ToFloatN(ha + first * a_unit, a32.raw<float>(), n * a_unit);
      }
      if (s.b_sliced) {
        b32 = Tensor::Empty({n * b_unit}, DType::kFloat32);
        cpu::ToFloatN(hb + first * b_unit, b32.raw<float>(), n * b_unit);
      }
      if (s.split_k) {
        Tensor out32 = Tensor::Empty({p.m * p.n}, DType::kFloat32);
        RunProduct(op, sub, a32, b32, out32, nullptr, epilogue, one_thread);
        partial[static_cast<size_t>(i)] = out32;
        continue;
      }
      Tensor out32 = Tensor::Empty({n * out_unit}, DType::kFloat32);
      RunProduct(op, sub, a32, b32, out32, bias_ptr, epilogue, one_thread);
      cpu::FromFloatN(out32.raw<float>(), hout + first * out_unit, n * out_unit);
    }
  });
  if (s.split_k) {  // the partial products, summed in slice order (bias_ptr: dense is never split over k)
    float* sum = partial[0].raw<float>();
    for (size_t i = 1; i < partial.size(); ++i) {
      if (!partial[i].defined()) continue;
      const float* part = partial[i].raw<float>();
      for (int64_t j = 0; j < p.m * p.n; ++j) sum[j] += part[j];
    }
    cpu::FromFloatN(sum, hout, p.m * p.n);
  }
}

void MatmulHalf(KernelArgs& args) {
  Product p = DescribeProduct(args.inputs[0], args.inputs[1], args.outputs[0], args.attrs);
  HalfProduct(args.op.name, p, args.inputs[0], args.inputs[1], args.outputs[0], nullptr, dn::EpilogueOf(args.attrs));
}

void DenseHalf(KernelArgs& args) {
  Product p = DenseProduct(args.inputs[0], args.inputs[1]);
  HalfProduct("dense", p, args.inputs[0], args.inputs[1], args.outputs[0], &args.inputs[2], dn::EpilogueOf(args.attrs));
}

// float16 operands (all of them) and an epilogue oneDNN can apply.
bool HalfProductSupports(const std::vector<ops::TensorMeta>& in, const Dict& attrs) {
  for (const ops::TensorMeta& m : in) {
    if (m.dtype != DType::kFloat16) return false;
  }
  return dn::EpilogueOf(attrs).supported;
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
        attr.set_post_ops(epilogue.PostOps());
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
// Note [float16 products]: above the oneDNN kernels, which do not take float16.
MSRT_HALF_SLICES_KERNEL("matmul", HalfProductSupports, MatmulHalf);
MSRT_HALF_SLICES_KERNEL("batch_matmul", HalfProductSupports, MatmulHalf);
MSRT_HALF_SLICES_KERNEL("dense", HalfProductSupports, DenseHalf);
MSRT_ONEDNN_KERNELS("bias_add", BiasAddOneDnn, BiasAddReference);
MSRT_REGISTER_KERNEL({.op = "matmul_apply_momentum",
                      .impl = "onednn",
                      .priority = dn::kOneDnnPriority,
                      .supports = &MatmulApplyMomentumSupports,
                      .run = &MatmulApplyMomentum});
MSRT_REGISTER_KERNEL({.op = "bias_add_grad", .impl = "loop", .run = &BiasAddGrad});

}  // namespace
}  // namespace msrt::kernels
