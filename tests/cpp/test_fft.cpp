// The FFT module (libtide_fft.so on FFTW) through its C table: c2c both ways, r2c and c2r in
// float and double against a naive DFT in long double, for lengths 1, 2, primes, 1000 and
// powers of two; strided axes and batches of any layout; in-place and misaligned buffers
// (which need their own plans); the plan cache; concurrent calls; the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "../../tensor/error.hpp"
#include "../../tensor/fft/engine.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::contains;
using tide::test::error_of;

namespace {

using cld = std::complex<long double>;

// Deterministic values in [-1, 1).
std::vector<double> noise(size_t n, uint64_t seed) {
  std::vector<double> v(n);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (double& x : v) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    x = 2 * double(s >> 11) / double(1ULL << 53) - 1;
  }
  return v;
}

// sum_j x[j] exp(sign 2 pi i jk/n), computed directly.
std::vector<cld> naive_dft(const std::vector<cld>& x, int sign) {
  size_t n = x.size();
  std::vector<cld> y(n);
  const long double two_pi = 6.283185307179586476925286766559L;
  for (size_t k = 0; k < n; ++k) {
    cld acc = 0;
    for (size_t j = 0; j < n; ++j) {
      long double angle = sign * two_pi * (long double)((j * k) % n) / (long double)n;
      acc += x[j] * cld(std::cos(angle), std::sin(angle));
    }
    y[k] = acc;
  }
  return y;
}

template <typename R>
constexpr TideFftPrecision precision_of() {
  return sizeof(R) == sizeof(double) ? TIDE_FFT_DOUBLE : TIDE_FFT_FLOAT;
}

// The error bound for length n with inputs in [-1, 1): a few ulps times log n of sum |x|.
template <typename R>
long double tolerance(size_t n) {
  long double eps = sizeof(R) == sizeof(double) ? 2.2e-16L : 1.2e-7L;
  return 8 * eps * (std::log2((long double)n) + 1) * (long double)n;
}

#define SKIP_WITHOUT_MODULE()                                                        \
  if (!fft::available()) {                                                           \
    MESSAGE("skipped: " << fft::unavailable_reason());                              \
    return;                                                                          \
  }

// c2c of n points, batch of 3 with the transform axis strided (stride 3, the batch index
// innermost: the layout of an FFT along dim 1 of a (n, 3) array), checked both ways.
template <typename R>
void check_c2c(int64_t n) {
  CAPTURE(n);
  const int64_t b = 3;
  std::vector<double> re = noise(size_t(n * b), uint64_t(n)), im = noise(size_t(n * b), uint64_t(n) + 7);
  std::vector<std::complex<R>> in(size_t(n * b)), out(size_t(n * b));
  for (size_t i = 0; i < in.size(); ++i) in[i] = {R(re[i]), R(im[i])};
  for (int sign : {-1, 1}) {
    fft::execute("test", TIDE_FFT_C2C, precision_of<R>(), sign, {n, b, b}, {{b, 1, 1}}, in.data(), out.data());
    for (int64_t j = 0; j < b; ++j) {
      std::vector<cld> x(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) x[size_t(i)] = cld(in[size_t(i * b + j)].real(), in[size_t(i * b + j)].imag());
      std::vector<cld> want = naive_dft(x, sign);
      long double worst = 0;
      for (int64_t k = 0; k < n; ++k) {
        cld got(out[size_t(k * b + j)].real(), out[size_t(k * b + j)].imag());
        worst = std::max(worst, std::abs(got - want[size_t(k)]));
      }
      CHECK(worst <= tolerance<R>(size_t(n)));
    }
  }
}

// r2c of n real points (contiguous rows of a batch of 2) to n/2+1 frequencies, then c2r back
// to n * x.
template <typename R>
void check_real(int64_t n) {
  CAPTURE(n);
  const int64_t b = 2, h = n / 2 + 1;
  std::vector<double> v = noise(size_t(n * b), uint64_t(n) + 3);
  std::vector<R> x(v.begin(), v.end()), back(size_t(n * b));
  std::vector<std::complex<R>> spec(size_t(h * b));
  fft::execute("test", TIDE_FFT_R2C, precision_of<R>(), -1, {n, 1, 1}, {{b, n, h}}, x.data(), spec.data());
  for (int64_t j = 0; j < b; ++j) {
    std::vector<cld> xs(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) xs[size_t(i)] = x[size_t(j * n + i)];
    std::vector<cld> want = naive_dft(xs, -1);
    long double worst = 0;
    for (int64_t k = 0; k < h; ++k) {
      std::complex<R> g = spec[size_t(j * h + k)];
      worst = std::max(worst, std::abs(cld(g.real(), g.imag()) - want[size_t(k)]));
    }
    CHECK(worst <= tolerance<R>(size_t(n)));
  }
  fft::execute("test", TIDE_FFT_C2R, precision_of<R>(), 1, {n, 1, 1}, {{b, h, n}}, spec.data(), back.data());
  long double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs((long double)back[i] - (long double)n * x[i]));
  CHECK(worst <= tolerance<R>(size_t(n)));
}

const int64_t kLengths[] = {1, 2, 3, 7, 8, 97, 128, 1000, 1024};

}  // namespace

TEST_CASE("fft module: c2c forward and backward against a naive DFT") {
  SKIP_WITHOUT_MODULE();
  for (int64_t n : kLengths) {
    check_c2c<double>(n);
    check_c2c<float>(n);
  }
}

TEST_CASE("fft module: r2c and c2r against a naive DFT") {
  SKIP_WITHOUT_MODULE();
  for (int64_t n : kLengths) {
    check_real<double>(n);
    check_real<float>(n);
  }
}

TEST_CASE("fft module: two batch dims with negative and zero strides, in place, misaligned") {
  SKIP_WITHOUT_MODULE();
  // A (2, 3, 5) complex array transformed along its last dim, the rows read in reverse
  // (a negative stride for the first batch dim), written to a (2, 3, 5) output.
  const int64_t n = 5;
  std::vector<double> v = noise(60, 11);
  std::vector<std::complex<double>> in(30), out(30);
  for (size_t i = 0; i < 30; ++i) in[i] = {v[2 * i], v[2 * i + 1]};
  std::vector<TideFftDim> batch = {{2, -15, 15}, {3, 5, 5}};
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, -1, {n, 1, 1}, batch, in.data() + 15, out.data());
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      std::vector<cld> x(5);
      for (int k = 0; k < 5; ++k) {
        std::complex<double> c = in[size_t((1 - i) * 15 + j * 5 + k)];
        x[size_t(k)] = cld(c.real(), c.imag());
      }
      std::vector<cld> want = naive_dft(x, -1);
      for (int k = 0; k < 5; ++k) {
        std::complex<double> g = out[size_t(i * 15 + j * 5 + k)];
        CHECK(std::abs(cld(g.real(), g.imag()) - want[size_t(k)]) <= tolerance<double>(5));
      }
    }
  // A zero batch stride on the input (a broadcast row) transforms the same row each time.
  std::vector<std::complex<double>> out2(15);
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, -1, {n, 1, 1}, {{3, 0, 5}}, in.data(), out2.data());
  for (int j = 1; j < 3; ++j)
    for (int k = 0; k < 5; ++k) CHECK(out2[size_t(j * 5 + k)] == out2[size_t(k)]);

  // In place, and on a buffer one float off FFTW's SIMD alignment: the same values as out of
  // place on an aligned buffer (each gets its own plan).
  std::vector<std::complex<float>> a(65), ref(64);
  std::vector<double> w = noise(128, 5);
  for (size_t i = 0; i < 64; ++i) a[i] = {float(w[2 * i]), float(w[2 * i + 1])};
  std::vector<std::complex<float>> orig(a.begin(), a.begin() + 64);
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_FLOAT, -1, {64, 1, 1}, {}, orig.data(), ref.data());
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_FLOAT, -1, {64, 1, 1}, {}, a.data(), a.data());
  for (size_t i = 0; i < 64; ++i) CHECK(a[i] == ref[i]);
  float* shifted = reinterpret_cast<float*>(a.data()) + 1;  // 4 bytes off
  std::copy(reinterpret_cast<float*>(orig.data()), reinterpret_cast<float*>(orig.data()) + 128, shifted);
  std::vector<std::complex<float>> out3(64);
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_FLOAT, -1, {64, 1, 1}, {}, shifted, out3.data());
  for (size_t i = 0; i < 64; ++i) CHECK(out3[i] == ref[i]);
}

TEST_CASE("fft module: plans are cached by problem, concurrent calls agree") {
  SKIP_WITHOUT_MODULE();
  std::vector<std::complex<double>> in(256, {1.0, 0.5}), out(256);
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, 1, {256, 1, 1}, {}, in.data(), out.data());
  size_t plans = fft::cached_plans();
  CHECK(plans >= 1);
  std::vector<std::complex<double>> in2(256, {2.0, 0.0}), out2(256);
  fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, 1, {256, 1, 1}, {}, in2.data(), out2.data());
  CHECK(fft::cached_plans() == plans);  // same problem and alignment: the same plan
  CHECK(out2[0] == std::complex<double>(512, 0));

  // Four threads, each its own lengths (planning under the lock, executing at once).
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &failures] {
      for (int64_t n = 60 + t; n < 200; n += 4) {
        std::vector<std::complex<double>> x(static_cast<size_t>(n), {1.0, 0.0}), y(static_cast<size_t>(n));
        fft::execute("test", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, -1, {n, 1, 1}, {}, x.data(), y.data());
        if (std::abs(y[0] - std::complex<double>(double(n), 0)) > 1e-9 || std::abs(y[1]) > 1e-9)
          failures[size_t(t)] = "wrong value for n = " + std::to_string(n);
      }
    });
  for (auto& th : threads) th.join();
  for (const std::string& f : failures) CHECK(f == "");
  CHECK(fft::cached_plans() <= 64);  // bounded: the oldest plans were evicted
}

TEST_CASE("fft module: bad requests are errors naming the op") {
  SKIP_WITHOUT_MODULE();
  std::vector<std::complex<double>> in(8), out(8);
  CHECK(error_of([&] {
          fft::execute("fft.fft", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, -1, {0, 1, 1}, {}, in.data(), out.data());
        }) == "fft.fft: the transform length must be at least 1");
  CHECK(error_of([&] {
          fft::execute("fft.rfft", TIDE_FFT_R2C, TIDE_FFT_DOUBLE, 1, {8, 1, 1}, {}, in.data(), out.data());
        }) == "fft.rfft: r2c is forward (sign -1) and c2r backward (+1)");
  CHECK(error_of([&] {
          fft::execute("fft.fft", TIDE_FFT_C2C, TIDE_FFT_DOUBLE, -1, {8, 1, 1}, {{0, 8, 8}}, in.data(), out.data());
        }) == "fft.fft: a batch dim has length 0");
  CHECK(error_of([&] {
          fft::execute("fft.irfft", TIDE_FFT_C2R, TIDE_FFT_DOUBLE, 1, {8, 1, 1}, {}, in.data(), in.data());
        }) == "fft.irfft: r2c and c2r run out of place");
}
