-- NumPy's contractions: einsum, einsum_path, tensordot, inner, kron. The work is torch._contract's
-- (bindings/lua/torch_contract.lua); this file gives the NumPy names, defaults and keywords.
local np = ...
local torch = require("torch")
local C = torch._contract

-- Refuses arguments past the n a function takes (the extras are `...`; Lua would drop them).
local function arity(op, n, ...)
  for k = select("#", ...), 1, -1 do
    if select(k, ...) ~= nil then error(op .. ": takes " .. n .. " arguments, got " .. n + k, 0) end
  end
end

-- np.einsum(subscripts, a, b, ...[, {optimize=}]): optimize defaults to false (left to right,
-- as NumPy's default does without a path).
function np.einsum(subscripts, ...)
  local tensors, kw = C.einsum_args("np.einsum", subscripts, ...)
  local how = C.strategy("np.einsum", kw.optimize, #tensors) or "left"
  return C.einsum("np.einsum", subscripts, tensors, how)
end

-- np.einsum_path(subscripts, a, b, ...[, {optimize=}]) -> {"einsum_path", {i, j}, ...}: the
-- pairs (1-based positions in the shrinking operand list, the result appended last) einsum
-- contracts; optimize defaults to "greedy" as in NumPy.
function np.einsum_path(subscripts, ...)
  local tensors, kw = C.einsum_args("np.einsum_path", subscripts, ...)
  local how = C.strategy("np.einsum_path", kw.optimize, #tensors) or "greedy"
  local path = C.einsum_path("np.einsum_path", subscripts, tensors, how)
  local out = {"einsum_path"}
  for _, step in ipairs(path) do out[#out + 1] = {step[1], step[2]} end
  return out
end

-- np.tensordot(a, b[, axes][, {axes=}]): axes an integer (default 2) or {{dims of a}, {dims of b}}.
function np.tensordot(a, b, axes, ...)
  arity("np.tensordot", 3, ...)
  if type(axes) == "table" and not torch.is_tensor(axes) and axes[1] == nil then  -- {axes=}
    torch._check_keywords("np.tensordot", axes, {"axes"})
    axes = axes.axes
  end
  if axes == nil then axes = 2 end
  return C.tensordot("np.tensordot", a, b, axes)
end

function np.inner(a, b, ...)
  arity("np.inner", 2, ...)
  return C.inner("np.inner", a, b)
end

function np.kron(a, b, ...)
  arity("np.kron", 2, ...)
  return C.kron("np.kron", a, b)
end
