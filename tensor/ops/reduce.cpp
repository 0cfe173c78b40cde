// Reductions, scans and sorting: checks, dims and result dtypes here; the kernels are the
// reduce and scan entries of the tensor's backend (tensor/cpu/reduce.cpp on the CPU), or,
// for a backend without them, compositions of its contiguous-rows entries below.
#include "reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "../backend.hpp"
#include "../cpu/backend.hpp"
#include "../parallel.hpp"
#include "complex.hpp"
#include "creation.hpp"
#include "elementwise.hpp"
#include "shape.hpp"

namespace tide::ops {

namespace {

// 1-based spelling of a 0-based (or negative) dim, for messages.
int64_t user_dim(int64_t d) { return d >= 0 ? d + 1 : d; }

int norm_dim(const char* op, int64_t d, int ndim) {
  int n = std::max(ndim, 1);
  if (d >= -n && d < n) return int(d < 0 ? d + n : d);
  TIDE_FAIL(op, ": dim ", user_dim(d), " is out of range for a tensor of ", ndim, " dims (valid 1..", n,
            " or -", n, "..-1)");
}

// ---------------------------------------------------------------------------------------
// Which dims are reduced, and the shapes of the result.

ReduceSpec make_spec(const char* op, const Tensor& x, const DimList& dims, bool keepdim) {
  ReduceSpec s;
  s.keepdim = keepdim;
  const int nd = x.dim();
  for (int d = 0; d < nd; ++d) s.red[d] = dims.empty();
  bool seen[kMaxDims] = {};
  for (int d0 : dims) {
    int d = norm_dim(op, d0, nd);
    if (nd == 0) continue;
    TIDE_CHECK(!seen[d], op, ": dim ", d + 1, " appears more than once in the list of dims");
    seen[d] = true;
    s.red[d] = true;
  }
  Dims reduced;
  for (int d = 0; d < nd; ++d) {
    if (s.red[d]) {
      reduced.push_back(x.size(d));
      s.keep_shape.push_back(1);
      if (keepdim) s.out_shape.push_back(1);
    } else {
      s.keep_shape.push_back(x.size(d));
      s.out_shape.push_back(x.size(d));
    }
  }
  // Each factor of an empty x's numel may pass int64 on its own: a result that large is an
  // error naming the op; a count that large goes with an empty result and is never used.
  s.out_numel = shape_numel(s.keep_shape, op);
  bool zero = false, overflow = false;
  for (int64_t r : reduced) {
    zero |= r == 0;
    overflow |= __builtin_mul_overflow(s.count, r, &s.count);
  }
  if (zero) s.count = 0;
  else if (overflow) s.count = INT64_MAX;
  return s;
}

// The result view: outputs are allocated with keep_shape (contiguous); without keepdim the
// reduced dims are dropped, which keeps the same memory.
Tensor finish(const Tensor& out, const ReduceSpec& s) {
  if (s.keepdim) return out;
  return out.as_strided(s.out_shape, contiguous_strides(s.out_shape), out.offset());
}

// "op: cannot reduce over an empty dim ..." for ops without an identity (max, argmax, ...).
void check_nonempty(const char* op, const Tensor& x, const ReduceSpec& s) {
  if (s.count != 0) return;
  for (int d = 0; d < x.dim(); ++d)
    if (s.red[d] && x.size(d) == 0)
      TIDE_FAIL(op, ": cannot reduce over an empty dim of size 0 (dim ", d + 1, " of a tensor of shape ",
                x.sizes().str(), "); give a dim whose size is not 0");
  TIDE_FAIL(op, ": cannot reduce over an empty tensor (shape ", x.sizes().str(), ")");
}

Tensor as_dtype(const Tensor& t, DType d) { return t.dtype() == d ? t : t.to(d); }

// Integers sum in int64 (PyTorch), except uint64, which only uint64 holds (NumPy).
DType sum_dtype(DType x, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_floating(x) || x == DType::UInt64 ? x : DType::Int64;
}

// A floating-point input (for mean, var, norm, logsumexp).
void check_float(const char* op, const Tensor& x) {
  TIDE_CHECK(is_floating(x.dtype()), op, ": expected a floating-point tensor, got ", dtype_name(x.dtype()),
             " (convert it first, e.g. x:double())");
}

// ---------------------------------------------------------------------------------------
// Reductions on a backend without the strided entries: x's kept dims first and its reduced
// dims last, made contiguous, so that each output reduces one contiguous row (the backend's
// reduce_rows); mean, var, norm, logsumexp and all/any are composed from those.

// out (keep_shape, contiguous) = x's rows reduced by `kind`; idx gets the 1-based positions
// of the Arg kinds (out may then be undefined when only positions are wanted).
void reduce_rows(const DeviceBackend& be, ReduceKind kind, const Tensor& x, const ReduceSpec& s, const Tensor& out,
                 const Tensor* idx) {
  if (s.out_numel == 0) return;
  if (s.count == 0) {  // only sum and prod get here (the others check for emptiness)
    Tensor o = out;
    fill_(o, Scalar(int64_t(kind == ReduceKind::Prod ? 1 : 0)));
    return;
  }
  Dims sizes, strides;
  for (bool reduced : {false, true})
    for (int d = 0; d < x.dim(); ++d)
      if (s.red[d] == reduced) {
        sizes.push_back(x.size(d));
        strides.push_back(x.stride(d));
      }
  Tensor rows = Tensor::make_view(x.storage(), sizes, strides, x.offset(), x.dtype()).contiguous();
  be.reduce_rows(kind, rows.address(), rows.dtype(), out.defined() ? out.address() : nullptr,
                 out.defined() ? out.dtype() : rows.dtype(), idx ? static_cast<int64_t*>(idx->address()) : nullptr,
                 s.out_numel, s.count);
}

// The dims a spec reduces, as a dim list for the composed reductions.
DimList reduced_dims(const Tensor& x, const ReduceSpec& s) {
  DimList dims;
  for (int d = 0; d < x.dim(); ++d)
    if (s.red[d]) dims.push_back(d);
  return dims;
}

// The strided reduce entry's result (see backend.hpp) from the contiguous-rows entries.
Tensor reduce_composed(const DeviceBackend& be, Reduction kind, const Tensor& x, const ReduceSpec& s,
                       const ReduceArgs& a) {
  const DimList dims = reduced_dims(x, s);
  // bool has no max or min kernel on a device: as uint8, cast back by the op.
  auto bool_as_uint8 = [&] { return x.dtype() == DType::Bool ? x.to(DType::UInt8) : x; };
  // The float reductions compute float16 and bfloat16 in float32, rounded once by the op's
  // cast, as the CPU's engine does.
  auto halves_as_float = [&] {
    return x.dtype() == DType::Float16 || x.dtype() == DType::BFloat16 ? x.to(DType::Float32) : x;
  };
  switch (kind) {
    case Reduction::Sum:
    case Reduction::Prod: {
      Tensor out = Tensor::empty(s.keep_shape, sum_dtype(x.dtype(), std::nullopt), x.device());
      reduce_rows(be, kind == Reduction::Prod ? ReduceKind::Prod : ReduceKind::Sum, x, s, out, nullptr);
      return out;
    }
    case Reduction::Mean: {
      const Tensor xf = halves_as_float();
      Tensor total = Tensor::empty(s.keep_shape, xf.dtype(), x.device());
      reduce_rows(be, ReduceKind::Sum, xf, s, total, nullptr);
      return binary(BinaryOp::Div, total, Scalar(double(s.count)), &total);
    }
    case Reduction::Max:
    case Reduction::Min: {
      const Tensor xd = bool_as_uint8();
      Tensor out = Tensor::empty(s.keep_shape, xd.dtype(), x.device());
      reduce_rows(be, kind == Reduction::Max ? ReduceKind::Max : ReduceKind::Min, xd, s, out, nullptr);
      return out;
    }
    case Reduction::ArgMax:
    case Reduction::ArgMin: {
      const Tensor xd = bool_as_uint8();
      Tensor values;
      if (a.want_values) values = Tensor::empty(s.keep_shape, xd.dtype(), x.device());
      *a.indices = Tensor::empty(s.keep_shape, DType::Int64, x.device());
      reduce_rows(be, kind == Reduction::ArgMax ? ReduceKind::ArgMax : ReduceKind::ArgMin, xd, s, values, a.indices);
      return values;
    }
    case Reduction::Var:
    case Reduction::Std: {  // the mean, then the mean square deviation from it
      const Tensor xf = halves_as_float();
      Tensor dev = binary(BinaryOp::Sub, xf, mean(xf, dims, true));
      Tensor v = binary(BinaryOp::Div, sum(binary(BinaryOp::Mul, dev, dev), dims, true),
                        Scalar(std::max(0.0, double(s.count) - a.param)));
      return kind == Reduction::Std ? unary(UnaryOp::Sqrt, v) : v;
    }
    case Reduction::Norm: {
      const Tensor xf = halves_as_float();
      const double p = a.param;
      Tensor abs = unary(UnaryOp::Abs, xf);
      if (p == 2) return unary(UnaryOp::Sqrt, sum(binary(BinaryOp::Mul, xf, xf), dims, true));
      if (p == 1) return sum(abs, dims, true);
      if (std::isinf(p))
        return s.count == 0 ? full(s.keep_shape, Scalar(p > 0 ? 0.0 : INFINITY), xf.dtype(), x.device())
               : p > 0      ? amax(abs, dims, true)
                            : amin(abs, dims, true);
      return binary(BinaryOp::Pow, sum(binary(BinaryOp::Pow, abs, Scalar(p)), dims, true), Scalar(1.0 / p));
    }
    case Reduction::LogSumExp: {  // log(sum(exp(x - m))) + m with m the finite max (0 if none)
      const Tensor xf = halves_as_float();
      Tensor m = s.count > 0 ? amax(xf, dims, true) : zeros(s.keep_shape, xf.dtype(), x.device());
      m = where(unary(UnaryOp::IsInf, m), Scalar(0.0), m);
      Tensor e = unary(UnaryOp::Exp, binary(BinaryOp::Sub, xf, m));
      return binary(BinaryOp::Add, unary(UnaryOp::Log, sum(e, dims, true)), m);
    }
    case Reduction::All:
    case Reduction::Any: {  // counts of true values
      Tensor trues = sum(x, dims, true);
      return kind == Reduction::All ? binary(BinaryOp::Eq, trues, Scalar(s.count))
                                    : binary(BinaryOp::Ne, trues, Scalar(int64_t(0)));
    }
  }
  TIDE_ASSERT(false);
}

// A reduction on x's backend: its strided entry, or the composition from its rows entries.
Tensor reduce_on_backend(Reduction kind, const Tensor& x, const ReduceSpec& s, const ReduceArgs& a = {}) {
  const DeviceBackend& be = backend_for(x.device());
  return be.reduce ? be.reduce(kind, x, s, a) : reduce_composed(be, kind, x, s, a);
}

// sum / prod: the input is converted to `dtype` first when given.
Tensor sum_prod(const char* op, Reduction kind, const Tensor& x0, const DimList& dims, bool keepdim,
                std::optional<DType> dtype) {
  check_defined(x0, op);
  Tensor x = dtype ? x0.to(*dtype) : x0;
  ReduceSpec s = make_spec(op, x, dims, keepdim);
  return as_dtype(finish(reduce_on_backend(kind, x, s), s), sum_dtype(x.dtype(), dtype));
}

Tensor amax_impl(const char* op, Reduction kind, const Tensor& x, const DimList& dims, bool keepdim) {
  check_defined(x, op);
  ReduceSpec s = make_spec(op, x, dims, keepdim);
  check_nonempty(op, x, s);
  return as_dtype(finish(reduce_on_backend(kind, x, s), s), x.dtype());
}

// max(x, dim) (want_values) and argmax(x[, dim]); without a dim the position is in the
// flattened row-major order, so a contiguous copy is reduced.
ValuesIndices arg_impl(const char* op, Reduction kind, const Tensor& x0, std::optional<int> dim, bool keepdim,
                       bool want_values) {
  check_defined(x0, op);
  Tensor x = dim ? x0 : x0.contiguous();
  ReduceSpec s = make_spec(op, x, dim ? DimList{*dim} : DimList{}, keepdim);
  check_nonempty(op, x, s);
  ValuesIndices r;
  r.values = reduce_on_backend(kind, x, s, {.indices = &r.indices, .want_values = want_values});
  if (want_values) r.values = as_dtype(finish(r.values, s), x.dtype());
  r.indices = finish(r.indices, s);
  return r;
}

// A complex x: the variance of its real parts plus that of its imaginary parts (the mean
// squared modulus of the deviations, as NumPy and PyTorch), in the real dtype.
Tensor var_impl(const char* op, const Tensor& x, const DimList& dims, double correction, bool keepdim,
                bool take_sqrt) {
  check_defined(x, op);
  if (is_complex(x.dtype())) {
    Tensor v = binary(BinaryOp::Add, var_impl(op, real(x), dims, correction, keepdim, false),
                      var_impl(op, imag(x), dims, correction, keepdim, false));
    return take_sqrt ? unary(UnaryOp::Sqrt, v) : v;
  }
  check_float(op, x);
  ReduceSpec s = make_spec(op, x, dims, keepdim);
  Tensor r = reduce_on_backend(take_sqrt ? Reduction::Std : Reduction::Var, x, s, {.param = correction});
  return as_dtype(finish(r, s), x.dtype());
}

}  // namespace

// ---------------------------------------------------------------------------------------
// Public reductions.

// A complex input or dtype: complex.cpp.
static bool complex_reduction(const Tensor& x, std::optional<DType> dtype) {
  return (x.defined() && is_complex(x.dtype())) || (dtype && is_complex(*dtype));
}

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x, dtype)) return complex_reduce("sum", x, dims, keepdim, dtype);
  return sum_prod("sum", Reduction::Sum, x, dims, keepdim, dtype);
}

Tensor prod(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x, dtype)) return complex_reduce("prod", x, dims, keepdim, dtype);
  return sum_prod("prod", Reduction::Prod, x, dims, keepdim, dtype);
}

Tensor mean(const Tensor& x0, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  if (complex_reduction(x0, dtype)) return complex_reduce("mean", x0, dims, keepdim, dtype);
  check_defined(x0, "mean");
  if (dtype)
    TIDE_CHECK(is_floating(*dtype), "mean: dtype must be a floating-point type, got ", dtype_name(*dtype));
  Tensor x = dtype ? x0.to(*dtype) : x0;
  check_float("mean", x);
  ReduceSpec s = make_spec("mean", x, dims, keepdim);
  return as_dtype(finish(reduce_on_backend(Reduction::Mean, x, s), s), x.dtype());
}

Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) {
  return amax_impl("amax", Reduction::Max, x, dims, keepdim);
}
Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) {
  return amax_impl("amin", Reduction::Min, x, dims, keepdim);
}
Tensor max(const Tensor& x) { return amax_impl("max", Reduction::Max, x, {}, false); }
Tensor min(const Tensor& x) { return amax_impl("min", Reduction::Min, x, {}, false); }

ValuesIndices max(const Tensor& x, int dim, bool keepdim) {
  return arg_impl("max", Reduction::ArgMax, x, dim, keepdim, true);
}
ValuesIndices min(const Tensor& x, int dim, bool keepdim) {
  return arg_impl("min", Reduction::ArgMin, x, dim, keepdim, true);
}

Tensor argmax(const Tensor& x, std::optional<int> dim, bool keepdim) {
  return arg_impl("argmax", Reduction::ArgMax, x, dim, keepdim, false).indices;
}
Tensor argmin(const Tensor& x, std::optional<int> dim, bool keepdim) {
  return arg_impl("argmin", Reduction::ArgMin, x, dim, keepdim, false).indices;
}

Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return var_impl("var", x, dims, correction, keepdim, false);
}
Tensor std(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  return var_impl("std", x, dims, correction, keepdim, true);
}

Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  check_defined(x, "norm");
  check_float("norm", x);
  TIDE_CHECK(!std::isnan(p), "norm: p must be a number, got nan");
  if (p == 0) {  // the number of non-zero elements
    Tensor nz = binary(BinaryOp::Ne, x, Scalar(int64_t(0)));
    return as_dtype(sum(nz, dims, keepdim), x.dtype());
  }
  ReduceSpec s = make_spec("norm", x, dims, keepdim);
  return as_dtype(finish(reduce_on_backend(Reduction::Norm, x, s, {.param = p}), s), x.dtype());
}

namespace {
// all / any reduce bool tensors; other dtypes are compared with zero first (NaN is true).
Tensor all_any(const char* op, Reduction kind, const Tensor& x0, const DimList& dims, bool keepdim) {
  check_defined(x0, op);
  Tensor x = x0.dtype() == DType::Bool ? x0 : binary(BinaryOp::Ne, x0, Scalar(int64_t(0)));
  ReduceSpec s = make_spec(op, x, dims, keepdim);
  // uint8 inputs give uint8, as in PyTorch.
  return as_dtype(finish(reduce_on_backend(kind, x, s), s), x0.dtype() == DType::UInt8 ? DType::UInt8 : DType::Bool);
}
}  // namespace

Tensor all(const Tensor& x, const DimList& dims, bool keepdim) { return all_any("all", Reduction::All, x, dims, keepdim); }
Tensor any(const Tensor& x, const DimList& dims, bool keepdim) { return all_any("any", Reduction::Any, x, dims, keepdim); }

Tensor logsumexp(const Tensor& x0, const DimList& dims, bool keepdim) {
  check_defined(x0, "logsumexp");
  // Integers and bool are computed in the default float dtype, as PyTorch does.
  const Tensor x = is_floating(x0.dtype()) ? x0 : x0.to(default_float_dtype());
  ReduceSpec s = make_spec("logsumexp", x, dims, keepdim);
  return as_dtype(finish(reduce_on_backend(Reduction::LogSumExp, x, s), s), x.dtype());
}

// ---------------------------------------------------------------------------------------
// Scans.

namespace {

template <bool Prod>
Tensor scan(const char* op, const Tensor& x0, int dim, std::optional<DType> dtype) {
  check_defined(x0, op);
  int d = norm_dim(op, dim, x0.dim());
  if (is_complex(x0.dtype()) || (dtype && is_complex(*dtype))) return complex_scan(op, x0, d, dtype);
  DType od = sum_dtype(x0.dtype(), dtype);
  const ScanKind kind = Prod ? ScanKind::Prod : ScanKind::Sum;
  const DeviceBackend& be = backend_for(x0.device());
  if (be.scan) return be.scan(kind, x0, d, od);
  // Composed from the contiguous-rows entry: rows along the last dim, scanned, moved back.
  if (x0.dim() == 0) return cast(x0, od);
  Tensor rows = movedim(x0, {d}, {-1}).contiguous();
  Tensor out = Tensor::empty(rows.sizes(), od, x0.device());
  const int64_t n = x0.size(d);
  if (out.numel() > 0) be.scan_rows(kind, rows.address(), rows.dtype(), out.address(), od, out.numel() / n, n);
  return movedim(out, {-1}, {d}).contiguous();
}

}  // namespace

Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype) { return scan<false>("cumsum", x, dim, dtype); }
Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype) { return scan<true>("cumprod", x, dim, dtype); }

Tensor cumprod_backward(const Tensor& x, const Tensor& g, int dim) {
  if (!x.device().is_cpu())  // no device kernel: computed on host copies (docs/cuda.md)
    return cumprod_backward(x.to_device({}), g.to_device({}), dim).to_device(x.device());
  int d = wrap_dim("cumprod", dim, x.dim());
  // Rows of length n along dim, contiguous, in float64.
  Tensor xr = cast(movedim(x, {d}, {-1}), DType::Float64).contiguous();
  Tensor gr = cast(movedim(g, {d}, {-1}), DType::Float64).contiguous();
  int64_t n = x.size(d), rows = n ? x.numel() / n : 0;
  Tensor out = Tensor::empty(xr.sizes(), DType::Float64);
  const double *xv = xr.data<double>(), *gv = gr.data<double>();
  double* o = out.data<double>();
  parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const double *xs = xv + r * n, *gs = gv + r * n;
      double* os = o + r * n;
      double s = 0;
      for (int64_t i = n - 1; i >= 0; --i) {  // S_i, from the end
        s = gs[i] + (i + 1 < n ? xs[i + 1] * s : 0.0);
        os[i] = s;
      }
      double prefix = 1;
      for (int64_t i = 0; i < n; ++i) {  // times the product of the earlier elements
        os[i] *= prefix;
        prefix *= xs[i];
      }
    }
  });
  return cast(movedim(out, {-1}, {d}), x.dtype());
}

// ---------------------------------------------------------------------------------------
// Sorting.

namespace {

// The first k along dim d of x sorted: values (shape `shape`, when wanted) and 1-based
// indices, by the backend's sort entry, or for a backend without one, the CPU's on host
// copies moved back (docs/cuda.md lists the ops without a device kernel).
ValuesIndices sort_on_backend(const char* op, const Tensor& x0, int d, int64_t k, bool descending,
                              bool want_values, const Dims& shape) {
  const DeviceBackend& be = backend_for(x0.device());
  const bool on_host = be.sort == nullptr;
  const Tensor x = on_host ? x0.to_device({}).contiguous() : x0.contiguous();
  ValuesIndices r;
  if (want_values) r.values = Tensor::empty(shape, x.dtype(), x.device());
  r.indices = Tensor::empty(shape, DType::Int64, x.device());
  if (r.indices.numel() > 0) (on_host ? backend_for(DeviceType::CPU) : be).sort(op, x, d, k, descending, r.values, r.indices);
  if (on_host) {
    if (want_values) r.values = r.values.to_device(x0.device());
    r.indices = r.indices.to_device(x0.device());
  }
  return r;
}

ValuesIndices sort_impl(const char* op, const Tensor& x, int dim, bool descending, bool want_values) {
  check_defined(x, op);
  const int d = norm_dim(op, dim, x.dim());
  return sort_on_backend(op, x, d, x.dim() ? x.size(d) : 1, descending, want_values, x.sizes());
}

}  // namespace

ValuesIndices sort(const Tensor& x, int dim, bool descending) { return sort_impl("sort", x, dim, descending, true); }

Tensor argsort(const Tensor& x, int dim, bool descending) {
  return sort_impl("argsort", x, dim, descending, false).indices;
}

ValuesIndices topk(const Tensor& x0, int64_t k, int dim, bool largest, bool /*sorted: always sorted*/) {
  check_defined(x0, "topk");
  const int d = norm_dim("topk", dim, x0.dim());
  const int64_t n = x0.dim() ? x0.size(d) : 1;
  TIDE_CHECK(k >= 0 && k <= n, "topk: k (", k, ") is out of range for dim ", d + 1, " of size ", n, " (valid 0..", n,
             ")");
  Dims shape = x0.sizes();
  if (x0.dim() > 0) shape[d] = k;
  else TIDE_CHECK(k == 1, "topk: k must be 1 for a 0-dim tensor, got ", k);
  return sort_on_backend("topk", x0, d, k, largest, true, shape);
}

void check_extrema(const char* op, const Tensor& t, std::function<void(const Extrema&)> check) {
  TIDE_CHECK(!is_complex(t.dtype()) && !is_bool(t.dtype()), op, ": check_extrema takes a real tensor, got ",
             dtype_name(t.dtype()));
  if (t.numel() == 0) return;
  if (!t.device().is_cpu()) {  // on a device: its reductions, read back (nothing is captured there)
    const Scalar lo = min(t).item(), hi = max(t).item();
    if (is_floating(t.dtype())) check({lo.to_double(), hi.to_double(), 0, 0});
    else check({lo.to_double(), hi.to_double(), lo.to_int(), hi.to_int()});
    return;
  }
  const Tensor c = t.contiguous();
  run_host_kernel(op, {&c}, [c, check = std::move(check)] {
    Extrema e{0, 0, 0, 0};
    TIDE_DISPATCH_ALL(c.dtype(), "check_extrema", [&] {
      const scalar_t* v = c.data<scalar_t>();
      const int64_t n = c.numel();
      if constexpr (std::is_integral_v<scalar_t>) {
        int64_t lo = int64_t(v[0]), hi = lo;
        for (int64_t i = 1; i < n; ++i) lo = std::min<int64_t>(lo, int64_t(v[i])), hi = std::max<int64_t>(hi, int64_t(v[i]));
        e = {double(lo), double(hi), lo, hi};
      } else {
        double lo = double(v[0]), hi = lo;
        for (int64_t i = 1; i < n && lo == lo; ++i) {
          const double x = double(v[i]);
          if (x != x) lo = hi = x;
          else lo = std::min(lo, x), hi = std::max(hi, x);
        }
        if (lo != lo) hi = lo;
        e = {lo, hi, 0, 0};
      }
    });
    check(e);
  });
}

}  // namespace tide::ops
