-- Autograd: recording, backward, accumulation, grad mode, autograd.grad (higher order),
-- in-place and version-counter errors, closed-form gradients, and the fused nn functions
-- against PyTorch 1.13 reference values (the Python that produced them is quoted).
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")

local function t64(v) return torch.tensor(v, {dtype = "float64"}) end
local function leaf(v) return torch.tensor(v, {dtype = "float64", requires_grad = true}) end

T.test("sum of squares: grad is 2x, leaves and nodes are named", function()
  local x = leaf{1, 2, 3}
  T.eq(x.requires_grad, true)
  T.eq(x.is_leaf, true)
  T.eq(x.grad_fn, nil)
  local y = (x * x):sum()
  T.eq(y.is_leaf, false)
  T.eq(y.grad_fn, "SumBackward")
  T.truthy(tostring(y):find("grad_fn=<SumBackward>", 1, true), tostring(y))
  T.truthy(tostring(x):find("requires_grad=true", 1, true), tostring(x))
  y:backward()
  T.near(x.grad, {2, 4, 6}, 1e-15)
end)

T.test("gradients accumulate until cleared with x.grad = nil", function()
  local x = leaf{1, 2}
  ;(x * 3):sum():backward()
  ;(x * 3):sum():backward()
  T.near(x.grad, {6, 6}, 1e-15)
  x.grad = nil
  T.eq(x.grad, nil)
  ;(x * x):sum():backward()
  T.near(x.grad, {2, 4}, 1e-15)
  x.grad = t64{1, 1}
  ;(x * 1):sum():backward()
  T.near(x.grad, {2, 2}, 1e-15)
end)

T.test("a first gradient becomes .grad without a copy only when nothing else sees its memory", function()
  -- nn.Linear's weight gradient is a view of a result nothing else holds: .grad takes its
  -- memory, and accumulating into it later changes nothing else.
  local W = torch.tensor({{1, 2}, {3, 4}}, {dtype = "float64", requires_grad = true})
  local x = t64{{1, 0}, {2, 1}}
  torch.linear(x, W):sum():backward()
  T.near(W.grad, {{3, 1}, {3, 1}}, 1e-15)
  torch.linear(x, W):sum():backward()
  T.near(W.grad, {{6, 2}, {6, 2}}, 1e-15)
  -- A hook that hands back a view of a tensor the script keeps: .grad is a copy, and
  -- accumulating into it leaves the kept tensor alone.
  local keep = t64{{1, 2}, {3, 4}}
  local v = leaf{0, 0, 0, 0}
  v:register_hook(function() return keep:view(4) end)
  ;(v * 1):sum():backward()
  ;(v * 1):sum():backward()
  T.near(v.grad, {2, 4, 6, 8}, 1e-15)
  T.near(keep, {{1, 2}, {3, 4}}, 0)
  -- A gradient that is part of a larger buffer (cat's backward slices it) is copied: .grad
  -- does not keep the whole buffer alive.
  local a = leaf{1, 2, 3}
  ;(torch.cat({t64{5, 5, 5, 5}, a}) * t64{1, 1, 1, 1, 2, 3, 4}):sum():backward()
  T.near(a.grad, {2, 3, 4}, 0)
  T.error(function() a.grad:as_strided({7}, {1}, 0) end, "storage of 3 elements")
end)

T.test("broadcast operands get gradients summed back to their shapes", function()
  local a = torch.ones(3, 1, {dtype = "float64", requires_grad = true})
  local b = torch.ones(4, {dtype = "float64", requires_grad = true})
  local s = torch.tensor(2.0, {dtype = "float64", requires_grad = true})
  ;((a + b) * s):sum():backward()
  T.eq(a.grad.shape, {3, 1})
  T.near(a.grad, {{8}, {8}, {8}}, 1e-15)
  T.eq(b.grad.shape, {4})
  T.near(b.grad, {6, 6, 6, 6}, 1e-15)
  T.near(s.grad:item(), 24, 1e-15)
end)

T.test("non-scalar backward takes a gradient of the output's shape", function()
  local x = leaf{1, 2, 3}
  local y = x * x
  T.error_usable(function() y:backward() end, "grad can be implicitly created only for one-element outputs")
  T.error_usable(function() y:backward(t64{1, 1}) end, "the gradient has shape {2} but the output has shape {3}")
  y:backward(t64{1, 0.5, 2})
  T.near(x.grad, {2, 2, 12}, 1e-15)
end)

T.test("a second backward through a freed graph is an error unless retain_graph", function()
  local x = leaf{1, 2}
  local y = (x * x):sum()
  y:backward()
  T.error_usable(function() y:backward() end, "backward through the graph a second time")
  local z = (x * x):sum()
  x.grad = nil
  z:backward{retain_graph = true}
  z:backward()
  T.near(x.grad, {4, 8}, 1e-15)
end)

T.test("backward on a tensor that does not require grad is an error", function()
  T.error_usable(function() t64{1, 2}:sum():backward() end, "does not require grad")
  local x = leaf{1}
  local y = torch.no_grad(function() return x * 2 end)
  T.eq(y.requires_grad, false)
  T.error_usable(function() y:sum():backward() end, "does not require grad")
end)

T.test("autograd.grad returns gradients without touching .grad; create_graph gives second order", function()
  local x = leaf{1, 2, 3}
  local g = torch.autograd.grad((x ^ 3):sum(), x, {create_graph = true})[1]
  T.near(g, {3, 12, 27}, 1e-14)
  T.eq(x.grad, nil)
  T.eq(g.requires_grad, true)
  local gg = torch.autograd.grad(g:sum(), {x})[1]
  T.near(gg, {6, 12, 18}, 1e-14)
  -- third order through sin: d3/dx3 sin = -cos
  local y = leaf{0.3, 1.1}
  local d1 = torch.autograd.grad(y:sin():sum(), y, {create_graph = true})[1]
  local d2 = torch.autograd.grad(d1:sum(), y, {create_graph = true})[1]
  local d3 = torch.autograd.grad(d2:sum(), y)[1]
  T.near(d3, {-math.cos(0.3), -math.cos(1.1)}, 1e-14)
end)

T.test("autograd.grad: several inputs, grad_outputs, unused inputs", function()
  local a, b, c = leaf{1, 2}, leaf{3, 4}, leaf{5}
  local y = a * b
  local r = torch.autograd.grad(y, {a, b}, {grad_outputs = t64{1, 10}, retain_graph = true})
  T.near(r[1], {3, 40}, 1e-15)
  T.near(r[2], {1, 20}, 1e-15)
  T.error_usable(function() torch.autograd.grad(y:sum(), {a, c}, {retain_graph = true}) end,
    "input 2 was not used to compute the outputs")
  local u = torch.autograd.grad(y:sum(), {a, c}, {allow_unused = true})
  T.near(u[1], {3, 4}, 1e-15)
  T.eq(u[2], nil)
  T.error_usable(function() torch.autograd.grad(y:sum(), t64{1}) end, "input 1 does not require grad")
end)

T.test("no_grad: function form returns results, <close> form, nesting, restored after errors", function()
  local x = leaf{1, 2}
  local a, b = torch.no_grad(function(k) return x * k, "second" end, 3)
  T.eq(a.requires_grad, false)
  T.eq(b, "second")
  T.eq(select("#", torch.no_grad(function() return 1, nil, 3, nil end)), 4)
  T.eq(select("#", torch.enable_grad(function() end)), 0)
  do
    local _ <close> = torch.no_grad()
    T.eq(torch.is_grad_enabled(), false)
    T.eq((x * 2).requires_grad, false)
    local inner = torch.enable_grad(function() return (x * 2).requires_grad end)
    T.eq(inner, true)
    T.eq(torch.is_grad_enabled(), false)
  end
  T.eq(torch.is_grad_enabled(), true)
  local ok = pcall(torch.no_grad, function() error("boom") end)
  T.eq(ok, false)
  T.eq(torch.is_grad_enabled(), true)
  T.error_usable(function() torch.no_grad(42) end, "no_grad: expected a function or no argument")
end)

-- The <close> scopes share one restoring value per mode: nested and mixed scopes each put back
-- the mode they replaced. _exchange_grad_enabled returns the mode it replaced.
T.test("nested no_grad and enable_grad scopes restore the mode each replaced", function()
  do
    local _ <close> = torch.no_grad()
    do
      local _ <close> = torch.no_grad()
      T.eq(torch.is_grad_enabled(), false)
      do
        local _ <close> = torch.enable_grad()
        T.eq(torch.is_grad_enabled(), true)
      end
      T.eq(torch.is_grad_enabled(), false)
    end
    T.eq(torch.is_grad_enabled(), false)
    do
      local _ <close> = torch.inference_mode()
      T.eq(torch.is_grad_enabled(), false)
    end
  end
  T.eq(torch.is_grad_enabled(), true)
  T.eq(torch._exchange_grad_enabled(false), true)
  T.eq(torch._exchange_grad_enabled(true), false)
  T.eq(torch.is_grad_enabled(), true)
  T.error_usable(function() torch._exchange_grad_enabled("no") end, "_exchange_grad_enabled")
end)

T.test("detach, requires_grad_ and the requires_grad property", function()
  local x = leaf{1, 2}
  local d = (x * 2):detach()
  T.eq(d.requires_grad, false)
  T.eq(d.is_leaf, true)
  T.near(d, {2, 4}, 0)
  local y = t64{1, 2}
  T.eq(y:requires_grad_(), y)
  T.eq(y.requires_grad, true)
  y.requires_grad = false
  T.eq(y.requires_grad, false)
  T.error_usable(function() torch.tensor{1, 2}:requires_grad_() end,
    "requires_grad_: only floating-point and complex tensors can require gradients, got int64")
  T.error_usable(function() torch.zeros(2, {dtype = "int32", requires_grad = true}) end,
    "only floating-point and complex tensors can require gradients")
  T.error_usable(function() (x * 2).requires_grad = false end, "use x:detach()")
  T.error_usable(function() x.requires_grad = 1 end, "requires_grad: expected a boolean")
  T.error_usable(function() x.grad = t64{1, 2, 3} end, "grad: assigned gradient has shape {3} but the tensor has shape {2}")
  T.error_usable(function() x.grad = torch.ones(2) end, "grad: assigned gradient has dtype float32 but the tensor has dtype float64")
  T.error_usable(function() x.grad = 3 end, "grad: expected a tensor or nil")
end)

T.test("in-place on a leaf that requires grad is an error, but fine under no_grad", function()
  local w = leaf{1, 2}
  T.error_usable(function() w:add_(1) end, "add_: a leaf tensor that requires grad cannot be modified in place")
  T.error_usable(function() w[1] = 5 end, "a leaf tensor that requires grad cannot be modified in place")
  T.error_usable(function() w:uniform_() end, "uniform_: cannot refill a tensor that requires grad")
  torch.no_grad(function() w:sub_(t64{0.5, 0.5}) end)
  T.near(w, {0.5, 1.5}, 0)
  T.eq(w.is_leaf, true)
end)

T.test("in-place change of a tensor saved for backward is an error naming the node", function()
  local x = leaf{1, 2}
  local e = x:exp()
  local y = e * e            -- MulBackward saved e
  e:add_(1)
  T.error_usable(function() y:sum():backward() end,
    "a tensor that MulBackward saved for the gradient was modified by an in-place operation")
  local s = x:sigmoid()      -- SigmoidBackward saved its output
  local z = s:sum()
  s:mul_(2)
  T.error_usable(function() z:backward() end, "SigmoidBackward saved")
end)

T.test("in-place ops on non-leaf tensors are recorded", function()
  local x = leaf{-1, 2, -3, 4}
  local h = x * 3
  h:relu_()
  T.eq(h.grad_fn, "ReluBackward")
  h:mul_(2)
  h:sum():backward()
  T.near(x.grad, {0, 6, 0, 6}, 1e-15)
  -- masked assignment (as in manual ReLU backward) and slice assignment of a value that requires grad
  local a = leaf{-1, 2, -3, 4}
  local z = a * 3
  z[z:gt(0)] = 0
  z:sum():backward()
  T.near(a.grad, {3, 0, 3, 0}, 1e-15)
  local b = leaf{1, 2}
  local c = torch.zeros(4, {dtype = "float64"})
  c[{{2, 3}}] = b * 10
  T.near(c, {0, 10, 20, 0}, 0)
  c:sum():backward()
  T.near(b.grad, {10, 10}, 1e-15)
  -- a buffer filled from a tensor that requires grad
  local buf = torch.zeros(2, {dtype = "float64"})
  buf:add_(b)
  T.eq(buf.requires_grad, true)
  b.grad = nil
  ;(buf * buf):sum():backward()
  T.near(b.grad, {2, 4}, 1e-15)
end)

T.test("in-place writes through views rewrite the base's history", function()
  local x = leaf{1, 2, 3}
  local y = x * 2
  local v = y[{{1, 2}}]
  v:mul_(3)
  T.near(y, {6, 12, 6}, 0)
  T.eq(v.grad_fn, "AsStridedBackward")
  y:sum():backward()
  T.near(x.grad, {6, 6, 2}, 1e-15)
  -- the view itself, used after the write, has the new history
  x.grad = nil
  local y2 = x * 2
  local v2 = y2[{{2, 3}}]
  v2:add_(x[{{1, 2}}])
  ;(v2 * v2):sum():backward()   -- v2 = (2 x2 + x1, 2 x3 + x2) = (5, 8)
  T.near(x.grad, {10, 2 * 5 * 2 + 2 * 8, 2 * 8 * 2}, 1e-14)
end)

T.test("a view taken before its base changed in place sees the new history", function()
  local x = leaf{1, 2, 3}
  local y = x * 2
  local w = y[1]
  y:mul_(5)
  ;(w * 1):backward()
  T.near(x.grad, {10, 0, 0}, 1e-15)
  -- a view of a tensor that did not require grad when the view was taken
  local c = torch.zeros(3, {dtype = "float64"})
  local first = c[1]
  c:add_(x)
  T.eq(first.requires_grad, false)
  x.grad = nil
  ;(first * 1):backward()
  T.near(x.grad, {1, 0, 0}, 1e-15)
end)

T.test("writing a value that requires grad into a view of a plain tensor", function()
  local x = leaf{1, 2, 3}
  local c = torch.zeros(3, {dtype = "float64"})
  c:narrow(1, 1, 2):copy_(x[{{1, 2}}] * 2)
  T.eq(c.requires_grad, true)
  T.near(c, {2, 4, 0}, 0)
  ;(c * c):sum():backward()
  T.near(x.grad, {8, 16, 0}, 1e-15)
end)

T.test("in-place through views of leaves and into expanded tensors is an error", function()
  local x = leaf{1, 2, 3}
  T.error_usable(function() x[1]:mul_(2) end, "mul_: a view of a leaf tensor that requires grad cannot be modified in place")
  T.error_usable(function() x:view(3):add_(1) end, "a view of a leaf tensor that requires grad cannot be modified in place")
  T.error_usable(function() x[{{1, 2}}] = 0 end, "index: a leaf tensor that requires grad cannot be modified in place")
  local z = x * 1
  T.error_usable(function() z:view(1, 3):expand(2, 3):add_(1) end, "add_: unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation.")
  torch.no_grad(function() x[1]:mul_(2) end)
  T.near(x, {2, 2, 3}, 0)
end)

T.test("out= is not differentiable", function()
  local x = leaf{1, 2}
  local out = torch.zeros(2, {dtype = "float64"})
  T.error_usable(function() torch.add(x, 1, {out = out}) end, "add: out= is not differentiable")
  T.error_usable(function() torch.sum(x, 1, {out = torch.zeros({}, {dtype = "float64"})}) end, "out= is not differentiable")
  torch.no_grad(function() torch.add(x, 1, {out = out}) end)
  T.near(out, {2, 3}, 0)
  -- an out that requires grad (a parameter) is refused too, in every spelling, and keeps its values
  local p = leaf{5, 6}
  local y = torch.ones(2, {dtype = "float64"})
  local refused = "out= is not differentiable, but the out tensor requires grad"
  T.error_usable(function() torch.add(y, y, {out = p}) end, "add: " .. refused)
  T.error_usable(function() np.add(y, y, p) end, "add: " .. refused)
  T.error_usable(function() np.exp(y, p) end, "exp: " .. refused)
  T.error_usable(function() torch.sum(torch.ones(2, 2, {dtype = "float64"}), 1, {out = p}) end, "sum: " .. refused)
  T.error_usable(function() torch.mm(y:view(2, 1), y:view(1, 2), {out = leaf{1, 2, 3, 4}:view(2, 2)}) end, "mm: out= is not differentiable")
  T.near(p, {5, 6}, 0)
  torch.no_grad(function() np.add(y, y, p) end)
  T.near(p, {2, 2}, 0)
end)

T.test("closed forms: least squares, sigmoid, logsumexp, softmax, var/std, norm", function()
  torch.manual_seed(7)
  local d = 4
  local A = torch.randn(10 * d, d, {dtype = "float64"})
  local y = torch.randn(10 * d, {dtype = "float64"})
  local x = torch.randn(d, {dtype = "float64", requires_grad = true})
  local r = y - A:mv(x)
  r:dot(r):backward()
  T.near(x.grad, (-2 * A:t():mv(y - A:mv(x:detach()))), 1e-12)
  local z = torch.randn(5, {dtype = "float64", requires_grad = true})
  local s = z:sigmoid()
  s:sum():backward()
  T.near(z.grad, s:detach() * (1 - s:detach()), 1e-15)
  local m = torch.randn(3, 4, {dtype = "float64", requires_grad = true})
  m:logsumexp(2):sum():backward()
  T.near(m.grad, torch.softmax(m:detach(), 2), 1e-14)
  m.grad = nil
  local v = torch.randn(3, 4, {dtype = "float64"})
  torch.softmax(m, 2):mul(v):sum():backward()
  local p = torch.softmax(m:detach(), 2)
  T.near(m.grad, p * (v - (p * v):sum(2, true)), 1e-14)
  local q = torch.randn(6, {dtype = "float64", requires_grad = true})
  q:var():backward()
  T.near(q.grad, (q:detach() - q:detach():mean()) * (2 / 5), 1e-14)
  q.grad = nil
  q:std():backward()
  T.near(q.grad, (q:detach() - q:detach():mean()) / (5 * q:detach():std()), 1e-13)
  q.grad = nil
  q:norm():backward()
  T.near(q.grad, q:detach() / q:detach():norm(), 1e-14)
end)

T.test("closed forms: solve, inv, det, matmul", function()
  local A = leaf{{4, 1, 0}, {1, 3, 1}, {0, 1, 2}}
  local B = leaf{{1, 2}, {0, 1}, {3, 1}}
  local X = torch.linalg.solve(A, B)
  local G = t64{{1, -1}, {2, 0.5}, {0, 1}}
  X:mul(G):sum():backward()
  local Ad = A:detach()
  local gB = torch.linalg.solve(Ad:t(), G)
  T.near(B.grad, gB, 1e-13)
  T.near(A.grad, -(gB:mm(X:detach():t())), 1e-13)
  A.grad = nil
  torch.linalg.inv(A):sum():backward()
  local Y = torch.linalg.inv(Ad)
  T.near(A.grad, -(Y:t():mm(torch.ones(3, 3, {dtype = "float64"})):mm(Y:t())), 1e-13)
  A.grad = nil
  torch.linalg.det(A):backward()
  T.near(A.grad, torch.linalg.inv(Ad):t() * torch.linalg.det(Ad):item(), 1e-12)
  local P = leaf{{1, 2}, {3, 4}}
  local Q = leaf{{0.5, -1}, {2, 1}}
  P:matmul(Q):sum():backward()
  T.near(P.grad, {{-0.5, 3}, {-0.5, 3}}, 1e-15)
  T.near(Q.grad, {{4, 4}, {6, 6}}, 1e-15)
end)

T.test("cumprod's gradient at inputs with zeros matches PyTorch", function()
  -- x = [2, 0, 3, 0, 5]; (x.cumprod(0) * [1, 2, 3, 4, 5]).sum().backward() -> [1, 22, 0, 0, 0]
  local x = leaf{2, 0, 3, 0, 5}
  ;(x:cumprod(1) * t64{1, 2, 3, 4, 5}):sum():backward()
  T.near(x.grad, {1, 22, 0, 0, 0}, 1e-15)
  -- m = [[1, 2, 0], [3, 0, 4]]; m.cumprod(1).sum().backward() -> [[3, 1, 2], [1, 15, 0]]
  local m = leaf{{1, 2, 0}, {3, 0, 4}}
  m:cumprod(2):sum():backward()
  T.near(m.grad, {{3, 1, 2}, {1, 15, 0}}, 1e-15)
  local z = leaf{1, 0, 2}
  T.error_usable(function() torch.autograd.grad(z:cumprod(1):sum(), z, {create_graph = true}) end,
    "cumprod: second derivatives at an input that contains zeros are not supported")
  local w = leaf{1, 2, 3}
  local g = torch.autograd.grad(w:cumprod(1):sum(), w, {create_graph = true})[1]
  T.near(g, {1 + 2 + 6, 1 + 3, 2}, 1e-14)
end)

T.test("linear and cross_entropy match PyTorch", function()
  -- logits = (arange(20).reshape(5,4)*0.7).sin(); t = [0,3,1,2,0];
  -- F.cross_entropy(logits, t, weight=[1,2,.5,1.5], label_smoothing=0.1, ignore_index=2)
  local logits = (torch.arange(20, {dtype = "float64"}):reshape(5, 4) * 0.7):sin():requires_grad_()
  local t = torch.tensor{1, 4, 2, 3, 1}
  local w = t64{1, 2, 0.5, 1.5}
  local l = torch.cross_entropy(logits, t, {weight = w, label_smoothing = 0.1, ignore_index = 3})
  T.near(l:item(), 1.9539681683051824, 1e-12)
  l:backward()
  T.near(logits.grad[2], {0.12496436543592317, 0.05614338609265516, 0.03647967645920177, -0.21758742798778008}, 1e-12)
  T.near(logits.grad[4], {0, 0, 0, 0}, 0)
  local none = torch.cross_entropy(logits, t, {reduction = "none"})
  T.near(none, {2.0737089049881128, 2.0453492310790584, 1.8019369604835052, 1.942235707257716, 2.340707652288228}, 1e-12)
  T.near(torch.cross_entropy(logits, t, {reduction = "sum"}):item(), none:sum():item(), 1e-12)
  -- (N, C, d) logits: x3 = (arange(12).reshape(2,3,2)*0.9).cos(); t3 = [[0,2],[1,1]]
  local x3 = (torch.arange(12, {dtype = "float64"}):reshape(2, 3, 2) * 0.9):cos():requires_grad_()
  local l3 = torch.cross_entropy(x3, torch.tensor{{1, 3}, {2, 2}})
  T.near(l3:item(), 1.029558484492256, 1e-12)
  l3:backward()
  T.near(x3.grad[{2, ":", 1}], {0.11430459298549234, -0.138667057682612, 0.024362464697119647}, 1e-12)
  -- probability targets equal class targets written one-hot
  local p = torch.zeros(5, 4, {dtype = "float64"})
  for i, c in ipairs{1, 4, 2, 3, 1} do p[{i, c}] = 1 end
  T.near(torch.cross_entropy(logits, p):item(), none:mean():item(), 1e-12)
  -- nll_loss of log_softmax is cross_entropy
  T.near(torch.nll_loss(torch.log_softmax(logits, 2), t):item(), none:mean():item(), 1e-12)
  -- linear = x W^T + b
  local x = leaf{{1, 2, 3}, {4, 5, 6}}
  local W = leaf{{1, 0, -1}, {0.5, 0.5, 0.5}}
  local b = leaf{10, 20}
  local y = torch.linear(x, W, b)
  T.near(y, {{8, 23}, {8, 27.5}}, 1e-15)
  y:sum():backward()
  T.near(W.grad, {{5, 7, 9}, {5, 7, 9}}, 1e-15)
  T.near(b.grad, {2, 2}, 1e-15)
  T.near(x.grad, {{1.5, 0.5, -0.5}, {1.5, 0.5, -0.5}}, 1e-15)
  T.eq(torch.linear(torch.ones(4, 2, 3, {dtype = "float64"}), W).shape, {4, 2, 2})
end)

T.test("loss errors name the values", function()
  local logits = torch.randn(3, 4)
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{1, 5, 2}) end,
    "cross_entropy: target 5 is out of range for 4 classes (valid 1..4)")
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{0, 1, 2}) end, "target 0 is out of range")
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{1.0, 2.0, 3.0}) end,
    "probability targets must have the input's shape {3,4}")
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{true, false, true}) end,
    "cross_entropy: class targets must be an integer tensor (int64) of 1-based classes, got bool")
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{1, 2}) end,
    "cross_entropy: target has shape {2} but input of shape {3,4} needs a target of shape {3}")
  T.error_usable(function() torch.cross_entropy(logits, torch.tensor{1, 2, 3}, {reduction = "avg"}) end,
    "reduction must be \"mean\", \"sum\" or \"none\", got \"avg\"")
  T.error_usable(function() torch.nll_loss(logits, torch.tensor{1, 2, 9}) end, "nll_loss: target 9 is out of range")
  T.error_usable(function() torch.cross_entropy(torch.tensor{1, 2}, torch.tensor(1)) end,
    "input must be a floating-point tensor, got int64")
  T.error_usable(function() torch.linear(torch.ones(2, 3), torch.ones(4, 2)) end,
    "linear: input of shape {2,3} does not end in 2 features")
  T.error_usable(function() torch.linear(torch.ones(2, 3), torch.ones(4, 3, {dtype = "float64"})) end,
    "linear: input has dtype float32 but weight has dtype float64")
  T.error_usable(function() torch.softmax(torch.ones(2)) end, "softmax: dim is required")
end)

T.test("conv2d and max_pool2d match PyTorch, forward and backward", function()
  -- x = (arange(100).reshape(2,2,5,5)*0.37).sin(); w = (arange(54).reshape(3,2,3,3)*0.11).cos()
  -- y = F.conv2d(x, w, b, stride=2, padding=1); r = (arange(y.numel()).reshape(y.shape)*0.05).cos()
  local x = (torch.arange(100, {dtype = "float64"}):reshape(2, 2, 5, 5) * 0.37):sin():requires_grad_()
  local w = (torch.arange(54, {dtype = "float64"}):reshape(3, 2, 3, 3) * 0.11):cos():requires_grad_()
  local b = leaf{0.1, -0.2, 0.3}
  local y = torch.conv2d(x, w, b, {stride = 2, padding = 1})
  T.eq(y.shape, {2, 3, 3, 3})
  T.near(y:sum():item(), 4.061611948830724, 1e-12)
  T.near(y[{2, 3, 2, 3}]:item(), 1.3428970505734334, 1e-12)
  local r = (torch.arange(y:numel(), {dtype = "float64"}):reshape(2, 3, 3, 3) * 0.05):cos()
  ;(y * r):sum():backward()
  T.near(x.grad:sum():item(), 14.039872650255134, 1e-12)
  T.near(x.grad[{1, 2, 3, 4}]:item(), -0.6833318842051248, 1e-12)
  T.near(w.grad:sum():item(), -0.3289130222139467, 1e-12)
  T.near(w.grad[{3, 2, 1, 3}]:item(), -0.016802894908384047, 1e-12)
  T.near(b.grad, {8.932872366915195, 3.3910073561600256, -2.826026871093382}, 1e-12)
  -- p = F.max_pool2d(x, 3, stride=2, padding=1); r2 = (arange(p.numel()).reshape(p.shape)*0.3).sin()
  x.grad = nil
  local p = torch.max_pool2d(x, 3, {stride = 2, padding = 1})
  T.eq(p.shape, {2, 2, 3, 3})
  T.near(p:sum():item(), 25.18570455010036, 1e-12)
  T.near(p[{2, 1, 2, 3}]:item(), 0.5065240062728569, 1e-12)
  local r2 = (torch.arange(p:numel(), {dtype = "float64"}):reshape(2, 2, 3, 3) * 0.3):sin()
  ;(p * r2):sum():backward()
  T.near(x.grad:sum():item(), 4.4416646719954525, 1e-12)
  T.near((x.grad * x.grad):sum():item(), 20.209838796943703, 1e-12)
  -- grouped, dilated: w2 = (arange(16).reshape(4,1,2,2)*0.21).sin(); F.conv2d(x, w2, groups=2, dilation=2)
  local w2 = (torch.arange(16, {dtype = "float64"}):reshape(4, 1, 2, 2) * 0.21):sin():requires_grad_()
  local y2 = torch.conv2d(x, w2, nil, {groups = 2, dilation = 2})
  T.eq(y2.shape, {2, 4, 3, 3})
  T.near(y2:sum():item(), -2.166052398842486, 1e-12)
  y2:pow(2):sum():backward()
  T.near(w2.grad:sum():item(), 39.42757310881732, 1e-12)
  T.near(w2.grad[{4, 1, 2, 1}]:item(), -12.066116448150968, 1e-12)
  -- unbatched input
  T.eq(torch.conv2d(x[1], w, b).shape, {3, 3, 3})
  T.error_usable(function() torch.conv2d(x, torch.ones(3, 3, 3, 3, {dtype = "float64"})) end,
    "conv2d: weight of shape {3,3,3,3} expects 3 input channels, but the input of shape {2,2,5,5} has 2")
  T.error_usable(function() torch.conv2d(x, w, nil, {padding = -1}) end, "padding non-negative")
  T.error_usable(function() torch.conv2d(torch.ones(1, 2, 2, 2, {dtype = "float64"}), w) end,
    "is smaller than the kernel's extent 3")
  T.error_usable(function() torch.max_pool2d(x, 2, {padding = 2}) end, "padding 2 must be at most half the kernel size 2")
  T.error_usable(function() torch.max_pool2d(x) end, "kernel_size is required")
end)

T.test("float32 training step through nn functions keeps float32 gradients", function()
  torch.manual_seed(1)
  local W = torch.randn(3, 4, {requires_grad = true})
  local x = torch.randn(8, 4)
  local loss = torch.cross_entropy(torch.linear(x, W), torch.tensor{1, 2, 3, 1, 2, 3, 1, 2})
  loss:backward()
  T.eq(W.grad.dtype, "float32")
  T.eq(W.grad.shape, {3, 4})
end)

T.done()
