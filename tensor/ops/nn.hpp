// Kernels of the neural-network functions that pay to be fused: image patches for
// convolution and pooling (unfold2d / fold2d), and cross-entropy as log-softmax + NLL in one
// pass over each row. The differentiable wrappers are in tensor/autograd/nn.cpp.
#pragma once
#include "../tensor.hpp"

namespace tide::ops {

struct Window2d {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  // Output size along spatial dim i for an input of size n; throws (naming op) when < 1.
  int64_t out_size(int i, int64_t n, const char* op) const;
  // Number of output positions Hout * Wout for an (H, W) input; throws when it overflows.
  int64_t positions(int64_t H, int64_t W, const char* op) const;
};

// x (N, C, H, W) -> patches (N, C*kh*kw, Hout*Wout); positions in the padding read `pad`.
Tensor unfold2d(const Tensor& x, const Window2d& w, double pad = 0, const char* op = "unfold");
// The adjoint of unfold2d: patches (N, C*kh*kw, L) summed back into (N, C, H, W).
Tensor fold2d(const Tensor& cols, int64_t H, int64_t W, const Window2d& w, const char* op = "fold");

// Conv2d on the CPU without storing the batch's patches (tensor/ops/nn.cpp says how the
// images are shared among threads): x (N, C, H, W) and weight (Cout, C/groups, kh, kw) of
// float32 or float64, checked by the caller (tensor/autograd/nn.cpp). conv2d_on_cpu says
// whether these kernels take x: CPU, float32/64, at least 256 output positions per image
// (smaller images pay for one product over the batch) and one image's patches below 2^31
// elements.
bool conv2d_on_cpu(const Tensor& x, const Tensor& weight, const Window2d& w, const char* op);
// y (N, Cout, Hout*Wout), plus bias (Cout) where not null: the same sums as the product's
// result plus the bias (3x3 filters of stride and dilation 1, padding at most 2: by
// Winograd's F(2x2, 3x3), whose sums differ from the product's by rounding only).
Tensor conv2d_cpu(const Tensor& x, const Tensor& weight, const Tensor* bias, const Window2d& w, int64_t groups,
                  const char* op);
// From the output's gradient g (N, Cout, Hout*Wout): the input's gradient into *gx and the
// weight's into *gw, each only where the pointer is not null.
void conv2d_backward_cpu(const Tensor& x, const Tensor& weight, const Tensor& g, const Window2d& w, int64_t groups,
                         Tensor* gx, Tensor* gw, const char* op);

// Cross-entropy of each row of logits (M, C) (contiguous, floating) against target (M)
// (int64, 0-based classes, or `ignore` for rows that count 0), optional class weights (C):
// loss_i = (1-eps) w_t (lse_i - x_it) + eps/C sum_c w_c (lse_i - x_ic), one pass per row.
Tensor cross_entropy_rows(const Tensor& logits, const Tensor& target, const Tensor* weight, int64_t ignore,
                          double eps);

}  // namespace tide::ops
