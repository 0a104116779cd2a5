// CPU kernels of the elementwise ops. Each op is a functor with Apply(); the
// drivers convert operands to the compute type (half types go through
// float32), then run the contiguous, scalar or broadcast loop.
#include <cmath>
#include <complex>
#include <cstring>
#include <type_traits>

#include "kernels/cpu/elementwise_loops.h"
#include "kernels/cpu/vector_math.h"

namespace msrt::kernels::cpu {
namespace {

// Which native types an op's functor is defined for.
template <typename T>
inline constexpr bool kFloatOnly = kIsFloat<T>;
template <typename T>
inline constexpr bool kNumber = kIsFloat<T> || kIsInt<T>;
template <typename T>
inline constexpr bool kBoolOnly = std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kAnyNative = true;
template <typename T>
inline constexpr bool kNumberOrComplex = kNumber<T> || kIsComplex<T>;
template <typename T>
inline constexpr bool kFloatOrComplex = kIsFloat<T> || kIsComplex<T>;
template <typename T>
inline constexpr bool kOrdered = !kIsComplex<T>;  // complex values have no order

// ---- unary ----

// `t` in `dtype`: `t` itself when it has that dtype (no new handle: a small
// op's call feels each reference count), else a converted copy kept in `converted`.
const Tensor& InDType(const Tensor& t, DType dtype, Tensor& converted) {
  if (t.dtype() == dtype) return t;
  converted = ConvertTensor(t, dtype);
  return converted;
}

template <class Op>
void RunUnary(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if constexpr (Op::template kSupports<float>) {
    if (y.dtype() == x.dtype() && DispatchHalf(x.dtype(), [&]<typename H>() {
          HalfBlockLoop(
              x.numel(), y.raw<H>(), {x.numel()},
              [](const std::array<const float*, 1>& in, float* out, int64_t count) {
                const float* a = in[0];
                for (int64_t i = 0; i < count; ++i) out[i] = static_cast<float>(Op::Apply(a[i]));
              },
              x.raw<H>());
        })) {
      return;  // Note [Half blocks]
    }
  }
  const DType compute = NativeComputeType(x.dtype());
  Tensor x_converted, y_converted;
  const Tensor& xc = InDType(x, compute, x_converted);
  Tensor& yc = y.dtype() == compute ? y : (y_converted = Tensor::Empty(y.shape(), compute));
  DispatchNativeOrComplex(compute, args.op.name, [&]<typename T>() {
    if constexpr (Op::template kSupports<T>) {
      using S = StorageOf<T>;
      UnaryLoop(xc.raw<S>(), yc.raw<S>(), x.numel(), [](S v) { return static_cast<S>(Op::Apply(v)); });
    } else {
      NoKernelForDType(args.op.name, compute);
    }
  });
  if (&yc != &y) ConvertInto(yc, y);
}

struct Neg {
  template <typename T>
  static constexpr bool kSupports = kNumberOrComplex<T>;
  template <typename T>
  static T Apply(T x) {
    return static_cast<T>(-x);
  }
};

struct Abs {
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x) {
    if constexpr (kIsFloat<T>) {
      return std::fabs(x);
    } else if constexpr (std::is_unsigned_v<T>) {
      return x;
    } else {
      return static_cast<T>(x < 0 ? -x : x);
    }
  }
};

struct Sign {
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x) {
    if constexpr (kIsFloat<T>) {
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);  // keeps NaN and the sign of zero
    } else {
      return static_cast<T>(x > T(0) ? 1 : (x < T(0) ? -1 : 0));
    }
  }
};

#define MSRT_FLOAT_UNARY(Name, expr)                 \
  struct Name {                                      \
    template <typename T>                            \
    static constexpr bool kSupports = kFloatOnly<T>; \
    template <typename T>                            \
    static T Apply(T x) {                            \
      return expr;                                   \
    }                                                \
  };
MSRT_FLOAT_UNARY(Exp, vecmath::Exp(x))
MSRT_FLOAT_UNARY(Log, vecmath::Log(x))
MSRT_FLOAT_UNARY(Sqrt, std::sqrt(x))
MSRT_FLOAT_UNARY(Floor, std::floor(x))
MSRT_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(x))
MSRT_FLOAT_UNARY(Reciprocal, T(1) / x)
MSRT_FLOAT_UNARY(Sigmoid, vecmath::Sigmoid(x))
MSRT_FLOAT_UNARY(Tanh, vecmath::Tanh(x))
MSRT_FLOAT_UNARY(Silu, x* vecmath::Sigmoid(x))
#undef MSRT_FLOAT_UNARY

struct Square {
  template <typename T>
  static constexpr bool kSupports = kNumberOrComplex<T>;
  template <typename T>
  static T Apply(T x) {
    return static_cast<T>(x * x);
  }
};

// abs of a complex tensor is its real modulus; of a real one, RunUnary<Abs>.
void RunAbs(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  if (!IsComplex(x.dtype())) return RunUnary<Abs>(args);
  Tensor& y = args.outputs[0];
  Dispatch(ComplexTypeList{}, x.dtype(), "abs", [&]<typename T>() {
    using R = typename T::value_type;
    UnaryLoop(x.raw<T>(), y.raw<R>(), x.numel(), [](T v) { return std::hypot(v.real(), v.imag()); });
  });
}

// The parts of complex values: real, imag and conj; real inputs give
// themselves (real, conj) or zeros (imag).
enum class Part { kReal, kImag, kConj };

template <Part kPart>
void RunPart(KernelArgs& args) {
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (!IsComplex(x.dtype())) {
    if (kPart == Part::kImag) {
      if (y.nbytes() > 0) std::memset(y.raw(), 0, y.nbytes());
    } else {
      ConvertInto(x, y);  // same dtype: a copy
    }
    return;
  }
  Dispatch(ComplexTypeList{}, x.dtype(), args.op.name, [&]<typename T>() {
    using R = typename T::value_type;
    if constexpr (kPart == Part::kReal) {
      UnaryLoop(x.raw<T>(), y.raw<R>(), x.numel(), [](T v) { return v.real(); });
    } else if constexpr (kPart == Part::kImag) {
      UnaryLoop(x.raw<T>(), y.raw<R>(), x.numel(), [](T v) { return v.imag(); });
    } else {
      UnaryLoop(x.raw<T>(), y.raw<T>(), x.numel(), [](T v) { return std::conj(v); });
    }
  });
}

// complex(real, imag), broadcasting.
void RunComplex(KernelArgs& args) {
  const Tensor& re = args.inputs[0];
  const Tensor& im = args.inputs[1];
  Tensor& out = args.outputs[0];
  Dispatch(FloatTypeList{}, re.dtype(), "complex", [&]<typename R>() {
    BinaryLoop(re.raw<R>(), re.shape(), im.raw<R>(), im.shape(), out.raw<std::complex<R>>(), out.shape(),
               [](R a, R b) { return std::complex<R>(a, b); });
  });
}

struct Relu {
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x) {
    return x < T(0) ? T(0) : x;  // NaN stays NaN
  }
};

struct Relu6 {
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x) {
    T y = x < T(0) ? T(0) : x;
    return y > T(6) ? T(6) : y;
  }
};

struct LogicalNot {
  template <typename T>
  static constexpr bool kSupports = kBoolOnly<T>;
  static uint8_t Apply(uint8_t x) { return x ^ 1; }  // bools arrive as bytes
};

// gelu: tanh form 0.5 x (1 + tanh(k (x + c x^3))), or the exact x Phi(x),
// Phi the standard normal CDF (vectorised for float32: vecmath::NormalCdf).
// Always inlined: called out of line, they keep the loops from vectorising.
constexpr double kGeluK = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kGeluC = 0.044715;
constexpr double kInvSqrt2Pi = 0.3989422804014327;

template <typename T>
[[gnu::always_inline]] inline T GeluTanh(T x) {
  T u = T(kGeluK) * (x + T(kGeluC) * x * x * x);
  return T(0.5) * x * (T(1) + vecmath::Tanh(u));
}

template <typename T>
[[gnu::always_inline]] inline T GeluErf(T x) {
  return x * vecmath::NormalCdf(x);
}

template <typename T>
[[gnu::always_inline]] inline T GeluTanhGrad(T x) {
  T x2 = x * x;
  T t = vecmath::Tanh(T(kGeluK) * (x + T(kGeluC) * x2 * x));
  return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * T(kGeluK) * (T(1) + T(3 * kGeluC) * x2);
}

// Phi(x) + x phi(x), phi the standard normal density.
template <typename T>
[[gnu::always_inline]] inline T GeluErfGrad(T x) {
  return vecmath::NormalCdf(x) + x * T(kInvSqrt2Pi) * vecmath::Exp(T(-0.5) * x * x);
}

void Gelu(KernelArgs& args) {
  const bool approximate = ops::AttrBool(args.attrs, "approximate");
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  if (DispatchHalf(x.dtype(), [&]<typename H>() {
        HalfBlockLoop(
            x.numel(), y.raw<H>(), {x.numel()},
            [approximate](const std::array<const float*, 1>& in, float* out, int64_t count) {
              const float* a = in[0];
              if (approximate) {
                for (int64_t i = 0; i < count; ++i) out[i] = GeluTanh(a[i]);
              } else {
                for (int64_t i = 0; i < count; ++i) out[i] = GeluErf(a[i]);
              }
            },
            x.raw<H>());
      })) {
    return;  // Note [Half blocks]
  }
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Dispatch(FloatTypeList{}, compute, "gelu", [&]<typename T>() {
    if (approximate) {
      UnaryLoop(xc.raw<T>(), yc.raw<T>(), x.numel(), [](T v) { return GeluTanh(v); });
    } else {
      UnaryLoop(xc.raw<T>(), yc.raw<T>(), x.numel(), [](T v) { return GeluErf(v); });
    }
  });
  if (!yc.same(y)) ConvertInto(yc, y);
}

void GeluGrad(KernelArgs& args) {
  const bool approximate = ops::AttrBool(args.attrs, "approximate");
  const Tensor& dy = args.inputs[0];
  const Tensor& x = args.inputs[1];
  Tensor& dx = args.outputs[0];
  if (dy.dtype() == x.dtype() && dy.numel() == dx.numel() && x.numel() == dx.numel() &&
      DispatchHalf(x.dtype(), [&]<typename H>() {
        HalfBlockLoop(
            dx.numel(), dx.raw<H>(), {dx.numel(), dx.numel()},
            [approximate](const std::array<const float*, 2>& in, float* out, int64_t count) {
              const float *d = in[0], *v = in[1];
              if (approximate) {
                for (int64_t i = 0; i < count; ++i) out[i] = d[i] * GeluTanhGrad(v[i]);
              } else {
                for (int64_t i = 0; i < count; ++i) out[i] = d[i] * GeluErfGrad(v[i]);
              }
            },
            dy.raw<H>(), x.raw<H>());
      })) {
    return;  // Note [Half blocks]
  }
  const DType compute = NativeComputeType(x.dtype());
  Tensor dyc = ConvertTensor(dy, compute);
  Tensor xc = ConvertTensor(x, compute);
  Tensor dxc = dx.dtype() == compute ? dx : Tensor::Empty(dx.shape(), compute);
  Dispatch(FloatTypeList{}, compute, "gelu_grad", [&]<typename T>() {
    const T* g = dyc.raw<T>();
    if (approximate) {
      BinaryLoop(g, dy.shape(), xc.raw<T>(), x.shape(), dxc.raw<T>(), dx.shape(),
                 [](T d, T v) { return d * GeluTanhGrad(v); });
    } else {
      BinaryLoop(g, dy.shape(), xc.raw<T>(), x.shape(), dxc.raw<T>(), dx.shape(),
                 [](T d, T v) { return d * GeluErfGrad(v); });
    }
  });
  if (!dxc.same(dx)) ConvertInto(dxc, dx);
}

// ---- activation gradients: dx = f(dy, v), v the activation's output or input ----

// leaky_relu: x where x > 0, else alpha x (alpha from the attribute).
void LeakyRelu(KernelArgs& args) {
  const double alpha = ops::AttrFloat(args.attrs, "alpha");
  const Tensor& x = args.inputs[0];
  Tensor& y = args.outputs[0];
  const DType compute = NativeComputeType(x.dtype());
  Tensor xc = ConvertTensor(x, compute);
  Tensor yc = y.dtype() == compute ? y : Tensor::Empty(y.shape(), compute);
  Dispatch(FloatTypeList{}, compute, "leaky_relu", [&]<typename T>() {
    const T a = static_cast<T>(alpha);
    UnaryLoop(xc.raw<T>(), yc.raw<T>(), x.numel(), [a](T v) { return v > T(0) ? v : a * v; });
  });
  if (!yc.same(y)) ConvertInto(yc, y);
}

struct ReluGrad {
  template <typename T>
  static T Apply(T dy, T y, T) {
    return y > T(0) ? dy : T(0);
  }
};
struct Relu6Grad {
  template <typename T>
  static T Apply(T dy, T x, T) {
    return (x > T(0) && x < T(6)) ? dy : T(0);
  }
};
struct SigmoidGrad {
  template <typename T>
  static T Apply(T dy, T y, T) {
    return dy * y * (T(1) - y);
  }
};
struct TanhGrad {
  template <typename T>
  static T Apply(T dy, T y, T) {
    return dy * (T(1) - y * y);
  }
};
struct SiluGrad {
  template <typename T>
  static T Apply(T dy, T x, T) {
    const T s = vecmath::Sigmoid(x);
    return dy * s * (T(1) + x * (T(1) - s));
  }
};
struct LeakyReluGrad {
  template <typename T>
  static T Apply(T dy, T x, T alpha) {
    return x > T(0) ? dy : alpha * dy;
  }
};

// The inputs are (dy, v) of one shape and dtype (the ops' inference checks it).
template <class Op>
void RunActivationGrad(KernelArgs& args) {
  const Tensor& dy = args.inputs[0];
  const Tensor& v = args.inputs[1];
  Tensor& dx = args.outputs[0];
  const Value* alpha_attr = args.attrs.Find("alpha");
  const double alpha = alpha_attr != nullptr ? alpha_attr->as_float() : 0.0;
  if (dy.dtype() == v.dtype() && dy.numel() == dx.numel() && v.numel() == dx.numel() &&
      DispatchHalf(v.dtype(), [&]<typename H>() {
        const float a = static_cast<float>(alpha);
        HalfBlockLoop(
            dx.numel(), dx.raw<H>(), {dx.numel(), dx.numel()},
            [a](const std::array<const float*, 2>& in, float* out, int64_t count) {
              const float *d = in[0], *x = in[1];
              for (int64_t i = 0; i < count; ++i) out[i] = Op::Apply(d[i], x[i], a);
            },
            dy.raw<H>(), v.raw<H>());
      })) {
    return;  // Note [Half blocks]
  }
  const DType compute = NativeComputeType(v.dtype());
  Tensor dyc = ConvertTensor(dy, compute);
  Tensor vc = ConvertTensor(v, compute);
  Tensor dxc = dx.dtype() == compute ? dx : Tensor::Empty(dx.shape(), compute);
  Dispatch(FloatTypeList{}, compute, args.op.name, [&]<typename T>() {
    const T a = static_cast<T>(alpha);
    BinaryLoop(dyc.raw<T>(), dy.shape(), vc.raw<T>(), v.shape(), dxc.raw<T>(), dx.shape(),
               [a](T d, T x) { return Op::Apply(d, x, a); });
  });
  if (!dxc.same(dx)) ConvertInto(dxc, dx);
}

// ---- binary ----

// Note [Division by a power of two]
// x / 2^k and x * 2^-k are the same real number, and IEEE division and
// multiplication both round that number correctly (to nearest even, into
// the subnormals, to infinity), so they give the same bits whenever 2^-k is
// itself exactly a float: a normal divisor whose significand is 1 (2^-126 to
// 2^127 in float32). Special operands agree too: a NaN dividend gives the
// same quiet NaN, an infinite one the same signed infinity, a zero the same
// signed zero. A loss scale is such a divisor (powers of two, scaled by a
// factor of 2), and a multiplication costs a fraction of a division: a
// division of a tensor by one such value multiplies by the reciprocal.
template <typename T>
bool ExactReciprocal(T divisor, T* reciprocal) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
    int exponent = 0;
    const T significand = std::frexp(divisor,
                                     &exponent);  // divisor = significand * 2^exponent, |significand| in [0.5, 1)
    if (std::fpclassify(divisor) != FP_NORMAL || (significand != T(0.5) && significand != T(-0.5))) return false;
    const T r = T(1) / divisor;
    if (std::fpclassify(r) != FP_NORMAL) return false;
    *reciprocal = r;
    return true;
  } else {
    return false;
  }
}

// Whether binary Op is the division x / y (specialised below).
template <class Op>
inline constexpr bool kDivision = false;

template <class Op>
void RunBinary(KernelArgs& args) {
  const Tensor& a = args.inputs[0];
  const Tensor& b = args.inputs[1];
  Tensor& out = args.outputs[0];
  if constexpr (!Op::kPredicate && Op::template kSupports<float>) {
    // Same-dtype half operands of the output's size or single values (Note [Half blocks]).
    const int64_t n = out.numel(), na = a.numel(), nb = b.numel();
    if (a.dtype() == out.dtype() && b.dtype() == out.dtype() && (na == n || na == 1) && (nb == n || nb == 1) &&
        DispatchHalf(out.dtype(), [&]<typename H>() {
          HalfBlockLoop(
              n, out.raw<H>(), {na, nb},
              [](const std::array<const float*, 2>& in, float* o, int64_t count) {
                const float *x = in[0], *y = in[1];
                for (int64_t i = 0; i < count; ++i) o[i] = static_cast<float>(Op::Apply(x[i], y[i]));
              },
              a.raw<H>(), b.raw<H>());
        })) {
      return;
    }
  }
  const DType compute = NativeComputeType(Op::kPredicate ? PromoteTypes(a.dtype(), b.dtype()) : out.dtype());
  Tensor a_converted, b_converted, out_converted;
  const Tensor& ac = InDType(a, compute, a_converted);
  const Tensor& bc = InDType(b, compute, b_converted);
  const DType out_native = Op::kPredicate ? DType::kBool : compute;
  Tensor& oc = out.dtype() == out_native ? out : (out_converted = Tensor::Empty(out.shape(), out_native));
  DispatchNativeOrComplex(compute, args.op.name, [&]<typename T>() {
    if constexpr (Op::template kSupports<T>) {
      using S = StorageOf<T>;  // bools as bytes
      using O = StorageOf<std::conditional_t<Op::kPredicate, bool, T>>;
      if constexpr (kDivision<Op>) {
        T reciprocal;
        if (b.numel() == 1 && ExactReciprocal(bc.raw<T>()[0], &reciprocal)) {  // Note [Division by a power of two]
          BinaryLoop(ac.raw<S>(), a.shape(), &reciprocal, b.shape(), oc.raw<O>(), out.shape(),
                     [](S x, S r) { return static_cast<O>(x * r); });
          return;
        }
      }
      BinaryLoop(ac.raw<S>(), a.shape(), bc.raw<S>(), b.shape(), oc.raw<O>(), out.shape(),
                 [](S x, S y) { return static_cast<O>(Op::Apply(x, y)); });
    } else {
      NoKernelForDType(args.op.name, compute);
    }
  });
  if (&oc != &out) ConvertInto(oc, out);
}

#define MSRT_BINARY(Name, Supports, predicate, expr) \
  struct Name {                                      \
    static constexpr bool kPredicate = predicate;    \
    template <typename T>                            \
    static constexpr bool kSupports = Supports<T>;   \
    template <typename T>                            \
    static auto Apply(T x, T y) {                    \
      return expr;                                   \
    }                                                \
  };
MSRT_BINARY(Add, kNumberOrComplex, false, x + y)
MSRT_BINARY(Sub, kNumberOrComplex, false, x - y)
MSRT_BINARY(Mul, kNumberOrComplex, false, x* y)
MSRT_BINARY(Div, kFloatOrComplex, false, x / y)
template <>
inline constexpr bool kDivision<Div> = true;
MSRT_BINARY(Maximum, kNumber, false, (x >= y || x != x) ? x : y)  // NaN propagates
MSRT_BINARY(Minimum, kNumber, false, (x <= y || x != x) ? x : y)
MSRT_BINARY(Equal, kAnyNative, true, x == y)
MSRT_BINARY(NotEqual, kAnyNative, true, x != y)
MSRT_BINARY(Less, kOrdered, true, x < y)
MSRT_BINARY(LessEqual, kOrdered, true, x <= y)
MSRT_BINARY(Greater, kOrdered, true, x > y)
MSRT_BINARY(GreaterEqual, kOrdered, true, x >= y)
MSRT_BINARY(LogicalAnd, kBoolOnly, false, x& y)  // bools arrive as bytes 0 or 1
MSRT_BINARY(LogicalOr, kBoolOnly, false, x | y)
MSRT_BINARY(LogicalXor, kBoolOnly, false, x ^ y)
#undef MSRT_BINARY

// Python's // and %: floor division and the remainder with the divisor's
// sign. Integers stay exact; a zero divisor gives 0 (as NumPy) rather than a
// trap, and x // -1 wraps for the most negative x.
template <typename T>
T FloorDivValue(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    if (y == 0) return x / y;  // inf, -inf or NaN
    const T r = std::fmod(x, y);
    T q = (x - r) / y;  // exact up to rounding of the division
    if (r != 0 && ((r < 0) != (y < 0))) q -= 1;
    if (q == 0) return std::copysign(T(0), x / y);
    const T f = std::floor(q);
    return q - f > T(0.5) ? f + 1 : f;  // q is near an integer: round it there
  } else {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      using U = std::make_unsigned_t<T>;
      if (y == -1) return static_cast<T>(U(0) - static_cast<U>(x));
      T q = static_cast<T>(x / y);
      if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
      return q;
    } else {
      return static_cast<T>(x / y);
    }
  }
}
template <typename T>
T FloorModValue(T x, T y) {
  if constexpr (std::is_floating_point_v<T>) {
    T r = std::fmod(x, y);  // NaN for y == 0
    if (r != 0 && ((r < 0) != (y < 0))) r += y;
    return r;
  } else {
    if (y == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (y == -1) return 0;
      T r = static_cast<T>(x % y);
      if (r != 0 && ((r < 0) != (y < 0))) r = static_cast<T>(r + y);
      return r;
    } else {
      return static_cast<T>(x % y);
    }
  }
}
struct FloorDiv {
  static constexpr bool kPredicate = false;
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x, T y) {
    return FloorDivValue(x, y);
  }
};
struct FloorMod {
  static constexpr bool kPredicate = false;
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x, T y) {
    return FloorModValue(x, y);
  }
};

// Integer powers by squaring; negative exponents give 0 except for bases 1 and -1.
template <typename T>
T IntegerPow(T base, T exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<T>) {
      if (base == -1) return (exponent % 2 == 0) ? T(1) : T(-1);
    }
    return 0;
  }
  T result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = static_cast<T>(result * base);
    base = static_cast<T>(base * base);
    exponent = static_cast<T>(exponent >> 1);
  }
  return result;
}

struct Pow {
  static constexpr bool kPredicate = false;
  template <typename T>
  static constexpr bool kSupports = kNumber<T>;
  template <typename T>
  static T Apply(T x, T y) {
    if constexpr (kIsFloat<T>) {
      return std::pow(x, y);
    } else {
      return IntegerPow(x, y);
    }
  }
};

// ---- select ----

void Select(KernelArgs& args) {
  const Tensor& c = args.inputs[0];
  Tensor& out = args.outputs[0];
  Tensor x = ConvertTensor(args.inputs[1], out.dtype());
  Tensor y = ConvertTensor(args.inputs[2], out.dtype());
  // Select only moves values: it works on unsigned integers of the element
  // size (so half types need no detour), and the condition as bytes.
  DispatchBytes(ItemSize(out.dtype()), [&]<typename U>() {
    TernaryLoop(c.raw<uint8_t>(), c.shape(), x.raw<U>(), x.shape(), y.raw<U>(), y.shape(), out.raw<U>(), out.shape(),
                [](uint8_t k, U a, U b) { return k ? a : b; });
  });
}

#define MSRT_EW_KERNEL(op_name, fn) \
  MSRT_REGISTER_KERNEL({.op = op_name, .impl = "vectorized", .priority = 1, .run = fn})
MSRT_EW_KERNEL("neg", &RunUnary<Neg>);
MSRT_EW_KERNEL("abs", &RunAbs);
MSRT_EW_KERNEL("real", &RunPart<Part::kReal>);
MSRT_EW_KERNEL("imag", &RunPart<Part::kImag>);
MSRT_EW_KERNEL("conj", &RunPart<Part::kConj>);
MSRT_EW_KERNEL("complex", &RunComplex);
MSRT_EW_KERNEL("sign", &RunUnary<Sign>);
MSRT_EW_KERNEL("exp", &RunUnary<Exp>);
MSRT_EW_KERNEL("log", &RunUnary<Log>);
MSRT_EW_KERNEL("sqrt", &RunUnary<Sqrt>);
MSRT_EW_KERNEL("floor", &RunUnary<Floor>);
MSRT_EW_KERNEL("rsqrt", &RunUnary<Rsqrt>);
MSRT_EW_KERNEL("square", &RunUnary<Square>);
MSRT_EW_KERNEL("reciprocal", &RunUnary<Reciprocal>);
MSRT_EW_KERNEL("sigmoid", &RunUnary<Sigmoid>);
MSRT_EW_KERNEL("tanh", &RunUnary<Tanh>);
MSRT_EW_KERNEL("relu", &RunUnary<Relu>);
MSRT_EW_KERNEL("relu6", &RunUnary<Relu6>);
MSRT_EW_KERNEL("silu", &RunUnary<Silu>);
MSRT_EW_KERNEL("gelu", &Gelu);
MSRT_EW_KERNEL("gelu_grad", &GeluGrad);
MSRT_EW_KERNEL("leaky_relu", &LeakyRelu);
MSRT_EW_KERNEL("relu_grad", &RunActivationGrad<ReluGrad>);
MSRT_EW_KERNEL("relu6_grad", &RunActivationGrad<Relu6Grad>);
MSRT_EW_KERNEL("sigmoid_grad", &RunActivationGrad<SigmoidGrad>);
MSRT_EW_KERNEL("tanh_grad", &RunActivationGrad<TanhGrad>);
MSRT_EW_KERNEL("silu_grad", &RunActivationGrad<SiluGrad>);
MSRT_EW_KERNEL("leaky_relu_grad", &RunActivationGrad<LeakyReluGrad>);
MSRT_EW_KERNEL("logical_not", &RunUnary<LogicalNot>);
MSRT_EW_KERNEL("add", &RunBinary<Add>);
MSRT_EW_KERNEL("sub", &RunBinary<Sub>);
MSRT_EW_KERNEL("mul", &RunBinary<Mul>);
MSRT_EW_KERNEL("div", &RunBinary<Div>);
MSRT_EW_KERNEL("pow", &RunBinary<Pow>);
MSRT_EW_KERNEL("floor_div", &RunBinary<FloorDiv>);
MSRT_EW_KERNEL("floor_mod", &RunBinary<FloorMod>);
MSRT_EW_KERNEL("maximum", &RunBinary<Maximum>);
MSRT_EW_KERNEL("minimum", &RunBinary<Minimum>);
MSRT_EW_KERNEL("equal", &RunBinary<Equal>);
MSRT_EW_KERNEL("not_equal", &RunBinary<NotEqual>);
MSRT_EW_KERNEL("less", &RunBinary<Less>);
MSRT_EW_KERNEL("less_equal", &RunBinary<LessEqual>);
MSRT_EW_KERNEL("greater", &RunBinary<Greater>);
MSRT_EW_KERNEL("greater_equal", &RunBinary<GreaterEqual>);
MSRT_EW_KERNEL("logical_and", &RunBinary<LogicalAnd>);
MSRT_EW_KERNEL("logical_or", &RunBinary<LogicalOr>);
MSRT_EW_KERNEL("logical_xor", &RunBinary<LogicalXor>);
MSRT_EW_KERNEL("select", &Select);
#undef MSRT_EW_KERNEL

}  // namespace
}  // namespace msrt::kernels::cpu
