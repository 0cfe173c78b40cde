-- THE op table of the conformance harness: one row per op (or per spelling of an op).
--
-- A row:
--   name    unique; failures are reported under it
--   call    function(a, b, c, p) calling tide; returns a tensor, several values, or a table
--           of tensors (split, chunk). a, b, c are the case's inputs, p its parameters.
--   ref     the NumPy reference: a Python expression with np, the inputs a, b, c (NumPy
--           arrays, lists of arrays, or Python numbers), p (the parameters, p.name) and the
--           helpers of check.py (ax() turns 1-based dims into axes, and so on). Its value, or
--           a tuple/list of values for several outputs, is compared with tide's outputs.
--   out     expected result dtype(s) by PyTorch's rules (see check.py: same, float, bool,
--           promote, truediv, sum, all, p.dtype, a dtype name, py:<expr>; "x,y" for two outputs;
--           numpy: the dtype of the ref computed by NumPy on the inputs as they are, with cast none)
--   cast    what the reference computes in: result (float64, or the integer result dtype,
--           default), common (the promoted dtype of the inputs), exact (the result dtype
--           itself), none (the inputs as they are)
--   tol     {float32 = {rtol, atol}, ...} over check.py's defaults
--   cases   function() -> list of {a=, b=, c=, p=, layouts=}; or gen = "unary"/"binary" with
--           dtypes, domain ("pos", "unit", "small", "div", ... or {a=, b=}), edges=false,
--           scalars ({"int", "float"}: Lua numbers as the second operand), scalar_left
--   expect_error  a string the error message must contain (the row checks failures)
--   device_error  for an op that runs on the CPU only: the error devicecheck.lua expects
--           from its cases on the device
--   npstyle a NumPy spelling: Lua floats with integer tensors give float64 (NumPy's default
--           float) instead of float32; a case may set p.npstyle instead
--
-- The gradient column (gradcheck.lua checks autograd against finite differences):
--   grad        the differentiable inputs, e.g. {"a", "b"}: their floating-point tensors (or
--               the tensors of a list) become float64 leaves; other inputs stay as they are
--   gradgrad    true: second derivatives are checked too
--   grad_domain where differentiable values may lie (as `domain`; default: the row's domain),
--               e.g. "pos" for pow's base; values off it, on kinks or tied are redrawn
--   grad_call   function(a, b, c, p, dtypes) used for the check instead of call (dtypes: the
--               inputs' original dtypes), or "clone": call on a clone of a (in-place ops,
--               which autograd refuses on a leaf)
--   grad_if     function(case) -> whether the case is checked (default: every case with a
--               floating-point tensor among the grad inputs)
--   grad_tol    the relative tolerance (default 1e-5)
--   grad_values "grid": values on the 1/8 grid (exact in every float dtype), with grad_h the
--               finite-difference step (default 1e-6)
local G = ...
local rows = {}

local function add(r)
  if not r.cases then
    if r.gen == "unary" then r.cases = function() return G.unary_cases(r) end
    elseif r.gen == "binary" then r.cases = function() return G.binary_cases(r) end
    else error("row " .. r.name .. " has no cases") end
  end
  r.cast = r.cast or "result"
  if r.grad_call == "clone" then
    local call = r.call
    r.grad_call = function(a, ...) return call(a:clone(), ...) end
  end
  rows[#rows + 1] = r
  return r
end

local unpack = table.unpack

-- f(..., {out = c}) with c a fresh tensor of the plain call's dtype and shape (transposed
-- when it has two dims or more, so the op writes through strides; filled with 3s): checks
-- that f returns c itself and returns c, whose values the row compares with NumPy.
-- Inputs that require grad take the plain call (out= is not differentiable).
-- with_positional_out passes c as the last positional argument instead (NumPy's
-- np.exp(a, out), which the np spellings of the pointwise ops take).
local function call_with_out(positional, f, ...)
  local args = {...}
  for _, v in ipairs(args) do
    if torch.is_tensor(v) and v.requires_grad then return f(...) end
  end
  local r = f(...)
  local s = {}
  for i, d in ipairs(r.shape) do s[i] = d end
  local n = #s
  if n >= 2 then s[n - 1], s[n] = s[n], s[n - 1] end
  local c = torch.full(s, 3, {dtype = r.dtype, device = r.device})
  if n >= 2 then c = c:transpose(-2, -1) end
  args[#args + 1] = positional and c or {out = c}
  local got = f(unpack(args))
  assert(rawequal(got, c), "the out tensor was not returned itself")
  return c
end
local function with_out(f, ...) return call_with_out(false, f, ...) end
local function with_positional_out(f, ...) return call_with_out(true, f, ...) end
-- A module function that must exist (a clear message instead of "attempt to call a nil value").
local function fn_of(mod, modname, name)
  return function(...)
    local f = mod[name]
    if f == nil then error(modname .. "." .. name .. " is missing", 0) end
    return f(...)
  end
end

---------------------------------------------------------------------------------------------
-- Pointwise unary ops (TIDE_UNARY_OPS). Kinds: NUMERIC keeps the dtype and rejects bool (as
-- PyTorch); FLOAT gives the default float for bool/integer inputs; SAME keeps the dtype
-- (floor & co.: PyTorch rejects bool); BOOL gives bool; INTEGRAL: bool and integers.
local UNARY = {
  {"abs", "NUMERIC", "np.abs(a)"},
  {"neg", "NUMERIC", "np.negative(a)"},
  -- sign(NaN) is NaN in NumPy and 0 in PyTorch: no NaN here.
  {"sign", "NUMERIC", "np.sign(a)", edge_list = {math.huge, -math.huge, 0.0, -0.0, 1e-3, -1e-3}},
  {"square", "NUMERIC", "np.square(a)"},
  {"exp", "FLOAT", "np.exp(a)"},
  {"exp2", "FLOAT", "np.exp2(a)"},
  {"log", "FLOAT", "np.log(a)", domain = "pos"},
  {"log2", "FLOAT", "np.log2(a)", domain = "pos"},
  {"log10", "FLOAT", "np.log10(a)", domain = "pos"},
  {"log1p", "FLOAT", "np.log1p(a)", domain = "pos"},
  {"expm1", "FLOAT", "np.expm1(a)"},
  {"sqrt", "FLOAT", "np.sqrt(a)", domain = "pos"},
  {"rsqrt", "FLOAT", "1 / np.sqrt(a)", domain = "pos"},
  {"reciprocal", "FLOAT", "1 / a", domain = "nonzero"},
  {"sin", "FLOAT", "np.sin(a)"},
  {"cos", "FLOAT", "np.cos(a)"},
  {"tan", "FLOAT", "np.tan(a)", domain = "unit"},
  {"asin", "FLOAT", "np.arcsin(a)", domain = "unit"},
  {"acos", "FLOAT", "np.arccos(a)", domain = "unit"},
  {"atan", "FLOAT", "np.arctan(a)"},
  {"sinh", "FLOAT", "np.sinh(a)", domain = "small"},
  {"cosh", "FLOAT", "np.cosh(a)", domain = "small"},
  {"tanh", "FLOAT", "np.tanh(a)"},
  {"sigmoid", "FLOAT", "sigmoid(a)"},
  {"erf", "FLOAT", "erf(a)"},
  {"relu", "NUMERIC", "np.maximum(a, 0)"},
  {"floor", "SAME", "np.floor(a)"},
  {"ceil", "SAME", "np.ceil(a)"},
  {"round", "SAME", "np.round(a)"},
  {"trunc", "SAME", "np.trunc(a)"},
  {"isnan", "BOOL", "np.isnan(a)"},
  {"isinf", "BOOL", "np.isinf(a)"},
  {"isfinite", "BOOL", "np.isfinite(a)"},
  {"logical_not", "BOOL", "np.logical_not(a)"},
  {"bitwise_not", "INTEGRAL", "np.invert(a)"},
}
local UNARY_KIND = {
  NUMERIC = {dtypes = G.NUMERIC, out = "same", cast = "result", grad = {"a"}},
  FLOAT = {dtypes = G.DTYPES, out = "float", cast = "result", grad = {"a"}},
  SAME = {dtypes = G.NUMERIC, out = "same", cast = "result", grad = {"a"}},
  BOOL = {dtypes = G.DTYPES, out = "bool", cast = "none"},
  INTEGRAL = {dtypes = G.INTEGRAL, out = "same", cast = "none"},
}
for _, u in ipairs(UNARY) do
  local name, kind, ref = u[1], UNARY_KIND[u[2]], u[3]
  -- Spellings rotate by case: method, torch.f, torch.f with out=, and for float inputs (where
  -- NumPy's dtype rules agree) np.f with out positional (round's comes after decimals).
  local fn = torch[name]
  local np_out = name == "round" and function(a, c) return np.round(a, 0, c) end or np[name]
  add({name = name, gen = "unary", dtypes = kind.dtypes, out = kind.out, cast = kind.cast, ref = ref,
       domain = u.domain, edges = u.edges, tol = u.tol, grad = kind.grad, gradgrad = kind.grad ~= nil,
       call = function(a)
         local k = a:numel() % 4
         if fn and k == 1 then return fn(a) end
         if k == 2 and a:is_floating_point() then return with_positional_out(np_out, a) end
         if fn and k == 3 then return with_out(fn, a) end
         return a[name](a)
       end})
  if u.edge_list then
    local r = rows[#rows]
    local base = r.cases
    r.cases = function()
      local cs = base()
      local extra = G.make({12}, "float32", {edges = 0.6, edge_list = u.edge_list})
      cs[#cs + 1] = {a = extra, layouts = {a = "contig"}}
      return cs
    end
    r.edges = false
  end
end

-- In-place spellings of the unary ops, on views (writes through strides); in the input's
-- dtype (u.dtypes, floats by default), so a bool result lands as 0/1. No gradient for those
-- with u.nograd (predicates, or not in the gradient column).
for _, u in ipairs({{"exp_", "np.exp(a)", "pos"}, {"neg_", "np.negative(a)"}, {"sqrt_", "np.sqrt(a)", "pos"},
                    {"floor_", "np.floor(a)"}, {"sigmoid_", "sigmoid(a)"}, {"abs_", "np.abs(a)"},
                    {"acos_", "np.arccos(a)", "unit"}, {"asin_", "np.arcsin(a)", "unit"}, {"atan_", "np.arctan(a)"},
                    {"cos_", "np.cos(a)"}, {"sin_", "np.sin(a)"}, {"tan_", "np.tan(a)", "unit"},
                    {"cosh_", "np.cosh(a)", "small"}, {"sinh_", "np.sinh(a)", "small"}, {"tanh_", "np.tanh(a)"},
                    {"erf_", "erf(a)"}, {"exp2_", "np.exp2(a)"}, {"expm1_", "np.expm1(a)"},
                    {"log_", "np.log(a)", "pos"}, {"log2_", "np.log2(a)", "pos"}, {"log10_", "np.log10(a)", "pos"},
                    {"log1p_", "np.log1p(a)", "pos"}, {"rsqrt_", "1 / np.sqrt(a)", "pos"},
                    {"reciprocal_", "1 / a", "nonzero"}, {"square_", "np.square(a)"},
                    {"sign_", "np.sign(a)", "nonzero"}, {"ceil_", "np.ceil(a)"}, {"trunc_", "np.trunc(a)"},
                    {"isnan_", "np.isnan(a)", nograd = true}, {"isinf_", "np.isinf(a)", nograd = true},
                    {"isfinite_", "np.isfinite(a)", nograd = true}, {"logical_not_", "np.logical_not(a)", nograd = true},
                    {"bitwise_not_", "np.invert(a)", dtypes = G.INTEGRAL, nograd = true}}) do
  local name = u[1]
  local dtypes = u.dtypes or G.FLOATS
  add({name = name, gen = "unary", dtypes = dtypes, out = "same", ref = u[2], domain = u[3], per_dtype = 3,
       cast = u.dtypes and "none" or nil, grad = not u.nograd and {"a"} or nil, grad_call = "clone",
       call = function(a) local r = a[name](a); assert(rawequal(r, a), name .. " did not return x itself"); return a end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(dtypes) do
           for _, lay in ipairs({"contig", "T", "step", "offset"}) do
             local a, l = G.view(G.shape({min_rank = 1, max_rank = 3}), dt, lay, {dom = u[3]})
             cs[#cs + 1] = {a = a, layouts = {a = l}}
           end
         end
         return cs
       end})
end

---------------------------------------------------------------------------------------------
-- Pointwise binary ops (TIDE_BINARY_OPS).
local NO_BOOL = G.NUMERIC
-- grad: differentiable (gradgrad: twice); grad_domain: values for the gradient check.
local POW_GRAD = {a = "pos", b = "exp"}   -- a negative base has no real power
local BINARY = {
  {"add", "a + b", dtypes = G.DTYPES, out = "promote", grad = true},
  {"sub", "a - b", dtypes = NO_BOOL, out = "promote", grad = true},
  {"mul", "a * b", dtypes = G.DTYPES, out = "promote", grad = true, gradgrad = true},
  {"div", "a / b", dtypes = G.DTYPES, out = "truediv", grad = true, gradgrad = true, grad_domain = {b = "nonzero"}},
  {"floor_divide", "np.floor_divide(a, b)", dtypes = NO_BOOL, out = "promote", cast = "exact", domain = "div", grad = true},
  {"remainder", "np.remainder(a, b)", dtypes = NO_BOOL, out = "promote", cast = "exact", domain = "div", grad = true},
  {"fmod", "np.fmod(a, b)", dtypes = NO_BOOL, out = "promote", cast = "exact", domain = "div", grad = true},
  {"pow", "np.power(a, b)", dtypes = NO_BOOL, out = "promote", domain = {a = "small", b = "exp"}, grad = true,
   gradgrad = true, grad_domain = POW_GRAD},
  {"maximum", "np.maximum(a, b)", dtypes = G.DTYPES, out = "promote", scalars = {}, grad = true},
  {"minimum", "np.minimum(a, b)", dtypes = G.DTYPES, out = "promote", scalars = {}, grad = true},
  {"atan2", "np.arctan2(a, b)", dtypes = G.DTYPES, out = "truediv", scalars = {}, grad = true, gradgrad = true,
   grad_domain = "nonzero"},
  {"copysign", "np.copysign(a, b)", dtypes = G.DTYPES, out = "truediv", scalars = {}, grad = true},
  {"eq", "a == b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"ne", "a != b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"lt", "a < b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"le", "a <= b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"gt", "a > b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"ge", "a >= b", dtypes = G.DTYPES, out = "bool", cast = "common", domain = "small"},
  {"logical_and", "np.logical_and(a, b)", dtypes = G.DTYPES, out = "bool", cast = "none", scalars = {}},
  {"logical_or", "np.logical_or(a, b)", dtypes = G.DTYPES, out = "bool", cast = "none", scalars = {}},
  {"logical_xor", "np.logical_xor(a, b)", dtypes = G.DTYPES, out = "bool", cast = "none", scalars = {}},
  {"bitwise_and", "np.bitwise_and(a, b)", dtypes = G.INTEGRAL, out = "promote", scalars = {"int"}},
  {"bitwise_or", "np.bitwise_or(a, b)", dtypes = G.INTEGRAL, out = "promote", scalars = {"int"}},
  {"bitwise_xor", "np.bitwise_xor(a, b)", dtypes = G.INTEGRAL, out = "promote", scalars = {"int"}},
}
for _, bspec in ipairs(BINARY) do
  local name = bspec[1]
  local fn = torch[name]
  add({name = name, gen = "binary", ref = bspec[2], dtypes = bspec.dtypes, out = bspec.out,
       cast = bspec.cast, domain = bspec.domain, scalars = bspec.scalars,
       grad = bspec.grad and {"a", "b"}, gradgrad = bspec.gradgrad, grad_domain = bspec.grad_domain,
       call = function(a, b)
         if not torch.is_tensor(a) then return fn(a, b) end
         local k = a:numel() % 4
         if fn and k == 0 then return fn(a, b) end
         if fn and k == 2 then return with_out(fn, a, b) end
         -- np.f with out positional, for float operands (where NumPy's dtype rules agree)
         if k == 3 and a:is_floating_point() and (not torch.is_tensor(b) or b:is_floating_point()) then
           return with_positional_out(np[name], a, b)
         end
         return a[name](a, b)
       end})
end

-- In-place spellings of binary ops, on views (writes through strides): x:f_(y) in x's dtype,
-- so a bool result lands as 0/1; y of x's shape and dtype.
for _, o in ipairs({{"atan2_", "np.arctan2(a, b)"}, {"minimum_", "np.minimum(a, b)"},
                    {"eq_", "a == b", "small"}, {"ne_", "a != b", "small"}, {"lt_", "a < b", "small"},
                    {"le_", "a <= b", "small"}, {"gt_", "a > b", "small"}, {"ge_", "a >= b", "small"},
                    {"logical_and_", "np.logical_and(a, b)", "small"}, {"logical_or_", "np.logical_or(a, b)", "small"},
                    {"logical_xor_", "np.logical_xor(a, b)", "small"},
                    {"bitwise_and_", "np.bitwise_and(a, b)", ints = true}, {"bitwise_or_", "np.bitwise_or(a, b)", ints = true},
                    {"bitwise_xor_", "np.bitwise_xor(a, b)", ints = true}}) do
  local name = o[1]
  local dtypes = o.ints and G.INTEGRAL or G.FLOATS
  add({name = name, ref = o[2], out = "same", cast = o.ints and "none" or nil,
       call = function(a, b) local r = a[name](a, b); assert(rawequal(r, a), name .. " did not return x itself"); return a end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(dtypes) do
           for _, lay in ipairs({"contig", "T", "step", "offset"}) do
             local shape = G.shape({min_rank = 1, max_rank = 3})
             local a, l = G.view(shape, dt, lay, {dom = o[3]})
             cs[#cs + 1] = {a = a, b = G.make(shape, dt, {dom = o[3]}), layouts = {a = l}}
           end
         end
         return cs
       end})
end

-- Lua operators, with a Lua number on either side.
local OPERATORS = {
  {"op +", function(a, b) return a + b end, "a + b", G.DTYPES, "promote", grad = true},
  {"op -", function(a, b) return a - b end, "a - b", NO_BOOL, "promote", grad = true},
  {"op *", function(a, b) return a * b end, "a * b", G.DTYPES, "promote", grad = true},
  {"op /", function(a, b) return a / b end, "a / b", G.DTYPES, "truediv", grad = true, grad_domain = {b = "nonzero"}},
  {"op ^", function(a, b) return a ^ b end, "np.power(a, b)", NO_BOOL, "promote", domain = {a = "small", b = "exp"},
   grad = true, grad_domain = POW_GRAD},
  {"op //", function(a, b) return a // b end, "np.floor_divide(a, b)", NO_BOOL, "promote", cast = "exact", domain = "div",
   grad = true},
  {"op %", function(a, b) return a % b end, "np.remainder(a, b)", NO_BOOL, "promote", cast = "exact", domain = "div",
   grad = true},
  {"op &", function(a, b) return a & b end, "np.bitwise_and(a, b)", G.INTEGRAL, "promote", scalars = {"int"}},
  {"op |", function(a, b) return a | b end, "np.bitwise_or(a, b)", G.INTEGRAL, "promote", scalars = {"int"}},
  {"op ~", function(a, b) return a ~ b end, "np.bitwise_xor(a, b)", G.INTEGRAL, "promote", scalars = {"int"}},
}
for _, o in ipairs(OPERATORS) do
  add({name = o[1], gen = "binary", call = o[2], ref = o[3], dtypes = o[4], out = o[5], cast = o.cast,
       domain = o.domain, scalars = o.scalars, scalar_left = true, per_dtype = 4,
       grad = o.grad and {"a", "b"}, grad_domain = o.grad_domain})
end
add({name = "op unary -", gen = "unary", dtypes = G.NUMERIC, out = "same", ref = "np.negative(a)",
     call = function(a) return -a end, per_dtype = 2, grad = {"a"}})
add({name = "op unary ~", gen = "unary", dtypes = G.INTEGRAL, out = "same", cast = "none", ref = "np.invert(a)",
     call = function(a) return ~a end, per_dtype = 2})

-- Type promotion: every pair of dtypes, 0-dim tensors against n-dim ones, Lua numbers.
add({name = "promotion add", out = "promote", ref = "a + b", grad = {"a", "b"},
     call = function(a, b) return torch.add(a, b) end,
     cases = function()
       local cs = {}
       for _, da in ipairs(G.DTYPES) do
         for _, db in ipairs(G.DTYPES) do
           local sa, sb = {3}, {2, 3}
           local r = math.random()
           if r < 0.25 then sa = {} elseif r < 0.5 then sb = {} end
           cs[#cs + 1] = {a = G.make(sa, da, {dom = "small"}), b = G.make(sb, db, {dom = "small"})}
         end
         for _, sc in ipairs({2, -1, 0.5, 1.75}) do
           cs[#cs + 1] = {a = G.make({4}, da, {dom = "small"}), b = sc}
         end
       end
       return cs
     end})

-- In-place binary ops and out=: the result keeps the first operand's dtype.
for _, ip in ipairs({{"add_", "a + b"}, {"sub_", "a - b"}, {"mul_", "a * b"}, {"div_", "a / b"}}) do
  local name = ip[1]
  add({name = name, out = "same", ref = ip[2], grad = {"a", "b"}, grad_call = "clone",
       grad_domain = name == "div_" and {b = "nonzero"} or nil,
       call = function(a, b) a[name](a, b); return a end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(G.FLOATS) do
           for _, lay in ipairs({"contig", "T", "step", "offset"}) do
             local s = G.shape({min_rank = 1, max_rank = 3})
             local a, l = G.view(s, dt, lay, {})
             local sb = G.copy(s)
             if math.random() < 0.5 then sb[#sb] = 1 end
             local db = G.pick({dt, "float32", "int64", "int8", "bool"})
             cs[#cs + 1] = {a = a, b = G.make(sb, db, {dom = "nonzero"}), layouts = {a = l}}
           end
           cs[#cs + 1] = {a = G.make({5}, dt), b = 2.5}
         end
         for _, dt in ipairs({"int32", "int64", "int16"}) do
           if name ~= "div_" then
             cs[#cs + 1] = {a = G.view({4, 3}, dt, "T", {dom = "mid"}), b = G.make({3}, "int8", {dom = "mid"}), layouts = {a = "T"}}
             cs[#cs + 1] = {a = G.make({4}, dt, {dom = "mid"}), b = 3}
           end
         end
         return cs
       end})
end
add({name = "out=", out = "same", ref = "a + b",
     call = function(a, b, c) np.add(a, b, {out = c}); return c end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64", "int32"}) do
         for _, lay in ipairs({"contig", "T", "step"}) do
           local s = G.shape({min_rank = 2, max_rank = 3})
           local c, l = G.view(s, dt, lay, {})
           cs[#cs + 1] = {a = G.make(s, dt, {dom = "mid"}), b = G.make({s[#s]}, dt, {dom = "mid"}), c = c,
                          layouts = {c = l}}
         end
       end
       return cs
     end})
-- The dtype of out= is the one the result has; "same" means a's dtype: here all equal.

---------------------------------------------------------------------------------------------
-- clamp / clip, where, lerp.
local function clamp_cases()
  local cs = {}
  for di, dt in ipairs(G.NUMERIC) do
    for j = 1, G.count(5) do
      local s = G.shape({max_rank = 3})
      local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "small", edges = 0.1})
      local lo, hi
      if j == 1 then lo, hi = -1, 2
      elseif j == 2 then lo, hi = 0.5, nil
      elseif j == 3 then lo, hi = nil, 1
      elseif j == 4 then
        local sb = #s > 0 and {s[#s]} or {}
        lo = G.make(sb, dt, {dom = "small"})
        hi = G.make(sb, G.pick({dt, "float32"}), {dom = "small"}) + 1
      else lo, hi = 2, -1 end   -- min > max: everything becomes max
      if G.is_float(dt) and j == 1 then lo, hi = -1.5, 0.25 end
      if dt == "uint8" and j == 1 then lo, hi = 1, 2 end
      if dt == "uint8" and j == 5 then lo, hi = 3, 1 end
      local form = (di + j) % 4
      -- In NumPy spelling a negative Lua number next to an unsigned array casts by value
      -- (uint16 with -1 is int32, as NumPy); the reference here follows PyTorch's dtype.
      if form == 3 and dt:match("^uint") then
        if type(lo) == "number" and lo < 0 then lo = 0 end
        if type(hi) == "number" and hi < 0 then hi = 0 end
      end
      cs[#cs + 1] = {a = a, b = lo, c = hi, layouts = {a = l}, p = {form = form, npstyle = form == 3 or nil}}
    end
  end
  return cs
end
add({name = "clamp", out = "promote", ref = "clamp_ref(a, b, c)", cases = clamp_cases, grad = {"a", "b", "c"},
     call = function(a, lo, hi, p)
       if p.form == 0 then return a:clamp(lo, hi) end
       if p.form == 1 then return a:clamp({min = lo, max = hi}) end
       if p.form == 2 then return torch.clamp(a, lo, hi) end
       return np.clip(a, lo, hi)
     end})
add({name = "clamp_", out = "same", ref = "clamp_ref(a, b, c)", grad = {"a"}, grad_call = "clone",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "float16", "int64", "int32"}) do
         for _, lay in ipairs({"contig", "T", "step"}) do
           local a, l = G.view(G.shape({min_rank = 1, max_rank = 3}), dt, lay, {dom = "small"})
           cs[#cs + 1] = {a = a, b = -1, c = 1, layouts = {a = l}}
         end
       end
       return cs
     end,
     call = function(a, lo, hi) a:clamp_(lo, hi); return a end})

-- x ^ e for the exponents with their own kernels (2, 3, 0.5, -1, -2) and -0.5, which has
-- none (1/sqrt differs from pow at -inf and -0): every float dtype and layout, with zeros,
-- NaN, infinities and negative bases among the values.
add({name = "pow (fast exponents)", out = "same", ref = "np.power(a, p.e)", grad = {"a"},
     call = function(a, _, _, p) return a ^ p.e end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.FLOATS) do
         for _, e in ipairs({2, 3, 0.5, -1, -2, -0.5}) do
           local a, l = G.view(G.shape({zero = 0.05}), dt, G.pick(G.LAYOUTS), {edges = 0.2})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {e = e}}
         end
       end
       return cs
     end})

add({name = "where", out = "promote_bc", ref = "np.where(a, np.asarray(b), np.asarray(c))", cast = "none",
     grad = {"b", "c"},
     call = function(cond, x, y, p)
       if p.form == 1 then return torch.where(cond, x, y) end
       if p.form == 2 then return np.where(cond, x, y) end
       return cond:where(x, y)
     end,
     cases = function()
       local cs = {}
       for di, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(3) do
           local sa, sb = G.broadcast_pair({max_rank = 3})
           local cond, lc = G.view(sa, "bool", G.pick(G.LAYOUTS))
           local x, lx = G.view(sb, dt, G.pick(G.LAYOUTS), {edges = 0.1})
           local y
           if j == 2 then y = G.pick({0, 1.5, -2}) else y = G.make(j == 3 and {} or sb, G.pick({dt, dt, "float32", "int64"})) end
           local form = (di + j) % 3
           if form == 2 and dt:match("^uint") and y == -2 then y = 2 end  -- as in clamp's cases
           cs[#cs + 1] = {a = cond, b = x, c = y, layouts = {a = lc, b = lx}, p = {form = form, npstyle = form == 2 or nil}}
         end
       end
       return cs
     end})

add({name = "lerp", out = "same", ref = "a + c * (b - a)", grad = {"a", "b", "c"},
     tol = {float32 = {1e-5, 1e-5}, float16 = {2e-3, 2e-3}, bfloat16 = {1.6e-2, 1.6e-2}},
     call = function(a, b, w) return a:lerp(b, w) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.FLOATS) do
         for j = 1, G.count(4) do
           local sa, sb = G.broadcast_pair({max_rank = 3})
           local a, la = G.view(sa, dt, G.pick(G.LAYOUTS))
           local b, lb = G.view(sb, dt, G.pick(G.LAYOUTS))
           local w = G.pick({0.25, 0.75, 0.5, 1.5})
           if j == 2 then w = G.make(sb, dt, {dom = "prob"}) end
           cs[#cs + 1] = {a = a, b = b, c = w, layouts = {a = la, b = lb}}
         end
       end
       return cs
     end})

---------------------------------------------------------------------------------------------
-- Casts between every pair of dtypes. Float -> integer only with values the target holds
-- (truncation toward zero); integer -> narrower integer wraps; NaN/inf only into floats/bool.
local INT_LIMIT = {uint8 = {0, 255}, int8 = {-128, 127}, int16 = {-32768, 32767},
                   int32 = {-2147483648, 2147483647}, int64 = {-2 ^ 53, 2 ^ 53},
                   uint16 = {0, 65535}, uint32 = {0, 4294967295}, uint64 = {0, 2 ^ 53}}
local function cast_values(src, dst)
  return function()
    local v = {}
    local i = 1
    if src == "bool" then v[i] = math.random() < 0.5
    elseif G.is_float(src) then
      if G.is_float(dst) or dst == "bool" then
        v[i] = G.value(src, nil, 0.3)
      else
        local lo, hi = INT_LIMIT[dst][1] + 1, INT_LIMIT[dst][2] - 1
        if src == "float16" then lo, hi = math.max(lo, -2000), math.min(hi, 2000) end
        if src == "bfloat16" then lo, hi = math.max(lo, -200), math.min(hi, 200) end
        if lo < -1e6 then lo, hi = -1e6, 1e6 end
        local x = G.uniform(lo, hi)
        if math.random() < 0.2 then x = G.pick({0.0, -0.0, 0.5, -0.5, 0.99, -0.99}) end
        if lo == 0 then x = math.abs(x) end
        v[i] = x
      end
    else
      v[i] = G.value(src)
      if math.random() < 0.2 then v[i] = G.pick({0, 1, INT_LIMIT[src][1] // 1 | 0, (INT_LIMIT[src][2] // 1) | 0}) end
      if src == "int64" and math.random() < 0.2 then v[i] = G.pick({4611686018427387904, -123456789012345, 2 ^ 40 | 0}) end
    end
    return v[1]
  end
end
local CONVERT = {float32 = "float", float64 = "double", float16 = "half", bfloat16 = "bfloat16",
                 int64 = "long", int32 = "int", int16 = "short", uint8 = "byte", int8 = "char", bool = "bool"}
-- x:to(p.dtype) in its spellings, by p.form (form 2, the conversion method, falls back to
-- x:to for the dtypes without one: uint16, uint32, uint64).
local function cast_call(a, _, _, p)
  if p.form == 0 then return a:to(p.dtype) end
  if p.form == 1 then return a:astype(p.dtype) end
  if p.form == 2 and CONVERT[p.dtype] then return a[CONVERT[p.dtype]](a) end
  if p.form == 3 then return a:type(p.dtype) end
  return a:to({dtype = p.dtype})
end
-- The gradient check of casts between float dtypes: float64 leaf -> source dtype -> target
-- dtype, on values of the 1/8 grid with a step of 1/8 (exact in every float dtype).
add({name = "cast", out = "p.dtype", cast = "none", ref = "a.astype(npdt(p.dtype))", call = cast_call,
     grad = {"a"}, grad_values = "grid", grad_h = 0.125,
     grad_if = function(case) return G.is_float(case.p.dtype) end,
     grad_call = function(a, b, c, p, dtypes) return cast_call(a:to(dtypes.a), b, c, p) end,
     cases = function()
       local cs = {}
       for i, src in ipairs(G.DTYPES) do
         for j, dst in ipairs(G.DTYPES) do
           local s = G.shape({max_rank = 3, max_numel = 60})
           local lay = G.LAYOUTS[(i + j) % #G.LAYOUTS + 1]
           local a, l = G.view(s, src, lay, {fn = cast_values(src, dst)})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {dtype = dst, form = (i * 3 + j) % 5}}
         end
       end
       return cs
     end})
add({name = "copy_", out = "same", cast = "none", ref = "np.broadcast_to(b, a.shape).astype(a.dtype)",
     grad = {"a", "b"}, grad_call = "clone", grad_if = function(case) return G.is_float(case.a.dtype) end,
     call = function(a, b) a:copy_(b); return a end,
     cases = function()
       local cs = {}
       for i, dst in ipairs(G.DTYPES) do
         for j = 1, G.count(3) do
           local src = G.pick(G.DTYPES)
           local s = G.shape({min_rank = 1, max_rank = 3})
           local a, l = G.view(s, dst, G.pick({"contig", "T", "step", "offset"}))
           local sb = G.copy(s)
           if j == 2 then sb = {s[#s]} elseif j == 3 then sb = {} end
           cs[#cs + 1] = {a = a, b = G.make(sb, src, {dom = "castable"}), layouts = {a = l}}
         end
       end
       return cs
     end})
add({name = "clone", out = "same", cast = "none", ref = "a", grad = {"a"},
     call = function(a, _, _, p) if p.np then return np.copy(a) end return a:clone() end,
     cases = function()
       local cs = {}
       for i, dt in ipairs(G.DTYPES) do
         for _, lay in ipairs(G.LAYOUTS) do
           local a, l = G.view(G.shape({max_rank = 4}), dt, lay, {edges = 0.1})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {np = i % 2 == 0}}
         end
       end
       return cs
     end})
add({name = "contiguous", out = "same", cast = "none", ref = "a", grad = {"a"},
     call = function(a)
       local r = a:contiguous()
       assert(r:is_contiguous(), "contiguous() returned a tensor that is not contiguous")
       return r
     end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "int64", "bool", "float16", "int8"}) do
         for _, lay in ipairs(G.LAYOUTS) do
           local a, l = G.view(G.shape({min_rank = 2, max_rank = 4}), dt, lay)
           cs[#cs + 1] = {a = a, layouts = {a = l}}
         end
       end
       return cs
     end})
add({name = "fill_", out = "same", cast = "none", ref = "np.full(a.shape, b).astype(a.dtype)",
     grad = {"a"}, grad_call = "clone",
     call = function(a, b) a:fill_(b); return a end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local a, l = G.view(G.shape({max_rank = 3}), dt, G.pick({"contig", "T", "step", "offset"}))
         cs[#cs + 1] = {a = a, b = dt == "bool" and true or 7, layouts = {a = l}}
         if G.is_float(dt) then cs[#cs + 1] = {a = G.make({3, 2}, dt), b = -2.5} end
       end
       return cs
     end})
add({name = "zero_", out = "same", cast = "none", ref = "np.zeros_like(a)", grad = {"a"}, grad_call = "clone",
     call = function(a) a:zero_(); return a end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local a, l = G.view(G.shape({max_rank = 3}), dt, G.pick({"contig", "T", "step", "offset"}))
         cs[#cs + 1] = {a = a, layouts = {a = l}}
       end
       return cs
     end})

---------------------------------------------------------------------------------------------
-- Reductions. A case's p: dim (nil, a 1-based dim, negative, or a table), keepdim, form
-- (0: positional, 1: keyword table, 2: np.f with axis/keepdims).
local RED_EDGES = {0 / 0, math.huge, -math.huge, 0.0, -0.0}
local function reduce_cases(o)
  return function()
    local cs = {}
    local dts = o.dtypes or G.DTYPES
    for di, dt in ipairs(dts) do
      for j = 1, G.count(o.per_dtype or 5) do
        local s = G.shape({min_rank = o.min_rank or 0, max_rank = o.max_rank or 4, max_numel = o.max_numel or 240,
                           zero = (o.empty and j == 4) and 0.5 or nil})
        local r = #s
        local dim
        if (j == 1 and not o.need_dim) or r == 0 then dim = nil
        elseif o.multi and j == 3 and r >= 2 then
          local d1 = math.random(1, r)
          local d2 = (d1 % r) + 1
          dim = {d1, -(r - d2 + 1)}
        else
          dim = math.random(1, r)
          if math.random() < 0.3 then dim = dim - r - 1 end
        end
        if o.need_dim and dim == nil then dim = 1; if r == 0 then s = {3}; r = 1 end end
        local edges = (G.is_float(dt) and j == 5 and o.edges ~= false) and 0.3 or nil
        if o.no_empty then
          for i = 1, #s do if s[i] == 0 then s[i] = 2 end end
        end
        local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = o.domain, edges = edges, edge_list = RED_EDGES})
        cs[#cs + 1] = {a = a, layouts = {a = l},
                       p = {dim = dim, keepdim = (j + di) % 2 == 0, form = (j + di) % 3,
                            extra = o.extra and o.extra(j, dt) or nil}}
      end
    end
    return cs
  end
end
-- Calls x:name(dim, keepdim) / x:name{dim=, keepdim=} / np.name(x, {axis=, keepdims=}).
local function red_call(name, o)
  o = o or {}
  return function(a, _, _, p)
    local form = p.form
    if o.no_np and form == 2 then form = 0 end
    if o.no_kw and form == 1 then form = 0 end
    if p.dim == nil then
      if form == 2 then return np[name](a) end
      return a[name](a)
    end
    if form == 0 then return a[name](a, p.dim, p.keepdim) end
    if form == 1 then return a[name](a, {dim = p.dim, keepdim = p.keepdim}) end
    return np[name](a, {axis = p.dim, keepdims = p.keepdim})
  end
end
local AX = "axis=ax(p.dim, a), keepdims=bool(p.keepdim) and p.dim is not None"
local RTOL = {float16 = {4e-3, 1e-3}, bfloat16 = {1.6e-2, 1e-2}, float32 = {1e-5, 1e-5}, float64 = {1e-12, 1e-12}}

add({name = "sum", out = "sum", ref = "np.sum(a, " .. AX .. ")", tol = RTOL, grad = {"a"}, gradgrad = true,
     cases = reduce_cases({multi = true, empty = true}), call = red_call("sum")})
add({name = "prod", out = "sum", ref = "np.prod(a, " .. AX .. ")", tol = RTOL, grad = {"a"},
     cases = reduce_cases({domain = "small", max_numel = 24, empty = true}), call = red_call("prod")})
add({name = "mean", out = "same", ref = "np.mean(a, " .. AX .. ")", tol = RTOL, grad = {"a"}, gradgrad = true,
     cases = reduce_cases({dtypes = G.FLOATS, multi = true, empty = true}), call = red_call("mean")})
add({name = "amax", out = "same", ref = "np.max(a, " .. AX .. ")", grad = {"a"},
     cases = reduce_cases({multi = true, no_empty = true}), call = red_call("amax", {no_np = true})})
add({name = "amin", out = "same", ref = "np.min(a, " .. AX .. ")", grad = {"a"},
     cases = reduce_cases({multi = true, no_empty = true}), call = red_call("amin", {no_np = true})})
-- torch's max/min: all -> a 0-dim tensor; with a dim -> values and 1-based indices.
for _, mm in ipairs({{"max", "np.max", "np.argmax"}, {"min", "np.min", "np.argmin"}}) do
  local name = mm[1]
  add({name = name .. "(dim)", out = "same,int64", ref = "(" .. mm[2] .. "(a, " .. AX .. "), argk(" .. mm[3] .. ", a, p.dim, p.keepdim) + 1)",
       cases = reduce_cases({need_dim = true, no_empty = true}), grad = {"a"},
       call = function(a, _, _, p)
         if p.form == 1 then return a[name](a, {dim = p.dim, keepdim = p.keepdim}) end
         return a[name](a, p.dim, p.keepdim)
       end})
  add({name = name, out = "same", ref = mm[2] .. "(a)", cases = reduce_cases({no_empty = true, per_dtype = 2}), grad = {"a"},
       call = function(a, _, _, p) if p.form == 2 then return torch[name](a) end return a[name](a) end})
  add({name = "np." .. name, out = "same", ref = mm[2] .. "(a, " .. AX .. ")", grad = {"a"},
       cases = reduce_cases({no_empty = true, per_dtype = 3, need_dim = true}),
       call = function(a, _, _, p) return np[name](a, {axis = p.dim, keepdims = p.keepdim}) end})
end
for _, am in ipairs({{"argmax", "np.argmax"}, {"argmin", "np.argmin"}}) do
  add({name = am[1], out = "int64", cast = "none", ref = "argk(" .. am[2] .. ", a, p.dim, p.keepdim) + 1",
       cases = reduce_cases({dtypes = G.NUMERIC, no_empty = true}), call = red_call(am[1])})
end
-- Whether a reduction case reduces groups of more than one element (the std of one element
-- is 0 whatever it is: a kink, where the gradient is NaN as in PyTorch).
local function reduces_several(case)
  local dims, shape, n = case.p.dim, case.a.shape, 1
  if dims == nil then return case.a:numel() > 1 end
  if type(dims) ~= "table" then dims = {dims} end
  for _, d in ipairs(dims) do n = n * shape[d > 0 and d or #shape + 1 + d] end
  return n > 1
end
for _, sv in ipairs({"std", "var"}) do
  add({name = sv, out = "same", ref = "np." .. sv .. "(a, " .. AX .. ", ddof=1 if p.extra is None else p.extra)",
       tol = RTOL, grad = {"a"}, grad_if = sv == "std" and reduces_several or nil,
       cases = reduce_cases({dtypes = G.FLOATS, multi = true, per_dtype = 6,
                             extra = function(j) return j == 6 and 0 or nil end}),
       call = function(a, _, _, p)
         if p.extra then
           if p.dim == nil then return a[sv](a, {correction = p.extra}) end
           return a[sv](a, {dim = p.dim, keepdim = p.keepdim, correction = p.extra})
         end
         if p.dim == nil then return a[sv](a) end
         if p.form == 1 then return a[sv](a, {dim = p.dim, keepdim = p.keepdim}) end
         return a[sv](a, p.dim, true, p.keepdim)
       end})
  add({name = "np." .. sv, out = "same", ref = "np." .. sv .. "(a, " .. AX .. ")", tol = RTOL, grad = {"a"},
       grad_if = sv == "std" and reduces_several or nil,
       cases = reduce_cases({dtypes = {"float32", "float64"}, multi = true, per_dtype = 4}),
       call = function(a, _, _, p)
         if p.dim == nil then return np[sv](a) end
         return np[sv](a, {axis = p.dim, keepdims = p.keepdim})
       end})
end
add({name = "norm", out = "same", ref = "vnorm(a, p.extra, ax(p.dim, a), bool(p.keepdim) and p.dim is not None)", tol = RTOL,
     grad = {"a"},
     cases = reduce_cases({dtypes = G.FLOATS, per_dtype = 6, multi = true, edges = false,
                           extra = function(j) return ({2, 1, math.huge, 3, 2, 1})[j] end}),
     call = function(a, _, _, p)
       if p.dim == nil then
         if p.extra == 2 and p.form == 0 then return a:norm() end
         return a:norm(p.extra)
       end
       return a:norm(p.extra, p.dim, p.keepdim)
     end})
for _, aa in ipairs({"all", "any"}) do
  add({name = aa, out = "all", cast = "none", ref = "np." .. aa .. "(a, " .. AX .. ")",
       cases = reduce_cases({domain = "prob", empty = true}), call = red_call(aa, {no_np = true})})
  add({name = "np." .. aa, out = "bool", cast = "none", ref = "np." .. aa .. "(a, " .. AX .. ")",
       cases = reduce_cases({domain = "prob", per_dtype = 2}),
       call = function(a, _, _, p)
         if p.dim == nil then return np[aa](a) end
         return np[aa](a, {axis = p.dim, keepdims = p.keepdim})
       end})
end
add({name = "logsumexp", out = "float", ref = "lse(a, ax(p.dim, a), bool(p.keepdim))", tol = RTOL, grad = {"a"},
     cases = reduce_cases({dtypes = {"float16", "bfloat16", "float32", "float64", "int64", "int32"}, need_dim = true,
                           multi = true, domain = "small", no_empty = true}),
     call = function(a, _, _, p)
       if p.form == 1 then return a:logsumexp({dim = p.dim, keepdim = p.keepdim}) end
       return a:logsumexp(p.dim, p.keepdim)
     end})
for _, cs_ in ipairs({{"cumsum", "np.cumsum"}, {"cumprod", "np.cumprod"}}) do
  local name = cs_[1]
  add({name = name, out = "sum", ref = cs_[2] .. "(a, axis=ax(p.dim, a))", tol = RTOL, grad = {"a"},
       cases = reduce_cases({need_dim = true, min_rank = 1, domain = name == "cumprod" and "small" or nil,
                             max_numel = name == "cumprod" and 40 or nil, empty = true, edges = false}),
       call = function(a, _, _, p)
         if p.form == 2 then return np[name](a, {axis = p.dim}) end
         return a[name](a, p.dim)
       end})
end
add({name = "sort", out = "same,int64", cast = "none", ref = "sort_ref(a, p.dim, p.keepdim)", grad = {"a"},
     cases = reduce_cases({need_dim = true, min_rank = 1, per_dtype = 4}),
     call = function(a, _, _, p) return a:sort(p.dim, p.keepdim) end})  -- keepdim slot = descending
add({name = "argsort", out = "int64", cast = "none", ref = "sort_ref(a, p.dim, p.keepdim)[1]",
     cases = reduce_cases({need_dim = true, min_rank = 1, per_dtype = 3, dtypes = G.NUMERIC}),
     call = function(a, _, _, p) return a:argsort(p.dim, p.keepdim) end})
add({name = "topk", out = "same,int64", cast = "none", ref = "topk_ref(a, p.extra, p.dim, p.keepdim)", grad = {"a"},
     cases = reduce_cases({need_dim = true, min_rank = 1, per_dtype = 3, no_empty = true, edges = false,
                           dtypes = {"float32", "float64", "int32", "int64"}, extra = function() return 0 end}),
     call = function(a, _, _, p)
       local k = math.min(2, a:size(p.dim))
       p.extra = k
       return a:topk(k, p.dim, p.keepdim)
     end})

---------------------------------------------------------------------------------------------
-- Linear algebra. Operands come contiguous, transposed (x:t() of a contiguous tensor),
-- stepped, offset or expanded (stride 0).
local LA_DIMS = {1, 2, 3, 5, 8, 17, 33}
local LTOL = {float32 = {1e-4, 1e-4}, float64 = {1e-10, 1e-10}, float16 = {4e-3, 2e-2}, bfloat16 = {3e-2, 1e-1}}
local function mat(shape, dt, p_)
  local lay = G.pick(G.LAYOUTS)
  if p_ then lay = p_ end
  local dom = (dt == "int64" or dt == "int32") and "small" or nil
  return G.view(shape, dt, lay, {dom = dom})
end
local function la_cases(make_shapes, dtypes, n)
  return function()
    local cs = {}
    for _, dt in ipairs(dtypes) do
      for j = 1, G.count(n) do
        local shapes, extra = make_shapes(j)
        local c = {layouts = {}, p = extra or {np = j % 2 == 0}}
        for i, nm in ipairs({"a", "b", "c"}) do
          if shapes[i] then c[nm], c.layouts[nm] = mat(shapes[i], dt) end
        end
        cs[#cs + 1] = c
      end
    end
    return cs
  end
end
local MAIN = {"float32", "float64"}
local function d() return G.pick(LA_DIMS) end
add({name = "mm", out = "same", ref = "a @ b", tol = LTOL, grad = {"a", "b"}, gradgrad = true,
     cases = la_cases(function(j)
       local n, k, m = d(), d(), d()
       if j == 5 then k = 0 end
       return {{n, k}, {k, m}}
     end, MAIN, 8),
     call = function(a, b) return a:mm(b) end})
add({name = "mm (other dtypes)", out = "same", ref = "a @ b", tol = LTOL, grad = {"a", "b"},
     cases = la_cases(function() return {{d(), 4}, {4, d()}} end, {"float16", "bfloat16", "int64", "int32"}, 1),
     call = function(a, b) return torch.mm(a, b) end})
add({name = "mv", out = "same", ref = "a @ b", tol = LTOL, grad = {"a", "b"},
     cases = la_cases(function() local n, k = d(), d(); return {{n, k}, {k}} end, MAIN, 5),
     call = function(a, b) return a:mv(b) end})
add({name = "bmm", out = "same", ref = "a @ b", tol = LTOL, grad = {"a", "b"},
     cases = la_cases(function() local bt, n, k, m = G.pick({1, 2, 3}), d(), d(), d(); return {{bt, n, k}, {bt, k, m}} end, MAIN, 5),
     call = function(a, b) return torch.bmm(a, b) end})
add({name = "matmul", out = "same", ref = "np.matmul(a, b)", tol = LTOL, grad = {"a", "b"}, gradgrad = true,
     cases = la_cases(function(j)
       local n, k, m = d(), d(), d()
       local forms = {
         {{k}, {k}}, {{n, k}, {k}}, {{k}, {k, m}}, {{n, k}, {k, m}},
         {{2, n, k}, {k, m}}, {{n, k}, {3, k, m}}, {{2, 1, n, k}, {3, k, m}}, {{k}, {2, k, m}}, {{2, n, k}, {k}},
       }
       return forms[(j - 1) % #forms + 1]
     end, MAIN, 9),
     call = function(a, b, _, p) if p.np then return np.matmul(a, b) end return a:matmul(b) end})
add({name = "dot", out = "same", ref = "np.dot(a, b)", tol = LTOL, grad = {"a", "b"},
     cases = la_cases(function(j)
       local n, k, m = d(), d(), d()
       if j <= 3 then return {{k}, {k}} end
       return {{n, k}, {k, m}}
     end, {"float32", "float64", "int64"}, 4),
     call = function(a, b, _, p) if a:numel() % 2 == 0 then return np.dot(a, b) end return a:dot(b) end})
add({name = "outer", out = "same", ref = "np.outer(a, b)", tol = LTOL, grad = {"a", "b"},
     cases = la_cases(function() return {{d()}, {d()}} end, {"float32", "float64", "int64"}, 3),
     call = function(a, b) return torch.outer(a, b) end})
add({name = "addmm", out = "same", ref = "p.beta * a + p.alpha * (b @ c)", tol = LTOL, grad = {"a", "b", "c"},
     cases = la_cases(function(j)
       local n, k, m = d(), d(), d()
       local bias = (j % 2 == 0) and {m} or {n, m}
       return {bias, {n, k}, {k, m}}, {alpha = ({1, 0.5, 2, 1})[j], beta = ({1, 1, 0.25, 0})[j]}
     end, MAIN, 4),
     call = function(bias, a, b, p)
       if p.alpha == 1 and p.beta == 1 then return torch.addmm(bias, a, b) end
       return torch.addmm(bias, a, b, {alpha = p.alpha, beta = p.beta})
     end})
add({name = "linalg.solve", out = "same", ref = "np.linalg.solve(a, b)", tol = {float32 = {1e-3, 1e-4}, float64 = {1e-9, 1e-10}},
     grad = {"a", "b"},
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, n in ipairs({1, 3, 6}) do
           local vals = {}
           for i = 1, n * n do vals[i] = G.randn() end
           for i = 1, n do vals[(i - 1) * n + i] = vals[(i - 1) * n + i] + 2 * n end   -- well conditioned
           cs[#cs + 1] = {a = G.make({n, n}, dt, {values = vals}), b = G.make({n, 2}, dt)}
         end
       end
       return cs
     end,
     call = function(a, b) return torch.linalg.solve(a, b) end})

add({name = "linalg.inv", out = "same", ref = "np.linalg.inv(a)", tol = {float32 = {1e-3, 1e-4}, float64 = {1e-9, 1e-10}},
     grad = {"a"},
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, shape in ipairs({{1, 1}, {4, 4}, {2, 3, 3}}) do
           local n = shape[#shape]
           local a = G.make(shape, dt) + torch.eye(n, {dtype = dt}) * (2 * n)
           cs[#cs + 1] = {a = a, p = {np = #shape == 3}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p) if p.np then return np.linalg.inv(a) end return torch.linalg.inv(a) end})
add({name = "linalg.det", out = "same", ref = "np.linalg.det(a)", tol = {float32 = {1e-4, 1e-4}, float64 = {1e-10, 1e-10}},
     grad = {"a"},
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, shape in ipairs({{1, 1}, {3, 3}, {2, 4, 4}}) do cs[#cs + 1] = {a = G.make(shape, dt)} end
       end
       return cs
     end,
     call = function(a) return torch.linalg.det(a) end})
add({name = "linalg.norm", out = "same", ref = "np.linalg.norm(a, p.ord, axis=ax(p.dim, a))", tol = RTOL, grad = {"a"},
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         cs[#cs + 1] = {a = G.make({5}, dt), p = {}}
         cs[#cs + 1] = {a = G.view({3, 4}, dt, "T"), p = {ord = "fro"}, layouts = {a = "T"}}
         cs[#cs + 1] = {a = G.make({3, 4}, dt), p = {ord = 1, dim = 2}}
         cs[#cs + 1] = {a = G.make({6}, dt), p = {ord = math.huge}}
       end
       return cs
     end,
     call = function(a, _, _, p)
       if p.dim then return torch.linalg.norm(a, p.ord, p.dim) end
       if p.ord then return np.linalg.norm(a, p.ord) end
       return torch.linalg.norm(a)
     end})

---------------------------------------------------------------------------------------------
-- Shape ops: values move, so every dtype is checked exactly.
local function shape_cases(make, dtypes, n)
  return function()
    local cs = {}
    for di, dt in ipairs(dtypes or G.DTYPES) do
      for j = 1, G.count(n or 3) do
        local s, p, lay = make(j, di)
        local a, l = G.view(s, dt, lay or G.pick(G.LAYOUTS))
        p.form = (di + j) % 3
        cs[#cs + 1] = {a = a, layouts = {a = l}, p = p}
      end
    end
    return cs
  end
end
local function factor_shape(n)
  -- a random shape with n elements
  local s = {}
  local rest = n
  for _, f in ipairs({2, 3, 5, 7}) do
    while rest % f == 0 do
      if #s > 0 and math.random() < 0.4 then s[#s] = s[#s] * f else s[#s + 1] = f end
      rest = rest // f
    end
  end
  if rest > 1 then s[#s + 1] = rest end
  if math.random() < 0.3 then table.insert(s, math.random(1, #s + 1), 1) end
  return s
end
add({name = "reshape", grad = {"a"}, out = "same", cast = "none", ref = "a.reshape(p.shape)",
     cases = shape_cases(function(j)
       local s = G.shape({max_rank = 4, min_rank = 0})
       local n = G.numel(s)
       local t
       if n == 0 then t = {0, G.pick({1, 2, 3})}
       elseif n == 1 and j == 3 then t = {}
       else t = factor_shape(n) end
       if #t > 0 and n > 0 and math.random() < 0.3 then t[math.random(1, #t)] = -1 end
       return s, {shape = t}
     end),
     call = function(a, _, _, p)
       if p.form == 0 then return a:reshape(unpack(p.shape)) end
       if p.form == 1 then return a:reshape(p.shape) end
       return np.reshape(a, p.shape)
     end})
add({name = "view", grad = {"a"}, out = "same", cast = "none", ref = "a.reshape(p.shape)",
     cases = shape_cases(function()
       local s = G.shape({max_rank = 4})
       return s, {shape = factor_shape(math.max(G.numel(s), 1))}, "contig"
     end, nil, 2),
     call = function(a, _, _, p)
       if a:numel() == 0 then return a:view(0) end
       return a:view(unpack(p.shape))
     end})
add({name = "transpose", grad = {"a"}, out = "same", cast = "none", ref = "np.swapaxes(a, ax(p.d1, a), ax(p.d2, a))",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       local d1, d2 = math.random(1, #s), math.random(1, #s)
       if math.random() < 0.3 then d2 = d2 - #s - 1 end
       return s, {d1 = d1, d2 = d2}
     end),
     call = function(a, _, _, p) if p.form == 2 then return torch.transpose(a, p.d1, p.d2) end return a:transpose(p.d1, p.d2) end})
add({name = "t", grad = {"a"}, out = "same", cast = "none", ref = "a.T",
     cases = shape_cases(function() return G.shape({min_rank = 0, max_rank = 2}), {} end, nil, 2),
     call = function(a) return a:t() end})
add({name = ".T", grad = {"a"}, out = "same", cast = "none", ref = "a.T",
     cases = shape_cases(function() return G.shape({min_rank = 0, max_rank = 4}), {} end, nil, 2),
     call = function(a) return a.T end})
add({name = "permute", grad = {"a"}, out = "same", cast = "none", ref = "np.transpose(a, [x - 1 for x in p.perm])",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       local perm = {}
       for i = 1, #s do perm[i] = i end
       for i = #perm, 2, -1 do local k = math.random(1, i); perm[i], perm[k] = perm[k], perm[i] end
       return s, {perm = perm}
     end),
     call = function(a, _, _, p) if p.form == 1 then return a:permute(p.perm) end return a:permute(unpack(p.perm)) end})
add({name = "squeeze", grad = {"a"}, out = "same", cast = "none", ref = "squeeze_ref(a, p.dim)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4, dims = {1, 1, 2, 3}})
       local dim = nil
       if math.random() < 0.6 then dim = math.random(1, #s) end
       return s, {dim = dim}
     end),
     call = function(a, _, _, p) if p.dim then return a:squeeze(p.dim) end return a:squeeze() end})
add({name = "unsqueeze", grad = {"a"}, out = "same", cast = "none", ref = "np.expand_dims(a, ax(p.dim, None))",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 3})
       local dim = math.random(1, #s + 1)
       if math.random() < 0.3 then dim = -math.random(1, #s + 1) end
       return s, {dim = dim}
     end),
     call = function(a, _, _, p) return a:unsqueeze(p.dim) end})
add({name = "expand", grad = {"a"}, out = "same", cast = "none", ref = "expand_ref(a, p.sizes)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 3, dims = {1, 1, 2, 3}})
       local sizes = {}
       if math.random() < 0.5 then sizes[1] = G.pick({2, 3}) end
       for _, x in ipairs(s) do
         if x == 1 then sizes[#sizes + 1] = G.pick({1, 2, 4}) else sizes[#sizes + 1] = G.pick({x, -1}) end
       end
       return s, {sizes = sizes}
     end),
     call = function(a, _, _, p)
       if p.form == 0 then return a:expand(unpack(p.sizes)) end
       if p.form == 1 then return a:expand(p.sizes) end
       local shape = {}
       for i, x in ipairs(p.sizes) do shape[i] = x end
       local off = #p.sizes - a:dim()
       for i, x in ipairs(shape) do if x == -1 then shape[i] = a:size(i - off) end end
       return torch.broadcast_to(a, shape)
     end})
add({name = "flatten", grad = {"a"}, out = "same", cast = "none", ref = "flatten_ref(a, p.s, p.e)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 4})
       local r = math.max(#s, 1)
       local st, en = math.random(1, r), nil
       en = math.random(st, r)
       if math.random() < 0.3 then st, en = nil, nil end
       return s, {s = st, e = en}
     end),
     call = function(a, _, _, p) if p.s == nil then return a:flatten() end return a:flatten(p.s, p.e) end})
add({name = "repeat", grad = {"a"}, out = "same", cast = "none", ref = "np.tile(a, p.reps)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 3, max_numel = 40})
       local reps = {}
       for i = 1, #s + math.random(0, 1) do reps[i] = G.pick({1, 2, 3}) end
       if #reps == 0 then reps = {2} end
       return s, {reps = reps}
     end),
     call = function(a, _, _, p)
       if p.form == 0 then return a["repeat"](a, unpack(p.reps)) end
       return a:repeat_tensor(unpack(p.reps))
     end})
add({name = "flip", grad = {"a"}, out = "same", cast = "none", ref = "np.flip(a, axis=ax(p.dims, a))",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       local d1 = math.random(1, #s)
       local dims = {d1}
       if #s > 1 and math.random() < 0.5 then
         local d2 = d1 % #s + 1                  -- another dim, sometimes counted from the end
         dims[2] = math.random() < 0.5 and d2 - #s - 1 or d2
       end
       return s, {dims = dims}
     end),
     call = function(a, _, _, p) return a:flip(p.dims) end})
add({name = "narrow", grad = {"a"}, out = "same", cast = "none", ref = "narrow_ref(a, p.dim, p.start, p.len)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       local dim = math.random(1, #s)
       local n = s[dim]
       local start = math.random(1, n + 1)
       local len = math.random(0, n - start + 1)
       return s, {dim = dim, start = start, len = len}
     end),
     call = function(a, _, _, p) return a:narrow(p.dim, p.start, p.len) end})
add({name = "select", grad = {"a"}, out = "same", cast = "none", ref = "np.take(a, p.idx - 1 if p.idx > 0 else p.idx, axis=ax(p.dim, a))",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       local dim = math.random(1, #s)
       if s[dim] == 0 then s[dim] = 2 end
       local idx = math.random(1, s[dim])
       if math.random() < 0.3 then idx = idx - s[dim] - 1 end
       return s, {dim = dim, idx = idx}
     end),
     call = function(a, _, _, p) return a:select(p.dim, p.idx) end})
local function list_cases(make, n)
  return function()
    local cs = {}
    for di, dt in ipairs(G.DTYPES) do
      for j = 1, G.count(n or 3) do
        local shapes, p, dts = make(j, dt)
        local list, lays = {}, {}
        for i, s in ipairs(shapes) do list[i], lays[i] = G.view(s, dts and dts[i] or dt, G.pick(G.LAYOUTS)) end
        p.form = (di + j) % 2
        cs[#cs + 1] = {a = list, layouts = {a = lays}, p = p}
      end
    end
    return cs
  end
end
add({name = "cat", grad = {"a"}, out = "promote", ref = "np.concatenate(a, axis=ax(p.dim, a[0]))",
     cases = list_cases(function(j, dt)
       local s = G.shape({min_rank = 1, max_rank = 3})
       local dim = math.random(1, #s)
       local shapes = {}
       for i = 1, math.random(1, 4) do
         local x = G.copy(s)
         x[dim] = G.pick({0, 1, 2, 3})
         shapes[i] = x
       end
       local dts
       if j == 3 then dts = {dt, G.pick(G.DTYPES), dt, G.pick(G.DTYPES)} end
       return shapes, {dim = math.random() < 0.3 and dim - #s - 1 or dim}, dts
     end),
     call = function(a, _, _, p)
       if p.form == 0 then return torch.cat(a, p.dim) end
       return np.concatenate(a, {axis = p.dim})
     end})
add({name = "stack", grad = {"a"}, out = "same", ref = "np.stack(a, axis=ax(p.dim, None))", cast = "none",
     cases = list_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 3})
       local shapes = {}
       for i = 1, math.random(1, 3) do shapes[i] = G.copy(s) end
       return shapes, {dim = math.random(1, #s + 1)}
     end),
     call = function(a, _, _, p)
       if p.form == 0 then return torch.stack(a, p.dim) end
       return np.stack(a, {axis = p.dim})
     end})
add({name = "split", grad = {"a"}, out = "same*", cast = "none", ref = "split_ref(a, p.size, p.dim)",
     cases = shape_cases(function(j)
       local s = G.shape({min_rank = 1, max_rank = 3})
       local dim = math.random(1, #s)
       local size
       if j == 2 and s[dim] > 0 then
         size = {}
         local left = s[dim]
         while left > 0 do local k = math.random(1, left); size[#size + 1] = k; left = left - k end
       else size = G.pick({1, 2, 3}) end
       return s, {dim = dim, size = size}
     end),
     call = function(a, _, _, p) return a:split(p.size, p.dim) end})
add({name = "chunk", grad = {"a"}, out = "same*", cast = "none", ref = "chunk_ref(a, p.n, p.dim)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 3})
       return s, {dim = math.random(1, #s), n = G.pick({1, 2, 3, 4})}
     end),
     call = function(a, _, _, p) return a:chunk(p.n, p.dim) end})

add({name = "unbind", grad = {"a"}, out = "same*", cast = "none", ref = "[np.take(a, i, axis=ax(p.dim, a)) for i in range(a.shape[ax(p.dim, a)])]",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 3, dims = {1, 2, 3}})
       return s, {dim = math.random(1, #s)}
     end, nil, 2),
     call = function(a, _, _, p) return a:unbind(p.dim) end})
add({name = "movedim", grad = {"a"}, out = "same", cast = "none", ref = "np.moveaxis(a, ax(p.src, a), ax(p.dst, a))",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       return s, {src = math.random(1, #s), dst = -math.random(1, #s)}
     end, nil, 2),
     call = function(a, _, _, p) return a:movedim(p.src, p.dst) end})
add({name = "tile", grad = {"a"}, out = "same", cast = "none", ref = "np.tile(a, p.reps)",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 0, max_rank = 3, max_numel = 40})
       local reps = {}
       for i = 1, math.random(1, 3) do reps[i] = G.pick({1, 2, 3}) end
       return s, {reps = reps}
     end, nil, 2),
     call = function(a, _, _, p) return torch.tile(a, p.reps) end})
add({name = "expand_as", grad = {"a"}, out = "same", cast = "none", ref = "np.broadcast_to(a, b.shape)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for _ = 1, G.count(2) do
           local s = G.shape({min_rank = 0, max_rank = 3, dims = {1, 1, 2, 3}})
           local target = {}
           if math.random() < 0.5 then target[1] = G.pick({2, 3}) end
           for _, x in ipairs(s) do target[#target + 1] = x == 1 and G.pick({1, 2, 4}) or x end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = torch.zeros(target, {dtype = G.pick(G.DTYPES)}), layouts = {a = l}}
         end
       end
       return cs
     end,
     call = function(a, b) return a:expand_as(b) end})
add({name = "unflatten", grad = {"a"}, out = "same", cast = "none",
     ref = "a.reshape(a.shape[:ax(p.dim, a) % a.ndim] + tuple(p.sizes) + a.shape[ax(p.dim, a) % a.ndim + 1:])",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 3})
       local dim = math.random(1, #s)
       local sizes = factor_shape(s[dim])
       if #sizes == 0 then sizes = {1} end
       if math.random() < 0.3 then sizes[math.random(1, #sizes)] = -1 end
       if math.random() < 0.3 then dim = dim - #s - 1 end
       return s, {dim = dim, sizes = sizes}
     end, nil, 2),
     call = function(a, _, _, p) return a:unflatten(p.dim, p.sizes) end})
for _, hv in ipairs({"hstack", "vstack"}) do
  add({name = hv, grad = {"a"}, out = "same", cast = "none", ref = "np." .. hv .. "(a)",
       cases = list_cases(function()
         local s = G.shape({min_rank = 1, max_rank = 3})
         local shapes = {}
         for i = 1, math.random(1, 3) do
           local x = G.copy(s)
           local d = (hv == "hstack" and #s >= 2) and 2 or 1
           x[d] = G.pick({1, 2, 3})
           if #s == 1 and hv == "vstack" then x = G.copy(s) end
           shapes[i] = x
         end
         return shapes, {}
       end, 1),
       call = function(a) return torch[hv](a) end})
end
add({name = "max(a, b)", grad = {"a", "b"}, out = "promote", ref = "np.maximum(a, b)", gen = "binary", scalars = {}, per_dtype = 2,
     call = function(a, b) return a:max(b) end})

---------------------------------------------------------------------------------------------
-- Indexing: x[...] reads and writes, index_select, gather, scatter, masked_fill, nonzero.
-- An index spec is a list of entries: an integer (1-based, negative from the end), a
-- range {first, last[, step]} (inclusive; a negative step runs from first down to last, a
-- view walked backwards), or ":".
local function random_spec(s)
  local spec = {}
  local n = math.random(1, #s)
  for i = 1, n do
    local size = s[i]
    local r = math.random()
    if size == 0 or r < 0.25 then spec[i] = ":"
    elseif r < 0.45 then
      local k = math.random(1, size)
      if math.random() < 0.3 then k = k - size - 1 end
      spec[i] = k
    else
      local f = math.random(1, size)
      local l = math.random(f, size)
      if math.random() < 0.3 then l = l - size - 1 end
      if math.random() < 0.25 then spec[i] = {l, f, -G.pick({1, 2, 3})}  -- NumPy's a[l-1:f-2:-step]
      elseif math.random() < 0.5 then spec[i] = {f, l, G.pick({1, 2, 3})}
      else spec[i] = {f, l} end
    end
  end
  return spec
end
-- The shape x[spec] has, worked out here (not by asking tide).
local function spec_shape(s, spec)
  local out = {}
  for i, n in ipairs(s) do
    local e = spec[i]
    if e == nil or e == ":" then out[#out + 1] = n
    elseif type(e) == "table" then
      local f, l, st = e[1], e[2], e[3] or 1
      if f < 0 then f = n + 1 + f end
      if l < 0 then l = n + 1 + l end
      if st < 0 then f, l, st = l, f, -st end  -- the same count as the ascending range
      out[#out + 1] = l >= f and (l - f) // st + 1 or 0
    end
  end
  return out
end
add({name = "x[spec]", grad = {"a"}, out = "same", cast = "none", ref = "a[pyidx(p.spec)]",
     cases = shape_cases(function()
       local s = G.shape({min_rank = 1, max_rank = 4})
       return s, {spec = random_spec(s)}
     end),
     call = function(a, _, _, p)
       if #p.spec == 1 and type(p.spec[1]) == "number" then return a[p.spec[1]] end
       return a[p.spec]
     end})
add({name = "x[spec] = v", grad = {"a", "b"}, grad_if = function(case) return G.is_float(case.a.dtype) end,
     out = "same", cast = "none", ref = "setitem(a, pyidx(p.spec), b)",
     cases = function()
       local cs = {}
       for di, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(3) do
           local s = G.shape({min_rank = 1, max_rank = 3})
           local a, l = G.view(s, dt, G.pick({"contig", "T", "step", "offset"}))
           local spec = random_spec(s)
           local v
           if j == 1 then v = dt == "bool" and true or 7
           else
             -- a tensor of the selected shape (or broadcastable to it)
             local ps = spec_shape(s, spec)
             if j == 3 and #ps > 0 then ps = {ps[#ps]} end
             v = G.make(ps, G.pick({dt, dt, "float32", "int64"}), {dom = "castable"})
           end
           cs[#cs + 1] = {a = a, b = v, layouts = {a = l}, p = {spec = spec}}
         end
       end
       return cs
     end,
     call = function(a, b, _, p)
       local r = a:clone()
       if #p.spec == 1 and type(p.spec[1]) == "number" then r[p.spec[1]] = b else r[p.spec] = b end
       return r
     end})
add({name = "x[mask]", grad = {"a"}, out = "same", cast = "none", ref = "a[b]",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(2) do
           local s = G.shape({min_rank = 0, max_rank = 3})
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           local m, lm = G.view(s, "bool", G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = m, layouts = {a = l, b = lm}}
         end
       end
       return cs
     end,
     call = function(a, m) return a[m] end})
add({name = "x[mask] = v", grad = {"a"}, out = "same", cast = "none", ref = "setitem(a, b, c)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local s = G.shape({min_rank = 1, max_rank = 3})
         local a, l = G.view(s, dt, G.pick({"contig", "T", "step"}))
         cs[#cs + 1] = {a = a, b = G.make(s, "bool"), c = dt == "bool" and false or 0, layouts = {a = l}}
       end
       return cs
     end,
     call = function(a, m, v) local r = a:clone(); r[m] = v; return r end})
local function index_tensor(n, count, allow_neg)
  local v = {}
  for i = 1, count do
    v[i] = math.random(1, n)
    if allow_neg and math.random() < 0.2 then v[i] = v[i] - n - 1 end
  end
  return torch.tensor(v, {dtype = "int64"}):reshape(count)
end
add({name = "x[idx]", grad = {"a"}, out = "same", cast = "none", ref = "a[np.where(b > 0, b - 1, b)]",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(2) do
           local s = G.shape({min_rank = 1, max_rank = 3})
           if s[1] == 0 then s[1] = 2 end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = index_tensor(s[1], math.random(0, 5), true), layouts = {a = l}}
         end
       end
       return cs
     end,
     call = function(a, idx) return a[idx] end})
add({name = "index_select", grad = {"a"}, out = "same", cast = "none", ref = "np.take(a, b - 1, axis=ax(p.dim, a))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(3) do
           local s = G.shape({min_rank = 1, max_rank = 3})
           local dim = math.random(1, #s)
           if s[dim] == 0 then s[dim] = 3 end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = index_tensor(s[dim], math.random(0, 6)), layouts = {a = l}, p = {dim = dim}}
         end
       end
       return cs
     end,
     call = function(a, idx, _, p) return a:index_select(p.dim, idx) end})
-- Index tensors for gather/scatter: same rank as x, sizes at most x's; with `unique`, the
-- indices along dim are distinct for each position (so scatter is deterministic).
local function along_index(s, dim, unique)
  local is = {}
  for i, x in ipairs(s) do is[i] = math.random(math.min(1, x), x) end
  if unique then is[dim] = math.min(is[dim], s[dim]) end
  local n = G.numel(is)
  local vals = {}
  if n > 0 then
    -- strides of is (row-major)
    local strides, acc = {}, 1
    for i = #is, 1, -1 do strides[i] = acc; acc = acc * is[i] end
    local perms = {}
    for k = 0, n - 1 do
      local key, pos = {}, 0
      local rem = k
      for i = 1, #is do
        local c = rem // strides[i]
        rem = rem % strides[i]
        if i == dim then pos = c else key[#key + 1] = c end
      end
      local kk = table.concat(key, ",")
      if unique then
        if not perms[kk] then
          local pm = {}
          for i = 1, s[dim] do pm[i] = i end
          for i = #pm, 2, -1 do local r = math.random(1, i); pm[i], pm[r] = pm[r], pm[i] end
          perms[kk] = pm
        end
        vals[k + 1] = perms[kk][pos + 1]
      else
        vals[k + 1] = math.random(1, s[dim])
      end
    end
  end
  return G.make(is, "int64", {values = vals})
end
local function gather_cases(unique, with_src, dtypes)
  return function()
    local cs = {}
    for di, dt in ipairs(dtypes or G.DTYPES) do
      for j = 1, G.count(3) do
        local s = G.shape({min_rank = 1, max_rank = 3, dims = {1, 2, 3, 4, 5}})
        local dim = math.random(1, #s)
        local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
        local idx = along_index(s, dim, unique)
        local src
        if with_src then
          if j == 2 then src = dt == "bool" and true or 5 else src = G.make(idx.shape, dt) end
        end
        cs[#cs + 1] = {a = a, b = idx, c = src, layouts = {a = l}, p = {dim = dim}}
      end
    end
    return cs
  end
end
add({name = "gather", grad = {"a"}, out = "same", cast = "none", ref = "gather_ref(a, ax(p.dim, a), b)",
     cases = gather_cases(false, false), call = function(a, idx, _, p) return a:gather(p.dim, idx) end})
add({name = "scatter", grad = {"a", "c"}, out = "same", cast = "none", ref = "scatter_ref(a, ax(p.dim, a), b, c)",
     cases = gather_cases(true, true), call = function(a, idx, src, p) return a:scatter(p.dim, idx, src) end})
add({name = "scatter_", grad = {"a", "c"}, grad_call = "clone", out = "same", cast = "none", ref = "scatter_ref(a, ax(p.dim, a), b, c)",
     cases = gather_cases(true, true, {"float32", "int64"}),
     call = function(a, idx, src, p) a:scatter_(p.dim, idx, src); return a end})
add({name = "scatter_add", grad = {"a", "c"}, out = "same", cast = "none", ref = "scatter_add_ref(a, ax(p.dim, a), b, c)",
     tol = RTOL, cases = gather_cases(false, true, {"float32", "float64", "int64", "int32"}),
     call = function(a, idx, src, p)
       if not torch.is_tensor(src) then src = torch.full(idx.shape, src, {dtype = a.dtype}) end
       return a:scatter_add(p.dim, idx, src)
     end})
add({name = "masked_fill", grad = {"a"}, out = "same", cast = "none", ref = "np.where(b, np.array(c).astype(a.dtype), a)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(2) do
           local sa, sm = G.broadcast_pair({max_rank = 3})
           -- the mask broadcasts to x, not the other way round
           local s = {}
           for i = 1, math.max(#sa, #sm) do
             local x = sa[#sa - math.max(#sa, #sm) + i] or 1
             local y = sm[#sm - math.max(#sa, #sm) + i] or 1
             s[i] = math.max(x, y)
             if x == 0 or y == 0 then s[i] = 0 end
           end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           local v = dt == "bool" and true or (G.is_float(dt) and -1.5 or 3)
           cs[#cs + 1] = {a = a, b = G.make(sm, "bool"), c = v, layouts = {a = l}}
         end
       end
       return cs
     end,
     call = function(a, m, v) return a:masked_fill(m, v) end})
add({name = "nonzero", out = "int64", cast = "none", ref = "np.argwhere(a) + 1",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         for j = 1, G.count(2) do
           local s = G.shape({min_rank = 0, max_rank = 3, zero = 0.1})
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "small"})
           cs[#cs + 1] = {a = a, layouts = {a = l}, p = {np = j == 2}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p) if p.np then return torch.argwhere(a) end return a:nonzero() end})

add({name = "masked_select", grad = {"a"}, out = "same", cast = "none", ref = "a[np.broadcast_to(b, a.shape)]",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local s = G.shape({min_rank = 1, max_rank = 3})
         local sm = G.copy(s)
         if math.random() < 0.5 then sm = {s[#s]} end
         local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
         cs[#cs + 1] = {a = a, b = G.make(sm, "bool"), layouts = {a = l}}
       end
       return cs
     end,
     call = function(a, m) return a:masked_select(m) end})
add({name = "take", grad = {"a"}, out = "same", cast = "none", ref = "np.take(a.reshape(-1), b - 1)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local s = G.shape({min_rank = 1, max_rank = 3})
         if G.numel(s) == 0 then s = {2} end
         local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
         local idx = {}
         for i = 1, 6 do idx[i] = math.random(1, G.numel(s)) end
         cs[#cs + 1] = {a = a, b = G.make({2, 3}, "int64", {values = idx}), layouts = {a = l}}
       end
       return cs
     end,
     call = function(a, idx) return a:take(idx) end})
add({name = "index_fill", grad = {"a"}, out = "same", cast = "none", ref = "index_fill_ref(a, ax(p.dim, a), b, c)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local s = G.shape({min_rank = 1, max_rank = 3})
         local dim = math.random(1, #s)
         if s[dim] == 0 then s[dim] = 2 end
         local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
         cs[#cs + 1] = {a = a, b = index_tensor(s[dim], math.random(0, 3)), c = dt == "bool" and true or 4,
                        layouts = {a = l}, p = {dim = dim}}
       end
       return cs
     end,
     call = function(a, idx, v, p) return a:index_fill(p.dim, idx, v) end})
add({name = "index_add", grad = {"a", "c"}, out = "same", cast = "none", ref = "index_add_ref(a, ax(p.dim, a), b, c)", tol = RTOL,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64", "int32", "int16"}) do
         for j = 1, G.count(2) do
           local s = G.shape({min_rank = 1, max_rank = 3})
           local dim = math.random(1, #s)
           if s[dim] == 0 then s[dim] = 2 end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS), {dom = "mid"})
           local n = math.random(0, 4)
           local ss = G.copy(s)
           ss[dim] = n
           cs[#cs + 1] = {a = a, b = index_tensor(s[dim], n), c = G.make(ss, dt, {dom = "mid"}), layouts = {a = l},
                          p = {dim = dim}}
         end
       end
       return cs
     end,
     call = function(a, idx, src, p) return a:index_add(p.dim, idx, src) end})
-- index_put(x, {i1, ...}, v[, accumulate]): index tensors (1-based) for the leading dims;
-- distinct positions unless accumulating (p.acc), values per position or broadcast.
add({name = "index_put", grad = {"a", "c"}, out = "same", cast = "none",
     ref = "(lambda r, idx: (np.add.at(r, idx, c) if p.acc else r.__setitem__(idx, c), r)[1])"
        .. "(np.array(a, copy=True), tuple(i - 1 for i in b))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "float16", "int64"}) do
         for j = 1, G.count(3) do
           local s = G.shape({min_rank = 1, max_rank = 3, dims = {2, 3, 4, 5}})
           local k, n, acc = math.random(1, #s), math.random(1, 4), j == 2
           local idx, seen = {}, {}
           for d = 1, k do idx[d] = {} end
           for _ = 1, 50 do
             if #idx[1] == n then break end
             local pos = {}
             for d = 1, k do pos[d] = math.random(1, s[d]) end
             local key = table.concat(pos, ",")
             if acc or not seen[key] then
               seen[key] = true
               for d = 1, k do idx[d][#idx[d] + 1] = pos[d] end
             end
           end
           local list = {}
           for d = 1, k do list[d] = torch.tensor(idx[d], {dtype = "int64"}) end
           local vs = {#idx[1]}
           for d = k + 1, #s do vs[#vs + 1] = s[d] end
           if j == 3 and #vs > 1 then table.remove(vs, 1) end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = list, c = G.make(vs, dt), layouts = {a = l}, p = {acc = acc}}
         end
       end
       return cs
     end,
     call = function(a, idx, v, p) return a:index_put(idx, v, p.acc) end})
-- Keys that mix numbers, ranges and ":" with index tensors ("T": b, "U": c) or a 1-D mask
-- ("M": b). As in PyTorch, numbers select first and the tensors index what is left (NumPy
-- would count the numbers as index arrays and move the dims elsewhere).
local MIXED = {{"T", ":"}, {":", "T"}, {2, "T"}, {"T", {1, -1, 2}}, {"M", ":"}, {":", "M", 1}, {"T", ":", "U"},
               {"T", "U"}, {-1, ":", "T"}, {{2, 3}, "T", 1}}
add({name = "x[mixed]", grad = {"a"}, out = "same", cast = "none",
     ref = "(lambda s1: s1[tuple(b - 1 if e == 'T' else c - 1 if e == 'U' else b if e == 'M' else slice(None)"
        .. " for e in p.spec if not isinstance(e, int))])"
        .. "(a[tuple(slice(None) if e in ('T', 'U', 'M') else pyidx([e])[0] for e in p.spec)])",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64", "int64", "bool", "float16"}) do
         for _, spec in ipairs(MIXED) do
           local s = {}
           for i, e in ipairs(spec) do s[i] = type(e) == "table" and G.pick({3, 4}) or G.pick({2, 3, 4}) end
           if math.random() < 0.5 then s[#s + 1] = G.pick({1, 2, 3}) end
           local n = math.random(1, 4)
           local b, c
           for i, e in ipairs(spec) do
             if e == "T" then b = index_tensor(s[i], n)
             elseif e == "U" then c = index_tensor(s[i], math.random() < 0.3 and 1 or n)
             elseif e == "M" then b = G.make({s[i]}, "bool") end
           end
           local a, l = G.view(s, dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, b = b, c = c, layouts = {a = l}, p = {spec = spec}}
         end
       end
       return cs
     end,
     call = function(a, b, c, p)
       local key = {}
       for i, e in ipairs(p.spec) do
         if e == "T" or e == "M" then key[i] = b elseif e == "U" then key[i] = c else key[i] = e end
       end
       return a[key]
     end})
add({name = "count_nonzero", out = "int64", cast = "none", ref = "np.count_nonzero(a)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.DTYPES) do
         local a, l = G.view(G.shape({max_rank = 3}), dt, G.pick(G.LAYOUTS), {dom = "small"})
         cs[#cs + 1] = {a = a, layouts = {a = l}}
       end
       return cs
     end,
     call = function(a) return torch.count_nonzero(a) end})

---------------------------------------------------------------------------------------------
-- Neural-network functions: torch.linear softmax log_softmax cross_entropy nll_loss conv2d
-- max_pool2d. Options come in p; class targets are 1-based int64.
local NN_TOL = {float16 = {4e-3, 1e-3}, bfloat16 = {1.6e-2, 1e-2}, float32 = {1e-5, 1e-6}, float64 = {1e-12, 1e-13}}
-- A keyword table, or nil when it is empty (an empty table would be a positional argument).
local function kwargs(t) return next(t) ~= nil and t or nil end
add({name = "linear", grad = {"a", "b", "c"}, gradgrad = true, out = "same", ref = "a @ b.T + (0 if c is None else c)",
     tol = LTOL,
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for j = 1, G.count(4) do
           local inf, outf = G.pick({1, 3, 5}), G.pick({1, 2, 4})
           local xs = ({{inf}, {G.pick({2, 3}), inf}, {2, G.pick({1, 3}), inf}, {0, inf}})[j]
           local x, lx = G.view(xs, dt, G.pick(G.LAYOUTS))
           local w, lw = G.view({outf, inf}, dt, G.pick({"contig", "T"}))
           cs[#cs + 1] = {a = x, b = w, c = j ~= 2 and G.make({outf}, dt) or nil, layouts = {a = lx, b = lw}}
         end
       end
       return cs
     end,
     call = function(x, w, bias) if bias then return torch.linear(x, w, bias) end return torch.linear(x, w) end})
for _, sm in ipairs({{"softmax", "np.exp(a - lse(a, ax(p.dim, a), True))"}, {"log_softmax", "a - lse(a, ax(p.dim, a), True)"}}) do
  local name = sm[1]
  add({name = name, grad = {"a"}, gradgrad = true, out = "same", ref = sm[2], tol = NN_TOL,
       cases = reduce_cases({dtypes = G.FLOATS, need_dim = true, min_rank = 1, edges = false, per_dtype = 4}),
       call = function(a, _, _, p)
         if p.form == 0 then return a[name](a, p.dim) end
         if p.form == 1 then return torch[name](a, {dim = p.dim}) end
         return torch[name](a, p.dim)
       end})
end

-- The NumPy reference of the class-target losses (cross-entropy with log-softmax as LP, NLL
-- with LP = x): per row (1 - ls) w[t] (-L[t]) + ls / C sum_c w[c] (-L[c]), 0 for ignored
-- rows; "mean" divides the sum by the total weight of the counted rows.
local CLASS_LOSS = "(lambda x, cd: (lambda C: (lambda w, L, valid, t0: (lambda wt:"
  .. " (lambda per, wsum: per if p.red == 'none' else (per.sum() if p.red == 'sum' else per.sum() / wsum))("
  .. "np.where(valid, (1 - (p.ls or 0)) * wt * -np.take_along_axis(L, t0[..., None], -1)[..., 0]"
  .. " + (p.ls or 0) / C * -(L * w).sum(-1), 0.0), wt.sum()))(np.where(valid, w[t0], 0.0)))("
  .. "np.ones(C) if c is None else c.astype(np.float64), np.moveaxis(LP, cd, -1), b != (p.ig or -100),"
  .. " np.where(b != (p.ig or -100), b - 1, 0)))(x.shape[cd]))(a.astype(np.float64), 0 if a.ndim == 1 else 1)"
-- Probability targets: -sum_c w[c] t'[c] log_softmax(x)[c] with t' = t (1 - ls) + ls / C.
local PROB_LOSS = "(lambda x, cd: (lambda C: (lambda per: per if p.red == 'none' else (per.sum() if p.red == 'sum'"
  .. " else per.mean()))(-((b * (1 - (p.ls or 0)) + (p.ls or 0) / C) * (x - lse(x, cd, True))"
  .. " * (1.0 if c is None else c.reshape([C if i == cd else 1 for i in range(x.ndim)]))).sum(axis=cd)))"
  .. "(x.shape[cd]))(a.astype(np.float64), 0 if a.ndim == 1 else 1)"
-- Class targets of shape `shape` for C classes; `ignored` of them (the first ones) set to ig.
local function class_targets(shape, C, ig, ignored)
  local n = G.numel(shape)
  local v = {}
  for i = 1, n do v[i] = (i <= (ignored or 0)) and ig or math.random(1, C) end
  return G.make(shape, "int64", {values = v})
end
-- Loss cases: {logits shape, options}; prob = probability targets, weight = class weights.
local LOSS_CASES = {
  {{4, 5}, {}}, {{5}, {red = "sum"}}, {{2, 3, 2, 2}, {red = "none", weight = true}},
  {{6, 4}, {ig = 2, ignored = 2, weight = true, ls = 0.1}}, {{3, 4}, {ig = -100, ignored = 1, ls = 0.2, red = "sum"}},
  {{4, 3}, {prob = true, ls = 0.2, weight = true}}, {{2, 4, 3}, {prob = true, red = "none"}}, {{4, 5}, {weight = true}},
}
local function loss_cases(with_prob)
  return function()
    local cs = {}
    for _, dt in ipairs(G.FLOATS) do
      for _, lc in ipairs(LOSS_CASES) do
        local shape, o = lc[1], lc[2]
        if with_prob or not o.prob then
          local cd = #shape == 1 and 1 or 2
          local C = shape[cd]
          local tshape = G.copy(shape)
          local target
          if o.prob then
            target = G.make(shape, dt, {dom = "prob"})
            target = target / target:sum(cd, true)
          else
            table.remove(tshape, cd)
            target = class_targets(tshape, C, o.ig, o.ignored)
          end
          local x, lx = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = "small"})
          cs[#cs + 1] = {a = x, b = target, c = o.weight and G.make({C}, dt, {dom = "pos"}) or nil, layouts = {a = lx},
                         p = {red = o.red, ig = o.ig, ls = with_prob and o.ls or nil}}
        end
      end
    end
    return cs
  end
end
add({name = "cross_entropy", grad = {"a", "b"}, gradgrad = true, out = "same", cast = "none", tol = NN_TOL,
     ref = "(" .. CLASS_LOSS:gsub("LP", "x - lse(x, cd, True)") .. " if b.dtype.kind != 'f' else " .. PROB_LOSS .. ")",
     cases = loss_cases(true),
     call = function(x, t, w, p)
       return torch.cross_entropy(x, t, kwargs({weight = w, reduction = p.red, ignore_index = p.ig, label_smoothing = p.ls}))
     end})
add({name = "nll_loss", grad = {"a"}, out = "same", cast = "none", tol = NN_TOL,
     ref = (CLASS_LOSS:gsub("LP", "x")), cases = loss_cases(false),
     call = function(x, t, w, p) return torch.nll_loss(x, t, kwargs({weight = w, reduction = p.red, ignore_index = p.ig})) end})

-- Convolution and max-pooling: {input shape, weight shape or kernel, options}.
local CONV_CASES = {
  {{2, 3, 6, 5}, {4, 3, 3, 2}, {bias = true}},
  {{1, 2, 7, 7}, {3, 2, 3, 3}, {stride = {2, 2}, padding = {1, 1}}},
  {{2, 2, 6, 6}, {2, 2, 2, 3}, {dilation = {2, 1}, padding = {1, 0}, bias = true}},
  {{1, 4, 5, 6}, {6, 2, 2, 2}, {groups = 2, stride = {1, 2}, bias = true}},
  {{3, 5, 5}, {2, 3, 3, 3}, {padding = {1, 1}}},
  -- at least 256 output positions per image: the CPU's image-by-image kernels (tensor/ops/nn.cpp),
  -- "same" padding (the shifted-image patches), the input's gradient as a convolution
  -- (stride 1) or folded (stride 2, padding beyond the kernel's reach)
  {{3, 2, 16, 16}, {4, 2, 3, 3}, {padding = {1, 1}, bias = true}},
  {{2, 4, 18, 17}, {6, 2, 3, 3}, {groups = 2, dilation = {2, 2}, padding = {2, 2}}},
  {{2, 3, 20, 19}, {4, 3, 3, 2}, {padding = {0, 1}, bias = true}},
  {{2, 2, 33, 32}, {3, 2, 2, 2}, {stride = {2, 1}, padding = {1, 1}}},
  {{1, 2, 16, 16}, {2, 2, 1, 1}, {padding = {1, 1}, bias = true}},
  -- 3x3 of stride 1: Winograd's F(2x2, 3x3) for the output and the input's gradient; odd
  -- output sizes (edge tiles), padding 0 to 2 (the gradient's 2 to 0), groups, more and
  -- fewer output channels than input ones
  {{2, 4, 17, 19}, {6, 2, 3, 3}, {groups = 2, padding = {2, 0}, bias = true}},
  {{1, 3, 18, 17}, {5, 3, 3, 3}, {padding = {0, 1}}},
  {{2, 5, 16, 16}, {3, 5, 3, 3}, {padding = {1, 1}}},
}
add({name = "conv2d", grad = {"a", "b", "c"}, out = "same", tol = {float32 = {1e-4, 1e-5}, float64 = {1e-10, 1e-12}},
     ref = "(lambda x4, w, s, pd, dl, G: (lambda win: (lambda o: o if a.ndim == 4 else o[0])("
        .. "np.einsum('ngchwij,gocij->ngohw', win.reshape(win.shape[0], G, -1, *win.shape[2:]),"
        .. " w.reshape(G, -1, *w.shape[1:])).reshape(win.shape[0], w.shape[0], win.shape[2], win.shape[3])"
        .. " + (0 if c is None else c.reshape(1, -1, 1, 1))))("
        .. "np.lib.stride_tricks.sliding_window_view(np.pad(x4, ((0, 0), (0, 0), (pd[0], pd[0]), (pd[1], pd[1]))),"
        .. " (dl[0] * (w.shape[2] - 1) + 1, dl[1] * (w.shape[3] - 1) + 1), axis=(2, 3))"
        .. "[:, :, ::s[0], ::s[1], ::dl[0], ::dl[1]]))"
        .. "(a if a.ndim == 4 else a[None], b, p.stride or [1, 1], p.padding or [0, 0], p.dilation or [1, 1], p.groups or 1)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, cc in ipairs(CONV_CASES) do
           local o = cc[3]
           local x, lx = G.view(cc[1], dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = x, b = G.make(cc[2], dt), c = o.bias and G.make({cc[2][1]}, dt) or nil, layouts = {a = lx},
                          p = {stride = o.stride, padding = o.padding, dilation = o.dilation, groups = o.groups}}
         end
       end
       return cs
     end,
     call = function(x, w, bias, p)
       return torch.conv2d(x, w, kwargs({bias = bias, stride = p.stride, padding = p.padding, dilation = p.dilation,
                                         groups = p.groups}))
     end})
local POOL_CASES = {
  {{2, 3, 6, 6}, {kernel = {2, 2}}},
  {{1, 2, 7, 7}, {kernel = {3, 3}, stride = {2, 2}, padding = {1, 1}}},
  {{2, 1, 6, 7}, {kernel = {2, 3}, stride = {1, 1}, dilation = {2, 1}}},
  {{3, 5, 5}, {kernel = {2, 2}, stride = {1, 2}, padding = {1, 0}}},
}
add({name = "max_pool2d", grad = {"a"}, out = "same",
     ref = "(lambda x4, k, s, pd, dl: (lambda o: o if a.ndim == 4 else o[0])("
        .. "np.lib.stride_tricks.sliding_window_view(np.pad(x4, ((0, 0), (0, 0), (pd[0], pd[0]), (pd[1], pd[1])),"
        .. " constant_values=-np.inf), (dl[0] * (k[0] - 1) + 1, dl[1] * (k[1] - 1) + 1), axis=(2, 3))"
        .. "[:, :, ::s[0], ::s[1], ::dl[0], ::dl[1]].max(axis=(-2, -1))))"
        .. "(a if a.ndim == 4 else a[None], p.kernel, p.stride or p.kernel, p.padding or [0, 0], p.dilation or [1, 1])",
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.FLOATS) do
         for _, pc in ipairs(POOL_CASES) do
           local x, lx = G.view(pc[1], dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = x, layouts = {a = lx}, p = pc[2]}
         end
       end
       return cs
     end,
     call = function(x, _, _, p)
       return torch.max_pool2d(x, p.kernel, kwargs({stride = p.stride, padding = p.padding, dilation = p.dilation}))
     end})

---------------------------------------------------------------------------------------------
-- Creation. No inputs: the parameters say what to make; p.dtype (when given) is passed.
local function creation(name, list, call, ref, out)
  add({name = name, out = out, cast = "none", ref = ref, call = call,
       cases = function()
         local cs = {}
         for _, p in ipairs(list) do cs[#cs + 1] = {p = p} end
         return cs
       end})
end
-- f(args..., {dtype=}) with the keyword table only when the case has a dtype.
local function with_kw(f, p, ...)
  if p.dtype then
    local args = table.pack(...)
    args[args.n + 1] = {dtype = p.dtype}
    return f(unpack(args, 1, args.n + 1))
  end
  return f(...)
end
local function args_kw(p)
  local t = {}
  for i, v in ipairs(p.args) do t[i] = v end
  if p.dtype then t[#t + 1] = {dtype = p.dtype} end
  return unpack(t)
end
creation("arange", {
  {args = {5}}, {args = {0}}, {args = {2, 9}}, {args = {1, 10, 3}}, {args = {10, 1, -2}}, {args = {-3, 3}},
  {args = {0.0, 1.0, 0.25}}, {args = {1.5}}, {args = {0, 2, 0.3}}, {args = {5, 0, -1.5}}, {args = {6}, dtype = "float64"},
  {args = {0, 5}, dtype = "int32"}, {args = {0.5, 4.0}, dtype = "float64"}, {args = {7}, dtype = "float16"},
  {args = {-1, 1, 0.1}}, {args = {0, 1, 0.1}, dtype = "float64"},
}, function(_, _, _, p) return torch.arange(args_kw(p)) end,
  "np.arange(*p.args).astype(npdt(p.dtype)) if p.dtype else np.arange(*p.args)",
  "py:p.dtype or ('int64' if all(isinstance(x, int) for x in p.args) else 'float32')")
creation("np.arange", {{args = {5}}, {args = {0.5, 3}}, {args = {1, 10, 2}}, {args = {0, 1, 0.125}}},
  function(_, _, _, p) return np.arange(args_kw(p)) end, "np.arange(*p.args)",
  "py:'int64' if all(isinstance(x, int) for x in p.args) else 'float64'")
creation("linspace", {
  {args = {0, 1, 5}}, {args = {-2.5, 7, 11}}, {args = {3, 3, 4}}, {args = {0, 10, 1}}, {args = {1, 0, 0}},
  {args = {0, 1, 100}}, {args = {-1, 1, 7}, dtype = "float64"}, {args = {10, -10, 33}},
}, function(_, _, _, p) return torch.linspace(args_kw(p)) end,
  "np.linspace(*p.args)", "py:p.dtype or 'float32'")
creation("np.linspace", {{args = {0, 1, 5}}, {args = {2, 3, 4}}},
  function(_, _, _, p) return np.linspace(args_kw(p)) end, "np.linspace(*p.args)", "float64")
creation("eye", {{args = {3}}, {args = {1}}, {args = {0}}, {args = {2, 4}}, {args = {4, 2}}, {args = {3}, dtype = "int64"},
                 {args = {2, 3}, dtype = "bool"}, {args = {3}, dtype = "float64"}},
  function(_, _, _, p) return torch.eye(args_kw(p)) end, "np.eye(*p.args)", "py:p.dtype or 'float32'")
creation("np.eye", {{args = {3}}, {args = {2, 3}}},
  function(_, _, _, p) return np.eye(args_kw(p)) end, "np.eye(*p.args)", "float64")
local SHAPES = {{2, 3}, {4}, {0, 3}, {1, 1, 2}}
local zo = {}
for i, s in ipairs(SHAPES) do
  zo[#zo + 1] = {shape = s, form = i % 3}
  zo[#zo + 1] = {shape = s, dtype = G.DTYPES[(i * 3) % #G.DTYPES + 1], form = (i + 1) % 3}
end
zo[#zo + 1] = {shape = {}, form = 1}
for _, z in ipairs({{"zeros", "np.zeros"}, {"ones", "np.ones"}}) do
  local name = z[1]
  local function call(_, _, _, p)
    if p.form == 0 then return with_kw(torch[name], p, p.shape) end
    if p.form == 1 then
      local t = G.copy(p.shape)
      if p.dtype then t[#t + 1] = {dtype = p.dtype} end
      if #t == 0 then return torch[name]({}) end
      return torch[name](unpack(t))
    end
    return with_kw(torch[name], p, p.shape)
  end
  creation(name, zo, call, z[2] .. "(p.shape)", "py:p.dtype or 'float32'")
  creation("np." .. name, {{shape = {2, 3}}, {shape = {3}}, {shape = {2}, dtype = "int32"}},
    function(_, _, _, p) return with_kw(np[name], p, p.shape) end, z[2] .. "(p.shape)", "py:p.dtype or 'float64'")
end
creation("full", {
  {shape = {2, 3}, v = 7}, {shape = {2, 3}, v = 2.5}, {shape = {3}, v = true}, {shape = {0, 2}, v = 1},
  {shape = {2, 2}, v = 3, dtype = "float64"}, {shape = {4}, v = -1, dtype = "int8"}, {shape = {1}, v = 0.1, dtype = "float16"},
}, function(_, _, _, p) return with_kw(torch.full, p, p.shape, p.v) end, "np.full(p.shape, p.v)",
  "py:p.dtype or {bool: 'bool', int: 'int64', float: 'float32'}[type(p.v)]")
creation("np.full", {{shape = {2, 3}, v = 7}, {shape = {2}, v = 2.5}},
  function(_, _, _, p) return np.full(p.shape, p.v) end, "np.full(p.shape, p.v)",
  "py:{bool: 'bool', int: 'int64', float: 'float64'}[type(p.v)]")
creation("empty", {{shape = {2, 3}}, {shape = {0}}, {shape = {4}, dtype = "int16"}},
  function(_, _, _, p) return with_kw(torch.empty, p, p.shape) end, "np.empty(p.shape)", "py:p.dtype or 'float32'")
rows[#rows].compare = "shape"
creation("tensor", {
  {v = {1, 2, 3}}, {v = {1.5, 2}}, {v = {{1, 2}, {3, 4}}}, {v = {true, false}}, {v = {1, 2.5}}, {v = 3}, {v = 2.5},
  {v = {{1, 2}, {3, 4}}, dtype = "float16"}, {v = {0.5}, dtype = "float64"}, {v = {}},
}, function(_, _, _, p) return with_kw(torch.tensor, p, p.v) end, "np.array(p.v, dtype=npdt(p.dtype) if p.dtype else None)",
  "py:p.dtype or infer_dtype(p.v, 'float32')")
creation("np.array", {{v = {1, 2, 3}}, {v = {1.5, 2}}, {v = {{1.0, 2}, {3, 4}}}},
  function(_, _, _, p) return np.array(p.v) end, "np.array(p.v)", "py:infer_dtype(p.v, 'float64')")
for _, l in ipairs({"zeros_like", "ones_like"}) do
  add({name = l, out = "same", cast = "none", ref = "np." .. l .. "(a)",
       call = function(a, _, _, p) if p.np then return np[l](a) end return torch[l](a) end,
       cases = function()
         local cs = {}
         for i, dt in ipairs(G.DTYPES) do
           local a, lay = G.view(G.shape({max_rank = 3}), dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = a, layouts = {a = lay}, p = {np = i % 2 == 0}}
         end
         return cs
       end})
end
add({name = "full_like", out = "same", cast = "none", ref = "np.full(a.shape, 3).astype(a.dtype)",
     call = function(a) return torch.full_like(a, 3) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(G.NUMERIC) do cs[#cs + 1] = {a = G.make(G.shape({max_rank = 2}), dt)} end
       return cs
     end})

---------------------------------------------------------------------------------------------
-- NumPy spellings of pointwise ops (float inputs: their dtype rules agree).
for _, n in ipairs({{"add", "np.add(a, b)"}, {"subtract", "a - b"}, {"multiply", "a * b"}, {"divide", "a / b"},
                    {"power", "np.power(a, b)", {a = "pos", b = "small"}}, {"maximum", "np.maximum(a, b)"},
                    {"minimum", "np.minimum(a, b)"}, {"less", "a < b", nil, "bool"}, {"greater_equal", "a >= b", nil, "bool"},
                    {"equal", "a == b", "small", "bool"}, {"not_equal", "a != b", "small", "bool"},
                    {"arctan2", "np.arctan2(a, b)"}, {"mod", "np.remainder(a, b)", "div"},
                    {"true_divide", "a / b"}, {"less_equal", "a <= b", nil, "bool"},
                    {"greater", "a > b", nil, "bool"}}) do
  local name = n[1]
  local f = fn_of(np, "np", name)
  local calls = 0   -- out= and the positional out in turn
  add({name = "np." .. name, gen = "binary", dtypes = {"float32", "float64"}, out = n[4] or "promote", npstyle = true,
       cast = n[4] and "common" or "result", ref = n[2], domain = n[3], grad = not n[4] and {"a", "b"} or nil,
       grad_domain = (name == "arctan2" and "nonzero") or (name == "divide" and {b = "nonzero"}) or nil,
       scalars = {"float"}, per_dtype = 4,
       call = function(a, b)
         if torch.is_tensor(a) and a:numel() % 2 == 1 then
           calls = calls + 1
           if calls % 2 == 0 then return with_positional_out(f, a, b) end
           return with_out(f, a, b)
         end
         return f(a, b)
       end})
end
for _, n in ipairs({{"exp", "np.exp(a)"}, {"log", "np.log(a)", "pos"}, {"sqrt", "np.sqrt(a)", "pos"},
                    {"square", "np.square(a)"}, {"absolute", "np.abs(a)"}, {"abs", "np.abs(a)"}, {"tanh", "np.tanh(a)"},
                    {"negative", "np.negative(a)"}, {"arcsin", "np.arcsin(a)", "unit"}, {"floor", "np.floor(a)"},
                    {"sign", "np.sign(a)", "nonzero"}, {"isnan", "np.isnan(a)", nil, "bool"},
                    {"arccos", "np.arccos(a)", "unit"}, {"arctan", "np.arctan(a)"}, {"around", "np.round(a)"}}) do
  local name = n[1]
  local f = fn_of(np, "np", name)
  -- around's positional out comes after decimals
  local f_out = name == "around" and function(a, c) return f(a, 0, c) end or f
  local calls = 0   -- every other call gives out: as out=, then positionally
  add({name = "np." .. name, gen = "unary", dtypes = {"float32", "float64"}, out = n[4] or "same", ref = n[2], npstyle = true,
       grad = not n[4] and {"a"} or nil,
       domain = n[3], per_dtype = 3, edges = name ~= "sign",
       call = function(a)
         calls = calls + 1
         if calls % 4 == 0 then return with_positional_out(f_out, a) end
         if calls % 2 == 0 then return with_out(f, a) end
         return f(a)
       end})
end
local invert_calls = 0
add({name = "np.invert", gen = "unary", dtypes = G.INTEGRAL, out = "same", cast = "none", ref = "np.invert(a)",
     per_dtype = 2, call = function(a)
       invert_calls = invert_calls + 1
       if invert_calls % 2 == 0 then return with_positional_out(np.invert, a) end
       return with_out(np.invert, a)
     end})
add({name = "np.sum", out = "sum", ref = "np.sum(a, " .. AX .. ")", tol = RTOL, grad = {"a"},
     cases = reduce_cases({multi = true, per_dtype = 2, dtypes = {"float32", "float64", "int64", "int32", "bool"}}),
     call = function(a, _, _, p)
       if p.dim == nil then return np.sum(a) end
       return np.sum(a, {axis = p.dim, keepdims = p.keepdim})
     end})
add({name = "np.mean", out = "same", ref = "np.mean(a, " .. AX .. ")", tol = RTOL, grad = {"a"},
     cases = reduce_cases({multi = true, per_dtype = 3, dtypes = {"float32", "float64"}}),
     call = function(a, _, _, p)
       if p.dim == nil then return np.mean(a) end
       return np.mean(a, {axis = p.dim, keepdims = p.keepdim})
     end})
add({name = "np.argmax", out = "int64", cast = "none", ref = "argk(np.argmax, a, p.dim, False) + 1",
     cases = reduce_cases({per_dtype = 2, dtypes = {"float32", "int64"}, no_empty = true}),
     call = function(a, _, _, p) if p.dim == nil then return np.argmax(a) end return np.argmax(a, {axis = p.dim}) end})
add({name = "np.transpose", out = "same", cast = "none", ref = "np.transpose(a)", grad = {"a"},
     cases = shape_cases(function() return G.shape({max_rank = 4}), {} end, nil, 1),
     call = function(a) return np.transpose(a) end})

---------------------------------------------------------------------------------------------
-- Autograd extension points: custom Functions (their Lua backward written with differentiable
-- ops, so gradgrad checks double backward through them) and the functional Jacobian and
-- Hessian (computed with create_graph, so the gradient column differentiates through them).
local CustomMul = torch.autograd.Function:extend("CustomMul")
function CustomMul.forward(ctx, a, b)
  ctx:save_for_backward(a, b)
  return a * b
end
function CustomMul.backward(ctx, g)
  local a, b = table.unpack(ctx.saved_tensors)
  return g * b, g * a
end
local CustomExp = torch.autograd.Function:extend("CustomExp")  -- saves its output
function CustomExp.forward(ctx, a)
  local y = a:exp()
  ctx:save_for_backward(y)
  return y
end
function CustomExp.backward(ctx, g) return g * ctx.saved_tensors[1] end
add({name = "autograd.Function (saved inputs)", gen = "binary", dtypes = G.FLOATS, out = "promote", ref = "a * b",
     grad = {"a", "b"}, gradgrad = true, per_dtype = 3, edges = false,
     call = function(a, b) return CustomMul.apply(a, b) end})
add({name = "autograd.Function (saved output)", gen = "unary", dtypes = G.FLOATS, out = "same", ref = "np.exp(a)",
     domain = "small", grad = {"a"}, gradgrad = true, per_dtype = 3, edges = false,
     call = function(a) return CustomExp.apply(a) end})
-- 1-D float cases of a few lengths (the Jacobian of n values is n x n).
local function vector_cases()
  local cs = {}
  for _, dt in ipairs({"float32", "float64"}) do
    for _, n in ipairs({1, 3, 5}) do cs[#cs + 1] = {a = G.make({n}, dt, {dom = "small", edges = false})} end
  end
  return cs
end
-- d/dv_j [sin(v_i) * sum(v)] = cos(v_i) [i = j] sum(v) + sin(v_i)
add({name = "autograd.functional.jacobian", out = "same", tol = RTOL, grad = {"a"}, cases = vector_cases,
     ref = "np.diag(np.cos(a)) * a.sum() + np.sin(a)[:, None]",
     call = function(a)
       return torch.autograd.functional.jacobian(function(v) return v:sin() * v:sum() end, a, {create_graph = true})
     end})
-- d2/dv_i dv_j [sum(sin(v)) * sum(v)] = -sin(v_i) [i = j] sum(v) + cos(v_i) + cos(v_j)
add({name = "autograd.functional.hessian", out = "same", tol = RTOL, grad = {"a"}, cases = vector_cases,
     ref = "np.diag(-np.sin(a)) * a.sum() + np.cos(a)[:, None] + np.cos(a)[None, :]",
     call = function(a)
       return torch.autograd.functional.hessian(function(v) return v:sin():sum() * v:sum() end, a, {create_graph = true})
     end})

---------------------------------------------------------------------------------------------
-- Errors: the op raises a Lua error that names the op (and the process lives on).
local function err_row(name, expect, call, make)
  add({name = "error: " .. name, expect_error = expect, cast = "none", out = "same", ref = "None", call = call,
       cases = function() return {make()} end})
end
err_row("mm shapes", "mm", function(a, b) return a:mm(b) end,
  function() return {a = G.make({2, 3}, "float32"), b = G.make({4, 2}, "float32")} end)
err_row("add broadcast", "add", function(a, b) return torch.add(a, b) end,
  function() return {a = G.make({2, 3}, "float32"), b = G.make({4}, "float32")} end)
err_row("index out of range", "5", function(a) return a[5] end,
  function() return {a = G.make({3}, "float32")} end)
err_row("index_select out of range", "index_select", function(a, i) return a:index_select(1, i) end,
  function() return {a = G.make({3}, "float32"), b = torch.tensor({1, 4})} end)
err_row("gather out of range", "gather", function(a, i) return a:gather(1, i) end,
  function() return {a = G.make({3}, "float32"), b = torch.tensor({0})} end)
err_row("reshape numel", "reshape", function(a) return a:reshape(4, 2) end,
  function() return {a = G.make({3, 2}, "float32")} end)
err_row("cat shapes", "cat", function(a, b) return torch.cat({a, b}, 1) end,
  function() return {a = G.make({2, 3}, "float32"), b = G.make({2, 4}, "float32")} end)
err_row("sum dim", "sum", function(a) return a:sum(3) end,
  function() return {a = G.make({2, 3}, "float32")} end)
err_row("float into int in-place", "add", function(a) return a:add_(1.5) end,
  function() return {a = G.make({2}, "int64")} end)
err_row("bitwise on float", "bitwise_and", function(a, b) return torch.bitwise_and(a, b) end,
  function() return {a = G.make({2}, "float32"), b = G.make({2}, "float32")} end)
err_row("view of non-contiguous", "view", function(a) return a:view(6) end,
  function() return {a = G.make({3, 2}, "float32"):t()} end)

---------------------------------------------------------------------------------------------
-- The nn layers, activations and losses checked against PyTorch: ops_nn.lua adds their rows.
local here = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"
assert(loadfile(here .. "ops_nn.lua"))(G, add)
-- torch.distributions against PyTorch: ops_distributions.lua.
assert(loadfile(here .. "ops_distributions.lua"))(G, add)
assert(loadfile(here .. "ops_nn_norm.lua"))(G, add)
-- The recurrent layers against PyTorch: ops_nn_rnn.lua.
assert(loadfile(here .. "ops_nn_rnn.lua"))(G, add)
assert(loadfile(here .. "ops_nn_attn.lua"))(G, add)
assert(loadfile(here .. "ops_nn_conv.lua"))(G, add)
assert(loadfile(here .. "ops_stats.lua"))(G, add)
assert(loadfile(here .. "ops_dtypes.lua"))(G, add)
assert(loadfile(here .. "ops_sets_shape.lua"))(G, add)
-- The LAPACK decompositions and the linalg functions on them: ops_linalg.lua.
assert(loadfile(here .. "ops_linalg.lua"))(G, add)
-- np.fft / torch.fft: ops_fft.lua.
assert(loadfile(here .. "ops_fft.lua"))(G, add)


-- NumPy semantics of NumPy arrays (promotion, value-based casting, true division, integer
-- reductions): ops_npsem.lua adds their rows.
assert(loadfile(here .. "ops_npsem.lua"))(G, add)
assert(loadfile(here .. "ops_contract.lua"))(G, add)
-- The tensor ops of issue 15 (torch_ops15.lua, erfinv / lgamma / digamma) against PyTorch.
assert(loadfile(here .. "ops_ops15.lua"))(G, add)
-- The optimizers, schedulers and hooks against PyTorch (check.py's optim_steps, schedule, ...).
assert(loadfile(here .. "ops_optim.lua"))(G, add)
-- complex64 / complex128 (CPU only: the device column skips them).
assert(loadfile(here .. "ops_complex.lua"))(G, add)

return rows
