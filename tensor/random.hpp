// Random numbers: the Philox4x32-10 counter-based generator (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC 2011) and the one global Generator.
//
// Every value of a draw is a pure function of (seed, offset, element index), so the numbers
// do not depend on the thread count, on how a loop is chunked, or on the device: a CUDA kernel
// that includes this header and calls the same TIDE_HOST_DEVICE functions produces the same
// values. THE SCHEME (the CUDA backend must reproduce it exactly):
//
//   key     = {lo32(seed), hi32(seed)}
//   block b = philox4x32_10(counter = {lo32(b), hi32(b), 0, 0}, key) -> 4 words w[0..3]
//   A draw of n elements that takes W words per element (W = 1 or 2) starts at the
//   generator's offset O (counted in blocks). Element i (row-major logical index) uses the W
//   consecutive words starting at word (i*W) % 4 of block O + (i*W) / 4. After the draw the
//   generator's offset becomes O + ceil(n*W / 4).
//
//   uniform [0,1):   float32:  1 word,  (w0 >> 8) * 2^-24              (24 bits)
//                    float16:  1 word,  (w0 >> 21) * 2^-11             (11 bits)
//                    bfloat16: 1 word,  (w0 >> 24) * 2^-8              (8 bits)
//                    float64:  2 words, (((w0 << 32) | w1) >> 11) * 2^-53  (53 bits)
//                    Each is exact in its dtype, so the value is < 1 after the cast.
//   uniform_(a, b):  a + (b - a) * u computed in double and cast to the dtype; a result that
//                    rounds up to b becomes a (the interval stays half-open).
//   normal:          Box-Muller on one block per pair of elements: element i uses block
//                    O + i/2 (so the offset advances by ceil(n/2) blocks).
//                    u1 = 1 - U53(w0, w1) in (0, 1], u2 = U53(w2, w3) in [0, 1),
//                    r = sqrt(-2 log u1), theta = 2 pi u2 (in double);
//                    even i: r * cos(theta), odd i: r * sin(theta).
//                    normal_(mean, std) gives mean + std * z in double, then cast. float32
//                    values are the float64 ones rounded, so CPU and CUDA agree for float32
//                    except when a double log/sin/cos differs in its last bit right at a float
//                    rounding boundary (vanishingly rare); float64 may differ in the last bits.
//   randint [lo,hi): 2 words, lo + (((w0 << 32) | w1) mod (hi - lo)), in 64-bit arithmetic.
//   randperm(n):     2 words per element; r_j = (w0 << 32 | w1) of element j. Start from
//                    p = {1..n}; for j = n-1 down to 1: swap p[j] and p[r_j mod (j+1)]
//                    (Fisher-Yates, 0-based positions, 1-based values).
//   multinomial:     2 words per element, u = U53(w0, w1) in [0, 1); weights in double.
//                    With replacement, element r*n + j is sample j of row r: the first
//                    category c whose running sum of weights exceeds u * (row total).
//                    Without, element r*C + c belongs to category c of row r (C categories):
//                    key = log(1 - u) / weight (-inf for a zero weight), and the n categories
//                    with the largest keys, largest first, ties to the lower category
//                    (Efraimidis-Spirakis weighted sampling without replacement).
#pragma once
#include <cmath>
#include <cstdint>
#include <mutex>

#include "half.hpp"

namespace tide {

namespace philox {
constexpr uint32_t kM0 = 0xD2511F53u;  // multipliers
constexpr uint32_t kM1 = 0xCD9E8D57u;
constexpr uint32_t kW0 = 0x9E3779B9u;  // Weyl key increments (golden ratio, sqrt(3) - 1)
constexpr uint32_t kW1 = 0xBB67AE85u;

struct Words {
  uint32_t w[4];
};

// Philox4x32 with 10 rounds: ten S-P rounds, the key bumped by (W0, W1) between rounds.
TIDE_HOST_DEVICE inline Words philox4x32_10(uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3,
                                            uint32_t k0, uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += kW0;
      k1 += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * c0;
    uint64_t p1 = uint64_t(kM1) * c2;
    uint32_t hi0 = uint32_t(p0 >> 32), lo0 = uint32_t(p0);
    uint32_t hi1 = uint32_t(p1 >> 32), lo1 = uint32_t(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  return Words{{c0, c1, c2, c3}};
}

// Block b of the stream of a seed: counter {lo(b), hi(b), 0, 0}, key {lo(seed), hi(seed)}.
TIDE_HOST_DEVICE inline Words block(uint64_t seed, uint64_t b) {
  return philox4x32_10(uint32_t(b), uint32_t(b >> 32), 0u, 0u, uint32_t(seed), uint32_t(seed >> 32));
}

// Uniform [0,1) from the top `bits` bits of one word (bits <= 24), exact in float.
TIDE_HOST_DEVICE inline float uniform_bits(uint32_t w, int bits) {
  return float(w >> (32 - bits)) * (1.0f / float(1u << bits));
}
TIDE_HOST_DEVICE inline double uniform53(uint32_t hi, uint32_t lo) {
  return double(((uint64_t(hi) << 32) | lo) >> 11) * (1.0 / 9007199254740992.0);  // 2^-53
}
// Words per element of a uniform draw of float type T: two for double's 53 bits, one for the
// narrower floats (every backend and the draw's reservation use this).
template <typename T>
TIDE_HOST_DEVICE constexpr int uniform_words() {
  return sizeof(T) == 8 ? 2 : 1;
}
// Box-Muller on one block (see the scheme above): `odd` picks the sine value.
TIDE_HOST_DEVICE inline double normal_from_words(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                                 bool odd) {
  double u1 = 1.0 - uniform53(w0, w1);  // (0, 1]: log never sees 0
  double u2 = uniform53(w2, w3);
  const double two_pi = 6.283185307179586476925286766559;
  double r = ::sqrt(-2.0 * ::log(u1));
  double theta = two_pi * u2;
  return odd ? r * ::sin(theta) : r * ::cos(theta);
}
// Both values of a block at once (the CPU kernel's fast path); equal to the two calls above.
TIDE_HOST_DEVICE inline void normal_pair_from_words(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3,
                                                    double& z_even, double& z_odd) {
  double u1 = 1.0 - uniform53(w0, w1);
  double u2 = uniform53(w2, w3);
  const double two_pi = 6.283185307179586476925286766559;
  double r = ::sqrt(-2.0 * ::log(u1));
  double theta = two_pi * u2;
  z_even = r * ::cos(theta);
  z_odd = r * ::sin(theta);
}
}  // namespace philox

// The default seed, fixed so that runs are reproducible without manual_seed (PyTorch instead
// seeds from the clock at startup); the number is the one torch's default CPU generator uses.
constexpr uint64_t kDefaultSeed = 67280421310721ull;

// A Philox stream: a seed and the offset (in 128-bit blocks) of the next unused block.
// Thread-safe: draws reserve their blocks under a mutex and then fill without it.
class Generator {
 public:
  explicit Generator(uint64_t seed = kDefaultSeed) : seed_(seed) {}

  // Sets the seed and restarts the stream (offset 0).
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  uint64_t offset() const;
  void set_state(uint64_t seed, uint64_t offset);

  struct Draw {
    uint64_t seed;
    uint64_t offset;  // first block of the draw
  };
  // Reserves the blocks of a draw of n elements taking `words` words each (1, 2 or 4):
  // ceil(n * words / 4) blocks; returns the seed and the first block.
  Draw reserve(int64_t n, int words);

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The process-wide generator used by rand/randn/randint/randperm/uniform_/normal_ and
// np.random.*; manual_seed reseeds it.
Generator& default_generator();
void manual_seed(uint64_t seed);
// While set (not nullptr), default_generator() on the calling thread is `g`: an embedded
// interpreter's own stream, so that interpreters on different threads draw reproducibly.
// Returns the previous setting.
Generator* set_thread_generator(Generator* g);

}  // namespace tide
