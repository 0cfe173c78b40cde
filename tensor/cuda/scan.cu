// Inclusive scans (cumsum, cumprod) along the rows of a contiguous (rows, len) input.
// Short rows: a thread per row, in order. Long rows: a block per row, walking the row in
// chunks of blockDim elements, each scanned in shared memory (Hillis-Steele) and offset by
// the running total of the chunks before it.
#include "backend_impl.cuh"
#include "pointwise.cuh"

namespace tide::cuda {

namespace {

constexpr int kScanThreads = 256;
constexpr int64_t kThreadPerRowMax = 32;  // rows up to this length are scanned by one thread

// The accumulator of a scan as on the CPU: double for float32 (as PyTorch's CPU cumsum),
// float for halves, double for float64, int64 for integers and bool.
template <typename T>
using scan_acc_t = std::conditional_t<std::is_same_v<T, float>, double,
                                      std::conditional_t<is_float_v<T>, compute_t<T>, int64_t>>;

template <typename A, bool Prod>
__device__ __forceinline__ A scan_combine(A a, A b) {
  if constexpr (std::is_integral_v<A>) return A(Prod ? uint64_t(a) * uint64_t(b) : uint64_t(a) + uint64_t(b));
  else return Prod ? a * b : a + b;
}

// Element j of row `row`, converted to the output dtype (as the CPU converts the input first)
// and then to the accumulator.
template <typename Out, typename A>
__device__ __forceinline__ A scan_load(const char* in, DType in_dt, int in_size, int64_t pos) {
  return A(load_as<Out>(in + pos * in_size, in_dt));
}

template <typename Out, bool Prod>
__global__ void scan_thread_per_row(const char* in, DType in_dt, int in_size, Out* out, int64_t rows, int64_t len) {
  using A = scan_acc_t<Out>;
  const int64_t row = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  A acc = A(Prod ? 1 : 0);
  for (int64_t j = 0; j < len; ++j) {
    const int64_t pos = row * len + j;
    acc = scan_combine<A, Prod>(acc, scan_load<Out, A>(in, in_dt, in_size, pos));
    store_value(out + pos, compute_t<Out>(acc));
  }
}

template <typename Out, bool Prod>
__global__ void __launch_bounds__(kScanThreads)
    scan_block_per_row(const char* in, DType in_dt, int in_size, Out* out, int64_t len) {
  using A = scan_acc_t<Out>;
  __shared__ A chunk[kScanThreads];
  const int tid = int(threadIdx.x);
  const int64_t row = blockIdx.x;
  const A identity = A(Prod ? 1 : 0);
  A carry = identity;  // the scan of the chunks before this one
  for (int64_t base = 0; base < len; base += kScanThreads) {
    const int64_t j = base + tid;
    chunk[tid] = j < len ? scan_load<Out, A>(in, in_dt, in_size, row * len + j) : identity;
    __syncthreads();
    for (int step = 1; step < kScanThreads; step *= 2) {
      const A before = tid >= step ? chunk[tid - step] : identity;
      __syncthreads();
      chunk[tid] = scan_combine<A, Prod>(before, chunk[tid]);
      __syncthreads();
    }
    if (j < len) store_value(out + row * len + j, compute_t<Out>(scan_combine<A, Prod>(carry, chunk[tid])));
    carry = scan_combine<A, Prod>(carry, chunk[kScanThreads - 1]);
    __syncthreads();  // every thread has read the chunk before the next one overwrites it
  }
}

template <typename Out, bool Prod>
void run_scan(const void* in, DType in_dt, Out* out, int64_t rows, int64_t len, cudaStream_t stream, const char* name) {
  const char* src = static_cast<const char*>(in);
  const int in_size = int(dtype_size(in_dt));
  if (len <= kThreadPerRowMax) {
    const int64_t blocks = ceil_div(rows, kScanThreads);
    TIDE_CHECK(blocks <= INT32_MAX, name, ": too many rows for one CUDA launch (", rows, ")");
    scan_thread_per_row<Out, Prod><<<unsigned(blocks), kScanThreads, 0, stream>>>(src, in_dt, in_size, out, rows, len);
  } else {
    TIDE_CHECK(rows <= INT32_MAX, name, ": too many rows for one CUDA launch (", rows, ")");
    scan_block_per_row<Out, Prod><<<unsigned(rows), kScanThreads, 0, stream>>>(src, in_dt, in_size, out, len);
  }
  check_launch(name);
}

}  // namespace

void scan_rows(ScanKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t rows, int64_t len) {
  const bool prod = kind == ScanKind::Prod;
  const char* name = prod ? "cumprod" : "cumsum";
  if (rows <= 0 || len <= 0) return;
  cudaStream_t stream = stream_for(device_of(out));
  TIDE_DISPATCH_ALL(out_dt, name, [&] {
    auto* o = static_cast<scalar_t*>(out);
    if (prod) run_scan<scalar_t, true>(in, in_dt, o, rows, len, stream, name);
    else run_scan<scalar_t, false>(in, in_dt, o, rows, len, stream, name);
  });
}

}  // namespace tide::cuda
