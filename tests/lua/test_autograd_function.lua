-- Autograd extension points (issue 15): torch.autograd.Function (custom functions with a Lua
-- backward), torch.autograd.gradcheck, torch.autograd.functional.jacobian and hessian.
-- Reference values were printed by PyTorch 1.13 with the snippets quoted beside them
-- (tests/autograd_ext/pytorch_reference.py prints them all).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local Function = torch.autograd.Function

local function f64(v, rg) return torch.tensor(v, {dtype = "float64", requires_grad = rg}) end

local function message(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  return tostring(err)
end

-- The tutorial's LegendrePolynomial3: P3(x) = (5x^3 - 3x) / 2, P3'(x) = 3/2 (5x^2 - 1).
local P3 = Function:extend("LegendrePolynomial3")
function P3.forward(ctx, input)
  ctx:save_for_backward(input)
  return 0.5 * (5 * input ^ 3 - 3 * input)
end
function P3.backward(ctx, grad_output)
  local input = table.unpack(ctx.saved_tensors)
  return grad_output * 1.5 * (5 * input ^ 2 - 1)
end

T.test("a custom Function: forward values, its node and gradients (PyTorch's values)", function()
  -- x = torch.tensor([0.5, -1.0, 2.0], dtype=torch.float64, requires_grad=True)
  -- y = 0.5 * (5 * x ** 3 - 3 * x); y.sum().backward()
  -- y -> [-0.4375, -1.0, 17.0]; x.grad -> [0.375, 6.0, 28.5]
  local x = f64({0.5, -1.0, 2.0}, true)
  local y = P3.apply(x)
  T.eq(y:tolist(), {-0.4375, -1.0, 17.0})
  T.eq({y.requires_grad, y.is_leaf, y.grad_fn}, {true, false, "LegendrePolynomial3Backward"})
  T.truthy(tostring(y):find("grad_fn=<LegendrePolynomial3Backward>", 1, true), tostring(y))
  y:sum():backward()
  T.eq(x.grad:tolist(), {0.375, 6.0, 28.5})
  -- Composes with ordinary ops on both sides: d/dx sum(2 * P3(3x)) = 2 * 3 * P3'(3x).
  x.grad = nil
  torch.sum(2 * P3.apply(3 * x)):backward()
  T.eq(x.grad:tolist(), {6 * 1.5 * (5 * 2.25 - 1), 6 * 1.5 * (5 * 9 - 1), 6 * 1.5 * (5 * 36 - 1)})
  T.eq(tostring(P3), "class LegendrePolynomial3")
end)

T.test("without an input that requires grad, or under no_grad, nothing is recorded", function()
  local x = f64{1.0, 2.0}
  local y = P3.apply(x)
  T.eq({y.requires_grad, y:tolist()}, {false, {1.0, 17.0}})
  local w = f64({1.0}, true)
  local z = torch.no_grad(function() return P3.apply(w) end)
  T.eq(z.requires_grad, false)
  local Id = Function:extend("Id")
  function Id.forward(ctx, v) return v end
  function Id.backward(ctx, g) return g end
  local plain = f64{3.0}
  T.truthy(Id.apply(plain) == plain, "forward's results are returned as they are")
  -- An input returned as it is becomes a new tensor with the function's history.
  local out = Id.apply(w)
  T.truthy(out ~= w and out.grad_fn == "IdBackward")
  out:backward(f64{5.0})
  T.eq(w.grad:tolist(), {5.0})
end)

T.test("several outputs, non-tensor arguments, needs_input_grad and mark_non_differentiable", function()
  local Split = Function:extend("Split")
  local seen = {}
  function Split.forward(ctx, k, a, b, tag)
    seen.needs = ctx.needs_input_grad
    ctx.k = k
    ctx:save_for_backward(a, nil, b)
    local idx = a:argmax()
    ctx:mark_non_differentiable(idx)
    return a * k, tag, a + b, idx
  end
  function Split.backward(ctx, g1, gtag, g2, gidx)
    seen.grads = {g1:tolist(), gtag == nil, g2:tolist(), gidx:item()}
    local a, hole, b = table.unpack(ctx.saved_tensors, 1, 3)
    seen.saved = {a:tolist(), hole == nil, b:tolist()}
    return nil, g1 * ctx.k + g2, g2, nil
  end
  local a, b = f64({1.0, 3.0}, true), f64{10.0, 20.0}
  local y1, tag, y2, idx = Split.apply(2.5, a, b, "t")
  T.eq(seen.needs, {false, true, false, false})
  T.eq({tag, idx:item(), idx.requires_grad, y1.requires_grad, y2.requires_grad}, {"t", 2, false, true, true})
  -- Only y1 reaches the loss: y2's gradient is zeros, the index's too.
  y1:sum():backward()
  T.eq(seen.grads, {{1.0, 1.0}, true, {0.0, 0.0}, 0})
  T.eq(seen.saved, {{1.0, 3.0}, true, {10.0, 20.0}})
  T.eq(a.grad:tolist(), {2.5, 2.5})
  a.grad = nil
  local z1, _, z2 = Split.apply(2.5, a, b, "t")
  local loss = (z1 * 2 + z2 * 3):sum()
  loss:backward()
  T.eq(a.grad:tolist(), {8.0, 8.0})
end)

T.test("create_graph: double backward through a Function, with a saved input or output", function()
  local Cube = Function:extend("Cube")
  function Cube.forward(ctx, x)
    ctx:save_for_backward(x)
    return x ^ 3
  end
  function Cube.backward(ctx, g)
    local x = ctx.saved_tensors[1]
    return g * 3 * x ^ 2
  end
  local x = f64({1.0, -2.0}, true)
  local g = torch.autograd.grad({Cube.apply(x):sum()}, {x}, {create_graph = true})[1]
  T.eq(g:tolist(), {3.0, 12.0})
  T.eq(torch.autograd.grad({g:sum()}, {x})[1]:tolist(), {6.0, -12.0})
  -- A saved output: d/dx exp(x) = exp(x), and again.
  local Exp = Function:extend("Exp")
  function Exp.forward(ctx, v)
    local y = v:exp()
    ctx:save_for_backward(y)
    return y
  end
  function Exp.backward(ctx, gy)
    return gy * ctx.saved_tensors[1]
  end
  local v = f64({0.5, 1.0}, true)
  local d1 = torch.autograd.grad({Exp.apply(v):sum()}, {v}, {create_graph = true})[1]
  T.near(d1, {math.exp(0.5), math.exp(1.0)}, 1e-15)
  local d2 = torch.autograd.grad({d1:sum()}, {v}, {create_graph = true})[1]
  T.near(d2, {math.exp(0.5), math.exp(1.0)}, 1e-15)
  T.near(torch.autograd.grad({d2:sum()}, {v})[1], {math.exp(0.5), math.exp(1.0)}, 1e-15)
  -- gradcheck of the custom functions.
  T.truthy(torch.autograd.gradcheck(Exp.apply, {f64({0.3, -0.7}, true)}))
  T.truthy(torch.autograd.gradcheck(P3.apply, f64({0.3, -0.7, 1.1}, true)))
end)

T.test("errors inside a Function come back as Lua errors naming it, and the interpreter goes on", function()
  local Bad = Function:extend("Bad")
  function Bad.forward(ctx, x, mode) ctx.mode = mode return x * 2 end
  function Bad.backward(ctx, g)
    if ctx.mode == "raise" then error("boom in backward") end
    if ctx.mode == "count" then return g end
    if ctx.mode == "type" then return 5, nil end
    if ctx.mode == "shape" then return torch.ones(3, {dtype = "float64"}), nil end
    if ctx.mode == "nontensor" then return g, g end
    if ctx.mode == "object" then error({code = 1}) end
    return g * 2, nil
  end
  local x = f64({1.0, 2.0}, true)
  local function run(mode) return function() Bad.apply(x, mode):sum():backward() end end
  T.truthy(T.error_usable(run("raise"), "boom in backward"):find("test_autograd_function.lua:%d+: boom in backward"))
  T.error_usable(run("count"),
                 "BadBackward: backward returned 1 value, but forward took 2 arguments (return one gradient, or nil, per argument)")
  T.error_usable(run("type"), "BadBackward: backward returned a number for argument 1; expected a tensor or nil")
  T.error_usable(run("shape"), "BadBackward: backward returned a gradient of shape {3} for input 1, which has shape {2}")
  T.error_usable(run("nontensor"),
                 "BadBackward: backward returned a gradient for argument 2, which is not a tensor (return nil there)")
  T.error_usable(run("object"), "BadBackward: the Lua function raised an error object of type table")
  run("ok")()
  T.eq(x.grad:tolist(), {2.0, 2.0})  -- only the good backward accumulated
  -- The engine's state is intact after a failed backward: grad mode is on again.
  T.eq(torch.is_grad_enabled(), true)
  local Fwd = Function:extend("Fwd")
  function Fwd.forward(ctx, v) error("boom in forward") end
  T.truthy(T.error_usable(function() Fwd.apply(x) end, "boom in forward"))
  T.eq(torch.is_grad_enabled(), true)
  T.eq(message(function() Function:extend("NoForward").apply(x) end),
       "NoForward: define NoForward.forward(ctx, ...) before calling apply")
  local NoBackward = Function:extend("NoBackward")
  function NoBackward.forward(ctx, v) return v * 1 end
  T.eq(message(function() NoBackward.apply(x) end),
       "NoBackward: define NoBackward.backward(ctx, ...): an argument of apply requires grad")
  T.eq(message(function() Function:extend("") end), 'Function:extend: expected a class name string, got ""')
  -- The strict wrapper reports at the caller's line, as Lua's own argument errors do.
  T.eq(message(function() Function:extend("A", 1) end):gsub("^[^:]*:%d+: ", ""),
       "Function:extend: unexpected argument 2 (the number 1): Function:extend takes 1 argument and no keywords")
end)

T.test("ctx rules: saved tensors are version-checked and freed by backward", function()
  local Keep = Function:extend("Keep")
  function Keep.forward(ctx, v)
    ctx:save_for_backward(v)
    return v * 1
  end
  function Keep.backward(ctx, g) return g * ctx.saved_tensors[1] end
  local x = f64({1.0, 2.0}, true)
  local base = x * 1
  local y = Keep.apply(base)
  base:add_(1)
  T.error_usable(function() y:sum():backward() end,
                 "backward: a tensor that KeepBackward saved for the gradient was modified by an in-place operation")
  local z = Keep.apply(x)
  z:sum():backward()
  T.error_usable(function() z:sum():backward() end, "backward through the graph a second time")
  local w = Keep.apply(x)
  w:sum():backward({retain_graph = true})
  w:sum():backward()
  T.eq(x.grad:tolist(), {3.0, 6.0})
  local Late = Function:extend("Late")
  local saved_ctx
  function Late.forward(ctx, v) saved_ctx = ctx return v * 1 end
  function Late.backward(ctx, g) return g end
  Late.apply(x):sum():backward()
  T.eq(message(function() saved_ctx:save_for_backward(x) end), "Late: save_for_backward can only be called inside forward")
  T.eq(message(function() saved_ctx.saved_tensors = {} end),
       "Late: ctx.saved_tensors cannot be assigned (use ctx:save_for_backward(...))")
  local Wrong = Function:extend("Wrong")
  function Wrong.forward(ctx, v) ctx:save_for_backward(v, 3) return v end
  T.eq(message(function() Wrong.apply(x) end),
       "Wrong: save_for_backward takes tensors or nil, got a number as argument 2 (keep other values as ctx fields)")
end)

T.test("a Function's Lua callback is released with its graph", function()
  local x = f64({1.0}, true)
  -- Collected graphs queue their references; the next callback made releases the queue
  -- (bind_function.cpp), so count after making one.
  local function refs()
    collectgarbage()
    collectgarbage()
    local probe = P3.apply(x)
    return T.registry_refs()
  end
  for _ = 1, 50 do P3.apply(x):sum():backward() end
  for _ = 1, 50 do P3.apply(x) end  -- graphs dropped without a backward
  local before = refs()
  for _ = 1, 300 do
    P3.apply(x):sum():backward()
    P3.apply(x)
  end
  T.truthy(refs() <= before + 4, "registry grew from " .. before .. " to " .. refs())
end)

---------------------------------------------------------------------------------------------
-- gradcheck

T.test("gradcheck: true for correct gradients, the Jacobians for wrong ones", function()
  local a, b = f64({0.3, -1.2}, true), f64({{0.5, 2.0}, {1.5, -0.5}}, true)
  T.truthy(torch.autograd.gradcheck(function(u, v) return (v:mv(u)):tanh(), u:sum() end, {a, b}))
  T.truthy(torch.autograd.gradcheck(torch.sin, a))
  local Wrong = Function:extend("WrongGrad")
  function Wrong.forward(ctx, v) return v * 2 end
  function Wrong.backward(ctx, g) return g * 3 end
  T.eq(torch.autograd.gradcheck(Wrong.apply, {a}, {raise_exception = false}), false)
  local msg = message(function() torch.autograd.gradcheck(Wrong.apply, {a}) end)
  T.eq(msg:match("^[^\n]*"), "autograd.gradcheck: Jacobian mismatch for output 1 with respect to input 1,")
  -- PyTorch 1.13's message, word for word after the first line.
  T.truthy(msg:find("numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 2.0000]], dtype=torch.float64)\n" ..
                    "analytical:tensor([[3., 0.],\n        [0., 3.]], dtype=torch.float64)", 1, true), msg)
  -- Non-tensor arguments pass through; eps and tolerances are options.
  T.truthy(torch.autograd.gradcheck(function(u, k) return u * k end, {a, 3}, {eps = 1e-5, atol = 1e-6, rtol = 1e-4}))
  T.eq(message(function() torch.autograd.gradcheck(torch.sin, f64{1.0}) end),
       "autograd.gradcheck: no input requires grad (make the inputs to check leaves with requires_grad=true)")
  T.eq(message(function() torch.autograd.gradcheck(torch.sin, torch.ones(2, {requires_grad = true})) end),
       "autograd.gradcheck: input 1 requires grad but is float32; gradcheck needs float64 inputs (use x:double())")
  T.eq(message(function() torch.autograd.gradcheck(torch.sin, a, {epsilon = 1}) end),
       "autograd.gradcheck: unknown keyword 'epsilon' (valid: eps, atol, rtol, raise_exception)")
  T.eq(message(function() torch.autograd.gradcheck(torch.sin, a, {atl = 1}) end),
       "autograd.gradcheck: unknown keyword 'atl' (did you mean 'atol'? valid: eps, atol, rtol, raise_exception)")
end)

---------------------------------------------------------------------------------------------
-- jacobian and hessian

local J = torch.autograd.functional

T.test("jacobian: shapes and values as PyTorch's", function()
  -- def f(a, b): return a * b.sum(), a.exp()
  -- jacobian(f, (a, b)) with a = [1., 2.], b = [[0.5, 1.5]] (float64):
  --   ((tensor([[2., 0.], [0., 2.]]), tensor([[[1., 1.]], [[2., 2.]]])),
  --    (tensor([[e, 0.], [0., e^2]]), tensor([[[0., 0.]], [[0., 0.]]])))
  local a, b = f64{1.0, 2.0}, f64{{0.5, 1.5}}
  local jac = J.jacobian(function(u, v) return u * v:sum(), u:exp() end, {a, b})
  T.eq(jac[1][1]:tolist(), {{2.0, 0.0}, {0.0, 2.0}})
  T.eq(jac[1][2]:tolist(), {{{1.0, 1.0}}, {{2.0, 2.0}}})
  T.near(jac[2][1], {{math.exp(1), 0.0}, {0.0, math.exp(2)}}, 1e-15)
  T.eq(jac[2][2]:tolist(), {{{0.0, 0.0}}, {{0.0, 0.0}}})
  T.eq(jac[1][1].requires_grad, false)
  -- One input and one output: a tensor; 0-dim: jacobian(lambda v: v * 2, torch.tensor(3.)) == 2.
  local one = J.jacobian(function(v) return v * 2 end, f64(3.0))
  T.eq({one.shape, one:item()}, {{}, 2.0})
  T.eq(J.jacobian(torch.sin, f64{0.0, 1.0}):tolist(), {{1.0, 0.0}, {0.0, math.cos(1.0)}})
  T.eq(message(function() J.jacobian(function(u, v) return u * 2 end, {a, a:clone()}, {strict = true}) end),
       "autograd.functional.jacobian: output 1 of the function does not depend on input 2 (not allowed with strict=true)")
  T.eq(message(function() J.jacobian(function(u) return 3 end, a) end),
       "autograd.functional.jacobian: the function must return tensors, got a number as output 1")
  T.eq(message(function() J.jacobian(torch.sin, torch.tensor{1, 2}) end),
       "autograd.functional: input 1 is int64; differentiation needs floating-point inputs")
  -- create_graph: the Jacobian is differentiable.
  local x = f64({1.0, 2.0}, true)
  local jx = J.jacobian(function(v) return v ^ 3 end, x, {create_graph = true})
  T.eq(jx.requires_grad, true)
  jx:sum():backward()
  T.eq(x.grad:tolist(), {6.0, 12.0})
end)

T.test("hessian: PyTorch's values", function()
  -- hessian(lambda v: (v ** 3).sum() + v[0] * v[1], torch.tensor([1., 2.])) == [[6., 1.], [1., 12.]]
  local h = J.hessian(function(v) return (v ^ 3):sum() + v[1] * v[2] end, f64{1.0, 2.0})
  T.eq(h:tolist(), {{6.0, 1.0}, {1.0, 12.0}})
  -- hessian(lambda u, v: (u * v).sum(), (u, v)) == ((0, I), (I, 0))
  local hh = J.hessian(function(u, v) return (u * v):sum() end, {f64{1.0, 2.0}, f64{3.0, 4.0}})
  T.eq({hh[1][1]:tolist(), hh[1][2]:tolist(), hh[2][1]:tolist(), hh[2][2]:tolist()},
       {{{0.0, 0.0}, {0.0, 0.0}}, {{1.0, 0.0}, {0.0, 1.0}}, {{1.0, 0.0}, {0.0, 1.0}}, {{0.0, 0.0}, {0.0, 0.0}}})
  T.eq(message(function() J.hessian(function(v) return v * 2 end, f64{1.0, 2.0}) end),
       "autograd.functional.hessian: the function must return a single tensor with one element, got shape {2}")
  T.eq(message(function() J.hessian(f64{1.0}, f64{1.0}) end), "autograd.functional.hessian: expected a function, got a tensor")
  T.eq(message(function() J.jacobian(5, f64{1.0}) end), "autograd.functional.jacobian: expected a function, got a number")
end)

T.done()
