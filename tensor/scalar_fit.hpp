// Storing a scalar into a tensor's elements (fill_, full, masked_fill, index_fill, clamp's
// bounds, x[i] = v): the one check that the value fits the element type, as PyTorch's
// "value cannot be converted to type ... without overflow". Arithmetic with scalars keeps
// PyTorch's wrapping promotion and does not come here.
#pragma once
#include "dtype.hpp"

namespace tide {

// Throws "<op>: value <v> cannot be converted to <dtype> without overflow" when s does not
// fit dt: NaN, infinities or values outside [lowest, max] for integer types (a negative
// integer whose magnitude fits an unsigned type wraps, as in PyTorch: uint8 -1 is 255);
// finite values beyond a floating type's largest (1e10 into float16). Bool takes anything.
void check_scalar_fits(const char* op, const Scalar& s, DType dt);

}  // namespace tide
