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

T.done()
