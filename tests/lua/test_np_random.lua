-- np.random against NumPy 1.24, bit for bit: the Generator of np.random.default_rng (PCG64)
-- and the legacy np.random.* functions (MT19937) replay the calls of np_random_cases.lua
-- (written by tests/reference/np_random_cases.py) and must give NumPy's exact values
-- (floats compared with ==). Also the errors, the separation from torch's generator, and a
-- small seeded NumPy program ported to tide.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local np = np or require("numpy")
local torch = torch or require("torch")
local cases = dofile(dir .. "np_random_cases.lua")

local function value(v)
  if torch.is_tensor(v) then
    if v.dtype == "bool" then v = v:long() end
    return v:tolist()
  end
  return v
end

-- Runs one Lua call of a case with `rng` in scope.
local function call(expr, rng)
  local env = setmetatable({rng = rng}, {__index = _ENV})
  return assert(load("return " .. expr, expr, "t", env))()
end

local function replay(group, start)
  for _, case in ipairs(cases[group]) do
    T.test(group .. " seed " .. case.seed, function()
      local rng = start(case.seed)
      for _, c in ipairs(case.calls) do
        local got = value(call(c[1], rng))
        T.eq(got, c[2], c[1] .. " with seed " .. case.seed)
        if type(c[2]) == "number" then T.eq(math.type(got), math.type(c[2]), c[1] .. ": number kind") end
      end
    end)
  end
end

replay("generator", function(seed) return np.random.default_rng(seed) end)
replay("legacy", function(seed) np.random.seed(seed) end)

-- Long streams stay in step (the ziggurats' rare paths, the cached gaussian):
--   np.random.seed(0); x = np.random.randn(64, 1000); y = np.random.randn(64, 10)
--   w1 = np.random.randn(1000, 100)      # the two-layer example's data (scripts/)
--   rng = np.random.default_rng(12345); z = rng.standard_normal(100000)
--   e = rng.exponential(1.0, 100000)
T.test("long streams: 10^5 ziggurat draws and the two-layer example's data", function()
  np.random.seed(0)
  local x, y, w1 = np.random.randn(64, 1000), np.random.randn(64, 10), np.random.randn(1000, 100)
  T.eq({x[{1, 1}]:item(), x[{64, 1000}]:item(), y[{64, 10}]:item(), w1[{1000, 100}]:item()},
       {1.764052345967664, -0.61637662370944035, 0.64650207650073288, 0.42471051936440274})
  local rng = np.random.default_rng(12345)
  local z, e = rng:standard_normal(100000), rng:exponential(1.0, 100000)
  T.eq({z[100000]:item(), z[54322]:item(), e[100000]:item(), e[12346]:item()},
       {-1.1626148740543023, 1.3775629460891505, 3.2228654168530042, 1.238005636180991})
end)

T.test("result dtypes and shapes follow NumPy", function()
  local rng = np.random.default_rng(3)
  T.eq(rng:random(2).dtype, "float64")
  T.eq(rng:random(2, "float32").dtype, "float32")
  T.eq(rng:integers(0, 5, 2).dtype, "int64")
  T.eq(rng:integers(0, 5, {size = 2, dtype = "int8"}).dtype, "int8")
  T.eq(rng:integers(0, 2, 2, "bool").dtype, "bool")
  T.eq(rng:choice(5, {2, 2}).shape, {2, 2})
  T.eq(rng:choice(np.ones(4, 3), 2).shape, {2, 3})
  T.eq(rng:integers(0, 5, {}).shape, {})
  T.eq(rng:random(0).shape, {0})
  T.eq(math.type(rng:integers(5)), "integer")
  T.eq(np.random.randint(3, 4, 2):tolist(), {3, 3})
  T.eq(np.random.choice(np.array{7, 8}, {size = {2, 1}}).shape, {2, 1})
  T.eq(np.random.Generator.random(np.random.default_rng(5), 2):tolist(), np.random.default_rng(5):random(2):tolist())
  T.truthy(tostring(rng):find("Generator(PCG64)", 1, true), tostring(rng))
end)

T.test("the torch generator and the NumPy streams are separate", function()
  torch.manual_seed(5)
  local a = torch.rand(4):tolist()
  torch.manual_seed(5)
  np.random.seed(1)
  np.random.randn(3)
  np.random.default_rng(2):standard_normal(3)
  T.eq(torch.rand(4):tolist(), a)
  np.random.seed(9)
  local b = np.random.rand(3):tolist()
  np.random.seed(9)
  torch.rand(10)
  T.eq(np.random.rand(3):tolist(), b)
end)

T.test("two Generators with one seed give one stream; without a seed they differ", function()
  local r1, r2 = np.random.default_rng(77), np.random.default_rng(77)
  T.eq(r1:random(3):tolist(), r2:random(3):tolist())
  T.truthy(not T.deep_eq(np.random.default_rng():random(4):tolist(), np.random.default_rng():random(4):tolist()))
  np.random.seed()
  T.eq(np.random.rand(2).shape, {2})
end)

T.test("errors name the op and the values", function()
  local rng = np.random.default_rng(0)
  T.error(function() rng:integers(5, 5) end, "integers: expected low < high, got low=5, high=5")
  T.error(function() rng:integers(5, 4, 2, {endpoint = true}) end, "expected low <= high, got low=5, high=4")
  T.error(function() rng:integers(0, 300, 2, "int8") end, "low=0, high=300 are out of bounds for int8")
  T.error(function() rng:integers(0, 3, 2, "float32") end, "dtype float32 is not supported")
  T.error(function() rng:integers(0, 3, -1) end, "sizes must be non-negative, got -1")
  T.error(function() rng:random(2, "int32") end, "random: dtype must be float64 or float32, got int32")
  T.error(function() rng:uniform(2, 1) end, "uniform: expected low <= high, got low=2, high=1")
  T.error(function() rng:uniform(-math.huge, 1) end, "high - low must be finite")
  T.error(function() rng:normal(0, -1) end, "normal: scale must be non-negative, got -1")
  T.error(function() rng:exponential(-2) end, "exponential: scale must be non-negative, got -2")
  -- array parameters: each element is checked, and they must broadcast to size
  T.error(function() rng:normal({0, 1}, {1, -1}) end, "normal: scale must be non-negative, got -1")
  T.error(function() rng:uniform({2, 1}, {1, 3}) end, "uniform: expected low <= high, got low=2, high=1")
  T.error(function() rng:normal({0, 1}, 1, 3) end, "normal: shapes {3} and {2} cannot be broadcast (3 vs 2 in dim 1)")
  T.error(function() rng:exponential(np.array{1, 2}, {2, 3}) end, "exponential: shapes {2,3} and {2} cannot be broadcast")
  T.error(function() rng:uniform(np.array{{1}, {2}}, 3, 2) end,
          "uniform: shape mismatch: a parameter of shape {2,1} cannot be broadcast to size {2}")
  T.error(function() rng:normal(np.array{true, false}) end, "normal: 'loc' must be a number or an array of numbers on the cpu")
  T.error(function() rng:choice(3, 2, true, {0.5, 0.6, 0.1}) end, "choice: probabilities do not sum to 1 (sum=1.2)")
  T.error(function() rng:choice(3, 2, true, {0.5, 0.5}) end, "a and p must have the same size, got 3 and 2")
  T.error(function() rng:choice(3, 2, true, {{0.5, 0.5, 0}}) end, "p must be 1-dimensional, got 2 dims")
  T.error(function() rng:choice(3, 2, true, {1.5, -0.5, 0}) end, "probabilities must be non-negative, got -0.5")
  T.error(function() rng:choice(3, 2, true, {0 / 0, 0.5, 0.5}) end, "probabilities contain NaN")
  T.error(function() rng:choice(3, 5, false) end, "cannot take a larger sample than the population when replace=false (5 > 3)")
  T.error(function() rng:choice(3, 3, {replace = false, p = {1, 0, 0}}) end, "fewer non-zero entries in p (1) than size (3)")
  T.error(function() rng:choice(0, 2) end, "a must be a positive integer or a non-empty tensor unless no samples are taken, got 0")
  T.error(function() rng:choice(3, 2, {replace = false, shufle = true}) end, "shufle")
  T.error(function() rng:integers(0, 3, {sise = 2}) end, "sise")
  T.error(function() rng:permutation(-1) end, "permutation: n must be non-negative, got -1")
  T.error(function() rng:shuffle(torch.tensor(1)) end, "shuffle: x must have at least one dim")
  T.error(function() np.random.Generator.random(5) end, "expected a Generator (np.random.default_rng()) as argument 1, got a number")
  T.error(function() np.random.default_rng(-1) end, "default_rng: the seed must be non-negative, got -1")
  T.error(function() np.random.default_rng(1.5) end, "the seed must be an integer, got 1.5")
  T.error(function() np.random.seed(2 ^ 32) end, "seed: the seed must be between 0 and 2^32 - 1, got 4294967296")
  T.error(function() np.random.seed(-1) end, "the seed must be non-negative, got -1")
  T.error(function() np.random.randint(3, 3) end, "randint: expected low < high, got low=3, high=3")
  T.error(function() np.random.choice(3, 4, false) end, "choice: cannot take a larger sample")
  T.error(function() np.random.choice(3, 2, {p = {0.2, 0.2, 0.2}}) end, "probabilities do not sum to 1 (sum=0.6)")
  T.error(function() np.random.choice(3, 2, {shuffle = false}) end, "shuffle")
  T.error(function() np.random.choice(3, 2, false, nil, 5) end, "choice")
  T.still_usable()
end)

-- NumPy's random-walk and Monte-Carlo examples, seeded, and a shuffled minibatch loop:
--   rng = np.random.default_rng(2024)
--   steps = rng.choice(np.array([-1, 1]), size=1000)
--   walk = steps.cumsum(); print(walk[-1], walk.min(), walk.max())          # -30 -47 0
--   x, y = rng.random(100000), rng.random(100000)
--   print(4 * np.count_nonzero(x * x + y * y < 1) / 100000)                  # 3.14612
--   np.random.seed(123)
--   data = np.arange(100); np.random.shuffle(data)
--   for i in range(0, 100, 25): print(data[i:i + 25].sum(), data[i])       # 1129 8, 1367 91, 959 16, 1495 48
T.test("a seeded NumPy program gives NumPy's printed numbers", function()
  local rng = np.random.default_rng(2024)
  local steps = rng:choice(np.array{-1, 1}, {size = 1000})
  local walk = steps:cumsum(1)
  T.eq({walk[-1]:item(), walk:min():item(), walk:max():item()}, {-30, -47, 0})
  local x, y = rng:random(100000), rng:random(100000)
  T.eq(4 * np.count_nonzero((x * x + y * y):lt(1)) / 100000, 3.14612)
  np.random.seed(123)
  local data = np.arange(100)
  np.random.shuffle(data)
  local batches = {}
  for i = 1, 100, 25 do batches[#batches + 1] = {data[{{i, i + 24}}]:sum():item(), data[i]:item()} end
  T.eq(batches, {{1129, 8}, {1367, 91}, {959, 16}, {1495, 48}})
end)

T.done()
