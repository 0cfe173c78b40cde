-- np.fromiter, np.put, np.argpartition, np.unpackbits, np.packbits (bindings/lua/numpy_extra.lua),
-- with NumPy's values (computed by NumPy 1.24 and written here).
local T = dofile("tests/lua/harness.lua")

T.test("fromiter", function()
  local function count_to(n) local i = -1 return function() i = i + 1 if i < n then return i end end end
  local a = np.fromiter(count_to(4), {dtype = "float64"})
  T.eq(a.dtype, "float64") T.eq(a:tolist(), {0, 1, 2, 3})
  local b = np.fromiter(count_to(10), {count = 3})
  T.eq(b.dtype, "int64") T.eq(b:tolist(), {0, 1, 2})
  T.eq(np.fromiter({1.5, 2.5}):tolist(), {1.5, 2.5})
  T.eq(np.fromiter(count_to(0)).dtype, "float64")
  T.error(function() np.fromiter(count_to(2), {count = 3}) end, "fromiter: iterator too short: 2 items, count=3")
  T.error(function() np.fromiter(count_to(2), {count = -2}) end, "fromiter: count must be -1 or a non-negative integer, got -2")
  T.error(function() np.fromiter(5) end, "fromiter: expected an iterator function or a list, got")
  T.error(function() np.fromiter({1}, {cnt = 1}) end, "fromiter: unknown keyword 'cnt'")
end)

T.test("put", function()
  local z = np.zeros(9)
  T.eq(np.put(z, {1, -1, 3}, 5), nil)
  T.eq(z:tolist(), {5, 0, 5, 0, 0, 0, 0, 0, 5})
  local m = np.arange(6):reshape(2, 3)
  np.put(m, np.array{2, 6, 4}, {-1, -2})   -- values repeat: -1, -2, -1
  T.eq(m:tolist(), {{0, -1, 2}, {-1, 4, -2}})
  T.error(function() np.put(np.zeros(3), {4}, 1) end, "put: index 4 is out of bounds for a tensor of 3 elements")
  T.error(function() np.put(np.zeros(3), {0}, 1) end, "put: index 0 is out of bounds for a tensor of 3 elements")
  T.error(function() np.put(np.zeros(3), {-4}, 1) end, "put: index -4 is out of bounds")
  T.error(function() np.put(np.zeros(3), {1.5}, 1) end, "put: indices must be integers, got float64 values")
  T.error(function() np.put(np.zeros(3), {1}, {}) end, "put: cannot put an empty list of values")
  T.error(function() np.put(np.zeros({2, 2}):t(), {1}, 1) end, "put: the tensor must be contiguous")
  T.error(function() np.put({1, 2}, {1}, 1) end, "put: expected a tensor as argument 1")
end)

T.test("argpartition", function()
  local a = np.array{5, 1, 4, 2, 3}
  local idx = np.argpartition(a, 2)
  -- The 2nd smallest sits at position 2, smaller values before it, larger after it.
  local v = np.take(a, idx):tolist()
  T.eq(v[2], 2) T.truthy(v[1] <= 2) for i = 3, 5 do T.truthy(v[i] >= 2) end
  local m = np.array{{3, 1, 2}, {9, 7, 8}}
  local r = np.argpartition(m, 1, {axis = 1})
  T.eq(r:tolist(), {{1, 1, 1}, {2, 2, 2}})
  T.error(function() np.argpartition(a, 6) end, "argpartition: kth 6 is out of bounds for an axis of size 5")
  T.error(function() np.argpartition(a, 0) end, "argpartition: kth 0 is out of bounds")
  T.error(function() np.argpartition(a, 1.5) end, "argpartition: kth must be an integer, got 1.5")
  T.error(function() np.argpartition(np.array(1), 1) end, "argpartition: a 0-dim array cannot be partitioned")
end)

T.test("unpackbits and packbits", function()
  local u = np.array({{0, 255}, {7, 128}}, {dtype = "uint8"})
  T.eq(np.unpackbits(u):tolist(), {0,0,0,0,0,0,0,0, 1,1,1,1,1,1,1,1, 0,0,0,0,0,1,1,1, 1,0,0,0,0,0,0,0})
  T.eq(np.unpackbits(u, {axis = 2}):tolist(), {{0,0,0,0,0,0,0,0, 1,1,1,1,1,1,1,1}, {0,0,0,0,0,1,1,1, 1,0,0,0,0,0,0,0}})
  T.eq(np.unpackbits(u, {axis = -1, count = -3, bitorder = "little"}):tolist(),
       {{0,0,0,0,0,0,0,0, 1,1,1,1,1}, {1,1,1,0,0,0,0,0, 0,0,0,0,0}})
  T.eq(np.unpackbits(np.array({3}, {dtype = "uint8"}), {count = 10}):tolist(), {0,0,0,0,0,0,1,1,0,0})
  T.eq(np.unpackbits(u, {axis = 1}).shape, {16, 2})
  T.eq(np.packbits(np.array{1, 0, 1, 1, 0, 0, 0, 1, 1}):tolist(), {177, 128})
  T.eq(np.packbits(np.array({{1, 0, 1}, {0, 1, 1}}), {axis = 1}):tolist(), {{128, 64, 192}})
  T.eq(np.packbits({true, true}, {bitorder = "little"}):tolist(), {3})
  local x = np.array({{12, 200}}, {dtype = "uint8"})
  T.eq(np.packbits(np.unpackbits(x, {axis = 2}), {axis = 2}):tolist(), {{12, 200}})
  T.error(function() np.unpackbits(np.array{1}) end, "unpackbits: expected a uint8 array, got int64")
  T.error(function() np.unpackbits(u, {axis = 3}) end, "unpackbits: axis 3 is out of range for a 2-dim array")
  T.error(function() np.unpackbits(u, {bitorder = "middle"}) end, "unpackbits: bitorder must be 'big' or 'little', got 'middle'")
  T.error(function() np.unpackbits(u, {count = 1.5}) end, "unpackbits: count must be an integer, got 1.5")
  T.error(function() np.packbits(np.array{1.5}) end, "packbits: expected an integer or bool array, got float64")
  T.error(function() np.packbits(u, {axis = 0}) end, "packbits: axis 0 is out of range")
end)

T.test("copysign", function()
  T.eq(np.copysign(np.array{1, -2, 3}, np.array{-1, 1, -0.0}):tolist(), {-1, 2, -3})
  T.eq(np.copysign(np.array{1, 2}, -1).dtype, "float64")
  T.eq(torch.copysign(torch.tensor{1.5, -2}, 1):tolist(), {1.5, 2})
  local x = torch.tensor{1.5, -2, 3}
  T.eq(x:copysign_(torch.tensor{-1, -1, 1}), x)
  T.eq(x:tolist(), {-1.5, -2, 3})
  T.error(function() torch.ones(2, {dtype = "int64"}):copysign_(1) end,
          "copysign: result type float32 can't be cast to the desired output type int64")
end)

T.done()
