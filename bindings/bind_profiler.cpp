// torch.profiler's C++ half: starting and stopping the recording core (tensor/profiler/) and
// the ranges of record_function. The profile object, key_averages, the table and the Chrome
// trace are Lua-written (bindings/lua/torch_profiler.lua). The bindings here are named
// profiler.* so that the dispatcher does not record them as ops (bindings/lua_api.cpp).
#include <iterator>

#include "../tensor/profiler/profiler.hpp"
#include "lua_api.hpp"

namespace tide::lua {

namespace {

// profiler._start(record_shapes, profile_memory, with_stack) -> session id
int start_fn(lua_State* L, Args& a) {
  profiler::Options o;
  o.record_shapes = a.boolean(1);
  o.profile_memory = a.boolean(2);
  o.with_stack = a.boolean(3);
  TIDE_CHECK(!profiler::recording(), "profiler._start: a profiler is already recording (one at a time)");
  lua_pushinteger(L, profiler::start(o));
  return 1;
}

void push_int_list(lua_State* L, const std::vector<int64_t>& v) {
  lua_createtable(L, int(v.size()), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
}

// profiler._stop() -> events: each a table of name, kind ("op", "backward" or "user"), start
// and end (microseconds since the start), parent (the 1-based index of the enclosing event,
// nil at the top), and shapes, memory and stack when the session recorded them.
int stop_fn(lua_State* L, Args&) {
  TIDE_CHECK(profiler::recording(), "profiler._stop: no profiler is recording");
  profiler::Options o = profiler::options();
  std::vector<profiler::Event> events = profiler::stop();
  lua_createtable(L, int(events.size()), 0);
  for (size_t i = 0; i < events.size(); ++i) {
    const profiler::Event& e = events[i];
    lua_createtable(L, 0, 7);
    lua_pushlstring(L, e.name.data(), e.name.size());
    lua_setfield(L, -2, "name");
    static const char* const kinds[] = {"op", "backward", "user"};
    lua_pushstring(L, kinds[int(e.kind)]);
    lua_setfield(L, -2, "kind");
    lua_pushnumber(L, double(e.start_ns) / 1000);
    lua_setfield(L, -2, "start");
    lua_pushnumber(L, double(e.end_ns) / 1000);
    lua_setfield(L, -2, "end");
    if (e.parent >= 0) {
      lua_pushinteger(L, e.parent + 1);
      lua_setfield(L, -2, "parent");
    }
    if (o.record_shapes) {
      lua_createtable(L, int(e.shapes.size()), 0);
      for (size_t k = 0; k < e.shapes.size(); ++k) {
        push_int_list(L, e.shapes[k]);
        lua_rawseti(L, -2, lua_Integer(k + 1));
      }
      lua_setfield(L, -2, "shapes");
    }
    if (o.profile_memory) {
      lua_pushinteger(L, e.memory);
      lua_setfield(L, -2, "memory");
    }
    if (o.with_stack) {
      lua_createtable(L, int(e.stack.size()), 0);
      for (size_t k = 0; k < e.stack.size(); ++k) {
        lua_pushlstring(L, e.stack[k].data(), e.stack[k].size());
        lua_rawseti(L, -2, lua_Integer(k + 1));
      }
      lua_setfield(L, -2, "stack");
    }
    lua_rawseti(L, -2, lua_Integer(i + 1));
  }
  return 1;
}

int recording_fn(lua_State* L, Args&) {
  if (uint32_t id = profiler::current_session()) lua_pushinteger(L, id);
  else lua_pushnil(L);
  return 1;
}

// profiler._push(name) -> token: opens a range (-1 when no profiler records on this thread).
int push_fn(lua_State* L, Args& a) {
  lua_pushinteger(L, profiler::begin(a.string(1), profiler::Kind::User));
  return 1;
}

// profiler._pop(token): closes it (and ranges left open inside it).
int pop_fn(lua_State*, Args& a) {
  profiler::end(a.integer(1));
  return 0;
}

const Binding kProfilerBindings[] = {
    {"profiler._start", start_fn, TORCH,
     "profiler._start(record_shapes, profile_memory, with_stack) -> id: starts recording a session (torch.profiler.profile "
     "calls it)."},
    {"profiler._stop", stop_fn, TORCH,
     "profiler._stop() -> events: stops recording; each event a table of name, kind, start, end (microseconds), "
     "parent, shapes, memory, stack."},
    {"profiler._recording", recording_fn, TORCH, "profiler._recording() -> id or nil: the recording session's id (nil when no profiler records)."},
    {"profiler._push", push_fn, TORCH,
     "profiler._push(name) -> token: opens a record_function range (-1 when no profiler records)."},
    {"profiler._pop", pop_fn, TORCH, "profiler._pop(token): closes a record_function range."},
};

}  // namespace

void register_profiler_bindings() { register_bindings(kProfilerBindings, std::size(kProfilerBindings)); }

}  // namespace tide::lua
