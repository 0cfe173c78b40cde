// Index ops: selection by index tensors (index_select, gather, take, advanced indexing),
// writes through them (scatter, index_put_, index_add_, index_fill_), masks (masked_fill,
// masked_select) and nonzero.
//
// Dims are 0-based arguments; index *values* in tensors are 1-based (negative counts from
// the end), because they are data scripts see. Every index value is checked before any
// memory is touched through it; an out-of-range one is an error naming the value, the dim
// (1-based) and its size. Index tensors may have any integer dtype.
#pragma once
#include <vector>

#include "../tensor.hpp"
#include "elementwise.hpp"

namespace tide::ops {

// A 1-based index (negative from the end) into a dim of `size` made 0-based, or
// "<op>: index 5 is out of range for dim 1 of size 4 (valid 1..4 or -4..-1)"; `dim` is 0-based.
int64_t wrap_index(const char* op, int64_t index, int dim, int64_t size);

// Device plumbing of the index ops (index.cpp runs its CPU code on positions to validate
// indices and find elements; the backend's take / put kernels move the data):
// a cpu int64 tensor of x's shape holding the storage offset of each of x's elements;
Tensor positions_of(const Tensor& x);
// x's elements at storage offsets `pos` (-1 reads `fill`) as a new tensor of pos's shape on
// x's device; and x's elements at `pos` set to (accumulating: increased by) `values` of pos's
// shape, -1 positions skipped, x's version bumped.
Tensor take_on_device(const char* op, const Tensor& x, const Tensor& pos, Scalar fill = Scalar(int64_t(0)));
void put_on_device(const char* op, Tensor& x, const Tensor& pos, const Tensor& values, bool accumulate);

// x's elements at `index` (0-d or 1-D) along dim: the dim's size becomes index.numel().
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j] = x[index[i][j]][j] (dim 0); index has x's number of dims and is no larger than
// x outside `dim`; the result has index's shape.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// x[index[i][j]][j] = src[i][j] (dim 0): the reverse of gather. src is a tensor (at least
// index's size in every dim, converted to x's dtype) or a number. Later duplicates win.
Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src);
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src);
// The same, adding into x (duplicates accumulate).
Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);

// Advanced indexing (PyTorch's x[i0, i1, ...] with tensors): indices[d] indexes dim d of x
// (an undefined tensor keeps the dim whole; a bool tensor stands for as many dims as it
// has, by its nonzero positions). The index tensors broadcast together to a shape B; the
// result is B followed by the dims left whole, with B placed where the indexed dims were
// when they are adjacent (NumPy's rule). Always a copy.
// `dim_labels`, when given, maps x's dims to the dims a script named (for messages).
Tensor index(const Tensor& x, const std::vector<Tensor>& indices, const std::vector<int>* dim_labels = nullptr,
             const char* op = "index");
// x[indices] = values (values broadcast to the shape index() would return, converted to
// x's dtype); accumulate adds instead (duplicates add up). Bumps x's version.
Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate = false,
                   const std::vector<int>* dim_labels = nullptr, const char* op = "index_put");
// x.select(dim, index[i]) += alpha * src.select(dim, i); src has x's shape with dim's size
// equal to index.numel().
Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha = Scalar(int64_t(1)));
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha = Scalar(int64_t(1)));
// x.select(dim, index[i]) = value.
Tensor& index_fill_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
// x flattened, at index (result has index's shape).
Tensor take(const Tensor& x, const Tensor& index);

// mask is a bool tensor broadcastable to x (in place) / with x (out of place); value a
// number or a one-element tensor, converted to x's dtype.
Tensor& masked_fill_(Tensor& x, const Tensor& mask, const TensorOrScalar& value);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value);
// The elements of x (broadcast with mask) where mask is true, as a 1-D tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);

// Positions of the nonzero elements of x, 1-based, in row-major order: int64 of shape (n, ndim).
Tensor nonzero(const Tensor& x);
// The same as one 1-D tensor per dim (torch.where(cond), np.nonzero, {as_tuple=true}).
std::vector<Tensor> nonzero_tuple(const Tensor& x);
// Number of nonzero elements.
int64_t count_nonzero(const Tensor& x);

}  // namespace tide::ops
