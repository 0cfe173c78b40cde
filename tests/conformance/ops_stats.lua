-- Rows of the conformance table for the statistics and comparison functions (numpy_stats.lua,
-- torch_stats.lua): the np spellings against NumPy with NumPy's result dtypes (cast "none":
-- the reference sees the inputs as they are; p.dt is the input's dtype for the `out` rule),
-- the torch spellings by PyTorch's rules, with gradient columns. Loaded by ops.lua with its
-- case generators G and its add(row).
local G, add = ...

local NP_DTYPES = {"float16", "float32", "float64", "int32", "int64", "uint8"}
local NAN_EDGES = {0 / 0, 0 / 0, 0.0, -0.0, 1.0, -2.5}
local ALL_EDGES = {0 / 0, math.huge, -math.huge, 0.0, -0.0}
local STAT_OUT = "py:p.dt if p.dt.startswith('float') else 'float64'"
local KEEP = "keepdims=bool(p.keepdim)"

-- Cases of reductions: per dtype, random shapes (0-d, size-0 dims when o.empty), a dim (nil,
-- a number, negative, or two dims when o.multi), keepdim, NaN and other edge values in
-- float tensors, random layouts; o.extra(j, dt) fills p.extra, o.fix(case) may adjust it.
local function stat_cases(o)
  return function()
    local cs = {}
    for di, dt in ipairs(o.dtypes or NP_DTYPES) do
      for j = 1, G.count(o.per_dtype or 6) do
        local s = G.shape({min_rank = o.min_rank or 0, max_rank = o.max_rank or 3, max_numel = 120,
                           zero = (o.empty and j == 4) and 0.5 or nil})
        local r = #s
        local dim
        if (j == 1 and not o.need_dim) or r == 0 then dim = nil
        elseif o.multi and j == 3 and r >= 2 then dim = {1, -1}
        else
          dim = math.random(1, r)
          if math.random() < 0.4 then dim = dim - r - 1 end
        end
        if o.need_dim and dim == nil then dim = -1; if r == 0 then s = {3} end end
        if not o.empty then for i = 1, #s do if s[i] == 0 then s[i] = 2 end end end
        local edges = G.is_float(dt) and j % 3 == 2 and 0.3 or nil
        local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = o.domain, edges = edges, edge_list = o.edge_list or NAN_EDGES})
        local case = {a = a, layouts = {a = l},
                      p = {dim = dim, keepdim = (j + di) % 2 == 0, dt = dt, extra = o.extra and o.extra(j, dt) or nil}}
        if o.fix then o.fix(case) end
        cs[#cs + 1] = case
      end
    end
    return cs
  end
end

-- np.f(a, {axis=, keepdims=, ...more}) with the keyword table left out when it is empty.
local function np_call(name, more)
  return function(a, _, _, p)
    local kw = {axis = p.dim, keepdims = p.keepdim or nil}
    for k, v in pairs(more and more(p) or {}) do kw[k] = v end
    if next(kw) == nil then return np[name](a) end
    return np[name](a, kw)
  end
end

---------------------------------------------------------------------------------------------
-- NumPy spellings.
for _, name in ipairs({"median", "nanmedian"}) do
  add({name = "np." .. name, out = STAT_OUT, cast = "none", ref = "np." .. name .. "(a, axis=ax(p.dim, a), " .. KEEP .. ")",
       cases = stat_cases({multi = true, empty = true, edge_list = name == "median" and ALL_EDGES or NAN_EDGES}),
       call = np_call(name)})
end

local METHODS = {"linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf", "averaged_inverted_cdf",
                 "closest_observation", "interpolated_inverted_cdf", "hazen", "weibull", "median_unbiased",
                 "normal_unbiased"}
local DISCRETE = "('lower', 'higher', 'nearest', 'inverted_cdf', 'closest_observation')"
local QS = {0.5, {0.0, 0.25, 1.0}, 0.3, {0.1, 0.9}, 1.0, {0.7}, 0.0}
for _, f in ipairs({{"quantile", 1}, {"percentile", 100}, {"nanquantile", 1}, {"nanpercentile", 100}}) do
  local name, scale = f[1], f[2]
  local mi = 0
  add({name = "np." .. name, cast = "none",
       out = "py:p.dt if p.extra[0] in " .. DISCRETE .. " else 'float64'",
       ref = "np." .. name .. "(a, np.array(p.extra[1]) * " .. scale .. ", axis=ax(p.dim, a), " .. KEEP .. ", method=p.extra[0])",
       cases = stat_cases({multi = true, per_dtype = 8, dtypes = {"float16", "float32", "float64", "int32", "int64"},
                           edge_list = NAN_EDGES,
                           extra = function(j)
                             mi = mi % #METHODS + 1
                             return {METHODS[mi], QS[j % #QS + 1]}
                           end}),
       call = function(a, _, _, p)
         local q = p.extra[2]
         if type(q) == "table" then
           local t = {}
           for i, v in ipairs(q) do t[i] = v * scale end
           q = mi % 2 == 0 and t or torch.tensor(t, {dtype = "float64"})
         else q = q * scale end
         return np[name](a, q, {axis = p.dim, keepdims = p.keepdim, method = p.extra[1]})
       end})
end
add({name = "np.quantile(errors)", expect_error = "quantile", ref = "0",
     cases = function()
       return {{a = torch.zeros(3), p = {q = 1.5}}, {a = torch.zeros(3), p = {q = -0.1}}, {a = torch.zeros(0), p = {q = 0.5}},
               {a = torch.zeros(3), p = {q = 0.5, method = "median"}}, {a = torch.zeros(3), p = {q = 0.5, axis = 2}},
               {a = torch.zeros(3), p = {q = 0.5, bad = true}}}
     end,
     call = function(a, _, _, p) return np.quantile(a, p.q, {method = p.method, axis = p.axis, bad = p.bad}) end})

add({name = "np.nansum", cast = "none", out = "py:p.dt if p.dt.startswith('float') else 'int64'",
     ref = "np.nansum(a, axis=ax(p.dim, a), " .. KEEP .. ")", tol = {float16 = {4e-3, 1e-3}, float32 = {1e-5, 1e-5}},
     cases = stat_cases({multi = true, empty = true, dtypes = {"float32", "float64", "int32", "int64"}}), call = np_call("nansum")})
add({name = "np.nanmean", cast = "none", out = STAT_OUT, ref = "np.nanmean(a, axis=ax(p.dim, a), " .. KEEP .. ")",
     tol = {float32 = {1e-5, 1e-5}}, cases = stat_cases({multi = true, empty = true, dtypes = {"float32", "float64", "int32", "int64"}}),
     call = np_call("nanmean")})
for _, name in ipairs({"nanvar", "nanstd"}) do
  add({name = "np." .. name, cast = "none", out = STAT_OUT, tol = {float32 = {1e-4, 1e-5}, float64 = {1e-10, 1e-12}},
       ref = "np." .. name .. "(a, axis=ax(p.dim, a), " .. KEEP .. ", ddof=p.extra)",
       cases = stat_cases({multi = true, empty = true, dtypes = {"float32", "float64", "int32", "int64"},
                           extra = function(j) return j % 3 end}),
       call = np_call(name, function(p) return {ddof = p.extra} end)})
end
for _, name in ipairs({"nanmax", "nanmin", "ptp"}) do
  add({name = "np." .. name, cast = "none", out = "py:p.dt", ref = "np." .. name .. "(a, axis=ax(p.dim, a), " .. KEEP .. ")",
       cases = stat_cases({multi = true, dtypes = {"float16", "float32", "float64", "int32", "int64", "uint8", "int8"},
                           edge_list = name == "ptp" and ALL_EDGES or NAN_EDGES}),
       call = np_call(name)})
end
-- nanargmax/nanargmin: slices that are all NaN are an error (a row of its own).
local function no_all_nan(case)
  local a, p = case.a, case.p
  if G.is_float(p.dt) and a:isnan():all(p.dim or nil):any():item() then case.a = torch.where(a:isnan(), 1.5, a) end
end
for _, name in ipairs({"nanargmax", "nanargmin"}) do
  add({name = "np." .. name, cast = "none", out = "int64", ref = "np." .. name .. "(a, axis=ax(p.dim, a), " .. KEEP .. ") + 1",
       cases = stat_cases({dtypes = {"float32", "float64", "int32", "int64"}, fix = no_all_nan}), call = np_call(name)})
end
add({name = "np.nanargmax(all NaN)", expect_error = "nanargmax: All-NaN slice", ref = "0",
     cases = function() return {{a = torch.tensor{{1.0, 0 / 0}, {0 / 0, 0 / 0}}, p = {}}} end,
     call = function(a) return np.nanargmax(a, {axis = 2}) end})

-- average: no weights, weights of a's shape, 1-D weights along axis; returned.
add({name = "np.average", cast = "none", tol = {float32 = {1e-5, 1e-5}, float64 = {1e-11, 1e-12}},
     out = "py:[p.dt if p.dt.startswith('float') and p.extra is None else 'float64']*2",
     ref = "np.average(a, axis=ax(p.dim, a), weights=None if p.extra is None else np.asarray(p.extra, dtype=np.float64), returned=True, " .. KEEP .. ")",
     cases = stat_cases({dtypes = {"float32", "float64", "int32"}, domain = "small",
                         fix = function(case)
                           local a, p = case.a, case.p
                           if case.p.dim ~= nil and type(p.dim) == "number" and case.p.keepdim == false and math.random() < 0.7 then
                             local n = a.shape[p.dim > 0 and p.dim or a.ndim + 1 + p.dim]
                             local w = {}
                             for i = 1, n do w[i] = math.random(1, 4) / 2 end
                             p.extra = w
                             local s = {}
                             for i = 1, a.ndim do s[i] = 1 end
                             s[p.dim > 0 and p.dim or a.ndim + 1 + p.dim] = n
                             if math.random() < 0.5 then p.extra = torch.tensor(w, {dtype = "float64"}):reshape(s):expand(a.shape):tolist() end
                           end
                         end}),
     call = function(a, _, _, p)
       local w = p.extra
       if w ~= nil and type(w[1]) == "table" then w = torch.tensor(w, {dtype = "float64", device = a.device}) end
       if w ~= nil and type(w[1]) == "number" then w = torch.tensor(w, {dtype = "float64", device = a.device}) end
       return np.average(a, {axis = p.dim, weights = w, returned = true, keepdims = p.keepdim})
     end})

-- cov and corrcoef: 1-D and 2-D inputs, rowvar, bias, ddof, fweights and aweights, y.
local function cov_cases(dts)
  return function()
    local cs = {}
    for _, dt in ipairs(dts) do
      for j = 1, G.count(8) do
        local s = j % 4 == 0 and {G.pick({3, 5, 7})} or {G.pick({1, 2, 3}), G.pick({3, 4, 7})}
        local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "small"})
        local kw = {rowvar = j % 3 ~= 0 or nil}
        local nobs = (not kw.rowvar and s[1] ~= 1) and s[1] or s[#s]
        if j % 5 == 1 then
          local f = {}
          for i = 1, nobs do f[i] = math.random(1, 3) end
          kw.fweights = f
        end
        if j % 3 == 1 then
          local w = {}
          for i = 1, nobs do w[i] = math.random(1, 8) / 4 end
          kw.aweights = w
        end
        if j == 2 then kw.bias = true end
        if j == 5 then kw.ddof = 0 end
        if j == 6 then kw.y = torch.randn(nobs, {dtype = "float64"}):tolist() end
        cs[#cs + 1] = {a = a, layouts = {a = l}, p = {dt = dt, kw = kw}}
      end
    end
    return cs
  end
end
add({name = "np.cov", cast = "none", out = "float64", tol = {float64 = {1e-10, 1e-12}},
     ref = "np.cov(a, y=dict(p.kw).get('y'), rowvar=dict(p.kw).get('rowvar', False), bias=bool(dict(p.kw).get('bias')), ddof=dict(p.kw).get('ddof'), " ..
           "fweights=dict(p.kw).get('fweights'), aweights=dict(p.kw).get('aweights'))",
     cases = cov_cases({"float32", "float64", "int64"}),
     call = function(a, _, _, p)
       local kw = {}
       for k, v in pairs(p.kw) do kw[k] = v end
       kw.rowvar = p.kw.rowvar or false
       return np.cov(a, kw)
     end})
add({name = "np.corrcoef", cast = "none", out = "float64", tol = {float64 = {1e-10, 1e-12}},
     ref = "np.corrcoef(a, y=dict(p.kw).get('y'), rowvar=dict(p.kw).get('rowvar', False))",
     cases = cov_cases({"float32", "float64", "int64"}),
     call = function(a, _, _, p) return np.corrcoef(a, {y = p.kw.y, rowvar = p.kw.rowvar or false}) end})
add({name = "np.cov(errors)", expect_error = "cov", ref = "0",
     cases = function()
       return {{a = torch.zeros(2, 2, 2), p = {}}, {a = torch.zeros(2, 3), p = {fweights = {1, 2}}},
               {a = torch.zeros(2, 3), p = {fweights = {1, 1.5, 1}}}, {a = torch.zeros(2, 3), p = {aweights = {1, -1, 1}}}}
     end,
     call = function(a, _, _, p) return np.cov(a, {fweights = p.fweights, aweights = p.aweights}) end})

-- isclose / allclose / array_equal on pairs with near, equal, NaN and infinite values.
local function pair_cases(dts)
  return function()
    local cs = {}
    for _, dt in ipairs(dts) do
      for j = 1, G.count(6) do
        local s = G.shape({min_rank = 0, max_rank = 3, max_numel = 60})
        local a = G.make(s, dt, {edges = G.is_float(dt) and 0.3 or nil, edge_list = ALL_EDGES})
        local b = a:clone()
        if G.is_float(dt) and a:numel() > 0 then
          b = b + torch.randn(s, {dtype = dt}) * G.pick({1e-9, 1e-6, 1e-3})
          if j % 2 == 0 then b[torch.rand(s):lt(0.3)] = 0 / 0 end
        elseif a:numel() > 0 and j % 2 == 0 then
          b = b + torch.randint(0, 2, s):to(dt)
        end
        cs[#cs + 1] = {a = a, b = b, p = {dt = dt, kw = {rtol = j == 3 and 1e-3 or nil, atol = j == 4 and 1e-4 or nil,
                                                         equal_nan = j % 3 == 0 or nil}}}
      end
    end
    return cs
  end
end
local PYCLOSE = "rtol=dict(p.kw).get('rtol', 1e-5), atol=dict(p.kw).get('atol', 1e-8), equal_nan=bool(dict(p.kw).get('equal_nan'))"
add({name = "np.isclose", cast = "none", out = "bool", ref = "np.isclose(a, b, " .. PYCLOSE .. ")",
     cases = pair_cases({"float32", "float64", "int32"}), call = function(a, b, _, p) return np.isclose(a, b, p.kw) end})
add({name = "np.allclose", cast = "none", out = "bool", ref = "np.allclose(a, b, " .. PYCLOSE .. ")",
     cases = pair_cases({"float32", "float64", "int32"}), call = function(a, b, _, p) return np.allclose(a, b, p.kw) end})
add({name = "np.array_equal", cast = "none", out = "bool",
     ref = "np.array_equal(a, b.reshape(-1) if dict(p.kw).get('rtol') else b, equal_nan=bool(dict(p.kw).get('equal_nan')))",
     cases = pair_cases({"float32", "float64", "int32"}),
     call = function(a, b, _, p)
       if p.kw.rtol then b = b:reshape(-1) end   -- shapes that differ
       return np.array_equal(a, b, {equal_nan = p.kw.equal_nan})
     end})
add({name = "torch.isclose", out = "bool", cast = "none", ref = "np.isclose(a, b, " .. PYCLOSE .. ")",
     cases = pair_cases({"float32", "float64", "int64"}), call = function(a, b, _, p) return torch.isclose(a, b, p.kw) end})
add({name = "torch.allclose", out = "bool", cast = "none", ref = "np.allclose(a, b, " .. PYCLOSE .. ")",
     cases = pair_cases({"float32", "float64"}), call = function(a, b, _, p) return torch.allclose(a, b, p.kw) end})

-- interp: x of any shape, xp increasing with repeats, left/right, period.
add({name = "np.interp", cast = "none", out = "float64", tol = {float64 = {1e-12, 1e-12}},
     ref = "np.interp(a, b, c, left=dict(p.kw).get('left'), right=dict(p.kw).get('right'), period=dict(p.kw).get('period'))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64"}) do
         for j = 1, G.count(8) do
           local n = G.pick({1, 2, 5, 9})
           local xp = torch.rand(n, {dtype = "float64"}):mul(10):sort()
           if j % 4 == 0 and n > 2 then xp[2] = xp[3]:item() end
           if dt == "int64" then xp = xp:floor():sort() end
           local fp = torch.randn(n, {dtype = "float64"})
           local xs = G.shape({min_rank = 0, max_rank = 2, max_numel = 30})
           local x = dt == "int64" and G.make(xs, dt, {fn = function() return math.random(-2, 12) end}) or
                     G.make(xs, dt, {fn = function() return G.pick({-1, 0, 3, 5, 7, 11, 2.5, 0 / 0}) + math.random() end})
           local kw = {}
           if j % 3 == 1 then kw.left, kw.right = -7.5, 8.25 end
           if j % 3 == 2 and n > 1 then kw.period = 6.5 end
           cs[#cs + 1] = {a = x, b = xp:to(dt == "int64" and "int64" or "float64"), c = fp:to(dt == "float32" and "float32" or "float64"),
                          p = {kw = kw}}
         end
       end
       return cs
     end,
     call = function(x, xp, fp, p) return np.interp(x, xp, fp, p.kw) end})

-- convolve / correlate: every mode, both orders of lengths.
local function conv_cases()
  local cs = {}
  for _, dt in ipairs({"float32", "float64", "int32", "int64"}) do
    for j = 1, G.count(6) do
      local a = G.make({G.pick({1, 2, 4, 7})}, dt, {dom = "small"})
      local vdt = G.pick({dt, "float64"})
      local v = G.make({G.pick({1, 3, 5, 8})}, vdt, {dom = "small"})
      cs[#cs + 1] = {a = a, b = v, p = {mode = ({"full", "same", "valid"})[j % 3 + 1], dt = dt, vdt = vdt}}
    end
  end
  return cs
end
for _, name in ipairs({"convolve", "correlate"}) do
  add({name = "np." .. name, cast = "none", out = "py:str(np.result_type(p.dt, p.vdt))", ref = "np." .. name .. "(a, b, p.mode)",
       tol = {float32 = {1e-5, 1e-5}},
       cases = conv_cases, call = function(a, b, _, p) return np[name](a, b, {mode = p.mode}) end})
end

-- polyval / polyfit.
add({name = "np.polyval", cast = "none", out = "py:p.dt if p.dt.startswith('float') or not p.float_p else 'float64'",
     ref = "np.polyval(np.array(p.coef), a)", tol = {float32 = {1e-5, 1e-5}},
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64"}) do
         for j = 1, G.count(5) do
           local coef = {}
           for i = 1, G.pick({1, 2, 4}) do coef[i] = j % 2 == 0 and math.random(-3, 3) or math.random(-8, 8) / 4 end
           cs[#cs + 1] = {a = G.make(G.shape({min_rank = 0, max_rank = 2, max_numel = 30}), dt, {dom = "small"}),
                          p = {coef = coef, dt = dt, float_p = j % 2 == 1}}
         end
       end
       return cs
     end,
     call = function(x, _, _, p)
       local coef = p.float_p and torch.tensor(p.coef, {dtype = "float64"}) or torch.tensor(p.coef, {dtype = "int64"})
       return np.polyval(coef, x)
     end})
add({name = "np.polyfit", cast = "none", out = "py:p.dt", tol = {float64 = {1e-9, 1e-10}, float32 = {1e-4, 1e-5}},
     ref = "np.polyfit(a, b, p.deg, w=p.w)",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for j = 1, G.count(5) do
           local n = math.random(5, 12)
           local x = torch.linspace(-2, 3, n, {dtype = dt}) + torch.rand(n, {dtype = dt}) * 0.1
           local y = j % 2 == 0 and G.make({n, 2}, dt, {}) or G.make({n}, dt, {})
           local w
           if j == 3 then w = {} for i = 1, n do w[i] = math.random(1, 4) / 2 end end
           cs[#cs + 1] = {a = x, b = y, p = {deg = math.random(0, 3), dt = dt, w = w}}
         end
       end
       return cs
     end,
     call = function(x, y, _, p) return np.polyfit(x, y, p.deg, {w = p.w}) end})

-- gradient: uniform and coordinate spacings, axis, edge_order.
add({name = "np.gradient", cast = "none", out = "py:[p.dt if p.dt.startswith('float') else 'float64'] * p.nout",
     tol = {float32 = {1e-5, 1e-5}, float64 = {1e-10, 1e-12}},
     ref = "grads(np.gradient(a, *p.spacing, axis=None if p.axis is None else ax(p.axis, a), edge_order=p.edge))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64"}) do
         for j = 1, G.count(8) do
           local s = G.shape({min_rank = 1, max_rank = 3, max_numel = 60, dims = {3, 4, 6}})
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "small"})
           local edge = j % 2 + 1
           local axis = j % 3 == 0 and -1 or nil
           local naxes = axis and 1 or #s
           local spacing = {}
           if j % 4 == 1 then spacing = {0.5}
           elseif j % 4 == 2 then
             for i = 1, naxes do
               local n = s[axis and #s or i]
               if i % 2 == 1 then
                 local c, t = {}, 0
                 for k = 1, n do t = t + math.random(1, 8) / 4; c[k] = t end
                 spacing[i] = c
               else spacing[i] = 2.0 end
             end
           end
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {dt = dt, edge = edge, axis = axis, spacing = spacing, nout = naxes}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       local args = {}
       for i, v in ipairs(p.spacing) do args[i] = v end
       args[#args + 1] = {axis = p.axis, edge_order = p.edge}
       local r = np.gradient(a, table.unpack(args))
       return torch.is_tensor(r) and {r} or r
     end})

---------------------------------------------------------------------------------------------
-- torch spellings (PyTorch's rules; gradient columns).
local LOWER_MED = "lowmed(a, ax(p.dim, a), bool(p.keepdim))"
add({name = "torch.median(dim)", out = "same,same", ref = "(" .. LOWER_MED .. ", " .. LOWER_MED .. ")", grad = {"a"},
     cases = stat_cases({need_dim = true, min_rank = 1, dtypes = {"float32", "float64", "int32", "int64"}, edge_list = ALL_EDGES}),
     grad_call = function(a, _, _, p) return (torch.median(a, p.dim, p.keepdim)) end,
     call = function(a, _, _, p)
       local v, i = torch.median(a, p.dim, p.keepdim)
       local d = p.dim < 0 and a.ndim + 1 + p.dim or p.dim
       return v, a:gather(d, p.keepdim and i or i:unsqueeze(d)):reshape(v.shape)
     end})
add({name = "torch.median", out = "same", ref = "lowmed(a, None, False)", grad = {"a"},
     cases = stat_cases({dtypes = {"float32", "float64", "int64"}, edge_list = ALL_EDGES, fix = function(c) c.p.dim = nil end}),
     call = function(a) return torch.median(a) end})
add({name = "torch.nanmedian(dim)", out = "same,same", ref = "(nanlowmed(a, ax(p.dim, a), bool(p.keepdim)),) * 2",
     cases = stat_cases({need_dim = true, min_rank = 1, dtypes = {"float32", "float64", "int64"}}),
     call = function(a, _, _, p)
       local v, i = torch.nanmedian(a, p.dim, p.keepdim)
       local d = p.dim < 0 and a.ndim + 1 + p.dim or p.dim
       return v, a:gather(d, p.keepdim and i or i:unsqueeze(d)):reshape(v.shape)
     end})
local TQ = {"linear", "lower", "higher", "midpoint", "nearest"}
for _, name in ipairs({"quantile", "nanquantile"}) do
  local k = 0
  add({name = "torch." .. name, out = "same", grad = {"a"}, tol = {float32 = {1e-5, 1e-5}},
       ref = "np." .. name .. "(a, np.array(p.extra[1]), axis=ax(p.dim, a), " .. KEEP .. ", method=p.extra[0])",
       cases = stat_cases({per_dtype = 10, dtypes = {"float32", "float64"}, edge_list = NAN_EDGES,
                           extra = function(j)
                             k = k % #TQ + 1
                             return {TQ[k], QS[j % #QS + 1]}
                           end,
                           fix = function(c) if type(c.p.dim) == "table" then c.p.dim = 1 end end}),
       call = function(a, _, _, p)
         local q = p.extra[2]
         if type(q) == "table" then q = torch.tensor(q, {dtype = a.dtype}) end
         if p.dim == nil then return torch[name](a, q, {keepdim = p.keepdim, interpolation = p.extra[1]}) end
         return torch[name](a, q, p.dim, p.keepdim, {interpolation = p.extra[1]})
       end})
end
add({name = "torch.nansum", out = "sum", ref = "np.nansum(a, axis=ax(p.dim, a), " .. KEEP .. ")", grad = {"a"},
     tol = {float32 = {1e-5, 1e-5}},
     cases = stat_cases({multi = true, empty = true, dtypes = {"float32", "float64", "int32", "int64"}}),
     call = function(a, _, _, p) return torch.nansum(a, {dim = p.dim, keepdim = p.keepdim}) end})
add({name = "torch.nanmean", out = "same", ref = "np.nanmean(a, axis=ax(p.dim, a), " .. KEEP .. ")", grad = {"a"},
     tol = {float32 = {1e-5, 1e-5}}, cases = stat_cases({multi = true, empty = true, dtypes = {"float32", "float64"}}),
     call = function(a, _, _, p) return torch.nanmean(a, p.dim, p.keepdim) end})
add({name = "torch.cov", out = "same", grad = {"a"}, tol = {float32 = {1e-5, 1e-5}, float64 = {1e-10, 1e-12}},
     ref = "np.cov(a, ddof=dict(p.kw).get('correction', 1), fweights=dict(p.kw).get('fweights'), aweights=dict(p.kw).get('aweights'))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for j = 1, G.count(6) do
           local s = j % 3 == 0 and {5} or {G.pick({1, 2, 3}), G.pick({3, 4, 7})}
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "small"})
           local nobs = s[#s]
           local kw = {correction = ({1, 0, 2})[j % 3 + 1]}
           if j % 2 == 0 then kw.fweights = torch.randint(1, 4, {nobs}):tolist() end
           if j % 4 ~= 3 then kw.aweights = (torch.rand(nobs, {dtype = "float64"}) + 0.5):tolist() end
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {kw = kw}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       local kw = {correction = p.kw.correction}
       if p.kw.fweights then kw.fweights = torch.tensor(p.kw.fweights, {device = a.device}) end
       if p.kw.aweights then kw.aweights = torch.tensor(p.kw.aweights, {dtype = a.dtype, device = a.device}) end
       return torch.cov(a, kw)
     end})
add({name = "torch.corrcoef", out = "same", grad = {"a"}, tol = {float32 = {1e-5, 1e-5}, float64 = {1e-10, 1e-12}},
     ref = "np.corrcoef(a)",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for j = 1, G.count(4) do
           local a, l = G.view(j == 1 and {6} or {G.pick({2, 3}), G.pick({4, 7})}, dt, G.pick(G.LAYOUTS), {dom = "small"})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {}}
         end
       end
       return cs
     end,
     call = function(a) return torch.corrcoef(a) end})

---------------------------------------------------------------------------------------------
-- ufunc methods (np.add.reduce, ...): axes default to 1 (NumPy's 0).
local UF = {
  {"add", {"float32", "float64", "int32", "int64", "bool"}, true, true},
  {"multiply", {"float32", "float64", "int32", "int64"}, true, true},
  {"maximum", {"float32", "float64", "int32", "uint8"}, true, false},
  {"minimum", {"float32", "float64", "int64", "int8"}, true, false},
  {"subtract", {"float32", "float64", "int32"}, false, false},
  {"divide", {"float64", "int64"}, false, false},
  {"logical_and", {"bool", "float64", "int32"}, true, true},
  {"logical_or", {"bool", "int64"}, true, true},
  {"logical_xor", {"bool", "int32"}, true, true},
  {"bitwise_and", {"int32", "uint8", "bool"}, true, true},
  {"bitwise_or", {"int64", "int16"}, true, true},
  {"bitwise_xor", {"int32", "bool"}, true, true},
}
local UDTYPE = "py:str(np.%s.%s(np.ones(%s, dtype=p.dt)).dtype)"
-- np.<name>.at(copy of a, key, b), b given as a list (made a tensor of a's dtype) or a number.
local function at_on_copy(name, a, key, pb)
  local c = a:clone()
  local b = type(pb) == "table" and torch.tensor(pb, {dtype = a.dtype, device = a.device}) or pb
  np[name].at(c, key, b)
  return c
end
for _, u in ipairs(UF) do
  local name, dts, reorderable, identity = u[1], u[2], u[3], u[4]
  local ufn = "np." .. name
  add({name = ufn .. ".reduce", cast = "none", out = UDTYPE:format(name, "reduce", "2"), tol = {float32 = {1e-5, 1e-5}},
       ref = ufn .. ".reduce(a, axis=0 if p.dim is None else ax(p.dim, a), " .. KEEP .. ", **({} if p.extra is None else {'initial': p.extra}))",
       cases = stat_cases({min_rank = 1, dtypes = dts, multi = reorderable, empty = identity, domain = "small", edge_list = ALL_EDGES,
                           extra = function(j, dt) return j == 5 and (dt == "bool" and true or 2) or nil end}),
       call = function(a, _, _, p)
         if p.dim == nil and p.extra == nil and not p.keepdim then return np[name].reduce(a) end
         return np[name].reduce(a, {axis = p.dim, keepdims = p.keepdim, initial = p.extra})
       end})
  add({name = ufn .. ".accumulate", cast = "none", out = UDTYPE:format(name, "accumulate", "2"), tol = {float32 = {1e-5, 1e-5}},
       ref = ufn .. ".accumulate(a, axis=0 if p.dim is None else ax(p.dim, a))",
       cases = stat_cases({min_rank = 1, dtypes = dts, empty = true, domain = "small", per_dtype = 4,
                           fix = function(c) if type(c.p.dim) == "table" then c.p.dim = -1 end end}),
       call = function(a, _, _, p)
         if p.dim == nil then return np[name].accumulate(a) end
         return np[name].accumulate(a, {axis = p.dim})
       end})
  add({name = ufn .. ".outer", cast = "none", out = "py:str(" .. ufn .. "(np.ones(1, p.dt), np.ones(1, p.dt)).dtype)",
       ref = ufn .. ".outer(a, b)",
       cases = function()
         local cs = {}
         for _, dt in ipairs(dts) do
           for _ = 1, G.count(2) do
             local dom = (name == "divide") and "nonzero" or "small"
             cs[#cs + 1] = {a = G.make(G.shape({min_rank = 0, max_rank = 2, max_numel = 12}), dt, {dom = dom}),
                            b = G.make(G.shape({min_rank = 0, max_rank = 2, max_numel = 12}), dt, {dom = dom}), p = {dt = dt}}
           end
         end
         return cs
       end,
       call = function(a, b) return np[name].outer(a, b) end})
  if name ~= "divide" then
    add({name = ufn .. ".at", cast = "none", out = "py:p.dt", ref = "ufunc_at(" .. ufn .. ", a, p.idx, p.b)",
         cases = function()
           local cs = {}
           for _, dt in ipairs(dts) do
             for j = 1, G.count(3) do
               local s = j == 1 and {5} or {4, 3}
               local idx = {}
               for k = 1, math.random(1, 6) do idx[k] = math.random(1, s[1]) * (math.random() < 0.2 and -1 or 1) end
               local b = j == 3 and G.value(dt, "small") or G.make(j == 1 and {#idx} or {#idx, 3}, dt, {dom = "small"}):tolist()
               cs[#cs + 1] = {a = G.make(s, dt, {dom = "small"}), p = {dt = dt, idx = idx, b = b}}
             end
           end
           return cs
         end,
         call = function(a, _, _, p) return at_on_copy(name, a, p.idx, p.b) end})
  end
  if name ~= "divide" then
    -- NumPy's tuple of per-dim indices: index arrays (repeated and negative), ":" and ranges,
    -- b broadcast to the selection's shape.
    local function tide_key(key)
      local k = {}
      for d, e in ipairs(key) do
        k[d] = e == ":" and e or e[1] == "r" and {e[2], e[3]} or torch.tensor(e[2], {dtype = "int64"})
      end
      return k
    end
    add({name = ufn .. ".at tuple", cast = "none", out = "py:p.dt", ref = "ufunc_at_tuple(" .. ufn .. ", a, p.key, p.b)",
         cases = function()
           local cs = {}
           for _, dt in ipairs(dts) do
             for j = 1, 4 do
               local s = j == 4 and {3, 2, 2} or {4, 3}
               local n = math.random(1, 6)
               local function I(size)
                 local v = {}
                 for k = 1, n do v[k] = math.random(1, size) * (math.random() < 0.3 and -1 or 1) end
                 return {"i", v}
               end
               local key, sel
               if j == 1 then key, sel = {I(s[1]), I(s[2])}, {n}
               elseif j == 2 then key, sel = {":", I(s[2])}, {s[1], n}
               elseif j == 3 then key, sel = {I(s[1]), {"r", 2, 3}}, {n, 2}
               else key, sel = {I(s[1]), ":", I(s[3])}, {n, s[2]} end
               local b
               if j == 1 then b = G.value(dt, "small")
               elseif j == 2 then b = G.make({n}, dt, {dom = "small"}):tolist()
               else b = G.make(sel, dt, {dom = "small"}):tolist() end
               cs[#cs + 1] = {a = G.make(s, dt, {dom = "small"}), p = {dt = dt, key = key, b = b}}
             end
           end
           return cs
         end,
         call = function(a, _, _, p) return at_on_copy(name, a, tide_key(p.key), p.b) end})
  end
  add({name = ufn .. ".reduceat", cast = "none", out = "py:str(" .. ufn .. ".reduceat(np.ones(2, dtype=p.dt), [0]).dtype)",
       ref = ufn .. ".reduceat(a, [i - 1 for i in p.idx], axis=ax(p.dim, a))", tol = {float32 = {1e-5, 1e-5}},
       cases = function()
         local cs = {}
         for _, dt in ipairs(dts) do
           for j = 1, G.count(3) do
             local s = j == 2 and {6, 3} or {7}
             local dim = j == 2 and -2 or 1
             local idx = {}
             for k = 1, math.random(1, 5) do idx[k] = math.random(1, s[1]) end
             cs[#cs + 1] = {a = G.make(s, dt, {dom = name == "divide" and "nonzero" or "small"}), p = {dt = dt, idx = idx, dim = dim}}
           end
         end
         return cs
       end,
       call = function(a, _, _, p) return np[name].reduceat(a, p.idx, {axis = p.dim}) end})
end
