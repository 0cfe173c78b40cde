-- The gradient column of the conformance table: autograd's gradients against central finite
-- differences, for every row of ops.lua that names its differentiable inputs (`grad`).
--
--   tide gradcheck.lua OUTDIR [FIRST_ROW]
--
-- Per row it takes the row's own cases (the same ones runner.lua builds; half as many under
-- TIDE_SANITIZED=1), those with a floating-point differentiable input, converts their
-- floating-point tensors to float64 (index, mask and target inputs stay as they are),
-- moves values off kinks and domain edges, and makes the inputs named by `grad` leaves. With
-- y = call(...) and a fixed random r per output (seeded by the row name), s = sum(y * r) over
-- the floating-point outputs; torch.autograd.grad gives ds/dx, and each checked element must
-- agree with (s(x + h) - s(x - h)) / 2h computed under torch.no_grad. Rows with `gradgrad`
-- also check second derivatives: s2 = sum(ds/dx * r2) differentiated through the
-- create_graph=true gradients, against finite differences of the first-order gradients.
--
-- Each checked case is one test (a second-order check is another). Failures are printed as
-- they happen; OUTDIR/progress gets "begin N NAME" before row N and "end N PASSED FAILED"
-- after it, and "done" at the end, so that run_grad.sh can charge a crash to its row, restart
-- at the next one and add up the counts. Environment: CONFORMANCE_ROWS (a Lua pattern: only
-- matching rows), TIDE_SANITIZED=1 (half the cases and checked elements).
local here = arg[0]:match("(.*/)") or "./"
local OUT = assert(arg[1], "usage: tide gradcheck.lua OUTDIR [FIRST_ROW]")
local FIRST = tonumber(arg[2] or "1")
local FILTER = os.getenv("CONFORMANCE_ROWS")
local SANITIZED = os.getenv("TIDE_SANITIZED") == "1"

local G = dofile(here .. "gen.lua")
G.scale = SANITIZED and 0.5 or 1.0
local rows = assert(loadfile(here .. "ops.lua"))(G)

local H = 1e-6                               -- finite-difference step
local RTOL = 1e-5                            -- |analytic - numeric| <= RTOL * (1 + |numeric|) + noise
local EPS = 2.220446049250313e-16
local MAX_ELEMENTS = SANITIZED and 8 or 16   -- checked elements per input
local FLOAT = {float16 = true, bfloat16 = true, float32 = true, float64 = true}

local function is_float_tensor(v) return torch.is_tensor(v) and FLOAT[v.dtype] == true end
local function is_list(v) return type(v) == "table" and not torch.is_tensor(v) end

---------------------------------------------------------------------------------------------
-- Values. A domain says where a differentiable input's values may lie for a well-conditioned
-- check (`ok`) and how to draw a replacement (`draw`).
local function within(lo, hi) return function(v) return v >= lo and v <= hi end end
local function magnitude(lo, hi) return function(v) return math.abs(v) >= lo and math.abs(v) <= hi end end
local function signed(lo, hi)
  return function() return (math.random() < 0.5 and -1 or 1) * G.uniform(lo, hi) end
end
local DOMAINS = {
  real = {ok = within(-20, 20), draw = function() return math.max(-6, math.min(6, 1.5 * G.randn())) end},
  small = {ok = within(-3, 3), draw = function() return G.uniform(-3, 3) end},
  pos = {ok = within(0.05, 20), draw = function() return math.exp(G.uniform(-2, 2)) end},
  unit = {ok = within(-0.95, 0.95), draw = function() return G.uniform(-0.9, 0.9) end},
  nonzero = {ok = magnitude(0.1, 20), draw = signed(0.25, 3)},
  exp = {ok = within(-2, 3), draw = function() return G.uniform(-2, 3) end},
  prob = {ok = within(0.02, 0.98), draw = function() return G.uniform(0.05, 0.95) end},
}
DOMAINS.div = DOMAINS.nonzero

local function domain_of(row, name)
  local d = row.grad_domain or row.domain
  if type(d) == "table" then d = d[name] end
  return DOMAINS[d] or DOMAINS.real
end

-- A float64 copy of t (contiguous) whose values are all fit for differentiation: finite,
-- inside the domain, off the 1/8 grid (where floor, round, abs, relu, ... have their kinks and
-- the generators' edge values lie), not within MIN_ABS of 0 (nor the generators' tiny and
-- subnormal edge values), and with magnitudes at least MIN_GAP apart (no ties for
-- max, sort or abs). Kept values move by a relative JITTER, so that the few bits of float16
-- and bfloat16 values make no coincidences between inputs either (a // b with a == b sits on
-- a jump); offending values are redrawn. With grid = true every value is drawn from the 1/8
-- grid in [-4, 4] instead (exact in every float dtype: the check of casts).
local GRID = 8
local MIN_GAP = 1e-5
local MIN_ABS = 1e-2
local JITTER = 1e-3
local function unfit(v, dom)
  return v ~= v or not dom.ok(v) or math.abs(v) < MIN_ABS or v * GRID == math.floor(v * GRID)
end

local function fit_values(t, dom, grid)
  local n = t:numel()
  if n == 0 then return torch.zeros(t.shape, {dtype = "float64"}) end
  local vals = t:double():reshape(n):tolist()
  if grid then
    for i = 1, n do vals[i] = math.random(-4 * GRID, 4 * GRID) / GRID end
  else
    for i = 1, n do vals[i] = vals[i] * (1 + JITTER * G.uniform(-1, 1)) end
    local order = {}
    for i = 1, n do order[i] = i end
    for _ = 1, 100 do
      for i = 1, n do
        while unfit(vals[i], dom) do vals[i] = dom.draw() end
      end
      table.sort(order, function(x, y) return math.abs(vals[x]) < math.abs(vals[y]) end)
      local tied = {}
      for k = 2, n do
        if math.abs(vals[order[k]]) - math.abs(vals[order[k - 1]]) < MIN_GAP then tied[#tied + 1] = order[k] end
      end
      if #tied == 0 then break end
      for _, i in ipairs(tied) do vals[i] = dom.draw() end
    end
  end
  return torch.tensor(G.nested(vals, t.shape), {dtype = "float64"})
end

-- A Lua-number operand outside the input's domain (a negative base of pow) is redrawn, on
-- the 1/8 grid as the generators make them; numbers are not differentiated.
local function fit_number(v, dom)
  while not dom.ok(v) do v = math.floor(dom.draw() * GRID + 0.5) / GRID end
  return v
end

local function shape_text(shape)
  local parts = {}
  for i, d in ipairs(shape) do parts[i] = tostring(d) end
  return "{" .. table.concat(parts, ",") .. "}"
end

---------------------------------------------------------------------------------------------
-- Cases. A slot is one differentiable tensor: an input name and, for a list input (cat,
-- stack), the position in the list.
local INPUTS = {"a", "b", "c"}

local function tensor_text(t) return t.dtype .. shape_text(t.shape) end

-- The float64 version of a case: args (a, b, c as the call gets them, with a hole at every
-- slot), slots ({name=, item=}), values (a float64 tensor per slot), dtypes (the inputs'
-- original dtypes, for casts) and text (the inputs, for messages). nil when no
-- differentiable input holds a floating-point tensor.
local function prepare(row, case)
  local wanted = {}
  for _, nm in ipairs(row.grad) do wanted[nm] = true end
  local prep = {args = {}, slots = {}, values = {}, dtypes = {}}
  local text = {}
  local function convert(v, name, item)
    if not is_float_tensor(v) then return v end
    if not wanted[name] then return v:double() end
    prep.slots[#prep.slots + 1] = {name = name, item = item}
    prep.values[#prep.values + 1] = fit_values(v, domain_of(row, name), row.grad_values == "grid")
    return false
  end
  for _, nm in ipairs(INPUTS) do
    local v = case[nm]
    if torch.is_tensor(v) then
      prep.dtypes[nm] = v.dtype
      prep.args[nm] = convert(v, nm)
      text[#text + 1] = nm .. "=" .. tensor_text(v)
    elseif is_list(v) and torch.is_tensor(v[1]) then
      local list, items = {}, {}
      for i, t in ipairs(v) do
        list[i] = convert(t, nm, i)
        items[i] = tensor_text(t)
      end
      prep.args[nm] = list
      text[#text + 1] = nm .. "=[" .. table.concat(items, " ") .. "]"
    elseif type(v) == "number" then
      prep.args[nm] = fit_number(v, domain_of(row, nm))
      text[#text + 1] = nm .. "=" .. tostring(prep.args[nm])
    else
      prep.args[nm] = v
    end
  end
  if #prep.slots == 0 then return nil end
  prep.text = table.concat(text, " ")
  return prep
end

-- The arguments with the slots' tensors set to `vals`.
local function build_args(prep, vals)
  local args = {}
  for _, nm in ipairs(INPUTS) do
    local v = prep.args[nm]
    args[nm] = is_list(v) and G.copy(v) or v
  end
  for i, s in ipairs(prep.slots) do
    if s.item then args[s.name][s.item] = vals[i] else args[s.name] = vals[i] end
  end
  return args
end

-- The floating-point outputs of the row's call at `vals`.
local function float_outputs(row, prep, vals, p)
  local args = build_args(prep, vals)
  local fn = row.grad_call or row.call
  local res = table.pack(fn(args.a, args.b, args.c, p, prep.dtypes))
  local list = {}
  for i = 1, res.n do list[#list + 1] = res[i] end
  if #list == 1 and is_list(list[1]) then list = list[1] end
  local outs = {}
  for _, v in ipairs(list) do
    if is_float_tensor(v) then outs[#outs + 1] = v end
  end
  if #outs == 0 then error("the op returned no floating-point output", 0) end
  return outs
end

-- sum_i sum(y_i * r_i) in float64, a 0-dim tensor.
local function contract(ys, rs)
  local s
  for i, y in ipairs(ys) do
    if rs[i] == nil then error("the op returned more floating-point outputs than at the first call", 0) end
    local t = (y:double() * rs[i]):sum()
    s = s and s + t or t
  end
  return s
end

-- sum_i sum(|y_i * r_i|): the scale of the rounding noise in a finite difference of contract.
local function magnitude_sum(ys, rs)
  return torch.no_grad(function()
    local m = 0
    for i, y in ipairs(ys) do m = m + (y:double() * rs[i]):abs():sum():item() end
    return m
  end)
end

-- A fixed random tensor (float64) of each tensor's shape: standard normal values, or with
-- grid = true values of the 1/8 grid in [-4, 4] (a gradient every float dtype holds exactly).
local function weights_like(ts, grid)
  local draw = grid and function() return math.random(-4 * GRID, 4 * GRID) / GRID end or G.randn
  local rs = {}
  for i, t in ipairs(ts) do rs[i] = G.make(t.shape, "float64", {fn = draw}) end
  return rs
end

local function leaves_of(vals)
  local leaves = {}
  for i, v in ipairs(vals) do leaves[i] = v:clone():requires_grad_() end
  return leaves
end

-- The gradients of s = contract(outputs, rs) at vals (zeros for inputs s does not use);
-- without rs, draws them. Returns the gradients, the leaves, s, the outputs and rs.
local function gradients(row, prep, vals, p, rs, create_graph)
  local leaves = leaves_of(vals)
  local ys = float_outputs(row, prep, leaves, p)
  rs = rs or weights_like(ys, row.grad_values == "grid")
  local s = contract(ys, rs)
  if not s.requires_grad then error("the result does not require grad: the op recorded nothing for autograd", 0) end
  local gs = torch.autograd.grad({s}, leaves, {allow_unused = true, create_graph = create_graph})
  for i, v in ipairs(vals) do
    if gs[i] == nil then gs[i] = torch.zeros(v.shape, {dtype = "float64"}) end
  end
  return gs, leaves, s, ys, rs
end

-- Up to MAX_ELEMENTS element positions (1-based, flat) of a tensor with n elements: the
-- first, the last and random ones between.
local function sample(n)
  local ks = {}
  if n <= MAX_ELEMENTS then
    for k = 1, n do ks[k] = k end
    return ks
  end
  local seen = {[1] = true, [n] = true}
  ks[1], ks[2] = 1, n
  while #ks < MAX_ELEMENTS do
    local k = math.random(1, n)
    if not seen[k] then seen[k] = true; ks[#ks + 1] = k end
  end
  table.sort(ks)
  return ks
end

-- vals with element k of slot i set to x.
local function perturbed(vals, i, k, x)
  local copy = G.copy(vals)
  local t = vals[i]:clone()
  t:view(-1)[k] = x
  copy[i] = t
  return copy
end

local function slot_text(s) return s.item and string.format("%s[%d]", s.name, s.item) or s.name end

-- Compares analytic gradients gs (one per slot, at vals) with central differences of
-- value(vals), element by element (step: the row's grad_h or H); noise: the magnitude sum
-- behind value. Returns nil, or a message naming the worst element.
local function compare(row, prep, vals, gs, value, noise)
  local h, tol = row.grad_h or H, row.grad_tol or RTOL
  local worst, message = 1.0, nil
  for i, v in ipairs(vals) do
    local g, name = gs[i], slot_text(prep.slots[i])
    if not torch.is_tensor(g) or g.dtype ~= "float64" or shape_text(g.shape) ~= shape_text(v.shape) then
      return string.format("d/d%s is %s, expected a float64 tensor of shape %s", name,
                           torch.is_tensor(g) and tensor_text(g) or type(g), shape_text(v.shape))
    end
    local n = v:numel()
    if n > 0 then
      local flat_v, flat_g = v:reshape(n):tolist(), g:reshape(n):tolist()
      for _, k in ipairs(sample(n)) do
        local up = value(perturbed(vals, i, k, flat_v[k] + h))
        local down = value(perturbed(vals, i, k, flat_v[k] - h))
        local numeric, analytic = (up - down) / (2 * h), flat_g[k]
        local allowed = tol * (1 + math.abs(numeric)) + 64 * EPS * noise / h
        local err = math.abs(analytic - numeric)
        local ratio = err / allowed
        if ratio ~= ratio then ratio = math.huge end
        if ratio > worst then
          worst = ratio
          message = string.format("d/d%s (shape %s) at element %d: analytic %.10g, numeric %.10g (|diff| %.3g > %.3g)",
                                  name, shape_text(v.shape), k, analytic, numeric, err, allowed)
        end
      end
    end
  end
  return message
end

-- First-order check of one case. Returns false when s is not finite at these inputs (var of
-- one element, mean of nothing: nothing to differentiate), else the failure message or nil,
-- and the output weights rs.
local function check_first(row, prep, p)
  local gs, _, s, ys, rs = gradients(row, prep, prep.values, p, nil, false)
  if not s:isfinite():item() then return false end
  local function value(vals)
    return torch.no_grad(function() return contract(float_outputs(row, prep, vals, p), rs):item() end)
  end
  return compare(row, prep, prep.values, gs, value, magnitude_sum(ys, rs)), rs
end

-- Second-order check: the gradient of s2 = sum(ds/dx * r2) through create_graph=true
-- gradients, against central differences of s2 computed from first-order gradients.
local function check_second(row, prep, p, rs)
  local gs, leaves = gradients(row, prep, prep.values, p, rs, true)
  local r2 = weights_like(gs, row.grad_values == "grid")
  local s2 = contract(gs, r2)
  -- A gradient that does not depend on the inputs (add, sum) has zero second derivatives.
  local hs = s2.requires_grad and torch.autograd.grad({s2}, leaves, {allow_unused = true}) or {}
  for i, v in ipairs(prep.values) do
    if hs[i] == nil then hs[i] = torch.zeros(v.shape, {dtype = "float64"}) end
  end
  local function value(vals)
    local g = gradients(row, prep, vals, p, rs, false)
    return torch.no_grad(function() return contract(g, r2):item() end)
  end
  return compare(row, prep, prep.values, hs, value, magnitude_sum(gs, r2))
end

---------------------------------------------------------------------------------------------
local progress = assert(io.open(OUT .. "/progress", "a"))

local function short_error(e)
  return (tostring(e):gsub("\nstack traceback:.*", ""))
end

local function report(row, ci, order, text, msg)
  io.write(string.format("FAIL %s (%s gradient) case %d: %s%s\n", row.name, order, ci, msg,
                         text and (" | " .. text) or ""))
  io.flush()
end

-- Checks a row's cases; returns the numbers of passed and failed checks.
local function run_row(row)
  local passed, failed = 0, 0
  local function fail(ci, order, text, msg)
    failed = failed + 1
    report(row, ci, order, text, msg)
  end
  local ok_cases, cases = pcall(row.cases)
  if not ok_cases then
    fail(0, "first-order", nil, "case generator failed: " .. short_error(cases))
    return passed, failed
  end
  G.seed("grad " .. row.name)
  local checkable = {}
  for ci, case in ipairs(cases) do
    local prep = (not row.grad_if or row.grad_if(case)) and prepare(row, case)
    if prep then checkable[#checkable + 1] = {ci = ci, prep = prep, p = case.p or {}} end
  end
  if #checkable == 0 then
    fail(0, "first-order", nil, "no case has a floating-point tensor among the inputs " .. table.concat(row.grad, ", "))
  end
  local checked = 0   -- cases where s is finite
  for _, c in ipairs(checkable) do
    local ok, msg, rs = xpcall(check_first, debug.traceback, row, c.prep, c.p)
    if msg ~= false then checked = checked + 1 end
    if not ok then
      fail(c.ci, "first-order", c.prep.text, "raised: " .. short_error(msg))
    elseif msg then
      fail(c.ci, "first-order", c.prep.text, msg)
    elseif msg == nil then
      passed = passed + 1
      if row.gradgrad then
        local ok2, msg2 = xpcall(check_second, debug.traceback, row, c.prep, c.p, rs)
        if not ok2 then fail(c.ci, "second-order", c.prep.text, "raised: " .. short_error(msg2))
        elseif msg2 then fail(c.ci, "second-order", c.prep.text, msg2)
        else passed = passed + 1 end
      end
    end
  end
  if #checkable > 0 and checked == 0 then fail(0, "first-order", nil, "no case has a finite value to differentiate") end
  return passed, failed
end

for ri, row in ipairs(rows) do
  if ri >= FIRST and row.grad and (not FILTER or row.name:find(FILTER)) then
    progress:write("begin ", ri, " ", row.name, "\n")
    progress:flush()
    G.seed(row.name)
    local passed, failed = run_row(row)
    collectgarbage()
    progress:write("end ", ri, " ", passed, " ", failed, "\n")
    progress:flush()
  end
end
progress:write("done\n")
progress:close()
