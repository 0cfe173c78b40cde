// Bindings of autograd: requires_grad_, backward, grad mode and torch.autograd.grad. The
// scoped forms (torch.no_grad(fn) and `local _ <close> = torch.no_grad()`) are Lua, in
// bindings/lua/torch_autograd.lua, on top of set_grad_enabled.
#include "../tensor/autograd/autograd.hpp"
#include "../tensor/autograd/functions.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

int requires_grad_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  autograd::set_requires_grad(x, a.has(2) ? a.boolean(2) : a.kw_bool("requires_grad").value_or(true), a.op);
  lua_pushvalue(L, 1);
  return 1;
}

// A tensor or a list of tensors at i (undefined entries allowed when `holes`) as a vector.
// A table with a metatable (an nn.Module, say) is an object, not a list.
std::vector<Tensor> tensor_list(Args& a, int i, const char* what, bool holes = false) {
  if (a.is_tensor(i)) return {a.tensor(i)};
  lua_State* L = a.L;
  bool object = a.is_table(i) && lua_getmetatable(L, i);
  if (object) lua_pop(L, 1);
  if (!a.is_table(i) || object) a.error(std::string("expected a tensor or a list of tensors as ") + what);
  std::vector<Tensor> out;
  int n = int(lua_rawlen(L, i));
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, i, k);
    Tensor* t = to_tensor(L, -1);
    bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!t && !(holes && nil)) a.error(std::string(what) + " entry " + std::to_string(k) + " is not a tensor");
    out.push_back(t ? *t : Tensor());
  }
  return out;
}

// The keyword table's list at `name` (grad_outputs), empty when absent.
std::vector<Tensor> kw_tensor_list(Args& a, const char* name) {
  lua_State* L = a.L;
  if (a.push_kw(name) == LUA_TNIL) {
    lua_pop(L, 1);
    return {};
  }
  int idx = lua_gettop(L);
  std::vector<Tensor> out;
  if (Tensor* t = to_tensor(L, idx)) {
    out.push_back(*t);
  } else if (lua_istable(L, idx)) {
    int n = int(lua_rawlen(L, idx));
    for (int k = 1; k <= n; ++k) {
      lua_rawgeti(L, idx, k);
      Tensor* t = to_tensor(L, -1);
      lua_pop(L, 1);
      out.push_back(t ? *t : Tensor());
    }
  } else {
    lua_pop(L, 1);
    a.error(std::string(name) + " must be a tensor or a list of tensors");
  }
  lua_pop(L, 1);
  return out;
}

// loss:backward([grad][, {retain_graph=, create_graph=}])
int backward_fn(lua_State* L, Args& a) {
  LuaCallbackScope callbacks(L);  // hooks and Function backwards run on this thread
  const Tensor& x = a.tensor(1);
  Tensor g = a.has(2) ? a.tensor(2) : Tensor();
  if (!g.defined())
    if (Tensor* kg = a.kw_tensor("gradient")) g = *kg;
  bool create = a.kw_bool("create_graph").value_or(false);
  autograd::backward({x}, {g}, a.kw_bool("retain_graph").value_or(create), create, a.op);
  return 0;
}

// torch.autograd.backward(tensors[, grads][, {retain_graph=, create_graph=}])
int autograd_backward_fn(lua_State* L, Args& a) {
  LuaCallbackScope callbacks(L);  // hooks and Function backwards run on this thread
  std::vector<Tensor> roots = tensor_list(a, 1, "tensors");
  std::vector<Tensor> grads = a.has(2) ? tensor_list(a, 2, "grad_tensors", true) : kw_tensor_list(a, "grad_tensors");
  bool create = a.kw_bool("create_graph").value_or(false);
  autograd::backward(roots, grads, a.kw_bool("retain_graph").value_or(create), create, a.op);
  return 0;
}

// torch.autograd.grad(outputs, inputs[, {grad_outputs=, retain_graph=, create_graph=, allow_unused=}])
// -> a list with one gradient per input (nil for unused inputs with allow_unused).
int autograd_grad_fn(lua_State* L, Args& a) {
  LuaCallbackScope callbacks(L);  // hooks and Function backwards run on this thread
  std::vector<Tensor> outputs = tensor_list(a, 1, "outputs");
  std::vector<Tensor> inputs = tensor_list(a, 2, "inputs");
  if (inputs.empty()) a.error("inputs is an empty list (grad needs at least one tensor to differentiate with respect to)");
  std::vector<Tensor> grads = kw_tensor_list(a, "grad_outputs");
  bool create = a.kw_bool("create_graph").value_or(false);
  std::vector<Tensor> r = autograd::grad(outputs, grads, inputs, a.kw_bool("retain_graph").value_or(create), create,
                                         a.kw_bool("allow_unused").value_or(false), a.op);
  lua_createtable(L, int(r.size()), 0);
  for (size_t i = 0; i < r.size(); ++i) {
    if (!r[i].defined()) continue;
    push_tensor(L, r[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  return 1;
}

int set_grad_enabled_fn(lua_State*, Args& a) {
  autograd::set_grad_enabled(a.boolean(1));
  return 0;
}

// _zero_grads_(params, set_to_none): zero_grad's loop over a list of parameters (modules' and
// optimizers', torch_nn.lua): each gradient set to nil, or zeroed in place, a gradient that is
// part of a graph (after backward{create_graph=true}) detached first, as PyTorch does. In Lua
// it cost ~4,000 instructions a parameter: reading p.grad made a handle, and setting it was a
// second metamethod call.
int zero_grads_fn(lua_State* L, Args& a) {
  TIDE_CHECK(a.is_table(1), "_zero_grads_: expected a list of parameters, got a ", luaL_typename(L, 1));
  a.consumed(1);
  const bool set_to_none = a.boolean(2);
  const lua_Integer n = lua_Integer(lua_rawlen(L, 1));
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 1, i);
    Tensor* p = to_tensor(L, -1);
    TIDE_CHECK(p, "_zero_grads_: parameter ", i, " is a ", luaL_typename(L, -1), ", not a tensor");
    lua_pop(L, 1);  // (the list keeps it)
    Tensor g = autograd::grad(*p);
    if (!g.defined()) continue;
    if (set_to_none) {
      autograd::set_grad(*p, Tensor());
      continue;
    }
    if (autograd::requires_grad(g)) {
      g = Tensor::make_view(g.storage(), g.sizes(), g.strides(), g.offset(), g.dtype());
      autograd::set_grad(*p, g);
    }
    ag::zero_(g);
  }
  return 0;
}

// _exchange_grad_enabled(flag) -> previous: sets the mode and returns the one it replaced, in
// one call (the no_grad scopes of torch_autograd.lua, entered once per optimizer step).
int exchange_grad_enabled_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, autograd::grad_enabled());
  autograd::set_grad_enabled(a.boolean(1));
  return 1;
}

int is_grad_enabled_fn(lua_State* L, Args&) {
  lua_pushboolean(L, autograd::grad_enabled());
  return 1;
}

const Binding kAutogradBindings[] = {
    {"requires_grad_", requires_grad_fn, METHOD,
     "requires_grad_(x[, flag=true][, {requires_grad=}]) -> x: starts (or stops) recording operations on the leaf x for autograd."},
    {"backward", backward_fn, METHOD,
     "backward(y[, grad][, {gradient=, retain_graph=, create_graph=}]): accumulates d y / d leaf into every leaf's .grad "
     "(grad is required when y has more than one element)."},
    {"autograd.backward", autograd_backward_fn, TORCH,
     "autograd.backward(tensors[, grads][, {grad_tensors=, retain_graph=, create_graph=}]): backward from several outputs."},
    {"autograd.grad", autograd_grad_fn, TORCH,
     "autograd.grad(outputs, inputs[, {grad_outputs=, retain_graph=, create_graph=, allow_unused=}]) -> list: "
     "the gradients of outputs with respect to inputs, without touching .grad."},
    {"set_grad_enabled", set_grad_enabled_fn, TORCH, "set_grad_enabled(flag): turns recording for autograd on or off."},
    {"is_grad_enabled", is_grad_enabled_fn, TORCH, "is_grad_enabled() -> boolean: whether ops are recorded."},
    {"_zero_grads_", zero_grads_fn, TORCH,
     "_zero_grads_(params, set_to_none) -> nil: the gradients of the list params set to nil, or zeroed in place "
     "(detached first when part of a graph) (internal: zero_grad of modules and optimizers)."},
    {"_exchange_grad_enabled", exchange_grad_enabled_fn, TORCH,
     "_exchange_grad_enabled(flag) -> boolean: sets the grad mode and returns the previous one (internal)."},
};

}  // namespace

void register_autograd_bindings() { register_bindings(kAutogradBindings, std::size(kAutogradBindings)); }

}  // namespace tide::lua
