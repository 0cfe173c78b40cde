-- complex64 / complex128: creation, conversions, the views of the parts, the Lua complex
-- number, printing, .npy files, and the clear errors of the ops without complex support.
-- Expected values and strings are NumPy's and PyTorch 1.13's output (copied, or computed by
-- /usr/bin/python3 at test time where files are exchanged).
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local np = np or require("numpy")

local TMP, tmp = T.tmpdir()

local function c(re, im) return np.complex(re, im) end
-- A complex tensor from nested lists of real and imaginary parts.
local function ct(re, im, dtype)
  return torch.complex(torch.tensor(re, {dtype = dtype or "float32"}), torch.tensor(im, {dtype = dtype or "float32"}))
end

T.test("dtype names, aliases and promotion as PyTorch and NumPy", function()
  T.eq({torch.complex64, torch.complex128, torch.cfloat, torch.cdouble},
    {"complex64", "complex128", "complex64", "complex128"})
  T.eq({np.complex64, np.complex128, np.complex_, np.csingle, np.cdouble},
    {"complex64", "complex128", "complex128", "complex64", "complex128"})
  T.eq(torch.zeros(1, {dtype = "cfloat"}).dtype, "complex64")
  -- torch.promote_types / np.promote_types
  T.eq(torch.promote_types("complex64", "float64"), "complex128")
  T.eq(torch.promote_types("complex64", "int64"), "complex64")
  T.eq(torch.promote_types("float16", "complex64"), "complex64")
  T.eq(np.promote_types("complex64", "float64"), "complex128")
  T.eq(np.promote_types("complex64", "int16"), "complex64")
  T.eq(np.promote_types("complex64", "uint32"), "complex128")
  T.eq(np.promote_types("complex64", "int32"), "complex128")
  T.eq(torch.promote_types("complex128", "bool"), "complex128")
  T.eq({torch.is_complex(torch.zeros(1, {dtype = "complex128"})), torch.zeros(1):is_complex(),
        np.iscomplexobj(np.zeros(1, {dtype = "complex64"}))}, {true, false, true})
  T.eq(torch.zeros(1, {dtype = "complex64"}):is_floating_point(), false)
  T.eq({torch.zeros(3, {dtype = "complex64"}).itemsize, torch.zeros(3, {dtype = "complex128"}).nbytes}, {8, 48})
end)

T.test("creation: zeros, ones, full, like, from tables", function()
  T.eq(torch.zeros(2, {dtype = "complex64"}):tolist(), {c(0, 0), c(0, 0)})
  T.eq(np.ones({2}, {dtype = "complex128"}):tolist(), {c(1, 0), c(1, 0)})
  -- a complex fill value gives the default complex dtype, as torch.full and np.full
  local f = torch.full({2}, c(1, 2))
  T.eq({f.dtype, f:tolist()}, {"complex64", {c(1, 2), c(1, 2)}})
  T.eq(np.full({2}, c(1, 2)).dtype, "complex128")
  T.eq(torch.full_like(torch.zeros(2, {dtype = "complex128"}), c(-1, 0.5)):tolist(), {c(-1, 0.5), c(-1, 0.5)})
  T.eq(torch.zeros_like(ct({1}, {2})):tolist(), {c(0, 0)})
  -- torch.tensor([1, 1j]) is complex64; np.array([1, 1j]) complex128
  local t = torch.tensor{1, c(0, 1)}
  T.eq({t.dtype, t:tolist()}, {"complex64", {c(1, 0), c(0, 1)}})
  local a = np.array{{1.5, c(2, -3)}, {true, 4}}
  T.eq({a.dtype, a:tolist()}, {"complex128", {{c(1.5, 0), c(2, -3)}, {c(1, 0), c(4, 0)}}})
  T.eq(torch.tensor({1, 2}, {dtype = "complex128"}):tolist(), {c(1, 0), c(2, 0)})
  T.eq(torch.tensor{torch.tensor(c(1, 2))}:tolist(), {c(1, 2)})
  T.error(function() return torch.tensor({c(1, 2)}, {dtype = "float32"}) end,
    "tensor: cannot convert the complex value (1+2j) to float32")
  T.error(function() return torch.arange(3, {dtype = "complex64"}) end, "arange: complex64 is not supported")
  T.error(function() return torch.eye(2, {dtype = "complex64"}) end, "eye: complex64 is not supported")
  T.error(function() return torch.randn(2, {dtype = "complex64"}) end,
    "randn: expected a floating-point dtype, got complex64")
end)

T.test("conversions to and from every real dtype", function()
  for _, dt in ipairs{"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                       "float16", "bfloat16", "float32", "float64"} do
    local x = torch.tensor({0, 1, 5}, {dtype = dt})
    for _, cdt in ipairs{"complex64", "complex128"} do
      local z = x:to(cdt)
      T.eq({z.dtype, z:tolist()}, {cdt, dt == "bool" and {c(0, 0), c(1, 0), c(1, 0)} or {c(0, 0), c(1, 0), c(5, 0)}}, dt)
      -- back: the real part (a ComplexWarning on stderr once), bool: nonzero
      local back = ct({0, 1.75, -2}, {3, 0, 1}, cdt == "complex64" and "float32" or "float64"):to(dt)
      local want = ({bool = {true, true, true}, uint8 = {0, 1, 254}, uint16 = {0, 1, 65534},
                     uint32 = {0, 1, 4294967294}, uint64 = {0, 1, -2}, float16 = {0, 1.75, -2}, bfloat16 = {0, 1.75, -2},
                     float32 = {0, 1.75, -2}, float64 = {0, 1.75, -2}})[dt] or {0, 1, -2}
      if dt ~= "uint64" then T.eq(back:tolist(), want, dt .. " from " .. cdt) end
    end
  end
  T.eq(ct({1}, {2}):to("complex128"):tolist(), {c(1, 2)})
  T.eq(np.array{1, 2}:astype("complex64"):tolist(), {c(1, 0), c(2, 0)})
  T.eq(ct({1.5}, {-2}):double():tolist(), {1.5})
  -- complex to bool is "nonzero" as NumPy (PyTorch 1.13 looks at the real part only)
  T.eq(torch.tensor{c(0, 0), c(0, 1)}:bool():tolist(), {false, true})
  local z = torch.zeros(2, {dtype = "complex128"})
  z:copy_(torch.tensor{1, 2})
  T.eq(z:tolist(), {c(1, 0), c(2, 0)})
  local r = torch.tensor{1.5}
  r.requires_grad = true
  T.eq(r:to("complex64").requires_grad, true)   -- differentiable casts (test_complex_grad.lua)
  local q = torch.zeros(2, {dtype = "complex64"})
  q.requires_grad = true
  T.eq(q.requires_grad, true)
end)

T.test("gradients through complex tensors: the ops with a complex formula record, the others refuse by name", function()
  local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
  local z = ct({1, 2}, {3, 4})
  for _, f in ipairs({function() return x * z end, function() return x + z end, function() return torch.cat({x, z}) end,
                      function() return torch.complex(x, x) end, function() return torch.view_as_complex(torch.ones(2, 2):requires_grad_()) end}) do
    T.eq(f().requires_grad, true)
  end
  local no_formula = ": has no gradient formula for complex tensors in tide"
  T.error(function() return torch.where(x:gt(0), x, z) end, "where" .. no_formula)
  T.error(function() return (x * z):exp() end, "exp" .. no_formula)
  local no_grad = "complex tensors have no gradients in tide"
  T.error(function() return torch.polar(x, x) end, "polar: argument 1 requires grad, but " .. no_grad)
  T.error(function() return torch.polar(x:detach(), x) end, "polar: argument 2 requires grad")
  T.error(function() return torch.linalg.eigvals(torch.eye(2):requires_grad_()) end, "linalg.eigvals: argument 1 requires grad")
  T.error(function() return np.linalg.eig(torch.eye(2):requires_grad_()) end, "linalg.eig: argument 1 requires grad")
  T.error(function() z.real:copy_(x) end,
    "copy_: writing in place into a float32 view of a complex64 tensor while autograd records it is not supported")
  T.error(function() z.imag:mul_(x) end, "mul_: writing in place into a float32 view of a complex64 tensor")
  T.error(function() z.real = x end, "real: the value requires grad, and writing it into a part of a complex tensor is not recorded")
  T.eq(torch.view_as_real(z):tolist(), {{1, 3}, {2, 4}})                -- z unchanged by the refused writes
  torch.no_grad(function() T.eq((x * z):exp().requires_grad, false) end)   -- no recording: allowed
end)

T.test("real, imag, view_as_real, view_as_complex are views", function()
  local x = ct({1, 3}, {2, -4})
  T.eq({x.real:tolist(), x.imag:tolist(), x.real.dtype}, {{1, 3}, {2, -4}, "float32"})
  T.eq({torch.real(x):tolist(), np.imag(x):tolist()}, {{1, 3}, {2, -4}})
  x.imag[2] = 7
  T.eq(x:tolist(), {c(1, 2), c(3, 7)})
  -- x.real = v / x.imag = v write through the views (NumPy's a.real = v, PyTorch's x.real = v)
  local w = ct({1, 2}, {3, 4})
  w.real = torch.tensor{-1.0, -2.0}
  w.imag = 0.5
  T.eq(w:tolist(), {c(-1, 0.5), c(-2, 0.5)})
  local f = torch.tensor{1.0, 2.0}
  f.real = 9
  T.eq(f:tolist(), {9, 9})
  T.error(function() f.imag = 1 end, "imag: expected a complex tensor, got float32")
  T.error(function() w.real = "x" end, "real: expected a tensor or a number, got a string")
  T.eq(torch.view_as_real(x):tolist(), {{1, 2}, {3, 7}})
  torch.view_as_real(x)[1][1] = -1
  T.eq(x[1]:item(), c(-1, 2))
  local r = torch.tensor{{1, 2}, {3, 4}, {5, 6}}:double()
  local v = torch.view_as_complex(r)
  T.eq({v.dtype, v:tolist()}, {"complex128", {c(1, 2), c(3, 4), c(5, 6)}})
  r[2][2] = 9
  T.eq(v[2]:item(), c(3, 9))
  -- a strided view: the parts of every other element
  local s = ct({1, 2, 3, 4}, {5, 6, 7, 8})[{{1, 4, 2}}]
  T.eq({s.real:tolist(), s.imag:tolist(), s.imag:stride(1)}, {{1, 3}, {5, 7}, 4})
  -- real of a real tensor is itself; imag of one: zeros in NumPy, an error in PyTorch
  local f = torch.tensor{1.0, 2.0}
  T.truthy(rawequal(f.real, f.real) or f.real:tolist()[1] == 1)
  T.eq(np.imag(np.array{1.0, 2.0}):tolist(), {0, 0})
  T.eq(np.array{1.0, 2.0}.imag:tolist(), {0, 0})
  T.error(function() return torch.tensor{1.0}.imag end,
    "imag: expected a complex tensor, got float32 (imag is not implemented for real tensors)")
  T.error(function() return torch.view_as_complex(torch.zeros(3)) end,
    "view_as_complex: the last dim must have size 2, got shape {3}")
  T.error(function() return torch.view_as_complex(torch.zeros(2, 2):t()) end,
    "view_as_complex: the last dim must have stride 1, got strides {1,2}")
  T.error(function() return torch.view_as_real(torch.zeros(2)) end,
    "view_as_real: expected a complex tensor, got float32")
  -- x:view(dtype) reinterprets: float32 pairs are complex64
  T.eq(torch.tensor{{1, 2}, {3, 4}}:float():view("complex64"):tolist(), {{c(1, 2)}, {c(3, 4)}})
  T.eq(torch.zeros(3, {dtype = "complex64"}):view("float32"):size(), {6})
end)

T.test("torch.complex and torch.polar", function()
  T.eq(torch.complex(torch.tensor{1.0, 2.0}:double(), torch.tensor{3.0, -4.0}:double()):tolist(), {c(1, 3), c(2, -4)})
  -- broadcast
  T.eq(torch.complex(torch.tensor{{1.0}, {2.0}}, torch.tensor{5.0, 6.0}):tolist(),
    {{c(1, 5), c(1, 6)}, {c(2, 5), c(2, 6)}})
  local p = torch.polar(torch.tensor{1.0, 2.0}, torch.tensor{0.0, math.pi / 2})
  T.eq(tostring(p), "tensor([ 1.0000e+00+0.j, -8.7423e-08+2.j])")
  T.eq(torch.complex(torch.zeros(0), torch.zeros(0)):size(), {0})
  T.eq(torch.complex(torch.tensor(1.0), torch.tensor(2.0)):item(), c(1, 2))
  T.error(function() return torch.complex(torch.zeros(1), torch.zeros(1):double()) end,
    "complex: expected both inputs to have one dtype, got float32 and float64")
  T.error(function() return torch.complex(torch.zeros(1, {dtype = "int64"}), torch.zeros(1, {dtype = "int64"})) end,
    "complex: expected float32 or float64 inputs, got int64")
  local into = torch.zeros(1, {dtype = "complex128"})
  torch.complex(torch.tensor{1.0}, torch.tensor{-1.0}, {out = into})
  T.eq(into:tolist(), {c(1, -1)})
  T.error(function() return torch.complex(1, 2, {out = into}) end, "complex: out= needs tensor operands")
  local out = torch.zeros(2, {dtype = "complex128"})
  torch.polar(torch.tensor{2.0, 2.0}, torch.tensor{0.0, 0.0}, {out = out})
  T.eq(out:tolist(), {c(2, 0), c(2, 0)})
end)

T.test("the Lua complex number: arithmetic, ==, Python's repr", function()
  local z = c(1, 2)
  T.eq({z.real, z.imag}, {1, 2})
  T.eq(z + 1, c(2, 2))
  T.eq(2 * z, c(2, 4))
  T.eq(z * c(3, -1), c(5, 5))
  T.eq(z - c(1, 2), c(0, 0))
  T.eq(-z, c(-1, -2))
  T.eq(c(1, 2) / c(3, 4), c(0.44, 0.08))
  T.eq(3 + 4 * np.j, c(3, 4))
  T.eq(torch.j, np.j)
  T.truthy(c(1, 0) ~= c(1, 1))
  -- repr(complex) of CPython
  T.eq({tostring(c(1, 2)), tostring(c(0, 1)), tostring(c(-0.0, 1)), tostring(c(1e16, 1e-5)),
        tostring(c(123456.789, -0.0)), tostring(c(0, -2.5)), tostring(c(0 / 0, math.huge)),
        tostring(c(-1e-300, 1e300)), tostring(c(0.1, 0))},
    {"(1+2j)", "1j", "(-0+1j)", "(1e+16+1e-05j)", "(123456.789-0j)", "-2.5j", "(nan+infj)",
     "(-1e-300+1e+300j)", "(0.1+0j)"})
  -- item() of a complex64 element is the double of its float parts, as torch's .item()
  T.eq(tostring(torch.tensor{c(0.1, 0)}:item()), "(0.10000000149011612+0j)")
  T.eq(tostring(np.array{c(0.1, 0)}:item()), "(0.1+0j)")
  T.error(function() return c(1, 2) + "x" end, "complex: cannot apply add to a string")
end)

T.test("printing as PyTorch", function()
  T.eq(tostring(torch.tensor{c(1, 2), c(3, -1)}), "tensor([1.+2.j, 3.-1.j])")
  T.eq(tostring(ct({{1, 3.25}, {0 / 0, math.huge}}, {{2, -1e-5}, {0, -math.huge}})),
    "tensor([[1.0000+2.0000e+00j, 3.2500-1.0000e-05j],\n        [   nan+0.0000e+00j,    inf-infj]])")
  T.eq(tostring(torch.tensor(c(1.5, -2), {dtype = "complex128"})), "tensor(1.5000-2.j, dtype=torch.complex128)")
  T.eq(tostring(torch.zeros(2, {dtype = "complex128"})), "tensor([0.+0.j, 0.+0.j], dtype=torch.complex128)")
  T.eq(tostring(ct({1e10, 1}, {1, -1e-10})), "tensor([1.0000e+10+1.0000e+00j, 1.0000e+00-1.0000e-10j])")
  T.eq(tostring(ct({0, -0.0}, {-0.0, 0})), "tensor([0.-0.j, -0.+0.j])")
  local r = torch.arange(30.0):reshape(3, 10)
  T.eq(tostring(torch.complex(r, r)),
    "tensor([[ 0.+0.j,  1.+1.j,  2.+2.j,  3.+3.j,  4.+4.j,  5.+5.j,  6.+6.j,  7.+7.j,\n" ..
    "          8.+8.j,  9.+9.j],\n" ..
    "        [10.+10.j, 11.+11.j, 12.+12.j, 13.+13.j, 14.+14.j, 15.+15.j, 16.+16.j, 17.+17.j,\n" ..
    "         18.+18.j, 19.+19.j],\n" ..
    "        [20.+20.j, 21.+21.j, 22.+22.j, 23.+23.j, 24.+24.j, 25.+25.j, 26.+26.j, 27.+27.j,\n" ..
    "         28.+28.j, 29.+29.j]])")
  local big = torch.arange(2000.0)
  T.eq(tostring(torch.complex(big, big * 2)),
    "tensor([0.0000e+00+0.0000e+00j, 1.0000e+00+2.0000e+00j, 2.0000e+00+4.0000e+00j,\n" ..
    "         ..., 1.9970e+03+3.9940e+03j, 1.9980e+03+3.9960e+03j,\n" ..
    "        1.9990e+03+3.9980e+03j])")
  T.eq(tostring(torch.zeros(0, 2, {dtype = "complex64"})), "tensor([], size=(0, 2), dtype=torch.complex64)")
  T.with_default_dtype("float64", function()
    T.eq(tostring(torch.tensor{c(1, 2)}), "tensor([1.+2.j])")
    T.eq(tostring(torch.tensor({c(1, 2)}, {dtype = "complex64"})), "tensor([1.+2.j], dtype=torch.complex64)")
  end)
end)

T.test(".npy and .npz round trips with NumPy", function()
  local out, ok = T.python([==[
import sys, numpy as np
d = sys.argv[1]
np.save(d + '/c8.npy', np.array([[1+2j, -3.5-0.25j], [np.nan + 1j, np.inf - 2j]], dtype=np.complex64))
np.save(d + '/c16be.npy', np.array([1e300+1e-300j, -0.0+5j], dtype='>c16'))
np.save(d + '/c16f.npy', np.asfortranarray(np.array([[1+1j, 2+2j, 3], [4j, 5, 6-6j]])))
np.savez(d + '/z.npz', a=np.array([1j], dtype=np.complex64), b=np.array(2+3j))
]==], TMP)
  assert(ok, out)
  local a = np.load(tmp("c8.npy"))
  T.eq({a.dtype, a:size(), a:tolist()[1]}, {"complex64", {2, 2}, {c(1, 2), c(-3.5, -0.25)}})
  T.eq({a[2][1]:item().imag, a[2][2]:item()}, {1, c(math.huge, -2)})
  T.truthy(a[2][1]:item().real ~= a[2][1]:item().real, "nan")
  local b = np.load(tmp("c16be.npy"))
  T.eq({b.dtype, b:tolist()}, {"complex128", {c(1e300, 1e-300), c(-0.0, 5)}})
  T.eq(np.load(tmp("c16f.npy")):tolist(), {{c(1, 1), c(2, 2), c(3, 0)}, {c(0, 4), c(5, 0), c(6, -6)}})
  local z = np.load(tmp("z.npz"))
  T.eq({z.a.dtype, z.a:tolist(), z.b.dtype, z.b:item()}, {"complex64", {c(0, 1)}, "complex128", c(2, 3)})
  -- tide writes, NumPy reads
  np.save(tmp("t8.npy"), ct({1, 2}, {-3, 0.5}))
  np.save(tmp("t16.npy"), ct({{1e-5}}, {{-7}}, "float64"))
  np.savez(tmp("t.npz"), {x = torch.tensor{c(0, 1)}})
  out, ok = T.python([[
import sys, numpy as np
d = sys.argv[1]
a = np.load(d + '/t8.npy'); b = np.load(d + '/t16.npy'); z = np.load(d + '/t.npz')
print(a.dtype, repr(a.tolist()), b.dtype, repr(b.tolist()), z['x'].dtype, repr(z['x'].tolist()))
]], TMP)
  assert(ok, out)
  T.eq(out, "complex64 [(1-3j), (2+0.5j)] complex128 [[(1e-05-7j)]] complex64 [1j]\n")
  -- safetensors (torch.save) has no complex dtype
  T.error(function() torch.save(torch.zeros(1, {dtype = "complex64"}), tmp("c.safetensors")) end,
    "save: 'tensor' is complex64, which safetensors files cannot hold")
end)

T.test("arithmetic with complex and real operands, as PyTorch prints it", function()
  local x = torch.tensor{c(1, 2), c(-3, 0.5), c(0, 0)}
  local y = torch.tensor{c(2, -1), c(0.5, 0.5), c(1, 0)}
  local want = {
    {x + y, "tensor([ 3.0000+1.j, -2.5000+1.j,  1.0000+0.j])"},
    {x - y, "tensor([-1.0000+3.j, -3.5000+0.j, -1.0000+0.j])"},
    {x * y, "tensor([ 4.0000+3.0000j, -1.7500-1.2500j,  0.0000+0.0000j])"},
    {x / y, "tensor([ 0.0000+1.0000j, -2.5000+3.5000j,  0.0000+0.0000j])"},
    {-x, "tensor([-1.-2.0000j,  3.-0.5000j, -0.-0.0000j])"},
    {x * 2, "tensor([ 2.+4.j, -6.+1.j,  0.+0.j])"},
    {x + 1.5, "tensor([ 2.5000+2.0000j, -1.5000+0.5000j,  1.5000+0.0000j])"},
    {x * np.j, "tensor([-2.0000+1.j, -0.5000-3.j,  0.0000+0.j])"},
    {torch.abs(x), "tensor([2.2361, 3.0414, 0.0000])"},
    {torch.angle(x), "tensor([1.1071, 2.9764, 0.0000])"},
    {x:conj(), "tensor([ 1.-2.0000j, -3.-0.5000j,  0.-0.0000j])"},
    {torch.exp(x), "tensor([-1.1312+2.4717j,  0.0437+0.0239j,  1.0000+0.0000j])"},
    {torch.log(y), "tensor([ 0.8047-0.4636j, -0.3466+0.7854j,  0.0000+0.0000j])"},
    {torch.sqrt(x), "tensor([1.2720+0.7862j, 0.1438+1.7380j, 0.0000+0.0000j])"},
    {torch.sin(x), "tensor([ 3.1658+1.9596j, -0.1591-0.5159j,  0.0000+0.0000j])"},
    {torch.cos(x), "tensor([ 2.0327-3.0519j, -1.1163+0.0735j,  1.0000-0.0000j])"},
    {x:sum(), "tensor(-2.+2.5000j)"},
    {x:mean(), "tensor(-0.6667+0.8333j)"},
    {y:prod(), "tensor(1.5000+0.5000j)"},
    {torch.isnan(torch.tensor{c(0 / 0, 0), c(0, 1)}), "tensor([ True, False])"},
    {torch.tensor{1.0, 2.0} * np.j, "tensor([0.+1.j, 0.+2.j])"},
    {torch.tensor{1.0, 2.0}:double() * c(1, 1), "tensor([1.+1.j, 2.+2.j], dtype=torch.complex128)"},
    {torch.tensor{1, 2} + np.j, "tensor([1.+1.j, 2.+1.j])"},
    {torch.matmul(torch.tensor{{c(1, 1), 2}, {0, c(0, 1)}}, torch.tensor{{1, c(0, 1)}, {c(2, -1), 0}}),
     "tensor([[ 5.-1.j, -1.+1.j],\n        [ 1.+2.j,  0.+0.j]])"},
    {torch.eq(x, y), "tensor([False, False, False])"},
    {torch.ne(x, x), "tensor([False, False, False])"},
    {torch.tensor{{c(1, 1), 2}, {c(0, 3), -1}}:sum(1), "tensor([1.+4.j, 1.+0.j])"},
  }
  for i, w in ipairs(want) do T.eq(tostring(w[1]), w[2], "case " .. i) end
  T.eq((x + torch.ones(3):double()).dtype, "complex128")
  -- NumPy spelling: NumPy's dtypes (float32 * 1j is complex64, int64 + 1j complex128)
  T.eq((np.array({1, 2}, "float32") * np.j).dtype, "complex64")
  T.eq((np.array{1, 2} + np.j).dtype, "complex128")
  T.eq(np.mean(np.array{1, np.complex(0, 2)}):item(), c(0.5, 1))
  T.eq(np.abs(np.array{c(3, 4)}):tolist(), {5})
  T.eq(np.angle(np.array{-1.0, 1.0, -0.0}):tolist(), {math.pi, 0, math.pi})
  T.eq(torch.angle(torch.tensor{-1.0, 1.0, -0.0}:double()):tolist(), {math.pi, 0, 0})
  -- dot and vdot (NumPy's values: PyTorch 1.13's CPU dot of complex tensors gives 0 here)
  T.eq(np.dot(x, y):item(), c(2.25, 1.75))
  T.eq(np.vdot(x, y):item(), c(-1.25, -6.75))
  T.eq(torch.vdot(x, y):item(), c(-1.25, -6.75))
  -- in place and out=: a complex result cannot go into a real tensor (PyTorch's error)
  T.error(function() return torch.zeros(3):add_(x) end, "add: result type complex64 can't be cast to the desired output type float32")
  local z = x:clone()
  z:mul_(2)
  T.eq(z:tolist(), {c(2, 4), c(-6, 1), c(0, 0)})
  local o = torch.zeros(3, {dtype = "complex128"})
  torch.add(x, y, {out = o})
  T.eq(o:tolist(), {c(3, 1), c(-2.5, 1), c(1, 0)})
  T.eq(torch.add(x, y, {alpha = c(0, 1)}):tolist(), {c(2, 4), c(-3.5, 1), c(0, 1)})
  -- out= of angle, conj, conj_physical, vdot
  local ro = torch.zeros(3)
  T.eq(torch.angle(x, {out = ro}):tolist()[3], 0)
  local co = torch.zeros(3, {dtype = "complex64"})
  torch.conj(x, {out = co})
  T.eq(co:tolist(), {c(1, -2), c(-3, -0.5), c(0, 0)})
  T.eq(torch.conj_physical(y, {out = co}):tolist(), {c(2, 1), c(0.5, -0.5), c(1, 0)})
  local vo = torch.zeros({}, {dtype = "complex128"})
  T.eq(torch.vdot(x, y, {out = vo}):item(), c(-1.25, -6.75))
  -- isclose: an infinite complex number equals itself (torch.isclose; NumPy 1.24 says False)
  T.eq(np.isclose(np.array{c(math.huge, 1)}, np.array{c(math.huge, 1)}):tolist(), {true})
  T.eq(np.allclose(x, x + c(1e-9, -1e-9)), true)
end)

T.test("linalg.eig: complex in PyTorch, real in NumPy when it can be", function()
  local w = np.linalg.eigvals(np.array{{1.0, 2.0}, {3.0, 4.0}})
  T.eq(w.dtype, "float64")
  T.near(w:tolist(), {-0.37228132326901431, 5.3722813232690143}, 1e-14)
  local cw = np.linalg.eigvals(np.array{{1.0, -5.0}, {2.0, 1.0}})
  T.eq(cw.dtype, "complex128")
  T.near({cw.real:tolist(), cw.imag:tolist()}, {{1, 1}, {math.sqrt(10), -math.sqrt(10)}}, 1e-14)
  local tw, tv = torch.linalg.eig(torch.tensor{{2.0, 1.0}, {1.0, 3.0}})
  T.eq({tw.dtype, tv.dtype}, {"complex64", "complex64"})
  T.eq(tostring(tw), "tensor([1.3820+0.j, 3.6180+0.j])")
  T.eq(tostring(tv), "tensor([[-0.8507+0.j, -0.5257+0.j],\n        [ 0.5257+0.j, -0.8507+0.j]])")
  local nw, nv = np.linalg.eig(np.array{{0.0, -1.0}, {1.0, 0.0}})
  T.eq(nw:tolist(), {c(0, 1), c(0, -1)})
  T.near({nv.real:tolist(), nv.imag:tolist()}, {{{0.70710678118654757, 0.70710678118654757}, {0, 0}},
    {{0, 0}, {-0.70710678118654757, 0.70710678118654757}}}, 1e-15)
  -- batched, empty, and the errors
  T.eq(torch.linalg.eigvals(torch.zeros(2, 3, 3)):size(), {2, 3})
  T.eq(np.linalg.eigvals(np.zeros({0, 0})):size(), {0})
  T.error(function() return torch.linalg.eig(torch.tensor{{1, 2}, {3, 4}}) end,
    "linalg.eig: expected a floating-point tensor, got int64")
  T.error(function() return torch.linalg.eig(torch.zeros(2, 3)) end,
    "linalg.eig: expected a square matrix or a batch of them, got shape {2,3}")
  T.error(function() return torch.linalg.eigvals(torch.tensor{{0 / 0}}) end,
    "linalg.eigvals: the input contains NaN or infinity")
  T.error(function() return torch.linalg.eig(torch.zeros(2, 2, {dtype = "complex64"})) end,
    "linalg.eig: complex64 is not supported")
end)

T.test("ops without complex support name themselves and the dtype", function()
  local x = ct({1, 2}, {3, 4})
  T.error(function() return torch.sigmoid(x) end, "sigmoid: complex64 is not supported")
  T.error(function() return torch.floor(x) end, "floor: complex64 is not supported")
  T.error(function() return x:abs_() end, "abs_: complex64 is not supported")
  T.error(function() return torch.sum(x, {dtype = "float32"}) end,
    "sum: cannot reduce complex64 into the real dtype float32")
  T.error(function() return torch.sort(x) end, "sort: complex64 is not supported")
  T.error(function() return torch.amax(x:to("complex128")) end, "amax: complex128 is not supported")
  T.error(function() return torch.index_select(x, 1, torch.tensor{1}) end, "index_select: complex64 is not supported")
  T.error(function() return torch.clamp(torch.ones(2), c(1, 1)) end, "clamp: complex numbers are not supported")
  -- a complex number or 0-dim complex tensor as a keyword number
  T.error(function() return torch.index_add(torch.ones(3), 1, torch.tensor{1}, torch.ones(1), {alpha = np.j}) end,
    "index_add: complex numbers are not supported")
  T.error(function()
    return torch.index_add(torch.ones(3), 1, torch.tensor{1}, torch.ones(1), {alpha = torch.tensor(np.j)})
  end, "index_add: complex numbers are not supported")
  T.error(function() return torch.scatter(torch.ones(3), 1, torch.tensor{1}, {value = np.j}) end,
    "scatter: complex numbers are not supported")
  T.error(function() return torch.zeros(2):fill_(c(1, -1)) end,
    "fill_: cannot fill a float32 tensor with the complex value (1-1j)")
  T.error(function() return torch.empty(2, {dtype = "complex64", device = "cuda"}) end, "empty:")
  T.error(function() return x:tofile(tmp("x.bin")) end, "tofile: complex64 is not supported")
  T.error(function() return np.savetxt(tmp("x.txt"), x) end, "savetxt: complex64 is not supported")
end)

T.test("pow, sign, sgn and the functions at NumPy's special values", function()
  local function parts(t)
    local r = {}
    for i, v in ipairs(t:tolist()) do r[i] = {v.real, v.imag} end
    return r
  end
  local nan = 0 / 0
  local function isnan_parts(v) return {v.real ~= v.real, v.imag ~= v.imag} end
  local z = torch.tensor({c(math.huge, 0), c(0, 0), c(1, 1)}, {dtype = "complex128"})
  -- ^ is np.power (npy_cpow): integer powers by products, 0^-1 NaN, inf^0.5 through cpow
  -- (NumPy's ** operator alone calls reciprocal and sqrt: 0j and inf+0j there)
  T.eq(isnan_parts((z ^ -1):tolist()[1]), {true, true})
  T.eq((z ^ -1):tolist()[3], c(0.5, -0.5))
  T.eq(isnan_parts((z ^ -1):tolist()[2]), {true, true})
  T.eq({(z ^ 0.5):tolist()[1].real, isnan_parts((z ^ 0.5):tolist()[1])[2]}, {math.huge, true})
  T.eq({(z ^ 2):tolist()[1].real, isnan_parts((z ^ 2):tolist()[1])[2]}, {math.huge, true})
  T.eq(parts(np.power(z, 0)), {{1, 0}, {1, 0}, {1, 0}})
  T.eq(parts(z[{{2, 3}}] ^ 2), {{0, 0}, {0, 2}})
  T.eq((2 ^ torch.tensor({c(0, 0), c(3, 0)})):tolist(), {c(1, 0), c(8, 0)})
  T.eq((torch.tensor({c(-3, 4)}) ^ torch.tensor({2.0})).dtype, "complex64")
  -- np.sign: the sign of the real part, else of the imaginary part; NaN beside a NaN part
  local s = np.sign(torch.tensor({c(0, -2), c(-0.0, 0), c(3, nan), c(-1, 5)}, {dtype = "complex128"})):tolist()
  T.eq({s[1], s[2], s[4]}, {c(-1, 0), c(0, 0), c(-1, 0)})
  T.eq(isnan_parts(s[3]), {true, false})
  T.error(function() return torch.sign(z) end,
    "sign: complex128 is not supported (as in PyTorch; torch.sgn gives x/|x|, np.sign NumPy's sign)")
  T.error(function() return z:sign_() end, "sign: complex128 is not supported")
  T.eq(torch.sgn(torch.tensor({c(3, -4), c(0, 0)}, {dtype = "complex128"})):tolist(), {c(0.6, -0.8), c(0, 0)})
  T.eq(torch.tensor({-2.0, 0, 5}):sgn():tolist(), {-1, 0, 1})
  T.eq(torch.sgn(torch.tensor({-2.0, 3}), {out = torch.zeros(2)}):tolist(), {-1, 1})
  -- branch cuts and signed zeros as NumPy: sqrt(-4 - 0j) = -2j, arcsin(2 -+ 0j)
  T.eq(np.sqrt(torch.tensor({c(-4, 0), c(-4, -0.0)}, {dtype = "complex128"})):tolist(), {c(0, 2), c(0, -2)})
  local as = np.arcsin(torch.tensor({c(2, 0), c(2, -0.0)}, {dtype = "complex128"})):tolist()
  T.near({as[1].imag, as[2].imag}, {1.3169578969248166, -1.3169578969248166}, 1e-15)
  T.eq(np.log10(torch.tensor({c(100, 0)}, {dtype = "complex128"})):tolist(), {c(2, 0)})
  -- exp(3 ln2) as NumPy computes it
  T.eq(np.exp2(torch.tensor({c(3, 0)}, {dtype = "complex128"})):tolist(), {c(7.999999999999998, 0)})
  local t = torch.tan(torch.tensor({c(0, -0.0)})):tolist()[1]
  T.eq({t.real, 1 / t.imag}, {0, -math.huge})
end)

T.test("complex cumsum, cumprod, var and std", function()
  local x = torch.tensor({{c(1, 1), c(2, -1)}, {c(0, 3), c(-1, 0)}}, {dtype = "complex128"})
  T.eq(torch.cumsum(x, 2):tolist(), {{c(1, 1), c(3, 0)}, {c(0, 3), c(-1, 3)}})
  T.eq(torch.cumprod(x, 1):tolist(), {{c(1, 1), c(2, -1)}, {c(-3, 3), c(-2, 1)}})
  T.eq(np.cumsum(x):tolist(), {c(1, 1), c(3, 0), c(3, 3), c(2, 3)})
  T.eq(torch.cumsum(torch.tensor({1, 2}), 1, {dtype = "complex64"}):tolist(), {c(1, 0), c(3, 0)})
  T.error(function() return torch.cumprod(x, 1, {dtype = "float64"}) end,
    "cumprod: cannot accumulate complex128 into the real dtype float64")
  -- the mean squared modulus of the deviations, in the real dtype: NumPy's ddof 0, torch's correction 1
  local v = torch.tensor({c(1, 1), c(3, 3)})
  T.eq({np.var(v):item(), np.var(v, {ddof = 1}):item(), torch.var(v):item(), torch.var(v, {correction = 0}):item()},
    {2, 4, 4, 2})
  T.eq({np.var(v).dtype, torch.std(v:to("complex128")).dtype}, {"float32", "float64"})
  T.near(torch.std(v, {unbiased = false}):item(), math.sqrt(2), 1e-7)
end)

T.test("NumPy's Lua-written statistics: complex where they compute it, else refused", function()
  local x = torch.tensor({c(1, 3), c(2, 4), c(0, -1)}, {dtype = "complex128"})
  -- these cast to float64 before and dropped the imaginary parts
  for _, f in ipairs({"median", "nanmedian", "nanmean", "average", "cov", "corrcoef", "nanstd", "nanvar", "gradient",
                      "ptp"}) do
    T.error(function() return np[f](x) end, f .. ": complex128 is not supported")
  end
  T.error(function() return np.quantile(x, 0.5) end, "quantile: complex128 is not supported")
  T.error(function() return np.median({c(1, 2)}) end, "median: complex128 is not supported")
  T.error(function() return np.interp(torch.tensor({0.5}), torch.tensor({0.0, 1, 2}), x) end,
    "interp: complex128 is not supported")
  T.error(function() return np.polyfit(torch.tensor({0.0, 1, 2}), x, 1) end, "polyfit: complex128 is not supported")
  -- PyTorch's spelling of three of them (they cast to the default float dtype before)
  T.error(function() return torch.cov(x) end, "cov: complex128 is not supported")
  T.error(function() return torch.corrcoef(x) end, "corrcoef: complex128 is not supported")
  T.error(function() return torch.gradient(x) end, "gradient: complex128 is not supported")
  -- the composed ops of torch_ops15.lua (raw "attempt to compare nil" errors before)
  T.error(function() return torch.logcumsumexp(x, 1) end, "logcumsumexp: complex128 is not supported")
  T.error(function() return torch.nan_to_num(x) end, "nan_to_num: complex128 is not supported")
  T.error(function() return torch.addcmul(x, x, x) end, "addcmul: complex128 is not supported")
  T.error(function() return torch.addcdiv(torch.ones(3), x, x) end, "addcdiv: complex128 is not supported")
  T.eq(torch.equal(x, x:clone()), true)
  -- vander keeps complex: NumPy's complex128, torch's x dtype
  T.eq(np.vander(x:to("complex64"), 2).dtype, "complex128")
  T.eq(torch.vander(x:to("complex64"), 3, true):tolist()[2], {c(1, 0), c(2, 4), c(-12, 16)})
  -- NumPy's values (np.nansum zeroes complex NaNs; correlate conjugates v; NumPy's promotion)
  T.eq(np.nansum(torch.tensor({c(0 / 0, 1), c(2, 4)})):item(), c(2, 4))
  T.eq(np.correlate(x, torch.tensor({1.0, 2.0}, {dtype = "float32"})):tolist(), {c(5, 11), c(2, 2)})
  T.eq(np.correlate(x, torch.tensor({1, 2}, {dtype = "int32"})).dtype, "complex128")
  T.eq(np.convolve(torch.tensor({c(1, 1)}), torch.tensor({1, 2}, {dtype = "int32"})).dtype, "complex128")
  -- np.polyval of real coefficients at complex points (it cast x to float64 before)
  local pv = np.polyval(torch.tensor({1.0, 0.0, 1.0}, {dtype = "float64"}), x)
  T.eq({pv.dtype, pv:tolist()}, {"complex128", {c(-7, 6), c(-11, 16), c(0, 0)}})
  local p2 = np.polyval(torch.tensor({1, 2}), torch.tensor({c(1, 1)}))
  T.eq({p2.dtype, p2:tolist()}, {"complex64", {c(3, 1)}})
  T.eq(np.polyval(torch.tensor({c(1, 1), c(0, 2)}), torch.tensor({2.0, 1.0})):tolist(), {c(2, 4), c(1, 3)})
  T.eq(np.polyval(torch.tensor({c(1, 1)}), torch.tensor({2.0}, {dtype = "float64"})).dtype, "complex128")
end)

T.test("gradients with complex numbers: scalars conjugated, pow refused, real vdot differentiable", function()
  local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
  local y = (x * np.j + 1):abs():sum()   -- sum sqrt(1 + x^2): dy/dx = x / sqrt(1 + x^2)
  y:backward()
  T.near(x.grad, {1 / math.sqrt(2), 2 / math.sqrt(5)}, 1e-6)
  T.error(function() return torch.pow(x, torch.tensor({c(1, 1), c(0, 1)})) end,
    "pow: has no gradient formula for complex tensors in tide")
  T.error(function() return torch.angle(x) end, "angle: argument 1 requires grad")
  T.eq(torch.no_grad(function() return (x * np.j):tolist() end), {c(0, 1), c(0, 2)})
  x.grad = nil
  local v = torch.vdot(x, x * 3)
  v:backward()
  T.eq({v:item(), x.grad:tolist()}, {15, {6, 12}})
end)

T.test("shape ops and indexing move complex elements", function()
  local x = ct({{1, 2, 3}, {4, 5, 6}}, {{-1, 0.5, 2}, {0, -3, 1}})
  T.eq(x:t():contiguous():tolist()[3], {c(3, 2), c(6, 1)})
  T.eq(x:flip(1):tolist()[1][1], c(4, 0))
  T.eq(torch.cat({x, x}, 2):size(), {2, 6})
  T.eq(torch.stack{x[1], x[2]}:tolist()[2][2], c(5, -3))
  T.eq(x:reshape(3, 2):tolist()[3], {c(5, -3), c(6, 1)})
  T.eq(x[{{}, 2}]:tolist(), {c(2, 0.5), c(5, -3)})
  T.eq(x[x.real:gt(4)]:tolist(), {c(5, -3), c(6, 1)})
  local z = torch.zeros(2, 2, {dtype = "complex128"})
  z[1][2] = c(5, 6)
  z[{2, 1}] = 7
  T.eq(z:tolist(), {{c(0, 0), c(5, 6)}, {c(7, 0), c(0, 0)}})
  T.eq(np.array(z)[{1, 2}]:item(), c(5, 6))
  T.eq(torch.tile(x[1], {2}):tolist()[4], c(1, -1))
end)

os.execute("rm -rf " .. T.quote(TMP))
T.done()
