-- Linear-algebra functions written from the LAPACK-backed ops (bind_linalg.cpp):
-- matrix_rank, matrix_power, cond and multi_dot, for torch.linalg and (through
-- numpy_linalg.lua) np.linalg. They compose differentiable ops, so autograd needs no formula
-- of its own. torch._linalg_install(M, numpy) adds them to M.linalg with M's conventions.
-- Loaded after torch_doc.lua: each function's help() text goes into torch._doc here.
local torch = ...

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

-- Splits f(x, ...)'s extra arguments into positionals and a checked keyword table (a
-- trailing plain table).
local function options(op, valid, max_pos, ...)
  local n = select("#", ...)
  local args = {...}
  local kw = {}
  local last = args[n]
  if n > 0 and type(last) == "table" and not torch.is_tensor(last) and last[1] == nil then
    kw = last
    args[n] = nil
    n = n - 1
  end
  torch._check_keywords(op, kw, valid)
  if n > max_pos then fail(op, "expected at most %d positional arguments, got %d", max_pos + 1, n + 1) end
  return kw, args
end

local function eps_of(x) return x.dtype == torch.float32 and 1.1920928955078125e-07 or 2.220446049250313e-16 end

-- One value given positionally or as a keyword (not both).
local function one_of(op, name, pos, kwv)
  if pos ~= nil and kwv ~= nil then fail(op, "%s given twice (positionally and as a keyword)", name) end
  if pos ~= nil then return pos end
  return kwv
end

local function mT(x) return x:transpose(-2, -1) end

local function check_matrix(op, A)
  if A:dim() < 2 then fail(op, "expected a matrix or a batch of matrices, got a %d-D tensor", A:dim()) end
end

local DOCS = {
  matrix_rank = "linalg.matrix_rank(A[, tol][, hermitian][, {tol=, hermitian=}]) (np) / (A[, {atol=, rtol=, "
    .. "hermitian=}]) (torch) -> int64 Tensor: the number of singular values (|eigenvalues| with hermitian) "
    .. "above the tolerance: tol, or max(atol, rtol * largest); default largest * max(m, n) * eps.",
  matrix_power = "linalg.matrix_power(A, n) -> Tensor: A^n for an integer n by repeated squaring (n < 0: of "
    .. "inv(A); n = 0: the identity in A's dtype); batched.",
  cond = "linalg.cond(A[, p][, {p=}]) -> Tensor: the condition number, s_max / s_min for p nil or 2 (-2: the "
    .. "inverse), else norm(A, p) * norm(inv(A), p) ('fro', 'nuc', 1, -1, math.huge, -math.huge); infinity for "
    .. "a singular matrix.",
  multi_dot = "linalg.multi_dot({A, B, ...}) -> Tensor: the product of the matrices in the cheapest order; "
    .. "the first may be a row vector and the last a column vector (1-D), as in NumPy.",
}

function torch._linalg_install(M, numpy)
  local L = M.linalg
  local function as(op, x)
    if numpy then return M.asarray(x) end
    if not torch.is_tensor(x) then fail(op, "expected a tensor, got a %s", type(x)) end
    return x
  end

  -- The number of singular values (|eigenvalues| with hermitian) above a tolerance. np: tol
  -- (absolute; default largest * max(m, n) * eps); torch: max(atol, rtol * largest) with
  -- rtol defaulting to eps * max(m, n) unless atol > 0 (tol: an absolute tolerance).
  function L.matrix_rank(A, ...)
    local op = "linalg.matrix_rank"
    local kw, pos = options(op, numpy and {"tol", "hermitian"} or {"atol", "rtol", "hermitian", "tol"},
                            numpy and 2 or 0, ...)
    A = as(op, A)
    local tol = one_of(op, "tol", pos[1], kw.tol)
    local herm = one_of(op, "hermitian", pos[2], kw.hermitian)
    if numpy and A:dim() < 2 then return M.asarray(A:ne(0):any():item() and 1 or 0) end
    check_matrix(op, A)
    local S = herm and L.eigvalsh(A):abs() or L.svdvals(A)
    local m = math.max(A:size(-2), A:size(-1))
    if S:size(-1) == 0 then return S:gt(0):sum(-1) end
    local smax = S:amax(-1, true)
    local cutoff
    if tol ~= nil then
      cutoff = torch.is_tensor(tol) and tol:unsqueeze(-1) or tol
    elseif numpy then
      cutoff = smax * (m * eps_of(S))
    else
      local atol, rtol = kw.atol or 0, kw.rtol
      if rtol == nil then rtol = atol > 0 and 0 or m * eps_of(S) end
      cutoff = torch.clamp(smax * rtol, atol)
    end
    return S:gt(cutoff):sum(-1)
  end

  -- A^n by repeated squaring (n < 0: of inv(A); n = 0: the identity in A's dtype).
  function L.matrix_power(A, n, ...)
    local op = "linalg.matrix_power"
    options(op, {}, 0, ...)
    A = as(op, A)
    if math.type(n) ~= "integer" then fail(op, "n must be an integer, got %s", tostring(n)) end
    check_matrix(op, A)
    if A:size(-1) ~= A:size(-2) then
      fail(op, "expected a square matrix or a batch of square matrices, got shape (%d, %d) in the last dims",
           A:size(-2), A:size(-1))
    end
    if n == 0 then
      local I = torch.eye(A:size(-1), {dtype = A.dtype, device = A.device})
      return (A * 0 + I)  -- broadcast to A's batch shape, keeping A's dtype and history
    end
    if n < 0 then
      A = L.inv(A)
      n = -n
    end
    local result, base = nil, A
    while n > 0 do
      if n % 2 == 1 then result = result and torch.matmul(result, base) or base end
      n = n // 2
      if n > 0 then base = torch.matmul(base, base) end
    end
    return result
  end

  -- Condition number: s_max / s_min for p nil / 2 (-2: the inverse ratio), else
  -- norm(A, p) * norm(inv(A), p) over the last two dims (infinity for a singular matrix).
  function L.cond(A, ...)
    local op = "linalg.cond"
    local kw, pos = options(op, {"p"}, 1, ...)
    A = as(op, A)
    local p = one_of(op, "p", pos[1], kw.p)
    check_matrix(op, A)
    if p == nil or p == 2 or p == -2 then
      local S = L.svdvals(A)
      local k = S:size(-1)
      if k == 0 then fail(op, "expected non-empty matrices, got shape %s", tostring(A:size())) end
      local big, small = S:narrow(-1, 1, 1):squeeze(-1), S:narrow(-1, k, 1):squeeze(-1)
      if p == -2 then return small / big end
      return big / small
    end
    if A:size(-1) ~= A:size(-2) then
      fail(op, "p = %s needs square matrices, got shape (%d, %d) in the last dims", tostring(p), A:size(-2), A:size(-1))
    end
    local function norm2(x) return L.norm(x, p, {-2, -1}) end
    local ok, inv = pcall(L.inv, A)
    if ok then return norm2(A) * norm2(inv) end
    -- Some matrix is singular: one at a time, infinity for the singular ones.
    if A:dim() == 2 then return torch.full({}, math.huge, {dtype = norm2(A).dtype, device = A.device}) end
    local flat = A:reshape(-1, A:size(-2), A:size(-1))
    local parts = {}
    for i = 1, flat:size(1) do parts[i] = L.cond(flat:select(1, i), p) end
    local lead = {}
    for d = 1, A:dim() - 2 do lead[d] = A:size(d) end
    return torch.stack(parts):reshape(table.unpack(lead))
  end

  -- The product of a list of matrices in the cheapest order (dynamic programming over the
  -- chain's dims); the first and last may be vectors, as in NumPy.
  function L.multi_dot(list, ...)
    local op = "linalg.multi_dot"
    options(op, {}, 0, ...)
    if type(list) ~= "table" or torch.is_tensor(list) then fail(op, "expected a list of tensors, got a %s", type(list)) end
    local n = #list
    if n < 2 then fail(op, "expected at least 2 tensors, got %d", n) end
    local mats = {}
    local given = {}  -- each operand's number of dims, for the message
    for i = 1, n do
      mats[i] = as(op, list[i])
      given[i] = mats[i]:dim()
    end
    local first_vec, last_vec = mats[1]:dim() == 1, mats[n]:dim() == 1
    if first_vec then mats[1] = mats[1]:unsqueeze(1) end
    if last_vec then mats[n] = mats[n]:unsqueeze(2) end
    for i = 1, n do
      if mats[i]:dim() ~= 2 then
        fail(op, "tensor %d must be 2-D (the first and last may be 1-D), got %d-D", i, given[i])
      end
      if i > 1 and mats[i - 1]:size(2) ~= mats[i]:size(1) then
        fail(op, "tensors %d and %d cannot be multiplied (%d ~= %d)", i - 1, i, mats[i - 1]:size(2), mats[i]:size(1))
      end
    end
    local dims = {mats[1]:size(1)}
    for i = 1, n do dims[i + 1] = mats[i]:size(2) end
    -- cost[i][j]: cheapest product of mats i..j; split[i][j]: where it splits.
    local cost, split = {}, {}
    for i = 1, n do cost[i], split[i] = {[i] = 0}, {} end
    for len = 2, n do
      for i = 1, n - len + 1 do
        local j = i + len - 1
        cost[i][j] = math.huge
        for k = i, j - 1 do
          local c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
          if c < cost[i][j] then cost[i][j], split[i][j] = c, k end
        end
      end
    end
    local function product(i, j)
      if i == j then return mats[i] end
      local k = split[i][j]
      return torch.matmul(product(i, k), product(k + 1, j))
    end
    local r = product(1, n)
    if first_vec then r = r:squeeze(1) end
    if last_vec then r = r:squeeze(-1) end
    return r
  end

  for name, doc in pairs(DOCS) do torch._doc[L[name]] = doc end
end

torch._linalg_install(torch, false)
torch.matrix_power = torch.linalg.matrix_power
torch.slogdet = torch.linalg.slogdet

-- PyTorch's older torch.svd: V instead of Vh, `some` (reduced factors, default true), and
-- zero-filled (m, m) and (n, n) factors when compute_uv is false.
function torch.svd(A, ...)
  local op = "svd"
  local kw, pos = options(op, {"some", "compute_uv"}, 2, ...)
  local some = one_of(op, "some", pos[1], kw.some)
  local uv = one_of(op, "compute_uv", pos[2], kw.compute_uv)
  if not torch.is_tensor(A) then fail(op, "expected a tensor, got a %s", type(A)) end
  if uv == false then
    local S = torch.linalg.svdvals(A)
    local lead = {}
    for d = 1, A:dim() - 2 do lead[d] = A:size(d) end
    local function zeros(n)
      local shape = {table.unpack(lead)}
      shape[#shape + 1], shape[#shape + 2] = n, n
      return torch.zeros(shape, {dtype = S.dtype, device = A.device})
    end
    return zeros(A:size(-2)), S, zeros(A:size(-1))
  end
  local U, S, Vh = torch.linalg.svd(A, some == false)
  return U, S, mT(Vh)
end
torch._doc[torch.svd] = "svd(A[, some][, compute_uv][, {some=, compute_uv=}]) -> U, S, V: PyTorch's older "
  .. "svd: A = U diag(S) V^T; some (default true): reduced factors; compute_uv=false: S with zero-filled "
  .. "(m, m) and (n, n) U and V."
