-- "100 numpy exercises" (rougier/numpy-100; Copyright (c) 2016 Nicolas P. Rougier and the
-- authors named there; MIT licence, tests/numpy100/LICENSE.txt) ported to tide and compared with
-- NumPy: tests/numpy100/exercises.py holds the original solutions, run once here; each
-- T.test below is the line-by-line tide port of one exercise, whose results must equal
-- NumPy's in dtype, shape and values (floats within 1e-12 of the array's largest magnitude
-- unless a test says otherwise). Random inputs are the fixed streams fixed_uniform and
-- fixed_randint, computed here and in exercises.py with the same integer arithmetic, so
-- the comparison does not depend on either random generator.
--
-- Translation (docs/translation.md): 1-based axes and indices; a NumPy index result is
-- compared as `got - 1`; a Python list used as a fancy index is an int64 array
-- (`A[np.array{2, 1}]`, since a Lua table in an index is a range); `a.sort()` (in place)
-- is `a = np.sort(a)` and `a.repeat(...)` is `np["repeat"](a, ...)` (`repeat` is a Lua keyword; tide's methods of those
-- names are PyTorch's); in-place `+=` is `add_` or `out=`.
--
-- Not ported, because tide has no counterpart and none is planned:
--    1  import numpy: no result to compare (every port here uses the `np` global)
--    2  np.__version__, np.show_config(): the Python package's build configuration
--    5  np.info: Python docstrings
--   23  custom structured dtype (RGBA record)
--   31  np.seterr / np.errstate: floating-point warning control
--   32  np.emath.sqrt(-1): NumPy's complex-domain emath module
--   33  np.datetime64 / np.timedelta64
--   34  np.arange over datetime64[D]
--   43  Z.flags.writeable (read-only arrays)
--   46  structured array with fields x, y
--   49  np.set_printoptions
--   51  nested structured dtype
--   55  np.ndenumerate / np.ndindex (Python iterator protocol)
--   62  np.nditer with an allocated operand
--   63  ndarray subclass with a name attribute
--   85  ndarray subclass overriding __setitem__
--   91  record arrays from string columns (np.core.records.fromarrays)
-- Parts left out of ported exercises: 17 `np.nan in set([np.nan])` (Python set identity);
-- 27 `1j*Z` (complex) and `Z<Z>Z` (a Python chained-comparison error); 28
-- `np.array([np.nan]).astype(int)` (NaN to int is undefined in C; NumPy's value is the
-- platform's); 52 the scipy cdist variant; 68 the pandas variant; 73 compares the unique
-- segments through np.unique(F, axis=0) instead of a structured view (NumPy's side
-- converts its structured result to the same rows); 79 the first variant (it calls an
-- undefined function); 89 np.random.shuffle is a fixed permutation and the argpartition
-- result is compared sorted (its order is unspecified); 92 timing (%timeit) becomes the
-- three results; 96 the np.void view variant.
--
-- Functions each exercise needs beyond the current binary are named in a "needs:" comment
-- above its test; until they land, those tests fail with tide's error.

local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local np = require "numpy"
local torch = require "torch"

-- A JSON decoder for exercises.py's output (Python's json: NaN, Infinity, -Infinity too).
local function decode_json(s)
  local pos = 1
  local function ws() pos = s:find("[^ \t\r\n]", pos) or #s + 1 end
  local value
  local function str()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == '"' then pos = pos + 1; return table.concat(out) end
      if c == "\\" then
        local e = s:sub(pos + 1, pos + 1)
        local map = {n = "\n", t = "\t", r = "\r", b = "\b", f = "\f"}
        if e == "u" then
          out[#out + 1] = utf8.char(tonumber(s:sub(pos + 2, pos + 5), 16)); pos = pos + 6
        else
          out[#out + 1] = map[e] or e; pos = pos + 2
        end
      else
        out[#out + 1] = c; pos = pos + 1
      end
    end
  end
  function value()
    ws()
    local c = s:sub(pos, pos)
    if c == "{" then
      local t = {}
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "}" then pos = pos + 1; return t end
      repeat
        ws(); local k = str(); ws()
        assert(s:sub(pos, pos) == ":", "json: ':' expected at " .. pos); pos = pos + 1
        t[k] = value(); ws()
        c = s:sub(pos, pos); pos = pos + 1
      until c == "}"
      return t
    elseif c == "[" then
      local t, n = {}, 0
      pos = pos + 1; ws()
      if s:sub(pos, pos) == "]" then pos = pos + 1; return t end
      repeat
        n = n + 1; t[n] = value(); ws()
        c = s:sub(pos, pos); pos = pos + 1
      until c == "]"
      return t
    elseif c == '"' then return str()
    end
    for word, v in pairs{["true"] = true, ["false"] = false, ["NaN"] = 0 / 0,
                         ["Infinity"] = math.huge, ["-Infinity"] = -math.huge} do
      if s:sub(pos, pos + #word - 1) == word then pos = pos + #word; return v end
    end
    local num = s:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    assert(num and #num > 0, "json: unexpected text at " .. pos .. ": " .. s:sub(pos, pos + 20))
    pos = pos + #num
    return math.tointeger(tonumber(num)) and not num:find("[.eE]") and math.tointeger(tonumber(num))
      or tonumber(num) + 0.0
  end
  return value()
end

-- NumPy's results, computed once (without NumPy there is nothing to compare with).
if not T.have_python_module("numpy") then
  print("skipped: test_numpy100 (no NumPy at " .. T.PYTHON .. ")")
  T.done()
end
local REF
do
  local script = (arg[0]:match("(.*/)") or "./") .. "../numpy100/exercises.py"
  local p = assert(io.popen(T.quote(T.PYTHON) .. " " .. T.quote(script)))
  local out = p:read("a")
  if not p:close() then error("tests/numpy100/exercises.py failed:\n" .. out, 0) end
  REF = decode_json(out)
end

-- The stand-ins for NumPy's random arrays (the same integers as exercises.py's lcg).
local function lcg(seed, n)
  local out, s = {}, seed
  for i = 1, n do
    s = (s * 1103515245 + 12345) % 2147483648
    out[i] = s
  end
  return out
end

local function numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end

local function fixed_uniform(seed, lo, hi, shape)
  local v = lcg(seed, numel(shape))
  for i, s in ipairs(v) do v[i] = lo + (hi - lo) * (s / 2147483648) end
  return np.array(v, {dtype = "float64"}):reshape(shape)
end

local function fixed_randint(seed, lo, hi, shape)
  local v = lcg(seed, numel(shape))
  for i, s in ipairs(v) do v[i] = lo + (s // 65536) % (hi - lo) end
  return np.array(v, {dtype = "int64"}):reshape(shape)
end

-- A NumPy tuple result: tide may return it as one Lua list or as several values.
local function tuple(first, ...)
  if select("#", ...) == 0 and type(first) == "table" and not torch.is_tensor(first) then
    return first
  end
  return {first, ...}
end

local function flat(t)
  local v = t:reshape(-1):tolist()
  return type(v) == "table" and v or {v}
end

local function max_abs(data)
  local m = 0
  for _, x in ipairs(data) do
    if type(x) == "number" and x == x and math.abs(x) ~= math.huge then m = math.max(m, math.abs(x)) end
  end
  return m
end

-- got must equal NumPy's encoded value exp: an array {dtype, shape, data} (a 0-d array
-- also matches a Lua integer for int64, a float for float64, a boolean for bool), a list
-- of them, or a plain Python value.
local function same(got, exp, what, rtol)
  rtol = rtol or 1e-12
  if type(exp) == "table" and exp.dtype then
    local data
    if torch.is_tensor(got) then
      T.eq(got.dtype, exp.dtype, what .. ": dtype")
      T.eq(got.shape, exp.shape, what .. ": shape")
      data = flat(got)
    else
      local lua_type = ({int64 = "integer", float64 = "float", bool = "boolean"})[exp.dtype]
      local kind = type(got) == "number" and math.type(got) or type(got)
      if #exp.shape ~= 0 or kind ~= lua_type then
        error(what .. ": got " .. T.show(got) .. " (" .. kind .. "), expected a "
              .. exp.dtype .. " array of shape " .. T.show(exp.shape), 2)
      end
      data = {got}
    end
    if exp.dtype:find("float") then
      local tol = rtol * max_abs(exp.data)
      for i, e in ipairs(exp.data) do
        local g = data[i]
        local ok = (g == e) or (g ~= g and e ~= e) or
                   (math.abs(e) ~= math.huge and math.abs(g - e) <= tol)
        if not ok then
          error(string.format("%s: element %d is %.17g, NumPy gives %.17g", what, i, g, e), 2)
        end
      end
    else
      T.eq(data, exp.data, what .. ": values")
    end
  elseif type(exp) == "table" then
    T.eq(type(got), "table", what .. ": a list")
    T.eq(#got, #exp, what .. ": list length")
    for i = 1, #exp do same(got[i], exp[i], what .. "[" .. i .. "]", rtol) end
  elseif type(exp) == "number" and exp ~= exp then
    T.truthy(got ~= got, what .. ": expected NaN, got " .. tostring(got))
  else
    T.eq(got, exp, what)
  end
end

-- Registers the port of exercise n; fn gets NumPy's results for it.
local function ex(n, title, fn)
  T.test("ex" .. n .. " " .. title, function()
    local r = assert(REF["ex" .. n], "exercises.py has no ex" .. n)
    fn(r)
  end)
end

local function needs(value, name)
  if value == nil then error("needs " .. name .. ", which this binary lacks", 2) end
  return value
end

ex(3, "Create a null vector of size 10", function(r)
  local Z = np.zeros(10)
  same(Z, r.Z, "Z")
end)

-- needs: x.nbytes
ex(4, "How to find the memory size of any array", function(r)
  local Z = np.zeros{10, 10}
  same(np.size(Z) * Z.itemsize, r.bytes, "size * itemsize")
  same(Z.nbytes, r.nbytes, "nbytes")
end)

ex(6, "Create a null vector of size 10 but the fifth value which is 1", function(r)
  local Z = np.zeros(10)
  Z[5] = 1
  same(Z, r.Z, "Z")
end)

ex(7, "Create a vector with values ranging from 10 to 49", function(r)
  local Z = np.arange(10, 50)
  same(Z, r.Z, "Z")
end)

-- needs: negative-step slices
ex(8, "Reverse a vector (first element becomes last)", function(r)
  local Z = np.arange(50)
  Z = Z[{{-1, 1, -1}}]
  same(Z, r.Z, "Z")
end)

ex(9, "Create a 3x3 matrix with values ranging from 0 to 8", function(r)
  local Z = np.arange(9):reshape(3, 3)
  same(Z, r.Z, "Z")
end)

ex(10, "Find indices of non-zero elements from [1,2,0,0,4,0]", function(r)
  local nz = tuple(np.nonzero{1, 2, 0, 0, 4, 0})
  T.eq(#nz, #r.nz, "one index array per dim")
  for i = 1, #nz do same(nz[i] - 1, r.nz[i], "nz[" .. i .. "] - 1") end
end)

ex(11, "Create a 3x3 identity matrix", function(r)
  local Z = np.eye(3)
  same(Z, r.Z, "Z")
end)

ex(12, "Create a 3x3x3 array with random values", function(r)
  local Z = fixed_uniform(12, 0, 1, {3, 3, 3}) -- np.random.random((3,3,3))
  same(Z, r.Z, "Z")
end)

ex(13, "Create a 10x10 array with random values and find the minimum and maximum values", function(r)
  local Z = fixed_uniform(13, 0, 1, {10, 10}) -- np.random.random((10,10))
  local Zmin, Zmax = Z:min(), Z:max()
  same(Zmin, r.Zmin, "Zmin")
  same(Zmax, r.Zmax, "Zmax")
end)

ex(14, "Create a random vector of size 30 and find the mean value", function(r)
  local Z = fixed_uniform(14, 0, 1, {30}) -- np.random.random(30)
  local m = Z:mean()
  same(m, r.m, "m")
end)

ex(15, "Create a 2d array with 1 on the border and 0 inside", function(r)
  local Z = np.ones{10, 10}
  Z[{{2, -2}, {2, -2}}] = 0
  same(Z, r.Z, "Z")
end)

-- needs: np.pad (pad_width positional: a table in that place is the pad widths)
ex(16, "How to add a border (filled with 0's) around an existing array?", function(r)
  local Z = np.ones{5, 5}
  Z = needs(np.pad, "np.pad")(Z, 1, {mode = "constant", constant_values = 0})
  same(Z, r.pad, "np.pad")
  -- Using fancy indexing
  Z[{":", np.array{1, -1}}] = 0
  Z[{np.array{1, -1}, ":"}] = 0
  same(Z, r.fancy, "fancy")
end)

ex(17, "What is the result of the following expression?", function(r)
  same(0 * np.nan, r.a, "0 * np.nan")
  same(np.nan == np.nan, r.b, "np.nan == np.nan")
  same(np.inf > np.nan, r.c, "np.inf > np.nan")
  same(np.nan - np.nan, r.d, "np.nan - np.nan")
  same(0.3 == 3 * 0.1, r.f, "0.3 == 3 * 0.1")
end)

-- needs: np.diag
ex(18, "Create a 5x5 matrix with values 1,2,3,4 just below the diagonal", function(r)
  local Z = needs(np.diag, "np.diag")(1 + np.arange(4), {k = -1})
  same(Z, r.Z, "Z")
end)

ex(19, "Create a 8x8 matrix and fill it with a checkerboard pattern", function(r)
  local Z = np.zeros({8, 8}, {dtype = "int64"})
  Z[{{2, -1, 2}, {1, -1, 2}}] = 1
  Z[{{1, -1, 2}, {2, -1, 2}}] = 1
  same(Z, r.Z, "Z")
end)

-- needs: np.unravel_index (1-based: the 100th element is index 100)
ex(20, "Consider a (6,7,8) shape array, what is the index (x,y,z) of the 100th element?", function(r)
  local idx = tuple(needs(np.unravel_index, "np.unravel_index")(100, {6, 7, 8}))
  T.eq(#idx, 3, "three indices")
  for i = 1, 3 do same(idx[i] - 1, r.idx[i], "idx[" .. i .. "] - 1") end
end)

ex(21, "Create a checkerboard 8x8 matrix using the tile function", function(r)
  local Z = np.tile(np.array{{0, 1}, {1, 0}}, {4, 4})
  same(Z, r.Z, "Z")
end)

ex(22, "Normalize a 5x5 random matrix", function(r)
  local Z = fixed_uniform(22, 0, 1, {5, 5}) -- np.random.random((5,5))
  Z = (Z - np.mean(Z)) / (np.std(Z))
  same(Z, r.Z, "Z")
end)

ex(24, "Multiply a 5x3 matrix by a 3x2 matrix (real matrix product)", function(r)
  local Z = np.matmul(np.ones{5, 3}, np.ones{3, 2})
  same(Z, r.Z, "Z")
end)

ex(25, "Given a 1D array, negate all elements which are between 3 and 8, in place", function(r)
  local Z = np.arange(11)
  local m = Z:gt(3) & Z:lt(8)
  Z[m] = Z[m] * -1
  same(Z, r.Z, "Z")
end)

ex(26, "What is the output of the following script? (NumPy's sum)", function(r)
  same(np.sum({0, 1, 2, 3, 4}, -1), r.s, "np.sum(range(5), -1)")
end)

-- needs: << and >> on tensors; NumPy's int / int -> float64
ex(27, "Consider an integer vector Z, which of these expressions are legal?", function(r)
  local Z = np.arange(5)
  same(Z ^ Z, r.pow, "Z**Z")
  same(2 << Z >> 2, r.shift, "2 << Z >> 2")
  same(Z:lt(-Z), r.lt_neg, "Z <- Z")
  same(Z / 1 / 1, r.div, "Z/1/1")
end)

-- tide's integer floor division by zero is an error; NumPy gives 0 (with a warning)
ex(28, "What are the result of the following expressions?", function(r)
  same(np.array(0) / np.array(0), r.div, "np.array(0) / np.array(0)")
  same(np.array(0) // np.array(0), r.floordiv, "np.array(0) // np.array(0)")
end)

-- needs: np.copysign
ex(29, "How to round away from zero a float array?", function(r)
  local Z = fixed_uniform(29, -10, 10, {10}) -- np.random.uniform(-10,+10,10)
  same(np.where(Z:gt(0), np.ceil(Z), np.floor(Z)), r.where, "where")
  same(needs(np.copysign, "np.copysign")(np.ceil(np.abs(Z)), Z), r.copysign, "copysign")
end)

-- needs: np.intersect1d
ex(30, "How to find common values between two arrays?", function(r)
  local Z1 = fixed_randint(301, 0, 10, {10}) -- np.random.randint(0,10,10)
  local Z2 = fixed_randint(302, 0, 10, {10})
  same(needs(np.intersect1d, "np.intersect1d")(Z1, Z2), r.common, "intersect1d")
end)

ex(35, "How to compute ((A+B)*(-A/2)) in place (without copy)?", function(r)
  local A = np.ones(3) * 1
  local B = np.ones(3) * 2
  np.add(A, B, {out = B})
  np.divide(A, 2, {out = A})
  np.negative(A, {out = A})
  np.multiply(A, B, {out = A})
  same(A, r.A, "A")
  same(B, r.B, "B")
end)

ex(36, "Extract the integer part of a random array of positive numbers using 4 different methods", function(r)
  local Z = fixed_uniform(36, 0, 10, {10}) -- np.random.uniform(0,10,10)
  same(Z - Z % 1, r.mod, "Z - Z%1")
  same(Z // 1, r.floordiv, "Z // 1")
  same(np.floor(Z), r.floor, "floor")
  same(Z:astype("int64"), r.astype, "astype(int)")
  same(np.trunc(Z), r.trunc, "trunc")
end)

ex(37, "Create a 5x5 matrix with row values ranging from 0 to 4", function(r)
  local Z = np.zeros{5, 5}
  Z:add_(np.arange(5))
  same(Z, r.broadcast, "Z += np.arange(5)")
  Z = np.tile(np.arange(0, 5), {5, 1})
  same(Z, r.tile, "tile")
end)

-- needs: np.fromiter (takes a Lua iterator function)
ex(38, "Consider a generator function that generates 10 integers and use it to build an array", function(r)
  local function generate()
    for x = 0, 9 do coroutine.yield(x) end
  end
  local Z = needs(np.fromiter, "np.fromiter")(coroutine.wrap(generate), {dtype = "float64", count = -1})
  same(Z, r.Z, "Z")
end)

ex(39, "Create a vector of size 10 with values ranging from 0 to 1, both excluded", function(r)
  local Z = np.linspace(0, 1, 11, {endpoint = false})[{{2, -1}}]
  same(Z, r.Z, "Z")
end)

ex(40, "Create a random vector of size 10 and sort it", function(r)
  local Z = fixed_uniform(40, 0, 1, {10}) -- np.random.random(10)
  Z = np.sort(Z)
  same(Z, r.Z, "Z")
end)

-- needs: np.add.reduce
ex(41, "How to sum a small array faster than np.sum?", function(r)
  local Z = np.arange(10)
  same(needs(np.add.reduce, "np.add.reduce")(Z), r.s, "np.add.reduce")
end)

-- needs: np.allclose, np.array_equal
ex(42, "Consider two random arrays A and B, check if they are equal", function(r)
  local A = fixed_randint(421, 0, 2, {5}) -- np.random.randint(0,2,5)
  local B = fixed_randint(422, 0, 2, {5})
  local C = A:copy()
  same(needs(np.allclose, "np.allclose")(A, B), r.allclose, "allclose")
  same(needs(np.array_equal, "np.array_equal")(A, B), r.array_equal, "array_equal")
  same(np.allclose(A, C), r.allclose_same, "allclose of a copy")
  same(np.array_equal(A, C), r.array_equal_same, "array_equal of a copy")
end)

ex(44, "Consider a random 10x2 matrix representing cartesian coordinates, convert them to polar coordinates", function(r)
  local Z = fixed_uniform(44, 0, 1, {10, 2}) -- np.random.random((10,2))
  local X, Y = Z[{":", 1}], Z[{":", 2}]
  local R = np.sqrt(X ^ 2 + Y ^ 2)
  local Tt = np.arctan2(Y, X)
  same(R, r.R, "R")
  same(Tt, r.T, "T")
end)

ex(45, "Create random vector of size 10 and replace the maximum value by 0", function(r)
  local Z = fixed_uniform(45, 0, 1, {10}) -- np.random.random(10)
  Z[Z:argmax()] = 0
  same(Z, r.Z, "Z")
end)

-- needs: np.subtract.outer, NumPy's int - float dtype (float64)
ex(47, "Given two arrays, X and Y, construct the Cauchy matrix C (Cij =1/(xi - yj))", function(r)
  local X = np.arange(8)
  local Y = X + 0.5
  local C = 1.0 / needs(np.subtract.outer, "np.subtract.outer")(X, Y)
  same(C, r.C, "C")
  -- LAPACK's LU pivots in the order NumPy's does, but allow for a different BLAS
  same(np.linalg.det(C), r.det, "det", 1e-9)
end)

-- needs: np.iinfo, np.finfo
ex(48, "Print the minimum and maximum representable values for each numpy scalar type", function(r)
  for _, dtype in ipairs{np.int8, np.int32, np.int64} do
    local info = needs(np.iinfo, "np.iinfo")(dtype)
    same({info.min, info.max}, r[dtype], "iinfo(" .. dtype .. ")")
  end
  for _, dtype in ipairs{np.float32, np.float64} do
    local info = needs(np.finfo, "np.finfo")(dtype)
    same({info.min, info.max, info.eps}, r[dtype], "finfo(" .. dtype .. ")")
  end
end)

ex(50, "How to find the closest value (to a given scalar) in a vector?", function(r)
  local Z = np.arange(100)
  local v = 37.6 -- np.random.uniform(0,100)
  local index = (np.abs(Z - v)):argmin()
  same(index - 1, r.index, "index - 1")
  same(Z[index], r.value, "Z[index]")
end)

-- needs: np.atleast_2d
ex(52, "Consider a random vector with shape (100,2) representing coordinates, find point by point distances", function(r)
  local Z = fixed_uniform(52, 0, 1, {10, 2}) -- np.random.random((10,2))
  local XY = tuple(needs(np.atleast_2d, "np.atleast_2d")(Z[{":", 1}], Z[{":", 2}]))
  local X, Y = XY[1], XY[2]
  local D = np.sqrt((X - X.T) ^ 2 + (Y - Y.T) ^ 2)
  same(D, r.D, "D")
end)

-- needs: x:view(dtype)
ex(53, "How to convert a float (32 bits) array into an integer (32 bits) array in place?", function(r)
  local Z = (fixed_uniform(53, 0, 1, {10}) * 100):astype("float32") -- np.random.rand(10)*100
  local Y = Z:view("int32")
  Y[{":"}] = Z
  same(Y, r.Y, "Y")
end)

-- needs: np.genfromtxt with filling_values (the text of exercises.py's StringIO, as a file)
ex(54, "How to read the following file?", function(r)
  local dir, path = T.tmpdir()
  T.write_bytes(path("s.txt"), [[1, 2, 3, 4, 5

                6,  ,  , 7, 8

                 ,  , 9,10,11
]])
  local ok, Z = pcall(needs(np.genfromtxt, "np.genfromtxt"), path("s.txt"),
                      {delimiter = ",", dtype = "int64", filling_values = 0})
  os.remove(path("s.txt")); os.remove(dir)
  if not ok then error(Z, 0) end
  same(Z, r.Z, "Z")
end)

-- needs: np.meshgrid
ex(56, "Generate a generic 2D Gaussian-like array", function(r)
  local XY = tuple(needs(np.meshgrid, "np.meshgrid")(np.linspace(-1, 1, 10), np.linspace(-1, 1, 10)))
  local X, Y = XY[1], XY[2]
  local D = np.sqrt(X * X + Y * Y)
  local sigma, mu = 1.0, 0.0
  local G = np.exp(-((D - mu) ^ 2 / (2.0 * sigma ^ 2)))
  same(G, r.G, "G")
end)

-- needs: np.put (flat 1-based indices)
ex(57, "How to randomly place p elements in a 2D array?", function(r)
  local n = 10
  local Z = np.zeros{n, n}
  needs(np.put, "np.put")(Z, {18, 43, 94}, 1) -- np.random.choice(range(n*n), p, replace=False)
  same(Z, r.Z, "Z")
end)

ex(58, "Subtract the mean of each row of a matrix", function(r)
  local X = fixed_uniform(58, 0, 1, {5, 10}) -- np.random.rand(5, 10)
  local Y = X - X:mean{axis = 2, keepdims = true}
  same(Y, r.Y, "keepdims")
  Y = X - X:mean{axis = 2}:reshape(-1, 1)
  same(Y, r.Y2, "reshape")
end)

ex(59, "How to sort an array by the nth column?", function(r)
  local Z = fixed_randint(59, 0, 10, {3, 3}) -- np.random.randint(0,10,(3,3))
  same(Z, r.Z, "Z")
  same(Z[Z[{":", 2}]:argsort()], r.sorted, "sorted by column 2")
end)

ex(60, "How to tell if a given 2D array has null columns?", function(r)
  local Z = fixed_randint(60, 0, 3, {3, 10}) -- np.random.randint(0,3,(3,10))
  same((~Z:any{axis = 1}):any(), r.null0, "null columns")
  Z = np.array{{0, 1, np.nan}, {1, 2, np.nan}, {4, 5, np.nan}}
  same(np.isnan(Z):all{axis = 1}, r.nullnan, "nan columns")
end)

-- Z.flat[i] is Z:flatten()[i]
ex(61, "Find the nearest value from a given value in an array", function(r)
  local Z = fixed_uniform(61, 0, 1, {10}) -- np.random.uniform(0,1,10)
  local z = 0.5
  local m = Z:flatten()[np.abs(Z - z):argmin()]
  same(m, r.m, "m")
end)

-- needs: np.bincount, np.add.at (1-based indices: I + 1)
ex(64, "Consider a given vector, how to add 1 to each element indexed by a second vector (be careful with repeated indices)?", function(r)
  local Z = np.ones(10)
  local I = fixed_randint(64, 0, #Z, {20}) -- np.random.randint(0,len(Z),20)
  Z:add_(needs(np.bincount, "np.bincount")(I, {minlength = #Z}))
  same(Z, r.bincount, "bincount")
  needs(np.add.at, "np.add.at")(Z, I + 1, 1)
  same(Z, r.add_at, "np.add.at")
end)

-- needs: np.bincount with weights
ex(65, "How to accumulate elements of a vector (X) to an array (F) based on an index list (I)?", function(r)
  local X = {1, 2, 3, 4, 5, 6}
  local I = {1, 3, 9, 3, 4, 1}
  local F = needs(np.bincount, "np.bincount")(I, X)
  same(F, r.F, "F")
end)

-- needs: np.unique (axis), uint32, np.dot with a list
ex(66, "Considering a (w,h,3) image of (dtype=ubyte), compute the number of unique colors", function(r)
  local w, h = 256, 256
  local I = fixed_randint(66, 0, 4, {h, w, 3}):astype("uint8") -- np.random.randint(0, 4, (h, w, 3))
  local colors = needs(np.unique, "np.unique")(I:reshape(-1, 3), {axis = 1})
  local n = #colors
  same(colors, r.colors, "colors")
  same(n, r.n, "n")
  local I24 = np.dot(I:astype("uint32"), {1, 256, 65536})
  same(#np.unique(I24), r.n24, "n (24-bit)")
end)

ex(67, "Considering a four dimensions array, how to get sum over the last two axis at once?", function(r)
  local A = fixed_randint(67, 0, 10, {3, 4, 3, 4}) -- np.random.randint(0,10,(3,4,3,4))
  local sum = A:sum{axis = {-2, -1}}
  same(sum, r.sum, "axis={-2,-1}")
  sum = A:reshape(A.shape[1], A.shape[2], -1):sum{axis = -1}
  same(sum, r.sum_reshape, "reshape")
end)

-- needs: np.bincount (weights); NumPy's float64 / int64 division
ex(68, "Considering a one-dimensional vector D, how to compute means of subsets of D using a vector S of same size describing subset indices?", function(r)
  local D = fixed_uniform(681, 0, 1, {100}) -- np.random.uniform(0,1,100)
  local S = fixed_randint(682, 0, 10, {100}) -- np.random.randint(0,10,100)
  local D_sums = needs(np.bincount, "np.bincount")(S, {weights = D})
  local D_counts = np.bincount(S)
  local D_means = D_sums / D_counts
  same(D_means, r.D_means, "D_means")
end)

-- needs: np.diag, np.einsum
ex(69, "How to get the diagonal of a dot product?", function(r)
  local A = fixed_uniform(691, 0, 1, {5, 5}) -- np.random.uniform(0,1,(5,5))
  local B = fixed_uniform(692, 0, 1, {5, 5})
  same(np.sum(A * B.T, {axis = 2}), r.fast, "fast")
  same(needs(np.diag, "np.diag")(np.dot(A, B)), r.slow, "slow")
  same(needs(np.einsum, "np.einsum")("ij,ji->i", A, B), r.einsum, "einsum")
end)

ex(70, "Consider the vector [1, 2, 3, 4, 5], how to build a new vector with 3 consecutive zeros interleaved between each value?", function(r)
  local Z = np.array{1, 2, 3, 4, 5}
  local nz = 3
  local Z0 = np.zeros(#Z + (#Z - 1) * (nz))
  Z0[{{1, -1, nz + 1}}] = Z
  same(Z0, r.Z0, "Z0")
end)

-- needs: np.newaxis
ex(71, "Consider an array of dimension (5,5,3), how to multiply it by an array with dimensions (5,5)?", function(r)
  local A = np.ones{5, 5, 3}
  local B = 2 * np.ones{5, 5}
  same(A * B[{":", ":", needs(np.newaxis, "np.newaxis")}], r.AB, "A * B[:,:,None]")
end)

ex(72, "How to swap two rows of an array?", function(r)
  local A = np.arange(25):reshape(5, 5)
  A[np.array{1, 2}] = A[np.array{2, 1}]
  same(A, r.A, "A")
end)

-- needs: np.repeat, np.roll, np.unique (axis)
ex(73, "Consider a set of 10 triplets describing 10 triangles (with shared vertices), find the set of unique line segments composing all the triangles", function(r)
  local faces = fixed_randint(73, 0, 100, {10, 3}) -- np.random.randint(0,100,(10,3))
  local F = needs(np.roll, "np.roll")(needs(np["repeat"], "np.repeat")(faces, 2, {axis = 2}), -1, {axis = 2})
  F = F:reshape(#F * 3, 2)
  F = np.sort(F, {axis = 2})
  local G = needs(np.unique, "np.unique")(F, {axis = 1})
  same(G, r.G, "G")
end)

-- needs: np.bincount, np.repeat
ex(74, "Given a sorted array C that corresponds to a bincount, how to produce an array A such that np.bincount(A) == C?", function(r)
  local C = needs(np.bincount, "np.bincount")({1, 1, 2, 3, 4, 4, 6})
  local A = needs(np["repeat"], "np.repeat")(np.arange(#C), C)
  same(A, r.A, "A")
end)

-- needs: np.lib.stride_tricks.sliding_window_view
ex(75, "How to compute averages using a sliding window over an array?", function(r)
  local function moving_average(a, n)
    n = n or 3
    local ret = np.cumsum(a, {dtype = "float64"})
    ret[{{n + 1, -1}}] = ret[{{n + 1, -1}}] - ret[{{1, -n - 1}}]
    return ret[{{n, -1}}] / n
  end
  local Z = np.arange(20)
  same(moving_average(Z, 3), r.cumsum, "cumsum")
  local sliding_window_view = needs(np.lib, "np.lib").stride_tricks.sliding_window_view
  same(sliding_window_view(Z, {window_shape = 3}):mean{axis = -1}, r.window, "sliding_window_view")
end)

-- needs: x.strides (bytes), np.lib.stride_tricks.as_strided, sliding_window_view
ex(76, "Consider a one-dimensional array Z, build a two-dimensional array whose first row is (Z[0],Z[1],Z[2]) and each subsequent row is shifted by 1", function(r)
  local stride_tricks = needs(np.lib, "np.lib").stride_tricks
  local function rolling(a, window)
    local shape = {np.size(a) - window + 1, window}
    local strides = {a.strides[1], a.strides[1]}
    return stride_tricks.as_strided(a, {shape = shape, strides = strides})
  end
  local Z = rolling(np.arange(10), 3)
  same(Z, r.as_strided, "as_strided")
  same(stride_tricks.sliding_window_view(np.arange(10), {window_shape = 3}), r.window, "sliding_window_view")
end)

ex(77, "How to negate a boolean, or to change the sign of a float inplace?", function(r)
  local Z = fixed_randint(77, 0, 2, {100}) -- np.random.randint(0,2,100)
  np.logical_not(Z, {out = Z})
  same(Z, r["not"], "logical_not")
  Z = fixed_uniform(77, -1.0, 1.0, {100}) -- np.random.uniform(-1.0,1.0,100)
  np.negative(Z, {out = Z})
  same(Z, r.neg, "negative")
end)

-- needs: np.einsum
ex(78, "Consider 2 sets of points P0,P1 describing lines (2d) and a point p, how to compute distance from p to each line i", function(r)
  local P0 = fixed_uniform(781, -10, 10, {10, 2}) -- np.random.uniform(-10,10,(10,2))
  local P1 = fixed_uniform(782, -10, 10, {10, 2})
  local p = fixed_uniform(783, -10, 10, {1, 2})

  local function distance_slower(P0, P1, p)
    local Tt = P1 - P0
    local L = (Tt ^ 2):sum{axis = 2}
    local U = -((P0[{":", 1}] - p[{"...", 1}]) * Tt[{":", 1}] + (P0[{":", 2}] - p[{"...", 2}]) * Tt[{":", 2}]) / L
    U = U:reshape(#U, 1)
    local D = P0 + U * Tt - p
    return np.sqrt((D ^ 2):sum{axis = 2})
  end
  same(distance_slower(P0, P1, p), r.slower, "distance_slower", 1e-11)

  local function distance_faster(P0, P1, p)
    local v = P1 - P0
    v[{":", np.array{1, 2}}] = v[{":", np.array{2, 1}}]
    v[{":", 2}] = v[{":", 2}] * -1
    local norm = np.linalg.norm(v, {axis = 2})
    local r_ = P0 - p
    local d = np.abs(needs(np.einsum, "np.einsum")("ij,ij->i", r_, v)) / norm
    return d
  end
  same(distance_faster(P0, P1, p), r.faster, "distance_faster", 1e-11)
end)

-- needs: np.newaxis
ex(79, "Consider 2 sets of points P0,P1 describing lines (2d) and a set of points P, how to compute distance from each point j to each line i", function(r)
  local P0 = fixed_uniform(791, -10, 10, {10, 2}) -- np.random.uniform(-10,10,(10,2))
  local P1 = fixed_uniform(792, -10, 10, {10, 2})
  local p = fixed_uniform(793, -10, 10, {10, 2})
  local newaxis = needs(np.newaxis, "np.newaxis")

  local function distance_points_to_lines(p, p_1, p_2)
    local x_0, y_0 = p.T[1], p.T[2]
    local x_1, y_1 = p_1.T[1], p_1.T[2]
    local x_2, y_2 = p_2.T[1], p_2.T[2]
    local dx = x_2 - x_1
    local dy = y_2 - y_1
    local cross_term = x_2 * y_1 - y_2 * x_1
    local numerator = np.abs(
      dy[{newaxis, ":"}] * x_0[{":", newaxis}]
      - dx[{newaxis, ":"}] * y_0[{":", newaxis}]
      + cross_term[{newaxis, ":"}]
    )
    local denominator = np.sqrt(dx ^ 2 + dy ^ 2)
    return numerator / denominator[{newaxis, ":"}]
  end
  same(distance_points_to_lines(p, P0, P1), r.D, "D", 1e-11)
end)

-- The position is 1-based; the bounds below are 0-based offsets as in NumPy, made into
-- inclusive 1-based ranges at the end.
ex(80, "Consider an arbitrary array, write a function that extracts a subpart with a fixed shape and centered on a given element", function(r)
  local Z = fixed_randint(80, 0, 10, {10, 10}) -- np.random.randint(0,10,(10,10))
  local shape = {5, 5}
  local fill = 0
  local position = {2, 2}

  local R = np.ones(shape, {dtype = Z.dtype}) * fill
  local P = np.array(position):astype("int64") - 1
  local Rs = np.array(R.shape):astype("int64")
  local Zs = np.array(Z.shape):astype("int64")

  local R_start = np.zeros{#shape}:astype("int64")
  local R_stop = np.array(shape):astype("int64")
  local Z_start = (P - Rs // 2)
  local Z_stop = (P + Rs // 2) + Rs % 2

  R_start = (R_start - np.minimum(Z_start, 0)):tolist()
  Z_start = (np.maximum(Z_start, 0)):tolist()
  R_stop = np.maximum(np.array(R_start), (R_stop - np.maximum(Z_stop - Zs, 0))):tolist()
  Z_stop = (np.minimum(Z_stop, Zs)):tolist()

  local rr, z = {}, {}
  for i = 1, #shape do
    rr[i] = {R_start[i] + 1, R_stop[i]}
    z[i] = {Z_start[i] + 1, Z_stop[i]}
  end
  R[rr] = Z[z]
  same(R, r.R, "R")
end)

-- needs: uint32, np.lib.stride_tricks.as_strided, sliding_window_view
ex(81, "Consider an array Z = [1,2,3,4,5,6,7,8,9,10,11,12,13,14], how to generate an array R = [[1,2,3,4], [2,3,4,5], ..., [11,12,13,14]]?", function(r)
  local stride_tricks = needs(np.lib, "np.lib").stride_tricks
  local Z = np.arange(1, 15, {dtype = "uint32"})
  local R = stride_tricks.as_strided(Z, {11, 4}, {4, 4})
  same(R, r.as_strided, "as_strided")
  same(stride_tricks.sliding_window_view(Z, {window_shape = 4}), r.window, "sliding_window_view")
end)

-- needs: np.linalg.svd, np.finfo, np.linalg.matrix_rank
ex(82, "Compute a matrix rank", function(r)
  local Z = fixed_uniform(82, 0, 1, {10, 10}) -- np.random.uniform(0,1,(10,10))
  local USV = tuple(needs(np.linalg.svd, "np.linalg.svd")(Z))
  local S = USV[2]
  local threshold = #S * S:max() * needs(np.finfo, "np.finfo")(S.dtype).eps
  local rank = np.sum(S:gt(threshold))
  same(rank, r.rank, "rank")
  same(needs(np.linalg.matrix_rank, "np.linalg.matrix_rank")(Z), r.matrix_rank, "matrix_rank")
end)

-- needs: np.bincount (its position i counts the value i - 1)
ex(83, "How to find the most frequent value in an array?", function(r)
  local Z = fixed_randint(83, 0, 10, {50}) -- np.random.randint(0,10,50)
  same(needs(np.bincount, "np.bincount")(Z):argmax() - 1, r.most, "most frequent")
end)

-- needs: x.strides, np.lib.stride_tricks.as_strided, sliding_window_view
ex(84, "Extract all the contiguous 3x3 blocks from a random 10x10 matrix", function(r)
  local stride_tricks = needs(np.lib, "np.lib").stride_tricks
  local Z = fixed_randint(84, 0, 5, {10, 10}) -- np.random.randint(0,5,(10,10))
  local n = 3
  local i = 1 + (Z.shape[1] - 3)
  local j = 1 + (Z.shape[2] - 3)
  local s = Z.strides
  local C = stride_tricks.as_strided(Z, {shape = {i, j, n, n}, strides = {s[1], s[2], s[1], s[2]}})
  same(C, r.as_strided, "as_strided")
  same(stride_tricks.sliding_window_view(Z, {window_shape = {3, 3}}), r.window, "sliding_window_view")
end)

-- needs: np.tensordot
ex(86, "Consider a set of p matrices with shape (n,n) and a set of p vectors with shape (n,1). How to compute the sum of the p matrix products at once?", function(r)
  local p, n = 10, 20
  local M = np.ones{p, n, n}
  local V = np.ones{p, n, 1}
  local S = needs(np.tensordot, "np.tensordot")(M, V, {axes = {{1, 3}, {1, 2}}})
  same(S, r.S, "S")
end)

-- needs: np.add.reduceat (1-based indices), sliding_window_view
ex(87, "Consider a 16x16 array, how to get the block-sum (block size is 4x4)?", function(r)
  local Z = np.ones{16, 16}
  local k = 4
  same(Z:reshape(4, 4, 4, 4):sum{axis = {2, 4}}, r.reshape, "reshape")
  local reduceat = needs(np.add.reduceat, "np.add.reduceat")
  local S = reduceat(reduceat(Z, np.arange(0, Z.shape[1], k) + 1, {axis = 1}),
                     np.arange(0, Z.shape[2], k) + 1, {axis = 2})
  same(S, r.reduceat, "reduceat")
  local windows = needs(np.lib, "np.lib").stride_tricks.sliding_window_view(Z, {k, k})
  S = windows[{{1, -1, k}, {1, -1, k}, "..."}]:sum{axis = {-2, -1}}
  same(S, r.window, "sliding_window_view")
end)

ex(88, "How to implement the Game of Life using numpy arrays?", function(r)
  local function iterate(Z)
    -- Count neighbours
    local N = (Z[{{1, -3}, {1, -3}}] + Z[{{1, -3}, {2, -2}}] + Z[{{1, -3}, {3, -1}}] +
               Z[{{2, -2}, {1, -3}}]                         + Z[{{2, -2}, {3, -1}}] +
               Z[{{3, -1}, {1, -3}}] + Z[{{3, -1}, {2, -2}}] + Z[{{3, -1}, {3, -1}}])
    -- Apply rules
    local birth = N:eq(3) & Z[{{2, -2}, {2, -2}}]:eq(0)
    local survive = (N:eq(2) | N:eq(3)) & Z[{{2, -2}, {2, -2}}]:eq(1)
    Z[{"..."}] = 0
    Z[{{2, -2}, {2, -2}}][birth | survive] = 1
    return Z
  end
  local Z = fixed_randint(88, 0, 2, {50, 50}) -- np.random.randint(0,2,(50,50))
  for _ = 1, 100 do Z = iterate(Z) end
  same(Z, r.Z, "Z")
end)

-- needs: np.argpartition (kth is 1-based: n + 1)
ex(89, "How to get the n largest values of an array", function(r)
  local Z = np.arange(10000)
  Z = Z[(np.arange(10000) * 7919) % 10000 + 1] -- np.random.shuffle(Z)
  local n = 5
  same(Z[np.argsort(Z)[{{-n, -1}}]], r.slow, "slow")
  local fast = Z[needs(np.argpartition, "np.argpartition")(-Z, n + 1)[{{1, n}}]]
  same(np.sort(fast), r.fast_sorted, "fast (sorted)")
end)

-- needs: np.indices (1-based indices)
ex(90, "Given an arbitrary number of vectors, build the cartesian product (every combination of every item)", function(r)
  local function cartesian(arrays)
    local a = {}
    for i, x in ipairs(arrays) do a[i] = np.asarray(x) end
    arrays = a
    local shape = {}
    for i, x in ipairs(arrays) do shape[i] = #x end
    local ix = needs(np.indices, "np.indices")(shape, {dtype = "int64"})
    ix = ix:reshape(#arrays, -1).T
    for n = 1, #arrays do
      ix[{":", n}] = arrays[n][ix[{":", n}]]
    end
    return ix
  end
  same(cartesian({{1, 2, 3}, {4, 5}, {6, 7}}), r.C, "cartesian")
end)

-- needs: np.einsum
ex(92, "Consider a large vector Z, compute Z to the power of 3 using 3 different methods", function(r)
  local x = fixed_uniform(92, 0, 1, {1000}) -- np.random.rand(int(5e7))
  same(np.power(x, 3), r.power, "np.power")
  same(x * x * x, r.mul, "x*x*x")
  same(needs(np.einsum, "np.einsum")("i,i,i->i", x, x, x), r.einsum, "einsum")
end)

-- needs: np.newaxis; np.where's indices are 1-based
ex(93, "Consider two arrays A and B of shape (8,3) and (2,2). How to find rows of A that contain elements of each row of B regardless of the order of the elements in B?", function(r)
  local A = fixed_randint(931, 0, 5, {8, 3}) -- np.random.randint(0,5,(8,3))
  local B = fixed_randint(932, 0, 5, {2, 2})
  local newaxis = needs(np.newaxis, "np.newaxis")
  local C = A[{"...", newaxis, newaxis}]:eq(B)
  local rows = tuple(np.where(C:any{axis = {4, 2}}:all{axis = 2}))[1]
  same(rows - 1, r.rows, "rows - 1")
end)

ex(94, "Considering a 10x3 matrix, extract rows with unequal values (e.g. [2,2,3])", function(r)
  local Z = fixed_randint(94, 0, 5, {10, 3}) -- np.random.randint(0,5,(10,3))
  local E = np.all(Z[{":", {2, -1}}]:eq(Z[{":", {1, -2}}]), {axis = 2})
  local U = Z[~E]
  same(U, r.U, "U")
  U = Z[{Z:max{axis = 2}:ne(Z:min{axis = 2}), ":"}]
  same(U, r.U2, "U (max ~= min)")
end)

-- needs: negative-step slices, np.newaxis, np.unpackbits
ex(95, "Convert a vector of ints into a matrix binary representation", function(r)
  local I = np.array{0, 1, 2, 3, 15, 16, 32, 64, 128}
  local B = (I:reshape(-1, 1) & (2 ^ np.arange(8))):ne(0):astype("int64")
  same(B[{":", {-1, 1, -1}}], r.B, "B[:, ::-1]")
  I = np.array({0, 1, 2, 3, 15, 16, 32, 64, 128}, {dtype = "uint8"})
  same(needs(np.unpackbits, "np.unpackbits")(I[{":", needs(np.newaxis, "np.newaxis")}], {axis = 2}),
       r.unpackbits, "unpackbits")
end)

-- needs: np.unique (axis)
ex(96, "Given a two dimensional array, how to extract unique rows?", function(r)
  local Z = fixed_randint(96, 0, 2, {6, 3}) -- np.random.randint(0,2,(6,3))
  local uZ = needs(np.unique, "np.unique")(Z, {axis = 1})
  same(uZ, r.uZ, "uZ")
end)

-- needs: np.einsum, np.inner
ex(97, "Considering 2 vectors A & B, write the einsum equivalent of inner, outer, sum, and mul function", function(r)
  local A = fixed_uniform(971, 0, 1, {10}) -- np.random.uniform(0,1,10)
  local B = fixed_uniform(972, 0, 1, {10})
  same(np.sum(A), r.np_sum, "np.sum")
  same(A * B, r.np_mul, "A * B")
  same(np.outer(A, B), r.np_outer, "np.outer")
  same(needs(np.inner, "np.inner")(A, B), r.np_inner, "np.inner")
  local einsum = needs(np.einsum, "np.einsum")
  same(einsum("i->", A), r.sum, "einsum i->")
  same(einsum("i,i->i", A, B), r.mul, "einsum i,i->i")
  same(einsum("i,i", A, B), r.inner, "einsum i,i")
  same(einsum("i,j->ij", A, B), r.outer, "einsum i,j->ij")
end)

-- needs: np.diff, np.interp
ex(98, "Considering a path described by two vectors (X,Y), how to sample it using equidistant samples?", function(r)
  local phi = np.arange(0, 10 * np.pi, 0.1)
  local a = 1
  local x = a * phi * np.cos(phi)
  local y = a * phi * np.sin(phi)

  local diff = needs(np.diff, "np.diff")
  local dr = (diff(x) ^ 2 + diff(y) ^ 2) ^ .5 -- segment lengths
  local r_ = np.zeros_like(x)
  r_[{{2, -1}}] = np.cumsum(dr) -- integrate path
  local r_int = np.linspace(0, r_:max(), 200) -- regular spaced path
  local x_int = needs(np.interp, "np.interp")(r_int, r_, x) -- integrate path
  local y_int = np.interp(r_int, r_, y)
  same(x_int, r.x_int, "x_int")
  same(y_int, r.y_int, "y_int")
end)

-- needs: np.logical_and.reduce
ex(99, "Given an integer n and a 2D array X, select from X the rows which can be interpreted as draws from a multinomial distribution with n degrees", function(r)
  local X = np.asarray{{1.0, 0.0, 3.0, 8.0},
                       {2.0, 0.0, 1.0, 1.0},
                       {1.5, 2.5, 1.0, 0.0}}
  local n = 4
  local M = needs(np.logical_and.reduce, "np.logical_and.reduce")(np.mod(X, 1):eq(0), {axis = -1})
  M = M & X:sum{axis = -1}:eq(n)
  same(X[M], r.rows, "X[M]")
end)

-- needs: np.percentile
ex(100, "Compute bootstrapped 95% confidence intervals for the mean of a 1D array X", function(r)
  local X = fixed_uniform(100, -3, 3, {100}) -- np.random.randn(100)
  local N = 1000 -- number of bootstrap samples
  local idx = fixed_randint(1001, 0, np.size(X), {N, np.size(X)}) + 1 -- np.random.randint(0, X.size, (N, X.size))
  local means = X[idx]:mean{axis = 2}
  local confint = needs(np.percentile, "np.percentile")(means, {2.5, 97.5})
  same(confint, r.confint, "confint")
end)

T.done()
