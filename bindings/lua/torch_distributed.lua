-- torch.distributed's Lua-written part: ReduceOp, nn.parallel.DistributedDataParallel and
-- torch.utils.data.distributed.DistributedSampler. The process groups and collectives are
-- C++ (bindings/bind_distributed.cpp, tensor/distributed/). Receives the torch module table.
local torch = ...
local dist = torch.distributed
local nn = torch.nn
local util = nn._util

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

-- The reductions, as the collectives take them (ReduceOp.SUM or "sum").
dist.ReduceOp = {SUM = "sum", AVG = "avg", PRODUCT = "product", MIN = "min", MAX = "max"}

-- The world rank of a group's first member (0 for the default group), and the keywords that
-- name the group (nil for the default one).
local function first_rank(group)
  return group and group:ranks()[1] or 0
end
local function group_kw(group) return group and {group = group} or nil end

---------------------------------------------------------------------------------------------
-- nn.parallel.DistributedDataParallel(module[, {process_group=, bucket_cap_mb=25,
-- find_unused_parameters=false, broadcast_buffers=true}]): data parallel training, one
-- process per replica. At construction every rank receives the first rank's parameters and
-- buffers (a rank whose shapes differ is an error). A forward under grad mode arms the
-- reducer (tensor/distributed/reducer.hpp): during the next backward, gradients are averaged
-- over the ranks in buckets of about bucket_cap_mb MB whose all-reduces start as soon as
-- their gradients are ready, overlapping the rest of backward. With broadcast_buffers every
-- forward first copies the first rank's buffers to all. no_sync() accumulates gradients
-- locally (gradient accumulation); the next synchronized backward averages the sum.
-- state_dict keys carry PyTorch's "module." prefix.

nn.parallel = nn.parallel or {}
local DDP = nn.Module:extend("DistributedDataParallel")
nn.parallel.DistributedDataParallel = DDP

local ddp_options = {"process_group", "bucket_cap_mb", "find_unused_parameters", "broadcast_buffers"}

-- Copies the first rank's buffers to every rank.
local function broadcast_buffers(self)
  local group = self._group
  local buffers = self.module:buffers()
  if #buffers == 0 then return end
  torch.no_grad(function()
    for _, b in ipairs(buffers) do dist.broadcast(b, first_rank(group), group_kw(group)) end
  end)
end

function DDP:init(module, ...)
  local op = "DistributedDataParallel"
  local o = util.args(op, ddp_options, 0,
                      {bucket_cap_mb = 25, find_unused_parameters = false, broadcast_buffers = true}, ...)
  if not nn.is_module(module) then fail(op, "expected a module, got %s", util.describe(module)) end
  util.check_number(op, "bucket_cap_mb", o.bucket_cap_mb)
  util.check_bool(op, "find_unused_parameters", o.find_unused_parameters)
  util.check_bool(op, "broadcast_buffers", o.broadcast_buffers)
  local group = o.process_group
  if not dist.is_initialized() then
    fail(op, "the default process group is not initialized (call torch.distributed.init_process_group first)")
  end
  self.module = module
  self._group = group
  local names, params = {}, {}
  for name, p in module:named_parameters() do
    if p.requires_grad then
      names[#names + 1] = name
      params[#params + 1] = p
    end
  end
  torch.no_grad(function()
    for _, p in ipairs(module:parameters()) do dist.broadcast(p, first_rank(group), group_kw(group)) end
  end)
  broadcast_buffers(self)
  self._reducer = dist._Reducer(params, names, {group = group, bucket_cap_mb = o.bucket_cap_mb,
                                                find_unused_parameters = o.find_unused_parameters})
  self._require_sync = true
  self.broadcast_buffers = o.broadcast_buffers
end

function DDP:forward(...)
  if self.broadcast_buffers then broadcast_buffers(self) end
  if torch.is_grad_enabled() and self._require_sync then self._reducer:prepare() end
  return self.module(...)
end

local restore_sync = {__close = function(guard) guard.ddp._require_sync = guard.previous end}

-- ddp:no_sync(fn, ...) -> fn's results: runs fn (forwards and backwards) without averaging
-- gradients; `local _ <close> = ddp:no_sync()` does the same until the scope ends.
function DDP:no_sync(fn, ...)
  local previous = self._require_sync
  if fn == nil then
    self._require_sync = false
    return setmetatable({ddp = self, previous = previous}, restore_sync)
  end
  if type(fn) ~= "function" then
    fail("DistributedDataParallel:no_sync", "expected a function or nothing, got %s", util.describe(fn))
  end
  self._require_sync = false
  local results = table.pack(pcall(fn, ...))
  self._require_sync = previous
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

-- The reducer's buckets and the time backward waited for their all-reduces (bench/ddp.lua).
function DDP:_reducer_stats() return self._reducer:stats() end

---------------------------------------------------------------------------------------------
-- DistributedSampler(dataset[, {num_replicas=, rank=, shuffle=true, seed=0, drop_last=false}]):
-- each rank's share of the dataset's indices, as PyTorch computes it: the indices 1..n (in a
-- random order when shuffling, drawn from a torch.Generator seeded with seed + epoch, the
-- same on every rank), padded to a multiple of num_replicas by repeating the first ones (with
-- drop_last: cut down to one), then every num_replicas-th from position rank + 1.
-- num_replicas and rank default to the default group's. set_epoch(e) before each epoch
-- changes the order; #sampler is the number of indices a rank gets.

torch.utils.data = torch.utils.data or {}
torch.utils.data.distributed = torch.utils.data.distributed or {}
local Sampler = {name = "DistributedSampler"}
Sampler.__index = Sampler
torch.utils.data.distributed.DistributedSampler = Sampler

local function ceil_div(a, b) return -((-a) // b) end

setmetatable(Sampler, {__call = function(cls, dataset, ...)
  local op = "DistributedSampler"
  local o = util.args(op, {"num_replicas", "rank", "shuffle", "seed", "drop_last"}, 0,
                      {shuffle = true, seed = 0, drop_last = false}, ...)
  local ok, n = pcall(function() return #dataset end)
  if not ok or math.type(n) ~= "integer" then fail(op, "expected a dataset with a length, got %s", util.describe(dataset)) end
  local replicas, rank = o.num_replicas, o.rank
  if replicas == nil or rank == nil then
    if not dist.is_initialized() then
      fail(op, "num_replicas and rank come from the default process group, which is not initialized; give them")
    end
  end
  replicas = util.check_int(op, "num_replicas", replicas or dist.get_world_size(), 1)
  rank = util.check_int(op, "rank", rank or dist.get_rank(), 0)
  if rank >= replicas then fail(op, "invalid rank %d, rank should be in the interval [0, %d]", rank, replicas - 1) end
  util.check_bool(op, "shuffle", o.shuffle)
  util.check_int(op, "seed", o.seed, 0)
  util.check_bool(op, "drop_last", o.drop_last)
  local self = setmetatable({dataset = dataset, num_replicas = replicas, rank = rank, shuffle = o.shuffle,
                             seed = o.seed, drop_last = o.drop_last, epoch = 0}, cls)
  if o.drop_last and n % replicas ~= 0 then
    self.num_samples = ceil_div(n - replicas, replicas)
  else
    self.num_samples = ceil_div(n, replicas)
  end
  self.total_size = self.num_samples * replicas
  return self
end})

-- This rank's indices for the current epoch, as a list.
function Sampler:indices()
  local n = #self.dataset
  local indices
  if self.shuffle then
    indices = torch.randperm(n, {generator = torch.Generator():manual_seed(self.seed + self.epoch)}):tolist()
  else
    indices = {}
    for i = 1, n do indices[i] = i end
  end
  if not self.drop_last then
    local padding = self.total_size - n
    local base = #indices
    for k = 1, padding do indices[base + k] = indices[(k - 1) % base + 1] end
  else
    for k = #indices, self.total_size + 1, -1 do indices[k] = nil end
  end
  local mine = {}
  for k = self.rank + 1, self.total_size, self.num_replicas do mine[#mine + 1] = indices[k] end
  return mine
end

-- for i in sampler:iter() do ... end: this rank's indices (1-based) for the current epoch.
function Sampler:iter()
  local mine, k = self:indices(), 0
  return function()
    k = k + 1
    return mine[k]
  end
end

function Sampler:len() return self.num_samples end
Sampler.__len = Sampler.len

function Sampler:set_epoch(epoch)
  self.epoch = util.check_int("DistributedSampler:set_epoch", "epoch", epoch, 0)
end
