// Differentiable reductions, scans and orderings. A reduction's gradient is the output's
// gradient spread back over the reduced dims (`spread`), times the local derivative.
#include <cmath>

#include "../ops/index.hpp"
#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

// 0-based, non-negative, sorted dims a reduction over `dims` (empty: all) covers.
DimList covered(const Tensor& x, const DimList& dims, const char* op) {
  DimList d;
  if (dims.empty()) {
    for (int i = 0; i < x.dim(); ++i) d.push_back(i);
    return d;
  }
  for (int v : dims) d.push_back(ops::wrap_dim(op, v, x.dim()));
  std::sort(d.begin(), d.end());
  d.erase(std::unique(d.begin(), d.end()), d.end());
  return d;
}

// x's shape with the reduced dims kept as 1.
Dims kept_shape(const Dims& sizes, const DimList& dims) {
  Dims s = sizes;
  for (int d : dims) s[d] = 1;
  return s;
}

// A reduction result (kept or not) reshaped to keepdim form and expanded to `sizes`.
Tensor spread(const Tensor& r, const Dims& sizes, const DimList& dims) {
  return expand(reshape(r, kept_shape(sizes, dims)), sizes);
}

int64_t count(const Dims& sizes, const DimList& dims) {
  Dims reduced;
  for (int d : dims) reduced.push_back(sizes[d]);
  return shape_numel(reduced);  // 0 when any is 0, whatever the others multiply to
}

// Records a reduction whose gradient is spread(g) * local(x, spread(y)).
template <class Local>
void record_reduction(const char* op, Tensor& y, const Tensor& x, const DimList& dims, bool save_x, bool save_y,
                      Local local) {
  SavedTensor sx = save_x ? SavedTensor::input(x) : SavedTensor();
  SavedTensor sy = save_y ? SavedTensor::output(y) : SavedTensor();
  Dims sizes = x.sizes();
  record(op, y, {&x}, [=](const Tensor& g, const Node& n) -> Grads {
    Tensor yv = sy.defined() ? spread(sy.unpack(n), sizes, dims) : Tensor();
    return {local(spread(g, sizes, dims), sx.unpack(n), yv)};
  });
}

// The gradient of a values-and-indices result: g placed at the indices along dim.
void record_indexed(const char* op, Tensor& values, const Tensor& indices, const Tensor& x, int dim, bool keepdim) {
  Dims sizes = x.sizes();
  DType dt = x.dtype();
  Tensor idx = keepdim || indices.dim() == x.dim() ? indices : ops::unsqueeze(indices, dim);
  record(op, values, {&x}, [=](const Tensor& g, const Node&) -> Grads {
    Tensor gk = g.dim() == sizes.size() ? g : unsqueeze(g, dim);
    return {scatter(ops::zeros(sizes, dt, g.device()), dim, idx, gk)};
  });
}

// Product of all other elements of each reduced group (for prod's gradient with zeros):
// exclusive prefix times exclusive suffix products along the flattened reduced dims.
Tensor product_of_others(const Tensor& x, const DimList& dims) {
  std::vector<int64_t> perm, back(x.dim());
  for (int d = 0; d < x.dim(); ++d)
    if (!std::count(dims.begin(), dims.end(), d)) perm.push_back(d);
  for (int d : dims) perm.push_back(d);
  for (int i = 0; i < x.dim(); ++i) back[perm[i]] = i;
  Tensor p = ops::permute(x, perm).contiguous();
  Dims psizes = p.sizes();
  int64_t k = count(x.sizes(), dims);
  Tensor flat = ops::reshape(p, {p.numel() / std::max<int64_t>(k, 1), k});
  Tensor ones = ops::ones({flat.size(0), 1}, x.dtype(), x.device());
  Tensor prefix = ops::cat({ones, ops::narrow(ops::cumprod(flat, 1), 1, 0, k - 1)}, 1);
  Tensor rev = ops::flip(flat, {1});
  Tensor suffix = ops::flip(ops::cat({ones, ops::narrow(ops::cumprod(rev, 1), 1, 0, k - 1)}, 1), {1});
  Tensor others = ops::binary(BinaryOp::Mul, prefix, suffix);
  return ops::permute(ops::reshape(others, psizes), back);
}

}  // namespace

Tensor sum(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  Tensor y = ops::sum(x, dims, keepdim, dtype);
  if (!tracked_dtype(y.dtype()) || !needs_recording({&x})) return y;
  DimList d = covered(x, dims, "sum");
  record_reduction("sum", y, x, d, false, false, [](const Tensor& g, const Tensor&, const Tensor&) { return g; });
  return y;
}

Tensor mean(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  Tensor y = ops::mean(x, dims, keepdim, dtype);
  if (!needs_recording({&x})) return y;
  DimList d = covered(x, dims, "mean");
  double n = double(count(x.sizes(), d));
  record_reduction("mean", y, x, d, false, false, [n](const Tensor& g, const Tensor&, const Tensor&) { return g / n; });
  return y;
}

Tensor prod(const Tensor& x, const DimList& dims, bool keepdim, std::optional<DType> dtype) {
  Tensor y = ops::prod(x, dims, keepdim, dtype);
  if (!tracked_dtype(y.dtype()) || !needs_recording({&x})) return y;
  DimList d = covered(x, dims, "prod");
  record_reduction("prod", y, x, d, true, true, [d](const Tensor& g, const Tensor& xv, const Tensor& yv) {
    if (ops::count_nonzero(ops::binary(BinaryOp::Eq, xv, 0.0)) == 0) return g * yv / xv;
    return g * product_of_others(xv, d);
  });
  return y;
}

namespace {

// amax/amin (and max/min of everything): the gradient is shared evenly by the elements
// equal to the result.
Tensor extreme(const char* op, const Tensor& x, const DimList& dims, bool keepdim, bool largest) {
  Tensor y = largest ? ops::amax(x, dims, keepdim) : ops::amin(x, dims, keepdim);
  if (!needs_recording({&x})) return y;
  DimList d = covered(x, dims, op);
  record_reduction(op, y, x, d, true, true, [d](const Tensor& g, const Tensor& xv, const Tensor& yv) {
    Tensor hit = as_mask(ops::binary(BinaryOp::Eq, xv, yv), g.dtype());
    Tensor n = ops::sum(hit, d, true);
    return g * hit / n;
  });
  return y;
}

ops::ValuesIndices extreme_dim(const char* op, const Tensor& x, int dim, bool keepdim, bool largest) {
  ops::ValuesIndices r = largest ? ops::max(x, dim, keepdim) : ops::min(x, dim, keepdim);
  if (needs_recording({&x})) record_indexed(op, r.values, r.indices, x, ops::wrap_dim(op, dim, x.dim()), keepdim);
  return r;
}

}  // namespace

Tensor amax(const Tensor& x, const DimList& dims, bool keepdim) { return extreme("amax", x, dims, keepdim, true); }
Tensor amin(const Tensor& x, const DimList& dims, bool keepdim) { return extreme("amin", x, dims, keepdim, false); }
Tensor max(const Tensor& x) {
  TIDE_CHECK(x.numel() > 0, "max: cannot reduce an empty tensor (shape ", x.sizes().str(), ")");
  return extreme("max", x, {}, false, true);
}
Tensor min(const Tensor& x) {
  TIDE_CHECK(x.numel() > 0, "min: cannot reduce an empty tensor (shape ", x.sizes().str(), ")");
  return extreme("min", x, {}, false, false);
}
ops::ValuesIndices max(const Tensor& x, int dim, bool keepdim) { return extreme_dim("max", x, dim, keepdim, true); }
ops::ValuesIndices min(const Tensor& x, int dim, bool keepdim) { return extreme_dim("min", x, dim, keepdim, false); }

Tensor var(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  Tensor y = ops::var(x, dims, correction, keepdim);
  if (!needs_recording({&x})) return y;
  DimList d = covered(x, dims, "var");
  double denom = std::max(0.0, double(count(x.sizes(), d)) - correction);
  record_reduction("var", y, x, d, true, false, [d, denom](const Tensor& g, const Tensor& xv, const Tensor&) {
    return g * (xv - mean(xv, d, true)) * (2.0 / denom);
  });
  return y;
}

Tensor std(const Tensor& x, const DimList& dims, double correction, bool keepdim) {
  Tensor y = ops::std(x, dims, correction, keepdim);
  if (!needs_recording({&x})) return y;
  DimList d = covered(x, dims, "std");
  double denom = std::max(0.0, double(count(x.sizes(), d)) - correction);
  record_reduction("std", y, x, d, true, true, [d, denom](const Tensor& g, const Tensor& xv, const Tensor& yv) {
    return g * (xv - mean(xv, d, true)) / (yv * denom);
  });
  return y;
}

void record_norm(const char* op, Tensor& y, const Tensor& x, double p, const DimList& dims) {
  DimList d = covered(x, dims, op);
  record_reduction(op, y, x, d, true, true, [p, d](const Tensor& g, const Tensor& xv, const Tensor& yv) -> Tensor {
    if (p == 0) return ops::zeros(xv.sizes(), xv.dtype(), xv.device());
    if (p == 1) return g * unary(UnaryOp::Sign, xv);
    if (std::isinf(p)) {
      // The gradient of max |x| (min |x|): shared by the elements whose |x| is the result.
      Tensor hit = as_mask(ops::binary(BinaryOp::Eq, ops::unary(UnaryOp::Abs, xv), yv), g.dtype());
      return g * unary(UnaryOp::Sign, xv) * hit / ops::sum(hit, d, true);
    }
    Tensor zero = ops::binary(BinaryOp::Eq, yv, 0.0);  // the norm of zeros: gradient 0, as PyTorch
    Tensor r = p == 2 ? g * xv / yv
                      : g * xv * binary(BinaryOp::Pow, unary(UnaryOp::Abs, xv), p - 2) / binary(BinaryOp::Pow, yv, p - 1);
    return where(zero, 0.0, r);
  });
}

Tensor norm(const Tensor& x, double p, const DimList& dims, bool keepdim) {
  Tensor y = ops::norm(x, p, dims, keepdim);
  if (needs_recording({&x})) record_norm("norm", y, x, p, dims);
  return y;
}

Tensor logsumexp(const Tensor& x, const DimList& dims, bool keepdim) {
  Tensor y = ops::logsumexp(x, dims, keepdim);
  if (!needs_recording({&x})) return y;
  DimList d = covered(x, dims, "logsumexp");
  record_reduction("logsumexp", y, x, d, true, true,
                   [](const Tensor& g, const Tensor& xv, const Tensor& yv) { return g * unary(UnaryOp::Exp, xv - yv); });
  return y;
}

Tensor cumsum(const Tensor& x, int dim, std::optional<DType> dtype) {
  Tensor y = ops::cumsum(x, dim, dtype);
  if (!tracked_dtype(y.dtype()) || !needs_recording({&x})) return y;
  int d = ops::wrap_dim("cumsum", dim, std::max(x.dim(), 1));
  record("cumsum", y, {&x}, [d](const Tensor& g, const Node&) -> Grads {
    if (g.dim() == 0) return {g};
    return {flip(cumsum(flip(g, {d}), d), {d})};  // each input reaches every later output
  });
  return y;
}

Tensor cumprod(const Tensor& x, int dim, std::optional<DType> dtype) {
  Tensor y = ops::cumprod(x, dim, dtype);
  if (!tracked_dtype(y.dtype()) || !needs_recording({&x})) return y;
  int d = ops::wrap_dim("cumprod", dim, std::max(x.dim(), 1));
  SavedTensor sx = SavedTensor::input(x), sy = SavedTensor::output(y);
  record("cumprod", y, {&x}, [d, sx, sy](const Tensor& g, const Node& n) -> Grads {
    Tensor xv = sx.unpack(n), yv = sy.unpack(n);
    if (g.dim() == 0) return {g};
    // First order: the kernel, exact for any input (zeros included).
    if (!autograd::grad_enabled()) return {ops::cumprod_backward(xv, g, d)};
    // create_graph: a formula of differentiable ops, d y_j / d x_i = y_j / x_i for j >= i.
    TIDE_CHECK(ops::count_nonzero(ops::binary(BinaryOp::Eq, xv, 0.0)) == 0,
               "cumprod: second derivatives at an input that contains zeros are not supported");
    return {flip(cumsum(flip(g * yv, {d}), d), {d}) / xv};
  });
  return y;
}

ops::ValuesIndices sort(const Tensor& x, int dim, bool descending) {
  ops::ValuesIndices r = ops::sort(x, dim, descending);
  if (needs_recording({&x}) && x.dim() > 0) record_indexed("sort", r.values, r.indices, x, ops::wrap_dim("sort", dim, x.dim()), true);
  return r;
}

ops::ValuesIndices topk(const Tensor& x, int64_t k, int dim, bool largest, bool sorted) {
  ops::ValuesIndices r = ops::topk(x, k, dim, largest, sorted);
  if (needs_recording({&x}) && x.dim() > 0) record_indexed("topk", r.values, r.indices, x, ops::wrap_dim("topk", dim, x.dim()), true);
  return r;
}

}  // namespace tide::ag
