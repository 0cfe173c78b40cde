-- Gradients through complex tensors and the FFTs, against PyTorch 1.13's autograd on the same
-- inputs: each case below is written twice, in tide and in PyTorch, and the gradients of every
-- leaf must agree (PyTorch's convention: dL/dx + i dL/dy for z = x + iy). Ops without a
-- complex formula refuse by name (test_complex.lua).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local np = require "numpy"

-- Deterministic inputs, the same on both sides.
local function real_input(n, k) return torch.arange(n, {dtype = torch.float64}):mul(0.37 * k):sin() end
local function leaves()
  local x = real_input(12, 1):reshape(3, 4):requires_grad_()
  local y = real_input(12, 2):reshape(3, 4):requires_grad_()
  local z = torch.complex(real_input(12, 3), real_input(12, 4)):reshape(3, 4):detach():requires_grad_()
  local w = torch.complex(real_input(12, 5), real_input(12, 6)):reshape(3, 4)
  return x, y, z, w
end

-- name, tide loss, PyTorch loss (x, y, z real/complex leaves; w a complex constant; r real weights)
local CASES = {
  {"mul abs", function(x, y, z, w) return (z * w):abs():sum() end, "(z * w).abs().sum()"},
  {"div", function(x, y, z, w) return torch.view_as_real(w / (z + 2)):sum() end, "torch.view_as_real(w / (z + 2)).sum()"},
  {"mixed real complex", function(x, y, z, w) return (x * z + y):abs():sum() end, "(x * z + y).abs().sum()"},
  {"complex real imag", function(x, y, z, w) return (torch.complex(x, y) * w).real:sum() + (z * z).imag:sum() end,
   "(torch.complex(x, y) * w).real.sum() + (z * z).imag.sum()"},
  {"conj cast", function(x, y, z, w) return (z:conj() * x:to(torch.complex128)):abs():sum() end,
   "(z.conj() * x.to(torch.complex128)).abs().sum()"},
  {"view_as_complex", function(x, y, z, w) return torch.view_as_complex(torch.stack({x, y}, -1)):mul(w):abs():sum() end,
   "torch.view_as_complex(torch.stack((x, y), -1)).mul(w).abs().sum()"},
  {"fft", function(x, y, z, w) return torch.fft.fft(x):abs():sum() + torch.fft.fft(z, 6, 1, "ortho"):abs():sum() end,
   "torch.fft.fft(x).abs().sum() + torch.fft.fft(z, 6, 0, 'ortho').abs().sum()"},
  {"ifft forward", function(x, y, z, w) return torch.fft.ifft(z, 3, nil, "forward").real:sum() end,
   "torch.fft.ifft(z, 3, -1, 'forward').real.sum()"},
  {"rfft irfft", function(x, y, z, w) return torch.fft.rfft(x):abs():sum() + torch.fft.irfft(z):pow(2):sum() end,
   "torch.fft.rfft(x).abs().sum() + torch.fft.irfft(z).pow(2).sum()"},
  {"irfft n odd", function(x, y, z, w) return (torch.fft.irfft(z, 5, 1) * torch.arange(20.0, {dtype = torch.float64}):reshape(5, 4)):sum() end,
   "(torch.fft.irfft(z, 5, 0) * torch.arange(20.0, dtype=torch.float64).reshape(5, 4)).sum()"},
  {"hfft ihfft", function(x, y, z, w) return torch.fft.hfft(z, nil, 1, "ortho"):sum() + torch.fft.ihfft(y):abs():sum() end,
   "torch.fft.hfft(z, None, 0, 'ortho').sum() + torch.fft.ihfft(y).abs().sum()"},
  {"fftn rfftn irfftn", function(x, y, z, w)
     return torch.fft.fftn(z, {4, 3}):abs():sum() + torch.fft.rfftn(x, {2, 6}):abs():sum() +
            torch.fft.irfftn(z, {3, 5}, {1, 2}, "forward"):sum()
   end, "torch.fft.fftn(z, (4, 3)).abs().sum() + torch.fft.rfftn(x, (2, 6)).abs().sum() + " ..
        "torch.fft.irfftn(z, (3, 5), (0, 1), 'forward').sum()"},
  {"fft2 ifft2 hfftn", function(x, y, z, w)
     return torch.view_as_real(torch.fft.ifft2(torch.fft.fft2(z * w))):pow(2):sum() + torch.fft.hfftn(z):sum()
   end, "torch.view_as_real(torch.fft.ifft2(torch.fft.fft2(z * w))).pow(2).sum() + torch.fft.hfftn(z).sum()"},
  {"np.fft spelling, views", function(x, y, z, w) return np.fft.fft(z[{{}, {-1, 1, -1}}]:t()):abs():sum() end,
   "torch.fft.fft(torch.flip(z, (1,)).t().to(torch.complex128)).abs().sum()"},
}

T.test("gradients through complex ops and FFTs equal PyTorch's", function()
  local dir, path = T.tmpdir()
  local py = {"import torch, sys", "d = sys.argv[1]", "def r(n, k): return (torch.arange(n, dtype=torch.float64) * (0.37 * k)).sin()",
              "ok = []"}
  for i, c in ipairs(CASES) do
    local x, y, z, w = leaves()
    local loss = c[2](x, y, z, w)
    loss:backward()
    torch.save({loss = loss:detach(), x = x.grad, y = y.grad, z = z.grad}, path(i .. ".pt"))
    py[#py + 1] = table.concat({
      "x = r(12, 1).reshape(3, 4).requires_grad_()",
      "y = r(12, 2).reshape(3, 4).requires_grad_()",
      "z = torch.complex(r(12, 3), r(12, 4)).reshape(3, 4).detach().requires_grad_()",
      "w = torch.complex(r(12, 5), r(12, 6)).reshape(3, 4)",
      "L = " .. c[3],
      "gx, gy, gz = torch.autograd.grad(L, (x, y, z), allow_unused=True)",
      "t = torch.load(f'{d}/" .. i .. ".pt')",
      "same = lambda a, b: (a is None and b is None) or (a is not None and b is not None and torch.allclose(a, b, rtol=1e-10, atol=1e-10))",
      "ok.append((" .. string.format("%q", c[1]) .. ", bool(torch.allclose(t['loss'], L.detach())), same(t.get('x'), gx), same(t.get('y'), gy), same(t.get('z'), gz)))",
    }, "\n")
  end
  py[#py + 1] = "for o in ok: print(*o)"
  if T.have_python_module("torch") then
    local out, ok = T.python(table.concat(py, "\n") .. "\n", dir)
    T.truthy(ok, out)
    local want = {}
    for _, c in ipairs(CASES) do want[#want + 1] = c[1] .. " True True True True" end
    T.eq(out, table.concat(want, "\n") .. "\n")
  end
  os.execute("rm -rf " .. T.quote(dir))
end)

T.test("complex leaves: requires_grad, grad fields, and ops without a complex formula refuse", function()
  local z = torch.complex(torch.tensor{1.0, 2.0}, torch.tensor{0.5, -1.0}):requires_grad_()
  T.eq(z.requires_grad, true)
  local l = (z * z:conj()).real:sum()   -- sum |z|^2: the gradient is 2z
  l:backward()
  T.eq(z.grad.dtype, "complex64")
  T.near(torch.view_as_real(z.grad), torch.view_as_real(z:detach() * 2), 1e-6)
  T.error(function() return z:exp() end, "exp: has no gradient formula for complex tensors in tide")
  T.error(function() return z:matmul(z) end, "has no gradient formula for complex tensors in tide")
  T.error(function() return torch.where(torch.tensor{true, false}, z, z) end,
    "where: has no gradient formula for complex tensors in tide")
  T.error(function() return torch.polar(torch.ones(2):requires_grad_(), torch.ones(2)) end, "polar: argument 1 requires grad")
  torch.no_grad(function() T.eq(z:exp().requires_grad, false) end)
end)

T.done()
