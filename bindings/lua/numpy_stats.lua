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

-- np.asarray for array-likes (Lua numbers, booleans and nested lists); tensors as they are.
function S.array(op, v, what)
  if torch.is_tensor(v) then return v end
  local t = type(v)
  if t == "number" or t == "boolean" or (t == "table" and getmetatable(v) == nil) then return np.asarray(v) end
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
    r = torch.lerp(gather(lo):to(dtype), gather(hi):to(dtype), t:to(dtype))
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
    if FLOATS[b.dtype] then b = torch.where(b:isnan(), 0, b) end
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

-- The variance of the non-NaN values with ddof (NaN where fewer than ddof + 1 remain).
local function nanvar_last(b, ddof)
  local cnt, x, mask = non_nan(b)
  local avg = x:sum(-1, true) / cnt
  local d = torch.where(mask, 0, x - avg)
  local dof = cnt - ddof
  return torch.where(dof:le(0), NAN, (d * d):sum(-1, true) / dof):squeeze(-1)
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
-- uint8 fit float16, int16 float32, wider ones float64); the rest as the engine promotes.
local FLOAT_RANK = {float16 = 1, bfloat16 = 1, float32 = 2, float64 = 3}
local INT_NEEDS = {uint8 = 1, int8 = 1, int16 = 2, int32 = 3, int64 = 3}
local RANK_FLOAT = {"float16", "float32", "float64"}
function S.result_type(a, b)
  if a == b or b == "bool" then return a end
  if a == "bool" then return b end
  local fa, fb = FLOAT_RANK[a], FLOAT_RANK[b]
  if fa and not fb then return fa >= INT_NEEDS[b] and a or RANK_FLOAT[INT_NEEDS[b]] end
  if fb and not fa then return S.result_type(b, a) end
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
    local w = S.array(op, kw.weights, "weights")
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
local function variables(op, m, rowvar, what)
  m = S.array(op, m, what)
  if m.ndim > 2 then error(op .. ": " .. what .. " has more than 2 dimensions: " .. describe(m), 3) end
  m = m:to("float64")
  if m.ndim < 2 then m = m:reshape(1, -1) end
  if not rowvar and m.shape[1] ~= 1 then m = m:t() end
  return m
end

-- Observation weights (1-D, one per observation, >= 0; fweights integral).
local function obs_weights(op, v, n, name)
  v = S.array(op, v, name)
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
  if kw.y ~= nil then X = torch.cat({X, variables(op, kw.y, rowvar, "y")}, 1) end
  local ddof = kw.ddof
  if ddof ~= nil and math.type(ddof) ~= "integer" then error(op .. ": ddof must be an integer, got " .. describe(ddof), 3) end
  ddof = ddof or (bias and 0 or 1)
  local n = X.shape[2]
  local w, aw
  if kw.fweights ~= nil then w = obs_weights(op, kw.fweights, n, "fweights") end
  if kw.aweights ~= nil then
    aw = obs_weights(op, kw.aweights, n, "aweights")
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

-- a and b as tensors of NumPy's common dtype for comparing (at least float: result_type(b, 1.)).
local function close_pair(op, a, b)
  a, b = S.array(op, a, "a"), S.array(op, b, "b")
  local dt = S.result_type(a.dtype, b.dtype)
  if not FLOATS[dt] then dt = "float64" end
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
