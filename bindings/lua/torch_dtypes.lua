-- The limits of the dtypes: torch.iinfo and torch.finfo (NumPy's np.iinfo / np.finfo in
-- numpy_dtypes.lua share the tables built here). Each returns a table of plain Lua numbers.
local torch = ...

-- bits, precision (decimal digits), eps, max and smallest normal of the floating dtypes.
local FLOATS = {
  float16 = {16, 3, 2^-10, 65504.0, 2^-14},
  bfloat16 = {16, 2, 2^-7, 0x1.fep127, 2^-126},
  float32 = {32, 6, 2^-23, 0x1.fffffep127, 2^-126},
  float64 = {64, 15, 2^-52, 0x1.fffffffffffffp1023, 2^-1022},
}
-- bits, min and max of the integer dtypes. uint64's max (2^64 - 1) is no Lua integer: it is
-- the float 2^64, the nearest double.
local INTS = {
  uint8 = {8, 0, 255}, uint16 = {16, 0, 65535}, uint32 = {32, 0, 4294967295}, uint64 = {64, 0, 2.0^64},
  int8 = {8, -128, 127}, int16 = {16, -32768, 32767}, int32 = {32, -2147483648, 2147483647},
  int64 = {64, math.mininteger, math.maxinteger},
}

local function show(kind, order)
  return function(t)
    local parts = {}
    for _, k in ipairs(order) do parts[#parts + 1] = k .. "=" .. tostring(t[k]) end
    return kind .. "(" .. table.concat(parts, ", ") .. ")"
  end
end
local IINFO_MT = {__tostring = show("iinfo", {"min", "max", "dtype"})}
local FINFO_MT = {__tostring = show("finfo", {"resolution", "min", "max", "eps", "smallest_normal", "tiny", "dtype"})}

-- The dtype name of `dtype` (a name such as "uint8" or "torch.uint8"), or an error naming it.
local function dtype_name(op, dtype)
  if type(dtype) ~= "string" then
    error(op .. ": expected a dtype name such as \"int32\", got " .. (torch.is_tensor(dtype) and "a tensor" or type(dtype)), 0)
  end
  local name = dtype:gsub("^torch%.", "")
  local ok, canonical = pcall(torch.promote_types, name, name)
  if not ok then error(op .. ": unknown dtype '" .. dtype .. "'", 0) end
  return canonical
end

-- iinfo(op, dtype): bits, min, max, dtype of an integer dtype.
function torch._iinfo(op, dtype)
  local name = dtype_name(op, dtype)
  local v = INTS[name]
  if not v then error(op .. ": " .. name .. " is not an integer dtype (use finfo for floating-point dtypes)", 0) end
  return setmetatable({bits = v[1], min = v[2], max = v[3], dtype = name}, IINFO_MT)
end

-- finfo(op, dtype, rounded): bits, eps, max, min, tiny = smallest_normal, resolution (10^-precision,
-- rounded to the dtype itself when `rounded`, as NumPy's is) and dtype of a floating dtype.
function torch._finfo(op, dtype, rounded)
  local name = dtype_name(op, dtype)
  local v = FLOATS[name]
  if not v then error(op .. ": " .. name .. " is not a floating-point dtype (use iinfo for integer dtypes)", 0) end
  local resolution = 10.0 ^ -v[2]
  if rounded then resolution = torch.tensor(resolution, {dtype = name}):item() end
  return setmetatable({bits = v[1], eps = v[3], max = v[4], min = -v[4], tiny = v[5], smallest_normal = v[5],
                       resolution = resolution, dtype = name}, FINFO_MT)
end

function torch.iinfo(dtype) return torch._iinfo("iinfo", dtype) end
-- finfo() with no dtype describes the default float dtype, as in PyTorch.
function torch.finfo(dtype) return torch._finfo("finfo", dtype or torch.get_default_dtype(), false) end
