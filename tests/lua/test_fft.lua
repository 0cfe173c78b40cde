-- np.fft and torch.fft (FFTW through libtide_fft.so): values against NumPy 1.24 / PyTorch
-- (printed by them for these inputs), result dtypes of both spellings, n / s / dims / norm
-- positionally and as keywords, strided views, the frequencies and shifts, and every error.
-- tests/conformance/ops_fft.lua compares many more shapes and lengths with NumPy.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

-- A complex tensor's values as a flat list of {re, im} pairs.
local function pairs_of(t)
  T.truthy(t.dtype == "complex64" or t.dtype == "complex128", "expected a complex result, got " .. t.dtype)
  return torch.view_as_real(t):reshape(-1, 2):tolist()
end
local function flat(t) return t:reshape(-1):double():tolist() end

local X5 = {0.5, -1, 2, 3, -4}
local FFT5 = {{0.5, 0.0}, {-5.0901699437494745, -2.2653842965929876}, {6.0901699437494745, -2.714412273172573},
              {6.0901699437494745, 2.714412273172573}, {-5.0901699437494745, 2.2653842965929876}}

if not pcall(np.fft.fft, np.ones(1)) then
  -- Without the FFT module (tide built without FFTW) only its error can be checked.
  T.test("without the FFT module every transform says how to get it", function()
    T.error(function() return np.fft.fft(np.ones(4)) end,
            "fft.fft: the FFT module libtide_fft.so is not available (install libfftw3-dev and rebuild)")
  end)
  T.done()
  return
end

T.test("fft, ifft, rfft, irfft: NumPy's values for an odd length", function()
  local x = np.array(X5)
  T.near(pairs_of(np.fft.fft(x)), FFT5, 1e-14)
  T.near(pairs_of(np.fft.ifft(x)), {{0.1, 0.0}, {-1.018033988749895, 0.45307685931859754},
                                     {1.218033988749895, 0.5428824546345146}, {1.218033988749895, -0.5428824546345146},
                                     {-1.018033988749895, -0.45307685931859754}}, 1e-14)
  local r = np.fft.rfft(x)
  T.near(pairs_of(r), {FFT5[1], FFT5[2], FFT5[3]}, 1e-14)
  T.near(flat(np.fft.irfft(r, 5)), X5, 1e-14)
  -- The default length 2 (m - 1); the imaginary parts of the zero and Nyquist terms are ignored.
  T.near(flat(np.fft.irfft(torch.complex(torch.tensor{1.0, 2, 3}, torch.tensor{5.0, 1, -1}))), {2, -1, 0, 0}, 1e-15)
  T.near(pairs_of(np.fft.ifft(np.fft.fft(x))), {{0.5, 0}, {-1, 0}, {2, 0}, {3, 0}, {-4, 0}}, 1e-15)
end)

T.test("hfft, ihfft: NumPy's values, norms swapped as NumPy and PyTorch swap them", function()
  T.near(flat(np.fft.hfft(np.array{1, 2, 3})), {8, -2, 0, -2}, 1e-15)
  T.near(pairs_of(np.fft.ihfft(np.array{1, 2, 3, 4})), {{2.5, 0}, {-0.5, -0.5}, {-0.5, 0}}, 1e-15)
  T.near(flat(np.fft.hfft(np.fft.fft(np.array{1, 2, 3}), 3, {norm = "ortho"})),
         {1.7320508075688772, 5.196152422706632, 3.4641016151377544}, 1e-14)
  T.near(pairs_of(torch.fft.ihfft(torch.tensor{1.0, 2, 3}, {norm = "forward"})), {{6, 0}, {-1.5, -0.8660254037844386}},
         1e-6)
  T.eq({torch.fft.hfft(torch.fft.fft(torch.ones(3))).dtype, torch.fft.ihfft(torch.ones(4)).dtype}, {"float32", "complex64"})
  local spec = np.fft.fft(np.array{1, 2, 3})
  local copy = spec:clone()
  np.fft.hfft(spec)
  T.eq(pairs_of(spec), pairs_of(copy))  -- the conjugate is taken of a copy
  T.error(function() return torch.fft.ihfft(torch.fft.fft(torch.ones(4))) end,
          "fft.ihfft: expected a real input, got complex64")
end)

T.test("hfft2, ihfft2, hfftn, ihfftn: PyTorch 1.13's values (torch spelling only, as PyTorch)", function()
  local dir, path = T.tmpdir()
  local x = torch.arange(24.0, {dtype = torch.float64}):reshape(2, 3, 4):sin()
  local z = torch.complex(x, x:cos())
  local got = {
    torch.fft.ihfftn(x), torch.fft.ihfft2(x, {3, 5}, {1, 3}, "ortho"), torch.fft.ihfftn(x, {dim = {2}, norm = "forward"}),
    torch.fft.hfftn(z), torch.fft.hfft2(z, {4, 6}), torch.fft.hfftn(z, nil, {3, 1}, "forward"),
  }
  local copy = z:clone()
  for i, g in ipairs(got) do torch.save(g, path(i .. ".pt")) end
  T.eq(torch.view_as_real(z):tolist(), torch.view_as_real(copy):tolist())  -- hfftn conjugates a copy
  T.eq(np.fft.hfftn, nil)                                                    -- NumPy has no hfftn
  -- axes= is dim='s other name, in both spellings
  T.eq(torch.fft.hfftn(z, {axes = {1, 3}}):tolist(), torch.fft.hfftn(z, {dim = {1, 3}}):tolist())
  T.eq(torch.fft.hfft2(z, {axes = {1, 3}}):tolist(), torch.fft.hfftn(z, nil, {1, 3}):tolist())
  T.eq(torch.view_as_real(torch.fft.ihfftn(x, {axes = {2}})):tolist(), torch.view_as_real(torch.fft.ihfftn(x, nil, {2})):tolist())
  T.eq(torch.view_as_real(torch.fft.ihfft2(x, {axes = {2, 3}})):tolist(), torch.view_as_real(torch.fft.ihfftn(x, nil, {2, 3})):tolist())
  T.error(function() return torch.fft.ihfftn(z) end, "fft.ihfftn: expected a real input, got complex128")
  if T.have_python_module("torch") then
    local out = T.python([[
import torch, sys
d = sys.argv[1]
x = torch.arange(24.0, dtype=torch.float64).reshape(2, 3, 4).sin()
z = torch.complex(x, x.cos())
want = [torch.fft.ihfftn(x), torch.fft.ihfft2(x, (3, 5), (0, 2), "ortho"), torch.fft.ihfftn(x, dim=(1,), norm="forward"),
        torch.fft.hfftn(z), torch.fft.hfft2(z, (4, 6)), torch.fft.hfftn(z, None, (2, 0), "forward")]
for i, w in enumerate(want):
    g = torch.load(f"{d}/{i + 1}.pt")
    print(g.dtype == w.dtype, tuple(g.shape) == tuple(w.shape), torch.allclose(g, w, rtol=1e-12, atol=1e-12))
]], dir)
    T.eq(out, string.rep("True True True\n", 6))
  end
  os.execute("rm -rf " .. T.quote(dir))
end)

T.test("result dtypes: np complex128 always (NumPy 1.24), torch the input's precision", function()
  local f32 = torch.tensor(X5, {dtype = "float32"})
  T.eq(np.fft.fft(f32).dtype, "complex128")
  T.eq(np.fft.rfft(f32).dtype, "complex128")
  T.eq(np.fft.irfft(np.fft.rfft(f32)).dtype, "float64")
  T.eq(np.fft.fft(np.arange(4)).dtype, "complex128")
  T.eq(np.fft.fft({1, 2, 3}).dtype, "complex128")  -- a Lua list, as np.asarray
  T.eq(torch.fft.fft(f32).dtype, "complex64")
  T.eq(torch.fft.fft(f32:half()).dtype, "complex64")
  T.eq(torch.fft.fft(f32:double()).dtype, "complex128")
  T.eq(torch.fft.fft(torch.arange(4)).dtype, "complex64")
  T.eq(torch.fft.fft(torch.tensor{true, false}).dtype, "complex64")
  T.eq(torch.fft.rfft(f32).dtype, "complex64")
  T.eq(torch.fft.irfft(torch.fft.rfft(f32)).dtype, "float32")
  T.eq(torch.fft.ifft(torch.fft.fft(f32:double())).dtype, "complex128")
  T.with_default_dtype("float64", function() T.eq(torch.fft.fft(torch.arange(4)).dtype, "complex128") end)
  T.near(pairs_of(torch.fft.fft(f32)), FFT5, 1e-6)
  T.near(flat(torch.fft.irfft(torch.fft.rfft(f32), 5)), X5, 1e-6)
end)

T.test("n pads or cuts, dim / axis picks the dim (1-based, negative), positionally or as keywords", function()
  local m = np.array{{1, 2, 3}, {4, 5, 6}}
  local along1 = {{5, 0}, {7, 0}, {9, 0}, {-3, 0}, {-3, 0}, {-3, 0}}
  T.near(pairs_of(np.fft.fft(m, nil, 1)), along1, 1e-15)
  T.near(pairs_of(np.fft.fft(m, {axis = -2})), along1, 1e-15)
  T.near(pairs_of(torch.fft.fft(m, {dim = 1})), along1, 1e-15)
  local n4 = {{6, 0}, {-2, -2}, {2, 0}, {-2, 2}, {15, 0}, {-2, -5}, {5, 0}, {-2, 5}}
  T.near(pairs_of(np.fft.fft(m, 4)), n4, 1e-15)
  T.near(pairs_of(torch.fft.fft(m, {n = 4, dim = -1})), n4, 1e-15)
  T.near(pairs_of(np.fft.fft(m, 2)), {{3, 0}, {-1, 0}, {9, 0}, {-1, 0}}, 1e-15)
  T.eq(np.fft.fft(m, 7, 1).shape, {7, 3})
  T.eq(np.fft.rfft(m, 7, 1).shape, {4, 3})
  T.eq(np.fft.irfft(m, {n = 7, axis = 1}).shape, {7, 3})
  -- Empty batches and an empty signal padded by n.
  T.eq(np.fft.fft(np.zeros{0, 4}).shape, {0, 4})
  T.near(pairs_of(np.fft.fft(np.zeros{0}, 3)), {{0, 0}, {0, 0}, {0, 0}})
end)

T.test("norm: backward (default), ortho, forward, both ways", function()
  local x = np.array{1, 2, 3, 4}
  T.near(pairs_of(np.fft.fft(x, nil, nil, "ortho")), {{5, 0}, {-1, 1}, {-1, 0}, {-1, -1}}, 1e-15)
  T.near(pairs_of(np.fft.fft(x, {norm = "forward"})), {{2.5, 0}, {-0.5, 0.5}, {-0.5, 0}, {-0.5, -0.5}}, 1e-15)
  T.near(pairs_of(np.fft.fft(x, {norm = "backward"})), {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}}, 1e-15)
  T.near(pairs_of(np.fft.ifft(x, {norm = "forward"})), {{10, 0}, {-2, -2}, {-2, 0}, {-2, 2}}, 1e-15)
  T.near(pairs_of(torch.fft.ifft(x, {norm = "ortho"})), {{5, 0}, {-1, -1}, {-1, 0}, {-1, 1}}, 1e-15)
  T.near(flat(np.fft.irfft(np.fft.rfft(x, {norm = "ortho"}), {norm = "ortho"})), {1, 2, 3, 4}, 1e-15)
  T.near(flat(np.fft.irfftn(np.fft.rfftn(x, {norm = "forward"}), {norm = "forward"})), {1, 2, 3, 4}, 1e-15)
end)

T.test("fft2, ifft2, rfft2, irfft2, fftn, rfftn, irfftn: NumPy's values, s and axes", function()
  local m = np.array{{1, 2, 3}, {4, 5, 6}}
  local F2 = {{21, 0}, {-3, 1.7320508075688772}, {-3, -1.7320508075688772}, {-9, 0}, {0, 0}, {0, 0}}
  T.near(pairs_of(np.fft.fft2(m)), F2, 1e-14)
  T.near(pairs_of(np.fft.fftn(m)), F2, 1e-14)
  T.near(pairs_of(torch.fft.fftn(m, {dim = {1, 2}})), F2, 1e-14)
  T.near(pairs_of(np.fft.ifft2(m, {3, 2})), {{2, 0}, {-0.3333333333333333, 0}, {-0.25, 1.2990381056766578},
                                              {-0.08333333333333333, -0.14433756729740643},
                                              {-0.25, -1.2990381056766578}, {-0.08333333333333333, 0.14433756729740643}},
         1e-15)
  T.near(pairs_of(np.fft.rfft2(m)), {{21, 0}, {-3, 1.7320508075688772}, {-9, 0}, {0, 0}}, 1e-14)
  T.near(flat(np.fft.irfft2(np.fft.rfft2(m), {s = {2, 3}})), {1, 2, 3, 4, 5, 6}, 1e-15)
  T.near(pairs_of(np.fft.ifftn(np.fft.fftn(m, nil, {-1, 1}))), {{1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}}, 1e-15)
  -- rfftn's half-length dim is the last of axes: here dim 1 (of length 2 -> 2).
  local t = np.arange(24):reshape(2, 3, 4) % 5
  local r = np.fft.rfftn(t, {axes = {3, 1}})
  T.eq(r.shape, {2, 3, 4})
  T.near(pairs_of(r), {{15, 0}, {-4, -1}, {1, 0}, {-4, 1}, {17, 0}, {1, 4}, {1, 0}, {1, -4}, {14, 0}, {1, -1}, {-4, 0},
                       {1, 1}, {-3, 0}, {0, 5}, {-5, 0}, {0, -5}, {-3, 0}, {5, 0}, {5, 0}, {5, 0}, {2, 0}, {5, -5},
                       {0, 0}, {5, 5}}, 1e-14)
  T.near(flat(np.fft.irfftn(np.fft.rfftn(t), t.shape)), flat(t), 1e-14)
  T.eq(np.fft.irfftn(np.fft.rfftn(t)).shape, {2, 3, 4})
  -- s alone picks the last #s dims.
  T.eq(np.fft.fftn(t, {2, 2}).shape, {2, 2, 2})
  T.eq(torch.fft.rfftn(t, {s = {5, 6}}).shape, {2, 5, 4})
end)

T.test("strided, transposed, reversed and expanded views transform as their values", function()
  local base = torch.arange(1, 25, {dtype = "float64"}):reshape(4, 6):sin()
  local views = {
    base:t(), base[{{1, 4, 2}, ":"}], base:expand(3, 4, 6), base:flip(2), torch.fft.fft(base):t(),
    torch.fft.fft(base)[{":", {2, 6, 2}}],
  }
  for _, v in ipairs(views) do
    for _, dim in ipairs({1, -1}) do
      T.near(pairs_of(torch.fft.fft(v, {dim = dim})), pairs_of(torch.fft.fft(v:contiguous(), {dim = dim})), 1e-13)
      T.near(pairs_of(torch.fft.fft2(v)), pairs_of(torch.fft.fft2(v:contiguous())), 1e-13)
    end
    if not v:is_complex() then
      T.near(pairs_of(torch.fft.rfft(v, {dim = 1})), pairs_of(torch.fft.rfft(v:contiguous(), {dim = 1})), 1e-13)
    end
  end
  -- c2r does not write into its input, whatever its layout.
  local spec = torch.fft.rfft(base)
  local copy = spec:clone()
  torch.fft.irfft(spec, 6)
  torch.fft.irfft(spec:expand(2, 4, 4), 6)
  T.eq(pairs_of(spec), pairs_of(copy))
end)

T.test("fft of a real signal equals fft of the same complex signal, every length", function()
  for _, n in ipairs({1, 2, 3, 7, 16, 97, 1000}) do
    local x = torch.arange(n, {dtype = "float64"}):mul(0.37):sin()
    local c = torch.complex(x, torch.zeros(n, {dtype = "float64"}))
    for _, f in ipairs({torch.fft.fft, torch.fft.ifft}) do T.near(pairs_of(f(x)), pairs_of(f(c)), 1e-12) end
    local m = torch.stack({x, x * 2}, 2)  -- the transform dim strided, the symmetry along it
    T.near(pairs_of(torch.fft.fft(m, {dim = 1})), pairs_of(torch.fft.fft(torch.complex(m, m * 0), {dim = 1})), 1e-12)
  end
end)

T.test("fftfreq, rfftfreq: NumPy's values; np float64, torch the default dtype or dtype=", function()
  T.near(flat(np.fft.fftfreq(5, 0.1)), {0, 2, 4, -4, -2}, 1e-15)
  T.near(flat(np.fft.fftfreq(4)), {0, 0.25, -0.5, -0.25})
  T.near(flat(np.fft.rfftfreq(5, {d = 0.1})), {0, 2, 4}, 1e-15)
  T.near(flat(np.fft.rfftfreq(4)), {0, 0.25, 0.5})
  T.eq(np.fft.fftfreq(4).dtype, "float64")
  T.eq(torch.fft.fftfreq(4).dtype, "float32")
  local f = torch.fft.rfftfreq(4, 2, {dtype = "float64", requires_grad = true})
  T.eq({f.dtype, f.requires_grad}, {"float64", true})
  T.near(flat(f:detach()), {0, 0.125, 0.25})
  T.eq(torch.fft.fftfreq(1, {device = "cpu"}):tolist(), {0})
  T.near(flat(torch.fft.fftfreq(5, {d = 0.1})), {0, 2, 4, -4, -2}, 1e-6)
end)

T.test("fftshift, ifftshift: all dims or the given ones, a new tensor", function()
  T.eq(np.fft.fftshift(np.arange(5)):tolist(), {3, 4, 0, 1, 2})
  T.eq(np.fft.ifftshift(np.arange(5)):tolist(), {2, 3, 4, 0, 1})
  T.eq(np.fft.fftshift(np.arange(6):reshape(2, 3), 2):tolist(), {{2, 0, 1}, {5, 3, 4}})
  T.eq(torch.fft.fftshift(torch.arange(6):reshape(2, 3), {dim = {-1}}):tolist(), {{2, 0, 1}, {5, 3, 4}})
  T.eq(np.fft.fftshift(np.arange(6):reshape(2, 3)):tolist(), {{5, 3, 4}, {2, 0, 1}})
  T.eq(np.fft.fftshift({1, 2, 3, 4}, {axes = 1}):tolist(), {3, 4, 1, 2})
  T.near(flat(np.fft.fftshift(np.fft.fftfreq(5))), {-0.4, -0.2, 0, 0.2, 0.4}, 1e-15)
  local x = torch.arange(7)
  T.eq(torch.fft.ifftshift(torch.fft.fftshift(x)):tolist(), x:tolist())
  local one = torch.ones(1)
  local s = torch.fft.fftshift(one)
  s[1] = 5
  T.eq(one:tolist(), {1})  -- not a view of its input
  local f = np.fft.fft(np.array{1, 2, 3})
  T.eq(pairs_of(np.fft.fftshift(f)), pairs_of(torch.cat({f[{{3, 3}}], f[{{1, 2}}]})))
end)

T.test("errors name the op and the value", function()
  local x = np.ones(4)
  T.error(function() return np.fft.fft(x, 0) end, "fft.fft: invalid number of data points (0) specified")
  T.error(function() return np.fft.fft(x, {n = -3}) end, "fft.fft: invalid number of data points (-3) specified")
  T.error(function() return np.fft.fft(x, 1 << 40) end, "fft.fft: out of memory: cannot allocate")
  T.error(function() return np.fft.rfft(x, 1 << 62) end, "fft.rfft: shape {4611686018427387904} of float64 is too large")
  local negative = np.arange(8)[{{-1, 1, -2}}]  -- a negative stride
  T.near(pairs_of(np.fft.fft(negative)), pairs_of(np.fft.fft(np.array{7, 5, 3, 1})), 1e-14)
  T.error(function() return np.fft.irfft(np.ones(1)) end, "fft.irfft: invalid number of data points (0) specified")
  T.error(function() return np.fft.fft(np.zeros{0}) end, "fft.fft: invalid number of data points (0) specified")
  T.error(function() return torch.fft.fft(torch.tensor(3.0)) end,
          "fft.fft: expected an array of at least 1 dimension, got a 0-d one")
  T.error(function() return np.fft.fft(x, nil, 2) end, "fft.fft: dim 2 is out of range for a tensor of 1 dims")
  T.error(function() return np.fft.fft(x, nil, nil, "none") end,
          "fft.fft: norm must be 'backward', 'ortho' or 'forward', got 'none'")
  T.error(function() return np.fft.fft(x, 4, {n = 4}) end, "fft.fft: n given both as argument 2 and as a keyword")
  T.error(function() return torch.fft.fft(x, {dim = 1, axis = 1}) end, "fft.fft: give either dim= or axis=, not both")
  T.error(function() return np.fft.fft(x, {norm = "ortho", nrm = 1}) end, "fft.fft: unknown keyword 'nrm'")
  T.error(function() return torch.fft.rfft(torch.fft.fft(torch.ones(4))) end,
          "fft.rfft: expected a real input, got complex64")
  T.error(function() return np.fft.fftn(np.ones{2, 3}, nil, {1, 1}) end, "fft.fftn: dim 1 appears more than once")
  T.error(function() return np.fft.fft2(np.ones{2, 3}, {1, 2, 3}) end, "fft.fft2: s has 3 lengths for 2 dims")
  T.error(function() return np.fft.fftn(np.ones{2, 3}, {1, 2, 3}) end,
          "fft.fftn: got 3 lengths in s for a tensor of 2 dims")
  T.error(function() return np.fft.fftn(np.ones{2, 3}, 4) end, "fft.fftn: s must be a table of integers")
  T.error(function() return np.fft.fftn(np.ones{2, 3}, {s = {1.5}}) end, "fft.fftn: s must be a table of integers")
  T.error(function() return np.fft.fftn(np.ones{2, 3}, nil, {}) end, "fft.fftn: expected at least one dim to transform")
  T.error(function() return np.fft.fft2(np.ones{3}) end, "fft.fft2: got 2 lengths in s for a tensor of 1 dims")
  local w = torch.ones(4, {requires_grad = true})
  T.eq(torch.fft.fft(w).requires_grad, true)   -- differentiable (test_complex_grad.lua)
  T.eq(torch.no_grad(function() return torch.fft.fft(w).requires_grad end), false)
  T.error(function() return np.fft.fftfreq(0) end, "fft.fftfreq: n must be an integer >= 1, got 0")
  T.error(function() return np.fft.fftfreq(4, "x") end, "fft.fftfreq: d must be a number")
  T.error(function() return torch.fft.fftfreq(4, {dtype = "int64"}) end,
          "fft.fftfreq: dtype must be a floating-point dtype, got \"int64\"")
  T.error(function() return np.fft.fftfreq(4, 1, {dtype = "float32"}) end, "fft.fftfreq: unknown keyword 'dtype'")
  T.error(function() return np.fft.fftshift(x, 2) end, "fft.fftshift: dim 2 is out of range for a tensor of 1 dims")
  T.error(function() return torch.fft.fftshift(x, {axes = 1}) end, "fft.fftshift: unknown keyword 'axes'")
  T.error(function() return torch.fft.ifftshift({1, 2}) end, "fft.ifftshift: expected a tensor for input")
  T.still_usable()
end)

T.test("a tide without the module: the transforms say how to get it, the rest runs", function()
  local cmd = "TIDE_FFT_MODULE=/nonexistent/libtide_fft.so " .. T.interpreter() ..
    " -e 'print(pcall(np.fft.rfft, np.ones(4))); print(np.fft.fftfreq(2):tolist()[2])' 2>&1"
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  p:close()
  T.eq(out, "false\tfft.rfft: the FFT module libtide_fft.so is not available (install libfftw3-dev and rebuild)\n" ..
            "-0.5\n")
end)

T.done()
