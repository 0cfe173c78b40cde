// The binding toolkit: tensor userdata, GC accounting, argument parsing, conversion of Lua
// tables to tensors and back, and the registry that wraps bindings as Lua functions.
#include "lua_api.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "../tensor/allocator.hpp"
#include "../tensor/backend.hpp"
#include "../tensor/autograd/functions.hpp"
#include "../tensor/interrupt.hpp"
#include "../tensor/memory_budget.hpp"
#include "../tensor/profiler/profiler.hpp"
#include "autocast.hpp"
#include "complex_value.hpp"

namespace tide::lua {

// ---------------------------------------------------------------------------------------
// Tensor userdata

namespace {

// Tensor bytes not yet reported to the collector, and allocated since the last full
// collection, per thread (each interpreter runs on one thread at a time). One thread-local
// object, so that a push looks up one thread-local address, not four.
struct GcCounters {
  size_t debt = 0;
  size_t since_full = 0;
  size_t live_after_full = 0;
  size_t device_since_full = 0;
  bool large_pushed = false;  // a tensor of kLargeTensorBytes or more waits for its step
};
constinit thread_local GcCounters t_gc{};
constexpr size_t kGcStepBytes = 256 * 1024;
constexpr size_t kMinFullCollectBytes = size_t(64) << 20;
constexpr size_t kDeviceFullCollectBytes = size_t(256) << 20;
constexpr int kGcDebtDivisor = 16;
constexpr size_t kLargeTensorBytes = size_t(1) << 20;
// The C++ objects behind each tensor pushed to Lua, which the collector cannot see either:
// its TensorImpl and Storage (408 bytes on x86-64), the shared_ptr control block and the
// allocator's headers. They are counted in full (times kGcDebtDivisor, as Lua-heap bytes),
// so that a loop of small ops has a minor collection every ~1,000 temporaries and recycles
// their objects while they are still in the core's L2. Counting data bytes only, a minor
// collection came each ~8,000 temporaries (20% of the Lua heap, in ~48-byte userdata), and
// a + b on 10 float64 took 0.55-0.65 us in a fresh process and 1.4-1.5 us after 3000
// linear-regression epochs had grown the Lua heap from 1.7 to 2.0 MB; counted, 0.35 and
// 0.38-0.40 us (2026-11-27, Zen 4 with 1 MB L2, same instructions per op). Steps of
// medium tensors barely change (a two-layer step's objects add ~10% to its data's count).
constexpr size_t kTensorObjectBytes = 450;

}  // namespace

// Moves the reported bytes to the count since the last full collection and runs one when the
// rule of gc_account (below) says so; returns whether it ran.
static bool collect_fully_if_due(lua_State* L, GcCounters& c) {
  c.since_full += c.debt;
  c.debt = 0;
  const size_t threshold = std::max(kMinFullCollectBytes, c.live_after_full);
  if (c.since_full <= threshold) return false;
  c.since_full = 0;
  if (cpu_allocator_stats().allocated_bytes <= c.live_after_full + threshold) return false;
  lua_gc(L, LUA_GCCOLLECT);
  c.device_since_full = 0;
  c.live_after_full = cpu_allocator_stats().allocated_bytes;
  return true;
}

// Lua's collector cannot see tensor memory, so every tensor's bytes are reported here: each
// 256 KiB drive an incremental step as if a sixteenth of that had been allocated in Lua, and
// once the tensors allocated since the last full collection exceed both 64 MiB and what was
// live after it, and the allocator's count of tensor bytes in use (dead ones not yet collected
// included) has grown by as much since then, a full collection runs. The second rule is what
// bounds memory in generational mode (lua.c's default), where steps are minor collections
// that never free old tensors. The growth condition spares loops whose temporaries die young,
// freed by minor collections: a full collection (~270 us over the library's Lua heap) each
// 64 MiB of temporaries had a + b on 10^6 float64 take ~470 us instead of ~300. The
// sixteenth: Lua starts a major collection when its heap seems to have grown by its own
// size, and a major collection traverses the whole heap; reporting tensor bytes
// one for one made that one traversal of the Lua heap per heap-size of tensors (a 265 KiB
// heap cost clone of a 51 KB tensor 6.7 us instead of 2.0 us), while a sixteenth still
// collects dead temporaries within a few MiB.
// Device tensors drive no incremental steps: a cycle over tide's Lua heap (~800 KiB, ~270 us)
// per few MiB cost more than the GPU work itself (an H200's float64 1000x1000 product: 156 us
// with the cycle its 8 MB result paid for, 54 us without). One of 1 MiB or more has the
// next binding call start with a minor collection, as a large CPU tensor does (in
// generational mode it frees the dead temporaries at once, and they go back to the device
// allocator's cache); the rest wait for a full collection each 256 MiB of device tensors.
void gc_account(lua_State* L, size_t nbytes, bool on_device) {
  GcCounters& c = t_gc;
  if (on_device) {
    c.device_since_full += nbytes;
    if (c.device_since_full >= kDeviceFullCollectBytes) {
      lua_gc(L, LUA_GCCOLLECT);
      c.device_since_full = 0;
    } else if (nbytes >= kLargeTensorBytes) {
      c.large_pushed = true;  // the next call's minor collection frees dead device temporaries
    }
    return;
  }
  c.debt += nbytes + kTensorObjectBytes * kGcDebtDivisor;
  // A large tensor's step waits for the next binding call (collect_after_large_push), unless
  // one already waits: pushes from elsewhere than a binding call still drive steps.
  if (nbytes >= kLargeTensorBytes && !c.large_pushed) {
    c.large_pushed = true;
    return;
  }
  if (c.debt < kGcStepBytes) [[likely]]
    return;
  int kb = int(std::min<size_t>(c.debt / 1024, 1 << 30));
  if (!collect_fully_if_due(L, c)) lua_gc(L, LUA_GCSTEP, std::max(1, kb / kGcDebtDivisor));
}

// The registry key of the Tensor metatable (a light userdata: no string hashing per push).
static const char kMetaKey = 0;

void remember_tensor_metatable(lua_State* L) {
  lua_pushvalue(L, -1);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kMetaKey);
  // Also in the thread's extra space (copied to coroutines), for a pointer compare in
  // to_tensor; left alone if a host already uses that space (tide's own states zero it at
  // creation; a host that loads tide as a module into its state should do the same).
  auto** slot = static_cast<const void**>(lua_getextraspace(L));
  if (*slot == nullptr) *slot = lua_topointer(L, -1);
}

void push_tensor(lua_State* L, Tensor t) {
  if (t.defined() && CallSemantics::flags(t.impl())) [[unlikely]]
    t.impl()->numpy = true;
  // Data bytes (the userdata itself is counted by Lua; gc_account adds the C++ objects' share).
  // At most the storage's bytes: a view
  // expanded to 2^40 elements over one holds one element, and counting its logical bytes
  // forced a full collection at every push.
  size_t bytes = t.defined() && t.storage() ? std::min(t.nbytes(), t.storage()->nbytes()) : 0;
  const bool on_device = t.defined() && !t.device().is_cpu();
  void* ud = lua_newuserdatauv(L, sizeof(Tensor), 0);
  new (ud) Tensor(std::move(t));
  lua_rawgetp(L, LUA_REGISTRYINDEX, &kMetaKey);
  lua_setmetatable(L, -2);
  gc_account(L, bytes, on_device);
}

// The Tensor userdata at idx, or nullptr (no error) when the value is something else.
Tensor* tensor_slot(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TUSERDATA || !lua_getmetatable(L, idx)) return nullptr;
  const void* mt = lua_topointer(L, -1);
  lua_pop(L, 1);
  if (mt != *static_cast<const void**>(lua_getextraspace(L))) {
    lua_rawgetp(L, LUA_REGISTRYINDEX, &kMetaKey);
    bool same = lua_topointer(L, -1) == mt;
    lua_pop(L, 1);
    if (!same) return nullptr;
  }
  return static_cast<Tensor*>(lua_touserdata(L, idx));
}

// t itself (nullptr too), unless it was freed: an error.
static Tensor* live(Tensor* t) {
  TIDE_CHECK(!t || t->defined(), "tensor: this tensor was freed (x:free() or <close>) and cannot be used");
  return t;
}

Tensor* to_tensor(lua_State* L, int idx) { return live(tensor_slot(L, idx)); }

void push_scalar(lua_State* L, const Scalar& s) {
  switch (s.kind) {
    case Scalar::Bool: lua_pushboolean(L, s.i != 0); break;
    case Scalar::Int: lua_pushinteger(L, s.i); break;
    case Scalar::Complex: push_complex(L, s.f, s.im); break;
    default: lua_pushnumber(L, s.f); break;
  }
}

// A complex number at idx as a Scalar, or an error when the binding takes none.
static bool complex_scalar(lua_State* L, int idx, const Args& a, Scalar& out) {
  double re, im;
  if (!complex_value(L, idx, re, im)) return false;
  TIDE_CHECK(a.complex_ok, a.op, ": complex numbers are not supported");
  out = Scalar::complex(re, im);
  return true;
}

// Nested tables for dims [d, ndim) starting at element offset `off` (in elements).
// The nested lists of x:tolist(). A dim of a view can be 2^40 long (expand), so the array part
// is preallocated only up to 2^20 entries (a Lua allocation of 2^40 would fail inside this
// binding) and the walk checks the interrupt as it goes (found by the API fuzzer: tolist of
// an expanded {2^40, 0} view ran until memory ran out, deaf to Ctrl-C).
// Each Lua table it makes, and each doubling of one past 2^20 entries, is first checked
// against the interpreter's memory budget: a Lua memory error raised inside this walk would
// longjmp over the binding's C++ objects and leak them (found by the fuzzer under LSan).
static void push_list_rec(lua_State* L, const Tensor& t, int d, int64_t off) {
  const int64_t prealloc = std::min<int64_t>(t.size(d), 1 << 20);
  check_host_memory("tolist", size_t(prealloc) * 16 + 64);
  capture::note_host_access();
  lua_createtable(L, int(prealloc), 0);
  for (int64_t i = 0; i < t.size(d); ++i) {
    if ((i & 0xffff) == 0xffff) check_interrupt();
    if (i >= prealloc && (i & (i - 1)) == 0) check_host_memory("tolist", size_t(i) * 32);
    int64_t o = off + i * t.stride(d);
    if (d + 1 < t.dim()) {
      push_list_rec(L, t, d + 1, o);
    } else {
      TIDE_DISPATCH_ALL_AND_COMPLEX(t.dtype(), "tolist", [&] {
        push_scalar(L, Scalar::of(static_cast<const scalar_t*>(t.storage()->data())[o]));
      });
    }
    lua_rawseti(L, -2, i + 1);
  }
}

void push_tolist(lua_State* L, const Tensor& t0) {
  const Tensor t = t0.to_device({});  // a device tensor is read from a host copy
  if (t.dim() == 0) {
    push_scalar(L, t.item());
    return;
  }
  TIDE_CHECK(lua_checkstack(L, t.dim() + 4), "tolist: too many dims");
  push_list_rec(L, t, 0, t.offset());
}

namespace {

// Walks a nested Lua table: records the shape from the first element of each level, checks
// every level is rectangular, and collects the leaves.
struct TableReader {
  lua_State* L;
  const char* op;
  Dims shape;
  std::vector<double> fvals;
  std::vector<int64_t> ivals;
  std::vector<double> imags;  // the imaginary parts, once a complex value was seen
  bool any_float = false, all_bool = true, any_value = false, any_complex = false;

  void add_complex(double re, double im) {
    if (!any_complex) imags.assign(fvals.size(), 0.0);
    any_complex = any_float = true, all_bool = false;
    fvals.push_back(re);
    ivals.push_back(0);
    imags.push_back(im);
  }

  void read(int idx, int depth) {
    double re, im;
    if (lua_istable(L, idx) && !complex_value(L, idx, re, im)) {
      lua_Integer n = lua_Integer(lua_rawlen(L, idx));
      TIDE_CHECK(lua_checkstack(L, 4), op, ": table nested too deeply");
      if (depth == shape.size()) {
        TIDE_CHECK(depth < kMaxDims, op, ": table nested deeper than ", kMaxDims, " levels");
        TIDE_CHECK(fvals.empty() && !any_value, op, ": ragged nested table (a number next to a table at depth ", depth + 1, ")");
        shape.push_back(n);
      } else if (depth > shape.size() || shape[depth] != n) {
        TIDE_FAIL(op, ": ragged nested table: expected ", depth < shape.size() ? shape[depth] : 0,
                  " elements at depth ", depth + 1, ", got ", n);
      }
      for (lua_Integer i = 1; i <= n; ++i) {
        lua_rawgeti(L, idx, i);
        read(lua_gettop(L), depth + 1);
        lua_pop(L, 1);
      }
      return;
    }
    TIDE_CHECK(depth == shape.size(), op, ": ragged nested table (a value where a table of ",
               depth < shape.size() ? shape[depth] : 0, " was expected at depth ", depth + 1, ")");
    any_value = true;
    int ty = lua_type(L, idx);
    const size_t before = fvals.size();
    read_leaf(idx, ty);
    if (any_complex && imags.size() == before) imags.push_back(0.0);
  }

  void read_leaf(int idx, int ty) {
    double re, im;
    if (ty == LUA_TBOOLEAN) {
      bool b = lua_toboolean(L, idx);
      fvals.push_back(b);
      ivals.push_back(b);
    } else if (ty == LUA_TNUMBER) {
      all_bool = false;
      if (lua_isinteger(L, idx)) {
        lua_Integer v = lua_tointeger(L, idx);
        ivals.push_back(v);
        fvals.push_back(double(v));
      } else {
        any_float = true;
        double v = lua_tonumber(L, idx);
        fvals.push_back(v);
        ivals.push_back(0);
      }
    } else if (complex_value(L, idx, re, im)) {
      add_complex(re, im);
    } else if (Tensor* t = to_tensor(L, idx)) {
      TIDE_CHECK(t->numel() == 1 && t->dim() == 0, op, ": a tensor inside a table must be 0-dim, got shape ",
                 t->sizes().str());
      Scalar s = t->item();
      if (s.is_complex()) return add_complex(s.f, s.im);
      all_bool = all_bool && s.kind == Scalar::Bool;
      any_float = any_float || s.kind == Scalar::Float;
      fvals.push_back(s.to_double());
      ivals.push_back(s.kind == Scalar::Float ? 0 : s.i);
    } else {
      TIDE_FAIL(op, ": expected numbers or booleans in the table, got a ", lua_typename(L, ty));
    }
  }
};

}  // namespace

Tensor tensor_from_lua(lua_State* L, int idx, std::optional<DType> dtype, DType float_default,
                       const char* op) {
  idx = lua_absindex(L, idx);
  if (Tensor* t = to_tensor(L, idx)) return dtype ? t->to(*dtype, true) : t->clone();
  TableReader r{L, op, {}, {}, {}, {}};
  r.read(idx, 0);
  DType inferred = r.any_complex ? complex_of(float_default)
                   : r.any_float ? float_default
                   : (r.all_bool && r.any_value) ? DType::Bool
                                                 : DType::Int64;
  if (!r.any_value && r.fvals.empty()) inferred = float_default;  // torch.tensor{} is float
  DType dt = dtype.value_or(inferred);
  for (size_t i = 0; r.any_complex && !is_complex(dt) && i < r.imags.size(); ++i)
    TIDE_CHECK(r.imags[i] == 0 && !std::isnan(r.imags[i]), op, ": cannot convert the complex value (", r.fvals[i],
               std::signbit(r.imags[i]) ? "" : "+", r.imags[i], "j) to ", dtype_name(dt));
  Tensor out = Tensor::empty(r.shape, dt);
  // The values are written by a host kernel that holds them (DeviceBackend::host), so that
  // torch.compile replays a tensor made from Lua values inside a compiled function (its
  // guards make those values the recording's constants).
  struct Values {
    std::vector<double> f, im;
    std::vector<int64_t> i;
    bool any_float, any_complex;
  };
  auto v = std::make_shared<const Values>(
      Values{std::move(r.fvals), std::move(r.imags), std::move(r.ivals), r.any_float, r.any_complex});
  run_host_kernel(op, {&out}, [out, v, dt, name = std::string(op)] {
    const char* op = name.c_str();
    const int64_t n = out.numel();
    if (is_complex(dt)) {
      TIDE_DISPATCH_COMPLEX(dt, op, [&] {
        using R = typename scalar_t::value_type;
        scalar_t* p = out.data<scalar_t>();
        for (int64_t i = 0; i < n; ++i)
          p[i] = scalar_t(R(v->any_float ? v->f[i] : double(v->i[i])), R(v->any_complex ? v->im[i] : 0.0));
      });
      return;
    }
    TIDE_DISPATCH_ALL(dt, op, [&] {
      scalar_t* p = out.data<scalar_t>();
      for (int64_t i = 0; i < n; ++i) {
        if (v->any_float || is_floating(dt)) {
          if constexpr (std::is_same_v<scalar_t, bool>) p[i] = v->f[i] != 0;
          else if constexpr (std::is_integral_v<scalar_t>) {
            double x = v->f[i];
            TIDE_CHECK(x >= -9223372036854775808.0 && x < 18446744073709551616.0, op, ": cannot convert ", x, " to ",
                       dtype_name(dt));
            p[i] = Scalar::int_from_double<scalar_t>(x);
          } else if (!v->any_float) p[i] = scalar_t(double(v->i[i]));
          else p[i] = scalar_t(v->f[i]);
        } else {
          if constexpr (std::is_same_v<scalar_t, bool>) p[i] = v->i[i] != 0;
          else p[i] = scalar_t(v->i[i]);
        }
      }
    });
  });
  return out;
}

// The value of a 0-dim tensor at idx, which NumPy and PyTorch accept wherever they take a
// Python number (np.zeros(t.max()), torch.arange(0, n)); false for anything else.
static bool zero_dim_value(lua_State* L, int idx, Scalar& out) {
  Tensor* t = lua_type(L, idx) == LUA_TUSERDATA ? to_tensor(L, idx) : nullptr;
  if (!t || t->dim() != 0) return false;
  out = t->item();
  return true;
}

bool integral_value(lua_State* L, int idx, int64_t& out) {
  if (lua_type(L, idx) != LUA_TNUMBER) {
    Scalar s;
    if (!zero_dim_value(L, idx, s) || s.is_floatlike()) return false;
    out = s.i;
    return true;
  }
  if (lua_isinteger(L, idx)) {
    out = lua_tointeger(L, idx);
    return true;
  }
  double d = lua_tonumber(L, idx);
  if (std::floor(d) != d || !(std::fabs(d) < 9.2e18)) return false;
  out = int64_t(d);
  return true;
}

bool number_value(lua_State* L, int idx, double& out) {
  Scalar s;
  if (lua_type(L, idx) == LUA_TNUMBER) out = lua_tonumber(L, idx);
  else if (zero_dim_value(L, idx, s) && s.kind != Scalar::Bool && !s.is_complex()) out = s.to_double();
  else return false;
  return true;
}

// ---------------------------------------------------------------------------------------
// Args

static bool holds_numpy_array(lua_State* L, int idx);

Args::Args(lua_State* L_, const char* op_, Style style_, const ArgSpec* spec)
    : L(L_), op(op_), style(style_), spec_(spec) {
  int n = lua_gettop(L);
  while (n > 0 && lua_isnil(L, n)) --n;  // trailing nils are absent arguments, as in Lua APIs
  // A binding that takes no keywords sees a trailing table as a positional argument
  // (torch.is_tensor{lr = 1} is false, not an unknown keyword).
  const bool takes_keywords = !spec_ || spec_->open || !spec_->keywords.empty();
  if (takes_keywords && n >= 1 && lua_type(L, n) == LUA_TTABLE && !lua_getmetatable(L, n)) {
    bool kw = lua_rawgeti(L, n, 1) == LUA_TNIL;
    lua_pop(L, 1);
    if (kw) {
      lua_pushnil(L);
      if (lua_next(L, n)) {
        lua_pop(L, 2);
        kw_ = n;
        --n;
      }
    }
  } else if (takes_keywords && n >= 1 && lua_type(L, n) == LUA_TTABLE) {
    lua_pop(L, 1);  // the metatable pushed by lua_getmetatable
  }
  npos_ = n;
  if (kw_ && spec_ && !spec_->open) check_keyword_names();
  numpy = style == Style::Numpy;
  for (int i = 1; i <= n && !numpy; ++i) {
    int ty = lua_type(L, i);
    if (ty == LUA_TUSERDATA) {
      Tensor* t = tensor_slot(L, i);
      if (i <= kScanned) scan_[i - 1] = t, nscanned_ = i;
      numpy = t && t->defined() && t->impl()->numpy;
    } else {
      if (i <= kScanned) nscanned_ = i;  // scan_[i - 1] stays nullptr: not a tensor
      numpy = ty == LUA_TTABLE && holds_numpy_array(L, i);
    }
  }
}

Tensor* Args::slot(int i) const { return i >= 1 && i <= nscanned_ ? scan_[i - 1] : tensor_slot(L, i); }

// ---------------------------------------------------------------------------------------
// NumPy semantics (docs/translation.md)

namespace {
thread_local CallSemantics* t_numpy_call = nullptr;  // the innermost call, when it is NumPy's
}  // namespace

CallSemantics::CallSemantics(const Args& a) : slot_(&t_numpy_call), saved_(*slot_), numpy_(a.numpy) {
  if (!numpy_) {
    if (saved_) {  // a torch call made inside a NumPy one (a callback)
      scope_.emplace(false);
      *slot_ = nullptr;
    }
    return;
  }
  scope_.emplace(true);
  *slot_ = this;
  auto note = [&](int idx) {
    Tensor* t = tensor_slot(a.L, idx);
    if (t && t->defined() && !t->impl()->numpy && nplain_ < int(std::size(plain_))) plain_[nplain_++] = t->impl();
  };
  int top = lua_gettop(a.L);
  for (int i = 1; i <= top; ++i) {
    if (lua_type(a.L, i) == LUA_TTABLE) {  // the keyword table's out=
      lua_pushliteral(a.L, "out");
      lua_rawget(a.L, i);
      note(-1);
      lua_pop(a.L, 1);
    } else {
      note(i);
    }
  }
}

CallSemantics::~CallSemantics() { *slot_ = saved_; }

bool CallSemantics::flags(const TensorImpl* impl) {
  const CallSemantics* c = t_numpy_call;
  if (!c || impl->numpy) return false;
  for (int i = 0; i < c->nplain_; ++i)
    if (c->plain_[i] == impl) return false;
  return true;
}

// A NumPy array at idx, or a list whose elements are tensors with a NumPy array among them.
static bool holds_numpy_array(lua_State* L, int idx) {
  int ty = lua_type(L, idx);
  if (ty == LUA_TUSERDATA) {
    Tensor* t = tensor_slot(L, idx);
    return t && t->defined() && t->impl()->numpy;
  }
  if (ty != LUA_TTABLE) return false;
  bool found = false;
  for (lua_Integer k = 1; !found; ++k) {  // a list of numbers stops at its first element
    lua_rawgeti(L, idx, k);
    Tensor* t = tensor_slot(L, -1);
    found = t && t->defined() && t->impl()->numpy;
    lua_pop(L, 1);
    if (!t) break;
  }
  return found;
}

void Args::error(const std::string& msg) const { TIDE_FAIL(op, ": ", msg); }

bool Args::has(int i) const {
  touch(i);
  return i >= 1 && i <= npos_ && !lua_isnil(L, i);
}
int Args::lua_type_at(int i) const {
  touch(i);
  return i >= 1 && i <= npos_ ? lua_type(L, i) : LUA_TNONE;
}
bool Args::is_tensor(int i) const {
  touch(i);
  return i >= 1 && i <= npos_ && slot(i);
}
bool Args::is_number(int i) const { return lua_type_at(i) == LUA_TNUMBER; }
bool Args::is_table(int i) const { return lua_type_at(i) == LUA_TTABLE; }
bool Args::is_string(int i) const { return lua_type_at(i) == LUA_TSTRING; }

static const char* describe(lua_State* L, int idx) {
  if (tensor_slot(L, idx)) return "tensor";
  return lua_typename(L, lua_type(L, idx));
}

// With NumPy semantics, the Lua list at positional i as np.array makes it, put in the list's
// place on the stack (so the reference stays valid for the call); else nullptr.
Tensor* Args::list_as_array(int i) const {
  if (!numpy || i < 1 || i > npos_ || lua_type(L, i) != LUA_TTABLE) return nullptr;
  if (lua_getmetatable(L, i)) {  // a complex number or another object: no list
    lua_pop(L, 1);
    return nullptr;
  }
  push_tensor(L, tensor_from_lua(L, i, std::nullopt, DType::Float64, op));
  lua_replace(L, i);
  if (i <= nscanned_) scan_[i - 1] = tensor_slot(L, i);
  return to_tensor(L, i);
}

Tensor& Args::tensor(int i) const {
  touch(i);
  Tensor* t = i <= npos_ ? live(slot(i)) : nullptr;
  if (!t) t = list_as_array(i);
  if (!t) TIDE_FAIL(op, ": expected a tensor as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
  refuse_complex(*t);
  return *t;
}

Tensor Args::tensor_like(int i) const {
  touch(i);
  if (Tensor* t = i <= npos_ ? live(slot(i)) : nullptr) return refuse_complex(*t);
  int ty = lua_type_at(i);
  if (ty == LUA_TNUMBER || ty == LUA_TBOOLEAN) {
    Scalar s = scalar(i);
    Tensor t = Tensor::empty({}, s.kind == Scalar::Float ? default_float() : s.natural_dtype());
    ops::fill_(t, s);
    return t;
  }
  if (ty == LUA_TTABLE) return refuse_complex(tensor_from_lua(L, i, std::nullopt, default_float(), op));
  TIDE_FAIL(op, ": expected a tensor, a number or a table as argument ", i, ", got ",
            i <= npos_ ? describe(L, i) : "nothing");
}

Scalar Args::scalar(int i) const {
  int ty = lua_type_at(i);
  Scalar zero_dim;
  if (ty == LUA_TUSERDATA && zero_dim_value(L, i, zero_dim)) {
    if (zero_dim.is_complex() && !complex_ok) fail_complex(*to_tensor(L, i));
    return zero_dim;
  }
  if (ty == LUA_TBOOLEAN) return Scalar(bool(lua_toboolean(L, i)));
  if (ty == LUA_TTABLE && i <= npos_ && complex_scalar(L, i, *this, zero_dim)) return zero_dim;
  if (ty == LUA_TNUMBER) {
    if (lua_isinteger(L, i)) return Scalar(int64_t(lua_tointeger(L, i)));
    return Scalar(double(lua_tonumber(L, i)));
  }
  TIDE_FAIL(op, ": expected a number as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

TensorOrScalar Args::tensor_or_scalar(int i) const {
  touch(i);
  if (Tensor* t = i <= npos_ ? live(slot(i)) : nullptr) return TensorOrScalar(refuse_complex(*t));
  int ty = lua_type_at(i);
  if (ty == LUA_TNUMBER || ty == LUA_TBOOLEAN) return TensorOrScalar(scalar(i));
  if (Scalar c; ty == LUA_TTABLE && complex_scalar(L, i, *this, c)) return TensorOrScalar(c);
  if (Tensor* t = list_as_array(i)) return TensorOrScalar(refuse_complex(*t));
  TIDE_FAIL(op, ": expected a tensor or a number as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

int64_t Args::integer(int i) const {
  touch(i);
  int64_t v;
  if (i <= npos_ && integral_value(L, i, v)) return v;
  if (is_number(i)) TIDE_FAIL(op, ": expected an integer as argument ", i, ", got ", lua_tonumber(L, i));
  TIDE_FAIL(op, ": expected an integer as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

double Args::number(int i) const {
  touch(i);
  double v;
  if (i <= npos_ && number_value(L, i, v)) return v;
  TIDE_FAIL(op, ": expected a number as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

bool Args::boolean(int i) const {
  if (lua_type_at(i) == LUA_TBOOLEAN) return lua_toboolean(L, i);
  TIDE_FAIL(op, ": expected a boolean as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

std::string Args::string(int i) const {
  if (is_string(i)) return lua_tostring(L, i);
  TIDE_FAIL(op, ": expected a string as argument ", i, ", got ", i <= npos_ ? describe(L, i) : "nothing");
}

static DType parse_dtype_or_fail(const char* op, const std::string& s) {
  DType dt;
  std::string name = s;
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  TIDE_CHECK(parse_dtype(name, dt), op, ": unknown dtype '", quote_user(s),
             "' (expected bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64 or complex128)");
  return dt;
}

DType Args::dtype(int i) const { return parse_dtype_or_fail(op, string(i)); }

Dims Args::shape_from(int i, bool allow_infer) const {
  touch_from(i);
  Dims shape;
  auto add = [&](int idx, int pos) {
    int64_t v;
    if (!integral_value(L, idx, v)) {
      if (lua_type(L, idx) == LUA_TNUMBER)
        TIDE_FAIL(op, ": sizes must be integers, got ", lua_tonumber(L, idx), " at position ", pos);
      TIDE_FAIL(op, ": sizes must be integers, got a ", describe(L, idx), " at position ", pos);
    }
    TIDE_CHECK(v >= 0 || (allow_infer && v == -1), op, ": sizes must be non-negative, got ", v,
               " at position ", pos);
    shape.push_back(v);
  };
  if (is_table(i) && !is_tensor(i)) {
    TIDE_CHECK(npos_ == i, op, ": give the shape either as one table or as numbers, not both");
    int n = int(lua_rawlen(L, i));
    for (int k = 1; k <= n; ++k) {
      lua_rawgeti(L, i, k);
      try {
        add(lua_gettop(L), k);
      } catch (...) {
        lua_pop(L, 1);
        throw;
      }
      lua_pop(L, 1);
    }
    return shape;
  }
  for (int k = i; k <= npos_; ++k) add(k, k - i + 1);
  return shape;
}

std::vector<int64_t> Args::int_list_from(int i) const {
  if (is_table(i)) touch(i);
  else touch_from(i);
  std::vector<int64_t> out;
  if (is_table(i)) {
    int n = int(lua_rawlen(L, i));
    for (int k = 1; k <= n; ++k) {
      lua_rawgeti(L, i, k);
      int64_t v;
      bool ok = integral_value(L, -1, v);
      lua_pop(L, 1);
      TIDE_CHECK(ok, op, ": expected a list of integers, element ", k, " is not an integer");
      out.push_back(v);
    }
    return out;
  }
  for (int k = i; k <= npos_; ++k) out.push_back(integer(k));
  return out;
}

int Args::dim_value(int64_t d, int ndim) const {
  int n = std::max(ndim, 1);
  if (d >= 1 && d <= n) return int(d - 1);
  if (d <= -1 && d >= -n) return int(n + d);
  if (d == 0)
    TIDE_FAIL(op, ": dim 0 is out of range: dims are 1-based (valid 1..", n, " or -", n, "..-1)");
  TIDE_FAIL(op, ": dim ", d, " is out of range for a tensor of ", ndim, " dims (valid 1..", n, " or -", n, "..-1)");
}

int Args::dim(int i, int ndim) const { return dim_value(integer(i), ndim); }

// Pushes kw[name] and returns its type (LUA_TNIL when there is no keyword table), noting
// that the binding read it.
int Args::push_kw(const char* name) const {
  if (!kw_) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  mark_kw(name);
  return lua_getfield(L, kw_, name);
}

int ArgSpec::find(std::string_view name) const {
  for (size_t i = 0; i < keywords.size(); ++i)
    if (keywords[i] == name) return int(i);
  return -1;
}

static std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '|')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '|')) s.remove_suffix(1);
  return s;
}

// The positional parameters of the doc's first signature (see ArgSpec): split at commas and
// optional brackets up to its closing parenthesis or its keyword table; "flag=true" is named
// "flag".
static void parse_positionals(std::string_view d, ArgSpec& spec) {
  size_t open = d.find('(');
  if (open == std::string_view::npos) return;
  std::string_view callee = d.substr(0, open);
  spec.writes_arguments = trimmed(callee).ends_with('_');
  if (size_t colon = callee.find(':'); colon != std::string_view::npos)
    spec.positionals.emplace_back(trimmed(callee.substr(0, colon)));
  std::string token;
  auto flush = [&] {
    std::string_view t = trimmed(token);
    t = trimmed(t.substr(0, t.find('=')));
    if (!t.empty()) {
      TIDE_ASSERT(!spec.varargs);  // only the last parameter takes varargs
      spec.varargs = t.size() >= 3 && t.substr(t.size() - 3) == "...";
      spec.positionals.emplace_back(t);
    }
    token.clear();
  };
  int parens = 0;
  for (size_t i = open + 1; i < d.size(); ++i) {
    char c = d[i];
    if (c == '{') {
      size_t close = d.find('}', i);
      if (close == std::string_view::npos) break;
      std::string_view group = d.substr(i, close - i + 1);
      if (group.find('=') != std::string_view::npos) break;  // the keyword table
      token += group;
      i = close;
    } else if (c == '(') {
      ++parens, token += c;
    } else if (c == ')') {
      if (parens-- == 0) break;
      token += c;
    } else if (c == ',' || c == '[' || c == ']') {
      flush();
    } else {
      token += c;
    }
  }
  flush();
}

ArgSpec parse_arg_spec(const char* doc) {
  ArgSpec spec;
  std::string_view d = doc ? doc : "";
  int depth = 0;
  size_t group_start = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    char c = d[i];
    if (c == '{') {
      if (depth++ == 0) group_start = i;
    } else if (c == '}' && depth > 0) {
      std::string_view group = d.substr(group_start, i - group_start);
      if (--depth == 0 && group.find("...") != std::string_view::npos && group.find('=') != std::string_view::npos)
        spec.open = true;
    } else if (c == '=' && depth > 0 && i > 0 && (std::isalnum((unsigned char)d[i - 1]) || d[i - 1] == '_')) {
      size_t b = i;
      while (b > 0 && (std::isalnum((unsigned char)d[b - 1]) || d[b - 1] == '_')) --b;
      std::string name(d.substr(b, i - b));
      if (spec.find(name) < 0) spec.keywords.push_back(name);
    }
  }
  TIDE_ASSERT(spec.keywords.size() <= 64);  // kw_read_ is a 64-bit mask
  parse_positionals(d, spec);
  spec.writes_arguments |= spec.find("out") >= 0;
  for (const std::string& p : spec.positionals) spec.writes_arguments |= p == "out";
  return spec;
}

// A keyword name (or a string argument) as messages quote it (quote_user: a short prefix).
static std::string quoted_key(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TSTRING) return std::string("a ") + lua_typename(L, lua_type(L, idx)) + " key";
  size_t n;
  const char* s = lua_tolstring(L, idx, &n);
  return "'" + quote_user(std::string_view(s, n)) + "'";
}

// Levenshtein distance, for "did you mean" suggestions.
static size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// Every key of the keyword table must be one the binding takes.
void Args::check_keyword_names() {
  lua_pushnil(L);
  while (lua_next(L, kw_)) {
    lua_pop(L, 1);
    size_t n = 0;
    const char* key = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : nullptr;
    int k = key ? spec_->find(std::string_view(key, n)) : -1;
    if (k >= 0) {
      kw_given_ |= uint64_t(1) << k;
      continue;
    }
    std::string msg = std::string(op) + ": unknown keyword " + quoted_key(L, -1);
    lua_pop(L, 1);
    std::string_view best;
    size_t best_d = SIZE_MAX;
    for (const std::string& name : spec_->keywords) {
      size_t dist = edit_distance(key ? std::string_view(key, n) : "", name);
      if (dist < best_d) best_d = dist, best = name;
    }
    std::string valid;
    for (const std::string& name : spec_->keywords) valid += (valid.empty() ? "" : ", ") + name;
    if (key && best_d <= std::max<size_t>(2, best.size() / 3))
      TIDE_FAIL(msg, " (did you mean '", best, "'? valid: ", valid, ")");
    TIDE_FAIL(msg, " (valid: ", valid, ")");
  }
}

void Args::mark_kw(const char* name) const {
  if (!spec_ || spec_->open) return;
  int k = spec_->find(name);
  // A binding reading a keyword its doc does not declare is a bug in tide: the entry check
  // would reject that keyword from scripts.
  if (k < 0) TIDE_FAIL(op, ": internal error (a bug in tide): reads keyword '", name, "', which its doc does not list");
  kw_read_ |= uint64_t(1) << k;
}

// A value for messages about an unexpected argument.
static std::string describe_value(lua_State* L, int idx) {
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER: {
      std::ostringstream os;
      if (lua_isinteger(L, idx)) os << lua_tointeger(L, idx);
      else os << lua_tonumber(L, idx);
      return "the number " + os.str();
    }
    case LUA_TBOOLEAN: return lua_toboolean(L, idx) ? "true" : "false";
    case LUA_TSTRING: return "the string " + quoted_key(L, idx);
    default: return std::string("a ") + (tensor_slot(L, idx) ? "tensor" : lua_typename(L, lua_type(L, idx)));
  }
}

// Argument coverage for the test suite: with TIDE_ARG_COVERAGE=<file>, every keyword a call
// gave and its binding read is appended to the file as "op<TAB>keyword", and every positional
// argument it gave (not nil) and the binding read as "op<TAB>#position", when the process
// exits; tests/arg_coverage.lua then checks that each argument of each binding was exercised.
// The variable is read once; without it a call pays one test of a pointer.
namespace {
struct ArgCoverage {
  struct Used {
    const char* op = nullptr;
    uint64_t keywords = 0;    // bit k: spec->keywords[k]
    uint64_t positions = 0;   // bit i: positional argument i
  };
  std::mutex mu;
  std::unordered_map<const ArgSpec*, Used> used;
  const char* path = std::getenv("TIDE_ARG_COVERAGE");
  ~ArgCoverage() {
    if (!path || used.empty()) return;
    if (FILE* f = std::fopen(path, "a")) {
      for (auto& [spec, u] : used) {
        for (size_t k = 0; k < spec->keywords.size(); ++k)
          if (u.keywords >> k & 1) std::fprintf(f, "%s\t%s\n", u.op, spec->keywords[k].c_str());
        for (int i = 1; i < 64; ++i)
          if (u.positions >> i & 1) std::fprintf(f, "%s\t#%d\n", u.op, i);
      }
      std::fclose(f);
    }
  }
};
ArgCoverage& arg_coverage() {
  static ArgCoverage c;
  return c;
}

// Notes for the coverage file keywords (bit k: spec->keywords[k]) and positional arguments
// (bit i: argument i) that a call of op gave and its binding read.
void note_coverage(const ArgSpec* spec, const char* op, uint64_t keywords, uint64_t positions) {
  ArgCoverage& c = arg_coverage();
  std::lock_guard<std::mutex> lock(c.mu);
  auto& u = c.used[spec];
  u.op = op;
  u.keywords |= keywords;
  u.positions |= positions;
}
}  // namespace

// Notes for the coverage file the arguments this call gave and its binding read.
void Args::record_coverage() const {
  uint64_t positions = 0;
  for (int i = 1; i <= npos_ && i < 64; ++i)
    if ((seen_ >> i & 1) && !lua_isnil(L, i)) positions |= uint64_t(1) << i;
  note_coverage(spec_, op, kw_given_ & kw_read_, positions);
}

// "<op>: unexpected argument i (...); usage: <the doc's signature>".
void Args::fail_unexpected(int i, const char* doc) const {
  std::string usage;
  if (doc) {
    std::string_view d = doc;
    usage = "; usage: " + std::string(d.substr(0, std::min(d.find(" -> "), d.find(": "))));
  }
  bool kw_like = lua_type(L, i) == LUA_TTABLE && !lua_getmetatable(L, i) && lua_rawlen(L, i) == 0;
  if (kw_like && i == npos_) TIDE_FAIL(op, ": unexpected argument ", i, " (a keyword table: ", op, " takes no keyword arguments)", usage);
  TIDE_FAIL(op, ": unexpected argument ", i, " (", describe_value(L, i), ")", usage);
}

void Args::refuse_extra_positionals(const char* doc) const {
  if (!spec_ || !spec_->writes_arguments || spec_->varargs) return;
  for (int i = int(spec_->positionals.size()) + 1; i <= npos_; ++i) {
    if (lua_isnil(L, i)) continue;
    // A trailing {} is an empty keyword table to a binding that takes keywords: it names
    // what is missing itself ("keyword 'lr' is required").
    bool empty_table = false;
    if (lua_type(L, i) == LUA_TTABLE && lua_rawlen(L, i) == 0) {
      empty_table = !lua_getmetatable(L, i);
      if (!empty_table) lua_pop(L, 1);
    }
    if (empty_table && i == npos_ && !spec_->keywords.empty()) continue;
    fail_unexpected(i, doc);
  }
}

void Args::finish(const char* doc) const {
  static const bool coverage = arg_coverage().path != nullptr;
  if (coverage && spec_) record_coverage();
  for (int i = 1; i <= npos_; ++i) {
    if ((i < 64 && (seen_ >> i & 1)) || lua_isnil(L, i)) continue;
    fail_unexpected(i, doc);
  }
  // Keywords given (recorded on entry) but never read; the stack is not read again here.
  if (uint64_t unread = kw_given_ & ~kw_read_) {
    const std::string& key = spec_->keywords[size_t(__builtin_ctzll(unread))];
    TIDE_FAIL(op, ": keyword '", key, "' is not used with these arguments (given twice, or not valid together with them)");
  }
}

bool Args::has_kw(const char* name) const {
  int t = push_kw(name);
  lua_pop(L, 1);
  return t != LUA_TNIL;
}

std::optional<int64_t> Args::kw_integer(const char* name) const {
  int t = push_kw(name);
  int64_t v = 0;
  bool ok = integral_value(L, -1, v);
  lua_pop(L, 1);
  if (t == LUA_TNIL) return std::nullopt;
  TIDE_CHECK(ok, op, ": keyword '", name, "' must be an integer");
  return v;
}

std::optional<double> Args::kw_number(const char* name) const {
  int t = push_kw(name);
  double v = 0;
  bool ok = number_value(L, -1, v);
  lua_pop(L, 1);
  if (t == LUA_TNIL) return std::nullopt;
  TIDE_CHECK(ok, op, ": keyword '", name, "' must be a number, got a ", lua_typename(L, t));
  return v;
}

std::optional<bool> Args::kw_bool(const char* name) const {
  int t = push_kw(name);
  bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  if (t == LUA_TNIL) return std::nullopt;
  TIDE_CHECK(t == LUA_TBOOLEAN, op, ": keyword '", name, "' must be a boolean, got a ", lua_typename(L, t));
  return v;
}

std::optional<std::string> Args::kw_string(const char* name) const {
  int t = push_kw(name);
  std::string v = t == LUA_TSTRING ? lua_tostring(L, -1) : "";
  lua_pop(L, 1);
  if (t == LUA_TNIL) return std::nullopt;
  TIDE_CHECK(t == LUA_TSTRING, op, ": keyword '", name, "' must be a string, got a ", lua_typename(L, t));
  return v;
}

std::optional<DType> Args::kw_dtype(const char* name) const {
  auto s = kw_string(name);
  if (!s) return std::nullopt;
  return parse_dtype_or_fail(op, *s);
}

std::optional<Device> Args::kw_device(const char* name) const {
  int t = push_kw(name);
  std::string s;
  bool ok = device_name_at(L, -1, s);
  lua_pop(L, 1);
  if (t == LUA_TNIL) return std::nullopt;
  TIDE_CHECK(ok, op, ": keyword '", name, "' must be a device (a string or torch.device), got a ", lua_typename(L, t));
  try {
    return Device::parse(s);
  } catch (const Error& e) {
    error(e.what());  // "<op>: device: unknown device ..."
  }
}

namespace {
constexpr const char* kDeviceMeta = "torch.device";
constexpr const char* kDeviceCache = "tide.device_objects";
struct DeviceName {
  char name[32];
};

DeviceName* device_object(lua_State* L, int idx) {
  return static_cast<DeviceName*>(luaL_testudata(L, idx, kDeviceMeta));
}

// d.type ("cpu" or "cuda") and d.index (nil when the name has none, as PyTorch's None).
int device_index(lua_State* L) {
  const DeviceName* d = device_object(L, 1);
  const char* key = luaL_checkstring(L, 2);
  std::string_view name = d->name;
  size_t colon = name.find(':');
  if (!std::strcmp(key, "type")) {
    lua_pushlstring(L, name.data(), colon == std::string_view::npos ? name.size() : colon);
    return 1;
  }
  if (!std::strcmp(key, "index")) {
    if (colon == std::string_view::npos) lua_pushnil(L);
    else lua_pushinteger(L, std::strtol(d->name + colon + 1, nullptr, 10));
    return 1;
  }
  lua_pushfstring(L, "torch.device: no field '%s' (devices have type and index)", quote_user(key).c_str());
  return lua_error(L);
}

int device_tostring(lua_State* L) {
  lua_pushstring(L, device_object(L, 1)->name);
  return 1;
}

// "on " .. x.device, x.device .. "": concatenation with the device's name.
int device_concat(lua_State* L) {
  luaL_tolstring(L, 1, nullptr);
  luaL_tolstring(L, 2, nullptr);
  lua_concat(L, 2);
  return 1;
}
}  // namespace

void push_device_name(lua_State* L, const std::string& name) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, kDeviceCache) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kDeviceCache);
  }
  if (lua_getfield(L, -1, name.c_str()) != LUA_TNIL) {
    lua_remove(L, -2);
    return;
  }
  lua_pop(L, 1);
  TIDE_CHECK(name.size() < sizeof(DeviceName::name), "device: name too long: ", quote_user(name));
  auto* d = static_cast<DeviceName*>(lua_newuserdatauv(L, sizeof(DeviceName), 0));
  std::snprintf(d->name, sizeof d->name, "%s", name.c_str());
  if (luaL_newmetatable(L, kDeviceMeta)) {
    lua_pushcfunction(L, device_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, device_tostring);
    lua_setfield(L, -2, "__tostring");
    lua_pushcfunction(L, device_concat);
    lua_setfield(L, -2, "__concat");
  }
  lua_setmetatable(L, -2);
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, name.c_str());
  lua_remove(L, -2);
}

void push_device(lua_State* L, const Device& d) { push_device_name(L, d.str()); }

bool device_name_at(lua_State* L, int idx, std::string& out) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    out = lua_tostring(L, idx);
    return true;
  }
  if (const DeviceName* d = device_object(L, idx)) {
    out = d->name;
    return true;
  }
  return false;
}

std::optional<Scalar> Args::kw_scalar(const char* name) const {
  int t = push_kw(name);
  std::optional<Scalar> out;
  if (t == LUA_TBOOLEAN) out = Scalar(bool(lua_toboolean(L, -1)));
  else if (t == LUA_TNUMBER) out = lua_isinteger(L, -1) ? Scalar(int64_t(lua_tointeger(L, -1))) : Scalar(lua_tonumber(L, -1));
  else if (Scalar z; zero_dim_value(L, -1, z)) out = z;
  else if (Scalar c; t == LUA_TTABLE && complex_scalar(L, lua_gettop(L), *this, c)) out = c;
  if (out && out->is_complex() && !complex_ok) {  // a complex 0-dim tensor
    lua_pop(L, 1);
    TIDE_FAIL(op, ": complex numbers are not supported");
  }
  lua_pop(L, 1);
  TIDE_CHECK(t == LUA_TNIL || out, op, ": keyword '", name, "' must be a number, got a ", lua_typename(L, t));
  return out;
}

std::optional<TensorOrScalar> Args::kw_tensor_or_scalar(const char* name) const {
  int t = push_kw(name);
  std::optional<TensorOrScalar> out;
  if (Tensor* x = t == LUA_TUSERDATA ? to_tensor(L, -1) : nullptr) out = TensorOrScalar(*x);
  lua_pop(L, 1);
  if (out) return out;
  if (auto s = kw_scalar(name)) return TensorOrScalar(*s);
  return std::nullopt;
}

Tensor* Args::kw_tensor(const char* name) const {
  if (!kw_) return nullptr;  // no keyword table: the common case of out(), decided without the stack
  int t = push_kw(name);
  Tensor* x = t == LUA_TUSERDATA ? to_tensor(L, -1) : nullptr;
  lua_pop(L, 1);  // the userdata stays alive: it is referenced by the keyword table
  TIDE_CHECK(t == LUA_TNIL || x, op, ": keyword '", name, "' must be a tensor, got a ", lua_typename(L, t));
  return x;
}

// Dims at stack index idx (a number or a table of numbers) as 0-based dims, each once, in
// the order given. On an error the stack is left as it is: the call raises anyway.
std::vector<int> Args::dims_at(int idx, int ndim) const {
  std::vector<int> dims;
  auto add = [&](int vidx) {
    int64_t d;
    if (!integral_value(L, vidx, d))
      TIDE_FAIL(op, ": dim must be an integer or a table of integers, got a ", describe(L, vidx));
    int dd = dim_value(d, ndim);
    TIDE_CHECK(std::find(dims.begin(), dims.end(), dd) == dims.end(), op, ": dim ", d, " appears more than once");
    dims.push_back(dd);
  };
  if (lua_type(L, idx) == LUA_TTABLE) {
    int n = int(lua_rawlen(L, idx));
    for (int k = 1; k <= n; ++k) {
      lua_rawgeti(L, idx, k);
      add(lua_gettop(L));
      lua_pop(L, 1);
    }
  } else {
    add(idx);
  }
  return dims;
}

std::vector<int> Args::dims_arg(int i, int ndim) const {
  bool dim_kw = has_kw("dim"), axis_kw = has_kw("axis");
  TIDE_CHECK(!(dim_kw && axis_kw), op, ": give either dim= or axis=, not both");
  const char* key = dim_kw ? "dim" : axis_kw ? "axis" : nullptr;
  if (key && has(i)) TIDE_FAIL(op, ": ", key, " given both as argument ", i, " and as a keyword");
  std::vector<int> dims;
  if (key) {
    push_kw(key);
    dims = dims_at(lua_gettop(L), ndim);
    lua_pop(L, 1);
  } else if (has(i)) {
    dims = dims_at(i, ndim);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

bool Args::keepdim() const {
  auto keepdim = kw_bool("keepdim"), keepdims = kw_bool("keepdims");
  TIDE_CHECK(!(keepdim && keepdims), op, ": give either keepdim= or keepdims=, not both");
  return keepdim.value_or(keepdims.value_or(false));
}

DType Args::default_float() const { return numpy ? DType::Float64 : default_float_dtype(); }

// ---------------------------------------------------------------------------------------
// Registry

namespace {
std::vector<const Binding*>& registry() {
  static std::vector<const Binding*> r;
  return r;
}
}  // namespace

void register_bindings(const Binding* table, size_t n) {
  for (size_t i = 0; i < n; ++i) registry().push_back(&table[i]);
}

const std::vector<const Binding*>& all_bindings() { return registry(); }

const Binding* find_binding(std::string_view name) {
  for (const Binding* b : registry())
    if (name == b->name) return b;
  return nullptr;
}

// The argument spec of a binding, parsed on first use and kept for the process (module-level
// bindings are pushed without registration, so this is keyed by the Binding itself).
static const ArgSpec* arg_spec(const Binding& b) {
  static std::mutex mu;
  static std::unordered_map<const Binding*, std::unique_ptr<ArgSpec>> specs;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = specs[&b];
  if (!slot) slot = std::make_unique<ArgSpec>(parse_arg_spec(b.doc));
  return slot.get();
}

const ArgSpec& binding_spec(const Binding& b) { return *arg_spec(b); }

void Args::fail_complex(const Tensor& t) const { TIDE_FAIL(op, ": ", dtype_name(t.dtype()), " is not supported"); }

// The traits of a binding's closure (upvalue 4): bit 0 complex_capable, the next 15 bits its
// autocast rules, and above them, for an arithmetic operator's metamethod, its BinaryOp + 1.
constexpr int kAutocastBits = 0x7fff;
constexpr int kOperatorShift = 16;

// An operand of an operator's fast path: a torch tensor that is neither freed nor a NumPy
// array, or a Lua number (read as Args::scalar reads it). False for anything else (booleans,
// lists, complex numbers, a freed tensor), which the binding reads and reports itself.
static bool operator_operand(lua_State* L, int idx, bool complex_ok, std::optional<TensorOrScalar>& out) {
  int ty = lua_type(L, idx);
  if (ty == LUA_TNUMBER) {
    if (lua_isinteger(L, idx)) out.emplace(Scalar(int64_t(lua_tointeger(L, idx))));
    else out.emplace(Scalar(double(lua_tonumber(L, idx))));
    return true;
  }
  Tensor* t = ty == LUA_TUSERDATA ? tensor_slot(L, idx) : nullptr;
  if (!t || !t->defined() || t->impl()->numpy || (!complex_ok && is_complex(t->dtype()))) return false;
  out.emplace(*t);
  return true;
}

// x + y, x * 2, ... on plain operands: the op itself, without the argument reader. Such a
// call has nothing for the reader to check or refuse (two operands, one a tensor, no keyword
// table) and no NumPy semantics (an array operand, or a call made inside a NumPy call, goes
// through the binding), and binary_fn would run exactly ag::binary(op, x, y). The argument
// coverage notes its two operands, as Args::finish would.
static bool run_operator(lua_State* L, BinaryOp op, bool complex_ok, const Binding& b, const ArgSpec* spec) {
  if (lua_gettop(L) != 2 || t_numpy_call) return false;
  std::optional<TensorOrScalar> x, y;
  if (!operator_operand(L, 1, complex_ok, x) || !operator_operand(L, 2, complex_ok, y)) return false;
  if (!x->is_tensor() && !y->is_tensor()) return false;
  push_tensor(L, ag::binary(op, *x, *y));
  static const bool coverage = arg_coverage().path != nullptr;
  if (coverage) [[unlikely]]
    note_coverage(spec, b.name, 0, 0b110);  // positionals 1 and 2
  return true;
}

// Runs the binding behind the closure being called: C++ exceptions become an error message
// pushed here, after the try block has destroyed every C++ object of the call; returns the
// number of results, or -1 with the message on the stack. Under torch.autocast, an op of the
// cast policy gets its tensor arguments cast first (bindings/autocast.hpp).
[[gnu::always_inline]] static inline int run_binding(lua_State* L, const Binding* b) {
  auto* spec = static_cast<const ArgSpec*>(lua_touserdata(L, lua_upvalueindex(3)));
  Style style = Style(lua_tointeger(L, lua_upvalueindex(1)));
  int nret = 0;
  try {
    int traits = int(lua_tointeger(L, lua_upvalueindex(4)));
    if (autocast::active() && style == Style::Torch && (traits >> 1 & kAutocastBits)) [[unlikely]]
      autocast::cast_arguments(L, 1, traits >> 1 & kAutocastBits, b->name);
    if (int op = traits >> kOperatorShift; op && run_operator(L, BinaryOp(op - 1), traits & 1, *b, spec)) return 1;
    Args a(L, b->name, style, spec);
    a.complex_ok = traits & 1;
    a.refuse_extra_positionals(b->doc);
    {
      CallSemantics semantics(a);
      nret = b->fn(L, a);
    }
    a.finish(b->doc);
  } catch (const OutOfMemory& e) {
    // The allocator's message does not know the op that asked: the binding's name goes first.
    std::string_view what = e.what(), name = b->name;
    bool named = what.starts_with(name) && what.substr(name.size()).starts_with(":");
    lua_pushstring(L, named ? e.what() : (std::string(name) + ": " + e.what()).c_str());
    return -1;
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
    return -1;
  }
  return nret;
}

// The caller's Lua frames (innermost first, at most 16) as "source:line", for with_stack;
// without C functions and the profiler's own Lua code (profile(fn) and record_function).
static std::vector<std::string> lua_stack(lua_State* L) {
  std::vector<std::string> frames;
  lua_Debug ar;
  for (int level = 1; frames.size() < 16 && lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline < 0) continue;
    if (std::strcmp(ar.source, "=[tide torch_profiler]") == 0) continue;
    frames.push_back(std::string(ar.short_src) + ":" + std::to_string(ar.currentline));
  }
  return frames;
}

// A binding call while torch.profiler records: the call is one event, named by the binding,
// with its arguments' shapes (a non-tensor argument has the empty shape) and the Lua stack
// when asked. The profiler's own functions (profiler.*) are not events.
[[gnu::noinline, gnu::cold]] static int call_binding_profiled(lua_State* L, const Binding* b) {
  int nret;
  if (std::strncmp(b->name, "profiler.", 9) == 0) {
    nret = run_binding(L, b);
  } else {
    int64_t token = -1;
    bool failed = false;
    try {
      token = profiler::begin(b->name);
      if (token >= 0 && profiler::options().record_shapes) {
        std::vector<std::vector<int64_t>> shapes(size_t(lua_gettop(L)));
        for (int i = 1; i <= lua_gettop(L); ++i)
          if (Tensor* t = tensor_slot(L, i); t && t->defined()) shapes[size_t(i - 1)] = t->sizes().vec();
        profiler::set_shapes(token, std::move(shapes));
      }
      if (token >= 0 && profiler::options().with_stack) profiler::set_stack(token, lua_stack(L));
    } catch (const std::exception& e) {
      lua_pushstring(L, (std::string(b->name) + ": " + e.what()).c_str());
      failed = true;
    }
    if (failed) {  // (outside the handler: no longjmp out of a catch block)
      profiler::end(token);
      return lua_error(L);
    }
    nret = run_binding(L, b);
    profiler::end(token);
  }
  return nret >= 0 ? nret : lua_error(L);
}

// A tensor of at least 1 MiB (CPU or device) drives no step when it is pushed: the next
// binding call starts with one instead (in generational mode a minor collection, ~0.2 us).
// By then the temporaries that died since, such as t in (a * b + c):relu() once t + c
// exists, or the result of the previous iteration's discarded a + b, are garbage, and their
// buffers go back to the allocator before this call allocates its result, which then reuses
// one still in cache, as NumPy's reference counts give. Stepped at the push, they were freed one large
// result later, after it had taken a buffer that left the cache long ago: a + b on 10^6
// float32 took 98 us that way against 66 us (NumPy 145), (a * b + c):relu() 723 against 370.
[[gnu::noinline]] static void collect_after_large_push(lua_State* L) {
  GcCounters& c = t_gc;
  c.large_pushed = false;
  if (!collect_fully_if_due(L, c)) lua_gc(L, LUA_GCSTEP, 0);
}

std::string script_line(lua_State* L) {
  lua_Debug ar;
  for (int level = 1; lua_getstack(L, level, &ar); ++level) {
    if (!lua_getinfo(L, "Sl", &ar) || ar.currentline < 0) continue;
    if (std::strncmp(ar.source, "=[tide ", 7) == 0) continue;
    return std::string(ar.short_src) + ":" + std::to_string(ar.currentline);
  }
  return "?";
}

CapturedOp::CapturedOp(lua_State* L, const char* op) : L_(L), active_(capture::recording_here()) {
  if (!active_) return;
  was_broken_ = capture::broken_here();
  capture::set_current_op(op);
}

CapturedOp::~CapturedOp() {
  if (active_ && !was_broken_ && capture::broken_here()) capture::set_break_location(script_line(L_));
}

// A binding call while torch.compile records on some thread: on this one, the binding names
// the recorded steps, and a break it causes names the script line that called it.
[[gnu::noinline, gnu::cold]] static int call_binding_captured(lua_State* L, const Binding* b) {
  int nret;
  {
    CapturedOp named(L, b->name);
    nret = profiler::recording() ? call_binding_profiled(L, b) : run_binding(L, b);
  }
  return nret >= 0 ? nret : lua_error(L);
}

// The lua_CFunction behind every binding. While torch.profiler records, each call is an
// event; while torch.compile records, the binding names its steps (one flag checked for
// each, here, the one place every binding is called through).
static int call_binding(lua_State* L) {
  auto* b = static_cast<const Binding*>(lua_touserdata(L, lua_upvalueindex(2)));
  if (t_gc.large_pushed) [[unlikely]]
    collect_after_large_push(L);
  if (capture::any_recording()) [[unlikely]]
    return call_binding_captured(L, b);
  if (profiler::recording()) [[unlikely]]
    return call_binding_profiled(L, b);
  int nret = run_binding(L, b);
  return nret >= 0 ? nret : lua_error(L);
}

// The closure of a binding; `op` (BinaryOp + 1, or 0) marks an operator's metamethod.
static void push_binding_closure(lua_State* L, const Binding& b, Style style, int op) {
  lua_pushinteger(L, lua_Integer(style));
  lua_pushlightuserdata(L, const_cast<Binding*>(&b));
  lua_pushlightuserdata(L, const_cast<ArgSpec*>(arg_spec(b)));
  // Upvalue 4, the binding's traits (kOperatorShift).
  const int rules = autocast::packed_rules(b.name);
  TIDE_ASSERT((rules & ~kAutocastBits) == 0);
  lua_pushinteger(L, lua_Integer(complex_capable(b.name)) | lua_Integer(rules) << 1 | lua_Integer(op) << kOperatorShift);
  lua_pushcclosure(L, call_binding, 4);
}

void push_binding(lua_State* L, const Binding& b, Style style) { push_binding_closure(L, b, style, 0); }

void push_operator_binding(lua_State* L, const Binding& b, BinaryOp op) {
  push_binding_closure(L, b, Style::Torch, int(op) + 1);
}

// __unm(x, x) / __bnot(x, x): the binding in upvalue 1 called with the operand alone. No C++
// object lives in this frame, so an error may unwind through it.
static int unary_metamethod(lua_State* L) {
  lua_settop(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

void push_unary_metamethod(lua_State* L, const Binding& b) {
  push_binding(L, b, Style::Torch);
  lua_pushcclosure(L, unary_metamethod, 1);
}

const Binding* binding_of(lua_State* L, int idx) {
  if (lua_tocfunction(L, idx) == unary_metamethod) {
    lua_getupvalue(L, idx, 1);
    const Binding* b = binding_of(L, -1);
    lua_pop(L, 1);
    return b;
  }
  if (lua_tocfunction(L, idx) != call_binding) return nullptr;
  lua_getupvalue(L, idx, 2);
  auto* b = static_cast<const Binding*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  return b;
}

}  // namespace tide::lua
