// Linear algebra: matrix products (mm mv bmm matmul dot outer addmm) and the LAPACK-backed
// solve / inv / det.
//
// float32 and float64 products go to OpenBLAS. A view that is row-major or column-major with
// a unit stride (x:t() of a contiguous matrix, a column slice) is handed to BLAS as it is,
// with CblasTrans and the original leading dimension; only other layouts are copied. Other
// dtypes (integers, bool, small float16 / bfloat16 products) use the engine's own blocked
// loop, parallel over rows: halves accumulate in float32, integers wrap as the result type's
// arithmetic does, bool is "any(a and b)" as in NumPy. Larger half products are computed
// by sgemm on float32 copies (the same float32 accumulation, at BLAS speed).
//
// Dtypes: PyTorch rejects operands of different dtypes, NumPy promotes them; each op takes a
// DTypePolicy and the bindings pass the one of the module the call came through.
#pragma once
#include <optional>
#include <vector>

#include "../tensor.hpp"

namespace tide::ops {

enum class DTypePolicy : uint8_t {
  Strict,   // torch: both operands must have the same dtype
  Promote,  // numpy: operands are promoted to a common dtype
};

// out: when given, the result is written there (its shape must equal the result's shape;
// its dtype must be one the result may be cast to) and `out` is returned.

// (n,k) x (k,m) -> (n,m)
Tensor mm(const Tensor& a, const Tensor& b, const Tensor* out = nullptr,
          DTypePolicy policy = DTypePolicy::Strict);
// (n,k) x (k) -> (n)
Tensor mv(const Tensor& a, const Tensor& v, const Tensor* out = nullptr,
          DTypePolicy policy = DTypePolicy::Strict);
// (B,n,k) x (B,k,m) -> (B,n,m)
Tensor bmm(const Tensor& a, const Tensor& b, const Tensor* out = nullptr,
           DTypePolicy policy = DTypePolicy::Strict);
// torch.matmul / np.matmul: 1-D x 1-D is a dot product (0-D result), 1-D operands get a dim
// prepended (left) or appended (right) that is removed again, N-D operands are batches of
// matrices whose batch dims broadcast. 0-D operands are an error.
Tensor matmul(const Tensor& a, const Tensor& b, const Tensor* out = nullptr,
              DTypePolicy policy = DTypePolicy::Strict, const char* op = "matmul");
// np.dot rules: 0-D operand -> elementwise product; 1-D x 1-D -> inner product; 2-D x 2-D ->
// matrix product; N-D x M-D -> sum over the last dim of a and the second-to-last of b
// (the last of b when b is 1-D). Result shape a.shape[:-1] + b.shape[:-2] + b.shape[-1:].
Tensor dot(const Tensor& a, const Tensor& b, const Tensor* out = nullptr,
           DTypePolicy policy = DTypePolicy::Strict, const char* op = "dot");
// Outer product of two 1-D tensors (n) x (m) -> (n,m); the dtypes are promoted (as in both
// libraries). With flatten (np.outer), inputs of any shape are flattened first.
Tensor outer(const Tensor& a, const Tensor& b, const Tensor* out = nullptr, bool flatten = false,
             const char* op = "outer");
// beta * bias + alpha * (a @ b); bias broadcasts to (n,m). beta == 0 ignores bias (NaNs in
// it do not propagate). With inplace, the result is written into bias (which must then have
// the result's shape) and bias is returned.
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, const Scalar& beta = Scalar(1.0),
             const Scalar& alpha = Scalar(1.0), const Tensor* out = nullptr, bool inplace = false);

// torch.linalg.solve / np.linalg.solve: A (*,n,n), B (*,n,k) or (*,n) (a vector when B is
// 1-D, or B.dim() == A.dim()-1 and B's shape is A's without the last dim); batch dims
// broadcast. A singular matrix is an error "linalg.solve: the matrix is singular (U[i,i] = 0)".
// Integer inputs: an error under Strict, float64 under Promote; halves compute in float32.
Tensor solve(const Tensor& A, const Tensor& B, DTypePolicy policy = DTypePolicy::Strict,
             const char* op = "linalg.solve");
// Inverse of each (n,n) matrix of A (*,n,n); singular is an error as for solve.
Tensor inv(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.inv");
// Determinant of each (n,n) matrix of A (*,n,n) -> shape (*); singular gives 0.
Tensor det(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.det");

// Matrix and vector norms of np.linalg.norm / torch.linalg.norm.
// ord: vector norms take any p (inf = +HUGE_VAL, -inf, 0 = count of non-zeros); matrix norms
// take 1, -1, 2, -2, inf, -inf (2 / -2 by singular values) and the strings "fro" and "nuc".
// dims: empty = all dims (a vector norm of the flattened tensor when ord is absent, else the
// tensor must be 1-D or 2-D); one dim = vector norm; two dims = matrix norm (dims in the
// order given: rows, then columns). Integer inputs compute in the default float dtype
// (Strict) or float64 (Promote). Vector and Frobenius norms are the reductions' ops::norm;
// the other matrix norms are computed here (2, -2 and 'nuc' by LAPACK's gesdd).
struct NormOrd {
  enum Kind : uint8_t { Default, P, Fro, Nuc } kind = Default;
  double p = 2;
};
Tensor linalg_norm(const Tensor& x, NormOrd ord, const std::vector<int>& dims, bool keepdim,
                   DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.norm");


// Decompositions (LAPACK, batched over leading dims; float32 / float64; halves are an error;
// integers as for solve). Each returns the factors in NumPy's order.
// svd: {U, S, Vh} (gesdd; full_matrices: U (m,m), Vh (n,n), else (m,k), (k,n), k = min(m,n)),
// or {S} without compute_uv. NaN / inf input or no convergence is an error.
std::vector<Tensor> svd(const Tensor& A, bool full_matrices = true, bool compute_uv = true,
                        DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.svd");
// qr: {Q, R} ('reduced': (m,k),(k,n); 'complete': (m,m),(m,n)) or {R} ('r': (k,n)).
enum class QrMode : uint8_t { Reduced, Complete, R };
std::vector<Tensor> qr(const Tensor& A, QrMode mode = QrMode::Reduced, DTypePolicy policy = DTypePolicy::Strict,
                       const char* op = "linalg.qr");
// eigh: {w, V} ascending eigenvalues and column eigenvectors of the symmetric matrix given by
// its lower (lower = true, 'L') or upper triangle (syevd); {w} without compute_v.
std::vector<Tensor> eigh(const Tensor& A, bool lower = true, bool compute_v = true,
                         DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.eigh");
// The lower Cholesky factor L (A = L L^T, from A's lower triangle), or L^T with upper.
// "op: the matrix is not positive definite (leading minor of order k)" otherwise.
Tensor cholesky(const Tensor& A, bool upper = false, DTypePolicy policy = DTypePolicy::Strict,
                const char* op = "linalg.cholesky");
// Least squares by gelsd: {x, residuals, rank (int64), singular values}. rcond: singular
// values below rcond * s_max count as zero (default eps * max(m, n), NumPy's rcond=None).
// Residuals are the squared residual norms per column of B when m > n and A has full column
// rank (every matrix of a batch), else an empty last dim, as in NumPy.
std::vector<Tensor> lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond = std::nullopt,
                          DTypePolicy policy = DTypePolicy::Strict, const char* op = "linalg.lstsq");
// {sign, log|det|} of each square matrix (sign 0 and -inf for a singular one).
std::vector<Tensor> slogdet(const Tensor& A, DTypePolicy policy = DTypePolicy::Strict,
                            const char* op = "linalg.slogdet");

}  // namespace tide::ops
