// The device table: where the engine finds the code for a non-CPU device. The CUDA backend
// (a later issue) is a separate shared module that fills one of these when first used;
// until then, and on machines without it, asking for a CUDA tensor is an error that says why.
#pragma once
#include <cstddef>
#include <string>

#include "tensor.hpp"

namespace tide {

struct DeviceBackend {
  const char* name;
  void* (*allocate)(size_t nbytes, int device_index);
  void (*free)(void* ptr, size_t nbytes, int device_index);
  // Copies nbytes between host and device memory (either side may be the device).
  void (*copy_bytes)(void* dst, Device dst_dev, const void* src, Device src_dev, size_t nbytes);
  int (*device_count)();
};

// The backend for a device type, loading it on first use. Throws tide::Error saying why it
// is unavailable (not built, no driver, no device).
const DeviceBackend& backend_for(DeviceType type);
// True when the CUDA backend can be loaded and sees at least one device.
bool cuda_available();
int cuda_device_count();

}  // namespace tide
