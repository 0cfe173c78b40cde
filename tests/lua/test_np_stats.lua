-- The statistics and comparison functions (numpy_stats.lua, torch_stats.lua) and the ufunc
-- methods: exact values from NumPy 1.24 / PyTorch 1.13 (the Python expression above each
-- check), result dtypes, and the errors for bad input. ops_stats.lua checks them against
-- NumPy on random cases.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

local NAN = 0 / 0
local A = torch.tensor({{3, 1, 2, 2}, {4, 8, 6, 5}}, {dtype = "float64"})

T.test("median, quantile and percentile follow NumPy", function()
  -- np.median(A, axis=1) -> [2. 5.5]; integers give float64
  T.eq(np.median(A, {axis = 2}):tolist(), {2.0, 5.5})
  local m = np.median(torch.tensor{{1, 2}, {3, 4}}, {axis = -1, keepdims = true})
  T.eq({m.dtype, m.shape, m:tolist()}, {"float64", {2, 1}, {{1.5}, {3.5}}})
  -- np.median([1., nan, 3.]) -> nan; np.nanmedian -> 2.0; np.median([]) -> nan
  T.near(np.median({1.0, NAN, 3.0}):item(), NAN)
  T.eq(np.nanmedian({1.0, NAN, 3.0}):item(), 2.0)
  T.near(np.median(torch.zeros(0)):item(), NAN)
  -- np.quantile(A, [0.25, 0.5], axis=1, method='hazen') -> [[1.5 4.5] [2. 5.5]]
  T.eq(np.quantile(A, {0.25, 0.5}, {axis = 2, method = "hazen"}):tolist(), {{1.5, 4.5}, {2.0, 5.5}})
  -- np.percentile([1,2,3,4], 40, method='closest_observation') -> 2 (int64, discrete)
  local p = np.percentile({1, 2, 3, 4}, 40, {method = "closest_observation"})
  T.eq({p.dtype, p:item()}, {"int64", 2})
  -- averaged_inverted_cdf at 0.5 -> 2.5; normal_unbiased at 0.3 -> 1.65; linear on int32 -> float64
  T.eq(np.quantile({1.0, 2.0, 3.0, 4.0}, 0.5, {method = "averaged_inverted_cdf"}):item(), 2.5)
  T.near(np.quantile({1.0, 2.0, 3.0, 4.0}, 0.3, {method = "normal_unbiased"}):item(), 1.65, 1e-15)
  T.eq(np.quantile(torch.tensor({1, 2}, {dtype = "int32"}), 0.5).dtype, "float64")
  -- np.nanquantile([nan, 1., 3.], [0, 1]) -> [1. 3.]
  T.eq(np.nanquantile({NAN, 1.0, 3.0}, torch.tensor{0.0, 1.0}):tolist(), {1.0, 3.0})
  -- torch.quantile(torch.tensor([1.,2,3,4]), torch.tensor([0.25, 0.5])) -> [1.75, 2.5]
  T.eq(torch.quantile(torch.tensor{1.0, 2.0, 3.0, 4.0}, torch.tensor{0.25, 0.5}):tolist(), {1.75, 2.5})
end)

T.test("torch.median gives the lower median and 1-based indices", function()
  local x = torch.tensor{{3.0, NAN, 1.0, NAN}, {2.0, 1.0, 4.0, 3.0}}
  -- torch.median(x, 1) -> values [nan, 2.], indices [1, 0]
  local v, i = torch.median(x, 2)
  T.near(v, {NAN, 2.0})
  T.eq(i:tolist(), {2, 1})
  -- torch.nanmedian(x, 1) -> values [1., 2.], indices [2, 0]
  v, i = torch.nanmedian(x, 2, true)
  T.eq({v:tolist(), i:tolist()}, {{{1.0}, {2.0}}, {{3}, {1}}})
  T.eq(torch.median(torch.tensor{1, 5, 3, 2}):item(), 2)
  -- the same functions as tensor methods, as PyTorch has them
  v, i = x:median(2)
  T.eq(i:tolist(), {2, 1})
  T.eq(x:nanmedian(2, true):tolist(), {{1.0}, {2.0}})
  local y = torch.tensor{{1.0, 2.0, 4.0}, {2.0, 1.0, 0.0}}
  T.near({y:nansum():item(), y:nanmean():item(), y:quantile(0.5):item(), y:nanquantile(0.5):item()}, {10.0, 10 / 6, 1.5, 1.5}, 1e-6)
  T.near(y:cov(), torch.cov(y), 1e-12)
  T.near(y:corrcoef(), torch.corrcoef(y), 1e-12)
  T.eq({y:isclose(y + 1e-9):all():item(), y:allclose(y + 1), y:allclose(y, {atol = 2})}, {true, false, true})
end)

T.test("nan reductions, ptp, average", function()
  -- np.nanvar([1., nan, 3, 4], ddof=1) -> 2.333..., np.nanstd(...) -> 1.247219128924647
  T.near(np.nanvar({1.0, NAN, 3.0, 4.0}, {ddof = 1}):item(), 7 / 3, 1e-15)
  T.near(np.nanstd({1.0, NAN, 3.0, 4.0}):item(), 1.247219128924647, 1e-15)
  T.eq(np.nansum(torch.tensor{1.0, NAN, 2.5}):item(), 3.5)
  T.eq(np.nanmean(torch.tensor{{1.0, NAN}, {NAN, NAN}}, {axis = 2}):tolist()[1], 1.0)
  T.near(np.nanmean(torch.tensor{{1.0, NAN}, {NAN, NAN}}, {axis = 2}):tolist()[2], NAN)
  T.eq(np.nanmax(torch.tensor{{1.0, NAN}, {NAN, -2.0}}, {axis = 1}):tolist(), {1.0, -2.0})
  T.eq(np.nanargmin(torch.tensor{NAN, 2.0, -1.0}):item(), 3)
  T.eq(np.ptp(torch.tensor({{1, 9}, {4, 2}}, {dtype = "int32"}), {axis = 2}):tolist(), {8, 2})
  -- np.average(A, axis=1, weights=[1,2,3,4], returned=True) -> ([1.9, 5.8], [10., 10.])
  local avg, scl = np.average(A, {axis = 2, weights = {1, 2, 3, 4}, returned = true})
  T.near(avg, {1.9, 5.8}, 1e-15)
  T.eq(scl:tolist(), {10.0, 10.0})
  T.eq(torch.nansum(torch.tensor{1.0, NAN}):item(), 1.0)
end)

T.test("cov, corrcoef, isclose, allclose, array_equal", function()
  -- np.cov(A) -> [[0.6667, -1.3333], [-1.3333, 2.9167]]
  T.near(np.cov(A), {{2 / 3, -4 / 3}, {-4 / 3, 35 / 12}}, 1e-15)
  -- torch.cov(t, correction=0, fweights=[1,2,1], aweights=[1,.5,1]) -> [[1.5556,-1.4444],[-1.4444,1.5556]]
  local c = torch.cov(torch.tensor{{1.0, 2, 4}, {3, 1, 0}},
                      {correction = 0, fweights = torch.tensor{1, 2, 1}, aweights = torch.tensor{1.0, 0.5, 1.0}})
  T.near(c, {{14 / 9, -13 / 9}, {-13 / 9, 14 / 9}}, 1e-6)
  T.near(np.corrcoef(A), {{1.0, -0.9561828874675149}, {-0.9561828874675149, 1.0}}, 1e-14)
  T.eq(np.isclose({1, NAN, math.huge, 2}, {1.000001, NAN, math.huge, 2.1}, {equal_nan = true}):tolist(),
       {true, true, true, false})
  T.eq({np.allclose({1.0}, {1.001}), np.allclose({1.0}, {1.001}, {rtol = 1e-2})}, {false, true})
  -- unsigned operands of every width (NumPy: float16 with uint16 is float32, with uint32/64 float64)
  for _, d in ipairs({"uint16", "uint32", "uint64"}) do
    T.eq(np.allclose(np.array({1.0}, {dtype = "float16"}), np.array({1}, {dtype = d})), true)
    T.eq(np.isclose(np.array({1.5}), np.array({2}, {dtype = d})):tolist(), {false})
  end
  T.eq({np.array_equal({1, 2}, {1, 2}), np.array_equal({1, 2}, {{1, 2}}), np.array_equal({NAN}, {NAN}, {equal_nan = true})},
       {true, false, true})
end)

T.test("interp, convolve, correlate, polyval, polyfit, gradient", function()
  -- np.interp([0, 1.5, 2.5, 5], [1,2,3], [3,2,0]) -> [3. 2.5 1. 0.]; period=4: [-1, 7.5] -> [0., 0.75]
  T.eq(np.interp({0, 1.5, 2.5, 5}, {1, 2, 3}, {3, 2, 0}):tolist(), {3.0, 2.5, 1.0, 0.0})
  T.eq(np.interp({-1, 7.5}, {1, 2, 3}, {3, 2, 0}, {period = 4}):tolist(), {0.0, 0.75})
  T.eq(np.interp({-1, 7}, {1, 2, 3}, {3, 2, 0}, {left = -9, right = 9}):tolist(), {-9.0, 9.0})
  -- np.convolve([1,2,3], [0,1,0.5]) -> [0. 1. 2.5 4. 1.5]; np.correlate([1,2], [1,2,3,4], 'same') -> [11 8 5 2]
  T.eq(np.convolve({1, 2, 3}, {0, 1, 0.5}):tolist(), {0.0, 1.0, 2.5, 4.0, 1.5})
  T.eq(np.convolve({1, 2, 3}, {1, 1}, {mode = "valid"}):tolist(), {3, 5})
  T.eq(np.correlate({1, 2}, {1, 2, 3, 4}, {mode = "same"}):tolist(), {11, 8, 5, 2})
  T.eq(np.polyval({1, 2, 3}, {1, 2}):tolist(), {6, 11})
  -- np.polyfit([0,1,2,3], [1,3,7,13], 2) -> [1. 1. 1.]
  T.near(np.polyfit({0, 1, 2, 3}, {1, 3, 7, 13}, 2), {1.0, 1.0, 1.0}, 1e-12)
  -- np.gradient([1.,2,4,7,11], [0,1,1.5,3.5,4]) -> [1. 3. 3.5 6.7 8.]
  T.near(np.gradient(torch.tensor({1.0, 2, 4, 7, 11}, {dtype = "float64"}), {0, 1, 1.5, 3.5, 4}), {1.0, 3.0, 3.5, 6.7, 8.0}, 1e-14)
  local g = np.gradient(torch.tensor{{1.0, 2, 4}, {2, 5, 9}}, 2.0)
  T.eq({g[1]:tolist(), g[2]:tolist()}, {{{0.5, 1.5, 2.5}, {0.5, 1.5, 2.5}}, {{0.5, 0.75, 1.0}, {1.5, 1.75, 2.0}}})
  T.eq(np.gradient(torch.tensor{1, 2, 4}, {edge_order = 2}):tolist(), {0.5, 1.5, 2.5})
  -- np.gradient([1, 2, 4], np.float64(0.5)) -> [2. 3. 4.]
  T.eq(np.gradient(torch.tensor{1, 2, 4}, torch.tensor(0.5, {dtype = "float64"})):tolist(), {2.0, 3.0, 4.0})
end)

T.test("ufunc methods", function()
  local i = torch.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = "int32"})
  -- np.add.reduce(i) -> [5 7 9] int64; initial=10 -> [15 17 19]; np.subtract.reduce(i) -> [-3 -3 -3] int32
  local r = np.add.reduce(i)
  T.eq({r.dtype, r:tolist()}, {"int64", {5, 7, 9}})
  T.eq(np.add.reduce(i, {initial = 10}):tolist(), {15, 17, 19})
  T.eq(np.add.reduce(i, {axis = 2, keepdims = true}):tolist(), {{6}, {15}})
  T.eq(np.multiply.reduce(i, {axis = {1, 2}}):item(), 720)
  r = np.subtract.reduce(i)
  T.eq({r.dtype, r:tolist()}, {"int32", {-3, -3, -3}})
  T.eq(np.bitwise_and.reduce(torch.zeros(0, {dtype = "int32"})):item(), -1)
  T.eq(np.logical_xor.reduce(torch.tensor{true, true, true}):item(), true)
  -- np.maximum.accumulate([1,3,2,5]) -> [1 3 3 5]; np.divide.accumulate([8,2,2]) -> [8. 4. 2.]
  T.eq(np.maximum.accumulate(torch.tensor{1, 3, 2, 5}):tolist(), {1, 3, 3, 5})
  T.eq(np.divide.accumulate(torch.tensor{8, 2, 2}):tolist(), {8.0, 4.0, 2.0})
  T.eq(np.add.outer({1, 2}, {10, 20, 30}):tolist(), {{11, 21, 31}, {12, 22, 32}})
  -- a = zeros(4); np.add.at(a, [0, 0, 2, -1], 1) -> [2. 0. 1. 1.]
  local a = torch.zeros(4)
  T.eq(np.add.at(a, {1, 1, 3, -1}, 1), nil)
  T.eq(a:tolist(), {2.0, 0.0, 1.0, 1.0})
  local m = torch.ones(3)
  np.multiply.at(m, {2, 2}, {3, 4})
  T.eq(m:tolist(), {1.0, 12.0, 1.0})
  -- NumPy's tuple: a = zeros((3, 4)); np.add.at(a, ([0, 0, 2], [1, 1, -1]), [1., 2, 3])
  -- -> a[0, 1] = 3, a[2, 3] = 3
  local t = np.zeros({3, 4})
  np.add.at(t, {np.array{1, 1, 3}, np.array{2, 2, -1}}, {1, 2, 3})
  T.eq(t:tolist(), {{0.0, 3.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 0.0}, {0.0, 0.0, 0.0, 3.0}})
  -- np.add.at(a, (slice(None), [1, 1]), 1) -> column 1 gets 2 in every row
  t = np.zeros({3, 4})
  np.add.at(t, {":", np.array{2, 2}}, 1)
  T.eq(t:tolist(), {{0.0, 2.0, 0.0, 0.0}, {0.0, 2.0, 0.0, 0.0}, {0.0, 2.0, 0.0, 0.0}})
  -- np.subtract.at(a, ([0, 0], slice(1, 3)), [[1, 2], [3, 4]]) -> a[0, 1:3] = [-4, -6]
  t = np.zeros({2, 4})
  np.subtract.at(t, {np.array{1, 1}, {2, 3}}, np.array{{1, 2}, {3, 4}})
  T.eq(t:tolist(), {{0.0, -4.0, -6.0, 0.0}, {0.0, 0.0, 0.0, 0.0}})
  -- a number and an index array (NumPy's (1, [0, 0])): np.maximum.at(b, (1, [0, 0]), [5, 7])
  local im = np.array{{1, 2}, {3, 4}}
  np.maximum.at(im, {2, np.array{1, 1}}, {5, 7})
  T.eq(im:tolist(), {{1, 2}, {7, 4}})
  -- a list of numbers is NumPy's list (rows), not a tuple: np.add.at(a, [0, 1], 5)
  t = np.zeros({3, 2})
  np.add.at(t, {1, 2}, 5)
  T.eq(t:tolist(), {{5.0, 5.0}, {5.0, 5.0}, {0.0, 0.0}})
  -- a bool array or list is a mask: np.add.at(zeros(3), [True, False, True], 1) -> [1. 0. 1.]
  t = np.zeros(3)
  np.add.at(t, {true, false, true}, 1)
  np.add.at(t, np.array{false, false, true}, 1)
  T.eq(t:tolist(), {1.0, 0.0, 2.0})
  -- a non-contiguous a is written in place
  local base = np.zeros({3, 2})
  np.add.at(base.T, {np.array{2, 2}, np.array{3, 1}}, 1)
  T.eq(base:tolist(), {{0.0, 1.0}, {0.0, 0.0}, {0.0, 1.0}})
  -- np.multiply.reduceat(np.arange(1, 7), [0, 2, 2, 4]) -> [2 3 12 30]
  T.eq(np.multiply.reduceat(torch.arange(1, 7), {1, 3, 3, 5}):tolist(), {2, 3, 12, 30})
  -- np.add still calls the C function with its arguments (and out)
  local out = torch.zeros(2)
  T.truthy(rawequal(np.add(torch.ones(2), 1, out), out))
  T.eq(out:tolist(), {2.0, 2.0})
  T.truthy(torch._doc[np.add]:find("^add%("), "help(np.add) finds the registered doc")
end)

T.test("bad input is a clear error", function()
  T.error(function() np.quantile({1, 2}, 1.5) end, "quantile: quantiles must be in the range [0, 1], got 1.5")
  T.error(function() np.percentile({1, 2}, -5) end, "percentile: percentiles must be in the range [0, 100], got -5")
  T.error(function() np.quantile({1, 2}, 0.5, {method = "median"}) end, "quantile: 'median' is not a valid method")
  T.error(function() torch.quantile(torch.ones(2), 0.5, {interpolation = "hazen"}) end,
          "quantile: 'hazen' is not a valid method (valid: linear, lower, higher, midpoint, nearest)")
  T.error(function() torch.quantile(torch.ones(2, {dtype = "int64"}), 0.5) end, "quantile: input must be float32 or float64, got int64")
  T.error(function() np.quantile(torch.zeros(0), 0.5) end, "quantile: cannot take a quantile over an empty axis")
  T.error(function() np.median(A, {axis = 3}) end, "median: axis 3 is out of range for an array of 2 dims (valid 1..2 or -2..-1)")
  T.error(function() np.median(A, {axis = 0}) end, "median: axis 0 is out of range")
  T.error(function() np.median(A, {axes = 1}) end, "median: unknown keyword 'axes'")
  T.error(function() np.median(A, {axis = {1, -2}}) end, "median: axis -2 is given twice")
  T.error(function() np.nanargmax(torch.tensor{NAN}) end, "nanargmax: All-NaN slice encountered")
  T.error(function() np.nanmax(torch.zeros(0)) end, "nanmax: zero-size array to reduction operation")
  T.error(function() np.average(A, {weights = {1, 2}}) end, "average: axis must be given when the shapes of a and weights differ")
  T.error(function() np.average(A, {axis = 2, weights = {1, 2}}) end, "average: 2 weights do not fit axis 2 of length 4")
  T.error(function() np.average({1, 2}, {weights = {1, -1}}) end, "average: weights sum to zero, can't be normalized")
  T.error(function() np.cov(torch.zeros(2, 2, 2)) end, "cov: m has more than 2 dimensions")
  T.error(function() np.cov(A, {fweights = {1, 2}}) end, "cov: 2 fweights for 4 observations")
  T.error(function() np.cov(A, {fweights = {1, 1.5, 1, 1}}) end, "cov: fweights must be integers")
  T.error(function() np.interp({1}, {1, 2}, {1}) end, "interp: fp and xp are not of the same length (1 ~= 2)")
  T.error(function() np.interp({1}, {1, 2}, {1, 2}, {period = 0}) end, "interp: period must be a non-zero value")
  T.error(function() np.interp({1}, {1, 2}, {1, 2}, {period = 2, left = 0}) end, "interp: left and right have no effect with period")
  T.error(function() np.convolve({}, {1}) end, "convolve: a cannot be empty")
  T.error(function() np.convolve({1}, {1}, {mode = "half"}) end, "convolve: mode must be 'full', 'same' or 'valid', got 'half'")
  T.error(function() np.polyfit({1, 2}, {1, 2, 3}, 1) end, "polyfit: x and y have different lengths (2 ~= 3)")
  T.error(function() np.polyfit({1, 2}, {1, 2}, -1) end, "polyfit: deg must be an integer >= 0, got -1")
  T.error(function() np.gradient(torch.ones(2), {edge_order = 2}) end,
          "gradient: axis 1 has 2 elements, at least edge_order + 1 = 3 are needed")
  T.error(function() np.gradient(torch.ones(3, 3), 1, 2, 3) end, "gradient: expected 0, 1 or 2 spacings (one per axis), got 3")
  T.error(function() np.isclose({1}, {1}, {rtol = "x"}) end, "isclose: rtol must be a number, got 'x'")
  T.error(function() np.median(A, {axis = 1}, 5) end, "median: expected at most 1 argument and a keyword table, got 5 as argument 3")
  T.error(function() torch.median(A, 1, true, {dim = 1}) end, "median: dim given both as argument and as keyword")
  T.error(function() torch.median(torch.zeros(0, 3), 1) end, "median: dim 1 has size 0")
  T.error(function() np.maximum.reduce(torch.zeros(0)) end, "maximum.reduce: zero-size array to reduction operation maximum which has no identity")
  T.error(function() np.add.at(torch.zeros(3), {4}, 1) end, "add.at: index 4 is out of range for dim 1 of size 3 (valid 1..3 or -3..-1)")
  T.error(function() np.add.at(torch.zeros(3), {1, 2}, {1, 2, 3}) end, "add.at: b of shape {3} does not broadcast to {2}")
  T.error(function() np.add.at(torch.zeros(3, 4), {np.array{1, 4}, np.array{2, 2}}, 1) end,
          "add.at: index 4 is out of range for dim 1 of size 3 (valid 1..3 or -3..-1)")
  T.error(function() np.multiply.at(torch.zeros(3, 4), {":", np.array{-5}}, 1) end,
          "multiply.at: index -5 is out of range for dim 2 of size 4 (valid 1..4 or -4..-1)")
  T.error(function() np.add.at(torch.zeros(3, 4), {np.array{1, 2}, np.array{2, 2}}, {1, 2, 3}) end,
          "add.at: b of shape {3} does not broadcast to {2}")
  T.error(function() np.add.at(torch.zeros(3, 4), {np.array{1.5}, 1}, 1) end,
          "add.at: tensors used as indices must be bool (a mask) or integer tensors, got float64")
  T.error(function() np.add.at(torch.zeros(3, 4), {"x", 1}, 1) end, "add.at: unknown index 'x'")
  T.error(function() np.add.at(torch.zeros(3), {1.5}, 1) end, "add.at: indices must be integers, got a table")
  T.error(function() np.add.at(torch.zeros(3, {dtype = "int64"}), {np.array{1}}, 1.5) end,
          "add.at: cannot write float64 results into a int64 array (NumPy's same_kind casting)")
  T.error(function() np.add.reduceat(torch.arange(4), {0}) end, "add.reduceat: index 0 is out of range for axis 1 of size 4 (valid 1..4)")
  T.error(function() np.add.accumulate(torch.tensor(1)) end, "add.accumulate: cannot accumulate on a scalar")
  T.still_usable()
end)

T.done()
