#include "engine.hpp"

#include <dlfcn.h>

#include "../error.hpp"
#include "../module_loader.hpp"

namespace tide::fft {

namespace {

struct FftModule {
  const TideFftEngine* engine = nullptr;
  std::string why;
};

FftModule load() {
  FftModule m;
  ModuleHandle mod = open_module("libtide_fft.so", "TIDE_FFT_MODULE");
  if (!mod.handle) {
    m.why = mod.missing ? "the FFT module libtide_fft.so is not available (install libfftw3-dev and rebuild)"
                        : "the FFT module libtide_fft.so could not be loaded (" + mod.error + ")";
    return m;
  }
  auto entry = reinterpret_cast<TideFftEntryFn>(dlsym(mod.handle, "tide_fft_engine"));
  const TideFftEngine* e = entry ? entry() : nullptr;
  if (!e || e->abi_version != TIDE_FFT_ABI_VERSION) {
    m.why = "the FFT module " + mod.path + " does not match this tide (rebuild it)";
    return m;
  }
  m.engine = e;
  return m;
}

const FftModule& module() {
  static const FftModule* m = new FftModule(load());  // loaded once, never unloaded
  return *m;
}

}  // namespace

bool available() { return module().engine != nullptr; }

std::string unavailable_reason() { return module().why; }

void execute(const char* op, TideFftKind kind, TideFftPrecision precision, int sign, const TideFftDim& axis,
             const std::vector<TideFftDim>& batch, void* in, void* out) {
  const FftModule& m = module();
  TIDE_CHECK(m.engine, op, ": ", m.why);
  char err[256] = "";
  int rc = m.engine->execute(kind, precision, sign, axis, int(batch.size()), batch.data(), in, out, err, sizeof err);
  TIDE_CHECK(rc == 0, op, ": ", err);
}

size_t cached_plans() { return available() ? module().engine->cached_plans() : 0; }

}  // namespace tide::fft
