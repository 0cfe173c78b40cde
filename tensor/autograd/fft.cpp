// Differentiable FFTs. Each gradient is the adjoint transform (PyTorch's formulas), in the
// convention of autograd/complex.cpp: c2c's is the c2c the other way with the norm's
// direction swapped; r2c's pads the one-sided gradient with zeros to the full length, takes
// that c2c and keeps the real part (the input is real); c2r's is an r2c with the norm's
// direction swapped whose bins 1 .. n - (n/2 + 1) count twice (each stands for its mirror
// image too). The gradient is then cut or zero-padded back to the input's sizes, the adjoint
// of the forward's own cutting and padding to n. The gradients are built from these same
// functions, so they are differentiable again.
#include "../ops/creation.hpp"
#include "../ops/fft.hpp"
#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

using ops::FftNorm;

FftNorm swapped(FftNorm norm) {
  if (norm == FftNorm::Ortho) return norm;
  return norm == FftNorm::Backward ? FftNorm::Forward : FftNorm::Backward;
}

// g cut or zero-padded along each of dims to `sizes`' length there.
Tensor fit(const Tensor& g, const Dims& sizes, const std::vector<int>& dims) {
  Tensor r = g;
  for (int d : dims) {
    const int64_t have = r.size(d), want = sizes[d];
    if (have > want) {
      r = narrow(r, d, 0, want);
    } else if (have < want) {
      Dims zs = r.sizes();
      zs[d] = want - have;
      r = cat({r, ops::zeros(zs, r.dtype(), r.device())}, d);
    }
  }
  return r;
}

// The lengths of t along dims.
std::vector<int64_t> lengths(const Tensor& t, const std::vector<int>& dims) {
  std::vector<int64_t> n;
  for (int d : dims) n.push_back(t.size(d));
  return n;
}

}  // namespace

Tensor fft_c2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, bool forward, DType cdtype) {
  Tensor y = ops::fft_c2c(op, x, dims, n, norm, forward, cdtype);
  if (!needs_recording({&x})) return y;
  const Dims sizes = x.sizes();
  record(op, y, {&x}, [=](const Tensor& g, const Node&) -> Grads {
    return {fit(ag::fft_c2c(op, g, dims, lengths(g, dims), swapped(norm), !forward, g.dtype()), sizes, dims)};
  });
  return y;
}

Tensor fft_r2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_output) {
  Tensor y = ops::fft_r2c(op, x, dims, n, norm, cdtype, conj_output);
  if (!needs_recording({&x})) return y;
  const Dims sizes = x.sizes();
  record(op, y, {&x}, [=](const Tensor& g0, const Node&) -> Grads {
    Tensor g = conj_output ? conj(g0) : g0;
    Dims full = g.sizes();
    full[dims.back()] = n.back();
    Tensor padded = fit(g, full, {dims.back()});
    return {fit(real(ag::fft_c2c(op, padded, dims, n, swapped(norm), false, g.dtype())), sizes, dims)};
  });
  return y;
}

Tensor fft_c2r(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_input) {
  Tensor y = ops::fft_c2r(op, x, dims, n, norm, cdtype, conj_input);
  if (!needs_recording({&x})) return y;
  const Dims sizes = x.sizes();
  record(op, y, {&x}, [=](const Tensor& g, const Node&) -> Grads {
    Tensor r = ag::fft_r2c(op, g, dims, n, swapped(norm), cdtype, false);
    const int last = dims.back();
    const int64_t half = r.size(last), twice = n.back() - half;  // bins 1..twice count twice
    if (twice > 0) {
      Dims ws(r.dim(), 1);
      ws[last] = half;
      Tensor w = ops::full(ws, Scalar(1.0), real_of_complex(cdtype), r.device());
      Tensor doubled = ops::narrow(w, last, 1, twice);
      ops::fill_(doubled, Scalar(2.0));
      r = r * w;
    }
    return {fit(conj_input ? conj(r) : r, sizes, dims)};
  });
  return y;
}

}  // namespace tide::ag
