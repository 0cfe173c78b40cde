// Bindings of the pointwise ops: one row per op, generated from the op tables in
// tensor/ops/elementwise.hpp, plus in-place (`add_`) and NumPy (`np.add(a, b, {out=})`) forms.
#include "../tensor/autograd/functions.hpp"
#include "lua_api.hpp"

namespace tide::lua {

int where_nonzero(lua_State* L, Args& a);  // bind_index.cpp

namespace {

// The result tensor a ufunc writes into: the `out` keyword, or (NumPy spelling, as NumPy's
// ufuncs take it) a tensor as the positional argument after the operands.
const Tensor* out_arg(Args& a, int pos) {
  if (a.style == Style::Numpy && a.has(pos)) {
    if (a.has_kw("out")) a.error("out given both as argument " + std::to_string(pos) + " and as a keyword");
    return &a.tensor(pos);
  }
  return a.out();
}

// round's decimals: positional 2 (np.round(a, decimals)) or the keyword; 0 when absent.
int64_t decimals_arg(Args& a) {
  if (a.has(2)) {
    if (a.has_kw("decimals")) a.error("decimals given both as argument 2 and as a keyword");
    return a.integer(2);
  }
  return a.kw_integer("decimals").value_or(0);
}

// Pushes r, or with {out=} the out tensor's own Lua value (the same object, as in PyTorch).
int push_or_out(lua_State* L, Args& a, Tensor r) {
  if (a.out()) a.push_kw("out");
  else push_tensor(L, std::move(r));
  return 1;
}

// Pushes the result: with an out tensor, that same Lua value (np.add(a, b, out) returns out).
int push_result(lua_State* L, Args& a, int out_pos, Tensor r) {
  if (a.style == Style::Numpy && a.has(out_pos)) {
    lua_pushvalue(L, out_pos);
    return 1;
  }
  return push_or_out(L, a, std::move(r));
}

// x:op() / torch.op(x) / np.op(x[, out]) / np.op(x, {out=}); round also takes decimals
// (np.round(a, decimals[, out]), torch.round(x, {decimals=})).
template <UnaryOp OP>
int unary_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if constexpr (OP == UnaryOp::Round) {
    int64_t decimals = decimals_arg(a);
    return push_result(L, a, 3, ag::round(x, decimals, out_arg(a, 3)));
  } else {
    return push_result(L, a, 2, ag::unary(OP, x, out_arg(a, 2)));
  }
}

// x:op_() writes the result back into x.
template <UnaryOp OP>
int unary_inplace(lua_State*, Args& a) {
  Tensor& x = a.tensor(1);
  if constexpr (OP == UnaryOp::Round) {
    if (int64_t decimals = decimals_arg(a)) {
      ag::copy_(x, ag::round(x, decimals), "round_");
      lua_pushvalue(a.L, 1);
      return 1;
    }
  }
  ag::unary_(OP, x);
  lua_pushvalue(a.L, 1);
  return 1;
}

// add and sub take alpha (positional 3 in torch spelling, or the keyword): a + alpha * b,
// as PyTorch's; b is scaled first. As in PyTorch, integer and bool operands take integer
// alphas only, and a bool alpha only bool operands.
template <BinaryOp OP>
TensorOrScalar scaled_by_alpha(Args& a, const TensorOrScalar& x, const TensorOrScalar& y) {
  if constexpr (OP != BinaryOp::Add && OP != BinaryOp::Sub) return y;
  std::optional<Scalar> alpha;
  if (a.style == Style::Torch && a.has(3)) {
    if (a.has_kw("alpha")) a.error("alpha given both as argument 3 and as a keyword");
    alpha = a.scalar(3);
  } else {
    alpha = a.kw_scalar("alpha");
  }
  if (!alpha || (alpha->kind == Scalar::Int && alpha->i == 1)) return y;
  DType result = ops::result_type(x, y);
  if (alpha->kind == Scalar::Float && !is_floating(result) && !is_complex(result))
    a.error("alpha must be an integer for " + std::string(dtype_name(result)) + " operands, got " +
            std::to_string(alpha->f));
  if (alpha->kind == Scalar::Bool && result != DType::Bool) a.error("a boolean alpha needs bool operands");
  if (alpha->is_complex() && !is_complex(result))
    a.error("a complex alpha needs complex operands, got " + std::string(dtype_name(result)));
  if (y.is_tensor()) return TensorOrScalar(ag::binary(BinaryOp::Mul, y, *alpha));
  const Scalar& b = y.scalar;
  if (b.is_complex() || alpha->is_complex()) {
    const auto p = b.to<std::complex<double>>() * alpha->to<std::complex<double>>();
    return TensorOrScalar(Scalar::complex(p.real(), p.imag()));
  }
  if (b.kind != Scalar::Float && alpha->kind != Scalar::Float) {
    int64_t product;
    __builtin_mul_overflow(b.i, alpha->i, &product);  // wraps, as int64 tensors (and PyTorch) do
    return TensorOrScalar(Scalar(product));
  }
  return TensorOrScalar(Scalar(b.to_double() * alpha->to_double()));
}

// Both operands may be tensors or numbers (operators call this with a number on either side).
// Each operand is read once: this is the path of every arithmetic operator.
template <BinaryOp OP>
int binary_fn(lua_State* L, Args& a) {
  const TensorOrScalar x = a.tensor_or_scalar(1), y = a.tensor_or_scalar(2);
  if (!x.is_tensor() && !y.is_tensor()) a.error("expected at least one tensor argument");
  return push_result(L, a, 3, ag::binary(OP, x, scaled_by_alpha<OP>(a, x, y), out_arg(a, 3)));
}

template <BinaryOp OP>
int binary_inplace(lua_State*, Args& a) {
  Tensor& x = a.tensor(1);
  const TensorOrScalar y = a.tensor_or_scalar(2);
  ag::binary_(OP, x, scaled_by_alpha<OP>(a, TensorOrScalar(x), y));
  lua_pushvalue(a.L, 1);
  return 1;
}

// clamp(x, min, max) / clamp{min=, max=} / np.clip(x, lo, hi); nil bounds are absent.
std::optional<TensorOrScalar> bound(Args& a, int i, const char* kw, const char* kw2) {
  if (a.has(i)) return a.tensor_or_scalar(i);
  if (auto v = a.kw_tensor_or_scalar(kw)) return v;
  if (kw2) return a.kw_tensor_or_scalar(kw2);
  return std::nullopt;
}

int clamp_fn(lua_State* L, Args& a) {
  return push_or_out(L, a, ag::clamp(a.tensor(1), bound(a, 2, "min", "a_min"), bound(a, 3, "max", "a_max"), a.out()));
}

int clamp_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::clamp_(x, bound(a, 2, "min", nullptr), bound(a, 3, "max", nullptr));
  lua_pushvalue(L, 1);
  return 1;
}

// where(cond, a, b); where(cond) is nonzero as a table of index tensors (index family).
int where_fn(lua_State* L, Args& a) {
  if (a.count() == 1) return where_nonzero(L, a);
  if (a.count() != 3) a.error("expected where(cond) or where(cond, a, b), got " + std::to_string(a.count()) + " arguments");
  return push_or_out(L, a, ag::where(a.tensor(1), a.tensor_or_scalar(2), a.tensor_or_scalar(3), a.out()));
}

int lerp_fn(lua_State* L, Args& a) {
  return push_or_out(L, a, ag::lerp(a.tensor(1), a.tensor(2), a.tensor_or_scalar(3), a.out()));
}

int lerp_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::lerp_(x, a.tensor(2), a.tensor_or_scalar(3));
  lua_pushvalue(L, 1);
  return 1;
}

// Where a NumPy spelling differs from torch's.
const char* numpy_name(const char* name) {
  static const struct {
    const char* torch;
    const char* np;
  } names[] = {{"pow", "power"},         {"sub", "subtract"},     {"mul", "multiply"},
               {"div", "divide"},        {"remainder", "mod"},    {"neg", "negative"},
               {"eq", "equal"},          {"ne", "not_equal"},     {"lt", "less"},
               {"le", "less_equal"},     {"gt", "greater"},       {"ge", "greater_equal"},
               {"bitwise_not", "invert"}, {"abs", "absolute"},    {"atan2", "arctan2"},
               {"asin", "arcsin"},       {"acos", "arccos"},      {"atan", "arctan"},
               {"bitwise_left_shift", "left_shift"}, {"bitwise_right_shift", "right_shift"}};
  for (auto& n : names)
    if (std::string_view(n.torch) == name) return n.np;
  return nullptr;
}

// The docs of the ops with arguments beyond the generic rows': add and sub (and their
// in-place and NumPy forms) take alpha, round takes decimals.
const char* special_doc(std::string_view name, const char* doc) {
  bool inplace = std::string_view(doc).find("in-place") != std::string_view::npos;
  if (name == "round") {
    if (inplace) return "round_(x[, decimals][, {decimals=}]) -> x: in-place round.";
    return "round(x[, decimals][, out][, {decimals=, out=}]) -> Tensor: elementwise round half to even, to "
           "`decimals` digits after the point (before it when negative), as np.round.";
  }
  if (name == "add") {
    if (inplace)
      return "add_(x, y[, alpha][, {alpha=}]) -> x: in-place x + alpha * y.";
    return "add(a, b[, alpha][, {alpha=, out=}]) -> Tensor: a + alpha * b with broadcasting (np: the positional "
           "after b is out, as NumPy's).";
  }
  if (name == "sub") {
    if (inplace)
      return "sub_(x, y[, alpha][, {alpha=}]) -> x: in-place x - alpha * y.";
    return "sub(a, b[, alpha][, {alpha=, out=}]) -> Tensor: a - alpha * b with broadcasting (np: the positional "
           "after b is out, as NumPy's).";
  }
  return doc;
}

std::vector<Binding> make_table() {
  std::vector<Binding> t;
#define TIDE_UNARY_ROW(name, F, kind)                                                      \
  if (#name[0] != '_') { /* not the internal ops */                                        \
    t.push_back({#name, unary_fn<UnaryOp::F>, METHOD | TORCH | NUMPY,                      \
                 special_doc(#name, #name "(x[, out][, {out=}]) -> Tensor: elementwise " #name " (np: out positional too).")}); \
    if (const char* np = numpy_name(#name))                                                \
      t.push_back({np, unary_fn<UnaryOp::F>, NUMPY, special_doc(#name, #name "(x[, out][, {out=}]) -> Tensor: NumPy's name for " #name ".")}); \
    t.push_back({#name "_", unary_inplace<UnaryOp::F>, METHOD, special_doc(#name, #name "_(x) -> x: in-place " #name ".")}); \
  }
  TIDE_UNARY_OPS(TIDE_UNARY_ROW)
#undef TIDE_UNARY_ROW
#define TIDE_BINARY_ROW(name, F, kind)                                                         \
  if (#name[0] == '_') { /* an internal op: torch._name only, for the Lua-written wrapper */    \
    t.push_back({#name, binary_fn<BinaryOp::F>, TORCH, #name "(a, b[, {out=}]) -> Tensor: internal elementwise " #name "."}); \
  } else {                                                                                     \
    t.push_back({#name, binary_fn<BinaryOp::F>, METHOD | TORCH | NUMPY,                        \
                 special_doc(#name, #name "(a, b[, out][, {out=}]) -> Tensor: elementwise " #name " with broadcasting (np: out positional too).")}); \
    if (const char* np = numpy_name(#name))                                                    \
      t.push_back({np, binary_fn<BinaryOp::F>, NUMPY, special_doc(#name, #name "(a, b[, out][, {out=}]) -> Tensor: NumPy's name for " #name ".")}); \
    t.push_back({#name "_", binary_inplace<BinaryOp::F>, METHOD, special_doc(#name, #name "_(x, y) -> x: in-place " #name ".")}); \
  }
  TIDE_BINARY_OPS(TIDE_BINARY_ROW)
#undef TIDE_BINARY_ROW
  t.push_back({"clamp", clamp_fn, METHOD | TORCH | NUMPY,
               "clamp(x, min, max) or clamp(x, {min=, max=, a_min=, a_max=, out=}) -> Tensor: limits values to [min, max] "
               "(a_min=, a_max= as np.clip's).", "clip"});
  t.push_back({"clip", clamp_fn, METHOD | TORCH, "clip(x, min, max[, {min=, max=, a_min=, a_max=, out=}]) -> Tensor: alias of clamp."});
  t.push_back({"clamp_", clamp_inplace, METHOD, "clamp_(x, min, max[, {min=, max=}]) -> x: in-place clamp."});
  t.push_back({"around", unary_fn<UnaryOp::Round>, NUMPY, special_doc("round", "round(x)")});
  t.push_back({"where", where_fn, METHOD | TORCH | NUMPY, "where(cond, a, b[, {out=}]) -> Tensor: a where cond is true, else b."});
  t.push_back({"lerp", lerp_fn, METHOD | TORCH, "lerp(a, b, w[, {out=}]) -> Tensor: a + w * (b - a)."});
  t.push_back({"lerp_", lerp_inplace, METHOD, "lerp_(a, b, w) -> a: in-place lerp."});
  // Aliases people reach for.
  t.push_back({"true_divide", binary_fn<BinaryOp::Div>, TORCH | NUMPY, "true_divide(a, b[, out][, {out=}]) -> Tensor: a / b in floating point."});
  return t;
}

}  // namespace

void register_elementwise_bindings() {
  static const std::vector<Binding> table = make_table();
  register_bindings(table.data(), table.size());
}

}  // namespace tide::lua
