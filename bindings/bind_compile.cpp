// torch.compile's C++ half (the policy is Lua: bindings/lua/torch_compile.lua).
//
// A recording (tensor/capture/) sees the engine's work; this file adds what only the Lua side
// can see, so that a replay, which runs no Lua, is exactly the call it stands for:
// - the Lua state the function reaches: its upvalues, the upvalues of the functions they hold,
//   the tables they hold with their metatables, and the tensors among them, walked in a
//   fixed order into a snapshot. Library tables and functions (tide's own modules, passed in
//   as a set) are compared by identity only. A replay first walks the state again and
//   compares (the guard); a recording whose call changed that state (a counter, a cache, a
//   new optimizer state entry) cannot be replayed.
// - C functions called while recording that have effects a replay would not repeat (print,
//   io, os, math.random): a call hook breaks the recording on them.
// - the engine modes an op depends on (default dtype, grad mode, threads, autocast, the
//   generator), the arguments' kinds, values and tensor layouts.
// What a recording did to the reached tensors' gradients (a new .grad from backward) and
// versions is applied again after each replay.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "../tensor/autograd/autograd.hpp"
#include "../tensor/autograd/functions.hpp"
#include "../tensor/capture/capture.hpp"
#include "../tensor/ops/elementwise.hpp"
#include "../tensor/parallel.hpp"
#include "../tensor/random.hpp"
#include "autocast.hpp"
#include "lua_api.hpp"
#include "lua_globals.hpp"

namespace tide::lua {

namespace {

constexpr const char* kRecordingMeta = "tide.compile.recording";
constexpr const char* kVariantMeta = "tide.compile.variant";
constexpr const char* kSnapshotMeta = "tide.compile.snapshot";
// A snapshot stops (and the function is not compiled) beyond this many values: the walk runs
// on every call, so a function reaching a large Lua data set is better left eager.
constexpr size_t kMaxSnapshotValues = 20000;
// Global names that hand a function the whole global table (or code that reads any global):
// a function using one has its _ENV walked whole. (`_G` is walked whole anyway, as a table
// value; the library tables that hold it, such as package.loaded, are compared by identity.)
const std::string kGlobalEscapes[] = {"_G", "load", "loadstring", "require", "dofile", "loadfile", "package"};
// Tables and functions nested deeper than this end the walk the same way (the walk recurses).
constexpr int kMaxSnapshotDepth = 100;

// ---- the engine modes

struct Modes {
  DType default_float;
  bool grad_enabled;
  int threads;
  bool autocast;
  const Generator* generator;
  bool operator==(const Modes&) const = default;
};

Modes current_modes() {
  return {script_default_float_dtype(), autograd::grad_enabled(), get_num_threads(), autocast::active(),
          &default_generator()};
}

// ---- snapshots of the reached Lua state

bool has_metatable(lua_State* L, int idx) {
  if (!lua_getmetatable(L, idx)) return false;
  lua_pop(L, 1);
  return true;
}

struct TensorState {
  std::shared_ptr<TensorImpl> impl;  // kept: identity by address stays meaningful
  const void* userdata = nullptr;    // the Lua value holding it (kept by the snapshot)
  const Storage* storage = nullptr;
  Dims sizes, strides;
  int64_t offset = 0;
  DType dtype = DType::Float32;
  bool numpy = false;  // NumPy semantics (an np array): ops pick other dtypes and rules
  bool requires_grad = false, has_grad_fn = false;
  std::shared_ptr<TensorImpl> grad;
  uint32_t version = 0;

  static TensorState of(const Tensor& t) {
    TensorState s;
    s.impl = t.impl_ptr();
    s.storage = t.storage().get();
    s.sizes = t.sizes(), s.strides = t.strides(), s.offset = t.offset(), s.dtype = t.dtype();
    s.numpy = t.impl()->numpy;
    if (const auto& m = t.impl()->autograd) {
      s.requires_grad = m->requires_grad;
      s.has_grad_fn = m->grad_fn != nullptr;
      s.grad = m->grad.impl_ptr();
    }
    s.version = t.storage()->version();
    return s;
  }
  // Whether the live tensor t is the one recorded with the same layout: everything but the
  // gradient and the version.
  bool same_layout_as(const TensorImpl& t) const {
    const AutogradMeta* m = t.autograd.get();
    return &t == impl.get() && t.storage.get() == storage && t.offset == offset && t.dtype == dtype &&
           t.numpy == numpy && t.sizes == sizes && t.strides == strides && (m && m->requires_grad) == requires_grad &&
           (m && m->grad_fn) == has_grad_fn;
  }
};

// Env: a function's _ENV table walked at the names the function uses (its next value is an
// Int, the index of those names in Snapshot::env_names).
enum class V : uint8_t { Nil, False, True, Int, Float, String, Table, End, Function, CFunction, Userdata, Light, Thread, Tensor, Seen, Library, Env };

struct Value {
  V kind;
  uint64_t bits = 0;  // integer, float bits, address, or index of a tensor / first visit
  bool operator==(const Value&) const = default;
};

struct Snapshot {
  std::vector<Value> values;
  std::vector<TensorState> tensors;
  std::vector<std::vector<std::string>> env_names;  // see V::Env
  int depth = 0;         // the deepest nesting of tables and functions
  int keep = LUA_NOREF;  // registry: a table holding the reached objects alive
  bool too_large = false;
};

// Walks the state a function reaches into a snapshot (at a recording). Guard below compares
// the state with it at each call.
class Walker {
 public:
  // Pushes the table that keeps the reached objects alive, which finish() moves into the
  // registry.
  Walker(lua_State* L, int libset, Snapshot* out) : L_(L), libset_(libset), out_(out) {
    lua_newtable(L_);
    keep_table_ = lua_gettop(L_);
  }

  // Walks the upvalues of the function at idx (absolute). Returns false when the walk ends
  // early (too large or too deep).
  bool walk_function_upvalues(int idx) {
    for (int i = 1; const char* name = lua_getupvalue(L_, idx, i); ++i) {
      const int top = lua_gettop(L_);
      bool ok = std::strcmp(name, "_ENV") == 0 && lua_istable(L_, top) ? walk_env(idx, i, top) : walk(top);
      lua_pop(L_, 1);
      if (!ok) return false;
    }
    return emit({V::End});
  }

 private:
  bool emit(Value v) {
    if (out_->values.size() >= kMaxSnapshotValues) {
      out_->too_large = true;
      return false;
    }
    out_->values.push_back(v);
    return true;
  }

  bool in_library(int idx) {
    if (libset_ == 0) return false;
    lua_pushvalue(L_, idx);
    bool lib = lua_rawget(L_, libset_) != LUA_TNIL;
    lua_pop(L_, 1);
    return lib;
  }

  // Whether the Lua function at idx is one of tide's own modules' (chunks "=[tide <module>]",
  // reached through a class's metatable rather than a module table): a library function,
  // added to the set so that later walks find it there.
  bool tide_chunk(int idx) {
    if (libset_ == 0) return false;
    lua_Debug ar;
    lua_pushvalue(L_, idx);
    if (!lua_getinfo(L_, ">S", &ar) || std::strncmp(ar.source, "=[tide ", 7) != 0) return false;
    lua_pushvalue(L_, idx);
    lua_pushboolean(L_, 1);
    lua_rawset(L_, libset_);
    return true;
  }

  // An object seen before in this walk: Seen with the index of its first visit.
  bool seen_before(const void* p, Value* v) {
    auto [it, first] = seen_.emplace(p, out_->values.size());
    if (first) return false;
    *v = {V::Seen, it->second};
    return true;
  }

  void keep(int idx) {
    lua_pushvalue(L_, idx);
    lua_rawseti(L_, keep_table_, ++keep_n_);
  }

  bool walk_tensor(const Tensor& t, const void* userdata) {
    out_->tensors.push_back(TensorState::of(t));
    out_->tensors.back().userdata = userdata;
    return emit({V::Tensor, out_->tensors.size() - 1});
  }

  // Descends into a table or a function's upvalues: false past the depth limit (or out of
  // Lua stack), which ends the walk.
  bool descend() {
    if (depth_ >= kMaxSnapshotDepth || !lua_checkstack(L_, 8)) {
      out_->too_large = true;
      return false;
    }
    out_->depth = std::max(out_->depth, ++depth_);
    return true;
  }

  // Walks the value at idx (absolute).
  bool walk(int idx) {
    switch (lua_type(L_, idx)) {
      case LUA_TNIL: return emit({V::Nil});
      case LUA_TBOOLEAN: return emit({lua_toboolean(L_, idx) ? V::True : V::False});
      case LUA_TNUMBER:
        if (lua_isinteger(L_, idx)) return emit({V::Int, uint64_t(lua_tointeger(L_, idx))});
        else {
          double d = lua_tonumber(L_, idx);
          uint64_t bits;
          std::memcpy(&bits, &d, sizeof bits);
          return emit({V::Float, bits});
        }
      case LUA_TSTRING: keep(idx); return emit({V::String, uint64_t(uintptr_t(lua_topointer(L_, idx)))});
      case LUA_TLIGHTUSERDATA: return emit({V::Light, uint64_t(uintptr_t(lua_topointer(L_, idx)))});
      case LUA_TTHREAD: keep(idx); return emit({V::Thread, uint64_t(uintptr_t(lua_topointer(L_, idx)))});
      case LUA_TUSERDATA: {
        keep(idx);
        if (Tensor* t = tensor_slot(L_, idx); t && t->defined()) return walk_tensor(*t, t);
        return emit({V::Userdata, uint64_t(uintptr_t(lua_topointer(L_, idx)))});
      }
      case LUA_TFUNCTION: {
        const void* p = lua_topointer(L_, idx);
        Value v;
        if (seen_before(p, &v)) return emit(v);
        keep(idx);
        if (lua_iscfunction(L_, idx)) return emit({V::CFunction, uint64_t(uintptr_t(p))});
        if (in_library(idx) || tide_chunk(idx)) return emit({V::Library, uint64_t(uintptr_t(p))});
        if (!emit({V::Function, uint64_t(uintptr_t(p))}) || !descend()) return false;
        const bool ok = walk_function_upvalues(idx);
        --depth_;
        return ok;
      }
      case LUA_TTABLE: {
        const void* p = lua_topointer(L_, idx);
        Value v;
        if (seen_before(p, &v)) return emit(v);
        keep(idx);
        if (in_library(idx)) return emit({V::Library, uint64_t(uintptr_t(p))});
        if (!emit({V::Table, uint64_t(uintptr_t(p))}) || !descend()) return false;
        const bool ok = walk_table_contents(idx);
        --depth_;
        return ok;
      }
      default: return emit({V::Nil});
    }
  }

  // The global table a function reaches as its upvalue `upvalue` (at env): only the fields
  // the function names, when its bytecode shows it uses no others (lua_globals.hpp), none of
  // those names is a way to the whole table (kGlobalEscapes), and the table has no metatable
  // (whose __index could read any field); else the whole table. Such a partial visit does
  // not count as a visit (seen_before): a later full one walks it all.
  bool walk_env(int fn, int upvalue, int env) {
    const void* p = lua_topointer(L_, env);
    if (seen_.count(p) || in_library(env) || has_metatable(L_, env)) return walk(env);
    auto used = globals_used(L_, fn, upvalue);
    if (!used || std::any_of(used->begin(), used->end(), [](const std::string& name) {
          return std::find(std::begin(kGlobalEscapes), std::end(kGlobalEscapes), name) != std::end(kGlobalEscapes);
        }))
      return walk(env);
    keep(env);
    const size_t k = out_->env_names.size();  // an index: walking the names may add more
    out_->env_names.push_back(std::move(*used));
    if (!emit({V::Env, uint64_t(uintptr_t(p))}) || !emit({V::Int, k}) || !descend()) return false;
    bool ok = true;
    for (size_t i = 0; ok && i < out_->env_names[k].size(); ++i) {
      const std::string& name = out_->env_names[k][i];
      lua_pushlstring(L_, name.data(), name.size());
      lua_rawget(L_, env);
      ok = walk(lua_gettop(L_));
      lua_pop(L_, 1);
    }
    --depth_;
    return ok;
  }

  // A table's metatable (or nil), its pairs, End.
  bool walk_table_contents(int idx) {
    if (lua_getmetatable(L_, idx)) {
      const bool ok = walk(lua_gettop(L_));
      lua_pop(L_, 1);
      if (!ok) return false;
    } else if (!emit({V::Nil})) {
      return false;
    }
    lua_pushnil(L_);
    while (lua_next(L_, idx) != 0) {
      const int top = lua_gettop(L_);
      if (!walk(top - 1) || !walk(top)) {
        lua_pop(L_, 2);
        return false;
      }
      lua_pop(L_, 1);
    }
    return emit({V::End});
  }

 public:
  // Moves the keep table into the registry (after the walk).
  void finish() {
    lua_pushvalue(L_, keep_table_);
    out_->keep = luaL_ref(L_, LUA_REGISTRYINDEX);
    lua_remove(L_, keep_table_);
  }
  // Walks the state fn (absolute index) reaches into `out`, with the library set of the
  // registry (_compile_set_libset).
  static void record(lua_State* L, int fn, Snapshot* out) {
    const int lib = push_libset(L);
    Walker w(L, lib, out);
    w.walk_function_upvalues(fn);
    w.finish();
    lua_pop(L, 1);
  }
  static int push_libset(lua_State* L) {
    lua_getfield(L, LUA_REGISTRYINDEX, "tide.compile.libset");
    return lua_istable(L, -1) ? lua_gettop(L) : 0;
  }

 private:
  lua_State* L_;
  int libset_;
  Snapshot* out_;
  std::unordered_map<const void*, uint64_t> seen_;
  int depth_ = 0;
  int keep_table_ = 0;
  lua_Integer keep_n_ = 0;
};

// The guard: whether the state a function reaches equals a snapshot, read in the snapshot's
// order. It runs on every call, so each value costs the fewest Lua API calls that tell it
// apart: the snapshot keeps its strings, tables, functions and userdata (tensors' included)
// alive, so an address from lua_topointer names one object, and its kind with it. Gradients
// match by identity where grad_identity says so, else by presence.
class Guard {
 public:
  static bool matches(lua_State* L, int fn, const Snapshot& expect, const std::vector<bool>& grad_identity) {
    // Each level of nesting holds at most two values on the stack (a key and its value, or
    // an upvalue and a metatable).
    if (!lua_checkstack(L, 2 * expect.depth + 8)) return false;
    Guard g(L, expect, grad_identity);
    return g.function_upvalues(fn) && g.at_ == g.end_;
  }

 private:
  Guard(lua_State* L, const Snapshot& expect, const std::vector<bool>& grad_identity)
      : L_(L), snap_(expect), at_(expect.values.data()), end_(at_ + expect.values.size()),
        grad_identity_(grad_identity) {}

  // The next expected value's kind (End past the end: nothing is expected there).
  V next_kind() const { return at_ < end_ ? at_->kind : V::End; }
  bool take(V kind) {
    if (next_kind() != kind) return false;
    ++at_;
    return true;
  }
  // The next expected value is the kept object at idx.
  bool take_object(int idx) {
    if (at_->bits != uint64_t(uintptr_t(lua_topointer(L_, idx)))) return false;
    ++at_;
    return true;
  }

  bool function_upvalues(int idx) {
    for (int i = 1; const char* name = lua_getupvalue(L_, idx, i); ++i) {
      const int top = lua_gettop(L_);
      const bool ok = next_kind() == V::Env && std::strcmp(name, "_ENV") == 0 && lua_istable(L_, top) ? env(top)
                                                                                                   : value(top);
      lua_pop(L_, 1);
      if (!ok) return false;
    }
    return take(V::End);
  }

  // A global table walked at the names the function uses (Walker::walk_env).
  bool env(int idx) {
    if (!take_object(idx) || next_kind() != V::Int) return false;
    const uint64_t k = (at_++)->bits;
    if (k >= snap_.env_names.size() || has_metatable(L_, idx)) return false;
    for (const std::string& name : snap_.env_names[k]) {
      lua_pushlstring(L_, name.data(), name.size());
      lua_rawget(L_, idx);
      const bool ok = value(lua_gettop(L_));
      lua_pop(L_, 1);
      if (!ok) return false;
    }
    return true;
  }

  // A tensor: the same Lua value as recorded (else, as a tensor made again for the same
  // engine tensor, through its metatable), with the recorded layout and gradient.
  bool tensor(int idx) {
    if (at_->bits >= snap_.tensors.size()) return false;
    const size_t k = at_->bits;
    const TensorState& e = snap_.tensors[k];
    const void* ud = lua_touserdata(L_, idx);
    const Tensor* t = ud == e.userdata ? static_cast<const Tensor*>(ud) : tensor_slot(L_, idx);
    if (!t || !t->defined()) return false;
    if (!e.same_layout_as(*t->impl())) return false;
    const AutogradMeta* m = t->impl()->autograd.get();
    const TensorImpl* grad = m ? m->grad.impl() : nullptr;
    if (k < grad_identity_.size() && grad_identity_[k] ? grad != e.grad.get() : (grad != nullptr) != (e.grad != nullptr))
      return false;
    ++at_;
    return true;
  }

  // The value at idx (absolute).
  bool value(int idx) {
    switch (next_kind()) {
      case V::Nil: return lua_type(L_, idx) == LUA_TNIL && take(V::Nil);
      case V::False:
      case V::True:
        return lua_type(L_, idx) == LUA_TBOOLEAN && take(lua_toboolean(L_, idx) ? V::True : V::False);
      case V::Int:
        if (!lua_isinteger(L_, idx) || at_->bits != uint64_t(lua_tointeger(L_, idx))) return false;
        ++at_;
        return true;
      case V::Float: {
        if (lua_type(L_, idx) != LUA_TNUMBER || lua_isinteger(L_, idx)) return false;
        const double d = lua_tonumber(L_, idx);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        if (at_->bits != bits) return false;
        ++at_;
        return true;
      }
      case V::Light: return lua_type(L_, idx) == LUA_TLIGHTUSERDATA && take_object(idx);
      case V::String:
      case V::Thread:
      case V::Userdata:
      case V::Library:
      case V::CFunction: return take_object(idx);
      case V::Tensor: return tensor(idx);
      case V::Seen: {  // a table or function met earlier in the snapshot
        const uint64_t first = at_->bits;
        if (first >= snap_.values.size() || snap_.values[first].bits != uint64_t(uintptr_t(lua_topointer(L_, idx))))
          return false;
        ++at_;
        return true;
      }
      case V::Function: return take_object(idx) && function_upvalues(idx);
      case V::Table: return take_object(idx) && table_contents(idx);
      default: return false;
    }
  }

  // A table's metatable (or nil), its pairs, End (Walker::walk_table_contents).
  bool table_contents(int idx) {
    if (lua_getmetatable(L_, idx)) {
      const bool ok = value(lua_gettop(L_));
      lua_pop(L_, 1);
      if (!ok) return false;
    } else if (!take(V::Nil)) {
      return false;
    }
    lua_pushnil(L_);
    const int key = lua_gettop(L_);  // lua_next leaves each key there and its value above
    while (lua_next(L_, idx) != 0) {
      // (Most keys are strings: told apart here, without a call of value.)
      const bool key_ok = next_kind() == V::String ? take_object(key) : value(key);
      if (!key_ok || !value(key + 1)) {
        lua_pop(L_, 2);
        return false;
      }
      lua_pop(L_, 1);
    }
    return take(V::End);
  }

  lua_State* L_;
  const Snapshot& snap_;
  const Value* at_;
  const Value* end_;
  const std::vector<bool>& grad_identity_;
};

struct SnapshotBox {
  Snapshot snap;
  Modes modes;
};

void release(lua_State* L, int& ref) {
  if (ref != LUA_NOREF) luaL_unref(L, LUA_REGISTRYINDEX, ref);
  ref = LUA_NOREF;
}

// ---- the recording: the engine's, plus a call hook for C functions

// The C functions (besides the bindings) a recorded function may call, by address: the same
// in every lua_State of the process (_compile_set_libset adds them).
std::mutex g_allowed_mu;
std::unordered_set<lua_CFunction> g_allowed;

bool allowed_c_function(lua_CFunction f) {
  if (autocast::is_wrapper(f)) return true;
  std::lock_guard<std::mutex> lock(g_allowed_mu);
  return g_allowed.count(f) != 0;
}

struct RecordingBox {
  std::unique_ptr<capture::Recording> rec;
  lua_Hook prev_hook = nullptr;
  int prev_mask = 0, prev_count = 0;
  lua_State* L = nullptr;
};

thread_local RecordingBox* t_box = nullptr;

// A C function called while recording: a binding (its engine work is recorded or breaks the
// recording itself), one of the allowed set, or a break.
void call_hook(lua_State* L, lua_Debug* ar) {
  RecordingBox* box = t_box;
  if (box && box->L == L && (ar->event == LUA_HOOKCALL || ar->event == LUA_HOOKTAILCALL) &&
      !capture::broken_here() && lua_getinfo(L, "fnS", ar)) {
    if (lua_iscfunction(L, -1) && binding_of(L, -1) == nullptr) {
      if (!allowed_c_function(lua_tocfunction(L, -1))) {
        capture::mark_broken(std::string("calls ") + (ar->name ? ar->name : "a C function") +
                             ", whose effects a replay would not repeat");
        capture::set_break_location(script_line(L));
      }
    }
    lua_pop(L, 1);
  }
  if (box && box->prev_hook && (box->prev_mask & (1 << ar->event))) box->prev_hook(L, ar);
}

void end_recording(RecordingBox* box) {
  if (!box->rec) return;
  if (t_box == box) {
    lua_sethook(box->L, box->prev_hook, box->prev_mask, box->prev_count);
    t_box = nullptr;
  }
  box->rec.reset();
}

int recording_gc(lua_State* L) {
  auto* box = static_cast<RecordingBox*>(luaL_checkudata(L, 1, kRecordingMeta));
  end_recording(box);
  box->~RecordingBox();
  return 0;
}

// ---- variants: a tape with its guard and its effects

struct ArgState {
  int type = LUA_TNIL;
  Value value{V::Nil};
  std::string text;      // a string argument
  TensorState tensor;    // a tensor argument's layout (its identity is not guarded)
  bool contiguous = false;
  Device device;
};

// A recorded backward for a result whose graph the caller's backward() will use (the
// output of torch.compile(model) in a training loop, as AOTAutograd's joint graph): the
// recording's backward from a placeholder gradient to the reached leaves that require grad,
// replayed by the node each replayed result carries (CompiledFunctionBackward).
struct BackwardPlan {
  std::shared_ptr<capture::Tape> tape;
  // What the tape reads besides its own blocks, kept alive as long as a result's node may
  // replay it (the variant may be dropped first): the forward's blocks, the inputs, the
  // reached tensors.
  std::shared_ptr<const capture::Tape> forward;
  std::vector<Tensor> inputs;
  std::vector<std::shared_ptr<TensorImpl>> reached;
  Tensor grad_in;              // the placeholder the incoming gradient is copied into
  std::vector<Tensor> leaves;  // the node's inputs: the leaves the result depends on
  std::vector<bool> read;      // per leaf: the tape reads it (its version is checked)
  std::vector<Tensor> grads;   // their gradients as the tape computes them (undefined: unused)
  std::weak_ptr<Node> pending;  // the node of the last replay's result, until its backward ran
  // Whether the last replay's result still awaits its backward: a replay now would overwrite
  // the activations that backward reads, so the variant does not match.
  bool busy() const {
    const std::shared_ptr<Node> n = pending.lock();
    return n && !n->released();
  }
};

struct VariantBox {
  std::shared_ptr<capture::Tape> tape;
  std::shared_ptr<BackwardPlan> backward;  // when a result's graph is left to the caller
  std::vector<std::pair<const char*, size_t>> known;  // memory the guards cover (finish_fn)
  Snapshot pre;
  Modes modes;
  std::vector<bool> grad_identity;  // per pre tensor: guard the gradient's identity
  std::vector<std::pair<size_t, std::shared_ptr<TensorImpl>>> grad_effects;  // pre tensor k's grad after
  std::vector<std::pair<Storage*, uint32_t>> version_effects;
  std::vector<ArgState> args;
  std::vector<Tensor> clones;  // the recording's inputs, one per tensor argument
  // Results each replay writes into new memory (Tape::bind_output): the recorded result
  // (its layout), and what the last replay made, until _compile_output hands it out.
  std::vector<Tensor> outputs, made;
};

int variant_gc(lua_State* L) {
  auto* v = static_cast<VariantBox*>(luaL_checkudata(L, 1, kVariantMeta));
  release(L, v->pre.keep);
  v->~VariantBox();
  return 0;
}

int snapshot_gc(lua_State* L) {
  auto* s = static_cast<SnapshotBox*>(luaL_checkudata(L, 1, kSnapshotMeta));
  release(L, s->snap.keep);
  s->~SnapshotBox();
  return 0;
}

template <typename T>
T* new_box(lua_State* L, const char* meta, lua_CFunction gc) {
  void* ud = lua_newuserdatauv(L, sizeof(T), 0);
  T* box = new (ud) T();
  if (luaL_newmetatable(L, meta)) {
    lua_pushcfunction(L, gc);
    lua_setfield(L, -2, "__gc");
    lua_pushstring(L, "compile internals");
    lua_setfield(L, -2, "__metatable");
  }
  lua_setmetatable(L, -2);
  return box;
}

template <typename T>
T* box_arg(Args& a, int i, const char* meta, const char* what) {
  a.consumed(i);
  auto* b = static_cast<T*>(luaL_testudata(a.L, i, meta));
  if (!b) a.error(std::string("argument ") + std::to_string(i) + " is not " + what);
  return b;
}

int function_arg(Args& a, int i) {
  a.consumed(i);
  if (lua_type(a.L, i) != LUA_TFUNCTION) a.error("argument " + std::to_string(i) + " must be a function");
  return lua_absindex(a.L, i);
}

int table_arg(Args& a, int i) {
  a.consumed(i);
  if (!lua_istable(a.L, i) || tensor_slot(a.L, i)) a.error("argument " + std::to_string(i) + " must be a table");
  return lua_absindex(a.L, i);
}

// The state of argument idx; false for a kind a variant cannot guard.
bool arg_state(lua_State* L, int idx, ArgState* s) {
  s->type = lua_type(L, idx);
  switch (s->type) {
    case LUA_TNIL: return true;
    case LUA_TBOOLEAN: s->value = {lua_toboolean(L, idx) ? V::True : V::False}; return true;
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) {
        s->value = {V::Int, uint64_t(lua_tointeger(L, idx))};
      } else {
        double d = lua_tonumber(L, idx);
        uint64_t bits;
        std::memcpy(&bits, &d, sizeof bits);
        s->value = {V::Float, bits};
      }
      return true;
    }
    case LUA_TSTRING: {
      size_t n;
      const char* p = lua_tolstring(L, idx, &n);
      s->text.assign(p, n);
      return true;
    }
    case LUA_TUSERDATA: {
      Tensor* t = tensor_slot(L, idx);
      if (!t || !t->defined()) return false;
      s->tensor = TensorState::of(*t);
      s->tensor.impl.reset(), s->tensor.grad.reset(), s->tensor.storage = nullptr;
      s->tensor.strides.clear(), s->tensor.offset = 0, s->tensor.version = 0;
      s->contiguous = t->is_contiguous();
      s->device = t->device();
      return true;
    }
    default: return false;
  }
}

bool same_arg(lua_State* L, int idx, const ArgState& e) {
  if (lua_type(L, idx) != e.type) return false;
  ArgState s;
  if (e.type == LUA_TUSERDATA) {
    Tensor* t = tensor_slot(L, idx);
    if (!t || !t->defined()) return false;
    const TensorState& w = e.tensor;
    bool grad_fn = t->impl()->autograd && t->impl()->autograd->grad_fn;
    bool req = t->impl()->autograd && t->impl()->autograd->requires_grad;
    return t->dtype() == w.dtype && t->sizes() == w.sizes && t->device() == e.device && req == w.requires_grad &&
           grad_fn == w.has_grad_fn && t->impl()->numpy == w.numpy && t->is_contiguous() == e.contiguous;
  }
  if (!arg_state(L, idx, &s)) return false;
  return s.value == e.value && s.text == e.text;
}

// ---- bindings

// _compile_snapshot(fn) -> snapshot or nil, reason
int snapshot_fn(lua_State* L, Args& a) {
  const int fn = function_arg(a, 1);
  auto* box = new_box<SnapshotBox>(L, kSnapshotMeta, snapshot_gc);
  box->modes = current_modes();
  Walker::record(L, fn, &box->snap);
  if (box->snap.too_large) {
    lua_pushnil(L);
    lua_pushfstring(L,
                    "the function reaches more than %d Lua values, or values nested more than %d deep (its "
                    "upvalues, their tables and functions)",
                    int(kMaxSnapshotValues), kMaxSnapshotDepth);
    return 2;
  }
  return 1;
}

// _compile_begin() -> recording: starts recording the engine's work and C calls on this thread.
int begin_fn(lua_State* L, Args&) {
  TIDE_CHECK(!capture::recording_here(), "torch.compile: a recording is already running on this thread");
  auto* box = new_box<RecordingBox>(L, kRecordingMeta, recording_gc);
  box->L = L;
  box->rec = std::make_unique<capture::Recording>();
  box->prev_hook = lua_gethook(L);
  box->prev_mask = lua_gethookmask(L);
  box->prev_count = lua_gethookcount(L);
  t_box = box;
  lua_sethook(L, call_hook, box->prev_mask | LUA_MASKCALL, box->prev_count);
  return 1;
}

// _compile_finish(recording, fn, snapshot, clones) -> variant or nil, reason: ends the
// recording and makes the variant when the call can be replayed. `snapshot` is the state
// before the call; clones are the tensors the function was given.
int finish_fn(lua_State* L, Args& a) {
  auto* rbox = box_arg<RecordingBox>(a, 1, kRecordingMeta, "a recording");
  const int fn = function_arg(a, 2);
  auto* pre = box_arg<SnapshotBox>(a, 3, kSnapshotMeta, "a snapshot");
  const int clones = table_arg(a, 4);
  TIDE_CHECK(rbox->rec != nullptr, "_compile_finish: the recording has ended");
  std::shared_ptr<capture::Tape> tape = rbox->rec->finish();
  std::string reason = tape ? "" : rbox->rec->reason();
  end_recording(rbox);
  if (tape) {
    // The intermediates a fused group could keep in scratch are blocks nothing but the tape
    // holds: their Lua tensors are garbage by now, young garbage (made by this call), which
    // a basic step of the collector frees: in generational mode (lua.c's and tide's) a minor
    // collection. A full one would traverse the whole Lua heap (~270 us for tide's library);
    // a block still held by garbage the step did not reach is only kept out of scratch.
    tape->plan();
    if (tape->fuses()) {
      lua_gc(L, LUA_GCSTEP, 0);
      tape->plan();
    }
  }
  auto fail = [&](std::string why) {
    lua_pushnil(L);
    lua_pushstring(L, why.c_str());
    return 2;
  };
  if (!tape) return fail(reason);
  if (!(current_modes() == pre->modes))
    return fail("the function changes an engine mode (grad mode, default dtype, threads, autocast or the generator)");
  if (pre->modes.autocast) return fail("autocast regions are not captured");

  // The state after the call: the same Lua values; tensors with the same layout.
  Snapshot post;
  Walker::record(L, fn, &post);
  bool same = !post.too_large && post.values == pre->snap.values && post.tensors.size() == pre->snap.tensors.size();
  for (size_t k = 0; same && k < post.tensors.size(); ++k)  // (post was just taken: it is the live state)
    same = pre->snap.tensors[k].same_layout_as(*post.tensors[k].impl);
  release(L, post.keep);
  if (!same) return fail("the function changes Lua state it reaches (a table field, an upvalue, optimizer state)");

  // Memory the tape may touch: its own blocks, the inputs it was given, the reached tensors
  // and their gradients before and after.
  std::vector<std::pair<const char*, size_t>> known;
  auto know = [&](const Storage* s) {
    if (s) known.emplace_back(static_cast<const char*>(s->data()), s->nbytes());
  };
  std::vector<Tensor> clone_list;
  for (lua_Integer i = 1;; ++i) {
    lua_rawgeti(L, clones, i);
    Tensor* t = tensor_slot(L, -1);
    lua_pop(L, 1);
    if (!t) break;
    clone_list.push_back(*t);
    know(t->storage().get());
  }
  for (const auto* snap : {&pre->snap, &post})
    for (const TensorState& s : snap->tensors) {
      know(s.storage);
      if (s.grad) know(s.grad->storage.get());
    }
  if (!tape->touches_only(known))
    return fail("the function reaches tensors torch.compile cannot guard (not through its arguments or upvalues)");

  auto* v = new_box<VariantBox>(L, kVariantMeta, variant_gc);
  v->known = std::move(known);
  v->tape = std::move(tape);
  v->modes = pre->modes;
  v->clones = std::move(clone_list);
  v->pre = std::move(pre->snap);
  pre->snap = Snapshot{};
  v->grad_identity.resize(v->pre.tensors.size());
  for (size_t k = 0; k < v->pre.tensors.size(); ++k) {
    const TensorState& b = v->pre.tensors[k];
    const TensorState& e = post.tensors[k];
    const Storage* gs = b.grad ? b.grad->storage.get() : nullptr;
    v->grad_identity[k] = gs && v->tape->touches(gs->data(), gs->nbytes());
    // (One effect per tensor: the walk meets a parameter once per table that holds it.)
    const bool first = std::none_of(v->grad_effects.begin(), v->grad_effects.end(),
                                    [&](const auto& effect) { return v->pre.tensors[effect.first].impl == b.impl; });
    if (e.grad != b.grad && first) v->grad_effects.emplace_back(k, e.grad);
    if (e.version != b.version) v->version_effects.emplace_back(const_cast<Storage*>(e.storage), e.version - b.version);
  }
  // The gradients this call made are the tape's memory, which the next replay rewrites: the
  // caller keeps copies (as replays give them).
  for (const auto& [k, grad] : v->grad_effects)
    if (grad) v->pre.tensors[k].impl->autograd->grad = Tensor(grad).clone();
  return 1;
}

// _compile_guard_args(variant, ...) : records the call's arguments as the variant's (after
// finish, with the arguments the recording was called with). Returns nothing.
int guard_args_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  v->args.clear();
  for (int i = 2; i <= lua_gettop(L); ++i) {
    a.consumed(i);
    ArgState s;
    TIDE_CHECK(arg_state(L, i, &s), "_compile_guard_args: argument ", i, " is a ", luaL_typename(L, i),
               " (tensors, numbers, booleans, strings and nil only)");
    v->args.push_back(std::move(s));
  }
  return 0;
}

// _compile_replay(variant, fn, ...) -> true, or false when a guard fails: copies the tensor
// arguments into the recording's inputs, replays, and applies the recorded effects.
int replay_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const int fn = function_arg(a, 2);
  const int nargs = lua_gettop(L) - 2;
  for (int i = 3; i <= lua_gettop(L); ++i) a.consumed(i);
  bool hit = nargs == int(v->args.size()) && current_modes() == v->modes;
  for (int i = 0; hit && i < nargs; ++i) hit = same_arg(L, i + 3, v->args[size_t(i)]);
  if (hit && v->backward) hit = !v->backward->busy();
  if (hit) hit = Guard::matches(L, fn, v->pre, v->grad_identity);
  if (!hit) {
    lua_pushboolean(L, 0);
    return 1;
  }
  {
    autograd::GradModeGuard no_grad(false);
    size_t c = 0;
    for (int i = 0; i < nargs; ++i)
      if (v->args[size_t(i)].type == LUA_TUSERDATA) ops::copy_(v->clones[c++], *tensor_slot(L, i + 3));
  }
  std::vector<char*> out(v->outputs.size());
  for (size_t k = 0; k < v->outputs.size(); ++k) {
    const Tensor& r = v->outputs[k];
    Tensor fresh = Tensor::empty(r.sizes(), r.dtype());
    fresh.impl()->numpy = r.impl()->numpy;
    out[k] = static_cast<char*>(fresh.address());
    v->made[k] = std::move(fresh);
  }
  v->tape->replay(out.data());
  // A gradient the recording's backward made anew: a new tensor each call, as eagerly (a
  // gradient kept from an earlier call is not overwritten by the next replay).
  for (const auto& [k, grad] : v->grad_effects) {
    const TensorState& s = v->pre.tensors[k];
    TIDE_ASSERT(s.impl->autograd);
    s.impl->autograd->grad = grad ? Tensor(grad).clone() : Tensor();
  }
  for (const auto& [storage, delta] : v->version_effects)
    for (uint32_t i = 0; i < delta; ++i) storage->bump_version();
  lua_pushboolean(L, 1);
  return 1;
}

// _compile_explain(variant) -> {steps = {{entry=, op=}...}, groups = {{first, last, scratch=,
// outputs=}...}, pairs = {{first, last, rows = {...}, before = {...}, after = {...},
// scratch =}...}, buffers =, bytes =, guarded_values =, guarded_tensors =, graphable =, graph =,
// graph_reason =}: step numbers from 1; graphable when replays can be one CUDA graph, graph once
// they are, graph_reason why not.
int explain_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  lua_createtable(L, 0, 5);
  lua_createtable(L, int(v->tape->steps.size()), 0);
  for (size_t i = 0; i < v->tape->steps.size(); ++i) {
    lua_createtable(L, 0, 2);
    lua_pushstring(L, v->tape->steps[i].entry);
    lua_setfield(L, -2, "entry");
    lua_pushstring(L, v->tape->steps[i].op);
    lua_setfield(L, -2, "op");
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  lua_setfield(L, -2, "steps");
  auto push_steps = [L](const std::vector<size_t>& steps, const char* field) {
    lua_createtable(L, int(steps.size()), 0);
    for (size_t i = 0; i < steps.size(); ++i) {
      lua_pushinteger(L, lua_Integer(steps[i] + 1));
      lua_rawseti(L, -2, lua_Integer(i + 1));
    }
    lua_setfield(L, -2, field);
  };
  lua_newtable(L);  // the product pairs
  lua_Integer n = 0;
  for (const capture::Tape::Segment& g : v->tape->segments) {
    if (!g.pair) continue;
    lua_createtable(L, 2, 4);
    lua_pushinteger(L, lua_Integer(g.first + 1));
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, lua_Integer(g.last));
    lua_rawseti(L, -2, 2);
    push_steps(g.row_steps, "rows");
    push_steps(g.before, "before");
    push_steps(g.after, "after");
    lua_pushinteger(L, g.scratch);
    lua_setfield(L, -2, "scratch");
    lua_rawseti(L, -2, ++n);
  }
  lua_setfield(L, -2, "pairs");
  lua_newtable(L);  // the fused groups, as {first, last} step numbers
  n = 0;
  for (const capture::Tape::Segment& g : v->tape->segments) {
    if (g.last - g.first < 2 || g.pair) continue;
    lua_createtable(L, 2, 0);
    lua_pushinteger(L, lua_Integer(g.first + 1));
    lua_rawseti(L, -2, 1);
    lua_pushinteger(L, lua_Integer(g.last));
    lua_rawseti(L, -2, 2);
    lua_pushinteger(L, g.scratch);
    lua_setfield(L, -2, "scratch");
    lua_pushinteger(L, g.outputs);
    lua_setfield(L, -2, "outputs");
    lua_rawseti(L, -2, ++n);
  }
  lua_setfield(L, -2, "groups");
  lua_pushinteger(L, lua_Integer(v->tape->retained.size()));
  lua_setfield(L, -2, "buffers");
  lua_pushinteger(L, lua_Integer(v->tape->retained_bytes()));
  lua_setfield(L, -2, "bytes");
  lua_pushinteger(L, lua_Integer(v->pre.values.size()));
  lua_setfield(L, -2, "guarded_values");
  lua_pushinteger(L, lua_Integer(v->pre.tensors.size()));
  lua_setfield(L, -2, "guarded_tensors");
  lua_pushboolean(L, v->tape->graph_table != nullptr);
  lua_setfield(L, -2, "graphable");
  lua_pushboolean(L, v->tape->replays_as_graph());
  lua_setfield(L, -2, "graph");
  lua_pushstring(L, v->tape->graph_reason.c_str());
  lua_setfield(L, -2, "graph_reason");
  return 1;
}

// _compile_reaches(variant, tensor) -> boolean: whether the tensor is one the variant's guard
// reached (a parameter, a buffer): a replay returns it itself rather than a copy.
int reaches_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const Tensor& t = a.tensor(2);
  lua_pushboolean(L, std::any_of(v->pre.tensors.begin(), v->pre.tensors.end(),
                                 [&](const TensorState& s) { return s.impl == t.impl_ptr(); }));
  return 1;
}

// _compile_spent(tensor) -> boolean: whether the tensor requires grad through a graph that a
// backward inside the function already used up (its node released what it saved), so that
// the caller can do nothing with the history but see it: a replay may return copies of it.
int spent_fn(lua_State* L, Args& a) {
  const std::shared_ptr<Node>& fn = autograd::grad_fn(a.tensor(1));
  lua_pushboolean(L, fn && fn->released());
  return 1;
}

// _compile_spent_copy(tensor) -> tensor: a new copy of a result with a used-up history (see
// _compile_spent) that shares that history: it requires grad, shows the same grad_fn, and a
// backward through it fails as it does on the eager result.
int spent_copy_fn(lua_State* L, Args& a) {
  const Tensor& t = a.tensor(1);
  TIDE_CHECK(autograd::grad_fn(t) && autograd::grad_fn(t)->released(),
             "_compile_spent_copy: the tensor's history is not used up");
  Tensor copy = t.clone();
  AutogradMeta& m = autograd::meta(copy);
  m.requires_grad = true;
  m.grad_fn = autograd::grad_fn(t);
  push_tensor(L, std::move(copy));
  return 1;
}

// _compile_record_backward(variant, result) -> true, or nil and a reason: records the
// backward of `result` (which requires grad through the graph the call built) from a
// placeholder gradient to every reached leaf that requires grad, for the replays' results.
int record_backward_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const Tensor& result = a.tensor(2);
  auto fail = [&](const std::string& why) {
    lua_pushnil(L);
    lua_pushstring(L, why.c_str());
    return 2;
  };
  const std::shared_ptr<Node>& fn = autograd::grad_fn(result);
  if (!fn || fn->released() || !is_floating(result.dtype())) return fail("a result requires grad without a graph to use");
  auto plan = std::make_shared<BackwardPlan>();
  for (const TensorState& t : v->pre.tensors) {
    if (!t.requires_grad) continue;
    if (t.has_grad_fn) return fail("the function reaches a tensor that requires grad and is not a leaf");
    plan->leaves.push_back(Tensor(t.impl));
  }
  plan->grad_in = Tensor::empty(result.sizes(), result.dtype(), result.device());
  ops::fill_(plan->grad_in, Scalar(0.0));
  std::string reason;
  {
    capture::Recording rec;
    capture::set_current_op("backward");
    try {
      plan->grads = autograd::grad({result}, {plan->grad_in}, plan->leaves, true, false, true, "backward");
    } catch (const std::exception& e) {
      capture::mark_broken(std::string("its result's backward failed while recording: ") + e.what());
    }
    plan->tape = rec.finish();
    if (!plan->tape) reason = rec.reason();
  }
  if (plan->tape) plan->tape->plan();
  if (!plan->tape) return fail("its result's backward cannot be captured: " + reason);
  std::vector<std::pair<const char*, size_t>> known = v->known;
  for (const auto& st : v->tape->retained) known.emplace_back(static_cast<const char*>(st->data()), st->nbytes());
  known.emplace_back(static_cast<const char*>(plan->grad_in.storage()->data()), plan->grad_in.storage()->nbytes());
  if (!plan->tape->touches_only(known)) return fail("its result's backward reaches memory torch.compile cannot guard");
  for (const Tensor& leaf : plan->leaves)
    plan->read.push_back(plan->tape->touches(leaf.storage()->data(), leaf.storage()->nbytes()));
  plan->forward = v->tape;
  plan->inputs = v->clones;
  for (const TensorState& t : v->pre.tensors) plan->reached.push_back(t.impl);
  v->backward = std::move(plan);
  lua_pushboolean(L, 1);
  return 1;
}

// _compile_live_copy(variant, result) -> tensor: a copy of the result (the recording's
// buffer, which the last replay rewrote) whose grad_fn replays the recorded backward into the
// leaves' gradients. The leaves that backward reads must not change in place before it
// (checked), as eager mode's saved tensors must not.
int live_copy_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  TIDE_CHECK(v->backward, "_compile_live_copy: the variant has no recorded backward");
  std::shared_ptr<BackwardPlan> plan = v->backward;
  Tensor copy = a.tensor(2).clone();
  std::vector<uint32_t> versions;
  std::vector<const Tensor*> inputs;
  for (const Tensor& leaf : plan->leaves) {
    versions.push_back(leaf.storage()->version());
    inputs.push_back(&leaf);
  }
  autograd::record("compiled_function", copy, inputs,
                   [plan, versions](const Tensor& grad, const Node&) -> std::vector<Tensor> {
    TIDE_CHECK(!autograd::grad_enabled(), "backward: create_graph=true through the result of a torch.compile'd "
               "function is not supported (call the function uncompiled for higher-order gradients)");
    for (size_t k = 0; k < plan->leaves.size(); ++k)
      TIDE_CHECK(!plan->read[k] || plan->leaves[k].storage()->version() == versions[k], "backward: a tensor that "
                 "the compiled function's backward needs was modified by an in-place operation after the call (its "
                 "version was ", versions[k], ", now ", plan->leaves[k].storage()->version(), ")");
    // Replayed kernels go straight to the device tables: a recording around this backward
    // would miss them.
    capture::mark_broken("backward through the result of a compiled function (its replay is not recorded again)");
    ops::copy_(plan->grad_in, grad);
    plan->tape->replay();
    std::vector<Tensor> out;
    out.reserve(plan->grads.size());
    for (const Tensor& g : plan->grads) out.push_back(g.defined() ? g.clone() : Tensor());
    return out;
  });
  plan->pending = autograd::grad_fn(copy);
  push_tensor(L, std::move(copy));
  return 1;
}

// _compile_bind_output(variant, result, results...) -> index or nil: makes a result the
// recording made (a contiguous CPU tensor filling its block) an output that each replay
// writes into new memory, when the tape allows (Tape::bind_output) and nothing else reads
// the block after a replay: no other of the call's results, no gradient or tensor the guard
// reached, not the variant's recorded backward. _compile_output(variant, index) then gives
// the last replay's, with no copy.
int bind_output_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const Tensor& r = a.tensor(2);
  const Storage* block = r.storage().get();
  int shared = 0;  // results in this block (r itself once)
  for (int i = 3; i <= lua_gettop(L); ++i) {
    a.consumed(i);
    if (const Tensor* t = tensor_slot(L, i); t && t->defined() && t->storage().get() == block) ++shared;
  }
  bool alone = shared == 1 && !(v->backward && v->backward->tape->touches(block->data(), block->nbytes()));
  for (const auto& [k, grad] : v->grad_effects) alone = alone && !(grad && grad->storage.get() == block);
  for (const TensorState& t : v->pre.tensors)
    alone = alone && t.storage != block && !(t.grad && t.grad->storage.get() == block);
  int k = -1;
  if (alone && r.device().is_cpu() && r.is_contiguous() && r.offset() == 0 && r.nbytes() == block->nbytes())
    k = v->tape->bind_output(block);
  if (k < 0) return 0;
  TIDE_ASSERT(size_t(k) == v->outputs.size());
  v->outputs.push_back(r);
  v->made.emplace_back();
  lua_pushinteger(L, k + 1);
  return 1;
}

// _compile_alias(variant, result, results...) -> nil | "reached" | "argument", k | "result", i:
// what a tensor the call made and returned shares memory with, other than itself: a tensor the
// function reaches (or its gradient), the recording's clone of tensor argument k, or the
// results' i-th value (another Lua value). A replay returns a copy of such a result, which
// would not share that memory as eager mode's does.
int alias_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const Tensor& r = a.tensor(2);
  const Storage* block = r.storage().get();
  const void* self = lua_touserdata(L, 2);
  for (int i = 3; i <= lua_gettop(L); ++i) a.consumed(i);
  for (const TensorState& s : v->pre.tensors)
    if (s.storage == block || (s.grad && s.grad->storage.get() == block)) return lua_pushliteral(L, "reached"), 1;
  for (size_t k = 0; k < v->clones.size(); ++k)
    if (v->clones[k].storage().get() == block) {
      lua_pushliteral(L, "argument");
      lua_pushinteger(L, lua_Integer(k + 1));
      return 2;
    }
  for (int i = 3; i <= lua_gettop(L); ++i)
    if (const Tensor* t = tensor_slot(L, i); t && t->defined() && lua_touserdata(L, i) != self &&
                                              t->storage().get() == block) {
      lua_pushliteral(L, "result");
      lua_pushinteger(L, i - 2);
      return 2;
    }
  return 0;
}

// _compile_arg_view(result, clone, arg) -> view | false | nil: the recording ran on `clone`, a
// contiguous copy of the caller's tensor `arg`; a result sharing the clone's memory is shown
// as the same view of `arg` (recorded by autograd as eagerly), false when arg is not
// contiguous (its elements are not where the clone's are), nil when it shares nothing.
int arg_view_fn(lua_State* L, Args& a) {
  const Tensor& r = a.tensor(1);
  const Tensor& c = a.tensor(2);
  const Tensor& x = a.tensor(3);
  if (r.storage() != c.storage()) return 0;
  if (!x.is_contiguous() || !c.is_contiguous() || x.sizes() != c.sizes() || x.dtype() != c.dtype())
    return lua_pushboolean(L, 0), 1;
  push_tensor(L, ag::as_strided(x, r.sizes(), r.strides(), r.offset() - c.offset()));
  return 1;
}

// _compile_output(variant, index) -> tensor: the bound output the last replay wrote.
int output_fn(lua_State* L, Args& a) {
  auto* v = box_arg<VariantBox>(a, 1, kVariantMeta, "a variant");
  const int64_t k = a.integer(2);
  TIDE_CHECK(k >= 1 && k <= int64_t(v->made.size()) && v->made[size_t(k - 1)].defined(),
             "_compile_output: no output ", k, " from the last replay");
  push_tensor(L, std::move(v->made[size_t(k - 1)]));
  v->made[size_t(k - 1)] = Tensor();
  return 1;
}

// _compile_recording() -> boolean: whether this thread records (a compiled function called
// inside another's recording runs eagerly, into the outer recording).
int recording_fn(lua_State* L, Args&) {
  lua_pushboolean(L, capture::recording_here());
  return 1;
}

// _compile_set_libset(set, allowed): the library tables and functions, compared by identity
// only; and the C functions a recorded function may call (keys of `allowed`).
int set_libset_fn(lua_State* L, Args& a) {
  const int set = table_arg(a, 1), allowed = table_arg(a, 2);
  lua_pushvalue(L, set);
  lua_setfield(L, LUA_REGISTRYINDEX, "tide.compile.libset");
  std::lock_guard<std::mutex> lock(g_allowed_mu);
  lua_pushnil(L);
  while (lua_next(L, allowed) != 0) {
    if (lua_iscfunction(L, -2)) g_allowed.insert(lua_tocfunction(L, -2));
    lua_pop(L, 1);
  }
  return 0;
}

const Binding kCompileBindings[] = {
    {"_compile_snapshot", snapshot_fn, TORCH,
     "_compile_snapshot(fn) -> snapshot: the Lua state fn reaches (torch.compile's guard; internal)."},
    {"_compile_begin", begin_fn, TORCH,
     "_compile_begin() -> recording: starts recording engine work on this thread (torch.compile; internal)."},
    {"_compile_finish", finish_fn, TORCH,
     "_compile_finish(recording, fn, snapshot, clones) -> variant or nil, reason: ends a recording (torch.compile; "
     "internal)."},
    {"_compile_guard_args", guard_args_fn, TORCH,
     "_compile_guard_args(variant, ...): the arguments a variant replays for (torch.compile; internal)."},
    {"_compile_replay", replay_fn, TORCH,
     "_compile_replay(variant, fn, ...) -> boolean: replays a variant when its guards hold (torch.compile; "
     "internal)."},
    {"_compile_reaches", reaches_fn, TORCH,
     "_compile_reaches(variant, tensor) -> boolean: whether the variant's guard reached the tensor (internal)."},
    {"_compile_spent", spent_fn, TORCH,
     "_compile_spent(tensor) -> boolean: whether its history was used up by a backward (internal)."},
    {"_compile_spent_copy", spent_copy_fn, TORCH,
     "_compile_spent_copy(tensor) -> tensor: a copy sharing its used-up history (internal)."},
    {"_compile_record_backward", record_backward_fn, TORCH,
     "_compile_record_backward(variant, result) -> true | nil, reason: records the result's backward (internal)."},
    {"_compile_live_copy", live_copy_fn, TORCH,
     "_compile_live_copy(variant, result) -> tensor: a copy whose grad_fn replays it (internal)."},
    {"_compile_bind_output", bind_output_fn, TORCH,
     "_compile_bind_output(variant, result, results...) -> index | nil: lets replays write the result into new "
     "memory (internal)."},
    {"_compile_alias", alias_fn, TORCH,
     "_compile_alias(variant, result, results...) -> nil | kind, index: what else a result shares memory with "
     "(internal)."},
    {"_compile_arg_view", arg_view_fn, TORCH,
     "_compile_arg_view(result, clone, arg) -> tensor | false | nil: a result viewing an argument's clone as "
     "the same view of the argument (internal)."},
    {"_compile_output", output_fn, TORCH,
     "_compile_output(variant, index) -> tensor: that result of the last replay (internal)."},
    {"_compile_explain", explain_fn, TORCH, "_compile_explain(variant) -> table: what a variant captured (internal)."},
    {"_compile_recording", recording_fn, TORCH,
     "_compile_recording() -> boolean: whether this thread records (torch.compile; internal)."},
    {"_compile_set_libset", set_libset_fn, TORCH,
     "_compile_set_libset(set, allowed): the library objects torch.compile compares by identity, the C functions "
     "it allows (internal)."},
};

}  // namespace

void register_compile_bindings() { register_bindings(kCompileBindings, std::size(kCompileBindings)); }

}  // namespace tide::lua
