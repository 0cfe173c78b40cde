// The fused time loop of the recurrent layers (rnn.hpp): forward keeps the activated gates,
// the cell states and the outputs; backward walks the steps in reverse with two running
// gradients (h and c), collects the gates' gradients of all steps, and forms the gradients
// of x and of the weights with one matrix product each.
#include "rnn.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <optional>
#include <type_traits>

#include "../backend.hpp"
#include "../cpu/vec_math.hpp"
#include "../cpu/blas.hpp"
#include "../interrupt.hpp"
#include "autograd.hpp"
#include "formulas.hpp"
#include "functions.hpp"

namespace tide::ag {

namespace {

constexpr const char* kOp = "rnn_layer";

// sigmoid and tanh through the engine's branch-free exp (tensor/cpu/vec_math.hpp), so that the
// gate loops vectorise; the argument is clamped to exp's normal range, where both functions
// have reached their limits.
template <typename T>
inline T sigmoid_of(T x) {
  using C = vec_detail::ExpConst<T>;
  return T(1) / (T(1) + vec_detail::exp_in_range(std::min(std::max(-x, C::kLo), C::kHi)));
}

template <typename T>
inline T tanh_of(T x) {
  using C = vec_detail::ExpConst<T>;
  return T(1) - T(2) / (vec_detail::exp_in_range(std::min(std::max(x + x, C::kLo), C::kHi)) + T(1));
}

// Sizes of one layer: T steps, B sequences, I inputs, H hidden, P outputs (H, or proj_size),
// G gate blocks.
struct Sizes {
  int64_t T, B, I, H, P, G;
  int64_t gh() const { return G * H; }
};

// What forward keeps for backward, as plain (non-recording) tensors: the activated gates
// (T, B, G*H), the outputs (T, B, P), the LSTM cell states (T, B, H) and the GRU's
// h W_hn^T + b_hn (T, B, H).
struct Workspace {
  Tensor gates, ys, cs, ghn;
};

// The step order: step s (0-based) is time t; the step before it is time prev(t).
struct Order {
  int64_t T;
  bool reverse;
  int64_t time(int64_t s) const { return reverse ? T - 1 - s : s; }
  int64_t prev(int64_t t) const { return reverse ? t + 1 : t - 1; }
};

struct Weights {
  const void *w_ih, *w_hh, *b_ih, *b_hh, *w_hr;
};
// A weight's data, or null for an absent one (inside the host kernels).
const void* pointer(const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; }

template <typename T>
void forward_loop(RnnMode mode, const Sizes& z, const Order& ord, const T* x, const T* h0, const T* c0,
                  const Weights& w, Workspace& ws) {
  const T* wih = static_cast<const T*>(w.w_ih);
  const T* whh = static_cast<const T*>(w.w_hh);
  const T* bih = static_cast<const T*>(w.b_ih);
  const T* bhh = static_cast<const T*>(w.b_hh);
  const T* whr = static_cast<const T*>(w.w_hr);
  const int64_t GH = z.gh(), H = z.H, B = z.B, BH = B * H, BP = B * z.P;
  T* gates = ws.gates.data<T>();
  T* ys = ws.ys.data<T>();
  T* cs = mode == RnnMode::Lstm ? ws.cs.data<T>() : nullptr;
  T* ghn = mode == RnnMode::Gru ? ws.ghn.data<T>() : nullptr;
  // The input projection of every step at once, with the biases that add to it (for the GRU
  // b_hn stays apart: r multiplies it).
  gemm<T>(false, true, z.T * B, GH, z.I, x, wih, T(0), gates);
  if (bih || bhh) {
    const int64_t folded = mode == RnnMode::Gru ? 2 * H : GH;
    for (int64_t r = 0; r < z.T * B; ++r) {
      T* g = gates + r * GH;
      if (bih)
        for (int64_t j = 0; j < GH; ++j) g[j] += bih[j];
      if (bhh)
        for (int64_t j = 0; j < folded; ++j) g[j] += bhh[j];
    }
  }
  Tensor scratch = mode == RnnMode::Gru || (mode == RnnMode::Lstm && whr)
                       ? Tensor::empty({B, GH}, ws.gates.dtype())
                       : Tensor();
  T* tmp = scratch.defined() ? scratch.data<T>() : nullptr;
  // The per-step products (batch x hidden x gates * hidden) are too small for OpenBLAS's
  // threads to pay; the products over the whole sequence keep them.
  BlasOnCallingThread one_thread;
  for (int64_t s = 0; s < z.T; ++s) {
    check_interrupt();
    const int64_t t = ord.time(s);
    const T* hprev = s == 0 ? h0 : ys + ord.prev(t) * BP;
    T* g = gates + t * B * GH;
    T* y = ys + t * BP;
    switch (mode) {
      case RnnMode::Tanh:
      case RnnMode::Relu:
        gemm<T>(false, true, B, GH, z.P, hprev, whh, T(1), g);
        if (mode == RnnMode::Tanh)
          for (int64_t i = 0; i < BH; ++i) y[i] = tanh_of(g[i]);
        else
          for (int64_t i = 0; i < BH; ++i) y[i] = g[i] > T(0) ? g[i] : T(0);
        break;
      case RnnMode::Lstm: {
        gemm<T>(false, true, B, GH, z.P, hprev, whh, T(1), g);
        const T* cprev = s == 0 ? c0 : cs + ord.prev(t) * BH;
        T* c = cs + t * BH;
        T* hout = whr ? tmp : y;
        for (int64_t b = 0; b < B; ++b) {
          T* gb = g + b * GH;
          for (int64_t j = 0; j < H; ++j) {
            const T i = sigmoid_of(gb[j]), f = sigmoid_of(gb[H + j]), gg = tanh_of(gb[2 * H + j]),
                    o = sigmoid_of(gb[3 * H + j]);
            gb[j] = i, gb[H + j] = f, gb[2 * H + j] = gg, gb[3 * H + j] = o;
            const T cv = f * cprev[b * H + j] + i * gg;
            c[b * H + j] = cv;
            hout[b * H + j] = o * tanh_of(cv);
          }
        }
        if (whr) gemm<T>(false, true, B, z.P, H, tmp, whr, T(0), y);
        break;
      }
      case RnnMode::Gru: {
        gemm<T>(false, true, B, GH, z.P, hprev, whh, T(0), tmp);
        T* hn = ghn + t * BH;
        for (int64_t b = 0; b < B; ++b) {
          T* gb = g + b * GH;
          const T* hb = tmp + b * GH;
          for (int64_t j = 0; j < H; ++j) {
            const T r = sigmoid_of(gb[j] + hb[j]), u = sigmoid_of(gb[H + j] + hb[H + j]);
            const T hnv = hb[2 * H + j] + (bhh ? bhh[2 * H + j] : T(0));
            const T n = tanh_of(gb[2 * H + j] + r * hnv);
            gb[j] = r, gb[H + j] = u, gb[2 * H + j] = n;
            hn[b * H + j] = hnv;
            y[b * H + j] = n + u * (hprev[b * H + j] - n);
          }
        }
        break;
      }
    }
  }
}

// The gradients backward computes; undefined where the input needs none.
struct LayerGrads {
  Tensor x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr;
};

// Runs back through the steps from the gradients of the outputs gy (T, B, P), of h_n (gh)
// and of c_n (gc), then forms the input and weight gradients.
template <typename T>
void backward_loop(RnnMode mode, const Sizes& z, const Order& ord, const T* x, const T* h0, const T* c0,
                   const Weights& w, const Workspace& ws, const T* gy, const T* gh, const T* gc, LayerGrads& out) {
  const T* wih = static_cast<const T*>(w.w_ih);
  const T* whh = static_cast<const T*>(w.w_hh);
  const T* whr = static_cast<const T*>(w.w_hr);
  const int64_t GH = z.gh(), H = z.H, B = z.B, P = z.P, BH = B * H, BP = B * P, TB = z.T * B;
  const DType dt = ws.gates.dtype();
  const T* gates = ws.gates.data<T>();
  const T* ys = ws.ys.data<T>();
  const T* cs = mode == RnnMode::Lstm ? ws.cs.data<T>() : nullptr;
  const T* ghn = mode == RnnMode::Gru ? ws.ghn.data<T>() : nullptr;
  // The gradients of the gates' pre-activations on the input side, and (GRU, where r scales
  // the n block) on the hidden side.
  Tensor dgi_t = Tensor::empty({z.T, B, GH}, dt);
  Tensor dgh_t = mode == RnnMode::Gru ? Tensor::empty({z.T, B, GH}, dt) : dgi_t;
  Tensor dh_t = Tensor::empty({B, P}, dt), dc_t = Tensor::empty({B, H}, dt), tmp_t = Tensor::empty({B, H}, dt);
  // With a projection: the gradient of each step's projected h, and the h before projection.
  Tensor dproj_t = whr ? Tensor::empty({z.T, B, P}, dt) : Tensor();
  Tensor hp_t = whr ? Tensor::empty({z.T, B, H}, dt) : Tensor();
  T *dgi = dgi_t.data<T>(), *dgh = dgh_t.data<T>(), *dh = dh_t.data<T>(), *tmp = tmp_t.data<T>();
  T* dc = dc_t.data<T>();
  std::copy(gh, gh + BP, dh);
  if (mode == RnnMode::Lstm) std::copy(gc, gc + BH, dc);
  std::optional<BlasOnCallingThread> one_thread(std::in_place);
  for (int64_t s = z.T - 1; s >= 0; --s) {
    check_interrupt();
    const int64_t t = ord.time(s);
    const T* hprev = s == 0 ? h0 : ys + ord.prev(t) * BP;
    const T* g = gates + t * B * GH;
    const T* gyt = gy + t * BP;
    T* d = dgi + t * B * GH;
    switch (mode) {
      case RnnMode::Tanh:
      case RnnMode::Relu: {
        const T* y = ys + t * BP;
        if (mode == RnnMode::Tanh)
          for (int64_t i = 0; i < BH; ++i) d[i] = (gyt[i] + dh[i]) * (T(1) - y[i] * y[i]);
        else
          for (int64_t i = 0; i < BH; ++i) d[i] = y[i] > T(0) ? gyt[i] + dh[i] : T(0);
        gemm<T>(false, false, B, P, GH, d, whh, T(0), dh);
        break;
      }
      case RnnMode::Lstm: {
        const T* cprev = s == 0 ? c0 : cs + ord.prev(t) * BH;
        const T* c = cs + t * BH;
        if (whr) {
          T* dp = dproj_t.data<T>() + t * BP;
          for (int64_t i = 0; i < BP; ++i) dp[i] = gyt[i] + dh[i];
          T* hp = hp_t.data<T>() + t * BH;
          for (int64_t b = 0; b < B; ++b)
            for (int64_t j = 0; j < H; ++j) hp[b * H + j] = g[b * GH + 3 * H + j] * tanh_of(c[b * H + j]);
          gemm<T>(false, false, B, H, P, dp, whr, T(0), tmp);
        } else {
          for (int64_t i = 0; i < BH; ++i) tmp[i] = gyt[i] + dh[i];
        }
        for (int64_t b = 0; b < B; ++b) {
          const T* gb = g + b * GH;
          T* db = d + b * GH;
          for (int64_t j = 0; j < H; ++j) {
            const T i = gb[j], f = gb[H + j], gg = gb[2 * H + j], o = gb[3 * H + j];
            const T dhp = tmp[b * H + j], tc = tanh_of(c[b * H + j]);
            const T dct = dc[b * H + j] + dhp * o * (T(1) - tc * tc);
            db[j] = dct * gg * i * (T(1) - i);
            db[H + j] = dct * cprev[b * H + j] * f * (T(1) - f);
            db[2 * H + j] = dct * i * (T(1) - gg * gg);
            db[3 * H + j] = dhp * tc * o * (T(1) - o);
            dc[b * H + j] = dct * f;
          }
        }
        gemm<T>(false, false, B, P, GH, d, whh, T(0), dh);
        break;
      }
      case RnnMode::Gru: {
        const T* hn = ghn + t * BH;
        T* dhh = dgh + t * B * GH;
        for (int64_t i = 0; i < BH; ++i) tmp[i] = gyt[i] + dh[i];
        for (int64_t b = 0; b < B; ++b) {
          const T* gb = g + b * GH;
          T* db = d + b * GH;
          T* dhb = dhh + b * GH;
          for (int64_t j = 0; j < H; ++j) {
            const T r = gb[j], u = gb[H + j], n = gb[2 * H + j], dy = tmp[b * H + j];
            const T dn = dy * (T(1) - u) * (T(1) - n * n);
            const T du = dy * (hprev[b * H + j] - n) * u * (T(1) - u);
            const T dr = dn * hn[b * H + j] * r * (T(1) - r);
            db[j] = dr, db[H + j] = du, db[2 * H + j] = dn;
            dhb[j] = dr, dhb[H + j] = du, dhb[2 * H + j] = dn * r;
            dh[b * H + j] = dy * u;
          }
        }
        gemm<T>(false, false, B, P, GH, dhh, whh, T(1), dh);
        break;
      }
    }
  }
  one_thread.reset();
  if (out.h0.defined()) std::copy(dh, dh + BP, out.h0.data<T>());
  if (out.c0.defined()) std::copy(dc, dc + BH, out.c0.data<T>());
  if (out.x.defined()) gemm<T>(false, false, TB, z.I, GH, dgi, wih, T(0), out.x.data<T>());
  if (out.w_ih.defined()) gemm<T>(true, false, GH, z.I, TB, dgi, x, T(0), out.w_ih.data<T>());
  if (out.w_hh.defined()) {
    // Step s's product takes the h of the step before it: h0 for the first step processed,
    // which is time 0 forwards and time T-1 in reverse; the others are the outputs shifted
    // by one step.
    T* dw = out.w_hh.data<T>();
    const int64_t first = ord.time(0);
    gemm<T>(true, false, GH, P, B, dgh + first * B * GH, h0, T(0), dw);
    if (z.T > 1) {
      const T* dg_rest = ord.reverse ? dgh : dgh + B * GH;
      const T* h_rest = ord.reverse ? ys + BP : ys;
      gemm<T>(true, false, GH, P, (z.T - 1) * B, dg_rest, h_rest, T(1), dw);
    }
  }
  auto column_sums = [&](const T* m, Tensor& dst) {
    T* o = dst.data<T>();
    std::fill(o, o + GH, T(0));
    for (int64_t r = 0; r < TB; ++r)
      for (int64_t j = 0; j < GH; ++j) o[j] += m[r * GH + j];
  };
  if (out.b_ih.defined()) column_sums(dgi, out.b_ih);
  if (out.b_hh.defined()) column_sums(dgh, out.b_hh);
  if (out.w_hr.defined()) gemm<T>(true, false, P, H, TB, dproj_t.data<T>(), hp_t.data<T>(), T(0), out.w_hr.data<T>());
}

// The layer composed from differentiable ops, step by step as torch_nn_rnn.lua composes it
// for other devices; the result packed as the node's output is (outputs, h_n[, c_n]).
// Backward with create_graph=true differentiates this, so that second derivatives exist.
Tensor composed_layer(RnnMode mode, const Order& ord, int64_t H, const Tensor& x, const Tensor& h0, const Tensor& c0,
                      const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh,
                      const Tensor& w_hr) {
  auto opt = [](const Tensor& t) { return t.defined() ? &t : nullptr; };
  auto gate = [H](const Tensor& g, int64_t k) { return narrow(g, 1, k * H, H); };
  auto act = [](UnaryOp op, const Tensor& v) { return unary(op, v); };
  const Tensor gi = linear(x, w_ih, opt(b_ih));
  Tensor h = h0, c = c0;
  std::vector<Tensor> outs(size_t(ord.T));
  for (int64_t s = 0; s < ord.T; ++s) {
    const int64_t t = ord.time(s);
    const Tensor a = select(gi, 0, t), b = linear(h, w_hh, opt(b_hh));
    switch (mode) {
      case RnnMode::Tanh: h = act(UnaryOp::Tanh, a + b); break;
      case RnnMode::Relu: h = act(UnaryOp::Relu, a + b); break;
      case RnnMode::Lstm: {
        const Tensor g = a + b;
        c = act(UnaryOp::Sigmoid, gate(g, 1)) * c + act(UnaryOp::Sigmoid, gate(g, 0)) * act(UnaryOp::Tanh, gate(g, 2));
        h = act(UnaryOp::Sigmoid, gate(g, 3)) * act(UnaryOp::Tanh, c);
        if (w_hr.defined()) h = linear(h, w_hr, nullptr);
        break;
      }
      case RnnMode::Gru: {
        const Tensor r = act(UnaryOp::Sigmoid, gate(a, 0) + gate(b, 0));
        const Tensor z = act(UnaryOp::Sigmoid, gate(a, 1) + gate(b, 1));
        const Tensor n = act(UnaryOp::Tanh, gate(a, 2) + r * gate(b, 2));
        h = n + z * (h - n);
        break;
      }
    }
    outs[size_t(t)] = h;
  }
  const Tensor y = stack(outs, 0);
  std::vector<Tensor> parts{reshape(y, {y.numel()}), reshape(h, {h.numel()})};
  if (mode == RnnMode::Lstm) parts.push_back(reshape(c, {c.numel()}));
  return cat(parts, 0);
}

// Checks a tensor argument: on x's device, of x's dtype and of the expected shape.
void check_arg(const Tensor& t, const char* what, const Tensor& x, const Dims& shape) {
  TIDE_CHECK(t.device() == x.device(), kOp, ": ", what, " is on ", t.device().str(), " but x is on ", x.device().str());
  TIDE_CHECK(t.dtype() == x.dtype(), kOp, ": ", what, " has dtype ", dtype_name(t.dtype()), " but x has dtype ",
             dtype_name(x.dtype()));
  TIDE_CHECK(t.sizes() == shape, kOp, ": ", what, " must have shape ", shape.str(), ", got ", t.sizes().str());
}

template <typename Fn>
void dispatch(DType dt, Fn&& fn) {
  if (dt == DType::Float32) fn(float{});
  else fn(double{});
}

}  // namespace

int rnn_gates(RnnMode mode) {
  switch (mode) {
    case RnnMode::Lstm: return 4;
    case RnnMode::Gru: return 3;
    default: return 1;
  }
}

RnnLayerResult rnn_layer(RnnMode mode, const Tensor& x, const Tensor& h0, const Tensor* c0, const Tensor& w_ih,
                         const Tensor& w_hh, const Tensor* b_ih, const Tensor* b_hh, const Tensor* w_hr, bool reverse) {
  const bool lstm = mode == RnnMode::Lstm;
  TIDE_CHECK(is_floating(x.dtype()), kOp, ": x must be a floating-point tensor, got dtype ", dtype_name(x.dtype()));
  TIDE_CHECK(x.dim() == 3, kOp, ": x must be 3-D (T, B, input_size), got shape ", x.sizes().str());
  TIDE_CHECK(w_ih.dim() == 2 && w_hh.dim() == 2, kOp, ": w_ih and w_hh must be 2-D, got shapes ", w_ih.sizes().str(),
             " and ", w_hh.sizes().str());
  const int G = rnn_gates(mode);
  TIDE_CHECK(w_ih.size(0) % G == 0 && w_ih.size(0) > 0, kOp, ": w_ih has ", w_ih.size(0), " rows, not a positive multiple of ",
             G, " gates");
  Sizes z{x.size(0), x.size(1), x.size(2), w_ih.size(0) / G, 0, G};
  TIDE_CHECK(z.T > 0, kOp, ": the sequence must have at least one step, got x of shape ", x.sizes().str());
  TIDE_CHECK(!w_hr || lstm, kOp, ": w_hr (a projection) is only for LSTM");
  if (w_hr) TIDE_CHECK(w_hr->dim() == 2, kOp, ": w_hr must be 2-D, got shape ", w_hr->sizes().str());
  z.P = w_hr ? w_hr->size(0) : z.H;
  check_arg(w_ih, "w_ih", x, {z.gh(), z.I});
  check_arg(w_hh, "w_hh", x, {z.gh(), z.P});
  if (w_hr) check_arg(*w_hr, "w_hr", x, {z.P, z.H});
  if (b_ih) check_arg(*b_ih, "b_ih", x, {z.gh()});
  if (b_hh) check_arg(*b_hh, "b_hh", x, {z.gh()});
  check_arg(h0, "h0", x, {z.B, z.P});
  TIDE_CHECK(lstm == (c0 != nullptr), kOp, lstm ? ": c0 is required for LSTM" : ": c0 is only for LSTM");
  if (c0) check_arg(*c0, "c0", x, {z.B, z.H});
  // The BLAS calls take int sizes.
  TIDE_CHECK(z.T * z.B <= INT_MAX && z.gh() <= INT_MAX && z.I <= INT_MAX && z.P <= INT_MAX, kOp, ": sizes too large (T * B = ",
             z.T * z.B, ", gates * hidden = ", z.gh(), ")");

  const Order ord{z.T, reverse};
  const int64_t n_y = z.T * z.B * z.P, n_h = z.B * z.P, n_c = lstm ? z.B * z.H : 0;
  // The results: views of the one packed output (outputs, h_n, c_n).
  auto unpack = [&](const Tensor& packed) {
    RnnLayerResult r;
    r.output = reshape(narrow(packed, 0, 0, n_y), {z.T, z.B, z.P});
    r.h_n = reshape(narrow(packed, 0, n_y, n_h), {z.B, z.P});
    if (lstm) r.c_n = reshape(narrow(packed, 0, n_y + n_h, n_c), {z.B, z.H});
    return r;
  };
  const DType dt = x.dtype();
  if (!x.device().is_cpu() || (dt != DType::Float32 && dt != DType::Float64)) {
    // Other devices and dtypes: the steps composed from tensor ops (and their gradients).
    auto def = [](const Tensor* t) { return t ? *t : Tensor(); };
    return unpack(composed_layer(mode, ord, z.H, x, h0, def(c0), w_ih, w_hh, def(b_ih), def(b_hh), def(w_hr)));
  }

  const Tensor xc = x.contiguous(), h0c = h0.contiguous(), c0c = c0 ? c0->contiguous() : Tensor();
  const Tensor wih = w_ih.contiguous(), whh = w_hh.contiguous();
  const Tensor bih = b_ih ? b_ih->contiguous() : Tensor(), bhh = b_hh ? b_hh->contiguous() : Tensor();
  const Tensor whr = w_hr ? w_hr->contiguous() : Tensor();
  Workspace ws;
  ws.gates = Tensor::empty({z.T, z.B, z.gh()}, dt);
  ws.ys = Tensor::empty({z.T, z.B, z.P}, dt);
  if (lstm) ws.cs = Tensor::empty({z.T, z.B, z.H}, dt);
  if (mode == RnnMode::Gru) ws.ghn = Tensor::empty({z.T, z.B, z.H}, dt);
  // One output for the node: the outputs, h_n and (LSTM) c_n, one after the other.
  Tensor packed = Tensor::empty({n_y + n_h + n_c}, dt);
  const int64_t last = ord.time(z.T - 1);
  // The loop runs as one host kernel (DeviceBackend::host), so torch.compile records it.
  run_host_kernel(kOp, {&xc, &h0c, &c0c, &wih, &whh, &bih, &bhh, &whr, &ws.gates, &ws.ys, &ws.cs, &ws.ghn, &packed},
                  [=]() mutable {
    const Weights w{pointer(wih), pointer(whh), pointer(bih), pointer(bhh), pointer(whr)};
    dispatch(dt, [&](auto tag) {
      using T = decltype(tag);
      forward_loop<T>(mode, z, ord, xc.data<T>(), h0c.data<T>(), lstm ? c0c.data<T>() : nullptr, w, ws);
      const T* ys = ws.ys.data<T>();
      T* p = packed.data<T>();
      std::copy(ys, ys + n_y, p);
      std::copy(ys + last * n_h, ys + (last + 1) * n_h, p + n_y);
      if (lstm) std::copy(ws.cs.data<T>() + last * n_c, ws.cs.data<T>() + (last + 1) * n_c, p + n_y + n_h);
    });
  });

  if (autograd::needs_recording({&x, &h0, c0, &w_ih, &w_hh, b_ih, b_hh, w_hr})) {
    // Backward needs the inputs as they were (saved with their versions) and the workspace.
    struct Saved {
      SavedTensor x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr;
    } sv{SavedTensor::input(x), SavedTensor::input(h0), c0 ? SavedTensor::input(*c0) : SavedTensor(),
         SavedTensor::input(w_ih), SavedTensor::input(w_hh), b_ih ? SavedTensor::input(*b_ih) : SavedTensor(),
         b_hh ? SavedTensor::input(*b_hh) : SavedTensor(), w_hr ? SavedTensor::input(*w_hr) : SavedTensor()};
    auto fn = [mode, z, ord, sv, ws, n_y, n_h](const Tensor& grad, const Node& node) -> std::vector<Tensor> {
      auto un = [&](const SavedTensor& s) { return s.defined() ? s.unpack(node) : Tensor(); };
      // Unpacked also when unused, so that an in-place change of any of them is reported.
      const std::vector<Tensor> saved{un(sv.x),    un(sv.h0),   un(sv.c0),   un(sv.w_ih),
                                      un(sv.w_hh), un(sv.b_ih), un(sv.b_hh), un(sv.w_hr)};
      if (autograd::grad_enabled()) {
        // create_graph=true: the gradients of the same layer composed from differentiable ops.
        const Tensor packed = composed_layer(mode, ord, z.H, saved[0], saved[1], saved[2], saved[3], saved[4],
                                             saved[5], saved[6], saved[7]);
        std::vector<Tensor> wrt;
        std::vector<size_t> which;
        for (size_t i = 0; i < saved.size(); ++i) {
          if (saved[i].defined() && node.needs_grad(i)) wrt.push_back(saved[i]), which.push_back(i);
        }
        std::vector<Tensor> gs = autograd::grad({packed}, {grad}, wrt, true, true, true, kOp);
        std::vector<Tensor> out(saved.size());
        for (size_t k = 0; k < which.size(); ++k) out[which[k]] = gs[k];
        return out;
      }
      const Tensor xs = saved[0].contiguous(), h0s = saved[1].contiguous();
      const Tensor c0s = saved[2].defined() ? saved[2].contiguous() : Tensor();
      const Tensor wih = saved[3].contiguous(), whh = saved[4].contiguous();
      const Tensor bih = saved[5].defined() ? saved[5].contiguous() : Tensor();
      const Tensor bhh = saved[6].defined() ? saved[6].contiguous() : Tensor();
      const Tensor whr = saved[7].defined() ? saved[7].contiguous() : Tensor();
      const Tensor g = grad.contiguous();
      const DType dt = g.dtype();
      auto grad_for = [&](size_t i, const Tensor& like) {
        return node.needs_grad(i) ? Tensor::empty(like.sizes(), dt) : Tensor();
      };
      LayerGrads out{grad_for(0, xs), grad_for(1, h0s), c0s.defined() ? grad_for(2, c0s) : Tensor(),
                     grad_for(3, wih), grad_for(4, whh), bih.defined() ? grad_for(5, bih) : Tensor(),
                     bhh.defined() ? grad_for(6, bhh) : Tensor(), whr.defined() ? grad_for(7, whr) : Tensor()};
      run_host_kernel(kOp, {&xs, &h0s, &c0s, &wih, &whh, &bih, &bhh, &whr, &g, &ws.gates, &ws.ys, &ws.cs, &ws.ghn,
                            &out.x, &out.h0, &out.c0, &out.w_ih, &out.w_hh, &out.b_ih, &out.b_hh, &out.w_hr},
                      [=]() mutable {
        const Weights w{pointer(wih), pointer(whh), pointer(bih), pointer(bhh), pointer(whr)};
        dispatch(dt, [&](auto tag) {
          using T = decltype(tag);
          const T* gp = g.data<T>();
          backward_loop<T>(mode, z, ord, xs.data<T>(), h0s.data<T>(), c0s.defined() ? c0s.data<T>() : nullptr, w, ws,
                           gp, gp + n_y, mode == RnnMode::Lstm ? gp + n_y + n_h : nullptr, out);
        });
      });
      return {out.x, out.h0, out.c0, out.w_ih, out.w_hh, out.b_ih, out.b_hh, out.w_hr};
    };
    autograd::record(kOp, packed, {&x, &h0, c0, &w_ih, &w_hh, b_ih, b_hh, w_hr}, std::move(fn));
  }
  return unpack(packed);
}

}  // namespace tide::ag
