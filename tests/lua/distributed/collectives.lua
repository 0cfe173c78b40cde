-- torch.distributed's collectives on every dtype against NumPy's reductions (make_refs.py
-- wrote the inputs and the expected results into DIR). Run by tests/lua/test_distributed.sh:
--   mpirun -n 2 tide tests/lua/distributed/collectives.lua DIR
-- Every rank runs the same tests in the same order (the collectives inside them must match
-- across ranks), and prints its own "N passed, M failed".
local T = dofile((arg[0]:match("(.*/)") or "./") .. "../harness.lua")
local dist = torch.distributed
local dir = assert(arg[1], "usage: collectives.lua DIR")

-- rank= and world_size= are checked against mpirun's.
dist.init_process_group{backend = "mpi", timeout = 60, rank = tonumber(os.getenv("OMPI_COMM_WORLD_RANK")),
                        world_size = tonumber(os.getenv("OMPI_COMM_WORLD_SIZE"))}
local rank, world = dist.get_rank(), dist.get_world_size()

local function load(name) return torch.from_numpy(np.load(dir .. "/" .. name .. ".npy")) end

-- Exact equality of a result with the expected values converted to its dtype.
local function same(got, want, what)
  want = want:to(got.dtype)
  T.eq(got.dtype, want.dtype, what .. ": dtype")
  T.eq(got.shape, want.shape, what .. ": shape")
  if not torch.equal(got, want) then
    error(what .. ": got " .. tostring(got) .. ", expected " .. tostring(want), 2)
  end
end

local real_dtypes = {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                     "float16", "bfloat16", "float32", "float64"}
local complex_dtypes = {"complex64", "complex128"}
local all_dtypes = {}
for _, d in ipairs(real_dtypes) do all_dtypes[#all_dtypes + 1] = d end
for _, d in ipairs(complex_dtypes) do all_dtypes[#all_dtypes + 1] = d end

-- The input of rank r in dtype d: b* for bool, c* for complex, x* otherwise.
local function source(d) return d == "bool" and "b" or (d:find("complex") and "c" or "x") end
local function input(d, r) return load(source(d) .. r):to(d) end

T.test("rank and world size come from mpirun", function()
  T.eq(dist.is_initialized(), true)
  T.eq(dist.is_available(), true)
  T.eq(dist.unavailable_reason(), "")
  T.eq(dist.get_backend(), "mpi")
  T.eq(world, tonumber(os.getenv("OMPI_COMM_WORLD_SIZE")))
  T.eq(rank, tonumber(os.getenv("OMPI_COMM_WORLD_RANK")))
end)

for _, d in ipairs(all_dtypes) do
  local complex = d:find("complex") ~= nil
  local ops = complex and {"sum", "product"} or {"sum", "product", "min", "max"}
  for _, op in ipairs(ops) do
    T.test("all_reduce " .. op .. " on " .. d, function()
      local x = input(d, rank)
      dist.all_reduce(x, dist.ReduceOp[op:upper()])
      same(x, load((op == "product" and "prod" or op) .. "_" .. source(d)), "all_reduce " .. op)
    end)
  end
  if d:find("float") or complex then
    T.test("all_reduce avg on " .. d, function()
      local x = input(d, rank)
      dist.all_reduce(x, {op = dist.ReduceOp.AVG})
      same(x, load("sum_" .. source(d)) / world, "all_reduce avg")
    end)
  end
  T.test("all_reduce of a non-contiguous " .. d .. " view writes through it", function()
    local base = torch.zeros({4, 3}, {dtype = d})
    local view = base:t()
    view:copy_(input(d, rank))
    dist.all_reduce(view)
    same(base:t(), load("sum_" .. source(d)), "all_reduce of a transposed view")
  end)
  T.test("broadcast on " .. d, function()
    local x = input(d, rank)
    dist.broadcast(x, world - 1)
    same(x, load(source(d) .. (world - 1)), "broadcast")
  end)
  T.test("reduce on " .. d, function()
    local x = input(d, rank)
    dist.reduce(x, 0)
    same(x, rank == 0 and load("sum_" .. source(d)) or load(source(d) .. rank), "reduce")
  end)
  T.test("all_gather and all_gather_into_tensor on " .. d, function()
    local list = {}
    for r = 1, world do list[r] = torch.zeros({3, 4}, {dtype = d}) end
    dist.all_gather(list, input(d, rank))
    for r = 1, world do same(list[r], load(source(d) .. (r - 1)), "all_gather [" .. r .. "]") end
    local flat = torch.zeros({world * 3, 4}, {dtype = d})
    dist.all_gather_into_tensor(flat, input(d, rank))
    for r = 1, world do same(flat[{{(r - 1) * 3 + 1, r * 3}}], load(source(d) .. (r - 1)), "all_gather_into_tensor") end
  end)
  T.test("gather and scatter on " .. d, function()
    local dst = world - 1
    local list = nil
    if rank == dst then
      list = {}
      for r = 1, world do list[r] = torch.zeros({3, 4}, {dtype = d}) end
    end
    dist.gather(input(d, rank), {gather_list = list, dst = dst})
    if rank == dst then
      for r = 1, world do same(list[r], load(source(d) .. (r - 1)), "gather [" .. r .. "]") end
    end
    local out = torch.zeros({3, 4}, {dtype = d})
    local parts = nil
    if rank == 0 then
      parts = {}
      for r = 1, world do parts[r] = input(d, r - 1) end
    end
    dist.scatter(out, {scatter_list = parts, src = 0})
    same(out, load(source(d) .. rank), "scatter")
  end)
  if d ~= "bool" then
    T.test("reduce_scatter and all_to_all on " .. d, function()
      local l = load("l" .. rank):to(d)
      local inputs = {}
      for j = 1, world do inputs[j] = l[j]:clone() end
      local out = torch.zeros({3, 4}, {dtype = d})
      dist.reduce_scatter(out, inputs)
      same(out, load("rs" .. rank), "reduce_scatter")
      local outs = {}
      for j = 1, world do outs[j] = torch.zeros({3, 4}, {dtype = d}) end
      dist.all_to_all(outs, inputs)
      for j = 1, world do same(outs[j], load("l" .. (j - 1))[rank + 1], "all_to_all [" .. j .. "]") end
    end)
  end
  T.test("send and recv around the ring on " .. d, function()
    local to, from = (rank + 1) % world, (rank - 1) % world
    local got = torch.zeros({3, 4}, {dtype = d})
    local r = dist.irecv(got, from)
    local s = dist.isend(input(d, rank), to)
    T.eq(r:wait(), from)
    s:wait()
    T.eq(s:is_completed(), true)
    same(got, load(source(d) .. from), "recv")
  end)
end

T.test("async_op returns a work handle that wait() completes", function()
  local x = input("float64", rank)
  local work = dist.all_reduce(x, {async_op = true})
  T.eq(work:wait(), true)
  T.eq(work:is_completed(), true)
  same(x, load("sum_x"), "async all_reduce")
  local b = dist.barrier{async_op = true}
  b:wait()
  T.eq(b:is_completed(), true)
end)

T.test("blocking send and recv from any source return the sender", function()
  if rank == 0 then
    for _ = 1, world - 1 do
      local t = torch.zeros({2}, {dtype = "int64"})
      local from = dist.recv(t)
      T.eq(t:tolist(), {from, 10 * from})
    end
  else
    dist.send(torch.tensor({rank, 10 * rank}, {dtype = "int64"}), 0)
  end
end)

T.test("mismatched shapes across ranks are an error on every rank", function()
  local x = rank == 0 and torch.zeros({3, 4}) or torch.zeros({4, 3})
  local ok, err = pcall(dist.all_reduce, x)
  T.eq(ok, false)
  local ranks = {}
  for r = 0, world - 1 do ranks[#ranks + 1] = "rank " .. r .. " float32 " .. (r == 0 and "{3,4}" or "{4,3}") end
  T.eq(err, "all_reduce: the ranks passed different tensors: " .. table.concat(ranks, ", "))
end)

T.test("mismatched dtypes across ranks are an error on every rank", function()
  local x = rank == 0 and torch.zeros({2}, {dtype = "float64"}) or torch.zeros({2}, {dtype = "int32"})
  local ok, err = pcall(dist.broadcast, x, 0)
  T.eq(ok, false)
  local ranks = {}
  for r = 0, world - 1 do ranks[#ranks + 1] = "rank " .. r .. " " .. (r == 0 and "float64" or "int32") .. " {2}" end
  T.eq(err, "broadcast: the ranks passed different tensors: " .. table.concat(ranks, ", "))
end)

T.test("the group still works after a mismatch", function()
  local x = input("int64", rank)
  dist.all_reduce(x)
  same(x, load("sum_x"), "all_reduce after a mismatch")
end)

T.test("bad arguments are errors naming the op and the values", function()
  local ok, err = pcall(dist.all_reduce, torch.zeros({2}, {dtype = "int32"}), dist.ReduceOp.AVG)
  T.eq(err, "all_reduce: ReduceOp.AVG needs a floating-point or complex tensor, got int32 (sum, then divide as the dtype allows)")
  ok, err = pcall(dist.all_reduce, torch.zeros({2}, {dtype = "complex64"}), dist.ReduceOp.MAX)
  T.eq(err, "all_reduce: ReduceOp.MAX is not defined on complex64 (complex numbers have no order)")
  ok, err = pcall(dist.broadcast, torch.zeros({2}), world)
  local members = {}
  for r = 0, world - 1 do members[#members + 1] = r end
  T.eq(err, "distributed.broadcast: src " .. world .. " is not a rank of the group (its ranks: {" ..
            table.concat(members, ",") .. "})")
  ok, err = pcall(dist.send, torch.zeros({2}), rank)
  T.eq(err, "send: a rank cannot send to itself (dst " .. rank .. ")")
  local list = {torch.zeros({2})}
  ok, err = pcall(dist.all_gather, list, torch.zeros({2}))
  T.eq(err, "all_gather: tensor_list has 1 tensors, expected one per rank (" .. world .. ")")
  T.eq(ok, false)
end)

T.test("new_group: the members reduce among themselves, the others are not members", function()
  local members = {0, world - 1}
  local g = dist.new_group(members)
  local member = rank == 0 or rank == world - 1
  T.eq(g:ranks(), members)
  T.eq(g:size(), 2)
  if member then
    T.eq(dist.get_world_size(g), 2)
    T.eq(g:rank(), rank == 0 and 0 or 1)
    local x = input("float32", rank)
    dist.all_reduce(x, {group = g})
    same(x, load("x0") + load("x" .. (world - 1)), "all_reduce in a group")
  else
    T.eq(g:rank(), -1)
    local ok, err = pcall(dist.get_world_size, g)
    T.eq(err, "distributed.get_world_size: this process is not a member of the group")
  end
end)

T.test("new_group's keywords, and its errors (raised before any rank communicates)", function()
  local g = dist.new_group{ranks = {world - 1, 0}, timeout = 5, backend = "mpi"}
  T.eq(g:ranks(), {0, world - 1})
  if rank == 0 or rank == world - 1 then
    local x = torch.ones({2})
    dist.all_reduce(x, {group = g})
    T.eq(x:tolist(), {2, 2})
  end
  local ok, err = pcall(dist.init_process_group, {backend = "mpi"})
  T.eq(err, "init_process_group: the default process group is initialized already (destroy_process_group() first)")
  ok, err = pcall(dist.new_group, {0, world})
  T.eq(err, "new_group: rank " .. world .. " is not a rank of the world (0.." .. (world - 1) .. ")")
  ok, err = pcall(dist.new_group, {0, 0})
  T.eq(err, "new_group: ranks must be distinct")
  ok, err = pcall(dist.new_group, {ranks = {0, 1}, backend = "nccl"})
  T.eq(err, "distributed.new_group: backend 'nccl' differs from the default group's 'mpi' (one backend per process)")
  ok, err = pcall(dist.new_group, {ranks = {0, 1}, timeout = 0})
  T.eq(err, "distributed.new_group: timeout must be > 0 seconds, got 0")
end)

T.test("the collectives' keywords: src=, dst=, op=, tag=, async_op=, group=", function()
  local x = input("float64", rank)
  dist.broadcast(x, {src = world - 1})
  same(x, load("x" .. (world - 1)), "broadcast{src=}")
  x = input("float64", rank)
  dist.reduce(x, {dst = world - 1, op = dist.ReduceOp.MAX})
  same(x, rank == world - 1 and load("max_x") or load("x" .. rank), "reduce{dst=, op=MAX}")
  local l = load("l" .. rank)
  local inputs = {}
  for j = 1, world do inputs[j] = l[j]:clone() end
  local out = torch.zeros({3, 4}, {dtype = torch.float64})
  dist.reduce_scatter(out, inputs, {op = dist.ReduceOp.MIN})
  local want = load("l0")[rank + 1]
  for j = 1, world - 1 do want = torch.minimum(want, load("l" .. j)[rank + 1]) end
  same(out, want, "reduce_scatter{op=MIN}")
  local list = {}
  for r = 1, world do list[r] = torch.zeros({3, 4}, {dtype = torch.float64}) end
  local work = dist.all_gather(list, input("float64", rank), {async_op = true})
  work:wait()
  for r = 1, world do same(list[r], load("x" .. (r - 1)), "all_gather{async_op=}") end
  -- Tags: rank 0 sends two messages; rank 1 receives the second tag first.
  if rank == 0 then
    local a = dist.isend(torch.tensor({1.0}), 1, {tag = 7})
    local b = dist.isend(torch.tensor({2.0}), 1, {tag = 8})
    a:wait()
    b:wait()
  elseif rank == 1 then
    local second, first = torch.zeros({1}), torch.zeros({1})
    T.eq(dist.recv(second, 0, {tag = 8}), 0)
    T.eq(dist.recv(first, {src = 0, tag = 7}), 0)
    T.eq({first:item(), second:item()}, {1, 2})
  end
  T.eq(dist.get_backend(dist.new_group({0, 1})), "mpi")
  local g = dist.new_group({0, 1})
  dist.destroy_process_group(g)
  local ok, err = pcall(dist.all_reduce, torch.ones({1}), {group = g})
  T.eq(err, "distributed.all_reduce: the process group was destroyed")
end)

-- Each collective's optional arguments in their other spellings (positional, group=,
-- async_op=, tag=), on a group of every rank, against the values the default forms give.
T.test("every positional and keyword form of the collectives' arguments", function()
  local all = {}
  for r = 0, world - 1 do all[#all + 1] = r end
  local g = dist.new_group(all)
  T.eq({dist.get_rank(g), dist.get_rank{group = g}}, {rank, rank})
  T.eq({dist.get_world_size{group = g}, dist.get_backend(g), dist.get_backend{group = g}}, {world, "mpi", "mpi"})
  dist.barrier(g)
  dist.barrier{group = g, async_op = true}:wait()
  local function val(r) return torch.full({3}, r + 1, {dtype = "float64"}) end
  local function zeros(n) return torch.zeros(n, {dtype = "float64"}) end
  local list = {}
  for r = 1, world do list[r] = zeros(3) end
  dist.all_gather(list, val(rank), {group = g})
  for r = 1, world do same(list[r], val(r - 1), "all_gather{group=}") end
  local flat = zeros(3 * world)
  dist.all_gather_into_tensor(flat, val(rank), {group = g, async_op = true}):wait()
  same(flat, torch.cat(list), "all_gather_into_tensor{group=, async_op=}")
  local outs, ins = {}, {}
  for r = 1, world do outs[r], ins[r] = zeros(1), torch.full({1}, 10 * rank + r - 1, {dtype = "float64"}) end
  dist.all_to_all(outs, ins, {group = g, async_op = true}):wait()
  for r = 1, world do same(outs[r], torch.full({1}, 10 * (r - 1) + rank, {dtype = "float64"}), "all_to_all") end
  local b = val(rank)
  dist.broadcast(b, 0, {async_op = true}):wait()
  same(b, val(0), "broadcast{async_op=}")
  -- gather and scatter with the list and the root positionally, then as keywords with group=.
  local gl = rank == 0 and {} or nil
  if gl then for r = 1, world do gl[r] = zeros(3) end end
  dist.gather(val(rank), gl, 0)
  if gl then for r = 1, world do same(gl[r], val(r - 1), "gather(t, list, dst)") end end
  dist.gather(val(rank), {gather_list = gl, dst = 0, group = g, async_op = true}):wait()
  if gl then for r = 1, world do same(gl[r], val(r - 1), "gather{group=, async_op=}") end end
  local sl = rank == 0 and {} or nil
  if sl then for r = 1, world do sl[r] = val(r - 1) end end
  local got = zeros(3)
  dist.scatter(got, sl, 0)
  same(got, val(rank), "scatter(t, list, src)")
  got = zeros(3)
  dist.scatter(got, {scatter_list = sl, src = 0, group = g, async_op = true}):wait()
  same(got, val(rank), "scatter{group=, async_op=}")
  -- reduce and reduce_scatter with op positionally, then group= and async_op=.
  local sum = zeros(3)
  for r = 0, world - 1 do sum = sum + val(r) end
  local x = val(rank)
  dist.reduce(x, 0, dist.ReduceOp.SUM)
  if rank == 0 then same(x, sum, "reduce(t, dst, op)") end
  x = val(rank)
  dist.reduce(x, 0, {group = g, async_op = true}):wait()
  if rank == 0 then same(x, sum, "reduce{group=, async_op=}") end
  local parts = {}
  for r = 1, world do parts[r] = val(r - 1) * (rank + 1) end
  local total = world * (world + 1) / 2
  local out = zeros(3)
  dist.reduce_scatter(out, parts, dist.ReduceOp.SUM)
  same(out, val(rank) * total, "reduce_scatter(out, list, op)")
  out = zeros(3)
  dist.reduce_scatter(out, parts, {group = g, async_op = true}):wait()
  same(out, val(rank) * total, "reduce_scatter{group=, async_op=}")
  -- Point to point between ranks 0 and 1: dst=/src=, group= and tag= as keywords.
  if rank == 0 then
    dist.send(val(7), {dst = 1, group = g, tag = 3})
    dist.isend(val(8), {dst = 1, group = g, tag = 5}):wait()
  elseif rank == 1 then
    local t = zeros(3)
    T.eq(dist.recv(t, {src = 0, group = g, tag = 3}), 0)
    same(t, val(7), "send/recv{dst=, src=, group=, tag=}")
    local w = dist.irecv(t, {src = 0, group = g, tag = 5})
    T.eq(w:wait(), 0)
    same(t, val(8), "isend/irecv{dst=, src=, group=, tag=}")
  end
  if rank == 0 then
    dist.send(val(9), 1, {group = g})
  elseif rank == 1 then
    local t = zeros(3)
    T.eq(dist.recv(t, {group = g}), 0)
    same(t, val(9), "recv{group=} from any rank")
  end
  dist.destroy_process_group{group = g}
end)

T.test("barrier", function() dist.barrier() end)

dist.destroy_process_group()
T.eq(dist.is_initialized(), false)
T.done()
