-- Hooks and grad-mode tools (issue 15): tensor hooks (x:register_hook), retain_grad, x.data,
-- enable_grad and inference_mode, and the module hooks (register_forward_pre_hook,
-- register_forward_hook, register_full_backward_hook). Reference values were printed by
-- PyTorch 1.13 with the snippets quoted beside them (tests/autograd_ext/pytorch_reference.py
-- prints them all).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn

local function f64(v, rg) return torch.tensor(v, {dtype = "float64", requires_grad = rg}) end

local function message(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  return tostring(err)
end

---------------------------------------------------------------------------------------------
-- Tensor hooks

T.test("register_hook on a leaf and on a non-leaf; retain_grad (PyTorch's values)", function()
  -- x = torch.tensor([1., 2.], requires_grad=True); y = x * 2
  -- y.register_hook(lambda g: g * 10); y.retain_grad(); z = (y * y).sum()
  -- torch.autograd.grad(z, y, retain_graph=True) -> [4., 8.] (taken before the hooks)
  -- z.backward(): x.grad -> [80., 160.], y.grad -> [40., 80.]
  local x = f64({1.0, 2.0}, true)
  local y = x * 2
  local seen
  y:register_hook(function(g) seen = g:tolist() return g * 10 end)
  y:retain_grad()
  T.eq(y.retains_grad, true)
  local z = (y * y):sum()
  T.eq(torch.autograd.grad({z}, {y}, {retain_graph = true})[1]:tolist(), {4.0, 8.0})
  T.eq(y.grad, nil)  -- grad() to y itself runs neither y's hooks nor retain_grad
  z:backward()
  T.eq({seen, x.grad:tolist(), y.grad:tolist()}, {{4.0, 8.0}, {80.0, 160.0}, {40.0, 80.0}})
  -- PyTorch 1.13's order: retain_grad before any hook sees the gradient before all hooks.
  -- y.retain_grad(); y.register_hook(lambda g: g * 10); (y * y).sum().backward()
  -- -> x.grad [80., 160.], y.grad [4., 8.]. Once a hook was registered (even if removed since),
  -- retain_grad sees the gradient after all of them:
  -- h = y.register_hook(lambda g: g * 100); y.retain_grad(); y.register_hook(lambda g: g * 10)
  -- h.remove(); (y * y).sum().backward() -> y.grad [40., 80.]
  x.grad = nil
  y = x * 2
  y:retain_grad()
  y:register_hook(function(g) return g * 10 end)
  torch.sum(y * y):backward()
  T.eq({x.grad:tolist(), y.grad:tolist()}, {{80.0, 160.0}, {4.0, 8.0}})
  y = x * 2
  local early = y:register_hook(function(g) return g * 100 end)
  y:retain_grad()
  y:register_hook(function(g) return g * 10 end)
  early:remove()
  torch.sum(y * y):backward()
  T.eq(y.grad:tolist(), {40.0, 80.0})
  -- A leaf's hook runs before accumulation; hooks run in order; nil keeps the gradient.
  local w = f64({1.0, 1.0}, true)
  local order = {}
  w:register_hook(function(g) order[#order + 1] = "a" return g + 1 end)
  w:register_hook(function(g) order[#order + 1] = "b" end)
  w:register_hook(function(g) order[#order + 1] = "c" return g * 3 end)
  torch.sum(w * f64{2.0, 5.0}):backward()
  T.eq({order, w.grad:tolist()}, {{"a", "b", "c"}, {9.0, 18.0}})
  -- torch.autograd.grad leaves a leaf's hooks alone (as PyTorch 1.13): grad(3 * x2, x2) == 3.
  order = {}
  T.eq(torch.autograd.grad({(w * 3):sum()}, {w})[1]:tolist(), {3.0, 3.0})
  T.eq(order, {})
end)

T.test("a hook's handle removes it; retain_grad accumulates and is a no-op on leaves", function()
  local x = f64({1.0, 2.0}, true)
  local calls = 0
  local h = x:register_hook(function(g) calls = calls + 1 return g * 0 end)
  x:sum():backward()
  T.eq({calls, x.grad:tolist()}, {1, {0.0, 0.0}})
  h:remove()
  h:remove()
  x.grad = nil
  x:sum():backward()
  T.eq({calls, x.grad:tolist()}, {1, {1.0, 1.0}})
  -- retain_grad: gradients add up over backwards, like a leaf's.
  local y = x * x
  y:retain_grad()
  y:sum():backward({retain_graph = true})
  y:sum():backward()
  T.eq(y.grad:tolist(), {2.0, 2.0})
  x:retain_grad()
  T.eq({x.retains_grad, x.is_leaf}, {false, true})
  -- An in-place change after retain_grad: the retained gradient is that of the new value.
  -- v = x * 1; v.retain_grad(); v.mul_(3); (v * v).sum().backward(); v.grad -> 2 * 3 * x
  local v = x * 1
  v:retain_grad()
  v:mul_(3)
  torch.sum(v * v):backward()
  T.eq(v.grad:tolist(), {6.0, 12.0})
  T.eq(message(function() return f64{1.0}:retain_grad() end),
       "retain_grad: cannot retain the gradient of a tensor that does not require grad")
end)

T.test("hook errors: a Lua error, a changed shape or dtype, no grad", function()
  local x = f64({1.0, 2.0}, true)
  local h = x:register_hook(function(g) error("hook failed") end)
  T.truthy(T.error_usable(function() x:sum():backward() end, "hook failed"))
  h:remove()
  h = x:register_hook(function(g) return torch.ones(3, {dtype = "float64"}) end)
  T.error_usable(function() x:sum():backward() end,
                 "register_hook: a hook returned a gradient of shape {3} for a gradient of shape {2} (a hook may not change the shape)")
  h:remove()
  h = x:register_hook(function(g) return g:float() end)
  T.error_usable(function() x:sum():backward() end,
                 "register_hook: a hook returned a float32 gradient on cpu for a float64 gradient on cpu")
  h:remove()
  h = x:register_hook(function(g) return "no" end)
  T.error_usable(function() x:sum():backward() end, "register_hook: expected a tensor or nil as result 1, got a string")
  h:remove()
  x:sum():backward()
  T.eq(x.grad:tolist(), {1.0, 1.0})
  T.eq(message(function() return torch.ones(2):register_hook(function() end) end),
       "register_hook: cannot register a hook on a tensor that does not require grad")
  T.eq(message(function() return x:register_hook(5) end), "register_hook: expected a function, got a number")
  T.eq(message(function() return x:register_hook(print, 1) end):match("^[^;]*"),
       "register_hook: unexpected argument 3 (the number 1)")
end)

T.test("a hook's closure may hold its tensor; hooks made in a loop do not pile up", function()
  local w = f64({1.0}, true)
  for _ = 1, 200 do
    local h = w:register_hook(function(g) return g end)
    torch.sum(w * 2):backward()
    h:remove()
  end
  T.eq(w.grad:tolist(), {400.0})
  local before = T.registry_refs()
  for _ = 1, 200 do
    local y = w * 3
    y:register_hook(function(g) return g * 1 end)
    y:sum():backward()
  end
  collectgarbage()
  collectgarbage()
  w:register_hook(function() end):remove()  -- a call into the interpreter releases dead references
  T.truthy(T.registry_refs() <= before + 4, "registry grew from " .. before .. " to " .. T.registry_refs())
end)

---------------------------------------------------------------------------------------------
-- x.data

T.test("x.data reads the elements outside autograd and assigns new ones (PyTorch's rules)", function()
  local w = f64({1.0, 2.0}, true)
  local d = w.data
  T.eq({d.requires_grad, d:tolist()}, {false, {1.0, 2.0}})
  d[1] = 5  -- the same storage
  T.eq(w:tolist(), {5.0, 2.0})
  -- a = torch.ones(3, requires_grad=True); a.data = torch.zeros(2, dtype=torch.float64)
  -- -> tensor([0., 0.], dtype=torch.float64, requires_grad=True)
  local a = torch.ones(3, {requires_grad = true})
  a.data = torch.zeros(2, {dtype = "float64"})
  T.eq({a:tolist(), a.dtype, a.requires_grad, a.is_leaf}, {{0.0, 0.0}, "float64", true, true})
  -- The update of a hand-written SGD.
  local p = f64({1.0, 2.0}, true)
  torch.sum(p * p):backward()
  p.data = p.data - 0.25 * p.grad
  T.eq({p:tolist(), p.requires_grad}, {{0.5, 1.0}, true})
  torch.sum(p * 1):backward()
  T.eq(p.grad:tolist(), {3.0, 5.0})
  -- New data under a graph that saved the tensor: an error, not the gradient of other values.
  local q = f64({1.0, 2.0}, true)
  local loss = (q * q):sum()
  q.data = f64{5.0, 5.0}
  T.error_usable(function() loss:backward() end,
                 "backward: a tensor that MulBackward saved for the gradient was given new data (x.data = ...) after it was saved")
  T.eq(message(function() p.data = 3 end), "data: expected a tensor, got a number")
  T.eq(message(function() p.data = torch.tensor{1, 2} end),
       "data: a tensor that requires grad must keep a floating-point or complex dtype, got int64")
end)

---------------------------------------------------------------------------------------------
-- Grad modes

T.test("enable_grad inside no_grad, inference_mode", function()
  local x = f64({1.0}, true)
  torch.no_grad(function()
    T.eq((x * 2).requires_grad, false)
    T.eq(torch.enable_grad(function() return (x * 2).requires_grad end), true)
    do
      local _ <close> = torch.enable_grad()
      T.eq((x * 2).requires_grad, true)
    end
    T.eq(torch.is_grad_enabled(), false)
  end)
  T.eq(torch.inference_mode(function() return (x * 2).requires_grad end), false)
  do
    local _ <close> = torch.inference_mode()
    T.eq((x * 2).requires_grad, false)
  end
  T.eq(torch.is_grad_enabled(), true)
  -- inference_mode(false) changes nothing, as PyTorch's.
  T.eq(torch.inference_mode(false, function() return (x * 2).requires_grad end), true)
  torch.no_grad(function()
    T.eq(torch.inference_mode(false, function() return torch.is_grad_enabled() end), false)
  end)
  T.eq(message(function() return torch.inference_mode(true, 5) end),
       "inference_mode: expected a function or no argument, got a number")
  T.eq(torch.autograd.inference_mode, torch.inference_mode)
end)

---------------------------------------------------------------------------------------------
-- Module hooks

local function linear()
  local lin = nn.Linear(2, 2):double()
  torch.no_grad(function()
    lin.weight:copy_(torch.tensor{{1.0, 2.0}, {3.0, 4.0}})
    lin.bias:copy_(torch.tensor{0.5, -0.5})
  end)
  return lin
end

T.test("forward pre-hooks and forward hooks (PyTorch's values)", function()
  -- lin2.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
  -- lin2.register_forward_hook(lambda m, args, out: out + 1)
  -- lin2(torch.tensor([[1., -1.]])) -> [[-0.5, -1.5]]
  local lin = linear()
  local seen = {}
  local h1 = lin:register_forward_pre_hook(function(m, args)
    seen.module, seen.n = m, args.n
    return {args[1] * 2}
  end)
  local h2 = lin:register_forward_hook(function(m, args, out)
    seen.arg = args[1]:tolist()
    return out + 1
  end)
  T.eq(lin(f64{{1.0, -1.0}}):tolist(), {{-0.5, -1.5}})
  T.truthy(seen.module == lin)
  T.eq({seen.n, seen.arg}, {1, {{2.0, -2.0}}})
  -- A pre-hook's non-table result is the only argument; nil keeps them.
  h1:remove()
  local h3 = lin:register_forward_pre_hook(function(m, args) return f64{{0.0, 0.0}} end)
  T.eq(lin(f64{{1.0, -1.0}}):tolist(), {{1.5, 0.5}})
  h3:remove()
  h2:remove()
  T.eq(lin(f64{{1.0, -1.0}}):tolist(), {{-0.5, -1.5}})
  T.eq(message(function() return lin:register_forward_hook(3) end),
       "Linear:register_forward_hook: expected a function, got 3")
end)

T.test("full backward hooks see grad_input and grad_output and may replace grad_input (PyTorch's values)", function()
  -- lin.register_full_backward_hook(hook) returning (gi[0] * 10,); x = [[1., -1.], [2., 0.5]];
  -- (lin(x) ** 2).sum().backward():
  --   grad_input -> [[-10., -14.], [52., 74.]], grad_output -> [[-1., -3.], [7., 15.]]
  --   x.grad -> [[-100., -140.], [520., 740.]], lin.weight.grad -> [[13., 4.5], [27., 10.5]]
  local lin = linear()
  local rec = {}
  lin:register_full_backward_hook(function(m, grad_input, grad_output)
    rec.module = m
    rec.gi = grad_input[1] and grad_input[1]:tolist()
    rec.go = grad_output[1]:tolist()
    if grad_input[1] then return {grad_input[1] * 10} end
  end)
  local x = f64({{1.0, -1.0}, {2.0, 0.5}}, true)
  local y = lin(x)
  T.eq(y.grad_fn, "BackwardHookFunctionBackward")
  torch.sum(y ^ 2):backward()
  T.truthy(rec.module == lin)
  T.eq({rec.gi, rec.go}, {{{-10.0, -14.0}, {52.0, 74.0}}, {{-1.0, -3.0}, {7.0, 15.0}}})
  T.eq(x.grad:tolist(), {{-100.0, -140.0}, {520.0, 740.0}})
  T.eq(lin.weight.grad:tolist(), {{13.0, 4.5}, {27.0, 10.5}})
  -- No argument requires grad: grad_input is empty, grad_output as before.
  -- (lin(torch.tensor([[1., -1.]])) ** 2).sum().backward() -> gi (None,), go [[-1., -3.]]
  rec = {}
  lin:zero_grad()
  torch.sum(lin(f64{{1.0, -1.0}}) ^ 2):backward()
  T.eq({rec.gi == nil, rec.go}, {true, {{-1.0, -3.0}}})
  -- Under no_grad the hooks are not involved.
  rec = {}
  torch.no_grad(function() lin(x) end)
  T.eq(rec.go, nil)
end)

T.test("backward hooks over several arguments, one of them not a tensor", function()
  local Mix = nn.Module:extend("Mix")
  function Mix:forward(a, k, b) return a * k + b * b end
  local m = Mix()
  local rec
  m:register_full_backward_hook(function(_, gi, go)
    rec = {gi[1]:tolist(), gi[2] == nil, gi[3]:tolist(), go[1]:tolist()}
  end)
  local a, b = f64({1.0, 2.0}, true), f64({3.0, 4.0}, true)
  m(a, 5, b):sum():backward()
  T.eq(rec, {{5.0, 5.0}, true, {6.0, 8.0}, {1.0, 1.0}})
  T.eq({a.grad:tolist(), b.grad:tolist()}, {{5.0, 5.0}, {6.0, 8.0}})
end)

T.done()
