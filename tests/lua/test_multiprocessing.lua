-- torch.multiprocessing: shared storages, spawn, Queue and Pipe, Process, Hogwild.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local mp = torch.multiprocessing

T.test("share_memory_ moves the storage to shared memory, keeping the values and views", function()
  local x = torch.arange(6):double()
  local v = x[{{2, 4}}]
  T.eq(x:is_shared(), false)
  T.eq(rawequal(x:share_memory_(), x), true)
  T.eq(x:is_shared(), true)
  T.eq(v:is_shared(), true)  -- a view sees the storage's new home
  T.eq(x:tolist(), {0, 1, 2, 3, 4, 5})
  v:fill_(7)
  T.eq(x:tolist(), {0, 7, 7, 7, 4, 5})
  x:share_memory_()  -- again: nothing changes
  T.eq(x:is_shared(), true)
end)

T.test("spawn runs fn(rank, ...) in workers that write into a shared tensor", function()
  local out = torch.zeros({4}, {dtype = torch.int64}):share_memory_()
  mp.spawn(function(rank, t, k) t[rank + 1] = (rank + 1) * k end, {nprocs = 4, args = {out, 10}})
  T.eq(out:tolist(), {10, 20, 30, 40})
end)

T.test("a worker's error reaches the parent with its message and traceback", function()
  local ok, err = pcall(mp.spawn, function(rank)
    if rank == 1 then error("worker " .. rank .. " fails on purpose") end
  end, {nprocs = 2})
  T.eq(ok, false)
  T.truthy(tostring(err):find("worker 1 fails on purpose", 1, true), tostring(err))
  T.truthy(tostring(err):find("stack traceback", 1, true), tostring(err))
end)

T.test("Queue passes tensors by handle, and numbers, strings and tables of them", function()
  local q, back = mp.Queue(), mp.Queue()
  local x = torch.zeros({3})
  local p = mp.Process{target = function(q, back)
    local msg = q:get()
    msg.t:add_(msg.n)            -- the parent's tensor: the same bytes
    back:put({s = msg.s .. "!", list = {msg.n, msg.n * 2}, t = msg.t * 2})
  end, args = {q, back}}
  p:start()
  q:put({t = x, n = 1.5, s = "hi"})
  local reply = back:get{timeout = 60}
  p:join()
  T.eq(p.exitcode, 0)
  T.eq(x:is_shared(), true)
  T.eq(x:tolist(), {1.5, 1.5, 1.5})
  T.eq(reply.s, "hi!")
  T.eq(reply.list, {1.5, 3})
  T.eq(reply.t:tolist(), {3, 3, 3})
  local ok, err = pcall(q.get, q, {timeout = 0.05})
  T.eq(err, "Queue:get: the queue is empty (no item within 0.05 s)")
end)

T.test("Pipe: both ends send and receive", function()
  local a, b = mp.Pipe()
  local p = mp.Process{target = function(conn)
    local v = conn:recv()
    conn:send(v * 3)
  end, args = {b}}
  p:start()
  a:send(14)
  T.eq(a:recv(), 42)
  p:join()
  T.eq(p.exitcode, 0)
  local r, w = mp.Pipe(false)
  local ok, err = pcall(r.send, r, 1)
  T.eq(err, "Connection:send: this end of a one-way Pipe only receives")
end)

T.test("Queue's block/timeout, empty, get_nowait; Pipe's poll", function()
  local q = mp.Queue()
  T.eq(q:empty(), true)
  local ok, err = pcall(q.get_nowait, q)
  T.eq(err, "Queue:get: the queue is empty (no item within 0 s)")
  q:put("x")
  T.eq(q:get{block = false}, "x")
  q:put(3)
  T.eq(q:empty(), false)
  T.eq(q:get_nowait(), 3)
  local a, b = mp.Pipe()
  T.eq(a:poll(), false)
  b:send({1, {2}})
  T.eq(a:poll(0.5), true)
  T.eq(a:recv(), {1, {2}})
  q:close()
end)

T.test("Process: is_alive, join with a timeout, terminate, exitcode; spawn with join=false", function()
  local p = mp.Process{target = function() while true do end end}
  p:start()
  T.eq(p:is_alive(), true)
  p:join(0.05)
  T.eq(p.exitcode, nil)
  p:terminate()
  p:join()
  T.eq(p.exitcode, -15)
  T.eq(p:is_alive(), false)
  local k = mp.Process{target = function() while true do end end}
  k:start()
  k:kill()
  k:join()
  T.eq(k.exitcode, -9)
  local fails = mp.Process{target = function() os.exit(3) end}
  fails:start()
  fails:join()
  T.eq(fails.exitcode, 3)
  local out = torch.zeros({2}):share_memory_()
  local ctx = mp.spawn(function(rank, t) t[rank + 1] = rank + 5 end, {nprocs = 2, args = {out}, join = false})
  T.eq(#ctx:pids(), 2)
  T.eq(ctx:join(60), true)
  T.eq(out:tolist(), {5, 6})
end)

T.test("Hogwild: workers train one shared model with an optimizer each", function()
  torch.manual_seed(0)
  local model = torch.nn.Linear(3, 1):double()
  model:share_memory()
  local w_true = torch.tensor({{1.0, -2.0, 0.5}}, {dtype = torch.float64})
  mp.spawn(function(rank, model, w_true)
    torch.manual_seed(100 + rank)
    local opt = torch.optim.SGD(model:parameters(), {lr = 0.05})
    for _ = 1, 300 do
      local x = torch.randn({8, 3}, {dtype = torch.float64})
      local y = x:matmul(w_true:t()) + 0.25
      opt:zero_grad()
      torch.nn.functional.mse_loss(model(x), y):backward()
      opt:step()
    end
  end, {nprocs = 2, args = {model, w_true}})
  T.near(model.weight, w_true, 1e-6)
  T.near(model.bias, {0.25}, 1e-6)
end)

T.test("process counts are bounded, and only this process's workers can be signalled", function()
  local limit = 4 * mp.cpu_count()
  T.eq(math.type(mp.cpu_count()), "integer")
  local ok, err = pcall(mp.spawn, function() end, {nprocs = limit + 1})
  T.eq(err, string.format("multiprocessing.spawn: nprocs=%d: at most %d worker processes (4 per CPU) are started at once",
                          limit + 1, limit))
  ok, err = pcall(torch.utils.data.DataLoader, torch.utils.data.TensorDataset(torch.zeros(2)), {num_workers = limit + 1})
  T.eq(err, string.format("DataLoader: num_workers=%d: at most %d worker processes (4 per CPU) are started at once",
                          limit + 1, limit))
  ok, err = pcall(mp.spawn, function() end, {nprocs = 0})
  T.eq(ok, false)
  ok, err = pcall(mp._kill, 1)
  T.eq(err, "multiprocessing._kill: process 1 is not a running worker started by this process")
  ok, err = pcall(mp._wait_child, mp._getpid())
  T.eq(err, "multiprocessing._wait_child: process " .. mp._getpid() .. " is not a running worker started by this process")
end)

-- A dataset whose sample i is {i, the id of the worker that read it, that worker's process id}.
local data = torch.utils.data
local Tagged = data.Dataset:extend("Tagged")
function Tagged:init(n) self.n = n end
function Tagged:len() return self.n end
function Tagged:get(i)
  local info = data.get_worker_info()
  return torch.tensor({i, info and info.id or -1, torch.multiprocessing._getpid()}, {dtype = torch.int64})
end

local function epoch(loader)
  local out = {}
  for batch in loader:iter() do out[#out + 1] = batch end
  return out
end

T.test("DataLoader with workers gives the batches of zero workers, in the same order", function()
  local ds = data.TensorDataset(torch.arange(20):double(), torch.arange(20):double() * 2)
  local function batches(workers)
    local out = {}
    local g = torch.Generator():manual_seed(5)
    for x, y in data.DataLoader(ds, {batch_size = 3, shuffle = true, generator = g, num_workers = workers}):iter() do
      out[#out + 1] = {x:tolist(), y:tolist(), x:is_shared()}
    end
    return out
  end
  local plain, parallel = batches(0), batches(3)
  T.eq(#parallel, 7)
  for i = 1, 7 do
    T.eq(parallel[i][1], plain[i][1])
    T.eq(parallel[i][2], plain[i][2])
    T.eq(parallel[i][3], true)  -- made in a worker: in shared memory
  end
end)

T.test("DataLoader workers: batch i from worker (i - 1) % n, worker_init_fn, seeds, persistence", function()
  local loader = data.DataLoader(Tagged(12), {batch_size = 2, num_workers = 3, prefetch_factor = 1,
                                              persistent_workers = true,
                                              worker_init_fn = function(id) torch.manual_seed(1000 + id) end})
  local first, second = epoch(loader), epoch(loader)
  local pids = {}
  for i, b in ipairs(first) do
    T.eq(b[{{}, 1}]:tolist(), {2 * i - 1, 2 * i})
    T.eq(b[{{}, 2}]:tolist(), {(i - 1) % 3, (i - 1) % 3})
    pids[i] = b[1][3]:item()
  end
  for i, b in ipairs(second) do T.eq(b[1][3]:item(), pids[i]) end  -- the same workers
  local fresh = data.DataLoader(Tagged(4), {batch_size = 2, num_workers = 1})
  local a, b = epoch(fresh), epoch(fresh)
  T.truthy(a[1][1][3]:item() ~= b[1][1][3]:item(), "without persistent_workers each epoch starts new workers")
  -- Seeds: worker w seeds torch with base_seed + w.
  local Seeds = data.Dataset:extend("Seeds")
  function Seeds:len() return 2 end
  function Seeds:get(i) return torch.tensor({data.get_worker_info().seed}, {dtype = torch.int64}) end
  local seeds = epoch(data.DataLoader(Seeds(), {batch_size = 1, num_workers = 2}))
  T.eq(seeds[2][1]:item() - seeds[1][1]:item(), 1)
  T.eq(data.get_worker_info(), nil)
end)

T.test("DataLoader worker options are checked", function()
  local ds = Tagged(2)
  local ok, err = pcall(data.DataLoader, ds, {prefetch_factor = 2})
  T.eq(err, "DataLoader: prefetch_factor option could only be specified in multiprocessing (num_workers > 0)")
  ok, err = pcall(data.DataLoader, ds, {persistent_workers = true})
  T.eq(err, "DataLoader: persistent_workers option needs num_workers > 0")
  ok, err = pcall(data.DataLoader, ds, {num_workers = 1, timeout = -1})
  T.eq(err, "DataLoader: timeout option should be non-negative, got -1")
  local loader = data.DataLoader(ds, {num_workers = 1, worker_init_fn = function() error("init fails") end})
  ok, err = pcall(epoch, loader)
  T.eq(ok, false)
  T.truthy(tostring(err):find("worker_init_fn: ", 1, true) and tostring(err):find("init fails", 1, true), tostring(err))
end)

T.done()
