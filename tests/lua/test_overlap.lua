-- Writes whose destination shares memory with what they read (tensor/overlap.hpp).
-- 1. An input overlapping the written tensor other than element for element gives NumPy's
--    answer: every input is read before anything is written (the values below are NumPy's,
--    from /usr/bin/python3, e.g. np.add(a, a.T, out=a); x[1:5] += x[0:4]).
-- 2. A written tensor with elements sharing one address (an expanded view) is refused as
--    PyTorch refuses it, except by a fill, which writes one value everywhere.
--
--   tide tests/lua/test_overlap.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

local function L(x) return x:tolist() end
local function ar(n) return torch.arange(n, {dtype = "float64"}) end
local function leaf(v) return torch.tensor(v, {dtype = "float64", requires_grad = true}) end

-------------------------------------------------------------------------------------------
-- 1. Overlapping inputs: NumPy's answer

T.test("x:add_(x:t()) and np.add(a, a.T, {out=a}) read a before writing it", function()
  -- np.add(a, a.T, out=a) with a = np.arange(9.).reshape(3, 3)
  local want = {{0, 4, 8}, {4, 8, 12}, {8, 12, 16}}
  local x = ar(9):reshape(3, 3)
  x:add_(x:t())
  T.eq(L(x), want)
  local a = np.arange(9.0):reshape(3, 3)
  local r = np.add(a, a.T, {out = a})
  T.eq(L(a), want)
  T.eq(L(r), want)
  local y = ar(9):reshape(3, 3)
  torch.add(y, y.T, {out = y})
  T.eq(L(y), want)
end)

T.test("shifted slices: x[1:5] += x[0:4] and x[0:4] += x[1:5]", function()
  local x = ar(5)
  x[{{2, 5}}]:add_(x[{{1, 4}}])
  T.eq(L(x), {0, 1, 3, 5, 7})
  x = ar(5)
  x[{{1, 4}}]:add_(x[{{2, 5}}])
  T.eq(L(x), {1, 3, 5, 7, 4})
  x = ar(5)
  np.multiply(x[{{1, 4}}], 2, {out = x[{{2, 5}}]})  -- np.multiply(x[0:4], 2, out=x[1:5])
  T.eq(L(x), {0, 0, 2, 4, 6})
  x = ar(5)
  torch.mul(x[{{1, 4}}], 2, {out = x[{{2, 5}}]})
  T.eq(L(x), {0, 0, 2, 4, 6})
  x = ar(5)
  x[{{2, 5}}]:sub_(x[{{1, 4}}])  -- x[1:5] -= x[0:4]
  T.eq(L(x), {0, 1, 1, 1, 1})
end)

T.test("unary ops with out= overlapping their input", function()
  local x = ar(5)
  np.square(x[{{1, 4}}], {out = x[{{2, 5}}]})  -- np.square(x[0:4], out=x[1:5])
  T.eq(L(x), {0, 0, 1, 4, 9})
  x = ar(5)
  torch.square(x[{{1, 4}}], {out = x[{{2, 5}}]})
  T.eq(L(x), {0, 0, 1, 4, 9})
  x = ar(5)
  np.negative(x[{{2, 5}}], {out = x[{{1, 4}}]})  -- np.negative(x[1:5], out=x[0:4])
  T.eq(L(x), {-1, -2, -3, -4, 4})
end)

T.test("an out= of another dtype is written after the inputs are read", function()
  local x = ar(5)
  np.less(x[{{1, 4}}], 2, {out = x[{{2, 5}}]})  -- a bool result cast into the float64 out
  T.eq(L(x), {0, 1, 1, 0, 0})
  x = ar(5)
  np.add(x[{{1, 4}}], x[{{2, 5}}], {out = x[{{2, 5}}]})
  T.eq(L(x), {0, 1, 3, 5, 7})
end)

T.test("clamp_, lerp_ and where with overlapping operands", function()
  local x = torch.tensor({5, 1, 1, 1, 1}, {dtype = "float64"})
  x[{{2, 5}}]:clamp_(x[{{1, 4}}])  -- np.maximum(x[1:5], x[0:4], out=x[1:5])
  T.eq(L(x), {5, 5, 1, 1, 1})
  x = torch.tensor({5, 1, 1, 1, 1}, {dtype = "float64"})
  np.clip(x[{{2, 5}}], x[{{1, 4}}], 9, {out = x[{{2, 5}}]})
  T.eq(L(x), {5, 5, 1, 1, 1})
  x = ar(5)
  x[{{2, 5}}]:lerp_(x[{{1, 4}}], 0.5)  -- a = x[1:5]; a += 0.5 * (x[0:4] - a)
  T.eq(L(x), {0, 0.5, 1.5, 2.5, 3.5})
  x = ar(5)
  x[{{2, 5}}]:lerp_(torch.full({4}, 10.0, {dtype = "float64"}), x[{{1, 4}}])  -- a tensor weight
  T.eq(L(x), {0, 1, 10, 17, 22})
  x = ar(5)
  torch.where(torch.ones(4, {dtype = "bool"}), x[{{1, 4}}], 0.0, {out = x[{{2, 5}}]})
  T.eq(L(x), {0, 0, 1, 2, 3})
end)

T.test("copy_ and assignment from an overlapping source", function()
  local x = ar(5)
  x[{{2, 5}}]:copy_(x[{{1, 4}}])  -- np.copyto(x[1:5], x[0:4])
  T.eq(L(x), {0, 0, 1, 2, 3})
  x = ar(5)
  x[{{1, 4}}]:copy_(x[{{2, 5}}])
  T.eq(L(x), {1, 2, 3, 4, 4})
  x = ar(5)
  x[{{2, 5}}] = x[{{1, 4}}]
  T.eq(L(x), {0, 0, 1, 2, 3})
  local m = ar(6):reshape(2, 3)
  m[{{}, {2, 3}}] = m[{{}, {1, 2}}]  -- x[:, 1:3] = x[:, 0:2]
  T.eq(L(m), {{0, 0, 1}, {3, 3, 4}})
  local s = ar(9):reshape(3, 3)
  s:copy_(s:t())  -- np.copyto(a, a.T)
  T.eq(L(s), {{0, 3, 6}, {1, 4, 7}, {2, 5, 8}})
  local same = ar(3)
  same:copy_(same)
  T.eq(L(same), {0, 1, 2})
end)

T.test("index ops read overlapping sources and indices before writing", function()
  -- The values a source overlapping x had before the op (PyTorch refuses these; NumPy's
  -- fancy-index assignment reads as it writes; tide reads first, as for a slice).
  local x = ar(5)
  x[{torch.tensor{2, 3, 4}}] = x[{{1, 3}}]
  T.eq(L(x), {0, 0, 1, 2, 4})
  x = ar(5)
  x:index_put_({torch.tensor{2, 3, 4}}, x[{{1, 3}}])
  T.eq(L(x), {0, 0, 1, 2, 4})
  x = ar(5)
  x:index_add_(1, torch.tensor{2, 3, 4}, x[{{1, 3}}])  -- np.add.at(x, [1, 2, 3], x[0:3].copy())
  T.eq(L(x), {0, 1, 3, 5, 4})
  x = ar(5)
  x:scatter_(1, torch.tensor{2, 3, 4}, x[{{1, 3}}])
  T.eq(L(x), {0, 0, 1, 2, 4})
  x = ar(5)
  x:scatter_add_(1, torch.tensor{2, 3, 4}, x[{{1, 3}}])
  T.eq(L(x), {0, 1, 3, 5, 4})
  -- Index tensors that are views of the tensor written: idx = x[0:2].copy() - 1; x[idx] = ...
  local i = torch.tensor{2, 1, 1, 9}
  i:scatter_(1, i[{{1, 2}}], torch.tensor{5, 7})
  T.eq(L(i), {7, 5, 1, 9})
  i = torch.tensor{2, 3, 1, 1}
  i:index_fill_(1, i[{{1, 2}}], 0)
  T.eq(L(i), {2, 0, 0, 1})
  -- A mask that is a view of the tensor written: np.copyto(b[1:4], False, where=b[0:3])
  local b = torch.tensor{true, true, true, false}
  b[{{2, 4}}]:masked_fill_(b[{{1, 3}}], false)
  T.eq(L(b), {true, false, false, false})
end)

T.test("matrix products into an operand", function()
  local a = ar(4):reshape(2, 2)
  torch.mm(a, a, {out = a})  -- np.matmul(a, a, out=a)
  T.eq(L(a), {{2, 3}, {6, 11}})
  a = np.arange(4.0):reshape(2, 2)
  np.matmul(a, a, {out = a})
  T.eq(L(a), {{2, 3}, {6, 11}})
  a = np.arange(4.0):reshape(2, 2)
  np.dot(a, a, {out = a})
  T.eq(L(a), {{2, 3}, {6, 11}})
  -- out= overlapping the left operand by one row: np.matmul(big[0:2], w, out=big[1:3])
  local big = ar(6):reshape(3, 2)
  torch.mm(big[{{1, 2}}], torch.tensor({{1, 1}, {0, 1}}, {dtype = "float64"}), {out = big[{{2, 3}}]})
  T.eq(L(big), {{0, 1}, {0, 1}, {2, 5}})
  local v = ar(4):reshape(2, 2)
  torch.mv(v, v[1], {out = v[2]})  -- v[1] = v @ v[0]
  T.eq(L(v), {{0, 1}, {1, 3}})
  local c = ar(4):reshape(2, 2)
  c:addmm_(c, torch.tensor({{1, 2}, {3, 4}}, {dtype = "float64"}))  -- c + c @ b
  T.eq(L(c), {{3, 5}, {13, 19}})
  c = ar(4):reshape(2, 2)
  torch.addmm(c, c, c, {out = c})  -- c + c @ c
  T.eq(L(c), {{2, 4}, {8, 14}})
  local m = torch.zeros(3, 3, {dtype = "float64"})
  m[1] = torch.tensor{2, 1, 1}
  np.outer(m[1], m[1], {out = m})  -- np.outer(v, v, out=m) with v = m[0]
  T.eq(L(m), {{4, 2, 2}, {2, 1, 1}, {2, 1, 1}})
end)

T.test("reductions and scans with out= overlapping the input", function()
  local x = ar(6):reshape(2, 3)
  np.sum(x, {axis = 2, out = x[{{}, 1}]})  -- np.sum(x, axis=1, out=x[:, 0])
  T.eq(L(x), {{3, 1, 2}, {12, 4, 5}})
  local a = torch.tensor({1, 2, 3, 4}, {dtype = "float64"})
  np.cumsum(a[{{1, 3}}], {out = a[{{2, 4}}]})  -- np.cumsum(a[0:3], out=a[1:4])
  T.eq(L(a), {1, 1, 3, 6})
  a = torch.tensor({1, 2, 3, 4}, {dtype = "float64"})
  torch.cumsum(a, 1, {out = a})
  T.eq(L(a), {1, 3, 6, 10})
end)

T.test("recorded in-place ops on overlapping non-leaf views give the values and gradients", function()
  -- z = x * 1; z[1:5] += z[0:4].clone(); (z * w).sum().backward() in PyTorch
  local x = leaf{0, 1, 2, 3, 4}
  local z = x * 1
  z[{{2, 5}}]:add_(z[{{1, 4}}])
  T.eq(L(z), {0, 1, 3, 5, 7})
  local loss = (z * torch.arange(1, 6, {dtype = "float64"})):sum()
  loss:backward()
  T.eq(L(x.grad), {3, 5, 7, 9, 5})
  -- z = (x * 1).view(3, 3); z.add_(z.t().clone()): the gradient is w + w^T
  x = leaf{0, 1, 2, 3, 4, 5, 6, 7, 8}
  z = (x * 1):view(3, 3)
  z:add_(z:t())
  T.eq(L(z), {{0, 4, 8}, {4, 8, 12}, {8, 12, 16}})
  loss = (z * torch.arange(1, 10, {dtype = "float64"}):view(3, 3)):sum()
  loss:backward()
  T.eq(L(x.grad), {2, 6, 10, 6, 10, 14, 10, 14, 18})
  -- out= stays refused while recording, overlapping or not
  T.error_usable(function() np.add(x, 1, {out = x}) end, "add: out= is not differentiable")
  T.error_usable(function() x:add_(x) end, "add_: a leaf tensor that requires grad cannot be modified in place")
end)

T.test("the same layout reads and writes each element in place", function()
  local x = ar(4)
  x:add_(x)
  T.eq(L(x), {0, 2, 4, 6})
  local a = ar(4)
  np.multiply(a, a, {out = a})
  T.eq(L(a), {0, 1, 4, 9})
  local d = a:detach()  -- another view with the same layout
  d:add_(a)
  T.eq(L(a), {0, 2, 8, 18})
  local t = ar(6):reshape(2, 3):t()
  t:mul_(t)
  T.eq(L(t), {{0, 9}, {1, 16}, {4, 25}})
  -- columns of one matrix share no element although their address ranges meet
  local m = ar(6):reshape(3, 2)
  m[{{}, 1}]:add_(m[{{}, 2}])
  T.eq(L(m), {{1, 1}, {5, 3}, {9, 5}})
end)

T.test("fused optimizer steps: a gradient overlapping what they write is read first", function()
  local p = torch.tensor({1, 2, 3}, {dtype = "float64"})
  torch._sgd_step_(p, p, nil, {lr = 0.5})  -- p -= 0.5 * p
  T.eq(L(p), {0.5, 1, 1.5})
  local B = torch.tensor({1, 2, 3, 4}, {dtype = "float64"})
  torch._sgd_step_(B[{{2, 4}}], B[{{1, 3}}], nil, {lr = 1})  -- p = B[1:4]; p -= B[0:3].copy()
  T.eq(L(B), {1, 1, 1, 1})
  B = torch.tensor({1, 2, 3, 4}, {dtype = "float64"})
  local q = torch.zeros(3, {dtype = "float64"})
  -- buf = B[1:4]; buf += B[0:3].copy(); q -= buf
  torch._sgd_step_(q, B[{{1, 3}}], B[{{2, 4}}], {lr = 1, momentum = 1})
  T.eq(L(B), {1, 3, 5, 7})
  T.eq(L(q), {-3, -5, -7})
end)

T.test("fused optimizer steps refuse state buffers sharing memory", function()
  local p, g = torch.zeros(4), torch.ones(4)
  local S = torch.zeros(6)
  T.error_usable(function() torch._sgd_step_(p, g, p, {lr = 1, momentum = 0.9}) end,
    "SGD: the momentum_buffer shares memory with the parameter; each state buffer needs its own tensor")
  T.error_usable(function() torch._adam_step_(p, g, S[{{1, 4}}], S[{{3, 6}}], nil, {lr = 1, step = 1}) end,
    "Adam: the exp_avg_sq shares memory with the exp_avg; each state buffer needs its own tensor")
  T.eq(L(S), {0, 0, 0, 0, 0, 0})
  T.eq(L(p), {0, 0, 0, 0})
end)

-------------------------------------------------------------------------------------------
-- 2. Elements sharing one address: refused

local MSG = ": unsupported operation: more than one element of the written-to tensor refers to a single "
  .. "memory location. Please clone() the tensor before performing the operation."

-- An expanded (2, 3) view of a zero vector; the write must be refused and leave it zero.
local function refused(op, fn, dtype)
  local base = torch.zeros(3, {dtype = dtype or "float32"})
  local e = T.error(function() fn(base:view(1, 3):expand(2, 3)) end, op .. MSG)
  T.eq(e, op .. MSG, "the whole message")
  T.eq(L(base), dtype == "bool" and {false, false, false} or {0, 0, 0}, "nothing written by " .. op)
  T.still_usable()
end

T.test("in-place methods refuse an expanded tensor", function()
  refused("add_", function(e) e:add_(1) end)
  refused("mul_", function(e) e:mul_(torch.ones(2, 3)) end)
  refused("exp_", function(e) e:exp_() end)
  refused("clamp_", function(e) e:clamp_(1, 2) end)
  refused("clamp_", function(e) e:clamp_(torch.ones(3)) end)
  refused("lerp_", function(e) e:lerp_(torch.ones(2, 3), 0.5) end)
  refused("copy_", function(e) e:copy_(torch.ones(2, 3)) end)
  refused("uniform_", function(e) e:uniform_() end)
  refused("normal_", function(e) e:normal_() end)
  refused("masked_fill_", function(e) e:masked_fill_(torch.tensor{true, false, true}, 1) end)
  refused("index_fill_", function(e) e:index_fill_(2, torch.tensor{1}, 1) end)
  refused("index_add_", function(e) e:index_add_(2, torch.tensor{1}, torch.ones(2, 1)) end)
  refused("index_put", function(e) e:index_put_({torch.tensor{1}}, torch.tensor(1.0)) end)  -- its messages say index_put
  refused("scatter_", function(e) e:scatter_(2, torch.tensor{{1}, {1}}, 1.0) end)
  refused("scatter_add_", function(e) e:scatter_add_(2, torch.tensor{{1}, {1}}, torch.ones(2, 1)) end)
  refused("addmm_", function(e) e:addmm_(torch.ones(2, 2), torch.ones(2, 3)) end)
  refused("logical_not_", function(e) e:logical_not_() end, "bool")
end)

T.test("out= refuses an expanded tensor, in torch and NumPy spelling", function()
  refused("add", function(e) np.add(torch.ones(2, 3), 1, {out = e}) end)
  refused("add", function(e) torch.add(torch.ones(2, 3), 1, {out = e}) end)
  refused("add", function(e) np.add(torch.ones(2, 3, {dtype = "int64"}), 1, {out = e}) end)  -- cast into out
  refused("sqrt", function(e) np.sqrt(torch.ones(2, 3), {out = e}) end)
  refused("clamp", function(e) np.clip(torch.ones(2, 3), 0, 1, {out = e}) end)
  refused("clamp", function(e) np.clip(torch.ones(2, 3), torch.zeros(3), nil, {out = e}) end)
  refused("lerp", function(e) torch.lerp(torch.ones(2, 3), torch.ones(2, 3), torch.ones(3), {out = e}) end)
  refused("dot", function(e) np.dot(torch.ones(2, 3), torch.tensor(2.0), {out = e}) end)
  refused("where", function(e) torch.where(torch.ones(2, 3, {dtype = "bool"}), 1.0, 0.0, {out = e}) end)
  refused("lerp", function(e) torch.lerp(torch.ones(2, 3), torch.ones(2, 3), 0.5, {out = e}) end)
  refused("mm", function(e) torch.mm(torch.ones(2, 2), torch.ones(2, 3), {out = e}) end)
  refused("matmul", function(e) np.matmul(torch.ones(2, 2), torch.ones(2, 3), {out = e}) end)
  refused("addmm", function(e) torch.addmm(torch.ones(2, 3), torch.ones(2, 2), torch.ones(2, 3), {out = e}) end)
  refused("outer", function(e) np.outer(torch.ones(2), torch.ones(3), {out = e}) end)
  refused("sum", function(e) np.sum(torch.ones(4, 2, 3), {axis = 1, out = e}) end)
  refused("cumsum", function(e) torch.cumsum(torch.ones(2, 3), 2, {out = e}) end)
  local bcast = np.broadcast_to(np.zeros(3), {2, 3})
  T.error_usable(function() np.add(bcast, 1, {out = bcast}) end, "add" .. MSG)
end)

T.test("assignment refuses an expanded target unless it writes one number", function()
  refused("index", function(e) e[{{}, 1}] = torch.tensor{5, 6} end)
  refused("index", function(e) e[{torch.tensor{1, 2}, 1}] = 5 end)
  refused("index", function(e) e[{{}, 1}] = e[{{}, 2}] end)
  local x = torch.zeros(3)
  local e = x:view(1, 3):expand(2, 3)
  e[{{}, 1}] = 5  -- a fill: the same value lands in the shared element (PyTorch allows it)
  T.eq(L(x), {5, 0, 0})
  e[1] = torch.tensor{1, 2, 3}  -- one row of the view has no shared elements
  T.eq(L(x), {1, 2, 3})
end)

T.test("fill_ and zero_ write one value everywhere, so an expanded tensor is fine", function()
  local x = torch.zeros(3)
  x:view(1, 3):expand(2, 3):fill_(7)
  T.eq(L(x), {7, 7, 7})
  x:view(1, 3):expand(2, 3):zero_()
  T.eq(L(x), {0, 0, 0})
  -- the shared elements are written once: a view of 2^59 elements over one fills at once
  local one = torch.zeros(1, {dtype = "float64"})
  local huge = one:expand(1 << 59)
  T.eq(huge:fill_(3):numel(), 1 << 59)
  T.eq(one:item(), 3)
  nn.init.zeros_(huge)
  T.eq(one:item(), 0)
  local grid = torch.zeros(2, 1)
  grid:expand(2, 1 << 40):fill_(5)
  T.eq(L(grid), {{5}, {5}})
end)

T.test("size-1 dims with stride 0 and empty tensors are not refused", function()
  local x = torch.zeros(3)
  local one = x:expand(1, 3)
  T.eq(one:stride(), {0, 1})
  one:add_(1)
  T.eq(L(x), {1, 1, 1})
  torch.add(one, 1, {out = one})
  T.eq(L(x), {2, 2, 2})
  local empty = torch.zeros(1, 3):expand(0, 3)
  T.eq(L(empty:add_(1)), {})
  T.eq(L(np.add(empty, 1, {out = empty})), {})
  T.eq(torch.zeros(1, 0):expand(4, 0):mul_(2).shape, {4, 0})
end)

T.test("recording in place into an expanded non-leaf view is refused the same way", function()
  local x = leaf{1, 2, 3}
  local z = x * 1
  T.error_usable(function() z:view(1, 3):expand(2, 3):mul_(2) end, "mul_" .. MSG)
  T.error_usable(function() z:view(1, 3):expand(2, 3):fill_(2) end, "fill_" .. MSG)
  T.error_usable(function() z:view(1, 3):expand(2, 3)[{{}, 1}] = torch.tensor{1.0, 2.0} end, "index" .. MSG)
  T.eq(L(z), {1, 2, 3})
end)

T.test("optimizer steps refuse an expanded parameter or state buffer, naming it", function()
  local e = torch.zeros(1):expand(3)
  T.error_usable(function() torch._sgd_step_(e, torch.zeros(3), nil, {lr = 1}) end,
    "SGD: unsupported operation: more than one element of the parameter refers to a single memory location. "
    .. "Please clone() the tensor before performing the operation.")
  T.error_usable(function() torch._rmsprop_step_(torch.zeros(3), torch.zeros(3), e, nil, nil, {lr = 1}) end,
    "RMSprop: unsupported operation: more than one element of the square_avg refers to a single memory location. "
    .. "Please clone() the tensor before performing the operation.")
end)

T.done()
