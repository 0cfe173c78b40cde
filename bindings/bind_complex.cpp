// Bindings of the complex dtypes (tensor/ops/complex.hpp): the parts of a complex tensor
// (real, imag, view_as_real, view_as_complex), complex(re, im) and polar, and the Lua value
// of a complex number (complex_value.hpp).
#include <algorithm>
#include <cstring>
#include <string_view>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/complex.hpp"
#include "../tensor/ops/creation.hpp"
#include "../tensor/ops/linalg.hpp"
#include "../tensor/ops/shape.hpp"
#include "complex_value.hpp"
#include "lua_api.hpp"

namespace tide::lua {

void push_complex(lua_State* L, double re, double im) {
  lua_createtable(L, 0, 2);
  lua_pushnumber(L, re);
  lua_setfield(L, -2, "real");
  lua_pushnumber(L, im);
  lua_setfield(L, -2, "imag");
  luaL_setmetatable(L, kComplexMeta);
}

bool complex_value(lua_State* L, int idx, double& re, double& im) {
  if (lua_type(L, idx) != LUA_TTABLE || !lua_getmetatable(L, idx)) return false;
  luaL_getmetatable(L, kComplexMeta);
  const bool is = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  if (!is) return false;
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, "real");
  lua_getfield(L, idx, "imag");
  const bool numbers = lua_type(L, -2) == LUA_TNUMBER && lua_type(L, -1) == LUA_TNUMBER;
  re = lua_tonumber(L, -2), im = lua_tonumber(L, -1);
  lua_pop(L, 2);
  TIDE_CHECK(numbers, "complex: a complex number's real and imag must be numbers");
  return true;
}

// The bindings that take complex tensors and numbers: those with a complex kernel or a
// complex meaning, and those that only move or reinterpret elements (views, joins, copies,
// conversions), which work for any item size. Sorted, for the binary search.
bool complex_capable(const char* name) {
  static constexpr std::string_view kCapable[] = {
      "abs", "absolute", "acos", "acos_", "add", "add_", "angle", "arccos", "arcsin", "arctan", "array", "as_strided",
      "as_tensor", "asarray", "ascontiguousarray", "asin", "asin_", "astype", "atan", "atan_", "bmm", "bool",
      "broadcast_to", "byte", "cat", "char", "chunk", "clone", "complex", "concat", "concatenate", "conj",
      "conj_physical", "contiguous", "copy", "copy_", "cos", "cos_", "cosh", "cosh_", "cpu", "cuda", "cumprod",
      "cumsum", "detach", "dim", "distributed.all_gather", "distributed.all_gather_into_tensor",
      "distributed.all_reduce", "distributed.all_to_all", "distributed.broadcast", "distributed.gather",
      "distributed.irecv", "distributed.isend", "distributed.recv", "distributed.reduce", "distributed.reduce_scatter",
      "distributed.scatter", "distributed.send", "div", "div_", "divide", "dot", "double", "element_size", "empty_like", "eq",
      "equal", "exp", "exp2", "exp2_", "exp_", "expand", "expand_as", "expm1", "expm1_", "fft.fft", "fft.fft2",
      "fft.fftn", "fft.hfft", "fft.hfft2", "fft.hfftn", "fft.ifft", "fft.ifft2", "fft.ifftn", "fft.ihfft", "fft.ihfft2", "fft.ihfftn", "fft.irfft", "fft.irfft2",
      "fft.irfftn", "fft.rfft", "fft.rfft2", "fft.rfftn", "fill_", "flatten", "flip", "fliplr", "flipud", "float",
      "free", "from_numpy", "full", "full_like", "half", "hstack", "imag", "int", "is_complex", "is_contiguous",
      "is_floating_point", "is_shared", "is_tensor", "isfinite", "isinf", "isnan", "item", "linalg.eig", "linalg.eigvals", "log",
      "log10", "log10_", "log1p", "log1p_", "log2", "log2_", "log_", "long", "matmul", "mean", "mm", "moveaxis",
      "movedim", "mul", "mul_", "multiply", "mv", "narrow", "ndimension", "ne", "neg", "neg_", "negative", "nelement",
      "not_equal", "numel", "ones_like", "permute", "polar", "pow", "pow_", "power", "prod", "ravel", "real",
      "reciprocal", "reciprocal_", "repeat", "repeat_tensor", "requires_grad_", "reshape", "reshape_as", "save",
      "savez", "savez_compressed", "select", "sgn", "shape", "share_memory_", "short", "sign", "sign_", "sin", "sin_", "sinh", "sinh_",
      "size", "split", "sqrt", "sqrt_", "square", "square_", "squeeze", "stack", "std", "stride", "sub", "sub_",
      "subtract", "sum", "swapaxes", "swapdims", "t", "tan", "tan_", "tanh", "tanh_", "tensor", "tile", "to",
      "tolist", "transpose", "true_divide", "true_divide_", "type", "unbind", "unflatten", "unsqueeze", "var", "vdot",
      "view", "view_as", "view_as_complex", "view_as_real", "vstack", "where", "zero_", "zeros_like",
  };
  static_assert(std::is_sorted(std::begin(kCapable), std::end(kCapable)));
  return std::binary_search(std::begin(kCapable), std::end(kCapable), std::string_view(name));
}

namespace {

int ret(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

// Tensor argument i of an op without gradient formulas (its result is complex, or it runs
// through complex numbers): an input that requires grad is an error, not a result that
// silently leaves the graph. NumPy spelling takes array-likes.
Tensor no_grad_input(Args& a, int i) {
  Tensor t = a.numpy ? a.tensor_like(i) : a.tensor(i);
  if (autograd::needs_recording({&t}))
    a.error("argument " + std::to_string(i) + " requires grad, but complex tensors have no gradients in tide "
            "(detach() it first)");
  return t;
}

int real_fn(lua_State* L, Args& a) { return ret(L, ag::real(a.tensor(1))); }

// NumPy's imag of a real array is zeros; PyTorch's is an error.
int imag_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (a.numpy && !is_complex(x.dtype())) return ret(L, ops::zeros_like(x));
  return ret(L, ag::imag(x));
}

int view_as_real_fn(lua_State* L, Args& a) { return ret(L, ag::view_as_real(a.tensor(1))); }
int view_as_complex_fn(lua_State* L, Args& a) { return ret(L, ag::view_as_complex(a.tensor(1))); }

// complex(re, im): with two numbers the complex number re + im*j (Python's complex(re, im));
// with two tensors torch.complex.
int complex_fn(lua_State* L, Args& a) {
  if (a.is_number(1) && a.is_number(2)) {
    const double re = a.number(1), im = a.number(2);
    TIDE_CHECK(!a.out(), a.op, ": out= needs tensor operands");
    push_complex(L, re, im);
    return 1;
  }
  return ret(L, ag::complex(a.tensor(1), a.tensor(2), a.out()));
}

int polar_fn(lua_State* L, Args& a) {
  Tensor abs = no_grad_input(a, 1), angle = no_grad_input(a, 2);
  return ret(L, ops::polar(abs, angle, a.out()));
}

// torch.sgn: x/|x| for a complex x, sign(x) (differentiable) for a real one.
int sgn_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (!is_complex(x.dtype())) return ret(L, ag::unary(UnaryOp::Sign, x, a.out()));
  return ret(L, ops::sgn(no_grad_input(a, 1), a.out()));
}

int angle_fn(lua_State* L, Args& a) { return ret(L, ops::angle(no_grad_input(a, 1), a.out())); }
int conj_fn(lua_State* L, Args& a) { return ret(L, ag::conj(a.numpy ? a.tensor_like(1) : a.tensor(1), a.out())); }

// vdot(a, b) = sum(conj(a) * b): np.vdot flattens its operands, torch.vdot takes 1-D ones.
int vdot_fn(lua_State* L, Args& a) {
  Tensor x = a.numpy ? a.tensor_like(1) : a.tensor(1), y = a.numpy ? a.tensor_like(2) : a.tensor(2);
  if (a.numpy) {
    x = ag::reshape(x, {x.numel()});
    y = ag::reshape(y, {y.numel()});
  }
  TIDE_CHECK(x.dim() == 1 && y.dim() == 1, a.op, ": expected 1-D tensors, got ", x.dim(), "-D and ", y.dim(), "-D");
  // Differentiable for real operands (the conjugate of a real x is x itself); a complex
  // product that requires grad is refused by autograd (no complex formula for dot).
  return ret(L, ag::dot(ag::conj(x), y, a.out(), a.numpy ? ops::DTypePolicy::Promote : ops::DTypePolicy::Strict, a.op));
}

// linalg.eig: complex results in PyTorch's spelling, real ones in NumPy's when every
// eigenvalue is real.
int eig_fn(lua_State* L, Args& a) {
  std::vector<Tensor> r = ops::eig(no_grad_input(a, 1), true, !a.numpy, "linalg.eig");
  push_tensor(L, r[0]);
  push_tensor(L, r[1]);
  return 2;
}
int eigvals_fn(lua_State* L, Args& a) {
  return ret(L, ops::eig(no_grad_input(a, 1), false, !a.numpy, "linalg.eigvals")[0]);
}

int is_complex_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, is_complex(a.tensor(1).dtype()));
  return 1;
}

const Binding kComplexBindings[] = {
    {"real", real_fn, TORCH | NUMPY,
     "real(x) -> Tensor: the real parts of a complex tensor as a view (x.real); x itself for a real tensor."},
    {"imag", imag_fn, TORCH | NUMPY,
     "imag(x) -> Tensor: the imaginary parts of a complex tensor as a view (x.imag); np.imag of a real array is "
     "zeros, torch.imag of one an error."},
    {"view_as_real", view_as_real_fn, TORCH,
     "view_as_real(x) -> Tensor: a complex tensor as a float view with a last dim of 2 (real, imag)."},
    {"view_as_complex", view_as_complex_fn, TORCH,
     "view_as_complex(x) -> Tensor: a float32/float64 tensor whose last dim is 2 with stride 1 seen as complex (view)."},
    {"complex", complex_fn, TORCH | NUMPY,
     "complex(real, imag[, {out=}]) -> Tensor or complex number: the complex tensor real + imag*j of two float "
     "tensors of one dtype (broadcast); of two numbers, the complex number (Python's complex(re, im))."},
    {"polar", polar_fn, TORCH,
     "polar(abs, angle[, {out=}]) -> Tensor: the complex tensor abs*(cos(angle) + sin(angle)*j)."},
    {"sgn", sgn_fn, METHOD | TORCH,
     "sgn(x[, {out=}]) -> Tensor: x/|x| of each complex element (0 where x is 0); sign(x) for a real tensor."},
    {"angle", angle_fn, METHOD | TORCH | NUMPY,
     "angle(x[, {out=}]) -> Tensor: the argument atan2(imag, real) of each complex element (real dtype); of a "
     "real tensor pi where negative, else 0 (NumPy: arctan2(0, x), pi at -0.0)."},
    {"conj", conj_fn, METHOD | TORCH | NUMPY,
     "conj(x[, {out=}]) -> Tensor: the complex conjugate, a new tensor (PyTorch's conj_physical; no lazy conjugate "
     "bit); x itself for a real tensor.", "conjugate"},
    {"conj_physical", conj_fn, METHOD | TORCH, "conj_physical(x[, {out=}]) -> Tensor: as conj."},
    {"vdot", vdot_fn, METHOD | TORCH | NUMPY,
     "vdot(a, b[, {out=}]) -> Tensor: sum(conj(a) * b) of two 1-D tensors (np.vdot flattens its operands)."},
    {"linalg.eig", eig_fn, TORCH | NUMPY,
     "linalg.eig(A) -> w, V: eigenvalues and right eigenvectors (columns, unit norm) of each real square matrix "
     "(LAPACK geev). Complex in torch's spelling; in NumPy's real when every eigenvalue is real."},
    {"linalg.eigvals", eigvals_fn, TORCH | NUMPY, "linalg.eigvals(A) -> Tensor: the eigenvalues of linalg.eig."},
    {"is_complex", is_complex_fn, METHOD | TORCH | NUMPY,
     "is_complex(x) -> boolean: whether x has a complex dtype (np.iscomplexobj).", "iscomplexobj"},
};

}  // namespace

void register_complex_bindings() { register_bindings(kComplexBindings, std::size(kComplexBindings)); }

}  // namespace tide::lua
