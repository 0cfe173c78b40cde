// Complex tensors: casts, the views of their parts, complex(re, im) and polar, and the
// complex kernels of the pointwise ops (see complex.hpp).
//
// Products and quotients must round as NumPy's C does (built without fused multiply-add):
// a contracted re*re - im*im gives inf where NumPy's overflow gives NaN, so contraction
// (which -march=x86-64-v3 would allow) is off for this file.
#pragma GCC optimize("fp-contract=off")
#include "complex.hpp"

#include <atomic>
#include <cmath>
#include <complex>
#include <cstdio>
#include <lapacke.h>
#include <limits>
#include <numbers>
#include <string_view>

#include "../cpu/loops.hpp"
#include "../overlap.hpp"
#include "reduce.hpp"
#include "shape.hpp"

namespace tide::ops {

namespace {

// A value of one dtype as another, where either is complex (see copy_complex).
template <typename Out, typename In>
inline Out convert(In v) {
  if constexpr (std::is_same_v<Out, bool>) return v != In(0);
  else if constexpr (is_complex_v<Out> && is_complex_v<In>) return Out(v);
  else if constexpr (is_complex_v<Out>) return Out(typename Out::value_type(v), typename Out::value_type(0));
  else return compute_t<Out>(v.real());
}

// The one warning of a complex to real cast, once per process as NumPy and PyTorch show it.
void warn_discarded_imaginary() {
  static std::atomic<bool> warned{false};
  if (!warned.exchange(true))
    std::fprintf(stderr, "ComplexWarning: Casting complex values to real discards the imaginary part\n");
}

// A view of x's storage with other sizes, strides (in elements of dt), offset and dtype, that
// keeps x's base as Tensor::as_strided does (a view of a view shares the first one's base).
Tensor view_of(const Tensor& x, const Dims& sizes, const Dims& strides, int64_t offset, DType dt) {
  Tensor v = Tensor::make_view(x.storage(), sizes, strides, offset, dt);
  v.impl()->base = x.impl()->base ? x.impl()->base : x.impl_ptr();
  return v;
}

// The part `which` (0 real, 1 imaginary) of complex x as a real view.
Tensor part_view(const Tensor& x, int which) {
  Dims strides = x.strides();
  for (int d = 0; d < x.dim(); ++d) strides[d] *= 2;
  return view_of(x, x.sizes(), strides, x.offset() * 2 + which, real_of_complex(x.dtype()));
}

// The result of a complex op handed to out= (cast when its dtype differs) or returned.
Tensor deliver(const char* op, const Tensor& result, const Tensor* out) {
  if (!out) return result;
  TIDE_CHECK(out->sizes() == result.sizes(), op, ": out= tensor of shape ", out->sizes().str(),
             " does not match the result shape ", result.sizes().str());
  check_can_cast(op, result.dtype(), out->dtype());
  check_no_internal_overlap(op, *out);
  Tensor o = *out;
  copy_(o, result);
  return o;
}

// Two float tensors of one dtype (the operands of complex and polar), broadcast together.
DType check_parts(const char* op, const Tensor& a, const Tensor& b) {
  check_defined(a, op);
  check_defined(b, op);
  check_same_device(op, a, b);
  TIDE_CHECK(a.dtype() == b.dtype(), op, ": expected both inputs to have one dtype, got ", dtype_name(a.dtype()),
             " and ", dtype_name(b.dtype()));
  TIDE_CHECK(a.dtype() == DType::Float32 || a.dtype() == DType::Float64, op,
             ": expected float32 or float64 inputs, got ", dtype_name(a.dtype()));
  return complex_of(a.dtype());
}

}  // namespace

void copy_complex(const TensorIter& it, DType dst, DType src) {
  if (is_complex(src) && !is_complex(dst) && dst != DType::Bool) warn_discarded_imaginary();
  auto run = [&](auto out_tag, auto in_tag) {
    using Out = decltype(out_tag);
    using In = decltype(in_tag);
    cpu_kernel<Out, In>(it, [](compute_t<In> v) { return convert<Out>(v); });
  };
  if (is_complex(dst)) {
    TIDE_DISPATCH_COMPLEX(dst, "copy_", [&] {
      using Out = scalar_t;
      TIDE_DISPATCH_ALL_AND_COMPLEX(src, "copy_", [&] { run(Out{}, scalar_t{}); });
    });
  } else {
    TIDE_DISPATCH_COMPLEX(src, "copy_", [&] {
      using In = scalar_t;
      TIDE_DISPATCH_ALL(dst, "copy_", [&] { run(scalar_t{}, In{}); });
    });
  }
}

Tensor real(const Tensor& x) {
  check_defined(x, "real");
  return is_complex(x.dtype()) ? part_view(x, 0) : x;
}

Tensor imag(const Tensor& x) {
  check_defined(x, "imag");
  TIDE_CHECK(is_complex(x.dtype()), "imag: expected a complex tensor, got ", dtype_name(x.dtype()),
             " (imag is not implemented for real tensors)");
  return part_view(x, 1);
}

Tensor view_as_real(const Tensor& x) {
  check_defined(x, "view_as_real");
  TIDE_CHECK(is_complex(x.dtype()), "view_as_real: expected a complex tensor, got ", dtype_name(x.dtype()));
  Dims sizes = x.sizes(), strides = x.strides();
  for (int d = 0; d < x.dim(); ++d) strides[d] *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return view_of(x, sizes, strides, x.offset() * 2, real_of_complex(x.dtype()));
}

Tensor view_as_complex(const Tensor& x) {
  check_defined(x, "view_as_complex");
  TIDE_CHECK(x.dtype() == DType::Float32 || x.dtype() == DType::Float64,
             "view_as_complex: expected a float32 or float64 tensor, got ", dtype_name(x.dtype()));
  TIDE_CHECK(x.dim() >= 1 && x.size(x.dim() - 1) == 2, "view_as_complex: the last dim must have size 2, got shape ",
             x.sizes().str());
  TIDE_CHECK(x.stride(x.dim() - 1) == 1, "view_as_complex: the last dim must have stride 1, got strides ",
             x.strides().str());
  Dims sizes = x.sizes(), strides = x.strides();
  sizes.pop_back();
  strides.pop_back();
  for (int d = 0; d < int(strides.size()); ++d)
    TIDE_CHECK(strides[d] % 2 == 0, "view_as_complex: every stride but the last must be even, got strides ",
               x.strides().str());
  TIDE_CHECK(x.offset() % 2 == 0, "view_as_complex: the storage offset must be even, got ", x.offset());
  for (int64_t& s : strides) s /= 2;
  return view_of(x, sizes, strides, x.offset() / 2, complex_of(x.dtype()));
}

Tensor complex(const Tensor& re, const Tensor& im, const Tensor* out) {
  DType dt = check_parts("complex", re, im);
  Tensor o;
  TensorIter it = TensorIter::build("complex", o, dt, {&re, &im});
  TIDE_DISPATCH_COMPLEX(dt, "complex", [&] {
    using R = typename scalar_t::value_type;
    cpu_kernel<scalar_t, R, R>(it, [](R a, R b) { return scalar_t(a, b); });
  });
  return deliver("complex", o, out);
}

Tensor polar(const Tensor& abs, const Tensor& angle, const Tensor* out) {
  DType dt = check_parts("polar", abs, angle);
  Tensor o;
  TensorIter it = TensorIter::build("polar", o, dt, {&abs, &angle});
  TIDE_DISPATCH_COMPLEX(dt, "polar", [&] {
    using R = typename scalar_t::value_type;
    cpu_kernel<scalar_t, R, R>(it, [](R r, R t) { return scalar_t(r * std::cos(t), r * std::sin(t)); });
  });
  return deliver("polar", o, out);
}

namespace {

// What a pointwise complex op gives: the input's dtype, its real dtype, or bool.
enum class Res { Same, Real, Bool };

// f applied to every element of complex x (f is generic over std::complex<float/double>).
template <Res R, typename F>
Tensor map_complex(const char* op, const Tensor& x, const Tensor* out, F f) {
  const DType in = x.dtype();
  const DType rd = R == Res::Same ? in : R == Res::Real ? real_of_complex(in) : DType::Bool;
  Tensor o;
  TensorIter it = TensorIter::build(op, o, rd, {&x});
  TIDE_DISPATCH_COMPLEX(in, op, [&] {
    using C = scalar_t;
    using O = std::conditional_t<R == Res::Same, C, std::conditional_t<R == Res::Real, typename C::value_type, bool>>;
    cpu_kernel<O, C>(it, [f](C v) { return O(f(v)); });
  });
  return deliver(op, o, out);
}

// The product and quotient as NumPy's loops and PyTorch's c10::complex compute them (no
// C99 Annex G recovery of infinities, Smith's division), so that the bits agree.
template <typename C>
inline C cmul(C a, C b) {
  return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real());
}
template <typename C>
inline C cdiv(C a, C b) {
  using R = typename C::value_type;
  const R ar = a.real(), ai = a.imag(), br = b.real(), bi = b.imag();
  const R abr = std::fabs(br), abi = std::fabs(bi);
  if (abr >= abi) {
    if (abr == 0 && abi == 0) return C(ar / abr, ai / abr);
    const R rat = bi / br, scl = R(1) / (br + bi * rat);
    return C((ar + ai * rat) * scl, (ai - ar * rat) * scl);
  }
  const R rat = br / bi, scl = R(1) / (bi + br * rat);
  return C((ar * rat + ai) * scl, (ai * rat - ar) * scl);
}

// NumPy's power (npy_cpow, 1.24): a^0 is 1, 0^b is 0 for a real positive b and NaN
// otherwise, integer exponents below 100 in magnitude by repeated products (then the
// reciprocal for negative ones), any other exponent by libm's cpow.
template <typename C>
inline C cpow(C a, C b) {
  using R = typename C::value_type;
  const R br = b.real(), bi = b.imag();
  if (br == 0 && bi == 0) return C(1);
  if (a.real() == 0 && a.imag() == 0)
    return br > 0 && bi == 0 ? C(0) : C(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  if (bi == 0 && br > -100 && br < 100 && br == std::trunc(br)) {
    const int n = int(br);
    if (n == 1) return a;
    if (n == 2) return cmul(a, a);
    if (n == 3) return cmul(a, cmul(a, a));
    C acc(1), p = a;
    for (int k = n < 0 ? -n : n;;) {
      if (k & 1) acc = cmul(acc, p);
      if ((k >>= 1) == 0) break;
      p = cmul(p, p);
    }
    return n < 0 ? cdiv(C(1), acc) : acc;
  }
  return std::pow(a, b);
}

// NumPy's sign of a complex number: the sign of the real part, of the imaginary part where
// the real part is 0, as a complex number with a zero imaginary part; NaN where NumPy's
// ordered comparisons fail (a NaN part beside a nonzero real part).
template <typename C>
inline C numpy_sign(C v) {
  using R = typename C::value_type;
  const R re = v.real(), im = v.imag();
  if ((re > 0 && !std::isnan(im)) || (re == 0 && im > 0)) return C(1);
  if ((re < 0 && !std::isnan(im)) || (re == 0 && im < 0)) return C(-1);
  if (re == 0 && im == 0) return C(0);
  return C(std::numeric_limits<R>::quiet_NaN(), 0);
}

// f over two complex operands, either of which may be a scalar (sa / sb).
template <typename Out, typename C, typename F>
void run_binary(const TensorIter& it, const Scalar* sa, const Scalar* sb, F f) {
  if (sa) {
    const C va = sa->to<C>();
    cpu_kernel<Out, C>(it, [=](C y) { return f(va, y); });
  } else if (sb) {
    const C vb = sb->to<C>();
    cpu_kernel<Out, C>(it, [=](C x) { return f(x, vb); });
  } else {
    cpu_kernel<Out, C, C>(it, f);
  }
}

}  // namespace

// abs gives the real dtype (|x| by hypot, as NumPy and PyTorch); the functions are libm's
// complex ones (cexp, clog, csqrt, csin, ctan, casin, ...), which NumPy calls too, in the
// element's precision; log2, log10, exp2, expm1 and log1p are NumPy's formulas over them.
Tensor complex_unary(UnaryOp op, const Tensor& x, const Tensor* out) {
  const char* name = unary_op_name(op);
  auto same = [&](auto f) { return map_complex<Res::Same>(name, x, out, f); };
  // A complex number times a real constant of its precision, part by part.
  auto scaled = [](auto v, double k) {
    using R = typename decltype(v)::value_type;
    return decltype(v)(v.real() * R(k), v.imag() * R(k));
  };
  switch (op) {
    case UnaryOp::Abs: return map_complex<Res::Real>(name, x, out, [](auto v) { return std::abs(v); });
    case UnaryOp::Neg: return same([](auto v) { return -v; });
    case UnaryOp::Square: return same([](auto v) { return cmul(v, v); });
    case UnaryOp::Reciprocal: return same([](auto v) { return cdiv(decltype(v)(1), v); });
    case UnaryOp::Exp: return same([](auto v) { return std::exp(v); });
    case UnaryOp::Exp2: return same([scaled](auto v) { return std::exp(scaled(v, std::numbers::ln2)); });
    case UnaryOp::Expm1:
      return same([](auto v) {
        using R = typename decltype(v)::value_type;
        const R a = std::sin(v.imag() / 2);
        return decltype(v)(std::expm1(v.real()) * std::cos(v.imag()) - 2 * a * a, std::exp(v.real()) * std::sin(v.imag()));
      });
    case UnaryOp::Log: return same([](auto v) { return std::log(v); });
    case UnaryOp::Log2: return same([scaled](auto v) { return scaled(std::log(v), std::numbers::log2e); });
    case UnaryOp::Log10: return same([scaled](auto v) { return scaled(std::log(v), std::numbers::log10e); });
    case UnaryOp::Log1p:
      return same([](auto v) {
        using R = typename decltype(v)::value_type;
        return decltype(v)(std::log(std::hypot(v.real() + R(1), v.imag())), std::atan2(v.imag(), v.real() + R(1)));
      });
    case UnaryOp::Sqrt: return same([](auto v) { return std::sqrt(v); });
    case UnaryOp::Sin: return same([](auto v) { return std::sin(v); });
    case UnaryOp::Cos: return same([](auto v) { return std::cos(v); });
    case UnaryOp::Tan: return same([](auto v) { return std::tan(v); });
    case UnaryOp::Asin: return same([](auto v) { return std::asin(v); });
    case UnaryOp::Acos: return same([](auto v) { return std::acos(v); });
    case UnaryOp::Atan: return same([](auto v) { return std::atan(v); });
    case UnaryOp::Sinh: return same([](auto v) { return std::sinh(v); });
    case UnaryOp::Cosh: return same([](auto v) { return std::cosh(v); });
    case UnaryOp::Tanh: return same([](auto v) { return std::tanh(v); });
    case UnaryOp::Sign:
      TIDE_CHECK(numpy_semantics(), "sign: ", dtype_name(x.dtype()),
                 " is not supported (as in PyTorch; torch.sgn gives x/|x|, np.sign NumPy's sign)");
      return same([](auto v) { return numpy_sign(v); });
    case UnaryOp::IsNan:
      return map_complex<Res::Bool>(name, x, out, [](auto v) { return std::isnan(v.real()) || std::isnan(v.imag()); });
    case UnaryOp::IsInf:
      return map_complex<Res::Bool>(name, x, out, [](auto v) { return std::isinf(v.real()) || std::isinf(v.imag()); });
    case UnaryOp::IsFinite:
      return map_complex<Res::Bool>(name, x, out,
                                    [](auto v) { return std::isfinite(v.real()) && std::isfinite(v.imag()); });
    default: TIDE_FAIL(name, ": ", dtype_name(x.dtype()), " is not supported");
  }
}

Tensor complex_binary(BinaryOp op, const TensorOrScalar& a, const TensorOrScalar& b, DType common, const Tensor* out) {
  const char* name = binary_op_name(op);
  const bool compare = op == BinaryOp::Eq || op == BinaryOp::Ne;
  TIDE_CHECK(compare || op == BinaryOp::Add || op == BinaryOp::Sub || op == BinaryOp::Mul || op == BinaryOp::Div ||
                 op == BinaryOp::Pow,
             name, ": ", dtype_name(common), " is not supported");
  Tensor ta, tb;
  if (a.is_tensor()) ta = a.tensor.to(common);
  if (b.is_tensor()) tb = b.tensor.to(common);
  const DType rd = compare ? DType::Bool : common;
  Tensor o;
  TensorIter it = ta.defined() && tb.defined() ? TensorIter::build(name, o, rd, {&ta, &tb})
                  : ta.defined()               ? TensorIter::build(name, o, rd, {&ta})
                                               : TensorIter::build(name, o, rd, {&tb});
  const Scalar* sa = a.is_tensor() ? nullptr : &a.scalar;
  const Scalar* sb = b.is_tensor() ? nullptr : &b.scalar;
  TIDE_DISPATCH_COMPLEX(common, name, [&] {
    using C = scalar_t;
    switch (op) {
      case BinaryOp::Add: run_binary<C, C>(it, sa, sb, [](C x, C y) { return x + y; }); break;
      case BinaryOp::Sub: run_binary<C, C>(it, sa, sb, [](C x, C y) { return x - y; }); break;
      case BinaryOp::Mul: run_binary<C, C>(it, sa, sb, [](C x, C y) { return cmul(x, y); }); break;
      case BinaryOp::Div: run_binary<C, C>(it, sa, sb, [](C x, C y) { return cdiv(x, y); }); break;
      case BinaryOp::Pow: run_binary<C, C>(it, sa, sb, [](C x, C y) { return cpow(x, y); }); break;
      case BinaryOp::Eq: run_binary<bool, C>(it, sa, sb, [](C x, C y) { return x == y; }); break;
      default: run_binary<bool, C>(it, sa, sb, [](C x, C y) { return x != y; }); break;
    }
  });
  return deliver(name, o, out);
}

Tensor sgn(const Tensor& x, const Tensor* out) {
  check_defined(x, "sgn");
  TIDE_CHECK(is_complex(x.dtype()), "sgn: expected a complex tensor, got ", dtype_name(x.dtype()));
  return map_complex<Res::Same>("sgn", x, out, [](auto v) {
    const auto r = std::abs(v);
    return r == 0 ? decltype(v)(0) : decltype(v)(v.real() / r, v.imag() / r);
  });
}

Tensor angle(const Tensor& x, const Tensor* out) {
  check_defined(x, "angle");
  if (is_complex(x.dtype()))
    return map_complex<Res::Real>("angle", x, out, [](auto v) { return std::atan2(v.imag(), v.real()); });
  // A real x: pi for negative values, 0 otherwise, NaN kept (PyTorch; NumPy's arctan2(0, x)
  // differs only at -0.0, pi there).
  const DType dt = is_floating(x.dtype()) ? x.dtype() : default_float_dtype();
  Tensor xf = x.to(dt), o;
  TensorIter it = TensorIter::build("angle", o, dt, {&xf});
  const bool numpy = numpy_semantics();
  TIDE_DISPATCH_FLOAT(dt, "angle", [&] {
    using R = compute_t<scalar_t>;
    cpu_kernel<scalar_t, scalar_t>(it, [numpy](R v) {
      if (v != v) return v;
      return numpy ? R(std::atan2(R(0), v)) : v < 0 ? R(M_PI) : R(0);
    });
  });
  return deliver("angle", o, out);
}

Tensor conj(const Tensor& x, const Tensor* out) {
  check_defined(x, "conj");
  if (!is_complex(x.dtype())) return deliver("conj", x, out);
  return map_complex<Res::Same>("conj", x, out, [](auto v) { return std::conj(v); });
}

// sum and mean add the real and the imaginary parts as the real reductions do (the same
// order and accuracy); prod multiplies in order along the reduced elements.
Tensor complex_reduce(const char* op, const Tensor& x0, const DimList& dims, bool keepdim,
                      std::optional<DType> dtype) {
  check_defined(x0, op);
  TIDE_CHECK(!dtype || is_complex(*dtype), op, ": cannot reduce ", dtype_name(x0.dtype()), " into the real dtype ",
             dtype_name(*dtype));
  const Tensor x = dtype ? x0.to(*dtype) : x0;
  const bool is_mean = op[0] == 'm';
  if (op[0] != 'p') {
    auto part = [&](const Tensor& t) { return is_mean ? mean(t, dims, keepdim) : sum(t, dims, keepdim); };
    return complex(part(real(x)), part(imag(x)));
  }
  // prod: the reduced dims moved last and flattened, one running product per output.
  const int nd = x.dim();
  std::vector<bool> reduced(size_t(std::max(nd, 1)), dims.empty());
  for (int d : dims) reduced[size_t(d)] = true;
  std::vector<int64_t> order;
  Dims kept, keep_shape;
  for (int d = 0; d < nd; ++d)
    if (!reduced[size_t(d)]) order.push_back(d), kept.push_back(x.size(d));
  for (int d = 0; d < nd; ++d) {
    if (reduced[size_t(d)]) order.push_back(d);
    keep_shape.push_back(reduced[size_t(d)] ? 1 : x.size(d));
  }
  const int64_t outer = shape_numel(kept), inner = outer ? x.numel() / std::max<int64_t>(outer, 1) : 0;
  Tensor xc = nd ? permute(x, order).contiguous() : x.contiguous();
  Tensor o = Tensor::empty(kept, x.dtype());
  TIDE_DISPATCH_COMPLEX(x.dtype(), op, [&] {
    const scalar_t* p = xc.data<scalar_t>();
    scalar_t* r = o.data<scalar_t>();
    for (int64_t i = 0; i < outer; ++i) {
      scalar_t acc(1);
      for (int64_t j = 0; j < inner; ++j) acc = cmul(acc, p[i * inner + j]);
      r[i] = acc;
    }
  });
  return keepdim ? reshape(o, keep_shape) : o;
}

Tensor complex_scan(const char* op, const Tensor& x0, int d, std::optional<DType> dtype) {
  check_defined(x0, op);
  TIDE_CHECK(!dtype || is_complex(*dtype), op, ": cannot accumulate ", dtype_name(x0.dtype()), " into the real dtype ",
             dtype_name(*dtype));
  const Tensor x = dtype ? x0.to(*dtype) : x0;
  if (x.dim() == 0) return x.clone();
  const bool is_prod = std::string_view(op) == "cumprod";
  Tensor rows = movedim(x, {d}, {-1}).contiguous();
  Tensor o = Tensor::empty(rows.sizes(), x.dtype());
  const int64_t n = x.size(d);
  TIDE_DISPATCH_COMPLEX(x.dtype(), op, [&] {
    const scalar_t* p = rows.data<scalar_t>();
    scalar_t* r = o.data<scalar_t>();
    for (int64_t i = 0, m = rows.numel(); n > 0 && i < m; i += n) {
      scalar_t acc = r[i] = p[i];
      for (int64_t j = i + 1; j < i + n; ++j) r[j] = acc = is_prod ? cmul(acc, p[j]) : acc + p[j];
    }
  });
  return movedim(o, {-1}, {d}).contiguous();
}

namespace {

lapack_int geev(lapack_int n, float* a, float* wr, float* wi, char jobvr, float* vr) {
  return LAPACKE_sgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}
lapack_int geev(lapack_int n, double* a, double* wr, double* wi, char jobvr, double* vr) {
  return LAPACKE_dgeev(LAPACK_ROW_MAJOR, 'N', jobvr, n, a, n, wr, wi, nullptr, 1, vr, n);
}

// geev on each of the batch row-major n x n matrices of a (overwritten): the eigenvalues into
// w and the unpacked eigenvectors into v. Returns whether every eigenvalue is real.
template <typename R>
bool geev_batch(const char* op, Tensor& a, Tensor& w, Tensor& v, int64_t n, int64_t batch, bool compute_v) {
  using C = std::complex<R>;
  R* ap = a.data<R>();
  for (int64_t i = 0, m = a.numel(); i < m; ++i)
    TIDE_CHECK(std::isfinite(ap[i]), op, ": the input contains NaN or infinity (the algorithm cannot converge)");
  std::vector<R> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)), vr(static_cast<size_t>(n * n));
  C* wp = w.data<C>();
  C* vp = v.data<C>();
  bool all_real = true;
  for (int64_t b = 0; b < batch && n > 0; ++b) {
    lapack_int info = geev(lapack_int(n), ap + b * n * n, wr.data(), wi.data(), compute_v ? 'V' : 'N', vr.data());
    TIDE_CHECK(info == 0, op, ": the eigenvalue algorithm did not converge",
               batch > 1 ? " for a matrix of the batch" : "");
    for (int64_t j = 0; j < n; ++j) {
      wp[b * n + j] = C(wr[size_t(j)], wi[size_t(j)]);
      if (wi[size_t(j)] != 0) all_real = false;
    }
    if (!compute_v) continue;
    C* vb = vp + b * n * n;
    for (int64_t j = 0; j < n; ++j) {
      const bool pair = wi[size_t(j)] != 0 && j + 1 < n;
      for (int64_t i = 0; i < n; ++i) {
        const R re = vr[size_t(i * n + j)];
        const R im = pair ? vr[size_t(i * n + j + 1)] : R(0);
        vb[i * n + j] = C(re, im);
        if (pair) vb[i * n + j + 1] = C(re, -im);
      }
      if (pair) ++j;
    }
  }
  return all_real;
}

}  // namespace

// LAPACK's geev per matrix (row-major copies). A complex pair of eigenvalues j, j+1 has the
// eigenvectors vr[:, j] +- i vr[:, j+1], as LAPACK documents and NumPy / PyTorch unpack them.
std::vector<Tensor> eig(const Tensor& A0, bool compute_v, bool always_complex, const char* op) {
  check_defined(A0, op);
  TIDE_CHECK(A0.dim() >= 2 && A0.size(A0.dim() - 1) == A0.size(A0.dim() - 2), op,
             ": expected a square matrix or a batch of them, got shape ", A0.sizes().str());
  TIDE_CHECK(!is_complex(A0.dtype()), op, ": ", dtype_name(A0.dtype()), " is not supported");
  TIDE_CHECK(is_floating(A0.dtype()) || numpy_semantics(), op, ": expected a floating-point tensor, got ",
             dtype_name(A0.dtype()));
  const DType rdt = A0.dtype() == DType::Float64 || !is_floating(A0.dtype()) ? DType::Float64 : DType::Float32;
  const int64_t n = A0.size(A0.dim() - 1);
  TIDE_CHECK(n <= INT32_MAX, op, ": matrices of ", n, " rows are too large for LAPACK");
  Dims lead = A0.sizes();
  lead.pop_back();
  lead.pop_back();
  const int64_t batch = shape_numel(lead);
  Tensor a = A0.to_device({}).to(rdt, true).contiguous();
  Dims wshape = lead, vshape = lead;
  wshape.push_back(n);
  vshape.push_back(n);
  vshape.push_back(n);
  const DType cdt = complex_of(rdt);
  Tensor w = Tensor::empty(wshape, cdt, Device{}, op), v = Tensor::empty(vshape, cdt, Device{}, op);
  const bool all_real = rdt == DType::Float32 ? geev_batch<float>(op, a, w, v, n, batch, compute_v)
                                             : geev_batch<double>(op, a, w, v, n, batch, compute_v);
  if (!always_complex && all_real) {
    w = real(w).contiguous();
    if (compute_v) v = real(v).contiguous();
  }
  if (!compute_v) return {w};
  return {w, v};
}

}  // namespace tide::ops
