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

-- A user's value or name for error messages: at most a short prefix of a long string (the
-- engine's quote_user, so that a huge string never makes a huge message).
local quote = torch.utils._quote
local function name_of(k) return quote(tostring(k)) end
util.name_of = name_of

-- A value for error messages: tensors by shape, strings quoted, NaN as nan (tostring's
-- "-nan" or "nan" depends on the sign bit the C library shows).
local function describe(v)
  if torch.is_tensor(v) then return "a tensor of shape " .. util.shape_str(v.shape) end
  if type(v) == "string" then return string.format("%q", quote(v)) end
  if v ~= v then return "nan" end
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
    if out[k] ~= nil then fail(op, "got two values for argument '%s'", name_of(k)) end
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

-- Whether v can be called: a function, or a value whose metatable has __call.
function util.is_callable(v)
  if type(v) == "function" then return true end
  local mt = getmetatable(v)
  return type(mt) == "table" and mt.__call ~= nil
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
-- (construct sets the five tables below as raw fields of every instance: reading them runs no
-- metamethod, and costs no call to rawget; model(x) reads three names through here.)
function Instance.__index(self, k)
  local v = self._parameters.map[k]
  if v ~= nil then return v end
  v = self._buffers.map[k]
  if v ~= nil then return v end
  v = self._modules.map[k]
  if v ~= nil then return v end
  v = self._attrs[k]
  if v ~= nil then return v end
  local cls = self._class
  if type(k) == "string" then return cls[k] end  -- (methods: no number conversion to try)
  k = math.tointeger(k) or k  -- seq[2.0] is seq[2]
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
  k = math.tointeger(k) or k
  if math.type(k) == "integer" then
    local setitem = rawget(self, "_class").__setitem
    if not setitem then fail(class_name(self), "cannot assign to index %d", k) end
    return setitem(self, k, v)
  end
  -- A class may convert what is assigned to it (ParameterDict makes tensors parameters).
  local assign = rawget(self, "_class").__assign
  if assign then v = assign(self, k, v) end
  if v == nil then
    params:remove(k); buffers:remove(k); modules:remove(k); attrs[k] = nil
  elseif type(k) ~= "string" and (is_module(v) or torch.is_tensor(v)) then
    -- state_dict names are strings: a module or tensor under another key would break them
    fail(class_name(self), "cannot assign %s to the key %s (submodules, parameters and buffers are named by strings)",
         describe(v), describe(k))
  elseif is_module(v) then
    if params.map[k] ~= nil or buffers.map[k] ~= nil then
      fail(class_name(self), "cannot assign a module to '%s', which is a parameter or buffer (assign nil first)", name_of(k))
    end
    attrs[k] = nil
    modules:set(k, v)
  elseif params.map[k] ~= nil then
    if not torch.is_tensor(v) or not (made_as_parameter[v] or v.is_leaf) then
      fail(class_name(self), "cannot assign %s to parameter '%s' (expected a leaf tensor or nil)", describe(v), name_of(k))
    end
    params:set(k, v)
  elseif buffers.map[k] ~= nil then
    if not torch.is_tensor(v) then
      fail(class_name(self), "cannot assign %s to buffer '%s' (expected a tensor or nil)", describe(v), name_of(k))
    end
    buffers:set(k, v)
  elseif modules.map[k] ~= nil then
    fail(class_name(self), "cannot assign %s to submodule '%s' (expected a module or nil)", describe(v), name_of(k))
  elseif torch.is_tensor(v) and is_parameter_like(v) then
    attrs[k] = nil
    params:set(k, v)
  else
    attrs[k] = v
  end
end

-- model(...) runs forward, and the hooks when the module has any (see Module hooks below).
function Instance.__call(self, ...)
  if rawget(self, "_hooks") == nil then return self:forward(...) end
  return util.call_with_hooks(self, ...)
end

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

-- A submodule, parameter or buffer name: a non-empty string without '.'.
local function check_member_name(op, name)
  if type(name) ~= "string" or name == "" or name:find(".", 1, true) then
    fail(op, "the name must be a non-empty string without '.', got %s", describe(name))
  end
end

-- The prefix of named_parameters/named_buffers/named_modules: nil or a string.
local function check_prefix(op, prefix)
  if prefix ~= nil and type(prefix) ~= "string" then
    fail(op, "prefix must be a string, got %s", describe(prefix))
  end
end

function Module:register_parameter(name, param)
  check_member_name(class_name(self) .. ":register_parameter", name)
  if param ~= nil then util.check_tensor(class_name(self) .. ":register_parameter", "param", param) end
  rawget(self, "_modules"):remove(name); rawget(self, "_attrs")[name] = nil
  if param == nil then rawget(self, "_parameters"):remove(name) else rawget(self, "_parameters"):set(name, param) end
end

-- A buffer is module state that is not a parameter (saved in state_dict unless
-- persistent=false, converted by to()).
function Module:register_buffer(name, tensor, persistent)
  check_member_name(class_name(self) .. ":register_buffer", name)
  if persistent ~= nil then util.check_bool(class_name(self) .. ":register_buffer", "persistent", persistent) end
  if tensor ~= nil then util.check_tensor(class_name(self) .. ":register_buffer", "tensor", tensor) end
  rawget(self, "_modules"):remove(name); rawget(self, "_parameters"):remove(name)
  rawget(self, "_attrs")[name] = nil
  if tensor == nil then rawget(self, "_buffers"):remove(name) else rawget(self, "_buffers"):set(name, tensor) end
  rawget(self, "_non_persistent")[name] = (persistent == false) or nil
end

function Module:add_module(name, module)
  check_member_name(class_name(self) .. ":add_module", name)
  if not is_module(module) then
    fail(class_name(self) .. ":add_module", "expected a module for '%s', got %s", name_of(name), describe(module))
  end
  self[name] = module
end

-- Calls fn on every (sub)module in depth-first order, each after its children
-- (as PyTorch's apply), and returns self.
function Module:apply(fn)
  if not util.is_callable(fn) then fail(class_name(self) .. ":apply", "expected a function, got %s", describe(fn)) end
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
  check_prefix(class_name(self) .. ":named_parameters", prefix)
  if recurse ~= nil then util.check_bool(class_name(self) .. ":named_parameters", "recurse", recurse) end
  return named_members(self, "_parameters", prefix, recurse ~= false)
end

function Module:named_buffers(prefix, recurse)
  check_prefix(class_name(self) .. ":named_buffers", prefix)
  if recurse ~= nil then util.check_bool(class_name(self) .. ":named_buffers", "recurse", recurse) end
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
  check_prefix(class_name(self) .. ":named_modules", prefix)
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

-- zero_grad of modules and optimizers: `([set_to_none])` or `{set_to_none=}`. Clears the
-- gradients of `params`: to nil (the default, as in PyTorch 2.x; PyTorch 1.13's default was
-- false), or to zeros in place with set_to_none = false (a gradient that is itself part of
-- a graph, after backward{create_graph=true}, is detached first, as PyTorch does).
function util.zero_grad(op, params, ...)
  local set_to_none = true  -- (without arguments, no option table to read: the step loop's call)
  if select("#", ...) > 0 then set_to_none = util.args(op, {"set_to_none"}, 0, {set_to_none = true}, ...).set_to_none end
  if type(set_to_none) ~= "boolean" then
    fail(op, "set_to_none must be true or false, got %s", describe(set_to_none))
  end
  torch._zero_grads_(params, set_to_none)
end

function Module:zero_grad(...)
  util.zero_grad(class_name(self) .. ":zero_grad", self:parameters(), ...)
end

-- Device and dtype targets of to(): "cuda", "float64", {device=, dtype=} or a tensor.
-- As in PyTorch, a module converts to floating-point dtypes only.
local device_prefixes = {cpu = true, cuda = true}
local device_meta = getmetatable(torch._device("cpu"))
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
    elseif getmetatable(v) == device_meta then
      target.device = v
    elseif type(v) == "string" then
      if device_prefixes[v:match("^[^:]*")] then target.device = v else target.dtype = dtype_name(v) end
    elseif type(v) == "table" and getmetatable(v) == nil then
      torch._check_keywords(op, v, {"device", "dtype"})
      if v.device ~= nil and type(v.device) ~= "string" and getmetatable(v.device) ~= device_meta then
        fail(op, "device must be a string such as \"cpu\" or \"cuda\" or a torch.device, got %s", describe(v.device))
      end
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

-- "cuda" names the same device as "cuda:0" (a and b: names or device objects).
local function same_device(a, b)
  a, b = tostring(a), tostring(b)
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

-- The key order of tables that have one: state_dict()'s (the module's order) and the
-- OrderedDicts torch.load reads. torch.save writes such a table as an OrderedDict in this
-- order (keys added later come after, sorted). Weak keys: the record goes with the table.
torch._key_order = setmetatable({}, {__mode = "k"})

-- A flat table {["fc1.weight"] = tensor, ...} of detached tensors sharing the module's
-- storage, its key order recorded for torch.save (PyTorch's OrderedDict order).
function Module:state_dict()
  local sd, order = {}, {}
  for _, e in ipairs(state_entries(self)) do
    if sd[e[1]] == nil then order[#order + 1] = e[1] end
    sd[e[1]] = e[2]:detach()
  end
  torch._key_order[sd] = order
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
      missing[#missing + 1] = string.format("%q", quote(name))
    elseif not torch.is_tensor(v) then
      problems[#problems + 1] = string.format("value for %q is %s, expected a tensor", quote(name), describe(v))
    elseif not util.same_shape(v.shape, own.shape) then
      problems[#problems + 1] = string.format(
        "size mismatch for %q: copying a tensor of shape %s from the state dict, the shape in the current model is %s",
        name, util.shape_str(v.shape), util.shape_str(own.shape))
    end
  end
  for k in pairs(state_dict) do
    if not expected[k] then unexpected[#unexpected + 1] = string.format("%q", name_of(k)) end
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
-- Module hooks, as PyTorch's: functions a module calls around its forward (and, through the
-- autograd graph, its backward). Each register_* returns a handle whose remove() takes the
-- hook out; hooks run in the order they were registered.
--   register_forward_pre_hook(hook): hook(module, args) before forward; args is a table of
--     forward's arguments (args.n of them); returning a table replaces the arguments, any
--     other non-nil value becomes the only argument.
--   register_forward_hook(hook): hook(module, args, output) after forward; a non-nil return
--     replaces the output (with several outputs, output is a table of them, and so is the
--     replacement).
--   register_full_backward_hook(hook): hook(module, grad_input, grad_output) when the
--     gradients with respect to the module's arguments are computed; grad_input has one
--     entry per argument (nil where it is not a tensor that requires grad), grad_output one
--     per tensor output. Returning a table replaces grad_input.

local Handle = {}
Handle.__index = Handle

-- handle:remove(): the hook no longer runs (a no-op the second time).
function Handle:remove()
  local list = self.list
  for i, entry in ipairs(list) do
    if entry == self.entry then
      table.remove(list, i)
      break
    end
  end
end

Handle.remove = torch._strict("RemovableHandle:remove", Handle.remove, true)

local HOOK_KINDS = {"forward_pre", "forward", "backward"}

local function add_hook(self, kind, hook, op)
  if type(hook) ~= "function" and not (type(hook) == "table" and getmetatable(hook) and getmetatable(hook).__call) then
    fail(op, "expected a function, got %s", describe(hook))
  end
  local hooks = rawget(self, "_hooks")
  if hooks == nil then
    hooks = {}
    for _, k in ipairs(HOOK_KINDS) do hooks[k] = {} end
    rawset(self, "_hooks", hooks)
  end
  local entry = {fn = hook}
  table.insert(hooks[kind], entry)
  return setmetatable({list = hooks[kind], entry = entry}, Handle)
end

function Module:register_forward_pre_hook(hook)
  return add_hook(self, "forward_pre", hook, class_name(self) .. ":register_forward_pre_hook")
end

function Module:register_forward_hook(hook)
  return add_hook(self, "forward", hook, class_name(self) .. ":register_forward_hook")
end

function Module:register_full_backward_hook(hook)
  return add_hook(self, "backward", hook, class_name(self) .. ":register_full_backward_hook")
end

-- The identity functions that connect a module's backward hooks to the graph: one wraps the
-- arguments that require grad (its backward sees grad_input), one the outputs (its backward
-- sees grad_output). `state` (a plain argument) carries grad_output from one to the other.
local BackwardHookInput = torch.autograd.Function:extend("BackwardHookFunction")
local BackwardHookOutput = torch.autograd.Function:extend("BackwardHookFunction")

function BackwardHookInput.forward(ctx, state, ...)
  ctx.state = state
  return ...
end

-- Calls the module's backward hooks with grad_input (a table over forward's arguments) and
-- returns the grad_input they leave.
local function run_backward_hooks(state, grad_input)
  for _, entry in ipairs(table.move(state.hooks, 1, #state.hooks, 1, {})) do
    local r = entry.fn(state.module, grad_input, state.grad_output or {})
    if r ~= nil then
      if type(r) ~= "table" or getmetatable(r) ~= nil then
        fail(class_name(state.module), "a full backward hook must return nil or a table of gradients, got %s", describe(r))
      end
      grad_input = r
    end
  end
  return grad_input
end

function BackwardHookInput.backward(ctx, ...)
  local state = ctx.state
  local grads = table.pack(...)
  local grad_input = {}
  for k, pos in ipairs(state.tensor_args) do grad_input[pos] = grads[k] end
  grad_input = run_backward_hooks(state, grad_input)
  local out = {}
  for k, pos in ipairs(state.tensor_args) do out[k] = grad_input[pos] end
  return nil, table.unpack(out, 1, #state.tensor_args)
end

function BackwardHookOutput.forward(ctx, state, ...)
  ctx.state = state
  return ...
end

function BackwardHookOutput.backward(ctx, ...)
  local state = ctx.state
  state.grad_output = table.pack(...)
  if #state.tensor_args == 0 then
    -- No argument requires grad: the hooks run now, with an empty grad_input.
    local r = run_backward_hooks(state, {})
    if next(r) ~= nil then
      fail(class_name(state.module), "a full backward hook of a module whose arguments need no gradient must return nil")
    end
  end
  return nil, ...
end

-- A module call with hooks: pre-hooks, the arguments wrapped for the backward hooks, forward,
-- forward hooks, the outputs wrapped.
function util.call_with_hooks(self, ...)
  local hooks = rawget(self, "_hooks")
  local args = table.pack(...)
  for _, entry in ipairs(table.move(hooks.forward_pre, 1, #hooks.forward_pre, 1, {})) do
    local r = entry.fn(self, args)
    if r ~= nil then
      args = (type(r) == "table" and getmetatable(r) == nil) and r or {r, n = 1}
      args.n = args.n or #args
    end
  end
  local state
  if #hooks.backward > 0 and torch.is_grad_enabled() then
    state = {module = self, hooks = hooks.backward, tensor_args = {}}
    local wrapped = {}
    for i = 1, args.n do
      if torch.is_tensor(args[i]) and args[i].requires_grad then
        state.tensor_args[#state.tensor_args + 1] = i
        wrapped[#wrapped + 1] = args[i]
      end
    end
    if #wrapped > 0 then
      local results = table.pack(BackwardHookInput.apply(state, table.unpack(wrapped)))
      args = table.move(args, 1, args.n, 1, {n = args.n})
      for k, pos in ipairs(state.tensor_args) do args[pos] = results[k] end
    end
  end
  local out = table.pack(self:forward(table.unpack(args, 1, args.n)))
  for _, entry in ipairs(table.move(hooks.forward, 1, #hooks.forward, 1, {})) do
    local r = entry.fn(self, args, out.n == 1 and out[1] or out)
    if r ~= nil then
      out = out.n == 1 and {r, n = 1} or r
      out.n = out.n or #out
    end
  end
  if state then
    local positions, tensors = {}, {}
    for i = 1, out.n do
      if torch.is_tensor(out[i]) and out[i].requires_grad then
        positions[#positions + 1] = i
        tensors[#tensors + 1] = out[i]
      end
    end
    if #tensors > 0 then
      local results = table.pack(BackwardHookOutput.apply(state, table.unpack(tensors)))
      for k, pos in ipairs(positions) do out[pos] = results[k] end
    end
  end
  return table.unpack(out, 1, out.n)
end

---------------------------------------------------------------------------------------------
-- Containers. Children are named "0", "1", ... as in PyTorch, so state_dict keys ("0.weight")
-- and printed names match PyTorch's checkpoints and output; Lua indexing stays 1-based
-- (seq[1] is the child named "0"; negative from the end).

-- Index i (1-based, negative from the end) of a container of n children, or nil.
local function container_slot(self, i, n)
  if math.type(i) ~= "integer" and not (math.type(i) == "float" and math.tointeger(i)) then
    fail(class_name(self), "an index must be an integer, got %s", describe(i))
  end
  i = math.tointeger(i)
  if i < 0 then i = n + 1 + i end
  if i >= 1 and i <= n then return i end
end

local function container_len(self) return #rawget(self, "_modules").keys end

local function container_get(self, i)
  local modules = rawget(self, "_modules")
  local slot = container_slot(self, i, #modules.keys)
  return slot and modules.map[modules.keys[slot]]
end

local function container_set(self, i, module)
  local modules = rawget(self, "_modules")
  local slot = container_slot(self, i, #modules.keys)
  if not slot then fail(class_name(self), "index %d is out of range for %d modules", i, #modules.keys) end
  if not is_module(module) then fail(class_name(self), "expected a module at index %d, got %s", i, describe(module)) end
  modules.map[modules.keys[slot]] = module
end

local function container_append(self, module)
  if not is_module(module) then
    fail(class_name(self) .. ":append", "expected a module, got %s", describe(module))
  end
  rawget(self, "_modules"):set(tostring(container_len(self)), module)
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

---------------------------------------------------------------------------------------------
-- Keyed containers. A Lua table has no order, so a table given to ModuleDict or
-- ParameterDict is taken in sorted key order (as PyTorch's ParameterDict takes a plain dict);
-- a list of {key, value} pairs keeps its order.

-- The (key, value) pairs of `entries`: a list of {key, value} pairs as given, or a table's
-- string keys sorted.
local function keyed_entries(op, entries)
  if type(entries) ~= "table" or getmetatable(entries) ~= nil then
    fail(op, "expected a table of name = value or a list of {name, value} pairs, got %s", describe(entries))
  end
  local list = {}
  if #entries > 0 then
    for i, pair in ipairs(entries) do
      if type(pair) ~= "table" or getmetatable(pair) ~= nil or #pair ~= 2 or type(pair[1]) ~= "string" then
        fail(op, "element %d must be a {name, value} pair with a string name, got %s", i, describe(pair))
      end
      list[i] = pair
    end
    return list
  end
  for k, v in pairs(entries) do
    if type(k) ~= "string" then fail(op, "keys must be strings, got %s", describe(k)) end
    list[#list + 1] = {k, v}
  end
  table.sort(list, function(a, b) return a[1] < b[1] end)
  return list
end

-- The methods a keyed container shares; `registry` is where its values live.
local function keyed_container(name, registry, check)
  local class = util.module_class(name)
  class.__len = function(self) return #rawget(self, registry).keys end
  -- The one argument is the table of entries itself (a keyword table would read the same).
  function class:init(entries)
    if entries ~= nil then self:update(entries) end
  end
  -- Adds or replaces entries: a table of name = value, or a list of {name, value} pairs.
  function class:update(entries)
    for _, pair in ipairs(keyed_entries(name .. ":update", entries)) do
      local key = pair[1]
      if not self:contains(key) and class[key] ~= nil then
        fail(name, "key %s clashes with a method of %s", describe(key), name)
      end
      self[key] = check(name, key, pair[2])
    end
  end
  function class:keys()
    local keys = {}
    for i, k in ipairs(rawget(self, registry).keys) do keys[i] = k end
    return keys
  end
  function class:values()
    local reg, values = rawget(self, registry), {}
    for i, k in ipairs(reg.keys) do values[i] = reg.map[k] end
    return values
  end
  -- for name, value in d:items() do ... end, in order.
  function class:items() return rawget(self, registry):items() end
  function class:contains(key) return rawget(self, registry).map[key] ~= nil end
  -- Removes key and returns its value (an error when absent).
  function class:pop(key)
    local v = rawget(self, registry).map[key]
    if v == nil then fail(name .. ":pop", "no key %s", describe(key)) end
    self[key] = nil
    return v
  end
  function class:clear()
    for _, k in ipairs(self:keys()) do self[k] = nil end
  end
  function class:forward(...)
    fail(name, "is a container without forward; call its entries")
  end
  return class
end

-- nn.ModuleDict({name = module, ...} or {{name, module}, ...}): submodules by name.
keyed_container("ModuleDict", "_modules", function(op, key, m)
  if not is_module(m) then fail(op, "value for %s is %s, expected a module", describe(key), describe(m)) end
  return m
end)

-- "Parameter containing: [torch.float32 of size 2x3]", as PyTorch lists a parameter.
local function parameter_line(key, p)
  local dims = {}
  for i, n in ipairs(p.shape) do dims[i] = tostring(n) end
  local device = p.device.type ~= "cpu" and " (" .. p.device .. ")" or ""
  return string.format("  (%s): Parameter containing: [torch.%s of size %s%s]", key, p.dtype,
                       table.concat(dims, "x"), device)
end

-- A tensor stored into a parameter container becomes a parameter (as PyTorch wraps it).
local function as_parameter(op, key, v)
  if v == nil then return nil end
  if not torch.is_tensor(v) then fail(op, "value for %s is %s, expected a tensor", describe(key), describe(v)) end
  if made_as_parameter[v] then return v end
  return nn.Parameter(v)
end

local function parameter_lines(self)
  local lines = {}
  for k, p in rawget(self, "_parameters"):items() do lines[#lines + 1] = parameter_line(k, p) end
  return table.concat(lines, "\n")
end

-- nn.ParameterDict({name = tensor, ...} or {{name, tensor}, ...}): parameters by name.
local ParameterDict = keyed_container("ParameterDict", "_parameters", as_parameter)
function ParameterDict:__assign(k, v)
  if torch.is_tensor(v) then return as_parameter("ParameterDict", k, v) end
  return v
end
ParameterDict.extra_repr = parameter_lines

-- nn.ParameterList({t1, t2, ...}): parameters named "0", "1", ... (PyTorch's state_dict keys),
-- indexed from 1 and appendable; tensors become parameters.
local ParameterList = util.module_class("ParameterList")

function ParameterList:init(...)
  local values = util.args("ParameterList", {"values"}, 0, {}, ...).values
  if values ~= nil then self:extend(values) end
end

ParameterList.__len = function(self) return #rawget(self, "_parameters").keys end

function ParameterList.__getitem(self, i)
  local params = rawget(self, "_parameters")
  local slot = container_slot(self, i, #params.keys)
  return slot and params.map[params.keys[slot]]
end

function ParameterList.__setitem(self, i, v)
  local params = rawget(self, "_parameters")
  local slot = container_slot(self, i, #params.keys)
  if not slot then fail("ParameterList", "index %d is out of range for %d parameters", i, #params.keys) end
  if v == nil then fail("ParameterList", "cannot assign nil to index %d", i) end
  params:set(params.keys[slot], as_parameter("ParameterList", i, v))
end

function ParameterList:append(value)
  local n = #rawget(self, "_parameters").keys
  rawget(self, "_parameters"):set(tostring(n), as_parameter("ParameterList:append", n + 1, value))
  return self
end

function ParameterList:extend(values)
  if type(values) ~= "table" or getmetatable(values) ~= nil then
    fail("ParameterList:extend", "expected a list of tensors, got %s", describe(values))
  end
  for _, v in ipairs(values) do self:append(v) end
  return self
end

ParameterList.extra_repr = parameter_lines

function ParameterList:forward(...)
  fail("ParameterList", "is a container without forward; index its parameters")
end
