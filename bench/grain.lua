-- Where should pointwise ops start using more than one thread? Times a + b into an existing
-- output (float32) at growing sizes on 1 thread and on all threads; the cutoff
-- (kParallelGrain in tensor/parallel.hpp) is the size from which the threaded run wins.
-- Usage: tide bench/grain.lua
local clock = torch.utils.clock
local threads = torch.get_num_threads()
print("elements\t1 thread (us)\t" .. threads .. " threads (us)")
for _, n in ipairs({16384, 32768, 65536, 131072, 262144, 524288, 1048576, 4194304}) do
  local a, b, out = torch.rand(n), torch.rand(n), torch.empty(n)
  local row = {n}
  for _, th in ipairs({1, threads}) do
    torch.set_num_threads(th)
    local reps = math.max(10, 2000000 // n)
    local best = math.huge
    for _ = 1, 5 do
      local t0 = clock()
      for _ = 1, reps do torch.add(a, b, {out = out}) end
      best = math.min(best, (clock() - t0) / reps)
    end
    row[#row + 1] = string.format("%.2f", best * 1e6)
  end
  print(table.concat(row, "\t"))
end
torch.set_num_threads(threads)
