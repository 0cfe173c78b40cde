-- tide's side of the benchmark suite: each workload is timed inside this process (best of
-- `repeats` after a warm-up) and printed as "name<TAB>seconds", one line each.
-- Usage: tide bench/workloads.lua [filter] [repeats]
local filter, repeats = arg[1] or "", tonumber(arg[2] or "5")
local clock = torch.utils.clock

local function best_of(fn, reps)
  fn()  -- warm-up
  local best = math.huge
  for _ = 1, reps do
    local t0 = clock()
    fn()
    best = math.min(best, clock() - t0)
  end
  return best
end

local workloads = {}
local function add(name, setup) workloads[#workloads + 1] = {name = name, setup = setup} end

-- Per-op overhead: a + b on 10 elements, 10^4 times (seconds per op reported).
add("add_10_elems", function()
  local a, b = torch.rand(10, {dtype = "float64"}), torch.rand(10, {dtype = "float64"})
  local iters = 10000
  return function() for _ = 1, iters do local _ = a + b end end, iters
end)

for _, dt in ipairs({"float64", "float32"}) do
  add("add_1e6_" .. dt, function()
    local a, b = torch.rand(1000000, {dtype = dt}), torch.rand(1000000, {dtype = dt})
    return function() for _ = 1, 10 do local _ = a + b end end, 10
  end)
  add("matmul_1000_" .. dt, function()
    local a, b = torch.rand(1000, 1000, {dtype = dt}), torch.rand(1000, 1000, {dtype = dt})
    return function() local _ = a:mm(b) end, 1
  end)
  -- The seed workload: two-layer network, explicit backprop, 500 steps.
  add("two_layer_" .. dt, function()
    local N, D_in, H, D_out = 64, 1000, 100, 10
    torch.manual_seed(0)
    local x, y = torch.randn(N, D_in, {dtype = dt}), torch.randn(N, D_out, {dtype = dt})
    local w1_0, w2_0 = torch.randn(D_in, H, {dtype = dt}), torch.randn(H, D_out, {dtype = dt})
    return function()
      local w1, w2 = w1_0:clone(), w2_0:clone()
      for _ = 1, 500 do
        local h = x:mm(w1)
        local h_relu = h:clamp{min = 0}
        local y_pred = h_relu:mm(w2)
        local _ = (y_pred - y):pow(2):sum():item()
        local grad_y_pred = (y_pred - y) * 2.0
        local grad_w2 = h_relu:t():mm(grad_y_pred)
        local grad_h = grad_y_pred:mm(w2:t())
        grad_h[h:lt(0)] = 0
        local grad_w1 = x:t():mm(grad_h)
        w1:sub_(grad_w1 * 1e-6)
        w2:sub_(grad_w2 * 1e-6)
      end
    end, 1
  end)
end

-- Autograd overhead: a tiny training step (two small matmuls, relu, a squared loss,
-- backward, an update under no_grad) -- per step.
add("autograd_tiny_step", function()
  torch.manual_seed(0)
  local w1 = torch.randn(10, 16, {requires_grad = true})
  local w2 = torch.randn(16, 1, {requires_grad = true})
  local x, y = torch.randn(8, 10), torch.randn(8, 1)
  local iters = 2000
  return function()
    for _ = 1, iters do
      local loss = (x:mm(w1):relu():mm(w2) - y):pow(2):sum()
      loss:backward()
      torch.no_grad(function()
        w1:sub_(w1.grad * 1e-4)
        w2:sub_(w2.grad * 1e-4)
      end)
      w1.grad, w2.grad = nil, nil
    end
  end, iters
end)

-- The seed workload with autograd: the two-layer network, loss:backward(), 500 steps.
add("autograd_two_layer_float32", function()
  local N, D_in, H, D_out = 64, 1000, 100, 10
  torch.manual_seed(0)
  local x, y = torch.randn(N, D_in), torch.randn(N, D_out)
  local w1_0, w2_0 = torch.randn(D_in, H), torch.randn(H, D_out)
  return function()
    local w1, w2 = w1_0:clone():requires_grad_(), w2_0:clone():requires_grad_()
    for _ = 1, 500 do
      local loss = (x:mm(w1):clamp{min = 0}:mm(w2) - y):pow(2):sum()
      loss:backward()
      torch.no_grad(function()
        w1:sub_(w1.grad * 1e-6)
        w2:sub_(w2.grad * 1e-6)
      end)
      w1.grad, w2.grad = nil, nil
    end
  end, 1
end)

for _, w in ipairs(workloads) do
  if w.name:find(filter, 1, true) then
    local fn, per = w.setup()
    print(string.format("%s\t%.9g", w.name, best_of(fn, repeats) / per))
  end
end
