// Matrix products through cuBLAS: one handle per device bound to the device's stream.
// cuBLAS is column-major; a row-major C (m x n) is the column-major C^T (n x m), and
// C^T = op(B)^T op(A)^T, so the call swaps the operands and the roles of m and n.
#include <cublas_v2.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <mutex>

#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

constexpr int kMaxDevices = 64;
std::atomic<bool> g_allow_tf32{false};

const char* cublas_status_text(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "cuBLAS is not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "cuBLAS could not allocate memory";
    case CUBLAS_STATUS_INVALID_VALUE: return "an invalid value was passed to cuBLAS";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "the GPU does not support this cuBLAS operation";
    case CUBLAS_STATUS_MAPPING_ERROR: return "cuBLAS could not access GPU memory";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the cuBLAS kernel failed to run";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "cuBLAS internal error";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the operation is not supported by cuBLAS";
    case CUBLAS_STATUS_LICENSE_ERROR: return "cuBLAS license error";
  }
  return "unknown cuBLAS status";
}

void check_blas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) TIDE_FAIL("cuda: ", what, ": ", cublas_status_text(s), " (status ", int(s), ")");
}

struct Handle {
  std::once_flag once;
  cublasHandle_t handle = nullptr;
  std::mutex mutex;  // a cuBLAS handle is not to be used by two threads at once
};
Handle g_handles[kMaxDevices];

// The device's handle, created on first use with the device's stream (never destroyed).
Handle& handle_for(int device, cudaStream_t stream) {
  TIDE_ASSERT(device >= 0 && device < kMaxDevices);
  Handle& h = g_handles[device];
  std::call_once(h.once, [&] {
    cublasHandle_t handle;
    check_blas(cublasCreate(&handle), "cublasCreate");
    check_blas(cublasSetStream(handle, stream), "cublasSetStream");
    h.handle = handle;
  });
  return h;
}

// C = beta * C for k == 0 (beta == 0 writes zeros, so NaNs in C do not survive).
template <typename T>
__global__ void scale_kernel(T* c, int64_t m, int64_t n, int64_t ldc, int64_t stride_c, int64_t batch, double beta) {
  const int64_t total = batch * m * n;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t col = i % n, row = (i / n) % m, b = i / (n * m);
    T* p = c + b * stride_c + row * ldc + col;
    store_value(p, beta == 0 ? compute_t<T>(0) : compute_t<T>(beta * double(load_value(p))));
  }
}

void scale_c(DType dt, int64_t m, int64_t n, double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch,
             int device, cudaStream_t stream) {
  if (beta == 1) return;
  const int64_t blocks = std::min<int64_t>(ceil_div(batch * m * n, 256), int64_t(sm_count(device)) * 16);
  TIDE_DISPATCH_FLOAT(dt, "matmul", [&] {
    scale_kernel<scalar_t><<<unsigned(blocks), 256, 0, stream>>>(static_cast<scalar_t*>(c), m, n, ldc, stride_c,
                                                                 batch, beta);
  });
  check_launch("matmul");
}

// The leading dimension passed to cuBLAS for a column-major (rows x cols) view: the given one,
// except for a matrix of at most one column, which never uses it (its row stride may be any
// number there) and gets the smallest value cuBLAS accepts.
int64_t usable_ld(int64_t ld, int64_t rows, int64_t cols) { return cols <= 1 ? std::max(rows, int64_t(1)) : ld; }

}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32.store(allow); }

void gemm(DType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c,
          int64_t ldc, int64_t stride_c, int64_t batch) {
  if (m <= 0 || n <= 0 || batch <= 0) return;
  for (int64_t v : {m, n, k, batch})
    TIDE_CHECK(v <= INT_MAX, "matmul: a dimension of ", v, " is too large for cuBLAS (at most ", INT_MAX, ")");
  const int device = device_of(c);
  cudaStream_t stream = stream_for(device);
  if (k == 0) {
    scale_c(dt, m, n, beta, c, ldc, stride_c, batch, device, stream);
    return;
  }
  cudaDataType_t type;
  cublasComputeType_t compute;
  switch (dt) {
    case DType::Float16: type = CUDA_R_16F; compute = CUBLAS_COMPUTE_32F; break;
    case DType::BFloat16: type = CUDA_R_16BF; compute = CUBLAS_COMPUTE_32F; break;
    case DType::Float32:
      type = CUDA_R_32F;
      compute = g_allow_tf32.load() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
      break;
    case DType::Float64: type = CUDA_R_64F; compute = CUBLAS_COMPUTE_64F; break;
    default: TIDE_FAIL("matmul: expected a floating-point dtype on cuda, got ", dtype_name(dt));
  }
  // Column-major: C^T (n x m) = op(B)^T (n x k) * op(A)^T (k x m).
  const cublasOperation_t op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int64_t ld_b = usable_ld(ldb, trans_b ? k : n, trans_b ? n : k);
  const int64_t ld_a = usable_ld(lda, trans_a ? m : k, trans_a ? k : m);
  const int64_t ld_c = usable_ld(ldc, n, m);
  for (int64_t ld : {ld_a, ld_b, ld_c})
    TIDE_CHECK(ld <= INT_MAX, "matmul: a row stride of ", ld, " elements is too large for cuBLAS (at most ", INT_MAX,
               ")");
  const float alpha32 = float(alpha), beta32 = float(beta);
  const void* alpha_ptr = dt == DType::Float64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* beta_ptr = dt == DType::Float64 ? static_cast<const void*>(&beta) : &beta32;
  Handle& h = handle_for(device, stream);
  std::lock_guard<std::mutex> lock(h.mutex);
  auto call = [&] {
    if (batch == 1)
      return cublasGemmEx(h.handle, op_b, op_a, int(n), int(m), int(k), alpha_ptr, b, type, int(ld_b), a, type, int(ld_a),
                          beta_ptr, c, type, int(ld_c), compute, CUBLAS_GEMM_DEFAULT);
    return cublasGemmStridedBatchedEx(h.handle, op_b, op_a, int(n), int(m), int(k), alpha_ptr, b, type, int(ld_b),
                                      stride_b, a, type, int(ld_a), stride_a, beta_ptr, c, type, int(ld_c), stride_c,
                                      int(batch), compute, CUBLAS_GEMM_DEFAULT);
  };
  cublasStatus_t status = call();
  if (status == CUBLAS_STATUS_ALLOC_FAILED) {  // cuBLAS's workspace: free the cache and retry
    empty_cache();
    status = call();
  }
  check_blas(status, batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx");
}

}  // namespace tide::cuda
