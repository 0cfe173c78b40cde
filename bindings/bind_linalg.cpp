// Bindings of the linear-algebra ops (tensor/ops/linalg.hpp): products, solve / inv / det
// and the norms of np.linalg / torch.linalg. Through `torch` (and as methods) operands must
// be tensors of one dtype, as in PyTorch; through `np` they may be numbers or nested tables
// and are promoted, as in NumPy.
#include <cmath>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/linalg.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

using ops::DTypePolicy;

DTypePolicy policy(const Args& a) {
  return a.numpy ? DTypePolicy::Promote : DTypePolicy::Strict;
}

// Operand i: a tensor (torch), or anything array-like (numpy).
Tensor operand(const Args& a, int i) {
  if (a.numpy) return a.tensor_like(i);
  return a.tensor(i);
}

int ret(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

// With {out=}, the result is the out tensor itself (the same Lua object, as in PyTorch).
int ret_out(lua_State* L, const Args& a, Tensor t) {
  if (a.out()) {
    a.push_kw("out");
    return 1;
  }
  return ret(L, std::move(t));
}

int mm_fn(lua_State* L, Args& a) { return ret_out(L, a, ag::mm(operand(a, 1), operand(a, 2), a.out(), policy(a))); }
int mv_fn(lua_State* L, Args& a) { return ret_out(L, a, ag::mv(operand(a, 1), operand(a, 2), a.out(), policy(a))); }
int bmm_fn(lua_State* L, Args& a) { return ret_out(L, a, ag::bmm(operand(a, 1), operand(a, 2), a.out(), policy(a))); }

int matmul_fn(lua_State* L, Args& a) {
  return ret_out(L, a, ag::matmul(operand(a, 1), operand(a, 2), a.out(), policy(a)));
}

// dot follows np.dot: a number on either side multiplies elementwise (keeping the tensor's
// dtype, as a Lua number does everywhere in tide).
int dot_fn(lua_State* L, Args& a) {
  if (a.is_number(1) != a.is_number(2) && (a.is_number(1) || a.is_number(2)))
    return ret_out(L, a, ag::binary(BinaryOp::Mul, a.tensor_or_scalar(1), a.tensor_or_scalar(2), a.out()));
  return ret_out(L, a, ag::dot(operand(a, 1), operand(a, 2), a.out(), policy(a)));
}

// torch.outer takes 1-D tensors; np.outer flattens its inputs.
int outer_fn(lua_State* L, Args& a) {
  return ret_out(L, a, ag::outer(operand(a, 1), operand(a, 2), a.out(), a.style == Style::Numpy));
}

Scalar kw_or_one(const Args& a, const char* name) {
  if (auto s = a.kw_scalar(name)) return *s;
  return Scalar(int64_t(1));
}

// addmm(bias, m1, m2, {beta=1, alpha=1, out=})
int addmm_fn(lua_State* L, Args& a) {
  return ret_out(L, a, ag::addmm(a.tensor(1), a.tensor(2), a.tensor(3), kw_or_one(a, "beta"),
                                  kw_or_one(a, "alpha"), a.out()));
}

int addmm_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::addmm_(x, a.tensor(2), a.tensor(3), kw_or_one(a, "beta"), kw_or_one(a, "alpha"));
  lua_pushvalue(L, 1);
  return 1;
}

int solve_fn(lua_State* L, Args& a) {
  return ret(L, ag::solve(operand(a, 1), operand(a, 2), policy(a)));
}

int inv_fn(lua_State* L, Args& a) { return ret(L, ag::inv(operand(a, 1), policy(a))); }
int inverse_fn(lua_State* L, Args& a) { return ret(L, ag::inv(operand(a, 1), policy(a), "inverse")); }
int det_fn(lua_State* L, Args& a) { return ret(L, ag::det(operand(a, 1), policy(a))); }
int det_method(lua_State* L, Args& a) { return ret(L, ag::det(operand(a, 1), policy(a), "det")); }

// ord: nil, a number (math.huge / -math.huge for inf), or "fro" / "nuc" / "inf" / "-inf".
ops::NormOrd parse_ord(lua_State* L, const Args& a, int idx) {
  ops::NormOrd ord;
  int ty = lua_type(L, idx);
  if (ty == LUA_TNIL || ty == LUA_TNONE) return ord;
  if (ty == LUA_TNUMBER) {
    ord.kind = ops::NormOrd::P;
    ord.p = lua_tonumber(L, idx);
    if (std::isnan(ord.p)) a.error("ord must not be nan");
    return ord;
  }
  if (ty == LUA_TSTRING) {
    std::string s = lua_tostring(L, idx);
    if (s == "fro") ord.kind = ops::NormOrd::Fro;
    else if (s == "nuc") ord.kind = ops::NormOrd::Nuc;
    else if (s == "inf") ord.kind = ops::NormOrd::P, ord.p = HUGE_VAL;
    else if (s == "-inf") ord.kind = ops::NormOrd::P, ord.p = -HUGE_VAL;
    else a.error("unknown ord '" + quote_user(s) + "' (expected a number, 'fro', 'nuc', 'inf' or '-inf')");
    return ord;
  }
  a.error(std::string("ord must be a number or a string, got a ") + lua_typename(L, ty));
}

// Dims in the order given (the order matters for matrix norms): a number or a list.
std::vector<int> parse_dims(lua_State* L, const Args& a, int idx, int ndim) {
  int ty = lua_type(L, idx);
  if (ty == LUA_TNIL || ty == LUA_TNONE) return {};
  return a.dims_at(idx, ndim);
}

// np.linalg.norm(x[, ord][, axis][, keepdims]) / torch.linalg.norm(x[, ord][, dim][, keepdim]),
// or the same as keywords {ord=, axis= / dim=, keepdims= / keepdim=}.
int norm_fn(lua_State* L, Args& a) {
  Tensor x = operand(a, 1);
  // Positional values at 2, 3, 4, else the keywords.
  auto field = [&](int pos, std::initializer_list<const char*> names) -> int {
    if (a.has(pos)) {
      lua_pushvalue(L, pos);
      return lua_gettop(L);
    }
    for (const char* n : names) {
      if (a.push_kw(n) != LUA_TNIL) return lua_gettop(L);
      lua_pop(L, 1);
    }
    lua_pushnil(L);
    return lua_gettop(L);
  };
  int top = lua_gettop(L);
  int ord_i = field(2, {"ord", "p"});
  int dim_i = field(3, {"dim", "axis"});
  ops::NormOrd ord;
  std::vector<int> dims;
  try {
    ord = parse_ord(L, a, ord_i);
    dims = parse_dims(L, a, dim_i, x.dim());
  } catch (...) {
    lua_settop(L, top);
    throw;
  }
  lua_settop(L, top);
  bool keep = a.keepdim();
  if (a.has(4)) keep = a.boolean(4);
  return ret(L, ag::linalg_norm(x, ord, dims, keep, policy(a)));
}

const Binding kLinalgBindings[] = {
    {"mm", mm_fn, METHOD | TORCH,
     "mm(a, b[, {out=}]) -> Tensor: matrix product of 2-D tensors (n,k) x (k,m) -> (n,m)."},
    {"mv", mv_fn, METHOD | TORCH, "mv(a, v[, {out=}]) -> Tensor: matrix-vector product (n,k) x (k) -> (n)."},
    {"bmm", bmm_fn, METHOD | TORCH,
     "bmm(a, b[, {out=}]) -> Tensor: batched matrix product (B,n,k) x (B,k,m) -> (B,n,m)."},
    {"matmul", matmul_fn, METHOD | TORCH | NUMPY,
     "matmul(a, b[, {out=}]) -> Tensor: matrix product with torch.matmul / np.matmul rules (1-D "
     "operands are vectors, batch dims broadcast)."},
    {"linalg.matmul", matmul_fn, TORCH, "linalg.matmul(a, b[, {out=}]) -> Tensor: alias of matmul."},
    {"dot", dot_fn, METHOD | TORCH | NUMPY,
     "dot(a, b[, {out=}]) -> Tensor: np.dot: inner product of 1-D tensors, matrix product of 2-D, "
     "sum over the last dim of a and the second-to-last of b for N-D."},
    {"outer", outer_fn, METHOD | TORCH | NUMPY,
     "outer(a, b[, {out=}]) -> Tensor: outer product (n) x (m) -> (n,m) (np.outer flattens its inputs)."},
    {"ger", outer_fn, METHOD | TORCH, "ger(a, b[, {out=}]) -> Tensor: alias of outer."},
    {"addmm", addmm_fn, METHOD | TORCH,
     "addmm(bias, a, b[, {beta=1, alpha=1, out=}]) -> Tensor: beta * bias + alpha * (a @ b)."},
    {"addmm_", addmm_inplace, METHOD,
     "addmm_(x, a, b[, {beta=1, alpha=1}]) -> x: x = beta * x + alpha * (a @ b) in place."},
    {"linalg.solve", solve_fn, TORCH | NUMPY,
     "linalg.solve(A, B) -> Tensor: X with A @ X = B (LAPACK gesv); batch dims broadcast; B may be a "
     "vector. A singular matrix is an error."},
    {"linalg.inv", inv_fn, TORCH | NUMPY, "linalg.inv(A) -> Tensor: inverse of each square matrix (LAPACK)."},
    {"inverse", inverse_fn, METHOD | TORCH, "inverse(A) -> Tensor: alias of linalg.inv."},
    {"linalg.det", det_fn, TORCH | NUMPY, "linalg.det(A) -> Tensor: determinant of each square matrix."},
    {"det", det_method, METHOD | TORCH, "det(A) -> Tensor: alias of linalg.det."},
    {"linalg.norm", norm_fn, TORCH | NUMPY,
     "linalg.norm(x[, ord][, dim][, keepdim][, {ord=, p=, dim=, axis=, keepdim=, keepdims=}]) -> Tensor: "
     "vector or matrix norm (ord: number, math.huge, 'fro', 'nuc')."},
};

}  // namespace

void register_linalg_bindings() {
  register_bindings(kLinalgBindings, sizeof(kLinalgBindings) / sizeof(kLinalgBindings[0]));
}

}  // namespace tide::lua
