// The device table: loads the CUDA module (libtide_cuda.so, next to libtide, or the file
// named by TIDE_CUDA_MODULE) with dlopen on first use and keeps it for the process. Every
// failure is remembered with its reason, so that torch.cuda.is_available() says false and a
// CUDA request says why (module not built, runtime libraries missing, no driver, no device).
#include "backend.hpp"

#include <dlfcn.h>

#include <string>

#include "module_loader.hpp"

namespace tide {

namespace {

struct CudaModule {
  const DeviceBackend* backend = nullptr;
  std::string why;
};

CudaModule load_cuda_module() {
  CudaModule m;
  ModuleHandle mod = open_module("libtide_cuda.so", "TIDE_CUDA_MODULE");
  if (!mod.handle) {
    if (mod.missing)
      m.why = "tide was built without the CUDA backend (no " + mod.path + ")";
    else
      m.why = "the CUDA backend module could not be loaded (" + mod.error + ")";
    return m;
  }
  auto entry = reinterpret_cast<TideCudaBackendFn>(dlsym(mod.handle, "tide_cuda_backend"));
  if (!entry) {
    m.why = "the CUDA backend module " + mod.path + " has no entry point tide_cuda_backend";
    return m;
  }
  const char* why = nullptr;
  m.backend = entry(&why);
  if (!m.backend) m.why = why ? why : "the CUDA backend found no usable device";
  return m;
}

const CudaModule& cuda_module() {
  static const CudaModule* m = new CudaModule(load_cuda_module());  // never unloaded
  return *m;
}

}  // namespace

const DeviceBackend& cuda_backend_table() {
  const CudaModule& m = cuda_module();
  TIDE_CHECK(m.backend, "cuda: CUDA is not available: ", m.why);
  return *m.backend;
}

bool cuda_available() { return cuda_module().backend && cuda_module().backend->device_count() > 0; }

int cuda_device_count() { return cuda_module().backend ? cuda_module().backend->device_count() : 0; }

std::string cuda_unavailable_reason() { return cuda_module().why; }

}  // namespace tide
