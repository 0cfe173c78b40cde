-- The CUDA backend. Without a usable GPU (no module built, no driver, no device): CUDA is
-- reported unavailable with the reason, and every way of asking for a CUDA tensor is a clear
-- error that leaves the interpreter working. With a GPU: transfers, the same random numbers
-- as the CPU for a seed, async ops and synchronisation, the caching allocator's counters,
-- mixing devices, index errors raised from kernels, autograd, nn, optim and checkpoints on
-- CUDA, the seed workloads and the digits demo reaching the CPU's losses, and flat memory
-- over a long training loop. (Every op against the CPU: tests/conformance/devicecheck.lua.)
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn, optim = torch.nn, torch.optim

local ROOT = dir .. "../../"
local available = torch.cuda.is_available()
-- TIDE_FAKE_CUDA=1: the "GPU" is the host-memory stand-in of tests/fake_device (serial
-- loops), so the workloads below are made smaller.
local STAND_IN = os.getenv("TIDE_FAKE_CUDA") == "1"

-- Behaviour on every machine --------------------------------------------------------------

T.test("is_available agrees with device_count and the reason", function()
  T.eq(type(available), "boolean")
  T.eq(available, torch.cuda.device_count() > 0)
  T.eq(torch.cuda.unavailable_reason() == "", available)
end)

T.test("device strings are checked", function()
  local x = torch.ones(2)
  T.error(function() return x:to("cuda:x") end, "unknown dtype or device 'cuda:x'")
  T.error(function() return x:to("gpu") end, "unknown dtype or device 'gpu'")
  T.error(function() return torch.zeros(2, {device = "tpu"}) end, "unknown device 'tpu'")
  T.eq(tostring(x:cpu().device), "cpu")
  T.eq(tostring(x:to("cpu").device), "cpu")
end)

if not available then
  local why = torch.cuda.unavailable_reason()
  T.test("every CUDA request says why CUDA is unavailable", function()
    T.truthy(#why > 0, "a reason is given")
    local x = torch.ones(2, 3)
    local msg = "CUDA is not available: "
    T.error_usable(function() return torch.zeros(2, {device = "cuda"}) end, "zeros: " .. msg)
    T.error_usable(function() return torch.randn(2, {device = "cuda:0"}) end, "randn: " .. msg)
    T.error_usable(function() return torch.arange(5, {device = "cuda"}) end, "arange: " .. msg)
    T.error_usable(function() return x:cuda() end, "cuda: " .. msg)
    T.error_usable(function() return x:to("cuda") end, "to: " .. msg)
    T.error_usable(function() return x:to{device = "cuda", dtype = "float16"} end, "to: " .. msg)
    T.error_usable(function() return torch.cuda.synchronize() end, msg)
    T.error_usable(function() return torch.cuda.memory_allocated() end, msg)
    T.error_usable(function() return torch.cuda.empty_cache() end, msg)
    T.error_usable(function() return nn.Linear(2, 2):to("cuda") end, msg)
    local TMP = T.tmpdir()
    torch.save(x, TMP .. "/x.safetensors")
    T.error_usable(function() return torch.load(TMP .. "/x.safetensors", {map_location = "cuda"}) end,
                   "torch.load: " .. msg)
    T.eq(torch.load(TMP .. "/x.safetensors", {map_location = "cpu"}):sum():item(), 6.0)
  end)
  T.test("the allow_tf32 switch works without a GPU", function()
    T.eq(torch.backends.cuda.matmul.allow_tf32, false)
    torch.backends.cuda.matmul.allow_tf32 = true
    T.eq(torch.backends.cuda.matmul.allow_tf32, true)
    torch.backends.cuda.matmul.allow_tf32 = false
    T.error(function() torch.backends.cuda.matmul.allow_tf32 = "yes" end, "expected a boolean")
    T.error(function() torch.backends.cuda.matmul.allow_fp8 = true end, "unknown setting 'allow_fp8'")
  end)
  print("skipped: no CUDA device (" .. why .. "); the GPU tests of test_cuda.lua did not run")
  T.done()
  return
end

-- With a GPU -------------------------------------------------------------------------------

local function close(a, b, tol)
  return (a:cpu():double() - b:cpu():double()):abs():max():item() <= (tol or 1e-5)
end

T.test("transfers keep values, dtypes and shapes", function()
  for _, dt in ipairs({"float64", "float32", "float16", "bfloat16", "int64", "int32", "int8", "uint8", "bool"}) do
    local x = (T.arange_shaped(3, 4) - 5):to(dt)
    local g = x:cuda()
    T.eq(tostring(g.device), "cuda:0")
    T.eq(g.dtype, dt)
    T.eq(g:cpu():tolist(), x:tolist(), dt)
  end
  local big = torch.randn(3000, 1000)  -- through the pinned staging buffers
  T.truthy(big:cuda():cpu():eq(big):all():item())
  local nc = T.arange_shaped(4, 5):t()
  T.eq(nc:cuda():tolist(), nc:tolist())
  T.eq(tostring(torch.ones(2, {device = "cuda"})), "tensor([1., 1.], device='cuda:0')")
  -- only the shown elements cross to the host: a 2^40-element view prints at once
  local t0 = torch.utils.clock()
  T.eq(tostring(torch.arange(7, {device = "cuda"}):view(7, 1):expand(7, 2 ^ 37)),
    "tensor([[0, 0, 0,  ..., 0, 0, 0],\n        [1, 1, 1,  ..., 1, 1, 1],\n        [2, 2, 2,  ..., 2, 2, 2],\n" ..
    "        ...,\n        [4, 4, 4,  ..., 4, 4, 4],\n        [5, 5, 5,  ..., 5, 5, 5],\n" ..
    "        [6, 6, 6,  ..., 6, 6, 6]], device='cuda:0')")
  T.truthy(torch.utils.clock() - t0 < 1, "printing took under a second")
end)

T.test("rand, randn and randint give the CPU's numbers for a seed", function()
  for _, dt in ipairs({"float32", "float64", "float16", "bfloat16"}) do
    torch.manual_seed(7)
    local a = torch.rand(1001, {dtype = dt})
    local b = torch.randn(1001, {dtype = dt})
    torch.manual_seed(7)
    local ga = torch.rand(1001, {dtype = dt, device = "cuda"})
    local gb = torch.randn(1001, {dtype = dt, device = "cuda"})
    T.truthy(ga:cpu():eq(a):all():item(), "rand " .. dt)
    T.truthy(close(gb, b, dt == "float64" and 1e-12 or 1e-6), "randn " .. dt)
  end
  torch.manual_seed(3)
  local i = torch.randint(-5, 17, {999})
  torch.manual_seed(3)
  T.eq(torch.randint(-5, 17, {999}, {device = "cuda"}):cpu():tolist(), i:tolist())
  -- int64 bounds beyond 2^53 reach the device exactly (they once went as doubles)
  for _, r in ipairs({{math.mininteger, math.maxinteger}, {(1 << 53) + 1, (1 << 53) + 9}}) do
    torch.manual_seed(5)
    local c = torch.randint(r[1], r[2], {257}, {dtype = "int64"})
    torch.manual_seed(5)
    local g = torch.randint(r[1], r[2], {257}, {dtype = "int64", device = "cuda"})
    T.eq(g:cpu():tolist(), c:tolist())
    T.truthy(c:ge(r[1]):all():item() and c:lt(r[2]):all():item(), "randint in [low, high)")
  end
end)

-- A device reduces float16 / bfloat16 in float32 and rounds once, as the CPU does: on the
-- stand-in (the same summation as the CPU here) bit for bit, on a GPU within its ulp.
T.test("half-precision reductions compute in float32 on the device", function()
  for _, dt in ipairs({"float16", "bfloat16"}) do
    local x = torch.randn(64, 33, {dtype = dt}) * 3
    local g = x:cuda()
    local cases = {
      mean = function(t) return t:mean(2) end, var = function(t) return t:var(2) end,
      std = function(t) return t:std(2) end, logsumexp = function(t) return t:logsumexp(2) end,
      norm3 = function(t) return t:norm(3, 2) end, norm2 = function(t) return t:norm(2, 2) end,
    }
    for name, f in pairs(cases) do
      local a, b = f(x), f(g)
      T.eq(b.dtype, a.dtype, name)
      if STAND_IN then
        T.truthy(b:cpu():eq(a):all():item(), name .. " " .. dt .. " equals the CPU's")
      else
        T.truthy(close(b, a, (dt == "float16" and 4e-3 or 3e-2) * a:abs():max():item()), name .. " " .. dt)
      end
    end
  end
end)

T.test("ops queue asynchronously; item, tolist and synchronize wait", function()
  local n = STAND_IN and 100 or 2000
  local x = torch.randn(n, n, {device = "cuda"})
  local y = x
  for _ = 1, 20 do y = y:mm(x) / n end
  torch.cuda.synchronize()
  T.eq(type(y:sum():item()), "number")
  T.eq(#y[1]:tolist(), n)
end)

T.test("mixing devices is an error naming both", function()
  local a, b = torch.ones(3), torch.ones(3, {device = "cuda"})
  T.error_usable(function() return a + b end, "cpu and cuda:0")
  T.error_usable(function() return a:mm(b:view(3, 1)) end, "cpu and cuda:0")
  T.eq((b + torch.tensor(2.0)):cpu():tolist(), {3, 3, 3})  -- a 0-d cpu tensor acts as a number
end)

T.test("an index out of range is a Lua error, and the GPU stays usable", function()
  local x = torch.arange(1, 6, {device = "cuda"})
  T.error_usable(function() return x[torch.tensor({1, 9})] end, "out of range")
  T.error_usable(function() return x:gather(1, torch.tensor({0})) end, "out of range")
  T.eq(x[torch.tensor({5, 1})]:cpu():tolist(), {5, 1})
  T.eq((x * 2):sum():item(), 30)
end)

T.test("writes overlapping their inputs give NumPy's answer; shared elements are refused", function()
  local x = torch.arange(9, {dtype = "float64", device = "cuda"}):reshape(3, 3)
  x:add_(x:t())  -- np.add(a, a.T, out=a)
  T.eq(x:cpu():tolist(), {{0, 4, 8}, {4, 8, 12}, {8, 12, 16}})
  local v = torch.arange(5, {dtype = "float64", device = "cuda"})
  v[{{2, 5}}]:copy_(v[{{1, 4}}])
  T.eq(v:cpu():tolist(), {0, 0, 1, 2, 3})
  local a = torch.arange(4, {dtype = "float64", device = "cuda"}):reshape(2, 2)
  torch.mm(a, a, {out = a})
  T.eq(a:cpu():tolist(), {{2, 3}, {6, 11}})
  local z = torch.zeros(3, {device = "cuda"})
  T.error_usable(function() z:view(1, 3):expand(2, 3):add_(1) end,
    "add_: unsupported operation: more than one element of the written-to tensor refers to a single memory location")
  T.eq(z:cpu():tolist(), {0, 0, 0})
end)

T.test("the caching allocator counts, caches and empties", function()
  torch.cuda.synchronize()
  collectgarbage()
  local before = torch.cuda.memory_allocated()
  local x = torch.empty(1024, 1024, {device = "cuda"})
  T.truthy(torch.cuda.memory_allocated() >= before + 4 * 1024 * 1024)
  T.truthy(torch.cuda.memory_reserved() >= torch.cuda.memory_allocated())
  x = nil
  collectgarbage()
  T.eq(torch.cuda.memory_allocated(), before)
  torch.cuda.empty_cache()
  T.truthy(torch.cuda.memory_reserved() >= torch.cuda.memory_allocated())
  T.error_usable(function() return torch.empty(1 << 50, {device = "cuda"}) end, "out of memory")
end)

T.test("the device argument of synchronize and the memory counters", function()
  local n = torch.cuda.device_count()
  local x = torch.ones(256, {device = "cuda:0"})
  torch.cuda.synchronize(0)
  torch.cuda.synchronize("cuda:0")
  T.eq(torch.cuda.memory_allocated(0), torch.cuda.memory_allocated())
  T.eq(torch.cuda.memory_allocated("cuda:0"), torch.cuda.memory_allocated())
  T.eq(torch.cuda.memory_reserved(0), torch.cuda.memory_reserved())
  T.eq(torch.cuda.max_memory_allocated(0), torch.cuda.max_memory_allocated())
  T.truthy(torch.cuda.max_memory_allocated(0) >= torch.cuda.memory_allocated(0))
  for _, f in ipairs({"synchronize", "memory_allocated", "memory_reserved", "max_memory_allocated"}) do
    T.error_usable(function() return torch.cuda[f](n) end,
                   "cuda." .. f .. ": no such CUDA device cuda:" .. n .. " (" .. n .. " available)")
  end
  T.eq(x:sum():item(), 256.0)
end)

T.test("allow_tf32 reaches the backend", function()
  torch.backends.cuda.matmul.allow_tf32 = true
  T.eq(torch.backends.cuda.matmul.allow_tf32, true)
  torch.backends.cuda.matmul.allow_tf32 = false
  T.eq(torch.backends.cuda.matmul.allow_tf32, false)
  local a = torch.tensor({{1 + 2 ^ -12}}, {device = "cuda"})
  T.eq(a:mm(torch.ones(1, 1, {device = "cuda"})):item(), 1 + 2 ^ -12)  -- full float32 without TF32
end)

T.test("autograd on CUDA matches the CPU", function()
  torch.manual_seed(1)
  local w = torch.randn(5, 3, {dtype = "float64", requires_grad = true})
  local x = torch.randn(4, 5, {dtype = "float64"})
  local loss = (x:mm(w):tanh() ^ 2):sum()
  loss:backward()
  local wg = w:detach():cuda():requires_grad_()
  local lg = (x:cuda():mm(wg):tanh() ^ 2):sum()
  lg:backward()
  T.near(lg:item(), loss:item(), 1e-10)
  T.eq(tostring(wg.grad.device), "cuda:0")
  T.truthy(close(wg.grad, w.grad, 1e-10))
  -- the gradient of a device move goes back to the cpu
  local c = torch.ones(3, {dtype = "float64", requires_grad = true})
  ;(c:cuda() * 3):sum():backward()
  T.eq(tostring(c.grad.device), "cpu")
  T.eq(c.grad:tolist(), {3, 3, 3})
end)

T.test("nn, optim and checkpoints on CUDA", function()
  torch.manual_seed(2)
  local cpu_model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)):double()
  local gpu_model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)):double()
  gpu_model:load_state_dict(cpu_model:state_dict())
  gpu_model:to("cuda")
  local x, y = torch.randn(16, 6, {dtype = "float64"}), torch.randint(1, 4, {16})
  for _, pair in ipairs({{cpu_model, "cpu"}, {gpu_model, "cuda"}}) do
    local model, dev = pair[1], pair[2]
    local opt = optim.Adam(model:parameters(), {lr = 0.01})
    for _ = 1, 5 do
      opt:zero_grad()
      local loss = nn.functional.cross_entropy(model(x:to(dev)), y:to(dev))
      loss:backward()
      opt:step()
    end
  end
  for name, p in pairs(gpu_model:state_dict()) do
    T.eq(tostring(p.device), "cuda:0")
    T.truthy(close(p, cpu_model:state_dict()[name], 1e-9), name)
  end
  local TMP = T.tmpdir()
  torch.save(gpu_model:state_dict(), TMP .. "/m.safetensors")
  local back = torch.load(TMP .. "/m.safetensors", {map_location = "cuda"})
  T.eq(tostring(back["0.weight"].device), "cuda:0")
  T.truthy(close(back["0.weight"], cpu_model:state_dict()["0.weight"], 1e-9))
  -- PyTorch's format: the GPU's storages are written from host copies, views sharing one
  -- storage included, and load on the host by default
  local sd = gpu_model:state_dict()
  sd.w_t = sd["0.weight"]:t()
  torch.save(sd, TMP .. "/m.pt")
  local host = torch.load(TMP .. "/m.pt")
  T.eq(tostring(host["0.weight"].device), "cpu")
  T.eq(host["0.weight"]:tolist(), sd["0.weight"]:cpu():tolist())
  T.eq(host.w_t:tolist(), sd["0.weight"]:cpu():t():tolist())
  host["0.weight"][{1, 1}] = 42
  T.eq(host.w_t[{1, 1}]:item(), 42, "the transposed view shares the loaded storage")
  T.eq(tostring(torch.load(TMP .. "/m.pt", {map_location = "cuda"})["2.bias"].device), "cuda:0")
end)

-- Runs a script and returns its printed loss values.
local function losses(script, args)
  local p = assert(io.popen(T.interpreter() .. " " .. ROOT .. script .. " " .. args .. " 2>&1"))
  local out = p:read("a")
  p:close()
  local r = {}
  for v in out:gmatch("loss[^%d%-]*([%-%d%.e]+)") do r[#r + 1] = tonumber(v) end
  return r, out
end

T.test("the seed workloads and the digits demo reach the CPU's losses", function()
  local steps = STAND_IN and " --steps 20 --print-every 10" or ""
  for _, s in ipairs({"scripts/two_layer_torch.lua", "scripts/two_layer_autograd.lua", "scripts/two_layer_nn.lua"}) do
    local cpu = losses(s, "--dtype float64 --device cpu" .. steps)
    local gpu, out = losses(s, "--dtype float64 --device cuda" .. steps)
    T.truthy(#cpu > 0 and #gpu == #cpu, s .. ": " .. out)
    for i = 1, #cpu do T.near(gpu[i], cpu[i], 1e-6 * (1 + math.abs(cpu[i])), s) end
  end
  local TMP = T.tmpdir()
  local cpu = losses("scripts/demo.lua", "--epochs 5 --device cpu --checkpoint " .. TMP .. "/cpu.safetensors")
  local gpu, out = losses("scripts/demo.lua", "--epochs 5 --device cuda --checkpoint " .. TMP .. "/gpu.safetensors")
  T.truthy(#cpu > 0 and #gpu == #cpu, out)
  for i = 1, #cpu do T.near(gpu[i], cpu[i], 1e-3 * (1 + math.abs(cpu[i])), "demo") end
end)

T.test("a long training loop keeps GPU memory flat", function()
  local model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)):to("cuda")
  local opt = optim.SGD(model:parameters(), {lr = 0.01, momentum = 0.9})
  local x, y = torch.randn(256, 64, {device = "cuda"}), torch.randint(1, 11, {256}, {device = "cuda"})
  local function steps(n)
    for _ = 1, n do
      opt:zero_grad()
      nn.functional.cross_entropy(model(x), y):backward()
      opt:step()
    end
    torch.cuda.synchronize()
    collectgarbage()
    return torch.cuda.memory_allocated()
  end
  local warmup, many = 50, STAND_IN and 200 or 2000
  local after_warmup = steps(warmup)
  local after_many = steps(many)
  T.truthy(after_many <= after_warmup, after_many .. " bytes after " .. warmup + many .. " steps vs " .. after_warmup ..
           " after " .. warmup)
end)

-- A device tensor of 1 MiB or more has the next binding call start with a minor collection
-- (bindings/lua_api.cpp): in generational mode, tide's own, a dead temporary's block goes back
-- to the device allocator before the next op allocates. In incremental mode that step frees
-- nothing by itself, and a full collection each 256 MiB of device tensors bounds them.
T.test("dead GPU tensors go back to the allocator at the next call; at most 256 MiB wait in incremental mode", function()
  local function most_live()
    collectgarbage()
    local base = torch.cuda.memory_allocated()
    local most = 0
    for _ = 1, 100 do  -- 100 x 8 MB of temporaries, none kept
      torch.empty(1000, 1000, {dtype = "float64", device = "cuda"})
      most = math.max(most, torch.cuda.memory_allocated() - base)
    end
    return most
  end
  local most = most_live()
  T.truthy(most <= 2 * 8 * 2^20, "dead device temporaries are freed at the next call, saw " .. most .. " bytes live")
  collectgarbage("incremental")
  most = most_live()
  collectgarbage("generational")
  -- 256 MiB of tensor bytes is 34 tensors of 8e6 bytes; the allocator counts each one's 8 MiB
  -- block (2 MiB rounding), so 35 blocks of 8 MiB at most
  T.truthy(most <= 35 * 8 * 2^20, "at most 256 MiB of dead device tensors wait for the collector, saw " .. most)
end)

T.done()
