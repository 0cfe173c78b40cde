-- nn.parallel.DistributedDataParallel and DistributedSampler on 2 ranks (run by
-- tests/lua/test_distributed.sh: mpirun -n 2 tide tests/lua/distributed/ddp.lua). Every rank
-- prints its own "N passed, M failed".
local T = dofile((arg[0]:match("(.*/)") or "./") .. "../harness.lua")
local dist, nn, F, optim = torch.distributed, torch.nn, torch.nn.functional, torch.optim
local DDP = nn.parallel.DistributedDataParallel

dist.init_process_group("mpi", {timeout = 60})  -- the backend positionally (collectives.lua: as a keyword)
local rank, world = dist.get_rank(), dist.get_world_size()
assert(world == 2, "ddp.lua runs on 2 ranks")

-- The digits (data/digits.csv.gz): 8x8 images scaled to [0, 1], classes 1..10.
local digits = np.loadtxt((arg[0]:match("(.*/)") or "./") .. "../../../data/digits.csv.gz", {delimiter = ","})
local images = torch.from_numpy(digits[{":", {1, 64}}] / 16):double()
local labels = torch.from_numpy(digits[{":", 65}]):long() + 1

-- The digits MLP, its weights drawn from a seed that differs per rank (DDP must replace
-- them by rank 0's).
local function mlp(seed)
  torch.manual_seed(seed)
  return nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10)):double()
end

local function params_of(model)
  local out = {}
  for name, p in model:named_parameters() do out[name] = p:detach():clone() end
  return out
end

local function max_diff(a, b)
  local m = 0
  for name, t in pairs(a) do m = math.max(m, (t - b[name]):abs():max():item()) end
  return m
end

-- `steps` of SGD on batches of 64 digits: the single process on the whole batch, or this rank
-- on its half (rows rank * 32 + 1 .. rank * 32 + 32) with DDP averaging the gradients.
local function train(model, steps, half, momentum)
  local opt = optim.SGD(model:parameters(), {lr = 0.5, momentum = momentum})
  for s = 1, steps do
    local first = (s - 1) * 64 + 1
    local lo, hi = first, first + 63
    if half then lo, hi = first + rank * 32, first + rank * 32 + 31 end
    opt:zero_grad()
    F.cross_entropy(model(images[{{lo, hi}}]), labels[{{lo, hi}}]):backward()
    opt:step()
  end
end

T.test("DDP training of the digits MLP on 2 ranks gives the parameters of single-process training on the full batch", function()
  local reference = mlp(1)
  train(reference, 12, false, 0.9)
  local model = mlp(1 + rank)
  -- Small buckets: the 6 parameters go in several all-reduces that start during backward.
  local ddp = DDP(model, {bucket_cap_mb = 0.002})
  train(ddp, 12, true, 0.9)
  local stats = ddp:_reducer_stats()
  -- Buckets of at most 2 KB in reverse parameter order: {4.bias, 4.weight, 2.bias}, then one
  -- per larger tensor; every all-reduce started from the gradient hooks, during backward.
  T.eq(stats.bucket_params, {{6, 5, 4}, {3}, {2}, {1}})
  T.eq(stats.iterations, 12)
  T.eq(stats.launched_in_backward, 4 * 12)
  local d = max_diff(params_of(model), params_of(reference))
  T.truthy(d < 1e-12, "parameters differ from single-process training by " .. d)
end)

-- A layer with a buffer, to see it broadcast.
local Counted = nn.Module:extend("Counted")
function Counted:init()
  self.lin = nn.Linear(3, 2)
  self:register_buffer("count", torch.zeros({2}, {dtype = torch.float64}))
end
function Counted:forward(x) return self.lin(x) end

T.test("construction broadcasts rank 0's parameters and buffers", function()
  local model = Counted():double()
  torch.no_grad(function()
    for _, p in ipairs(model:parameters()) do p:fill_(rank + 1) end
    model.count:fill_(10 * (rank + 1))
  end)
  local ddp = DDP(model)
  T.eq(model.lin.weight:tolist(), {{1, 1, 1}, {1, 1, 1}})
  T.eq(model.lin.bias:tolist(), {1, 1})
  T.eq(model.count:tolist(), {10, 10})
  -- broadcast_buffers (the default): every forward copies rank 0's buffers first.
  model.count:fill_(rank)
  ddp(torch.zeros({1, 3}, {dtype = torch.float64}))
  T.eq(model.count:tolist(), {0, 0})
end)

T.test("broadcast_buffers=false leaves each rank's buffers; process_group= reduces over that group", function()
  local model = Counted():double()
  local ddp = DDP(model, {broadcast_buffers = false, process_group = dist.new_group({0, 1})})
  model.count:fill_(rank)
  ddp(torch.zeros({1, 3}, {dtype = torch.float64}))
  T.eq(model.count:tolist(), {rank, rank})
  torch.no_grad(function() model.lin.weight:fill_(1) end)
  ddp(torch.full({1, 3}, rank + 1, {dtype = torch.float64})):sum():backward()
  T.eq(model.lin.weight.grad:tolist(), {{1.5, 1.5, 1.5}, {1.5, 1.5, 1.5}})  -- (1 + 2) / 2
end)

T.test("state_dict keys carry the module. prefix", function()
  local ddp = DDP(mlp(1))
  T.eq(T.sorted_keys(ddp:state_dict()), {"module.0.bias", "module.0.weight", "module.2.bias", "module.2.weight",
                                         "module.4.bias", "module.4.weight"})
end)

T.test("no_sync accumulates locally; the next synchronized backward averages the sum", function()
  local model = nn.Linear(2, 1, {bias = false}):double()
  local ddp = DDP(model)
  torch.no_grad(function() model.weight:copy_(torch.tensor({{1, 1}}, {dtype = torch.float64})) end)
  local x = torch.tensor({{rank + 1, 0}}, {dtype = torch.float64})
  ddp:no_sync(function() ddp(x):sum():backward() end)
  T.eq(model.weight.grad:tolist(), {{rank + 1, 0}})  -- this rank's own gradient
  do
    local _ <close> = ddp:no_sync()
    ddp(x):sum():backward()
  end
  T.eq(model.weight.grad:tolist(), {{2 * (rank + 1), 0}})
  ddp(x):sum():backward()
  -- Rank 0 holds 3 * 1, rank 1 3 * 2: the average is 4.5 on both.
  T.eq(model.weight.grad:tolist(), {{4.5, 0}})
end)

-- A module of two heads of which forward uses one.
local TwoHeads = nn.Module:extend("TwoHeads")
function TwoHeads:init()
  self.a = nn.Linear(1, 1, {bias = false})
  self.b = nn.Linear(1, 1, {bias = false})
end
function TwoHeads:forward(x, use_b) return use_b and self.b(x) or self.a(x) end

local function two_heads()
  local model = TwoHeads():double()
  torch.no_grad(function() model.a.weight:fill_(1); model.b.weight:fill_(1) end)
  return model
end

T.test("find_unused_parameters: a parameter unused on one rank averages as zero there", function()
  local model = two_heads()
  local ddp = DDP(model, {find_unused_parameters = true})
  local x = torch.tensor({{2}}, {dtype = torch.float64})
  ddp(x, rank == 1):sum():backward()
  T.eq(model.a.weight.grad:tolist(), {{1}})  -- (2 + 0) / 2
  T.eq(model.b.weight.grad:tolist(), {{1}})  -- (0 + 2) / 2
  -- Unused on every rank: no grad, as in PyTorch.
  local fresh = two_heads()
  local ddp2 = DDP(fresh, {find_unused_parameters = true})
  ddp2(x, false):sum():backward()
  T.eq(fresh.a.weight.grad:tolist(), {{2}})
  T.eq(fresh.b.weight.grad, nil)
  -- The one bucket holds b's weight, which got no gradient: its all-reduce starts at the end.
  T.eq(ddp2:_reducer_stats().launched_in_backward, 0)
end)

T.test("without find_unused_parameters an unused parameter is an error naming it", function()
  local ddp = DDP(two_heads())
  local x = torch.tensor({{2}}, {dtype = torch.float64})
  local ok, err = pcall(function() ddp(x, false):sum():backward() end)
  T.eq(ok, false)
  T.eq(err, "DistributedDataParallel: parameter 'b.weight' received no gradient in this backward pass; pass " ..
            "{find_unused_parameters=true} when some parameters do not take part in the loss")
end)

T.test("DistributedSampler splits the indices as PyTorch does (no shuffle)", function()
  local data = torch.utils.data.TensorDataset(torch.arange(11))
  local S = torch.utils.data.distributed.DistributedSampler
  local s = S(data, {shuffle = false})
  T.eq(#s, 6)
  T.eq(s:indices(), rank == 0 and {1, 3, 5, 7, 9, 11} or {2, 4, 6, 8, 10, 1})
  local d = S(data, {shuffle = false, drop_last = true, num_replicas = 3, rank = 2})
  T.eq(d:indices(), {3, 6, 9})
end)

T.test("DistributedSampler shuffles the same permutation on every rank, per epoch", function()
  local data = torch.utils.data.TensorDataset(torch.arange(10))
  local S = torch.utils.data.distributed.DistributedSampler
  local s = S(data, {seed = 3})
  local mine = torch.tensor(s:indices(), {dtype = torch.int64})
  local all = {torch.zeros({5}, {dtype = torch.int64}), torch.zeros({5}, {dtype = torch.int64})}
  dist.all_gather(all, mine)
  local seen = torch.cat(all):sort():tolist()
  T.eq(seen, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  local first = s:indices()
  s:set_epoch(1)
  T.truthy(not T.deep_eq(s:indices(), first), "set_epoch changes the order")
end)

T.test("DistributedSampler and DDP check their arguments", function()
  local S = torch.utils.data.distributed.DistributedSampler
  local ds = torch.utils.data.TensorDataset(torch.zeros(4))
  local s = S(ds)
  T.eq(s.num_replicas, 2)
  T.eq(s.rank, rank)
  local ok, err = pcall(s.set_epoch, s, 1, 2)
  T.eq(err, "DistributedSampler:set_epoch: unexpected argument 2 (the number 2): DistributedSampler:set_epoch " ..
            "takes 1 argument and no keywords")
  ok, err = pcall(S, ds, {num_replicas = 2, rank = 2})
  T.eq(err, "DistributedSampler: invalid rank 2, rank should be in the interval [0, 1]")
  ok, err = pcall(S, ds, {bogus = 1})
  T.eq(err, "DistributedSampler: unknown keyword 'bogus' (valid: num_replicas, rank, shuffle, seed, drop_last)")
  ok, err = pcall(DDP, nn.Linear(1, 1), {bucket_size = 1})
  T.eq(err, "DistributedDataParallel: unknown keyword 'bucket_size' (valid: process_group, bucket_cap_mb, " ..
            "find_unused_parameters, broadcast_buffers)")
  ok, err = pcall(DDP, 5)
  T.eq(err, "DistributedDataParallel: expected a module, got 5")
end)

dist.destroy_process_group()
T.done()
