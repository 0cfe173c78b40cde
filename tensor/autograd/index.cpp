// Differentiable index ops. Selecting ops send the gradient back to the selected places
// (adding where an index repeats); writing ops pass the gradient through the places they
// did not overwrite and hand the overwritten places' gradient to the written values.
#include "../ops/index.hpp"
#include "../iterator.hpp"
#include "../ops/shape.hpp"
#include "formulas.hpp"

namespace tide::ag {

namespace {

// g (index's shape) placed into zeros of src's shape when src is larger than index, as
// scatter allows; the gradient of src for scatter / scatter_add.
Tensor fit_to(const Tensor& g, const Dims& src_sizes) {
  if (g.sizes() == src_sizes) return g;
  Tensor z = ops::zeros(src_sizes, g.dtype(), g.device());
  Tensor part = z;
  for (int d = 0; d < g.dim(); ++d) part = ops::narrow(part, d, 0, g.size(d));
  ops::copy_(part, g);
  return z;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor y = ops::index_select(x, dim, index);
  if (!needs_recording({&x})) return y;
  Dims sizes = x.sizes();
  int d = x.dim() == 0 ? 0 : ops::wrap_dim("index_select", dim, x.dim());
  Tensor idx = index.dim() == 0 ? ops::reshape(index, {1}) : index;
  record("index_select", y, {&x}, [sizes, d, idx](const Tensor& g, const Node&) -> Grads {
    if (sizes.size() == 0) return {reshape(g, sizes)};
    Tensor g1 = g.dim() == int(sizes.size()) ? g : unsqueeze(g, d);
    return {index_add(ops::zeros(sizes, g.dtype(), g.device()), d, idx, g1)};
  });
  return y;
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  Tensor y = ops::gather(x, dim, index);
  if (!needs_recording({&x})) return y;
  Dims sizes = x.sizes();
  record("gather", y, {&x}, [sizes, dim, index](const Tensor& g, const Node&) -> Grads {
    return {scatter_add(ops::zeros(sizes, g.dtype(), g.device()), dim, index, g)};
  });
  return y;
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src) {
  const Tensor* ps = tensor_ptr(src);
  Tensor y = ops::scatter(x, dim, index, src);
  if (!needs_recording({&x, ps})) return y;
  Dims src_sizes = ps ? ps->sizes() : Dims();
  record("scatter", y, {&x, ps}, [dim, index, src_sizes](const Tensor& g, const Node& n) -> Grads {
    return {n.needs_grad(0) ? scatter(g, dim, index, 0.0) : Tensor(),
            n.needs_grad(1) ? fit_to(gather(g, dim, index), src_sizes) : Tensor()};
  });
  return y;
}

Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src) {
  return inplace("scatter_", x, {tensor_ptr(src)}, [&] { ops::scatter_(x, dim, index, src); },
                 [&](const Tensor& s) { return scatter(s, dim, index, src); });
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor y = ops::scatter_add(x, dim, index, src);
  if (!needs_recording({&x, &src})) return y;
  Dims src_sizes = src.sizes();
  record("scatter_add", y, {&x, &src}, [dim, index, src_sizes](const Tensor& g, const Node& n) -> Grads {
    return {n.needs_grad(0) ? g : Tensor(), n.needs_grad(1) ? fit_to(gather(g, dim, index), src_sizes) : Tensor()};
  });
  return y;
}

Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return inplace("scatter_add_", x, {&src}, [&] { ops::scatter_add_(x, dim, index, src); },
                 [&](const Tensor& s) { return scatter_add(s, dim, index, src); });
}

Tensor index(const Tensor& x, const std::vector<Tensor>& indices, const std::vector<int>* dim_labels, const char* op) {
  Tensor y = ops::index(x, indices, dim_labels, op);
  if (!needs_recording({&x})) return y;
  Dims sizes = x.sizes();
  record(op, y, {&x}, [sizes, indices, op](const Tensor& g, const Node&) -> Grads {
    return {index_put(ops::zeros(sizes, g.dtype(), g.device()), indices, g, true, nullptr, op)};
  });
  return y;
}

Tensor index_put(const Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                 const std::vector<int>* dim_labels, const char* op) {
  Tensor y = x.clone();
  ops::index_put_(y, indices, values, accumulate, dim_labels, op);
  if (!needs_recording({&x, &values})) return y;
  record(op, y, {&x, &values}, [indices, accumulate, op](const Tensor& g, const Node& n) -> Grads {
    Grads r(2);
    if (n.needs_grad(0))
      r[0] = accumulate ? g : index_put(g, indices, ops::zeros({}, g.dtype(), g.device()), false, nullptr, op);
    if (n.needs_grad(1)) r[1] = index(g, indices, nullptr, op);
    return r;
  });
  return y;
}

Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                   const std::vector<int>* dim_labels, const char* op) {
  return inplace(op, x, {&values}, [&] { ops::index_put_(x, indices, values, accumulate, dim_labels, op); },
                 [&](const Tensor& s) { return index_put(s, indices, values, accumulate, dim_labels, op); });
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  Tensor y = ops::index_add(x, dim, index, src, alpha);
  if (!needs_recording({&x, &src})) return y;
  double a = alpha.to_double();
  record("index_add", y, {&x, &src}, [dim, index, a](const Tensor& g, const Node& n) -> Grads {
    Tensor gs;
    if (n.needs_grad(1)) {
      gs = index_select(g, dim, index);
      if (a != 1) gs = gs * a;
    }
    return {n.needs_grad(0) ? g : Tensor(), gs};
  });
  return y;
}

Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  return inplace("index_add_", x, {&src}, [&] { ops::index_add_(x, dim, index, src, alpha); },
                 [&](const Tensor& s) { return index_add(s, dim, index, src, alpha); });
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor y = x.clone();
  ops::index_fill_(y, dim, index, value);
  if (!needs_recording({&x})) return y;
  record("index_fill", y, {&x}, [dim, index](const Tensor& g, const Node&) -> Grads {
    return {index_fill(g, dim, index, Scalar(0.0))};
  });
  return y;
}

Tensor& index_fill_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return inplace("index_fill_", x, {}, [&] { ops::index_fill_(x, dim, index, value); },
                 [&](const Tensor& s) { return index_fill(s, dim, index, value); });
}

Tensor take(const Tensor& x, const Tensor& index) {
  if (!needs_recording({&x})) return ops::take(x, index);
  ops::take(x, index);  // the argument checks and messages of take
  return ag::index(reshape(x, {x.numel()}), {index}, nullptr, "take");
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  const Tensor* pv = tensor_ptr(value);
  Tensor y = ops::masked_fill(x, mask, value);
  if (!needs_recording({&x, pv})) return y;
  record("masked_fill", y, {&x, pv}, [mask](const Tensor& g, const Node& n) -> Grads {
    return {n.needs_grad(0) ? where(mask, 0.0, g) : Tensor(), n.needs_grad(1) ? sum(where(mask, g, 0.0)) : Tensor()};
  });
  return y;
}

Tensor& masked_fill_(Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  return inplace("masked_fill_", x, {tensor_ptr(value)}, [&] { ops::masked_fill_(x, mask, value); },
                 [&](const Tensor& s) { return masked_fill(s, mask, value); });
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  Tensor y = ops::masked_select(x, mask);
  if (!needs_recording({&x})) return y;
  record("masked_select", y, {&x}, [mask, sizes = x.sizes()](const Tensor& g, const Node&) -> Grads {
    // Into zeros of the broadcast shape of x and mask (the engine sums it back to x's shape).
    Dims shape = broadcast_shapes("masked_select", sizes, mask.sizes());
    Tensor m = ops::expand(mask, shape);
    return {index_put(ops::zeros(shape, g.dtype(), g.device()), {m}, g, false, nullptr, "masked_select")};
  });
  return y;
}

}  // namespace tide::ag
