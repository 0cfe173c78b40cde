// The CPU backend's random fills (the random entry of the device table, tensor/backend.hpp):
// random.hpp's Philox scheme, in parallel chunks whose values depend only on (draw, element),
// so every thread count and every device gives the same numbers.
#include "../parallel.hpp"
#include "../random.hpp"
#include "backend.hpp"

namespace tide::cpu {

namespace {

// Elements per parallel chunk (Philox plus a log/cos per element for normal is far more work
// than a plain copy, so the grain is smaller than kParallelGrain).
constexpr int64_t kRandomGrain = 8192;

// Runs f(i, words) for every element i in [0, n), words pointing at the W words of element i
// (random.hpp: block offset + i*W/4, starting at word i*W % 4).
template <int W, typename F>
void philox_for(int64_t n, uint64_t seed, uint64_t offset, const F& f) {
  static_assert(W == 1 || W == 2 || W == 4);
  parallel_for(0, n, kRandomGrain, [&](int64_t b, int64_t e) {
    uint64_t cur = ~uint64_t(0);
    philox::Words ws{};
    for (int64_t i = b; i < e; ++i) {
      uint64_t widx = uint64_t(i) * W;
      uint64_t blk = offset + widx / 4;
      if (blk != cur) {
        ws = philox::block(seed, blk);
        cur = blk;
      }
      f(i, &ws.w[widx % 4]);
    }
  });
}

// Words per element and the uniform [0,1) value of a float type (exact in that type).
template <typename T> struct UniformOf;
template <> struct UniformOf<float> {
  static constexpr int W = philox::uniform_words<float>();
  static double get(const uint32_t* w) { return philox::uniform_bits(w[0], 24); }
};
template <> struct UniformOf<Half> {
  static constexpr int W = philox::uniform_words<Half>();
  static double get(const uint32_t* w) { return philox::uniform_bits(w[0], 11); }
};
template <> struct UniformOf<BFloat16> {
  static constexpr int W = philox::uniform_words<BFloat16>();
  static double get(const uint32_t* w) { return philox::uniform_bits(w[0], 8); }
};
template <> struct UniformOf<double> {
  static constexpr int W = philox::uniform_words<double>();
  static double get(const uint32_t* w) { return philox::uniform53(w[0], w[1]); }
};

// a + (b - a) * u; a value that rounds up to b becomes a (half-open interval).
template <typename T>
void uniform(T* p, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  using U = UniformOf<T>;
  const double width = b - a;
  philox_for<U::W>(n, seed, offset, [&](int64_t i, const uint32_t* w) {
    T v = T(compute_t<T>(a + width * U::get(w)));
    if (a < b && double(compute_t<T>(v)) >= b) v = T(compute_t<T>(a));
    p[i] = v;
  });
}

// mean + std * z, z from Box-Muller on one Philox block per pair of elements.
template <typename T>
void normal(T* p, int64_t n, uint64_t seed, uint64_t offset, double mean, double std) {
  auto put = [&](int64_t i, double z) { p[i] = T(compute_t<T>(mean + std * z)); };
  parallel_for(0, n, kRandomGrain, [&](int64_t b, int64_t e) {
    int64_t i = b;
    if (i & 1) {  // a chunk starting at an odd element: its pair began in the chunk before
      auto w = philox::block(seed, offset + uint64_t(i) / 2);
      put(i, philox::normal_from_words(w.w[0], w.w[1], w.w[2], w.w[3], true));
      ++i;
    }
    for (; i + 1 < e; i += 2) {
      auto w = philox::block(seed, offset + uint64_t(i) / 2);
      double z0, z1;
      philox::normal_pair_from_words(w.w[0], w.w[1], w.w[2], w.w[3], z0, z1);
      put(i, z0);
      put(i + 1, z1);
    }
    if (i < e) {
      auto w = philox::block(seed, offset + uint64_t(i) / 2);
      put(i, philox::normal_from_words(w.w[0], w.w[1], w.w[2], w.w[3], false));
    }
  });
}

// low + (64-bit word pair mod (high - low)).
template <typename T>
void integers(T* p, int64_t n, uint64_t seed, uint64_t offset, int64_t low, int64_t high) {
  const uint64_t range = uint64_t(high) - uint64_t(low);
  philox_for<2>(n, seed, offset, [&](int64_t i, const uint32_t* w) {
    uint64_t r = (uint64_t(w[0]) << 32) | w[1];
    int64_t v = int64_t(uint64_t(low) + r % range);
    if constexpr (std::is_same_v<T, bool>) p[i] = v != 0;
    else if constexpr (std::is_integral_v<T>) p[i] = T(v);
    else p[i] = T(compute_t<T>(double(v)));
  });
}

}  // namespace

void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset, const RandomParams& r) {
  if (kind == RandomKind::Int) {
    TIDE_DISPATCH_ALL(dt, "randint", [&] { integers(static_cast<scalar_t*>(out), n, seed, offset, r.low, r.high); });
    return;
  }
  TIDE_DISPATCH_FLOAT(dt, kind == RandomKind::Uniform ? "uniform_" : "normal_", [&] {
    if (kind == RandomKind::Uniform) uniform(static_cast<scalar_t*>(out), n, seed, offset, r.a, r.b);
    else normal(static_cast<scalar_t*>(out), n, seed, offset, r.a, r.b);
  });
}

}  // namespace tide::cpu
