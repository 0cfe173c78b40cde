-- NumPy's set and counting functions (unique, bincount, histogram, digitize, searchsorted,
-- intersect1d, union1d, setdiff1d, isin) and shape/construction functions (diag, diagonal,
-- trace, triu, tril, tri, meshgrid, indices, repeat, roll, pad, diff, atleast_nd, split,
-- array_split, column_stack, dstack, rot90, unravel_index, ravel_multi_index, vander) and
-- np.lib.stride_tricks, written on the engine's differentiable ops (sort, cumsum, gather,
-- index_select, cat, where, ...) so that they run on every device and carry gradients.
-- Axes are 1-based (negative from the end) and every index a function takes or returns is
-- 1-based (unique's return_index/inverse, searchsorted's and digitize's insertion positions,
-- indices, unravel_index, split points). The implementations shared with the torch spellings
-- (torch_sets_shape.lua) are in np._sets_shape.
local np = ...
local torch = require "torch"
local util = torch.nn._util
local fail, describe = util.fail, util.describe

local S = {}
np._sets_shape = S

-- A plain Lua table (no metatable: its entries and length are what they look like).
local function is_list(v) return type(v) == "table" and getmetatable(v) == nil end

local INT = {uint8 = true, uint16 = true, uint32 = true, uint64 = true, int8 = true, int16 = true, int32 = true, int64 = true}
local function is_float(x) return torch.is_floating_point(x) end
local function is_int(x) return INT[x.dtype] == true end
S.is_int = is_int

-- Reads op's arguments like nn._util.args; a trailing table counts as keywords only beyond
-- the required positionals, so that np.unique({}) is an empty list, not empty keywords.
local function args(op, names, nreq, defaults, ...)
  local n = select("#", ...)
  local last = n > 0 and select(n, ...) or nil
  -- With no more arguments than the required ones, a trailing list (or {}) is a value, but a
  -- table with string keys is still the keyword table (sliding_window_view(x, {window_shape = 3})).
  local has_keys = type(last) == "table" and next(last) ~= nil and rawlen(last) == 0
  if n <= nreq and type(last) == "table" and getmetatable(last) == nil and not has_keys then
    local packed = table.pack(...)
    packed.n = packed.n + 1
    packed[packed.n] = {}
    return util.args(op, names, nreq, defaults, table.unpack(packed, 1, packed.n))
  end
  return util.args(op, names, nreq, defaults, ...)
end
S.args = args

-- A tensor from x: a tensor stays itself, a Lua number or list becomes one (np.asarray), on
-- the device of `like` when that is a tensor (the other operand of a two-input function).
local function arr(x, like)
  if torch.is_tensor(x) then return x end
  local t = np.asarray(x)
  if torch.is_tensor(like) and like.device ~= t.device then t = t:to(like.device) end
  return t
end
S.arr = arr

local function check_tensor(op, name, x)
  if not torch.is_tensor(x) then fail(op, "expected a tensor for %s, got %s", name, describe(x)) end
  return x
end
S.check_tensor = check_tensor

local function check_bool(op, name, v)
  if type(v) ~= "boolean" then fail(op, "%s must be true or false, got %s", name, describe(v)) end
  return v
end
S.check_bool = check_bool

local function check_int(op, name, v, min)
  local i = math.type(v) and math.tointeger(v)
  if not i or (min and i < min) then
    if min then fail(op, "%s must be an integer >= %d, got %s", name, min, describe(v)) end
    fail(op, "%s must be an integer, got %s", name, describe(v))
  end
  return i
end
S.check_int = check_int

-- A 1-based axis (negative counts from the end) of an ndim-D array as a positive one.
local function axis_of(op, ax, ndim, name)
  local a = math.type(ax) and math.tointeger(ax)
  if not a then fail(op, "%s must be an integer, got %s", name or "axis", describe(ax)) end
  if ndim == 0 or a == 0 or a < -ndim or a > ndim then
    if ndim == 0 then fail(op, "%s %d is out of range for a 0-D array", name or "axis", a) end
    fail(op, "%s %d is out of range for a %d-D array (valid: %d..-1 or 1..%d)", name or "axis", a, ndim, -ndim, ndim)
  end
  if a < 0 then a = a + ndim + 1 end
  return a
end
S.axis_of = axis_of

-- A number for messages: "nan" on every platform (string.format gives "-nan" on some).
local function num_str(v)
  if v ~= v then return "nan" end
  return tostring(v)
end
S.num_str = num_str

local function i64(x) return x:to("int64") end
-- 0 .. n-1 (int64) on device dev (the CPU when nil).
local function arange(n, dev)
  if dev == nil then return torch.arange(n) end
  return torch.arange(n, {device = dev})
end
local function numel(x) return x:numel() end

-- The boundary mask of a sorted 1-D tensor: true where an element differs from the one
-- before (the first is true). equal_nan: NaNs count as equal (NumPy's unique).
local function run_starts(s, equal_nan)
  local n = numel(s)
  if n == 0 then return torch.zeros(0, {dtype = "bool", device = s.device}) end
  local a, b = s:narrow(1, 2, n - 1), s:narrow(1, 1, n - 1)
  local ne = a:ne(b)
  if equal_nan and is_float(s) then ne = ne:logical_and(a:isnan():logical_and(b:isnan()):logical_not()) end
  return torch.cat({torch.ones(1, {dtype = "bool", device = s.device}), ne}, 1)
end

-- Rows of a 2-D tensor sorted lexicographically (a stable sort per column, last first):
-- the permutation (1-based).
local function lexsort_rows(m)
  local n, c = m.shape[1], m.shape[2]
  local perm = arange(n, m.device) + 1
  for j = c, 1, -1 do
    local col = m:select(2, j):index_select(1, perm)
    perm = perm:index_select(1, torch.argsort(col, 1))
  end
  return perm
end

-- unique along nothing (a flattened x) or along axis; returns values and, as asked, the
-- 1-based first-occurrence index, the inverse (1-based) and the counts.
function S.unique(op, x, want_index, want_inverse, want_counts, axis, equal_nan)
  local perm, s, starts, shape_back
  if axis == nil then
    local flat = x:reshape(-1)
    s, perm = torch.sort(flat, 1)
    starts = run_starts(s, equal_nan)
  else
    axis = axis_of(op, axis, x:dim())
    local moved = x:movedim(axis, 1)
    local n = moved.shape[1]
    local rest = 1
    for i = 2, moved:dim() do rest = rest * moved.shape[i] end   -- fits: moved exists
    local rows = moved:reshape(n, rest)
    if rows.shape[2] == 0 and n > 0 then fail(op, "cannot take unique rows of an array with an empty axis besides axis %d", axis) end
    perm = lexsort_rows(rows)
    local sorted = rows:index_select(1, perm)
    if n == 0 then starts = torch.zeros(0, {dtype = "bool", device = x.device})
    else
      local diff = sorted:narrow(1, 2, n - 1):ne(sorted:narrow(1, 1, n - 1)):any(2)
      starts = torch.cat({torch.ones(1, {dtype = "bool", device = x.device}), diff}, 1)
    end
    s = sorted
    shape_back = moved.shape
  end
  local first = torch.nonzero(starts):reshape(-1)                 -- 1-based positions in s
  local values = s:index_select(1, first)
  if shape_back then
    shape_back[1] = first:numel()
    values = values:reshape(shape_back):movedim(1, axis)
  end
  local out = {values}
  if want_index then out[#out + 1] = perm:index_select(1, first) end
  if want_inverse then
    local group = i64(starts):cumsum(1)
    out[#out + 1] = torch.zeros(group:numel(), {dtype = "int64", device = x.device}):scatter(1, perm, group)
  end
  if want_counts then
    local ends = torch.cat({first, torch.tensor({starts:numel() + 1}, {device = x.device})}, 1)
    out[#out + 1] = ends:narrow(1, 2, first:numel()) - ends:narrow(1, 1, first:numel())
  end
  return out
end

function np.unique(...)
  local o = args("unique", {"ar", "return_index", "return_inverse", "return_counts", "axis", "equal_nan"}, 1,
    {return_index = false, return_inverse = false, return_counts = false, equal_nan = true}, ...)
  local x = arr(o.ar)
  for _, k in ipairs{"return_index", "return_inverse", "return_counts", "equal_nan"} do check_bool("unique", k, o[k]) end
  local out = S.unique("unique", x, o.return_index, o.return_inverse, o.return_counts, o.axis, o.equal_nan)
  return table.unpack(out)
end

-- The 0-based insertion positions of v (any shape) into the sorted 1-D a: the count of
-- elements of a below v (side "left") or at most v ("right"), by one stable sort of both.
function S.searchsorted0(a, v, right)
  local dt = torch.result_type(a, v)
  local af, vf = a:to(dt):reshape(-1), v:to(dt):reshape(-1)
  local n, m = af:numel(), vf:numel()
  local merged = right and torch.cat({af, vf}, 1) or torch.cat({vf, af}, 1)
  local perm = torch.argsort(merged, 1)
  local is_a = right and perm:le(n) or perm:gt(m)
  local count = i64(is_a):cumsum(1)
  local is_v = is_a:logical_not()
  local vidx = perm:masked_select(is_v)
  if right then vidx = vidx - n end
  local res = torch.zeros(m, {dtype = "int64", device = v.device}):scatter(1, vidx, count:masked_select(is_v))
  return res:reshape(v.shape)
end

-- np.searchsorted / torch.searchsorted: 1-based insertion positions (NumPy's + 1).
function S.searchsorted(op, a, v, side, sorter)
  if a:dim() ~= 1 then fail(op, "the sorted sequence must be 1-D, got shape %s", util.shape_str(a.shape)) end
  if side ~= "left" and side ~= "right" then fail(op, "side must be 'left' or 'right', got %s", describe(side)) end
  if sorter ~= nil then
    sorter = arr(sorter, a)
    if not is_int(sorter) or sorter:dim() ~= 1 or sorter:numel() ~= a:numel() then
      fail(op, "sorter must be a 1-D integer tensor of %d indices, got %s %s", a:numel(), describe(sorter), sorter.dtype)
    end
    a = a:index_select(1, i64(sorter))
  end
  return S.searchsorted0(a, v, side == "right") + 1
end

function np.searchsorted(...)
  local o = args("searchsorted", {"a", "v", "side", "sorter"}, 2, {side = "left"}, ...)
  local number = type(o.v) == "number"
  local a = arr(o.a, o.v)
  local r = S.searchsorted("searchsorted", a, arr(o.v, a), o.side, o.sorter)
  if number then return r:item() end
  return r
end

-- np.digitize: the 1-based bin positions, searchsorted on increasing or decreasing bins.
function np.digitize(...)
  local o = args("digitize", {"x", "bins", "right"}, 2, {right = false}, ...)
  local number = type(o.x) == "number"
  local x = arr(o.x, o.bins)
  local bins = arr(o.bins, x)
  check_bool("digitize", "right", o.right)
  if bins:dim() ~= 1 then fail("digitize", "bins must be 1-D, got shape %s", util.shape_str(bins.shape)) end
  local n = bins:numel()
  local r
  if n <= 1 or torch.all(bins:narrow(1, 2, n - 1):ge(bins:narrow(1, 1, n - 1))):item() then
    r = S.searchsorted0(bins, x, not o.right) + 1
  elseif torch.all(bins:narrow(1, 2, n - 1):le(bins:narrow(1, 1, n - 1))):item() then
    r = (n - S.searchsorted0(bins:flip(1), x, not o.right)) + 1
  else
    fail("digitize", "bins must be monotonically increasing or decreasing")
  end
  if number then return r:item() end
  return r
end

-- np.bincount / torch.bincount: counts (or summed weights) of each value 0..max of a 1-D
-- non-negative integer tensor; at least minlength bins.
function S.bincount(op, x, weights, minlength, result_dtype)
  if not (is_int(x) or x.dtype == "bool") then fail(op, "x must be an integer tensor, got %s", x.dtype) end
  -- As NumPy: counts index an int64 array, and uint64 does not cast to int64 safely.
  if x.dtype == "uint64" then fail(op, "x of dtype uint64 cannot be cast safely to int64") end
  if x:dim() ~= 1 then fail(op, "x must be 1-D, got shape %s", util.shape_str(x.shape)) end
  minlength = check_int(op, "minlength", minlength, 0)
  local n = minlength
  if x:numel() > 0 then
    local lo = x:min():item()
    if lo == true or lo == false then lo = lo and 1 or 0 end
    if lo < 0 then fail(op, "x must be non-negative, got %d", lo) end
    local hi = x:max():item()
    if hi == true or hi == false then hi = hi and 1 or 0 end
    n = math.max(n, hi + 1)
  end
  local idx = i64(x) + 1
  if weights == nil then
    return torch.zeros(n, {dtype = "int64", device = x.device}):index_add(1, idx, torch.ones(x:numel(), {dtype = "int64", device = x.device}))
  end
  if not util.same_shape(weights.shape, x.shape) then
    fail(op, "weights must have the shape of x %s, got %s", util.shape_str(x.shape), util.shape_str(weights.shape))
  end
  local dt = result_dtype or weights.dtype
  return torch.zeros(n, {dtype = dt, device = x.device}):index_add(1, idx, weights:to(dt))
end

function np.bincount(...)
  local o = args("bincount", {"x", "weights", "minlength"}, 1, {minlength = 0}, ...)
  local x = arr(o.x, o.weights)
  local w = o.weights ~= nil and arr(o.weights, x) or nil
  return S.bincount("bincount", x, w, o.minlength, "float64")
end

-- np.histogram: counts of a's values in bins (uniform over range, or given edges, where NumPy
-- ignores range); values on an inner edge go to the bin on its right, the last edge belongs
-- to the last bin.
function np.histogram(...)
  local o = args("histogram", {"a", "bins", "range", "density", "weights"}, 1, {bins = 10, density = false}, ...)
  local op = "histogram"
  local a = arr(o.a, o.weights)
  local w = o.weights ~= nil and arr(o.weights, a) or nil
  if w ~= nil and not util.same_shape(w.shape, a.shape) then
    fail(op, "weights must have the shape of a %s, got %s", util.shape_str(a.shape), util.shape_str(w.shape))
  end
  a = a:reshape(-1)
  if w ~= nil then w = w:reshape(-1) end
  if o.density ~= nil then check_bool(op, "density", o.density) end
  local edge_dt = is_float(a) and a.dtype or "float64"
  local edges
  if type(o.bins) == "number" then
    local nb = check_int(op, "bins", o.bins, 1)
    local lo, hi
    if o.range ~= nil then
      if not is_list(o.range) or torch.is_tensor(o.range) or #o.range ~= 2 or type(o.range[1]) ~= "number" or type(o.range[2]) ~= "number" then
        fail(op, "range must be a table of two numbers, got %s", describe(o.range))
      end
      lo, hi = o.range[1], o.range[2]
      if lo > hi then fail(op, "max must be larger than min in range parameter, got {%s, %s}", num_str(lo), num_str(hi)) end
      if lo ~= lo or hi ~= hi or math.abs(lo) == math.huge or math.abs(hi) == math.huge then
        fail(op, "supplied range of {%s, %s} is not finite", num_str(lo), num_str(hi))
      end
    end
    if lo == nil then
      if a:numel() == 0 then lo, hi = 0, 1
      else
        lo, hi = a:min():to("float64"):item(), a:max():to("float64"):item()
        if lo ~= lo or hi ~= hi or math.abs(lo) == math.huge or math.abs(hi) == math.huge then
          fail(op, "autodetected range of {%s, %s} is not finite", num_str(lo), num_str(hi))
        end
      end
    end
    if lo == hi then lo, hi = lo - 0.5, hi + 0.5 end
    edges = torch.linspace(lo, hi, nb + 1, {dtype = edge_dt, device = a.device})
  else
    edges = arr(o.bins, a)
    if edges:dim() ~= 1 or edges:numel() < 2 then fail(op, "bins must be an integer or a 1-D list of at least 2 edges, got %s", describe(o.bins)) end
    local ne = edges:numel()
    if not torch.all(edges:narrow(1, 2, ne - 1):ge(edges:narrow(1, 1, ne - 1))):item() then
      fail(op, "bins must increase monotonically, when an array")
    end
  end
  local nb = edges:numel() - 1
  local first, last = edges:narrow(1, 1, 1), edges:narrow(1, nb + 1, 1)
  local keep = a:ge(first):logical_and(a:le(last))
  local av = a:masked_select(keep)
  local bin = S.searchsorted0(edges, av, true)                    -- 1..nb+1 (0-based bin + 1)
  bin = torch.clamp(bin, 1, nb) - 1
  local hist
  if w then
    hist = S.bincount(op, bin, w:masked_select(keep), nb, w.dtype)
  else
    hist = S.bincount(op, bin, nil, nb)
  end
  if o.density then
    local widths = (edges:narrow(1, 2, nb) - edges:narrow(1, 1, nb)):to("float64")
    hist = hist:to("float64") / hist:to("float64"):sum() / widths
  end
  return hist, edges
end

-- np.isin / torch.isin: whether each element of x is among test's (a sort and a search).
function S.isin(x, test, invert)
  local dt = torch.result_type(x, test)
  local t = torch.sort(test:to(dt):reshape(-1), 1)
  local xd = x:to(dt)
  local found
  if t:numel() == 0 then found = torch.zeros(x.shape, {dtype = "bool", device = x.device})
  else
    local pos = torch.clamp(S.searchsorted0(t, xd, false), 0, t:numel() - 1) + 1
    found = t:index_select(1, pos:reshape(-1)):reshape(x.shape):eq(xd)
  end
  if invert then return found:logical_not() end
  return found
end

function np.isin(...)
  local o = args("isin", {"element", "test_elements", "assume_unique", "invert"}, 2, {assume_unique = false, invert = false}, ...)
  check_bool("isin", "assume_unique", o.assume_unique)
  check_bool("isin", "invert", o.invert)
  local e = arr(o.element, o.test_elements)
  return S.isin(e, arr(o.test_elements, e), o.invert)
end

local function unique_values(x) return S.unique("unique", x, false, false, false, nil, true)[1] end

function np.intersect1d(...)
  local o = args("intersect1d", {"ar1", "ar2", "assume_unique", "return_indices"}, 2, {assume_unique = false, return_indices = false}, ...)
  local op = "intersect1d"
  check_bool(op, "assume_unique", o.assume_unique)
  check_bool(op, "return_indices", o.return_indices)
  local a = arr(o.ar1, o.ar2):reshape(-1)
  local b = arr(o.ar2, a):reshape(-1)
  local ia, ib
  if not o.assume_unique then
    if o.return_indices then
      local ua, ub = S.unique(op, a, true, false, false, nil, true), S.unique(op, b, true, false, false, nil, true)
      a, ia, b, ib = ua[1], ua[2], ub[1], ub[2]
    else
      a, b = unique_values(a), unique_values(b)
    end
  end
  local aux = torch.cat({a, b}, 1)
  local sorted, perm = torch.sort(aux, 1)
  local n = aux:numel()
  if n == 0 then
    if o.return_indices then return sorted, torch.zeros(0, {dtype = "int64"}), torch.zeros(0, {dtype = "int64"}) end
    return sorted
  end
  local mask = sorted:narrow(1, 2, n - 1):eq(sorted:narrow(1, 1, n - 1))
  local values = sorted:narrow(1, 1, n - 1):masked_select(mask)
  if not o.return_indices then return values end
  local i1 = perm:narrow(1, 1, n - 1):masked_select(mask)
  local i2 = perm:narrow(1, 2, n - 1):masked_select(mask) - a:numel()
  if ia then i1, i2 = ia:index_select(1, i1), ib:index_select(1, i2) end
  return values, i1, i2
end

function np.union1d(...)
  local o = args("union1d", {"ar1", "ar2"}, 2, {}, ...)
  local a = arr(o.ar1, o.ar2)
  return unique_values(torch.cat({a:reshape(-1), arr(o.ar2, a):reshape(-1)}, 1))
end

function np.setdiff1d(...)
  local o = args("setdiff1d", {"ar1", "ar2", "assume_unique"}, 2, {assume_unique = false}, ...)
  check_bool("setdiff1d", "assume_unique", o.assume_unique)
  local a = arr(o.ar1, o.ar2):reshape(-1)
  local b = arr(o.ar2, a):reshape(-1)
  if not o.assume_unique then a, b = unique_values(a), unique_values(b) end
  return a:masked_select(S.isin(a, b, true))
end

---------------------------------------------------------------------------------------------
-- Diagonals and triangles.

-- The k-th diagonal of the plane (axis1, axis2) as the last dim (a copy, by gather).
function S.diagonal(op, x, k, axis1, axis2)
  local nd = x:dim()
  if nd < 2 then fail(op, "needs an array of at least 2 dims, got %d", nd) end
  k = check_int(op, "offset", k)
  local d1, d2 = axis_of(op, axis1, nd, "axis1"), axis_of(op, axis2, nd, "axis2")
  if d1 == d2 then fail(op, "axis1 and axis2 cannot be the same (both %d)", d1) end
  local m = x:movedim({d1, d2}, {nd - 1, nd})
  local r, c = m.shape[nd - 1], m.shape[nd]
  local rs, cs = math.max(0, -k), math.max(0, k)                  -- first row, column
  local len = math.max(0, math.min(r - rs, c - cs))
  local rows = m:narrow(nd - 1, len > 0 and rs + 1 or 1, len)
  local shape = rows.shape
  shape[nd] = 1
  local idx = (arange(len, x.device) + (cs + 1))
  local ishape = {}
  for i = 1, nd do ishape[i] = 1 end
  ishape[nd - 1] = len
  idx = idx:reshape(ishape):expand(shape)
  return rows:gather(nd, idx):squeeze(nd)
end

-- A square matrix with the 1-D v on its k-th diagonal (where, so v's gradient flows).
function S.diag_matrix(op, v, k)
  local n = v:numel()
  if k == math.mininteger or math.abs(k) > math.maxinteger - n then
    fail(op, "k %d makes a matrix larger than 2^63-1 rows", k)
  end
  local N = n + math.abs(k)
  local z = torch.zeros(math.abs(k), {dtype = v.dtype, device = v.device})
  local w = k >= 0 and torch.cat({z, v}, 1) or torch.cat({v, z}, 1)  -- indexed by column
  local i, j = arange(N, v.device):unsqueeze(2), arange(N, v.device):unsqueeze(1)
  local mask = (j - i):eq(k)
  return torch.where(mask, w:unsqueeze(1):expand(N, N), torch.zeros(1, {dtype = v.dtype, device = v.device}))
end

function S.diag(op, x, k)
  k = check_int(op, "k", k)
  if x:dim() == 1 then return S.diag_matrix(op, x, k) end
  if x:dim() == 2 then return S.diagonal(op, x, k, 1, 2) end
  fail(op, "input must be 1-D or 2-D, got shape %s", util.shape_str(x.shape))
end

function np.diag(...)
  local o = args("diag", {"v", "k"}, 1, {k = 0}, ...)
  return S.diag("diag", arr(o.v), o.k)
end

function np.diagonal(...)
  local o = args("diagonal", {"a", "offset", "axis1", "axis2"}, 1, {offset = 0, axis1 = 1, axis2 = 2}, ...)
  return S.diagonal("diagonal", arr(o.a), o.offset, o.axis1, o.axis2)
end

function np.trace(...)
  local o = args("trace", {"a", "offset", "axis1", "axis2", "dtype"}, 1, {offset = 0, axis1 = 1, axis2 = 2}, ...)
  local d = S.diagonal("trace", arr(o.a), o.offset, o.axis1, o.axis2)
  if o.dtype ~= nil then return d:sum(-1, {dtype = o.dtype}) end
  return d:sum(-1)
end

-- x where (column - row) compares with k as keep says, zeros elsewhere (last two dims).
function S.triangle(op, x, k, upper)
  if x:dim() < 2 then fail(op, "input must have at least 2 dims, got shape %s", util.shape_str(x.shape)) end
  k = check_int(op, "k", k)
  local r, c = x.shape[x:dim() - 1], x.shape[x:dim()]
  local d = arange(c, x.device):unsqueeze(1) - arange(r, x.device):unsqueeze(2)
  local mask = upper and d:ge(k) or d:le(k)
  return torch.where(mask, x, torch.zeros(1, {dtype = x.dtype, device = x.device}))
end

function np.triu(...)
  local o = args("triu", {"m", "k"}, 1, {k = 0}, ...)
  return S.triangle("triu", arr(o.m), o.k, true)
end

function np.tril(...)
  local o = args("tril", {"m", "k"}, 1, {k = 0}, ...)
  return S.triangle("tril", arr(o.m), o.k, false)
end

function np.tri(...)
  local o = args("tri", {"N", "M", "k", "dtype"}, 1, {k = 0, dtype = "float64"}, ...)
  local n = check_int("tri", "N", o.N, 0)
  local m = o.M == nil and n or check_int("tri", "M", o.M, 0)
  local k = check_int("tri", "k", o.k)
  local d = arange(m):unsqueeze(1) - arange(n):unsqueeze(2)
  return d:le(k):to(o.dtype)
end

---------------------------------------------------------------------------------------------
-- Grids.

-- Copies (np) or expanded views (torch) of the 1-D versions of xs on the grid; "xy" swaps
-- the first two output dims (Cartesian indexing).
function S.meshgrid(op, xs, indexing, sparse, copy)
  if indexing ~= "xy" and indexing ~= "ij" then fail(op, "indexing must be 'xy' or 'ij', got %s", describe(indexing)) end
  local n = #xs
  local sizes = {}
  for i, x in ipairs(xs) do sizes[i] = x:numel() end
  local pos = {}
  for i = 1, n do pos[i] = i end
  if indexing == "xy" and n >= 2 then pos[1], pos[2] = 2, 1 end
  local shape = {}
  for i = 1, n do shape[pos[i]] = sizes[i] end
  local out = {}
  for i, x in ipairs(xs) do
    local s = {}
    for j = 1, n do s[j] = 1 end
    s[pos[i]] = sizes[i]
    local g = x:reshape(s)
    if not sparse then g = g:expand(shape) end
    if copy then g = g:clone() end
    out[i] = g
  end
  return out
end

function np.meshgrid(...)
  local n = select("#", ...)
  local kw = n > 0 and select(n, ...) or nil
  if type(kw) == "table" and not torch.is_tensor(kw) and getmetatable(kw) == nil and kw[1] == nil and next(kw) ~= nil then
    n = n - 1
  else
    kw = {}
  end
  torch._check_keywords("meshgrid", kw, {"indexing", "sparse", "copy"})
  local xs = {}
  for i = 1, n do xs[i] = arr((select(i, ...))) end
  local sparse, copy = kw.sparse, kw.copy
  if sparse == nil then sparse = false end
  if copy == nil then copy = true end
  check_bool("meshgrid", "sparse", sparse)
  check_bool("meshgrid", "copy", copy)
  return S.meshgrid("meshgrid", xs, kw.indexing or "xy", sparse, copy)
end

-- np.indices: the 1-based index grids of a shape, stacked (dims... -> ndim x dims...).
function np.indices(...)
  local o = args("indices", {"dimensions", "dtype", "sparse"}, 1, {dtype = "int64", sparse = false}, ...)
  local dims = o.dimensions
  if not is_list(dims) or torch.is_tensor(dims) then fail("indices", "dimensions must be a table of sizes, got %s", describe(dims)) end
  check_bool("indices", "sparse", o.sparse)
  local xs, shape = {}, {#dims}
  for i, d in ipairs(dims) do shape[i + 1] = check_int("indices", "dimensions", d, 0) end
  if o.sparse then
    for i = 1, #dims do xs[i] = (arange(shape[i + 1]) + 1):to(o.dtype) end
    return S.meshgrid("indices", xs, "ij", true, false)
  end
  -- the result first, so that a shape too large fails before any grid is built
  local out = torch.empty(shape, {dtype = o.dtype})
  for i = 1, #dims do
    local s = {}
    for j = 1, #dims do s[j] = 1 end
    s[i] = shape[i + 1]
    out:select(1, i):copy_((arange(shape[i + 1]) + 1):reshape(s):expand(out:select(1, i).shape))
  end
  return out
end

---------------------------------------------------------------------------------------------
-- Repeating, rolling, padding, differences.

-- The 1-based source positions of x's elements repeated `repeats` times along an axis of
-- length n (a number or a 1-D tensor of n counts).
function S.repeat_index(op, repeats, n, dev)
  if type(repeats) == "number" then
    local r = check_int(op, "repeats", repeats, 0)
    return (arange(n, dev) + 1):unsqueeze(2):expand(n, r):reshape(-1)
  end
  if not torch.is_tensor(repeats) then repeats = np.asarray(repeats):to(dev) end
  if not is_int(repeats) then fail(op, "repeats must be integers, got %s", repeats.dtype) end
  if repeats:numel() == 1 then return S.repeat_index(op, repeats:reshape(-1)[1]:item(), n, dev) end
  if repeats:dim() ~= 1 or repeats:numel() ~= n then
    fail(op, "repeats must be a number or have one count per element (%d), got shape %s", n, util.shape_str(repeats.shape))
  end
  if n > 0 and repeats:min():item() < 0 then fail(op, "repeats may not be negative, got %d", repeats:min():item()) end
  local ends = i64(repeats):cumsum(1)
  local total = n > 0 and ends[n]:item() or 0
  return S.searchsorted0(ends, arange(total, dev), true) + 1
end

function S.repeat_(op, x, repeats, axis)
  if axis == nil then x, axis = x:reshape(-1), 1 else axis = axis_of(op, axis, x:dim()) end
  return x:index_select(axis, S.repeat_index(op, repeats, x.shape[axis], x.device))
end

np["repeat"] = function(...)
  local o = args("repeat", {"a", "repeats", "axis"}, 2, {}, ...)
  return S.repeat_("repeat", arr(o.a), o.repeats, o.axis)
end

-- x rolled by shift along axes (numbers or tables, paired as NumPy broadcasts them); without
-- axes the flattened x is rolled and reshaped.
function S.roll(op, x, shift, axis)
  if axis == nil then
    if type(shift) ~= "number" then fail(op, "shift must be a number when no axis is given, got %s", describe(shift)) end
    return S.roll(op, x:reshape(-1), shift, 1):reshape(x.shape)
  end
  local shifts = is_list(shift) and shift or {shift}
  local axes = is_list(axis) and axis or {axis}
  if #shifts ~= #axes and #shifts ~= 1 and #axes ~= 1 then
    fail(op, "shift and axis must have the same length, got %d and %d", #shifts, #axes)
  end
  local total = {}
  for i = 1, math.max(#shifts, #axes) do
    local d = axis_of(op, axes[#axes == 1 and 1 or i], x:dim())
    total[d] = (total[d] or 0) + check_int(op, "shift", shifts[#shifts == 1 and 1 or i])
  end
  for d = 1, x:dim() do
    local n = x.shape[d]
    if total[d] and n > 0 then
      local s = total[d] % n
      if s ~= 0 then x = torch.cat({x:narrow(d, n - s + 1, s), x:narrow(d, 1, n - s)}, d) end
    end
  end
  return x
end

function np.roll(...)
  local o = args("roll", {"a", "shift", "axis"}, 2, {}, ...)
  return S.roll("roll", arr(o.a), o.shift, o.axis)
end

-- Per-axis {before, after} pairs from NumPy's pad_width forms: n, {n}, {b, a}, {{b, a}},
-- {{b1, a1}, ...}.
local function pad_pairs(op, pw, nd, name, is_value)
  local function num(v)
    if is_value then
      if type(v) ~= "number" and type(v) ~= "boolean" then fail(op, "%s must hold numbers, got %s", name, describe(v)) end
      return v
    end
    return check_int(op, name, v, 0)
  end
  local pairs_ = {}
  if not is_list(pw) or torch.is_tensor(pw) then
    local v = num(pw)
    for i = 1, nd do pairs_[i] = {v, v} end
    return pairs_
  end
  if not is_list(pw[1]) then
    if #pw == 1 then for i = 1, nd do pairs_[i] = {num(pw[1]), num(pw[1])} end
    elseif #pw == 2 then for i = 1, nd do pairs_[i] = {num(pw[1]), num(pw[2])} end
    else fail(op, "%s must be a number, {before, after} or one pair per axis (%d), got %d numbers", name, nd, #pw) end
    return pairs_
  end
  if #pw ~= 1 and #pw ~= nd then fail(op, "%s has %d pairs for an array of %d axes", name, #pw, nd) end
  for i = 1, nd do
    local p = pw[#pw == 1 and 1 or i]
    if not is_list(p) or (#p ~= 1 and #p ~= 2) then fail(op, "%s must hold pairs {before, after}, got %s", name, describe(p)) end
    pairs_[i] = {num(p[1]), num(p[#p])}
  end
  return pairs_
end

-- Source positions (1-based) of the padded axis for the index-based modes.
local function pad_index(mode, n, before, after, dev)
  local i = arange(n + before + after, dev) - before           -- 0-based source position
  if mode == "edge" or (mode == "reflect" and n == 1) then return torch.clamp(i, 0, n - 1) + 1 end
  if mode == "wrap" then return torch.remainder(i, n) + 1 end
  local p = 2 * (n - 1)                                          -- reflect: period 2(n-1)
  local r = torch.remainder(i, p)
  return torch.where(r:ge(n), r:neg() + p, r) + 1
end

function S.pad(op, x, pw, mode, values)
  local nd = x:dim()
  local widths = pad_pairs(op, pw, nd, "pad_width")
  if mode ~= "constant" and mode ~= "edge" and mode ~= "reflect" and mode ~= "wrap" then
    fail(op, "mode must be 'constant', 'edge', 'reflect' or 'wrap', got %s", describe(mode))
  end
  local vals = mode == "constant" and pad_pairs(op, values, nd, "constant_values", true) or nil
  for d = 1, nd do
    local b, a = widths[d][1], widths[d][2]
    if b > 0 or a > 0 then
      if mode == "constant" then
        local parts = {}
        local function block(w, v)
          local s = x.shape
          s[d] = w
          return torch.full(s, v, {dtype = x.dtype, device = x.device})
        end
        if b > 0 then parts[#parts + 1] = block(b, vals[d][1]) end
        parts[#parts + 1] = x
        if a > 0 then parts[#parts + 1] = block(a, vals[d][2]) end
        x = torch.cat(parts, d)
      else
        if x.shape[d] == 0 then fail(op, "can't extend empty axis %d using modes other than 'constant'", d) end
        x = x:index_select(d, pad_index(mode, x.shape[d], b, a, x.device))
      end
    end
  end
  return x
end

function np.pad(...)
  local o = args("pad", {"array", "pad_width", "mode", "constant_values"}, 2, {mode = "constant", constant_values = 0}, ...)
  return S.pad("pad", arr(o.array), o.pad_width, o.mode, o.constant_values)
end

-- The n-th difference along axis, after joining prepend and append (numbers broadcast to
-- one slice; n = 0 returns x as it is, as NumPy does); bool arrays differ by not_equal.
function S.diff(op, x, n, axis, prepend, append)
  n = check_int(op, "n", n, 0)
  if x:dim() == 0 then fail(op, "diff requires input that is at least one dimensional") end
  local d = axis_of(op, axis, x:dim())
  if n == 0 then return x end                                  -- NumPy joins nothing then
  local function slab(v)
    v = arr(v, x)
    if v:dim() > 0 then return v end
    local s = x.shape
    s[d] = 1
    return v:to(torch.result_type(x, v)):expand(s)
  end
  if prepend ~= nil or append ~= nil then
    local parts = {}
    if prepend ~= nil then parts[#parts + 1] = slab(prepend) end
    parts[#parts + 1] = x
    if append ~= nil then parts[#parts + 1] = slab(append) end
    x = torch.cat(parts, d)
  end
  for _ = 1, n do
    local len = x.shape[d]
    if len == 0 then break end
    local hi, lo = x:narrow(d, 2, len - 1), x:narrow(d, 1, len - 1)
    if x.dtype == "bool" then x = hi:ne(lo) else x = hi - lo end
  end
  return x
end

function np.diff(...)
  local o = args("diff", {"a", "n", "axis", "prepend", "append"}, 1, {n = 1, axis = -1}, ...)
  return S.diff("diff", arr(o.a), o.n, o.axis, o.prepend, o.append)
end

---------------------------------------------------------------------------------------------
-- Rank, splitting and stacking.

-- x viewed with at least `rank` dims, NumPy's placement of the new size-1 dims.
function S.atleast(x, rank)
  local s = x.shape
  if #s >= rank then return x end
  if rank == 1 then return x:reshape(1) end
  if rank == 2 then return x:reshape(1, #s == 1 and s[1] or 1) end
  if #s == 0 then return x:reshape(1, 1, 1) end
  if #s == 1 then return x:reshape(1, s[1], 1) end
  return x:unsqueeze(3)
end

for rank = 1, 3 do
  local name = "atleast_" .. rank .. "d"
  np[name] = function(...)
    local n = select("#", ...)
    if n == 0 then fail(name, "expected at least one array") end
    local out = {}
    for i = 1, n do out[i] = S.atleast(arr((select(i, ...))), rank) end
    if n == 1 then return out[1] end
    return out
  end
end

-- Views of x's pieces along d: `sections` (nearly) equal ones (exact when `exact`), or the
-- pieces that start at the 1-based indices of a list.
function S.split(op, x, spec, axis, exact)
  if x:dim() == 0 then fail(op, "cannot split a 0-D array") end
  local d = axis_of(op, axis, x:dim())
  local n = x.shape[d]
  local starts = {}
  if type(spec) == "number" then
    local k = check_int(op, "sections", spec, 1)
    if exact and n % k ~= 0 then fail(op, "array split does not result in an equal division (%d into %d)", n, k) end
    local q, r = n // k, n % k
    local at = 1
    for i = 1, k do starts[i] = at; at = at + q + (i <= r and 1 or 0) end
    starts[k + 1] = n + 1
  else
    if torch.is_tensor(spec) then spec = spec:tolist() end
    if not is_list(spec) then fail(op, "indices_or_sections must be a number or a list of indices, got %s", describe(spec)) end
    starts[1] = 1
    for i, v in ipairs(spec) do
      local s = check_int(op, "indices", v)
      if s < 0 then s = s + n + 1 end
      starts[i + 1] = math.min(math.max(s, 1), n + 1)
    end
    starts[#starts + 1] = n + 1
  end
  local out = {}
  for i = 1, #starts - 1 do
    local s = starts[i]
    out[i] = x:narrow(d, s, math.max(0, starts[i + 1] - s))
  end
  return out
end

function np.split(...)
  local o = args("split", {"ary", "indices_or_sections", "axis"}, 2, {axis = 1}, ...)
  return S.split("split", arr(o.ary), o.indices_or_sections, o.axis, true)
end

function np.array_split(...)
  local o = args("array_split", {"ary", "indices_or_sections", "axis"}, 2, {axis = 1}, ...)
  return S.split("array_split", arr(o.ary), o.indices_or_sections, o.axis, false)
end

local function list_of(op, tup)
  if not is_list(tup) or torch.is_tensor(tup) or #tup == 0 then fail(op, "expected a non-empty table of arrays, got %s", describe(tup)) end
  local like
  for _, v in ipairs(tup) do if torch.is_tensor(v) then like = v break end end
  local out = {}
  for i, v in ipairs(tup) do out[i] = arr(v, like) end
  return out
end

function S.column_stack(op, xs)
  for i, x in ipairs(xs) do
    if x:dim() < 2 then xs[i] = x:reshape(-1, 1) end
  end
  return torch.cat(xs, 2)
end

function S.dstack(op, xs)
  for i, x in ipairs(xs) do xs[i] = S.atleast(x, 3) end
  return torch.cat(xs, 3)
end

function np.column_stack(...)
  local o = args("column_stack", {"tup"}, 1, {}, ...)
  return S.column_stack("column_stack", list_of("column_stack", o.tup))
end

function np.dstack(...)
  local o = args("dstack", {"tup"}, 1, {}, ...)
  return S.dstack("dstack", list_of("dstack", o.tup))
end

-- m rotated k quarter turns in the plane of axes, from the first towards the second.
function S.rot90(op, m, k, axes)
  k = check_int(op, "k", k)
  if not is_list(axes) or #axes ~= 2 then fail(op, "axes must be a table of 2 axes, got %s", describe(axes)) end
  if m:dim() < 2 then fail(op, "needs an array of at least 2 dims, got %d", m:dim()) end
  local a1, a2 = axis_of(op, axes[1], m:dim()), axis_of(op, axes[2], m:dim())
  if a1 == a2 then fail(op, "axes must be different, got {%d, %d}", axes[1], axes[2]) end
  k = k % 4
  if k == 0 then return m end
  if k == 2 then return m:flip({a1, a2}) end
  if k == 1 then return m:flip({a2}):transpose(a1, a2) end
  return m:transpose(a1, a2):flip({a2})
end

function np.rot90(...)
  local o = args("rot90", {"m", "k", "axes"}, 1, {k = 1, axes = {1, 2}}, ...)
  return S.rot90("rot90", arr(o.m), o.k, o.axes)
end

---------------------------------------------------------------------------------------------
-- Flat and multi-dimensional indices (1-based on both sides).

local function shape_arg(op, shape)
  if type(shape) == "number" then shape = {shape} end
  if not is_list(shape) or torch.is_tensor(shape) then fail(op, "shape must be a table of sizes, got %s", describe(shape)) end
  local out = {}
  for i, s in ipairs(shape) do out[i] = check_int(op, "shape", s, 0) end
  return out
end

function np.unravel_index(...)
  local o = args("unravel_index", {"indices", "shape", "order"}, 2, {order = "C"}, ...)
  local op = "unravel_index"
  local shape = shape_arg(op, o.shape)
  if o.order ~= "C" and o.order ~= "F" then fail(op, "order must be 'C' or 'F', got %s", describe(o.order)) end
  local number = type(o.indices) == "number"
  local idx = arr(o.indices)
  if not is_int(idx) then fail(op, "indices must be integers, got %s", idx.dtype) end
  local total = 1                                              -- at most 2^63-1 (else math.huge)
  for _, s in ipairs(shape) do
    if s == 0 then total = 0 break end
    if total > math.maxinteger // s then total = math.huge else total = total * s end
  end
  if idx:numel() > 0 then
    local lo, hi = idx:min():item(), idx:max():item()
    if lo < 1 or hi > total then
      local n = total == math.huge and "more than 2^63-1" or tostring(total)
      fail(op, "index %d is out of bounds for a shape of %s elements (valid: 1..%s)", lo < 1 and lo or hi, n, n)
    end
  end
  local rest = i64(idx) - 1
  local out = {}
  local nd = #shape
  for step = 1, nd do
    local d = o.order == "C" and nd + 1 - step or step
    out[d] = torch.remainder(rest, shape[d]) + 1
    rest = torch.floor_divide(rest, shape[d])
  end
  if number then for i = 1, nd do out[i] = out[i]:item() end end
  return out
end

function np.ravel_multi_index(...)
  local o = args("ravel_multi_index", {"multi_index", "dims", "mode", "order"}, 2, {mode = "raise", order = "C"}, ...)
  local op = "ravel_multi_index"
  local dims = shape_arg(op, o.dims)
  if o.order ~= "C" and o.order ~= "F" then fail(op, "order must be 'C' or 'F', got %s", describe(o.order)) end
  if o.mode ~= "raise" and o.mode ~= "wrap" and o.mode ~= "clip" then
    fail(op, "mode must be 'raise', 'wrap' or 'clip', got %s", describe(o.mode))
  end
  local mi = o.multi_index
  if not is_list(mi) or torch.is_tensor(mi) or #mi ~= #dims then
    fail(op, "multi_index must be a table of %d index arrays, one per dim", #dims)
  end
  local number = true
  local flat
  local nd = #dims
  for step = 1, nd do
    local d = o.order == "C" and step or nd + 1 - step
    if type(mi[d]) ~= "number" then number = false end
    local i = arr(mi[d])
    if not is_int(i) then fail(op, "multi_index must be integers, got %s", i.dtype) end
    i = i64(i)
    if o.mode == "wrap" then i = torch.remainder(i - 1, dims[d]) + 1
    elseif o.mode == "clip" then i = torch.clamp(i, 1, math.max(dims[d], 1))
    elseif i:numel() > 0 and (i:min():item() < 1 or i:max():item() > dims[d]) then
      local bad = i:min():item() < 1 and i:min():item() or i:max():item()
      fail(op, "index %d is out of bounds for dim %d of size %d", bad, d, dims[d])
    end
    flat = flat and flat * dims[d] + (i - 1) or (i - 1)
  end
  flat = flat + 1
  if number then return flat:item() end
  return flat
end

-- np.vander: columns x^(N-1) .. x^0 (or increasing), in dt.
function S.vander(op, x, N, increasing, dt)
  if x:dim() ~= 1 then fail(op, "x must be a one-dimensional array or sequence, got shape %s", util.shape_str(x.shape)) end
  N = N == nil and x:numel() or check_int(op, "N", N, 0)
  check_bool(op, "increasing", increasing)
  local p = arange(N, x.device)
  if not increasing then p = p:flip({1}) end
  local xd = x:to(dt)
  return torch.pow(xd:unsqueeze(2), p:to(dt):unsqueeze(1))
end

function np.vander(...)
  local o = args("vander", {"x", "N", "increasing"}, 1, {increasing = false}, ...)
  local x = arr(o.x)
  -- NumPy's promote_types(x.dtype, int64): complex128 for complex, float64 for every float,
  -- int64 otherwise.
  local dt = torch.is_complex(x) and "complex128" or is_float(x) and "float64" or "int64"
  return S.vander("vander", x, o.N, o.increasing, dt)
end

---------------------------------------------------------------------------------------------
-- np.lib.stride_tricks: views with strides of one's choosing (torch.as_strided underneath,
-- which checks that the view stays inside the storage).

np.lib = np.lib or {}
np.lib.stride_tricks = np.lib.stride_tricks or {}
local st = np.lib.stride_tricks

local function int_list(op, name, v)
  if type(v) == "number" then v = {v} end
  if not is_list(v) or torch.is_tensor(v) then fail(op, "%s must be a table of integers, got %s", name, describe(v)) end
  local out = {}
  for i, s in ipairs(v) do out[i] = check_int(op, name, s) end
  return out
end

-- as_strided(x[, shape][, strides]): strides in BYTES, as NumPy's (multiples of the item
-- size; a negative one walks backwards), from x's first element; the view shares x's memory and is writable (in-place
-- writes to a view whose elements overlap are refused by the engine).
function st.as_strided(...)
  local op = "as_strided"
  local o = args(op, {"x", "shape", "strides"}, 1, {}, ...)
  local x = check_tensor(op, "x", o.x)
  local shape = o.shape ~= nil and int_list(op, "shape", o.shape) or x.shape
  local size = x:element_size()
  local strides = {}
  if o.strides == nil then
    if o.shape ~= nil and #shape ~= x:dim() then fail(op, "strides are needed for a shape of %d dims (x has %d)", #shape, x:dim()) end
    strides = x:stride()
  else
    for i, b in ipairs(int_list(op, "strides", o.strides)) do
      if b % size ~= 0 then fail(op, "stride %d bytes is not a multiple of the item size %d of %s", b, size, x.dtype) end
      strides[i] = b // size
    end
  end
  if #strides ~= #shape then fail(op, "shape and strides have different lengths (%d and %d)", #shape, #strides) end
  return torch.as_strided(x, shape, strides)
end

-- sliding_window_view(x, window_shape[, axis]): every window of window_shape along axis (all
-- axes when nil), the window dims appended last; a view of x (of a contiguous copy when x is
-- not contiguous). NumPy's is read-only; tide has no read-only views: in-place writes to it
-- are refused where windows overlap (the engine's overlap check) and go to x where they do not.
function st.sliding_window_view(...)
  local op = "sliding_window_view"
  local o = args(op, {"x", "window_shape", "axis"}, 2, {}, ...)
  local x = arr(o.x):contiguous()
  local w = int_list(op, "window_shape", o.window_shape)
  local axes = {}
  if o.axis == nil then
    if #w ~= x:dim() then
      fail(op, "window_shape has %d entries but x has %d dims; give axis to window some of them", #w, x:dim())
    end
    for i = 1, #w do axes[i] = i end
  else
    local given = is_list(o.axis) and o.axis or {o.axis}
    if #given ~= #w then fail(op, "window_shape and axis have different lengths (%d and %d)", #w, #given) end
    for i, a in ipairs(given) do axes[i] = axis_of(op, a, x:dim()) end
  end
  local shape, strides = x.shape, x:stride()
  local out_shape, out_strides = {}, {}
  for i = 1, #shape do out_shape[i], out_strides[i] = shape[i], strides[i] end
  for i, d in ipairs(axes) do
    if w[i] < 0 then fail(op, "window_shape cannot contain negative values, got %d", w[i]) end
    if w[i] > out_shape[d] then fail(op, "window %d is larger than axis %d of size %d", w[i], d, out_shape[d]) end
    out_shape[d] = out_shape[d] - w[i] + 1
    out_shape[#out_shape + 1], out_strides[#out_strides + 1] = w[i], strides[d]
  end
  return torch.as_strided(x, out_shape, out_strides)
end
