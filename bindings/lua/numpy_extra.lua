-- NumPy functions that everyday programs reach for and that compose from other ops:
-- fromiter, put, argpartition, packbits, unpackbits. Indices are 1-based (API.md).
local np = ...
local torch = package.loaded.torch or require("torch")

local function check_kw(op, kw, valid)
  if kw == nil then return {} end
  if type(kw) ~= "table" or torch.is_tensor(kw) then
    error(op .. ": expected a keyword table as the last argument, got " .. torch.nn._util.describe(kw), 0)
  end
  return torch._check_keywords(op, kw, valid)
end

local function integer_tensor(op, what, v)
  local t = np.asarray(v)
  local dt = t.dtype
  if dt == "bool" or dt:find("float") then
    error(string.format("%s: %s must be integers, got %s values", op, what, dt), 0)
  end
  return t
end

-- np.fromiter(iter, {dtype=, count=}): a 1-D array of the values a Lua iterator function
-- returns until nil (or a list's values); count=-1 (default) reads them all, count=n
-- stops after n and fails if there are fewer.
function np.fromiter(iter, kw)
  kw = check_kw("fromiter", kw, {"dtype", "count"})
  local count = kw.count or -1
  if math.type(count) ~= "integer" or count < -1 then
    error("fromiter: count must be -1 or a non-negative integer, got " .. tostring(count), 0)
  end
  local values = {}
  if type(iter) == "table" and not torch.is_tensor(iter) then
    for i = 1, #iter do values[i] = iter[i] end
  elseif type(iter) == "function" then
    while count < 0 or #values < count do
      local v = iter()
      if v == nil then break end
      values[#values + 1] = v
    end
  else
    error("fromiter: expected an iterator function or a list, got " .. torch.nn._util.describe(iter), 0)
  end
  if count >= 0 and #values < count then
    error(string.format("fromiter: iterator too short: %d items, count=%d", #values, count), 0)
  end
  if count >= 0 then
    for i = #values, count + 1, -1 do values[i] = nil end
  end
  local dtype = kw.dtype or (#values == 0 and "float64" or nil)
  if dtype then return np.array(values, {dtype = dtype}) end
  return np.array(values)
end

-- np.put(a, ind, v): a.flat[ind] = v in place, ind 1-based flat indices (negative count from
-- the end), v repeated cyclically to the length of ind as NumPy does. Returns nil like NumPy.
function np.put(a, ind, v, kw)
  check_kw("put", kw, {})
  if not torch.is_tensor(a) then error("put: expected a tensor as argument 1, got " .. torch.nn._util.describe(a), 0) end
  local idx = integer_tensor("put", "indices", ind):reshape(-1):to(torch.int64)
  local n = a:numel()
  if idx:numel() == 0 then return nil end
  local lo, hi = idx:min():item(), idx:max():item()
  local bad = idx:eq(0):any():item() and 0 or (lo < -n and lo) or (hi > n and hi) or nil
  if bad then error(string.format("put: index %d is out of bounds for a tensor of %d elements", bad, n), 0) end
  idx = np.where(idx:lt(0), idx + n, idx - 1)
  local vals = np.asarray(v):reshape(-1)
  if vals:numel() == 0 then error("put: cannot put an empty list of values", 0) end
  if vals:numel() ~= idx:numel() then
    local reps = (idx:numel() + vals:numel() - 1) // vals:numel()
    vals = vals:tile(reps):narrow(1, 1, idx:numel())
  end
  if not a:is_contiguous() then error("put: the tensor must be contiguous (its elements are addressed in memory order)", 0) end
  a:view(-1):index_put_({idx + 1}, vals:to(a.dtype))
  return nil
end

-- np.argpartition(a, kth, {axis=}): indices (1-based) that put the kth element (1-based
-- position, or a list of them) where a full sort would, smaller ones before it, larger after.
-- NumPy leaves the order within each side unspecified; tide returns the stable sort's order,
-- which is one valid answer (NumPy's own order depends on its introselect).
function np.argpartition(a, kth, kw)
  kw = check_kw("argpartition", kw, {"axis"})
  a = np.asarray(a)
  local axis = kw.axis == nil and -1 or kw.axis
  if a:dim() == 0 then error("argpartition: a 0-dim array cannot be partitioned", 0) end
  local size = a:size(axis < 0 and a:dim() + axis + 1 or axis)
  for _, k in ipairs(type(kth) == "table" and kth or {kth}) do
    if math.type(k) ~= "integer" then error("argpartition: kth must be an integer, got " .. tostring(k), 0) end
    if k == 0 or k > size or k < -size then
      error(string.format("argpartition: kth %d is out of bounds for an axis of size %d", k, size), 0)
    end
  end
  return np.argsort(a, {axis = axis})
end

-- The bit weights of a uint8, most significant first ("big") or least ("little").
local function bit_weights(op, bitorder)
  bitorder = bitorder or "big"
  if bitorder ~= "big" and bitorder ~= "little" then
    error(op .. ": bitorder must be 'big' or 'little', got '" .. tostring(bitorder) .. "'", 0)
  end
  local w = {128, 64, 32, 16, 8, 4, 2, 1}
  if bitorder == "little" then w = {1, 2, 4, 8, 16, 32, 64, 128} end
  return np.array(w, {dtype = "uint8"})
end

-- np.unpackbits(a, {axis=, count=, bitorder=}): each uint8 as 8 bits (0/1 uint8), along axis
-- (flattened when axis is nil); count keeps the first count bits (negative: drops from the end).
function np.unpackbits(a, kw)
  kw = check_kw("unpackbits", kw, {"axis", "count", "bitorder"})
  a = np.asarray(a)
  if a.dtype ~= "uint8" then error("unpackbits: expected a uint8 array, got " .. a.dtype, 0) end
  local w = bit_weights("unpackbits", kw.bitorder)
  local axis = kw.axis
  if axis == nil then a, axis = a:reshape(-1), 1 end
  if math.type(axis) ~= "integer" or axis == 0 or axis > a:dim() or axis < -a:dim() then
    error("unpackbits: axis " .. tostring(axis) .. " is out of range for a " .. a:dim() .. "-dim array", 0)
  end
  if axis < 0 then axis = axis + a:dim() + 1 end
  local moved = np.moveaxis(a, axis, -1)
  local bits = np.bitwise_and(np.expand_dims(moved, -1), w):ne(0):to(torch.uint8)
  local shape = moved.shape
  shape[#shape] = shape[#shape] * 8
  bits = bits:reshape(shape)
  local nbits = shape[#shape]
  if kw.count ~= nil then
    local c = kw.count
    if math.type(c) ~= "integer" then error("unpackbits: count must be an integer, got " .. tostring(c), 0) end
    if c < 0 then c = math.max(nbits + c, 0) end
    if c <= nbits then
      bits = bits:narrow(-1, 1, c)
    else
      local pad_shape = bits.shape
      pad_shape[#pad_shape] = c - nbits
      bits = np.concatenate({bits, np.zeros(pad_shape, {dtype = "uint8"})}, {axis = -1})
    end
  end
  return np.moveaxis(bits, -1, axis)
end

-- np.packbits(a, {axis=, bitorder=}): the inverse: groups of 8 truth values into uint8,
-- the last group padded with zeros.
function np.packbits(a, kw)
  kw = check_kw("packbits", kw, {"axis", "bitorder"})
  a = np.asarray(a)
  if a.dtype:find("float") then error("packbits: expected an integer or bool array, got " .. a.dtype, 0) end
  local w = bit_weights("packbits", kw.bitorder)
  local axis = kw.axis
  if axis == nil then a, axis = a:reshape(-1), 1 end
  if math.type(axis) ~= "integer" or axis == 0 or axis > a:dim() or axis < -a:dim() then
    error("packbits: axis " .. tostring(axis) .. " is out of range for a " .. a:dim() .. "-dim array", 0)
  end
  if axis < 0 then axis = axis + a:dim() + 1 end
  local moved = np.moveaxis(a:ne(0):to(torch.uint8), axis, -1)
  local shape = moved.shape
  local n = shape[#shape]
  local groups = (n + 7) // 8
  if groups * 8 ~= n then
    local pad_shape = moved.shape
    pad_shape[#pad_shape] = groups * 8 - n
    moved = np.concatenate({moved, np.zeros(pad_shape, {dtype = "uint8"})}, {axis = -1})
  end
  shape[#shape] = groups
  shape[#shape + 1] = 8
  local packed = np.sum(np.multiply(moved:reshape(shape), w), {axis = -1, dtype = "uint8"})
  return np.moveaxis(packed, -1, axis)
end
