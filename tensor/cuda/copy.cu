// Casts and copies, fill, where and clamp over a TensorIter.
#include <cstring>

#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

// out (dtype Out) = in (runtime dtype) converted as the CPU's copy_ converts.
template <typename Out>
struct CastKernel {
  static constexpr int kN = 2;
  __host__ __device__ constexpr int elem_size(int k) const { return k == 0 ? int(sizeof(Out)) : in_size; }
  using Loaded = compute_t<Out>;
  DType in;
  int in_size;
  __device__ Loaded load(char* const* p) const { return load_as<Out>(p[1], in); }
  __device__ void store(char* const* p, const Loaded& v) const { store_value(reinterpret_cast<Out*>(p[0]), v); }
};

// out = in, bit for bit (elements of Bytes bytes).
template <int Bytes>
struct RawCopyKernel {
  using Raw = typename RawType<Bytes>::type;
  static constexpr int kN = 2;
  __host__ __device__ constexpr int elem_size(int) const { return Bytes; }
  using Loaded = Raw;
  __device__ Loaded load(char* const* p) const { return *reinterpret_cast<const Raw*>(p[1]); }
  __device__ void store(char* const* p, const Loaded& v) const { *reinterpret_cast<Raw*>(p[0]) = v; }
};

// out = value (the bits of the value in the output's dtype).
template <int Bytes>
struct FillKernel {
  using Raw = typename RawType<Bytes>::type;
  static constexpr int kN = 1;
  __host__ __device__ constexpr int elem_size(int) const { return Bytes; }
  struct Loaded {};
  Raw value;
  __device__ Loaded load(char* const*) const { return {}; }
  __device__ void store(char* const* p, const Loaded&) const { *reinterpret_cast<Raw*>(p[0]) = value; }
};

// out = cond ? a : b (operands out, cond, a, b).
template <int Bytes>
struct WhereKernel {
  using Raw = typename RawType<Bytes>::type;
  static constexpr int kN = 4;
  __host__ __device__ constexpr int elem_size(int k) const { return k == 1 ? int(sizeof(bool)) : Bytes; }
  using Loaded = Raw;
  __device__ Loaded load(char* const* p) const {
    return *reinterpret_cast<const Raw*>(*reinterpret_cast<const bool*>(p[1]) ? p[2] : p[3]);
  }
  __device__ void store(char* const* p, const Loaded& v) const { *reinterpret_cast<Raw*>(p[0]) = v; }
};

// clamp with scalar bounds, as the CPU's clamp lambda: NaN stays NaN, then lo, then hi.
template <typename T>
struct ClampKernel {
  using C = compute_t<T>;
  static constexpr int kN = 2;
  __host__ __device__ constexpr int elem_size(int) const { return int(sizeof(T)); }
  using Loaded = C;
  C lo, hi;
  bool has_lo, has_hi;
  __device__ Loaded load(char* const* p) const { return load_value(reinterpret_cast<const T*>(p[1])); }
  __device__ void store(char* const* p, const Loaded& x) const {
    C v = x;
    if (v == v) {
      if (has_lo && v < lo) v = lo;
      if (has_hi && hi < v) v = hi;
    }
    store_value(reinterpret_cast<T*>(p[0]), v);
  }
};

// Runs Kernel<Bytes> for an element size of 1, 2, 4 or 8 bytes.
template <template <int> class Kernel, typename... Args>
void launch_by_size(const char* op, const TensorIter& it, size_t bytes, Args... args) {
  switch (bytes) {
    case 1: launch_pointwise(op, it, Kernel<1>{args...}); break;
    case 2: launch_pointwise(op, it, Kernel<2>{args...}); break;
    case 4: launch_pointwise(op, it, Kernel<4>{args...}); break;
    case 8: launch_pointwise(op, it, Kernel<8>{args...}); break;
    default: TIDE_FAIL(op, ": internal error: no kernel for ", bytes, "-byte elements");
  }
}

// The stored bits of a scalar converted to dtype dt (Scalar::to, as the CPU's fill_).
uint64_t scalar_bits(const Scalar& value, DType dt) {
  uint64_t bits = 0;
  TIDE_DISPATCH_ALL(dt, "fill_", [&] {
    const scalar_t v = value.to<scalar_t>();
    std::memcpy(&bits, &v, sizeof v);
  });
  return bits;
}

// clamp on T with the bounds converted as the CPU converts them (bool is rejected).
template <typename T>
void run_clamp(const TensorIter& it, const Scalar* lo, const Scalar* hi) {
  if constexpr (std::is_same_v<T, bool>) {
    TIDE_FAIL("clamp: not supported for bool tensors");
  } else {
    using C = compute_t<T>;
    ClampKernel<T> k{};
    k.has_lo = lo != nullptr;
    k.has_hi = hi != nullptr;
    k.lo = lo ? C(lo->to<T>()) : C(0);
    k.hi = hi ? C(hi->to<T>()) : C(0);
    launch_pointwise("clamp", it, k);
  }
}

}  // namespace

// The source's dtype is read per element (one kernel per output dtype, not per pair); equal
// dtypes copy bits, and a copy between contiguous buffers is one cudaMemcpyAsync.
void copy(const TensorIter& it, DType out, DType in) {
  if (out == in) {
    const size_t bytes = dtype_size(out);
    const bool flat = it.ndim() == 1 && it.strides(0)[0] == int64_t(bytes) && it.strides(1)[0] == int64_t(bytes);
    if (flat && it.numel() > 0) {
      cudaStream_t stream = stream_for(it.device().index);
      check(cudaMemcpyAsync(it.data(0), it.data(1), size_t(it.numel()) * bytes, cudaMemcpyDeviceToDevice, stream),
            "cudaMemcpyAsync (copy_)");
      return;
    }
    launch_by_size<RawCopyKernel>("copy_", it, bytes);
    return;
  }
  TIDE_DISPATCH_ALL(out, "copy_", [&] {
    CastKernel<scalar_t> k{};
    k.in = in;
    k.in_size = int(dtype_size(in));
    launch_pointwise("copy_", it, k);
  });
}

void fill(const TensorIter& it, DType dt, Scalar value) {
  const uint64_t bits = scalar_bits(value, dt);
  switch (dtype_size(dt)) {
    case 1: launch_pointwise("fill_", it, FillKernel<1>{uint8_t(bits)}); break;
    case 2: launch_pointwise("fill_", it, FillKernel<2>{uint16_t(bits)}); break;
    case 4: launch_pointwise("fill_", it, FillKernel<4>{uint32_t(bits)}); break;
    default: launch_pointwise("fill_", it, FillKernel<8>{bits}); break;
  }
}

void where(const TensorIter& it, DType dt) { launch_by_size<WhereKernel>("where", it, dtype_size(dt)); }

void clamp(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi) {
  TIDE_DISPATCH_ALL(dt, "clamp", [&] { run_clamp<scalar_t>(it, lo, hi); });
}

}  // namespace tide::cuda
