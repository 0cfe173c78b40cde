// The torch and numpy modules: built from the binding registry (one registration per op),
// plus dtype constants and the Lua-written parts embedded from bindings/lua/.
#include "modules.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "../tensor/parallel.hpp"
#include "../tensor/backend.hpp"
#include "lua_api.hpp"
#include "autocast.hpp"
#include "complex_value.hpp"
#include "lua_embedded.hpp"

namespace tide::lua {

void register_norm_bindings();  // bind_norm.cpp (declared here: lua_api.hpp is widely included)

void build_tensor_metatable(lua_State* L);

// The recurrent layers' binding (bind_rnn.cpp), declared here rather than in the widely
// included lua_api.hpp.
void register_rnn_bindings();
// torch.profiler's bindings (bind_profiler.cpp).
void register_profiler_bindings();
// torch.compile's (bind_compile.cpp).
void register_compile_bindings();

namespace {

// Registers every family once per process (the registry is process-wide and immutable after).
void ensure_registered() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_elementwise_bindings();
    register_creation_bindings();
    register_random_bindings();
    register_reduction_bindings();
    register_linalg_bindings();
    register_shape_bindings();
    register_index_bindings();
    register_io_bindings();
    register_optim_bindings();
    register_autograd_bindings();
    register_function_bindings();
    register_nn_bindings();
    register_norm_bindings();
    register_rnn_bindings();
    register_tensor_bindings();
    register_multiprocessing_bindings();
    register_distributed_bindings();
    register_complex_bindings();
    register_fft_bindings();
    autocast::register_amp_bindings();
    register_profiler_bindings();
    register_compile_bindings();
  });
}

// Sets t[name] = value at the top, creating sub-tables for dotted names ("linalg.solve").
void set_dotted(lua_State* L, int t, const char* name) {
  int value = lua_gettop(L);
  lua_pushvalue(L, t);
  const char* p = name;
  while (const char* dot = std::strchr(p, '.')) {
    std::string part(p, dot);
    if (lua_getfield(L, -1, part.c_str()) != LUA_TTABLE) {
      lua_pop(L, 1);
      lua_newtable(L);
      lua_pushvalue(L, -1);
      lua_setfield(L, -3, part.c_str());
    }
    lua_remove(L, -2);
    p = dot + 1;
  }
  lua_pushvalue(L, value);
  lua_setfield(L, -2, p);
  lua_settop(L, value - 1);
}

// The metatable is created by whichever module opens first.
void ensure_metatable(lua_State* L) {
  if (luaL_getmetatable(L, kTensorMeta) != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  lua_newtable(L);
  int methods = lua_gettop(L);
  for (const Binding* b : all_bindings()) {
    if (!(b->where & METHOD)) continue;
    push_binding(L, *b, Style::Torch);
    lua_setfield(L, methods, b->name);
  }
  build_tensor_metatable(L);
}

void set_dtype_constants(lua_State* L, int t, bool numpy) {
  static const char* names[] = {"bool",    "uint8",    "uint16",  "uint32",  "uint64",  "int8",   "int16",
                                "int32",   "int64",    "float16", "bfloat16", "float32", "float64",
                                "complex64", "complex128"};
  for (const char* n : names) {
    lua_pushstring(L, n);
    lua_setfield(L, t, std::strcmp(n, "bool") == 0 && numpy ? "bool_" : n);
  }
  static const struct {
    const char* alias;
    const char* name;
  } torch_aliases[] = {{"float", "float32"}, {"double", "float64"}, {"half", "float16"},
                       {"long", "int64"},    {"int", "int32"},      {"short", "int16"},
                       {"uint8", "uint8"},   {"cfloat", "complex64"}, {"cdouble", "complex128"}},
    np_aliases[] = {{"float_", "float64"}, {"int_", "int64"}, {"half", "float16"},
                    {"single", "float32"}, {"double", "float64"}, {"bool", "bool"},
                    {"complex_", "complex128"}, {"csingle", "complex64"}, {"cdouble", "complex128"}};
  if (numpy)
    for (auto& a : np_aliases) lua_pushstring(L, a.name), lua_setfield(L, t, a.alias);
  else
    for (auto& a : torch_aliases) lua_pushstring(L, a.name), lua_setfield(L, t, a.alias);
}

// Module-level functions that are not ops.
int set_default_dtype(lua_State* L, Args& a) {
  DType dt = a.dtype(1);
  TIDE_CHECK(is_floating(dt), "set_default_dtype: expected a floating-point dtype, got ", dtype_name(dt));
  set_default_float_dtype(dt);
  (void)L;
  return 0;
}

int get_default_dtype(lua_State* L, Args&) {
  lua_pushstring(L, std::string(dtype_name(default_float_dtype())).c_str());
  return 1;
}

int set_num_threads_fn(lua_State*, Args& a) {
  int64_t n = a.integer(1);
  TIDE_CHECK(n >= 1 && n <= 1024, "set_num_threads: expected a thread count from 1 to 1024, got ", n);
  set_num_threads(int(n));
  return 0;
}

int get_num_threads_fn(lua_State* L, Args&) {
  lua_pushinteger(L, get_num_threads());
  return 1;
}

int promote_types_fn(lua_State* L, Args& a) {
  lua_pushstring(L, std::string(dtype_name(promote_types(a.dtype(1), a.dtype(2)))).c_str());
  return 1;
}

int result_type_fn(lua_State* L, Args& a) {
  lua_pushstring(L, std::string(dtype_name(ops::result_type(a.tensor_or_scalar(1), a.tensor_or_scalar(2)))).c_str());
  return 1;
}

int cuda_is_available(lua_State* L, Args&) {
  lua_pushboolean(L, cuda_available());
  return 1;
}

int cuda_device_count_fn(lua_State* L, Args&) {
  lua_pushinteger(L, cuda_device_count());
  return 1;
}

// The CUDA backend (throws saying why CUDA is unavailable).
const DeviceBackend& cuda_backend() { return backend_for(DeviceType::CUDA); }

// The device an optional argument names: an integer N (cuda:N) or a device string; cuda:0
// when absent.
int cuda_index(Args& a, int i) {
  if (!a.has(i)) return 0;
  std::string name;
  if (!a.is_number(i) && device_name_at(a.L, i, name)) a.consumed(i);
  Device d = a.is_number(i) ? Device{DeviceType::CUDA, int(a.integer(i))} : Device::parse(name.empty() ? a.string(i) : name);
  TIDE_CHECK(d.is_cuda() && d.index >= 0 && d.index < cuda_backend().device_count(), a.op, ": no such CUDA device ",
             d.str(), " (", cuda_backend().device_count(), " available)");
  return d.index;
}

int cuda_synchronize(lua_State*, Args& a) {
  const DeviceBackend& be = cuda_backend();
  if (a.has(1)) {
    be.synchronize(cuda_index(a, 1));
  } else {
    for (int d = 0; d < be.device_count(); ++d) be.synchronize(d);
  }
  return 0;
}

// torch.cuda.memory_allocated / memory_reserved / max_memory_allocated([device]): bytes.
template <size_t DeviceMemoryStats::*Field>
int cuda_memory_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, lua_Integer(cuda_backend().memory_stats(cuda_index(a, 1)).*Field));
  return 1;
}

int cuda_empty_cache(lua_State*, Args&) {
  cuda_backend().empty_cache();
  return 0;
}

int cuda_set_allow_tf32(lua_State*, Args& a) {
  cuda_backend().set_allow_tf32(a.boolean(1));
  return 0;
}

int cuda_unavailable_reason_fn(lua_State* L, Args&) {
  lua_pushstring(L, cuda_unavailable_reason().c_str());
  return 1;
}

// Monotonic wall-clock seconds (Python's perf_counter).
int clock_fn(lua_State* L, Args&) {
  using namespace std::chrono;
  lua_pushnumber(L, duration<double>(steady_clock::now().time_since_epoch()).count());
  return 1;
}

// Whether a file descriptor (2 is stderr) or a Lua file handle is a terminal: the progress
// bar of torch.utils.progress draws only there.
int isatty_fn(lua_State* L, Args& a) {
  int fd = -1;
  a.consumed(1);
  if (auto* f = static_cast<luaL_Stream*>(luaL_testudata(L, 1, LUA_FILEHANDLE))) {
    if (f->closef && f->f) fd = fileno(f->f);
  } else {
    int64_t n = a.integer(1);
    TIDE_CHECK(n >= 0 && n <= INT32_MAX, "utils._isatty: expected a file descriptor (>= 0) or a file, got ", n);
    fd = int(n);
  }
  lua_pushboolean(L, fd >= 0 && isatty(fd));
  return 1;
}

// A user's string as error messages quote it (tide::quote_user: a short prefix and its
// length), for the Lua-written parts' messages.
int quote_fn(lua_State* L, Args& a) {
  size_t n = 0;
  a.consumed(1);
  const char* s = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &n) : nullptr;
  if (!s) a.error("expected a string");
  const std::string q = quote_user(std::string_view(s, n));
  lua_pushlstring(L, q.data(), q.size());
  return 1;
}

// Pushes a list of strings as a Lua sequence.
static void push_names(lua_State* L, const std::vector<std::string>& names) {
  lua_createtable(L, int(names.size()), 0);
  for (size_t k = 0; k < names.size(); ++k) {
    lua_pushstring(L, names[k].c_str());
    lua_rawseti(L, -2, lua_Integer(k + 1));
  }
}

// The keywords a built-in function takes (the names its argument reader accepts), as a
// list; nothing for other values. tests/arg_coverage.lua compares them with what ran.
int binding_keywords_fn(lua_State* L, Args& a) {
  a.consumed(1);
  const Binding* b = binding_of(L, 1);
  if (b == nullptr) return 0;
  const ArgSpec& spec = binding_spec(*b);
  push_names(L, spec.keywords);
  lua_pushboolean(L, spec.open);
  return 2;
}

// The positional parameters of a built-in function as its doc names them (self first for a
// method), and whether the last one takes varargs; nothing for other values.
int binding_positionals_fn(lua_State* L, Args& a) {
  a.consumed(1);
  const Binding* b = binding_of(L, 1);
  if (b == nullptr) return 0;
  const ArgSpec& spec = binding_spec(*b);
  push_names(L, spec.positionals);
  lua_pushboolean(L, spec.varargs);
  return 2;
}

// The registered doc and name of a function made from a binding; nothing for any other
// value. torch._doc (bindings/lua/torch_doc.lua) looks C functions up through it.
int binding_doc_fn(lua_State* L, Args& a) {
  a.consumed(1);
  const Binding* b = binding_of(L, 1);
  if (b == nullptr) return 0;
  lua_pushstring(L, b->doc);
  lua_pushstring(L, b->name);
  return 2;
}

// The number of fixed parameters of a Lua function and whether it also takes varargs
// (torch._strict reads them; debug.getinfo may be absent in a sandbox).
int arity_fn(lua_State* L, Args& a) {
  a.consumed(1);
  TIDE_CHECK(lua_type(L, 1) == LUA_TFUNCTION, "_arity: expected a function, got a ", luaL_typename(L, 1));
  lua_Debug ar;
  lua_pushvalue(L, 1);
  lua_getinfo(L, ">u", &ar);
  lua_pushinteger(L, ar.nparams);
  lua_pushboolean(L, ar.isvararg);
  return 2;
}

// Set in the registry while the module's Lua-written parts load: only they add methods.
constexpr const char* kLoadingParts = "tide.loading_parts";

// torch._add_method(name, fn): makes a Lua-written torch function a tensor method too
// (x:name(...) calls fn(x, ...)), in the table the metatable's __index looks methods up in.
// Only while the module's Lua parts load (a script adding "shape" would shadow the property
// for every tensor), and a name that is already a method is an error: parts add methods,
// never replace them.
int add_method_fn(lua_State* L, Args& a) {
  a.consumed(1);
  a.consumed(2);
  lua_getfield(L, LUA_REGISTRYINDEX, kLoadingParts);
  TIDE_CHECK(lua_toboolean(L, -1), "_add_method: only the Lua-written parts of the module add methods, as it loads");
  lua_pop(L, 1);
  TIDE_CHECK(lua_type(L, 1) == LUA_TSTRING, "_add_method: expected a name, got a ", luaL_typename(L, 1));
  TIDE_CHECK(lua_type(L, 2) == LUA_TFUNCTION, "_add_method: expected a function, got a ", luaL_typename(L, 2));
  luaL_getmetatable(L, kTensorMeta);
  lua_getfield(L, -1, "__index");
  TIDE_ASSERT(lua_getupvalue(L, -1, 1) != nullptr && lua_istable(L, -1));
  lua_pushvalue(L, 1);
  TIDE_CHECK(lua_rawget(L, -2) == LUA_TNIL, "_add_method: '", lua_tostring(L, 1), "' is already a tensor method");
  lua_pop(L, 1);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_rawset(L, -3);
  return 0;
}

// torch._device(name): the device object of a name torch.device has checked ("cpu", "cuda",
// "cuda:N"), or of a device object.
int device_object_fn(lua_State* L, Args& a) {
  std::string name;
  if (!device_name_at(L, 1, name)) name = a.string(1);
  a.consumed(1);
  if (name != "cuda") name = Device::parse(name).str();
  push_device_name(L, name);
  return 1;
}

const Binding kModuleBindings[] = {
    {"_device", device_object_fn, TORCH,
     "_device(name) -> torch.device: the interned device object of \"cpu\", \"cuda\" or \"cuda:N\"."},
    {"_binding_keywords", binding_keywords_fn, TORCH,
     "_binding_keywords(f) -> names, open: the keywords a built-in function takes (nil for other values)."},
    {"_binding_positionals", binding_positionals_fn, TORCH,
     "_binding_positionals(f) -> names, varargs: the positional parameters of a built-in function, self first for a "
     "method (nil for other values)."},
    {"_add_method", add_method_fn, TORCH,
     "_add_method(name, fn): makes the Lua-written function fn the tensor method x:name(...) (a new name only)."},
    {"_arity", arity_fn, TORCH, "_arity(f) -> nparams, isvararg: the parameters of a Lua function."},
    {"_binding_doc", binding_doc_fn, TORCH,
     "_binding_doc(f) -> doc, name: the registration of a built-in function (nil for other values); help() reads it."},
    {"utils.clock", clock_fn, TORCH, "utils.clock() -> number: monotonic wall-clock seconds."},
    {"utils._isatty", isatty_fn, TORCH, "utils._isatty(fd | file) -> boolean: whether it is a terminal."},
    {"utils._quote", quote_fn, TORCH,
     "utils._quote(s) -> string: s as error messages quote it (at most 60 characters, then its length)."},
    {"set_default_dtype", set_default_dtype, TORCH, "set_default_dtype(dtype): the dtype of new float tensors."},
    {"get_default_dtype", get_default_dtype, TORCH, "get_default_dtype() -> string."},
    {"set_num_threads", set_num_threads_fn, TORCH,
     "set_num_threads(n): threads for the engine and BLAS together (fewer where the system refuses to start more; "
     "get_num_threads() says how many run)."},
    {"get_num_threads", get_num_threads_fn, TORCH, "get_num_threads() -> integer."},
    {"promote_types", promote_types_fn, TORCH | NUMPY, "promote_types(a, b) -> dtype: PyTorch's promotion of two dtypes."},
    {"result_type", result_type_fn, TORCH | NUMPY, "result_type(a, b) -> dtype of a binary op on a and b."},
    {"cuda.is_available", cuda_is_available, TORCH, "cuda.is_available() -> boolean."},
    {"cuda.device_count", cuda_device_count_fn, TORCH, "cuda.device_count() -> integer."},
    {"cuda.synchronize", cuda_synchronize, TORCH,
     "cuda.synchronize([device]): waits until every op queued on the GPU (all GPUs by default) has run."},
    {"cuda.memory_allocated", cuda_memory_fn<&DeviceMemoryStats::allocated>, TORCH,
     "cuda.memory_allocated([device]) -> integer: bytes held by live CUDA tensors."},
    {"cuda.memory_reserved", cuda_memory_fn<&DeviceMemoryStats::reserved>, TORCH,
     "cuda.memory_reserved([device]) -> integer: bytes the caching allocator holds (in use + cached)."},
    {"cuda.max_memory_allocated", cuda_memory_fn<&DeviceMemoryStats::peak_allocated>, TORCH,
     "cuda.max_memory_allocated([device]) -> integer: the peak of memory_allocated."},
    {"cuda.empty_cache", cuda_empty_cache, TORCH,
     "cuda.empty_cache(): returns the allocator's unused cached blocks to the GPU."},
    {"cuda._set_allow_tf32", cuda_set_allow_tf32, TORCH,
     "cuda._set_allow_tf32(bool): let float32 products use TF32 tensor cores (torch.backends.cuda.matmul.allow_tf32)."},
    {"cuda.unavailable_reason", cuda_unavailable_reason_fn, TORCH,
     "cuda.unavailable_reason() -> string: why CUDA cannot be used (\"\" when it can)."},
};

struct ModuleSpec {
  const char* name;
  Style style;
  unsigned flag;
};

int open_module(lua_State* L, const ModuleSpec& spec) {
  ensure_registered();
  ensure_metatable(L);
  lua_newtable(L);
  int t = lua_gettop(L);
  bool numpy = spec.style == Style::Numpy;
  for (const Binding* b : all_bindings()) {
    if (!(b->where & spec.flag)) continue;
    push_binding(L, *b, spec.style);
    set_dotted(L, t, numpy && b->np_name ? b->np_name : b->name);
  }
  for (const Binding& b : kModuleBindings) {
    if (!(b.where & spec.flag)) continue;
    push_binding(L, b, spec.style);
    set_dotted(L, t, b.name);
  }
  set_dtype_constants(L, t, numpy);
  luaL_newmetatable(L, kComplexMeta);  // the complex numbers' (bindings/lua/torch_complex.lua)
  lua_setfield(L, t, "_complex_mt");
  lua_pushstring(L, "0.1.0");
  lua_setfield(L, t, "__version__");
  // The Lua-written parts of the module (bindings/lua/<module>.lua, then <module>_*.lua such
  // as torch_nn.lua, in the order meson lists them) get the table and fill in the rest.
  size_t name_len = std::strlen(spec.name);
  lua_getfield(L, LUA_REGISTRYINDEX, kLoadingParts);  // (kept: a part may load another module)
  const bool was_loading = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_pushboolean(L, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadingParts);
  for (const auto& src : embedded::sources) {
    bool part = std::strncmp(src.name, spec.name, name_len) == 0 &&
                (src.name[name_len] == '\0' || src.name[name_len] == '_');
    if (!part) continue;
    // A plain buffer: a Lua error (a memory limit while loading) unwinds by longjmp past here.
    char chunk[96];
    std::snprintf(chunk, sizeof chunk, "=[tide %s]", src.name);
    // the module compiled at build time (tools/embed.py)
    if (luaL_loadbufferx(L, src.bytecode, src.size, chunk, "b") != LUA_OK) return lua_error(L);
    lua_pushvalue(L, t);
    lua_call(L, 1, 0);
  }
  lua_pushboolean(L, was_loading);
  lua_setfield(L, LUA_REGISTRYINDEX, kLoadingParts);
  return 1;
}

}  // namespace

void open_tide(lua_State* L, bool globals) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, luaopen_torch);
  lua_setfield(L, -2, "torch");
  lua_pushcfunction(L, luaopen_numpy);
  lua_setfield(L, -2, "numpy");
  lua_pushcfunction(L, luaopen_torch_nn);
  lua_setfield(L, -2, "torch.nn");
  lua_pushcfunction(L, luaopen_torch_optim);
  lua_setfield(L, -2, "torch.optim");
  lua_pop(L, 1);
  if (!globals) return;
  luaL_requiref(L, "torch", luaopen_torch, 1);
  lua_getfield(L, -1, "nn");
  lua_setglobal(L, "nn");
  lua_getfield(L, -1, "optim");
  lua_setglobal(L, "optim");
  lua_pop(L, 1);
  luaL_requiref(L, "numpy", luaopen_numpy, 0);
  lua_setglobal(L, "np");
}

}  // namespace tide::lua

extern "C" int luaopen_torch(lua_State* L) {
  return tide::lua::open_module(L, {"torch", tide::lua::Style::Torch, tide::lua::TORCH});
}

// require "torch.nn" / "torch.optim": the submodules of the torch module.
static int torch_submodule(lua_State* L, const char* field) {
  luaL_requiref(L, "torch", luaopen_torch, 0);
  lua_getfield(L, -1, field);
  return 1;
}

extern "C" int luaopen_torch_nn(lua_State* L) { return torch_submodule(L, "nn"); }
extern "C" int luaopen_torch_optim(lua_State* L) { return torch_submodule(L, "optim"); }

extern "C" int luaopen_numpy(lua_State* L) {
  return tide::lua::open_module(L, {"numpy", tide::lua::Style::Numpy, tide::lua::NUMPY});
}
