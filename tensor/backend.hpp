// The device table: the interface every backend implements. The CPU's is tensor/cpu/; the
// CUDA backend (tensor/cuda/, built as the shared module libtide_cuda.so) is loaded with
// dlopen on the first use of a CUDA device, so libtide and the `tide` program never link
// CUDA and run on machines without a GPU or a driver.
//
// Division of work: the engine (tensor/ops/) does every check, dtype promotion, broadcasting
// and output allocation on the host, exactly as for the CPU, then calls these functions with
// device pointers. They enqueue work on the device's current stream and return without
// waiting, except where a comment says they wait. Errors (a failed CUDA call, an out-of-memory
// the cache cannot absorb) are thrown as tide::Error / tide::OutOfMemory whose message starts
// with the op's name.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "capture/capture.hpp"
#include "iterator.hpp"
#include "ops/elementwise.hpp"
#include "ops/optim.hpp"
#include "tensor.hpp"

namespace tide {

// Reductions over rows. Max/Min propagate NaN; ArgMax/ArgMin keep the first best position
// (a NaN beats every number, the first NaN wins).
enum class ReduceKind : uint8_t { Sum, Prod, Max, Min, ArgMax, ArgMin };
enum class ScanKind : uint8_t { Sum, Prod };
// Random fills, following the Philox scheme of tensor/random.hpp exactly (so a seed gives
// the same numbers on every device): Uniform in [a, b), Normal with mean a and std b,
// Int in [low, high) (any int64 bounds with low < high).
enum class RandomKind : uint8_t { Uniform, Normal, Int };
struct RandomParams {
  double a = 0, b = 0;
  int64_t low = 0, high = 0;
};

// A reduction of a strided tensor x over the dims `red` marks (tensor/ops/reduce.cpp makes
// it from the op's dims).
struct ReduceSpec {
  bool red[kMaxDims] = {};
  Dims keep_shape;        // x's shape with the reduced dims of size 1: the result's layout
  Dims out_shape;         // keep_shape without the reduced dims (unless keepdim)
  int64_t count = 1;      // elements reduced into each output
  int64_t out_numel = 1;
  bool keepdim = false;
};
// The reductions of the strided entry: Var/Std take the correction and Norm its p (not 0) as
// `param`; ArgMax/ArgMin write 1-based positions into *indices and return the values (or an
// undefined tensor without want_values).
enum class Reduction : uint8_t { Sum, Prod, Mean, Max, Min, ArgMax, ArgMin, Var, Std, Norm, LogSumExp, All, Any };
struct ReduceArgs {
  double param = 0;
  Tensor* indices = nullptr;
  bool want_values = true;
};

struct DeviceMemoryStats {
  size_t allocated = 0;       // bytes in live tensors (rounded to the allocator's blocks)
  size_t reserved = 0;        // allocated + cached in the allocator
  size_t peak_allocated = 0;
};

struct DeviceBackend {
  const char* name;  // "cuda"
  int (*device_count)();

  // ---- memory and transfers
  // A block of at least nbytes on the device from the caching allocator; on failure the cache
  // is freed and the allocation retried, then tide::OutOfMemory says how much was asked,
  // allocated and cached.
  void* (*allocate)(size_t nbytes, int device);
  // Returns a block to the cache (usable again once the work queued before it has run).
  void (*free)(void* ptr, size_t nbytes, int device);
  DeviceMemoryStats (*memory_stats)(int device);
  // Releases every cached block that is not in use.
  void (*empty_cache)();
  // Waits for every queued op of the device; throws if one failed.
  void (*synchronize)(int device);
  // Copies nbytes between host and device memory or within a device. A copy to the host
  // waits; a large host-to-device copy goes through pinned staging buffers.
  void (*copy_bytes)(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes);
  // Throws "<op>: index <v> is out of range ..." if a take/put kernel since the last call saw
  // an offset outside its tensor (waits for the device), and clears the flag.
  void (*check_kernel_errors)(const char* op);

  // ---- pointwise, over a TensorIter whose operands all live on one device
  // Operand 0 the output, 1 the input; the functor of `op` (cpu/functors.hpp) computed in
  // compute_t of `compute` (inputs already have dtype `compute`).
  void (*unary)(UnaryOp op, const TensorIter& it, DType compute);
  // Operands out, a, b; or out, tensor when a or b is given as a scalar (the other operand).
  void (*binary)(BinaryOp op, const TensorIter& it, DType compute, const Scalar* a, const Scalar* b);
  // Operand 1 (dtype `in`) converted into operand 0 (dtype `out`); bool results test != 0.
  void (*copy)(const TensorIter& it, DType out, DType in);
  void (*fill)(const TensorIter& it, DType dt, Scalar value);
  // Operands out, cond (bool), a, b (all of dtype dt but cond).
  void (*where)(const TensorIter& it, DType dt);
  // clamp with numeric bounds (either may be null); NaN stays NaN.
  void (*clamp)(const TensorIter& it, DType dt, const Scalar* lo, const Scalar* hi);

  // ---- random: fills n contiguous elements of dtype dt from the draw (seed, offset).
  void (*random)(RandomKind kind, void* out, DType dt, int64_t n, uint64_t seed, uint64_t offset,
                 const RandomParams& params);

  // ---- reductions and scans over the rows of a contiguous (rows, len) input
  // out[r] of dtype out_dt: Sum/Prod accumulate in float for halves and float32, double for
  // float64, int64 for integers and bool; Max/Min/ArgMax/ArgMin need len >= 1. For the Arg
  // kinds `out` (if not null) gets the best value (dtype in_dt) and idx its 1-based position.
  void (*reduce_rows)(ReduceKind kind, const void* in, DType in_dt, void* out, DType out_dt,
                      int64_t* idx, int64_t rows, int64_t len);
  // Inclusive scan along each row: out[r][j] = in[r][0] (+|*) ... in[r][j], in dtype out_dt.
  void (*scan_rows)(ScanKind kind, const void* in, DType in_dt, void* out, DType out_dt, int64_t rows,
                    int64_t len);

  // ---- matrix products (cuBLAS). Row-major: for each b < batch,
  //   C_b (m x n, row stride ldc) = alpha * op(A_b) (m x k) * op(B_b) (k x n) + beta * C_b,
  // where op(A) = A (m x k, row stride lda) or, if trans_a, the transpose of A stored (k x m,
  // row stride lda); likewise B. X_b starts stride_x elements after X_{b-1}. dt is float16,
  // bfloat16 (float accumulation, tensor cores), float32 (TF32 only when allowed) or float64.
  void (*gemm)(DType dt, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
               const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
               double beta, void* c, int64_t ldc, int64_t stride_c, int64_t batch);
  void (*set_allow_tf32)(bool allow);

  // ---- gathers and scatters by element offsets (int64 device arrays of n entries)
  // out[i] = src[offsets[i]] (n contiguous elements of dtype dt); offset -1 gives `fill`.
  // An offset outside [-1, src_extent) is flagged for check_kernel_errors.
  void (*take)(DType dt, void* out, const void* src, const int64_t* offsets, int64_t n, int64_t src_extent,
               Scalar fill);
  // dst[offsets[i]] = values[i] (or += with accumulate, atomically; bool: or); offset -1 is
  // skipped. With duplicates and no accumulate, which value lands is unspecified.
  void (*put)(DType dt, void* dst, const int64_t* offsets, const void* values, int64_t n, int64_t dst_extent,
              bool accumulate);

  // ---- fused optimizer step over a TensorIter: operand 0 the parameter (written), 1 the
  // gradient, 2.. the state buffers (written) in the order of tensor/ops/optim_update.hpp;
  // `options` points at the ops::SgdOptions / AdamOptions / RmspropOptions of `kind`.
  void (*optim_step)(OptimKind kind, const TensorIter& it, DType dt, const void* options);

  // ---- optional entries: null where a backend lacks them, and the engine then composes the
  // op from the entries above (tensor/ops/reduce.cpp), as ggml's supports_op decides.
  // A reduction of a strided x: the result has spec.keep_shape (contiguous) in the dtype the
  // backend computes it in (the engine casts it to the op's result dtype).
  Tensor (*reduce)(Reduction kind, const Tensor& x, const ReduceSpec& spec, const ReduceArgs& args);
  // The inclusive scan of x along dim d (0-based) into a new tensor of dtype out.
  Tensor (*scan)(ScanKind kind, const Tensor& x, int d, DType out);
  // C (batch..., m, n, contiguous) = alpha * A @ B (+ beta * C with use_beta) for A
  // (a_batch..., m, k) and B (b_batch..., k, n) of C's dtype (any dtype), any strides, batch
  // dims broadcasting to bshape (batch matrices); alpha is not 0 (tensor/ops/linalg.cpp).
  // Without it the engine calls gemm (floating dtypes) or the CPU's on host copies.
  void (*matmul)(Tensor A, Tensor B, Tensor& C, const Dims& bshape, int64_t batch, const Scalar& alpha,
                 const Scalar& beta, bool use_beta);
  // The first k along dim d of the contiguous x in stable order (NaN largest), into values
  // (when defined) and 1-based indices, both of x's shape with k at d. Without it the engine
  // sorts host copies with the CPU's entry (`op` names the op in errors).
  void (*sort)(const char* op, const Tensor& x, int d, int64_t k, bool descending, Tensor& values,
               Tensor& indices);

  // ---- the CPU's own: a kernel written as host code over host memory (a fused CPU loop, a
  // library call), given as a closure over the tensors it reads and writes (`operands`, all
  // of them; the first `reads` it only reads, the rest it may write). Run through the table
  // so that torch.compile records it like any other call: the closure must take nothing from
  // the tensors' data when it is made. Null on devices.
  void (*host)(const char* op, std::span<const Tensor* const> operands, size_t reads, const std::function<void()>& work);

  // ---- graphs (CUDA graphs; null elsewhere): the work queued on the device's stream between
  // graph_begin and graph_end is captured, not run, into a graph that graph_launch queues as
  // one unit. That is the device's one stream: work another thread queues on the device
  // meanwhile would be captured too, so a capture assumes one thread uses the device. graph_end returns null when the capture failed (an
  // entry used something a graph cannot hold); the scratch memory the captured kernels use
  // belongs to the graph until graph_free. torch.compile replays device-only recordings so.
  void (*graph_begin)(int device);
  void* (*graph_end)(int device);
  void (*graph_launch)(void* graph, int device);
  void (*graph_free)(void* graph);
};

// The CPU's table (tensor/cpu/backend.cpp).
extern const DeviceBackend kCpuBackend;
// The CUDA module's table, loading it on first use. Throws tide::Error saying why it is
// unavailable (module not built, no driver, no device).
const DeviceBackend& cuda_backend_table();
// The backend for a device type: an op's checks and TensorIter, then one call here. The
// CPU's is kCpuBackend and CUDA's the module's table, or while torch.compile records, the
// tables that record their calls.
inline const DeviceBackend& backend_for(DeviceType type) {
  if (type == DeviceType::CPU) return *capture::detail::g_cpu_backend.load(std::memory_order_relaxed);
  if (capture::any_recording()) [[unlikely]]
    return capture::detail::recording_device_table();
  return cuda_backend_table();
}
// Runs a CPU kernel written as host code (DeviceBackend::host) on the calling thread; it
// only reads the first `reads` operands.
inline void run_host_kernel(const char* op, std::span<const Tensor* const> operands,
                            const std::function<void()>& work, size_t reads = 0) {
  backend_for(DeviceType::CPU).host(op, operands, reads, work);
}
inline void run_host_kernel(const char* op, std::initializer_list<const Tensor*> operands,
                            const std::function<void()>& work, size_t reads = 0) {
  run_host_kernel(op, std::span<const Tensor* const>(operands.begin(), operands.size()), work, reads);
}
// The backend of a device-resident tensor's device.
inline const DeviceBackend& backend_for(Device d) { return backend_for(d.type); }
// True when the CUDA backend can be loaded and sees at least one device (never throws).
bool cuda_available();
int cuda_device_count();
// Why CUDA is unavailable ("" when it is available).
std::string cuda_unavailable_reason();

}  // namespace tide

// The module's entry point: returns the backend, or null with *why set to a reason.
extern "C" {
using TideCudaBackendFn = const tide::DeviceBackend* (*)(const char** why);
}
