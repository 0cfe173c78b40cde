// The complex number as a Lua value (Lua has none): a table {real = re, imag = im} whose
// metatable (registry "tide.complex", filled in by bindings/lua/torch_complex.lua) gives it
// arithmetic, ==, and NumPy's "(1+2j)" printing. item(), tolist() and indexing return one
// for complex elements; ops that take complex operands accept one wherever they accept a
// number. Which bindings take complex operands at all is decided here (complex_capable).
#pragma once
#include <lua.hpp>

namespace tide::lua {

constexpr const char* kComplexMeta = "tide.complex";

void push_complex(lua_State* L, double re, double im);
// Whether the value at idx is a complex number; its parts go to re and im.
bool complex_value(lua_State* L, int idx, double& re, double& im);

// Whether the binding `name` handles complex tensors and numbers. Every other binding given
// one fails with "<name>: complex64 is not supported" before it runs (lua_api.cpp), so no
// op computes on the real part of a complex operand by an implicit cast.
bool complex_capable(const char* name);

void register_complex_bindings();

}  // namespace tide::lua
