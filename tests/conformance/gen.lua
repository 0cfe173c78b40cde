-- Case generators of the conformance harness: deterministic random shapes, values, dtypes
-- and memory layouts (contiguous, transposed, stepped slices, offset slices, expanded), plus
-- the generic case lists for unary and binary pointwise rows. ops.lua receives this table.
local G = {}

G.DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
            "uint16", "uint32", "uint64"}
G.FLOATS = {"float16", "bfloat16", "float32", "float64"}
G.INTS = {"uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"}
G.NUMERIC = {"uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64", "uint16",
             "uint32", "uint64"}
G.INTEGRAL = {"bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"}
G.scale = 1.0

local is_float = {float16 = true, bfloat16 = true, float32 = true, float64 = true}
G.is_float = function(dt) return is_float[dt] == true end

-- Every row gets its own stream, seeded from its name: adding a row changes no other row.
function G.seed(name)
  local h = 5381
  for i = 1, #name do h = (h * 33 + name:byte(i)) % 2147483647 end
  math.randomseed(h)
end

function G.randint(lo, hi) return math.random(lo, hi) end
function G.uniform(lo, hi) return lo + (hi - lo) * math.random() end
function G.pick(list) return list[math.random(#list)] end
function G.chance(p) return math.random() < p end
function G.randn()
  local u = 1 - math.random()
  return math.sqrt(-2 * math.log(u)) * math.cos(2 * math.pi * math.random())
end
-- How many cases to make where a row asks for n (fewer under the sanitizers).
function G.count(n) return math.max(1, math.floor(n * G.scale + 0.5)) end

function G.numel(shape)
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return n
end
-- A shallow copy of a list or a keyword table.
function G.copy(t)
  local r = {}
  for k, v in pairs(t) do r[k] = v end
  return r
end
-- A keyword table, or nil when it is empty (an empty table would be a positional argument).
function G.kwargs(t) return t ~= nil and next(t) ~= nil and t or nil end

-- f(...) with the keyword table kw appended when there is one.
function G.with_kw(f, kw, ...)
  local args = table.pack(...)
  if G.kwargs(kw) then
    args.n = args.n + 1
    args[args.n] = kw
  end
  return f(table.unpack(args, 1, args.n))
end

function G.others(list, x)
  local r = {}
  for _, v in ipairs(list) do if v ~= x then r[#r + 1] = v end end
  return r
end
function G.contains(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

---------------------------------------------------------------------------------------------
-- Values. Integer ranges stay where C++ arithmetic on int32/int64 cannot overflow (signed
-- overflow is undefined behaviour, and the sanitizer build stops on it); int8/int16/uint8 use
-- their full range (they are computed in int and wrap on the way back, as in PyTorch).
local INT_RANGE = {uint8 = {0, 255}, int8 = {-128, 127}, int16 = {-32768, 32767},
                   int32 = {-40000, 40000}, int64 = {-2147483648, 2147483647},
                   uint16 = {0, 65535}, uint32 = {0, 80000}, uint64 = {0, 4294967295}}
local BIG = {float16 = 60000.0, bfloat16 = 1e38, float32 = 3e38, float64 = 1e300}
local TINY = {float16 = 1e-7, bfloat16 = 1e-39, float32 = 1e-40, float64 = 1e-310}

function G.edge_values(dt)
  return {0 / 0, math.huge, -math.huge, 0.0, -0.0, BIG[dt], -BIG[dt], TINY[dt], -TINY[dt],
          1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 1e-3, 100.0}
end

local function int_value(dt, dom)
  local lo, hi = INT_RANGE[dt][1], INT_RANGE[dt][2]
  if dom == "small" then lo, hi = math.max(lo, -3), math.min(hi, 3)
  elseif dom == "pos" then lo, hi = 1, math.min(hi, 1000)
  elseif dom == "nonneg" then lo, hi = 0, math.min(hi, 1000)
  elseif dom == "unit" then lo, hi = math.max(lo, -1), 1
  elseif dom == "exp" then lo, hi = 0, 4           -- exponents of integer pow
  elseif dom == "prob" then lo, hi = 0, 1
  elseif dom == "div" or dom == "nonzero" then lo, hi = math.max(lo, -100), math.min(hi, 100)
  elseif dom == "mid" then lo, hi = math.max(lo, -100), math.min(hi, 100)
  elseif dom == "castable" then lo, hi = 0, 100     -- fits every dtype
  end
  local v = math.random(lo, hi)
  if (dom == "nonzero" or dom == "div") and v == 0 then v = hi end
  return v
end

local function float_value(dom)
  if dom == "pos" then return math.exp(1.5 * G.randn()) end
  if dom == "nonneg" then return math.abs(2 * G.randn()) end
  if dom == "unit" then return G.uniform(-1, 1) end
  if dom == "prob" then return math.random() end
  if dom == "small" then return G.uniform(-3, 3) end
  if dom == "exp" then return G.uniform(-2, 3) end
  if dom == "int" then return math.random(-20, 20) + 0.0 end
  if dom == "castable" then return math.random(0, 100) + 0.0 end
  if dom == "nonzero" or dom == "div" then
    local v = 2 * G.randn()
    if math.abs(v) < 0.1 then v = v < 0 and v - 0.5 or v + 0.5 end
    return v
  end
  local s = G.pick({1.0, 1.0, 4.0, 0.1})
  return s * G.randn()
end

-- One value of dtype dt from domain dom ("real" by default); edges: chance of an edge value.
function G.value(dt, dom, edges, edge_list)
  if dt == "bool" then
    if dom == "true" then return true end
    return math.random() < 0.5
  end
  if is_float[dt] then
    if edges and math.random() < edges then return G.pick(edge_list or G.edge_values(dt)) end
    return float_value(dom)
  end
  return int_value(dt, dom)
end

local function nest(flat, shape, dim, pos)
  if dim == #shape then
    local r = {}
    for i = 1, shape[dim] do r[i] = flat[pos + i] end
    return r, pos + shape[dim]
  end
  local r = {}
  for i = 1, shape[dim] do r[i], pos = nest(flat, shape, dim + 1, pos) end
  return r, pos
end

-- A Lua nested table of shape `shape` holding the values of flat (row-major).
function G.nested(flat, shape)
  if #shape == 0 then return flat[1] end
  return (nest(flat, shape, 1, 0))
end

-- A new contiguous tensor; opts: dom, edges (probability of an edge value), edge_list (which
-- edge values), values (a flat list to use instead of random values), fn (makes each value).
function G.make(shape, dt, opts)
  opts = opts or {}
  local n = G.numel(shape)
  if n == 0 then return torch.zeros(shape, {dtype = dt}) end
  local flat = opts.values
  if not flat then
    flat = {}
    for i = 1, n do
      if opts.fn then flat[i] = opts.fn() else flat[i] = G.value(dt, opts.dom, opts.edges, opts.edge_list) end
    end
  end
  return torch.tensor(G.nested(flat, shape), {dtype = dt})
end

G.LAYOUTS = {"contig", "T", "step", "offset", "expand", "perm"}
G.NONCONTIG = {"T", "step", "offset", "expand", "perm"}

-- A tensor of `shape` and dtype `dt` whose memory is laid out as `layout` says (falls back to
-- contiguous where the shape does not allow it). Returns the tensor and the layout used.
function G.view(shape, dt, layout, opts)
  local r = #shape
  if layout == "T" and r >= 2 then
    local s = G.copy(shape)
    s[r - 1], s[r] = s[r], s[r - 1]
    return G.make(s, dt, opts):transpose(-2, -1), "T"
  elseif layout == "perm" and r >= 3 then
    local s = {}
    for i = 1, r do s[i] = shape[r + 1 - i] end
    local dims = {}
    for i = 1, r do dims[i] = r + 1 - i end
    return G.make(s, dt, opts):permute(table.unpack(dims)), "perm"
  elseif layout == "step" and r >= 1 then
    local s, idx = {}, {}
    for i, d in ipairs(shape) do
      if d == 0 then s[i], idx[i] = 0, ":"
      else
        local extra = math.random(0, 1)
        s[i], idx[i] = 2 * d + extra, {2, 2 * d, 2}
      end
    end
    return G.make(s, dt, opts)[idx], "step"
  elseif layout == "offset" and r >= 1 then
    local s, idx = {}, {}
    for i, d in ipairs(shape) do
      if d == 0 then s[i], idx[i] = 0, ":"
      else s[i], idx[i] = d + 1, {2, d + 1} end
    end
    return G.make(s, dt, opts)[idx], "offset"
  elseif layout == "expand" and r >= 1 then
    local s, any = {}, false
    for i, d in ipairs(shape) do
      if d > 1 and (not any or math.random() < 0.5) then s[i], any = 1, true else s[i] = d end
    end
    if any then return G.make(s, dt, opts):expand(table.unpack(shape)), "expand" end
  end
  return G.make(shape, dt, opts), "contig"
end

---------------------------------------------------------------------------------------------
-- Shapes.
local DIMS = {1, 2, 3, 4, 5, 7}

-- A random shape; opts: min_rank, max_rank, zero (chance of a size-0 dim), max_numel.
function G.shape(opts)
  opts = opts or {}
  local lo, hi = opts.min_rank or 1, opts.max_rank or 4
  local maxn = opts.max_numel or 240
  while true do
    local r = math.random(lo, hi)
    local s = {}
    for i = 1, r do
      if opts.zero and math.random() < opts.zero then s[i] = 0 else s[i] = G.pick(opts.dims or DIMS) end
    end
    if G.numel(s) <= maxn then return s end
  end
end

-- Two shapes that broadcast to each other (and the shape they broadcast to).
function G.broadcast_pair(opts)
  local out = G.shape(opts)
  local a, b = G.copy(out), {}
  local drop = math.random(0, #out)
  for i = drop + 1, #out do b[#b + 1] = out[i] end
  for i = 1, #b do if math.random() < 0.3 then b[i] = 1 end end
  for i = 1, #a do if math.random() < 0.15 and a[i] ~= 0 then a[i] = 1 end end
  if math.random() < 0.5 then a, b = b, a end
  return a, b
end

-- Shapes of the "special" kinds, in turn: 0-dim, a size-0 dim, size-1 dims.
local SPECIAL = {{}, {0}, {3, 0}, {1}, {1, 1, 3}, {2, 0, 3}, {4, 1}}
function G.special_shape(k) return G.copy(SPECIAL[(k - 1) % #SPECIAL + 1]) end

---------------------------------------------------------------------------------------------
-- Generic cases of pointwise rows. Row fields used: dtypes, domain (a string, or {a=, b=}),
-- edges (false: no edge values), scalars ({"int", "float"}: Lua numbers accepted as b),
-- scalar_left (a Lua number may be the first operand), per_dtype (cases per dtype).
local function dom_of(row, nm)
  if type(row.domain) == "table" then return row.domain[nm] end
  return row.domain
end
local function edge_p(row) if row.edges == false then return nil end return 0.35 end

function G.unary_cases(row)
  local cases = {}
  local dts = row.dtypes or G.DTYPES
  local k = 0
  for di, dt in ipairs(dts) do
    local n = G.count(row.per_dtype or 4)
    for j = 1, n do
      k = k + 1
      local opts = {dom = dom_of(row, "a")}
      local shape, layout
      local kind = (j + di) % 4
      if j == 1 then shape, layout = G.shape({max_rank = 3}), "contig"
      elseif kind == 0 and is_float[dt] and row.edges ~= false then
        shape, layout, opts.edges = {G.randint(8, 24)}, "contig", edge_p(row)
      elseif kind == 1 then shape, layout = G.special_shape(k), G.pick(G.LAYOUTS)
      else shape, layout = G.shape({min_rank = 1, max_rank = 4}), G.pick(G.NONCONTIG) end
      local a, used = G.view(shape, dt, layout, opts)
      cases[#cases + 1] = {a = a, layouts = {a = used}}
    end
  end
  return cases
end

-- A Lua number for the scalar operand: an integer, or a float with a fraction.
function G.scalar(kind, dom, dt)
  if kind == "int" then
    local v = int_value(dt and not is_float[dt] and dt ~= "bool" and dt or "int8", dom)
    return math.tointeger(v)
  end
  -- On a 1/8 grid: exactly representable in every float dtype, so the result does not hang
  -- on how an op rounds the number for a float16/bfloat16 tensor.
  local v = math.floor(float_value(dom) * 8 + 0.5) / 8
  if v == math.floor(v) then v = v + 0.125 end
  return v
end

function G.binary_cases(row)
  local cases = {}
  local dts = row.dtypes or G.DTYPES
  local scalars = row.scalars or {"int", "float"}
  local k = 0
  for di, dt in ipairs(dts) do
    local n = G.count(row.per_dtype or 5)
    for j = 1, n do
      k = k + 1
      local dtb = dt
      if j == 3 and #dts > 1 and not row.same_dtype then dtb = G.pick(G.others(row.dtypes_b or dts, dt)) end
      local oa = {dom = dom_of(row, "a")}
      local ob = {dom = dom_of(row, "b")}
      local case
      if j == 1 then
        local sa, sb = G.broadcast_pair({max_rank = 3})
        case = {a = G.make(sa, dt, oa), b = G.make(sb, dtb, ob), layouts = {a = "contig", b = "contig"}}
      elseif j == 2 then
        local s = G.shape({min_rank = 1, max_rank = 4})
        local a, la = G.view(s, dt, G.pick(G.NONCONTIG), oa)
        local sb = G.copy(s)
        if #sb > 1 and math.random() < 0.5 then table.remove(sb, 1) end
        local b, lb = G.view(sb, dtb, G.pick(G.LAYOUTS), ob)
        case = {a = a, b = b, layouts = {a = la, b = lb}}
      elseif j == 3 then
        local sa, sb = G.broadcast_pair({max_rank = 4})
        local a, la = G.view(sa, dt, G.pick(G.LAYOUTS), oa)
        local b, lb = G.view(sb, dtb, G.pick(G.LAYOUTS), ob)
        case = {a = a, b = b, layouts = {a = la, b = lb}}
      elseif j == 4 and #scalars > 0 then
        local sc = G.scalar(scalars[(di % #scalars) + 1], dom_of(row, "b"), dtb)
        local s = G.shape({max_rank = 3})
        local a, la = G.view(s, dt, G.pick(G.LAYOUTS), oa)
        if row.scalar_left and di % 2 == 0 then
          local sl = G.scalar(scalars[((di + 1) % #scalars) + 1], dom_of(row, "a"), dt)
          local b, lb = G.view(s, dtb, G.pick(G.LAYOUTS), ob)
          case = {a = sl, b = b, layouts = {b = lb}}
        else
          case = {a = a, b = sc, layouts = {a = la}}
        end
      else
        -- Edge values (floats) or special shapes: 0-dim with n-dim, size-0 dims.
        if is_float[dt] and row.edges ~= false and j % 2 == 1 then
          local n1 = G.randint(6, 20)
          oa.edges, ob.edges = edge_p(row), edge_p(row)
          case = {a = G.make({n1}, dt, oa), b = G.make({n1}, dtb, ob), layouts = {a = "contig", b = "contig"}}
        else
          local s = G.special_shape(k)
          local t = {}
          if math.random() < 0.5 then
            for i, d in ipairs(s) do t[i] = (d == 1) and G.pick({1, 2, 3}) or d end
          end
          if math.random() < 0.5 then s, t = t, s end
          case = {a = G.make(s, dt, oa), b = G.make(t, dtb, ob), layouts = {a = "contig", b = "contig"}}
        end
      end
      cases[#cases + 1] = case
    end
  end
  return cases
end

return G
