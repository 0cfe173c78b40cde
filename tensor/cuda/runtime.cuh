// The CUDA backend's runtime: checked CUDA calls, the per-device state (one non-blocking
// stream, the kernel error flag, pinned staging buffers), transfers, and the caching
// allocator. Everything here is host code shared by the kernel files of tensor/cuda/.
//
// Nothing in this module is ever destroyed: the per-device state and the allocator live until
// the process ends, so that no CUDA call runs from a static destructor after the driver may
// already be gone.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "../backend.hpp"

namespace tide::cuda {

// Throws tide::Error "cuda: <what>: <the CUDA error string>".
[[noreturn]] void fail_cuda(const char* what, cudaError_t err);
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) fail_cuda(what, err);
}
// After a kernel launch: throws "<op>: cuda: kernel launch failed: <error>" if it did not start.
void check_launch(const char* op);

// The number of CUDA devices (queried once).
int device_count();
// Makes `device` current on this thread (cudaSetDevice only when it changes).
void set_device(int device);
// The device's stream, after making the device current.
cudaStream_t stream_for(int device);
// The device a device pointer belongs to (no CUDA call when there is one device).
int device_of(const void* ptr);
// The device's number of multiprocessors (sizes grids of reductions).
int sm_count(int device);

// The first out-of-range offset a take/put kernel saw (device memory, one per device).
struct KernelErrorFlag {
  int raised;     // 0 until a kernel flags an error; set once with atomicCAS
  int unused;
  long long value;   // the offending offset
  long long extent;  // the number of elements of the tensor it indexed
};
// The device's error flag (allocated and zeroed on first use).
KernelErrorFlag* error_flag(int device);

void synchronize(int device);
void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes);
void check_kernel_errors(const char* op);

// ---- the caching allocator (allocator.cu)
void* allocate(size_t nbytes, int device);
void free_block(void* ptr, size_t nbytes, int device) noexcept;
DeviceMemoryStats memory_stats(int device);
void empty_cache();

// ---- CUDA graphs (graph.cu)
void graph_begin(int device);
void* graph_end(int device);
void graph_launch(void* graph, int device);
void graph_free(void* graph);
// While this thread captures a graph, a scratch block given back belongs to the graph (which
// frees it with itself): returns true. Otherwise false, and the caller frees it.
bool keep_for_graph(void* ptr, size_t nbytes, int device) noexcept;

// A device scratch buffer from the caching allocator, returned to it when the scope ends. The
// work queued on the device's stream before the return still owns it, which is safe because
// every op of a device runs on its one stream. Under a graph capture the graph keeps it.
class ScratchBuffer {
 public:
  ScratchBuffer(size_t nbytes, int device) : ptr_(allocate(nbytes, device)), nbytes_(nbytes), device_(device) {}
  ~ScratchBuffer() {
    if (!keep_for_graph(ptr_, nbytes_, device_)) free_block(ptr_, nbytes_, device_);
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_;
  size_t nbytes_;
  int device_;
};

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace tide::cuda
