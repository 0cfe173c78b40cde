-- Shape ops from Lua: views share storage (writing through one changes the base), strides
-- after transpose/permute/expand, joins and splits, NumPy spellings, and every error class.
--
--   tide tests/lua/test_shape.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err = T.error_usable
local torch = require "torch"
local np = require "numpy"

local ar = T.arange_shaped
local function L(x) return x:tolist() end
local function t(v, dtype) return dtype and torch.tensor(v, {dtype = dtype}) or torch.tensor(v) end


T.test("view: shapes as varargs or a table, -1 inferred, storage shared", function()
  local x = ar(12)
  local v = x:view(3, 4)
  T.eq(v.shape, {3, 4})
  T.eq(x:view{2, -1}.shape, {2, 6})
  T.eq(x:view(-1, 3).shape, {4, 3})
  v[{2, 1}] = 100
  T.eq(x[5]:item(), 100)
  x[1] = -7
  T.eq(v[{1, 1}]:item(), -7)
  T.eq(x:view_as(torch.zeros(2, 6)).shape, {2, 6})
  T.eq(ar(1):view({}).shape, {})
end)

T.test("view errors", function()
  local x = ar(3, 4)
  err(function() return x:t():view(12) end,
      "view: size {12} is not compatible with the input's strides; use reshape")
  err(function() return x:view(5, -1) end, "view: shape {5,-1} is invalid for input of size 12")
  err(function() return x:view(-1, -1) end, "view: only one size can be inferred (-1)")
  err(function() return x:view(7) end, "view: shape {7} is invalid for input of size 12")
  err(function() return x:view(-2, 6) end, "view: sizes must be non-negative, got -2")
  err(function() return x:view(2.5, 4) end, "view: sizes must be integers, got 2.5")
end)

T.test("reshape views when possible, else copies; np.reshape", function()
  local x = ar(2, 3)
  local r = x:reshape(3, 2)
  r[{1, 1}] = 50
  T.eq(x[{1, 1}]:item(), 50)          -- a view
  local c = x:t():reshape(6)
  T.eq(L(c), {50, 3, 1, 4, 2, 5})
  c[1] = 0
  T.eq(x[{1, 1}]:item(), 50)          -- a copy
  T.eq(torch.reshape(x, {-1}).shape, {6})
  T.eq(np.reshape(x, {3, -1}).shape, {3, 2})
  T.eq(np.reshape(x, 6).shape, {6})
  err(function() return x:reshape(4, -1) end, "reshape: shape {4,-1} is invalid for input of size 6")
  err(function() return torch.zeros(0, 3):reshape(0, -1) end, "reshape: cannot infer the size of -1")
  T.eq(x:reshape_as(torch.zeros(6, 1)).shape, {6, 1})
end)

T.test("t, transpose, permute, .T, movedim, swapaxes: views with swapped strides", function()
  local x = ar(2, 3, 4)
  local tr = x:transpose(1, 3)
  T.eq(tr.shape, {4, 3, 2})
  T.eq(tr:stride(), {1, 4, 12})
  T.truthy(not tr:is_contiguous())
  tr[{4, 3, 2}] = -1
  T.eq(x[{2, 3, 4}]:item(), -1)
  T.eq(x:transpose(-1, -2).shape, {2, 4, 3})
  local p = x:permute(3, 1, 2)
  T.eq(p.shape, {4, 2, 3})
  T.eq(p:stride(), {1, 12, 4})
  T.eq(x:permute{2, 3, 1}.shape, {3, 4, 2})
  T.eq(torch.permute(x, {-1, 1, 2}).shape, {4, 2, 3})
  T.eq(x.T.shape, {4, 3, 2})
  T.eq(x.T:stride(), {1, 4, 12})
  local m = ar(2, 3)
  T.eq(L(m:t()), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(L(torch.t(m)), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(L(ar(3):t()), {0, 1, 2})
  T.eq(x:movedim(1, 3).shape, {3, 4, 2})
  T.eq(torch.movedim(x, {1, 2}, {3, 1}).shape, {3, 4, 2})
  T.eq(np.moveaxis(x, 1, -1).shape, {3, 4, 2})
  T.eq(x:swapaxes(1, 2).shape, {3, 2, 4})
  T.eq(np.swapaxes(x, 1, 3).shape, {4, 3, 2})
  err(function() return x:t() end, "t: expects a tensor with at most 2 dims, but got 3 dims")
  err(function() return x:permute(1, 1, 2) end, "permute: dim 1 appears more than once")
  err(function() return x:permute(1, 2) end, "permute: the tensor has 3 dims")
  err(function() return x:transpose(1, 4) end, "transpose: dim 4 is out of range for a tensor of 3 dims (valid 1..3 or -3..-1)")
  err(function() return x:transpose(0, 1) end, "transpose: dim 0 is out of range: dims are 1-based")
end)

T.test("np.transpose reverses or permutes", function()
  local x = ar(2, 3, 4)
  T.eq(np.transpose(x).shape, {4, 3, 2})
  T.eq(np.transpose(x, {2, 1, 3}).shape, {3, 2, 4})
  T.eq(L(np.transpose(ar(2, 3))), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(x:transpose().shape, {4, 3, 2})
end)

T.test("contiguous copies only when needed", function()
  local x = ar(2, 3)
  local c = x:contiguous()
  c[{1, 1}] = 9
  T.eq(x[{1, 1}]:item(), 9)           -- already contiguous: the same storage
  local tc = x:t():contiguous()
  T.truthy(tc:is_contiguous())
  T.eq(L(tc), {{9, 3}, {1, 4}, {2, 5}})
  tc[{1, 1}] = 0
  T.eq(x[{1, 1}]:item(), 9)
  T.truthy(np.ascontiguousarray(x:t()):is_contiguous())
end)

T.test("squeeze, unsqueeze, np.squeeze, np.expand_dims", function()
  local x = torch.zeros(1, 3, 1, 2)
  T.eq(x:squeeze().shape, {3, 2})
  T.eq(x:squeeze(1).shape, {3, 1, 2})
  T.eq(x:squeeze(-2).shape, {1, 3, 2})
  T.eq(x:squeeze(2).shape, {1, 3, 1, 2})       -- not size 1: unchanged (torch)
  T.eq(x:squeeze{1, 3}.shape, {3, 2})
  T.eq(np.squeeze(x).shape, {3, 2})
  T.eq(np.squeeze(x, {axis = 1}).shape, {3, 1, 2})
  err(function() return np.squeeze(x, {axis = 2}) end, "squeeze: cannot squeeze dim 2 of size 3")
  local y = ar(3, 2)
  T.eq(y:unsqueeze(1).shape, {1, 3, 2})
  T.eq(y:unsqueeze(3).shape, {3, 2, 1})      -- ndim + 1 is allowed
  T.eq(y:unsqueeze(-1).shape, {3, 2, 1})
  T.eq(y:unsqueeze(2):stride(), {2, 2, 1})
  T.eq(np.expand_dims(y, 1).shape, {1, 3, 2})
  T.eq(np.expand_dims(y, {axis = -1}).shape, {3, 2, 1})
  T.eq(np.expand_dims(y, {1, 4}).shape, {1, 3, 2, 1})
  local u = y:unsqueeze(1)
  u[{1, 1, 1}] = 42
  T.eq(y[{1, 1}]:item(), 42)
  err(function() return y:unsqueeze(4) end, "unsqueeze: dim 4 is out of range for a tensor of 3 dims")
  err(function() return y:squeeze(3) end, "squeeze: dim 3 is out of range")
end)

T.test("expand, expand_as, broadcast_to: stride 0, -1 keeps, errors name sizes", function()
  local x = t{{1}, {2}, {3}}
  local e = x:expand(3, 4)
  T.eq(e.shape, {3, 4})
  T.eq(e:stride(), {1, 0})
  T.eq(L(e[2]), {2, 2, 2, 2})
  T.eq(x:expand(2, -1, 2).shape, {2, 3, 2})
  T.eq(x:expand{2, 3, 2}:stride(), {0, 1, 0})
  T.eq(x:expand_as(torch.zeros(3, 5)).shape, {3, 5})
  T.eq(torch.broadcast_to(x, {3, 2}).shape, {3, 2})
  T.eq(np.broadcast_to(t{1, 2}, {2, 2}).shape, {2, 2})
  x[{1, 1}] = 10
  T.eq(e[{1, 4}]:item(), 10)          -- a view
  err(function() return ar(2, 3):expand(2, 4) end,
      "expand: the expanded size 4 must match the existing size 3 at dim 2 (tensor {2,3} to {2,4})")
  err(function() return ar(2, 3):expand(3) end, "expand: the tensor has 2 dims (shape {2,3}) but only 1 sizes were given")
  err(function() return ar(3):expand(-1, 3) end, "expand: -1 is not allowed at new leading dim 1")
end)

T.test("flatten, ravel, unflatten", function()
  local x = ar(2, 3, 4)
  T.eq(x:flatten().shape, {24})
  T.eq(x:flatten(2).shape, {2, 12})
  T.eq(x:flatten(1, 2).shape, {6, 4})
  T.eq(torch.flatten(x, {start_dim = 2}).shape, {2, 12})
  T.eq(x:flatten(-2, -1).shape, {2, 12})
  T.eq(torch.tensor(5):flatten().shape, {1})
  T.eq(L(x:transpose(1, 2):flatten(1, 2)[{{1, 3}, 1}]), {0, 12, 4})
  T.eq(np.ravel(ar(2, 2)).shape, {4})
  T.eq(x:unflatten(3, {2, 2}).shape, {2, 3, 2, 2})
  T.eq(x:flatten():unflatten(1, {2, -1, 4}).shape, {2, 3, 4})
  err(function() return x:flatten(3, 2) end, "flatten: start dim 3 must not come after end dim 2")
  err(function() return x:unflatten(3, {3, -1}) end, "unflatten: shape {3,-1} is invalid for input of size 4")
end)

T.test("repeat (x:repeat_tensor or x[\"repeat\"], as `repeat` is a Lua keyword) and tile copy", function()
  local x = t{{1, 2}, {3, 4}}
  local r = x:repeat_tensor(2, 3)
  T.eq(r.shape, {4, 6})
  T.eq(L(r[3]), {1, 2, 1, 2, 1, 2})
  T.eq(L(t{1, 2, 3}["repeat"](t{1, 2, 3}, 2, 2)), {{1, 2, 3, 1, 2, 3}, {1, 2, 3, 1, 2, 3}})
  r[{1, 1}] = 0
  T.eq(x[{1, 1}]:item(), 1)
  T.eq(L(torch.tile(t{1, 2}, {2})), {1, 2, 1, 2})
  T.eq(np.tile(x, 2).shape, {2, 4})
  T.eq(np.tile(t{1, 2}, {2, 2}).shape, {2, 4})
  err(function() return x:repeat_tensor(2) end, "repeat: the number of repeats (1) can't be smaller than the number of dims (2)")
end)

T.test("cat / np.concatenate: dims, promotion, skipped empties, errors", function()
  local a, b = ar(2, 3), ar(1, 3)
  T.eq(L(torch.cat({a, b})), {{0, 1, 2}, {3, 4, 5}, {0, 1, 2}})
  T.eq(torch.cat({a, a}, 2).shape, {2, 6})
  T.eq(torch.cat({a, a}, -1).shape, {2, 6})
  T.eq(torch.cat({a, a}, {dim = 2}).shape, {2, 6})
  T.eq(np.concatenate({a, b}).shape, {3, 3})
  T.eq(np.concatenate({a, a}, {axis = 2}).shape, {2, 6})
  T.eq(np.concatenate({a, a}, 2).shape, {2, 6})
  T.eq(torch.concat({a, b}).shape, {3, 3})
  -- dtype promotion as torch.cat
  T.eq(torch.cat({t({1}, "int32"), t({2}, "int64")}).dtype, "int64")
  T.eq(torch.cat({t{1, 2}, torch.tensor{0.5}}).dtype, "float32")
  T.eq(L(torch.cat({t{1, 2}, torch.tensor{0.5}})), {1, 2, 0.5})
  T.eq(torch.cat({torch.zeros(1), torch.zeros(1, {dtype = "float64"})}).dtype, "float64")
  -- empty 1-D tensors are skipped
  T.eq(torch.cat({torch.zeros(0), a}).shape, {2, 3})
  -- a copy
  local c = torch.cat({a})
  c[{1, 1}] = 99
  T.eq(a[{1, 1}]:item(), 0)
  err(function() return torch.cat({a, ar(2, 4)}) end,
      "cat: sizes of tensors must match except in dim 1: tensor 1 has size 3 at dim 2 but tensor 2 has size 4")
  err(function() return torch.cat({a, ar(3)}) end, "cat: tensors must have the same number of dims")
  err(function() return torch.cat({a, a}, 3) end, "cat: dim 3 is out of range for a tensor of 2 dims")
  err(function() return torch.cat({}) end, "cat: expected a non-empty table of tensors")
  err(function() return torch.cat(a) end, "cat: expected a table of tensors as argument 1")
  err(function() return torch.cat({torch.tensor(1), torch.tensor(2)}) end, "cat: zero-dim tensor (tensor 1) cannot be concatenated")
end)

T.test("stack / np.stack, hstack, vstack", function()
  local a, b = t{1, 2, 3}, t{4, 5, 6}
  T.eq(L(torch.stack({a, b})), {{1, 2, 3}, {4, 5, 6}})
  T.eq(L(torch.stack({a, b}, 2)), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(torch.stack({a, b}, -1).shape, {3, 2})
  T.eq(np.stack({a, b}, {axis = 2}).shape, {3, 2})
  T.eq(torch.stack({torch.tensor(1), torch.tensor(2)}).shape, {2})
  T.eq(L(torch.hstack({a, b})), {1, 2, 3, 4, 5, 6})
  T.eq(L(np.vstack({a, b})), {{1, 2, 3}, {4, 5, 6}})
  T.eq(torch.hstack({ar(2, 1), ar(2, 2)}).shape, {2, 3})
  err(function() return torch.stack({a, t{1, 2}}) end,
      "stack: expects each tensor to be equal size, but got {3} at entry 1 and {2} at entry 2")
  err(function() return torch.stack({a, b}, 3) end, "stack: dim 3 is out of range")
end)

T.test("split, chunk, unbind return tables of views", function()
  local x = ar(7, 2)
  local parts = x:split(3)
  T.eq(#parts, 3)
  T.eq(parts[1].shape, {3, 2})
  T.eq(parts[3].shape, {1, 2})
  T.eq(L(parts[3]), {{12, 13}})
  parts[2][{1, 1}] = -1
  T.eq(x[{4, 1}]:item(), -1)           -- a view
  local s = torch.split(x, {2, 5})
  T.eq(s[2].shape, {5, 2})
  T.eq(#x:split(1, 2), 2)
  T.eq(x:split(1, {dim = 2})[2].shape, {7, 1})
  local c = x:chunk(3)
  T.eq(#c, 3)
  T.eq(c[1].shape, {3, 2})
  T.eq(#ar(6):chunk(4), 3)
  T.eq(#torch.chunk(x, 2, 2), 2)
  local u = ar(2, 3):unbind(2)
  T.eq(#u, 3)
  T.eq(L(u[3]), {2, 5})
  err(function() return x:split({2, 2}) end, "split: split sizes {2,2} sum to 4 but dim 1 has size 7")
  err(function() return x:split(0) end, "split: split size must be positive, got 0")
  err(function() return x:chunk(0) end, "chunk: the number of chunks must be positive, got 0")
end)

T.test("flip copies; np.flip flips all dims by default", function()
  local x = ar(2, 3)
  T.eq(L(x:flip(2)), {{2, 1, 0}, {5, 4, 3}})
  T.eq(L(x:flip{1, 2}), {{5, 4, 3}, {2, 1, 0}})
  T.eq(L(x:flip(1, 2)), {{5, 4, 3}, {2, 1, 0}})
  T.eq(L(torch.flip(x, {1})), {{3, 4, 5}, {0, 1, 2}})
  T.eq(L(np.flip(x)), {{5, 4, 3}, {2, 1, 0}})
  T.eq(L(np.flip(x, {axis = 2})), {{2, 1, 0}, {5, 4, 3}})
  T.eq(L(np.fliplr(x)), {{2, 1, 0}, {5, 4, 3}})
  T.eq(L(torch.flipud(x)), {{3, 4, 5}, {0, 1, 2}})
  T.eq(L(x:t():flip(1)), {{2, 5}, {1, 4}, {0, 3}})
  local f = x:flip(1)
  f[{1, 1}] = 100
  T.eq(x[{2, 1}]:item(), 3)           -- a copy
  T.eq(L(torch.tensor{1.5, 2.5}:half():flip(1):float()), {2.5, 1.5})
  err(function() return x:flip{1, 1} end, "flip: dim 1 appears more than once")
  err(function() return x:flip(3) end, "flip: dim 3 is out of range")
end)

T.test("narrow and select: 1-based start and index, views", function()
  local x = ar(4, 5)
  local n = x:narrow(2, 2, 3)
  T.eq(L(n[1]), {1, 2, 3})
  n[{1, 1}] = -1
  T.eq(x[{1, 2}]:item(), -1)
  T.eq(L(x:narrow(1, -1, 1)), {{15, 16, 17, 18, 19}})
  T.eq(x:narrow(1, 5, 0).shape, {0, 5})
  T.eq(L(torch.narrow(x, 1, 2, 2)[{":", 1}]), {5, 10})
  T.eq(L(x:select(1, 2)), {5, 6, 7, 8, 9})
  T.eq(L(x:select(2, -1)), {4, 9, 14, 19})
  T.eq(ar(3):select(1, 2):dim(), 0)
  local s = x:select(1, 4)
  s[1] = 77
  T.eq(x[{4, 1}]:item(), 77)
  err(function() return x:narrow(2, 7, 1) end, "narrow: start 7 is out of range for dim 2 of size 5 (valid 1..5 or -5..-1)")
  err(function() return x:narrow(2, 4, 3) end, "narrow: start 4 and length 3 run past the end of dim 2 of size 5")
  err(function() return x:narrow(2, 1, -1) end, "narrow: length must be non-negative")
  err(function() return x:select(1, 5) end, "select: index 5 is out of range for dim 1 of size 4 (valid 1..4 or -4..-1)")
  err(function() return x:select(3, 1) end, "select: dim 3 is out of range")
  err(function() return torch.tensor(1):select(1, 1) end, "select: cannot select from a 0-dim tensor")
end)

T.done()
