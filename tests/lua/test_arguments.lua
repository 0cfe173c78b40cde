-- Argument checking (issue 13): every function, method, factory, module and optimizer rejects
-- a keyword it does not take (naming it and the closest valid one), an argument beyond those it
-- reads, and a keyword it would not use; every accepted argument is honoured (alpha, decimals,
-- axis); the tensor metatable's functions take any value as self without crashing.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local np = require "numpy"
local nn, optim, F = torch.nn, torch.optim, torch.nn.functional

-- The exact message of the error fn raises.
local function message(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  return tostring(err)
end

T.test("the issue's unknown keywords are errors naming the keyword and the closest valid one", function()
  local t = {torch.ones(2, 2), torch.ones(2, 2)}
  T.eq(message(function() return torch.cat(t, {dimm = 2}) end),
       "cat: unknown keyword 'dimm' (did you mean 'dim'? valid: dim, axis)")
  T.eq(message(function() return torch.ones(2, 3):sum{keep_dim = true} end),
       "sum: unknown keyword 'keep_dim' (did you mean 'keepdim'? valid: dim, axis, keepdim, keepdims, dtype, out)")
  T.eq(message(function() return torch.zeros(2, {require_grad = true}) end),
       "zeros: unknown keyword 'require_grad' (did you mean 'requires_grad'? valid: dtype, device, requires_grad)")
  T.eq(message(function() return np.sum(np.ones{2, 3}, {axes = 2}) end),
       "sum: unknown keyword 'axes' (did you mean 'axis'? valid: dim, axis, keepdim, keepdims, dtype, out)")
  -- Nothing close: the valid names only; a non-string key; a long key is cut short.
  T.eq(message(function() return torch.zeros_like(torch.ones(2), {colour = 1}) end),
       "zeros_like: unknown keyword 'colour' (valid: dtype, device, requires_grad)")
  T.eq(message(function() return torch.ones(2):sum{[true] = 1} end),
       "sum: unknown keyword a boolean key (valid: dim, axis, keepdim, keepdims, dtype, out)")
  T.eq(message(function() return torch.ones(2):sum{[string.rep("k", 100)] = 1} end),
       "sum: unknown keyword '" .. string.rep("k", 60) .. "... (100 bytes)' (valid: dim, axis, keepdim, keepdims, dtype, out)")
end)

-- Every built-in C function reachable from torch, np and the tensor methods.
local function bindings()
  local out, seen = {}, {}
  local function walk(t, prefix, depth)
    for k, v in pairs(t) do
      if type(v) == "function" and torch._binding_doc(v) and not seen[v] then
        seen[v] = true
        out[#out + 1] = {name = prefix .. k, fn = v, doc = torch._binding_doc(v)}
      elseif type(v) == "table" and depth < 2 and type(k) == "string" and k:sub(1, 1) ~= "_" then
        walk(v, prefix .. k .. ".", depth + 1)
      end
    end
  end
  walk(torch, "torch.", 0)
  walk(np, "np.", 0)
  local _, methods = debug.getupvalue(getmetatable(torch.ones(1)).__index, 1)
  walk(methods, "Tensor:", 2)
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

T.test("every binding that takes keywords rejects an unknown one before it runs", function()
  local n = 0
  for _, b in ipairs(bindings()) do
    -- The keywords a binding takes are the `name=` entries in braces of its doc.
    if b.doc:find("{[^}]*[%w_]=") and not b.doc:find("{[^}]*%.%.%.") then
      n = n + 1
      local x = torch.ones(2, 2)
      local msg = message(function() return b.fn(x, {zzz_not_a_keyword = 1}) end)
      T.truthy(msg:find(": unknown keyword 'zzz_not_a_keyword' (valid: ", 1, true), b.name .. ": " .. msg)
      T.eq(x:tolist(), {{1, 1}, {1, 1}}, b.name .. " changed its argument before refusing the keyword")
    end
  end
  T.truthy(n > 150, "only " .. n .. " bindings take keywords")
end)

T.test("a binding without keywords sees a trailing table as an argument", function()
  T.eq(torch.is_tensor({lr = 1}), false)
  T.eq(message(function() return torch.ones(2):relu({inplace = true}) end), "relu: unknown keyword 'inplace' (valid: out)")
  T.eq(message(function() return torch.ones(2):numel({inplace = true}) end),
       "numel: unexpected argument 2 (a keyword table: numel takes no keyword arguments); usage: numel(x)")
  T.eq(message(function() return torch.ones(2):t({1}) end), "t: unexpected argument 2 (a table); usage: t(x)")
end)

T.test("an argument beyond those a binding reads is an error, and nothing is written", function()
  local x = torch.ones(2)
  T.eq(message(function() return x:add(1, 2, 3) end),
       "add: unexpected argument 4 (the number 3); usage: add(a, b[, alpha][, {alpha=, out=}])")
  T.eq(message(function() return torch.ones(2):exp("x") end),
       "exp: unexpected argument 2 (the string 'x'); usage: exp(x[, out][, {out=}])")
  T.eq(message(function() return torch.ones(2):numel(true) end),
       "numel: unexpected argument 2 (true); usage: numel(x)")
  -- Trailing nils are absent arguments, as everywhere in Lua.
  T.eq(torch.ones(2):numel(nil, nil), 2)
  T.eq(message(function() return torch.ones(2, 2):sum(1, true, 5) end):match("^[^;]*"),
       "sum: unexpected argument 4 (the number 5)")
end)

T.test("a call that writes into an argument refuses an argument too many before it writes", function()
  -- In place, a positional out (NumPy spelling, and the ufunc objects' __call), out=: each
  -- errs and leaves every tensor as it was (found by the API fuzzer: np.logical_xor's
  -- __call wrote its out, then refused argument 4).
  local function unchanged(t, f, want)
    local before = t:clone()
    T.eq(message(f):match("^[^;]*"), want)
    T.truthy(torch.equal(t, before), want .. ": the tensor was written")
  end
  local x, y, o = torch.ones(3), torch.ones(3), torch.zeros(3)
  unchanged(x, function() return x:add_(y, 5, 6) end, "add_: unexpected argument 4 (the number 6)")
  unchanged(x, function() return x:mul_(2, 3) end, "mul_: unexpected argument 3 (the number 3)")
  unchanged(x, function() return x:copy_(y + 1, false, 9) end, "copy_: unexpected argument 3 (false)")
  unchanged(x, function() return x:fill_(4, 5) end, "fill_: unexpected argument 3 (the number 5)")
  unchanged(x, function() return x:clamp_(0, 0.5, 9) end, "clamp_: unexpected argument 4 (the number 9)")
  unchanged(o, function() return np.add(x, y, o, 7) end, "add: unexpected argument 4 (the number 7)")
  unchanged(o, function() return np.exp(x, o, 3) end, "exp: unexpected argument 3 (the number 3)")
  local b = torch.tensor({true, false, true})
  unchanged(b, function() return getmetatable(np.logical_xor).__call("a", torch.ones(3), 2^63, b, 4) end,
            "logical_xor: unexpected argument 4 (the number 4)")
  -- A trailing {} is still an empty keyword table where the op takes keywords.
  T.error(function() torch._sgd_step_(torch.zeros(2), torch.zeros(2), nil, {}) end, "SGD: keyword 'lr' is required")
end)

T.test("a keyword that is given but not used with the other arguments is an error", function()
  local x = torch.ones(2, 3)
  T.eq(message(function() return x:sum(1, {dim = 2}) end), "sum: dim given both as argument 2 and as a keyword")
  T.eq(message(function() return x:sum{dim = 1, axis = 2} end), "sum: give either dim= or axis=, not both")
  T.eq(message(function() return x:sum{keepdim = true, keepdims = true} end),
       "sum: give either keepdim= or keepdims=, not both")
  T.eq(message(function() return x:std{unbiased = true, correction = 0} end),
       "std: give only one of unbiased, correction and ddof")
  T.eq(message(function() return torch.cat({x, x}, 1, {dim = 2}) end),
       "cat: keyword 'dim' is not used with these arguments (given twice, or not valid together with them)")
  T.eq(message(function() return x:clamp(0, 1, {min = 2}) end),
       "clamp: keyword 'min' is not used with these arguments (given twice, or not valid together with them)")
  T.eq(message(function() return torch.linalg.norm(x, 2, {ord = 1}) end),
       "linalg.norm: keyword 'ord' is not used with these arguments (given twice, or not valid together with them)")
end)

T.test("alpha of add, add_, sub, sub_ is honoured, as a keyword or an argument (PyTorch's values)", function()
  local a, b = torch.tensor{1.0, 2.0}, torch.tensor{3.0, 4.0}
  T.eq(torch.add(a, b, {alpha = -0.5}):tolist(), {-0.5, 0.0})  -- torch.add(a, b, alpha=-0.5)
  T.eq(torch.add(a, b, -0.5):tolist(), {-0.5, 0.0})
  T.eq(a:sub(b, {alpha = 2}):tolist(), {-5.0, -6.0})
  T.eq(torch.sub(torch.tensor{1, 2}, 3, {alpha = 2}):tolist(), {-5, -4})  -- torch.sub(.., 3, alpha=2)
  T.eq(torch.add(torch.tensor{1, 2}, torch.tensor{3, 4}, {alpha = 10}):tolist(), {31, 42})
  T.eq(torch.add(2, torch.tensor{1.0, 2.0}, {alpha = 3}):tolist(), {5.0, 8.0})
  -- an integer number times alpha wraps as int64 tensors do (found by the fuzzer under UBSan)
  T.eq(torch.sub(torch.tensor{1}, -2, math.mininteger):tolist(), {1})  -- torch.sub(t([1]), -2, alpha=-2**63)
  T.eq(torch.add(torch.tensor{1}, 3, {alpha = 1 << 62}):tolist(), {-4611686018427387903})
  local p, g = torch.ones(3), torch.tensor{1.0, 2.0, 4.0}
  p:add_(g, {alpha = -0.25})  -- an SGD step: p - lr * g
  T.eq(p:tolist(), {0.75, 0.5, 0.0})
  p:sub_(g, -0.25)
  T.eq(p:tolist(), {1.0, 1.0, 1.0})
  T.eq(message(function() return torch.add(torch.tensor{1, 2}, 1, {alpha = 1.5}) end),
       "add: alpha must be an integer for int64 operands, got 1.500000")
  T.eq(message(function() return a:add(b, 2, {alpha = 2}) end), "add: alpha given both as argument 3 and as a keyword")
  -- With autograd: the gradient of b is alpha.
  local w = torch.tensor({1.0, 2.0}, {requires_grad = true})
  torch.add(a, w, {alpha = 3}):sum():backward()
  T.eq(w.grad:tolist(), {3.0, 3.0})
  -- NumPy's spelling takes out positionally instead (np.add(a, b, out)).
  local out = np.zeros(2)
  T.truthy(np.add(np.ones(2), 1, out) == out)
  T.eq(out:tolist(), {2.0, 2.0})
end)

T.test("np.round / torch.round honour decimals (NumPy's values)", function()
  -- np.round(np.array([1.234, 2.5, -0.125, 0.5, 1.5, 2.675]), 2)
  T.eq(np.round(np.array{1.234, 2.5, -0.125, 0.5, 1.5, 2.675}, 2):tolist(), {1.23, 2.5, -0.12, 0.5, 1.5, 2.68})
  -- np.round(np.array([1234.5, -1250.0, 15.0]), -2)
  T.eq(np.round(np.array{1234.5, -1250.0, 15.0}, -2):tolist(), {1200.0, -1200.0, 0.0})
  -- np.round(np.array([15, 25, 1234, -15, -25, 35]), -1): integers, ties to even
  T.eq(np.round(np.array{15, 25, 1234, -15, -25, 35}, -1):tolist(), {20, 20, 1230, -20, -20, 40})
  local i32 = np.round(np.array({15, 25}, {dtype = "int32"}), 2)
  T.eq({i32:tolist(), i32.dtype}, {{15, 25}, "int32"})
  T.eq(np.round(np.array{1.5, 2.5, -0.5}):tolist(), {2.0, 2.0, -0.0})
  T.eq(np.around(np.array{0.125}, {decimals = 2}):tolist(), {0.12})
  -- decimals at the end of the integers: NaN, as NumPy's np.round(1.5, -400) and torch's
  -- round(decimals=-2**62) give (found by the fuzzer under UBSan: -INT64_MIN overflowed)
  local r = np.round(np.array{1.5}, math.mininteger):item()
  T.truthy(r ~= r, "expected NaN, got " .. tostring(r))
  -- torch.round(torch.tensor([1.2345, 2.5]), decimals=3) in float32
  T.eq(torch.round(torch.tensor{1.2345, 2.5}, {decimals = 3}):tolist(), {1.2339999675750732, 2.5})
  local x = torch.tensor({1.25, 3.75}, {dtype = "float64"})
  x:round_{decimals = 1}
  T.eq(x:tolist(), {1.2, 3.8})
  local out = np.zeros(2)
  np.round(np.array{1.26, 2.34}, 1, out)
  T.eq(out:tolist(), {1.3, 2.3})
  -- The gradient of round is zero, with decimals too.
  local w = torch.tensor({1.26, 2.34}, {requires_grad = true, dtype = "float64"})
  torch.round(w, {decimals = 1}):sum():backward()
  T.eq(w.grad:tolist(), {0.0, 0.0})
end)

T.test("np.size honours axis", function()
  local a = np.ones{2, 3}
  T.eq({np.size(a), np.size(a, 1), np.size(a, -1), np.size(a, {axis = 2})}, {6, 2, 3, 3})
  T.eq(message(function() return np.size(a, 3) end), "size: dim 3 is out of range for a tensor of 2 dims (valid 1..2 or -2..-1)")
end)

T.test("Lua-written functions, layers, optimizers and schedulers reject unknown keywords and extra arguments", function()
  T.eq(message(function() return F.relu(torch.ones(2), {inplace = true}) end),
       "relu: unexpected argument 2 (a keyword table): relu takes 1 argument and no keywords")
  T.eq(message(function() return F.softmax(torch.ones(2), {dimm = 1}) end),
       "softmax: unknown keyword 'dimm' (did you mean 'dim'? valid: dim)")
  T.eq(message(function() return nn.Linear(2, 2, {baias = false}) end),
       "Linear: unknown keyword 'baias' (did you mean 'bias'? valid: in_features, out_features, bias, device, dtype)")
  T.eq(message(function() return nn.Linear(2, 2)(torch.ones(2), 3) end),
       "Linear:forward: unexpected argument 2 (the number 3): Linear:forward takes 1 argument and no keywords")
  T.eq(message(function() return nn.ReLU(true) end), "ReLU: expected at most 0 positional arguments, got 1")
  local params = nn.Linear(2, 2):parameters()
  T.eq(message(function() return optim.SGD(params, {lr = 0.1, momentun = 0.9}) end),
       "SGD: unknown keyword 'momentun' (did you mean 'momentum'? valid: dampening, differentiable, foreach, lr, maximize, momentum, " ..
       "nesterov, weight_decay)")
  local opt = optim.SGD(params, {lr = 0.1})
  T.eq(message(function() return optim.lr_scheduler.StepLR(opt, {step_size = 3, gama = 0.5}) end),
       "StepLR: unknown keyword 'gama' (did you mean 'gamma'? valid: step_size, gamma, last_epoch, verbose)")
  T.eq(message(function() return opt:zero_grad{set_to_nun = true} end),
       "SGD:zero_grad: unknown keyword 'set_to_nun' (did you mean 'set_to_none'? valid: set_to_none)")
  T.eq(message(function() return torch.utils.progress(3, {dessc = "x"}) end),
       "utils.progress: unknown keyword 'dessc' (did you mean 'desc'? valid: desc, total, file, force)")
end)

T.test("the tensor metatable's functions take any value as self and raise an error", function()
  local mt = getmetatable(torch.ones(1))
  local hostile = {5, "s", true, {}, print, coroutine.create(print), nn.Linear(1, 1), io.stdout}
  local names = {}
  for k, v in pairs(mt) do if type(v) == "function" then names[#names + 1] = k end end
  table.sort(names)
  for _, name in ipairs(names) do
    for _, v in ipairs(hostile) do
      local ok, err = pcall(mt[name], v, v)
      -- __gc and __close ignore what is not a tensor (Lua calls them itself).
      if name ~= "__gc" and name ~= "__close" and name ~= "__index" then
        T.truthy(not ok, name .. " accepted a " .. type(v))
        T.truthy(tostring(err):find("expect", 1, true), name .. ": " .. tostring(err))
      end
    end
  end
  T.eq(message(function() return mt.__index(5, "shape") end), "tensor: __index expects a tensor as self, got a number")
  T.eq(message(function() return mt.__len("a") end), "tensor: __len expects a tensor as self, got a string")
  T.eq(message(function() return mt.__newindex({}, 1, 1) end), "tensor: __newindex expects a tensor as self, got a table")
  -- Every method, called with something else as self: an error that starts with an op's name
  -- (or, for the NumPy-style ones that take array-likes, a result).
  local _, methods = debug.getupvalue(mt.__index, 1)
  for name, fn in pairs(methods) do
    for _, v in ipairs(hostile) do
      local ok, err = pcall(fn, v)
      T.truthy(ok or tostring(err):match("^[%w_.]+: "), "method " .. name .. ": " .. tostring(err))
    end
  end
  T.eq(message(function() return methods.mm(5, torch.ones(2, 2)) end), "mm: expected a tensor as argument 1, got number")
end)

-- The Lua-written classes' methods (nn layers, optimizers, schedulers, data sets and loaders,
-- distributions, GradScaler, DDP, ...) called with a non-object as self (obj.forward(x) for
-- obj:forward(x)): an error naming the method, never a failure deep inside it.
T.test("Lua-written class methods refuse a non-object self with the method's name", function()
  local spaces = {nn, torch.optim, torch.optim.lr_scheduler, torch.utils.data, torch.distributions, torch.amp,
                  torch.multiprocessing, torch.nn.parallel, torch.utils.data.distributed}
  local statics = {new = true, generate_square_subsequent_mask = true, set_default_validate_args = true}
  local checked = 0
  for _, space in ipairs(spaces) do
    for cname, cls in pairs(space) do
      if type(cls) == "table" and (rawget(cls, "_name") ~= nil or (rawget(cls, "name") ~= nil and rawget(cls, "__index") == cls)) then
        for mname, fn in pairs(cls) do
          if type(mname) == "string" and type(fn) == "function" and mname:sub(1, 1) ~= "_" and not statics[mname] then
            for _, v in ipairs{5, torch.ones(1), "s"} do
              local ok, err = pcall(fn, v)
              T.truthy(not ok, cname .. "." .. mname .. " accepted a " .. type(v))
              T.truthy(tostring(err):match("^[^\n]-[%w_.]+:[%w_]+: expected a"), cname .. "." .. mname .. ": " .. tostring(err))
            end
            checked = checked + 1
          end
        end
      end
    end
  end
  T.truthy(checked > 200, "only " .. checked .. " methods found")
  T.eq(message(function() return nn.Linear(2, 3).forward(torch.zeros(2)) end),
       "Linear:forward: expected an object as self, got a tensor (call it with a colon: obj:forward(...))")
  T.eq(message(function() return nn.Module.parameters() end),
       "Module:parameters: expected an object as self, got nil (call it with a colon: obj:parameters(...))")
  T.eq(message(function() return torch.optim.SGD.step(1) end),
       "Optimizer:step: expected an object as self, got the number 1 (call it with a colon: obj:step(...))")
end)

T.done()
