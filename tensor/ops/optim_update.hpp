// The per-element updates of the fused optimizer steps (PyTorch 1.13's single-tensor
// formulas of sgd.py, adam.py, adamw.py, rmsprop.py, adamax.py, nadam.py, radam.py,
// adagrad.py), as functors over compute-precision values that the CPU loop (optim.cpp) and
// the CUDA kernel (tensor/cuda/) both instantiate.
//
// An update U has `static constexpr int kStates` and `operator()(C& p, C g, C* s)`: p the
// parameter, g the gradient, s[0..kStates) the state buffers in the order listed below.
// with_update<T>(kind, options, f) calls f(U{...}) with the functor the options select for
// parameters of storage type T (C = compute_t<T>).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include "../error.hpp"
#include "../half.hpp"
#include "optim.hpp"

namespace tide::ops {

// torch.maximum's rule: NaN wins.
template <typename C>
TIDE_HOST_DEVICE inline C nan_max(C a, C b) {
  return b != b ? b : (a < b ? b : a);
}

// SGD; states {momentum_buffer} with momentum.
template <typename C, bool WithMomentum>
struct SgdUpdate {
  static constexpr int kStates = WithMomentum ? 1 : 0;
  C lr, wd, mom, keep;
  bool decay, nesterov, maximize, new_buffer;
  explicit SgdUpdate(const SgdOptions& o)
      : lr(C(o.lr)), wd(C(o.weight_decay)), mom(C(o.momentum)), keep(C(1 - o.dampening)),
        decay(o.weight_decay != 0), nesterov(o.nesterov), maximize(o.maximize), new_buffer(o.new_buffer) {}
  TIDE_HOST_DEVICE void operator()(C& p, C g, C* s) const {
    C d = maximize ? -g : g;
    if (decay) d = d + wd * p;
    if constexpr (WithMomentum) {
      C& buf = s[0];
      buf = new_buffer ? d : buf * mom + keep * d;
      d = nesterov ? d + mom * buf : buf;
    }
    p = p + -lr * d;
  }
};

// Adam / AdamW (the non-capturable branch); states {exp_avg, exp_avg_sq[, max_exp_avg_sq]}.
template <typename C, bool Amsgrad>
struct AdamUpdate {
  static constexpr int kStates = Amsgrad ? 3 : 2;
  C beta1, beta2, rest1, rest2, eps, wd, neg_step_size, param_decay, bc2_sqrt;
  bool decoupled, decay, maximize;
  // Bias corrections in double, from the step count, as Python computes them.
  explicit AdamUpdate(const AdamOptions& o)
      : beta1(C(o.beta1)), beta2(C(o.beta2)), rest1(C(1 - o.beta1)), rest2(C(1 - o.beta2)), eps(C(o.eps)),
        wd(C(o.weight_decay)), neg_step_size(C(-(o.lr / (1 - std::pow(o.beta1, double(o.step)))))),
        param_decay(C(1 - o.lr * o.weight_decay)), bc2_sqrt(C(std::sqrt(1 - std::pow(o.beta2, double(o.step))))),
        decoupled(o.decoupled_weight_decay), decay(o.weight_decay != 0), maximize(o.maximize) {}
  TIDE_HOST_DEVICE void operator()(C& p, C g, C* s) const {
    if (maximize) g = -g;
    if (decoupled)
      p = p * param_decay;
    else if (decay)
      g = g + wd * p;
    C& m = s[0];
    C& v = s[1];
    m = m * beta1 + rest1 * g;
    v = v * beta2 + rest2 * g * g;
    C v_used = v;
    if constexpr (Amsgrad) v_used = s[2] = nan_max(s[2], v);
    const C denom = std::sqrt(v_used) / bc2_sqrt + eps;
    p = p + neg_step_size * m / denom;
  }
};

// RMSprop; states {square_avg[, grad_avg (centered)][, momentum_buffer (momentum > 0)]}.
template <typename C, bool Centered, bool WithMomentum>
struct RmspropUpdate {
  static constexpr int kStates = 1 + Centered + WithMomentum;
  static constexpr int kGradAvg = 1, kMomentum = Centered ? 2 : 1;
  C alpha, rest, eps, wd, mom, neg_lr;
  bool decay, maximize;
  explicit RmspropUpdate(const RmspropOptions& o)
      : alpha(C(o.alpha)), rest(C(1 - o.alpha)), eps(C(o.eps)), wd(C(o.weight_decay)), mom(C(o.momentum)),
        neg_lr(C(-o.lr)), decay(o.weight_decay != 0), maximize(o.maximize) {}
  TIDE_HOST_DEVICE void operator()(C& p, C g, C* s) const {
    if (maximize) g = -g;
    if (decay) g = g + wd * p;
    C& sq = s[0];
    sq = sq * alpha + rest * g * g;
    C avg;
    if constexpr (Centered) {
      C& ga = s[kGradAvg];
      ga = ga * alpha + rest * g;
      avg = std::sqrt(sq - ga * ga);
    } else {
      avg = std::sqrt(sq);
    }
    avg = avg + eps;
    if constexpr (WithMomentum) {
      C& buf = s[kMomentum];
      buf = buf * mom + g / avg;
      p = p + neg_lr * buf;
    } else {
      p = p + neg_lr * g / avg;
    }
  }
};

// ---- Adamax, NAdam, RAdam, Adagrad: torch.optim's tensor ops, one at a time -------------
// These updates compute what bindings/lua/torch_optim.lua computed with one tensor op per
// line before they were fused (optim.hpp), to the bit: each op's result is rounded to the
// storage type T (a no-op for float32 and float64), a number meets a T tensor rounded to T
// (Scalar::to<T>, as the pointwise kernels take it), and a product is never fused with the
// sum it feeds (the compiler contracts a * b + c into an fma on targets that have one:
// mul_rn rounds the product on its own). The step-dependent values are computed once per
// step on the host in float64 from the count, by the IEEE operations (and libm pow) the
// zero-dim float64 tensor ops did, in their order. With zero_dim, the ops that took such a
// value compute in float64 (W: the value widened) and their results are cast back to T as
// an in-place op's float64 result is (through float for the half types).

// Inlined into the element loop whatever its size (a call per operation, as GCC left the
// bfloat16 ones, made the loop scalar and ten times slower).
#if defined(__CUDACC__)
#define TIDE_OPTIM_INLINE __host__ __device__ __forceinline__
#else
#define TIDE_OPTIM_INLINE __attribute__((always_inline)) inline
#endif

// a * b rounded to C, never contracted with an addition into one fma.
template <typename C>
TIDE_OPTIM_INLINE C mul_rn(C a, C b) {
#if defined(__CUDA_ARCH__)
  if constexpr (std::is_same_v<C, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#elif defined(__FP_FAST_FMA) || defined(__FP_FAST_FMAF)
  return std::fma(a, b, C(-0.0));  // a * b + (-0): exactly a * b, rounded once, zeros' signs kept
#else
  return a * b;  // no fma on this target: nothing to contract into
#endif
}

// c ? x : y by bit masks: x and y are computed either way. (Of a ?: whose x is used nowhere
// else the compiler makes a branch with x's arithmetic inside, which it may not run for
// nothing (it could raise an exception flag) nor, so, turn into vector code.)
template <typename C>
TIDE_OPTIM_INLINE C pick(bool c, C x, C y) {
  using U = std::conditional_t<sizeof(C) == 4, uint32_t, uint64_t>;
  static_assert(sizeof(C) == sizeof(U));
  U ux, uy;
  std::memcpy(&ux, &x, sizeof(C));
  std::memcpy(&uy, &y, sizeof(C));
  const U mask = U(0) - U(c);
  const U r = (ux & mask) | (uy & ~mask);
  C out;
  std::memcpy(&out, &r, sizeof(C));
  return out;
}

// The op-by-op arithmetic on values of a T tensor (computed in C = compute_t<T>).
template <typename T>
struct OpByOp {
  using C = compute_t<T>;
  // x stored to a T tensor and loaded back (the bits of C(T(x)), by conversions that keep the
  // loop vector code, or short scalar code for float16 with F16C).
  static TIDE_OPTIM_INLINE C r(C x) {
    if constexpr (std::is_same_v<T, C>) {
      return x;
    } else if constexpr (std::is_same_v<T, BFloat16>) {  // BFloat16::from_float without a branch
      uint32_t u;
      std::memcpy(&u, &x, 4);
      const uint32_t quiet_nan = (u >> 16) | 0x40u, rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
      const uint32_t b = ((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded) << 16;
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    } else {
#if defined(__F16C__) && !defined(__CUDACC__)
      if constexpr (std::is_same_v<T, Half>) return float(_Float16(x));  // IEEE, as Half's (checked for every float)
#endif
      return C(T(x));
    }
  }
  // A float64 value cast to T (a number next to a T tensor, Scalar::to<T>; a zero-dim
  // float64 tensor cast to T; a float64 result stored to a T tensor).
  static TIDE_OPTIM_INLINE C num(double x) { return r(C(x)); }
  static TIDE_OPTIM_INLINE double w(C x) { return double(x); }
  static TIDE_OPTIM_INLINE C add(C a, C b) { return r(a + b); }
  static TIDE_OPTIM_INLINE C sub(C a, C b) { return r(a - b); }
  static TIDE_OPTIM_INLINE C mul(C a, C b) { return r(mul_rn(a, b)); }
  static TIDE_OPTIM_INLINE C div(C a, C b) { return r(a / b); }
  static TIDE_OPTIM_INLINE C sqrt(C a) { return r(std::sqrt(a)); }
  // torch.maximum: NaN wins, the first operand's when both are.
  static TIDE_OPTIM_INLINE C maximum(C a, C b) { return pick(a != a, a, pick(b != b, b, pick(a < b, b, a))); }
  // effective_grad: -g under maximize, then g:add(p, {alpha = weight_decay}).
  static TIDE_OPTIM_INLINE C effective_grad(C p, C g, bool maximize, bool decay, C wd) {
    g = pick(maximize, -g, g);
    return pick(decay, add(g, mul(p, wd)), g);
  }
};

// Adamax; states {exp_avg, exp_inf}. (ZeroDim is a template parameter, here and below: a
// branch on it in the element loop kept the compiler from vectorising the loop.)
template <typename T, bool ZeroDim>
struct AdamaxUpdate : OpByOp<T> {
  using B = OpByOp<T>;
  using C = typename B::C;
  static constexpr int kStates = 2;
  C beta1, rest1, beta2, eps, wd, neg_clr;
  double neg_clr_w;
  bool decay, maximize;
  explicit AdamaxUpdate(const AdamaxOptions& o)
      : beta1(B::num(o.beta1)), rest1(B::num(1 - o.beta1)), beta2(B::num(o.beta2)), eps(B::num(o.eps)),
        wd(B::num(o.weight_decay)),
        // -clr = -lr / (1 - beta1 ** step)
        neg_clr_w(-o.lr / (1 - std::pow(o.beta1, double(o.step)))),
        decay(o.weight_decay != 0), maximize(o.maximize) {
    neg_clr = B::num(neg_clr_w);
  }
  TIDE_OPTIM_INLINE void operator()(C& p, C g, C* s) const {
    g = B::effective_grad(p, g, maximize, decay, wd);
    C& m = s[0];
    C& u = s[1];
    m = B::add(B::mul(m, beta1), B::mul(g, rest1));                     // exp_avg.mul_(b1).add_(g, 1-b1)
    u = B::maximum(B::mul(u, beta2), B::add(std::fabs(g), eps));      // max(exp_inf*b2, |g|+eps)
    if constexpr (ZeroDim)                                            // p.addcdiv_(exp_avg, exp_inf, -clr)
      p = B::num(B::w(p) + mul_rn(B::w(m), neg_clr_w) / B::w(u));
    else
      p = B::add(p, B::div(B::mul(m, neg_clr), u));
  }
};

// NAdam's values of one step, in float64: bias_correction2 and the step sizes of the
// gradient and of exp_avg, from the count and mu_product (advanced here, in its own dtype).
struct NadamScalars {
  double bias_correction2, c_grad, c_avg;
};

inline NadamScalars nadam_scalars(const NadamOptions& o) {
  const double n = double(o.step), beta1 = o.beta1, decay = o.momentum_decay;
  // mu = beta1 * (1 - 0.5 * 0.96 ** (step * momentum_decay)); mu_next at step + 1
  const double mu = mul_rn(1 - mul_rn(std::pow(0.96, mul_rn(n, decay)), 0.5), beta1);
  const double mu_next = mul_rn(1 - mul_rn(std::pow(0.96, mul_rn(n + 1, decay)), 0.5), beta1);
  // mu_product *= mu; mu_product_next = mu_product * mu * mu_next (in mu_product's dtype)
  double product, product_next;
  if (o.mu_product.dtype == DType::Float64) {
    double& mp = *static_cast<double*>(o.mu_product.data);
    mp = mul_rn(mp, mu);
    product = mp;
    product_next = mul_rn(mul_rn(mp, mu), mu_next);
  } else {
    float& mp = *static_cast<float*>(o.mu_product.data);
    mp = mul_rn(mp, float(mu));
    product = mp;
    product_next = mul_rn(mul_rn(mp, float(mu)), float(mu_next));
  }
  return {1 - std::pow(o.beta2, n),                        // 1 - beta2 ** step
          mul_rn(1 - mu, -o.lr) / (1 - product),           // -lr * (1 - mu) / (1 - mu_product)
          mul_rn(mu_next, -o.lr) / (1 - product_next)};    // -lr * mu_next / (1 - mu_product_next)
}

// NAdam; states {exp_avg, exp_avg_sq}.
template <typename T, bool ZeroDim>
struct NadamUpdate : OpByOp<T> {
  using B = OpByOp<T>;
  using C = typename B::C;
  static constexpr int kStates = 2;
  C beta1, rest1, beta2, rest2, eps, wd, bias_correction2, c_grad, c_avg;
  NadamScalars k;
  double eps_w;
  bool decay;
  NadamUpdate(const NadamOptions& o, const NadamScalars& scalars)
      : beta1(B::num(o.beta1)), rest1(B::num(1 - o.beta1)), beta2(B::num(o.beta2)), rest2(B::num(1 - o.beta2)),
        eps(B::num(o.eps)), wd(B::num(o.weight_decay)), bias_correction2(B::num(scalars.bias_correction2)),
        c_grad(B::num(scalars.c_grad)), c_avg(B::num(scalars.c_avg)), k(scalars), eps_w(o.eps),
        decay(o.weight_decay != 0) {}
  TIDE_OPTIM_INLINE void operator()(C& p, C g, C* s) const {
    g = B::effective_grad(p, g, false, decay, wd);
    C& m = s[0];
    C& v = s[1];
    m = B::add(B::mul(m, beta1), B::mul(g, rest1));
    v = B::add(B::mul(v, beta2), B::mul(B::mul(g, rest2), g));        // addcmul_(g, g, 1 - b2)
    if constexpr (ZeroDim) {  // denom is a float64 tensor there
      const double denom = std::sqrt(B::w(v) / k.bias_correction2) + eps_w;
      p = B::num(B::w(p) + mul_rn(B::w(g), k.c_grad) / denom);
      p = B::num(B::w(p) + mul_rn(B::w(m), k.c_avg) / denom);
      return;
    }
    const C denom = B::add(B::sqrt(B::div(v, bias_correction2)), eps);
    p = B::add(p, B::div(B::mul(g, c_grad), denom));                 // p.addcdiv_(g, denom, c_grad)
    p = B::add(p, B::div(B::mul(m, c_avg), denom));                  // p.addcdiv_(exp_avg, denom, c_avg)
  }
};

// RAdam; states {exp_avg, exp_avg_sq}. Both steps are computed and the rectified one taken
// once rho_t > 5 (a select, not a branch: vector code).
template <typename T, bool ZeroDim>
struct RadamUpdate : OpByOp<T> {
  using B = OpByOp<T>;
  using C = typename B::C;
  static constexpr int kStates = 2;
  C beta1, rest1, beta2, rest2, eps, wd, lr, bias_correction1, bias_correction2_sqrt, rect;
  double lr_w, bias_correction1_w, bias_correction2_sqrt_w, rect_w;
  bool decay, rectified;
  explicit RadamUpdate(const RadamOptions& o)
      : beta1(B::num(o.beta1)), rest1(B::num(1 - o.beta1)), beta2(B::num(o.beta2)), rest2(B::num(1 - o.beta2)),
        eps(B::num(o.eps)), wd(B::num(o.weight_decay)), lr(B::num(o.lr)), lr_w(o.lr), decay(o.weight_decay != 0) {
    const double n = double(o.step);
    const double beta2_t = std::pow(o.beta2, n);
    const double bc2 = 1 - beta2_t;
    const double rho_inf = 2 / (1 - o.beta2) - 1;
    // rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
    const double rho_t = rho_inf - mul_rn(mul_rn(n, 2.0), beta2_t) / bc2;
    // rect = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
    // NaN for some rho_t <= 5, where it is not used
    rect_w = std::sqrt(mul_rn(mul_rn(rho_t - 4, rho_t - 2), rho_inf) / mul_rn(rho_t, mul_rn(rho_inf - 4, rho_inf - 2)));
    bias_correction1_w = 1 - std::pow(o.beta1, n);
    bias_correction2_sqrt_w = std::sqrt(bc2);
    rectified = rho_t > 5;
    bias_correction1 = B::num(bias_correction1_w);
    bias_correction2_sqrt = B::num(bias_correction2_sqrt_w);
    rect = B::num(rect_w);
  }
  TIDE_OPTIM_INLINE void operator()(C& p, C g, C* s) const {
    g = B::effective_grad(p, g, false, decay, wd);
    C& m = s[0];
    C& v = s[1];
    m = B::add(B::mul(m, beta1), B::mul(g, rest1));
    v = B::add(B::mul(v, beta2), B::mul(B::mul(g, rest2), g));
    // adaptive_lr = exp_avg_sq.sqrt().add_(eps).reciprocal() * sqrt(bias_correction2)
    if constexpr (ZeroDim) {  // bias_corrected_exp_avg and what it multiplies are float64 tensors there
      const double plain = mul_rn(B::w(m) / bias_correction1_w, lr_w);  // bias_corrected_exp_avg * lr
      const C adaptive_lr = B::num(mul_rn(B::w(B::div(C(1), B::add(B::sqrt(v), eps))), bias_correction2_sqrt_w));
      const double rectified_step = mul_rn(mul_rn(plain, B::w(adaptive_lr)), rect_w);  // * adaptive_lr * rect
      p = B::num(B::w(p) - pick(rectified, rectified_step, plain));
    } else {
      const C plain = B::mul(B::div(m, bias_correction1), lr);
      const C adaptive_lr = B::mul(B::div(C(1), B::add(B::sqrt(v), eps)), bias_correction2_sqrt);
      const C rectified_step = B::mul(B::mul(plain, adaptive_lr), rect);
      p = B::sub(p, pick(rectified, rectified_step, plain));
    }
  }
};

// Adagrad; states {sum}. ZeroDim only with lr_decay != 0 (a constant rate is a number).
template <typename T, bool ZeroDim>
struct AdagradUpdate : OpByOp<T> {
  using B = OpByOp<T>;
  using C = typename B::C;
  static constexpr int kStates = 1;
  C eps, wd, neg_clr;
  double neg_clr_w;
  bool decay, maximize;
  explicit AdagradUpdate(const AdagradOptions& o)
      : eps(B::num(o.eps)), wd(B::num(o.weight_decay)),
        // -clr = -lr / (1 + (step - 1) * lr_decay): a float64 value with a decay, else a number
        neg_clr_w(o.lr_decay != 0 ? -o.lr / (mul_rn(double(o.step - 1), o.lr_decay) + 1) : -o.lr),
        decay(o.weight_decay != 0), maximize(o.maximize) {
    neg_clr = B::num(neg_clr_w);
  }
  TIDE_OPTIM_INLINE void operator()(C& p, C g, C* s) const {
    g = B::effective_grad(p, g, maximize, decay, wd);
    C& sum = s[0];
    sum = B::add(sum, B::mul(g, g));                                  // sum.addcmul_(g, g)
    const C denom = B::add(B::sqrt(sum), eps);
    if constexpr (ZeroDim)                                            // p.addcdiv_(g, denom, -clr)
      p = B::num(B::w(p) + mul_rn(B::w(g), neg_clr_w) / B::w(denom));
    else
      p = B::add(p, B::div(B::mul(g, neg_clr), denom));
  }
};

// Adds one to a step counter and returns the new count (host code, once per step: the
// counter is CPU memory on every device). A count that is not a whole number >= 0 that its
// dtype holds exactly (below 2^24 in float32, 2^53 in float64) is refused, unchanged.
inline int64_t advance_step(const StepCounter& c, const char* opt) {
  const bool f64 = c.dtype == DType::Float64;
  const double before = f64 ? *static_cast<const double*>(c.data) : *static_cast<const float*>(c.data);
  const double limit = f64 ? 9007199254740992.0 : 16777216.0;
  if (!(before >= 0 && before < limit && before == std::floor(before))) {
    std::ostringstream value;
    value << std::setprecision(17) << before;
    TIDE_FAIL(opt, ": the step count tensor holds ", value.str(), ", expected a whole number >= 0");
  }
  if (f64)
    *static_cast<double*>(c.data) = before + 1;
  else
    *static_cast<float*>(c.data) = float(before + 1);
  return int64_t(before) + 1;
}

// Calls f(update) with the update functor for `kind` and its options, for parameters of
// storage type T; a step counter in the options is advanced here, once per call (and NAdam's
// mu_product with it).
template <typename T, typename F>
void with_update(OptimKind kind, const void* options, F&& f) {
  using C = compute_t<T>;
  switch (kind) {
    case OptimKind::Sgd: {
      const auto& o = *static_cast<const SgdOptions*>(options);
      if (o.momentum != 0) f(SgdUpdate<C, true>(o));
      else f(SgdUpdate<C, false>(o));
      break;
    }
    case OptimKind::Adam: {
      AdamOptions o = *static_cast<const AdamOptions*>(options);
      if (o.counter.data) o.step = advance_step(o.counter, o.decoupled_weight_decay ? "AdamW" : "Adam");
      if (o.amsgrad) f(AdamUpdate<C, true>(o));
      else f(AdamUpdate<C, false>(o));
      break;
    }
    case OptimKind::Rmsprop: {
      const auto& o = *static_cast<const RmspropOptions*>(options);
      if (o.counter.data) advance_step(o.counter, "RMSprop");
      const bool m = o.momentum > 0;
      if (o.centered && m) f(RmspropUpdate<C, true, true>(o));
      else if (o.centered) f(RmspropUpdate<C, true, false>(o));
      else if (m) f(RmspropUpdate<C, false, true>(o));
      else f(RmspropUpdate<C, false, false>(o));
      break;
    }
    case OptimKind::Adamax: {
      AdamaxOptions o = *static_cast<const AdamaxOptions*>(options);
      if (o.counter.data) o.step = advance_step(o.counter, "Adamax");
      if (o.zero_dim) f(AdamaxUpdate<T, true>(o));
      else f(AdamaxUpdate<T, false>(o));
      break;
    }
    case OptimKind::Nadam: {
      NadamOptions o = *static_cast<const NadamOptions*>(options);
      if (o.counter.data) o.step = advance_step(o.counter, "NAdam");
      const NadamScalars k = nadam_scalars(o);
      if (o.zero_dim) f(NadamUpdate<T, true>(o, k));
      else f(NadamUpdate<T, false>(o, k));
      break;
    }
    case OptimKind::Radam: {
      RadamOptions o = *static_cast<const RadamOptions*>(options);
      if (o.counter.data) o.step = advance_step(o.counter, "RAdam");
      if (o.zero_dim) f(RadamUpdate<T, true>(o));
      else f(RadamUpdate<T, false>(o));
      break;
    }
    case OptimKind::Adagrad: {
      AdagradOptions o = *static_cast<const AdagradOptions*>(options);
      if (o.counter.data) o.step = advance_step(o.counter, "Adagrad");
      if (o.zero_dim && o.lr_decay != 0) f(AdagradUpdate<T, true>(o));
      else f(AdagradUpdate<T, false>(o));
      break;
    }
  }
}

#undef TIDE_OPTIM_INLINE

}  // namespace tide::ops
