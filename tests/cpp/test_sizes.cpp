// Tests of the overflow-checked size arithmetic (tensor.hpp): checked_mul / checked_add, the
// extent invariant, numel and strides of zero-element shapes, quote_user, and the engine
// paths that rest on them (creation, views, from_blob, chunk, eye, printing).
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "../../tensor/dlpack.hpp"
#include "../../tensor/ops/creation.hpp"
#include "../../tensor/ops/shape.hpp"
#include "../../tensor/print.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::error_of;

namespace {
constexpr int64_t kBig = int64_t(1) << 62;
const std::string kTooLarge = " is too large (its byte size or strides would pass 2^63-1)";
}  // namespace

TEST_CASE("checked_mul and checked_add: exact results, or an error naming the op and the value") {
  CHECK(checked_mul("op", 3, 4, "x") == 12);
  CHECK(checked_mul("op", INT64_MAX, 1, "x") == INT64_MAX);
  CHECK(checked_mul("op", -(int64_t(1) << 62), 2, "x") == INT64_MIN);
  CHECK(checked_add("op", INT64_MAX - 1, 1, "x") == INT64_MAX);
  CHECK(error_of([] { checked_mul("repeat", kBig, 2, "size ", kBig, " repeated 2 times"); }) ==
        "repeat: size 4611686018427387904 repeated 2 times is too large (more than 2^63-1)");
  CHECK(error_of([] { checked_add("cat", INT64_MAX, 1, "the sum of ", Dims{1, 2}); }) ==
        "cat: the sum of {1,2} is too large (more than 2^63-1)");
}

TEST_CASE("check_extent: the byte size and the contiguous byte strides must fit in int64") {
  check_extent("op", {}, DType::Float64);
  check_extent("op", {0, int64_t(1) << 59}, DType::Float64);  // 2^62 bytes of strides
  check_extent("op", {INT64_MAX, 0, 0}, DType::Float64);     // the first size is in no stride
  check_extent("op", {int64_t(1) << 60}, DType::Float32);
  CHECK(error_of([] { check_extent("op", {0, int64_t(1) << 61}, DType::Float32); }) ==
        "op: shape {0,2305843009213693952} of float32" + kTooLarge);
  CHECK(error_of([] { check_extent("op", {int64_t(1) << 61}, DType::Float32); }) ==
        "op: shape {2305843009213693952} of float32" + kTooLarge);
  CHECK(error_of([] { check_extent("zeros", {0, kBig, kBig}, DType::Bool); }) ==
        "zeros: shape {0,4611686018427387904,4611686018427387904} of bool" + kTooLarge);
  CHECK(error_of([] { check_extent("op", {2, -3}, DType::Bool); }) == "op: sizes must be non-negative, got -3 in shape {2,-3}");
}

TEST_CASE("shape_numel is 0 whenever a size is 0, whatever the order of the sizes") {
  CHECK(shape_numel({}) == 1);
  CHECK(shape_numel({2, 3, 4}) == 24);
  CHECK(shape_numel({kBig, kBig, 0}) == 0);
  CHECK(shape_numel({0, kBig, kBig}) == 0);
  CHECK(error_of([] { shape_numel({kBig, 4}, "view"); }) ==
        "view: shape {4611686018427387904,4} has too many elements (more than 2^63-1)");
  CHECK(error_of([] { shape_numel({1, -1}, "view"); }) == "view: sizes must be non-negative, got -1 in shape {1,-1}");
}

TEST_CASE("contiguous_strides treat a 0 as 1 and never wrap") {
  CHECK(contiguous_strides({2, 3, 4}) == Dims{12, 4, 1});
  CHECK(contiguous_strides({kBig, 0, 3}) == Dims{3, 3, 1});
  CHECK(contiguous_strides({kBig, 2}) == Dims{2, 1});  // the first size never enters a stride
  CHECK(error_of([] { contiguous_strides({0, kBig, 4}, "from_blob"); }) ==
        "from_blob: shape {0,4611686018427387904,4} is too large (its strides would pass 2^63-1)");
}

TEST_CASE("quote_user keeps 60 characters, never cuts a UTF-8 character, and gives the length") {
  CHECK(quote_user("") == "");
  CHECK(quote_user(std::string(60, 'a')) == std::string(60, 'a'));
  CHECK(quote_user(std::string(61, 'a')) == std::string(60, 'a') + "... (61 bytes)");
  std::string e2;  // "é" is two bytes: byte 60 starts the 31st, so 30 are kept
  for (int i = 0; i < 40; ++i) e2 += "\xc3\xa9";
  std::string kept;
  for (int i = 0; i < 30; ++i) kept += "\xc3\xa9";
  CHECK(quote_user(e2) == kept + "... (80 bytes)");
  std::string odd = "a" + e2;  // byte 60 is the second byte of a character: cut before it
  CHECK(quote_user(odd) == std::string("a").append(kept, 0, 58) + "... (81 bytes)");
}

TEST_CASE("Tensor::empty, views and from_blob keep the invariant") {
  CHECK(error_of([] { Tensor::empty({kBig, kBig}, DType::Float32, {}, "zeros"); }) ==
        "zeros: shape {4611686018427387904,4611686018427387904} of float32" + kTooLarge);
  Tensor z = Tensor::empty({0, int64_t(1) << 40, 8}, DType::Float32);
  CHECK(z.strides() == Dims{int64_t(1) << 43, 8, 1});
  Tensor one = Tensor::empty({1}, DType::Float32);
  CHECK(error_of([&] { ops::expand(one, {int64_t(1) << 32, int64_t(1) << 32}); }) ==
        "expand: shape {4294967296,4294967296} of float32" + kTooLarge);
  CHECK(error_of([&] { one.as_strided({kBig, 4}, {0, 0}, 0); }) ==
        "internal error (a bug in tide): view: shape {4611686018427387904,4} has too many elements (more than 2^63-1)");
  CHECK(error_of([&] { one.as_strided({kBig}, {0}, 0); }) ==
        "internal error (a bug in tide): view: the byte size of shape {4611686018427387904} is too large (more than "
        "2^63-1)");
  // a view's contiguous strides need not fit: unsqueeze puts a huge size behind a new first dim
  Tensor w = Tensor::empty({INT64_MAX, 2, 0}, DType::Float32);
  CHECK(w.strides() == Dims{2, 1, 1});
  CHECK(ops::unsqueeze(w, 0).sizes() == Dims{1, INT64_MAX, 2, 0});
  float x = 1;
  CHECK(error_of([&] { Tensor::from_blob(&x, {kBig, 2}, DType::Float32, Dims{0, 0}); }) ==
        "from_blob: shape {4611686018427387904,2} of float32" + kTooLarge);
  CHECK(Tensor::from_blob(&x, {kBig / 4}, DType::Int8, Dims{0}).numel() == kBig / 4);
}

TEST_CASE("zero-element results cost no work per element of a huge dim") {
  Tensor e = ops::eye(INT64_MAX, 0, DType::Float32, {}, 0);
  CHECK(e.sizes() == Dims{INT64_MAX, 0});
  Tensor f = ops::eye(3, 2, DType::Int64, {}, -1);
  CHECK(test::values(f) == std::vector<double>{0, 0, 1, 0, 0, 1});
  CHECK(test::values(ops::eye(2, 2, DType::Int64, {}, INT64_MIN)) == std::vector<double>{0, 0, 0, 0});
  Tensor empty = Tensor::empty({0}, DType::Float32);
  auto chunks = ops::chunk(empty, int64_t(1) << 50, 0);
  CHECK(chunks.size() == 1);
  CHECK(chunks[0].sizes() == Dims{0});
  CHECK(ops::split(Tensor::empty({5}, DType::Float32), INT64_MAX, 0).size() == 1);
}

TEST_CASE("printing an expanded view reads only the shown elements") {
  Tensor one = ops::ones({1}, DType::Float32);
  CHECK(format_tensor(ops::expand(one, {int64_t(1) << 40}), DType::Float32) ==
        "tensor([1., 1., 1.,  ..., 1., 1., 1.])");
}

TEST_CASE("empty of dtype bool is zero-filled, even from a reused garbage block") {
  for (int round = 0; round < 3; ++round) {
    Tensor junk = ops::full({4000}, Scalar(int64_t(255)), DType::UInt8);
    junk.reset();
    Tensor b = ops::empty({4000}, DType::Bool);
    const unsigned char* p = static_cast<const unsigned char*>(b.data_ptr());
    int bad = 0;
    for (int i = 0; i < 4000; ++i) bad += p[i] > 1;
    CHECK(bad == 0);
  }
}
