// Fused optimizer steps (tensor/ops/optim.hpp) from C++: values by hand, the version bump of
// every step, strided operands, the thread-count independence of a parallel step, and the
// errors of bad operands (which must leave the parameter unwritten).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "../../tensor/ops/optim.hpp"
#include "../../tensor/parallel.hpp"
#include "../../tensor/tensor.hpp"
#include "helpers.hpp"

using namespace tide;
using tide::test::contains;
using tide::test::error_of;
using tide::test::values;

namespace {

Tensor from(const std::vector<double>& v, DType dt = DType::Float64) {
  Tensor t = Tensor::empty({int64_t(v.size())}, DType::Float64);
  for (size_t i = 0; i < v.size(); ++i) t.data<double>()[i] = v[i];
  return t.to(dt, true);
}

Tensor zeros_like(const Tensor& t) {
  Tensor z = Tensor::empty(t.sizes(), t.dtype());
  std::memset(z.data_ptr(), 0, z.nbytes());
  return z;
}

void check_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= tol * (1 + std::abs(want[i])));
}

}  // namespace

TEST_CASE("optim: SGD with momentum by hand, and every step bumps the version") {
  Tensor p = from({1, 2, 3}), g = from({0.5, -1, 2});
  Tensor buf = zeros_like(p);
  uint32_t v0 = p.storage()->version();
  ops::SgdOptions o;
  o.lr = 0.1;
  o.momentum = 0.9;
  o.dampening = 0.5;
  o.new_buffer = true;
  ops::sgd_step_(p, g, &buf, o);
  CHECK(p.storage()->version() == v0 + 1);
  check_near(values(buf), {0.5, -1, 2}, 1e-15);  // the first step copies the gradient
  check_near(values(p), {0.95, 2.1, 2.8}, 1e-15);
  o.new_buffer = false;
  ops::sgd_step_(p, g, &buf, o);
  CHECK(p.storage()->version() == v0 + 2);
  check_near(values(buf), {0.7, -1.4, 2.8}, 1e-15);  // 0.9 buf + 0.5 g
  check_near(values(p), {0.88, 2.24, 2.52}, 1e-15);
}

TEST_CASE("optim: Adam's first step moves by lr * g / (|g| + eps); AdamW decays the parameter") {
  Tensor p = from({1, -2}), g = from({3, -0.25});
  Tensor m = zeros_like(p), v = zeros_like(p);
  ops::AdamOptions o;
  o.lr = 0.01;
  ops::adam_step_(p, g, m, v, nullptr, o);
  check_near(values(p), {1 - 0.01 * 3 / (3 + 1e-8), -2 + 0.01 * 0.25 / (0.25 + 1e-8)}, 1e-14);
  Tensor q = from({2}), zero = from({0});
  Tensor m1 = zeros_like(q), v1 = zeros_like(q);
  ops::AdamOptions w;
  w.lr = 0.1;
  w.weight_decay = 0.5;
  w.decoupled_weight_decay = true;
  ops::adam_step_(q, zero, m1, v1, nullptr, w);
  check_near(values(q), {2 * (1 - 0.05)}, 1e-15);
}

TEST_CASE("optim: centered RMSprop with momentum by hand") {
  Tensor p = from({1}), g = from({2});
  Tensor sq = zeros_like(p), buf = zeros_like(p), ga = zeros_like(p);
  ops::RmspropOptions o;
  o.lr = 0.01;
  o.alpha = 0.9;
  o.momentum = 0.5;
  o.centered = true;
  ops::rmsprop_step_(p, g, sq, &buf, &ga, o);
  // square_avg = 0.4, grad_avg = 0.2, avg = sqrt(0.4 - 0.04) + eps, buf = g / avg
  double avg = std::sqrt(0.36) + 1e-8;
  check_near(values(buf), {2 / avg}, 1e-14);
  check_near(values(p), {1 - 0.01 * 2 / avg}, 1e-14);
}

TEST_CASE("optim: a strided parameter is updated through its strides") {
  Tensor base = from({1, 2, 3, 4, 5, 6});
  Tensor p = base.as_strided({3}, {2}, 0);  // elements 0, 2, 4
  Tensor g = from({1, 1, 1});
  ops::SgdOptions o;
  o.lr = 0.5;
  ops::sgd_step_(p, g, nullptr, o);
  check_near(values(base), {0.5, 2, 2.5, 4, 4.5, 6}, 0);
}

TEST_CASE("optim: a parallel step gives the same bits on 1 and 2 threads") {
  const int64_t n = 1 << 20;
  Tensor p0 = Tensor::empty({n}, DType::Float32), g = Tensor::empty({n}, DType::Float32);
  for (int64_t i = 0; i < n; ++i) {
    p0.data<float>()[i] = std::sin(0.001f * float(i));
    g.data<float>()[i] = std::cos(0.003f * float(i));
  }
  int saved = get_num_threads();
  std::vector<Tensor> results;
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor p = p0.clone(), m = zeros_like(p), v = zeros_like(p), vmax = zeros_like(p);
    ops::AdamOptions o;
    o.amsgrad = true;
    o.weight_decay = 0.1;
    for (int step = 1; step <= 3; ++step) {
      o.step = step;
      ops::adam_step_(p, g, m, v, &vmax, o);
    }
    results.push_back(p);
  }
  set_num_threads(saved);
  CHECK(std::memcmp(results[0].data_ptr(), results[1].data_ptr(), results[0].nbytes()) == 0);
  CHECK(std::memcmp(results[0].data_ptr(), p0.data_ptr(), p0.nbytes()) != 0);
}

TEST_CASE("optim: bad operands are errors that leave the parameter as it was") {
  Tensor p = from({1, 2}), g = from({1, 1});
  uint32_t v0 = p.storage()->version();
  ops::SgdOptions o;
  o.lr = 1;
  CHECK(contains(error_of([&] { ops::sgd_step_(p, from({1, 1, 1}), nullptr, o); }),
                 "SGD: the grad of shape {3} does not match the parameter's shape {2}"));
  CHECK(contains(error_of([&] { ops::sgd_step_(p, from({1, 1}, DType::Float32), nullptr, o); }),
                 "SGD: the grad has dtype float32 but the parameter has float64"));
  o.momentum = 0.9;
  CHECK(contains(error_of([&] { ops::sgd_step_(p, g, nullptr, o); }),
                 "SGD: momentum=0.9 needs the state tensor momentum_buffer, got nil"));
  ops::AdamOptions a;
  a.step = 0;
  Tensor m = zeros_like(p), v = zeros_like(p);
  CHECK(contains(error_of([&] { ops::adam_step_(p, g, m, v, nullptr, a); }), "Adam: step must be >= 1"));
  Tensor ints = Tensor::empty({2}, DType::Int64);
  CHECK(contains(error_of([&] { ops::sgd_step_(ints, ints, nullptr, ops::SgdOptions{}); }),
                 "SGD: parameters must be float16, bfloat16, float32 or float64, got int64"));
  check_near(values(p), {1, 2}, 0);
  CHECK(p.storage()->version() == v0);
}
