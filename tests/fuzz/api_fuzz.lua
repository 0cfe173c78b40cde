-- The Lua API fuzzer (docs/fuzzing.md). It enumerates every function reachable from torch,
-- np, nn (nn.F, nn.init, the layer and loss classes), optim (and lr_scheduler), the methods
-- of the Tensor type, its metamethods, and the methods of one real instance of each class;
-- then calls them with random argument tuples drawn from hostile values (values.lua).
--
-- Run by tests/fuzz/tide_fuzz_host (it supplies the memory and time limits and calls
-- fuzz_next() once per call), normally through tests/fuzz/run_api_fuzz.py:
--   tide_fuzz_host tests/fuzz/api_fuzz.lua seed=1 first=1 count=1000 [only=PATTERN] [list=1]
--   tide_fuzz_host tests/fuzz/api_fuzz.lua replay=tests/fuzz/regressions.lua first=1 count=N
-- (replay: the calls of a file that returns a list of {source, what} instead of random ones)
-- Call i of a seed is always the same call: target i (mod the number of targets, in sorted
-- order) with arguments from a generator seeded by (seed, i). Before each call it prints
--   @@CALL <i> <target> | <Lua source of the call>
-- on stderr; the source runs alone as a reproducer (with H = dofile("tests/fuzz/values.lua")).
-- At the end it prints "@@STAT <target> <calls> <returned> <raised>" per target and
-- "@@UNCLEAR <target> | <message> | <source>" for the first error of a target whose message
-- is not one an op gives (a raw Lua runtime error or a C++ library exception's text).
local script_dir = (arg and arg[0] or ""):match("^(.*)/[^/]*$") or "."
local H = dofile(script_dir .. "/values.lua")
local KNOWN = dofile(script_dir .. "/known_issues.lua")

local opts = {seed = 1, first = 1, count = 1000, known = 1}
for _, a in ipairs(arg or {}) do
  local k, v = a:match("^(%w+)=(.*)$")
  if not k then error("api_fuzz.lua: arguments are key=value, got " .. a) end
  opts[k] = tonumber(v) or v
end

local MT = getmetatable(torch.zeros(1))
local _, M = debug.getupvalue(MT.__index, 1)  -- the Tensor method table

-- ---- the targets ------------------------------------------------------------------------

-- A target: `path` names it; `callee` is the Lua source of the function it calls, and
-- `first` (if any) the source of a first argument that always comes before the random ones
-- (the instance of an instance's metamethod); `self` says what its first argument should be: "tensor" (a
-- method of Tensor), "class" (a method of a class called on the class table, so with a
-- hostile self: its errors are Lua's own and not reported as unclear) or nil; `fn` is the
-- function (for its doc).
local targets = {}
local seen_fn, seen_table = {}, {}
local snapshots = {}  -- table -> shallow copy, restored after every call

local function snapshot(t)
  local copy = {}
  for k, v in pairs(t) do copy[k] = v end
  snapshots[t] = copy
end

local function add_target(path, callee, self_kind, fn, first)
  targets[#targets + 1] = {path = path, callee = callee, self = self_kind, fn = fn, first = first}
end

local function is_callable(v)
  if type(v) == "function" then return true end
  local mt = getmetatable(v)
  return type(v) == "table" and type(mt) == "table" and mt.__call ~= nil
end

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  return keys
end

local KEYWORDS = {}
for w in ("and break do else elseif end false for function goto if in local nil not or repeat return then true " ..
          "until while"):gmatch("%a+") do KEYWORDS[w] = true end

-- prefix.key, or prefix["key"] where key is not a name (M["repeat"]).
local function field_path(prefix, key)
  if key:match("^[%a_][%w_]*$") and not KEYWORDS[key] then return prefix .. "." .. key end
  return string.format("%s[%q]", prefix, key)
end

-- Walks a module table: every function (and callable table) becomes a target, every table
-- below it is walked too, once. Class tables (tables with a __call metamethod) are targets
-- themselves (their constructor) and their methods are called with a hostile self.
local function walk(t, path)
  if seen_table[t] then return end
  seen_table[t] = true
  snapshot(t)
  local class = is_callable(t)
  for _, k in ipairs(sorted_keys(t)) do
    local v = rawget(t, k)
    local p = field_path(path, k)
    if type(v) == "function" and not seen_fn[v] then
      seen_fn[v] = true
      add_target(p, p, class and "class" or nil, v)
    elseif type(v) == "table" and k ~= "_doc" then
      if is_callable(v) and not seen_fn[v] then
        seen_fn[v] = true
        add_target(p, p, nil, v)
      end
      walk(v, p)
    end
  end
  local mt = getmetatable(t)
  if type(mt) == "table" and not seen_table[mt] then
    seen_table[mt] = true
    snapshot(mt)
    for _, k in ipairs(sorted_keys(mt)) do
      local v = rawget(mt, k)
      if type(v) == "function" and not seen_fn[v] then
        seen_fn[v] = true
        local p = "getmetatable(" .. path .. ")." .. k
        add_target(p, p, nil, v)
      end
    end
  end
end

-- nn and optim first: torch.nn and torch.optim are the same tables under longer names.
for _, root in ipairs({"nn", "optim", "torch", "np"}) do walk(_G[root], root) end

-- Tensor methods and metamethods, with a tensor self most of the time.
snapshot(M)
snapshot(MT)
for _, k in ipairs(sorted_keys(M)) do add_target(field_path("M", k), field_path("M", k), "tensor", M[k]) end
for _, k in ipairs(sorted_keys(MT)) do
  if type(MT[k]) == "function" then add_target("MT." .. k, "MT." .. k, "tensor", MT[k]) end
end

-- Methods of a real instance of each class: every function of the class and its ancestors,
-- and the metamethods of the instance's metatable.
local missing_instances = {}
local class_paths = {}
local is_class_path = {}
for _, tg in ipairs(targets) do
  -- (np's ufuncs are callable tables of functions, walked as such, not classes)
  if type(tg.fn) == "table" and getmetatable(tg.fn).__name ~= "ufunc" then
    class_paths[#class_paths + 1] = tg.path
    is_class_path[tg.path] = true
  end
end
-- Classes whose table is not a constructor (np.random.Generator: default_rng makes them) are
-- the other entries of H.instances.
for _, cpath in ipairs(sorted_keys(H.instances)) do
  if not is_class_path[cpath] then class_paths[#class_paths + 1] = cpath end
end
for _, cpath in ipairs(class_paths) do
  local ctor = H.instances[cpath]
  if not ctor then
    missing_instances[#missing_instances + 1] = cpath
  else
    local ok, inst = pcall(load("return " .. ctor, "=ctor", "t"))
    if not ok then error("api_fuzz.lua: the instance constructor of " .. cpath .. " fails: " .. tostring(inst)) end
    local names = {}
    local c = load("return " .. cpath)()
    local depth = 0
    while type(c) == "table" and depth < 10 do
      for _, k in ipairs(sorted_keys(c)) do if type(rawget(c, k)) == "function" then names[k] = true end end
      local mt = getmetatable(c)
      c = rawget(c, "__index") ~= c and rawget(c, "__index") or (type(mt) == "table" and rawget(mt, "__index"))
      if type(c) ~= "table" then break end
      depth = depth + 1
    end
    for _, k in ipairs(sorted_keys(names)) do
      add_target(cpath .. "():" .. k, "(" .. ctor .. "):" .. k, nil, nil)
    end
    local imt = getmetatable(inst)
    if type(imt) == "table" then
      for _, k in ipairs(sorted_keys(imt)) do
        if type(rawget(imt, k)) == "function" and k:match("^__") then
          add_target(cpath .. "()." .. k, "getmetatable(" .. ctor .. ")." .. k, nil, nil, ctor)
        end
      end
    end
  end
end

if opts.only then
  local kept = {}
  for _, tg in ipairs(targets) do if tg.path:find(opts.only) then kept[#kept + 1] = tg end end
  targets = kept
end
if #targets == 0 then error("api_fuzz.lua: no target matches " .. tostring(opts.only)) end

-- The known issues that cover each target (none with known=0).
for _, tg in ipairs(targets) do tg.known = {} end
if opts.known ~= 0 then
  for _, tg in ipairs(targets) do
    for _, issue in ipairs(KNOWN) do
      if issue.covers(tg.path) then tg.known[#tg.known + 1] = issue end
    end
  end
end

-- The positional parameters of a doc string's signature, "mm(a, b[, {out=}]) -> ...":
-- {"a", "b"}, each a name (the first of "src or value") or "..." for a repeated one. The
-- keyword table and the brackets of optional parameters are dropped.
local function parse_params(doc)
  local inside = doc:match("^[%w_.:]*%((.-)%)%s*%->") or doc:match("^[%w_.:]*%((.-)%)")
  if not inside then return nil end
  inside = inside:gsub("%b{}", ""):gsub("[%[%]]", "")
  local params = {}
  for part in inside:gmatch("[^,]+") do
    local name = part:match("^%s*([%a_][%w_]*)%.%.%.") and part:match("^%s*([%a_][%w_]*)") .. "..."
                 or part:match("^%s*([%a_][%w_]*)") or (part:find("...", 1, true) and "...")
    if name then params[#params + 1] = name end
  end
  return params
end

-- Keyword names: every `name=` in the doc strings of the targets (per target, and all of them).
local all_kw, all_kw_list = {}, {}
for _, tg in ipairs(targets) do
  local doc = tg.fn and (torch._binding_doc(tg.fn) or torch._doc[tg.fn])
  tg.kw = {}
  if type(doc) == "string" then
    tg.params = parse_params(doc)
    for name in doc:gmatch("([%a_][%w_]*)=") do
      tg.kw[#tg.kw + 1] = name
      if not all_kw[name] then
        all_kw[name] = true
        all_kw_list[#all_kw_list + 1] = name
      end
    end
  end
end
table.sort(all_kw_list)
for _, extra in ipairs({"out", "dtype", "device", "requires_grad", "dim", "axis", "keepdim", "bogus"}) do
  if not all_kw[extra] then all_kw_list[#all_kw_list + 1] = extra end
end

-- ---- the argument generator ---------------------------------------------------------------

-- splitmix64: the generator of one call, seeded by (seed, i).
local rng_state = 0
local function next64()
  rng_state = rng_state + 0x9E3779B97F4A7C15
  local z = rng_state
  z = (z ~ (z >> 30)) * 0xBF58476D1CE4E5B9
  z = (z ~ (z >> 27)) * 0x94D049BB133111EB
  return z ~ (z >> 31)
end
local function rand(n) return (next64() >> 1) % n + 1 end  -- 1..n
local function pick(list) return list[rand(#list)] end
local function chance(p) return (next64() >> 11) / 9007199254740992.0 < p end

local NUMBERS = {"0", "1", "-1", "2", "3", "-2", "4", "0.5", "1.5", "-0.0", "2^31", "2^31 - 1", "-2^31",
  "1 << 31", "1 << 32", "1 << 40", "2^53", "2^53 + 1", "math.maxinteger", "math.mininteger", "2^63", "-2^63",
  "2^64", "1 << 62", "1e308", "-1e308", "0/0", "1/0", "-1/0", "5e-324", "100", "1e10", "-3", "7", "np.j",
  "np.complex(0/0, -1)"}
local SMALL = {"1", "2", "-1", "0", "3", "-2", "4"}
local STRINGS = {'""', '"a"', '"float32"', '"float64"', '"int64"', '"int32"', '"int16"', '"int8"', '"uint8"',
  '"bool"', '"float16"', '"bfloat16"', '"uint16"', '"uint32"', '"uint64"', '"complex64"', '"complex128"', '"cpu"', '"cuda"', '"cuda:0"', '"cuda:7"', '"cuda:-1"', '"meta"',
  '"sum"', '"mean"', '"none"', '"fro"', '"nuc"', '"inf"', '"-inf"', '"nan"', '"1"', '"-1"', '"0x10"', '"1e999"',
  '"fz.npy"', '"fz.npz"', '"fz.safetensors"', '"fz.pt"', '"fz.txt"', '"fz.txt.gz"', '"missing/dir/x.npy"', '"."',
  '"\\0"', '"\\255\\254"', '"%s%s%n"', '":"', '"..."', "H.long", '"shape"', '"grad"', '"requires_grad"', '"T"',
  '"C"', '"F"', '"linear"', '"relu"', '"tanh"', '"leaky_relu"', '"fan_in"', '"fan_out"', '","', '"#"'}
local DTYPES = {"float32", "float32", "float64", "float64", "int64", "int64", "int32", "int16", "int8", "uint8",
  "bool", "bool", "float16", "bfloat16", "uint16", "uint32", "uint64", "complex64", "complex128"}
local SHAPES = {{}, {}, {0}, {1}, {3}, {3}, {5}, {2, 3}, {2, 3}, {3, 3}, {3, 1}, {1, 3}, {2, 0}, {0, 3},
  {2, 2, 2}, {2, 1, 3, 1}, {1, 1, 1, 1, 1}, {4, 4}, {1, 2, 3, 3}, {2, 3, 4}}
local FUNCTIONS = {"function() end", "function(...) return ... end", "function() error('fuzz: callback raised') end",
  "function() error({}) end", "function() return torch.zeros(2) end", "function() coroutine.yield(1) end",
  "function() collectgarbage() end", "function() return 0/0 end", "error", "tostring", "torch.zeros"}
local OTHERS = {"coroutine.create(function() end)", "H.dead_co()", "coroutine.running()", "H.file",
  "nn.Linear(2, 3)", "nn.Sequential(nn.Linear(2, 2))", "nn.MSELoss()", "nn.Module", "nn.Linear",
  "optim.SGD({torch.ones(2, {requires_grad = true})}, {lr = 0.1})", "nn.Linear(3, 2).weight", "torch", "np", "M", "MT"}
local INDEX_TABLES = {"{}", "{1}", "{-1}", "{0}", "{1, 2}", "{2, 1}", "{1, -1, 2}", "{1, 2, 0}", "{-1, 1, -1}",
  "{1, 2^62}", "{1, 1 << 62, 1 << 62}", "{{1, 2}, ':'}", "{':', 1}", "{':', ':', ':', ':', ':'}", "{1, {1, 2}, 3}",
  "{0/0}", "{2^31}", "{1.5, 2}", "{math.mininteger, math.maxinteger}", "{'...', 1}", "{true}", "{{}}",
  "{{-1, 1, -1}}", "{':', {-1, 1, -2}}", "{{1, -1, math.mininteger}}", "{{2, 3, -1}}", "{'newaxis', '...', 'newaxis'}"}

local gen_value  -- forward

local function gen_shape() return pick(SHAPES) end

local function shape_src(shape)
  local parts = {}
  for i, s in ipairs(shape) do parts[i] = tostring(s) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function is_float(dt) return dt:match("^float") or dt == "bfloat16" end

-- A tensor: a dtype, a shape and values, then maybe a view (transposed, strided, expanded),
-- requires_grad, a non-leaf, a huge-shaped view or a freed tensor.
local function gen_tensor()
  local dt = pick(DTYPES)
  local r = rand(100)
  if r <= 3 then return string.format("H.huge(%q, %d)", dt, rand(5)) end
  if r <= 5 then return string.format("H.freed(%q)", dt) end
  local shape = gen_shape()
  local src = string.format("H.t(%q, %s, %d)", dt, shape_src(shape), rand(12) - 1)
  local ndim = #shape
  local v = rand(10)
  if v == 1 and ndim == 2 then
    src = src .. ":t()"
  elseif v == 2 and ndim >= 1 and shape[1] > 0 then
    src = src .. "[{{1, -1, 2}}]"
  elseif v == 3 and ndim >= 1 then
    local sizes = {}
    for i, s in ipairs(shape) do sizes[i] = s == 1 and tostring(rand(3) + 1) or tostring(s) end
    src = src .. ":expand(" .. table.concat(sizes, ", ") .. ")"
  elseif v == 4 and ndim >= 2 then
    src = src .. ":transpose(1, " .. ndim .. ")"
  end
  if is_float(dt) and rand(5) == 1 then
    src = src .. ":requires_grad_()"
    if rand(2) == 1 then src = "(" .. src .. " * 2)" end
  end
  return src
end

local function gen_number() return rand(4) == 1 and pick(SMALL) or pick(NUMBERS) end

local function gen_kw(tg, depth)
  local names = (tg and #tg.kw > 0 and rand(4) > 1) and tg.kw or all_kw_list
  local parts, used = {}, {}
  for _ = 1, rand(3) do
    local name = pick(names)
    if not used[name] then
      used[name] = true
      parts[#parts + 1] = name .. " = " .. gen_value(tg, depth + 1)
    end
  end
  if rand(8) == 1 then table.insert(parts, 1, gen_value(tg, depth + 1)) end  -- mixed {x, k = v}
  return "{" .. table.concat(parts, ", ") .. "}"
end

local function gen_table(tg, depth)
  local r = rand(20)
  if r <= 8 then  -- a list of small values (shapes, dims, data)
    local parts = {}
    for i = 1, rand(4) - 1 do parts[i] = rand(3) == 1 and gen_number() or pick(SMALL) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif r <= 10 then
    return pick({"{{1, 2}, {3, 4}}", "{{1, 2}, {3}}", "{1, {2}}", "{true, false}", "{'a'}", "{1, nil, 3}",
      "{[2^40] = 1}", "{n = 1}", "{1, 2, 3, 4, 5, 6, 7, 8, 9}", "{{}}", "{{{1.5}}}", "{0/0, 1/0}"})
  elseif r <= 12 and depth < 2 then  -- a list of tensors or values
    local parts = {}
    for i = 1, rand(3) do parts[i] = rand(3) > 1 and gen_tensor() or gen_value(tg, depth + 1) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif r <= 14 then
    return pick({"H.deep(50)", "H.deep(100000)", "H.selfref()"})
  elseif r <= 16 then
    return string.format("H.meta(%d)", rand(5))
  elseif depth < 2 then
    return gen_kw(tg, depth)
  end
  return "{}"
end

local function gen_index(tg, depth)
  local r = rand(10)
  if r <= 3 then return gen_number() end
  if r <= 4 then return pick({'":"', '"..."', '"newaxis"', "true", "nil", '"sum"', '"shape"', '"grad"', '"requires_grad"'}) end
  if r <= 6 then return pick(INDEX_TABLES) end
  if r <= 8 then
    return string.format("H.t(%q, %s, %d)", pick({"int64", "int64", "bool", "int32", "float32"}),
      shape_src(gen_shape()), pick({5, 11, 0, 2}))
  end
  return gen_value(tg, depth + 1)
end

-- One argument value of any kind.
function gen_value(tg, depth)
  depth = depth or 0
  local r = rand(100)
  if r <= 40 then return gen_tensor() end
  if r <= 60 then return gen_number() end
  if r <= 68 then return pick(STRINGS) end
  if r <= 75 then return pick({"nil", "true", "false"}) end
  if r <= 88 then return gen_table(tg, depth) end
  if r <= 93 then return pick(FUNCTIONS) end
  if r <= 97 then return pick(OTHERS) end
  return gen_index(tg, depth)
end

local NARGS = {0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 5, 6}

-- What a parameter's name suggests it takes.
local PARAM_KIND = {}
for kind, names in pairs({
  tensor = {"x", "a", "b", "input", "other", "self", "tensor", "weight", "bias", "target", "mask", "src", "values",
            "cond", "condition", "logits", "t", "w", "y", "grad", "gradient", "outputs", "output", "end_t", "mat",
            "vec", "m1", "m2", "x1", "x2", "data", "arr", "array"},
  index = {"index", "indices", "idx", "labels"},
  dim = {"dim", "dim0", "dim1", "axis", "axis1", "axis2", "start_dim", "end_dim", "source", "destination", "k"},
  size = {"size", "sizes", "shape", "length", "n", "m", "steps", "num", "count", "repeats", "kernel_size", "stride",
          "padding", "split_size", "chunks", "reps", "N", "M", "in_features", "out_features", "num_embeddings",
          "embedding_dim", "in_channels", "out_channels", "normalized_shape"},
  number = {"start", "end", "step", "low", "high", "min", "max", "value", "p", "lr", "alpha", "beta", "eps",
            "momentum", "gain", "mean", "std", "scale", "fill_value", "seed", "exponent", "ord"},
  dtype = {"dtype", "type"},
  path = {"path", "file", "fname", "filename"},
  fn = {"fn", "f", "func", "closure", "function"},
  tensors = {"tensors", "params", "parameters", "seq", "list", "inputs", "arrays"},
  bool = {"largest", "sorted", "accumulate", "keepdim", "descending", "unbiased", "mode", "enabled", "recurse"},
}) do
  for _, n in ipairs(names) do PARAM_KIND[n] = kind end
end

-- An argument for a parameter, by its kind; the tensors of one call share `shape` often,
-- so that elementwise and matrix ops get past their shape checks.
local function gen_param(kind, shape, dt)
  if kind == "tensor" then
    local r = rand(12)
    -- a NumPy array (NumPy semantics for the call), or a Lua list (an array-like there)
    if r == 1 then return string.format("np.array(H.t(%q, %s, %d))", dt, shape_src(shape), rand(12) - 1) end
    if r == 2 then return pick({"{1, 2, 3}", "{0.5, -1}", "{true, false}", "{{1, 2}, {3, 4}}", "{}"}) end
    if r <= 8 then return string.format("H.t(%q, %s, %d)", dt, shape_src(shape), rand(12) - 1) end
    return gen_tensor()
  elseif kind == "index" then
    return string.format("H.t(%q, %s, %d)", rand(4) == 1 and "bool" or "int64", shape_src(rand(2) == 1 and shape or
      {#shape > 0 and shape[1] or 1}), pick({5, 11, 0}))
  elseif kind == "dim" then
    return pick({"1", "2", "-1", "1", "2"})
  elseif kind == "size" then
    if rand(3) == 1 then return "{" .. pick(SMALL) .. ", " .. pick({"2", "3", "1"}) .. "}" end
    return pick({"1", "2", "3", "2", "-1"})
  elseif kind == "sizes..." then  -- the call's shape in another arrangement, or -1
    local r = rand(3)
    if r == 1 or #shape == 0 then return "-1" end
    local parts = {}
    for k = #shape, 1, -1 do parts[#parts + 1] = tostring(shape[k]) end
    return table.concat(parts, ", ")
  elseif kind == "dims..." then  -- a permutation of the call's dims
    local perm = {}
    for k = 1, #shape do table.insert(perm, rand(#perm + 1), tostring(k)) end
    return #perm > 0 and table.concat(perm, ", ") or "1"
  elseif kind == "number" then
    return pick({"0.5", "1", "2", "0", "-1", "0.1", "3", "1"})
  elseif kind == "dtype" then
    return string.format("%q", pick(DTYPES))
  elseif kind == "path" then
    return pick({'"fz.npy"', '"fz.npz"', '"fz.safetensors"', '"fz.pt"', '"fz.txt"', '"fz.txt.gz"', '"out.npy"', '"out"'})
  elseif kind == "fn" then
    return pick(FUNCTIONS)
  elseif kind == "tensors" then
    local parts = {}
    for i = 1, rand(3) do parts[i] = gen_param("tensor", shape, dt) end
    return "{" .. table.concat(parts, ", ") .. "}"
  elseif kind == "bool" then
    return pick({"true", "false"})
  end
  return gen_value(nil)
end

-- Arguments that follow the target's signature (from its doc string), each replaced by a
-- hostile value now and then, one sometimes dropped or added.
local function gen_directed(tg)
  local shape = pick({{2, 3}, {3, 3}, {3}, {2, 2, 2}, {1, 2, 3, 3}, {}, {0, 3}, {4, 4}})
  local dt = pick({"float32", "float32", "float64", "int64", "bool", "float16", "int32", "uint8", "uint64"})
  local args = {}
  local params = tg.params
  if tg.self == "tensor" and PARAM_KIND[params[1]] ~= "tensor" then  -- "stride([dim])": self is implied
    params = {"x", table.unpack(params)}
  end
  for _, name in ipairs(params) do
    if name:match("...$") and name ~= "..." then
      args.last = name
      args[#args + 1] = gen_param((name == "sizes..." or name == "shape..." or name == "size...") and "sizes..." or
                                  (name == "dims..." or name == "axes...") and "dims..." or
                                  PARAM_KIND[name:sub(1, -4)], shape, dt)
    elseif name == "..." then
      for _ = 1, rand(3) - 1 do args[#args + 1] = gen_param(PARAM_KIND[args.last] or "tensor", shape, dt) end
    else
      args.last = name
      args[#args + 1] = gen_param(PARAM_KIND[name], shape, dt)
    end
  end
  args.last = nil
  -- One change at most: an argument made hostile, dropped or added, or a keyword table of
  -- the target's own keywords with plain values.
  local r = rand(8)
  if r <= 2 and #args > 0 then
    args[rand(#args)] = gen_value(tg)
  elseif r == 3 and #args > 0 then
    table.remove(args, rand(#args))
  elseif r == 4 then
    args[#args + 1] = gen_value(tg)
  elseif r == 5 and #tg.kw > 0 then
    local name = pick(tg.kw)
    args[#args + 1] = "{" .. name .. " = " .. pick({"true", "false", "1", "2", "-1", "0.5", '"float32"', '"float64"',
      '"mean"', '"sum"', '"none"', gen_param("tensor", shape, dt)}) .. "}"
  end
  args.directed = true
  return args
end

-- The Lua source of one call of tg: locals for the arguments, then the call.
local function gen_call(tg)
  local args = {}
  local n = pick(NARGS)
  if tg.params and rand(2) == 1 then
    args = gen_directed(tg)
  elseif tg.self == "tensor" then
    n = math.max(n, 1)
    local key_first = tg.path == "MT.__index" or tg.path == "MT.__newindex"
    for i = 1, n do
      if i == 1 then
        args[i] = rand(100) <= 85 and gen_tensor() or gen_value(tg)
      elseif i == 2 and key_first and rand(10) <= 7 then
        args[i] = gen_index(tg, 0)
      else
        args[i] = gen_value(tg)
      end
    end
  else
    for i = 1, n do args[i] = gen_value(tg) end
  end
  if not args.directed and rand(10) <= 3 then args[#args + 1] = gen_kw(tg, 0) end
  local lines, names = {}, {}
  for i, a in ipairs(args) do
    names[i] = "a" .. i
    lines[#lines + 1] = "local a" .. i .. " = " .. a
  end
  local call = tg.callee .. "(" .. table.concat(tg.first and {tg.first, table.unpack(names)} or names, ", ") .. ")"
  if rand(20) == 1 then  -- run the call inside a coroutine
    call = "H.in_coroutine(function() return " .. call .. " end)"
  end
  lines[#lines + 1] = "return " .. call
  return table.concat(lines, "; "), names, call
end

-- ---- running calls ----------------------------------------------------------------------

local env = setmetatable({H = H, M = M, MT = MT}, {__index = _G})
local default_dtype = torch.get_default_dtype()
local default_threads = torch.get_num_threads()

-- Seed files for the readers (np.load, torch.load, np.loadtxt), written again before every
-- call that names one, so that call i does not depend on what earlier calls wrote.
local function write_seed_files()
  local x = torch.arange(6, {dtype = "float64"}):reshape(2, 3)
  np.save("fz.npy", x)
  np.savez("fz.npz", {a = x, b = torch.ones(3, {dtype = "int32"})})
  torch.save({w = x, b = {torch.zeros(2)}}, "fz.safetensors")
  torch.save({w = x, v = x:t(), n = {1, "s", true}, p = nn.Parameter(torch.ones(2))}, "fz.pt")
  np.savetxt("fz.txt", x)
  np.savetxt("fz.txt.gz", x)
end

-- Undoes what a call may have changed outside its arguments: the default dtype, the thread
-- count, grad mode, autocast, a recording profiler, the random generators, the module tables.
local function restore_state()
  if torch.get_default_dtype() ~= default_dtype then torch.set_default_dtype(default_dtype) end
  if torch.get_num_threads() ~= default_threads then torch.set_num_threads(default_threads) end
  if not torch.is_grad_enabled() then torch.set_grad_enabled(true) end
  -- autocast: off on both devices, the default dtypes, the cache on and empty, no region open
  torch.set_autocast_cpu_enabled(false)
  torch.set_autocast_enabled(false)
  torch.set_autocast_cpu_dtype("bfloat16")
  torch.set_autocast_gpu_dtype("float16")
  torch.set_autocast_cache_enabled(true)
  while pcall(torch.autocast_decrement_nesting) do end
  torch.clear_autocast_cache()
  if torch.profiler._recording() then torch.profiler._stop() end  -- a profile left recording
  for t, copy in pairs(snapshots) do
    for k in pairs(t) do if copy[k] == nil then rawset(t, k, nil) end end
    for k, v in pairs(copy) do if rawget(t, k) ~= v then rawset(t, k, v) end end
  end
end

-- The values of a tensor argument, to check afterwards that a call did not change an input
-- it has no business writing (nil for a value that is not a small, live tensor).
local function values_of(x)
  if not torch.is_tensor(x) then return nil end
  local ok, v = pcall(function()
    if x:numel() > 256 then return nil end
    for _, n in ipairs(x.shape) do if n > 256 then return nil end end  -- {2^40, 0}: 2^40 empty lists
    return {x.dtype, x.shape, x:tolist()}
  end)
  return ok and v or nil
end

local function same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b or (a ~= a and b ~= b) end
  if #a ~= #b then return false end
  for k = 1, #a do if not same(a[k], b[k]) then return false end end
  return true
end

-- Targets that may write into their first argument: in-place methods and functions (a name
-- ending in "_"), indexed assignment, and the ones that free or shuffle it.
local WRITES_FIRST = {["MT.__newindex"] = true, ["M.free"] = true, ["MT.__gc"] = true, ["MT.__close"] = true,
                      ["np.random.shuffle"] = true, ["np.random.Generator():shuffle"] = true,
                      ["np.put"] = true, ["nn._util.init_bias"] = true}
-- np.add.at(a, indices, b) and the other ufuncs' at write a in place by design.
for _, tg in ipairs(targets) do
  if tg.path:match("^np%.[%w_]+%.at$") then WRITES_FIRST[tg.path] = true end
end

-- The tensors among the arguments (and in table arguments, one level down) that the call
-- must leave as they were, with their values; nil where the call may write.
local function inputs_to_check(tg, args)
  local checks = {}
  local function add(x, where)
    local v = values_of(x)
    if v then checks[#checks + 1] = {x = x, before = v, where = where} end
  end
  for k = 1, args.n do
    local v = args[k]
    if type(v) == "table" and not torch.is_tensor(v) and rawget(v, "out") ~= nil then return {} end
  end
  local first = (tg.path:match("_$") or WRITES_FIRST[tg.path]) and 2 or 1
  -- A positional out (np.erf(x, out), np.add(a, b, out): NumPy's spelling of the shared
  -- add(a, b[, alpha]) binding) is written by design.
  local out_position
  for k, name in ipairs(tg.params or {}) do
    if name == "out" or (name == "alpha" and tg.path:match("^np%.")) then out_position = k end
  end
  for k = first, args.n do
    local v = k ~= out_position and args[k] or nil
    if torch.is_tensor(v) then
      add(v, "argument " .. k)
    elseif type(v) == "table" and getmetatable(v) == nil then
      for j = 1, math.min(#v, 8) do add(rawget(v, j), "argument " .. k .. "[" .. j .. "]") end
    end
  end
  return checks
end

-- Messages that do not come from an op: a Lua runtime error inside a Lua-written function,
-- or the what() of a C++ library exception (the errors of the fuzzer's own callbacks, which
-- the ops pass through, are not counted).
local UNCLEAR = {"attempt to ", "bad argument #", "std::", "basic_string", "vector::", "bad_alloc",
  "stack overflow", "C stack overflow", "table index is"}
local function unclear(msg)
  -- Not a string: the error of one of the fuzzer's callbacks (error({})), passed through.
  if type(msg) ~= "string" or msg:find("fuzz: ", 1, true) or msg:find("attempt to yield", 1, true) then return nil end
  for _, p in ipairs(UNCLEAR) do
    if msg:find(p, 1, true) then return msg end
  end
  return nil
end

local stats = {}
for _, tg in ipairs(targets) do stats[tg.path] = {calls = 0, ok = 0, err = 0} end
local unclear_seen = {}
local out = io.stderr
local i = opts.first
local last = opts.first + opts.count - 1

local replay = opts.replay and dofile(opts.replay)
if replay then last = math.min(last, #replay) end
out:write("@@TARGETS ", replay and #replay or #targets, "\n")
if opts.list then
  for _, tg in ipairs(targets) do out:write(tg.path, "\n") end
  last = i - 1
end

local function report()
  local lines, paths = {}, {}
  for path in pairs(stats) do paths[#paths + 1] = path end
  table.sort(paths)
  for _, path in ipairs(paths) do
    local s = stats[path]
    if s.calls > 0 then lines[#lines + 1] = string.format("@@STAT %s %d %d %d\n", path, s.calls, s.ok, s.err) end
  end
  out:write(table.concat(lines))
  if #missing_instances > 0 then
    out:write("@@NOTE no instance constructor in values.lua for: ", table.concat(missing_instances, " "), "\n")
  end
end

function fuzz_next()
  if i > last then
    report()
    return false
  end
  local index = i
  i = i + 1
  local tg, src, names, call
  if replay then
    tg = {path = "replay:" .. index, known = {}, self = "class"}
    stats[tg.path] = stats[tg.path] or {calls = 0, ok = 0, err = 0}
    src = replay[index][1]
  else
    tg = targets[(index - 1) % #targets + 1]
    rng_state = (opts.seed * 0x100000001B3) ~ (index * 0x9E3779B97F4A7C15)
    next64()
    src, names, call = gen_call(tg)
  end
  out:write("@@CALL " .. index .. " " .. tg.path .. " | " .. src .. "\n")
  if src:find("fz%.") then write_seed_files() end
  torch.manual_seed(index)
  local ok, err
  if replay then
    ok, err = pcall(assert(load(src, "=call", "t", env)))
  else
    -- The same statements as the logged source build the arguments, then the call runs on
    -- them: the known issues' predicates and the check of the inputs see the values.
    local staged = src:sub(1, #src - #call - 7) .. "return table.pack(" .. table.concat(names, ", ") ..
                   "), function() return " .. call .. " end"
    local args, thunk = assert(load(staged, "=call", "t", env))()
    for _, issue in ipairs(tg.known) do
      if (not issue.text or src:find(issue.text, 1, true)) and issue.when(tg.path, args) then
        out:write("@@SKIP " .. index .. " " .. tg.path .. " | " .. issue.owner .. "\n")
        restore_state()
        return true
      end
    end
    local checks = inputs_to_check(tg, args)
    ok, err = pcall(thunk)
    for _, c in ipairs(checks) do
      local after = values_of(c.x)
      if after and not same(c.before, after) then
        out:write("@@CHANGED " .. index .. " " .. tg.path .. " | " .. c.where .. " changed from " ..
                  H.show(c.before) .. " to " .. H.show(after) .. " | " .. src .. "\n")
        break
      end
    end
  end
  restore_state()
  local s = stats[tg.path]
  s.calls = s.calls + 1
  if ok then
    s.ok = s.ok + 1
  else
    s.err = s.err + 1
    local why = unclear(err)
    if why and tg.self ~= "class" and not tg.path:find("%._") and not unclear_seen[tg.path] then
      unclear_seen[tg.path] = true
      out:write("@@UNCLEAR " .. tg.path .. " | " .. why:gsub("\n", " "):sub(1, 300) .. " | " .. src .. "\n")
    end
  end
  return true
end
