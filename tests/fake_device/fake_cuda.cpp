// A stand-in CUDA backend for tests on machines without a GPU: the CPU's device table
// (tensor/cpu/backend.hpp) under the name "cuda", in host memory of its own with a capacity,
// plus plain serial loops for the entries the CPU table leaves null (random fills, reductions
// and scans over rows, products, gathers and scatters by offsets). Loaded with
// TIDE_CUDA_MODULE=.../libtide_fake_cuda.so, it lets the CPU-only CI run every engine path a
// CUDA tensor takes (routing, the checks and compositions done before the backend is called,
// positions for index ops, operand layouts handed to gemm, autograd, nn and optim on a
// non-CPU device, device mixing errors) against tests/lua/test_cuda.lua and
// tests/conformance/devicecheck.lua. It checks the contract, not the CUDA kernels
// (tensor/cuda/ runs only on a GPU). The Philox draws are written per element, as a kernel
// does, independently of the CPU's chunked loop in tensor/cpu/random.cpp.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "../../tensor/cpu/backend.hpp"
#include "../../tensor/cpu/functors.hpp"
#include "../../tensor/random.hpp"

namespace tide::fake {

namespace {

std::mutex g_mu;
DeviceMemoryStats g_stats;
bool g_bad_index = false;
int64_t g_bad_value = 0, g_bad_extent = 0;

// Total bytes the stand-in lets tensors hold (so that out-of-memory paths are testable).
constexpr size_t kCapacity = size_t(8) << 30;

void* allocate(size_t nbytes, int) {
  std::lock_guard<std::mutex> g(g_mu);
  if (nbytes > kCapacity - g_stats.allocated)
    throw OutOfMemory("cuda: out of memory: tried to allocate " + std::to_string(nbytes) + " bytes on cuda:0 (" +
                      std::to_string(g_stats.allocated) + " bytes allocated by tensors; stand-in device of " +
                      std::to_string(kCapacity) + " bytes)");
  void* p = std::aligned_alloc(64, (std::max<size_t>(nbytes, 1) + 63) / 64 * 64);
  if (!p) throw OutOfMemory("cuda: out of memory: tried to allocate " + std::to_string(nbytes) + " bytes");
  g_stats.allocated += nbytes;
  g_stats.reserved = g_stats.allocated;
  g_stats.peak_allocated = std::max(g_stats.peak_allocated, g_stats.allocated);
  return p;
}

void release(void* p, size_t nbytes, int) {
  std::lock_guard<std::mutex> g(g_mu);
  std::free(p);
  g_stats.allocated -= nbytes;
  g_stats.reserved = g_stats.allocated;
}

DeviceMemoryStats memory_stats(int) {
  std::lock_guard<std::mutex> g(g_mu);
  return g_stats;
}

void copy_bytes(void* dst, Device, const void* src, Device, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

void check_kernel_errors(const char* op) {
  if (!g_bad_index) return;
  g_bad_index = false;
  TIDE_FAIL(op, ": index ", g_bad_value, " is out of range for a tensor of ", g_bad_extent, " elements");
}

// The `words` words of element i of the draw (seed, offset): random.hpp's scheme.
void words_of(uint64_t seed, uint64_t offset, int64_t i, int words, uint32_t* w) {
  uint64_t first = uint64_t(i) * uint64_t(words);
  philox::Words b = philox::block(seed, offset + first / 4);
  for (int k = 0; k < words; ++k) w[k] = b.w[(first % 4) + uint64_t(k)];
}

void random(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset, const RandomParams& p) {
  const double a = p.a, b = p.b;
  TIDE_DISPATCH_ALL(dt, "random", [&] {
    scalar_t* o = static_cast<scalar_t*>(out);
    for (int64_t i = 0; i < n; ++i) {
      uint32_t w[4];
      double v = 0;
      if (kind == RandomKind::Normal) {
        philox::Words blk = philox::block(seed, offset + uint64_t(i) / 2);
        v = a + b * philox::normal_from_words(blk.w[0], blk.w[1], blk.w[2], blk.w[3], i % 2 == 1);
      } else if (kind == RandomKind::Int) {
        words_of(seed, offset, i, 2, w);
        const uint64_t range = uint64_t(p.high) - uint64_t(p.low);
        const int64_t k = int64_t(uint64_t(p.low) + ((uint64_t(w[0]) << 32) | w[1]) % range);
        v = double(k);
        if constexpr (std::is_integral_v<scalar_t>) {
          o[i] = scalar_t(k);
          continue;
        }
      } else {
        double u;
        if constexpr (std::is_same_v<scalar_t, double>) {
          words_of(seed, offset, i, 2, w);
          u = philox::uniform53(w[0], w[1]);
        } else {
          words_of(seed, offset, i, 1, w);
          u = philox::uniform_bits(w[0], std::is_same_v<scalar_t, Half> ? 11 : std::is_same_v<scalar_t, BFloat16> ? 8 : 24);
        }
        v = a + (b - a) * u;
        if constexpr (is_float_v<scalar_t>) {
          if (a < b && double(compute_t<scalar_t>(scalar_t(compute_t<scalar_t>(v)))) >= b) v = a;
        }
      }
      if constexpr (std::is_same_v<scalar_t, bool>) o[i] = v != 0;
      else o[i] = scalar_t(compute_t<scalar_t>(v));
    }
  });
}

// Accumulators as backend.hpp says: float for halves and float32, double for float64,
// int64 for integers and bool.
template <typename T>
using acc_t = std::conditional_t<is_float_v<T>, std::conditional_t<std::is_same_v<T, double>, double, float>, int64_t>;

void reduce_rows(ReduceKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t* idx, int64_t rows,
                 int64_t len) {
  TIDE_DISPATCH_ALL(in_dt, "reduce", [&] {
    using A = acc_t<scalar_t>;
    const scalar_t* x = static_cast<const scalar_t*>(in);
    for (int64_t r = 0; r < rows; ++r) {
      const scalar_t* row = x + r * len;
      if (kind == ReduceKind::Sum || kind == ReduceKind::Prod) {
        A acc = kind == ReduceKind::Sum ? A(0) : A(1);
        for (int64_t j = 0; j < len; ++j) {
          A v = A(compute_t<scalar_t>(row[j]));
          acc = kind == ReduceKind::Sum ? A(acc + v) : A(acc * v);
        }
        TIDE_DISPATCH_ALL(out_dt, "reduce", [&] { static_cast<scalar_t*>(out)[r] = scalar_t(compute_t<scalar_t>(acc)); });
        continue;
      }
      const bool is_max = kind == ReduceKind::Max || kind == ReduceKind::ArgMax;
      int64_t best = 0;
      auto val = [&](int64_t j) { return compute_t<scalar_t>(row[j]); };
      for (int64_t j = 1; j < len; ++j) {
        auto b = val(best), v = val(j);
        if (b != b) break;  // the first NaN wins
        if (v != v || (is_max ? b < v : v < b)) best = j;
      }
      if (out) static_cast<scalar_t*>(out)[r] = row[best];
      if (idx) idx[r] = best + 1;
    }
  });
}

void scan_rows(ScanKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t rows, int64_t len) {
  TIDE_DISPATCH_ALL(out_dt, "scan", [&] {
    using O = scalar_t;
    using A = acc_t<O>;
    TIDE_DISPATCH_ALL(in_dt, "scan", [&] {
      const scalar_t* x = static_cast<const scalar_t*>(in);
      O* o = static_cast<O*>(out);
      for (int64_t r = 0; r < rows; ++r) {
        A acc = kind == ScanKind::Sum ? A(0) : A(1);
        for (int64_t j = 0; j < len; ++j) {
          A v = A(compute_t<scalar_t>(x[r * len + j]));
          acc = kind == ScanKind::Sum ? A(acc + v) : A(acc * v);
          o[r * len + j] = O(compute_t<O>(acc));
        }
      }
    });
  });
}

// The row-major product of backend.hpp's gemm, accumulated in double.
void gemm(DType dt, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha, const void* a, int64_t lda,
          int64_t sa, const void* b, int64_t ldb, int64_t sb, double beta, void* c, int64_t ldc, int64_t sc,
          int64_t batch) {
  TIDE_DISPATCH_FLOAT(dt, "gemm", [&] {
    const scalar_t* A = static_cast<const scalar_t*>(a);
    const scalar_t* B = static_cast<const scalar_t*>(b);
    scalar_t* C = static_cast<scalar_t*>(c);
    for (int64_t q = 0; q < batch; ++q)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          for (int64_t l = 0; l < k; ++l) {
            double x = double(compute_t<scalar_t>(ta ? A[q * sa + l * lda + i] : A[q * sa + i * lda + l]));
            double y = double(compute_t<scalar_t>(tb ? B[q * sb + j * ldb + l] : B[q * sb + l * ldb + j]));
            s += x * y;
          }
          scalar_t& r = C[q * sc + i * ldc + j];
          double prev = beta != 0 ? double(compute_t<scalar_t>(r)) : 0.0;
          r = scalar_t(compute_t<scalar_t>(alpha * s + beta * prev));
        }
  });
}

void set_allow_tf32(bool) {}

bool offset_ok(int64_t off, int64_t extent) {
  if (off >= -1 && off < extent) return true;
  if (!g_bad_index) {
    g_bad_index = true;
    g_bad_value = off;
    g_bad_extent = extent;
  }
  return false;
}

void take(DType dt, void* out, const void* src, const int64_t* offsets, int64_t n, int64_t extent, Scalar fill) {
  TIDE_DISPATCH_ALL(dt, "take", [&] {
    scalar_t* o = static_cast<scalar_t*>(out);
    const scalar_t* s = static_cast<const scalar_t*>(src);
    for (int64_t i = 0; i < n; ++i) {
      if (!offset_ok(offsets[i], extent)) continue;
      o[i] = offsets[i] == -1 ? fill.to<scalar_t>() : s[offsets[i]];
    }
  });
}

void put(DType dt, void* dst, const int64_t* offsets, const void* values, int64_t n, int64_t extent, bool accumulate) {
  TIDE_DISPATCH_ALL(dt, "put", [&] {
    scalar_t* d = static_cast<scalar_t*>(dst);
    const scalar_t* v = static_cast<const scalar_t*>(values);
    for (int64_t i = 0; i < n; ++i) {
      if (!offset_ok(offsets[i], extent) || offsets[i] == -1) continue;
      scalar_t& t = d[offsets[i]];
      if (!accumulate) t = v[i];
      else if constexpr (std::is_same_v<scalar_t, bool>) t = t || v[i];
      else t = scalar_t(compute_t<scalar_t>(t) + compute_t<scalar_t>(v[i]));
    }
  });
}

const DeviceBackend kBackend = {
    "cuda",
    [] { return 1; },
    allocate,
    release,
    memory_stats,
    [] {},
    [](int) {},
    copy_bytes,
    check_kernel_errors,
    cpu::unary,
    cpu::binary,
    cpu::copy,
    cpu::fill,
    cpu::where,
    cpu::clamp,
    random,
    reduce_rows,
    scan_rows,
    gemm,
    set_allow_tf32,
    take,
    put,
    cpu::optim_step,
    nullptr,  // strided reductions and scans: composed by the engine, as for CUDA
    nullptr,
    nullptr,  // strided products: gemm, or the CPU on host copies for integers
    nullptr,  // sort: the CPU's on host copies
    nullptr,  // host kernels: the CPU's only
    nullptr,  // graphs: none (compiled replays run their steps)
    nullptr,
    nullptr,
    nullptr,
};

}  // namespace
}  // namespace tide::fake

extern "C" const tide::DeviceBackend* tide_cuda_backend(const char** why) {
  if (why) *why = nullptr;
  return &tide::fake::kBackend;
}
