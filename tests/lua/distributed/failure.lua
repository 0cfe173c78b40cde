-- One rank fails, the others must end too (run by tests/lua/test_distributed.sh):
--   mpirun -n N tide tests/lua/distributed/failure.lua MODE
-- The last rank raises a Lua error; the others wait in a collective (MODE "wait") or compute
-- in a Lua loop that never ends by itself (MODE "busy"). Every rank must exit with an error
-- that names the failing rank and its message, well within the timeout. MODE "hang": the
-- last rank computes forever instead, the others' all_reduce times out after 3 s, and their
-- failure ends the last rank.
local dist = torch.distributed
local mode = assert(arg[1], "usage: failure.lua wait|busy|hang")
dist.init_process_group{backend = "mpi", timeout = mode == "hang" and 3 or 20}
local rank, world = dist.get_rank(), dist.get_world_size()
dist.barrier()
if rank == world - 1 and mode ~= "hang" then error("rank " .. rank .. " gives up on purpose") end
if mode == "wait" or (mode == "hang" and rank < world - 1) then
  dist.all_reduce(torch.ones({4}))
else
  local x = 0
  while true do x = x + 1 end
end
print("rank " .. rank .. " was not stopped")
