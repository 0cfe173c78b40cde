-- The Tensor object itself: properties, sizes, item/tolist, printing, conversions, free and
-- <close>, clone/copy/contiguous/copy_, default dtype, threads, devices, error messages for
-- unknown names and 0-based dims, and the modules as require() returns them.
--
--   tide tests/lua/test_tensor.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local err, with_default = T.error_usable, T.with_default_dtype
local torch = require "torch"
local np = require "numpy"

local nan, inf = 0 / 0, math.huge

local tide_binary, quote = T.interpreter, T.quote

local function ten(t, dtype)
  if dtype then return torch.tensor(t, {dtype = dtype}) end
  return torch.tensor(t)
end



---------------------------------------------------------------------------------------------
-- Modules

T.test("require returns the global module tables", function()
  T.truthy(rawequal(require "torch", torch))
  T.truthy(rawequal(require "numpy", np))
  T.truthy(rawequal(_G.torch, torch), "global torch is require'd torch")
  T.truthy(rawequal(_G.np, np), "global np is require'd numpy")
  T.truthy(rawequal(require "torch", require "torch"))
  T.eq(type(torch.__version__), "string")
end)

T.test("dtype constants and aliases", function()
  for _, d in ipairs{"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                     "float32", "float64"} do
    if d ~= "bool" then T.eq(torch[d], d); T.eq(np[d], d) end
  end
  T.eq(torch.bool, "bool")
  T.eq(torch.float, "float32"); T.eq(torch.double, "float64"); T.eq(torch.half, "float16")
  T.eq(torch.long, "int64"); T.eq(torch.int, "int32")
  T.eq(torch.zeros(1, {dtype = torch.double}).dtype, "float64")
  T.eq(torch.zeros(1, {dtype = np.float32}).dtype, "float32")
end)

---------------------------------------------------------------------------------------------
-- Properties and sizes

T.test("shape, ndim, dtype, device, itemsize", function()
  local x = torch.zeros(2, 3, 4)
  T.eq(x.shape, {2, 3, 4})
  T.eq(x.ndim, 3)
  T.eq(x.dtype, "float32")
  T.eq(tostring(x.device), "cpu")
  T.eq(x.itemsize, 4)
  T.eq(type(x.shape), "table")
  -- shape is a fresh plain table: changing it does not change the tensor
  local s = x.shape
  s[1] = 99
  T.eq(x.shape, {2, 3, 4})
  local sizes = {bool = 1, uint8 = 1, int8 = 1, int16 = 2, int32 = 4, int64 = 8, float16 = 2,
                 bfloat16 = 2, float32 = 4, float64 = 8}
  for d, n in pairs(sizes) do
    local t = torch.zeros(2, {dtype = d})
    T.eq(t.dtype, d); T.eq(t.itemsize, n, d .. " itemsize"); T.eq(t:element_size(), n)
  end
  local z = torch.tensor(3.5)
  T.eq(z.shape, {}); T.eq(z.ndim, 0); T.eq(z:numel(), 1); T.eq(z:dim(), 0); T.eq(z:size(), {})
end)

T.test("T reverses the dims and is a view", function()
  local x = ten{{1, 2, 3}, {4, 5, 6}}
  local t = x.T
  T.eq(t.shape, {3, 2})
  T.eq(t:tolist(), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(torch.zeros(2, 3, 4).T.shape, {4, 3, 2})
  T.eq(ten{1, 2, 3}.T:tolist(), {1, 2, 3})
  t[1][2] = 40  -- writing through the view
  T.eq(x:tolist(), {{1, 2, 3}, {40, 5, 6}})
  T.eq(x:stride(), {3, 1}); T.eq(t:stride(), {1, 3})
  T.eq(x:is_contiguous(), true); T.eq(t:is_contiguous(), false)
end)

T.test("size, dim, numel and #", function()
  local x = torch.zeros(2, 3, 4)
  T.eq(x:size(), {2, 3, 4})
  T.eq(x:size(1), 2); T.eq(x:size(2), 3); T.eq(x:size(3), 4)
  T.eq(x:size(-1), 4); T.eq(x:size(-3), 2)
  T.eq(math.type(x:size(1)), "integer")
  T.eq(x:dim(), 3); T.eq(x:numel(), 24); T.eq(x:nelement(), 24)
  T.eq(math.type(x:numel()), "integer")
  T.eq(#x, 2); T.eq(#torch.zeros(7), 7); T.eq(#torch.zeros(0, 3), 0)
  T.eq(torch.numel(x), 24)
  T.eq(np.size(x), 24); T.eq(np.shape(x), {2, 3, 4})
  err(function() return #torch.tensor(3) end, "0-dim")
end)

T.test("dims are 1-based: dim 0 and out-of-range dims are errors", function()
  local x = torch.zeros(2, 3)
  local msg = err(function() return x:size(0) end, "1-based")
  T.truthy(msg:find("^size:"), msg)
  msg = err(function() return x:size(3) end, "size: dim 3 is out of range")
  T.truthy(msg:find("1..2", 1, true), "names the valid range: " .. msg)
  err(function() return x:size(-3) end, "out of range")
  err(function() return x:stride(0) end, "1-based")
  err(function() return x:size(1.5) end, "size")
  err(function() return x:size("a") end, "size")
  err(function() return x:transpose(0, 1) end, "1-based")
end)

---------------------------------------------------------------------------------------------
-- item and tolist

T.test("item gives integers, floats and booleans", function()
  local i = ten{7}:item()
  T.eq(i, 7); T.eq(math.type(i), "integer")
  T.eq(math.type(ten({7}, "int32"):item()), "integer")
  T.eq(math.type(ten({7}, "uint8"):item()), "integer")
  T.eq(math.type(ten({-7}, "int8"):item()), "integer"); T.eq(ten({-7}, "int8"):item(), -7)
  local f = torch.tensor(2.5):item()
  T.eq(f, 2.5); T.eq(math.type(f), "float")
  T.eq(math.type(ten{1}:float():item()), "float")
  T.eq(math.type(ten{1}:half():item()), "float")
  T.eq(ten{true}:item(), true); T.eq(ten{false}:item(), false)
  T.eq(ten{{5}}:item(), 5)
  T.eq(torch.tensor(3):item(), 3)
  T.eq(ten{0.1}:item(), ten{0.1}:double():item())   -- float32 value, widened exactly
  T.truthy(ten{0.1}:item() ~= 0.1, "float32 item is the float32 value")
  T.eq(ten({0.1}, "float64"):item(), 0.1)
  local n = ten{nan}:item(); T.truthy(n ~= n)
  T.eq(ten{-inf}:item(), -inf)
  -- a view's element
  T.eq(ten{{1, 2}, {3, 4}}.T[1][2]:item(), 3)
end)

T.test("item of a tensor with more or fewer than one element is an error", function()
  local msg = err(function() return torch.zeros(2, 3):item() end, "item")
  T.truthy(msg:find("6"), "names the element count: " .. msg)
  err(function() return torch.zeros(0):item() end, "item")
end)

T.test("tolist gives nested tables", function()
  T.eq(ten{{1, 2, 3}, {4, 5, 6}}:tolist(), {{1, 2, 3}, {4, 5, 6}})
  T.eq(math.type(ten{{1}}:tolist()[1][1]), "integer")
  T.eq(math.type(ten{{1.0}}:tolist()[1][1]), "float")
  T.eq(ten{true, false}:tolist(), {true, false})
  T.eq(torch.zeros(2, 2, 2):tolist(), {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}})
  T.eq(torch.tensor(5):tolist(), 5)
  T.eq(torch.zeros(0):tolist(), {})
  T.eq(torch.zeros(2, 0):tolist(), {{}, {}})
  T.eq(ten{{1, 2}, {3, 4}}.T:tolist(), {{1, 3}, {2, 4}})
  T.eq(ten{{1, 2}, {3, 4}}[2]:tolist(), {3, 4})
  T.eq(ten{1.5, -2.25}:tolist(), {1.5, -2.25})
  -- a round trip
  local data = {{1.5, 2.5}, {-3.5, 4.0}}
  T.eq(torch.tensor(torch.tensor(data):tolist()):tolist(), data)
end)

---------------------------------------------------------------------------------------------
-- Printing

local function str(s) return tostring(load("return " .. s)()) end

T.test("tostring formats like PyTorch", function()
  T.eq(str "torch.tensor{1, 2, 3}", "tensor([1, 2, 3])")
  T.eq(str "torch.tensor{-1, 10}", "tensor([-1, 10])")
  T.eq(str "torch.tensor{1.5, 2}", "tensor([1.5000, 2.0000])")
  T.eq(str "torch.tensor{1.0, 2.0}", "tensor([1., 2.])")
  T.eq(str "torch.tensor{-0.5, 100.25}", "tensor([ -0.5000, 100.2500])")
  T.eq(str "torch.tensor{1e10, 1}", "tensor([1.0000e+10, 1.0000e+00])")
  T.eq(str "torch.tensor{1e-5, 1}", "tensor([1.0000e-05, 1.0000e+00])")
  T.eq(str "torch.tensor{0/0, math.huge, 1}", "tensor([nan, inf, 1.])")
  T.eq(str "torch.tensor({1, 2}, {dtype = 'float64'})", "tensor([1., 2.], dtype=torch.float64)")
  T.eq(str "np.array{1.5}", "tensor([1.5000], dtype=torch.float64)")
  T.eq(str "torch.tensor({1, 2}, {dtype = 'int32'})", "tensor([1, 2], dtype=torch.int32)")
  T.eq(str "torch.tensor({1, 2}, {dtype = 'uint8'})", "tensor([1, 2], dtype=torch.uint8)")
  T.eq(str "torch.tensor{1, 2}:half()", "tensor([1., 2.], dtype=torch.float16)")
  T.eq(str "torch.tensor{1, 2}:bfloat16()", "tensor([1., 2.], dtype=torch.bfloat16)")
  T.eq(str "torch.tensor{true, false}", "tensor([ True, False])")
  T.eq(str "torch.tensor{false, false}", "tensor([False, False])")
  T.eq(str "torch.tensor(3)", "tensor(3)")
  T.eq(str "torch.tensor(3.5)", "tensor(3.5000)")
  T.eq(str "torch.tensor(true)", "tensor(True)")
  T.eq(str "torch.zeros(0)", "tensor([])")
  T.eq(str "torch.tensor{{1, 2}, {3, 4}}", "tensor([[1, 2],\n        [3, 4]])")
  T.eq(str "torch.zeros(2, 2, 2)",
       "tensor([[[0., 0.],\n         [0., 0.]],\n\n        [[0., 0.],\n         [0., 0.]]])")
  T.eq(str "torch.arange(2000)", "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])")
  local big = str "torch.zeros(1000, 1000)"
  T.eq(big, "tensor([[0., 0., 0.,  ..., 0., 0., 0.],\n" ..
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n" ..
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n" ..
            "        ...,\n" ..
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n" ..
            "        [0., 0., 0.,  ..., 0., 0., 0.],\n" ..
            "        [0., 0., 0.,  ..., 0., 0., 0.]])")
end)

T.test("tostring names the dtype when it is not the default", function()
  with_default("float64", function()
    T.eq(str "torch.tensor{1.5}", "tensor([1.5000])")
    T.eq(str "torch.tensor{1.5}:float()", "tensor([1.5000], dtype=torch.float32)")
    T.eq(str "torch.tensor{1, 2}", "tensor([1, 2])")
  end)
  T.eq(str "torch.tensor{1.5}", "tensor([1.5000])")
end)

T.test("print writes the same text as tostring", function()
  local cmd = quote(tide_binary()) ..
      " -e 'print(torch.tensor{{1, 2}, {3, 4}}) print(torch.tensor{1.5}:double(), torch.tensor{true})' 2>&1"
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  T.eq(out, "tensor([[1, 2],\n        [3, 4]])\ntensor([1.5000], dtype=torch.float64)\ttensor([True])\n")
end)

---------------------------------------------------------------------------------------------
-- Conversions

T.test("float double half bfloat16 long int bool", function()
  local x = ten{{1.75, -2.5}, {0, 3}}
  local cases = {float = "float32", double = "float64", half = "float16", bfloat16 = "bfloat16",
                 long = "int64", int = "int32", bool = "bool"}
  for m, d in pairs(cases) do
    local y = x[m](x)
    T.eq(y.dtype, d, m .. "()"); T.eq(y.shape, {2, 2})
  end
  T.eq(x:double():tolist(), {{1.75, -2.5}, {0, 3}})
  T.eq(x:half():tolist(), {{1.75, -2.5}, {0, 3}})
  T.eq(x:long():tolist(), {{1, -2}, {0, 3}})  -- toward zero
  T.eq(x:int():tolist(), {{1, -2}, {0, 3}})
  T.eq(x:bool():tolist(), {{true, true}, {false, true}})
  T.eq(ten{true, false}:long():tolist(), {1, 0})
  T.eq(ten{true, false}:float():tolist(), {1, 0})
  T.eq(ten{-0.5, 0}:bool():tolist(), {true, false})
  T.eq(ten{2, -3}:to("int8"):tolist(), {2, -3})
  T.eq(ten{1, 2}:short().dtype, "int16"); T.eq(ten{1, 2}:byte().dtype, "uint8")
  T.eq(ten{1, 2}:char().dtype, "int8")
  T.eq(ten{0.1}:double():item(), ten{0.1}:item())
  T.eq(ten({0.1}, "float64"):float():item(), ten{0.1}:item())
end)

T.test("to, type, astype", function()
  local x = ten{1, 2}
  T.eq(x:to("float64").dtype, "float64")
  T.eq(x:to(torch.float16).dtype, "float16")
  T.eq(x:to("torch.float64").dtype, "float64")
  T.eq(x:to{dtype = "float32"}.dtype, "float32")
  T.eq(x:to{dtype = torch.double}.dtype, "float64")
  T.eq(x:to("cpu").dtype, "int64"); T.eq(tostring(x:to("cpu").device), "cpu")
  T.eq(x:to{device = "cpu", dtype = "float64"}.dtype, "float64")
  T.eq(x:to("cpu", "float64").dtype, "float64")
  T.eq(x:to(ten({1}, "int32")).dtype, "int32")
  T.eq(x:to("float64"):tolist(), {1, 2})
  T.eq(tostring(x:cpu().device), "cpu")
  T.eq(x:type(), "int64")
  T.eq(x:float():type(), "float32")
  T.eq(x:type("float64").dtype, "float64")
  T.eq(x:type(torch.int32).dtype, "int32")
  T.eq(x:astype("float32").dtype, "float32")
  T.eq(np.astype(x, "int32").dtype, "int32")
  T.eq(np.astype(x, np.float64):tolist(), {1, 2})
  err(function() return x:astype("float128") end, "float128")
  err(function() return x:to(5) end, "to")
end)

T.test("astype copies; to the same dtype may share", function()
  local x = ten{1.0, 2.0}
  local y = x:astype("float32")
  y:add_(10)
  T.eq(x:tolist(), {1, 2}, "astype gives a copy")
  local z = np.astype(x, "float32")
  z:add_(10)
  T.eq(x:tolist(), {1, 2}, "np.astype gives a copy")
  local c = x:to("float32", {copy = true})
  c:add_(10)
  T.eq(x:tolist(), {1, 2}, "to{copy=true} gives a copy")
  -- a converted tensor is independent of its source
  local d = x:double()
  d:add_(1)
  T.eq(x:tolist(), {1, 2})
end)

---------------------------------------------------------------------------------------------
-- clone, copy, contiguous, copy_

T.test("clone, copy and contiguous", function()
  local x = ten{{1, 2, 3}, {4, 5, 6}}
  local c = x:clone()
  c:add_(10)
  T.eq(x:tolist(), {{1, 2, 3}, {4, 5, 6}})
  T.eq(c:tolist(), {{11, 12, 13}, {14, 15, 16}})
  T.eq(torch.clone(x):tolist(), x:tolist())
  local n = np.copy(x)
  n:mul_(0)
  T.eq(x:tolist(), {{1, 2, 3}, {4, 5, 6}})
  local m = x:copy()
  m:mul_(0)
  T.eq(x[1]:tolist(), {1, 2, 3})
  local t = x.T
  T.eq(t:is_contiguous(), false)
  local tc = t:contiguous()
  T.eq(tc:is_contiguous(), true)
  T.eq(tc:tolist(), {{1, 4}, {2, 5}, {3, 6}})
  T.eq(tc:stride(), {2, 1})
  local tcl = t:clone()
  T.eq(tcl:is_contiguous(), true); T.eq(tcl:tolist(), t:tolist())
  -- contiguous of a contiguous tensor shares its memory (PyTorch returns self)
  local s = x:contiguous()
  s[1][1] = 100
  T.eq(x[1][1]:item(), 100)
  T.eq(c.dtype, "int64"); T.eq(tc.dtype, "int64")
end)

T.test("copy_ copies values into the tensor and returns it", function()
  local a = torch.zeros(3)
  T.truthy(rawequal(a:copy_(ten{1, 2, 3}), a))
  T.eq(a:tolist(), {1, 2, 3}); T.eq(a.dtype, "float32")
  local b = ten{0, 0}
  b:copy_(ten{1.5, -2.5})  -- converts (toward zero) like PyTorch
  T.eq(b:tolist(), {1, -2}); T.eq(b.dtype, "int64")
  -- into a view
  local m = torch.zeros(2, 2)
  m.T:copy_(ten{{1, 2}, {3, 4}})
  T.eq(m:tolist(), {{1, 3}, {2, 4}})
  m[2]:copy_(ten{7, 8})
  T.eq(m:tolist(), {{1, 3}, {7, 8}})
  -- from an overlapping view of itself
  local v = ten{1, 2, 3, 4}
  v[{{2, 4}}]:copy_(v[{{1, 3}}])
  T.eq(v:tolist(), {1, 1, 2, 3})
  err(function() a:copy_(torch.zeros(2)) end, "copy_")
end)

T.test("copy_ broadcasts the source", function()
  local m = torch.zeros(2, 3)
  m:copy_(ten{1, 2, 3})
  T.eq(m:tolist(), {{1, 2, 3}, {1, 2, 3}})
  local a = torch.zeros(3)
  a:copy_(torch.tensor(5.0))
  T.eq(a:tolist(), {5, 5, 5})
  a:copy_(ten{7.0})
  T.eq(a:tolist(), {7, 7, 7})
end)

---------------------------------------------------------------------------------------------
-- free and <close>

T.test("free releases a tensor; using it afterwards is an error", function()
  local x = torch.ones(1000)
  x:free()
  err(function() return x + 1 end, "freed")
  err(function() return x:sum() end, "freed")
  err(function() return x.shape end, "freed")
  err(function() return x:tolist() end, "freed")
  err(function() return #x end, "freed")
  err(function() return torch.add(x, 1) end, "freed")
  err(function() return torch.ones(2) + x end, "freed")
  err(function() x:add_(1) end, "freed")
  T.truthy(tostring(x):find("freed"), "tostring of a freed tensor says so")
  -- freeing twice is harmless
  T.truthy(pcall(x.free, x))
end)

T.test("a view made before free stays safe to use", function()
  local x = torch.ones(4)
  local v = x[{{2, 3}}]
  x:free()
  local ok, r = pcall(function() return (v + 1):tolist() end)
  if ok then T.eq(r, {2, 2}) else T.truthy(tostring(r):find("freed"), tostring(r)) end
end)

T.test("<close> releases at scope end", function()
  local escaped
  do
    local y <close> = torch.ones(100)
    T.eq(y:sum():item(), 100)
    escaped = y
  end
  err(function() return escaped + 1 end, "freed")
  -- also on an error leaving the scope
  local escaped2
  pcall(function()
    local z <close> = torch.ones(3)
    escaped2 = z
    error("boom")
  end)
  err(function() return escaped2:tolist() end, "freed")
  -- many closes in a loop
  for _ = 1, 100 do
    local w <close> = torch.ones(1000) * 2
    T.eq(w[1]:item(), 2)
  end
end)

---------------------------------------------------------------------------------------------
-- Default dtype and threads

T.test("set_default_dtype and get_default_dtype", function()
  T.eq(torch.get_default_dtype(), "float32")
  torch.set_default_dtype("float64")
  local ok, e = pcall(function()
    T.eq(torch.get_default_dtype(), "float64")
    T.eq(torch.tensor{1.5}.dtype, "float64")
    T.eq(torch.zeros(2).dtype, "float64")
    T.eq(torch.ones(2, 2).dtype, "float64")
    T.eq((torch.tensor{1} / 2).dtype, "float64")
    T.eq(torch.tensor{1}.dtype, "int64")
    T.eq(np.zeros(2).dtype, "float64")
  end)
  torch.set_default_dtype(torch.float32)
  if not ok then error(e, 0) end
  T.eq(torch.get_default_dtype(), "float32")
  T.eq(torch.zeros(2).dtype, "float32")
  T.eq(np.zeros(2).dtype, "float64", "numpy's default float stays float64")
  T.eq(np.array{1.5}.dtype, "float64")
  err(function() torch.set_default_dtype("int32") end, "set_default_dtype")
  err(function() torch.set_default_dtype("float128") end, "float128")
  T.eq(torch.get_default_dtype(), "float32", "a failed set leaves the default alone")
end)

T.test("set_num_threads and get_num_threads", function()
  local n0 = torch.get_num_threads()
  T.eq(math.type(n0), "integer")
  T.truthy(n0 >= 1)
  torch.set_num_threads(1)
  T.eq(torch.get_num_threads(), 1)
  local big = torch.ones(100000) * 3
  T.eq(big[100000]:item(), 3)
  torch.set_num_threads(3)
  T.eq(torch.get_num_threads(), 3)
  T.eq((torch.ones(100000) * 3)[50000]:item(), 3)
  torch.set_num_threads(n0)
  T.eq(torch.get_num_threads(), n0)
  err(function() torch.set_num_threads(0) end, "set_num_threads")
  err(function() torch.set_num_threads("a") end, "set_num_threads")
  err(function() torch.set_num_threads(1.5) end, "set_num_threads")
  T.eq(torch.get_num_threads(), n0)
end)

---------------------------------------------------------------------------------------------
-- Devices

T.test("CUDA requests fail cleanly when CUDA is unavailable", function()
  if torch.cuda.is_available() then
    print("skipped: CUDA is available, the unavailable-CUDA errors do not apply")
    return
  end
  T.eq(torch.cuda.is_available(), false)
  T.eq(torch.cuda.device_count(), 0)
  local x = torch.ones(2)
  err(function() return x:to("cuda") end, "CUDA")
  err(function() return x:to("cuda:0") end, "CUDA")
  err(function() return x:cuda() end, "CUDA")
  err(function() return x:to{device = "cuda", dtype = "float16"} end, "CUDA")
  err(function() return torch.zeros(2, {device = "cuda"}) end, "CUDA")
  err(function() return torch.ones(2, 3, {device = "cuda"}) end, "CUDA")
  err(function() return torch.tensor({1}, {device = "cuda"}) end, "CUDA")
  err(function() return torch.randn(2, {device = "cuda"}) end, "CUDA")
  err(function() torch.cuda.synchronize() end, "CUDA")
  local msg = err(function() return torch.zeros(2, {device = "cuda"}) end, "zeros")
  T.truthy(msg:find("^zeros"), msg)
  T.eq(tostring(x.device), "cpu")
end)

T.test("unknown device strings are errors", function()
  local x = torch.ones(2)
  local msg = err(function() return x:to("tpu") end, "tpu")
  T.truthy(msg:find("cpu", 1, true), "names the valid devices: " .. msg)
  T.truthy(msg:find("^to"), "starts with the op name: " .. msg)
  msg = err(function() return torch.zeros(2, {device = "tpu"}) end, "tpu")
  T.truthy(msg:find("^zeros"), msg)
  err(function() return x:to{device = "cuda:x"} end, "cuda:x")
  err(function() return torch.ones(2, {device = 3}) end, "ones")
end)

---------------------------------------------------------------------------------------------
-- Unknown names

T.test("unknown methods and properties are errors", function()
  local x = torch.ones(2)
  err(function() return x.foo end, "no method or property named 'foo'")
  err(function() return x:foo() end, "'foo'")
  err(function() return x.shapes end, "shapes")
  err(function() x.foo = 1 end, "foo")
  err(function() x.shape = {3} end, "shape")
  err(function() x.dtype = "float64" end, "dtype")
  T.eq(x.shape, {2}); T.eq(x.dtype, "float32")
  T.eq(torch.no_such_function, nil)
  T.eq(np.no_such_function, nil)
end)

T.test("is_floating_point as function and method", function()
  T.eq(torch.is_floating_point(torch.ones(1)), true)
  T.eq(torch.is_floating_point(ten{1}), false)
  T.eq(torch.ones(1):is_floating_point(), true)
  T.eq(ten{1}:is_floating_point(), false)
end)

T.test("torch.is_tensor", function()
  T.eq(torch.is_tensor(torch.ones(1)), true)
  T.eq(torch.is_tensor(np.array{1}), true)
  T.eq(torch.is_tensor({1}), false)
  T.eq(torch.is_tensor(1), false)
  T.eq(torch.is_tensor(nil), false)
end)

T.test("detach gives a view that shares storage", function()
  local x = torch.tensor{1.0, 2.0, 3.0}
  local d = x:detach()
  T.eq(d:tolist(), {1, 2, 3})
  d[2] = 7
  T.eq(x:tolist(), {1, 7, 3})
  T.eq(torch.detach(x):tolist(), {1, 7, 3})
end)

T.test("an allocation the machine cannot satisfy is an error naming the size", function()
  local msg = err(function() return torch.empty(1 << 22, 1 << 22) end, "cannot allocate")
  T.truthy(msg:find("^empty"), msg)
  T.truthy(msg:find("70368744177664 bytes", 1, true), msg)
  err(function() return torch.zeros(1 << 40, 1 << 40) end,
    "zeros: shape {1099511627776,1099511627776} of float32 is too large (its byte size or strides would pass 2^63-1)")
  T.eq(torch.ones(2):sum():item(), 2.0)  -- still usable
end)

T.done()
