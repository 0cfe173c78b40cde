// exp over float64 arrays with AVX-512, on the x86-64 CPUs that have it (chosen at run time;
// the build targets AVX2). x = (16k + j) ln2/16 + r with |r| <= ln2/32, so e^x = 2^k 2^(j/16)
// e^r: 2^(j/16) comes from a 16-entry table that two registers hold, read by one permute per
// 8 elements, and e^r - 1 from its Taylor polynomial of degree 7 (truncation ~1e-18). The
// table's rounding error is added back from a second table, so the result is within 0.54 ulp
// (the AVX2 kernel of vec_math.hpp: 0.85). With AVX2 the table would need gathers, which on
// Zen 4 cost as much as the degree-13 polynomial they save (0.90 ns an element against 0.84);
// this kernel takes 0.49 ns.
#include <bit>
#include <cmath>
#include <cstdint>

#include "vec_math.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace tide::vec_detail {

#if defined(__x86_64__) && defined(__GNUC__)

namespace {

constexpr int kTableBits = 4;
constexpr int kTable = 1 << kTableBits;

// 2^(j/16) rounded to double (its bits), and the relative error of that rounding.
struct ExpTable {
  alignas(64) uint64_t scale[kTable];
  alignas(64) double tail[kTable];
};

const ExpTable& exp_table() {
  static const ExpTable table = [] {
    ExpTable t{};
    for (int j = 0; j < kTable; ++j) {
      const long double v = exp2l(static_cast<long double>(j) / kTable);
      const double rounded = static_cast<double>(v);
      t.scale[j] = std::bit_cast<uint64_t>(rounded);
      t.tail[j] = static_cast<double>((v - rounded) / rounded);
    }
    return t;
  }();
  return table;
}

// e^x in each lane (exact for in-range lanes only: the caller replaces the others).
[[gnu::target("avx512f,fma")]] inline __m512d exp_lanes(__m512d x, __m512i scale_lo, __m512i scale_hi,
                                                        __m512d tail_lo, __m512d tail_hi) {
  using C = ExpConst<double>;
  const __m512d shifter = _mm512_set1_pd(C::kShifter);
  // t holds m = round(x 16 / ln2) in its low mantissa bits; m = 16k + j.
  const __m512d t = _mm512_fmadd_pd(x, _mm512_set1_pd(C::kLog2e * kTable), shifter);
  const __m512d m = _mm512_sub_pd(t, shifter);
  __m512d r = _mm512_fmadd_pd(m, _mm512_set1_pd(-C::kLn2Hi / kTable), x);
  r = _mm512_fmadd_pd(m, _mm512_set1_pd(-C::kLn2Lo / kTable), r);
  const __m512i bits = _mm512_castpd_si512(t);
  // The permutes read the low 4 bits of each lane: j.
  const __m512i table_bits = _mm512_permutex2var_epi64(scale_lo, bits, scale_hi);
  const __m512d tail = _mm512_permutex2var_pd(tail_lo, bits, tail_hi);
  // (2^k into the exponent field; the zero-masking forms of the shifts, with all lanes set:
  // GCC 12 warns that the plain forms' undefined source may be used uninitialised.)
  const __mmask8 all = 0xFF;
  const __m512i exponent = _mm512_maskz_slli_epi64(all, _mm512_maskz_srli_epi64(all, bits, kTableBits), 52);
  const __m512d scale = _mm512_castsi512_pd(_mm512_add_epi64(table_bits, exponent));
  // e^r - 1 = r + r^2 (1/2 + r/6 + ... + r^5/7!)
  __m512d p = _mm512_set1_pd(inverse_factorial<double>(7));
  for (int d = 6; d >= 2; --d) p = _mm512_fmadd_pd(p, r, _mm512_set1_pd(inverse_factorial<double>(d)));
  p = _mm512_fmadd_pd(_mm512_mul_pd(r, r), p, r);
  return _mm512_fmadd_pd(scale, _mm512_add_pd(p, tail), scale);
}

// 8 elements at a time, the last block masked; lanes outside [kLo, kHi] (overflow,
// underflow to subnormals or zero, NaN) go to std::exp, as in the AVX2 kernel.
[[gnu::target("avx512f,fma")]] void exp_blocks(double* out, const double* in, int64_t n) {
  using C = ExpConst<double>;
  const ExpTable& t = exp_table();
  const __m512i scale_lo = _mm512_load_si512(t.scale), scale_hi = _mm512_load_si512(t.scale + 8);
  const __m512d tail_lo = _mm512_load_pd(t.tail), tail_hi = _mm512_load_pd(t.tail + 8);
  const __m512d lo = _mm512_set1_pd(C::kLo), hi = _mm512_set1_pd(C::kHi);
  for (int64_t i = 0; i < n; i += 8) {
    const __mmask8 active = n - i >= 8 ? __mmask8(0xFF) : __mmask8((1u << (n - i)) - 1);
    const __m512d x = _mm512_maskz_loadu_pd(active, in + i);
    const __mmask8 in_range =
        _mm512_cmp_pd_mask(x, lo, _CMP_GE_OQ) & _mm512_cmp_pd_mask(x, hi, _CMP_LE_OQ) & active;
    _mm512_mask_storeu_pd(out + i, in_range, exp_lanes(x, scale_lo, scale_hi, tail_lo, tail_hi));
    if (in_range != active) [[unlikely]] {
      for (int l = 0; l < 8; ++l)
        if ((active >> l & 1) && !(in_range >> l & 1)) out[i + l] = std::exp(in[i + l]);
    }
  }
}

}  // namespace

bool exp_avx512(double* out, const double* in, int64_t n) {
  static const bool available = __builtin_cpu_supports("avx512f");
  if (!available) return false;
  exp_blocks(out, in, n);
  return true;
}

#else

bool exp_avx512(double*, const double*, int64_t) { return false; }

#endif

}  // namespace tide::vec_detail
