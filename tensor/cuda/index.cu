// Gathers (take) and scatters (put) by element offsets, bounds-checked on the device: an
// offset outside the tensor is never dereferenced; it raises the device's error flag (the
// first one is kept, with atomicCAS) and check_kernel_errors turns it into a Lua error.
#include <algorithm>
#include <cstring>

#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

constexpr int kIndexThreads = 256;

__device__ void raise_index_error(KernelErrorFlag* flag, int64_t value, int64_t extent) {
  if (atomicCAS(&flag->raised, 0, 1) == 0) {
    flag->value = value;
    flag->extent = extent;
  }
}

// out[i] = src[offsets[i]]; -1 gives the fill value (raw elements of Raw's size).
template <typename Raw>
__global__ void take_kernel(Raw* out, const Raw* src, const int64_t* offsets, int64_t n, int64_t extent, Raw fill,
                            KernelErrorFlag* flag) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t off = offsets[i];
    if (off >= 0 && off < extent) {
      out[i] = src[off];
    } else {
      if (off != -1) raise_index_error(flag, off, extent);
      out[i] = fill;
    }
  }
}

// dst[offsets[i]] = values[i]; -1 is skipped.
template <typename Raw>
__global__ void put_kernel(Raw* dst, const int64_t* offsets, const Raw* values, int64_t n, int64_t extent,
                           KernelErrorFlag* flag) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t off = offsets[i];
    if (off >= 0 && off < extent) dst[off] = values[i];
    else if (off != -1) raise_index_error(flag, off, extent);
  }
}

// *p += v for 1- and 2-byte integers (wrapping) and bool (or): a compare-and-swap loop on the
// aligned 32-bit word that holds the element (the allocator's blocks start 512-byte aligned
// and are multiples of 512 bytes, so that word lies inside the tensor's block).
template <typename T>
__device__ void atomic_add_narrow(T* p, T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2);
  using U = typename RawType<int(sizeof(T))>::type;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  auto* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
  const unsigned int shift = unsigned(addr & 3) * 8;
  const unsigned int mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const U cur = U((assumed & mask) >> shift);
    U sum;
    if constexpr (std::is_same_v<T, bool>) sum = U(cur | U(v));
    else sum = U(cur + U(v));
    old = atomicCAS(word, assumed, (assumed & ~mask) | ((unsigned(sum) << shift) & mask));
  } while (old != assumed);
}

// *p += v atomically for every dtype (halves add in their own precision).
template <typename T>
__device__ void atomic_accumulate(T* p, T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, int32_t> ||
                std::is_same_v<T, uint32_t>) {
    atomicAdd(p, v);
  } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, uint64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(p), static_cast<unsigned long long>(v));
  } else if constexpr (std::is_same_v<T, Half>) {
    atomicAdd(reinterpret_cast<__half*>(p), __ushort_as_half(v.bits));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    atomicAdd(reinterpret_cast<__nv_bfloat16*>(p), __ushort_as_bfloat16(v.bits));
  } else {
    atomic_add_narrow(p, v);
  }
}

// dst[offsets[i]] += values[i] atomically; -1 is skipped.
template <typename T>
__global__ void put_accumulate_kernel(T* dst, const int64_t* offsets, const T* values, int64_t n, int64_t extent,
                                      KernelErrorFlag* flag) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t off = offsets[i];
    if (off >= 0 && off < extent) atomic_accumulate(dst + off, values[i]);
    else if (off != -1) raise_index_error(flag, off, extent);
  }
}

unsigned grid_for(int64_t n, int device) {
  return unsigned(std::max<int64_t>(1, std::min<int64_t>(ceil_div(n, kIndexThreads), int64_t(sm_count(device)) * 16)));
}

// Calls f(Raw{}) with Raw the unsigned integer type of dt's size.
template <typename F>
void with_raw_type(DType dt, F&& f) {
  switch (dtype_size(dt)) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

}  // namespace

void take(DType dt, void* out, const void* src, const int64_t* offsets, int64_t n, int64_t src_extent, Scalar fill) {
  if (n <= 0) return;
  const int device = device_of(out);
  cudaStream_t stream = stream_for(device);
  uint64_t fill_bits = 0;
  TIDE_DISPATCH_ALL(dt, "take", [&] {
    const scalar_t v = fill.to<scalar_t>();
    std::memcpy(&fill_bits, &v, sizeof v);
  });
  with_raw_type(dt, [&](auto raw) {
    using Raw = decltype(raw);
    take_kernel<Raw><<<grid_for(n, device), kIndexThreads, 0, stream>>>(
        static_cast<Raw*>(out), static_cast<const Raw*>(src), offsets, n, src_extent, Raw(fill_bits),
        error_flag(device));
  });
  check_launch("take");
}

void put(DType dt, void* dst, const int64_t* offsets, const void* values, int64_t n, int64_t dst_extent,
         bool accumulate) {
  if (n <= 0) return;
  const int device = device_of(dst);
  cudaStream_t stream = stream_for(device);
  if (accumulate) {
    TIDE_DISPATCH_ALL(dt, "put", [&] {
      put_accumulate_kernel<scalar_t><<<grid_for(n, device), kIndexThreads, 0, stream>>>(
          static_cast<scalar_t*>(dst), offsets, static_cast<const scalar_t*>(values), n, dst_extent,
          error_flag(device));
    });
  } else {
    with_raw_type(dt, [&](auto raw) {
      using Raw = decltype(raw);
      put_kernel<Raw><<<grid_for(n, device), kIndexThreads, 0, stream>>>(
          static_cast<Raw*>(dst), offsets, static_cast<const Raw*>(values), n, dst_extent, error_flag(device));
    });
  }
  check_launch("put");
}

}  // namespace tide::cuda
