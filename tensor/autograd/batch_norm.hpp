// Batch normalization in training mode, and layer normalization, each as one differentiable
// op (batch_norm.cpp): the statistics in one sweep over a channel (or row) and the
// closed-form backward, on the CPU for float32 and float64; other devices and dtypes take
// the same formulas composed from the differentiable ops. torch.nn.functional's batch_norm,
// instance_norm, group_norm (torch_nn_norm.lua) and layer_norm use them.
#pragma once
#include "../tensor.hpp"

namespace tide::ag {

// The result of batch_norm_train: the output, and the per-channel batch mean and biased
// variance (shape {C}, x's dtype, not recorded) for the running statistics.
struct BatchNormResult {
  Tensor out;
  Tensor mean;
  Tensor var;
};

// x (N, C, *) normalised per channel (dim 1) by the mean and biased variance over every
// other dim, then scaled by weight and shifted by bias (both {C}, or nullptr). Differentiable
// in x, weight and bias, to any order (the double backward goes through the composed
// formula). A channel of one value normalises to 0 (its variance is 0); one of none gives NaN
// statistics.
BatchNormResult batch_norm_train(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps);

// x (N, C, *) normalised per channel by the given mean and variance ({C} each: the running
// statistics), then times weight plus bias: one fused sweep on the CPU when all are float32
// or all float64; differentiable in every tensor argument.
Tensor batch_norm_eval(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor* weight,
                       const Tensor* bias, double eps);

// Layer normalization of x (M, K): each row normalised by its mean and biased variance, then
// times weight plus bias (both {K}, or nullptr), with the same fused CPU kernels and composed
// fallback; differentiable in x, weight and bias to any order. F.layer_norm uses it.
Tensor layer_norm_rows(const Tensor& x, const Tensor* weight, const Tensor* bias, double eps);

}  // namespace tide::ag
