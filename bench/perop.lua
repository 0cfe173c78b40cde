-- Workload 5's per-op cases for instruction counts under callgrind, which a loaded machine
-- does not change: run each case with n iterations and with 0 (after the same warm-up),
-- and divide the difference by n (bench/perop.sh does that for every case).
-- Usage: tide bench/perop.lua <case> <n>
local case, n = arg[1], tonumber(arg[2] or "10000")

local rand = torch.rand
local cases = {
  add_10_float32 = function()
    local a, b = rand(10), rand(10)
    return function() return a + b end
  end,
  add_10_float64 = function()
    local a, b = rand(10, {dtype = "float64"}), rand(10, {dtype = "float64"})
    return function() return a + b end
  end,
  add_scalar_10 = function()
    local a = rand(10, {dtype = "float64"})
    return function() return a * 2.0 end
  end,
  matmul_8x8 = function()
    local a, b = rand(8, 8, {dtype = "float64"}), rand(8, 8, {dtype = "float64"})
    return function() return a:mm(b) end
  end,
  sum_10 = function()
    local a = rand(10, {dtype = "float64"})
    return function() return a:sum() end
  end,
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
}

local setup = cases[case] or error("perop: unknown case '" .. tostring(case) .. "'")
local op = setup()
-- Warm-up long enough for the garbage collector to reach its steady state, in which the
-- pools and caches of the allocators hold every block a cycle of temporaries needs (the
-- autograd step makes about 30 tensors a call, the others one).
local warm = case == "tiny_autograd_step" and 1000 or 30000
for _ = 1, warm do op() end
for _ = 1, n do op() end
