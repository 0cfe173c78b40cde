// The file functions: NumPy's np.save, np.load (.npy -> tensor, .npz -> table of tensors),
// np.savez, np.savez_compressed, np.loadtxt and np.savetxt, and PyTorch's torch.save and
// torch.load (PyTorch's checkpoints and safetensors). The formats live in tensor/io/; this file only turns
// Lua arguments into their options, and Lua tables into key paths and back.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <unordered_set>

#include "../tensor/autograd/autograd.hpp"
#include "../tensor/io/file_io.hpp"
#include "../tensor/io/npy.hpp"
#include "../tensor/io/pt.hpp"
#include "../tensor/io/safetensors.hpp"
#include "../tensor/io/text.hpp"
#include "../tensor/ops/creation.hpp"
#include "lua_api.hpp"

namespace tide::lua {
namespace {

bool ends_with(const std::string& s, const char* suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

const char* type_of(lua_State* L, int idx) {
  if (luaL_testudata(L, idx, kTensorMeta)) return "tensor";
  return lua_typename(L, lua_type(L, idx));
}

// The file name at argument i.
std::string path_arg(Args& a, const char* op, int i = 1) {
  TIDE_CHECK(a.is_string(i), op, ": expected a file name (string) as argument ", i, ", got ",
             a.count() >= i ? type_of(a.L, i) : "nothing");
  size_t n;
  const char* s = lua_tolstring(a.L, i, &n);
  return std::string(s, n);
}

// The value at idx as a tensor: a tensor as is, a number or nested table converted (float64
// for floats, as NumPy does).
Tensor array_at(lua_State* L, int idx, const char* op, const std::string& what) {
  if (Tensor* t = to_tensor(L, idx)) return *t;
  int ty = lua_type(L, idx);
  TIDE_CHECK(ty == LUA_TTABLE || ty == LUA_TNUMBER || ty == LUA_TBOOLEAN, op, ": ", what,
             " must be a tensor, a number or a table of numbers, got a ", type_of(L, idx));
  if (ty == LUA_TTABLE) return tensor_from_lua(L, idx, std::nullopt, DType::Float64, op);
  Tensor t;
  if (ty == LUA_TBOOLEAN) {
    t = Tensor::empty({}, DType::Bool);
    *t.data<bool>() = lua_toboolean(L, idx);
  } else if (lua_isinteger(L, idx)) {
    t = Tensor::empty({}, DType::Int64);
    *t.data<int64_t>() = lua_tointeger(L, idx);
  } else {
    t = Tensor::empty({}, DType::Float64);
    *t.data<double>() = lua_tonumber(L, idx);
  }
  return t;
}

// np.save(path, x): writes x to path (".npy" is added when missing, as NumPy does).
int save_fn(lua_State* L, Args& a) {
  std::string path = path_arg(a, "np.save");
  TIDE_CHECK(a.has(2), "np.save: expected the array to save as argument 2");
  Tensor x = array_at(L, 2, "np.save", "the array");
  if (!ends_with(path, ".npy")) path += ".npy";
  io::save_npy(path, x, "np.save");
  return 0;
}

// np.load(path[, {mmap_mode=}]): a tensor for a .npy file, a table name -> tensor for a .npz
// archive; mmap_mode "r" / "c" / "r+" maps a .npy file instead of reading it.
int load_fn(lua_State* L, Args& a) {
  std::string path = path_arg(a, "np.load");
  if (auto m = a.kw_string("mmap_mode")) {
    io::MmapMode mode;
    if (*m == "r") mode = io::MmapMode::ReadOnly;
    else if (*m == "c") mode = io::MmapMode::CopyOnWrite;
    else if (*m == "r+") mode = io::MmapMode::ReadWrite;
    else if (*m == "w+")
      TIDE_FAIL("np.load: mmap_mode \"w+\" creates a new file, which np.load cannot (it has no shape or dtype to "
                "give it); save an array with np.save first, then map it with \"r+\"");
    else
      TIDE_FAIL("np.load: mmap_mode must be \"r\", \"c\" or \"r+\", got '", quote_user(*m), "'");
    push_tensor(L, io::load_npy_mmap(path, mode, "np.load"));
    return 1;
  }
  io::Loaded l = io::load(path, "np.load");
  if (!l.is_npz) {
    push_tensor(L, std::move(l.tensor));
    return 1;
  }
  lua_createtable(L, 0, int(std::min<size_t>(l.members.size(), 1 << 20)));
  for (auto& [name, t] : l.members) {
    lua_pushlstring(L, name.data(), name.size());
    push_tensor(L, std::move(t));
    lua_rawset(L, -3);
  }
  return 1;
}

// The arrays of np.savez(path, x, y, {a=z}): positional ones are arr_0, arr_1, ... (in order),
// named ones come sorted by name so that the archive does not depend on table order.
std::vector<io::NamedTensor> savez_members(lua_State* L, Args& a, const char* op) {
  std::vector<io::NamedTensor> out;
  for (int i = 2; i <= a.count(); ++i) {
    if (lua_type(L, i) == LUA_TTABLE && !to_tensor(L, i)) {
      lua_pushnil(L);
      while (lua_next(L, i)) {
        bool named = lua_type(L, -2) == LUA_TSTRING;
        lua_pop(L, 1);
        if (named) {
          lua_pop(L, 1);
          TIDE_FAIL(op, ": argument ", i, " mixes a list with names; pass named arrays as one table "
                    "{name = x, ...} and unnamed ones as separate arguments");
        }
      }
    }
    out.emplace_back("arr_" + std::to_string(i - 2), array_at(L, i, op, "argument " + std::to_string(i)));
  }
  const size_t positional = out.size();
  if (int kw = a.kw_table()) {
    lua_pushnil(L);
    while (lua_next(L, kw)) {
      if (lua_type(L, -2) != LUA_TSTRING) {
        const char* kt = lua_typename(L, lua_type(L, -2));
        lua_pop(L, 2);
        TIDE_FAIL(op, ": array names must be strings, got a ", kt);
      }
      size_t n;
      const char* k = lua_tolstring(L, -2, &n);
      std::string name(k, n);
      Tensor t = array_at(L, lua_gettop(L), op, "array '" + quote_user(name) + "'");
      lua_pop(L, 1);
      for (size_t j = 0; j < positional; ++j)
        if (out[j].first == name) {
          lua_pop(L, 1);
          TIDE_FAIL(op, ": the name '", quote_user(name), "' is also given to an unnamed array");
        }
      out.emplace_back(std::move(name), std::move(t));
    }
    std::sort(out.begin() + std::ptrdiff_t(positional), out.end(),
              [](const io::NamedTensor& x, const io::NamedTensor& y) { return x.first < y.first; });
  }
  return out;
}

int savez_common(lua_State* L, Args& a, bool compressed) {
  const char* op = compressed ? "np.savez_compressed" : "np.savez";
  std::string path = path_arg(a, op);
  std::vector<io::NamedTensor> members = savez_members(L, a, op);
  if (!ends_with(path, ".npz")) path += ".npz";
  io::save_npz(path, members, compressed, op);
  return 0;
}

int savez_fn(lua_State* L, Args& a) { return savez_common(L, a, false); }
int savez_compressed_fn(lua_State* L, Args& a) { return savez_common(L, a, true); }

// Reads kw[name] as a string or a list of strings (fmt, comments).
std::vector<std::string> kw_strings(lua_State* L, Args& a, const char* name, const char* op, bool& present,
                                    bool& is_false) {
  std::vector<std::string> out;
  present = is_false = false;
  int t = a.push_kw(name);
  if (t == LUA_TNIL) {
    lua_pop(L, 1);
    return out;
  }
  present = true;
  if (t == LUA_TBOOLEAN && !lua_toboolean(L, -1)) {
    is_false = true;
  } else if (t == LUA_TSTRING) {
    size_t n;
    const char* s = lua_tolstring(L, -1, &n);
    out.emplace_back(s, n);
  } else if (t == LUA_TTABLE) {
    lua_Integer n = lua_Integer(lua_rawlen(L, -1));
    for (lua_Integer k = 1; k <= n; ++k) {
      if (lua_rawgeti(L, -1, k) != LUA_TSTRING) {
        lua_pop(L, 2);
        TIDE_FAIL(op, ": keyword '", name, "' must be a string or a list of strings");
      }
      size_t len;
      const char* s = lua_tolstring(L, -1, &len);
      out.emplace_back(s, len);
      lua_pop(L, 1);
    }
  } else {
    lua_pop(L, 1);
    TIDE_FAIL(op, ": keyword '", name, "' must be a string or a list of strings, got a ", lua_typename(L, t));
  }
  lua_pop(L, 1);
  return out;
}

// The options np.loadtxt and np.genfromtxt share: delimiter, comments, the lines skipped
// first (keyword `skip_kw`), max_rows, dtype and usecols (1-based here, 0-based in o).
void text_options(lua_State* L, Args& a, const char* op, const char* skip_kw, io::LoadtxtOptions& o) {
  if (auto d = a.kw_string("delimiter")) {
    TIDE_CHECK(d->size() <= 1, op, ": delimiter must be a single character, got '", quote_user(*d), "'");
    if (d->size() == 1) o.delimiter = (*d)[0];
  }
  bool present, is_false;
  std::vector<std::string> comments = kw_strings(L, a, "comments", op, present, is_false);
  if (present) o.comments = comments;  // comments=false: none
  if (auto v = a.kw_integer(skip_kw)) {
    TIDE_CHECK(*v >= 0, op, ": ", skip_kw, " must be >= 0, got ", *v);
    o.skiprows = *v;
  }
  if (auto v = a.kw_integer("max_rows")) {
    TIDE_CHECK(*v >= 0, op, ": max_rows must be >= 0, got ", *v);
    o.max_rows = *v;
  }
  if (auto dt = a.kw_dtype("dtype")) o.dtype = *dt;
  int t = a.push_kw("usecols");
  std::vector<int64_t> cols;
  bool ok = true;
  if (t == LUA_TNUMBER) {
    ok = lua_isinteger(L, -1);
    cols.push_back(lua_tointeger(L, -1));
  } else if (t == LUA_TTABLE) {
    lua_Integer n = lua_Integer(lua_rawlen(L, -1));
    for (lua_Integer k = 1; k <= n && ok; ++k) {
      lua_rawgeti(L, -1, k);
      ok = lua_isinteger(L, -1);
      cols.push_back(lua_tointeger(L, -1));
      lua_pop(L, 1);
    }
    ok = ok && n > 0;
  } else {
    ok = t == LUA_TNIL;
  }
  lua_pop(L, 1);
  TIDE_CHECK(ok, op, ": usecols must be a column number or a non-empty list of them (1-based)");
  for (int64_t c : cols) {
    TIDE_CHECK(c != 0, op, ": usecols are 1-based (1 is the first column, -1 the last); 0 is not a column");
    o.usecols.push_back(c > 0 ? c - 1 : c);
  }
}

// np.loadtxt(path, {delimiter=, comments=, skiprows=, usecols=, max_rows=, dtype=, ndmin=, unpack=})
int loadtxt_fn(lua_State* L, Args& a) {
  const char* op = "np.loadtxt";
  std::string path = path_arg(a, op);
  io::LoadtxtOptions o;
  text_options(L, a, op, "skiprows", o);
  if (auto v = a.kw_integer("ndmin")) {
    TIDE_CHECK(*v >= 0 && *v <= 2, op, ": ndmin must be 0, 1 or 2, got ", *v);
    o.ndmin = int(*v);
  }
  bool unpack = a.kw_bool("unpack").value_or(false);
  Tensor t = io::loadtxt(path, o, op);
  if (!unpack || t.dim() != 2) {
    push_tensor(L, std::move(t));
    return 1;
  }
  // unpack=true: one 1-D tensor per column (NumPy's arr.T unpacked into variables).
  const int64_t cols = t.size(1);
  TIDE_CHECK(cols < 10000 && lua_checkstack(L, int(cols) + 2), op, ": too many columns (", cols, ") to unpack");
  for (int64_t c = 0; c < cols; ++c)
    push_tensor(L, Tensor::make_view(t.storage(), Dims{t.size(0)}, Dims{t.stride(0)}, t.offset() + c, t.dtype()));
  return int(cols);
}

// np.genfromtxt(path, {delimiter=, skip_header=, skip_footer=, usecols=, dtype=, names=,
// missing_values=, filling_values=, comments=, max_rows=}): a tensor, or with names=true a
// table name -> 1-D column whose array part lists the names in file order (tide has no
// structured dtype).
int genfromtxt_fn(lua_State* L, Args& a) {
  const char* op = "np.genfromtxt";
  std::string path = path_arg(a, op);
  io::GenfromtxtOptions o;
  text_options(L, a, op, "skip_header", o);
  if (auto v = a.kw_integer("skip_footer")) {
    TIDE_CHECK(*v >= 0, op, ": skip_footer must be >= 0, got ", *v);
    o.skip_footer = *v;
  }
  o.names = a.kw_bool("names").value_or(false);
  bool present, is_false;
  o.missing_values = kw_strings(L, a, "missing_values", op, present, is_false);
  TIDE_CHECK(!is_false, op, ": missing_values must be a string or a list of strings");
  if (a.push_kw("filling_values") != LUA_TNIL) {
    TIDE_CHECK(lua_type(L, -1) == LUA_TNUMBER, op, ": filling_values must be a number, got a ", type_of(L, -1));
    o.filling = lua_tonumber(L, -1);
  }
  lua_pop(L, 1);
  io::Genfromtxt r = io::genfromtxt(path, o, op);
  if (!o.names) {
    push_tensor(L, std::move(r.table));
    return 1;
  }
  const int n = int(std::min<size_t>(r.names.size(), 1 << 20));
  lua_createtable(L, n, n);
  for (size_t c = 0; c < r.names.size(); ++c) {
    const std::string& name = r.names[c];
    lua_pushlstring(L, name.data(), name.size());
    lua_pushvalue(L, -1);
    lua_rawseti(L, -3, lua_Integer(c + 1));
    TIDE_CHECK(lua_rawget(L, -2) == LUA_TNIL, op, ": the column name '", quote_user(name), "' appears twice");
    lua_pop(L, 1);
    lua_pushlstring(L, name.data(), name.size());
    push_tensor(L, Tensor::make_view(r.table.storage(), Dims{r.table.size(0)}, Dims{r.table.stride(0)},
                                     r.table.offset() + int64_t(c), r.table.dtype()));
    lua_rawset(L, -3);
  }
  return 1;
}

// x:tofile(path[, {sep=, format=}]): raw bytes (sep "") or text.
int tofile_fn(lua_State*, Args& a) {
  const char* op = "tofile";
  Tensor x = a.tensor(1);
  std::string path = path_arg(a, op, 2);
  io::TofileOptions o;
  if (auto v = a.kw_string("sep")) o.sep = *v;
  if (auto v = a.kw_string("format")) o.format = *v;
  io::tofile(path, x, o, op);
  return 0;
}

// np.fromfile(path[, {dtype=, count=, sep=, offset=}]) -> 1-D tensor.
int fromfile_fn(lua_State* L, Args& a) {
  const char* op = "np.fromfile";
  std::string path = path_arg(a, op);
  io::FromfileOptions o;
  if (auto dt = a.kw_dtype("dtype")) o.dtype = *dt;
  if (auto v = a.kw_integer("count")) o.count = *v;
  if (auto v = a.kw_string("sep")) o.sep = *v;
  if (auto v = a.kw_integer("offset")) o.offset = *v;
  push_tensor(L, io::fromfile(path, o, op));
  return 1;
}

// np.savetxt(path, x, {fmt=, delimiter=, newline=, header=, footer=, comments=})
int savetxt_fn(lua_State* L, Args& a) {
  const char* op = "np.savetxt";
  std::string path = path_arg(a, op);
  TIDE_CHECK(a.has(2), op, ": expected the array to save as argument 2");
  Tensor x = array_at(L, 2, op, "the array");
  io::SavetxtOptions o;
  if (auto v = a.kw_string("delimiter")) o.delimiter = *v;
  if (auto v = a.kw_string("newline")) o.newline = *v;
  if (auto v = a.kw_string("header")) o.header = *v;
  if (auto v = a.kw_string("footer")) o.footer = *v;
  if (auto v = a.kw_string("comments")) o.comments = *v;
  bool present, is_false;
  std::vector<std::string> fmts = kw_strings(L, a, "fmt", op, present, is_false);
  TIDE_CHECK(!is_false && (!present || !fmts.empty()), op, ": fmt must be a format string or a list of them");
  if (present) {  // a list of per-column formats is joined with the delimiter, as NumPy does
    std::string f;
    for (size_t k = 0; k < fmts.size(); ++k) f += (k ? o.delimiter : "") + fmts[k];
    o.fmt = f;
  }
  io::savetxt(path, x, o, op);
  return 0;
}

// "the table to save" or "the table at fc1", for messages about a table being saved.
std::string table_at(const io::KeyPath& path) {
  return path.empty() ? "the table to save" : "the table at " + io::key_path_text(path);
}

// A key that is neither a string nor an integer, for messages: 1.5, true, a table.
std::string key_repr(lua_State* L, int idx) {
  if (lua_type(L, idx) == LUA_TNUMBER) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.14g", lua_tonumber(L, idx));
    return buf;
  }
  if (lua_type(L, idx) == LUA_TBOOLEAN) return lua_toboolean(L, idx) ? "true" : "false";
  return std::string("of type ") + type_of(L, idx);
}

// Adds the tensors of the table at idx, reached through `path`, to out (depth first). `open`
// holds the tables on the way down, to refuse a table that contains itself.
void collect_tensors(lua_State* L, int idx, io::KeyPath& path, std::vector<const void*>& open,
                     std::vector<std::pair<io::KeyPath, Tensor>>& out, const char* op) {
  idx = lua_absindex(L, idx);
  const void* self = lua_topointer(L, idx);
  TIDE_CHECK(std::find(open.begin(), open.end(), self) == open.end(), op, ": ", table_at(path),
             " is the table itself or one holding it (a cycle)");
  TIDE_CHECK(open.size() < 200 && lua_checkstack(L, 4), op, ": tables nested more than 200 deep");
  open.push_back(self);
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      size_t n;
      const char* k = lua_tolstring(L, -2, &n);
      path.emplace_back(std::string(k, n));
    } else if (lua_isinteger(L, -2)) {
      path.emplace_back(int64_t(lua_tointeger(L, -2)));
    } else {
      TIDE_FAIL(op, ": the key ", key_repr(L, -2), " in ", table_at(path), " is not a string or an integer");
    }
    if (Tensor* t = tensor_slot(L, -1)) {
      TIDE_CHECK(t->defined(), op, ": the tensor at ", io::key_path_text(path), " was freed (x:free() or <close>)");
      out.emplace_back(path, *t);
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      collect_tensors(L, -1, path, open, out, op);
    } else {
      TIDE_FAIL(op, ": the value at ", io::key_path_text(path), " is a ", type_of(L, -1),
                ", not a tensor (a checkpoint holds tensors and tables of them; for a module, save "
                "model:state_dict())");
    }
    path.pop_back();
    lua_pop(L, 1);
  }
  open.pop_back();
}

// Pushes torch._key_order, the weak table {[t] = {key, ...}} that gives the key order of the
// tables made by module:state_dict() and of the OrderedDicts torch.load reads (a Lua table has
// none), or nothing when torch is not loaded; returns whether it pushed it.
bool push_key_orders(lua_State* L) {
  const int top = lua_gettop(L);
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  lua_pushstring(L, "torch");
  if (lua_rawget(L, -2) == LUA_TTABLE) {
    lua_pushstring(L, "_key_order");
    if (lua_rawget(L, -2) == LUA_TTABLE) {
      lua_replace(L, top + 1);
      lua_settop(L, top + 1);
      return true;
    }
  }
  lua_settop(L, top);
  return false;
}

// A Lua value as a PtValue for torch.save's PyTorch format. Tables become lists (keys 1..n,
// at least half of them present: the missing ones are None) or dicts (string, number and
// boolean keys; in the order torch._key_order records for the table, then sorted: numbers
// before strings); a table or tensor reached twice is one value (PyTorch loads one object). A
// tensor that requires grad and is a leaf (what nn.Parameter makes) is saved as a parameter.
class PtBuilder {
 public:
  PtBuilder(lua_State* L, const char* op) : L_(L), op_(op) {
    luaL_checkstack(L, 8, op);
    orders_ = push_key_orders(L) ? lua_gettop(L) : 0;
  }

  std::shared_ptr<io::PtValue> convert(int idx) {
    using K = io::PtValue::Kind;
    idx = lua_absindex(L_, idx);
    auto v = std::make_shared<io::PtValue>();
    switch (lua_type(L_, idx)) {
      case LUA_TNIL: return v;
      case LUA_TBOOLEAN:
        v->kind = K::Bool;
        v->boolean = lua_toboolean(L_, idx);
        return v;
      case LUA_TNUMBER:
        if (lua_isinteger(L_, idx)) {
          v->kind = K::Int;
          v->integer = lua_tointeger(L_, idx);
        } else {
          v->kind = K::Float;
          v->number = lua_tonumber(L_, idx);
        }
        return v;
      case LUA_TSTRING: {
        size_t n;
        const char* p = lua_tolstring(L_, idx, &n);
        v->kind = K::String;
        v->string.assign(p, n);
        return v;
      }
      case LUA_TTABLE:
      case LUA_TUSERDATA: break;
      default: fail("is a ", type_of(L_, idx), " (a checkpoint holds tensors, tables, numbers, strings and booleans)");
    }
    const void* self = lua_topointer(L_, idx);
    if (auto seen = done_.find(self); seen != done_.end()) return seen->second;
    if (lua_type(L_, idx) == LUA_TUSERDATA) {
      Tensor* t = tensor_slot(L_, idx);
      if (!t) fail("is a userdata that is not a tensor (a checkpoint holds tensors, tables, numbers, strings and booleans)");
      TIDE_CHECK(t->defined(), op_, ": the tensor at ", io::key_path_text(path_), " was freed (x:free() or <close>)");
      v->kind = K::Tensor;
      v->tensor = *t;
      v->requires_grad = autograd::requires_grad(*t);
      v->parameter = v->requires_grad && autograd::is_leaf(*t);
    } else {
      table(idx, *v);
    }
    done_.emplace(self, v);
    return v;
  }

 private:
  template <typename... A>
  [[noreturn]] void fail(const A&... args) {
    TIDE_FAIL(op_, ": ", path_.empty() ? "the value to save" : "the value at " + io::key_path_text(path_), " ", args...);
  }

  void table(int idx, io::PtValue& v) {
    using K = io::PtValue::Kind;
    if (lua_getmetatable(L_, idx)) {
      lua_pop(L_, 1);
      fail("is a table with a metatable, an object a checkpoint cannot hold (for a module, save model:state_dict())");
    }
    const void* self = lua_topointer(L_, idx);
    TIDE_CHECK(std::find(open_.begin(), open_.end(), self) == open_.end(), op_, ": ", table_at(path_),
               " is the table itself or one holding it (a cycle)");
    TIDE_CHECK(open_.size() < 200 && lua_checkstack(L_, 8), op_, ": tables nested more than 200 deep");
    open_.push_back(self);
    // The keys: a list when they are 1..n with at most half missing.
    int64_t count = 0, max_index = 0;
    bool all_positive = true;
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      ++count;
      if (lua_isinteger(L_, -1) && lua_tointeger(L_, -1) >= 1) max_index = std::max<int64_t>(max_index, lua_tointeger(L_, -1));
      else all_positive = false;
    }
    if (count > 0 && all_positive && max_index <= 2 * count) {
      v.kind = K::List;
      for (int64_t i = 1; i <= max_index; ++i) {
        lua_rawgeti(L_, idx, lua_Integer(i));
        path_.emplace_back(i);
        v.items.push_back(convert(-1));
        path_.pop_back();
        lua_pop(L_, 1);
      }
      open_.pop_back();
      return;
    }
    v.kind = K::Dict;
    // The recorded order first (keys still present), then the others sorted.
    lua_newtable(L_);  // the keys already taken
    const int taken = lua_gettop(L_);
    if (orders_) {
      lua_pushvalue(L_, idx);
      if (lua_rawget(L_, orders_) == LUA_TTABLE) {
        v.ordered = true;
        const int order = lua_gettop(L_);
        for (lua_Integer i = 1;; ++i) {
          const int base = lua_gettop(L_);
          if (lua_rawgeti(L_, order, i) == LUA_TNIL) {
            lua_settop(L_, base);
            break;
          }
          lua_pushvalue(L_, base + 1);
          const bool taken_already = lua_rawget(L_, taken) != LUA_TNIL;
          lua_pushvalue(L_, base + 1);
          const bool present = lua_rawget(L_, idx) != LUA_TNIL;
          if (present && !taken_already) entry(base + 1, taken, v);
          lua_settop(L_, base);
        }
      }
      lua_pop(L_, 1);
    }
    struct SortKey {
      int rank;  // numbers, strings, false, true
      double number;
      std::string text;
      int ref;  // the key's slot in `keys`
    };
    std::vector<SortKey> rest;
    lua_newtable(L_);
    const int keys = lua_gettop(L_);
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      lua_pushvalue(L_, -1);
      if (lua_rawget(L_, taken) != LUA_TNIL) {
        lua_pop(L_, 1);
        continue;
      }
      lua_pop(L_, 1);
      SortKey k{0, 0, "", int(rest.size() + 1)};
      switch (lua_type(L_, -1)) {
        case LUA_TNUMBER: k.number = lua_tonumber(L_, -1); break;
        case LUA_TSTRING: {
          size_t n;
          const char* p = lua_tolstring(L_, -1, &n);
          k.rank = 1;
          k.text.assign(p, n);
          break;
        }
        case LUA_TBOOLEAN: k.rank = 2 + lua_toboolean(L_, -1); break;
        default:
          TIDE_FAIL(op_, ": the key ", key_repr(L_, -1), " in ", table_at(path_),
                    " is not a string, a number or a boolean");
      }
      lua_pushvalue(L_, -1);
      lua_rawseti(L_, keys, k.ref);
      rest.push_back(std::move(k));
    }
    std::sort(rest.begin(), rest.end(), [](const SortKey& a, const SortKey& b) {
      if (a.rank != b.rank) return a.rank < b.rank;
      return a.rank == 0 ? a.number < b.number : a.text < b.text;
    });
    for (const SortKey& k : rest) {
      lua_rawgeti(L_, keys, k.ref);
      lua_pushvalue(L_, -1);
      lua_rawget(L_, idx);
      entry(lua_gettop(L_) - 1, taken, v);
      lua_pop(L_, 2);
    }
    lua_pop(L_, 2);
    open_.pop_back();
  }

  // Adds the entry whose key is at `key` and value at the top of the stack; marks the key taken.
  void entry(int key, int taken, io::PtValue& v) {
    using K = io::PtValue::Kind;
    auto k = std::make_shared<io::PtValue>();
    switch (lua_type(L_, key)) {
      case LUA_TSTRING: {
        size_t n;
        const char* p = lua_tolstring(L_, key, &n);
        k->kind = K::String;
        k->string.assign(p, n);
        path_.emplace_back(k->string);
        break;
      }
      case LUA_TNUMBER:
        if (lua_isinteger(L_, key)) {
          k->kind = K::Int;
          k->integer = lua_tointeger(L_, key);
          path_.emplace_back(k->integer);
        } else {
          k->kind = K::Float;
          k->number = lua_tonumber(L_, key);
          path_.emplace_back(key_repr(L_, key));
        }
        break;
      case LUA_TBOOLEAN:
        k->kind = K::Bool;
        k->boolean = lua_toboolean(L_, key);
        path_.emplace_back(std::string(k->boolean ? "true" : "false"));
        break;
      default:
        TIDE_FAIL(op_, ": the key ", key_repr(L_, key), " in ", table_at(path_), " is not a string, a number or a boolean");
    }
    v.entries.emplace_back(k, convert(-1));
    path_.pop_back();
    lua_pushvalue(L_, key);
    lua_pushboolean(L_, 1);
    lua_rawset(L_, taken);
  }

  lua_State* L_;
  const char* op_;
  int orders_ = 0;
  io::KeyPath path_;
  std::vector<const void*> open_;
  std::unordered_map<const void*, std::shared_ptr<io::PtValue>> done_;
};

// torch.save(obj, path): PyTorch's checkpoint format (see PtBuilder for what a Lua value
// becomes), or a safetensors file when path ends in ".safetensors" (a tensor or a nested
// table of tensors). torch.load tells the two apart by their contents.
int torch_save_fn(lua_State* L, Args& a) {
  const char* op = "torch.save";
  std::string path = path_arg(a, op, 2);
  a.consumed(1);
  if (!ends_with(path, ".safetensors")) {
    TIDE_CHECK(!lua_isnoneornil(L, 1), op, ": expected the value to save as argument 1, got ",
               lua_isnone(L, 1) ? "nothing" : "nil");
    const int top = lua_gettop(L);
    PtBuilder b(L, op);
    std::shared_ptr<io::PtValue> root = b.convert(1);
    lua_settop(L, top);
    io::save_pt(path, *root, op);
    return 0;
  }
  io::Checkpoint ck;
  if (Tensor* t = to_tensor(L, 1)) {
    ck.single = true;
    ck.entries.emplace_back(io::KeyPath{}, *t);
  } else {
    TIDE_CHECK(lua_type(L, 1) == LUA_TTABLE, op, ": expected a tensor or a table of tensors as argument 1, got ",
               lua_isnone(L, 1) ? "nothing" : type_of(L, 1));
    io::KeyPath root;
    std::vector<const void*> open;
    collect_tensors(L, 1, root, open, ck.entries, op);
  }
  io::save_safetensors(path, io::checkpoint_to_safetensors(ck, op), op);
  return 0;
}

void push_key(lua_State* L, const io::Key& k) {
  if (const int64_t* i = std::get_if<int64_t>(&k)) lua_pushinteger(L, *i);
  else lua_pushlstring(L, std::get<std::string>(k).data(), std::get<std::string>(k).size());
}

// Pushes the values of a PyTorch checkpoint: dicts and lists (and tuples) as tables (lists
// 1-based), None as nil (so a dict entry holding None is absent), tensors moved to `device` when
// given. A value the pickle refers to twice is one Lua value; an OrderedDict's key order is
// recorded in torch._key_order (so torch.save writes it back in that order). A structure that
// contains itself, or nests deeper than 200 levels, is an error.
class PtPusher {
 public:
  PtPusher(lua_State* L, const std::optional<Device>& device, std::string where)
      : L_(L), device_(device), where_(std::move(where)) {
    luaL_checkstack(L, 8, "torch.load");
    lua_newtable(L);  // PtValue address -> the Lua value made for it
    cache_ = lua_gettop(L);
    orders_ = push_key_orders(L) ? lua_gettop(L) : 0;
  }

  void push(const io::PtValue& v) {
    using K = io::PtValue::Kind;
    switch (v.kind) {
      case K::None: lua_pushnil(L_); return;
      case K::Bool: lua_pushboolean(L_, v.boolean); return;
      case K::Int: lua_pushinteger(L_, v.integer); return;
      case K::Float: lua_pushnumber(L_, v.number); return;
      case K::String: lua_pushlstring(L_, v.string.data(), v.string.size()); return;
      case K::Tensor:
      case K::List:
      case K::Dict: break;
      default: TIDE_FAIL(where_, ": cannot read the pickle: it holds a class or storage where data belongs");
    }
    if (lua_rawgetp(L_, cache_, &v) != LUA_TNIL) return;
    lua_pop(L_, 1);
    if (v.kind == K::Tensor) {
      Tensor t = device_ ? v.tensor.to_device(*device_) : v.tensor;
      if (v.requires_grad && is_floating(t.dtype())) autograd::set_requires_grad(t, true, "torch.load");
      push_tensor(L_, std::move(t));
    } else {
      TIDE_CHECK(open_.size() < 200, where_, ": the checkpoint nests deeper than 200 levels");
      TIDE_CHECK(open_.insert(&v).second, where_, ": the checkpoint holds a list or dict that contains itself");
      luaL_checkstack(L_, 6, "torch.load");
      lua_createtable(L_, int(std::min<size_t>(v.items.size(), 1 << 20)), 0);
      for (size_t i = 0; i < v.items.size(); ++i) {
        push(*v.items[i]);
        lua_rawseti(L_, -2, lua_Integer(i + 1));
      }
      const bool record = v.ordered && orders_;
      if (record) lua_createtable(L_, int(std::min<size_t>(v.entries.size(), 1 << 20)), 0);
      lua_Integer n = 0;
      for (const auto& [k, val] : v.entries) {
        push(*k);
        if (lua_type(L_, -1) == LUA_TNUMBER && std::isnan(lua_tonumber(L_, -1))) TIDE_FAIL(where_, ": a dict key is NaN");
        if (record) {
          lua_pushvalue(L_, -1);
          lua_rawseti(L_, -3, ++n);
        }
        push(*val);
        lua_rawset(L_, record ? -4 : -3);
      }
      if (record) {  // orders[t] = keys
        lua_pushvalue(L_, -2);
        lua_insert(L_, -2);
        lua_rawset(L_, orders_);
      }
      open_.erase(&v);
    }
    lua_pushvalue(L_, -1);
    lua_rawsetp(L_, cache_, &v);
  }

 private:
  lua_State* L_;
  std::optional<Device> device_;
  std::string where_;
  int cache_ = 0, orders_ = 0;
  std::unordered_set<const io::PtValue*> open_;
};

// torch.load of a PyTorch checkpoint (.pt/.pth, the zip format).
void push_pt_file(lua_State* L, const std::string& path, const std::optional<Device>& device, const char* op) {
  std::shared_ptr<io::PtValue> root = io::load_pt(path, op);
  try {
    const int top = lua_gettop(L);
    PtPusher pusher(L, device, io::where_of(op, path));
    pusher.push(*root);
    lua_replace(L, top + 1);
    lua_settop(L, top + 1);
  } catch (...) {
    io::release_pt(root);
    throw;
  }
  io::release_pt(root);
}

// torch.load(path[, {map_location=}]): a PyTorch checkpoint (.pt, .pth: tensors, dicts, lists,
// numbers, strings; see push_pt) or a safetensors file: the tensor, the nested table, or (a
// file written elsewhere) the flat table name -> tensor; map_location ("cpu", "cuda",
// "cuda:N") moves every tensor there.
int torch_load_fn(lua_State* L, Args& a) {
  const char* op = "torch.load";
  std::string path = path_arg(a, op);
  const std::optional<Device> device = a.kw_device("map_location");
  if (device) ops::check_creation_device(op, *device);
  if (io::looks_like_pt(path, op)) {
    push_pt_file(L, path, device, op);
    return 1;
  }
  io::Checkpoint ck = io::checkpoint_from_safetensors(io::load_safetensors(path, op), std::string(op) + ": " + path);
  if (device)
    for (auto& entry : ck.entries) entry.second = entry.second.to_device(*device);
  if (ck.single) {
    push_tensor(L, std::move(ck.entries[0].second));
    return 1;
  }
  lua_newtable(L);
  const int root = lua_gettop(L);
  for (auto& [keys, t] : ck.entries) {
    lua_pushvalue(L, root);
    for (size_t k = 0; k + 1 < keys.size(); ++k) {  // the tables on the way, made when missing
      push_key(L, keys[k]);
      if (lua_rawget(L, -2) != LUA_TTABLE) {
        lua_pop(L, 1);
        lua_newtable(L);
        push_key(L, keys[k]);
        lua_pushvalue(L, -2);
        lua_rawset(L, -4);
      }
      lua_remove(L, -2);
    }
    push_key(L, keys.back());
    push_tensor(L, std::move(t));
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  return 1;
}

const Binding kIoBindings[] = {
    {"save", torch_save_fn, TORCH,
     "save(obj, path): writes obj in PyTorch's checkpoint format (what PyTorch's torch.save writes and "
     "torch.load reads), or as safetensors when path ends in \".safetensors\". PyTorch's format: tensors, "
     "tables (lists when the keys are 1..n, else dicts: state_dict() tables as OrderedDicts in the module's "
     "order), numbers, strings and booleans; tensors sharing a storage stay views of one storage; a leaf "
     "tensor that requires grad is an nn.Parameter. safetensors: a tensor or a (nested) table of tensors, "
     "nested keys joined with dots as in a PyTorch state dict ({fc1 = {weight = w}} -> \"fc1.weight\"). "
     "Device tensors are written from a host copy; the file is written aside and renamed over path when "
     "complete."},
    {"load", torch_load_fn, TORCH,
     "load(path[, {map_location=device}]) -> Tensor | table: reads a safetensors file or a PyTorch "
     "checkpoint (.pt/.pth from torch.save, PyTorch >= 1.6), onto `device` when given (e.g. \"cuda\"). "
     "safetensors: a tensor saved alone comes back as a tensor and a table as the same nested table; a "
     "file written elsewhere gives a flat table name -> tensor (what load_state_dict takes). PyTorch "
     "checkpoints: tensors, dicts (tables), lists and tuples (1-based tables), numbers, strings, "
     "booleans; None is nil; anything else (a pickled class) is refused, and no code is run."},
    {"save", save_fn, NUMPY,
     "save(path, x): writes x to a NumPy .npy file (\".npy\" is added when missing). bfloat16 has no "
     "NumPy dtype: convert with x:float() first."},
    {"load", load_fn, NUMPY,
     "load(path[, {mmap_mode=}]) -> Tensor | table: reads a .npy file (a tensor) or a .npz archive (a table "
     "name -> tensor), as written by NumPy or tide. mmap_mode maps a .npy file instead of reading it: \"r\" "
     "read-only (writes are errors), \"c\" copy-on-write (writes stay in memory), \"r+\" writes go to the "
     "file; \"w+\" is refused."},
    {"tofile", tofile_fn, METHOD,
     "x:tofile(path[, {sep=\"\", format=}]): writes x's values in row-major order: raw bytes when sep is "
     "\"\" (read back with np.fromfile and the dtype), else as text joined by sep, each value written with "
     "format (one printf conversion like \"%.3f\") or as Python's str() would."},
    {"fromfile", fromfile_fn, NUMPY,
     "fromfile(path[, {dtype=\"float64\", count=-1, sep=\"\", offset=0}]) -> Tensor: a 1-D tensor of count "
     "items (-1: all) read as raw bytes from byte offset (sep \"\") or as text numbers separated by sep. "
     "Unlike NumPy, a short file, leftover bytes or unreadable text is an error."},
    {"savez", savez_fn, NUMPY,
     "savez(path, [x, y, ...], [{name = x, ...}]): writes an uncompressed .npz archive; unnamed arrays "
     "are arr_0, arr_1, ... (\".npz\" is added when missing)."},
    {"savez_compressed", savez_compressed_fn, NUMPY,
     "savez_compressed(path, [x, ...], [{name = x, ...}]): as savez, with deflate compression."},
    {"loadtxt", loadtxt_fn, NUMPY,
     "loadtxt(path[, {delimiter=, comments=\"#\", skiprows=0, usecols=, max_rows=, dtype=\"float64\", "
     "ndmin=0, unpack=false}]) -> Tensor: reads a text table (plain or .gz). usecols are 1-based; "
     "one row or one column gives a 1-D tensor unless ndmin=2."},
    {"genfromtxt", genfromtxt_fn, NUMPY,
     "genfromtxt(path[, {delimiter=, comments=\"#\", skip_header=0, skip_footer=0, usecols=, max_rows=, "
     "dtype=\"float64\", names=false, missing_values=, filling_values=}]) -> Tensor | table: loadtxt that "
     "accepts missing values: an empty field or one of missing_values (a string or a list) becomes "
     "filling_values (NaN for floats, -1 for integers); any other bad field is an error. names=true reads "
     "the column names from the first line and returns a table name -> 1-D column whose entries 1..n are "
     "the names in order. usecols are 1-based; reads .gz too."},
    {"savetxt", savetxt_fn, NUMPY,
     "savetxt(path, x[, {fmt=\"%.18e\", delimiter=\" \", newline=\"\\n\", header=, footer=, "
     "comments=\"# \"}]): writes a 1-D or 2-D tensor as text (gzip-compressed when path ends in .gz)."},
};

}  // namespace

void register_io_bindings() { register_bindings(kIoBindings, sizeof(kIoBindings) / sizeof(kIoBindings[0])); }

}  // namespace tide::lua
