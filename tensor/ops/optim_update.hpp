// The per-element updates of the fused optimizer steps (PyTorch 1.13's single-tensor
// formulas of sgd.py, adam.py, adamw.py, rmsprop.py), as functors over compute-precision
// values that the CPU loop (optim.cpp) and the CUDA kernel (tensor/cuda/) both instantiate.
//
// An update U has `static constexpr int kStates` and `operator()(C& p, C g, C* s)`: p the
// parameter, g the gradient, s[0..kStates) the state buffers in the order listed below.
// with_update(kind, options, C{}, f) calls f(U{...}) with the functor the options select.
#pragma once
#include <cmath>
#include <iomanip>
#include <sstream>

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

// Calls f(update) with the update functor for `kind` and its options (compute type C); a
// step counter in the options is advanced here, once per call.
template <typename C, typename F>
void with_update(OptimKind kind, const void* options, F&& f) {
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
  }
}

}  // namespace tide::ops
