-- torch.optim: optimizers and learning-rate schedulers. Each step is one fused C++ loop per
-- parameter (torch._*_step_); the bookkeeping is Lua. Receives the torch module table.
local torch = ...
local optim = {}
torch.optim = optim

local is_tensor = torch.is_tensor

-- Errors carry no position prefix, so that the message starts with the optimizer's name.
local function fail(msg) error(msg, 0) end

local function describe(v)
  if is_tensor(v) then return "tensor" end
  return type(v)
end

-- A class: a table that is the metatable of its instances, called to make one
-- (`Class(...)` runs `Class.init(self, ...)`), and `Class:extend(name)` for a subclass.
local function class(name, parent)
  local cls = {name = name}
  cls.__index = cls
  function cls:extend(subname) return class(subname, self) end
  return setmetatable(cls, {
    __index = parent,
    __call = function(c, ...)
      local obj = setmetatable({}, c)
      obj:init(...)
      return obj
    end,
  })
end

-- Options given as a keyword table (or nothing).
local function options(name, opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" or is_tensor(opts) then
    fail(name .. ": options must be a keyword table such as {lr=0.01}, got a " .. describe(opts))
  end
  return opts
end

-- A shallow copy of a table whose values may be tables one level deep (betas).
local function copy_group(g)
  local c = {}
  for k, v in pairs(g) do
    if type(v) == "table" and not is_tensor(v) and k ~= "params" then
      local inner = {}
      for i, x in pairs(v) do inner[i] = x end
      v = inner
    end
    c[k] = v
  end
  return c
end

local function check_number(name, key, v)
  if type(v) ~= "number" then
    fail(name .. ": " .. key .. " must be a number, got " .. (v == nil and "nil" or describe(v)))
  end
end

-- Checks of hyper-parameters shared by the optimizers (PyTorch's ValueErrors), applied to
-- the defaults and to every parameter group.
local function at_least_zero(name, values, key)
  local v = values[key]
  check_number(name, key, v)
  if not (v >= 0) then fail(name .. ": invalid " .. key .. " " .. tostring(v) .. " (must be >= 0)") end
end

local function check_betas(name, values)
  local b = values.betas
  if type(b) ~= "table" or is_tensor(b) or type(b[1]) ~= "number" or type(b[2]) ~= "number" then
    fail(name .. ": betas must be a table of two numbers {beta1, beta2}, got " .. describe(b))
  end
  for i = 1, 2 do
    if not (b[i] >= 0 and b[i] < 1) then
      fail(name .. ": invalid beta parameter at index " .. i .. ": " .. tostring(b[i]) .. " (must be in [0, 1))")
    end
  end
end

-- ---------------------------------------------------------------------------------------
-- Optimizer: parameter groups, per-parameter state, zero_grad, step and state dicts.
-- A subclass sets `defaults`, `required` (the options without a default, such as SGD's lr),
-- `validate(values)` and `update(param, grad, state, group)`, which steps one parameter.

local Optimizer = class("Optimizer")
optim.Optimizer = Optimizer
Optimizer.defaults = {}
Optimizer.required = {}

function Optimizer:validate() end

function Optimizer:update()
  fail(self.name .. ": a subclass of optim.Optimizer must define update(param, grad, state, group)")
end

-- params: a list of tensors, or a list of groups {params = {...}, lr = ..., ...}.
function Optimizer:init(params, opts)
  local name = self.name
  opts = options(name, opts)
  local defaults = {}
  for k, v in pairs(self.defaults) do defaults[k] = v end
  for k, v in pairs(opts) do
    if self.defaults[k] == nil and not self.required[k] then
      fail(name .. ": unknown option '" .. torch.utils._quote(tostring(k)) .. "'")
    end
    defaults[k] = v
  end
  self:validate(defaults, true)
  self.defaults = defaults
  self.state = {}
  self.param_groups = {}
  if type(params) ~= "table" or is_tensor(params) then
    fail(name .. ": params must be a list of tensors or of parameter groups ({params=..., lr=...}), got a "
      .. describe(params))
  end
  if #params == 0 then fail(name .. ": got an empty parameter list") end
  if is_tensor(params[1]) then params = {{params = params}} end
  for _, group in ipairs(params) do self:add_param_group(group) end
end

-- Adds a group: its own options, the defaults for the rest.
function Optimizer:add_param_group(group)
  local name = self.name
  if type(group) ~= "table" or is_tensor(group) then
    fail(name .. ": a parameter group must be a table {params=..., ...}, got a " .. describe(group))
  end
  group = copy_group(group)
  local params = group.params
  if is_tensor(params) then params = {params} end
  if type(params) ~= "table" then
    fail(name .. ": a parameter group's params must be a list of tensors, got " .. describe(params))
  end
  local seen = {}
  for _, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do seen[p] = true end
  end
  local list = {}
  for i, p in ipairs(params) do
    if not is_tensor(p) then fail(name .. ": can only optimize tensors, but parameter " .. i .. " is a " .. describe(p)) end
    if not p.is_leaf then fail(name .. ": can't optimize a non-leaf tensor (parameter " .. i .. ")") end
    if seen[p] then fail(name .. ": parameter " .. i .. " appears more than once in the parameter groups") end
    local dt = p.dtype
    if dt ~= "float16" and dt ~= "bfloat16" and dt ~= "float32" and dt ~= "float64" then
      fail(name .. ": can only optimize floating-point tensors, but parameter " .. i .. " has dtype " .. dt)
    end
    seen[p] = true
    list[i] = p
  end
  group.params = list
  for k, v in pairs(self.defaults) do
    if group[k] == nil then group[k] = type(v) == "table" and copy_group(v) or v end
  end
  for k in pairs(self.required) do
    if group[k] == nil then fail(name .. ": " .. k .. " is required (in the options or in every parameter group)") end
  end
  self:validate(group)
  self.param_groups[#self.param_groups + 1] = group
end

-- Clears the gradients: sets them to nil (the default), or zeroes them in place.
function Optimizer:zero_grad(set_to_none)
  if type(set_to_none) == "table" then set_to_none = set_to_none.set_to_none end
  if set_to_none == nil then set_to_none = true end
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do
      local g = p.grad
      if g ~= nil then
        if set_to_none then
          p.grad = nil
        else
          if g.requires_grad then
            g = g:detach()
            p.grad = g
          end
          g:zero_()
        end
      end
    end
  end
end

-- One optimization step over every parameter that has a gradient. closure, if given,
-- re-evaluates the model with grad mode on and returns the loss, which step returns.
function Optimizer:step(closure)
  local loss
  if closure ~= nil then
    if type(closure) ~= "function" then
      fail(self.name .. ".step: closure must be a function that returns the loss, got a " .. describe(closure))
    end
    loss = torch.enable_grad(closure)
  end
  local state = self.state
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do
      local g = p.grad
      if g ~= nil then
        local s = state[p]
        if s == nil then
          s = {}
          state[p] = s
        end
        self:update(p, g, s, group)
      end
    end
  end
  return loss
end

-- {state = {[i] = per-parameter state}, param_groups = {{params = {i, ...}, lr = ...}}}, with
-- parameters numbered 1, 2, ... across the groups in order (PyTorch's layout, 1-based).
function Optimizer:state_dict()
  local index, groups, packed = {}, {}, {}
  local n = 0
  for gi, group in ipairs(self.param_groups) do
    local g = copy_group(group)
    g.params = {}
    for i, p in ipairs(group.params) do
      n = n + 1
      index[p] = n
      g.params[i] = n
    end
    groups[gi] = g
  end
  for p, s in pairs(self.state) do
    if index[p] then packed[index[p]] = s end
  end
  return {state = packed, param_groups = groups}
end

-- Restores a state_dict() of an optimizer over parameters of the same shapes: the groups'
-- options and copies of the state tensors (cast to each parameter's dtype).
function Optimizer:load_state_dict(sd)
  local name = self.name
  if type(sd) ~= "table" or type(sd.state) ~= "table" or type(sd.param_groups) ~= "table" then
    fail(name .. ".load_state_dict: expected a table {state=..., param_groups=...}")
  end
  if #sd.param_groups ~= #self.param_groups then
    fail(name .. ".load_state_dict: the state dict has " .. #sd.param_groups .. " parameter groups, the optimizer "
      .. #self.param_groups)
  end
  local params, groups = {}, {}
  for gi, group in ipairs(self.param_groups) do
    local saved = sd.param_groups[gi]
    local saved_count = type(saved) == "table" and type(saved.params) == "table" and #saved.params or 0
    if saved_count ~= #group.params then
      fail(name .. ".load_state_dict: parameter group " .. gi .. " has " .. #group.params
        .. " parameters but the saved one " .. saved_count)
    end
    local g = copy_group(saved)
    g.params = group.params
    self:validate(g)
    for i, p in ipairs(group.params) do params[saved.params[i]] = p end
    groups[gi] = g
  end
  local state = {}
  for i, s in pairs(sd.state) do
    local p = params[i]
    if p == nil then fail(name .. ".load_state_dict: state for parameter " .. tostring(i) .. " has no parameter") end
    if type(s) ~= "table" then
      fail(name .. ".load_state_dict: state for parameter " .. tostring(i) .. " is a " .. describe(s) .. ", not a table")
    end
    local c = {}
    for k, v in pairs(s) do
      -- The state holds a step count and tensors shaped like the parameter.
      local want = k == "step" and "number" or "tensor"
      if describe(v) ~= want then
        fail(name .. ".load_state_dict: state '" .. tostring(k) .. "' of parameter " .. tostring(i) .. " is a "
          .. describe(v) .. ", expected a " .. want)
      end
      if is_tensor(v) then
        local ps, vs = p.shape, v.shape
        local same = #ps == #vs
        for d = 1, #ps do same = same and ps[d] == vs[d] end
        if not same then
          fail(name .. ".load_state_dict: state '" .. k .. "' of parameter " .. i .. " has shape {"
            .. table.concat(vs, ",") .. "} but the parameter {" .. table.concat(ps, ",") .. "}")
        end
        v = v.dtype == p.dtype and v:clone() or v:to(p.dtype)
      end
      c[k] = v
    end
    state[p] = c
  end
  self.param_groups = groups
  self.state = state
end

-- ---------------------------------------------------------------------------------------
-- The optimizers (PyTorch 1.13's defaults and checks).

local SGD = Optimizer:extend("SGD")
optim.SGD = SGD
SGD.defaults = {momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false}
SGD.required = {lr = true}

function SGD:validate(v, defaults_only)
  if not (defaults_only and v.lr == nil) then at_least_zero(self.name, v, "lr") end
  at_least_zero(self.name, v, "momentum")
  at_least_zero(self.name, v, "weight_decay")
  check_number(self.name, "dampening", v.dampening)
  if v.nesterov and (v.momentum <= 0 or v.dampening ~= 0) then
    fail(self.name .. ": nesterov momentum requires a momentum > 0 and zero dampening, got momentum "
      .. tostring(v.momentum) .. " and dampening " .. tostring(v.dampening))
  end
end

function SGD:update(p, g, s, group)
  local buf = s.momentum_buffer
  local new_buffer = group.momentum ~= 0 and buf == nil
  if new_buffer then buf = torch.zeros_like(p) end
  torch._sgd_step_(p, g, buf, {lr = group.lr, momentum = group.momentum, dampening = group.dampening,
    weight_decay = group.weight_decay, nesterov = group.nesterov, maximize = group.maximize,
    new_buffer = new_buffer})
  if new_buffer then s.momentum_buffer = buf end
end

local Adam = Optimizer:extend("Adam")
optim.Adam = Adam
Adam.defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, amsgrad = false, maximize = false}
Adam.required = {}

function Adam:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  check_betas(self.name, v)
  at_least_zero(self.name, v, "weight_decay")
end

function Adam:update(p, g, s, group)
  if s.step == nil then
    s.step = 0
    s.exp_avg = torch.zeros_like(p)
    s.exp_avg_sq = torch.zeros_like(p)
  end
  if group.amsgrad and s.max_exp_avg_sq == nil then s.max_exp_avg_sq = torch.zeros_like(p) end
  local step = s.step + 1
  torch._adam_step_(p, g, s.exp_avg, s.exp_avg_sq, group.amsgrad and s.max_exp_avg_sq or nil,
    {lr = group.lr, beta1 = group.betas[1], beta2 = group.betas[2], eps = group.eps,
     weight_decay = group.weight_decay, step = step, amsgrad = group.amsgrad, maximize = group.maximize,
     decoupled_weight_decay = self.decoupled_weight_decay})
  s.step = step
end

-- AdamW: Adam with the weight decay applied to the parameter (default 1e-2).
local AdamW = Adam:extend("AdamW")
optim.AdamW = AdamW
AdamW.defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 1e-2, amsgrad = false, maximize = false}
AdamW.decoupled_weight_decay = true

local RMSprop = Optimizer:extend("RMSprop")
optim.RMSprop = RMSprop
RMSprop.defaults = {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
                    maximize = false}
RMSprop.required = {}

function RMSprop:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  at_least_zero(self.name, v, "momentum")
  at_least_zero(self.name, v, "weight_decay")
  at_least_zero(self.name, v, "alpha")
end

function RMSprop:update(p, g, s, group)
  if s.step == nil then
    s.step = 0
    s.square_avg = torch.zeros_like(p)
  end
  local with_momentum = group.momentum > 0
  if with_momentum and s.momentum_buffer == nil then s.momentum_buffer = torch.zeros_like(p) end
  if group.centered and s.grad_avg == nil then s.grad_avg = torch.zeros_like(p) end
  torch._rmsprop_step_(p, g, s.square_avg, with_momentum and s.momentum_buffer or nil,
    group.centered and s.grad_avg or nil,
    {lr = group.lr, alpha = group.alpha, eps = group.eps, weight_decay = group.weight_decay,
     momentum = group.momentum, centered = group.centered, maximize = group.maximize})
  s.step = s.step + 1
end

-- ---------------------------------------------------------------------------------------
-- Learning-rate schedulers (torch.optim.lr_scheduler, PyTorch 1.13): each step() sets every
-- group's lr from get_lr(), PyTorch's recurrences; step(epoch) uses the closed form.

local lr_scheduler = {}
optim.lr_scheduler = lr_scheduler

local LRScheduler = class("LRScheduler")
lr_scheduler.LRScheduler = LRScheduler

function LRScheduler:init(optimizer, last_epoch)
  local name = self.name
  if type(optimizer) ~= "table" or type(optimizer.param_groups) ~= "table" then
    fail(name .. ": expected an optimizer, got a " .. describe(optimizer))
  end
  last_epoch = last_epoch or -1
  if math.type(last_epoch) ~= "integer" or last_epoch < -1 then
    fail(name .. ": last_epoch must be an integer >= -1, got " .. tostring(last_epoch))
  end
  self.optimizer = optimizer
  self.base_lrs = {}
  for i, group in ipairs(optimizer.param_groups) do
    if last_epoch == -1 then
      if group.initial_lr == nil then group.initial_lr = group.lr end
    elseif group.initial_lr == nil then
      fail(name .. ": param 'initial_lr' is not specified in param_groups[" .. i .. "] when resuming an optimizer")
    end
    self.base_lrs[i] = group.initial_lr
  end
  self.last_epoch = last_epoch
  self._step_count = 0
  self:step()
end

-- Advances one epoch (or jumps to `epoch`, with the closed form) and sets the groups' lr.
function LRScheduler:step(epoch)
  self._step_count = self._step_count + 1
  local values
  if epoch == nil then
    self.last_epoch = self.last_epoch + 1
    values = self:get_lr()
  else
    if math.type(epoch) ~= "integer" or epoch < 0 then
      fail(self.name .. ":step: epoch must be an integer >= 0, got " .. tostring(epoch))
    end
    self.last_epoch = epoch
    values = self:closed_form_lr()
  end
  self._last_lr = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    group.lr = values[i]
    self._last_lr[i] = values[i]
  end
end

-- The learning rates the last step set, one per group.
function LRScheduler:get_last_lr()
  local c = {}
  for i, v in ipairs(self._last_lr) do c[i] = v end
  return c
end

-- StepLR: multiplies the lr by gamma every step_size epochs.
local StepLR = LRScheduler:extend("StepLR")
lr_scheduler.StepLR = StepLR

function StepLR:init(optimizer, opts)
  opts = options("StepLR", opts)
  local step_size, gamma = opts.step_size, opts.gamma or 0.1
  if math.type(step_size) ~= "integer" or step_size < 1 then
    fail("StepLR: step_size must be a positive integer, got " .. tostring(step_size))
  end
  check_number("StepLR", "gamma", gamma)
  self.step_size, self.gamma = step_size, gamma
  LRScheduler.init(self, optimizer, opts.last_epoch)
end

function StepLR:get_lr()
  local lrs, e = {}, self.last_epoch
  for i, group in ipairs(self.optimizer.param_groups) do
    lrs[i] = (e == 0 or e % self.step_size ~= 0) and group.lr or group.lr * self.gamma
  end
  return lrs
end

function StepLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ (self.last_epoch // self.step_size) end
  return lrs
end

-- CosineAnnealingLR: the lr follows half a cosine from the initial lr down to eta_min over
-- T_max epochs (and back up after), by PyTorch's recurrence.
local CosineAnnealingLR = LRScheduler:extend("CosineAnnealingLR")
lr_scheduler.CosineAnnealingLR = CosineAnnealingLR

function CosineAnnealingLR:init(optimizer, opts)
  opts = options("CosineAnnealingLR", opts)
  local T_max, eta_min = opts.T_max, opts.eta_min or 0
  if type(T_max) ~= "number" or not (T_max > 0) then
    fail("CosineAnnealingLR: T_max must be a number > 0, got " .. tostring(T_max))
  end
  check_number("CosineAnnealingLR", "eta_min", eta_min)
  self.T_max, self.eta_min = T_max, eta_min
  LRScheduler.init(self, optimizer, opts.last_epoch)
end

function CosineAnnealingLR:get_lr()
  local e, T, eta, pi = self.last_epoch, self.T_max, self.eta_min, math.pi
  local lrs = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    local base = self.base_lrs[i]
    if e == 0 then
      lrs[i] = group.lr
    elseif self._step_count == 1 and e > 0 then
      lrs[i] = eta + (base - eta) * (1 + math.cos(e * pi / T)) / 2
    elseif (e - 1 - T) % (2 * T) == 0 then
      lrs[i] = group.lr + (base - eta) * (1 - math.cos(pi / T)) / 2
    else
      lrs[i] = (1 + math.cos(pi * e / T)) / (1 + math.cos(pi * (e - 1) / T)) * (group.lr - eta) + eta
    end
  end
  return lrs
end

function CosineAnnealingLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
  end
  return lrs
end
