-- torch.compile's fused groups (issue 18 part 3: "chains of pointwise ops over the same shape
-- run as one fused loop over cache-sized blocks", "buffers planned by liveness"): a run of
-- pointwise steps over the same flat iteration replays chunk by chunk through the CPU
-- kernels' own inner loops; a buffer only the group uses lives in chunk-sized scratch; a result
-- the group alone writes goes straight into the tensor the replay returns. Every case checks
-- replays equal eager mode bit for bit, and what explain() says was fused.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"

local function stats(f) return torch.compiler.stats(f) end

-- Replays f compiled `calls` times after changing the inputs' contents each call (through
-- refill), comparing each result with eager mode's; returns the compiled function.
local function check_replays(f, refill, calls)
  local cf = torch.compile(f)
  for i = 1, calls or 4 do
    refill(i)
    local got, want = table.pack(cf()), table.pack(f())
    T.eq(got.n, want.n)
    for k = 1, want.n do
      T.truthy(torch.is_tensor(got[k]), "result " .. k)
      T.eq(got[k].dtype, want[k].dtype)
      T.eq(got[k]:size(), want[k]:size())
      T.truthy(torch.equal(got[k], want[k]), "call " .. i .. " result " .. k)
    end
  end
  T.eq(stats(cf).replays, (calls or 4) - 1)
  return cf
end

local function group_of(f)
  local r = torch._dynamo.explain(f)()
  T.eq(#r.fused_groups, 1, tostring(r))
  return r.fused_groups[1], r
end

T.test("a chain: intermediates in scratch, the result written in place, equal to eager", function()
  for _, dt in ipairs({torch.float32, torch.float64}) do
    for _, n in ipairs({4096, 5000 + 1, 300001}) do  -- one chunk's multiple, a ragged end, several threads' share
      local a, b, c = torch.empty(n, {dtype = dt}), torch.empty(n, {dtype = dt}), torch.empty(n, {dtype = dt})
      local function refill(i)
        torch.manual_seed(i)
        a:copy_(torch.randn(n, {dtype = dt})); b:copy_(torch.randn(n, {dtype = dt})); c:copy_(torch.randn(n, {dtype = dt}))
      end
      local function f() return (a * b + c):relu():exp():sub(0.25) end
      check_replays(f, refill)
      refill(1)
      local g = group_of(f)
      T.eq({g[1], g[#g], #g, g.scratch, g.outputs}, {"mul:binary", "sub:binary", 5, 4, 1})
    end
  end
end)

T.test("results are new tensors each replay; an earlier result keeps its values", function()
  local n = 10000
  local a = torch.zeros(n)
  local cf = torch.compile(function() return (a + 1):mul(2) end)
  local results = {}
  for i = 1, 4 do
    a:fill_(i)
    results[i] = cf()
  end
  for i = 1, 4 do T.truthy(torch.equal(results[i], torch.full({n}, (i + 1) * 2.0)), "result " .. i) end
  T.eq(stats(cf).replays, 3)
  -- Written in place, it is a plain tensor of the eager result's kind.
  T.eq(results[4].requires_grad, false)
  T.truthy(results[4]:is_contiguous())
  -- NumPy arrays stay NumPy arrays (integer division by zero gives 0 there, an error in
  -- PyTorch semantics).
  local x = np.zeros(n)
  local cg = torch.compile(function() return (x + 1) * 2 end)
  for _ = 1, 3 do
    local r = cg()
    T.truthy(np.array_equal(r, np.full(n, 2.0)))
    T.truthy(torch.equal(r:to(torch.int64) // 0, torch.zeros(n, {dtype = torch.int64})))
  end
  T.eq(stats(cg).replays, 2)
  T.eq(group_of(function() return (x + 1) * 2 end).outputs, 1)
  T.error(function() return results[1]:to(torch.int64) // 0 end, "integer division by zero")
end)

T.test("a buffer the Lua side or a later step still reads stays in memory", function()
  local n = 20000
  local a, b = torch.empty(n), torch.empty(n)
  local function refill(i) torch.manual_seed(i); a:copy_(torch.rand(n)); b:copy_(torch.rand(n)) end
  -- Both the intermediate and the end of the chain are results: neither is scratch, both are
  -- written in place.
  local function f() local t = a * b; return t, (t + 1):sqrt() end
  check_replays(f, refill)
  refill(1)
  local g = group_of(f)
  T.eq({#g, g.scratch, g.outputs}, {3, 1, 2})  -- t + 1 is the group's alone
  -- A reduction after the group reads its last buffer: in memory, and the sum is right.
  local function s() return ((a - b):abs() * 3):sum() end
  check_replays(s, refill)
  refill(1)
  g = group_of(s)
  T.eq({#g, g.scratch, g.outputs}, {3, 2, 0})  -- the product, which the sum reads, in memory
  -- The same tensor returned twice: copied, never written in place (both would share it).
  local function twice() local t = (a * 2):add(1); return t, t end
  local ct = check_replays(twice, refill)
  refill(5)
  local x, y = ct()
  T.truthy(torch.equal(x, y) and torch.equal(x, a * 2 + 1))
  g = group_of(twice)
  T.eq(g.outputs, 0)
  -- An intermediate a training step's backward reads (saved for relu's backward) is memory.
  local w = torch.randn(n, {requires_grad = true})
  local function step()
    local loss = (w * a):relu():sum()
    loss:backward()
    local grad = w.grad
    w.grad = nil
    return grad
  end
  check_replays(step, refill)
end)

T.test("in-place steps, broadcast scalars, mixed dtypes, where and clamp fuse and equal eager", function()
  local n = 70000
  local a, b = torch.empty(n), torch.empty(n, {dtype = torch.float64})
  local i32 = torch.empty(n, {dtype = torch.int32})
  local half = torch.empty(n, {dtype = torch.float16})
  local s = torch.tensor(0.5)  -- a 0-dim operand broadcast over the chain
  local function refill(i)
    torch.manual_seed(i)
    a:copy_(torch.randn(n)); b:copy_(torch.randn(n, {dtype = torch.float64}))
    i32:copy_(torch.randint(-50, 50, {n}, {dtype = torch.int32})); half:copy_(torch.randn(n))
    s:fill_(i / 4)
  end
  local function f()
    local t = a * s
    t:add_(1):clamp_(-1, 2)
    local d = t:to(torch.float64) * b                    -- a copy to float64 in the group
    local m = torch.where(d:gt(0), d, d * 0.1)           -- a bool buffer and a where
    local k = (i32 * 3 - 7):remainder(11)                -- integers
    local h = (half * 2):sigmoid()                       -- half precision through float
    return m, k, h
  end
  check_replays(f, refill)
  refill(1)
  local r = torch._dynamo.explain(f)()
  T.truthy(#r.fused_groups >= 1, tostring(r))
  local fused = 0
  for _, g in ipairs(r.fused_groups) do fused = fused + #g end
  T.truthy(fused >= 8, tostring(r))
end)

T.test("exp with some inputs out of its vector range: every element as eagerly, whatever the chunks and threads", function()
  -- exp computes in-range inputs with its vector formula and the others with std::exp; a
  -- block holding both once switched wholesale, so a result depended on where a thread's
  -- share or a chunk began.
  local n = 1000000
  torch.manual_seed(0)
  local x = torch.randn(n) * 5
  x[250002] = 100  -- overflows
  x[777777] = -200  -- underflows
  local f = function() return (x * 1.0):exp() end
  local cf = torch.compile(f)
  cf()
  T.truthy(torch.equal(cf(), f()))
  local prev = torch.get_num_threads()
  torch.set_num_threads(1)
  local one = f()
  torch.set_num_threads(prev)
  T.truthy(torch.equal(one, f()))
  -- A softmax over logits reaching below the range: the sum, and so every output, agree.
  local logits = torch.randn(n) * 11
  local sm = function() local e = (logits - logits:max()):exp(); return e / e:sum() end
  local csm = torch.compile(sm)
  csm()
  T.truthy(torch.equal(csm(), sm()))
  T.eq(stats(csm).replays, 1)
end)

T.test("small iterations fuse, equal to eager; strided ones stay unfused; threads give the same bits", function()
  -- Below a chunk, across a chunk boundary, one element, a 0-d tensor: fused, eager's bits.
  for _, n in ipairs({1000, 2500, 1}) do
    local a = torch.randn(n)
    local function f() return (a * 2):relu():add(a):exp() end
    T.eq(torch._dynamo.explain(f)().fused_groups,
         {{"mul:binary", "relu:unary", "add:binary", "exp:unary", scratch = 3, outputs = 1}})
    check_replays(f, function(i) torch.manual_seed(i); a:copy_(torch.randn(n)) end)
  end
  local s = torch.tensor(0.5)
  check_replays(function() return (s * 3):sigmoid() end, function(i) s:fill_(i / 7) end)
  -- Not flat (a transposed view written into a new tensor): each step runs whole.
  local m = torch.rand(300, 200)
  local function f() return (m:t() * 2):add(1):relu() end
  check_replays(f, function(i) torch.manual_seed(i); m:copy_(torch.rand(300, 200)) end)
  -- The same chain with one thread and with two.
  local x = torch.randn(600000)
  local cf = torch.compile(function() return (x * 1.5):tanh():add(x) end)
  local prev = torch.get_num_threads()
  torch.set_num_threads(1)
  local one = {cf(), cf()}
  torch.set_num_threads(prev)
  local two = {cf(), cf()}
  T.truthy(torch.equal(one[2], two[2]) and torch.equal(one[2], (x * 1.5):tanh():add(x)))
end)

-- Product pairs: M x and later M^T v over the same float32 or float64 M, with pointwise steps
-- over M's rows between them, replay in one pass over M (cpu::matvec_pair) with eager's bits.
local function pairs_of(f) return torch._dynamo.explain(f)().product_pairs end

-- Runs f eagerly and compiled with the thread counts given, the inputs refilled each call, and
-- checks equal results bit for bit; returns the compiled function.
local function check_threads(f, refill, threads)
  local cf = torch.compile(f)
  local prev = torch.get_num_threads()
  for _, n in ipairs(threads) do
    torch.set_num_threads(n)
    for i = 1, 3 do
      refill(i)
      local got, want = table.pack(cf()), table.pack(f())
      for k = 1, want.n do T.truthy(torch.equal(got[k], want[k]), n .. " threads, call " .. i .. " result " .. k) end
    end
  end
  torch.set_num_threads(prev)
  return cf
end

T.test("product pair: the least-squares gradient by autograd, one pass, eager's bits at 1 and 2 threads", function()
  for _, d in ipairs({100, 30, 7}) do  -- rows split over the threads; one part (below the split's work); ragged
    local A, y = torch.empty(10 * d, d, {dtype = torch.float64}), torch.empty(10 * d, {dtype = torch.float64})
    local x = torch.zeros(d, {dtype = torch.float64, requires_grad = true})
    local function refill(i)
      torch.manual_seed(i)
      A:copy_(torch.randn(10 * d, d, {dtype = torch.float64})); y:copy_(torch.randn(10 * d, {dtype = torch.float64}))
      torch.no_grad(function() x:copy_(torch.randn(d, {dtype = torch.float64})) end)
    end
    local function step()
      local r = y - A:mv(x)
      local loss = r:dot(r)
      loss:backward()
      local g = x.grad
      x.grad = nil
      return loss:detach(), g
    end
    refill(1)
    local p = pairs_of(step)
    T.eq(#p, 1)
    T.eq({p[1][1], p[1][2], p[1].before, p[1].after},
         {"mv:matmul", "backward:matmul", {"backward:fill"}, {"dot:host"}}, "d = " .. d)
    T.eq(p[1].rows[1], "sub:binary")
    check_threads(step, refill, {2, 1})
  end
end)

-- A float64 linear model's data, A (rows x cols), x and y, with refill(i) giving them seed i's
-- values (y of 0s and 1s when `labels`); refilled with seed 1.
local function linear_problem(rows, cols, labels)
  local f64 = {dtype = torch.float64}
  local A, x, y = torch.empty(rows, cols, f64), torch.empty(cols, f64), torch.empty(rows, f64)
  local function refill(i)
    torch.manual_seed(i)
    A:copy_(torch.randn(rows, cols, f64)); x:copy_(torch.randn(cols, f64))
    y:copy_(labels and torch.rand(rows, f64):gt(0.5):double() or torch.randn(rows, f64))
  end
  refill(1)
  return A, x, y, refill
end

T.test("product pair: a logistic-regression gradient written out, and M x used after the pass", function()
  local A, w, y, refill = linear_problem(2000, 50, true)
  local function grad()
    local z = A:mv(w)
    local g = A:t():mv(torch.sigmoid(z) - y) / 2000
    return g, z  -- z, the first product's result, is also a result
  end
  local p = pairs_of(grad)
  T.eq(#p, 1)
  T.eq({p[1].rows, p[1].before, p[1].after}, {{"sigmoid:unary", "sub:binary"}, {}, {}})
  check_threads(grad, refill, {2, 1, 3})
  -- float32 (OpenBLAS's sgemv on each part, as eagerly): a pair too, eager's bits.
  local A32, w32, y32 = A:float(), w:float(), y:float()
  local function grad32() return A32:t():mv(torch.sigmoid(A32:mv(w32)) - y32) end
  T.eq(#pairs_of(grad32), 1)
  check_threads(grad32, function(i) torch.manual_seed(i); w32:copy_(torch.randn(50)) end, {2, 1})
  -- Mixed dtypes: a float64 M x, then float32 products over a float32 copy: no pair.
  local function mixed() return A32:t():mv((A:mv(w) - y):float()) end
  T.eq(#pairs_of(mixed), 0)
  check_threads(mixed, refill, {2})
end)

T.test("product pair: not formed when a step between cannot move or the matrix is stored transposed", function()
  local A, x, y, refill = linear_problem(400, 100)
  local cases = {
    -- the matrix changes between the products: the update can run neither before nor after
    function() local r = A:mv(x) - y; A:mul_(0.5); return A:t():mv(r), r end,
    -- a row step reads the loss, which needs all of r first
    function() local r = A:mv(x) - y; return A:t():mv(r * r:dot(r)) end,
    -- the second product's vector is not elementwise in the first's rows (reversed)
    function() local r = A:mv(x) - y; return A:t():mv(r:flip(1) * 2) end,
    -- the result of M^T v overwrites x, which M x read
    function() local r = A:mv(x) - y; torch.mv(A:t(), r, {out = x}); return x:clone() end,
  }
  for k, f in ipairs(cases) do
    T.eq(#pairs_of(f), 0, "case " .. k)
    refill(1)
    local want = table.pack(f())
    refill(1)
    local cf = torch.compile(f)
    local got = table.pack(cf())
    for i = 1, want.n do T.truthy(torch.equal(got[i], want[i]), "case " .. k .. " first call, result " .. i) end
    for call = 2, 3 do
      refill(call)
      want = table.pack(f())
      refill(call)
      got = table.pack(cf())
      for i = 1, want.n do T.truthy(torch.equal(got[i], want[i]), "case " .. k .. " call " .. call .. " result " .. i) end
    end
  end
  -- A stored transposed (column-major): M x is the transposed kernel, so no pair; same bits.
  local At = torch.randn(100, 400, {dtype = torch.float64}):t()
  local function f() return At:t():mv(At:mv(x) - y) end
  T.eq(#pairs_of(f), 0)
  check_threads(f, refill, {2})
end)

T.done()
