-- The complex number as a Lua value: a table {real = re, imag = im} with this metatable
-- (made by C++ for item(), tolist() and indexing; see bindings/complex_value.hpp). It has
-- + - * / and unary minus with Lua numbers and other complex numbers (a tensor operand hands
-- the operation to the tensor's operator), == between two complex numbers, and Python's
-- repr "(1+2j)" as its string. torch.complex(re, im) / np.complex(re, im) make one, and
-- torch.j / np.j is the imaginary unit: 3 + 4*np.j is Python's 3+4j.
local torch = ...
local mt = torch._complex_mt
mt.__name = "complex"

local function new(re, im) return setmetatable({real = re, imag = im}, mt) end

-- The parts of a number or complex number; nil for anything else.
local function parts(v)
  if type(v) == "number" then return v + 0.0, 0.0 end
  if getmetatable(v) == mt then return v.real, v.imag end
  return nil
end

-- A binary operator: with a tensor operand, the tensor's own metamethod; else f on the parts.
local function binary(event, f)
  return function(a, b)
    if torch.is_tensor(a) or torch.is_tensor(b) then
      return getmetatable(torch.is_tensor(a) and a or b)[event](a, b)
    end
    local ar, ai = parts(a)
    local br, bi = parts(b)
    if not ar or not br then
      error("complex: cannot apply " .. event:sub(3) .. " to a " .. type(ar and b or a), 2)
    end
    return new(f(ar, ai, br, bi))
  end
end

mt.__add = binary("__add", function(ar, ai, br, bi) return ar + br, ai + bi end)
mt.__sub = binary("__sub", function(ar, ai, br, bi) return ar - br, ai - bi end)
mt.__mul = binary("__mul", function(ar, ai, br, bi) return ar * br - ai * bi, ar * bi + ai * br end)
-- Smith's algorithm, as CPython and NumPy divide; a zero divisor gives inf/nan as NumPy's.
mt.__div = binary("__div", function(ar, ai, br, bi)
  local abr, abi = math.abs(br), math.abs(bi)
  if abr >= abi then
    if abr == 0 then return ar / abr, ai / abr end
    local ratio = bi / br
    local denom = br + bi * ratio
    return (ar + ai * ratio) / denom, (ai - ar * ratio) / denom
  elseif abi >= abr then
    local ratio = br / bi
    local denom = br * ratio + bi
    return (ar * ratio + ai) / denom, (ai * ratio - ar) / denom
  end
  return 0 / 0, 0 / 0  -- a nan part
end)
mt.__unm = function(a) return new(-a.real, -a.imag) end
mt.__eq = function(a, b)
  local ar, ai = parts(a)
  local br, bi = parts(b)
  return ar == br and ai == bi
end

-- Python's repr of a float (the shortest digits that read back; exponent form below 1e-4
-- and from 1e16), without the ".0" that complex's repr leaves out.
local function repr(x, signed)
  local sign = (x < 0 or (x == 0 and 1 / x < 0)) and "-" or (signed and "+" or "")
  if x ~= x then return (signed and "+" or "") .. "nan" end
  x = math.abs(x)
  if x == math.huge then return sign .. "inf" end
  local s
  for p = 0, 16 do
    s = string.format("%." .. p .. "e", x)
    if tonumber(s) == x then break end
  end
  local mantissa, exp = s:match("^([%d%.]+)e([-+]%d+)$")
  local digits = mantissa:gsub("%.", ""):gsub("0+$", "")
  if digits == "" then digits = "0" end
  exp = tonumber(exp)
  if x == 0 then return sign .. "0" end
  if exp < -4 or exp >= 16 then
    local m = digits:sub(1, 1) .. (#digits > 1 and "." .. digits:sub(2) or "")
    return string.format("%s%se%s%02d", sign, m, exp < 0 and "-" or "+", math.abs(exp))
  end
  if exp < 0 then return sign .. "0." .. string.rep("0", -exp - 1) .. digits end
  if #digits <= exp + 1 then return sign .. digits .. string.rep("0", exp + 1 - #digits) end
  return sign .. digits:sub(1, exp + 1) .. "." .. digits:sub(exp + 2)
end

mt.__tostring = function(c)
  if c.real == 0 and 1 / c.real > 0 then return repr(c.imag) .. "j" end
  return "(" .. repr(c.real) .. repr(c.imag, true) .. "j)"
end

torch.j = new(0.0, 1.0)
