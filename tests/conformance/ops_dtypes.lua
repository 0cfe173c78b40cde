-- Conformance rows of the dtypes area: the shifts (<<, >>, np.left_shift, np.right_shift,
-- torch.bitwise_left_shift / right_shift, counts past the bit width) and x:view(dtype).
-- The unsigned dtypes themselves run through every row of ops.lua (gen.lua's dtype lists).
local G, add = ...

local INTS = G.INTS  -- shifts take no bool (PyTorch refuses it; NumPy would compute in int8)

for _, o in ipairs({{"bitwise_left_shift", "left_shift"}, {"bitwise_right_shift", "right_shift"}}) do
  local torch_name, np_name = o[1], o[2]
  local ref = "np." .. np_name .. "(a, b)"
  add({name = torch_name, gen = "binary", ref = ref, dtypes = INTS, out = "promote", scalars = {"int"},
       domain = {a = "mid", b = "exp"}, call = function(a, b) return torch[torch_name](a, b) end})
  add({name = "np." .. np_name, gen = "binary", ref = ref, dtypes = INTS, out = "promote", scalars = {"int"},
       domain = {a = "mid", b = "exp"}, call = function(a, b) return np[np_name](a, b) end})
  -- counts of 0 .. bits + 3 and negative ones: NumPy shifts every bit out past the width
  add({name = torch_name .. " wide counts", ref = ref, out = "same",
       call = function(a, b) return torch[torch_name](a, b) end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(INTS) do
           local bits = torch.iinfo(dt).bits
           local counts, values = {}, {}
           for c = -2, bits + 3 do
             counts[#counts + 1] = c
             values[#values + 1] = G.value(dt, "mid")
           end
           local unsigned = dt:sub(1, 1) == "u"
           for i, c in ipairs(counts) do if unsigned and c < 0 then counts[i] = bits + 5 end end
           cs[#cs + 1] = {a = torch.tensor(values, {dtype = dt}), b = torch.tensor(counts, {dtype = dt})}
         end
         return cs
       end})
end
add({name = "op <<", gen = "binary", call = function(a, b) return a << b end, ref = "np.left_shift(a, b)",
     dtypes = INTS, out = "promote", scalars = {"int"}, scalar_left = true, domain = {a = "mid", b = "exp"}})
add({name = "op >>", gen = "binary", call = function(a, b) return a >> b end, ref = "np.right_shift(a, b)",
     dtypes = INTS, out = "promote", scalars = {"int"}, scalar_left = true, domain = {a = "mid", b = "exp"}})

-- x:view(dtype) against NumPy's a.view(dtype), for every pair of dtypes NumPy has.
local NP_DTYPES = {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64", "uint16",
                   "uint32", "uint64"}
add({name = "view dtype", ref = "a.view(npdt(p.dtype))", out = "p.dtype", cast = "none",
     layout = "another item size needs a last dim of stride 1 (test_reversed_views.lua)",
     call = function(a, b, c, p) return a:view(p.dtype) end,
     cases = function()
       local cs = {}
       for _, from in ipairs(NP_DTYPES) do
         for _, to in ipairs(NP_DTYPES) do
           local shape = {G.randint(1, 3), 8}
           cs[#cs + 1] = {a = G.make(shape, from), p = {dtype = to}}
         end
       end
       return cs
     end})
