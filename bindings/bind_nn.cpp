// Bindings of the fused neural-network functions (tensor/autograd/nn.cpp): linear,
// softmax, log_softmax, cross_entropy, nll_loss, conv2d, conv_transpose2d, max_pool2d,
// avg_pool2d. torch.nn.functional
// (bindings/lua/torch_nn.lua) builds on these.
#include "../tensor/autograd/conv.hpp"
#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/reduce.hpp"
#include "creation_args.hpp"
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

// mse_loss(input, target[, reduction][, {reduction=}])
int mse_loss_fn(lua_State* L, Args& a) {
  if (a.has(3) && a.has_kw("reduction")) a.error("reduction given twice (positional and keyword)");
  std::string reduction = a.has(3) ? a.string(3) : a.kw_string("reduction").value_or("mean");
  return ret(L, ag::mse_loss(a.tensor(1), a.tensor(2), ag::parse_reduction(reduction, a.op)));
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

// conv_transpose2d(x, weight[, bias][, stride, padding, output_padding, groups, dilation])
// (PyTorch's positional order) or with a keyword table.
int conv_transpose2d_fn(lua_State* L, Args& a) {
  ag::ConvTranspose2dOptions o;
  pair_arg(a, 4, "stride", o.stride);
  pair_arg(a, 5, "padding", o.padding);
  pair_arg(a, 6, "output_padding", o.output_padding);
  o.groups = a.has(7) ? a.integer(7) : a.kw_integer("groups").value_or(1);
  pair_arg(a, 8, "dilation", o.dilation);
  const Tensor* bias = optional_tensor(a, 3);
  if (!bias) bias = a.kw_tensor("bias");
  return ret(L, ag::conv_transpose2d(a.tensor(1), a.tensor(2), bias, o));
}

// A boolean option from positional i or keyword `name`, false when absent.
bool bool_arg(Args& a, int i, const char* name) { return a.has(i) ? a.boolean(i) : a.kw_bool(name).value_or(false); }

// The window of a pooling: kernel_size (required), stride (default: the kernel size), padding.
ag::Pool2dOptions pool_window(Args& a) {
  ag::Pool2dOptions o;
  if (!pair_arg(a, 2, "kernel_size", o.kernel)) a.error("kernel_size is required");
  if (!pair_arg(a, 3, "stride", o.stride)) o.stride[0] = o.kernel[0], o.stride[1] = o.kernel[1];
  pair_arg(a, 4, "padding", o.padding);
  return o;
}

// max_pool2d(x, kernel_size[, stride, padding, dilation, ceil_mode, return_indices]) or with
// a keyword table; with return_indices, also the 1-based flat (H*W) positions of the maxima.
int max_pool2d_fn(lua_State* L, Args& a) {
  ag::Pool2dOptions o = pool_window(a);
  pair_arg(a, 5, "dilation", o.dilation);
  o.ceil_mode = bool_arg(a, 6, "ceil_mode");
  std::vector<Tensor> r = ag::max_pool2d_ex(a.tensor(1), o, bool_arg(a, 7, "return_indices"));
  for (Tensor& t : r) push_tensor(L, std::move(t));
  return int(r.size());
}

// avg_pool2d(x, kernel_size[, stride, padding, ceil_mode, count_include_pad, divisor_override]).
int avg_pool2d_fn(lua_State* L, Args& a) {
  ag::Pool2dOptions o = pool_window(a);
  o.ceil_mode = bool_arg(a, 5, "ceil_mode");
  bool include = a.has(6) ? a.boolean(6) : a.kw_bool("count_include_pad").value_or(true);
  std::optional<int64_t> divisor = a.has(7) ? std::optional<int64_t>(a.integer(7)) : a.kw_integer("divisor_override");
  if (divisor && *divisor <= 0) a.error("divisor_override must be positive, got " + std::to_string(*divisor));
  return ret(L, ag::avg_pool2d(a.tensor(1), o, include, divisor.value_or(0)));
}

// A float as Lua's tostring writes it (num_str with ".0" after an integral value): the
// values eager checks printed when they read them with item().
std::string lua_float(double v) {
  std::string s = num_str(v);
  if (s.find_first_not_of("-0123456789") == std::string::npos) s += ".0";
  return s;
}

// _check_probabilities(op, t): every element of t lies in [0, 1] (binary_cross_entropy's
// input), checked inside a host kernel (ops::check_extrema) so torch.compile replays it.
int check_probabilities_fn(lua_State*, Args& a) {
  const std::string op = a.string(1);
  ops::check_extrema(op.c_str(), a.tensor(2), [op](const ops::Extrema& e) {
    if (!(e.lo >= 0 && e.hi <= 1))
      TIDE_FAIL(op, ": input values must be between 0 and 1, got values from ", lua_float(e.lo), " to ",
                lua_float(e.hi));
  });
  return 0;
}

// _check_indices(op, t, n): every element of the integer tensor t is an index in 1..n
// (embedding's input), checked as _check_probabilities is.
int check_indices_fn(lua_State*, Args& a) {
  const std::string op = a.string(1);
  const Tensor& t = a.tensor(2);
  const int64_t n = a.integer(3);
  TIDE_CHECK(is_integral(t.dtype()), op, ": indices must be an integer tensor, got ", dtype_name(t.dtype()));
  ops::check_extrema(op.c_str(), t, [op, n](const ops::Extrema& e) {
    if (e.ilo < 1 || e.ihi > n) TIDE_FAIL(op, ": index ", e.ilo < 1 ? e.ilo : e.ihi, " is out of range 1..", n);
  });
  return 0;
}

const Binding kNNBindings[] = {
    {"_check_probabilities", check_probabilities_fn, TORCH,
     "_check_probabilities(op, t): an error naming op unless every element of t is in [0, 1] (internal; "
     "a check torch.compile replays)."},
    {"_check_indices", check_indices_fn, TORCH,
     "_check_indices(op, t, n): an error naming op unless every element of the integer tensor t is in 1..n "
     "(internal; a check torch.compile replays)."},
    {"linear", linear_fn, TORCH, "linear(x, weight[, bias][, {bias=}]) -> Tensor: x @ weight^T + bias (one addmm)."},
    {"softmax", softmax_fn<false>, METHOD | TORCH, "softmax(x, dim[, {dim=, dtype=}]) -> Tensor: exp(x) / sum(exp(x)) along dim."},
    {"log_softmax", softmax_fn<true>, METHOD | TORCH, "log_softmax(x, dim[, {dim=, dtype=}]) -> Tensor: x - logsumexp(x) along dim."},
    {"cross_entropy", cross_entropy_fn, TORCH,
     "cross_entropy(logits, target[, {weight=, reduction=, ignore_index=, label_smoothing=}]) -> Tensor: "
     "log-softmax and NLL in one pass; target holds 1-based classes or class probabilities."},
    {"nll_loss", nll_loss_fn, TORCH,
     "nll_loss(logp, target[, {weight=, reduction=, ignore_index=}]) -> Tensor: -logp at the 1-based target classes."},
    {"mse_loss", mse_loss_fn, TORCH,
     "mse_loss(input, target[, reduction][, {reduction=}]) -> Tensor: the mean (\"mean\", the default), sum (\"sum\") "
     "or each (\"none\") of (input - target)^2, for floating-point tensors of one shape."},
    {"conv2d", conv2d_fn, TORCH,
     "conv2d(x, weight[, bias][, stride, padding, dilation, groups][, {bias=, stride=, padding=, dilation=, groups=}]) -> Tensor: 2-D convolution "
     "(cross-correlation) of (N, C, H, W) input."},
    {"conv_transpose2d", conv_transpose2d_fn, TORCH,
     "conv_transpose2d(x, weight[, bias][, stride, padding, output_padding, groups, dilation][, {bias=, stride=, padding=, "
     "output_padding=, groups=, dilation=}]) -> Tensor: transposed 2-D convolution (the input-gradient of conv2d); "
     "weight is (in_channels, out_channels/groups, kH, kW)."},
    {"max_pool2d", max_pool2d_fn, TORCH,
     "max_pool2d(x, kernel_size[, stride, padding, dilation, ceil_mode, return_indices][, {kernel_size=, stride=, "
     "padding=, dilation=, ceil_mode=, return_indices=}]) -> Tensor[, Tensor]: the maximum of each window; with "
     "return_indices also its 1-based position in the flattened (H, W) plane."},
    {"avg_pool2d", avg_pool2d_fn, TORCH,
     "avg_pool2d(x, kernel_size[, stride, padding, ceil_mode, count_include_pad, divisor_override][, {kernel_size=, "
     "stride=, padding=, ceil_mode=, count_include_pad=, divisor_override=}]) -> Tensor: the mean of each window."},
};

}  // namespace

void register_nn_bindings() { register_bindings(kNNBindings, std::size(kNNBindings)); }

}  // namespace tide::lua
