-- The per-op path of the arithmetic operators (issue 5's overhead work): the operand
-- reading of the binary bindings, the flat fast path of small contiguous ops next to the
-- general ones, and the collector pacing that keeps a loop of small ops within bounds.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"

T.test("a + b on small tensors: flat, broadcast, scalar, promoted and out= results", function()
  local a = torch.tensor({1, 2, 3}, {dtype = "float32"})
  local b = torch.tensor({10, 20, 30}, {dtype = "float32"})
  T.eq((a + b):tolist(), {11, 22, 33})
  T.eq((a - b).dtype, "float32")
  T.eq((2 * a):tolist(), {2, 4, 6})
  T.eq((a / 2):tolist(), {0.5, 1, 1.5})
  T.eq((10 - a):tolist(), {9, 8, 7})
  local m = torch.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = "float64"})
  T.eq((m + a):tolist(), {{2, 4, 6}, {5, 7, 9}})   -- broadcast, float32 + float64 -> float64
  T.eq((m + a).dtype, "float64")
  T.eq((m:t() * 2):tolist(), {{2, 8}, {4, 10}, {6, 12}})  -- a non-contiguous operand
  local i = torch.tensor{1, 2, 3}
  T.eq((i + i):tolist(), {2, 4, 6})
  T.eq((i + i).dtype, "int64")
  T.eq((i + 0.5):tolist(), {1.5, 2.5, 3.5})
  local out = torch.zeros(3, {dtype = "float64"})
  local r = torch.add(a, b, {out = out})
  T.eq(out:tolist(), {11, 22, 33})
  T.eq(r:tolist(), {11, 22, 33})
end)

T.test("binary operators: operand errors name the argument", function()
  local a = torch.tensor{1, 2}
  T.error_usable(function() return torch.add(1, 2) end, "add: expected at least one tensor argument")
  T.error_usable(function() return a + "x" end, "add: expected a tensor or a number as argument 2, got string")
  T.error_usable(function() return {} * a end, "mul: expected a tensor or a number as argument 1, got table")
  T.error_usable(function() return torch.sub(a, nil) end, "sub: expected a tensor or a number as argument 2, got nothing")
  T.error_usable(function() return a + torch.tensor{1, 2, 3} end, "add: shapes {2} and {3} cannot be broadcast")
  local freed = torch.tensor{1, 2}
  freed:free()
  T.error_usable(function() return a + freed end, "this tensor was freed")
  T.error_usable(function() return torch.add(a, a, {out = 3}) end, "add: keyword 'out' must be a tensor, got a number")
end)

-- The Lua heap before and its peak during `ops` sums of two 10-element tensors, sampled
-- every `every` ops.
local function heap_during_small_ops(ops, every)
  local a, b = torch.rand(10, {dtype = "float64"}), torch.rand(10, {dtype = "float64"})
  collectgarbage("collect")
  local base, peak = collectgarbage("count"), 0
  for k = 1, ops do
    local _ = a + b
    if k % every == 0 then peak = math.max(peak, collectgarbage("count")) end
  end
  return base, peak
end

T.test("a loop of small ops keeps the Lua heap bounded", function()
  local base, peak = heap_during_small_ops(300000, 1000)
  -- With Lua's default pause the heap grew without bound here (finalized temporaries count
  -- as live when the next cycle's threshold is set): 10 MB after 400 thousand ops. Bounded,
  -- the peak is a multiple of the live heap (the pause is relative: about 2.7 times it), so
  -- the bound is one too; a fixed margin failed as the library's own Lua code grew.
  T.truthy(peak < 3 * base, string.format("heap grew from %.0f KB to %.0f KB", base, peak))
end)

-- Each pushed tensor also counts its C++ objects (bindings/lua_api.cpp, kTensorObjectBytes),
-- so in tide's generational mode a minor collection comes every ~1,000 temporaries: the heap
-- grows by ~5% of itself between them (~80 KB). Counting data bytes only, it grew by ~50%
-- (~1 MB), and the temporaries' objects fell out of the L2.
T.test("a loop of small ops has a minor collection every thousand-odd temporaries", function()
  collectgarbage("generational")
  local base, peak = heap_during_small_ops(100000, 50)
  T.truthy(peak - base < 0.1 * base, string.format("heap grew from %.0f KB to %.0f KB", base, peak))
end)

T.done()
