-- Conformance rows of the complex dtypes (complex64, complex128) against NumPy: the
-- pointwise ops, arithmetic with real tensors and numbers, reductions, products, the parts,
-- conversions, isclose and linalg.eig. Complex tensors stay on the CPU, so the device column
-- skips these rows (no_device). Complex numbers of a case travel in p ({re=, im=}).
local G, add = ...

local CX = {"complex64", "complex128"}
local PART = {complex64 = "float32", complex128 = "float64"}
local NO_DEVICE = "complex tensors stay on the cpu"

-- A complex tensor of `shape`: real and imaginary parts from gen.lua's values (opts: dom,
-- edges); every third case of a row is laid out transposed or stepped.
local function cmake(shape, dt, opts, layout)
  local re = G.make(shape, PART[dt], opts)
  local im = G.make(shape, PART[dt], opts)
  local z = torch.complex(re, im)
  if layout == "T" and #shape >= 2 then
    z = z:transpose(-2, -1):contiguous():transpose(-2, -1)
  elseif layout == "step" and #shape >= 1 and G.numel(shape) > 0 then
    local s = G.copy(shape)
    s[#s] = 2 * s[#s]
    local big = torch.complex(G.make(s, PART[dt], opts), G.make(s, PART[dt], opts))
    local idx = {}
    for i = 1, #s - 1 do idx[i] = ":" end
    idx[#s] = {1, s[#s], 2}
    z = big[idx]
  end
  return z
end

local SHAPES = {{}, {0}, {5}, {3, 4}, {2, 0, 3}, {2, 3, 4}, {1, 7}}
local LAYOUTS = {"contig", "T", "step"}

-- One case per dtype and shape (with NaN/inf/0 edge values when edges is set).
local function unary_cases(opts)
  return function()
    local cs = {}
    for _, dt in ipairs(CX) do
      for k, shape in ipairs(SHAPES) do
        cs[#cs + 1] = {a = cmake(shape, dt, opts, LAYOUTS[(k - 1) % 3 + 1])}
      end
    end
    return cs
  end
end

local EDGES = {dom = "real", edges = 0.25}
local function rowu(name, call, ref, out, opts)
  add({name = name, ref = ref, out = out or "same", cast = "none", no_device = NO_DEVICE, call = call,
       cases = unary_cases(opts or EDGES)})
end

-- pointwise unary ops, both spellings
for _, o in ipairs({{"exp", "np.exp(a)"}, {"log", "np.log(a)"}, {"sqrt", "np.sqrt(a)"}, {"sin", "np.sin(a)"},
                    {"cos", "np.cos(a)"}, {"neg", "np.negative(a)"}, {"square", "np.square(a)"},
                    {"reciprocal", "np.reciprocal(a)"}}) do
  rowu("complex " .. o[1], function(a) return torch[o[1]](a) end, o[2])
end
-- the functions added with pow: torch spelling (where PyTorch has no complex kernel, tide
-- still computes NumPy's value) and NumPy spelling
for _, o in ipairs({{"tan", "tan"}, {"sinh", "sinh"}, {"cosh", "cosh"}, {"tanh", "tanh"}, {"asin", "arcsin"},
                    {"acos", "arccos"}, {"atan", "arctan"}, {"log2", "log2"}, {"log10", "log10"}, {"exp2", "exp2"},
                    {"expm1", "expm1"}, {"log1p", "log1p"}}) do
  rowu("complex " .. o[1], function(a) return torch[o[1]](a) end, "np." .. o[2] .. "(a)")
  rowu("complex np." .. o[2], function(a) return np[o[2]](a) end, "np." .. o[2] .. "(a)")
  rowu("complex x:" .. o[1] .. "_", function(a) return a:clone()[o[1] .. "_"](a:clone()) end, "np." .. o[2] .. "(a)")
end
rowu("complex np.sign", function(a) return np.sign(a) end, "np.sign(a)")
-- torch.sgn against PyTorch: x/|x|. Without the huge and subnormal edge values, where
-- PyTorch's vectorized |x| (sqrt(re^2 + im^2), no hypot) overflows or underflows to 0.
local SGN_EDGES = {dom = "real", edges = 0.25, edge_list = {0 / 0, math.huge, -math.huge, 0.0, -0.0, 1.0, -2.5, 1e-3}}
rowu("complex sgn", function(a) return torch.sgn(a) end, "N(torch.sgn(T(a)))", nil, SGN_EDGES)
rowu("complex x:sgn", function(a) return a:sgn() end, "N(torch.sgn(T(a)))", nil, SGN_EDGES)
rowu("complex np.exp", function(a) return np.exp(a) end, "np.exp(a)")
rowu("complex np.sqrt", function(a) return np.sqrt(a) end, "np.sqrt(a)")
rowu("complex op unm", function(a) return -a end, "-a")
rowu("complex abs", function(a) return torch.abs(a) end, "np.abs(a)", "numpy")
rowu("complex np.abs", function(a) return np.abs(a) end, "np.abs(a)", "numpy")
rowu("complex angle", function(a) return torch.angle(a) end, "np.angle(a)", "numpy")
rowu("complex np.angle", function(a) return np.angle(a) end, "np.angle(a)", "numpy")
rowu("complex conj", function(a) return torch.conj(a) end, "np.conj(a)")
rowu("complex np.conjugate", function(a) return np.conjugate(a) end, "np.conjugate(a)")
rowu("complex x:conj", function(a) return a:conj() end, "np.conj(a)")
rowu("complex isnan", function(a) return torch.isnan(a) end, "np.isnan(a)", "bool")
rowu("complex isinf", function(a) return torch.isinf(a) end, "np.isinf(a)", "bool")
rowu("complex isfinite", function(a) return np.isfinite(a) end, "np.isfinite(a)", "bool")
rowu("complex real", function(a) return a.real end, "np.real(a)", "numpy")
rowu("complex imag", function(a) return np.imag(a) end, "np.imag(a)", "numpy")
rowu("complex view_as_real", function(a) return torch.view_as_real(a) end,
  "np.stack([np.real(a), np.imag(a)], -1)", "numpy")
-- complex -> every real dtype NumPy has: the real part (bool: nonzero)
for _, to in ipairs({"bool", "uint8", "int16", "int32", "int64", "float16", "float32", "float64", "complex64",
                     "complex128"}) do
  rowu("complex to " .. to, function(a) return a:to(to) end, "a.astype(npdt('" .. to .. "'))", to,
    {dom = "castable"})
end
-- every real dtype -> complex
add({name = "complex from real", ref = "a.astype(npdt(p.dtype))", out = "p.dtype", cast = "none",
     no_device = NO_DEVICE, call = function(a, b, c, p) return a:to(p.dtype) end,
     cases = function()
       local cs = {}
       for _, from in ipairs({"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64",
                              "float16", "float32", "float64"}) do
         for _, to in ipairs(CX) do
           cs[#cs + 1] = {a = G.make({3, 4}, from, {edges = 0.2}), p = {dtype = to}}
         end
       end
       return cs
     end})

-- binary arithmetic: complex with complex (broadcast), with real tensors of every dtype
-- (promotion as NumPy's), with Lua numbers and complex numbers.
local function binary_cases()
  local cs = {}
  for _, dt in ipairs(CX) do
    for k = 1, 6 do
      local sa, sb = G.broadcast_pair({max_rank = 3, zero = 0.1})
      cs[#cs + 1] = {a = cmake(sa, dt, EDGES, LAYOUTS[k % 3 + 1]), b = cmake(sb, dt, EDGES)}
    end
    cs[#cs + 1] = {a = cmake({}, dt, EDGES), b = cmake({4}, dt, EDGES)}
  end
  -- mixed precision and real operands
  cs[#cs + 1] = {a = cmake({3}, "complex64"), b = cmake({3}, "complex128")}
  for _, rdt in ipairs({"bool", "int8", "int32", "int64", "float16", "float32", "float64"}) do
    cs[#cs + 1] = {a = cmake({2, 3}, "complex64"), b = G.make({3}, rdt, {dom = "nonzero"})}
    cs[#cs + 1] = {a = G.make({2, 3}, rdt, {dom = "nonzero"}), b = cmake({3}, "complex128")}
  end
  return cs
end
for _, o in ipairs({{"add", "+", "add"}, {"sub", "-", "subtract"}, {"mul", "*", "multiply"}, {"div", "/", "divide"},
                    {"pow", "**", "power"}}) do
  local op = o[2]
  local ref = op == "**" and "np.power(a, b)" or "a " .. op .. " b"
  add({name = "complex np." .. o[3], ref = ref, out = "numpy", cast = "none", no_device = NO_DEVICE,
       call = function(a, b) return np[o[3]](a, b) end, cases = binary_cases})
  -- PyTorch's promotion differs from NumPy's only for complex64 with int32/int64: left out
  add({name = "complex torch." .. o[1], ref = ref, out = "numpy", cast = "none", no_device = NO_DEVICE,
       call = function(a, b) return torch[o[1]](a, b) end,
       cases = function()
         local cs = {}
         for _, c in ipairs(binary_cases()) do
           if not (c.a.dtype:find("int") or c.b.dtype:find("int")) then cs[#cs + 1] = c end
         end
         return cs
       end})
  -- with a complex number or a Lua float
  add({name = "complex " .. o[1] .. " scalar", ref = op == "**" and "np.power(a, complex(p.re, p.im) if p.im is not None else p.re)"
       or "a " .. op .. " (complex(p.re, p.im) if p.im is not None else p.re)",
       out = "same", cast = "none", no_device = NO_DEVICE,
       call = function(a, b, c, p)
         local s = p.im and np.complex(p.re, p.im) or p.re
         return torch[o[1]](a, s)
       end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(CX) do
           cs[#cs + 1] = {a = cmake({2, 3}, dt, EDGES), p = {re = 1.5, im = -2.0}}
           cs[#cs + 1] = {a = cmake({4}, dt, EDGES), p = {re = -0.25}}
           cs[#cs + 1] = {a = cmake({}, dt), p = {re = 0.0, im = 0.0}}
         end
         return cs
       end})
end
-- pow: np.power's integer powers by repeated products (|n| < 100), a^0 = 1, 0^b, real and
-- complex exponents through cpow; the ^ operator both ways. ^ is np.power: NumPy's **
-- operator alone calls reciprocal, sqrt and square for the exponents -1, 0.5 and 2, which
-- differ from np.power at infinite and NaN elements (test_complex.lua).
add({name = "complex pow exponents", ref = "np.power(a, complex(p.re, p.im) if p.im is not None else p.re)", out = "same",
     cast = "none", no_device = NO_DEVICE,
     call = function(a, b, c, p) return a ^ (p.im and np.complex(p.re, p.im) or p.re) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(CX) do
         for _, e in ipairs({{2}, {3}, {-1}, {-3}, {7}, {-12}, {99}, {0}, {0.5}, {-0.5}, {2.5}, {100}, {1, 0},
                             {0, 1}, {-2, 0.5}, {0, 0}}) do
           cs[#cs + 1] = {a = cmake({3, 4}, dt, EDGES), p = {re = e[1], im = e[2]}}
         end
         cs[#cs + 1] = {a = cmake({}, dt, EDGES), p = {re = 2}}
         cs[#cs + 1] = {a = cmake({0, 2}, dt), p = {re = 2}}
       end
       return cs
     end})
add({name = "complex number ^ tensor", ref = "np.power(complex(p.re, p.im), a)", out = "same", cast = "none",
     no_device = NO_DEVICE, call = function(a, b, c, p) return np.complex(p.re, p.im) ^ a end,
     cases = function()
       return {{a = cmake({3}, "complex64"), p = {re = 2, im = 1}}, {a = cmake({2, 2}, "complex128", EDGES), p = {re = -1, im = 0.5}},
               {a = cmake({4}, "complex128", EDGES), p = {re = 0, im = 0}}}
     end})
add({name = "complex x:pow_", ref = "np.power(a, b)", out = "same", cast = "none", no_device = NO_DEVICE,
     call = function(a, b) return a:clone():pow_(b) end,
     cases = function() return {{a = cmake({2, 3}, "complex128", EDGES), b = cmake({3}, "complex128", EDGES)},
                                {a = cmake({4}, "complex64"), b = cmake({4}, "complex64")}} end})

-- number op tensor through the Lua operators (the complex number's metamethods hand over)
add({name = "complex scalar - tensor", ref = "complex(p.re, p.im) - a", out = "same", cast = "none",
     no_device = NO_DEVICE, call = function(a, b, c, p) return np.complex(p.re, p.im) - a end,
     cases = function()
       return {{a = cmake({3}, "complex64"), p = {re = 2, im = 1}}, {a = cmake({2, 2}, "complex128"), p = {re = -1, im = 0.5}}}
     end})
add({name = "complex scalar / tensor", ref = "complex(p.re, p.im) / a", out = "same", cast = "none",
     no_device = NO_DEVICE, call = function(a, b, c, p) return np.complex(p.re, p.im) / a end,
     cases = function()
       return {{a = cmake({3}, "complex64"), p = {re = 2, im = 1}}, {a = cmake({2, 2}, "complex128", EDGES), p = {re = -1, im = 0.5}}}
     end})
-- a float tensor with a complex number: PyTorch's dtype (float32 -> complex64, float64 -> complex128)
add({name = "complex real tensor * complex number", ref = "a * complex(p.re, p.im)",
     out = "py:{'float32': 'complex64', 'float64': 'complex128'}[p.dt]", cast = "none", no_device = NO_DEVICE,
     call = function(a, b, c, p) return a * np.complex(p.re, p.im) end,
     cases = function()
       return {{a = G.make({4}, "float32"), p = {re = 0.5, im = 2, dt = "float32"}},
               {a = G.make({2, 3}, "float64"), p = {re = -1, im = 3, dt = "float64"}}}
     end})
for _, o in ipairs({{"eq", "=="}, {"ne", "!="}}) do
  add({name = "complex " .. o[1], ref = "a " .. o[2] .. " b", out = "bool", cast = "none", no_device = NO_DEVICE,
       call = function(a, b) return torch[o[1]](a, b) end,
       cases = function()
         local cs = {}
         for _, dt in ipairs(CX) do
           local x = cmake({3, 4}, dt, EDGES)
           local y = x:clone()
           y[{2, 3}] = np.complex(7, 7)
           cs[#cs + 1] = {a = x, b = y}
           cs[#cs + 1] = {a = x, b = cmake({4}, dt)}
         end
         return cs
       end})
end
-- in place: a real tensor cannot take a complex result (PyTorch's error)
add({name = "complex result into a real tensor in place", expect_error = "can't be cast", ref = "None", out = "same", no_device = NO_DEVICE,
     call = function(a, b) return a:add_(b) end,
     cases = function() return {{a = G.make({2}, "float32"), b = cmake({2}, "complex64")}} end})
add({name = "complex in place", ref = "a * b", out = "same", cast = "none", no_device = NO_DEVICE,
     call = function(a, b) return a:mul_(b) end,
     cases = function() return {{a = cmake({2, 3}, "complex128"), b = cmake({3}, "complex128")}} end})
add({name = "complex out=", ref = "a + b", out = "complex128", cast = "none", no_device = NO_DEVICE,
     call = function(a, b)
       local o = torch.zeros(a.shape, {dtype = "complex128"})
       torch.add(a, b, {out = o})
       return o
     end,
     cases = function() return {{a = cmake({2, 3}, "complex64"), b = cmake({2, 3}, "complex64")}} end})

-- reductions
local function red_cases()
  local cs = {}
  for _, dt in ipairs(CX) do
    for _, shape in ipairs({{}, {0}, {6}, {3, 4}, {2, 0}, {2, 3, 4}}) do
      cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"})}
      if #shape >= 2 then cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}), p = {dim = 2, keepdim = true}} end
      if #shape >= 1 then cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}), p = {dim = -1}} end
    end
  end
  return cs
end
for _, o in ipairs({"sum", "mean", "prod"}) do
  add({name = "complex " .. o, ref = "np." .. o .. "(a, axis=ax(p.dim), keepdims=bool(p.keepdim))", out = "same",
       cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}},
       call = function(a, b, c, p)
         if p.dim then return torch[o](a, p.dim, p.keepdim or false) end
         return torch[o](a)
       end,
       cases = red_cases})
  add({name = "complex np." .. o, ref = "np." .. o .. "(a, axis=ax(p.dim), keepdims=bool(p.keepdim))",
       out = "same", cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}},
       call = function(a, b, c, p) return np[o](a, {axis = p.dim, keepdims = p.keepdim}) end,
       cases = red_cases})
end

-- running sums and products: torch with a dim (and dtype=), NumPy with an axis or flattened
local function scan_cases()
  local cs = {}
  for _, dt in ipairs(CX) do
    for k, shape in ipairs({{}, {0}, {6}, {3, 4}, {2, 0}, {2, 3, 4}}) do
      local d = #shape == 0 and 1 or (k % #shape) + 1
      cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}, LAYOUTS[k % 3 + 1]), p = {dim = d}}
      if #shape >= 1 then cs[#cs + 1] = {a = cmake(shape, dt, EDGES), p = {dim = -1}} end
    end
  end
  return cs
end
for _, o in ipairs({"cumsum", "cumprod"}) do
  add({name = "complex " .. o, ref = "np." .. o .. "(a, axis=ax(p.dim) if a.ndim else None).reshape(a.shape)",
       out = "same", cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}},
       call = function(a, b, c, p) return torch[o](a, p.dim) end, cases = scan_cases})
  add({name = "complex np." .. o, ref = "np." .. o .. "(a, axis=ax(p.dim) if p.dim else None)", out = "same",
       cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}},
       call = function(a, b, c, p)
         if p.dim then return np[o](a, {axis = p.dim}) end
         return np[o](a)
       end,
       cases = function()
         local cs = {}
         for _, c in ipairs(scan_cases()) do
           if c.a:dim() > 0 then cs[#cs + 1] = c end
         end
         for _, dt in ipairs(CX) do cs[#cs + 1] = {a = cmake({3, 4}, dt, {dom = "small"}), p = {}} end
         return cs
       end})
  add({name = "complex " .. o .. " dtype=", ref = "np." .. o .. "(a, axis=0, dtype=npdt(p.dtype))", out = "p.dtype",
       cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}},
       call = function(a, b, c, p) return torch[o](a, 1, {dtype = p.dtype}) end,
       cases = function()
         return {{a = G.make({5, 2}, "float32", {dom = "small"}), p = {dtype = "complex64"}},
                 {a = cmake({4}, "complex64", {dom = "small"}), p = {dtype = "complex128"}},
                 {a = G.make({3}, "int32", {dom = "small"}), p = {dtype = "complex128"}}}
       end})
end
add({name = "complex cumsum real dtype=", expect_error = "cumsum: cannot accumulate complex64 into the real dtype float32",
     ref = "None", out = "same", no_device = NO_DEVICE, call = function(a) return torch.cumsum(a, 1, {dtype = "float32"}) end,
     cases = function() return {{a = cmake({3}, "complex64")}} end})

-- var / std: real results; torch's correction (1 by default, unbiased=), NumPy's ddof (0)
local function var_cases()
  local cs = {}
  for _, dt in ipairs(CX) do
    for _, shape in ipairs({{}, {0}, {6}, {3, 4}, {2, 0}, {2, 3, 4}}) do
      cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}), p = {c = 1, cdt = dt}}
      if #shape >= 2 then
        cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}, "T"), p = {dim = 2, keepdim = true, c = 0, cdt = dt}}
        cs[#cs + 1] = {a = cmake(shape, dt, EDGES), p = {dim = 1, c = 2, cdt = dt}}
      end
      if #shape >= 1 then
        cs[#cs + 1] = {a = cmake(shape, dt, {dom = "small"}, "step"), p = {dim = -1, c = 0.5, cdt = dt}}
      end
    end
  end
  return cs
end
-- (p.cdt: the input's dtype; the result has its real dtype)
local PART_OUT = "py:{'complex64': 'float32', 'complex128': 'float64'}[p.cdt]"
for _, o in ipairs({"var", "std"}) do
  add({name = "complex " .. o, ref = "np." .. o .. "(a, axis=ax(p.dim), ddof=p.c, keepdims=bool(p.keepdim))",
       out = PART_OUT, cast = "none", no_device = NO_DEVICE, tol = {float32 = {1e-4, 1e-6}},
       call = function(a, b, c, p)
         return torch[o](a, {dim = p.dim, correction = p.c, keepdim = p.keepdim or false})
       end, cases = var_cases})
  add({name = "complex np." .. o, ref = "np." .. o .. "(a, axis=ax(p.dim), ddof=p.c, keepdims=bool(p.keepdim))",
       out = PART_OUT, cast = "none", no_device = NO_DEVICE, tol = {float32 = {1e-4, 1e-6}},
       call = function(a, b, c, p) return np[o](a, {axis = p.dim, ddof = p.c, keepdims = p.keepdim}) end,
       cases = var_cases})
  -- the defaults: correction 1 in torch's spelling (unbiased positional), ddof 0 in NumPy's
  add({name = "complex " .. o .. " defaults", ref = "(np." .. o .. "(a, ddof=1), np." .. o .. "(a, axis=0, ddof=0), np." ..
       o .. "(a))", out = "py:[{'complex64': 'float32', 'complex128': 'float64'}[p.cdt]] * 3", cast = "none", no_device = NO_DEVICE,
       tol = {float32 = {1e-4, 1e-6}},
       call = function(a) return torch[o](a), torch[o](a, 1, false), np[o](a) end,
       cases = function()
         return {{a = cmake({4, 3}, "complex64", {dom = "small"}), p = {cdt = "complex64"}},
                 {a = cmake({5}, "complex128", {dom = "small"}), p = {cdt = "complex128"}}}
       end})
end

-- np.vander / torch.vander of complex x (powers through complex pow)
add({name = "complex np.vander", ref = "np.vander(a, p.n, increasing=bool(p.inc))", out = "complex128", cast = "none",
     no_device = NO_DEVICE, tol = {complex128 = {1e-12, 1e-14}},
     call = function(a, b, c, p) return np.vander(a, p.n, p.inc or false) end,
     cases = function()
       return {{a = cmake({4}, "complex128", {dom = "small"}), p = {n = 5}},
               {a = cmake({3}, "complex64", {dom = "small"}), p = {inc = true}},
               {a = cmake({0}, "complex128"), p = {n = 2}}}
     end})
add({name = "complex torch.vander", ref = "N(torch.vander(T(a), p.n, increasing=bool(p.inc)))", out = "same", cast = "none",
     no_device = NO_DEVICE, tol = {complex64 = {1e-5, 1e-6}, complex128 = {1e-12, 1e-14}},
     call = function(a, b, c, p) return torch.vander(a, p.n, p.inc or false) end,
     cases = function()
       return {{a = cmake({4}, "complex128", {dom = "small"}), p = {n = 4}},
               {a = cmake({3}, "complex64", {dom = "small"}), p = {n = 3, inc = true}}}
     end})

-- products through cgemm / zgemm
add({name = "complex matmul", ref = "np.matmul(a, b)", out = "same", cast = "none", no_device = NO_DEVICE,
     tol = {complex64 = {1e-4, 1e-5}}, call = function(a, b) return torch.matmul(a, b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(CX) do
         for _, sh in ipairs({{{3, 4}, {4, 5}}, {{4}, {4, 2}}, {{2, 3}, {3}}, {{5}, {5}}, {{2, 3, 4}, {4, 2}},
                              {{2, 1, 3, 4}, {3, 4, 2}}, {{3, 0}, {0, 2}}, {{0, 3}, {3, 2}}}) do
           cs[#cs + 1] = {a = cmake(sh[1], dt, {dom = "small"}, "T"), b = cmake(sh[2], dt, {dom = "small"})}
         end
       end
       return cs
     end})
add({name = "complex np.dot", ref = "np.dot(a, b)", out = "numpy", cast = "none", no_device = NO_DEVICE,
     tol = {complex64 = {1e-4, 1e-5}}, call = function(a, b) return np.dot(a, b) end,
     cases = function()
       return {{a = cmake({6}, "complex64"), b = cmake({6}, "complex64")},
               {a = cmake({2, 3}, "complex128"), b = cmake({3, 2}, "complex128")},
               {a = cmake({4}, "complex128"), b = G.make({4}, "float64")}}
     end})
add({name = "complex vdot", ref = "np.vdot(a, b)", out = "numpy", cast = "none", no_device = NO_DEVICE,
     tol = {complex64 = {1e-4, 1e-5}}, call = function(a, b) return torch.vdot(a, b) end,
     cases = function()
       return {{a = cmake({6}, "complex64"), b = cmake({6}, "complex64")},
               {a = cmake({0}, "complex128"), b = cmake({0}, "complex128")},
               {a = cmake({5}, "complex128", EDGES), b = cmake({5}, "complex128")}}
     end})
add({name = "complex np.vdot", ref = "np.vdot(a, b)", out = "numpy", cast = "none", no_device = NO_DEVICE,
     call = function(a, b) return np.vdot(a, b) end,
     cases = function() return {{a = cmake({2, 3}, "complex128"), b = cmake({3, 2}, "complex128")}} end})

-- the constructors and views
add({name = "complex torch.complex", ref = "a + 1j * b.astype(a.dtype)", out = "py:{'float32': 'complex64', 'float64': 'complex128'}[p.dt]",
     cast = "none", no_device = NO_DEVICE, call = function(a, b) return torch.complex(a, b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         for _, sh in ipairs({{{}, {}}, {{3}, {3}}, {{2, 1}, {4}}, {{0, 2}, {2}}}) do
           cs[#cs + 1] = {a = G.make(sh[1], dt, {edges = 0.2}), b = G.make(sh[2], dt, {edges = 0.2}), p = {dt = dt}}
         end
       end
       return cs
     end})
add({name = "complex polar", ref = "a * np.exp(1j * b)", out = "py:{'float32': 'complex64', 'float64': 'complex128'}[p.dt]",
     cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-5, 1e-6}, complex128 = {1e-12, 1e-14}},
     call = function(a, b) return torch.polar(a, b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float32", "float64"}) do
         cs[#cs + 1] = {a = G.make({5}, dt, {dom = "pos"}), b = G.make({5}, dt, {dom = "small"}), p = {dt = dt}}
       end
       return cs
     end})
add({name = "complex view_as_complex", ref = "a[..., 0] + 1j * a[..., 1]", out = "py:{'float32': 'complex64', 'float64': 'complex128'}[p.dt]",
     cast = "none", no_device = NO_DEVICE, layout = "needs a last dim of stride 1 (test_reversed_views.lua)",
     call = function(a) return torch.view_as_complex(a) end,
     cases = function()
       return {{a = G.make({3, 2}, "float32"), p = {dt = "float32"}}, {a = G.make({2, 0, 2}, "float64"), p = {dt = "float64"}},
               {a = G.make({2}, "float64"), p = {dt = "float64"}}}
     end})

-- np.isclose / allclose on complex operands. Without infinities: NumPy multiplies the
-- operands by ones first, and (inf+1j)*1 is (inf+nanj), so it calls an infinite complex
-- number unequal to itself; tide (and torch.isclose) compare them with == (test_complex.lua).
add({name = "complex np.isclose", ref = "np.isclose(a, b)", out = "bool", cast = "none", no_device = NO_DEVICE,
     call = function(a, b) return np.isclose(a, b) end,
     cases = function()
       local cs = {}
       for _, dt in ipairs(CX) do
         local x = cmake({3, 4}, dt, {edges = 0.25, edge_list = {0 / 0, 0.0, -0.0, 1.0, 1e-3}})
         cs[#cs + 1] = {a = x, b = x + np.complex(1e-9, 1e-9)}
         cs[#cs + 1] = {a = x, b = cmake({4}, dt, {edges = 0.25, edge_list = {0 / 0, 0.0, 1.0}})}
       end
       return cs
     end})

-- torch.isclose / allclose against PyTorch (rtol, atol, equal_nan), infinities included
local function close_cases()
  local cs = {}
  for _, dt in ipairs(CX) do
    local x = cmake({3, 4}, dt, {edges = 0.3, edge_list = {0 / 0, math.huge, -math.huge, 0.0, -0.0, 1.0, 1e-3}})
    cs[#cs + 1] = {a = x, b = x + np.complex(1e-6, -1e-6), p = {rtol = 1e-5, atol = 1e-8}}
    cs[#cs + 1] = {a = x, b = x * np.complex(1, 1e-3), p = {rtol = 1e-2, atol = 0, equal_nan = true}}
    cs[#cs + 1] = {a = x, b = cmake({4}, dt, {edges = 0.3, edge_list = {0 / 0, 0.0, 1.0}}), p = {rtol = 0.5, atol = 0.5}}
  end
  return cs
end
add({name = "complex torch.isclose", ref = "N(torch.isclose(T(a), T(b), p.rtol, p.atol, bool(p.equal_nan)))", out = "bool",
     cast = "none", no_device = NO_DEVICE,
     call = function(a, b, c, p) return torch.isclose(a, b, {rtol = p.rtol, atol = p.atol, equal_nan = p.equal_nan or false}) end,
     cases = close_cases})
add({name = "complex torch.allclose", ref = "np.array(torch.allclose(T(a), T(np.broadcast_to(b, a.shape)), p.rtol, p.atol, bool(p.equal_nan)))",
     out = "bool", cast = "none", no_device = NO_DEVICE,
     call = function(a, b, c, p)
       return torch.tensor(torch.allclose(a, b:expand(a.shape), {rtol = p.rtol, atol = p.atol, equal_nan = p.equal_nan or false}))
     end,
     cases = close_cases})

-- linalg.eig / eigvals: NumPy's real result when every eigenvalue is real, else complex;
-- the eigenvectors checked through A V = V diag(w) (their phase is LAPACK's choice).
local function eig_cases()
  local cs = {}
  for _, dt in ipairs({"float32", "float64"}) do
    cs[#cs + 1] = {a = torch.tensor({{0, -1}, {1, 0}}, {dtype = dt})}       -- +-i
    cs[#cs + 1] = {a = torch.tensor({{2, 1}, {1, 3}}, {dtype = dt})}        -- real
    cs[#cs + 1] = {a = G.make({4, 4}, dt, {dom = "small"})}
    cs[#cs + 1] = {a = G.make({2, 3, 3}, dt, {dom = "small"})}
    cs[#cs + 1] = {a = G.make({0, 0}, dt)}
  end
  return cs
end
add({name = "complex np.linalg.eigvals", ref = "np.linalg.eigvals(a)", out = "numpy", cast = "none",
     no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}, float32 = {1e-4, 1e-5}, complex128 = {1e-10, 1e-12}},
     call = function(a) return np.linalg.eigvals(a) end, cases = eig_cases})
add({name = "complex torch.linalg.eigvals", ref = "np.linalg.eigvals(a).astype(np.complex64 if a.dtype == np.float32 else np.complex128)",
     out = "numpy", cast = "none", no_device = NO_DEVICE, tol = {complex64 = {1e-4, 1e-5}, complex128 = {1e-10, 1e-12}},
     call = function(a) return torch.linalg.eigvals(a) end, cases = eig_cases})
add({name = "complex np.linalg.eig residual", ref = "np.zeros(a.shape, np.linalg.eigvals(a).dtype)", out = "numpy",
     cast = "none", no_device = NO_DEVICE, tol = {complex64 = {0, 1e-4}, float32 = {0, 1e-4}, complex128 = {0, 1e-12}, float64 = {0, 1e-12}},
     call = function(a)
       local w, v = np.linalg.eig(a)
       return np.matmul(a:to(v.dtype), v) - v * w:unsqueeze(-2)
     end, cases = eig_cases})
add({name = "complex eig int input", ref = "np.linalg.eigvals(a)", out = "numpy", cast = "none",
     no_device = NO_DEVICE, tol = {complex128 = {1e-10, 1e-12}, float64 = {1e-10, 1e-12}},
     call = function(a) return np.linalg.eigvals(a) end,
     cases = function() return {{a = torch.tensor({{1, 2}, {3, 4}})}, {a = torch.tensor({{1, -5}, {2, 1}})}} end})
add({name = "complex eig NaN", expect_error = "the input contains NaN or infinity", ref = "None", out = "same", no_device = NO_DEVICE,
     call = function(a) return torch.linalg.eig(a) end,
     cases = function() return {{a = torch.tensor({{1, 0 / 0}, {0, 1}})}} end})

-- ops without complex support say so; torch.sign refuses complex as PyTorch does (torch.sgn)
add({name = "complex unsupported op", expect_error = "floor: complex64 is not supported", ref = "None", out = "same", no_device = NO_DEVICE,
     call = function(a) return torch.floor(a) end, cases = function() return {{a = cmake({2}, "complex64")}} end})
add({name = "complex torch.sign", expect_error = "sign: complex128 is not supported (as in PyTorch; torch.sgn gives x/|x|",
     ref = "None", out = "same", no_device = NO_DEVICE,
     call = function(a) return torch.sign(a) end, cases = function() return {{a = cmake({2}, "complex128")}} end})
