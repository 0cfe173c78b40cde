// Autograd graphs a million nodes long: freeing them (with or without backward, after
// retain_graph, after create_graph), backward and autograd::grad through them, all without
// stack depth proportional to their length. Weak pointers to the first node of each chain
// show that the whole graph is freed. tests/lua/test_long_graph.lua runs the same from Lua.
#include <doctest/doctest.h>

#include <memory>

#include "../../tensor/autograd/autograd.hpp"
#include "../../tensor/autograd/functions.hpp"
#include "../../tensor/ops/creation.hpp"

using namespace tide;

namespace {

constexpr int kNodes = 1000000;

// A float64 one-element leaf that requires grad, with value 1.
Tensor leaf() {
  Tensor x = ops::ones({1}, DType::Float64);
  autograd::set_requires_grad(x, true);
  return x;
}

// x * 1, then y = y op x until the chain has n nodes; *first watches the first node.
Tensor chain(const Tensor& x, BinaryOp op, std::weak_ptr<Node>* first, int n = kNodes) {
  Tensor y = ag::binary(BinaryOp::Mul, x, 1.0);
  *first = autograd::grad_fn(y);
  for (int i = 1; i < n; ++i) y = ag::binary(op, y, x);
  return y;
}

double item(const Tensor& t) { return t.item_double(); }

}  // namespace

TEST_CASE("a chain of 10^6 nodes is freed without backward") {
  Tensor x = leaf();
  std::weak_ptr<Node> first;
  Tensor y = chain(x, BinaryOp::Add, &first);
  CHECK(!first.expired());
  y.reset();
  CHECK(first.expired());
}

TEST_CASE("retain_graph: two backwards through 10^6 nodes, then the retained graph is freed") {
  Tensor x = leaf();
  std::weak_ptr<Node> first;
  Tensor y = chain(x, BinaryOp::Mul, &first);  // its nodes keep their saved tensors
  autograd::backward({y}, {}, true, false);
  autograd::backward({y}, {}, true, false);
  CHECK(item(autograd::grad(x)) == 2.0 * kNodes);
  y.reset();
  CHECK(first.expired());
}

TEST_CASE("autograd::grad through 10^6 nodes, with and without create_graph") {
  Tensor x = leaf();
  std::weak_ptr<Node> first;
  Tensor y = chain(x, BinaryOp::Add, &first);
  std::vector<Tensor> g = autograd::grad({y}, {}, {x}, false, false, false);
  CHECK(item(g[0]) == kNodes);
  CHECK(!autograd::grad(x).defined());
  y.reset();
  CHECK(first.expired());

  const int n = kNodes / 4;  // the backward of each product records 3 nodes
  y = chain(x, BinaryOp::Mul, &first, n);
  g = autograd::grad({y}, {}, {x}, false, true, false);
  CHECK(item(g[0]) == n);
  std::weak_ptr<Node> second = autograd::grad_fn(g[0]);
  y.reset();
  CHECK(!first.expired());  // the recorded backward holds the first graph
  autograd::backward({g[0]}, {}, false, false);
  CHECK(item(autograd::grad(x)) == double(n) * (n - 1));
  g.clear();
  CHECK(second.expired());
  CHECK(first.expired());
}

TEST_CASE("a chain of 10^6 views: backward, then the graph is freed") {
  Tensor x = leaf();
  Tensor v = ag::binary(BinaryOp::Mul, x, 2.0);
  std::weak_ptr<Node> first = autograd::grad_fn(v);
  for (int i = 0; i < kNodes; ++i) v = i % 2 ? ag::view(v, {1}) : ag::view(v, {1, 1});
  autograd::backward({v}, {}, false, false);
  CHECK(item(autograd::grad(x)) == 2);
  v.reset();
  CHECK(first.expired());
}
