-- The unsigned dtypes uint16 / uint32 / uint64 (promotion as NumPy's, arithmetic, reductions,
-- printing, files), x:view(dtype), np.iinfo / np.finfo / torch.iinfo / torch.finfo and the
-- shift operators. Expected values are NumPy 1.24's (computed with /usr/bin/python3).
--
--   tide tests/lua/test_dtypes_extra.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err = T.error_usable
local torch = require "torch"
local np = require "numpy"

local UNSIGNED = {"uint16", "uint32", "uint64"}

T.test("names, constants and item sizes", function()
  for _, d in ipairs(UNSIGNED) do
    T.eq(torch[d], d); T.eq(np[d], d)
    T.eq(torch.zeros(2, {dtype = d}).dtype, d)
    T.eq(torch.zeros(2, {dtype = "torch." .. d}).dtype, d)
  end
  T.eq(torch.zeros(1, {dtype = "uint16"}):element_size(), 2)
  T.eq(torch.zeros(1, {dtype = "uint32"}):element_size(), 4)
  T.eq(torch.zeros(1, {dtype = "uint64"}):element_size(), 8)
end)

T.test("promotion follows NumPy's promote_types", function()
  local names = {"bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float16",
                 "float32", "float64"}
  local expected = {  -- np.promote_types(row, name) for each name above
    uint16 = {"uint16", "uint16", "uint16", "uint32", "uint64", "int32", "int32", "int32", "int64", "float32",
              "float32", "float64"},
    uint32 = {"uint32", "uint32", "uint32", "uint32", "uint64", "int64", "int64", "int64", "int64", "float64",
              "float64", "float64"},
    uint64 = {"uint64", "uint64", "uint64", "uint64", "uint64", "float64", "float64", "float64", "float64",
              "float64", "float64", "float64"},
  }
  for row, want in pairs(expected) do
    for i, name in ipairs(names) do
      T.eq(torch.promote_types(row, name), want[i], row .. "+" .. name)
      T.eq(torch.promote_types(name, row), want[i], name .. "+" .. row)
    end
  end
  T.eq(torch.promote_types("uint16", "bfloat16"), "float32")
  T.eq(torch.promote_types("uint64", "bfloat16"), "float64")
  local a, b = np.array({3}, "uint64"), np.array({-2}, "int64")
  T.eq((a + b).dtype, "float64"); T.eq((a + b):tolist(), {1.0})
  T.eq((np.array({7}, "uint32") + 1).dtype, "uint32")  -- a Lua integer keeps the tensor's dtype
  T.eq((torch.tensor({7}, {dtype = "uint32"}) * 0.5).dtype, "float32")  -- a Lua float gives the default float, as in PyTorch
  T.eq((np.array({7}, "uint32") * 0.5).dtype, "float64")  -- NumPy semantics for NumPy arrays
  local u = torch.tensor({1, 20}, {dtype = "uint32"})
  T.eq(torch.clamp(u, 0.5, 10).dtype, "float32"); T.eq(torch.clamp(u, 0.5, 10):tolist(), {1, 10})
  T.eq(np.clip(np.array({1, 20}, "uint32"), 0.5, 10).dtype, "float64")  -- NumPy's np.clip
  T.eq(torch.clamp(u, nil, 10).dtype, "uint32")
end)

T.test("wrapping arithmetic, division and comparisons", function()
  T.eq((np.array({65535}, "uint16") + np.array({1}, "uint16")):tolist(), {0})
  T.eq((np.array({0}, "uint32") - np.array({1}, "uint32")):tolist(), {4294967295})
  T.eq((np.array({65535}, "uint16") * np.array({2}, "uint16")):tolist(), {65534})
  T.eq((-np.array({1}, "uint16")):tolist(), {65535})
  T.eq((np.array({7, 9}, "uint32") // 2):tolist(), {3, 4})
  T.eq((np.array({7, 9}, "uint32") % 4):tolist(), {3, 1})
  T.eq((np.array({3}, "uint64") ^ np.array({40}, "uint64")):tolist(), {12157665459056928801})
  err(function() return torch.tensor({7}, {dtype = "uint32"}) // 0 end, "floor_divide: integer division by zero")
  T.eq((np.array({7}, "uint32") // 0):tolist(), {0})  -- NumPy semantics: 0 (and a warning)
  local big = np.array({0, -1, 5}, "uint64")  -- -1 wraps to 2^64 - 1
  T.eq(np.greater(big, np.array({5, 5, 5}, "uint64")):tolist(), {false, true, false})
  T.eq(np.maximum(big, np.array({1, 1, 1}, "uint64")):tolist()[1], 1)
  T.eq(np.true_divide(np.array({3}, "uint16"), 2):tolist(), {1.5})
end)

T.test("values above INT64_MAX: tolist and item give floats, printing is exact", function()
  local big = np.array({0, -1, 2^63}, "uint64")
  T.eq(big:tolist(), {0, 2.0^64, 2.0^63})
  T.eq(math.type(big:tolist()[1]), "integer")
  T.eq(math.type(big[2]:item()), "float")
  T.eq(tostring(big), "tensor([                   0, 18446744073709551615,  9223372036854775808],\n" ..
                      "       dtype=torch.uint64)")
  T.eq(tostring(torch.tensor({1, 65535}, {dtype = "uint16"})), "tensor([    1, 65535], dtype=torch.uint16)")
  err(function() return np.array({2^64}, "uint64") end, "array: cannot convert 1.84467e+19 to uint64")
  T.eq(np.array({2^63 + 2^11}, "uint64"):tolist(), {2.0^63 + 2^11})
end)

T.test("reductions, sorting and conversions", function()
  local u = np.array({5, -1, 0, 3}, "uint64")
  T.eq(tostring(u:max()), "tensor(18446744073709551615, dtype=torch.uint64)")
  T.eq(u:min():item(), 0)
  T.eq(u:argmax():item(), 2)
  T.eq(torch.argsort(u):tolist(), {3, 4, 1, 2})
  T.eq(u:sum().dtype, "uint64"); T.eq(u:sum():item(), 7)  -- wraps, as NumPy's uint64 sum
  T.eq(u:cumsum(1):tolist(), {5, 4, 4, 7})
  T.eq(np.array({1, 2}, "uint32"):sum().dtype, "int64")   -- as uint8: PyTorch's integer sum
  T.eq(np.mean(np.array({1, 2}, "uint32")):item(), 1.5)
  T.eq(np.array({1.7, 300.2}):to("uint16"):tolist(), {1, 300})
  T.eq(np.array({65535}, "uint16"):to("int16"):tolist(), {-1})
  T.eq(np.array({-1}, "int8"):to("uint32"):tolist(), {4294967295})
  T.eq(np.arange(0, 4, 1, {dtype = "uint32"}):tolist(), {0, 1, 2, 3})
  local m = np.array({{1, 2}, {3, 4}}, "uint32")
  T.eq(m:matmul(m):tolist(), {{7, 10}, {15, 22}})
  T.eq(torch.cat({np.array({1}, "uint16"), np.array({2}, "uint16")}):tolist(), {1, 2})
end)

T.test(".npy and safetensors round trips (and NumPy reads them)", function()
  local dir = T.tmpdir()
  for _, d in ipairs(UNSIGNED) do
    local x = np.array({{0, 1}, {-1, 7}}, d)
    local p = dir .. "/u_" .. d .. ".npy"
    np.save(p, x)
    local y = np.load(p)
    T.eq(y.dtype, d); T.eq(y:tolist(), x:tolist())
    local st = dir .. "/u_" .. d .. ".safetensors"
    torch.save({w = x}, st)
    local z = torch.load(st).w
    T.eq(z.dtype, d); T.eq(z:tolist(), x:tolist())
  end
  local txt = dir .. "/u.txt"
  T.write_bytes(txt, "1 65535\n9223372036854775807 0\n")
  T.eq(np.loadtxt(txt, {dtype = "uint64"}):tolist(), {{1, 65535}, {math.maxinteger, 0}})
  T.eq(np.loadtxt(txt, {dtype = "uint32", max_rows = 1}):tolist(), {1, 65535})
  err(function() return np.loadtxt(txt, {dtype = "uint16"}) end,
      "line 2, column 1: 9223372036854775807 is out of range for uint16")
  if T.have_python_module("numpy") then
    local out = T.python("import numpy as np, sys\nfor d in sys.argv[1:]:\n  a = np.load(d)\n  print(a.dtype, a.ravel().tolist())\n",
      dir .. "/u_uint16.npy", dir .. "/u_uint32.npy", dir .. "/u_uint64.npy")
    T.eq(out, "uint16 [0, 1, 65535, 7]\nuint32 [0, 1, 4294967295, 7]\nuint64 [0, 1, 18446744073709551615, 7]\n")
  end
end)

T.test("x:view(dtype) reinterprets bytes as NumPy's a.view(dtype)", function()
  local b = torch.tensor({1, 2, 3, 4}, {dtype = "uint8"})
  local v = b:view("uint16")
  T.eq(v.dtype, "uint16"); T.eq(v:tolist(), {513, 1027})
  v[1] = 0  -- a view: writes reach the original bytes
  T.eq(b:tolist(), {0, 0, 3, 4})
  T.eq(torch.tensor({1.5}, {dtype = "float64"}):view("int64"):tolist(), {4609434218613702656})
  T.eq(torch.tensor(1.5, {dtype = "float64"}):view("int64"):item(), 4609434218613702656)  -- 0-d, same size
  T.eq(torch.tensor({-1}, {dtype = "int32"}):view("uint16"):tolist(), {65535, 65535})
  T.eq(np.array({{1, 2}, {3, 4}}, "uint16"):view("uint32"):tolist(), {{131073}, {262147}})
  T.eq(torch.ones(2, 3):view("float32"):tolist(), {{1, 1, 1}, {1, 1, 1}})
  -- a column slice keeps stride 1 in the last dim: viewing it as bytes works
  local r = torch.arange(6, {dtype = "int16"}):view(2, 3)[{{}, {2, 3}}]
  T.eq(r:view("uint8"):tolist(), {{1, 0, 2, 0}, {4, 0, 5, 0}})
  err(function() return torch.ones(3):view("int64") end,
      "view: viewing float32 as int64 needs the last dim's size (12 bytes) to be a multiple of 8 bytes")
  err(function() return torch.ones(3, 4):t():view("int8") end,
      "view: viewing float32 as a smaller dtype (int8) needs the last dim to have stride 1, got strides {1,4}")
  err(function() return torch.tensor({1, 2}, {dtype = "uint8"}):view("bool") end,
      "view: cannot view uint8 data as bool (a bool holds only 0 or 1); compare instead, e.g. x ~= 0")
  err(function() return torch.tensor(1.5):view("int64") end,
      "view: a 0-dim float32 tensor cannot be viewed as a larger dtype (int64); unsqueeze it first")
  err(function() return torch.arange(8, {dtype = "uint8"})[{{2, 8}}]:view("int16") end,
      "view: viewing uint8 as int16 needs the last dim's size (7 bytes) to be a multiple of 2 bytes")
  err(function() return torch.arange(8, {dtype = "uint8"})[{{2, 7}}]:view("int16") end,
      "view: viewing uint8 as int16 needs the storage offset (1 bytes) to be a multiple of 2 bytes")
  err(function() return torch.ones(2, {requires_grad = true}):view("int32") end,
      "view: a dtype view (float32 as int32) of a tensor that requires grad is not supported; detach it first")
  err(function() return torch.ones(2):view("complex") end, "view: unknown dtype 'complex'")
end)

T.test("np.iinfo, np.finfo, torch.iinfo, torch.finfo", function()
  local i = np.iinfo("uint16")
  T.eq({i.bits, i.min, i.max, i.dtype}, {16, 0, 65535, "uint16"})
  T.eq(np.iinfo("uint32").max, 4294967295)
  T.eq(np.iinfo("uint64").max, 2.0^64)  -- 2^64 - 1 as the nearest Lua float
  T.eq(np.iinfo("int64").min, math.mininteger)
  T.eq(torch.iinfo("torch.int8").max, 127)
  T.eq(tostring(torch.iinfo("uint8")), "iinfo(min=0, max=255, dtype=uint8)")
  local f = np.finfo("float32")
  T.eq({f.bits, f.eps, f.max, f.min, f.tiny, f.smallest_normal, f.dtype},
       {32, 2^-23, 0x1.fffffep127, -0x1.fffffep127, 2^-126, 2^-126, "float32"})
  T.eq(f.resolution, 9.999999974752427e-07)          -- NumPy: 1e-6 rounded to float32
  T.eq(torch.finfo("float32").resolution, 1e-06)      -- PyTorch: 10^-precision
  T.eq(np.finfo("float16").resolution, 0.0010004043579101562)
  local h = torch.finfo("float16")
  T.eq({h.eps, h.max, h.tiny}, {2^-10, 65504.0, 2^-14})
  local bf = torch.finfo("bfloat16")
  T.eq({bf.bits, bf.eps, bf.max, bf.tiny, bf.resolution}, {16, 2^-7, 0x1.fep127, 2^-126, 0.01})
  T.eq(np.finfo("float64").eps, 2.220446049250313e-16)
  T.eq(torch.finfo().dtype, "float32")
  T.with_default_dtype("float64", function() T.eq(torch.finfo().dtype, "float64") end)
  err(function() return np.iinfo("float32") end, "iinfo: float32 is not an integer dtype (use finfo for floating-point dtypes)")
  err(function() return np.iinfo("bool") end, "iinfo: bool is not an integer dtype")
  err(function() return torch.finfo("int32") end, "finfo: int32 is not a floating-point dtype (use iinfo for integer dtypes)")
  err(function() return np.finfo("float128") end, "finfo: unknown dtype 'float128'")
  err(function() return np.finfo() end, "finfo: expected a dtype name such as \"int32\", got nil")
  err(function() return np.iinfo(torch.ones(1)) end, "iinfo: expected a dtype name such as \"int32\", got a tensor")
  err(function() return np.iinfo("int8", 2) end, "iinfo: unexpected argument 2")
end)

T.test("<< and >>: NumPy's shifts, counts past the width shift everything out", function()
  local u8 = torch.tensor({1, 3, 255}, {dtype = "uint8"})
  T.eq((u8 << torch.tensor({1, 7, 8}, {dtype = "uint8"})):tolist(), {2, 128, 0})
  T.eq(np.left_shift(torch.tensor({1, 1, 1, -1}, {dtype = "int8"}), torch.tensor({7, 8, 9, -1}, {dtype = "int8"})):tolist(),
       {-128, 0, 0, 0})
  T.eq(np.right_shift(torch.tensor({-128, -128, 64, 64}, {dtype = "int8"}), torch.tensor({7, 8, 9, -1}, {dtype = "int8"})):tolist(),
       {-1, -1, 0, 0})
  T.eq((torch.tensor({-3, 5}, {dtype = "int32"}) << 2):tolist(), {-12, 20})
  T.eq((torch.tensor({-3, 5}, {dtype = "int32"}) >> 1):tolist(), {-2, 2})
  T.eq((torch.tensor({-3, 5}) >> 64):tolist(), {-1, 0})
  T.eq(torch.bitwise_left_shift(torch.tensor({7}, {dtype = "int16"}), -1):tolist(), {0})
  T.eq((np.array({1}, "uint64") << 63):tolist(), {2.0^63})
  T.eq(torch.bitwise_right_shift(np.array({-8}, "uint64"), 3):tolist(), {2305843009213693951})  -- (2^64 - 8) >> 3
  T.eq((2 << torch.tensor({1, 2})):tolist(), {4, 8})
  local a, b = torch.tensor({1, -8}, {dtype = "int16"}), torch.tensor({2, 1}, {dtype = "int16"})
  for _, f in ipairs({torch.bitwise_left_shift, np.left_shift, np.bitwise_left_shift, torch.bitwise_right_shift,
                      np.right_shift, np.bitwise_right_shift}) do
    local want = f(a, b):tolist()
    local o1, o2 = torch.zeros(2, {dtype = "int16"}), torch.zeros(2, {dtype = "int16"})
    T.truthy(rawequal(f(a, b, {out = o1}), o1)); T.eq(o1:tolist(), want)
    if f ~= torch.bitwise_left_shift and f ~= torch.bitwise_right_shift then  -- NumPy's positional out
      T.truthy(rawequal(f(a, b, o2), o2)); T.eq(o2:tolist(), want)
    end
  end
  T.eq(np.left_shift(a, b):tolist(), {4, -16}); T.eq(np.right_shift(a, b):tolist(), {0, -4})
  local x = torch.tensor({1, 2})
  x:bitwise_left_shift_(3)
  T.eq(x:tolist(), {8, 16})
  x:bitwise_right_shift_(torch.tensor({1, 2}))
  T.eq(x:tolist(), {4, 4})
  err(function() return torch.ones(2) << 1 end, "bitwise_left_shift: expected bool or integer operands, got float32")
  err(function() return torch.tensor({true}) >> torch.tensor({true}) end,
      "bitwise_right_shift: not supported for bool tensors")
end)

-- A scalar stored into elements must fit their dtype, as PyTorch's "value cannot be converted
-- to type ... without overflow" (NumPy 2 raises OverflowError too; 1.24 wrapped or gave
-- INT_MIN). Arithmetic with scalars keeps PyTorch's wrapping (uint8 + 300 is 44).
T.test("scalars stored into elements must fit the dtype", function()
  err(function() return torch.full({2}, -math.huge, {dtype = "int64"}) end,
      "full: value -inf cannot be converted to int64 without overflow")
  err(function() return torch.full({2}, 0 / 0, {dtype = "int32"}) end, "full: value nan cannot be converted to int32")
  err(function() return np.full(2, 1e30, {dtype = "int64"}) end,
      "full: value 1e+30 cannot be converted to int64 without overflow")
  err(function() return torch.full({2}, 300, {dtype = "uint8"}) end,
      "full: value 300 cannot be converted to uint8 without overflow")
  err(function() return torch.full({2}, 1e10, {dtype = "float16"}) end,
      "full: value 1e+10 cannot be converted to float16 without overflow")
  err(function() return torch.full_like(torch.zeros(2, {dtype = "int8"}), 128) end,
      "full_like: value 128 cannot be converted to int8 without overflow")
  err(function() return torch.zeros(2, {dtype = "int64"}):fill_(math.huge) end,
      "fill_: value inf cannot be converted to int64 without overflow")
  err(function() return torch.zeros(2, {dtype = "uint64"}):fill_(2.0 ^ 64) end,
      "fill_: value 1.84467e+19 cannot be converted to uint64 without overflow")
  err(function() local t = torch.zeros(3, {dtype = "int64"}); t[1] = math.huge end,
      "index: value inf cannot be converted to int64 without overflow")
  err(function() local t = torch.zeros(3, {dtype = "int16"}); t[torch.tensor({true, false, true})] = 70000 end,
      "index: value 70000 cannot be converted to int16 without overflow")
  err(function() return torch.zeros(3, {dtype = "int64"}):masked_fill(torch.tensor({true, false, true}), 0 / 0) end,
      "masked_fill: value nan cannot be converted to int64")
  err(function() return torch.zeros(3, {dtype = "int8"}):index_fill_(1, torch.tensor({1}), 1e300) end,
      "index_fill: value 1e+300 cannot be converted to int8 without overflow")
  err(function() return torch.zeros(3, {dtype = "int8"}):clamp(1000) end,
      "clamp: value 1000 cannot be converted to int8 without overflow")
  err(function() return torch.zeros(3, {dtype = "int8"}):clamp(nil, -1000) end,
      "clamp: value -1000 cannot be converted to int8 without overflow")
  -- What fits is stored as PyTorch stores it: truncated toward zero, negative integers wrapping
  -- into unsigned types, infinities and NaN into floating types.
  T.eq(torch.full({2}, 127.9, {dtype = "int8"}):tolist(), {127, 127})
  T.eq(torch.full({1}, -2.0 ^ 63, {dtype = "int64"}):tolist(), {math.mininteger})
  T.eq(torch.zeros(2, {dtype = "uint8"}):fill_(-1):tolist(), {255, 255})
  T.eq(torch.zeros(2, {dtype = "uint8"}):fill_(-255):tolist(), {1, 1})
  err(function() return torch.zeros(2, {dtype = "uint8"}):fill_(-256) end,
      "fill_: value -256 cannot be converted to uint8 without overflow")
  T.eq(torch.full({1}, 65504, {dtype = "float16"}):tolist(), {65504})
  T.eq(torch.full({1}, -math.huge, {dtype = "float16"}):tolist(), {-math.huge})
  T.eq(torch.zeros(3, {dtype = "int64"}):masked_fill(torch.tensor({true, false, true}), 2.7):tolist(), {2, 0, 2})
  T.eq((torch.zeros(2, {dtype = "uint8"}) + 300):tolist(), {44, 44})
  T.eq(torch.zeros(2, {dtype = "int8"}):clamp(-1000.5).dtype, "float32")
end)

T.done()
