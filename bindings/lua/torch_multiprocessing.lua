-- torch.multiprocessing: worker processes that share tensors with this one. Each worker is
-- a new tide process (the tide program started again, not a fork: its thread pools and
-- OpenBLAS threads start fresh) that receives a Lua function and its arguments as a message;
-- tensors travel by shared-memory handle (bindings/bind_multiprocessing.cpp says what a
-- message can carry). Receives the torch module table.
--
--   Queue(), Pipe([duplex]), Process{target=, args=}, spawn(fn, {nprocs=, args=, join=}),
--   and the internal _batch_workers, the worker processes of a DataLoader.
local torch = ...
local mp = torch.multiprocessing
local util = torch.nn._util
local send, recv, readable, close = mp._send, mp._recv, mp._readable, mp._close

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

local function class(name)
  local cls = {name = name}
  cls.__index = cls
  return cls
end

-- A timeout in seconds from block/timeout options: -1 waits without a limit.
local function wait_seconds(op, block, timeout)
  util.check_bool(op, "block", block)
  if not block then return 0 end
  if timeout == nil then return -1 end
  util.check_number(op, "timeout", timeout)
  if timeout < 0 then fail(op, "timeout must be >= 0, got %s", tostring(timeout)) end
  return timeout
end

---------------------------------------------------------------------------------------------
-- Queue: any number of processes put and get; each item is received by one of them. Items
-- are copied, but tensors travel by shared-memory handle (their storage moves to shared
-- memory when they are put, as in PyTorch), so the receiver's tensor uses the same bytes.
-- put waits while the queue's buffer (the kernel's socket buffer) is full.

local Queue = class("Queue")
mp._Queue = Queue

function mp.Queue()
  local w, r = mp._socket_pair()
  return setmetatable({_w = w, _r = r}, Queue)
end

function Queue:put(obj) send(self._w, obj) end

-- get([block=true][, timeout]) or get{block=, timeout=}: the next item; an error when none
-- arrives in time (PyTorch's queue.Empty).
function Queue:get(...)
  local op = "Queue:get"
  local o = util.args(op, {"block", "timeout"}, 0, {block = true}, ...)
  local seconds = wait_seconds(op, o.block, o.timeout)
  local ok, v = recv(self._r, seconds)
  if not ok then fail(op, "the queue is empty (no item within %g s)", seconds) end
  return v
end

function Queue:get_nowait() return self:get(false) end

function Queue:empty() return not readable(self._r, 0) end

-- Closes this process's ends of the queue (other processes keep theirs).
function Queue:close()
  close(self._w)
  close(self._r)
end

---------------------------------------------------------------------------------------------
-- Pipe([duplex=true]) -> a, b: two connected ends; what one sends the other receives. With
-- duplex=false, a only receives and b only sends (Python's Pipe(duplex=False)).

local Connection = class("Connection")
mp._Connection = Connection

function mp.Pipe(duplex)
  if duplex == nil then duplex = true end
  util.check_bool("Pipe", "duplex", duplex)
  local x, y = mp._socket_pair()
  return setmetatable({_s = x, _recv = true, _send = duplex}, Connection),
         setmetatable({_s = y, _recv = duplex, _send = true}, Connection)
end

function Connection:send(obj)
  if not self._send then fail("Connection:send", "this end of a one-way Pipe only receives") end
  send(self._s, obj)
end

-- recv(): the next object, waiting for it.
function Connection:recv()
  if not self._recv then fail("Connection:recv", "this end of a one-way Pipe only sends") end
  local _, v = recv(self._s)
  return v
end

-- poll([timeout=0]): whether an object waits, after up to timeout seconds (nil: no limit).
function Connection:poll(timeout)
  if timeout == nil then return readable(self._s, 0) end
  util.check_number("Connection:poll", "timeout", timeout)
  return readable(self._s, timeout)
end

function Connection:close() close(self._s) end

---------------------------------------------------------------------------------------------
-- Worker processes. A worker is `tide -e "torch.multiprocessing._worker_main()"` with a socket
-- to its parent as descriptor 3. It receives two messages: where to find modules
-- (package.path and cpath, needed before the second message names a module's values), then
-- the job {fn=, args=, report=}. It calls fn(table.unpack(args)); with report it sends back
-- {ok=true} or {error=traceback}, else it prints an error to stderr (as Python's
-- multiprocessing.Process does). It exits 0 on success and 1 on an error.

local worker_info = nil  -- in a worker of _batch_workers: {id=, num_workers=, seed=}

-- A traceback without the frames of the worker machinery below fn.
local function traceback(err)
  local text = debug.traceback(tostring(err), 2)
  return (text:gsub("\n%s*%[C%]: in function 'xpcall'.*$", ""))
end

function mp._worker_main()
  local sock = mp._bootstrap_socket()
  local report, ok, err = true, false, nil
  local loaded, why = pcall(function()
    local _, env = recv(sock)
    package.path, package.cpath = env.path, env.cpath
    local _, job = recv(sock)
    report = job.report
    ok, err = xpcall(job.fn, traceback, table.unpack(job.args, 1, job.args.n))
  end)
  if not loaded then ok, err = false, "the job could not be received: " .. tostring(why) end
  if report then
    pcall(send, sock, ok and {ok = true} or {error = err})
  elseif not ok then
    io.stderr:write("Process ", tostring(mp._getpid()), ": ", err, "\n")
  end
  io.stdout:flush()
  io.stderr:flush()
  os.exit(ok and 0 or 1)
end

-- Starts a worker running fn(...) (args a table packed with n); returns pid and the socket.
local function start_worker(fn, args, report)
  local parent, child = mp._socket_pair()
  local pid = mp._spawn_worker(child)
  close(child)
  send(parent, {path = package.path, cpath = package.cpath})
  send(parent, {fn = fn, args = args, report = report})
  return pid, parent
end

-- A worker's args as a packed list (nils kept).
local function packed(op, args, ...)
  if args == nil then return table.pack(...) end
  if type(args) ~= "table" or getmetatable(args) ~= nil then
    fail(op, "args must be a list of arguments, got %s", util.describe(args))
  end
  local n = args.n or #args
  local out = {n = select("#", ...) + n}
  for i = 1, select("#", ...) do out[i] = select(i, ...) end
  for i = 1, n do out[select("#", ...) + i] = args[i] end
  return out
end

-- A number of worker processes for one call: at least 1, at most 4 per CPU (more would only
-- take turns on the CPUs, and a typo such as nprocs = 1e6 must not start a million processes).
function mp._check_process_count(op, name, n)
  n = util.check_int(op, name, n, 1)
  local limit = 4 * mp.cpu_count()
  if n > limit then fail(op, "%s=%d: at most %d worker processes (4 per CPU) are started at once", name, n, limit) end
  return n
end

local function check_function(op, fn)
  if type(fn) ~= "function" then fail(op, "expected a function to run, got %s", util.describe(fn)) end
end

---------------------------------------------------------------------------------------------
-- Process{target=fn, args={...}}: Python's multiprocessing.Process. start() runs
-- target(table.unpack(args)) in a new worker; join([timeout]) waits for it and sets
-- exitcode (0, 1 after an error, or -N after signal N); is_alive(), terminate(), kill().

local Process = class("Process")
mp._Process = Process

function mp.Process(...)
  local o = util.args("Process", {"target", "args"}, 1, {}, ...)
  check_function("Process", o.target)
  return setmetatable({target = o.target, args = packed("Process", o.args), pid = nil, exitcode = nil}, Process)
end

function Process:start()
  if self.pid then fail("Process:start", "the process was started already (pid %d)", self.pid) end
  self.pid, self._sock = start_worker(self.target, self.args, false)
end

local function set_status(self, st)
  self.exitcode = st.signaled and -st.code or st.code
  if self._sock then close(self._sock) self._sock = nil end
end

-- join([timeout]): waits until the process ends (or timeout seconds pass).
function Process:join(timeout)
  if not self.pid then fail("Process:join", "the process was not started") end
  if self.exitcode ~= nil then return end
  if timeout ~= nil then util.check_number("Process:join", "timeout", timeout) end
  local st = mp._wait_child(self.pid, timeout or -1)
  if st then set_status(self, st) end
end

function Process:is_alive()
  if not self.pid or self.exitcode ~= nil then return false end
  local st = mp._wait_child(self.pid)
  if st then set_status(self, st) end
  return st == nil
end

function Process:terminate()
  if self:is_alive() then mp._kill(self.pid, 15) end
end

function Process:kill()
  if self:is_alive() then mp._kill(self.pid, 9) end
end

---------------------------------------------------------------------------------------------
-- spawn(fn, {nprocs=1, args={}, join=true}): runs fn(rank, table.unpack(args)) in nprocs
-- workers, rank 0 .. nprocs-1. With join it waits for all of them and returns nothing; when
-- one fails (an error, or an exit by a signal or with a non-zero code) the others are
-- terminated and the error, with the worker's traceback, is raised here. With join=false
-- it returns a context whose join([timeout]) does the same, returning true once all ended
-- and false when the timeout ran out first; ctx:pids() lists the process ids.

local SpawnContext = class("SpawnContext")
mp._SpawnContext = SpawnContext

-- Ends the workers still running: SIGTERM, then SIGKILL after a second.
local function stop_all(procs)
  for _, p in ipairs(procs) do
    if not p.status then mp._kill(p.pid, 15) end
  end
  for _, p in ipairs(procs) do
    if not p.status then
      p.status = mp._wait_child(p.pid, 1.0)
      if not p.status then
        mp._kill(p.pid, 9)
        p.status = mp._wait_child(p.pid, -1)
      end
    end
  end
end

-- Reads a worker's report if one waits (it arrives before the worker exits).
local function read_report(p)
  if p.report == nil and not p.closed and readable(p.sock, 0) then
    local ok, got, v = pcall(recv, p.sock, 0)
    if ok and got then p.report = v else p.closed = true end
  end
end

function SpawnContext:pids()
  local out = {}
  for i, p in ipairs(self.processes) do out[i] = p.pid end
  return out
end

function SpawnContext:join(timeout)
  local op = "multiprocessing.spawn"
  if timeout ~= nil then util.check_number(op .. ":join", "timeout", timeout) end
  local deadline = timeout and torch.utils.clock() + timeout
  while true do
    local waiting = nil
    for rank, p in ipairs(self.processes) do
      if not p.status then p.status = mp._wait_child(p.pid) end
      read_report(p)  -- after the status: a report is sent before the worker exits
      local failed = (p.report and p.report.error) or (p.status and (p.status.signaled or p.status.code ~= 0))
      if failed then
        stop_all(self.processes)
        for _, q in ipairs(self.processes) do if q.sock then close(q.sock) end end
        if p.report and p.report.error then
          fail(op, "process %d terminated with the following error:\n%s", rank - 1, p.report.error)
        end
        fail(op, "process %d terminated with %s", rank - 1, p.status.text)
      end
      if not p.status then waiting = waiting or p end
    end
    if not waiting then
      for _, p in ipairs(self.processes) do if p.sock then close(p.sock) end end
      return true
    end
    if deadline and torch.utils.clock() >= deadline then return false end
    waiting.status = mp._wait_child(waiting.pid, 0.005)  -- a short pause, cut short when it ends
  end
end

function mp.spawn(fn, ...)
  local op = "multiprocessing.spawn"
  local o = util.args(op, {"args", "nprocs", "join"}, 0, {args = {}, nprocs = 1, join = true}, ...)
  check_function(op, fn)
  local nprocs = mp._check_process_count(op, "nprocs", o.nprocs)
  util.check_bool(op, "join", o.join)
  local procs = {}
  local ok, err = pcall(function()
    for rank = 0, nprocs - 1 do
      local pid, sock = start_worker(fn, packed(op, o.args, rank), true)
      procs[#procs + 1] = {pid = pid, sock = sock}
    end
  end)
  if not ok then
    stop_all(procs)
    error(err, 0)
  end
  local ctx = setmetatable({processes = procs}, SpawnContext)
  if not o.join then return ctx end
  ctx:join()
end

---------------------------------------------------------------------------------------------
-- _batch_workers: the worker processes of a DataLoader (internal; the loader wires its
-- options onto it).
--
--   local pool = torch.multiprocessing._batch_workers{producer = fn, num_workers = n,
--     prefetch_factor = 2, persistent_workers = false, worker_init_fn = nil, seed = nil,
--     timeout = 0}
--   for i, batch in pool:run(tasks) do ... end
--
-- run(tasks) hands the tasks (a list, or an iterator function returning the next task and
-- nil at the end) to the workers round-robin -- task i to worker (i - 1) % n + 1, as
-- PyTorch's DataLoader hands out index batches -- each worker calls producer(task), and
-- run yields (i, producer(task_i)) in the order of the tasks, the same as calling producer
-- here would. At most prefetch_factor * num_workers tasks are out at a time. Tensors in the
-- results come back in shared memory (no copy on this side).
--
-- Workers start on the first run (num_workers of them, 1 engine thread each, as PyTorch's
-- workers use); each seeds torch with seed + worker_id (seed: drawn from torch's generator
-- when not given, once per start of the workers), sets _worker_info() to {id=, num_workers=,
-- seed=} and calls worker_init_fn(worker_id) if given; worker ids are 0-based, as in PyTorch.
-- Without persistent_workers the workers end when a run is exhausted (or the pool is
-- closed or collected); with it they stay for the next run. An error in producer or
-- worker_init_fn, a worker that dies, and (timeout > 0) a result that takes longer than
-- timeout seconds are errors raised here, naming the worker.

local BatchWorkers = class("BatchWorkers")
mp._BatchWorkers = BatchWorkers

function mp._worker_info() return worker_info end

-- The loop of one worker: tasks {epoch, i, task} arrive on its own socket (false ends it);
-- results {epoch, i, worker, value} or {epoch, i, worker, nil, error} go to the shared one.
function mp._batch_worker_loop(id, num_workers, seed, producer, init_fn, tasks, results)
  torch.set_num_threads(1)
  torch.manual_seed(seed)
  worker_info = {id = id, num_workers = num_workers, seed = seed}
  if init_fn then
    local ok, err = xpcall(init_fn, traceback, id)
    if not ok then
      send(results, {0, 0, id, nil, "worker_init_fn: " .. err})
      return
    end
  end
  while true do
    local open, _, msg = pcall(recv, tasks)  -- an end of file: the parent closed the pool, or has gone
    if not open or not msg then return end
    local ok, value = xpcall(producer, traceback, msg[3])
    if ok then send(results, {msg[1], msg[2], id, value}) else send(results, {msg[1], msg[2], id, nil, value}) end
  end
end

local pool_options = {"producer", "num_workers", "prefetch_factor", "persistent_workers", "worker_init_fn", "seed",
                      "timeout"}

function mp._batch_workers(opts)
  local op = "multiprocessing._batch_workers"
  local o = util.args(op, pool_options, 2, {prefetch_factor = 2, persistent_workers = false, timeout = 0}, opts)
  check_function(op, o.producer)
  local self = setmetatable({}, BatchWorkers)
  self.producer = o.producer
  self.num_workers = mp._check_process_count(op, "num_workers", o.num_workers)
  self.prefetch_factor = util.check_int(op, "prefetch_factor", o.prefetch_factor, 1)
  self.persistent = util.check_bool(op, "persistent_workers", o.persistent_workers)
  if o.worker_init_fn ~= nil then check_function(op, o.worker_init_fn) end
  self.init_fn = o.worker_init_fn
  if o.seed ~= nil then self.seed = util.check_int(op, "seed", o.seed, 0) end
  self.timeout = util.check_number(op, "timeout", o.timeout)
  if self.timeout < 0 then fail(op, "timeout must be >= 0, got %s", tostring(self.timeout)) end
  self.epoch = 0
  return self
end

function BatchWorkers:start()
  local n = self.num_workers
  local seed = self.seed or torch.randint(0, 1 << 53, {1}, {dtype = "int64"}):item()
  local results_w, results_r = mp._socket_pair()
  self.results = results_r
  self.workers = {}
  local ok, err = pcall(function()
    for id = 0, n - 1 do
      local task_w, task_r = mp._socket_pair()
      local pid, boot = start_worker(mp._batch_worker_loop,
                                     table.pack(id, n, seed + id, self.producer, self.init_fn, task_r, results_w), true)
      close(task_r)
      self.workers[id + 1] = {pid = pid, boot = boot, tasks = task_w}
    end
  end)
  close(results_w)  -- only the workers write results: when all have gone, reading them ends
  if not ok then
    self:close()
    error(err, 0)
  end
end

-- Ends the workers: closing their task sockets ends their loops; stragglers are terminated.
function BatchWorkers:close()
  local workers = self.workers
  if not workers then return end
  self.workers = nil
  for _, w in ipairs(workers) do close(w.tasks) end
  for _, w in ipairs(workers) do
    if not w.status and not mp._wait_child(w.pid, 2.0) then
      mp._kill(w.pid, 9)
      mp._wait_child(w.pid, -1)
    end
    close(w.boot)
  end
  close(self.results)
  self.results = nil
end
BatchWorkers.__gc = BatchWorkers.close
BatchWorkers.__close = BatchWorkers.close

-- An error about worker w (1-based slot), with what it reported when it died.
local function worker_failure(self, slot, what)
  local w = self.workers[slot]
  local report = nil
  if readable(w.boot, 0) then
    local ok, got, v = pcall(recv, w.boot, 0)
    if ok and got and v.error then report = v.error end
  end
  self:close()
  fail("multiprocessing._batch_workers", "worker %d (pid %d) %s%s", slot - 1, w.pid, what,
       report and ":\n" .. report or "")
end

-- A worker that has ended, if any (its slot and status).
local function dead_worker(self)
  for slot, w in ipairs(self.workers) do
    w.status = w.status or mp._wait_child(w.pid)
    if w.status then return slot, w.status end
  end
end

function BatchWorkers:run(tasks)
  local op = "BatchWorkers:run"
  local next_task
  if type(tasks) == "function" then
    next_task = tasks
  elseif type(tasks) == "table" and getmetatable(tasks) == nil then
    local i = 0
    next_task = function() i = i + 1 return tasks[i] end
  else
    fail(op, "expected a list of tasks or an iterator function, got %s", util.describe(tasks))
  end
  if not self.workers then self:start() end
  self.epoch = self.epoch + 1
  local epoch, n = self.epoch, self.num_workers
  local sent, yielded, exhausted = 0, 0, false
  local done = {}  -- i -> {value}
  local function send_next()
    if exhausted then return end
    local task = next_task()
    if task == nil then exhausted = true return end
    sent = sent + 1
    local slot = (sent - 1) % n + 1
    send(self.workers[slot].tasks, {epoch, sent, task})
  end
  for _ = 1, self.prefetch_factor * n do send_next() end
  return function()
    if yielded == sent and exhausted then
      if not self.persistent then self:close() end
      return nil
    end
    local want = yielded + 1
    local started = torch.utils.clock()
    while not done[want] do
      if not self.workers then fail(op, "the workers were closed") end
      local ok, got, msg = pcall(recv, self.results, 0.1)
      if not ok then  -- every worker has gone
        local slot, st = dead_worker(self)
        if slot then worker_failure(self, slot, "exited unexpectedly with " .. st.text) end
        self:close()
        error(got, 0)
      end
      if got then
        if msg[5] ~= nil then worker_failure(self, msg[3] + 1, "raised an error:\n" .. msg[5]) end
        if msg[1] == epoch then done[msg[2]] = {msg[4]} end
      else
        local slot, st = dead_worker(self)
        if slot then worker_failure(self, slot, "exited unexpectedly with " .. st.text) end
        if self.timeout > 0 and torch.utils.clock() - started > self.timeout then
          local slot_of = (want - 1) % n + 1
          self:close()
          fail(op, "worker %d gave no result for task %d within %g s", slot_of - 1, want, self.timeout)
        end
      end
    end
    local value = done[want][1]
    done[want] = nil
    yielded = want
    send_next()
    return want, value
  end
end
