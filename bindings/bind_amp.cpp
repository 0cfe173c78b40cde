// Mixed precision: the autocast state (per thread, per device type, as PyTorch keeps it), the
// cast policy and its application (bindings/autocast.hpp), and the bindings that read and set
// the state (torch.is_autocast_enabled, torch.set_autocast_cpu_dtype, ...). The scope object
// torch.autocast and torch.amp.GradScaler are Lua-written (bindings/lua/torch_amp.lua).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "../tensor/autograd/autograd.hpp"
#include "../tensor/autograd/functions.hpp"
#include "autocast.hpp"
#include "lua_api.hpp"

namespace tide::lua::autocast {

namespace {

// ---------------------------------------------------------------------------------------
// The policy: PyTorch's lists (aten/src/ATen/autocast_mode.cpp, AutocastCPU and the CUDA
// lists AT_FORALL_LOWER_PRECISION_FP / FP32 / FP32_SET_OPT_DTYPE / PROMOTE of
// autocast_mode.h), under the names scripts call (torch.X, x:X(), nn.functional.X; dotted
// for torch.linalg.X and torch.fft.X). Names no binding or Lua function has yet cost
// nothing: an op added later under such a name is covered. To cover a new op, add its name
// to the device's list with PyTorch's rule for it.

struct Entry {
  const char* name;
  Rule rule;
};

constexpr Rule kLow = Rule::LowerPrecision, kFp32 = Rule::Fp32, kFp32Opt = Rule::Fp32SetOptDtype,
               kPromote = Rule::Promote;

constexpr Entry kCpuPolicy[] = {
    // lower_precision_fp
    {"conv1d", kLow}, {"conv2d", kLow}, {"conv3d", kLow}, {"bmm", kLow}, {"mm", kLow},
    {"linalg.vecdot", kLow}, {"baddbmm", kLow}, {"addmm", kLow}, {"addbmm", kLow}, {"linear", kLow},
    {"matmul", kLow}, {"conv_tbc", kLow}, {"conv_transpose1d", kLow}, {"conv_transpose2d", kLow},
    {"conv_transpose3d", kLow}, {"prelu", kLow}, {"scaled_dot_product_attention", kLow},
    // (PyTorch 2.1+ also lowers mkldnn_rnn_layer, and CUDA's _cudnn_rnn in AutocastRNN.cpp: tide's
    // counterpart torch._rnn_layer computes in float32/float64 only, so recurrent layers stay
    // float32 under autocast, as in PyTorch 1.13.)
    // fp32
    {"avg_pool3d", kFp32}, {"binary_cross_entropy", kFp32}, {"grid_sample", kFp32}, {"polar", kFp32},
    {"prod", kFp32}, {"quantile", kFp32}, {"nanquantile", kFp32}, {"stft", kFp32}, {"cdist", kFp32},
    {"trace", kFp32}, {"view_as_complex", kFp32}, {"cholesky", kFp32}, {"cholesky_inverse", kFp32},
    {"cholesky_solve", kFp32}, {"inverse", kFp32}, {"lu_solve", kFp32}, {"orgqr", kFp32}, {"ormqr", kFp32},
    {"pinverse", kFp32}, {"max_pool3d", kFp32}, {"max_unpool2d", kFp32}, {"max_unpool3d", kFp32},
    {"adaptive_avg_pool3d", kFp32}, {"mse_loss", kFp32}, {"cosine_embedding_loss", kFp32}, {"nll_loss", kFp32},
    {"hinge_embedding_loss", kFp32}, {"poisson_nll_loss", kFp32}, {"smooth_l1_loss", kFp32},
    {"cross_entropy", kFp32},  // aten::cross_entropy_loss
    {"l1_loss", kFp32}, {"huber_loss", kFp32}, {"margin_ranking_loss", kFp32}, {"soft_margin_loss", kFp32},
    {"triplet_margin_loss", kFp32}, {"multi_margin_loss", kFp32}, {"ctc_loss", kFp32}, {"kl_div", kFp32},
    {"multilabel_margin_loss", kFp32}, {"binary_cross_entropy_with_logits", kFp32}, {"fft.fft", kFp32},
    {"fft.ifft", kFp32}, {"fft.fft2", kFp32}, {"fft.ifft2", kFp32}, {"fft.fftn", kFp32}, {"fft.ifftn", kFp32},
    {"fft.rfft", kFp32}, {"fft.irfft", kFp32}, {"fft.rfft2", kFp32}, {"fft.irfft2", kFp32},
    {"fft.rfftn", kFp32}, {"fft.irfftn", kFp32}, {"fft.hfft", kFp32}, {"fft.ihfft", kFp32},
    {"linalg.cond", kFp32}, {"linalg.matrix_rank", kFp32}, {"linalg.solve", kFp32}, {"linalg.cholesky", kFp32},
    {"linalg.svdvals", kFp32}, {"linalg.eigvals", kFp32}, {"linalg.eigvalsh", kFp32}, {"linalg.inv", kFp32},
    {"linalg.householder_product", kFp32}, {"linalg.tensorinv", kFp32}, {"linalg.tensorsolve", kFp32},
    {"geqrf", kFp32}, {"qr", kFp32}, {"svd", kFp32}, {"triangular_solve", kFp32},
    {"fractional_max_pool2d", kFp32}, {"fractional_max_pool3d", kFp32}, {"adaptive_max_pool3d", kFp32},
    {"linalg.qr", kFp32}, {"linalg.cholesky_ex", kFp32}, {"linalg.svd", kFp32}, {"linalg.eig", kFp32},
    {"linalg.eigh", kFp32}, {"linalg.lstsq", kFp32}, {"linalg.inv_ex", kFp32},
    // promote
    {"stack", kPromote}, {"cat", kPromote}, {"index_copy", kPromote},
};

constexpr Entry kCudaPolicy[] = {
    // lower_precision_fp
    {"conv1d", kLow}, {"conv2d", kLow}, {"conv3d", kLow}, {"conv_tbc", kLow}, {"conv_transpose1d", kLow},
    {"conv_transpose2d", kLow}, {"conv_transpose3d", kLow}, {"convolution", kLow}, {"prelu", kLow},
    {"addmm", kLow}, {"addmv", kLow}, {"addr", kLow}, {"matmul", kLow}, {"einsum", kLow}, {"mm", kLow},
    {"mv", kLow}, {"linalg.vecdot", kLow}, {"linear", kLow}, {"addbmm", kLow}, {"baddbmm", kLow},
    {"bmm", kLow}, {"chain_matmul", kLow}, {"linalg.multi_dot", kLow}, {"lstm_cell", kLow},
    {"gru_cell", kLow}, {"rnn_tanh_cell", kLow}, {"rnn_relu_cell", kLow},
    {"scaled_dot_product_attention", kLow},
    // fp32
    {"acos", kFp32}, {"asin", kFp32}, {"cosh", kFp32}, {"erfinv", kFp32}, {"exp", kFp32}, {"expm1", kFp32},
    {"log", kFp32}, {"log10", kFp32}, {"log2", kFp32}, {"log1p", kFp32}, {"reciprocal", kFp32},
    {"rsqrt", kFp32}, {"sinh", kFp32}, {"tan", kFp32}, {"pow", kFp32}, {"softplus", kFp32},
    {"layer_norm", kFp32}, {"group_norm", kFp32}, {"frobenius_norm", kFp32}, {"nuclear_norm", kFp32},
    {"cosine_similarity", kFp32}, {"poisson_nll_loss", kFp32}, {"cosine_embedding_loss", kFp32},
    {"nll_loss", kFp32}, {"hinge_embedding_loss", kFp32}, {"kl_div", kFp32}, {"l1_loss", kFp32},
    {"smooth_l1_loss", kFp32}, {"huber_loss", kFp32}, {"mse_loss", kFp32}, {"margin_ranking_loss", kFp32},
    {"multilabel_margin_loss", kFp32}, {"soft_margin_loss", kFp32}, {"triplet_margin_loss", kFp32},
    {"multi_margin_loss", kFp32}, {"binary_cross_entropy_with_logits", kFp32}, {"dist", kFp32},
    {"pdist", kFp32}, {"cdist", kFp32}, {"renorm", kFp32}, {"logsumexp", kFp32},
    {"interpolate", kFp32},  // aten::upsample_* (nearest, linear, bilinear, bicubic, trilinear)
    // PyTorch's cross_entropy is log_softmax then nll_loss, both float32 here; tide's is fused.
    {"cross_entropy", kFp32},
    // fp32_set_opt_dtype, and norm (fp32_append_dtype)
    {"prod", kFp32Opt}, {"softmax", kFp32Opt}, {"log_softmax", kFp32Opt}, {"cumprod", kFp32Opt},
    {"cumsum", kFp32Opt}, {"linalg.vector_norm", kFp32Opt}, {"linalg.matrix_norm", kFp32Opt},
    {"sum", kFp32Opt}, {"norm", kFp32},
    // promote
    {"addcdiv", kPromote}, {"addcmul", kPromote}, {"atan2", kPromote}, {"bilinear", kPromote},
    {"cross", kPromote}, {"dot", kPromote}, {"grid_sample", kPromote}, {"index_put", kPromote},
    {"tensordot", kPromote}, {"scatter_add", kPromote},
    // banned: unsafe in float16 (take binary_cross_entropy_with_logits)
    {"binary_cross_entropy", Rule::Banned},
};

constexpr int kCudaShift = 4;

const std::unordered_map<std::string_view, int>& policy() {
  static const auto table = [] {
    std::unordered_map<std::string_view, int> t;
    for (const Entry& e : kCpuPolicy) t[e.name] |= int(e.rule);
    for (const Entry& e : kCudaPolicy) t[e.name] |= int(e.rule) << kCudaShift;
    return t;
  }();
  return table;
}

Rule rule_on(int packed, const Device& d) { return Rule((packed >> (d.is_cuda() ? kCudaShift : 0)) & 15); }

// ---------------------------------------------------------------------------------------
// The state: per thread, as PyTorch's (thread-local dispatch keys and dtypes).

struct DeviceState {
  bool enabled;
  DType dtype;
};
thread_local DeviceState cpu_state{false, DType::BFloat16};
thread_local DeviceState cuda_state{false, DType::Float16};
thread_local bool cache_enabled = true;
thread_local int nesting = 0;
thread_local int suspended = 0;  // autocast-wrapped Lua functions running
thread_local bool any_active = false;

void refresh() { any_active = (cpu_state.enabled || cuda_state.enabled) && suspended == 0; }

DeviceState& state_of(const Device& d) { return d.is_cuda() ? cuda_state : cpu_state; }

// The casts of float32 leaf weights to the low dtype, kept while an autocast region is open
// (cache_enabled), as PyTorch does: a weight used by several ops in one forward is cast once.
// The weak reference tells a live source from a new tensor at a reused address.
struct CachedCast {
  std::weak_ptr<TensorImpl> source;
  Tensor cast;
};
thread_local std::unordered_map<const TensorImpl*, CachedCast> cast_cache;

// A tensor autocast may cast on device type `dev`: floating, not float64, on that device type
// and not a NumPy array.
bool eligible(const Tensor& t, DeviceType dev) {
  return is_floating(t.dtype()) && t.dtype() != DType::Float64 && t.device().type == dev && !t.impl()->numpy;
}

Tensor cast_to(const Tensor& t, DType to, const DeviceState& st) {
  bool cacheable = cache_enabled && to == st.dtype && t.dtype() == DType::Float32 && autograd::requires_grad(t) &&
                   autograd::is_leaf(t) && !t.impl()->base;
  if (!cacheable) return ag::cast(t, to);
  auto it = cast_cache.find(t.impl());
  if (it != cast_cache.end() && !it->second.source.expired() && it->second.cast.dtype() == to)
    return it->second.cast;
  Tensor c = ag::cast(t, to);
  cast_cache[t.impl()] = CachedCast{t.impl_ptr(), c};
  return c;
}

// The live tensor at stack index idx, or nullptr.
const Tensor* live_tensor(lua_State* L, int idx) {
  Tensor* t = lua_type(L, idx) == LUA_TUSERDATA ? tensor_slot(L, idx) : nullptr;
  return t && t->defined() ? t : nullptr;
}

// A plain table (no metatable) whose values autocast may look at.
bool plain_table(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TTABLE) return false;
  if (!lua_getmetatable(L, idx)) return true;
  lua_pop(L, 1);
  return false;
}

// Calls visit(tensor) for every live tensor argument in first..top and directly inside the
// plain tables among them, until visit returns true.
template <typename Visit>
void each_tensor(lua_State* L, int first, int top, Visit visit) {
  for (int i = first; i <= top; ++i) {
    if (const Tensor* t = live_tensor(L, i)) {
      if (visit(*t)) return;
    } else if (plain_table(L, i)) {
      lua_pushnil(L);
      while (lua_next(L, i)) {
        const Tensor* v = live_tensor(L, -1);
        lua_pop(L, 1);
        if (v && visit(*v)) {
          lua_pop(L, 1);
          return;
        }
      }
    }
  }
}

}  // namespace

int packed_rules(const char* name) {
  auto it = policy().find(name);
  return it == policy().end() ? 0 : it->second;
}

bool active() { return any_active; }

bool cast_arguments(lua_State* L, int first, int packed, const char* op) {
  int top = lua_gettop(L);
  std::optional<Device> device;  // the op's: that of its first tensor argument
  each_tensor(L, first, top, [&](const Tensor& t) {
    device = t.device();
    return true;
  });
  if (!device) return false;
  const DeviceState& st = state_of(*device);
  Rule rule = rule_on(packed, *device);
  if (!st.enabled || rule == Rule::None) return false;
  if (rule == Rule::Banned)
    TIDE_FAIL(op, ": unsafe to autocast: many models apply a sigmoid right before binary_cross_entropy; "
                  "combine the two with binary_cross_entropy_with_logits (or nn.BCEWithLogitsLoss), which is safe "
                  "to autocast");
  // PyTorch autocasts no out= variant; softmax(x, {dtype=}) keeps the dtype it was given.
  auto keyword_given = [&](const char* key) {
    if (top < first || !plain_table(L, top)) return false;
    lua_pushstring(L, key);
    bool given = lua_rawget(L, top) != LUA_TNIL;
    lua_pop(L, 1);
    return given;
  };
  if (keyword_given("out")) return false;
  if (rule == Rule::Fp32SetOptDtype && keyword_given("dtype")) return true;
  DeviceType dev = device->type;
  DType to = rule == Rule::LowerPrecision ? st.dtype : DType::Float32;
  if (rule == Rule::Promote) {
    std::optional<DType> widest;
    each_tensor(L, first, top, [&](const Tensor& t) {
      if (eligible(t, dev)) widest = widest ? promote_types(*widest, t.dtype()) : t.dtype();
      return false;
    });
    if (!widest) return true;
    to = *widest;
  }
  auto needs_cast = [&](const Tensor& t) { return eligible(t, dev) && t.dtype() != to; };
  for (int i = first; i <= top; ++i) {
    if (const Tensor* t = live_tensor(L, i)) {
      if (!needs_cast(*t)) continue;
      push_tensor(L, cast_to(*t, to, st));
      lua_replace(L, i);
    } else if (plain_table(L, i)) {
      bool any = false;
      each_tensor(L, i, i, [&](const Tensor& v) { return any = needs_cast(v); });
      if (!any) continue;
      lua_newtable(L);  // the copy, with the casts
      int copy = lua_gettop(L);
      lua_pushnil(L);
      while (lua_next(L, i)) {
        const Tensor* v = live_tensor(L, -1);
        if (v && needs_cast(*v)) {
          Tensor c = cast_to(*v, to, st);
          lua_pop(L, 1);
          push_tensor(L, std::move(c));
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, copy);
      }
      lua_replace(L, i);
    }
  }
  return true;
}

namespace {

// ---------------------------------------------------------------------------------------
// The wrapper of Lua-written functions: casts the arguments by the function's rules, then
// when a rule applied, runs it with autocast off (its inner ops run as PyTorch runs an autocast
// op's body), restoring it also when the function raises. Upvalues: the packed rules, the
// function, its name.
int autocast_wrapped(lua_State* L) {
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  bool applied = false, failed = false;
  try {
    applied = any_active &&
              cast_arguments(L, 2, int(lua_tointeger(L, lua_upvalueindex(1))), lua_tostring(L, lua_upvalueindex(3)));
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
    failed = true;
  }
  if (failed) return lua_error(L);
  if (!applied) {
    lua_call(L, n, LUA_MULTRET);
    return lua_gettop(L);
  }
  ++suspended;
  refresh();
  int status = lua_pcall(L, n, LUA_MULTRET, 0);
  --suspended;
  refresh();
  if (status != LUA_OK) return lua_error(L);
  return lua_gettop(L);
}

int wrap_fn(lua_State* L, Args& a) {
  std::string name = a.string(1);
  a.consumed(2);
  TIDE_CHECK(lua_type(L, 2) == LUA_TFUNCTION, "_autocast_wrap: expected a function, got a ", luaL_typename(L, 2));
  int packed = packed_rules(name.c_str());
  if (packed == 0) {  // not in the policy: f itself
    lua_pushvalue(L, 2);
    return 1;
  }
  lua_pushinteger(L, packed);
  lua_pushvalue(L, 2);
  lua_pushstring(L, name.c_str());
  lua_pushcclosure(L, autocast_wrapped, 3);
  return 1;
}

// ---------------------------------------------------------------------------------------
// The state's bindings (PyTorch 2.x's torch.* functions of the same names).

Device device_type_at(const Args& a, int i) {
  std::string s = a.string(i);
  if (s == "cpu") return Device{DeviceType::CPU, 0};
  if (s == "cuda") return Device{DeviceType::CUDA, 0};
  a.error("device_type must be \"cpu\" or \"cuda\", got \"" + s + "\"");
}

DType low_dtype_at(const Args& a, int i) {
  DType d = a.dtype(i);
  if (d != DType::BFloat16 && d != DType::Float16)
    a.error("dtype must be bfloat16 or float16, got " + std::string(dtype_name(d)));
  return d;
}

int push_dtype(lua_State* L, DType d) {
  lua_pushstring(L, std::string(dtype_name(d)).c_str());
  return 1;
}

// is_autocast_enabled([device_type]): CUDA's without an argument, as PyTorch.
int is_enabled_fn(lua_State* L, Args& a) {
  Device d = a.has(1) ? device_type_at(a, 1) : Device{DeviceType::CUDA, 0};
  lua_pushboolean(L, state_of(d).enabled);
  return 1;
}

int is_cpu_enabled_fn(lua_State* L, Args&) {
  lua_pushboolean(L, cpu_state.enabled);
  return 1;
}

// set_autocast_enabled([device_type,] enabled)
int set_enabled_fn(lua_State*, Args& a) {
  bool two = a.count() >= 2;
  Device d = two ? device_type_at(a, 1) : Device{DeviceType::CUDA, 0};
  state_of(d).enabled = a.boolean(two ? 2 : 1);
  refresh();
  return 0;
}

int set_cpu_enabled_fn(lua_State*, Args& a) {
  cpu_state.enabled = a.boolean(1);
  refresh();
  return 0;
}

int get_dtype_fn(lua_State* L, Args& a) { return push_dtype(L, state_of(device_type_at(a, 1)).dtype); }
int get_cpu_dtype_fn(lua_State* L, Args&) { return push_dtype(L, cpu_state.dtype); }
int get_gpu_dtype_fn(lua_State* L, Args&) { return push_dtype(L, cuda_state.dtype); }

int set_dtype_fn(lua_State*, Args& a) {
  state_of(device_type_at(a, 1)).dtype = low_dtype_at(a, 2);
  return 0;
}

int set_cpu_dtype_fn(lua_State*, Args& a) {
  cpu_state.dtype = low_dtype_at(a, 1);
  return 0;
}

int set_gpu_dtype_fn(lua_State*, Args& a) {
  cuda_state.dtype = low_dtype_at(a, 1);
  return 0;
}

int is_cache_enabled_fn(lua_State* L, Args&) {
  lua_pushboolean(L, cache_enabled);
  return 1;
}

int set_cache_enabled_fn(lua_State*, Args& a) {
  cache_enabled = a.boolean(1);
  return 0;
}

int clear_cache_fn(lua_State*, Args&) {
  cast_cache.clear();
  return 0;
}

int increment_nesting_fn(lua_State* L, Args&) {
  lua_pushinteger(L, ++nesting);
  return 1;
}

int decrement_nesting_fn(lua_State* L, Args& a) {
  if (nesting == 0) a.error("no autocast region is open");
  lua_pushinteger(L, --nesting);
  return 1;
}

const Binding kAmpBindings[] = {
    {"is_autocast_enabled", is_enabled_fn, TORCH,
     "is_autocast_enabled([device_type]) -> boolean: whether autocast is on for \"cpu\" or \"cuda\" (default: \"cuda\")."},
    {"is_autocast_cpu_enabled", is_cpu_enabled_fn, TORCH, "is_autocast_cpu_enabled() -> boolean: whether CPU autocast is on."},
    {"set_autocast_enabled", set_enabled_fn, TORCH,
     "set_autocast_enabled([device_type, ]enabled): turns autocast on or off for \"cpu\" or \"cuda\" (default: \"cuda\"); "
     "torch.autocast is the scoped form."},
    {"set_autocast_cpu_enabled", set_cpu_enabled_fn, TORCH, "set_autocast_cpu_enabled(enabled): turns CPU autocast on or off."},
    {"get_autocast_dtype", get_dtype_fn, TORCH,
     "get_autocast_dtype(device_type) -> string: the dtype autocast computes low-precision ops in on \"cpu\" or \"cuda\"."},
    {"get_autocast_cpu_dtype", get_cpu_dtype_fn, TORCH, "get_autocast_cpu_dtype() -> string: CPU autocast's dtype (bfloat16 by default)."},
    {"get_autocast_gpu_dtype", get_gpu_dtype_fn, TORCH, "get_autocast_gpu_dtype() -> string: CUDA autocast's dtype (float16 by default)."},
    {"set_autocast_dtype", set_dtype_fn, TORCH, "set_autocast_dtype(device_type, dtype): autocast's dtype on \"cpu\" or \"cuda\" (bfloat16 or float16)."},
    {"set_autocast_cpu_dtype", set_cpu_dtype_fn, TORCH, "set_autocast_cpu_dtype(dtype): CPU autocast's dtype (bfloat16 or float16)."},
    {"set_autocast_gpu_dtype", set_gpu_dtype_fn, TORCH, "set_autocast_gpu_dtype(dtype): CUDA autocast's dtype (bfloat16 or float16)."},
    {"is_autocast_cache_enabled", is_cache_enabled_fn, TORCH,
     "is_autocast_cache_enabled() -> boolean: whether casts of float32 leaf weights are kept while autocast regions are open."},
    {"set_autocast_cache_enabled", set_cache_enabled_fn, TORCH, "set_autocast_cache_enabled(enabled): turns the autocast cast cache on or off."},
    {"clear_autocast_cache", clear_cache_fn, TORCH, "clear_autocast_cache(): drops the cached casts (torch.autocast does at its outermost exit)."},
    {"autocast_increment_nesting", increment_nesting_fn, TORCH, "autocast_increment_nesting() -> integer: the open autocast regions, one more."},
    {"autocast_decrement_nesting", decrement_nesting_fn, TORCH,
     "autocast_decrement_nesting() -> integer: the open autocast regions, one fewer (an error when none is open)."},
    {"_autocast_wrap", wrap_fn, TORCH,
     "_autocast_wrap(name, f) -> function: f under the autocast policy of the op `name` (casts its tensor arguments, "
     "runs it with autocast off), or f itself when the policy does not name it; bindings/lua/torch_amp.lua wraps "
     "the Lua-written ops with it."},
};

}  // namespace

void register_amp_bindings() { register_bindings(kAmpBindings, std::size(kAmpBindings)); }

bool is_wrapper(lua_CFunction f) { return f == autocast_wrapped; }

}  // namespace tide::lua::autocast
