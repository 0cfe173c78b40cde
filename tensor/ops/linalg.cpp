// Linear algebra: the checks, shapes and dtypes of the matrix products, whose kernels are the
// tensor's backend's (tensor/cpu/gemm.cpp on the CPU), and the LAPACK-backed solve / inv /
// det / matrix norms. See linalg.hpp for the rules.
#include "linalg.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "../backend.hpp"
#include "../cpu/backend.hpp"
#include "../cpu/blas.hpp"
#include "../overlap.hpp"
#include "creation.hpp"
#include "elementwise.hpp"
#include "reduce.hpp"
#include "shape.hpp"

namespace tide::ops {

namespace {

// ---------------------------------------------------------------------------------------
// Checks and small helpers

std::string ndim_str(const Tensor& t) { return std::to_string(t.dim()) + "-D"; }

DType common_dtype(const char* op, const Tensor& a, const Tensor& b, DTypePolicy policy) {
  if (a.dtype() == b.dtype()) return a.dtype();
  TIDE_CHECK(policy == DTypePolicy::Promote, op,
             ": expected both tensors to have the same dtype, got ", dtype_name(a.dtype()), " and ",
             dtype_name(b.dtype()));
  return promote_types(a.dtype(), b.dtype());
}

void check_devices(const char* op, const Tensor& a, const Tensor& b) {
  TIDE_CHECK(a.defined() && b.defined(), op, ": got an undefined tensor");
  check_same_device(op, a, b);
}

[[noreturn]] void fail_shapes(const char* op, const Tensor& a, const Tensor& b, int64_t ka, int64_t kb) {
  TIDE_FAIL(op, ": shapes ", a.sizes().str(), " and ", b.sizes().str(), " cannot be multiplied (", ka,
            " ~= ", kb, ")");
}

// The tensor a result is computed into: `out` itself when it is contiguous, has the result's
// shape and dtype and shares no memory with an input (tensor/overlap.hpp); otherwise a new
// tensor, which deliver() copies into out. An out with elements sharing one address is an
// error.
Tensor result_tensor(const char* op, const Dims& shape, DType dt, const Tensor* out,
                     std::initializer_list<const Tensor*> inputs) {
  const Device device = (*inputs.begin())->device();
  if (out) {
    TIDE_CHECK(out->device() == device, op, ": out is on ", out->device().str(), " but the inputs are on ",
               device.str());
    TIDE_CHECK(out->sizes() == shape, op, ": out has shape ", out->sizes().str(),
               " but the result has shape ", shape.str());
    check_can_cast(op, dt, out->dtype());
    check_no_internal_overlap(op, *out);
    bool direct = out->dtype() == dt && out->is_contiguous();
    for (const Tensor* in : inputs)
      if (needs_copy(*out, *in, Reads::Any)) direct = false;
    if (direct) return *out;
  }
  return Tensor::empty(shape, dt, device, op);
}

// Hands the result back through `out` (copying when it was computed elsewhere).
Tensor deliver(Tensor result, const Tensor* out) {
  if (!out) return result;
  Tensor o = *out;
  if (result.same(o) || (result.impl()->storage == o.impl()->storage && result.offset() == o.offset())) {
    o.storage()->bump_version();
  } else {
    copy_(o, result);
  }
  return o;
}

// A view of t broadcast (right-aligned, stride 0) to `shape`; the caller checked it fits.
Tensor expand_to(const Tensor& t, const Dims& shape) {
  if (t.sizes() == shape) return t;
  int n = shape.size(), k = t.dim();
  Dims st(n, 0);
  for (int i = 0; i < k; ++i) {
    int d = n - k + i;
    st[d] = t.size(i) == 1 && shape[d] != 1 ? 0 : t.stride(i);
  }
  return t.as_strided(shape, st, t.offset());
}

// copy_ of a source whose dims broadcast to the destination's.
void copy_bcast(Tensor& dst, const Tensor& src) { copy_(dst, expand_to(src, dst.sizes())); }

// A view (or, when the layout does not allow one, a copy) of t with another shape.
Tensor reshape_to(const Tensor& t, const Dims& shape) {
  Tensor c = t.contiguous();
  return c.as_strided(shape, contiguous_strides(shape), c.offset());
}

// Folds all dims but the last into one: a view when the layout allows, else a copy.
Tensor fold_leading(const Tensor& t) {
  int nd = t.dim();
  Dims lead;
  for (int d = 0; d + 1 < nd; ++d) lead.push_back(t.size(d));
  const int64_t rows = shape_numel(lead);  // 0 when any size is 0
  int64_t cols = nd ? t.size(nd - 1) : 1;
  if (nd == 2) return t;
  // Collapsible when each non-trivial leading dim steps over the next one exactly.
  int64_t row_stride = 0;
  bool ok = true, have = false;
  for (int d = nd - 2; d >= 0; --d) {
    if (t.size(d) == 1) continue;
    if (!have) {
      row_stride = t.stride(d);
      have = true;
      continue;
    }
    // find the next inner non-trivial leading dim
    int e = d + 1;
    while (e < nd - 1 && t.size(e) == 1) ++e;
    if (t.stride(d) != t.stride(e) * t.size(e)) ok = false;
  }
  if (ok) return t.as_strided({rows, cols}, {have ? row_stride : cols, nd ? t.stride(nd - 1) : 1}, t.offset());
  return reshape_to(t, {rows, cols});
}

// ---------------------------------------------------------------------------------------
// The core: C (batch..., m, n) = alpha * A @ B (+ beta * C), where A (a_batch..., m, k) and
// B (b_batch..., k, n) have C's dtype, any strides, and batch dims that broadcast to C's.
// C must be contiguous; only its dtype, storage and offset are used, so any contiguous tensor
// of batch*m*n elements serves (no view of the right shape needs to be made).
void gemm_core(Tensor A, Tensor B, Tensor& C, const Dims& bshape, const Scalar& alpha, const Scalar& beta,
               bool use_beta);

// One operand of a device product: the element offset of its first matrix, the distance
// between matrices (0 when one matrix serves the whole batch), and how cuBLAS reads it.
struct DeviceOperand {
  Tensor t;
  int64_t first = 0, stride = 0, ld = 0;
  bool trans = false;
};

// Lays out (batch..., rows, cols) operand t for a strided-batched product: a matrix layout
// cuBLAS takes (rows or columns contiguous) and evenly spaced matrices, else a contiguous
// copy of t expanded to the whole batch.
DeviceOperand device_operand(const Tensor& t0, const Dims& bshape, int64_t batch) {
  DeviceOperand o;
  o.t = t0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int d = o.t.dim();
    const int64_t rows = o.t.size(d - 2), cols = o.t.size(d - 1);
    CBLAS_TRANSPOSE tr;
    bool ok = blas_layout(rows, cols, o.t.stride(d - 2), o.t.stride(d - 1), tr, o.ld);
    cpu::Offsets offs;
    if (ok) {
      cpu::batch_offsets(bshape, o.t, batch, offs);
      const int64_t* off = offs.data();
      o.first = off[0];
      o.stride = batch > 1 ? off[1] - off[0] : 0;
      for (int64_t b = 2; ok && b < batch; ++b) ok = off[b] - off[b - 1] == o.stride;
      ok = ok && o.stride >= 0;
    }
    if (ok) {
      o.trans = tr == CblasTrans;
      return o;
    }
    Dims full = bshape;
    full.push_back(rows);
    full.push_back(cols);
    o.t = expand_to(o.t, full).clone();  // clone: an empty tensor counts as contiguous with any strides
  }
  TIDE_ASSERT(false);
}

// C = alpha * A @ B (+ beta * C) on a backend without the strided matmul entry: its gemm
// entry for floating dtypes (cuBLAS), or the CPU's product on host copies for integer and
// bool matrices (no device kernel; docs/cuda.md).
void gemm_device(const DeviceBackend& be, const Tensor& A, const Tensor& B, Tensor& C, const Dims& bshape,
                 int64_t batch, const Scalar& alpha, const Scalar& beta, bool use_beta) {
  const DType dt = C.dtype();
  const int64_t m = A.size(A.dim() - 2), k = A.size(A.dim() - 1), n = B.size(B.dim() - 1);
  if (!is_floating(dt)) {
    Tensor Ch = C.to_device({});
    gemm_core(A.to_device({}), B.to_device({}), Ch, bshape, alpha, beta, use_beta);
    copy_(C, Ch);
    return;
  }
  TIDE_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "matmul: matrices with more than ", INT_MAX,
             " rows or columns are not supported on ", C.device().str(), " (", m, " x ", k, " @ ", k, " x ", n, ")");
  DeviceOperand a = device_operand(A, bshape, batch), b = device_operand(B, bshape, batch);
  const int64_t item = int64_t(dtype_size(dt));
  const char* abase = static_cast<const char*>(a.t.storage()->data());
  const char* bbase = static_cast<const char*>(b.t.storage()->data());
  char* cbase = static_cast<char*>(C.storage()->data());
  be.gemm(dt, a.trans, b.trans, m, n, k, alpha.to_double(), abase + a.first * item, a.ld, a.stride,
          bbase + b.first * item, b.ld, b.stride, use_beta ? beta.to_double() : 0.0, cbase + C.offset() * item, n,
          m * n, batch);
}


void gemm_core(Tensor A, Tensor B, Tensor& C, const Dims& bshape, const Scalar& alpha, const Scalar& beta,
               bool use_beta) {
  const int64_t m = A.size(A.dim() - 2), n = B.size(B.dim() - 1);
  const int64_t batch = shape_numel(bshape);  // a factor of C's numel
  if (batch == 0 || m == 0 || n == 0) return;
  if (alpha.is_zero()) {
    // alpha = 0: the product is not formed, so NaN and inf in A and B do not reach C (the
    // reference BLAS's rule, which OpenBLAS's AVX-512 small-matrix kernels break: they
    // compute 0 * NaN); beta = 0 likewise ignores C's values.
    Tensor C1 = C.as_strided({batch * m * n}, {1}, C.offset());
    if (use_beta && !beta.is_zero()) binary(BinaryOp::Mul, C1, beta, &C1);
    else fill_(C1, Scalar(0.0));
    return;
  }
  const DeviceBackend& be = backend_for(C.device());
  if (be.matmul) return be.matmul(A, B, C, bshape, batch, alpha, beta, use_beta);
  gemm_device(be, A, B, C, bshape, batch, alpha, beta, use_beta);
}

// Broadcast of two batch shapes, with an error naming the operands.
Dims broadcast_batch(const char* op, const Tensor& a, const Tensor& b, const Dims& ab, const Dims& bb) {
  int n = std::max(ab.size(), bb.size());
  Dims out(n, 1);
  for (int i = 0; i < n; ++i) {
    int ia = ab.size() - n + i, ib = bb.size() - n + i;
    int64_t x = ia >= 0 ? ab[ia] : 1, y = ib >= 0 ? bb[ib] : 1;
    TIDE_CHECK(x == y || x == 1 || y == 1, op, ": the batch dims of shapes ", a.sizes().str(), " and ",
               b.sizes().str(), " cannot be broadcast (", ab.str(), " and ", bb.str(), ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

Dims leading(const Tensor& t, int drop) {
  Dims d;
  for (int i = 0; i + drop < t.dim(); ++i) d.push_back(t.size(i));
  return d;
}

// 1-D x 1-D -> 0-D
Tensor dot_1d(const char* op, const Tensor& a, const Tensor& b, const Tensor* out) {
  const int64_t n = a.size(0);
  if (n != b.size(0)) fail_shapes(op, a, b, n, b.size(0));
  const DType dt = a.dtype();
  Tensor r = result_tensor(op, {}, dt, out, {&a, &b});
  if ((dt == DType::Float32 || dt == DType::Float64) && n > 64 && n <= INT_MAX && a.device().is_cpu()) {
    Tensor x = a, y = b;
    // BLAS reads a negative increment from the vector's lowest address, not its first element.
    if (n > 1 && (x.stride(0) <= 0 || x.stride(0) > INT_MAX)) x = x.contiguous();
    if (n > 1 && (y.stride(0) <= 0 || y.stride(0) > INT_MAX)) y = y.contiguous();
    int incx = n > 1 ? int(x.stride(0)) : 1, incy = n > 1 ? int(y.stride(0)) : 1;
    run_host_kernel(
        op, {&x, &y, &r},
        [x, y, r, n, incx, incy, dt] {
          if (dt == DType::Float32) *r.data<float>() = cblas_sdot(int(n), x.data<float>(), incx, y.data<float>(), incy);
          else *r.data<double>() = cblas_ddot(int(n), x.data<double>(), incx, y.data<double>(), incy);
        },
        2);
    return deliver(r, out);
  }
  // The own loop: (1 x n) @ (n x 1)
  Tensor A = a.as_strided({1, n}, {n * a.stride(0), a.stride(0)}, a.offset());
  Tensor B = b.as_strided({n, 1}, {b.stride(0), 1}, b.offset());
  gemm_core(A, B, r, {}, Scalar(1.0), Scalar(0.0), false);
  return deliver(r, out);
}

// matmul after the dtype has been settled (a and b have the same dtype, both >= 1-D).
Tensor matmul_impl(const char* op, const Tensor& a, const Tensor& b, const Tensor* out) {
  if (a.dim() == 1 && b.dim() == 1) return dot_1d(op, a, b, out);
  Tensor A = a.dim() == 1 ? unsqueeze(a, 0) : a;
  Tensor B = b.dim() == 1 ? unsqueeze(b, 1) : b;
  const int64_t ka = A.size(A.dim() - 1), kb = B.size(B.dim() - 2);
  if (ka != kb) fail_shapes(op, a, b, ka, kb);
  Dims bshape = broadcast_batch(op, a, b, leading(A, 2), leading(B, 2));
  const int64_t m = A.size(A.dim() - 2), n = B.size(B.dim() - 1);
  Dims rshape = bshape;
  if (a.dim() > 1) rshape.push_back(m);
  if (b.dim() > 1) rshape.push_back(n);
  Tensor r = result_tensor(op, rshape, a.dtype(), out, {&a, &b});
  gemm_core(A, B, r, bshape, Scalar(1.0), Scalar(0.0), false);
  return deliver(r, out);
}

std::pair<Tensor, Tensor> settle_dtypes(const char* op, const Tensor& a, const Tensor& b, DTypePolicy policy) {
  check_devices(op, a, b);
  DType dt = common_dtype(op, a, b, policy);
  return {a.to(dt), b.to(dt)};
}

// ---------------------------------------------------------------------------------------
// LAPACK

// The dtype LAPACK computes in for an input dtype, and the dtype of the result.
DType lapack_dtype(const char* op, DType dt, DTypePolicy policy, DType& result) {
  if (dt == DType::Float32 || dt == DType::Float64) {
    result = dt;
    return dt;
  }
  if (dt == DType::Float16 || dt == DType::BFloat16) {
    result = dt;
    return DType::Float32;
  }
  TIDE_CHECK(policy == DTypePolicy::Promote, op, ": expected a floating-point tensor, got ", dtype_name(dt));
  result = DType::Float64;
  return DType::Float64;
}

void check_square(const char* op, const Tensor& A, const char* what = "A") {
  TIDE_CHECK(A.dim() >= 2, op, ": ", what, " must be a matrix or a batch of matrices, got a ", ndim_str(A),
             " tensor of shape ", A.sizes().str());
  TIDE_CHECK(A.size(A.dim() - 1) == A.size(A.dim() - 2), op, ": ", what,
             " must be a square matrix or a batch of square matrices, got shape ", A.sizes().str());
}

std::string batch_note(int64_t batch, int64_t b) {
  if (batch <= 1) return "the matrix is singular";
  return "matrix " + std::to_string(b + 1) + " of the batch is singular";
}

// Runs f with a float or double argument (the LAPACK compute dtypes).
template <typename F>
void lapack_dispatch(DType dt, F&& f) {
  if (dt == DType::Float32) f(float(0));
  else f(double(0));
}

template <typename T>
lapack_int lapack_getrf(lapack_int n, T* a, lapack_int* ipiv) {
  if constexpr (std::is_same_v<T, float>) return LAPACKE_sgetrf_work(LAPACK_COL_MAJOR, n, n, a, n, ipiv);
  else return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, n, n, a, n, ipiv);
}
template <typename T>
lapack_int lapack_getrs(char trans, lapack_int n, lapack_int nrhs, const T* a, const lapack_int* ipiv, T* b) {
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, n, ipiv, b, n);
  else return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, trans, n, nrhs, a, n, ipiv, b, n);
}
template <typename T>
lapack_int lapack_getri(lapack_int n, T* a, const lapack_int* ipiv, T* work, lapack_int lwork) {
  if constexpr (std::is_same_v<T, float>) return LAPACKE_sgetri_work(LAPACK_COL_MAJOR, n, a, n, ipiv, work, lwork);
  else return LAPACKE_dgetri_work(LAPACK_COL_MAJOR, n, a, n, ipiv, work, lwork);
}

// A row-major (n x n) copy of each matrix of A is, read column-major, its transpose; LU of
// the transpose serves for A x = b (getrs with 'T'), inv (inv(A^T) = inv(A)^T) and det.
// batch_copy makes that contiguous (batch, n, n) copy in the compute dtype.
Tensor batch_copy(const char* op, const Tensor& A, const Dims& bshape, DType cdt) {
  int64_t n = A.size(A.dim() - 1);
  Dims shape = bshape;
  shape.push_back(n);
  shape.push_back(n);
  Tensor mats = Tensor::empty(shape, cdt, Device{}, op);
  copy_bcast(mats, A);
  return mats;
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Products

Tensor mm(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy) {
  const char* op = "mm";
  check_devices(op, a, b);
  TIDE_CHECK(a.dim() == 2 && b.dim() == 2, op, ": expected 2-D tensors, got ", ndim_str(a), " and ", ndim_str(b));
  if (a.size(1) != b.size(0)) fail_shapes(op, a, b, a.size(1), b.size(0));
  auto [x, y] = settle_dtypes(op, a, b, policy);
  return matmul_impl(op, x, y, out);
}

Tensor mv(const Tensor& a, const Tensor& v, const Tensor* out, DTypePolicy policy) {
  const char* op = "mv";
  check_devices(op, a, v);
  TIDE_CHECK(a.dim() == 2 && v.dim() == 1, op, ": expected a 2-D matrix and a 1-D vector, got ", ndim_str(a),
             " and ", ndim_str(v));
  if (a.size(1) != v.size(0)) fail_shapes(op, a, v, a.size(1), v.size(0));
  auto [x, y] = settle_dtypes(op, a, v, policy);
  return matmul_impl(op, x, y, out);
}

Tensor bmm(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy) {
  const char* op = "bmm";
  check_devices(op, a, b);
  TIDE_CHECK(a.dim() == 3 && b.dim() == 3, op, ": expected 3-D tensors, got ", ndim_str(a), " and ", ndim_str(b));
  TIDE_CHECK(a.size(0) == b.size(0), op, ": batch sizes ", a.size(0), " and ", b.size(0), " differ (shapes ",
             a.sizes().str(), " and ", b.sizes().str(), ")");
  if (a.size(2) != b.size(1)) fail_shapes(op, a, b, a.size(2), b.size(1));
  auto [x, y] = settle_dtypes(op, a, b, policy);
  return matmul_impl(op, x, y, out);
}

Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy, const char* op) {
  check_devices(op, a, b);
  TIDE_CHECK(a.dim() >= 1 && b.dim() >= 1, op, ": both arguments need to be at least 1-D, got ", ndim_str(a),
             " and ", ndim_str(b));
  auto [x, y] = settle_dtypes(op, a, b, policy);
  return matmul_impl(op, x, y, out);
}

Tensor dot(const Tensor& a, const Tensor& b, const Tensor* out, DTypePolicy policy, const char* op) {
  check_devices(op, a, b);
  auto [x, y] = settle_dtypes(op, a, b, policy);
  if (out) check_no_internal_overlap(op, *out);  // before mul would, under its name
  if (x.dim() == 0 || y.dim() == 0) return binary(BinaryOp::Mul, x, y, out);
  if (y.dim() <= 2) return matmul_impl(op, x, y, out);
  // N-D: sum over the last dim of a and the second-to-last of b.
  const int nb = y.dim();
  const int64_t ka = x.size(x.dim() - 1), kb = y.size(nb - 2), n = y.size(nb - 1);
  if (ka != kb) fail_shapes(op, a, b, ka, kb);
  Tensor A2 = x.dim() == 1 ? unsqueeze(x, 0) : fold_leading(x);
  // b permuted to (k, batch..., n), made (k, batch*n)
  Dims ps, pst;
  ps.push_back(kb);
  pst.push_back(y.stride(nb - 2));
  Dims col_sizes;
  for (int d = 0; d < nb; ++d) {
    if (d == nb - 2) continue;
    ps.push_back(y.size(d));
    pst.push_back(y.stride(d));
    col_sizes.push_back(y.size(d));
  }
  const int64_t cols = shape_numel(col_sizes);
  Tensor B2 = reshape_to(y.as_strided(ps, pst, y.offset()), {kb, cols});
  Dims rshape = leading(x, 1);
  for (int d = 0; d < nb; ++d)
    if (d != nb - 2) rshape.push_back(y.size(d));
  Tensor r = result_tensor(op, rshape, x.dtype(), out, {&a, &b});
  gemm_core(A2, B2, r, {}, Scalar(1.0), Scalar(0.0), false);
  (void)n;
  return deliver(r, out);
}

Tensor outer(const Tensor& a, const Tensor& b, const Tensor* out, bool flatten, const char* op) {
  check_devices(op, a, b);
  Tensor x = a, y = b;
  if (flatten) {
    if (x.dim() != 1) x = reshape_to(x, {x.numel()});
    if (y.dim() != 1) y = reshape_to(y, {y.numel()});
  }
  TIDE_CHECK(x.dim() == 1 && y.dim() == 1, op, ": expected 1-D tensors, got ", ndim_str(a), " and ", ndim_str(b));
  const int64_t n = x.size(0), m = y.size(0);
  if (out) check_no_internal_overlap(op, *out);  // before mul would refuse it under its own name
  Tensor xv = x.as_strided({n, m}, {x.stride(0), 0}, x.offset());
  Tensor yv = y.as_strided({n, m}, {0, y.stride(0)}, y.offset());
  return binary(BinaryOp::Mul, xv, yv, out);
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha,
             const Tensor* out, bool inplace) {
  const char* op = inplace ? "addmm_" : "addmm";
  check_devices(op, a, b);
  check_devices(op, bias, a);
  TIDE_CHECK(a.dim() == 2 && b.dim() == 2, op, ": expected 2-D tensors, got ", ndim_str(a), " and ", ndim_str(b));
  if (a.size(1) != b.size(0)) fail_shapes(op, a, b, a.size(1), b.size(0));
  TIDE_CHECK(a.dtype() == b.dtype() && a.dtype() == bias.dtype(), op,
             ": expected all tensors to have the same dtype, got ", dtype_name(bias.dtype()), ", ",
             dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  const DType dt = a.dtype();
  if (!is_floating(dt)) {
    TIDE_CHECK(beta.kind != Scalar::Float && alpha.kind != Scalar::Float, op,
               ": for ", dtype_name(dt), " tensors beta and alpha must be integers");
  }
  const int64_t m = a.size(0), n = b.size(1);
  Dims rshape{m, n};
  const bool use_beta = beta.to_double() != 0.0;
  Tensor C;
  if (inplace) {
    TIDE_CHECK(bias.sizes() == rshape, op, ": the tensor of shape ", bias.sizes().str(),
               " cannot hold the result of shape ", rshape.str());
    const Tensor* target = &bias;
    C = result_tensor(op, rshape, dt, target, {&a, &b});
    if (!C.same(bias) && use_beta) {
      copy_bcast(C, bias);
    }
    gemm_core(a, b, C, {}, alpha, beta, use_beta);
    return deliver(C, target);
  }
  // broadcast check of the bias
  {
    const Dims& bs = bias.sizes();
    bool ok = bs.size() <= 2;
    for (int i = 0; ok && i < bs.size(); ++i) {
      int64_t want = rshape[2 - bs.size() + i];
      ok = bs[i] == want || bs[i] == 1;
    }
    TIDE_CHECK(ok, op, ": the bias of shape ", bs.str(), " cannot be broadcast to the result shape ",
               rshape.str());
  }
  C = result_tensor(op, rshape, dt, out, {&a, &b, &bias});
  if (use_beta) copy_bcast(C, bias);
  gemm_core(a, b, C, {}, alpha, beta, use_beta);
  return deliver(C, out);
}

// ---------------------------------------------------------------------------------------
// Solve, inverse, determinant

Tensor solve(const Tensor& A, const Tensor& B, DTypePolicy policy, const char* op) {
  check_devices(op, A, B);
  if (!A.device().is_cpu())  // LAPACK on host copies (no device kernel; docs/cuda.md)
    return solve(A.to_device({}), B.to_device({}), policy, op).to_device(A.device());
  check_square(op, A);
  const int64_t n = A.size(A.dim() - 1);
  TIDE_CHECK(B.dim() >= 1, op, ": B must be at least 1-D, got a 0-D tensor");
  DType dt = common_dtype(op, A, B, policy), rdt;
  const DType cdt = lapack_dtype(op, dt, policy, rdt);
  // B is a vector when 1-D, or when it has A's shape without the last dim.
  bool vec = B.dim() == 1;
  if (!vec && B.dim() == A.dim() - 1) {
    vec = true;
    for (int i = 0; i < B.dim(); ++i) vec = vec && B.size(i) == A.size(i);
  }
  Tensor Bm = vec ? unsqueeze(B, B.dim()) : B;
  TIDE_CHECK(Bm.size(Bm.dim() - 2) == n, op, ": shapes ", A.sizes().str(), " and ", B.sizes().str(),
             " are incompatible (", n, " ~= ", Bm.size(Bm.dim() - 2), ")");
  TIDE_CHECK(n <= INT_MAX && Bm.size(Bm.dim() - 1) <= INT_MAX, op, ": matrices of shape ",
             A.sizes().str(), " are too large for LAPACK");
  Dims bshape = broadcast_batch(op, A, B, leading(A, 2), leading(Bm, 2));
  const int64_t nrhs = Bm.size(Bm.dim() - 1);
  Tensor mats = batch_copy(op, A, bshape, cdt);
  const int64_t batch = shape_numel(bshape);  // each read column-major is A^T
  // X: (batch..., nrhs, n) contiguous, i.e. each right-hand side a column-major (n x nrhs)
  Dims xs = bshape;
  xs.push_back(nrhs);
  xs.push_back(n);
  Tensor X = Tensor::empty(xs, cdt, Device{}, op);
  {
    Dims bsz = bshape, bst = contiguous_strides(xs);
    bsz.push_back(n);
    bsz.push_back(nrhs);
    Dims st = bst;
    std::swap(st[st.size() - 1], st[st.size() - 2]);
    Tensor Xt = X.as_strided(bsz, st, 0);  // the (n x nrhs) view of each column-major block
    copy_bcast(Xt, Bm);
  }
  if (n > 0 && nrhs > 0) {
    std::vector<lapack_int> ipiv(static_cast<size_t>(n));
    lapack_dispatch(cdt, [&](auto zero_) {
      using scalar_t = decltype(zero_);
      {
        scalar_t* a = mats.data<scalar_t>();
        scalar_t* x = X.data<scalar_t>();
        for (int64_t bi = 0; bi < batch; ++bi) {
          scalar_t* ab = a + bi * n * n;
          lapack_int info = lapack_getrf<scalar_t>(lapack_int(n), ab, ipiv.data());
          TIDE_CHECK(info <= 0, op, ": ", batch_note(batch, bi), " (U[", info, ",", info, "] = 0)");
          TIDE_ASSERT(info == 0);
          info = lapack_getrs<scalar_t>('T', lapack_int(n), lapack_int(nrhs), ab, ipiv.data(), x + bi * n * nrhs);
          TIDE_ASSERT(info == 0);
        }
      }
    });
  }
  // Result: (batch..., n, nrhs) contiguous, or (batch..., n) for a vector B.
  Dims rs = bshape;
  rs.push_back(n);
  if (!vec) rs.push_back(nrhs);
  Tensor R = Tensor::empty(rs, rdt, Device{}, op);
  if (vec) {
    Tensor Xv = X.as_strided(rs, contiguous_strides(rs), 0);
    copy_(R, Xv);
  } else {
    Dims bsz = bshape, st = contiguous_strides(xs);
    bsz.push_back(n);
    bsz.push_back(nrhs);
    std::swap(st[st.size() - 1], st[st.size() - 2]);
    copy_(R, X.as_strided(bsz, st, 0));
  }
  return R;
}

// The square matrices of A (batched over its leading dims), copied column-major in the
// dtype LAPACK computes in: what inv and det start from.
struct SquareBatch {
  int64_t n = 0, batch = 1;
  DType rdt = DType::Float32, cdt = DType::Float32;  // result dtype, LAPACK dtype
  Dims bshape;
  Tensor mats;
};

static SquareBatch square_batch(const Tensor& A, DTypePolicy policy, const char* op) {
  check_cpu(A, op);
  check_square(op, A);
  SquareBatch sb;
  sb.n = A.size(A.dim() - 1);
  sb.cdt = lapack_dtype(op, A.dtype(), policy, sb.rdt);
  TIDE_CHECK(sb.n <= INT_MAX, op, ": matrices of shape ", A.sizes().str(), " are too large for LAPACK");
  sb.bshape = leading(A, 2);
  sb.mats = batch_copy(op, A, sb.bshape, sb.cdt);
  sb.batch = shape_numel(sb.bshape);
  return sb;
}

Tensor inv(const Tensor& A, DTypePolicy policy, const char* op) {
  check_defined(A, op);
  if (!A.device().is_cpu()) return inv(A.to_device({}), policy, op).to_device(A.device());
  SquareBatch sb = square_batch(A, policy, op);
  const int64_t n = sb.n, batch = sb.batch;
  Tensor mats = sb.mats;  // column-major A^T; its inverse is inv(A) row-major
  const DType rdt = sb.rdt, cdt = sb.cdt;
  if (n > 0) {
    std::vector<lapack_int> ipiv(static_cast<size_t>(n));
    lapack_dispatch(cdt, [&](auto zero_) {
      using scalar_t = decltype(zero_);
      {
        scalar_t* a = mats.data<scalar_t>();
        scalar_t wq = 0;
        lapack_getri<scalar_t>(lapack_int(n), a, ipiv.data(), &wq, -1);
        lapack_int lwork = std::max<lapack_int>(lapack_int(wq), lapack_int(n));
        std::vector<scalar_t> work(static_cast<size_t>(lwork));
        for (int64_t bi = 0; bi < batch; ++bi) {
          scalar_t* ab = a + bi * n * n;
          lapack_int info = lapack_getrf<scalar_t>(lapack_int(n), ab, ipiv.data());
          TIDE_CHECK(info <= 0, op, ": ", batch_note(batch, bi), " (U[", info, ",", info, "] = 0)");
          TIDE_ASSERT(info == 0);
          info = lapack_getri<scalar_t>(lapack_int(n), ab, ipiv.data(), work.data(), lwork);
          TIDE_CHECK(info <= 0, op, ": ", batch_note(batch, bi), " (U[", info, ",", info, "] = 0)");
          TIDE_ASSERT(info == 0);
        }
      }
    });
  }
  return mats.to(rdt);
}

Tensor det(const Tensor& A, DTypePolicy policy, const char* op) {
  check_defined(A, op);
  if (!A.device().is_cpu()) return det(A.to_device({}), policy, op).to_device(A.device());
  SquareBatch sb = square_batch(A, policy, op);
  const int64_t n = sb.n, batch = sb.batch;
  Tensor mats = sb.mats;
  const DType rdt = sb.rdt, cdt = sb.cdt;
  const Dims& bshape = sb.bshape;
  Tensor R = Tensor::empty(bshape, cdt, Device{}, op);
  std::vector<lapack_int> ipiv(static_cast<size_t>(std::max<int64_t>(n, 1)));
  lapack_dispatch(cdt, [&](auto zero_) {
    using scalar_t = decltype(zero_);
    {
      scalar_t* a = mats.data<scalar_t>();
      scalar_t* r = R.data<scalar_t>();
      for (int64_t bi = 0; bi < batch; ++bi) {
        if (n == 0) {
          r[bi] = 1;
          continue;
        }
        scalar_t* ab = a + bi * n * n;
        lapack_int info = lapack_getrf<scalar_t>(lapack_int(n), ab, ipiv.data());
        TIDE_ASSERT(info >= 0);
        scalar_t d = 1;
        for (int64_t i = 0; i < n; ++i) {
          d *= ab[i * n + i];
          if (ipiv[size_t(i)] != lapack_int(i + 1)) d = -d;
        }
        r[bi] = d;
      }
    }
  });
  return R.to(rdt);
}

// ---------------------------------------------------------------------------------------
// Norms

Tensor linalg_norm(const Tensor& x, NormOrd ord, const std::vector<int>& dims_in, bool keepdim,
                   DTypePolicy policy, const char* op) {
  check_defined(x, op);
  if (!x.device().is_cpu())
    return linalg_norm(x.to_device({}), ord, dims_in, keepdim, policy, op).to_device(x.device());
  const int nd = x.dim();
  DType rdt = x.dtype();
  if (!is_floating(rdt)) rdt = policy == DTypePolicy::Promote ? DType::Float64 : default_float_dtype();
  std::vector<int> dims = dims_in;
  for (int d : dims) TIDE_CHECK(d >= 0 && d < nd, op, ": dim ", d + 1, " is out of range for a ", nd, "-D tensor");
  const Tensor xf = x.to(rdt);
  if (dims.empty()) {
    // No ord: the 2-norm of the flattened tensor, whatever its rank.
    if (ord.kind == NormOrd::Default) return norm(xf, 2.0, {}, keepdim);
    TIDE_CHECK(nd == 1 || nd == 2, op, ": with an ord and no dims the input must be 1-D or 2-D, got ", nd, "-D");
    for (int d = 0; d < nd; ++d) dims.push_back(d);
  }
  TIDE_CHECK(dims.size() == 1 || dims.size() == 2, op, ": expected 1 or 2 dims, got ", dims.size());
  if (dims.size() == 1) {
    TIDE_CHECK(ord.kind == NormOrd::Default || ord.kind == NormOrd::P, op, ": the '",
               ord.kind == NormOrd::Fro ? "fro" : "nuc", "' norm needs two dims (a matrix)");
    return norm(xf, ord.kind == NormOrd::P ? ord.p : 2.0, dims, keepdim);
  }
  TIDE_CHECK(dims[0] != dims[1], op, ": the two dims must differ, got ", dims[0] + 1, " twice");
  if (ord.kind == NormOrd::Default || ord.kind == NormOrd::Fro) return norm(xf, 2.0, dims, keepdim);
  if (ord.kind == NormOrd::P) {
    double p = ord.p;
    TIDE_CHECK(p == 1 || p == -1 || p == 2 || p == -2 || std::isinf(p), op, ": invalid norm order ", p,
               " for matrices (expected 1, -1, 2, -2, inf, -inf, 'fro' or 'nuc')");
  }

  // (batch..., rows, cols) float64 copy: the kept dims in order, then the two matrix dims.
  Dims ps, pst, kept;
  for (int d = 0; d < nd; ++d)
    if (d != dims[0] && d != dims[1]) {
      ps.push_back(x.size(d));
      pst.push_back(x.stride(d));
      kept.push_back(x.size(d));
    }
  const int64_t rows = x.size(dims[0]), cols = x.size(dims[1]), inner = shape_numel({rows, cols});
  for (int d : dims) {
    ps.push_back(x.size(d));
    pst.push_back(x.stride(d));
  }
  Tensor work = Tensor::empty(ps, DType::Float64);
  copy_(work, x.as_strided(ps, pst, x.offset()));
  const int64_t outer_n = shape_numel(kept);
  Tensor res = Tensor::empty(kept, DType::Float64);
  const double* w = work.data<double>();
  double* r = res.data<double>();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();

  if (ord.kind == NormOrd::Nuc || std::fabs(ord.p) == 2) {
    // From the singular values (LAPACK gesdd); a row-major matrix read column-major is its
    // transpose, which has the same singular values.
    TIDE_CHECK(rows <= INT_MAX && cols <= INT_MAX, op, ": the matrices are too large for LAPACK");
    const int64_t kmin = std::min(rows, cols);
    std::vector<double> s(static_cast<size_t>(std::max<int64_t>(kmin, 1)));
    std::vector<double> a(static_cast<size_t>(std::max<int64_t>(inner, 1)));
    for (int64_t b = 0; b < outer_n; ++b) {
      if (kmin == 0) {
        r[b] = ord.kind == NormOrd::Nuc || ord.p > 0 ? 0.0 : inf;
        continue;
      }
      std::copy(w + b * inner, w + (b + 1) * inner, a.begin());
      bool finite = true;
      for (int64_t i = 0; i < inner; ++i) finite = finite && std::isfinite(a[size_t(i)]);
      if (!finite) {
        r[b] = nan;
        continue;
      }
      lapack_int info = LAPACKE_dgesdd(LAPACK_COL_MAJOR, 'N', lapack_int(cols), lapack_int(rows), a.data(),
                                       lapack_int(cols), s.data(), nullptr, 1, nullptr, 1);
      TIDE_CHECK(info == 0, op, ": the singular value decomposition did not converge");
      if (ord.kind == NormOrd::Nuc) {
        double t = 0;
        for (int64_t i = 0; i < kmin; ++i) t += s[size_t(i)];
        r[b] = t;
      } else {
        r[b] = ord.p > 0 ? s[0] : s[size_t(kmin - 1)];
      }
    }
  } else {
    // 1 / -1: the largest / smallest column sum of |x|; inf / -inf: the same over rows.
    const bool by_cols = std::fabs(ord.p) == 1, want_max = ord.p > 0;
    const int64_t outer_len = by_cols ? cols : rows, inner_len = by_cols ? rows : cols;
    for (int64_t b = 0; b < outer_n; ++b) {
      const double* m = w + b * inner;
      double best = want_max ? 0.0 : inf;
      for (int64_t o = 0; o < outer_len; ++o) {
        double sum = 0;
        for (int64_t i = 0; i < inner_len; ++i) sum += std::fabs(by_cols ? m[i * cols + o] : m[o * cols + i]);
        if (std::isnan(sum) || std::isnan(best)) best = nan;
        else best = want_max ? std::max(best, sum) : std::min(best, sum);
      }
      r[b] = best;
    }
  }

  Tensor out = res.to(rdt);
  if (keepdim) {
    Dims ks;
    int ki = 0;
    for (int d = 0; d < nd; ++d) ks.push_back(d == dims[0] || d == dims[1] ? 1 : kept[ki++]);
    out = out.as_strided(ks, contiguous_strides(ks), out.offset());
  }
  return out;
}


// ---------------------------------------------------------------------------------------
// Decompositions: svd, qr, eigh, cholesky, lstsq, slogdet

namespace {

// LAPACK's float / double routines under one name (the _work forms: no NaN scan, and the
// workspace is ours).
template <typename T>
struct Lapack;
template <>
struct Lapack<float> {
  static lapack_int gesdd(char jobz, lapack_int m, lapack_int n, float* a, lapack_int lda, float* s, float* u,
                          lapack_int ldu, float* vt, lapack_int ldvt, float* work, lapack_int lwork, lapack_int* iwork) {
    return LAPACKE_sgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork);
  }
  static lapack_int syevd(char jobz, char uplo, lapack_int n, float* a, float* w, float* work, lapack_int lwork,
                          lapack_int* iwork, lapack_int liwork) {
    return LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, n, w, work, lwork, iwork, liwork);
  }
  static lapack_int geqrf(lapack_int m, lapack_int n, float* a, float* tau, float* work, lapack_int lwork) {
    return LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, m, n, a, m, tau, work, lwork);
  }
  static lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, float* a, const float* tau, float* work,
                          lapack_int lwork) {
    return LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, m, tau, work, lwork);
  }
  static lapack_int potrf(char uplo, lapack_int n, float* a) { return LAPACKE_spotrf_work(LAPACK_COL_MAJOR, uplo, n, a, n); }
  static lapack_int gelsd(lapack_int m, lapack_int n, lapack_int nrhs, float* a, float* b, lapack_int ldb, float* s,
                          float rcond, lapack_int* rank, float* work, lapack_int lwork, lapack_int* iwork) {
    return LAPACKE_sgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, a, m, b, ldb, s, rcond, rank, work, lwork, iwork);
  }
};
template <>
struct Lapack<double> {
  static lapack_int gesdd(char jobz, lapack_int m, lapack_int n, double* a, lapack_int lda, double* s, double* u,
                          lapack_int ldu, double* vt, lapack_int ldvt, double* work, lapack_int lwork,
                          lapack_int* iwork) {
    return LAPACKE_dgesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt, work, lwork, iwork);
  }
  static lapack_int syevd(char jobz, char uplo, lapack_int n, double* a, double* w, double* work, lapack_int lwork,
                          lapack_int* iwork, lapack_int liwork) {
    return LAPACKE_dsyevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, n, w, work, lwork, iwork, liwork);
  }
  static lapack_int geqrf(lapack_int m, lapack_int n, double* a, double* tau, double* work, lapack_int lwork) {
    return LAPACKE_dgeqrf_work(LAPACK_COL_MAJOR, m, n, a, m, tau, work, lwork);
  }
  static lapack_int orgqr(lapack_int m, lapack_int n, lapack_int k, double* a, const double* tau, double* work,
                          lapack_int lwork) {
    return LAPACKE_dorgqr_work(LAPACK_COL_MAJOR, m, n, k, a, m, tau, work, lwork);
  }
  static lapack_int potrf(char uplo, lapack_int n, double* a) {
    return LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, uplo, n, a, n);
  }
  static lapack_int gelsd(lapack_int m, lapack_int n, lapack_int nrhs, double* a, double* b, lapack_int ldb,
                          double* s, double rcond, lapack_int* rank, double* work, lapack_int lwork,
                          lapack_int* iwork) {
    return LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, a, m, b, ldb, s, rcond, rank, work, lwork, iwork);
  }
};

// The workspace size a LAPACK query (lwork = -1) wrote into its first element.
template <typename T>
lapack_int work_size(T query) {
  return std::max<lapack_int>(1, lapack_int(query));
}

// The input checks of the decompositions: a matrix (or batch), on the CPU, in a dtype LAPACK
// takes. Half dtypes are an error as in PyTorch's and NumPy's linalg; integers are an error
// through torch and float64 through np (lapack_dtype).
DType decomp_dtype(const char* op, const Tensor& A, DTypePolicy policy) {
  check_defined(A, op);
  TIDE_CHECK(A.dim() >= 2, op, ": expected a matrix or a batch of matrices, got a ", ndim_str(A),
             " tensor of shape ", A.sizes().str());
  TIDE_CHECK(A.dtype() != DType::Float16 && A.dtype() != DType::BFloat16, op, ": ", dtype_name(A.dtype()),
             " is not supported (use float32 or float64)");
  TIDE_CHECK(A.size(A.dim() - 1) <= INT_MAX && A.size(A.dim() - 2) <= INT_MAX, op, ": matrices of shape ", A.sizes().str(),
             " are too large for LAPACK");
  DType rdt;
  return lapack_dtype(op, A.dtype(), policy, rdt);
}

// Each matrix of A (batch..., m, n) laid out column-major, as LAPACK reads it: a contiguous
// (batch..., n, m) tensor of dtype cdt.
Tensor transposed(const Tensor& src, const char* op);

Tensor col_major_copy(const Tensor& A, DType cdt, const char* op) { return transposed(A.to(cdt).contiguous(), op); }

// A contiguous tensor holding the transpose of each matrix of a column-major batch (the
// row-major result the user sees).
Tensor from_col_major(const Tensor& mats, const char* op) { return transposed(mats, op); }

// The transpose of each matrix of a contiguous float / double batch, in cache-sized tiles
// (the generic strided copy_ is several times slower for a 500 x 500 matrix, which showed
// in qr's time against NumPy).
Tensor transposed(const Tensor& src, const char* op) {
  Dims shape = src.sizes();
  const int64_t r = shape[shape.size() - 2], c = shape[shape.size() - 1];
  std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
  Tensor dst = Tensor::empty(shape, src.dtype(), Device{}, op);
  const int64_t batch = r * c == 0 ? 0 : src.numel() / (r * c);
  constexpr int64_t B = 32;
  lapack_dispatch(src.dtype(), [&](auto zero_) {
    using T = decltype(zero_);
    const T* in = src.data<T>();
    T* out = dst.data<T>();
    for (int64_t b = 0; b < batch; ++b, in += r * c, out += r * c)
      for (int64_t i0 = 0; i0 < r; i0 += B)
        for (int64_t j0 = 0; j0 < c; j0 += B)
          for (int64_t i = i0; i < std::min(r, i0 + B); ++i)
            for (int64_t j = j0; j < std::min(c, j0 + B); ++j) out[j * r + i] = in[i * c + j];
  });
  return dst;
}

// Shape `lead` + {r, c}.
Dims with_matrix(const Dims& lead, int64_t r, int64_t c) {
  Dims d = lead;
  d.push_back(r);
  d.push_back(c);
  return d;
}

std::string which(int64_t batch, int64_t b) {
  return batch <= 1 ? "the matrix" : "matrix " + std::to_string(b + 1) + " of the batch";
}

// NaN or infinity anywhere: LAPACK's iterations give no meaningful result for them.
template <typename T>
void check_finite(const char* op, const T* p, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    TIDE_CHECK(std::isfinite(p[i]), op, ": the input contains NaN or infinity (the algorithm cannot converge)");
}

// The lower triangle of each contiguous row-major (n x n) matrix of src, zeros above the
// diagonal, written to dst in one pass: what potrf reads and the zeros it leaves alone,
// without a full copy and a second pass over the upper half.
template <typename T>
void lower_triangle_copy(const T* src, T* dst, int64_t batch, int64_t n) {
  for (int64_t row = 0; row < batch * n; ++row) {
    const int64_t i = row % n;
    const T* in = src + row * n;
    T* out = dst + row * n;
    std::copy(in, in + i + 1, out);
    std::fill(out + i + 1, out + n, T(0));
  }
}

}  // namespace

std::vector<Tensor> svd(const Tensor& A, bool full_matrices, bool compute_uv, DTypePolicy policy, const char* op) {
  const DType cdt = decomp_dtype(op, A, policy);
  if (!A.device().is_cpu()) {
    std::vector<Tensor> r = svd(A.to_device({}), full_matrices, compute_uv, policy, op);
    for (Tensor& t : r) t = t.to_device(A.device());
    return r;
  }
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n);
  const Dims lead = leading(A, 2);
  const int64_t batch = shape_numel(lead);
  // The buffer read column-major is A^T (n x m) = V S U^T: LAPACK's "U" is V and its "VT" is
  // U^T, which read row-major are Vh and U.
  Tensor a = Tensor::empty(with_matrix(lead, m, n), cdt, Device{}, op);
  copy_(a, A);
  Dims sshape = lead;
  sshape.push_back(k);
  Tensor S = Tensor::empty(sshape, cdt, Device{}, op);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor U, Vh;
  if (compute_uv) {
    U = ops::zeros(with_matrix(lead, m, ucols), cdt);
    Vh = ops::zeros(with_matrix(lead, vrows, n), cdt);
  }
  lapack_dispatch(cdt, [&](auto zero_) {
    using T = decltype(zero_);
    T* ap = a.data<T>();
    check_finite(op, ap, a.numel());
    if (k == 0) {  // the full factors of an empty matrix are identities, as in NumPy
      if (!compute_uv) return;
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t i = 0; i < ucols && ucols == m; ++i) U.data<T>()[(b * m + i) * ucols + i] = 1;
        for (int64_t i = 0; i < vrows && vrows == n; ++i) Vh.data<T>()[(b * vrows + i) * n + i] = 1;
      }
      return;
    }
    const char jobz = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
    const lapack_int lm = lapack_int(n), ln = lapack_int(m), ldu = lapack_int(n), ldvt = lapack_int(ucols);
    T dummy = 0;
    T* up = compute_uv ? Vh.data<T>() : &dummy;
    T* vp = compute_uv ? U.data<T>() : &dummy;
    std::vector<lapack_int> iwork(size_t(8 * k));
    T wq = 0;
    Lapack<T>::gesdd(jobz, lm, ln, ap, lm, S.data<T>(), up, ldu, vp, ldvt, &wq, -1, iwork.data());
    const lapack_int lwork = work_size(wq);
    std::vector<T> work(static_cast<size_t>(lwork));
    for (int64_t b = 0; b < batch; ++b) {
      lapack_int info = Lapack<T>::gesdd(jobz, lm, ln, ap + b * m * n, lm, S.data<T>() + b * k,
                                         compute_uv ? up + b * vrows * n : up, ldu,
                                         compute_uv ? vp + b * m * ucols : vp, ldvt, work.data(), lwork, iwork.data());
      TIDE_CHECK(info == 0, op, ": the singular value decomposition of ", which(batch, b), " did not converge");
    }
  });
  DType rdt;
  lapack_dtype(op, A.dtype(), policy, rdt);
  if (!compute_uv) return {S.to(rdt)};
  return {U.to(rdt), S.to(rdt), Vh.to(rdt)};
}

std::vector<Tensor> qr(const Tensor& A, QrMode mode, DTypePolicy policy, const char* op) {
  const DType cdt = decomp_dtype(op, A, policy);
  if (!A.device().is_cpu()) {
    std::vector<Tensor> r = qr(A.to_device({}), mode, policy, op);
    for (Tensor& t : r) t = t.to_device(A.device());
    return r;
  }
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n);
  const Dims lead = leading(A, 2);
  const int64_t batch = shape_numel(lead);
  const int64_t qcols = mode == QrMode::Complete ? m : k;
  // Column-major: each block of `a` is A (m x n); with room for m columns when Q is complete.
  Tensor a = col_major_copy(A, cdt, op);  // (batch, n, m)
  Tensor Qc;                                // (batch, qcols, m): column-major Q
  Tensor R;
  lapack_dispatch(cdt, [&](auto zero_) {
    using T = decltype(zero_);
    T* ap = a.data<T>();
    std::vector<T> tau(size_t(std::max<int64_t>(k, 1)));
    // R: the upper triangle of the first rows of each factored block, row-major (rrows x n).
    const int64_t rrows = mode == QrMode::Complete ? m : k;
    R = ops::zeros(with_matrix(lead, rrows, n), cdt);
    if (mode != QrMode::R) Qc = ops::zeros(with_matrix(lead, qcols, m), cdt);
    if (m == 0 || n == 0) {
      if (mode != QrMode::R)
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t i = 0; i < std::min(qcols, m); ++i) Qc.data<T>()[(b * qcols + i) * m + i] = 1;
      return;
    }
    T wq = 0, wq2 = 0;
    Lapack<T>::geqrf(lapack_int(m), lapack_int(n), ap, tau.data(), &wq, -1);
    std::vector<T> qwork;
    lapack_int lwork = work_size(wq);
    if (mode != QrMode::R) {
      Lapack<T>::orgqr(lapack_int(m), lapack_int(qcols), lapack_int(k), Qc.data<T>(), tau.data(), &wq2, -1);
      lwork = std::max(lwork, work_size(wq2));
    }
    std::vector<T> work(static_cast<size_t>(lwork));
    T* rp = R.data<T>();
    for (int64_t b = 0; b < batch; ++b) {
      T* ab = ap + b * m * n;
      lapack_int info = Lapack<T>::geqrf(lapack_int(m), lapack_int(n), ab, tau.data(), work.data(), lwork);
      TIDE_ASSERT(info == 0);
      for (int64_t i = 0; i < rrows; ++i)
        for (int64_t j = i; j < n; ++j) rp[(b * rrows + i) * n + j] = i < m ? ab[j * m + i] : 0;
      if (mode == QrMode::R) continue;
      T* q = Qc.data<T>() + b * qcols * m;
      std::copy(ab, ab + m * std::min(n, qcols), q);
      info = Lapack<T>::orgqr(lapack_int(m), lapack_int(qcols), lapack_int(k), q, tau.data(), work.data(), lwork);
      TIDE_ASSERT(info == 0);
    }
  });
  DType rdt;
  lapack_dtype(op, A.dtype(), policy, rdt);
  if (mode == QrMode::R) return {R.to(rdt)};
  return {from_col_major(Qc, op).to(rdt), R.to(rdt)};
}

std::vector<Tensor> eigh(const Tensor& A, bool lower, bool compute_v, DTypePolicy policy, const char* op) {
  const DType cdt = decomp_dtype(op, A, policy);
  if (!A.device().is_cpu()) {
    std::vector<Tensor> r = eigh(A.to_device({}), lower, compute_v, policy, op);
    for (Tensor& t : r) t = t.to_device(A.device());
    return r;
  }
  check_square(op, A);
  const int64_t n = A.size(A.dim() - 1);
  const Dims lead = leading(A, 2);
  const int64_t batch = shape_numel(lead);
  // The row-major buffer read column-major is A^T: its upper triangle is A's lower one.
  Tensor a = Tensor::empty(with_matrix(lead, n, n), cdt, Device{}, op);
  copy_(a, A);
  Dims wshape = lead;
  wshape.push_back(n);
  Tensor W = Tensor::empty(wshape, cdt, Device{}, op);
  lapack_dispatch(cdt, [&](auto zero_) {
    using T = decltype(zero_);
    if (n == 0) return;
    T* ap = a.data<T>();
    const char uplo = lower ? 'U' : 'L', jobz = compute_v ? 'V' : 'N';
    // Only the referenced triangle must be finite (the other one is never read).
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j)
          if (lower ? j <= i : j >= i) check_finite(op, ap + (b * n + i) * n + j, 1);
    T wq = 0;
    lapack_int iq = 0;
    Lapack<T>::syevd(jobz, uplo, lapack_int(n), ap, W.data<T>(), &wq, -1, &iq, -1);
    const lapack_int lwork = work_size(wq), liwork = std::max<lapack_int>(1, iq);
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<lapack_int> iwork(static_cast<size_t>(liwork));
    for (int64_t b = 0; b < batch; ++b) {
      lapack_int info = Lapack<T>::syevd(jobz, uplo, lapack_int(n), ap + b * n * n, W.data<T>() + b * n, work.data(),
                                         lwork, iwork.data(), liwork);
      TIDE_CHECK(info == 0, op, ": the eigenvalue decomposition of ", which(batch, b), " did not converge");
    }
  });
  DType rdt;
  lapack_dtype(op, A.dtype(), policy, rdt);
  if (!compute_v) return {W.to(rdt)};
  // Eigenvectors are the columns of the column-major result.
  return {W.to(rdt), from_col_major(a, op).to(rdt)};
}

Tensor cholesky(const Tensor& A, bool upper, DTypePolicy policy, const char* op) {
  const DType cdt = decomp_dtype(op, A, policy);
  if (!A.device().is_cpu()) return cholesky(A.to_device({}), upper, policy, op).to_device(A.device());
  check_square(op, A);
  const int64_t n = A.size(A.dim() - 1);
  const Dims lead = leading(A, 2);
  const int64_t batch = shape_numel(lead);
  // Read column-major the row-major copy is A^T, whose upper factor U^T U is L L^T read
  // row-major; LAPACK references the column-major upper triangle, i.e. A's lower one, and
  // leaves the other (zeroed by the copy) alone.
  const Tensor src = A.to(cdt).contiguous();
  Tensor a = Tensor::empty(with_matrix(lead, n, n), cdt, Device{}, op);
  lapack_dispatch(cdt, [&](auto zero_) {
    using T = decltype(zero_);
    T* ap = a.data<T>();
    lower_triangle_copy(src.data<T>(), ap, batch, n);
    for (int64_t b = 0; b < batch && n > 0; ++b) {
      lapack_int info = Lapack<T>::potrf('U', lapack_int(n), ap + b * n * n);
      TIDE_CHECK(info == 0, op, ": ", which(batch, b), " is not positive definite (leading minor of order ", info,
                 ")");
    }
  });
  DType rdt;
  lapack_dtype(op, A.dtype(), policy, rdt);
  return (upper ? from_col_major(a, op) : a).to(rdt);
}

std::vector<Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond, DTypePolicy policy,
                          const char* op) {
  check_devices(op, A, B);
  if (!A.device().is_cpu()) {
    std::vector<Tensor> r = lstsq(A.to_device({}), B.to_device({}), rcond, policy, op);
    for (Tensor& t : r) t = t.to_device(A.device());
    return r;
  }
  decomp_dtype(op, A, policy);
  TIDE_CHECK(B.dim() >= 1, op, ": B must be at least 1-D, got a 0-D tensor");
  DType dt = common_dtype(op, A, B, policy), rdt;
  TIDE_CHECK(dt != DType::Float16 && dt != DType::BFloat16, op, ": ", dtype_name(dt),
             " is not supported (use float32 or float64)");
  const DType cdt = lapack_dtype(op, dt, policy, rdt);
  const int64_t m = A.size(A.dim() - 2), n = A.size(A.dim() - 1), k = std::min(m, n), ldb = std::max<int64_t>({m, n, 1});
  // B is a vector when 1-D, or when it has A's shape without the last dim.
  bool vec = B.dim() == 1 || (B.dim() == A.dim() - 1 && leading(B, 1) == leading(A, 2));
  Tensor Bm = vec ? unsqueeze(B, B.dim()) : B;
  TIDE_CHECK(Bm.size(Bm.dim() - 2) == m, op, ": shapes ", A.sizes().str(), " and ", B.sizes().str(), " are incompatible (",
             m, " rows ~= ", Bm.size(Bm.dim() - 2), ")");
  TIDE_CHECK(Bm.size(Bm.dim() - 1) <= INT_MAX, op, ": B of shape ", B.sizes().str(), " is too large for LAPACK");
  const int64_t nrhs = Bm.size(Bm.dim() - 1);
  const Dims lead = broadcast_batch(op, A, Bm, leading(A, 2), leading(Bm, 2));
  const int64_t batch = shape_numel(lead);
  Tensor a = col_major_copy(expand_to(A.to(cdt), with_matrix(lead, m, n)), cdt, op);
  // Column-major (ldb x nrhs) blocks: B in the first m rows, the solution in the first n.
  Tensor b = ops::zeros(with_matrix(lead, nrhs, ldb), cdt);
  {
    Tensor top = transpose(narrow(b, -1, 0, m), -2, -1);
    copy_bcast(top, Bm);
  }
  Dims sshape = lead;
  sshape.push_back(k);
  Tensor S = Tensor::empty(sshape, cdt, Device{}, op);
  Tensor rank = Tensor::empty(lead, DType::Int64, Device{}, op);
  lapack_dispatch(cdt, [&](auto zero_) {
    using T = decltype(zero_);
    T* ap = a.data<T>();
    T* bp = b.data<T>();
    int64_t* rp = rank.data<int64_t>();
    check_finite(op, ap, a.numel());
    check_finite(op, bp, b.numel());
    for (int64_t i = 0; i < batch; ++i) rp[i] = 0;
    if (k == 0) return;  // the solution is all zeros (or empty)
    const T rc = rcond ? T(*rcond) : std::numeric_limits<T>::epsilon() * T(std::max(m, n));
    T wq = 0;
    lapack_int iq = 0, rk = 0;
    const lapack_int lnrhs = lapack_int(std::max<int64_t>(nrhs, 1));
    std::vector<T> bone;  // a zero right-hand side when B has no columns
    if (nrhs == 0) bone.assign(size_t(ldb), T(0));
    Lapack<T>::gelsd(lapack_int(m), lapack_int(n), lnrhs, ap, nrhs ? bp : bone.data(), lapack_int(ldb), S.data<T>(),
                     rc, &rk, &wq, -1, &iq);
    const lapack_int lwork = work_size(wq);
    std::vector<T> work(static_cast<size_t>(lwork));
    std::vector<lapack_int> iwork(size_t(std::max<lapack_int>(iq, 1)));
    for (int64_t i = 0; i < batch; ++i) {
      if (nrhs == 0) std::fill(bone.begin(), bone.end(), T(0));
      lapack_int info = Lapack<T>::gelsd(lapack_int(m), lapack_int(n), lnrhs, ap + i * m * n,
                                         nrhs ? bp + i * nrhs * ldb : bone.data(), lapack_int(ldb),
                                         S.data<T>() + i * k, rc, &rk, work.data(), lwork, iwork.data());
      TIDE_CHECK(info == 0, op, ": the singular value decomposition of ", which(batch, i), " did not converge");
      rp[i] = rk;
    }
  });
  // Solution: rows 0..n of each block; residuals (NumPy): the squared norms of rows n..m
  // when every matrix has full column rank and m > n, else empty.
  Tensor x = transpose(narrow(b, -1, 0, n), -2, -1);
  Tensor res;
  bool full_rank = m > n;
  for (int64_t i = 0; i < batch && full_rank; ++i) full_rank = rank.data<int64_t>()[i] == n;
  if (full_rank) {
    Tensor tail = narrow(b, -1, n, m - n);
    res = norm(tail, 2.0, {int(tail.dim()) - 1}, false);
    res = binary(BinaryOp::Mul, res, res);
  } else {
    Dims rs = lead;
    rs.push_back(0);
    res = Tensor::empty(rs, cdt, Device{}, op);
  }
  if (vec) x = squeeze(x, {-1});
  return {x.contiguous().to(rdt), res.to(rdt), rank, S.to(rdt)};
}

std::vector<Tensor> slogdet(const Tensor& A, DTypePolicy policy, const char* op) {
  check_defined(A, op);
  if (!A.device().is_cpu()) {
    std::vector<Tensor> r = slogdet(A.to_device({}), policy, op);
    for (Tensor& t : r) t = t.to_device(A.device());
    return r;
  }
  decomp_dtype(op, A, policy);
  SquareBatch sb = square_batch(A, policy, op);
  const int64_t n = sb.n, batch = sb.batch;
  Tensor sign = Tensor::empty(sb.bshape, sb.cdt, Device{}, op), logabs = Tensor::empty(sb.bshape, sb.cdt, Device{}, op);
  std::vector<lapack_int> ipiv(static_cast<size_t>(std::max<int64_t>(n, 1)));
  lapack_dispatch(sb.cdt, [&](auto zero_) {
    using T = decltype(zero_);
    T* a = sb.mats.data<T>();
    for (int64_t bi = 0; bi < batch; ++bi) {
      T s = 1, l = 0;
      if (n > 0) {
        T* ab = a + bi * n * n;
        lapack_int info = lapack_getrf<T>(lapack_int(n), ab, ipiv.data());
        TIDE_ASSERT(info >= 0);
        for (int64_t i = 0; i < n; ++i) {
          T d = ab[i * n + i];
          if (d < 0) s = -s;
          else if (!(d > 0)) s = d == 0 ? 0 : d;  // 0 for singular, NaN stays NaN
          l += std::log(std::fabs(d));
          if (ipiv[size_t(i)] != lapack_int(i + 1)) s = -s;
        }
        if (s == 0) l = -std::numeric_limits<T>::infinity();
      }
      sign.data<T>()[bi] = s;
      logabs.data<T>()[bi] = l;
    }
  });
  return {sign.to(sb.rdt), logabs.to(sb.rdt)};
}

}  // namespace tide::ops
