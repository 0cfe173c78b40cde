// Row kernels of softmax and its gradient (see softmax.hpp).
#include "softmax.hpp"

#include <algorithm>
#include <cmath>

#include "../backend.hpp"
#include "../cpu/functors.hpp"
#include "../cpu/vec_math.hpp"
#include "../parallel.hpp"

namespace tide::ops {

namespace {

// Calls f(row, first, last) for the rows [first, last) of a tensor of `rows` rows of `cols`
// elements, in parallel when there are enough elements.
template <typename F>
void for_rows(int64_t rows, int64_t cols, F&& f) {
  parallel_for(0, rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1)),
               [&](int64_t b, int64_t e) { f(b, e); });
}

constexpr int kLanes = 8;  // independent accumulators, so that the loops vectorise

// The largest element of p[0, n), or NaN when there is one (as amax).
template <typename T>
T row_max(const T* p, int64_t n) {
  T m[kLanes];
  int nan[kLanes] = {};
  for (int j = 0; j < kLanes; ++j) m[j] = -INFINITY;
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int j = 0; j < kLanes; ++j) {
      m[j] = p[c + j] > m[j] ? p[c + j] : m[j];
      nan[j] |= p[c + j] != p[c + j];
    }
  T r = -INFINITY;
  int any_nan = 0;
  for (int j = 0; j < kLanes; ++j) {
    r = m[j] > r ? m[j] : r;
    any_nan |= nan[j];
  }
  for (; c < n; ++c) {
    r = p[c] > r ? p[c] : r;
    any_nan |= p[c] != p[c];
  }
  return any_nan ? T(NAN) : r;
}

// sum of a[c] * b[c] over [0, n) (b == nullptr: of a[c]).
template <typename T>
T row_dot(const T* a, const T* b, int64_t n) {
  T s[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += b ? a[c + j] * b[c + j] : a[c + j];
  T r = 0;
  for (int j = 0; j < kLanes; ++j) r += s[j];
  for (; c < n; ++c) r += b ? a[c] * b[c] : a[c];
  return r;
}

// As the composite: y = exp(x - max) / sum(exp(x - max)); a NaN anywhere makes the row NaN,
// a row of -inf gives NaN (-inf - -inf), as amax and the subtraction do there.
template <typename T>
void softmax_kernel(const T* x, T* y, int64_t rows, int64_t C) {
  for_rows(rows, C, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* xr = x + r * C;
      T* yr = y + r * C;
      const T m = row_max(xr, C);
      for (int64_t c = 0; c < C; ++c) yr[c] = xr[c] - m;
      ContiguousKernel<fn::Exp>::run(yr, yr, C);
      const T s = row_dot<T>(yr, nullptr, C);
      for (int64_t c = 0; c < C; ++c) yr[c] = yr[c] / s;
    }
  });
}

template <typename T>
void softmax_backward_kernel(const T* y, const T* g, T* out, int64_t rows, int64_t C) {
  for_rows(rows, C, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const T* yr = y + r * C;
      const T* gr = g + r * C;
      T* o = out + r * C;
      const T dot = row_dot(gr, yr, C);
      for (int64_t c = 0; c < C; ++c) o[c] = yr[c] * (gr[c] - dot);
    }
  });
}

}  // namespace

bool softmax_rows_fit(const Tensor& t) {
  return t.device().is_cpu() && t.dim() >= 1 && t.is_contiguous() &&
         (t.dtype() == DType::Float32 || t.dtype() == DType::Float64);
}

Tensor softmax_rows(const Tensor& x) {
  Tensor y = Tensor::empty(x.sizes(), x.dtype());
  const int64_t C = x.size(x.dim() - 1);
  if (x.numel() == 0) return y;
  const int64_t rows = x.numel() / C;
  run_host_kernel("softmax", {&x, &y}, [x, y, rows, C] {
    if (x.dtype() == DType::Float32) softmax_kernel(x.data<float>(), y.data<float>(), rows, C);
    else softmax_kernel(x.data<double>(), y.data<double>(), rows, C);
  });
  return y;
}

Tensor softmax_rows_backward(const Tensor& y, const Tensor& g) {
  Tensor out = Tensor::empty(y.sizes(), y.dtype());
  const int64_t C = y.size(y.dim() - 1);
  if (y.numel() == 0) return out;
  const int64_t rows = y.numel() / C;
  run_host_kernel("softmax_backward", {&y, &g, &out}, [y, g, out, rows, C] {
    if (y.dtype() == DType::Float32)
      softmax_backward_kernel(y.data<float>(), g.data<float>(), out.data<float>(), rows, C);
    else
      softmax_backward_kernel(y.data<double>(), g.data<double>(), out.data<double>(), rows, C);
  });
  return out;
}

}  // namespace tide::ops
