// float16 (IEEE binary16) and bfloat16 storage types. They are stored as 16 bits and
// converted to float for arithmetic (round to nearest even on the way back), with the same
// bit-exact conversions on the CPU and in CUDA kernels.
#pragma once
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define TIDE_HOST_DEVICE __host__ __device__
#else
#define TIDE_HOST_DEVICE
#endif

namespace tide {

namespace detail {
TIDE_HOST_DEVICE inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
TIDE_HOST_DEVICE inline float bits_f32(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace detail

struct Half {
  uint16_t bits = 0;
  Half() = default;
  TIDE_HOST_DEVICE Half(float f) : bits(from_float(f)) {}
  TIDE_HOST_DEVICE operator float() const { return to_float(bits); }

  TIDE_HOST_DEVICE static uint16_t from_float(float f) {
    uint32_t x = detail::f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u)  // inf or nan
      return uint16_t(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    if (absx >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // overflow to inf
    if (absx < 0x38800000u) {                                 // subnormal or zero in half
      if (absx < 0x33000000u) return uint16_t(sign);          // underflow to zero
      uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
      int shift = 126 - int(absx >> 23);  // 14..24
      uint32_t half = mant >> (shift);
      uint32_t rem = mant & ((1u << shift) - 1);
      uint32_t mid = 1u << (shift - 1);
      if (rem > mid || (rem == mid && (half & 1u))) ++half;
      return uint16_t(sign | half);
    }
    uint32_t h = ((absx - 0x38000000u) >> 13);
    uint32_t rem = absx & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  TIDE_HOST_DEVICE static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return detail::bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
      if (mant == 0) return detail::bits_f32(sign);
      float v = float(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
      return sign ? -v : v;
    }
    return detail::bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
  }
};

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  TIDE_HOST_DEVICE BFloat16(float f) : bits(from_float(f)) {}
  TIDE_HOST_DEVICE operator float() const { return detail::bits_f32(uint32_t(bits) << 16); }

  TIDE_HOST_DEVICE static uint16_t from_float(float f) {
    uint32_t x = detail::f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet nan
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return uint16_t((x + rounding) >> 16);
  }
};

}  // namespace tide
