-- The tensor ops of issue 15 (bindings/lua/torch_ops15.lua, torch.as_tensor / from_numpy, the
-- special functions erfinv, lgamma, digamma): exact values from PyTorch 1.13 (the Python call
-- above each check; indices 1-based here, 0-based there), methods and in-place forms,
-- gradients, and the errors for bad input. ops_ops15.lua checks them against PyTorch on
-- random cases.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"
local F = torch.nn.functional

local NAN, INF = 0 / 0, math.huge
local function f64(v) return torch.tensor(v, {dtype = "float64"}) end

local function message(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  return tostring(err)
end

T.test("addcmul and addcdiv, out of place, in place and as methods", function()
  local x = f64{1, 2, 3}
  -- torch.addcmul(x, x, x, value=2) -> [3, 10, 21]; torch.addcdiv(x, x, [2, 4, 8]) -> [1.5, 2.5, 3.375]
  T.eq(x:addcmul(x, x, {value = 2}):tolist(), {3.0, 10.0, 21.0})
  T.eq(torch.addcdiv(x, x, f64{2, 4, 8}):tolist(), {1.5, 2.5, 3.375})
  -- broadcasting: addcmul(zeros(2, 1), [1, 2], [[3], [4]]) -> [[3, 6], [4, 8]]
  T.eq(torch.addcmul(torch.zeros(2, 1), torch.tensor{1.0, 2.0}, torch.tensor{{3.0}, {4.0}}):tolist(), {{3, 6}, {4, 8}})
  -- integers: addcmul(i, i, i, value=2) -> [3, 10, 21] int64
  local i = torch.tensor{1, 2, 3}
  local r = torch.addcmul(i, i, i, {value = 2})
  T.eq({r.dtype, r:tolist()}, {"int64", {3, 10, 21}})
  local y = f64{1, 2, 3}
  T.truthy(rawequal(y:addcmul_(y, y, {value = 0.5}), y))
  T.eq(y:tolist(), {1.5, 4.0, 7.5})
  y:addcdiv_(f64{1, 1, 1}, f64{2, 4, 8})
  T.eq(y:tolist(), {2.0, 4.25, 7.625})
  T.truthy(torch._doc[x.addcmul_]:match("^addcmul_%(input, ...%) %-> input: addcmul written into input"))
  T.truthy(torch._doc[x.addcmul]:match("^addcmul%(input, tensor1, tensor2%[, {value=1, out=}%]%) %-> Tensor"))
  local out = torch.zeros(3, {dtype = "float64"})
  T.truthy(rawequal(torch.addcmul(x, x, x, {out = out}), out))
  T.eq(out:tolist(), {2.0, 6.0, 12.0})
  T.eq(message(function() return torch.addcdiv(i, i, i) end),
       "addcdiv: integer division is not supported (tensor1 and tensor2 are int64 and int64); use floating-point tensors")
  T.eq(message(function() return torch.addcmul(i, i, i, {value = 0.5}) end),
       "addcmul: value must be an integer for int64 tensors, got 0.5")
  T.eq(message(function() return torch.addcmul(x, x, x, {valu = 1}) end),
       "addcmul: unknown keyword 'valu' (did you mean 'value'? valid: input, tensor1, tensor2, value, out)")
  T.eq(message(function() return torch.addcmul(x, x) end), "addcmul: missing argument 'tensor2'")
  T.eq(message(function() return torch.addcmul(x, x, 2) end), "addcmul: expected a tensor for tensor2, got 2")
  T.truthy(message(function() return torch.ones(2):addcmul_(torch.ones(3, 1), torch.ones(3)) end):match("^addcmul_: "))
end)

T.test("baddbmm, addbmm, addmv and addr with beta and alpha", function()
  -- torch.baddbmm(ones(2,2,2), ones(2,2,3), ones(2,3,2), beta=2, alpha=0.5) -> all 3.5
  T.eq(torch.baddbmm(torch.ones(2, 2, 2), torch.ones(2, 2, 3), torch.ones(2, 3, 2), {beta = 2, alpha = 0.5}):tolist(),
       {{{3.5, 3.5}, {3.5, 3.5}}, {{3.5, 3.5}, {3.5, 3.5}}})
  -- torch.addbmm(ones(2,2), ones(3,2,4), ones(3,4,2)) -> all 13
  T.eq(torch.addbmm(torch.ones(2, 2), torch.ones(3, 2, 4), torch.ones(3, 4, 2)):tolist(), {{13, 13}, {13, 13}})
  local m = f64{{1, 2}, {3, 4}, {5, 6}}
  -- torch.addmv(tensor(1.), m, [1, -1]) -> [0, 0, 0]; alpha=3, beta=0.5: [-2.5, -2.5, -2.5]
  T.eq(torch.addmv(f64(1), m, f64{1, -1}):tolist(), {0.0, 0.0, 0.0})
  T.eq(torch.addmv(f64{1, 1, 1}, m, f64{1, -1}, {beta = 0.5, alpha = 3}):tolist(), {-2.5, -2.5, -2.5})
  -- torch.addr(zeros(2,3), [1,2], [1,2,3]) -> [[1,2,3],[2,4,6]]
  T.eq(torch.addr(torch.zeros(2, 3), torch.tensor{1.0, 2}, torch.tensor{1.0, 2, 3}):tolist(), {{1, 2, 3}, {2, 4, 6}})
  -- beta=0 ignores NaN in input; alpha=0 ignores NaN in the product (PyTorch's BLAS calls)
  local nan = torch.full({2, 2}, NAN)
  T.eq(torch.addbmm(nan, torch.ones(1, 2, 2), torch.ones(1, 2, 2), {beta = 0}):tolist(), {{2, 2}, {2, 2}})
  T.eq(torch.baddbmm(nan:reshape(1, 2, 2), torch.ones(1, 2, 2), torch.ones(1, 2, 2), {beta = 0}):tolist(), {{{2, 2}, {2, 2}}})
  T.eq(torch.addr(torch.ones(2, 2), torch.full({2}, NAN), torch.ones(2), {alpha = 0}):tolist(), {{1, 1}, {1, 1}})
  -- alpha = 0 is handled before BLAS (OpenBLAS's AVX-512 small-matrix kernels compute 0 * NaN):
  -- beta * input, or zeros with beta = 0, at any size and dtype
  for _, dt in ipairs({"float32", "float64"}) do
    local o = {dtype = dt}
    T.eq(torch.addmm(torch.ones(40, 50, o), torch.full({40, 30}, NAN, o), torch.ones(30, 50, o), {alpha = 0, beta = 0.5})
         :sum():item(), 1000)
    T.eq(torch.addmm(torch.full({3, 4}, NAN, o), torch.full({3, 2}, NAN, o), torch.ones(2, 4, o), {alpha = 0, beta = 0})
         :tolist(), {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}})
  end
  -- in place and as methods
  local a = torch.ones(2, 3)
  T.truthy(rawequal(a:addr_(torch.tensor{1.0, 2}, torch.tensor{1.0, 2, 3}, {beta = 2}), a))
  T.eq(a:tolist(), {{3, 4, 5}, {4, 6, 8}})
  local v = torch.ones(3)
  v:addmv_(torch.ones(3, 2), torch.ones(2), {alpha = -1})
  T.eq(v:tolist(), {-1, -1, -1})
  local b = torch.zeros(1, 2, 2)
  b:baddbmm_(torch.ones(1, 2, 3), torch.ones(1, 3, 2))
  T.eq(b:tolist(), {{{3, 3}, {3, 3}}})
  local c = torch.zeros(2, 2)
  c:addbmm_(torch.ones(2, 2, 3), torch.ones(2, 3, 2), {alpha = 2})
  T.eq(c:tolist(), {{12, 12}, {12, 12}})
  -- out= is the out tensor itself; -0.0 stays -0.0 (1 / -0.0 is -inf)
  local o = torch.zeros(3, {dtype = "float64"})
  T.truthy(rawequal(torch.addmv(f64{1, 1, 1}, m, f64{1, -1}, {out = o}), o))
  T.eq(o:tolist(), {0, 0, 0})
  o = torch.zeros(1)
  torch.nan_to_num(torch.tensor{-0.0}, {out = o})
  T.eq(1 / o:item(), -INF)
  T.truthy(rawequal(torch.xlogy(f64{2}, f64{1}, {out = o}), o))
  T.eq(o:tolist(), {0})
  -- empty batch: beta * input
  T.eq(torch.addbmm(torch.ones(2, 2), torch.ones(0, 2, 3), torch.ones(0, 3, 2), {beta = 3}):tolist(), {{3, 3}, {3, 3}})
  -- errors name the op and the values
  T.eq(message(function() return torch.addmv(torch.ones(2), torch.ones(2, 3), torch.ones(2)) end),
       "addmv: shapes {2,3} and {2} cannot be multiplied (3 ~= 2)")
  T.eq(message(function() return torch.baddbmm(torch.ones(2, 2, 2), torch.ones(2, 2, 3), torch.ones(3, 3, 2)) end),
       "baddbmm: batch sizes 2 and 3 differ")
  T.eq(message(function() return torch.addr(torch.ones(3, 3), torch.ones(2), torch.ones(3)) end),
       "addr: the input of shape {3,3} cannot be broadcast to the result shape {2,3}")
  T.eq(message(function() return torch.addbmm(torch.ones(2, 2), torch.ones(2, 2, 2), torch.ones(2, 2, 2, {dtype = "float64"})) end),
       "addbmm: expected all tensors to have the same dtype, got float32, float32 and float64")
  T.eq(message(function() return torch.addmv(torch.ones(2), torch.ones(2), torch.ones(2)) end),
       "addmv: expected a 2-D tensor for mat, got a tensor of shape {2}")
  T.eq(message(function() return torch.ones(2):addmv_(torch.ones(3, 2), torch.ones(2)) end),
       "addmv_: the input of shape {2} cannot be broadcast to the result shape {3}")
  T.eq(message(function() return torch.ones(2, 2, {dtype = "int64"}):addr(torch.ones(2, {dtype = "int64"}),
                                                                     torch.ones(2, {dtype = "int64"}), {alpha = 0.5}) end),
       "addr: alpha must be an integer for int64 tensors, got 0.5")
end)

T.test("cummax, cummin and logcumsumexp", function()
  -- torch.cummax([1,3,3,2,nan,5,nan], 0) -> [1,3,3,3,nan,nan,nan], indices [0,1,2,2,4,4,6]
  local v, i = torch.cummax(torch.tensor{1.0, 3, 3, 2, NAN, 5, NAN}, 1)
  T.near(v, {1, 3, 3, 3, NAN, NAN, NAN})
  T.eq(i:tolist(), {1, 2, 3, 3, 5, 5, 7})
  -- torch.cummin([1,0,0,2,-1,-1], 0) -> [1,0,0,0,-1,-1], [0,1,2,2,4,5]
  v, i = torch.tensor{1.0, 0, 0, 2, -1, -1}:cummin(1)
  T.eq({v:tolist(), i:tolist()}, {{1, 0, 0, 0, -1, -1}, {1, 2, 3, 3, 5, 6}})
  -- along dim 1 of a matrix, integers
  v, i = torch.cummax(torch.tensor{{1, 5}, {4, 2}, {4, 9}}, -2)
  T.eq({v.dtype, v:tolist(), i:tolist()}, {"int64", {{1, 5}, {4, 5}, {4, 9}}, {{1, 1}, {2, 1}, {3, 3}}})
  -- bool: torch.cummax(tensor([False, True, False]), 0) -> [F, T, T], [0, 1, 1]
  v, i = torch.cummax(torch.tensor{false, true, false}, 1)
  T.eq({v:tolist(), i:tolist()}, {{false, true, true}, {1, 2, 2}})
  -- 0-dim and empty
  v, i = torch.cummax(torch.tensor(3.0), 1)
  T.eq({v.shape, v:item(), i:item()}, {{}, 3.0, 1})
  v, i = torch.cummin(torch.zeros(2, 0), 2)
  T.eq({v.shape, i.shape, i.dtype}, {{2, 0}, {2, 0}, "int64"})
  -- gradient to the index reached: t=[1,3,3,2]; cummax(t,0)[0].backward([1,2,3,4]) -> t.grad [1,2,7,0]
  local t = f64{1, 3, 3, 2}:requires_grad_()
  torch.cummax(t, 1):backward(f64{1, 2, 3, 4})
  T.eq(t.grad:tolist(), {1, 2, 7, 0})
  -- torch.logcumsumexp([[0.5,-1.25,3],[2,2,-7.5]], 1)
  local l = torch.logcumsumexp(f64{{0.5, -1.25, 3.0}, {2, 2, -7.5}}, 2)
  T.near(l, {{0.5, 0.6602241504380872, 3.0919857805919686}, {2.0, 2.6931471805599454, 2.693184605774557}}, 1e-15)
  -- torch.logcumsumexp([-1000., 0, inf, -inf], 0) -> [-1000, 0, inf, inf]
  T.eq(torch.tensor{-1000.0, 0, INF, -INF}:logcumsumexp(1):tolist(), {-1000, 0, INF, INF})
  T.eq(torch.logcumsumexp(torch.tensor{-INF, -INF, 1.0}, 1):tolist(), {-INF, -INF, 1})
  -- t.grad of logcumsumexp([[0.5,-1.25,3]], 1).backward([[1,2,3]])
  t = f64{{0.5, -1.25, 3.0}}:requires_grad_()
  torch.logcumsumexp(t, 2):backward(f64{{1, 2, 3}})
  T.near(t.grad, {{2.928519247622742, 0.3351263946794894, 2.7363543576977696}}, 1e-14)
  T.eq(message(function() return torch.cummax(torch.ones(2), 2) end),
       "cummax: dim 2 is out of range for a tensor of 1 dim (valid 1..1 or -1..-1)")
  T.eq(message(function() return torch.cummin(torch.ones(2)) end), "cummin: missing argument 'dim'")
  T.eq(message(function() return torch.logcumsumexp(torch.ones(2, {dtype = "int64"}), 1) end),
       "logcumsumexp: expected a floating-point input, got int64")
  T.eq(message(function() return torch.logcumsumexp(torch.ones(2), 0) end),
       "logcumsumexp: dim 0 is out of range: dims are 1-based (valid 1..1 or -1..-1)")
end)

T.test("kthvalue and mode give values and 1-based indices", function()
  -- torch.kthvalue([3,1,2,1,5], 2) -> (1, 3); k=1 -> (1, 1); with nan k=5 -> (nan, 1)
  local v, i = torch.kthvalue(torch.tensor{3.0, 1, 2, 1, 5}, 2)
  T.eq({v:item(), i:item()}, {1.0, 4})
  v, i = torch.tensor{3.0, 1, 2, 1, 5}:kthvalue(1)
  T.eq({v:item(), i:item()}, {1.0, 2})
  v, i = torch.kthvalue(torch.tensor{3.0, NAN, 2, 1, 5}, 5)
  T.near(v:item(), NAN)
  T.eq(i:item(), 2)
  -- torch.kthvalue([[1,9,4],[7,2,8]], 2, 1, keepdim=True) -> [[4],[7]], [[2],[0]]
  v, i = torch.kthvalue(torch.tensor{{1, 9, 4}, {7, 2, 8}}, 2, 2, true)
  T.eq({v:tolist(), i:tolist()}, {{{4}, {7}}, {{3}, {1}}})
  v, i = torch.kthvalue(torch.tensor{{1, 9, 4}, {7, 2, 8}}, 1, {dim = 1})
  T.eq({v:tolist(), i:tolist()}, {{1, 2, 4}, {1, 2, 1}})
  -- torch.mode([1,3,3,2,3,1,1]) -> (1, 6); [[5,1,2,1,5],[3,3,0,0,1]] along 1 -> [1,0], [3,3]
  v, i = torch.mode(torch.tensor{1.0, 3, 3, 2, 3, 1, 1})
  T.eq({v:item(), i:item()}, {1.0, 7})
  v, i = torch.tensor{{5.0, 1, 2, 1, 5}, {3, 3, 0, 0, 1}}:mode(2)
  T.eq({v:tolist(), i:tolist()}, {{1, 0}, {4, 4}})
  v, i = torch.mode(torch.tensor{{2, 2}, {1, 2}}, 1, true)
  T.eq({v:tolist(), i:tolist()}, {{{1, 2}}, {{2, 2}}})
  -- 0-dim: torch.mode(tensor(3.)) -> (3, 0); kthvalue(tensor(3.), 1) -> (3, 0)
  v, i = torch.mode(torch.tensor(3.0))
  T.eq({v.shape, v:item(), i:item()}, {{}, 3.0, 1})
  v, i = torch.kthvalue(torch.tensor(3.0), 1)
  T.eq({v.shape, v:item(), i:item()}, {{}, 3.0, 1})
  -- gradients go to the selected element: t=[2,1,2,1,3]; mode(t)[0].backward() -> [0,0,0,1,0]
  local t = f64{2, 1, 2, 1, 3}:requires_grad_()
  torch.mode(t):backward()
  T.eq(t.grad:tolist(), {0, 0, 0, 1, 0})
  t = f64{{3, 1}, {2, 5}}:requires_grad_()
  torch.kthvalue(t, 2, 1):sum():backward()
  T.eq(t.grad:tolist(), {{1, 0}, {0, 1}})
  T.eq(message(function() return torch.mode(torch.zeros(0)) end), "mode: dim -1 has size 0")
  T.eq(message(function() return torch.kthvalue(torch.ones(2, 3), 4) end),
       "kthvalue: k 4 is out of range for dim -1 of size 3 (valid 1..3)")
  T.eq(message(function() return torch.kthvalue(torch.ones(3), 1.5) end), "kthvalue: k must be an integer, got 1.5")
  T.eq(message(function() return torch.mode(torch.ones(3), 1, 1) end), "mode: keepdim must be true or false, got 1")
end)

T.test("xlogy and nan_to_num", function()
  -- torch.xlogy([0,0,1.5,-2], [0,nan,0.25,3])
  local r = torch.xlogy(f64{0, 0, 1.5, -2}, f64{0, NAN, 0.25, 3})
  T.near(r, {0.0, NAN, -2.0794415416798357, -2.1972245773362196}, 1e-15)
  -- torch.xlogy(2, [1., 3]) -> [0, 2.1972]; xlogy(int [1, 2], 3) -> float32
  T.near(torch.xlogy(2, f64{1, 3}), {0.0, 2 * math.log(3)}, 1e-15)
  r = torch.tensor{1, 2}:xlogy(3)
  T.eq(r.dtype, "float32")
  T.near(r, {math.log(3), 2 * math.log(3)}, 1e-6)
  T.eq(torch.xlogy(0, f64{0, 2}):tolist(), {0, 0})
  T.near(torch.xlogy(0, f64{NAN}), {NAN})
  T.near(torch.xlogy(f64{0, 1}, NAN), {NAN, NAN})
  local x = f64{1, 2, 4}
  T.truthy(rawequal(x:xlogy_(2), x))
  T.near(x, {math.log(2), 2 * math.log(2), 4 * math.log(2)}, 1e-15)
  -- gradients: d/dx = log(y) (0 where x == 0), d/dy = x / y
  local a, b = f64{0, 2}:requires_grad_(), f64{3, 4}:requires_grad_()
  torch.xlogy(a, b):sum():backward()
  T.near(a.grad, {0.0, math.log(4)}, 1e-15)
  T.eq(b.grad:tolist(), {0.0, 0.5})
  T.eq(message(function() return torch.ones(2, {dtype = "int64"}):xlogy_(2) end),
       "xlogy_: the result type float32 cannot be cast to the input's dtype int64")
  T.eq(message(function() return torch.xlogy(1, 2) end), "xlogy: expected a tensor for input or other, got 1 and 2")
  -- torch.nan_to_num([nan, inf, -inf, 1.].half()) -> [0, 65504, -65504, 1]
  r = torch.nan_to_num(torch.tensor{NAN, INF, -INF, 1.0}:half())
  T.eq({r.dtype, r:tolist()}, {"float16", {0, 65504, -65504, 1}})
  T.eq(torch.tensor{NAN, INF, -INF}:nan_to_num(1, 2, {neginf = -3}):tolist(), {1, 2, -3})
  r = torch.nan_to_num(f64{INF, -INF})
  T.eq(r:tolist(), {1.7976931348623157e308, -1.7976931348623157e308})
  T.eq(torch.nan_to_num(torch.tensor{1, 2}):tolist(), {1, 2})
  x = torch.tensor{NAN, 2.0}
  T.truthy(rawequal(x:nan_to_num_({nan = 5}), x))
  T.eq(x:tolist(), {5, 2})
  a = f64{NAN, 2, INF}:requires_grad_()
  torch.nan_to_num(a):sum():backward()
  T.eq(a.grad:tolist(), {0, 1, 0})
  T.eq(message(function() return torch.nan_to_num(torch.ones(2), "x") end), "nan_to_num: nan must be a number, got \"x\"")
end)

T.test("cdist, cosine_similarity and one_hot", function()
  local x1 = f64{{0, 1}, {2, 3}}
  local x2 = f64{{1, 1}, {0, -1}, {3, 3}}
  -- torch.cdist(x1, x2) and p=1.5 (batched x1)
  T.near(torch.cdist(x1, x2), {{1.0, 2.0, 3.605551275463989}, {2.23606797749979, 4.47213595499958, 1.0}}, 1e-15)
  T.near(torch.cdist(x1:unsqueeze(1), x2, 1.5),
         {{{1.0, 2.0, 4.008188992688178}, {2.4472608147714756, 4.89452162954295, 1.0}}}, 1e-15)
  T.near(torch.cdist(x1, x2, {compute_mode = "use_mm_for_euclid_dist"}),
         {{1.0, 2.0, 3.605551275463989}, {2.23606797749979, 4.47213595499958, 1.0}}, 1e-14)
  -- p=0 counts differing coordinates, p=inf is the largest difference
  T.eq(torch.cdist(f64{{0, 0}, {1, 1}}, f64{{1, 0}, {1, 1}, {0, 0}}, 0):tolist(), {{1, 2, 0}, {1, 0, 2}})
  T.eq(torch.cdist(f64{{0, 0}, {1, 1}}, f64{{1, 0}, {1, 1}, {0, 0}}, INF):tolist(), {{1, 1, 0}, {1, 0, 1}})
  T.eq(torch.cdist(torch.ones(2, 0), torch.ones(4, 0)):tolist(), {{0, 0, 0, 0}, {0, 0, 0, 0}})
  -- gradient: d/dx of sum of distances; x=[[0,0],[1,1]] to [[1,0],[1,1],[0,0]] -> [[-1.7071,-0.7071],[0.7071,1.7071]]
  local x = f64{{0, 0}, {1, 1}}:requires_grad_()
  torch.cdist(x, f64{{1, 0}, {1, 1}, {0, 0}}):sum():backward()
  local s = math.sqrt(0.5)
  T.near(x.grad, {{-1 - s, -s}, {s, 1 + s}}, 1e-15)
  T.eq(message(function() return torch.cdist(torch.ones(2, 3), torch.ones(2, 4)) end),
       "cdist: x1 and x2 must have the same number of columns, got {2,3} and {2,4}")
  T.eq(message(function() return torch.cdist(torch.ones(2, 3), torch.ones(2, 3), -1) end), "cdist: p must be >= 0, got -1")
  T.eq(message(function() return torch.cdist(torch.ones(3), torch.ones(2, 3)) end),
       "cdist: expected x1 to have at least 2 dims, got a tensor of shape {3}")
  T.eq(message(function() return torch.cdist(torch.ones(2, 3), torch.ones(2, 3), {compute_mode = "fast"}) end),
       "cdist: compute_mode must be \"use_mm_for_euclid_dist_if_necessary\", \"use_mm_for_euclid_dist\" or " ..
       "\"donot_use_mm_for_euclid_dist\", got \"fast\"")
  -- F.cosine_similarity([[1,2,3],[0,0,0]], [[2,-1,0.5]]) -> [0.1749635530559413, 0]
  T.near(F.cosine_similarity(f64{{1, 2, 3}, {0, 0, 0}}, f64{{2, -1, 0.5}}), {0.1749635530559413, 0.0}, 1e-15)
  -- dim=-1 with broadcasting; eps clamps each norm: ([[0.5,0]], [[4,0]], eps=1) -> 0.5
  T.near(torch.cosine_similarity(torch.tensor{1.0, 2}, torch.tensor{{0.5, 0}, {1, 1}}, -1), {0.4472136, 0.9486833}, 1e-6)
  T.eq(F.cosine_similarity(f64{{0.5, 0}}, f64{{4, 0}}, {eps = 1}):tolist(), {0.5})
  T.eq(message(function() return F.cosine_similarity(torch.tensor{1, 2}, torch.tensor{1, 2}, 1) end),
       "cosine_similarity: expected floating-point inputs, got int64 and int64")
  T.eq(message(function() return F.cosine_similarity(torch.ones(3), torch.ones(3)) end),
       "cosine_similarity: dim 2 is out of range for a tensor of 1 dim (valid 1..1 or -1..-1)")
  -- F.one_hot(tensor([0, 2])) -> [[1,0,0],[0,0,1]] (1-based classes here)
  local h = F.one_hot(torch.tensor{1, 3})
  T.eq({h.dtype, h:tolist()}, {"int64", {{1, 0, 0}, {0, 0, 1}}})
  T.eq(F.one_hot(torch.tensor(2), 3):tolist(), {0, 1, 0})
  T.eq(F.one_hot(torch.tensor{{1}, {2}}, {num_classes = 2}):tolist(), {{{1, 0}}, {{0, 1}}})
  T.eq(F.one_hot(torch.zeros(0, {dtype = "int64"}), 3).shape, {0, 3})
  T.eq(message(function() return F.one_hot(torch.tensor{1, 5}, 3) end),
       "one_hot: class index 5 is out of range for 3 classes (valid 1..3: classes are 1-based)")
  T.eq(message(function() return F.one_hot(torch.tensor{0, 1}) end),
       "one_hot: class index 0 is out of range for 1 classes (valid 1..1: classes are 1-based)")
  T.eq(message(function() return F.one_hot(torch.zeros(0, {dtype = "int64"})) end),
       "one_hot: cannot infer num_classes from an empty tensor")
  T.eq(message(function() return F.one_hot(torch.tensor{1, 2}:int()) end),
       "one_hot: expected an int64 tensor of class indices, got int32")
end)

T.test("torch.as_tensor, torch.from_numpy and torch.device", function()
  local t = torch.ones(2)
  T.truthy(rawequal(torch.as_tensor(t), t))
  T.truthy(rawequal(torch.as_tensor(t, {dtype = "float32", device = "cpu"}), t))
  local d = torch.as_tensor(t, {dtype = "float64"})
  T.eq({d.dtype, d:tolist()}, {"float64", {1, 1}})
  T.eq(torch.as_tensor({1, 2}).dtype, "int64")
  T.eq(torch.as_tensor({1, 2}, {dtype = "float64", device = "cpu"}):tolist(), {1, 2})
  -- a NumPy array becomes a torch tensor over the same memory, with PyTorch's semantics
  local a = np.array{1, 2}
  local f = torch.from_numpy(a)
  f[1] = 7
  T.eq(a:tolist(), {7, 2})
  a[2] = 9
  T.eq(f:tolist(), {7, 9})
  T.eq(message(function() return f // 0 end), "floor_divide: integer division by zero")
  local g = torch.as_tensor(a)
  g[1] = 5
  T.eq(a:tolist(), {5, 9})
  T.eq((torch.as_tensor(np.array{1, 2}) / 2).dtype, "float32")
  T.eq(message(function() return torch.from_numpy(t) end),
       "from_numpy: expected a NumPy array (made by np.*), got a torch tensor (torch.as_tensor takes either)")
  -- Device objects as PyTorch's (print(torch.device("cuda", 2)), .type, .index): the name by
  -- tostring, .index nil (None) unless given, one object per name so == compares devices.
  local names, types, indices = {}, {}, {}
  for i, d in ipairs{torch.device("cpu"), torch.device("cuda"), torch.device("cuda:1"), torch.device("cuda", 2),
                     torch.device("cpu", 0)} do
    names[i], types[i], indices[i] = tostring(d), d.type, d.index == nil and "None" or d.index
  end
  T.eq(names, {"cpu", "cuda", "cuda:1", "cuda:2", "cpu"})
  T.eq(types, {"cpu", "cuda", "cuda", "cuda", "cpu"})
  T.eq(indices, {"None", "None", 1, 2, "None"})
  local cpu = torch.device("cpu")
  T.truthy(torch.ones(1).device == cpu and torch.ones(1):to(cpu).device == cpu)
  T.truthy(torch.device("cuda") ~= torch.device("cuda:0"))  -- as in PyTorch
  T.truthy(torch.device(cpu) == cpu and torch.zeros(2, {device = cpu}).device.type == "cpu")
  T.eq("on " .. cpu .. "!", "on cpu!")
  local m = nn.Linear(2, 2):to(cpu):to({device = cpu})
  T.eq(m.weight.device, cpu)
  T.eq(message(function() return cpu.kind end), "torch.device: no field 'kind' (devices have type and index)")
  T.eq(message(function() return torch.zeros(1, {device = 3}) end),
       "zeros: keyword 'device' must be a device (a string or torch.device), got a number")
  T.eq(message(function() return torch.device(cpu, 0) end), "device: a device object takes no index, got 0")
  T.eq(message(function() return torch.device("gpu") end),
       "device: unknown device type \"gpu\" (expected \"cpu\" or \"cuda\", with an index as \"cuda:N\")")
  T.eq(message(function() return torch.device("cuda:1", 1) end),
       "device: the device string 'cuda:1' has an index already, and index 1 was given")
  T.eq(message(function() return torch.device("cuda", -1) end), "device: index must be an integer >= 0, got -1")
end)

-- PyTorch 1.13: x = tensor([0.5, 2.0, -1.5, 7.25], float64); the first and second derivatives of
-- digamma(x).sum() by create_graph; torch.polygamma(3, x); polygamma(2, tensor([1, 2, 0])).
T.test("polygamma and digamma's derivatives to second order", function()
  local x = torch.tensor({0.5, 2.0, -1.5, 7.25}, {dtype = "float64", requires_grad = true})
  local g = torch.autograd.grad(torch.digamma(x):sum(), x, {create_graph = true})[1]
  T.near(g, {4.934802202073678, 0.6449340670881899, 9.37924664484954, 0.14787923316154666}, 1e-13)
  local h = torch.autograd.grad(g:sum(), x)[1]
  T.near(h, {-16.828796644234316, -0.4041138063191886, -0.23620405164172825, -0.021828952295197733}, 1e-12)
  T.near(torch.polygamma(3, x:detach()), {97.40909103400242, 0.4939394022668293, 194.59427621918758,
                                          0.006433037597940158}, 1e-12)
  T.near(x:detach():polygamma(3), torch.polygamma(3, x:detach()), 0)
  local i = torch.polygamma(2, torch.tensor({1, 2, 0}))
  T.eq(i.dtype, "float32")
  T.near(i, {-2.40411376953125, -0.4041137993335724, -math.huge}, 1e-6)
  T.near(torch.polygamma(0, x:detach()), torch.digamma(x:detach()), 0)
  local y = torch.tensor({1.5, 3.0}, {dtype = "float64"})
  y:polygamma_(1)
  T.near(y, {0.9348022009716718, 0.39493406693194577}, 1e-14)
  local out = torch.empty(2, {dtype = "float64"})
  T.truthy(rawequal(torch.polygamma(1, torch.tensor({1.5, 3.0}, {dtype = "float64"}), {out = out}), out))
  T.near(out, {0.9348022009716718, 0.39493406693194577}, 1e-14)
  T.eq(message(function() return torch.polygamma(-1, x) end), "polygamma: n must be an integer in 0..2^24, got -1")
  T.eq(message(function() return torch.polygamma(1.5, x) end), "polygamma: n must be an integer in 0..2^24, got 1.5")
  T.eq(message(function() return x:polygamma("2") end), 'polygamma: n must be an integer in 0..2^24, got "2"')
  T.eq(message(function() return torch.polygamma(1, "x") end), 'polygamma: expected a tensor for input, got "x"')
  T.eq(message(function() return torch.ones(2, {dtype = "int64"}):polygamma_(1) end),
       "polygamma_: the result type float32 cannot be cast to the input's dtype int64")
end)

-- PyTorch 1.13: torch.gradient(tensor([1,4,9,16])) -> (tensor([3., 4., 6., 7.]),); spacing=2.;
-- a 2x3 tensor along dim 1 with edge_order=2; coordinates (tensor([0.,1,3,4]),); spacing=[1.,2.].
T.test("torch.gradient as PyTorch", function()
  local r = torch.gradient(torch.tensor({1, 4, 9, 16}))
  T.eq(#r, 1)
  T.eq(r[1].dtype, "float32")
  T.eq(r[1]:tolist(), {3, 4, 6, 7})
  T.eq(torch.gradient(torch.tensor({1., 4, 9, 16}), {spacing = 2.})[1]:tolist(), {1.5, 2, 3, 3.5})
  local m = torch.tensor({{1., 4, 9}, {16, 25, 36}})
  T.eq(torch.gradient(m, {dim = 2, edge_order = 2})[1]:tolist(), {{2, 4, 6}, {8, 10, 12}})
  T.near(torch.gradient(torch.tensor({1., 4, 9, 16}), {spacing = {torch.tensor({0., 1, 3, 4})}})[1],
         {3.0, 2.8333333, 5.5, 7.0}, 1e-6)
  r = torch.gradient(m, {spacing = {1., 2.}})
  T.eq({r[1]:tolist(), r[2]:tolist()}, {{{15, 21, 27}, {15, 21, 27}}, {{1.5, 2, 2.5}, {4.5, 5, 5.5}}})
  T.eq(message(function() return torch.gradient(torch.tensor({1., 4}), {edge_order = 2}) end),
       "gradient: expected each dimension size to be at least edge_order+1 (dim 1 has 2)")
  T.eq(message(function() return torch.gradient(m, {spacing = {1.}}) end),
       "gradient: expected spacing to be unspecified, a number or a list of 2 values (one per dim), got 1")
  T.eq(message(function() return torch.gradient(m, {edge_order = 3}) end), "gradient: edge_order must be 1 or 2, got 3")
  T.eq(message(function() return torch.gradient(m, {dim = 3}) end),
       "gradient: dim 3 is out of range for a tensor of 2 dims (valid 1..2 or -2..-1)")
  T.eq(message(function() return torch.gradient(torch.tensor(1.)) end),
       "gradient: expected a tensor with at least one dim, got a 0-dim one")
  T.eq(message(function() return torch.gradient(m, {spacing = "x"}) end),
       'gradient: spacing must be a number or a list of numbers or 1-D tensors, got "x"')
  T.eq(message(function() return torch.gradient(m, {step = 1}) end),
       "gradient: unknown keyword 'step' (valid: input, spacing, dim, edge_order)")
end)

-- torch.equal: torch.equal(tensor([1,2]), tensor([1.,2.])) is True; other shapes (even ones
-- that broadcast) and NaN give False.
T.test("torch.equal and x:equal as PyTorch", function()
  local i64, f = torch.tensor({1, 2}), torch.tensor({1.0, 2.0}, {dtype = "float64"})
  T.eq({torch.equal(i64, f), i64:equal(f), torch.equal(i64, torch.tensor({1, 2, 3})),
        torch.equal(i64, torch.tensor({{1, 2}})), torch.equal(torch.tensor({0 / 0}), torch.tensor({0 / 0})),
        torch.equal(torch.zeros(0, 3), torch.zeros(0, 3)), torch.equal(torch.zeros(0, 3), torch.zeros(3, 0)),
        torch.equal(torch.tensor(true), torch.tensor(1)), torch.equal(torch.tensor({1, 2}), torch.tensor({1, 3}))},
       {true, true, false, false, false, true, false, true, false})
  T.eq(message(function() return torch.equal(i64, "x") end), 'equal: expected a tensor for other, got "x"')
  T.eq(message(function() return torch.equal(i64, {1, 2}) end), "equal: unknown keyword a number key (valid: input, other)")
  T.eq(message(function() return torch.equal(i64) end), "equal: missing argument 'other'")
end)

T.test("erfinv, lgamma and digamma: PyTorch's values, gradients and spellings", function()
  -- torch.erfinv(tensor([-1,-0.999,-0.5,0,0.3,0.9999,1,1.5], dtype=float64))
  T.near(torch.erfinv(f64{-1, -0.999, -0.5, 0, 0.3, 0.9999, 1, 1.5}),
         {-INF, -2.3267537655135153, -0.4769362762044699, 0.0, 0.2724627147267544, 2.751063905712083, INF, NAN}, 1e-15)
  -- float32: torch.erfinv(tensor([-0.5, 0.3, 0.9999, 0.99])), within about one float32 ulp: the
  -- release build (FMA contraction) gives PyTorch's bits, the sanitizer build (-O1, no FMA) is
  -- one ulp off at 0.99
  T.near(torch.erfinv(torch.tensor{-0.5, 0.3, 0.9999, 0.99}),
         {-0.4769362807273865, 0.27246272563934326, 2.7510364055633545, 1.821386694908142}, 1e-7)
  -- torch.lgamma(tensor([-2.5,-1,0,0.5,1,2.5,10,1e-8,171.5,1e300], dtype=float64))
  T.near(torch.lgamma(f64{-2.5, -1, 0, 0.5, 1, 2.5, 10, 1e-8, 171.5, 1e300}),
         {-0.05624371649767405, INF, INF, 0.5723649429247001, 0.0, 0.2846828704729192, 12.801827480081469,
          18.42068073818021, 709.1431630309282, 6.897755278982137e+302}, 1e-15)
  -- torch.digamma(tensor([-2.5,-1,0,-0.,0.5,1,2.5,10,1e-8,1e6], dtype=float64)): -inf at +0, inf at -0
  T.near(torch.digamma(f64{-2.5, -1, 0, -0.0, 0.5, 1, 2.5, 10, 1e-8, 1e6}),
         {1.1031566406452433, NAN, -INF, INF, -1.9635100260214229, -0.5772156649015328, 0.7031566406452431,
          2.251752589066721, -100000000.57721564, 13.81551005796419}, 1e-15)
  -- float32: torch.digamma(tensor([-2.5, 0.5, 2.5, 10, 1e-3]))
  T.eq(torch.digamma(torch.tensor{-2.5, 0.5, 2.5, 10, 1e-3}):tolist(),
       {1.1031566858291626, -1.9635108709335327, 0.7031567692756653, 2.2517526149749756, -1000.5755615234375})
  -- integers give the default float; methods and in-place forms
  local r = torch.tensor{1, 2}:lgamma()
  T.eq({r.dtype, r:tolist()}, {"float32", {0, 0}})
  local x = f64{0.5, 2.5}
  T.truthy(rawequal(x:digamma_(), x))
  T.near(x, {-1.9635100260214229, 0.7031566406452431}, 1e-15)
  -- gradients: digamma's is polygamma(1, x): torch.polygamma(1, tensor([0.5, 2.5, -2.5, 10]))
  local t = f64{0.5, 2.5, -2.5, 10}:requires_grad_()
  torch.digamma(t):sum():backward()
  T.near(t.grad, {4.934802202073678, 0.4903577562398206, 9.53924664493752, 0.10516633568216657}, 1e-14)
  t = f64{0.5, 2.5}:requires_grad_()
  torch.lgamma(t):sum():backward()
  T.near(t.grad, {-1.9635100260214229, 0.7031566406452431}, 1e-15)
  t = f64{0.0, 0.5}:requires_grad_()
  torch.erfinv(t):sum():backward()
  -- d/dx erfinv(x) = sqrt(pi)/2 * exp(erfinv(x)^2): 0.886226925452758 at 0
  T.near(t.grad, {math.sqrt(math.pi) / 2, math.sqrt(math.pi) / 2 * math.exp(0.4769362762044699 ^ 2)}, 1e-15)
  T.eq(torch._trigamma, nil)
  t = f64{1.5}:requires_grad_()
  local g = torch.autograd.grad(torch.digamma(t), {t}, {create_graph = true})[1]
  g:backward()  -- digamma's second derivative: polygamma(2, 1.5), PyTorch's -0.8287966442343201
  T.near(t.grad, {-0.8287966442343201}, 1e-14)
  -- out= as a keyword, and positional in the np spelling (the values of the lines above)
  local out = torch.empty(2, {dtype = "float64"})
  T.truthy(rawequal(np.lgamma(f64{0.5, 2.5}, out), out))
  T.near(out, {0.5723649429247001, 0.2846828704729192}, 1e-15)
  T.truthy(rawequal(torch.digamma(f64{0.5, 2.5}, {out = out}), out))
  T.near(out, {-1.9635100260214229, 0.7031566406452431}, 1e-15)
  np.erfinv(f64{0, 0.3}, out)
  T.near(out, {0, 0.2724627147267544}, 1e-15)
  np.digamma(f64{2.5, 0.5}, out)
  T.near(out, {0.7031566406452431, -1.9635100260214229}, 1e-15)
  np.lgamma(f64{2.5, 0.5}, {out = out})
  T.near(out, {0.2846828704729192, 0.5723649429247001}, 1e-15)
  torch.erfinv(f64{0.3, 0}, {out = out})
  T.near(out, {0.2724627147267544, 0}, 1e-15)
  T.error(function() return torch.lgamma(f64{0.5}, {out = torch.empty(1, {dtype = "int64"})}) end, "lgamma")
end)

T.test("only the module's Lua parts add tensor methods, as it loads", function()
  T.eq(message(function() torch._add_method("shape", function() end) end),
       "_add_method: only the Lua-written parts of the module add methods, as it loads")
  T.eq(torch.ones(2, 3).shape, {2, 3})
end)

T.test("clamp with tensor bounds broadcasts and splits the gradient as PyTorch", function()
  -- x=[[1,-2,3],[0.5,4,-1]], lo=[0,0,4], hi=[[2],[0.25]]: torch.clamp(x, lo, hi)
  local x = f64{{1, -2, 3}, {0.5, 4, -1}}:requires_grad_()
  local lo, hi = f64{0, 0, 4}:requires_grad_(), f64{{2}, {0.25}}:requires_grad_()
  local y = torch.clamp(x, lo, hi)
  T.eq(y:tolist(), {{1, 0, 2}, {0.25, 0.25, 0.25}})
  y:backward(f64{{1, 2, 3}, {4, 5, 6}})
  -- x.grad [[1,0,0],[0,0,0]], lo.grad [0,2,0], hi.grad [[3],[15]]
  T.eq({x.grad:tolist(), lo.grad:tolist(), hi.grad:tolist()}, {{{1, 0, 0}, {0, 0, 0}}, {0, 2, 0}, {{3}, {15}}})
  T.eq(torch.ones(3):clamp{max = torch.tensor{0.0, 2, 0.5}}:tolist(), {0, 1, 0.5})
end)

T.done()
