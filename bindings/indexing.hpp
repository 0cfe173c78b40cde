// Indexing from Lua: x[i], x[{i, j}], x[{{a, b}, ":"}], x[mask], x[idx] and their assignment.
// Implemented in bind_index.cpp; called by the Tensor metatable's __index / __newindex.
#pragma once
#include "lua_api.hpp"

namespace tide::lua {

// Pushes x[key] (key at stack index key_idx: number, table, tensor). Returns results pushed.
int tensor_index_get(lua_State* L, Args& a, const Tensor& x, int key_idx);
// x[key] = value (value at stack index value_idx: number, boolean or tensor).
void tensor_index_set(lua_State* L, Args& a, Tensor& x, int key_idx, int value_idx);

}  // namespace tide::lua
