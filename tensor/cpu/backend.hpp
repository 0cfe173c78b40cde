// The CPU backend: the device table of tensor/backend.hpp for host memory, so that an op is
// its checks, its TensorIter and one backend call on every device. Its kernels are declared
// here for backends that reuse them (the stand-in device of tests/fake_device).
//
// The CPU's kernels fill the pointwise, copy, fill, where, clamp, optimizer, random, strided
// reduce and scan, strided matmul and sort entries. The contiguous-rows reduction and scan
// entries, the row-major gemm and the gather/scatter entries are null: index ops still run
// their CPU algorithm in tensor/ops/index.cpp (indices checked on the host), where a device
// gets the take/put entries of the table.
#pragma once
#include <functional>
#include <vector>

#include "../backend.hpp"

namespace tide::cpu {

void unary(UnaryOp op, const TensorIter& it, DType compute);
void binary(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b);
void copy(const TensorIter& it, DType out, DType in);
void fill(const TensorIter& it, DType dt, Scalar value);
void where(const TensorIter& it, DType dt);
void clamp(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi);
void optim_step(OptimKind kind, const TensorIter& it, DType dt, const void* options);
void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset, const RandomParams& r);
Tensor reduce(Reduction kind, const Tensor& x, const ReduceSpec& spec, const ReduceArgs& args);
Tensor scan(ScanKind kind, const Tensor& x, int d, DType out);
void matmul(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
            const Scalar& beta, bool use_beta);
void sort(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values, Tensor& indices);

// A float32 / float64 matrix-vector product y = alpha op(M) x + beta y as matmul runs it
// (M row-major, rows x cols with leading dimension lda; x and y contiguous). torch.compile runs
// a pair of them over the same M in one pass (tensor/capture).
struct MatVec {
  DType dtype = DType::Float64;
  bool trans = false;  // M^T x
  int64_t rows = 0, cols = 0, lda = 0;
  const void* M = nullptr;
  const void* x = nullptr;
  void* y = nullptr;
  double alpha = 1, beta = 0;
};
// Whether matmul(A, B, C, ..., batch, alpha, beta, use_beta) runs as one MatVec, which it then
// describes in *out.
bool as_matvec(const Tensor& A, const Tensor& B, const Tensor& C, int64_t batch, const Scalar& alpha,
               const Scalar& beta, bool use_beta, MatVec* out);
// Runs first (M x1) and second (M^T x2, the same M) as matmul runs them, with between(lo, hi)
// on rows [lo, hi) of first's result in between, in one parallel region: each thread computes
// its part of M's rows of first, calls between for them, then its part of second. The result
// has the same bits as first, between(0, rows), second in turn (for the same thread count)
// when between(lo, hi) reads first's result and writes second's x only at [lo, hi). between
// runs on the engine's threads, inside the region.
void matvec_pair(const MatVec& first, const MatVec& second, const std::function<void(int64_t, int64_t)>& between);

// Element offsets (from the storage base) of every matrix of a batch: the broadcast batch
// shape `bshape` over a tensor whose leading dims are right-aligned to it. A single matrix
// needs no heap allocation (the common 2-D case).
struct Offsets {
  int64_t one = 0;
  std::vector<int64_t> many;
  const int64_t* data() const { return many.empty() ? &one : many.data(); }
};
void batch_offsets(const Dims& bshape, const Tensor& t, int64_t count, Offsets& out);

// Elements of work a parallel chunk of a reduction, scan or sort gets at least.
constexpr int64_t kSerialWork = 32768;

// The outer x n x inner view of a contiguous tensor around dim d (for loops along one dim).
struct Around {
  int64_t outer = 1, n = 1, inner = 1;
};
Around around(const Tensor& x, int d);

}  // namespace tide::cpu
