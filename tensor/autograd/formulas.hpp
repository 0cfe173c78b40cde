// What the derivative formulas in tensor/autograd/*.cpp share: arithmetic operators on
// tensors (through the differentiable ops, so formulas are differentiable again) and the
// shorthand for recording a node.
#pragma once
#include "../ops/creation.hpp"
#include "../overlap.hpp"
#include "functions.hpp"

namespace tide::ag {

inline Tensor operator+(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
inline Tensor operator+(const Tensor& a, double b) { return binary(BinaryOp::Add, a, b); }
inline Tensor operator-(const Tensor& a, double b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor operator*(const Tensor& a, double b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor operator/(const Tensor& a, double b) { return binary(BinaryOp::Div, a, b); }
inline Tensor operator+(double a, const Tensor& b) { return binary(BinaryOp::Add, a, b); }
inline Tensor operator-(double a, const Tensor& b) { return binary(BinaryOp::Sub, a, b); }
inline Tensor operator*(double a, const Tensor& b) { return binary(BinaryOp::Mul, a, b); }
inline Tensor operator/(double a, const Tensor& b) { return binary(BinaryOp::Div, a, b); }
inline Tensor operator-(const Tensor& a) { return unary(UnaryOp::Neg, a); }

// A result autograd tracks: floating or complex (record() refuses the complex ones whose
// formula does not hold for complex values); integer and bool results carry no gradient.
inline bool tracked_dtype(DType t) { return is_floating(t) || is_complex(t); }

// A 0/1 tensor of dtype like's dtype (comparisons give bool; this is the float mask formulas multiply by).
inline Tensor as_mask(const Tensor& bool_t, DType dtype) { return ops::cast(bool_t, dtype); }

using autograd::needs_recording;
using autograd::record;
using Grads = std::vector<Tensor>;

}  // namespace tide::ag

namespace tide::ag {

// Runs in-place op `op` on x: directly (`direct`) when nothing needs recording, otherwise as
// the differentiable out-of-place `compute` on a stand-in for x's old value, whose result is
// written back and becomes x's history (autograd.hpp's InPlace). Either way x may not have
// elements sharing one address (an expanded view): "<op>: unsupported operation: ...".
template <class Direct, class Compute>
Tensor& inplace(const char* op, Tensor& x, std::initializer_list<const Tensor*> others, Direct&& direct,
                Compute&& compute) {
  if (!needs_recording({&x}) && !needs_recording(others)) {
    check_no_internal_overlap(op, x);
    direct();
    return x;
  }
  autograd::InPlace write(x, op);
  write.commit(compute(write.input()));
  return x;
}

// Records y, the p-norm of x over dims (empty: all), with the norm's gradient (reduce.cpp);
// linalg.norm's vector and Frobenius norms share it.
void record_norm(const char* op, Tensor& y, const Tensor& x, double p, const DimList& dims);

// The tensor inside a TensorOrScalar (nullptr for a number), for record()'s input list.
inline const Tensor* tensor_ptr(const TensorOrScalar& v) { return v.is_tensor() ? &v.tensor : nullptr; }

}  // namespace tide::ag
