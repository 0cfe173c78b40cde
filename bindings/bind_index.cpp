// Indexing from Lua (x[key] and x[key] = value, called by the Tensor metatable) and the
// bindings of the index ops (tensor/ops/index.hpp).
//
// A key is a number, ":" / "..." / np.newaxis (the string "newaxis"), a tensor (bool mask or integer indices) or a table of
// those per dim, where a table entry may also be a range {first, last[, step]} (inclusive,
// 1-based, negative from the end). Numbers and ranges give views (numbers remove their
// dim); tensors select copies, with PyTorch's advanced-indexing rules. Assignment writes
// through the same views, or through index_put_ / masked_fill_ when tensors are involved.
#include <cmath>
#include <string>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/elementwise.hpp"
#include "../tensor/ops/index.hpp"
#include "../tensor/ops/reduce.hpp"
#include "../tensor/ops/shape.hpp"
#include "../tensor/overlap.hpp"
#include "../tensor/scalar_fit.hpp"
#include "indexing.hpp"

namespace tide::lua {

void push_tensor_list(lua_State* L, const char* op, const std::vector<Tensor>& ts);  // bind_shape.cpp

namespace {

constexpr const char* kOp = "index";

// ---------------------------------------------------------------------------------------
// Parsing a key

struct Entry {
  enum Kind { Int, Range, All, Ellipsis, NewAxis, TensorIdx } kind = All;
  int64_t i = 0;                        // Int
  int64_t first = 0, last = 0, step = 1;  // Range (as written)
  Tensor t;                             // TensorIdx
  // Dims of x this entry consumes.
  int dims() const { return kind == Ellipsis || kind == NewAxis ? 0 : kind == TensorIdx && is_bool(t.dtype()) ? t.dim() : 1; }
};

std::string number_text(lua_State* L, int idx) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.14g", double(lua_tonumber(L, idx)));
  return buf;
}

// A Lua number that must be an integer (2.0 counts; 2.5 does not).
int64_t integer_at(lua_State* L, int idx, const char* what) {
  if (lua_isinteger(L, idx)) return lua_tointeger(L, idx);
  double d = lua_tonumber(L, idx);
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 9.2e18) return int64_t(d);
  TIDE_FAIL(kOp, ": ", what, " ", number_text(L, idx), " is not an integer");
}

const char* type_text(lua_State* L, int idx) {
  if (to_tensor(L, idx)) return "tensor";
  return lua_typename(L, lua_type(L, idx));
}

// A range table {first, last[, step]}; {} is the whole dim and {i} is {i, i}.
Entry parse_range(lua_State* L, int idx) {
  Entry e;
  int n = int(lua_rawlen(L, idx));
  if (n == 0) return e;  // All
  TIDE_CHECK(n <= 3, kOp, ": a range is {first, last} or {first, last, step}, got a table of ", n, " values");
  int64_t v[3] = {0, 0, 1};
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, idx, k);
    int top = lua_gettop(L);
    if (lua_type(L, top) != LUA_TNUMBER) {
      const char* tn = type_text(L, top);
      lua_pop(L, 1);
      TIDE_FAIL(kOp, ": a range is {first, last[, step]} of integers, got a ", tn, " at position ", k);
    }
    v[k - 1] = integer_at(L, top, k == 3 ? "range step" : "range bound");
    lua_pop(L, 1);
  }
  e.kind = Entry::Range;
  e.first = v[0];
  e.last = n == 1 ? v[0] : v[1];
  e.step = v[2];
  return e;
}

// One key element at stack index idx; `in_table` allows ranges.
Entry parse_entry(lua_State* L, int idx, bool in_table) {
  Entry e;
  switch (lua_type(L, idx)) {
    case LUA_TNUMBER:
      e.kind = Entry::Int;
      e.i = integer_at(L, idx, "index");
      return e;
    case LUA_TSTRING: {
      std::string s = lua_tostring(L, idx);
      if (s == ":") return e;
      if (s == "...") {
        e.kind = Entry::Ellipsis;
        return e;
      }
      if (s == "newaxis") {  // np.newaxis, NumPy's None in an index
        e.kind = Entry::NewAxis;
        return e;
      }
      TIDE_FAIL(kOp, ": unknown index '", quote_user(s),
                "' (use \":\" for a whole dim, \"...\" for the remaining dims or np.newaxis for a new dim of size 1)");
    }
    case LUA_TTABLE:
      if (in_table) return parse_range(L, idx);
      break;
    case LUA_TUSERDATA:
      if (Tensor* t = to_tensor(L, idx)) {
        TIDE_CHECK(is_bool(t->dtype()) || is_integral(t->dtype()), kOp,
                   ": tensors used as indices must be bool (a mask) or integer tensors, got ", dtype_name(t->dtype()));
        e.kind = Entry::TensorIdx;
        e.t = *t;
        return e;
      }
      break;
    case LUA_TBOOLEAN:
      TIDE_FAIL(kOp, ": cannot index with a boolean (use a bool tensor as a mask)");
    case LUA_TNIL:
    case LUA_TNONE:
      TIDE_FAIL(kOp, ": cannot index with nil");
    default:
      break;
  }
  TIDE_FAIL(kOp, ": cannot index a tensor with a ", type_text(L, idx));
}

std::vector<Entry> parse_key(lua_State* L, int key) {
  std::vector<Entry> out;
  if (lua_type(L, key) != LUA_TTABLE) {
    out.push_back(parse_entry(L, key, false));
    return out;
  }
  int n = int(lua_rawlen(L, key));
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, key, k);
    int top = lua_gettop(L);
    try {
      out.push_back(parse_entry(L, top, true));
    } catch (...) {
      lua_settop(L, top - 1);
      throw;
    }
    lua_settop(L, top - 1);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Applying a key

// x[key] as a view `r` of x plus the advanced (tensor) indices left to apply to r's dims.
struct Applied {
  Tensor r;
  std::vector<Tensor> adv;  // per dim of r; undefined = whole
  std::vector<int> labels;  // per dim of r: the dim of x it came from (for messages)
  int n_adv = 0;
};

// [start, end) of a range written {first, last, step} on dim `ud` (0-based) of size n, with
// a positive step. A negative step (NumPy's a[::-1]) runs from first down to last: the same
// elements ascending are returned, and `reversed` set (the caller views that dim reversed).
void resolve_range(const Entry& e, int ud, int64_t n, int64_t& start, int64_t& end, int64_t& step, bool& reversed) {
  auto bound_error = [&](const char* which, int64_t v) {
    TIDE_FAIL(kOp, ": range ", which, " ", v, " is out of range for dim ", ud + 1, " of size ", n, " (valid 1..", n,
              " or -", n, "..-1)");
  };
  int64_t f = e.first < 0 ? e.first + n + 1 : e.first;
  int64_t l = e.last < 0 ? e.last + n + 1 : e.last;
  TIDE_CHECK(e.step != 0, kOp, ": range step must be nonzero, got 0 (for dim ", ud + 1, ")");
  reversed = e.step < 0;
  if (!reversed) {
    if (f < 1 || f > n + 1) bound_error("start", e.first);
    if (l < 0 || l > n) bound_error("end", e.last);
    TIDE_CHECK(l >= f - 1, kOp, ": range {", e.first, ",", e.last, "} runs backwards on dim ", ud + 1, " of size ", n,
               " (first must be at most last + 1; a negative step runs backwards)");
    start = f - 1, end = l, step = e.step;
    return;
  }
  if (f < 0 || f > n) bound_error("start", e.first);
  if (l < 1 || l > n + 1) bound_error("end", e.last);
  TIDE_CHECK(l <= f + 1, kOp, ": range {", e.first, ",", e.last, ",", e.step, "} runs forwards on dim ", ud + 1,
             " of size ", n, " (with a negative step first must be at least last - 1)");
  step = e.step == INT64_MIN ? INT64_MAX : -e.step;  // |step| beyond the dim selects one element either way
  int64_t count = f >= l ? (f - l) / step + 1 : 0;
  start = count ? f - 1 - (count - 1) * step : 0;
  end = count ? f : 0;
}

Applied apply_key(const Tensor& x, const std::vector<Entry>& entries) {
  int consumed = 0, ellipses = 0;
  for (const Entry& e : entries) {
    consumed += e.dims();
    ellipses += e.kind == Entry::Ellipsis;
  }
  TIDE_CHECK(ellipses <= 1, kOp, ": an index can only have a single \"...\"");
  TIDE_CHECK(consumed <= x.dim(), kOp, ": too many indices for a tensor of ", x.dim(), " dims (got ", consumed, ")");
  Applied a;
  Tensor r = x;
  int rd = 0, ud = 0;  // current dim of r, and of x
  bool viewed = false;
  for (const Entry& e : entries) {
    switch (e.kind) {
      case Entry::Int:
        r = ag::select(r, rd, ops::wrap_index(kOp, e.i, ud, r.size(rd)));
        viewed = true;
        ++ud;
        break;
      case Entry::Range: {
        int64_t s, en, step;
        bool reversed;
        resolve_range(e, ud, r.size(rd), s, en, step, reversed);
        r = ag::slice(r, rd, s, en, step);
        if (reversed) r = ag::flip_view(r, {rd});
        viewed = true;
        a.labels.push_back(ud);
        ++rd, ++ud;
        break;
      }
      case Entry::All:
        a.labels.push_back(ud);
        ++rd, ++ud;
        break;
      case Entry::NewAxis:
        r = ag::unsqueeze(r, rd);
        viewed = true;
        a.labels.push_back(ud);
        ++rd;
        break;
      case Entry::Ellipsis:
        for (int k = 0; k < x.dim() - consumed; ++k) a.labels.push_back(ud + k);
        rd += x.dim() - consumed;
        ud += x.dim() - consumed;
        break;
      case Entry::TensorIdx: {
        a.adv.resize(size_t(rd) + 1);
        a.adv[rd] = e.t;
        ++a.n_adv;
        for (int j = 0; j < e.dims(); ++j) a.labels.push_back(ud + j);
        if (is_bool(e.t.dtype()) && e.t.dim() > 1)
          for (int j = 1; j < e.dims(); ++j) a.adv.emplace_back();  // the mask stands for these dims
        rd += e.dims();
        ud += e.dims();
        break;
      }
    }
  }
  while (int(a.labels.size()) < r.dim()) a.labels.push_back(ud++);
  a.r = viewed ? r : ag::alias(r);
  return a;
}

// The index list index()/index_put_() take: a mask of k dims occupies one entry and stands
// for k dims, so the placeholders after it are dropped.
std::vector<Tensor> index_list(const Applied& a) {
  std::vector<Tensor> out;
  for (size_t d = 0; d < a.adv.size(); ++d) {
    out.push_back(a.adv[d]);
    if (a.adv[d].defined() && is_bool(a.adv[d].dtype())) d += size_t(std::max(a.adv[d].dim(), 1) - 1);
  }
  return out;
}

// The single mask covering every dim of r, if that is the key (x[mask] with mask:shape() == x.shape).
const Tensor* whole_mask(const Applied& a) {
  if (a.n_adv != 1 || a.adv.empty()) return nullptr;
  const Tensor& m = a.adv[0];
  if (!m.defined() || !is_bool(m.dtype()) || m.dim() == 0 || m.sizes() != a.r.sizes()) return nullptr;
  return &m;
}

}  // namespace

namespace {

// x[entries], recorded by autograd through the differentiable views and selections.
Tensor index_get(const Tensor& x, const std::vector<Entry>& entries) {
  Applied a = apply_key(x, entries);
  if (a.n_adv == 0) return a.r;
  if (const Tensor* m = whole_mask(a)) return ag::masked_select(a.r, *m);
  std::vector<Tensor> idx = index_list(a);
  return ag::index(a.r, idx, &a.labels, kOp);
}

// x[entries] = value (a number s, or a tensor v), written into x's memory without autograd.
// One number into a plain view is a fill, which may go into an expanded view (as in
// PyTorch); anything else refuses a target with elements sharing one address.
void index_set(Tensor& x, const std::vector<Entry>& entries, const std::optional<Scalar>& s, Tensor v) {
  if (s) check_scalar_fits(kOp, *s, x.dtype());
  Applied a = apply_key(x, entries);
  if (a.n_adv == 0 && s) {
    ops::fill_(a.r, *s);
    return;
  }
  check_no_internal_overlap(kOp, a.r);
  if (a.n_adv == 0) {
    Tensor& r = a.r;
    Tensor src = v;
    while (src.dim() > r.dim() && src.size(0) == 1) src = ops::select(src, 0, 0);
    bool fits = src.dim() <= r.dim();
    for (int i = 1; fits && i <= src.dim(); ++i)
      fits = src.size(src.dim() - i) == r.size(r.dim() - i) || src.size(src.dim() - i) == 1;
    TIDE_CHECK(fits, kOp, ": cannot assign a tensor of shape ", v.sizes().str(), " to elements of shape ",
               r.sizes().str(), " (it must broadcast)");
    src = ops::expand(src, r.sizes());
    ops::copy_(r, src);  // reads a source overlapping r from a copy
    return;
  }
  if (const Tensor* m = whole_mask(a)) {
    if (s) {
      ops::masked_fill_(a.r, *m, TensorOrScalar(*s));
      return;
    }
    if (v.numel() == 1) {
      ops::masked_fill_(a.r, *m, TensorOrScalar(v));
      return;
    }
  }
  if (s) {
    v = Tensor::empty({}, x.dtype());
    ops::fill_(v, *s);
  }
  std::vector<Tensor> idx = index_list(a);
  ops::index_put_(a.r, idx, v, false, &a.labels, kOp);
}

// x[entries] = value while autograd records: the new x is a copy of the old with the
// assignment made; the old values' gradient is the incoming one with the assigned places
// zeroed, and the assigned value's gradient is the incoming one at those places.
void index_set_recorded(Tensor& x, const std::vector<Entry>& entries, const std::optional<Scalar>& s,
                        const Tensor& v) {
  autograd::InPlace write(x, kOp);
  const Tensor& old = write.input();
  Tensor y = old.clone();
  index_set(y, entries, s, v);
  autograd::record("index_put", y, {&old, &v}, [entries](const Tensor& g, const Node& n) -> std::vector<Tensor> {
    std::vector<Tensor> r(2);
    if (n.needs_grad(0)) {
      r[0] = g.clone();
      index_set(r[0], entries, Scalar(0.0), Tensor());
    }
    if (n.needs_grad(1)) r[1] = index_get(g, entries);
    return r;
  });
  write.commit(y);
}

}  // namespace

int tensor_index_get(lua_State* L, Args&, const Tensor& x, int key_idx) {
  key_idx = lua_absindex(L, key_idx);
  push_tensor(L, index_get(x, parse_key(L, key_idx)));
  return 1;
}

void tensor_index_set(lua_State* L, Args& args, Tensor& x, int key_idx, int value_idx) {
  key_idx = lua_absindex(L, key_idx);
  value_idx = lua_absindex(L, value_idx);
  std::vector<Entry> entries = parse_key(L, key_idx);
  // The value: a number or boolean (a fill), or a tensor / nested table (copied, broadcast).
  std::optional<Scalar> s;
  Tensor v;
  switch (lua_type(L, value_idx)) {
    case LUA_TNUMBER:
      s = lua_isinteger(L, value_idx) ? Scalar(int64_t(lua_tointeger(L, value_idx))) : Scalar(double(lua_tonumber(L, value_idx)));
      break;
    case LUA_TBOOLEAN: s = Scalar(bool(lua_toboolean(L, value_idx))); break;
    case LUA_TTABLE: v = tensor_from_lua(L, value_idx, x.dtype(), args.default_float(), kOp); break;
    case LUA_TNIL:
    case LUA_TNONE: TIDE_FAIL(kOp, ": cannot assign nil to tensor elements");
    default:
      if (Tensor* t = to_tensor(L, value_idx)) {
        v = *t;
        break;
      }
      TIDE_FAIL(kOp, ": cannot assign a ", type_text(L, value_idx), " to tensor elements (use a number or a tensor)");
  }
  if (autograd::needs_recording({&x, &v})) index_set_recorded(x, entries, s, v);
  else index_set(x, entries, s, v);
}

// ---------------------------------------------------------------------------------------
// Bindings of the index ops

namespace {

int ret(lua_State* L, Tensor t) {
  push_tensor(L, std::move(t));
  return 1;
}

// An index argument: a tensor, or a Lua number / table of integers.
Tensor index_arg(Args& a, int i) {
  if (a.is_tensor(i)) return a.tensor(i);
  if (a.is_number(i) || a.is_table(i)) return tensor_from_lua(a.L, i, std::nullopt, a.default_float(), a.op);
  a.error("expected an index tensor as argument " + std::to_string(i));
}

int index_select_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::index_select(x, a.dim(2, x.dim()), index_arg(a, 3)));
}

int gather_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::gather(x, a.dim(2, x.dim()), index_arg(a, 3)));
}

// The source of scatter: positional 4, or the `src` / `value` keyword.
TensorOrScalar scatter_src(Args& a) {
  if (a.has(4)) return a.tensor_or_scalar(4);
  if (Tensor* t = a.kw_tensor("src")) return TensorOrScalar(*t);
  if (auto v = a.kw_scalar("value")) return TensorOrScalar(*v);
  a.error("expected a source tensor or a value as argument 4");
}

int scatter_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::scatter(x, a.dim(2, x.dim()), index_arg(a, 3), scatter_src(a)));
}

int scatter_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::scatter_(x, a.dim(2, x.dim()), index_arg(a, 3), scatter_src(a));
  lua_pushvalue(L, 1);
  return 1;
}

int scatter_add_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::scatter_add(x, a.dim(2, x.dim()), index_arg(a, 3), a.tensor(4)));
}

int scatter_add_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::scatter_add_(x, a.dim(2, x.dim()), index_arg(a, 3), a.tensor(4));
  lua_pushvalue(L, 1);
  return 1;
}

Scalar alpha_arg(Args& a) {
  if (a.has(5)) return a.scalar(5);
  return a.kw_scalar("alpha").value_or(Scalar(int64_t(1)));
}

int index_add_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::index_add(x, a.dim(2, x.dim()), index_arg(a, 3), a.tensor(4), alpha_arg(a)));
}

int index_add_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::index_add_(x, a.dim(2, x.dim()), index_arg(a, 3), a.tensor(4), alpha_arg(a));
  lua_pushvalue(L, 1);
  return 1;
}

Scalar fill_arg(Args& a, int i) {
  if (a.is_tensor(i)) {
    const Tensor& t = a.tensor(i);
    if (t.numel() != 1) a.error("value must be a number or a one-element tensor, got shape " + t.sizes().str());
    return t.item();
  }
  return a.scalar(i);
}

int index_fill_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  return ret(L, ag::index_fill(x, a.dim(2, x.dim()), index_arg(a, 3), fill_arg(a, 4)));
}

int index_fill_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::index_fill_(x, a.dim(2, x.dim()), index_arg(a, 3), fill_arg(a, 4));
  lua_pushvalue(L, 1);
  return 1;
}

// index_put_(x, {i1, i2, ...}, values[, accumulate]): one entry per leading dim, each an
// index tensor, a mask, or ":" for the whole dim.
std::vector<Tensor> index_tuple(Args& a, int i) {
  if (!a.is_table(i)) a.error("expected a table of index tensors as argument " + std::to_string(i));
  lua_State* L = a.L;
  std::vector<Tensor> out;
  int n = int(lua_rawlen(L, i));
  for (int k = 1; k <= n; ++k) {
    lua_rawgeti(L, i, k);
    Tensor* t = to_tensor(L, -1);
    bool whole = lua_type(L, -1) == LUA_TSTRING && std::string(lua_tostring(L, -1)) == ":";
    lua_pop(L, 1);
    if (!t && !whole) a.error("entry " + std::to_string(k) + " of the indices must be a tensor or \":\"");
    out.push_back(t ? *t : Tensor());
  }
  return out;
}

bool accumulate_arg(Args& a) {
  if (a.has(4)) return a.boolean(4);
  return a.kw_bool("accumulate").value_or(false);
}

int index_put_fn(lua_State* L, Args& a) {
  return ret(L, ag::index_put(a.tensor(1), index_tuple(a, 2), a.tensor_like(3), accumulate_arg(a)));
}

int index_put_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::index_put_(x, index_tuple(a, 2), a.tensor_like(3), accumulate_arg(a));
  lua_pushvalue(L, 1);
  return 1;
}

int masked_fill_fn(lua_State* L, Args& a) {
  return ret(L, ag::masked_fill(a.tensor(1), a.tensor(2), a.tensor_or_scalar(3)));
}

int masked_fill_inplace(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  ag::masked_fill_(x, a.tensor(2), a.tensor_or_scalar(3));
  lua_pushvalue(L, 1);
  return 1;
}

int masked_select_fn(lua_State* L, Args& a) { return ret(L, ag::masked_select(a.tensor(1), a.tensor(2))); }

// nonzero(x) -> (n, ndim) 1-based positions; {as_tuple=true} (always for np.nonzero) -> a
// table of one 1-D tensor per dim.
int nonzero_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  if (a.style == Style::Numpy || a.kw_bool("as_tuple").value_or(false)) {
    push_tensor_list(L, a.op, ops::nonzero_tuple(x));
    return 1;
  }
  return ret(L, ops::nonzero(x));
}

int argwhere_fn(lua_State* L, Args& a) { return ret(L, ops::nonzero(a.tensor_like(1))); }

// count_nonzero(x): the count as a number (np) or an int64 0-dim tensor (torch); along dims
// (positional 2, dim= or axis=): an int64 tensor of the counts, as both NumPy and PyTorch.
int count_nonzero_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  std::vector<int> dims = a.dims_arg(2, x.dim());
  if (a.has(2) || a.has_kw("dim") || a.has_kw("axis")) {
    Tensor nz = ops::binary(BinaryOp::Ne, x, Scalar(0));
    return ret(L, ops::sum(nz, ops::DimList(dims.begin(), dims.end()), false, DType::Int64));
  }
  int64_t n = ops::count_nonzero(x);
  if (a.style == Style::Numpy) {
    lua_pushinteger(L, n);
    return 1;
  }
  Tensor t = Tensor::empty({}, DType::Int64);
  *t.data<int64_t>() = n;
  return ret(L, t.to_device(x.device()));
}

// take(x, idx): x flattened at idx; np.take(x, idx, {axis=d}) selects along d instead.
int take_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  Tensor idx = index_arg(a, 2);
  std::optional<int64_t> axis = a.has(3) ? std::optional<int64_t>(a.integer(3)) : a.kw_integer("axis");
  if (axis) {
    int d = a.dim_value(*axis, x.dim());
    std::vector<Tensor> per(size_t(d) + 1);
    per[d] = idx;
    return ret(L, ag::index(x, per, nullptr, "take"));
  }
  return ret(L, ag::take(x, idx));
}

const Binding kIndexBindings[] = {
    {"index_select", index_select_fn, METHOD | TORCH,
     "index_select(x, dim, index) -> Tensor: the slices of dim at the (1-based) indices, a copy."},
    {"gather", gather_fn, METHOD | TORCH, "gather(x, dim, index) -> Tensor: out[i][j] = x[index[i][j]][j] for dim 1."},
    {"scatter", scatter_fn, METHOD | TORCH,
     "scatter(x, dim, index, src or value[, {src=, value=}]) -> Tensor: a copy of x with x[index[i][j]][j] = src[i][j] for dim 1."},
    {"scatter_", scatter_inplace, METHOD, "scatter_(x, dim, index, src or value[, {src=, value=}]) -> x: in-place scatter."},
    {"scatter_add", scatter_add_fn, METHOD | TORCH, "scatter_add(x, dim, index, src) -> Tensor: like scatter, adding."},
    {"scatter_add_", scatter_add_inplace, METHOD, "scatter_add_(x, dim, index, src) -> x: in-place scatter_add."},
    {"index_add", index_add_fn, METHOD | TORCH,
     "index_add(x, dim, index, src[, {alpha=}]) -> Tensor: x with alpha * src's slices added at index along dim."},
    {"index_add_", index_add_inplace, METHOD, "index_add_(x, dim, index, src[, {alpha=}]) -> x: in-place index_add."},
    {"index_fill", index_fill_fn, METHOD | TORCH, "index_fill(x, dim, index, value) -> Tensor: slices at index set to value."},
    {"index_fill_", index_fill_inplace, METHOD, "index_fill_(x, dim, index, value) -> x: in-place index_fill."},
    {"index_put", index_put_fn, METHOD | TORCH,
     "index_put(x, {idx1, ...}, values[, accumulate][, {accumulate=}]) -> Tensor: a copy of x with x[idx1, ...] = values."},
    {"index_put_", index_put_inplace, METHOD, "index_put_(x, {idx1, ...}, values[, accumulate][, {accumulate=}]) -> x: in-place index_put."},
    {"masked_fill", masked_fill_fn, METHOD | TORCH, "masked_fill(x, mask, value) -> Tensor: value where the bool mask is true."},
    {"masked_fill_", masked_fill_inplace, METHOD, "masked_fill_(x, mask, value) -> x: in-place masked_fill."},
    {"masked_select", masked_select_fn, METHOD | TORCH, "masked_select(x, mask) -> Tensor: the elements where mask is true, 1-D."},
    {"nonzero", nonzero_fn, METHOD | TORCH | NUMPY,
     "nonzero(x[, {as_tuple=true}]) -> Tensor (n, ndim) of 1-based positions, or a table of one tensor per dim."},
    {"argwhere", argwhere_fn, METHOD | TORCH | NUMPY, "argwhere(x) -> Tensor: (n, ndim) 1-based positions of nonzero elements."},
    {"count_nonzero", count_nonzero_fn, METHOD | TORCH | NUMPY, "count_nonzero(x[, dim][, {dim=, axis=}]) -> number of nonzero elements (np: a number; torch: an int64 0-dim tensor); along dims: an int64 tensor of counts."},
    {"take", take_fn, METHOD | TORCH | NUMPY, "take(x, index[, axis][, {axis=}]) -> Tensor: x flattened at the 1-based indices."},
};

}  // namespace

// where(cond) with one argument: the positions of the true elements, one 1-D tensor per dim
// (torch.where(cond) / np.where(cond)). For the elementwise `where` binding to call.
int where_nonzero(lua_State* L, Args& a) {
  push_tensor_list(L, a.op, ops::nonzero_tuple(a.tensor_like(1)));
  return 1;
}

void register_index_bindings() { register_bindings(kIndexBindings, std::size(kIndexBindings)); }

}  // namespace tide::lua
