// Bindings of the shape ops (tensor/ops/shape.hpp): views, joins, splits and flips, with
// NumPy's spellings where NumPy has the op (np.concatenate, np.expand_dims, np.transpose
// with its own meaning). Dims and positions from scripts are 1-based.
#include <algorithm>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/index.hpp"
#include "../tensor/ops/shape.hpp"
#include "../tensor/memory_budget.hpp"
#include "lua_api.hpp"

namespace tide::lua {

// A Lua array of tensors (split, chunk, unbind, nonzero{as_tuple=true}); also used by
// bind_index.cpp.
// The list's Lua memory is checked against the interpreter's budget first, so that a Lua
// memory error cannot longjmp over `ts` (the views would leak).
void push_tensor_list(lua_State* L, const char* op, const std::vector<Tensor>& ts) {
  check_host_memory(op, ts.size() * (16 + 64 + sizeof(Tensor)) + 64);
  lua_createtable(L, int(ts.size()), 0);
  for (size_t i = 0; i < ts.size(); ++i) {
    push_tensor(L, ts[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
}

namespace {

// The tensors of a Lua array at argument i (cat, stack); numbers and nested tables are
// converted like torch.tensor.
std::vector<Tensor> tensor_list(Args& a, int i) {
  TIDE_CHECK(a.is_table(i), a.op, ": expected a table of tensors as argument ", i);
  lua_State* L = a.L;
  int n = int(lua_rawlen(L, i));
  std::vector<Tensor> out;
  out.reserve(size_t(n));
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, i, k);
    int top = lua_gettop(L);
    try {
      if (Tensor* t = to_tensor(L, top)) out.push_back(*t);
      else out.push_back(tensor_from_lua(L, top, std::nullopt, a.default_float(), a.op));
    } catch (...) {
      lua_settop(L, top - 1);
      throw;
    }
    lua_settop(L, top - 1);
  }
  TIDE_CHECK(!out.empty(), a.op, ": expected a non-empty table of tensors");
  return out;
}

// An optional dim from positional i or the `dim` / `axis` keyword (1-based in, 0-based out).
int opt_dim(Args& a, int i, int ndim, int def) {
  if (a.has(i)) return a.dim(i, ndim);
  if (auto d = a.kw_integer("dim")) return a.dim_value(*d, ndim);
  if (auto d = a.kw_integer("axis")) return a.dim_value(*d, ndim);
  return def;
}

// Dims named by a number or a table at i (1-based in, 0-based out, order kept).
std::vector<int64_t> dim_list(Args& a, int i, int ndim) {
  std::vector<int64_t> raw = a.is_table(i) ? a.int_list_from(i) : std::vector<int64_t>{a.integer(i)};
  std::vector<int64_t> out;
  for (int64_t d : raw) out.push_back(a.dim_value(d, ndim));
  return out;
}

int ret(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

// view(x, sizes...) or view(x, dtype): a dtype view shares no autograd history, so a tensor
// that takes part in autograd is refused rather than given a gradient-less alias.
int view_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (a.count() == 2 && a.is_string(2)) {
    DType dt = a.dtype(2);
    TIDE_CHECK(dt == x.dtype() || !autograd::is_differentiable(x), "view: a dtype view (", dtype_name(x.dtype()),
               " as ", dtype_name(dt), ") of a tensor that requires grad is not supported; detach it first");
    return ret(L, ops::view_dtype(x, dt));
  }
  return ret(L, ag::view(x, a.shape_from(2, true)));
}
int view_as_fn(lua_State* L, Args& a) { return ret(L, ag::view(a.tensor(1), a.tensor(2).sizes())); }
int reshape_fn(lua_State* L, Args& a) { return ret(L, ag::reshape(a.tensor(1), a.shape_from(2, true))); }
int reshape_as_fn(lua_State* L, Args& a) { return ret(L, ag::reshape(a.tensor(1), a.tensor(2).sizes())); }
int t_fn(lua_State* L, Args& a) { return ret(L, ag::t(a.tensor(1))); }
int contiguous_fn(lua_State* L, Args& a) { return ret(L, a.tensor(1).contiguous()); }

// torch: transpose(x, d1, d2) swaps two dims. NumPy: transpose(x) reverses the dims and
// transpose(x, axes) permutes them; x:transpose() and x:transpose{axes} work that way too.
int transpose_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (a.style == Style::Torch && a.count() == 3 && a.is_number(2))
    return ret(L, ag::transpose(x, a.dim(2, x.dim()), a.dim(3, x.dim())));
  if (!a.has(2)) return ret(L, ag::reverse_dims(x));
  std::vector<int64_t> axes;
  for (int64_t d : a.int_list_from(2)) axes.push_back(a.dim_value(d, x.dim()));
  return ret(L, ag::permute(x, axes));
}

int swapaxes_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::transpose(x, a.dim(2, x.dim()), a.dim(3, x.dim())));
}

int permute_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  std::vector<int64_t> dims;
  for (int64_t d : a.int_list_from(2)) dims.push_back(a.dim_value(d, x.dim()));
  return ret(L, ag::permute(x, dims));
}

int movedim_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::movedim(x, dim_list(a, 2, x.dim()), dim_list(a, 3, x.dim())));
}

// squeeze(x) drops every size-1 dim; squeeze(x, dim or dims) those named that have size 1
// (NumPy: naming a dim whose size is not 1 is an error).
int squeeze_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  bool named = a.has(2) || a.has_kw("dim") || a.has_kw("axis");
  if (!named) return ret(L, ag::squeeze(x));
  std::vector<int> dims = a.dims_arg(2, x.dim());
  std::vector<int64_t> d64(dims.begin(), dims.end());
  if (a.style == Style::Numpy)
    for (int d : dims)
      if (x.dim() > 0 && x.size(d) != 1)
        a.error("cannot squeeze dim " + std::to_string(d + 1) + " of size " + std::to_string(x.size(d)) +
                " (only size-1 dims can be squeezed)");
  return ret(L, ag::squeeze(x, d64));
}

// unsqueeze(x, dim): dim in 1..ndim+1 (negative from the end); np.expand_dims also takes
// a table of axes, numbered in the result.
int unsqueeze_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  int pos = a.has(2) ? 2 : 0;
  if (!pos) {
    std::optional<int64_t> d = a.kw_integer("dim");
    if (!d) d = a.kw_integer("axis");
    if (!d) a.error("expected a dim");
    return ret(L, ag::unsqueeze(x, a.dim_value(*d, x.dim() + 1)));
  }
  if (a.is_table(pos)) {
    std::vector<int64_t> raw = a.int_list_from(pos);
    int out_nd = x.dim() + int(raw.size());
    std::vector<int> dims;
    for (int64_t d : raw) {
      int w = a.dim_value(d, out_nd);
      if (std::find(dims.begin(), dims.end(), w) != dims.end()) a.error("dim " + std::to_string(d) + " appears more than once");
      dims.push_back(w);
    }
    std::sort(dims.begin(), dims.end());
    Tensor r = x;
    for (int d : dims) r = ag::unsqueeze(r, d);
    return ret(L, r);
  }
  return ret(L, ag::unsqueeze(x, a.dim(pos, x.dim() + 1)));
}

int expand_fn(lua_State* L, Args& a) { return ret(L, ag::expand(a.tensor(1), a.shape_from(2, true))); }
int expand_as_fn(lua_State* L, Args& a) { return ret(L, ag::expand_as(a.tensor(1), a.tensor(2))); }
int broadcast_to_fn(lua_State* L, Args& a) { return ret(L, ag::expand(a.tensor_like(1), a.shape_from(2, true))); }

int flatten_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  int s = a.has(2) ? a.dim(2, x.dim()) : a.kw_integer("start_dim") ? a.dim_value(*a.kw_integer("start_dim"), x.dim()) : 0;
  int e = a.has(3) ? a.dim(3, x.dim())
                   : a.kw_integer("end_dim") ? a.dim_value(*a.kw_integer("end_dim"), x.dim()) : std::max(x.dim() - 1, 0);
  return ret(L, ag::flatten(x, s, e));
}

int ravel_fn(lua_State* L, Args& a) { return ret(L, ag::reshape(a.tensor_like(1), {-1})); }

int unflatten_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::unflatten(x, a.dim(2, x.dim()), a.shape_from(3, true)));
}

int repeat_fn(lua_State* L, Args& a) { return ret(L, ag::repeat(a.tensor(1), a.shape_from(2))); }
int tile_fn(lua_State* L, Args& a) { return ret(L, ag::tile(a.tensor_like(1), a.shape_from(2))); }

// The dims count that cat's dim is checked against: the first tensor that takes part.
int cat_ndim(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts)
    if (!(t.dim() == 1 && t.numel() == 0)) return t.dim();
  return 1;
}

int cat_fn(lua_State* L, Args& a) {
  std::vector<Tensor> ts = tensor_list(a, 1);
  return ret(L, ag::cat(ts, opt_dim(a, 2, cat_ndim(ts), 0)));
}

int stack_fn(lua_State* L, Args& a) {
  std::vector<Tensor> ts = tensor_list(a, 1);
  return ret(L, ag::stack(ts, opt_dim(a, 2, ts[0].dim() + 1, 0)));
}

// hstack: along dim 2 (dim 1 for 1-D tensors); vstack: along dim 1 after making 1-D
// tensors rows.
int hstack_fn(lua_State* L, Args& a) {
  std::vector<Tensor> ts = tensor_list(a, 1);
  for (Tensor& t : ts)
    if (t.dim() == 0) t = ag::reshape(t, {1});
  return ret(L, ag::cat(ts, ts[0].dim() == 1 ? 0 : 1));
}

int vstack_fn(lua_State* L, Args& a) {
  std::vector<Tensor> ts = tensor_list(a, 1);
  for (Tensor& t : ts)
    if (t.dim() < 2) t = ag::reshape(t, {1, -1});
  return ret(L, ag::cat(ts, 0));
}

int split_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  int d = opt_dim(a, 3, x.dim(), 0);
  if (a.is_table(2)) {
    push_tensor_list(L, a.op, ag::split_with_sizes(x, a.int_list_from(2), d));
  } else {
    push_tensor_list(L, a.op, ag::split(x, a.integer(2), d));
  }
  return 1;
}

int chunk_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  push_tensor_list(L, a.op, ag::chunk(x, a.integer(2), opt_dim(a, 3, x.dim(), 0)));
  return 1;
}

int unbind_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  push_tensor_list(L, a.op, ag::unbind(x, opt_dim(a, 2, x.dim(), 0)));
  return 1;
}

// x reversed along dims: a view with NumPy semantics (np.flip's, like a[::-1]), a copy with
// PyTorch's (torch.flip copies).
Tensor flipped(const Tensor& x, const std::vector<int64_t>& dims) {
  return numpy_semantics() ? ag::flip_view(x, dims) : ag::flip(x, dims);
}

// flip(x, dims) with dims as a table or numbers (also as dims=, dim= or axis=); no dims flips
// them all (NumPy's default).
int flip_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  std::vector<int64_t> dims;
  if (a.count() > 2) {
    for (int64_t d : a.int_list_from(2)) dims.push_back(a.dim_value(d, x.dim()));
  } else if (a.has(2) || a.has_kw("dims") || a.has_kw("dim") || a.has_kw("axis")) {
    if (a.has(2)) {
      dims = dim_list(a, 2, x.dim());
    } else {
      // A number or a table, as positional 2 (PyTorch's dims= is a tuple).
      a.push_kw(a.has_kw("dims") ? "dims" : a.has_kw("dim") ? "dim" : "axis");
      for (int d : a.dims_at(lua_gettop(L), x.dim())) dims.push_back(d);
      lua_pop(L, 1);
    }
  } else {
    for (int d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  return ret(L, flipped(x, dims));
}

int fliplr_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (x.dim() < 2) a.error("expected a tensor with at least 2 dims, got " + std::to_string(x.dim()));
  return ret(L, flipped(x, {1}));
}

int flipud_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (x.dim() < 1) a.error("expected a tensor with at least 1 dim, got 0");
  return ret(L, flipped(x, {0}));
}

// narrow(x, dim, start, length): start is 1-based (negative from the end).
// torch.as_strided(x, size, stride[, storage_offset]): a view of x's storage with the given
// sizes and element strides, starting at element storage_offset of the storage (x's own
// offset when omitted). The view must lie inside the storage (a negative stride walks
// backwards from the offset, as NumPy's as_strided allows; PyTorch refuses it); a view that
// carries gradients must lie inside a contiguous x's own elements (the gradient is
// scattered back into x's shape).
// The integers of a plain Lua table at positional i (as_strided's size and stride).
std::vector<int64_t> integer_table(lua_State* L, Args& a, int i, const char* what) {
  if (!a.is_table(i)) a.error(std::string(what) + " must be a table of integers");
  a.consumed(i);
  std::vector<int64_t> out;
  lua_Integer n = luaL_len(L, i);
  if (n > kMaxDims) a.error(std::string(what) + " has " + std::to_string(n) + " entries (at most " + std::to_string(kMaxDims) + ")");
  for (lua_Integer k = 1; k <= n; ++k) {
    lua_rawgeti(L, i, k);
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    lua_pop(L, 1);
    if (!ok) a.error(std::string(what) + " must hold integers (entry " + std::to_string(k) + " is not)");
    out.push_back(v);
  }
  return out;
}

int as_strided_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  Dims sizes;
  for (int64_t s : integer_table(L, a, 2, "size")) {
    if (s < 0) a.error("sizes must be >= 0, got " + std::to_string(s));
    sizes.push_back(s);
  }
  std::vector<int64_t> strides = integer_table(L, a, 3, "stride");
  int64_t offset = a.has(4) ? a.integer(4) : x.offset();
  if (int64_t(strides.size()) != sizes.size())
    a.error("size " + sizes.str() + " and stride have different lengths (" + std::to_string(sizes.size()) + " and " +
            std::to_string(strides.size()) + ")");
  Dims st;
  for (int64_t s : strides) st.push_back(s);
  if (offset < 0) a.error("storage_offset must be >= 0, got " + std::to_string(offset));
  int64_t storage_elems = int64_t(x.storage()->nbytes() / x.itemsize());
  int64_t first = offset, last = offset;  // the lowest and highest elements the view reaches (when it has any)
  bool empty = false;
  for (int i = 0; i < sizes.size(); ++i) empty = empty || sizes[i] == 0;
  if (!empty)
    for (int i = 0; i < sizes.size(); ++i) {
      int64_t reach = checked_mul("as_strided", sizes[i] - 1, st[i], "the view's extent");
      int64_t& end = reach < 0 ? first : last;
      end = checked_add("as_strided", end, reach, "the view's extent");
    }
  if (!empty && first < 0)
    a.error("the view of size " + sizes.str() + " with strides " + st.str() + " at offset " + std::to_string(offset) +
            " reaches " + std::to_string(-first) + " element" + (first == -1 ? "" : "s") + " before the start of its storage");
  if (!empty && last >= storage_elems)
    a.error("the view of size " + sizes.str() + " with strides " + st.str() + " at offset " + std::to_string(offset) +
            " reaches element " + std::to_string(last + 1) + " of a storage of " + std::to_string(storage_elems) +
            " elements");
  if (empty && offset > storage_elems)
    a.error("storage_offset " + std::to_string(offset) + " is past the end of a storage of " +
            std::to_string(storage_elems) + " elements");
  bool inside = x.is_contiguous() && (empty ? offset >= x.offset() && offset <= x.offset() + x.numel()
                                            : first >= x.offset() && last < x.offset() + x.numel());
  if (inside) return ret(L, ag::as_strided(x, sizes, st, offset - x.offset()));
  if (autograd::needs_recording({&x}))
    a.error("a view outside a contiguous input's own elements cannot carry gradients (input of size " +
            x.sizes().str() + ", view of size " + sizes.str() + " at offset " + std::to_string(offset) + ")");
  return ret(L, x.as_strided(sizes, st, offset));
}

int narrow_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (x.dim() == 0) a.error("cannot narrow a 0-dim tensor");
  int d = a.dim(2, x.dim());
  int64_t n = x.size(d), start = a.integer(3), length = a.integer(4);
  int64_t s = start < 0 ? start + n + 1 : start;
  if (s < 1 || s > n + 1)
    a.error("start " + std::to_string(start) + " is out of range for dim " + std::to_string(d + 1) + " of size " +
            std::to_string(n) + " (valid 1.." + std::to_string(n) + " or -" + std::to_string(n) + "..-1)");
  // The engine checks the length (overflow-free: length <= n - start).
  return ret(L, ag::narrow(x, d, s - 1, length));
}

// select(x, dim, index): index is 1-based (negative from the end); removes the dim.
int select_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  if (x.dim() == 0) a.error("cannot select from a 0-dim tensor");
  int d = a.dim(2, x.dim());
  return ret(L, ag::select(x, d, ops::wrap_index("select", a.integer(3), d, x.size(d))));
}

const Binding kShapeBindings[] = {
    {"view", view_fn, METHOD, "view(x, sizes...) -> Tensor: the same elements seen with another shape (no copy; -1 infers one size). "
     "view(x, dtype): the same bytes as another dtype (the last dim scales by the item size ratio)."},
    {"view_as", view_as_fn, METHOD, "view_as(x, other) -> Tensor: x:view(other.shape)."},
    {"reshape", reshape_fn, METHOD | TORCH | NUMPY, "reshape(x, sizes...) -> Tensor: a view when possible, else a copy; -1 infers one size."},
    {"reshape_as", reshape_as_fn, METHOD, "reshape_as(x, other) -> Tensor: x:reshape(other.shape)."},
    {"t", t_fn, METHOD | TORCH, "t(x) -> Tensor: transpose of a 2-D tensor (0- and 1-D unchanged), a view."},
    {"transpose", transpose_fn, METHOD | TORCH | NUMPY,
     "transpose(x, d1, d2) -> Tensor: dims d1 and d2 swapped (view). np.transpose(x[, axes]): dims reversed or permuted."},
    {"swapaxes", swapaxes_fn, METHOD | TORCH | NUMPY, "swapaxes(x, a, b) -> Tensor: dims a and b swapped (view)."},
    {"swapdims", swapaxes_fn, METHOD | TORCH, "swapdims(x, a, b) -> Tensor: dims a and b swapped (view)."},
    {"permute", permute_fn, METHOD | TORCH, "permute(x, dims...) -> Tensor: the dims reordered (view)."},
    {"movedim", movedim_fn, METHOD | TORCH | NUMPY, "movedim(x, src, dst) -> Tensor: dims src moved to positions dst (view).", "moveaxis"},
    {"moveaxis", movedim_fn, METHOD | TORCH, "moveaxis(x, src, dst) -> Tensor: alias of movedim."},
    {"ascontiguousarray", contiguous_fn, NUMPY, "ascontiguousarray(x) -> Tensor: x if contiguous, else a contiguous copy."},
    {"squeeze", squeeze_fn, METHOD | TORCH | NUMPY, "squeeze(x[, dim][, {dim=, axis=}]) -> Tensor: size-1 dims removed (all, or those named) (view)."},
    {"unsqueeze", unsqueeze_fn, METHOD | TORCH | NUMPY, "unsqueeze(x, dim[, {dim=, axis=}]) -> Tensor: a size-1 dim inserted at dim (1..ndim+1) (view).",
     "expand_dims"},
    {"expand", expand_fn, METHOD, "expand(x, sizes...) -> Tensor: size-1 dims repeated without copying (-1 keeps a size)."},
    {"expand_as", expand_as_fn, METHOD, "expand_as(x, other) -> Tensor: x:expand(other.shape)."},
    {"broadcast_to", broadcast_to_fn, METHOD | TORCH | NUMPY, "broadcast_to(x, shape) -> Tensor: x expanded to shape (view)."},
    {"flatten", flatten_fn, METHOD | TORCH, "flatten(x[, start_dim[, end_dim]][, {start_dim=, end_dim=}]) -> Tensor: dims start..end merged into one."},
    {"ravel", ravel_fn, METHOD | TORCH | NUMPY, "ravel(x) -> Tensor: x as 1-D (a view when possible)."},
    {"unflatten", unflatten_fn, METHOD | TORCH, "unflatten(x, dim, sizes) -> Tensor: dim split into sizes (view)."},
    {"repeat", repeat_fn, METHOD, "x[\"repeat\"](x, repeats...) -> Tensor: x tiled repeats times along each dim (a copy)."},
    {"repeat_tensor", repeat_fn, METHOD, "repeat_tensor(x, repeats...) -> Tensor: torch's repeat under a name Lua can call as x:repeat_tensor(...)."},
    {"tile", tile_fn, METHOD | TORCH | NUMPY, "tile(x, reps) -> Tensor: like repeat; fewer reps than dims count from the last dim."},
    {"cat", cat_fn, TORCH | NUMPY, "cat(tensors[, dim][, {dim=, axis=}]) -> Tensor: tensors joined along an existing dim (default 1).",
     "concatenate"},
    {"concat", cat_fn, TORCH, "concat(tensors[, dim][, {dim=, axis=}]) -> Tensor: alias of cat."},
    {"concatenate", cat_fn, TORCH, "concatenate(tensors[, dim][, {dim=, axis=}]) -> Tensor: alias of cat."},
    {"stack", stack_fn, TORCH | NUMPY, "stack(tensors[, dim][, {dim=, axis=}]) -> Tensor: equal-shaped tensors joined along a new dim (default 1)."},
    {"hstack", hstack_fn, TORCH | NUMPY, "hstack(tensors) -> Tensor: joined along dim 2 (dim 1 for 1-D tensors)."},
    {"vstack", vstack_fn, TORCH | NUMPY, "vstack(tensors) -> Tensor: joined along dim 1, 1-D tensors as rows."},
    {"split", split_fn, METHOD | TORCH,
     "split(x, size or sizes[, dim][, {dim=, axis=}]) -> table: views of pieces of `size` (the last may be smaller) or of the given sizes."},
    {"chunk", chunk_fn, METHOD | TORCH, "chunk(x, n[, dim][, {dim=, axis=}]) -> table: at most n views of (nearly) equal size."},
    {"unbind", unbind_fn, METHOD | TORCH, "unbind(x[, dim][, {dim=, axis=}]) -> table: the slices along dim (views)."},
    {"flip", flip_fn, METHOD | TORCH | NUMPY, "flip(x[, dims][, {dims=, dim=, axis=}]) -> Tensor: elements reversed along dims (all when omitted); a copy (np.flip and NumPy arrays: a view)."},
    {"fliplr", fliplr_fn, METHOD | TORCH | NUMPY, "fliplr(x) -> Tensor: flipped along dim 2."},
    {"flipud", flipud_fn, METHOD | TORCH | NUMPY, "flipud(x) -> Tensor: flipped along dim 1."},
    {"as_strided", as_strided_fn, METHOD | TORCH,
     "as_strided(x, size, stride[, storage_offset]) -> Tensor: a view of x's storage with these sizes and element strides "
     "(a negative one walks backwards), from element storage_offset of the storage (x's offset by default); it must lie inside the storage."},
    {"narrow", narrow_fn, METHOD | TORCH, "narrow(x, dim, start, length) -> Tensor: elements start..start+length-1 of dim (view)."},
    {"select", select_fn, METHOD | TORCH, "select(x, dim, index) -> Tensor: the slice at index of dim, which is removed (view)."},
};

}  // namespace

void register_shape_bindings() { register_bindings(kShapeBindings, std::size(kShapeBindings)); }

}  // namespace tide::lua
