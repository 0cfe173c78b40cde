-- NumPy semantics for NumPy-spelled code (issue 14; docs/translation.md, "NumPy semantics"):
-- arrays made by np.* are flagged, every op with a flagged input runs with NumPy 1.24.2's
-- promotion and float64 default and flags its result; torch-made tensors keep PyTorch's
-- rules exactly. Expected values are NumPy 1.24.2's and torch 1.13's.
--
--   tide tests/lua/test_np_semantics.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

local function arr(v, dt) return dt and np.array(v, {dtype = dt}) or np.array(v) end
local function ten(v, dt) return dt and torch.tensor(v, {dtype = dt}) or torch.tensor(v) end
-- dtype and values of a result
local function is(t, dtype, values)
  T.eq(t.dtype, dtype)
  if values then T.eq(t:tolist(), values) end
end

T.test("NumPy spelling: int / int and int + float are float64, exactly", function()
  is(np.arange(5) / 1, "float64", {0.0, 1.0, 2.0, 3.0, 4.0})
  is(np.array{16777217} + 0.5, "float64", {16777217.5})
  is(np.divide(np.arange(3), 2), "float64", {0.0, 0.5, 1.0})
  is(arr({1, 2}, "int32") * 0.5, "float64", {0.5, 1.0})
end)

T.test("NumPy spelling: array/array promotion is np.promote_types", function()
  is(arr({1, 2}, "int64") + arr({0.5}, "float32"), "float64", {1.5, 2.5})
  is(arr({1}, "int32") + arr({1}, "float32"), "float64")
  is(arr({1}, "int16") + arr({1}, "float16"), "float32")
  is(arr({1}, "int16") + arr({1}, "float32"), "float32")
  is(arr({1}, "uint8") + arr({1}, "int8"), "int16")
  is(arr({1}, "int8") + arr({1}, "float16"), "float16")
  is(np.concatenate{np.arange(2), arr({1, 1}, "float32")}, "float64", {0.0, 1.0, 1.0, 1.0})
  is(np.matmul(np.arange(3), arr({1, 1, 1}, "float32")), "float64", 3.0)
end)

T.test("NumPy spelling: Python scalars cast by value (legacy value-based casting)", function()
  is(arr({1, 2}, "int8") + 1000, "int16", {1001, 1002})
  is(arr({1, 2}, "int8") + 200, "int16", {201, 202})
  is(arr({1, 2}, "int8") + 1, "int8", {2, 3})
  is(arr({1, 2}, "uint8") + (-1), "int16", {0, 1})
  is(arr({1, 2}, "uint8") - 1, "uint8", {0, 1})
  is(arr({1}, "float16") + 1e5, "float32", {100001.0})
  is(arr({1}, "float32") + 1e39, "float64", {1e39 + 1})
  is(arr({1}, "float32") + 0.5, "float32", {1.5})
  is(arr({true}, "bool") + 1, "int64", {2})
  is(arr({true}, "bool") + 0.5, "float64", {1.5})
  is(arr({1}, "int8") + true, "int8", {2})
  is(arr({1, 2}, "uint8") + 1000, "uint16", {1001, 1002})
  is(arr({1, 2}, "uint8") + 70000, "uint32", {70001, 70002})
  is(arr({1, 2}, "uint32") + 1, "uint32", {2, 3})
  is(arr({1, 2}, "uint16") + -1, "int32", {0, 1})
end)

T.test("NumPy spelling: float functions of integer arrays and Lua numbers cast the number by value", function()
  -- NumPy 1.24.2's dtypes and values (float16 and float32 values as NumPy prints them)
  is(np.arctan2(arr({1, 2}, "int8"), 2), "float16", {0.463623046875, 0.78515625})
  is(np.arctan2(2, arr({1, 2}, "int8")), "float16", {1.107421875, 0.78515625})
  is(np.arctan2(arr({1, 2}, "int8"), 300), "float32", {0.003333321074023843, 0.006666568107903004})
  is(np.arctan2(arr({1, 2}, "uint8"), -2), "float16", {2.677734375, 2.35546875})
  is(np.arctan2(arr({1, 2}, "int8"), 70000), "float64", {1.4285714284742468e-05, 2.857142856365403e-05})
  is(np.arctan2(arr({1, 2}, "int8"), 2.5), "float64", {0.3805063771123649, 0.6747409422235526})
  -- an integer is of a higher category than a bool array: int64, float64
  is(np.arctan2(arr({true, false}, "bool"), 2), "float64", {0.4636476090008061, 0.0})
  is(np.copysign(arr({true, false}, "bool"), -1), "float64", {-1.0, -0.0})
  is(np.copysign(arr({1, 2}, "int8"), true), "float16", {1.0, 2.0})
  -- a 0-d array next to an array counts by value; a number next to a 0-d array is int64
  is(np.arctan2(arr({1, 2}, "int16"), np.array(2)), "float32", {0.46364760398864746, 0.7853981852531433})
  is(np.arctan2(np.array(2, {dtype = "int8"}), 2), "float64", 0.7853981633974483)
  is(np.true_divide(arr({1, 2}, "int8"), 2), "float64", {0.5, 1.0})
  -- torch spelling keeps PyTorch's default float
  is(torch.atan2(ten({1, 2}, "int8"), 2), "float32")
end)

T.test("NumPy spelling: a 0-d array next to an array", function()
  is(arr({1, 2}, "int32") + np.array(0.5, {dtype = "float32"}), "float64", {1.5, 2.5})
  is(arr({1, 2}, "int8") + np.array(5), "int8", {6, 7})
  is(arr({1, 2}, "int8") + np.array(1000), "int16", {1001, 1002})
  is(arr({1, 2}, "uint8") + np.array(-1, {dtype = "int8"}), "int16", {0, 1})
  is(arr({1, 2}, "float32") * np.array(1e300), "float64", {1e300, 2e300})
  is(arr({1, 2}, "float32") * np.array(0.5), "float32", {0.5, 1.0})
  -- A 0-d dtype the array's holds decides nothing, so its value is not read: a compiled
  -- backward that multiplies a float64 array by a 0-d float64 gradient replays.
  local x = np.linspace(0, 1, 10)
  local w = torch.ones(1, {dtype = "float64", requires_grad = true})
  local step = torch.compile(function()
    w.grad = nil
    local loss = torch.nn.functional.mse_loss(x * w, x + 1)
    loss:backward()
    return loss
  end)
  for _ = 1, 4 do step() end
  T.eq({torch.compiler.stats(step).replays, torch.compiler.stats(step).eager}, {2, false})
end)

T.test("NumPy spelling: a Lua number next to a 0-d array takes its default dtype", function()
  -- NumPy 1.24.2: only scalars promote by type (a Python int is int64, a float float64)
  local function z(v, dt) return np.array(v, {dtype = dt}) end
  is(z(2, "int8") + 2, "int64", 4)
  is(z(3, "float32") * 0.5, "float64", 1.5)
  is(np.power(z(70, "int8"), 2), "int64", 4900)
  is(z(3, "int8") + true, "int8", 4)
  is(np.array(true) + 1, "int64", 2)
  is(np.maximum(z(3, "uint8"), 2), "int64", 3)
  is(z(3, "float16") + 1, "float64", 4.0)
  is(np.array({1, 2}, {dtype = "float32"}):sum() * 2, "float64", 6.0)
  -- torch spelling: the 0-d tensor's dtype stays
  is(torch.tensor(3, {dtype = "float32"}) * 0.5, "float32", 1.5)
end)

T.test("torch spelling keeps PyTorch's rules exactly", function()
  is(ten({1, 2}) + ten({1.5}, "float32"), "float32", {2.5, 3.5})
  is(torch.arange(5) / 1, "float32", {0.0, 1.0, 2.0, 3.0, 4.0})
  is(ten({1, 2}, "int8") + 1000, "int8", {-23, -22})
  is(ten({1}, "int32") + ten({1}, "float32"), "float32")
  is(ten({1, 2}, "int32") + torch.tensor(0.5), "float32", {1.5, 2.5})
  T.eq((torch.tensor{16777217} + 0.5):item(), 16777216.0)
  T.near(torch.arange(5.0):std():item(), 1.5811388492584229, 1e-6)
  T.eq(torch.arange(5.0):var():item(), 2.5)
end)

T.test("the flag propagates through operators, methods, views and properties", function()
  local a = np.arange(6):reshape(2, 3)
  is((a * 2) / 1, "float64")
  is(a[2] / 2, "float64", {1.5, 2.0, 2.5})
  is(a.T / 1, "float64")
  is(a[{{1, 1}, ":"}] + 0.5, "float64", {{0.5, 1.5, 2.5}})
  is(a:sum() / 1, "float64", 15.0)
  is(a:float() + 0.5, "float32")
  is(a:float() + arr({1}, "int64"), "float64")
  is(a:exp():float() + arr({1}, "int32"), "float64")
end)

T.test("torch tensors passed to np.* and mixed with arrays", function()
  local t = torch.arange(3)
  is(np.exp(t), "float64")
  is(np.exp(t) / 1, "float64")
  is(np.add(t, 1), "int64", {1, 2, 3})
  is(t / 1, "float32")                      -- t itself stays a torch tensor
  is(np.asarray(t) / 1, "float32")          -- asarray returns t as it is
  is(np.array(t) / 1, "float64")            -- array makes a NumPy array
  is(t + arr({0.5}, "float32"), "float64", {0.5, 1.5, 2.5})  -- a NumPy input: NumPy semantics
  local o = torch.zeros(3, {dtype = "int64"})
  np.add(t, 1, {out = o})
  T.eq(o:tolist(), {1, 2, 3})
  is(o / 1, "float32")                      -- an out= torch tensor keeps its kind
  is(torch.cat{ten({1}), arr({0.5}, "float32")}, "float64")  -- a list holding an array
end)

T.test("integer mean, std and var are float64 with ddof 0", function()
  local a = np.arange(5)
  is(a:mean(), "float64", 2.0)
  is(a:std(), "float64", 1.4142135623730951)
  is(a:var(), "float64", 2.0)
  is(np.std(np.array{1, 2, 4}), "float64", 1.247219128924647)
  is(np.var(np.array{1, 2, 4}), "float64")
  T.near(np.var(np.array{1, 2, 4}):item(), 1.5555555555555554, 1e-15)
  is(a:var{ddof = 1}, "float64", 2.5)
  is(np.arange(5.0):var(), "float64", 2.0)
end)

T.test("integer division by zero: 0 in NumPy semantics, an error in PyTorch's", function()
  is(np.array{5, -3, 7} // np.array{0, 2, 0}, "int64", {0, -2, 0})
  is(np.array{5, -3, 7} % np.array{0, 2, 0}, "int64", {0, 1, 0})
  is(np.fmod(np.array{5, -3}, 0), "int64", {0, 0})
  is(np.arange(3) // 0, "int64", {0, 0, 0})
  T.error(function() return torch.arange(3) // 0 end, "floor_divide: integer division by zero")
  T.error(function() return torch.tensor{5} % torch.tensor{0} end, "remainder: integer division by zero")
  T.error(function() return torch.fmod(torch.tensor{5}, 0) end, "fmod: integer division by zero")
  -- NumPy's RuntimeWarning, once per op per process, on stderr
  local tide = T.interpreter()
  local p = io.popen(tide .. " -e 'local a = np.arange(3); local _ = a // 0, a // 0, a % 0, a % 0, a // 1' 2>&1")
  local out = p:read("a")
  p:close()
  T.eq(out, "RuntimeWarning: divide by zero encountered in floor_divide\n" ..
            "RuntimeWarning: divide by zero encountered in remainder\n")
end)

T.test("Lua lists are array-likes in NumPy semantics", function()
  is(np.add({1, 2}, 1), "int64", {2, 3})
  is(np.maximum({1, 5}, {3, 2}), "int64", {3, 5})
  is(np.where({true, false}, 1, 2), "int64", {1, 2})
  is(np.exp({0}), "float64", {1.0})
  is(np.multiply({1.5, 2}, 2), "float64", {3.0, 4.0})
  is(np.arange(2) + {10, 20}, "int64", {10, 21})
  is(np.add({1, 2}, 1) / 2, "float64", {1.0, 1.5})
  T.error(function() return torch.add({1, 2}, 1) end, "add: expected a tensor or a number as argument 1, got table")
end)

T.test("printing is PyTorch's for both kinds", function()
  T.eq(tostring(np.array{1.5}), "tensor([1.5000], dtype=torch.float64)")
  T.eq(tostring(np.array({1.5}, {dtype = "float32"})), "tensor([1.5000])")
end)

T.done()
