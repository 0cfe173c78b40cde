// Softmax over the last dim in one pass per row (max, exp, sum, divide), and its gradient
// y * (g - sum(g * y)) likewise, for contiguous float32/float64 tensors on the CPU; rows are
// split across the engine's threads. ag::softmax (tensor/autograd/nn.cpp) takes these where
// they fit and its composite of pointwise ops and reductions elsewhere (the two agree to
// rounding: the sums run in another order).
#pragma once
#include "../tensor.hpp"

namespace tide::ops {

// Whether t is a tensor the row kernels take: on the CPU, contiguous, float32 or float64,
// at least 1-D.
bool softmax_rows_fit(const Tensor& t);

// softmax of x along its last dim.
Tensor softmax_rows(const Tensor& x);

// The gradient of softmax at output y for the output gradient g (both fit, same shape).
Tensor softmax_rows_backward(const Tensor& y, const Tensor& g);

}  // namespace tide::ops
