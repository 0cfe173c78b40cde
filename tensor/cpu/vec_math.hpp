// Contiguous-array kernels for functors whose scalar libm call keeps the compiler from
// vectorising the loop. A functor F with a ContiguousKernel<F> specialisation has its
// contiguous float/double loops run by ContiguousKernel<F>::run instead of calling F per
// element (tensor/cpu/loops.hpp picks it). Today: exp.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "functors.hpp"

namespace tide {

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

}  // namespace vec_detail

template <typename F>
struct ContiguousKernel {
  static constexpr bool exists = false;
};

// exp over contiguous elements, block by block: a block whose inputs all lie in the normal
// range runs the vector loop; in one with an overflow, an underflow or a NaN, each element
// out of that range takes std::exp and the others the same formula, so that every element's
// bits depend on its value alone, never on where a block, a thread's share or a fused
// replay's chunk begins. Each element is read before it is written, so out may be in (exp_).
template <>
struct ContiguousKernel<fn::Exp> {
  static constexpr bool exists = true;
  static constexpr int64_t kBlock = 256;
  template <typename T>
  static void run(T* out, const T* in, int64_t n) {
    using C = vec_detail::ExpConst<T>;
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      const T* x = in + b;
      T* y = out + b;
      int in_range = 1;
      for (int64_t i = 0; i < m; ++i) in_range &= (x[i] >= C::kLo) & (x[i] <= C::kHi);
      if (in_range) {
        for (int64_t i = 0; i < m; ++i) y[i] = vec_detail::exp_in_range(x[i]);
      } else {
        for (int64_t i = 0; i < m; ++i)
          y[i] = (x[i] >= C::kLo) & (x[i] <= C::kHi) ? vec_detail::exp_in_range(x[i]) : std::exp(x[i]);
      }
    }
  }
};

}  // namespace tide
