-- Reversed views (negative strides): NumPy's a[::-1] and np.flip are views of a's memory.
-- The layout column of the conformance table (devicecheck.lua reversed) runs every op on
-- them; here: what makes them views (writes, strides, autograd, as_strided), the paths that
-- hand memory to libraries (BLAS, files, NumPy and PyTorch), and overlap with the original.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local np = require "numpy"

T.test("np.flip, fliplr, flipud are views; torch.flip copies", function()
  local a = np.arange(6):reshape(2, 3)
  local f = np.flip(a)
  T.eq(f:tolist(), {{5, 4, 3}, {2, 1, 0}})
  T.eq(f:stride(), {-3, -1})
  f[{1, 1}] = 50
  T.eq(a[{2, 3}]:item(), 50)
  T.eq(np.fliplr(a):stride(), {3, -1})
  T.eq(np.flipud(a):stride(), {-3, 1})
  T.eq(np.flip(a, 2):tolist(), {{2, 1, 0}, {50, 4, 3}})
  T.eq(a:flip(1):stride(), {-3, 1})                      -- a NumPy array's method: NumPy's view
  local t = torch.arange(6):reshape(2, 3)
  local c = torch.flip(t, {1})
  T.eq(c:stride(), {3, 1})
  c[{1, 1}] = 9
  T.eq(t[{2, 1}]:item(), 3)
end)

T.test("ops on reversed views give NumPy's values, in every dtype", function()
  for _, dt in ipairs{"float32", "float64", "int64", "int8", "uint8", "bool", "float16", "complex64"} do
    local a = np.arange(12):reshape(3, 4):astype(dt)
    local r = a[{{-1, 1, -1}, {-1, 1, -2}}]          -- a[::-1, ::-2]
    local c = r:copy()
    T.eq(c:is_contiguous(), true, dt)
    T.eq(r:tolist(), c:tolist(), dt)
    T.eq(tostring(r), tostring(c), dt)
    if dt ~= "bool" and dt ~= "complex64" then
      T.eq(r:sum():item(), c:sum():item(), dt)
      T.eq(np.cumsum(r, 2):tolist(), np.cumsum(c, 2):tolist(), dt)
      T.eq(r:max(1):tolist(), c:max(1):tolist(), dt)
      T.eq(np.sort(r, 1):tolist(), np.sort(c, 1):tolist(), dt)
    end
    T.eq(np.equal(r, c):all():item(), true, dt)
  end
end)

T.test("products through BLAS read reversed operands right", function()
  local x = torch.arange(100.0)
  local xr = x[{{-1, 1, -1}}]
  T.eq(torch.dot(xr, x):item(), torch.dot(xr:contiguous(), x):item())  -- cblas_ddot (n > 64)
  local y = torch.arange(100, 200):float()
  T.eq(torch.dot(y[{{-1, 1, -1}}], y):item(), torch.dot(y:flip(1), y):item())
  local m = torch.randn(5, 7, {dtype = torch.float64})
  local n = torch.randn(7, 3, {dtype = torch.float64})
  local mr, nr = m[{{-1, 1, -1}, {-1, 1, -1}}], n[{{-1, 1, -1}}]
  T.near(torch.mm(mr, nr), torch.mm(mr:contiguous(), nr:contiguous()), 1e-12)
  T.near(torch.mv(mr, m[{1, {-1, 1, -1}}]), torch.mv(mr:contiguous(), m[1]:flip(1)), 1e-12)
  local out = torch.zeros(5, 3, {dtype = torch.float64})
  local outr = out[{{-1, 1, -1}}]
  torch.mm(m, n, {out = outr})                               -- written through the view
  T.near(out, torch.mm(m, n):flip(1), 1e-12)
  local s = torch.eye(4, {dtype = torch.float64}) * 4 + torch.rand(4, 4, {dtype = torch.float64})
  local sr, rhs = s[{{-1, 1, -1}}], torch.arange(8.0, {dtype = torch.float64}):reshape(4, 2)[{{}, {-1, 1, -1}}]
  T.near(torch.linalg.solve(sr, rhs), torch.linalg.solve(sr:contiguous(), rhs:contiguous()), 1e-12)
end)

T.test("writes through reversed views, and overlap with the original", function()
  local a = np.arange(5.0)
  local r = a[{{-1, 1, -1}}]
  r:add_(a)                                                  -- np.add(a[::-1], a, out=a[::-1])
  T.eq(a:tolist(), {4.0, 4.0, 4.0, 4.0, 4.0})
  local b = np.arange(5.0)
  b[{{-1, 1, -1}}] = b                                       -- b[::-1] = b
  T.eq(b:tolist(), {4.0, 3.0, 2.0, 1.0, 0.0})
  local c = np.arange(6)
  c[{{-1, 1, -2}}]:fill_(7)                                  -- c[::-2] = 7
  T.eq(c:tolist(), {0, 7, 2, 7, 4, 7})
  local d = np.arange(4.0)
  np.multiply(d, d[{{-1, 1, -1}}], {out = d})               -- np.multiply(d, d[::-1], out=d)
  T.eq(d:tolist(), {0.0, 2.0, 2.0, 0.0})
  local e = torch.arange(6.0)
  e[{{-1, 1, -1}}]:copy_(e[{{1, 6}}])
  T.eq(e:tolist(), {5.0, 4.0, 3.0, 2.0, 1.0, 0.0})
end)

T.test("autograd through reversed views, in-place writes included", function()
  local x = torch.tensor({1.0, 2.0, 3.0, 4.0}, {requires_grad = true})
  local y = x * 1
  local v = y[{{-1, 1, -1}}]
  v:mul_(torch.tensor{1.0, 2.0, 3.0, 4.0})                   -- y[::-1] *= [1, 2, 3, 4]
  T.eq(y:tolist(), {4.0, 6.0, 6.0, 4.0})
  y:sum():backward()
  T.eq(x.grad:tolist(), {4.0, 3.0, 2.0, 1.0})
  local z = torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {requires_grad = true})
  local w = np.flip(z)
  T.eq(w:stride(), {-2, -1});
  (w * torch.tensor{{1.0, 10.0}, {100.0, 1000.0}}):sum():backward()
  T.eq(z.grad:tolist(), {{1000.0, 100.0}, {10.0, 1.0}})
end)

T.test("dtype views need a last dim of stride 1, as NumPy's", function()
  local a = np.arange(8, {dtype = "int16"})
  local r = a[{{-1, 1, -1}}]
  T.eq(r:view("uint16"):tolist(), {7, 6, 5, 4, 3, 2, 1, 0})  -- the same item size: any strides
  T.error(function() return r:view("int32") end,
    "view: viewing int16 as a larger dtype (int32) needs the last dim to have stride 1, got strides {-1}")
  T.error(function() return torch.view_as_complex(torch.zeros(3, 2)[{{}, {-1, 1, -1}}]) end,
    "view_as_complex: the last dim must have stride 1, got strides {2,-1}")
  local m = np.arange(8, {dtype = "int16"}):reshape(2, 4)[{{-1, 1, -1}}]   -- rows reversed
  T.eq(m:view("int32"):tolist(), np.array({{4 + 5 * 65536, 6 + 7 * 65536}, {0 + 1 * 65536, 2 + 3 * 65536}}):tolist())
end)

T.test("as_strided takes negative strides inside the storage", function()
  local a = torch.arange(6)
  local r = torch.as_strided(a, {3, 2}, {-2, 1}, 4)
  T.eq(r:tolist(), {{4, 5}, {2, 3}, {0, 1}})
  local s = np.lib.stride_tricks.as_strided(np.arange(4.0)[{{4, 4}}], {4}, {-8})   -- from a[3] back
  T.eq(s:tolist(), {3.0, 2.0, 1.0, 0.0})
  T.error(function() return torch.as_strided(a, {3}, {-2}, 3) end,
    "as_strided: the view of size {3} with strides {-2} at offset 3 reaches 1 element before the start of its storage")
  T.error(function() return torch.as_strided(a, {2, 2}, {-1, 3}, 0) end,
    "as_strided: the view of size {2,2} with strides {-1,3} at offset 0 reaches 1 element before the start of its storage")
  -- gradients of a view inside the input's own elements
  local x = torch.arange(4.0):requires_grad_()
  local v = torch.as_strided(x, {4}, {-1}, 3);
  (v * torch.tensor{1.0, 2.0, 3.0, 4.0}):sum():backward()
  T.eq(x.grad:tolist(), {4.0, 3.0, 2.0, 1.0})
end)

T.test("files and NumPy/PyTorch interop write the values, not the layout", function()
  local dir, path = T.tmpdir()
  local a = np.arange(12.0):reshape(3, 4)
  local r = a[{{-1, 1, -1}, {-1, 1, -1}}]
  np.save(path("r.npy"), r)
  T.eq(np.load(path("r.npy")):tolist(), r:tolist())
  torch.save({r = torch.arange(6.0)[{{-1, 1, -2}}]}, path("r.pt"))
  T.eq(torch.load(path("r.pt")).r:tolist(), {5.0, 3.0, 1.0})
  np.savetxt(path("r.txt"), r)
  T.eq(np.loadtxt(path("r.txt")):tolist(), r:tolist())
  if T.have_python_module("torch") then
    local out = T.python("import torch, numpy as np, sys\n" ..
      "print(torch.load(sys.argv[1])['r'].tolist(), np.load(sys.argv[2]).tolist())", path("r.pt"), path("r.npy"))
    T.eq(out, "[5.0, 3.0, 1.0] [[11.0, 10.0, 9.0, 8.0], [7.0, 6.0, 5.0, 4.0], [3.0, 2.0, 1.0, 0.0]]\n")
  end
  os.execute("rm -rf " .. T.quote(dir))
end)

T.done()
