-- Workload 5's per-op cases (bench/perop_cases.lua) for instruction counts under callgrind, which a loaded machine
-- does not change: run each case with n iterations and with 0 (after the same warm-up),
-- and divide the difference by n (bench/perop.sh does that for every case).
-- Usage: tide bench/perop.lua <case> <n>
local case, n = arg[1], tonumber(arg[2] or "10000")

local cases = dofile((arg[0]:match("(.*/)") or "./") .. "perop_cases.lua")

local setup = cases[case] or error("perop: unknown case '" .. tostring(case) .. "'")
local op = setup()
-- Warm-up long enough for the garbage collector to reach its steady state, in which the
-- pools and caches of the allocators hold every block a cycle of temporaries needs (the
-- autograd steps make about 30 tensors a call, the others one).
local warm = ({tiny_autograd_step = 1000, lstsq_grad_d100 = 1000, linear_regression_step = 1000})[case] or 30000
for _ = 1, warm do op() end
for _ = 1, n do op() end
