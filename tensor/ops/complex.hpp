// Complex tensors (complex64, complex128): casts to and from the real dtypes, the views of
// their parts, and the complex kernels of the pointwise ops. Complex tensors live on the CPU
// only (Tensor::empty refuses them elsewhere).
#pragma once
#include <optional>
#include <vector>

#include "../iterator.hpp"
#include "elementwise.hpp"

namespace tide::ops {

// copy_ from src into dst where either dtype is complex, on the CPU: complex to real keeps
// the real part (NumPy's ComplexWarning, PyTorch's UserWarning, printed once per process),
// real to complex gets a zero imaginary part, complex to bool is "nonzero".
void copy_complex(const TensorIter& it, DType dst, DType src);

// x.real / x.imag: views of the parts of a complex tensor (real dtype, doubled strides);
// real() of a real tensor is x itself, imag() of one is an error as in PyTorch.
Tensor real(const Tensor& x);
Tensor imag(const Tensor& x);
// torch.view_as_real (shape + {2}) and torch.view_as_complex (last dim 2, stride 1).
Tensor view_as_real(const Tensor& x);
Tensor view_as_complex(const Tensor& x);
// torch.complex(real, imag) and torch.polar(abs, angle): two float tensors of one dtype
// (broadcast) give the complex tensor of their precision.
Tensor complex(const Tensor& re, const Tensor& im, const Tensor* out = nullptr);
Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor* out = nullptr);

// The argument of complex x (atan2(imag, real)) in its real dtype; of a real x, pi where x
// is negative and 0 elsewhere. conj: the conjugate as a new tensor (PyTorch's conj_physical;
// x itself for a real x).
Tensor angle(const Tensor& x, const Tensor* out = nullptr);
Tensor conj(const Tensor& x, const Tensor* out = nullptr);

// torch.sgn of a complex x: x/|x| (|x| by hypot), 0 where x is 0 (real x: ops::unary Sign).
Tensor sgn(const Tensor& x, const Tensor* out = nullptr);

// The pointwise ops on complex operands (elementwise.cpp hands them over): those that have
// a complex meaning compute it, the others fail naming the op and the dtype.
Tensor complex_unary(UnaryOp op, const Tensor& x, const Tensor* out);
Tensor complex_binary(BinaryOp op, const TensorOrScalar& a, const TensorOrScalar& b, DType common, const Tensor* out);

// sum, mean and prod (op names them) of a complex x, or of x cast to a complex dtype: dims
// 0-based and valid (empty: all), as ops::sum takes them.
Tensor complex_reduce(const char* op, const Tensor& x, const std::vector<int>& dims, bool keepdim,
                      std::optional<DType> dtype);

// cumsum and cumprod (op names them) of a complex x, or of x cast to a complex dtype, along
// the 0-based valid dim d: running sums or products in the element's precision, each row
// starting from its first element, as NumPy accumulates.
Tensor complex_scan(const char* op, const Tensor& x, int d, std::optional<DType> dtype);

// linalg.eig / eigvals of real square matrices (batched over leading dims) through LAPACK
// geev: {w} or {w, V} (V's columns the eigenvectors, unit norm). always_complex: complex
// results (torch.linalg.eig); else real ones when every eigenvalue is real (np.linalg.eig).
// Integer input is float64 (NumPy semantics) or an error (PyTorch).
std::vector<Tensor> eig(const Tensor& A, bool compute_v, bool always_complex, const char* op);

}  // namespace tide::ops
