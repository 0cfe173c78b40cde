-- The LAPACK decompositions and the linalg functions on them (svd, qr, eigh, cholesky,
-- lstsq, slogdet, pinv, matrix_rank, matrix_power, cond, multi_dot): every option, the
-- errors, and gradients, with expected values from NumPy 1.24 / PyTorch 1.13 (computed
-- from the same inputs; see tests/conformance/ops_linalg.lua for the randomised rows).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = torch or require "torch"
local np = np or require "numpy"

local f64 = {dtype = torch.float64}
local A = {{4., 1, 2}, {1, 3, 0.5}, {2, 0.5, 5}}  -- symmetric positive definite
local B = {{1., 2}, {3, 4}, {5, 7}}
local function mT(x) return x:transpose(-2, -1) end

T.test("svd: factors, full_matrices positional and keyword, compute_uv, svdvals", function()
  local b = torch.tensor(B, f64)
  local U, S, Vh = torch.linalg.svd(b)
  T.eq(U:size(), {3, 3})
  T.eq(Vh:size(), {2, 2})
  T.near(S, torch.tensor({10.191428257097224, 0.3671376859438993}, f64), 1e-13)
  local u, s, vh = np.linalg.svd(b, false)
  T.eq(u:size(), {3, 2})
  T.near(torch.matmul(u * s:unsqueeze(-2), vh), b, 1e-13)
  local u2 = np.linalg.svd(b, {full_matrices = false})
  T.eq(u2:size(), {3, 2})
  local only = np.linalg.svd(b, {compute_uv = false})
  T.near(only, S, 1e-14)
  T.near(torch.linalg.svdvals(b), S, 1e-14)
  T.eq(np.linalg.svdvals({{3, 0}, {0, 4}}):tolist(), {4, 3})
  T.eq(np.linalg.svdvals({{3, 0}, {0, 4}}).dtype, "float64")
  T.eq(torch.linalg.svdvals(torch.tensor({{3., 0}, {0, 4}})).dtype, "float32")
end)

T.test("qr: modes reduced, complete, r (np: R alone; torch: empty Q)", function()
  local b = torch.tensor(B, f64)
  local Q, R = torch.linalg.qr(b)
  T.near(Q, torch.tensor({{-0.16903085094570325, 0.9486832980505138}, {-0.50709255283711, -0.31622776601683833},
                          {-0.8451542547285166, 0}}, f64), 1e-13)
  T.near(R, torch.tensor({{-5.916079783099616, -8.282511696339462}, {0, 0.632455532033676}}, f64), 1e-13)
  local Qc, Rc = np.linalg.qr(b, "complete")
  T.eq({Qc:size(), Rc:size()}, {{3, 3}, {3, 2}})
  T.near(torch.matmul(Qc, mT(Qc)), torch.eye(3, f64), 1e-14)
  local Qk = torch.linalg.qr(b, {mode = "complete"})
  T.eq(Qk:size(), {3, 3})
  T.near(np.linalg.qr(b, "r"), R, 1e-13)
  local q0, r0 = torch.linalg.qr(b, "r")
  T.eq(q0:numel(), 0)
  T.near(r0, R, 1e-13)
  T.error(function() np.linalg.qr(b, "raw") end, "linalg.qr: mode 'raw' (Householder reflectors) is not supported")
  T.error(function() np.linalg.qr(b, "economic") end, "linalg.qr: unknown mode 'economic'")
end)

T.test("eigh / eigvalsh: UPLO positional and keyword", function()
  local a = torch.tensor(A, f64)
  local w, V = torch.linalg.eigh(a, "L")
  T.near(w, torch.tensor({2.096521617296718, 3.0722239520050754, 6.831254430698204}, f64), 1e-13)
  T.near(torch.matmul(V * w:unsqueeze(-2), mT(V)), a, 1e-13)
  local m = {{1., 9}, {2, 1}}  -- not symmetric: only the named triangle is read
  T.near(np.linalg.eigvalsh(m, "U"), torch.tensor({-8., 10}, f64), 1e-13)
  T.near(np.linalg.eigvalsh(m), torch.tensor({-1., 3}, f64), 1e-13)
  T.near(np.linalg.eigh(m, {UPLO = "U"}), torch.tensor({-8., 10}, f64), 1e-13)
  T.near(np.linalg.eigvalsh(m, {UPLO = "L"}), torch.tensor({-1., 3}, f64), 1e-13)
  T.error(function() torch.linalg.eigh(a, "X") end, "linalg.eigh: UPLO must be 'L' or 'U', got 'X'")
  T.error(function() torch.linalg.eigh(torch.zeros(2, 3)) end, "linalg.eigh: A must be a square matrix")
  T.error(function() torch.linalg.eigvalsh(torch.tensor({{0 / 0, 0}, {0, 1}})) end,
          "linalg.eigvalsh: the input contains NaN or infinity")
end)

T.test("cholesky: lower, upper, batched errors", function()
  local a = torch.tensor(A, f64)
  local L = torch.tensor({{2, 0, 0}, {0.5, 1.6583123951777, 0}, {1, 0, 2}}, f64)
  T.near(np.linalg.cholesky(a), L, 1e-13)
  T.near(torch.linalg.cholesky(a, {upper = true}), mT(L), 1e-13)
  T.error(function() torch.linalg.cholesky(torch.tensor({{1., 2}, {2, 1}})) end,
          "linalg.cholesky: the matrix is not positive definite (leading minor of order 2)")
  T.error(function() torch.linalg.cholesky(torch.tensor({{{1., 0}, {0, 1}}, {{1., 0}, {0, -1}}})) end,
          "linalg.cholesky: matrix 2 of the batch is not positive definite (leading minor of order 2)")
  T.error(function() torch.linalg.cholesky(torch.eye(2):half()) end, "linalg.cholesky: float16 is not supported")
  T.eq(np.linalg.cholesky(np.zeros{0, 0}):size(), {0, 0})
end)

T.test("lstsq: solution, residuals, rank, singular values; rcond positional and keyword", function()
  local x, res, rank, s = np.linalg.lstsq(B, {1, 2, 4})
  T.near(x, torch.tensor({0.07142857142857093, 0.5000000000000003}, f64), 1e-13)
  T.near(res, torch.tensor({0.07142857142857144}, f64), 1e-13)
  T.eq(rank:item(), 2)
  T.eq(rank.dtype, "int64")
  T.near(s, torch.tensor({10.191428257097224, 0.36713768594389934}, f64), 1e-13)
  local d = torch.tensor({{1., 0}, {0, 1e-3}, {0, 0}}, f64)
  local x2, r2, k2 = torch.linalg.lstsq(d, torch.tensor({1., 1, 1}, f64), 1e-2)
  T.eq({x2:tolist(), r2:numel(), k2:item()}, {{1, 0}, 0, 1})
  local _, _, k3 = torch.linalg.lstsq(d, torch.tensor({1., 1, 1}, f64), {rcond = 1e-4})
  T.eq(k3:item(), 2)
  T.error(function() torch.linalg.lstsq(d, torch.ones(4, f64)) end, "linalg.lstsq: shapes {3,2} and {4} are incompatible")
end)

T.test("slogdet, pinv, matrix_rank, matrix_power, cond, multi_dot", function()
  local sign, logdet = torch.linalg.slogdet(torch.tensor(A, f64))
  T.eq(sign:item(), 1)
  T.near(logdet, torch.tensor(3.7841896339182615, f64), 1e-13)
  local s2, l2 = np.linalg.slogdet({{0, 1}, {1, 0}})
  T.eq({s2:item(), l2:item()}, {-1, 0})
  local s3, l3 = torch.slogdet(torch.tensor({{1., 2}, {2, 4}}))
  T.eq({s3:item(), l3:item()}, {0, -math.huge})
  T.near(np.linalg.pinv(B), torch.tensor({{-2.0714285714285707, 0.7857142857142864, 0.14285714285714238},
                                          {1.4999999999999996, -0.5000000000000006, 3.44e-16}}, f64), 1e-12)
  local dd = {{1., 0}, {0, 1e-3}}
  T.eq(np.linalg.pinv(dd, 1e-2):tolist(), {{1, 0}, {0, 0}})
  T.eq(np.linalg.pinv(dd, {rcond = 1e-4}):tolist(), {{1, 0}, {0, 1000}})
  T.eq(torch.linalg.pinv(torch.tensor(dd, f64), {rtol = 1e-2}):tolist(), {{1, 0}, {0, 0}})
  T.eq(torch.linalg.pinv(torch.tensor(dd, f64), {atol = 0.5}):tolist(), {{1, 0}, {0, 0}})
  T.near(torch.linalg.pinv(torch.tensor(A, f64), {hermitian = true}), torch.linalg.inv(torch.tensor(A, f64)), 1e-13)
  T.error(function() torch.linalg.pinv(torch.tensor(dd), 1e-2, {rtol = 1e-2}) end, "linalg.pinv: give rcond or rtol")
  T.eq(np.linalg.matrix_rank({{1., 2}, {2, 4}}):item(), 1)
  T.eq(np.linalg.matrix_rank({1, 0}):item(), 1)
  T.eq(np.linalg.matrix_rank(dd, 1e-2):item(), 1)
  T.eq(np.linalg.matrix_rank(dd, {tol = 1e-4, hermitian = true}):item(), 2)
  T.eq(torch.linalg.matrix_rank(torch.tensor(dd), {atol = 1e-2}):item(), 1)
  T.eq(torch.linalg.matrix_rank(torch.tensor(dd), {rtol = 1e-4}):item(), 2)
  T.eq(torch.linalg.matrix_rank(torch.ones(2, 3, 3)):tolist(), {1, 1})
  T.eq(np.linalg.matrix_power({{1., 1}, {1, 0}}, 10):tolist(), {{89, 55}, {55, 34}})
  T.eq(torch.matrix_power(torch.tensor({{2., 0}, {0, 4}}), -2):tolist(), {{0.25, 0}, {0, 0.0625}})
  T.eq(np.linalg.matrix_power({{1, 2}, {3, 4}}, 0).dtype, "int64")
  T.near(np.linalg.cond(A), torch.tensor(3.2583753844172176, f64), 1e-13)
  T.near(np.linalg.cond(A, "fro"), torch.tensor(4.633649007531753, f64), 1e-13)
  T.near(np.linalg.cond(A, {p = -math.huge}), torch.tensor(1.6875, f64), 1e-13)
  T.eq(np.linalg.cond(torch.tensor({{{1., 2}, {2, 4}}, {{1, 0}, {0, 2}}}), 1):tolist(), {math.huge, 2})
  local x = torch.tensor({{{3., 4}}, {{0, 5}}})  -- (2, 1, 2)
  T.eq(np.linalg.norm(x, 2, -1, true):tolist(), {{{5}}, {{5}}})
  T.eq(torch.linalg.norm(x, {p = 1, dim = {-1, -3}, keepdim = true}):tolist(), {{{7}}})
  T.eq(np.linalg.norm(x, {ord = 1, axis = {-1, -3}, keepdims = true}):tolist(), {{{7}}})
  T.eq(np.linalg.multi_dot({{1, 2}, {{1, 0}, {0, 1}}, {3, 4}}):item(), 11)
  T.error(function() torch.linalg.multi_dot({torch.ones(2, 3), torch.ones(4, 2)}) end,
          "linalg.multi_dot: tensors 1 and 2 cannot be multiplied (3 ~= 4)")
  T.error(function() torch.linalg.matrix_power(torch.ones(2, 2), 0.5) end, "linalg.matrix_power: n must be an integer")
end)

T.test("gradients match PyTorch's", function()
  local function leaf(t) return torch.tensor(t, f64):requires_grad_() end
  local a = leaf(A)
  torch.linalg.svdvals(a):sum():backward()
  T.near(a.grad, torch.eye(3, f64), 1e-12)
  a = leaf(A)
  torch.linalg.eigvalsh(a):pow(2):sum():backward()
  T.near(a.grad, torch.tensor({{8, 2, 4}, {2, 6, 1}, {4, 1, 10}}, f64), 1e-12)
  a = leaf(A)
  torch.linalg.cholesky(a):sum():backward()
  T.near(a.grad, torch.tensor({{0.21922229518055114, 0.02386649156667728, 0.04962216385555909},
                               {0.023866491566677278, 0.30151134457776363, 0.30151134457776363},
                               {0.04962216385555909, 0.30151134457776363, 0.25}}, f64), 1e-12)
  a = leaf(A)
  local _, l = torch.linalg.slogdet(a)
  l:backward()
  T.near(a.grad, torch.tensor({{0.3352272727272727, -0.09090909090909091, -0.125},
                               {-0.09090909090909091, 0.36363636363636365, 0}, {-0.125, 0, 0.25}}, f64), 1e-12)
  local b = leaf(B)
  torch.linalg.pinv(b):sum():backward()
  T.near(b.grad, torch.tensor({{-0.44897959183673297, 0.4285714285714288}, {0.9387755102040791, -0.7142857142857129},
                               {-0.24489795918367527, 0.14285714285714404}}, f64), 1e-11)
  b = leaf(B)
  local Q, R = torch.linalg.qr(b)
  local total = Q:sum() + R:sum()
  total:backward()
  T.near(b.grad, torch.tensor({{-2.2843466535733374, 1.0055294228311238}, {-0.93657072008674, -0.1456893916750098},
                               {-0.16440419385321114, -1.296908206181142}}, f64), 1e-12)
  -- a factor changed in place before backward is an error there, not a wrong gradient
  local U, S = torch.linalg.svd(leaf(B), false)
  local total = U:sum() + S:sum()
  S:mul_(2)
  T.error(function() total:backward() end, "modified by an in-place operation")
  T.error(function() torch.linalg.qr(leaf(B), "r") end, "linalg.qr: the gradient of QR needs Q")
  T.error(function() torch.linalg.qr(leaf(B), "complete") end,
          "linalg.qr: QR with mode 'complete' is not differentiable when rows > columns")
end)

T.done()
