// Engine internals: dtypes and promotion, half types, storage and views, the iterator's
// broadcasting and coalescing, pointwise ops, the caching allocator and thread-count
// independence.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "../../tensor/allocator.hpp"
#include "../../tensor/iterator.hpp"
#include "../../tensor/ops/elementwise.hpp"
#include "../../tensor/parallel.hpp"
#include "../../tensor/tensor.hpp"

using namespace tide;

namespace {
Tensor arange_f(int64_t n, DType dt = DType::Float32) {
  Tensor t = Tensor::empty({n}, DType::Float64);
  for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = double(i);
  return t.to(dt);
}
}  // namespace

TEST_CASE("dtype names, sizes and parsing") {
  CHECK(dtype_size(DType::BFloat16) == 2);
  CHECK(dtype_name(DType::Int64) == "int64");
  DType d;
  CHECK(parse_dtype("double", d));
  CHECK(d == DType::Float64);
  CHECK(parse_dtype("long", d));
  CHECK(d == DType::Int64);
  CHECK_FALSE(parse_dtype("float128", d));
}

TEST_CASE("promotion follows PyTorch") {
  CHECK(promote_types(DType::UInt8, DType::Int8) == DType::Int16);
  CHECK(promote_types(DType::Int32, DType::Float16) == DType::Float16);
  CHECK(promote_types(DType::Float16, DType::BFloat16) == DType::Float32);
  CHECK(promote_types(DType::Float32, DType::Float64) == DType::Float64);
  CHECK(promote_types(DType::Bool, DType::Int8) == DType::Int8);
  // scalars: f32 * 2.5 stays f32; int tensor * 2.5 -> default float; bool + 1 -> int64
  CHECK(promote_with_scalar(DType::Float32, Scalar(2.5)) == DType::Float32);
  CHECK(promote_with_scalar(DType::Int32, Scalar(2.5)) == default_float_dtype());
  CHECK(promote_with_scalar(DType::Bool, Scalar(int64_t(1))) == DType::Int64);
  CHECK(promote_with_scalar(DType::Int8, Scalar(int64_t(1000))) == DType::Int8);
  // zero-dim tensors only raise the category
  Tensor a = Tensor::empty({3}, DType::Int32), z = Tensor::empty({}, DType::Float64);
  Tensor f = Tensor::empty({3}, DType::Float32);
  CHECK(ops::result_type(a, z) == DType::Float64);
  CHECK(ops::result_type(f, z) == DType::Float32);
}

TEST_CASE("half and bfloat16 round trip and round to nearest even") {
  CHECK(float(Half(1.0f)) == 1.0f);
  CHECK(float(Half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(float(Half(70000.0f))));
  CHECK(float(Half(5.960464477539063e-08f)) == doctest::Approx(5.960464477539063e-08));  // smallest subnormal
  CHECK(std::isnan(float(Half(NAN))));
  CHECK(float(Half(1.0f + 1.0f / 2048)) == 1.0f);  // tie -> even
  CHECK(float(BFloat16(1.0f)) == 1.0f);
  CHECK(float(BFloat16(3.140625f)) == 3.140625f);
  CHECK(std::isnan(float(BFloat16(NAN))));
}

TEST_CASE("storage is aligned and views share it") {
  Tensor t = Tensor::empty({4, 5}, DType::Float32);
  CHECK(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64 == 0);
  CHECK(t.is_contiguous());
  CHECK(t.strides() == Dims{5, 1});
  Tensor tt = t.as_strided({5, 4}, {1, 5}, 0);
  CHECK_FALSE(tt.is_contiguous());
  CHECK(tt.storage() == t.storage());
  ops::fill_(t, Scalar(1.5));
  CHECK(tt.item_double(7) == 1.5);
  uint32_t v = t.storage()->version();
  ops::fill_(tt, Scalar(2.0));
  CHECK(t.storage()->version() > v);
  CHECK(t.item_double(0) == 2.0);
  Tensor c = tt.contiguous();
  CHECK(c.is_contiguous());
  CHECK(c.storage() != t.storage());
}

TEST_CASE("shape errors and limits") {
  CHECK_THROWS_WITH_AS(broadcast_shapes("add", {2, 3}, {4}), doctest::Contains("add: shapes {2,3} and {4} cannot be broadcast"), Error);
  CHECK(broadcast_shapes("add", {2, 1, 3}, {4, 1}) == Dims{2, 4, 3});
  CHECK_THROWS_AS(Tensor::empty({int64_t(1) << 40, int64_t(1) << 40}, DType::Float32), Error);
  CHECK_THROWS_WITH_AS(Tensor::empty({int64_t(1) << 45}, DType::Float64), doctest::Contains("cannot allocate"), OutOfMemory);
  CHECK_THROWS_WITH(Device::parse("tpu"), doctest::Contains("unknown device 'tpu'"));
}

TEST_CASE("iterator coalesces contiguous dims and keeps broadcast strides") {
  Tensor a = Tensor::empty({2, 3, 4}, DType::Float32), b = Tensor::empty({4}, DType::Float32);
  Tensor out;
  TensorIter it = TensorIter::build("add", out, DType::Float32, {&a, &b});
  CHECK(out.sizes() == Dims{2, 3, 4});
  CHECK(it.ndim() == 2);  // inner 4 (b contiguous), outer 6 (b broadcast)
  CHECK(it.shape()[0] == 4);
  CHECK(it.shape()[1] == 6);
  CHECK(it.strides(2)[1] == 0);
  Tensor c = Tensor::empty({2, 3, 4}, DType::Float32), out2;
  TensorIter it2 = TensorIter::build("add", out2, DType::Float32, {&a, &c});
  CHECK(it2.ndim() == 1);
  CHECK(it2.shape()[0] == 24);
}

TEST_CASE("binary ops broadcast, promote and handle strided inputs") {
  Tensor a = arange_f(6).as_strided({2, 3}, {3, 1}, 0);
  Tensor b = arange_f(3, DType::Float64);
  Tensor r = ops::binary(BinaryOp::Add, a, b);
  CHECK(r.dtype() == DType::Float64);
  CHECK(r.item_double(4) == 4 + 1);
  Tensor at = a.as_strided({3, 2}, {1, 3}, 0);  // transpose
  Tensor s = ops::binary(BinaryOp::Mul, at, Scalar(2.0));
  CHECK(s.dtype() == DType::Float32);
  CHECK(s.item_double(1) == 6.0);  // at[0][1] = a[1][0] = 3
  Tensor i = arange_f(5, DType::Int64);
  Tensor q = ops::binary(BinaryOp::Div, i, Scalar(int64_t(2)));
  CHECK(q.dtype() == default_float_dtype());
  CHECK(q.item_double(3) == 1.5);
  Tensor fd = ops::binary(BinaryOp::FloorDiv, ops::binary(BinaryOp::Sub, i, Scalar(int64_t(2))), Scalar(int64_t(2)));
  CHECK(fd.item_double(1) == -1);  // -1 // 2 = -1 as in Python
  Tensor rm = ops::binary(BinaryOp::Remainder, Scalar(int64_t(-7)), Tensor(ops::cast(arange_f(4, DType::Int64), DType::Int64)).as_strided({1}, {1}, 3));
  CHECK(rm.item_double(0) == 2);  // -7 % 3 = 2
  CHECK_THROWS_WITH(ops::binary(BinaryOp::FloorDiv, i, Scalar(int64_t(0))), doctest::Contains("floor_divide: integer division by zero"));
  Tensor lt = ops::binary(BinaryOp::Lt, i, Scalar(2.5));
  CHECK(lt.dtype() == DType::Bool);
  CHECK(lt.item_double(2) == 1);
  CHECK(lt.item_double(3) == 0);
}

TEST_CASE("in-place and out= results are cast only when allowed") {
  Tensor i = arange_f(4, DType::Int64);
  CHECK_THROWS_WITH(ops::binary(BinaryOp::Add, i, Scalar(0.5), &i), doctest::Contains("result type float32 can't be cast to the desired output type int64"));
  Tensor f = arange_f(4, DType::Float32);
  ops::binary(BinaryOp::Add, f, arange_f(4, DType::Float64), &f);
  CHECK(f.dtype() == DType::Float32);
  CHECK(f.item_double(3) == 6);
  Tensor wrong = Tensor::empty({3}, DType::Float32);
  CHECK_THROWS_WITH(ops::binary(BinaryOp::Add, f, f, &wrong), doctest::Contains("does not match the result shape"));
}

TEST_CASE("unary ops: float results for integers, NaN handling") {
  Tensor i = arange_f(3, DType::Int32);
  Tensor e = ops::unary(UnaryOp::Exp, i);
  CHECK(e.dtype() == default_float_dtype());
  CHECK(e.item_double(1) == doctest::Approx(std::exp(1.0)).epsilon(1e-6));
  Tensor h = ops::unary(UnaryOp::Sqrt, arange_f(5, DType::Float16));
  CHECK(h.dtype() == DType::Float16);
  CHECK(h.item_double(4) == 2.0);
  Tensor n = Tensor::empty({2}, DType::Float32);
  n.data<float>()[0] = NAN;
  n.data<float>()[1] = -1;
  Tensor r = ops::unary(UnaryOp::Relu, n);
  CHECK(std::isnan(r.item_double(0)));
  CHECK(r.item_double(1) == 0);
  CHECK_THROWS_WITH(ops::unary(UnaryOp::Neg, Tensor::empty({2}, DType::Bool)), doctest::Contains("neg: not supported for bool"));
}

TEST_CASE("copy_ converts, broadcasts and handles overlap") {
  Tensor a = arange_f(6, DType::Float64);
  Tensor dst = Tensor::empty({2, 6}, DType::Int16);
  ops::copy_(dst, a);
  CHECK(dst.item_double(11) == 5);
  Tensor ov = arange_f(6);
  Tensor head = ov.as_strided({5}, {1}, 0), tail = ov.as_strided({5}, {1}, 1);
  ops::copy_(tail, head);  // x[2..6] = x[1..5]
  CHECK(ov.item_double(5) == 4);
  CHECK(ov.item_double(1) == 0);
}

TEST_CASE("caching allocator reuses blocks by size class") {
  CHECK(cpu_size_class(1) == 64);
  CHECK(cpu_size_class(4097) == 5120);
  CHECK(cpu_size_class(1 << 20) == (1 << 20));
  void* p = cpu_allocate(100000);
  cpu_free(p, 100000);
  auto before = cpu_allocator_stats();
  void* q = cpu_allocate(100001);  // same class
  auto after = cpu_allocator_stats();
  CHECK(q == p);
  CHECK(after.cache_hits == before.cache_hits + 1);
  cpu_free(q, 100001);
  cpu_empty_cache();
  CHECK(cpu_allocator_stats().cached_bytes == 0);
}

TEST_CASE("pointwise results do not depend on the thread count") {
  int old = get_num_threads();
  Tensor x = arange_f(1 << 20);
  set_num_threads(1);
  Tensor a = ops::unary(UnaryOp::Sin, x);
  set_num_threads(2);
  Tensor b = ops::unary(UnaryOp::Sin, x);
  CHECK(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
  set_num_threads(old);
}

TEST_CASE("parallel_for covers the range exactly once and propagates errors") {
  std::vector<int> hits(100000, 0);
  parallel_for(0, 100000, 1000, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) ++hits[i];
  });
  bool all_one = true;
  for (int h : hits) all_one = all_one && h == 1;
  CHECK(all_one);
  CHECK_THROWS_WITH(parallel_for(0, 100000, 1000, [](int64_t b, int64_t) {
                      if (b > 50000) TIDE_FAIL("boom: ", b);
                    }),
                    doctest::Contains("boom"));
}
