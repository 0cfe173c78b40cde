-- Positional parameters (issue 13): every positional parameter a binding's doc declares is
-- given by some test, and here are the ones no other test gave, each with its effect asserted
-- by exact values (tests/arg_coverage.lua, run by tests/run_all.sh, fails for a declared
-- positional no test gives). The np spelling's positional out of the pointwise ops and the
-- in-place ops x:f_() are checked against NumPy in tests/conformance/ops.lua; the device
-- argument of torch.cuda's functions in tests/lua/test_cuda.lua.
-- Reference values not obvious by hand come from NumPy 1.x / PyTorch 1.13 (quoted beside).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"
local t = torch.tensor

T.test("_binding_positionals and _binding_keywords read one doc parser", function()
  T.eq({torch._binding_positionals(torch.sum)}, {{"x", "dim", "keepdim"}, false})
  T.eq({torch._binding_positionals(torch.ones)}, {{"size..."}, true})
  T.eq({torch._binding_positionals(np.random.rand)}, {{"d0", "d1", "..."}, true})
  -- a method documented as x:size([dim]) has self first, as a method call passes it
  local x = torch.zeros(2, 3)
  T.eq({torch._binding_positionals(x.size)}, {{"x", "dim"}, false})
  T.eq({torch._binding_positionals(x.to)}, {{"x", "dtype | device"}, false})
  -- a braces group without `=` is a positional table, not the keyword table
  T.eq({torch._binding_positionals(torch.index_put)}, {{"x", "{idx1, ...}", "values", "accumulate"}, false})
  T.eq({torch._binding_keywords(torch.index_put)}, {{"accumulate"}, false})
  T.eq({torch._binding_keywords(torch.sum)}, {{"dim", "axis", "keepdim", "keepdims", "dtype", "out"}, false})
  T.eq(select(2, torch._binding_keywords(np.savez)), true)
  T.eq({torch._binding_positionals(print)}, {})
  T.eq({torch._binding_keywords(print)}, {})
end)

T.test("index_put: accumulate= adds at repeated indices; an unknown keyword is an error", function()
  local idx = {t{1, 1, 3}}
  -- torch.zeros(3).index_put((torch.tensor([0, 0, 2]),), torch.tensor([2., 3., 4.]), accumulate=True) = [5, 0, 4]
  T.eq(torch.index_put(torch.zeros(3), idx, t{2.0, 3.0, 4.0}, {accumulate = true}):tolist(), {5, 0, 4})
  local y = torch.zeros(3)
  T.truthy(rawequal(y:index_put_({t{2, 2}}, t{1.5, 1.5}, {accumulate = true}), y))
  T.eq(y:tolist(), {0, 3, 0})
  T.error(function() return torch.zeros(3):index_put(idx, t{1.0, 1.0, 1.0}, {bogus = 1}) end,
          "index_put: unknown keyword 'bogus' (valid: accumulate)")
end)

T.test("alpha as a positional: add_, sub, subtract (torch spelling) scale the other operand", function()
  local x = t{1.0, 2.0}
  T.truthy(rawequal(x:add_(t{1.0, 1.0}, 3), x))
  T.eq(x:tolist(), {4, 5})
  T.eq(torch.sub(t{5, 5}, t{1, 2}, 2):tolist(), {3, 1})
  T.eq(t{5, 5}:sub(t{1, 2}, 2):tolist(), {3, 1})
  -- np.subtract's third positional is NumPy's out
  local out = torch.zeros(2, {dtype = "int64"})
  T.truthy(rawequal(np.subtract(t{5, 5}, t{1, 2}, out), out))
  T.eq(out:tolist(), {4, 3})
end)

T.test("round: decimals as a positional (np.around, x:round_), with out after it", function()
  local v = {1.234, 5.678, -2.25}
  -- np.round(np.array([1.234, 5.678, -2.25]), 1) = [1.2, 5.7, -2.2] (half to even)
  T.eq(np.around(t(v, {dtype = "float64"}), 1):tolist(), {1.2, 5.7, -2.2})
  local out = torch.zeros(3, {dtype = "float64"})
  T.truthy(rawequal(np.around(t(v, {dtype = "float64"}), 1, out), out))
  T.eq(out:tolist(), {1.2, 5.7, -2.2})
  local x = t(v, {dtype = "float64"})
  T.truthy(rawequal(x:round_(1), x))
  T.eq(x:tolist(), {1.2, 5.7, -2.2})
end)

T.test("autograd.backward: grads as a positional weight each output", function()
  local x = t({1.0, 2.0, 3.0}, {requires_grad = true})
  local y = x * x
  torch.autograd.backward({y}, {t{1.0, 0.5, 2.0}})
  T.eq(x.grad:tolist(), {2, 2, 12})   -- d(x*x)/dx * g = 2x * g
end)

T.test("concat, concatenate: dim as a positional", function()
  local a, b = t{{1, 2}}, t{{3}}
  T.eq(torch.concat({a, b}, 2):tolist(), {{1, 2, 3}})
  T.eq(torch.concatenate({a, b}, 2):tolist(), {{1, 2, 3}})
  T.eq(np.concatenate({a, b}, 2):tolist(), {{1, 2, 3}})
  T.eq(torch.concat({a, t{{4, 5}}}, 1):tolist(), {{1, 2}, {4, 5}})
end)

T.test("conv2d: stride, padding, dilation, groups as positionals", function()
  local x = torch.arange(50, {dtype = "float32"}):reshape(1, 2, 5, 5)
  local w = torch.arange(8, {dtype = "float32"}):reshape(2, 1, 2, 2)
  -- torch.nn.functional.conv2d(x, w, torch.tensor([0.5, -1.]), 2, 1, 2, 2) with x, w as here
  local r = torch.conv2d(x, w, t{0.5, -1.0}, 2, 1, 2, 2)
  T.eq(r.shape, {1, 2, 3, 3})
  T.eq(r:tolist(), {{{{18.5, 36.5, 16.5}, {54.5, 94.5, 36.5}, {16.5, 18.5, 0.5}},
                     {{216, 416, 197}, {441, 835, 389}, {204, 378, 171}}}})
  T.eq(torch.conv2d(x, w, t{0.5, -1.0}, {stride = 2, padding = 1, dilation = 2, groups = 2}):tolist(), r:tolist())
end)

T.test("max_pool2d: stride, padding, dilation as positionals", function()
  local x = torch.arange(16, {dtype = "float32"}):reshape(1, 1, 4, 4)
  -- torch.nn.functional.max_pool2d(torch.arange(16.).reshape(1, 1, 4, 4), 2, 1, 1, 2)
  T.eq(torch.max_pool2d(x, 2, 1, 1, 2):tolist(),
       {{{{5, 6, 7, 6}, {9, 10, 11, 10}, {13, 14, 15, 14}, {9, 10, 11, 10}}}})
end)

T.test("identity: dtype as a positional", function()
  local e = np.identity(2, "int32")
  T.eq({e.dtype, e:tolist()}, {"int32", {{1, 0}, {0, 1}}})
end)

T.test("linalg.norm: keepdim as a positional", function()
  -- torch.linalg.norm(torch.tensor([[3., 4.], [6., 8.]]), 2, 1, True) = [[5.], [10.]]
  local r = torch.linalg.norm(t{{3.0, 4.0}, {6.0, 8.0}}, 2, 2, true)
  T.eq({r.shape, r:tolist()}, {{2, 1}, {{5}, {10}}})
  T.eq(torch.linalg.norm(t{{3.0, 4.0}, {6.0, 8.0}}, 2, 2, false).shape, {2})
end)

T.test("moveaxis and swapdims: their dims as positionals", function()
  local a = torch.arange(24):reshape(2, 3, 4)
  -- np.moveaxis(np.arange(24).reshape(2, 3, 4), 0, 2)
  local want = {{{0, 12}, {1, 13}, {2, 14}, {3, 15}}, {{4, 16}, {5, 17}, {6, 18}, {7, 19}},
                {{8, 20}, {9, 21}, {10, 22}, {11, 23}}}
  for _, m in ipairs({np.moveaxis(a, 1, 3), torch.moveaxis(a, 1, 3), a:moveaxis(1, -1)}) do
    T.eq({m.shape, m:tolist()}, {{3, 4, 2}, want})
  end
  T.eq(torch.swapdims(t{{1, 2, 3}, {4, 5, 6}}, 1, 2):tolist(), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(t{{1, 2, 3}, {4, 5, 6}}:swapdims(2, 1):tolist(), {{1, 4}, {2, 5}, {3, 6}})
end)

T.test("ndimension and stride(dim)", function()
  local x = torch.zeros(2, 3, 4)
  T.eq(x:ndimension(), 3)
  T.eq({x:stride(1), x:stride(2), x:stride(3), x:stride(-1)}, {12, 4, 1, 1})
  T.eq(x:transpose(1, 3):stride(1), 1)
end)

T.test("np.random.rand and randn: every size argument shapes the result", function()
  np.random.seed(3)
  local r = np.random.rand(2, 3, 4)
  T.eq({r.shape, r.dtype}, {{2, 3, 4}, "float64"})
  T.truthy(r:min():item() >= 0 and r:max():item() < 1, "rand in [0, 1)")
  local n = np.random.randn(2, 3, 4, 5)
  T.eq({n.shape, n.dtype}, {{2, 3, 4, 5}, "float64"})
end)

T.test("savez and savez_compressed: every positional array is stored as arr_<i>", function()
  local dir = T.tmpdir()
  local a, b, c = torch.arange(3), t{true, false}, t({{1.5}}, {dtype = "float64"})
  np.savez(dir .. "/three.npz", a, b, c)
  local z = np.load(dir .. "/three.npz")
  T.eq({z.arr_0:tolist(), z.arr_1:tolist(), z.arr_2:tolist()}, {{0, 1, 2}, {true, false}, {{1.5}}})
  np.savez_compressed(dir .. "/two.npz", a, c)
  local zc = np.load(dir .. "/two.npz")
  T.eq({zc.arr_0:tolist(), zc.arr_1:tolist(), zc.arr_1.dtype}, {{0, 1, 2}, {{1.5}}, "float64"})
  np.savez_compressed(dir .. "/three_c.npz", a, b, c)
  T.eq(np.load(dir .. "/three_c.npz").arr_2:tolist(), {{1.5}})
end)

T.test("np bitwise ops: out as a positional", function()
  local a, b = t({12, 10}, {dtype = "int32"}), t({10, 6}, {dtype = "int32"})
  local function into(f, ...)
    local out = torch.zeros(2, {dtype = "int32"})
    local args = {...}
    args[#args + 1] = out
    T.truthy(rawequal(f(table.unpack(args)), out), "the out tensor is returned itself")
    return out:tolist()
  end
  -- np.bitwise_and([12, 10], [10, 6]) = [8, 2]; or = [14, 14]; xor = [6, 12]; not [12, 10] = [-13, -11]
  T.eq(into(np.bitwise_and, a, b), {8, 2})
  T.eq(into(np.bitwise_or, a, b), {14, 14})
  T.eq(into(np.bitwise_xor, a, b), {6, 12})
  T.eq(into(np.bitwise_not, a), {-13, -11})
end)

T.test("take: axis as a positional", function()
  -- np.take(np.array([[1, 2, 3], [4, 5, 6]]), [1, 0], axis=1) = [[2, 1], [5, 4]]
  T.eq(np.take(t{{1, 2, 3}, {4, 5, 6}}, t{2, 1}, 2):tolist(), {{2, 1}, {5, 4}})
  T.eq(np.take(t{{1, 2, 3}, {4, 5, 6}}, t{2}, 1):tolist(), {{4, 5, 6}})
end)

T.test("topk: largest and sorted as positionals", function()
  local v, i = torch.topk(t{5, 1, 9, 3, 7}, 3, 1, true, true)
  T.eq({v:tolist(), i:tolist()}, {{9, 7, 5}, {3, 5, 1}})
  local s = t{5, 1, 9, 3, 7}:topk(2, 1, false, true)
  T.eq(s:tolist(), {1, 3})
  -- sorted=false leaves the order open (as PyTorch); tide returns the k values sorted.
  T.eq(t{5, 1, 9, 3, 7}:topk(3, 1, true, false):tolist(), {9, 7, 5})
end)

T.done()
