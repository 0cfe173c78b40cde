// Index ops. On the CPU every read or write through an index value goes through wrap_fast,
// which checks it against the dim's size first, so no index can touch memory outside the
// tensor. Gathers run in parallel (disjoint outputs); scatters run serially, so that later
// duplicates win deterministically and accumulation needs no atomics.
//
// On a device the same CPU code runs on a "positions" tensor (positions_of: x's shape, each
// element the storage offset of x's element there): it validates every index and computes
// which elements are read or written, and the device backend's take / put kernels move the
// data. The index tensors (small) cross to the host; the data stays on the device.
#include "index.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "../backend.hpp"
#include "../interrupt.hpp"
#include "../iterator.hpp"
#include "../overlap.hpp"
#include "../parallel.hpp"
#include "../scalar_fit.hpp"
#include "creation.hpp"
#include "shape.hpp"
#include "strided.hpp"

namespace tide::ops {

namespace {

inline int64_t wrap_fast(const char* op, int64_t v, int label, int64_t n) {
  if (v >= 1 && v <= n) return v - 1;
  if (v < 0 && v >= -n) return v + n;
  return wrap_index(op, v, label, n);  // throws
}

// An index tensor as int64 on the CPU (a view when it already is one).
Tensor as_index(const char* op, const Tensor& idx) {
  TIDE_CHECK(idx.defined(), op, ": got an undefined index tensor");
  TIDE_CHECK(is_integral(idx.dtype()), op, ": index tensors must have an integer dtype, got ",
             dtype_name(idx.dtype()));
  return idx.to_device({}).to(DType::Int64);
}

int64_t storage_extent(const Tensor& x) { return int64_t(x.storage()->nbytes() / x.itemsize()); }

}  // namespace

Tensor positions_of(const Tensor& x) {
  Tensor iota = arange(Scalar(int64_t(0)), Scalar(storage_extent(x)), Scalar(int64_t(1)), DType::Int64);
  return Tensor::make_view(iota.storage(), x.sizes(), x.strides(), x.offset(), DType::Int64);
}

Tensor take_on_device(const char* op, const Tensor& x, const Tensor& pos, Scalar fill) {
  Tensor out = Tensor::empty(pos.sizes(), x.dtype(), x.device());
  if (out.numel() == 0) return out;
  Tensor offsets = pos.contiguous().to_device(x.device());
  const DeviceBackend& be = backend_for(x.device());
  be.take(x.dtype(), out.address(), x.storage()->data(), static_cast<const int64_t*>(offsets.address()),
          out.numel(), storage_extent(x), fill);
  be.check_kernel_errors(op);
  return out;
}

void put_on_device(const char* op, Tensor& x, const Tensor& pos, const Tensor& values, bool accumulate) {
  x.storage()->bump_version();
  if (pos.numel() == 0) return;
  TIDE_ASSERT(values.sizes() == pos.sizes());
  Tensor offsets = pos.contiguous().to_device(x.device());
  Tensor v = values.to(x.dtype()).to_device(x.device()).contiguous();
  const DeviceBackend& be = backend_for(x.device());
  be.put(x.dtype(), x.storage()->data(), static_cast<const int64_t*>(offsets.address()), v.address(), pos.numel(),
         storage_extent(x), accumulate);
  be.check_kernel_errors(op);
}

namespace {

const int64_t* index_data(const Tensor& idx) {
  return reinterpret_cast<const int64_t*>(detail::storage_base(idx));
}

// values as x's dtype, never sharing x's memory (x[i] = x[j] reads before it writes).
Tensor source_for(const Tensor& x, const Tensor& values) {
  check_defined(values, "index");
  return readable_input(x, values.to(x.dtype()).to_device(x.device()), Reads::Any);
}

// dst op= src for one element of dtype dt (accumulate: add; bool: or).
void accumulate_item(DType dt, char* dst, const char* src) {
  TIDE_DISPATCH_ALL(dt, "index_add", [&] {
    scalar_t* d = reinterpret_cast<scalar_t*>(dst);
    const scalar_t s = *reinterpret_cast<const scalar_t*>(src);
    if constexpr (std::is_same_v<scalar_t, bool>) *d = *d || s;
    else *d = scalar_t(compute_t<scalar_t>(*d) + compute_t<scalar_t>(s));
  });
}

// True when `from` broadcasts to `to` (NumPy rules, one direction).
bool expandable(const Dims& from, const Dims& to) {
  if (from.size() > to.size()) return false;
  for (int i = 1; i <= from.size(); ++i) {
    int64_t a = from[from.size() - i], b = to[to.size() - i];
    if (a != b && a != 1) return false;
  }
  return true;
}

// values with leading size-1 dims dropped down to `ndim` dims (as x[...] = v allows).
Tensor strip_leading_ones(const Tensor& v, int ndim) {
  Tensor r = v;
  while (r.dim() > ndim && r.size(0) == 1) r = select(r, 0, 0);
  return r;
}

// The layout of one advanced-indexing call, shared by index() and index_put_().
struct Plan {
  Tensor xp;                 // x (or a view of it) with the k indexed dims first
  int k = 0;                 // indexed dims
  std::vector<Tensor> idx;   // k int64 index tensors, each expanded to B
  std::vector<int> labels;   // user dims (0-based) of the k indexed dims
  Dims B;                    // the broadcast shape of the indices
  Dims final_shape;          // shape of x[indices]
  std::vector<int64_t> internal_to_final;  // dims of the [B, rest] order in final_shape
  bool none = false;         // no index tensor at all
};

Plan make_plan(const char* op, const Tensor& x, const std::vector<Tensor>& indices,
               const std::vector<int>* labels_in) {
  Plan p;
  Tensor xw = x;
  std::vector<int> labels;
  for (int d = 0; d < x.dim(); ++d) labels.push_back(labels_in && d < int(labels_in->size()) ? (*labels_in)[d] : d);
  auto label_at = [&](int pos) { return pos < int(labels.size()) ? labels[pos] : pos; };
  std::vector<Tensor> per_dim;  // one entry per consumed dim of xw; undefined = whole
  int consumed = 0;
  for (const Tensor& e0 : indices) {
    if (!e0.defined()) {
      per_dim.emplace_back();
      ++consumed;
      continue;
    }
    const Tensor e = e0.to_device({});
    if (is_bool(e.dtype())) {
      if (e.dim() == 0) {  // x[true] adds a dim of size 1, x[false] one of size 0
        xw = unsqueeze(xw, consumed);
        labels.insert(labels.begin() + std::min<size_t>(consumed, labels.size()), label_at(consumed));
        Tensor pick = Tensor::empty({e.item().to<bool>() ? 1 : 0}, DType::Int64);
        if (pick.numel()) pick.data<int64_t>()[0] = 1;
        per_dim.push_back(pick);
        ++consumed;
        continue;
      }
      TIDE_CHECK(consumed + e.dim() <= xw.dim(), op, ": too many indices for a tensor of ", x.dim(),
                 " dims: a mask of ", e.dim(), " dims at dim ", label_at(consumed) + 1);
      for (int j = 0; j < e.dim(); ++j) {
        if (e.size(j) != xw.size(consumed + j)) {
          Dims part;
          for (int q = 0; q < e.dim(); ++q) part.push_back(xw.size(consumed + q));
          TIDE_FAIL(op, ": the shape of the mask ", e.sizes().str(), " does not match the shape ", part.str(),
                    " of the indexed tensor at dim ", label_at(consumed) + 1);
        }
      }
      for (Tensor& col : nonzero_tuple(e)) per_dim.push_back(col);
      consumed += e.dim();
      continue;
    }
    TIDE_CHECK(is_integral(e.dtype()), op, ": tensors used as indices must be bool or integer tensors, got ",
               dtype_name(e.dtype()));
    per_dim.push_back(e.to(DType::Int64));
    ++consumed;
  }
  TIDE_CHECK(consumed <= xw.dim(), op, ": too many indices for a tensor of ", x.dim(), " dims (got ", consumed, ")");
  while (int(per_dim.size()) < xw.dim()) per_dim.emplace_back();

  std::vector<int> pos;
  for (int d = 0; d < xw.dim(); ++d)
    if (per_dim[d].defined()) pos.push_back(d);
  if (pos.empty()) {
    p.none = true;
    p.xp = xw;
    p.final_shape = xw.sizes();
    return p;
  }
  p.k = int(pos.size());
  bool first = true;
  for (int d : pos) {
    p.B = first ? per_dim[d].sizes() : broadcast_shapes(op, p.B, per_dim[d].sizes());
    first = false;
  }
  check_extent(op, p.B, DType::Int64);  // the index tensors are expanded to it
  bool adjacent = pos.back() - pos.front() + 1 == p.k;
  std::vector<int64_t> order(pos.begin(), pos.end());
  for (int d = 0; d < xw.dim(); ++d)
    if (!per_dim[d].defined()) order.push_back(d);
  p.xp = permute(xw, order);
  for (int j = 0; j < p.k; ++j) {
    p.idx.push_back(expand(per_dim[pos[j]], p.B));
    p.labels.push_back(label_at(pos[j]));
  }
  const int nb = p.B.size(), nr = xw.dim() - p.k;
  const int before = adjacent ? pos.front() : 0;  // rest dims that stay in front of B
  for (int j = 0; j < before; ++j) p.final_shape.push_back(p.xp.size(p.k + j));
  for (int64_t s : p.B) p.final_shape.push_back(s);
  for (int j = before; j < nr; ++j) p.final_shape.push_back(p.xp.size(p.k + j));
  for (int i = 0; i < nb; ++i) p.internal_to_final.push_back(before + i);
  for (int j = 0; j < nr; ++j) p.internal_to_final.push_back(j < before ? j : j + nb);
  return p;
}

// Element offsets into p.xp's storage of the start of each of the numel(B) indexed blocks.
std::vector<int64_t> block_offsets(const char* op, const Plan& p) {
  const int64_t n = shape_numel(p.B);
  std::vector<int64_t> offs(size_t(n), p.xp.offset());
  for (int j = 0; j < p.k; ++j) {
    const Tensor& ix = p.idx[j];
    detail::Strided<1> s(p.B);
    s.set(0, ix.strides());
    const int64_t* base = index_data(ix) + ix.offset();
    const int64_t size = p.xp.size(j), stride = p.xp.stride(j);
    const int label = p.labels[j];
    parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t e) {
      int64_t at = b;
      detail::strided_walk(s, b, e, [&](const int64_t* o) {
        offs[size_t(at++)] += wrap_fast(op, base[o[0]], label, size) * stride;
      });
    });
  }
  return offs;
}

// The tensors a plan's host kernel touches: the indexed tensor, the index tensors and `other`
// (the gathered output or the values put).
std::vector<const Tensor*> host_operands(const Plan& p, const Tensor& other) {
  std::vector<const Tensor*> ops{&p.xp, &other};
  for (const Tensor& ix : p.idx) ops.push_back(&ix);
  return ops;
}

// The walk over [B, rest]: operand 0 is `other` (the gathered output or the values), 1 the
// rest dims of xp (relative to a block offset), 2 the block number.
detail::Strided<3> block_walk(const Plan& p, const Tensor& other_internal) {
  Dims shape = p.B;
  for (int j = p.k; j < p.xp.dim(); ++j) shape.push_back(p.xp.size(j));
  detail::Strided<3> s(shape);
  s.set(0, other_internal.strides());
  Dims bst = contiguous_strides(p.B);
  const int nb = p.B.size();
  for (int i = 0; i < shape.size(); ++i) {
    s.strides[1][i] = i < nb ? 0 : p.xp.stride(p.k + i - nb);
    s.strides[2][i] = i < nb ? bst[i] : 0;
  }
  s.coalesce();
  return s;
}

// Checks gather/scatter shapes: same number of dims, index no larger than `other` (outside
// `dim` for x).
void check_scatter_shapes(const char* op, const Tensor& x, int d, const Tensor& index, const Tensor* src) {
  TIDE_CHECK(index.dim() == x.dim(), op, ": index must have as many dims as the input: index ",
             index.sizes().str(), ", input ", x.sizes().str());
  for (int k = 0; k < x.dim(); ++k)
    TIDE_CHECK(k == d || index.size(k) <= x.size(k), op, ": index ", index.sizes().str(),
               " is larger than the input ", x.sizes().str(), " at dim ", k + 1, " (only dim ", d + 1,
               " may be larger)");
  if (src) {
    TIDE_CHECK(src->dim() == x.dim(), op, ": src must have as many dims as the input: src ",
               src->sizes().str(), ", input ", x.sizes().str());
    for (int k = 0; k < x.dim(); ++k)
      TIDE_CHECK(index.size(k) <= src->size(k), op, ": index ", index.sizes().str(), " is larger than src ",
                 src->sizes().str(), " at dim ", k + 1);
  }
}

Tensor& scatter_impl(const char* op, Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src,
                     bool accumulate) {
  check_defined(x, op);
  check_no_internal_overlap(op, x);
  Tensor x1 = x.dim() == 0 ? reshape(x, {1}) : x;
  Tensor ix = readable_input(x, as_index(op, index), Reads::Any);  // read while x is written
  if (ix.dim() == 0) ix = reshape(ix, {1});
  int d = wrap_dim(op, dim, x1.dim());
  Tensor s;
  if (src.is_tensor()) {
    s = source_for(x, src.tensor);
    if (s.dim() == 0) s = reshape(s, {1});
    check_scatter_shapes(op, x1, d, ix, &s);
  } else {
    check_scatter_shapes(op, x1, d, ix, nullptr);
    s = Tensor::empty({}, x.dtype(), x.device());
    fill_(s, src.scalar);
    s = expand(s, ix.sizes());
  }
  if (!x.device().is_cpu()) {  // src[i][j] goes where gather would read x[...][j]
    Tensor values = s.as_strided(ix.sizes(), s.strides(), s.offset());
    put_on_device(op, x, gather(positions_of(x1), d, ix), values, accumulate);
    return x;
  }
  x.storage()->bump_version();
  if (ix.numel() == 0) return x;
  // (A host kernel: the indices are read, and checked, when it runs.)
  run_host_kernel(op, {&ix, &s, &x1}, [op, ix, s, x1, d, accumulate] {
    detail::Strided<3> w(ix.sizes());
    w.set(0, ix.strides());
    w.set(1, s.strides());
    w.set(2, x1.strides());
    w.strides[2][d] = 0;
    const int64_t* ib = index_data(ix) + ix.offset();
    const char* sb = detail::storage_base(s) + s.offset() * int64_t(s.itemsize());
    char* xb = detail::storage_base(x1) + x1.offset() * int64_t(x1.itemsize());
    const int64_t item = int64_t(x1.itemsize()), size = x1.size(d), stride = x1.stride(d);
    const DType dt = x1.dtype();
    detail::strided_walk(w, 0, ix.numel(), [&](const int64_t* o) {
      int64_t j = wrap_fast(op, ib[o[0]], d, size);
      char* dst = xb + (o[2] + j * stride) * item;
      const char* from = sb + o[1] * item;
      if (accumulate) accumulate_item(dt, dst, from);
      else detail::copy_item(dst, from, size_t(item));
    });
  });
  return x;
}

}  // namespace

int64_t wrap_index(const char* op, int64_t index, int dim, int64_t size) {
  if (index >= 1 && index <= size) return index - 1;
  if (index <= -1 && index >= -size) return index + size;
  if (size == 0) TIDE_FAIL(op, ": index ", index, " is out of range for dim ", dim + 1, " of size 0 (the dim is empty)");
  TIDE_FAIL(op, ": index ", index, " is out of range for dim ", dim + 1, " of size ", size, " (valid 1..", size,
            " or -", size, "..-1", index == 0 ? "; indices are 1-based)" : ")");
}

Tensor index(const Tensor& x, const std::vector<Tensor>& indices, const std::vector<int>* dim_labels,
             const char* op) {
  Plan p = make_plan(op, x, indices, dim_labels);
  if (p.none) return alias(p.xp);
  if (!x.device().is_cpu()) return take_on_device(op, x, index(positions_of(x), indices, dim_labels, op));
  Tensor out = Tensor::empty(p.final_shape, x.dtype(), x.device(), op);
  if (out.numel() == 0) return out;  // as PyTorch: no element read, no index checked
  Tensor internal = permute(out, p.internal_to_final);
  // A host kernel: the indices are read, and checked, when it runs (so torch.compile replays it).
  run_host_kernel(op, host_operands(p, out), [op, p, out, internal] {
    std::vector<int64_t> offs = block_offsets(op, p);
    detail::Strided<3> w = block_walk(p, internal);
    char* ob = detail::storage_base(out);
    const char* xb = detail::storage_base(p.xp);
    const int64_t item = int64_t(out.itemsize());
    const int last = w.ndim - 1;
    const bool rows = w.ndim > 0 && w.strides[0][last] == 1 && w.strides[1][last] == 1 && w.strides[2][last] == 0;
    parallel_for(0, out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      if (rows) {  // contiguous runs inside one block: copy them whole
        detail::strided_runs(w, b, e, [&](const int64_t* o, int64_t n) {
          std::memcpy(ob + o[0] * item, xb + (offs[size_t(o[2])] + o[1]) * item, size_t(n * item));
        });
        return;
      }
      detail::strided_walk(w, b, e, [&](const int64_t* o) {
        detail::copy_item(ob + o[0] * item, xb + (offs[size_t(o[2])] + o[1]) * item, size_t(item));
      });
    });
  });
  return out;
}

Tensor& index_put_(Tensor& x, const std::vector<Tensor>& indices, const Tensor& values, bool accumulate,
                   const std::vector<int>* dim_labels, const char* op) {
  TIDE_CHECK(values.defined(), op, ": got undefined values");
  check_no_internal_overlap(op, x);
  Plan p = make_plan(op, x, indices, dim_labels);
  Tensor v = strip_leading_ones(source_for(x, values), p.final_shape.size());
  TIDE_CHECK(expandable(v.sizes(), p.final_shape), op, ": shape mismatch: values of shape ", values.sizes().str(),
             " cannot be broadcast to the indexed shape ", p.final_shape.str());
  v = expand(v, p.final_shape);
  if (p.none) {
    Tensor dst = p.xp;
    if (accumulate) {
      binary(BinaryOp::Add, dst, v, &dst);
    } else {
      copy_(dst, v);
    }
    x.storage()->bump_version();
    return x;
  }
  if (!x.device().is_cpu()) {
    put_on_device(op, x, index(positions_of(x), indices, dim_labels, op), v, accumulate);
    return x;
  }
  x.storage()->bump_version();
  // A host kernel as in index(); the indices are checked even when no value is written.
  Tensor internal = permute(v, p.internal_to_final);
  run_host_kernel(op, host_operands(p, v), [op, p, v, internal, accumulate] {
    std::vector<int64_t> offs = block_offsets(op, p);
    if (v.numel() == 0) return;
    detail::Strided<3> w = block_walk(p, internal);
    const char* vb = detail::storage_base(v);
    char* xb = detail::storage_base(p.xp);
    const int64_t item = int64_t(v.itemsize());
    const DType dt = v.dtype();
    detail::strided_walk(w, 0, v.numel(), [&](const int64_t* o) {
      char* dst = xb + (offs[size_t(o[2])] + o[1]) * item;
      const char* from = vb + (v.offset() + o[0]) * item;
      if (accumulate) accumulate_item(dt, dst, from);
      else detail::copy_item(dst, from, size_t(item));
    });
  });
  return x;
}

namespace {

// The index list of index_select / index_add_ / index_fill_: `index` (0-d or 1-D, 1-based
// values) at the position of dim (0-based, may be negative), nothing before it, as
// ops::index and index_put_ take it.
struct IndexAlongDim {
  int dim;
  std::vector<Tensor> per_dim;
  const Tensor& index() const { return per_dim[size_t(dim)]; }
};

IndexAlongDim index_along_dim(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  TIDE_CHECK(x.dim() > 0, op, ": cannot index a 0-dim tensor");
  const int d = wrap_dim(op, dim, x.dim());
  TIDE_CHECK(index.defined() && index.dim() <= 1, op, ": index must be a 0-d or 1-D tensor, got shape ",
             index.defined() ? index.sizes().str() : "(undefined)");
  Tensor ix = as_index(op, index);
  if (ix.dim() == 0) ix = reshape(ix, {1});
  IndexAlongDim r{d, std::vector<Tensor>(size_t(d) + 1)};
  r.per_dim[size_t(d)] = std::move(ix);
  return r;
}

}  // namespace

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  const IndexAlongDim at = index_along_dim("index_select", x, dim, index);
  return ops::index(x, at.per_dim, nullptr, "index_select");
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  const char* op = "gather";
  check_defined(x, op);
  if (!x.device().is_cpu()) return take_on_device(op, x, gather(positions_of(x), dim, index));
  Tensor ix = as_index(op, index);
  Tensor x1 = x.dim() == 0 ? reshape(x, {1}) : x;
  Tensor i1 = ix.dim() == 0 ? reshape(ix, {1}) : ix;
  int d = wrap_dim(op, dim, x1.dim());
  check_scatter_shapes(op, x1, d, i1, nullptr);
  Tensor out = Tensor::empty(ix.sizes(), x.dtype(), x.device(), op);
  if (out.numel() == 0) return out;
  // (A host kernel: the indices are read, and checked, when it runs.)
  run_host_kernel(op, {&i1, &x1, &out}, [op, i1, x1, out, d] {
    detail::Strided<3> w(i1.sizes());
    w.set(0, contiguous_strides(i1.sizes()));
    w.set(1, i1.strides());
    w.set(2, x1.strides());
    w.strides[2][d] = 0;
    const int64_t* ib = index_data(i1) + i1.offset();
    char* ob = detail::storage_base(out);
    const char* xb = detail::storage_base(x1) + x1.offset() * int64_t(x1.itemsize());
    const int64_t item = int64_t(x1.itemsize()), size = x1.size(d), stride = x1.stride(d);
    parallel_for(0, out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      detail::strided_walk(w, b, e, [&](const int64_t* o) {
        int64_t j = wrap_fast(op, ib[o[1]], d, size);
        detail::copy_item(ob + o[0] * item, xb + (o[2] + j * stride) * item, size_t(item));
      });
    });
  });
  return out;
}

Tensor& scatter_(Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src) {
  return scatter_impl("scatter", x, dim, index, src, false);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const TensorOrScalar& src) {
  Tensor out = x.clone();
  return scatter_impl("scatter", out, dim, index, src, false);
}

Tensor& scatter_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter_add", x, dim, index, TensorOrScalar(src), true);
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  Tensor out = x.clone();
  return scatter_impl("scatter_add", out, dim, index, TensorOrScalar(src), true);
}

Tensor& index_add_(Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  const char* op = "index_add";
  const IndexAlongDim at = index_along_dim(op, x, dim, index);
  const int64_t n = at.index().numel();
  Dims want = x.sizes();
  want[at.dim] = n;
  TIDE_CHECK(src.defined() && src.sizes() == want, op, ": src must have shape ", want.str(), " (the input's with dim ",
             at.dim + 1, " of size ", n, "), got ", src.defined() ? src.sizes().str() : "(undefined)");
  Tensor s = src;
  if (!(alpha.kind != Scalar::Float && alpha.i == 1)) s = binary(BinaryOp::Mul, src, alpha);
  return index_put_(x, at.per_dim, s, true, nullptr, op);
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src, const Scalar& alpha) {
  Tensor out = x.clone();
  return index_add_(out, dim, index, src, alpha);
}

Tensor& index_fill_(Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  const char* op = "index_fill";
  check_scalar_fits(op, value, x.dtype());
  const IndexAlongDim at = index_along_dim(op, x, dim, index);
  Tensor v = Tensor::empty({}, x.dtype(), x.device());
  fill_(v, value);
  return index_put_(x, at.per_dim, v, false, nullptr, op);
}

Tensor take(const Tensor& x, const Tensor& index) {
  Tensor ix = as_index("take", index);
  return ops::index(reshape(x, {-1}), {ix}, nullptr, "take");
}

namespace {

// The fill value for masked_fill as a scalar of x's category (1.7 into an int tensor is 1).
Scalar fill_value(const char* op, const Tensor& x, const TensorOrScalar& value) {
  Scalar s;
  if (value.is_tensor()) {
    TIDE_CHECK(value.tensor.numel() == 1, op, ": value must be a number or a one-element tensor, got shape ",
               value.tensor.sizes().str());
    s = value.tensor.item();
  } else {
    s = value.scalar;
  }
  if (is_bool(x.dtype())) return Scalar(s.to<bool>());
  check_scalar_fits(op, s, x.dtype());
  if (is_integral(x.dtype())) return Scalar(s.to_int());
  return s;
}

void check_mask(const char* op, const Tensor& mask) {
  TIDE_CHECK(mask.defined(), op, ": got an undefined mask");
  TIDE_CHECK(is_bool(mask.dtype()), op, ": expected a bool mask, got ", dtype_name(mask.dtype()),
             " (compare first, e.g. x:gt(0))");
}

}  // namespace

Tensor& masked_fill_(Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  const char* op = "masked_fill";
  check_mask(op, mask);
  check_no_internal_overlap(op, x);
  TIDE_CHECK(expandable(mask.sizes(), x.sizes()), op, ": mask of shape ", mask.sizes().str(),
             " cannot be broadcast to the tensor's shape ", x.sizes().str());
  Scalar s = fill_value(op, x, value);
  where(mask, TensorOrScalar(s), TensorOrScalar(x), &x);
  x.storage()->bump_version();
  return x;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const TensorOrScalar& value) {
  const char* op = "masked_fill";
  check_mask(op, mask);
  broadcast_shapes(op, x.sizes(), mask.sizes());
  Scalar s = fill_value(op, x, value);
  Tensor out = where(mask, TensorOrScalar(s), TensorOrScalar(x));
  return out.dtype() == x.dtype() ? out : out.to(x.dtype());
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  const char* op = "masked_select";
  check_mask(op, mask);
  check_defined(x, op);
  if (!x.device().is_cpu()) return take_on_device(op, x, masked_select(positions_of(x), mask.to_device({})));
  check_cpu(mask, op);
  Dims B = broadcast_shapes(op, x.sizes(), mask.sizes());
  check_extent(op, B, x.dtype());
  if (shape_numel(B) == 0) return Tensor::empty({0}, x.dtype(), x.device());
  Tensor xe = expand(x, B), me = expand(mask, B);
  detail::Strided<2> w(B);
  w.set(0, xe.strides());
  w.set(1, me.strides());
  w.coalesce();
  const bool* mb = reinterpret_cast<const bool*>(detail::storage_base(me)) + me.offset();
  int64_t n = 0;
  const int64_t total = shape_numel(B);
  detail::strided_walk(w, 0, total, [&](const int64_t* o) { n += mb[o[1]]; });
  Tensor out = Tensor::empty({n}, x.dtype(), x.device());
  if (n == 0) return out;
  char* ob = detail::storage_base(out);
  const char* xb = detail::storage_base(xe) + xe.offset() * int64_t(x.itemsize());
  const size_t item = x.itemsize();
  int64_t at = 0;
  detail::strided_walk(w, 0, total, [&](const int64_t* o) {
    if (mb[o[1]]) detail::copy_item(ob + (at++) * int64_t(item), xb + o[0] * int64_t(item), item);
  });
  return out;
}

namespace {

// Calls f(coords) for each nonzero element of x in row-major order. A serial walk, so it
// checks the interrupt itself (every 2^20 elements): a view of 2^62 elements must stop on Ctrl-C.
template <typename F>
void for_each_nonzero(const Tensor& x, F&& f) {
  check_cpu(x, "nonzero");
  const int nd = x.dim();
  const int64_t n = x.numel();
  if (n == 0) return;
  TIDE_DISPATCH_ALL(x.dtype(), "nonzero", [&] {
    const scalar_t* base = reinterpret_cast<const scalar_t*>(detail::storage_base(x)) + x.offset();
    int64_t coord[kMaxDims] = {};
    int64_t off = 0;
    for (int64_t i = 0; i < n; ++i) {
      if ((i & 0xfffff) == 0xfffff) check_interrupt();
      if (compute_t<scalar_t>(base[off]) != compute_t<scalar_t>(0)) f(static_cast<const int64_t*>(coord));
      for (int d = nd - 1; d >= 0; --d) {
        off += x.stride(d);
        if (++coord[d] < x.size(d)) break;
        off -= coord[d] * x.stride(d);
        coord[d] = 0;
      }
    }
  });
}

}  // namespace

int64_t count_nonzero(const Tensor& x) {
  if (!x.device().is_cpu()) return count_nonzero(x.to_device({}));  // a host count: the size is needed there
  int64_t n = 0;
  for_each_nonzero(x, [&](const int64_t*) { ++n; });
  return n;
}

Tensor nonzero(const Tensor& x) {
  if (!x.device().is_cpu()) return nonzero(x.to_device({})).to_device(x.device());
  const int nd = x.dim();
  int64_t n = count_nonzero(x);
  Tensor out = Tensor::empty({n, int64_t(nd)}, DType::Int64);
  int64_t* o = out.data<int64_t>();
  for_each_nonzero(x, [&](const int64_t* c) {
    for (int d = 0; d < nd; ++d) *o++ = c[d] + 1;
  });
  return out;
}

std::vector<Tensor> nonzero_tuple(const Tensor& x) {
  Tensor nz = nonzero(x.dim() == 0 ? reshape(x, {1}) : x);
  std::vector<Tensor> cols;
  for (int d = 0; d < nz.size(1); ++d) cols.push_back(select(nz, 1, d));
  return cols;
}

}  // namespace tide::ops
