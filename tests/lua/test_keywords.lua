-- Keywords (issue 13): every keyword a binding declares is given by some test, and its effect
-- is asserted here with exact values (tests/arg_coverage.lua, run by tests/run_all.sh, fails
-- for a declared keyword no test gives). out= of the pointwise ops is checked against NumPy
-- in tests/conformance/ops.lua (the out= spelling of the unary, binary and np.* rows).
-- Reference values not obvious by hand come from NumPy 1.x / PyTorch 1.13 (quoted beside).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"

-- make(device) on "cpu" gives a CPU tensor; on "cuda" a CUDA tensor, or without a CUDA device
-- the error naming the op.
local function check_device(op, make)
  T.eq(tostring(make("cpu").device), "cpu")
  if torch.cuda.is_available() then
    T.truthy(tostring(make("cuda").device):find("^cuda"), op .. " on cuda")
  else
    T.error(function() make("cuda") end, op .. ": CUDA is not available")
  end
end

-- requires_grad=true makes a leaf that records (its gradient arrives), false a plain tensor.
local function check_requires_grad(make)
  local x = make(true)
  T.eq(x.requires_grad, true)
  T.eq(x.is_leaf, true)
  local y = (x * 2):sum()
  y:backward()
  T.eq(x.grad:tolist(), torch.full(x.shape, 2, {dtype = x.dtype}):tolist())
  T.eq(make(false).requires_grad, false)
end

-- out= of a non-pointwise op: the result lands in the given tensor (prefilled with garbage,
-- of the expected dtype and shape), which is returned itself, and equals the plain call.
local function check_out(call, out, expected)
  out:fill_(7)
  local r = call(out)
  T.truthy(rawequal(r, out), "out= returns the out tensor itself")
  T.eq(out:tolist(), expected)
end

-- creation -------------------------------------------------------------------------------

T.test("creation: device= places the result (cpu, or cuda's clear error without one)", function()
  local x = torch.ones(2, 3)
  check_device("arange", function(d) return torch.arange(3, {device = d}) end)
  check_device("array", function(d) return np.array({1, 2}, {device = d}) end)
  check_device("tensor", function(d) return torch.tensor({1, 2}, {device = d}) end)
  check_device("empty_like", function(d) return torch.empty_like(x, {device = d}) end)
  check_device("eye", function(d) return torch.eye(2, {device = d}) end)
  check_device("identity", function(d) return np.identity(2, {device = d}) end)
  check_device("full", function(d) return torch.full({2}, 5, {device = d}) end)
  check_device("full_like", function(d) return torch.full_like(x, 5, {device = d}) end)
  check_device("linspace", function(d) return torch.linspace(0, 1, 3, {device = d}) end)
  check_device("ones_like", function(d) return torch.ones_like(x, {device = d}) end)
  check_device("zeros_like", function(d) return torch.zeros_like(x, {device = d}) end)
  check_device("rand", function(d) return torch.rand(2, {device = d}) end)
  check_device("rand_like", function(d) return torch.rand_like(x, {device = d}) end)
  check_device("randn_like", function(d) return torch.randn_like(x, {device = d}) end)
  check_device("randint", function(d) return torch.randint(0, 4, {3}, {device = d}) end)
  check_device("randperm", function(d) return torch.randperm(4, {device = d}) end)
  -- The values do not change on the CPU.
  T.eq(torch.arange(3, {device = "cpu"}):tolist(), {0, 1, 2})
  T.eq(np.array({1, 2}, {device = "cpu"}):tolist(), {1, 2})
  T.eq(torch.tensor({1.5}, {device = "cpu"}):tolist(), {1.5})
  T.eq(torch.eye(2, {device = "cpu"}):tolist(), {{1, 0}, {0, 1}})
  T.eq(np.identity(2, {device = "cpu"}):tolist(), {{1, 0}, {0, 1}})
  T.eq(torch.full({2}, 5, {device = "cpu"}):tolist(), {5, 5})
  T.eq(torch.full_like(x, 5, {device = "cpu"}):tolist(), {{5, 5, 5}, {5, 5, 5}})
  T.eq(torch.linspace(0, 1, 3, {device = "cpu"}):tolist(), {0, 0.5, 1})
  T.eq(torch.ones_like(x, {device = "cpu"}):tolist(), {{1, 1, 1}, {1, 1, 1}})
  T.eq(torch.zeros_like(x, {device = "cpu"}):tolist(), {{0, 0, 0}, {0, 0, 0}})
  T.eq(torch.randperm(4, {device = "cpu"}):sort():tolist(), {1, 2, 3, 4})
end)

T.test("creation: requires_grad= makes a recording leaf (floating point only)", function()
  local x = torch.ones(2, 2)
  check_requires_grad(function(r) return torch.arange(0, 3, 1, {dtype = "float32", requires_grad = r}) end)
  check_requires_grad(function(r) return np.array({1.5, 2}, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.empty(2, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.empty_like(x, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.eye(2, {requires_grad = r}) end)
  check_requires_grad(function(r) return np.identity(2, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.full_like(x, 3, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.linspace(0, 1, 4, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.ones_like(x, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.zeros_like(x, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.rand(3, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.rand_like(x, {requires_grad = r}) end)
  check_requires_grad(function(r) return torch.randn_like(x, {requires_grad = r}) end)
  -- Integer results cannot require grad (PyTorch: "Only Tensors of floating point ...").
  T.eq(torch.randint(0, 4, {3}, {requires_grad = false}).requires_grad, false)
  T.eq(torch.randperm(3, {requires_grad = false}).requires_grad, false)
  T.error(function() torch.randint(0, 4, {3}, {requires_grad = true}) end,
          "randint: only floating-point and complex tensors can require gradients, got int64")
  T.error(function() torch.randperm(3, {requires_grad = true}) end,
          "randperm: only floating-point and complex tensors can require gradients, got int64")
  T.error(function() torch.arange(3, {requires_grad = true}) end,
          "arange: only floating-point and complex tensors can require gradients, got int64")
end)

T.test("creation: dtype= of the *_like forms, identity and asarray", function()
  local x = torch.ones(2, 3)
  local z = torch.zeros_like(x, {dtype = "int16"})
  T.eq({z.dtype, z.shape, z:tolist()}, {"int16", {2, 3}, {{0, 0, 0}, {0, 0, 0}}})
  local f = torch.full_like(x, 2.75, {dtype = "float64"})
  T.eq({f.dtype, f:tolist()}, {"float64", {{2.75, 2.75, 2.75}, {2.75, 2.75, 2.75}}})
  -- full_like(x, 2.75, dtype=int32) truncates as PyTorch does: 2.
  T.eq(torch.full_like(x, 2.75, {dtype = "int32"}):tolist(), {{2, 2, 2}, {2, 2, 2}})
  local r = torch.rand_like(x, {dtype = "float64"})
  T.eq({r.dtype, r.shape}, {"float64", {2, 3}})
  T.truthy(r:ge(0):all():item() and r:lt(1):all():item(), "rand_like in [0, 1)")
  local n = torch.randn_like(x, {dtype = "float16"})
  T.eq({n.dtype, n.shape}, {"float16", {2, 3}})
  T.error(function() torch.rand_like(x, {dtype = "int64"}) end, "rand_like: expected a floating-point dtype, got int64")
  local i = np.identity(3, {dtype = "int32"})
  T.eq({i.dtype, i:tolist()}, {"int32", {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}})
  -- asarray(x, {dtype=}): a table is converted to dtype; a tensor of another dtype is copied
  -- converted; a tensor of that dtype is x itself (writes show through).
  local a = np.asarray({1, 2.5}, {dtype = "float32"})
  T.eq({a.dtype, a:tolist()}, {"float32", {1, 2.5}})
  T.eq(np.asarray({1.75, -2.5}, {dtype = "int64"}):tolist(), {1, -2})
  local src = np.array({1.5, 2.5})
  local c = np.asarray(src, {dtype = "float32"})
  T.eq({c.dtype, c:tolist()}, {"float32", {1.5, 2.5}})
  c[1] = 9
  T.eq(src:tolist(), {1.5, 2.5})
  local same = np.asarray(src, {dtype = "float64"})
  same[1] = 9
  T.eq(src:tolist(), {9, 2.5})
end)

T.test("creation: eye's m= (torch) and M= (NumPy) columns; linspace's steps=", function()
  T.eq(torch.eye(2, {m = 3}):tolist(), {{1, 0, 0}, {0, 1, 0}})
  T.eq(np.eye(3, {M = 2}):tolist(), {{1, 0}, {0, 1}, {0, 0}})
  T.eq(np.eye(2, {M = 3, k = 1}):tolist(), {{0, 1, 0}, {0, 0, 1}})
  T.eq(torch.linspace(0, 1, {steps = 5}):tolist(), {0, 0.25, 0.5, 0.75, 1})
  T.eq(torch.linspace(2, -2, {steps = 3, dtype = "int64"}):tolist(), {2, 0, -2})
end)

T.test("astype(copy=): false shares x when the dtype matches, true always copies", function()
  local x = torch.tensor({1.5, 2.5})
  local shared = x:astype("float32", {copy = false})
  shared[1] = 7
  T.eq(x:tolist(), {7, 2.5})
  local copied = np.astype(x, "float32", {copy = true})
  copied[1] = 8
  T.eq(x:tolist(), {7, 2.5})
  T.eq(copied:tolist(), {8, 2.5})
  -- Another dtype is a converted copy either way.
  local conv = x:astype("int64", {copy = false})
  T.eq({conv.dtype, conv:tolist()}, {"int64", {7, 2}})
  conv[1] = 1
  T.eq(x:tolist(), {7, 2.5})
end)

-- random -----------------------------------------------------------------------------------

T.test("np.random: size=, low=, high=, loc=, scale=, dtype= (shapes, dtypes, ranges, seeds)", function()
  np.random.seed(7)
  local r = np.random.random({size = {2, 3}})
  T.eq({r.dtype, r.shape}, {"float64", {2, 3}})
  T.truthy(r:ge(0):all():item() and r:lt(1):all():item(), "random in [0, 1)")
  np.random.seed(7)
  T.eq(np.random.random({size = {2, 3}}):tolist(), r:tolist(), "the same seed repeats the draws")
  np.random.seed(7)
  T.eq(np.random.random_sample({size = {2, 3}}):tolist(), r:tolist(), "random_sample is random")
  T.eq(np.random.random_sample({size = 4}).shape, {4})

  local u = np.random.uniform({low = 2, high = 2.5, size = {1000}})
  T.eq({u.dtype, u.shape}, {"float64", {1000}})
  T.truthy(u:ge(2):all():item() and u:lt(2.5):all():item(), "uniform in [low, high)")
  T.truthy(u:min():item() < 2.01 and u:max():item() > 2.49, "uniform fills [low, high)")
  T.eq(np.random.uniform({high = 0.25, size = {3}}):lt(0.25):all():item(), true)

  -- scale=0 gives loc exactly; a scale stretches the spread.
  T.eq(np.random.normal({loc = 3.5, scale = 0, size = {2}}):tolist(), {3.5, 3.5})
  local n = np.random.normal({loc = -10, scale = 0.5, size = {4000}})
  T.eq({n.dtype, n.shape}, {"float64", {4000}})
  T.truthy(math.abs(n:mean():item() + 10) < 0.05, "normal's mean is loc")
  T.truthy(math.abs(n:std():item() - 0.5) < 0.05, "normal's std is scale")

  local i = np.random.randint({low = 3, high = 6, size = {500}, dtype = "int32"})
  T.eq({i.dtype, i.shape}, {"int32", {500}})
  T.eq({i:min():item(), i:max():item()}, {3, 5})
  T.eq(i:eq(4):any():item(), true)
  local j = np.random.randint(2, {high = 4, size = {300}})
  T.eq({j.dtype, j:min():item(), j:max():item()}, {"int64", 2, 3})
  np.random.seed(11)
  local k1 = np.random.randint({low = 0, high = 1000, size = {5}}):tolist()
  np.random.seed(11)
  T.eq(np.random.randint({low = 0, high = 1000, size = {5}}):tolist(), k1)
end)

-- reductions -------------------------------------------------------------------------------

local function X() return torch.tensor({{1.0, -2, 3}, {4, 5, -6}}) end      -- float32
local function Y() return torch.tensor({{1, 0, 3}, {4, 5, 0}}) end          -- int64

T.test("reductions: keepdims= keeps reduced dims as size 1 (amax amin logsumexp norm)", function()
  local x = X()
  local a = np.amax(x, {axis = 2, keepdims = true})
  T.eq({a.shape, a:tolist()}, {{2, 1}, {{3}, {5}}})
  local b = torch.amin(x, {dim = 1, keepdims = true})
  T.eq({b.shape, b:tolist()}, {{1, 3}, {{1, -2, -6}}})
  -- torch.logsumexp(x.double(), 0, keepdim=True)
  local l = torch.logsumexp(x:double(), {axis = 1, keepdims = true})
  T.eq(l.shape, {1, 3})
  T.near(l, {{4.048587351573742, 5.000911466453775, 3.000123402189723}}, 1e-15)
  -- torch.norm(x, 2, 1, keepdim=True)
  local n = x:norm({axis = 2, keepdims = true})
  T.eq(n.shape, {2, 1})
  T.near(n, {{3.7416574954986572}, {8.774964332580566}}, 1e-7)
end)

T.test("reductions: out= writes the result into the given tensor and returns it", function()
  local x, y = X(), Y()
  check_out(function(o) return np.amax(x, {axis = 2, out = o}) end, torch.empty(2), {3, 5})
  check_out(function(o) return torch.amin(x, {dim = 2, out = o}) end, torch.empty(2), {-2, -6})
  check_out(function(o) return torch.all(y, {dim = 1, out = o}) end, torch.empty(3, {dtype = "bool"}),
            {true, false, false})
  check_out(function(o) return np.any(y, {axis = 2, out = o}) end, torch.empty(2, {dtype = "bool"}), {true, true})
  check_out(function(o) return x:argmax({dim = 2, out = o}) end, torch.empty(2, {dtype = "int64"}), {3, 2})
  check_out(function(o) return torch.argmin(x, {dim = 2, out = o}) end, torch.empty(2, {dtype = "int64"}), {2, 3})
  check_out(function(o) return torch.argsort(x, {dim = 1, out = o}) end, torch.empty(2, 3, {dtype = "int64"}),
            {{1, 1, 2}, {2, 2, 1}})
  check_out(function(o) return np.sort(x, {out = o}) end, torch.empty(2, 3), {{-2, 1, 3}, {-6, 4, 5}})
  check_out(function(o) return torch.cumprod(x, 1, {out = o}) end, torch.empty(2, 3), {{1, -2, 3}, {4, -10, -18}})
  check_out(function(o) return torch.max(x, {out = o}) end, torch.empty({}), 5)
  check_out(function(o) return np.min(x, {axis = 1, out = o}) end, torch.empty(3), {1, -2, -6})
  check_out(function(o) return np.mean(x, {axis = 1, out = o}) end, torch.empty(3), {2.5, 1.5, -1.5})
  check_out(function(o) return torch.prod(y, {dim = 1, out = o}) end, torch.empty(3, {dtype = "int64"}), {4, 0, 0})
  check_out(function(o) return x:norm(1, {dim = 2, out = o}) end, torch.empty(2), {6, 15})
  check_out(function(o) return np.var(y, {axis = 1, out = o}) end, torch.empty(3, {dtype = "float64"}), {2.25, 6.25, 2.25})
  -- torch.std([[1,-2,3],[4,5,-6]], dim=1): sqrt of (4.5, 24.5, 40.5)
  local s = torch.empty(3, {dtype = "float64"})
  T.truthy(rawequal(torch.std(x:double(), {dim = 1, out = s}), s))
  T.near(s, {math.sqrt(4.5), math.sqrt(24.5), math.sqrt(40.5)}, 1e-15)
  local l = torch.empty(2, {dtype = "float64"})
  T.truthy(rawequal(x:double():logsumexp({dim = 2, out = l}), l))
  T.near(l, {3.1328452337275756, 5.313273897365323}, 1e-15)  -- torch.logsumexp(x.double(), 1)
  -- A result that would lose its kind is refused: float into an int64 out.
  T.error(function() torch.mean(x, {out = torch.empty({}, {dtype = "int64"})}) end, "mean:")
  -- The shape must match the result.
  T.error(function() torch.amax(x, {dim = 2, out = torch.empty(3)}) end,
          "amax: out has shape {3} but the result has shape {2}")
end)

T.test("reductions: dtype= computes and returns in that dtype (prod cumprod norm std var)", function()
  -- 2^100 * 2^100 overflows float32 but not float64.
  local big = torch.tensor({2.0 ^ 100, 2.0 ^ 100})
  T.eq(big:prod():item(), math.huge)
  local p = big:prod({dtype = "float64"})
  T.eq({p.dtype, p:item()}, {"float64", 2.0 ^ 200})
  local c = torch.cumprod(big, {dim = 1, dtype = "float64"})
  T.eq({c.dtype, c:tolist()}, {"float64", {2.0 ^ 100, 2.0 ^ 200}})
  T.eq(np.cumprod(torch.tensor({1, 2, 3}), {dtype = "float32"}):tolist(), {1, 2, 6})
  T.eq(np.cumprod(torch.tensor({1, 2, 3}), {dtype = "float32"}).dtype, "float32")
  local n = torch.norm(X(), {dtype = "float64"})
  T.eq(n.dtype, "float64")
  T.near(n:item(), math.sqrt(91), 1e-15)
  -- np.std(i, dtype=np.float32) = 2.5819888 (float32), np.var(i, axis=0, ddof=1) in float64
  local i = torch.tensor({{1, 2, 3}, {4, 5, 9}})
  local s = np.std(i, {dtype = "float32"})
  T.eq(s.dtype, "float32")
  T.near(s:item(), 2.581988897471611, 1e-7)
  local v = torch.var(i, {dim = 1, dtype = "float64"})
  T.eq({v.dtype, v:tolist()}, {"float64", {4.5, 4.5, 18.0}})
end)

T.test("reductions: unbiased= and ddof= set the divisor (n - 1 or n - ddof)", function()
  local x = X()
  -- torch.std(x, unbiased=False) = np.std(x) = 3.8042374035044424
  T.near(x:double():std({unbiased = false}):item(), 3.8042374035044424, 1e-15)
  T.near(x:double():std({unbiased = true}):item(), math.sqrt(86.83333333333333 / 5), 1e-15)
  -- np.var(x, ddof=2) = 21.708333333333336; np.var(x, axis=1, ddof=1) = [6.333..., 37]
  T.near(np.var(x:double(), {ddof = 2}):item(), 21.708333333333336, 1e-15)
  T.near(np.var(x:double(), {axis = 2, ddof = 1}), {6.333333333333334, 37.0}, 1e-15)
end)

T.test("reductions: axis= and dim= of argsort count_nonzero logsumexp topk; sorted=", function()
  local x, y = X(), Y()
  T.eq(np.argsort(x, {axis = 1}):tolist(), {{1, 1, 2}, {2, 2, 1}})
  -- np.count_nonzero(y, axis=0) = [2, 1, 1] (int64); torch.count_nonzero(y, dim=1) = [2, 2]
  local c = np.count_nonzero(y, {axis = 1})
  T.eq({c.dtype, c:tolist()}, {"int64", {2, 1, 1}})
  T.eq(torch.count_nonzero(y, {dim = 2}):tolist(), {2, 2})
  T.eq(torch.count_nonzero(y, 2):tolist(), {2, 2})
  T.eq(y:count_nonzero({dim = {1, 2}}):item(), 4)
  T.eq(np.count_nonzero(y), 4)
  T.near(torch.logsumexp(x, {axis = 2}), {3.132845163345337, 5.313273906707764}, 1e-7)
  local v, i = x:topk(1, {axis = 1})
  T.eq({v:tolist(), i:tolist()}, {{{4, 5, 3}}, {{2, 2, 1}}})
  -- sorted=false leaves the order open (as PyTorch); tide returns the k values sorted.
  local sv, si = torch.tensor({5, 1, 9, 3, 7}):topk(3, {sorted = false})
  T.eq({sv:tolist(), si:tolist()}, {{9, 7, 5}, {3, 5, 1}})
  local uv = torch.tensor({5, 1, 9, 3, 7}):topk(3, {sorted = true, largest = false})
  T.eq(uv:tolist(), {1, 3, 5})
end)

T.test("linalg.norm: p= is ord=; keepdim= keeps the reduced dims", function()
  local x = X():double()
  -- np.linalg.norm(x, 1, axis=1, keepdims=True) = [[6], [15]]
  local n = torch.linalg.norm(x, {p = 1, dim = 2, keepdim = true})
  T.eq({n.shape, n:tolist()}, {{2, 1}, {{6}, {15}}})
  T.eq(torch.linalg.norm(x, {p = 1}):item(), 9)   -- the matrix 1-norm: largest column sum
  T.eq(torch.linalg.norm(x, {p = math.huge, dim = 1}):tolist(), {4, 5, 6})
  local f = torch.linalg.norm(x, {keepdim = true})
  T.eq(f.shape, {1, 1})
  T.near(f, {{9.539392014169456}}, 1e-15)
  T.error(function() torch.linalg.norm(x, {p = 1, ord = 1}) end, "linalg.norm:")
end)

-- shape ------------------------------------------------------------------------------------

T.test("shape ops: dim= and axis= pick the dim (chunk concat split squeeze stack unbind flip)", function()
  local x = T.arange_shaped(2, 3)   -- {{0, 1, 2}, {3, 4, 5}}
  local function lists(ts)
    local out = {}
    for i, t in ipairs(ts) do out[i] = t:tolist() end
    return out
  end
  T.eq(lists(torch.chunk(x, 2, {dim = 2})), {{{0, 1}, {3, 4}}, {{2}, {5}}})
  T.eq(lists(x:chunk(2, {axis = 1})), {{{0, 1, 2}}, {{3, 4, 5}}})
  T.eq(torch.concat({x, x}, {axis = 2}):tolist(), {{0, 1, 2, 0, 1, 2}, {3, 4, 5, 3, 4, 5}})
  T.eq(torch.concat({x, x}, {dim = 1}).shape, {4, 3})
  T.eq(torch.concatenate({x, x}, {dim = 2}).shape, {2, 6})
  T.eq(torch.concatenate({x, x}, {axis = 1}):tolist(), {{0, 1, 2}, {3, 4, 5}, {0, 1, 2}, {3, 4, 5}})
  T.eq(lists(torch.split(x, 1, {axis = 1})), {{{0, 1, 2}}, {{3, 4, 5}}})
  T.eq(lists(x:split({1, 2}, {axis = 2})), {{{0}, {3}}, {{1, 2}, {4, 5}}})
  T.eq(torch.squeeze(torch.zeros(1, 2, 1), {dim = 3}).shape, {1, 2})
  T.eq(np.squeeze(torch.zeros(1, 2, 1), {dim = 1}).shape, {2, 1})
  local st = torch.stack({x, x + 10}, {dim = 3})
  T.eq({st.shape, st[{2, 3}]:tolist()}, {{2, 3, 2}, {5, 15}})
  T.eq(lists(torch.unbind(x, {axis = 2})), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(lists(x:unbind({dim = 1})), {{0, 1, 2}, {3, 4, 5}})
  T.eq(torch.unsqueeze(x, {dim = 2}).shape, {2, 1, 3})
  T.eq(np.expand_dims(x, {dim = 3}).shape, {2, 3, 1})
  -- flip's dims= takes a number or a table, as the positional dims.
  T.eq(torch.flip(x, {dims = {1, 2}}):tolist(), {{5, 4, 3}, {2, 1, 0}})
  T.eq(x:flip({dims = 2}):tolist(), {{2, 1, 0}, {5, 4, 3}})
  T.eq(np.flip(x, {dim = 1}):tolist(), {{3, 4, 5}, {0, 1, 2}})
  T.eq(np.flip(x, {axis = {2}}):tolist(), {{2, 1, 0}, {5, 4, 3}})
  T.error(function() torch.flip(x, {dims = {1, 1}}) end, "flip: dim 1 appears more than once")
end)

T.test("flatten: end_dim= ends the merged range", function()
  local x = torch.zeros(2, 3, 4, 5)
  T.eq(torch.flatten(x, {end_dim = 2}).shape, {6, 4, 5})
  T.eq(x:flatten({start_dim = 2, end_dim = 3}).shape, {2, 12, 5})
  T.eq(T.arange_shaped(2, 2, 2):flatten({end_dim = -2}):tolist(), {{0, 1}, {2, 3}, {4, 5}, {6, 7}})
end)

-- elementwise ------------------------------------------------------------------------------

T.test("elementwise: clip's min= max= a_min= a_max= out=; lerp's and where's out=", function()
  local x = torch.tensor({{1.0, 2, 3}, {4, 5, 6}})
  T.eq(torch.clip(x, {min = 2, max = 4}):tolist(), {{2, 2, 3}, {4, 4, 4}})
  T.eq(x:clip({a_min = 3}):tolist(), {{3, 3, 3}, {4, 5, 6}})
  T.eq(torch.clip(x, {a_max = 2.5}):tolist(), {{1, 2, 2.5}, {2.5, 2.5, 2.5}})
  check_out(function(o) return torch.clip(x, {a_min = 2, a_max = 4, out = o}) end, torch.empty(2, 3),
            {{2, 2, 3}, {4, 4, 4}})
  check_out(function(o) return torch.lerp(torch.zeros(3), torch.tensor({4.0, 8, -4}), 0.25, {out = o}) end,
            torch.empty(3), {1, 2, -1})
  check_out(function(o) return torch.tensor({1.0, 2}):lerp(torch.tensor({3.0, 6}), torch.tensor({0.5, 2.0}), {out = o}) end,
            torch.empty(2), {2, 10})
  check_out(function(o) return torch.where(torch.tensor({true, false}), torch.tensor({1.0, 2}), -1, {out = o}) end,
            torch.empty(2), {1, -1})
end)

T.test("elementwise: alpha= scales the other operand (sub_ subtract index_add), beta=/alpha= of addmm_", function()
  local a = torch.tensor({10.0, 20})
  local r = a:sub_(torch.tensor({1.0, 2}), {alpha = 3})
  T.truthy(rawequal(r, a))
  T.eq(a:tolist(), {7, 14})
  T.eq(np.subtract(torch.tensor({10.0, 20}), torch.tensor({1.0, 2}), {alpha = -2}):tolist(), {12, 24})
  local ia = torch.index_add(torch.zeros(4), 1, torch.tensor({1, 3, 1}), torch.tensor({1.0, 2, 4}), {alpha = 2})
  T.eq(ia:tolist(), {10, 0, 4, 0})
  local m = torch.tensor({{1.0, 2}, {3, 4}})
  -- torch.ones(2,2).addmm_(m, eye, beta=2, alpha=3) = 2 + 3 m
  local c = torch.ones(2, 2)
  T.truthy(rawequal(c:addmm_(m, torch.eye(2), {beta = 2, alpha = 3}), c))
  T.eq(c:tolist(), {{5, 8}, {11, 14}})
  c:addmm_(m, m, {beta = 0})
  T.eq(c:tolist(), {{7, 10}, {15, 22}})
end)

-- indexing ---------------------------------------------------------------------------------

T.test("scatter: src= and value= give what lands at the index", function()
  local idx = torch.tensor({{1, 3}, {2, 1}})
  local x = torch.zeros(2, 3)
  T.eq(torch.scatter(x, 2, idx, {src = torch.tensor({{7.0, 8}, {9, 6}})}):tolist(), {{7, 0, 8}, {6, 9, 0}})
  T.eq(x:scatter(2, idx, {value = 5}):tolist(), {{5, 0, 5}, {5, 5, 0}})
  T.eq(x:tolist(), {{0, 0, 0}, {0, 0, 0}}, "scatter copies")
  T.truthy(rawequal(x:scatter_(1, torch.tensor({{2, 1, 2}}), {src = torch.tensor({{1.0, 2, 3}})}), x))
  T.eq(x:tolist(), {{0, 2, 0}, {1, 0, 3}})
  x:scatter_(1, torch.tensor({{1, 1, 1}}), {value = -1})
  T.eq(x:tolist(), {{-1, -1, -1}, {1, 0, 3}})
  T.error(function() x:scatter(1, idx, {src = x, value = 1}) end, "scatter:")
end)

-- linalg -----------------------------------------------------------------------------------

T.test("linalg: out= of bmm ger linalg.matmul; linear's bias=", function()
  local a = torch.tensor({{{1.0, 2}, {3, 4}}, {{0, 1}, {1, 0}}})
  local b = torch.tensor({{{1.0, 0}, {1, 1}}, {{2, 3}, {4, 5}}})
  check_out(function(o) return torch.bmm(a, b, {out = o}) end, torch.empty(2, 2, 2),
            {{{3, 2}, {7, 4}}, {{4, 5}, {2, 3}}})
  check_out(function(o) return torch.ger(torch.tensor({1.0, 2}), torch.tensor({3.0, 4, 5}), {out = o}) end,
            torch.empty(2, 3), {{3, 4, 5}, {6, 8, 10}})
  check_out(function(o) return torch.linalg.matmul(torch.tensor({{1.0, 2, 3}, {4, 5, 6}}), torch.tensor({1.0, 0, -1}),
                                                   {out = o}) end, torch.empty(2), {-2, -2})
  local w = torch.tensor({{1.0, 2}, {0, 1}, {-1, 1}})
  local x = torch.tensor({{1.0, 1}})
  T.eq(torch.linear(x, w, {bias = torch.tensor({10.0, 20, 30})}):tolist(), {{13, 21, 30}})
  T.eq(torch.linear(x, w):tolist(), {{3, 1, 0}})
end)

-- nn.functional ----------------------------------------------------------------------------

T.test("softmax and log_softmax: dtype= casts the input first and returns that dtype", function()
  local x = torch.tensor({1.0, 2, 4})
  -- torch.softmax(x, 0, dtype=torch.float64), torch.log_softmax(...)
  local s = torch.softmax(x, 1, {dtype = "float64"})
  T.eq(s.dtype, "float64")
  T.near(s, {0.04201006613406605, 0.11419519938459449, 0.8437947344813395}, 1e-15)
  local l = x:log_softmax({dim = 1, dtype = "float64"})
  T.eq(l.dtype, "float64")
  T.near(l, {-3.1698460195562856, -2.1698460195562856, -0.16984601955628567}, 1e-15)
  T.eq(torch.softmax(torch.tensor({0.0, 0}), 1, {dtype = "float16"}):tolist(), {0.5, 0.5})
  T.eq(torch.log_softmax(torch.tensor({0.0, 0}), 1, {dtype = "float16"}).dtype, "float16")
end)

T.test("max_pool2d: kernel_size= as a keyword", function()
  local x = torch.arange(16.0):reshape(1, 1, 4, 4)
  T.eq(torch.max_pool2d(x, {kernel_size = 2}):tolist(), {{{{5, 7}, {13, 15}}}})
  T.eq(torch.max_pool2d(x, {kernel_size = {1, 4}}):tolist(), {{{{3}, {7}, {11}, {15}}}})
  T.eq(torch.max_pool2d(x, {kernel_size = 3, stride = 1}):tolist(), {{{{10, 11}, {14, 15}}}})
end)

-- autograd ---------------------------------------------------------------------------------

T.test("autograd.backward: grad_tensors= weights, retain_graph= allows a second pass, create_graph= records", function()
  local x = torch.tensor({{1.0, 2}, {3, 4}}):requires_grad_()
  local y = x * x
  torch.autograd.backward({y}, {grad_tensors = {torch.tensor({{1.0, 0}, {0, 2}})}, retain_graph = true})
  T.eq(x.grad:tolist(), {{2, 0}, {0, 16}})
  torch.autograd.backward({y}, {grad_tensors = {torch.ones(2, 2)}})   -- the retained graph
  T.eq(x.grad:tolist(), {{4, 4}, {6, 24}})
  T.error(function() torch.autograd.backward({y}, {grad_tensors = {torch.ones(2, 2)}}) end, "backward")
  x.grad = nil
  local z = (x * x * x):sum()
  torch.autograd.backward({z}, {create_graph = true})
  T.eq(x.grad:tolist(), {{3, 12}, {27, 48}})
  T.eq(x.grad.requires_grad, true)
  local g = x.grad:sum()
  x.grad = nil
  g:backward()
  T.eq(x.grad:tolist(), {{6, 12}, {18, 24}}, "d/dx of sum(3 x^2) through the recorded gradient")
end)

T.test("backward: gradient= weights a non-scalar output; create_graph= records", function()
  local z = torch.tensor({1.0, 2}):requires_grad_()
  local w = z * z * z
  w:backward({gradient = torch.tensor({1.0, 0.5}), create_graph = true})
  T.eq(z.grad:tolist(), {3, 6})
  T.eq(z.grad.requires_grad, true)
  local g = z.grad:sum()
  z.grad = nil
  g:backward()
  T.eq(z.grad:tolist(), {6, 6}, "d/dz of 3 z1^2 + 1.5 z2^2")
  local v = torch.tensor({1.0, 2}):requires_grad_()
  ;(v * 2):backward({gradient = torch.tensor({1.0, 1})})
  T.eq({v.grad:tolist(), v.grad.requires_grad}, {{2, 2}, false})
end)

T.test("requires_grad_: requires_grad= turns recording on and off", function()
  local t = torch.ones(2)
  T.truthy(rawequal(t:requires_grad_({requires_grad = true}), t))
  T.eq(t.requires_grad, true)
  t:requires_grad_({requires_grad = false})
  T.eq(t.requires_grad, false)
  T.eq((t * 2).requires_grad, false)
  T.error(function() torch.ones(2, {dtype = "int64"}):requires_grad_({requires_grad = true}) end, "requires_grad_:")
end)

-- io ---------------------------------------------------------------------------------------

T.test("savetxt: newline= header= footer= comments= as NumPy writes them; loadtxt's comments=", function()
  local _, path = T.tmpdir()
  local f = path("t.txt")
  np.savetxt(f, np.array({{1, 2.5}, {3, 4}}), {fmt = "%g", delimiter = ",", newline = ";\n", header = "h1",
                                                footer = "end", comments = "// "})
  -- np.savetxt(b, [[1, 2.5], [3, 4]], fmt='%g', delimiter=',', newline=';\n', header='h1',
  --            footer='end', comments='// ')
  T.eq(T.read_bytes(f), "// h1;\n1,2.5;\n3,4;\n// end;\n")
  T.write_bytes(f, "% note\n1 2 %x\n3 4\n; other\n")
  T.eq(np.loadtxt(f, {comments = {"%", ";"}}):tolist(), {{1, 2}, {3, 4}})
  T.write_bytes(f, "1 2\n#3 4\n")
  T.error(function() np.loadtxt(f, {comments = "%"}) end, "line 2, column 1: could not convert '#3' to float64")
  T.eq(np.loadtxt(f, {comments = "#"}):tolist(), {1, 2})
  os.remove(f)
end)

T.done()
