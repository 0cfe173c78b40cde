// Memory overlap (tensor/overlap.hpp): how two tensors' memory relates, elements sharing one
// address, and the writes that use them (TensorIter, out= of products, index ops). Expected
// values are NumPy's: every input read before anything is written.
#include <doctest/doctest.h>

#include <vector>

#include "../../tensor/ops/elementwise.hpp"
#include "../../tensor/ops/index.hpp"
#include "../../tensor/ops/linalg.hpp"
#include "../../tensor/overlap.hpp"
#include "helpers.hpp"

using namespace tide;
using test::error_of;
using test::iota;
using test::values;

namespace {

const char* kShared =
    ": unsupported operation: more than one element of the written-to tensor refers to a single memory "
    "location. Please clone() the tensor before performing the operation.";

// A view of t's storage (t's dtype) with these sizes, strides and offset in elements.
Tensor view(const Tensor& t, const Dims& sizes, const Dims& strides, int64_t offset) {
  return t.as_strided(sizes, strides, offset);
}

}  // namespace

TEST_CASE("mem_overlap: storages, address ranges, then the exact test") {
  Tensor a = iota({6}), b = iota({6});
  CHECK(mem_overlap(a, b) == MemOverlap::None);  // two storages
  CHECK(mem_overlap(a, a) == MemOverlap::Same);
  CHECK(mem_overlap(a, view(a, {6}, {1}, 0)) == MemOverlap::Same);
  CHECK(mem_overlap(a, view(a, {1, 6}, {7, 1}, 0)) == MemOverlap::Same);  // size-1 dims do not count
  CHECK(mem_overlap(a, Tensor()) == MemOverlap::None);
  CHECK(mem_overlap(a, view(a, {0}, {1}, 2)) == MemOverlap::None);  // empty
  CHECK(mem_overlap(view(a, {3}, {1}, 0), view(a, {3}, {1}, 3)) == MemOverlap::None);     // disjoint ranges
  CHECK(mem_overlap(view(a, {3}, {1}, 0), view(a, {3}, {1}, 1)) == MemOverlap::Partial);  // shifted
  CHECK(mem_overlap(view(a, {3}, {2}, 0), view(a, {3}, {2}, 1)) == MemOverlap::None);     // evens, odds
  Tensor m = iota({3, 3});
  Tensor mt = view(m, {3, 3}, {1, 3}, 0);
  CHECK(mem_overlap(m, mt) == MemOverlap::Partial);
  Tensor col0 = view(m, {3}, {3}, 0), col1 = view(m, {3}, {3}, 1), row1 = view(m, {3}, {1}, 3);
  CHECK(mem_overlap(col0, col1) == MemOverlap::None);  // ranges meet, elements do not
  CHECK(mem_overlap(col0, row1) == MemOverlap::Partial);
  CHECK(mem_overlap(col1, row1) == MemOverlap::Partial);
  CHECK(mem_overlap(view(m, {2}, {3}, 2), view(m, {2}, {1}, 3)) == MemOverlap::None);  // {2, 5} and {3, 4}
  // An expanded input against the row it repeats
  CHECK(mem_overlap(view(m, {2, 3}, {0, 1}, 3), row1) == MemOverlap::Partial);
}

TEST_CASE("mem_overlap: memory wrapped twice, and elements of other sizes") {
  std::vector<double> mem(4, 0.0);
  Tensor d1 = Tensor::from_blob(mem.data(), {4}, DType::Float64);
  Tensor d2 = Tensor::from_blob(mem.data(), {4}, DType::Float64);
  CHECK(mem_overlap(d1, d2) == MemOverlap::Same);
  CHECK(mem_overlap(d1, Tensor::from_blob(mem.data() + 1, {3}, DType::Float64)) == MemOverlap::Partial);
  CHECK(mem_overlap(view(d1, {2}, {1}, 0), Tensor::from_blob(mem.data() + 2, {2}, DType::Float64)) == MemOverlap::None);
  float* f = reinterpret_cast<float*>(mem.data());
  Tensor f_hi = Tensor::from_blob(f + 1, {1}, DType::Float32);  // bytes 4..7
  Tensor f_next = Tensor::from_blob(f + 2, {2}, DType::Float32);  // bytes 8..15
  Tensor d_first = view(d1, {1}, {1}, 0);                           // bytes 0..7
  CHECK(mem_overlap(d_first, f_hi) == MemOverlap::Partial);
  CHECK(mem_overlap(d_first, f_next) == MemOverlap::None);
  // float32 elements 1, 3, 5 (bytes 4..7, 12..15, 20..23) against float64 elements 1, 2 (8..23)
  Tensor f_odd = Tensor::from_blob(f + 1, {3}, DType::Float32, Dims{2});
  CHECK(mem_overlap(f_odd, view(d1, {2}, {1}, 1)) == MemOverlap::Partial);
  // float32 elements 0 and 2 (bytes 0..3, 8..11) against float64 element 1 at bytes 8..15: 8..11 shared
  Tensor f_even = Tensor::from_blob(f, {2}, DType::Float32, Dims{2});
  CHECK(mem_overlap(f_even, view(d1, {1}, {1}, 1)) == MemOverlap::Partial);
  // float32 elements 1 and 3 (bytes 4..7, 12..15) against float32 elements 0 and 2 read as pairs
  CHECK(mem_overlap(Tensor::from_blob(f + 1, {2}, DType::Float32, Dims{2}), f_even) == MemOverlap::None);
}

TEST_CASE("has_internal_overlap: stride 0 over more than one element, and colliding strides") {
  Tensor m = iota({3, 3});
  CHECK_FALSE(has_internal_overlap(m));
  CHECK_FALSE(has_internal_overlap(view(m, {3, 3}, {1, 3}, 0)));  // transposed
  CHECK_FALSE(has_internal_overlap(view(m, {}, {}, 4)));          // 0-dim
  CHECK(has_internal_overlap(view(m, {2, 3}, {0, 1}, 0)));         // expanded
  CHECK(has_internal_overlap(view(m, {3, 2}, {1, 0}, 0)));
  CHECK_FALSE(has_internal_overlap(view(m, {1, 3}, {0, 1}, 0)));   // stride 0 on a size-1 dim
  CHECK_FALSE(has_internal_overlap(view(m, {0, 3}, {0, 1}, 0)));   // empty
  CHECK_FALSE(has_internal_overlap(view(m, {3, 0}, {0, 1}, 0)));
  CHECK(has_internal_overlap(view(m, {3, 3}, {1, 1}, 0)));         // sliding windows
  CHECK(has_internal_overlap(view(m, {2, 3}, {2, 1}, 0)));         // (1,0) and (0,2) at 2
  CHECK(has_internal_overlap(view(m, {2, 2}, {2, 2}, 0)));         // one stride twice
  CHECK_FALSE(has_internal_overlap(view(m, {2, 2}, {3, 1}, 0)));   // 0, 1, 3, 4
  CHECK_FALSE(has_internal_overlap(view(m, {2, 2}, {1, 2}, 0)));   // 0, 2, 1, 3
  CHECK_FALSE(has_internal_overlap(view(m, {2, 2}, {4, 3}, 0)));   // 0, 3, 4, 7
  CHECK(has_internal_overlap(view(m, {2, 2, 2}, {4, 3, 1}, 0)));   // 4 = (1,0,0) = (0,1,1)
  CHECK(error_of([&] { check_no_internal_overlap("add_", view(m, {2, 3}, {0, 1}, 0)); }) ==
        std::string("add_") + kShared);
  CHECK(error_of([&] { check_no_internal_overlap("add_", view(m, {1, 3}, {0, 1}, 0)); }) == "(no error)");
}

TEST_CASE("reversed views (negative strides): ranges from the lowest address, exact tests on magnitudes") {
  Tensor a = iota({6}, DType::Float64);
  Tensor rev = view(a, {6}, {-1}, 5);  // a[::-1]
  CHECK(mem_overlap(a, rev) == MemOverlap::Partial);
  CHECK(mem_overlap(rev, view(a, {6}, {-1}, 5)) == MemOverlap::Same);
  CHECK(mem_overlap(view(a, {3}, {-1}, 2), view(a, {3}, {1}, 3)) == MemOverlap::None);   // a[2::-1], a[3:]
  CHECK(mem_overlap(view(a, {3}, {-1}, 3), view(a, {3}, {1}, 3)) == MemOverlap::Partial);  // both hold a[3]
  CHECK(mem_overlap(view(a, {3}, {-2}, 4), view(a, {3}, {2}, 1)) == MemOverlap::None);   // evens, odds
  Tensor m = iota({3, 3});
  CHECK_FALSE(has_internal_overlap(view(m, {3, 3}, {-3, -1}, 8)));  // m[::-1, ::-1]
  CHECK_FALSE(has_internal_overlap(view(m, {3, 3}, {1, -3}, 6)));   // m.T[:, ::-1]
  CHECK(has_internal_overlap(view(m, {2, 2}, {1, -1}, 1)));         // 1 = (0,0) = (1,1)
  // np.add(a[::-1], a, out=a): a is read before it is written
  ops::binary(BinaryOp::Add, rev, a, &a);
  CHECK(values(a) == std::vector<double>{5, 5, 5, 5, 5, 5});
  Tensor c = iota({4}, DType::Float64);
  Tensor c_rev = view(c, {4}, {-1}, 3);
  ops::copy_(c_rev, c);  // c[::-1] = c
  CHECK(values(c) == std::vector<double>{3, 2, 1, 0});
}

TEST_CASE("readable_input copies an input only when the write could change it first") {
  Tensor a = iota({4});
  Tensor other = iota({4});
  CHECK(readable_input(a, other, Reads::Any).same(other));
  Tensor alias = view(a, {4}, {1}, 0);
  CHECK(readable_input(a, alias, Reads::Elementwise).same(alias));  // element for element
  Tensor copy = readable_input(a, alias, Reads::Any);                // a product would read it all
  CHECK(copy.storage() != a.storage());
  CHECK(values(copy) == std::vector<double>{0, 1, 2, 3});
  Tensor shifted = readable_input(view(a, {3}, {1}, 1), view(a, {3}, {1}, 0), Reads::Elementwise);
  CHECK(shifted.storage() != a.storage());
  CHECK(values(shifted) == std::vector<double>{0, 1, 2});
}

TEST_CASE("pointwise writes read overlapping inputs first and refuse shared elements") {
  Tensor x = iota({5}, DType::Float64);
  Tensor hi = view(x, {4}, {1}, 1), lo = view(x, {4}, {1}, 0);
  ops::binary(BinaryOp::Add, hi, lo, &hi);  // np.add(x[1:5], x[0:4], out=x[1:5])
  CHECK(values(x) == std::vector<double>{0, 1, 3, 5, 7});
  Tensor m = iota({3, 3}, DType::Float64);
  ops::binary(BinaryOp::Add, m, view(m, {3, 3}, {1, 3}, 0), &m);  // np.add(a, a.T, out=a)
  CHECK(values(m) == std::vector<double>{0, 4, 8, 4, 8, 12, 8, 12, 16});
  Tensor c = iota({5}, DType::Float64);
  Tensor c_hi = view(c, {4}, {1}, 1);
  ops::copy_(c_hi, view(c, {4}, {1}, 0));
  CHECK(values(c) == std::vector<double>{0, 0, 1, 2, 3});
  Tensor u = iota({5}, DType::Float64);
  Tensor u_hi = view(u, {4}, {1}, 1);
  ops::unary(UnaryOp::Square, view(u, {4}, {1}, 0), &u_hi);
  CHECK(values(u) == std::vector<double>{0, 0, 1, 4, 9});
  Tensor base = iota({3});
  Tensor e = view(base, {2, 3}, {0, 1}, 0);
  CHECK(error_of([&] { ops::binary(BinaryOp::Add, iota({2, 3}), 1.0, &e); }) == std::string("add") + kShared);
  CHECK(error_of([&] { ops::copy_(e, iota({2, 3})); }) == std::string("copy_") + kShared);
  CHECK(error_of([&] { ops::where(ops::binary(BinaryOp::Gt, iota({2, 3}), 1.0), 1.0, 2.0, &e); }) ==
        std::string("where") + kShared);
  CHECK(values(base) == std::vector<double>{0, 1, 2});
  ops::fill_(e, Scalar(4.0));  // one value everywhere
  CHECK(values(base) == std::vector<double>{4, 4, 4});
}

TEST_CASE("products into an operand compute into a temporary; an expanded out is refused") {
  Tensor a = iota({2, 2}, DType::Float64);
  ops::mm(a, a, &a);  // np.matmul(a, a, out=a)
  CHECK(values(a) == std::vector<double>{2, 3, 6, 11});
  Tensor big = iota({3, 2}, DType::Float64);
  Tensor w = iota({2, 2}, DType::Float64);  // [[0, 1], [2, 3]]
  Tensor lower = view(big, {2, 2}, {2, 1}, 2);
  ops::mm(view(big, {2, 2}, {2, 1}, 0), w, &lower);  // big[1:3] = big[0:2] @ w
  CHECK(values(big) == std::vector<double>{0, 1, 2, 3, 6, 11});
  Tensor base = iota({2}, DType::Float64);
  Tensor e = view(base, {2, 2}, {0, 1}, 0);
  CHECK(error_of([&] { ops::mm(w, w, &e); }) == std::string("mm") + kShared);
  CHECK(values(base) == std::vector<double>{0, 1});
}

TEST_CASE("index writes read overlapping sources and indices first; shared elements refused") {
  Tensor x = iota({5}, DType::Float64);
  Tensor idx = Tensor::empty({3}, DType::Int64);
  for (int64_t i = 0; i < 3; ++i) idx.data<int64_t>()[i] = i + 2;  // 1-based 2, 3, 4
  ops::scatter_(x, 0, idx, TensorOrScalar(view(x, {3}, {1}, 0)));
  CHECK(values(x) == std::vector<double>{0, 0, 1, 2, 4});
  Tensor y = iota({5}, DType::Float64);
  ops::index_add_(y, 0, idx, view(y, {3}, {1}, 0));  // np.add.at(y, [1, 2, 3], y[0:3].copy())
  CHECK(values(y) == std::vector<double>{0, 1, 3, 5, 4});
  // The index is a view of the tensor written: {2, 1, 1, 9} scattered by its own first two
  Tensor s = Tensor::empty({4}, DType::Int64);
  const int64_t init[] = {2, 1, 1, 9};
  for (int64_t i = 0; i < 4; ++i) s.data<int64_t>()[i] = init[i];
  Tensor src = Tensor::empty({2}, DType::Int64);
  src.data<int64_t>()[0] = 5;
  src.data<int64_t>()[1] = 7;
  ops::scatter_(s, 0, view(s, {2}, {1}, 0), TensorOrScalar(src));
  CHECK(values(s) == std::vector<double>{7, 5, 1, 9});
  Tensor base = iota({3}, DType::Float64);
  Tensor e = view(base, {2, 3}, {0, 1}, 0);
  Tensor one = Tensor::empty({1}, DType::Int64);
  one.data<int64_t>()[0] = 1;
  CHECK(error_of([&] { ops::index_put_(e, {one}, iota({3}, DType::Float64)); }) == std::string("index_put") + kShared);
  CHECK(error_of([&] { ops::masked_fill_(e, ops::binary(BinaryOp::Gt, iota({3}), 0.0), TensorOrScalar(1.0)); }) ==
        std::string("masked_fill") + kShared);
  CHECK(values(base) == std::vector<double>{0, 1, 2});
}
