// Mixed precision (torch.autocast): the per-thread autocast state and the one cast policy,
// a table from op name to cast rule per device (bindings/bind_amp.cpp, from PyTorch's
// autocast_mode.cpp lists). It is applied in one place for the C++ bindings (the binding
// dispatcher in lua_api.cpp casts a call's tensor arguments before the binding runs) and by
// one wrapper for Lua-written functions (torch._autocast_wrap, installed by
// bindings/lua/torch_amp.lua on every Lua function stored under a policy name in torch or
// nn.functional). Included by lua_api.cpp, modules.cpp and bind_amp.cpp only.
#pragma once
#include <lua.hpp>

#include <cstdint>

namespace tide::lua::autocast {

// The rules of the policy (PyTorch's CastPolicy names):
// - LowerPrecision: float32 (and low-precision) tensor arguments in the autocast dtype;
// - Fp32: floating tensor arguments in float32;
// - Fp32SetOptDtype: as Fp32 unless the call gives dtype= itself;
// - Promote: floating tensor arguments in the widest floating dtype among them;
// - Banned: an error (binary_cross_entropy on CUDA, as PyTorch).
// float64 tensors are never cast, nor tensors on a device whose autocast is off.
enum class Rule : uint8_t { None, LowerPrecision, Fp32, Fp32SetOptDtype, Promote, Banned };

// The rules of an op on the CPU and on CUDA, packed into one integer (0: not in the policy),
// so that a binding's closure keeps them as an upvalue.
int packed_rules(const char* name);

// Whether a cast may be due: autocast is on for some device and no autocast-wrapped Lua
// function is running (PyTorch runs the body of an autocast op with autocast off).
bool active();
// Whether f is the C function behind the closures _autocast_wrap makes (torch.compile lets a
// recorded function call them: they only call the wrapped Lua function).
bool is_wrapper(lua_CFunction f);

// Casts the tensor arguments at stack indices first..top (and those directly inside a plain
// table among them: a keyword table, a list for cat) per the rules of op; a table holding
// one that changes is replaced by a copy, the caller's table is left as it is. A call with
// out= is left alone, as PyTorch autocasts no out= variant. Returns whether a rule applied
// (autocast on for the op's device, which is that of its first tensor argument, and a rule
// there). Throws tide::Error for a banned op.
bool cast_arguments(lua_State* L, int first, int packed, const char* op);

void register_amp_bindings();

}  // namespace tide::lua::autocast
