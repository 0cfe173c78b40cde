// Differentiable complex-number ops, with PyTorch's convention: the gradient of a real loss L
// with respect to z = x + iy is dL/dx + i dL/dy. real, imag and view_as_real are views of z
// (recorded as views, so in-place writes into them while recording are refused: their dtype
// is not the base's); conj and complex make new tensors.
#include "../ops/complex.hpp"
#include "../ops/creation.hpp"
#include "formulas.hpp"

namespace tide::ag {

Tensor real(const Tensor& z) {
  Tensor y = ops::real(z);
  if (!is_complex(z.dtype()) || !needs_recording({&z})) return y;  // a real z is its own real part
  record("real", y, {&z}, [](const Tensor& g, const Node&) -> Grads { return {complex(g, ops::zeros_like(g))}; }, true);
  return y;
}

Tensor imag(const Tensor& z) {
  Tensor y = ops::imag(z);
  if (!needs_recording({&z})) return y;
  record("imag", y, {&z}, [](const Tensor& g, const Node&) -> Grads { return {complex(ops::zeros_like(g), g)}; }, true);
  return y;
}

Tensor view_as_real(const Tensor& z) {
  Tensor y = ops::view_as_real(z);
  if (!needs_recording({&z})) return y;
  record("view_as_real", y, {&z},
         [](const Tensor& g, const Node&) -> Grads { return {view_as_complex(contiguous(g))}; }, true);
  return y;
}

Tensor view_as_complex(const Tensor& x) {
  Tensor y = ops::view_as_complex(x);
  if (!needs_recording({&x})) return y;
  record("view_as_complex", y, {&x}, [](const Tensor& g, const Node&) -> Grads { return {view_as_real(g)}; }, true);
  return y;
}

Tensor complex(const Tensor& re, const Tensor& im, const Tensor* out) {
  check_out("complex", out, {&re, &im});
  Tensor y = ops::complex(re, im, out);
  if (out || !needs_recording({&re, &im})) return y;
  record("complex", y, {&re, &im}, [](const Tensor& g, const Node& n) -> Grads {
    return {n.needs_grad(0) ? real(g) : Tensor(), n.needs_grad(1) ? imag(g) : Tensor()};
  });
  return y;
}

Tensor conj(const Tensor& z, const Tensor* out) {
  check_out("conj", out, {&z});
  Tensor y = ops::conj(z, out);
  if (out || !is_complex(z.dtype()) || !needs_recording({&z})) return y;
  record("conj", y, {&z}, [](const Tensor& g, const Node&) -> Grads { return {conj(g)}; });
  return y;
}

}  // namespace tide::ag
