// Creation ops (see creation.hpp); random fills draw from a Generator and run on the
// tensor's backend (tensor/cpu/random.cpp on the CPU).
#include "creation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <vector>

#include "../backend.hpp"
#include "../overlap.hpp"
#include "../parallel.hpp"
#include "../scalar_fit.hpp"
#include "elementwise.hpp"

namespace tide::ops {

namespace {

std::string num_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string scalar_str(const Scalar& s) {
  switch (s.kind) {
    case Scalar::Bool: return s.i ? "true" : "false";
    case Scalar::Int: return std::to_string(s.i);
    default: return num_str(s.f);
  }
}

Tensor make(const char* op, const Dims& shape, DType dtype, Device device) {
  check_creation_device(op, device);
  try {
    return Tensor::empty(shape, dtype, device, op);
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(std::string(op) + ": " + e.what());
  }
}

// The empty family hands out memory as it comes from the allocator, except for bool: a byte
// other than 0 or 1 read as bool is undefined behaviour (and prints as neither), so bool
// empties are zero-filled.
Tensor make_uninitialised(const char* op, const Dims& shape, DType dtype, Device device) {
  Tensor t = make(op, shape, dtype, device);
  if (dtype == DType::Bool) fill_(t, Scalar(false));
  return t;
}

void check_float_dtype(const char* op, DType dtype) {
  TIDE_CHECK(is_floating(dtype), op, ": expected a floating-point dtype, got ", dtype_name(dtype));
}

// (A draw from a generator of the script's own is one torch.compile cannot replay: its replays
// continue the thread's default generator.)
Generator& gen_or_default(Generator* gen) {
  if (gen && gen != &default_generator() && capture::any_recording())
    capture::mark_broken("a draw from a torch.Generator of the script's own (not captured)");
  return gen ? *gen : default_generator();
}

// Fills a contiguous CPU tensor `c` through `fill(scalar_t* data, n)`, or, when t is not
// contiguous, fills a contiguous temporary and copies it in (so the values follow the
// row-major element order whatever the layout). Each element gets its own value, so t may
// not have elements sharing one address.
template <typename Fill>
void fill_in_place(const char* op, Tensor& t, const Fill& fill) {
  check_no_internal_overlap(op, t);
  if (t.is_contiguous()) {
    fill(t);
    t.storage()->bump_version();
  } else {
    Tensor tmp = Tensor::empty(t.sizes(), t.dtype(), t.device());
    fill(tmp);
    copy_(t, tmp);
  }
}

template <typename T>
bool fits_integer(int64_t lo, int64_t hi_inclusive) {
  if constexpr (std::is_same_v<T, bool>) {
    return lo >= 0 && hi_inclusive <= 1;
  } else if constexpr (std::is_integral_v<T>) {
    return lo >= int64_t(std::numeric_limits<T>::min()) &&
           hi_inclusive <= int64_t(std::numeric_limits<T>::max());
  } else {
    return true;
  }
}

}  // namespace

void check_creation_device(const char* op, Device device) {
  if (device.is_cpu()) return;
  const std::string why = cuda_unavailable_reason();
  TIDE_CHECK(why.empty(), op, ": CUDA is not available: ", why);
  const int count = cuda_device_count();
  TIDE_CHECK(device.index < count, op, ": device ", device.str(), " does not exist (", count,
             count == 1 ? " CUDA device" : " CUDA devices", ")");
}

Tensor empty(const Dims& shape, DType dtype, Device device) {
  return make_uninitialised("empty", shape, dtype, device);
}

Tensor zeros(const Dims& shape, DType dtype, Device device) {
  Tensor t = make("zeros", shape, dtype, device);
  // (While torch.compile records, the fill must be a device-table call to be replayed.)
  if (!device.is_cpu() || capture::any_recording()) return fill_(t, Scalar(int64_t(0)));
  // Zero is all-zero bits in every dtype, half types included.
  char* p = static_cast<char*>(t.data_ptr());
  size_t nbytes = t.nbytes();
  parallel_for(0, int64_t(nbytes), int64_t(1) << 20, [p](int64_t b, int64_t e) {
    std::memset(p + b, 0, size_t(e - b));
  });
  return t;
}

Tensor ones(const Dims& shape, DType dtype, Device device) {
  Tensor t = make("ones", shape, dtype, device);
  fill_(t, Scalar(int64_t(1)));
  return t;
}

Tensor full(const Dims& shape, const Scalar& value, std::optional<DType> dtype, Device device) {
  check_scalar_fits("full", value, dtype ? *dtype : value.natural_dtype());
  Tensor t = make("full", shape, dtype ? *dtype : value.natural_dtype(), device);
  fill_(t, value);
  return t;
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step,
              std::optional<DType> dtype, Device device, DType float_dtype) {
  const bool all_int = start.kind != Scalar::Float && end.kind != Scalar::Float && step.kind != Scalar::Float;
  const DType dt = dtype ? *dtype : (all_int ? DType::Int64 : float_dtype);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  TIDE_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", scalar_str(start),
             " -> ", scalar_str(end));
  TIDE_CHECK(std::isfinite(st) && st != 0, "arange: step must be nonzero and finite, got ",
             scalar_str(step));
  TIDE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
             "arange: upper bound and step sign are inconsistent (start=", scalar_str(start),
             ", end=", scalar_str(end), ", step=", scalar_str(step), ")");
  int64_t n;
  if (all_int) {
    __int128 diff = __int128(end.to_int()) - start.to_int();
    __int128 stp = step.to_int();
    __int128 len = stp > 0 ? (diff + stp - 1) / stp : (diff + stp + 1) / stp;
    TIDE_CHECK(len <= std::numeric_limits<int64_t>::max(), "arange: too many elements");
    n = int64_t(len);
  } else {
    double len = std::ceil((e - s) / st);
    TIDE_CHECK(len < 9.2e18, "arange: too many elements (", num_str(len), ")");
    n = int64_t(len);
  }
  if (!device.is_cpu()) {  // ranges, eye and randperm are made on the host and moved
    check_creation_device("arange", device);
    return arange(start, end, step, dt, Device{}, float_dtype).to_device(device);
  }
  Tensor t = make("arange", Dims{n}, dt, device);
  // A host kernel of the CPU's table: its values depend on the scalars alone, so
  // torch.compile records and replays it (the positions gathers on devices use).
  run_host_kernel("arange", {&t}, [t, all_int, start, step, s, st, n, dt] {
    if (all_int && !is_floating(dt)) {
      const int64_t s0 = start.to_int(), d = step.to_int();
      TIDE_DISPATCH_ALL(dt, "arange", [&] {
        scalar_t* p = t.data<scalar_t>();
        parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t en) {
          for (int64_t i = b; i < en; ++i) p[i] = scalar_t(int64_t(uint64_t(s0) + uint64_t(i) * uint64_t(d)));
        });
      });
    } else {
      // Computed in double (PyTorch's accumulate type on the CPU) and cast.
      TIDE_DISPATCH_ALL(dt, "arange", [&] {
        scalar_t* p = t.data<scalar_t>();
        parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t en) {
          for (int64_t i = b; i < en; ++i) {
            double v = s + double(i) * st;
            if constexpr (std::is_integral_v<scalar_t> && !std::is_same_v<scalar_t, bool>)
              p[i] = scalar_t(int64_t(v));
            else if constexpr (std::is_same_v<scalar_t, bool>)
              p[i] = v != 0;
            else
              p[i] = scalar_t(compute_t<scalar_t>(v));
          }
        });
      });
    }
  });
  return t;
}

Tensor linspace(double start, double end, int64_t steps, DType dtype, Device device) {
  TIDE_CHECK(steps >= 0, "linspace: number of steps must be non-negative, got ", steps);
  TIDE_CHECK(!std::isnan(start) && !std::isnan(end), "linspace: start and end must not be nan, got ",
             num_str(start), " and ", num_str(end));
  if (!device.is_cpu()) {
    check_creation_device("linspace", device);
    return linspace(start, end, steps, dtype, Device{}).to_device(device);
  }
  Tensor t = make("linspace", Dims{steps}, dtype, device);
  if (steps == 0) return t;
  // PyTorch's CPU formula: step in the dtype's arithmetic (float for float32 and the half
  // types, double for float64 and integers), the first half counted up from start, the
  // second half down from end, so that both ends are exact.
  run_host_kernel("linspace", {&t}, [t, start, end, steps, dtype] {
    TIDE_DISPATCH_ALL(dtype, "linspace", [&] {
      using acc = std::conditional_t<std::is_same_v<scalar_t, float> || is_half_v<scalar_t>, float, double>;
      scalar_t* p = t.data<scalar_t>();
      const acc a = acc(start), z = acc(end);
      const acc step = steps > 1 ? (z - a) / acc(steps - 1) : acc(0);
      const int64_t half = steps / 2;
      parallel_for(0, steps, kParallelGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          acc v = i < half ? a + step * acc(i) : z - step * acc(steps - i - 1);
          if (steps == 1) v = a;
          if constexpr (std::is_same_v<scalar_t, bool>) p[i] = v != 0;
          else if constexpr (std::is_integral_v<scalar_t>) p[i] = scalar_t(int64_t(v));
          else p[i] = scalar_t(v);
        }
      });
    });
  });
  return t;
}

Tensor eye(int64_t n, int64_t m, DType dtype, Device device, int64_t k) {
  if (m < 0) m = n;
  TIDE_CHECK(n >= 0, "eye: n must be non-negative, got ", n);
  if (!device.is_cpu()) {
    check_creation_device("eye", device);
    return eye(n, m, dtype, Device{}, k).to_device(device);
  }
  check_extent("eye", Dims{n, m}, dtype);
  Tensor t = zeros(Dims{n, m}, dtype, device);
  // Only the rows whose column i + k lies in [0, m): the loop never runs over a huge n of an
  // empty result (computed in 128 bits, as k may be any int64).
  const int64_t first = int64_t(std::clamp<__int128>(-__int128(k), 0, n));
  const int64_t last = int64_t(std::clamp<__int128>(__int128(m) - k, 0, n));
  run_host_kernel("eye", {&t}, [t, first, last, m, k, dtype] {
    TIDE_DISPATCH_ALL(dtype, "eye", [&] {
      scalar_t* p = t.data<scalar_t>();
      const scalar_t one = scalar_t(1);
      for (int64_t i = first; i < last; ++i) p[i * m + i + k] = one;
    });
  });
  return t;
}

Tensor& uniform_(Tensor& t, double a, double b, Generator* gen) {
  check_defined(t, "uniform_");
  check_float_dtype("uniform_", t.dtype());
  TIDE_CHECK(std::isfinite(a) && std::isfinite(b), "uniform_: bounds must be finite, got a=",
             num_str(a), ", b=", num_str(b));
  TIDE_CHECK(a <= b, "uniform_: expects a <= b, got a=", num_str(a), ", b=", num_str(b));
  fill_in_place("uniform_", t, [&](Tensor& c) {
    const int64_t n = c.numel();
    int words = 0;
    TIDE_DISPATCH_FLOAT(c.dtype(), "uniform_", [&] { words = philox::uniform_words<scalar_t>(); });
    Generator::Draw d = gen_or_default(gen).reserve(n, words);
    backend_for(c.device()).random(RandomKind::Uniform, c.address(), c.dtype(), n, d.seed, d.offset, {a, b});
  });
  return t;
}

Tensor& normal_(Tensor& t, double mean, double std, Generator* gen) {
  check_defined(t, "normal_");
  check_float_dtype("normal_", t.dtype());
  TIDE_CHECK(std >= 0, "normal_: expects std >= 0, got std=", num_str(std));
  fill_in_place("normal_", t, [&](Tensor& c) {
    const int64_t n = c.numel();
    Generator::Draw d = gen_or_default(gen).reserve(n, 2);  // one block per pair
    backend_for(c.device()).random(RandomKind::Normal, c.address(), c.dtype(), n, d.seed, d.offset, {mean, std});
  });
  return t;
}

Tensor rand(const Dims& shape, DType dtype, Device device, Generator* gen) {
  check_float_dtype("rand", dtype);
  Tensor t = make("rand", shape, dtype, device);
  return uniform_(t, 0.0, 1.0, gen);
}

Tensor randn(const Dims& shape, DType dtype, Device device, Generator* gen) {
  check_float_dtype("randn", dtype);
  Tensor t = make("randn", shape, dtype, device);
  return normal_(t, 0.0, 1.0, gen);
}

Tensor randint(int64_t low, int64_t high, const Dims& shape, DType dtype, Device device,
               Generator* gen) {
  TIDE_CHECK(low < high, "randint: expected low < high, got low=", low, ", high=", high);
  Tensor t = make("randint", shape, dtype, device);
  TIDE_DISPATCH_ALL(dtype, "randint", [&] {
    TIDE_CHECK(fits_integer<scalar_t>(low, high - 1), "randint: the range [", low, ", ", high,
               ") does not fit in ", dtype_name(dtype));
  });
  const int64_t n = t.numel();
  Generator::Draw d = gen_or_default(gen).reserve(n, 2);
  backend_for(t.device()).random(RandomKind::Int, t.address(), dtype, n, d.seed, d.offset,
                                 {.low = low, .high = high});
  return t;
}

Tensor randperm(int64_t n, DType dtype, Device device, Generator* gen) {
  TIDE_CHECK(n >= 0, "randperm: n must be non-negative, got ", n);
  if (!device.is_cpu()) {
    check_creation_device("randperm", device);
    return randperm(n, dtype, Device{}, gen).to_device(device);
  }
  Tensor t = make("randperm", Dims{n}, dtype, device);
  TIDE_DISPATCH_ALL(dtype, "randperm", [&] {
    // The largest n whose values 1..n the dtype holds exactly.
    int64_t limit;
    if constexpr (std::is_same_v<scalar_t, bool>) limit = 1;
    else if constexpr (std::is_integral_v<scalar_t>) limit = int64_t(std::numeric_limits<scalar_t>::max());
    else if constexpr (std::is_same_v<scalar_t, Half>) limit = int64_t(1) << 11;
    else if constexpr (std::is_same_v<scalar_t, BFloat16>) limit = int64_t(1) << 8;
    else limit = int64_t(1) << std::numeric_limits<scalar_t>::digits;
    TIDE_CHECK(n <= limit, "randperm: n=", n, " is too large for ", dtype_name(dtype));
  });
  std::vector<int64_t> perm(size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i + 1;
  Generator::Draw d = gen_or_default(gen).reserve(n, 2);
  uint64_t cur = ~uint64_t(0);
  philox::Words ws{};
  for (int64_t j = n - 1; j >= 1; --j) {
    uint64_t widx = uint64_t(j) * 2;
    uint64_t blk = d.offset + widx / 4;
    if (blk != cur) {
      ws = philox::block(d.seed, blk);
      cur = blk;
    }
    const uint32_t* w = &ws.w[widx % 4];
    uint64_t r = (uint64_t(w[0]) << 32) | w[1];
    int64_t k = int64_t(r % uint64_t(j + 1));
    std::swap(perm[size_t(j)], perm[size_t(k)]);
  }
  TIDE_DISPATCH_ALL(dtype, "randperm", [&] {
    scalar_t* p = t.data<scalar_t>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<scalar_t>) p[i] = scalar_t(perm[size_t(i)]);
      else p[i] = scalar_t(compute_t<scalar_t>(double(perm[size_t(i)])));
    }
  });
  return t;
}

Tensor multinomial(const Tensor& probs, int64_t n, bool replacement, Generator* gen) {
  check_defined(probs, "multinomial");
  TIDE_CHECK(probs.dim() == 1 || probs.dim() == 2, "multinomial: expected a 1-D or 2-D tensor of weights, got shape ",
             probs.sizes().str());
  TIDE_CHECK(is_floating(probs.dtype()), "multinomial: expected floating-point weights, got ", dtype_name(probs.dtype()));
  const int64_t rows = probs.dim() == 2 ? probs.size(0) : 1, cats = probs.size(probs.dim() - 1);
  TIDE_CHECK(cats > 0, "multinomial: the weights have no categories (shape ", probs.sizes().str(), ")");
  TIDE_CHECK(n > 0, "multinomial: the number of samples must be positive, got ", n);
  TIDE_CHECK(replacement || n <= cats, "multinomial: cannot draw ", n, " samples from ", cats,
             " categories without replacement");
  // The weights in double on the host, row by row; each row checked.
  Tensor w = probs.to_device({}).to(DType::Float64).contiguous();
  const double* p = w.data<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    int64_t positive = 0;
    for (int64_t c = 0; c < cats; ++c) {
      double v = p[r * cats + c];
      TIDE_CHECK(std::isfinite(v) && v >= 0, "multinomial: weights must be finite and >= 0, got ", num_str(v),
                 " at category ", c + 1, rows > 1 ? " of row " + std::to_string(r + 1) : std::string());
      total += v;
      positive += v > 0;
    }
    TIDE_CHECK(total > 0, "multinomial: the weights", rows > 1 ? " of row " + std::to_string(r + 1) : std::string(),
               " sum to 0");
    TIDE_CHECK(replacement || n <= positive, "multinomial: cannot draw ", n, " samples without replacement from ",
               positive, " categories of positive weight", rows > 1 ? " in row " + std::to_string(r + 1) : std::string());
  }
  // The output and the uniform draws of random.hpp's scheme (one per sample with
  // replacement, one per category without) through the size- and memory-checked allocation,
  // so that a huge n is an error naming multinomial.
  Tensor out = make_uninitialised("multinomial", probs.dim() == 2 ? Dims{rows, n} : Dims{n}, DType::Int64, Device{});
  int64_t* o = out.data<int64_t>();
  const int64_t per_row = replacement ? n : cats;
  Tensor draws = make_uninitialised("multinomial", Dims{rows * per_row}, DType::Float64, Device{});
  double* u = draws.data<double>();
  const Generator::Draw d = gen_or_default(gen).reserve(rows * per_row, 2);
  kCpuBackend.random(RandomKind::Uniform, u, DType::Float64, rows * per_row, d.seed, d.offset, {0.0, 1.0});
  std::vector<double> cdf(static_cast<size_t>(cats));
  std::vector<std::pair<double, int64_t>> keys(static_cast<size_t>(cats));
  for (int64_t r = 0; r < rows; ++r) {
    const double* pr = p + r * cats;
    const double* ur = u + r * per_row;
    if (replacement) {
      double acc = 0;
      for (int64_t c = 0; c < cats; ++c) cdf[size_t(c)] = acc += pr[c];
      for (int64_t j = 0; j < n; ++j) {
        // The first category whose cumulative weight exceeds u * total (never a zero weight).
        auto it = std::upper_bound(cdf.begin(), cdf.end(), ur[j] * acc);
        o[r * n + j] = std::min<int64_t>(it - cdf.begin(), cats - 1) + 1;
      }
    } else {
      // Efraimidis-Spirakis: key log(u') / w with u' in (0, 1]; the n largest keys, largest
      // first (ties: the lower category). A zero weight gets -inf and is never drawn.
      for (int64_t c = 0; c < cats; ++c) {
        double key = pr[c] > 0 ? std::log(1.0 - ur[c]) / pr[c] : -std::numeric_limits<double>::infinity();
        keys[size_t(c)] = {key, c};
      }
      std::partial_sort(keys.begin(), keys.begin() + n, keys.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      for (int64_t j = 0; j < n; ++j) o[r * n + j] = keys[size_t(j)].second + 1;
    }
  }
  return probs.device().is_cpu() ? out : out.to_device(probs.device());
}

Tensor empty_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  return make_uninitialised("empty_like", x.sizes(), dtype.value_or(x.dtype()), device.value_or(x.device()));
}

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  Device dev = device.value_or(x.device());
  check_creation_device("zeros_like", dev);
  return zeros(x.sizes(), dtype.value_or(x.dtype()), dev);
}

Tensor ones_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device) {
  Device dev = device.value_or(x.device());
  check_creation_device("ones_like", dev);
  return ones(x.sizes(), dtype.value_or(x.dtype()), dev);
}

Tensor full_like(const Tensor& x, const Scalar& value, std::optional<DType> dtype,
                 std::optional<Device> device) {
  check_scalar_fits("full_like", value, dtype.value_or(x.dtype()));
  Tensor t = make("full_like", x.sizes(), dtype.value_or(x.dtype()), device.value_or(x.device()));
  fill_(t, value);
  return t;
}

Tensor rand_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device,
                 Generator* gen) {
  DType dt = dtype.value_or(x.dtype());
  check_float_dtype("rand_like", dt);
  Device dev = device.value_or(x.device());
  check_creation_device("rand_like", dev);
  return rand(x.sizes(), dt, dev, gen);
}

Tensor randn_like(const Tensor& x, std::optional<DType> dtype, std::optional<Device> device,
                  Generator* gen) {
  DType dt = dtype.value_or(x.dtype());
  check_float_dtype("randn_like", dt);
  Device dev = device.value_or(x.device());
  check_creation_device("randn_like", dev);
  return randn(x.sizes(), dt, dev, gen);
}

}  // namespace tide::ops
