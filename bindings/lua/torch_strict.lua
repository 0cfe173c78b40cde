-- The part loaded after the others but the docs: every public function of the Lua-written
-- parts (torch, torch.utils, torch.utils.data and its classes, torch.autograd, its Function
-- and functional, nn.functional, nn.init, the nn layer classes, the optimizers and
-- schedulers, torch.distributions and its classes, torch.multiprocessing and its classes,
-- DistributedDataParallel and DistributedSampler, torch.profiler and its classes) that has a fixed number of parameters
-- rejects a non-nil argument beyond them, which Lua would drop silently: F.relu(x, {inplace = true}) is an error, not a relu.
-- Functions with varargs check theirs themselves (nn._util.args, torch._check_keywords), as
-- the C++ bindings do in their argument reader.
local torch = ...
local strict = torch._strict

-- Methods the framework calls with its own arguments (an optimizer's validate(values,
-- defaults_only) and update(...), a scheduler's get_lr()): subclasses define them with what
-- they use, so only their self is checked.
local hooks = {validate = true, update = true, get_lr = true, closed_form_lr = true}

-- Class functions called on the class, not on an object: they take no self.
local statics = {new = true, generate_square_subsequent_mask = true, set_default_validate_args = true}

-- Wraps the public functions stored in t itself (not inherited); `method`: called with self.
local function wrap(t, prefix, method)
  local names = {}
  for k, v in pairs(t) do
    if type(k) == "string" and type(v) == "function" and k:sub(1, 1) ~= "_" then names[#names + 1] = k end
  end
  for _, k in ipairs(names) do
    local f = rawget(t, k)
    if method and hooks[k] then rawset(t, k, torch._self_checked(prefix .. k, f))
    else rawset(t, k, strict(prefix .. k, f, method and not statics[k])) end
  end
end

wrap(torch, "")
wrap(torch.utils, "utils.")
wrap(torch.autograd, "autograd.")
wrap(torch.autograd.functional, "autograd.functional.")
wrap(torch.autograd.Function, "Function:", true)
wrap(torch.utils.data, "utils.data.")
wrap(torch.nn.functional, "")
wrap(torch.nn.init, "init.")
wrap(torch.nn.utils, "nn.utils.")
wrap(torch.nn.utils.rnn, "nn.utils.rnn.")
wrap(torch.multiprocessing, "multiprocessing.")
wrap(torch.profiler, "profiler.")
for _, name in ipairs{"Parameter", "is_module"} do torch.nn[name] = strict(name, torch.nn[name]) end
wrap(torch.distributions, "distributions.")
torch.distributions.kl.kl_divergence = torch.distributions.kl_divergence

-- Classes: nn layers (tables with _name), optimizers and schedulers (tables with name that
-- are their own __index).
local function is_class(v)
  return type(v) == "table" and (rawget(v, "_name") ~= nil or (rawget(v, "name") ~= nil and rawget(v, "__index") == v))
end
for _, space in ipairs{torch.nn, torch.optim, torch.optim.lr_scheduler, torch.utils.data, torch.distributions,
                       torch.amp, torch.multiprocessing, torch.profiler, torch.nn.parallel, torch.utils.data.distributed} do
  for _, cls in pairs(space) do
    if is_class(cls) then wrap(cls, (rawget(cls, "_name") or rawget(cls, "name")) .. ":", true) end
  end
end

-- The built-in optimizers' hooks still get a clear error when a script calls them itself
-- with other arguments than the framework gives (a user subclass's hooks are its own).
local function expect(op, what, ok, v)
  if not ok then error(op .. ": expected " .. what .. ", got " .. torch.nn._util.describe(v), 0) end
end
local hook_signatures = {
  validate = function(op, values, defaults_only, ...)
    expect(op, "a table of options", type(values) == "table" and not torch.is_tensor(values), values)
    expect(op, "true, false or nil for defaults_only", defaults_only == nil or type(defaults_only) == "boolean",
           defaults_only)
    if select("#", ...) > 0 then error(op .. ": expected at most 2 arguments", 0) end
  end,
  update = function(op, param, grad, state, group, ...)
    expect(op, "a tensor for param", torch.is_tensor(param), param)
    expect(op, "a tensor for grad", torch.is_tensor(grad), grad)
    expect(op, "a table for state", type(state) == "table" and not torch.is_tensor(state), state)
    expect(op, "a table for group", type(group) == "table" and not torch.is_tensor(group), group)
    if select("#", ...) > 0 then error(op .. ": expected at most 4 arguments", 0) end
  end,
  step_group = function(op, group, state, ...)
    expect(op, "a parameter group (a table with a list params)", type(group) == "table" and
           not torch.is_tensor(group) and type(group.params) == "table", group)
    expect(op, "a table for state", type(state) == "table" and not torch.is_tensor(state), state)
    if select("#", ...) > 0 then error(op .. ": expected at most 2 arguments", 0) end
  end,
}
for _, cls in pairs(torch.optim) do
  if is_class(cls) then
    for hook, check in pairs(hook_signatures) do
      local f = rawget(cls, hook)
      if f then
        local op = rawget(cls, "name") .. ":" .. hook
        local checked = function(self, ...)
          check(op, ...)
          return f(self, ...)
        end
        torch._unchecked[checked] = torch._unchecked[f] or f
        rawset(cls, hook, checked)
      end
    end
  end
end
