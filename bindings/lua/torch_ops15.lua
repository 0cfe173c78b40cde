-- Tensor ops training code uses (issue 15), written from differentiable engine ops so that
-- autograd and every device come with them: addcmul / addcdiv, baddbmm / addbmm / addmv /
-- addr (the last three through addmm, one BLAS call), cdist, cosine_similarity, one_hot,
-- cummax / cummin / logcumsumexp (log-step scans), kthvalue / mode (through a stable sort),
-- xlogy, nan_to_num and torch.device; with PyTorch 1.13's signatures and keywords, dims and
-- indices 1-based (one_hot's classes too). The in-place spellings (addcmul_, xlogy_, ...) and
-- the methods PyTorch has are added as tensor methods (torch._add_method). Loaded after
-- torch_doc.lua (its help texts go into torch._doc); every function takes varargs and checks
-- its own arguments (no strict wrap).
local torch = ...
local nn = torch.nn
local F = nn.functional
local util = nn._util
local fail, describe = util.fail, util.describe

local function is_kw(v) return type(v) == "table" and getmetatable(v) == nil end

-- The arguments of op(p1, ..., pn[, {kw}]): positionals by the names in `pos` (each may come
-- as a keyword instead, not both), keyword-only names in `kwonly`; the first `nreq`
-- positionals are required; `defaults` fills what is absent. Returns the table of values.
local function args(op, pos, nreq, kwonly, defaults, ...)
  local n = select("#", ...)
  local kw = n > 0 and select(n, ...) or nil
  if is_kw(kw) then n = n - 1 else kw = nil end
  if n > #pos then fail(op, "expected at most %d positional arguments, got %d", #pos, n) end
  local valid = {table.unpack(pos)}
  for _, name in ipairs(kwonly) do valid[#valid + 1] = name end
  torch._check_keywords(op, kw or {}, valid)
  local o = {}
  for i = 1, n do o[pos[i]] = (select(i, ...)) end
  for k, v in pairs(kw or {}) do
    if o[k] ~= nil then fail(op, "got two values for argument '%s'", k) end
    o[k] = v
  end
  for i = 1, nreq do
    if o[pos[i]] == nil then fail(op, "missing argument '%s'", pos[i]) end
  end
  for k, v in pairs(defaults) do
    if o[k] == nil then o[k] = v end
  end
  return o
end

-- A tensor argument. The ops of this file compute in real dtypes (their dtype rules know no
-- complex one), so a complex tensor is refused here, for all of them but torch.equal.
local function tensor_arg(op, name, v)
  if not torch.is_tensor(v) then fail(op, "expected a tensor for %s, got %s", name, describe(v)) end
  if op ~= "equal" and v:is_complex() then fail(op, "%s is not supported", v.dtype) end
  return v
end

local function number_arg(op, name, v)
  if type(v) ~= "number" then fail(op, "%s must be a number, got %s", name, describe(v)) end
  return v
end

local function bool_arg(op, name, v)
  if type(v) ~= "boolean" then fail(op, "%s must be true or false, got %s", name, describe(v)) end
  return v
end

local function shape_str(s) return "{" .. table.concat(s, ",") .. "}" end

-- A 1-based (or negative) dim of a tensor with nd dims as a positive dim; a 0-dim tensor has
-- the one dim 1 (-1), as PyTorch lets dim 0 / -1 name it.
local function dim_arg(op, d, nd)
  local n = math.max(nd, 1)
  local i = math.type(d) and math.tointeger(d)
  if not i then fail(op, "dim must be an integer, got %s", describe(d)) end
  if i == 0 then fail(op, "dim 0 is out of range: dims are 1-based (valid 1..%d or -%d..-1)", n, n) end
  local p = i < 0 and n + 1 + i or i
  if p < 1 or p > n then
    fail(op, "dim %d is out of range for a tensor of %d dim%s (valid 1..%d or -%d..-1)", i, nd, nd == 1 and "" or "s", n, n)
  end
  return p
end

-- Runs f(...) so that an error an inner op raises reads "<op>: <its message>" (the inner op
-- names itself after that); messages that already start with the op pass as they are.
local function as_op(op, f, ...)
  local r = table.pack(pcall(f, ...))
  if r[1] then return table.unpack(r, 2, r.n) end
  local msg = tostring(r[2])
  if msg:sub(1, #op + 1) == op .. ":" then error(msg, 0) end
  error(op .. ": " .. msg, 0)
end

local KIND = {bool = 0, uint8 = 1, uint16 = 1, uint32 = 1, uint64 = 1, int8 = 1, int16 = 1, int32 = 1, int64 = 1,
              float16 = 2, bfloat16 = 2, float32 = 2, float64 = 2, complex64 = 3, complex128 = 3}

-- The in-place form of an op: r (the out-of-place result) written into x, which must have r's
-- shape and a dtype r may be cast to (not a float result into an integer tensor), as in PyTorch.
local function write_back(op, x, r)
  if shape_str(x.shape) ~= shape_str(r.shape) then
    fail(op, "the result of shape %s cannot be written into the input of shape %s", shape_str(r.shape),
         shape_str(x.shape))
  end
  if KIND[r.dtype] > KIND[x.dtype] then
    fail(op, "the result type %s cannot be cast to the input's dtype %s", r.dtype, x.dtype)
  end
  return x:copy_(r)
end

-- The out= form of a composed op: r written into out by an exact op (r * 1 keeps -0.0 and
-- NaN), so that out='s rules (shape, dtype cast, no autograd) are the engine's.
local function into_out(op, r, out)
  return as_op(op, torch.mul, r, 1, {out = tensor_arg(op, "out", out)})
end

-- A scalar factor (value, alpha, beta) for tensors of dtype dt: an integer unless dt is floating.
local function factor(op, name, v, dt)
  number_arg(op, name, v)
  if KIND[dt] < 2 and math.type(v) ~= "integer" then
    fail(op, "%s must be an integer for %s tensors, got %s", name, dt, describe(v))
  end
  return v
end

local docs = {}
-- torch.name = fn with its help() text; is_method: also the tensor method x:name(...).
local function define(name, fn, doc, is_method)
  torch[name] = fn
  docs[name] = doc
  if is_method then torch._add_method(name, fn) end
end
-- An in-place method name_ (the out-of-place op's arguments but out=, writing into input).
local inplace_docs = {}
local function inplace_method(name, fn)
  torch._add_method(name, fn)
  inplace_docs[fn] = name .. "(input, ...) -> input: " .. name:sub(1, -2) .. " written into input (its arguments " ..
    "but out=; the result must have input's shape and a dtype input can hold)."
end

---------------------------------------------------------------------------------------------
-- addcmul / addcdiv(input, tensor1, tensor2[, {value=1, out=}]): input + value * t1 * t2 (or
-- / t2), rounded as PyTorch's kernel does ((value * t1) * t2); the in-place forms add into input.
local function addc(op, div)
  local function product(o)
    local x = tensor_arg(op, "input", o.input)
    local t1, t2 = tensor_arg(op, "tensor1", o.tensor1), tensor_arg(op, "tensor2", o.tensor2)
    if div and KIND[t1.dtype] < 2 and KIND[t2.dtype] < 2 then
      fail(op, "integer division is not supported (tensor1 and tensor2 are %s and %s); use floating-point tensors",
           t1.dtype, t2.dtype)
    end
    local dt = x.dtype  -- only its kind matters here: floating if any operand is
    for _, t in ipairs({t1, t2}) do if KIND[t.dtype] > KIND[dt] then dt = t.dtype end end
    local v = factor(op, "value", o.value, dt)
    local scaled = v == 1 and t1 or t1 * v
    return x, as_op(op, function() return div and scaled / t2 or scaled * t2 end)
  end
  local names = {"input", "tensor1", "tensor2"}
  local fn = function(...)
    local o = args(op, names, 3, {"value", "out"}, {value = 1}, ...)
    local x, p = product(o)
    if o.out ~= nil then return as_op(op, torch.add, x, p, {out = tensor_arg(op, "out", o.out)}) end
    return as_op(op, torch.add, x, p)
  end
  local inplace = function(...)
    local o = args(op .. "_", names, 3, {"value"}, {value = 1}, ...)
    local x, p = product(o)
    return as_op(op .. "_", x.add_, x, p)
  end
  return fn, inplace
end
for _, op in ipairs({"addcmul", "addcdiv"}) do
  local fn, inplace = addc(op, op == "addcdiv")
  define(op, fn, op .. "(input, tensor1, tensor2[, {value=1, out=}]) -> Tensor: input + value * tensor1 " ..
         (op == "addcmul" and "*" or "/") .. " tensor2 (broadcast; " .. op .. "_ in place).", true)
  inplace_method(op .. "_", inplace)
end

---------------------------------------------------------------------------------------------
-- baddbmm / addbmm / addmv / addr(input, a, b[, {beta=1, alpha=1, out=}]): beta * input +
-- alpha * (a product of a and b); beta = 0 ignores input's values (NaN included) but not its
-- shape, and alpha = 0 the product's, as PyTorch's BLAS calls do. One dtype for all three.

local function same_dtype(op, x, a, b)
  if x.dtype ~= a.dtype or a.dtype ~= b.dtype then
    fail(op, "expected all tensors to have the same dtype, got %s, %s and %s", x.dtype, a.dtype, b.dtype)
  end
end

local function expect_dims(op, name, t, nd)
  if t.ndim ~= nd then fail(op, "expected a %d-D tensor for %s, got %s", nd, name, describe(t)) end
end

-- Whether a tensor of shape s broadcasts to shape `to` (without growing it).
local function broadcasts_to(s, to)
  if #s > #to then return false end
  for i = 1, #s do
    local want = to[#to - #s + i]
    if s[i] ~= want and s[i] ~= 1 then return false end
  end
  return true
end

local function check_bias(op, x, shape)
  if not broadcasts_to(x.shape, shape) then
    fail(op, "the input of shape %s cannot be broadcast to the result shape %s", shape_str(x.shape), shape_str(shape))
  end
end

-- The forms of one product: `prepare(op, x, a, b)` checks and returns the addmm operands
-- (bias, m1, m2) and the result's shape; nil bias: baddbmm, which composes bmm.
local function product_op(op, names, prepare, doc)
  local function read(opname, kwonly, ...)
    local o = args(opname, names, 3, kwonly, {beta = 1, alpha = 1}, ...)
    local x = tensor_arg(opname, names[1], o[names[1]])
    local a, b = tensor_arg(opname, names[2], o[names[2]]), tensor_arg(opname, names[3], o[names[3]])
    same_dtype(opname, x, a, b)
    local beta, alpha = factor(opname, "beta", o.beta, x.dtype), factor(opname, "alpha", o.alpha, x.dtype)
    return o, x, a, b, beta, alpha
  end
  local function compute(opname, x, a, b, beta, alpha)
    local bias, m1, m2, shape = prepare(opname, x, a, b)
    if bias then
      return as_op(opname, torch.addmm, bias, m1, m2, {beta = beta, alpha = alpha}):reshape(shape)
    end
    check_bias(opname, x, shape)
    local p = as_op(opname, torch.bmm, a, b)
    if alpha ~= 1 then p = p * alpha end
    -- beta = 0: input only for its shape, and for a zero gradient as in PyTorch.
    if beta == 0 then return torch.where(torch.zeros({}, {dtype = "bool", device = x.device}), x, p) end
    return (beta == 1 and x or x * beta) + p
  end
  local fn = function(...)
    local o, x, a, b, beta, alpha = read(op, {"beta", "alpha", "out"}, ...)
    local r = compute(op, x, a, b, beta, alpha)
    if o.out ~= nil then return into_out(op, r, o.out) end
    return r
  end
  local inplace = function(...)
    local _, x, a, b, beta, alpha = read(op .. "_", {"beta", "alpha"}, ...)
    return write_back(op .. "_", x, compute(op .. "_", x, a, b, beta, alpha))
  end
  define(op, fn, doc, true)
  inplace_method(op .. "_", inplace)
end

product_op("baddbmm", {"input", "batch1", "batch2"}, function(op, _, a, b)
  expect_dims(op, "batch1", a, 3)
  expect_dims(op, "batch2", b, 3)
  if a.shape[1] ~= b.shape[1] then fail(op, "batch sizes %d and %d differ", a.shape[1], b.shape[1]) end
  if a.shape[3] ~= b.shape[2] then
    fail(op, "shapes %s and %s cannot be multiplied (%d ~= %d)", shape_str(a.shape), shape_str(b.shape), a.shape[3],
         b.shape[2])
  end
  return nil, nil, nil, {a.shape[1], a.shape[2], b.shape[3]}
end, "baddbmm(input, batch1, batch2[, {beta=1, alpha=1, out=}]) -> Tensor: beta * input + alpha * bmm(batch1, " ..
  "batch2) (input broadcast to {b,n,p}; baddbmm_ in place).")

-- sum over i of batch1[i] @ batch2[i] is one product of batch1 laid out as {n, b*m} and batch2
-- as {b*m, p}.
product_op("addbmm", {"input", "batch1", "batch2"}, function(op, x, a, b)
  expect_dims(op, "batch1", a, 3)
  expect_dims(op, "batch2", b, 3)
  if a.shape[1] ~= b.shape[1] then fail(op, "batch sizes %d and %d differ", a.shape[1], b.shape[1]) end
  if a.shape[3] ~= b.shape[2] then
    fail(op, "shapes %s and %s cannot be multiplied (%d ~= %d)", shape_str(a.shape), shape_str(b.shape), a.shape[3],
         b.shape[2])
  end
  local shape = {a.shape[2], b.shape[3]}
  check_bias(op, x, shape)
  return x, a:permute(2, 1, 3):reshape(a.shape[2], a.shape[1] * a.shape[3]),
         b:reshape(b.shape[1] * b.shape[2], b.shape[3]), shape
end, "addbmm(input, batch1, batch2[, {beta=1, alpha=1, out=}]) -> Tensor: beta * input + alpha * the sum over i " ..
  "of batch1[i] @ batch2[i] (addbmm_ in place).")

product_op("addmv", {"input", "mat", "vec"}, function(op, x, a, b)
  expect_dims(op, "mat", a, 2)
  expect_dims(op, "vec", b, 1)
  if a.shape[2] ~= b.shape[1] then
    fail(op, "shapes %s and %s cannot be multiplied (%d ~= %d)", shape_str(a.shape), shape_str(b.shape), a.shape[2],
         b.shape[1])
  end
  local shape = {a.shape[1]}
  check_bias(op, x, shape)
  return x:reshape(x.ndim == 0 and {1, 1} or {x.shape[1], 1}), a, b:reshape(b.shape[1], 1), shape
end, "addmv(input, mat, vec[, {beta=1, alpha=1, out=}]) -> Tensor: beta * input + alpha * (mat @ vec) (addmv_ in " ..
  "place).")

product_op("addr", {"input", "vec1", "vec2"}, function(op, x, a, b)
  expect_dims(op, "vec1", a, 1)
  expect_dims(op, "vec2", b, 1)
  local shape = {a.shape[1], b.shape[1]}
  check_bias(op, x, shape)
  return x, a:reshape(a.shape[1], 1), b:reshape(1, b.shape[1]), shape
end, "addr(input, vec1, vec2[, {beta=1, alpha=1, out=}]) -> Tensor: beta * input + alpha * outer(vec1, vec2) (addr_ " ..
  "in place).")

---------------------------------------------------------------------------------------------
-- Scans along a dim in log2(n) steps (Hillis-Steele): after the step of width s each element
-- combines the s before it, so f must be associative (maximum, logaddexp).
local function scan(x, d, f)
  local n = x.shape[d]
  local s = 1
  while s < n do
    x = torch.cat({x:narrow(d, 1, s), f(x:narrow(d, s + 1, n - s), x:narrow(d, 1, n - s))}, d)
    s = s * 2
  end
  return x
end

-- 1..n along dim d of an nd-dim tensor (1 elsewhere), int64.
local function positions(n, d, nd, device)
  local shape = {}
  for i = 1, nd do shape[i] = i == d and n or 1 end
  return torch.arange(1, n + 1, {dtype = "int64", device = device}):reshape(shape)
end

-- cummax / cummin(input, dim) -> values, indices: the running maximum (minimum) and the 1-based
-- index where it was last reached (ties and NaNs take the later index; a NaN stays, as in
-- PyTorch). The values are gathered at the indices, so the gradient goes where PyTorch's does.
local function cum_extreme(op, pick)
  return function(...)
    local o = args(op, {"input", "dim"}, 2, {}, {}, ...)
    local x = tensor_arg(op, "input", o.input)
    local d = dim_arg(op, o.dim, x.ndim)
    local xs = x.ndim == 0 and x:reshape(1) or x
    local v = scan(xs:detach(), d, pick)
    local mark = xs:detach():eq(v):logical_or(xs:detach():isnan())
    local idx = scan(torch.where(mark, positions(xs.shape[d], d, xs.ndim, x.device), 0), d, torch.maximum)
    local values = xs:gather(d, idx)
    if x.ndim == 0 then return values:reshape({}), idx:reshape({}) end
    return values, idx
  end
end
define("cummax", cum_extreme("cummax", torch.maximum), "cummax(input, dim) -> Tensor, Tensor: the running maximum " ..
  "along dim and the 1-based indices where it was reached (the later one on ties; NaN propagates).", true)
define("cummin", cum_extreme("cummin", torch.minimum), "cummin(input, dim) -> Tensor, Tensor: the running minimum " ..
  "along dim and the 1-based indices where it was reached (the later one on ties; NaN propagates).", true)

-- log(exp(a) + exp(b)) as PyTorch's logcumsumexp step computes it: max + log1p(exp(min - max)),
-- and a itself where both are the same infinity (NaN propagates through maximum).
local function logaddexp(a, b)
  local hi, lo = torch.maximum(a, b), torch.minimum(a, b)
  local r = hi + (lo - hi):exp():log1p()
  return torch.where(lo:eq(hi):logical_and(lo:isinf()), a, r)
end

define("logcumsumexp", function(...)
  local op = "logcumsumexp"
  local o = args(op, {"input", "dim"}, 2, {}, {}, ...)
  local x = tensor_arg(op, "input", o.input)
  local d = dim_arg(op, o.dim, x.ndim)
  if KIND[x.dtype] < 2 then fail(op, "expected a floating-point input, got %s", x.dtype) end
  if x.ndim == 0 then return x:clone() end
  return scan(x, d, logaddexp)
end, "logcumsumexp(input, dim) -> Tensor: log(cumsum(exp(input))) along dim, computed without overflow.", true)

-- The values of xs at the 1-based indices idx (size 1 along dim d), both squeezed unless
-- keepdim; a 0-dim input x gives 0-dim results.
local function select_at(x, xs, d, idx, keepdim)
  local values = xs:gather(d, idx)
  if x.ndim == 0 then return values:reshape({}), idx:reshape({}) end
  if not keepdim then return values:squeeze(d), idx:squeeze(d) end
  return values, idx
end

-- kthvalue(input, k[, dim=-1][, keepdim=false]) -> values, indices: the k-th smallest along dim
-- (NaN counts as the largest; of equal values, the first in a stable sort).
define("kthvalue", function(...)
  local op = "kthvalue"
  local o = args(op, {"input", "k", "dim", "keepdim"}, 2, {}, {dim = -1, keepdim = false}, ...)
  local x = tensor_arg(op, "input", o.input)
  local d = dim_arg(op, o.dim, x.ndim)
  local keepdim = bool_arg(op, "keepdim", o.keepdim)
  local xs = x.ndim == 0 and x:reshape(1) or x
  local n = xs.shape[d]
  local k = math.type(o.k) and math.tointeger(o.k)
  if not k then fail(op, "k must be an integer, got %s", describe(o.k)) end
  if k < 1 or k > n then fail(op, "k %d is out of range for dim %d of size %d (valid 1..%d)", k, o.dim, n, n) end
  local _, order = xs:detach():sort(d)
  return select_at(x, xs, d, order:narrow(d, k, 1), keepdim)
end, "kthvalue(input, k[, dim][, keepdim][, {dim=-1, keepdim=false}]) -> Tensor, Tensor: the k-th smallest values " ..
  "along dim and their 1-based indices.", true)

-- mode(input[, dim=-1][, keepdim=false]) -> values, indices: the most frequent value along dim
-- (the smallest of equally frequent ones) and the 1-based index of its last occurrence, as
-- PyTorch's CPU kernel gives. NaNs count as equal to each other here.
define("mode", function(...)
  local op = "mode"
  local o = args(op, {"input", "dim", "keepdim"}, 1, {}, {dim = -1, keepdim = false}, ...)
  local x = tensor_arg(op, "input", o.input)
  local d = dim_arg(op, o.dim, x.ndim)
  local keepdim = bool_arg(op, "keepdim", o.keepdim)
  local xs = x.ndim == 0 and x:reshape(1) or x
  local n = xs.shape[d]
  if n == 0 then fail(op, "dim %d has size 0", o.dim) end
  local sorted, order = xs:detach():sort(d)
  local pos = positions(n, d, xs.ndim, x.device)
  -- A run starts where the sorted value differs from the one before (two NaNs do not).
  local prev = torch.cat({sorted:narrow(d, 1, 1), sorted:narrow(d, 1, n - 1)}, d)
  local starts = sorted:ne(prev):logical_and(sorted:isnan():logical_and(prev:isnan()):logical_not())
  starts = starts:logical_or(pos:eq(1))
  -- How far each position is into its run; the first largest ends the run of the smallest
  -- most frequent value.
  local into = pos - scan(torch.where(starts, pos, 0), d, torch.maximum)
  return select_at(x, xs, d, order:gather(d, into:argmax(d, true)), keepdim)
end, "mode(input[, dim][, keepdim][, {dim=-1, keepdim=false}]) -> Tensor, Tensor: the most frequent values along " ..
  "dim (the smallest on ties) and the 1-based index of their last occurrence.", true)

---------------------------------------------------------------------------------------------
-- xlogy(input, other): input * log(other), 0 where input is 0 unless other is NaN. Either
-- operand may be a number; integers compute in the default float dtype.
local function xlogy(op, x, y)
  if not torch.is_tensor(x) and not torch.is_tensor(y) then
    fail(op, "expected a tensor for input or other, got %s and %s", describe(x), describe(y))
  end
  if type(x) ~= "number" then tensor_arg(op, "input", x) end
  if type(y) ~= "number" then tensor_arg(op, "other", y) end
  local dt = torch.result_type(x, y)
  if KIND[dt] < 2 then dt = torch.get_default_dtype() end
  local ly = torch.is_tensor(y) and y:to(dt):log() or torch.full({}, y, {dtype = dt, device = x.device}):log()
  local r = as_op(op, function() return (torch.is_tensor(x) and x:to(dt) or x) * ly end)
  if type(x) == "number" then
    if x ~= 0 then return r end
    return torch.where(y:isnan(), r, 0)
  end
  if type(y) == "number" and y ~= y then return r end
  local zero = x:eq(0)
  if torch.is_tensor(y) then zero = zero:logical_and(y:isnan():logical_not()) end
  return torch.where(zero, 0, r)
end
define("xlogy", function(...)
  local o = args("xlogy", {"input", "other"}, 2, {"out"}, {}, ...)
  local r = xlogy("xlogy", o.input, o.other)
  if o.out ~= nil then return into_out("xlogy", r, o.out) end
  return r
end, "xlogy(input, other[, {out=}]) -> Tensor: input * log(other), 0 where input is 0 (unless other is NaN); " ..
  "either may be a number.", true)
inplace_method("xlogy_", function(...)
  local o = args("xlogy_", {"input", "other"}, 2, {}, {}, ...)
  local x = tensor_arg("xlogy_", "input", o.input)
  -- (from a clone: the product saves its operand for the gradient, and input is overwritten)
  return write_back("xlogy_", x, xlogy("xlogy_", x:clone(), o.other))
end)

-- polygamma(n, input[, {out=}]): the n-th derivative of digamma (n = 0: digamma itself),
-- differentiable in input to every order; the method spelling is x:polygamma(n) as PyTorch's.
local function polygamma(op, n, x, out)
  x = tensor_arg(op, "input", x)
  if math.type(n) ~= "integer" or n < 0 or n > 2 ^ 24 then
    fail(op, "n must be an integer in 0..2^24, got %s", describe(n))
  end
  local kw = out ~= nil and {out = tensor_arg(op, "out", out)} or nil
  if n == 0 then return as_op(op, torch.digamma, x, kw) end
  return as_op(op, torch._polygamma, n, x, kw)
end
define("polygamma", function(...)
  local o = args("polygamma", {"n", "input"}, 2, {"out"}, {}, ...)
  return polygamma("polygamma", o.n, o.input, o.out)
end, "polygamma(n, input[, {out=}]) -> Tensor: the n-th derivative of digamma (n >= 0), elementwise; " ..
  "x:polygamma(n) is the method.")
torch._add_method("polygamma", function(...)
  local o = args("polygamma", {"input", "n"}, 2, {}, {}, ...)
  return polygamma("polygamma", o.n, o.input)
end)
inplace_method("polygamma_", function(...)
  local o = args("polygamma_", {"input", "n"}, 2, {}, {}, ...)
  local x = tensor_arg("polygamma_", "input", o.input)
  return write_back("polygamma_", x, polygamma("polygamma_", o.n, x:clone()))
end)

-- torch.gradient(input[, {spacing=1, dim=nil, edge_order=1}]): np.gradient's differences in
-- PyTorch's spelling: a list with one tensor per dim (all dims by default, 1-based), integer
-- inputs in the default float dtype; spacing one number for every dim, or a list with one
-- number or one 1-D coordinate tensor per dim.
define("gradient", function(...)
  local op = "gradient"
  local o = args(op, {"input"}, 1, {"spacing", "dim", "edge_order"}, {edge_order = 1}, ...)
  local x = tensor_arg(op, "input", o.input)
  if x.dtype == "bool" then fail(op, "expected a numeric tensor, got a bool one") end
  if not x:is_floating_point() then x = x:to(torch.get_default_dtype()) end
  local nd = x.ndim
  if nd == 0 then fail(op, "expected a tensor with at least one dim, got a 0-dim one") end
  local dims = {}
  if o.dim == nil then
    for d = 1, nd do dims[d] = d end
  else
    for i, d in ipairs(type(o.dim) == "table" and o.dim or {o.dim}) do dims[i] = dim_arg(op, d, nd) end
  end
  local spacing = o.spacing
  local steps = {}
  if spacing == nil or type(spacing) == "number" then
    for i = 1, #dims do steps[i] = spacing or 1 end
  elseif type(spacing) == "table" and not torch.is_tensor(spacing) then
    if #spacing ~= #dims then
      fail(op, "expected spacing to be unspecified, a number or a list of %d values (one per dim), got %d", #dims, #spacing)
    end
    for i, h in ipairs(spacing) do
      if type(h) ~= "number" and not (torch.is_tensor(h) and h.ndim <= 1) then
        fail(op, "spacing[%d] must be a number or a 1-D tensor of coordinates, got %s", i, describe(h))
      end
      steps[i] = torch.is_tensor(h) and h.ndim == 1 and h:to(x.dtype) or (torch.is_tensor(h) and h:item() or h)
    end
  else
    fail(op, "spacing must be a number or a list of numbers or 1-D tensors, got %s", describe(spacing))
  end
  local e = o.edge_order
  if e ~= 1 and e ~= 2 then fail(op, "edge_order must be 1 or 2, got %s", describe(e)) end
  for _, d in ipairs(dims) do
    if x.shape[d] < e + 1 then
      fail(op, "expected each dimension size to be at least edge_order+1 (dim %d has %d)", d, x.shape[d])
    end
  end
  local axes = {}
  for i, d in ipairs(dims) do axes[i] = d end
  steps[#steps + 1] = {axis = axes, edge_order = e}
  local r = as_op(op, require("numpy").gradient, x, table.unpack(steps))
  if torch.is_tensor(r) then r = {r} end
  for i, t in ipairs(r) do r[i] = torch.as_tensor(t):to(x.dtype) end
  return r
end, "gradient(input[, {spacing=1, dim=, edge_order=1}]) -> list of Tensors: central differences (one-sided at the " ..
  "ends) along each dim (1-based; all by default); spacing a number or one number or coordinate tensor per dim.")

-- nan_to_num(input[, nan=0][, posinf][, neginf][, {out=}]): NaN, +inf and -inf replaced (the
-- infinities by the dtype's largest and lowest finite values unless given); integers as they are.
local function nan_to_num(op, o)
  local x = tensor_arg(op, "input", o.input)
  for _, k in ipairs({"nan", "posinf", "neginf"}) do
    if o[k] ~= nil then number_arg(op, k, o[k]) end
  end
  if KIND[x.dtype] < 2 then return x:clone() end
  local info = torch.finfo(x.dtype)
  local r = torch.where(x:isnan(), o.nan or 0.0, x)
  r = torch.where(x:eq(math.huge), o.posinf or info.max, r)
  return torch.where(x:eq(-math.huge), o.neginf or info.min, r)
end
local NAN_TO_NUM = {"input", "nan", "posinf", "neginf"}
define("nan_to_num", function(...)
  local o = args("nan_to_num", NAN_TO_NUM, 1, {"out"}, {}, ...)
  local r = nan_to_num("nan_to_num", o)
  if o.out ~= nil then return into_out("nan_to_num", r, o.out) end
  return r
end, "nan_to_num(input[, nan][, posinf][, neginf][, {nan=0, posinf=, neginf=, out=}]) -> Tensor: NaN, inf and -inf " ..
  "replaced by nan, posinf and neginf (default: 0 and the dtype's largest and lowest finite values).", true)
inplace_method("nan_to_num_", function(...)
  local o = args("nan_to_num_", NAN_TO_NUM, 1, {}, {}, ...)
  return write_back("nan_to_num_", o.input, nan_to_num("nan_to_num_", o))
end)

---------------------------------------------------------------------------------------------
-- cdist(x1, x2[, p=2][, {p=, compute_mode=}]): the p-norm distances between the rows of x1
-- {..., P, M} and x2 {..., R, M} (batch dims broadcast) -> {..., P, R}. For p = 2 the
-- matrix-product form (|a|^2 + |b|^2 - 2 a.b, clamped at 0) is used when compute_mode asks
-- for it, or by default when P or R exceeds 25, as in PyTorch; otherwise the differences.
local COMPUTE_MODES = {use_mm_for_euclid_dist_if_necessary = true, use_mm_for_euclid_dist = true,
                       donot_use_mm_for_euclid_dist = true}
define("cdist", function(...)
  local op = "cdist"
  local o = args(op, {"x1", "x2", "p", "compute_mode"}, 2, {}, {p = 2, compute_mode = "use_mm_for_euclid_dist_if_necessary"}, ...)
  local x1, x2 = tensor_arg(op, "x1", o.x1), tensor_arg(op, "x2", o.x2)
  local p = number_arg(op, "p", o.p)
  if not (p >= 0) then fail(op, "p must be >= 0, got %s", describe(p)) end
  if not COMPUTE_MODES[o.compute_mode] then
    fail(op, "compute_mode must be \"use_mm_for_euclid_dist_if_necessary\", \"use_mm_for_euclid_dist\" or " ..
         "\"donot_use_mm_for_euclid_dist\", got %s", describe(o.compute_mode))
  end
  for name, t in pairs({x1 = x1, x2 = x2}) do
    if t.ndim < 2 then fail(op, "expected %s to have at least 2 dims, got %s", name, describe(t)) end
    if KIND[t.dtype] < 2 then fail(op, "expected floating-point tensors, got %s for %s", t.dtype, name) end
  end
  if x1.dtype ~= x2.dtype then fail(op, "expected x1 and x2 of one dtype, got %s and %s", x1.dtype, x2.dtype) end
  local m = x1.shape[x1.ndim]
  if m ~= x2.shape[x2.ndim] then
    fail(op, "x1 and x2 must have the same number of columns, got %s and %s", shape_str(x1.shape), shape_str(x2.shape))
  end
  local P, R = x1.shape[x1.ndim - 1], x2.shape[x2.ndim - 1]
  local mm = p == 2 and (o.compute_mode == "use_mm_for_euclid_dist" or
                         (o.compute_mode == "use_mm_for_euclid_dist_if_necessary" and (P > 25 or R > 25)))
  return as_op(op, function()
    if mm then
      local n1, n2 = (x1 * x1):sum(-1, true), (x2 * x2):sum(-1, true)
      local a = torch.cat({x1 * -2, n1, torch.ones_like(n1)}, -1)
      local b = torch.cat({x2, torch.ones_like(n2), n2}, -1)
      -- sqrt of the squares clamped at 0, with a zero gradient there (the inner where keeps
      -- the square root's infinite slope out of it), as PyTorch's formula.
      local d2 = a:matmul(b:transpose(-1, -2))
      local pos = d2:gt(0)
      return torch.where(pos, torch.where(pos, d2, 1):sqrt(), 0)
    end
    return (x1:unsqueeze(-2) - x2:unsqueeze(-3)):norm(p, -1)
  end)
end, "cdist(x1, x2[, p][, compute_mode][, {p=2, compute_mode=}]) -> Tensor: the p-norm distances between the rows " ..
  "of x1 {..., P, M} and x2 {..., R, M}, shape {..., P, R} (p = 2 through a matrix product when P or R > 25, " ..
  "or as compute_mode says).")

---------------------------------------------------------------------------------------------
-- cosine_similarity(x1, x2[, dim=2][, eps=1e-8]): along dim (1-based: PyTorch's default dim=1
-- is the second dim) of the broadcast inputs, each divided by max(its norm, eps) first, as
-- PyTorch 1.13 computes it.
-- The shape two shapes broadcast to.
local function broadcast_shape(op, s1, s2)
  local r = {}
  local n = math.max(#s1, #s2)
  for i = 1, n do
    local a, b = s1[#s1 - n + i] or 1, s2[#s2 - n + i] or 1
    if a ~= b and a ~= 1 and b ~= 1 then
      fail(op, "shapes %s and %s cannot be broadcast together", shape_str(s1), shape_str(s2))
    end
    r[i] = a == 1 and b or a
  end
  return r
end

local function cosine_similarity(...)
  local op = "cosine_similarity"
  local o = args(op, {"x1", "x2", "dim", "eps"}, 2, {}, {dim = 2, eps = 1e-8}, ...)
  local x1, x2 = tensor_arg(op, "x1", o.x1), tensor_arg(op, "x2", o.x2)
  local eps = number_arg(op, "eps", o.eps)
  local dt = torch.result_type(x1, x2)
  if KIND[dt] < 2 then fail(op, "expected floating-point inputs, got %s and %s", x1.dtype, x2.dtype) end
  local shape = broadcast_shape(op, x1.shape, x2.shape)
  local a, b = x1:to(dt):expand(shape), x2:to(dt):expand(shape)
  local d = dim_arg(op, o.dim, #shape)
  if #shape == 0 then a, b = a:reshape(1), b:reshape(1) end
  local na, nb = a:norm(2, d, true):clamp{min = eps}, b:norm(2, d, true):clamp{min = eps}
  return ((a / na) * (b / nb)):sum(d)
end
F.cosine_similarity = cosine_similarity
define("cosine_similarity", cosine_similarity, "cosine_similarity(x1, x2[, dim][, eps][, {dim=2, eps=1e-8}]) -> " ..
  "Tensor: the cosine of the angle between x1 and x2 along dim (1-based; PyTorch's default dim=1 is dim 2 here), " ..
  "each divided by max(norm, eps).")

-- one_hot(tensor[, num_classes=-1]): int64 class indices, 1-based here (class k sets position k),
-- as {..., num_classes} int64 rows of 0 and 1; num_classes -1 takes the largest index.
local function one_hot(...)
  local op = "one_hot"
  local o = args(op, {"tensor", "num_classes"}, 1, {}, {num_classes = -1}, ...)
  local x = tensor_arg(op, "tensor", o.tensor)
  if x.dtype ~= "int64" then fail(op, "expected an int64 tensor of class indices, got %s", x.dtype) end
  local c = math.type(o.num_classes) and math.tointeger(o.num_classes)
  if not c or c < -1 then fail(op, "num_classes must be an integer >= 0 or -1, got %s", describe(o.num_classes)) end
  if c == -1 then
    if x:numel() == 0 then fail(op, "cannot infer num_classes from an empty tensor") end
    c = x:max():item()
  end
  if x:numel() > 0 then
    local lo, hi = x:min():item(), x:max():item()
    if lo < 1 or hi > c then
      fail(op, "class index %d is out of range for %d classes (valid 1..%d: classes are 1-based)", lo < 1 and lo or hi, c, c)
    end
  end
  return x:unsqueeze(-1):eq(torch.arange(1, c + 1, {dtype = "int64", device = x.device})):to("int64")
end
F.one_hot = one_hot

---------------------------------------------------------------------------------------------
-- torch.device(type[, index]) or torch.device(device): a device object (torch._device; the
-- same object for the same name, so == compares devices) with .type and .index, accepted
-- wherever a device is, as is its name ("cpu", "cuda", "cuda:N").
local device_object = torch._device
define("device", function(...)
  local op = "device"
  local o = args(op, {"type", "index"}, 1, {}, {}, ...)
  local s, index = o.type, o.index
  if getmetatable(s) == getmetatable(device_object("cpu")) then
    if index ~= nil then fail(op, "a device object takes no index, got %s", describe(index)) end
    return s
  end
  if type(s) ~= "string" then fail(op, "expected a device string such as \"cpu\" or \"cuda:0\", got %s", describe(s)) end
  local kind, n = s:match("^(%a+):(%d+)$")
  kind = kind or s
  if kind ~= "cpu" and kind ~= "cuda" then
    fail(op, "unknown device type %s (expected \"cpu\" or \"cuda\", with an index as \"cuda:N\")", describe(s))
  end
  if index ~= nil then
    if n then fail(op, "the device string '%s' has an index already, and index %s was given", s, describe(index)) end
    local i = math.type(index) and math.tointeger(index)
    if not i or i < 0 then fail(op, "index must be an integer >= 0, got %s", describe(index)) end
    n = tostring(i)
  end
  if kind == "cpu" then
    if n and n ~= "0" then fail(op, "the CPU has only index 0, got %s", n) end
    return device_object("cpu")
  end
  return device_object(n and "cuda:" .. tonumber(n) or "cuda")
end, "device(type[, index]) -> torch.device: a device object with .type (\"cpu\" or \"cuda\") and .index " ..
  "(nil unless given, as PyTorch's None); tostring gives its name; it and its name are accepted wherever a device is.")

---------------------------------------------------------------------------------------------
-- torch.equal(input, other): true when both have the same shape and equal elements (any
-- dtypes, compared after promotion; NaN is unequal), false otherwise, as PyTorch 1.13.
define("equal", function(...)
  local op = "equal"
  local o = args(op, {"input", "other"}, 2, {}, {}, ...)
  local a, b = tensor_arg(op, "input", o.input), tensor_arg(op, "other", o.other)
  if a.device ~= b.device then
    fail(op, "expected both tensors on one device, got %s and %s", tostring(a.device), tostring(b.device))
  end
  if a.ndim ~= b.ndim then return false end
  for d = 1, a.ndim do
    if a.shape[d] ~= b.shape[d] then return false end
  end
  return a:numel() == 0 or a:eq(b):all():item()
end, "equal(input, other) -> boolean: whether input and other have the same shape and equal elements.", true)

for name, doc in pairs(docs) do torch._doc[torch[name]] = doc end
for fn, doc in pairs(inplace_docs) do torch._doc[fn] = doc end
torch._doc[F.one_hot] = "one_hot(tensor[, num_classes][, {num_classes=-1}]) -> Tensor: int64 rows with a 1 at " ..
  "each 1-based class index (num_classes -1: the largest index)."
