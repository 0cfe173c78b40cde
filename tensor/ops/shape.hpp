// Shape ops: views (view, reshape when it can, transpose, permute, squeeze, unsqueeze,
// expand, narrow, select, slice, split, chunk) share the input's storage, as in PyTorch;
// cat, stack, repeat and flip make new tensors.
//
// Dims are 0-based here (negative counts from the end, as in PyTorch's C++ API); the
// bindings convert the 1-based dims scripts give. Messages print dims 1-based, because
// scripts read them.
#pragma once
#include <vector>

#include "../tensor.hpp"

namespace tide::ops {

// A 0-based dim in [-ndim, ndim) made non-negative; throws "<op>: dim D is out of range ...".
int wrap_dim(const char* op, int64_t dim, int ndim);

// Replaces one -1 in `shape` by the size that gives `numel` elements; checks the rest.
Dims infer_size(const char* op, const Dims& shape, int64_t numel);
// Strides that let `new_shape` view memory laid out as (sizes, strides), if any (PyTorch's
// computeStride: a view is possible when every merged/split group of dims is contiguous).
bool view_strides(const Dims& sizes, const Dims& strides, const Dims& new_shape, Dims& out);

// Views. view() throws "view: size {..} is not compatible with the input's strides; use
// reshape" when no view is possible; reshape() copies then.
Tensor view(const Tensor& x, const Dims& shape);
// The same bytes as another dtype (see shape.cpp); "view: ..." when the layout does not allow it.
Tensor view_dtype(const Tensor& x, DType dt);
Tensor reshape(const Tensor& x, const Dims& shape);
Tensor alias(const Tensor& x);  // a new view of the same elements
Tensor t(const Tensor& x);       // 0-, 1- and 2-D only
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor reverse_dims(const Tensor& x);  // x.T and np.transpose(x)
Tensor movedim(const Tensor& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst);
Tensor squeeze(const Tensor& x);                                  // every size-1 dim
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims);  // those of them of size 1
Tensor unsqueeze(const Tensor& x, int64_t dim);                     // dim in [-(ndim+1), ndim]
// -1 keeps a size; new leading dims may be added; only size-1 dims grow (stride 0).
Tensor expand(const Tensor& x, const Dims& sizes);
Tensor expand_as(const Tensor& x, const Tensor& other);
Tensor flatten(const Tensor& x, int64_t start = 0, int64_t end = -1);
Tensor unflatten(const Tensor& x, int64_t dim, const Dims& sizes);
// Elements [start, start + length) of a dim; start 0-based.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// Removes a dim at 0-based index (negative counts from the end).
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// Elements start, start + step, ... below end of a dim (0 <= start <= end <= size, step >= 1).
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
// x with the order of elements along dims reversed, as a view (negative strides; NumPy's
// a[::-1]). dims are 0-based, negative from the end, each at most once.
Tensor flip_view(const Tensor& x, const std::vector<int64_t>& dims);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim = 0);
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);

// Writes src into the contiguous tensor dst at the elements a view with src's sizes and
// these strides and offset (in dst's elements) would see: dst[offset + sum_k i_k strides[k]]
// = src[i], or += with accumulate (overlapping positions then add up). Autograd's gradient
// of an arbitrary view.
void as_strided_write(Tensor& dst, const Tensor& src, const Dims& strides, int64_t offset, bool accumulate);

// Copies.
// Joins along an existing dim; dtypes promote as in torch.cat; 1-D empty tensors are skipped.
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Joins along a new dim (in [-(ndim+1), ndim]); all shapes must be equal.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
// Tiles x: repeats.size() >= ndim (torch's repeat).
Tensor repeat(const Tensor& x, const Dims& repeats);
// np.tile / torch.tile: like repeat, fewer repeats than dims get leading 1s.
Tensor tile(const Tensor& x, const Dims& repeats);
// tile's repeats as repeat takes them: leading 1s up to x's number of dims.
Dims tile_repeats(const Tensor& x, const Dims& repeats);
// Reverses the order of elements along dims (always a copy: torch.flip; flip_view is the view).
Tensor flip(const Tensor& x, const std::vector<int64_t>& dims);

}  // namespace tide::ops
