// Index ops: values as PyTorch gives them (translated to 1-based index values), errors
// that name the index, the dim and the size, and writes that land in the base tensor.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include "../../tensor/ops/elementwise.hpp"
#include "../../tensor/ops/index.hpp"
#include "../../tensor/ops/shape.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::values;
using tide::test::error_of;
using tide::test::contains;
using tide::test::iota;

namespace {

Tensor ints(const std::vector<int64_t>& v, Dims shape = {}) {
  if (shape.empty()) shape = Dims{int64_t(v.size())};
  Tensor t = Tensor::empty(shape, DType::Int64);
  for (size_t i = 0; i < v.size(); ++i) t.data<int64_t>()[i] = v[i];
  return t;
}

Tensor bools(const std::vector<int>& v, Dims shape = {}) {
  if (shape.empty()) shape = Dims{int64_t(v.size())};
  Tensor t = Tensor::empty(shape, DType::Bool);
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i] != 0;
  return t;
}

}  // namespace

TEST_CASE("wrap_index: 1-based, negative from the end, errors name index, dim and size") {
  CHECK(ops::wrap_index("index", 1, 0, 4) == 0);
  CHECK(ops::wrap_index("index", 4, 0, 4) == 3);
  CHECK(ops::wrap_index("index", -1, 0, 4) == 3);
  CHECK(ops::wrap_index("index", -4, 0, 4) == 0);
  CHECK(error_of([] { ops::wrap_index("index", 5, 0, 4); }) ==
        "index: index 5 is out of range for dim 1 of size 4 (valid 1..4 or -4..-1)");
  CHECK(contains(error_of([] { ops::wrap_index("index", 0, 1, 4); }), "index 0 is out of range for dim 2 of size 4"));
  CHECK(contains(error_of([] { ops::wrap_index("index", -5, 0, 4); }), "index -5"));
  CHECK(contains(error_of([] { ops::wrap_index("index", 1, 0, 0); }), "of size 0"));
}

TEST_CASE("index_select") {
  Tensor x = iota({3, 4});
  Tensor r = ops::index_select(x, 0, ints({3, 1, -1}));
  CHECK(r.sizes() == Dims{3, 4});
  CHECK(values(r) == std::vector<double>{8, 9, 10, 11, 0, 1, 2, 3, 8, 9, 10, 11});
  Tensor c = ops::index_select(x, 1, ints({2, 2}));
  CHECK(c.sizes() == Dims{3, 2});
  CHECK(values(c) == std::vector<double>{1, 1, 5, 5, 9, 9});
  CHECK(r.storage() != x.storage());
  // Any integer dtype; a 0-d index keeps the dim with size 1.
  Tensor i32 = Tensor::empty({1}, DType::Int32);
  i32.data<int32_t>()[0] = 2;
  CHECK(values(ops::index_select(x, 0, i32)) == std::vector<double>{4, 5, 6, 7});
  CHECK(ops::index_select(x, 0, ints({2}, Dims{})).sizes() == Dims{1, 4});
  CHECK(error_of([&] { ops::index_select(x, 1, ints({1, 5})); }) ==
        "index_select: index 5 is out of range for dim 2 of size 4 (valid 1..4 or -4..-1)");
  CHECK(contains(error_of([&] { ops::index_select(x, 0, iota({2})); }), "index tensors must have an integer dtype"));
  CHECK(contains(error_of([&] { ops::index_select(x, 0, ints({1, 2, 3, 1}, {2, 2})); }), "must be a 0-d or 1-D tensor"));
  CHECK(ops::index_select(x, 0, ints({})).sizes() == Dims{0, 4});
}

TEST_CASE("gather") {
  // torch.gather(t, 1, [[0, 0], [1, 0]]) on [[1, 2], [3, 4]] = [[1, 1], [4, 3]]
  Tensor t = iota({2, 2});  // [[0, 1], [2, 3]]
  Tensor g = ops::gather(t, 1, ints({1, 1, 2, 1}, {2, 2}));
  CHECK(values(g) == std::vector<double>{0, 0, 3, 2});
  Tensor g0 = ops::gather(iota({3, 2}), 0, ints({3, 1}, {1, 2}));
  CHECK(g0.sizes() == Dims{1, 2});
  CHECK(values(g0) == std::vector<double>{4, 1});
  CHECK(error_of([&] { ops::gather(t, 1, ints({1, 3}, {1, 2})); }) ==
        "gather: index 3 is out of range for dim 2 of size 2 (valid 1..2 or -2..-1)");
  CHECK(contains(error_of([&] { ops::gather(t, 0, ints({1, 1, 1}, {1, 3})); }), "is larger than the input"));
  CHECK(contains(error_of([&] { ops::gather(t, 0, ints({1, 1})); }), "index must have as many dims as the input"));
  // Large gathers run in parallel.
  Tensor big = iota({1000, 100});
  Tensor idx = Tensor::empty({1000, 100}, DType::Int64);
  for (int64_t i = 0; i < idx.numel(); ++i) idx.data<int64_t>()[i] = 100 - (i % 100);
  Tensor gb = ops::gather(big, 1, idx);
  CHECK(gb.item_double(0) == 99);
  CHECK(gb.item_double(99999) == 99900);
}

TEST_CASE("scatter, scatter_ and scatter_add") {
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  ops::fill_(x, Scalar(0.0));
  Tensor src = iota({2, 3});
  ops::scatter_(x, 1, ints({3, 1, 2, 1}, {2, 2}), TensorOrScalar(src));
  CHECK(values(x) == std::vector<double>{1, 0, 0, 4, 3, 0});
  Tensor y = ops::scatter(x, 0, ints({2, 2, 2}, {1, 3}), TensorOrScalar(Scalar(9.0)));
  CHECK(values(y) == std::vector<double>{1, 0, 0, 9, 9, 9});
  CHECK(values(x) == std::vector<double>{1, 0, 0, 4, 3, 0});  // scatter copies
  uint32_t v0 = x.storage()->version();
  ops::scatter_(x, 1, ints({1}, {1, 1}), TensorOrScalar(Scalar(5.0)));
  CHECK(x.storage()->version() > v0);
  Tensor acc = Tensor::empty({3}, DType::Int64);
  ops::fill_(acc, Scalar(int64_t(0)));
  ops::scatter_add_(acc, 0, ints({1, 1, 3, 1}), ints({1, 2, 3, 4}));
  CHECK(values(acc) == std::vector<double>{7, 0, 3});
  CHECK(contains(error_of([&] { ops::scatter_(x, 1, ints({4}, {1, 1}), TensorOrScalar(Scalar(1.0))); }),
                 "scatter: index 4 is out of range for dim 2 of size 3"));
  CHECK(contains(error_of([&] { ops::scatter_(x, 0, ints({1, 1}, {1, 2}), TensorOrScalar(iota({1, 1}))); }),
                 "is larger than src"));
}

TEST_CASE("advanced indexing: one index tensor") {
  Tensor x = iota({4, 3});
  Tensor r = ops::index(x, {ints({4, 1})});
  CHECK(r.sizes() == Dims{2, 3});
  CHECK(values(r) == std::vector<double>{9, 10, 11, 0, 1, 2});
  // A 2-D index gives idx.shape + rest.
  Tensor r2 = ops::index(x, {ints({1, 2, 3, 4}, {2, 2})});
  CHECK(r2.sizes() == Dims{2, 2, 3});
  // On the second dim (x[:, idx]).
  Tensor r3 = ops::index(x, {Tensor(), ints({3, 3})});
  CHECK(r3.sizes() == Dims{4, 2});
  CHECK(values(r3) == std::vector<double>{2, 2, 5, 5, 8, 8, 11, 11});
  CHECK(error_of([&] { ops::index(x, {ints({5})}); }) ==
        "index: index 5 is out of range for dim 1 of size 4 (valid 1..4 or -4..-1)");
}

TEST_CASE("advanced indexing: several index tensors broadcast; placement follows NumPy") {
  Tensor x = iota({2, 3, 4});
  // x[[0, 1], :, [3, 2]] in Python: indexed dims not adjacent -> B first: shape (2, 3).
  Tensor a = ops::index(x, {ints({1, 2}), Tensor(), ints({4, 3})});
  CHECK(a.sizes() == Dims{2, 3});
  CHECK(values(a) == std::vector<double>{3, 7, 11, 14, 18, 22});
  // x[:, [0, 2], [1, 1]]: adjacent -> (2, 2) in place of dims 2, 3.
  Tensor b = ops::index(x, {Tensor(), ints({1, 3}), ints({2, 2})});
  CHECK(b.sizes() == Dims{2, 2});
  CHECK(values(b) == std::vector<double>{1, 9, 13, 21});
  // Broadcasting (2,1) with (3,) -> (2,3).
  Tensor c = ops::index(iota({3, 3}), {ints({1, 3}, {2, 1}), ints({1, 2, 3})});
  CHECK(c.sizes() == Dims{2, 3});
  CHECK(values(c) == std::vector<double>{0, 1, 2, 6, 7, 8});
  CHECK(contains(error_of([&] { ops::index(x, {ints({1, 2}), ints({1, 2, 3})}); }), "cannot be broadcast"));
  CHECK(contains(error_of([&] { ops::index(x, {ints({1}), ints({1}), ints({1}), ints({1})}); }), "too many indices"));
  // dim labels map messages back to the dims a script named.
  std::vector<int> labels = {1, 2};
  CHECK(contains(error_of([&] { ops::index(iota({3, 4}), {ints({9})}, &labels); }), "for dim 2 of size 3"));
}

TEST_CASE("mask indexing and masked ops") {
  Tensor x = iota({2, 3});
  Tensor m = bools({1, 0, 1, 0, 0, 1}, {2, 3});
  CHECK(values(ops::masked_select(x, m)) == std::vector<double>{0, 2, 5});
  CHECK(values(ops::index(x, {m})) == std::vector<double>{0, 2, 5});
  // A mask over the first dim selects rows.
  Tensor rows = ops::index(x, {bools({0, 1})});
  CHECK(rows.sizes() == Dims{1, 3});
  CHECK(values(rows) == std::vector<double>{3, 4, 5});
  CHECK(error_of([&] { ops::index(x, {bools({1, 0, 1})}); }) ==
        "index: the shape of the mask {3} does not match the shape {2} of the indexed tensor at dim 1");
  // masked_select broadcasts.
  CHECK(values(ops::masked_select(x, bools({0, 1, 1}))) == std::vector<double>{1, 2, 4, 5});
  Tensor f = ops::masked_fill(x, m, TensorOrScalar(Scalar(-1.0)));
  CHECK(values(f) == std::vector<double>{-1, 1, -1, 3, 4, -1});
  CHECK(values(x)[0] == 0);
  Tensor xi = iota({3}, DType::Int32);
  ops::masked_fill_(xi, bools({0, 1, 0}), TensorOrScalar(Scalar(7.9)));
  CHECK(xi.dtype() == DType::Int32);
  CHECK(values(xi) == std::vector<double>{0, 7, 2});
  CHECK(contains(error_of([&] { ops::masked_fill(x, iota({2, 3}), TensorOrScalar(Scalar(1.0))); }),
                 "masked_fill: expected a bool mask, got float32"));
  CHECK(contains(error_of([&] { ops::masked_fill_(x, bools({1, 0}), TensorOrScalar(Scalar(1.0))); }),
                 "masked_fill: mask of shape {2} cannot be broadcast"));
}

TEST_CASE("nonzero is 1-based") {
  Tensor x = Tensor::empty({2, 3}, DType::Float32);
  float v[6] = {0, 1.5f, 0, -2, 0, 0};
  for (int i = 0; i < 6; ++i) x.data<float>()[i] = v[i];
  Tensor nz = ops::nonzero(x);
  CHECK(nz.sizes() == Dims{2, 2});
  CHECK(nz.dtype() == DType::Int64);
  CHECK(values(nz) == std::vector<double>{1, 2, 2, 1});
  auto cols = ops::nonzero_tuple(x);
  REQUIRE(cols.size() == 2);
  CHECK(values(cols[0]) == std::vector<double>{1, 2});
  CHECK(values(cols[1]) == std::vector<double>{2, 1});
  CHECK(ops::count_nonzero(x) == 2);
  CHECK(ops::nonzero(ops::t(x)).sizes() == Dims{2, 2});
  CHECK(values(ops::nonzero(ops::t(x))) == std::vector<double>{1, 2, 2, 1});
  CHECK(ops::nonzero(iota({0})).sizes() == Dims{0, 1});
}

TEST_CASE("index_put_ writes into the base; accumulate adds duplicates") {
  Tensor x = iota({3, 2});
  Tensor row = ops::select(x, 0, 0);  // a view that must see the write
  uint32_t v0 = x.storage()->version();
  Tensor val = Tensor::empty({}, DType::Float32);
  ops::fill_(val, Scalar(-1.0));
  ops::index_put_(x, {ints({1, 3})}, val);
  CHECK(values(x) == std::vector<double>{-1, -1, 2, 3, -1, -1});
  CHECK(values(row) == std::vector<double>{-1, -1});
  CHECK(x.storage()->version() > v0);
  // Values broadcast to the indexed shape (2, 2) and convert to x's dtype.
  ops::index_put_(x, {ints({2, 1})}, ints({7, 8}));
  CHECK(values(x) == std::vector<double>{7, 8, 7, 8, -1, -1});
  CHECK(contains(error_of([&] { ops::index_put_(x, {ints({1})}, ints({1, 2, 3})); }), "cannot be broadcast to the indexed shape {1,2}"));
  // Masks.
  Tensor y = iota({2, 2});
  ops::index_put_(y, {bools({1, 0, 0, 1}, {2, 2})}, ints({10, 20}));
  CHECK(values(y) == std::vector<double>{10, 1, 2, 20});
  // accumulate
  Tensor z = Tensor::empty({3}, DType::Float64);
  ops::fill_(z, Scalar(0.0));
  Tensor one = Tensor::empty({}, DType::Float64);
  ops::fill_(one, Scalar(1.0));
  ops::index_put_(z, {ints({1, 1, 3, 1})}, one, true);
  CHECK(values(z) == std::vector<double>{3, 0, 1});
  // Out-of-range values never write.
  CHECK(contains(error_of([&] { ops::index_put_(z, {ints({1, 4})}, one); }), "index 4 is out of range for dim 1 of size 3"));
  CHECK(values(z) == std::vector<double>{3, 0, 1});
}

TEST_CASE("index_add_, index_fill_ and take") {
  Tensor x = Tensor::empty({3, 2}, DType::Float32);
  ops::fill_(x, Scalar(0.0));
  ops::index_add_(x, 0, ints({1, 3, 1}), iota({3, 2}));
  CHECK(values(x) == std::vector<double>{4, 6, 0, 0, 2, 3});
  ops::index_add_(x, 1, ints({2}), iota({3, 1}), Scalar(2.0));
  CHECK(values(x) == std::vector<double>{4, 6, 0, 2, 2, 7});
  CHECK(contains(error_of([&] { ops::index_add_(x, 0, ints({1}), iota({2, 2})); }), "index_add: src must have shape {1,2}"));
  ops::index_fill_(x, 1, ints({-1}), Scalar(9.0));
  CHECK(values(x) == std::vector<double>{4, 9, 0, 9, 2, 9});
  Tensor t = ops::take(iota({2, 3}), ints({1, 6, -2}));
  CHECK(values(t) == std::vector<double>{0, 5, 4});
  CHECK(ops::take(iota({2, 3}), ints({1, 2, 3, 4}, {2, 2})).sizes() == Dims{2, 2});
  CHECK(contains(error_of([&] { ops::take(iota({2, 3}), ints({7})); }), "take: index 7 is out of range for dim 1 of size 6"));
}
