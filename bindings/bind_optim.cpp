// Bindings of the fused optimizer steps (tensor/ops/optim.hpp): internal functions that
// torch.optim (bindings/lua/torch_optim.lua) calls once per parameter and step, with the
// parameter, its gradient and the state buffers it created, and the group's
// hyper-parameters as keywords. Each returns the parameter, updated in place. SGD also has a
// step of a whole group, which reads the options from the group table itself.
#include <optional>
#include <string>

#include "../tensor/ops/optim.hpp"
#include "../tensor/autograd/autograd.hpp"
#include "../tensor/ops/creation.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

// Positional i: a tensor, or nil for a state buffer the options do not use.
const Tensor* optional_tensor(const Args& a, int i) { return a.has(i) ? &a.tensor(i) : nullptr; }

double number_or(const Args& a, const char* name, double fallback) { return a.kw_number(name).value_or(fallback); }
bool flag(const Args& a, const char* name) { return a.kw_bool(name).value_or(false); }

// The learning rate has no default in a step: the optimizer always passes its group's.
double learning_rate(const Args& a, const char* opt) {
  auto lr = a.kw_number("lr");
  TIDE_CHECK(lr.has_value(), opt, ": keyword 'lr' is required");
  return *lr;
}

// Adam's `step` keyword as the state's step count tensor (ops::StepCounter), or null when
// it is a number (the count itself) or absent.
const Tensor* step_count(const Args& a) {
  const int t = a.push_kw("step");
  lua_pop(a.L, 1);
  return t == LUA_TUSERDATA ? a.kw_tensor("step") : nullptr;
}

int ret_param(lua_State* L) {
  lua_pushvalue(L, 1);
  return 1;
}

// SGD's options from named values: number(name, fallback) (no fallback: the value is
// required) and flag(name), read from _sgd_step_'s keywords or _sgd_group_step_'s group.
template <typename Number, typename Flag>
ops::SgdOptions sgd_options(Number number, Flag flag) {
  ops::SgdOptions o;
  o.lr = number("lr", std::nullopt);
  o.momentum = number("momentum", 0.0);
  o.dampening = number("dampening", 0.0);
  o.weight_decay = number("weight_decay", 0.0);
  o.nesterov = flag("nesterov");
  o.maximize = flag("maximize");
  return o;
}

int sgd_step(lua_State* L, Args& a) {
  ops::SgdOptions o = sgd_options(
      [&](const char* name, std::optional<double> fallback) {
        return fallback ? number_or(a, name, *fallback) : learning_rate(a, "SGD");
      },
      [&](const char* name) { return flag(a, name); });
  o.new_buffer = flag(a, "new_buffer");
  ops::sgd_step_(a.tensor(1), a.tensor(2), optional_tensor(a, 3), o);
  return ret_param(L);
}

// Field `name` of the table at idx (read raw: no metamethod runs with C++ objects in this
// frame), or nil when absent; its type is returned, its value left on the stack.
int raw_field(lua_State* L, int idx, const char* name) {
  idx = lua_absindex(L, idx);
  lua_pushstring(L, name);
  return lua_rawget(L, idx);
}

// The same field of the group, at index 1.
int group_field(lua_State* L, const char* name) { return raw_field(L, 1, name); }

// A number field of the group; without a fallback the field is required (lr).
double group_number(lua_State* L, const char* name, std::optional<double> fallback) {
  const int t = group_field(L, name);
  TIDE_CHECK(t == LUA_TNUMBER || (t == LUA_TNIL && fallback), "SGD: ", name, " must be a number, got ",
             t == LUA_TNIL ? "nil" : std::string("a ") + lua_typename(L, t));
  const double v = t == LUA_TNIL ? *fallback : lua_tonumber(L, -1);
  lua_pop(L, 1);
  return v;
}

bool group_flag(lua_State* L, const char* name) {
  const int t = group_field(L, name);
  TIDE_CHECK(t == LUA_TNIL || t == LUA_TBOOLEAN, "SGD: ", name, " must be true or false, got a ", lua_typename(L, t));
  const bool v = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return v;
}

// SGD's step of a whole parameter group in one call (optim.SGD's step_group): on a small
// model the per-parameter Lua work (reading p.grad, the state, a keyword table, one binding
// call each) cost several times the step itself. The options are read from the group
// itself, which Optimizer:step has validated: a keyword table built for each step cost
// ~3,000 instructions of a 110,000-instruction linear-regression epoch. Parameters without
// a gradient are skipped; state[p] is made when missing, and with momentum its
// momentum_buffer is created from the first gradient, as PyTorch does. Positional 1 is the
// group (its list params checked by add_param_group), 2 the optimizer's state table, keyed
// by parameter.
int sgd_group_step(lua_State* L, Args& a) {
  TIDE_CHECK(a.is_table(1) && a.is_table(2),
             "_sgd_group_step_: expected the parameter group and the state table, got a ", luaL_typename(L, 1),
             " and a ", luaL_typename(L, 2));
  a.consumed(1);
  a.consumed(2);
  ops::SgdOptions o = sgd_options(
      [L](const char* name, std::optional<double> fallback) { return group_number(L, name, fallback); },
      [L](const char* name) { return group_flag(L, name); });
  const int listed = group_field(L, "params");
  TIDE_CHECK(listed == LUA_TTABLE, "_sgd_group_step_: the group's params is a ", lua_typename(L, listed),
             ", not a list");
  lua_replace(L, 1);  // the list where the group was
  const lua_Integer n = lua_Integer(lua_rawlen(L, 1));
  const int base = lua_gettop(L);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_rawgeti(L, 1, i);  // p
    const Tensor* p = to_tensor(L, -1);
    TIDE_CHECK(p, "_sgd_group_step_: parameter ", i, " is a ", luaL_typename(L, -1), ", not a tensor");
    const Tensor g = autograd::grad(*p);
    if (!g.defined()) {
      lua_settop(L, base);
      continue;
    }
    lua_pushvalue(L, -1);
    const int kind = lua_rawget(L, 2);  // p, state[p]
    TIDE_CHECK(kind == LUA_TNIL || kind == LUA_TTABLE, "_sgd_group_step_: the state of parameter ", i, " is a ",
               luaL_typename(L, -1), ", not a table");
    if (kind == LUA_TNIL) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 1);
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, 2);
    }
    o.new_buffer = false;
    const Tensor* buf = nullptr;
    if (o.momentum != 0) {
      const int held = raw_field(L, -1, "momentum_buffer");
      buf = to_tensor(L, -1);
      TIDE_CHECK(buf || held == LUA_TNIL, "_sgd_group_step_: the momentum_buffer of parameter ", i, " is a ",
                 luaL_typename(L, -1), ", not a tensor");
      if (!buf) {
        lua_pop(L, 1);
        push_tensor(L, ops::zeros_like(*p));  // state[p], buffer
        lua_pushliteral(L, "momentum_buffer");
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
        buf = to_tensor(L, -1);
        o.new_buffer = true;
      }
    }
    ops::sgd_step_(*p, g, buf, o);
    lua_settop(L, base);
  }
  return 0;
}

// The `step` keyword of Adam and the steps like it: the state's step count tensor, which the
// step advances and uses, or the count including this step as a number (1 when absent).
const Tensor* counted_step(const Args& a, int64_t& step) {
  const Tensor* count = step_count(a);
  if (!count) step = a.kw_integer("step").value_or(1);
  return count;
}

// The keywords Adam, Adamax, NAdam and RAdam share after `lr`: beta1, beta2, eps,
// weight_decay (the options' own defaults; no weight decay).
template <typename Options>
void moment_options(const Args& a, Options& o) {
  o.beta1 = number_or(a, "beta1", o.beta1);
  o.beta2 = number_or(a, "beta2", o.beta2);
  o.eps = number_or(a, "eps", o.eps);
  o.weight_decay = number_or(a, "weight_decay", 0);
}

int adam_step(lua_State* L, Args& a) {
  ops::AdamOptions o;
  o.decoupled_weight_decay = flag(a, "decoupled_weight_decay");
  o.lr = learning_rate(a, o.decoupled_weight_decay ? "AdamW" : "Adam");
  moment_options(a, o);
  const Tensor* count = counted_step(a, o.step);
  o.amsgrad = flag(a, "amsgrad");
  o.maximize = flag(a, "maximize");
  ops::adam_step_(a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4), optional_tensor(a, 5), o, count);
  return ret_param(L);
}

int rmsprop_step(lua_State* L, Args& a) {
  ops::RmspropOptions o;
  o.lr = learning_rate(a, "RMSprop");
  o.alpha = number_or(a, "alpha", o.alpha);
  o.eps = number_or(a, "eps", o.eps);
  o.weight_decay = number_or(a, "weight_decay", 0);
  o.momentum = number_or(a, "momentum", 0);
  o.centered = flag(a, "centered");
  o.maximize = flag(a, "maximize");
  ops::rmsprop_step_(a.tensor(1), a.tensor(2), a.tensor(3), optional_tensor(a, 4), optional_tensor(a, 5), o,
                     a.kw_tensor("step"));
  return ret_param(L);
}

int adamax_step(lua_State* L, Args& a) {
  ops::AdamaxOptions o;
  o.lr = learning_rate(a, "Adamax");
  moment_options(a, o);
  o.maximize = flag(a, "maximize");
  const Tensor* count = counted_step(a, o.step);
  ops::adamax_step_(a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4), o, count);
  return ret_param(L);
}

int nadam_step(lua_State* L, Args& a) {
  ops::NadamOptions o;
  o.lr = learning_rate(a, "NAdam");
  moment_options(a, o);
  o.momentum_decay = number_or(a, "momentum_decay", o.momentum_decay);
  const Tensor* count = counted_step(a, o.step);
  ops::nadam_step_(a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4), a.tensor(5), o, count);
  return ret_param(L);
}

int radam_step(lua_State* L, Args& a) {
  ops::RadamOptions o;
  o.lr = learning_rate(a, "RAdam");
  moment_options(a, o);
  const Tensor* count = counted_step(a, o.step);
  ops::radam_step_(a.tensor(1), a.tensor(2), a.tensor(3), a.tensor(4), o, count);
  return ret_param(L);
}

int adagrad_step(lua_State* L, Args& a) {
  ops::AdagradOptions o;
  o.lr = learning_rate(a, "Adagrad");
  o.lr_decay = number_or(a, "lr_decay", 0);
  o.weight_decay = number_or(a, "weight_decay", 0);
  o.eps = number_or(a, "eps", o.eps);
  o.maximize = flag(a, "maximize");
  const Tensor* count = counted_step(a, o.step);
  ops::adagrad_step_(a.tensor(1), a.tensor(2), a.tensor(3), o, count);
  return ret_param(L);
}

const Binding kOptimBindings[] = {
    {"_sgd_step_", sgd_step, TORCH,
     "_sgd_step_(param, grad, momentum_buffer|nil, {lr=, momentum=0, dampening=0, weight_decay=0, "
     "nesterov=false, maximize=false, new_buffer=false}) -> param: one fused SGD step in place "
     "(new_buffer: the buffer takes the gradient instead of being decayed, as on PyTorch's first step)."},
    {"_sgd_group_step_", sgd_group_step, TORCH,
     "_sgd_group_step_(group, state) -> nil: _sgd_step_ for each tensor of the list group.params that has a "
     "gradient, with the group's lr, momentum (0), dampening (0), weight_decay (0), nesterov (false) and "
     "maximize (false), and state[param] (made when missing) keeping its momentum_buffer, created from the "
     "first gradient."},
    {"_adam_step_", adam_step, TORCH,
     "_adam_step_(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq|nil, {lr=, beta1=0.9, beta2=0.999, "
     "eps=1e-8, weight_decay=0, step=1, amsgrad=false, maximize=false, decoupled_weight_decay=false}) "
     "-> param: one fused Adam step in place (AdamW with decoupled_weight_decay; step counts this one, or "
     "is the state's step count tensor, which the step advances by one and uses)."},
    {"_rmsprop_step_", rmsprop_step, TORCH,
     "_rmsprop_step_(param, grad, square_avg, momentum_buffer|nil, grad_avg|nil, {lr=, alpha=0.99, "
     "eps=1e-8, weight_decay=0, momentum=0, centered=false, maximize=false, step=nil}) -> param: one "
     "fused RMSprop step in place (step: the state's step count tensor, advanced by one)."},
    {"_adamax_step_", adamax_step, TORCH,
     "_adamax_step_(param, grad, exp_avg, exp_inf, {lr=, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0, "
     "step=1, maximize=false}) -> param: one fused Adamax step in place, bit for bit torch.optim's tensor "
     "ops (step as for _adam_step_)."},
    {"_nadam_step_", nadam_step, TORCH,
     "_nadam_step_(param, grad, exp_avg, exp_avg_sq, mu_product, {lr=, beta1=0.9, beta2=0.999, eps=1e-8, "
     "weight_decay=0, momentum_decay=4e-3, step=1}) -> param: one fused NAdam step in place, bit for bit "
     "torch.optim's tensor ops (mu_product: the state's one-element float32 or float64 CPU tensor, multiplied "
     "by this step's momentum coefficient; step as for _adam_step_)."},
    {"_radam_step_", radam_step, TORCH,
     "_radam_step_(param, grad, exp_avg, exp_avg_sq, {lr=, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0, "
     "step=1}) -> param: one fused RAdam step in place, bit for bit torch.optim's tensor ops (step as for "
     "_adam_step_)."},
    {"_adagrad_step_", adagrad_step, TORCH,
     "_adagrad_step_(param, grad, sum, {lr=, lr_decay=0, weight_decay=0, eps=1e-10, step=1, maximize=false}) "
     "-> param: one fused Adagrad step in place, bit for bit torch.optim's tensor ops (step as for "
     "_adam_step_; the rate decays by the count before this step)."},
};

}  // namespace

void register_optim_bindings() {
  register_bindings(kOptimBindings, sizeof(kOptimBindings) / sizeof(kOptimBindings[0]));
}

}  // namespace tide::lua
