// Batch normalization (training and evaluation) and layer normalization (batch_norm.hpp).
// On the CPU for float32 and float64 the statistics of a channel (a row for layer norm) come
// from one sweep over its elements (accumulated in double), the output from a second, and the
// backward is the closed form
//   dx = w invstd (g - mean(g) - xhat mean(g xhat)),  dw = sum(g xhat),  db = sum(g)
// in two sweeps; channels (rows) run in parallel. Elsewhere, and for the double backward, the
// same formulas are composed from differentiable ops.
#include "batch_norm.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "../backend.hpp"
#include "../parallel.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

const char* const kOp = "batch_norm";
const char* const kLayerOp = "layer_norm";

// x as (N, C, S): S the product of the dims after the channel dim.
struct Layout {
  int64_t N, C, S;
  int64_t per_channel() const { return N * S; }
};

Layout layout_of(const Tensor& x) {
  int64_t S = 1;
  for (int d = 2; d < x.dim(); ++d) S *= x.size(d);
  return {x.size(0), x.size(1), S};
}

// The dims the statistics reduce over: all but the channel dim (0-based 1).
DimList stat_dims(const Tensor& x) {
  DimList d{0};
  for (int i = 2; i < x.dim(); ++i) d.push_back(i);
  return d;
}

// {1, C, 1, ...}: a per-channel vector broadcast against x.
Dims channel_shape(const Tensor& x) {
  Dims s(x.dim(), 1);
  s[1] = x.size(1);
  return s;
}

// The same elements outside autograd (the statistics returned for the running estimates).
Tensor detached(const Tensor& t) { return Tensor::make_view(t.storage(), t.sizes(), t.strides(), t.offset(), t.dtype()); }

// sum over j < n of f(j), with eight partial sums so that the compiler can vectorise it.
template <class F>
inline double partial_sums(int64_t n, F f) {
  double a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int k = 0; k < 8; ++k) a[k] += f(j + k);
  double tail = 0;
  for (; j < n; ++j) tail += f(j);
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7])) + tail;
}

// Parallel over channels, a task covering at least kParallelGrain elements.
template <class F>
void for_channels(const Layout& l, F f) {
  parallel_for(0, l.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(l.per_channel(), 1)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t c = c0; c < c1; ++c) f(c);
               });
}

// Channel c of the output: (x - mean) * scale + shift, in double (a float32 mean far from 0
// would not be representable closely enough).
template <class T>
void write_channel(const T* x, T* y, const Layout& l, int64_t c, double mean, double scale, double shift) {
  for (int64_t i = 0; i < l.N; ++i) {
    const T* row = x + (i * l.C + c) * l.S;
    T* out = y + (i * l.C + c) * l.S;
    for (int64_t j = 0; j < l.S; ++j) out[j] = T((double(row[j]) - mean) * scale + shift);
  }
}

// Per channel: mean, biased variance and 1 / sqrt(var + eps); y = (x - mean) invstd w + b.
// The statistics come from one sweep of sums of x - K and (x - K)^2 with K the channel's first
// element (the shifted-data algorithm: with K inside the data's range, the difference of the
// two sums does not cancel the way E[x^2] - E[x]^2 does when the mean is large).
template <class T>
void forward_kernel(const T* x, T* y, const T* w, const T* b, const Layout& l, double eps, double* mean, double* var,
                    double* invstd) {
  const double n = double(l.per_channel());
  if (n == 0) {  // no values: NaN statistics, an empty output
    std::fill(mean, mean + l.C, NAN);
    std::fill(var, var + l.C, NAN);
    std::fill(invstd, invstd + l.C, NAN);
    return;
  }
  for_channels(l, [&](int64_t c) {
    const double K = double(x[c * l.S]);
    double s = 0, q = 0;
    for (int64_t i = 0; i < l.N; ++i) {
      const T* row = x + (i * l.C + c) * l.S;
      s += partial_sums(l.S, [&](int64_t j) { return double(row[j]) - K; });
      q += partial_sums(l.S, [&](int64_t j) {
        double d = double(row[j]) - K;
        return d * d;
      });
    }
    const double m = K + s / n;
    q = std::max(0.0, q / n - (s / n) * (s / n)) * n;
    mean[c] = m;
    var[c] = q / n;
    invstd[c] = 1.0 / std::sqrt(q / n + eps);
    write_channel(x, y, l, c, m, invstd[c] * (w ? double(w[c]) : 1.0), b ? double(b[c]) : 0.0);
  });
}

// The closed-form gradients: dx always, dw and db where wanted (non-null).
template <class T>
void backward_kernel(const T* g, const T* x, const T* w, const Layout& l, const double* mean, const double* invstd,
                     T* dx, T* dw, T* db) {
  const double n = double(l.per_channel());
  for_channels(l, [&](int64_t c) {
    const double m = mean[c];
    double sum_g = 0, sum_gx = 0;
    for (int64_t i = 0; i < l.N; ++i) {
      const int64_t at = (i * l.C + c) * l.S;
      const T *gr = g + at, *xr = x + at;
      sum_g += partial_sums(l.S, [&](int64_t j) { return double(gr[j]); });
      sum_gx += partial_sums(l.S, [&](int64_t j) { return double(gr[j]) * (double(xr[j]) - m); });
    }
    const double is = invstd[c], wc = w ? double(w[c]) : 1.0;
    if (dw) dw[c] = T(sum_gx * is);
    if (db) db[c] = T(sum_g);
    // dx = k (g - mean(g)) - k2 (x - mean) with k = w invstd, k2 = k invstd^2 mean(g (x - mean)).
    const double k = wc * is, mg = sum_g / n, k2 = wc * is * is * is * sum_gx / n;
    for (int64_t i = 0; i < l.N; ++i) {
      const int64_t at = (i * l.C + c) * l.S;
      const T *gr = g + at, *xr = x + at;
      T* out = dx + at;
      for (int64_t j = 0; j < l.S; ++j) out[j] = T((double(gr[j]) - mg) * k - (double(xr[j]) - m) * k2);
    }
  });
}

// y = xhat * w + b with xhat already normalised (the composed path).
Tensor affine(const Tensor& xhat, const Tensor* w, const Tensor* b) {
  Tensor y = xhat;
  if (w) y = y * reshape(*w, channel_shape(xhat));
  if (b) y = y + reshape(*b, channel_shape(xhat));
  return y;
}

// x minus each channel's first element (a constant: it does not change the gradients), so
// that the statistics of a channel whose mean is far from 0 are taken on values near 0, where
// a float32 mean keeps its digits (the kernel's shifted sums, composed). Also returns the shift.
std::pair<Tensor, Tensor> shifted(const Tensor& x) {
  Layout l = layout_of(x);
  Tensor first = narrow(narrow(reshape(detached(x), {l.N, l.C, l.S}), 0, 0, 1), 2, 0, 1);
  Tensor k = detached(reshape(contiguous(first), channel_shape(x)));
  return {x - k, k};
}

// The forward from differentiable ops (devices other than the CPU, half-precision dtypes).
BatchNormResult composed_forward(const Tensor& x, const Tensor* w, const Tensor* b, double eps) {
  DimList dims = stat_dims(x);
  auto [xs, k] = shifted(x);
  Tensor mean = ag::mean(xs, dims, true);
  Tensor xc = xs - mean;
  Tensor var = ag::mean(xc * xc, dims, true);
  Tensor out = affine(xc * unary(UnaryOp::Rsqrt, var + eps), w, b);
  Dims c{x.size(1)};
  return {out, detached(reshape(detached(mean) + k, c)), detached(reshape(detached(var), c))};
}

// The backward from differentiable ops, so that it is differentiable again (create_graph).
Grads composed_backward(const Tensor& g, const Tensor& x, const Tensor* w, bool want_w, bool want_b, double eps) {
  DimList dims = stat_dims(x);
  Tensor xs = shifted(x).first;
  Tensor xc = xs - ag::mean(xs, dims, true);
  Tensor invstd = unary(UnaryOp::Rsqrt, ag::mean(xc * xc, dims, true) + eps);
  Tensor xhat = xc * invstd;
  Tensor gw = w ? g * reshape(*w, channel_shape(x)) : g;
  Tensor dx = invstd * (gw - ag::mean(gw, dims, true) - xhat * ag::mean(gw * xhat, dims, true));
  return {dx, want_w ? ag::sum(g * xhat, dims) : Tensor(), want_b ? ag::sum(g, dims) : Tensor()};
}

void check_args(const Tensor& x, const Tensor* w, const Tensor* b) {
  TIDE_CHECK(is_floating(x.dtype()), kOp, ": input must be a floating-point tensor, got ", dtype_name(x.dtype()));
  TIDE_CHECK(x.dim() >= 2, kOp, ": expected an input of at least 2 dims (N, C, ...), got shape ", x.sizes().str());
  Layout l = layout_of(x);
  for (auto [t, name] : {std::pair{w, "weight"}, std::pair{b, "bias"}}) {
    if (!t) continue;
    TIDE_CHECK(t->dim() == 1 && t->size(0) == l.C, kOp, ": ", name, " must have shape {", l.C, "}, got ",
               t->sizes().str());
    TIDE_CHECK(t->dtype() == x.dtype(), kOp, ": ", name, " has dtype ", dtype_name(t->dtype()), " but input has dtype ",
               dtype_name(x.dtype()));
    TIDE_CHECK(t->device() == x.device(), kOp, ": ", name, " is on another device than input");
  }
}

// The statistics a fused forward keeps for its backward.
struct Stats {
  std::vector<double> mean, invstd;
};

// The fused kernels run as host kernels (DeviceBackend::host), so that torch.compile records
// and replays them; the statistics they share live in Stats, owned by the forward's node and
// by the recorded calls alike.
template <class T>
BatchNormResult fused_forward(const Tensor& x_in, const Tensor* w, const Tensor* b, double eps,
                              const std::shared_ptr<Stats>& st) {
  Tensor x = contiguous(x_in);
  Layout l = layout_of(x);
  Tensor y = Tensor::empty(x.sizes(), x.dtype(), x.device(), kOp);
  Tensor wc = w ? contiguous(*w) : Tensor(), bc = b ? contiguous(*b) : Tensor();
  st->mean.resize(l.C);
  st->invstd.resize(l.C);
  Tensor mean = Tensor::empty({l.C}, x.dtype(), x.device(), kOp), v = Tensor::empty({l.C}, x.dtype(), x.device(), kOp);
  run_host_kernel(kOp, {&x, &wc, &bc, &y, &mean, &v}, [x, wc, bc, y, mean, v, l, eps, st] {
    std::vector<double> var(l.C);
    forward_kernel<T>(x.data<T>(), y.data<T>(), wc.defined() ? wc.data<T>() : nullptr,
                      bc.defined() ? bc.data<T>() : nullptr, l, eps, st->mean.data(), var.data(), st->invstd.data());
    for (int64_t c = 0; c < l.C; ++c) {
      mean.data<T>()[c] = T(st->mean[c]);
      v.data<T>()[c] = T(var[c]);
    }
  });
  return {y, mean, v};
}

template <class T>
Grads fused_backward(const Tensor& g_in, const Tensor& x_in, const Tensor* w, bool want_w, bool want_b,
                     const std::shared_ptr<const Stats>& st) {
  Tensor g = contiguous(g_in), x = contiguous(x_in);
  Layout l = layout_of(x);
  Tensor dx = Tensor::empty(x.sizes(), x.dtype(), x.device(), kOp);
  Tensor dw = want_w ? Tensor::empty({l.C}, x.dtype(), x.device(), kOp) : Tensor();
  Tensor db = want_b ? Tensor::empty({l.C}, x.dtype(), x.device(), kOp) : Tensor();
  Tensor wc = w ? contiguous(*w) : Tensor();
  run_host_kernel(kOp, {&g, &x, &wc, &dx, &dw, &db}, [g, x, wc, dx, dw, db, l, st] {
    backward_kernel<T>(g.data<T>(), x.data<T>(), wc.defined() ? wc.data<T>() : nullptr, l, st->mean.data(),
                       st->invstd.data(), dx.data<T>(), dw.defined() ? dw.data<T>() : nullptr,
                       db.defined() ? db.data<T>() : nullptr);
  });
  return {dx, dw, db};
}

// Evaluation: x normalised by given per-channel statistics (the running ones), as composed
// differentiable ops (devices other than the CPU, mixed dtypes).
Tensor eval_composed(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor* w, const Tensor* b,
                     double eps) {
  Dims cs = channel_shape(x);
  Tensor scale = unary(UnaryOp::Rsqrt, reshape(var, cs) + eps);
  if (w) scale = scale * reshape(*w, cs);
  Tensor y = (x - reshape(mean, cs)) * scale;
  return b ? y + reshape(*b, cs) : y;
}

// The gradients of the fused evaluation (w undefined: none) in differentiable ops, so that
// they are differentiable again: dx = g w invstd, d mean = -sum(g) w invstd,
// d var = -sum(g (x - mean)) w invstd^3 / 2, dw = sum(g (x - mean)) invstd, db = sum(g).
Grads eval_backward(const Tensor& g, const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& w,
                    bool want_stats, bool want_w, bool want_b, double eps) {
  DimList dims = stat_dims(x);
  Tensor invstd = unary(UnaryOp::Rsqrt, var + eps);                 // {C}
  Tensor scale = w.defined() ? invstd * w : invstd;                 // {C}
  Tensor dx = g * reshape(scale, channel_shape(x));
  Tensor sum_g = (want_stats || want_b) ? ag::sum(g, dims) : Tensor();
  Tensor sum_gx = (want_stats || want_w) ? ag::sum(g * (x - reshape(mean, channel_shape(x))), dims) : Tensor();
  Grads out{dx, Tensor(), Tensor(), Tensor(), Tensor()};
  if (want_stats) {
    out[1] = -(sum_g * scale);
    out[2] = sum_gx * scale * invstd * invstd * -0.5;
  }
  if (want_w) out[3] = sum_gx * invstd;
  if (want_b) out[4] = sum_g;
  return out;
}

// Layer normalization: x as M rows of K elements, each row normalised by its own mean and
// biased variance, then times weight[j] plus bias[j] (K elements each, or null).

// Per row: the shifted-sum statistics (as forward_kernel's) and the output.
template <class T>
void layer_forward_kernel(const T* x, T* y, const T* w, const T* b, int64_t M, int64_t K, double eps, double* mean,
                          double* invstd) {
  parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T* row = x + r * K;
      const double shift = double(row[0]);
      double s = partial_sums(K, [&](int64_t j) { return double(row[j]) - shift; });
      double q = partial_sums(K, [&](int64_t j) {
        double d = double(row[j]) - shift;
        return d * d;
      });
      const double m = shift + s / double(K), is = 1.0 / std::sqrt(std::max(0.0, q / K - (s / K) * (s / K)) + eps);
      mean[r] = m;
      invstd[r] = is;
      T* out = y + r * K;
      for (int64_t j = 0; j < K; ++j)
        out[j] = T((double(row[j]) - m) * is * (w ? double(w[j]) : 1.0) + (b ? double(b[j]) : 0.0));
    }
  });
}

// dx = invstd (gw - mean(gw) - xhat mean(gw xhat)) per row with gw = g w; dw = sum over rows
// of g xhat and db = sum of g, column by column (blocks of columns in parallel).
template <class T>
void layer_backward_kernel(const T* g, const T* x, const T* w, int64_t M, int64_t K, const double* mean,
                           const double* invstd, T* dx, T* dw, T* db) {
  parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *gr = g + r * K, *xr = x + r * K;
      const double m = mean[r], is = invstd[r];
      auto gw = [&](int64_t j) { return double(gr[j]) * (w ? double(w[j]) : 1.0); };
      const double mg = partial_sums(K, gw) / double(K);
      const double mgx = partial_sums(K, [&](int64_t j) { return gw(j) * (double(xr[j]) - m); }) * is / double(K);
      T* out = dx + r * K;
      for (int64_t j = 0; j < K; ++j) out[j] = T(is * (gw(j) - mg - (double(xr[j]) - m) * is * mgx));
    }
  });
  if (!dw && !db) return;
  constexpr int64_t kCols = 64;
  parallel_for(0, (K + kCols - 1) / kCols, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(M * kCols, 1)),
               [&](int64_t c0, int64_t c1) {
                 for (int64_t cb = c0; cb < c1; ++cb) {
                   const int64_t j0 = cb * kCols, j1 = std::min(K, j0 + kCols);
                   double sw[kCols] = {}, sb[kCols] = {};
                   for (int64_t r = 0; r < M; ++r) {
                     const T *gr = g + r * K, *xr = x + r * K;
                     const double m = mean[r], is = invstd[r];
                     for (int64_t j = j0; j < j1; ++j) {
                       sw[j - j0] += double(gr[j]) * (double(xr[j]) - m) * is;
                       sb[j - j0] += double(gr[j]);
                     }
                   }
                   for (int64_t j = j0; j < j1; ++j) {
                     if (dw) dw[j] = T(sw[j - j0]);
                     if (db) db[j] = T(sb[j - j0]);
                   }
                 }
               });
}

// Layer normalization from differentiable ops over the last dim of x (M, K) (other devices,
// half dtypes, and the double backward).
Tensor layer_composed(const Tensor& x, const Tensor* w, const Tensor* b, double eps) {
  Tensor k = detached(contiguous(narrow(detached(x), 1, 0, 1)));
  Tensor xs = x - k;
  Tensor xc = xs - ag::mean(xs, {1}, true);
  Tensor y = xc * unary(UnaryOp::Rsqrt, ag::mean(xc * xc, {1}, true) + eps);
  if (w) y = y * *w;
  if (b) y = y + *b;
  return y;
}

Grads layer_composed_backward(const Tensor& g, const Tensor& x, const Tensor* w, bool want_w, bool want_b,
                              double eps) {
  Tensor k = detached(contiguous(narrow(detached(x), 1, 0, 1)));
  Tensor xs = x - k;
  Tensor xc = xs - ag::mean(xs, {1}, true);
  Tensor invstd = unary(UnaryOp::Rsqrt, ag::mean(xc * xc, {1}, true) + eps);
  Tensor xhat = xc * invstd;
  Tensor gw = w ? g * *w : g;
  Tensor dx = invstd * (gw - ag::mean(gw, {1}, true) - xhat * ag::mean(gw * xhat, {1}, true));
  return {dx, want_w ? ag::sum(g * xhat, {0}) : Tensor(), want_b ? ag::sum(g, {0}) : Tensor()};
}

template <class T>
Tensor layer_fused_forward(const Tensor& x, const Tensor* w, const Tensor* b, double eps,
                           const std::shared_ptr<Stats>& st) {
  const int64_t M = x.size(0), K = x.size(1);
  Tensor xc = contiguous(x), y = Tensor::empty(x.sizes(), x.dtype(), x.device(), kLayerOp);
  Tensor wc = w ? contiguous(*w) : Tensor(), bc = b ? contiguous(*b) : Tensor();
  st->mean.resize(M);
  st->invstd.resize(M);
  run_host_kernel(kLayerOp, {&xc, &wc, &bc, &y}, [xc, wc, bc, y, M, K, eps, st] {
    layer_forward_kernel<T>(xc.data<T>(), y.data<T>(), wc.defined() ? wc.data<T>() : nullptr,
                            bc.defined() ? bc.data<T>() : nullptr, M, K, eps, st->mean.data(), st->invstd.data());
  });
  return y;
}

template <class T>
Grads layer_fused_backward(const Tensor& g_in, const Tensor& x_in, const Tensor* w, bool want_w, bool want_b,
                           const std::shared_ptr<const Stats>& st) {
  Tensor g = contiguous(g_in), x = contiguous(x_in);
  const int64_t M = x.size(0), K = x.size(1);
  Tensor dx = Tensor::empty(x.sizes(), x.dtype(), x.device(), kLayerOp);
  Tensor dw = want_w ? Tensor::empty({K}, x.dtype(), x.device(), kLayerOp) : Tensor();
  Tensor db = want_b ? Tensor::empty({K}, x.dtype(), x.device(), kLayerOp) : Tensor();
  Tensor wc = w ? contiguous(*w) : Tensor();
  run_host_kernel(kLayerOp, {&g, &x, &wc, &dx, &dw, &db}, [g, x, wc, dx, dw, db, M, K, st] {
    layer_backward_kernel<T>(g.data<T>(), x.data<T>(), wc.defined() ? wc.data<T>() : nullptr, M, K, st->mean.data(),
                             st->invstd.data(), dx.data<T>(), dw.defined() ? dw.data<T>() : nullptr,
                             db.defined() ? db.data<T>() : nullptr);
  });
  return {dx, dw, db};
}

// Records a fused normalization (batch or layer) on out. Its backward is the closed form
// from the forward's statistics (fused32/fused64 by x's dtype) or, when the backward is
// itself recorded (create_graph), the composed formula, so that second derivatives exist.
using ComposedBackward = Grads (*)(const Tensor&, const Tensor&, const Tensor*, bool, bool, double);
using FusedBackward = Grads (*)(const Tensor&, const Tensor&, const Tensor*, bool, bool,
                              const std::shared_ptr<const Stats>&);
void record_fused(const char* op, Tensor& out, const Tensor& x, const Tensor* weight, const Tensor* bias,
                  double eps, std::shared_ptr<Stats> st, ComposedBackward composed, FusedBackward fused32,
                  FusedBackward fused64) {
  SavedTensor sx = SavedTensor::input(x);
  std::optional<SavedTensor> sw;
  if (weight) sw = SavedTensor::input(*weight);
  bool want_w = weight != nullptr, want_b = bias != nullptr;
  record(op, out, {&x, weight, bias},
         [sx, sw, st, want_w, want_b, eps, composed, fused32, fused64](const Tensor& g, const Node& n) -> Grads {
           Tensor xv = sx.unpack(n);
           Tensor wv = sw ? sw->unpack(n) : Tensor();
           const Tensor* w = sw ? &wv : nullptr;
           if (autograd::grad_enabled()) return composed(g, xv, w, want_w, want_b, eps);
           return (xv.dtype() == DType::Float32 ? fused32 : fused64)(g, xv, w, want_w, want_b, st);
         });
}

}  // namespace

BatchNormResult batch_norm_train(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps) {
  check_args(x, weight, bias);
  bool fused = x.device().is_cpu() && (x.dtype() == DType::Float32 || x.dtype() == DType::Float64);
  if (!fused) return composed_forward(x, weight, bias, eps);
  auto st = std::make_shared<Stats>();
  BatchNormResult r = x.dtype() == DType::Float32 ? fused_forward<float>(x, weight, bias, eps, st)
                                                  : fused_forward<double>(x, weight, bias, eps, st);
  if (needs_recording({&x, weight, bias}))
    record_fused(kOp, r.out, x, weight, bias, eps, st, composed_backward, fused_backward<float>,
                 fused_backward<double>);
  return r;
}

Tensor layer_norm_rows(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps) {
  TIDE_CHECK(is_floating(x.dtype()), kLayerOp, ": input must be a floating-point tensor, got ", dtype_name(x.dtype()));
  TIDE_CHECK(x.dim() == 2 && x.size(1) > 0, kLayerOp, ": expected rows (M, K) with K > 0, got shape ", x.sizes().str());
  for (auto [t, name] : {std::pair{weight, "weight"}, std::pair{bias, "bias"}}) {
    if (!t) continue;
    TIDE_CHECK(t->dim() == 1 && t->size(0) == x.size(1), kLayerOp, ": ", name, " must have shape {", x.size(1),
               "}, got ", t->sizes().str());
    TIDE_CHECK(t->dtype() == x.dtype(), kLayerOp, ": ", name, " has dtype ", dtype_name(t->dtype()),
               " but input has dtype ", dtype_name(x.dtype()));
    TIDE_CHECK(t->device() == x.device(), kLayerOp, ": ", name, " is on another device than input");
  }
  bool fused = x.device().is_cpu() && (x.dtype() == DType::Float32 || x.dtype() == DType::Float64);
  if (!fused) return layer_composed(x, weight, bias, eps);
  auto st = std::make_shared<Stats>();
  Tensor y = x.dtype() == DType::Float32 ? layer_fused_forward<float>(x, weight, bias, eps, st)
                                         : layer_fused_forward<double>(x, weight, bias, eps, st);
  if (needs_recording({&x, weight, bias}))
    record_fused(kLayerOp, y, x, weight, bias, eps, st, layer_composed_backward, layer_fused_backward<float>,
                 layer_fused_backward<double>);
  return y;
}

Tensor batch_norm_eval(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor* weight,
                       const Tensor* bias, double eps) {
  check_args(x, weight, bias);
  const int64_t C = x.size(1);
  for (auto [t, name] : {std::pair{&mean, "running_mean"}, std::pair{&var, "running_var"}}) {
    TIDE_CHECK(t->dim() == 1 && t->size(0) == C, kOp, ": ", name, " must have shape {", C, "}, got ", t->sizes().str());
    TIDE_CHECK(is_floating(t->dtype()), kOp, ": ", name, " must be a floating-point tensor, got ",
               dtype_name(t->dtype()));
    TIDE_CHECK(t->device() == x.device(), kOp, ": ", name, " is on another device than input");
  }
  bool fused = x.device().is_cpu() && (x.dtype() == DType::Float32 || x.dtype() == DType::Float64) &&
               mean.dtype() == x.dtype() && var.dtype() == x.dtype();
  if (!fused) return eval_composed(x, mean, var, weight, bias, eps);
  Tensor xc = contiguous(x), y = Tensor::empty(x.sizes(), x.dtype(), x.device(), kOp);
  Tensor m = contiguous(mean), v = contiguous(var);
  Tensor wc = weight ? contiguous(*weight) : Tensor(), bc = bias ? contiguous(*bias) : Tensor();
  Layout l = layout_of(xc);
  run_host_kernel(kOp, {&xc, &m, &v, &wc, &bc, &y}, [xc, m, v, wc, bc, y, l, eps] {
    auto run = [&](auto zero) {
      using T = decltype(zero);
      const T *xp = xc.data<T>(), *mp = m.data<T>(), *vp = v.data<T>();
      const T *wp = wc.defined() ? wc.data<T>() : nullptr, *bp = bc.defined() ? bc.data<T>() : nullptr;
      T* yp = y.data<T>();
      for_channels(l, [&](int64_t c) {
        double scale = 1.0 / std::sqrt(double(vp[c]) + eps) * (wp ? double(wp[c]) : 1.0);
        write_channel(xp, yp, l, c, double(mp[c]), scale, bp ? double(bp[c]) : 0.0);
      });
    };
    if (xc.dtype() == DType::Float32) run(float(0)); else run(double(0));
  });
  if (!needs_recording({&x, &mean, &var, weight, bias})) return y;
  SavedTensor sx = SavedTensor::input(x), sm = SavedTensor::input(mean), sv = SavedTensor::input(var);
  std::optional<SavedTensor> sw;
  if (weight) sw = SavedTensor::input(*weight);
  bool want_stats = autograd::is_differentiable(mean) || autograd::is_differentiable(var);
  bool want_w = weight && autograd::is_differentiable(*weight), want_b = bias && autograd::is_differentiable(*bias);
  record(kOp, y, {&x, &mean, &var, weight, bias},
         [sx, sm, sv, sw, want_stats, want_w, want_b, eps](const Tensor& g, const Node& n) -> Grads {
           return eval_backward(g, sx.unpack(n), sm.unpack(n), sv.unpack(n), sw ? sw->unpack(n) : Tensor(), want_stats,
                                want_w, want_b, eps);
         });
  return y;
}

}  // namespace tide::ag
