// The CPU backend: the device table of tensor/backend.hpp for host memory, so that an op is
// its checks, its TensorIter and one backend call on every device. Its kernels are declared
// here for backends that reuse them (the stand-in device of tests/fake_device).
//
// The table's pointwise, copy, fill, where, clamp, optimizer and random entries are the CPU's
// kernels; its reduction, scan, product and gather/scatter entries are null: reductions,
// products and index ops still run their CPU algorithms in tensor/ops (strided reductions
// without a copy to rows, products split over the thread pool, indices checked on the host),
// where a device gets the contiguous-rows form of the table.
#pragma once
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

}  // namespace tide::cpu
