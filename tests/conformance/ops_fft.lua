-- Conformance rows of np.fft and torch.fft against NumPy: the transforms (hfft and ihfft too)
-- across input dtypes (real, integer, complex), lengths (1, 2, primes 7 and 97, 8, 128, 1000, 1024), n / s
-- (padding and truncation), dims (positive, negative, the r2c dim first or last), norms and
-- memory layouts, both spellings, positionally and as keywords; the result dtypes (np:
-- complex128 / float64 as NumPy 1.24; torch: the input's precision); the errors; fftfreq,
-- rfftfreq, fftshift, ifftshift. The transforms run on the CPU only: their device column
-- expects the error (device_error).
local G, add = ...

-- A tide built without FFTW (meson -Dfft=disabled) has no transforms to compare: every one
-- is the error tests/lua/test_fft.lua checks.
if not pcall(torch.fft.fft, torch.ones(1)) then return end

local ON_CPU = "the FFT runs on the CPU only"
-- FFT errors grow with log n times the largest output; inputs lie in [-1, 1].
local TOL = {complex64 = {2e-4, 2e-3}, complex128 = {1e-10, 1e-9}, float32 = {2e-4, 2e-3}, float64 = {1e-10, 1e-9}}
local NORMS = {false, "backward", "ortho", "forward"}

local function M(p) return p.np and np or torch end

-- An input of this shape and dtype in [-1, 1] laid out as `layout`; complex dtypes from two
-- real tensors.
local function input(shape, dt, layout)
  if dt == "complex64" or dt == "complex128" then
    local rdt = dt == "complex64" and "float32" or "float64"
    local re = G.make(shape, rdt, {dom = "unit"})
    local x = torch.complex(re, G.make(shape, rdt, {dom = "unit"}))
    if layout == "T" and #shape >= 2 then return x:transpose(-2, -1):contiguous():transpose(-2, -1), "T" end
    return x, "contig"
  end
  return G.view(shape, dt, layout, {dom = "unit"})
end

-- The result dtype: NumPy's complex128 (float64 for the inverse real transforms) whatever the
-- input; PyTorch's input precision (integers: the default float32).
local function result_dtype(dt, np_style, real_out)
  local double = np_style or dt == "float64" or dt == "complex128"
  if real_out then return double and "float64" or "float32" end
  return double and "complex128" or "complex64"
end

-- f(x[, n][, dim][, norm]) positionally, or with the keyword table (np: axis=/axes=,
-- torch: dim=), as p says.
local function call1(f, a, p)
  if p.kw then
    local kw = {n = p.n, norm = p.norm or nil}
    kw[p.np and "axis" or "dim"] = p.dim
    return G.with_kw(f, kw, a)
  end
  return f(a, p.n, p.dim, p.norm or nil)
end
local function calln(f, a, p)
  if p.kw then
    local kw = {s = p.s, norm = p.norm or nil}
    kw[p.np and "axes" or "dim"] = p.axes
    return G.with_kw(f, kw, a)
  end
  return f(a, p.s, p.axes, p.norm or nil)
end

-- 1-D transforms: {shape, dim, n} cases in the dtypes given.
local ONE = {
  {{1}}, {{2}}, {{7}}, {{8}}, {{97}}, {{128}}, {{1000}}, {{1024}},
  {{3, 5}}, {{3, 5}, 1}, {{3, 5}, -2}, {{2, 3, 4}, 2, 6}, {{2, 3, 4}, 3, 2}, {{4, 6}, -1, 11},
  {{0, 4}}, {{4, 0}, 2, 3}, {{5}, 1, 1}, {{6, 1}, 1, 97},
}
local function one_dim_cases(dtypes, inverse_real)
  return function()
    local cs = {}
    for di, dt in ipairs(dtypes) do
      for i, c in ipairs(ONE) do
        local k = i + di
        local shape, dim, n = G.copy(c[1]), c[2], c[3]
        -- irfft: m inputs give 2 (m - 1) points by default; length-1 rows need an n.
        if inverse_real and not n and shape[dim and (dim > 0 and dim or #shape + 1 + dim) or #shape] == 1 then n = 1 end
        local layout = G.LAYOUTS[k % #G.LAYOUTS + 1]
        local a, used = input(shape, dt, layout)
        local p = {np = k % 2 == 0, kw = k % 3 == 0, n = n, dim = dim, norm = NORMS[k % #NORMS + 1]}
        cs[#cs + 1] = {a = a, p = p, layouts = {a = used}}
      end
    end
    return cs
  end
end

local REAL = {"float32", "float64", "int64"}
local ALL = {"float32", "float64", "int64", "complex64", "complex128"}
local PY1 = "(a, n=p.n, axis=ax(p.dim) if p.dim is not None else -1, norm=p.norm or None)"

for _, f in ipairs({
  {"fft", ALL}, {"ifft", ALL}, {"rfft", REAL}, {"irfft", {"float64", "complex64", "complex128"}, true},
  {"ihfft", REAL}, {"hfft", {"float32", "complex64", "complex128"}, true},
}) do
  local name, dtypes, real_out = f[1], f[2], f[3]
  add({name = "fft." .. name, out = "p.dtype", cast = "none", tol = TOL, device_error = ON_CPU,
       cases = function()
         local cs = one_dim_cases(dtypes, real_out)()
         for _, c in ipairs(cs) do c.p.dtype = result_dtype(c.a.dtype, c.p.np, real_out) end
         return cs
       end,
       ref = "np.fft." .. name .. PY1,
       call = function(a, _, _, p) return call1(M(p).fft[name], a, p) end})
end

-- n-D transforms: {shape, s, axes}.
local MANY = {
  {{4, 6}}, {{3, 5, 7}}, {{2, 3, 4, 5}}, {{1, 1}}, {{8, 1}}, {{3, 5, 7}, {4, 6}},
  {{3, 5, 7}, nil, {1, 3}}, {{3, 5, 7}, nil, {-1, 1}}, {{3, 5, 7}, {2, 9}, {3, 2}}, {{6, 7}, {7, 6}},
  {{0, 3, 4}, nil, {2, 3}}, {{97, 2}, {1, 3}, {1, -1}},
}
local function many_cases(dtypes, two, inverse_real)
  return function()
    local cs = {}
    for di, dt in ipairs(dtypes) do
      for i, c in ipairs(MANY) do
        local shape, s, axes = G.copy(c[1]), c[2], c[3]
        local count = s and #s or axes and #axes or (two and 2 or #shape)
        if not (two and count ~= 2) then
          local k = i + di
          -- irfft: length-1 last dims need an s (2 (m - 1) = 0 points otherwise).
          if inverse_real and not s then
            local last = axes and axes[#axes] or #shape
            if last < 0 then last = #shape + 1 + last end
            if shape[last] == 1 then shape[last] = 3 end
          end
          local layout = G.LAYOUTS[k % #G.LAYOUTS + 1]
          local a, used = input(shape, dt, layout)
          local p = {np = k % 2 == 1, kw = k % 3 == 1, s = s, axes = axes, norm = NORMS[k % #NORMS + 1]}
          cs[#cs + 1] = {a = a, p = p, layouts = {a = used}}
        end
      end
    end
    return cs
  end
end

local PYN = "(a, s=p.s, axes=ax(p.axes), norm=p.norm or None)"
local PY2 = "(a, s=p.s, axes=ax(p.axes) if p.axes is not None else (-2, -1), norm=p.norm or None)"
for _, f in ipairs({
  {"fft2", ALL, true}, {"ifft2", ALL, true}, {"rfft2", REAL, true}, {"irfft2", {"float64", "complex128"}, true, true},
  {"fftn", ALL}, {"ifftn", ALL}, {"rfftn", REAL}, {"irfftn", {"float32", "complex64", "complex128"}, false, true},
}) do
  local name, dtypes, two, real_out = f[1], f[2], f[3] == true, f[4]
  add({name = "fft." .. name, out = "p.dtype", cast = "none", tol = TOL, device_error = ON_CPU,
       cases = function()
         local cs = many_cases(dtypes, two, real_out)()
         for _, c in ipairs(cs) do c.p.dtype = result_dtype(c.a.dtype, c.p.np, real_out) end
         return cs
       end,
       ref = "np.fft." .. name .. (two and PY2 or PYN),
       call = function(a, _, _, p) return calln(M(p).fft[name], a, p) end})
end

-- PyTorch's n-dimensional Hermitian transforms (NumPy has only hfft and ihfft): hfftn is
-- irfftn of the conjugate, ihfftn the conjugate of rfftn, both with the norm's direction
-- swapped (check.py's hfftn_ref / ihfftn_ref; test_fft.lua compares with PyTorch itself).
for _, f in ipairs({
  {"hfft2", {"float64", "complex64", "complex128"}, true, true}, {"ihfft2", REAL, true},
  {"hfftn", {"float32", "complex64", "complex128"}, false, true}, {"ihfftn", REAL, false},
}) do
  local name, dtypes, two, real_out = f[1], f[2], f[3], f[4]
  local ref = name:sub(1, 1) == "i" and "ihfftn_ref" or "hfftn_ref"
  add({name = "fft." .. name, out = "p.dtype", cast = "none", tol = TOL, device_error = ON_CPU,
       cases = function()
         local cs = many_cases(dtypes, two, real_out)()
         for _, c in ipairs(cs) do
           c.p.np = false
           c.p.dtype = result_dtype(c.a.dtype, false, real_out)
         end
         return cs
       end,
       ref = ref .. "(a, p.s, " .. (two and "ax(p.axes) if p.axes is not None else (-2, -1)" or "ax(p.axes)") .. ", p.norm)",
       call = function(a, _, _, p) return calln(torch.fft[name], a, p) end})
end

-- A NaN spreads to every output of its transform (and only of its own row), as in NumPy.
for _, name in ipairs({"fft", "ifft", "rfft", "fftn"}) do
  add({name = "fft." .. name .. " nan", out = "p.dtype", cast = "none", tol = TOL, device_error = ON_CPU,
       cases = function()
         local cs = {}
         for i, shape in ipairs({{5}, {8}, {3, 16}, {2, 7}}) do
           local dt = i % 2 == 1 and "float64" or "float32"
           local a = G.make(shape, dt, {dom = "unit"})
           a:view(-1)[1] = 0 / 0
           cs[#cs + 1] = {a = a, p = {np = i % 2 == 0, dtype = result_dtype(dt, i % 2 == 0)}}
         end
         return cs
       end,
       ref = "np.fft." .. name .. "(a)", call = function(a, _, _, p) return M(p).fft[name](a) end})
end

-- NumPy's rfft of a complex input keeps the real part (with its ComplexWarning).
add({name = "fft.rfft np complex", out = "complex128", cast = "none", tol = TOL, device_error = ON_CPU,
     cases = function() return {{a = input({2, 9}, "complex128")}, {a = input({5}, "complex64")}} end,
     ref = "np.fft.rfft(a.real)", call = function(a) return np.fft.rfft(a) end})

-- The gradient column of the transforms: real inputs (a complex input's parts are a and b)
-- and real outputs (view_as_real of a complex result), so that gradcheck's finite
-- differences check the complex autograd in between: torch.complex, the transform (its
-- adjoint), view_as_real. {name, complex input, real output, n-dimensional}.
for _, f in ipairs({
  {"fft", true}, {"ifft", true}, {"rfft", false}, {"irfft", true, true}, {"hfft", true, true}, {"ihfft", false},
  {"fft2", true, false, true}, {"ifftn", true, false, true}, {"rfftn", false, false, true},
  {"irfft2", true, true, true}, {"irfftn", true, true, true}, {"hfftn", true, true, true}, {"ihfft2", false, false, true},
}) do
  local name, complex_in, real_out, nd = f[1], f[2], f[3], f[4]
  local input_expr = complex_in and "a + 1j * b" or "a"
  local ref
  if name:find("^i?hfftn?2?$") and nd then
    local two = name:find("2") ~= nil
    ref = (name:sub(1, 1) == "i" and "ihfftn_ref" or "hfftn_ref") .. "(" .. input_expr .. ", p.s, " ..
          (two and "ax(p.axes) if p.axes is not None else (-2, -1)" or "ax(p.axes)") .. ", p.norm)"
  else
    ref = "np.fft." .. name .. (nd and (name:find("2") and PY2 or PYN) or PY1):gsub("^%(a,", "(" .. input_expr .. ",")
  end
  if not real_out then ref = "vr(" .. ref .. ")" end
  add({name = "fft." .. name .. " grad", out = "float64", cast = "none", tol = TOL, grad = complex_in and {"a", "b"} or {"a"}, ref = ref,
       no_device = "complex tensors stay on the cpu",
       cases = function()
         local cs = {}
         local shapes = nd and {{{3, 4}}, {{2, 3, 4}, {4, 5}}, {{3, 5}, {2, 6}, {1, 2}}} or
                        {{{7}}, {{3, 4}, 1, 5}, {{2, 6}, nil, 9}, {{5}, 1, 3}}
         for i, c in ipairs(shapes) do
           local shape = c[1]
           local p = {np = false, norm = NORMS[i % #NORMS + 1]}
           if nd then p.s, p.axes = c[2], c[3] else p.dim, p.n = c[2], c[3] end
           cs[#cs + 1] = {a = G.make(shape, "float64", {dom = "unit"}), b = complex_in and G.make(shape, "float64", {dom = "unit"}) or nil,
                          p = p}
         end
         return cs
       end,
       call = function(a, b, _, p)
         local x = complex_in and torch.complex(a, b) or a
         local y = (nd and calln or call1)(torch.fft[name], x, p)
         return real_out and y or torch.view_as_real(y)
       end})
end

-- The errors, both spellings.
local function err_cases(list)
  return function()
    local cs = {}
    for i, c in ipairs(list) do cs[#cs + 1] = {a = input(c[1], c[2] or "float64"), p = {np = i % 2 == 1, n = c[3]}} end
    return cs
  end
end
add({name = "fft.fft n=0", expect_error = "fft.fft: invalid number of data points (0) specified",
     cases = err_cases({{{4}, nil, 0}, {{4}, nil, 0}, {{0}}, {{3, 0}}}), ref = "None",
     call = function(a, _, _, p) return M(p).fft.fft(a, p.n) end})
add({name = "fft.irfft m=1", expect_error = "fft.irfft: invalid number of data points (0) specified",
     cases = err_cases({{{1}, "complex128"}, {{3, 1}, "float32"}}), ref = "None",
     call = function(a, _, _, p) return M(p).fft.irfft(a) end})
add({name = "fft.fft 0-d", expect_error = "fft.fft: expected an array of at least 1 dimension, got a 0-d one",
     cases = err_cases({{{}}, {{}, "complex64"}}), ref = "None", call = function(a, _, _, p) return M(p).fft.fft(a) end})
add({name = "fft.rfft torch complex", expect_error = "fft.rfft: expected a real input, got complex64",
     cases = err_cases({{{4}, "complex64"}}), ref = "None", call = function(a) return torch.fft.rfft(a) end})
add({name = "fft.fftn repeated dims", expect_error = "fft.fftn: dim -2 appears more than once",
     cases = err_cases({{{2, 3}}, {{2, 3}}}), ref = "None",
     call = function(a, _, _, p) return M(p).fft.fftn(a, nil, {1, -2}) end})
add({name = "fft.fft2 s and dims", expect_error = "fft.fft2: s has 3 lengths for 2 dims",
     cases = err_cases({{{2, 3}}, {{2, 3}}}), ref = "None",
     call = function(a, _, _, p) return M(p).fft.fft2(a, {1, 2, 3}) end})
add({name = "fft.fftshift 0-d", expect_error = "fft.fftshift: expected an array of at least 1 dimension, got a 0-d one",
     cases = err_cases({{{}}, {{}, "int64"}}), ref = "None", call = function(a, _, _, p) return M(p).fft.fftshift(a) end})
add({name = "fft.fft norm", expect_error = "fft.fft: norm must be 'backward', 'ortho' or 'forward', got 'none'",
     cases = err_cases({{{3}}, {{3}}}), ref = "None", call = function(a, _, _, p) return M(p).fft.fft(a, nil, nil, "none") end})

-- Frequencies: np float64; torch the default dtype, or dtype=.
local FREQ = {{1}, {2}, {5, 0.1}, {8}, {97, 2.5}, {1000, 1e-3}, {7, -0.5}}
for _, name in ipairs({"fftfreq", "rfftfreq"}) do
  add({name = "fft." .. name, out = "p.dtype", cast = "none",
       cases = function()
         local cs = {}
         for i, c in ipairs(FREQ) do
           local p = {np = i % 2 == 1, n = c[1], d = c[2]}
           p.dtype = p.np and "float64" or (i % 4 == 0 and "float64" or "float32")
           cs[#cs + 1] = {p = p}
         end
         return cs
       end,
       ref = "np.fft." .. name .. "(p.n, p.d if p.d is not None else 1.0)",
       call = function(_, _, _, p)
         if p.np then return np.fft[name](p.n, p.d) end
         return torch.fft[name](p.n, {d = p.d, dtype = p.dtype ~= "float32" and p.dtype or nil})
       end})
end

-- Shifts: every dtype, complex too, on the given dims or all.
local SHIFT = {{{5}}, {{8}}, {{3, 4}}, {{3, 4}, 1}, {{3, 4, 5}, {-1, 1}}, {{1}}, {{0, 3}}, {{2, 7}, {2}}}
for _, name in ipairs({"fftshift", "ifftshift"}) do
  add({name = "fft." .. name, out = "same", cast = "none",
       cases = function()
         local cs = {}
         for di, dt in ipairs({"float32", "float64", "int64", "bool", "float16", "complex128"}) do
           for i, c in ipairs(SHIFT) do
             local k = i + di
             local a, used = input(c[1], dt, G.LAYOUTS[k % #G.LAYOUTS + 1])
             cs[#cs + 1] = {a = a, p = {np = k % 2 == 0, kw = k % 3 == 0, axes = c[2]}, layouts = {a = used}}
           end
         end
         return cs
       end,
       ref = "np.fft." .. name .. "(a, axes=ax(p.axes))",
       call = function(a, _, _, p)
         local f = M(p).fft[name]
         if p.kw then return f(a, {[p.np and "axes" or "dim"] = p.axes}) end
         return f(a, p.axes)
       end})
end
