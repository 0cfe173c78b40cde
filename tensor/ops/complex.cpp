// Complex tensors: casts, the views of their parts, complex(re, im) and polar, and the
// complex kernels of the pointwise ops (see complex.hpp).
#include "complex.hpp"

#include <atomic>
#include <cmath>
#include <complex>
#include <cstdio>

#include "../cpu/loops.hpp"
#include "../overlap.hpp"

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

Tensor complex_unary(UnaryOp op, const Tensor& x, const Tensor*) {
  TIDE_FAIL(unary_op_name(op), ": ", dtype_name(x.dtype()), " is not supported");
}

Tensor complex_binary(BinaryOp op, const TensorOrScalar&, const TensorOrScalar&, DType common, const Tensor*) {
  TIDE_FAIL(binary_op_name(op), ": ", dtype_name(common), " is not supported");
}

}  // namespace tide::ops
