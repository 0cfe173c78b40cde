// tide::Interpreter. Everything that may raise a Lua error (allocation, metamethods, script
// code) runs inside lua_pcall, in C functions that hold no C++ objects with destructors
// while they call Lua; reading Lua values into tide::Value uses only Lua calls that never
// raise. C++ exceptions never cross Lua frames.
#include "interpreter.hpp"

#include <lua.hpp>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "../bindings/lua_api.hpp"
#include "../bindings/modules.hpp"
#include "../tensor/memory_budget.hpp"
#include "../tensor/random.hpp"

namespace tide {

ScriptError::ScriptError(std::string message, std::string traceback)
    : Error(traceback.empty() ? message : message + "\n" + traceback),
      message_(std::move(message)),
      traceback_(std::move(traceback)) {}

const char* Value::type_name() const {
  static const char* names[] = {"nil", "boolean", "number", "number", "string", "tensor", "table", "table"};
  return names[v.index()];
}

void Value::mismatch(const std::string& what, const char* expected) const {
  std::string got = std::holds_alternative<Array>(v) ? "an array table"
                    : std::holds_alternative<Map>(v) ? "a table with string keys"
                                                     : type_name();
  throw Error(what + ": expected " + expected + ", got " + got);
}

struct Interpreter::State {
  Options options;
  lua_State* L = nullptr;
  std::shared_ptr<MemoryBudget> budget;  // only with a memory limit
  size_t overdraft = 0;                  // how far small Lua allocations may pass the limit
  std::atomic<size_t> lua_heap_bytes{0};
  Generator generator;
  DType default_dtype = default_float_dtype();
  std::recursive_mutex mu;
  int depth = 0;  // nested calls (a host function calling back into the interpreter)
  uint64_t instructions = 0;
  std::chrono::steady_clock::time_point deadline;
  std::string traceback;  // of the last error, set by the message handler
};

namespace {

using State = Interpreter::State;
using Options = InterpreterOptions;
using Clock = std::chrono::steady_clock;

constexpr int kHookInterval = 1000;  // instructions between two checks of the limits
constexpr int kMaxValueDepth = 64;   // nesting of tables converted to Values
constexpr const char* kHostFunctionMeta = "tide.HostFunction";
constexpr const char* kCallResultMeta = "tide.CallResult";

State& state_of(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return *static_cast<State*>(ud);
}

// Small Lua allocations may overdraw the memory limit by a sixteenth of it, at most 1 MiB. A
// binding that pushes a tensor or a small table must not meet a Lua memory error while it
// holds C++ objects (the error's longjmp would skip their destructors and leak them); past
// the limit, the next tensor or large Lua allocation fails instead, where failing is clean.
constexpr size_t kSmallAllocation = 64 * 1024;
constexpr size_t kMaxOverdraftBytes = 1 << 20;
constexpr size_t kOverdraftDivisor = 16;

// The Lua allocator: counts the heap, and charges it to the memory budget when there is one
// (Lua answers a refusal with an emergency collection, then a "not enough memory" error).
void* lua_allocate(void* ud, void* ptr, size_t osize, size_t nsize) {
  auto& s = *static_cast<State*>(ud);
  size_t old = ptr ? osize : 0;
  if (nsize == 0) {
    std::free(ptr);
    s.lua_heap_bytes -= old;
    if (s.budget) s.budget->refund(old);
    return nullptr;
  }
  if (nsize > old && s.budget &&
      !s.budget->try_charge(nsize - old, nsize - old < kSmallAllocation ? s.overdraft : 0))
    return nullptr;
  void* p = std::realloc(ptr, nsize);
  if (!p) {
    if (s.budget && nsize > old) s.budget->refund(nsize - old);
    return nullptr;
  }
  if (nsize < old && s.budget) s.budget->refund(old - nsize);
  s.lua_heap_bytes += nsize;
  s.lua_heap_bytes -= old;
  return p;
}

// Count hook: stops a call that ran past its instruction or time limit. Once past, it fires
// at every instruction, so a script cannot swallow the error with pcall and go on.
void limit_hook(lua_State* L, lua_Debug*) {
  State& s = state_of(L);
  s.instructions += kHookInterval;
  const InterpreterOptions& o = s.options;
  bool out_of_instructions = o.instruction_limit && s.instructions > o.instruction_limit;
  bool out_of_time = o.time_limit_seconds > 0 && Clock::now() > s.deadline;
  if (!out_of_instructions && !out_of_time) return;
  s.instructions = o.instruction_limit;  // stays past the limit at every later check
  lua_sethook(L, limit_hook, LUA_MASKCOUNT, 1);
  if (out_of_instructions)
    luaL_error(L, "instruction limit of %I instructions exceeded", lua_Integer(o.instruction_limit));
  luaL_error(L, "time limit of %f seconds exceeded", lua_Number(o.time_limit_seconds));
}

// Message handler of every protected call: keeps the message, stores the traceback.
int message_handler(lua_State* L) {
  if (!lua_isstring(L, 1)) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return 1;
    lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, nullptr, 1);
  size_t n = 0;
  const char* tb = lua_tolstring(L, -1, &n);
  try {
    state_of(L).traceback.assign(tb, n);
  } catch (...) {
  }
  lua_pop(L, 1);
  return 1;
}

// The engine state of this interpreter installed on the calling thread while a call runs:
// its lock, random generator, default dtype and memory budget; the limits restart at each
// outermost call.
class Entry {
 public:
  explicit Entry(State& s)
      : s_(s),
        lock_(s.mu),
        saved_generator_(set_thread_generator(&s.generator)),
        saved_dtype_(set_thread_default_dtype_slot(&s.default_dtype)),
        budget_(s.budget.get()) {
    if (s.depth++ > 0 || !s.L) return;
    s.instructions = 0;
    s.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                    std::chrono::duration<double>(s.options.time_limit_seconds));
    if (s.options.instruction_limit || s.options.time_limit_seconds > 0)
      lua_sethook(s.L, limit_hook, LUA_MASKCOUNT, kHookInterval);
  }
  ~Entry() {
    --s_.depth;
    set_thread_default_dtype_slot(saved_dtype_);
    set_thread_generator(saved_generator_);
  }
  Entry(const Entry&) = delete;
  Entry& operator=(const Entry&) = delete;

 private:
  State& s_;
  std::unique_lock<std::recursive_mutex> lock_;
  Generator* saved_generator_;
  DType* saved_dtype_;
  MemoryBudgetScope budget_;
};

// Runs fn(L) with `ctx` as its light-userdata argument in protected mode; on an error throws
// ScriptError with the message and traceback, the stack back where it was. On success the
// nresults results are left on the stack.
void protected_call(State& s, lua_CFunction fn, void* ctx, int nresults) {
  lua_State* L = s.L;
  if (!lua_checkstack(L, 8)) throw ScriptError("not enough memory for the Lua stack", "");
  int base = lua_gettop(L);
  lua_pushcfunction(L, message_handler);
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, ctx);
  s.traceback.clear();
  int status = lua_pcall(L, 1, nresults, base + 1);
  if (status == LUA_OK) {
    lua_remove(L, base + 1);
    return;
  }
  std::string message;
  if (status == LUA_ERRMEM && s.budget)
    message = "memory limit of " + std::to_string(s.budget->limit()) + " bytes exceeded (" +
              (lua_isstring(L, -1) ? lua_tostring(L, -1) : "not enough memory") + ")";
  else if (const char* msg = lua_tostring(L, -1))
    message = msg;
  else
    message = "(error object is not a string)";
  lua_settop(L, base);
  throw ScriptError(std::move(message), std::move(s.traceback));
}

// ---- Lua -> Value (never raises a Lua error) ----------------------------------------------

Value read_value(lua_State* L, int idx, const std::string& what, int depth);

Value read_table(lua_State* L, int idx, const std::string& what, int depth) {
  TIDE_CHECK(depth < kMaxValueDepth, what, ": tables nested deeper than ", kMaxValueDepth, " levels (a cycle?)");
  TIDE_CHECK(lua_checkstack(L, 4), what, ": not enough memory for the Lua stack");
  Value::Array array;
  Value::Map map;
  std::vector<std::pair<int64_t, Value>> indexed;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    int key_type = lua_type(L, -2);
    try {
      if (key_type == LUA_TSTRING) {
        size_t n = 0;
        const char* k = lua_tolstring(L, -2, &n);
        std::string key(k, n);
        map.emplace(key, read_value(L, lua_gettop(L), what + "." + key, depth + 1));
      } else if (key_type == LUA_TNUMBER && lua_isinteger(L, -2)) {
        int64_t k = lua_tointeger(L, -2);
        indexed.emplace_back(k, read_value(L, lua_gettop(L), what + "[" + std::to_string(k) + "]", depth + 1));
      } else {
        TIDE_FAIL(what, ": a table key of type ", lua_typename(L, key_type), " has no host value");
      }
    } catch (...) {
      lua_pop(L, 2);
      throw;
    }
    lua_pop(L, 1);
  }
  TIDE_CHECK(map.empty() || indexed.empty(), what, ": a table with both integer and string keys has no host value");
  if (!map.empty()) return Value(std::move(map));
  array.resize(indexed.size());
  for (auto& [k, v] : indexed) {
    TIDE_CHECK(k >= 1 && k <= int64_t(indexed.size()), what, ": key ", k,
               " is not part of an array 1..", indexed.size(), " (tables with holes have no host value)");
    array[size_t(k - 1)] = std::move(v);
  }
  return Value(std::move(array));
}

Value read_value(lua_State* L, int idx, const std::string& what, int depth) {
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return Value();
    case LUA_TBOOLEAN: return Value(bool(lua_toboolean(L, idx)));
    case LUA_TNUMBER:
      if (lua_isinteger(L, idx)) return Value(int64_t(lua_tointeger(L, idx)));
      return Value(double(lua_tonumber(L, idx)));
    case LUA_TSTRING: {
      size_t n = 0;
      const char* p = lua_tolstring(L, idx, &n);
      return Value(std::string(p, n));
    }
    case LUA_TTABLE: return read_table(L, lua_absindex(L, idx), what, depth);
    case LUA_TUSERDATA:
      if (Tensor* t = lua::tensor_slot(L, idx)) {
        TIDE_CHECK(t->defined(), what, ": the tensor was freed (x:free() or <close>)");
        return Value(*t);
      }
      break;
    default: break;
  }
  TIDE_FAIL(what, ": a ", luaL_typename(L, idx), " has no host value");
}

// ---- Value -> Lua (inside protected calls; no C++ temporaries with destructors) ------------

void push_value(lua_State* L, const Value& value);

// A tensor userdata made without a C++ object alive across the Lua calls that may raise:
// an empty Tensor first, the metatable, then the shared handle assigned (which cannot fail).
void push_tensor_value(lua_State* L, const Tensor& t) {
  auto* slot = static_cast<Tensor*>(lua_newuserdatauv(L, sizeof(Tensor), 0));
  new (slot) Tensor();
  luaL_setmetatable(L, lua::kTensorMeta);
  *slot = t;
  lua::gc_account(L, t.nbytes());
}

void push_value(lua_State* L, const Value& value) {
  luaL_checkstack(L, 4, "tables nested too deeply");
  switch (value.v.index()) {
    case 0: lua_pushnil(L); break;
    case 1: lua_pushboolean(L, std::get<bool>(value.v)); break;
    case 2: lua_pushinteger(L, std::get<int64_t>(value.v)); break;
    case 3: lua_pushnumber(L, std::get<double>(value.v)); break;
    case 4: {
      const std::string& s = std::get<std::string>(value.v);
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case 5: {
      const Tensor& t = std::get<Tensor>(value.v);
      if (t.defined()) push_tensor_value(L, t);
      else lua_pushnil(L);
      break;
    }
    case 6: {
      const Value::Array& a = std::get<Value::Array>(value.v);
      lua_createtable(L, int(std::min<size_t>(a.size(), 1 << 30)), 0);
      for (size_t i = 0; i < a.size(); ++i) {
        push_value(L, a[i]);
        lua_rawseti(L, -2, lua_Integer(i + 1));
      }
      break;
    }
    default: {
      const Value::Map& m = std::get<Value::Map>(value.v);
      lua_createtable(L, 0, int(std::min<size_t>(m.size(), 1 << 30)));
      for (const auto& kv : m) {
        lua_pushlstring(L, kv.first.data(), kv.first.size());
        push_value(L, kv.second);
        lua_rawset(L, -3);
      }
      break;
    }
  }
}

// ---- dotted paths ----------------------------------------------------------------------

// Pushes the part [begin, end) of a path as a key: an integer for all digits, else a string.
void push_key(lua_State* L, const char* begin, const char* end) {
  bool digits = begin < end && end - begin < 18;
  lua_Integer number = 0;
  for (const char* p = begin; p < end && digits; ++p) {
    digits = *p >= '0' && *p <= '9';
    number = number * 10 + (*p - '0');
  }
  if (digits) lua_pushinteger(L, number);
  else lua_pushlstring(L, begin, size_t(end - begin));
}

// Pushes the table holding the last part of `path` (the globals for a plain name) and
// returns where the last part starts. Raises naming the part that is not a table.
const char* push_parent(lua_State* L, const char* path) {
  lua_pushglobaltable(L);
  const char* part = path;
  while (const char* dot = std::strchr(part, '.')) {
    push_key(L, part, dot);
    lua_gettable(L, -2);
    lua_remove(L, -2);
    if (!lua_istable(L, -1) && !lua_isuserdata(L, -1)) {
      const char* type = luaL_typename(L, -1);
      lua_pushlstring(L, path, size_t(dot - path));
      luaL_error(L, "'%s': '%s' is a %s value, not a table", path, lua_tostring(L, -1), type);
    }
    part = dot + 1;
  }
  return part;
}

struct PathArgs {
  const char* path;
  const Value* value;
};

int get_path(lua_State* L) {
  auto* a = static_cast<PathArgs*>(lua_touserdata(L, 1));
  const char* last = push_parent(L, a->path);
  push_key(L, last, last + std::strlen(last));
  lua_gettable(L, -2);
  return 1;
}

int set_path(lua_State* L) {
  auto* a = static_cast<PathArgs*>(lua_touserdata(L, 1));
  const char* last = push_parent(L, a->path);
  push_key(L, last, last + std::strlen(last));
  push_value(L, *a->value);
  lua_settable(L, -3);
  return 0;
}

struct CallArgs {
  const char* path;
  const std::vector<Value>* args;
};

int call_path(lua_State* L) {
  auto* a = static_cast<CallArgs*>(lua_touserdata(L, 1));
  PathArgs get{a->path, nullptr};
  lua_pushcfunction(L, get_path);
  lua_pushlightuserdata(L, &get);
  lua_call(L, 1, 1);
  luaL_checkstack(L, int(std::min<size_t>(a->args->size(), 1 << 20)) + 4, "too many arguments");
  for (const Value& v : *a->args) push_value(L, v);
  lua_call(L, int(a->args->size()), 1);
  return 1;
}

// ---- chunks ----------------------------------------------------------------------------

struct ChunkArgs {
  const char* code;  // source, or nullptr for a file
  size_t size;
  const char* name;  // chunk name, or the file path
  const std::vector<std::string>* args;
};

int run_chunk(lua_State* L) {
  auto* c = static_cast<ChunkArgs*>(lua_touserdata(L, 1));
  int status = c->code ? luaL_loadbuffer(L, c->code, c->size, c->name) : luaL_loadfile(L, c->name);
  if (status != LUA_OK) return lua_error(L);
  int nargs = 0;
  if (c->args) {  // arg as the lua program sets it, and the arguments as `...`
    nargs = int(c->args->size());
    luaL_checkstack(L, nargs + 4, "too many arguments to the script");
    lua_createtable(L, nargs, 1);
    lua_pushstring(L, c->name);
    lua_rawseti(L, -2, 0);
    for (int i = 0; i < nargs; ++i) {
      lua_pushstring(L, (*c->args)[size_t(i)].c_str());
      lua_pushvalue(L, -1);
      lua_rawseti(L, -3, i + 1);
      lua_insert(L, -2);
    }
    lua_setglobal(L, "arg");
  }
  lua_call(L, nargs, 0);
  return 0;
}

// ---- host functions --------------------------------------------------------------------

struct HostEntry {
  std::string name;
  Interpreter::HostFunction fn;
};

// The outcome of one host call, owned by Lua while its result is pushed.
struct CallResult {
  Value value;
  std::string error;
  bool failed = false;
};

template <typename T>
int destroy_userdata(lua_State* L) {
  static_cast<T*>(lua_touserdata(L, 1))->~T();
  return 0;
}

// A userdata holding a default-constructed T, destroyed by its __gc; the metatable is
// hidden from getmetatable so that scripts cannot call __gc twice.
template <typename T>
T* new_owned(lua_State* L, const char* meta) {
  auto* p = static_cast<T*>(lua_newuserdatauv(L, sizeof(T), 0));
  new (p) T();
  if (luaL_newmetatable(L, meta)) {
    lua_pushcfunction(L, destroy_userdata<T>);
    lua_setfield(L, -2, "__gc");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
  }
  lua_setmetatable(L, -2);
  return p;
}

// Converts the arguments, calls the host function and records its result or error.
void invoke_host(lua_State* L, const HostEntry& host, int nargs, CallResult& out) noexcept {
  try {
    std::vector<Value> args;
    args.reserve(size_t(nargs));
    for (int i = 1; i <= nargs; ++i)
      args.push_back(read_value(L, i, host.name + ": argument " + std::to_string(i), 0));
    out.value = host.fn(args);
  } catch (const std::exception& e) {
    out.failed = true;
    std::string prefix = host.name + ": ";
    std::string what = e.what();
    out.error = what.rfind(prefix, 0) == 0 ? what : prefix + what;
  } catch (...) {
    out.failed = true;
    out.error = host.name + ": unknown C++ exception";
  }
}

int call_host(lua_State* L) {
  auto* host = static_cast<HostEntry*>(lua_touserdata(L, lua_upvalueindex(1)));
  int nargs = lua_gettop(L);
  auto* result = new_owned<CallResult>(L, kCallResultMeta);
  invoke_host(L, *host, nargs, *result);
  if (result->failed) {
    lua_pushlstring(L, result->error.data(), result->error.size());
    return lua_error(L);
  }
  if (result->value.is_nil()) return 0;
  push_value(L, result->value);
  return 1;
}

struct DefArgs {
  const char* name;
  HostEntry* entry;  // moved into the Lua-owned copy
};

int define_host(lua_State* L) {
  auto* d = static_cast<DefArgs*>(lua_touserdata(L, 1));
  auto* entry = new_owned<HostEntry>(L, kHostFunctionMeta);
  *entry = std::move(*d->entry);  // moves of std::string and std::function do not throw
  lua_pushcclosure(L, call_host, 1);
  const char* last = push_parent(L, d->name);
  push_key(L, last, last + std::strlen(last));
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 0;
}

// ---- opening the libraries -----------------------------------------------------------

// load() for the sandbox: text chunks only (bytecode can crash the VM).
int text_only_load(lua_State* L) {
  int n = lua_gettop(L);
  lua_settop(L, n < 3 ? 3 : n);
  lua_pushliteral(L, "t");
  lua_replace(L, 3);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Runs with the original load, the torch and numpy modules and the text-only load as `...`.
constexpr const char* kSandboxSetup = R"lua(
local torch, np, text_only_load = ...
dofile, loadfile, load = nil, nil, text_only_load
string.dump = nil
getmetatable("").__metatable = false
getmetatable(torch.zeros(0)).__metatable = false
local keep_os = {clock = true, time = true, date = true, difftime = true}
for k in pairs(os) do if not keep_os[k] then os[k] = nil end end
package.searchers = {package.searchers[1]}
package.loadlib, package.searchpath, package.path, package.cpath = nil, nil, "", ""
package = nil
for _, k in ipairs{"save", "load", "set_num_threads"} do torch[k] = nil end
for _, k in ipairs{"save", "load", "savez", "savez_compressed", "loadtxt", "savetxt"} do np[k] = nil end
)lua";

int open_libraries(lua_State* L) {
  const InterpreterOptions& o = state_of(L).options;
  if (!o.sandbox) {
    luaL_openlibs(L);
  } else {
    static const luaL_Reg safe[] = {{LUA_GNAME, luaopen_base},          {LUA_LOADLIBNAME, luaopen_package},
                                    {LUA_COLIBNAME, luaopen_coroutine}, {LUA_TABLIBNAME, luaopen_table},
                                    {LUA_STRLIBNAME, luaopen_string},   {LUA_MATHLIBNAME, luaopen_math},
                                    {LUA_UTF8LIBNAME, luaopen_utf8},    {LUA_OSLIBNAME, luaopen_os}};
    for (const luaL_Reg& lib : safe) {
      luaL_requiref(L, lib.name, lib.func, 1);
      lua_pop(L, 1);
    }
  }
  lua::open_tide(L, o.globals);
  luaL_requiref(L, "torch", luaopen_torch, 0);
  luaL_requiref(L, "numpy", luaopen_numpy, 0);
  if (o.sandbox) {
    if (luaL_loadbuffer(L, kSandboxSetup, std::strlen(kSandboxSetup), "=[tide sandbox]") != LUA_OK)
      return lua_error(L);
    lua_pushvalue(L, -3);
    lua_pushvalue(L, -3);
    lua_getglobal(L, "load");
    lua_pushcclosure(L, text_only_load, 1);
    lua_call(L, 3, 0);
  }
  lua_pop(L, 2);
  // Generational collection, as the tide program (interpreter/main.cpp says why).
  lua_gc(L, LUA_GCGEN, 0, 0);
  return 0;
}

}  // namespace

// The libraries open without a limit: a Lua memory error there would unwind through the
// module loader's C++ frames. The memory limit starts afterwards, with the heap they took.
Interpreter::Interpreter(const Options& options) : s_(std::make_unique<State>()) {
  s_->options = options;
  Entry entry(*s_);
  lua_State* L = lua_newstate(lua_allocate, s_.get());
  if (!L) throw ScriptError("cannot create a Lua state: not enough memory", "");
  s_->L = L;
  std::memset(lua_getextraspace(L), 0, LUA_EXTRASPACE);  // Lua leaves it uninitialised
  try {
    protected_call(*s_, open_libraries, nullptr, 0);
    if (options.memory_limit_bytes) {
      auto budget = std::make_shared<MemoryBudget>(options.memory_limit_bytes);
      lua_gc(L, LUA_GCCOLLECT);
      size_t heap = s_->lua_heap_bytes;
      if (!budget->try_charge(heap))
        throw ScriptError("memory limit of " + std::to_string(options.memory_limit_bytes) + " bytes is below the " +
                              std::to_string(heap) + " bytes the torch and numpy modules take",
                          "");
      budget->reclaim = [L] { lua_gc(L, LUA_GCCOLLECT); };
      s_->overdraft = std::min(kMaxOverdraftBytes, options.memory_limit_bytes / kOverdraftDivisor);
      s_->budget = std::move(budget);
    }
  } catch (...) {
    lua_close(L);
    s_->L = nullptr;
    throw;
  }
}

Interpreter::~Interpreter() {
  Entry entry(*s_);
  lua_close(s_->L);
  s_->L = nullptr;
}

void Interpreter::run_string(std::string_view code, const std::string& chunkname) {
  Entry entry(*s_);
  ChunkArgs c{code.data(), code.size(), chunkname.c_str(), nullptr};
  protected_call(*s_, run_chunk, &c, 0);
}

void Interpreter::run_file(const std::string& path, const std::vector<std::string>& args) {
  Entry entry(*s_);
  ChunkArgs c{nullptr, 0, path.c_str(), &args};
  protected_call(*s_, run_chunk, &c, 0);
}

// Reads the value left on the stack by a protected call and pops it.
static Value pop_value(lua_State* L, const std::string& what) {
  try {
    Value v = read_value(L, -1, what, 0);
    lua_pop(L, 1);
    return v;
  } catch (const std::exception& e) {
    lua_pop(L, 1);
    throw ScriptError(e.what(), "");
  }
}

Value Interpreter::call(const std::string& name, const std::vector<Value>& args) {
  Entry entry(*s_);
  CallArgs c{name.c_str(), &args};
  protected_call(*s_, call_path, &c, 1);
  return pop_value(s_->L, name + " (result)");
}

Value Interpreter::get_value(const std::string& name) {
  Entry entry(*s_);
  PathArgs a{name.c_str(), nullptr};
  protected_call(*s_, get_path, &a, 1);
  return pop_value(s_->L, name);
}

void Interpreter::set_value(const std::string& name, const Value& value) {
  Entry entry(*s_);
  PathArgs a{name.c_str(), &value};
  protected_call(*s_, set_path, &a, 0);
}

void Interpreter::def_function(const std::string& name, HostFunction fn) {
  Entry entry(*s_);
  HostEntry host{name, std::move(fn)};
  DefArgs d{name.c_str(), &host};
  protected_call(*s_, define_host, &d, 0);
}

size_t Interpreter::memory_used() const {
  return s_->budget ? s_->budget->used() : s_->lua_heap_bytes.load();
}

lua_State* Interpreter::lua() const { return s_->L; }

}  // namespace tide
