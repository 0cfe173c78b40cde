// NumPy's random streams (see random_numpy.hpp).
//
// Floating-point expressions here must round exactly as NumPy's C does: NumPy is built without
// fused multiply-add, so contraction (which -march=x86-64-v3 would allow) is switched off for
// this file.
#pragma GCC optimize("fp-contract=off")
#include "random_numpy.hpp"

#include "error.hpp"

#include <quadmath.h>

#include <cmath>
#include <mutex>
#include <algorithm>

namespace tide::nprandom {

namespace {

// ---- SeedSequence: entropy words hashed into a pool of 4 words, then expanded.
constexpr uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u;
constexpr uint32_t kInitB = 0x8b51f9ddu, kMultB = 0x58f38dedu;
constexpr uint32_t kMixL = 0xca01f9ddu, kMixR = 0x4973f715u;
constexpr int kPoolSize = 4;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  return value ^ (value >> 16);
}

uint32_t mix(uint32_t x, uint32_t y) {
  uint32_t r = kMixL * x - kMixR * y;
  return r ^ (r >> 16);
}

// ---- PCG64
constexpr unsigned __int128 kPcgMult =
    (static_cast<unsigned __int128>(2549297995355413924ull) << 64) | 4865540595714422341ull;

uint64_t rotr64(uint64_t v, unsigned r) { return (v >> r) | (v << ((64u - r) & 63u)); }

uint64_t smear_mask(uint64_t max) {  // the smallest 2^k - 1 >= max
  uint64_t m = max;
  m |= m >> 1;
  m |= m >> 2;
  m |= m >> 4;
  m |= m >> 8;
  m |= m >> 16;
  m |= m >> 32;
  return m;
}

// ---- the narrow draws of the 8/16-bit fills: pieces of one 32-bit draw, low bits first.
template <typename U>
struct Buffered {
  BitGenerator& g;
  uint32_t buf = 0;
  int left = 0;  // pieces still in buf after the current one
  U next() {
    if constexpr (sizeof(U) == 4) {
      return g.next32();
    } else {
      if (left == 0) {
        buf = g.next32();
        left = int(4 / sizeof(U)) - 1;
      } else {
        buf >>= 8 * sizeof(U);
        --left;
      }
      return U(buf);
    }
  }
};

// Lemire's multiply-and-reject for widths up to 32 bits (W holds a product of two U).
template <typename U, typename W>
U lemire_narrow(Buffered<U>& src, U rng) {
  const U excl = U(rng + 1);
  constexpr int bits = 8 * sizeof(U);
  W m = W(W(src.next()) * W(excl));
  U leftover = U(m);
  if (leftover < excl) {
    const U threshold = U(U(U(~U(0)) - rng) % excl);
    while (leftover < threshold) {
      m = W(W(src.next()) * W(excl));
      leftover = U(m);
    }
  }
  return U(m >> bits);
}

template <typename U>
U masked_narrow(Buffered<U>& src, U rng) {
  const U mask = U(smear_mask(rng));
  U v;
  while ((v = U(src.next() & mask)) > rng) {
  }
  return v;
}

template <typename U, typename W>
void bounded_fill_narrow(BitGenerator& g, U off, U rng, int64_t n, bool masked, U* out) {
  Buffered<U> src{g};
  for (int64_t i = 0; i < n; ++i) {
    U v;
    if (rng == 0) v = 0;
    else if (rng == U(~U(0))) v = src.next();
    else v = masked ? masked_narrow(src, rng) : lemire_narrow<U, W>(src, rng);
    out[i] = U(off + v);
  }
}

uint64_t lemire64(BitGenerator& g, uint64_t rng) {
  const uint64_t excl = rng + 1;
  unsigned __int128 m = static_cast<unsigned __int128>(g.next64()) * excl;
  uint64_t leftover = uint64_t(m);
  if (leftover < excl) {
    const uint64_t threshold = (UINT64_MAX - rng) % excl;
    while (leftover < threshold) {
      m = static_cast<unsigned __int128>(g.next64()) * excl;
      leftover = uint64_t(m);
    }
  }
  return uint64_t(m >> 64);
}

// One value of NumPy's 64-bit bounded draw (ranges that fit 32 bits use 32-bit draws).
uint64_t bounded64_one(BitGenerator& g, uint64_t rng, bool masked) {
  if (rng == 0) return 0;
  if (rng <= 0xFFFFFFFFull) {
    if (rng == 0xFFFFFFFFull) return g.next32();
    Buffered<uint32_t> src{g};
    return masked ? masked_narrow<uint32_t>(src, uint32_t(rng)) : lemire_narrow<uint32_t, uint64_t>(src, uint32_t(rng));
  }
  if (rng == UINT64_MAX) return g.next64();
  if (masked) {
    const uint64_t mask = smear_mask(rng);
    uint64_t v;
    while ((v = g.next64() & mask) > rng) {
    }
    return v;
  }
  return lemire64(g, rng);
}

// ---- ziggurat tables
//
// The layers of Marsaglia and Tsang's ziggurat ("The Ziggurat Method for Generating Random
// Variables", 2000) with 256 layers: x[255] = r, x[i] = f^-1(f(x[i+1]) + v / x[i+1]) down to
// x[1], x[0] = 0, where v is the area of each layer; k[i] = x[i-1] / x[i] scaled to the
// integer draw (k[0] for the base layer r f(r) / v), w[i] = x[i] / scale (w[0] = v / f(r) /
// scale), f[i] = f(x[i]).
//
// Normal (f = exp(-x^2/2), scale 2^52): NumPy's tables are this recursion in double with
// r = 3.6541528853610087963519472518 and v = 0.0049286732339746519, rounded to nearest,
// except for one value: its exp(-x[38]^2/2) is one ulp above the correctly rounded result
// that glibc returns (the exact value lies 0.498 ulp above glibc's; the tables were made with
// a libm that rounded it up), which x[37] and below inherit. Reproducing that one rounding
// gives all 768 values bit for bit.
//
// Exponential (f = exp(-x), scale 2^53): NumPy's w and f are the correctly rounded values
// of the recursion carried out beyond double precision with r = 7.6971174701310497140446280481
// and v = (r + 1) exp(-r); extended precision (long double) reproduces all 512 of them. Its k
// thresholds are not reproduced exactly by any rounding of the ratios we tried: truncating the
// extended-precision ratio gives values 0 to 2 above NumPy's in 131 of 256 layers. A threshold
// only decides for a draw that lands in that gap (probability below 2^-52 per value), so the
// stream agrees with NumPy's in practice; tests/lua/test_np_random.lua checks thousands of
// values.
ZigguratTables make_normal() {
  ZigguratTables t{};
  const double r = 3.6541528853610087963519472518, v = 0.0049286732339746519, scale = 4503599627370496.0;
  auto f = [](double x) { return std::exp(-0.5 * x * x); };
  double x[256];
  double fx[256];
  x[255] = r;
  fx[255] = f(r);
  x[0] = 0;
  fx[0] = 1.0;
  for (int i = 254; i >= 1; --i) {
    x[i] = std::sqrt(-2.0 * std::log(fx[i + 1] + v / x[i + 1]));
    fx[i] = f(x[i]);
    if (i == 38) fx[i] = std::nextafter(fx[i], 2.0);  // the published tables' rounding (above)
  }
  t.k[0] = uint64_t(std::nearbyint(r * f(r) / v * scale));
  t.w[0] = v / f(r) / scale;
  t.f[0] = 1.0;
  for (int i = 1; i < 256; ++i) {
    t.k[i] = uint64_t(std::nearbyint(x[i - 1] / x[i] * scale));
    t.w[i] = x[i] / scale;
    t.f[i] = fx[i];
  }
  return t;
}

ZigguratTables make_exponential() {
  ZigguratTables t{};
  using Q = __float128;
  const Q r = strtoflt128("7.6971174701310497140446280481", nullptr), v = (r + 1) * expq(-r);
  const Q scale = 9007199254740992.0;
  Q x[256];
  x[255] = r;
  x[0] = 0;
  for (int i = 254; i >= 1; --i) x[i] = -logq(expq(-x[i + 1]) + v / x[i + 1]);
  t.k[0] = uint64_t(floorq(r * expq(-r) / v * scale));
  t.w[0] = double(v / expq(-r) / scale);
  t.f[0] = 1.0;
  for (int i = 1; i < 256; ++i) {
    t.k[i] = uint64_t(floorq(x[i - 1] / x[i] * scale));
    t.w[i] = double(x[i] / scale);
    t.f[i] = double(expq(-x[i]));
  }
  return t;
}

constexpr double kNorR = 3.6541528853610087963519472518;
constexpr double kNorInvR = 0.27366123732975827203338247596;
constexpr double kExpR = 7.6971174701310497140446280481;

}  // namespace

const ZigguratTables& normal_ziggurat() {
  static const ZigguratTables t = make_normal();
  return t;
}

const ZigguratTables& exponential_ziggurat() {
  static const ZigguratTables t = make_exponential();
  return t;
}

std::vector<uint64_t> seed_sequence_state(const std::vector<uint32_t>& entropy, int n_words64) {
  uint32_t pool[kPoolSize];
  uint32_t hash_const = kInitA;
  for (int i = 0; i < kPoolSize; ++i)
    pool[i] = hashmix(i < int(entropy.size()) ? entropy[size_t(i)] : 0u, hash_const);
  for (int src = 0; src < kPoolSize; ++src)
    for (int dst = 0; dst < kPoolSize; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  for (size_t src = kPoolSize; src < entropy.size(); ++src)
    for (int dst = 0; dst < kPoolSize; ++dst) pool[dst] = mix(pool[dst], hashmix(entropy[src], hash_const));
  // generate_state: cycle through the pool, each word hashed with a running constant; pairs of
  // 32-bit words make the 64-bit words little-endian.
  std::vector<uint64_t> out(static_cast<size_t>(n_words64));
  uint32_t hc = kInitB;
  for (int i = 0; i < 2 * n_words64; ++i) {
    uint32_t d = pool[i % kPoolSize];
    d ^= hc;
    hc *= kMultB;
    d *= hc;
    d ^= d >> 16;
    out[size_t(i / 2)] |= uint64_t(d) << (32 * (i % 2));
  }
  return out;
}

BitGenerator BitGenerator::pcg64(const std::vector<uint32_t>& entropy) {
  std::vector<uint64_t> s = seed_sequence_state(entropy, 4);
  BitGenerator g;
  g.kind_ = Kind::Pcg64;
  unsigned __int128 initstate = (static_cast<unsigned __int128>(s[0]) << 64) | s[1];
  unsigned __int128 initseq = (static_cast<unsigned __int128>(s[2]) << 64) | s[3];
  g.pcg_inc_ = (initseq << 1) | 1;
  g.pcg_state_ = 0;
  g.pcg_state_ = g.pcg_state_ * kPcgMult + g.pcg_inc_;
  g.pcg_state_ += initstate;
  g.pcg_state_ = g.pcg_state_ * kPcgMult + g.pcg_inc_;
  return g;
}

BitGenerator BitGenerator::mt19937(uint32_t seed) {
  BitGenerator g;
  g.kind_ = Kind::Mt19937;
  for (int i = 0; i < 624; ++i) {
    g.mt_[i] = seed;
    seed = 1812433253u * (seed ^ (seed >> 30)) + uint32_t(i + 1);
  }
  g.mt_pos_ = 624;
  return g;
}

BitGenerator BitGenerator::mt19937_state(const std::vector<uint32_t>& key) {
  BitGenerator g;
  g.kind_ = Kind::Mt19937;
  for (int i = 0; i < 624; ++i) g.mt_[i] = key[size_t(i)];
  g.mt_[0] = 0x80000000u;  // a nonzero state, as NumPy does for seed=None
  g.mt_pos_ = 624;
  return g;
}

void BitGenerator::mt_generate() {
  constexpr int N = 624, M = 397;
  auto twist = [&](int i, int next, int far) {
    uint32_t y = (mt_[i] & 0x80000000u) | (mt_[next] & 0x7fffffffu);
    mt_[i] = mt_[far] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
  };
  for (int i = 0; i < N; ++i) twist(i, (i + 1) % N, (i + M) % N);
  mt_pos_ = 0;
}

uint32_t BitGenerator::next32() {
  if (kind_ == Kind::Pcg64) {
    if (has_uint32_) {
      has_uint32_ = false;
      return uinteger_;
    }
    uint64_t v = next64();
    has_uint32_ = true;
    uinteger_ = uint32_t(v >> 32);
    return uint32_t(v);
  }
  if (mt_pos_ == 624) mt_generate();
  uint32_t y = mt_[mt_pos_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint64_t BitGenerator::next64() {
  if (kind_ == Kind::Pcg64) {
    pcg_state_ = pcg_state_ * kPcgMult + pcg_inc_;
    uint64_t hi = uint64_t(pcg_state_ >> 64), lo = uint64_t(pcg_state_);
    return rotr64(hi ^ lo, unsigned(pcg_state_ >> 122));
  }
  uint64_t hi = next32();
  return (hi << 32) | next32();
}

double BitGenerator::next_double() {
  if (kind_ == Kind::Pcg64) return double(next64() >> 11) * (1.0 / 9007199254740992.0);
  int32_t a = int32_t(next32() >> 5);
  int32_t b = int32_t(next32() >> 6);
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

float BitGenerator::next_float() { return float(next32() >> 8) * (1.0f / 16777216.0f); }

void bounded_fill_u64(BitGenerator& g, uint64_t off, uint64_t rng, int64_t n, bool masked, uint64_t* out) {
  if (rng != 0 && rng < 0xFFFFFFFFull) {  // one 32-bit fill (NumPy shares its state across values)
    Buffered<uint32_t> src{g};
    for (int64_t i = 0; i < n; ++i)
      out[i] = off + (masked ? masked_narrow<uint32_t>(src, uint32_t(rng))
                             : lemire_narrow<uint32_t, uint64_t>(src, uint32_t(rng)));
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = off + bounded64_one(g, rng, masked);
}

void bounded_fill_u32(BitGenerator& g, uint32_t off, uint32_t rng, int64_t n, bool masked, uint32_t* out) {
  bounded_fill_narrow<uint32_t, uint64_t>(g, off, rng, n, masked, out);
}
void bounded_fill_u16(BitGenerator& g, uint16_t off, uint16_t rng, int64_t n, bool masked, uint16_t* out) {
  bounded_fill_narrow<uint16_t, uint32_t>(g, off, rng, n, masked, out);
}
void bounded_fill_u8(BitGenerator& g, uint8_t off, uint8_t rng, int64_t n, bool masked, uint8_t* out) {
  bounded_fill_narrow<uint8_t, uint16_t>(g, off, rng, n, masked, out);
}

// Bools take one bit of a 32-bit draw each (NumPy ignores masked for bools).
void bounded_fill_bool(BitGenerator& g, bool off, bool rng, int64_t n, bool* out) {
  uint32_t buf = 0;
  int left = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!rng) {
      out[i] = off;
      continue;
    }
    if (left == 0) {
      buf = g.next32();
      left = 31;
    } else {
      buf >>= 1;
      --left;
    }
    out[i] = (buf & 1u) != 0;
  }
}

uint64_t bounded_u64(BitGenerator& g, uint64_t rng) { return bounded64_one(g, rng, false); }

uint64_t random_interval(BitGenerator& g, uint64_t max) {
  if (max == 0) return 0;
  const uint64_t mask = smear_mask(max);
  uint64_t v;
  if (max <= 0xFFFFFFFFull) {
    while ((v = (g.next32() & mask)) > max) {
    }
  } else {
    while ((v = (g.next64() & mask)) > max) {
    }
  }
  return v;
}

double standard_normal(BitGenerator& g) {
  const ZigguratTables& z = normal_ziggurat();
  for (;;) {
    uint64_t r = g.next64();
    const int idx = int(r & 0xff);
    r >>= 8;
    const bool negative = r & 1u;
    const uint64_t rabs = (r >> 1) & 0x000fffffffffffffull;
    double x = double(rabs) * z.w[idx];
    if (negative) x = -x;
    if (rabs < z.k[idx]) return x;
    if (idx == 0) {  // the tail beyond r, by Marsaglia's exponential rejection
      for (;;) {
        const double xx = -kNorInvR * std::log1p(-g.next_double());
        const double yy = -std::log1p(-g.next_double());
        if (yy + yy > xx * xx) return ((rabs >> 8) & 1u) ? -(kNorR + xx) : kNorR + xx;
      }
    }
    if ((z.f[idx - 1] - z.f[idx]) * g.next_double() + z.f[idx] < std::exp(-0.5 * x * x)) return x;
  }
}

double standard_exponential(BitGenerator& g) {
  const ZigguratTables& z = exponential_ziggurat();
  for (;;) {
    uint64_t r = g.next64() >> 3;
    const int idx = int(r & 0xff);
    r >>= 8;
    const double x = double(r) * z.w[idx];
    if (r < z.k[idx]) return x;
    if (idx == 0) return kExpR - std::log1p(-g.next_double());
    if ((z.f[idx - 1] - z.f[idx]) * g.next_double() + z.f[idx] < std::exp(-x)) return x;
  }
}

double legacy_gauss(BitGenerator& g) {
  if (g.has_gauss) {
    g.has_gauss = false;
    const double v = g.gauss;
    g.gauss = 0.0;
    return v;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * g.next_double() - 1.0;
    x2 = 2.0 * g.next_double() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  g.gauss = f * x1;
  g.has_gauss = true;
  return f * x2;
}

double uniform(BitGenerator& g, double low, double range) { return low + range * g.next_double(); }
double normal(BitGenerator& g, double loc, double scale) { return loc + scale * standard_normal(g); }
double legacy_normal(BitGenerator& g, double loc, double scale) { return loc + scale * legacy_gauss(g); }

Tensor empty_for(const char* op, const Dims& shape, DType dtype) {
  try {
    return Tensor::empty(shape, dtype, {}, op);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(op) + ": " + e.what());
  }
}

Tensor shuffled_order(BitGenerator& g, int64_t n, const char* op) {
  Tensor t = empty_for(op, {n}, DType::Int64);
  int64_t* order = t.data<int64_t>();
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int64_t i = n - 1; i >= 1; --i) std::swap(order[i], order[random_interval(g, uint64_t(i))]);
  return t;
}

void choice_without_replacement(BitGenerator& g, int64_t pop, int64_t size, bool shuffle, int64_t* out,
                                const char* op) {
  // The shuffles of choice draw with Lemire's method, unlike the other shuffles.
  auto shuffle_from = [&](int64_t* v, int64_t n, int64_t first) {
    for (int64_t i = n - 1; i >= first; --i) std::swap(v[i], v[bounded_u64(g, uint64_t(i))]);
  };
  const int64_t cutoff = shuffle ? 50 : 20;
  if (pop > 10000 && size > pop / cutoff) {  // a tail shuffle of 0..pop-1
    Tensor all = empty_for(op, {pop}, DType::Int64);
    int64_t* a = all.data<int64_t>();
    for (int64_t i = 0; i < pop; ++i) a[i] = i;
    shuffle_from(a, pop, std::max<int64_t>(pop - size, 1));
    std::copy(a + (pop - size), a + pop, out);
    return;
  }
  // Floyd's algorithm with an open-addressing hash set of the picks (-1: empty).
  const uint64_t mask = smear_mask(uint64_t(1.2 * double(size)));
  Tensor set_t = empty_for(op, {int64_t(mask + 1)}, DType::Int64);
  int64_t* set = set_t.data<int64_t>();
  std::fill(set, set + mask + 1, int64_t(-1));
  for (int64_t j = pop - size; j < pop; ++j) {
    const int64_t val = int64_t(bounded_u64(g, uint64_t(j)));
    uint64_t loc = uint64_t(val) & mask;
    while (set[loc] != -1 && set[loc] != val) loc = (loc + 1) & mask;
    int64_t chosen = val;
    if (set[loc] != -1) {  // val taken: j itself is new
      loc = uint64_t(j) & mask;
      while (set[loc] != -1) loc = (loc + 1) & mask;
      chosen = j;
    }
    set[loc] = chosen;
    out[j - pop + size] = chosen;
  }
  if (shuffle) shuffle_from(out, size, 1);
}

}  // namespace tide::nprandom
