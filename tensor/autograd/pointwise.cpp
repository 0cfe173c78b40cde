// Differentiable pointwise ops: each forward is the engine's op; each derivative sits in the
// switch beside it (g: the output's gradient, x/a/b: inputs, y: the output).
#include <cmath>

#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

// out= writes outside autograd, so as in PyTorch it is refused while recording when an input
// or the out tensor itself requires grad (writing into a parameter would bypass its history).
void check_out(const char* op, const Tensor* out, std::initializer_list<const Tensor*> inputs) {
  if (!out) return;
  TIDE_CHECK(!needs_recording(inputs), op,
             ": out= is not differentiable, but an input requires grad (call it under torch.no_grad() or drop out=)");
  TIDE_CHECK(!needs_recording({out}), op,
             ": out= is not differentiable, but the out tensor requires grad (call it under torch.no_grad() or drop out=)");
}

Tensor sum_to(const Tensor& g, const Dims& sizes, const char* op) {
  if (g.sizes() == sizes) return g;
  if (g.dim() < sizes.size() && g.numel() == shape_numel(sizes)) return reshape(g, sizes);  // {} to {1}
  int lead = g.dim() - sizes.size();
  TIDE_CHECK(lead >= 0, op, ": gradient of shape ", g.sizes().str(), " cannot be reduced to shape ", sizes.str());
  DimList dims;
  for (int i = 0; i < lead; ++i) dims.push_back(i);
  for (int i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == g.size(lead + i)) continue;
    TIDE_CHECK(sizes[i] == 1, op, ": gradient of shape ", g.sizes().str(), " cannot be reduced to shape ", sizes.str());
    dims.push_back(lead + i);
  }
  Tensor s = dims.empty() ? g : sum(g, dims, true);
  return lead > 0 ? reshape(s, sizes) : s;
}

namespace {

// Which saved values a unary derivative reads.
bool reads_input(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Expm1: case UnaryOp::Sqrt: case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal: case UnaryOp::Tanh: case UnaryOp::Sigmoid: case UnaryOp::Relu:
    case UnaryOp::Neg: case UnaryOp::Sign: case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round:
    case UnaryOp::Trunc: case UnaryOp::Erfinv:
      return false;
    default:
      return true;
  }
}
bool reads_output(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp: case UnaryOp::Exp2: case UnaryOp::Expm1: case UnaryOp::Sqrt: case UnaryOp::Rsqrt:
    case UnaryOp::Reciprocal: case UnaryOp::Tanh: case UnaryOp::Sigmoid: case UnaryOp::Relu: case UnaryOp::Tan:
    case UnaryOp::Erfinv:
      return true;
    default:
      return false;
  }
}
// Ops with a floating result that autograd differentiates (the rest give bool or integers).
bool differentiable(UnaryOp op) {
  switch (op) {
    case UnaryOp::IsNan: case UnaryOp::IsInf: case UnaryOp::IsFinite: case UnaryOp::LogicalNot:
    case UnaryOp::BitwiseNot:
      return false;
    default:
      return true;
  }
}

Tensor unary_grad(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y) {
  auto u = [](UnaryOp o, const Tensor& t) { return unary(o, t); };
  switch (op) {
    case UnaryOp::Abs:
      if (is_complex(x.dtype())) {  // g z/|z| (0 at 0, PyTorch's sgn)
        Tensor a = u(UnaryOp::Abs, x);
        return g * (x / where(ops::binary(BinaryOp::Eq, a, 0.0), 1.0, a));
      }
      return g * u(UnaryOp::Sign, x);
    case UnaryOp::Neg: return -g;
    case UnaryOp::Square: return g * x * 2.0;
    case UnaryOp::Exp: return g * y;
    case UnaryOp::Exp2: return g * y * std::log(2.0);
    case UnaryOp::Log: return g / x;
    case UnaryOp::Log2: return g / (x * std::log(2.0));
    case UnaryOp::Log10: return g / (x * std::log(10.0));
    case UnaryOp::Log1p: return g / (x + 1.0);
    case UnaryOp::Expm1: return g * (y + 1.0);
    case UnaryOp::Sqrt: return g / (y * 2.0);
    case UnaryOp::Rsqrt: return g * y * y * y * -0.5;
    case UnaryOp::Reciprocal: return -g * y * y;
    case UnaryOp::Sin: return g * u(UnaryOp::Cos, x);
    case UnaryOp::Cos: return -g * u(UnaryOp::Sin, x);
    case UnaryOp::Tan: return g * (y * y + 1.0);
    case UnaryOp::Asin: return g * u(UnaryOp::Rsqrt, 1.0 - x * x);
    case UnaryOp::Acos: return -g * u(UnaryOp::Rsqrt, 1.0 - x * x);
    case UnaryOp::Atan: return g / (x * x + 1.0);
    case UnaryOp::Sinh: return g * u(UnaryOp::Cosh, x);
    case UnaryOp::Cosh: return g * u(UnaryOp::Sinh, x);
    case UnaryOp::Tanh: return g * (1.0 - y * y);
    case UnaryOp::Sigmoid: return g * y * (1.0 - y);
    case UnaryOp::Erf: return g * u(UnaryOp::Exp, -(x * x)) * (2.0 / std::sqrt(M_PI));
    case UnaryOp::Erfinv: return g * u(UnaryOp::Exp, y * y) * (std::sqrt(M_PI) / 2.0);
    case UnaryOp::Lgamma: return g * u(UnaryOp::Digamma, x);
    case UnaryOp::Digamma: return g * u(UnaryOp::Trigamma, x);
    case UnaryOp::Trigamma: return g * binary(BinaryOp::Polygamma, 2.0, x);
    // g where the output is positive, else 0 (PyTorch's threshold_backward: a non-finite g
    // gives 0 there too): two ops, not a mask cast to g's dtype and a product.
    case UnaryOp::Relu: return where(ops::binary(BinaryOp::Gt, y, 0.0), g, 0.0);
    // Piecewise constant: the gradient is zero (as PyTorch).
    case UnaryOp::Sign: case UnaryOp::Floor: case UnaryOp::Ceil: case UnaryOp::Round: case UnaryOp::Trunc:
      return ops::zeros(g.sizes(), g.dtype(), g.device());
    default:
      TIDE_FAIL(unary_op_name(op), ": has no gradient");
  }
}

// v's complex conjugate (v itself when real): the other factor in a product's gradient.
TensorOrScalar conjugate(const TensorOrScalar& v) {
  if (v.is_tensor()) return is_complex(v.tensor.dtype()) ? TensorOrScalar(ag::conj(v.tensor)) : v;
  return v.scalar.is_complex() ? TensorOrScalar(Scalar::complex(v.scalar.f, -v.scalar.im)) : v;
}

// Gradients of a binary op for the operands that need one (the engine reduces broadcast dims).
Grads binary_grad(BinaryOp op, const Tensor& g, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor& y,
                  const Node& n) {
  bool ga = n.needs_grad(0), gb = n.needs_grad(1);
  // An operand as a floating tensor: a number as a 0-dim tensor of g's dtype, so one formula
  // serves both; an integer tensor converted to g's dtype, so the formula computes in the
  // gradient's precision (int8 a * a would wrap in atan2's; int exponent - 1.0 is float32).
  auto as_tensor = [&](const TensorOrScalar& v) {
    if (!v.is_tensor()) return ops::full({}, v.scalar, g.dtype(), g.device());
    return is_floating(v.tensor.dtype()) ? v.tensor : ops::cast(v.tensor, g.dtype());
  };
  switch (op) {
    case BinaryOp::Add: return {ga ? g : Tensor(), gb ? g : Tensor()};
    case BinaryOp::Sub: return {ga ? g : Tensor(), gb ? -g : Tensor()};
    case BinaryOp::Mul:
      return {ga ? binary(BinaryOp::Mul, g, conjugate(b)) : Tensor(), gb ? binary(BinaryOp::Mul, g, conjugate(a)) : Tensor()};
    case BinaryOp::Div: {
      Tensor bb = as_tensor(conjugate(b));
      return {ga ? g / bb : Tensor(), gb ? -g * as_tensor(conjugate(a)) / (bb * bb) : Tensor()};
    }
    case BinaryOp::Pow: {
      Tensor base = as_tensor(a);
      Tensor da, db;
      if (ga && !b.is_tensor() && !b.scalar.is_complex() && b.scalar.to_double() != 0) {
        // A number exponent s other than 0 (x:pow(2)): g s a^(s-1), with s and s - 1 numbers,
        // so that the power takes the forward's fast paths as PyTorch's pow_backward does:
        // three ops instead of seven.
        Tensor p = binary(BinaryOp::Pow, base, Scalar(b.scalar.to_double() - 1.0));
        da = binary(BinaryOp::Mul, binary(BinaryOp::Mul, g, b.scalar), p);
      } else if (ga) {
        // d/da a^b = b a^(b-1); 0 where b == 0 (also at a == 0), as PyTorch.
        Tensor ex = as_tensor(b);
        Tensor d = g * ex * binary(BinaryOp::Pow, base, ex - 1.0);
        da = where(ops::binary(BinaryOp::Eq, ex, 0.0), 0.0, d);
      }
      if (gb) {
        // d/db a^b = a^b log a; 0 where a == 0 and b >= 0.
        Tensor ex = as_tensor(b);
        Tensor d = g * y * unary(UnaryOp::Log, base);
        Tensor zero = ops::binary(BinaryOp::LogicalAnd, ops::binary(BinaryOp::Eq, base, 0.0),
                                  ops::binary(BinaryOp::Ge, ex, 0.0));
        db = where(zero, 0.0, d);
      }
      return {da, db};
    }
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      // The larger (smaller) operand gets the gradient; ties split it evenly.
      Tensor aa = as_tensor(a), bb = as_tensor(b);
      BinaryOp wins = op == BinaryOp::Maximum ? BinaryOp::Gt : BinaryOp::Lt;
      Tensor share = as_mask(ops::binary(wins, aa, bb), g.dtype()) +
                     as_mask(ops::binary(BinaryOp::Eq, aa, bb), g.dtype()) * 0.5;
      return {ga ? g * share : Tensor(), gb ? g * (1.0 - share) : Tensor()};
    }
    case BinaryOp::Atan2: {
      Tensor aa = as_tensor(a), bb = as_tensor(b);
      Tensor r2 = aa * aa + bb * bb;
      return {ga ? g * bb / r2 : Tensor(), gb ? -g * aa / r2 : Tensor()};
    }
    case BinaryOp::Copysign: {
      // y = ±a: d/da is sign(a) times b's sign (0 where a is 0, as in PyTorch); b only gives the sign.
      Tensor ratio = ops::unary(UnaryOp::Sign, as_tensor(a)) * ops::binary(BinaryOp::Copysign, 1.0, as_tensor(b));
      return {ga ? g * ratio : Tensor(), gb ? ops::zeros(g.sizes(), g.dtype(), g.device()) : Tensor()};
    }
    case BinaryOp::Remainder:
    case BinaryOp::Fmod: {
      // a - q b with q piecewise constant: d/da = 1, d/db = -q.
      Tensor q = op == BinaryOp::Remainder ? ops::binary(BinaryOp::FloorDiv, as_tensor(a), as_tensor(b))
                                           : ops::unary(UnaryOp::Trunc, ops::binary(BinaryOp::Div, as_tensor(a), as_tensor(b)));
      return {ga ? g : Tensor(), gb ? -g * q : Tensor()};
    }
    case BinaryOp::FloorDiv:
      return {ga ? ops::zeros(g.sizes(), g.dtype(), g.device()) : Tensor(), gb ? ops::zeros(g.sizes(), g.dtype(), g.device()) : Tensor()};
    case BinaryOp::Polygamma:
      // d/dx polygamma(n, x) = polygamma(n + 1, x); the integer order n has none (as PyTorch).
      TIDE_CHECK(!ga, "polygamma: the order n is not differentiable");
      return {Tensor(), gb ? g * binary(BinaryOp::Polygamma, as_tensor(a) + 1.0, b) : Tensor()};
    default:
      TIDE_FAIL(binary_op_name(op), ": has no gradient");
  }
}

bool differentiable(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::Pow:
    case BinaryOp::Maximum: case BinaryOp::Minimum: case BinaryOp::Atan2: case BinaryOp::Copysign: case BinaryOp::Remainder:
    case BinaryOp::Fmod: case BinaryOp::FloorDiv: case BinaryOp::Polygamma:
      return true;
    default:
      return false;
  }
}

// A number operand stays a number; a tensor operand is saved by version when the
// formula needs it (so that, say, x * 2 does not keep x and x:mul_(2) stays legal).
struct SavedOperand {
  SavedTensor t;
  Scalar s;
  bool is_tensor;
  SavedOperand(const TensorOrScalar& v, bool keep) : s(v.scalar), is_tensor(v.is_tensor()) {
    if (is_tensor && keep) t = SavedTensor::input(v.tensor);
  }
  TensorOrScalar unpack(const Node& n) const { return is_tensor ? TensorOrScalar(t.unpack(n)) : TensorOrScalar(s); }
};

// Which operands a binary derivative reads, given which operands need a gradient.
void operands_read(BinaryOp op, bool grad_a, bool grad_b, bool& read_a, bool& read_b) {
  switch (op) {
    case BinaryOp::Add: case BinaryOp::Sub: case BinaryOp::FloorDiv:
      read_a = read_b = false;
      return;
    case BinaryOp::Mul:
      read_a = grad_b, read_b = grad_a;
      return;
    case BinaryOp::Div:
      read_a = grad_b, read_b = true;
      return;
    default:
      read_a = read_b = true;
  }
}

}  // namespace

Tensor unary(UnaryOp op, const Tensor& x, const Tensor* out) {
  check_out(unary_op_name(op), out, {&x});
  Tensor y = ops::unary(op, x, out);
  if (out || !differentiable(op) || !needs_recording({&x})) return y;
  SavedTensor sx = reads_input(op) ? SavedTensor::input(x) : SavedTensor();
  SavedTensor sy = reads_output(op) ? SavedTensor::output(y) : SavedTensor();
  record(unary_op_name(op), y, {&x}, [op, sx, sy](const Tensor& g, const Node& n) -> Grads {
    return {unary_grad(op, g, sx.unpack(n), sy.unpack(n))};
  });
  return y;
}

Tensor& unary_(UnaryOp op, Tensor& x) {
  std::string name = std::string(unary_op_name(op)) + "_";
  return inplace(name.c_str(), x, {}, [&] { ops::unary(op, x, &x); },
                 [&](const Tensor& s) { return unary(op, s); });
}

Tensor binary(BinaryOp op, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor* out) {
  const Tensor *pa = tensor_ptr(a), *pb = tensor_ptr(b);
  check_out(binary_op_name(op), out, {pa, pb});
  Tensor y = ops::binary(op, a, b, out);
  if (out || !differentiable(op) || !needs_recording({pa, pb})) return y;
  bool need_y = op == BinaryOp::Pow, read_a, read_b;
  operands_read(op, needs_recording({pa}), needs_recording({pb}), read_a, read_b);
  SavedOperand sa(a, read_a), sb(b, read_b);
  SavedTensor sy = need_y ? SavedTensor::output(y) : SavedTensor();
  record(binary_op_name(op), y, {pa, pb}, [op, sa, sb, sy](const Tensor& g, const Node& n) -> Grads {
    return binary_grad(op, g, sa.unpack(n), sb.unpack(n), sy.unpack(n), n);
  });
  return y;
}

Tensor& binary_(BinaryOp op, Tensor& x, const TensorOrScalar& b) {
  std::string name = std::string(binary_op_name(op)) + "_";
  return inplace(name.c_str(), x, {tensor_ptr(b)}, [&] { ops::binary(op, x, b, &x); },
                 [&](const Tensor& s) { return binary(op, s, b); });
}

Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& lo, const std::optional<TensorOrScalar>& hi,
             const Tensor* out) {
  const Tensor* plo = lo ? tensor_ptr(*lo) : nullptr;
  const Tensor* phi = hi ? tensor_ptr(*hi) : nullptr;
  check_out("clamp", out, {&x, plo, phi});
  Tensor y = ops::clamp(x, lo, hi, out);
  if (out || !needs_recording({&x, plo, phi})) return y;
  SavedTensor sx = SavedTensor::input(x);
  std::optional<SavedOperand> slo, shi;
  if (lo) slo.emplace(*lo, true);
  if (hi) shi.emplace(*hi, true);
  record("clamp", y, {&x, plo, phi}, [sx, slo, shi](const Tensor& g, const Node& n) -> Grads {
    Tensor xv = sx.unpack(n);
    // x passes where it lies within the bounds; a tensor bound gets the gradient where it won.
    // Crossed bounds (lo > hi) give hi everywhere, as min(max(x, lo), hi) does.
    Tensor below, above, crossed;
    if (slo) below = ops::binary(BinaryOp::Lt, xv, slo->unpack(n));
    if (shi) above = ops::binary(BinaryOp::Gt, xv, shi->unpack(n));
    if (slo && shi && (n.needs_grad(1) || n.needs_grad(2)))
      crossed = ops::binary(BinaryOp::Gt, slo->unpack(n), shi->unpack(n));
    Tensor inside = g;
    if (below.defined()) inside = where(below, 0.0, inside);
    if (above.defined()) inside = where(above, 0.0, inside);
    Grads r{inside, Tensor(), Tensor()};
    if (n.needs_grad(1))
      r[1] = where(crossed.defined() ? ops::binary(BinaryOp::LogicalAnd, below, ops::unary(UnaryOp::LogicalNot, crossed))
                                     : below,
                   g, 0.0);
    if (n.needs_grad(2))
      r[2] = where(crossed.defined() ? ops::binary(BinaryOp::LogicalOr, above, crossed) : above, g, 0.0);
    return r;
  });
  return y;
}

Tensor& clamp_(Tensor& x, const std::optional<TensorOrScalar>& lo, const std::optional<TensorOrScalar>& hi) {
  return inplace("clamp_", x, {lo ? tensor_ptr(*lo) : nullptr, hi ? tensor_ptr(*hi) : nullptr},
                 [&] { ops::clamp(x, lo, hi, &x); }, [&](const Tensor& s) { return clamp(s, lo, hi); });
}

Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor* out) {
  const Tensor *pa = tensor_ptr(a), *pb = tensor_ptr(b);
  check_out("where", out, {pa, pb});
  Tensor y = ops::where(cond, a, b, out);
  if (out || !needs_recording({pa, pb})) return y;
  SavedTensor sc = SavedTensor::input(cond);
  record("where", y, {pa, pb}, [sc](const Tensor& g, const Node& n) -> Grads {
    Tensor c = sc.unpack(n);
    return {n.needs_grad(0) ? where(c, g, 0.0) : Tensor(), n.needs_grad(1) ? where(c, 0.0, g) : Tensor()};
  });
  return y;
}

Tensor lerp(const Tensor& a, const Tensor& b, const TensorOrScalar& w, const Tensor* out) {
  const Tensor* pw = tensor_ptr(w);
  check_out("lerp", out, {&a, &b, pw});
  Tensor y = ops::lerp(a, b, w, out);
  if (out || !needs_recording({&a, &b, pw})) return y;
  SavedTensor sa = SavedTensor::input(a), sb = SavedTensor::input(b);
  SavedOperand sw(w, true);
  record("lerp", y, {&a, &b, pw}, [sa, sb, sw](const Tensor& g, const Node& n) -> Grads {
    TensorOrScalar wv = sw.unpack(n);
    Grads r(3);
    if (n.needs_grad(0)) r[0] = g - binary(BinaryOp::Mul, g, wv);
    if (n.needs_grad(1)) r[1] = binary(BinaryOp::Mul, g, wv);
    if (n.needs_grad(2)) r[2] = g * (sb.unpack(n) - sa.unpack(n));
    return r;
  });
  return y;
}

Tensor& lerp_(Tensor& a, const Tensor& b, const TensorOrScalar& w) {
  return inplace("lerp_", a, {&b, tensor_ptr(w)}, [&] { ops::lerp(a, b, w, &a); },
                 [&](const Tensor& s) { return lerp(s, b, w); });
}

Tensor round(const Tensor& x, int64_t decimals, const Tensor* out) {
  if (decimals == 0 || is_bool(x.dtype())) return unary(UnaryOp::Round, x, out);
  if (is_floating(x.dtype())) {
    // NumPy's and PyTorch's formula: scale by a power of ten, round half to even, unscale.
    const double p = std::pow(10.0, std::fabs(double(decimals)));  // -INT64_MIN would overflow
    if (decimals > 0) return binary(BinaryOp::Div, unary(UnaryOp::Round, x * p), p, out);
    return binary(BinaryOp::Mul, unary(UnaryOp::Round, x / p), p, out);
  }
  // Integers: unchanged for decimals > 0; otherwise to the nearest multiple of f = 10^-decimals,
  // ties to the even multiple, in exact int64 arithmetic (NumPy's result), then back to x's dtype.
  // (Round of an integer tensor is the identity: it returns x's values, honouring out.)
  if (decimals > 0) return unary(UnaryOp::Round, x, out);
  if (decimals < -18) return binary(BinaryOp::Mul, x, Scalar(int64_t(0)), out);
  int64_t f = 1;
  for (int64_t i = 0; i < -decimals; ++i) f *= 10;
  const Scalar F(f), two(int64_t(2)), zero(int64_t(0));
  const Tensor x64 = cast(x, DType::Int64);
  Tensor q = binary(BinaryOp::FloorDiv, x64, F);
  Tensor twice_rest = binary(BinaryOp::Mul, binary(BinaryOp::Sub, x64, binary(BinaryOp::Mul, q, F)), two);
  Tensor q_odd = binary(BinaryOp::Ne, binary(BinaryOp::Remainder, q, two), zero);
  Tensor up = binary(BinaryOp::LogicalOr, binary(BinaryOp::Gt, twice_rest, F),
                     binary(BinaryOp::LogicalAnd, binary(BinaryOp::Eq, twice_rest, F), q_odd));
  Tensor r = cast(binary(BinaryOp::Mul, binary(BinaryOp::Add, q, cast(up, DType::Int64)), F), x.dtype());
  return unary(UnaryOp::Round, r, out);
}

Tensor cast(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  // A cast to complex embeds x (its gradient is the real part of g: the engine converts it);
  // complex to real keeps the real part (its gradient is g + 0i).
  Tensor y = ops::cast(x, dtype);
  if (!tracked_dtype(dtype) || !needs_recording({&x})) return y;
  record("to", y, {&x}, [](const Tensor& g, const Node&) -> Grads { return {g}; });
  return y;
}

Tensor to_device(const Tensor& x, Device device) {
  Tensor y = x.to_device(device);
  if (y.same(x) || !needs_recording({&x})) return y;
  const Device from = x.device();
  record("to", y, {&x}, [from](const Tensor& g, const Node&) -> Grads { return {to_device(g, from)}; });
  return y;
}

Tensor clone(const Tensor& x) {
  Tensor y = x.clone();
  if (needs_recording({&x})) record("clone", y, {&x}, [](const Tensor& g, const Node&) -> Grads { return {g}; });
  return y;
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor& copy_(Tensor& dst, const Tensor& src, const char* op) {
  return inplace(op, dst, {&src}, [&] { ops::copy_(dst, src); }, [&](const Tensor&) {
    Tensor s = src.sizes() == dst.sizes() ? src : expand(src, dst.sizes());
    return cast(clone(s), dst.dtype());
  });
}

Tensor& fill_(Tensor& dst, const Scalar& value, const char* op) {
  // One value everywhere: an expanded dst is fine here (as in PyTorch), outside recording.
  if (!needs_recording({&dst})) {
    ops::fill_(dst, value);
    return dst;
  }
  // The result no longer depends on dst's old values: the gradient of that history is zero.
  return inplace(op, dst, {}, [&] { ops::fill_(dst, value); },
                 [&](const Tensor& s) { return binary(BinaryOp::Add, binary(BinaryOp::Mul, s, 0.0), value); });
}

Tensor& zero_(Tensor& dst) { return fill_(dst, Scalar(0.0), "zero_"); }

}  // namespace tide::ag
