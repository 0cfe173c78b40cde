// torch.multiprocessing's native half: x:share_memory_(), the sockets that Queue and Pipe are
// made of, the serializer that turns Lua values into messages (tensors by shared-memory
// handle), and starting worker processes. The classes themselves (Queue, Pipe, Process,
// spawn, the batch workers of a DataLoader) are Lua, in bindings/lua/torch_multiprocessing.lua.
//
// A message carries any value made of nil, booleans, numbers, strings, tables (with their
// metatables, cycles and shared references kept), Lua functions (bytecode and upvalues),
// tensors and sockets:
// - a table or function that belongs to a loaded module (reachable from package.loaded, its
//   fields, metatables and upvalues, or a base library function) travels as its path and is
//   found again under that path in the receiver: torch.nn.Linear, a dataset class of a module
//   the script required, the metatable of nn modules. Everything else is copied by value; a
//   function's upvalues are copied with it.
// - the global table travels as the receiver's own global table plus the sender's globals
//   (so that a sent function finds the global functions it calls); a global that cannot be
//   sent (a coroutine, a file) raises an error naming it when it is read in the receiver.
// - a CPU tensor's storage moves to shared memory (as share_memory_ does) and its memfd
//   travels with the message: the receiver's tensor uses the same bytes.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <climits>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "../tensor/autograd/autograd.hpp"
#include "../tensor/ipc.hpp"
#include "../tensor/shared_memory.hpp"
#include "lua_api.hpp"

extern char** environ;

namespace tide::lua {

namespace {

constexpr const char* kSocketMeta = "tide.multiprocessing.Socket";
// The registry field caching the known values (value -> path) and the module count they cover.
constexpr const char* kKnownKey = "tide.multiprocessing.known";
constexpr int kMaxDepth = 200;

// ---- sockets: a userdata holding an owned descriptor (shared by nobody else)

struct SocketBox {
  int fd;
};

int socket_gc(lua_State* L) {
  auto* box = static_cast<SocketBox*>(luaL_testudata(L, 1, kSocketMeta));
  if (box && box->fd >= 0) {
    close(box->fd);
    box->fd = -1;
  }
  return 0;
}

int socket_tostring(lua_State* L) {
  auto* box = static_cast<SocketBox*>(luaL_testudata(L, 1, kSocketMeta));
  lua_pushfstring(L, "multiprocessing socket (%s)", box && box->fd >= 0 ? "open" : "closed");
  return 1;
}

void push_socket(lua_State* L, ipc::Fd fd) {
  auto* box = static_cast<SocketBox*>(lua_newuserdatauv(L, sizeof(SocketBox), 0));
  box->fd = -1;
  if (luaL_newmetatable(L, kSocketMeta)) {
    lua_pushcfunction(L, socket_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, socket_gc);
    lua_setfield(L, -2, "__close");
    lua_pushcfunction(L, socket_tostring);
    lua_setfield(L, -2, "__tostring");
  }
  lua_setmetatable(L, -2);
  box->fd = fd.release();
}

SocketBox* to_socket(lua_State* L, int idx) { return static_cast<SocketBox*>(luaL_testudata(L, idx, kSocketMeta)); }

// The open descriptor of the socket at positional i.
int socket_arg(Args& a, int i) {
  a.consumed(i);
  SocketBox* box = to_socket(a.L, i);
  if (!box) a.error("argument " + std::to_string(i) + " is not a multiprocessing socket");
  if (box->fd < 0) a.error("the queue or pipe was closed");
  return box->fd;
}

// ---- the known values: tables and functions reachable from the loaded modules

// Path components (one byte of kind, then the name): 'L' a package.loaded entry, 'G' a base
// library global, 'f' a field, 'm' the metatable, 'u' an upvalue (by index).
constexpr char kSep = '\x01';

const char* const kBaseGlobals[] = {"assert", "collectgarbage", "dofile", "error", "getmetatable", "ipairs",
                                    "load", "loadfile", "next", "pairs", "pcall", "print", "rawequal",
                                    "rawget", "rawlen", "rawset", "require", "select", "setmetatable",
                                    "tonumber", "tostring", "type", "xpcall", "warn"};

bool is_reference_type(int t) { return t == LUA_TTABLE || t == LUA_TFUNCTION; }

// The sorted string keys of the table at idx.
std::vector<std::string> string_keys(lua_State* L, int idx) {
  std::vector<std::string> keys;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (lua_type(L, -1) == LUA_TSTRING) keys.emplace_back(lua_tostring(L, -1));
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// Pushes the table value -> path of every table and function reachable from the loaded
// modules, breadth first (so each gets its shortest path), cached until a module is added.
void push_known(lua_State* L) {
  lua_getfield(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  int loaded = lua_gettop(L);
  lua_Integer nmodules = 0;
  lua_pushnil(L);
  while (lua_next(L, loaded)) lua_pop(L, 1), ++nmodules;
  if (lua_getfield(L, LUA_REGISTRYINDEX, kKnownKey) == LUA_TTABLE) {
    lua_rawgeti(L, -1, 1);
    bool fresh = lua_tointeger(L, -1) == nmodules;
    lua_pop(L, 1);
    if (fresh) {
      lua_rawgeti(L, -1, 2);
      lua_remove(L, -2);
      lua_remove(L, loaded);
      return;
    }
  }
  lua_pop(L, 1);
  lua_newtable(L);
  int known = lua_gettop(L);
  std::deque<std::string> queue;  // paths; the value of each is at known_values[i]
  lua_newtable(L);
  int values = lua_gettop(L);
  lua_Integer nvalues = 0;
  auto visit = [&](std::string path) {  // the value on top (popped)
    if (!is_reference_type(lua_type(L, -1))) return lua_pop(L, 1);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, known) != LUA_TNIL) return lua_pop(L, 2);
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    lua_pushstring(L, path.c_str());
    lua_rawset(L, known);
    lua_rawseti(L, values, ++nvalues);
    queue.push_back(std::move(path));
  };
  lua_pushglobaltable(L);
  for (const char* name : kBaseGlobals) {
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    visit(std::string("G") + name);
  }
  lua_pop(L, 1);
  for (const std::string& name : string_keys(L, loaded)) {
    if (name == "_G") continue;
    lua_getfield(L, loaded, name.c_str());
    visit("L" + name);
  }
  for (lua_Integer i = 1; !queue.empty(); ++i) {
    std::string path = std::move(queue.front());
    queue.pop_front();
    lua_rawgeti(L, values, i);
    int v = lua_gettop(L);
    if (lua_type(L, v) == LUA_TTABLE) {
      for (const std::string& k : string_keys(L, v)) {
        lua_pushstring(L, k.c_str());
        lua_rawget(L, v);
        visit(path + kSep + 'f' + k);
      }
      if (lua_getmetatable(L, v)) visit(path + kSep + 'm');
    } else if (!lua_iscfunction(L, v)) {
      for (int u = 1; lua_getupvalue(L, v, u); ++u) visit(path + kSep + 'u' + std::to_string(u));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);  // values
  lua_createtable(L, 2, 0);
  lua_pushinteger(L, nmodules);
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, known);
  lua_rawseti(L, -2, 2);
  lua_setfield(L, LUA_REGISTRYINDEX, kKnownKey);
  lua_remove(L, loaded);
}

// "torch.nn.Linear" for error messages.
std::string readable_path(const std::string& path) {
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    size_t end = path.find(kSep, i);
    if (end == std::string::npos) end = path.size();
    char kind = path[i];
    std::string name = path.substr(i + 1, end - i - 1);
    if (kind == 'L' || kind == 'G') out += name;
    else if (kind == 'f') out += "." + name;
    else if (kind == 'm') out += "(metatable)";
    else out += "(upvalue " + name + ")";
    i = end + 1;
  }
  return out;
}

// Pushes the value at `path` in this process (requiring a module that is not loaded yet).
void push_path(lua_State* L, const std::string& path, const char* op) {
  size_t i = 0;
  bool first = true;
  while (i < path.size()) {
    size_t end = path.find(kSep, i);
    if (end == std::string::npos) end = path.size();
    char kind = path[i];
    std::string name = path.substr(i + 1, end - i - 1);
    if (first && kind == 'G') {
      lua_pushglobaltable(L);
      lua_pushstring(L, name.c_str());
      lua_rawget(L, -2);
      lua_remove(L, -2);
    } else if (first) {
      lua_getglobal(L, "require");
      lua_pushstring(L, name.c_str());
      if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
        std::string e = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
        lua_pop(L, 1);
        TIDE_FAIL(op, ": cannot load module '", name, "' in this process: ", e);
      }
    } else if (kind == 'f') {
      if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushstring(L, name.c_str());
        lua_rawget(L, -2);
      } else {
        lua_pushnil(L);
      }
      lua_remove(L, -2);
    } else if (kind == 'm') {
      if (!lua_getmetatable(L, -1)) lua_pushnil(L);
      lua_remove(L, -2);
    } else {
      if (!lua_isfunction(L, -1) || !lua_getupvalue(L, -1, std::atoi(name.c_str()))) lua_pushnil(L);
      lua_remove(L, -2);
    }
    first = false;
    i = end + 1;
  }
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    TIDE_FAIL(op, ": the value ", readable_path(path), " of the sending process does not exist in this one");
  }
}

// ---- the wire format

enum Tag : uint8_t {
  kNil, kFalse, kTrue, kInteger, kFloat, kString,
  kRef,          // id: a value met before in this message
  kKnown,        // path
  kTable,        // id, pairs until kEnd, then the metatable (a value or kNil)
  kFunction,     // id, bytecode, upvalue count, upvalues
  kGlobals,      // id, (name, value) pairs until kEnd, then the unavailable (name, reason) pairs until kEnd
  kTensor,       // id, storage descriptor index, storage bytes, offset, dtype, ndim, sizes, strides, requires_grad
  kSocket,       // id, descriptor index
  kEnd,
};

class Writer {
 public:
  Writer(lua_State* L, const char* op) : L(L), op_(op) {
    push_known(L);
    known_ = lua_gettop(L);
  }
  ~Writer() { lua_remove(L, known_); }

  // Serializes the value at idx.
  void value(int idx, int depth = 0) {
    idx = lua_absindex(L, idx);
    TIDE_CHECK(depth < kMaxDepth, op_, ": the value is nested more than ", kMaxDepth, " levels deep (at ", where(), ")");
    int t = lua_type(L, idx);
    switch (t) {
      case LUA_TNIL: return tag(kNil);
      case LUA_TBOOLEAN: return tag(lua_toboolean(L, idx) ? kTrue : kFalse);
      case LUA_TNUMBER:
        if (lua_isinteger(L, idx)) {
          tag(kInteger);
          return put<int64_t>(lua_tointeger(L, idx));
        }
        tag(kFloat);
        return put<double>(lua_tonumber(L, idx));
      case LUA_TSTRING: {
        tag(kString);
        size_t n;
        const char* s = lua_tolstring(L, idx, &n);
        return bytes(s, n);
      }
      default: break;
    }
    const void* key = lua_topointer(L, idx);
    if (auto it = memo_.find(key); it != memo_.end()) {
      tag(kRef);
      return put<uint32_t>(it->second);
    }
    lua_pushglobaltable(L);
    bool globals = lua_rawequal(L, idx, -1);
    lua_pop(L, 1);
    if (globals) return global_table(idx, depth);
    if (is_reference_type(t)) {
      lua_pushvalue(L, idx);
      if (lua_rawget(L, known_) == LUA_TSTRING) {
        tag(kKnown);
        size_t n;
        const char* s = lua_tolstring(L, -1, &n);
        bytes(s, n);
        lua_pop(L, 1);
        return;
      }
      lua_pop(L, 1);
    }
    if (t == LUA_TTABLE) return table(idx, key, depth);
    if (t == LUA_TFUNCTION) return function(idx, key, depth);
    if (Tensor* x = tensor_slot(L, idx)) return tensor(*x, key);
    if (SocketBox* s = to_socket(L, idx)) {
      TIDE_CHECK(s->fd >= 0, op_, ": cannot send a closed queue or pipe (at ", where(), ")");
      tag(kSocket);
      put<uint32_t>(remember(key));
      put<uint32_t>(attach(s->fd));
      return;
    }
    TIDE_FAIL(op_, ": cannot send a ", luaL_typename(L, idx), " to another process (at ", where(), ")");
  }

  std::string out;
  std::vector<int> fds;

 private:
  template <typename T>
  void put(T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void tag(Tag t) { out.push_back(char(t)); }
  void bytes(const char* s, size_t n) {
    put<uint64_t>(n);
    out.append(s, n);
  }
  uint32_t remember(const void* key) {
    uint32_t id = uint32_t(memo_order_.size());
    memo_[key] = id;
    memo_order_.push_back(key);
    return id;
  }
  uint32_t attach(int fd) {
    fds.push_back(fd);
    return uint32_t(fds.size() - 1);
  }
  std::string where() const {
    std::string s = "the value";
    for (const std::string& p : path_) s += p;
    return s;
  }
  // A key for error paths: [1], .name, or [?].
  std::string key_text(int idx) {
    if (lua_type(L, idx) == LUA_TSTRING) return "." + std::string(lua_tostring(L, idx));
    if (lua_isinteger(L, idx)) return "[" + std::to_string(lua_tointeger(L, idx)) + "]";
    return "[a " + std::string(luaL_typename(L, idx)) + " key]";
  }

  void table(int idx, const void* key, int depth) {
    tag(kTable);
    put<uint32_t>(remember(key));
    lua_checkstack(L, 8);
    lua_pushnil(L);
    while (lua_next(L, idx)) {
      path_.push_back(key_text(-2));
      value(-2, depth + 1);
      value(-1, depth + 1);
      path_.pop_back();
      lua_pop(L, 1);
    }
    tag(kEnd);
    if (lua_getmetatable(L, idx)) {
      path_.push_back("(metatable)");
      value(-1, depth + 1);
      path_.pop_back();
      lua_pop(L, 1);
    } else {
      tag(kNil);
    }
  }

  static int dump_writer(lua_State*, const void* p, size_t n, void* ud) {
    static_cast<std::string*>(ud)->append(static_cast<const char*>(p), n);
    return 0;
  }

  void function(int idx, const void* key, int depth) {
    TIDE_CHECK(!lua_iscfunction(L, idx), op_, ": cannot send a C function that belongs to no loaded module (at ",
               where(), ")");
    tag(kFunction);
    put<uint32_t>(remember(key));
    std::string code;
    lua_pushvalue(L, idx);
    lua_dump(L, dump_writer, &code, 0);
    lua_pop(L, 1);
    bytes(code.data(), code.size());
    int n = 0;
    while (lua_getupvalue(L, idx, n + 1)) lua_pop(L, 1), ++n;
    put<uint32_t>(uint32_t(n));
    for (int u = 1; u <= n; ++u) {
      const char* name = lua_getupvalue(L, idx, u);
      path_.push_back(std::string("(upvalue ") + (name && *name ? name : "?") + ")");
      value(-1, depth + 1);
      path_.pop_back();
      lua_pop(L, 1);
    }
  }

  // The globals: every string-keyed global but _G and arg. One that cannot be sent is
  // rolled back and named, with the reason, in the list of unavailable globals.
  void global_table(int idx, int depth) {
    tag(kGlobals);
    put<uint32_t>(remember(lua_topointer(L, idx)));
    std::vector<std::pair<std::string, std::string>> unavailable;
    for (const std::string& k : string_keys(L, idx)) {
      if (k == "_G" || k == "arg") continue;
      size_t mark = out.size(), nfds = fds.size(), nmemo = memo_order_.size();
      size_t nkeep = keep_.size();
      lua_pushstring(L, k.c_str());
      lua_rawget(L, idx);
      path_.push_back(" (global " + k + ")");
      try {
        tag(kString);
        bytes(k.data(), k.size());
        value(-1, depth + 1);
      } catch (const Error& e) {
        out.resize(mark);
        fds.resize(nfds);
        keep_.resize(nkeep);
        while (memo_order_.size() > nmemo) memo_.erase(memo_order_.back()), memo_order_.pop_back();
        unavailable.emplace_back(k, e.what());
      }
      path_.pop_back();
      lua_pop(L, 1);
    }
    tag(kEnd);
    for (auto& [k, why] : unavailable) {
      bytes(k.data(), k.size());
      bytes(why.data(), why.size());
    }
    tag(kEnd);
  }

  void tensor(const Tensor& x, const void* key) {
    TIDE_CHECK(x.defined(), op_, ": cannot send a freed tensor (at ", where(), ")");
    TIDE_CHECK(x.device().is_cpu(), op_, ": cannot send a tensor on ", x.device().str(),
               " to another process; move it to the CPU first (at ", where(), ")");
    TIDE_CHECK(autograd::is_leaf(x), op_, ": cannot send a tensor that is the result of a recorded op "
               "(it requires grad and has history); send x:detach() (at ", where(), ")");
    std::shared_ptr<Storage> storage = x.storage();
    int64_t offset = x.offset();
    Dims strides = x.strides();
    if (!storage->owns_memory() || storage->exported()) {  // memory that cannot move: a shared copy
      Tensor c = x.clone();
      storage = c.storage();
      offset = 0;
      strides = c.strides();
    }
    share_memory(storage, op_);
    keep_.push_back(storage);
    tag(kTensor);
    put<uint32_t>(remember(key));
    auto it = storage_index_.find(storage.get());
    uint32_t fd_index = it != storage_index_.end() ? it->second : attach(storage->shared_fd());
    storage_index_[storage.get()] = fd_index;
    put<uint32_t>(fd_index);
    put<uint64_t>(storage->nbytes());
    put<int64_t>(offset);
    put<uint8_t>(uint8_t(x.dtype()));
    put<uint8_t>(uint8_t(x.dim()));
    for (int d = 0; d < x.dim(); ++d) put<int64_t>(x.size(d));
    for (int d = 0; d < x.dim(); ++d) put<int64_t>(strides[d]);
    put<uint8_t>(autograd::requires_grad(x) ? 1 : 0);
  }

  lua_State* L;
  const char* op_;
  int known_;
  std::unordered_map<const void*, uint32_t> memo_;
  std::vector<const void*> memo_order_;
  std::unordered_map<const Storage*, uint32_t> storage_index_;
  std::vector<std::shared_ptr<Storage>> keep_;  // the storages whose descriptors are attached
  std::vector<std::string> path_;
};

class Reader {
 public:
  Reader(lua_State* L, ipc::Message& m, const char* op) : L(L), m_(m), op_(op) {
    lua_newtable(L);
    memo_ = lua_gettop(L);
  }
  ~Reader() { lua_remove(L, memo_); }

  // Pushes the next value.
  void value(int depth = 0) {
    TIDE_CHECK(depth < kMaxDepth + 2, op_, ": the message is corrupt (nested too deeply)");
    lua_checkstack(L, 8);
    switch (Tag(get<uint8_t>())) {
      case kNil: return lua_pushnil(L);
      case kFalse: return lua_pushboolean(L, 0);
      case kTrue: return lua_pushboolean(L, 1);
      case kInteger: return lua_pushinteger(L, get<int64_t>());
      case kFloat: return lua_pushnumber(L, get<double>());
      case kString: {
        std::string_view s = bytes();
        lua_pushlstring(L, s.data(), s.size());
        return;
      }
      case kRef: {
        uint32_t id = get<uint32_t>();
        TIDE_CHECK(lua_rawgeti(L, memo_, lua_Integer(id) + 1) != LUA_TNIL, op_, ": the message is corrupt (reference ", id, ")");
        return;
      }
      case kKnown: {
        std::string_view p = bytes();
        return push_path(L, std::string(p), op_);
      }
      case kTable: {
        uint32_t id = get<uint32_t>();
        lua_newtable(L);
        int t = lua_gettop(L);
        memo(id, t);
        while (peek() != kEnd) {
          value(depth + 1);
          value(depth + 1);
          TIDE_CHECK(!lua_isnil(L, -2), op_, ": the message is corrupt (a nil key)");
          lua_rawset(L, t);
        }
        ++pos_;
        value(depth + 1);
        if (lua_istable(L, -1)) lua_setmetatable(L, t);
        else lua_pop(L, 1);
        return;
      }
      case kFunction: {
        uint32_t id = get<uint32_t>();
        std::string_view code = bytes();
        if (luaL_loadbufferx(L, code.data(), code.size(), "=(sent function)", "b") != LUA_OK) {
          std::string e = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
          lua_pop(L, 1);
          TIDE_FAIL(op_, ": cannot load a sent function: ", e);
        }
        int f = lua_gettop(L);
        memo(id, f);
        uint32_t n = get<uint32_t>();
        for (uint32_t u = 1; u <= n; ++u) {
          value(depth + 1);
          if (!lua_setupvalue(L, f, int(u))) lua_pop(L, 1);
        }
        return;
      }
      case kGlobals: return globals(depth);
      case kTensor: return tensor();
      case kSocket: {
        uint32_t id = get<uint32_t>();
        push_socket(L, take_fd(get<uint32_t>()));
        memo(id, lua_gettop(L));
        return;
      }
      default: TIDE_FAIL(op_, ": the message is corrupt (unknown tag)");
    }
  }

  bool at_end() const { return pos_ == m_.bytes.size(); }

 private:
  template <typename T>
  T get() {
    TIDE_CHECK(pos_ + sizeof(T) <= m_.bytes.size(), op_, ": the message is corrupt (cut short)");
    T v;
    std::memcpy(&v, m_.bytes.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  uint8_t peek() {
    TIDE_CHECK(pos_ < m_.bytes.size(), op_, ": the message is corrupt (cut short)");
    return uint8_t(m_.bytes[pos_]);
  }
  std::string_view bytes() {
    uint64_t n = get<uint64_t>();
    TIDE_CHECK(n <= m_.bytes.size() - pos_, op_, ": the message is corrupt (cut short)");
    std::string_view s(m_.bytes.data() + pos_, n);
    pos_ += n;
    return s;
  }
  void memo(uint32_t id, int idx) {
    lua_pushvalue(L, idx);
    lua_rawseti(L, memo_, lua_Integer(id) + 1);
  }
  ipc::Fd take_fd(uint32_t i) {
    TIDE_CHECK(i < m_.fds.size() && m_.fds[i].get() >= 0, op_, ": the message is corrupt (descriptor ", i, ")");
    return std::move(m_.fds[i]);
  }

  // The receiver's globals, given the sender's: assigned into them; the ones the sender
  // could not send raise an error when read.
  void globals(int depth) {
    uint32_t id = get<uint32_t>();
    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    memo(id, g);
    while (peek() != kEnd) {
      value(depth + 1);
      value(depth + 1);
      lua_rawset(L, g);
    }
    ++pos_;
    if (peek() != kEnd) {
      lua_newtable(L);  // name -> reason
      int missing = lua_gettop(L);
      while (peek() != kEnd) {
        std::string_view k = bytes(), why = bytes();
        lua_pushlstring(L, k.data(), k.size());
        lua_pushlstring(L, why.data(), why.size());
        lua_rawset(L, missing);
      }
      if (!lua_getmetatable(L, g)) {
        lua_newtable(L);
        lua_pushvalue(L, missing);
        lua_pushcclosure(L, missing_global, 1);
        lua_setfield(L, -2, "__index");
        lua_setmetatable(L, g);
      } else {
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
    }
    ++pos_;
  }

  // __index of the receiver's globals: names a global that the sender had but could not send.
  static int missing_global(lua_State* L) {
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TSTRING) return 0;
    return luaL_error(L, "global '%s' of the parent process could not be sent to this one: %s",
                      lua_tostring(L, 2), lua_tostring(L, -1));
  }

  void tensor() {
    uint32_t id = get<uint32_t>();
    uint32_t fd_index = get<uint32_t>();
    uint64_t nbytes = get<uint64_t>();
    int64_t offset = get<int64_t>();
    uint8_t dt = get<uint8_t>();
    uint8_t ndim = get<uint8_t>();
    TIDE_CHECK(dt <= uint8_t(DType::Float64) && ndim <= kMaxDims, op_, ": the message is corrupt (a tensor)");
    Dims sizes, strides;
    for (int d = 0; d < ndim; ++d) sizes.push_back(get<int64_t>());
    for (int d = 0; d < ndim; ++d) strides.push_back(get<int64_t>());
    bool requires_grad = get<uint8_t>() != 0;
    std::shared_ptr<Storage> storage;
    if (auto it = storages_.find(fd_index); it != storages_.end()) {
      storage = it->second;
    } else {
      storage = storage_from_shared_fd(take_fd(fd_index).release(), nbytes, op_);
      storages_[fd_index] = storage;
    }
    Tensor t = Tensor::make_view(storage, sizes, strides, offset, DType(dt));
    if (requires_grad) autograd::set_requires_grad(t, true, op_);
    push_tensor(L, std::move(t));
    memo(id, lua_gettop(L));
  }

  lua_State* L;
  ipc::Message& m_;
  const char* op_;
  size_t pos_ = 0;
  int memo_;
  std::unordered_map<uint32_t, std::shared_ptr<Storage>> storages_;
};

// ---- bindings

int share_memory_fn(lua_State* L, Args& a) {
  share_memory(a.tensor(1).storage(), a.op);
  lua_pushvalue(L, 1);
  return 1;
}

int is_shared_fn(lua_State* L, Args& a) {
  lua_pushboolean(L, a.tensor(1).storage()->shared_fd() >= 0);
  return 1;
}

int socket_pair_fn(lua_State* L, Args& a) {
  auto [x, y] = ipc::socket_pair(a.op);
  push_socket(L, std::move(x));
  push_socket(L, std::move(y));
  return 2;
}

int close_fn(lua_State* L, Args& a) {
  a.consumed(1);
  if (!to_socket(L, 1)) a.error("argument 1 is not a multiprocessing socket");
  lua_settop(L, 1);
  socket_gc(L);
  return 0;
}

// _send(socket, value): one message holding the value.
int send_fn(lua_State* L, Args& a) {
  int fd = socket_arg(a, 1);
  a.consumed(2);
  std::string bytes;
  std::vector<int> fds;
  {
    Writer w(L, a.op);
    w.value(2);
    bytes = std::move(w.out);
    fds = std::move(w.fds);
  }
  ipc::send(fd, bytes, fds, a.op);
  return 0;
}

// _recv(socket[, timeout]) -> true, value | false (nothing within timeout seconds)
int recv_fn(lua_State* L, Args& a) {
  int fd = socket_arg(a, 1);
  double timeout = a.has(2) ? a.number(2) : -1;
  ipc::Message m;
  if (!ipc::recv(fd, m, timeout, a.op)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, 1);
  Reader r(L, m, a.op);
  r.value();
  TIDE_CHECK(r.at_end(), a.op, ": the message is corrupt (trailing bytes)");
  return 2;
}

int readable_fn(lua_State* L, Args& a) {
  int fd = socket_arg(a, 1);
  lua_pushboolean(L, ipc::readable(fd, a.has(2) ? a.number(2) : 0.0));
  return 1;
}

// The environment of a worker: this process's, without the launcher variables of MPI (a
// worker is not a rank) and with TIDE_MP_WORKER set.
std::vector<std::string> worker_environment() {
  static const char* const dropped[] = {"OMPI_", "PMIX_", "PMI_", "TIDE_MP_WORKER="};
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view v(*e);
    bool drop = false;
    for (const char* p : dropped) drop = drop || v.rfind(p, 0) == 0;
    if (!drop) env.emplace_back(v);
  }
  env.emplace_back("TIDE_MP_WORKER=1");
  return env;
}

// The workers this process started and has not reaped yet: _wait_child and _kill act on
// these only, never on another process's id.
std::mutex g_children_mu;
std::unordered_set<pid_t> g_children;

pid_t worker_arg(Args& a) {
  int64_t pid = a.integer(1);
  std::lock_guard<std::mutex> lock(g_children_mu);
  if (pid <= 0 || pid > INT32_MAX || !g_children.count(pid_t(pid)))
    a.error("process " + std::to_string(pid) + " is not a running worker started by this process");
  return pid_t(pid);
}

// _spawn_worker(socket) -> pid: starts the tide program running torch.multiprocessing's
// worker loop, with the socket as its descriptor 3.
int spawn_worker_fn(lua_State* L, Args& a) {
  int fd = socket_arg(a, 1);
  std::string tide = ipc::program_path(a.op);
  pid_t pid = ipc::spawn({tide, "-e", "torch.multiprocessing._worker_main()"}, worker_environment(), fd, a.op);
  {
    std::lock_guard<std::mutex> lock(g_children_mu);
    g_children.insert(pid);
  }
  lua_pushinteger(L, pid);
  return 1;
}

// _bootstrap_socket() -> socket: descriptor 3 of a worker started by _spawn_worker.
int bootstrap_socket_fn(lua_State* L, Args& a) {
  const char* env = std::getenv("TIDE_MP_WORKER");
  TIDE_CHECK(env && std::strcmp(env, "1") == 0 && fcntl(3, F_GETFD) >= 0, a.op,
             ": this process was not started as a worker");
  unsetenv("TIDE_MP_WORKER");
  fcntl(3, F_SETFD, FD_CLOEXEC);
  push_socket(L, ipc::Fd(3));
  return 1;
}

void push_status(lua_State* L, const ipc::ExitStatus& s) {
  lua_createtable(L, 0, 3);
  lua_pushboolean(L, s.signaled);
  lua_setfield(L, -2, "signaled");
  lua_pushinteger(L, s.code);
  lua_setfield(L, -2, "code");
  lua_pushstring(L, s.str().c_str());
  lua_setfield(L, -2, "text");
}

// _wait_child(pid[, timeout]) -> {signaled=, code=, text=} | nil while it runs.
int wait_child_fn(lua_State* L, Args& a) {
  pid_t pid = worker_arg(a);
  double timeout = a.has(2) ? a.number(2) : 0.0;
  auto s = timeout == 0 ? ipc::poll_child(pid) : ipc::wait_child(pid, timeout);
  if (!s) return 0;
  {
    std::lock_guard<std::mutex> lock(g_children_mu);
    g_children.erase(pid);
  }
  push_status(L, *s);
  return 1;
}

int kill_fn(lua_State*, Args& a) {
  pid_t pid = worker_arg(a);
  int64_t sig = a.has(2) ? a.integer(2) : SIGTERM;
  TIDE_CHECK(sig > 0 && sig < 65, a.op, ": bad signal ", sig);
  kill(pid, int(sig));
  return 0;
}

int pid_fn(lua_State* L, Args&) {
  lua_pushinteger(L, getpid());
  return 1;
}

int cpu_count_fn(lua_State* L, Args&) {
  unsigned n = std::thread::hardware_concurrency();
  lua_pushinteger(L, n == 0 ? 1 : n);
  return 1;
}

const Binding kMultiprocessingBindings[] = {
    {"share_memory_", share_memory_fn, METHOD,
     "share_memory_(x) -> x: moves the storage of x (and of every view of it) to shared memory, in place, so that "
     "processes it is sent to use the same bytes; nothing happens when it is shared already."},
    {"is_shared", is_shared_fn, METHOD, "is_shared(x) -> boolean: whether the storage of x is in shared memory."},
    {"multiprocessing._socket_pair", socket_pair_fn, TORCH,
     "multiprocessing._socket_pair() -> a, b: two connected record sockets (what Queue and Pipe are made of)."},
    {"multiprocessing._close", close_fn, TORCH, "multiprocessing._close(socket): closes this process's end."},
    {"multiprocessing._send", send_fn, TORCH,
     "multiprocessing._send(socket, value): sends one message holding the value (tensors by shared-memory handle)."},
    {"multiprocessing._recv", recv_fn, TORCH,
     "multiprocessing._recv(socket[, timeout]) -> true, value | false: the next message, waiting up to timeout "
     "seconds (without a limit when absent)."},
    {"multiprocessing._readable", readable_fn, TORCH,
     "multiprocessing._readable(socket[, timeout]) -> boolean: whether a message waits, after up to timeout seconds."},
    {"multiprocessing._spawn_worker", spawn_worker_fn, TORCH,
     "multiprocessing._spawn_worker(socket) -> pid: starts a tide worker process with the socket as its channel."},
    {"multiprocessing._bootstrap_socket", bootstrap_socket_fn, TORCH,
     "multiprocessing._bootstrap_socket() -> socket: a worker's channel to the process that started it."},
    {"multiprocessing._wait_child", wait_child_fn, TORCH,
     "multiprocessing._wait_child(pid[, timeout]) -> status | nil: how a child process ended (a table with "
     "fields signaled, code and text), waiting up to timeout seconds; nil while it runs."},
    {"multiprocessing._kill", kill_fn, TORCH, "multiprocessing._kill(pid[, signal]): sends a signal (SIGTERM by default)."},
    {"multiprocessing.cpu_count", cpu_count_fn, TORCH,
     "multiprocessing.cpu_count() -> integer: the number of CPUs (hardware threads) of this machine."},
    {"multiprocessing._getpid", pid_fn, TORCH, "multiprocessing._getpid() -> integer: this process's id."},
};

}  // namespace

void register_multiprocessing_bindings() {
  register_bindings(kMultiprocessingBindings, std::size(kMultiprocessingBindings));
}

}  // namespace tide::lua
