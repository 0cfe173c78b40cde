-- help()'s documentation: every registered C function has a non-empty doc that starts with
-- its signature (walked through torch, np, their sub-tables and the Tensor metatable), and
-- every public Lua-written function and class (nn, nn.functional, nn.init, optim, the
-- schedulers, the grad-mode switches, utils.progress, utils.data, autograd.Function and
-- functional) has one in torch._doc.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local np = np or require("numpy")

local tensor_meta = getmetatable(torch.zeros(1))
local _, methods = debug.getupvalue(tensor_meta.__index, 1)

-- Calls visit(path, value) for every function and table under root (each table once).
local function walk(root, name, visit)
  local seen = {}
  local function go(t, path, depth)
    if seen[t] or depth > 4 then return end
    seen[t] = true
    for k, v in pairs(t) do
      if type(k) == "string" then
        local p = path .. "." .. k
        visit(p, v, k)
        if type(v) == "table" and k:sub(1, 1) ~= "_" then go(v, p, depth + 1) end
      end
    end
  end
  go(root, name, 0)
end

T.test("every C function reachable from torch, np and tensors is a documented binding", function()
  local count, bad = 0, {}
  local function check(path, v)
    if type(v) ~= "function" or debug.getinfo(v, "S").what ~= "C" then return end
    count = count + 1
    local doc = torch._binding_doc(v)
    if type(doc) ~= "string" or not doc:match("^[%w_.:%[%]\"]+%(.*%S") then bad[#bad + 1] = path end
  end
  walk(torch, "torch", check)
  walk(np, "np", check)
  walk(methods, "Tensor", check)
  walk(tensor_meta, "Tensor metatable", function(path, v, k)
    if k:match("^__") and k ~= "__index" and k ~= "__newindex" and k ~= "__tostring" and k ~= "__len" and
       k ~= "__gc" and k ~= "__close" then check(path, v) end
  end)
  table.sort(bad)
  T.eq(bad, {}, "functions without a doc that starts with their signature")
  T.truthy(count > 500, "expected the whole registry, walked " .. count .. " C functions")
end)

T.test("torch._doc finds C bindings through their registration, whichever module they came from", function()
  T.eq(torch._doc[torch.mm], torch._binding_doc(torch.mm))
  T.truthy(torch._doc[torch.mm]:match("^mm%(a, b"), torch._doc[torch.mm])
  T.eq(torch._doc[np.clip], torch._doc[torch.clamp])
  T.eq(torch._doc[torch.zeros(2).sum], torch._doc[torch.sum])
  T.eq(select(2, torch._binding_doc(np.clip)), "clamp")
  T.eq(torch._binding_doc(print), nil)
  T.eq(torch._binding_doc(function() end), nil)
  T.eq(torch._binding_doc({}), nil)
  T.eq(torch._doc[print], nil)
end)

T.test("every public Lua-written function and class has a doc", function()
  local bad, count = {}, 0
  local function check(path, v, k)
    if k:sub(1, 1) == "_" then return end
    if v == torch.nn.functional then return end  -- nn.F: the module table (its metatable is autocast's hook)
    local is_class = type(v) == "table" and getmetatable(v) ~= nil and k:match("^%u")
    local lua_fn = type(v) == "function" and debug.getinfo(v, "S").what == "Lua"
    if not (is_class or lua_fn) then return end
    count = count + 1
    local doc = torch._doc[v]
    if type(doc) ~= "string" or not doc:match("^[%w_.:]+.*%S") then bad[#bad + 1] = path end
  end
  local function own(t, name)
    for k, v in pairs(t) do if type(k) == "string" then check(name .. "." .. k, v, k) end end
  end
  own(torch, "torch")
  own(torch.utils, "torch.utils")
  own(torch.autograd, "torch.autograd")
  own(torch.nn, "nn")
  own(torch.nn.functional, "nn.functional")
  own(torch.nn.init, "nn.init")
  own(torch.optim, "optim")
  own(torch.optim.lr_scheduler, "optim.lr_scheduler")
  own(torch.nn.Module, "nn.Module")
  own(torch.optim.Optimizer, "optim.Optimizer")
  own(torch.optim.lr_scheduler.LRScheduler, "optim.lr_scheduler.LRScheduler")
  own(torch.autograd.functional, "torch.autograd.functional")
  own(torch.autograd.Function, "torch.autograd.Function")
  own(torch.utils.data, "torch.utils.data")
  own(torch.distributions, "torch.distributions")
  own(torch.distributions.kl, "torch.distributions.kl")
  own(torch.distributions.Distribution, "torch.distributions.Distribution")
  for _, name in ipairs{"Normal", "Uniform", "Gamma", "Beta", "Categorical", "Bernoulli", "MultivariateNormal",
                        "Independent"} do
    own(torch.distributions[name], "torch.distributions." .. name)
  end
  own(torch.amp, "torch.amp")
  own(torch.amp.GradScaler, "torch.amp.GradScaler")
  for _, name in ipairs{"Dataset", "IterableDataset", "Sampler", "DataLoader"} do
    own(torch.utils.data[name], "torch.utils.data." .. name)
  end
  local mp = torch.multiprocessing
  own(mp, "torch.multiprocessing")
  for _, name in ipairs{"Queue", "Connection", "Process", "SpawnContext"} do
    own(mp["_" .. name], "torch.multiprocessing." .. name)
  end
  own(torch.profiler, "torch.profiler")
  for _, name in ipairs{"_Profile", "_EventList", "_Range"} do own(torch.profiler[name], "torch.profiler." .. name) end
  own(torch.nn.parallel, "nn.parallel")
  own(torch.nn.parallel.DistributedDataParallel, "nn.parallel.DistributedDataParallel")
  own(torch.utils.data.distributed, "torch.utils.data.distributed")
  own(torch.utils.data.distributed.DistributedSampler, "torch.utils.data.distributed.DistributedSampler")
  table.sort(bad)
  T.eq(bad, {}, "Lua-written functions and classes without a doc")
  T.truthy(count > 100, "walked " .. count)
  T.truthy(torch._doc[nn.Linear]:match("^nn%.Linear%(in_features, out_features"), torch._doc[nn.Linear])
  T.eq(torch._doc[nn.F.relu], torch._doc[nn.functional.relu])
end)

T.done()
