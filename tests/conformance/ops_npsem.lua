-- NumPy semantics (docs/translation.md, "NumPy semantics"): the inputs made NumPy arrays
-- with np.copy (np.array would copy to the CPU), every result compared with NumPy 1.24's values and dtype (out = "numpy":
-- the dtype NumPy's ref gives on the same inputs). bfloat16, which NumPy lacks, is left out.
local G, add = ...

local NP_DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}
local NP_NUMERIC = {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}

local function arr(v) return type(v) == "number" and v or np.copy(v) end  -- np.copy keeps the device

-- Every pair of dtypes (0-d against n-d too) and Lua numbers whose value decides the dtype.
local function pairs_cases(dtypes, dom)
  return function()
    local cs = {}
    for _, da in ipairs(dtypes) do
      for _, db in ipairs(dtypes) do
        local sa, sb = {3}, {2, 3}
        local r = math.random()
        if r < 0.25 then sa = {} elseif r < 0.5 then sb = {} end
        cs[#cs + 1] = {a = G.make(sa, da, {dom = dom}), b = G.make(sb, db, {dom = dom})}
      end
      for _, sc in ipairs({2, -1, 200, 1000, -200, 70000, 0.5, 1.75, 1e5, 1e39}) do
        cs[#cs + 1] = {a = G.make({4}, da, {dom = dom}), b = sc}
      end
    end
    return cs
  end
end

for _, op in ipairs({{"+", "a + b", function(a, b) return a + b end},
                     {"*", "a * b", function(a, b) return a * b end},
                     {"np.add", "np.add(a, b)", function(a, b) return np.add(a, b) end},
                     {"np.maximum", "np.maximum(a, b)", function(a, b) return np.maximum(a, b) end}}) do
  add({name = "npsem promotion " .. op[1], out = "numpy", cast = "none", ref = op[2],
       call = function(a, b) return op[3](arr(a), arr(b)) end,
       cases = pairs_cases(op[1] == "np.maximum" and NP_DTYPES or NP_NUMERIC, "small")})
end

add({name = "npsem true divide", out = "numpy", cast = "none", ref = "a / b",
     call = function(a, b) return arr(a) / arr(b) end, cases = pairs_cases(NP_NUMERIC, "nonzero")})

-- Integer // and % by zero: 0 (NumPy warns; the values are what is compared).
add({name = "npsem floor_divide by zero", out = "numpy", cast = "none", ref = "a // b",
     call = function(a, b) return arr(a) // arr(b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"uint8", "int8", "int16", "int32", "int64"}) do
         cs[#cs + 1] = {a = G.make({5}, dt, {dom = "small"}), b = torch.zeros(5, {dtype = dt})}
         cs[#cs + 1] = {a = G.make({2, 3}, dt, {dom = "small"}), b = 0}
       end
       return cs
     end})
add({name = "npsem remainder by zero", out = "numpy", cast = "none", ref = "a % b",
     call = function(a, b) return arr(a) % arr(b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"uint8", "int8", "int16", "int32", "int64"}) do
         cs[#cs + 1] = {a = G.make({5}, dt, {dom = "small"}), b = torch.zeros(5, {dtype = dt})}
       end
       return cs
     end})

-- Integer mean/std/var of arrays (methods included): float64, ddof 0; negative axes, empty.
for _, red in ipairs({{"mean", "np.mean(a, axis=p.axis)"}, {"std", "np.std(a, axis=p.axis)"},
                      {"var", "np.var(a, axis=p.axis)"}}) do
  add({name = "npsem method " .. red[1], out = "numpy", cast = "none", ref = red[2],
       call = function(a, _, _, p)
         local x = np.copy(a)  -- a NumPy array on a's device (np.array copies to the CPU)
         if p.axis == nil then return x[red[1]](x) end
         return x[red[1]](x, {axis = p.axis >= 0 and p.axis + 1 or p.axis})
       end,
       cases = function()
         local cs = {}
         for _, dt in ipairs({"uint8", "int8", "int16", "int32", "int64", "float32", "float64"}) do
           cs[#cs + 1] = {a = G.make({3, 4}, dt, {dom = "small"}), p = {}}
           cs[#cs + 1] = {a = G.make({3, 4}, dt, {dom = "small"}), p = {axis = -1}}
           cs[#cs + 1] = {a = G.make({3, 4}, dt, {dom = "small"}), p = {axis = 0}}
         end
         return cs
       end})
end

-- Floating-point ufuncs of bool and integer arrays: NumPy's loops give the smallest float
-- holding the type (float16 for bool/int8/uint8, float32 for int16/uint16, float64 above),
-- for one operand and two (the promoted integer type decides); true_divide stays float64.
local FLOAT_UFUNCS = {
  {"sqrt", function(a) return np.sqrt(a) end, "np.sqrt(a)", "nonneg"},
  {"exp", function(a) return np.exp(a) end, "np.exp(a)", "small"},
  {"sin", function(a) return np.sin(a) end, "np.sin(a)"},
  {"log1p", function(a) return np.log1p(a) end, "np.log1p(a)", "nonneg"},
  {"arctan2", function(a, b) return np.arctan2(a, b) end, "np.arctan2(a, b)"},
  {"copysign", function(a, b) return np.copysign(a, b) end, "np.copysign(a, b)"},
}
for _, u in ipairs(FLOAT_UFUNCS) do
  add({name = "npsem float ufunc of integers " .. u[1], out = "numpy", cast = "none", ref = u[3],
       tol = {float16 = {2e-3, 1e-3}},
       call = function(a, b) return b and u[2](arr(a), arr(b)) or u[2](arr(a)) end,
       cases = function()
         local cs = {}
         for _, da in ipairs({"bool", "uint8", "int8", "int16", "uint16", "int32", "int64"}) do
           local two = u[3]:find(", b") ~= nil
           for _, db in ipairs(two and {"int8", "uint8", "int16", "int64"} or {da}) do
             cs[#cs + 1] = {a = G.make({5}, da, {dom = u[4] or "small"}), b = two and G.make({5}, db, {dom = "small"}) or nil}
           end
         end
         return cs
       end})
end

-- The binary float functions of bool / integer arrays next to Lua numbers and booleans, in
-- both argument orders, and next to 0-d arrays: the number counts by its value (NumPy 1.24's
-- legacy rule: an int8 array and 2 compute in float16, and 300 in float32), unless its
-- category is above the array's (an integer next to a bool array, a float next to an
-- integer one: float64); a number next to a 0-d array takes its default dtype.
local FLOAT_BINARY = {
  {"arctan2", function(a, b) return np.arctan2(a, b) end, "np.arctan2(a, b)", "small"},
  {"copysign", function(a, b) return np.copysign(a, b) end, "np.copysign(a, b)", "small"},
  {"true_divide", function(a, b) return np.true_divide(a, b) end, "np.true_divide(a, b)", "nonzero"},
}
local function value(v) return torch.is_tensor(v) and np.copy(v) or v end
for _, u in ipairs(FLOAT_BINARY) do
  add({name = "npsem float binary with Lua numbers " .. u[1], out = "numpy", cast = "none", ref = u[3],
       tol = {float16 = {2e-3, 1e-3}, float32 = {1e-5, 1e-6}},
       call = function(a, b) return u[2](value(a), value(b)) end,
       cases = function()
         local cs = {}
         for _, dt in ipairs({"bool", "uint8", "int8", "int16", "uint16", "int32", "int64"}) do
           for _, sc in ipairs({2, 3, 200, 300, -2, -129, 70000, true, 0.5, 2.5}) do
             if not (u[1] == "true_divide" and type(sc) == "boolean") then
               cs[#cs + 1] = {a = G.make({4}, dt, {dom = u[4]}), b = sc}
               cs[#cs + 1] = {a = sc, b = G.make({2, 2}, dt, {dom = u[4]})}
             end
           end
           -- 0-d arrays: next to a dimensioned array (by value) and next to a number (default dtype)
           cs[#cs + 1] = {a = G.make({3}, dt, {dom = u[4]}), b = torch.tensor(300, {dtype = "int64"})}
           cs[#cs + 1] = {a = torch.tensor(3, {dtype = "int64"}), b = G.make({3}, dt, {dom = u[4]})}
           cs[#cs + 1] = {a = G.make({}, dt, {dom = u[4]}), b = 2}
         end
         return cs
       end})
end

-- A Lua number next to a 0-d array (only scalars): the number's default dtype (int64,
-- float64) promotes with the array's, as NumPy 1.24 does for Python scalars there.
for _, op in ipairs({{"+", "a + b", function(a, b) return a + b end},
                     {"*", "a * b", function(a, b) return a * b end},
                     {"np.maximum", "np.maximum(a, b)", function(a, b) return np.maximum(a, b) end},
                     {"np.power", "np.power(a, b)", function(a, b) return np.power(a, b) end}}) do
  add({name = "npsem 0-d array with Lua numbers " .. op[1], out = "numpy", cast = "none", ref = op[2],
       call = function(a, b) return op[3](value(a), value(b)) end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(NP_DTYPES) do
           for _, sc in ipairs({2, 300, true, 0.5, 1e39}) do
             if not (op[1] == "np.power" and dt == "bool" and type(sc) == "boolean") then
               local dom = op[1] == "np.power" and "nonneg" or "small"
               cs[#cs + 1] = {a = G.make({}, dt, {dom = dom}), b = sc}
               cs[#cs + 1] = {a = sc, b = G.make({}, dt, {dom = dom})}
             end
           end
         end
         return cs
       end})
end
