-- torch.nn: modules, layers, losses and nn.functional, written in Lua on the engine's
-- differentiable ops. Receives the torch module table. This part holds the shared argument
-- helpers, nn.Parameter and the Module machinery (Module, Sequential, ModuleList); the
-- parts torch_nn_init.lua, torch_nn_functional.lua and torch_nn_layers.lua follow it.
local torch = ...
local nn = {}
torch.nn = nn

---------------------------------------------------------------------------------------------
-- Argument helpers, shared with the other nn parts through nn._util.

local util = {}
nn._util = util

-- A trailing keyword table: a plain table (no metatable, so not a module or class) whose [1]
-- is nil, as the C++ bindings read keyword tables.
local function is_kw_table(v)
  return type(v) == "table" and getmetatable(v) == nil and v[1] == nil
end

-- A value for error messages: tensors by shape, strings quoted.
local function describe(v)
  if torch.is_tensor(v) then return "a tensor of shape " .. util.shape_str(v.shape) end
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end
util.describe = describe

-- {2, 3} -> "{2,3}", the way the engine's errors print shapes.
function util.shape_str(shape)
  return "{" .. table.concat(shape, ",") .. "}"
end

function util.same_shape(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- Raises "<op>: <message>" without a position prefix, as the C++ ops do.
local function fail(op, fmt, ...)
  error(op .. ": " .. string.format(fmt, ...), 0)
end
util.fail = fail

-- Reads a call's arguments the way PyTorch does: positionals in the order of `names`, then
-- a trailing keyword table whose keys are among `names`. The first `nrequired` names must
-- be given (either way); the others default to `defaults[name]`.
function util.args(op, names, nrequired, defaults, ...)
  local n = select("#", ...)
  local kw = n > 0 and select(n, ...) or nil
  if is_kw_table(kw) then n = n - 1 else kw = nil end
  if n > #names then fail(op, "expected at most %d positional arguments, got %d", #names, n) end
  local out = {}
  for i, name in ipairs(names) do
    if i <= n then out[name] = (select(i, ...)) end
  end
  torch._check_keywords(op, kw or {}, names)
  for k, v in pairs(kw or {}) do
    if out[k] ~= nil then fail(op, "got two values for argument '%s'", k) end
    out[k] = v
  end
  for i, name in ipairs(names) do
    if out[name] == nil then
      if i <= nrequired then fail(op, "missing argument '%s'", name) end
      out[name] = defaults[name]
    end
  end
  return out
end

-- An integer (a float with an integral value is accepted) of at least `min`.
function util.check_int(op, name, v, min)
  local i = math.type(v) and math.tointeger(v)
  if not i or i < min then
    fail(op, "%s must be an integer >= %d, got %s", name, min, describe(v))
  end
  return i
end

-- A number or a table of two numbers as a pair {a, b} of integers >= min (kernel sizes,
-- strides, paddings).
function util.check_pair(op, name, v, min)
  if type(v) == "table" and getmetatable(v) == nil then
    if #v ~= 2 then fail(op, "%s must be a number or a table of 2 numbers, got %d numbers", name, #v) end
    return {util.check_int(op, name, v[1], min), util.check_int(op, name, v[2], min)}
  end
  local i = util.check_int(op, name, v, min)
  return {i, i}
end

function util.check_tensor(op, name, v)
  if not torch.is_tensor(v) then fail(op, "expected a tensor for %s, got %s", name, describe(v)) end
  return v
end

function util.check_number(op, name, v)
  if type(v) ~= "number" then fail(op, "%s must be a number, got %s", name, describe(v)) end
  return v
end

function util.check_bool(op, name, v)
  if type(v) ~= "boolean" then fail(op, "%s must be true or false, got %s", name, describe(v)) end
  return v
end

-- A Lua value as PyTorch's repr prints it, in Lua spelling: {3, 3}, true, "none".
local function lua_repr(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = lua_repr(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end
util.repr = lua_repr

---------------------------------------------------------------------------------------------
-- nn.Parameter: a leaf tensor that a module registers as a parameter.

-- Tensors made by nn.Parameter, so that one with requires_grad=false still registers.
local made_as_parameter = setmetatable({}, {__mode = "k"})

-- nn.Parameter(t[, requires_grad=true]): a new leaf sharing t's storage.
function nn.Parameter(data, requires_grad)
  util.check_tensor("Parameter", "data", data)
  if requires_grad == nil then requires_grad = true end
  util.check_bool("Parameter", "requires_grad", requires_grad)
  local p = data:detach():requires_grad_(requires_grad)
  made_as_parameter[p] = true
  return p
end

-- A tensor assigned to a new module field becomes a parameter when it came from
-- nn.Parameter or is a leaf that requires grad; other tensors stay plain fields.
local function is_parameter_like(t)
  return made_as_parameter[t] or (t.requires_grad and t.is_leaf) or false
end

---------------------------------------------------------------------------------------------
-- Ordered dictionaries: the registries of parameters, buffers and submodules keep the order
-- of first assignment, as PyTorch's OrderedDicts do.

local Ordered = {}
Ordered.__index = Ordered

local function ordered() return setmetatable({keys = {}, map = {}}, Ordered) end

function Ordered:set(k, v)
  if self.map[k] == nil then self.keys[#self.keys + 1] = k end
  self.map[k] = v
end

function Ordered:remove(k)
  if self.map[k] == nil then return end
  self.map[k] = nil
  for i, key in ipairs(self.keys) do
    if key == k then table.remove(self.keys, i) return end
  end
end

-- for key, value in od:items(), in order
function Ordered:items()
  local i = 0
  return function()
    i = i + 1
    local k = self.keys[i]
    if k ~= nil then return k, self.map[k] end
  end
end

---------------------------------------------------------------------------------------------
-- nn.Module. Every instance is a table holding only its registries (_parameters, _buffers,
-- _modules, _attrs) and its class (_class); reads and writes of fields go through the
-- shared metatable, so that assigning a module, a parameter or a buffer registers it (and
-- reassigning keeps its place), like PyTorch's __setattr__.

local Module = {_name = "Module"}
nn.Module = Module

-- The metatable of every module instance.
local Instance = {}

local function is_module(v)
  return type(v) == "table" and getmetatable(v) == Instance
end
nn.is_module = is_module

local function class_name(self) return rawget(self, "_class")._name end

-- Field lookup: parameters, buffers, submodules, plain fields, then the class chain.
-- Numbers go to the class's __getitem (Sequential and ModuleList index their children).
function Instance.__index(self, k)
  local v = rawget(self, "_parameters").map[k]
  if v ~= nil then return v end
  v = rawget(self, "_buffers").map[k]
  if v ~= nil then return v end
  v = rawget(self, "_modules").map[k]
  if v ~= nil then return v end
  v = rawget(self, "_attrs")[k]
  if v ~= nil then return v end
  local cls = rawget(self, "_class")
  if math.type(k) == "integer" then
    local getitem = cls.__getitem
    return getitem and getitem(self, k)
  end
  return cls[k]
end

-- Field assignment: a module registers as a submodule, a parameter-like tensor as a
-- parameter (see is_parameter_like); a tensor assigned to an existing parameter or buffer
-- replaces it in place in the order; nil removes the name from wherever it is.
function Instance.__newindex(self, k, v)
  local params, buffers = rawget(self, "_parameters"), rawget(self, "_buffers")
  local modules, attrs = rawget(self, "_modules"), rawget(self, "_attrs")
  if math.type(k) == "integer" then
    local setitem = rawget(self, "_class").__setitem
    if not setitem then fail(class_name(self), "cannot assign to index %d", k) end
    return setitem(self, k, v)
  end
  if v == nil then
    params:remove(k); buffers:remove(k); modules:remove(k); attrs[k] = nil
  elseif is_module(v) then
    if params.map[k] ~= nil or buffers.map[k] ~= nil then
      fail(class_name(self), "cannot assign a module to '%s', which is a parameter or buffer (assign nil first)", k)
    end
    attrs[k] = nil
    modules:set(k, v)
  elseif params.map[k] ~= nil then
    if not torch.is_tensor(v) or not (made_as_parameter[v] or v.is_leaf) then
      fail(class_name(self), "cannot assign %s to parameter '%s' (expected a leaf tensor or nil)", describe(v), k)
    end
    params:set(k, v)
  elseif buffers.map[k] ~= nil then
    if not torch.is_tensor(v) then
      fail(class_name(self), "cannot assign %s to buffer '%s' (expected a tensor or nil)", describe(v), k)
    end
    buffers:set(k, v)
  elseif modules.map[k] ~= nil then
    fail(class_name(self), "cannot assign %s to submodule '%s' (expected a module or nil)", describe(v), k)
  elseif torch.is_tensor(v) and is_parameter_like(v) then
    attrs[k] = nil
    params:set(k, v)
  else
    attrs[k] = v
  end
end

function Instance.__call(self, ...) return self:forward(...) end

function Instance.__tostring(self) return self:__repr() end

function Instance.__len(self)
  local len = rawget(self, "_class").__len
  if not len then fail(class_name(self), "has no length (only Sequential and ModuleList do)") end
  return len(self)
end

-- Module:extend("Name") -> a subclass; calling it constructs an instance and runs init.
local function construct(cls, ...)
  local self = setmetatable({_class = cls, _parameters = ordered(), _buffers = ordered(),
                             _modules = ordered(), _attrs = {}, _non_persistent = {}}, Instance)
  self.training = true
  cls.init(self, ...)
  return self
end

local ClassMeta = {__call = construct}
function ClassMeta.__tostring(cls) return "class " .. cls._name end
setmetatable(Module, ClassMeta)

function Module:extend(name)
  if type(name) ~= "string" or name == "" then
    fail("Module:extend", "expected a class name string, got %s", describe(name))
  end
  if rawget(self, "_name") == nil then
    fail("Module:extend", "call it on a class (nn.Module:extend), not on an instance")
  end
  return setmetatable({_name = name}, {__index = self, __call = construct, __tostring = ClassMeta.__tostring})
end

-- util.module_class("Name"): a subclass of nn.Module published as nn.Name (the built-in layers).
function util.module_class(name)
  local class = Module:extend(name)
  nn[name] = class
  return class
end

-- The base init does nothing: the registries are ready before init runs.
function Module:init() end

function Module:forward(...)
  fail(class_name(self), "forward is not implemented (define function %s:forward(...))", class_name(self))
end

-- Whether the module is an instance of cls or of a subclass of it.
function Module:isinstance(cls)
  local c = rawget(self, "_class")
  while c do
    if c == cls then return true end
    local meta = getmetatable(c)
    c = meta and meta.__index
    if type(c) ~= "table" then return false end
  end
  return false
end

function Module:register_parameter(name, param)
  if param ~= nil then util.check_tensor(class_name(self) .. ":register_parameter", "param", param) end
  rawget(self, "_modules"):remove(name); rawget(self, "_attrs")[name] = nil
  if param == nil then rawget(self, "_parameters"):remove(name) else rawget(self, "_parameters"):set(name, param) end
end

-- A buffer is module state that is not a parameter (saved in state_dict unless
-- persistent=false, converted by to()).
function Module:register_buffer(name, tensor, persistent)
  if tensor ~= nil then util.check_tensor(class_name(self) .. ":register_buffer", "tensor", tensor) end
  rawget(self, "_modules"):remove(name); rawget(self, "_parameters"):remove(name)
  rawget(self, "_attrs")[name] = nil
  if tensor == nil then rawget(self, "_buffers"):remove(name) else rawget(self, "_buffers"):set(name, tensor) end
  rawget(self, "_non_persistent")[name] = (persistent == false) or nil
end

function Module:add_module(name, module)
  if type(name) ~= "string" or name == "" or name:find(".", 1, true) then
    fail(class_name(self) .. ":add_module", "the name must be a non-empty string without '.', got %s", describe(name))
  end
  if not is_module(module) then
    fail(class_name(self) .. ":add_module", "expected a module for '%s', got %s", tostring(name), describe(module))
  end
  self[name] = module
end

-- Calls fn on every (sub)module in depth-first order, each after its children
-- (as PyTorch's apply), and returns self.
function Module:apply(fn)
  for _, child in rawget(self, "_modules"):items() do child:apply(fn) end
  fn(self)
  return self
end

-- An iterator over a list of {name, value} pairs, yielding name, value.
local function iterate_pairs(list)
  local i = 0
  return function()
    i = i + 1
    local pair = list[i]
    if pair then return pair[1], pair[2] end
  end
end

-- An iterator over (name, value) pairs of one registry in this module and, when recurse,
-- its submodules; each value once (shared parameters are yielded under their first name).
local function named_members(self, registry, prefix, recurse)
  local out, seen = {}, {}
  local function visit(m, pre)
    for name, v in rawget(m, registry):items() do
      if not seen[v] then
        seen[v] = true
        out[#out + 1] = {pre .. name, v}
      end
    end
    if recurse then
      for name, child in rawget(m, "_modules"):items() do
        if not seen[child] then
          seen[child] = true
          visit(child, pre .. name .. ".")
        end
      end
    end
  end
  visit(self, prefix ~= nil and prefix ~= "" and prefix .. "." or "")
  return iterate_pairs(out)
end

-- for name, p in model:named_parameters() do ... end  (names like "fc1.weight")
function Module:named_parameters(prefix, recurse)
  return named_members(self, "_parameters", prefix, recurse ~= false)
end

function Module:named_buffers(prefix, recurse)
  return named_members(self, "_buffers", prefix, recurse ~= false)
end

-- The values of an iterator of (name, value) pairs, as a list.
local function values_of(iter)
  local list = {}
  for _, v in iter do list[#list + 1] = v end
  return list
end

-- A list of the parameters (what optimizers take), each once.
function Module:parameters(recurse) return values_of(self:named_parameters(nil, recurse)) end
function Module:buffers(recurse) return values_of(self:named_buffers(nil, recurse)) end

-- for name, child in model:named_children() do ... end  (direct submodules, in order)
function Module:named_children()
  return rawget(self, "_modules"):items()
end

function Module:children() return values_of(self:named_children()) end

-- for name, m in model:named_modules() do ... end: the module itself (name "") first, then
-- every submodule depth-first with dotted names, each once.
function Module:named_modules(prefix)
  local out, seen = {}, {}
  local function visit(m, name)
    if seen[m] then return end
    seen[m] = true
    out[#out + 1] = {name, m}
    for child_name, child in rawget(m, "_modules"):items() do
      visit(child, name == "" and child_name or name .. "." .. child_name)
    end
  end
  visit(self, prefix or "")
  return iterate_pairs(out)
end

function Module:modules() return values_of(self:named_modules()) end

-- Sets training mode on this module and every submodule; returns self.
function Module:train(mode)
  if mode == nil then mode = true end
  util.check_bool(class_name(self) .. ":train", "mode", mode)
  self.training = mode
  for _, child in rawget(self, "_modules"):items() do child:train(mode) end
  return self
end

function Module:eval() return self:train(false) end

function Module:requires_grad_(flag)
  if flag == nil then flag = true end
  for _, p in ipairs(self:parameters()) do p:requires_grad_(flag) end
  return self
end

-- Clears every parameter's gradient: to nil (the default, set_to_none), or to zeros with
-- {set_to_none=false}.
function Module:zero_grad(...)
  local o = util.args(class_name(self) .. ":zero_grad", {"set_to_none"}, 0, {set_to_none = true}, ...)
  for _, p in ipairs(self:parameters()) do
    local g = p.grad
    if g ~= nil then
      if o.set_to_none then p.grad = nil else g:zero_() end
    end
  end
end

-- Device and dtype targets of to(): "cuda", "float64", {device=, dtype=} or a tensor.
-- As in PyTorch, a module converts to floating-point dtypes only.
local device_prefixes = {cpu = true, cuda = true}
local floating_dtypes = {float16 = true, bfloat16 = true, float32 = true, float64 = true}
local function dtype_name(s)
  local alias = torch[s]  -- torch.float = "float32", ...
  return type(alias) == "string" and alias or s
end
local function parse_to_target(op, ...)
  local target = {}
  for i = 1, select("#", ...) do
    local v = select(i, ...)
    if torch.is_tensor(v) then
      target.device, target.dtype = v.device, v.dtype
    elseif type(v) == "string" then
      if device_prefixes[v:match("^[^:]*")] then target.device = v else target.dtype = dtype_name(v) end
    elseif type(v) == "table" and getmetatable(v) == nil then
      target.device = v.device or target.device
      target.dtype = v.dtype and dtype_name(v.dtype) or target.dtype
    else
      fail(op, "expected a device, a dtype, a {device=, dtype=} table or a tensor, got %s", describe(v))
    end
  end
  if target.dtype ~= nil and not floating_dtypes[target.dtype] then
    fail(op, "only floating-point dtypes (float16, bfloat16, float32, float64) are allowed, got %s", describe(target.dtype))
  end
  return target
end

-- "cuda" names the same device as "cuda:0".
local function same_device(a, b)
  return a == b or a .. ":0" == b or a == b .. ":0"
end

-- t converted to the target, or t itself when it is there already (so that parameters an
-- optimizer holds stay the module's). The dtype applies to floating-point tensors only
-- (integer buffers such as counters keep theirs), as PyTorch's Module.to does.
local function convert(t, target)
  local spec = {}
  if target.device and not same_device(target.device, t.device) then spec.device = target.device end
  if target.dtype and t.dtype ~= target.dtype and t:is_floating_point() then spec.dtype = target.dtype end
  if next(spec) == nil then return t end
  return t:to(spec)
end

-- Converts parameters and buffers (and gradients) to a device and/or dtype; returns self.
-- A converted parameter is a new leaf tensor with the same requires_grad, registered under
-- the same name: build the optimizer after calling to().
function Module:to(...)
  local target = parse_to_target(class_name(self) .. ":to", ...)
  torch.no_grad(function()
    for _, m in ipairs(self:modules()) do
      local params, buffers = rawget(m, "_parameters"), rawget(m, "_buffers")
      for name, p in params:items() do
        local new = convert(p, target)
        if new ~= p then
          local grad = p.grad
          new = nn.Parameter(new, p.requires_grad)
          if grad ~= nil then new.grad = convert(grad, target) end
          params:set(name, new)
        end
      end
      for name, b in buffers:items() do buffers:set(name, convert(b, target)) end
    end
  end)
  return self
end

-- Moves every parameter, buffer and existing gradient to shared memory (Tensor:share_memory_),
-- so that worker processes the module is sent to update the same tensors (Hogwild); returns self.
function Module:share_memory()
  for _, m in ipairs(self:modules()) do
    for _, p in rawget(m, "_parameters"):items() do
      p:share_memory_()
      if p.grad ~= nil then p.grad:share_memory_() end
    end
    for _, b in rawget(m, "_buffers"):items() do b:share_memory_() end
  end
  return self
end

function Module:float() return self:to("float32") end
function Module:double() return self:to("float64") end
function Module:half() return self:to("float16") end
function Module:cuda() return self:to("cuda") end
function Module:cpu() return self:to("cpu") end

-- Names and tensors of what state_dict saves, in order: parameters, then persistent
-- buffers, of each module depth-first. A module or tensor shared by two names is saved
-- under both, as in PyTorch.
local function state_entries(self)
  local entries = {}
  local function visit(m, pre)
    for name, p in rawget(m, "_parameters"):items() do entries[#entries + 1] = {pre .. name, p} end
    local non_persistent = rawget(m, "_non_persistent")
    for name, b in rawget(m, "_buffers"):items() do
      if not non_persistent[name] then entries[#entries + 1] = {pre .. name, b} end
    end
    for name, child in rawget(m, "_modules"):items() do visit(child, pre .. name .. ".") end
  end
  visit(self, "")
  return entries
end

-- A flat table {["fc1.weight"] = tensor, ...} of detached tensors sharing the module's
-- storage (torch.save writes it as safetensors).
function Module:state_dict()
  local sd = {}
  for _, e in ipairs(state_entries(self)) do sd[e[1]] = e[2]:detach() end
  return sd
end

-- Copies the tensors of a state dict into the parameters and buffers under no_grad.
-- Missing and unexpected keys are errors unless {strict=false}; a shape mismatch always
-- is. Returns {missing_keys=..., unexpected_keys=...}.
function Module:load_state_dict(state_dict, ...)
  local op = "load_state_dict"
  local o = util.args(op, {"strict"}, 0, {strict = true}, ...)
  if type(state_dict) ~= "table" or getmetatable(state_dict) ~= nil then
    fail(op, "expected a table of tensors, got %s", describe(state_dict))
  end
  local entries, expected = state_entries(self), {}
  local missing, unexpected, problems = {}, {}, {}
  for _, e in ipairs(entries) do
    local name, own = e[1], e[2]
    expected[name] = true
    local v = state_dict[name]
    if v == nil then
      missing[#missing + 1] = string.format("%q", name)
    elseif not torch.is_tensor(v) then
      problems[#problems + 1] = string.format("value for %q is %s, expected a tensor", name, describe(v))
    elseif not util.same_shape(v.shape, own.shape) then
      problems[#problems + 1] = string.format(
        "size mismatch for %q: copying a tensor of shape %s from the state dict, the shape in the current model is %s",
        name, util.shape_str(v.shape), util.shape_str(own.shape))
    end
  end
  for k in pairs(state_dict) do
    if not expected[k] then unexpected[#unexpected + 1] = string.format("%q", tostring(k)) end
  end
  table.sort(unexpected)
  if o.strict then
    if #missing > 0 then table.insert(problems, 1, "missing keys " .. table.concat(missing, ", ")) end
    if #unexpected > 0 then table.insert(problems, #missing > 0 and 2 or 1, "unexpected keys " .. table.concat(unexpected, ", ")) end
  end
  if #problems > 0 then
    fail(op, "error(s) in loading the state dict for %s: %s", class_name(self), table.concat(problems, "; "))
  end
  torch.no_grad(function()
    for _, e in ipairs(entries) do
      local v = state_dict[e[1]]
      if v ~= nil then e[2]:copy_(v) end
    end
  end)
  local function unquote(list)
    for i, s in ipairs(list) do list[i] = s:sub(2, -2) end
    return list
  end
  return {missing_keys = unquote(missing), unexpected_keys = unquote(unexpected)}
end

-- The one-line description inside a module's parentheses; layers override it.
function Module:extra_repr() return "" end

-- The module tree as PyTorch prints it: Name(extra) or Name(\n  (child): ...\n).
function Module:__repr()
  local lines = {}
  local extra = self:extra_repr()
  local n_extra = 0
  if extra ~= "" then
    for line in (extra .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
    n_extra = #lines
  end
  for name, child in rawget(self, "_modules"):items() do
    lines[#lines + 1] = "(" .. name .. "): " .. (tostring(child):gsub("\n", "\n  "))
  end
  local text = class_name(self) .. "("
  if n_extra == 1 and #lines == 1 then
    text = text .. lines[1]
  elseif #lines > 0 then
    text = text .. "\n  " .. table.concat(lines, "\n  ") .. "\n"
  end
  return text .. ")"
end

---------------------------------------------------------------------------------------------
-- Containers. Children are named "1", "2", ... and indexed from 1 (negative from the end),
-- so state_dict keys read "1.weight" where PyTorch writes "0.weight".

-- Index i (1-based, negative from the end) of a container of n children, or nil.
local function container_slot(i, n)
  if i < 0 then i = n + 1 + i end
  if i >= 1 and i <= n then return i end
end

local function container_len(self) return #rawget(self, "_modules").keys end

local function container_get(self, i)
  local modules = rawget(self, "_modules")
  local slot = container_slot(i, #modules.keys)
  return slot and modules.map[modules.keys[slot]]
end

local function container_set(self, i, module)
  local modules = rawget(self, "_modules")
  local slot = container_slot(i, #modules.keys)
  if not slot then fail(class_name(self), "index %d is out of range for %d modules", i, #modules.keys) end
  if not is_module(module) then fail(class_name(self), "expected a module at index %d, got %s", i, describe(module)) end
  modules.map[modules.keys[slot]] = module
end

local function container_append(self, module)
  if not is_module(module) then
    fail(class_name(self) .. ":append", "expected a module, got %s", describe(module))
  end
  rawget(self, "_modules"):set(tostring(container_len(self) + 1), module)
  return self
end

-- The container class nn[name]: #, indexing from 1 and append.
local function container_class(name)
  local class = util.module_class(name)
  class.__len, class.__getitem, class.__setitem = container_len, container_get, container_set
  class.append = container_append
  return class
end

-- nn.Sequential(a, b, c): calls its children in order, each on the previous one's output.
local Sequential = container_class("Sequential")

function Sequential:init(...)
  for i = 1, select("#", ...) do
    local m = select(i, ...)
    if not is_module(m) then fail("Sequential", "argument %d is %s, expected a module", i, describe(m)) end
    container_append(self, m)
  end
end

function Sequential:forward(x)
  for _, m in rawget(self, "_modules"):items() do x = m(x) end
  return x
end

-- nn.ModuleList({a, b}) or nn.ModuleList(a, b): a list of registered submodules.
local ModuleList = container_class("ModuleList")

function ModuleList:init(...)
  local list = ...
  if select("#", ...) ~= 1 or is_module(list) then list = {...} end
  if type(list) ~= "table" or getmetatable(list) ~= nil then
    fail("ModuleList", "expected a list of modules, got %s", describe(list))
  end
  for i, m in ipairs(list) do
    if not is_module(m) then fail("ModuleList", "element %d is %s, expected a module", i, describe(m)) end
    container_append(self, m)
  end
end

-- On an instance, appends a list of modules; on the class, makes a subclass as
-- Module:extend does.
function ModuleList:extend(list)
  if rawget(self, "_name") then return Module.extend(self, list) end
  if type(list) ~= "table" or getmetatable(list) ~= nil then
    fail("ModuleList:extend", "expected a list of modules, got %s", describe(list))
  end
  for _, m in ipairs(list) do container_append(self, m) end
  return self
end

function ModuleList:forward(...)
  fail("ModuleList", "is a container without forward; call its modules")
end
