-- Rows of the conformance table for the tensor ops of issue 15 (bindings/lua/torch_ops15.lua and
-- the special functions erfinv, lgamma, digamma), checked against PyTorch 1.13 itself: the
-- references call torch on float64 copies of the inputs (`T(a)`, `N(...)`: check.py), dims
-- and indices 1-based here, 0-based there. Rows rotate between the function, the method and
-- the in-place spelling where PyTorch has them. Loaded by ops.lua with G and add(row).
local G, add = ...

local MAIN = {"float32", "float64"}
local F = torch.nn.functional

local kw_or_nil, with_kw = G.kwargs, G.with_kw

local function copy(t)
  if t == nil then return nil end
  local r = {}
  for k, v in pairs(t) do r[k] = v end
  return r
end

-- Python keyword arguments from p.kw.
local PYKW = "**(p.kw or {})"

---------------------------------------------------------------------------------------------
-- The special functions (engine unary ops, PyTorch's algorithms): every dtype, edge values
-- (NaN, +-inf, +-0), the function / method / in-place spellings.
local SPECIAL = {
  {"erfinv", "unit", gradgrad = true},
  {"lgamma", nil, grad_domain = "pos", gradgrad = true},
  {"digamma", nil, grad_domain = "pos", gradgrad = true},
}
for _, u in ipairs(SPECIAL) do
  local name = u[1]
  add({name = name, gen = "unary", dtypes = G.DTYPES, out = "float", domain = u[2], ref = "N(torch." .. name .. "(T(a)))",
       tol = {float32 = {2e-5, 1e-6}, float64 = {1e-12, 1e-13}}, grad = {"a"}, grad_domain = u.grad_domain,
       gradgrad = u.gradgrad,
       call = function(a)
         local k = a:numel() % 3
         if k == 1 then return torch[name](a) end
         if k == 2 and a:is_floating_point() then return a:clone()[name .. "_"](a:clone()) end
         return a[name](a)
       end})
end
-- Values on each branch of the algorithms: erfinv's central range and tails (and +-1), lgamma
-- and digamma at negative non-integers, poles, the recurrence and the asymptotic series.
local NATIVE = "torch.from_numpy(np.array(%s, order='C'))"  -- the input in its own dtype
add({name = "special values", out = "same*", cast = "none", tol = {float32 = {2e-6, 1e-7}, float64 = {1e-14, 1e-15}},
     ref = "[N(torch.erfinv(" .. NATIVE:format("a") .. ")), N(torch.lgamma(" .. NATIVE:format("b") .. ")), " ..
           "N(torch.digamma(" .. NATIVE:format("b") .. "))]",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         local a = torch.tensor({-1, -0.999, -0.7, -0.5, 0, 0.3, 0.69, 0.71, 0.9999, 1, 1.5, -0.0}, {dtype = dt})
         local b = torch.tensor({-2.5, -1, -0.0, 0, 1e-8, 0.5, 1, 1.4616321449683622, 2.5, 9.75, 10, 10.5, 1e6,
                                 171.5, -7.25, 3e17}, {dtype = dt})
         cs[#cs + 1] = {a = a, b = b, p = {dt = dt}}
       end
       return cs
     end,
     call = function(a, b) return {torch.erfinv(a), b:lgamma(), torch.digamma(b)} end})

---------------------------------------------------------------------------------------------
-- addcmul / addcdiv: broadcast operands, value, the three spellings (p.form 1 function, 2
-- method, 3 out=); the in-place rows write into a's own shape.
for _, op in ipairs({"addcmul", "addcdiv"}) do
  add({name = op, out = "promote", grad = {"a", "b", "c"},
       ref = "N(torch." .. op .. "(T(a), T(b), T(c), value=p.value))",
       grad_call = function(a, b, c, p) return torch[op](a, b, c, {value = p.value}) end,  -- (out= is not differentiable)
       cases = function()
         local cs = {}
         for _, dt in ipairs({"float32", "float64", "int64"}) do
           if not (op == "addcdiv" and dt == "int64") then
             for j = 1, G.count(4) do
               local sa, sb = G.broadcast_pair({max_rank = 3})
               local a, la = G.view(sa, dt, G.pick(G.LAYOUTS), {dom = "small"})
               local b, lb = G.view(sb, dt, G.pick(G.LAYOUTS), {dom = "small"})
               local c = G.make(j == 2 and {} or sb, j == 3 and "float64" or dt, {dom = op == "addcdiv" and "nonzero" or "small"})
               if dt == "int64" and j == 3 then c = G.make(sb, "int32", {dom = "small"}) end
               local value = ({1, -0.5, 2, 0.25})[j]
               if dt == "int64" then value = ({1, -2, 3, 0})[j] end
               cs[#cs + 1] = {a = a, b = b, c = c, layouts = {a = la, b = lb}, p = {value = value, form = 1 + j % 3}}
             end
           end
         end
         -- 0-dim and empty
         cs[#cs + 1] = {a = G.make({}, "float32"), b = G.make({}, "float32"), c = G.make({}, "float32", {dom = "nonzero"}),
                        p = {value = 1, form = 1}}
         cs[#cs + 1] = {a = G.make({0, 3}, "float64"), b = G.make({3}, "float64"), c = G.make({0, 1}, "float64"),
                        p = {value = 2, form = 2}}
         return cs
       end,
       call = function(a, b, c, p)
         local kw = p.value ~= 1 and {value = p.value} or {}
         if p.form == 1 then return with_kw(torch[op], kw, a, b, c) end
         if p.form == 2 then return with_kw(a[op], kw, a, b, c) end
         local r = with_kw(torch[op], kw, a, b, c)
         local out = torch.full(r.shape, 3, {dtype = r.dtype, device = r.device})
         kw.out = out
         local got = torch[op](a, b, c, kw)
         assert(rawequal(got, out), op .. " with out= did not return out")
         return out
       end})
  add({name = op .. "_", out = "same", grad = {"a", "b", "c"}, grad_call = "clone",
       ref = "N(torch." .. op .. "(T(a), T(b), T(c), value=p.value))",
       cases = function()
         local cs = {}
         for _, dt in ipairs(MAIN) do
           for j = 1, G.count(3) do
             local s = G.shape({max_rank = 3})
             local sb = {table.unpack(s, 2)}
             local a, la = G.view(s, dt, G.pick({"contig", "T", "step"}), {dom = "small"})
             cs[#cs + 1] = {a = a, b = G.make(sb, dt), c = G.make(s, dt, {dom = "nonzero"}), layouts = {a = la},
                            p = {value = ({1, 0.5, -3})[j]}}
           end
         end
         return cs
       end,
       call = function(a, b, c, p)
         local r = a[op .. "_"](a, b, c, {value = p.value})
         assert(rawequal(r, a), op .. "_ did not return its input")
         return a
       end})
end

---------------------------------------------------------------------------------------------
-- baddbmm / addbmm / addmv / addr: shapes per op, beta / alpha variants (beta = 0 included),
-- a broadcast input, and the in-place form in turn (on a clone: the input's shape is the
-- result's there).
local PRODUCTS = {
  baddbmm = function(b, n, m, p) return {{b, n, p}, {1, p}, {n, 1}}, {b, n, m}, {b, m, p} end,
  addbmm = function(b, n, m, p) return {{n, p}, {p}, {}}, {b, n, m}, {b, m, p} end,
  addmv = function(_, n, m) return {{n}, {1}, {}}, {n, m}, {m} end,
  addr = function(_, n, m) return {{n, m}, {m}, {n, 1}}, {n}, {m} end,
}
local FACTORS = {{}, {beta = 0.5, alpha = 2}, {beta = 0}, {alpha = -1.5}, {beta = 2, alpha = 0}}
for _, op in ipairs({"baddbmm", "addbmm", "addmv", "addr"}) do
  add({name = op, out = "same", grad = {"a", "b", "c"},
       ref = "product_ref('" .. op .. "', a, b, c, p.kw or {})",
       cases = function()
         local cs = {}
         for _, dt in ipairs(MAIN) do
           for j = 1, #FACTORS do
             local dims = {G.pick({1, 2, 3}), G.pick({1, 3, 4}), G.pick({2, 5}), G.pick({1, 3})}
             if j == #FACTORS then dims[3] = 0 end
             local inputs, sb, sc = PRODUCTS[op](table.unpack(dims))
             local sa = inputs[1 + j % #inputs]
             -- (PyTorch's addmv of an empty product returns the input's own shape: a full one here.)
             if op == "addmv" and dims[3] == 0 then sa = inputs[1] end
             local b, lb = G.view(sb, dt, G.pick(G.LAYOUTS))
             cs[#cs + 1] = {a = G.make(sa, dt), b = b, c = G.make(sc, dt), layouts = {b = lb},
                            p = {kw = kw_or_nil(FACTORS[j]), form = 1 + j % 3,
                                 full = table.concat(sa, ",") == table.concat(inputs[1], ",")}}
           end
         end
         return cs
       end,
       call = function(a, b, c, p)
         if p.form == 2 then return with_kw(a[op], copy(p.kw), a, b, c) end
         if p.form == 3 and p.full then
           local x = a:clone()
           local r = with_kw(x[op .. "_"], copy(p.kw), x, b, c)
           assert(rawequal(r, x), op .. "_ did not return its input")
           return x
         end
         return with_kw(torch[op], copy(p.kw), a, b, c)
       end})
end

---------------------------------------------------------------------------------------------
-- Scans and selections along a dim: random shapes (0-dim and size-0 dims), negative dims,
-- NaNs and ties (values on a small grid), several layouts.
local function dim_cases(dtypes, o)
  o = o or {}
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for j = 1, G.count(o.per_dtype or 6) do
        local s = j == 1 and {} or G.shape({max_rank = 3, zero = o.empty ~= false and j == 2 and 0.5 or nil})
        local r = math.max(#s, 1)
        local dim = math.random(1, r)
        if math.random() < 0.4 then dim = dim - r - 1 end
        local grid = o.grid and j % 2 == 0
        local fn = grid and function() return G.pick({0, 1, 2, 3}) end or nil
        local edges = G.is_float(dt) and not o.no_nan and j % 3 == 0 and 0.3 or nil
        local a, l = G.view(s, dt, G.pick(o.layouts or G.LAYOUTS), {fn = fn, edges = edges, edge_list = {0 / 0, 1.0, -2.0}})
        local case = {a = a, layouts = {a = l}, p = {dim = dim, keepdim = j % 2 == 0}}
        if o.fix then o.fix(case, s, dim) end
        cs[#cs + 1] = case
      end
    end
    return cs
  end
end

for _, op in ipairs({"cummax", "cummin"}) do
  add({name = op, out = "same,int64", cast = "none", grad = {"a"},
       ref = "(lambda r: (N(r[0]), N(r[1]) + 1))(torch." .. op .. "(T(a), ax(p.dim)))",
       cases = dim_cases({"float32", "float64", "float16", "int64", "int32"}, {grid = true}),
       call = function(a, _, _, p)
         if p.keepdim then return a[op](a, p.dim) end
         return torch[op](a, {dim = p.dim})
       end})
end

add({name = "logcumsumexp", out = "same", grad = {"a"}, ref = "N(torch.logcumsumexp(T(a), ax(p.dim)))",
     cases = dim_cases({"float32", "float64"}, {}),
     call = function(a, _, _, p)
       if p.keepdim then return a:logcumsumexp(p.dim) end
       return torch.logcumsumexp(a, p.dim)
     end})

-- kthvalue: distinct values (PyTorch's index among equal values depends on its selection
-- algorithm); k from 1 to the dim's size.
add({name = "kthvalue", out = "same,int64", cast = "none", grad = {"a"},
     ref = "(lambda r: (N(r[0]), N(r[1]) + 1))(torch.kthvalue(T(a), p.k, ax(p.dim), keepdim=bool(p.keepdim)))",
     cases = dim_cases({"float32", "float64"}, {empty = false, no_nan = true, layouts = G.others(G.LAYOUTS, "expand"),
                                                fix = function(case, s, dim)
       local r = math.max(#s, 1)
       local d = dim < 0 and r + 1 + dim or dim
       case.p.k = math.random(1, #s == 0 and 1 or s[d])
     end}),
     call = function(a, _, _, p)
       if p.keepdim then return a:kthvalue(p.k, p.dim, true) end
       return torch.kthvalue(a, p.k, {dim = p.dim})
     end})

-- mode: values on a small grid, so that most slices have ties (no NaN: PyTorch's index
-- for a NaN mode is not the last occurrence).
add({name = "mode", out = "same,int64", cast = "none", grad = {"a"},
     ref = "(lambda r: (N(r[0]), N(r[1]) + 1))(torch.mode(T(a), ax(p.dim), keepdim=bool(p.keepdim)))",
     cases = dim_cases({"float32", "float64", "int64"}, {empty = false, no_nan = true, grid = true}),
     call = function(a, _, _, p)
       if p.keepdim then return a:mode(p.dim, true) end
       return torch.mode(a, {dim = p.dim})
     end})

---------------------------------------------------------------------------------------------
-- xlogy: broadcast operands, zeros in input, NaN / 0 / inf in other, a number on either side.
add({name = "xlogy", out = "truediv", grad = {"a", "b"}, grad_domain = {b = "pos"},
     ref = "N(torch.xlogy(T(a), T(b)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64"}) do
         for j = 1, G.count(5) do
           local sa, sb = G.broadcast_pair({max_rank = 3})
           local a = G.make(sa, dt, {fn = dt ~= "int64" and function() return G.pick({0, 0, 1.5, -2, G.randn()}) end or nil,
                                     dom = "small"})
           local b = G.make(sb, dt, {dom = "pos", edges = G.is_float(dt) and 0.3 or nil, edge_list = {0 / 0, 0.0, math.huge}})
           if j == 4 then b = 2.5 elseif j == 5 then a = G.pick({0, 3}) end
           cs[#cs + 1] = {a = a, b = b, p = {form = j % 2}}
         end
       end
       return cs
     end,
     call = function(a, b, _, p)
       if p.form == 1 and torch.is_tensor(a) then return a:xlogy(b) end
       return torch.xlogy(a, b)
     end})
add({name = "xlogy_", out = "same", grad = {"a", "b"}, grad_call = "clone", grad_domain = {b = "pos"},
     ref = "N(torch.xlogy(T(a), T(b)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, lay in ipairs({"contig", "T", "step"}) do
           local s = G.shape({min_rank = 1, max_rank = 3})
           local a, l = G.view(s, dt, lay, {fn = function() return G.pick({0, 1.5, -2, G.randn()}) end})
           cs[#cs + 1] = {a = a, b = G.make({s[#s]}, dt, {dom = "pos"}), layouts = {a = l}}
         end
       end
       return cs
     end,
     call = function(a, b) a:xlogy_(b); return a end})

-- nan_to_num: NaN and infinities in every float dtype, the replacements given or not.
local NAN_KWS = {{}, {nan = 1.5}, {posinf = 100, neginf = -7.25}, {nan = -1, neginf = 0}}
add({name = "nan_to_num", out = "same", grad = {"a"}, cast = "none",
     ref = "N(torch.nan_to_num(" .. NATIVE:format("a") .. ", " .. PYKW .. "))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "float16", "int64"}) do
         for j, kw in ipairs(NAN_KWS) do
           local s = G.shape({max_rank = 3})
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {edges = 0.4, edge_list = {0 / 0, math.huge, -math.huge, 0.0}})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {kw = kw_or_nil(kw), form = j % 3}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       if p.form == 1 then return with_kw(a.nan_to_num, copy(p.kw), a) end
       if p.form == 2 then
         local x = a:clone()
         with_kw(x.nan_to_num_, copy(p.kw), x)
         return x
       end
       return with_kw(torch.nan_to_num, copy(p.kw), a)
     end})

---------------------------------------------------------------------------------------------
-- cdist: batch dims broadcast, p in {0, 1, 1.5, 2, inf}, the compute modes (the mm form for
-- p = 2 above 25 rows by default).
local CDIST = {{p = 2}, {p = 1}, {p = 1.5}, {p = 0}, {pinf = true}, {p = 2, mode = "use_mm_for_euclid_dist"},
               {p = 2, big = true}, {p = 2, mode = "donot_use_mm_for_euclid_dist", big = true}}
add({name = "cdist", out = "same", grad = {"a", "b"}, tol = {float32 = {1e-4, 1e-5}, float64 = {1e-10, 1e-12}},
     ref = "N(torch.cdist(T(a), T(b), p=(inf if p.pinf else p.p), compute_mode=(p.mode or " ..
           "'use_mm_for_euclid_dist_if_necessary')))",
     grad_if = function(case) return case.p.p ~= 0 end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, c in ipairs(CDIST) do
           local m = G.pick({1, 3, 4})
           local P, R = G.pick({1, 2, 5}), c.big and 27 or G.pick({1, 3, 4})
           local batch = G.pick({{}, {2}, {3, 1}})
           local sa, sb = {table.unpack(batch)}, {G.pick({1, batch[#batch] or 1})}
           sa[#sa + 1], sa[#sa + 2] = P, m
           sb[#sb + 1], sb[#sb + 2] = R, m
           local a, la = G.view(sa, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = G.make(sb, dt), layouts = {a = la}, p = {p = c.p, pinf = c.pinf, mode = c.mode}}
         end
       end
       return cs
     end,
     call = function(a, b, _, p)
       local kw = {p = p.pinf and math.huge or p.p, compute_mode = p.mode}
       return torch.cdist(a, b, kw)
     end})

-- cosine_similarity: broadcast shapes, dims (default 2), eps large enough to clamp sometimes.
add({name = "F.cosine_similarity", out = "promote", grad = {"a", "b"},
     ref = "N(F.cosine_similarity(T(a), T(b), dim=ax(p.dim or 2), eps=(p.eps or 1e-8)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for j = 1, G.count(6) do
           local sa, sb = G.broadcast_pair({min_rank = 2, max_rank = 3})
           local r = math.max(#sa, #sb)
           local dim = j > 1 and (math.random() < 0.5 and math.random(1, r) or -math.random(1, r)) or nil
           if dim == nil and r < 2 then dim = 1 end
           cs[#cs + 1] = {a = G.make(sa, dt), b = G.make(sb, j == 3 and "float64" or dt),
                          p = {dim = dim, eps = j == 4 and 2.0 or nil}}
         end
       end
       return cs
     end,
     call = function(a, b, _, p)
       return F.cosine_similarity(a, b, {dim = p.dim, eps = p.eps})
     end})

-- one_hot: 1-based classes; num_classes given or inferred.
add({name = "F.one_hot", out = "int64", cast = "none",
     ref = "N(F.one_hot(T(a) - 1, p.nc or -1))",
     cases = function()
       local cs = {}
       for j = 1, G.count(6) do
         local s = j == 1 and {} or G.shape({max_rank = 3})
         local nc = G.pick({3, 5})
         local a = G.make(s, "int64", {fn = function() return math.random(1, nc) end})
         cs[#cs + 1] = {a = a, p = {nc = j % 2 == 0 and nc + 1 or nil}}
       end
       return cs
     end,
     call = function(a, _, _, p) return F.one_hot(a, p.nc) end})

---------------------------------------------------------------------------------------------
-- clamp with tensor bounds against PyTorch: bounds broadcast with x either way (the result
-- may be larger than x), NaN in x and in the bounds, min > max in places, one bound absent.
add({name = "clamp tensor bounds", out = "promote", grad = {"a", "b", "c"},
     ref = "N(torch.clamp(T(a), min=T(b), max=T(c)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64"}) do
         for j = 1, G.count(5) do
           local sa, sb = G.broadcast_pair({max_rank = 3})
           local edges = G.is_float(dt) and j % 2 == 0 and 0.2 or nil
           local a, la = G.view(sa, dt, G.pick(G.LAYOUTS), {dom = "small", edges = edges, edge_list = {0 / 0, 0.5}})
           local lo = G.make(sb, dt, {dom = "small", edges = edges, edge_list = {0 / 0, -1.0}})
           local hi = G.make(j == 3 and {} or sb, j == 4 and "float64" or dt, {dom = "small"}) + (j == 5 and 0 or 1)
           if j == 2 then hi = nil elseif j == 3 then lo = nil end
           cs[#cs + 1] = {a = a, b = lo, c = hi, layouts = {a = la}, p = {form = j % 2}}
         end
       end
       return cs
     end,
     call = function(a, lo, hi, p)
       if p.form == 1 then return torch.clamp(a, lo, hi) end
       return a:clamp{min = lo, max = hi}
     end})

---------------------------------------------------------------------------------------------
-- Errors name the op.
local function err(name, expect, call, make)
  add({name = "error: " .. name, expect_error = expect, cast = "none", out = "same", ref = "None", call = call,
       cases = function() local c = make(); return {c} end})
end
err("addcmul shapes", "addcmul: ", function(a, b) return torch.addcmul(a, b, b) end,
    function() return {a = G.make({2, 3}, "float32"), b = G.make({4}, "float32")} end)
err("baddbmm inner dims", "baddbmm: shapes {1,2,3} and {1,2,2} cannot be multiplied",
    function(a, b) return torch.baddbmm(a, b, a) end,
    function() return {a = G.make({1, 2, 2}, "float32"), b = G.make({1, 2, 3}, "float32")} end)
err("cummax dim", "cummax: dim 3 is out of range", function(a) return a:cummax(3) end,
    function() return {a = G.make({2, 2}, "float32")} end)
err("kthvalue k", "kthvalue: k 0 is out of range", function(a) return a:kthvalue(0) end,
    function() return {a = G.make({2, 2}, "float32")} end)
err("one_hot float", "one_hot: expected an int64 tensor", function(a) return F.one_hot(a) end,
    function() return {a = G.make({2}, "float32")} end)
err("clamp_ into a smaller x", "clamp: out= tensor of shape {3} does not match the result shape {2,3}",
    function(a, b) return a:clamp_(b) end,
    function() return {a = G.make({3}, "float32"), b = G.make({2, 3}, "float32")} end)
err("clamp bounds shape", "clamp: shapes", function(a, b) return torch.clamp(a, nil, b) end,
    function() return {a = G.make({3}, "float32"), b = G.make({2}, "float32")} end)
err("cdist dtypes", "cdist: expected x1 and x2 of one dtype, got float32 and float64",
    function(a, b) return torch.cdist(a, b) end,
    function() return {a = G.make({2, 2}, "float32"), b = G.make({2, 2}, "float64")} end)

-- torch.equal / x:equal: the same shape and equal elements after promotion (NaN unequal),
-- against np.array_equal; equal copies, copies in other dtypes, one changed element, other
-- shapes (also ones that broadcast), empty and 0-d tensors, NaN.
add({name = "equal", out = "bool", cast = "none",
     ref = "np.array(a.shape == b.shape and bool(np.all(a == b)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for k = 1, 6 do
           local shape = G.shape({min_rank = k == 6 and 0 or 1, max_rank = k == 6 and 0 or 3, zero = 0.1})
           local a = G.make(shape, dt, {edges = 0.2})
           local b
           if k == 1 then b = a:clone()
           elseif k == 2 then b = a:to(G.pick(G.DTYPES))
           elseif k == 3 and a:numel() > 0 then
             b = a:clone():reshape(-1)
             b[math.random(b:numel())] = dt == "bool" and false or 3
             b = b:reshape(shape)
           elseif k == 4 then b = G.make(G.shape({max_rank = 3}), dt)
           elseif k == 5 then b = a:unsqueeze(1):clone()
           else b = a:clone() end
           cs[#cs + 1] = {a = a, b = b, p = {k = k}}
         end
       end
       return cs
     end,
     call = function(a, b, _, p)
       return torch.tensor(p.k % 2 == 0 and a:equal(b) or torch.equal(a, b), {device = a.device})
     end})

-- polygamma(n, x) for n = 1..4 (n = numel % 4 + 1; n = 0 is digamma's row) against
-- torch.polygamma: every dtype, positive x (at the poles 0, -1, -2, ... the values are
-- rounding artefacts that differ between precisions), the function / method / in-place
-- spellings; gradients to second order. Negative x and the poles: the row after it.
add({name = "polygamma", gen = "unary", dtypes = G.DTYPES, out = "float", domain = "pos",
     ref = "N(torch.polygamma(a.size % 4 + 1, T(a)))",
     tol = {float32 = {2e-5, 1e-6}, float64 = {1e-12, 1e-13}}, grad = {"a"}, grad_domain = "pos", gradgrad = true,
     call = function(a)
       local n = a:numel() % 4 + 1
       local k = a:numel() % 3
       if k == 1 then return torch.polygamma(n, a) end
       if k == 2 and a:is_floating_point() then return a:clone():polygamma_(n) end
       return a:polygamma(n)
     end})

-- polygamma at negative x (trigamma's reflection, the zeta series for n >= 2), the poles, 0,
-- +-inf and NaN, in each float dtype's own precision against torch.polygamma.
add({name = "polygamma negative", out = "same*", cast = "none", tol = {float32 = {2e-5, 1e-6}, float64 = {1e-12, 1e-13}},
     ref = "[N(torch.polygamma(n, " .. NATIVE:format("a") .. ")) for n in (1, 2, 3, 4)]",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         cs[#cs + 1] = {a = torch.tensor({-0.5, -1.25, -2.5, -3.75, -7.1, -0.01, 0.25, 3, 1 / 0, -1 / 0, 0 / 0, 0.0},
                                         {dtype = dt}), p = {dt = dt}}
       end
       return cs
     end,
     call = function(a)
       local r = {}
       for n = 1, 4 do r[n] = torch.polygamma(n, a) end
       return r
     end})

-- torch.gradient against PyTorch's: random shapes, one dim or all, spacing nothing, a number,
-- one number per dim or coordinates, edge_order 1 and 2; integer inputs in the default float.
add({name = "gradient", out = "float", cast = "none",
     tol = {float32 = {1e-5, 1e-5}, float64 = {1e-12, 1e-12}},
     ref = "[N(t) for t in torch.gradient(torch.from_numpy(np.array(a, order='C')), **pykw(p))]",
     grad = {"a"},
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64", "int16"}) do
         for k = 1, G.count(5) do
           local e = k % 2 + 1
           local shape = G.shape({max_rank = 3, dims = {3, 4, 5}})
           local a = G.make(shape, dt, {dom = "small"})
           local p = {edge_order = e}
           if k % 3 == 0 then p.dim = G.randint(1, #shape) end
           local nd = p.dim and 1 or #shape
           if k == 2 then p.spacing = 0.5
           elseif k == 3 then p.spacing = {2.0}
           elseif k == 4 then
             p.spacing = {}
             for i = 1, nd do p.spacing[i] = 0.25 * i end
           elseif k == 5 then
             p.coords = {}
             for i = 1, nd do
               local n = shape[p.dim or i]
               local c, v = {}, 0
               for j = 1, n do v = v + G.uniform(0.5, 2) c[j] = v end
               p.coords[i] = c
             end
           end
           if k == 3 and nd ~= 1 then p.spacing = 2.0 end
           cs[#cs + 1] = {a = a, p = p}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       local kw = {edge_order = p.edge_order, dim = p.dim, spacing = p.spacing}
       if p.coords then
         kw.spacing = {}
         for i, c in ipairs(p.coords) do kw.spacing[i] = torch.tensor(c, {dtype = "float64", device = a.device}) end
       end
       return torch.gradient(a, kw)
     end})
