// Linear algebra: products against hand-computed values and a naive reference, BLAS layouts
// (transposed views reach BLAS without a copy), the own loop for integer and half dtypes,
// matmul's broadcasting rules, np.dot, addmm, solve / inv / det and the matrix norms.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include "../../tensor/allocator.hpp"
#include "../../tensor/ops/elementwise.hpp"
#include "../../tensor/ops/linalg.hpp"
#include "../../tensor/parallel.hpp"
#include "../../tensor/tensor.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::values;
using tide::test::error_of;
using ops::DTypePolicy;

namespace {

Tensor from(const std::vector<double>& v, const Dims& shape, DType dt = DType::Float64) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  REQUIRE(size_t(t.numel()) == v.size());
  for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = v[i];
  return t.to(dt);
}

// Deterministic values in [-1, 1) (small integers for integer dtypes).
Tensor randt(const Dims& shape, DType dt, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DType::Float64);
  uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  for (int64_t i = 0; i < t.numel(); ++i) {
    s = s * 6364136223846793005ULL + 1442695040888963407ULL;
    double u = double(s >> 11) / double(1ULL << 53);
    t.data<double>()[i] = is_floating(dt) ? 2 * u - 1 : std::floor(u * 19) - 9;
  }
  return t.to(dt);
}

Tensor tr(const Tensor& t) {  // the transposed view of a 2-D tensor (x:t())
  return t.as_strided({t.size(1), t.size(0)}, {t.stride(1), t.stride(0)}, t.offset());
}

// Naive double-precision product of the last two dims of 2-D tensors.
std::vector<double> ref_mm(const Tensor& a, const Tensor& b) {
  int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> av = values(a), bv = values(b), c(size_t(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[size_t(i * n + j)] += av[size_t(i * k + p)] * bv[size_t(p * n + j)];
  return c;
}

double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

uint64_t allocations() {
  CpuAllocatorStats s = cpu_allocator_stats();
  return s.cache_hits + s.cache_misses;
}

}  // namespace

TEST_CASE("mm: hand-computed values in every dtype") {
  std::vector<double> a{1, 2, 3, 4, 5, 6}, b{7, 8, 9, 10, 11, 12};
  std::vector<double> want{58, 64, 139, 154};
  for (DType dt : {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16, DType::Int64, DType::Int32,
                   DType::Int16, DType::UInt8}) {
    CAPTURE(dtype_name(dt));
    Tensor c = ops::mm(from(a, {2, 3}, dt), from(b, {3, 2}, dt));
    CHECK(c.dtype() == dt);
    CHECK(c.sizes() == Dims{2, 2});
    CHECK(values(c) == want);
  }
  // int8 wraps like int8 arithmetic: 139 -> -117, 154 -> -102
  Tensor c8 = ops::mm(from(a, {2, 3}, DType::Int8), from(b, {3, 2}, DType::Int8));
  CHECK(values(c8) == std::vector<double>{58, 64, -117, -102});
  // 32- and 64-bit integers wrap too
  CHECK(values(ops::mm(from({1 << 30}, {1, 1}, DType::Int32), from({4}, {1, 1}, DType::Int32))) ==
        std::vector<double>{0});
  Tensor big = Tensor::empty({1, 1}, DType::Int64), four = Tensor::empty({1, 1}, DType::Int64);
  *big.data<int64_t>() = int64_t(1) << 62;
  *four.data<int64_t>() = 5;
  CHECK(*ops::mm(big, four).data<int64_t>() == int64_t(1) << 62);
  // bool: any(a and b)
  Tensor ab = from({1, 0, 0, 0}, {2, 2}, DType::Bool), bb = from({0, 1, 1, 0}, {2, 2}, DType::Bool);
  CHECK(values(ops::mm(ab, bb)) == std::vector<double>{0, 1, 0, 0});
}

TEST_CASE("mm: BLAS sizes against a reference, for every layout of the operands") {
  for (DType dt : {DType::Float32, DType::Float64}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == DType::Float32 ? 1e-4 : 1e-12;
    Tensor a = randt({37, 53}, dt, 1), b = randt({53, 41}, dt, 2);
    std::vector<double> want = ref_mm(a, b);
    CHECK(max_diff(values(ops::mm(a, b)), want) < tol);
    // the same operands stored transposed, handed in as x:t() views
    Tensor at = tr(tr(a).contiguous()), bt = tr(tr(b).contiguous());
    CHECK(at.stride(0) == 1);
    CHECK(max_diff(values(ops::mm(at, b)), want) < tol);
    CHECK(max_diff(values(ops::mm(a, bt)), want) < tol);
    CHECK(max_diff(values(ops::mm(at, bt)), want) < tol);
    // a column slice of a wider matrix (row stride > cols) and a row-strided slice
    Tensor wide = randt({37, 60}, dt, 3);
    Tensor slice = wide.as_strided({37, 53}, {60, 1}, 5);
    CHECK(max_diff(values(ops::mm(slice, b)), ref_mm(slice.contiguous(), b)) < tol);
    // every other column: neither layout, copied
    Tensor big = randt({37, 106}, dt, 4);
    Tensor step = big.as_strided({37, 53}, {106, 2}, 1);
    CHECK(max_diff(values(ops::mm(step, b)), ref_mm(step.contiguous(), b)) < tol);
    // a broadcast (stride 0) operand
    Tensor row = randt({1, 53}, dt, 5);
    Tensor rows = row.as_strided({37, 53}, {0, 1}, 0);
    CHECK(max_diff(values(ops::mm(rows, b)), ref_mm(rows.contiguous(), b)) < tol);
  }
}

TEST_CASE("mm: transposed views go to BLAS without a copy") {
  Tensor a = randt({128, 96}, DType::Float32, 7), b = randt({128, 64}, DType::Float32, 8);
  Tensor at = tr(a);  // (96 x 128), strides {1, 96}
  ops::mm(at, b);     // warm up
  uint64_t before = allocations();
  Tensor c = ops::mm(at, b);
  CHECK(allocations() - before == 1);  // the result only
  CHECK(max_diff(values(c), ref_mm(at.contiguous(), b)) < 1e-4);
  before = allocations();
  ops::mm(b.as_strided({64, 128}, {1, 64}, 0), at.as_strided({128, 96}, {96, 1}, 0));
  CHECK(allocations() - before == 1);
  // a general-stride operand costs one copy
  Tensor big = randt({96, 256}, DType::Float32, 9);
  Tensor step = big.as_strided({96, 128}, {256, 2}, 0);
  before = allocations();
  ops::mm(step, b);
  CHECK(allocations() - before == 2);
}

TEST_CASE("mm: small float products and the BLAS path agree") {
  for (int64_t n : {1, 2, 3, 8, 16, 17}) {
    Tensor a = randt({n, n}, DType::Float64, uint64_t(n)), b = randt({n, n}, DType::Float64, uint64_t(n + 100));
    CHECK(max_diff(values(ops::mm(a, b)), ref_mm(a, b)) < 1e-12);
    CHECK(max_diff(values(ops::mm(tr(a), b)), ref_mm(tr(a).contiguous(), b)) < 1e-12);
  }
}

TEST_CASE("mv and the vector forms of matmul") {
  Tensor A = from({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor v = from({1, 0, -1}, {3});
  Tensor y = ops::mv(A, v);
  CHECK(y.sizes() == Dims{2});
  CHECK(values(y) == std::vector<double>{-2, -2});
  // 1-D @ 2-D: prepend a dim, then remove it
  Tensor w = from({1, 1}, {2});
  Tensor z = ops::matmul(w, A);
  CHECK(z.sizes() == Dims{3});
  CHECK(values(z) == std::vector<double>{5, 7, 9});
  // 1-D @ 1-D: a 0-D dot
  Tensor d = ops::matmul(v, v);
  CHECK(d.dim() == 0);
  CHECK(d.item_double() == 2);
  // BLAS-sized gemv, both layouts, and a strided vector
  for (DType dt : {DType::Float32, DType::Float64}) {
    const double tol = dt == DType::Float32 ? 1e-4 : 1e-12;
    Tensor M = randt({90, 70}, dt, 11), x = randt({140}, dt, 12);
    Tensor xs = x.as_strided({70}, {2}, 1);
    Tensor xcol = xs.contiguous().as_strided({70, 1}, {1, 1}, 0);
    CHECK(max_diff(values(ops::mv(M, xs)), ref_mm(M, xcol)) < tol);
    Tensor Mt = tr(randt({70, 90}, dt, 13));
    CHECK(max_diff(values(ops::mv(Mt, xs)), ref_mm(Mt.contiguous(), xcol)) < tol);
    // row vector times matrix: (90) @ (90 x 70)
    Tensor r = randt({90}, dt, 14);
    Tensor rrow = r.as_strided({1, 90}, {90, 1}, 0);
    CHECK(max_diff(values(ops::matmul(r, M)), ref_mm(rrow, M)) < tol);
    CHECK(max_diff(values(ops::matmul(r, Mt)), ref_mm(rrow, Mt.contiguous())) < tol);
  }
}

TEST_CASE("matmul: batched operands with broadcast batch dims") {
  for (DType dt : {DType::Float64, DType::Float32, DType::Int64, DType::Float16}) {
    CAPTURE(dtype_name(dt));
    const double tol = dt == DType::Float32 ? 1e-4 : dt == DType::Float16 ? 2e-2 : 1e-12;
    Tensor a = randt({2, 1, 30, 24}, dt, 21), b = randt({5, 24, 20}, dt, 22);
    Tensor c = ops::matmul(a, b);
    CHECK(c.sizes() == Dims{2, 5, 30, 20});
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        Tensor ai = a.as_strided({30, 24}, {24, 1}, i * 30 * 24);
        Tensor bj = b.as_strided({24, 20}, {20, 1}, j * 24 * 20);
        Tensor cij = c.as_strided({30, 20}, {20, 1}, (i * 5 + j) * 30 * 20);
        CHECK(max_diff(values(cij), ref_mm(ai, bj)) < tol * 10);
      }
  }
  // (B,n,k) x (k,m): the batch folds into rows
  Tensor a = randt({4, 30, 25}, DType::Float64, 23), b = randt({25, 18}, DType::Float64, 24);
  Tensor c = ops::matmul(a, b);
  CHECK(c.sizes() == Dims{4, 30, 18});
  CHECK(max_diff(values(c), ref_mm(a.as_strided({120, 25}, {25, 1}, 0), b)) < 1e-12);
  // 1-D operands on either side of a batch
  Tensor v = randt({25}, DType::Float64, 25);
  Tensor av = ops::matmul(a, v);
  CHECK(av.sizes() == Dims{4, 30});
  CHECK(max_diff(values(av), ref_mm(a.as_strided({120, 25}, {25, 1}, 0), v.as_strided({25, 1}, {1, 1}, 0))) < 1e-12);
  Tensor u = randt({30}, DType::Float64, 26);
  Tensor ua = ops::matmul(u, a);
  CHECK(ua.sizes() == Dims{4, 25});
  for (int64_t i = 0; i < 4; ++i) {
    Tensor ai = a.as_strided({30, 25}, {25, 1}, i * 750);
    std::vector<double> want = ref_mm(u.as_strided({1, 30}, {30, 1}, 0), ai);
    std::vector<double> got = values(ua.as_strided({25}, {1}, i * 25));
    CHECK(max_diff(got, want) < 1e-12);
  }
  // bmm on transposed batches
  Tensor x = randt({3, 40, 30}, DType::Float32, 27), y = randt({3, 40, 20}, DType::Float32, 28);
  Tensor xt = x.as_strided({3, 30, 40}, {1200, 1, 30}, 0);
  Tensor r = ops::bmm(xt, y);
  CHECK(r.sizes() == Dims{3, 30, 20});
  for (int64_t i = 0; i < 3; ++i) {
    Tensor xi = xt.as_strided({30, 40}, {1, 30}, i * 1200);
    Tensor yi = y.as_strided({40, 20}, {20, 1}, i * 800);
    CHECK(max_diff(values(r.as_strided({30, 20}, {20, 1}, i * 600)), ref_mm(xi.contiguous(), yi)) < 1e-4);
  }
}

TEST_CASE("own loop: integer and half products against the reference, any thread count") {
  Tensor a = randt({67, 300}, DType::Int64, 31), b = randt({300, 290}, DType::Int64, 32);
  std::vector<double> want = ref_mm(a, b);
  CHECK(max_diff(values(ops::mm(a, b)), want) == 0);
  CHECK(max_diff(values(ops::mm(a.to(DType::Int32), tr(tr(b).contiguous()).to(DType::Int32))), want) == 0);
  Tensor h = randt({50, 300}, DType::Float16, 33), g = randt({300, 40}, DType::Float16, 34);
  std::vector<double> hw = ref_mm(h, g);
  Tensor hg = ops::mm(h, g);
  CHECK(hg.dtype() == DType::Float16);
  CHECK(max_diff(values(hg), hw) < 0.05);  // float32 accumulation, one rounding to half
  Tensor bg = ops::mm(h.to(DType::BFloat16), g.to(DType::BFloat16));
  CHECK(max_diff(values(bg), ref_mm(h.to(DType::BFloat16), g.to(DType::BFloat16))) < 0.3);
  // half products below the BLAS cut-off take the own loop
  Tensor hs = randt({20, 30}, DType::Float16, 35), gs = randt({30, 20}, DType::Float16, 36);
  CHECK(max_diff(values(ops::mm(hs, gs)), ref_mm(hs, gs)) < 0.01);
  // the own loop is parallel over rows and gives the same bits on any thread count
  int saved = get_num_threads();
  set_num_threads(1);
  std::vector<double> one = values(ops::mm(a.to(DType::Int32), b.to(DType::Int32)));
  set_num_threads(2);
  std::vector<double> two = values(ops::mm(a.to(DType::Int32), b.to(DType::Int32)));
  set_num_threads(saved);
  CHECK(one == two);
  CHECK(one == want);
}

TEST_CASE("dot: NumPy rules") {
  Tensor x = from({1, 2, 3}, {3}), y = from({4, 5, 6}, {3});
  Tensor d = ops::dot(x, y);
  CHECK(d.dim() == 0);
  CHECK(d.item_double() == 32);
  // BLAS-sized, strided
  Tensor big = randt({400}, DType::Float32, 41);
  Tensor s = big.as_strided({200}, {2}, 0), t = big.as_strided({200}, {2}, 1);
  double want = 0;
  for (int64_t i = 0; i < 200; ++i) want += s.item_double(i) * t.item_double(i);
  CHECK(ops::dot(s, t).item_double() == doctest::Approx(want).epsilon(1e-5));
  CHECK(ops::dot(x.to(DType::Int64), y.to(DType::Int64)).item_double() == 32);
  // 2-D: matrix product
  Tensor A = from({1, 2, 3, 4}, {2, 2});
  CHECK(values(ops::dot(A, A)) == std::vector<double>{7, 10, 15, 22});
  // 0-D: elementwise product
  Tensor two = from({2}, {});
  CHECK(values(ops::dot(two, A)) == std::vector<double>{2, 4, 6, 8});
  // N-D: dot(a, b)[i,j,k,m] = sum(a[i,j,:] * b[k,:,m])
  Tensor a = randt({2, 3, 4}, DType::Float64, 42), b = randt({5, 4, 6}, DType::Float64, 43);
  Tensor r = ops::dot(a, b);
  CHECK(r.sizes() == Dims{2, 3, 5, 6});
  double maxd = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 5; ++k)
        for (int m = 0; m < 6; ++m) {
          double acc = 0;
          for (int p = 0; p < 4; ++p) acc += a.item_double((i * 3 + j) * 4 + p) * b.item_double((k * 4 + p) * 6 + m);
          maxd = std::max(maxd, std::fabs(acc - r.item_double(((i * 3 + j) * 5 + k) * 6 + m)));
        }
  CHECK(maxd < 1e-12);
  // mixed dtypes: an error for torch, promoted for numpy
  CHECK(error_of([&] { ops::dot(x, y.to(DType::Float32)); }) ==
        "dot: expected both tensors to have the same dtype, got float64 and float32");
  CHECK(ops::dot(x.to(DType::Int64), y.to(DType::Float32), nullptr, DTypePolicy::Promote).dtype() == DType::Float32);
}

TEST_CASE("outer") {
  Tensor a = from({1, 2}, {2}), b = from({3, 4, 5}, {3}, DType::Int64);
  Tensor o = ops::outer(a, b);
  CHECK(o.sizes() == Dims{2, 3});
  CHECK(o.dtype() == DType::Float64);
  CHECK(values(o) == std::vector<double>{3, 4, 5, 6, 8, 10});
  CHECK(error_of([&] { ops::outer(from({1, 2, 3, 4}, {2, 2}), b); }) == "outer: expected 1-D tensors, got 2-D and 1-D");
  Tensor f = ops::outer(from({1, 2, 3, 4}, {2, 2}), b, nullptr, true);
  CHECK(f.sizes() == Dims{4, 3});
}

TEST_CASE("addmm: beta, alpha, broadcast bias, in place") {
  Tensor A = from({1, 2, 3, 4}, {2, 2}), B = from({1, 0, 0, 1}, {2, 2});
  Tensor bias = from({10, 20}, {2});
  Tensor r = ops::addmm(bias, A, B, Scalar(0.5), Scalar(2.0));
  CHECK(values(r) == std::vector<double>{7, 14, 11, 18});
  // beta = 0 ignores the bias, NaN included
  Tensor nanb = from({NAN, NAN}, {2});
  CHECK(values(ops::addmm(nanb, A, B, Scalar(0.0), Scalar(1.0))) == std::vector<double>{1, 2, 3, 4});
  // BLAS sizes, transposed operand
  Tensor a = randt({40, 50}, DType::Float32, 51), b = randt({50, 30}, DType::Float32, 52);
  Tensor bb = randt({30}, DType::Float32, 53);
  Tensor c = ops::addmm(bb, tr(tr(a).contiguous()), b, Scalar(int64_t(1)), Scalar(int64_t(1)));
  std::vector<double> want = ref_mm(a, b);
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 30; ++j) want[size_t(i * 30 + j)] += bb.item_double(j);
  CHECK(max_diff(values(c), want) < 1e-4);
  // in place
  Tensor x = from({1, 1, 1, 1}, {2, 2});
  Tensor same = ops::addmm(x, A, B, Scalar(int64_t(1)), Scalar(int64_t(1)), nullptr, true);
  CHECK(same.same(x));
  CHECK(values(x) == std::vector<double>{2, 3, 4, 5});
  // integers
  Tensor ai = from({1, 2, 3, 4}, {2, 2}, DType::Int64);
  Tensor bi = from({1, 1}, {2}, DType::Int64);
  CHECK(values(ops::addmm(bi, ai, ai, Scalar(int64_t(2)), Scalar(int64_t(3)))) == std::vector<double>{23, 32, 47, 68});
  CHECK(error_of([&] { ops::addmm(bi, ai, ai, Scalar(0.5), Scalar(int64_t(1))); }) ==
        "addmm: for int64 tensors beta and alpha must be integers");
  CHECK(error_of([&] { ops::addmm(from({1, 2, 3}, {3}), A, B); }) ==
        "addmm: the bias of shape {3} cannot be broadcast to the result shape {2,2}");
}

TEST_CASE("out= writes into the given tensor") {
  Tensor A = from({1, 2, 3, 4}, {2, 2});
  Tensor out = Tensor::empty({2, 2}, DType::Float64);
  Tensor r = ops::mm(A, A, &out);
  CHECK(r.same(out));
  CHECK(values(out) == std::vector<double>{7, 10, 15, 22});
  // aliasing an input: computed aside, then copied
  Tensor B = A.clone();
  ops::mm(B, A, &B);
  CHECK(values(B) == std::vector<double>{7, 10, 15, 22});
  // cast into a float32 out
  Tensor o32 = Tensor::empty({2, 2}, DType::Float32);
  ops::matmul(A, A, &o32);
  CHECK(values(o32) == std::vector<double>{7, 10, 15, 22});
  CHECK(error_of([&] { Tensor o = Tensor::empty({3}, DType::Float64); ops::mm(A, A, &o); }) ==
        "mm: out has shape {3} but the result has shape {2,2}");
}

TEST_CASE("product errors name the op and the shapes") {
  Tensor a = Tensor::empty({64, 1000}, DType::Float32), b = Tensor::empty({100, 10}, DType::Float32);
  CHECK(error_of([&] { ops::mm(a, b); }) == "mm: shapes {64,1000} and {100,10} cannot be multiplied (1000 ~= 100)");
  CHECK(error_of([&] { ops::matmul(a, b); }) ==
        "matmul: shapes {64,1000} and {100,10} cannot be multiplied (1000 ~= 100)");
  Tensor c3 = Tensor::empty({2, 3, 4}, DType::Float32), c2 = Tensor::empty({4, 5}, DType::Float32);
  CHECK(error_of([&] { ops::mm(c3, c2); }) == "mm: expected 2-D tensors, got 3-D and 2-D");
  CHECK(error_of([&] { ops::mm(c2, Tensor::empty({5, 2}, DType::Float64)); }) ==
        "mm: expected both tensors to have the same dtype, got float32 and float64");
  CHECK(error_of([&] { ops::matmul(c2, Tensor::empty({5, 2}, DType::Float64)); }) ==
        "matmul: expected both tensors to have the same dtype, got float32 and float64");
  CHECK(ops::matmul(c2, Tensor::empty({5, 2}, DType::Float64), nullptr, DTypePolicy::Promote).dtype() ==
        DType::Float64);
  CHECK(error_of([&] { ops::mv(c2, Tensor::empty({4}, DType::Float32)); }) ==
        "mv: shapes {4,5} and {4} cannot be multiplied (5 ~= 4)");
  CHECK(error_of([&] { ops::mv(c2, c2); }) == "mv: expected a 2-D matrix and a 1-D vector, got 2-D and 2-D");
  CHECK(error_of([&] { ops::bmm(c3, Tensor::empty({3, 4, 5}, DType::Float32)); }) ==
        "bmm: batch sizes 2 and 3 differ (shapes {2,3,4} and {3,4,5})");
  CHECK(error_of([&] { ops::bmm(c2, c3); }) == "bmm: expected 3-D tensors, got 2-D and 3-D");
  CHECK(error_of([&] { ops::matmul(Tensor::empty({}, DType::Float32), c2); }) ==
        "matmul: both arguments need to be at least 1-D, got 0-D and 2-D");
  CHECK(error_of([&] { ops::matmul(c3, Tensor::empty({3, 4, 5}, DType::Float32)); }) ==
        "matmul: the batch dims of shapes {2,3,4} and {3,4,5} cannot be broadcast ({2} and {3})");
  CHECK(error_of([&] { ops::dot(Tensor::empty({3}, DType::Float32), Tensor::empty({4}, DType::Float32)); }) ==
        "dot: shapes {3} and {4} cannot be multiplied (3 ~= 4)");
}

TEST_CASE("empty and degenerate shapes") {
  Tensor a = Tensor::empty({0, 3}, DType::Float32), b = Tensor::empty({3, 4}, DType::Float32);
  CHECK(ops::mm(a, b).sizes() == Dims{0, 4});
  Tensor z = ops::mm(Tensor::empty({2, 0}, DType::Float64), Tensor::empty({0, 3}, DType::Float64));
  CHECK(values(z) == std::vector<double>(6, 0.0));
  CHECK(ops::dot(Tensor::empty({0}, DType::Float64), Tensor::empty({0}, DType::Float64)).item_double() == 0);
}

TEST_CASE("linalg.solve") {
  Tensor A = from({2, 1, 1, 1, 3, 2, 1, 0, 0}, {3, 3});
  Tensor b = from({4, 5, 6}, {3});
  Tensor x = ops::solve(A, b);
  CHECK(x.sizes() == Dims{3});
  // A @ x = b
  std::vector<double> Ax = values(ops::mv(A, x));
  CHECK(max_diff(Ax, {4, 5, 6}) < 1e-12);
  CHECK(max_diff(values(x), {6, 15, -23}) < 1e-12);
  // several right-hand sides, float32, a transposed A
  Tensor B = from({4, 1, 5, 2, 6, 3}, {3, 2}, DType::Float32);
  Tensor At = tr(tr(A).contiguous()).to(DType::Float32);
  Tensor X = ops::solve(At, B);
  CHECK(X.sizes() == Dims{3, 2});
  CHECK(X.dtype() == DType::Float32);
  CHECK(max_diff(values(ops::mm(At, X)), values(B)) < 1e-4);
  // batched A with a broadcast B
  Tensor As = randt({4, 5, 5}, DType::Float64, 61);
  Tensor Bs = randt({5, 2}, DType::Float64, 62);
  Tensor Xs = ops::solve(As, Bs);
  CHECK(Xs.sizes() == Dims{4, 5, 2});
  Tensor back = ops::matmul(As, Xs);
  for (int64_t i = 0; i < 4; ++i)
    CHECK(max_diff(values(back.as_strided({5, 2}, {2, 1}, i * 10)), values(Bs)) < 1e-10);
  // B with A's shape less the last dim is a batch of vectors
  Tensor bv = randt({4, 5}, DType::Float64, 63);
  Tensor xv = ops::solve(As, bv);
  CHECK(xv.sizes() == Dims{4, 5});
  // singular
  Tensor S = from({1, 2, 3, 2, 4, 6, 1, 1, 1}, {3, 3});
  Tensor Z = from({1, 0, 0, 0, 1, 0, 0, 0, 0}, {3, 3});
  CHECK(error_of([&] { ops::solve(Z, b); }) == "linalg.solve: the matrix is singular (U[3,3] = 0)");
  CHECK(error_of([&] { ops::solve(S, b); }).find("linalg.solve: the matrix is singular (U[") == 0);
  Tensor two = Z.as_strided({2, 3, 3}, {0, 3, 1}, 0);  // the same matrix twice
  CHECK(error_of([&] { ops::solve(two, b); }) == "linalg.solve: matrix 1 of the batch is singular (U[3,3] = 0)");
  // dtypes
  Tensor Ai = from({2, 0, 0, 4}, {2, 2}, DType::Int64), bi = from({2, 4}, {2}, DType::Int64);
  CHECK(error_of([&] { ops::solve(Ai, bi); }) == "linalg.solve: expected a floating-point tensor, got int64");
  Tensor xi = ops::solve(Ai, bi, DTypePolicy::Promote);
  CHECK(xi.dtype() == DType::Float64);
  CHECK(values(xi) == std::vector<double>{1, 1});
  CHECK(ops::solve(Ai.to(DType::Float16), bi.to(DType::Float16)).dtype() == DType::Float16);
  CHECK(error_of([&] { ops::solve(from({1, 2, 3, 4, 5, 6}, {2, 3}), b); }) ==
        "linalg.solve: A must be a square matrix or a batch of square matrices, got shape {2,3}");
  CHECK(error_of([&] { ops::solve(A, from({1, 2}, {2})); }) ==
        "linalg.solve: shapes {3,3} and {2} are incompatible (3 ~= 2)");
}

TEST_CASE("linalg.inv and det") {
  Tensor A = from({4, 7, 2, 6}, {2, 2});
  Tensor Ai = ops::inv(A);
  CHECK(max_diff(values(Ai), {0.6, -0.7, -0.2, 0.4}) < 1e-12);
  CHECK(ops::det(A).item_double() == doctest::Approx(10));
  // transposed view
  Tensor At = tr(A);
  CHECK(max_diff(values(ops::inv(At)), {0.6, -0.2, -0.7, 0.4}) < 1e-12);
  // batched, larger
  Tensor M = randt({3, 30, 30}, DType::Float64, 71);
  Tensor Mi = ops::inv(M);
  Tensor I = ops::matmul(M, Mi);
  std::vector<double> iv = values(I), eye(size_t(3 * 900), 0.0);
  for (int b = 0; b < 3; ++b)
    for (int i = 0; i < 30; ++i) eye[size_t(b * 900 + i * 31)] = 1;
  CHECK(max_diff(iv, eye) < 1e-9);
  Tensor dets = ops::det(from({1, 2, 3, 4, 2, 0, 0, 2}, {2, 2, 2}));
  CHECK(dets.sizes() == Dims{2});
  CHECK(max_diff(values(dets), {-2, 4}) < 1e-12);
  CHECK(ops::det(from({1, 2, 2, 4}, {2, 2})).item_double() == 0);
  CHECK(ops::det(from({0, 1, 0, 0, 0, 1, 1, 0, 0}, {3, 3})).item_double() == doctest::Approx(1));
  CHECK(error_of([&] { ops::inv(from({1, 2, 2, 4}, {2, 2})); }) == "linalg.inv: the matrix is singular (U[2,2] = 0)");
  CHECK(error_of([&] { ops::inv(from({1, 2, 3}, {3})); }) ==
        "linalg.inv: A must be a matrix or a batch of matrices, got a 1-D tensor of shape {3}");
  CHECK(ops::inv(A.to(DType::Float32)).dtype() == DType::Float32);
  CHECK(ops::inv(A.to(DType::Int64), DTypePolicy::Promote).dtype() == DType::Float64);
}

TEST_CASE("matrix norms") {
  Tensor A = from({1, -2, 3, -4, 5, -6}, {2, 3});
  using O = ops::NormOrd;
  auto n = [&](O ord, std::vector<int> dims = {}) { return ops::linalg_norm(A, ord, dims, false).item_double(); };
  CHECK(n(O{O::P, 1}) == 9);           // max column sum
  CHECK(n(O{O::P, -1}) == 5);          // min column sum
  CHECK(n(O{O::P, HUGE_VAL}) == 15);   // max row sum
  CHECK(n(O{O::P, -HUGE_VAL}) == 6);   // min row sum
  CHECK(n(O{O::P, 1}, {1, 0}) == 15);  // dims reversed: the transpose's norm
  // singular values of [[1,-2,3],[-4,5,-6]]: 9.508032, 0.77286964
  CHECK(n(O{O::P, 2}) == doctest::Approx(9.508032000695723));
  CHECK(n(O{O::P, -2}) == doctest::Approx(0.7728696356734837));
  CHECK(n(O{O::Nuc, 0}) == doctest::Approx(9.508032000695723 + 0.7728696356734837));
  Tensor k = ops::linalg_norm(A, O{O::P, 1}, {0, 1}, true);
  CHECK(k.sizes() == Dims{1, 1});
  CHECK(error_of([&] { n(O{O::P, 3}); }) ==
        "linalg.norm: invalid norm order 3 for matrices (expected 1, -1, 2, -2, inf, -inf, 'fro' or 'nuc')");
  CHECK(error_of([&] { n(O{O::Fro, 0}, {1}); }) == "linalg.norm: the 'fro' norm needs two dims (a matrix)");
  // batched over a kept dim
  Tensor B = from({1, 2, 3, 4, 5, 6, 7, 8}, {2, 2, 2});
  Tensor bn = ops::linalg_norm(B, O{O::P, HUGE_VAL}, {1, 2}, false);
  CHECK(values(bn) == std::vector<double>{7, 15});
}
