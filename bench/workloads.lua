-- tide's side of the benchmark suite: each workload is timed inside this process (best of
-- `repeats` after a warm-up) and printed as "name<TAB>seconds per op", one line each, or
-- "name<TAB>skip<TAB>reason" when it cannot run here (the CUDA rows without a GPU).
-- The names, sizes and steps match bench/workloads_numpy.py and bench/workloads_torch.py.
-- Usage: tide bench/workloads.lua [filter] [repeats]; the filter is a substring of the names,
-- or several separated by commas.
local filter, repeats = arg[1] or "", tonumber(arg[2] or "5")
local clock = torch.utils.clock
local nn, optim = torch.nn, torch.optim
local here = arg[0]:match("(.*/)") or "./"

-- Best wall time of `reps` calls of fn after one warm-up call.
local function best_of(fn, reps)
  fn()
  local best = math.huge
  for _ = 1, reps do
    local t0 = clock()
    fn()
    best = math.min(best, clock() - t0)
  end
  return best
end

local workloads = {}
-- setup() returns (fn, ops per call), or (nil, reason) to skip the workload.
local function add(name, setup) workloads[#workloads + 1] = {name = name, setup = setup} end

local N, D_in, H, D_out = 64, 1000, 100, 10

-- The inputs and initial weights of workloads 1 and 2 (the same for both).
local function two_layer_data(dt, device)
  torch.manual_seed(0)
  local to = {dtype = dt, device = device}
  local x, y = torch.randn(N, D_in, to), torch.randn(N, D_out, to)
  return x, y, torch.randn(D_in, H, to), torch.randn(H, D_out, to)
end

-- Workload 1: the seed two-layer network with hand-written backprop, 500 steps.
local function two_layer(dt, device)
  local x, y, w1_0, w2_0 = two_layer_data(dt, device)
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
end

-- Workload 1's five matrix products alone (500 steps), for their GFLOP/s.
local function two_layer_products(dt)
  torch.manual_seed(0)
  local x, g = torch.randn(N, D_in, {dtype = dt}), torch.randn(N, D_out, {dtype = dt})
  local w1, w2, gh = torch.randn(D_in, H, {dtype = dt}), torch.randn(H, D_out, {dtype = dt}), torch.randn(N, H, {dtype = dt})
  return function()
    for _ = 1, 500 do
      local h = x:mm(w1)
      local _ = h:mm(w2), h:t():mm(g), g:mm(w2:t()), x:t():mm(gh)
    end
  end, 1
end

-- Workload 2: the same network with autograd, loss:backward() and updates under no_grad
-- (each step compiled with `compiled`: the c2 rows).
local function autograd_two_layer(dt, device, compiled)
  local x, y, w1_0, w2_0 = two_layer_data(dt, device)
  return function()
    local w1, w2 = w1_0:clone():requires_grad_(), w2_0:clone():requires_grad_()
    local function step()
      local loss = (x:mm(w1):clamp{min = 0}:mm(w2) - y):pow(2):sum()
      loss:backward()
      torch.no_grad(function()
        w1:sub_(w1.grad * 1e-6)
        w2:sub_(w2.grad * 1e-6)
      end)
      w1.grad, w2.grad = nil, nil
      return loss:detach()
    end
    if compiled then step = torch.compile(step) end
    for _ = 1, 500 do
      local _ = step():item()
    end
  end, 1
end

for _, dt in ipairs({"float64", "float32"}) do
  add("w1_two_layer_" .. dt, function() return two_layer(dt) end)
  add("w1_products_" .. dt, function() return two_layer_products(dt) end)
  add("w2_autograd_two_layer_" .. dt, function() return autograd_two_layer(dt) end)
end

-- Workload 3: the gradient of ||y - Ax||^2 with respect to x by autograd, A of (10d, d)
-- (compiled: the c3 row).
local function lstsq_grad(d, compiled)
  torch.manual_seed(0)
  local A, y = torch.randn(10 * d, d, {dtype = "float64"}), torch.randn(10 * d, {dtype = "float64"})
  local x = torch.randn(d, {dtype = "float64", requires_grad = true})
  local iters = math.max(1, 2000000 // (d * d))
  local function step()
    local r = y - A:mv(x)
    r:dot(r):backward()
    x.grad = nil
  end
  if compiled then step = torch.compile(step) end
  return function()
    for _ = 1, iters do step() end
  end, iters
end
for _, d in ipairs({100, 300, 1000, 2000}) do
  add("w3_lstsq_grad_d" .. d, function() return lstsq_grad(d) end)
end

-- Workload 4: linear regression, 100x10, 1000 epochs of nn.Linear + MSELoss + SGD
-- (compiled: the c4 row).
local function linear_regression(compiled)
  torch.manual_seed(0)
  local X = torch.randn(100, 10)
  local y = X:mm(torch.randn(10, 1)) + 0.5
  return function()
    local model = nn.Linear(10, 1)
    local criterion = nn.MSELoss()
    local opt = optim.SGD(model:parameters(), {lr = 0.01})
    local function step()
      opt:zero_grad()
      local loss = criterion(model(X), y)
      loss:backward()
      opt:step()
    end
    if compiled then step = torch.compile(step) end
    for _ = 1, 1000 do step() end
  end, 1
end
add("w4_linear_regression", function() return linear_regression() end)

-- Workload 5: per-op overhead (seconds per op). Each tiny op runs 10^5 times a round, so
-- that every round includes the collector's work on the temporaries (the best of short
-- rounds would be one without a collection); the autograd step, 20 times the garbage, 10^4.
local function per_op(op, iters)
  return function() for _ = 1, iters do op() end end, iters
end
local perop_cases = dofile(here .. "perop_cases.lua")
for _, row in ipairs({{"w5_add_10", "add_10_float64"}, {"w5_matmul_8x8", "matmul_8x8"}, {"w5_sum_10", "sum_10"},
                      {"w5_tiny_autograd_step", "tiny_autograd_step"}}) do
  add(row[1], function() return per_op(perop_cases[row[2]](), row[1] == "w5_tiny_autograd_step" and 10000 or 100000) end)
end

-- Workload 6: large elementwise ops on 10^6 and 10^7 elements.
for _, n in ipairs({1000000, 10000000}) do
  local size = n == 1000000 and "1e6" or "1e7"
  local reps = 10000000 // n
  for _, dt in ipairs({"float32", "float64"}) do
    local function inputs()
      torch.manual_seed(0)
      return torch.rand(n, {dtype = dt}), torch.rand(n, {dtype = dt}), torch.rand(n, {dtype = dt})
    end
    local function timed(op) return function() for _ = 1, reps do op() end end, reps end
    add("w6_add_" .. size .. "_" .. dt, function()
      local a, b = inputs()
      return timed(function() return a + b end)
    end)
    add("w6_exp_" .. size .. "_" .. dt, function()
      local a = inputs()
      return timed(function() return a:exp() end)
    end)
    add("w6_chain_" .. size .. "_" .. dt, function()
      local a, b, c = inputs()
      return timed(function() return (a * b + c):relu() end)
    end)
  end
end

-- Workload 7: matrix products.
for _, n in ipairs({1000, 2000}) do
  for _, dt in ipairs({"float32", "float64"}) do
    add("w7_matmul_" .. n .. "_" .. dt, function()
      torch.manual_seed(0)
      local a, b = torch.rand(n, n, {dtype = dt}), torch.rand(n, n, {dtype = dt})
      return function() return a:mm(b) end, 1
    end)
  end
end

-- Workload 8: one epoch of the digits MLP (the demo: 64-128-10, cross-entropy, Adam, batches of 64).
add("w8_digits_epoch", function()
  local common = dofile(here .. "../scripts/common.lua")
  local d = common.load_digits(0)
  torch.manual_seed(0)
  local model = common.digits_mlp(128)
  local criterion = nn.CrossEntropyLoss()
  local opt = optim.Adam(model:parameters(), {lr = 1e-3})
  local n_train = d.x_train:size(1)
  return function()
    local perm = torch.randperm(n_train)
    for first = 1, n_train, 64 do
      local idx = perm[{{first, math.min(first + 63, n_train)}}]
      local loss = criterion(model(d.x_train:index_select(1, idx)), d.y_train:index_select(1, idx))
      opt:zero_grad()
      loss:backward()
      opt:step()
    end
  end, 1
end)

-- Issue 16: an LSTM (2 layers, input and hidden 128, sequence 35, batch 20; float32) forward
-- and backward, as the word-level language model trains it.
add("w16_lstm_2x128_seq35_batch20", function()
  torch.manual_seed(0)
  local lstm = nn.LSTM(128, 128, 2)
  local x = torch.randn(35, 20, 128)
  local h0 = {torch.zeros(2, 20, 128), torch.zeros(2, 20, 128)}
  return function()
    lstm:zero_grad()
    local out, hc = lstm(x, h0)
    local loss = out:sum() + hc[1]:sum() + hc[2]:sum()
    loss:backward()
  end, 1
end)

-- Workload 16: nn.MultiheadAttention forward and backward, self-attention over a batch of 32
-- sequences of 64 with embed_dim 256 and 8 heads (float32), the weights returned as by default.
add("w16_mha_fwd_bwd_float32", function()
  torch.manual_seed(0)
  local m = nn.MultiheadAttention(256, 8)
  local x = torch.randn(64, 32, 256):requires_grad_()
  return function()
    local out = m(x, x, x)
    out:sum():backward()
  end, 1
end)

-- Workload 11: LAPACK decompositions of a 500 x 500 float64 matrix (symmetric positive
-- definite for eigh and cholesky; lstsq with 10 right-hand sides).
local LA_N = 500
local function la_inputs()
  torch.manual_seed(0)
  local a = torch.rand(LA_N, LA_N, {dtype = "float64"})
  local spd = a:mm(a:t()) + torch.eye(LA_N, {dtype = "float64"}) * LA_N
  return a, spd, torch.rand(LA_N, 10, {dtype = "float64"})
end
for name, f in pairs({
  svd = function(a) return torch.linalg.svd(a) end,
  eigh = function(_, spd) return torch.linalg.eigh(spd) end,
  qr = function(a) return torch.linalg.qr(a) end,
  cholesky = function(_, spd) return torch.linalg.cholesky(spd) end,
  lstsq = function(a, _, b) return torch.linalg.lstsq(a, b) end,
}) do
  add("w11_" .. name .. "_500_float64", function()
    local a, spd, b = la_inputs()
    return function() return f(a, spd, b) end, 1
  end)
end

-- Workload 12: FFTs of 2^20 float64 points in NumPy spelling (complex128 results): fft of a
-- complex128 and of a float64 signal, rfft of the float64 one.
local FFT_N = 1 << 20
local function fft_inputs()
  local re = np.random.default_rng(0):random(FFT_N)
  return re, np.fft.fft(re)
end
for name, f in pairs({
  fft_complex128 = function(_, c) return np.fft.fft(c) end,
  fft_float64 = function(re) return np.fft.fft(re) end,
  rfft_float64 = function(re) return np.fft.rfft(re) end,
}) do
  add("w12_" .. name .. "_2p20", function()
    local re, c = fft_inputs()
    return function() return f(re, c) end, 1
  end)
end

-- Workload 16 (issue 16): nn.BatchNorm2d(64) in training mode, forward and backward (into the
-- input, weight and bias) of a 32 x 64 x 32 x 32 float32 batch.
add("w16_batchnorm2d_train_float32", function()
  torch.manual_seed(0)
  local x = torch.randn(32, 64, 32, 32):requires_grad_()
  local g = torch.randn(32, 64, 32, 32)
  local bn = nn.BatchNorm2d(64)
  return function()
    bn(x):backward(g)
  end, 1
end)
-- Workload 15: two Conv2d layers forward and backward (loss = sum of the second's output),
-- 10 steps per call: the digits CNN's (batch 64 of 1x8x8, 1->32->64 channels, 3x3) and a
-- CIFAR-sized batch (64 of 3x32x32, 3->32->64 channels, 3x3, padding 1).
local CONV_SHAPES = {digits = {64, 1, 8, 0}, cifar = {64, 3, 32, 1}}
for name, s in pairs(CONV_SHAPES) do
  add("w15_conv2d_" .. name .. "_float32", function()
    torch.manual_seed(0)
    local n, c, hw, pad = s[1], s[2], s[3], s[4]
    local conv1, conv2 = nn.Conv2d(c, 32, 3, {padding = pad}), nn.Conv2d(32, 64, 3, {padding = pad})
    local x = torch.randn(n, c, hw, hw)
    return function()
      for _ = 1, 10 do
        conv2(conv1(x):relu()):sum():backward()
      end
    end, 10
  end)
end

-- Workload 10: workloads 1, 2 and 7 on the GPU; every call ends with a synchronize.
local function on_cuda(make)
  return function()
    if not torch.cuda.is_available() then return nil, "no CUDA device" end
    local fn, per = make()
    return function() fn(); torch.cuda.synchronize() end, per
  end
end
for _, dt in ipairs({"float32", "float64"}) do
  add("w10_two_layer_cuda_" .. dt, on_cuda(function() return two_layer(dt, "cuda") end))
  add("w10_autograd_two_layer_cuda_" .. dt, on_cuda(function() return autograd_two_layer(dt, "cuda") end))
  for _, n in ipairs({1000, 2000}) do
    add("w10_matmul_" .. n .. "_cuda_" .. dt, on_cuda(function()
      torch.manual_seed(0)
      local a, b = torch.rand(n, n, {dtype = dt, device = "cuda"}), torch.rand(n, n, {dtype = dt, device = "cuda"})
      return function() return a:mm(b) end, 1
    end))
  end
end

-- Workload 10's autograd two-layer network with its step compiled (replays queue the
-- recorded kernels on the stream), tide only.
for _, dt in ipairs({"float32", "float64"}) do
  add("c10_autograd_two_layer_cuda_" .. dt, on_cuda(function() return autograd_two_layer(dt, "cuda", true) end))
end

-- Issue 18 part 3: workloads 2 to 6 with each step compiled (torch.compile), tide only; the
-- targets compare them with the peers' eager rows of the same workload (bench/run.py).
for _, dt in ipairs({"float64", "float32"}) do
  add("c2_autograd_two_layer_" .. dt, function() return autograd_two_layer(dt, nil, true) end)
end
add("c3_lstsq_grad_d100", function() return lstsq_grad(100, true) end)
add("c4_linear_regression", function() return linear_regression(true) end)
add("c5_tiny_autograd_step", function() return per_op(torch.compile(perop_cases.tiny_autograd_step()), 10000) end)
add("c6_chain_1e6_float32", function()
  torch.manual_seed(0)
  local n = 1000000
  local a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
  local chain = torch.compile(function() return (a * b + c):relu() end)
  return function() for _ = 1, 10 do chain() end end, 10
end)

local function selected(name)
  for part in (filter .. ","):gmatch("([^,]*),") do
    if name:find(part, 1, true) then return true end
  end
  return false
end

for _, w in ipairs(workloads) do
  if selected(w.name) then
    local fn, per = w.setup()
    if fn then
      print(string.format("%s\t%.9g", w.name, best_of(fn, repeats) / per))
    else
      print(string.format("%s\tskip\t%s", w.name, per))
    end
    io.stdout:flush()
  end
end
