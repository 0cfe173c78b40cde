// Opening tide in a lua_State: the `torch` and `numpy` modules and the program's globals.
#pragma once
#include <lua.hpp>

extern "C" int luaopen_torch(lua_State* L);
extern "C" int luaopen_numpy(lua_State* L);
extern "C" int luaopen_torch_nn(lua_State* L);
extern "C" int luaopen_torch_optim(lua_State* L);

namespace tide::lua {

// Registers package.preload["torch"], ["numpy"], ["torch.nn"] and ["torch.optim"]; with `globals`, also requires them and
// sets the globals torch, np, nn and optim (as the tide program and its REPL do).
void open_tide(lua_State* L, bool globals);

}  // namespace tide::lua
