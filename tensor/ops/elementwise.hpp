// Pointwise ops: unary math, binary arithmetic with broadcasting and promotion,
// comparisons, logical and bitwise ops, ternary helpers, casts and copies.
// Each table below is the one place an op is listed: the enum, the kernel dispatch and the
// Lua bindings are all generated from it.
#pragma once
#include <optional>

#include "../tensor.hpp"

namespace tide {

// A Lua argument that may be a tensor or a plain number.
struct TensorOrScalar {
  Tensor tensor;
  Scalar scalar;
  TensorOrScalar(const Tensor& t) : tensor(t) {}
  TensorOrScalar(const Scalar& s) : scalar(s) {}
  TensorOrScalar(double v) : scalar(v) {}
  bool is_tensor() const { return tensor.defined(); }
};

// Unary ops: X(name, Functor, kind). kind: SAME keeps the dtype (any dtype); FLOAT computes
// in floating point (integer and bool inputs give the default float dtype); BOOL gives bool;
// NUMERIC keeps the dtype but rejects bool. A name starting with '_' is internal (a derivative
// of another op: _trigamma is digamma's) and gets no Lua binding.
#define TIDE_UNARY_OPS(X)            \
  X(abs, Abs, NUMERIC)               \
  X(neg, Neg, NUMERIC)               \
  X(sign, Sign, NUMERIC)             \
  X(square, Square, NUMERIC)         \
  X(exp, Exp, FLOAT)                 \
  X(exp2, Exp2, FLOAT)               \
  X(log, Log, FLOAT)                 \
  X(log2, Log2, FLOAT)               \
  X(log10, Log10, FLOAT)             \
  X(log1p, Log1p, FLOAT)             \
  X(expm1, Expm1, FLOAT)             \
  X(sqrt, Sqrt, FLOAT)               \
  X(rsqrt, Rsqrt, FLOAT)             \
  X(reciprocal, Reciprocal, FLOAT)   \
  X(sin, Sin, FLOAT)                 \
  X(cos, Cos, FLOAT)                 \
  X(tan, Tan, FLOAT)                 \
  X(asin, Asin, FLOAT)               \
  X(acos, Acos, FLOAT)               \
  X(atan, Atan, FLOAT)               \
  X(sinh, Sinh, FLOAT)               \
  X(cosh, Cosh, FLOAT)               \
  X(tanh, Tanh, FLOAT)               \
  X(sigmoid, Sigmoid, FLOAT)         \
  X(erf, Erf, FLOAT)                 \
  X(erfinv, Erfinv, FLOAT)           \
  X(lgamma, Lgamma, FLOAT)           \
  X(digamma, Digamma, FLOAT)         \
  X(_trigamma, Trigamma, FLOAT)      \
  X(relu, Relu, NUMERIC)             \
  X(floor, Floor, SAME)              \
  X(ceil, Ceil, SAME)                \
  X(round, Round, SAME)              \
  X(trunc, Trunc, SAME)              \
  X(isnan, IsNan, BOOL)              \
  X(isinf, IsInf, BOOL)              \
  X(isfinite, IsFinite, BOOL)        \
  X(logical_not, LogicalNot, BOOL)   \
  X(bitwise_not, BitwiseNot, INTEGRAL)

// Binary ops: X(name, Functor, kind). ARITH: computed in the promoted common dtype (two
// bools stay bool for add/mul/max/min, as in PyTorch). TRUEDIV: integers give the default
// float. COMPARE: bool result. _polygamma(n, x) is internal (torch.polygamma checks n first,
// in bindings/lua/torch_ops15.lua) and gets only a torch._polygamma binding. LOGICAL: bool result of truthiness. INTEGRAL: bool/int only.
#define TIDE_BINARY_OPS(X)                \
  X(add, Add, ARITH)                      \
  X(sub, Sub, ARITH)                      \
  X(mul, Mul, ARITH)                      \
  X(div, Div, TRUEDIV)                    \
  X(floor_divide, FloorDiv, ARITH)        \
  X(remainder, Remainder, ARITH)          \
  X(fmod, Fmod, ARITH)                    \
  X(pow, Pow, ARITH)                      \
  X(maximum, Maximum, ARITH)              \
  X(minimum, Minimum, ARITH)              \
  X(atan2, Atan2, TRUEDIV)                \
  X(copysign, Copysign, TRUEDIV)          \
  X(_polygamma, Polygamma, TRUEDIV)       \
  X(eq, Eq, COMPARE)                      \
  X(ne, Ne, COMPARE)                      \
  X(lt, Lt, COMPARE)                      \
  X(le, Le, COMPARE)                      \
  X(gt, Gt, COMPARE)                      \
  X(ge, Ge, COMPARE)                      \
  X(logical_and, LogicalAnd, LOGICAL)     \
  X(logical_or, LogicalOr, LOGICAL)       \
  X(logical_xor, LogicalXor, LOGICAL)     \
  X(bitwise_and, BitwiseAnd, INTEGRAL)    \
  X(bitwise_or, BitwiseOr, INTEGRAL)      \
  X(bitwise_xor, BitwiseXor, INTEGRAL)   \
  X(bitwise_left_shift, BitwiseLeftShift, INTEGRAL) \
  X(bitwise_right_shift, BitwiseRightShift, INTEGRAL)

enum class UnaryOp {
#define TIDE_ENUM_ENTRY(name, F, kind) F,
  TIDE_UNARY_OPS(TIDE_ENUM_ENTRY)
};
enum class BinaryOp { TIDE_BINARY_OPS(TIDE_ENUM_ENTRY) };
#undef TIDE_ENUM_ENTRY

const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);

namespace ops {

// out: when given (in-place or out=), the result is written there (cast to its dtype if the
// cast is allowed: float results may not go into integer tensors) and returned.
Tensor unary(UnaryOp op, const Tensor& x, const Tensor* out = nullptr);
Tensor binary(BinaryOp op, const TensorOrScalar& a, const TensorOrScalar& b,
              const Tensor* out = nullptr);

// Result dtype of a binary op on these operands (PyTorch promotion with scalar and zero-dim
// priorities), before the op's kind is applied.
DType result_type(const TensorOrScalar& a, const TensorOrScalar& b);

// clamp(x, min, max): either bound may be absent; bounds may be numbers or tensors.
Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& lo,
             const std::optional<TensorOrScalar>& hi, const Tensor* out = nullptr);
// where(cond, a, b): cond is a bool tensor (other dtypes are tested against zero).
Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b,
             const Tensor* out = nullptr);
// lerp(a, b, w) = a + w * (b - a)
Tensor lerp(const Tensor& a, const Tensor& b, const TensorOrScalar& w, const Tensor* out = nullptr);

// Copies src into dst with broadcasting and dtype conversion; bumps dst's version.
Tensor& copy_(Tensor& dst, const Tensor& src);
// Fills dst with a value (converted to dst's dtype); bumps dst's version.
Tensor& fill_(Tensor& dst, const Scalar& value);
// A copy of x with another dtype (always a new tensor).
Tensor cast(const Tensor& x, DType dtype);
// Throws "<op>: result type A can't be cast to the desired output type B" when a value of
// dtype `from` may not be written into a tensor of dtype `to` (float into int, int into bool).
void check_can_cast(const char* op, DType from, DType to);

}  // namespace ops
}  // namespace tide
