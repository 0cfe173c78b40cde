// Bindings of reductions, scans and sorting (tensor/ops/reduce.hpp).
//
// Dims come as a number, a table of numbers, or nothing (= all dims), positionally or as the
// `dim` (torch) / `axis` (NumPy) keyword; keepdim as a boolean after the dims or the
// `keepdim` / `keepdims` keyword. `x:max(dim)` returns values and 1-based indices (torch);
// the NumPy spellings (`np.max(x, {axis=d})`, or the `axis` keyword anywhere) return values.
#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/reduce.hpp"
#include "../tensor/overlap.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "lua_api.hpp"

namespace tide::lua {

namespace {

ops::DimList dimlist(const std::vector<int>& v) { return ops::DimList(v.begin(), v.end()); }

// The Lua type of keyword `name` (LUA_TNIL when absent).
int kw_type(Args& a, const char* name) {
  int t = a.push_kw(name);
  lua_pop(a.L, 1);
  return t;
}

// How the dims were given: not at all, as one number, or as a table.
enum class DimForm { None, Number, Table };
DimForm dim_form(Args& a, int i) {
  int t = kw_type(a, "dim");
  if (t == LUA_TNIL) t = kw_type(a, "axis");
  if (t == LUA_TNIL) {
    if (!a.has(i)) return DimForm::None;
    t = a.lua_type_at(i);
  }
  return t == LUA_TTABLE ? DimForm::Table : DimForm::Number;
}

// One dim (0-based) for ops that take a single dim; nullopt when none was given.
std::optional<int> single_dim(Args& a, int i, int ndim) {
  switch (dim_form(a, i)) {
    case DimForm::None: return std::nullopt;
    case DimForm::Table: a.error("expected a single dim (a number), got a table");
    default: return a.dims_arg(i, ndim)[0];
  }
}

// keepdim: a boolean at positional i, or the keyword.
bool keep_arg(Args& a, int i) {
  if (a.lua_type_at(i) == LUA_TBOOLEAN) return a.boolean(i);
  return a.keepdim();
}

// Pushes the result, or copies it into the `out` keyword's tensor and pushes that.
int push_result(lua_State* L, Args& a, const Tensor& r) {
  if (Tensor* o = a.out()) {
    ag::check_out(a.op, o, {&r});
    TIDE_CHECK(o->sizes() == r.sizes(), a.op, ": out has shape ", o->sizes().str(), " but the result has shape ",
               r.sizes().str());
    ops::check_can_cast(a.op, r.dtype(), o->dtype());
    check_no_internal_overlap(a.op, *o);
    ops::copy_(*o, r);  // the result was computed first: an out overlapping x gets NumPy's answer
    a.push_kw("out");
    return 1;
  }
  push_tensor(L, r);
  return 1;
}

// Ops without an identity (max, min) cannot reduce an empty dim.
void check_reducible(Args& a, const Tensor& x, const std::vector<int>& dims) {
  for (int d = 0; d < x.dim(); ++d) {
    bool reduced = dims.empty() || std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reduced && x.size(d) == 0)
      a.error("cannot reduce over an empty dim of size 0 (dim " + std::to_string(d + 1) + " of a tensor of shape " +
              x.sizes().str() + "); give a dim whose size is not 0");
  }
}

// The dtype keyword (sum, prod, mean, std, var, norm).
std::optional<DType> dtype_kw(Args& a) { return a.kw_dtype("dtype"); }

// sum(x[, dim][, keepdim][, {dim=, keepdim=, dtype=, out=}])
int sum_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  return push_result(L, a, ag::sum(x, dimlist(dims), keep_arg(a, 3), dtype_kw(a)));
}

int prod_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  return push_result(L, a, ag::prod(x, dimlist(dims), keep_arg(a, 3), dtype_kw(a)));
}

// mean: floating point only through torch; np.mean of integers gives float64 as NumPy does.
int mean_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  auto dt = dtype_kw(a);
  if (!dt && a.numpy && !is_floating(x.dtype()) && !is_complex(x.dtype())) dt = DType::Float64;
  return push_result(L, a, ag::mean(x, dimlist(dims), keep_arg(a, 3), dt));
}

// max(x) -> 0-dim; max(x, dim[, keepdim]) -> values, indices; max(x, {axis=}) and np.max
// -> values; max(x, {d1, d2}) -> values; max(a, b) with a tensor b -> elementwise maximum.
template <bool IsMax>
int max_fn(lua_State* L, Args& a) {
  if (a.is_tensor(2))
    return push_result(L, a, ag::binary(IsMax ? BinaryOp::Maximum : BinaryOp::Minimum, a.tensor_or_scalar(1),
                                         a.tensor(2)));
  Tensor x = a.tensor_like(1);
  DimForm form = dim_form(a, 2);
  bool keep = keep_arg(a, 3);
  auto dims = a.dims_arg(2, x.dim());
  check_reducible(a, x, dims);
  bool values_only = form != DimForm::Number || a.style == Style::Numpy || kw_type(a, "axis") != LUA_TNIL;
  if (values_only) {
    if (form == DimForm::None && !keep) return push_result(L, a, IsMax ? ag::max(x) : ag::min(x));
    return push_result(L, a, IsMax ? ag::amax(x, dimlist(dims), keep) : ag::amin(x, dimlist(dims), keep));
  }
  ops::ValuesIndices r = IsMax ? ag::max(x, dims[0], keep) : ag::min(x, dims[0], keep);
  push_tensor(L, r.values);
  push_tensor(L, r.indices);
  return 2;
}

// amax / amin (torch.amax, np.amax): values over one or several dims.
template <bool IsMax>
int amax_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  check_reducible(a, x, dims);
  bool keep = keep_arg(a, 3);
  return push_result(L, a, IsMax ? ag::amax(x, dimlist(dims), keep) : ag::amin(x, dimlist(dims), keep));
}

// argmax(x[, dim][, keepdim]): 1-based positions; without a dim, in the flattened tensor.
template <bool IsMax>
int argmax_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dim = single_dim(a, 2, x.dim());
  bool keep = keep_arg(a, 3);
  return push_result(L, a, IsMax ? ops::argmax(x, dim, keep) : ops::argmin(x, dim, keep));
}

// std / var: torch: std(x[, dim][, unbiased][, keepdim]), std(x, unbiased),
// {dim=, correction=, unbiased=, keepdim=}; default correction 1. NumPy: np.std(x, {axis=,
// ddof=, keepdims=}); default ddof 0, and integer inputs are computed in float64.
template <bool Sqrt>
int var_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  std::vector<int> dims;
  std::optional<bool> unbiased;
  bool keep = a.keepdim();
  if (a.lua_type_at(2) == LUA_TBOOLEAN) {  // torch.std(x, unbiased)
    unbiased = a.boolean(2);
    dims = a.dims_arg(0, x.dim());
  } else {
    dims = a.dims_arg(2, x.dim());
    if (a.lua_type_at(3) == LUA_TBOOLEAN) unbiased = a.boolean(3);
    if (a.lua_type_at(4) == LUA_TBOOLEAN) keep = a.boolean(4);
  }
  double correction = a.numpy ? 0.0 : 1.0;
  auto kw_unbiased = a.kw_bool("unbiased");
  auto kw_correction = a.kw_number("correction");
  auto kw_ddof = a.kw_number("ddof");
  if (int(unbiased.has_value()) + int(kw_unbiased.has_value()) + int(kw_correction.has_value()) +
          int(kw_ddof.has_value()) > 1)
    a.error("give only one of unbiased, correction and ddof");
  if (unbiased) correction = *unbiased ? 1.0 : 0.0;
  if (kw_unbiased) correction = *kw_unbiased ? 1.0 : 0.0;
  if (kw_correction) correction = *kw_correction;
  if (kw_ddof) correction = *kw_ddof;
  if (auto dt = dtype_kw(a)) x = x.to(*dt);
  else if (a.numpy && !is_floating(x.dtype()) && !is_complex(x.dtype())) x = x.to(DType::Float64);
  return push_result(L, a, Sqrt ? ag::std(x, dimlist(dims), correction, keep)
                                : ag::var(x, dimlist(dims), correction, keep));
}

// The p of a norm from the Lua value at stack index idx: a number (math.huge for inf) or
// "fro", "inf", "-inf".
double norm_p(Args& a, int idx) {
  lua_State* L = a.L;
  if (lua_type(L, idx) == LUA_TNUMBER) return lua_tonumber(L, idx);
  if (lua_type(L, idx) == LUA_TSTRING) {
    std::string s = lua_tostring(L, idx);
    if (s == "fro") return 2;
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    if (s == "nuc") a.error("the nuclear norm ('nuc') is a matrix norm: use torch.linalg.norm(x, 'nuc')");
    a.error("p must be a number, math.huge, 'fro', 'inf' or '-inf', got '" + quote_user(s) + "'");
  }
  a.error(std::string("p must be a number or a string, got a ") + lua_typename(L, lua_type(L, idx)));
}

// norm(x[, p][, dim][, keepdim][, {p=, dim=, keepdim=, dtype=}]): vector p-norm over dims
// (all by default; p = 2 over all dims is the Frobenius norm).
int norm_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  double p = 2;
  if (a.has(2)) {
    p = norm_p(a, 2);
  } else if (a.push_kw("p") != LUA_TNIL) {
    double v = 0;
    try {
      v = norm_p(a, lua_gettop(L));
    } catch (...) {
      lua_pop(L, 1);
      throw;
    }
    lua_pop(L, 1);
    p = v;
  }
  auto dims = a.dims_arg(3, x.dim());
  bool keep = keep_arg(a, 4);
  if (auto dt = dtype_kw(a)) x = x.to(*dt);
  return push_result(L, a, ag::norm(x, p, dimlist(dims), keep));
}

// all / any: bool (uint8 for uint8 input through torch, as PyTorch; NumPy gives bool).
template <bool All>
int all_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  bool keep = keep_arg(a, 3);
  Tensor r = All ? ops::all(x, dimlist(dims), keep) : ops::any(x, dimlist(dims), keep);
  if (a.style == Style::Numpy) r = r.to(DType::Bool);
  return push_result(L, a, r);
}

int logsumexp_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dims = a.dims_arg(2, x.dim());
  return push_result(L, a, ag::logsumexp(x, dimlist(dims), keep_arg(a, 3)));
}

// cumsum(x, dim[, {dtype=}]): torch needs the dim; np.cumsum(x) without an axis scans the
// flattened tensor, as NumPy does.
template <bool Prod>
int scan_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  auto dim = single_dim(a, 2, x.dim());
  if (!dim) {
    if (a.style != Style::Numpy)
      a.error(std::string("dim is required, e.g. x:") + a.op + "(1) or torch." + a.op + "(x, {dim=1})");
    Tensor c = x.contiguous();
    x = c.as_strided(Dims{c.numel()}, Dims{1}, c.offset());
    dim = 0;
  }
  auto dt = dtype_kw(a);
  return push_result(L, a, Prod ? ag::cumprod(x, *dim, dt) : ag::cumsum(x, *dim, dt));
}

// sort(x[, dim][, descending][, {dim=, descending=, stable=}]) -> values, indices (torch);
// np.sort(x[, {axis=}]) -> values. The last dim by default; always stable.
// descending (positional or keyword), after checking the sort's algorithm options: NumPy's
// kind= ("quicksort", "mergesort", "heapsort", "stable") and PyTorch's stable=. tide's sort is
// always stable, which every kind allows (NumPy's unstable kinds leave the order of ties open).
bool descending_arg(Args& a, int i) {
  if (auto kind = a.kw_string("kind")) {
    if (*kind != "quicksort" && *kind != "mergesort" && *kind != "heapsort" && *kind != "stable")
      a.error("kind must be 'quicksort', 'mergesort', 'heapsort' or 'stable', got '" + quote_user(*kind) + "'");
  }
  a.kw_bool("stable");
  if (a.lua_type_at(i) == LUA_TBOOLEAN) return a.boolean(i);
  return a.kw_bool("descending").value_or(false);
}

int sort_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  int dim = single_dim(a, 2, x.dim()).value_or(-1);
  ops::ValuesIndices r = ag::sort(x, dim, descending_arg(a, 3));
  if (a.style == Style::Numpy) return push_result(L, a, r.values);
  push_tensor(L, r.values);
  push_tensor(L, r.indices);
  return 2;
}

int argsort_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  int dim = single_dim(a, 2, x.dim()).value_or(-1);
  return push_result(L, a, ops::argsort(x, dim, descending_arg(a, 3)));
}

// topk(x, k[, dim][, largest][, sorted][, {k=, dim=, largest=, sorted=}]) -> values, indices.
int topk_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  int64_t k;
  if (a.has(2)) k = a.integer(2);
  else if (auto kk = a.kw_integer("k")) k = *kk;
  else a.error("k is required, e.g. x:topk(3)");
  int dim = single_dim(a, 3, x.dim()).value_or(-1);
  bool largest = a.lua_type_at(4) == LUA_TBOOLEAN ? a.boolean(4) : a.kw_bool("largest").value_or(true);
  bool sorted = a.lua_type_at(5) == LUA_TBOOLEAN ? a.boolean(5) : a.kw_bool("sorted").value_or(true);
  ops::ValuesIndices r = ag::topk(x, k, dim, largest, sorted);
  push_tensor(L, r.values);
  push_tensor(L, r.indices);
  return 2;
}

constexpr unsigned ALL = METHOD | TORCH | NUMPY;

const Binding kReduceBindings[] = {
    {"sum", sum_fn, ALL,
     "sum(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, dtype=, out=}]) -> Tensor: sum over dims (a number or a table; "
     "all by default). bool and integer tensors give int64."},
    {"prod", prod_fn, ALL, "prod(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, dtype=, out=}]) -> Tensor: product over dims (all by default)."},
    {"mean", mean_fn, ALL,
     "mean(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, dtype=, out=}]) -> Tensor: mean over dims; x must be floating point "
     "(np.mean of integers gives float64)."},
    {"max", max_fn<true>, ALL,
     "max(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]): max(x) -> 0-dim Tensor; max(x, dim[, keepdim]) -> values, indices (1-based); max(x, {axis=}) and "
     "np.max(x, {axis=}) -> values; max(a, b) with a tensor b -> elementwise maximum."},
    {"min", max_fn<false>, ALL,
     "min(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]): min(x) -> 0-dim Tensor; min(x, dim[, keepdim]) -> values, indices (1-based); min(x, {axis=}) and "
     "np.min(x, {axis=}) -> values; min(a, b) with a tensor b -> elementwise minimum."},
    {"amax", amax_fn<true>, ALL, "amax(x[, dims][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> Tensor: largest value over dims (NaN propagates)."},
    {"amin", amax_fn<false>, ALL, "amin(x[, dims][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> Tensor: smallest value over dims (NaN propagates)."},
    {"argmax", argmax_fn<true>, ALL,
     "argmax(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> int64 Tensor: 1-based position of the largest value (in the flattened "
     "tensor without a dim)."},
    {"argmin", argmax_fn<false>, ALL,
     "argmin(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> int64 Tensor: 1-based position of the smallest value (in the flattened "
     "tensor without a dim)."},
    {"std", var_fn<true>, ALL,
     "std(x[, dim][, unbiased][, keepdim][, {dim=, axis=, keepdim=, keepdims=, unbiased=, correction=, ddof=, dtype=, out=}]) -> Tensor: standard deviation; correction "
     "1 by default (torch), ddof 0 for np.std."},
    {"var", var_fn<false>, ALL,
     "var(x[, dim][, unbiased][, keepdim][, {dim=, axis=, keepdim=, keepdims=, unbiased=, correction=, ddof=, dtype=, out=}]) -> Tensor: variance; correction 1 by "
     "default (torch), ddof 0 for np.var."},
    {"norm", norm_fn, METHOD | TORCH,
     "norm(x[, p][, dim][, keepdim][, {p=, dim=, axis=, keepdim=, keepdims=, dtype=, out=}]) -> Tensor: vector p-norm (p = 2 by default; 1, math.huge, -math.huge, 0, "
     "'fro', any number)."},
    {"all", all_fn<true>, ALL, "all(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> bool Tensor: whether every element is non-zero."},
    {"any", all_fn<false>, ALL, "any(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> bool Tensor: whether any element is non-zero."},
    {"logsumexp", logsumexp_fn, METHOD | TORCH,
     "logsumexp(x[, dim][, keepdim][, {dim=, axis=, keepdim=, keepdims=, out=}]) -> Tensor: log(sum(exp(x))) over dims, computed stably."},
    {"cumsum", scan_fn<false>, ALL,
     "cumsum(x, dim[, {dim=, axis=, dtype=, out=}]) -> Tensor: running sum along dim (np.cumsum without an axis flattens)."},
    {"cumprod", scan_fn<true>, ALL,
     "cumprod(x, dim[, {dim=, axis=, dtype=, out=}]) -> Tensor: running product along dim (np.cumprod without an axis flattens)."},
    {"sort", sort_fn, ALL,
     "sort(x[, dim][, descending][, {dim=, axis=, descending=, stable=, kind=, out=}]) -> values, indices (1-based; stable; the last dim by default). "
     "np.sort -> values."},
    {"argsort", argsort_fn, ALL,
     "argsort(x[, dim][, descending][, {dim=, axis=, descending=, stable=, kind=, out=}]) -> int64 Tensor: 1-based indices that sort x "
     "along dim (always stable: stable= and np's kind= are checked and every kind gives the stable order)."},
    {"topk", topk_fn, METHOD | TORCH,
     "topk(x, k[, dim][, largest][, sorted][, {k=, dim=, axis=, largest=, sorted=}]) -> values, indices: the k largest (or smallest) along dim "
     "(the last by default), sorted, with 1-based indices."},
};

}  // namespace

void register_reduction_bindings() {
  register_bindings(kReduceBindings, sizeof(kReduceBindings) / sizeof(kReduceBindings[0]));
}

}  // namespace tide::lua
