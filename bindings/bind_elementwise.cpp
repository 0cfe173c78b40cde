// Bindings of the pointwise ops: one row per op, generated from the op tables in
// tensor/ops/elementwise.hpp, plus in-place (`add_`) and NumPy (`np.add(a, b, {out=})`) forms.
#include "../tensor/autograd/functions.hpp"
#include "lua_api.hpp"

namespace tide::lua {

int where_nonzero(lua_State* L, Args& a);  // bind_index.cpp

namespace {

// x:op() / torch.op(x) / np.op(x, {out=}).
template <UnaryOp OP>
int unary_fn(lua_State* L, Args& a) {
  push_tensor(L, ag::unary(OP, a.tensor(1), a.out()));
  return 1;
}

// x:op_() writes the result back into x.
template <UnaryOp OP>
int unary_inplace(lua_State*, Args& a) {
  Tensor& x = a.tensor(1);
  ag::unary_(OP, x);
  lua_settop(a.L, 1);
  return 1;
}

// Both operands may be tensors or numbers (operators call this with a number on either side).
// Each operand is read once: this is the path of every arithmetic operator.
template <BinaryOp OP>
int binary_fn(lua_State* L, Args& a) {
  const TensorOrScalar x = a.tensor_or_scalar(1), y = a.tensor_or_scalar(2);
  if (!x.is_tensor() && !y.is_tensor()) a.error("expected at least one tensor argument");
  push_tensor(L, ag::binary(OP, x, y, a.out()));
  return 1;
}

template <BinaryOp OP>
int binary_inplace(lua_State*, Args& a) {
  Tensor& x = a.tensor(1);
  ag::binary_(OP, x, a.tensor_or_scalar(2));
  lua_settop(a.L, 1);
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
  push_tensor(L, ag::clamp(a.tensor(1), bound(a, 2, "min", "a_min"), bound(a, 3, "max", "a_max"), a.out()));
  return 1;
}

int clamp_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::clamp_(x, bound(a, 2, "min", nullptr), bound(a, 3, "max", nullptr));
  lua_settop(L, 1);
  return 1;
}

// where(cond, a, b); where(cond) is nonzero as a table of index tensors (index family).
int where_fn(lua_State* L, Args& a) {
  if (a.count() == 1) return where_nonzero(L, a);
  if (a.count() != 3) a.error("expected where(cond) or where(cond, a, b), got " + std::to_string(a.count()) + " arguments");
  push_tensor(L, ag::where(a.tensor(1), a.tensor_or_scalar(2), a.tensor_or_scalar(3), a.out()));
  return 1;
}

int lerp_fn(lua_State* L, Args& a) {
  push_tensor(L, ag::lerp(a.tensor(1), a.tensor(2), a.tensor_or_scalar(3), a.out()));
  return 1;
}

int lerp_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::lerp_(x, a.tensor(2), a.tensor_or_scalar(3));
  lua_settop(L, 1);
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
               {"asin", "arcsin"},       {"acos", "arccos"},      {"atan", "arctan"}};
  for (auto& n : names)
    if (std::string_view(n.torch) == name) return n.np;
  return nullptr;
}

std::vector<Binding> make_table() {
  std::vector<Binding> t;
#define TIDE_UNARY_ROW(name, F, kind)                                                      \
  t.push_back({#name, unary_fn<UnaryOp::F>, METHOD | TORCH | NUMPY,                        \
               #name "(x[, {out=}]) -> Tensor: elementwise " #name "."});                     \
  if (const char* np = numpy_name(#name))                                                  \
    t.push_back({np, unary_fn<UnaryOp::F>, NUMPY, #name "(x[, {out=}]) -> Tensor: NumPy's name for " #name "."}); \
  t.push_back({#name "_", unary_inplace<UnaryOp::F>, METHOD, #name "_(x) -> x: in-place " #name "."});
  TIDE_UNARY_OPS(TIDE_UNARY_ROW)
#undef TIDE_UNARY_ROW
#define TIDE_BINARY_ROW(name, F, kind)                                                         \
  t.push_back({#name, binary_fn<BinaryOp::F>, METHOD | TORCH | NUMPY,                          \
               #name "(a, b[, {out=}]) -> Tensor: elementwise " #name " with broadcasting."}); \
  if (const char* np = numpy_name(#name))                                                      \
    t.push_back({np, binary_fn<BinaryOp::F>, NUMPY, #name "(a, b[, {out=}]) -> Tensor: NumPy's name for " #name "."}); \
  t.push_back({#name "_", binary_inplace<BinaryOp::F>, METHOD, #name "_(x, y) -> x: in-place " #name "."});
  TIDE_BINARY_OPS(TIDE_BINARY_ROW)
#undef TIDE_BINARY_ROW
  t.push_back({"clamp", clamp_fn, METHOD | TORCH | NUMPY,
               "clamp(x, min, max) or clamp(x, {min=, max=}) -> Tensor: limits values to [min, max].", "clip"});
  t.push_back({"clip", clamp_fn, METHOD | TORCH, "clip(x, min, max) -> Tensor: alias of clamp."});
  t.push_back({"clamp_", clamp_inplace, METHOD, "clamp_(x, min, max) -> x: in-place clamp."});
  t.push_back({"where", where_fn, METHOD | TORCH | NUMPY, "where(cond, a, b) -> Tensor: a where cond is true, else b."});
  t.push_back({"lerp", lerp_fn, METHOD | TORCH, "lerp(a, b, w) -> Tensor: a + w * (b - a)."});
  t.push_back({"lerp_", lerp_inplace, METHOD, "lerp_(a, b, w) -> a: in-place lerp."});
  // Aliases people reach for.
  t.push_back({"true_divide", binary_fn<BinaryOp::Div>, TORCH | NUMPY, "true_divide(a, b) -> Tensor: a / b in floating point."});
  return t;
}

}  // namespace

void register_elementwise_bindings() {
  static const std::vector<Binding> table = make_table();
  register_bindings(table.data(), table.size());
}

}  // namespace tide::lua
