// DLPack interop: Tensor::from_dlpack and Tensor::to_dlpack exchange tensors with other
// frameworks (PyTorch, NumPy, JAX, CuPy, ...) without copies, and Tensor::from_blob wraps
// memory the host owns. Both accept CPU and CUDA memory; a CUDA tensor is only wrapped
// (its pointer and device), so using it needs the CUDA backend.
//
// dtypes map to DLPack codes as frameworks do: intN/uintN/floatN by code and bits,
// bfloat16 as kDLBfloat, bool as DLPack 0.8's kDLBool (code 6), which this header names
// for DLPack 0.6 (Debian's libdlpack-dev) too.
#pragma once
#include <dlpack/dlpack.h>

#include "tensor.hpp"

namespace tide {

// DLPack's code for bool (kDLBool, added in DLPack 0.8).
constexpr uint8_t kDLBoolCode = 6;

// The DLPack data type of a dtype, and back (throws naming an unsupported DLPack type).
DLDataType to_dlpack_dtype(DType dtype);
DType from_dlpack_dtype(DLDataType dl, const char* op);

}  // namespace tide
