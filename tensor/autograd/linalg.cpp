// Differentiable linear algebra. Formulas use the Promote policy: an op between different
// dtypes (NumPy style) has a gradient in the promoted dtype that the engine converts back.
#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

constexpr DTypePolicy P = DTypePolicy::Promote;

Tensor mT(const Tensor& x) { return transpose(x, -2, -1); }

// Records y = a (x) b, a product that is linear in each operand: d/da is grad_a(g, b) and
// d/db is grad_b(a, g). Each operand is saved only when the other one needs a gradient.
template <class GradA, class GradB>
Tensor record_product(const char* op, Tensor y, const Tensor& a, const Tensor& b, GradA grad_a, GradB grad_b) {
  SavedTensor sa = needs_recording({&b}) ? SavedTensor::input(a) : SavedTensor();
  SavedTensor sb = needs_recording({&a}) ? SavedTensor::input(b) : SavedTensor();
  record(op, y, {&a, &b}, [sa, sb, grad_a, grad_b](const Tensor& g, const Node& n) -> Grads {
    return {n.needs_grad(0) ? grad_a(g, sb.unpack(n)) : Tensor(), n.needs_grad(1) ? grad_b(sa.unpack(n), g) : Tensor()};
  });
  return y;
}

}  // namespace

Tensor mm(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy) {
  check_out("mm", out, {&a, &b});
  Tensor y = ops::mm(a, b, out, policy);
  if (out || !needs_recording({&a, &b})) return y;
  return record_product(
      "mm", y, a, b, [](const Tensor& g, const Tensor& bv) { return ag::mm(g, t(bv), nullptr, P); },
      [](const Tensor& av, const Tensor& g) { return ag::mm(t(av), g, nullptr, P); });
}

Tensor mv(const Tensor& a, const Tensor& v, const Tensor* out, DTypePolicy policy) {
  check_out("mv", out, {&a, &v});
  Tensor y = ops::mv(a, v, out, policy);
  if (out || !needs_recording({&a, &v})) return y;
  return record_product(
      "mv", y, a, v, [](const Tensor& g, const Tensor& vv) { return ag::outer(g, vv); },
      [](const Tensor& av, const Tensor& g) { return ag::mv(t(av), g, nullptr, P); });
}

Tensor bmm(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy) {
  check_out("bmm", out, {&a, &b});
  Tensor y = ops::bmm(a, b, out, policy);
  if (out || !needs_recording({&a, &b})) return y;
  return record_product(
      "bmm", y, a, b, [](const Tensor& g, const Tensor& bv) { return ag::bmm(g, mT(bv), nullptr, P); },
      [](const Tensor& av, const Tensor& g) { return ag::bmm(mT(av), g, nullptr, P); });
}

namespace {

// The inner product of two vectors, recorded.
Tensor vector_dot(const Tensor& a, const Tensor& b, DTypePolicy policy, const char* op) {
  return record_product(
      op, ops::dot(a, b, nullptr, policy, op), a, b, [](const Tensor& g, const Tensor& bv) { return g * bv; },
      [](const Tensor& av, const Tensor& g) { return g * av; });
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy, const char* op) {
  check_out(op, out, {&a, &b});
  if (out || !needs_recording({&a, &b})) return ops::matmul(a, b, out, policy, op);
  if (a.dim() == 1 && b.dim() == 1) return vector_dot(a, b, policy, op);
  TIDE_CHECK(a.dim() > 0 && b.dim() > 0, op, ": both operands need at least 1 dim, got shapes ", a.sizes().str(),
             " and ", b.sizes().str());
  // Vectors become matrices (a row, a column) for a batched product whose batch dims
  // broadcast; the engine sums the gradient back over broadcast batch dims.
  Tensor a2 = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor b2 = b.dim() == 1 ? unsqueeze(b, 1) : b;
  Tensor y = record_product(
      op, ops::matmul(a2, b2, nullptr, policy, op), a2, b2,
      [op](const Tensor& g, const Tensor& bv) { return ag::matmul(g, mT(bv), nullptr, P, op); },
      [op](const Tensor& av, const Tensor& g) { return ag::matmul(mT(av), g, nullptr, P, op); });
  if (a.dim() == 1) y = squeeze(y, {-2});
  if (b.dim() == 1) y = squeeze(y, {-1});
  return y;
}

Tensor dot(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy, const char* op) {
  check_out(op, out, {&a, &b});
  if (out || !needs_recording({&a, &b})) return ops::dot(a, b, out, policy, op);
  if (a.dim() == 0 || b.dim() == 0) return binary(BinaryOp::Mul, a, b);
  if (a.dim() == 1 && b.dim() == 1) return vector_dot(a, b, policy, op);
  TIDE_CHECK(a.dim() <= 2 && b.dim() <= 2, op, ": gradients of dot over more than 2 dims (shapes ", a.sizes().str(),
             " and ", b.sizes().str(), ") are not supported; use matmul");
  return ag::matmul(a, b, nullptr, policy, op);
}

Tensor outer(const Tensor& a, const Tensor& b, const Tensor* out, bool flatten_inputs, const char* op) {
  check_out(op, out, {&a, &b});
  if (out || !needs_recording({&a, &b})) return ops::outer(a, b, out, flatten_inputs, op);
  Tensor a1 = flatten_inputs ? reshape(a, {a.numel()}) : a;
  Tensor b1 = flatten_inputs ? reshape(b, {b.numel()}) : b;
  return record_product(
      op, ops::outer(a1, b1, nullptr, false, op), a1, b1,
      [](const Tensor& g, const Tensor& bv) { return ag::mv(g, bv, nullptr, P); },
      [](const Tensor& av, const Tensor& g) { return ag::mv(t(g), av, nullptr, P); });
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
             const Tensor* out) {
  check_out("addmm", out, {&bias, &a, &b});
  Tensor y = ops::addmm(bias, a, b, beta, alpha, out);
  if (out || !needs_recording({&bias, &a, &b})) return y;
  SavedTensor sa = SavedTensor::input(a), sb = SavedTensor::input(b);
  double be = beta.to_double(), al = alpha.to_double();
  record("addmm", y, {&bias, &a, &b}, [sa, sb, be, al](const Tensor& g, const Node& n) -> Grads {
    Grads r(3);
    if (n.needs_grad(0)) r[0] = be == 1 ? g : g * be;
    if (n.needs_grad(1)) r[1] = ag::mm(g, t(sb.unpack(n)), nullptr, P) * al;
    if (n.needs_grad(2)) r[2] = ag::mm(t(sa.unpack(n)), g, nullptr, P) * al;
    return r;
  });
  return y;
}

Tensor& addmm_(Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  return inplace("addmm_", bias, {&a, &b}, [&] { ops::addmm(bias, a, b, beta, alpha, nullptr, true); },
                 [&](const Tensor& s) { return addmm(s, a, b, beta, alpha); });
}

Tensor solve(const Tensor& A, const Tensor& B, DTypePolicy policy, const char* op) {
  Tensor X = ops::solve(A, B, policy, op);
  if (!needs_recording({&A, &B})) return X;
  bool vector = X.dim() == A.dim() - 1;
  SavedTensor sA = SavedTensor::input(A), sX = SavedTensor::output(X);
  record(op, X, {&A, &B}, [sA, sX, vector, op](const Tensor& g, const Node& n) -> Grads {
    // X = A^-1 B: dB = A^-T g, dA = -dB X^T.
    Tensor gB = ag::solve(mT(sA.unpack(n)), g, P, op);
    Grads r{Tensor(), n.needs_grad(1) ? gB : Tensor()};
    if (n.needs_grad(0)) {
      Tensor X = sX.unpack(n);
      Tensor gm = vector ? unsqueeze(gB, -1) : gB, xm = vector ? unsqueeze(X, -1) : X;
      r[0] = -ag::matmul(gm, mT(xm), nullptr, P, op);
    }
    return r;
  });
  return X;
}

Tensor inv(const Tensor& A, DTypePolicy policy, const char* op) {
  Tensor Y = ops::inv(A, policy, op);
  if (!needs_recording({&A})) return Y;
  SavedTensor sY = SavedTensor::output(Y);
  record(op, Y, {&A}, [sY, op](const Tensor& g, const Node& n) -> Grads {
    Tensor yt = mT(sY.unpack(n));  // d(A^-1) = -A^-1 dA A^-1
    return {-ag::matmul(ag::matmul(yt, g, nullptr, P, op), yt, nullptr, P, op)};
  });
  return Y;
}

Tensor det(const Tensor& A, DTypePolicy policy, const char* op) {
  Tensor d = ops::det(A, policy, op);
  if (!needs_recording({&A})) return d;
  SavedTensor sA = SavedTensor::input(A), sd = SavedTensor::output(d);
  record(op, d, {&A}, [sA, sd, op](const Tensor& g, const Node& n) -> Grads {
    // d det(A) = det(A) tr(A^-1 dA): the gradient is g det(A) A^-T (A must be invertible).
    Tensor scale = unsqueeze(unsqueeze(g * sd.unpack(n), -1), -1);
    return {scale * mT(ag::inv(sA.unpack(n), P, op))};
  });
  return d;
}

Tensor linalg_norm(const Tensor& x, ops::NormOrd ord, const std::vector<int>& dims, bool keepdim, DTypePolicy policy,
                   const char* op) {
  Tensor y = ops::linalg_norm(x, ord, dims, keepdim, policy, op);
  if (!needs_recording({&x})) return y;
  // Vector norms and the Frobenius norm have the reductions' norm gradient.
  bool vector = dims.size() == 1 || (dims.empty() && (ord.kind == ops::NormOrd::Default || x.dim() == 1));
  bool two = ord.kind == ops::NormOrd::Default || ord.kind == ops::NormOrd::Fro;
  TIDE_CHECK(two || (ord.kind == ops::NormOrd::P && vector), op,
             ": gradients of matrix norms other than 'fro' are not supported (ord and dims select a matrix norm)");
  record_norm(op, y, x, two ? 2 : ord.p, DimList(dims.begin(), dims.end()));
  return y;
}

}  // namespace tide::ag
