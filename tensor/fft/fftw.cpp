// The FFT module, libtide_fft.so: the table of fft_module.h on FFTW 3 (double and single
// precision). Built only when FFTW is found (meson option -Dfft); links FFTW, not libtide.
//
// Each call becomes one FFTW guru64 plan: a rank-1 transform along the axis with the batch
// dims as FFTW's "howmany" dims, so any strides and any batch run without a copy. Plans are
// made with FFTW_ESTIMATE (microseconds to plan, no trial runs that would overwrite the
// arrays) and cached by everything that makes them differ: kind, precision, sign, dims and
// strides, whether the transform is in place, and the arrays' SIMD alignment
// (fftw_alignment_of), since FFTW's new-array execute functions require the same alignment
// as the arrays the plan was made for. FFTW's planner is not thread-safe, so planning and
// destroying plans hold one mutex; executing a plan is thread-safe in FFTW and holds none.
#include <fftw3.h>

#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "fft_module.h"

namespace {

// FFTW's functions for one precision (fftw_* for double, fftwf_* for float).
template <typename R>
struct Fftw;

template <>
struct Fftw<double> {
  using Plan = fftw_plan;
  using Complex = fftw_complex;
  using IoDim = fftw_iodim64;
  static Plan c2c(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out, int sign) {
    return fftw_plan_guru64_dft(rank, d, hr, h, static_cast<Complex*>(in), static_cast<Complex*>(out), sign,
                                FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out) {
    return fftw_plan_guru64_dft_r2c(rank, d, hr, h, static_cast<double*>(in), static_cast<Complex*>(out),
                                    FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out) {
    return fftw_plan_guru64_dft_c2r(rank, d, hr, h, static_cast<Complex*>(in), static_cast<double*>(out),
                                    FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
  }
  static void run(int kind, Plan p, void* in, void* out) {
    if (kind == TIDE_FFT_C2C) fftw_execute_dft(p, static_cast<Complex*>(in), static_cast<Complex*>(out));
    else if (kind == TIDE_FFT_R2C) fftw_execute_dft_r2c(p, static_cast<double*>(in), static_cast<Complex*>(out));
    else fftw_execute_dft_c2r(p, static_cast<Complex*>(in), static_cast<double*>(out));
  }
  static int alignment(void* p) { return fftw_alignment_of(static_cast<double*>(p)); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};

template <>
struct Fftw<float> {
  using Plan = fftwf_plan;
  using Complex = fftwf_complex;
  using IoDim = fftwf_iodim64;
  static Plan c2c(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out, int sign) {
    return fftwf_plan_guru64_dft(rank, d, hr, h, static_cast<Complex*>(in), static_cast<Complex*>(out), sign,
                                 FFTW_ESTIMATE);
  }
  static Plan r2c(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out) {
    return fftwf_plan_guru64_dft_r2c(rank, d, hr, h, static_cast<float*>(in), static_cast<Complex*>(out),
                                     FFTW_ESTIMATE);
  }
  static Plan c2r(int rank, const IoDim* d, int hr, const IoDim* h, void* in, void* out) {
    return fftwf_plan_guru64_dft_c2r(rank, d, hr, h, static_cast<Complex*>(in), static_cast<float*>(out),
                                     FFTW_ESTIMATE | FFTW_DESTROY_INPUT);
  }
  static void run(int kind, Plan p, void* in, void* out) {
    if (kind == TIDE_FFT_C2C) fftwf_execute_dft(p, static_cast<Complex*>(in), static_cast<Complex*>(out));
    else if (kind == TIDE_FFT_R2C) fftwf_execute_dft_r2c(p, static_cast<float*>(in), static_cast<Complex*>(out));
    else fftwf_execute_dft_c2r(p, static_cast<Complex*>(in), static_cast<float*>(out));
  }
  static int alignment(void* p) { return fftwf_alignment_of(static_cast<float*>(p)); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

// Planning and destroying plans (FFTW's planner is global state), and the cache. Recursive:
// a plan released while the cache is locked (an eviction) destroys itself under it.
std::recursive_mutex planner_mutex;

// A plan of either precision; destroyed under the planner mutex when its last user is done,
// so a plan evicted from the cache while another thread executes it stays valid until then.
struct Plan {
  Plan(int precision_, void* plan_) : precision(precision_), plan(plan_) {}
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  int precision;
  void* plan;
  ~Plan() {
    std::lock_guard<std::recursive_mutex> lock(planner_mutex);
    if (precision == TIDE_FFT_DOUBLE) Fftw<double>::destroy(static_cast<fftw_plan>(plan));
    else Fftw<float>::destroy(static_cast<fftwf_plan>(plan));
  }
};

// At most this many plans are kept; a new one beyond evicts the oldest.
constexpr size_t kMaxPlans = 64;

struct Cache {
  std::map<std::vector<int64_t>, std::pair<uint64_t, std::shared_ptr<Plan>>> plans;  // key -> (age, plan)
  uint64_t clock = 0;
};
Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: plans may outlive static destructors' order
  return *c;
}

void set_error(char* err, size_t errlen, const char* msg) {
  if (err && errlen > 0) std::snprintf(err, errlen, "%s", msg);
}

// The plan for this problem, made and cached on first use. nullptr when FFTW cannot plan it.
template <typename R>
std::shared_ptr<Plan> plan_for(int kind, int sign, const TideFftDim& axis, int batch_rank, const TideFftDim* batch,
                               void* in, void* out) {
  std::vector<int64_t> key = {kind, sign, int64_t(sizeof(R)), in == out, Fftw<R>::alignment(in),
                              Fftw<R>::alignment(out), axis.n, axis.in_stride, axis.out_stride};
  for (int i = 0; i < batch_rank; ++i) key.insert(key.end(), {batch[i].n, batch[i].in_stride, batch[i].out_stride});

  std::lock_guard<std::recursive_mutex> lock(planner_mutex);
  Cache& c = cache();
  auto it = c.plans.find(key);
  if (it != c.plans.end()) {
    it->second.first = ++c.clock;
    return it->second.second;
  }
  using IoDim = typename Fftw<R>::IoDim;
  IoDim dim = {axis.n, axis.in_stride, axis.out_stride};
  std::vector<IoDim> howmany(static_cast<size_t>(batch_rank));
  for (int i = 0; i < batch_rank; ++i) howmany[size_t(i)] = {batch[i].n, batch[i].in_stride, batch[i].out_stride};
  typename Fftw<R>::Plan p;
  if (kind == TIDE_FFT_C2C) p = Fftw<R>::c2c(1, &dim, batch_rank, howmany.data(), in, out, sign);
  else if (kind == TIDE_FFT_R2C) p = Fftw<R>::r2c(1, &dim, batch_rank, howmany.data(), in, out);
  else p = Fftw<R>::c2r(1, &dim, batch_rank, howmany.data(), in, out);
  if (!p) return nullptr;
  std::shared_ptr<Plan> plan;
  try {
    plan = std::make_shared<Plan>(sizeof(R) == sizeof(double) ? TIDE_FFT_DOUBLE : TIDE_FFT_FLOAT, static_cast<void*>(p));
  } catch (...) {
    Fftw<R>::destroy(p);
    throw;
  }
  if (c.plans.size() >= kMaxPlans) {
    auto oldest = c.plans.begin();
    for (auto i = c.plans.begin(); i != c.plans.end(); ++i)
      if (i->second.first < oldest->second.first) oldest = i;
    c.plans.erase(oldest);
  }
  c.plans.emplace(std::move(key), std::make_pair(++c.clock, plan));
  return plan;
}

template <typename R>
int execute_as(int kind, int sign, TideFftDim axis, int batch_rank, const TideFftDim* batch, void* in, void* out,
               char* err, size_t errlen) {
  std::shared_ptr<Plan> plan = plan_for<R>(kind, sign, axis, batch_rank, batch, in, out);
  if (!plan) {
    set_error(err, errlen, "FFTW could not plan this transform");
    return -1;
  }
  Fftw<R>::run(kind, static_cast<typename Fftw<R>::Plan>(plan->plan), in, out);
  return 0;
}

int execute(int kind, int precision, int sign, TideFftDim axis, int batch_rank, const TideFftDim* batch, void* in,
            void* out, char* err, size_t errlen) {
  if (kind < TIDE_FFT_C2C || kind > TIDE_FFT_C2R) return set_error(err, errlen, "unknown transform kind"), -1;
  if (precision != TIDE_FFT_FLOAT && precision != TIDE_FFT_DOUBLE)
    return set_error(err, errlen, "unknown precision"), -1;
  if (sign != -1 && sign != 1) return set_error(err, errlen, "sign must be -1 or +1"), -1;
  if ((kind == TIDE_FFT_R2C && sign != -1) || (kind == TIDE_FFT_C2R && sign != 1))
    return set_error(err, errlen, "r2c is forward (sign -1) and c2r backward (+1)"), -1;
  if (axis.n < 1) return set_error(err, errlen, "the transform length must be at least 1"), -1;
  if (batch_rank < 0 || (batch_rank > 0 && !batch)) return set_error(err, errlen, "bad batch dims"), -1;
  for (int i = 0; i < batch_rank; ++i)
    if (batch[i].n < 1) return set_error(err, errlen, "a batch dim has length 0"), -1;
  if (!in || !out) return set_error(err, errlen, "null buffer"), -1;
  if (in == out && kind != TIDE_FFT_C2C) return set_error(err, errlen, "r2c and c2r run out of place"), -1;
  try {
    return precision == TIDE_FFT_DOUBLE ? execute_as<double>(kind, sign, axis, batch_rank, batch, in, out, err, errlen)
                                        : execute_as<float>(kind, sign, axis, batch_rank, batch, in, out, err, errlen);
  } catch (const std::bad_alloc&) {
    set_error(err, errlen, "out of memory while planning the transform");
    return -1;
  }
}

size_t cached_plans() {
  std::lock_guard<std::recursive_mutex> lock(planner_mutex);
  return cache().plans.size();
}

const TideFftEngine kEngine = {TIDE_FFT_ABI_VERSION, fftw_version, execute, cached_plans};

}  // namespace

extern "C" __attribute__((visibility("default"))) const TideFftEngine* tide_fft_engine(void) { return &kEngine; }
