// The device table: loads the CUDA module (libtide_cuda.so, next to libtide, or the file
// named by TIDE_CUDA_MODULE) with dlopen on first use and keeps it for the process. Every
// failure is remembered with its reason, so that torch.cuda.is_available() says false and a
// CUDA request says why (module not built, runtime libraries missing, no driver, no device).
#include "backend.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

namespace tide {

namespace {

struct CudaModule {
  const DeviceBackend* backend = nullptr;
  std::string why;
};

// The directory libtide itself was loaded from ("" if unknown).
std::string library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&cuda_available), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

CudaModule load_cuda_module() {
  CudaModule m;
  const char* env = std::getenv("TIDE_CUDA_MODULE");
  std::string path = env && *env ? env : library_dir() + "libtide_cuda.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* err = dlerror();
    std::string e = err ? err : "unknown error";
    if (e.find(path) != std::string::npos && e.find("No such file") != std::string::npos)
      m.why = "tide was built without the CUDA backend (no " + path + ")";
    else
      m.why = "the CUDA backend module could not be loaded (" + e + ")";
    return m;
  }
  auto entry = reinterpret_cast<TideCudaBackendFn>(dlsym(handle, "tide_cuda_backend"));
  if (!entry) {
    m.why = "the CUDA backend module " + path + " has no entry point tide_cuda_backend";
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

const DeviceBackend& backend_for(DeviceType type) {
  TIDE_ASSERT(type == DeviceType::CUDA);
  const CudaModule& m = cuda_module();
  TIDE_CHECK(m.backend, "cuda: CUDA is not available: ", m.why);
  return *m.backend;
}

bool cuda_available() { return cuda_module().backend && cuda_module().backend->device_count() > 0; }

int cuda_device_count() { return cuda_module().backend ? cuda_module().backend->device_count() : 0; }

std::string cuda_unavailable_reason() { return cuda_module().why; }

}  // namespace tide
