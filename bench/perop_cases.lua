-- Workload 5's per-op cases, shared by the timed suite (bench/workloads.lua) and the
-- instruction counts under callgrind (bench/perop.lua), so both measure the same code.
-- Each entry sets up its inputs and returns the op to repeat.
local rand = torch.rand
local f64 = {dtype = "float64"}

return {
  add_10_float32 = function()
    local a, b = rand(10), rand(10)
    return function() return a + b end
  end,
  add_10_float64 = function()
    local a, b = rand(10, f64), rand(10, f64)
    return function() return a + b end
  end,
  add_inplace_10 = function()
    local a, b = rand(10), rand(10)
    return function() return a:add_(b) end
  end,
  add_scalar_10 = function()
    local a = rand(10, f64)
    return function() return a * 2.0 end
  end,
  matmul_8x8 = function()
    local a, b = rand(8, 8, f64), rand(8, 8, f64)
    return function() return a:mm(b) end
  end,
  sum_10 = function()
    local a = rand(10, f64)
    return function() return a:sum() end
  end,
  -- One tiny training step: two small matmuls, relu, a squared loss, backward, an update.
  tiny_autograd_step = function()
    torch.manual_seed(0)
    local w1 = torch.randn(10, 16, {requires_grad = true})
    local w2 = torch.randn(16, 1, {requires_grad = true})
    local x, y = torch.randn(8, 10), torch.randn(8, 1)
    return function()
      local loss = (x:mm(w1):relu():mm(w2) - y):pow(2):sum()
      loss:backward()
      torch.no_grad(function()
        w1:sub_(w1.grad * 1e-4)
        w2:sub_(w2.grad * 1e-4)
      end)
      w1.grad, w2.grad = nil, nil
    end
  end,
  -- One step of workload 3's least-squares gradient at d=100 (bench/workloads.lua).
  lstsq_grad_d100 = function()
    torch.manual_seed(0)
    local A, y = torch.randn(1000, 100, f64), torch.randn(1000, f64)
    local x = torch.randn(100, {dtype = "float64", requires_grad = true})
    return function()
      local r = y - A:mv(x)
      r:dot(r):backward()
      x.grad = nil
    end
  end,
  -- One epoch of workload 4's linear regression: nn.Linear + MSELoss + SGD on 100x10.
  linear_regression_step = function()
    torch.manual_seed(0)
    local X = torch.randn(100, 10)
    local y = X:mm(torch.randn(10, 1)) + 0.5
    local model = nn.Linear(10, 1)
    local criterion = nn.MSELoss()
    local opt = optim.SGD(model:parameters(), {lr = 0.01})
    return function()
      opt:zero_grad()
      local loss = criterion(model(X), y)
      loss:backward()
      opt:step()
    end
  end,
}
