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


int push_all(lua_State* L, const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) push_tensor(L, t);
  return int(ts.size());
}

// An option given at positional i or as keyword `kw`.
std::optional<bool> opt_bool(const Args& a, int i, const char* kw) {
  if (a.has(i)) return a.boolean(i);
  return a.kw_bool(kw);
}
std::optional<double> opt_number(const Args& a, int i, const char* kw) {
  if (a.has(i)) return a.number(i);
  return a.kw_number(kw);
}
std::optional<std::string> opt_string(const Args& a, int i, const char* kw) {
  if (a.has(i)) return a.string(i);
  return a.kw_string(kw);
}

int svd_fn(lua_State* L, Args& a) {
  Tensor A = operand(a, 1);
  bool full = opt_bool(a, 2, "full_matrices").value_or(true);
  bool uv = a.kw_bool("compute_uv").value_or(true);
  return push_all(L, ag::svd(A, full, uv, policy(a)));
}

int svdvals_fn(lua_State* L, Args& a) {
  return push_all(L, ag::svd(operand(a, 1), false, false, policy(a), "linalg.svdvals"));
}

// mode 'reduced' / 'complete' / 'r': np returns R alone for 'r', torch an empty Q and R.
int qr_fn(lua_State* L, Args& a) {
  Tensor A = operand(a, 1);
  std::string mode = opt_string(a, 2, "mode").value_or("reduced");
  ops::QrMode m = ops::QrMode::Reduced;
  if (mode == "complete") m = ops::QrMode::Complete;
  else if (mode == "r") m = ops::QrMode::R;
  else if (mode == "raw") a.error("mode 'raw' (Householder reflectors) is not supported; use 'reduced', 'complete' or 'r'");
  else if (mode != "reduced") a.error("unknown mode '" + quote_user(mode) + "' (expected 'reduced', 'complete' or 'r')");
  std::vector<Tensor> r = ag::qr(A, m, policy(a));
  if (m == ops::QrMode::R && a.style != Style::Numpy) r.insert(r.begin(), Tensor::empty({0}, r[0].dtype()));
  return push_all(L, r);
}

bool uplo_lower(const Args& a) {
  std::string u = opt_string(a, 2, "UPLO").value_or("L");
  if (u != "L" && u != "U") a.error("UPLO must be 'L' or 'U', got '" + quote_user(u) + "'");
  return u == "L";
}

int eigh_fn(lua_State* L, Args& a) { return push_all(L, ag::eigh(operand(a, 1), uplo_lower(a), true, policy(a))); }
int eigvalsh_fn(lua_State* L, Args& a) {
  return push_all(L, ag::eigh(operand(a, 1), uplo_lower(a), false, policy(a), "linalg.eigvalsh"));
}

int cholesky_fn(lua_State* L, Args& a) {
  return ret(L, ag::cholesky(operand(a, 1), a.kw_bool("upper").value_or(false), policy(a)));
}

int lstsq_fn(lua_State* L, Args& a) {
  Tensor A = operand(a, 1), B = operand(a, 2);
  std::optional<double> rcond = opt_number(a, 3, "rcond");
  if (rcond && !(*rcond >= 0 || *rcond < 0)) a.error("rcond must not be nan");
  return push_all(L, ag::lstsq(A, B, rcond, policy(a)));
}

int slogdet_fn(lua_State* L, Args& a) { return push_all(L, ag::slogdet(operand(a, 1), policy(a))); }

// np.linalg.pinv(a, rcond=1e-15): cutoff rcond * largest singular value.
// torch.linalg.pinv(A, {atol=, rtol=}): cutoff max(atol, rtol * largest), rtol defaulting to
// eps * max(m, n) when atol is absent or zero (rcond: rtol's old name).
int pinv_fn(lua_State* L, Args& a) {
  Tensor A = operand(a, 1);
  std::optional<double> rtol = opt_number(a, 2, "rcond"), atol = a.kw_number("atol");
  if (auto r = a.kw_number("rtol")) {
    if (rtol) a.error("give rcond or rtol, not both");
    rtol = r;
  }
  bool herm = a.kw_bool("hermitian").value_or(false);
  for (auto v : {rtol, atol})
    if (v && std::isnan(*v)) a.error("the tolerances must not be nan");
  double at = atol.value_or(0), rt;
  if (rtol) rt = *rtol;
  else if (a.style == Style::Numpy) rt = 1e-15;
  else if (at > 0) rt = 0;
  else {
    int64_t m = A.dim() >= 2 ? A.size(A.dim() - 2) : 0, n = A.dim() >= 2 ? A.size(A.dim() - 1) : 0;
    double eps = A.dtype() == DType::Float32 ? 1.1920928955078125e-07 : 2.220446049250313e-16;
    rt = eps * double(std::max(m, n));
  }
  return ret(L, ag::pinv(A, at, rt, herm, policy(a)));
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
    {"linalg.svd", svd_fn, TORCH | NUMPY,
     "linalg.svd(A[, full_matrices][, {full_matrices=, compute_uv=}]) -> U, S, Vh: singular value "
     "decomposition A = U diag(S) Vh of each matrix (LAPACK gesdd); S descending. full_matrices "
     "(default true): U (m,m) and Vh (n,n), else (m,k) and (k,n); compute_uv=false returns S alone."},
    {"linalg.svdvals", svdvals_fn, TORCH | NUMPY,
     "linalg.svdvals(A) -> Tensor: the singular values of each matrix, descending."},
    {"linalg.qr", qr_fn, TORCH | NUMPY,
     "linalg.qr(A[, mode][, {mode=}]) -> Q, R: QR decomposition (LAPACK geqrf / orgqr). mode 'reduced' "
     "(default), 'complete', or 'r' (np: R alone; torch: an empty Q and R)."},
    {"linalg.eigh", eigh_fn, TORCH | NUMPY,
     "linalg.eigh(A[, UPLO][, {UPLO=}]) -> w, V: ascending eigenvalues and column eigenvectors of each "
     "symmetric matrix, read from its lower ('L', default) or upper ('U') triangle (LAPACK syevd)."},
    {"linalg.eigvalsh", eigvalsh_fn, TORCH | NUMPY,
     "linalg.eigvalsh(A[, UPLO][, {UPLO=}]) -> Tensor: the eigenvalues of linalg.eigh."},
    {"linalg.cholesky", cholesky_fn, TORCH | NUMPY,
     "linalg.cholesky(A[, {upper=}]) -> Tensor: lower factor L with A = L L^T (upper=true: L^T), from A's "
     "lower triangle. A matrix that is not positive definite is an error."},
    {"linalg.lstsq", lstsq_fn, TORCH | NUMPY,
     "linalg.lstsq(A, B[, rcond][, {rcond=}]) -> x, residuals, rank, S: least-squares solution of A x = B "
     "(LAPACK gelsd); singular values below rcond * largest count as zero (default eps * max(m, n))."},
    {"linalg.slogdet", slogdet_fn, TORCH | NUMPY,
     "linalg.slogdet(A) -> sign, logabsdet: sign and log |det| of each square matrix (0, -inf when singular)."},
    {"linalg.pinv", pinv_fn, TORCH | NUMPY,
     "linalg.pinv(A[, rcond][, {rcond=, rtol=, atol=, hermitian=}]) -> Tensor: Moore-Penrose pseudo-inverse; "
     "singular values at most max(atol, rtol * largest) are dropped (np default rcond 1e-15; torch default "
     "rtol eps * max(m, n) unless atol > 0). hermitian: A is symmetric (eigh instead of svd)."},
};

}  // namespace

void register_linalg_bindings() {
  register_bindings(kLinalgBindings, sizeof(kLinalgBindings) / sizeof(kLinalgBindings[0]));
}

}  // namespace tide::lua
