// The functions of the CUDA DeviceBackend table (backend.cu fills it), one group per .cu
// file so that the kernels compile in parallel. Their contracts are backend.hpp's.
#pragma once
#include "../backend.hpp"

namespace tide::cuda {

// unary.cu
void unary(UnaryOp op, const TensorIter& it, DType compute);
// binary.cu
void binary(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b);
// copy.cu
void copy(const TensorIter& it, DType out, DType in);
void fill(const TensorIter& it, DType dt, Scalar value);
void where(const TensorIter& it, DType dt);
void clamp(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi);
// random.cu
void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset, const RandomParams& p);
// reduce.cu
void reduce_rows(ReduceKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t* idx, int64_t rows,
                 int64_t len);
// scan.cu
void scan_rows(ScanKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t rows, int64_t len);
// blas.cu
void gemm(DType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b, double beta, void* c,
          int64_t ldc, int64_t stride_c, int64_t batch);
void set_allow_tf32(bool allow);
// index.cu
void take(DType dt, void* out, const void* src, const int64_t* offsets, int64_t n, int64_t src_extent, Scalar fill);
void put(DType dt, void* dst, const int64_t* offsets, const void* values, int64_t n, int64_t dst_extent,
         bool accumulate);
// optim.cu
void optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options);

}  // namespace tide::cuda
