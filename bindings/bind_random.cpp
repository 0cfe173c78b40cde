// np.random: NumPy's two random APIs with NumPy's streams (tensor/random_numpy.hpp).
//
// - np.random.default_rng(seed) returns a Generator (PCG64 seeded through SeedSequence, as
//   NumPy's default_rng); its methods are the functions of np.random.Generator, called as
//   rng:integers(0, 10, 5) (NumPy's rng.integers(0, 10, 5)).
// - np.random.seed / rand / randn / randint / random / uniform / normal / choice /
//   permutation / shuffle draw from the legacy global RandomState (MT19937), one per
//   interpreter (kept in its Lua registry), as NumPy's module-level functions do.
// Neither touches the torch generator (torch.manual_seed / torch.rand).
//
// Results are float64 / int64 tensors like NumPy's; without a size a single Lua number.
// Indices that choice(n) and permutation(n) produce are 1-based (API.md); everything else
// matches NumPy's values bit for bit.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>
#include <random>
#include <string_view>

#include "../tensor/iterator.hpp"
#include "../tensor/ops/elementwise.hpp"
#include "../tensor/ops/shape.hpp"
#include "../tensor/random_numpy.hpp"
#include "creation_args.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

using nprandom::BitGenerator;

constexpr const char* kGeneratorMeta = "tide.np.Generator";
constexpr const char* kLegacyKey = "tide.np.random.legacy";

extern const Binding kRandomBindings[];
extern const size_t kRandomBindingCount;
constexpr std::string_view kMethodPrefix = "random.Generator.";

// The userdata of a Generator holds its bit generator (trivially destructible: no __gc). Its
// metatable, made on first use, has the methods of np.random.Generator as __index.
BitGenerator* new_generator(lua_State* L, const BitGenerator& g) {
  void* p = lua_newuserdatauv(L, sizeof(BitGenerator), 0);
  auto* bg = new (p) BitGenerator(g);
  if (luaL_newmetatable(L, kGeneratorMeta)) {
    lua_pushliteral(L, "Generator(PCG64)");
    lua_setfield(L, -2, "__name");
    lua_newtable(L);
    for (size_t i = 0; i < kRandomBindingCount; ++i) {
      const Binding& b = kRandomBindings[i];
      if (std::string_view(b.name).substr(0, kMethodPrefix.size()) != kMethodPrefix) continue;
      push_binding(L, b, Style::Numpy);
      lua_setfield(L, -2, b.name + kMethodPrefix.size());
    }
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, -2);
  return bg;
}

// The interpreter's legacy RandomState; before np.random.seed it is that of seed 0.
BitGenerator& legacy(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, kLegacyKey);
  auto* g = static_cast<BitGenerator*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (g) return *g;
  g = new_generator(L, BitGenerator::mt19937(0));
  lua_setfield(L, LUA_REGISTRYINDEX, kLegacyKey);
  return *g;
}

// The Generator a method was called on (argument 1).
BitGenerator& self(const Args& a) {
  a.consumed(1);
  auto* g = static_cast<BitGenerator*>(luaL_testudata(a.L, 1, kGeneratorMeta));
  if (!g || g->kind() != BitGenerator::Kind::Pcg64)
    a.error(std::string("expected a Generator (np.random.default_rng()) as argument 1, got a ") + type_name(a.L, 1) +
            " (call it as rng:method(...))");
  return *g;
}

// A seed: a non-negative integer, or nullopt when none is given.
std::optional<uint64_t> seed_arg(const Args& a, int i) {
  if (!a.has(i)) return std::nullopt;
  int64_t v;
  if (!integral_value(a.L, i, v)) {
    if (a.is_number(i)) a.error("the seed must be an integer, got " + num_str(lua_tonumber(a.L, i)));
    a.error(std::string("the seed must be an integer, got a ") + type_name(a.L, i));
  }
  if (v < 0) a.error("the seed must be non-negative, got " + std::to_string(v));
  return uint64_t(v);
}

std::vector<uint32_t> words_of(uint64_t v) {  // little-endian 32-bit words, {0} for 0
  std::vector<uint32_t> w{uint32_t(v)};
  if (v >> 32) w.push_back(uint32_t(v >> 32));
  return w;
}

// Fills a float64 tensor of the given size (a scalar when size is nil) with draw().
template <typename Draw>
int push_doubles(lua_State* L, const char* op, const std::optional<Dims>& size, Draw draw) {
  Tensor t = nprandom::empty_for(op, size.value_or(Dims{}), DType::Float64);
  double* p = t.data<double>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = draw();
  return push_result(L, t, !size);
}

// ---- seeding

// np.random.default_rng([seed]): a new Generator; no seed takes 128 bits from the system.
int default_rng_fn(lua_State* L, Args& a) {
  std::optional<uint64_t> seed = seed_arg(a, 1);
  std::vector<uint32_t> entropy;
  if (seed) {
    entropy = words_of(*seed);
  } else {
    std::random_device rd;
    for (int i = 0; i < 4; ++i) entropy.push_back(rd());
  }
  new_generator(L, BitGenerator::pcg64(entropy));
  return 1;
}

// np.random.seed([seed]): reseeds the legacy stream (init_genrand); seeds are 0 .. 2^32-1.
int seed_fn(lua_State* L, Args& a) {
  std::optional<uint64_t> seed = seed_arg(a, 1);
  BitGenerator& g = legacy(L);
  if (seed) {
    if (*seed > 0xFFFFFFFFull) a.error("the seed must be between 0 and 2^32 - 1, got " + std::to_string(*seed));
    g = BitGenerator::mt19937(uint32_t(*seed));
  } else {
    std::random_device rd;
    std::vector<uint32_t> key(624);
    for (auto& k : key) k = rd();
    g = BitGenerator::mt19937_state(key);
  }
  return 0;
}

// ---- integers

// NumPy's bounded integers in [low, high) ([low, high] with endpoint) of an integer dtype:
// Lemire's method for a Generator, masked rejection for the legacy randint.
int integers_impl(lua_State* L, const Args& a, BitGenerator& g, int first, bool masked, bool endpoint,
                  std::optional<DType> dtype) {
  std::optional<int64_t> low = integer_arg(a, first, "low");
  if (!low) a.error("expected low as argument " + std::to_string(first));
  std::optional<int64_t> high = integer_arg(a, first + 1, "high");
  if (!high) {
    high = low;
    low = 0;
  }
  std::optional<Dims> size = size_arg(a, first + 2);
  const DType dt = dtype.value_or(DType::Int64);
  const __int128 lo = *low, hi = __int128(*high) - (endpoint ? 0 : 1);
  if (lo > hi)
    a.error(endpoint ? "expected low <= high, got low=" + std::to_string(*low) + ", high=" + std::to_string(*high)
                     : "expected low < high, got low=" + std::to_string(*low) + ", high=" + std::to_string(*high));
  __int128 lb, ub;
  switch (dt) {
    case DType::Bool: lb = 0, ub = 1; break;
    case DType::UInt8: lb = 0, ub = 255; break;
    case DType::Int8: lb = -128, ub = 127; break;
    case DType::Int16: lb = -32768, ub = 32767; break;
    case DType::Int32: lb = INT32_MIN, ub = INT32_MAX; break;
    case DType::Int64: lb = INT64_MIN, ub = INT64_MAX; break;
    default: a.error(std::string("dtype ") + std::string(dtype_name(dt)) + " is not supported (bool, uint8, int8, int16, int32, int64)");
  }
  if (lo < lb || hi > ub)
    a.error("low=" + std::to_string(*low) + ", high=" + std::to_string(*high) + " are out of bounds for " + std::string(dtype_name(dt)));
  Tensor t = nprandom::empty_for(a.op, size.value_or(Dims{}), dt);
  const int64_t n = t.numel();
  const uint64_t rng = uint64_t(hi - lo), off = uint64_t(int64_t(lo));
  switch (dt) {
    case DType::Bool: nprandom::bounded_fill_bool(g, off != 0, rng != 0, n, t.data<bool>()); break;
    case DType::UInt8:
    case DType::Int8:
      nprandom::bounded_fill_u8(g, uint8_t(off), uint8_t(rng), n, masked, static_cast<uint8_t*>(t.data_ptr()));
      break;
    case DType::Int16:
      nprandom::bounded_fill_u16(g, uint16_t(off), uint16_t(rng), n, masked, static_cast<uint16_t*>(t.data_ptr()));
      break;
    case DType::Int32:
      nprandom::bounded_fill_u32(g, uint32_t(off), uint32_t(rng), n, masked, static_cast<uint32_t*>(t.data_ptr()));
      break;
    default: nprandom::bounded_fill_u64(g, off, rng, n, masked, static_cast<uint64_t*>(t.data_ptr())); break;
  }
  return push_result(L, t, !size);
}

int gen_integers_fn(lua_State* L, Args& a) {
  BitGenerator& g = self(a);
  if (a.count() > 6) a.error("expected rng:integers(low[, high[, size[, dtype[, endpoint]]]])");
  std::optional<DType> dtype = dtype_kw(a);
  if (a.has(5)) {
    if (dtype) a.error("dtype given both as an argument and as a keyword");
    dtype = a.dtype(5);
  }
  bool endpoint = a.kw_bool("endpoint").value_or(false);
  if (a.has(6)) endpoint = a.boolean(6);
  return integers_impl(L, a, g, 2, false, endpoint, dtype);
}

int randint_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  if (strip_dtype_string(a, dtype, 3) > 3) a.error("expected randint(low[, high[, size]][, dtype])");
  return integers_impl(L, a, legacy(L), 1, true, false, dtype);
}

// ---- uniform doubles

int gen_random_fn(lua_State* L, Args& a) {
  BitGenerator& g = self(a);
  if (a.count() > 3) a.error("expected rng:random([size[, dtype]])");
  std::optional<Dims> size = size_arg(a, 2);
  std::optional<DType> dtype = dtype_kw(a);
  if (a.has(3)) {
    if (dtype) a.error("dtype given both as an argument and as a keyword");
    dtype = a.dtype(3);
  }
  const DType dt = dtype.value_or(DType::Float64);
  if (dt == DType::Float64) return push_doubles(L, a.op, size, [&] { return g.next_double(); });
  if (dt != DType::Float32) a.error(std::string("dtype must be float64 or float32, got ") + std::string(dtype_name(dt)));
  Tensor t = nprandom::empty_for(a.op, size.value_or(Dims{}), DType::Float32);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = g.next_float();
  return push_result(L, t, !size);
}

// np.random.random(size) / random_sample(size)
int random_fn(lua_State* L, Args& a) {
  if (a.count() > 1) a.error("expected random([size])");
  BitGenerator& g = legacy(L);
  return push_doubles(L, a.op, size_arg(a, 1), [&] { return g.next_double(); });
}

// np.random.rand(d0, d1, ...) and randn(d0, d1, ...): varargs shapes; a number without args.
template <bool Normal>
int rand_fn(lua_State* L, Args& a) {
  std::optional<Dims> size;
  if (a.count() > 0) size = shape_args(a, 1, a.count());
  BitGenerator& g = legacy(L);
  return push_doubles(L, a.op, size, [&] { return Normal ? nprandom::legacy_gauss(g) : g.next_double(); });
}

// A distribution parameter (low, high, loc, scale): a number, or an array (tensor or nested
// table) broadcast against the other parameters and size, one value per draw, as NumPy's
// Generator and legacy functions take them.
struct Param {
  double number = 0;
  Tensor values;  // float64, contiguous, of the draw's shape once draw_shape has run
  bool is_array() const { return values.defined(); }
  double at(int64_t i) const { return is_array() ? values.data<double>()[i] : number; }
};

Param param_arg(const Args& a, int pos, const char* kw, double dflt) {
  Param p;
  std::optional<TensorOrScalar> v;
  if (a.has(pos)) {
    if (a.has_kw(kw)) a.error(std::string("'") + kw + "' given both as an argument and as a keyword");
    if (!a.is_number(pos) && (a.is_tensor(pos) || lua_type(a.L, pos) == LUA_TTABLE)) v = TensorOrScalar(a.tensor_like(pos));
    else p.number = number_arg(a, pos, kw).value();
  } else {
    v = a.kw_tensor_or_scalar(kw);
    if (!v) p.number = dflt;
  }
  if (v && !v->is_tensor()) p.number = v->scalar.to_double();
  if (v && v->is_tensor()) {
    if (is_bool(v->tensor.dtype()) || !v->tensor.device().is_cpu())
      a.error(std::string("'") + kw + "' must be a number or an array of numbers on the cpu");
    p.values = v->tensor.to(DType::Float64);
  }
  return p;
}

// The shape of a draw: size when given (every array parameter must broadcast to it, as NumPy
// requires), else the array parameters' broadcast shape; nullopt (one number) with neither.
// The array parameters are expanded to it, contiguous, so that draw i reads element i.
std::optional<Dims> draw_shape(const Args& a, std::optional<Dims> size, std::initializer_list<Param*> params) {
  std::optional<Dims> shape = size;
  if (!size) {
    for (Param* p : params)
      if (p->is_array()) shape = shape ? broadcast_shapes(a.op, *shape, p->values.sizes()) : p->values.sizes();
    if (shape && shape->size() == 0) shape.reset();  // 0-d arrays draw one number, as NumPy's scalars
  }
  for (Param* p : params) {
    if (!p->is_array()) continue;
    const Dims target = shape.value_or(Dims{});
    if (broadcast_shapes(a.op, target, p->values.sizes()) != target)
      a.error("shape mismatch: a parameter of shape " + p->values.sizes().str() + " cannot be broadcast to size " +
              target.str());
    p->values = ops::expand(p->values, target).contiguous();
  }
  return shape;
}

// The number of values a draw of this shape makes (1 for a number).
int64_t draw_count(const std::optional<Dims>& shape) {
  int64_t n = 1;
  if (shape) for (int d = 0; d < shape->size(); ++d) n *= (*shape)[d];
  return n;
}

// uniform(low=0, high=1, size): low + (high - low) * u. A Generator needs low <= high; the
// legacy form also takes high < low (values in (high, low]).
int uniform_impl(lua_State* L, const Args& a, BitGenerator& g, int first, bool generator) {
  if (a.count() > first + 2) a.error("expected uniform([low[, high[, size]]])");
  Param low = param_arg(a, first, "low", 0.0), high = param_arg(a, first + 1, "high", 1.0);
  std::optional<Dims> shape = draw_shape(a, size_arg(a, first + 2), {&low, &high});
  for (int64_t i = 0, n = draw_count(shape); i < n; ++i) {
    const double lo = low.at(i), hi = high.at(i);
    if (!std::isfinite(hi - lo)) a.error("high - low must be finite, got low=" + num_str(lo) + ", high=" + num_str(hi));
    if (generator && hi - lo < 0) a.error("expected low <= high, got low=" + num_str(lo) + ", high=" + num_str(hi));
  }
  int64_t i = 0;
  return push_doubles(L, a.op, shape, [&] {
    const double v = nprandom::uniform(g, low.at(i), high.at(i) - low.at(i));
    ++i;
    return v;
  });
}
int gen_uniform_fn(lua_State* L, Args& a) { return uniform_impl(L, a, self(a), 2, true); }
int uniform_fn(lua_State* L, Args& a) { return uniform_impl(L, a, legacy(L), 1, false); }

// ---- normal and exponential

// Checks that every value of a scale parameter (after draw_shape) is non-negative.
void check_scale(const Args& a, const Param& scale, const std::optional<Dims>& shape, const char* name) {
  for (int64_t i = 0, n = draw_count(shape); i < n; ++i)
    if (!(scale.at(i) >= 0)) a.error(std::string(name) + " must be non-negative, got " + num_str(scale.at(i)));
}

int normal_impl(lua_State* L, const Args& a, BitGenerator& g, int first, bool generator) {
  if (a.count() > first + 2) a.error("expected normal([loc[, scale[, size]]])");
  Param loc = param_arg(a, first, "loc", 0.0), scale = param_arg(a, first + 1, "scale", 1.0);
  std::optional<Dims> shape = draw_shape(a, size_arg(a, first + 2), {&loc, &scale});
  check_scale(a, scale, shape, "scale");
  int64_t i = 0;
  return push_doubles(L, a.op, shape, [&] {
    const double m = loc.at(i), s = scale.at(i);
    ++i;
    return generator ? nprandom::normal(g, m, s) : nprandom::legacy_normal(g, m, s);
  });
}
int gen_normal_fn(lua_State* L, Args& a) { return normal_impl(L, a, self(a), 2, true); }
int normal_fn(lua_State* L, Args& a) { return normal_impl(L, a, legacy(L), 1, false); }

int gen_standard_normal_fn(lua_State* L, Args& a) {
  BitGenerator& g = self(a);
  if (a.count() > 2) a.error("expected rng:standard_normal([size])");
  return push_doubles(L, a.op, size_arg(a, 2), [&] { return nprandom::standard_normal(g); });
}

int gen_exponential_fn(lua_State* L, Args& a) {
  BitGenerator& g = self(a);
  if (a.count() > 3) a.error("expected rng:exponential([scale[, size]])");
  Param scale = param_arg(a, 2, "scale", 1.0);
  std::optional<Dims> shape = draw_shape(a, size_arg(a, 3), {&scale});
  check_scale(a, scale, shape, "scale");
  int64_t i = 0;
  return push_doubles(L, a.op, shape, [&] { return scale.at(i++) * nprandom::standard_exponential(g); });
}

// ---- permutations and choice

// The rows (dim 1) of x at the 0-based indices of idx (an int64 tensor), shaped
// idx.shape + x.shape[2:].
Tensor take_rows(const Tensor& x, const Tensor& idx, const char* op) {
  Tensor src = x.contiguous();
  Dims shape = idx.sizes();
  for (int d = 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  Tensor out = nprandom::empty_for(op, shape, x.dtype());
  const size_t row = x.size(0) ? src.nbytes() / size_t(x.size(0)) : 0;
  const char* s = static_cast<const char*>(src.data_ptr());
  char* d = static_cast<char*>(out.data_ptr());
  const int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) std::memcpy(d + size_t(i) * row, s + size_t(p[i]) * row, row);
  return out;
}

// 0-based indices made 1-based, in place (the indices choice(n) and permutation(n) return).
Tensor one_based(Tensor idx) {
  int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) ++p[i];
  return idx;
}

Tensor& rows_arg(const Args& a, int i) {
  Tensor& x = a.tensor(i);
  check_cpu(x, a.op);
  if (x.dim() == 0) a.error("x must have at least one dim");
  return x;
}

// permutation(n) -> a permutation of 1..n; permutation(x) -> a copy of x with shuffled rows.
int permutation_impl(lua_State* L, const Args& a, BitGenerator& g, int i) {
  if (a.count() != i) a.error("expected permutation(n) or permutation(x)");
  if (a.is_tensor(i)) {
    Tensor& x = rows_arg(a, i);
    push_tensor(L, take_rows(x, nprandom::shuffled_order(g, x.size(0), a.op), a.op));
    return 1;
  }
  const int64_t n = a.integer(i);
  if (n < 0) a.error("n must be non-negative, got " + std::to_string(n));
  push_tensor(L, one_based(nprandom::shuffled_order(g, n, a.op)));
  return 1;
}
int gen_permutation_fn(lua_State* L, Args& a) { return permutation_impl(L, a, self(a), 2); }
int permutation_fn(lua_State* L, Args& a) { return permutation_impl(L, a, legacy(L), 1); }

// shuffle(x): shuffles the rows of x in place; returns nothing, as NumPy.
int shuffle_impl(const Args& a, BitGenerator& g, int i) {
  if (a.count() != i) a.error("expected shuffle(x)");
  Tensor& x = rows_arg(a, i);
  Tensor shuffled = take_rows(x, nprandom::shuffled_order(g, x.size(0), a.op), a.op);
  ops::copy_(x, shuffled);
  return 0;
}
int gen_shuffle_fn(lua_State*, Args& a) { return shuffle_impl(a, self(a), 2); }
int shuffle_fn(lua_State* L, Args& a) { return shuffle_impl(a, legacy(L), 1); }

// NumPy's checks of choice's p (a table or a tensor of probabilities): 1-D, one per item,
// no NaN, none negative, summing to 1 within sqrt(eps) (Kahan summation).
std::vector<double> probabilities(const Args& a, int idx, int64_t pop) {
  Tensor p = tensor_from_lua(a.L, idx, std::nullopt, DType::Float64, a.op);
  double atol = std::sqrt(2.220446049250313e-16);
  if (p.dtype() == DType::Float32) atol = std::sqrt(double(1.1920929e-07f));
  if (p.dim() != 1) a.error("p must be 1-dimensional, got " + std::to_string(p.dim()) + " dims");
  if (p.size(0) != pop)
    a.error("a and p must have the same size, got " + std::to_string(pop) + " and " + std::to_string(p.size(0)));
  Tensor pd = p.to(DType::Float64).contiguous();
  std::vector<double> v(pd.data<double>(), pd.data<double>() + pop);
  double sum = 0, c = 0;
  for (double x : v) {
    if (std::isnan(x)) a.error("probabilities contain NaN");
    if (x < 0) a.error("probabilities must be non-negative, got " + num_str(x));
    const double y = x - c, t = sum + y;
    c = (t - sum) - y;
    sum = t;
  }
  if (std::fabs(sum - 1.0) > atol) a.error("probabilities do not sum to 1 (sum=" + num_str(sum) + ")");
  return v;
}

// The cumulative distribution of p, normalised by its last value (NumPy's cdf /= cdf[-1]).
std::vector<double> cdf_of(const std::vector<double>& p) {
  std::vector<double> c(p.size());
  double s = 0;
  for (size_t i = 0; i < p.size(); ++i) c[i] = s += p[i];
  const double last = c.back();
  for (double& x : c) x /= last;
  return c;
}

int64_t search_right(const std::vector<double>& cdf, double u) {
  return int64_t(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
}

// choice(a[, size[, replace[, p]]]): items of a (an integer n: 1..n; a tensor: its rows).
int choice_impl(lua_State* L, const Args& a, BitGenerator& g, int i, bool generator) {
  if (a.count() > i + 3) a.error("expected choice(a[, size[, replace[, p]]])");
  if (!a.has(i)) a.error("expected a (a population size or a tensor) as argument " + std::to_string(i));
  Tensor* items = a.is_tensor(i) ? &rows_arg(a, i) : nullptr;
  const int64_t pop = items ? items->size(0) : a.integer(i);
  std::optional<Dims> size = size_arg(a, i + 1);
  const int64_t n = size ? shape_numel(*size, a.op) : 1;
  bool replace = a.kw_bool("replace").value_or(true);
  if (a.has(i + 2)) {
    if (a.has_kw("replace")) a.error("'replace' given both as an argument and as a keyword");
    replace = a.boolean(i + 2);
  }
  const bool shuffle = generator ? a.kw_bool("shuffle").value_or(true) : true;
  if (pop < 0 || (pop == 0 && n != 0))
    a.error("a must be a positive integer or a non-empty tensor unless no samples are taken, got " +
            (items ? std::string("an empty tensor") : std::to_string(pop)));
  bool pushed;
  const int pidx = arg_or_kw(a, i + 3, "p", pushed);
  std::optional<std::vector<double>> p;
  if (pidx) {
    try {
      p = probabilities(a, pidx, pop);
    } catch (...) {
      if (pushed) lua_pop(L, 1);
      throw;
    }
    if (pushed) lua_pop(L, 1);
  }
  Tensor idx_t = nprandom::empty_for(a.op, size.value_or(Dims{}), DType::Int64);
  int64_t* idx = idx_t.data<int64_t>();
  auto uniform = [&] { return g.next_double(); };
  if (replace) {
    if (p) {
      const std::vector<double> cdf = cdf_of(*p);
      for (int64_t k = 0; k < n; ++k) idx[k] = search_right(cdf, uniform());
    } else if (n > 0) {
      nprandom::bounded_fill_u64(g, 0, uint64_t(pop - 1), n, !generator, reinterpret_cast<uint64_t*>(idx));
    }
  } else {
    if (n > pop)
      a.error("cannot take a larger sample than the population when replace=false (" + std::to_string(n) + " > " +
              std::to_string(pop) + ")");
    if (p) {
      int64_t nonzero = 0;
      for (double x : *p) nonzero += x > 0;
      if (nonzero < n)
        a.error("fewer non-zero entries in p (" + std::to_string(nonzero) + ") than size (" + std::to_string(n) + ")");
      std::vector<double> q = *p;
      int64_t found = 0;
      while (found < n) {
        std::vector<double> u(static_cast<size_t>(n - found));
        for (double& x : u) x = uniform();
        for (int64_t k = 0; k < found; ++k) q[size_t(idx[k])] = 0;
        const std::vector<double> cdf = cdf_of(q);
        std::vector<int64_t> fresh;  // distinct draws in order of first appearance
        for (double x : u) {
          const int64_t v = search_right(cdf, x);
          if (std::find(fresh.begin(), fresh.end(), v) == fresh.end()) fresh.push_back(v);
        }
        for (int64_t v : fresh) idx[found++] = v;
      }
    } else if (generator) {
      nprandom::choice_without_replacement(g, pop, n, shuffle, idx, a.op);
    } else {
      const Tensor order = nprandom::shuffled_order(g, pop, a.op);
      std::copy(order.data<int64_t>(), order.data<int64_t>() + n, idx);
    }
  }
  if (!items) return push_result(L, one_based(idx_t), !size);
  Tensor out = take_rows(*items, idx_t, a.op);
  return push_result(L, out, !size && out.dim() == 0);
}
int gen_choice_fn(lua_State* L, Args& a) { return choice_impl(L, a, self(a), 2, true); }
int choice_fn(lua_State* L, Args& a) { return choice_impl(L, a, legacy(L), 1, false); }

const Binding kRandomBindings[] = {
    {"random.default_rng", default_rng_fn, NUMPY,
     "random.default_rng([seed]) -> Generator: NumPy's default generator (PCG64 seeded through SeedSequence); "
     "the same seed gives NumPy's numbers. Methods: rng:integers random uniform normal standard_normal "
     "exponential choice permutation shuffle."},
    {"random.Generator.integers", gen_integers_fn, NUMPY,
     "rng:integers(low[, high[, size[, dtype[, endpoint]]]][, {low=, high=, size=, dtype=, endpoint=}]) -> integers "
     "in [low, high) ([0, low) without high; [low, high] with endpoint=true), int64 by default; a number without size."},
    {"random.Generator.random", gen_random_fn, NUMPY,
     "rng:random([size[, dtype]][, {size=, dtype=}]) -> float64 (or float32) values in [0, 1); a number without size."},
    {"random.Generator.uniform", gen_uniform_fn, NUMPY,
     "rng:uniform([low[, high[, size]]][, {low=, high=, size=}]) -> float64 values in [low, high); low and high may be "
     "arrays, broadcast against each other and size (one draw per element, as NumPy)."},
    {"random.Generator.normal", gen_normal_fn, NUMPY,
     "rng:normal([loc[, scale[, size]]][, {loc=, scale=, size=}]) -> float64 normal values (NumPy's ziggurat); loc and "
     "scale may be arrays, broadcast against each other and size."},
    {"random.Generator.standard_normal", gen_standard_normal_fn, NUMPY,
     "rng:standard_normal([size][, {size=}]) -> float64 standard normal values."},
    {"random.Generator.exponential", gen_exponential_fn, NUMPY,
     "rng:exponential([scale[, size]][, {scale=, size=}]) -> float64 exponential values with mean scale (a number or "
     "an array broadcast against size)."},
    {"random.Generator.choice", gen_choice_fn, NUMPY,
     "rng:choice(a[, size[, replace[, p]]][, {size=, replace=, p=, shuffle=}]) -> a sample of 1..a (a an integer) or "
     "of the rows of tensor a, with replacement unless replace=false, weighted by p."},
    {"random.Generator.permutation", gen_permutation_fn, NUMPY,
     "rng:permutation(n | x) -> a permutation of 1..n, or a copy of x with shuffled rows."},
    {"random.Generator.shuffle", gen_shuffle_fn, NUMPY, "rng:shuffle(x): shuffles the rows of x in place."},
    {"random.seed", seed_fn, NUMPY,
     "random.seed([seed]): reseeds NumPy's legacy global stream (MT19937, seed 0 .. 2^32-1); torch's generator is separate."},
    {"random.rand", rand_fn<false>, NUMPY, "random.rand(d0, d1, ...) -> float64 array uniform in [0, 1) (a number without args)."},
    {"random.randn", rand_fn<true>, NUMPY, "random.randn(d0, d1, ...) -> float64 array of standard normal values."},
    {"random.random", random_fn, NUMPY, "random.random([size][, {size=}]) -> float64 array uniform in [0, 1) (a number without size)."},
    {"random.random_sample", random_fn, NUMPY, "random.random_sample([size][, {size=}]): same as random.random."},
    {"random.randint", randint_fn, NUMPY,
     "random.randint(low[, high[, size]][, dtype][, {low=, high=, size=, dtype=}]) -> int64 array in [low, high), or [0, low) "
     "without high; a number without size."},
    {"random.uniform", uniform_fn, NUMPY, "random.uniform([low[, high[, size]]][, {low=, high=, size=}]) -> float64 uniform values in [low, high)."},
    {"random.normal", normal_fn, NUMPY, "random.normal([loc[, scale[, size]]][, {loc=, scale=, size=}]) -> float64 normal values."},
    {"random.choice", choice_fn, NUMPY,
     "random.choice(a[, size[, replace[, p]]][, {size=, replace=, p=}]) -> a sample of 1..a (a an integer) or of the rows of tensor a."},
    {"random.permutation", permutation_fn, NUMPY,
     "random.permutation(n | x) -> a permutation of 1..n (1-based), or a copy of x with shuffled rows."},
    {"random.shuffle", shuffle_fn, NUMPY, "random.shuffle(x): shuffles the rows of x in place."},
};

const size_t kRandomBindingCount = sizeof(kRandomBindings) / sizeof(kRandomBindings[0]);

}  // namespace

void register_random_bindings() {
  register_bindings(kRandomBindings, kRandomBindingCount);
}

}  // namespace tide::lua
