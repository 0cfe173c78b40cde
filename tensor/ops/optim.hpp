// Fused optimizer steps: each call updates one parameter and its state buffers in place in
// a single pass over the elements, with PyTorch 1.13's single-tensor formulas (sgd.py,
// adam.py, adamw.py, rmsprop.py) and no temporaries. The parameter is float16, bfloat16,
// float32 or float64 (halves are computed in float32); the gradient and every state buffer
// have its shape and dtype. The parameter's version is bumped like any in-place write.
#pragma once
#include <cstdint>

#include "../tensor.hpp"

namespace tide {
// The fused optimizers (tensor/ops/optim_update.hpp has their per-element updates).
enum class OptimKind : uint8_t { Sgd, Adam, Rmsprop };
}  // namespace tide

namespace tide::ops {

// A step count kept in a one-element float32 or float64 CPU tensor, as PyTorch keeps the
// state's `step`. The step adds one to it inside the device-table call and uses the new
// count, so a compiled replay (tensor/capture/) goes on counting.
struct StepCounter {
  void* data = nullptr;  // none: the options' fixed `step`
  DType dtype = DType::Float32;
};

struct SgdOptions {
  double lr = 0, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
  // The momentum buffer has no history yet: it takes the gradient as it is (PyTorch clones
  // the gradient into a new buffer on the first step) instead of being decayed.
  bool new_buffer = false;
};

// SGD with momentum, dampening, Nesterov and weight decay. momentum_buffer is required when
// momentum != 0 and unused otherwise (may be nullptr then).
void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor* momentum_buffer,
               const SgdOptions& o);

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  int64_t step = 1;  // the step count including this step (1 on the first), for bias correction
  StepCounter counter;  // when set, the count comes from here instead of `step`
  bool amsgrad = false, maximize = false;
  bool decoupled_weight_decay = false;  // AdamW: decay the parameter, not the gradient
};

// Adam / AdamW. max_exp_avg_sq is required when amsgrad and unused otherwise. step_count,
// when given, is the state's step tensor (StepCounter), which the step advances and uses.
void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
                const Tensor& exp_avg_sq, const Tensor* max_exp_avg_sq, const AdamOptions& o,
                const Tensor* step_count = nullptr);

struct RmspropOptions {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
  StepCounter counter;  // advanced by one when set (RMSprop only counts its steps)
};

// RMSprop. momentum_buffer is required when momentum > 0, grad_avg when centered; each is
// unused otherwise. step_count as for adam_step_.
void rmsprop_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                   const Tensor* momentum_buffer, const Tensor* grad_avg, const RmspropOptions& o,
                   const Tensor* step_count = nullptr);

}  // namespace tide::ops
