// Fused neural-network kernels: im2col-style patches and cross-entropy rows. Work is split
// over (image, channel) planes or rows, so results do not depend on the thread count.
#include "nn.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "../backend.hpp"
#include "../cpu/blas.hpp"
#include "../cpu/vec_math.hpp"
#include "../interrupt.hpp"
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

// The output columns ox in [lo, hi) whose input column ox * stride - padding + j * dilation
// lies inside a row of W: the rest read the padding. Lets the patch loops copy and add whole
// runs without a bounds check per element.
struct ColumnRun {
  int64_t lo, hi, first;  // first: the input column of ox = lo
};

// The runs of every kernel column j, computed once per call.
std::vector<ColumnRun> column_runs(const Window2d& w, int64_t W, int64_t Wo) {
  // ceil(a / b) for b > 0, without forming a + b - 1 (a stride may be near 2^63).
  auto ceil_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b + (a % b != 0) : -((-a) / b); };
  std::vector<ColumnRun> runs(size_t(w.kernel[1]));
  for (int64_t j = 0; j < w.kernel[1]; ++j) {
    const int64_t shift = j * w.dilation[1] - w.padding[1];  // input column of ox = 0
    ColumnRun& r = runs[size_t(j)];
    r.lo = std::clamp<int64_t>(ceil_div(-shift, w.stride[1]), 0, Wo);
    r.hi = std::clamp<int64_t>(ceil_div(W - shift, w.stride[1]), r.lo, Wo);
    r.first = r.lo * w.stride[1] + shift;
  }
  return runs;
}

// The geometry of one call's patches: sizes and the column runs of every kernel column.
struct Patches {
  Window2d w;
  int64_t H, W, Ho, Wo, L;
  std::vector<ColumnRun> runs;
  Patches(const Window2d& w_, int64_t H_, int64_t W_, const char* op)
      : w(w_), H(H_), W(W_), Ho(w.out_size(0, H, op)), Wo(w.out_size(1, W, op)), L(w.positions(H, W, op)),
        runs(column_runs(w, W, Wo)) {}
  int64_t window() const { return w.kernel[0] * w.kernel[1]; }
};

// The patches of one (H, W) plane: kh*kw rows of L positions; the padding reads `fill`.
// With stride 1 and as many output columns as input columns (a "same" padding), a kernel
// position's row is the image shifted: its rows inside the image are one run of the image
// (copied at once, then the padding columns set), not Ho short copies.
template <typename T>
void unfold_plane(const Patches& p, const T* img, T* out, T fill) {
  const Window2d& w = p.w;
  const int64_t sx = w.stride[1], Wo = p.Wo;
  const bool shifted = sx == 1 && w.stride[0] == 1 && Wo == p.W;
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j, out += p.L) {
      const ColumnRun& run = p.runs[size_t(j)];
      if (shifted) {
        const int64_t dy = i * w.dilation[0] - w.padding[0];  // input row of oy = 0
        const int64_t lo = std::clamp<int64_t>(-dy, 0, p.Ho), hi = std::clamp<int64_t>(p.H - dy, lo, p.Ho);
        std::fill(out, out + lo * Wo, fill);
        if (hi > lo && run.hi > run.lo) {
          const T* in = img + (lo + dy) * p.W + run.first;  // (lo, run.lo)'s input
          std::copy(in, in + (hi - lo - 1) * Wo + (run.hi - run.lo), out + lo * Wo + run.lo);
          for (int64_t oy = lo; oy < hi; ++oy) {
            std::fill(out + oy * Wo, out + oy * Wo + run.lo, fill);
            std::fill(out + oy * Wo + run.hi, out + (oy + 1) * Wo, fill);
          }
        } else {
          std::fill(out + lo * Wo, out + hi * Wo, fill);
        }
        std::fill(out + hi * Wo, out + p.L, fill);
        continue;
      }
      for (int64_t oy = 0; oy < p.Ho; ++oy) {
        int64_t y = oy * w.stride[0] - w.padding[0] + i * w.dilation[0];
        T* row = out + oy * Wo;
        if (y < 0 || y >= p.H) {
          std::fill(row, row + Wo, fill);
          continue;
        }
        std::fill(row, row + run.lo, fill);
        if (run.hi > run.lo) {
          const T* in = img + y * p.W + run.first;
          if (sx == 1)
            std::copy(in, in + (run.hi - run.lo), row + run.lo);
          else
            for (int64_t k = 0; k < run.hi - run.lo; ++k) row[run.lo + k] = in[k * sx];
        }
        std::fill(row + run.hi, row + Wo, fill);
      }
    }
}

// The adjoint of unfold_plane: one plane's kh*kw rows of L positions summed into img (H, W),
// which starts at zero; the rows are added in order, so the sums do not depend on threads.
template <typename T>
void fold_plane(const Patches& p, const T* in, T* img) {
  const Window2d& w = p.w;
  const int64_t sx = w.stride[1];
  std::fill(img, img + p.H * p.W, T(0));
  for (int64_t i = 0; i < w.kernel[0]; ++i)
    for (int64_t j = 0; j < w.kernel[1]; ++j, in += p.L) {
      const ColumnRun& run = p.runs[size_t(j)];
      for (int64_t oy = 0; oy < p.Ho; ++oy) {
        int64_t y = oy * w.stride[0] - w.padding[0] + i * w.dilation[0];
        if (y < 0 || y >= p.H || run.hi == run.lo) continue;
        const T* row = in + oy * p.Wo;
        T* out = img + y * p.W + run.first;
        for (int64_t k = 0; k < run.hi - run.lo; ++k) out[k * sx] = T(out[k * sx] + row[run.lo + k]);
      }
    }
}

}  // namespace

Tensor unfold2d(const Tensor& x_, const Window2d& w, double pad, const char* op) {
  check_defined(x_, op);
  TIDE_CHECK(x_.dim() == 4, op, ": expected a 4-D input (N, C, H, W), got shape ", x_.sizes().str());
  if (!x_.device().is_cpu())  // the patches' element positions, gathered on the device
    return take_on_device(op, x_, unfold2d(positions_of(x_), w, -1, op), Scalar(pad));
  Tensor x = x_.contiguous();
  int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  int64_t kh = w.kernel[0], kw = w.kernel[1], L = w.positions(H, W, op);
  int64_t window = 0, rows = 0;
  TIDE_CHECK(!__builtin_mul_overflow(kh, kw, &window) && !__builtin_mul_overflow(C, window, &rows), op, ": a ", kh,
             " x ", kw, " window over ", C, " channels is too large (the patch size overflows 64 bits)");
  Tensor cols = Tensor::empty({N, rows, L}, x.dtype(), Device{}, op);
  if (cols.numel() == 0) return cols;  // no work, however large the other sizes
  const Patches p(w, H, W, op);  // after the size checks: its runs are one per kernel column
  run_host_kernel(op, {&x, &cols}, [x, cols, p, N, C, H, W, window, pad, op] {
    TIDE_DISPATCH_ALL(x.dtype(), op, [&] {
      const scalar_t* src = x.data<scalar_t>();
      scalar_t* dst = cols.data<scalar_t>();
      for_planes(N * C, window * p.L, [&](int64_t plane) {
        unfold_plane(p, src + plane * H * W, dst + plane * window * p.L, scalar_t(pad));
      });
    });
  });
  return cols;
}

Tensor fold2d(const Tensor& cols_, int64_t H, int64_t W, const Window2d& w, const char* op) {
  check_defined(cols_, op);
  const int64_t window = checked_mul(op, w.kernel[0], w.kernel[1], "a ", w.kernel[0], " x ", w.kernel[1], " window");
  const int64_t L = w.positions(H, W, op);
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
  const Patches p(w, H, W, op);
  run_host_kernel(op, {&cols, &x}, [cols, x, p, N, C, H, W, window, op] {
    TIDE_DISPATCH_ALL(cols.dtype(), op, [&] {
      const scalar_t* src = cols.data<scalar_t>();
      scalar_t* dst = x.data<scalar_t>();
      for_planes(N * C, window * p.L, [&](int64_t plane) {
        fold_plane(p, src + plane * window * p.L, dst + plane * H * W);
      });
    });
  });
  return x;
}

// ---------------------------------------------------------------------------------------
// Conv2d on the CPU, image by image: an image's patches (C*kh*kw, L) go to a buffer of the
// task's own and meet the filters in one product per group, so the batch's patches (kh*kw
// times the input) are never stored, nor their gradient; the backward recomputes them.
// With stride 1 the input's gradient is itself a convolution: of the output's gradient,
// padded by the kernel's reach less the padding, with the flipped filters, one product
// per group whose sums run over Cout/G*kh*kw (not Cout/G followed by a fold of kh*kw
// overlapping patches, which writes kh*kw times the image).
//
// The images are split into at most kConvTasks tasks of consecutive images, a split that
// depends only on N. With at least one task per engine thread, each task runs on one thread
// with OpenBLAS's threads idle (splitting products of a few million multiply-adds over
// threads costs more in synchronisation than it saves); otherwise the tasks run one after
// another and OpenBLAS threads each product. The weight gradient adds the images' products
// in order within a task (BLAS beta = 1) and then the tasks' sums in order, so it does not
// depend on the thread count either.
// 3x3 filters of stride 1 take Winograd's algorithm instead for the output and the input's
// gradient (below).
namespace {

constexpr int64_t kConvTasks = 16;

// Images with fewer output positions keep the batched path (unfold2d and one batched
// product): per-image products of so few columns run BLAS far below its speed (the digits
// CNN, 36 and 16 positions: a step 1.6x slower image by image on one thread; CIFAR's 1024
// positions: 1.2x faster).
constexpr int64_t kConvMinPositions = 256;

// The window that convolves the output's gradient into the input's (stride 1 only): the
// same kernel and dilation, padding dilation * (kernel - 1) - padding >= 0 on each side.
std::optional<Window2d> input_grad_window(const Window2d& w) {
  Window2d back = w;
  for (int i = 0; i < 2; ++i) {
    if (w.stride[i] != 1 || w.padding[i] > w.dilation[i] * (w.kernel[i] - 1)) return std::nullopt;
    back.padding[i] = w.dilation[i] * (w.kernel[i] - 1) - w.padding[i];
  }
  return back;
}

struct ConvShape {
  int64_t N, C, G, Cout, K;  // K = C/G * kh * kw: one group's patch rows
  Patches p;
  int64_t L;
  ConvShape(const Tensor& x, const Tensor& weight, const Window2d& w, int64_t groups, const char* op)
      : N(x.size(0)), C(x.size(1)), G(groups), Cout(weight.size(0)), K(C / G * w.kernel[0] * w.kernel[1]),
        p(w, x.size(2), x.size(3), op), L(p.L) {}
  int64_t per_task() const { return std::max<int64_t>(1, (N + kConvTasks - 1) / kConvTasks); }
  int64_t tasks() const { return (N + per_task() - 1) / per_task(); }
  int64_t plane() const { return p.H * p.W; }
  int64_t image() const { return C * plane(); }
};

// Calls f(first_image, last_image, buffer) for every task, each task with its own buffer of
// `buffer` elements, on the engine's threads or one after another (see above).
template <typename T, class F>
void for_tasks(const ConvShape& s, int64_t buffer, F f) {
  const int64_t tasks = s.tasks(), per = s.per_task();
  auto run = [&](int64_t b, int64_t e) {
    std::unique_ptr<T[]> cols(new T[size_t(buffer)]);
    for (int64_t t = b; t < e; ++t) f(t * per, std::min(s.N, (t + 1) * per), cols.get());
  };
  const int threads = get_num_threads();
  if (threads > 1 && tasks >= threads && !in_parallel_region()) {
    BlasOnCallingThread one_thread;
    parallel_for(0, tasks, 1, run);
  } else {
    run(0, tasks);
  }
}

// The patches of image n's C planes into cols (C*kh*kw, L).
template <typename T>
void unfold_image(const ConvShape& s, const T* x, int64_t n, T* cols) {
  for (int64_t c = 0; c < s.C; ++c)
    unfold_plane(s.p, x + n * s.image() + c * s.plane(), cols + c * s.p.window() * s.L, T(0));
}

// f(T()) with T the C++ type of a float32 or float64 dtype (conv2d_on_cpu admits no other).
template <class F>
void blas_dispatch(DType dt, F f) {
  if (dt == DType::Float32)
    f(float(0));
  else
    f(double(0));
}

// Whether a product's sizes and a buffer of rows x cols elements stay below 2^31 (BLAS's int).
bool fits_blas(int64_t rows, int64_t cols) {
  int64_t n = 0;
  return !__builtin_mul_overflow(rows, cols, &n) && n < INT32_MAX;
}

// src (rows, cols) into dst (cols, rows), by tiles through a small buffer so that every
// cache line of either side is read or written whole once (a plain loop over a tile read
// lines 4 KB apart again and again, which evicted one another: 2 ns per element).
template <typename T>
void transpose_plane(const T* src, int64_t rows, int64_t cols, T* dst) {
  constexpr int64_t kTile = 16;
  T tile[kTile][kTile];
  for (int64_t r0 = 0; r0 < rows; r0 += kTile)
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t nr = std::min(kTile, rows - r0), nc = std::min(kTile, cols - c0);
      for (int64_t r = 0; r < nr; ++r)
        for (int64_t c = 0; c < nc; ++c) tile[c][r] = src[(r0 + r) * cols + c0 + c];
      for (int64_t c = 0; c < nc; ++c) std::copy_n(tile[c], nr, dst + (c0 + c) * rows + r0);
    }
}

// The patches of a channels-last image (Ho*Wo positions of C channels, p's input) with the
// output positions as rows: row (oy, ox) holds, group by group, kernel position by kernel
// position, the group's C/G channels at the input position the kernel reaches (0 in the
// padding). Stride 1 only (the input-gradient window), so each kernel column's run of
// positions reads consecutive input positions.
template <typename T>
void patch_rows(const Patches& p, const T* img, int64_t C, int64_t G, T* rows) {
  const Window2d& w = p.w;
  const int64_t window = p.window(), Cg = C / G, width = C * window;
  for (int64_t oy = 0; oy < p.Ho; ++oy) {
    T* line = rows + oy * p.Wo * width;
    for (int64_t i = 0; i < w.kernel[0]; ++i) {
      const int64_t y = oy - w.padding[0] + i * w.dilation[0];
      for (int64_t j = 0; j < w.kernel[1]; ++j) {
        const ColumnRun& run = p.runs[size_t(j)];
        const bool inside = y >= 0 && y < p.H;
        for (int64_t g = 0; g < G; ++g) {
          T* at = line + (g * window + i * w.kernel[1] + j) * Cg;
          for (int64_t ox = 0; ox < p.Wo; ++ox, at += width) {
            if (inside && ox >= run.lo && ox < run.hi)
              std::copy_n(img + (y * p.W + run.first + (ox - run.lo)) * C + g * Cg, Cg, at);
            else
              std::fill_n(at, Cg, T(0));
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Winograd's F(2x2, 3x3) for 3x3 convolutions of stride 1 (Lavin and Gray, "Fast Algorithms
// for Convolutional Neural Networks", 2015): each 2x2 block of outputs comes from a 4x4 tile
// of the input as A^T [(G g G^T) . (B^T d B)] A, so the products over channels run once per
// each of the 16 tile positions: 16 * 4 multiply-adds per 2x2 outputs instead of 36. The
// transforms add and halve only (exact in binary), the products are 16 matrix products per
// image with the tiles as rows (tiles x Cin by Cin x Cout, near OpenBLAS's peak), and the
// input and output go through channels-last copies so that the transforms run over
// contiguous channels. The forward pass and the stride-1 input gradient (a convolution of
// the output's gradient with the flipped filters) both take it; the weight gradient keeps
// the patches' product.
constexpr int64_t kWinoPoints = 16;

struct WinoShape {
  int64_t Cin, Cout, G, H, W, pad_h, pad_w, Ho, Wo, tiles_w, tiles;
  // The 16 planes of the transformed tiles and of the products lie this many elements
  // apart: a plane's size plus 32 elements, so that the transforms' 16 streams fall in
  // different cache sets (planes 32 or 64 KB apart shared one and evicted one another).
  int64_t v_plane, m_plane;
  WinoShape(int64_t cin, int64_t cout, int64_t g, int64_t h, int64_t w, int64_t ph, int64_t pw)
      : Cin(cin), Cout(cout), G(g), H(h), W(w), pad_h(ph), pad_w(pw), Ho(h + 2 * ph - 2), Wo(w + 2 * pw - 2),
        tiles_w((Wo + 1) / 2), tiles((Ho + 1) / 2 * tiles_w), v_plane(tiles * cin + 32), m_plane(tiles * cout + 32) {}
  // a task's buffer: the input channels last, the transformed tiles, the products, the
  // output channels last, and a row of zeros (the padding's channels, then the outputs
  // past the edge)
  int64_t buffer() const { return H * W * Cin + kWinoPoints * (v_plane + m_plane) + Ho * Wo * Cout + std::max(Cin, Cout); }
};

// Whether a convolution takes Winograd's algorithm: 3x3, stride and dilation 1, padding at
// most 2 (so that the input gradient's padding 2 - p is one too).
bool winograd_fits(const Window2d& w) {
  for (int i = 0; i < 2; ++i)
    if (w.kernel[i] != 3 || w.stride[i] != 1 || w.dilation[i] != 1 || w.padding[i] > 2) return false;
  return true;
}

// The filters transformed, U[point][g][cin][cout] (16, G, Cin/G, Cout/G): G k G^T for the
// 3x3 filter k = at(g, cout, cin) (a pointer to its 9 values and the step between them,
// which lets the input gradient read the filters flipped).
template <typename T, class At>
void winograd_filters(int64_t G, int64_t Cin_g, int64_t Cout_g, At at, T* U) {
  for (int64_t g = 0; g < G; ++g)
    for (int64_t o = 0; o < Cout_g; ++o)
      for (int64_t c = 0; c < Cin_g; ++c) {
        auto [k9, step] = at(g, o, c);
        T k[3][3], t[4][3];
        for (int i = 0; i < 9; ++i) k[i / 3][i % 3] = k9[i * step];
        for (int j = 0; j < 3; ++j) {
          t[0][j] = k[0][j];
          t[1][j] = T(0.5) * (k[0][j] + k[1][j] + k[2][j]);
          t[2][j] = T(0.5) * (k[0][j] - k[1][j] + k[2][j]);
          t[3][j] = k[2][j];
        }
        for (int i = 0; i < 4; ++i) {
          const T u[4] = {t[i][0], T(0.5) * (t[i][0] + t[i][1] + t[i][2]), T(0.5) * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
          for (int j = 0; j < 4; ++j) U[(((i * 4 + j) * G + g) * Cin_g + c) * Cout_g + o] = u[j];
        }
      }
}

// One image: out (Cout, Ho, Wo) = the convolution of in (Cin, H, W) with the transformed
// filters U, plus bias (Cout) where not null.
template <typename T>
void winograd_image(const WinoShape& s, const T* in, const T* U, const T* bias, T* out, T* buf) {
  T* last = buf;                                      // (H*W, Cin)
  T* V = last + s.H * s.W * s.Cin;                    // (16, tiles, Cin), planes v_plane apart
  T* M = V + kWinoPoints * s.v_plane;                 // (16, tiles, Cout), planes m_plane apart
  T* out_last = M + kWinoPoints * s.m_plane;          // (Ho*Wo, Cout)
  T* zeros = out_last + s.Ho * s.Wo * s.Cout;         // (max(Cin, Cout))
  std::fill_n(zeros, s.Cin, T(0));
  transpose_plane(in, s.Cin, s.H * s.W, last);
  const int64_t C = s.Cin, Co = s.Cout, nt = s.tiles, vp = s.v_plane, mp = s.m_plane;
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t y0 = t / s.tiles_w * 2 - s.pad_h, x0 = t % s.tiles_w * 2 - s.pad_w;
    const T* d[16];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const int64_t y = y0 + i, x = x0 + j;
        d[i * 4 + j] = y >= 0 && y < s.H && x >= 0 && x < s.W ? last + (y * s.W + x) * C : zeros;
      }
    T* v = V + t * C;
#pragma GCC ivdep
    for (int64_t c = 0; c < C; ++c) {
      T r[4][4];  // B^T d
      for (int j = 0; j < 4; ++j) {
        const T d0 = d[j][c], d1 = d[4 + j][c], d2 = d[8 + j][c], d3 = d[12 + j][c];
        r[0][j] = d0 - d2;
        r[1][j] = d1 + d2;
        r[2][j] = d2 - d1;
        r[3][j] = d1 - d3;
      }
      for (int i = 0; i < 4; ++i) {  // (B^T d) B
        T* vi = v + i * 4 * vp + c;
        vi[0] = r[i][0] - r[i][2];
        vi[vp] = r[i][1] + r[i][2];
        vi[2 * vp] = r[i][2] - r[i][1];
        vi[3 * vp] = r[i][1] - r[i][3];
      }
    }
  }
  const int64_t Cin_g = C / s.G, Cout_g = Co / s.G;
  for (int64_t p = 0; p < kWinoPoints; ++p)
    for (int64_t g = 0; g < s.G; ++g)
      gemm<T>(false, false, nt, Cout_g, Cin_g, V + p * vp + g * Cin_g, C, U + (p * s.G + g) * Cin_g * Cout_g,
              Cout_g, T(0), M + p * mp + g * Cout_g, Co);
  T* sink = zeros;  // outputs past the edge go here (the zeros are no longer read)
  for (int64_t t = 0; t < nt; ++t) {
    const int64_t oy = t / s.tiles_w * 2, ox = t % s.tiles_w * 2;
    T* y[4];
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        y[a * 2 + b] = oy + a < s.Ho && ox + b < s.Wo ? out_last + ((oy + a) * s.Wo + ox + b) * Co : sink;
    const T* m = M + t * Co;
#pragma GCC ivdep
    for (int64_t o = 0; o < Co; ++o) {
      T r[2][4];  // A^T m
      for (int j = 0; j < 4; ++j) {
        const T m0 = m[j * mp + o], m1 = m[(4 + j) * mp + o], m2 = m[(8 + j) * mp + o], m3 = m[(12 + j) * mp + o];
        r[0][j] = m0 + m1 + m2;
        r[1][j] = m1 - m2 - m3;
      }
      const T b0 = bias ? bias[o] : T(0);
      for (int a = 0; a < 2; ++a) {  // (A^T m) A
        y[a * 2][o] = b0 + (r[a][0] + r[a][1] + r[a][2]);
        y[a * 2 + 1][o] = b0 + (r[a][1] - r[a][2] - r[a][3]);
      }
    }
  }
  transpose_plane(out_last, s.Ho * s.Wo, Co, out);
}

}  // namespace

bool conv2d_on_cpu(const Tensor& x, const Tensor& weight, const Window2d& w, const char* op) {
  if (!x.device().is_cpu() || x.dim() != 4 || (x.dtype() != DType::Float32 && x.dtype() != DType::Float64))
    return false;
  const int64_t L = w.positions(x.size(2), x.size(3), op);
  return L >= kConvMinPositions && weight.size(0) < INT32_MAX && fits_blas(x.size(1), w.kernel[0] * w.kernel[1]) &&
         fits_blas(x.size(1) * w.kernel[0] * w.kernel[1], L);
}

Tensor conv2d_cpu(const Tensor& x_, const Tensor& weight_, const Tensor* bias_, const Window2d& w, int64_t groups,
                  const char* op) {
  Tensor x = x_.contiguous(), weight = weight_.contiguous(), bias = bias_ ? bias_->contiguous() : Tensor();
  const ConvShape s(x, weight, w, groups, op);
  Tensor y = Tensor::empty({s.N, s.Cout, s.L}, x.dtype(), Device{}, op);
  if (y.numel() == 0) return y;
  // One host kernel (DeviceBackend::host), so torch.compile records and replays it.
  run_host_kernel(op, {&x, &weight, &bias, &y}, [x, weight, bias, y, s, w] {
    blas_dispatch(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* src = x.data<T>();
      const T* filters = weight.data<T>();
      const T* b = bias.defined() ? bias.data<T>() : nullptr;
      T* out = y.data<T>();
      const int64_t Cog = s.Cout / s.G, Cg = s.C / s.G;
      if (winograd_fits(w)) {
        const WinoShape ws(s.C, s.Cout, s.G, s.p.H, s.p.W, w.padding[0], w.padding[1]);
        std::unique_ptr<T[]> U(new T[size_t(kWinoPoints * s.Cout * Cg)]);
        winograd_filters<T>(s.G, Cg, Cog, [&](int64_t g, int64_t o, int64_t c) {
          return std::pair{filters + ((g * Cog + o) * Cg + c) * 9, 1};
        }, U.get());
        for_tasks<T>(s, ws.buffer(), [&](int64_t first, int64_t last, T* buf) {
          for (int64_t n = first; n < last; ++n) {
            check_interrupt();
            winograd_image(ws, src + n * s.image(), U.get(), b, out + n * s.Cout * s.L, buf);
          }
        });
        return;
      }
      for_tasks<T>(s, s.C * s.p.window() * s.L, [&](int64_t first, int64_t last, T* cols) {
        for (int64_t n = first; n < last; ++n) {
          check_interrupt();
          unfold_image(s, src, n, cols);
          T* yn = out + n * s.Cout * s.L;
          // the bias first, the product added to it (beta = 1): the sums of (W cols) + b
          if (b)
            for (int64_t o = 0; o < s.Cout; ++o) std::fill(yn + o * s.L, yn + (o + 1) * s.L, b[o]);
          for (int64_t g = 0; g < s.G; ++g)
            gemm<T>(false, false, Cog, s.L, s.K, filters + g * Cog * s.K, cols + g * Cg * s.p.window() * s.L,
                    T(b ? 1 : 0), yn + g * Cog * s.L);
        }
      });
    });
  });
  return y;
}

void conv2d_backward_cpu(const Tensor& x_, const Tensor& weight_, const Tensor& g_, const Window2d& w, int64_t groups,
                         Tensor* gx, Tensor* gw, const char* op) {
  Tensor x = x_.contiguous(), weight = weight_.contiguous(), grad = g_.contiguous();
  const ConvShape s(x, weight, w, groups, op);
  const int64_t Cog = s.Cout / s.G, Cg = s.C / s.G, window = s.p.window(), per = s.per_task();
  // The input's gradient as a convolution (stride 1), position by position: the output
  // gradient's patches with positions as rows (H*W, G*kh*kw*Cout/G), built by copying
  // channel runs from the image's gradient laid out channels last, times the flipped
  // filters (G, kh*kw*Cout/G, Cin/G), gives the gradient channels last (H*W, Cin). With
  // positions as the product's rows OpenBLAS runs near its peak (91 GFLOP/s on one core for
  // CIFAR's 1024 x 576 x 32, against 78 for the 32 x 576 x 1024 of patches as columns).
  std::optional<Window2d> back = gx ? input_grad_window(w) : std::nullopt;
  if (back && !fits_blas(s.plane(), s.Cout * window)) back.reset();
  // 3x3 filters: the input's gradient by Winograd's algorithm instead, with the filters
  // flipped and their channels swapped (the gradient's channels are the convolution's input).
  std::optional<WinoShape> wino;
  if (back && winograd_fits(w)) wino.emplace(s.Cout, s.C, s.G, s.p.Ho, s.p.Wo, 2 - w.padding[0], 2 - w.padding[1]);
  std::optional<Patches> gp;
  if (back && !wino) gp.emplace(*back, s.p.Ho, s.p.Wo, op);
  // the filters as the input gradient's product takes them: flipped (G, kh*kw*Cout/G, Cin/G),
  // or Winograd's transform of the flipped filters
  Tensor flipped = back ? Tensor::empty({wino ? kWinoPoints * s.Cout * Cg : s.G * window * Cog * Cg}, x.dtype(), Device{}, op)
                        : Tensor();
  if (gx) *gx = Tensor::empty(x.sizes(), x.dtype(), Device{}, op);
  if (gw) *gw = Tensor::empty(weight.sizes(), x.dtype(), Device{}, op);
  // The weight gradient of each task, transposed (G, C/G*kh*kw, Cout/G): the product of the
  // patches (rows) and the output's gradient (transposed) runs at 89 GFLOP/s where the
  // other order ran at 65. The tasks' sums are added in order at the end.
  Tensor partial = gw ? Tensor::empty({s.tasks(), s.Cout * s.K}, x.dtype(), Device{}, op) : Tensor();
  // A task's buffer: the input's patches, then (back) Winograd's buffer, or the output
  // gradient channels last, its position-major patches and the input's gradient channels last.
  const int64_t x_cols = gw ? s.C * window * s.L : 0;
  const int64_t dy_last = back && !wino ? s.Cout * s.L : 0, dy_rows = back && !wino ? s.plane() * s.Cout * window : 0,
                dx_last = back && !wino ? s.plane() * s.C : 0;
  const int64_t buffer = std::max(x_cols + (wino ? wino->buffer() : dy_last + dy_rows + dx_last),
                                  back ? 0 : s.C * window * s.L);
  // One host kernel (DeviceBackend::host), so torch.compile records and replays it.
  Tensor dx_t = gx ? *gx : Tensor(), dw_t = gw ? *gw : Tensor();
  run_host_kernel(op, {&x, &weight, &grad, &flipped, &dx_t, &partial, &dw_t}, [=] {
    if (back)
      blas_dispatch(x.dtype(), [&](auto zero) {
        using T = decltype(zero);
        const T* wt = weight.data<T>();
        T* f = flipped.data<T>();
        if (wino) {
          winograd_filters<T>(s.G, Cog, Cg, [&](int64_t g, int64_t c, int64_t o) {
            return std::pair{wt + ((g * Cog + o) * Cg + c) * 9 + 8, -1};
          }, f);
          return;
        }
        for (int64_t g = 0; g < s.G; ++g)
          for (int64_t k = 0; k < window; ++k)
            for (int64_t o = 0; o < Cog; ++o)
              for (int64_t c = 0; c < Cg; ++c)
                f[((g * window + k) * Cog + o) * Cg + c] = wt[((g * Cog + o) * Cg + c) * window + (window - 1 - k)];
      });
    blas_dispatch(x.dtype(), [&](auto zero) {
      using T = decltype(zero);
      const T* src = x.data<T>();
      const T* filters = weight.data<T>();
      const T* dy = grad.data<T>();
      const T* flip = back ? flipped.data<T>() : nullptr;
      T* dx = dx_t.defined() ? dx_t.data<T>() : nullptr;
      T* dw = dw_t.defined() ? partial.data<T>() : nullptr;
      if (s.N > 0 && (dx || dw))
        for_tasks<T>(s, buffer, [&](int64_t first, int64_t last, T* cols) {
          for (int64_t n = first; n < last; ++n) {
            check_interrupt();
            const T* dyn = dy + n * s.Cout * s.L;
            T* dxn = dx ? dx + n * s.image() : nullptr;
            if (dw) {
              unfold_image(s, src, n, cols);
              for (int64_t g = 0; g < s.G; ++g)
                gemm<T>(false, true, s.K, Cog, s.L, cols + g * Cg * window * s.L, dyn + g * Cog * s.L,
                        T(n == first ? 0 : 1), dw + (first / per) * s.Cout * s.K + g * s.K * Cog);
            }
            if (wino) {
              winograd_image(*wino, dyn, flip, static_cast<const T*>(nullptr), dxn, cols + x_cols);
            } else if (back) {
              T* last_dy = cols + x_cols;
              T* rows = last_dy + dy_last;
              T* last_dx = rows + dy_rows;
              transpose_plane(dyn, s.Cout, s.L, last_dy);
              patch_rows(*gp, last_dy, s.Cout, s.G, rows);
              const int64_t width = s.Cout * window;
              for (int64_t g = 0; g < s.G; ++g)
                gemm<T>(false, false, s.plane(), Cg, window * Cog, rows + g * window * Cog, width,
                        flip + g * window * Cog * Cg, Cg, T(0), last_dx + g * Cg, s.C);
              transpose_plane(last_dx, s.plane(), s.C, dxn);
            } else if (dx) {
              for (int64_t g = 0; g < s.G; ++g)
                gemm<T>(true, false, s.K, s.L, Cog, filters + g * Cog * s.K, dyn + g * Cog * s.L, T(0),
                        cols + g * Cg * window * s.L);
              for (int64_t c = 0; c < s.C; ++c) fold_plane(s.p, cols + c * window * s.L, dxn + c * s.plane());
            }
          }
        });
      if (dw) {
        T* out = dw_t.data<T>();
        const int64_t size = s.Cout * s.K, tasks = s.N > 0 ? s.tasks() : 0;
        // out (G, Cout/G, K) from the tasks' (G, K, Cout/G)
        parallel_for(0, size, kParallelGrain / std::max<int64_t>(tasks, 1), [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) {
            const int64_t g = i / (Cog * s.K), o = i / s.K % Cog, k = i % s.K;
            const int64_t at = (g * s.K + k) * Cog + o;
            T acc = tasks > 0 ? dw[at] : T(0);
            for (int64_t t = 1; t < tasks; ++t) acc = T(acc + dw[t * size + at]);
            out[i] = acc;
          }
        });
      }
    });
  });
}

namespace {

// The row kernels trust their callers (tensor/autograd/nn.cpp checks the user's arguments).
void check_rows(const Tensor& logits, const Tensor& target, const Tensor* weight) {
  TIDE_ASSERT(logits.dim() == 2 && logits.is_contiguous() && target.dim() == 1 && target.dtype() == DType::Int64 &&
              target.size(0) == logits.size(0) &&
              (!weight || (weight->numel() == logits.size(1) && weight->is_contiguous())));
}

// sum over c of e^(row[c] - m), in double, in 8 lanes through exp's vector kernel.
template <typename T>
double row_exp_sum(const T* row, int64_t n, double m) {
  double lane[8] = {};
  vec_detail::exp_shift_into_lanes<8>(row, n, m, lane, [](double a, double b) { return a + b; });
  double s = 0;
  for (double v : lane) s += v;
  return s;
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
  Tensor w = weight ? *weight : Tensor();
  run_host_kernel("cross_entropy", {&logits, &target, &w, &loss}, [logits, target, w, loss, M, C, ignore, eps] {
  TIDE_DISPATCH_FLOAT(logits.dtype(), "cross_entropy", [&] {
    using acc_t = double;
    const scalar_t* x = logits.data<scalar_t>();
    const int64_t* t = target.data<int64_t>();
    const scalar_t* wt = w.defined() ? w.data<scalar_t>() : nullptr;
    scalar_t* out = loss.data<scalar_t>();
    parallel_for(0, M, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(C, 1)), [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const scalar_t* row = x + i * C;
        acc_t m = -INFINITY;
        for (int64_t c = 0; c < C; ++c) m = std::max<acc_t>(m, acc_t(row[c]));
        acc_t l = m + std::log(row_exp_sum(row, C, m));
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
  });
  return loss;
}

}  // namespace tide::ops
