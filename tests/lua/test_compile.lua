-- torch.compile (issue 18 part 3): replays equal eager mode bit for bit (pure functions,
-- training steps with nn + optim + backward, random draws), the guards (shapes, dtypes,
-- numbers, upvalues, optimizer hyper-parameters changed by a scheduler, gradients), what
-- breaks a capture and says where, fullgraph, modules, reset, explain, stats, the errors.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn
local compiler = torch.compiler

-- Runs fn with io.stderr captured; returns fn's results and what was written.
local function capture_stderr(fn)
  local real = io.stderr
  local written = {}
  io.stderr = {write = function(self, ...)
    for _, s in ipairs({...}) do written[#written + 1] = tostring(s) end
    return self
  end}
  local ok, a, b = pcall(fn)
  io.stderr = real
  if not ok then error(a, 0) end
  return table.concat(written), a, b
end

local function stats(f) return compiler.stats(f) end

local function same_params(m1, m2)
  local p1, p2 = m1:parameters(), m2:parameters()
  T.eq(#p1, #p2)
  for i = 1, #p1 do
    T.truthy(torch.equal(p1[i], p2[i]), "parameter " .. i)
    T.eq(p1[i].grad == nil, p2[i].grad == nil, "grad presence " .. i)
    if p1[i].grad ~= nil then T.truthy(torch.equal(p1[i].grad, p2[i].grad), "grad " .. i) end
  end
end

T.test("a pure function: replays equal eager, results are new tensors", function()
  local w = torch.randn(4, 3, {dtype = torch.float64})
  local b = torch.randn(3, {dtype = torch.float64})
  local function f(x) return (x:matmul(w) + b):relu():sum(1) end
  local cf = torch.compile(f)
  local results = {}
  for i = 1, 6 do
    local x = torch.randn(5, 4, {dtype = torch.float64})
    local r = cf(x)
    T.truthy(torch.equal(r, f(x)), "call " .. i)
    results[i] = r
  end
  -- Each replay's result is its own tensor: the first is not overwritten by later calls.
  T.truthy(not torch.equal(results[1], results[2]))
  local s = stats(cf)
  T.eq(s.recordings, 1)
  T.eq(s.replays, 5)
  T.eq(s.variants, 1)
  T.eq(s.eager, false)
end)

T.test("tensors made from Lua values inside the function (torch.tensor) replay as the recording's constants", function()
  local scale = {1.5, -2}
  local cf = torch.compile(function(x, k)
    local w = torch.tensor({{scale[1], 0}, {0, scale[2]}})
    local idx = torch.tensor({2, 1, k})
    return (x:matmul(w)):index_select(1, idx) + torch.tensor(k, {dtype = torch.float32})
  end, {fullgraph = true})
  local x = torch.arange(1, 7):float():reshape(3, 2)
  local function eager(k) return x:matmul(torch.tensor({{scale[1], 0}, {0, scale[2]}})):index_select(1, torch.tensor({2, 1, k})) + k end
  for _, k in ipairs({3, 3, 1, 3, 1}) do T.truthy(torch.equal(cf(x, k), eager(k)), "k = " .. k) end
  T.eq({stats(cf).recordings, stats(cf).replays}, {2, 3})  -- k is guarded: one variant per value
  scale[2] = 4  -- a guarded upvalue's value: recorded anew
  T.truthy(torch.equal(cf(x, 3), eager(3)))
  T.eq(stats(cf).recordings, 3)
end)

T.test("guards: a new shape, dtype or number records a new variant", function()
  local function f(x, k) return x * k + 1 end
  local cf = torch.compile(f)
  local x3, x4 = torch.randn(3), torch.randn(4)
  T.truthy(torch.equal(cf(x3, 2), f(x3, 2)))
  T.truthy(torch.equal(cf(x3, 2), f(x3, 2)))
  T.truthy(torch.equal(cf(x4, 2), f(x4, 2)))
  T.truthy(torch.equal(cf(x3, 3), f(x3, 3)))
  T.truthy(torch.equal(cf(x3, 3.5), f(x3, 3.5)))
  local xd = torch.randn(3, {dtype = torch.float64})
  T.truthy(torch.equal(cf(xd, 2), f(xd, 2)))
  T.truthy(torch.equal(cf(x4, 2), f(x4, 2)))
  local s = stats(cf)
  T.eq(s.variants, 5)
  T.eq(s.replays, 2)
end)

T.test("guards: a NumPy array and a tensor of the same dtype and shape are different variants", function()
  local np = require "numpy"
  local f = function(x) return x / 2 end
  local cf = torch.compile(f)
  local t = torch.tensor({1, 2, 3}, {dtype = "int32"})
  local n = np.array({1, 2, 3}, {dtype = "int32"})
  for _ = 1, 2 do
    T.eq(cf(t).dtype, f(t).dtype)
    T.eq(cf(n).dtype, f(n).dtype)
    T.truthy(torch.equal(cf(n), f(n)))
  end
  T.eq(stats(cf).variants, 2)
end)

T.test("guards: an upvalue's number or tensor changed between calls is seen", function()
  local scale = 2
  local w = torch.ones(3)
  local cf = torch.compile(function(x) return x * scale + w end)
  local x = torch.arange(3, {dtype = torch.float32})
  T.truthy(torch.equal(cf(x), x * 2 + 1))
  T.truthy(torch.equal(cf(x), x * 2 + 1))
  scale = 5
  T.truthy(torch.equal(cf(x), x * 5 + 1))
  w:fill_(7)  -- the same tensor, new contents: the replay reads them
  T.truthy(torch.equal(cf(x), x * 5 + 7))
  w = torch.zeros(3)  -- another tensor
  T.truthy(torch.equal(cf(x), x * 5))
  local s = stats(cf)
  T.eq(s.recordings, 3)
  T.eq(s.replays, 2)
end)

-- The guard compares each kind of value by what tells it apart (bindings/bind_compile.cpp,
-- Guard): every change below is seen, so each call gives eager mode's result.
T.test("guards: every kind of reached value, changed between calls, is seen", function()
  local st = {n = 2, f = 0.5, s = "add", b = true, t = torch.ones(3), sub = {k = 1}, fn = function(v) return v end}
  local function eager()
    local y = st.fn(st.t * st.n + st.f)
    if st.s == "add" then y = y + st.sub.k else y = y - st.sub.k end
    if st.b then y = y * 2 end
    if st.extra then y = y + st.extra end
    if getmetatable(st.sub) then y = y + getmetatable(st.sub).bonus end
    for k, v in pairs(st.sub) do if k ~= "k" then y = y + v end end
    return y
  end
  local cf = torch.compile(eager)
  local limit = torch._dynamo.config.cache_size_limit
  torch._dynamo.config.cache_size_limit = 64  -- a variant per change
  local calls = 0
  local function check(what)
    for _ = 1, 2 do
      calls = calls + 1
      T.truthy(torch.equal(cf(), eager()), what)
    end
  end
  check("start")
  st.n = 3; check("integer")
  st.n = 3.0; check("integer to the same float")
  st.f = 0.25; check("float")
  st.s = "sub"; check("string")
  st.s = ("su" .. "b"):upper():lower(); check("an equal string made anew")
  st.b = false; check("boolean")
  st.extra = 4; check("a key added")
  st.extra = nil; check("a key removed")
  st.sub = {k = 1}; check("a table replaced by an equal one")
  st.sub.k = 10; check("a nested value")
  st.sub.more = 100; check("a nested key added")
  setmetatable(st.sub, {bonus = 1000}); check("a metatable set")
  getmetatable(st.sub).bonus = 2000; check("a metatable's field")
  st.fn = function(v) return v * 0 + 1 end; check("a function replaced")
  st.fn = math.abs ~= nil and torch.neg or st.fn; check("a library function")
  st.t = torch.full({3}, 2.0); check("a tensor replaced")
  st.t = st.t:view(3, 1):view(3); check("a view of the same memory")
  st.t = st.t:double(); check("a dtype")
  st.t.requires_grad = true; check("requires_grad")
  torch._dynamo.config.cache_size_limit = limit
  local s = stats(cf)
  T.eq(s.recordings + s.replays, calls)
  T.truthy(s.replays >= 18, "replays " .. s.replays)
end)

T.test("guards: a script's own module and a module's shared metatable are user state", function()
  -- A module a script loads with require is walked like any table (only tide's own modules
  -- and the standard libraries are compared by identity).
  package.preload["test_compile_cfg"] = function() return {scale = 2} end
  local cfg = require("test_compile_cfg")
  local x = torch.arange(1, 5):double()
  local function f() return x * cfg.scale end
  local cf = torch.compile(f)
  for _ = 1, 2 do T.truthy(torch.equal(cf(), f())) end
  cfg.scale = 10
  for _ = 1, 2 do T.truthy(torch.equal(cf(), f()), "module field changed") end
  package.loaded["test_compile_cfg"], package.preload["test_compile_cfg"] = nil, nil
  -- The metatable nn modules share, patched by a script, is seen.
  local model = nn.Linear(4, 2):double()
  local xm = x:reshape(1, 4)
  local function g() return torch.no_grad(function() return model(xm) end) end
  local cg = torch.compile(g)
  for _ = 1, 2 do T.truthy(torch.equal(cg(), g())) end
  local Instance = getmetatable(model)
  local call = Instance.__call
  Instance.__call = function(self, ...) return call(self, ...) * 0 end
  local ok, err = pcall(function()
    for _ = 1, 2 do T.truthy(torch.equal(cg(), g()), "shared metatable patched") end
    T.truthy(torch.equal(cg(), torch.zeros(1, 2, {dtype = "float64"})))
  end)
  Instance.__call = call
  if not ok then error(err, 0) end
end)

-- Functions that reach the globals (_ENV): the guard watches the names each function uses,
-- in it, in the functions it defines and in the functions it reaches; the whole table when a
-- function uses _ENV itself as a value or the table has a metatable.
T.test("guards: globals a function names are watched, the rest of _ENV is not", function()
  local chunk = [[
    helper_scale = 2
    local function helper(x) return x * helper_scale end
    return function(x)
      local inner = function(v) return v + g_offset end
      g_unused_by_f = nil
      return inner(helper(x))
    end,
    function(x) return x + rawget(_ENV, "g_offset") end,
    function(x) g_counter = g_counter + 1; return x + 1 end
  ]]
  local genv = {rawget = rawget, g_offset = 1, g_counter = 0}
  local f, g, h = load(chunk, "=globals", "t", genv)()
  local x = torch.arange(3, {dtype = torch.float32})
  local cf = torch.compile(f)
  T.truthy(torch.equal(cf(x), x * 2 + 1))
  T.truthy(torch.equal(cf(x), x * 2 + 1))
  genv.g_other = 5  -- a name no function uses: still a replay
  T.truthy(torch.equal(cf(x), x * 2 + 1))
  T.eq(stats(cf).recordings, 1)
  T.eq(stats(cf).replays, 2)
  genv.g_offset = 10  -- read by the function f defines
  T.truthy(torch.equal(cf(x), x * 2 + 10))
  genv.helper_scale = 3  -- read by the upvalue helper
  T.truthy(torch.equal(cf(x), x * 3 + 10))
  genv.g_unused_by_f = 1  -- written by f: the write is part of the call, which records again
  T.truthy(torch.equal(cf(x), x * 3 + 10))
  T.eq(genv.g_unused_by_f, nil)
  T.eq(stats(cf).recordings, 4)
  T.truthy(torch.equal(cf(x), x * 3 + 10))
  T.eq(stats(cf).replays, 3)
  -- _ENV used as a value: every global is watched.
  local cg = torch.compile(g)
  genv.g_offset = 1
  T.truthy(torch.equal(cg(x), x + 1))
  T.truthy(torch.equal(cg(x), x + 1))
  genv.g_other = 6
  T.truthy(torch.equal(cg(x), x + 1))
  genv.g_offset = 4
  T.truthy(torch.equal(cg(x), x + 4))
  T.eq(stats(cg).recordings, 3)
  -- A global written on every call is Lua state the call changes.
  local ch = torch.compile(h)
  local msg = capture_stderr(function() for _ = 1, 5 do ch(x) end end)
  T.eq(genv.g_counter, 5)
  T.truthy(stats(ch).eager, msg)
  T.truthy(msg:find("changes Lua state", 1, true), msg)
  -- A global function that reads globals itself: its names are watched too (the walk nests).
  local chunk2 = [[
    function g_helper() return g_scale end
    function g_helper2() return g_helper() + g_bias end
    return function(x) return x * g_helper2() end
  ]]
  local genv2 = {g_scale = 2, g_bias = 1}
  local fn2 = load(chunk2, "=globals2", "t", genv2)()
  local c2 = torch.compile(fn2)
  for _ = 1, 2 do T.truthy(torch.equal(c2(x), x * 3)) end
  genv2.g_scale = 5
  T.truthy(torch.equal(c2(x), x * 6))
  genv2.g_bias = 0
  T.truthy(torch.equal(c2(x), x * 5))
  T.eq({stats(c2).recordings, stats(c2).replays}, {3, 1})
  -- Names that reach every global (load, package, _G, ...) make the whole table watched.
  local escapes = {
    function(t) return t * load("return g_hidden_test")() end,
    function(t) return t * package.loaded._G.g_hidden_test end,
    function(t) return t * _G.g_hidden_test end,
  }
  for i, fn in ipairs(escapes) do
    g_hidden_test = 2
    local c = torch.compile(fn)
    for _ = 1, 2 do T.truthy(torch.equal(c(x), x * 2), "escape " .. i) end
    g_hidden_test = 7
    T.truthy(torch.equal(c(x), x * 7), "escape " .. i)
    T.eq(stats(c).recordings, 2, "escape " .. i)
  end
  g_hidden_test = nil
  -- A global table with a metatable: its __index could read any field, so all are watched.
  local menv = setmetatable({g_offset = 2}, {__index = {g_base = 0}})
  local fm = load("return function(x) return x + g_offset end", "=meta", "t", menv)()
  local cm = torch.compile(fm)
  T.truthy(torch.equal(cm(x), x + 2))
  T.truthy(torch.equal(cm(x), x + 2))
  menv.g_other = 1
  T.truthy(torch.equal(cm(x), x + 2))
  T.eq(stats(cm).recordings, 2)
  T.eq(stats(cm).replays, 1)
end)

-- Linear regression as PyTorch's tutorials write it: nn.Linear, MSELoss, SGD.
local function linreg(momentum)
  torch.manual_seed(3)
  local model = nn.Linear(6, 1)
  local opt = torch.optim.SGD(model:parameters(), {lr = 0.02, momentum = momentum})
  local loss_fn = nn.MSELoss()
  local function step(x, y)
    opt:zero_grad()
    local loss = loss_fn(model(x), y)
    loss:backward()
    opt:step()
    return loss:detach()
  end
  return model, step, opt
end

local function batches(n, din, dout, dtype)
  torch.manual_seed(11)
  local xs, ys = {}, {}
  for i = 1, n do
    xs[i] = torch.randn({16, din}, {dtype = dtype or torch.float32})
    ys[i] = torch.randn({16, dout}, {dtype = dtype or torch.float32})
  end
  return xs, ys
end

T.test("linear regression (nn.Linear + MSELoss + SGD): compiled equals eager bit for bit", function()
  for _, momentum in ipairs({0, 0.9}) do
    local xs, ys = batches(20, 6, 1)
    local m1, s1 = linreg(momentum)
    local m2, s2 = linreg(momentum)
    local cs2 = torch.compile(s2)
    for i = 1, 20 do
      T.truthy(torch.equal(s1(xs[i], ys[i]), cs2(xs[i], ys[i])), "loss at step " .. i)
    end
    same_params(m1, m2)
    T.truthy(stats(cs2).replays >= 17, "replays " .. stats(cs2).replays)
  end
end)

T.test("the two-layer network: compiled equals eager in float32 and float64", function()
  for _, dtype in ipairs({torch.float32, torch.float64}) do
    local function make()
      torch.manual_seed(5)
      local model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4)):to(dtype)
      local opt = torch.optim.SGD(model:parameters(), {lr = 0.05})
      local loss_fn = nn.CrossEntropyLoss()
      return model, function(x, y)
        local loss = loss_fn(model(x), y)
        opt:zero_grad()
        loss:backward()
        opt:step()
        return loss:detach()
      end
    end
    torch.manual_seed(2)
    local xs, ys = {}, {}
    for i = 1, 15 do xs[i] = torch.randn(8, 10, {dtype = dtype}); ys[i] = torch.randint(1, 5, {8}) end
    local m1, s1 = make()
    local m2, s2 = make()
    local cs2 = torch.compile(s2)
    local out = capture_stderr(function()
      for i = 1, 15 do T.truthy(torch.equal(s1(xs[i], ys[i]), cs2(xs[i], ys[i])), "step " .. i) end
    end)
    same_params(m1, m2)
    local s = stats(cs2)
    T.eq(s.eager, false, tostring(s.reason) .. out)
    T.truthy(s.replays >= 12, "replays " .. s.replays)
  end
end)

T.test("gradients: the .grad a replay's backward makes is the tensor the parameter shows", function()
  local w = torch.randn(3, {requires_grad = true})
  local function f(x)
    w.grad = nil
    local loss = (w * x):sum()
    loss:backward()
    return loss:detach()
  end
  local cf = torch.compile(f)
  for i = 1, 4 do
    local x = torch.full({3}, i)
    cf(x)
    T.truthy(torch.equal(w.grad, x), "grad after call " .. i)
  end
  T.truthy(stats(cf).replays >= 2)
  -- Accumulation (no reset): replays add into the same gradient.
  local v = torch.zeros(2, {requires_grad = true})
  local acc = torch.compile(function(x) (v * x):sum():backward() end)
  for _ = 1, 5 do acc(torch.ones(2)) end
  T.truthy(torch.equal(v.grad, torch.full({2}, 5.0)))
  T.truthy(stats(acc).replays >= 3)
end)

T.test("random draws continue the generator as eagerly: dropout in a compiled step", function()
  local function make()
    local drop = nn.Dropout(0.5)
    return function(x) return drop(x) * 2 + torch.rand(x.shape) end
  end
  local x = torch.ones(64)
  torch.manual_seed(9)
  local f = make()
  local eager = {}
  for i = 1, 5 do eager[i] = f(x) end
  local after_eager = torch.rand(1)
  torch.manual_seed(9)
  local cf = torch.compile(make())
  for i = 1, 5 do T.truthy(torch.equal(cf(x), eager[i]), "call " .. i) end
  T.truthy(torch.equal(torch.rand(1), after_eager), "the generator stands where eager mode left it")
  T.truthy(stats(cf).replays >= 3)
end)

T.test("a learning-rate scheduler between steps is seen by the guard", function()
  local xs, ys = batches(12, 6, 1)
  local function run(compile)
    local model, step, opt = linreg(0)
    local sched = torch.optim.lr_scheduler.StepLR(opt, {step_size = 4, gamma = 0.5})
    if compile then step = torch.compile(step) end
    local losses = {}
    for i = 1, 12 do
      losses[i] = step(xs[i], ys[i])
      sched:step()
    end
    return model, losses, step
  end
  local m1, l1 = run(false)
  local m2, l2, cs = run(true)
  for i = 1, 12 do T.truthy(torch.equal(l1[i], l2[i]), "step " .. i) end
  same_params(m1, m2)
  T.truthy(stats(cs).variants >= 3, "one variant per learning rate")
end)

T.test("breaks: values read into Lua, printing, C functions with effects; one message naming the line", function()
  local x = torch.randn(4)
  local cases = {
    {function(t) return t:sum():item() end, "item: reads or writes tensor data on the host"},
    {function(t) return t:tolist() end, "tolist"},
    {function(t) io.write(""); return t + 1 end, "calls write"},
    {function(t) return t * math.random() end, "calls random"},
    {function(t) if t:sum():gt(0):item() then return t end return -t end, "item"},
  }
  -- A hook the engine calls (its upvalues are not the function's).
  local seen = 0
  local hw = torch.ones(4, {requires_grad = true})
  hw:register_hook(function(g) seen = seen + 1 end)
  cases[#cases + 1] = {function(t) (hw * t):sum():backward(); return t + 0 end, "runs a Lua function from the engine"}
  -- A generator of the script's own: replays continue the default one.
  local gen = torch.Generator():manual_seed(3)
  cases[#cases + 1] = {function(t) return t + torch.rand({4}, {generator = gen}) end, "torch.Generator"}
  -- Boolean-mask indexing reads the mask to size its result: the break names the indexing.
  cases[#cases + 1] = {function(t) return t[t:gt(0)] end, "index: reads or writes tensor data on the host"}
  cases[#cases + 1] = {function(t) local _ = tostring(t); return t + 1 end, "tostring: reads or writes tensor data"}
  for i, c in ipairs(cases) do
    local cf = torch.compile(c[1])
    local out
    out = capture_stderr(function()
      for _ = 1, 3 do
        local a, b = cf(x), c[1](x)
        if type(a) == "table" then T.eq(a, b) elseif torch.is_tensor(a) and i ~= 4 and i ~= 7 then T.truthy(torch.equal(a, b)) end
      end
    end)
    local s = stats(cf)
    T.eq(s.eager, true, "case " .. i)
    T.truthy(s.reason:find(c[2], 1, true), "case " .. i .. ": " .. s.reason)
    T.truthy(s.reason:find("test_compile.lua:", 1, true), "names the line: " .. s.reason)
    local _, count = out:gsub("runs eagerly", "")
    T.eq(count, 1, "one message: " .. out)
  end
end)

T.test("ranges and identities made inside the function (arange, linspace, eye) replay", function()
  local cf = torch.compile(function(x)
    return x + torch.arange(4) + torch.linspace(0, 1, 4) + torch.eye(4)[{{}, 2}] * torch.arange(0.5, 2.5, 0.5)
  end, {fullgraph = true})
  for i = 1, 3 do
    local x = torch.full({4}, i)
    T.truthy(torch.equal(cf(x), x + torch.arange(4) + torch.linspace(0, 1, 4) + torch.eye(4)[{{}, 2}] * torch.arange(0.5, 2.5, 0.5)))
  end
  T.eq({stats(cf).recordings, stats(cf).replays}, {1, 2})
end)

T.test("fullgraph=true: a break is an error naming it", function()
  local cf = torch.compile(function(t) return t:sum():item() end, {fullgraph = true})
  T.error(function() cf(torch.ones(2)) end, "cannot be captured: item")
end)

T.test("arguments and results a replay cannot reproduce run eagerly", function()
  local cases = {
    {function(t) return t[1] + 1 end, {{torch.ones(2)}}, "argument 1 is a table"},
    {function(t) return t * 2 end, {torch.ones(2, {requires_grad = true})}, "requires grad"},
    {function(t) t:add_(1); return t end, {torch.ones(2)}, "modifies a tensor argument in place"},
    {function(t) return {t + 1} end, {torch.ones(2)}, "result 1 is a table"},
  }
  for i, c in ipairs(cases) do
    local cf = torch.compile(c[1])
    capture_stderr(function() cf(table.unpack(c[2])) end)
    local s = stats(cf)
    T.eq(s.eager, true, "case " .. i)
    T.truthy(s.reason:find(c[3], 1, true), "case " .. i .. ": " .. tostring(s.reason))
  end
  -- The in-place write reached the caller's tensor, as eagerly.
  local t = torch.ones(2)
  local cf = torch.compile(function(u) u:mul_(3); return u end)
  capture_stderr(function() T.eq(cf(t), t) end)
  T.truthy(torch.equal(t, torch.full({2}, 3.0)))
  -- A result that needs grad, its backward left to the caller: the recorded backward runs
  -- (torch.compile(model) in a training loop has its own test below).
  local w = torch.ones(2, {requires_grad = true})
  local fw = torch.compile(function(u) return (w * u):sum() end, {fullgraph = true})
  for k = 1, 3 do fw(torch.full({2}, k)):backward() end
  T.truthy(torch.equal(w.grad, torch.full({2}, 6.0)))
  T.eq({stats(fw).recordings, stats(fw).replays}, {2, 1})  -- w.grad appears after the first call: a new variant
end)

T.test("a loss returned after loss:backward() replays: copies that require grad and share the used-up history", function()
  local function make()
    torch.manual_seed(5)
    local model = nn.Linear(3, 1)
    local opt = torch.optim.SGD(model:parameters(), {lr = 0.1})
    return model, function(x, y)
      opt:zero_grad()
      local loss = nn.functional.mse_loss(model(x), y)
      loss:backward()
      opt:step()
      return loss, loss * 2  -- the second was made after backward: its history is not used up
    end, function(x, y)
      opt:zero_grad()
      local out = model(x)
      local loss = nn.functional.mse_loss(out, y)
      loss:backward()
      opt:step()
      return loss, out
    end
  end
  local m1, _, s1 = make()
  local m2, _, s2 = make()
  local cs2 = torch.compile(s2, {fullgraph = true})
  local seen = {}
  for i = 1, 5 do
    local x, y = torch.full({4, 3}, i / 5), torch.full({4, 1}, 1.0)
    local l1, o1 = s1(x, y)
    local l2, o2 = cs2(x, y)
    T.truthy(torch.equal(l1, l2) and torch.equal(o1, o2), "step " .. i)
    for _, pair in ipairs({{l1, l2}, {o1, o2}}) do
      local e, c = pair[1], pair[2]
      T.eq({c.requires_grad, c.grad_fn ~= nil, c.is_leaf}, {true, true, false})
      T.eq(c.grad_fn, e.grad_fn)
      local eager_err = select(2, pcall(function() e:sum():backward() end))
      local compiled_err = select(2, pcall(function() c:sum():backward() end))
      T.truthy(tostring(eager_err):find("second time", 1, true), tostring(eager_err))
      T.eq(compiled_err, eager_err)
    end
    T.truthy(not seen[l2], "a new tensor on each call")
    seen[l2] = true
    T.truthy(l2:item() == l1:item())
  end
  same_params(m1, m2)
  T.eq({stats(cs2).recordings, stats(cs2).replays}, {2, 3})  -- the first step creates the state tables
  -- A result made after backward still has a live graph: the function runs eagerly.
  local _, s3 = make()
  local cs3 = torch.compile(s3)
  capture_stderr(function() for _ = 1, 3 do cs3(torch.ones(4, 3), torch.ones(4, 1)) end end)
  T.truthy(stats(cs3).reason:find("result 2 requires grad: its result's backward cannot be captured", 1, true),
           stats(cs3).reason)
end)

T.test("Lua state the function changes on every call: recorded three times, then eager", function()
  local calls = 0
  local cf = torch.compile(function(t) calls = calls + 1; return t + calls end)
  local out = capture_stderr(function()
    for i = 1, 6 do T.truthy(torch.equal(cf(torch.zeros(1)), torch.full({1}, i))) end
  end)
  T.eq(calls, 6)
  local s = stats(cf)
  T.eq(s.eager, true)
  T.eq(s.recordings, 3)
  T.truthy(s.reason:find("changes Lua state", 1, true))
  T.truthy(out:find("runs eagerly", 1, true))
end)

T.test("results: an argument returned is the caller's tensor; a reached tensor is itself", function()
  local w = torch.ones(2)
  local cf = torch.compile(function(x, y) return x, w, y * 2, 7, "s" end)
  for _ = 1, 3 do
    local x, y = torch.zeros(2), torch.ones(2)
    local a, b, c, d, e = cf(x, y)
    T.eq(a, x)
    T.eq(b, w)
    T.truthy(torch.equal(c, torch.full({2}, 2.0)))
    T.eq(d, 7)
    T.eq(e, "s")
  end
  T.eq(stats(cf).replays, 2)
end)

-- Results that share memory: a replay's copy would not, so such a function runs eagerly
-- (each call then gives eager mode's aliasing); the same result twice is one tensor twice.
T.test("results: the same tensor twice, and views of a result, a reached tensor or an argument alias as eagerly", function()
  local dup = torch.compile(function(x) local y = x * 2 return y, y end)
  for _ = 1, 3 do
    local p, q = dup(torch.ones(2))
    T.truthy(rawequal(p, q))
  end
  T.eq(stats(dup).replays, 2)
  local w = torch.arange(1, 7):double()
  local cases = {
    {function(x) local y = x * 2 return y, y:view(2, 3) end, "shares memory with result 2"},
    {function(x) return w:view(2, 3), x + 1 end, "shares memory with a tensor the function reaches"},
    {function(x) return x[1], x:sum() end, "shares memory with argument 1"},
  }
  for k, case in ipairs(cases) do
    local cf = torch.compile(case[1])
    local xc, xe = torch.zeros(3, 2), torch.zeros(3, 2)
    local w0 = w:clone()
    local err = capture_stderr(function()
      for _ = 1, 3 do
        local a, b = cf(xc)
        a:add_(1)
        T.truthy(torch.equal(b, b), "case " .. k)
      end
    end)
    T.truthy(err:find(case[2], 1, true), err)
    -- eagerly the same three calls
    local wc = w:clone()
    w:copy_(w0)
    for _ = 1, 3 do local a = case[1](xe) a:add_(1) end
    T.truthy(torch.equal(xc, xe), "case " .. k .. ": the argument as eagerly")
    T.truthy(torch.equal(wc, w), "case " .. k .. ": the reached tensor as eagerly")
  end
  -- A view of a contiguous argument on the recording call is that view of the caller's tensor.
  local x = torch.zeros(2, 3)
  local cv = torch.compile(function(t) return t[2] end)
  capture_stderr(function() cv(x):fill_(5) end)
  T.truthy(torch.equal(x[2], torch.full({3}, 5.0)))
end)

T.test("torch.compile(module): compiled calls; reads and writes reach the module", function()
  torch.manual_seed(1)
  local model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
  local cm = torch.compile(model)
  T.truthy(rawequal(cm._orig_mod, model))
  T.eq(#cm:parameters(), 4)
  local x = torch.randn(3, 4)
  torch.no_grad(function()
    for _ = 1, 4 do T.truthy(torch.equal(cm(x), model(x))) end
  end)
  T.eq(compiler.stats(cm).replays, 3)
  cm:eval()
  T.eq(model.training, false)
  T.truthy(tostring(cm):find("OptimizedModule", 1, true))
end)

T.test("reset, cache_size_limit, nested compiled calls, disable", function()
  local cf = torch.compile(function(x) return x + 1 end)
  cf(torch.ones(1)); cf(torch.ones(1))
  compiler.reset()
  cf(torch.ones(1))
  T.eq(stats(cf).recordings, 2)
  local limit = torch._dynamo.config.cache_size_limit
  torch._dynamo.config.cache_size_limit = 2
  local g = torch.compile(function(x) return x * 2 end)
  local out = capture_stderr(function()
    for n = 1, 4 do T.truthy(torch.equal(g(torch.ones(n)), torch.full({n}, 2.0))) end
  end)
  T.truthy(stats(g).reason:find("cache_size_limit (2) variants recorded, 0 replays for 2 recordings", 1, true), out)
  -- While replays pay for the recordings, the least recently used variant makes room: a
  -- learning rate changed every 10 steps (a scheduler), with a cache of two variants.
  local w = torch.ones(3)
  local lr = 0.5
  local step = torch.compile(function(x) w:sub_(x * lr); return w:sum() end)
  local w_eager = torch.ones(3)
  for i = 1, 60 do
    if i % 10 == 1 then lr = lr / 2 end
    local x = torch.full({3}, i / 60)
    local got = step(x)
    w_eager:sub_(x * lr)
    T.truthy(torch.equal(got, w_eager:sum()), "step " .. i)
  end
  local st = stats(step)
  torch._dynamo.config.cache_size_limit = limit
  T.eq({st.eager, st.recordings, st.replays, st.variants}, {false, 6, 54, 2})
  local inner = torch.compile(function(x) return x * 3 end)
  local outer = torch.compile(function(x) return inner(x) + 1 end)
  for _ = 1, 3 do T.truthy(torch.equal(outer(torch.ones(2)), torch.full({2}, 4.0))) end
  T.eq(stats(outer).replays, 2)
  local f = function(x) return x end
  T.eq(torch.compile(f, {disable = true}), f)
end)

T.test("explain: ops, buffers, guards, and the break reasons", function()
  local w = torch.randn(3, 3)
  local r = torch._dynamo.explain(function(x) return (x:matmul(w)):relu():sum() end)(torch.randn(2, 3))
  T.eq(r.graph_count, 1)
  T.eq(r.graph_break_count, 0)
  T.eq(r.op_count, 3)
  T.eq(r.ops, {"matmul:matmul", "relu:unary", "sum:reduce"})
  T.truthy(r.buffers >= 2)
  T.eq(r.guarded_tensors, 1)
  T.truthy(tostring(r):find("Graph Count: 1", 1, true))
  -- CPU work replays step by step; only a device with graphs (CUDA) replays as one graph.
  T.eq({r.cuda_graph, r.cuda_graph_reason}, {false, "matmul runs on cpu, which has no graphs"})
  T.truthy(tostring(r):find("CUDA graph: no (matmul runs on cpu", 1, true))
  local b = torch._dynamo.explain(function(x) return x:sum():item() end)(torch.ones(2))
  T.eq(b.graph_break_count, 1)
  T.truthy(b.break_reasons[1]:find("item", 1, true))
end)

T.test("fusion: long pointwise chains replay chunk by chunk, equal to eager; the profiler shows the groups", function()
  torch.manual_seed(6)
  local n = 3000000
  local a, b, c = torch.rand(n), torch.rand(n), torch.rand(n)
  local function f() return (a * b + c):relu():sub(0.5) end
  local cf = torch.compile(f)
  for _ = 1, 3 do T.truthy(torch.equal(cf(), f())) end
  local r = torch._dynamo.explain(f)()
  T.eq(r.fused_groups, {{"mul:binary", "add:binary", "relu:unary", "sub:binary", scratch = 3, outputs = 1}})
  local prof = torch.profiler.profile(function() cf() end)
  local names = {}
  for _, e in ipairs(prof:events()) do names[#names + 1] = e.name end
  T.truthy(table.concat(names, " "):find("compiled:fused(mul, add, relu, sub)", 1, true), table.concat(names, " "))
  -- An in-place write that reads its own tensor shifted is not fused with it (the shifted read
  -- goes through a copy, and the write's addresses differ from the earlier step's).
  local function g()
    local y = a * 2
    y[{{2, n}}]:add_(y[{{1, n - 1}}])
    return y:relu()
  end
  local cg = torch.compile(g)
  for _ = 1, 3 do T.truthy(torch.equal(cg(), g())) end
  T.truthy(stats(cg).replays == 2)
  -- Small chains fuse too (one chunk: the group saves the steps' dispatch).
  T.eq(torch._dynamo.explain(function() return (a[{{1, 1000}}] * 2):relu() end)().fused_groups,
       {{"mul:binary", "relu:unary", scratch = 1, outputs = 1}})
end)

T.test("hostile uses: errors inside a replay, C functions, recursion, coroutines, huge state", function()
  -- A check inside a replayed kernel still raises (a class index out of range).
  local logits = torch.randn(4, 3)
  local ce = torch.compile(function(t) return torch.nn.functional.cross_entropy(logits, t) end)
  local ok_t = torch.tensor({1, 2, 3, 1})
  T.truthy(torch.equal(ce(ok_t), torch.nn.functional.cross_entropy(logits, ok_t)))
  T.truthy(torch.equal(ce(ok_t), torch.nn.functional.cross_entropy(logits, ok_t)))
  T.error(function() ce(torch.tensor({1, 2, 9, 1})) end, "cross_entropy: target 9 is out of range for 3 classes")
  T.truthy(torch.equal(ce(ok_t), torch.nn.functional.cross_entropy(logits, ok_t)))
  T.eq(stats(ce).replays, 2)  -- (the failing call raised inside its replay)
  -- A built-in compiled directly.
  local relu = torch.compile(torch.relu)
  local x = torch.randn(5)
  for _ = 1, 3 do T.truthy(torch.equal(relu(x), torch.relu(x))) end
  -- A compiled function that calls itself runs the inner call eagerly.
  local fact
  fact = torch.compile(function(t, n) if n == 0 then return t end return fact(t * n, n - 1) end)
  for _ = 1, 3 do T.truthy(torch.equal(fact(torch.ones(2), 4), torch.full({2}, 24.0))) end
  -- Called from a coroutine; a coroutine inside is a break.
  local co = coroutine.wrap(function()
    local f = torch.compile(function(t) return t + 1 end)
    for _ = 1, 3 do coroutine.yield(f(torch.zeros(1))) end
  end)
  for _ = 1, 3 do T.truthy(torch.equal(co(), torch.ones(1))) end
  local inner = torch.compile(function(t)
    local g = coroutine.wrap(function() coroutine.yield(t * 2) end)
    return g()
  end)
  capture_stderr(function() for _ = 1, 2 do T.truthy(torch.equal(inner(torch.ones(1)), torch.full({1}, 2.0))) end end)
  T.eq(stats(inner).eager, true)
  -- A function reaching a large Lua data set stays eager, saying why.
  local big = {}
  for i = 1, 30000 do big[i] = i end
  local fb = torch.compile(function(t) return t + #big end)
  capture_stderr(function() T.truthy(torch.equal(fb(torch.zeros(1)), torch.full({1}, 30000.0))) end)
  T.truthy(stats(fb).reason:find("more than 20000 Lua values", 1, true))
  -- Deeply nested tables likewise.
  local deep = {}
  local node = deep
  for _ = 1, 500 do node.next = {}; node = node.next end
  local fd = torch.compile(function(t) return deep.next and t or -t end)
  capture_stderr(function() fd(torch.ones(1)) end)
  T.eq(stats(fd).eager, true)
end)

T.test("errors name the op and the offending value", function()
  T.error(function() torch.compile(5) end, "torch.compile: expected a function or an nn.Module, got a number")
  T.error(function() torch.compile(torch.ones(1)) end, "got a tensor")
  T.error(function() torch.compile(function() end, {mode = "max-autotune"}) end, "unknown keyword 'mode'")
  T.error(function() torch.compile(function() end, {fullgraph = 1}) end, "fullgraph must be a boolean, got a number")
  T.error(function() torch.compile(function() end, 3) end, "options must be a keyword table")
  T.error(function() compiler.stats(print) end, "stats expects a function torch.compile returned")
  T.error(function() compiler.reset(1) end, "reset takes no arguments")
  T.error(function() torch._dynamo.explain(3) end, "explain expects a function")
  -- An error inside the function reaches the caller; the next call records again.
  local n = 0
  local cf = torch.compile(function(x) n = n + 1; if n == 1 then error("boom") end return x end)
  T.error(function() cf(torch.ones(1)) end, "boom")
  T.truthy(torch.equal(cf(torch.ones(1)), torch.ones(1)))
end)

-- Runs the repository's script at `path` (from the root) with `args`; returns what it printed.
local function run_script(path, args)
  local root = (arg[0]:match("(.*/)") or "./") .. "../../"
  local cmd = table.concat({T.quote(T.interpreter()), T.quote(root .. path), args}, " ")
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  T.truthy(ok, cmd .. ": " .. out)
  return out
end

T.test("the training scripts with --compile 1 print what they print eagerly, with every step replayed", function()
  local function run(script, args) return run_script("scripts/" .. script, args) end
  for _, case in ipairs({
    {"linear_regression.lua", "--epochs 300"},
    {"two_layer_autograd.lua", "--steps 60 --print-every 10"},
    {"two_layer_nn.lua", "--steps 60 --print-every 10"},
    {"two_layer_nn.lua", "--steps 30 --print-every 10 --dtype float32"},
  }) do
    local eager = run(case[1], case[2])
    local compiled = run(case[1], case[2] .. " --compile 1")
    T.eq(compiled, eager, case[1] .. " " .. case[2])
    T.truthy(not compiled:find("runs eagerly", 1, true))
    T.truthy(#eager > 40, eager)
  end
end)

T.test("the examples with --compile 1 (MNIST, VAE, DCGAN) print what they print eagerly, with their steps replayed", function()
  local function run(example, args) return run_script("examples/" .. example, args) end
  for _, case in ipairs({
    {"mnist_digits/main.lua", "--epochs 2", 43},  -- a new variant for each epoch's learning rate
    {"vae_digits/main.lua", "--epochs 2", 21},
    {"dcgan_digits/main.lua", "--epochs 1", 26},
  }) do
    local eager = run(case[1], case[2])
    local compiled = run(case[1], case[2] .. " --compile 1")
    local body, recordings, replays = compiled:match("^(.*)compiled: (%d+) recordings, (%d+) replays\n$")
    T.truthy(body, compiled)
    T.eq(body, eager, case[1])
    T.eq(tonumber(replays), case[3], case[1] .. ": " .. compiled)
    T.truthy(tonumber(recordings) <= 5, case[1] .. ": " .. compiled)
    T.truthy(#eager > 200, eager)
  end
end)

-- A training step of a small model with optimizer `make_opt` (a function of the parameters).
local function opt_step(make_opt)
  torch.manual_seed(4)
  local model = nn.Linear(4, 2)
  local opt = make_opt(model:parameters())
  return model, opt, function(x)
    opt:zero_grad()
    local l = model(x):pow(2):sum()
    l:backward()
    opt:step()
    return l:detach()
  end
end

T.test("Adam, AdamW, RMSprop, Adagrad and Adadelta count steps in a tensor: compiled steps replay, equal to eager bit for bit", function()
  local makers = {
    Adam = function(ps) return torch.optim.Adam(ps, {lr = 1e-2}) end,
    AdamW = function(ps) return torch.optim.AdamW(ps, {lr = 1e-2, amsgrad = true, weight_decay = 0.1}) end,
    RMSprop = function(ps) return torch.optim.RMSprop(ps, {lr = 1e-2, momentum = 0.5, centered = true}) end,
    Adagrad = function(ps) return torch.optim.Adagrad(ps, {lr = 1e-2, initial_accumulator_value = 0.1}) end,
    Adadelta = function(ps) return torch.optim.Adadelta(ps, {lr = 0.5, weight_decay = 0.01}) end,
  }
  for name, make_opt in pairs(makers) do
    local m1, o1, s1 = opt_step(make_opt)
    local m2, o2, s2 = opt_step(make_opt)
    local cs2 = torch.compile(s2, {fullgraph = true})
    for i = 1, 8 do
      local x = torch.full({3, 4}, i / 7)
      T.truthy(torch.equal(s1(x), cs2(x)), name .. " loss at step " .. i)
    end
    same_params(m1, m2)
    local st = stats(cs2)
    T.eq({st.eager, st.recordings, st.replays}, {false, 2, 6}, name)
    for k, p in ipairs(m2:parameters()) do
      local a, b = o1.state[m1:parameters()[k]], o2.state[p]
      T.eq(b.step:item(), 8, name .. " step count")
      for key, v in pairs(a) do T.truthy(torch.equal(v, b[key]), name .. " state " .. key) end
    end
  end
end)

-- Steps of model(x) -> loss with optimizer make_opt, compiled and eager from the same start:
-- every loss, parameter and gradient bit for bit, and every call after the first two replayed.
local function check_model_steps(name, make_model, make_opt, loss_of, batches)
  local function make()
    torch.manual_seed(21)
    local model = make_model()
    local opt = make_opt(model:parameters())
    return model, function(...)
      opt:zero_grad()
      local loss = loss_of(model, ...)
      loss:backward()
      opt:step()
      return loss
    end
  end
  local m1, s1 = make()
  local m2, s2 = make()
  local cs2 = torch.compile(s2, {fullgraph = true})
  for i, b in ipairs(batches) do
    torch.manual_seed(100 + i)  -- dropout draws the same in both
    local l1 = s1(table.unpack(b))
    torch.manual_seed(100 + i)
    local l2 = cs2(table.unpack(b))
    T.truthy(torch.equal(l1, l2), name .. ": loss at step " .. i .. ": " .. tostring(l1) .. " vs " .. tostring(l2))
  end
  same_params(m1, m2)
  local st = stats(cs2)
  T.eq({st.eager, st.replays}, {false, #batches - st.recordings}, name)
  T.truthy(st.recordings <= 2, name .. " recordings " .. st.recordings)
end

T.test("CNN and RNN steps compile: conv2d (batched, per-image, Winograd), pooling, dropout, batch norm, conv_transpose2d, BCE, LSTM, GRU, embedding", function()
  local function digits_batches(n, shape, classes)
    torch.manual_seed(9)
    local out = {}
    for i = 1, n do out[i] = {torch.rand(shape), torch.randint(1, classes + 1, {shape[1]})} end
    return out
  end
  -- PyTorch's MNIST example net on 8x8 inputs (batched conv path), with Adadelta.
  check_model_steps("mnist-like", function()
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Conv2d(4, 8, 3), nn.ReLU(), nn.MaxPool2d(2),
      nn.Dropout(0.25), nn.Flatten(), nn.Linear(32, 10), nn.LogSoftmax({dim = 2}))
  end, function(ps) return torch.optim.Adadelta(ps, {lr = 1.0}) end,
  function(model, x, y) return nn.functional.nll_loss(model(x), y) end, digits_batches(6, {5, 1, 8, 8}, 10))
  -- Per-image convolutions (>= 256 output positions), 3x3 (Winograd) and 5x5, in float64.
  check_model_steps("per-image conv", function()
    return nn.Sequential(nn.Conv2d(2, 3, 3, {padding = 1}), nn.Tanh(), nn.Conv2d(3, 2, 5, {padding = 2}),
      nn.AvgPool2d(4), nn.Flatten(), nn.Linear(32, 4)):double()
  end, function(ps) return torch.optim.SGD(ps, {lr = 0.1, momentum = 0.9}) end,
  function(model, x, y) return nn.functional.cross_entropy(model(x), y) end,
  (function()
    local b = digits_batches(5, {3, 2, 16, 16}, 4)
    for _, p in ipairs(b) do p[1] = p[1]:double() end
    return b
  end)())
  -- A DCGAN-like generator: conv_transpose2d, BatchNorm2d (running statistics updated),
  -- sigmoid and binary_cross_entropy, Adam.
  check_model_steps("dcgan-like", function()
    return nn.Sequential(nn.ConvTranspose2d(4, 3, 4, 2, 1, {bias = false}), nn.BatchNorm2d(3), nn.LeakyReLU(0.2),
      nn.Conv2d(3, 1, 3, {padding = 1}), nn.Sigmoid())
  end, function(ps) return torch.optim.Adam(ps, {lr = 2e-4, betas = {0.5, 0.999}}) end,
  function(model, z, target) return nn.functional.binary_cross_entropy(model(z), target) end,
  (function()
    torch.manual_seed(10)
    local b = {}
    for i = 1, 5 do b[i] = {torch.randn(2, 4, 4, 4), torch.rand(2, 1, 8, 8)} end
    return b
  end)())
  -- Recurrent layers (LSTM with two layers, GRU), their fused loops forward and backward.
  for _, kind in ipairs({"LSTM", "GRU"}) do
    check_model_steps(kind, function()
      local m = nn.Module()
      m.rnn = nn[kind](5, 4, {num_layers = 2})
      m.head = nn.Linear(4, 3)
      function m:forward(x)
        local out = self.rnn(x)
        return self.head(out)
      end
      return m
    end, function(ps) return torch.optim.RMSprop(ps, {lr = 1e-2}) end,
    function(model, x, y) return nn.functional.mse_loss(model(x), y) end,
    (function()
      torch.manual_seed(13)
      local b = {}
      for i = 1, 5 do b[i] = {torch.randn(6, 2, 5), torch.randn(6, 2, 3)} end
      return b
    end)())
  end
  -- Embedding, LayerNorm and cross_entropy with AdamW.
  check_model_steps("embedding", function()
    return nn.Sequential(nn.Embedding(12, 6), nn.LayerNorm(6), nn.Flatten(), nn.Linear(18, 12))
  end, function(ps) return torch.optim.AdamW(ps, {lr = 1e-2}) end,
  function(model, idx, y) return nn.functional.cross_entropy(model(idx), y) end,
  (function()
    torch.manual_seed(12)
    local b = {}
    for i = 1, 5 do b[i] = {torch.randint(1, 13, {4, 3}), torch.randint(1, 13, {4})} end
    return b
  end)())
end)

T.test("value checks repeat on every replay: an index or probability out of range raises as eagerly", function()
  local emb = nn.Embedding(5, 2)
  local f = torch.compile(function(idx) return emb(idx):sum():detach() end, {fullgraph = true})
  for _ = 1, 3 do f(torch.tensor({1, 5, 2})) end
  T.eq(stats(f).replays, 2)
  T.error_usable(function() f(torch.tensor({1, 6, 2})) end, "embedding: index 6 is out of range 1..5")
  T.error_usable(function() f(torch.tensor({0, 1, 2})) end, "embedding: index 0 is out of range 1..5")
  T.eq({stats(f).recordings, stats(f).eager}, {1, false})  -- the errors came from replays
  local g = torch.compile(function(p, t) return nn.functional.binary_cross_entropy(p, t) end, {fullgraph = true})
  for _ = 1, 3 do g(torch.full({3}, 0.5), torch.ones(3)) end
  T.error_usable(function() g(torch.tensor({0.5, 1.5, 0.25}), torch.ones(3)) end,
    "binary_cross_entropy: input values must be between 0 and 1, got values from 0.25 to 1.5")
  T.error_usable(function() g(torch.tensor({0.5, 0 / 0, 0.25}), torch.ones(3)) end,
    "binary_cross_entropy: input values must be between 0 and 1, got values from nan to nan")
  T.eq({stats(g).recordings, stats(g).eager}, {1, false})
  -- Advanced indexing with an index tensor argument reads the indices at replay.
  local x = torch.arange(1, 11):double()
  local h = torch.compile(function(i) return x:index_select(1, i) * 2 end, {fullgraph = true})
  for k = 1, 3 do T.truthy(torch.equal(h(torch.tensor({k, 10, 1})), torch.tensor({k, 10, 1}):double() * 2)) end
  T.error_usable(function() h(torch.tensor({1, 11, 1})) end, "index 11 is out of range for dim 1 of size 10")
end)

T.test("torch.compile(model) in an eager training loop: forward replays, and the loss's backward replays the recorded backward", function()
  local function make(kind)
    torch.manual_seed(31)
    local m = kind == "cnn"
      and nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(12, 2))
      or nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.2), nn.Linear(8, 2))
    return m, torch.optim.Adam(m:parameters(), {lr = 1e-2})
  end
  for _, kind in ipairs({"mlp", "cnn"}) do
    local m1, o1 = make(kind)
    local m2, o2 = make(kind)
    local cm = torch.compile(m2)
    for i = 1, 8 do
      local x = kind == "cnn" and torch.rand(5, 1, 4, 4) or torch.full({3, 4}, i / 8)
      local y = torch.ones(x.shape[1], 2)
      torch.manual_seed(i)
      o1:zero_grad()
      local l1 = nn.functional.mse_loss(m1(x), y)
      l1:backward()
      o1:step()
      torch.manual_seed(i)
      o2:zero_grad()
      local out = cm(x)
      T.eq({out.requires_grad, out.grad_fn}, {true, "CompiledFunctionBackward"})
      local l2 = nn.functional.mse_loss(out, y)
      l2:backward()
      o2:step()
      T.truthy(torch.equal(l1, l2), kind .. " loss at step " .. i)
    end
    same_params(m1, m2)
    T.eq({stats(cm).recordings, stats(cm).replays, stats(cm).eager}, {1, 7, false}, kind)
  end
  -- Two forwards before one backward: the first result's backward is pending, so the second
  -- call gets a variant of its own; gradients as eagerly.
  local m1 = make("mlp")
  local m2 = make("mlp")
  m1:eval(); m2:eval()
  local cm = torch.compile(m2)
  for i = 1, 4 do
    local a, b = torch.full({2, 4}, i / 4), torch.full({2, 4}, -i / 4)
    m1:zero_grad(); (m1(a):sum() + m1(b):pow(2):sum()):backward()
    m2:zero_grad(); (cm(a):sum() + cm(b):pow(2):sum()):backward()
    same_params(m1, m2)
  end
  T.eq({stats(cm).recordings, stats(cm).variants, stats(cm).replays}, {2, 2, 6})
  -- retain_graph, a second backward, create_graph, and an in-place change of a parameter.
  -- f(loss, model) on the eager model's loss and on the compiled one's.
  local function both(f)
    m1:zero_grad(); m2:zero_grad()
    local x = torch.ones(2, 4)
    local e_ok, e_err = pcall(f, m1(x):sum(), m1)
    local c_ok, c_err = pcall(f, cm(x):sum(), m2)
    return e_ok, e_err, c_ok, c_err
  end
  local e_ok, _, c_ok = both(function(l) l:backward({retain_graph = true}); l:backward() end)
  T.truthy(e_ok and c_ok)
  same_params(m1, m2)  -- gradients accumulated twice, as eagerly
  local _, e_err, _, c_err = both(function(l) l:backward(); l:backward() end)
  T.truthy(tostring(e_err):find("second time", 1, true), tostring(e_err))
  T.truthy(tostring(c_err):find("second time", 1, true), tostring(c_err))
  -- The last layer's weight is read by the backward: changed in place, an error as eagerly;
  -- the first layer's is not (its input needs no gradient): no error, the same gradients.
  _, e_err, _, c_err = both(function(l, m)
    torch.no_grad(function() m[4].weight:mul_(2) end)
    l:backward()
  end)
  T.truthy(tostring(e_err):find("modified by an in-place operation", 1, true), tostring(e_err))
  T.truthy(tostring(c_err):find("modified by an in-place operation after the call", 1, true), tostring(c_err))
  e_ok, _, c_ok = both(function(l, m)
    torch.no_grad(function() m[1].weight:mul_(0.5) end)
    l:backward()
  end)
  T.truthy(e_ok and c_ok)
  same_params(m1, m2)
  local _, _, c_ok2, c_err2 = both(function(l) torch.autograd.grad({l}, m2:parameters(), {create_graph = true}) end)
  T.eq(c_ok2, false)
  T.truthy(tostring(c_err2):find("create_graph=true through the result of a torch.compile'd function", 1, true),
           tostring(c_err2))
  -- The result's backward outlives the compiled function's recordings.
  m2:zero_grad(); m1:zero_grad()
  local out = cm(torch.ones(2, 4))
  torch.compiler.reset()
  collectgarbage(); collectgarbage()
  out:sum():backward()
  m1(torch.ones(2, 4)):sum():backward()
  same_params(m1, m2)
  -- A reached tensor that requires grad but is no leaf: such a call runs eagerly.
  local w = torch.ones(4, {requires_grad = true}) * 2
  local f = torch.compile(function(x) return x * w end)
  capture_stderr(function() f(torch.ones(4)):sum():backward() end)
  T.truthy(stats(f).reason:find("requires grad and is not a leaf", 1, true), stats(f).reason)
end)

T.test("Adamax, NAdam, RAdam and Adagrad with lr_decay compute their step sizes from the count tensor: compiled steps replay, equal to eager bit for bit", function()
  -- RAdam's rho_t passes 5 between steps 5 and 6 with beta2 0.999 and with 0.9 (checked
  -- below): ten steps take both of its branches. (tide's NAdam has no decoupled_weight_decay.)
  local makers = {
    {"Adamax", function(ps) return torch.optim.Adamax(ps, {lr = 1e-2}) end},
    {"Adamax wd, maximize", function(ps)
      return torch.optim.Adamax(ps, {lr = 1e-2, weight_decay = 0.1, maximize = true, betas = {0.8, 0.9}})
    end},
    {"NAdam", function(ps) return torch.optim.NAdam(ps, {lr = 1e-2}) end},
    {"NAdam wd", function(ps)
      return torch.optim.NAdam(ps, {lr = 1e-2, weight_decay = 0.1, momentum_decay = 0.01, betas = {0.8, 0.9}})
    end},
    {"RAdam", function(ps) return torch.optim.RAdam(ps, {lr = 1e-2}) end},
    {"RAdam wd", function(ps) return torch.optim.RAdam(ps, {lr = 1e-2, weight_decay = 0.1, betas = {0.8, 0.9}}) end},
    {"Adagrad lr_decay", function(ps) return torch.optim.Adagrad(ps, {lr = 1e-2, lr_decay = 0.1}) end},
    {"Adagrad lr_decay, wd", function(ps)
      return torch.optim.Adagrad(ps, {lr = 1e-2, lr_decay = 0.05, weight_decay = 0.1, initial_accumulator_value = 0.1})
    end},
  }
  for _, beta2 in ipairs({0.999, 0.9}) do  -- RAdam's switch falls inside the run
    local rho_inf = 2 / (1 - beta2) - 1
    local function rho_t(t) return rho_inf - 2 * t * beta2 ^ t / (1 - beta2 ^ t) end
    T.truthy(rho_t(5) <= 5 and rho_t(6) > 5, "rho_t at steps 5 and 6 with beta2 " .. beta2)
  end
  -- On the CPU and, when there is one, a CUDA device (where the count stays on the CPU).
  local runs = {{"float32", "cpu"}, {"float64", "cpu"}}
  if torch.cuda.is_available() then runs[#runs + 1] = {"float32", "cuda"} end
  for _, run in ipairs(runs) do
    local dtype, device = run[1], run[2]
    for _, c in ipairs(makers) do
      local name, make_opt = c[1] .. " " .. dtype .. " " .. device, c[2]
      local function make()  -- opt_step's model and step, in dtype on device
        torch.manual_seed(4)
        local m = nn.Linear(4, 2)
        if dtype == "float64" then m:double() end
        if device == "cuda" then m:cuda() end
        local o = make_opt(m:parameters())
        return m, o, function(x)
          o:zero_grad()
          local l = m(x):pow(2):sum()
          l:backward()
          o:step()
          return l:detach()
        end
      end
      local m1, o1, s1 = make()
      local m2, o2, s2 = make()
      same_params(m1, m2)
      local cs2 = torch.compile(s2, {fullgraph = true})
      local steps = 10
      for i = 1, steps do
        local x = (torch.full({3, 4}, i / 7, {dtype = dtype}) - torch.arange(4, {dtype = dtype}) * 0.1):to(device)
        T.truthy(torch.equal(s1(x), cs2(x)), name .. " loss at step " .. i)
        same_params(m1, m2)
      end
      local st = stats(cs2)
      -- The first call makes the state, the second records the steady step, the rest replay.
      T.eq({st.eager, st.recordings, st.replays}, {false, 2, steps - 2}, name .. " (" .. tostring(st.reason) .. ")")
      for k, p in ipairs(m2:parameters()) do
        local a, b = o1.state[m1:parameters()[k]], o2.state[p]
        T.eq(b.step:item(), steps, name .. " step count")
        for key, v in pairs(a) do T.truthy(torch.equal(v, b[key]), name .. " state " .. key) end
      end
    end
  end
end)

-- On a CUDA device (the GPU; the stand-in backend in run_all.sh): parameters, optimizer state
-- and batches on the device; the steps replay the device-table calls, equal to eager.
T.test("on a CUDA device: MLP, CNN and LSTM steps and torch.compile(model) replay equal to eager", function()
  if not torch.cuda.is_available() then
    print("  skipped: no CUDA device")
    return
  end
  local function on_device(batches)
    for _, b in ipairs(batches) do
      for k, t in ipairs(b) do b[k] = t:cuda() end
    end
    return batches
  end
  local function batches(n, x_shape, y_of)
    torch.manual_seed(17)
    local out = {}
    for i = 1, n do
      local x = torch.randn(x_shape)
      out[i] = {x, y_of(x)}
    end
    return on_device(out)
  end
  check_model_steps("cuda MLP, Adam", function()
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 2)):cuda()
  end, function(ps) return torch.optim.Adam(ps, {lr = 1e-2}) end,
  function(model, x, y) return nn.functional.mse_loss(model(x), y) end,
  batches(6, {8, 4}, function(x) return x[{{}, {1, 2}}]:clone() end))
  check_model_steps("cuda CNN, batch norm, SGD with momentum", function()
    return nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
      nn.Flatten(), nn.Linear(36, 3)):cuda()
  end, function(ps) return torch.optim.SGD(ps, {lr = 0.05, momentum = 0.9}) end,
  function(model, x, y) return nn.functional.cross_entropy(model(x), y) end,
  on_device((function()
    torch.manual_seed(18)
    local b = {}
    for i = 1, 5 do b[i] = {torch.rand(4, 1, 8, 8), torch.randint(1, 4, {4})} end
    return b
  end)()))
  check_model_steps("cuda LSTM, RMSprop", function()
    local m = nn.Module()
    m.rnn = nn.LSTM(3, 5)
    m.head = nn.Linear(5, 2)
    function m:forward(x)
      local out = self.rnn(x)
      return self.head(out)
    end
    return m:cuda()
  end, function(ps) return torch.optim.RMSprop(ps, {lr = 1e-2}) end,
  function(model, x, y) return nn.functional.mse_loss(model(x), y) end,
  batches(5, {6, 2, 3}, function(x) return x[{{}, {}, {1, 2}}]:tanh() end))
  -- torch.compile(model): the recorded backward replays on the device too.
  torch.manual_seed(19)
  local m1 = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)):cuda()
  local m2 = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)):cuda()
  m2:load_state_dict(m1:state_dict())
  local o1, o2 = torch.optim.AdamW(m1:parameters(), {lr = 1e-2}), torch.optim.AdamW(m2:parameters(), {lr = 1e-2})
  local cm = torch.compile(m2)
  for i = 1, 6 do
    local x, y = torch.full({3, 4}, i / 6):cuda(), torch.ones(3, 2):cuda()
    o1:zero_grad()
    local l1 = nn.functional.mse_loss(m1(x), y)
    l1:backward()
    o1:step()
    o2:zero_grad()
    local l2 = nn.functional.mse_loss(cm(x), y)
    l2:backward()
    o2:step()
    T.truthy(torch.equal(l1, l2), "compiled model: loss at step " .. i)
  end
  same_params(m1, m2)
  T.eq({stats(cm).recordings, stats(cm).replays, stats(cm).eager}, {1, 5, false})
  -- CUDA graphs: a step of device work with fixed arguments (products, pointwise ops, sums,
  -- SGD without a step count) replays as one graph on a GPU (the stand-in backend has no
  -- graphs, so its replays run step by step); a random draw, Adam's step count read on the
  -- host, or a host copy keeps the step-by-step replay. Results equal eager either way.
  local has_graphs = os.getenv("TIDE_FAKE_CUDA") ~= "1"
  local function mlp_step(make_opt)
    torch.manual_seed(23)
    local m = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)):cuda()
    local opt = make_opt(m:parameters())
    return m, function(x, y)
      opt:zero_grad()
      local loss = nn.functional.mse_loss(m(x), y)
      loss:backward()
      opt:step()
      return loss:detach()
    end
  end
  -- SGD, and Adam with capturable=true (its step count on the device).
  local step2
  for _, make_opt in ipairs({
    function(ps) return torch.optim.SGD(ps, {lr = 0.05, momentum = 0.9}) end,
    function(ps) return torch.optim.Adam(ps, {lr = 0.01, capturable = true}) end,
  }) do
    local g1, step1 = mlp_step(make_opt)
    local g2, s2 = mlp_step(make_opt)
    local cstep = torch.compile(s2, {fullgraph = true})
    for i = 1, 6 do
      local x, y = torch.full({4, 6}, i / 6):cuda(), torch.full({4, 3}, 0.5):cuda()
      T.truthy(torch.equal(step1(x, y), cstep(x, y)), "MLP step " .. i)
    end
    same_params(g1, g2)
    T.eq(stats(cstep).cuda_graphs, has_graphs and 1 or 0, "graphs")
    step2 = step2 or s2
  end
  -- The autograd two-layer step of bench workload 10 (manual SGD under no_grad).
  local function two_layer()
    torch.manual_seed(24)
    local x, y = torch.randn(8, 10):cuda(), torch.randn(8, 2):cuda()
    local w1, w2 = torch.randn(10, 6):cuda():requires_grad_(), torch.randn(6, 2):cuda():requires_grad_()
    return {w1, w2}, function()
      local loss = (x:mm(w1):clamp{min = 0}:mm(w2) - y):pow(2):sum()
      loss:backward()
      torch.no_grad(function()
        w1:sub_(w1.grad * 1e-3)
        w2:sub_(w2.grad * 1e-3)
      end)
      w1.grad, w2.grad = nil, nil
      return loss:detach()
    end
  end
  local p1, s1 = two_layer()
  local p2, s2 = two_layer()
  local cs2 = torch.compile(s2, {fullgraph = true})
  for i = 1, 5 do T.truthy(torch.equal(s1(), cs2()), "two-layer step " .. i) end
  for k = 1, 2 do T.truthy(torch.equal(p1[k], p2[k]), "two-layer weight " .. k) end
  T.eq({stats(cs2).replays, stats(cs2).cuda_graphs}, {4, has_graphs and 1 or 0}, "two-layer graphs")
  local report = torch._dynamo.explain(step2)(torch.ones(4, 6):cuda(), torch.ones(4, 3):cuda())
  if has_graphs then
    T.eq({report.cuda_graph, report.cuda_graph_reason}, {true, ""})
  else
    T.truthy(report.cuda_graph_reason:find("which has no graphs", 1, true), report.cuda_graph_reason)
  end
  local lin = nn.Linear(6, 3):cuda()
  local adam = torch.optim.Adam(lin:parameters())
  for _, c in ipairs({
    {function(x) return nn.functional.dropout(x, 0.5) end, "random"},
    {function(x) adam:zero_grad(); lin(x):sum():backward(); adam:step() end, "optim_step"},
    {function(x) return x:cpu() end, "copy_bytes"},
  }) do
    c[1](torch.ones(4, 6):cuda())  -- (Adam's first step makes its state: a Lua change)
    local r = torch._dynamo.explain(c[1])(torch.ones(4, 6):cuda())
    T.eq(r.cuda_graph, false)
    T.truthy(r.cuda_graph_reason:find(has_graphs and c[2] or "which has no graphs", 1, true), r.cuda_graph_reason)
  end
  -- An index out of range in a replayed gather raises as eagerly (the kernel's flag, checked
  -- by the replayed check); an embedding checks its indices on the host, which breaks.
  local gather = torch.compile(function(i, t) return t:gather(2, i) end, {fullgraph = true})
  local src = torch.randn(2, 4):cuda()
  local good = torch.tensor({{1}, {2}}):cuda()
  for _ = 1, 2 do T.truthy(torch.equal(gather(good, src), src:gather(2, good))) end
  T.error(function() gather(torch.tensor({{1}, {9}}):cuda(), src) end, "gather: index 9 is out of range")
  T.truthy(torch.equal(gather(good, src), src:gather(2, good)))
  -- (a replay that raised is not counted; the variant replays on)
  T.eq({stats(gather).recordings, stats(gather).replays, stats(gather).eager}, {1, 2, false})
  local emb = nn.Embedding(10, 3):cuda()
  T.error(function() torch.compile(function(i) return emb(i) end, {fullgraph = true})(good) end,
          "cannot be captured: _check_indices: reads or writes tensor data on the host")
  -- A device step after a large CPU group over as many elements stays out of the group
  -- (groups run chunk by chunk on the host's threads).
  local n = 3000000
  local a, b, xd = torch.rand(n), torch.rand(n), torch.rand(n):cuda()
  local function mixed() return (a * b):relu():sub(0.5), xd * 2 end
  local report_mixed = torch._dynamo.explain(mixed)()
  T.eq(report_mixed.fused_groups, {{"mul:binary", "relu:unary", "sub:binary", scratch = 2, outputs = 1}})
  local cmixed = torch.compile(mixed, {fullgraph = true})
  for _ = 1, 2 do
    local r1, r2 = cmixed()
    T.truthy(torch.equal(r1, (a * b):relu():sub(0.5)) and torch.equal(r2, xd * 2))
  end
  a, b, xd = nil, nil, nil
  -- Sorting on a device without a sort kernel runs the CPU's on host copies, all recorded.
  local sorted = torch.compile(function(t) return t:sort({descending = true}) end, {fullgraph = true})
  for i = 1, 3 do
    local t = torch.randn(7):cuda()
    local v1, i1 = sorted(t)
    local v2, i2 = t:sort({descending = true})
    T.truthy(torch.equal(v1, v2) and torch.equal(i1, i2), "sort " .. i)
  end
  T.eq(stats(sorted).replays, 2)
  -- Copies to the CPU replay (into a new result, or into a CPU tensor the function
  -- reaches); host code reading device data breaks, naming the op.
  local to_cpu = torch.compile(function(t) return t:cpu():mul(2) end, {fullgraph = true})
  local dst = torch.zeros(5)
  local into = torch.compile(function(t) dst:copy_(t) end, {fullgraph = true})
  for i = 1, 3 do
    local x = torch.full({5}, i):cuda()
    T.truthy(torch.equal(to_cpu(x), torch.full({5}, 2 * i)))
    into(x)
    T.truthy(torch.equal(dst, torch.full({5}, i)))
  end
  T.eq({stats(to_cpu).replays, stats(into).replays}, {2, 2})
  local x = torch.randn(5):cuda()
  for _, c in ipairs({
    {function(t) return t:sum():item() end, "item"},
    {function(t) return t[t:gt(0)] end, "index"},
    {function(t) return t:nonzero() end, "nonzero"},
  }) do
    T.error(function() torch.compile(c[1], {fullgraph = true})(x) end, "cannot be captured: " .. c[2])
  end
end)

T.done()
