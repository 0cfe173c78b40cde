// The CPU backend's matrix products (the matmul entry of the device table,
// tensor/backend.hpp): float32 / float64 through OpenBLAS (split over the engine's threads
// where that measured faster, see split_by_rows) but float64 matrix-vector products with
// contiguous vectors, which run the engine's own kernels (own_dgemv); complex through
// cblas_cgemm / zgemm, float16 / bfloat16 through float32 copies when large enough, other
// dtypes by the engine's own loop; tensor/ops/linalg.cpp does the checks, shapes and dtypes.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <type_traits>
#include <vector>

#include "../interrupt.hpp"
#include "../ops/elementwise.hpp"
#include "../parallel.hpp"
#include "backend.hpp"
#include "blas.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace tide::cpu {

void batch_offsets(const Dims& bshape, const Tensor& t, int64_t count, Offsets& out) {
  if (count <= 1) {
    out.one = t.offset();
    return;
  }
  int nb = bshape.size();
  int tb = t.dim() - 2;
  out.many.resize(static_cast<size_t>(count));
  Dims st(nb, 0);
  for (int i = 0; i < tb; ++i) {
    int d = nb - tb + i;
    st[d] = t.size(i) == 1 ? 0 : t.stride(i);
  }
  Dims idx(nb, 0);
  int64_t off = t.offset();
  for (int64_t b = 0; b < count; ++b) {
    out.many[size_t(b)] = off;
    for (int d = nb - 1; d >= 0; --d) {
      if (++idx[d] < bshape[d]) {
        off += st[d];
        break;
      }
      off -= st[d] * (bshape[d] - 1);
      idx[d] = 0;
    }
  }
}


namespace {

// ---------------------------------------------------------------------------------------
// The engine's own product loop (all dtypes).

// Integers accumulate modulo 2^32 or 2^64 (unsigned, so wrapping is defined); either is exact
// modulo 2^bits of the result type, so the result wraps as the type's own arithmetic would.
// Up to 32-bit types use 32-bit lanes, which vectorise. Bool counts in 64 bits (never wraps).
template <typename T>
using acc_t = std::conditional_t<
    std::is_integral_v<T>,
    std::conditional_t<(sizeof(T) <= 4 && !std::is_same_v<T, bool>), uint32_t, uint64_t>, compute_t<T>>;

template <typename T>
inline acc_t<T> to_acc(T v) {
  if constexpr (std::is_integral_v<T>) return acc_t<T>(int64_t(v));
  else return acc_t<T>(compute_t<T>(v));
}
template <typename T>
inline T from_acc(acc_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return T(v);  // wraps (C++20)
  else return T(v);
}
template <typename T>
acc_t<T> scalar_acc(const Scalar& s) {
  if constexpr (std::is_integral_v<T>) return acc_t<T>(uint64_t(s.to_int()));
  else return acc_t<T>(s.to_double());
}

// One batched product: C[b] = alpha * A[b] @ B[b] (+ beta * C[b] when use_beta).
// Element strides; per-matrix element offsets (from the storage base) for A and B; C is
// written through its own offsets.
struct GemmProblem {
  int64_t batch, m, n, k;
  char* a_base; const int64_t* a_off; int64_t ars, acs;
  char* b_base; const int64_t* b_off; int64_t brs, bcs;
  char* c_base; const int64_t* c_off; int64_t crs, ccs;
};

constexpr int64_t kMB = 32, kNB = 256, kKB = 256;

template <typename T>
void own_gemm(const GemmProblem& P, const Scalar& alpha_s, const Scalar& beta_s, bool use_beta) {
  using A = acc_t<T>;
  const int64_t m = P.m, n = P.n, k = P.k;
  if (P.batch == 0 || m == 0 || n == 0) return;
  const A alpha = scalar_acc<T>(alpha_s), beta = scalar_acc<T>(beta_s);
  const T* a_base = reinterpret_cast<const T*>(P.a_base);
  const T* b_base = reinterpret_cast<const T*>(P.b_base);
  T* c_base = reinterpret_cast<T*>(P.c_base);

  // B rows as contiguous accumulator-typed rows (packed unless they already are).
  bool b_same = true;
  for (int64_t b = 1; b < P.batch && b_same; ++b) b_same = P.b_off[b] == P.b_off[0];
  const bool pack = !(std::is_same_v<T, A> && (P.bcs == 1 || n == 1));
  std::vector<A> packed;
  int64_t nbpack = b_same ? 1 : P.batch;
  if (pack && k > 0) {
    packed.resize(size_t(nbpack * k * n));
    parallel_for(0, nbpack * k, std::max<int64_t>(1, 65536 / std::max<int64_t>(n, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     int64_t bi = r / k, p = r % k;
                     const T* src = b_base + P.b_off[bi] + p * P.brs;
                     A* dst = packed.data() + r * n;
                     for (int64_t j = 0; j < n; ++j) dst[j] = to_acc<T>(src[j * P.bcs]);
                   }
                 });
  }

  const int64_t rows = P.batch * m;
  const int64_t work_per_row = std::max<int64_t>(1, n * std::max<int64_t>(k, 1));
  const int64_t grain = std::max<int64_t>(1, 65536 / work_per_row);
  parallel_for(0, rows, grain, [&](int64_t r0, int64_t r1) {
    std::vector<A> tile(size_t(kMB * std::min(kNB, n)));
    int64_t r = r0;
    while (r < r1) {
      const int64_t bi = r / m;
      const int64_t i_begin = r % m;
      const int64_t i_end = std::min(m, i_begin + (r1 - r));
      const T* Ab = a_base + P.a_off[bi];
      const A* Bp;
      int64_t ldb;
      if (pack) {
        Bp = packed.data() + (b_same ? 0 : bi * k * n);
        ldb = n;
      } else {
        if constexpr (std::is_same_v<T, A>) Bp = b_base + P.b_off[bi];
        else Bp = nullptr;
        ldb = P.brs;
      }
      T* Cb = c_base + P.c_off[bi];
      for (int64_t j0 = 0; j0 < n; j0 += kNB) {
        const int64_t nb = std::min(kNB, n - j0);
        for (int64_t i0 = i_begin; i0 < i_end; i0 += kMB) {
          const int64_t mb = std::min(kMB, i_end - i0);
          std::fill(tile.begin(), tile.begin() + mb * nb, A(0));
          for (int64_t p0 = 0; p0 < k; p0 += kKB) {
            const int64_t kb = std::min(kKB, k - p0);
            for (int64_t ii = 0; ii < mb; ++ii) {
              const T* arow = Ab + (i0 + ii) * P.ars;
              A* crow = tile.data() + ii * nb;
              for (int64_t p = p0; p < p0 + kb; ++p) {
                const A av = to_acc<T>(arow[p * P.acs]);
                const A* brow = Bp + p * ldb + j0;
                for (int64_t j = 0; j < nb; ++j) crow[j] += av * brow[j];
              }
            }
          }
          for (int64_t ii = 0; ii < mb; ++ii) {
            const A* crow = tile.data() + ii * nb;
            T* cp = Cb + (i0 + ii) * P.crs + j0 * P.ccs;
            if (use_beta) {
              for (int64_t j = 0; j < nb; ++j)
                cp[j * P.ccs] = from_acc<T>(alpha * crow[j] + beta * to_acc<T>(cp[j * P.ccs]));
            } else {
              for (int64_t j = 0; j < nb; ++j) cp[j * P.ccs] = from_acc<T>(alpha * crow[j]);
            }
          }
        }
      }
      r += i_end - i_begin;
    }
  });
}

// ---------------------------------------------------------------------------------------
// BLAS

// float32 / float64 always go to BLAS: OpenBLAS 0.3.21 beat the own loop at every size
// measured (2x2 to 48x48, ~0.15 us for a 4x4 sgemm), so tiny products gain nothing from it.

bool blas_ok(const Tensor& t) {
  CBLAS_TRANSPOSE tr;
  int64_t ld;
  int d = t.dim();
  return blas_layout(t.size(d - 2), t.size(d - 1), t.stride(d - 2), t.stride(d - 1), tr, ld);
}

// y = alpha op(M) x + beta y, with M stored row-major as rows x cols (leading dimension lda):
// a matrix-vector product as OpenBLAS takes it.
template <typename T>
struct Gemv {
  CBLAS_TRANSPOSE trans;
  int64_t rows, cols, lda;
  const T* M;
  const T* x;
  int64_t incx;
  T* y;
  int64_t incy;
};

#if defined(__x86_64__) && defined(__GNUC__)
// float64 matrix-vector products by the engine's own AVX2 kernels, which beat OpenBLAS 0.3.21's
// dgemv on this machine's shapes. Chosen at run time where the CPU has AVX2 and FMA, in every
// build (the sanitizer build does not target AVX2), so that all builds give the same bits.
// One thread, float64, row-major M, best of 7, us (AMD EPYC Zen 4, 2026-11-27), OpenBLAS / own:
//     rows x cols     M x          M^T x
//     8 x 10          0.04 / 0.02  0.04 / 0.02
//     64 x 100        0.61 / 0.55  0.74 / 0.56
//     500 x 100       4.61 / 3.71  5.24 / 3.86   (half of the d=100 least-squares A, from L2)
//     1000 x 1000     108 / 105    117 / 107
//     3000 x 300      96 / 97      108 / 97
//     10000 x 100     115 / 124    147 / 124
//     100 x 10000     111 / 115    120 / 120
// float32 stays with OpenBLAS: its sgemv was faster on most of these shapes (500 x 100:
// 2.6 / 2.6 and 2.2 / 2.6). Each output's sum has a fixed order whatever the shape around it
// (which rows share a pass, where a thread's part starts), so eager runs and compiled replays
// give the same bits.

// The dot products of R consecutive rows of M (lda apart) with x, each summed the same way
// whatever R: two accumulators of 4 lanes over steps of 8 columns, one more step of 4, the
// lanes added pairwise, then the last columns in order by fused multiply-adds.
template <int R>
[[gnu::target("avx2,fma")]] void row_dots(int64_t cols, const double* M, int64_t lda, const double* x,
                                          double* out) {
  __m256d s[R], u[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) s[r] = u[r] = _mm256_setzero_pd();
  int64_t j = 0;
  for (; j + 8 <= cols; j += 8) {
    const __m256d xa = _mm256_loadu_pd(x + j), xb = _mm256_loadu_pd(x + j + 4);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      s[r] = _mm256_fmadd_pd(_mm256_loadu_pd(M + r * lda + j), xa, s[r]);
      u[r] = _mm256_fmadd_pd(_mm256_loadu_pd(M + r * lda + j + 4), xb, u[r]);
    }
  }
  if (j + 4 <= cols) {
    const __m256d xa = _mm256_loadu_pd(x + j);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) s[r] = _mm256_fmadd_pd(_mm256_loadu_pd(M + r * lda + j), xa, s[r]);
    j += 4;
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    alignas(32) double l[4];
    _mm256_store_pd(l, _mm256_add_pd(s[r], u[r]));
    double t = (l[0] + l[1]) + (l[2] + l[3]);
    for (int64_t c = j; c < cols; ++c) t = std::fma(M[r * lda + c], x[c], t);
    out[r] = t;
  }
}

// acc[j] += x[0] M[0][j] + ... + x[R-1] M[R-1][j], one fused multiply-add per row in row
// order, so that each column is summed row by row whatever R.
template <int R>
[[gnu::target("avx2,fma")]] void rows_axpy(int64_t cols, const double* M, int64_t lda, const double* x,
                                           double* acc) {
  __m256d xs[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) xs[r] = _mm256_broadcast_sd(x + r);
  int64_t j = 0;
  for (; j + 4 <= cols; j += 4) {
    __m256d a = _mm256_loadu_pd(acc + j);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) a = _mm256_fmadd_pd(_mm256_loadu_pd(M + r * lda + j), xs[r], a);
    _mm256_storeu_pd(acc + j, a);
  }
  for (; j < cols; ++j) {
    double a = acc[j];
    for (int r = 0; r < R; ++r) a = std::fma(M[r * lda + j], x[r], a);
    acc[j] = a;
  }
}

// y = alpha op(M) x + beta y for contiguous x and y (beta 0: y is not read).
[[gnu::target("avx2,fma")]] void own_dgemv(const Gemv<double>& g, double alpha, double beta) {
  const int64_t rows = g.rows, cols = g.cols, lda = g.lda;
  auto finish = [&](double* y, const double* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = beta == 0.0 ? alpha * v[i] : alpha * v[i] + beta * y[i];
  };
  if (g.trans == CblasNoTrans) {
    double dots[4];
    int64_t i = 0;
    for (; i + 4 <= rows; i += 4) {
      row_dots<4>(cols, g.M + i * lda, lda, g.x, dots);
      finish(g.y + i, dots, 4);
    }
    for (; i < rows; ++i) {
      row_dots<1>(cols, g.M + i * lda, lda, g.x, dots);
      finish(g.y + i, dots, 1);
    }
    return;
  }
  std::vector<double> sums;
  double* acc = g.y;
  if (alpha != 1.0 || beta != 0.0) {
    sums.resize(size_t(cols));
    acc = sums.data();
  }
  std::fill(acc, acc + cols, 0.0);
  int64_t i = 0;
  for (; i + 4 <= rows; i += 4) rows_axpy<4>(cols, g.M + i * lda, lda, g.x + i, acc);
  for (; i < rows; ++i) rows_axpy<1>(cols, g.M + i * lda, lda, g.x + i, acc);
  if (acc != g.y) finish(g.y, acc, cols);
}
#endif

template <typename T>
void gemv_call(const Gemv<T>& g, T alpha, T beta) {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool own_kernels = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if constexpr (std::is_same_v<T, double>)
    if (own_kernels && g.incx == 1 && g.incy == 1) return own_dgemv(g, alpha, beta);
#endif
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemv(CblasRowMajor, g.trans, int(g.rows), int(g.cols), alpha, g.M, int(g.lda), g.x, int(g.incx), beta,
                g.y, int(g.incy));
  else
    cblas_dgemv(CblasRowMajor, g.trans, int(g.rows), int(g.cols), alpha, g.M, int(g.lda), g.x, int(g.incx), beta,
                g.y, int(g.incy));
}

// The m x k by k x n product C = A B as a matrix-vector product, when n or m is 1 (the
// caller checked that blas_layout takes both operands). Returns false for a matrix product.
template <typename T>
bool as_gemv(int64_t m, int64_t n, int64_t k, const T* A, int64_t ars, int64_t acs, const T* B, int64_t brs,
             int64_t bcs, T* C, int64_t ldc, Gemv<T>& g) {
  if (n != 1 && m != 1) return false;
  CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;
  int64_t lda = 0, ldb = 0;
  blas_layout(m, k, ars, acs, ta, lda);
  blas_layout(k, n, brs, bcs, tb, ldb);
  if (n == 1) {  // y = op(A) x with x the column of B
    g = {ta, ta == CblasNoTrans ? m : k, ta == CblasNoTrans ? k : m, lda, A, B, k <= 1 ? 1 : brs, C, ldc};
    return true;
  }
  // m == 1: y^T = x^T op(B), so y = op(B)^T x with x the row of A
  const CBLAS_TRANSPOSE t2 = tb == CblasNoTrans ? CblasTrans : CblasNoTrans;
  g = {t2, tb == CblasNoTrans ? k : n, tb == CblasNoTrans ? n : k, ldb, B, A, k <= 1 ? 1 : acs, C, 1};
  return true;
}

template <typename T>
void blas_gemm_one(int64_t m, int64_t n, int64_t k, T alpha, const T* A, int64_t ars, int64_t acs,
                   const T* B, int64_t brs, int64_t bcs, T beta, T* C, int64_t ldc) {
  if (Gemv<T> g; as_gemv(m, n, k, A, ars, acs, B, brs, bcs, C, ldc, g)) return gemv_call(g, alpha, beta);
  CBLAS_TRANSPOSE ta = CblasNoTrans, tb = CblasNoTrans;  // set by blas_layout (the caller checked both fit)
  int64_t lda = 0, ldb = 0;
  blas_layout(m, k, ars, acs, ta, lda);
  blas_layout(k, n, brs, bcs, tb, ldb);
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C,
                int(ldc));
  else
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), alpha, A, int(lda), B, int(ldb), beta, C,
                int(ldc));
}

// OpenBLAS runs a product of at most this many multiply-adds (m * n * k) on the calling
// thread alone (SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD in its interface/gemm.c).
constexpr int64_t kBlasOneThreadWork = 65536 * 4;

// Single products that the engine's threads split by rows, each part one OpenBLAS call on
// its own thread, because that beat OpenBLAS's own threading. Measured with both on the same
// warm pool of 2 threads (AMD EPYC Zen 4, 2 cores, Debian's OpenBLAS 0.3.21 pthreads,
// 2026-11-26); time of the row split / time of OpenBLAS with 2 threads, float64 and float32
// (T: A transposed):
//     m x n x k (m*n*k)             split / OpenBLAS-2     decision
//     32 x 64 x 64 (1.3e5)          0.58  0.64             split
//     64 x 100 x 100 (6.4e5)        0.54  0.55             split
//     128 x 128 x 128 (2.1e6)       0.83  0.78             split
//     64 x 100 x 1000 (6.4e6)       0.85  0.88             split (the two-layer net's x @ w1)
//     1000 x 100 x 64T (6.4e6)      0.70  0.54             split (its x^T @ grad_h)
//     2048 x 64 x 64 (8.4e6)        0.76  0.74             split
//     64 x 64 x 2048T (8.4e6)       0.84  0.79             split
//     700 x 128 x 128 (1.1e7)       0.94  0.76             split
//     256 x 256 x 256 (1.7e7)       0.93  0.83             split
//     1000 x 1000 x 64T (6.4e7)     0.63  0.60             split
//     1000 x 100 x 1000 (1.0e8)     0.57  0.50             split
//     512 x 512 x 512 (1.3e8)       1.02  0.99             split (even)
//     1000 x 1000 x 1000 (1e9)      0.96  1.01             split (even)
//     64 x 1000 x 1000 (6.4e7)      1.09  1.09             split (OpenBLAS splits a wide result's
//                                                          columns 9% faster; one rule kept)
//     20 x 512 x 128 (1.3e6)        0.65  0.46             OpenBLAS: parts under 16 rows
//     64 x 10 x 1000, 1000 x 10 x 64T  0.54-1.05           OpenBLAS: n < 16 (no gain in float32)
//     below 1e5 multiply-adds (a few microseconds)         OpenBLAS, one thread
// BLIS 0.9 (2 threads) measured within 5% of the split except 64 x 100 x 1000 float32 (0.88
// of it), and libxsmm 1.17 (its JIT kernels, split the same way) within 2%: neither is worth
// a second BLAS in the process. Like OpenBLAS's own threads (whose 64 x 1000 x 100 float32
// product differs from its one-thread one), a split may change the last bits of a product
// with the thread count: its parts meet OpenBLAS's small-matrix or edge kernels where the
// whole product did not.
bool split_by_rows(int64_t m, int64_t n, int64_t k) {
  return m >= 32 && n >= 16 && m * n * k >= 100000;  // the caller checked m * n * k for overflow
}

// The parts of a split by rows: at most one per thread, of a multiple of 16 rows (whole
// blocks of OpenBLAS's kernels), the last one taking the rest. Returns how many, and the
// rows of each but the last.
std::pair<int64_t, int64_t> row_parts(int64_t m, int64_t threads) {
  const int64_t parts = std::min(threads, m / 16), rows = ((m + parts - 1) / parts + 15) / 16 * 16;
  return {(m + rows - 1) / rows, rows};
}

// Matrix-vector products of at least this many multiply-adds are split by the stored
// matrix's rows over the engine's threads (split_gemv) instead of OpenBLAS's threads.
// Measured 2026-11-27 on the 2-core Zen 4, best of 7, us, OpenBLAS 0.3.21 threads / split,
// A of (10d, d): A x, A^T r, and both (q = r - A x; A^T q, the least-squares gradient):
//     d   dtype     A x           A^T r          both
//     30  float64   2.4 / 3.8     2.3 / 3.4      4.8 / 7.0
//     60  float64   3.4-4.2 / 4.2-4.9  6.1-7.5 / 4.3-4.4  10.7-12.3 / 8.9-9.6
//     100 float64   6.1-8.2 / 6.2-7.2  9.8-11.3 / 5.8-6.2  17.7-19.7 / 12.4-14.1
//     100 float32   4.7-7.9 / 6.4-7.9  6.2-7.1 / 3.7-5.1  11.9-12.9 / 9.8-11.3
//     300 float64   60-71 / 68-75      77-89 / 49-63      127-165 / 100-107
//     1000 float64  1750-2260 / 2160-2320  2750-3100 / 2180-2460  5370-5750 / 3850-5040
// A^T r gains most: OpenBLAS splits its columns, so each core reads all of A; split by rows,
// each core reads its half, and A x then finds that half in the same core's cache. Splitting
// only A^T r, with A x on OpenBLAS's threads, was 1.2-10x slower than either: the two pools'
// threads then take turns on the two cores.
constexpr int64_t kSplitGemvWork = 32768;

// How a single matrix-vector product of M's shape runs: split into row_parts over the
// engine's threads (split_gemv), or one part of all rows on the calling thread.
std::pair<int64_t, int64_t> gemv_parts(int64_t rows, int64_t work, int threads) {
  if (threads > 1 && !in_parallel_region() && work >= kSplitGemvWork && rows >= 32) return row_parts(rows, threads);
  return {1, rows};
}

// Part p (rows [r0, r1) of M) of a product split by M's rows, with the beta it runs with. For
// M^T x each part sums over its rows: parts after the first write their sums to `scratch`
// (cols per part), which add_part_sums adds to y in part order.
template <typename T>
std::pair<Gemv<T>, T> gemv_part(const Gemv<T>& g, T beta, int64_t p, int64_t r0, int64_t r1, T* scratch) {
  Gemv<T> part = g;
  part.rows = r1 - r0;
  part.M = g.M + r0 * g.lda;
  if (g.trans != CblasTrans) {
    part.y = g.y + r0 * g.incy;
    return {part, beta};
  }
  part.x = g.x + r0 * g.incx;
  if (p == 0) return {part, beta};
  part.y = scratch + (p - 1) * g.cols;
  part.incy = 1;
  return {part, T(0)};
}

template <typename T>
void add_part_sums(const Gemv<T>& g, int64_t parts, const T* scratch) {
  for (int64_t p = 1; g.trans == CblasTrans && p < parts; ++p)
    for (int64_t j = 0; j < g.cols; ++j) g.y[j * g.incy] += scratch[(p - 1) * g.cols + j];
}

// A matrix-vector product split by the stored matrix's rows over the engine's threads, each
// part one gemv_call on its thread.
template <typename T>
void split_gemv(const Gemv<T>& g, T alpha, T beta, int64_t parts, int64_t rows) {
  std::vector<T> scratch(g.trans == CblasTrans ? size_t((parts - 1) * g.cols) : 0);
  BlasOnCallingThread one_thread;
  parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
    for (int64_t p = first; p < last; ++p) {
      const auto [part, b] = gemv_part(g, beta, p, p * rows, std::min(g.rows, (p + 1) * rows), scratch.data());
      gemv_call(part, alpha, b);
    }
  });
  add_part_sums(g, parts, scratch.data());
}

template <typename T>
void blas_batched(const GemmProblem& P, const Scalar& alpha, const Scalar& beta, bool use_beta) {
  const T* a = reinterpret_cast<const T*>(P.a_base);
  const T* b = reinterpret_cast<const T*>(P.b_base);
  T* c = reinterpret_cast<T*>(P.c_base);
  const T al = T(alpha.to_double()), be = use_beta ? T(beta.to_double()) : T(0);
  auto products = [&](int64_t first, int64_t last) {
    for (int64_t bi = first; bi < last; ++bi) {
      check_interrupt();  // a long batch of products stops between matrices on Ctrl-C
      blas_gemm_one<T>(P.m, P.n, P.k, al, a + P.a_off[bi], P.ars, P.acs, b + P.b_off[bi], P.brs, P.bcs, be,
                       c + P.c_off[bi], P.n);
    }
  };
  // A batch of small products (attention's per-head ones) would run one after another on one
  // thread, as OpenBLAS keeps each to one: the engine's threads share the batch instead, each
  // product still on one thread, so the results do not depend on the thread count. Only
  // matrix-matrix products: OpenBLAS threads a matrix-vector product from a lower size.
  // Concurrent calls are safe in a threaded OpenBLAS (Debian's 0.3.21 pthreads build): each
  // takes one of its 2 * MAX_THREADS (128) buffers under its lock, and a parallel region runs
  // at most 64 chunks at once, whatever set_num_threads says (test_linalg runs 200 threads).
  int64_t work = 0;
  const bool huge = __builtin_mul_overflow(P.m * P.n, std::max<int64_t>(P.k, 1), &work);
  if (P.batch > 1 && P.m > 1 && P.n > 1 && !huge && work <= kBlasOneThreadWork) {
    parallel_for(0, P.batch, std::max<int64_t>(1, kBlasOneThreadWork / work), products);
    return;
  }
  const int threads = get_num_threads();
  if (Gemv<T> g; P.batch == 1 && !huge &&
                 as_gemv<T>(P.m, P.n, P.k, a + P.a_off[0], P.ars, P.acs, b + P.b_off[0], P.brs, P.bcs,
                            c + P.c_off[0], P.n, g)) {
    if (const auto [parts, rows] = gemv_parts(g.rows, work, threads); parts > 1) {
      check_interrupt();
      return split_gemv(g, al, be, parts, rows);
    }
  }
  if (P.batch == 1 && threads > 1 && !huge && !in_parallel_region() && split_by_rows(P.m, P.n, P.k)) {
    check_interrupt();
    const auto [parts, rows] = row_parts(P.m, threads);
    BlasOnCallingThread one_thread;
    parallel_for(0, parts, 1, [&](int64_t first, int64_t last) {
      for (int64_t p = first; p < last; ++p) {
        const int64_t r0 = p * rows, r1 = std::min(P.m, r0 + rows);
        if (r0 < r1)
          blas_gemm_one<T>(r1 - r0, P.n, P.k, al, a + P.a_off[0] + r0 * P.ars, P.ars, P.acs, b + P.b_off[0], P.brs,
                           P.bcs, be, c + P.c_off[0] + r0 * P.n, P.n);
      }
    });
    return;
  }
  products(0, P.batch);
}


template <typename T>
bool as_matvec_of(const Tensor& A, const Tensor& B, const Tensor& C, const Scalar& alpha, const Scalar& beta,
                  bool use_beta, MatVec* out) {
  const int64_t m = A.size(A.dim() - 2), k = A.size(A.dim() - 1), n = B.size(B.dim() - 1);
  Gemv<T> g;
  if (!as_gemv<T>(m, n, k, static_cast<const T*>(A.address()), A.stride(A.dim() - 2), A.stride(A.dim() - 1),
                  static_cast<const T*>(B.address()), B.stride(B.dim() - 2), B.stride(B.dim() - 1),
                  static_cast<T*>(C.address()), n, g) ||
      g.incx != 1 || g.incy != 1)
    return false;
  *out = {C.dtype(), g.trans == CblasTrans, g.rows, g.cols, g.lda, g.M, g.x, g.y, alpha.to_double(),
          use_beta ? beta.to_double() : 0.0};
  return true;
}

// matvec_pair's work: the parts, part calls and sums of split_gemv (or the one call of an
// unsplit product), with between in each part.
template <typename T>
void matvec_pair_of(const MatVec& first, const MatVec& second, const std::function<void(int64_t, int64_t)>& between) {
  auto gemv = [](const MatVec& o) {
    return Gemv<T>{o.trans ? CblasTrans : CblasNoTrans, o.rows, o.cols, o.lda, static_cast<const T*>(o.M),
                   static_cast<const T*>(o.x), 1, static_cast<T*>(o.y), 1};
  };
  const Gemv<T> f = gemv(first), s = gemv(second);
  const auto [parts, rows] = gemv_parts(f.rows, f.rows * f.cols, get_num_threads());
  std::vector<T> scratch(size_t((parts - 1) * s.cols));
  auto run_part = [&](int64_t p) {
    const int64_t r0 = p * rows, r1 = std::min(f.rows, r0 + rows);
    const auto [fp, fb] = gemv_part(f, T(first.beta), p, r0, r1, scratch.data());
    gemv_call(fp, T(first.alpha), fb);
    between(r0, r1);
    const auto [sp, sb] = gemv_part(s, T(second.beta), p, r0, r1, scratch.data());
    gemv_call(sp, T(second.alpha), sb);
  };
  check_interrupt();
  if (parts == 1) return run_part(0);
  BlasOnCallingThread one_thread;
  parallel_for(0, parts, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) run_part(p);
  });
  add_part_sums(s, parts, scratch.data());
}

// float16 / bfloat16 products with at least this many multiply-adds go through float32 BLAS.
constexpr int64_t kHalfViaFloat = 32 * 32 * 32;

// Complex products (C contiguous): cblas_cgemm / cblas_zgemm on row-major copies, one call
// per batch matrix (an empty k gives beta * C, or zeros).
void complex_gemm(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
                  const Scalar& beta, bool use_beta) {
  const int64_t m = A.size(A.dim() - 2), k = A.size(A.dim() - 1), n = B.size(B.dim() - 1);
  TIDE_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "matmul: complex matrices with more than ", INT_MAX,
             " rows or columns are not supported (", m, " x ", k, " @ ", k, " x ", n, ")");
  A = A.contiguous();
  B = B.contiguous();
  Offsets ao, bo;
  batch_offsets(bshape, A, batch, ao);
  batch_offsets(bshape, B, batch, bo);
  TIDE_DISPATCH_COMPLEX(C.dtype(), "matmul", [&] {
    using Cx = scalar_t;
    const Cx al = alpha.to<Cx>(), be = use_beta ? beta.to<Cx>() : Cx(0);
    const Cx* a = static_cast<const Cx*>(A.storage()->data());
    const Cx* b = static_cast<const Cx*>(B.storage()->data());
    Cx* c = static_cast<Cx*>(C.storage()->data()) + C.offset();
    for (int64_t i = 0; i < batch; ++i) {
      Cx* ci = c + i * m * n;
      if (k == 0) {
        for (int64_t j = 0; j < m * n; ++j) ci[j] = use_beta ? be * ci[j] : Cx(0);
        continue;
      }
      if constexpr (std::is_same_v<Cx, std::complex<float>>)
        cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), &al, a + ao.data()[i], int(k),
                    b + bo.data()[i], int(n), &be, ci, int(n));
      else
        cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), &al, a + ao.data()[i], int(k),
                    b + bo.data()[i], int(n), &be, ci, int(n));
    }
  });
}

}  // namespace

void matmul(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
            const Scalar& beta, bool use_beta) {
  const DType dt = C.dtype();
  const int64_t m = A.size(A.dim() - 2), k = A.size(A.dim() - 1), n = B.size(B.dim() - 1);
  if (is_complex(dt)) return complex_gemm(A, B, C, bshape, batch, alpha, beta, use_beta);

  const bool is_blas_type = dt == DType::Float32 || dt == DType::Float64;
  const bool big = m > INT_MAX || n > INT_MAX || k > INT_MAX;
  int64_t work = 0;  // multiply-adds (batch * m * n is C's numel; times k may pass int64)
  const bool much = __builtin_mul_overflow(batch * m * n, k, &work) || work >= kHalfViaFloat;
  if ((dt == DType::Float16 || dt == DType::BFloat16) && !big && k > 0 && much) {
    // Halves: float32 copies through sgemm (float32 accumulation, as the own loop does, at
    // BLAS speed), rounded once into the result.
    Tensor A32 = A.to(DType::Float32), B32 = B.to(DType::Float32);
    Tensor C1 = C.as_strided({batch * m * n}, {1}, C.offset());
    Tensor C32 = use_beta ? C1.to(DType::Float32) : Tensor::empty({batch * m * n}, DType::Float32);
    matmul(A32, B32, C32, bshape, batch, alpha, beta, use_beta);
    ops::copy_(C1, C32);
    return;
  }
  const bool use_blas = is_blas_type && k > 0 && !big;
  if (use_blas) {
    if (!blas_ok(A)) A = A.contiguous();
    if (!blas_ok(B)) B = B.contiguous();
  }
  Offsets ao, bo, co;
  batch_offsets(bshape, A, batch, ao);
  batch_offsets(bshape, B, batch, bo);
  if (batch > 1) {
    co.many.resize(static_cast<size_t>(batch));
    for (int64_t b = 0; b < batch; ++b) co.many[size_t(b)] = C.offset() + b * m * n;
  } else {
    co.one = C.offset();
  }
  const int64_t* a_off = ao.data();
  const int64_t* b_off = bo.data();
  const int64_t ars = A.stride(A.dim() - 2), acs = A.stride(A.dim() - 1);
  const int64_t brs = B.stride(B.dim() - 2), bcs = B.stride(B.dim() - 1);

  GemmProblem P{batch, m, n, k,
                static_cast<char*>(A.storage()->data()), a_off, ars, acs,
                static_cast<char*>(B.storage()->data()), b_off, brs, bcs,
                static_cast<char*>(C.storage()->data()), co.data(), n, 1};

  // Fold the batch into rows when B is one matrix for every batch and A's matrices follow
  // each other with A's row stride (a contiguous (B,n,k) x (k,m) becomes one product).
  if (batch > 1) {
    bool b_same = true, a_rows = (acs == 1 || k == 1) && ars != 0;
    for (int64_t b = 1; b < batch && (b_same || a_rows); ++b) {
      b_same = b_same && b_off[size_t(b)] == b_off[0];
      a_rows = a_rows && a_off[size_t(b)] == a_off[0] + b * m * ars;
    }
    if (b_same && a_rows && batch * m <= INT_MAX && (!use_blas || ars * 1 >= std::max<int64_t>(k, 1))) {
      P.batch = 1;
      P.m = batch * m;
    }
  }

  if (use_blas) {
    if (dt == DType::Float32) blas_batched<float>(P, alpha, beta, use_beta);
    else blas_batched<double>(P, alpha, beta, use_beta);
    return;
  }
  TIDE_DISPATCH_ALL(dt, "matmul", [&] { own_gemm<scalar_t>(P, alpha, beta, use_beta); });
}

// The conditions follow matmul's path above: float32 / float64 BLAS operands used in place,
// one matrix, a matrix-vector product (as_gemv) with contiguous vectors.
bool as_matvec(const Tensor& A, const Tensor& B, const Tensor& C, int64_t batch, const Scalar& alpha,
               const Scalar& beta, bool use_beta, MatVec* out) {
  const DType dt = C.dtype();
  const int64_t m = A.size(A.dim() - 2), k = A.size(A.dim() - 1), n = B.size(B.dim() - 1);
  if ((dt != DType::Float32 && dt != DType::Float64) || batch != 1 || k == 0 || m > INT_MAX || n > INT_MAX ||
      k > INT_MAX || !blas_ok(A) || !blas_ok(B))
    return false;
  return dt == DType::Float32 ? as_matvec_of<float>(A, B, C, alpha, beta, use_beta, out)
                              : as_matvec_of<double>(A, B, C, alpha, beta, use_beta, out);
}

void matvec_pair(const MatVec& first, const MatVec& second, const std::function<void(int64_t, int64_t)>& between) {
  TIDE_ASSERT(!first.trans && second.trans && first.dtype == second.dtype && first.M == second.M &&
              first.rows == second.rows && first.cols == second.cols && first.lda == second.lda);
  if (first.dtype == DType::Float32) matvec_pair_of<float>(first, second, between);
  else matvec_pair_of<double>(first, second, between);
}

}  // namespace tide::cpu
