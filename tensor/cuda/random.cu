// Random fills with the Philox scheme of tensor/random.hpp, value for value the same as the
// CPU kernels of tensor/cpu/random.cpp: one thread per Philox block writes the elements
// whose words that block holds. Sums and products of doubles use the _rn intrinsics so that
// nvcc does not contract them into an fma (the CPU rounds each step).
#include <algorithm>

#include "../random.hpp"
#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

constexpr int kRandomThreads = 256;

// The uniform [0,1) value of a float type from its words at w (exact in that type).
template <typename T>
__device__ __forceinline__ double uniform01(const uint32_t* w) {
  if constexpr (std::is_same_v<T, double>) return philox::uniform53(w[0], w[1]);
  else if constexpr (std::is_same_v<T, float>) return philox::uniform_bits(w[0], 24);
  else if constexpr (std::is_same_v<T, Half>) return philox::uniform_bits(w[0], 11);
  else return philox::uniform_bits(w[0], 8);
}

// a + (b - a) * u cast to T; a value that rounds up to b becomes a (half-open interval).
template <typename T>
__global__ void uniform_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, double a, double b) {
  constexpr int W = philox::uniform_words<T>(), kPerBlock = 4 / W;
  const double width = b - a;
  const int64_t nblocks = (n + kPerBlock - 1) / kPerBlock;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < nblocks;
       blk += int64_t(gridDim.x) * blockDim.x) {
    const philox::Words ws = philox::block(seed, offset + uint64_t(blk));
#pragma unroll
    for (int j = 0; j < kPerBlock; ++j) {
      const int64_t i = blk * kPerBlock + j;
      if (i >= n) break;
      T v;
      store_value(&v, compute_t<T>(__dadd_rn(a, __dmul_rn(width, uniform01<T>(&ws.w[j * W])))));
      if (a < b && double(load_value(&v)) >= b) store_value(&v, compute_t<T>(a));
      out[i] = v;
    }
  }
}

// mean + std * z, z from Box-Muller on one block per pair of elements.
template <typename T>
__global__ void normal_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, double mean, double std) {
  const int64_t npairs = (n + 1) / 2;
  for (int64_t q = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < npairs; q += int64_t(gridDim.x) * blockDim.x) {
    const philox::Words ws = philox::block(seed, offset + uint64_t(q));
    double z[2];
    philox::normal_pair_from_words(ws.w[0], ws.w[1], ws.w[2], ws.w[3], z[0], z[1]);
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int64_t i = 2 * q + j;
      if (i < n) store_value(&out[i], compute_t<T>(__dadd_rn(mean, __dmul_rn(std, z[j]))));
    }
  }
}

// low + (64-bit word pair mod (high - low)), two elements per block.
template <typename T>
__global__ void randint_kernel(T* out, int64_t n, uint64_t seed, uint64_t offset, int64_t low, uint64_t range) {
  const int64_t nblocks = (n + 1) / 2;
  for (int64_t blk = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; blk < nblocks;
       blk += int64_t(gridDim.x) * blockDim.x) {
    const philox::Words ws = philox::block(seed, offset + uint64_t(blk));
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      const int64_t i = blk * 2 + j;
      if (i >= n) break;
      const uint64_t r = (uint64_t(ws.w[2 * j]) << 32) | ws.w[2 * j + 1];
      const int64_t v = int64_t(uint64_t(low) + r % range);
      if constexpr (is_float_v<T>) store_converted(&out[i], double(v));
      else store_converted(&out[i], v);
    }
  }
}

// A grid for `work` threads: enough blocks to fill the device, the kernels loop over the rest.
unsigned grid_for(int64_t work, int device) {
  const int64_t blocks = ceil_div(work, kRandomThreads);
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(blocks, int64_t(sm_count(device)) * 16)));
}

}  // namespace

void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset, const RandomParams& p) {
  const double a = p.a, b = p.b;
  if (n <= 0) return;
  const int device = device_of(out);
  cudaStream_t stream = stream_for(device);
  switch (kind) {
    case RandomKind::Uniform:
      TIDE_DISPATCH_FLOAT(dt, "uniform_", [&] {
        constexpr int per_block = 4 / philox::uniform_words<scalar_t>();
        uniform_kernel<scalar_t><<<grid_for(ceil_div(n, per_block), device), kRandomThreads, 0, stream>>>(
            static_cast<scalar_t*>(out), n, seed, offset, a, b);
      });
      check_launch("uniform_");
      break;
    case RandomKind::Normal:
      TIDE_DISPATCH_FLOAT(dt, "normal_", [&] {
        normal_kernel<scalar_t><<<grid_for(ceil_div(n, 2), device), kRandomThreads, 0, stream>>>(
            static_cast<scalar_t*>(out), n, seed, offset, a, b);
      });
      check_launch("normal_");
      break;
    case RandomKind::Int: {
      const int64_t low = p.low, high = p.high;
      TIDE_CHECK(low < high, "randint: expected low < high, got low=", low, ", high=", high);
      const uint64_t range = uint64_t(high) - uint64_t(low);
      TIDE_DISPATCH_ALL(dt, "randint", [&] {
        randint_kernel<scalar_t><<<grid_for(ceil_div(n, 2), device), kRandomThreads, 0, stream>>>(
            static_cast<scalar_t*>(out), n, seed, offset, low, range);
      });
      check_launch("randint");
      break;
    }
  }
}

}  // namespace tide::cuda
