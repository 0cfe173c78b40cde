// Shape ops: views share storage and have the right strides; copies do not alias; errors
// name the op and the shapes.
#include <doctest/doctest.h>

#include <numeric>
#include <string>
#include <vector>

#include "../../tensor/ops/elementwise.hpp"
#include "../../tensor/ops/shape.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::values;
using tide::test::error_of;
using tide::test::contains;
using tide::test::iota;

TEST_CASE("view shares storage and infers -1") {
  Tensor x = iota({3, 4});
  Tensor v = ops::view(x, {2, -1});
  CHECK(v.sizes() == Dims{2, 6});
  CHECK(v.storage() == x.storage());
  CHECK(v.is_contiguous());
  // Writing through the view changes the base.
  Tensor e = ops::select(ops::select(v, 0, 1), 0, 5);
  ops::fill_(e, Scalar(100.0));
  CHECK(x.item_double(11) == 100.0);
}

TEST_CASE("view errors: incompatible strides, bad sizes, two -1") {
  Tensor x = ops::transpose(iota({3, 4}), 0, 1);  // (4, 3) with strides (1, 4)
  std::string msg = error_of([&] { ops::view(x, {12}); });
  CHECK(contains(msg, "view: size {12} is not compatible with the input's strides; use reshape"));
  CHECK(contains(error_of([&] { ops::view(iota({3, 4}), {5, -1}); }), "view: shape {5,-1} is invalid for input of size 12"));
  CHECK(contains(error_of([&] { ops::view(iota({3, 4}), {-1, -1}); }), "only one size can be inferred"));
  CHECK(contains(error_of([&] { ops::view(iota({3, 4}), {5}); }), "invalid for input of size 12"));
  CHECK(contains(error_of([&] { ops::reshape(iota({0, 4}), {0, -1}); }), "cannot infer the size of -1"));
  // A transposed tensor can still be viewed when the split keeps each chunk contiguous.
  Tensor ok = ops::view(x, {2, 2, 3});
  CHECK(ok.strides() == Dims{2, 1, 4});
  CHECK(values(ok) == values(ops::reshape(x.contiguous(), {2, 2, 3})));
}

TEST_CASE("reshape views when it can and copies otherwise") {
  Tensor x = iota({2, 3});
  Tensor r = ops::reshape(x, {3, 2});
  CHECK(r.storage() == x.storage());
  Tensor tt = ops::t(x);
  Tensor c = ops::reshape(tt, {6});
  CHECK(c.storage() != x.storage());
  CHECK(values(c) == std::vector<double>{0, 3, 1, 4, 2, 5});
  CHECK(ops::reshape(iota({1}), {}).dim() == 0);
  CHECK(ops::reshape(Tensor::empty({}, DType::Float32), {1, 1, 1}).sizes() == Dims{1, 1, 1});
}

TEST_CASE("transpose, permute, t, reverse_dims and movedim give views with swapped strides") {
  Tensor x = iota({2, 3, 4});
  Tensor tr = ops::transpose(x, 0, 2);
  CHECK(tr.sizes() == Dims{4, 3, 2});
  CHECK(tr.strides() == Dims{1, 4, 12});
  CHECK(tr.storage() == x.storage());
  CHECK(!tr.is_contiguous());
  Tensor p = ops::permute(x, {2, 0, 1});
  CHECK(p.sizes() == Dims{4, 2, 3});
  CHECK(p.strides() == Dims{1, 12, 4});
  CHECK(ops::reverse_dims(x).strides() == Dims{1, 4, 12});
  CHECK(ops::t(iota({2, 3})).strides() == Dims{1, 3});
  CHECK(ops::t(iota({5})).sizes() == Dims{5});
  CHECK(contains(error_of([&] { ops::t(x); }), "t: expects a tensor with at most 2 dims"));
  CHECK(contains(error_of([&] { ops::permute(x, {0, 0, 1}); }), "permute: dim 1 appears more than once"));
  CHECK(contains(error_of([&] { ops::permute(x, {0, 1}); }), "permute: the tensor has 3 dims"));
  CHECK(contains(error_of([&] { ops::transpose(x, 0, 3); }), "transpose: dim 4 is out of range for a tensor of 3 dims"));
  Tensor m = ops::movedim(x, {0}, {2});
  CHECK(m.sizes() == Dims{3, 4, 2});
  CHECK(m.strides() == Dims{4, 1, 12});
  // transpose(-1, -2) swaps the last two.
  CHECK(ops::transpose(x, -1, -2).sizes() == Dims{2, 4, 3});
}

TEST_CASE("squeeze and unsqueeze") {
  Tensor x = iota({1, 3, 1, 2});
  CHECK(ops::squeeze(x).sizes() == Dims{3, 2});
  CHECK(ops::squeeze(x, {2}).sizes() == Dims{1, 3, 2});
  CHECK(ops::squeeze(x, {1}).sizes() == Dims{1, 3, 1, 2});  // not size 1: unchanged
  CHECK(ops::squeeze(x).storage() == x.storage());
  Tensor y = iota({3, 2});
  CHECK(ops::unsqueeze(y, 0).sizes() == Dims{1, 3, 2});
  CHECK(ops::unsqueeze(y, 2).sizes() == Dims{3, 2, 1});
  CHECK(ops::unsqueeze(y, -1).sizes() == Dims{3, 2, 1});
  CHECK(ops::unsqueeze(y, 1).strides() == Dims{2, 2, 1});
  CHECK(ops::unsqueeze(Tensor::empty({}, DType::Float32), 0).sizes() == Dims{1});
  CHECK(contains(error_of([&] { ops::unsqueeze(y, 3); }), "unsqueeze: dim 4 is out of range"));
}

TEST_CASE("expand gives stride 0 and errors name the sizes") {
  Tensor x = iota({3, 1});
  Tensor e = ops::expand(x, {2, 3, 4});
  CHECK(e.sizes() == Dims{2, 3, 4});
  CHECK(e.strides() == Dims{0, 1, 0});
  CHECK(e.storage() == x.storage());
  CHECK(values(e)[5] == 1.0);
  CHECK(ops::expand(x, {-1, 5}).sizes() == Dims{3, 5});
  CHECK(ops::expand_as(x, iota({3, 7})).sizes() == Dims{3, 7});
  std::string msg = error_of([&] { ops::expand(iota({2, 3}), {2, 4}); });
  CHECK(contains(msg, "expand: the expanded size 4 must match the existing size 3 at dim 2"));
  CHECK(contains(msg, "{2,3}"));
  CHECK(contains(error_of([&] { ops::expand(iota({2, 3}), {3}); }), "expand: the tensor has 2 dims"));
  CHECK(contains(error_of([&] { ops::expand(iota({3}), {-1, 3}); }), "-1 is not allowed"));
}

TEST_CASE("flatten and unflatten") {
  Tensor x = iota({2, 3, 4});
  CHECK(ops::flatten(x).sizes() == Dims{24});
  CHECK(ops::flatten(x, 1).sizes() == Dims{2, 12});
  CHECK(ops::flatten(x, 0, 1).sizes() == Dims{6, 4});
  CHECK(ops::flatten(x, 1).storage() == x.storage());
  CHECK(ops::flatten(Tensor::empty({}, DType::Float32)).sizes() == Dims{1});
  CHECK(contains(error_of([&] { ops::flatten(x, 2, 1); }), "flatten: start dim 3 must not come after end dim 2"));
  Tensor u = ops::unflatten(ops::flatten(x), 0, {2, -1, 4});
  CHECK(u.sizes() == Dims{2, 3, 4});
  CHECK(values(u) == values(x));
}

TEST_CASE("narrow, select and slice are views") {
  Tensor x = iota({4, 5});
  Tensor n = ops::narrow(x, 1, 1, 3);
  CHECK(n.sizes() == Dims{4, 3});
  CHECK(n.offset() == 1);
  CHECK(values(ops::select(n, 0, 1)) == std::vector<double>{6, 7, 8});
  Tensor s = ops::select(x, 0, -1);
  CHECK(values(s) == std::vector<double>{15, 16, 17, 18, 19});
  CHECK(s.storage() == x.storage());
  Tensor sl = ops::slice(x, 1, 0, 5, 2);
  CHECK(sl.sizes() == Dims{4, 3});
  CHECK(sl.strides() == Dims{5, 2});
  CHECK(ops::slice(x, 0, 4, 4).sizes() == Dims{0, 5});
  CHECK(ops::select(iota({3}), 0, 2).dim() == 0);
  CHECK(contains(error_of([&] { ops::narrow(x, 0, 2, 3); }), "narrow:"));
  CHECK(contains(error_of([&] { ops::select(x, 0, 4); }), "select: index 4"));
  // Writing through a narrow view changes the base.
  ops::fill_(n, Scalar(int64_t(-1)));
  CHECK(x.item_double(1) == -1);
  CHECK(x.item_double(0) == 0);
}

TEST_CASE("split, chunk and unbind return views") {
  Tensor x = iota({7, 2});
  auto parts = ops::split(x, 3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[2].sizes() == Dims{1, 2});
  CHECK(parts[1].storage() == x.storage());
  auto sz = ops::split_with_sizes(x, {2, 5});
  CHECK(sz[1].sizes() == Dims{5, 2});
  CHECK(contains(error_of([&] { ops::split_with_sizes(x, {2, 2}); }), "split: split sizes {2,2} sum to 4 but dim 1 has size 7"));
  auto ch = ops::chunk(x, 3);
  REQUIRE(ch.size() == 3);
  CHECK(ch[0].size(0) == 3);
  CHECK(ch[2].size(0) == 1);
  CHECK(ops::chunk(iota({6}), 4).size() == 3);  // as torch: chunks of 2
  CHECK(ops::chunk(iota({0}), 3).size() == 1);  // one empty chunk, as split (torch: 3)
  auto ub = ops::unbind(x, 1);
  REQUIRE(ub.size() == 2);
  CHECK(values(ub[1]) == std::vector<double>{1, 3, 5, 7, 9, 11, 13});
}

TEST_CASE("cat and stack") {
  Tensor a = iota({2, 3}), b = iota({1, 3}, DType::Int64);
  Tensor c = ops::cat({a, b}, 0);
  CHECK(c.sizes() == Dims{3, 3});
  CHECK(c.dtype() == DType::Float32);
  CHECK(values(c) == std::vector<double>{0, 1, 2, 3, 4, 5, 0, 1, 2});
  Tensor d = ops::cat({a, a}, -1);
  CHECK(d.sizes() == Dims{2, 6});
  CHECK(values(ops::select(d, 0, 1)) == std::vector<double>{3, 4, 5, 3, 4, 5});
  // int32 + int64 -> int64; float32 + float64 -> float64.
  CHECK(ops::cat({iota({2}, DType::Int32), iota({2}, DType::Int64)}).dtype() == DType::Int64);
  CHECK(ops::cat({iota({2}), iota({2}, DType::Float64)}).dtype() == DType::Float64);
  // Empty 1-D tensors are skipped, as torch.cat does.
  CHECK(ops::cat({iota({0}), a}, 0).sizes() == Dims{2, 3});
  CHECK(contains(error_of([&] { ops::cat({a, iota({2, 4})}, 0); }), "cat: sizes of tensors must match except in dim 1"));
  CHECK(contains(error_of([&] { ops::cat({a, iota({3})}, 0); }), "cat: tensors must have the same number of dims"));
  CHECK(contains(error_of([&] { ops::cat({}, 0); }), "cat: expected a non-empty list"));
  Tensor s = ops::stack({a, a, a}, 1);
  CHECK(s.sizes() == Dims{2, 3, 3});
  CHECK(ops::stack({a, a}, 2).sizes() == Dims{2, 3, 2});
  CHECK(ops::stack({a, a}, 0).sizes() == Dims{2, 2, 3});
  CHECK(contains(error_of([&] { ops::stack({a, iota({3, 2})}); }), "stack: expects each tensor to be equal size"));
  // The result is a new tensor.
  CHECK(c.storage() != a.storage());
}

TEST_CASE("repeat and tile") {
  Tensor x = iota({2, 3});
  Tensor r = ops::repeat(x, {2, 2});
  CHECK(r.sizes() == Dims{4, 6});
  CHECK(values(ops::select(r, 0, 3)) == std::vector<double>{3, 4, 5, 3, 4, 5});
  Tensor r3 = ops::repeat(iota({3}), {2, 1, 2});
  CHECK(r3.sizes() == Dims{2, 1, 6});
  CHECK(values(r3) == std::vector<double>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  CHECK(contains(error_of([&] { ops::repeat(x, {2}); }), "repeat: the number of repeats (1) can't be smaller"));
  CHECK(ops::tile(x, {2}).sizes() == Dims{2, 6});
  CHECK(ops::repeat(x, {0, 1}).numel() == 0);
  // From a non-contiguous source.
  Tensor rt = ops::repeat(ops::t(x), {1, 2});
  CHECK(values(ops::select(rt, 0, 0)) == std::vector<double>{0, 3, 0, 3});
}

TEST_CASE("flip copies with reversed order") {
  Tensor x = iota({2, 3});
  Tensor f = ops::flip(x, {1});
  CHECK(values(f) == std::vector<double>{2, 1, 0, 5, 4, 3});
  CHECK(f.storage() != x.storage());
  CHECK(values(ops::flip(x, {0, 1})) == std::vector<double>{5, 4, 3, 2, 1, 0});
  CHECK(values(ops::flip(ops::t(x), {0})) == std::vector<double>{2, 5, 1, 4, 0, 3});
  CHECK(values(ops::flip(iota({4}, DType::Int16), {0})) == std::vector<double>{3, 2, 1, 0});
  CHECK(contains(error_of([&] { ops::flip(x, {0, 0}); }), "flip: dim 1 appears more than once"));
  // A large flip runs in parallel and stays correct.
  Tensor big = iota({300, 257}, DType::Float64);
  Tensor fb = ops::flip(big, {0, 1});
  CHECK(fb.item_double(0) == double(300 * 257 - 1));
  CHECK(fb.item_double(300 * 257 - 1) == 0.0);
}

TEST_CASE("view_strides follows PyTorch's rule") {
  Dims out;
  CHECK(ops::view_strides({2, 3}, {3, 1}, {6}, out));
  CHECK(out == Dims{1});
  CHECK(!ops::view_strides({2, 3}, {1, 2}, {6}, out));
  CHECK(ops::view_strides({2, 1, 3}, {3, 100, 1}, {2, 3}, out));
  CHECK(out == Dims{3, 1});
  CHECK(ops::view_strides({4, 3}, {0, 1}, {4, 3, 1}, out));  // expanded dims can be split
}
