// Pointwise ops: dtype resolution (PyTorch promotion), output handling (in-place, out=),
// and dispatch of the scalar functors in cpu/functors.hpp over a TensorIter: run here by
// the CPU loops, or handed to the device backend, which instantiates the same functors.
#include "elementwise.hpp"

#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "../backend.hpp"
#include "../cpu/functors.hpp"
#include "../cpu/loops.hpp"
#include "../iterator.hpp"
#include "../overlap.hpp"
#include "../scalar_fit.hpp"
#include "complex.hpp"

namespace tide {

namespace {

enum Kind { SAME, NUMERIC, FLOAT, BOOL, INTEGRAL, ARITH, TRUEDIV, COMPARE, LOGICAL };

struct UnaryInfo {
  const char* name;
  Kind kind;
};
constexpr UnaryInfo kUnary[] = {
#define TIDE_INFO(name, F, kind) {#name, kind},
    TIDE_UNARY_OPS(TIDE_INFO)};
constexpr UnaryInfo kBinary[] = {TIDE_BINARY_OPS(TIDE_INFO)};
#undef TIDE_INFO

// A zero divisor in integer division would trap; it is an error as in PyTorch.
// Integer division by zero: an error in PyTorch ("ZeroDivisionError" there); with NumPy
// semantics the kernels' 0 and, once per op per process, NumPy's RuntimeWarning on stderr.
void check_int_divisor(const char* op, const TensorOrScalar& b, DType compute) {
  if (is_floating(compute)) return;
  static std::atomic<uint8_t> warned{0};  // bit per op: floor_divide, remainder, fmod
  const uint8_t bit = uint8_t(1) << (op[0] == 'f' && op[1] == 'l' ? 0 : op[0] == 'r' ? 1 : 2);
  const bool numpy = numpy_semantics();
  if (numpy && (warned.load(std::memory_order_relaxed) & bit)) return;
  bool zero = false;
  if (!b.is_tensor()) {
    zero = b.scalar.to_int() == 0;
  } else {
    Tensor eqz = ops::binary(BinaryOp::Eq, b.tensor, Scalar(int64_t(0))).to_device(Device{});
    const bool* p = eqz.data<bool>();
    for (int64_t i = 0, n = eqz.numel(); i < n && !zero; ++i) zero = p[i];
  }
  if (!zero) return;
  TIDE_CHECK(numpy, op, ": integer division by zero");
  if (!(warned.fetch_or(bit) & bit))
    std::fprintf(stderr, "RuntimeWarning: divide by zero encountered in %s\n", op);
}

// Writes `result` into *out (casting when the dtypes differ) or returns it.
Tensor finish(const char* op, Tensor result, const Tensor* out) {
  if (!out || out->same(result)) return result;
  Tensor o = *out;
  ops::check_can_cast(op, result.dtype(), o.dtype());
  check_no_internal_overlap(op, o);
  ops::copy_(o, result);
  return o;
}

// Prepares the output for a kernel: the given out tensor if its dtype is the result dtype
// (TensorIter then checks how it overlaps the inputs), else a fresh one (finish() then casts
// into out).
void check_out_shape(const char* op, const Tensor& out, const Dims& shape) {
  TIDE_CHECK(out.sizes() == shape, op, ": out= tensor of shape ", out.sizes().str(),
             " does not match the result shape ", shape.str());
}

Tensor out_target(const char* op, const Tensor* out, DType result_dtype, const Dims& shape) {
  if (!out) return Tensor();
  check_out_shape(op, *out, shape);
  if (out->dtype() == result_dtype) {
    out->storage()->bump_version();
    return *out;
  }
  return Tensor();
}

}  // namespace

const char* unary_op_name(UnaryOp op) { return kUnary[int(op)].name; }
const char* binary_op_name(BinaryOp op) { return kBinary[int(op)].name; }

namespace ops {

void check_can_cast(const char* op, DType from, DType to) {
  bool ok = true;
  if (is_floating(from) && !is_floating(to) && !is_complex(to)) ok = false;
  if (is_complex(from) && !is_complex(to)) ok = false;
  if (!is_bool(from) && is_bool(to)) ok = false;
  TIDE_CHECK(ok, op, ": result type ", dtype_name(from), " can't be cast to the desired output type ",
             dtype_name(to));
}

DType result_type(const TensorOrScalar& a, const TensorOrScalar& b) {
  auto category = [](DType t) { return is_bool(t) ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1; };
  if (a.is_tensor() && b.is_tensor()) {
    DType ta = a.tensor.dtype(), tb = b.tensor.dtype();
    bool za = a.tensor.dim() == 0, zb = b.tensor.dim() == 0;
    if (za == zb) return promote_types(ta, tb);
    // A zero-dim tensor only raises the category of a dimensioned one. NumPy promotes the two
    // dtypes then, and else casts by the zero-dim array's value as for a scalar (a device
    // value is read back: one small copy, so every device gives NumPy's dtype).
    const Tensor& zero_t = za ? a.tensor : b.tensor;
    DType dimmed = za ? tb : ta, zero = zero_t.dtype();
    if (numpy_semantics()) [[unlikely]] {
      if (category(zero) > category(dimmed)) return promote_types(dimmed, zero);
      // A zero-dim dtype the dimensioned one holds gives it whatever the value: not read
      // (a read stops torch.compile's capture).
      if (promote_types(dimmed, zero) == dimmed) return dimmed;
      return promote_with_scalar(dimmed, zero_t.item());
    }
    return category(zero) > category(dimmed) ? zero : dimmed;
  }
  // A number next to a 0-d array (only scalars) takes its default dtype under NumPy
  // semantics, as NumPy 1.24 gives a Python int int64 and a Python float float64 there
  // (np.array(2, int8) + 2 is int64, a float32 0-d array * 0.5 float64).
  const TensorOrScalar& t = a.is_tensor() ? a : b;
  const Scalar& s = a.is_tensor() ? b.scalar : a.scalar;
  if (!t.is_tensor()) return promote_types(a.scalar.natural_dtype(), b.scalar.natural_dtype());
  if (numpy_semantics() && t.tensor.dim() == 0 && t.tensor.dtype() != DType::BFloat16) [[unlikely]]
    return promote_types(t.tensor.dtype(), s.natural_dtype());
  return promote_with_scalar(t.tensor.dtype(), s);
}

// The float dtype a bool or integer operand of a floating-point op computes in: the default
// float, or under NumPy semantics the smallest float holding every value of the type, as
// NumPy's loops resolve (np.sqrt of int8 is float16, of int16 float32, of int32 float64).
static DType float_for(DType t) {
  if (!numpy_semantics()) return default_float_dtype();
  switch (t) {
    case DType::Bool: case DType::Int8: case DType::UInt8: return DType::Float16;
    case DType::Int16: case DType::UInt16: return DType::Float32;
    default: return DType::Float64;
  }
}

// Under NumPy semantics, the float loop an operand of a float-only binary op (atan2,
// copysign, true_divide, ...) resolves to next to the other operand, by the rule result_type
// applies: an array as float_for its dtype; a Lua number, or a 0-d array next to a
// dimensioned one, by its value (np.min_scalar_type: 2 and -100 fit float16, 300 float32,
// 70000 float64) unless its category is above the other's (an integer next to a bool
// array: its own dtype, int64 for a number); a number next to a 0-d array (only scalars)
// takes its default dtype, as NumPy gives a Python int int64 there.
static DType operand_float(const TensorOrScalar& v, const TensorOrScalar& other) {
  auto category = [](DType t) { return is_bool(t) ? 0 : is_complex(t) ? 3 : is_floating(t) ? 2 : 1; };
  const bool other_dimmed = other.is_tensor() && other.tensor.dim() > 0;
  if (v.is_tensor() && (v.tensor.dim() > 0 || !other_dimmed)) return float_for(v.tensor.dtype());
  const DType own = v.is_tensor() ? v.tensor.dtype() : v.scalar.natural_dtype();
  if (!other_dimmed || category(own) > category(other.tensor.dtype())) return float_for(own);
  return promote_with_scalar(DType::Float16, v.is_tensor() ? v.tensor.item() : v.scalar);
}

Tensor unary(UnaryOp op, const Tensor& x, const Tensor* out) {
  const UnaryInfo& info = kUnary[int(op)];
  const char* name = info.name;
  check_defined(x, name);
  if (is_complex(x.dtype())) return ops::complex_unary(op, x, out);
  DType in = x.dtype();
  if (info.kind == FLOAT && !is_floating(in)) in = float_for(in);
  TIDE_CHECK(!(info.kind == NUMERIC && is_bool(in)), name, ": not supported for bool tensors");
  TIDE_CHECK(!(info.kind == INTEGRAL && is_floating(in)), name,
             ": expected a bool or integer tensor, got ", dtype_name(in));
  DType result = info.kind == BOOL ? DType::Bool : in;
  Tensor src = x.to(in);
  Tensor o = out_target(name, out, result, x.sizes());
  TensorIter it = TensorIter::build(name, o, result, {&src});
  backend_for(it.device()).unary(op, it, in);
  return finish(name, o, out);
}

// A zero-dim cpu tensor next to a device tensor acts as a number there (as in PyTorch):
// v itself, or its copy on the other's device kept in `moved`.
static const TensorOrScalar& on_device_of(const TensorOrScalar& v, const TensorOrScalar& other,
                                          std::optional<TensorOrScalar>& moved) {
  if (v.is_tensor() && other.is_tensor() && v.tensor.dim() == 0 && v.tensor.device().is_cpu() &&
      !other.tensor.device().is_cpu())
    return moved.emplace(v.tensor.to_device(other.tensor.device()));
  return v;
}

Tensor binary(BinaryOp op, const TensorOrScalar& a0, const TensorOrScalar& b0, const Tensor* out) {
  std::optional<TensorOrScalar> moved_a, moved_b;
  const TensorOrScalar& a = on_device_of(a0, b0, moved_a);
  const TensorOrScalar& b = on_device_of(b0, a0, moved_b);
  const UnaryInfo& info = kBinary[int(op)];
  const char* name = info.name;
  TIDE_ASSERT(a.is_tensor() || b.is_tensor());
  if (a.is_tensor()) check_defined(a.tensor, name);
  if (b.is_tensor()) check_defined(b.tensor, name);
  if (a.is_tensor() && b.is_tensor()) check_same_device(name, a.tensor, b.tensor);
  DType common = result_type(a, b);
  if (is_complex(common)) return ops::complex_binary(op, a, b, common, out);
  DType compute = common;
  switch (info.kind) {
    case TRUEDIV:
      // NumPy picks the smallest float both integer operands fit (operand_float), and
      // true_divide of integers is float64 whatever their size.
      if (!is_floating(compute)) {
        if (op == BinaryOp::Div || !numpy_semantics()) compute = default_float_dtype();
        else compute = promote_types(operand_float(a, b), operand_float(b, a));
      }
      break;
    case INTEGRAL:
      TIDE_CHECK(!is_floating(compute), name, ": expected bool or integer operands, got ",
                 dtype_name(compute));
      break;
    case ARITH:
      TIDE_CHECK(!(is_bool(compute) && (op == BinaryOp::Sub || op == BinaryOp::FloorDiv ||
                                         op == BinaryOp::Remainder || op == BinaryOp::Fmod ||
                                         op == BinaryOp::Pow)),
                 name, ": not supported for two bool operands");
      break;
    default:
      break;
  }
  if (op == BinaryOp::FloorDiv || op == BinaryOp::Remainder || op == BinaryOp::Fmod)
    check_int_divisor(name, b, compute);
  if (op == BinaryOp::Pow && !is_floating(compute) && !b.is_tensor())
    TIDE_CHECK(b.scalar.to_int() >= 0, name, ": integers to negative integer powers are not allowed (exponent ",
               b.scalar.to_int(), ")");
  DType result = (info.kind == COMPARE || info.kind == LOGICAL) ? DType::Bool : compute;
  // The tensor operands in the compute dtype: the operands themselves when they have it (a
  // handle copied per operand cost two atomic reference-count updates).
  Tensor converted_a, converted_b;
  const Tensor* ta = !a.is_tensor()                 ? nullptr
                     : a.tensor.dtype() == compute ? &a.tensor
                                                   : &(converted_a = a.tensor.to(compute));
  const Tensor* tb = !b.is_tensor()                 ? nullptr
                     : b.tensor.dtype() == compute ? &b.tensor
                                                   : &(converted_b = b.tensor.to(compute));
  // The result's shape matters here only for out= (TensorIter::build broadcasts anyway).
  Tensor o = out ? out_target(name, out, result,
                              ta && tb ? broadcast_shapes(name, ta->sizes(), tb->sizes())
                              : ta     ? ta->sizes()
                                       : tb->sizes())
                 : Tensor();
  TensorIter it = ta && tb ? TensorIter::build(name, o, result, {ta, tb})
                  : ta     ? TensorIter::build(name, o, result, {ta})
                           : TensorIter::build(name, o, result, {tb});
  const Scalar* sa = a.is_tensor() ? nullptr : &a.scalar;
  const Scalar* sb = b.is_tensor() ? nullptr : &b.scalar;
  backend_for(it.device()).binary(op, it, compute, sa, sb);
  return finish(name, std::move(o), out);
}

// clamp = minimum(maximum(x, lo), hi): with lo > hi every value becomes hi, as in PyTorch.
Tensor clamp(const Tensor& x, const std::optional<TensorOrScalar>& lo,
             const std::optional<TensorOrScalar>& hi, const Tensor* out) {
  TIDE_CHECK(lo || hi, "clamp: at least one of min and max must be given");
  check_defined(x, "clamp");
  // Each bound's result type already includes x; a bound that leaves x's dtype as it is adds
  // nothing (promoting x again would turn uint32 with a float scalar, float32, into float64).
  const DType rlo = lo ? result_type(x, *lo) : x.dtype(), rhi = hi ? result_type(x, *hi) : x.dtype();
  DType dt = rlo == x.dtype() ? rhi : rhi == x.dtype() ? rlo : promote_types(rlo, rhi);
  TIDE_CHECK(!is_bool(dt), "clamp: not supported for bool tensors");
  if (out) {
    check_can_cast("clamp", dt, out->dtype());
    check_no_internal_overlap("clamp", *out);  // before maximum / minimum would, under their names
  }
  bool scalars = (!lo || !lo->is_tensor()) && (!hi || !hi->is_tensor());
  if (!scalars) {
    // The shapes checked under clamp's name, before maximum / minimum would under theirs.
    Dims shape = x.sizes();
    for (const auto& b : {lo, hi})
      if (b && b->is_tensor()) shape = broadcast_shapes("clamp", shape, b->tensor.sizes());
    if (out) check_out_shape("clamp", *out, shape);
    Tensor r = x;
    if (lo) r = binary(BinaryOp::Maximum, r, *lo, hi ? nullptr : out);
    if (hi) r = binary(BinaryOp::Minimum, r, *hi, out);
    return r;
  }
  // One pass for numeric bounds.
  for (const auto* b : {&lo, &hi})
    if (*b) check_scalar_fits("clamp", (*b)->scalar, dt);
  Tensor src = x.to(dt);
  Tensor o = out_target("clamp", out, dt, x.sizes());
  TensorIter it = TensorIter::build("clamp", o, dt, {&src});
  backend_for(it.device()).clamp(it, dt, lo ? &lo->scalar : nullptr, hi ? &hi->scalar : nullptr);
  return finish("clamp", o, out);
}

Tensor where(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b, const Tensor* out) {
  check_defined(cond, "where");
  DType dt = result_type(a, b);
  Tensor c = cond.to(DType::Bool);
  auto as_tensor = [&](const TensorOrScalar& v) {
    if (v.is_tensor()) return v.tensor.to(dt);
    Tensor t = Tensor::empty({}, dt, cond.device());
    fill_(t, v.scalar);
    return t;
  };
  Tensor ta = as_tensor(a), tb = as_tensor(b);
  Dims shape = broadcast_shapes("where", broadcast_shapes("where", c.sizes(), ta.sizes()), tb.sizes());
  Tensor o = out_target("where", out, dt, shape);
  TensorIter it = TensorIter::build("where", o, dt, {&c, &ta, &tb});
  backend_for(it.device()).where(it, dt);
  return finish("where", o, out);
}

Tensor lerp(const Tensor& a, const Tensor& b, const TensorOrScalar& w, const Tensor* out) {
  check_defined(a, "lerp");
  TIDE_CHECK(is_floating(a.dtype()) && a.dtype() == b.dtype(), "lerp: expected two floating-point tensors of one dtype, got ",
             dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
  DType dt = a.dtype();
  if (out) check_no_internal_overlap("lerp", *out);  // the composite paths below write through add
  if (!w.is_tensor() && a.device().is_cpu()) {
    Tensor o = out_target("lerp", out, dt, broadcast_shapes("lerp", a.sizes(), b.sizes()));
    TensorIter it = TensorIter::build("lerp", o, dt, {&a, &b});
    TIDE_DISPATCH_FLOAT(dt, "lerp", [&] {
      using C = compute_t<scalar_t>;
      const C wt = C(w.scalar.to_double());
      cpu_kernel<scalar_t, scalar_t, scalar_t>(it, [wt](C x, C y) { return x + wt * (y - x); });
    });
    return finish("lerp", o, out);
  }
  if (!w.is_tensor()) {  // a device tensor: the CPU's float arithmetic from the pointwise ops
    const DType c = dt == DType::Float16 || dt == DType::BFloat16 ? DType::Float32 : dt;
    Tensor ac = a.to(c), bc = b.to(c);
    Tensor r = binary(BinaryOp::Add, ac, binary(BinaryOp::Mul, Scalar(w.scalar.to_double()), binary(BinaryOp::Sub, bc, ac)));
    return finish("lerp", r.to(dt), out);
  }
  // A tensor weight: a + w * (b - a) from the pointwise ops.
  Tensor diff = binary(BinaryOp::Sub, b, a);
  return binary(BinaryOp::Add, a, binary(BinaryOp::Mul, w.tensor.to(dt), diff), out);
}

// A copy between devices: src converted to dst's dtype on its own device, moved, then copied
// into dst's layout on dst's device.
static Tensor& copy_across_devices(Tensor& dst, const Tensor& src) {
  TIDE_CHECK(broadcast_shapes("copy_", dst.sizes(), src.sizes()) == dst.sizes(), "copy_: source of shape ",
             src.sizes().str(), " cannot be broadcast to the destination shape ", dst.sizes().str());
  Tensor moved = src.to(dst.dtype()).to_device(dst.device());
  return copy_(dst, moved);
}

Tensor& copy_(Tensor& dst, const Tensor& src) {
  check_defined(dst, "copy_");
  check_defined(src, "copy_");
  check_writable("copy_", dst);
  if (dst.numel() == 0) return dst;
  if (dst.device() != src.device()) return copy_across_devices(dst, src);
  TIDE_CHECK(broadcast_shapes("copy_", dst.sizes(), src.sizes()) == dst.sizes(), "copy_: source of shape ",
             src.sizes().str(), " cannot be broadcast to the destination shape ", dst.sizes().str());
  dst.storage()->bump_version();
  // A source overlapping dst (x[{2,n}] = x[{1,n-1}]) is read from a copy (TensorIter).
  TensorIter it = TensorIter::build("copy_", dst, dst.dtype(), {&src});
  backend_for(it.device()).copy(it, dst.dtype(), src.dtype());
  return dst;
}

// Writes value into every element of dst. An expanded (stride-0) dim is visited once: its
// elements share one address, so torch.ones(1):expand(2^59):zero_() writes one element
// (PyTorch allows fills into expanded views, as the value is the same everywhere).
Tensor& fill_(Tensor& dst, const Scalar& value) {
  check_defined(dst, "fill_");
  check_writable("fill_", dst);
  TIDE_CHECK(!value.is_complex() || is_complex(dst.dtype()), "fill_: cannot fill a ", dtype_name(dst.dtype()),
             " tensor with the complex value (", value.f, std::signbit(value.im) ? "" : "+", value.im,
             "j)");
  check_scalar_fits("fill_", value, dst.dtype());
  dst.storage()->bump_version();
  Tensor distinct = dst;
  Dims sizes = dst.sizes();
  bool shared = false;
  for (int d = 0; d < dst.dim(); ++d)
    if (dst.stride(d) == 0 && sizes[d] > 1) {
      sizes[d] = 1;
      shared = true;
    }
  if (shared) distinct = dst.as_strided(sizes, dst.strides(), dst.offset());
  TensorIter it = TensorIter::build("fill_", distinct, dst.dtype(), {});
  backend_for(it.device()).fill(it, dst.dtype(), value);
  return dst;
}

Tensor cast(const Tensor& x, DType dtype) {
  Tensor out = Tensor::empty(x.sizes(), dtype, x.device(), "to");
  copy_(out, x);
  return out;
}

}  // namespace ops
}  // namespace tide
