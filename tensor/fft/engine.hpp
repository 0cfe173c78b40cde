// The FFT engine as libtide sees it: the module libtide_fft.so (FFTW, GPL-licensed, so never
// linked into libtide) loaded with dlopen on the first FFT, and one checked call into it.
#pragma once
#include <string>
#include <vector>

#include "fft_module.h"

namespace tide::fft {

// Whether the module loaded; when not, why (the message an FFT call reports after its name).
bool available();
std::string unavailable_reason();

// Runs a batch of 1-D transforms (fft_module.h's execute). Errors, including a missing module,
// throw tide::Error "<op>: ...".
void execute(const char* op, TideFftKind kind, TideFftPrecision precision, int sign, const TideFftDim& axis,
             const std::vector<TideFftDim>& batch, void* in, void* out);

// The number of plans the module caches now (0 when it is not loaded).
size_t cached_plans();

}  // namespace tide::fft
