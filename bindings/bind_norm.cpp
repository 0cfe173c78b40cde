// Bindings of the fused batch and layer normalization (tensor/autograd/batch_norm.hpp), which
// torch.nn.functional's batch_norm, instance_norm, group_norm
// (bindings/lua/torch_nn_norm.lua) and layer_norm call.
#include "../tensor/autograd/batch_norm.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

// _batch_norm_train(x, weight, bias, eps) -> out, mean, var: weight and bias may be nil.
int batch_norm_train_fn(lua_State* L, Args& a) {
  const Tensor* weight = a.has(2) ? &a.tensor(2) : nullptr;
  const Tensor* bias = a.has(3) ? &a.tensor(3) : nullptr;
  ag::BatchNormResult r = ag::batch_norm_train(a.tensor(1), weight, bias, a.number(4));
  push_tensor(L, std::move(r.out));
  push_tensor(L, std::move(r.mean));
  push_tensor(L, std::move(r.var));
  return 3;
}

// _batch_norm_eval(x, mean, var, weight, bias, eps) -> out: weight and bias may be nil.
int batch_norm_eval_fn(lua_State* L, Args& a) {
  const Tensor* weight = a.has(4) ? &a.tensor(4) : nullptr;
  const Tensor* bias = a.has(5) ? &a.tensor(5) : nullptr;
  push_tensor(L, ag::batch_norm_eval(a.tensor(1), a.tensor(2), a.tensor(3), weight, bias, a.number(6)));
  return 1;
}

// _layer_norm_rows(x, weight, bias, eps) -> out: x (M, K), weight and bias {K} or nil.
int layer_norm_rows_fn(lua_State* L, Args& a) {
  const Tensor* weight = a.has(2) ? &a.tensor(2) : nullptr;
  const Tensor* bias = a.has(3) ? &a.tensor(3) : nullptr;
  push_tensor(L, ag::layer_norm_rows(a.tensor(1), weight, bias, a.number(4)));
  return 1;
}

const Binding kNormBindings[] = {
    {"_batch_norm_train", batch_norm_train_fn, TORCH,
     "_batch_norm_train(x, weight, bias, eps) -> Tensor, Tensor, Tensor: x (N, C, ...) normalised per channel by "
     "the batch mean and biased variance, times weight plus bias (nil for none); also the mean and variance {C}. "
     "F.batch_norm's training step (one fused op on the CPU)."},
    {"_batch_norm_eval", batch_norm_eval_fn, TORCH,
     "_batch_norm_eval(x, mean, var, weight, bias, eps) -> Tensor: x (N, C, ...) normalised per channel by the given "
     "mean and variance {C} (the running statistics), times weight plus bias (nil for none). F.batch_norm's and "
     "F.instance_norm's evaluation (one fused op on the CPU)."},
    {"_layer_norm_rows", layer_norm_rows_fn, TORCH,
     "_layer_norm_rows(x, weight, bias, eps) -> Tensor: each row of x (M, K) normalised by its mean and biased "
     "variance, times weight plus bias ({K}, or nil). F.layer_norm's work (one fused op on the CPU)."},
};

}  // namespace

void register_norm_bindings() { register_bindings(kNormBindings, std::size(kNormBindings)); }

}  // namespace tide::lua
