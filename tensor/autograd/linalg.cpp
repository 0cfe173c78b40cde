// Differentiable linear algebra. Formulas use the Promote policy: an op between different
// dtypes (NumPy style) has a gradient in the promoted dtype that the engine converts back.
#include <limits>

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

// x * factor, without the op when the factor is 1 (x * 1 is x).
Tensor scaled(const Tensor& x, double factor) { return factor == 1 ? x : x * factor; }

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
    if (n.needs_grad(0)) r[0] = scaled(g, be);
    if (n.needs_grad(1)) r[1] = scaled(ag::mm(g, t(sb.unpack(n)), nullptr, P), al);
    if (n.needs_grad(2)) r[2] = scaled(ag::mm(t(sa.unpack(n)), g, nullptr, P), al);
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


// ---------------------------------------------------------------------------------------
// Decompositions. Each differentiable output records its own node (autograd.hpp); the
// formulas (PyTorch's) are linear in the output gradients, so the per-output gradients sum
// to the joint one. The factors are saved without their history: gradients of these
// gradients (create_graph) do not flow through the saved factors.

namespace {

Tensor detached(const Tensor& t) {
  return Tensor::make_view(t.storage(), t.sizes(), t.strides(), t.offset(), t.dtype());
}

// The (r x c) 0/1 mask of the lower triangle up to diagonal k, in dtype dt on device d.
Tensor tri_mask(int64_t r, int64_t c, int k, DType dt, Device d) {
  Tensor m = ops::zeros({r, c}, DType::Float64);
  double* p = m.data<double>();
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c && j <= i + k; ++j) p[i * c + j] = 1;
  return m.to(dt).to_device(d);
}
int64_t last(const Tensor& x, int back = 1) { return x.size(x.dim() - back); }
Tensor tril(const Tensor& x, int k = 0) { return x * tri_mask(last(x, 2), last(x), k, x.dtype(), x.device()); }
Tensor eye_as(const Tensor& x) { return ops::eye(last(x), -1, x.dtype(), x.device()); }
Tensor diag_embed(const Tensor& v) { return unsqueeze(v, -1) * eye_as(v); }
// X with its diagonal replaced by v (a batch of vectors).
Tensor with_diagonal(const Tensor& X, const Tensor& v) {
  Tensor I = eye_as(X);
  return X * (1.0 - I) + diag_embed(v);
}
Tensor mm_(const Tensor& a, const Tensor& b) { return ag::matmul(a, b, nullptr, P); }

// Records a node for each output i in `which` of a decomposition of A, with gradient
// grad(i, g, factors). The factors are saved by version: changing one in place before
// backward is an error there, not a wrong gradient.
template <class F>
void record_factors(const char* op, std::vector<Tensor>& outs, std::initializer_list<int> which, const Tensor& A,
                    std::initializer_list<Tensor> factors, F grad) {
  std::vector<SavedTensor> saved;
  for (const Tensor& f : factors) saved.push_back(SavedTensor::input(detached(f)));
  for (int i : which)
    record(op, outs[size_t(i)], {&A}, [saved, grad, i](const Tensor& g, const Node& n) -> Grads {
      std::vector<Tensor> f;
      for (const SavedTensor& s : saved) f.push_back(s.unpack(n));
      return {grad(i, g, f)};
    });
}

}  // namespace

std::vector<Tensor> svd(const Tensor& A, bool full_matrices, bool compute_uv, DTypePolicy policy, const char* op) {
  std::vector<Tensor> r = ops::svd(A, full_matrices, compute_uv, policy, op);
  if (!needs_recording({&A})) return r;
  const int64_t m = last(A, 2), n = last(A), k = std::min(m, n);
  // PyTorch's svd_backward on the reduced factors (full ones are narrowed to them).
  Tensor S = r[compute_uv ? 1 : 0];
  Tensor U, Vh;
  if (compute_uv) {
    U = narrow(r[0], -1, 0, k);
    Vh = narrow(r[2], -2, 0, k);
  } else {
    std::vector<Tensor> f = ops::svd(A, false, true, policy, op);
    U = f[0];
    Vh = f[2];
  }
  auto grad = [m, n, k, full_matrices](int which, const Tensor& g0, const std::vector<Tensor>& f) -> Tensor {
    const Tensor &U = f[0], &S = f[1], &Vh = f[2];
    if (which == 1) {  // gS: U diag(gS) Vh
      return mm_(U * unsqueeze(g0, -2), Vh);
    }
    Tensor S2 = S * S;
    Tensor E = with_diagonal(unsqueeze(S2, -2) - unsqueeze(S2, -1), ops::ones({k}, S.dtype(), S.device()));
    if (which == 0) {
      Tensor gU = full_matrices ? narrow(g0, -1, 0, k) : g0;
      Tensor UhgU = mm_(mT(U), gU);
      Tensor gA = (UhgU - mT(UhgU)) / E * unsqueeze(S, -2);
      gA = mm_(U, gA);
      if (m > n) {
        Tensor gUSinv = gU / unsqueeze(S, -2);
        gA = gA + gUSinv - mm_(U, mm_(mT(U), gUSinv));
      }
      return mm_(gA, Vh);
    }
    Tensor gVh = full_matrices ? narrow(g0, -2, 0, k) : g0;
    Tensor V = mT(Vh), gV = mT(gVh);
    Tensor VhgV = mm_(Vh, gV);
    Tensor gA = unsqueeze(S, -1) * ((VhgV - mT(VhgV)) / E);
    gA = mm_(gA, Vh);
    if (m < n) {
      Tensor SinvgVh = gVh / unsqueeze(S, -1);
      gA = gA + SinvgVh - mm_(mm_(SinvgVh, V), Vh);
    }
    return mm_(U, gA);
  };
  if (!compute_uv) {
    record_factors(op, r, {0}, A, {U, S, Vh},
                   [grad](int, const Tensor& g, const std::vector<Tensor>& f) { return grad(1, g, f); });
    return r;
  }
  record_factors(op, r, {0, 1, 2}, A, {U, S, Vh}, grad);
  return r;
}

std::vector<Tensor> eigh(const Tensor& A, bool lower, bool compute_v, DTypePolicy policy, const char* op) {
  std::vector<Tensor> r = ops::eigh(A, lower, compute_v, policy, op);
  if (!needs_recording({&A})) return r;
  Tensor V = compute_v ? r[1] : ops::eigh(A, lower, true, policy, op)[1];
  // gA = V (diag(gL) + skew(V^T gV) / E) V^T with E_ij = L_j - L_i (PyTorch's eig backward).
  auto grad = [](int which, const Tensor& g, const std::vector<Tensor>& f) -> Tensor {
    const Tensor &L = f[0], &V = f[1];
    Tensor inner;
    if (which == 0) {
      inner = diag_embed(g);
    } else {
      Tensor VhgV = mm_(mT(V), g);
      VhgV = 0.5 * (VhgV - mT(VhgV));
      Tensor E = with_diagonal(unsqueeze(L, -2) - unsqueeze(L, -1), ops::ones({last(L)}, L.dtype(), L.device()));
      inner = with_diagonal(VhgV / E, ops::zeros({last(L)}, L.dtype(), L.device()));
    }
    return mm_(V, mm_(inner, mT(V)));
  };
  if (compute_v) record_factors(op, r, {0, 1}, A, {r[0], V}, grad);
  else record_factors(op, r, {0}, A, {r[0], V}, grad);
  return r;
}

Tensor cholesky(const Tensor& A, bool upper, DTypePolicy policy, const char* op) {
  Tensor y = ops::cholesky(A, upper, policy, op);
  if (!needs_recording({&A})) return y;
  SavedTensor sy = SavedTensor::output(y);
  record(op, y, {&A}, [sy, upper, op](const Tensor& g0, const Node& n) -> Grads {
    // PyTorch's cholesky_backward: gA = L^-T sym(tril(L^T gL)) L^-1.
    Tensor L = upper ? mT(sy.unpack(n)) : sy.unpack(n);
    Tensor gL = upper ? mT(g0) : g0;
    Tensor gA = tril(mm_(mT(L), gL));
    gA = 0.5 * (gA + mT(tril(gA, -1)));
    gA = ag::solve(mT(L), gA, P, op);              // L^-T gA
    return {mT(ag::solve(mT(L), mT(gA), P, op))};  // (L^-T gA) L^-1
  });
  return y;
}

std::vector<Tensor> qr(const Tensor& A, ops::QrMode mode, DTypePolicy policy, const char* op) {
  std::vector<Tensor> r = ops::qr(A, mode, policy, op);
  if (!needs_recording({&A})) return r;
  const int64_t m = last(A, 2), n = last(A);
  TIDE_CHECK(mode != ops::QrMode::R, op, ": the gradient of QR needs Q, which mode 'r' does not compute");
  TIDE_CHECK(!(mode == ops::QrMode::Complete && m > n), op,
             ": QR with mode 'complete' is not differentiable when rows > columns (shape ", A.sizes().str(), ")");
  // PyTorch's linalg_qr_backward. Square-or-tall (m >= n): M = R gR^T - gQ^T Q,
  // gA = (gQ + Q copyltu(M)) R^-T. Wide: A = Q [X | Y] with X square.
  auto square = [op](const Tensor& Q, const Tensor& R, const Tensor& gQ, const Tensor& gR) {
    Tensor M;
    if (gR.defined()) M = mm_(R, mT(gR));
    if (gQ.defined()) M = M.defined() ? M - mm_(mT(gQ), Q) : -mm_(mT(gQ), Q);
    Tensor Ml = tril(M);
    M = Ml + mT(Ml);
    M = with_diagonal(M, 0.5 * ag::sum(M * eye_as(M), {-1}));
    Tensor rhs = gQ.defined() ? gQ + mm_(Q, M) : mm_(Q, M);
    return mT(ag::solve(R, mT(rhs), P, op));  // rhs R^-T
  };
  auto grad = [m, n, square](int which, const Tensor& g, const std::vector<Tensor>& f) -> Tensor {
    const Tensor &Q = f[0], &R = f[1];
    Tensor gQ = which == 0 ? g : Tensor(), gR = which == 1 ? g : Tensor();
    if (m >= n) return square(Q, R, gQ, gR);
    // X: R's square part; Y = Q R[:, m:], A's last columns.
    Tensor X = narrow(R, -1, 0, m), Y = mm_(Q, narrow(R, -1, m, n - m));
    if (!gR.defined()) return cat({square(Q, X, gQ, Tensor()), ops::zeros(Y.sizes(), Y.dtype(), Y.device())}, -1);
    Tensor gX = narrow(gR, -1, 0, m), gY = narrow(gR, -1, m, n - m);
    Tensor gQ2 = mm_(Y, mT(gY));
    return cat({square(Q, X, gQ2, gX), mm_(Q, gY)}, -1);
  };
  record_factors(op, r, {0, 1}, A, {r[0], r[1]}, grad);
  return r;
}


namespace {

// PyTorch's pinv_backward: the gradient of pinv(A) given g and pinvA.
Tensor pinv_backward(const Tensor& g, const Tensor& pinvA, const Tensor& A) {
  const int64_t m = last(A, 2), n = last(A);
  Tensor pinvAh = mT(pinvA), gh = mT(g);
  if (m <= n) {
    Tensor K = mm_(gh, pinvA);
    Tensor KpinvAh = mm_(K, pinvAh);
    return -mT(mm_(pinvA, K)) + KpinvAh - mm_(mm_(A, pinvA), KpinvAh) + mm_(mm_(pinvAh, pinvA), gh - mm_(K, A));
  }
  Tensor K = mm_(pinvA, gh);
  Tensor pinvAhK = mm_(pinvAh, K);
  return -mT(mm_(K, pinvA)) + mm_(mm_(gh - mm_(A, K), pinvA), pinvAh) + pinvAhK - mm_(mm_(pinvAhK, pinvA), A);
}

// The pseudo-inverse of A (not recorded): singular values (|eigenvalues| when hermitian)
// above max(atol, rtol * largest) are inverted, the others dropped.
Tensor pinv_value(const Tensor& A, double atol, double rtol, bool hermitian, DTypePolicy policy, const char* op) {
  autograd::GradModeGuard no_grad(false);
  Tensor U, S, Vh;
  if (hermitian) {
    std::vector<Tensor> f = ops::eigh(A, true, true, policy, op);
    U = f[1];
    S = f[0];
    Vh = mT(f[1]);
  } else {
    std::vector<Tensor> f = ops::svd(A, false, true, policy, op);
    U = f[0], S = f[1], Vh = f[2];
  }
  // A's sizes only now: the decomposition has checked that A is a (batch of) matrices.
  if (std::min(last(A, 2), last(A)) == 0) {
    Dims shape = A.sizes();
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    return ops::zeros(shape, S.dtype(), A.device());
  }
  Tensor absS = unary(UnaryOp::Abs, S);
  Tensor cutoff = binary(BinaryOp::Maximum, amax(absS, {-1}, true) * rtol, atol);
  Tensor keep = binary(BinaryOp::Gt, absS, cutoff);
  Tensor inv = where(keep, 1.0 / where(keep, S, 1.0), 0.0);
  return mm_(mT(Vh) * unsqueeze(inv, -2), mT(U));
}

}  // namespace

Tensor pinv(const Tensor& A, double atol, double rtol, bool hermitian, DTypePolicy policy, const char* op) {
  Tensor y = pinv_value(A, atol, rtol, hermitian, policy, op);
  if (!needs_recording({&A})) return y;
  SavedTensor sA = SavedTensor::input(A), sy = SavedTensor::output(y);
  record(op, y, {&A}, [sA, sy](const Tensor& g, const Node& n) -> Grads {
    return {pinv_backward(g, sy.unpack(n), sA.unpack(n))};
  });
  return y;
}

std::vector<Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond, DTypePolicy policy,
                          const char* op) {
  std::vector<Tensor> r = ops::lstsq(A, B, rcond, policy, op);
  if (!needs_recording({&A, &B})) return r;
  // The solution is pinv(A) B: PyTorch's linalg_lstsq_backward.
  const bool vector = r[0].dim() == B.dim() && B.dim() == A.dim() - 1;
  SavedTensor sA = SavedTensor::input(A), sB = SavedTensor::input(B);
  record(op, r[0], {&A, &B}, [sA, sB, vector, policy, op](const Tensor& g0, const Node& n) -> Grads {
    Tensor A = sA.unpack(n), B = sB.unpack(n);
    if (A.dtype() != g0.dtype()) A = A.to(g0.dtype());
    if (B.dtype() != g0.dtype()) B = B.to(g0.dtype());
    Tensor pinvA = pinv_value(A, 0, std::numeric_limits<double>::epsilon() * double(std::max(last(A), last(A, 2))),
                              false, policy, op);
    Tensor g = vector ? unsqueeze(g0, -1) : g0, Bm = vector ? unsqueeze(B, -1) : B;
    Grads out(2);
    if (n.needs_grad(0)) out[0] = pinv_backward(mm_(g, mT(Bm)), pinvA, A);
    if (n.needs_grad(1)) {
      Tensor gB = mm_(mT(pinvA), g);
      out[1] = vector ? squeeze(gB, {-1}) : gB;
    }
    return out;
  });
  return r;
}

std::vector<Tensor> slogdet(const Tensor& A, DTypePolicy policy, const char* op) {
  std::vector<Tensor> r = ops::slogdet(A, policy, op);
  if (!needs_recording({&A})) return r;
  SavedTensor sA = SavedTensor::input(A);
  // d log|det A| = tr(A^-1 dA): the gradient is g A^-T. The sign has none.
  record(op, r[1], {&A}, [sA, op](const Tensor& g, const Node& n) -> Grads {
    return {unsqueeze(unsqueeze(g, -1), -1) * mT(ag::inv(sA.unpack(n), P, op))};
  });
  return r;
}

}  // namespace tide::ag
