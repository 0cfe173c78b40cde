// Argument readers shared by the creation bindings (bind_creation.cpp) and np.random
// (bind_random.cpp): shapes, NumPy's size=, numbers and integers given as a positional or
// as a keyword.
#pragma once
#include <optional>
#include <string>

#include "lua_api.hpp"

namespace tide::lua {

std::string num_str(double v);                       // "%.14g", nan, inf
const char* type_name(lua_State* L, int idx);        // "tensor" or Lua's type name
Dims shape_value(const Args& a, int idx);            // one number or a table of numbers
Dims shape_args(const Args& a, int first, int last);  // one table, or numbers
// NumPy's trailing positional dtype string: the index of the last other positional.
int strip_dtype_string(const Args& a, std::optional<DType>& dtype, int min_last);
std::optional<DType> dtype_kw(const Args& a);
// The stack index of positional pos or else keyword kw (0: neither); `pushed` says the
// caller must pop the keyword's value. Both given is an error.
int arg_or_kw(const Args& a, int pos, const char* kw, bool& pushed);
// An optional shape from positional pos or the keyword (np.random's size=).
std::optional<Dims> size_arg(const Args& a, int pos, const char* kw = "size");
std::optional<double> number_arg(const Args& a, int pos, const char* kw);
std::optional<int64_t> integer_arg(const Args& a, int pos, const char* kw);
// Pushes a tensor, or its only value when `scalar` (np.random.rand() returns a number).
int push_result(lua_State* L, const Tensor& t, bool scalar);

}  // namespace tide::lua
