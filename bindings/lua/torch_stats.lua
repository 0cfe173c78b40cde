-- PyTorch's spellings of the statistics in numpy_stats.lua (median, nanmedian, quantile,
-- nanquantile, nansum, nanmean, cov, corrcoef, isclose, allclose), with PyTorch's
-- signatures and rules: dims 1-based, results in the input's dtype, torch.median the lower
-- middle value and, with a dim, values and 1-based indices. Built from differentiable ops
-- (sort, gather, lerp, where, sum, matmul), so autograd comes with them. The helpers are
-- numpy_stats.lua's (np._stats), loaded with the numpy module. Loaded after torch_doc.lua (its
-- help texts go into torch._doc); its functions check their own arguments (no strict wrap).
local torch = ...

local function S() return require("numpy")._stats end

local function is_kw(v) return type(v) == "table" and not torch.is_tensor(v) end

-- op(fixed..., [p1, p2, ...][, {kw}]): the fixed positionals, then the optional ones by
-- name (each may come as a keyword instead, not both), checked against `valid`.
local function targs(op, nfixed, optional, valid, ...)
  local n = select("#", ...)
  local kw = {}
  if n > nfixed and is_kw(select(n, ...)) then
    kw = select(n, ...)
    n = n - 1
  end
  torch._check_keywords(op, kw, valid)
  if n > nfixed + #optional then
    error(string.format("%s: expected at most %d positional arguments, got %d", op, nfixed + #optional, n), 0)
  end
  local o = {}
  for k, v in pairs(kw) do o[k] = v end
  for i, name in ipairs(optional) do
    local v = select(nfixed + i, ...)
    if i + nfixed <= n and v ~= nil then
      if kw[name] ~= nil then error(op .. ": " .. name .. " given both as argument and as keyword", 0) end
      o[name] = v
    end
  end
  return o, ...
end

local function tensor_arg(op, x, what)
  if not torch.is_tensor(x) then error(op .. ": expected a tensor for " .. (what or "input") .. ", got " .. S().describe(x), 0) end
  return x
end

local function keepdim_of(op, o)
  if o.keepdim ~= nil and type(o.keepdim) ~= "boolean" then
    error(op .. ": keepdim must be true or false, got " .. S().describe(o.keepdim), 0)
  end
  return o.keepdim == true
end

-- torch.median / nanmedian: without dim the lower middle value of all elements (NaN when one
-- is NaN; nanmedian leaves NaNs out); with dim the values and 1-based indices along it.
local function median_fn(op, skip_nan)
  return function(...)
    local o, x = targs(op, 1, {"dim", "keepdim"}, {"dim", "keepdim"}, ...)
    tensor_arg(op, x)
    local keepdim = keepdim_of(op, o)
    if o.dim == nil then
      if o.keepdim ~= nil then error(op .. ": keepdim needs a dim", 0) end
      x = x:reshape(-1)
    elseif type(o.dim) ~= "number" then error(op .. ": dim must be an integer, got " .. S().describe(o.dim), 0) end
    local xs = x.ndim == 0 and x:reshape(1) or x
    local d = S().axis(op, o.dim or 1, xs.ndim)
    local n = xs.shape[d]
    if n == 0 then
      if o.dim == nil then return torch.full({}, 0 / 0, {dtype = x.dtype, device = x.device}) end
      error(string.format("%s: dim %d has size 0", op, o.dim), 0)
    end
    local sorted, order = xs:sort(d)
    local isnan = S().FLOATS[x.dtype] and xs:isnan() or nil
    local pos
    if skip_nan and isnan then
      pos = ((isnan:logical_not():sum(d, true) - 1) // 2):clamp{min = 0} + 1
    else
      local s = xs.shape
      s[d] = 1
      pos = torch.full(s, (n - 1) // 2 + 1, {dtype = "int64", device = x.device})
    end
    local values, indices = sorted:gather(d, pos), order:gather(d, pos)
    if isnan and not skip_nan then
      local any = isnan:any(d, true)
      values = torch.where(any, 0 / 0, values)
      indices = torch.where(any, isnan:to("int32"):argmax(d, true), indices)
    end
    if o.dim == nil then return values:reshape({}) end
    if not keepdim or x.ndim == 0 then
      values, indices = values:squeeze(d), indices:squeeze(d)
      if x.ndim == 0 then values, indices = values:reshape({}), indices:reshape({}) end
    end
    return values, indices
  end
end
torch.median = median_fn("median", false)
torch.nanmedian = median_fn("nanmedian", true)

-- torch.quantile / nanquantile(input, q[, dim][, keepdim][, {interpolation=}]).
local INTERPOLATIONS = {linear = true, lower = true, higher = true, midpoint = true, nearest = true}
local function quantile_fn(op, skip_nan)
  return function(...)
    local o, x, q = targs(op, 2, {"dim", "keepdim"}, {"dim", "keepdim", "interpolation"}, ...)
    tensor_arg(op, x)
    if x.dtype ~= "float32" and x.dtype ~= "float64" then
      error(op .. ": input must be float32 or float64, got " .. x.dtype, 0)
    end
    if torch.is_tensor(q) and q.ndim > 1 then error(op .. ": q must be a number or a 0-D or 1-D tensor, got " .. S().describe(q), 0) end
    if not (type(q) == "number" or torch.is_tensor(q)) then error(op .. ": q must be a number or a tensor, got " .. S().describe(q), 0) end
    if torch.is_tensor(q) and q.dtype ~= x.dtype then
      error(op .. ": q must have the input's dtype " .. x.dtype .. ", got " .. q.dtype, 0)
    end
    if x:numel() == 0 then error(op .. ": input must be non-empty", 0) end
    if o.dim ~= nil and type(o.dim) ~= "number" then error(op .. ": dim must be an integer, got " .. S().describe(o.dim), 0) end
    local m = S().method(op, o.interpolation or "linear", INTERPOLATIONS)
    local qt, scalar = S().quantiles(op, q, 1, "q")
    local keepdim = keepdim_of(op, o)
    local b, _, keep = S().to_last(op, x.ndim == 0 and o.dim ~= nil and x:reshape(1) or x, o.dim)
    local r = S().quantile_last(b, qt, scalar, m, skip_nan, x.dtype)
    if keepdim and x.ndim == 0 then keep = {} end
    return S().finish(r, scalar and {} or qt.shape, keep, keepdim)
  end
end
torch.quantile = quantile_fn("quantile", false)
torch.nanquantile = quantile_fn("nanquantile", true)

-- torch.nansum / nanmean(input[, dim][, keepdim][, {dim=, keepdim=}]): NaNs count as 0 /
-- are left out (an all-NaN slice's mean is NaN).
local function nan_reduce(op, f)
  return function(...)
    local o, x = targs(op, 1, {"dim", "keepdim"}, {"dim", "keepdim"}, ...)
    tensor_arg(op, x)
    local keepdim = keepdim_of(op, o)
    local b, _, keep = S().to_last(op, x, o.dim)
    return S().finish(f(b), {}, keep, keepdim)
  end
end
torch.nansum = nan_reduce("nansum", function(b)
  if S().FLOATS[b.dtype] then b = torch.where(b:isnan(), 0, b) end
  return b:sum(-1)
end)
torch.nanmean = nan_reduce("nanmean", function(b)
  if not S().FLOATS[b.dtype] then error("nanmean: expected a floating-point input, got " .. b.dtype, 0) end
  local mask = b:isnan()
  return torch.where(mask, 0, b):sum(-1) / mask:logical_not():sum(-1):to(b.dtype)
end)

-- torch.cov(input[, {correction=1, fweights=, aweights=}]): the covariance of the rows of a
-- 2-D input (a 1-D input is one variable), weighted per observation.
local function cov(op, x, o)
  tensor_arg(op, x)
  if x.ndim > 2 then error(op .. ": expected a 1-D or 2-D input, got " .. S().describe(x), 0) end
  if x:is_complex() then error(op .. ": " .. x.dtype .. " is not supported", 0) end
  if not S().FLOATS[x.dtype] then x = x:to(torch.get_default_dtype()) end
  local X = x.ndim < 2 and x:reshape(1, -1) or x
  local n = X.shape[2]
  local correction = o.correction == nil and 1 or o.correction
  if type(correction) ~= "number" then error(op .. ": correction must be a number, got " .. S().describe(correction), 0) end
  local w, aw
  for _, name in ipairs({"fweights", "aweights"}) do
    local v = o[name]
    if v ~= nil then
      tensor_arg(op, v, name)
      if v.ndim > 1 or v:numel() ~= n then
        error(string.format("%s: %s must be 0-D or 1-D with %d elements, got %s", op, name, n, S().describe(v)), 0)
      end
      if name == "fweights" and S().FLOATS[v.dtype] then error(op .. ": fweights must be integers, got " .. v.dtype, 0) end
      if name == "aweights" and not S().FLOATS[v.dtype] then error(op .. ": aweights must be floating point, got " .. v.dtype, 0) end
      if v:lt(0):any():item() then error(op .. ": " .. name .. " cannot be negative", 0) end
      v = v:reshape(-1):to(X.dtype)
      if name == "aweights" then aw = v end
      w = w and w * v or v
    end
  end
  local avg, norm
  if w == nil then
    avg, norm = X:mean(2, true), n - correction
  else
    local w_sum = w:sum()
    avg = (X * w):sum(2, true) / w_sum
    norm = correction == 0 and w_sum or (aw == nil and w_sum - correction or w_sum - (w * aw):sum() * correction / w_sum)
  end
  norm = torch.is_tensor(norm) and norm:clamp{min = 0} or math.max(norm, 0)
  local Xc = X - avg
  return (Xc:matmul((w and Xc * w or Xc):t()) / norm):squeeze()
end
function torch.cov(...)
  local o, x = targs("cov", 1, {}, {"correction", "fweights", "aweights"}, ...)
  return cov("cov", x, o)
end

-- torch.corrcoef(input): the covariance normalised by the standard deviations, in [-1, 1].
function torch.corrcoef(...)
  local _, x = targs("corrcoef", 1, {}, {}, ...)
  local c = cov("corrcoef", x, {})
  if c.ndim == 0 then return c / c end
  local n = c.shape[1]
  local sd = c:reshape(-1)[{{1, n * n, n + 1}}]:sqrt()
  return (c / sd:reshape(n, 1) / sd:reshape(1, n)):clamp(-1, 1)
end

-- torch.isclose / allclose(input, other[, rtol][, atol][, equal_nan][, {...}]).
for _, name in ipairs({"isclose", "allclose"}) do
  torch[name] = function(...)
    local o, a, b = targs(name, 2, {"rtol", "atol", "equal_nan"}, {"rtol", "atol", "equal_nan"}, ...)
    tensor_arg(name, a)
    tensor_arg(name, b, "other")
    local r = S().isclose(name, a, b, o)
    if name == "allclose" then return r:all():item() end
    return r
  end
end

-- Tensor methods too, as in PyTorch (x:median(), x:isclose(y), x:cov(), ...).
for _, name in ipairs({"median", "nanmedian", "quantile", "nanquantile", "nansum", "nanmean", "cov", "corrcoef",
                       "isclose", "allclose"}) do
  torch._add_method(name, torch[name])
end

-- help() texts (torch._doc), in the registry's form "signature -> result: paragraph".
local docs = {
  median = "median(input[, dim][, keepdim][, {dim=, keepdim=}]) -> Tensor[, Tensor]: the lower of the two middle " ..
    "values (NaN when a NaN is present); with dim, the values and 1-based indices along it.",
  nanmedian = "nanmedian(input[, dim][, keepdim][, {dim=, keepdim=}]) -> Tensor[, Tensor]: median leaving NaNs out.",
  quantile = "quantile(input, q[, dim][, keepdim][, {dim=, keepdim=, interpolation=\"linear\"}]) -> Tensor: the " ..
    "q-th quantiles (q in [0, 1], a number or 1-D tensor put first) of a float tensor; interpolation linear, lower, " ..
    "higher, midpoint or nearest.",
  nanquantile = "nanquantile(input, q[, dim][, keepdim][, {dim=, keepdim=, interpolation=\"linear\"}]) -> Tensor: " ..
    "quantile leaving NaNs out.",
  nansum = "nansum(input[, dim][, keepdim][, {dim=, keepdim=}]) -> Tensor: the sum with NaNs counted as zero.",
  nanmean = "nanmean(input[, dim][, keepdim][, {dim=, keepdim=}]) -> Tensor: the mean of the non-NaN values.",
  cov = "cov(input[, {correction=1, fweights=, aweights=}]) -> Tensor: the covariance matrix of the rows of input.",
  corrcoef = "corrcoef(input) -> Tensor: the correlation coefficients of the rows of input.",
  isclose = "isclose(input, other[, rtol][, atol][, equal_nan][, {rtol=1e-05, atol=1e-08, equal_nan=false}]) -> " ..
    "Tensor: |input - other| <= atol + rtol * |other| elementwise.",
  allclose = "allclose(input, other[, rtol][, atol][, equal_nan][, {rtol=1e-05, atol=1e-08, equal_nan=false}]) -> " ..
    "boolean: whether isclose holds everywhere.",
}
for name, doc in pairs(docs) do torch._doc[torch[name]] = doc end
