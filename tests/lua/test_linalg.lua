-- Linear algebra from Lua: mm mv bmm matmul dot outer addmm, torch.linalg / np.linalg
-- solve inv det norm, their errors, and results checked against NumPy 1.24 (the expected
-- values below were computed with numpy from the same formulas).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = torch or require "torch"
local np = np or require "numpy"

-- A nested table of the given shape with f(i, j, ...) (0-based indices) as values.
local function build(shape, f, idx, d)
  idx, d = idx or {}, d or 1
  local t = {}
  for i = 0, shape[d] - 1 do
    idx[d] = i
    if d == #shape then t[i + 1] = f(table.unpack(idx)) else t[i + 1] = build(shape, f, idx, d + 1) end
  end
  return t
end

T.test("mm: values in several dtypes", function()
  local a = torch.tensor{{1, 2, 3}, {4, 5, 6}}
  local b = torch.tensor{{7, 8}, {9, 10}, {11, 12}}
  local want = {{58, 64}, {139, 154}}
  T.eq(a:mm(b):tolist(), want)
  T.eq(a:mm(b).dtype, "int64")
  T.eq(torch.mm(a:float(), b:float()):tolist(), want)
  T.eq(torch.mm(a:double(), b:double()).dtype, "float64")
  T.eq(a:half():mm(b:half()):float():tolist(), want)
  T.eq(a:half():mm(b:half()).dtype, "float16")
  T.eq(a:int():mm(b:int()):tolist(), want)
end)

T.test("mm: transposed and sliced views", function()
  local x = torch.randn(50, 40):double()
  local y = torch.randn(50, 30):double()
  -- x:t() goes to BLAS as a transposed operand; compare with a contiguous copy
  T.near(x:t():mm(y), x:t():contiguous():mm(y), 1e-12)
  T.near(y:t():mm(x), y:t():contiguous():mm(x), 1e-12)
  T.near(x:t():mm(x), x:t():contiguous():mm(x:contiguous()), 1e-12)
  local s = x[{":", {1, 40, 2}}]  -- every other column: a general stride
  T.near(s:t():mm(y), s:t():contiguous():mm(y), 1e-12)
  local f = torch.randn(64, 64)
  T.near(f:t():mm(f), f:t():contiguous():mm(f), 1e-4)
end)

T.test("mv, bmm and the matmul rules", function()
  local A = torch.tensor{{1., 2., 3.}, {4., 5., 6.}}
  local v = torch.tensor{1., 0., -1.}
  T.eq(A:mv(v):tolist(), {-2, -2})
  T.eq(torch.mv(A, v).shape, {2})
  T.eq(torch.matmul(A, v):tolist(), {-2, -2})
  T.eq(torch.matmul(torch.tensor{1., 1.}, A):tolist(), {5, 7, 9})
  local d = v:matmul(v)
  T.eq(d:dim(), 0)
  T.eq(d:item(), 2)
  local a = torch.randn(2, 1, 3, 4)
  local b = torch.randn(5, 4, 6)
  T.eq(torch.matmul(a, b).shape, {2, 5, 3, 6})
  T.eq(torch.matmul(torch.randn(4, 3, 5), torch.randn(5)).shape, {4, 3})
  T.eq(torch.matmul(torch.randn(3), torch.randn(4, 3, 5)).shape, {4, 5})
  local x, y = torch.randn(3, 4, 5), torch.randn(3, 5, 2)
  local r = torch.bmm(x, y)
  T.eq(r.shape, {3, 4, 2})
  T.near(r[2], x[2]:mm(y[2]), 1e-5)
  T.eq(torch.linalg.matmul(A, v):tolist(), {-2, -2})
end)

T.test("dot follows NumPy", function()
  local a, b = torch.tensor{1., 2., 3.}, torch.tensor{4., 5., 6.}
  T.eq(a:dot(b):item(), 32)
  T.eq(torch.dot(a, b):item(), 32)
  T.eq(torch.tensor{1, 2, 3}:dot(torch.tensor{4, 5, 6}):item(), 32)
  local M = torch.tensor{{1., 2.}, {3., 4.}}
  T.eq(torch.dot(M, M):tolist(), {{7, 10}, {15, 22}})
  T.eq(np.dot({1, 2, 3}, {4, 5, 6}):item(), 32)
  T.eq(np.dot(np.array{{1, 2}, {3, 4}}, 2):tolist(), {{2, 4}, {6, 8}})
  -- N-D: numpy.dot of (2,3,4) and (3,4,2)
  local x = np.array(build({2, 3, 4}, function(i, j, k) return (i + 2 * j + 3 * k) % 7 - 3 end))
  local y = np.array(build({3, 4, 2}, function(i, j, k) return (2 * i + j + k) % 5 - 2 end))
  local r = np.dot(x, y)
  T.eq(r.shape, {2, 3, 3, 2})
  T.eq(r:tolist(), {{{{5,4},{8,-8},{-9,5}},{{1,1},{-4,6},{-4,1}},{{4,5},{-9,-8},{8,4}}},
                    {{{3,-1},{-5,6},{-3,3}},{{-1,3},{-3,6},{-5,-1}},{{-5,-7},{6,-1},{7,-5}}}})
end)

T.test("np.matmul broadcasts like numpy", function()
  local m1 = np.array(build({2, 1, 2, 3}, function(i, j, k, l) return (i + j + 2 * k + l) % 4 - 1 end))
  local m2 = np.array(build({3, 3, 2}, function(i, j, k) return (i * j + k) % 3 - 1 end))
  local r = np.matmul(m1, m2)
  T.eq(r.shape, {2, 3, 2, 2})
  T.eq(r:tolist(), {{{{0,0},{-2,0}},{{2,-1},{-2,3}},{{1,1},{1,-3}}},
                    {{{-3,0},{-1,0}},{{2,-1},{-2,-1}},{{1,1},{-3,1}}}})
  -- numpy promotes mixed dtypes; torch refuses them
  T.eq(np.matmul(np.array{{1, 2}}, np.array{{1.5}, {2}}).dtype, "float64")
  T.error(function() torch.matmul(torch.ones(2, 2), torch.ones(2, 2):double()) end,
    "matmul: expected both tensors to have the same dtype, got float32 and float64")
end)

T.test("outer and addmm", function()
  T.eq(torch.outer(torch.tensor{1, 2}, torch.tensor{3, 4, 5}):tolist(), {{3, 4, 5}, {6, 8, 10}})
  T.eq(torch.tensor{1, 2}:outer(torch.tensor{1, -1}):tolist(), {{1, -1}, {2, -2}})
  T.eq(np.outer(np.array{{1, 2}, {3, 4}}, {1, -1}):tolist(), {{1,-1},{2,-2},{3,-3},{4,-4}})
  T.error(function() torch.outer(torch.ones(2, 2), torch.ones(2)) end, "outer: expected 1-D tensors, got 2-D and 1-D")
  local A = torch.tensor{{1., 2.}, {3., 4.}}
  local I = torch.tensor{{1., 0.}, {0., 1.}}
  local bias = torch.tensor{10., 20.}
  T.eq(torch.addmm(bias, A, I):tolist(), {{11, 22}, {13, 24}})
  T.eq(torch.addmm(bias, A, I, {beta = 0.5, alpha = 2}):tolist(), {{7, 14}, {11, 18}})
  T.eq(bias:addmm(A, I, {beta = 0}):tolist(), {{1, 2}, {3, 4}})
  local x = torch.ones(2, 2)
  local r = x:addmm_(A, I)
  T.truthy(rawequal(r, x), "addmm_ returns self")
  T.eq(x:tolist(), {{2, 3}, {4, 5}})
  T.error(function() torch.addmm(torch.ones(3), A, I) end,
    "addmm: the bias of shape {3} cannot be broadcast to the result shape {2,2}")
end)

T.test("out= keyword", function()
  local A = torch.tensor{{1., 2.}, {3., 4.}}
  local o = torch.zeros(2, 2)
  local r = torch.mm(A, A, {out = o})
  T.truthy(rawequal(r, o), "returns out")
  T.eq(o:tolist(), {{7, 10}, {15, 22}})
  local n = np.zeros{2, 2}
  np.matmul(np.array{{1, 2}, {3, 4}}, np.array{{1, 0}, {0, 1}}, {out = n})
  T.eq(n:tolist(), {{1, 2}, {3, 4}})
  T.error(function() torch.mm(A, A, {out = torch.zeros(3)}) end, "mm: out has shape {3} but the result has shape {2,2}")
end)

T.test("product errors", function()
  T.error(function() torch.zeros(64, 1000):mm(torch.zeros(100, 10)) end,
    "mm: shapes {64,1000} and {100,10} cannot be multiplied (1000 ~= 100)")
  T.error(function() torch.mm(torch.zeros(2, 3, 4), torch.zeros(4, 5)) end, "mm: expected 2-D tensors, got 3-D and 2-D")
  T.error(function() torch.mm(torch.zeros(2, 2), torch.zeros(2, 2):double()) end,
    "mm: expected both tensors to have the same dtype, got float32 and float64")
  T.error(function() torch.mv(torch.zeros(2, 3), torch.zeros(2)) end, "mv: shapes {2,3} and {2} cannot be multiplied (3 ~= 2)")
  T.error(function() torch.bmm(torch.zeros(2, 3, 4), torch.zeros(3, 4, 5)) end,
    "bmm: batch sizes 2 and 3 differ (shapes {2,3,4} and {3,4,5})")
  T.error(function() torch.matmul(torch.zeros(2, 3, 4), torch.zeros(3, 4, 5)) end,
    "matmul: the batch dims of shapes {2,3,4} and {3,4,5} cannot be broadcast ({2} and {3})")
  T.error(function() torch.dot(torch.zeros(3), torch.zeros(4)) end, "dot: shapes {3} and {4} cannot be multiplied (3 ~= 4)")
  T.error(function() torch.mm(torch.zeros(2, 2), 3) end, "mm: expected a tensor as argument 2, got number")
  T.error(function() np.matmul(np.zeros{2, 3}, np.zeros{2, 3}) end,
    "matmul: shapes {2,3} and {2,3} cannot be multiplied (3 ~= 2)")
end)

local A4 = build({4, 4}, function(i, j) return math.sin(i * 4 + j + 1) + (i == j and 3 or 0) end)
local B42 = build({4, 2}, function(i, j) return math.cos(i * 2 + j) end)

T.test("linalg.solve", function()
  local want = {{0.37382246528206775,0.30525895297786015},{-0.09172864455077569,-0.4040787120357718},
                {-0.3197958022155191,0.06624130229338034},{0.4063014447156589,0.3623948739253716}}
  T.near(np.linalg.solve(A4, B42), want, 1e-10)
  local A, B = torch.tensor(A4, {dtype = "float64"}), torch.tensor(B42, {dtype = "float64"})
  T.near(torch.linalg.solve(A, B), want, 1e-10)
  T.near(torch.linalg.solve(A, B:t():contiguous()[1]),
    {0.3738224652820678,-0.09172864455077569,-0.3197958022155191,0.4063014447156589}, 1e-10)
  T.near(torch.linalg.solve(A:float(), B:float()), want, 1e-5)
  -- batched
  local As = torch.randn(3, 5, 5):double()
  local Bs = torch.randn(5, 2):double()
  local X = torch.linalg.solve(As, Bs)
  T.eq(X.shape, {3, 5, 2})
  T.near(torch.matmul(As, X)[2], Bs, 1e-9)
  -- errors
  T.error(function() torch.linalg.solve(torch.tensor{{1., 0., 0.}, {0., 1., 0.}, {0., 0., 0.}}, torch.ones(3)) end,
    "linalg.solve: the matrix is singular (U[3,3] = 0)")
  T.error(function() np.linalg.solve({{1, 2}, {2, 4}}, {1, 1}) end, "linalg.solve: the matrix is singular (U[")
  T.error(function() torch.linalg.solve(torch.tensor{{1, 0}, {0, 1}}, torch.tensor{1, 1}) end,
    "linalg.solve: expected a floating-point tensor, got int64")
  T.eq(np.linalg.solve({{2, 0}, {0, 4}}, {2, 4}):tolist(), {1, 1})
  T.error(function() torch.linalg.solve(torch.ones(2, 3), torch.ones(2)) end,
    "linalg.solve: A must be a square matrix or a batch of square matrices, got shape {2,3}")
  T.error(function() torch.linalg.solve(torch.eye(3), torch.ones(2)) end,
    "linalg.solve: shapes {3,3} and {2} are incompatible (3 ~= 2)")
end)

T.test("linalg.inv, inverse, det", function()
  local want = {{0.22218141357967025,-0.11333658244850266,-0.011320113918618036,0.101104015142664},
                {0.1107187873623213,0.3554089075490449,-0.08686382005809681,-0.11594101876352135},
                {-0.03358933838460898,0.08447746592250038,0.4582094109815906,0.050464199479744155},
                {-0.06680787383406345,-0.13251188762964272,-0.0763850830484081,0.3833031479530075}}
  T.near(np.linalg.inv(A4), want, 1e-10)
  local A = torch.tensor(A4, {dtype = "float64"})
  T.near(torch.linalg.inv(A), want, 1e-10)
  T.near(A:inverse(), want, 1e-10)
  T.near(torch.inverse(A:t()):t(), want, 1e-10)
  T.near(np.linalg.det(A4):item(), 63.085025448551036, 1e-10)
  T.near(A:det():item(), 63.085025448551036, 1e-10)
  T.eq(torch.linalg.det(torch.tensor{{{1., 2.}, {3., 4.}}, {{2., 0.}, {0., 2.}}}):tolist(), {-2, 4})
  T.error(function() torch.linalg.inv(torch.tensor{{1., 2.}, {2., 4.}}) end,
    "linalg.inv: the matrix is singular (U[2,2] = 0)")
  T.error(function() torch.linalg.inv(torch.ones(3)) end,
    "linalg.inv: A must be a matrix or a batch of matrices, got a 1-D tensor of shape {3}")
end)

T.test("np.linalg.norm and torch.linalg.norm", function()
  local M = np.array(build({3, 4}, function(i, j) return math.sin(i * 4 + j + 1) end))
  T.near(np.linalg.norm(M):item(), 2.5078519778915065, 1e-12)
  T.near(np.linalg.norm(M, "fro"):item(), 2.5078519778915065, 1e-12)
  T.near(np.linalg.norm(M, "nuc"):item(), 3.459779336215861, 1e-10)
  T.near(np.linalg.norm(M, 1):item(), 2.282733659931745, 1e-12)
  T.near(np.linalg.norm(M, -1):item(), 1.7327340359139773, 1e-12)
  T.near(np.linalg.norm(M, 2):item(), 2.119944161327282, 1e-10)
  T.near(np.linalg.norm(M, -2):item(), 0, 1e-12)
  T.near(np.linalg.norm(M, math.huge):item(), 2.8846846182042354, 1e-12)
  T.near(np.linalg.norm(M, -math.huge):item(), 2.4927027206822645, 1e-12)
  T.near(np.linalg.norm(M, {ord = "inf"}):item(), 2.8846846182042354, 1e-12)
  local v = M[1]
  T.near(np.linalg.norm(v):item(), 1.458615817233757, 1e-12)
  T.near(np.linalg.norm(v, 1):item(), 2.6486909150013735, 1e-12)
  T.near(np.linalg.norm(v, 3):item(), 1.2128070902132648, 1e-12)
  T.near(np.linalg.norm(v, math.huge):item(), 0.9092974268256816, 1e-12)
  T.near(np.linalg.norm(v, -math.huge):item(), 0.1411200080598672, 1e-12)
  T.near(np.linalg.norm(v, 0):item(), 4, 1e-12)
  T.near(np.linalg.norm(M, {axis = 2}), {1.458615817233757,1.5517957069890853,1.324270185611714}, 1e-12)
  T.near(np.linalg.norm(M, 1, 1), {2.212513744712792,1.7327340359139773,1.7980968133293596,2.282733659931745}, 1e-12)
  T.eq(np.linalg.norm(M, {axis = 2, keepdims = true}).shape, {3, 1})
  T.eq(np.linalg.norm(M, {axis = {1, 2}, keepdims = true}).shape, {1, 1})
  local t = torch.tensor{{3., 4.}, {0., 0.}}
  T.near(torch.linalg.norm(t):item(), 5, 1e-6)
  T.eq(torch.linalg.norm(t).dtype, "float32")
  T.near(torch.linalg.norm(t, {dim = 2}), {5, 0}, 1e-6)
  T.near(torch.linalg.norm(t, {ord = 1, dim = 2}), {7, 0}, 1e-6)
  T.error(function() np.linalg.norm(M, 3) end, "linalg.norm: invalid norm order 3 for matrices")
  T.error(function() np.linalg.norm(M, "fro", 1) end, "linalg.norm: the 'fro' norm needs two dims (a matrix)")
  T.error(function() np.linalg.norm(M, "bad") end, "linalg.norm: unknown ord 'bad'")
end)

T.test("large products match their parts (BLAS and threads)", function()
  local a, b = torch.randn(300, 200), torch.randn(200, 100)
  local c = a:mm(b)
  T.near(c[{{1, 5}, ":"}], a[{{1, 5}, ":"}]:mm(b), 1e-4)
  local ai, bi = torch.randint(-5, 5, {120, 300}), torch.randint(-5, 5, {300, 90})
  local ci = ai:mm(bi)
  T.eq(ci.dtype, "int64")
  T.near(ci:double(), ai:double():mm(bi:double()), 0)
end)

-- A batch of small products is shared by the engine's threads, each product one OpenBLAS
-- call on one thread: the bits do not depend on the thread count, and 200 engine threads
-- stay within OpenBLAS's per-call buffers (a parallel region runs at most 64 chunks at once).
T.test("bmm of small products: the same bits on any thread count", function()
  local before = torch.get_num_threads()
  torch.manual_seed(3)
  local a, b = torch.randn(2048, 8, 16), torch.randn(2048, 16, 8)
  local a64 = torch.randn(300, 12, 17, {dtype = "float64"}):transpose(2, 3)
  local b64 = torch.randn(300, 12, 20, {dtype = "float64"})
  torch.set_num_threads(1)
  local want, want64 = torch.bmm(a, b), torch.matmul(a64, b64)
  T.near(want[2048], a[2048]:mm(b[2048]), 1e-5)
  for _, n in ipairs({2, 7, 200}) do
    torch.set_num_threads(n)
    for _ = 1, 3 do
      T.eq(torch.equal(torch.bmm(a, b), want), true)
      T.eq(torch.equal(torch.matmul(a64, b64), want64), true)
    end
  end
  torch.set_num_threads(before)
end)

-- The product cases fill(add, options) adds, in float32 and float64, from one seed.
local function product_cases(seed, fill)
  torch.manual_seed(seed)
  local cases = {}
  for _, dt in ipairs({"float32", "float64"}) do
    fill(function(a, b) cases[#cases + 1] = {a, b} end, {dtype = dt})
  end
  return cases
end

-- Runs check(threads) on 1, 2, 3 and 8 engine threads, then restores the count.
local function on_thread_counts(check)
  local before = torch.get_num_threads()
  for _, n in ipairs({1, 2, 3, 8}) do
    torch.set_num_threads(n)
    check(n)
  end
  torch.set_num_threads(before)
end

-- Single products of at least 1e5 multiply-adds are split by rows over the engine's threads,
-- each part one OpenBLAS call (tensor/cpu/gemm.cpp, split_by_rows): row counts that do not
-- divide evenly, transposed and strided operands, beta and alpha (addmm), against the
-- float64 product and across thread counts (to rounding: a part may meet other OpenBLAS
-- kernels than the whole, as OpenBLAS's own threads do), and the products left to OpenBLAS.
T.test("mm split by rows: values on any thread count", function()
  local cases = product_cases(4, function(add, o)
    add(torch.randn(64, 1000, o), torch.randn(1000, 100, o))                -- x @ w1
    add(torch.randn(64, 1001, o):t(), torch.randn(64, 100, o))              -- x^T @ g, 1001 rows
    add(torch.randn(97, 150, o), torch.randn(300, 150, o):t())              -- 97 rows, B transposed
    add(torch.randn(90, 600, o)[{{}, {1, 600, 2}}], torch.randn(300, 170, o)) -- strided A
    add(torch.randn(333, 77, o), torch.randn(77, 45, o))                    -- 333 rows, odd sizes
    add(torch.randn(37, 50, o), torch.randn(100, 50, o):t())                -- 37 rows: one part and a rest
    add(torch.randn(64, 1000, o), torch.randn(1000, 10, o))                 -- 10 columns: OpenBLAS
    add(torch.randn(20, 128, o), torch.randn(128, 512, o))                  -- 20 rows: OpenBLAS
  end)
  on_thread_counts(function(n)
    for i, c in ipairs(cases) do
      local ones = torch.ones(c[1]:size(1), c[2]:size(2), {dtype = c[1].dtype})
      local want = c[1]:double():mm(c[2]:double())
      local tol = c[1].dtype == "float32" and 1e-3 or 1e-10
      T.near(c[1]:mm(c[2]):double(), want, tol, "mm case " .. i .. ", " .. n .. " threads")
      T.near(torch.addmm(ones, c[1], c[2], {beta = 0.5, alpha = 2}):double(), want * 2 + 0.5, tol,
             "addmm case " .. i .. ", " .. n .. " threads")
    end
  end)
end)

-- Matrix-vector products of at least 32768 multiply-adds are split by the matrix's rows too
-- (tensor/cpu/gemm.cpp, split_gemv): A x writes its rows' part of y, A^T r sums over each
-- part's rows (the parts after the first through scratch). Transposed, strided and 1-D @ 2-D
-- operands, beta and alpha, rows that do not divide evenly, one product below the size, on
-- 1, 2, 3 and 8 threads, against the float64 sums of the elementwise products.
T.test("mv split by rows: values on any thread count", function()
  local cases = product_cases(5, function(add, o)
    local A, At = torch.randn(1000, 100, o), torch.randn(1001, 100, o)
    add(A, torch.randn(100, 1, o))                                      -- A x
    add(At:t(), torch.randn(1001, 1, o))                                -- A^T r, 1001 rows
    add(A, torch.randn(200, 1, o)[{{1, 200, 2}}])                       -- strided x
    add(At:t(), torch.randn(2002, 1, o)[{{1, 2002, 2}}])                -- A^T with a strided r
    add(torch.randn(1, 1000, o), A)                                     -- r^T A (1-D @ 2-D)
    add(torch.randn(1, 100, o), torch.randn(1000, 100, o):t())          -- x^T A^T
    add(torch.randn(300, 600, o)[{{}, {1, 600, 2}}], torch.randn(300, 1, o)) -- strided rows
    add(torch.randn(90, 30, o), torch.randn(30, 1, o))                  -- below the size: OpenBLAS
  end)
  on_thread_counts(function(n)
    for i, c in ipairs(cases) do
      local a, b = c[1], c[2]
      local want = (a:double():unsqueeze(3) * b:double():unsqueeze(1)):sum(2)
      local bias = torch.ones(a:size(1), b:size(2), {dtype = a.dtype})
      local tol = a.dtype == "float32" and 1e-3 or 1e-10
      local what = "case " .. i .. ", " .. n .. " threads"
      T.near(a:mm(b):double(), want, tol, "mm " .. what)
      T.near(torch.addmm(bias, a, b, {beta = 0.5, alpha = 2}):double(), want * 2 + 0.5, tol, "addmm " .. what)
      if b:size(2) == 1 then T.near(a:mv(b[{{}, 1}]):double(), want[{{}, 1}], tol, "mv " .. what) end
      if a:size(1) == 1 then T.near(a[1]:matmul(b):double(), want[1], tol, "1-D @ 2-D " .. what) end
    end
  end)
end)

-- float64 matrix-vector products with contiguous vectors run the engine's own kernels on
-- x86-64 CPUs with AVX2 and FMA (tensor/cpu/gemm.cpp, own_dgemv): rows in groups of 4 and
-- alone, columns in steps of 8, 4 and one by one. Every shape of 1-9 rows by 1-19 columns, both
-- orientations, against the elementwise sums; each output's sum has one order whatever the
-- shape around it, so a row of A x equals that row's own product and a column of A^T r equals
-- that column's, bit for bit (elsewhere OpenBLAS computes them: equal within rounding);
-- addmv's beta and alpha; beta 0 does not read the input (NaN there stays out).
local function cpu_has_avx2_fma()
  local f = io.open("/proc/cpuinfo", "r")
  if not f then return false end
  local info = f:read("a")
  f:close()
  local flags = info:match("\nflags%s*:([^\n]*)") or ""
  return flags:find(" avx2", 1, true) ~= nil and flags:find(" fma", 1, true) ~= nil
end

T.test("own float64 mv kernels: every tail, fixed order, alpha and beta", function()
  torch.manual_seed(3)
  local f64 = {dtype = "float64"}
  local same = cpu_has_avx2_fma() and T.eq or function(a, b, msg) T.near(a, b, 1e-12, msg) end
  for m = 1, 9 do
    for k = 1, 19 do
      local A, x, r = torch.randn(m, k, f64), torch.randn(k, f64), torch.randn(m, f64)
      local what = m .. " x " .. k
      local y, g = A:mv(x), A:t():mv(r)
      T.near(y, (A * x:view(1, k)):sum(2), 1e-12, "A x " .. what)
      T.near(g, (A * r:view(m, 1)):sum(1), 1e-12, "A^T r " .. what)
      for i = 1, m do
        same(A[{{i}}]:mv(x)[1]:item(), y[i]:item(), "row " .. i .. " of A x, " .. what)
      end
      for j = 1, k do
        same(A[{{}, {j}}]:t():mv(r)[1]:item(), g[j]:item(), "column " .. j .. " of A^T r, " .. what)
      end
      local nan = torch.full({m}, 0 / 0, f64)
      T.near(torch.addmv(nan, A, x, {beta = 0, alpha = 2}), y * 2, 1e-12, "beta 0 " .. what)
      local ones = torch.ones(k, f64)
      T.near(torch.addmv(ones, A:t(), r, {beta = 0.5, alpha = -1}), -g + 0.5, 1e-12, "addmv A^T " .. what)
    end
  end
end)

T.done()
