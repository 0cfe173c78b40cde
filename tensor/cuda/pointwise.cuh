// Device helpers shared by the kernels (loads and stores in compute precision, dtype
// conversion) and the one pointwise launcher every element-by-element op goes through.
//
// A pointwise op is a small struct `Op` that the kernels call per element:
//   static constexpr int kN;                        operands (as in the TensorIter)
//   int elem_size(int operand) const;             bytes of one element of each operand
//   struct Loaded;                                  what load() reads
//   __device__ Loaded load(char* const* p) const;   p[k]: the element's address in operand k
//   __device__ void store(char* const* p, const Loaded&) const;   computes and writes
// Loads of several elements are issued before their stores, so that one thread has several
// memory requests in flight.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "../iterator.hpp"
#include "runtime.cuh"

namespace tide::cuda {

// ---- element access in compute precision (halves through the conversion instructions, which
// round to nearest even exactly as Half/BFloat16 do on the CPU)
template <typename T>
__device__ __forceinline__ compute_t<T> load_value(const T* p) {
  if constexpr (std::is_same_v<T, Half>) return __half2float(__ushort_as_half(p->bits));
  else if constexpr (std::is_same_v<T, BFloat16>) return __bfloat162float(__ushort_as_bfloat16(p->bits));
  else return *p;
}
template <typename T>
__device__ __forceinline__ void store_value(T* p, compute_t<T> v) {
  if constexpr (std::is_same_v<T, Half>) p->bits = __half_as_ushort(__float2half_rn(v));
  else if constexpr (std::is_same_v<T, BFloat16>) p->bits = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else *p = v;
}

// A value of compute type V written as dtype Out, as the CPU's copy does: bool tests != 0,
// other types convert through compute_t<Out>.
template <typename Out, typename V>
__device__ __forceinline__ void store_converted(Out* p, V v) {
  if constexpr (std::is_same_v<Out, bool>) *p = v != V(0);
  else store_value(p, compute_t<Out>(v));
}

// The element at p of runtime dtype dt, converted to Out as a cast would, in compute_t<Out>.
template <typename Out>
__device__ __forceinline__ compute_t<Out> load_as(const char* p, DType dt) {
  Out converted{};
  switch (dt) {
#define TIDE_LOAD_CASE(D)                                                              \
  case D:                                                                              \
    store_converted(&converted, load_value(reinterpret_cast<const typename CType<D>::type*>(p))); \
    break;
    TIDE_LOAD_CASE(DType::Bool)
    TIDE_LOAD_CASE(DType::UInt8)
    TIDE_LOAD_CASE(DType::Int8)
    TIDE_LOAD_CASE(DType::Int16)
    TIDE_LOAD_CASE(DType::Int32)
    TIDE_LOAD_CASE(DType::Int64)
    TIDE_LOAD_CASE(DType::UInt16)
    TIDE_LOAD_CASE(DType::UInt32)
    TIDE_LOAD_CASE(DType::UInt64)
    TIDE_LOAD_CASE(DType::Float16)
    TIDE_LOAD_CASE(DType::BFloat16)
    TIDE_LOAD_CASE(DType::Float32)
    TIDE_LOAD_CASE(DType::Float64)
#undef TIDE_LOAD_CASE
  }
  return load_value(&converted);
}

// An unsigned integer type of N bytes (raw copies of elements).
template <int N> struct RawType;
template <> struct RawType<1> { using type = uint8_t; };
template <> struct RawType<2> { using type = uint16_t; };
template <> struct RawType<4> { using type = uint32_t; };
template <> struct RawType<8> { using type = uint64_t; };

// ---- the launcher
constexpr int kThreads = 128;  // threads per block of pointwise kernels
constexpr int kUnroll = 4;     // elements per thread
constexpr int64_t kBlockWork = int64_t(kThreads) * kUnroll;

template <int N>
struct Pointers {
  char* p[N];
};

// Byte offsets of a linear index in each operand, from the iterator's shape (innermost
// first) and byte strides. Divisions use 32-bit arithmetic while the index fits (the common
// case; 64-bit division is a slow subroutine). The loop is unrolled over kMaxDims so that the
// arrays stay in the kernel's parameter space.
template <int N>
struct OffsetCalculator {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][N];

  __device__ __forceinline__ void offsets(int64_t linear, int64_t (&off)[N]) const {
#pragma unroll
    for (int k = 0; k < N; ++k) off[k] = 0;
#pragma unroll
    for (int d = 0; d < kMaxDims; ++d) {
      if (d == ndim) break;
      int64_t idx;
      if (d == ndim - 1) {
        idx = linear;
      } else {
        const int64_t size = sizes[d];
        int64_t q;
        if (linear <= INT32_MAX && size <= INT32_MAX) q = int64_t(uint32_t(linear) / uint32_t(size));
        else q = linear / size;
        idx = linear - q * size;
        linear = q;
      }
#pragma unroll
      for (int k = 0; k < N; ++k) off[k] += idx * strides[d][k];
    }
  }
};

// The addresses of element i of every operand of a contiguous launch.
template <typename Op>
__device__ __forceinline__ void contiguous_pointers(const Pointers<Op::kN>& data, int64_t i, const Op& op,
                                                    char* (&p)[Op::kN]) {
#pragma unroll
  for (int k = 0; k < Op::kN; ++k) p[k] = data.p[k] + i * op.elem_size(k);
}

// Every operand contiguous: element i of operand k is at p[k] + i * elem_size(k). All of a
// thread's loads are issued before its stores, so they overlap in flight.
template <typename Op>
__global__ void __launch_bounds__(kThreads) contiguous_kernel(Pointers<Op::kN> data, int64_t n, Op op) {
  const int64_t base = int64_t(blockIdx.x) * kBlockWork + threadIdx.x;
  typename Op::Loaded v[kUnroll];
  char* p[Op::kN];
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n) {
      contiguous_pointers(data, i, op, p);
      v[u] = op.load(p);
    }
  }
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) {
    const int64_t i = base + int64_t(u) * kThreads;
    if (i < n) {
      contiguous_pointers(data, i, op, p);
      op.store(p, v[u]);
    }
  }
}

// Any layout: one element per thread, offsets from the shape and strides.
template <typename Op>
__global__ void __launch_bounds__(kThreads)
    strided_kernel(Pointers<Op::kN> data, OffsetCalculator<Op::kN> calc, int64_t n, Op op) {
  constexpr int N = Op::kN;
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  if (i >= n) return;
  int64_t off[N];
  calc.offsets(i, off);
  char* p[N];
#pragma unroll
  for (int k = 0; k < N; ++k) p[k] = data.p[k] + off[k];
  op.store(p, op.load(p));
}

template <int N>
OffsetCalculator<N> make_offset_calculator(const TensorIter& it) {
  OffsetCalculator<N> c{};
  c.ndim = it.ndim();
  for (int d = 0; d < it.ndim(); ++d) {
    c.sizes[d] = it.shape()[d];
    for (int k = 0; k < N; ++k) c.strides[d][k] = it.strides(k)[d];
  }
  return c;
}

// Runs `op` over every element of the iterator on its device's stream.
template <typename Op>
void launch_pointwise(const char* name, const TensorIter& it, const Op& op) {
  constexpr int N = Op::kN;
  TIDE_ASSERT(it.ntensors() == N);
  const int64_t n = it.numel();
  if (n == 0) return;
  cudaStream_t stream = stream_for(it.device().index);
  TIDE_CHECK(n / kThreads < INT32_MAX, name, ": ", n, " elements are too many for one CUDA launch");
  Pointers<N> data;
  bool contiguous = it.ndim() == 1;
  for (int k = 0; k < N; ++k) {
    data.p[k] = it.data(k);
    contiguous = contiguous && it.strides(k)[0] == op.elem_size(k);
  }
  if (contiguous)
    contiguous_kernel<Op><<<unsigned(ceil_div(n, kBlockWork)), kThreads, 0, stream>>>(data, n, op);
  else
    strided_kernel<Op><<<unsigned(ceil_div(n, kThreads)), kThreads, 0, stream>>>(
        data, make_offset_calculator<N>(it), n, op);
  check_launch(name);
}

}  // namespace tide::cuda
