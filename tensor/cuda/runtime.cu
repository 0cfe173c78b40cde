// Per-device state, checked calls, synchronisation, transfers and the kernel error flag.
#include "runtime.cuh"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>

namespace tide::cuda {

namespace {

constexpr int kMaxDevices = 64;
constexpr size_t kStagingBytes = size_t(4) << 20;   // each of the two pinned staging buffers
constexpr size_t kStagedCopyMin = size_t(1) << 20;  // host-to-device copies above this are staged

// What a device needs beyond its memory: created on its first use, never destroyed.
struct DeviceState {
  cudaStream_t stream = nullptr;
  int sms = 1;
  KernelErrorFlag* flag = nullptr;  // device memory
  // Large host-to-device copies: the memcpy into one pinned buffer overlaps the DMA of the
  // other; each buffer's event marks when its last DMA is done.
  std::mutex staging_mutex;
  char* staging[2] = {nullptr, nullptr};
  cudaEvent_t staging_free[2] = {nullptr, nullptr};
};

std::once_flag g_device_once[kMaxDevices];
std::atomic<DeviceState*> g_devices[kMaxDevices];
thread_local int t_current_device = -1;

void check_device_index(int device) {
  TIDE_CHECK(device >= 0 && device < device_count(), "cuda: device ", device, " does not exist (",
             device_count(), " CUDA device", device_count() == 1 ? "" : "s", " found)");
}

// The state of a device, created (stream, error flag) on its first use.
DeviceState& state(int device) {
  check_device_index(device);
  std::call_once(g_device_once[device], [device] {
    set_device(device);
    auto* s = new DeviceState;
    check(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaDeviceGetAttribute(&s->sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    check(cudaMalloc(reinterpret_cast<void**>(&s->flag), sizeof(KernelErrorFlag)), "cudaMalloc (error flag)");
    check(cudaMemsetAsync(s->flag, 0, sizeof(KernelErrorFlag), s->stream), "cudaMemsetAsync (error flag)");
    check(cudaStreamSynchronize(s->stream), "cudaStreamSynchronize (error flag)");
    g_devices[device].store(s, std::memory_order_release);
  });
  return *g_devices[device].load(std::memory_order_acquire);
}

// Copies a large host buffer to the device through the two pinned staging buffers.
void staged_host_to_device(char* dst, const char* src, size_t nbytes, int device) {
  DeviceState& s = state(device);
  std::lock_guard<std::mutex> lock(s.staging_mutex);
  set_device(device);
  for (int k = 0; k < 2; ++k) {
    if (!s.staging[k])
      check(cudaHostAlloc(reinterpret_cast<void**>(&s.staging[k]), kStagingBytes, cudaHostAllocDefault),
            "cudaHostAlloc (staging buffer)");
    if (!s.staging_free[k])
      check(cudaEventCreateWithFlags(&s.staging_free[k], cudaEventDisableTiming), "cudaEventCreate");
  }
  int k = 0;
  for (size_t done = 0; done < nbytes; done += kStagingBytes, k ^= 1) {
    const size_t len = std::min(kStagingBytes, nbytes - done);
    check(cudaEventSynchronize(s.staging_free[k]), "cudaEventSynchronize (staging buffer)");
    std::memcpy(s.staging[k], src + done, len);
    check(cudaMemcpyAsync(dst + done, s.staging[k], len, cudaMemcpyHostToDevice, s.stream),
          "cudaMemcpyAsync (host to device)");
    check(cudaEventRecord(s.staging_free[k], s.stream), "cudaEventRecord (staging buffer)");
  }
}

}  // namespace

void fail_cuda(const char* what, cudaError_t err) {
  cudaGetLastError();  // clears a non-sticky error so the next call starts clean
  TIDE_FAIL("cuda: ", what, ": ", cudaGetErrorString(err));
}

void check_launch(const char* op) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) TIDE_FAIL(op, ": cuda: kernel launch failed: ", cudaGetErrorString(err));
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return std::min(n, kMaxDevices);
  }();
  return count;
}

void set_device(int device) {
  if (t_current_device == device) return;
  check(cudaSetDevice(device), "cudaSetDevice");
  t_current_device = device;
}

cudaStream_t stream_for(int device) {
  cudaStream_t s = state(device).stream;
  set_device(device);
  return s;
}

int device_of(const void* ptr) {
  if (device_count() == 1) return 0;
  cudaPointerAttributes attr;
  check(cudaPointerGetAttributes(&attr, ptr), "cudaPointerGetAttributes");
  TIDE_CHECK(attr.type == cudaMemoryTypeDevice, "cuda: a kernel was given a pointer that is not device memory");
  return attr.device;
}

int sm_count(int device) { return state(device).sms; }

KernelErrorFlag* error_flag(int device) { return state(device).flag; }

void synchronize(int device) {
  cudaStream_t s = stream_for(device);
  check(cudaStreamSynchronize(s), "synchronize");
}

// Host-to-device copies return once the source may be reused; device-to-host copies wait for
// the queued work and the copy itself; copies between devices wait for both streams.
void copy_bytes(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes) {
  if (nbytes == 0) return;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (dst_dev.is_cpu() && src_dev.is_cpu()) {
    std::memcpy(d, s, nbytes);
  } else if (src_dev.is_cpu()) {
    if (nbytes > kStagedCopyMin) {
      staged_host_to_device(d, s, nbytes, dst_dev.index);
    } else {
      cudaStream_t st = stream_for(dst_dev.index);
      check(cudaMemcpyAsync(d, s, nbytes, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync (host to device)");
    }
  } else if (dst_dev.is_cpu()) {
    cudaStream_t st = stream_for(src_dev.index);
    check(cudaMemcpyAsync(d, s, nbytes, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync (device to host)");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize (device to host copy)");
  } else if (dst_dev.index == src_dev.index) {
    cudaStream_t st = stream_for(dst_dev.index);
    check(cudaMemcpyAsync(d, s, nbytes, cudaMemcpyDeviceToDevice, st), "cudaMemcpyAsync (device to device)");
  } else {
    synchronize(src_dev.index);
    cudaStream_t st = stream_for(dst_dev.index);
    check(cudaMemcpyPeerAsync(d, dst_dev.index, s, src_dev.index, nbytes, st), "cudaMemcpyPeerAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize (copy between devices)");
  }
}

// Reads the flag of every device in use; the first raised one becomes the error (1-based
// position, as scripts count) and is cleared.
void check_kernel_errors(const char* op) {
  for (int dev = 0; dev < device_count(); ++dev) {
    DeviceState* state_ptr = g_devices[dev].load(std::memory_order_acquire);
    if (!state_ptr) continue;
    DeviceState& s = *state_ptr;
    set_device(dev);
    KernelErrorFlag host{};
    check(cudaMemcpyAsync(&host, s.flag, sizeof host, cudaMemcpyDeviceToHost, s.stream),
          "cudaMemcpyAsync (kernel error flag)");
    check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize (kernel error flag)");
    if (!host.raised) continue;
    check(cudaMemsetAsync(s.flag, 0, sizeof(KernelErrorFlag), s.stream), "cudaMemsetAsync (kernel error flag)");
    check(cudaStreamSynchronize(s.stream), "cudaStreamSynchronize (kernel error flag)");
    TIDE_FAIL(op, ": index ", host.value + 1, " is out of range for a tensor of ", host.extent, " elements");
  }
}

}  // namespace tide::cuda
