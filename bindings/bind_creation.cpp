// Bindings of the creation ops: torch.tensor / np.array, zeros ones empty full arange
// linspace eye, the random ops of torch (torch.rand ..., torch.Generator; np.random is bind_random.cpp), the *_like forms, the seed
// functions, and the in-place fills uniform_ normal_ zero_ fill_.
//
// Shapes are varargs or one table (torch.zeros(2, 3) = torch.zeros{2, 3}); NumPy spellings
// also take the dtype as a trailing string (np.zeros({2, 3}, "int32")), and default to
// float64 (Args::default_float). Keywords: {dtype=, device=}.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/creation.hpp"
#include "../tensor/random.hpp"
#include "creation_args.hpp"
#include "lua_api.hpp"

namespace tide::lua {

// ---- argument helpers shared with bind_random.cpp (creation_args.hpp)

std::string num_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.14g", v);
  return buf;
}

const char* type_name(lua_State* L, int idx) {
  if (luaL_testudata(L, idx, kTensorMeta)) return "tensor";
  return lua_typename(L, lua_type(L, idx));
}

void add_size(const Args& a, Dims& shape, int idx, int pos) {
  int64_t v;
  if (!integral_value(a.L, idx, v)) {
    if (lua_type(a.L, idx) == LUA_TNUMBER && std::isfinite(lua_tonumber(a.L, idx)) &&
        std::floor(lua_tonumber(a.L, idx)) == lua_tonumber(a.L, idx))
      a.error("size " + num_str(lua_tonumber(a.L, idx)) + " at position " + std::to_string(pos) + " is too large");
    if (lua_type(a.L, idx) == LUA_TNUMBER)
      a.error("sizes must be integers, got " + num_str(lua_tonumber(a.L, idx)) + " at position " +
              std::to_string(pos));
    a.error(std::string("sizes must be integers, got a ") + type_name(a.L, idx) + " at position " +
            std::to_string(pos));
  }
  if (v < 0)
    a.error("sizes must be non-negative, got " + std::to_string(v) + " at position " + std::to_string(pos));
  TIDE_CHECK(shape.size() < kMaxDims, a.op, ": at most ", kMaxDims, " dims are supported");
  shape.push_back(v);
}

// A shape value at stack index idx: one number or a table of numbers.
Dims shape_value(const Args& a, int idx) {
  Dims shape;
  lua_State* L = a.L;
  if (lua_type(L, idx) == LUA_TTABLE && !luaL_testudata(L, idx, kTensorMeta)) {
    int n = int(lua_rawlen(L, idx));
    for (int k = 1; k <= n; ++k) {
      lua_rawgeti(L, idx, k);
      int top = lua_gettop(L);
      try {
        add_size(a, shape, top, k);
      } catch (...) {
        lua_settop(L, top - 1);
        throw;
      }
      lua_settop(L, top - 1);
    }
    return shape;
  }
  if (lua_type(L, idx) == LUA_TNUMBER) {
    add_size(a, shape, idx, 1);
    return shape;
  }
  a.error(std::string("expected a shape (a number or a table of numbers), got a ") + type_name(L, idx));
}

// A shape given by positionals first..last: one table, or numbers.
Dims shape_args(const Args& a, int first, int last) {
  if (first == last && a.is_table(first)) return shape_value(a, first);
  Dims shape;
  for (int k = first; k <= last; ++k) {
    if (a.is_table(k)) a.error("give the shape either as one table or as numbers, not both");
    if (!a.has(k)) a.error("sizes must be integers, got nil at position " + std::to_string(k - first + 1));
    add_size(a, shape, k, k - first + 1);
  }
  return shape;
}

// NumPy's trailing positional dtype string (np.zeros({2, 3}, "int32")): returns the index of
// the last positional that is not that string.
int strip_dtype_string(const Args& a, std::optional<DType>& dtype, int min_last) {
  int last = a.count();
  if (last > min_last && a.is_string(last)) {
    if (a.has_kw("dtype")) a.error("dtype given both as an argument and as a keyword");
    dtype = a.dtype(last);
    --last;
  }
  return last;
}

Device device_kw(const Args& a) { return a.kw_device().value_or(Device{}); }

std::optional<Device> device_kw_opt(const Args& a) {
  if (!a.has_kw("device")) return std::nullopt;
  return device_kw(a);
}

std::optional<DType> dtype_kw(const Args& a) { return a.kw_dtype("dtype"); }

// The keyword value (or positional `pos` when present) at the top of the stack: returns the
// stack index, 0 when neither is given; `pushed` tells whether the caller must pop it.
int arg_or_kw(const Args& a, int pos, const char* kw, bool& pushed) {
  pushed = false;
  if (a.has(pos)) {
    if (a.has_kw(kw)) a.error(std::string("'") + kw + "' given both as an argument and as a keyword");
    return pos;
  }
  if (a.push_kw(kw) == LUA_TNIL) {
    lua_pop(a.L, 1);
    return 0;
  }
  pushed = true;
  return lua_gettop(a.L);
}

// An optional shape from positional pos or the `size` keyword (np.random's size=).
std::optional<Dims> size_arg(const Args& a, int pos, const char* kw) {
  bool pushed;
  int idx = arg_or_kw(a, pos, kw, pushed);
  if (!idx) return std::nullopt;
  Dims d;
  try {
    d = shape_value(a, idx);
  } catch (...) {
    if (pushed) lua_pop(a.L, 1);
    throw;
  }
  if (pushed) lua_pop(a.L, 1);
  return d;
}

// An optional number from positional pos or keyword kw.
std::optional<double> number_arg(const Args& a, int pos, const char* kw) {
  if (a.has(pos)) {
    if (a.has_kw(kw)) a.error(std::string("'") + kw + "' given both as an argument and as a keyword");
    double v;
    if (!number_value(a.L, pos, v))
      a.error(std::string("expected a number for '") + kw + "' (argument " + std::to_string(pos) +
              "), got a " + type_name(a.L, pos));
    return v;
  }
  return a.kw_number(kw);
}

std::optional<int64_t> integer_arg(const Args& a, int pos, const char* kw) {
  if (a.has(pos)) {
    if (a.has_kw(kw)) a.error(std::string("'") + kw + "' given both as an argument and as a keyword");
    int64_t v;
    if (!integral_value(a.L, pos, v)) {
      if (a.is_number(pos))
        a.error(std::string("'") + kw + "' must be an integer, got " + num_str(lua_tonumber(a.L, pos)));
      a.error(std::string("'") + kw + "' must be an integer, got a " + type_name(a.L, pos));
    }
    return v;
  }
  return a.kw_integer(kw);
}

// Pushes a tensor, or its only value when `scalar` (np.random.rand() returns a number).
int push_result(lua_State* L, const Tensor& t, bool scalar) {
  if (scalar) push_scalar(L, t.item());
  else push_tensor(L, t);
  return 1;
}

namespace {

// ---- torch.tensor / np.array

// Pushes a new tensor, marked as requiring grad when the keyword requires_grad=true is given.
void push_created(lua_State* L, const Args& a, Tensor t) {
  if (a.kw_bool("requires_grad").value_or(false)) autograd::set_requires_grad(t, true, a.op);
  push_tensor(L, std::move(t));
}

int tensor_fn(lua_State* L, Args& a) {
  if (!a.has(1)) a.error("expected data (a number, a boolean, a table or a tensor) as argument 1");
  if (a.count() > 1 && !(a.style == Style::Numpy && a.count() == 2 && a.is_string(2)))
    a.error("expected one data argument (and a keyword table), got " + std::to_string(a.count()) + " arguments");
  std::optional<DType> dtype = dtype_kw(a);
  if (a.count() == 2) dtype = a.dtype(2);
  const Device device = device_kw(a);
  ops::check_creation_device(a.op, device);
  push_created(L, a, tensor_from_lua(L, 1, dtype, a.default_float(), a.op).to_device(device));
  return 1;
}

// ---- constant fills

template <int Kind>  // 0 empty, 1 zeros, 2 ones
int const_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  int last = a.style == Style::Numpy ? strip_dtype_string(a, dtype, 1) : a.count();
  Dims shape = shape_args(a, 1, last);
  DType dt = dtype.value_or(a.default_float());
  Device dev = device_kw(a);
  Tensor t = Kind == 0 ? ops::empty(shape, dt, dev) : Kind == 1 ? ops::zeros(shape, dt, dev) : ops::ones(shape, dt, dev);
  push_created(L, a, std::move(t));
  return 1;
}

// The dtype of a fill value when none is given: bool, int64, or the style's default float.
DType value_dtype(const Args& a, const Scalar& v) {
  return v.kind == Scalar::Float ? a.default_float() : v.natural_dtype();
}

Scalar fill_value(const Args& a, int i) {
  if (a.is_tensor(i)) {
    Tensor& t = a.tensor(i);
    if (t.numel() != 1)
      a.error("the fill value must be a number or a one-element tensor, got a tensor of shape " + t.sizes().str());
    return t.item();
  }
  if (!a.has(i)) a.error("expected a fill value as argument " + std::to_string(i));
  return a.scalar(i);
}

int full_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  int last = a.style == Style::Numpy ? strip_dtype_string(a, dtype, 2) : a.count();
  if (last != 2)
    a.error("expected full(shape, value) with the shape as a number or a table, got " + std::to_string(last) +
            " arguments");
  if (!a.is_table(1) && !a.is_number(1))
    a.error(std::string("expected a shape (a number or a table of numbers) as argument 1, got a ") +
            type_name(L, 1));
  Dims shape = shape_value(a, 1);
  Scalar v = fill_value(a, 2);
  push_created(L, a, ops::full(shape, v, dtype.value_or(value_dtype(a, v)), device_kw(a)));
  return 1;
}

// ---- ranges

Scalar number_scalar(const Args& a, int i, const char* what) {
  double v;
  if (!a.has(i) || !number_value(a.L, i, v))
    a.error(std::string("expected a number for ") + what + " (argument " + std::to_string(i) + "), got " +
            (a.has(i) ? type_name(a.L, i) : "nil"));
  return a.scalar(i);
}

int arange_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  int last = a.style == Style::Numpy ? strip_dtype_string(a, dtype, 1) : a.count();
  if (last < 1 || last > 3) a.error("expected arange(end), arange(start, end) or arange(start, end, step)");
  Scalar start(int64_t(0)), end, step(int64_t(1));
  if (last == 1) {
    end = number_scalar(a, 1, "end");
  } else {
    start = number_scalar(a, 1, "start");
    end = number_scalar(a, 2, "end");
    if (last == 3) step = number_scalar(a, 3, "step");
  }
  Device dev = device_kw(a);
  if (a.style == Style::Numpy) {
    // NumPy gives an empty array where torch reports the inconsistent sign.
    double s = start.to_double(), e = end.to_double(), st = step.to_double();
    if (std::isfinite(s) && std::isfinite(e) && std::isfinite(st) && st != 0 && ((st > 0 && e < s) || (st < 0 && e > s))) {
      bool all_int = start.kind != Scalar::Float && end.kind != Scalar::Float && step.kind != Scalar::Float;
      push_created(L, a, ops::empty(Dims{0}, dtype.value_or(all_int ? DType::Int64 : a.default_float()), dev));
      return 1;
    }
  }
  push_created(L, a, ops::arange(start, end, step, dtype, dev, a.default_float()));
  return 1;
}

int linspace_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  bool np = a.style == Style::Numpy;
  int last = np ? strip_dtype_string(a, dtype, 3) : a.count();
  if (last > 3) a.error("expected linspace(start, end, steps), got " + std::to_string(last) + " arguments");
  double start = number_scalar(a, 1, "start").to_double();
  double end = number_scalar(a, 2, "end").to_double();
  std::optional<int64_t> steps = integer_arg(a, 3, np ? "num" : "steps");
  if (!steps) {
    if (!np) a.error("expected the number of steps as argument 3 (linspace(start, end, steps))");
    steps = 50;
  }
  if (*steps < 0) a.error("number of steps must be non-negative, got " + std::to_string(*steps));
  DType dt = dtype.value_or(a.default_float());
  Device dev = device_kw(a);
  if (np && a.kw_bool("endpoint") == std::optional<bool>(false) && *steps > 0) {
    // endpoint=false: num values start + i * (stop - start) / num.
    double step = (end - start) / double(*steps);
    end = start + step * double(*steps - 1);
  }
  push_created(L, a, ops::linspace(start, end, *steps, dt, dev));
  return 1;
}

int eye_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  bool np = a.style == Style::Numpy;
  int last = np ? strip_dtype_string(a, dtype, 1) : a.count();
  if (last < 1 || last > (np ? 3 : 2)) a.error(np ? "expected eye(N[, M[, k]])" : "expected eye(n[, m])");
  int64_t n = a.integer(1);
  if (n < 0) a.error("n must be non-negative, got " + std::to_string(n));
  std::optional<int64_t> m = last >= 2 && a.has(2) ? integer_arg(a, 2, "m") : a.kw_integer(np ? "M" : "m");
  if (m && *m < 0) a.error("m must be non-negative, got " + std::to_string(*m));
  int64_t k = 0;
  if (np) k = integer_arg(a, 3, "k").value_or(0);
  push_created(L, a, ops::eye(n, m.value_or(-1), dtype.value_or(a.default_float()), device_kw(a), k));
  return 1;
}

int identity_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  int last = strip_dtype_string(a, dtype, 1);
  if (last != 1) a.error("expected identity(n)");
  int64_t n = a.integer(1);
  if (n < 0) a.error("n must be non-negative, got " + std::to_string(n));
  const Device device = device_kw(a);
  ops::check_creation_device(a.op, device);  // names identity, not the eye it calls
  push_created(L, a, ops::eye(n, n, dtype.value_or(a.default_float()), device));
  return 1;
}

// ---- torch.Generator: a random stream of its own, for the random ops' generator= keyword

constexpr const char* kGeneratorMeta = "tide.Generator";

// The userdata of a torch.Generator: its own Philox stream, or (torch.default_generator) the
// default stream of the running interpreter, looked up at each use.
struct GeneratorBox {
  std::shared_ptr<Generator> own;
  bool is_default = false;
};

Generator& generator_of(const Args& a, const GeneratorBox& box) {
  if (box.is_default) return default_generator();
  if (!box.own) a.error("this Generator was finalized and cannot be used");
  return *box.own;
}

GeneratorBox* generator_box(lua_State* L, int idx) {
  return static_cast<GeneratorBox*>(luaL_testudata(L, idx, kGeneratorMeta));
}

Generator& generator_arg(const Args& a, int i) {
  a.consumed(i);
  GeneratorBox* box = generator_box(a.L, i);
  if (!box) a.error(std::string("expected a torch.Generator, got a ") + type_name(a.L, i));
  return generator_of(a, *box);
}

// The generator= keyword: the stream a random op draws from (nullptr: the default one).
Generator* generator_kw(const Args& a) {
  if (a.push_kw("generator") == LUA_TNIL) {
    lua_pop(a.L, 1);
    return nullptr;
  }
  GeneratorBox* box = generator_box(a.L, -1);
  const char* got = type_name(a.L, -1);
  lua_pop(a.L, 1);  // the keyword table keeps the userdata alive during the call
  if (!box) a.error(std::string("keyword 'generator' must be a torch.Generator, got a ") + got);
  return &generator_of(a, *box);
}

int generator_gc(lua_State* L) {
  if (GeneratorBox* box = generator_box(L, 1)) box->own.reset();  // a second call finds it empty
  return 0;
}

int generator_manual_seed(lua_State* L, Args& a);
int generator_initial_seed(lua_State* L, Args& a);
int generator_seed(lua_State* L, Args& a);
int generator_get_state(lua_State* L, Args& a);
int generator_set_state(lua_State* L, Args& a);
int generator_tostring(lua_State* L, Args& a);

const Binding kGeneratorMethods[] = {
    {"Generator:manual_seed", generator_manual_seed, METHOD,
     "manual_seed(seed) -> Generator: restarts the generator's stream from seed."},
    {"Generator:initial_seed", generator_initial_seed, METHOD, "initial_seed() -> integer: the generator's seed."},
    {"Generator:seed", generator_seed, METHOD,
     "seed() -> integer: reseeds the generator from the operating system's entropy and returns the seed."},
    {"Generator:get_state", generator_get_state, METHOD,
     "get_state() -> Tensor: the generator's position, an int64 tensor {seed, offset} for set_state."},
    {"Generator:set_state", generator_set_state, METHOD,
     "set_state(state) -> Generator: returns the generator to a position from get_state."},
};

// Pushes a new Generator userdata (the metatable is made on first use).
void push_generator(lua_State* L, GeneratorBox box) {
  void* ud = lua_newuserdatauv(L, sizeof(GeneratorBox), 0);
  new (ud) GeneratorBox(std::move(box));
  if (luaL_newmetatable(L, kGeneratorMeta)) {
    lua_createtable(L, 0, int(std::size(kGeneratorMethods)));
    for (const Binding& b : kGeneratorMethods) {
      push_binding(L, b, Style::Torch);
      lua_setfield(L, -2, std::strchr(b.name, ':') + 1);
    }
    lua_setfield(L, -2, "__index");
    static const Binding tostring_binding{"Generator:__tostring", generator_tostring, METHOD,
                                          "__tostring() -> string"};
    push_binding(L, tostring_binding, Style::Torch);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, generator_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushliteral(L, "Generator");
    lua_setfield(L, -2, "__name");
  }
  lua_setmetatable(L, -2);
}

// torch.Generator(): a new stream with the default seed (manual_seed sets another).
int generator_new(lua_State* L, Args&) {
  push_generator(L, GeneratorBox{std::make_shared<Generator>(), false});
  return 1;
}

int default_generator_fn(lua_State* L, Args&) {
  push_generator(L, GeneratorBox{nullptr, true});
  return 1;
}

uint64_t seed_value(const Args& a, int i);

int generator_manual_seed(lua_State* L, Args& a) {
  generator_arg(a, 1).manual_seed(seed_value(a, 2));
  lua_pushvalue(L, 1);
  return 1;
}

int generator_initial_seed(lua_State* L, Args& a) {
  lua_pushinteger(L, lua_Integer(generator_arg(a, 1).seed()));
  return 1;
}

int generator_seed(lua_State* L, Args& a) {
  Generator& g = generator_arg(a, 1);
  std::random_device rd;
  uint64_t seed = ((uint64_t(rd()) << 32) | rd()) >> 1;  // non-negative as a Lua integer
  g.manual_seed(seed);
  lua_pushinteger(L, lua_Integer(seed));
  return 1;
}

int generator_get_state(lua_State* L, Args& a) {
  Generator& g = generator_arg(a, 1);
  Tensor state = Tensor::empty(Dims{2}, DType::Int64);
  state.data<int64_t>()[0] = int64_t(g.seed());
  state.data<int64_t>()[1] = int64_t(g.offset());
  push_tensor(L, state);
  return 1;
}

int generator_set_state(lua_State* L, Args& a) {
  Generator& g = generator_arg(a, 1);
  const Tensor& state = a.tensor(2);
  if (state.dtype() != DType::Int64 || state.dim() != 1 || state.numel() != 2 || !state.device().is_cpu())
    a.error("expected the int64 tensor {seed, offset} that get_state returns, got a " +
            std::string(dtype_name(state.dtype())) + " tensor of shape " + state.sizes().str());
  Tensor c = state.contiguous();
  g.set_state(uint64_t(c.data<int64_t>()[0]), uint64_t(c.data<int64_t>()[1]));
  lua_pushvalue(L, 1);
  return 1;
}

int generator_tostring(lua_State* L, Args& a) {
  GeneratorBox* box = generator_box(L, 1);
  a.consumed(1);
  std::string s = "Generator(<finalized>)";
  if (box && (box->is_default || box->own)) {
    Generator& g = generator_of(a, *box);
    s = std::string(box->is_default ? "Generator(default, seed=" : "Generator(seed=") + std::to_string(g.seed()) +
        ", offset=" + std::to_string(g.offset()) + ")";
  }
  lua_pushstring(L, s.c_str());
  return 1;
}

// ---- random

template <bool Normal>
int rand_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = dtype_kw(a);
  Dims shape = shape_args(a, 1, a.count());
  DType dt = dtype.value_or(a.default_float());
  Device dev = device_kw(a);
  Generator* gen = generator_kw(a);
  push_created(L, a, Normal ? ops::randn(shape, dt, dev, gen) : ops::rand(shape, dt, dev, gen));
  return 1;
}

// torch.randint(high, size) or torch.randint(low, high, size); size is a table (or a number
// in the three-argument form).
int randint_fn(lua_State* L, Args& a) {
  int n = a.count();
  if (n < 2 || n > 3 || !(a.is_table(n) || (n == 3 && a.is_number(n))))
    a.error("expected randint(high, size) or randint(low, high, size) with size a table, e.g. randint(0, 10, {3})");
  int64_t low = 0, high;
  if (n == 2) {
    high = a.integer(1);
  } else {
    low = a.integer(1);
    high = a.integer(2);
  }
  if (low >= high)
    a.error("expected low < high, got low=" + std::to_string(low) + ", high=" + std::to_string(high));
  Dims shape = shape_value(a, n);
  push_created(L, a, ops::randint(low, high, shape, dtype_kw(a).value_or(DType::Int64), device_kw(a), generator_kw(a)));
  return 1;
}

int randperm_fn(lua_State* L, Args& a) {
  if (a.count() != 1) a.error("expected randperm(n)");
  int64_t n = a.integer(1);
  if (n < 0) a.error("n must be non-negative, got " + std::to_string(n));
  push_created(L, a, ops::randperm(n, dtype_kw(a).value_or(DType::Int64), device_kw(a), generator_kw(a)));
  return 1;
}

// torch.multinomial(weights, n[, replacement][, {replacement=, generator=}]): 1-based
// categories drawn from each row of weights.
int multinomial_fn(lua_State* L, Args& a) {
  const Tensor& w = a.tensor(1);
  std::optional<int64_t> n = a.kw_integer("num_samples");
  std::optional<bool> replacement = a.kw_bool("replacement");
  if (a.has(2) && n) a.error("num_samples given both as argument 2 and as a keyword");
  if (a.has(3) && replacement) a.error("replacement given both as argument 3 and as a keyword");
  if (a.has(2)) n = a.integer(2);
  if (a.has(3)) replacement = a.boolean(3);
  if (!n) a.error("expected multinomial(weights, num_samples[, replacement])");
  push_tensor(L, ops::multinomial(w, *n, replacement.value_or(false), generator_kw(a)));
  return 1;
}

uint64_t seed_value(const Args& a, int i) {
  int64_t v;
  if (!a.has(i) || !integral_value(a.L, i, v)) {
    if (a.is_number(i)) a.error("the seed must be an integer, got " + num_str(lua_tonumber(a.L, i)));
    a.error(std::string("the seed must be an integer, got ") + (a.has(i) ? type_name(a.L, i) : "nothing"));
  }
  return uint64_t(v);
}

int manual_seed_fn(lua_State*, Args& a) {
  manual_seed(seed_value(a, 1));
  return 0;
}

int initial_seed_fn(lua_State* L, Args&) {
  lua_pushinteger(L, lua_Integer(default_generator().seed()));
  return 1;
}

// ---- *_like

template <int Kind>  // 0 empty, 1 zeros, 2 ones, 3 rand, 4 randn
int like_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  std::optional<DType> dtype = dtype_kw(a);
  int last = a.style == Style::Numpy ? strip_dtype_string(a, dtype, 1) : a.count();
  if (last != 1) a.error("expected one tensor argument (and a keyword table)");
  std::optional<Device> dev = device_kw_opt(a);
  Tensor t;
  switch (Kind) {
    case 0: t = ops::empty_like(x, dtype, dev); break;
    case 1: t = ops::zeros_like(x, dtype, dev); break;
    case 2: t = ops::ones_like(x, dtype, dev); break;
    case 3: t = ops::rand_like(x, dtype, dev); break;
    default: t = ops::randn_like(x, dtype, dev); break;
  }
  push_created(L, a, std::move(t));
  return 1;
}

int full_like_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  std::optional<DType> dtype = dtype_kw(a);
  int last = a.style == Style::Numpy ? strip_dtype_string(a, dtype, 2) : a.count();
  if (last != 2) a.error("expected full_like(x, value)");
  push_created(L, a, ops::full_like(x, fill_value(a, 2), dtype, device_kw_opt(a)));
  return 1;
}

// ---- in-place fills (methods)

// Random refills replace a tensor's values with ones that depend on nothing: on a tensor
// autograd is recording that is only allowed under no_grad (nn.init does that).
void check_refillable(const Args& a, const Tensor& x) {
  if (autograd::needs_recording({&x}))
    a.error("cannot refill a tensor that requires grad in place while grad mode is on (use torch.no_grad())");
}

int uniform_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  double lo = number_arg(a, 2, "from").value_or(0.0);
  double hi = number_arg(a, 3, "to").value_or(1.0);
  if (!(lo <= hi)) a.error("expects from <= to, got from=" + num_str(lo) + ", to=" + num_str(hi));
  check_refillable(a, x);
  ops::uniform_(x, lo, hi, generator_kw(a));
  lua_pushvalue(L, 1);
  return 1;
}

int normal_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  double mean = number_arg(a, 2, "mean").value_or(0.0);
  double std = number_arg(a, 3, "std").value_or(1.0);
  if (!(std >= 0)) a.error("expects std >= 0, got std=" + num_str(std));
  check_refillable(a, x);
  ops::normal_(x, mean, std, generator_kw(a));
  lua_pushvalue(L, 1);
  return 1;
}

int zero_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::zero_(x);
  lua_pushvalue(L, 1);
  return 1;
}

int fill_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::fill_(x, fill_value(a, 2));
  lua_pushvalue(L, 1);
  return 1;
}

const Binding kCreationBindings[] = {
    {"tensor", tensor_fn, TORCH,
     "tensor(data[, {dtype=, device=, requires_grad=}]) -> Tensor: a new tensor from a number, a boolean, nested tables "
     "or a tensor (copied). Lua integers give int64, floats the default float dtype, booleans bool."},
    {"array", tensor_fn, NUMPY,
     "array(data[, dtype][, {dtype=, device=, requires_grad=}]) -> array: a new array from nested tables or an array (copied); floats give float64."},
    {"empty", const_fn<0>, TORCH | NUMPY, "empty(size...[, {dtype=, device=, requires_grad=}]) -> Tensor: uninitialised values (bool: all false)."},
    {"zeros", const_fn<1>, TORCH | NUMPY, "zeros(size...[, {dtype=, device=, requires_grad=}]) -> Tensor of zeros."},
    {"ones", const_fn<2>, TORCH | NUMPY, "ones(size...[, {dtype=, device=, requires_grad=}]) -> Tensor of ones."},
    {"full", full_fn, TORCH | NUMPY,
     "full(size, value[, {dtype=, device=, requires_grad=}]) -> Tensor filled with value (dtype from the value by default)."},
    {"arange", arange_fn, TORCH | NUMPY,
     "arange([start,] end[, step][, {dtype=, device=, requires_grad=}]) -> 1-D Tensor start, start+step, ... below end "
     "(int64 for integer arguments). arange(4) is 0, 1, 2, 3."},
    {"linspace", linspace_fn, TORCH | NUMPY,
     "linspace(start, end, steps[, {steps=, num=, endpoint=, dtype=, device=, requires_grad=}]) -> 1-D Tensor of `steps` evenly spaced values, ends included "
     "(np: num defaults to 50, {endpoint=false})."},
    {"eye", eye_fn, TORCH | NUMPY, "eye(n[, m][, {m=, M=, k=, dtype=, device=, requires_grad=}]) -> n x m Tensor with ones on the diagonal (np: eye(N, M, k); M= and k= are NumPy's)."},
    {"identity", identity_fn, NUMPY, "identity(n[, dtype][, {dtype=, device=, requires_grad=}]) -> n x n identity array."},
    {"rand", rand_fn<false>, TORCH, "rand(size...[, {dtype=, device=, requires_grad=, generator=}]) -> Tensor uniform in [0, 1) (drawn from generator, a torch.Generator, when given)."},
    {"randn", rand_fn<true>, TORCH, "randn(size...[, {dtype=, device=, requires_grad=, generator=}]) -> Tensor of standard normal values."},
    {"randint", randint_fn, TORCH,
     "randint([low,] high, size[, {dtype=, device=, requires_grad=, generator=}]) -> int64 Tensor uniform over [low, high); size is a table."},
    {"randperm", randperm_fn, TORCH, "randperm(n[, {dtype=, device=, requires_grad=, generator=}]) -> int64 Tensor: a random permutation of 1..n."},
    {"multinomial", multinomial_fn, METHOD | TORCH,
     "multinomial(weights, num_samples[, replacement=false][, {num_samples=, replacement=, generator=}]) -> int64 Tensor: "
     "num_samples 1-based category indices drawn from each row of the non-negative weights (1-D or 2-D); without "
     "replacement no category is drawn twice."},
    {"Generator", generator_new, TORCH,
     "Generator() -> Generator: a random stream of its own for the generator= keyword of rand, randn, randint, "
     "randperm, multinomial, uniform_ and normal_ (g:manual_seed(s), g:initial_seed(), g:seed(), g:get_state(), "
     "g:set_state(state))."},
    {"_default_generator", default_generator_fn, TORCH,
     "_default_generator() -> Generator: the global stream as a Generator (torch.default_generator)."},
    {"manual_seed", manual_seed_fn, TORCH, "manual_seed(seed): reseeds the global generator (same seed, same numbers)."},
    {"initial_seed", initial_seed_fn, TORCH, "initial_seed() -> integer: the seed of the global generator."},
    {"empty_like", like_fn<0>, TORCH | NUMPY, "empty_like(x[, {dtype=, device=, requires_grad=}]) -> Tensor shaped like x, uninitialised (bool: all false)."},
    {"zeros_like", like_fn<1>, TORCH | NUMPY, "zeros_like(x[, {dtype=, device=, requires_grad=}]) -> zeros shaped like x."},
    {"ones_like", like_fn<2>, TORCH | NUMPY, "ones_like(x[, {dtype=, device=, requires_grad=}]) -> ones shaped like x."},
    {"full_like", full_like_fn, TORCH | NUMPY, "full_like(x, value[, {dtype=, device=, requires_grad=}]) -> x's shape filled with value."},
    {"rand_like", like_fn<3>, TORCH, "rand_like(x[, {dtype=, device=, requires_grad=}]) -> uniform [0, 1) values shaped like x."},
    {"randn_like", like_fn<4>, TORCH, "randn_like(x[, {dtype=, device=, requires_grad=}]) -> standard normal values shaped like x."},
    {"uniform_", uniform_inplace, METHOD, "x:uniform_([from[, to]][, {from=, to=, generator=}]) -> x: fills x with uniform values in [from, to)."},
    {"normal_", normal_inplace, METHOD, "x:normal_([mean[, std]][, {mean=, std=, generator=}]) -> x: fills x with normal values."},
    {"zero_", zero_inplace, METHOD, "x:zero_() -> x: fills x with zeros."},
    {"fill_", fill_inplace, METHOD, "x:fill_(value) -> x: fills x with value."},
};

}  // namespace

void register_creation_bindings() {
  register_bindings(kCreationBindings, sizeof(kCreationBindings) / sizeof(kCreationBindings[0]));
}

}  // namespace tide::lua
