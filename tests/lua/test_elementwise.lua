-- Elementwise ops: operators, promotion, comparisons, logical/bitwise ops, unary and binary
-- math, clamp/where/lerp, in-place and out= forms, NaN/inf, half precision, and errors.
--
--   tide tests/lua/test_elementwise.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err, with_default, still_usable = T.error_usable, T.with_default_dtype, T.still_usable
local torch = require "torch"
local np = require "numpy"

local nan, inf = 0 / 0, math.huge

local function ten(t, dtype)
  if dtype then return torch.tensor(t, {dtype = dtype}) end
  return torch.tensor(t)
end
local function list(x) return x:tolist() end
local function dt(x) return x.dtype end



---------------------------------------------------------------------------------------------
-- Operators with a number on either side

T.test("arithmetic operators on int64 with integers on either side", function()
  local a = ten{1, 2, 3}
  T.eq(list(a + 1), {2, 3, 4}); T.eq(list(1 + a), {2, 3, 4})
  T.eq(list(a - 1), {0, 1, 2}); T.eq(list(10 - a), {9, 8, 7})
  T.eq(list(a * 3), {3, 6, 9}); T.eq(list(3 * a), {3, 6, 9})
  T.eq(list(a ^ 2), {1, 4, 9}); T.eq(list(2 ^ a), {2, 4, 8})
  T.eq(list(a // 2), {0, 1, 1}); T.eq(list(7 // a), {7, 3, 2})
  T.eq(list(a % 2), {1, 0, 1}); T.eq(list(7 % a), {0, 1, 1})
  T.eq(list(-a), {-1, -2, -3})
  for _, r in ipairs{a + 1, 1 + a, a - 1, 10 - a, a * 3, 3 * a, a ^ 2, 2 ^ a, a // 2, 7 // a,
                     a % 2, 7 % a, -a} do
    T.eq(dt(r), "int64")
  end
  -- results are integers in Lua too
  T.eq(math.type((a + 1):tolist()[1]), "integer")
end)

T.test("true division of integers gives the default float", function()
  local a = ten{1, 2, 3}
  local r = a / 2
  T.eq(dt(r), "float32"); T.eq(list(r), {0.5, 1.0, 1.5})
  r = 3 / a
  T.eq(dt(r), "float32"); T.near(r, {3, 1.5, 1})
  T.eq(dt(a / a), "float32")
  T.eq(list(ten{1, -1, 0} / 0), {inf, -inf, nan})
end)

T.test("float operators with numbers on either side", function()
  local f = ten{1.5, 2.5, -3.5}
  T.eq(list(f + 1), {2.5, 3.5, -2.5}); T.eq(list(1 + f), {2.5, 3.5, -2.5})
  T.eq(list(f - 0.5), {1, 2, -4}); T.eq(list(0.5 - f), {-1, -2, 4})
  T.eq(list(f * 2), {3, 5, -7}); T.eq(list(2 * f), {3, 5, -7})
  T.eq(list(f / 2), {0.75, 1.25, -1.75}); T.eq(list(1 / ten{2.0, 4.0}), {0.5, 0.25})
  T.eq(list(f ^ 2), {2.25, 6.25, 12.25}); T.near(2 ^ f, {2 ^ 1.5, 2 ^ 2.5, 2 ^ -3.5})
  T.eq(list(f // 1), {1, 2, -4}); T.eq(list(7 // ten{2.0, -2.0}), {3, -4})
  T.eq(list(f % 2), {1.5, 0.5, 0.5}); T.eq(list(7 % ten{2.0, -2.0}), {1, -1})
  T.eq(list(-f), {-1.5, -2.5, 3.5})
  for _, r in ipairs{f + 1, 1 + f, f - 0.5, f * 2, 2 * f, f / 2, f ^ 2, 2 ^ f, f // 1, f % 2, -f} do
    T.eq(dt(r), "float32")
  end
end)

T.test("integer floor division and modulo follow Python's signs", function()
  local a = ten{-7, 7, -7, 7}
  local b = ten{2, -2, -2, 2}
  T.eq(list(a // b), {-4, -4, 3, 3})
  T.eq(list(a % b), {1, -1, -1, 1})
  T.eq(list(torch.floor_divide(ten{-7, 7}, 2)), {-4, 3})
  T.eq(list(torch.remainder(ten{-7, 7}, 3)), {2, 1})
  T.eq(list(torch.fmod(ten{-7, 7}, 3)), {-1, 1})
  T.eq(list(-ten{1, 2, 3} % 3), {2, 1, 0})
  T.eq(list(ten{1, 2, 3} % -2), {-1, 0, -1})
end)

T.test("float floor division, remainder and fmod", function()
  T.eq(list(torch.floor_divide(ten{-7.0, 7.0}, 2)), {-4, 3})
  T.eq(list(torch.remainder(ten{-7.5, 7.5}, 2)), {0.5, 1.5})
  T.eq(list(torch.fmod(ten{-7.5, 7.5}, 2)), {-1.5, 1.5})
  -- by zero in floating point: inf / nan, not an error
  T.eq(list(ten{1.5, -3.5} // 0), {inf, -inf})
  local r = list(ten{1.5, -3.5} % 0)
  T.truthy(r[1] ~= r[1] and r[2] ~= r[2], "x % 0 should be nan for floats")
  for _, v in ipairs{{-7.5, 2}, {7.5, -2}, {5.25, 1.5}, {-0.5, 3}} do
    local x, y = v[1], v[2]
    T.near(torch.fmod(ten({x}, "float64"), y):item(), math.fmod(x, y), 1e-12)
    T.near(torch.remainder(ten({x}, "float64"), y):item(), x - math.floor(x / y) * y, 1e-12)
  end
end)

T.test("bitwise operators on integer and bool tensors", function()
  local a = ten{1, 2, 3}
  T.eq(list(a & 3), {1, 2, 3}); T.eq(list(6 & a), {0, 2, 2})
  T.eq(list(a | 4), {5, 6, 7}); T.eq(list(3 | a), {3, 3, 3})
  T.eq(list(a ~ 5), {4, 7, 6}); T.eq(list(5 ~ a), {4, 7, 6})
  T.eq(list(~a), {-2, -3, -4})
  T.eq(list(ten{12} & ten{10}), {8}); T.eq(list(ten{12} | ten{10}), {14}); T.eq(list(ten{12} ~ ten{10}), {6})
  for _, r in ipairs{a & 3, a | 4, a ~ 5, ~a} do T.eq(dt(r), "int64") end
  local i32 = ten({5, 6}, "int32")
  T.eq(dt(i32 & 3), "int32"); T.eq(list(~i32), {-6, -7})
  local u8 = ten({0, 255}, "uint8")
  T.eq(list(~u8), {255, 0}); T.eq(dt(~u8), "uint8")
  local b = ten{true, false, true}
  local c = ten{true, true, false}
  T.eq(list(b & c), {true, false, false}); T.eq(dt(b & c), "bool")
  T.eq(list(b | c), {true, true, true})
  T.eq(list(b ~ c), {false, true, true})
  T.eq(list(~b), {false, true, false}); T.eq(dt(~b), "bool")
  T.eq(list(b & true), {true, false, true}); T.eq(list(false | b), {true, false, true})
  T.eq(list(np.invert(ten{1})), {-2})
  T.eq(list(np.bitwise_and(ten{6}, 3)), {2})
  T.eq(list(torch.bitwise_xor(ten{6}, 3)), {5})
  T.eq(list(torch.bitwise_not(b)), {false, true, false})
end)

T.test("bool arithmetic: add/mul stay bool, numbers promote", function()
  local b = ten{true, false}
  T.eq(dt(b + b), "bool"); T.eq(list(ten{true, false} + ten{true, true}), {true, true})
  T.eq(dt(b * b), "bool")
  T.eq(dt(b + 1), "int64"); T.eq(list(b + 1), {2, 1})
  T.eq(dt(b * 2.5), "float32"); T.eq(list(b * 2.5), {2.5, 0})
  T.eq(dt(ten{1, 2} - b), "int64"); T.eq(list(ten{1, 2} - b), {0, 2})
  T.eq(dt(ten({1}, "int8") * true), "int8")
end)

---------------------------------------------------------------------------------------------
-- Broadcasting

T.test("broadcasting between shapes", function()
  local col = ten{{1}, {2}}
  local row = ten{10, 20, 30}
  local r = col + row
  T.eq(r.shape, {2, 3})
  T.eq(list(r), {{11, 21, 31}, {12, 22, 32}})
  T.eq(list(row * col), {{10, 20, 30}, {20, 40, 60}})
  local a = torch.ones(3, 1, 2)
  local b = torch.ones(4, 1)
  T.eq((a * b).shape, {3, 4, 2})
  T.eq((a - b).shape, {3, 4, 2})
  -- zero-dim tensors broadcast against anything
  T.eq(list(torch.tensor(5) + row), {15, 25, 35})
  T.eq((torch.tensor(5) * torch.tensor(2)).shape, {})
  T.eq((torch.tensor(5) * torch.tensor(2)):item(), 10)
  -- comparisons and maximum broadcast too
  T.eq(list(col:lt(row:float() / 10)), {{false, true, true}, {false, false, true}})
  T.eq(list(torch.maximum(col, ten{0, 1, 5})), {{1, 1, 5}, {2, 2, 5}})
  -- an empty dim broadcasts to empty
  T.eq((torch.zeros(0, 3) + torch.ones(3)).shape, {0, 3})
end)

---------------------------------------------------------------------------------------------
-- Promotion (PyTorch's rules)

T.test("a Lua number never raises a tensor's dtype within its category", function()
  T.eq(dt(torch.ones(2) * 2.5), "float32")
  T.eq(dt(2.5 * torch.ones(2)), "float32")
  T.eq(dt(torch.ones(2, {dtype = "float64"}) * 2.5), "float64")
  T.eq(dt(torch.ones(2):half() * 2.5), "float16")
  T.eq(dt(torch.ones(2):bfloat16() + 1), "bfloat16")
  T.eq(dt(ten({1, 2}, "int32") + 7), "int32")
  T.eq(dt(ten({1, 2}, "uint8") - 5), "uint8")
  T.eq(list(ten({1, 2, 3}, "uint8") - 5), {252, 253, 254})
  T.eq(dt(ten({1, 2}, "int16") * 3), "int16")
end)

T.test("integer tensor with a float number gives the default float dtype", function()
  T.eq(dt(ten{1, 2} + 1.5), "float32")
  T.eq(dt(1.5 + ten{1, 2}), "float32")
  T.eq(list(ten{1, 2} + 1.5), {2.5, 3.5})
  T.eq(dt(ten({1, 2}, "int32") * 2.5), "float32")
  T.eq(dt(ten({1, 2}, "uint8") * 0.5), "float32")
  T.eq(dt(ten{true} * 0.5), "float32")
  T.eq(dt(ten{1, 4} ^ 0.5), "float32"); T.eq(list(ten{1, 4} ^ 0.5), {1, 2})
  with_default("float64", function()
    T.eq(dt(ten{1, 2} + 1.5), "float64")
    T.eq(dt(ten{1, 2} / 2), "float64")
    T.eq(dt(ten{1, 2}:sqrt()), "float64")
    T.eq(dt(ten({1, 2}, "int32") * 2.5), "float64")
    -- float tensors keep their dtype
    T.eq(dt(torch.ones(2, {dtype = "float32"}) * 2.5), "float32")
  end)
  T.eq(dt(ten{1, 2} + 1.5), "float32", "default dtype restored")
end)

T.test("tensor-tensor promotion", function()
  local f32 = torch.ones(2)
  local f64 = torch.ones(2, {dtype = "float64"})
  local i64 = ten{1, 2}
  T.eq(dt(f32 * f64), "float64"); T.eq(dt(f64 + f32), "float64")
  T.eq(dt(f32 + i64), "float32"); T.eq(dt(i64 + f64), "float64")
  T.eq(dt(ten({1}, "int32") + ten{1}), "int64")
  T.eq(dt(ten({1}, "uint8") + ten({1}, "int8")), "int16")
  T.eq(dt(ten({1}, "uint8") + ten({1}, "int32")), "int32")
  T.eq(dt(f32:half() + f32), "float32")
  T.eq(dt(f32:half() + f32:bfloat16()), "float32")
  T.eq(dt(f32:half() + i64), "float16")
  T.eq(dt(ten{true} + i64), "int64")
  T.eq(dt(ten{true} + f32:half()), "float16")
  T.eq(torch.promote_types("uint8", "int8"), "int16")
  T.eq(torch.promote_types("float16", "bfloat16"), "float32")
  T.eq(torch.result_type(i64, 2.5), "float32")
  T.eq(torch.result_type(f32, f64), "float64")
end)

T.test("zero-dim tensors only raise the category", function()
  -- same category: the dimensioned tensor's dtype wins
  T.eq(dt(torch.ones(2) + torch.tensor(1.5, {dtype = "float64"})), "float32")
  T.eq(dt(ten({1}, "int32") + torch.tensor(7)), "int32")
  T.eq(dt(ten({1}, "uint8") + torch.tensor(3)), "uint8")
  -- higher category: the zero-dim tensor's dtype
  T.eq(dt(ten{1, 2} + torch.tensor(1.5, {dtype = "float64"})), "float64")
  T.eq(dt(torch.tensor(3) * torch.ones(2):half()), "float16")
  -- two zero-dim tensors promote normally
  T.eq(dt(torch.tensor(2) + torch.tensor(3.5, {dtype = "float64"})), "float64")
end)

T.test("dtypes of torch.tensor and np.array literals", function()
  T.eq(dt(torch.tensor{1, 2}), "int64")
  T.eq(dt(torch.tensor{1.5}), "float32")
  T.eq(dt(torch.tensor{1, 2.5}), "float32")
  T.eq(dt(torch.tensor{true, false}), "bool")
  T.eq(dt(torch.tensor(3)), "int64")
  T.eq(dt(torch.tensor(3.0)), "float32")
  T.eq(dt(np.array{1.5, 2}), "float64")
  T.eq(dt(np.array{1, 2}), "int64")
  T.eq(dt(np.array{true}), "bool")
  with_default("float64", function()
    T.eq(dt(torch.tensor{1.5}), "float64")
    T.eq(dt(torch.tensor{1, 2}), "int64")
    T.eq(dt(np.array{1.5}), "float64")
  end)
  T.eq(dt(np.array{1.5}), "float64")
  -- np arrays mix with torch tensors by the same rules
  T.eq(dt(np.array{1.5} * torch.tensor{2.0}), "float64")
  T.eq(dt(np.add(np.array{1.0}, torch.tensor{1.0})), "float64")
  T.eq(dt(np.array{1.5} * 2), "float64")
end)

---------------------------------------------------------------------------------------------
-- Comparisons and logical ops

T.test("comparisons as methods, torch functions and numpy functions", function()
  local a = ten{1, 2, 3}
  local expect = {
    lt = {true, false, false}, le = {true, true, false}, gt = {false, false, true},
    ge = {false, true, true}, eq = {false, true, false}, ne = {true, false, true},
  }
  local npname = {lt = "less", le = "less_equal", gt = "greater", ge = "greater_equal",
                  eq = "equal", ne = "not_equal"}
  for op, want in pairs(expect) do
    T.eq(list(a[op](a, 2)), want, "x:" .. op .. "(2)")
    T.eq(list(torch[op](a, 2)), want, "torch." .. op)
    T.eq(list(np[npname[op]](a, 2)), want, "np." .. npname[op])
    T.eq(list(a[op](a, ten{2, 2, 2})), want, "x:" .. op .. "(tensor)")
    T.eq(list(a[op](a, 2.0)), want, "x:" .. op .. "(2.0)")
    T.eq(dt(a[op](a, 2)), "bool")
  end
  -- number on the left
  T.eq(list(torch.lt(2, a)), {false, false, true})
  T.eq(list(np.less(2, a)), {false, false, true})
  T.eq(list(torch.eq(2, a)), {false, true, false})
  -- mixed dtypes compare by value
  T.eq(list(a:eq(ten{1.0, 2.5, 3.0})), {true, false, true})
  T.eq(list(ten{1.5}:gt(1)), {true})
  -- NaN compares false, except ne
  local n = ten{nan}
  T.eq(list(n:eq(n)), {false}); T.eq(list(n:ne(n)), {true}); T.eq(list(n:lt(inf)), {false})
  -- == keeps Lua's identity meaning
  T.truthy(a == a); T.truthy(not (a == ten{1, 2, 3}))
end)

T.test("logical_and/or/xor/not", function()
  local b = ten{true, false, true, false}
  local c = ten{true, true, false, false}
  T.eq(list(torch.logical_and(b, c)), {true, false, false, false})
  T.eq(list(torch.logical_or(b, c)), {true, true, true, false})
  T.eq(list(torch.logical_xor(b, c)), {false, true, true, false})
  T.eq(list(torch.logical_not(b)), {false, true, false, true})
  T.eq(list(b:logical_and(c)), {true, false, false, false})
  T.eq(list(np.logical_and(b, c)), {true, false, false, false})
  T.eq(list(np.logical_or(b, c)), {true, true, true, false})
  T.eq(list(np.logical_xor(b, c)), {false, true, true, false})
  T.eq(list(np.logical_not(b)), {false, true, false, true})
  -- numbers and non-bool tensors by truthiness
  local x = ten{0, 2, -1}
  T.eq(list(torch.logical_not(x)), {true, false, false})
  T.eq(list(torch.logical_and(x, ten{1.5, 0.0, 1.0})), {false, false, true})
  T.eq(list(torch.logical_or(ten{false, false}, 1)), {true, true})
  T.eq(list(torch.logical_xor(b, true)), {false, true, false, true})
  T.eq(dt(torch.logical_and(x, x)), "bool")
end)

---------------------------------------------------------------------------------------------
-- Unary math

local function tanh(x) local e = math.exp(2 * x); return (e - 1) / (e + 1) end
local unary_ref = {
  abs = math.abs,
  neg = function(x) return -x end,
  exp = math.exp,
  log = math.log,
  log1p = function(x) return math.log(1 + x) end,
  expm1 = function(x) return math.exp(x) - 1 end,
  sqrt = math.sqrt,
  rsqrt = function(x) return 1 / math.sqrt(x) end,
  sin = math.sin, cos = math.cos, tan = math.tan,
  tanh = tanh,
  sigmoid = function(x) return 1 / (1 + math.exp(-x)) end,
  relu = function(x) return x > 0 and x or 0 end,
  floor = math.floor, ceil = math.ceil,
  trunc = function(x) return x >= 0 and math.floor(x) or math.ceil(x) end,
  sign = function(x) return x > 0 and 1 or (x < 0 and -1 or 0) end,
}
local positive_only = {log = true, sqrt = true, rsqrt = true}

T.test("unary math against math.* (float64 and float32)", function()
  local vals = {-2.75, -1.3, -0.5, 0.25, 0.7, 1.0, 2.2, 3.9}
  local pos = {0.1, 0.25, 0.7, 1.0, 2.2, 3.9, 10, 123.5}
  for name, ref in pairs(unary_ref) do
    local input = positive_only[name] and pos or vals
    local want = {}
    for i, v in ipairs(input) do want[i] = ref(v) end
    for _, d in ipairs{"float64", "float32"} do
      local x = ten(input, d)
      local tol = d == "float64" and 1e-12 or 2e-6
      local r1 = x[name](x)
      T.eq(dt(r1), d, name .. " keeps " .. d)
      T.near(r1, want, tol, name .. " (method, " .. d .. ")")
      T.near(torch[name](x), want, tol, "torch." .. name .. " (" .. d .. ")")
    end
  end
end)

T.test("unary math: numpy spellings", function()
  local x = ten({0.25, 1.5, 4.0}, "float64")
  T.near(np.sqrt(x), {0.5, math.sqrt(1.5), 2}, 1e-12)
  T.near(np.exp(x), {math.exp(0.25), math.exp(1.5), math.exp(4)}, 1e-12)
  T.near(np.log(x), {math.log(0.25), math.log(1.5), math.log(4)}, 1e-12)
  T.near(np.tanh(x), {tanh(0.25), tanh(1.5), tanh(4)}, 1e-12)
  T.near(np.sin(x), {math.sin(0.25), math.sin(1.5), math.sin(4)}, 1e-12)
  T.eq(list(np.square(ten{-3, 2})), {9, 4}); T.eq(dt(np.square(ten{-3, 2})), "int64")
  T.eq(list(np.square(ten{1.5})), {2.25})
  T.eq(list(np.absolute(ten{-1, 2})), {1, 2})
  T.eq(list(np.negative(ten{-1, 2})), {1, -2})
  T.eq(list(np.floor(ten{1.5, -1.5})), {1, -2})
  T.eq(list(np.ceil(ten{1.5, -1.5})), {2, -1})
  T.eq(list(np.sign(ten{-3, 0, 5})), {-1, 0, 1})
end)

T.test("np.abs exists (API lists it)", function()
  T.truthy(np.abs ~= nil, "np.abs is missing")
  T.eq(list(np.abs(ten{-1, 2, -3.5})), {1, 2, 3.5})
end)

T.test("unary math: hand values and accuracy", function()
  -- log1p/expm1 stay accurate near 0 (naive log(1+x) loses digits at 1e-12)
  local function rel(got, want) return math.abs(got - want) / math.abs(want) end
  T.truthy(rel(torch.log1p(ten({1e-12}, "float64")):item(), 1e-12 - 5e-25) < 1e-12, "log1p(1e-12)")
  T.truthy(rel(torch.expm1(ten({1e-12}, "float64")):item(), 1e-12 + 5e-25) < 1e-12, "expm1(1e-12)")
  T.truthy(rel(torch.log1p(ten({-1e-9}, "float32")):item(), -1e-9 - 5e-19) < 1e-6, "log1p float32")
  T.truthy(rel(torch.expm1(ten({1e-9}, "float32")):item(), 1e-9) < 1e-6, "expm1 float32")
  T.near(torch.log1p(ten{1e-10}):item(), 1e-10, 1e-6)
  T.eq(list(torch.rsqrt(ten{4.0, 0.25})), {0.5, 2})
  T.eq(list(torch.sigmoid(ten{0.0})), {0.5})
  T.near(torch.sigmoid(ten({-800, 800}, "float64")), {0, 1}, 1e-12)
  T.near(torch.tanh(ten({-50, 50}, "float64")), {-1, 1}, 1e-12)
  -- round: halves to even
  T.eq(list(ten{0.5, 1.5, 2.5, -0.5, -1.5, 2.4, -2.6}:round()), {0, 2, 2, 0, -2, 2, -3})
  T.eq(list(ten{1.5, 2.5, -3.5}:floor()), {1, 2, -4})
  T.eq(list(ten{1.5, 2.5, -3.5}:ceil()), {2, 3, -3})
  T.eq(list(ten{1.5, 2.5, -3.5}:trunc()), {1, 2, -3})
  -- integer inputs: rounding keeps them, math gives the default float
  local a = ten{-2, 3}
  T.eq(dt(a:floor()), "int64"); T.eq(list(a:round()), {-2, 3})
  T.eq(dt(a:abs()), "int64"); T.eq(list(a:abs()), {2, 3})
  T.eq(dt(a:sign()), "int64"); T.eq(list(a:sign()), {-1, 1})
  T.eq(dt(a:relu()), "int64"); T.eq(list(a:relu()), {0, 3})
  T.eq(dt(a:neg()), "int64")
  T.eq(dt(a:exp()), "float32"); T.near(a:exp(), {math.exp(-2), math.exp(3)}, 1e-6)
  T.eq(dt(ten{true}:exp()), "float32")
  T.eq(list(torch.sqrt(ten{4, 9})), {2, 3})
end)

T.test("NaN and inf through maximum/minimum/relu/sign/abs/clamp", function()
  local n = ten{nan, 1, -inf, inf, 0}
  local zeros = torch.zeros(5)
  T.eq(list(torch.maximum(n, zeros)), {nan, 1, 0, inf, 0})
  T.eq(list(torch.maximum(zeros, n)), {nan, 1, 0, inf, 0})
  T.eq(list(torch.minimum(n, zeros)), {nan, 0, -inf, 0, 0})
  T.eq(list(torch.minimum(zeros, n)), {nan, 0, -inf, 0, 0})
  T.eq(list(torch.minimum(n, 0)), {nan, 0, -inf, 0, 0})
  T.eq(list(np.maximum(n, 0)), {nan, 1, 0, inf, 0})
  T.eq(list(n:relu()), {nan, 1, 0, inf, 0})
  -- sign of NaN is NaN (NumPy's answer; PyTorch's CPU kernel gives 0, see pytorch#41245)
  T.eq(list(n:sign()), {nan, 1, -1, 1, 0})
  T.eq(list(n:abs()), {nan, 1, inf, inf, 0})
  T.eq(list(n:clamp(-1, 1)), {nan, 1, -1, 1, 0})
  T.eq(list(n:clamp{min = 0}), {nan, 1, 0, inf, 0})
  T.eq(list(n:clamp{max = 0}), {nan, 0, -inf, 0, 0})
  T.eq(list(n:exp()), {nan, ten{1.0}:exp():item(), 0, inf, 1})
  T.eq(list(ten{-1.0, 0.0}:log()), {nan, -inf})
  T.eq(list(ten{-1.0}:sqrt()), {nan})
  T.eq(list(ten{nan, inf, -inf, 1}:sigmoid()), {nan, 1, 0, ten{1.0}:sigmoid():item()})
end)

---------------------------------------------------------------------------------------------
-- Binary math

T.test("pow maximum minimum atan2 remainder fmod floor_divide", function()
  local x = ten({-2.5, -1, 0.5, 3}, "float64")
  local y = ten({2, 3, 1.5, 0.5}, "float64")
  local xs, ys = x:tolist(), y:tolist()
  local function ref(f) local r = {} for i = 1, #xs do r[i] = f(xs[i], ys[i]) end return r end
  T.near(torch.pow(x, y), ref(function(a, b) return a ^ b end), 1e-12)
  T.near(x:pow(2), ref(function(a) return a * a end), 1e-12)
  T.near(torch.pow(2, x), ref(function(a) return 2 ^ a end), 1e-12)
  T.near(np.power(x, y), ref(function(a, b) return a ^ b end), 1e-12)
  T.eq(list(torch.maximum(x, y)), ref(math.max))
  T.eq(list(torch.minimum(x, y)), ref(math.min))
  T.eq(list(x:maximum(y)), ref(math.max))
  T.eq(list(np.minimum(x, y)), ref(math.min))
  T.near(torch.atan2(x, y), ref(function(a, b) return math.atan(a, b) end), 1e-12)
  T.near(np.arctan2(x, y), ref(function(a, b) return math.atan(a, b) end), 1e-12)
  T.near(torch.remainder(x, y), ref(function(a, b) return a - math.floor(a / b) * b end), 1e-12)
  T.near(np.mod(x, y), ref(function(a, b) return a - math.floor(a / b) * b end), 1e-12)
  T.near(torch.fmod(x, y), ref(math.fmod), 1e-12)
  T.near(torch.floor_divide(x, y), ref(function(a, b) return math.floor(a / b) end), 1e-12)
  T.near(np.floor_divide(x, y), ref(function(a, b) return math.floor(a / b) end), 1e-12)
  -- integer pow and mixed dtypes
  T.eq(list(np.power(ten{1, 2, 3}, 2)), {1, 4, 9}); T.eq(dt(np.power(ten{1, 2, 3}, 2)), "int64")
  T.eq(list(ten{1.5} ^ ten{2}), {2.25})
  T.eq(list(torch.maximum(ten{1, 5}, ten{2.5, 2.5})), {2.5, 5})
  T.eq(dt(torch.maximum(ten{1, 5}, ten{2.5, 2.5})), "float32")
  T.eq(list(torch.minimum(ten{1, 2, 3}, 2.5)), {1, 2, 2.5})
  T.eq(list(torch.maximum(ten{true, false}, ten{false, false})), {true, false})
  T.eq(dt(torch.atan2(ten{1}, ten{1})), "float32")
  T.near(torch.atan2(ten{1}, ten{1}), {math.pi / 4}, 1e-6)
  T.near(ten{-8.0} ^ (1 / 3), {nan})
end)

---------------------------------------------------------------------------------------------
-- clamp, where, lerp

T.test("clamp in all its forms", function()
  local x = ten{-2.0, 0.5, 3.0}
  T.eq(list(x:clamp(-1, 1)), {-1, 0.5, 1})
  T.eq(list(torch.clamp(x, -1, 1)), {-1, 0.5, 1})
  T.eq(list(x:clamp{min = 0}), {0, 0.5, 3})
  T.eq(list(x:clamp{max = 0}), {-2, 0, 0})
  T.eq(list(x:clamp{min = -1, max = 1}), {-1, 0.5, 1})
  T.eq(list(torch.clamp(x, {min = 0})), {0, 0.5, 3})
  T.eq(list(x:clamp(0)), {0, 0.5, 3})
  T.eq(list(x:clamp(nil, 0)), {-2, 0, 0})
  T.eq(list(torch.clip(x, -1, 1)), {-1, 0.5, 1})
  T.eq(list(np.clip(x, -1, 1)), {-1, 0.5, 1})
  T.eq(list(np.clip(ten{1, 5, 9}, 2, 8)), {2, 5, 8})
  T.eq(list(np.clip(x, {a_min = 0})), {0, 0.5, 3})
  T.eq(list(np.clip(x, {a_max = 0})), {-2, 0, 0})
  -- tensor bounds broadcast
  T.eq(list(x:clamp(ten{0, 0, 0}, 2)), {0, 0.5, 2})
  T.eq(list(x:clamp(ten{-3, 1, 0}, ten{-2.5, 2, 1})), {-2.5, 1, 1})
  -- dtypes: int stays int with int bounds; a float bound gives the default float
  T.eq(dt(ten{1, 2, 3}:clamp(2, 3)), "int64"); T.eq(list(ten{1, 2, 3}:clamp(2, 3)), {2, 2, 3})
  T.eq(dt(ten{1, 2, 3}:clamp(1.5, 2.5)), "float32"); T.eq(list(ten{1, 2, 3}:clamp(1.5, 2.5)), {1.5, 2, 2.5})
  T.eq(dt(x:clamp(0, 1)), "float32")
  T.eq(dt(x:double():clamp(0, 1)), "float64")
  err(function() return x:clamp() end, "clamp")
end)

T.test("clamp with min > max sets everything to max (PyTorch and NumPy)", function()
  local x = ten{0.0, 1.5, 3.0}
  T.eq(list(x:clamp(2, 1)), {1, 1, 1})
  T.eq(list(torch.clamp(x, {min = 2, max = 1})), {1, 1, 1})
  T.eq(list(np.clip(x, 2, 1)), {1, 1, 1})
  T.eq(list(x:clone():clamp_(2, 1)), {1, 1, 1})
end)

T.test("where with numbers and tensors", function()
  local c = ten{true, false, true}
  local a = ten{1, 2, 3}
  local f = ten{1.5, 2.5, -3.5}
  T.eq(list(torch.where(c, a, f)), {1, 2.5, 3}); T.eq(dt(torch.where(c, a, f)), "float32")
  T.eq(list(torch.where(c, 1, 0)), {1, 0, 1}); T.eq(dt(torch.where(c, 1, 0)), "int64")
  T.eq(list(torch.where(c, 1.5, a)), {1.5, 2, 1.5}); T.eq(dt(torch.where(c, 1.5, a)), "float32")
  T.eq(list(torch.where(c, a, 0)), {1, 0, 3}); T.eq(dt(torch.where(c, a, 0)), "int64")
  T.eq(list(np.where(c, a, -1)), {1, -1, 3})
  T.eq(list(torch.where(a:gt(1), a, -1)), {-1, 2, 3})
  T.eq(list(c:where(a, f)), {1, 2.5, 3})
  -- a non-bool condition is tested against zero
  T.eq(list(torch.where(ten{1, 0, 2}, 1, 0)), {1, 0, 1})
  -- broadcasting of all three
  local r = torch.where(ten{true, false}, ten{{1}, {2}}, ten{10, 20})
  T.eq(r.shape, {2, 2}); T.eq(list(r), {{1, 20}, {2, 20}})
  T.eq(list(torch.where(c, ten({1, 2, 3}, "float64"), f)), {1, 2.5, 3})
  T.eq(dt(torch.where(c, ten({1, 2, 3}, "float64"), f)), "float64")
  err(function() return torch.where(ten{true, false}, torch.zeros(3), 0) end, "where")
end)

T.test("lerp", function()
  local a = ten{1.0, 2.0, -1.0}
  local b = ten{3.0, 6.0, 1.0}
  T.eq(list(a:lerp(b, 0.5)), {2, 4, 0})
  T.eq(list(torch.lerp(a, b, 0)), {1, 2, -1})
  T.eq(list(torch.lerp(a, b, 1)), {3, 6, 1})
  T.eq(list(torch.lerp(a, b, ten{0, 0.5, 1})), {1, 4, 1})
  T.eq(list(a:lerp(b, torch.tensor(0.25))), {1.5, 3, -0.5})
  T.eq(list(torch.lerp(ten{1.0}, ten{3.0, 5.0}, 0.5)), {2, 3})
  local d = ten({0, 10}, "float64")
  T.eq(dt(d:lerp(ten({10, 20}, "float64"), 0.3)), "float64")
  T.near(d:lerp(ten({10, 20}, "float64"), 0.3), {3, 13}, 1e-12)
  local x = ten{1.0, 2.0}
  T.truthy(rawequal(x:lerp_(ten{3.0, 4.0}, 0.5), x))
  T.eq(list(x), {2, 3})
end)

---------------------------------------------------------------------------------------------
-- In-place forms and out=

T.test("in-place methods return the same tensor and change it", function()
  local x = torch.zeros(3)
  T.truthy(rawequal(x:add_(2), x)); T.eq(list(x), {2, 2, 2})
  T.truthy(rawequal(x:sub_(ten{1, 0, -1}), x)); T.eq(list(x), {1, 2, 3})
  T.truthy(rawequal(x:mul_(2), x)); T.eq(list(x), {2, 4, 6})
  T.truthy(rawequal(x:div_(4), x)); T.eq(list(x), {0.5, 1, 1.5})
  T.truthy(rawequal(x:clamp_(0.75, 1.25), x)); T.eq(list(x), {0.75, 1, 1.25})
  T.truthy(rawequal(x:clamp_{min = 1}, x)); T.eq(list(x), {1, 1, 1.25})
  T.truthy(rawequal(x:clamp_{max = 1}, x)); T.eq(list(x), {1, 1, 1})
  T.truthy(rawequal(x:pow_(2), x))
  T.truthy(rawequal(x:neg_(), x)); T.eq(list(x), {-1, -1, -1})
  T.truthy(rawequal(x:abs_(), x)); T.eq(list(x), {1, 1, 1})
  T.truthy(rawequal(x:mul_(4):sqrt_(), x)); T.eq(list(x), {2, 2, 2})
  T.truthy(rawequal(x:exp_(), x)); T.near(x, {math.exp(2), math.exp(2), math.exp(2)}, 1e-6)
  local y = ten{-2.5, 0.5, 1.7}
  T.truthy(rawequal(y:relu_(), y)); T.eq(list(y), {0, 0.5, ten{1.7}:item()})
  T.truthy(rawequal(y:floor_(), y)); T.eq(list(y), {0, 0, 1})
  T.eq(dt(y), "float32")
  local i = ten{5, 7}
  T.eq(list(i:remainder_(3)), {2, 1})
  T.eq(list(ten{5}:floor_divide_(2)), {2})
  T.eq(list(ten{5}:fmod_(3)), {2})
  T.eq(list(ten{5}:maximum_(7)), {7})
  T.eq(list(ten{2}:pow_(3)), {8})
  -- broadcasting into self
  local m = torch.zeros(2, 3)
  m:add_(ten{1, 2, 3})
  T.eq(list(m), {{1, 2, 3}, {1, 2, 3}})
  -- an int tensor takes an int (or bool) right-hand side
  local k = ten{1, 2}
  k:add_(true); T.eq(list(k), {2, 3})
  k:sub_(ten{true, false}); T.eq(list(k), {1, 3}); T.eq(dt(k), "int64")
end)

T.test("in-place changes are visible through views", function()
  local x = torch.zeros(2, 3)
  local row = x[2]
  row:add_(5)
  T.eq(list(x), {{0, 0, 0}, {5, 5, 5}})
  x:mul_(2)
  T.eq(list(row), {10, 10, 10})
  local t = x.T
  t:sub_(1)
  T.eq(list(x), {{-1, -1, -1}, {9, 9, 9}})
  t:clamp_(0, 5)
  T.eq(list(x), {{0, 0, 0}, {5, 5, 5}})
  -- a column of the transposed view is non-contiguous in x
  local col = x.T[2]
  col:add_(ten{1, 2})
  T.eq(list(x), {{0, 1, 0}, {5, 7, 5}})
  -- a number op into a view of an int tensor
  local i = ten{{1, 2}, {3, 4}}
  i[1]:mul_(10)
  T.eq(list(i), {{10, 20}, {3, 4}})
end)

T.test("NumPy out=", function()
  local a = ten{1, 2, 3}
  local r = np.add(a, a, {out = a})
  T.eq(list(a), {2, 4, 6}); T.eq(list(r), {2, 4, 6})
  np.multiply(a, 2, {out = a}); T.eq(list(a), {4, 8, 12})
  local f = torch.zeros(3)
  np.multiply(a, 0.5, {out = f}); T.eq(list(f), {2, 4, 6}); T.eq(dt(f), "float32")
  np.add(a, 1, {out = f}); T.eq(list(f), {5, 9, 13})  -- int result cast into a float out
  np.sqrt(ten{4.0, 9.0, 16.0}, {out = f}); T.eq(list(f), {2, 3, 4})
  local d = torch.zeros(3, {dtype = "float64"})
  torch.add(f, 1, {out = d}); T.eq(list(d), {3, 4, 5})
  np.maximum(d, 4, {out = d}); T.eq(list(d), {4, 4, 5})
  local b = torch.zeros(3, {dtype = "bool"})
  np.greater(a, 5, {out = b}); T.eq(list(b), {false, true, true})
  -- out= through a view writes into the base
  local m = torch.zeros(2, 3)
  np.add(ten{1.0, 2.0, 3.0}, 1, {out = m[2]})
  T.eq(list(m), {{0, 0, 0}, {2, 3, 4}})
  err(function() return np.add(a, 1, {out = torch.zeros(2)}) end, "add")
  local msg = T.error(function() return np.add(a, 1, {out = torch.zeros(2)}) end, "{2}")
  T.truthy(msg:find("{3}", 1, true), "out= shape error names both shapes: " .. msg)
end)

---------------------------------------------------------------------------------------------
-- float16 / bfloat16

T.test("float16 and bfloat16 are stored as such, computed in float32", function()
  local h = ten{1, 2, 3}:half()
  local b = ten{1, 2, 3}:bfloat16()
  T.eq(dt(h * 2), "float16"); T.eq(dt(h + h), "float16"); T.eq(dt(h / 3), "float16")
  T.eq(dt(b * 2), "bfloat16"); T.eq(dt(b / 3), "bfloat16"); T.eq(dt(b:exp()), "bfloat16")
  T.eq(h.itemsize, 2); T.eq(b.itemsize, 2)
  -- values are the correctly rounded float32 results
  T.eq((h / 3):tolist()[1], 0.333251953125)      -- nearest half to 1/3
  T.eq((b / 3):tolist()[1], 0.333984375)         -- nearest bfloat16 to 1/3
  T.eq(ten{3}:half():exp():item(), 20.078125)    -- exp(3) = 20.0855 -> half grid 1/64
  T.eq(ten{3}:bfloat16():sqrt():item(), 1.734375) -- sqrt(3) = 1.73205 -> bf16 grid 1/128
  T.eq(ten{0.1}:half():item(), 0.0999755859375)
  T.eq(ten{0.1}:bfloat16():item(), 0.10009765625)
  T.eq(list(h * 2), {2, 4, 6})
  T.eq(list(b + 0.5), {1.5, 2.5, 3.5})
  -- 2049 is not a half: 2048 + 1 rounds back to 2048 (ties to even)
  T.eq((ten{2048}:half() + 1):item(), 2048.0)
  T.eq((ten{2048}:half() + 2):item(), 2050.0)
  -- overflow to inf
  T.eq((ten{60000}:half() + 10000):item(), inf)
  T.eq((h * 1e5):tolist(), {inf, inf, inf})
  -- bfloat16 has float32's range
  T.eq((b * 1e30):tolist()[1] > 1e29, true)
  -- comparisons and reductions-free ops work
  T.eq(list(h:gt(1.5)), {false, true, true})
  T.eq(list(torch.maximum(h, 2)), {2, 2, 3}); T.eq(dt(torch.maximum(h, 2)), "float16")
  T.eq(list(b:clamp(1.5, 2.5)), {1.5, 2, 2.5})
  -- in place on half
  local hh = ten{1.0, 2.0}:half()
  hh:mul_(0.1)
  T.eq(dt(hh), "float16")
  T.eq(hh:tolist(), {ten{0.1}:half():item(), ten{0.2}:half():item()})
end)

---------------------------------------------------------------------------------------------
-- Errors (and the interpreter stays usable after each)

T.test("float result into an int tensor in place", function()
  local a = ten{1, 2, 3}
  err(function() a:div_(2) end, "result type float32 can't be cast")
  err(function() a:mul_(1.5) end, "result type float32 can't be cast")
  err(function() a:add_(ten{0.5}) end, "result type float32 can't be cast")
  err(function() a:sqrt_() end, "result type float32 can't be cast")
  err(function() np.add(a, 0.5, {out = a}) end, "result type float64 can't be cast")
  err(function() np.sqrt(ten{4.0}, {out = torch.zeros(1, {dtype = "int64"})}) end, "can't be cast")
  local msg = err(function() a:div_(2) end, "int64")
  T.truthy(msg:find("^div"), "message starts with the op name: " .. msg)
  T.eq(list(a), {1, 2, 3}, "a failed in-place op leaves the tensor unchanged")
  -- a float result into a bool tensor, an int result into bool
  err(function() ten{true}:add_(1) end, "can't be cast")
end)

T.test("clamp_ error names clamp", function()
  local msg = T.error(function() ten{1, 2, 3}:clamp_(0.5, 2) end, "can't be cast")
  T.truthy(msg:find("^clamp"), "message should start with clamp: " .. msg)
  still_usable()
end)

T.test("integer division by zero", function()
  local a = ten{1, 2, 3}
  err(function() return a // 0 end, "floor_divide: integer division by zero")
  err(function() return a % 0 end, "remainder: integer division by zero")
  err(function() return torch.fmod(a, 0) end, "fmod: integer division by zero")
  err(function() return a // ten{1, 0, 1} end, "integer division by zero")
  err(function() return a % ten{1, 0, 1} end, "integer division by zero")
  err(function() return a:remainder_(0) end, "integer division by zero")
  T.eq(list(a), {1, 2, 3})
  err(function() return a ^ -1 end, "pow")
end)

T.test("shape mismatch errors start with the op and name both shapes", function()
  local cases = {
    {"add", function() return torch.zeros(2, 3) + torch.zeros(3, 2) end},
    {"sub", function() return torch.zeros(2) - torch.zeros(3) end},
    {"mul", function() return torch.zeros(4) * torch.zeros(3) end},
    {"div", function() return torch.zeros(4, 2) / torch.zeros(3) end},
    {"maximum", function() return torch.maximum(torch.zeros(2), torch.zeros(3)) end},
    {"lt", function() return torch.lt(torch.zeros(2), torch.zeros(3)) end},
    {"add", function() return np.add(torch.zeros(2), torch.zeros(3)) end},
  }
  for _, c in ipairs(cases) do
    local msg = err(c[2], "cannot be broadcast")
    T.truthy(msg:find("^" .. c[1] .. ":"), "should start with '" .. c[1] .. ":': " .. msg)
  end
  local msg = err(function() return torch.zeros(2, 3) + torch.zeros(3, 2) end, "{2,3}")
  T.truthy(msg:find("{3,2}", 1, true), msg)
  -- in place: self cannot grow
  msg = err(function() torch.zeros(1, 3):add_(torch.zeros(2, 3)) end, "{1,3}")
  T.truthy(msg:find("{2,3}", 1, true), msg)
  err(function() torch.zeros(2, 3):mul_(torch.zeros(2, 1, 3)) end, "mul")
end)

T.test("bool subtraction and negation are errors", function()
  local b = ten{true, false}
  err(function() return b - b end, "sub")
  err(function() return torch.sub(b, b) end, "bool")
  err(function() return -b end, "neg")
  err(function() b:sub_(b) end, "bool")
end)

T.test("bitwise ops on floats are errors", function()
  local f = ten{1.5, 2.5}
  err(function() return f & 1 end, "bitwise_and")
  err(function() return 1 | f end, "bitwise_or")
  err(function() return f ~ f end, "bitwise_xor")
  err(function() return ~f end, "bitwise_not")
  err(function() return ten{1} & f end, "float32")
  err(function() return ten{1}:half() | 1 end, "float16")
end)

T.test("wrong argument types are errors naming the op", function()
  local a = ten{1, 2, 3}
  err(function() return a + "x" end, "add: expected a tensor or a number")
  err(function() return "x" * a end, "mul")
  err(function() return a + {} end, "add")
  err(function() return a - nil end, "sub")
  err(function() return a:add() end, "add")
  err(function() return torch.exp("x") end, "exp: expected a tensor")
  err(function() return torch.exp(1) end, "exp")
  err(function() return torch.add("x", a) end, "add")
  err(function() return a:lt("a") end, "lt")
  err(function() return torch.clamp(a, "x") end, "clamp")
  err(function() return torch.where("x", a, a) end, "where")
  err(function() return torch.where(ten{true}, a) end, "where")
  err(function() return torch.maximum(a, print) end, "maximum")
  err(function() return np.sqrt(a, {out = "x"}) end, "sqrt")
  err(function() return a:lerp(a, 0.5) end, "lerp")
end)

T.test("two numbers and no tensor is a clean error", function()
  local msg = T.error(function() return torch.add(1, 2) end, "add")
  T.truthy(msg:find("^add:"), "should start with 'add:' (not an internal error): " .. msg)
  msg = T.error(function() return torch.maximum(1, 2) end, "maximum")
  T.truthy(msg:find("^maximum:"), msg)
  still_usable()
end)

T.test("many errors in a row leave the interpreter working", function()
  for i = 1, 200 do
    pcall(function() return ten{1} // 0 end)
    pcall(function() return torch.zeros(2) + torch.zeros(3) end)
    pcall(function() return ten{1.5} & 1 end)
  end
  still_usable()
  T.eq(list(torch.ones(2) * 3), {3, 3})
end)

T.test("tanh and sigmoid: vectorised, within 2 ulp, the same bits in every layout", function()
  -- float64 against long-double values (NumPy's np.tanh on np.longdouble), on both sides of
  -- the switch from tanh's polynomial to 1 - 2 / (e^2x + 1) at 0.55.
  local cases = {{0.5499999, 0.50052013624227964517, 0.63413556781003599383},
                 {0.55, 0.50052021119023526463, 0.63413559101080074765},
                 {0.5500001, 0.50052028613818322356, 0.63413561421156472431},
                 {0.6, 0.53704956699803529929, 0.64565630622579539555},
                 {1, 0.76159415595576485103, 0.73105857863000489605},
                 {3, 0.99505475368673046432, 0.95257412682243325364},
                 {1e-5, 9.9999999996666679423e-06, 0.50000250000000001638},
                 {-0.3, -0.29131261245159090212, 0.42555748318834102362},
                 {9, 0.99999996954004100047, 0.99987660542401379793}}
  local xs = {}
  for i, c in ipairs(cases) do xs[i] = c[1] end
  local x = ten(xs, "float64")
  local t, s = x:tanh():tolist(), x:sigmoid():tolist()
  for i, c in ipairs(cases) do
    T.truthy(math.abs(t[i] - c[2]) <= 2 * 2^-52 * math.abs(c[2]), "tanh(" .. c[1] .. ") = " .. t[i])
    T.truthy(math.abs(s[i] - c[3]) <= 2 * 2^-52 * math.abs(c[3]), "sigmoid(" .. c[1] .. ") = " .. s[i])
  end
  -- float32 against float64 rounded, around its switch at 0.625 and over [-10, 10].
  local a = torch.cat({torch.linspace(0.62, 0.63, 1001), torch.linspace(-10, 10, 20001)})
  for name, f in pairs({tanh = torch.tanh, sigmoid = torch.sigmoid}) do
    local got, want = f(a):double(), f(a:double()):float():double()
    local ulp = torch.pow(2, torch.floor(torch.log2(want:abs():clamp{min = 2^-126})) - 23)  -- (0 in the grid)
    local worst = ((got - want):abs() / ulp):max():item()
    T.truthy(worst <= 2, name .. " float32: " .. worst .. " ulp")
  end
  -- Special values: odd through -0, saturated at +-inf, NaN kept; sigmoid's far tail.
  local sp = ten({-0.0, 0.0, 1 / 0, -1 / 0, 0 / 0, 40, -40, 1e-30}, "float32"):tanh():tolist()
  T.eq(1 / sp[1], -1 / 0); T.eq(1 / sp[2], 1 / 0)
  T.eq({sp[3], sp[4], sp[6], sp[7], sp[8]}, {1, -1, 1, -1, ten({1e-30}, "float32"):item()})
  T.truthy(sp[5] ~= sp[5], "tanh(nan)")
  local sg = ten({-1 / 0, 1 / 0, 0 / 0, -100, -700}, "float64"):sigmoid():tolist()
  T.eq({sg[1], sg[2]}, {0, 1})
  T.truthy(sg[3] ~= sg[3], "sigmoid(nan)")
  for i, x in ipairs({100, 700}) do
    local want = 1 / (1 + math.exp(x))
    T.truthy(math.abs(sg[3 + i] - want) <= 2 * 2^-52 * want, "sigmoid(-" .. x .. ") = " .. sg[3 + i])
  end
  -- Contiguous, strided (through the kernels' buffer) and offset slices give the same bits.
  for _, dt in ipairs({"float32", "float64"}) do
    local v = torch.linspace(-12, 12, 3001, {dtype = dt})
    for _, name in ipairs({"tanh", "sigmoid"}) do
      local whole = v[name](v)
      T.truthy(torch.equal(v[{{258, -1}}][name](v[{{258, -1}}]), whole[{{258, -1}}]), name .. " offset slice")
      T.truthy(torch.equal(torch[name](v[{{1, -1, 3}}]), whole[{{1, -1, 3}}]), name .. " stepped slice")
      local w = v:clone()
      w[name .. "_"](w)
      T.truthy(torch.equal(w, whole), name .. " in place")
    end
  end
end)

T.test("log: vectorised, within 1 ulp, glibc's values where it hands over, the same bits in every layout", function()
  -- float64 against long-double values (NumPy's np.log on np.longdouble), on both sides of
  -- the sqrt(1/2) and sqrt(2) boundaries of the reduction, near 1 and far out.
  local cases = {{0.7071067811865475, -0.346573590279972754136}, {0.7071067811865476, -0.346573590279972587602},
                 {1.4142135623730951, 0.346573590279972698625}, {1.0000001, 9.99999950583870436525e-08},
                 {0.9999999, -1.0000000494736473776e-07}, {2, 0.693147180559945286227},
                 {1e-300, -690.77552789821368151}, {1e300, 690.77552789821368151},
                 {123.456, 4.81588481728326378573}, {3e-5, -10.4143131763021195013}}
  local xs = {}
  for i, c in ipairs(cases) do xs[i] = c[1] end
  local got = ten(xs, "float64"):log():tolist()
  for i, c in ipairs(cases) do
    T.truthy(math.abs(got[i] - c[2]) <= 2^-52 * math.abs(c[2]), "log(" .. c[1] .. ") = " .. got[i])
  end
  -- float32 against float64 rounded, over [0.5, 2] and 10^-37..10^38.
  local a = torch.cat({torch.linspace(0.5, 2, 30001), torch.pow(10, torch.linspace(-37, 38, 30001, {dtype = "float64"})):float()})
  local g, want = a:log():double(), a:double():log():float():double()
  local ulp = torch.pow(2, torch.floor(torch.log2(want:abs():clamp{min = 2^-126})) - 23)
  local worst = ((g - want):abs() / ulp):max():item()
  T.truthy(worst <= 1, "log float32: " .. worst .. " ulp")
  -- 0, negatives, subnormals, infinities and NaN go to std::log, in a block with normal values.
  for _, dt in ipairs({"float32", "float64"}) do
    local sub = dt == "float32" and 1e-40 or 1e-310
    local l = ten({2, 0.0, -0.0, -1, sub, 1 / 0, -1 / 0, 0 / 0, 1}, dt):log():tolist()
    T.eq({l[2], l[3], l[6], l[9]}, {-1 / 0, -1 / 0, 1 / 0, 0})
    T.truthy(l[4] ~= l[4] and l[7] ~= l[7] and l[8] ~= l[8], dt .. ": log of a negative, -inf, NaN")
    T.truthy(math.abs(l[5] - math.log(sub)) <= 1e-6 * math.abs(math.log(sub)), dt .. ": log of a subnormal " .. l[5])
    T.near(ten({l[1]}), {math.log(2)}, 1e-7)
    local v = torch.linspace(0.01, 50, 3001, {dtype = dt})
    v[17] = -1  -- one block through std::log
    local whole = v:log()
    T.truthy(torch.equal(v[{{258, -1}}]:log(), whole[{{258, -1}}]), dt .. " offset slice")
    T.truthy(torch.equal(torch.log(v[{{1, -1, 3}}]), whole[{{1, -1, 3}}]), dt .. " stepped slice")
    local w = v:clone()
    w:log_()
    T.truthy(w[17]:item() ~= w[17]:item() and torch.equal(w:nan_to_num(), whole:nan_to_num()), dt .. " in place")
  end
end)

T.done()
