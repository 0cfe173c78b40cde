// The module's entry point: the DeviceBackend table of the CUDA backend, or the reason why
// there is no usable CUDA (no driver, a driver too old for this runtime, no device).
#include <string>

#include "backend_impl.cuh"
#include "runtime.cuh"

namespace tide::cuda {

namespace {

// Why cudaGetDeviceCount failed, in words for torch.cuda and CUDA errors.
std::string unavailable_reason(cudaError_t err) {
  if (err == cudaErrorNoDevice) return "no CUDA device (the driver found no GPU)";
  if (err == cudaErrorInsufficientDriver) {
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    if (driver == 0) return "no CUDA driver (libcuda.so.1 could not be loaded; is the NVIDIA driver installed?)";
    return "the CUDA driver (version " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
           ") is older than the CUDA runtime tide was built with (" + std::to_string(runtime / 1000) + "." +
           std::to_string(runtime % 1000 / 10) + ")";
  }
  return std::string("CUDA is not usable: ") + cudaGetErrorString(err);
}

const DeviceBackend kBackend = {
    "cuda",
    device_count,
    allocate,
    free_block,
    memory_stats,
    empty_cache,
    synchronize,
    copy_bytes,
    check_kernel_errors,
    unary,
    binary,
    copy,
    fill,
    where,
    clamp,
    random,
    reduce_rows,
    scan_rows,
    gemm,
    set_allow_tf32,
    take,
    put,
    optim_step,
    nullptr,  // strided reductions and scans: composed from reduce_rows / scan_rows by the engine
    nullptr,
    nullptr,  // strided products: gemm, or the CPU on host copies for integers
    nullptr,  // sort: the CPU's on host copies
    nullptr,  // host kernels: the CPU's only
    graph_begin,
    graph_end,
    graph_launch,
    graph_free,
};

}  // namespace

}  // namespace tide::cuda

extern "C" __attribute__((visibility("default"))) const tide::DeviceBackend* tide_cuda_backend(const char** why) {
  static std::string reason;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();
    reason = tide::cuda::unavailable_reason(err);
  } else if (count == 0) {
    reason = "no CUDA device (the driver found no GPU)";
  } else {
    return &tide::cuda::kBackend;
  }
  if (why) *why = reason.c_str();
  return nullptr;
}
