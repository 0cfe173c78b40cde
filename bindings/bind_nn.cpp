// Bindings of the fused neural-network functions (tensor/autograd/nn.cpp): linear,
// softmax, log_softmax, cross_entropy, nll_loss, conv2d, max_pool2d. torch.nn.functional
// (bindings/lua/torch_nn.lua) builds on these.
#include "../tensor/autograd/functions.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

int ret(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

// An optional tensor argument at i (nil or absent: none).
const Tensor* optional_tensor(Args& a, int i) { return a.has(i) ? &a.tensor(i) : nullptr; }

int linear_fn(lua_State* L, Args& a) {
  const Tensor* bias = optional_tensor(a, 3);
  if (!bias) bias = a.kw_tensor("bias");
  return ret(L, ag::linear(a.tensor(1), a.tensor(2), bias));
}

// softmax(x, dim) / log_softmax(x, dim): dim is required (1-based), positional or {dim=};
// dtype= casts x before the op, as PyTorch (the result is computed in that dtype).
template <bool Log>
int softmax_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor(1);
  if (!a.has(2) && !a.has_kw("dim")) a.error("dim is required (the dim whose entries sum to 1)");
  int d = a.has(2) ? a.dim(2, std::max(x.dim(), 1)) : a.dim_value(*a.kw_integer("dim"), std::max(x.dim(), 1));
  if (auto dt = a.kw_dtype()) x = ag::cast(x, *dt);
  return ret(L, Log ? ag::log_softmax(x, d) : ag::softmax(x, d));
}

ag::Reduction reduction_kw(Args& a) { return ag::parse_reduction(a.kw_string("reduction").value_or("mean"), a.op); }

// cross_entropy(logits, target[, {weight=, reduction=, ignore_index=, label_smoothing=}])
int cross_entropy_fn(lua_State* L, Args& a) {
  return ret(L, ag::cross_entropy(a.tensor(1), a.tensor(2), reduction_kw(a), a.kw_integer("ignore_index").value_or(-100),
                                  a.kw_number("label_smoothing").value_or(0.0), a.kw_tensor("weight")));
}

int nll_loss_fn(lua_State* L, Args& a) {
  return ret(L, ag::nll_loss(a.tensor(1), a.tensor(2), reduction_kw(a), a.kw_integer("ignore_index").value_or(-100),
                             a.kw_tensor("weight")));
}

// A pair option: a number (both dims) or a table {h, w}, from positional i or keyword `name`.
bool pair_arg(Args& a, int i, const char* name, int64_t out[2]) {
  lua_State* L = a.L;
  int idx = 0;
  if (i > 0 && a.has(i)) {
    idx = i;
  } else if (a.push_kw(name) != LUA_TNIL) {
    idx = lua_gettop(L);
  } else {
    lua_pop(L, 1);
    return false;
  }
  bool pushed = idx == lua_gettop(L) && idx != i;
  bool ok = true;
  if (lua_type(L, idx) == LUA_TNUMBER) {
    out[0] = out[1] = lua_tointeger(L, idx);
    ok = lua_isinteger(L, idx);
  } else if (lua_istable(L, idx) && lua_rawlen(L, idx) == 2) {
    for (int k = 0; k < 2; ++k) {
      lua_rawgeti(L, idx, k + 1);
      ok = ok && lua_isinteger(L, -1);
      out[k] = lua_tointeger(L, -1);
      lua_pop(L, 1);
    }
  } else {
    ok = false;
  }
  if (pushed) lua_pop(L, 1);
  if (!ok) a.error(std::string(name) + " must be an integer or a table of two integers");
  return true;
}

// conv2d(x, weight[, bias][, stride, padding, dilation, groups]) or with a keyword table.
int conv2d_fn(lua_State* L, Args& a) {
  ag::Conv2dOptions o;
  pair_arg(a, 4, "stride", o.stride);
  pair_arg(a, 5, "padding", o.padding);
  pair_arg(a, 6, "dilation", o.dilation);
  o.groups = a.has(7) ? a.integer(7) : a.kw_integer("groups").value_or(1);
  const Tensor* bias = optional_tensor(a, 3);
  if (!bias) bias = a.kw_tensor("bias");
  return ret(L, ag::conv2d(a.tensor(1), a.tensor(2), bias, o));
}

// max_pool2d(x, kernel_size[, stride, padding, dilation]) or with a keyword table; the
// stride defaults to the kernel size.
int max_pool2d_fn(lua_State* L, Args& a) {
  ag::Conv2dOptions o;
  int64_t kernel[2];
  if (!pair_arg(a, 2, "kernel_size", kernel)) a.error("kernel_size is required");
  if (!pair_arg(a, 3, "stride", o.stride)) o.stride[0] = kernel[0], o.stride[1] = kernel[1];
  pair_arg(a, 4, "padding", o.padding);
  pair_arg(a, 5, "dilation", o.dilation);
  return ret(L, ag::max_pool2d(a.tensor(1), kernel, o));
}

const Binding kNNBindings[] = {
    {"linear", linear_fn, TORCH, "linear(x, weight[, bias][, {bias=}]) -> Tensor: x @ weight^T + bias (one addmm)."},
    {"softmax", softmax_fn<false>, METHOD | TORCH, "softmax(x, dim[, {dim=, dtype=}]) -> Tensor: exp(x) / sum(exp(x)) along dim."},
    {"log_softmax", softmax_fn<true>, METHOD | TORCH, "log_softmax(x, dim[, {dim=, dtype=}]) -> Tensor: x - logsumexp(x) along dim."},
    {"cross_entropy", cross_entropy_fn, TORCH,
     "cross_entropy(logits, target[, {weight=, reduction=, ignore_index=, label_smoothing=}]) -> Tensor: "
     "log-softmax and NLL in one pass; target holds 1-based classes or class probabilities."},
    {"nll_loss", nll_loss_fn, TORCH,
     "nll_loss(logp, target[, {weight=, reduction=, ignore_index=}]) -> Tensor: -logp at the 1-based target classes."},
    {"conv2d", conv2d_fn, TORCH,
     "conv2d(x, weight[, bias][, stride, padding, dilation, groups][, {bias=, stride=, padding=, dilation=, groups=}]) -> Tensor: 2-D convolution "
     "(cross-correlation) of (N, C, H, W) input."},
    {"max_pool2d", max_pool2d_fn, TORCH,
     "max_pool2d(x, kernel_size[, stride, padding, dilation][, {kernel_size=, stride=, padding=, dilation=}]) -> Tensor: the maximum of each window."},
};

}  // namespace

void register_nn_bindings() { register_bindings(kNNBindings, std::size(kNNBindings)); }

}  // namespace tide::lua
