// Discrete Fourier transforms (np.fft, torch.fft) on the FFT module (tensor/fft/engine.hpp):
// complex-to-complex, real-to-complex (the non-negative frequencies) and its inverse, over
// any set of dims, each one a batch of 1-D transforms run with the tensor's own strides.
// CPU only; not differentiable (the bindings refuse tensors that require grad).
#pragma once
#include <cstdint>
#include <vector>

#include "../tensor.hpp"

namespace tide::ops {

// Which direction carries the 1/n: "backward" (the inverse; the default), "ortho" (1/sqrt(n)
// both ways) or "forward" (the forward transform).
enum class FftNorm : uint8_t { Backward, Ortho, Forward };

// The transforms take distinct 0-based `dims` and the signal length `n[i]` along dims[i]: the
// input is truncated or zero-padded there to n[i] (for c2r, to n[i] / 2 + 1 along the last of
// dims, which gives n[i] real outputs). `cdtype` (complex64 or complex128) is the precision the
// transform runs in and the complex result's dtype; c2r returns its real counterpart.

// The n-dimensional DFT (forward: exp(-2 pi i jk/n); inverse: +i). A real x is transformed by
// r2c along the last of dims and completed by Hermitian symmetry, as fast as one half.
Tensor fft_c2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, bool forward, DType cdtype);
// rfftn: r2c along the last of dims (n/2+1 outputs there), then c2c along the others. x real.
// conj_output: the result's conjugate (ihfft).
Tensor fft_r2c(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_output = false);
// irfftn: the inverse c2c along all but the last of dims, then c2r along it (n real outputs;
// the imaginary parts of its zero and Nyquist frequencies are ignored, as in NumPy).
// conj_input: of x's conjugate (hfft, hfftn).
Tensor fft_c2r(const char* op, const Tensor& x, const std::vector<int>& dims, const std::vector<int64_t>& n,
               FftNorm norm, DType cdtype, bool conj_input = false);

}  // namespace tide::ops
