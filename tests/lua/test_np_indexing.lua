-- NumPy's index forms and size properties (issue 14; docs/translation.md): np.newaxis,
-- "..." and ":" as whole keys, a.strides in bytes, a.nbytes, a.itemsize, a.ndim, np.size.
-- Expected values are NumPy 1.24.2's for a = np.arange(24).reshape(2, 3, 4).
--
--   tide tests/lua/test_np_indexing.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

local function a24() return np.arange(24):reshape(2, 3, 4) end

T.test("np.newaxis inserts a dim of size 1, as None does", function()
  local a = a24()
  T.eq(np.newaxis, "newaxis")
  T.eq(a[np.newaxis].shape, {1, 2, 3, 4})                      -- a[None]
  T.eq(a[{np.newaxis}].shape, {1, 2, 3, 4})
  T.eq(a[{":", np.newaxis}].shape, {2, 1, 3, 4})               -- a[:, None]
  T.eq(a[{"...", np.newaxis}].shape, {2, 3, 4, 1})             -- a[..., None]
  T.eq(a[{np.newaxis, "...", np.newaxis}].shape, {1, 2, 3, 4, 1})
  T.eq(a[{2, np.newaxis, ":", 3}]:tolist(), {{14, 18, 22}})    -- a[1, None, :, 2]
  -- a view: writes go through
  local v = a[{np.newaxis, 1}]
  v[{1, 1, 1}] = 100
  T.eq(a[{1, 1, 1}]:item(), 100)
  -- also for torch tensors
  T.eq(torch.zeros(2, 3)[{":", np.newaxis}].shape, {2, 1, 3})
  T.error(function() return a[{"newaxes"}] end, "index: unknown index 'newaxes'")
end)

T.test("\"...\" and \":\" as whole keys and in tables", function()
  local a = a24()
  T.eq(a["..."].shape, {2, 3, 4})
  T.eq(a[":"].shape, {2, 3, 4})
  T.eq(a[{"...", 2}]:tolist(), {{1, 5, 9}, {13, 17, 21}})
  local b = np.zeros{2, 2}
  b[":"] = 7
  T.eq(b:tolist(), {{7.0, 7.0}, {7.0, 7.0}})
  b["..."] = 1
  T.eq(b:tolist(), {{1.0, 1.0}, {1.0, 1.0}})
  T.error(function() return a.nosuch end, "tensor: no method or property named 'nosuch'")
end)

T.test("size properties as NumPy's", function()
  local a = a24()
  T.eq(a.strides, {96, 32, 8})
  T.eq(a.T.strides, {8, 32, 96})
  T.eq(a[{":", {1, -1, 2}}].strides, {96, 64, 8})
  T.eq(a:astype("float32").strides, {48, 16, 4})
  T.eq(a:stride(), {12, 4, 1})                     -- torch's, in elements
  T.eq(a.nbytes, 192)
  T.eq(a.itemsize, 8)
  T.eq(a.ndim, 3)
  T.eq(np.size(a), 24)
  T.eq(np.size(a, 2), 3)
  T.eq(a:numel(), 24)
  T.eq(type(a.size), "function")                   -- the torch method (docs: Sizes)
  T.eq(a:size(), {2, 3, 4})
  T.eq(np.zeros(0).nbytes, 0)
  T.eq(np.array(5).strides, {})
end)

T.test("negative-step ranges are views walked backwards, as NumPy's", function()
  local a = np.arange(6)
  T.eq(a[{{-1, 1, -1}}]:tolist(), {5, 4, 3, 2, 1, 0})   -- a[::-1]
  T.eq(a[{{-1, 1, -2}}]:tolist(), {5, 3, 1})            -- a[::-2]
  T.eq(a[{{-2, 1, -2}}]:tolist(), {4, 2, 0})            -- a[-2::-2]
  T.eq(a[{{4, 2, -1}}]:tolist(), {3, 2, 1})             -- a[3:0:-1]
  T.eq(a[{{1, 2, -1}}]:tolist(), {})                    -- a[0:1:-1]
  local b = np.arange(12):reshape(3, 4)
  T.eq(b[{{-1, 1, -1}, {1, -1, 2}}]:tolist(), {{8, 10}, {4, 6}, {0, 2}})  -- b[::-1, ::2]
  T.eq(b[{2, {-1, 1, -3}}]:tolist(), {7, 4})                            -- b[1, ::-3]
  T.eq(b[{{-1, 1, -1}, torch.tensor{1, 2}}]:tolist(), {{8, 9}, {4, 5}, {0, 1}})  -- b[::-1, [0, 1]]
  T.eq(torch.arange(3)[{{-1, 1, -1}}]:tolist(), {2, 1, 0})
  -- assignment writes in NumPy's order
  local c = np.zeros(5, "int64")
  c[{{-1, 1, -2}}] = np.array{1, 2, 3}                  -- c[::-2] = [1, 2, 3]
  T.eq(c:tolist(), {3, 0, 2, 0, 1})
  local d = np.zeros({2, 3}, "int64")
  d[{":", {-1, 1, -1}}] = np.array{1, 2, 3}             -- d[:, ::-1] = [1, 2, 3]
  T.eq(d:tolist(), {{3, 2, 1}, {3, 2, 1}})
  d[{{-1, 1, -1}}] = 7
  T.eq(d:tolist(), {{7, 7, 7}, {7, 7, 7}})
  -- a view, as NumPy's a[::-1]: writes through it reach a, and its strides are negative
  local r = a[{{-1, 1, -1}}]
  r[1] = 100
  T.eq(a[6]:item(), 100)
  T.eq(r:stride(), {-1})
  T.eq(r.strides, {-8})
  T.eq(r:is_contiguous(), false)
  a[6] = 5
  local bv = b[{{-1, 1, -2}, {-1, 1, -1}}]                -- b[::-2, ::-1]
  T.eq(bv:stride(), {-8, -1})
  T.eq(bv:tolist(), {{11, 10, 9, 8}, {3, 2, 1, 0}})
  T.eq(bv:contiguous():tolist(), {{11, 10, 9, 8}, {3, 2, 1, 0}})
  bv[{1, 1}] = -1
  T.eq(b[{3, 4}]:item(), -1)
  b[{3, 4}] = 11
  -- tensor indices after a reversed range: assignment reaches b in NumPy's order
  local e = np.zeros({3, 2}, "int64")
  e[{{-1, 1, -1}, torch.tensor{1}}] = np.array{{1}, {2}, {3}}   -- e[::-1, [0]] = [[1], [2], [3]]
  T.eq(e:tolist(), {{3, 0}, {2, 0}, {1, 0}})
  -- gradients flow back to the right places
  local x = torch.arange(4.0):requires_grad_()
  local y = x[{{-1, 1, -2}}];
  (y * torch.tensor{1.0, 10.0}):sum():backward()
  T.eq(x.grad:tolist(), {0.0, 10.0, 0.0, 1.0})
  T.error(function() return a[{{1, 3, -1}}] end,
    "index: range {1,3,-1} runs forwards on dim 1 of size 6 (with a negative step first must be at least last - 1)")
  T.error(function() return a[{{7, 1, -1}}] end, "index: range start 7 is out of range for dim 1 of size 6")
end)

T.done()
