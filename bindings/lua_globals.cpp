// Reads a function's bytecode through lua_dump (Lua 5.4's dump format, lundump.c) to list the
// constant keys it indexes its _ENV upvalue with. Lua 5.4 compiles a global access `x` to
// GETTABUP/SETTABUP on that upvalue with a constant string key; any other use of the upvalue
// (GETUPVAL, SETUPVAL) hands the table itself to code that may read any field.
#include "lua_globals.hpp"

#include <lua.hpp>

#include <cstdint>
#include <cstring>
#include <set>

namespace tide::lua {

namespace {

// Lua 5.4's opcodes that touch upvalues (lopcodes.h; the same in every 5.4 release, and
// checked against a probe before the first use).
constexpr unsigned kGetUpval = 9, kSetUpval = 10, kGetTabUp = 11, kSetTabUp = 15;

// One function of a dump: what the scan needs of lundump.c's Proto.
struct Proto {
  std::vector<uint32_t> code;
  std::vector<std::optional<std::string>> strings;  // constants; nullopt for the other kinds
  std::vector<std::pair<unsigned, unsigned>> upvalues;  // (instack, idx) as lundump.c reads them
  std::vector<Proto> protos;
};

// A cursor over a dump; a read past the end (or a malformed field) marks it bad.
struct Reader {
  const unsigned char* p;
  const unsigned char* end;
  bool bad = false;

  unsigned byte() {
    if (p >= end) {
      bad = true;
      return 0;
    }
    return *p++;
  }
  void skip(size_t n) {
    if (size_t(end - p) < n) bad = true, p = end;
    else p += n;
  }
  // lundump.c's loadUnsigned: 7-bit groups, most significant first, the last with bit 7 set.
  size_t varint() {
    size_t x = 0;
    for (int i = 0; i < 10 && !bad; ++i) {
      const unsigned b = byte();
      x = (x << 7) | (b & 0x7f);
      if (b & 0x80) return x;
    }
    bad = true;
    return 0;
  }
  // A count of items of at least `min_bytes` each, bounded by what is left.
  size_t count(size_t min_bytes) {
    const size_t n = varint();
    if (n > size_t(end - p) / min_bytes) bad = true;
    return bad ? 0 : n;
  }
  // A string: its length plus one (0 for none), then the bytes.
  std::optional<std::string> string() {
    const size_t n = varint();
    if (n == 0 || bad) return std::nullopt;
    if (size_t(end - p) < n - 1) {
      bad = true;
      return std::nullopt;
    }
    std::string s(reinterpret_cast<const char*>(p), n - 1);
    p += n - 1;
    return s;
  }

  // lundump.c's loadFunction (debug information read past).
  void function(Proto& f, int depth) {
    if (depth > 200) {
      bad = true;
      return;
    }
    string();              // source
    varint(), varint();    // linedefined, lastlinedefined
    skip(3);               // numparams, is_vararg, maxstacksize
    f.code.resize(count(4));
    for (auto& ins : f.code) {
      unsigned char b[4];
      for (auto& x : b) x = static_cast<unsigned char>(byte());
      std::memcpy(&ins, b, 4);
    }
    f.strings.resize(count(1));
    for (auto& c : f.strings) {
      switch (byte()) {
        case 3: case 19: skip(8); break;       // integer, float
        case 4: case 20: c = string(); break;  // short, long string
        case 0: case 1: case 17: break;        // nil, false, true
        default: bad = true;
      }
      if (bad) return;
    }
    f.upvalues.resize(count(3));
    for (auto& [instack, idx] : f.upvalues) {
      instack = byte(), idx = byte();
      byte();  // kind
    }
    f.protos.resize(count(1));
    for (auto& p : f.protos) {
      if (bad) return;
      function(p, depth + 1);
    }
    // Debug information: line info, absolute line info, local variables, upvalue names.
    skip(count(1));
    for (size_t i = count(2); i > 0 && !bad; --i) varint(), varint();
    for (size_t i = count(3); i > 0 && !bad; --i) string(), varint(), varint();
    for (size_t i = count(1); i > 0 && !bad; --i) string();
  }
};

// lua_dump's writer: appends to a std::string.
int append(lua_State*, const void* p, size_t n, void* out) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(p), n);
  return 0;
}

// The dump's header (lundump.c's checkHeader) for this build's sizes; then the main
// function's upvalue count byte.
bool header(Reader& r) {
  static const unsigned char expect[] = {0x1b, 'L', 'u', 'a', 0x54, 0, 0x19, 0x93, '\r', '\n', 0x1a, '\n',
                                         4, sizeof(lua_Integer), sizeof(lua_Number)};
  for (unsigned char c : expect)
    if (r.byte() != c) return false;
  r.skip(sizeof(lua_Integer) + sizeof(lua_Number) + 1);  // LUAC_INT, LUAC_NUM, sizeupvalues
  return !r.bad;
}

// The names f (whose upvalues in `env` hold the table) and its nested functions index that
// table with; false when one uses the table as a value.
bool collect(const Proto& f, const std::vector<bool>& env, std::set<std::string>& names) {
  auto is_env = [&](unsigned u) { return u < env.size() && env[u]; };
  auto key = [&](unsigned k) {
    if (k >= f.strings.size() || !f.strings[k]) return false;
    names.insert(*f.strings[k]);
    return true;
  };
  for (uint32_t ins : f.code) {
    const unsigned op = ins & 0x7f, a = (ins >> 7) & 0xff, b = (ins >> 16) & 0xff, c = (ins >> 24) & 0xff;
    if (op == kGetTabUp && is_env(b) && !key(c)) return false;
    if (op == kSetTabUp && is_env(a) && !key(b)) return false;
    if ((op == kGetUpval || op == kSetUpval) && is_env(b)) return false;
  }
  for (const Proto& p : f.protos) {
    std::vector<bool> inner(p.upvalues.size());
    for (size_t u = 0; u < p.upvalues.size(); ++u) inner[u] = p.upvalues[u].first == 0 && is_env(p.upvalues[u].second);
    if (!collect(p, inner, names)) return false;
  }
  return true;
}

std::optional<std::vector<std::string>> scan(lua_State* L, int idx, int env_upvalue) {
  if (lua_type(L, idx) != LUA_TFUNCTION || lua_iscfunction(L, idx) || env_upvalue < 1) return std::nullopt;
  std::string dump;
  lua_pushvalue(L, idx);
  const int rc = lua_dump(L, append, &dump, 0);
  lua_pop(L, 1);
  if (rc != 0) return std::nullopt;
  Reader r{reinterpret_cast<const unsigned char*>(dump.data()), reinterpret_cast<const unsigned char*>(dump.data()) + dump.size()};
  if (!header(r)) return std::nullopt;
  Proto f;
  r.function(f, 0);
  if (r.bad || size_t(env_upvalue) > f.upvalues.size()) return std::nullopt;
  std::vector<bool> env(f.upvalues.size());
  env[size_t(env_upvalue - 1)] = true;
  std::set<std::string> names;
  if (!collect(f, env, names)) return std::nullopt;
  return std::vector<std::string>(names.begin(), names.end());
}

// Whether scan() reads this Lua's bytecode right: a probe reading one global, writing another
// in a nested function, and one using _ENV as a value.
bool reader_works(lua_State* L) {
  static const char* kProbe =
      "local t = ...\n"
      "return function() local f = function() probe_w = 1 end; return probe_r + t end,\n"
      "       function() return _ENV end";
  if (luaL_loadstring(L, kProbe) != LUA_OK) {
    lua_pop(L, 1);
    return false;
  }
  lua_pushinteger(L, 0);
  if (lua_pcall(L, 1, 2, 0) != LUA_OK) {
    lua_pop(L, 1);
    return false;
  }
  auto upvalue_named_env = [&](int fn) {
    for (int i = 1; const char* name = lua_getupvalue(L, fn, i); ++i) {
      lua_pop(L, 1);
      if (std::strcmp(name, "_ENV") == 0) return i;
    }
    return 0;
  };
  const int top = lua_gettop(L);
  const auto reads = scan(L, top - 1, upvalue_named_env(top - 1));
  const auto as_value = scan(L, top, upvalue_named_env(top));
  lua_pop(L, 2);
  return reads == std::vector<std::string>{"probe_r", "probe_w"} && !as_value;
}

}  // namespace

std::optional<std::vector<std::string>> globals_used(lua_State* L, int idx, int env_upvalue) {
  static const bool works = reader_works(L);
  if (!works) return std::nullopt;
  return scan(L, lua_absindex(L, idx), env_upvalue);
}

}  // namespace tide::lua
