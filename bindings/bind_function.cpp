// Lua functions that the autograd engine calls back: tensor hooks (x:register_hook) and the
// backward of torch.autograd.Function (its Lua half is bindings/lua/torch_autograd.lua).
//
// The engine holds each as an opaque C++ object (GradHook, CustomBackward) that keeps a
// registry reference to its Lua function. Three rules keep that safe:
// - The function runs only on the Lua thread that started the backward (set by the
//   backward bindings through LuaCallbackScope), and only if that thread belongs to the
//   interpreter the function came from; otherwise the call is an error, not a crash.
// - It runs inside lua_pcall of a trampoline with no C++ object alive across a Lua call, so a
//   Lua error never longjmps over C++ frames: it comes back as a status and is rethrown as a
//   tide::Error, which the engine unwinds and the binding turns into a Lua error again.
// - A graph can outlive its interpreter (a host keeps a tensor) and is freed wherever its last
//   tensor dies (often inside the collector), so the objects never touch Lua when they die:
//   their references are queued and released at the next call into that interpreter, and
//   dropped unreleased once it is closed.
#include <cstring>
#include <mutex>

#include "../tensor/autograd/autograd.hpp"
#include "../tensor/autograd/custom.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

thread_local lua_State* t_callback_state = nullptr;

// One interpreter (a lua_State and its threads) as seen from callbacks: its main thread
// while it is open, null once lua_close finalized the sentinel that owns a reference.
struct LuaUniverse {
  std::mutex mu;
  lua_State* main = nullptr;
  std::vector<int> dead_refs;  // references of callbacks that died, not yet released
};

constexpr const char* kUniverseMeta = "tide.LuaUniverse";
const char kUniverseKey = 0;

int universe_gc(lua_State* L) {
  auto* slot = static_cast<std::shared_ptr<LuaUniverse>*>(luaL_testudata(L, 1, kUniverseMeta));
  if (slot && *slot) {
    {
      std::lock_guard<std::mutex> lock((*slot)->mu);
      (*slot)->main = nullptr;
      (*slot)->dead_refs.clear();
    }
    slot->reset();
  }
  return 0;
}

lua_State* main_thread(lua_State* L) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, LUA_RIDX_MAINTHREAD);
  lua_State* main = lua_tothread(L, -1);
  lua_pop(L, 1);
  return main;
}

// The universe of L, made on first use (a userdata in the registry finalized at lua_close).
std::shared_ptr<LuaUniverse> universe_of(lua_State* L) {
  if (lua_rawgetp(L, LUA_REGISTRYINDEX, &kUniverseKey) == LUA_TUSERDATA) {
    auto* slot = static_cast<std::shared_ptr<LuaUniverse>*>(lua_touserdata(L, -1));
    std::shared_ptr<LuaUniverse> u = *slot;
    lua_pop(L, 1);
    return u;
  }
  lua_pop(L, 1);
  auto u = std::make_shared<LuaUniverse>();
  u->main = main_thread(L);
  void* ud = lua_newuserdatauv(L, sizeof(std::shared_ptr<LuaUniverse>), 0);
  new (ud) std::shared_ptr<LuaUniverse>(u);
  if (luaL_newmetatable(L, kUniverseMeta)) {
    lua_pushcfunction(L, universe_gc);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  lua_rawsetp(L, LUA_REGISTRYINDEX, &kUniverseKey);
  return u;
}

// Releases the references of callbacks that died since the last call into this interpreter.
void release_dead_refs(lua_State* L, LuaUniverse& u) {
  std::vector<int> refs;
  {
    std::lock_guard<std::mutex> lock(u.mu);
    refs.swap(u.dead_refs);
  }
  for (int r : refs) luaL_unref(L, LUA_REGISTRYINDEX, r);
}

// What the trampoline needs: the function, its arguments, where its results go.
struct CallFrame {
  int ref;
  const char* what;
  const std::vector<Tensor>* args;
  std::vector<Tensor>* results;
};

// Runs inside lua_pcall: calls the function with the tensors (nil for undefined ones) and
// reads its results, each a tensor or nil. Nothing with a destructor is alive while Lua code
// runs here; a C++ exception while reading results becomes a Lua error after the try block.
int call_trampoline(lua_State* L) {
  auto* f = static_cast<CallFrame*>(lua_touserdata(L, 1));
  int nargs = int(f->args->size());
  luaL_checkstack(L, nargs + 2, "autograd callback");
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->ref);
  for (int i = 0; i < nargs; ++i) {
    if ((*f->args)[size_t(i)].defined()) push_tensor(L, (*f->args)[size_t(i)]);
    else lua_pushnil(L);
  }
  lua_call(L, nargs, LUA_MULTRET);
  bool failed = false;
  try {
    for (int i = 2; i <= lua_gettop(L); ++i) {
      if (lua_isnil(L, i)) {
        f->results->emplace_back();
        continue;
      }
      Tensor* t = to_tensor(L, i);
      TIDE_CHECK(t, f->what, ": expected a tensor or nil as result ", i - 1, ", got a ", luaL_typename(L, i));
      f->results->push_back(*t);
    }
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
    failed = true;
  }
  if (failed) return lua_error(L);
  return 0;
}

// A Lua function held for the engine (see the file comment).
class LuaFunctionRef {
 public:
  // References the function at idx of L.
  LuaFunctionRef(lua_State* L, int idx) : universe_(universe_of(L)) {
    release_dead_refs(L, *universe_);
    lua_pushvalue(L, idx);
    ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  LuaFunctionRef(const LuaFunctionRef&) = delete;
  LuaFunctionRef& operator=(const LuaFunctionRef&) = delete;
  ~LuaFunctionRef() { drop(); }

  // Gives the reference back (to be released at the next call into the interpreter).
  void drop() {
    if (ref_ == LUA_NOREF) return;
    std::lock_guard<std::mutex> lock(universe_->mu);
    if (universe_->main) universe_->dead_refs.push_back(ref_);
    ref_ = LUA_NOREF;
  }

  // Calls the function with these tensors; returns its results (undefined for nil). `what`
  // names the caller in errors. A Lua error in the function is rethrown as tide::Error.
  std::vector<Tensor> call(const char* what, const std::vector<Tensor>& args) const {
    lua_State* L = t_callback_state;
    {
      std::lock_guard<std::mutex> lock(universe_->mu);
      TIDE_CHECK(universe_->main, what, ": its Lua function belongs to an interpreter that was closed");
      TIDE_CHECK(L && main_thread(L) == universe_->main, what,
                 ": its Lua function can only run in a backward started by a script of the interpreter that made it");
    }
    TIDE_CHECK(ref_ != LUA_NOREF, what, ": the Lua function was released");
    // Its effects on Lua state are out of torch.compile's sight (the engine holds it).
    capture::mark_broken(std::string(what) + ": runs a Lua function from the engine (a hook or an autograd.Function's "
                                             "backward), which a replay would not run");
    release_dead_refs(L, *universe_);
    std::vector<Tensor> results;
    CallFrame frame{ref_, what, &args, &results};
    int top = lua_gettop(L);
    TIDE_CHECK(lua_checkstack(L, 3), what, ": Lua stack overflow");
    lua_pushcfunction(L, call_trampoline);
    lua_pushlightuserdata(L, &frame);
    if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
      std::string msg = lua_type(L, -1) == LUA_TSTRING
                            ? std::string(lua_tostring(L, -1))
                            : std::string(what) + ": the Lua function raised an error object of type " +
                                  luaL_typename(L, -1);
      lua_settop(L, top);
      throw Error(msg);
    }
    lua_settop(L, top);
    return results;
  }

 private:
  std::shared_ptr<LuaUniverse> universe_;
  int ref_ = LUA_NOREF;
};

// x:register_hook(fn): fn(grad) returns a tensor to use instead, or nothing.
struct LuaHook final : GradHook {
  LuaFunctionRef fn;
  LuaHook(lua_State* L, int idx) : fn(L, idx) {}
  Tensor operator()(const Tensor& grad) override {
    std::vector<Tensor> r = fn.call("register_hook", {grad});
    TIDE_CHECK(r.size() <= 1, "register_hook: a hook returns one tensor or nothing, got ", r.size(), " values");
    return r.empty() ? Tensor() : r[0];
  }
};

// The backward of a torch.autograd.Function: the Lua wrapper made by Function.apply, which
// takes one gradient per tensor output and returns one per tensor input (checked there).
struct LuaBackward final : autograd::CustomBackward {
  LuaFunctionRef fn;
  std::string what;
  size_t n_inputs;
  LuaBackward(lua_State* L, int idx, std::string w, size_t n) : fn(L, idx), what(std::move(w)), n_inputs(n) {}
  std::vector<Tensor> backward(const std::vector<Tensor>& grads) override {
    std::vector<Tensor> r = fn.call(what.c_str(), grads);
    TIDE_CHECK(r.size() == n_inputs, what, ": backward gave ", r.size(), " gradients for ", n_inputs,
               " tensor inputs");
    return r;
  }
};

// ---- handles: the userdata that hooks and recorded functions give back to Lua

constexpr const char* kHookHandleMeta = "tide.RemovableHandle";
constexpr const char* kFunctionStateMeta = "tide.FunctionState";

template <typename T>
int destroy_gc(lua_State* L, const char* meta) {
  if (auto* p = static_cast<T*>(luaL_testudata(L, 1, meta))) *p = T();  // a second call finds it empty
  return 0;
}

template <typename T>
void push_boxed(lua_State* L, T value, const char* meta, lua_CFunction gc, const Binding* methods, size_t nmethods) {
  void* ud = lua_newuserdatauv(L, sizeof(T), 0);
  new (ud) T(std::move(value));
  if (luaL_newmetatable(L, meta)) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_createtable(L, 0, int(nmethods));
    for (size_t i = 0; i < nmethods; ++i) {
      push_binding(L, methods[i], Style::Torch);
      lua_setfield(L, -2, std::strchr(methods[i].name, ':') + 1);
    }
    lua_setfield(L, -2, "__index");
  }
  lua_setmetatable(L, -2);
}

int hook_handle_gc(lua_State* L) { return destroy_gc<autograd::HookHandle>(L, kHookHandleMeta); }
int function_state_gc(lua_State* L) {
  return destroy_gc<std::weak_ptr<autograd::CustomState>>(L, kFunctionStateMeta);
}

// handle:remove(): takes the hook out (a no-op the second time).
int hook_remove_fn(lua_State* L, Args& a) {
  a.consumed(1);
  auto* h = static_cast<autograd::HookHandle*>(luaL_testudata(L, 1, kHookHandleMeta));
  if (!h) a.error("expected the handle that register_hook returned");
  autograd::remove_hook(*h);
  return 0;
}

const Binding kHookHandleMethods[] = {
    {"RemovableHandle:remove", hook_remove_fn, METHOD, "remove(): takes the hook out; later gradients skip it."},
};

// x:register_hook(fn) -> handle
int register_hook_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  a.consumed(2);
  if (lua_type(L, 2) != LUA_TFUNCTION) a.error(std::string("expected a function, got a ") + luaL_typename(L, 2));
  autograd::HookHandle h = autograd::add_hook(x, std::make_shared<LuaHook>(L, 2), a.op);
  push_boxed(L, std::move(h), kHookHandleMeta, hook_handle_gc, kHookHandleMethods, std::size(kHookHandleMethods));
  return 1;
}

int retain_grad_fn(lua_State*, Args& a) {
  autograd::retain_grad(a.tensor(1), a.op);
  return 0;
}

// The tensors of a list at i (a table of tensors, nil entries where `holes`, n = its length).
std::vector<Tensor> tensors_at(Args& a, int i, int n, const char* what) {
  lua_State* L = a.L;
  a.consumed(i);
  if (lua_type(L, i) != LUA_TTABLE) a.error(std::string(what) + " must be a table of tensors");
  std::vector<Tensor> out;
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, i, k);
    Tensor* t = to_tensor(L, -1);
    lua_pop(L, 1);
    if (!t) a.error(std::string(what) + " entry " + std::to_string(k) + " is not a tensor");
    out.push_back(*t);
  }
  return out;
}

// torch.autograd._record_function(name, inputs, outputs, differentiable, saved, backward)
// -> outputs[, state]: the C++ half of Function.apply (torch_autograd.lua); no state when no
// output is differentiable (then nothing is recorded).
int record_function_fn(lua_State* L, Args& a) {
  std::string name = a.string(1);
  std::vector<Tensor> inputs = tensors_at(a, 2, int(lua_rawlen(L, 2)), "inputs");
  std::vector<Tensor> outputs = tensors_at(a, 3, int(lua_rawlen(L, 3)), "outputs");
  a.consumed(4);
  std::vector<bool> differentiable;
  for (size_t k = 1; k <= outputs.size(); ++k) {
    lua_rawgeti(L, 4, lua_Integer(k));
    differentiable.push_back(lua_toboolean(L, -1));
    lua_pop(L, 1);
  }
  std::vector<Tensor> saved = tensors_at(a, 5, int(lua_rawlen(L, 5)), "saved");
  a.consumed(6);
  if (lua_type(L, 6) != LUA_TFUNCTION) a.error("backward must be a function");
  auto backward = std::make_shared<LuaBackward>(L, 6, name + "Backward", inputs.size());
  autograd::CustomRecord rec = autograd::record_custom(name, inputs, outputs, differentiable, saved, backward);
  lua_createtable(L, int(rec.outputs.size()), 0);
  for (size_t k = 0; k < rec.outputs.size(); ++k) {
    push_tensor(L, rec.outputs[k]);
    lua_rawseti(L, -2, lua_Integer(k + 1));
  }
  if (rec.state.expired()) return 1;  // nothing was recorded (no output is differentiable)
  push_boxed(L, rec.state, kFunctionStateMeta, function_state_gc, nullptr, 0);
  return 2;
}

// torch.autograd._saved_tensors(state, name) -> list
int saved_tensors_fn(lua_State* L, Args& a) {
  a.consumed(1);
  auto* s = static_cast<std::weak_ptr<autograd::CustomState>*>(luaL_testudata(L, 1, kFunctionStateMeta));
  if (!s) a.error("expected the state that _record_function returned");
  std::vector<Tensor> saved = autograd::saved_tensors(*s, a.string(2));
  lua_createtable(L, int(saved.size()), 0);
  for (size_t k = 0; k < saved.size(); ++k) {
    if (!saved[k].defined()) continue;
    push_tensor(L, saved[k]);
    lua_rawseti(L, -2, lua_Integer(k + 1));
  }
  return 1;
}

const Binding kFunctionBindings[] = {
    {"register_hook", register_hook_fn, METHOD,
     "register_hook(x, fn) -> handle: fn(grad) runs on every gradient computed for x and may return a tensor of the "
     "same shape to use instead; handle:remove() takes it out."},
    {"retain_grad", retain_grad_fn, METHOD,
     "retain_grad(x): a non-leaf x keeps the gradients backward computes for it in x.grad (leaves always do)."},
    {"autograd._record_function", record_function_fn, TORCH,
     "autograd._record_function(name, inputs, outputs, differentiable, saved, backward) -> outputs, state: records a "
     "torch.autograd.Function call (used by Function.apply)."},
    {"autograd._saved_tensors", saved_tensors_fn, TORCH,
     "autograd._saved_tensors(state, name) -> list: ctx.saved_tensors of a recorded Function call."},
};

}  // namespace

LuaCallbackScope::LuaCallbackScope(lua_State* L) : prev_(t_callback_state) { t_callback_state = L; }
LuaCallbackScope::~LuaCallbackScope() { t_callback_state = prev_; }

void register_function_bindings() { register_bindings(kFunctionBindings, std::size(kFunctionBindings)); }

}  // namespace tide::lua
