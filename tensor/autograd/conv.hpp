// Transposed convolution and the pooling options beyond max_pool2d's (ceil_mode, indices,
// averages), differentiable, with PyTorch's semantics. Implemented in nn.cpp next to conv2d.
#pragma once
#include "functions.hpp"

namespace tide::ag {

struct ConvTranspose2dOptions {
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, output_padding[2] = {0, 0}, dilation[2] = {1, 1};
  int64_t groups = 1;
};
// x (N, Cin, H, W) or (Cin, H, W), weight (Cin, Cout/groups, kH, kW): the adjoint of conv2d
// with the same options; output_padding adds rows/columns at the bottom/right.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor* bias, const ConvTranspose2dOptions& o);

struct Pool2dOptions {
  int64_t kernel[2] = {1, 1}, stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool ceil_mode = false;
};
// Window maxima of (N, C, H, W) or (C, H, W); with_indices also returns the int64 1-based
// flat position (h * W + w + 1) of each maximum within its (H, W) plane.
std::vector<Tensor> max_pool2d_ex(const Tensor& x, const Pool2dOptions& o, bool with_indices);
// Window means; count_include_pad counts the zero padding in the divisor; a
// divisor_override > 0 replaces the divisor.
Tensor avg_pool2d(const Tensor& x, const Pool2dOptions& o, bool count_include_pad, int64_t divisor_override);

}  // namespace tide::ag
