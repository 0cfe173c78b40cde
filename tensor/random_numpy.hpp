// NumPy's random streams, bit for bit: the Generator of np.random.default_rng (SeedSequence ->
// PCG64) and the legacy RandomState behind np.random.* (MT19937), with the samplers NumPy
// builds on them (bounded integers, 53-bit doubles, the 256-layer ziggurats for the normal and
// exponential distributions, the legacy polar Box-Muller, shuffles, choice). Written from the
// algorithms NumPy 1.24 documents and implements (numpy/random/src, _generator.pyx, mtrand.pyx);
// tests/lua/test_np_random.lua compares every sampler with NumPy's output.
//
// This stream is separate from tide's Philox stream (tensor/random.hpp) that torch.rand and
// torch.manual_seed use.
#pragma once
#include <cstdint>
#include <vector>

#include "tensor.hpp"

namespace tide::nprandom {

// NumPy's SeedSequence (pool size 4, no spawn key) for an integer entropy given as its
// little-endian 32-bit words ({0} for 0): the first n 64-bit words of generate_state.
std::vector<uint64_t> seed_sequence_state(const std::vector<uint32_t>& entropy, int n_words64);

// The bit generator of a Generator (PCG64) or of the legacy RandomState (MT19937), with the
// state the samplers keep beside it (PCG64's spare 32-bit half, the legacy cached gaussian).
class BitGenerator {
 public:
  enum class Kind { Pcg64, Mt19937 };
  // PCG64 seeded from SeedSequence(entropy) as np.random.default_rng(seed) does.
  static BitGenerator pcg64(const std::vector<uint32_t>& entropy);
  // MT19937 seeded with init_genrand(seed) as np.random.seed(seed) does.
  static BitGenerator mt19937(uint32_t seed);
  // MT19937 with a state from 624 words (np.random.seed() without a seed: OS entropy).
  static BitGenerator mt19937_state(const std::vector<uint32_t>& key);

  Kind kind() const { return kind_; }
  uint64_t next64();
  uint32_t next32();
  double next_double();  // uniform [0, 1) with 53 bits
  float next_float();    // uniform [0, 1) with 24 bits (next32 >> 8)

  // The legacy gaussian cache (RandomState's has_gauss / gauss).
  bool has_gauss = false;
  double gauss = 0.0;

 private:
  BitGenerator() = default;
  Kind kind_ = Kind::Pcg64;
  // PCG64: a 128-bit LCG with the XSL-RR output; next32 hands out both halves of a draw.
  unsigned __int128 pcg_state_ = 0, pcg_inc_ = 0;
  bool has_uint32_ = false;
  uint32_t uinteger_ = 0;
  // MT19937
  uint32_t mt_[624] = {};
  int mt_pos_ = 624;
  void mt_generate();
};

// Bounded integers in [off, off + rng] (rng inclusive, wrapping arithmetic), NumPy's fills
// for each width: `masked` picks the legacy masked rejection, else Lemire's method. The
// 8- and 16-bit forms cut each 32-bit draw into pieces (a buffer local to one fill).
void bounded_fill_u64(BitGenerator& g, uint64_t off, uint64_t rng, int64_t n, bool masked, uint64_t* out);
void bounded_fill_u32(BitGenerator& g, uint32_t off, uint32_t rng, int64_t n, bool masked, uint32_t* out);
void bounded_fill_u16(BitGenerator& g, uint16_t off, uint16_t rng, int64_t n, bool masked, uint16_t* out);
void bounded_fill_u8(BitGenerator& g, uint8_t off, uint8_t rng, int64_t n, bool masked, uint8_t* out);
void bounded_fill_bool(BitGenerator& g, bool off, bool rng, int64_t n, bool* out);
// One value in [0, rng] by Lemire's method (choice's Floyd sampling and tail shuffle).
uint64_t bounded_u64(BitGenerator& g, uint64_t rng);
// A value in [0, max] by masked rejection (the shuffles' random_interval).
uint64_t random_interval(BitGenerator& g, uint64_t max);

double standard_normal(BitGenerator& g);       // the 256-layer ziggurat (Generator)
double standard_exponential(BitGenerator& g);  // the 256-layer ziggurat (Generator)
double legacy_gauss(BitGenerator& g);          // polar Box-Muller with the cached value
// The scaled forms, rounded as NumPy rounds them (no fused multiply-add):
double uniform(BitGenerator& g, double low, double range);        // low + range * u
double normal(BitGenerator& g, double loc, double scale);         // loc + scale * ziggurat
double legacy_normal(BitGenerator& g, double loc, double scale);  // loc + scale * legacy_gauss

// The swaps of a Fisher-Yates shuffle of n items as NumPy does it: for i = n-1 down to 1,
// swap i with random_interval(i). Returns the resulting order of 0..n-1 (an int64 tensor;
// `op` names the allocation in a memory error).
Tensor shuffled_order(BitGenerator& g, int64_t n, const char* op);

// Generator.choice(pop, size, replace=False) without p: Floyd's sampling through a hash set,
// or a tail shuffle of 0..pop-1 when the sample is a large part of a large population; then
// shuffled when `shuffle`. Writes the 0-based picks to out[0..size).
void choice_without_replacement(BitGenerator& g, int64_t pop, int64_t size, bool shuffle, int64_t* out,
                                const char* op);

// A CPU tensor for the results of `op`; an allocation failure names op.
Tensor empty_for(const char* op, const Dims& shape, DType dtype);

// The ziggurat tables, computed at first use (see random_numpy.cpp); exposed for the tests.
struct ZigguratTables {
  uint64_t k[256];
  double w[256];
  double f[256];
};
const ZigguratTables& normal_ziggurat();
const ZigguratTables& exponential_ziggurat();

}  // namespace tide::nprandom
