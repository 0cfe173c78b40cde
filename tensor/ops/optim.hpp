// Fused optimizer steps: each call updates one parameter and its state buffers in place in
// a single pass over the elements, with PyTorch 1.13's single-tensor formulas (sgd.py,
// adam.py, adamw.py, rmsprop.py, adamax.py, nadam.py, radam.py, adagrad.py) and no
// temporaries. The parameter is float16, bfloat16, float32 or float64 (halves are computed
// in float32); the gradient and every state buffer have its shape and dtype. The parameter's
// version is bumped like any in-place write.
#pragma once
#include <cstdint>

#include "../tensor.hpp"

namespace tide {
// The fused optimizers (tensor/ops/optim_update.hpp has their per-element updates).
enum class OptimKind : uint8_t { Sgd, Adam, Rmsprop, Adamax, Nadam, Radam, Adagrad };
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

// Adamax, NAdam, RAdam and Adagrad compute each element as torch.optim's tensor ops did one
// op at a time (bindings/lua/torch_optim.lua before these steps were fused, commit 814d5af):
// every intermediate is rounded to the parameter's dtype, every number (hyper-parameters,
// and the step-dependent values, computed in float64 from the count as PyTorch's Python
// floats) is rounded to that dtype before it meets a tensor, and no multiplication is fused
// with an addition; so the results are those ops' bits, on every dtype.
//
// zero_dim (set by the step from the parameter, not an option of the bindings): those ops
// held the step-dependent values in zero-dim float64 tensors, and next to a zero-dim
// parameter's tensors such a tensor promotes the op to float64 (a dimensioned tensor keeps
// its dtype); the steps reproduce that, computing the ops that take a step-dependent value
// in float64 there. (PyTorch 1.13, whose values are Python floats, and tide before 814d5af
// compute them in the parameter's dtype: the last bits of a float32, float16 or bfloat16
// zero-dim parameter differ from theirs. Without zero_dim they are theirs.)

struct AdamaxOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  int64_t step = 1;  // as AdamOptions
  StepCounter counter;
  bool maximize = false;
  bool zero_dim = false;
};

// Adamax (adamax.py): State {exp_avg, exp_inf}.
void adamax_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                  const AdamaxOptions& o, const Tensor* step_count = nullptr);

struct NadamOptions {
  double lr = 2e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3;
  int64_t step = 1;  // as AdamOptions
  StepCounter counter;
  // The state's mu_product, the product of the momentum coefficients so far: one float32 or
  // float64 element in CPU memory (PyTorch's zero-dim tensor), multiplied by this step's mu
  // (rounded to its dtype) inside the device-table call, as the count is advanced.
  StepCounter mu_product;
  bool zero_dim = false;
};

// NAdam (nadam.py): State {exp_avg, exp_avg_sq}; mu_product is the state's tensor.
void nadam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& mu_product, const NadamOptions& o, const Tensor* step_count = nullptr);

struct RadamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  int64_t step = 1;  // as AdamOptions
  StepCounter counter;
  bool zero_dim = false;
};

// RAdam (radam.py): State {exp_avg, exp_avg_sq}; the rectified step once rho_t > 5.
void radam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const RadamOptions& o, const Tensor* step_count = nullptr);

struct AdagradOptions {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, eps = 1e-10;
  int64_t step = 1;  // as AdamOptions: the rate decays by the count before this step
  StepCounter counter;
  bool maximize = false;
  bool zero_dim = false;  // used with lr_decay != 0 only (a constant rate is a number)
};

// Adagrad (adagrad.py, dense gradients): State {sum}.
void adagrad_step_(const Tensor& param, const Tensor& grad, const Tensor& sum, const AdagradOptions& o,
                   const Tensor* step_count = nullptr);

}  // namespace tide::ops
