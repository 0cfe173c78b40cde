// Differentiable shape ops. Views are recorded as views of their input (so that in-place
// changes to either are caught); their gradients undo the view: reshape back, transpose
// back, or place the gradient of a part into zeros of the whole.
#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

// A view op: y is a view of x with gradient `back(g)`.
template <class Back>
Tensor record_view(const char* op, Tensor y, const Tensor& x, Back back) {
  if (!needs_recording({&x})) return y;
  bool shares = y.storage() == x.storage();
  record(op, y, {&x}, [back](const Tensor& g, const Node&) -> Grads { return {back(g)}; }, shares);
  return y;
}

// The gradient of the part x[dim: start..end by step] placed into zeros of x's shape; its
// own gradient is that part of the incoming gradient.
Tensor embed(const Tensor& g, const Dims& sizes, int dim, int64_t start, int64_t end, int64_t step) {
  Tensor z = ops::zeros(sizes, g.dtype(), g.device());
  Tensor part = ops::slice(z, dim, start, end, step);
  ops::copy_(part, g);
  if (needs_recording({&g}))
    record("slice_backward", z, {&g},
           [dim, start, end, step](const Tensor& gg, const Node&) -> Grads { return {slice(gg, dim, start, end, step)}; });
  return z;
}

Tensor reshape_back(const Tensor& x, Tensor y, const char* op) {
  Dims sizes = x.sizes();
  return record_view(op, std::move(y), x, [sizes](const Tensor& g) { return reshape(g, sizes); });
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm, int ndim, const char* op) {
  std::vector<int64_t> inv(static_cast<size_t>(ndim));
  for (int i = 0; i < ndim; ++i) inv[size_t(ops::wrap_dim(op, perm[size_t(i)], ndim))] = i;
  return inv;
}

// The tensors of a list as record()'s inputs.
std::vector<const Tensor*> pointers(const std::vector<Tensor>& tensors) {
  std::vector<const Tensor*> out;
  for (const Tensor& t : tensors) out.push_back(&t);
  return out;
}

// Split pieces (consecutive slices along dim d) recorded one by one.
std::vector<Tensor> record_pieces(const char* op, const Tensor& x, int d, std::vector<Tensor> pieces) {
  if (!needs_recording({&x})) return pieces;
  int64_t start = 0;
  Dims sizes = x.sizes();
  for (Tensor& p : pieces) {
    int64_t len = p.dim() == x.dim() ? p.size(d) : 0;
    p = record_view(op, p, x, [sizes, d, start, len](const Tensor& g) { return embed(g, sizes, d, start, start + len, 1); });
    start += len;
  }
  return pieces;
}

}  // namespace

Tensor view(const Tensor& x, const Dims& shape) { return reshape_back(x, ops::view(x, shape), "view"); }
Tensor reshape(const Tensor& x, const Dims& shape) { return reshape_back(x, ops::reshape(x, shape), "reshape"); }
Tensor alias(const Tensor& x) {
  return record_view("alias", ops::alias(x), x, [](const Tensor& g) { return g; });
}
Tensor t(const Tensor& x) {
  return record_view("t", ops::t(x), x, [](const Tensor& g) { return t(g); });
}
Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  return record_view("transpose", ops::transpose(x, d0, d1), x, [d0, d1](const Tensor& g) { return transpose(g, d0, d1); });
}
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  Tensor y = ops::permute(x, dims);
  std::vector<int64_t> back = inverse(dims, x.dim(), "permute");
  return record_view("permute", y, x, [back](const Tensor& g) { return permute(g, back); });
}
Tensor reverse_dims(const Tensor& x) {
  return record_view("reverse_dims", ops::reverse_dims(x), x, [](const Tensor& g) { return reverse_dims(g); });
}
Tensor movedim(const Tensor& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  return record_view("movedim", ops::movedim(x, src, dst), x, [src, dst](const Tensor& g) { return movedim(g, dst, src); });
}
Tensor squeeze(const Tensor& x) { return reshape_back(x, ops::squeeze(x), "squeeze"); }
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims) { return reshape_back(x, ops::squeeze(x, dims), "squeeze"); }
Tensor unsqueeze(const Tensor& x, int64_t dim) { return reshape_back(x, ops::unsqueeze(x, dim), "unsqueeze"); }
Tensor flatten(const Tensor& x, int64_t start, int64_t end) { return reshape_back(x, ops::flatten(x, start, end), "flatten"); }
Tensor unflatten(const Tensor& x, int64_t dim, const Dims& sizes) {
  return reshape_back(x, ops::unflatten(x, dim, sizes), "unflatten");
}
// The engine sums a gradient back over expanded dims, so expand's own formula is identity.
Tensor expand(const Tensor& x, const Dims& sizes) {
  return record_view("expand", ops::expand(x, sizes), x, [](const Tensor& g) { return g; });
}
Tensor expand_as(const Tensor& x, const Tensor& other) { return expand(x, other.sizes()); }

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  Tensor y = ops::slice(x, dim, start, end, step);
  int d = ops::wrap_dim("slice", dim, x.dim());
  Dims sizes = x.sizes();
  return record_view("slice", y, x, [=](const Tensor& g) { return embed(g, sizes, d, start, end, step); });
}
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  Tensor y = ops::narrow(x, dim, start, length);
  int d = ops::wrap_dim("narrow", dim, x.dim());
  int64_t s = start < 0 ? start + x.size(d) : start;
  Dims sizes = x.sizes();
  return record_view("narrow", y, x, [=](const Tensor& g) { return embed(g, sizes, d, s, s + length, 1); });
}
Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  Tensor y = ops::select(x, dim, index);
  int d = ops::wrap_dim("select", dim, x.dim());
  int64_t i = index < 0 ? index + x.size(d) : index;
  Dims sizes = x.sizes();
  return record_view("select", y, x, [=](const Tensor& g) { return embed(unsqueeze(g, d), sizes, d, i, i + 1, 1); });
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  auto pieces = ops::split(x, split_size, dim);
  return record_pieces("split", x, ops::wrap_dim("split", dim, x.dim()), std::move(pieces));
}
std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  auto pieces = ops::split_with_sizes(x, sizes, dim);
  return record_pieces("split", x, ops::wrap_dim("split", dim, x.dim()), std::move(pieces));
}
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  auto pieces = ops::chunk(x, chunks, dim);
  return record_pieces("chunk", x, ops::wrap_dim("chunk", dim, x.dim()), std::move(pieces));
}
std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  std::vector<Tensor> out = ops::unbind(x, dim);
  if (!needs_recording({&x})) return out;
  int d = ops::wrap_dim("unbind", dim, x.dim());
  for (size_t i = 0; i < out.size(); ++i) out[i] = select(x, d, int64_t(i));
  return out;
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor y = ops::cat(tensors, dim);
  if (!autograd::needs_recording(tensors)) return y;
  int d = ops::wrap_dim("cat", dim, y.dim());
  std::vector<int64_t> offsets, lengths;
  int64_t off = 0;
  for (const Tensor& t : tensors) {
    bool skipped = t.dim() == 1 && t.numel() == 0;  // as ops::cat
    int64_t len = skipped ? 0 : t.size(d);
    offsets.push_back(off);
    lengths.push_back(skipped ? -1 : len);
    off += len;
  }
  record("cat", y, pointers(tensors), [d, offsets, lengths](const Tensor& g, const Node& n) -> Grads {
    Grads r(offsets.size());
    for (size_t i = 0; i < r.size(); ++i)
      if (n.needs_grad(i) && lengths[i] >= 0) r[i] = narrow(g, d, offsets[i], lengths[i]);
    return r;
  });
  return y;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor y = ops::stack(tensors, dim);
  if (!autograd::needs_recording(tensors)) return y;
  int d = ops::wrap_dim("stack", dim, y.dim());
  record("stack", y, pointers(tensors), [d](const Tensor& g, const Node& n) -> Grads {
    Grads r(n.next.size());
    for (size_t i = 0; i < r.size(); ++i)
      if (n.needs_grad(i)) r[i] = select(g, d, int64_t(i));
    return r;
  });
  return y;
}

Tensor repeat(const Tensor& x, const Dims& repeats) {
  Tensor y = ops::repeat(x, repeats);
  if (!needs_recording({&x})) return y;
  Dims sizes = x.sizes();
  record("repeat", y, {&x}, [sizes, repeats](const Tensor& g, const Node&) -> Grads {
    // y viewed as (r0, s0, r1, s1, ...): summing over every r gives x's gradient.
    int lead = repeats.size() - sizes.size();
    Dims split;
    DimList reps;
    for (int i = 0; i < repeats.size(); ++i) {
      int64_t s = i < lead ? 1 : sizes[i - lead];
      reps.push_back(split.size());
      split.push_back(repeats[i]);
      split.push_back(s);
    }
    return {reshape(sum(reshape(g, split), reps), sizes)};
  });
  return y;
}

Tensor tile(const Tensor& x, const Dims& repeats) { return repeat(x, ops::tile_repeats(x, repeats)); }

Tensor flip_view(const Tensor& x, const std::vector<int64_t>& dims) {
  return record_view("flip_view", ops::flip_view(x, dims), x, [dims](const Tensor& g) { return flip_view(g, dims); });
}

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  Tensor y = ops::flip(x, dims);
  if (!needs_recording({&x})) return y;
  record("flip", y, {&x}, [dims](const Tensor& g, const Node&) -> Grads { return {flip(g, dims)}; });
  return y;
}

namespace {

// zeros of base's shape with g added at the places the view (g's shape, strides, offset)
// sees; its own gradient is that view of the incoming gradient.
Tensor strided_embed(const Tensor& g, const Dims& base_sizes, const Dims& strides, int64_t offset) {
  Tensor z = ops::zeros(base_sizes, g.dtype(), g.device());
  ops::as_strided_write(z, g, strides, offset, true);
  if (needs_recording({&g})) {
    Dims sizes = g.sizes();
    record("as_strided_backward", z, {&g}, [sizes, strides, offset](const Tensor& gg, const Node&) -> Grads {
      return {as_strided(contiguous(gg), sizes, strides, offset)};
    });
  }
  return z;
}

}  // namespace

Tensor as_strided(const Tensor& base, const Dims& sizes, const Dims& strides, int64_t offset) {
  TIDE_ASSERT(base.is_contiguous());
  Tensor y = base.as_strided(sizes, strides, base.offset() + offset);
  Dims base_sizes = base.sizes();
  return record_view("as_strided", y, base, [base_sizes, strides, offset](const Tensor& g) {
    return strided_embed(g, base_sizes, strides, offset);
  });
}

Tensor as_strided_scatter(const Tensor& base, const Tensor& src, const Dims& strides, int64_t offset) {
  TIDE_ASSERT(base.is_contiguous() && src.dtype() == base.dtype());
  Tensor y = base.clone();
  ops::as_strided_write(y, src, strides, offset, false);
  if (!needs_recording({&base, &src})) return y;
  Dims src_sizes = src.sizes();
  record("as_strided_scatter", y, {&base, &src}, [src_sizes, strides, offset](const Tensor& g, const Node& n) -> Grads {
    Tensor gc = contiguous(g);
    Grads r(2);
    if (n.needs_grad(0)) r[0] = as_strided_scatter(gc, ops::zeros(src_sizes, g.dtype(), g.device()), strides, offset);
    if (n.needs_grad(1)) r[1] = as_strided(gc, src_sizes, strides, offset);
    return r;
  });
  return y;
}

}  // namespace tide::ag
