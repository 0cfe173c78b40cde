// Fused neural-network kernels: im2col-style patches and cross-entropy rows. Work is split
// over (image, channel) planes or rows, so results do not depend on the thread count.
#include "nn.hpp"

#include <cmath>

#include "../parallel.hpp"
#include "creation.hpp"
#include "elementwise.hpp"
#include "index.hpp"
#include "reduce.hpp"
#include "shape.hpp"

namespace tide::ops {

// The output length along spatial dim i of an input of length n. The span and the padded
// length are computed with overflow checks, so huge sizes raise an error instead of wrapping.
int64_t Window2d::out_size(int i, int64_t n, const char* op) const {
  TIDE_CHECK(kernel[i] > 0 && stride[i] > 0 && dilation[i] > 0 && padding[i] >= 0, op,
             ": kernel size, stride and dilation must be positive and padding non-negative, got kernel ", kernel[i],
             ", stride ", stride[i], ", dilation ", dilation[i], ", padding ", padding[i]);
  int64_t span = 0, padded = 0;
  bool overflow = __builtin_mul_overflow(dilation[i], kernel[i] - 1, &span) || __builtin_add_overflow(span, 1, &span) ||
                  __builtin_mul_overflow(padding[i], 2, &padded) || __builtin_add_overflow(padded, n, &padded);
  TIDE_CHECK(!overflow, op, ": kernel size ", kernel[i], ", dilation ", dilation[i], " and padding ", padding[i],
             " are too large (the window or the padded input overflows 64 bits)");
  TIDE_CHECK(padded >= span, op, ": the input's spatial size ", n, " (padded by ", padding[i],
             " on each side) is smaller than the kernel's extent ", span);
  return (padded - span) / stride[i] + 1;
}

int64_t Window2d::positions(int64_t H, int64_t W, const char* op) const {
  int64_t Ho = out_size(0, H, op), Wo = out_size(1, W, op), L = 0;
  TIDE_CHECK(!__builtin_mul_overflow(Ho, Wo, &L), op, ": an output of ", Ho, " x ", Wo,
             " positions is too large (the count overflows 64 bits)");
  return L;
}

namespace {

// Calls f(plane) for every (n, c) plane, in parallel when the work is large enough.
template <class F>
void for_planes(int64_t planes, int64_t work_per_plane, F f) {
  int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work_per_plane, 1));
  parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) f(p);
  });
}

}  // namespace

Tensor unfold2d(const Tensor& x_, const Window2d& w, double pad, const char* op) {
  check_defined(x_, op);
  TIDE_CHECK(x_.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x_.sizes().str());
  if (!x_.device().is_cpu())  // the patches' element positions, gathered on the device
    return take_on_device(op, x_, unfold2d(positions_of(x_), w, -1, op), Scalar(pad));
  Tensor x = x_.contiguous();
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t Ho = w.out_size(0, H, op), Wo = w.out_size(1, W, op);
  int64_t kh = w.kernel[0], kw = w.kernel[1], L = w.positions(H, W, op);
  int64_t window = 0, rows = 0;
  TIDE_CHECK(!__builtin_mul_overflow(kh, kw, &window) && !__builtin_mul_overflow(C, window, &rows), op, ": a ", kh,
             " x ", kw, " window over ", C, " channels is too large (the patch size overflows 64 bits)");
  Tensor cols = Tensor::empty({N, rows, L}, x.dtype(), Device{}, op);
  if (cols.numel() == 0) return cols;  // no work, however large the other sizes
  TIDE_DISPATCH_ALL(x.dtype(), op, [&] {
    const scalar_t* src = x.data<scalar_t>();
    scalar_t* dst = cols.data<scalar_t>();
    scalar_t fill = scalar_t(pad);
    for_planes(N * C, kh * kw * L, [&](int64_t plane) {
      const scalar_t* img = src + plane * H * W;
      scalar_t* out = dst + plane * kh * kw * L;
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j, out += L)
          for (int64_t oy = 0; oy < Ho; ++oy) {
            int64_t y = oy * w.stride[0] - w.padding[0] + i * w.dilation[0];
            for (int64_t ox = 0; ox < Wo; ++ox) {
              int64_t xx = ox * w.stride[1] - w.padding[1] + j * w.dilation[1];
              out[oy * Wo + ox] = (y >= 0 && y < H && xx >= 0 && xx < W) ? img[y * W + xx] : fill;
            }
          }
    });
  });
  return cols;
}

Tensor fold2d(const Tensor& cols_, int64_t H, int64_t W, const Window2d& w, const char* op) {
  check_defined(cols_, op);
  int64_t kh = w.kernel[0], kw = w.kernel[1];
  int64_t Ho = w.out_size(0, H, op), Wo = w.out_size(1, W, op), L = w.positions(H, W, op);
  const int64_t window = checked_mul(op, kh, kw, "a ", kh, " x ", kw, " window");
  TIDE_CHECK(cols_.dim() == 3 && cols_.size(1) % window == 0 && cols_.size(2) == L, op,
             ": expected patches of shape (N, C*", window, ", ", L, "), got ", cols_.sizes().str());
  Tensor cols = cols_.contiguous();
  int64_t N = cols.size(0), C = cols.size(1) / window;
  check_extent(op, {N, C, H, W}, cols.dtype());
  if (!cols.device().is_cpu()) {  // the adjoint of the device unfold: patches added back
    Tensor x = zeros({N, C, H, W}, cols.dtype(), cols.device());
    put_on_device(op, x, unfold2d(positions_of(x), w, -1, op), cols, true);
    return x;
  }
  Tensor x = Tensor::empty({N, C, H, W}, cols.dtype(), Device{}, op);
  if (x.numel() == 0) return x;
  TIDE_DISPATCH_ALL(cols.dtype(), op, [&] {
    const scalar_t* src = cols.data<scalar_t>();
    scalar_t* dst = x.data<scalar_t>();
    for_planes(N * C, kh * kw * L, [&](int64_t plane) {
      scalar_t* img = dst + plane * H * W;
      for (int64_t k = 0; k < H * W; ++k) img[k] = scalar_t(0);
      const scalar_t* in = src + plane * kh * kw * L;
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j, in += L)
          for (int64_t oy = 0; oy < Ho; ++oy) {
            int64_t y = oy * w.stride[0] - w.padding[0] + i * w.dilation[0];
            if (y < 0 || y >= H) continue;
            for (int64_t ox = 0; ox < Wo; ++ox) {
              int64_t xx = ox * w.stride[1] - w.padding[1] + j * w.dilation[1];
              if (xx >= 0 && xx < W) img[y * W + xx] = scalar_t(img[y * W + xx] + in[oy * Wo + ox]);
            }
          }
    });
  });
  return x;
}

namespace {

// The row kernels trust their callers (tensor/autograd/nn.cpp checks the user's arguments).
void check_rows(const Tensor& logits, const Tensor& target, const Tensor* weight) {
  TIDE_ASSERT(logits.dim() == 2 && logits.is_contiguous() && target.dim() == 1 && target.dtype() == DType::Int64 &&
              target.size(0) == logits.size(0) &&
              (!weight || (weight->numel() == logits.size(1) && weight->is_contiguous())));
}

}  // namespace

// cross_entropy_rows from the pointwise ops and reductions (the device path): the weighted
// l - x_c of every class, the target's picked by a one-hot mask.
static Tensor cross_entropy_composite(const Tensor& logits, const Tensor& target, const Tensor* weight, int64_t ignore,
                               double eps) {
  const int64_t C = logits.size(1);
  Tensor nll = binary(BinaryOp::Sub, logsumexp(logits, {1}, true), logits);  // (M, C)
  if (weight) nll = binary(BinaryOp::Mul, nll, *weight);
  Tensor classes = arange(Scalar(int64_t(0)), Scalar(C), Scalar(int64_t(1)), DType::Int64, logits.device());
  Tensor onehot = binary(BinaryOp::Eq, unsqueeze(target, 1), classes).to(nll.dtype());
  Tensor loss = binary(BinaryOp::Mul, sum(binary(BinaryOp::Mul, nll, onehot), {1}), Scalar(1 - eps));
  if (eps != 0)
    loss = binary(BinaryOp::Add, loss, binary(BinaryOp::Mul, sum(nll, {1}), Scalar(eps / double(C))));
  return where(binary(BinaryOp::Eq, target, Scalar(ignore)), Scalar(0.0), loss);
}

Tensor cross_entropy_rows(const Tensor& logits, const Tensor& target, const Tensor* weight, int64_t ignore,
                                    double eps) {
  int64_t M = logits.size(0), C = logits.size(1);
  check_rows(logits, target, weight);
  if (!logits.device().is_cpu()) return cross_entropy_composite(logits, target, weight, ignore, eps);
  Tensor loss = Tensor::empty({M}, logits.dtype());
  TIDE_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    using acc_t = double;
        const scalar_t* x = logits.data<scalar_t>();
    const int64_t* t = target.data<int64_t>();
    const scalar_t* wt = weight ? weight->data<scalar_t>() : nullptr;
    scalar_t* out = loss.data<scalar_t>();
    parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const scalar_t* row = x + i * C;
        acc_t m = -INFINITY;
        for (int64_t c = 0; c < C; ++c) m = std::max<acc_t>(m, acc_t(row[c]));
        acc_t s = 0;
        for (int64_t c = 0; c < C; ++c) s += std::exp(acc_t(row[c]) - m);
        acc_t l = m + std::log(s);
        if (t[i] == ignore) {
          out[i] = scalar_t(0);
          continue;
        }
        acc_t w_t = wt ? acc_t(wt[t[i]]) : 1;
        acc_t v = (1 - eps) * w_t * (l - acc_t(row[t[i]]));
        if (eps != 0) {
          acc_t smooth = 0;
          for (int64_t c = 0; c < C; ++c) smooth += (wt ? acc_t(wt[c]) : 1) * (l - acc_t(row[c]));
          v += eps / acc_t(C) * smooth;
        }
        out[i] = scalar_t(v);
      }
    });
  });
  return loss;
}

}  // namespace tide::ops
