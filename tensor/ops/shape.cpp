// Shape ops. Views only rewrite sizes, strides and offset over the same storage; the copies
// (cat, stack, repeat, flip) write through views with ops::copy_, so they work wherever
// copy_ does (flip copies its reversed view, whose strides are negative).
#include "shape.hpp"

#include <algorithm>
#include <string>

#include "../interrupt.hpp"
#include "../memory_budget.hpp"
#include "../parallel.hpp"
#include "elementwise.hpp"
#include "index.hpp"

namespace tide::ops {

namespace {

// Prints a list of 0-based dims as a script wrote them (1-based; negatives as given).
std::string dims_str(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i] >= 0 ? dims[i] + 1 : dims[i]);
  }
  return s + "}";
}

Tensor view_impl(const char* op, const Tensor& x, const Dims& shape) {
  Dims s = infer_size(op, shape, x.numel());
  check_extent(op, s, x.dtype());  // a tensor of no elements can be viewed as any shape of 0
  Dims st;
  if (!view_strides(x.sizes(), x.strides(), s, st))
    TIDE_FAIL(op, ": size ", s.str(), " is not compatible with the input's strides; use reshape (input size ",
              x.sizes().str(), ", strides ", x.strides().str(), ")");
  return x.as_strided(s, st, x.offset());
}

// Sorted, unique, wrapped dims; "<op>: dim d appears more than once" otherwise.
std::vector<int> unique_dims(const char* op, const std::vector<int64_t>& dims, int ndim) {
  std::vector<int> out;
  for (int64_t d : dims) {
    int w = wrap_dim(op, d, ndim);
    TIDE_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, ": dim ", w + 1,
               " appears more than once in ", dims_str(dims));
    out.push_back(w);
  }
  return out;
}

}  // namespace

int wrap_dim(const char* op, int64_t dim, int ndim) {
  int n = ndim > 0 ? ndim : 1;  // a 0-dim tensor accepts dim 0 / -1, as in PyTorch
  if (dim >= 0 && dim < n) return int(dim);
  if (dim < 0 && dim >= -n) return int(dim + n);
  TIDE_FAIL(op, ": dim ", dim >= 0 ? dim + 1 : dim, " is out of range for a tensor of ", ndim,
            " dims (valid 1..", n, " or -", n, "..-1)");
}

Dims infer_size(const char* op, const Dims& shape, int64_t numel) {
  Dims out = shape, given;
  int infer = -1;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      TIDE_CHECK(infer < 0, op, ": only one size can be inferred (-1), got shape ", shape.str());
      infer = i;
    } else {
      TIDE_CHECK(shape[i] >= 0, op, ": invalid size ", shape[i], " in shape ", shape.str());
      given.push_back(shape[i]);
    }
  }
  // A product of the given sizes past int64 (with no 0) fits no tensor: no input matches.
  int64_t known = 1;
  bool overflow = false, zero = false;
  for (int64_t s : given) {
    overflow |= __builtin_mul_overflow(known, s, &known);
    zero |= s == 0;
  }
  if (zero) known = 0;
  TIDE_CHECK(!overflow || zero, op, ": shape ", shape.str(), " is invalid for input of size ", numel);
  if (infer >= 0) {
    TIDE_CHECK(known != 0, op, ": cannot infer the size of -1 in shape ", shape.str(),
               " when the other sizes multiply to 0");
    TIDE_CHECK(numel % known == 0, op, ": shape ", shape.str(), " is invalid for input of size ", numel);
    out[infer] = numel / known;
    return out;
  }
  TIDE_CHECK(known == numel, op, ": shape ", shape.str(), " is invalid for input of size ", numel);
  return out;
}

bool view_strides(const Dims& sizes, const Dims& strides, const Dims& new_shape, Dims& out) {
  const int nd = new_shape.size();
  out = Dims(nd, 1);
  if (sizes.empty()) return true;  // a scalar views as any shape of one element
  if (shape_numel(sizes) == 0) {
    if (sizes == new_shape) {
      out = strides;
      return true;
    }
    out = contiguous_strides(new_shape);
    return true;
  }
  // Walk the old dims from the back, in chunks that are contiguous among themselves; each
  // chunk must be covered exactly by a run of new dims.
  int view_d = nd - 1;
  int64_t chunk_base_stride = strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int tensor_d = sizes.size() - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= sizes[tensor_d];
    if (tensor_d == 0 ||
        (sizes[tensor_d - 1] != 1 && strides[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (tensor_d > 0) {
        chunk_base_stride = strides[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

Tensor view(const Tensor& x, const Dims& shape) { return view_impl("view", x, shape); }

// The bytes of x read as dtype dt (torch's x.view(dtype), NumPy's a.view(dtype)). With another
// item size the last dim's size scales by the size ratio, which needs a last dim of stride 1
// whose byte size is a multiple of the new item size, other strides and the offset in whole
// new items. Bytes are not reinterpreted as bool (a bool must hold 0 or 1).
Tensor view_dtype(const Tensor& x, DType dt) {
  if (dt == x.dtype()) return alias(x);
  TIDE_CHECK(dt != DType::Bool || x.dtype() == DType::Bool, "view: cannot view ", dtype_name(x.dtype()),
             " data as bool (a bool holds only 0 or 1); compare instead, e.g. x ~= 0");
  const int64_t from = int64_t(x.itemsize()), to = int64_t(dtype_size(dt));
  Dims sizes = x.sizes(), strides = x.strides();
  if (from == to) return Tensor::make_view(x.storage(), sizes, strides, x.offset(), dt);
  const char* what = to > from ? "a larger" : "a smaller";
  TIDE_CHECK(x.dim() > 0, "view: a 0-dim ", dtype_name(x.dtype()), " tensor cannot be viewed as ", what,
             " dtype (", dtype_name(dt), "); unsqueeze it first");
  const int last = x.dim() - 1;
  TIDE_CHECK(x.stride(last) == 1 || x.size(last) == 1, "view: viewing ", dtype_name(x.dtype()), " as ", what,
             " dtype (", dtype_name(dt), ") needs the last dim to have stride 1, got strides ", x.strides().str());
  auto in_new_items = [&](int64_t elems, const char* what_bytes) {
    const int64_t bytes = elems * from;
    TIDE_CHECK(bytes % to == 0, "view: viewing ", dtype_name(x.dtype()), " as ", dtype_name(dt), " needs ",
               what_bytes, " (", bytes, " bytes) to be a multiple of ", to, " bytes");
    return bytes / to;
  };
  sizes[last] = in_new_items(x.size(last), "the last dim's size");
  strides[last] = 1;
  for (int d = 0; d < last; ++d) strides[d] = in_new_items(x.stride(d), "every other stride");
  const int64_t offset = in_new_items(x.offset(), "the storage offset");
  return Tensor::make_view(x.storage(), sizes, strides, offset, dt);
}

Tensor reshape(const Tensor& x, const Dims& shape) {
  Dims s = infer_size("reshape", shape, x.numel());
  check_extent("reshape", s, x.dtype());
  Dims st;
  if (view_strides(x.sizes(), x.strides(), s, st)) return x.as_strided(s, st, x.offset());
  Tensor c = x.clone();
  return c.as_strided(s, contiguous_strides(s), c.offset());
}

Tensor alias(const Tensor& x) { return x.as_strided(x.sizes(), x.strides(), x.offset()); }

Tensor t(const Tensor& x) {
  TIDE_CHECK(x.dim() <= 2, "t: expects a tensor with at most 2 dims, but got ", x.dim(),
             " dims (use transpose or permute)");
  return x.dim() < 2 ? alias(x) : transpose(x, 0, 1);
}

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
  int a = wrap_dim("transpose", d0, x.dim()), b = wrap_dim("transpose", d1, x.dim());
  if (x.dim() == 0) return alias(x);
  Dims sz = x.sizes(), st = x.strides();
  std::swap(sz[a], sz[b]);
  std::swap(st[a], st[b]);
  return x.as_strided(sz, st, x.offset());
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  TIDE_CHECK(int(dims.size()) == x.dim(), "permute: the tensor has ", x.dim(), " dims but ",
             dims_str(dims), " names ", dims.size());
  std::vector<int> w = unique_dims("permute", dims, x.dim());
  Dims sz, st;
  for (int d : w) {
    sz.push_back(x.size(d));
    st.push_back(x.stride(d));
  }
  return x.as_strided(sz, st, x.offset());
}

Tensor reverse_dims(const Tensor& x) {
  std::vector<int64_t> dims;
  for (int d = x.dim() - 1; d >= 0; --d) dims.push_back(d);
  return permute(x, dims);
}

Tensor movedim(const Tensor& x, const std::vector<int64_t>& src, const std::vector<int64_t>& dst) {
  TIDE_CHECK(src.size() == dst.size(), "movedim: source ", dims_str(src), " and destination ",
             dims_str(dst), " must name the same number of dims");
  std::vector<int> s = unique_dims("movedim", src, x.dim()), d = unique_dims("movedim", dst, x.dim());
  const int n = x.dim();
  std::vector<int64_t> order(n, -1);
  std::vector<bool> used(n, false);
  for (size_t i = 0; i < s.size(); ++i) {
    order[d[i]] = s[i];
    used[s[i]] = true;
  }
  int next = 0;
  for (int i = 0; i < n; ++i) {
    if (order[i] >= 0) continue;
    while (used[next]) ++next;
    order[i] = next++;
  }
  return n == 0 ? alias(x) : permute(x, order);
}

Tensor squeeze(const Tensor& x) {
  Dims sz, st;
  for (int d = 0; d < x.dim(); ++d)
    if (x.size(d) != 1) {
      sz.push_back(x.size(d));
      st.push_back(x.stride(d));
    }
  return x.as_strided(sz, st, x.offset());
}

Tensor squeeze(const Tensor& x, const std::vector<int64_t>& dims) {
  std::vector<int> w = unique_dims("squeeze", dims, x.dim());
  Dims sz, st;
  for (int d = 0; d < x.dim(); ++d)
    if (x.size(d) != 1 || std::find(w.begin(), w.end(), d) == w.end()) {
      sz.push_back(x.size(d));
      st.push_back(x.stride(d));
    }
  return x.as_strided(sz, st, x.offset());
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  int d = wrap_dim("unsqueeze", dim, x.dim() + 1);
  Dims sz = x.sizes(), st = x.strides();
  // The stride of a size-1 dim never addresses memory; an empty tensor's product may pass
  // int64, and then any value serves.
  int64_t stride = 1;
  if (d < x.dim() && __builtin_mul_overflow(x.size(d), x.stride(d), &stride)) stride = 1;
  sz.insert(d, 1);
  st.insert(d, stride);
  return x.as_strided(sz, st, x.offset());
}

Tensor expand(const Tensor& x, const Dims& sizes) {
  const int n = sizes.size(), nd = x.dim();
  TIDE_CHECK(n >= nd, "expand: the tensor has ", nd, " dims (shape ", x.sizes().str(), ") but only ", n,
             " sizes were given: ", sizes.str());
  Dims sz(n, 0), st(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    int xd = i - (n - nd);
    int64_t want = sizes[i];
    TIDE_CHECK(want >= -1, "expand: invalid size ", want, " in ", sizes.str());
    if (xd < 0) {
      TIDE_CHECK(want >= 0, "expand: -1 is not allowed at new leading dim ", i + 1, " of ", sizes.str());
      sz[i] = want;
      st[i] = 0;
    } else if (want == -1 || want == x.size(xd)) {
      sz[i] = x.size(xd);
      st[i] = x.stride(xd);
    } else {
      TIDE_CHECK(x.size(xd) == 1, "expand: the expanded size ", want, " must match the existing size ",
                 x.size(xd), " at dim ", xd + 1, " (tensor ", x.sizes().str(), " to ", sizes.str(),
                 "); only dims of size 1 can be expanded");
      sz[i] = want;
      st[i] = 0;
    }
  }
  check_extent("expand", sz, x.dtype());
  return x.as_strided(sz, st, x.offset());
}

Tensor expand_as(const Tensor& x, const Tensor& other) { return expand(x, other.sizes()); }

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  int s = wrap_dim("flatten", start, x.dim()), e = wrap_dim("flatten", end, x.dim());
  TIDE_CHECK(s <= e, "flatten: start dim ", s + 1, " must not come after end dim ", e + 1);
  if (x.dim() == 0) return reshape(x, {1});
  if (s == e) return alias(x);
  Dims shape, merged;
  for (int d = 0; d < x.dim(); ++d) {
    if (d < s || d > e) {
      shape.push_back(x.size(d));
    } else {
      merged.push_back(x.size(d));
      if (d == e) shape.push_back(shape_numel(merged, "flatten"));
    }
  }
  return reshape(x, shape);
}

Tensor unflatten(const Tensor& x, int64_t dim, const Dims& sizes) {
  TIDE_CHECK(x.dim() > 0, "unflatten: cannot unflatten a 0-dim tensor");
  int d = wrap_dim("unflatten", dim, x.dim());
  TIDE_CHECK(!sizes.empty(), "unflatten: sizes must not be empty");
  Dims part = infer_size("unflatten", sizes, x.size(d));
  Dims shape;
  for (int i = 0; i < x.dim(); ++i) {
    if (i == d) {
      for (int64_t s : part) shape.push_back(s);
    } else {
      shape.push_back(x.size(i));
    }
  }
  return view_impl("unflatten", x, shape);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  TIDE_CHECK(x.dim() > 0, "narrow: cannot narrow a 0-dim tensor");
  int d = wrap_dim("narrow", dim, x.dim());
  int64_t n = x.size(d);
  if (start < 0) start += n;
  TIDE_CHECK(start >= 0 && start <= n, "narrow: start ", start, " is out of range for dim ", d + 1,
             " of size ", n);
  TIDE_CHECK(length >= 0, "narrow: length must be non-negative, got ", length);
  TIDE_CHECK(length <= n - start, "narrow: start ", start + 1, " and length ", length,
             " run past the end of dim ", d + 1, " of size ", n);
  return slice(x, d, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  TIDE_CHECK(x.dim() > 0, "select: cannot select from a 0-dim tensor");
  int d = wrap_dim("select", dim, x.dim());
  int64_t n = x.size(d);
  TIDE_CHECK(index >= -n && index < n, "select: index ", index, " (0-based) is out of range for dim ", d + 1,
             " of size ", n);
  if (index < 0) index += n;
  Dims sz = x.sizes(), st = x.strides();
  int64_t off = x.offset() + index * x.stride(d);
  sz.erase(d);
  st.erase(d);
  return x.as_strided(sz, st, off);
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  TIDE_CHECK(x.dim() > 0, "slice: cannot slice a 0-dim tensor");
  int d = wrap_dim("slice", dim, x.dim());
  TIDE_CHECK(step >= 1, "slice: step must be positive, got ", step);
  TIDE_CHECK(0 <= start && start <= end && end <= x.size(d), "slice: range [", start, ", ", end,
             ") is out of bounds for dim ", d + 1, " of size ", x.size(d));
  Dims sz = x.sizes(), st = x.strides();
  sz[d] = (end - start) / step + ((end - start) % step != 0);
  if (sz[d] > 1) st[d] = x.stride(d) * step;  // within the dim's span: cannot overflow
  // An empty slice keeps the base offset, so that no view points past its storage.
  int64_t off = sz[d] > 0 ? x.offset() + start * x.stride(d) : x.offset();
  return x.as_strided(sz, st, off);
}

Tensor flip_view(const Tensor& x, const std::vector<int64_t>& dims) {
  check_defined(x, "flip");
  std::vector<int> w = unique_dims("flip", dims, x.dim());
  Dims st = x.strides();
  int64_t off = x.offset();
  for (int d : w) {
    if (x.size(d) <= 1) continue;  // nothing to reverse (and an empty dim keeps the offset)
    off += (x.size(d) - 1) * x.stride(d);  // the last element, inside the storage
    st[d] = -st[d];
  }
  return x.as_strided(x.sizes(), st, off);
}

// An empty list for `count` views. The count comes from the script (unbind of an expanded
// dim of 2^40, split(1) of it), so the views' memory is checked against the interpreter's
// budget first, and the caller's loop checks the interrupt through add_view.
static std::vector<Tensor> view_list(const char* op, int64_t count) {
  check_host_memory(op, size_t(count) * (sizeof(Tensor) + sizeof(TensorImpl)));
  // Past 2^32 views (64 GiB of list alone) the request is refused without trying: sanitizer
  // builds abort on such an allocation instead of throwing bad_alloc.
  constexpr int64_t kMaxViews = int64_t(1) << 32;
  std::vector<Tensor> out;
  try {
    if (count > kMaxViews) throw std::bad_alloc();
    out.reserve(size_t(count));
  } catch (const std::exception&) {  // bad_alloc or length_error
    throw OutOfMemory(std::string(op) + ": out of memory for a list of " + std::to_string(count) + " views");
  }
  return out;
}

static void add_view(std::vector<Tensor>& out, Tensor view) {
  if ((out.size() & 0xffff) == 0xffff) check_interrupt();
  out.push_back(std::move(view));
}

// Pieces of split_size along dim d (already wrapped); op names split or chunk in errors.
static std::vector<Tensor> split_pieces(const char* op, const Tensor& x, int64_t split_size, int d) {
  const int64_t n = x.size(d);
  if (n == 0) return {alias(x)};
  std::vector<Tensor> out = view_list(op, n / split_size + (n % split_size != 0));
  for (int64_t s = 0; s < n;) {
    const int64_t len = std::min(split_size, n - s);
    add_view(out, slice(x, d, s, s + len));
    s += len;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  TIDE_CHECK(x.dim() > 0, "split: cannot split a 0-dim tensor");
  int d = wrap_dim("split", dim, x.dim());
  TIDE_CHECK(split_size > 0 || (split_size == 0 && x.size(d) == 0), "split: split size must be positive, got ",
             split_size);
  return split_pieces("split", x, split_size, d);
}

std::vector<Tensor> split_with_sizes(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  TIDE_CHECK(x.dim() > 0, "split: cannot split a 0-dim tensor");
  int d = wrap_dim("split", dim, x.dim());
  int64_t sum = 0;
  std::string list = "{";
  for (size_t i = 0; i < sizes.size() && list.size() < kQuoteChars; ++i) {
    if (i) list += ',';
    list += std::to_string(sizes[i]);
  }
  list += list.size() < kQuoteChars ? "}" : ",...}";
  for (int64_t s : sizes) {
    TIDE_CHECK(s >= 0, "split: split sizes must be non-negative, got ", s);
    TIDE_CHECK(!__builtin_add_overflow(sum, s, &sum), "split: split sizes ", list, " sum past 2^63-1 but dim ",
               d + 1, " has size ", x.size(d));
  }
  TIDE_CHECK(sum == x.size(d), "split: split sizes ", list, " sum to ", sum, " but dim ", d + 1, " has size ",
             x.size(d));
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, d, start, start + s));
    start += s;
  }
  return out;
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  TIDE_CHECK(x.dim() > 0, "chunk: cannot chunk a 0-dim tensor");
  TIDE_CHECK(chunks > 0, "chunk: the number of chunks must be positive, got ", chunks);
  int d = wrap_dim("chunk", dim, x.dim());
  int64_t n = x.size(d);
  // An empty dim gives one empty chunk, as split does (PyTorch gives `chunks` of them, which
  // would make the work and memory grow with a count that holds no data).
  return split_pieces("chunk", x, n / chunks + (n % chunks != 0), d);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  TIDE_CHECK(x.dim() > 0, "unbind: cannot unbind a 0-dim tensor");
  int d = wrap_dim("unbind", dim, x.dim());
  std::vector<Tensor> out = view_list("unbind", x.size(d));
  for (int64_t i = 0; i < x.size(d); ++i) add_view(out, select(x, d, i));
  return out;
}

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  TIDE_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  DType dt = tensors[0].dtype();
  Device dev = tensors[0].device();
  int ref = -1;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    TIDE_CHECK(t.defined(), "cat: tensor ", i + 1, " is undefined");
    TIDE_CHECK(t.device() == dev, "cat: expected all tensors on the same device, got ", dev.str(),
               " (tensor 1) and ", t.device().str(), " (tensor ", i + 1, ")");
    dt = promote_types(dt, t.dtype());
    bool skipped = t.dim() == 1 && t.numel() == 0;  // legacy torch.cat behaviour
    if (!skipped && ref < 0) ref = int(i);
  }
  if (ref < 0) return Tensor::empty({0}, dt, dev);
  const Tensor& r = tensors[ref];
  TIDE_CHECK(r.dim() > 0, "cat: zero-dim tensor (tensor ", ref + 1, ") cannot be concatenated");
  int d = wrap_dim("cat", dim, r.dim());
  Dims shape = r.sizes();
  shape[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (t.dim() == 1 && t.numel() == 0) continue;
    TIDE_CHECK(t.dim() == r.dim(), "cat: tensors must have the same number of dims: tensor ", ref + 1,
               " has ", r.dim(), " dims but tensor ", i + 1, " has ", t.dim());
    for (int k = 0; k < r.dim(); ++k)
      TIDE_CHECK(k == d || t.size(k) == r.size(k), "cat: sizes of tensors must match except in dim ", d + 1,
                 ": tensor ", ref + 1, " has size ", r.size(k), " at dim ", k + 1, " but tensor ", i + 1,
                 " has size ", t.size(k), " (shapes ", r.sizes().str(), " and ", t.sizes().str(), ")");
    shape[d] = checked_add("cat", shape[d], t.size(d), "the sum of the sizes at dim ", d + 1);
  }
  Tensor out = Tensor::empty(shape, dt, dev, "cat");
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    if (t.dim() == 1 && t.numel() == 0) continue;
    Tensor part = slice(out, d, at, at + t.size(d));
    if (part.numel() > 0) copy_(part, t);
    at += t.size(d);
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  TIDE_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  const Tensor& first = tensors[0];
  TIDE_CHECK(first.defined(), "stack: tensor 1 is undefined");
  int d = wrap_dim("stack", dim, first.dim() + 1);
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    TIDE_CHECK(tensors[i].defined(), "stack: tensor ", i + 1, " is undefined");
    TIDE_CHECK(tensors[i].sizes() == first.sizes(), "stack: expects each tensor to be equal size, but got ",
               first.sizes().str(), " at entry 1 and ", tensors[i].sizes().str(), " at entry ", i + 1);
    parts.push_back(unsqueeze(tensors[i], d));
  }
  return cat(parts, d);
}

Tensor repeat(const Tensor& x, const Dims& repeats) {
  const int n = repeats.size(), nd = x.dim();
  TIDE_CHECK(n >= nd, "repeat: the number of repeats (", n, ") can't be smaller than the number of dims (",
             nd, ") of the tensor");
  Dims out_shape(n, 0);
  for (int i = 0; i < n; ++i) {
    TIDE_CHECK(repeats[i] >= 0, "repeat: repeats must be non-negative, got ", repeats.str());
    int xd = i - (n - nd);
    int64_t s = xd >= 0 ? x.size(xd) : 1;
    out_shape[i] = checked_mul("repeat", s, repeats[i], "size ", s, " repeated ", repeats[i], " times");
  }
  Tensor out = Tensor::empty(out_shape, x.dtype(), x.device(), "repeat");
  if (out.numel() == 0) return out;
  // out seen as (r0, s0, r1, s1, ...) blocks; the source broadcasts (stride 0) over each r.
  Dims ost = out.strides();
  Dims src_sz, src_st, dst_st;
  for (int i = 0; i < n; ++i) {
    int xd = i - (n - nd);
    int64_t s = xd >= 0 ? x.size(xd) : 1, sst = xd >= 0 ? x.stride(xd) : 0;
    if (repeats[i] != 1) {
      TIDE_CHECK(src_sz.size() < kMaxDims, "repeat: too many dims to repeat at once (at most ", kMaxDims / 2, ")");
      src_sz.push_back(repeats[i]);
      src_st.push_back(0);
      dst_st.push_back(ost[i] * s);
    }
    if (s != 1 || repeats[i] == 1) {
      TIDE_CHECK(src_sz.size() < kMaxDims, "repeat: too many dims to repeat at once (at most ", kMaxDims / 2, ")");
      src_sz.push_back(s);
      src_st.push_back(sst);
      dst_st.push_back(ost[i]);
    }
  }
  Tensor dst = out.as_strided(src_sz, dst_st, out.offset());
  Tensor src = x.as_strided(src_sz, src_st, x.offset());
  copy_(dst, src);
  return out;
}

Dims tile_repeats(const Tensor& x, const Dims& repeats) {
  Dims r = repeats;
  while (r.size() < x.dim()) r.insert(0, 1);
  return r;
}

Tensor tile(const Tensor& x, const Dims& repeats) { return repeat(x, tile_repeats(x, repeats)); }

Tensor flip(const Tensor& x, const std::vector<int64_t>& dims) {
  check_defined(x, "flip");
  Tensor reversed = flip_view(x, dims);
  Tensor out = Tensor::empty(x.sizes(), x.dtype(), x.device());
  return copy_(out, reversed);
}

void as_strided_write(Tensor& dst, const Tensor& src_, const Dims& strides, int64_t offset, bool accumulate) {
  TIDE_ASSERT(dst.is_contiguous() && src_.dim() == strides.size() && dst.dtype() == src_.dtype());
  if (!dst.device().is_cpu()) {
    Tensor pos = positions_of(dst).as_strided(src_.sizes(), strides, dst.offset() + offset);
    put_on_device("as_strided_write", dst, pos, src_, accumulate);
    return;
  }
  Tensor src = src_.contiguous();
  int n = src.dim();
  Dims idx(n, 0);
  int64_t total = src.numel(), limit = dst.numel();
  TIDE_DISPATCH_ALL(dst.dtype(), "as_strided_write", [&] {
    scalar_t* d = dst.data<scalar_t>();
    const scalar_t* s = src.data<scalar_t>();
    int64_t pos = offset;
    for (int64_t i = 0; i < total; ++i) {
      TIDE_ASSERT(pos >= 0 && pos < limit);
      d[pos] = accumulate ? scalar_t(d[pos] + s[i]) : s[i];
      for (int k = n - 1; k >= 0; --k) {  // next multi-index, row-major
        pos += strides[k];
        if (++idx[k] < src.size(k)) break;
        pos -= strides[k] * src.size(k);
        idx[k] = 0;
      }
    }
  });
  dst.storage()->bump_version();
}

}  // namespace tide::ops
