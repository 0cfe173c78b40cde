-- Rows of the conformance table for the set, counting and shape functions of
-- numpy_sets_shape.lua and torch_sets_shape.lua, checked against NumPy. Loaded by ops.lua
-- with its case generators G and its add(row). Indices tide returns are 1-based: the
-- references add 1 to NumPy's (and take 1 from those tide is given). Values come from small
-- ranges so that duplicates and ties occur; float rows include NaN, +-0 and +-1.
local G, add = ...
local unpack = table.unpack

local EDGES = {0 / 0, 0.0, -0.0, 1.0, -1.0, 0.5}
local function vopts(dt, nan)
  if G.is_float(dt) and nan ~= false then return {dom = "small", edges = 0.25, edge_list = EDGES} end
  if G.is_float(dt) then return {dom = "int"} end
  return {dom = "small"}
end

-- Cases: for each dtype, n shapes from make(j, dt) -> shape, p[, extra inputs]; the first of
-- each dtype is a special shape (0-d, size 0, size 1) when make accepts it (p.special).
local function cases(make, dtypes, n)
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for j = 1, G.count(n or 3) do
        local s, p, extra = make(j, dt)
        local a, l = G.view(s, dt, G.pick(G.LAYOUTS), vopts(dt, p.nan))
        local c = {a = a, layouts = {a = l}, p = p}
        for k, v in pairs(extra or {}) do c[k] = v end
        cs[#cs + 1] = c
      end
    end
    return cs
  end
end

local function shape(j, lo, hi, special)
  if special and j == 1 then
    local s
    repeat s = G.special_shape(math.random(1, 7)) until #s >= lo and #s <= hi
    return s
  end
  return G.shape({min_rank = lo, max_rank = hi, max_numel = 60})
end

-- The positive form of a 1-based axis d of an n-D array.
local function pos_axis(d, n) if d < 0 then return d + n + 1 end return d end

-- A random 1-based axis of an n-D array, sometimes counted from the end.
local function rand_axis(n)
  local d = math.random(1, n)
  if math.random() < 0.4 then d = d - n - 1 end
  return d
end

---------------------------------------------------------------------------------------------
-- Sets and counting.

add({name = "np.unique", out = "same,int64,int64,int64", cast = "none",
     ref = "(lambda r: [r[0], r[1] + 1, r[2].reshape(-1) + 1, r[3]])"
        .. "(np.unique(a, return_index=True, return_inverse=True, return_counts=True))",
     cases = cases(function(j) return shape(j, 0, 3, true), {} end, G.DTYPES, 3),
     call = function(a) return np.unique(a, {return_index = true, return_inverse = true, return_counts = true}) end})
add({name = "np.unique values", out = "same", cast = "none", ref = "np.unique(a)",
     cases = cases(function(j) return shape(j, 0, 3, true), {} end, G.DTYPES, 2),
     call = function(a) return np.unique(a) end})
add({name = "np.unique axis", out = "same,int64,int64,int64", cast = "none",
     ref = "(lambda r: [r[0], r[1] + 1, r[2].reshape(-1) + 1, r[3]])"
        .. "(np.unique(a, return_index=True, return_inverse=True, return_counts=True, axis=ax(p.axis)))",
     cases = cases(function()
       local s = G.shape({min_rank = 1, max_rank = 3, max_numel = 40, dims = {1, 2, 3, 4}})
       for i = 1, #s do s[i] = s[i] + 1 end
       return s, {axis = rand_axis(#s), nan = false}
     end, {"bool", "uint8", "int32", "int64", "float32", "float64"}, 3),
     call = function(a, _, _, p)
       return np.unique(a, {axis = p.axis, return_index = true, return_inverse = true, return_counts = true})
     end})
add({name = "torch.unique", out = "same,int64,int64", cast = "none",
     ref = "(lambda r: [r[0], r[1].reshape(a.shape) + 1, r[2]])(np.unique(a, return_inverse=True, return_counts=True))",
     cases = cases(function(j) return shape(j, 0, 3, true), {nan = false} end, G.DTYPES, 2),
     call = function(a) return torch.unique(a, {return_inverse = true, return_counts = true}) end})

-- A sorted 1-D tensor of n values of dt (b of the case).
local function sorted_seq(n, dt, nan)
  return torch.sort(G.make({n}, dt, vopts(dt, nan)), 1)
end

add({name = "np.searchsorted", out = "int64", cast = "none", ref = "np.searchsorted(b, a, side=p.side) + 1",
     cases = cases(function(j, dt)
       return shape(j, 0, 3, true), {side = G.pick({"left", "right"})}, {b = sorted_seq(math.random(0, 8), dt)}
     end, G.DTYPES, 3),
     call = function(v, a, _, p)
       if p.side == "left" and math.random() < 0.5 then return np.searchsorted(a, v) end
       return np.searchsorted(a, v, {side = p.side})
     end})
add({name = "torch.searchsorted", out = "int64", cast = "none", ref = "np.searchsorted(b, a, side='right' if p.right else 'left') + 1",
     cases = cases(function(j, dt)
       return shape(j, 0, 2, true), {right = G.chance(0.5)}, {b = sorted_seq(math.random(1, 8), dt)}
     end, {"int32", "int64", "float32", "float64"}, 3),
     call = function(v, a, _, p) return torch.searchsorted(a, v, {right = p.right}) end})
add({name = "np.digitize", out = "int64", cast = "none", ref = "np.digitize(a, b, right=p.right) + 1",
     cases = cases(function(j, dt)
       local bins = sorted_seq(math.random(1, 6), dt, false)
       if G.chance(0.5) then bins = bins:flip(1) end
       return shape(j, 0, 2, true), {right = G.chance(0.5)}, {b = bins}
     end, G.NUMERIC, 3),
     call = function(x, bins, _, p) return np.digitize(x, bins, {right = p.right}) end})

local function bincount_cases(weighted)
  return function()
    local cs = {}
    for _, dt in ipairs(G.INTEGRAL) do
      for j = 1, G.count(3) do
        local n = j == 1 and 0 or math.random(1, 20)
        local a = G.make({n}, dt, {dom = "castable"})
        if dt == "int8" then a = a:clamp(0, 100) end
        local c = {a = a, p = {ml = G.pick({0, 3, 120})}}
        if weighted then c.b = G.make({n}, G.pick({"float32", "float64"})) end
        cs[#cs + 1] = c
      end
    end
    return cs
  end
end
add({name = "np.bincount", out = "int64", cast = "none", ref = "np.bincount(a, minlength=p.ml)",
     cases = bincount_cases(false), call = function(a, _, _, p) return np.bincount(a, {minlength = p.ml}) end})
add({name = "np.bincount weights", out = "float64", cast = "none", ref = "np.bincount(a, weights=b, minlength=p.ml)",
     cases = bincount_cases(true), call = function(a, w, _, p) return np.bincount(a, w, p.ml) end})

add({name = "np.histogram", out = "py:['float64' if p.density else 'int64', p.edt]", cast = "none",
     ref = "list(np.histogram(a, bins=p.bins if p.edges is None else np.array(p.edges),"
        .. " range=p.range, density=p.density))",
     cases = cases(function(j, dt)
       local p = {nan = false, density = G.chance(0.3), edt = G.is_float(dt) and dt or "float64"}
       if G.chance(0.3) then
         p.edges, p.edt = {-2.5, -1, 0, 0.5, 3}, "float64"    -- a Lua list: float64 edges
       else
         p.bins = G.pick({1, 3, 10})
         if G.chance(0.4) then p.range = {-1.5, 2} end
       end
       return shape(j, 0, 2, true), p
     end, {"uint8", "int8", "int32", "int64", "float32", "float64"}, 3),
     call = function(a, _, _, p)
       return np.histogram(a, {bins = p.edges or p.bins, range = p.range, density = p.density})
     end})

local function pair_cases(dtypes, nan)
  return cases(function(j, dt)
    return shape(j, 1, 2, true), {nan = nan}, {b = G.make(shape(j + 1, 1, 2, false), dt, vopts(dt, nan))}
  end, dtypes, 3)
end
add({name = "np.isin", out = "bool", cast = "none", ref = "np.isin(a, b, invert=p.invert)",
     cases = cases(function(j, dt)
       return shape(j, 0, 3, true), {invert = G.chance(0.5)}, {b = G.make(shape(j + 1, 0, 2, true), dt, vopts(dt))}
     end, G.DTYPES, 3),
     call = function(a, b, _, p) return np.isin(a, b, {invert = p.invert}) end})
add({name = "torch.isin", out = "bool", cast = "none", ref = "np.isin(a, b)",
     cases = pair_cases({"int64", "float32"}), call = function(a, b) return torch.isin(a, b) end})
add({name = "np.intersect1d", out = "same,int64,int64", cast = "none",
     ref = "(lambda r: [r[0], r[1] + 1, r[2] + 1])(np.intersect1d(a, b, return_indices=True))",
     cases = pair_cases(G.DTYPES), call = function(a, b) return np.intersect1d(a, b, {return_indices = true}) end})
add({name = "np.union1d", out = "same", cast = "none", ref = "np.union1d(a, b)",
     cases = pair_cases(G.DTYPES), call = function(a, b) return np.union1d(a, b) end})
add({name = "np.setdiff1d", out = "same", cast = "none", ref = "np.setdiff1d(a, b)",
     cases = pair_cases(G.DTYPES), call = function(a, b) return np.setdiff1d(a, b) end})

---------------------------------------------------------------------------------------------
-- Diagonals, triangles, grids.

add({name = "np.diag", grad = {"a"}, out = "same", cast = "none", ref = "np.diag(a, p.k)",
     cases = cases(function(j)
       return shape(j + 1, 1, 2, false), {k = math.random(-3, 3)}
     end, G.DTYPES, 3),
     call = function(a, _, _, p) if p.k == 0 and G.chance(0.5) then return np.diag(a) end return np.diag(a, p.k) end})
add({name = "torch.diagonal", grad = {"a"}, out = "same", cast = "none", ref = "np.diagonal(a, p.k, ax(p.d1, a), ax(p.d2, a)).copy()",
     cases = cases(function(j)
       local s = shape(j + 1, 2, 4, false)
       local d1 = rand_axis(#s)
       local d2
       repeat d2 = rand_axis(#s) until pos_axis(d2, #s) ~= pos_axis(d1, #s)
       return s, {k = math.random(-3, 3), d1 = d1, d2 = d2}
     end, G.DTYPES, 3),
     call = function(a, _, _, p)
       if p.k % 2 == 0 then return np.diagonal(a, {offset = p.k, axis1 = p.d1, axis2 = p.d2}) end
       return torch.diagonal(a, p.k, p.d1, p.d2)
     end})
add({name = "np.trace", grad = {"a"}, out = "sum", ref = "np.trace(a, p.k, ax(p.d1), ax(p.d2))",
     cases = cases(function(j)
       local s = shape(j + 1, 2, 3, false)
       return s, {k = math.random(-2, 2), d1 = 1, d2 = #s}
     end, G.NUMERIC, 3),
     call = function(a, _, _, p) return np.trace(a, p.k, p.d1, p.d2) end})
for _, tri in ipairs{"triu", "tril"} do
  add({name = "np." .. tri, grad = {"a"}, out = "same", cast = "none", ref = "np." .. tri .. "(a, p.k)",
       cases = cases(function(j) return shape(j + 1, 2, 4, false), {k = math.random(-3, 3)} end, G.DTYPES, 3),
       call = function(a, _, _, p)
         if p.k < 0 then return torch[tri](a, {diagonal = p.k}) end
         return np[tri](a, p.k)
       end})
end
add({name = "np.tri", out = "py:p.dt", cast = "none", ref = "np.tri(p.n, p.m, p.k, dtype=p.dt if p.dt != 'bfloat16' else 'float32')",
     cases = function()
       local cs = {}
       for j = 1, G.count(8) do
         cs[j] = {p = {n = math.random(0, 4), m = math.random(0, 5), k = math.random(-3, 3),
                                          dt = G.pick({"float64", "int32", "bool"})}}
       end
       return cs
     end,
     call = function(_, _, _, p) return np.tri(p.n, p.m, p.k, {dtype = p.dt}) end})
add({name = "np.meshgrid", grad = {"a"}, out = "same*", cast = "none", ref = "np.meshgrid(*a, indexing=p.ix)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local list = {}
         for i = 1, math.random(1, 3) do list[i] = G.make({math.random(0, 4)}, dt, vopts(dt)) end
         cs[#cs + 1] = {a = list, p = {ix = G.pick({"xy", "ij"})}}
       end
       return cs
     end,
     call = function(list, _, _, p)
       if p.ix == "ij" then return torch.meshgrid(list) end
       list[#list + 1] = {indexing = "xy"}
       return np.meshgrid(unpack(list))
     end})
add({name = "np.indices", out = "int64", cast = "none", ref = "np.indices(p.dims) + 1",
     cases = function()
       local cs = {}
       for j = 1, G.count(6) do
         local dims = {}
         for i = 1, math.random(1, 3) do dims[i] = math.random(0, 3) end
         cs[j] = {p = {dims = dims}}
       end
       return cs
     end,
     call = function(_, _, _, p) return np.indices(p.dims) end})

---------------------------------------------------------------------------------------------
-- Repeating, rolling, padding, differences.

add({name = "np.repeat", grad = {"a"}, out = "same", cast = "none", ref = "np.repeat(a, p.r, axis=ax(p.axis))",
     cases = cases(function(j)
       local s = shape(j, 0, 3, true)
       local p = {}
       if #s > 0 and G.chance(0.7) then p.axis = rand_axis(#s) end
       local n = p.axis and s[pos_axis(p.axis, #s)] or G.numel(s)
       if n > 0 and G.chance(0.5) then
         p.r = {}
         for i = 1, n do p.r[i] = math.random(0, 3) end
       else
         p.r = math.random(0, 3)
       end
       return s, p
     end, G.DTYPES, 3),
     call = function(a, _, _, p)
       if p.axis and G.chance(0.5) then
         local r = type(p.r) == "table" and torch.tensor(p.r, {device = a.device}) or p.r
         return torch.repeat_interleave(a, r, p.axis)
       end
       return np["repeat"](a, p.r, {axis = p.axis})
     end})
add({name = "np.roll", grad = {"a"}, out = "same", cast = "none", ref = "np.roll(a, p.shift, axis=ax(p.axis))",
     cases = cases(function(j)
       local s = shape(j, 0, 3, true)
       local p = {shift = math.random(-7, 7)}
       if #s > 0 and G.chance(0.7) then
         if G.chance(0.5) then p.axis = rand_axis(#s)
         else
           p.axis, p.shift = {rand_axis(#s), rand_axis(#s)}, {math.random(-5, 5), math.random(-5, 5)}
         end
       end
       return s, p
     end, G.DTYPES, 3),
     call = function(a, _, _, p)
       if p.axis and G.chance(0.5) then return torch.roll(a, p.shift, p.axis) end
       return np.roll(a, p.shift, p.axis)
     end})
add({name = "np.pad", grad = {"a"}, out = "same", cast = "none",
     ref = "pad_wrap(a, p.pw) if p.mode == 'wrap' else "
        .. "np.pad(a, p.pw, mode=p.mode, **({'constant_values': p.cv} if p.mode == 'constant' else {}))",
     cases = cases(function(j, dt)
       local s = shape(j + 1, 1, 3, false)
       local mode = G.pick({"constant", "edge", "reflect", "wrap"})
       local pw
       local form = math.random(1, 3)
       if form == 1 then pw = math.random(0, 4)
       elseif form == 2 then pw = {math.random(0, 4), math.random(0, 4)}
       else
         pw = {}
         for i = 1, #s do pw[i] = {math.random(0, 5), math.random(0, 5)} end
       end
       local cv = dt == "bool" and true or G.pick({0, 1, 3})
       return s, {pw = pw, mode = mode, cv = cv}
     end, G.DTYPES, 4),
     call = function(a, _, _, p)
       if p.mode == "constant" then return np.pad(a, p.pw, {constant_values = p.cv}) end
       return np.pad(a, p.pw, p.mode)
     end})
add({name = "np.diff", grad = {"a"}, out = "same", cast = "none",
     ref = "np.diff(a, n=p.n, axis=ax(p.axis), **({} if p.pre is None else {'prepend': p.pre, 'append': p.pre}))",
     cases = cases(function(j, dt)
       local s = shape(j + 1, 1, 3, false)
       local p = {n = math.random(0, 3), axis = rand_axis(#s)}
       if dt == "float64" and G.chance(0.5) then p.pre = 1.5 end
       return s, p
     end, G.DTYPES, 3),
     call = function(a, _, _, p)
       if p.pre then return np.diff(a, p.n, p.axis, p.pre, p.pre) end
       return torch.diff(a, p.n, p.axis)
     end})

---------------------------------------------------------------------------------------------
-- Rank, splitting, stacking, rotating, index conversions, vander.

for r = 1, 3 do
  local name = "atleast_" .. r .. "d"
  add({name = "np." .. name, grad = {"a"}, out = "same", cast = "none", ref = "np." .. name .. "(a)",
       cases = cases(function(j) return shape(j, 0, 4, true), {} end, {"bool", "int32", "float32", "float64"}, 4),
       call = function(a) if r == 2 then return torch[name](a) end return np[name](a) end})
end
add({name = "np.array_split", grad = {"a"}, out = "same*", cast = "none",
     ref = "np.array_split(a, p.sec if p.idx is None else p.idx, axis=ax(p.axis))",
     cases = cases(function(j)
       local s = shape(j + 1, 1, 3, false)
       local p = {axis = rand_axis(#s)}
       if G.chance(0.5) then p.sec = math.random(1, 4)
       else
         local n = s[pos_axis(p.axis, #s)]
         p.t = {}
         p.idx = {}
         for i = 1, math.random(1, 3) do
           local v = math.random(-n - 1, n + 2)
           if v == 0 then v = 1 end
           p.t[i], p.idx[i] = v, v > 0 and v - 1 or v
         end
       end
       return s, p
     end, G.DTYPES, 3),
     call = function(a, _, _, p) return np.array_split(a, p.sec or p.t, p.axis) end})
add({name = "np.split", out = "same*", cast = "none", ref = "np.split(a, p.sec, axis=ax(p.axis))",
     cases = cases(function(j)
       local s = shape(j + 1, 1, 3, false)
       local p = {axis = rand_axis(#s)}
       local n = s[pos_axis(p.axis, #s)]
       local divs = {}
       for k = 1, n do if n % k == 0 then divs[#divs + 1] = k end end
       p.sec = G.pick(divs)
       return s, p
     end, {"int64", "float32"}, 4),
     call = function(a, _, _, p) return np.split(a, p.sec, {axis = p.axis}) end})
add({name = "np.column_stack", grad = {"a"}, out = "same", cast = "none", ref = "np.column_stack(a)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local n = math.random(0, 4)
         local list = {}
         for i = 1, math.random(1, 3) do list[i] = G.make(G.chance(0.5) and {n} or {n, math.random(1, 3)}, dt) end
         cs[#cs + 1] = {a = list, p = {}}
       end
       return cs
     end,
     call = function(list) return np.column_stack(list) end})
add({name = "np.dstack", grad = {"a"}, out = "same", cast = "none", ref = "np.dstack(a)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local s = G.pick({{3}, {2, 3}, {2, 3, 2}})
         local list = {}
         for i = 1, math.random(1, 3) do list[i] = G.make(s, dt) end
         cs[#cs + 1] = {a = list, p = {}}
       end
       return cs
     end,
     call = function(list) if G.chance(0.5) then return torch.dstack(list) end return np.dstack(list) end})
add({name = "np.rot90", grad = {"a"}, out = "same", cast = "none", ref = "np.rot90(a, p.k, axes=ax(p.axes))",
     cases = cases(function(j)
       local s = shape(j + 1, 2, 4, false)
       local a1 = rand_axis(#s)
       local a2
       repeat a2 = rand_axis(#s) until pos_axis(a2, #s) ~= pos_axis(a1, #s)
       return s, {k = math.random(-5, 5), axes = {a1, a2}}
     end, G.DTYPES, 3),
     call = function(a, _, _, p)
       if G.chance(0.5) then return torch.rot90(a, p.k, p.axes) end
       return np.rot90(a, {k = p.k, axes = p.axes})
     end})
add({name = "np.unravel_index", out = "int64*", cast = "none",
     ref = "[x + 1 for x in np.unravel_index(a - 1, p.shape, order=p.order)]",
     cases = function()
       local cs = {}
       for j = 1, G.count(8) do
         local s = {}
         for i = 1, math.random(1, 3) do s[i] = math.random(1, 4) end
         local n = G.numel(s)
         local idx = G.make({math.random(0, 6)}, "int64", {fn = function() return math.random(1, n) end})
         cs[j] = {a = idx, p = {shape = s, order = G.pick({"C", "F"})}}
       end
       return cs
     end,
     call = function(a, _, _, p) return np.unravel_index(a, p.shape, {order = p.order}) end})
add({name = "np.ravel_multi_index", out = "int64", cast = "none",
     ref = "np.ravel_multi_index(tuple(x - 1 for x in a), p.dims, order=p.order) + 1",
     cases = function()
       local cs = {}
       for j = 1, G.count(8) do
         local dims, list = {}, {}
         local n = math.random(0, 5)
         for i = 1, math.random(1, 3) do
           local d = math.random(1, 4)
           dims[i] = d
           list[i] = G.make({n}, "int64", {fn = function() return math.random(1, d) end})
         end
         cs[j] = {a = list, p = {dims = dims, order = G.pick({"C", "F"})}}
       end
       return cs
     end,
     call = function(a, _, _, p) return np.ravel_multi_index(a, p.dims, {order = p.order}) end})
add({name = "np.vander", out = "py:'float64' if p.fl else 'int64'", cast = "none", ref = "np.vander(a, p.N, increasing=p.inc)",
     cases = cases(function(j, dt)
       return {math.random(0, 5)}, {N = G.chance(0.5) and math.random(0, 4) or nil, inc = G.chance(0.5), nan = false, fl = G.is_float(dt)}
     end, {"bool", "int8", "int32", "int64", "float32", "float64"}, 3),
     call = function(a, _, _, p) return np.vander(a, p.N, p.inc) end})

---------------------------------------------------------------------------------------------
-- Strided views: np.lib.stride_tricks (strides in bytes) on contiguous inputs, whose memory
-- is laid out as NumPy's copy of them.

add({name = "np.sliding_window_view", grad = {"a"}, out = "same", cast = "none",
     ref = "np.lib.stride_tricks.sliding_window_view(a, p.w, axis=ax(p.axis)).copy()",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for _ = 1, G.count(3) do
           local s = G.shape({min_rank = 1, max_rank = 3, max_numel = 60})
           local axis, w, left = {}, {}, G.copy(s)      -- left: the sizes windows leave
           for i = 1, math.random(1, #s) do
             local d = math.random(1, #s)
             axis[i], w[i] = math.random() < 0.3 and d - #s - 1 or d, math.random(0, left[d])
             left[d] = left[d] - math.max(w[i] - 1, 0)
           end
           cs[#cs + 1] = {a = G.make(s, dt, vopts(dt)), p = {w = w, axis = axis}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p) return np.lib.stride_tricks.sliding_window_view(a, p.w, {axis = p.axis}) end})
add({name = "np.as_strided", grad = {"a"}, out = "same", cast = "none",
     layout = "strides chosen by the caller, from the input's first element",
     ref = "np.lib.stride_tricks.as_strided(a, p.shape, tuple(s * a.itemsize for s in p.st)).copy()",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for _ = 1, G.count(3) do
           local n = math.random(1, 24)
           local shape, st, reach = {}, {}, 0
           for i = 1, math.random(1, 3) do
             shape[i], st[i] = math.random(1, 4), math.random(0, 3)
             reach = reach + (shape[i] - 1) * st[i]
           end
           if reach >= n then n = reach + 1 end
           cs[#cs + 1] = {a = G.make({n}, dt, vopts(dt)), p = {shape = shape, st = st}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       local bytes = {}
       for i, s in ipairs(p.st) do bytes[i] = s * a:element_size() end
       return np.lib.stride_tricks.as_strided(a, p.shape, bytes)
     end})

-- nn.functional.pad against torch's own (PyTorch's pad order: pairs from the last dim).
add({name = "torch.nn.functional.pad", grad = {"a"}, out = "same", cast = "none",
     ref = "N(F.pad(torch.from_numpy(np.ascontiguousarray(a)), tuple(p.pad), mode=p.mode, "
        .. "**({'value': p.v} if p.mode == 'constant' else {})))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for _ = 1, G.count(8) do
           -- PyTorch 1.13 pads k dims of a (k+1)- or (k+2)-D input in the non-constant modes
           local mode = G.pick({"constant", "reflect", "replicate", "circular"})
           local k = math.random(1, 3)
           local r = k + (mode == "circular" and 2 or math.random(1, 2))   -- circular: k+2 only
           local s = G.shape({min_rank = r, max_rank = r, max_numel = 400, dims = {2, 3, 4}})
           local pad = {}
           for i = 1, (mode == "constant" and math.random(1, #s) or k) do
             local n = s[#s + 1 - i]
             local hi = mode == "reflect" and n - 1 or (mode == "circular" and n or 5)
             pad[2 * i - 1], pad[2 * i] = math.random(0, hi), math.random(0, hi)
           end
           cs[#cs + 1] = {a = G.make(s, dt), p = {pad = pad, mode = mode, v = G.pick({0, 1.5})}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       if p.mode == "constant" then return torch.nn.functional.pad(a, p.pad, "constant", p.v) end
       return torch.nn.functional.pad(a, p.pad, {mode = p.mode})
     end})
