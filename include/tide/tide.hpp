// tide's public C++ API for host applications: tide::Interpreter (interpreter/interpreter.hpp)
// and tide::Tensor with zero-copy interop (from_blob, DLPack; tensor/dlpack.hpp).
// Installed as <tide/tide.hpp>; compile with C++20 and `pkg-config --cflags --libs tide`.
// docs/embedding.md is the guide.
#pragma once
#include "interpreter/interpreter.hpp"
#include "tensor/dlpack.hpp"
