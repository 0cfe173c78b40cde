// Reductions, scans and sorting: values on small cases, strided views against a naive
// reference, bit-identical results across thread counts, empty tensors and NaN.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "../../tensor/ops/reduce.hpp"
#include "../../tensor/parallel.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::values;
using tide::test::error_of;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

Tensor make(const std::vector<double>& v, const Dims& shape, DType dt = DType::Float32) {
  Tensor t = Tensor::empty(shape, dt);
  REQUIRE(size_t(t.numel()) == v.size());
  TIDE_DISPATCH_ALL(dt, "make", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = scalar_t(compute_t<scalar_t>(v[i]));
  });
  return t;
}

Tensor random_tensor(const Dims& shape, uint32_t seed, DType dt = DType::Float32) {
  std::mt19937 g(seed);
  std::normal_distribution<double> nd;
  std::vector<double> v(size_t(shape_numel(shape)));
  for (auto& x : v) x = nd(g);
  return make(v, shape, dt);
}

void check_values(const Tensor& t, const std::vector<double>& expect, double tol = 1e-6) {
  auto got = values(t);
  REQUIRE(got.size() == expect.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(expect[i])) {
      CHECK_MESSAGE(std::isnan(got[i]), "at ", i);
    } else if (got[i] != expect[i]) {
      CHECK_MESSAGE(std::fabs(got[i] - expect[i]) <= tol * (1 + std::fabs(expect[i])), "at ", i, ": ", got[i],
                    " vs ", expect[i]);
    }
  }
}

// Naive reference: reduces x over `dims` (0-based) in double with f(acc, v), keepdim layout.
template <typename F>
std::vector<double> naive(const Tensor& x, const std::vector<int>& dims, double init, F f) {
  std::vector<bool> red(size_t(x.dim()), dims.empty());
  for (int d : dims) red[size_t(d)] = true;
  Dims oshape;
  for (int d = 0; d < x.dim(); ++d) oshape.push_back(red[size_t(d)] ? 1 : x.size(d));
  Dims ostr = contiguous_strides(oshape);
  std::vector<double> out(size_t(shape_numel(oshape)), init);
  auto v = values(x);
  std::vector<int64_t> idx(size_t(x.dim()), 0);
  for (size_t k = 0; k < v.size(); ++k) {
    int64_t o = 0;
    for (int d = 0; d < x.dim(); ++d)
      if (!red[size_t(d)]) o += idx[size_t(d)] * ostr[d];
    out[size_t(o)] = f(out[size_t(o)], v[k]);
    for (int d = x.dim() - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < x.size(d)) break;
      idx[size_t(d)] = 0;
    }
  }
  return out;
}

bool bit_equal(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() && a.dtype() == b.dtype() && a.is_contiguous() && b.is_contiguous() &&
         std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0;
}

// A transposed view of a contiguous 2-D tensor.
Tensor transposed(const Tensor& t) {
  return t.as_strided(Dims{t.size(1), t.size(0)}, Dims{t.stride(1), t.stride(0)}, t.offset());
}

}  // namespace

TEST_CASE("reduce: sum, mean, prod on a small matrix") {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(ops::sum(x), {21});
  CHECK(ops::sum(x).dim() == 0);
  check_values(ops::sum(x, {0}), {5, 7, 9});
  check_values(ops::sum(x, {1}), {6, 15});
  check_values(ops::sum(x, {-1}), {6, 15});
  CHECK(ops::sum(x, {1}, true).sizes() == Dims{2, 1});
  CHECK(ops::sum(x, {0, 1}, true).sizes() == Dims{1, 1});
  check_values(ops::mean(x, {0}), {2.5, 3.5, 4.5});
  check_values(ops::prod(x, {1}), {6, 120});
  check_values(ops::prod(x), {720});
  CHECK(ops::sum(x, {}, false, DType::Float64).dtype() == DType::Float64);
}

TEST_CASE("reduce: integer and bool dtypes") {
  Tensor xi = make({1, 2, 3, 4}, {2, 2}, DType::Int32);
  CHECK(ops::sum(xi).dtype() == DType::Int64);
  CHECK(ops::sum(xi).item().i == 10);
  CHECK(ops::prod(xi).dtype() == DType::Int64);
  CHECK(ops::sum(xi, {}, false, DType::Int32).dtype() == DType::Int32);
  Tensor b = make({1, 0, 1, 1}, {4}, DType::Bool);
  CHECK(ops::sum(b).dtype() == DType::Int64);
  CHECK(ops::sum(b).item().i == 3);
  CHECK(ops::amax(xi).dtype() == DType::Int32);
  CHECK(ops::amax(xi).item().i == 4);
  CHECK(error_of([&] { ops::mean(xi); }).find("mean: expected a floating-point tensor, got int32") == 0);
  CHECK(error_of([&] { ops::std(xi); }).find("std: expected a floating-point tensor") == 0);
  check_values(ops::mean(xi, {}, false, DType::Float64), {2.5});
  // int8 sums do not overflow: accumulated in int64
  Tensor i8 = make(std::vector<double>(100, 100), {100}, DType::Int8);
  CHECK(ops::sum(i8).item().i == 10000);
}

TEST_CASE("reduce: half and bfloat16 accumulate in float") {
  Tensor h = make(std::vector<double>(4096, 1.0), {4096}, DType::Float16);
  Tensor s = ops::sum(h);
  CHECK(s.dtype() == DType::Float16);
  CHECK(s.item_double() == 4096);  // a float16 running sum would stall at 2048
  Tensor bf = make(std::vector<double>(1000, 0.5), {1000}, DType::BFloat16);
  CHECK(ops::mean(bf).item_double() == 0.5);
  check_values(ops::amax(make({1, -3, 2}, {3}, DType::Float16)), {2});
}

TEST_CASE("reduce: max/min with indices, argmax, NaN") {
  Tensor x = make({3, 7, 7, 1, 5, 0}, {2, 3});
  auto r = ops::max(x, 1);
  check_values(r.values, {7, 5});
  check_values(r.indices, {2, 2});  // first of the tied 7s; 1-based
  CHECK(r.indices.dtype() == DType::Int64);
  auto m = ops::min(x, 0, true);
  CHECK(m.values.sizes() == Dims{1, 3});
  check_values(m.values, {1, 5, 0});
  check_values(m.indices, {2, 2, 2});
  check_values(ops::argmax(x), {2});
  check_values(ops::argmin(x), {6});
  check_values(ops::argmax(x, 0), {1, 1, 1});
  CHECK(ops::argmax(x, std::nullopt, true).sizes() == Dims{1, 1});
  check_values(ops::max(x), {7});
  check_values(ops::amin(x, {0, 1}), {0});

  Tensor n = make({1, kNaN, 3, kNaN}, {4});
  CHECK(std::isnan(ops::max(n).item_double()));
  CHECK(std::isnan(ops::min(n).item_double()));
  check_values(ops::argmax(n), {2});
  check_values(ops::argmin(n), {2});
  Tensor n2 = make({1, 2, 3, 4, kNaN, 6}, {2, 3});
  check_values(ops::amax(n2, {0}), {4, kNaN, 6});
  check_values(ops::max(n2, 0).indices, {2, 2, 2});
  check_values(ops::max(n2, 1).values, {3, kNaN});
  CHECK(std::isnan(ops::sum(n).item_double()));
}

TEST_CASE("reduce: empty tensors") {
  Tensor e = Tensor::empty({0, 3}, DType::Float32);
  check_values(ops::sum(e), {0});
  check_values(ops::sum(e, {0}), {0, 0, 0});
  CHECK(ops::sum(e, {1}).sizes() == Dims{0});
  check_values(ops::prod(e, {0}), {1, 1, 1});
  CHECK(std::isnan(ops::mean(e).item_double()));
  CHECK(std::isnan(ops::var(e).item_double()));
  check_values(ops::all(e), {1});
  check_values(ops::any(e), {0});
  CHECK(ops::logsumexp(e).item_double() == -kInf);
  check_values(ops::norm(e), {0});
  CHECK(ops::amax(e, {1}).sizes() == Dims{0});  // nothing to reduce into: fine
  std::string msg = error_of([&] { ops::max(e); });
  CHECK(msg.find("max: cannot reduce over an empty dim of size 0 (dim 1 of a tensor of shape {0,3})") == 0);
  CHECK(error_of([&] { ops::max(e, 0); }).find("max: cannot reduce over an empty dim") == 0);
  CHECK(error_of([&] { ops::argmax(e); }).find("argmax: cannot reduce") == 0);
  CHECK(ops::cumsum(e, 0).sizes() == Dims{0, 3});
  CHECK(ops::sort(e, 0).values.sizes() == Dims{0, 3});
}

TEST_CASE("reduce: bad dims") {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(error_of([&] { ops::sum(x, {2}); }).find("sum: dim 3 is out of range for a tensor of 2 dims") == 0);
  CHECK(error_of([&] { ops::sum(x, {0, 0}); }).find("appears more than once") != std::string::npos);
  CHECK(error_of([&] { ops::cumsum(x, -3); }).find("cumsum: dim -3 is out of range") == 0);
  // 0-dim tensors take dim 0 / -1
  Tensor s = make({5}, {});
  check_values(ops::sum(s, {0}), {5});
  check_values(ops::max(s, -1).indices, {1});
}

TEST_CASE("reduce: strided views match a naive reference") {
  // A permuted 3-D view, a slice with gaps, an expanded (stride 0) view.
  Tensor base = random_tensor({5, 6, 7}, 1);
  std::vector<Tensor> views = {
      base,
      base.as_strided(Dims{7, 5, 6}, Dims{1, 42, 7}, 0),        // permuted (2, 0, 1)
      base.as_strided(Dims{5, 3, 4}, Dims{42, 14, 1}, 2),       // every other row, columns 2..5
      base.as_strided(Dims{6, 5}, Dims{7, 42}, 3),              // transposed slice
      base.as_strided(Dims{4, 5, 7}, Dims{0, 42, 1}, 0),        // expanded
      base.as_strided(Dims{5, 7}, Dims{42, 2}, 0),              // non-unit innermost stride
  };
  for (size_t vi = 0; vi < views.size(); ++vi) {
    const Tensor& v = views[vi];
    CAPTURE(vi);
    std::vector<std::vector<int>> dimsets = {{}};
    for (int d = 0; d < v.dim(); ++d) dimsets.push_back({d});
    if (v.dim() == 3) dimsets.push_back({0, 2}), dimsets.push_back({0, 1}), dimsets.push_back({1, 2});
    for (auto& ds : dimsets) {
      CAPTURE(ds.size());
      ops::DimList dl(ds.begin(), ds.end());
      check_values(ops::sum(v, dl, true), naive(v, ds, 0, [](double a, double b) { return a + b; }), 1e-5);
      check_values(ops::amax(v, dl, true), naive(v, ds, -kInf, [](double a, double b) { return std::max(a, b); }));
      check_values(ops::amin(v, dl, true), naive(v, ds, kInf, [](double a, double b) { return std::min(a, b); }));
      check_values(ops::norm(v, 1, dl, true), naive(v, ds, 0, [](double a, double b) { return a + std::fabs(b); }),
                   1e-5);
      auto cnt = naive(v, ds, 0, [](double a, double) { return a + 1; });
      auto s = naive(v, ds, 0, [](double a, double b) { return a + b; });
      auto ss = naive(v, ds, 0, [](double a, double b) { return a + b * b; });
      std::vector<double> var(s.size());
      for (size_t i = 0; i < s.size(); ++i) var[i] = (ss[i] - s[i] * s[i] / cnt[i]) / (cnt[i] - 1);
      check_values(ops::var(v, dl, 1, true), var, 1e-4);
    }
    if (v.dim() >= 2) {
      // max with indices along each dim: the index points at the max value
      for (int d = 0; d < v.dim(); ++d) {
        auto r = ops::max(v, d, true);
        auto ref = naive(v, {d}, -kInf, [](double a, double b) { return std::max(a, b); });
        check_values(r.values, ref);
      }
    }
  }
}

TEST_CASE("reduce: outer and inner layouts with many rows") {
  // (rows, cols) with sum over dim 0 (OUTER: rows added into an output row) and dim 1.
  for (auto shape : {Dims{1000, 3}, Dims{3, 1000}, Dims{4099, 5}, Dims{2, 70000}, Dims{70000, 2}}) {
    Tensor x = random_tensor(shape, 7);
    for (int d = 0; d < 2; ++d) {
      check_values(ops::sum(x, {d}), naive(x, {d}, 0, [](double a, double b) { return a + b; }), 1e-4);
      auto r = ops::max(x, d);
      check_values(r.values, naive(x, {d}, -kInf, [](double a, double b) { return std::max(a, b); }));
      // indices: gather back
      auto iv = values(r.indices);
      auto vv = values(r.values);
      auto xv = values(x);
      for (size_t i = 0; i < iv.size(); ++i) {
        int64_t j = int64_t(iv[i]) - 1;
        double got = d == 0 ? xv[size_t(j * shape[1] + int64_t(i))] : xv[size_t(int64_t(i) * shape[1] + j)];
        CHECK(got == vv[i]);
      }
    }
  }
}

TEST_CASE("reduce: float32 sums are accurate (pairwise)") {
  const int64_t n = 10'000'000;
  Tensor x = Tensor::empty({n}, DType::Float32);
  float* p = x.data<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = 0.1f;
  double exact = double(0.1f) * double(n);
  CHECK(std::fabs(ops::sum(x).item_double() - exact) / exact < 1e-6);
  CHECK(std::fabs(ops::mean(x).item_double() - double(0.1f)) < 1e-7);
  // The same along the outer dim.
  Tensor m = x.as_strided(Dims{100000, 100}, Dims{100, 1}, 0);
  auto col = values(ops::sum(m, {0}));
  for (double c : col) CHECK(std::fabs(c - double(0.1f) * 100000) / (double(0.1f) * 100000) < 1e-6);
}

TEST_CASE("reduce: results are bit-identical for every thread count") {
  int saved = get_num_threads();
  Tensor x = random_tensor({1000, 1000}, 3);
  Tensor xt = transposed(x);
  Tensor flat = x.as_strided(Dims{1000000}, Dims{1}, 0);
  Tensor col = x.as_strided(Dims{1000000, 1}, Dims{1, 1}, 0);
  auto run = [&] {
    std::vector<Tensor> r;
    r.push_back(ops::sum(flat));
    r.push_back(ops::sum(x, {0}));
    r.push_back(ops::sum(x, {1}));
    r.push_back(ops::sum(xt, {0}));
    r.push_back(ops::sum(col, {0}));
    r.push_back(ops::mean(x, {0}));
    r.push_back(ops::var(x, {1}));
    r.push_back(ops::std(flat));
    r.push_back(ops::norm(flat));
    r.push_back(ops::logsumexp(x, {0}));
    r.push_back(ops::argmax(flat));
    r.push_back(ops::max(x, 0).indices);
    r.push_back(ops::cumsum(x, 0));
    r.push_back(ops::sort(x, 1).values);
    r.push_back(ops::sum(x.as_strided(Dims{2, 500000}, Dims{500000, 1}, 0), {1}));
    r.push_back(ops::sum(x.as_strided(Dims{500000, 2}, Dims{2, 1}, 0), {0}));
    r.push_back(ops::sum(x.as_strided(Dims{40, 1500}, Dims{1500, 1}, 0), {0}));  // narrowed column tiles
    r.push_back(ops::var(x.as_strided(Dims{40, 1500}, Dims{1500, 1}, 0), {0}));
    r.push_back(ops::amax(x.as_strided(Dims{4, 250, 1000}, Dims{250000, 1000, 1}, 0), {0, 2}));
    return r;
  };
  set_num_threads(1);
  auto a = run();
  set_num_threads(2);
  auto b = run();
  set_num_threads(3);
  auto c = run();
  set_num_threads(saved);
  for (size_t i = 0; i < a.size(); ++i) {
    CAPTURE(i);
    CHECK(bit_equal(a[i], b[i]));
    CHECK(bit_equal(a[i], c[i]));
  }
}

TEST_CASE("reduce: var, std, norm, logsumexp, all, any") {
  Tensor x = make({1, 2, 3, 4}, {4});
  check_values(ops::var(x), {5.0 / 3});
  check_values(ops::var(x, {}, 0), {1.25});
  check_values(ops::std(x, {}, 0), {std::sqrt(1.25)});
  check_values(ops::var(make({7}, {1})), {kNaN});  // one element, correction 1
  // large offset: two-pass stays exact where sum-of-squares would cancel
  check_values(ops::var(make({1e8 + 1, 1e8 + 2, 1e8 + 3}, {3}, DType::Float64)), {1});
  Tensor v = make({3, -4}, {2});
  check_values(ops::norm(v), {5});
  check_values(ops::norm(v, 1), {7});
  check_values(ops::norm(v, kInf), {4});
  check_values(ops::norm(v, -kInf), {3});
  check_values(ops::norm(v, 0), {2});
  check_values(ops::norm(v, 3), {std::cbrt(27.0 + 64.0)});
  Tensor l = make({1, 2, 3}, {3});
  check_values(ops::logsumexp(l), {std::log(std::exp(1) + std::exp(2) + std::exp(3))});
  check_values(ops::logsumexp(make({1000, 1000}, {2})), {1000 + std::log(2.0)});
  check_values(ops::logsumexp(make({-kInf, -kInf}, {2})), {-kInf});
  check_values(ops::logsumexp(make({kInf, 1}, {2})), {kInf});
  Tensor b = make({1, 0, 1, 1}, {2, 2}, DType::Int64);
  check_values(ops::all(b, {1}), {0, 1});
  check_values(ops::any(b, {0}), {1, 1});
  CHECK(ops::all(b).dtype() == DType::Bool);
  CHECK(ops::any(make({1, 0}, {2}, DType::UInt8)).dtype() == DType::UInt8);
  CHECK(ops::logsumexp(make({1, 2}, {2}, DType::Int32)).dtype() == default_float_dtype());
  check_values(ops::all(make({kNaN, 1}, {2})), {1});
}

TEST_CASE("scan: cumsum and cumprod") {
  Tensor x = make({1, 2, 3, 4, 5, 6}, {2, 3});
  check_values(ops::cumsum(x, 1), {1, 3, 6, 4, 9, 15});
  check_values(ops::cumsum(x, 0), {1, 2, 3, 5, 7, 9});
  check_values(ops::cumprod(x, 1), {1, 2, 6, 4, 20, 120});
  check_values(ops::cumsum(transposed(x), 1), {1, 5, 2, 7, 3, 9});
  Tensor xi = make({1, 2, 3}, {3}, DType::Int16);
  CHECK(ops::cumsum(xi, 0).dtype() == DType::Int64);
  CHECK(ops::cumsum(xi, 0, DType::Float64).dtype() == DType::Float64);
  check_values(ops::cumsum(make({5}, {}), 0), {5});
}

TEST_CASE("sort, argsort, topk") {
  Tensor x = make({3, 1, 2, 1, kNaN, 0}, {6});
  auto r = ops::sort(x);
  check_values(r.values, {0, 1, 1, 2, 3, kNaN});
  check_values(r.indices, {6, 2, 4, 3, 1, 5});  // stable: the two 1s keep their order
  auto d = ops::sort(x, 0, true);
  check_values(d.values, {kNaN, 3, 2, 1, 1, 0});
  check_values(d.indices, {5, 1, 3, 2, 4, 6});
  check_values(ops::argsort(make({2, 1, 3}, {3})), {2, 1, 3});
  Tensor m = make({3, 1, 2, 9, 8, 7}, {2, 3});
  auto s0 = ops::sort(m, 0);
  check_values(s0.values, {3, 1, 2, 9, 8, 7});
  check_values(s0.indices, {1, 1, 1, 2, 2, 2});
  auto s1 = ops::sort(transposed(m), 0, true);
  check_values(s1.values, {3, 9, 2, 8, 1, 7});

  auto t = ops::topk(make({1, 5, 3, 5, 2}, {5}), 3);
  check_values(t.values, {5, 5, 3});
  check_values(t.indices, {2, 4, 3});
  auto ts = ops::topk(make({1, 5, 3, 5, 2}, {5}), 2, 0, false);
  check_values(ts.values, {1, 2});
  check_values(ts.indices, {1, 5});
  auto tm = ops::topk(m, 1, 0);
  CHECK(tm.values.sizes() == Dims{1, 3});
  check_values(tm.indices, {2, 2, 2});
  CHECK(ops::topk(m, 0).values.sizes() == Dims{2, 0});
  CHECK(error_of([&] { ops::topk(m, 4); }).find("topk: k (4) is out of range for dim 2 of size 3") == 0);
}

TEST_CASE("sort: long rows (radix path) match a stable reference, every dtype") {
  std::mt19937 g(11);
  std::uniform_int_distribution<int> small(-20, 20);
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::Int32, DType::Int64, DType::Int8,
                   DType::UInt8, DType::Bool, DType::BFloat16}) {
    CAPTURE(dtype_name(dt));
    const int64_t n = 1000;
    std::vector<double> v(static_cast<size_t>(n));
    for (auto& e : v) {
      e = small(g);
      if (dt == DType::UInt8 || dt == DType::Bool) e = std::fabs(e);
      if (dt == DType::Bool) e = e > 10;
    }
    if (is_floating(dt)) v[3] = kNaN, v[500] = kNaN, v[7] = -0.0, v[8] = 0.0, v[9] = -kInf, v[10] = kInf;
    Tensor x = make(v, {2, n / 2}, dt);
    for (bool desc : {false, true}) {
      auto r = ops::sort(x, 1, desc);
      auto xv = values(x);
      auto iv = values(r.indices);
      auto vv = values(r.values);
      for (int row = 0; row < 2; ++row) {
        std::vector<int64_t> ref(size_t(n / 2));
        for (int64_t j = 0; j < n / 2; ++j) ref[size_t(j)] = j;
        auto key = [&](int64_t j) { return xv[size_t(row * n / 2 + j)]; };
        std::stable_sort(ref.begin(), ref.end(), [&](int64_t a, int64_t b) {
          double ka = key(a), kb = key(b);
          if (desc) return (ka > kb) || (std::isnan(ka) && !std::isnan(kb));
          return (ka < kb) || (std::isnan(kb) && !std::isnan(ka));
        });
        for (int64_t j = 0; j < n / 2; ++j) {
          REQUIRE(int64_t(iv[size_t(row * n / 2 + j)]) == ref[size_t(j)] + 1);
          double a = vv[size_t(row * n / 2 + j)], b = key(ref[size_t(j)]);
          CHECK((a == b || (std::isnan(a) && std::isnan(b))));
        }
      }
    }
    // topk agrees with the head of the descending sort
    auto t = ops::topk(x, 17, 1);
    auto s = ops::sort(x, 1, true);
    auto ti = values(t.indices), si = values(s.indices);
    for (int row = 0; row < 2; ++row)
      for (int j = 0; j < 17; ++j) CHECK(ti[size_t(row * 17 + j)] == si[size_t(row * n / 2 + j)]);
  }
}
