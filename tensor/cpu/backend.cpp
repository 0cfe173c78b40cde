// The CPU backend's device table (see cpu/backend.hpp): host memory from the caching
// allocator, work done before each call returns.
#include "backend.hpp"

#include <cstring>

#include "../allocator.hpp"

namespace tide {

namespace {

DeviceMemoryStats host_memory_stats(int) {
  const CpuAllocatorStats s = cpu_allocator_stats();
  return {s.allocated_bytes, s.allocated_bytes + s.cached_bytes, 0};  // the CPU allocator keeps no peak
}

void host_copy_bytes(void* dst, Device, const void* src, Device, size_t nbytes) {
  if (nbytes) std::memcpy(dst, src, nbytes);
}

}  // namespace

const DeviceBackend kCpuBackend = {
    .name = "cpu",
    .device_count = [] { return 1; },
    .allocate = [](size_t nbytes, int) { return cpu_allocate(nbytes); },
    .free = [](void* ptr, size_t nbytes, int) { cpu_free(ptr, nbytes); },
    .memory_stats = host_memory_stats,
    .empty_cache = cpu_empty_cache,
    .synchronize = [](int) {},
    .copy_bytes = host_copy_bytes,
    .check_kernel_errors = [](const char*) {},
    .unary = cpu::unary,
    .binary = cpu::binary,
    .copy = cpu::copy,
    .fill = cpu::fill,
    .where = cpu::where,
    .clamp = cpu::clamp,
    .random = cpu::random,
    .reduce_rows = nullptr,
    .scan_rows = nullptr,
    .gemm = nullptr,
    .set_allow_tf32 = [](bool) {},
    .take = nullptr,
    .put = nullptr,
    .optim_step = cpu::optim_step,
    .reduce = cpu::reduce,
    .scan = cpu::scan,
    .matmul = cpu::matmul,
    .sort = cpu::sort,
    .host = [](const char*, std::span<const Tensor* const>, size_t, const std::function<void()>& work) { work(); },
    .graph_begin = nullptr,  // graphs: CUDA's only (a CPU replay runs its steps)
    .graph_end = nullptr,
    .graph_launch = nullptr,
    .graph_free = nullptr,
};

}  // namespace tide
