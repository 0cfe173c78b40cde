// The Tensor metatable: methods (from the registry), properties (shape, dtype, T, ...),
// indexing, operators, tostring, __gc/__close/__len; and the tensor-level methods that
// belong to no op family (size, item, tolist, conversions, free).
#include <cstring>

#include "../tensor/autograd/functions.hpp"
#include "../tensor/ops/complex.hpp"
#include "../tensor/ops/creation.hpp"
#include "../tensor/ops/shape.hpp"
#include "../tensor/print.hpp"
#include "indexing.hpp"
#include "lua_api.hpp"

namespace tide::lua {

// An operator's metamethod: the binding's closure, marked with its op (lua_api.cpp).
void push_operator_binding(lua_State* L, const Binding& b, BinaryOp op);

namespace {

// -------- misc methods

int size_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  if (a.has(2)) {
    lua_pushinteger(L, x.size(a.dim(2, x.dim())));
    return 1;
  }
  lua_createtable(L, x.dim(), 0);
  for (int d = 0; d < x.dim(); ++d) {
    lua_pushinteger(L, x.size(d));
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

int stride_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  if (a.has(2)) {
    lua_pushinteger(L, x.stride(a.dim(2, x.dim())));
    return 1;
  }
  lua_createtable(L, x.dim(), 0);
  for (int d = 0; d < x.dim(); ++d) {
    lua_pushinteger(L, x.stride(d));
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

int dim_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, a.tensor(1).dim());
  return 1;
}

int numel_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, a.tensor(1).numel());
  return 1;
}

int item_fn(lua_State* L, Args& a) {
  push_scalar(L, a.tensor(1).item());
  return 1;
}

int tolist_fn(lua_State* L, Args& a) {
  push_tolist(L, a.tensor(1));
  return 1;
}

int is_contiguous_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, a.tensor(1).is_contiguous());
  return 1;
}

int element_size_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, lua_Integer(a.tensor(1).itemsize()));
  return 1;
}

int clone_fn(lua_State* L, Args& a) {
  push_tensor(L, ag::clone(a.tensor(1)));
  return 1;
}

// detach(): the same elements (shared storage, so in-place changes stay visible to the
// version check), outside autograd: no history, and not a view that gradients flow through.
int detach_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  push_tensor(L, Tensor::make_view(x.storage(), x.sizes(), x.strides(), x.offset(), x.dtype()));
  return 1;
}

int contiguous_fn(lua_State* L, Args& a) {
  push_tensor(L, ag::contiguous(a.tensor(1)));
  return 1;
}

int copy_fn(lua_State* L, Args& a) {
  Tensor& dst = a.tensor(1);
  ag::copy_(dst, a.tensor_like(2));
  lua_pushvalue(L, 1);
  return 1;
}

// x:free() releases this handle's memory now; a later use is an error.
int free_fn(lua_State* L, Args& a) {
  a.consumed(1);
  Tensor* t = tensor_slot(L, 1);
  if (!t) a.error("expected a tensor");
  t->reset();
  return 0;
}

// x in dtype (differentiable); a copy even when the dtype matches if `copy`.
Tensor converted(const Tensor& x, DType dtype, bool copy) {
  Tensor r = ag::cast(x, dtype);
  return copy && r.same(x) ? ag::clone(x) : r;
}

// x:to("float64"), x:to("cpu"), x:to{device=, dtype=}, x:to(other_tensor)
int to_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor(1);
  std::optional<DType> dtype = a.kw_dtype();
  std::optional<Device> device = a.kw_device();
  bool copy = a.kw_bool("copy").value_or(false);
  for (int i = 2; i <= a.count(); ++i) {
    if (a.is_tensor(i)) {
      dtype = a.tensor(i).dtype();
      device = a.tensor(i).device();
    } else if (std::string name; !a.is_string(i) && device_name_at(L, i, name)) {
      a.consumed(i);
      device = Device::parse(name);
    } else {
      std::string s = a.string(i);
      DType dt;
      if (parse_dtype(s.rfind("torch.", 0) == 0 ? s.substr(6) : s, dt)) {
        dtype = dt;
      } else {
        try {
          device = Device::parse(s);
        } catch (const Error&) {
          a.error("unknown dtype or device '" + quote_user(s) + "' (devices are \"cpu\", \"cuda\" and \"cuda:N\")");
        }
      }
    }
  }
  if (device && *device != x.device()) {
    ops::check_creation_device("to", *device);
    push_tensor(L, converted(ag::to_device(x, *device), dtype.value_or(x.dtype()), false));
    return 1;
  }
  push_tensor(L, converted(x, dtype.value_or(x.dtype()), copy));
  return 1;
}

template <DType DT>
int convert_fn(lua_State* L, Args& a) {
  push_tensor(L, converted(a.tensor(1), DT, false));
  return 1;
}

// x:type() -> "torch.FloatTensor"-free spelling: the dtype name; x:type("float64") converts.
int type_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  if (a.has(2)) {
    push_tensor(L, converted(x, a.dtype(2), false));
    return 1;
  }
  std::string_view n = dtype_name(x.dtype());
  lua_pushlstring(L, n.data(), n.size());
  return 1;
}

int astype_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  push_tensor(L, converted(x, a.dtype(2), a.kw_bool("copy").value_or(true)));
  return 1;
}

int cpu_fn(lua_State* L, Args& a) {
  push_tensor(L, ag::to_device(a.tensor(1), Device{}));
  return 1;
}

// x:cuda(): the tensor on the first CUDA device (x:to("cuda:N") for another).
int cuda_fn(lua_State* L, Args& a) {
  Tensor& x = a.tensor(1);
  const Device d{DeviceType::CUDA, 0};
  ops::check_creation_device("cuda", d);
  push_tensor(L, ag::to_device(x, d));
  return 1;
}

int is_floating_point_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, is_floating(a.tensor(1).dtype()));
  return 1;
}

int is_tensor_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, a.is_tensor(1));
  return 1;
}

// np.size(a[, axis]): the element count, or the size of one axis.
int numel_np_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  std::optional<int64_t> axis = a.has(2) ? std::optional<int64_t>(a.integer(2)) : std::nullopt;
  if (auto kw = a.kw_integer("axis")) {
    if (axis) a.error("axis given both as argument 2 and as a keyword");
    axis = kw;
  }
  lua_pushinteger(L, axis ? x.size(a.dim_value(*axis, x.dim())) : x.numel());
  return 1;
}

int shape_np_fn(lua_State* L, Args& a) {
  Tensor x = a.tensor_like(1);
  lua_createtable(L, x.dim(), 0);
  for (int d = 0; d < x.dim(); ++d) {
    lua_pushinteger(L, x.size(d));
    lua_rawseti(L, -2, d + 1);
  }
  return 1;
}

int asarray_fn(lua_State* L, Args& a) {
  if (a.is_tensor(1)) {
    Tensor& x = a.tensor(1);
    auto dt = a.kw_dtype();
    push_tensor(L, dt ? x.to(*dt) : x);
    return 1;
  }
  push_tensor(L, tensor_from_lua(L, 1, a.kw_dtype(), a.default_float(), a.op));
  return 1;
}

// torch.from_numpy(a): a torch tensor over a NumPy array's memory (writes show in both), as
// PyTorch's shares the ndarray's buffer. In tide an array is a tensor flagged for NumPy
// semantics; the result is an alias without the flag, which autograd sees as a view of a.
int from_numpy_fn(lua_State* L, Args& a) {
  const Tensor& x = a.tensor(1);
  TIDE_CHECK(x.impl()->numpy, "from_numpy: expected a NumPy array (made by np.*), got a torch tensor ",
             "(torch.as_tensor takes either)");
  push_tensor(L, ag::alias(x));
  to_tensor(L, -1)->impl()->numpy = false;  // push_tensor flags the results of a call on an array
  return 1;
}

// torch.as_tensor(data[, {dtype=, device=}]): a torch tensor given with that dtype and device
// already is returned as it is; a NumPy array becomes a torch alias of its memory (as
// from_numpy) and is converted only when dtype or device differ; other data as torch.tensor.
int as_tensor_fn(lua_State* L, Args& a) {
  std::optional<DType> dtype = a.kw_dtype();
  std::optional<Device> device = a.kw_device();
  if (device) ops::check_creation_device(a.op, *device);
  if (!a.is_tensor(1)) {
    if (!a.has(1)) a.error("expected data (a number, a boolean, a table or a tensor) as argument 1");
    Tensor t = tensor_from_lua(L, 1, dtype, a.default_float(), a.op);
    push_tensor(L, device ? t.to_device(*device) : t);
    return 1;
  }
  const Tensor& x = a.tensor(1);
  const bool numpy = x.impl()->numpy;
  if (!numpy && (!dtype || *dtype == x.dtype()) && (!device || *device == x.device())) {
    lua_pushvalue(L, 1);
    return 1;
  }
  Tensor y = numpy ? ag::alias(x) : x;
  if (device && *device != y.device()) y = ag::to_device(y, *device);
  push_tensor(L, converted(y, dtype.value_or(y.dtype()), false));
  to_tensor(L, -1)->impl()->numpy = false;  // push_tensor flags the results of a call on an array
  return 1;
}

const Binding kTensorBindings[] = {
    {"size", size_fn, METHOD, "x:size([dim]) -> table or integer: the shape, or one dim's size."},
    {"stride", stride_fn, METHOD, "x:stride([dim]) -> table or integer: strides in elements."},
    {"dim", dim_fn, METHOD, "x:dim() -> integer: number of dims."},
    {"ndimension", dim_fn, METHOD, "x:ndimension() -> integer: number of dims."},
    {"numel", numel_fn, METHOD | TORCH, "numel(x) -> integer: number of elements."},
    {"nelement", numel_fn, METHOD, "x:nelement() -> integer: number of elements."},
    {"item", item_fn, METHOD, "x:item() -> number: the value of a one-element tensor."},
    {"tolist", tolist_fn, METHOD, "x:tolist() -> table: nested tables of the values."},
    {"is_contiguous", is_contiguous_fn, METHOD, "x:is_contiguous() -> boolean."},
    {"element_size", element_size_fn, METHOD, "x:element_size() -> integer: bytes per element."},
    {"clone", clone_fn, METHOD | TORCH, "clone(x) -> Tensor: a contiguous copy."},
    {"copy", clone_fn, METHOD | NUMPY, "copy(x) -> Tensor: a contiguous copy (NumPy)."},
    {"detach", detach_fn, METHOD | TORCH, "detach(x) -> Tensor: a view of x that shares its storage, outside autograd."},
    {"contiguous", contiguous_fn, METHOD, "x:contiguous() -> Tensor: x itself if contiguous, else a copy."},
    {"copy_", copy_fn, METHOD, "x:copy_(src) -> x: copies src (broadcast, converted) into x."},
    {"free", free_fn, METHOD, "x:free() -> nil: releases the tensor's memory now; later use is an error."},
    {"to", to_fn, METHOD, "x:to(dtype | device | {dtype=, device=, copy=}) -> Tensor."},
    {"type", type_fn, METHOD, "x:type([dtype]) -> string or Tensor: the dtype name, or a converted tensor."},
    {"astype", astype_fn, METHOD | NUMPY, "astype(x, dtype[, {copy=}]) -> Tensor: a converted copy (NumPy; copy=false returns x itself when the dtype matches)."},
    {"float", convert_fn<DType::Float32>, METHOD, "x:float() -> Tensor: as float32."},
    {"double", convert_fn<DType::Float64>, METHOD, "x:double() -> Tensor: as float64."},
    {"half", convert_fn<DType::Float16>, METHOD, "x:half() -> Tensor: as float16."},
    {"bfloat16", convert_fn<DType::BFloat16>, METHOD, "x:bfloat16() -> Tensor: as bfloat16."},
    {"long", convert_fn<DType::Int64>, METHOD, "x:long() -> Tensor: as int64."},
    {"int", convert_fn<DType::Int32>, METHOD, "x:int() -> Tensor: as int32."},
    {"short", convert_fn<DType::Int16>, METHOD, "x:short() -> Tensor: as int16."},
    {"byte", convert_fn<DType::UInt8>, METHOD, "x:byte() -> Tensor: as uint8."},
    {"char", convert_fn<DType::Int8>, METHOD, "x:char() -> Tensor: as int8."},
    {"bool", convert_fn<DType::Bool>, METHOD, "x:bool() -> Tensor: as bool."},
    {"cpu", cpu_fn, METHOD, "x:cpu() -> Tensor: the tensor on the CPU."},
    {"cuda", cuda_fn, METHOD, "x:cuda() -> Tensor: the tensor on the first GPU (to(\"cuda:N\") for others)."},
    {"is_tensor", is_tensor_fn, TORCH, "is_tensor(v) -> boolean."},
    {"is_floating_point", is_floating_point_fn, METHOD | TORCH, "is_floating_point(x) -> boolean."},
    {"size", numel_np_fn, NUMPY, "np.size(x[, axis][, {axis=}]) -> integer: number of elements, or the size of one axis."},
    {"shape", shape_np_fn, NUMPY, "np.shape(x) -> table: the shape."},
    {"asarray", asarray_fn, NUMPY, "asarray(x[, {dtype=}]) -> Tensor: x itself, or a new tensor from a table."},
    {"as_tensor", as_tensor_fn, TORCH,
     "as_tensor(data[, {dtype=, device=}]) -> Tensor: data itself when it is a torch tensor of that dtype and device, "
     "a NumPy array as a torch tensor sharing its memory (converted if dtype or device differ), other data as tensor()."},
    {"from_numpy", from_numpy_fn, TORCH,
     "from_numpy(a) -> Tensor: a torch tensor sharing the memory of the NumPy array a (writes show in both)."},
};

// -------- metamethods (plain lua_CFunctions guarded like bindings)

// The tensor a metamethod is called on. getmetatable(x) is reachable even in a sandbox, so
// a script can call any metamethod with anything as self: that is an error, not a crash.
Tensor& self_tensor(lua_State* L, const char* what) {
  Tensor* x = to_tensor(L, 1);
  if (!x) TIDE_FAIL("tensor: ", what, " expects a tensor as self, got a ", luaL_typename(L, 1));
  return *x;
}

template <int (*F)(lua_State*, Args&)>
int guarded(lua_State* L) {
  bool failed = false;
  int n = 0;
  try {
    Args a(L, "tensor", Style::Torch);
    n = F(L, a);
  } catch (const std::exception& e) {
    lua_pushstring(L, e.what());
    failed = true;
  }
  if (failed) return lua_error(L);
  return n;
}

void push_shape(lua_State* L, const Dims& d) {
  lua_createtable(L, d.size(), 0);
  for (int i = 0; i < d.size(); ++i) {
    lua_pushinteger(L, d[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

// The strings that are index keys rather than names: x[":"], x["..."], x[np.newaxis].
bool is_index_string(lua_State* L, int idx) {
  const char* k = lua_tostring(L, idx);
  return !std::strcmp(k, ":") || !std::strcmp(k, "...") || !std::strcmp(k, "newaxis");
}

// __index(x, key): methods first (one hash lookup), then properties, then indexing. A view
// of a NumPy array is one (CallSemantics); printing keeps PyTorch's format for both kinds.
int index_mm(lua_State* L, Args& self) {
  CallSemantics semantics(self);
  if (lua_type(L, 2) == LUA_TSTRING && !is_index_string(L, 2)) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
    Tensor* x = &self_tensor(L, "__index");
    const char* k = lua_tostring(L, 2);
    if (!std::strcmp(k, "grad")) {  // first: a training loop reads it per parameter and step
      Tensor g = autograd::grad(*x);
      if (g.defined()) push_tensor(L, g);
      else lua_pushnil(L);
      return 1;
    }
    if (!std::strcmp(k, "shape")) return push_shape(L, x->sizes()), 1;
    if (!std::strcmp(k, "ndim")) return lua_pushinteger(L, x->dim()), 1;
    if (!std::strcmp(k, "dtype")) return lua_pushstring(L, std::string(dtype_name(x->dtype())).c_str()), 1;
    if (!std::strcmp(k, "device")) return push_device(L, x->device()), 1;
    if (!std::strcmp(k, "itemsize")) return lua_pushinteger(L, lua_Integer(x->itemsize())), 1;
    if (!std::strcmp(k, "nbytes")) return lua_pushinteger(L, lua_Integer(x->nbytes())), 1;
    if (!std::strcmp(k, "strides")) {  // NumPy's: in bytes (x:stride() gives elements)
      Dims bytes;
      for (int d = 0; d < x->dim(); ++d) bytes.push_back(x->stride(d) * int64_t(x->itemsize()));
      return push_shape(L, bytes), 1;
    }
    if (!std::strcmp(k, "T")) return push_tensor(L, ag::reverse_dims(*x)), 1;
    // The parts of a complex tensor as views; of a real one x itself and (NumPy) zeros.
    if (!std::strcmp(k, "real")) return push_tensor(L, ag::real(*x)), 1;
    if (!std::strcmp(k, "imag"))
      return push_tensor(L, x->impl()->numpy && !is_complex(x->dtype()) ? ops::zeros_like(*x) : ag::imag(*x)), 1;
    if (!std::strcmp(k, "requires_grad")) return lua_pushboolean(L, autograd::requires_grad(*x)), 1;
    if (!std::strcmp(k, "is_leaf")) return lua_pushboolean(L, autograd::is_leaf(*x)), 1;
    if (!std::strcmp(k, "data"))  // the same elements outside autograd, as x:detach()
      return push_tensor(L, Tensor::make_view(x->storage(), x->sizes(), x->strides(), x->offset(), x->dtype())), 1;
    if (!std::strcmp(k, "retains_grad")) {
      const auto& m = x->impl()->autograd;
      return lua_pushboolean(L, m && m->retains_grad && m->grad_fn), 1;
    }
    if (!std::strcmp(k, "grad_fn")) {
      const auto& fn = autograd::grad_fn(*x);
      if (fn) lua_pushstring(L, fn->name().c_str());
      else lua_pushnil(L);
      return 1;
    }
    TIDE_FAIL("tensor: no method or property named '", quote_user(k), "'");
  }
  Tensor* x = &self_tensor(L, "__index");
  Args a(L, "index", Style::Torch);
  CapturedOp named(L, "index");
  return tensor_index_get(L, a, *x, 2);
}

// __index: a method name (x:mm(w), the common case) is one raw lookup in the methods table
// (upvalue 1), with no C++ object in this frame; any other key goes to index_mm, which
// repeats that lookup only after the index strings (":", "...", "newaxis"), none a method.
int index_method_mm(lua_State* L) {
  if (lua_type(L, 2) == LUA_TSTRING) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNIL) return 1;
    lua_pop(L, 1);
  }
  return guarded<index_mm>(L);
}

int newindex_mm(lua_State* L, Args& self) {
  CallSemantics semantics(self);
  Tensor* x = &self_tensor(L, "__newindex");
  if (lua_type(L, 2) == LUA_TSTRING && !is_index_string(L, 2)) {
    const char* k = lua_tostring(L, 2);
    if (!std::strcmp(k, "requires_grad")) {
      TIDE_CHECK(lua_type(L, 3) == LUA_TBOOLEAN, "requires_grad: expected a boolean, got a ", luaL_typename(L, 3));
      autograd::set_requires_grad(*x, lua_toboolean(L, 3), "requires_grad");
      return 0;
    }
    if (!std::strcmp(k, "grad")) {
      Tensor* g = lua_isnil(L, 3) ? nullptr : to_tensor(L, 3);
      TIDE_CHECK(lua_isnil(L, 3) || g, "grad: expected a tensor or nil, got a ", luaL_typename(L, 3));
      autograd::set_grad(*x, g ? *g : Tensor());
      return 0;
    }
    if (!std::strcmp(k, "data")) {
      Tensor* d = to_tensor(L, 3);
      TIDE_CHECK(d, "data: expected a tensor, got a ", luaL_typename(L, 3));
      autograd::set_data(*x, *d);
      return 0;
    }
    if (!std::strcmp(k, "real") || !std::strcmp(k, "imag")) {  // x.real = v writes through the view
      TIDE_CHECK(!autograd::requires_grad(*x), k, ": cannot write into a tensor that requires grad");
      Tensor part = k[0] == 'r' ? ops::real(*x) : ops::imag(*x);
      double d;
      if (Tensor* v = to_tensor(L, 3)) {
        TIDE_CHECK(!autograd::needs_recording({v}), k, ": the value requires grad, and writing it into a part of a "
                   "complex tensor is not recorded (detach() it, or build the tensor with torch.complex)");
        ops::copy_(part, *v);
      }
      else if (number_value(L, 3, d)) ops::fill_(part, Scalar(d));
      else TIDE_FAIL(k, ": expected a tensor or a number, got a ", luaL_typename(L, 3));
      return 0;
    }
    TIDE_FAIL("tensor: cannot set the property '", quote_user(k), "'");
  }
  Args a(L, "index", Style::Torch);
  CapturedOp named(L, "index_put");
  tensor_index_set(L, a, *x, 2, 3);
  return 0;
}

int tostring_mm(lua_State* L, Args&) {
  CapturedOp named(L, "tostring");
  Tensor* t = tensor_slot(L, 1);
  if (t && !t->defined()) {
    lua_pushliteral(L, "tensor(<freed>)");
    return 1;
  }
  const Tensor& x = self_tensor(L, "__tostring");
  std::string s = format_tensor(x, default_float_dtype());
  // PyTorch's suffix: the node that made the tensor, or that a leaf requires grad.
  if (autograd::requires_grad(x) && !s.empty() && s.back() == ')') {
    const auto& fn = autograd::grad_fn(x);
    s.insert(s.size() - 1, fn ? ", grad_fn=<" + fn->name() + ">" : std::string(", requires_grad=true"));
  }
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int len_mm(lua_State* L, Args&) {
  Tensor* x = &self_tensor(L, "__len");
  TIDE_CHECK(x->dim() > 0, "len: a 0-dim tensor has no length");
  lua_pushinteger(L, x->size(0));
  return 1;
}

// Releases the tensor (its storage goes when no other view holds it). Only a reset, not the
// destructor: a script can call getmetatable(x).__gc(x) itself, twice or on another value, and
// an emptied Tensor owns nothing, so Lua may free its memory without running a destructor.
int gc_mm(lua_State* L) {
  Tensor* t = tensor_slot(L, 1);
  if (t) t->reset();
  return 0;
}

int close_mm(lua_State* L) {
  Tensor* t = tensor_slot(L, 1);
  if (t) t->reset();
  return 0;
}

}  // namespace

void register_tensor_bindings() { register_bindings(kTensorBindings, std::size(kTensorBindings)); }

// Builds the metatable; `methods` (a table of method closures) is at the top of the stack
// and is consumed.
void build_tensor_metatable(lua_State* L) {
  int methods = lua_gettop(L);
  luaL_newmetatable(L, kTensorMeta);
  int mt = lua_gettop(L);
  remember_tensor_metatable(L);
  lua_pushvalue(L, methods);
  lua_pushcclosure(L, index_method_mm, 1);
  lua_setfield(L, mt, "__index");
  lua_pushcfunction(L, guarded<newindex_mm>);
  lua_setfield(L, mt, "__newindex");
  lua_pushcfunction(L, guarded<tostring_mm>);
  lua_setfield(L, mt, "__tostring");
  lua_pushcfunction(L, guarded<len_mm>);
  lua_setfield(L, mt, "__len");
  lua_pushcfunction(L, gc_mm);
  lua_setfield(L, mt, "__gc");
  // Tensors are finalized userdata, and Lua 5.4 counts the finalized garbage of a cycle as
  // live when it sets the next cycle's threshold: with the default pause of 200% a loop of
  // small ops grows the heap without bound (a + b on 10 elements: 48 MB after 1.5 million
  // ops, and slower by cache misses); 150% keeps it near the live heap. Incremental mode
  // only: in generational mode the pause is not used. The larger the live heap (the embedded
  // Lua modules are ~0.8 MB), the longer a cycle and the more finalized garbage it carries
  // over: the step multiplier must grow with the modules' heap. At 200 (Lua's default is 100)
  // a + b on 10 elements stayed bounded with 0.8 MB of modules, but with 1.5 MB (issues 16
  // and 17's Lua code) it grew without bound again (21 MB after 900 thousand ops, 280 MB of
  // tensors waiting for finalizers); 400 keeps it at 2.7x the live heap and the loop faster.
  lua_gc(L, LUA_GCSETPAUSE, 150);
  lua_gc(L, LUA_GCSETSTEPMUL, 400);
  lua_pushcfunction(L, close_mm);
  lua_setfield(L, mt, "__close");
  lua_pushliteral(L, "Tensor");
  lua_setfield(L, mt, "__name");
  // Operators are the bindings of the same ops. Lua calls the unary ones (__unm, __bnot)
  // with the operand twice, so those get it once (unary_metamethod); the binary ones know
  // their op, for the dispatcher's fast path (push_operator_binding).
  static const struct {
    const char* mm;
    const char* op;
    std::optional<BinaryOp> binary;
  } ops[] = {{"__add", "add", BinaryOp::Add},
             {"__sub", "sub", BinaryOp::Sub},
             {"__mul", "mul", BinaryOp::Mul},
             {"__div", "div", BinaryOp::Div},
             {"__pow", "pow", BinaryOp::Pow},
             {"__idiv", "floor_divide", BinaryOp::FloorDiv},
             {"__mod", "remainder", BinaryOp::Remainder},
             {"__unm", "neg", std::nullopt},
             {"__band", "bitwise_and", BinaryOp::BitwiseAnd},
             {"__bor", "bitwise_or", BinaryOp::BitwiseOr},
             {"__bxor", "bitwise_xor", BinaryOp::BitwiseXor},
             {"__bnot", "bitwise_not", std::nullopt},
             {"__shl", "bitwise_left_shift", BinaryOp::BitwiseLeftShift},
             {"__shr", "bitwise_right_shift", BinaryOp::BitwiseRightShift}};
  for (auto& o : ops) {
    const Binding* b = find_binding(o.op);
    TIDE_ASSERT(b != nullptr);
    if (!o.binary) {
      push_unary_metamethod(L, *b);
    } else {
      TIDE_ASSERT(!std::strcmp(binary_op_name(*o.binary), o.op));
      push_operator_binding(L, *b, *o.binary);
    }
    lua_setfield(L, mt, o.mm);
  }
  lua_settop(L, methods - 1);
}

}  // namespace tide::lua
