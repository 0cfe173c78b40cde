-- NumPy's statistics and comparison functions (median, quantile and the nan* reductions,
-- average, cov, corrcoef, ptp, isclose, interp, convolve, polyfit, gradient), written on
-- the engine's ops (sort, gather, where, lerp, sum), so that they run on every device and
-- dtype the ops do. Axes are 1-based (negative from the end), options a trailing keyword
-- table, array-likes (Lua numbers and lists) are taken where NumPy takes them. Result dtypes
-- are NumPy 1.24's. The torch spellings (torch_stats.lua) share the helpers in np._stats.
local np = ...
local torch = require("torch")

local S = {}
np._stats = S

local FLOATS = {float16 = true, bfloat16 = true, float32 = true, float64 = true}
local LOW = {float16 = true, bfloat16 = true}
S.FLOATS = FLOATS

local function describe(v)
  if torch.is_tensor(v) then return "a " .. v.dtype .. " tensor of shape {" .. table.concat(v.shape, ",") .. "}" end
  if type(v) == "string" then return "'" .. v .. "'" end
  return type(v) == "table" and "a table" or tostring(v)
end
S.describe = describe

-- The arguments of op(p1, ..., pn[, {kw}]): the n positionals and the keyword table (checked
-- against `valid`); more arguments, or a non-table after them, are errors.
function S.args(op, n, valid, ...)
  local count = select("#", ...)
  local kw = select(n + 1, ...)
  if count > n + 1 or (count == n + 1 and kw ~= nil and (type(kw) ~= "table" or torch.is_tensor(kw))) then
    error(string.format("%s: expected at most %d argument%s and a keyword table, got %s as argument %d", op, n,
                        n == 1 and "" or "s", describe(select(count == n + 1 and n + 1 or n + 2, ...)),
                        count == n + 1 and n + 1 or n + 2), 3)
  end
  torch._check_keywords(op, kw or {}, valid)
  return kw or {}, ...
end

-- The functions of this file that compute complex arrays as NumPy does; the others (their
-- float64 statistics would drop the imaginary part) refuse them in S.array.
local COMPLEX_OK = {nansum = true, isclose = true, allclose = true, array_equal = true, convolve = true,
                    correlate = true, polyval = true}
local function real_only(op, arr)
  if not COMPLEX_OK[op] and torch.is_complex(arr) then error(op .. ": " .. arr.dtype .. " is not supported", 4) end
  return arr
end

-- np.asarray for array-likes (Lua numbers, booleans and nested lists), on the device of the
-- tensor `like` when given (the array the values go with); tensors as they are. Complex
-- arrays only for the ops of COMPLEX_OK.
function S.array(op, v, what, like)
  if torch.is_tensor(v) then return real_only(op, v) end
  local t = type(v)
  if t == "number" or t == "boolean" or (t == "table" and getmetatable(v) == nil) then
    local arr = real_only(op, np.asarray(v))
    if torch.is_tensor(like) and like.device ~= arr.device then arr = arr:to(like.device) end
    return arr
  end
  error(string.format("%s: expected an array-like for %s, got %s", op, what or "a", describe(v)), 3)
end

local function flag(op, kw, name, default)
  local v = kw[name]
  if v == nil then return default end
  if type(v) ~= "boolean" then error(string.format("%s: %s must be true or false, got %s", op, name, describe(v)), 3) end
  return v
end
S.flag = flag

local function number(op, kw, name, default)
  local v = kw[name]
  if v == nil then return default end
  if type(v) ~= "number" then error(string.format("%s: %s must be a number, got %s", op, name, describe(v)), 3) end
  return v
end

-- A 1-based (or negative) axis of an nd-dim array as a positive dim.
function S.axis(op, ax, nd)
  if math.type(ax) ~= "integer" then error(op .. ": axis must be an integer, got " .. describe(ax), 3) end
  local d = ax < 0 and nd + 1 + ax or ax
  if ax == 0 or d < 1 or d > nd then
    error(string.format("%s: axis %d is out of range for an array of %d dim%s (valid 1..%d or -%d..-1)", op, ax, nd,
                        nd == 1 and "" or "s", nd, nd), 3)
  end
  return d
end

-- a with the axes `axis` (nil: all; a number; a list) moved to the end and merged into one:
-- returns it, the shape of the result without the axes, and that with them kept as 1s.
function S.to_last(op, a, axis)
  local shape, nd = a.shape, a.ndim
  local reduced = {}
  if axis == nil then
    for d = 1, nd do reduced[d] = true end
  else
    for _, ax in ipairs(type(axis) == "table" and axis or {axis}) do
      local d = S.axis(op, ax, nd)
      if reduced[d] then error(op .. ": axis " .. ax .. " is given twice", 3) end
      reduced[d] = true
    end
  end
  local perm, kept, keep, n = {}, {}, {}, 1
  for d = 1, nd do
    if reduced[d] then keep[d] = 1 else perm[#perm + 1], kept[#kept + 1], keep[d] = d, shape[d], shape[d] end
  end
  for d = 1, nd do
    if reduced[d] then perm[#perm + 1], n = d, n * shape[d] end
  end
  local merged = {table.unpack(kept)}
  merged[#merged + 1] = n
  if nd > 0 then a = a:permute(perm) end
  return a:reshape(merged), kept, keep
end

-- r (shape lead .. kept) with the reduced axes put back as 1s when keepdims.
local function finish(r, lead, keep, keepdims)
  if not keepdims then return r end
  local s = {table.unpack(lead)}
  for _, d in ipairs(keep) do s[#s + 1] = d end
  return r:reshape(s)
end
S.finish = finish

local NAN = 0 / 0

function S.numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

---------------------------------------------------------------------------------------------
-- Quantiles. Every method turns a quantile q and the count k of values in a sorted slice
-- into positions: `index` (discrete methods) or the two neighbours lo, hi and the weight t
-- of a lerp (continuous ones), as NumPy's _QuantileMethods does (0-based; k and q tensors).

-- NumPy's _compute_virtual_index.
local function virtual(k, q, alpha, beta) return k * q + (q * (1 - alpha - beta) + alpha) - 1 end

-- NumPy's _discret_interpolation_to_boundaries: floor(index) where cond holds, else the next.
local function boundary(index, cond)
  local prev = index:floor()
  return torch.where(cond(index - prev, prev), prev, prev + 1):clamp{min = 0}
end

local function hf(alpha, beta) return {virtual = function(k, q) return virtual(k, q, alpha, beta) end} end
local METHODS = {
  linear = {virtual = function(k, q) return (k - 1) * q end},
  lower = {index = function(k, q) return ((k - 1) * q):floor() end},
  higher = {index = function(k, q) return ((k - 1) * q):ceil() end},
  nearest = {index = function(k, q) return ((k - 1) * q):round() end},
  midpoint = {virtual = function(k, q) return (((k - 1) * q):floor() + ((k - 1) * q):ceil()) * 0.5 end,
              gamma = function(g, v) return torch.where(v:eq(v:floor()), 0.0, 0.5) end},
  inverted_cdf = {index = function(k, q) return boundary(k * q - 1, function(g) return g:eq(0) end) end},
  averaged_inverted_cdf = {virtual = function(k, q) return k * q - 1 end,
                           gamma = function(g) return torch.where(g:eq(0), 0.5, 1.0) end},
  closest_observation = {index = function(k, q)
    return boundary(k * q - 1.5, function(g, prev) return g:eq(0):logical_and(prev:remainder(2):eq(0)) end)
  end},
  interpolated_inverted_cdf = hf(0, 1),
  hazen = hf(0.5, 0.5),
  weibull = hf(0, 0),
  median_unbiased = hf(1 / 3.0, 1 / 3.0),
  normal_unbiased = hf(3 / 8.0, 3 / 8.0),
}
local METHOD_NAMES = "linear, lower, higher, midpoint, nearest, inverted_cdf, averaged_inverted_cdf, " ..
                     "closest_observation, interpolated_inverted_cdf, hazen, weibull, median_unbiased, normal_unbiased"
S.METHODS = METHODS

function S.method(op, name, valid_names)
  local m = type(name) == "string" and METHODS[name]
  if not m or (valid_names and not valid_names[name]) then
    error(string.format("%s: %s is not a valid method (valid: %s)", op, describe(name),
                        valid_names and "linear, lower, higher, midpoint, nearest" or METHOD_NAMES), 3)
  end
  return m
end

-- q as a float64 tensor checked to lie in [0, 1] after dividing by `scale` (100 for
-- percentiles): returns it and whether it was a scalar.
function S.quantiles(op, q, scale, what)
  local qt = S.array(op, q, "q")
  if not FLOATS[qt.dtype] and qt.dtype ~= "int64" and qt.dtype ~= "int32" and qt.dtype ~= "int16" and
     qt.dtype ~= "int8" and qt.dtype ~= "uint8" then
    error(op .. ": q must be numbers, got " .. describe(q), 3)
  end
  qt = qt:to{dtype = "float64", device = "cpu"}
  if scale ~= 1 then qt = qt / scale end
  local bad = qt:lt(0):logical_or(qt:gt(1)):logical_or(qt:isnan())
  if bad:any():item() then
    local v = (qt[bad]:reshape(-1)[1] * scale):item()
    error(string.format("%s: %s must be in the range [0, %g], got %s", op, what or "q", scale, tostring(v)), 3)
  end
  return qt, type(q) == "number" or (torch.is_tensor(q) and q.ndim == 0)
end

-- The quantiles qt (float64, any shape) of the last dim of b, in method m: a tensor of
-- shape qt.shape .. b.shape[1..-2] (qt.shape dropped when scalar). skip_nan: NaN values are
-- left out (nanquantile); otherwise a slice holding one gives NaN. Continuous methods
-- compute in `dtype`. An empty slice gives NaN.
function S.quantile_last(b, qt, scalar, m, skip_nan, dtype)
  local sorted = b:sort(-1)
  local n = b.shape[b.ndim]
  local lead = b.shape
  lead[#lead] = nil
  local k, nan_slices
  if skip_nan and FLOATS[b.dtype] then
    k = b:isnan():logical_not():sum(-1, true)
    nan_slices = k:eq(0)
  else
    k = torch.full(#lead > 0 and {table.unpack(lead)} or {}, n, {dtype = "int64", device = b.device}):unsqueeze(-1)
    if FLOATS[b.dtype] and n > 0 then nan_slices = sorted:select(-1, n):isnan() end
  end
  if n == 0 then nan_slices = torch.ones(lead, {dtype = "bool", device = b.device}) end
  local kf = k:to("float64")
  local qv = qt:reshape(-1):to(b.device)
  local function gather(idx)   -- 0-based float positions (..., m) -> values
    idx = idx:clamp(0, math.max(n - 1, 0)):to("int64")
    if n == 0 then return torch.zeros(idx.shape, {dtype = sorted.dtype, device = b.device}) end
    return sorted:gather(-1, idx + 1)
  end
  local r
  if m.index then
    local idx = m.index(kf, qv)
    r = gather(torch.minimum(idx, kf - 1))
  else
    local v = m.virtual(kf, qv)
    local above, below = v:ge(kf - 1), v:lt(0)
    local lo = torch.where(above, kf - 1, torch.where(below, 0.0, v:floor()))
    local hi = torch.where(above, kf - 1, torch.where(below, 0.0, v:floor() + 1))
    local t = v - v:floor()
    if m.gamma then t = m.gamma(t, v) end
    -- NumPy's _lerp: the difference in the input's dtype, the rest in dtype
    local a, b = gather(lo), gather(hi)
    local d = (b - a):to(dtype)
    t = t:to(dtype)
    r = torch.where(t:ge(0.5), b:to(dtype) - d * (1 - t), a:to(dtype) + d * t)
  end
  if nan_slices and FLOATS[r.dtype] then
    local mask = nan_slices
    if mask.ndim < r.ndim then mask = mask:unsqueeze(-1) end
    r = torch.where(mask, NAN, r)
  end
  -- (..., m) -> (m, ...) -> qt.shape .. lead
  if scalar then return r:select(-1, 1) end
  if r.ndim > 1 then r = r:movedim(-1, 1) end
  local s = qt.shape
  for _, d in ipairs(lead) do s[#s + 1] = d end
  return r:reshape(s)
end

-- np.quantile / percentile / nanquantile / nanpercentile.
local function quantile_fn(op, scale, skip_nan)
  return function(...)
    local kw, a, q = S.args(op, 2, {"axis", "keepdims", "method"}, ...)
    a = S.array(op, a)
    local m = S.method(op, kw.method or "linear")
    local qt, scalar = S.quantiles(op, q, scale, scale == 1 and "quantiles" or "percentiles")
    if a.dtype == "bool" and not m.index then
      error(op .. ": method '" .. (kw.method or "linear") .. "' does not take bool input (convert it first)", 2)
    end
    local b, kept, keep = S.to_last(op, a, kw.axis)
    if b.shape[b.ndim] == 0 and S.numel(kept) * qt:numel() > 0 then
      error(op .. ": cannot take a quantile over an empty axis", 2)
    end
    local r = S.quantile_last(b, qt, scalar, m, skip_nan, "float64")
    return finish(r, scalar and {} or qt.shape, keep, flag(op, kw, "keepdims", false))
  end
end
np.quantile = quantile_fn("quantile", 1, false)
np.percentile = quantile_fn("percentile", 100, false)
np.nanquantile = quantile_fn("nanquantile", 1, true)
np.nanpercentile = quantile_fn("nanpercentile", 100, true)

-- The float dtype NumPy's mean-like statistics of a return: floats keep theirs, others float64.
local function stat_dtype(dt) return FLOATS[dt] and dt or "float64" end
S.stat_dtype = stat_dtype

-- The median of each slice of the last dim of b (a float tensor): the middle value, or the
-- mean of the two middle ones (computed in float32 for float16/bfloat16, as NumPy's mean);
-- skip_nan leaves NaNs out, otherwise a slice holding one gives NaN; empty slices give NaN.
function S.median_last(b, skip_nan)
  local dt = b.dtype
  local work = LOW[dt] and b:float() or b
  local n = b.shape[b.ndim]
  local lead = b.shape
  lead[#lead] = nil
  if n == 0 then return torch.full(lead, NAN, {dtype = dt, device = b.device}) end
  local sorted = work:sort(-1)
  local k = skip_nan and work:isnan():logical_not():sum(-1, true) or
            torch.full(b.shape, n, {dtype = "int64", device = b.device}):narrow(-1, 1, 1)
  local lo = sorted:gather(-1, ((k - 1) // 2):clamp(0, n - 1) + 1)
  local hi = sorted:gather(-1, (k // 2):clamp(0, n - 1) + 1)
  local r = torch.where(k:remainder(2):eq(1), lo, (lo + hi) / 2):squeeze(-1)
  local empty = skip_nan and k:eq(0):squeeze(-1) or sorted:select(-1, n):isnan()
  return torch.where(empty, NAN, r):to(dt)
end

local function median_fn(op, skip_nan)
  return function(...)
    local kw, a = S.args(op, 1, {"axis", "keepdims"}, ...)
    a = S.array(op, a)
    local b, _, keep = S.to_last(op, a, kw.axis)
    return finish(S.median_last(b:to(stat_dtype(b.dtype)), skip_nan), {}, keep, flag(op, kw, "keepdims", false))
  end
end
np.median = median_fn("median", false)
np.nanmedian = median_fn("nanmedian", true)

-- The reduction f(b) of the last dim of a's `axis` slices (nil: all), with keepdims.
local function reduce(op, a, kw, f)
  local b, _, keep = S.to_last(op, a, kw.axis)
  return finish(f(b), {}, keep, flag(op, kw, "keepdims", false))
end

local function nonempty(op, b)
  if b.shape[b.ndim] == 0 then error(op .. ": zero-size array to reduction operation, which has no identity", 3) end
end

-- np.ptp: max - min.
function np.ptp(...)
  local kw, a = S.args("ptp", 1, {"axis", "keepdims"}, ...)
  a = S.array("ptp", a)
  if a.dtype == "bool" then error("ptp: bool input has no subtraction (convert it first)", 2) end
  return reduce("ptp", a, kw, function(b)
    nonempty("ptp", b)
    return b:amax(-1) - b:amin(-1)
  end)
end

-- np.nansum: the sum with NaNs counted as 0 (np.sum's dtypes).
function np.nansum(...)
  local kw, a = S.args("nansum", 1, {"axis", "keepdims"}, ...)
  a = S.array("nansum", a)
  return reduce("nansum", a, kw, function(b)
    if FLOATS[b.dtype] or torch.is_complex(b) then b = torch.where(b:isnan(), 0, b) end
    return b:sum(-1)
  end)
end

-- The count of non-NaN values of each slice (keepdim) and the slice with NaNs as 0, in the
-- statistics' float dtype.
local function non_nan(b)
  b = b:to(stat_dtype(b.dtype))
  local mask = b:isnan()
  return mask:logical_not():sum(-1, true):to(b.dtype), torch.where(mask, 0, b), mask
end

-- np.nanmean: the mean of the non-NaN values; an all-NaN slice gives NaN.
function np.nanmean(...)
  local kw, a = S.args("nanmean", 1, {"axis", "keepdims"}, ...)
  a = S.array("nanmean", a)
  return reduce("nanmean", a, kw, function(b)
    local cnt, x = non_nan(b)
    return (x:sum(-1, true) / cnt):squeeze(-1)
  end)
end

-- The variance of the non-NaN values with ddof: NaN where fewer than ddof + 1 remain in a
-- float slice; an integer slice divides by max(n - ddof, 0), as np.var, which NumPy uses.
local function nanvar_last(b, ddof)
  local float = FLOATS[b.dtype]
  local cnt, x, mask = non_nan(b)
  local avg = x:sum(-1, true) / cnt
  local d = torch.where(mask, 0, x - avg)
  local dof = cnt - ddof
  local v = (d * d):sum(-1, true) / dof:clamp{min = 0}
  return (float and torch.where(dof:le(0), NAN, v) or v):squeeze(-1)
end
for _, name in ipairs({"nanvar", "nanstd"}) do
  np[name] = function(...)
    local kw, a = S.args(name, 1, {"axis", "keepdims", "ddof"}, ...)
    a = S.array(name, a)
    local ddof = number(name, kw, "ddof", 0)
    return reduce(name, a, kw, function(b)
      local v = nanvar_last(b, ddof)
      return name == "nanstd" and v:sqrt() or v
    end)
  end
end

-- np.nanmax / nanmin: NaNs ignored; an all-NaN slice gives NaN.
for _, mm in ipairs({{"nanmax", "amax", -math.huge}, {"nanmin", "amin", math.huge}}) do
  local name, red, fill = mm[1], mm[2], mm[3]
  np[name] = function(...)
    local kw, a = S.args(name, 1, {"axis", "keepdims"}, ...)
    a = S.array(name, a)
    return reduce(name, a, kw, function(b)
      nonempty(name, b)
      if not FLOATS[b.dtype] then return b[red](b, -1) end
      local mask = b:isnan()
      return torch.where(mask:all(-1), NAN, torch.where(mask, fill, b)[red](torch.where(mask, fill, b), -1))
    end)
  end
end

-- np.nanargmax / nanargmin: 1-based indices ignoring NaNs; an all-NaN slice is an error.
for _, am in ipairs({{"nanargmax", "argmax", -math.huge}, {"nanargmin", "argmin", math.huge}}) do
  local name, arg, fill = am[1], am[2], am[3]
  np[name] = function(...)
    local kw, a = S.args(name, 1, {"axis", "keepdims"}, ...)
    a = S.array(name, a)
    if type(kw.axis) == "table" then error(name .. ": axis must be an integer, got a table", 2) end
    return reduce(name, a, kw, function(b)
      nonempty(name, b)
      if not FLOATS[b.dtype] then return b[arg](b, -1) end
      local mask = b:isnan()
      if mask:all(-1):any():item() then error(name .. ": All-NaN slice encountered", 4) end
      local filled = torch.where(mask, fill, b)
      return filled[arg](filled, -1)
    end)
  end
end

-- NumPy's result_type of two dtypes (an integer with a float needs enough mantissa: int8 and
-- uint8 fit float16, int16 float32, wider ones float64); with a complex dtype NumPy's
-- promote_types (complex64 with int32 is complex128); the rest as the engine promotes.
local FLOAT_RANK = {float16 = 1, bfloat16 = 1, float32 = 2, float64 = 3}
local INT_NEEDS = {uint8 = 1, int8 = 1, int16 = 2, uint16 = 2, int32 = 3, uint32 = 3, int64 = 3, uint64 = 3}
local RANK_FLOAT = {"float16", "float32", "float64"}
function S.result_type(a, b)
  if a == b or b == "bool" then return a end
  if a == "bool" then return b end
  local fa, fb = FLOAT_RANK[a], FLOAT_RANK[b]
  if fa and INT_NEEDS[b] then return fa >= INT_NEEDS[b] and a or RANK_FLOAT[INT_NEEDS[b]] end
  if fb and INT_NEEDS[a] then return S.result_type(b, a) end
  if a:find("complex") or b:find("complex") then return np.promote_types(a, b) end
  return torch.promote_types(a, b)
end

-- np.average: the mean, or the weighted mean sum(a * w) / sum(w) along axis (weights of a's
-- shape, or 1-D along axis); returned: also the sum of the weights, in the result's shape.
function np.average(...)
  local op = "average"
  local kw, a = S.args(op, 1, {"axis", "weights", "returned", "keepdims"}, ...)
  a = S.array(op, a)
  local keepdims, returned = flag(op, kw, "keepdims", false), flag(op, kw, "returned", false)
  local avg, scl
  if kw.weights == nil then
    avg = reduce(op, a, kw, function(b) return b:to(stat_dtype(b.dtype)):mean(-1) end)
    scl = torch.full(avg.shape, a:numel() / math.max(avg:numel(), 1), {dtype = avg.dtype, device = avg.device})
  else
    local w = S.array(op, kw.weights, "weights", a)
    local dt = S.result_type(a.dtype, w.dtype)
    if not FLOATS[dt] then dt = S.result_type(dt, "float64") end
    local same = #a.shape == #w.shape
    for i, d in ipairs(a.shape) do same = same and w.shape[i] == d end
    if not same then
      if kw.axis == nil then error(op .. ": axis must be given when the shapes of a and weights differ", 2) end
      if type(kw.axis) ~= "number" then error(op .. ": axis must be an integer when the shapes of a and weights differ", 2) end
      if w.ndim ~= 1 then error(op .. ": 1-D weights expected when the shapes of a and weights differ, got " .. describe(w), 2) end
      local d = S.axis(op, kw.axis, a.ndim)
      if w.shape[1] ~= a.shape[d] then
        error(string.format("%s: %d weights do not fit axis %d of length %d", op, w.shape[1], kw.axis, a.shape[d]), 2)
      end
      local s = {}
      for i = 1, a.ndim do s[i] = i == d and a.shape[d] or 1 end
      w = w:reshape(s):expand(a.shape)
    end
    a, w = a:to(dt), w:to(dt)
    scl = reduce(op, w, kw, function(b) return b:sum(-1) end)
    if scl:eq(0):any():item() then error(op .. ": weights sum to zero, can't be normalized", 2) end
    avg = reduce(op, a * w, kw, function(b) return b:sum(-1) end) / scl
    if not keepdims and #scl.shape ~= #avg.shape then scl = scl:expand(avg.shape) end
  end
  if returned then return avg, scl end
  return avg
end

-- An at-least-2-D float64 copy of the variables of m (rows; columns when not rowvar).
local function variables(op, m, rowvar, what, like)
  m = S.array(op, m, what, like)
  if m.ndim > 2 then error(op .. ": " .. what .. " has more than 2 dimensions: " .. describe(m), 3) end
  m = m:to("float64")
  if m.ndim < 2 then m = m:reshape(1, -1) end
  if not rowvar and m.shape[1] ~= 1 then m = m:t() end
  return m
end

-- Observation weights (1-D, one per observation, >= 0; fweights integral).
local function obs_weights(op, v, n, name, like)
  v = S.array(op, v, name, like)
  if v.ndim ~= 1 then error(op .. ": cannot handle multidimensional " .. name .. ": " .. describe(v), 3) end
  if v.shape[1] ~= n then error(string.format("%s: %d %s for %d observations", op, v.shape[1], name, n), 3) end
  v = v:to("float64")
  if name == "fweights" and v:ne(v:floor()):any():item() then error(op .. ": fweights must be integers", 3) end
  if v:lt(0):any():item() then error(op .. ": " .. name .. " cannot be negative", 3) end
  return v
end

-- The covariance matrix of the variables (rows of m, and of y), as np.cov (float64).
local function cov(op, m, kw)
  local rowvar, bias = flag(op, kw, "rowvar", true), flag(op, kw, "bias", false)
  local X = variables(op, m, rowvar, "m")
  if X.shape[1] == 0 then return torch.zeros(0, 0, {dtype = "float64", device = X.device}) end
  if kw.y ~= nil then X = torch.cat({X, variables(op, kw.y, rowvar, "y", X)}, 1) end
  local ddof = kw.ddof
  if ddof ~= nil and math.type(ddof) ~= "integer" then error(op .. ": ddof must be an integer, got " .. describe(ddof), 3) end
  ddof = ddof or (bias and 0 or 1)
  local n = X.shape[2]
  local w, aw
  if kw.fweights ~= nil then w = obs_weights(op, kw.fweights, n, "fweights", X) end
  if kw.aweights ~= nil then
    aw = obs_weights(op, kw.aweights, n, "aweights", X)
    w = w and w * aw or aw
  end
  local avg, fact
  if w == nil then
    avg, fact = X:mean(2, true), n - ddof
  else
    local w_sum = w:sum():item()
    if w_sum == 0 then error(op .. ": weights sum to zero, can't be normalized", 3) end
    avg = (X * w):sum(2, true) / w_sum
    if ddof == 0 then fact = w_sum
    elseif aw == nil then fact = w_sum - ddof
    else fact = w_sum - ddof * (w * aw):sum():item() / w_sum end
  end
  if fact <= 0 then fact = 0.0 end
  X = X - avg
  local XT = w == nil and X:t() or (X * w):t()
  return (X:matmul(XT) * (1 / fact)):squeeze()
end
function np.cov(...)
  local kw, m = S.args("cov", 1, {"y", "rowvar", "bias", "ddof", "fweights", "aweights"}, ...)
  return cov("cov", m, kw)
end

-- np.corrcoef: the covariance normalised by the standard deviations, clipped to [-1, 1].
function np.corrcoef(...)
  local kw, x = S.args("corrcoef", 1, {"y", "rowvar"}, ...)
  local c = cov("corrcoef", x, {y = kw.y, rowvar = kw.rowvar})
  if c.ndim == 0 then return c / c end
  local n = c.shape[1]
  local sd = c:reshape(-1)[{{1, n * n, n + 1}}]:sqrt()
  return (c / sd:reshape(n, 1) / sd:reshape(1, n)):clamp(-1, 1)
end

-- a and b as tensors of NumPy's common dtype for comparing (at least float: result_type(b, 1.);
-- complex stays complex, compared by |a - b|).
local function close_pair(op, a, b)
  a, b = S.array(op, a, "a"), S.array(op, b, "b")
  local dt = S.result_type(a.dtype, b.dtype)
  if not FLOATS[dt] and dt ~= "complex64" and dt ~= "complex128" then dt = "float64" end
  return a:to(dt), b:to(dt)
end

-- |a - b| <= atol + rtol |b| elementwise; infinities equal themselves, NaN only with equal_nan.
local function isclose(op, a, b, kw)
  local rtol, atol = number(op, kw, "rtol", 1e-05), number(op, kw, "atol", 1e-08)
  local equal_nan = flag(op, kw, "equal_nan", false)
  a, b = close_pair(op, a, b)
  local finite = a:isfinite():logical_and(b:isfinite())
  local r = torch.where(finite, (a - b):abs():le((b:abs() * rtol) + atol), a:eq(b))
  if equal_nan then r = r:logical_or(a:isnan():logical_and(b:isnan())) end
  return r
end
S.isclose = isclose

function np.isclose(...)
  local kw, a, b = S.args("isclose", 2, {"rtol", "atol", "equal_nan"}, ...)
  return isclose("isclose", a, b, kw)
end
function np.allclose(...)
  local kw, a, b = S.args("allclose", 2, {"rtol", "atol", "equal_nan"}, ...)
  return isclose("allclose", a, b, kw):all():item()
end

-- np.array_equal: same shape and equal elements (NaNs equal with equal_nan): a boolean.
function np.array_equal(...)
  local op = "array_equal"
  local kw, a, b = S.args(op, 2, {"equal_nan"}, ...)
  a, b = S.array(op, a, "a1"), S.array(op, b, "a2")
  if a.ndim ~= b.ndim then return false end
  for i, d in ipairs(a.shape) do if b.shape[i] ~= d then return false end end
  local eq = a:eq(b)
  if flag(op, kw, "equal_nan", false) and FLOATS[a.dtype] and FLOATS[b.dtype] then
    eq = eq:logical_or(a:isnan():logical_and(b:isnan()))
  end
  return eq:all():item()
end

-- np.interp: the piecewise-linear interpolant through (xp, fp) (xp increasing) at x, as
-- NumPy's C loop computes it (slope from the left point, retried from the right one when
-- that gives NaN); left/right below and above xp (default fp's ends); period: x and xp are
-- taken modulo period. Float64. Finds each x's interval with one comparison against every
-- xp (memory #x * #xp).
function np.interp(...)
  local op = "interp"
  local kw, x, xp, fp = S.args(op, 3, {"left", "right", "period"}, ...)
  x, xp, fp = S.array(op, x, "x"):to("float64"), S.array(op, xp, "xp"):to("float64"), S.array(op, fp, "fp"):to("float64")
  if xp.ndim ~= 1 or fp.ndim ~= 1 then
    error(op .. ": xp and fp must be 1-D, got " .. describe(xp) .. " and " .. describe(fp), 2)
  end
  if xp.shape[1] ~= fp.shape[1] then error(op .. ": fp and xp are not of the same length (" .. fp.shape[1] .. " ~= " .. xp.shape[1] .. ")", 2) end
  if xp.shape[1] == 0 then error(op .. ": array of sample points is empty", 2) end
  local left, right = number(op, kw, "left", nil), number(op, kw, "right", nil)
  if kw.period ~= nil then
    local period = number(op, kw, "period", nil)
    if period == 0 then error(op .. ": period must be a non-zero value", 2) end
    if left ~= nil or right ~= nil then error(op .. ": left and right have no effect with period", 2) end
    period = math.abs(period)
    x, xp = x:remainder(period), xp:remainder(period)
    local order = xp:argsort()
    xp, fp = xp:index_select(1, order), fp:index_select(1, order)
    local n = xp.shape[1]
    xp = torch.cat({xp:narrow(1, n, 1) - period, xp, xp:narrow(1, 1, 1) + period})
    fp = torch.cat({fp:narrow(1, n, 1), fp, fp:narrow(1, 1, 1)})
  end
  local n = xp.shape[1]
  local first, last = xp[1]:item(), xp[n]:item()
  left = left or fp[1]:item()
  right = right or fp[n]:item()
  local shape = x.shape
  local xs = x:reshape(-1)
  local r
  if n == 1 then
    local at = torch.full(xs.shape, fp[1]:item(), {dtype = "float64", device = xs.device})
    r = torch.where(xs:lt(first), left, torch.where(xs:gt(first), right, at))
  else
    -- j: the last point with xp[j] <= x (1-based), kept inside 1..n-1
    local j = xs:reshape(-1, 1):ge(xp:reshape(1, -1)):sum(2):clamp(1, n - 1)
    local x0, x1 = xp:index_select(1, j), xp:index_select(1, j + 1)
    local y0, y1 = fp:index_select(1, j), fp:index_select(1, j + 1)
    local slope = (y1 - y0) / (x1 - x0)
    r = slope * (xs - x0) + y0
    local retry = slope * (xs - x1) + y1
    r = torch.where(r:isnan(), torch.where(retry:isnan():logical_and(y0:eq(y1)), y0, retry), r)
    r = torch.where(xs:eq(last), fp[n]:item(), r)
    r = torch.where(xs:lt(first), left, torch.where(xs:gt(last), right, r))
  end
  return r:reshape(shape)
end

-- The full convolution of 1-D tensors x and y (one shifted multiply-add per element of the
-- shorter one).
local function full_conv(x, y)
  if x.shape[1] < y.shape[1] then x, y = y, x end
  local n, m = x.shape[1], y.shape[1]
  local out = torch.zeros(n + m - 1, {dtype = x.dtype, device = x.device})
  for j = 1, m do out:narrow(1, j, n):add_(x * y[j]) end
  return out
end

-- The 1-D operands of convolve/correlate in NumPy's common dtype.
local function conv_pair(op, a, v, kw)
  a, v = S.array(op, a, "a"), S.array(op, v, "v")
  for _, t in ipairs({a, v}) do
    if t.ndim > 1 then error(op .. ": expected 1-D arrays, got " .. describe(t), 3) end
  end
  a, v = a:reshape(-1), v:reshape(-1)
  if a.shape[1] == 0 then error(op .. ": a cannot be empty", 3) end
  if v.shape[1] == 0 then error(op .. ": v cannot be empty", 3) end
  local dt = S.result_type(a.dtype, v.dtype)
  if dt == "bool" then error(op .. ": bool inputs are not supported (convert them first)", 3) end
  local mode = kw.mode
  if mode ~= nil and mode ~= "full" and mode ~= "same" and mode ~= "valid" then
    error(op .. ": mode must be 'full', 'same' or 'valid', got " .. describe(mode), 3)
  end
  return a:to(dt), v:to(dt)
end

-- The part of a full convolution of lengths n >= m that mode keeps.
local function cut(full, n, m, mode)
  if mode == "same" then return full:narrow(1, (m - 1) // 2 + 1, n) end
  if mode == "valid" then return full:narrow(1, m, n - m + 1) end
  return full
end

function np.convolve(...)
  local kw, a, v = S.args("convolve", 2, {"mode"}, ...)
  a, v = conv_pair("convolve", a, v, kw)
  local n, m = math.max(a.shape[1], v.shape[1]), math.min(a.shape[1], v.shape[1])
  return cut(full_conv(a, v), n, m, kw.mode or "full")
end

-- np.correlate: sum_n a[n + k] v[n] (mode 'valid' by default), NumPy's convolve of a with v
-- reversed; a shorter a swaps them and reverses the result, as NumPy does.
function np.correlate(...)
  local kw, a, v = S.args("correlate", 2, {"mode"}, ...)
  a, v = conv_pair("correlate", a, v, kw)
  local mode = kw.mode or "valid"
  if v.shape[1] > a.shape[1] then
    return cut(full_conv(v, a:flip(1)), v.shape[1], a.shape[1], mode):flip(1)
  end
  return cut(full_conv(a, v:flip(1)), a.shape[1], v.shape[1], mode)
end

-- np.polyval: p[1] x^(n-1) + ... + p[n] by Horner's rule, in x's dtype (float64 for an
-- integer x with float coefficients).
function np.polyval(...)
  local op = "polyval"
  local _, p, x = S.args(op, 2, {}, ...)
  p, x = S.array(op, p, "p"), S.array(op, x, "x")
  if p.ndim ~= 1 then error(op .. ": p must be 1-D, got " .. describe(p), 2) end
  -- NumPy's y * x + p[i] with p[i] a scalar: x's dtype unless p's kind is higher (a complex
  -- p gives the complex dtype of x's precision, a float p float64 for an integer x).
  local dt = x.dtype
  if torch.is_complex(p) and not torch.is_complex(x) then
    dt = (dt == "float32" or dt == "float16" or dt == "bfloat16") and "complex64" or "complex128"
  elseif not FLOATS[dt] and not torch.is_complex(x) and FLOATS[p.dtype] then
    dt = "float64"
  end
  x = x:to(dt)
  local y = torch.zeros(x.shape, {dtype = dt, device = x.device})
  for _, c in ipairs(p:tolist()) do y = y * x + c end
  return y
end

-- np.polyfit: the least-squares polynomial of degree deg through (x, y) (y 1-D, or 2-D with
-- one fit per column), highest power first; w weights the residuals. Solves the normal
-- equations of the column-scaled Vandermonde matrix, as NumPy scales it before its lstsq:
-- as accurate as NumPy for well-conditioned fits, less for ill-conditioned ones.
function np.polyfit(...)
  local op = "polyfit"
  local kw, x, y, deg = S.args(op, 3, {"w"}, ...)
  x, y = S.array(op, x, "x"), S.array(op, y, "y")
  if math.type(deg) ~= "integer" or deg < 0 then error(op .. ": deg must be an integer >= 0, got " .. describe(deg), 2) end
  if x.ndim ~= 1 then error(op .. ": expected a 1-D x, got " .. describe(x), 2) end
  if x.shape[1] == 0 then error(op .. ": expected a non-empty x", 2) end
  if y.ndim < 1 or y.ndim > 2 then error(op .. ": expected a 1-D or 2-D y, got " .. describe(y), 2) end
  if y.shape[1] ~= x.shape[1] then error(op .. ": x and y have different lengths (" .. x.shape[1] .. " ~= " .. y.shape[1] .. ")", 2) end
  local dt = S.result_type(x.dtype, y.dtype)
  if not FLOATS[dt] then dt = "float64" end
  local xd, rhs = x:to("float64"), y:to("float64")
  local lhs = xd:reshape(-1, 1):pow(torch.arange(deg, -1, -1, {dtype = "float64", device = x.device}))
  if kw.w ~= nil then
    local w = S.array(op, kw.w, "w", x):to("float64")
    if w.ndim ~= 1 or w.shape[1] ~= x.shape[1] then
      error(op .. ": w must be 1-D with one weight per point, got " .. describe(w), 2)
    end
    lhs = lhs * w:reshape(-1, 1)
    rhs = rhs * (rhs.ndim == 2 and w:reshape(-1, 1) or w)
  end
  local scale = (lhs * lhs):sum(1):sqrt()
  lhs = lhs / scale
  local lt = lhs:t()
  local c = torch.linalg.solve(lt:matmul(lhs), rhs.ndim == 2 and lt:matmul(rhs) or lt:mv(rhs))
  c = rhs.ndim == 2 and c / scale:reshape(-1, 1) or c / scale
  return c:to(dt)
end

-- np.gradient: central differences inside, one-sided (edge_order 1 or 2) at the ends, along
-- each of `axis` (default all), with spacing given as nothing (1), one number for every axis,
-- or one number or coordinate list per axis. One axis: a tensor; several: a list of them.
function np.gradient(f, ...)
  local op = "gradient"
  local spacing = table.pack(...)
  local kw = {}
  local last = spacing[spacing.n]
  if spacing.n > 0 and type(last) == "table" and not torch.is_tensor(last) and (next(last) == nil or last[1] == nil) then
    kw = last
    spacing.n = spacing.n - 1
  end
  torch._check_keywords(op, kw, {"axis", "edge_order"})
  f = S.array(op, f, "f")
  local nd = f.ndim
  local axes = {}
  if kw.axis == nil then for d = 1, nd do axes[d] = d end
  else
    for _, ax in ipairs(type(kw.axis) == "table" and kw.axis or {kw.axis}) do axes[#axes + 1] = S.axis(op, ax, nd) end
  end
  local edge = kw.edge_order or 1
  if edge ~= 1 and edge ~= 2 then error(op .. ": edge_order must be 1 or 2, got " .. describe(edge), 2) end
  local steps = {}
  if spacing.n == 0 then for i = 1, #axes do steps[i] = 1.0 end
  elseif spacing.n == 1 and (type(spacing[1]) == "number" or torch.is_tensor(spacing[1]) and spacing[1].ndim == 0) then
    local h = torch.is_tensor(spacing[1]) and spacing[1]:item() or spacing[1]
    for i = 1, #axes do steps[i] = h end
  elseif spacing.n == #axes then
    for i = 1, #axes do
      local s = spacing[i]
      if torch.is_tensor(s) and s.ndim == 0 then s = s:item() end
      if type(s) ~= "number" then
        s = S.array(op, s, "spacing", f):to("float64")
        if s.ndim ~= 1 then error(op .. ": distances must be either scalars or 1-D, got " .. describe(s), 2) end
        if s.shape[1] ~= f.shape[axes[i]] then
          error(string.format("%s: %d coordinates for axis %d of length %d", op, s.shape[1], axes[i], f.shape[axes[i]]), 2)
        end
        local dx = s:narrow(1, 2, s.shape[1] - 1) - s:narrow(1, 1, s.shape[1] - 1)
        s = dx:numel() > 0 and dx:eq(dx[1]):all():item() and dx[1]:item() or dx
      end
      steps[i] = s
    end
  else
    error(string.format("%s: expected 0, 1 or %d spacings (one per axis), got %d", op, #axes, spacing.n), 2)
  end
  local otype = stat_dtype(f.dtype)
  f = f:to(otype)
  local results = {}
  for i, d in ipairs(axes) do
    local n = f.shape[d]
    if n < edge + 1 then
      error(string.format("%s: axis %d has %d element%s, at least edge_order + 1 = %d are needed", op, d, n,
                          n == 1 and "" or "s", edge + 1), 2)
    end
    local function s(start, len) return f:narrow(d, start, len or 1) end
    local h = steps[i]
    local inner, first, lastv
    if type(h) == "number" then
      inner = (s(3, n - 2) - s(1, n - 2)) / (2.0 * h)
      if edge == 1 then
        first, lastv = (s(2) - s(1)) / h, (s(n) - s(n - 1)) / h
      else
        first = s(1) * (-1.5 / h) + s(2) * (2.0 / h) + s(3) * (-0.5 / h)
        lastv = s(n - 2) * (0.5 / h) + s(n - 1) * (-2.0 / h) + s(n) * (1.5 / h)
      end
    else
      local shape = {}
      for k = 1, nd do shape[k] = k == d and -1 or 1 end
      local dx1, dx2 = h:narrow(1, 1, n - 2), h:narrow(1, 2, n - 2)
      local a = (-dx2 / (dx1 * (dx1 + dx2))):reshape(shape)
      local b = ((dx2 - dx1) / (dx1 * dx2)):reshape(shape)
      local c = (dx1 / (dx2 * (dx1 + dx2))):reshape(shape)
      inner = (a * s(1, n - 2) + b * s(2, n - 2) + c * s(3, n - 2)):to(otype)
      local h1, h2, hm, hn = h[1]:item(), h[2] and h[math.min(2, n - 1)]:item(), h[math.max(n - 2, 1)]:item(), h[n - 1]:item()
      if edge == 1 then
        first, lastv = (s(2) - s(1)) / h1, (s(n) - s(n - 1)) / hn
      else
        first = s(1) * (-(2.0 * h1 + h2) / (h1 * (h1 + h2))) + s(2) * ((h1 + h2) / (h1 * h2)) + s(3) * (-h1 / (h2 * (h1 + h2)))
        lastv = s(n - 2) * (hn / (hm * (hn + hm))) + s(n - 1) * (-(hn + hm) / (hm * hn)) + s(n) * ((2.0 * hn + hm) / (hn * (hm + hn)))
      end
    end
    results[i] = torch.cat({first, inner, lastv}, d)
  end
  if #axes == 1 then return results[1] end
  return results
end

-- help() texts (torch._doc), in the registry's form "signature -> result: paragraph".
local AXIS_KW = "{axis=, keepdims=false}"
local docs = {
  median = "median(a[, " .. AXIS_KW .. "]) -> ndarray: the median along axis (nil: all; a number or a list of axes); " ..
    "the mean of the two middle values of an even count; NaN where a slice holds a NaN; integers give float64.",
  nanmedian = "nanmedian(a[, " .. AXIS_KW .. "]) -> ndarray: the median of the non-NaN values (NaN for an all-NaN slice).",
  quantile = "quantile(a, q[, {axis=, keepdims=false, method=\"linear\"}]) -> ndarray: the q-th quantiles (q in [0, 1], " ..
    "a number or array; an array puts its shape first) along axis; method: linear, lower, higher, midpoint, nearest, " ..
    "inverted_cdf, averaged_inverted_cdf, closest_observation, interpolated_inverted_cdf, hazen, weibull, " ..
    "median_unbiased, normal_unbiased. Continuous methods give float64, discrete ones the input's dtype.",
  percentile = "percentile(a, q[, {axis=, keepdims=false, method=\"linear\"}]) -> ndarray: quantile with q in [0, 100].",
  nanquantile = "nanquantile(a, q[, {axis=, keepdims=false, method=\"linear\"}]) -> ndarray: quantile of the non-NaN values.",
  nanpercentile = "nanpercentile(a, q[, {axis=, keepdims=false, method=\"linear\"}]) -> ndarray: percentile of the " ..
    "non-NaN values.",
  nansum = "nansum(a[, " .. AXIS_KW .. "]) -> ndarray: the sum with NaNs counted as zero.",
  nanmean = "nanmean(a[, " .. AXIS_KW .. "]) -> ndarray: the mean of the non-NaN values (NaN for an all-NaN slice).",
  nanvar = "nanvar(a[, {axis=, keepdims=false, ddof=0}]) -> ndarray: the variance of the non-NaN values, divided by " ..
    "count - ddof (NaN where that is <= 0).",
  nanstd = "nanstd(a[, {axis=, keepdims=false, ddof=0}]) -> ndarray: the square root of nanvar.",
  nanmax = "nanmax(a[, " .. AXIS_KW .. "]) -> ndarray: the maximum ignoring NaNs (NaN for an all-NaN slice).",
  nanmin = "nanmin(a[, " .. AXIS_KW .. "]) -> ndarray: the minimum ignoring NaNs (NaN for an all-NaN slice).",
  nanargmax = "nanargmax(a[, {axis=, keepdims=false}]) -> ndarray: 1-based index of the maximum ignoring NaNs; an " ..
    "all-NaN slice is an error.",
  nanargmin = "nanargmin(a[, {axis=, keepdims=false}]) -> ndarray: 1-based index of the minimum ignoring NaNs; an " ..
    "all-NaN slice is an error.",
  ptp = "ptp(a[, " .. AXIS_KW .. "]) -> ndarray: max - min along axis.",
  average = "average(a[, {axis=, weights=, returned=false, keepdims=false}]) -> ndarray[, ndarray]: the (weighted) " ..
    "mean; weights of a's shape or 1-D along axis; returned also gives the sum of the weights.",
  cov = "cov(m[, {y=, rowvar=true, bias=false, ddof=, fweights=, aweights=}]) -> ndarray: the covariance matrix of " ..
    "the variables in the rows of m (columns when rowvar=false), float64.",
  corrcoef = "corrcoef(x[, {y=, rowvar=true}]) -> ndarray: the correlation coefficients (cov normalised), float64.",
  isclose = "isclose(a, b[, {rtol=1e-05, atol=1e-08, equal_nan=false}]) -> ndarray: |a - b| <= atol + rtol * |b| " ..
    "elementwise (bool); infinities equal themselves.",
  allclose = "allclose(a, b[, {rtol=1e-05, atol=1e-08, equal_nan=false}]) -> boolean: whether isclose holds everywhere.",
  array_equal = "array_equal(a1, a2[, {equal_nan=false}]) -> boolean: same shape and equal elements.",
  interp = "interp(x, xp, fp[, {left=, right=, period=}]) -> ndarray: piecewise-linear interpolation through " ..
    "(xp, fp) at x (float64); left/right outside xp; period for periodic xp.",
  convolve = "convolve(a, v[, {mode=\"full\"}]) -> ndarray: the discrete convolution of two 1-D arrays; mode " ..
    "\"full\", \"same\" or \"valid\".",
  correlate = "correlate(a, v[, {mode=\"valid\"}]) -> ndarray: the cross-correlation sum_n a[n+k] v[n] of two 1-D arrays.",
  polyval = "polyval(p, x) -> ndarray: the polynomial with coefficients p (highest power first) at x.",
  polyfit = "polyfit(x, y, deg[, {w=}]) -> ndarray: the least-squares polynomial coefficients of degree deg " ..
    "(highest first; one column per column of a 2-D y), from the normal equations of the scaled Vandermonde matrix.",
  gradient = "gradient(f[, spacing...][, {axis=, edge_order=1}]) -> ndarray or list: central differences inside, " ..
    "one-sided (edge_order 1 or 2) at the ends; spacing: one number, or a number or coordinate array per axis.",
}
for name, doc in pairs(docs) do torch._doc[np[name]] = doc end

---------------------------------------------------------------------------------------------
-- ufunc methods: np.add.reduce(a, {axis=1}), .accumulate, .outer, .at, .reduceat. The binary
-- ufuncs become callable tables whose __call hands its arguments to the C function itself
-- (np.add(a, b) is the same call, one metamethod hop longer; help() and the fuzzer find the
-- registered doc through torch._doc). Axes are 1-based and default to 1 (NumPy's 0); a
-- list of axes reduces several. The methods fold with the ufunc itself (NumPy's dtypes), in
-- log2(n) whole-tensor steps (pairwise folds and scans);
-- add, multiply, maximum, minimum, logical_and and logical_or reduce with the engine's
-- reductions (sum, prod, amax, amin, all, any: add and multiply give int64 for smaller
-- integers and bool, as NumPy's reductions do), add and multiply accumulate with cumsum/cumprod.
local UFUNCS = {
  add = {identity = 0, reduce = "sum", accumulate = "cumsum"},
  multiply = {identity = 1, reduce = "prod", accumulate = "cumprod"},
  maximum = {reduce = "amax"},
  minimum = {reduce = "amin"},
  logical_and = {identity = true, reduce = "all"},
  logical_or = {identity = false, reduce = "any"},
  logical_xor = {identity = false},
  bitwise_and = {identity = -1},
  bitwise_or = {identity = 0},
  bitwise_xor = {identity = 0},
  subtract = {},
  divide = {},
}

-- The registered C functions the ufunc tables wrap (subtract and divide fold with add and
-- multiply).
local RAW = {}
for name in pairs(UFUNCS) do RAW[name] = np[name] end
UFUNCS.subtract.rest, UFUNCS.divide.rest = "add", "multiply"

local function with_last(shape, ...)
  local s = {table.unpack(shape, 1, #shape - 1)}
  for _, d in ipairs({...}) do s[#s + 1] = d end
  return s
end

-- g folded over the last dim of b (n >= 1) by adjacent pairs: log2(n) steps of whole-tensor
-- ops, the order of the operands kept (g associative).
local function tree(g, b)
  while b.shape[b.ndim] > 1 do
    local n = b.shape[b.ndim]
    local half = n // 2
    local pairs = b:narrow(-1, 1, 2 * half):reshape(with_last(b.shape, half, 2))
    local folded = g(pairs:select(-1, 1), pairs:select(-1, 2))
    b = n % 2 == 1 and torch.cat({folded, b:narrow(-1, n, 1):to(folded.dtype)}, -1) or folded
  end
  return b:select(-1, 1)
end

-- The running fold of g along the last dim of b (Hillis-Steele: log2(n) steps, g associative).
local function scan(g, b)
  local n, step = b.shape[b.ndim], 1
  while step < n do
    b = torch.cat({b:narrow(-1, 1, step), g(b:narrow(-1, 1, n - step), b:narrow(-1, step + 1, n - step))}, -1)
    step = step * 2
  end
  return b
end

-- Whether ufunc.at's indices are NumPy's tuple (one index per dim) rather than its list or
-- array: a Lua table with an entry that only an index table holds (a tensor, a range
-- table, ":", "...", np.newaxis); a table of numbers or booleans is the list.
local function is_index_tuple(v)
  if type(v) ~= "table" or torch.is_tensor(v) or getmetatable(v) ~= nil then return false end
  for _, e in ipairs(v) do
    if type(e) ~= "number" and type(e) ~= "boolean" then return true end
  end
  return false
end

local function make_ufunc(name, f, u)
  local ufunc = {}
  local function op_name(m) return name .. "." .. m end
  -- The dtype of the ufunc's results on dtype dt (and an early error for a dtype it refuses).
  local function fold_dtype(dt, device)
    local one = torch.zeros(1, {dtype = dt, device = device})
    return f(one, one).dtype
  end

  -- The fold of the last dim of b (..., n) by the ufunc, starting from `initial` (or its
  -- identity for n = 0); subtract and divide: a1 - (a2 + ...), a1 / (a2 * ...).
  local function reduce_last(b, initial)
    local n = b.shape[b.ndim]
    if initial == nil and u.reduce and n > 0 then return b[u.reduce](b, -1) end
    local start = initial
    if start == nil then start = u.identity end
    if start == nil and n == 0 then
      error(op_name("reduce") .. ": zero-size array to reduction operation " .. name .. " which has no identity", 4)
    end
    -- (add and multiply reduce integers and bools in int64, as NumPy's and the engine's sum)
    local dt = (u.reduce == "sum" or u.reduce == "prod") and not FLOATS[b.dtype] and "int64" or fold_dtype(b.dtype, b.device)
    b = b:to(dt)
    local g = u.rest and RAW[u.rest] or f
    if start == nil then
      if u.rest and n > 1 then return f(b:select(-1, 1), tree(g, b:narrow(-1, 2, n - 1))) end
      return tree(g, b)
    end
    local acc = torch.full(with_last(b.shape), start, {dtype = dt, device = b.device})
    if n == 0 then return acc end
    return f(acc, tree(g, b))
  end

  function ufunc.reduce(...)
    local op = op_name("reduce")
    local kw, a = S.args(op, 1, {"axis", "keepdims", "initial"}, ...)
    a = S.array(op, a)
    if kw.initial ~= nil and type(kw.initial) ~= "number" and type(kw.initial) ~= "boolean" then
      error(op .. ": initial must be a number or a boolean, got " .. describe(kw.initial), 2)
    end
    local axis = kw.axis
    if axis == nil and a.ndim > 0 then axis = 1 end
    local b, _, keep = S.to_last(op, a, axis)
    return finish(reduce_last(b, kw.initial), {}, keep, flag(op, kw, "keepdims", false))
  end

  function ufunc.accumulate(...)
    local op = op_name("accumulate")
    local kw, a = S.args(op, 1, {"axis"}, ...)
    a = S.array(op, a)
    if a.ndim == 0 then error(op .. ": cannot accumulate on a scalar", 2) end
    local axis = kw.axis or 1
    if type(axis) ~= "number" then error(op .. ": axis must be an integer, got " .. describe(axis), 2) end
    local d = S.axis(op, axis, a.ndim)
    if u.accumulate then return a[u.accumulate](a, d) end
    local b = a:to(fold_dtype(a.dtype, a.device)):movedim(d, -1)
    local n = b.shape[b.ndim]
    if u.rest and n > 1 then   -- a1, a1 - a2, a1 - (a2 + a3), ...
      local first = b:narrow(-1, 1, 1)
      b = torch.cat({first, f(first, scan(RAW[u.rest], b:narrow(-1, 2, n - 1)))}, -1)
    elseif n > 1 then
      b = scan(f, b)
    end
    return b:movedim(-1, d)
  end

  function ufunc.outer(...)
    local op = op_name("outer")
    local _, a, b = S.args(op, 2, {}, ...)
    a, b = S.array(op, a, "a"), S.array(op, b, "b")
    local s = a.shape
    for _ = 1, b.ndim do s[#s + 1] = 1 end
    return f(a:reshape(s), b)
  end

  -- a[indices] = ufunc(a[indices], b) unbuffered: a position selected k times is updated k
  -- times, in index order. indices is NumPy's list or array (a tensor, or a Lua list of
  -- numbers or booleans: along the first dim, a bool one as a mask) or NumPy's tuple (a
  -- Lua table holding any tensor, range table, ":", "..." or np.newaxis: one entry per dim,
  -- read as a[{...}] reads it). The selected positions come from indexing a tensor of
  -- linear positions with tide's own indexing; b broadcasts to their shape. Each round then
  -- updates the k-th occurrences of the positions, which are distinct, with whole-tensor
  -- gathers and stores (as many rounds as the most repeated position).
  function ufunc.at(...)
    local op = op_name("at")
    local _, a, indices, b = S.args(op, 3, {}, ...)
    if not torch.is_tensor(a) then error(op .. ": expected a tensor for a, got " .. describe(a), 2) end
    if a.ndim == 0 then error(op .. ": a must have at least one dim", 2) end
    if b == nil then error(op .. ": b is missing (binary ufuncs take one value per index)", 2) end
    local key = indices
    if not is_index_tuple(indices) then
      key = S.array(op, indices, "indices")
      if FLOATS[key.dtype] then error(op .. ": indices must be integers, got " .. describe(indices), 2) end
    end
    local lin = torch.arange(a:numel(), {device = a.device}):reshape(a.shape)
    local ok, sel = pcall(function() return lin[key] end)
    if not ok then error(op .. ": " .. tostring(sel):gsub("^index: ", ""), 2) end
    local bt
    if type(b) ~= "number" and type(b) ~= "boolean" then
      bt = S.array(op, b, "b", a)
      local bshape = bt.shape
      ok, bt = pcall(function() return bt:broadcast_to(sel.shape) end)
      if not ok then
        error(op .. ": b of shape {" .. table.concat(bshape, ",") .. "} does not broadcast to {" ..
              table.concat(sel.shape, ",") .. "}", 2)
      end
      bt = bt:reshape(-1)
    end
    local pos, seen, rounds = sel:reshape(-1):tolist(), {}, {}
    for k, p in ipairs(pos) do
      local r = (seen[p] or 0) + 1
      seen[p] = r
      rounds[r] = rounds[r] or {}
      table.insert(rounds[r], k)
    end
    local kind = {bool = 0}
    local function kind_of(dt) return kind[dt] or (FLOATS[dt] and 2 or 1) end
    for _, ks in ipairs(rounds) do
      local p = {}
      for i, k in ipairs(ks) do p[i] = pos[k] end
      p = torch.tensor(p, {dtype = "int64", device = a.device})
      -- the 1-based coordinates of each linear position, one tensor per dim
      local coords, stride = {}, 1
      for d = a.ndim, 1, -1 do
        coords[d] = p // stride % a.shape[d] + 1
        stride = stride * a.shape[d]
      end
      local v = f(a[coords], bt and bt[torch.tensor(ks, {dtype = "int64", device = a.device})] or b)
      if kind_of(v.dtype) > kind_of(a.dtype) then
        error(string.format("%s: cannot write %s results into a %s array (NumPy's same_kind casting)", op, v.dtype, a.dtype), 2)
      end
      a[coords] = v
    end
  end

  -- The reductions over a[indices[k] .. indices[k+1] - 1] along axis (just a[indices[k]]
  -- where the next index is not larger), the last one to the end.
  function ufunc.reduceat(...)
    local op = op_name("reduceat")
    local kw, a, indices = S.args(op, 2, {"axis"}, ...)
    a = S.array(op, a)
    if a.ndim == 0 then error(op .. ": a must have at least one dim", 2) end
    local axis = kw.axis or 1
    if type(axis) ~= "number" then error(op .. ": axis must be an integer, got " .. describe(axis), 2) end
    local d = S.axis(op, axis, a.ndim)
    local idx = S.array(op, indices, "indices")
    if idx.ndim ~= 1 or idx.dtype == "bool" or FLOATS[idx.dtype] then
      error(op .. ": indices must be a 1-D list of integers, got " .. describe(indices), 2)
    end
    idx = idx:tolist()
    local n = a.shape[d]
    local parts = {}
    for k, i in ipairs(idx) do
      if i < 1 or i > n then
        error(string.format("%s: index %d is out of range for axis %d of size %d (valid 1..%d)", op, i, axis, n, n), 2)
      end
      local stop = idx[k + 1] or n + 1
      local len = stop > i and stop - i or 1
      local piece = a:narrow(d, i, len):movedim(d, -1)
      parts[k] = reduce_last(piece, nil):unsqueeze(-1):movedim(-1, d)
    end
    if #parts == 0 then error(op .. ": indices must not be empty", 2) end
    local dt = parts[1].dtype
    for k = 2, #parts do dt = torch.promote_types(dt, parts[k].dtype) end
    for k = 1, #parts do parts[k] = parts[k]:to(dt) end
    return torch.cat(parts, d)
  end

  setmetatable(ufunc, {__call = function(_, ...) return f(...) end, __name = "ufunc"})
  torch._doc[ufunc] = torch._binding_doc(f)
  ufunc._call = f
  return ufunc
end

local UFUNC_DOCS = {
  reduce = "reduce(a[, {axis=1, keepdims=false, initial=}]) -> ndarray: folds the ufunc along axis (1-based; a " ..
    "list of axes folds several), starting from initial (or the ufunc's identity for an empty axis).",
  accumulate = "accumulate(a[, {axis=1}]) -> ndarray: the running fold along axis.",
  outer = "outer(a, b) -> ndarray: the ufunc of every element of a with every element of b (shape a.shape .. b.shape).",
  at = "at(a, indices, b) -> nil: a[indices] = ufunc(a[indices], b) in place, repeated indices applying again; " ..
    "indices: a tensor or a list of numbers (1-based, along the first dim; bools: a mask) or, as NumPy's tuple, " ..
    "a table holding index tensors, ranges {first, last[, step]}, \":\", \"...\" (one entry per dim, as in a[{...}]).",
  reduceat = "reduceat(a, indices[, {axis=1}]) -> ndarray: the folds of the slices a[indices[k] .. indices[k+1]-1] " ..
    "along axis (a[indices[k]] where the next index is not larger; the last runs to the end).",
}
for name, u in pairs(UFUNCS) do
  local ufunc = make_ufunc(name, RAW[name], u)
  for m, doc in pairs(UFUNC_DOCS) do torch._doc[ufunc[m]] = name .. "." .. doc end
  np[name] = ufunc
end
