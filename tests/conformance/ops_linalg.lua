-- Conformance rows of the LAPACK decompositions and the linalg functions built on them
-- (svd, qr, eigh, cholesky, lstsq, slogdet, pinv, matrix_rank, matrix_power, cond,
-- multi_dot, norm's orders) against NumPy. Outputs that LAPACK fixes only up to signs are
-- compared through invariants: reconstructions, |U|, |V|.
local G, add = ...

local MAIN = {"float32", "float64"}
local TOL = {float32 = {2e-3, 2e-4}, float64 = {1e-9, 1e-10}}
local SHAPES = {{1, 1}, {3, 3}, {5, 3}, {3, 5}, {2, 4, 4}, {2, 1, 4, 2}, {0, 0}, {0, 3}, {3, 0}}
local SQUARE = {{1, 1}, {4, 4}, {2, 3, 3}, {0, 0}, {2, 0, 0}}

local function rnd(shape, dt) return G.make(shape, dt, {fn = G.randn}) end
local function mT(x) return x:transpose(-2, -1) end
-- A symmetric positive definite matrix (batch) from any one of its shape.
local function spd(a)
  local n = a:size(-1)
  return torch.matmul(a, mT(a)) + torch.eye(n, {dtype = a.dtype}) * n
end

-- Cases: each shape in each dtype, spelled np (odd) or torch (even).
local function cases(shapes, make)
  return function()
    local cs = {}
    for _, dt in ipairs(MAIN) do
      for i, s in ipairs(shapes) do
        local c = {a = make and make(s, dt) or rnd(s, dt), p = {np = i % 2 == 1}}
        cs[#cs + 1] = c
      end
    end
    return cs
  end
end
local function M(p) return p.np and np or torch end

-- Python helpers for the references (defined once per expression).
local PY_SVD = "(lambda u, s, vh: (s, (u * s[..., None, :]) @ vh, abs(u), abs(vh)))"

add({name = "linalg.svd reduced", out = "same,same,same,same", tol = TOL, grad = {"a"}, cases = cases(SHAPES),
     ref = PY_SVD .. "(*np.linalg.svd(a, full_matrices=False))",
     call = function(a, _, _, p)
       local U, S, Vh = M(p).linalg.svd(a, false)
       return S, torch.matmul(U * S:unsqueeze(-2), Vh), U:abs(), Vh:abs()
     end})
-- Full factors: the extra columns are any orthonormal completion, so only U U^T, Vh^T Vh
-- (identities) and the first k columns are compared.
add({name = "linalg.svd full", out = "same,same,same,same", tol = TOL, cases = cases(SHAPES),
     ref = "(lambda u, s, vh: (s, u @ u.swapaxes(-1, -2), vh.swapaxes(-1, -2) @ vh, "
        .. "abs(u[..., :s.shape[-1]])))(*np.linalg.svd(a))",
     call = function(a, _, _, p)
       local U, S, Vh = M(p).linalg.svd(a, {full_matrices = true})
       return S, torch.matmul(U, mT(U)), torch.matmul(mT(Vh), Vh), U:narrow(-1, 1, S:size(-1)):abs()
     end})
add({name = "linalg.svd compute_uv", out = "same", tol = TOL, cases = cases(SHAPES),
     ref = "np.linalg.svd(a, compute_uv=False)",
     call = function(a) return np.linalg.svd(a, {compute_uv = false}) end})
add({name = "linalg.svdvals", out = "same", tol = TOL, grad = {"a"}, cases = cases(SHAPES),
     ref = "np.linalg.svd(a, compute_uv=False)", call = function(a, _, _, p) return M(p).linalg.svdvals(a) end})
add({name = "linalg.svd int np", out = "float64", cast = "none", tol = TOL,
     cases = function() return {{a = torch.tensor({{1, 2}, {3, 4}, {5, 7}})}} end,
     ref = "np.linalg.svd(a, compute_uv=False)", call = function(a) return np.linalg.svdvals(a) end})

local PY_QR = "(lambda q, r: (q @ r, abs(q), abs(r)))"
for _, mode in ipairs({"reduced", "complete"}) do
  add({name = "linalg.qr " .. mode, out = "same,same,same", tol = TOL, grad = mode == "reduced" and {"a"} or nil,
       cases = cases(mode == "reduced" and SHAPES or {{1, 1}, {3, 3}, {3, 5}, {2, 2, 4}, {0, 0}, {0, 3}}),
       ref = PY_QR .. "(*np.linalg.qr(a, '" .. mode .. "'))",
       call = function(a, _, _, p)
         local Q, R = M(p).linalg.qr(a, mode)
         return torch.matmul(Q, R), Q:abs(), R:abs()
       end})
end
add({name = "linalg.qr complete tall", out = "same,same,same", tol = TOL, cases = cases({{5, 3}, {2, 4, 2}, {3, 0}}),
     ref = "(lambda q, r: (q @ r, q @ q.swapaxes(-1, -2), abs(r)))(*np.linalg.qr(a, 'complete'))",
     call = function(a, _, _, p)
       local Q, R = M(p).linalg.qr(a, {mode = "complete"})
       return torch.matmul(Q, R), torch.matmul(Q, mT(Q)), R:abs()
     end})
add({name = "linalg.qr r", out = "same", tol = TOL, cases = cases(SHAPES), ref = "abs(np.linalg.qr(a, 'r'))",
     call = function(a, _, _, p)
       if p.np then return np.linalg.qr(a, "r"):abs() end
       local Q, R = torch.linalg.qr(a, "r")
       assert(Q:numel() == 0)
       return R:abs()
     end})

local PY_EIGH = "(lambda w, v: (w, abs(v), (v * w[..., None, :]) @ v.swapaxes(-1, -2)))"
for _, uplo in ipairs({"L", "U"}) do
  add({name = "linalg.eigh " .. uplo, out = "same,same,same", tol = TOL, grad = {"a"}, cases = cases(SQUARE),
       ref = PY_EIGH .. "(*np.linalg.eigh(a, UPLO='" .. uplo .. "'))",
       call = function(a, _, _, p)
         local w, V = M(p).linalg.eigh(a, uplo)
         return w, V:abs(), torch.matmul(V * w:unsqueeze(-2), mT(V))
       end,
       -- only one triangle is read: the check perturbs a symmetric matrix, as PyTorch's does
       grad_call = function(a)
         local w, V = torch.linalg.eigh((a + mT(a)) * 0.5, {UPLO = uplo})
         return w, V:abs()
       end})
  add({name = "linalg.eigvalsh " .. uplo, out = "same", tol = TOL, cases = cases(SQUARE),
       ref = "np.linalg.eigvalsh(a, UPLO='" .. uplo .. "')",
       call = function(a, _, _, p) return M(p).linalg.eigvalsh(a, {UPLO = uplo}) end})
end

add({name = "linalg.cholesky", out = "same", tol = TOL, grad = {"a"}, cases = cases(SQUARE, function(s, dt)
       return spd(rnd(s, dt)) end),
     ref = "np.linalg.cholesky(a)", call = function(a, _, _, p) return M(p).linalg.cholesky(a) end,
     grad_call = function(a) return torch.linalg.cholesky(spd(a)) end})
add({name = "linalg.cholesky upper", out = "same", tol = TOL, grad = {"a"},
     cases = cases(SQUARE, function(s, dt) return spd(rnd(s, dt)) end),
     ref = "np.linalg.cholesky(a).swapaxes(-1, -2)",
     call = function(a) return torch.linalg.cholesky(a, {upper = true}) end,
     grad_call = function(a) return torch.linalg.cholesky(spd(a), {upper = true}) end})
-- Only the lower triangle is read: the strict upper one holds large noise, and the input is
-- a transposed (non-contiguous) view.
add({name = "linalg.cholesky lower triangle only", out = "same", tol = TOL,
     cases = cases(SQUARE, function(s, dt) return mT(spd(rnd(s, dt)) + torch.tril(rnd(s, dt) * 100, -1)) end),
     ref = "np.linalg.cholesky(a)", call = function(a, _, _, p) return M(p).linalg.cholesky(a) end})
add({name = "linalg.cholesky upper, lower triangle only", out = "same", tol = TOL,
     cases = cases(SQUARE, function(s, dt) return mT(spd(rnd(s, dt)) + torch.tril(rnd(s, dt) * 100, -1)) end),
     ref = "np.linalg.cholesky(a).swapaxes(-1, -2)",
     call = function(a) return torch.linalg.cholesky(a, {upper = true}) end})
add({name = "linalg.cholesky int np", out = "float64", cast = "none", tol = TOL,
     cases = function() return {{a = torch.tensor({{4, 2, 0}, {2, 5, 1}, {0, 1, 3}})}} end,
     ref = "np.linalg.cholesky(a)", call = function(a) return np.linalg.cholesky(a) end})

local function lstsq_cases()
  local cs = {}
  for _, dt in ipairs(MAIN) do
    for i, s in ipairs({{{5, 3}, {5}}, {{5, 3}, {5, 2}}, {{3, 5}, {3, 2}}, {{4, 4}, {4, 1}}, {{1, 1}, {1}}}) do
      cs[#cs + 1] = {a = rnd(s[1], dt), b = rnd(s[2], dt), p = {np = i % 2 == 1}}
    end
    -- rank deficient: two equal columns
    local a = rnd({6, 3}, dt)
    a = torch.cat({a, a:narrow(2, 1, 1)}, 2)
    cs[#cs + 1] = {a = a, b = rnd({6, 2}, dt), p = {}}
  end
  return cs
end
add({name = "linalg.lstsq", out = "same,same,int64,same", tol = TOL, grad = {"a", "b"}, cases = lstsq_cases,
     ref = "(lambda x, r, k, s: (x, r, np.int64(k), s))(*np.linalg.lstsq(a, b, rcond=None))",
     call = function(a, b, _, p) return M(p).linalg.lstsq(a, b) end,
     grad_call = function(a, b)
       if a:size(2) == 4 and a:size(1) == 6 then a = a:narrow(2, 1, 3) end  -- full rank for the gradient
       return (torch.linalg.lstsq(a, b))
     end})
add({name = "linalg.lstsq rcond", out = "same,same,int64,same", tol = TOL,
     cases = function() return {{a = torch.tensor({{1, 0}, {0, 1e-3}, {0, 0}}, {dtype = torch.float64}),
                                  b = torch.tensor({1, 1, 1}, {dtype = torch.float64}), p = {}}} end,
     ref = "(lambda x, r, k, s: (x, r, np.int64(k), s))(*np.linalg.lstsq(a, b, rcond=1e-2))",
     call = function(a, b) return np.linalg.lstsq(a, b, 1e-2) end})

add({name = "linalg.slogdet", out = "same,same", tol = TOL, grad = {"a"}, cases = cases(SQUARE),
     ref = "np.linalg.slogdet(a)", call = function(a, _, _, p) return M(p).linalg.slogdet(a) end,
     grad_call = function(a) local _, l = torch.linalg.slogdet(a) return l end})
add({name = "linalg.slogdet singular", out = "same,same", cast = "none",
     cases = function() return {{a = torch.tensor({{1., 2}, {2, 4}}, {dtype = torch.float64})}} end,
     ref = "np.linalg.slogdet(a)", call = function(a) return torch.slogdet(a) end})

add({name = "linalg.pinv", out = "same", tol = TOL, grad = {"a"}, cases = cases(SHAPES),
     ref = "np.linalg.pinv(a) if min(a.shape[-2:]) > 0 else np.zeros(a.shape[:-2] + a.shape[-1:] + a.shape[-2:-1])",
     call = function(a, _, _, p) return M(p).linalg.pinv(a) end})
add({name = "linalg.pinv hermitian", out = "same", tol = TOL, cases = cases({{3, 3}, {2, 4, 4}}, function(s, dt)
       local x = rnd(s, dt) return x + mT(x) end),
     ref = "np.linalg.pinv(a, hermitian=True)",
     call = function(a, _, _, p) return M(p).linalg.pinv(a, {hermitian = true}) end})
add({name = "linalg.pinv rcond", out = "same", tol = TOL,
     cases = function() return {{a = torch.tensor({{1, 0}, {0, 1e-3}, {0, 0}}, {dtype = torch.float64})}} end,
     ref = "np.linalg.pinv(a, rcond=1e-2)", call = function(a) return np.linalg.pinv(a, 1e-2) end})

local function rank_cases()
  local cs = {}
  for _, dt in ipairs(MAIN) do
    local x = rnd({5, 2}, dt)
    cs[#cs + 1] = {a = torch.matmul(x, mT(x)), p = {np = true}}  -- rank 2
    cs[#cs + 1] = {a = rnd({2, 3, 4}, dt), p = {}}
    cs[#cs + 1] = {a = torch.zeros(3, 3, {dtype = dt}), p = {np = true}}
  end
  return cs
end
add({name = "linalg.matrix_rank", out = "int64", cast = "none", cases = rank_cases,
     ref = "np.asarray(np.linalg.matrix_rank(a), dtype=np.int64)",
     call = function(a, _, _, p) return M(p).linalg.matrix_rank(a) end})
add({name = "linalg.matrix_rank tol", out = "int64", cast = "none", cases = rank_cases,
     ref = "np.asarray(np.linalg.matrix_rank(a, tol=0.5), dtype=np.int64)",
     call = function(a) return np.linalg.matrix_rank(a, 0.5) end})

for _, n in ipairs({-2, 0, 1, 3}) do
  add({name = "linalg.matrix_power " .. n, out = "same", tol = TOL, grad = n ~= 0 and {"a"} or nil,
       cases = cases({{1, 1}, {3, 3}, {2, 4, 4}}, function(s, dt)
         return rnd(s, dt) + torch.eye(s[#s], {dtype = dt}) * 3 end),
       ref = "np.linalg.matrix_power(a, " .. n .. ")",
       call = function(a, _, _, p) return M(p).linalg.matrix_power(a, n) end})
end
add({name = "linalg.matrix_power int", out = "int64", cast = "none",
     cases = function() return {{a = torch.tensor({{1, 2}, {3, 4}})}} end,
     ref = "np.linalg.matrix_power(a, 5)", call = function(a) return np.linalg.matrix_power(a, 5) end})

for _, p_ in ipairs({"nil", "'fro'", "'nuc'", "1", "-1", "2", "-2", "math.huge", "-math.huge"}) do
  local pv = load("return " .. p_)()
  local py = p_:gsub("math.huge", "np.inf"):gsub("nil", "None")
  add({name = "linalg.cond " .. p_, out = "same", tol = TOL, cases = cases({{3, 3}, {2, 4, 4}, {1, 1}}),
       ref = "np.linalg.cond(a, " .. py .. ")",
       call = function(a, _, _, p) return M(p).linalg.cond(a, pv) end})
end
add({name = "linalg.cond singular", out = "same", cast = "none",
     cases = function() return {{a = torch.tensor({{1., 2}, {2, 4}}, {dtype = torch.float64})}} end,
     ref = "np.linalg.cond(a, 1)", call = function(a) return np.linalg.cond(a, 1) end})

add({name = "linalg.multi_dot", out = "same", tol = TOL, grad = {"a", "b", "c"},
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         cs[#cs + 1] = {a = rnd({10, 3}, dt), b = rnd({3, 20}, dt), c = rnd({20, 2}, dt), p = {np = true}}
         cs[#cs + 1] = {a = rnd({3}, dt), b = rnd({3, 5}, dt), c = rnd({5}, dt), p = {}}
         cs[#cs + 1] = {a = rnd({2, 7}, dt), b = rnd({7, 1}, dt), c = rnd({1, 6}, dt), p = {}}
       end
       return cs
     end,
     ref = "np.linalg.multi_dot([a, b, c])",
     call = function(a, b, c, p) return M(p).linalg.multi_dot({a, b, c}) end})

-- linalg.norm: every order NumPy takes, over one or two (negative) axes, with keepdims.
local NORM_CASES = {
  {{5}, 0}, {{5}, 3.5}, {{5}, -1}, {{5}, math.huge}, {{5}, -math.huge}, {{5}, 1}, {{5}, -2},
  {{3, 4}, "fro"}, {{3, 4}, "nuc"}, {{3, 4}, 1}, {{3, 4}, -1}, {{3, 4}, 2}, {{3, 4}, -2},
  {{3, 4}, math.huge}, {{3, 4}, -math.huge},
  {{2, 3, 4}, "nuc", {-1, -3}}, {{2, 3, 4}, 2, {-2, -1}}, {{2, 3, 4}, -2, {1, 3}}, {{2, 3, 4}, 1, {-1, -2}},
  {{2, 3, 4}, 3, -2}, {{2, 3, 4}, 0, -1}, {{2, 3, 4}, nil, -3}, {{2, 3, 4}, "fro", {-1, 1}},
  {{2, 3, 4}, math.huge, {-3, -2}, true}, {{2, 3, 4}, 2, -1, true}, {{2, 0, 4}, 1, {-2, -1}},
}
add({name = "linalg.norm orders", out = "same", tol = TOL,
     ref = "np.linalg.norm(a, p.ord, axis=ax(p.dim, a), keepdims=p.keep)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for i, c in ipairs(NORM_CASES) do
           cs[#cs + 1] = {a = rnd(c[1], dt), p = {ord = c[2], dim = c[3], keep = c[4] or false, np = i % 2 == 1}}
         end
       end
       return cs
     end,
     call = function(a, _, _, p)
       if p.np then return np.linalg.norm(a, p.ord, p.dim, p.keep) end
       return torch.linalg.norm(a, p.ord, p.dim, {keepdim = p.keep})
     end})
add({name = "linalg.norm int np", out = "float64", cast = "none",
     cases = function() return {{a = torch.tensor({{1, -2}, {3, 4}})}} end,
     ref = "np.linalg.norm(a, 'nuc')", call = function(a) return np.linalg.norm(a, "nuc") end})

-- Errors name the op and the offending value.
local function err(name, expect, call, make)
  add({name = "error: " .. name, expect_error = expect, cast = "none", out = "same", ref = "None", call = call,
       cases = function() return {make()} end})
end
err("cholesky not positive definite", "linalg.cholesky: the matrix is not positive definite (leading minor of order 2)",
    function(a) return torch.linalg.cholesky(a) end,
    function() return {a = torch.tensor({{1., 2}, {2, 1}})} end)
err("cholesky batch", "linalg.cholesky: matrix 2 of the batch is not positive definite (leading minor of order 1)",
    function(a) return np.linalg.cholesky(a) end,
    function() return {a = torch.tensor({{{1., 0}, {0, 1}}, {{-1., 0}, {0, 1}}})} end)
err("cholesky non-square", "linalg.cholesky: A must be a square matrix", function(a) return torch.linalg.cholesky(a) end,
    function() return {a = G.make({2, 3}, "float32")} end)
err("eigh non-square", "linalg.eigh: A must be a square matrix", function(a) return torch.linalg.eigh(a) end,
    function() return {a = G.make({2, 3}, "float64")} end)
err("svd 1-D", "linalg.svd: expected a matrix or a batch of matrices, got a 1-D tensor",
    function(a) return torch.linalg.svd(a) end, function() return {a = G.make({3}, "float32")} end)
err("svd nan", "linalg.svd: the input contains NaN or infinity",
    function(a) return np.linalg.svd(a) end, function() return {a = torch.tensor({{0 / 0, 1}, {1, 1}})} end)
err("svd half", "linalg.svd: float16 is not supported", function(a) return torch.linalg.svd(a) end,
    function() return {a = G.make({2, 2}, "float16")} end)
err("qr raw", "linalg.qr: mode 'raw'", function(a) return np.linalg.qr(a, "raw") end,
    function() return {a = G.make({2, 2}, "float32")} end)
err("qr mode", "linalg.qr: unknown mode 'full'", function(a) return torch.linalg.qr(a, "full") end,
    function() return {a = G.make({2, 2}, "float32")} end)
err("eigh UPLO", "linalg.eigh: UPLO must be 'L' or 'U', got 'X'", function(a) return torch.linalg.eigh(a, "X") end,
    function() return {a = G.make({2, 2}, "float32")} end)
err("svd int torch", "linalg.svd: expected a floating-point tensor, got int64", function(a) return torch.linalg.svd(a) end,
    function() return {a = torch.tensor({{1, 2}, {3, 4}})} end)
err("lstsq rows", "linalg.lstsq: shapes {3,2} and {4} are incompatible (3 rows ~= 4)",
    function(a, b) return torch.linalg.lstsq(a, b) end,
    function() return {a = G.make({3, 2}, "float64"), b = G.make({4}, "float64")} end)
err("matrix_power n", "linalg.matrix_power: n must be an integer, got 1.5",
    function(a) return torch.linalg.matrix_power(a, 1.5) end, function() return {a = G.make({2, 2}, "float64")} end)
err("matrix_power square", "linalg.matrix_power: expected a square matrix",
    function(a) return np.linalg.matrix_power(a, 2) end, function() return {a = G.make({2, 3}, "float64")} end)
err("multi_dot shapes", "linalg.multi_dot: tensors 1 and 2 cannot be multiplied (3 ~= 4)",
    function(a, b) return torch.linalg.multi_dot({a, b}) end,
    function() return {a = G.make({2, 3}, "float64"), b = G.make({4, 2}, "float64")} end)
err("matrix_rank keyword", "linalg.matrix_rank: unknown keyword 'atol'",
    function(a) return np.linalg.matrix_rank(a, {atol = 1}) end, function() return {a = G.make({2, 2}, "float64")} end)
err("qr r gradient", "linalg.qr: the gradient of QR needs Q",
    function(a) return torch.linalg.qr(a:requires_grad_(), "r") end, function() return {a = G.make({2, 2}, "float64")} end)
