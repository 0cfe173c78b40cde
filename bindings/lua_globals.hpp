// The global names a Lua function reads and writes, from its bytecode (torch.compile's guard
// walks only these fields of the function's _ENV rather than the whole global table).
#pragma once

#include <optional>
#include <string>
#include <vector>

struct lua_State;

namespace tide::lua {

// The names the Lua function at idx reaches through its upvalue `env_upvalue` (1-based, as
// lua_getupvalue counts; the one named _ENV), in it and in the functions it defines: the
// constant keys of every read and write (`x`, `x = v`), sorted and unique. nullopt when the
// function also uses that table as a value (`local e = _ENV`, `_ENV = t`), or when the
// running Lua's bytecode is not the layout this reader knows (checked once against a probe):
// the caller then walks the whole table.
std::optional<std::vector<std::string>> globals_used(lua_State* L, int idx, int env_upvalue);

}  // namespace tide::lua
