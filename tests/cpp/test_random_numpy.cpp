// NumPy's random streams (tensor/random_numpy.hpp): the seeding and the raw draws against
// values printed by NumPy 1.24, and the computed ziggurat tables against entries of NumPy's
// published tables (numpy/random/src/distributions/ziggurat_constants.h). The samplers are
// compared with NumPy in tests/lua/test_np_random.lua.
#include <doctest/doctest.h>

#include "../../tensor/random_numpy.hpp"

using namespace tide::nprandom;

TEST_CASE("SeedSequence(seed).generate_state(4, np.uint64) as NumPy") {
  // np.random.SeedSequence(0).generate_state(4, np.uint64)
  CHECK(seed_sequence_state({0}, 4) ==
        std::vector<uint64_t>{0xdb2cd7e7b0f478beull, 0xabf4641a2c71ba49ull, 0x20c6ed6d9d7b8d41ull, 0x2c4099de223c39d4ull});
  // a seed of two words: 2**40 + 3
  CHECK(seed_sequence_state({3, 256}, 4) ==
        std::vector<uint64_t>{0x5418c9b7a64674f4ull, 0x6b87af38305bb452ull, 0x67a779a86253d291ull, 0x35c14f1ed476091full});
}

TEST_CASE("raw draws: PCG64 and MT19937 as NumPy") {
  BitGenerator pcg = BitGenerator::pcg64({42});  // np.random.PCG64(42).random_raw()
  CHECK(pcg.next64() == 0xc621fbcd16d92688ull);
  CHECK(pcg.next64() == 0x705a5661a791ffc1ull);
  BitGenerator mt = BitGenerator::mt19937(5489);  // the reference implementation's first outputs
  CHECK(mt.next32() == 3499211612u);
  CHECK(mt.next32() == 581869302u);
}

TEST_CASE("the ziggurat tables computed from their construction match NumPy's") {
  const ZigguratTables& n = normal_ziggurat();
  CHECK(n.k[0] == 0x000EF33D8025EF6Aull);
  CHECK(n.k[1] == 0);
  CHECK(n.k[2] == 0x000C08BE98FBC6A8ull);
  CHECK(n.k[37] == 0x000FD38E4FF0C91Eull);
  CHECK(n.w[0] == 8.68362706080130616677e-16);
  CHECK(n.w[1] == 4.779330175727737e-17);
  CHECK(n.w[37] == 1.9390512930625104e-16);  // below the layer with the rounded-up exp
  CHECK(n.f[37] == 0.6829721616449949);
  CHECK(n.f[38] == 0.6773880362187735);  // the rounded-up exp itself
  CHECK(n.f[255] == 1.26028593049859797236e-03);
  const ZigguratTables& e = exponential_ziggurat();
  CHECK(e.w[1] == 7.089014243955414e-18);
  CHECK(e.w[255] == 8.545517038584027e-16);
  CHECK(e.f[2] == 0.9004699299257465);
  CHECK(e.f[114] == 0.2229757680581202);
  // The thresholds: NumPy's, or one above (random_numpy.cpp says why that is harmless).
  CHECK(e.k[0] - 0x001C5214272497C6ull <= 1);
  CHECK(e.k[2] - 0x00137D5BD79C317Eull <= 1);
}
