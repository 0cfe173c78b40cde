-- Indexing and assignment in every form, and the index ops. Expected values are what
-- PyTorch / NumPy give, translated to 1-based indices (Python's x[1:4, :] is x[{{2, 4}, ":"}]).
--
--   tide tests/lua/test_index.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err = T.error_usable
local torch = require "torch"
local np = require "numpy"

local ar = T.arange_shaped
local function L(x) return x:tolist() end
local function t(v, dtype) return dtype and torch.tensor(v, {dtype = dtype}) or torch.tensor(v) end


-------------------------------------------------------------------------------------------
-- Reading

T.test("x[i] selects along dim 1 as a view; 1-D gives a 0-dim tensor", function()
  local x = ar(3, 4)
  T.eq(L(x[1]), {0, 1, 2, 3})
  T.eq(L(x[3]), {8, 9, 10, 11})
  T.eq(L(x[-1]), {8, 9, 10, 11})
  T.eq(L(x[-3]), {0, 1, 2, 3})
  local v = ar(4)
  local e = v[2]
  T.eq(e:dim(), 0)
  T.eq(e.shape, {})
  T.eq(e:item(), 1)
  T.eq(v[-1]:item(), 3)
  T.eq(math.type(v[1]:item()), "integer")
  T.eq(ar(2, 3, 4)[2].shape, {3, 4})
  -- Lua floats with integral values are accepted.
  T.eq(L(x[2.0]), {4, 5, 6, 7})
end)

T.test("views from x[i] share storage with x", function()
  local x = ar(3, 4)
  local row = x[2]
  row[1] = 100                 -- writes through the view
  T.eq(x[{2, 1}]:item(), 100)
  x[{2, 2}] = -5
  T.eq(row[2]:item(), -5)      -- and the view sees writes to the base
  local e = x[3][4]
  x[{3, 4}] = 42
  T.eq(e:item(), 42)
end)

T.test("x[{i, j}] indexes several dims; fewer entries leave the rest whole", function()
  local x = ar(2, 3, 4)
  T.eq(x[{2, 3, 4}]:item(), 23)
  T.eq(x[{1, 2}].shape, {4})
  T.eq(L(x[{1, 2}]), {4, 5, 6, 7})
  T.eq(L(x[{-1, -1, -1}]:reshape(1)), {23})
  T.eq(x[{2}].shape, {3, 4})
  T.eq(x[{}].shape, {2, 3, 4})
end)

T.test("range tables {first, last[, step]} are inclusive and 1-based", function()
  local x = ar(5, 4)
  -- Python x[1:4, :]
  T.eq(L(x[{{2, 4}, ":"}]), {{4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}})
  T.eq(L(x[{{2, 4}}]), L(x[{{2, 4}, ":"}]))
  -- x[::2, 1]
  T.eq(L(x[{{1, -1, 2}, 2}]), {1, 9, 17})
  -- x[-2:, -1]
  T.eq(L(x[{{-2, -1}, -1}]), {15, 19})
  -- x[1, 1:3]
  T.eq(L(x[{2, {2, 3}}]), {5, 6})
  -- {i} keeps the dim: x[2:3]
  T.eq(x[{{3}}].shape, {1, 4})
  T.eq(L(x[{{3}}]), {{8, 9, 10, 11}})
  -- {} and ":" are the whole dim
  T.eq(L(x[{{}, 1}]), {0, 4, 8, 12, 16})
  T.eq(L(x[{":", 1}]), {0, 4, 8, 12, 16})
  -- step that does not divide: x[0:5:3] -> rows 0 and 3
  T.eq(L(x[{{1, 5, 3}, 1}]), {0, 12})
  -- empty range: first = last + 1
  T.eq(x[{{3, 2}}].shape, {0, 4})
  T.eq(x[{{6, 5}}].shape, {0, 4})
  T.eq(x[{":", {1, 0}}].shape, {5, 0})
end)

T.test("ranges are views", function()
  local x = ar(4, 4)
  local v = x[{{2, 3}, {2, 3}}]
  T.eq(v.shape, {2, 2})
  v[{1, 1}] = 99
  T.eq(x[{2, 2}]:item(), 99)
  local s = x[{":", {1, -1, 2}}]
  s:fill_(0)
  T.eq(L(x[1]), {0, 1, 0, 3})
  T.truthy(not s:is_contiguous())
end)

T.test("\"...\" stands for the remaining dims", function()
  local x = ar(2, 3, 4)
  T.eq(L(x[{"...", 1}]), {{0, 4, 8}, {12, 16, 20}})
  T.eq(x[{1, "..."}].shape, {3, 4})
  T.eq(L(x[{1, "...", 2}]), {1, 5, 9})
  T.eq(x[{"..."}].shape, {2, 3, 4})
end)

T.test("bool masks select a 1-D copy", function()
  local x = ar(3, 4)
  local m = x:gt(5)
  local s = x[m]
  T.eq(L(s), {6, 7, 8, 9, 10, 11})
  s[1] = -1                          -- a copy: x is unchanged
  T.eq(x[{2, 3}]:item(), 6)
  T.eq(L(x[x:lt(0)]), {})
  T.eq(x[x:lt(0)].shape, {0})
  -- A mask over the leading dims selects rows (Python x[[True, False, True]]).
  T.eq(L(x[t{true, false, true}]), {{0, 1, 2, 3}, {8, 9, 10, 11}})
  -- Inside a table: x[:, mask]
  T.eq(L(x[{":", t{false, true, false, true}}]), {{1, 3}, {5, 7}, {9, 11}})
  -- Floats
  local f = torch.tensor{{1.5, -2}, {0, 3}}
  T.eq(L(f[f:gt(0)]), {1.5, 3})
end)

T.test("integer tensors select along dim 1 (1-based, negatives from the end)", function()
  local x = ar(4, 3)
  T.eq(L(x[t{4, 1}]), {{9, 10, 11}, {0, 1, 2}})
  T.eq(L(x[t{-1}]), {{9, 10, 11}})
  T.eq(L(x[t{2, 2}]), {{3, 4, 5}, {3, 4, 5}})
  -- multi-dim index: idx.shape + rest
  local r = x[t{{1, 2}, {3, 4}}]
  T.eq(r.shape, {2, 2, 3})
  T.eq(L(r[{2, 1}]), {6, 7, 8})
  -- any integer dtype
  T.eq(L(x[t({3}, "int32")]), {{6, 7, 8}})
  T.eq(L(x[t({3}, "uint8")]), {{6, 7, 8}})
  -- 1-D x: Python v[[3, 0]]
  local v = ar(5) * 10
  T.eq(L(v[t{4, 1}]), {30, 0})
  -- a copy
  local c = x[t{1}]
  c[{1, 1}] = 100
  T.eq(x[{1, 1}]:item(), 0)
end)

T.test("index tensors inside tables: x[{\":\", idx}] and paired indices", function()
  local x = ar(3, 4)
  -- x[:, [0, 2]]
  T.eq(L(x[{":", t{1, 3}}]), {{0, 2}, {4, 6}, {8, 10}})
  -- x[[0, 1], [2, 3]] picks (0,2) and (1,3)
  T.eq(L(x[{t{1, 2}, t{3, 4}}]), {2, 7})
  -- x[1, [3, 0]] (number first: a select)
  T.eq(L(x[{2, t{4, 1}}]), {7, 4})
  -- x[0:2, [1]]
  T.eq(L(x[{{1, 2}, t{2}}]), {{1}, {5}})
  -- broadcast of indices: x[[[0], [2]], [1, 3]]
  T.eq(L(x[{t{{1}, {3}}, t{2, 4}}]), {{1, 3}, {9, 11}})
  -- non-adjacent index tensors put the broadcast dims first (NumPy's rule):
  -- y = arange(24).reshape(2,3,4); y[[0, 1], :, [3, 2]] -> shape (2, 3)
  local y = ar(2, 3, 4)
  T.eq(L(y[{t{1, 2}, ":", t{4, 3}}]), {{3, 7, 11}, {14, 18, 22}})
end)

T.test("indexing errors name the index, the dim and the size", function()
  local x = ar(4, 3)
  T.eq(err(function() return x[5] end, "index 5"),
       "index: index 5 is out of range for dim 1 of size 4 (valid 1..4 or -4..-1)")
  err(function() return x[0] end, "index: index 0 is out of range for dim 1 of size 4")
  err(function() return x[-5] end, "index: index -5 is out of range for dim 1 of size 4")
  err(function() return x[{1, 4}] end, "index: index 4 is out of range for dim 2 of size 3 (valid 1..3 or -3..-1)")
  err(function() return x[{2, 4}] end, "for dim 2 of size 3")
  err(function() return x[1.5] end, "index: index 1.5 is not an integer")
  err(function() return x[{1, 0.5}] end, "index: index 0.5 is not an integer")
  err(function() return x[{1, 1, 1}] end, "index: too many indices for a tensor of 2 dims (got 3)")
  err(function() return ar(3)[1][1] end, "index: too many indices for a tensor of 0 dims (got 1)")
  err(function() return x[{{1, 5}}] end, "index: range end 5 is out of range for dim 1 of size 4")
  err(function() return x[{{0, 2}}] end, "index: range start 0 is out of range for dim 1 of size 4")
  err(function() return x[{":", {2, 1, 0}}] end, "index: range step must be nonzero, got 0 (for dim 2)")
  err(function() return x[{{3, 1}}] end, "index: range {3,1} runs backwards on dim 1")
  err(function() return x[{{1, 2, 3, 4}}] end, "index: a range is {first, last} or {first, last, step}")
  err(function() return x[{{1, "a"}}] end, "index: a range is {first, last[, step]} of integers, got a string at position 2")
  err(function() return x[{{1.5, 2}}] end, "index: range bound 1.5 is not an integer")
  err(function() return x[t{1, 5}] end, "index: index 5 is out of range for dim 1 of size 4")
  err(function() return x[{":", t{-4}}] end, "index: index -4 is out of range for dim 2 of size 3")
  err(function() return x[torch.tensor{1.0, 2.0}] end, "index: tensors used as indices must be bool (a mask) or integer tensors, got float32")
  err(function() return x[t{true, false}] end, "index: the shape of the mask {2} does not match the shape {4} of the indexed tensor at dim 1")
  err(function() return x[{":", t{true, false}}] end, "does not match the shape {3} of the indexed tensor at dim 2")
  err(function() return x[true] end, "index: cannot index with a boolean")
  err(function() return x[{"x"}] end, "index: unknown index 'x'")
  err(function() return x[{"...", "..."}] end, "index: an index can only have a single \"...\"")
  err(function() return x[{t{1, 2}, t{1, 2, 3}}] end, "cannot be broadcast")
  err(function() return x[{function() end}] end, "index: cannot index a tensor with a function")
end)

-------------------------------------------------------------------------------------------
-- Assignment

T.test("assigning numbers and booleans through basic indices", function()
  local x = torch.zeros(3, 4)
  x[{1, ":"}] = 1                  -- x[0, :] = 1
  x[{":", 4}] = 2                  -- x[:, 3] = 2
  x[{{2, 3}, {1, 2}}] = 5          -- x[1:3, 0:2] = 5
  x[3] = 7                         -- x[2] = 7
  T.eq(L(x), {{1, 1, 1, 2}, {5, 5, 0, 2}, {7, 7, 7, 7}})
  x[{2, 3}] = -1.5
  T.eq(x[{2, 3}]:item(), -1.5)
  x[{}] = 0
  T.eq(x:sum():item(), 0)
  x[{"...", 1}] = 3
  T.eq(L(x[{":", 1}]), {3, 3, 3})
  local b = torch.zeros(3, {dtype = "bool"})
  b[2] = true
  T.eq(L(b), {false, true, false})
  -- a float into an int tensor truncates (as PyTorch)
  local i = torch.zeros(3, {dtype = "int64"})
  i[1] = 2.7
  i[2] = true
  T.eq(L(i), {2, 1, 0})
end)

T.test("assigning tensors broadcasts and converts", function()
  local x = torch.zeros(3, 4)
  x[{{1, 2}, {3, 4}}] = torch.tensor{{1, 2}, {3, 4}}
  T.eq(L(x[{{1, 2}, {3, 4}}]), {{1, 2}, {3, 4}})
  x[3] = torch.tensor{9, 8, 7, 6}
  T.eq(L(x[3]), {9, 8, 7, 6})
  x[{":", 1}] = torch.tensor{-1}     -- broadcast
  T.eq(L(x[{":", 1}]), {-1, -1, -1})
  x[{{1, 2}}] = torch.tensor{{{5, 5, 5, 5}}}:float()  -- leading 1s dropped
  T.eq(L(x[1]), {5, 5, 5, 5})
  x[2] = {1, 2, 3, 4}                 -- a plain table
  T.eq(L(x[2]), {1, 2, 3, 4})
  -- overlapping source and destination read before they write
  local y = ar(5)
  y[{{2, 5}}] = y[{{1, 4}}]
  T.eq(L(y), {0, 0, 1, 2, 3})
  err(function() x[1] = torch.tensor{1, 2, 3} end, "index: cannot assign a tensor of shape {3} to elements of shape {4}")
  err(function() x[{{1, 2}}] = torch.ones(3, 4) end, "cannot assign a tensor of shape {3,4} to elements of shape {2,4}")
  err(function() x[1] = nil end, "index: cannot assign nil")
  err(function() x[1] = "a" end, "index: cannot assign a string")
  err(function() x[9] = 1 end, "index: index 9 is out of range for dim 1 of size 3")
end)

T.test("x[mask] = value (grad_h[h:lt(0)] = 0)", function()
  local h = torch.tensor{{1, -2, 3}, {-4, 5, -6}}
  local grad_h = torch.ones(2, 3)
  grad_h[h:lt(0)] = 0
  T.eq(L(grad_h), {{1, 0, 1}, {0, 1, 0}})
  local x = ar(2, 3)
  x[x:gt(3)] = torch.tensor{40, 50}   -- one value per selected element
  T.eq(L(x), {{0, 1, 2}, {3, 40, 50}})
  x[x:eq(0)] = torch.tensor(7)        -- a one-element tensor
  T.eq(x[{1, 1}]:item(), 7)
  -- a mask on the leading dim assigns rows
  local y = torch.zeros(3, 2)
  y[t{true, false, true}] = torch.tensor{1, 2}
  T.eq(L(y), {{1, 2}, {0, 0}, {1, 2}})
  -- inside a table
  y[{":", t{false, true}}] = 9
  T.eq(L(y[{":", 2}]), {9, 9, 9})
  err(function() x[x:gt(0)] = torch.tensor{1, 2} end, "cannot be broadcast to the indexed shape {6}")
  err(function() x[t{true}] = 1 end, "does not match the shape {2} of the indexed tensor at dim 1")
end)

T.test("x[idx] = y with index tensors", function()
  local x = torch.zeros(4, 2)
  x[t{1, 3}] = torch.tensor{{1, 2}, {3, 4}}
  T.eq(L(x), {{1, 2}, {0, 0}, {3, 4}, {0, 0}})
  x[t{-1}] = 5
  T.eq(L(x[4]), {5, 5})
  x[{":", t{2}}] = -1                 -- x[:, [1]] = -1
  T.eq(L(x[{":", 2}]), {-1, -1, -1, -1})
  x[{t{1, 2}, t{1, 1}}] = torch.tensor{10, 20}   -- x[[0, 1], [0, 0]] = [10, 20]
  T.eq(L(x[{":", 1}]), {10, 20, 3, 5})
  -- duplicates: the last write wins
  local v = torch.zeros(3)
  v[t{2, 2}] = torch.tensor{1, 2}
  T.eq(L(v), {0, 2, 0})
  err(function() x[t{5}] = 1 end, "index: index 5 is out of range for dim 1 of size 4")
  err(function() x[{":", t{3}}] = 1 end, "index: index 3 is out of range for dim 2 of size 2")
end)

-------------------------------------------------------------------------------------------
-- Index ops

T.test("index_select", function()
  local x = ar(3, 4)
  T.eq(L(x:index_select(1, t{3, 1})), {{8, 9, 10, 11}, {0, 1, 2, 3}})
  T.eq(L(torch.index_select(x, 2, t{-1, 1})), {{3, 0}, {7, 4}, {11, 8}})
  T.eq(L(x:index_select(2, {2})), {{1}, {5}, {9}})      -- a plain table of indices
  err(function() return x:index_select(2, t{5}) end,
      "index_select: index 5 is out of range for dim 2 of size 4 (valid 1..4 or -4..-1)")
  err(function() return x:index_select(3, t{1}) end, "index_select: dim 3 is out of range")
  err(function() return x:index_select(1, torch.tensor{1.0}) end, "index tensors must have an integer dtype")
end)

T.test("gather and scatter", function()
  -- torch.gather(torch.tensor([[1, 2], [3, 4]]), 1, torch.tensor([[0, 0], [1, 0]])) = [[1, 1], [4, 3]]
  local x = torch.tensor{{1, 2}, {3, 4}}
  T.eq(L(torch.gather(x, 2, t{{1, 1}, {2, 1}})), {{1, 1}, {4, 3}})
  T.eq(L(x:gather(1, t{{2, 1}})), {{3, 2}})
  err(function() return x:gather(2, t{{1, 3}}) end, "gather: index 3 is out of range for dim 2 of size 2")
  err(function() return x:gather(1, t{1, 2}) end, "gather: index must have as many dims as the input")
  -- src = arange(1, 11).reshape(2, 5); zeros(3, 5).scatter_(0, [[0, 1, 2, 0]], src)
  -- = [[1, 0, 0, 4, 0], [0, 2, 0, 0, 0], [0, 0, 3, 0, 0]]
  local src = (ar(2, 5) + 1)
  local z = torch.zeros(3, 5, {dtype = "int64"})
  local r = z:scatter_(1, t{{1, 2, 3, 1}}, src)
  T.eq(L(z), {{1, 0, 0, 4, 0}, {0, 2, 0, 0, 0}, {0, 0, 3, 0, 0}})
  T.truthy(rawequal(r, z), "scatter_ returns x")
  local s = torch.zeros(2, 4):scatter(2, t{{2}, {3}}, 1.23)
  T.near(s, {{0, 1.23, 0, 0}, {0, 0, 1.23, 0}})
  local acc = torch.zeros(3, {dtype = "int64"})
  acc:scatter_add_(1, t{1, 1, 3}, t{1, 2, 3})
  T.eq(L(acc), {3, 0, 3})
  T.eq(L(torch.scatter_add(torch.zeros(2), 1, t{2, 2}, torch.ones(2))), {0, 2})
  err(function() z:scatter_(2, t{{6}}, 1) end, "scatter: index 6 is out of range for dim 2 of size 5")
end)

T.test("masked_fill, masked_select", function()
  local x = ar(2, 3)
  local m = x:gt(2)
  T.eq(L(x:masked_fill(m, -1)), {{0, 1, 2}, {-1, -1, -1}})
  T.eq(L(x), {{0, 1, 2}, {3, 4, 5}})
  local r = x:masked_fill_(t{true, false, false}, 9)   -- broadcast over rows
  T.truthy(rawequal(r, x))
  T.eq(L(x), {{9, 1, 2}, {9, 4, 5}})
  T.eq(L(torch.masked_select(x, x:lt(5))), {1, 2, 4})
  T.eq(L(x:masked_fill(m, torch.tensor(0))), {{9, 1, 2}, {0, 0, 0}})
  err(function() x:masked_fill(x, 1) end, "masked_fill: expected a bool mask, got int64")
  err(function() x:masked_fill_(t{true, false}, 1) end, "masked_fill: mask of shape {2} cannot be broadcast to the tensor's shape {2,3}")
end)

T.test("nonzero, argwhere, where(cond)-like tuples", function()
  local x = torch.tensor{{0, 1.5, 0}, {-2, 0, 0}}
  local nz = x:nonzero()
  T.eq(nz.dtype, "int64")
  T.eq(L(nz), {{1, 2}, {2, 1}})
  local tup = torch.nonzero(x, {as_tuple = true})
  T.eq(#tup, 2)
  T.eq(L(tup[1]), {1, 2})
  T.eq(L(tup[2]), {2, 1})
  local npt = np.nonzero(x)
  T.eq(L(npt[1]), {1, 2})
  T.eq(L(np.argwhere(x)), {{1, 2}, {2, 1}})
  -- the tuple indexes back into x
  T.eq(L(x[{tup[1], tup[2]}]), {1.5, -2})
  T.eq(torch.count_nonzero(x):item(), 2)
  T.eq(np.count_nonzero(x), 2)
  T.eq(torch.zeros(0):nonzero().shape, {0, 1})
end)

T.test("take, index_add_, index_fill_, index_put_", function()
  local x = ar(2, 3)
  T.eq(L(torch.take(x, t{1, 6, -2})), {0, 5, 4})
  T.eq(L(np.take(x, t{2}, {axis = 2})), {{1}, {4}})
  err(function() return x:take(t{7}) end, "take: index 7 is out of range for dim 1 of size 6")
  local a = torch.zeros(3, 2)
  a:index_add_(1, t{1, 3, 1}, torch.ones(3, 2))
  T.eq(L(a), {{2, 2}, {0, 0}, {1, 1}})
  a:index_add_(2, t{2}, torch.ones(3, 1), {alpha = 10})
  T.eq(L(a), {{2, 12}, {0, 10}, {1, 11}})
  err(function() a:index_add_(1, t{1}, torch.ones(2, 2)) end, "index_add: src must have shape {1,2}")
  a:index_fill_(2, t{1}, -1)
  T.eq(L(a[{":", 1}]), {-1, -1, -1})
  local p = torch.zeros(2, 2)
  p:index_put_({t{1, 2}, t{2, 1}}, torch.tensor{5, 6})
  T.eq(L(p), {{0, 5}, {6, 0}})
  p:index_put_({t{1, 1}}, torch.ones(2), true)
  T.eq(L(p), {{2, 7}, {6, 0}})
  local q = torch.index_put(p, {":", t{1}}, torch.tensor(3))
  T.eq(L(q), {{3, 7}, {3, 0}})
  T.eq(L(p[{":", 1}]), {2, 6})
end)

T.done()
