// Scalar functors of the pointwise ops. T is the compute type (float for half types).
// They are TIDE_HOST_DEVICE so that the CUDA backend can instantiate the very same code.
// Integer arithmetic wraps (through unsigned types) instead of being undefined on overflow.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "../dtype.hpp"
#include "../error.hpp"
#include "../half.hpp"

namespace tide::fn {

template <typename T>
constexpr bool is_fp = std::is_floating_point_v<T>;
template <typename T>
constexpr bool is_int = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <typename T>
TIDE_HOST_DEVICE inline T wrap(T a, T b, int op) {
  using U = std::make_unsigned_t<T>;
  U x = U(a), y = U(b);
  return T(op == 0 ? U(x + y) : op == 1 ? U(x - y) : U(x * y));
}

// Which compute types a functor accepts (others are rejected before dispatch).
struct Numeric {
  template <typename T> static constexpr bool accepts = !std::is_same_v<T, bool>;
};
struct AnyType {
  template <typename T> static constexpr bool accepts = true;
};
struct FloatOnly {
  template <typename T> static constexpr bool accepts = is_fp<T>;
};
struct IntegralOnly {
  template <typename T> static constexpr bool accepts = !is_fp<T>;
};

// The C++ types a pointwise functor runs with on inputs of one dtype: the storage type and
// the result's (bool when the functor returns bool, else the storage type).
template <typename S, typename O>
struct PointwiseTypes {
  using scalar_t = S;
  using out_t = O;
};

// The type functor F returns for Arity inputs of compute type C.
template <typename F, typename C, int Arity>
struct ResultOf {
  using type = decltype(F{}(C{}));
};
template <typename F, typename C>
struct ResultOf<F, C, 2> {
  using type = decltype(F{}(C{}, C{}));
};

// Calls body(PointwiseTypes<scalar_t, out_t>{}) for functor F taking `Arity` inputs of dtype
// `in` (computed in compute_t<scalar_t>), or throws "<op>: not supported for <dtype>
// tensors" when F rejects that compute type. Every backend picks its types here, so that the
// CPU loops and the device kernels agree.
template <typename F, int Arity, typename Body>
void dispatch_functor(const char* op, DType in, Body&& body) {
  TIDE_DISPATCH_ALL(in, op, [&] {
    using C = compute_t<scalar_t>;
    if constexpr (!F::template accepts<C>) {
      TIDE_FAIL(op, ": not supported for ", dtype_name(in), " tensors");
    } else {
      using R = typename ResultOf<F, C, Arity>::type;
      body(PointwiseTypes<scalar_t, std::conditional_t<std::is_same_v<R, bool>, bool, scalar_t>>{});
    }
  });
}

// ---- unary ----
struct Abs : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return std::fabs(x);
    else if constexpr (std::is_signed_v<T>) return x < 0 ? T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(x)) : x;
    else return x;
  }
};
struct Neg : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return -x;
    else return wrap<T>(T(0), x, 1);
  }
};
struct Sign : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return x != x ? x : T((x > 0) - (x < 0));
    else return T((x > 0) - (x < 0));
  }
};
struct Square : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (is_fp<T>) return x * x;
    else return wrap<T>(x, x, 2);
  }
};
#define TIDE_FLOAT_UNARY(Name, expr)                                         \
  struct Name : FloatOnly {                                                  \
    template <typename T> TIDE_HOST_DEVICE T operator()(T x) const { return expr; } \
  };
TIDE_FLOAT_UNARY(Exp, std::exp(x))
TIDE_FLOAT_UNARY(Exp2, std::exp2(x))
TIDE_FLOAT_UNARY(Log, std::log(x))
TIDE_FLOAT_UNARY(Log2, std::log2(x))
TIDE_FLOAT_UNARY(Log10, std::log10(x))
TIDE_FLOAT_UNARY(Log1p, std::log1p(x))
TIDE_FLOAT_UNARY(Expm1, std::expm1(x))
TIDE_FLOAT_UNARY(Sqrt, std::sqrt(x))
TIDE_FLOAT_UNARY(Rsqrt, T(1) / std::sqrt(x))
TIDE_FLOAT_UNARY(Reciprocal, T(1) / x)
TIDE_FLOAT_UNARY(Sin, std::sin(x))
TIDE_FLOAT_UNARY(Cos, std::cos(x))
TIDE_FLOAT_UNARY(Tan, std::tan(x))
TIDE_FLOAT_UNARY(Asin, std::asin(x))
TIDE_FLOAT_UNARY(Acos, std::acos(x))
TIDE_FLOAT_UNARY(Atan, std::atan(x))
TIDE_FLOAT_UNARY(Sinh, std::sinh(x))
TIDE_FLOAT_UNARY(Cosh, std::cosh(x))
TIDE_FLOAT_UNARY(Tanh, std::tanh(x))
TIDE_FLOAT_UNARY(Sigmoid, T(1) / (T(1) + std::exp(-x)))
TIDE_FLOAT_UNARY(Erf, std::erf(x))
#undef TIDE_FLOAT_UNARY

// The special functions as PyTorch 1.13 computes them (aten/src/ATen/native/Math.h), so that
// values agree to the last bits: erfinv by a rational first guess and two Newton steps,
// digamma by recurrence to x >= 10 and the asymptotic series, trigamma likewise.
struct Erfinv : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T y) const {
    const T a[4] = {T(0.886226899), T(-1.645349621), T(0.914624893), T(-0.140543331)};
    const T b[4] = {T(-2.118377725), T(1.442710462), T(-0.329097515), T(0.012229801)};
    const T c[4] = {T(-1.970840454), T(-1.624906493), T(3.429567803), T(1.641345311)};
    const T d[2] = {T(3.543889200), T(1.637067800)};
    const T y_abs = std::fabs(y);
    if (y_abs > T(1)) return std::numeric_limits<T>::quiet_NaN();
    if (y_abs == T(1)) return std::copysign(std::numeric_limits<T>::infinity(), y);
    T x;
    if (y_abs <= T(0.7)) {
      const T z = y * y;
      const T num = ((a[3] * z + a[2]) * z + a[1]) * z + a[0];
      const T dem = (((b[3] * z + b[2]) * z + b[1]) * z + b[0]) * z + T(1);
      x = y * num / dem;
    } else {
      const T z = std::sqrt(-std::log((T(1) - y_abs) / T(2)));
      const T num = ((c[3] * z + c[2]) * z + c[1]) * z + c[0];
      const T dem = (d[1] * z + d[0]) * z + T(1);
      x = std::copysign(num, y) / dem;
    }
    const T two_over_sqrt_pi = T(2) / T(1.77245385090551602729);
    x = x - (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
    x = x - (std::erf(x) - y) / (two_over_sqrt_pi * std::exp(-x * x));
    return x;
  }
};
struct Lgamma : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
#if defined(__CUDA_ARCH__)
    return std::lgamma(x);
#else
    int sign;  // the reentrant form: std::lgamma writes the global signgam from every thread
    if constexpr (std::is_same_v<T, float>) return ::lgammaf_r(x, &sign);
    else return ::lgamma_r(x, &sign);
#endif
  }
};
// digamma of x > 0.
template <typename T>
TIDE_HOST_DEVICE T digamma_positive(T x) {
  T result = 0;
  while (x < T(10)) {
    result -= T(1) / x;
    x += T(1);
  }
  if (x == T(10)) return result + T(2.25175258906672110764);
  T y = 0;
  if (x < T(1.0e17)) {
    const T A[7] = {T(8.33333333333333333333E-2), T(-2.10927960927960927961E-2), T(7.57575757575757575758E-3),
                    T(-4.16666666666666666667E-3), T(3.96825396825396825397E-3), T(-8.33333333333333333333E-3),
                    T(8.33333333333333333333E-2)};
    const T z = T(1) / (x * x);
    T p = 0;
    for (int i = 0; i < 7; ++i) p = p * z + A[i];
    y = z * p;
  }
  return result + std::log(x) - (T(0.5) / x) - y;
}
// +-inf at +-0 (the sign flipped), NaN at negative integers; below 0 by reflection
// (pi / tan(pi r) with r the fractional part, in double as PyTorch).
struct Digamma : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if (x == T(0)) return std::copysign(std::numeric_limits<T>::infinity(), -x);
    if (x < T(0)) {
      if (x == std::trunc(x)) return std::numeric_limits<T>::quiet_NaN();
      double q;
      const double r = std::modf(double(x), &q);
      const double pi = 3.14159265358979323846;
      return digamma_positive(T(1) - x) - T(pi / std::tan(pi * r));
    }
    return digamma_positive(x);
  }
};
// polygamma(1, x): digamma's derivative.
struct Trigamma : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    const T pi = T(3.14159265358979323846);
    T sign = 1, result = 0;
    if (x < T(0.5)) {
      sign = -1;
      const T s = std::sin(pi * x);
      result -= (pi * pi) / (s * s);
      x = T(1) - x;
    }
    for (int i = 0; i < 6; ++i) {
      result += T(1) / (x * x);
      x += T(1);
    }
    const T ixx = T(1) / (x * x);
    result += (T(1) + T(1) / (T(2) * x) + ixx * (T(1) / T(6) - ixx * (T(1) / T(30) - ixx * (T(1) / T(42))))) / x;
    return sign * result;
  }
};

struct Relu : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const { return x < T(0) ? T(0) : x; }
};
#define TIDE_ROUNDING(Name, f)                                               \
  struct Name : AnyType {                                                    \
    template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {         \
      if constexpr (is_fp<T>) return f(x);                                   \
      else return x;                                                         \
    }                                                                        \
  };
TIDE_ROUNDING(Floor, std::floor)
TIDE_ROUNDING(Ceil, std::ceil)
TIDE_ROUNDING(Round, std::nearbyint)
TIDE_ROUNDING(Trunc, std::trunc)
#undef TIDE_ROUNDING

struct IsNan : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return x != x;
    else return false;
  }
};
struct IsInf : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return std::isinf(x);
    else return false;
  }
};
struct IsFinite : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const {
    if constexpr (is_fp<T>) return std::isfinite(x);
    else return true;
  }
};
struct LogicalNot : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T x) const { return !(x != T(0)); }
};
struct BitwiseNot : IntegralOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) return !x;
    else return T(~x);
  }
};

// ---- binary ----
struct Add : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a || b;
    else if constexpr (is_int<T>) return wrap(a, b, 0);
    else return a + b;
  }
};
struct Sub : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_int<T>) return wrap(a, b, 1);
    else return a - b;
  }
};
struct Mul : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>) return a && b;
    else if constexpr (is_int<T>) return wrap(a, b, 2);
    else return a * b;
  }
};
struct Div : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return a / b; }
};
// Integer division by zero is rejected before the kernel runs; MIN / -1 wraps.
struct FloorDiv : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (b == T(0)) return a / b;
      T r = std::fmod(a, b);
      T q = (a - r) / b;
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) q -= T(1);
      return q;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return wrap<T>(T(0), a, 1);
        T q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
        return q;
      } else {
        return a / b;
      }
    }
  }
};
struct Remainder : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      T r = std::fmod(a, b);
      if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
        T r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) r += b;
        return r;
      } else {
        return a % b;
      }
    }
  }
};
struct Fmod : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) return std::fmod(a, b);
    else {
      if (b == T(0)) return T(0);
      if constexpr (std::is_signed_v<T>) {
        if (b == T(-1)) return T(0);
      }
      return T(a % b);
    }
  }
};
struct Pow : Numeric {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      return std::pow(a, b);
    } else {
      if constexpr (std::is_signed_v<T>) {
        if (b < 0) return a == 1 ? T(1) : a == -1 ? T((b & 1) ? -1 : 1) : T(0);
      }
      T result = 1, base = a;
      using U = std::make_unsigned_t<T>;
      U e = U(b);
      while (e) {
        if (e & 1) result = wrap(result, base, 2);
        base = wrap(base, base, 2);
        e >>= 1;
      }
      return result;
    }
  }
};
// x ^ e for the exponents training code writes, without pow: multiplications, sqrt or a
// division, as PyTorch and NumPy do (10^6 float32 x^2 through pow took ~10x PyTorch's time).
// Floating types only; the exponent operand is ignored. Not -0.5: 1/sqrt(x) is NaN at -inf
// and -inf at -0, where pow (and NumPy) give 0 and inf.
struct PowSquare {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T) const { return a * a; }
};
struct PowCube {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T) const { return a * a * a; }
};
struct PowHalf {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T) const { return std::sqrt(a); }
};
struct PowMinusOne {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T) const { return T(1) / a; }
};
struct PowMinusTwo {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T) const { return T(1) / (a * a); }
};
// Calls run(functor) with the functor above for exponent e; false when e has none.
template <typename Run>
bool with_pow_fast_path(double e, Run&& run) {
  if (e == 2) run(PowSquare{});
  else if (e == 3) run(PowCube{});
  else if (e == 0.5) run(PowHalf{});
  else if (e == -1) run(PowMinusOne{});
  else if (e == -2) run(PowMinusTwo{});
  else return false;
  return true;
}

struct Maximum : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};
struct Minimum : AnyType {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    if constexpr (is_fp<T>) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};
struct Atan2 : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return std::atan2(a, b); }
};
// The magnitude of a with the sign bit of b (so -0.0 and -NaN count as negative).
struct Copysign : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return std::copysign(a, b); }
};
// The Hurwitz zeta function zeta(s, q) = sum over k >= 0 of (q + k)^-s, for the integer
// orders s >= 3 polygamma needs: the first terms summed directly until q + k passes 9, then
// the Euler-Maclaurin tail with Bernoulli numbers (the Cephes method PyTorch uses too). In
// double for every dtype, as PyTorch's CPU kernel accumulates: at negative q the terms cancel.
// +inf at q = 0, -1, -2, ... (a pole).
TIDE_HOST_DEVICE inline double hurwitz_zeta(double s, double q) {
  const double eps = 1.11022302462515654042e-16;
  if (q <= 0.0 && q == std::floor(q)) return std::numeric_limits<double>::infinity();
  // (2j)! / B_2j for j = 1..12: the Euler-Maclaurin coefficients' denominators.
  const double A[12] = {12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                        -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                        1.8152105401943546773e17, -7.1661652561756670113e18};
  double sum = std::pow(q, -s), a = q, term = 0;
  for (int i = 0; i < 9 || a <= 9.0; ++i) {
    a += 1.0;
    term = std::pow(a, -s);
    sum += term;
    if (-eps * sum < term && term < eps * sum) return sum;  // (never for a negative sum)
  }
  const double w = a;
  sum += term * w / (s - 1.0) - 0.5 * term;
  double rising = 1, k = 0;  // s (s + 1) ... (s + k - 1)
  for (int j = 0; j < 12; ++j) {
    rising *= s + k;
    term /= w;
    const double t = rising * term / A[j];
    sum += t;
    if (std::fabs(t / sum) < eps) break;
    k += 1.0;
    rising *= s + k;
    term /= w;
    k += 1.0;
  }
  return sum;
}
// polygamma(n, x), the n-th derivative of digamma, for an integer order n >= 0 given as a
// (converted) operand: digamma and trigamma for n = 0 and 1, (-1)^(n+1) n! zeta(n + 1, x)
// above. The bindings check n (the functor sees n exactly: an integer below 2^24).
struct Polygamma : FloatOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T n, T x) const {
    if (n == T(0)) return Digamma{}(x);
    if (n == T(1)) return Trigamma{}(x);
    const T sign = std::fmod(n, T(2)) == T(1) ? T(1) : T(-1);
    return sign * std::exp(std::lgamma(n + T(1))) * T(hurwitz_zeta(double(n) + 1.0, double(x)));
  }
};
#define TIDE_COMPARE(Name, op)                                                           \
  struct Name : AnyType {                                                                \
    template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return a op b; } \
  };
TIDE_COMPARE(Eq, ==)
TIDE_COMPARE(Ne, !=)
TIDE_COMPARE(Lt, <)
TIDE_COMPARE(Le, <=)
TIDE_COMPARE(Gt, >)
TIDE_COMPARE(Ge, >=)
#undef TIDE_COMPARE
// & and |, not && and ||: both sides are cheap, and a short circuit is a branch that keeps the
// loop scalar (and mispredicted half the time on random masks: 1.4 ms for 256k elements).
struct LogicalAnd : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return bool((a != T(0)) & (b != T(0))); }
};
struct LogicalOr : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return bool((a != T(0)) | (b != T(0))); }
};
struct LogicalXor : AnyType {
  template <typename T> TIDE_HOST_DEVICE bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); }
};
#define TIDE_BITWISE(Name, op)                                                          \
  struct Name : IntegralOnly {                                                          \
    template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const { return T(a op b); } \
  };
TIDE_BITWISE(BitwiseAnd, &)
TIDE_BITWISE(BitwiseOr, |)
TIDE_BITWISE(BitwiseXor, ^)
#undef TIDE_BITWISE
struct IntegerOnly {
  template <typename T> static constexpr bool accepts = is_int<T>;
};
// Shifts as NumPy's: a count outside [0, bits) (negative ones included) shifts every bit
// out, giving 0 for the left shift and the sign fill (0 or -1) for the right shift.
struct BitwiseLeftShift : IntegerOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    return U(b) < U(sizeof(T) * 8) ? T(U(a) << U(b)) : T(0);
  }
};
struct BitwiseRightShift : IntegerOnly {
  template <typename T> TIDE_HOST_DEVICE T operator()(T a, T b) const {
    using U = std::make_unsigned_t<T>;
    return U(b) < U(sizeof(T) * 8) ? T(a >> U(b)) : a < T(0) ? T(-1) : T(0);
  }
};

}  // namespace tide::fn
