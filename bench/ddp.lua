-- DistributedDataParallel throughput and the cost of its all-reduces (bench/ddp.sh runs it on
-- 1 and 2 ranks, one engine thread each; docs/distributed.md models larger jobs from it):
--   mpirun -n N tide bench/ddp.lua [steps]
-- Trains an MLP (64 -> 512 -> 512 -> 10, float32, 0.30 M parameters = 1.2 MB of gradients)
-- with SGD on random batches of 256 samples per rank (weak scaling: each rank adds its own
-- batch). Rank 0 prints one line per measurement:
--   plain   ranks=1 ...          the model without DDP (only on 1 rank): the compute alone
--   ddp     ranks=N step_ms= samples_per_s= wait_ms=   wait_ms: per step, the time backward's
--           end waited for the all-reduces still in flight (what DDP adds beyond overlap)
--   allreduce ranks=N bytes= us=   one blocking all_reduce of a float32 tensor of that size
local dist, nn, F, optim = torch.distributed, torch.nn, torch.nn.functional, torch.optim
local steps = tonumber(arg[1] or "20")
dist.init_process_group{backend = "mpi"}
torch.set_num_threads(1)
local rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(rank)
local batch = 256
local x = torch.randn({batch, 64})
local y = torch.randint(1, 11, {batch})

local function model()
  torch.manual_seed(0)
  return nn.Sequential(nn.Linear(64, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
end

-- Seconds per step of `steps` SGD steps after 3 warm-up steps.
local function time_steps(net)
  local opt = optim.SGD(net:parameters(), {lr = 0.01})
  local function step()
    opt:zero_grad()
    F.cross_entropy(net(x), y):backward()
    opt:step()
  end
  for _ = 1, 3 do step() end
  dist.barrier()
  local t0 = torch.utils.clock()
  for _ = 1, steps do step() end
  dist.barrier()
  return (torch.utils.clock() - t0) / steps
end

local function report(fmt, ...) if rank == 0 then print(string.format(fmt, ...)) end end

if world == 1 then
  local s = time_steps(model())
  report("plain     ranks=1 step_ms=%.2f samples_per_s=%.0f", s * 1e3, batch / s)
end
-- Buckets of 0.25 MB (PyTorch's default 25 MB would put this model in one): five all-reduces
-- that can start while backward computes the earlier layers' gradients.
local ddp = nn.parallel.DistributedDataParallel(model(), {bucket_cap_mb = 0.25})
local before = ddp:_reducer_stats()
local s = time_steps(ddp)
local stats = ddp:_reducer_stats()
local wait = (stats.wait_seconds - before.wait_seconds) / (stats.iterations - before.iterations)
report("ddp       ranks=%d step_ms=%.2f samples_per_s=%.0f wait_ms=%.3f buckets=%d", world, s * 1e3,
       world * batch / s, wait * 1e3, stats.buckets)

for _, bytes in ipairs{4096, 65536, 1048576, 4194304} do
  local t = torch.ones({bytes // 4})
  for _ = 1, 3 do dist.all_reduce(t) end
  local n = bytes >= 1048576 and 20 or 200
  dist.barrier()
  local t0 = torch.utils.clock()
  for _ = 1, n do dist.all_reduce(t) end
  report("allreduce ranks=%d bytes=%d us=%.1f", world, bytes, (torch.utils.clock() - t0) / n * 1e6)
end
dist.destroy_process_group()
