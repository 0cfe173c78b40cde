// Optional engines built as their own shared modules next to libtide (the CUDA backend
// libtide_cuda.so, the FFT module libtide_fft.so, torch.distributed's libtide_mpi.so and
// libtide_nccl.so) are opened here with dlopen, on first use,
// so libtide and the tide program never link them or their libraries.
#pragma once
#include <string>

namespace tide {

struct ModuleHandle {
  void* handle = nullptr;  // dlopen's handle (never closed), or nullptr
  std::string path;        // the file tried
  bool missing = false;    // no such file (the module was not built)
  std::string error;       // dlerror's text when it failed
};

// Opens `file` from the directory libtide was loaded from, or the path in the environment
// variable env_var when that is set and not empty. `global`: the module's libraries' symbols
// become visible to the libraries they load in turn (OpenMPI's components need libmpi's).
ModuleHandle open_module(const char* file, const char* env_var, bool global = false);

}  // namespace tide
