#include "module_loader.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace tide {

namespace {

// The directory libtide itself was loaded from ("" if unknown).
std::string library_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&open_module), &info) == 0 || !info.dli_fname) return "";
  std::string path = info.dli_fname;
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

}  // namespace

ModuleHandle open_module(const char* file, const char* env_var, bool global) {
  ModuleHandle m;
  const char* env = std::getenv(env_var);
  m.path = env && *env ? env : library_dir() + file;
  m.handle = dlopen(m.path.c_str(), RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
  if (!m.handle) {
    const char* err = dlerror();
    m.error = err ? err : "unknown error";
    m.missing = m.error.find(m.path) != std::string::npos && m.error.find("No such file") != std::string::npos;
  }
  return m;
}

}  // namespace tide
