// Fused optimizer steps (see optim.hpp): operand checks, one element loop shared by every
// optimizer, and each optimizer's update as a functor over compute-precision values.
#include "optim.hpp"

#include <array>
#include <cmath>
#include <span>
#include <tuple>

#include "../backend.hpp"
#include "../iterator.hpp"
#include "../overlap.hpp"
#include "optim_update.hpp"

namespace tide::ops {

namespace {

// A state buffer of a step and the name errors give it.
struct StateBuffer {
  const Tensor* tensor;
  const char* name;
};

// The gradient or a state buffer must have the parameter's shape and dtype.
void check_like_param(const char* opt, const Tensor& param, const Tensor& t, const char* name) {
  TIDE_CHECK(t.device() == param.device(), opt, ": the ", name, " is on ", t.device().str(), " but the parameter on ",
             param.device().str());
  TIDE_CHECK(t.sizes() == param.sizes(), opt, ": the ", name, " of shape ", t.sizes().str(),
             " does not match the parameter's shape ", param.sizes().str());
  TIDE_CHECK(t.dtype() == param.dtype(), opt, ": the ", name, " has dtype ", dtype_name(t.dtype()),
             " but the parameter has ", dtype_name(param.dtype()));
}

// The parameter and the state buffers are all written (tensor/overlap.hpp): none may have
// elements sharing one address, and no two may share memory.
template <size_t NS>
void check_operands(const char* opt, const Tensor& param, const Tensor& grad,
                    const std::array<StateBuffer, NS>& state) {
  TIDE_CHECK(is_floating(param.dtype()), opt,
             ": parameters must be float16, bfloat16, float32 or float64, got ", dtype_name(param.dtype()));
  check_writable(opt, param, "the parameter");
  if (has_internal_overlap(param)) fail_internal_overlap(opt, "the parameter");
  check_like_param(opt, param, grad, "grad");
  for (size_t i = 0; i < NS; ++i) {
    const StateBuffer& s = state[i];
    check_like_param(opt, param, *s.tensor, s.name);
    check_writable(opt, *s.tensor, (std::string("the ") + s.name).c_str());
    if (has_internal_overlap(*s.tensor)) fail_internal_overlap(opt, (std::string("the ") + s.name).c_str());
    TIDE_CHECK(mem_overlap(param, *s.tensor) == MemOverlap::None, opt, ": the ", s.name,
               " shares memory with the parameter; each state buffer needs its own tensor");
    for (size_t j = 0; j < i; ++j)
      TIDE_CHECK(mem_overlap(*state[j].tensor, *s.tensor) == MemOverlap::None, opt, ": the ", s.name,
                 " shares memory with the ", state[j].name, "; each state buffer needs its own tensor");
  }
}

// A state buffer that an option (`option`=`value`) asks for must be there.
template <typename V>
const Tensor& required(const char* opt, const Tensor* buffer, const char* name, const char* option,
                       const V& value) {
  TIDE_CHECK(buffer != nullptr, opt, ": ", option, "=", value, " needs the state tensor ", name, ", got nil");
  return *buffer;
}

// A number the step keeps in a zero-dim tensor and updates on the host (StepCounter): the
// state's step count, or NAdam's mu_product; one float32 or float64 element in CPU memory
// (as PyTorch keeps them for every device), written by the step, sharing memory with no
// operand.
struct HostScalar {
  const Tensor* tensor;  // none: not used
  StepCounter* slot;     // where the options take it
  const char* name;      // "step count" or "mu_product"
};

template <size_t NS, size_t NH>
void check_host_scalars(const char* opt, const Tensor& param, const Tensor& grad,
                        const std::array<StateBuffer, NS>& state, const std::array<HostScalar, NH>& host) {
  for (size_t i = 0; i < NH; ++i) {
    if (!host[i].tensor) continue;
    const Tensor& t = *host[i].tensor;
    const char* name = host[i].name;
    TIDE_CHECK(t.device().is_cpu(), opt, ": the ", name, " must be a CPU tensor, got one on ", t.device().str());
    TIDE_CHECK(t.dtype() == DType::Float32 || t.dtype() == DType::Float64, opt, ": the ", name,
               " must be a float32 or float64 tensor, got ", dtype_name(t.dtype()));
    TIDE_CHECK(t.numel() == 1, opt, ": the ", name, " must be a tensor of one element, got shape ", t.sizes().str());
    check_writable(opt, t, (std::string("the ") + name).c_str());
    bool shares = mem_overlap(t, param) != MemOverlap::None || mem_overlap(t, grad) != MemOverlap::None;
    for (const StateBuffer& s : state) shares = shares || mem_overlap(t, *s.tensor) != MemOverlap::None;
    TIDE_CHECK(!shares, opt, ": the ", name, " shares memory with the parameter, its gradient or its state");
    for (size_t j = 0; j < i; ++j)
      TIDE_CHECK(!host[j].tensor || mem_overlap(*host[j].tensor, t) == MemOverlap::None, opt, ": the ", name,
                 " shares memory with the ", host[j].name);
  }
  for (size_t i = 0; i < NH; ++i)
    if (host[i].tensor) *host[i].slot = {host[i].tensor->address(), host[i].tensor->dtype()};
}

// Checks the operands, then runs the update of `kind` (optim_update.hpp, selected by the
// options) once over every element of the parameter (any layout; in parallel for big
// tensors, or as one kernel on a device) and bumps the parameter's version. Each host scalar
// given (the step count, NAdam's mu_product) is pointed at from its slot in *options and
// its version bumped too.
template <size_t NS, size_t NH = 0>
void fused_step(const char* opt, OptimKind kind, const void* options, const Tensor& param, const Tensor& grad,
                const std::array<StateBuffer, NS>& state, const std::array<HostScalar, NH>& host = {}) {
  check_operands(opt, param, grad, state);
  check_host_scalars(opt, param, grad, state, host);
  // The gradient is read element for element before the writes; one sharing memory with a
  // written tensor any other way is read from a copy (TensorIter does that for the parameter).
  Tensor g = grad;
  for (const StateBuffer& s : state) g = readable_input(*s.tensor, g, Reads::Elementwise);
  Tensor out = param;
  TensorIter it = std::apply(
      [&](const auto&... s) { return TensorIter::build(opt, out, param.dtype(), {&g, s.tensor...}); },
      state);
  backend_for(it.device()).optim_step(kind, it, param.dtype(), options);
  param.storage()->bump_version();
  for (const HostScalar& h : host)
    if (h.tensor) h.tensor->storage()->bump_version();
}

// The step count as the one host scalar of a step.
std::array<HostScalar, 1> counted(const Tensor* step_count, StepCounter& counter) {
  return {HostScalar{step_count, &counter, "step count"}};
}

// A step count given as a number counts this step (the first is 1).
void check_step_number(const char* opt, const Tensor* step_count, int64_t step) {
  TIDE_CHECK(step_count || step >= 1, opt, ": step must be >= 1 (the count including this step), got ", step);
}

// SGD (sgd.py, _single_tensor_sgd); State: {momentum_buffer} when momentum != 0.
template <bool WithMomentum>
void sgd(const Tensor& param, const Tensor& grad, const Tensor* buffer, const SgdOptions& o) {
  constexpr size_t NS = WithMomentum ? 1 : 0;
  std::array<StateBuffer, NS> state;
  if constexpr (WithMomentum)
    state[0] = {&required("SGD", buffer, "momentum_buffer", "momentum", o.momentum), "momentum_buffer"};
  fused_step("SGD", OptimKind::Sgd, &o, param, grad, state);
}

// Adam / AdamW (adam.py, adamw.py, the non-capturable branch): State {exp_avg, exp_avg_sq
// [, max_exp_avg_sq]}.
template <bool Amsgrad>
void adam(const char* opt, const Tensor& param, const Tensor& grad, const Tensor& exp_avg,
          const Tensor& exp_avg_sq, const Tensor* max_exp_avg_sq, AdamOptions o, const Tensor* step_count) {
  constexpr size_t NS = Amsgrad ? 3 : 2;
  std::array<StateBuffer, NS> state;
  state[0] = {&exp_avg, "exp_avg"};
  state[1] = {&exp_avg_sq, "exp_avg_sq"};
  if constexpr (Amsgrad)
    state[2] = {&required(opt, max_exp_avg_sq, "max_exp_avg_sq", "amsgrad", "true"), "max_exp_avg_sq"};
  fused_step(opt, OptimKind::Adam, &o, param, grad, state, counted(step_count, o.counter));
}

// RMSprop (rmsprop.py): State {square_avg[, grad_avg][, momentum_buffer]}.
template <bool Centered, bool WithMomentum>
void rmsprop(const Tensor& param, const Tensor& grad, const Tensor& square_avg, const Tensor* momentum_buffer,
             const Tensor* grad_avg, RmspropOptions o, const Tensor* step_count) {
  constexpr size_t NS = 1 + Centered + WithMomentum;
  constexpr size_t kGradAvg = 1, kMomentum = Centered ? 2 : 1;
  std::array<StateBuffer, NS> state;
  state[0] = {&square_avg, "square_avg"};
  if constexpr (Centered)
    state[kGradAvg] = {&required("RMSprop", grad_avg, "grad_avg", "centered", "true"), "grad_avg"};
  if constexpr (WithMomentum)
    state[kMomentum] = {&required("RMSprop", momentum_buffer, "momentum_buffer", "momentum", o.momentum),
                        "momentum_buffer"};
  fused_step("RMSprop", OptimKind::Rmsprop, &o, param, grad, state, counted(step_count, o.counter));
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, const Tensor* momentum_buffer, const SgdOptions& o) {
  if (o.momentum != 0)
    sgd<true>(param, grad, momentum_buffer, o);
  else
    sgd<false>(param, grad, momentum_buffer, o);
}

void adam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                const Tensor* max_exp_avg_sq, const AdamOptions& o, const Tensor* step_count) {
  const char* opt = o.decoupled_weight_decay ? "AdamW" : "Adam";
  check_step_number(opt, step_count, o.step);
  if (o.amsgrad)
    adam<true>(opt, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, o, step_count);
  else
    adam<false>(opt, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, o, step_count);
}

void rmsprop_step_(const Tensor& param, const Tensor& grad, const Tensor& square_avg,
                   const Tensor* momentum_buffer, const Tensor* grad_avg, const RmspropOptions& o,
                   const Tensor* step_count) {
  const bool with_momentum = o.momentum > 0;
  if (o.centered && with_momentum)
    rmsprop<true, true>(param, grad, square_avg, momentum_buffer, grad_avg, o, step_count);
  else if (o.centered)
    rmsprop<true, false>(param, grad, square_avg, momentum_buffer, grad_avg, o, step_count);
  else if (with_momentum)
    rmsprop<false, true>(param, grad, square_avg, momentum_buffer, grad_avg, o, step_count);
  else
    rmsprop<false, false>(param, grad, square_avg, momentum_buffer, grad_avg, o, step_count);
}

void adamax_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_inf,
                  const AdamaxOptions& options, const Tensor* step_count) {
  check_step_number("Adamax", step_count, options.step);
  AdamaxOptions o = options;
  o.zero_dim = param.dim() == 0;
  fused_step("Adamax", OptimKind::Adamax, &o, param, grad,
             std::array<StateBuffer, 2>{{{&exp_avg, "exp_avg"}, {&exp_inf, "exp_inf"}}}, counted(step_count, o.counter));
}

void nadam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const Tensor& mu_product, const NadamOptions& options, const Tensor* step_count) {
  check_step_number("NAdam", step_count, options.step);
  NadamOptions o = options;
  o.zero_dim = param.dim() == 0;
  fused_step("NAdam", OptimKind::Nadam, &o, param, grad,
             std::array<StateBuffer, 2>{{{&exp_avg, "exp_avg"}, {&exp_avg_sq, "exp_avg_sq"}}},
             std::array<HostScalar, 2>{{{step_count, &o.counter, "step count"}, {&mu_product, &o.mu_product, "mu_product"}}});
}

void radam_step_(const Tensor& param, const Tensor& grad, const Tensor& exp_avg, const Tensor& exp_avg_sq,
                 const RadamOptions& options, const Tensor* step_count) {
  check_step_number("RAdam", step_count, options.step);
  RadamOptions o = options;
  o.zero_dim = param.dim() == 0;
  fused_step("RAdam", OptimKind::Radam, &o, param, grad,
             std::array<StateBuffer, 2>{{{&exp_avg, "exp_avg"}, {&exp_avg_sq, "exp_avg_sq"}}},
             counted(step_count, o.counter));
}

void adagrad_step_(const Tensor& param, const Tensor& grad, const Tensor& sum, const AdagradOptions& options,
                   const Tensor* step_count) {
  check_step_number("Adagrad", step_count, options.step);
  AdagradOptions o = options;
  o.zero_dim = param.dim() == 0;
  fused_step("Adagrad", OptimKind::Adagrad, &o, param, grad, std::array<StateBuffer, 1>{{{&sum, "sum"}}},
             counted(step_count, o.counter));
}

}  // namespace tide::ops
