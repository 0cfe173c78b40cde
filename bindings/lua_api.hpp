// The binding toolkit: the only header that sees both Lua and the engine.
//
// Rules every binding follows:
// - A binding is `int fn(lua_State*, Args&)`, registered in a Binding table; the registry
//   wraps it so that C++ exceptions (tide::Error) become Lua errors only after every C++
//   object of the call is destroyed. Bindings never call luaL_check*/luaL_error/lua_error
//   themselves (a longjmp across C++ frames would leak): they use Args and throw.
// - Error messages start with the op's name (Args::op) and name the offending values.
// - Dims and indices given by scripts are 1-based (negative counts from the end); Args::dim
//   converts to the engine's 0-based dims.
#pragma once
#include <lua.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../tensor/ops/elementwise.hpp"
#include "../tensor/tensor.hpp"

namespace tide::lua {

constexpr const char* kTensorMeta = "tide.Tensor";

// Pushes a tensor as a new userdata (and tells the GC about its bytes).
void push_tensor(lua_State* L, Tensor t);
// The tensor at idx, or nullptr if the value is not a tensor. Throws if it was freed.
Tensor* to_tensor(lua_State* L, int idx);

// Devices in Lua (torch.device, x.device): one interned userdata per device name ("cpu",
// "cuda", "cuda:N") with the fields type and index, tostring and concatenation; interning
// makes x.device == y.device compare devices. push_device_name takes a checked name.
void push_device(lua_State* L, const Device& d);
void push_device_name(lua_State* L, const std::string& name);
// The device name at idx if it holds a device object or a string (true), else false.
bool device_name_at(lua_State* L, int idx, std::string& out);
// The Tensor inside a tensor userdata (possibly freed: check defined()), or nullptr.
Tensor* tensor_slot(lua_State* L, int idx);
// Records the Tensor metatable at the top of the stack for fast identity checks.
void remember_tensor_metatable(lua_State* L);
// Reports tensor bytes to Lua's garbage collector (called by push_tensor).
void gc_account(lua_State* L, size_t nbytes, bool on_device = false);
// A Lua value (number, boolean, nested table of them, or tensor) as a tensor; used by
// torch.tensor / np.array and wherever an op accepts "array-like" input. Without `dtype`,
// Lua integers give int64, booleans bool, and any float gives `float_default`.
Tensor tensor_from_lua(lua_State* L, int idx, std::optional<DType> dtype, DType float_default,
                       const char* op);
// Pushes x:tolist() / x:item() values.
void push_tolist(lua_State* L, const Tensor& t);
void push_scalar(lua_State* L, const Scalar& s);
// The integer / number at a stack index: a Lua number (an integral float for integers) or a
// 0-dim tensor (of an integer or bool dtype for integers), as NumPy and PyTorch accept them.
bool integral_value(lua_State* L, int idx, int64_t& out);
bool number_value(lua_State* L, int idx, double& out);

// Which module a function was reached through: it decides NumPy spellings and defaults
// (np: float64 default, `axis`, reductions return values only).
enum class Style : uint8_t { Torch, Numpy };

// The arguments a binding takes, parsed once from its doc string ("sum(x[, dim][, keepdim][,
// {dim=, axis=, keepdim=, dtype=, out=}])"), so that help() shows exactly what the argument
// reader accepts:
// - keywords: every `name=` inside braces. A braces group of keywords holding "..."
//   (np.savez's `{name = x, ...}`) takes any keyword; the binding then reads the table itself.
// - positionals: the parameters before the keyword table, in order, optional ones ("[, dim]",
//   nested "[, a[, b]]") included; a braces group without `=` is one positional (a table:
//   index_put's `{idx1, ...}`). A method documented as "x:name(...)" has self ("x") first, as
//   a method call passes it as argument 1. A last parameter written "sizes..." or "..." takes
//   every later argument too (varargs).
struct ArgSpec {
  std::vector<std::string> keywords;
  bool open = false;
  std::vector<std::string> positionals;
  bool varargs = false;
  // The binding writes into an argument: an in-place op (its name ends in `_`) or one that
  // takes an `out` (keyword or positional; NumPy spelling passes it after the operands).
  // Args::refuse_extra_positionals runs before it, so that a call with an argument too many
  // fails before writing.
  bool writes_arguments = false;
  int find(std::string_view name) const;  // the index of keyword name, or -1
};
ArgSpec parse_arg_spec(const char* doc);

// Arguments of one call: positional arguments 1..count() and an optional trailing keyword
// table (a table whose [1] is nil and that has at least one key).
//
// The reader also checks that the call means what it says. With a ArgSpec (every call
// made through the registry), a keyword the binding does not take is an error before the
// binding runs, suggesting the closest valid name; and after it ran, finish() rejects a
// keyword that was given but never read and a positional argument beyond the last one the
// binding looked at. So no argument is ever silently ignored, with no check per op.
class Args {
 public:
  Args(lua_State* L, const char* op, Style style, const ArgSpec* spec = nullptr);
  lua_State* L;
  const char* op;
  Style style;
  // NumPy semantics for this call (docs/translation.md, "NumPy semantics"): NumPy spelling,
  // or a NumPy array (a tensor flagged numpy) among the positional arguments or in a list
  // that is one. Spelling (keyword names, return forms) follows `style`; dtypes, defaults
  // and accepted array-likes follow this.
  bool numpy = false;
  // Whether the binding takes complex tensors and numbers (complex_capable in
  // bindings/complex_value.hpp; the registry sets it). Without, the positional readers
  // (tensor, tensor_like, tensor_or_scalar, scalar) refuse them: "<op>: complex64 is not
  // supported", so no op computes on a complex operand cast to real.
  bool complex_ok = true;

  // The number of positional arguments; a binding that asks takes responsibility for all.
  int count() const {
    seen_ = ~uint64_t(0);
    return npos_;
  }
  bool has(int i) const;  // positional i present and not nil
  int lua_type_at(int i) const;
  // Marks positional i as read, for a binding that reads it from the stack itself.
  void consumed(int i) const { touch(i); }
  bool is_tensor(int i) const;
  bool is_number(int i) const;
  bool is_table(int i) const;   // a plain table (not a tensor)
  bool is_string(int i) const;

  // Error if not a tensor; with NumPy semantics a Lua list is converted as np.array does
  // (the array then replaces the list on the stack).
  Tensor& tensor(int i) const;
  Tensor tensor_like(int i) const;               // tensor, number or nested table
  Scalar scalar(int i) const;                    // number or boolean
  TensorOrScalar tensor_or_scalar(int i) const;  // tensor or number/boolean (or list, as tensor())
  int64_t integer(int i) const;
  double number(int i) const;
  bool boolean(int i) const;
  std::string string(int i) const;
  DType dtype(int i) const;                      // "float32" or a torch.float32 constant
  // A shape given as varargs from position i (torch.zeros(2, 3)) or as one table at i
  // (torch.zeros{2, 3}); sizes must be >= 0 (or -1 where allow_infer, for view/reshape).
  Dims shape_from(int i, bool allow_infer = false) const;
  // A list of integers in a table at i, or varargs from i (permute, dims lists).
  std::vector<int64_t> int_list_from(int i) const;
  // A user dim (1-based, negative from the end) checked against ndim; returns 0-based.
  int dim(int i, int ndim) const;
  int dim_value(int64_t d, int ndim) const;

  // Keyword arguments (nil when absent).
  bool has_kw(const char* name) const;
  std::optional<int64_t> kw_integer(const char* name) const;
  std::optional<double> kw_number(const char* name) const;
  std::optional<bool> kw_bool(const char* name) const;
  std::optional<std::string> kw_string(const char* name) const;
  std::optional<DType> kw_dtype(const char* name = "dtype") const;
  std::optional<Device> kw_device(const char* name = "device") const;
  std::optional<Scalar> kw_scalar(const char* name) const;
  std::optional<TensorOrScalar> kw_tensor_or_scalar(const char* name) const;
  Tensor* kw_tensor(const char* name) const;  // nullptr when absent; error if not a tensor
  // Reduction dims from `dim` (torch) or `axis` (numpy) keyword or positional i:
  // a number or a table of numbers; empty = all dims. Returns 0-based, sorted, unique.
  std::vector<int> dims_arg(int i, int ndim) const;
  // The same for the value at absolute stack index idx, in the order given (matrix norms).
  std::vector<int> dims_at(int idx, int ndim) const;
  bool keepdim() const;  // `keepdim` or `keepdims`
  // The `out` keyword (NumPy's out=): nullptr when absent.
  Tensor* out() const { return kw_tensor("out"); }
  // Default float dtype for creation in this style (np: float64; torch: the default).
  DType default_float() const;

  [[noreturn]] void error(const std::string& msg) const;  // throws "<op>: msg"
  // Pushes kw[name] (nil when absent) and returns its Lua type; for bindings that read a
  // keyword's value themselves (a table of dims, a tensor or a list).
  int push_kw(const char* name) const;
  // The keyword table's stack index (0 if none) for a binding whose keywords are data (an
  // open ArgSpec: np.savez's named arrays); it reads every key itself.
  int kw_table() const { return kw_; }
  // The checks after the binding ran (see the class comment); the registry calls it with
  // the binding's doc, whose signature the message about an extra argument quotes.
  void finish(const char* doc) const;
  // Before a binding that writes into an argument runs (ArgSpec::writes_arguments): a
  // positional argument beyond those its doc declares is refused with finish's message.
  void refuse_extra_positionals(const char* doc) const;

 private:
  void touch(int i) const {
    if (i >= 0 && i < 64) seen_ |= uint64_t(1) << i;
  }
  void touch_from(int i) const {  // i and every later positional (varargs)
    if (i >= 0 && i < 64) seen_ |= ~uint64_t(0) << i;
  }
  void mark_kw(const char* name) const;
  const Tensor& refuse_complex(const Tensor& t) const {
    if (!complex_ok && is_complex(t.dtype())) [[unlikely]]
      fail_complex(t);
    return t;
  }
  [[noreturn]] void fail_complex(const Tensor& t) const;
  Tensor* list_as_array(int i) const;
  Tensor* slot(int i) const;  // tensor_slot of positional i, from the constructor's scan when made

  // The constructor's scan for NumPy arrays keeps what it found for the first positionals,
  // so that reading them costs no second metatable check.
  static constexpr int kScanned = 4;
  mutable Tensor* scan_[kScanned] = {};
  int nscanned_ = 0;
  void record_coverage() const;
  void check_keyword_names();
  [[noreturn]] void fail_unexpected(int i, const char* doc) const;

  int npos_ = 0;
  int kw_ = 0;  // absolute stack index of the keyword table, 0 if none
  const ArgSpec* spec_ = nullptr;
  mutable uint64_t seen_ = 0;      // bit i: the binding looked at positional i
  mutable uint64_t kw_read_ = 0;   // bit i: spec_->keywords[i] was read
  uint64_t kw_given_ = 0;          // bit i: spec_->keywords[i] is in the keyword table
};

// The semantics of one call, opened by the registry around every binding and by the
// metamethods: NumPy or PyTorch promotion and default float (NumpySemanticsScope), and, with
// NumPy semantics, every tensor the call pushes is flagged numpy, except a non-NumPy tensor
// it was given and returns as it is (out=, np.asarray(t)), which keeps its kind.
class CallSemantics {
 public:
  explicit CallSemantics(const Args& a);
  ~CallSemantics();
  CallSemantics(const CallSemantics&) = delete;
  CallSemantics& operator=(const CallSemantics&) = delete;
  // Whether push_tensor flags `impl` (a NumPy call is running and impl is not a plain input).
  static bool flags(const TensorImpl* impl);

 private:
  // Opened only when the semantics change: a torch call outside any NumPy call (the common
  // case) touches no thread-local but the call pointer, whose address slot_ keeps.
  std::optional<NumpySemanticsScope> scope_;
  CallSemantics** slot_;
  CallSemantics* saved_;
  bool numpy_;
  int nplain_ = 0;
  const TensorImpl* plain_[8];  // the call's non-NumPy tensor inputs (the first 8)
};

using BindFn = int (*)(lua_State* L, Args& a);

// Where a function is registered.
enum Where : unsigned {
  METHOD = 1,     // x:name(...)
  TORCH = 2,      // torch.name(...)
  NUMPY = 4,      // np.name(...)  (under np_name if given)
  OPERATOR = 8,   // also used for a metamethod (set by the tensor metatable code)
};

struct Binding {
  const char* name;
  BindFn fn;
  unsigned where;
  const char* doc;               // "sum(x[, dim][, {keepdim=}]) -> Tensor: ..." for help()
  const char* np_name = nullptr;  // NumPy's spelling when it differs (clip for clamp)
};

// Each family of ops adds its bindings here (called once per lua_State at module open).
void register_bindings(const Binding* table, size_t n);
// Every registered binding (for the modules, the metatable and help()).
const std::vector<const Binding*>& all_bindings();
// The binding registered under this name (nullptr if none).
const Binding* find_binding(std::string_view name);

// Wraps a binding as a lua_CFunction with the style in upvalue 1 and the Binding* in
// upvalue 2. Used by the module builders.
void push_binding(lua_State* L, const Binding& b, Style style);
// The arguments a binding takes (parsed from its doc once).
const ArgSpec& binding_spec(const Binding& b);
// Pushes a binding as a unary operator's metamethod: Lua calls __unm and __bnot with the
// operand twice, and the binding gets it once.
void push_unary_metamethod(lua_State* L, const Binding& b);
// The innermost caller outside tide's own Lua modules, as "source:line" ("?" if none): where
// in the user's script an error or a torch.compile break comes from.
std::string script_line(lua_State* L);
// While alive on a thread that torch.compile records on: `op` names the recorded steps, and
// a break they cause names the script line (for bindings, and for metamethods such as
// indexing that are not called through one).
class CapturedOp {
 public:
  CapturedOp(lua_State* L, const char* op);
  ~CapturedOp();
  CapturedOp(const CapturedOp&) = delete;
  CapturedOp& operator=(const CapturedOp&) = delete;

 private:
  lua_State* L_;
  bool active_, was_broken_ = false;
};
// The binding behind the function at idx when push_binding made it, else nullptr (help()).
const Binding* binding_of(lua_State* L, int idx);

// While alive, Lua functions that the autograd engine calls back (tensor hooks, the backward
// of torch.autograd.Function) run on L: the bindings that run backward open one.
class LuaCallbackScope {
 public:
  explicit LuaCallbackScope(lua_State* L);
  ~LuaCallbackScope();
  LuaCallbackScope(const LuaCallbackScope&) = delete;
  LuaCallbackScope& operator=(const LuaCallbackScope&) = delete;

 private:
  lua_State* prev_;
};

// The per-family registration functions (one per bindings/*.cpp file).
void register_elementwise_bindings();
void register_creation_bindings();
void register_random_bindings();  // np.random (bind_random.cpp)
void register_reduction_bindings();
void register_linalg_bindings();
void register_shape_bindings();
void register_index_bindings();
void register_io_bindings();
void register_optim_bindings();
void register_autograd_bindings();
void register_function_bindings();  // tensor hooks, torch.autograd.Function
void register_nn_bindings();
void register_tensor_bindings();  // conversions, properties, misc methods
void register_multiprocessing_bindings();
void register_distributed_bindings();
void register_fft_bindings();     // np.fft / torch.fft (bind_fft.cpp)

}  // namespace tide::lua
