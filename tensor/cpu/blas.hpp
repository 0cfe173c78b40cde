// OpenBLAS on the CPU: how a strided matrix is passed to it, a row-major product on
// contiguous matrices for the fused kernels (a recurrent layer's time loops, a convolution's
// per-image products), and a scope that keeps OpenBLAS on the calling thread.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace tide {

// How a (rows x cols) view with element strides (rs, cs) is passed to BLAS: row-major as is,
// or column-major as the transpose of a row-major matrix. False when neither fits. (cuBLAS
// operands follow the same rule: tensor/ops/linalg.cpp.)
inline bool blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, CBLAS_TRANSPOSE& t, int64_t& ld) {
  if (rows == 0 || cols == 0) {  // no element is read: any strides (an empty reversed view's too)
    t = CblasNoTrans;
    ld = std::max<int64_t>(cols, 1);
    return true;
  }
  if (cs == 1 || cols <= 1) {
    int64_t l = rows <= 1 ? std::max<int64_t>(cols, 1) : rs;
    if (l >= std::max<int64_t>(cols, 1) && l <= INT_MAX) {
      t = CblasNoTrans;
      ld = l;
      return true;
    }
  }
  if (rs == 1 || rows <= 1) {
    int64_t l = cols <= 1 ? std::max<int64_t>(rows, 1) : cs;
    if (l >= std::max<int64_t>(rows, 1) && l <= INT_MAX) {
      t = CblasTrans;
      ld = l;
      return true;
    }
  }
  return false;
}

// C (m, n) = op(A) (m, k) op(B) (k, n) + beta C over row-major matrices with leading
// dimensions lda, ldb, ldc (op(A) is A^T when ta, stored (k, m)). The callers keep every size
// below 2^31.
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb, T beta,
          T* C, int64_t ldc) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
  if (m == 0 || n == 0) return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : C[i * ldc + j] * beta;
    return;
  }
  const CBLAS_TRANSPOSE TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, TA, TB, int(m), int(n), int(k), 1.0f, A, int(lda), B, int(ldb), beta, C, int(ldc));
  else
    cblas_dgemm(CblasRowMajor, TA, TB, int(m), int(n), int(k), 1.0, A, int(lda), B, int(ldb), beta, C, int(ldc));
}

// The same over contiguous matrices (each leading dimension its row's length).
template <typename T>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* A, const T* B, T beta, T* C) {
  gemm(ta, tb, m, n, k, A, ta ? m : k, B, tb ? k : n, beta, C, n);
}

// While alive, every BLAS call runs on the thread that makes it (OpenBLAS's own threads are
// idle); the previous count comes back at the end of the scope. For products too small for
// OpenBLAS's threads to pay (a recurrent layer's per-step products), and for batches of
// products that the engine's threads share out, one product per thread. Created on the
// thread that owns the engine (not inside a parallel_for). Defined in tensor/parallel.cpp.
class BlasOnCallingThread {
 public:
  BlasOnCallingThread();
  ~BlasOnCallingThread();
  BlasOnCallingThread(const BlasOnCallingThread&) = delete;
  BlasOnCallingThread& operator=(const BlasOnCallingThread&) = delete;

 private:
  int prev_;
};

}  // namespace tide
