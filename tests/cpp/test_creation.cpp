// Tests of the creation family: the Philox generator (known answers from Random123's
// kat_vectors), the random draws (statistics, thread-count independence, the documented
// scheme), ranges, constant fills, and printing checked against strings PyTorch 1.13 printed.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../../tensor/backend.hpp"
#include "../../tensor/ops/creation.hpp"
#include "../../tensor/parallel.hpp"
#include "../../tensor/print.hpp"
#include "../../tensor/random.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::values;

namespace {

template <typename T>
Tensor from_vec(const Dims& shape, const std::vector<T>& v) {
  Tensor t = Tensor::empty(shape, dtype_of<T>());
  REQUIRE(size_t(t.numel()) == v.size());
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(T));
  return t;
}

Tensor from_doubles(const Dims& shape, const std::vector<double>& v, DType dt) {
  Tensor t = Tensor::empty(shape, dt);
  TIDE_DISPATCH_ALL(dt, "test", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (size_t i = 0; i < v.size(); ++i) {
      if constexpr (std::is_same_v<scalar_t, bool>) p[i] = v[i] != 0;
      else if constexpr (std::is_integral_v<scalar_t>) p[i] = scalar_t(int64_t(v[i]));
      else p[i] = scalar_t(compute_t<scalar_t>(v[i]));
    }
  });
  return t;
}

Tensor reshaped(const Tensor& t, const Dims& shape) {
  return t.as_strided(shape, contiguous_strides(shape), t.offset());
}

std::string bytes_of(const Tensor& t) {
  Tensor c = t.contiguous();
  return std::string(static_cast<const char*>(c.data_ptr()), c.nbytes());
}

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct ThreadsGuard {
  int saved = get_num_threads();
  ~ThreadsGuard() { set_num_threads(saved); }
};

}  // namespace

TEST_CASE("philox4x32-10 known answers (Random123 kat_vectors)") {
  auto w = philox::philox4x32_10(0, 0, 0, 0, 0, 0);
  CHECK(w.w[0] == 0x6627e8d5u);
  CHECK(w.w[1] == 0xe169c58du);
  CHECK(w.w[2] == 0xbc57ac4cu);
  CHECK(w.w[3] == 0x9b00dbd8u);
  w = philox::philox4x32_10(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu);
  CHECK(w.w[0] == 0x408f276du);
  CHECK(w.w[1] == 0x41c83b0eu);
  CHECK(w.w[2] == 0xa20bc7c6u);
  CHECK(w.w[3] == 0x6d5451fdu);
  w = philox::philox4x32_10(0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u, 0xa4093822u, 0x299f31d0u);
  CHECK(w.w[0] == 0xd16cfe09u);
  CHECK(w.w[1] == 0x94fdccebu);
  CHECK(w.w[2] == 0x5001e420u);
  CHECK(w.w[3] == 0x24126ea1u);
}

TEST_CASE("generator: seeds, offsets and the default seed") {
  Generator g;
  CHECK(g.seed() == kDefaultSeed);
  CHECK(g.offset() == 0);
  auto d = g.reserve(5, 1);  // 5 words -> 2 blocks
  CHECK(d.offset == 0);
  CHECK(g.offset() == 2);
  d = g.reserve(3, 2);  // 6 words -> 2 blocks
  CHECK(d.offset == 2);
  CHECK(g.offset() == 4);
  g.reserve(3, 4);
  CHECK(g.offset() == 7);
  g.manual_seed(42);
  CHECK(g.seed() == 42);
  CHECK(g.offset() == 0);
}

TEST_CASE("rand/randn/randint follow the documented scheme") {
  Generator g(1234);
  Tensor u = ops::rand({9}, DType::Float32, {}, &g);
  for (int64_t i = 0; i < 9; ++i) {
    auto w = philox::block(1234, uint64_t(i / 4));
    float expect = float(w.w[i % 4] >> 8) * (1.0f / 16777216.0f);
    CHECK(u.data<float>()[i] == expect);
  }
  CHECK(g.offset() == 3);
  Tensor u64 = ops::rand({3}, DType::Float64, {}, &g);  // starts at block 3, 2 words each
  for (int64_t i = 0; i < 3; ++i) {
    auto w = philox::block(1234, 3 + uint64_t(i / 2));
    CHECK(u64.data<double>()[i] == philox::uniform53(w.w[(i % 2) * 2], w.w[(i % 2) * 2 + 1]));
  }
  CHECK(g.offset() == 5);
  Tensor z = ops::randn({3}, DType::Float64, {}, &g);  // blocks 5, 5, 6
  for (int64_t i = 0; i < 3; ++i) {
    auto w = philox::block(1234, 5 + uint64_t(i / 2));
    double u1 = 1.0 - philox::uniform53(w.w[0], w.w[1]), u2 = philox::uniform53(w.w[2], w.w[3]);
    double r = std::sqrt(-2.0 * std::log(u1)), theta = 6.283185307179586 * u2;
    CHECK(z.data<double>()[i] == (i % 2 ? r * std::sin(theta) : r * std::cos(theta)));
  }
  CHECK(g.offset() == 7);
  Tensor zf = ops::randn({2}, DType::Float32, {}, &g);
  auto wz = philox::block(1234, 7);
  CHECK(zf.data<float>()[0] == float(philox::normal_from_words(wz.w[0], wz.w[1], wz.w[2], wz.w[3], false)));
  CHECK(zf.data<float>()[1] == float(philox::normal_from_words(wz.w[0], wz.w[1], wz.w[2], wz.w[3], true)));
  CHECK(g.offset() == 8);
  g.reserve(4, 1);  // block 8
  Tensor r = ops::randint(-5, 5, {2}, DType::Int64, {}, &g);
  auto w = philox::block(1234, 9);
  CHECK(r.data<int64_t>()[0] == -5 + int64_t(((uint64_t(w.w[0]) << 32) | w.w[1]) % 10));
  CHECK(r.data<int64_t>()[1] == -5 + int64_t(((uint64_t(w.w[2]) << 32) | w.w[3]) % 10));
}

TEST_CASE("the pair form of Box-Muller equals the one-value form") {
  for (uint64_t b = 0; b < 20000; ++b) {
    auto w = philox::block(77, b);
    double z0, z1;
    philox::normal_pair_from_words(w.w[0], w.w[1], w.w[2], w.w[3], z0, z1);
    REQUIRE(z0 == philox::normal_from_words(w.w[0], w.w[1], w.w[2], w.w[3], false));
    REQUIRE(z1 == philox::normal_from_words(w.w[0], w.w[1], w.w[2], w.w[3], true));
  }
}

TEST_CASE("draws split into pieces give the numbers of one draw") {
  manual_seed(7);
  Tensor a = ops::rand({8});
  Tensor b = ops::rand({12});
  manual_seed(7);
  Tensor c = ops::rand({20});
  std::vector<double> ab = values(a), bv = values(b), cv = values(c);
  ab.insert(ab.end(), bv.begin(), bv.end());
  CHECK(ab == cv);
  manual_seed(7);
  CHECK(values(ops::rand({8})) == values(a));  // same seed, same numbers
  manual_seed(8);
  CHECK(values(ops::rand({8})) != values(a));
}

TEST_CASE("random values do not depend on the thread count") {
  ThreadsGuard guard;
  // 200001 elements make parallel chunks of an odd length (8001), so chunks start in the
  // middle of a Box-Muller pair.
  const Dims shape{200001};
  auto draw = [&] {
    manual_seed(99);
    std::string s = bytes_of(ops::rand(shape));
    s += bytes_of(ops::randn(shape, DType::Float64));
    s += bytes_of(ops::randn(shape, DType::Float32));
    s += bytes_of(ops::rand(shape, DType::Float64));
    s += bytes_of(ops::randint(0, 1000, shape));
    s += bytes_of(ops::rand(shape, DType::Float16));
    Tensor x = ops::empty({401, 499}, DType::Float32);
    s += bytes_of(ops::normal_(x, 2.0, 3.0));
    s += bytes_of(ops::randperm(100000));
    return s;
  };
  set_num_threads(1);
  std::string one = draw();
  set_num_threads(2);
  std::string two = draw();
  set_num_threads(3);
  std::string three = draw();
  CHECK(one == two);
  CHECK(one == three);
}

TEST_CASE("uniform and normal statistics") {
  manual_seed(2024);
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor u = ops::rand({1000000}, dt);
    std::vector<double> v = values(u);
    double sum = 0, sq = 0, mn = 1, mx = 0;
    for (double x : v) {
      sum += x;
      sq += x * x;
      mn = std::min(mn, x);
      mx = std::max(mx, x);
    }
    double mean = sum / v.size(), var = sq / v.size() - mean * mean;
    CHECK(mean == doctest::Approx(0.5).epsilon(0.005));
    CHECK(var == doctest::Approx(1.0 / 12).epsilon(0.01));
    CHECK(mn >= 0.0);
    CHECK(mx < 1.0);
    CHECK(mn < 1e-4);
    CHECK(mx > 1 - 1e-4);
  }
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor z = ops::randn({1000000}, dt);
    std::vector<double> v = values(z);
    double sum = 0, sq = 0, q = 0;
    for (double x : v) {
      sum += x;
      sq += x * x;
      q += x * x * x * x;
    }
    double mean = sum / v.size(), var = sq / v.size() - mean * mean;
    CHECK(std::abs(mean) < 0.005);
    CHECK(std::sqrt(var) == doctest::Approx(1.0).epsilon(0.005));
    CHECK(q / v.size() == doctest::Approx(3.0).epsilon(0.03));  // normal kurtosis
  }
  Tensor h = ops::rand({100000}, DType::Float16);
  for (double x : values(h)) REQUIRE((x >= 0 && x < 1));
  Tensor bf = ops::rand({100000}, DType::BFloat16);
  for (double x : values(bf)) REQUIRE((x >= 0 && x < 1));
  Tensor n = ops::empty({200000}, DType::Float64);
  ops::normal_(n, 10.0, 0.5);
  double s = 0;
  for (double x : values(n)) s += x;
  CHECK(s / 200000 == doctest::Approx(10.0).epsilon(0.001));
  Tensor uu = ops::empty({200000}, DType::Float32);
  ops::uniform_(uu, -3.0, -2.0);
  for (double x : values(uu)) REQUIRE((x >= -3.0 && x < -2.0));
}

TEST_CASE("in-place fills follow row-major order on any layout") {
  Tensor base = ops::zeros({4, 6});
  Tensor tview = base.as_strided({6, 4}, {1, 6}, 0);  // a transposed view
  manual_seed(5);
  ops::uniform_(tview, 0.0, 1.0);
  manual_seed(5);
  Tensor c = ops::rand({6, 4});
  CHECK(values(tview) == values(c));
  CHECK_THROWS_WITH(ops::normal_(base, 0.0, -1.0), doctest::Contains("normal_: expects std >= 0"));
  CHECK_THROWS_WITH(ops::uniform_(base, 2.0, 1.0), doctest::Contains("uniform_: expects a <= b"));
  Tensor ints = ops::zeros({3}, DType::Int64);
  CHECK_THROWS_WITH(ops::uniform_(ints), doctest::Contains("uniform_: expected a floating-point"));
  CHECK_THROWS_WITH(ops::rand({2}, DType::Int64), doctest::Contains("rand: expected a floating-point dtype, got int64"));
}

TEST_CASE("randint and randperm") {
  manual_seed(3);
  Tensor r = ops::randint(-3, 4, {10000});
  CHECK(r.dtype() == DType::Int64);
  std::set<double> seen;
  for (double x : values(r)) {
    REQUIRE((x >= -3 && x < 4));
    seen.insert(x);
  }
  CHECK(seen.size() == 7);
  CHECK_THROWS_WITH(ops::randint(5, 3, {2}), doctest::Contains("randint: expected low < high, got low=5, high=3"));
  CHECK_THROWS_WITH(ops::randint(0, 300, {2}, DType::UInt8), doctest::Contains("does not fit in uint8"));
  Tensor b = ops::randint(0, 2, {100}, DType::Bool);
  CHECK(b.dtype() == DType::Bool);
  Tensor p = ops::randperm(1000);
  CHECK(p.dtype() == DType::Int64);
  std::vector<double> pv = values(p);
  std::set<double> ps(pv.begin(), pv.end());
  CHECK(ps.size() == 1000);
  CHECK(*ps.begin() == 1);
  CHECK(*ps.rbegin() == 1000);
  bool moved = false;
  for (size_t i = 0; i < pv.size(); ++i) moved = moved || pv[i] != double(i + 1);
  CHECK(moved);
  CHECK(ops::randperm(0).numel() == 0);
  CHECK(values(ops::randperm(1)) == std::vector<double>{1});
  CHECK_THROWS_WITH(ops::randperm(-1), doctest::Contains("randperm: n must be non-negative, got -1"));
  CHECK_THROWS_WITH(ops::randperm(300, DType::Int8), doctest::Contains("too large for int8"));
}

TEST_CASE("arange") {
  Tensor a = ops::arange(Scalar(int64_t(0)), Scalar(int64_t(4)));
  CHECK(a.dtype() == DType::Int64);
  CHECK(values(a) == std::vector<double>{0, 1, 2, 3});
  CHECK(values(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(10)), Scalar(int64_t(3)))) == std::vector<double>{0, 3, 6, 9});
  CHECK(values(ops::arange(Scalar(int64_t(10)), Scalar(int64_t(0)), Scalar(int64_t(-3)))) == std::vector<double>{10, 7, 4, 1});
  CHECK(ops::arange(Scalar(int64_t(3)), Scalar(int64_t(3))).numel() == 0);
  Tensor f = ops::arange(Scalar(0.0), Scalar(1.0), Scalar(0.1));
  CHECK(f.dtype() == DType::Float32);
  REQUIRE(f.numel() == 10);
  // PyTorch 1.13's float32 bits of torch.arange(0, 1, 0.1)
  const uint32_t bits[10] = {0x0, 0x3dcccccd, 0x3e4ccccd, 0x3e99999a, 0x3ecccccd,
                             0x3f000000, 0x3f19999a, 0x3f333333, 0x3f4ccccd, 0x3f666666};
  for (int i = 0; i < 10; ++i) CHECK(f32_bits(f.data<float>()[i]) == bits[i]);
  CHECK(values(ops::arange(Scalar(1.0), Scalar(0.0), Scalar(-0.25))) == std::vector<double>{1, 0.75, 0.5, 0.25});
  CHECK(ops::arange(Scalar(int64_t(0)), Scalar(2.5)).numel() == 3);
  CHECK(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(5)), Scalar(int64_t(1)), DType::Float64).dtype() == DType::Float64);
  CHECK(ops::arange(Scalar(0.0), Scalar(3.0), Scalar(1.0), std::nullopt, {}, DType::Float64).dtype() == DType::Float64);
  CHECK_THROWS_WITH(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(5)), Scalar(int64_t(0))),
                    doctest::Contains("arange: step must be nonzero"));
  CHECK_THROWS_WITH(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(5)), Scalar(int64_t(-1))),
                    doctest::Contains("arange: upper bound and step sign are inconsistent (start=0, end=5, step=-1)"));
  CHECK_THROWS_WITH(ops::arange(Scalar(0.0), Scalar(std::nan(""))), doctest::Contains("arange: unsupported range"));
}

TEST_CASE("linspace, eye, full, zeros, ones") {
  Tensor l = ops::linspace(0.1, 0.7, 13);
  // PyTorch 1.13's float32 bits of torch.linspace(0.1, 0.7, 13)
  const uint32_t bits[13] = {0x3dcccccd, 0x3e19999a, 0x3e4ccccc, 0x3e800000, 0x3e999999, 0x3eb33333, 0x3ecccccd,
                             0x3ee66666, 0x3f000000, 0x3f0ccccd, 0x3f19999a, 0x3f266666, 0x3f333333};
  for (int i = 0; i < 13; ++i) CHECK(f32_bits(l.data<float>()[i]) == bits[i]);
  CHECK(values(ops::linspace(0, 1, 5, DType::Float64)) == std::vector<double>{0, 0.25, 0.5, 0.75, 1});
  CHECK(values(ops::linspace(0, 10, 5, DType::Int64)) == std::vector<double>{0, 2, 5, 7, 10});
  CHECK(values(ops::linspace(3, 1, 1)) == std::vector<double>{3});
  CHECK(ops::linspace(0, 1, 0).numel() == 0);
  CHECK_THROWS_WITH(ops::linspace(0, 1, -1), doctest::Contains("linspace: number of steps must be non-negative, got -1"));

  Tensor e = ops::eye(3, 4);
  CHECK(e.sizes() == Dims{3, 4});
  CHECK(values(e) == std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0});
  CHECK(values(ops::eye(2, -1, DType::Int32, {}, 1)) == std::vector<double>{0, 1, 0, 0});
  CHECK(ops::eye(2).sizes() == Dims{2, 2});

  CHECK(ops::full({2}, Scalar(int64_t(2))).dtype() == DType::Int64);
  CHECK(ops::full({2}, Scalar(true)).dtype() == DType::Bool);
  CHECK(ops::full({2}, Scalar(1.5)).dtype() == DType::Float32);
  CHECK(values(ops::full({2, 2}, Scalar(1.5), DType::Float64)) == std::vector<double>{1.5, 1.5, 1.5, 1.5});
  CHECK(values(ops::zeros({2, 3}, DType::Float16)) == std::vector<double>(6, 0.0));
  CHECK(values(ops::ones({3}, DType::BFloat16)) == std::vector<double>(3, 1.0));
  CHECK(ops::zeros({}).dim() == 0);
  CHECK(ops::zeros({0, 5}).numel() == 0);
  CHECK_THROWS_WITH(ops::zeros({2, -1}), doctest::Contains("zeros: sizes must be non-negative, got -1"));
  Tensor x = ops::ones({2, 3}, DType::Int32);
  CHECK(ops::zeros_like(x).dtype() == DType::Int32);
  CHECK(ops::ones_like(x, DType::Float64).dtype() == DType::Float64);
  CHECK(values(ops::full_like(x, Scalar(7))) == std::vector<double>(6, 7));
  CHECK(ops::rand_like(ops::zeros({4}, DType::Float64)).dtype() == DType::Float64);
  CHECK_THROWS_WITH(ops::rand_like(x), doctest::Contains("rand_like: expected a floating-point dtype, got int32"));
  CHECK_THROWS_WITH(ops::randn_like(x), doctest::Contains("randn_like: expected a floating-point dtype, got int32"));
}

TEST_CASE("creation on a device without a backend is an error naming the op") {
  Device cuda{DeviceType::CUDA, 0};
  if (!cuda_available()) {
    CHECK_THROWS_WITH(ops::zeros({2}, DType::Float32, cuda), doctest::Contains("zeros: "));
    CHECK_THROWS_WITH(ops::rand({2}, DType::Float32, cuda), doctest::Contains("rand: "));
    CHECK_THROWS_WITH(ops::arange(Scalar(int64_t(3)), Scalar(int64_t(4)), Scalar(int64_t(1)), std::nullopt, cuda),
                      doctest::Contains("arange: "));
  }
}

namespace {
struct PrintCase {
  const char* name;
  const char* expected;
};
// Printed by PyTorch 1.13 (repr) for the tensors built in make_print_tensor below.
const PrintCase kPrintCases[] = {
  {"f2x2",
      "tensor([[1., 2.],\n"
      "        [3., 4.]])"},
  {"f2x2frac",
      "tensor([[ 1.5000,  2.2500],\n"
      "        [ 3.0000, -4.0000]])"},
  {"scalar",
      "tensor(3.5000)"},
  {"scalar_int",
      "tensor(7)"},
  {"ints",
      "tensor([  1, -20, 300])"},
  {"bools",
      "tensor([ True, False,  True])"},
  {"f64",
      "tensor([1.5000, 2.5000], dtype=torch.float64)"},
  {"i32",
      "tensor([1, 2], dtype=torch.int32)"},
  {"u8",
      "tensor([  1, 255], dtype=torch.uint8)"},
  {"empty03",
      "tensor([], size=(0, 3))"},
  {"empty0",
      "tensor([])"},
  {"empty_i64",
      "tensor([], dtype=torch.int64)"},
  {"empty_bool",
      "tensor([], size=(2, 0), dtype=torch.bool)"},
  {"small_sci",
      "tensor([1.0000e-05, 1.0000e+00])"},
  {"big_sci",
      "tensor([1.0000e+10, 1.5000e+00])"},
  {"int_sci",
      "tensor([1.0000e+10, 1.0000e+00])"},
  {"ratio_sci",
      "tensor([1.0000e+00, 2.0000e+03])"},
  {"nonfinite",
      "tensor([   nan,    inf,   -inf, 1.5000])"},
  {"nan_int",
      "tensor([nan, 1., 2.])"},
  {"zeros3",
      "tensor([0., 0., 0.])"},
  {"negzero",
      "tensor([-0., 1.])"},
  {"half",
      "tensor([1.5000, 2.0000], dtype=torch.float16)"},
  {"bf16",
      "tensor([0.1001, 2.0000], dtype=torch.bfloat16)"},
  {"arange30",
      "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
      "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
      "        28., 29.])"},
  {"lin30",
      "tensor([0.0000, 0.0345, 0.0690, 0.1034, 0.1379, 0.1724, 0.2069, 0.2414, 0.2759,\n"
      "        0.3103, 0.3448, 0.3793, 0.4138, 0.4483, 0.4828, 0.5172, 0.5517, 0.5862,\n"
      "        0.6207, 0.6552, 0.6897, 0.7241, 0.7586, 0.7931, 0.8276, 0.8621, 0.8966,\n"
      "        0.9310, 0.9655, 1.0000])"},
  {"arange2000",
      "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
      "        1.9990e+03])"},
  {"int2d_sum",
      "tensor([[   0,    1,    2,  ...,   47,   48,   49],\n"
      "        [  50,   51,   52,  ...,   97,   98,   99],\n"
      "        [ 100,  101,  102,  ...,  147,  148,  149],\n"
      "        ...,\n"
      "        [1850, 1851, 1852,  ..., 1897, 1898, 1899],\n"
      "        [1900, 1901, 1902,  ..., 1947, 1948, 1949],\n"
      "        [1950, 1951, 1952,  ..., 1997, 1998, 1999]])"},
  {"f3d_sum",
      "tensor([[[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 2.7000e+01,\n"
      "          2.8000e+01, 2.9000e+01],\n"
      "         [3.0000e+01, 3.1000e+01, 3.2000e+01,  ..., 5.7000e+01,\n"
      "          5.8000e+01, 5.9000e+01],\n"
      "         [6.0000e+01, 6.1000e+01, 6.2000e+01,  ..., 8.7000e+01,\n"
      "          8.8000e+01, 8.9000e+01],\n"
      "         ...,\n"
      "         [2.1000e+02, 2.1100e+02, 2.1200e+02,  ..., 2.3700e+02,\n"
      "          2.3800e+02, 2.3900e+02],\n"
      "         [2.4000e+02, 2.4100e+02, 2.4200e+02,  ..., 2.6700e+02,\n"
      "          2.6800e+02, 2.6900e+02],\n"
      "         [2.7000e+02, 2.7100e+02, 2.7200e+02,  ..., 2.9700e+02,\n"
      "          2.9800e+02, 2.9900e+02]],\n"
      "\n"
      "        [[3.0000e+02, 3.0100e+02, 3.0200e+02,  ..., 3.2700e+02,\n"
      "          3.2800e+02, 3.2900e+02],\n"
      "         [3.3000e+02, 3.3100e+02, 3.3200e+02,  ..., 3.5700e+02,\n"
      "          3.5800e+02, 3.5900e+02],\n"
      "         [3.6000e+02, 3.6100e+02, 3.6200e+02,  ..., 3.8700e+02,\n"
      "          3.8800e+02, 3.8900e+02],\n"
      "         ...,\n"
      "         [5.1000e+02, 5.1100e+02, 5.1200e+02,  ..., 5.3700e+02,\n"
      "          5.3800e+02, 5.3900e+02],\n"
      "         [5.4000e+02, 5.4100e+02, 5.4200e+02,  ..., 5.6700e+02,\n"
      "          5.6800e+02, 5.6900e+02],\n"
      "         [5.7000e+02, 5.7100e+02, 5.7200e+02,  ..., 5.9700e+02,\n"
      "          5.9800e+02, 5.9900e+02]],\n"
      "\n"
      "        [[6.0000e+02, 6.0100e+02, 6.0200e+02,  ..., 6.2700e+02,\n"
      "          6.2800e+02, 6.2900e+02],\n"
      "         [6.3000e+02, 6.3100e+02, 6.3200e+02,  ..., 6.5700e+02,\n"
      "          6.5800e+02, 6.5900e+02],\n"
      "         [6.6000e+02, 6.6100e+02, 6.6200e+02,  ..., 6.8700e+02,\n"
      "          6.8800e+02, 6.8900e+02],\n"
      "         ...,\n"
      "         [8.1000e+02, 8.1100e+02, 8.1200e+02,  ..., 8.3700e+02,\n"
      "          8.3800e+02, 8.3900e+02],\n"
      "         [8.4000e+02, 8.4100e+02, 8.4200e+02,  ..., 8.6700e+02,\n"
      "          8.6800e+02, 8.6900e+02],\n"
      "         [8.7000e+02, 8.7100e+02, 8.7200e+02,  ..., 8.9700e+02,\n"
      "          8.9800e+02, 8.9900e+02]],\n"
      "\n"
      "        ...,\n"
      "\n"
      "        [[2.1000e+03, 2.1010e+03, 2.1020e+03,  ..., 2.1270e+03,\n"
      "          2.1280e+03, 2.1290e+03],\n"
      "         [2.1300e+03, 2.1310e+03, 2.1320e+03,  ..., 2.1570e+03,\n"
      "          2.1580e+03, 2.1590e+03],\n"
      "         [2.1600e+03, 2.1610e+03, 2.1620e+03,  ..., 2.1870e+03,\n"
      "          2.1880e+03, 2.1890e+03],\n"
      "         ...,\n"
      "         [2.3100e+03, 2.3110e+03, 2.3120e+03,  ..., 2.3370e+03,\n"
      "          2.3380e+03, 2.3390e+03],\n"
      "         [2.3400e+03, 2.3410e+03, 2.3420e+03,  ..., 2.3670e+03,\n"
      "          2.3680e+03, 2.3690e+03],\n"
      "         [2.3700e+03, 2.3710e+03, 2.3720e+03,  ..., 2.3970e+03,\n"
      "          2.3980e+03, 2.3990e+03]],\n"
      "\n"
      "        [[2.4000e+03, 2.4010e+03, 2.4020e+03,  ..., 2.4270e+03,\n"
      "          2.4280e+03, 2.4290e+03],\n"
      "         [2.4300e+03, 2.4310e+03, 2.4320e+03,  ..., 2.4570e+03,\n"
      "          2.4580e+03, 2.4590e+03],\n"
      "         [2.4600e+03, 2.4610e+03, 2.4620e+03,  ..., 2.4870e+03,\n"
      "          2.4880e+03, 2.4890e+03],\n"
      "         ...,\n"
      "         [2.6100e+03, 2.6110e+03, 2.6120e+03,  ..., 2.6370e+03,\n"
      "          2.6380e+03, 2.6390e+03],\n"
      "         [2.6400e+03, 2.6410e+03, 2.6420e+03,  ..., 2.6670e+03,\n"
      "          2.6680e+03, 2.6690e+03],\n"
      "         [2.6700e+03, 2.6710e+03, 2.6720e+03,  ..., 2.6970e+03,\n"
      "          2.6980e+03, 2.6990e+03]],\n"
      "\n"
      "        [[2.7000e+03, 2.7010e+03, 2.7020e+03,  ..., 2.7270e+03,\n"
      "          2.7280e+03, 2.7290e+03],\n"
      "         [2.7300e+03, 2.7310e+03, 2.7320e+03,  ..., 2.7570e+03,\n"
      "          2.7580e+03, 2.7590e+03],\n"
      "         [2.7600e+03, 2.7610e+03, 2.7620e+03,  ..., 2.7870e+03,\n"
      "          2.7880e+03, 2.7890e+03],\n"
      "         ...,\n"
      "         [2.9100e+03, 2.9110e+03, 2.9120e+03,  ..., 2.9370e+03,\n"
      "          2.9380e+03, 2.9390e+03],\n"
      "         [2.9400e+03, 2.9410e+03, 2.9420e+03,  ..., 2.9670e+03,\n"
      "          2.9680e+03, 2.9690e+03],\n"
      "         [2.9700e+03, 2.9710e+03, 2.9720e+03,  ..., 2.9970e+03,\n"
      "          2.9980e+03, 2.9990e+03]]])"},
  {"i3d",
      "tensor([[[0, 1],\n"
      "         [2, 3]],\n"
      "\n"
      "        [[4, 5],\n"
      "         [6, 7]]])"},
  {"transposed",
      "tensor([[0., 3.],\n"
      "        [1., 4.],\n"
      "        [2., 5.]])"},
  {"bool2d",
      "tensor([[ True],\n"
      "        [False]])"},
  {"neg_ints_wide",
      "tensor([[-1000,     2],\n"
      "        [    3,     4]])"},
  {"i8",
      "tensor([-5,  3], dtype=torch.int8)"},
  {"f16_sum",
      "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.4970e+03, 1.4980e+03,\n"
      "        1.4990e+03], dtype=torch.float16)"},
  {"np_f64",
      "tensor([1.5000, 2.5000])"},
  {"np_f32",
      "tensor([1.5000, 2.5000], dtype=torch.float32)"},
  {"np_empty_f32",
      "tensor([], dtype=torch.float32)"},
  {"grad",
      "tensor([0.0000, 0.1667, 0.3333, 0.5000, 0.6667, 0.8333, 1.0000],\n"
      "       requires_grad=True)"},
  {"grad_wrap",
      "tensor([0.0000, 0.1000, 0.2000, 0.3000, 0.4000, 0.5000, 0.6000, 0.7000, 0.8000,\n"
      "        0.9000, 1.0000], requires_grad=True)"},
  {"grad_2d",
      "tensor([[1., 1.],\n"
      "        [1., 1.]], dtype=torch.float64, requires_grad=True)"},
};

// The tensor of each case, built the way the PyTorch script built it.
Tensor make_print_tensor(const std::string& n, std::vector<std::string>& suffixes, DType& default_float) {
  const double nan = std::nan(""), inf = INFINITY;
  default_float = DType::Float32;
  using D = std::vector<double>;
  if (n == "f2x2") return from_doubles({2, 2}, D{1, 2, 3, 4}, DType::Float32);
  if (n == "f2x2frac") return from_doubles({2, 2}, D{1.5, 2.25, 3, -4}, DType::Float32);
  if (n == "scalar") return from_doubles({}, D{3.5}, DType::Float32);
  if (n == "scalar_int") return from_doubles({}, D{7}, DType::Int64);
  if (n == "ints") return from_doubles({3}, D{1, -20, 300}, DType::Int64);
  if (n == "bools") return from_doubles({3}, D{1, 0, 1}, DType::Bool);
  if (n == "f64") return from_doubles({2}, D{1.5, 2.5}, DType::Float64);
  if (n == "i32") return from_doubles({2}, D{1, 2}, DType::Int32);
  if (n == "u8") return from_doubles({2}, D{1, 255}, DType::UInt8);
  if (n == "empty03") return ops::zeros({0, 3});
  if (n == "empty0") return ops::zeros({0});
  if (n == "empty_i64") return ops::zeros({0}, DType::Int64);
  if (n == "empty_bool") return ops::zeros({2, 0}, DType::Bool);
  if (n == "small_sci") return from_doubles({2}, D{1e-5, 1.0}, DType::Float32);
  if (n == "big_sci") return from_doubles({2}, D{1e10, 1.5}, DType::Float32);
  if (n == "int_sci") return from_doubles({2}, D{1e10, 1.0}, DType::Float32);
  if (n == "ratio_sci") return from_doubles({2}, D{1, 2000}, DType::Float32);
  if (n == "nonfinite") return from_doubles({4}, D{nan, inf, -inf, 1.5}, DType::Float32);
  if (n == "nan_int") return from_doubles({3}, D{nan, 1, 2}, DType::Float32);
  if (n == "zeros3") return ops::zeros({3});
  if (n == "negzero") return from_doubles({2}, D{-0.0, 1.0}, DType::Float32);
  if (n == "half") return from_doubles({2}, D{1.5, 2}, DType::Float16);
  if (n == "bf16") return from_doubles({2}, D{0.1, 2}, DType::BFloat16);
  if (n == "arange30") return ops::arange(Scalar(0.0), Scalar(30.0));
  if (n == "lin30") return ops::linspace(0, 1, 30);
  if (n == "arange2000") return ops::arange(Scalar(0.0), Scalar(2000.0));
  if (n == "int2d_sum") return reshaped(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(2000))), {40, 50});
  if (n == "f3d_sum") return reshaped(ops::arange(Scalar(0.0), Scalar(3000.0)), {10, 10, 30});
  if (n == "i3d") return reshaped(ops::arange(Scalar(int64_t(0)), Scalar(int64_t(8))), {2, 2, 2});
  if (n == "transposed") return ops::arange(Scalar(0.0), Scalar(6.0)).as_strided({3, 2}, {1, 3}, 0);
  if (n == "bool2d") return from_doubles({2, 1}, D{1, 0}, DType::Bool);
  if (n == "neg_ints_wide") return from_doubles({2, 2}, D{-1000, 2, 3, 4}, DType::Int64);
  if (n == "i8") return from_doubles({2}, D{-5, 3}, DType::Int8);
  if (n == "f16_sum") return ops::arange(Scalar(int64_t(0)), Scalar(int64_t(1500)), Scalar(int64_t(1)), DType::Float16);
  if (n == "np_f64" || n == "np_f32" || n == "np_empty_f32") {
    default_float = DType::Float64;
    if (n == "np_empty_f32") return ops::zeros({0}, DType::Float32);
    return from_doubles({2}, D{1.5, 2.5}, n == "np_f64" ? DType::Float64 : DType::Float32);
  }
  suffixes.push_back("requires_grad=True");
  if (n == "grad") return ops::linspace(0, 1, 7);
  if (n == "grad_wrap") return ops::linspace(0, 1, 11);
  if (n == "grad_2d") return ops::ones({2, 2}, DType::Float64);
  FAIL("unknown case " << n);
  return {};
}
}  // namespace

TEST_CASE("printing matches PyTorch 1.13") {
  for (const PrintCase& c : kPrintCases) {
    std::vector<std::string> suffixes;
    DType def;
    Tensor t = make_print_tensor(c.name, suffixes, def);
    INFO("case ", c.name);
    CHECK(format_tensor(t, def, suffixes) == std::string(c.expected));
  }
}

TEST_CASE("printing: device suffix and wide values") {
  Tensor big = from_doubles({2}, {123456.789, -0.5}, DType::Float64);
  CHECK(format_tensor(big, DType::Float64) == "tensor([ 1.2346e+05, -5.0000e-01])");
  CHECK(format_tensor(Tensor(), DType::Float32) == "tensor(<undefined>)");
}
