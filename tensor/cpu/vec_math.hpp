// Contiguous-array kernels for functors whose scalar libm call keeps the compiler from
// vectorising the loop. A functor F with a ContiguousKernel<F> specialisation has its
// contiguous float/double loops run by ContiguousKernel<F>::run instead of calling F per
// element (tensor/cpu/loops.hpp picks it). Today: exp, tanh and sigmoid (glibc's tanhf and
// tanh take 16-21 ns an element on the 2-core Zen 4, 40x NumPy's vectorised tanh), and sign,
// whose NaN case is a branch in its functor, and log (glibc's logf 2.8 ns an element, 5x NumPy).
#pragma once
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "functors.hpp"

namespace tide {

// c ? x : y without a branch where T is a plain value of 1, 2, 4 or 8 bytes: a loop over it
// vectorises, where GCC keeps a branch between two floating-point values it may not compute
// both of (they could trap).
template <typename T>
inline T select_bits(bool c, T x, T y) {
  if constexpr (std::is_trivially_copyable_v<T> && (sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8)) {
    using U = std::conditional_t<sizeof(T) == 1, uint8_t,
                                 std::conditional_t<sizeof(T) == 2, uint16_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
    const U mask = U(0) - U(c);
    return std::bit_cast<T>(U((std::bit_cast<U>(x) & mask) | (std::bit_cast<U>(y) & U(~mask))));
  } else {
    return c ? x : y;
  }
}

namespace vec_detail {

// a * b + c, fused where the target has FMA (so that the loop stays vector code).
template <typename T>
inline T madd(T a, T b, T c) {
#ifdef __FMA__
  return std::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// 1/k! in T (a Taylor coefficient of exp), computed at compile time.
template <typename T>
constexpr T inverse_factorial(int k) {
  double f = 1;
  for (int i = 2; i <= k; ++i) f *= i;
  return T(1.0 / f);
}

// sum over k = K..Degree of r^(k-K) / k!, by Horner's rule with constant coefficients.
template <typename T, int K, int Degree>
inline T taylor_exp_tail(T r) {
  constexpr T c = inverse_factorial<T>(K);
  if constexpr (K == Degree) return c;
  else return madd(taylor_exp_tail<T, K + 1, Degree>(r), r, c);
}

// Per-precision constants of exp: x = n ln2 + r with |r| <= ln2/2, e^x = 2^n e^r, e^r by
// its Taylor polynomial (degree 13 for double, 7 for float: truncation below 0.1 ulp).
// The "shifter" rounds x log2(e) to the integer n held in its low mantissa bits; [kLo, kHi]
// is where 2^n is a normal number.
template <typename T> struct ExpConst;
template <> struct ExpConst<double> {
  using Bits = uint64_t;
  static constexpr int kMantissa = 52, kBias = 1023, kDegree = 13;
  static constexpr double kShifter = 0x1.8p52, kLog2e = 1.4426950408889634;
  static constexpr double kLn2Hi = 0x1.62e42fee00000p-1, kLn2Lo = 0x1.a39ef35793c76p-33;
  static constexpr double kLo = -708.0, kHi = 709.0;
};
template <> struct ExpConst<float> {
  using Bits = uint32_t;
  static constexpr int kMantissa = 23, kBias = 127, kDegree = 7;
  static constexpr float kShifter = 0x1.8p23f, kLog2e = 1.44269504f;
  static constexpr float kLn2Hi = 0.693359375f, kLn2Lo = -2.12194440e-4f;
  static constexpr float kLo = -87.0f, kHi = 88.0f;
};

// e^x for x in [kLo, kHi], branch-free so that loops over it vectorise.
template <typename T>
inline T exp_in_range(T x) {
  using C = ExpConst<T>;
  using Bits = typename C::Bits;
  T t = madd(x, C::kLog2e, C::kShifter);
  T n = t - C::kShifter;
  T r = madd(n, -C::kLn2Hi, x);
  r = madd(n, -C::kLn2Lo, r);
  T p = taylor_exp_tail<T, 0, C::kDegree>(r);
  Bits scale = (std::bit_cast<Bits>(t) + Bits(C::kBias)) << C::kMantissa;
  return p * std::bit_cast<T>(scale);
}

// The tangent numbers T_1..T_N (tan x = sum of T_k x^(2k-1) / (2k-1)!), by Brent and
// Zimmermann's in-place recurrence, in double: exact to T_12, rounded beyond, where the
// terms they weigh are below 1e-13 of tanh's value.
template <int N>
constexpr std::array<double, N> tangent_numbers() {
  std::array<double, N> t{};
  t[0] = 1;
  for (int k = 1; k < N; ++k) t[k] = k * t[k - 1];
  for (int k = 1; k < N; ++k)
    for (int j = k; j < N; ++j) t[j] = (j - k) * t[j - 1] + (j - k + 2) * t[j];
  return t;
}

// tanh's Taylor coefficients after x: c[k] weighs x^(2k+3), (-1)^(k+1) T_(k+2) / (2k+3)!.
template <typename T, int N>
constexpr std::array<T, N> tanh_taylor() {
  constexpr auto t = tangent_numbers<N + 1>();
  std::array<T, N> c{};
  double f = 1;  // (2k+3)!
  for (int i = 2; i <= 3; ++i) f *= i;
  for (int k = 0; k < N; ++k) {
    c[k] = T((k % 2 ? 1 : -1) * t[k + 1] / f);
    f *= double(2 * k + 4) * double(2 * k + 5);
  }
  return c;
}

// tanh(x) = x + x^3 (c[0] + c[1] x^2 + ...) below kSmall, by Horner's rule from c[K].
template <typename T, int K, int N>
inline T tanh_taylor_tail(T x2) {
  constexpr T c = tanh_taylor<T, N>()[K];
  if constexpr (K == N - 1) return c;
  else return madd(tanh_taylor_tail<T, K + 1, N>(x2), x2, c);
}

// Where tanh switches from its Taylor polynomial to 1 - 2 / (e^(2|x|) + 1), and how many
// terms the polynomial takes after x there: chosen by simulating both in T against long
// double over [-3, 3] in steps of 3e-6 and 1e-8..20 geometrically: at most 1.7 ulp (float32
// 0.625 and 8 terms, 1.68; float64 0.55 and 17 terms, 1.66), where glibc is within 1.
template <typename T> struct TanhConst;
template <> struct TanhConst<double> {
  static constexpr double kSmall = 0.55;
  static constexpr int kTerms = 17;
};
template <> struct TanhConst<float> {
  static constexpr float kSmall = 0.625f;
  static constexpr int kTerms = 8;
};

// tanh without a branch, so that loops over it vectorise. e^(2|x|) is taken at 2|x| <= 40,
// where 2 / (e + 1) is already below half an ulp of 1 in double; NaN stays NaN (std::min
// keeps its first operand's NaN).
template <typename T>
inline T tanh_value(T x) {
  using C = TanhConst<T>;
  const T ax = std::fabs(x), x2 = x * x;
  const T small = madd(ax * x2, tanh_taylor_tail<T, 0, C::kTerms>(x2), ax);
  const T e = exp_in_range(std::min(ax + ax, T(40)));
  const T large = T(1) - T(2) / (e + T(1));
  return std::copysign(select_bits(ax < C::kSmall, small, large), x);  // odd, -0 included
}

// Per-precision constants of log: x = 2^e m with m in [sqrt(1/2), sqrt(2)), found by
// subtracting the bits of sqrt(1/2) (kOff) and taking the exponent field; log(m) = log(1 + f)
// = f - (f^2/2 - s (f^2/2 + R)), s = f / (2 + f), R = sum of 2 s^2k / (2k + 1), k = 1..kTerms
// (log(1+f) = 2 atanh(s)); terms chosen by simulating in T against long double over
// [0.5, 2], [0.999, 1.001] and the whole normal range geometrically: at most 0.84 ulp for
// both (float32 4 terms, float64 10), where glibc is within 1.
template <typename T> struct LogConst;
template <> struct LogConst<double> {
  using Bits = uint64_t;
  using SBits = int64_t;
  static constexpr int kMantissa = 52, kTerms = 10;
  static constexpr Bits kOff = 0x3FE6A09E667F3BCDull, kExpMask = Bits(0xFFF) << 52;
};
template <> struct LogConst<float> {
  using Bits = uint32_t;
  using SBits = int32_t;
  static constexpr int kMantissa = 23, kTerms = 4;
  static constexpr Bits kOff = 0x3F3504F3u, kExpMask = Bits(0x1FF) << 23;
};

// sum of 2 z^(k-K) / (2k + 1) for k = K..N (Horner's rule; the coefficients of log's R / z).
template <typename T, int K, int N>
inline T log_series(T z) {
  constexpr T c = T(2.0 / (2 * K + 1));
  if constexpr (K == N) return c;
  else return madd(log_series<T, K + 1, N>(z), z, c);
}

// log(x) for a positive, normal, finite x, branch-free so that loops over it vectorise;
// e ln2 in exp's two parts of ln2.
template <typename T>
inline T log_normal(T x) {
  using C = LogConst<T>;
  using Ln2 = ExpConst<T>;
  using Bits = typename C::Bits;
  using SBits = typename C::SBits;
  const Bits b = std::bit_cast<Bits>(x), tmp = b - C::kOff;
  const T e = T(int32_t(SBits(tmp) >> C::kMantissa));  // (int32: AVX2 converts no int64)
  const T f = std::bit_cast<T>(Bits(b - (tmp & C::kExpMask))) - T(1);
  const T s = f / (T(2) + f), z = s * s;
  const T R = z * log_series<T, 1, C::kTerms>(z);
  const T hfsq = T(0.5) * f * f;
  return e * Ln2::kLn2Hi - ((hfsq - (s * (hfsq + R) + e * Ln2::kLn2Lo)) - f);
}

}  // namespace vec_detail

template <typename F>
struct ContiguousKernel {
  static constexpr bool exists = false;
};

namespace vec_detail {

// Runs fast(x) over contiguous elements block by block: a block whose inputs all satisfy
// in_range runs it alone (a vector loop); in one that does not, each element out of range
// takes slow(x) and the others fast(x), so that every element's bits depend on its value
// alone, never on where a block, a thread's share or a fused replay's chunk begins. Each
// element is read before it is written, so out may be in (exp_, log_).
template <typename T, typename InRange, typename Fast, typename Slow>
void run_guarded(T* out, const T* in, int64_t n, InRange in_range, Fast fast, Slow slow) {
  constexpr int64_t kBlock = 256;
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t m = std::min(kBlock, n - b);
    const T* x = in + b;
    T* y = out + b;
    int all = 1;
    for (int64_t i = 0; i < m; ++i) all &= in_range(x[i]);
    if (all) {
      for (int64_t i = 0; i < m; ++i) y[i] = fast(x[i]);
    } else {
      for (int64_t i = 0; i < m; ++i) y[i] = in_range(x[i]) ? fast(x[i]) : slow(x[i]);
    }
  }
}

// exp over n doubles with AVX-512's table-driven kernel (tensor/cpu/exp_avx512.cpp) where the
// CPU has AVX-512; false, having done nothing, where it does not.
bool exp_avx512(double* out, const double* in, int64_t n);

}  // namespace vec_detail

// exp: exp_in_range where 2^n is normal, std::exp for overflows, underflows and NaN; float64
// through the AVX-512 kernel where the CPU has one (every layout and op that takes exp from
// here, softmax and logsumexp included, so the same bits on a given machine).
template <>
struct ContiguousKernel<fn::Exp> {
  static constexpr bool exists = true;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    if constexpr (std::is_same_v<T, double>)
      if (vec_detail::exp_avx512(out, in, n)) return;
    using C = vec_detail::ExpConst<T>;
    vec_detail::run_guarded(
        out, in, n, [](T x) { return int((x >= C::kLo) & (x <= C::kHi)); },
        [](T x) { return vec_detail::exp_in_range(x); }, [](T x) { return std::exp(x); });
  }
};

namespace vec_detail {

// Adds e^(p[i] - m), i < n, into the L lanes acc (acc[i % L] = comb(acc[i % L], e)), through
// exp's kernel in blocks: logsumexp's and cross-entropy's row sums (glibc's scalar exp was
// two thirds of log_softmax's time and made cross-entropy 6x PyTorch's).
template <int L, typename A, typename T, typename Comb>
void exp_shift_into_lanes(const T* p, int64_t n, A m, A* acc, Comb comb) {
  constexpr int64_t kBlock = 256;  // a multiple of L
  A e[kBlock];
  for (int64_t b = 0; b < n; b += kBlock) {
    const int64_t len = std::min(kBlock, n - b);
    for (int64_t i = 0; i < len; ++i) e[i] = A(p[b + i]) - m;
    ContiguousKernel<fn::Exp>::run(e, e, len);
    int64_t i = 0;
    for (; i + L <= len; i += L)
      for (int j = 0; j < L; ++j) acc[j] = comb(acc[j], e[i + j]);
    for (int j = 0; i < len; ++i, ++j) acc[j] = comb(acc[j], e[i]);
  }
}

}  // namespace vec_detail

// tanh over contiguous elements (tanh_value: every element's bits depend on its value alone).
template <>
struct ContiguousKernel<fn::Tanh> {
  static constexpr bool exists = true;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = vec_detail::tanh_value(in[i]);
  }
};

// sigmoid as its functor computes it, 1 / (1 + e^-x), with e^-x from exp's kernel above
// (out of its range, std::exp), block by block through a buffer; out may be in (sigmoid_).
template <>
struct ContiguousKernel<fn::Sigmoid> {
  static constexpr bool exists = true;
  static constexpr int64_t kBlock = 256;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    T e[kBlock];
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      for (int64_t i = 0; i < m; ++i) e[i] = -in[b + i];
      ContiguousKernel<fn::Exp>::run(e, e, m);
      for (int64_t i = 0; i < m; ++i) out[b + i] = T(1) / (T(1) + e[i]);
    }
  }
};

// sign as its functor computes it, NaN passed through by select_bits instead of a branch
// (1.06 -> 0.1 ns an element).
template <>
struct ContiguousKernel<fn::Sign> {
  static constexpr bool exists = true;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const T x = in[i];
      out[i] = select_bits(x != x, x, T((x > 0) - (x < 0)));
    }
  }
};

// log: log_normal for positive, normal, finite inputs; std::log for 0, negatives,
// subnormals, infinities and NaN.
template <>
struct ContiguousKernel<fn::Log> {
  static constexpr bool exists = true;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    constexpr T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    vec_detail::run_guarded(
        out, in, n, [](T x) { return int((x >= lo) & (x <= hi)); },
        [](T x) { return vec_detail::log_normal(x); }, [](T x) { return std::log(x); });
  }
};

}  // namespace tide
