-- Sizes that overflow int64, zero-element results with huge dims, bool empties, printing huge
-- views and long user strings in messages (issue 13): every case is an exact error or an
-- exact value, never a wrapped number, a hang or undefined behaviour.
--
--   tide tests/lua/test_sizes.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

local BIG = 2 ^ 62 -- 4611686018427387904, exact as a float and as an integer
local MAXI = math.maxinteger

-- Asserts that fn raises exactly `message`, and that the interpreter still works after.
local function fails(fn, message)
  local ok, err = pcall(fn)
  if ok then error("expected the error: " .. message, 2) end
  if tostring(err) ~= message then
    error("wrong error:\n  got      " .. tostring(err) .. "\n  expected " .. message, 2)
  end
  T.still_usable()
end

-- Runs fn and asserts it took less than `seconds` of wall time (the work must not scale
-- with a huge size).
local function quick(fn, seconds)
  local t0 = torch.utils.clock()
  local r = fn()
  local dt = torch.utils.clock() - t0
  if dt > (seconds or 1) then error(string.format("took %.2f s", dt), 2) end
  return r
end

T.test("creation: sizes whose byte size or strides overflow are errors naming the shape", function()
  fails(function() return torch.zeros(BIG, BIG) end,
    "zeros: shape {4611686018427387904,4611686018427387904} of float32 is too large " ..
    "(its byte size or strides would pass 2^63-1)")
  -- 2^61 float32 elements are 2^63 bytes (PyTorch: "Storage size calculation overflowed")
  fails(function() return torch.empty(2 ^ 61) end,
    "empty: shape {2305843009213693952} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return torch.ones(2 ^ 32, 2 ^ 32) end,
    "ones: shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return torch.full({2 ^ 40, 2 ^ 40}, 7) end,
    "full: shape {1099511627776,1099511627776} of int64 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return torch.rand(2 ^ 40, 2 ^ 40) end,
    "rand: shape {1099511627776,1099511627776} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return np.zeros({2 ^ 40, 2 ^ 40}) end,
    "zeros: shape {1099511627776,1099511627776} of float64 is too large (its byte size or strides would pass 2^63-1)")
end)

T.test("creation: a zero-element shape is legal only while its strides fit (PyTorch 2.x's rule)", function()
  -- torch.zeros(0, 2^62, 2^62) in PyTorch 2.x: "Stride calculation overflowed"
  fails(function() return torch.zeros(0, BIG, BIG) end,
    "zeros: shape {0,4611686018427387904,4611686018427387904} of float32 is too large " ..
    "(its byte size or strides would pass 2^63-1)")
  local z = torch.zeros(0, 2 ^ 40, 2 ^ 20)
  T.eq(z.shape, {0, 2 ^ 40, 2 ^ 20})
  T.eq(z:stride(), {2 ^ 60, 2 ^ 20, 1})
  T.eq(z:numel(), 0)
  T.eq(torch.zeros(2 ^ 30, 2 ^ 30, 0):stride(), {2 ^ 30, 1, 1})
  T.eq(z:flatten().shape, {0})
  T.eq(z:sum(2).shape, {0, 2 ^ 20})
  T.eq(z:sum():item(), 0)
  -- the first size never enters a stride: its product with the others may pass int64
  local w = torch.zeros(MAXI, 2, 0)
  T.eq(w:stride(), {2, 1, 1})
  T.eq(w:numel(), 0)
  T.eq(w:sum(1).shape, {2, 0})
  T.eq(w:amax(1).shape, {2, 0})
  T.eq(w:flatten().shape, {0})
  T.eq(w:unsqueeze(1).shape, {1, MAXI, 2, 0})
  T.eq((w + 1).shape, {MAXI, 2, 0})
  fails(function() return w:sum(3) end,
    "sum: shape {9223372036854775807,2,1} has too many elements (more than 2^63-1)")
  fails(function() return w:flatten(1, 2) end,
    "flatten: shape {9223372036854775807,2} has too many elements (more than 2^63-1)")
end)

T.test("expand: a view whose element count or byte span passes int64 is an error", function()
  -- PyTorch: "numel: integer multiplication overflow"; before, sum() of it returned 0
  fails(function() return torch.ones(1, 1):expand(2 ^ 32, 2 ^ 32) end,
    "expand: shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return torch.ones(1, 1):expand(2 ^ 32, 2 ^ 32):sum() end,
    "expand: shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return torch.ones(1, {dtype = "float64"}):expand(2 ^ 61) end,
    "expand: shape {2305843009213693952} of float64 is too large (its byte size or strides would pass 2^63-1)")
  local v = torch.ones(1, {dtype = "int8"}):expand(2 ^ 62)
  T.eq(v:numel(), BIG)
  T.eq(v:stride(), {0})
  fails(function() return v:float() end,
    "to: shape {4611686018427387904} of float32 is too large (its byte size or strides would pass 2^63-1)")
  -- broadcasting two legal views to a shape that is too large
  local a, b = torch.ones(1, 1):expand(2 ^ 32, 1), torch.ones(1, 1):expand(1, 2 ^ 32)
  fails(function() return a + b end,
    "add: shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)")
  fails(function() return a:matmul(b) end,
    "matmul: shape {4294967296,4294967296} of float32 is too large (its byte size or strides would pass 2^63-1)")
end)

T.test("view / reshape / unflatten of a zero-element tensor to a shape whose strides overflow", function()
  fails(function() return torch.zeros(0):view(BIG, BIG, 0) end,
    "view: shape {4611686018427387904,4611686018427387904,0} of float32 is too large " ..
    "(its byte size or strides would pass 2^63-1)")
  fails(function() return torch.zeros(0):reshape(BIG, BIG, 0) end,
    "reshape: shape {4611686018427387904,4611686018427387904,0} of float32 is too large " ..
    "(its byte size or strides would pass 2^63-1)")
  fails(function() return torch.zeros(0):reshape(BIG, BIG, -1) end,
    "reshape: shape {4611686018427387904,4611686018427387904,-1} is invalid for input of size 0")
  fails(function() return torch.zeros(0):reshape(BIG, 0, -1) end,
    "reshape: cannot infer the size of -1 in shape {4611686018427387904,0,-1} when the other sizes multiply to 0")
  fails(function() return torch.zeros(0):unflatten(1, {BIG, BIG, 0}) end,
    "unflatten: shape {4611686018427387904,4611686018427387904,0} of float32 is too large " ..
    "(its byte size or strides would pass 2^63-1)")
  T.eq(torch.zeros(0):view(2 ^ 40, 0, 2 ^ 20).shape, {2 ^ 40, 0, 2 ^ 20})
  fails(function() return torch.zeros(6):view(BIG, BIG) end,
    "view: shape {4611686018427387904,4611686018427387904} is invalid for input of size 6")
end)

T.test("repeat, cat, split and narrow check their sums and products", function()
  fails(function() return torch.zeros(3):repeat_tensor(BIG, BIG) end,
    "repeat: size 3 repeated 4611686018427387904 times is too large (more than 2^63-1)")
  fails(function() return torch.zeros(3):repeat_tensor(0, BIG, 2) end,
    "repeat: shape {0,4611686018427387904,6} of float32 is too large (its byte size or strides would pass 2^63-1)")
  local e = torch.zeros(0, 2)
  local parts = {}
  for i = 1, 5 do parts[i] = torch.zeros(1, 2, {dtype = "int8"}):expand(2 ^ 61, 2) end
  fails(function() return torch.cat(parts) end,
    "cat: the sum of the sizes at dim 1 is too large (more than 2^63-1)")
  T.eq(torch.cat({e, e}).shape, {0, 2})
  fails(function() return torch.cat({parts[1], parts[2]}, 2) end,
    "cat: shape {2305843009213693952,4} of int8 is too large (its byte size or strides would pass 2^63-1)")
  -- PyTorch 1.13 wraps this sum and splits {4} into five pieces
  fails(function() return torch.zeros(4):split({BIG, BIG, BIG, BIG, 4}) end,
    "split: split sizes {4611686018427387904,4611686018427387904,4611686018427387904,...} sum past 2^63-1 " ..
    "but dim 1 has size 4")
  fails(function() return torch.zeros(4):narrow(1, 2, MAXI) end,
    "narrow: start 2 and length 9223372036854775807 run past the end of dim 1 of size 4")
  local s = torch.zeros(5):split(MAXI)
  T.eq(#s, 1)
  T.eq(s[1].shape, {5})
  local c = torch.zeros(5):chunk(MAXI)
  T.eq(#c, 5)
  T.eq(torch.arange(1, 6)[{{1, 5, MAXI}}]:tolist(), {1})
end)

T.test("zero-element results: the work never scales with a huge dim", function()
  -- torch.eye(n, 0) in PyTorch returns at once
  T.eq(quick(function() return torch.eye(MAXI, 0) end).shape, {MAXI, 0})
  T.eq(quick(function() return torch.eye(0, 2 ^ 60) end).shape, {0, 2 ^ 60})
  -- strides are checked in bytes (PyTorch checks elements and accepts this one)
  fails(function() return torch.eye(0, MAXI) end,
    "eye: shape {0,9223372036854775807} of float32 is too large (its byte size or strides would pass 2^63-1)")
  T.eq(torch.eye(3, 4, {dtype = "int64"}):tolist(), {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}})
  T.eq(np.eye(3, 2, -1):tolist(), {{0, 0}, {1, 0}, {0, 1}})
  T.eq(np.eye(2, 3, MAXI):tolist(), {{0, 0, 0}, {0, 0, 0}})
  T.eq(np.eye(2, 3, math.mininteger):tolist(), {{0, 0, 0}, {0, 0, 0}})
  -- an empty dim gives one empty chunk, as split does (PyTorch gives 10^7 empty chunks)
  local c = quick(function() return torch.zeros(0):chunk(10 ^ 7) end)
  T.eq(#c, 1)
  T.eq(c[1].shape, {0})
  local s = quick(function() return torch.zeros(0, 3):split(10 ^ 7) end)
  T.eq(#s, 1)
  T.eq(s[1].shape, {0, 3})
  T.eq(#torch.zeros(4):chunk(3), 2)
  T.eq(quick(function() return torch.zeros(3):repeat_tensor(0, 2 ^ 40) end).shape, {0, 3 * 2 ^ 40})
  T.eq(quick(function() return np.arange(0, BIG, -1) end).shape, {0})
end)

T.test("unbind and split of a huge expanded dim: a clear error, not a list past memory", function()
  local x = torch.ones(1):expand(1 << 40)
  fails(function() return x:unbind() end, "unbind: out of memory for a list of 1099511627776 views")
  fails(function() return torch.split(x, 1) end, "split: out of memory for a list of 1099511627776 views")
  fails(function() return x:chunk(1 << 40) end, "chunk: out of memory for a list of 1099511627776 views")
  -- an allocation past memory names the op that asked (the binding's name goes first)
  T.error(function() return torch.ones(1, 4):expand(1 << 38, 4):contiguous() end, "contiguous: out of memory: cannot allocate")
  T.error(function() return torch.empty(1 << 40) end, "empty: out of memory: cannot allocate")
  -- a list that fits is built as before
  local pieces = torch.ones(3):expand(2, 3):unbind()
  T.eq(#pieces, 2)
  T.eq(pieces[2]:tolist(), {1, 1, 1})
end)

T.test("empty of dtype bool holds only 0 and 1, even in blocks the allocator reuses", function()
  for _, n in ipairs({1000, 64, 5000}) do
    for _ = 1, 4 do
      local junk = torch.full({n}, 255, {dtype = "uint8"})
      junk:free()
    end
    local b = torch.empty(n, {dtype = "bool"})
    T.eq(b:to("uint8"):max():item(), 0)
    T.eq(torch.empty_like(torch.zeros(n), {dtype = "bool"}):any():item(), false)
  end
end)

T.test("printing a view of 2^40 elements reads only the elements it shows", function()
  local s = quick(function() return tostring(torch.ones(1):expand(2 ^ 40)) end)
  T.eq(s, "tensor([1., 1., 1.,  ..., 1., 1., 1.])")
  -- PyTorch 1.13's repr of torch.arange(4).view(2, 2).expand(2**20, 2, 2).transpose(0, 2)
  local m = quick(function() return tostring(torch.arange(4):view(2, 2):expand(2 ^ 20, 2, 2):transpose(1, 3)) end)
  T.eq(m, "tensor([[[0, 0, 0,  ..., 0, 0, 0],\n         [2, 2, 2,  ..., 2, 2, 2]],\n\n" ..
    "        [[1, 1, 1,  ..., 1, 1, 1],\n         [3, 3, 3,  ..., 3, 3, 3]]])")
end)

T.test("error messages quote at most 60 characters of a user's string", function()
  local long = string.rep("x", 10 ^ 7)
  local shown = string.rep("x", 60) .. "... (10000000 bytes)"
  fails(function() return torch.zeros(2, {dtype = long}) end,
    "zeros: unknown dtype '" .. shown ..
    "' (expected bool, uint8, uint16, uint32, uint64, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64 or complex128)")
  fails(function() return torch.zeros(2, {device = long}) end,
    "zeros: device: unknown device '" .. shown .. "' (expected \"cpu\", \"cuda\" or \"cuda:N\")")
  fails(function() return torch.zeros(2):to(long) end,
    "to: unknown dtype or device '" .. shown .. "' (devices are \"cpu\", \"cuda\" and \"cuda:N\")")
  fails(function() return torch.zeros(2)[long] end, "tensor: no method or property named '" .. shown .. "'")
  fails(function() return np.load(long) end, "np.load: " .. shown .. ": cannot open file: File name too long")
  fails(function() return np.loadtxt(long) end, "np.loadtxt: " .. shown .. ": cannot open file: File name too long")
  fails(function() return torch.optim.SGD({torch.zeros(1, {requires_grad = true})}, {lr = 1, [long] = 1}) end,
    "SGD: unknown keyword '" .. shown .. "' (valid: dampening, differentiable, foreach, lr, maximize, momentum, nesterov, weight_decay)")
  -- a UTF-8 character is never cut
  local accents = string.rep("é", 40)
  local err = select(2, pcall(torch.zeros, 1, {dtype = accents}))
  T.truthy(err:find("'" .. string.rep("é", 30) .. "... (80 bytes)'", 1, true), err)
  T.eq(torch.utils._quote("short"), "short")
end)

T.done()
