// Printing tensors the way PyTorch 1.13's repr does (torch/_tensor_str.py): precision 4,
// linewidth 80, summarised with "..." above 1000 elements (3 edge items per dim), one
// column width for the whole tensor, scientific notation when the magnitudes call for it.
#pragma once
#include <string>
#include <vector>

#include "tensor.hpp"

namespace tide {

// "tensor([[ 1.0000,  2.0000],\n        [ 3.0000,  4.0000]])", with ", dtype=torch.X" when
// the dtype is not the default of its kind (default_float for floats, int64, bool),
// ", device='cuda:0'" when not on the CPU, and "size=(0, 3)" for empty tensors.
std::string format_tensor(const Tensor& t, DType default_float);
// The same with more suffixes after PyTorch's (e.g. "requires_grad=True",
// "grad_fn=<AddBackward0>"), wrapped onto a new line as PyTorch does past 80 columns.
std::string format_tensor(const Tensor& t, DType default_float,
                          const std::vector<std::string>& extra_suffixes);

// Only the bracketed data ("[[1, 2],\n [3, 4]]" style with the given indent of the
// continuation lines), e.g. for a REPL that prints its own prefix.
std::string format_tensor_data(const Tensor& t, int indent);

}  // namespace tide
