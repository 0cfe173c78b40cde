-- Reductions, scans and sorting from Lua: every binding form (positional dims, tables of
-- dims, dim/axis keywords, keepdim/keepdims, torch and NumPy spellings), values checked
-- against NumPy / PyTorch (computed once and written below), and every error.
--
--   tide tests/lua/test_reduce.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err = T.error_usable
local torch = require "torch"
local np = require "numpy"

local A = {{0.5, -1.25, 3.0, 2.0}, {4.5, 0.25, -2.0, 1.0}, {-3.5, 2.75, 0.0, 6.0}}
local function X() return torch.tensor(A, {dtype = "float64"}) end
local function L(x) return x:tolist() end
local nan = 0 / 0

-- Reference values computed once with NumPy 1.24 and PyTorch on A.
local R = {
  sum0 = {1.5, 1.75, 1.0, 9.0},
  sum1 = {4.25, 3.75, 5.25},
  sum = 13.25,
  mean0 = {0.5, 0.5833333333333334, 0.3333333333333333, 3.0},
  mean1 = {1.0625, 0.9375, 1.3125},
  prod1 = {-3.75, -2.25, -0.0},
  std_t = 2.7187445576399725,
  std_t1 = {1.8526445062846424, 2.695482331605978, 4.038228778396126},
  var_t0 = {16.0, 4.083333333333334, 6.333333333333333, 7.0},
  std_np = 2.602999738549524,
  std_np_ddof1 = 2.7187445576399725,
  var_np1 = {2.57421875, 5.44921875, 12.23046875},
  norm = 9.794769012079866,
  norm1 = 26.75,
  norm_inf = 6.0,
  norm_p3_d2 = {3.3345655166833557, 4.643763559294211, 6.539576100921717},
  lse1 = {3.3813286012269788, 4.544939958320177, 6.040496640963271},
  lse = 6.298335484422694,
  cumsum1 = {{0.5, -0.75, 2.25, 4.25}, {4.5, 4.75, 2.75, 3.75}, {-3.5, -0.75, -0.75, 5.25}},
  cumprod0 = {{0.5, -1.25, 3.0, 2.0}, {2.25, -0.3125, -6.0, 2.0}, {-7.875, -0.859375, -0.0, 12.0}},
  npcumsum = {0.5, -0.75, 2.25, 4.25, 8.75, 9.0, 7.0, 8.0, 4.5, 7.25, 7.25, 13.25},
  sort1_v = {{-1.25, 0.5, 2.0, 3.0}, {-2.0, 0.25, 1.0, 4.5}, {-3.5, 0.0, 2.75, 6.0}},
  sort1_i = {{2, 1, 4, 3}, {3, 2, 4, 1}, {1, 3, 2, 4}},
  sort0d_v = {{4.5, 2.75, 3.0, 6.0}, {0.5, 0.25, 0.0, 2.0}, {-3.5, -1.25, -2.0, 1.0}},
  argmax = 12,
  argmin0 = {3, 1, 2, 2},
  argmax1 = {3, 1, 4},
  max1_v = {3.0, 4.5, 6.0},
  min0_v = {-3.5, -1.25, -2.0, 1.0},
  topk2_v = {{3.0, 2.0}, {4.5, 1.0}, {6.0, 2.75}},
  topk2_i = {{3, 4}, {1, 4}, {4, 2}},
  topk1_small_d1_v = {{-3.5, -1.25, -2.0, 1.0}},
}


local function nret(...) return select("#", ...) end

T.test("sum: every way to give dims and keepdim", function()
  local x = X()
  T.near(x:sum():item(), R.sum)
  T.eq(x:sum().shape, {})
  T.near(x:sum(1), R.sum0)
  T.near(x:sum(2), R.sum1)
  T.near(x:sum(-1), R.sum1)
  T.near(x:sum(-2), R.sum0)
  T.near(torch.sum(x, 1), R.sum0)
  T.near(x:sum{dim = 2}, R.sum1)
  T.eq(x:sum{dim = 2, keepdim = true}.shape, {3, 1})
  T.eq(x:sum(2, true).shape, {3, 1})
  T.eq(torch.sum(x, 1, true).shape, {1, 4})
  T.near(x:sum{1, 2}:item(), R.sum)
  T.near(x:sum({1, 2}):item(), R.sum)
  T.eq(x:sum{dim = {1, 2}, keepdim = true}.shape, {1, 1})
  T.near(np.sum(x, {axis = 1}), R.sum0)
  T.near(np.sum(x, {axis = 2}), R.sum1)
  T.near(np.sum(x):item(), R.sum)
  T.near(np.sum(x, {axis = {1, 2}}):item(), R.sum)
  T.eq(np.sum(x, {axis = 1, keepdims = true}).shape, {1, 4})
  T.near(np.sum(A, {axis = 2}), R.sum1)  -- array-like input
  T.near(x:sum{}:item(), R.sum)          -- an empty table of dims: all
end)

T.test("sum / prod: dtypes", function()
  local i = torch.tensor{{1, 2}, {3, 4}}
  T.eq(i:sum().dtype, "int64")
  T.eq(i:sum():item(), 10)
  T.eq(torch.tensor({1, 2, 3}, {dtype = "int8"}):sum().dtype, "int64")
  T.eq(torch.tensor({100, 100, 100}, {dtype = "int8"}):sum():item(), 300)
  T.eq(torch.tensor{true, false, true}:sum():item(), 2)
  T.eq(torch.tensor{true, false, true}:sum().dtype, "int64")
  T.eq(i:sum{dtype = "float32"}.dtype, "float32")
  T.eq(i:sum{dtype = "int32"}.dtype, "int32")
  T.eq(torch.ones(3):sum().dtype, "float32")
  T.eq(np.ones(3):sum().dtype, "float64")
  T.eq(torch.ones(3, {dtype = "float16"}):sum().dtype, "float16")
  T.near(X():prod(2), R.prod1)
  T.eq(i:prod():item(), 24)
  T.eq(i:prod().dtype, "int64")
  T.eq(torch.prod(i, 1):tolist(), {3, 8})
end)

T.test("sum / prod / mean: empty reductions", function()
  local e = torch.zeros(0, 3)
  T.eq(e:sum():item(), 0)
  T.eq(L(e:sum(1)), {0, 0, 0})
  T.eq(e:sum(2).shape, {0})
  T.eq(L(e:prod(1)), {1, 1, 1})
  local m = e:mean():item()
  T.truthy(m ~= m, "mean of empty is nan")
  T.eq(e:all():item(), true)
  T.eq(e:any():item(), false)
  T.eq(e:logsumexp():item(), -math.huge)
end)

T.test("mean: float only through torch; np.mean of ints gives float64", function()
  local x = X()
  T.near(x:mean(1), R.mean0)
  T.near(x:mean{dim = 2}, R.mean1)
  T.near(np.mean(x, {axis = 2}), R.mean1)
  T.near(torch.mean(x):item(), R.sum / 12)
  local i = torch.tensor{{1, 2}, {3, 4}}
  err(function() return i:mean() end, "mean: expected a floating-point tensor, got int64")
  err(function() return torch.mean(i, 1) end, "mean: expected a floating-point tensor, got int64")
  T.eq(np.mean(i).dtype, "float64")
  T.near(np.mean(i):item(), 2.5)
  T.near(i:mean{dtype = "float64"}:item(), 2.5)
  err(function() return i:mean{dtype = "int32"} end, "mean: dtype must be a floating-point type")
  T.eq(torch.ones(2, {dtype = "bfloat16"}):mean().dtype, "bfloat16")
end)

T.test("max / min: torch returns values and indices, NumPy values", function()
  local x = X()
  T.eq(x:max():item(), 6.0)
  T.eq(x:max().shape, {})
  T.eq(x:min():item(), -3.5)
  T.eq(nret(x:max(2)), 2)
  local v, i = x:max(2)
  T.near(v, R.max1_v)
  T.eq(L(i), R.argmax1)
  T.eq(i.dtype, "int64")
  v, i = torch.max(x, 2, true)
  T.eq(v.shape, {3, 1})
  T.eq(i.shape, {3, 1})
  v, i = x:max{dim = 2, keepdim = true}
  T.eq(i.shape, {3, 1})
  v, i = x:min(1)
  T.near(v, R.min0_v)
  T.eq(L(i), R.argmin0)
  T.eq(nret(x:max{axis = 2}), 1)
  T.near(x:max{axis = 2}, R.max1_v)
  T.eq(nret(np.max(x, {axis = 2})), 1)
  T.near(np.max(x, {axis = 2}), R.max1_v)
  T.near(np.min(x, {axis = 1}), R.min0_v)
  T.eq(np.max(x):item(), 6.0)
  T.eq(np.max(x, {keepdims = true}).shape, {1, 1})
  T.near(np.amax(x, {axis = 2}), R.max1_v)
  T.near(np.amin(x, {axis = 1}), R.min0_v)
  T.near(torch.amax(x, 2), R.max1_v)
  T.eq(torch.amax(x, {1, 2}):item(), 6.0)
  T.eq(nret(x:max{1, 2}), 1)  -- a table of dims: values only
  T.eq(x:max{1, 2}:item(), 6.0)
  -- a tensor second argument: elementwise
  local a, b = torch.tensor{1, 5, 3}, torch.tensor{4, 2, 6}
  T.eq(L(torch.max(a, b)), {4, 5, 6})
  T.eq(L(torch.min(a, b)), {1, 2, 3})
  T.eq(L(a:max(b)), {4, 5, 6})
  -- ties: the first position; integer dtypes kept
  local t = torch.tensor{{7, 7, 1}, {2, 9, 9}}
  v, i = t:max(2)
  T.eq(L(i), {1, 2})
  T.eq(v.dtype, "int64")
  T.eq(torch.tensor({1, 2}, {dtype = "int8"}):max().dtype, "int8")
  T.eq(torch.tensor{true, false}:max():item(), true)
end)

T.test("max / min: NaN propagates and wins argmax", function()
  local x = torch.tensor{1, nan, 3, nan}
  local m = x:max():item()
  T.truthy(m ~= m)
  m = x:min():item()
  T.truthy(m ~= m)
  T.eq(x:argmax():item(), 2)
  T.eq(x:argmin():item(), 2)
  local v, i = torch.tensor{{1, 2}, {nan, 0}}:max(2)
  T.truthy(v:tolist()[2] ~= v:tolist()[2])
  T.eq(L(i), {2, 1})
  local s = np.sum(torch.tensor{1, nan}):item()
  T.truthy(s ~= s)
end)

T.test("max / min / argmax: errors", function()
  local e = torch.zeros(0, 3)
  err(function() return e:max() end, "max: cannot reduce over an empty dim of size 0")
  err(function() return e:max(1) end, "max: cannot reduce over an empty dim of size 0 (dim 1 of a tensor of shape {0,3})")
  err(function() return np.max(e, {axis = 1}) end, "max: cannot reduce over an empty dim of size 0")
  err(function() return e:min() end, "min: cannot reduce over an empty dim")
  err(function() return e:argmax() end, "argmax: cannot reduce over an empty dim")
  err(function() return torch.amax(e, 1) end, "amax: cannot reduce over an empty dim")
  T.eq(e:max(2).shape, {0})  -- reducing the non-empty dim is fine
  err(function() return X():max(3) end, "max: dim 3 is out of range for a tensor of 2 dims (valid 1..2 or -2..-1)")
  err(function() return X():argmax{1, 2} end, "argmax: expected a single dim (a number), got a table")
end)

T.test("argmax / argmin: 1-based, flat without a dim", function()
  local x = X()
  T.eq(np.argmax(x):item(), R.argmax)
  T.eq(x:argmax():item(), R.argmax)
  T.eq(x:argmax().dtype, "int64")
  T.eq(L(x:argmax(2)), R.argmax1)
  T.eq(L(torch.argmax(x, 2)), R.argmax1)
  T.eq(L(np.argmin(x, {axis = 1})), R.argmin0)
  T.eq(L(x:argmin{dim = 1}), R.argmin0)
  T.eq(x:argmax(2, true).shape, {3, 1})
  T.eq(x:argmax{dim = 2, keepdim = true}.shape, {3, 1})
  T.eq(x:argmax{keepdim = true}.shape, {1, 1})
  -- on a transposed view, positions are in the view's order
  T.eq(L(x:t():argmax(1)), R.argmax1)
  T.eq(x:t():argmax():item(), 12)  -- x:t() flattened: 6.0 is its last element
end)

T.test("std / var: torch corrections and NumPy ddof", function()
  local x = X()
  T.near(x:std():item(), R.std_t)
  T.near(x:std(2), R.std_t1)
  T.near(torch.std(x, 2), R.std_t1)
  T.near(x:var(1), R.var_t0)
  T.near(x:var{dim = 1}, R.var_t0)
  T.near(x:std(true):item(), R.std_t)
  T.near(x:std(false):item(), R.std_np)
  T.near(x:var(2, false), R.var_np1)
  T.eq(x:var(2, false, true).shape, {3, 1})
  T.near(x:var{dim = 2, unbiased = false}, R.var_np1)
  T.near(x:var{dim = 2, correction = 0}, R.var_np1)
  T.eq(x:var{dim = 2, keepdim = true}.shape, {3, 1})
  T.near(np.std(x):item(), R.std_np)
  T.near(np.std(x, {ddof = 1}):item(), R.std_np_ddof1)
  T.near(np.var(x, {axis = 2}), R.var_np1)
  T.eq(np.var(x, {axis = 2, keepdims = true}).shape, {3, 1})
  local i = torch.tensor{{1, 2}, {3, 4}}
  err(function() return i:std() end, "std: expected a floating-point tensor, got int64")
  err(function() return torch.var(i, 1) end, "var: expected a floating-point tensor, got int64")
  T.near(np.std(i):item(), math.sqrt(1.25))
  T.eq(np.std(i).dtype, "float64")
  local one = torch.tensor{5.0}:std():item()
  T.truthy(one ~= one, "std of one element with correction 1 is nan")
  T.eq(torch.ones(4, {dtype = "float16"}):std().dtype, "float16")
end)

T.test("norm: p = 2 by default, 1, inf, 'fro', other p over dims", function()
  local x = X()
  T.near(x:norm():item(), R.norm)
  T.near(torch.norm(x):item(), R.norm)
  T.near(x:norm("fro"):item(), R.norm)
  T.near(x:norm(1):item(), R.norm1)
  T.near(x:norm(math.huge):item(), R.norm_inf)
  T.near(x:norm("inf"):item(), R.norm_inf)
  T.near(x:norm(-math.huge):item(), 0.0)
  T.near(x:norm(0):item(), 11)
  T.near(x:norm(3, 2), R.norm_p3_d2)
  T.near(torch.norm(x, 3, 2), R.norm_p3_d2)
  T.near(x:norm{p = 3, dim = 2}, R.norm_p3_d2)
  T.eq(x:norm(2, 2, true).shape, {3, 1})
  T.eq(x:norm{dim = 1, keepdim = true}.shape, {1, 4})
  err(function() return x:norm("nuc") end, "norm: the nuclear norm ('nuc') is a matrix norm")
  err(function() return x:norm("bad") end, "norm: p must be a number, math.huge, 'fro', 'inf' or '-inf', got 'bad'")
  err(function() return torch.tensor{1, 2}:norm() end, "norm: expected a floating-point tensor, got int64")
end)

T.test("all / any", function()
  local b = torch.tensor{{true, false}, {true, true}}
  T.eq(b:all():item(), false)
  T.eq(b:any():item(), true)
  T.eq(L(b:all(2)), {false, true})
  T.eq(L(b:any(1)), {true, true})
  T.eq(L(np.all(b, {axis = 1})), {true, false})
  T.eq(torch.all(b, 2, true).shape, {2, 1})
  T.eq(b:all{dim = 2, keepdim = true}.shape, {2, 1})
  T.eq(X():gt(-4):all():item(), true)
  T.eq(torch.tensor{0, 0, 2}:any():item(), true)
  T.eq(torch.tensor{0.5, nan}:all():item(), true)
  T.eq(torch.tensor{1, 2}:all().dtype, "bool")
  T.eq(torch.tensor({1, 0}, {dtype = "uint8"}):any(1).dtype, "uint8")  -- as PyTorch
  T.eq(np.any(torch.tensor({1, 0}, {dtype = "uint8"})).dtype, "bool")   -- as NumPy
end)

T.test("logsumexp: stable, infinities", function()
  local x = X()
  T.near(x:logsumexp(2), R.lse1)
  T.near(torch.logsumexp(x, 2), R.lse1)
  T.near(x:logsumexp():item(), R.lse)
  T.near(x:logsumexp{dim = {1, 2}}:item(), R.lse)
  T.eq(x:logsumexp(2, true).shape, {3, 1})
  T.near(torch.tensor{1000.0, 1000.0}:logsumexp(1):item(), 1000 + math.log(2))
  T.eq(torch.tensor{-math.huge, -math.huge}:logsumexp(1):item(), -math.huge)
  T.eq(torch.tensor{math.huge, 1}:logsumexp(1):item(), math.huge)
  T.eq(torch.tensor{1, 2}:logsumexp(1).dtype, "float32")  -- integers: the default float, as PyTorch
  T.near(torch.tensor{1, 2}:logsumexp(1):item(), math.log(math.exp(1) + math.exp(2)))
end)

T.test("cumsum / cumprod", function()
  local x = X()
  T.near(x:cumsum(2), R.cumsum1)
  T.near(torch.cumsum(x, 2), R.cumsum1)
  T.near(torch.cumsum(x, {dim = 2}), R.cumsum1)
  T.near(x:cumsum(-1), R.cumsum1)
  T.near(x:cumprod(1), R.cumprod0)
  T.near(np.cumsum(x), R.npcumsum)         -- no axis: flattened
  T.eq(np.cumsum(x).shape, {12})
  T.near(np.cumsum(x, {axis = 2}), R.cumsum1)
  T.near(np.cumprod(x, {axis = 1}), R.cumprod0)
  local i = torch.tensor{1, 2, 3}
  T.eq(L(i:cumsum(1)), {1, 3, 6})
  T.eq(i:cumsum(1).dtype, "int64")
  T.eq(L(torch.tensor{true, true, false}:cumsum(1)), {1, 2, 2})
  T.eq(i:cumsum(1, {dtype = "float64"}).dtype, "float64")
  T.eq(L(i:cumprod(1)), {1, 2, 6})
  err(function() return x:cumsum() end, "cumsum: dim is required")
  err(function() return torch.cumprod(x) end, "cumprod: dim is required")
  err(function() return x:cumsum{1, 2} end, "cumsum: expected a single dim (a number), got a table")
  err(function() return x:cumsum(3) end, "cumsum: dim 3 is out of range for a tensor of 2 dims")
end)

T.test("sort / argsort: values and 1-based indices, stable, NaN last", function()
  local x = X()
  local v, i = x:sort()
  T.near(v, R.sort1_v)
  T.eq(L(i), R.sort1_i)
  T.eq(i.dtype, "int64")
  v, i = torch.sort(x, 2)
  T.eq(L(i), R.sort1_i)
  v = x:sort(1, true)
  T.near(v, R.sort0d_v)
  v = x:sort{dim = 1, descending = true}
  T.near(v, R.sort0d_v)
  T.eq(nret(np.sort(x)), 1)
  T.near(np.sort(x), R.sort1_v)
  T.near(np.sort(x, {axis = 2}), R.sort1_v)
  T.eq(L(np.argsort(x)), R.sort1_i)
  T.eq(L(x:argsort(2)), R.sort1_i)
  T.eq(L(torch.argsort(x, {dim = 2})), R.sort1_i)
  -- stable, also descending; NaN is the largest value
  local t = torch.tensor{3, 1, nan, 1, 3}
  v, i = t:sort()
  T.eq(L(i), {2, 4, 1, 5, 3})
  v, i = t:sort(1, true)
  T.eq(L(i), {3, 1, 5, 2, 4})
  T.eq(L(torch.tensor{2, 1}:argsort{descending = true}), {1, 2})
  err(function() return x:sort(3) end, "sort: dim 3 is out of range")
  err(function() return x:sort{1, 2} end, "sort: expected a single dim (a number), got a table")
end)

T.test("topk: k largest or smallest, sorted, 1-based", function()
  local x = X()
  local v, i = x:topk(2)
  T.near(v, R.topk2_v)
  T.eq(L(i), R.topk2_i)
  v, i = torch.topk(x, 2, 2)
  T.eq(L(i), R.topk2_i)
  v = x:topk(1, 1, false)
  T.near(v, R.topk1_small_d1_v)
  v = x:topk{k = 1, dim = 1, largest = false}
  T.near(v, R.topk1_small_d1_v)
  T.eq(x:topk(0).shape, {3, 0})
  T.eq(nret(x:topk(1)), 2)
  v, i = torch.tensor{5, 1, 5, 2}:topk(2)
  T.eq(L(i), {1, 3})  -- ties: the earlier first
  err(function() return x:topk(5) end, "topk: k (5) is out of range for dim 2 of size 4 (valid 0..4)")
  err(function() return x:topk(-1) end, "topk: k (-1) is out of range")
  err(function() return x:topk() end, "topk: k is required")
  err(function() return x:topk(1, 3) end, "topk: dim 3 is out of range")
end)

T.test("dims: errors name the op and the valid range", function()
  local x = X()
  err(function() return x:sum(3) end, "sum: dim 3 is out of range for a tensor of 2 dims (valid 1..2 or -2..-1)")
  err(function() return torch.sum(x, -3) end, "sum: dim -3 is out of range for a tensor of 2 dims")
  err(function() return x:sum(0) end, "sum: dim 0 is out of range: dims are 1-based")
  err(function() return np.sum(x, {axis = 5}) end, "sum: dim 5 is out of range")
  err(function() return x:mean{1, 1} end, "mean: dim 1 appears more than once")
  err(function() return x:sum("a") end, "sum: dim must be an integer or a table of integers")
  err(function() return x:prod(1.5) end, "prod: dim must be an integer")
  err(function() return x:sum{dtype = "float99"} end, "sum: unknown dtype 'float99'")
  err(function() return torch.sum() end, "sum: expected a tensor")
end)

T.test("out= writes into the given tensor", function()
  local x = X()
  local o = torch.zeros(4, {dtype = "float64"})
  local r = np.sum(x, {axis = 1, out = o})
  T.truthy(rawequal(r, o), "out is returned")
  T.near(o, R.sum0)
  err(function() return np.sum(x, {axis = 2, out = o}) end, "sum: out has shape {4} but the result has shape {3}")
end)

T.test("strided views: transposed and sliced inputs", function()
  local x = X()
  T.near(x:t():sum(2), R.sum0)
  T.near(x:t():sum(1), R.sum1)
  T.near(x:t():mean(1), R.mean1)
  T.near(x[{":", {2, 3}}]:sum(1), {1.75, 1.0})
  T.near(x[{{1, 3, 2}, ":"}]:sum(2), {4.25, 5.25})
  local v, i = x:t():max(1)
  T.near(v, R.max1_v)
  T.eq(L(i), R.argmax1)
  T.near(x:t():cumsum(2):t(), {{0.5, -1.25, 3.0, 2.0}, {5.0, -1.0, 1.0, 3.0}, {1.5, 1.75, 1.0, 9.0}})
end)

T.test("results do not depend on the thread count", function()
  local saved = torch.get_num_threads()
  torch.manual_seed(7)
  local x = torch.randn(1000, 1000)
  local function run()
    return {x:sum():item(), x:sum(1):sum():item(), x:sum(2):sum():item(), x:var():item(),
            x:t():sum(1):sum():item(), x:norm():item(), x:argmax():item(), x:logsumexp(1):sum():item()}
  end
  torch.set_num_threads(1)
  local a = run()
  torch.set_num_threads(2)
  local b = run()
  torch.set_num_threads(saved)
  T.eq(a, b)
end)

-- NumPy's kind= and PyTorch's stable=: every kind gives the stable order. NumPy 1.24:
-- np.argsort([3, 1, 2, 1, 3], kind=k) is [1, 3, 2, 0, 4] for quicksort, mergesort and stable;
-- its heapsort orders the tied 3s the other way ([1, 3, 2, 4, 0]), which tide does not copy.
T.test("sort / argsort take np's kind= and torch's stable=", function()
  local x = np.array({3, 1, 2, 1, 3})
  for _, kind in ipairs({"quicksort", "mergesort", "heapsort", "stable"}) do
    T.eq(np.argsort(x, {kind = kind}):tolist(), {2, 4, 3, 1, 5})
    T.eq(np.sort(x, {kind = kind}):tolist(), {1, 1, 2, 3, 3})
  end
  local t = torch.tensor({3, 1, 2, 1, 3})
  for _, stable in ipairs({true, false}) do
    local v, i = torch.sort(t, {stable = stable})
    T.eq({v:tolist(), i:tolist()}, {{1, 1, 2, 3, 3}, {2, 4, 3, 1, 5}})
    T.eq(t:argsort({stable = stable, descending = true}):tolist(), {1, 5, 3, 2, 4})
  end
  T.error(function() np.argsort(x, {kind = "bogo"}) end,
          "argsort: kind must be 'quicksort', 'mergesort', 'heapsort' or 'stable', got 'bogo'")
  T.error(function() torch.sort(t, {stable = 1}) end, "sort: keyword 'stable' must be a boolean")
end)

T.done()
