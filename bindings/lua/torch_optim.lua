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
-- `validate(values)` and `update(param, grad, state, group)`, which steps one parameter (or
-- `step_group(group, state)`, which steps every parameter of a group that has a gradient,
-- making state[param] when missing: SGD's, one engine call for the group; a subclass that
-- defines update below it gets update called),
-- `state_numbers` when its state holds numbers besides `step`, `step_tensor` when its
-- step count is a tensor (as PyTorch keeps it; the step advances it in place and computes
-- what depends on it with tensor ops, so a step under torch.compile changes no Lua value and
-- replays), and `state_scalars` for its other one-element state tensors (NAdam's
-- mu_product), which load_state_dict also accepts as numbers.

local Optimizer = class("Optimizer")
optim.Optimizer = Optimizer
Optimizer.defaults = {}
Optimizer.required = {}
-- PyTorch's implementation switches the optimizer accepts (foreach, fused, capturable,
-- differentiable; PyTorch 1.13's lists). tide's step is always one fused loop per parameter,
-- so foreach and fused give the same numbers either way; differentiable (autograd through the
-- step) has no tide counterpart and must be false. capturable keeps the step count on the
-- parameter's device and computes the step from it there (Adam and AdamW, the optimizers
-- PyTorch 1.13 gives it to: adam_capturable_step), so that a compiled step replays as one CUDA
-- graph.
Optimizer.flags = {}
-- The per-parameter state entries that are numbers (the others are tensors).
Optimizer.state_numbers = {step = true}
Optimizer.step_tensor = false
Optimizer.state_scalars = {}

-- A new step count tensor holding n (0 when nil): one element on the CPU whatever the
-- parameter's device (on `device` for capturable optimizers), float32 or, under a float64
-- default dtype, float64 (PyTorch's _get_scalar_dtype). A zero count is filled by the
-- engine, so a first step under torch.compile records.
local function new_step_count(n, device)
  local o = {dtype = torch.get_default_dtype() == torch.float64 and torch.float64 or torch.float32, device = "cpu"}
  local count = n and torch.tensor(n + 0.0, o) or torch.zeros({}, o)
  return device and count:to(device) or count
end

-- load_state_dict's `k` (a state_scalars entry) of parameter i: a number (the state of older
-- tide versions) or a one-element tensor; returns a new zero-dim tensor of the step count's
-- dtype, on the CPU.
local function loaded_state_scalar(name, i, k, v)
  local n = v
  if is_tensor(v) then
    if v:numel() ~= 1 then
      fail(name .. ".load_state_dict: state '" .. k .. "' of parameter " .. tostring(i) .. " has " .. v:numel()
        .. " elements, expected one")
    end
    n = v:item()
  end
  if type(n) ~= "number" then
    fail(name .. ".load_state_dict: state '" .. k .. "' of parameter " .. tostring(i) .. " is a " .. describe(v)
      .. ", expected a number or a one-element tensor")
  end
  return new_step_count(n)
end

-- load_state_dict's `step` of an optimizer that counts in a tensor: a whole number >= 0,
-- given as a number (older state dicts) or a one-element tensor; returns a new count tensor.
local function loaded_step_count(name, i, v, device)
  local n = v
  if is_tensor(v) then
    if v:numel() ~= 1 then
      fail(name .. ".load_state_dict: state 'step' of parameter " .. tostring(i) .. " has " .. v:numel()
        .. " elements, expected one")
    end
    n = v:item()
  elseif type(v) ~= "number" then
    fail(name .. ".load_state_dict: state 'step' of parameter " .. tostring(i) .. " is a " .. describe(v)
      .. ", expected a number or a one-element tensor")
  end
  if type(n) ~= "number" or n < 0 or n ~= math.floor(n) or n >= 2 ^ 53 then
    fail(name .. ".load_state_dict: state 'step' of parameter " .. tostring(i) .. " is " .. tostring(n)
      .. ", expected a whole number >= 0")
  end
  return new_step_count(n, device)
end

function Optimizer:validate() end

function Optimizer:update()
  fail(self.name .. ": a subclass of optim.Optimizer must define update(param, grad, state, group)")
end

-- Checks the implementation switches in `values` (the options or a group): booleans (foreach
-- may also be nil, "let the library choose"), differentiable false.
local function check_flags(self, values)
  for flag in pairs(self.flags) do
    local v = values[flag]
    if v ~= nil and type(v) ~= "boolean" then
      fail(self.name .. ": " .. flag .. " must be a boolean, got " .. describe(v))
    end
    if v and flag == "differentiable" then
      fail(self.name .. ": differentiable=true is not supported (tide has no autograd through optimizer steps); "
        .. "leave it false")
    end
  end
end

-- params: a list of tensors, or a list of groups {params = {...}, lr = ..., ...}.
function Optimizer:init(params, opts)
  local name = self.name
  opts = options(name, opts)
  local defaults, valid = {}, {}
  for k, v in pairs(self.defaults) do defaults[k], valid[#valid + 1] = v, k end
  for k in pairs(self.required) do valid[#valid + 1] = k end
  for k in pairs(self.flags) do valid[#valid + 1] = k end
  table.sort(valid)
  torch._check_keywords(name, opts, valid)
  for k, v in pairs(opts) do defaults[k] = v end
  check_flags(self, defaults)
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
  check_flags(self, group)
  self:validate(group)
  self.param_groups[#self.param_groups + 1] = group
end

-- Clears the gradients of every group's parameters (nn._util.zero_grad: nil by default, or
-- zeros with {set_to_none = false}).
function Optimizer:zero_grad(...)
  local groups = self.param_groups
  local params = #groups == 1 and groups[1].params or nil  -- one group: its list as it is
  if params == nil then
    params = {}
    for _, group in ipairs(groups) do
      for _, p in ipairs(group.params) do params[#params + 1] = p end
    end
  end
  torch.nn._util.zero_grad(self.name .. ":zero_grad", params, ...)
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
  local _ <close> = torch.no_grad()
  -- The hooks without the argument checks that guard a script's own calls (torch._unchecked).
  local validate, update = self.validate, self.update
  validate, update = torch._unchecked[validate] or validate, torch._unchecked[update] or update
  -- step_group when the class has one, unless a subclass defined its own update below it.
  local step_group = self.step_group
  if step_group and self.update ~= Optimizer.update then step_group = nil end
  for _, group in ipairs(self.param_groups) do
    validate(self, group)  -- param_groups are writable: a changed option is checked when used
    if step_group then
      step_group(self, group, state)
    else
      for _, p in ipairs(group.params) do
        local g = p.grad
        if g ~= nil then
          local s = state[p]
          if s == nil then
            s = {}
            state[p] = s
          end
          update(self, p, g, s, group)
        end
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
  local params, groups, capturable = {}, {}, {}
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
    for i, p in ipairs(group.params) do
      params[saved.params[i]] = p
      capturable[p] = g.capturable
    end
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
      -- The state holds the numbers the class names (a step count) and tensors shaped like
      -- the parameter.
      local want = self.state_numbers[k] and "number" or "tensor"
      if k == "step" and self.step_tensor then
        v, want = loaded_step_count(name, i, v, capturable[p] and p.device or nil), "step count"
      elseif self.state_scalars[k] then
        v, want = loaded_state_scalar(name, i, k, v), "scalar"
      elseif describe(v) ~= want then
        fail(name .. ".load_state_dict: state '" .. tostring(k) .. "' of parameter " .. tostring(i) .. " is a "
          .. describe(v) .. ", expected a " .. want)
      end
      if want == "tensor" then
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
SGD.flags = {foreach = true, differentiable = true}
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

-- The whole group in one engine call (see Optimizer:step's step_group).
function SGD:step_group(group, state)
  torch._sgd_group_step_(group, state)
end

local Adam = Optimizer:extend("Adam")
optim.Adam = Adam
Adam.flags = {foreach = true, capturable = true, differentiable = true, fused = true}
Adam.defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, amsgrad = false, maximize = false}
Adam.required = {}

function Adam:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  check_betas(self.name, v)
  at_least_zero(self.name, v, "weight_decay")
end

Adam.state_numbers = {}
Adam.step_tensor = true

-- capturable=true: PyTorch 1.13's capturable single-tensor step formulas (with PyTorch 2's
-- count: a 0-dim tensor of _get_scalar_dtype, not 1.13's float32 of shape (1,)), in tensor
-- ops on the parameter's device with the step count there too (bias corrections from it),
-- so no value is read on the host and a compiled step is one CUDA graph. As PyTorch, the
-- parameters must be on a CUDA device. Its numbers differ from the fused step's by about
-- 1e-5 relative, as PyTorch's do: the bias corrections come from the float32 count.
local function adam_capturable_step(self, p, g, s, group)
  if tostring(p.device) == "cpu" then
    fail(self.name .. ": capturable=true needs parameters on a CUDA device, got one on cpu (as PyTorch)")
  end
  if s.step == nil then
    s.step = new_step_count(nil, p.device)
    s.exp_avg = torch.zeros_like(p)
    s.exp_avg_sq = torch.zeros_like(p)
  elseif tostring(s.step.device) ~= tostring(p.device) then
    fail(self.name .. ": capturable=true needs the step count on the parameter's device (" .. tostring(p.device)
      .. "), got one on " .. tostring(s.step.device) .. " (state made with capturable=false)")
  end
  if group.amsgrad and s.max_exp_avg_sq == nil then s.max_exp_avg_sq = torch.zeros_like(p) end
  local lr, beta1, beta2, wd = group.lr, group.betas[1], group.betas[2], group.weight_decay
  local step = s.step:add_(1)
  if group.maximize then g = -g end
  if wd ~= 0 then
    if self.decoupled_weight_decay then p:mul_(1 - lr * wd) else g = g:add(p, {alpha = wd}) end
  end
  s.exp_avg:mul_(beta1):add_(g, {alpha = 1 - beta1})
  s.exp_avg_sq:mul_(beta2):addcmul_(g, g, {value = 1 - beta2})
  local step_size_neg = (lr / (1 - torch.pow(beta1, step))):neg()
  local bias_correction2_sqrt = (1 - torch.pow(beta2, step)):sqrt()
  local v = s.exp_avg_sq
  if group.amsgrad then
    torch.maximum(s.max_exp_avg_sq, s.exp_avg_sq, {out = s.max_exp_avg_sq})
    v = s.max_exp_avg_sq
  end
  local denom = (v:sqrt() / (bias_correction2_sqrt * step_size_neg)):add_(group.eps / step_size_neg)
  p:addcdiv_(s.exp_avg, denom)
end

function Adam:update(p, g, s, group)
  if group.capturable then return adam_capturable_step(self, p, g, s, group) end
  if s.step == nil then
    s.step = new_step_count()
    s.exp_avg = torch.zeros_like(p)
    s.exp_avg_sq = torch.zeros_like(p)
  end
  if group.amsgrad and s.max_exp_avg_sq == nil then s.max_exp_avg_sq = torch.zeros_like(p) end
  torch._adam_step_(p, g, s.exp_avg, s.exp_avg_sq, group.amsgrad and s.max_exp_avg_sq or nil,
    {lr = group.lr, beta1 = group.betas[1], beta2 = group.betas[2], eps = group.eps,
     weight_decay = group.weight_decay, step = s.step, amsgrad = group.amsgrad, maximize = group.maximize,
     decoupled_weight_decay = self.decoupled_weight_decay})
end

-- AdamW: Adam with the weight decay applied to the parameter (default 1e-2).
local AdamW = Adam:extend("AdamW")
optim.AdamW = AdamW
AdamW.flags = {foreach = true, capturable = true}
AdamW.defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 1e-2, amsgrad = false, maximize = false}
AdamW.decoupled_weight_decay = true

local RMSprop = Optimizer:extend("RMSprop")
optim.RMSprop = RMSprop
RMSprop.flags = {foreach = true, differentiable = true}
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

RMSprop.state_numbers = {}
RMSprop.step_tensor = true

function RMSprop:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.square_avg = torch.zeros_like(p)
  end
  local with_momentum = group.momentum > 0
  if with_momentum and s.momentum_buffer == nil then s.momentum_buffer = torch.zeros_like(p) end
  if group.centered and s.grad_avg == nil then s.grad_avg = torch.zeros_like(p) end
  torch._rmsprop_step_(p, g, s.square_avg, with_momentum and s.momentum_buffer or nil,
    group.centered and s.grad_avg or nil,
    {lr = group.lr, alpha = group.alpha, eps = group.eps, weight_decay = group.weight_decay,
     momentum = group.momentum, centered = group.centered, maximize = group.maximize, step = s.step})
end

-- The optimizers below step with tensor operations in the order of PyTorch 1.13's
-- single-tensor loops (torch/optim/*.py), so float64 results agree to the last bit; the
-- comments name the PyTorch expression each line reproduces. Adagrad, Adamax, NAdam and
-- RAdam step with fused kernels (torch._adagrad_step_, _adamax_step_, _nadam_step_,
-- _radam_step_) that compute, element by element, what their tensor ops computed, to the bit
-- on every dtype (tensor/ops/optim_update.hpp: each intermediate rounded to the parameter's
-- dtype, no fused multiply-add); what PyTorch computes in Python floats from the count (step
-- = step_t.item(): bias corrections, step sizes, NAdam's momentum schedule, RAdam's rho_t
-- and rectification, Adagrad's decayed rate) they compute in float64 from the step count
-- tensor, which they advance themselves (and NAdam's mu_product tensor with it), so a step
-- reads no tensor into Lua and changes no Lua value, and a compiled step replays.

-- The gradient as the update sees it: negated under maximize, plus weight_decay * param.
local function effective_grad(p, g, group)
  if group.maximize then g = g:neg() end
  if group.weight_decay ~= 0 then g = g:add(p, {alpha = group.weight_decay}) end
  return g
end

-- state.addcmul_(a, b, value=v): state + v * a * b, evaluated as (v * a) * b.
local function addcmul_(t, a, b, v) return t:add_(a:mul(v):mul_(b)) end

local function check_interval(name, v, key, lo, hi)
  local x = v[key]
  check_number(name, key, x)
  if not (x >= lo and x <= hi) then
    fail(name .. ": invalid " .. key .. " " .. tostring(x) .. " (must be in [" .. lo .. ", " .. hi .. "])")
  end
end

-- Adagrad: divides by the root of the running sum of squared gradients.
local Adagrad = Optimizer:extend("Adagrad")
optim.Adagrad = Adagrad
Adagrad.flags = {foreach = true}
Adagrad.defaults = {lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10,
                    maximize = false}
Adagrad.required = {}

function Adagrad:validate(v)
  for _, key in ipairs{"lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"} do
    at_least_zero(self.name, v, key)
  end
end

Adagrad.state_numbers = {}
Adagrad.step_tensor = true

-- clr = lr / (1 + (step - 1) * lr_decay), from the count before it advances;
-- sum.addcmul_(grad, grad, value=1); param.addcdiv_(grad, sum.sqrt().add_(eps), value=-clr).
function Adagrad:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.sum = torch.full_like(p, group.initial_accumulator_value)
  end
  torch._adagrad_step_(p, g, s.sum, {lr = group.lr, lr_decay = group.lr_decay, weight_decay = group.weight_decay,
    eps = group.eps, maximize = group.maximize, step = s.step})
end

-- Adadelta: steps by the ratio of running roots of squared updates and squared gradients.
local Adadelta = Optimizer:extend("Adadelta")
optim.Adadelta = Adadelta
Adadelta.flags = {foreach = true}
Adadelta.defaults = {lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false}
Adadelta.required = {}

function Adadelta:validate(v)
  at_least_zero(self.name, v, "lr")
  check_interval(self.name, v, "rho", 0, 1)
  at_least_zero(self.name, v, "eps")
  at_least_zero(self.name, v, "weight_decay")
end

Adadelta.state_numbers = {}
Adadelta.step_tensor = true

function Adadelta:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.square_avg = torch.zeros_like(p)
    s.acc_delta = torch.zeros_like(p)
  end
  local rho, eps = group.rho, group.eps
  g = effective_grad(p, g, group)
  addcmul_(s.square_avg:mul_(rho), g, g, 1 - rho)
  local std = s.square_avg:add(eps):sqrt_()
  local delta = s.acc_delta:add(eps):sqrt_():div_(std):mul_(g)
  addcmul_(s.acc_delta:mul_(rho), delta, delta, 1 - rho)
  p:add_(delta, {alpha = -group.lr})
  s.step:add_(1)
end

-- Adamax: Adam with the infinity norm of the gradients in the denominator.
local Adamax = Optimizer:extend("Adamax")
optim.Adamax = Adamax
Adamax.flags = {foreach = true}
Adamax.defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, maximize = false}
Adamax.required = {}

function Adamax:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  check_betas(self.name, v)
  at_least_zero(self.name, v, "weight_decay")
end

Adamax.state_numbers = {}
Adamax.step_tensor = true

-- exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1); exp_inf = amax(cat(exp_inf * beta2,
-- |grad| + eps)) (the larger, NaN if either is); clr = lr / (1 - beta1 ** step);
-- param.addcdiv_(exp_avg, exp_inf, value=-clr).
function Adamax:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.exp_avg = torch.zeros_like(p)
    s.exp_inf = torch.zeros_like(p)
  end
  torch._adamax_step_(p, g, s.exp_avg, s.exp_inf, {lr = group.lr, beta1 = group.betas[1], beta2 = group.betas[2],
    eps = group.eps, weight_decay = group.weight_decay, maximize = group.maximize, step = s.step})
end

-- NAdam: Adam with Nesterov momentum and the momentum schedule of Dozat (2016).
local NAdam = Optimizer:extend("NAdam")
optim.NAdam = NAdam
NAdam.flags = {foreach = true}
NAdam.defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3}
NAdam.required = {}
NAdam.state_numbers = {}
NAdam.step_tensor = true
NAdam.state_scalars = {mu_product = true}

function NAdam:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  check_betas(self.name, v)
  at_least_zero(self.name, v, "weight_decay")
  at_least_zero(self.name, v, "momentum_decay")
end

-- mu = beta1 * (1 - 0.5 * 0.96 ** (step * momentum_decay)), mu_next at step + 1;
-- mu_product *= mu; mu_product_next = mu_product * mu * mu_next (PyTorch 1.13's); exp_avg
-- and exp_avg_sq as Adam's; denom = (exp_avg_sq / (1 - beta2 ** step)).sqrt() + eps;
-- param.addcdiv_(grad, denom, value=-lr * (1 - mu) / (1 - mu_product));
-- param.addcdiv_(exp_avg, denom, value=-lr * mu_next / (1 - mu_product_next)). mu_product is
-- a zero-dim tensor of the step count's dtype (PyTorch's state tensor, float32 under the
-- default dtype, whatever the parameters' dtype): mu and mu_next are rounded to it before
-- they multiply it, as PyTorch's mu_product *= mu does with a Python float.
function NAdam:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.mu_product = new_step_count(1)
    s.exp_avg = torch.zeros_like(p)
    s.exp_avg_sq = torch.zeros_like(p)
  end
  torch._nadam_step_(p, g, s.exp_avg, s.exp_avg_sq, s.mu_product, {lr = group.lr, beta1 = group.betas[1],
    beta2 = group.betas[2], eps = group.eps, weight_decay = group.weight_decay,
    momentum_decay = group.momentum_decay, step = s.step})
end

-- RAdam: Adam whose adaptive step is switched on, rectified, once the variance estimate is
-- tractable (rho_t > 5); plain momentum steps before that. The fused step computes rho_t
-- from the count and picks the branch itself (no value is read into Lua, so a compiled step
-- replays on either side of the switch).
local RAdam = Optimizer:extend("RAdam")
optim.RAdam = RAdam
RAdam.flags = {foreach = true}
RAdam.defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0}
RAdam.required = {}

function RAdam:validate(v)
  at_least_zero(self.name, v, "lr")
  at_least_zero(self.name, v, "eps")
  check_betas(self.name, v)
  at_least_zero(self.name, v, "weight_decay")
end

RAdam.state_numbers = {}
RAdam.step_tensor = true

-- exp_avg and exp_avg_sq as Adam's; bias_corrected_exp_avg = exp_avg / (1 - beta1 ** step);
-- rho_inf = 2 / (1 - beta2) - 1; rho_t = rho_inf - 2 * step * beta2 ** step / (1 - beta2 **
-- step); rho_t > 5: rect = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) *
-- (rho_inf - 2) * rho_t)), adaptive_lr = exp_avg_sq.sqrt().add_(eps).reciprocal() *
-- sqrt(1 - beta2 ** step), param -= bias_corrected_exp_avg * lr * adaptive_lr * rect; else
-- param -= bias_corrected_exp_avg * lr.
function RAdam:update(p, g, s, group)
  if s.step == nil then
    s.step = new_step_count()
    s.exp_avg = torch.zeros_like(p)
    s.exp_avg_sq = torch.zeros_like(p)
  end
  torch._radam_step_(p, g, s.exp_avg, s.exp_avg_sq, {lr = group.lr, beta1 = group.betas[1], beta2 = group.betas[2],
    eps = group.eps, weight_decay = group.weight_decay, step = s.step})
end

-- LBFGS (PyTorch 1.13's port of minFunc): step(closure) runs up to max_iter quasi-Newton
-- iterations over all parameters as one flat vector, with a fixed step (lr) or the
-- strong-Wolfe line search. One parameter group only.
local LBFGS = Optimizer:extend("LBFGS")
optim.LBFGS = LBFGS
LBFGS.defaults = {lr = 1, max_iter = 20, tolerance_grad = 1e-7, tolerance_change = 1e-9, history_size = 100}
LBFGS.required = {}

function LBFGS:init(params, opts)
  opts = options(self.name, opts)
  torch._check_keywords(self.name, opts, {"history_size", "line_search_fn", "lr", "max_eval", "max_iter",
                                          "tolerance_change", "tolerance_grad"})
  local rest = {}
  for k, v in pairs(opts) do
    if k ~= "max_eval" and k ~= "line_search_fn" then rest[k] = v end
  end
  Optimizer.init(self, params, rest)
  if #self.param_groups ~= 1 then fail(self.name .. ": doesn't support per-parameter options (parameter groups)") end
  local group = self.param_groups[1]
  group.max_eval = opts.max_eval or group.max_iter * 5 // 4
  group.line_search_fn = opts.line_search_fn
  self:validate(group)
  self.defaults.max_eval, self.defaults.line_search_fn = group.max_eval, group.line_search_fn
end

function LBFGS:validate(v)
  at_least_zero(self.name, v, "lr")
  for _, key in ipairs{"max_iter", "history_size", "max_eval"} do
    local x = v[key]
    if x ~= nil and (math.type(x) ~= "integer" or x < 1) then
      fail(self.name .. ": " .. key .. " must be an integer >= 1, got " .. tostring(x))
    end
  end
  at_least_zero(self.name, v, "tolerance_grad")
  at_least_zero(self.name, v, "tolerance_change")
  local ls = v.line_search_fn
  if ls ~= nil and ls ~= "strong_wolfe" then
    fail(self.name .. ": line_search_fn must be nil or 'strong_wolfe', got " .. tostring(ls))
  end
end

function LBFGS:add_param_group(group)
  if #self.param_groups > 0 then fail(self.name .. ": doesn't support per-parameter options (parameter groups)") end
  Optimizer.add_param_group(self, group)
end

-- Runs the closure with grad mode on; its loss as a number (float(closure())).
local function lbfgs_loss(self, closure)
  local loss = torch.enable_grad(closure)
  if is_tensor(loss) then return loss:item(), loss end
  if type(loss) ~= "number" then
    fail(self.name .. ".step: the closure must return the loss (a tensor or a number), got a " .. describe(loss))
  end
  return loss, loss
end

-- The gradients of all parameters as one flat vector (zeros for a parameter without one).
local function lbfgs_gather_flat_grad(self)
  local views = {}
  for i, p in ipairs(self.param_groups[1].params) do
    local g = p.grad
    views[i] = g == nil and torch.zeros({p:numel()}, {dtype = p.dtype, device = p.device}) or g:reshape(-1)
  end
  return torch.cat(views, 1)
end

-- params += step_size * update, the flat update cut into the parameters' shapes.
local function lbfgs_add_grad(self, step_size, update)
  local offset = 0
  for _, p in ipairs(self.param_groups[1].params) do
    local n = p:numel()
    p:add_(update:narrow(1, offset + 1, n):view_as(p), {alpha = step_size})
    offset = offset + n
  end
end

-- Loss and flat gradient at x + t * d, the parameters restored to x afterwards.
local function lbfgs_directional_evaluate(self, closure, x, t, d)
  lbfgs_add_grad(self, t, d)
  local loss = lbfgs_loss(self, closure)
  local flat_grad = lbfgs_gather_flat_grad(self)
  for i, p in ipairs(self.param_groups[1].params) do p:copy_(x[i]) end
  return loss, flat_grad
end


-- Restores a state_dict(): the group's options by the common path, the history (numbers,
-- flat vectors and lists of them, kept with the first parameter) copied here.
function LBFGS:load_state_dict(sd)
  local op = self.name .. ".load_state_dict"
  if type(sd) ~= "table" or type(sd.state) ~= "table" then fail(op .. ": expected a table {state=..., param_groups=...}") end
  Optimizer.load_state_dict(self, {param_groups = sd.param_groups, state = {}})
  local saved = sd.state[1]
  if saved == nil then return end
  local n = 0
  for _, p in ipairs(self.param_groups[1].params) do n = n + p:numel() end
  local function copy(k, v)
    if type(v) == "number" then return v end
    if is_tensor(v) then
      if v:dim() ~= 1 or v:numel() ~= n then
        fail(op .. ": state '" .. k .. "' must be a flat vector of " .. n .. " elements")
      end
      return v:clone()
    end
    if type(v) == "table" then
      local c = {}
      for i, x in ipairs(v) do c[i] = copy(k, x) end
      return c
    end
    fail(op .. ": state '" .. tostring(k) .. "' is a " .. describe(v) .. ", expected numbers or tensors")
  end
  local state = {}
  for k, v in pairs(saved) do state[k] = copy(k, v) end
  self.state = {[self.param_groups[1].params[1]] = state}
end

-- The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to the bounds.
local function cubic_interpolate(x1, f1, g1, x2, f2, g2, lo, hi)
  if lo == nil then lo, hi = math.min(x1, x2), math.max(x1, x2) end
  local d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
  local d2_square = d1 ^ 2 - g1 * g2
  if d2_square >= 0 then
    local d2 = math.sqrt(d2_square)
    local min_pos
    if x1 <= x2 then
      min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else
      min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    end
    return math.min(math.max(min_pos, lo), hi)
  end
  return (lo + hi) / 2
end

-- The strong-Wolfe line search along d from the parameters x (loss f, gradient g, slope
-- gtd), starting at step t: returns the loss, gradient, step and number of evaluations.
local function strong_wolfe(obj_func, x, t, d, f, g, gtd)
  local c1, c2, tolerance_change, max_ls = 1e-4, 0.9, 1e-9, 25
  local d_norm = d:abs():max():item()
  g = g:clone()
  local f_new, g_new = obj_func(x, t, d)
  local ls_func_evals = 1
  local gtd_new = g_new:dot(d):item()
  local t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
  local done = false
  local ls_iter = 0
  local bracket, bracket_f, bracket_g, bracket_gtd
  while ls_iter < max_ls do
    if f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev) then
      bracket, bracket_f = {t_prev, t}, {f_prev, f_new}
      bracket_g, bracket_gtd = {g_prev, g_new:clone()}, {gtd_prev, gtd_new}
      break
    end
    if math.abs(gtd_new) <= -c2 * gtd then
      bracket, bracket_f, bracket_g = {t}, {f_new}, {g_new}
      done = true
      break
    end
    if gtd_new >= 0 then
      bracket, bracket_f = {t_prev, t}, {f_prev, f_new}
      bracket_g, bracket_gtd = {g_prev, g_new:clone()}, {gtd_prev, gtd_new}
      break
    end
    local min_step = t + 0.01 * (t - t_prev)
    local max_step = t * 10
    local tmp = t
    t = cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, min_step, max_step)
    t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new:clone(), gtd_new
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = ls_func_evals + 1
    gtd_new = g_new:dot(d):item()
    ls_iter = ls_iter + 1
  end
  if ls_iter == max_ls then
    bracket, bracket_f, bracket_g = {0, t}, {f, f_new}, {g, g_new}
  end
  -- Zoom: shrink the bracket until a point satisfies the conditions.
  local insuf_progress = false
  local low, high = 1, 2
  if bracket_f[1] > bracket_f[#bracket_f] then low, high = 2, 1 end
  while not done and ls_iter < max_ls do
    if math.abs(bracket[2] - bracket[1]) * d_norm < tolerance_change then break end
    t = cubic_interpolate(bracket[1], bracket_f[1], bracket_gtd[1], bracket[2], bracket_f[2], bracket_gtd[2])
    local bmax, bmin = math.max(bracket[1], bracket[2]), math.min(bracket[1], bracket[2])
    local eps = 0.1 * (bmax - bmin)
    if math.min(bmax - t, t - bmin) < eps then
      if insuf_progress or t >= bmax or t <= bmin then
        if math.abs(t - bmax) < math.abs(t - bmin) then t = bmax - eps else t = bmin + eps end
        insuf_progress = false
      else
        insuf_progress = true
      end
    else
      insuf_progress = false
    end
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = ls_func_evals + 1
    gtd_new = g_new:dot(d):item()
    ls_iter = ls_iter + 1
    if f_new > f + c1 * t * gtd or f_new >= bracket_f[low] then
      bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new:clone(), gtd_new
      if bracket_f[1] <= bracket_f[2] then low, high = 1, 2 else low, high = 2, 1 end
    else
      if math.abs(gtd_new) <= -c2 * gtd then
        done = true
      elseif gtd_new * (bracket[high] - bracket[low]) >= 0 then
        bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] =
          bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low]
      end
      bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new:clone(), gtd_new
    end
  end
  return bracket_f[low], bracket_g[low], bracket[low], ls_func_evals
end

-- One LBFGS step: the closure (required) re-evaluates the loss and gradients; returns the
-- loss of the first evaluation. The history lives in the state of the first parameter.
function LBFGS:step(closure)
  if type(closure) ~= "function" then
    fail(self.name .. ".step: LBFGS needs a closure that re-evaluates the model and returns the loss, got a "
      .. describe(closure))
  end
  local _ <close> = torch.no_grad()
  local group = self.param_groups[1]
  self:validate(group)
  local params = group.params
  local lr, max_iter, max_eval = group.lr, group.max_iter, group.max_eval
  local tolerance_grad, tolerance_change, history_size = group.tolerance_grad, group.tolerance_change, group.history_size
  local state = self.state[params[1]]
  if state == nil then
    state = {func_evals = 0, n_iter = 0}
    self.state[params[1]] = state
  end
  local loss, orig_loss = lbfgs_loss(self, closure)
  local current_evals = 1
  state.func_evals = state.func_evals + 1
  local flat_grad = lbfgs_gather_flat_grad(self)
  if flat_grad:abs():max():item() <= tolerance_grad then return orig_loss end

  local d, t, old_dirs, old_stps, ro = state.d, state.t, state.old_dirs, state.old_stps, state.ro
  local H_diag, prev_flat_grad, prev_loss = state.H_diag, state.prev_flat_grad, state.prev_loss
  local n_iter = 0
  while n_iter < max_iter do
    n_iter = n_iter + 1
    state.n_iter = state.n_iter + 1
    if state.n_iter == 1 then
      d = flat_grad:neg()
      old_dirs, old_stps, ro = {}, {}, {}
      H_diag = 1
    else
      -- Update the memory with the last step s and change of gradient y.
      local y = flat_grad:sub(prev_flat_grad)
      local s = d:mul(t)
      local ys = y:dot(s):item()
      if ys > 1e-10 then
        if #old_dirs == history_size then
          table.remove(old_dirs, 1)
          table.remove(old_stps, 1)
          table.remove(ro, 1)
        end
        old_dirs[#old_dirs + 1], old_stps[#old_stps + 1], ro[#ro + 1] = y, s, 1 / ys
        H_diag = ys / y:dot(y):item()
      end
      -- The two-loop recursion: d = -H * g.
      local al = {}
      local q = flat_grad:neg()
      for i = #old_dirs, 1, -1 do
        al[i] = old_stps[i]:dot(q):item() * ro[i]
        q:add_(old_dirs[i], {alpha = -al[i]})
      end
      d = q:mul(H_diag)
      for i = 1, #old_dirs do
        local be_i = old_dirs[i]:dot(d):item() * ro[i]
        d:add_(old_stps[i], {alpha = al[i] - be_i})
      end
    end
    if prev_flat_grad == nil then prev_flat_grad = flat_grad:clone() else prev_flat_grad:copy_(flat_grad) end
    prev_loss = loss
    if state.n_iter == 1 then
      t = math.min(1, 1 / flat_grad:abs():sum():item()) * lr
    else
      t = lr
    end
    local gtd = flat_grad:dot(d):item()
    if gtd > -tolerance_change then break end

    local ls_func_evals = 0
    local opt_cond
    if group.line_search_fn == "strong_wolfe" then
      local x_init = {}
      for i, p in ipairs(params) do x_init[i] = p:clone() end
      local function obj_func(x, step, dir) return lbfgs_directional_evaluate(self, closure, x, step, dir) end
      loss, flat_grad, t, ls_func_evals = strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd)
      lbfgs_add_grad(self, t, d)
      opt_cond = flat_grad:abs():max():item() <= tolerance_grad
    else
      lbfgs_add_grad(self, t, d)
      if n_iter ~= max_iter then
        loss = lbfgs_loss(self, closure)
        flat_grad = lbfgs_gather_flat_grad(self)
        opt_cond = flat_grad:abs():max():item() <= tolerance_grad
        ls_func_evals = 1
      end
    end
    current_evals = current_evals + ls_func_evals
    state.func_evals = state.func_evals + ls_func_evals
    if n_iter == max_iter or current_evals >= max_eval or opt_cond then break end
    if d:mul(t):abs():max():item() <= tolerance_change then break end
    if math.abs(loss - prev_loss) < tolerance_change then break end
  end
  state.d, state.t, state.old_dirs, state.old_stps, state.ro = d, t, old_dirs, old_stps, ro
  state.H_diag, state.prev_flat_grad, state.prev_loss = H_diag, prev_flat_grad, prev_loss
  return orig_loss
end

-- ---------------------------------------------------------------------------------------
-- Learning-rate schedulers (torch.optim.lr_scheduler, PyTorch 1.13): each step() sets every
-- group's lr from get_lr(), PyTorch's recurrences; step(epoch) uses the closed form.

local lr_scheduler = {}
optim.lr_scheduler = lr_scheduler

local LRScheduler = class("LRScheduler")
lr_scheduler.LRScheduler = LRScheduler

-- A scheduler's verbose option: false when absent, else a boolean.
local function verbose_option(name, v)
  if v ~= nil and type(v) ~= "boolean" then fail(name .. ": verbose must be a boolean, got " .. describe(v)) end
  return v or false
end

-- verbose: print each lr the scheduler sets, in PyTorch's words (with tide's 1-based group
-- numbers).
function LRScheduler:init(optimizer, last_epoch, verbose)
  local name = self.name
  self.verbose = verbose_option(name, verbose)
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
    values = self.closed_form_lr and self:closed_form_lr() or self:get_lr()
  end
  self._last_lr = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    group.lr = values[i]
    self._last_lr[i] = values[i]
    self:print_lr(i, values[i], epoch)
  end
end

-- With verbose, prints the lr just set for group i (PyTorch's print_lr; epoch is the one
-- given to step, if any: "%05d" for an integer, "%.2f" otherwise).
function LRScheduler:print_lr(i, lr, epoch)
  if not self.verbose then return end
  if epoch == nil then
    print(string.format("Adjusting learning rate of group %d to %.4e.", i, lr))
  else
    local e = math.type(epoch) == "integer" and string.format("%05d", epoch) or string.format("%.2f", epoch)
    print(string.format("Epoch %s: adjusting learning rate of group %d to %.4e.", e, i, lr))
  end
end

-- The learning rates the last step set, one per group.
function LRScheduler:get_last_lr()
  local c = {}
  for i, v in ipairs(self._last_lr) do c[i] = v end
  return c
end

-- A copy of a value whose tables (lists of numbers, milestone counts) are copied too.
local function deep_copy(v)
  if type(v) ~= "table" or is_tensor(v) then return v end
  local c = {}
  for k, x in pairs(v) do c[k] = deep_copy(x) end
  return c
end

-- Fields a state dict leaves out: the optimizer, the user's functions (as PyTorch does for
-- plain functions) and the chained schedulers (saved by their own state_dict).
local not_saved = {optimizer = true, _schedulers = true}

-- The scheduler's state: every field but the optimizer and functions, as copies; the
-- schedulers inside SequentialLR and ChainedScheduler as their own state dicts.
function LRScheduler:state_dict()
  local sd = {}
  for k, v in pairs(self) do
    if not not_saved[k] and type(v) ~= "function" and not (type(v) == "table" and type(v[1]) == "function") then
      sd[k] = deep_copy(v)
    end
  end
  if self._schedulers then
    sd._schedulers = {}
    for i, sched in ipairs(self._schedulers) do sd._schedulers[i] = sched:state_dict() end
  end
  return sd
end

-- Restores a state_dict() of a scheduler of the same kind (over the same optimizer).
function LRScheduler:load_state_dict(sd)
  local op = self.name .. ".load_state_dict"
  if type(sd) ~= "table" or is_tensor(sd) then fail(op .. ": expected a table from state_dict(), got a " .. describe(sd)) end
  for k, v in pairs(sd) do
    if type(k) ~= "string" or not_saved[k] and k ~= "_schedulers" then
      fail(op .. ": unexpected entry " .. tostring(k))
    end
    local mine = rawget(self, k)
    if type(mine) ~= type(v) or type(mine) == "function" then
      fail(op .. ": entry '" .. k .. "' is a " .. describe(v) .. ", which this " .. self.name .. " does not have")
    end
  end
  if sd._schedulers then
    if #sd._schedulers ~= #self._schedulers then
      fail(op .. ": the state dict has " .. #sd._schedulers .. " schedulers, this one " .. #self._schedulers)
    end
    for i, sched in ipairs(self._schedulers) do sched:load_state_dict(sd._schedulers[i]) end
  end
  for k, v in pairs(sd) do
    if k ~= "_schedulers" then self[k] = deep_copy(v) end
  end
end

-- StepLR: multiplies the lr by gamma every step_size epochs.
local StepLR = LRScheduler:extend("StepLR")
lr_scheduler.StepLR = StepLR

function StepLR:init(optimizer, opts)
  opts = torch._check_keywords("StepLR", options("StepLR", opts), {"step_size", "gamma", "last_epoch", "verbose"})
  local step_size, gamma = opts.step_size, opts.gamma or 0.1
  if math.type(step_size) ~= "integer" or step_size < 1 then
    fail("StepLR: step_size must be a positive integer, got " .. tostring(step_size))
  end
  check_number("StepLR", "gamma", gamma)
  self.step_size, self.gamma = step_size, gamma
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
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
  opts = torch._check_keywords("CosineAnnealingLR", options("CosineAnnealingLR", opts), {"T_max", "eta_min", "last_epoch", "verbose"})
  local T_max, eta_min = opts.T_max, opts.eta_min or 0
  if type(T_max) ~= "number" or not (T_max > 0) then
    fail("CosineAnnealingLR: T_max must be a number > 0, got " .. tostring(T_max))
  end
  check_number("CosineAnnealingLR", "eta_min", eta_min)
  self.T_max, self.eta_min = T_max, eta_min
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
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

-- Options of a scheduler: a keyword table checked against `valid` (last_epoch is added).
local function sched_options(name, opts, valid)
  opts = options(name, opts)
  local all = {"last_epoch", "verbose"}
  for _, k in ipairs(valid) do all[#all + 1] = k end
  return torch._check_keywords(name, opts, all)
end

local function check_integer(name, key, v, min)
  if math.type(v) ~= "integer" or v < min then
    fail(name .. ": " .. key .. " must be an integer >= " .. min .. ", got " .. tostring(v))
  end
end

local function check_factor(name, key, v)
  check_number(name, key, v)
  if not (v >= 0 and v <= 1) then fail(name .. ": " .. key .. " must be in [0, 1], got " .. tostring(v)) end
end

-- One value per parameter group: a number for all, or a list of one per group.
local function per_group(name, key, optimizer, v)
  local n = #optimizer.param_groups
  if type(v) == "table" and not is_tensor(v) then
    if #v ~= n then fail(name .. ": expected " .. n .. " values for " .. key .. ", got " .. #v) end
    local c = {}
    for i = 1, n do check_number(name, key .. "[" .. i .. "]", v[i]) c[i] = v[i] end
    return c
  end
  check_number(name, key, v)
  local c = {}
  for i = 1, n do c[i] = v end
  return c
end

local function check_optimizer(name, optimizer)
  if type(optimizer) ~= "table" or type(optimizer.param_groups) ~= "table" then
    fail(name .. ": expected an optimizer, got a " .. describe(optimizer))
  end
end

-- The functions of LambdaLR and MultiplicativeLR: one for all groups or one per group.
local function lr_lambdas(name, optimizer, f)
  check_optimizer(name, optimizer)
  local n = #optimizer.param_groups
  local list = {}
  if type(f) == "table" then
    if #f ~= n then fail(name .. ": expected " .. n .. " lr_lambdas, but got " .. #f) end
    for i = 1, n do list[i] = f[i] end
  else
    for i = 1, n do list[i] = f end
  end
  for i = 1, n do
    if type(list[i]) ~= "function" then
      fail(name .. ": lr_lambda must be a function of the epoch (or a list of them), got a " .. describe(list[i]))
    end
  end
  return list
end

-- The factor a user function returned, checked.
local function lambda_value(name, v, epoch)
  if type(v) ~= "number" then
    fail(name .. ": lr_lambda(" .. epoch .. ") must return a number, got a " .. describe(v))
  end
  return v
end

-- LambdaLR: lr = initial lr * lr_lambda(epoch).
local LambdaLR = LRScheduler:extend("LambdaLR")
lr_scheduler.LambdaLR = LambdaLR

function LambdaLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"lr_lambda"})
  self.lr_lambdas = lr_lambdas(self.name, optimizer, opts.lr_lambda)
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function LambdaLR:get_lr()
  local lrs, e = {}, self.last_epoch
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * lambda_value(self.name, self.lr_lambdas[i](e), e) end
  return lrs
end

-- MultiplicativeLR: multiplies the lr by lr_lambda(epoch) every epoch.
local MultiplicativeLR = LRScheduler:extend("MultiplicativeLR")
lr_scheduler.MultiplicativeLR = MultiplicativeLR
MultiplicativeLR.init = LambdaLR.init

function MultiplicativeLR:get_lr()
  local lrs, e = {}, self.last_epoch
  for i, group in ipairs(self.optimizer.param_groups) do
    lrs[i] = e > 0 and group.lr * lambda_value(self.name, self.lr_lambdas[i](e), e) or group.lr
  end
  return lrs
end

-- MultiStepLR: multiplies the lr by gamma at each milestone (by gamma^k for a milestone
-- listed k times).
local MultiStepLR = LRScheduler:extend("MultiStepLR")
lr_scheduler.MultiStepLR = MultiStepLR

function MultiStepLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"milestones", "gamma"})
  local milestones, gamma = opts.milestones, opts.gamma or 0.1
  if type(milestones) ~= "table" or is_tensor(milestones) then
    fail(self.name .. ": milestones must be a list of epochs, got a " .. describe(milestones))
  end
  self.milestones = {}
  for i, m in ipairs(milestones) do
    check_integer(self.name, "milestones[" .. i .. "]", m, 0)
    self.milestones[#self.milestones + 1] = m
  end
  table.sort(self.milestones)
  check_number(self.name, "gamma", gamma)
  self.gamma = gamma
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function MultiStepLR:get_lr()
  local count = 0
  for _, m in ipairs(self.milestones) do
    if m == self.last_epoch then count = count + 1 end
  end
  local lrs = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    lrs[i] = count == 0 and group.lr or group.lr * self.gamma ^ count
  end
  return lrs
end

function MultiStepLR:closed_form_lr()
  local passed = 0
  for _, m in ipairs(self.milestones) do
    if m <= self.last_epoch then passed = passed + 1 end
  end
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ passed end
  return lrs
end

-- ConstantLR: the lr times factor until epoch total_iters, then the lr.
local ConstantLR = LRScheduler:extend("ConstantLR")
lr_scheduler.ConstantLR = ConstantLR

function ConstantLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"factor", "total_iters"})
  local factor, total_iters = opts.factor or 1 / 3, opts.total_iters or 5
  check_factor(self.name, "factor", factor)
  check_integer(self.name, "total_iters", total_iters, 0)
  self.factor, self.total_iters = factor, total_iters
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function ConstantLR:get_lr()
  local lrs, e = {}, self.last_epoch
  for i, group in ipairs(self.optimizer.param_groups) do
    if e == 0 then
      lrs[i] = group.lr * self.factor
    elseif e ~= self.total_iters then
      lrs[i] = group.lr
    else
      lrs[i] = group.lr * (1 / self.factor)
    end
  end
  return lrs
end

function ConstantLR:closed_form_lr()
  local lrs = {}
  local f = self.factor + (self.last_epoch >= self.total_iters and 1 - self.factor or 0)
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * f end
  return lrs
end

-- LinearLR: the factor goes linearly from start_factor to end_factor over total_iters epochs.
local LinearLR = LRScheduler:extend("LinearLR")
lr_scheduler.LinearLR = LinearLR

function LinearLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"start_factor", "end_factor", "total_iters"})
  local sf, ef, total_iters = opts.start_factor or 1 / 3, opts.end_factor or 1.0, opts.total_iters or 5
  check_factor(self.name, "start_factor", sf)
  check_factor(self.name, "end_factor", ef)
  check_integer(self.name, "total_iters", total_iters, 1)
  self.start_factor, self.end_factor, self.total_iters = sf, ef, total_iters
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function LinearLR:get_lr()
  local lrs, e = {}, self.last_epoch
  local sf, ef = self.start_factor, self.end_factor
  for i, group in ipairs(self.optimizer.param_groups) do
    if e == 0 then
      lrs[i] = group.lr * sf
    elseif e > self.total_iters then
      lrs[i] = group.lr
    else
      lrs[i] = group.lr * (1 + (ef - sf) / (self.total_iters * sf + (e - 1) * (ef - sf)))
    end
  end
  return lrs
end

function LinearLR:closed_form_lr()
  local lrs = {}
  local sf, ef = self.start_factor, self.end_factor
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = base * (sf + (ef - sf) * math.min(self.total_iters, self.last_epoch) / self.total_iters)
  end
  return lrs
end

-- ExponentialLR: multiplies the lr by gamma every epoch.
local ExponentialLR = LRScheduler:extend("ExponentialLR")
lr_scheduler.ExponentialLR = ExponentialLR

function ExponentialLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"gamma"})
  check_number(self.name, "gamma", opts.gamma)
  self.gamma = opts.gamma
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function ExponentialLR:get_lr()
  local lrs = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    lrs[i] = self.last_epoch == 0 and group.lr or group.lr * self.gamma
  end
  return lrs
end

function ExponentialLR:closed_form_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do lrs[i] = base * self.gamma ^ self.last_epoch end
  return lrs
end

-- The schedulers given to SequentialLR and ChainedScheduler, all over one optimizer.
local function check_schedulers(name, schedulers, optimizer)
  if type(schedulers) ~= "table" or is_tensor(schedulers) or #schedulers == 0 then
    fail(name .. ": schedulers must be a non-empty list of schedulers, got " .. describe(schedulers))
  end
  for i, sched in ipairs(schedulers) do
    if type(sched) ~= "table" or getmetatable(sched) == nil or type(sched.step) ~= "function" then
      fail(name .. ": schedulers[" .. i .. "] is a " .. describe(sched) .. ", not a scheduler")
    end
    if sched.optimizer ~= (optimizer or schedulers[1].optimizer) then
      fail(name .. ": all schedulers must belong to the same optimizer, but schedulers[" .. i .. "] does not")
    end
  end
  local list = {}
  for i, sched in ipairs(schedulers) do list[i] = sched end
  return list
end

-- SequentialLR: runs schedulers[1] until milestones[1], then schedulers[2], ... each
-- restarted (at epoch 0) at its milestone.
local SequentialLR = LRScheduler:extend("SequentialLR")
lr_scheduler.SequentialLR = SequentialLR

function SequentialLR:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"schedulers", "milestones"})
  check_optimizer(self.name, optimizer)
  local schedulers = check_schedulers(self.name, opts.schedulers, optimizer)
  local milestones = opts.milestones
  if type(milestones) ~= "table" or #milestones ~= #schedulers - 1 then
    fail(self.name .. ": expects one milestone fewer than schedulers, got " .. #schedulers .. " schedulers and "
      .. (type(milestones) == "table" and #milestones or describe(milestones)) .. " milestones")
  end
  self._milestones = {}
  for i, m in ipairs(milestones) do
    check_integer(self.name, "milestones[" .. i .. "]", m, 0)
    self._milestones[i] = m
  end
  local last_epoch = opts.last_epoch or -1
  check_integer(self.name, "last_epoch", last_epoch, -1)
  -- verbose is checked and kept, and prints nothing: PyTorch 1.13's SequentialLR documents it
  -- as "does nothing" (its schedulers print if they were made verbose).
  self.verbose = verbose_option(self.name, opts.verbose)
  self._schedulers = schedulers
  self.last_epoch = last_epoch + 1
  self.optimizer = optimizer
  for _, group in ipairs(optimizer.param_groups) do group.lr = group.initial_lr end
  for _, sched in ipairs(schedulers) do sched.last_epoch = sched.last_epoch - 1 end
  schedulers[1]._step_count = 0
  schedulers[1]:step()
  self._last_lr = schedulers[1]:get_last_lr()
end

function SequentialLR:step()
  self.last_epoch = self.last_epoch + 1
  local idx = 1
  while idx <= #self._milestones and self._milestones[idx] <= self.last_epoch do idx = idx + 1 end
  local sched = self._schedulers[idx]
  if idx > 1 and self._milestones[idx - 1] == self.last_epoch then sched:step(0) else sched:step() end
  self._last_lr = sched:get_last_lr()
end

-- ChainedScheduler: steps every scheduler in the list at each step.
local ChainedScheduler = LRScheduler:extend("ChainedScheduler")
lr_scheduler.ChainedScheduler = ChainedScheduler

function ChainedScheduler:init(schedulers)
  self._schedulers = check_schedulers(self.name, schedulers)
  self.optimizer = schedulers[1].optimizer
  self._last_lr = {}
  for i, group in ipairs(self.optimizer.param_groups) do self._last_lr[i] = group.lr end
end

function ChainedScheduler:step()
  for _, sched in ipairs(self._schedulers) do sched:step() end
  for i, group in ipairs(self.optimizer.param_groups) do self._last_lr[i] = group.lr end
end

-- The optimizer's momentum option the cycling schedulers move: betas[1] (Adam and kin) or
-- momentum; nil when it has neither.
local function momentum_key(optimizer)
  if optimizer.defaults.betas ~= nil then return "betas" end
  if optimizer.defaults.momentum ~= nil then return "momentum" end
end

local function set_momentum(group, key, m)
  if key == "betas" then group.betas = {m, group.betas[2]} else group.momentum = m end
end

-- OneCycleLR: the 1cycle policy: the lr rises from max_lr/div_factor to max_lr over
-- pct_start of total_steps, then falls to initial_lr/final_div_factor (three_phase: back to
-- the initial lr first); the momentum moves the opposite way.
local OneCycleLR = LRScheduler:extend("OneCycleLR")
lr_scheduler.OneCycleLR = OneCycleLR

function OneCycleLR:init(optimizer, opts)
  local name = self.name
  opts = sched_options(name, opts, {"max_lr", "total_steps", "epochs", "steps_per_epoch", "pct_start",
                                    "anneal_strategy", "cycle_momentum", "base_momentum", "max_momentum",
                                    "div_factor", "final_div_factor", "three_phase"})
  check_optimizer(name, optimizer)
  if opts.total_steps ~= nil then
    check_integer(name, "total_steps", opts.total_steps, 1)
    self.total_steps = opts.total_steps
  elseif opts.epochs ~= nil or opts.steps_per_epoch ~= nil then
    check_integer(name, "epochs", opts.epochs, 1)
    check_integer(name, "steps_per_epoch", opts.steps_per_epoch, 1)
    self.total_steps = opts.epochs * opts.steps_per_epoch
  else
    fail(name .. ": you must define either total_steps or (epochs and steps_per_epoch)")
  end
  local pct = opts.pct_start or 0.3
  check_factor(name, "pct_start", pct)
  local total = self.total_steps
  if opts.three_phase then
    self._schedule_phases = {
      {end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
       start_momentum = "max_momentum", end_momentum = "base_momentum"},
      {end_step = 2 * pct * total - 2, start_lr = "max_lr", end_lr = "initial_lr",
       start_momentum = "base_momentum", end_momentum = "max_momentum"},
      {end_step = total - 1, start_lr = "initial_lr", end_lr = "min_lr",
       start_momentum = "max_momentum", end_momentum = "max_momentum"},
    }
  else
    self._schedule_phases = {
      {end_step = pct * total - 1, start_lr = "initial_lr", end_lr = "max_lr",
       start_momentum = "max_momentum", end_momentum = "base_momentum"},
      {end_step = total - 1, start_lr = "max_lr", end_lr = "min_lr",
       start_momentum = "base_momentum", end_momentum = "max_momentum"},
    }
  end
  local strategy = opts.anneal_strategy or "cos"
  if strategy ~= "cos" and strategy ~= "linear" then
    fail(name .. ": anneal_strategy must be 'cos' or 'linear', got " .. tostring(strategy))
  end
  self.anneal_strategy = strategy
  if opts.max_lr == nil then fail(name .. ": max_lr is required") end
  local max_lrs = per_group(name, "max_lr", optimizer, opts.max_lr)
  local div_factor, final_div_factor = opts.div_factor or 25.0, opts.final_div_factor or 1e4
  check_number(name, "div_factor", div_factor)
  check_number(name, "final_div_factor", final_div_factor)
  local last_epoch = opts.last_epoch or -1
  if last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do
      group.initial_lr = max_lrs[i] / div_factor
      group.max_lr = max_lrs[i]
      group.min_lr = group.initial_lr / final_div_factor
    end
  end
  local cycle = opts.cycle_momentum
  if cycle == nil then cycle = true end
  self.cycle_momentum = cycle and true or false
  if cycle then
    local key = momentum_key(optimizer)
    if key == nil then fail(name .. ": optimizer must support momentum with the cycle_momentum option enabled") end
    self.use_beta1 = key == "betas"
    local max_m = per_group(name, "max_momentum", optimizer, opts.max_momentum or 0.95)
    local base_m = per_group(name, "base_momentum", optimizer, opts.base_momentum or 0.85)
    if last_epoch == -1 then
      for i, group in ipairs(optimizer.param_groups) do
        set_momentum(group, key, max_m[i])
        group.max_momentum, group.base_momentum = max_m[i], base_m[i]
      end
    end
  elseif opts.max_momentum ~= nil or opts.base_momentum ~= nil then
    fail(name .. ": base_momentum and max_momentum need cycle_momentum = true")
  end
  LRScheduler.init(self, optimizer, last_epoch, opts.verbose)
end

local function anneal(strategy, start, stop, pct)
  if strategy == "cos" then return stop + (start - stop) / 2.0 * (math.cos(math.pi * pct) + 1) end
  return (stop - start) * pct + start
end

function OneCycleLR:get_lr()
  local step_num = self.last_epoch
  if step_num > self.total_steps then
    fail(self.name .. ": tried to step " .. step_num + 1 .. " times; total_steps is " .. self.total_steps)
  end
  local lrs = {}
  for i, group in ipairs(self.optimizer.param_groups) do
    local start_step, lr, momentum = 0, nil, nil
    for k, phase in ipairs(self._schedule_phases) do
      local end_step = phase.end_step
      if step_num <= end_step or k == #self._schedule_phases then
        local pct = (step_num - start_step) / (end_step - start_step)
        lr = anneal(self.anneal_strategy, group[phase.start_lr], group[phase.end_lr], pct)
        if self.cycle_momentum then
          momentum = anneal(self.anneal_strategy, group[phase.start_momentum], group[phase.end_momentum], pct)
        end
        break
      end
      start_step = phase.end_step
    end
    lrs[i] = lr
    if self.cycle_momentum then set_momentum(group, self.use_beta1 and "betas" or "momentum", momentum) end
  end
  return lrs
end

-- CyclicLR: the lr cycles between base_lr and max_lr (triangular, triangular2 halving the
-- amplitude each cycle, exp_range scaling it by gamma^iteration, or scale_fn); the
-- momentum cycles the opposite way.
local CyclicLR = LRScheduler:extend("CyclicLR")
lr_scheduler.CyclicLR = CyclicLR

function CyclicLR:init(optimizer, opts)
  local name = self.name
  opts = sched_options(name, opts, {"base_lr", "max_lr", "step_size_up", "step_size_down", "mode", "gamma",
                                    "scale_fn", "scale_mode", "cycle_momentum", "base_momentum", "max_momentum"})
  check_optimizer(name, optimizer)
  if opts.base_lr == nil then fail(name .. ": base_lr is required") end
  if opts.max_lr == nil then fail(name .. ": max_lr is required") end
  local base_lrs = per_group(name, "base_lr", optimizer, opts.base_lr)
  local last_epoch = opts.last_epoch or -1
  if last_epoch == -1 then
    for i, group in ipairs(optimizer.param_groups) do group.lr = base_lrs[i] end
  end
  self.max_lrs = per_group(name, "max_lr", optimizer, opts.max_lr)
  local up = opts.step_size_up or 2000
  local down = opts.step_size_down or up
  check_number(name, "step_size_up", up)
  check_number(name, "step_size_down", down)
  if not (up > 0) or not (down >= 0) then
    fail(name .. ": step_size_up must be > 0 and step_size_down >= 0, got " .. tostring(up) .. " and " .. tostring(down))
  end
  up, down = up + 0.0, down + 0.0
  self.total_size = up + down
  self.step_ratio = up / self.total_size
  local mode = opts.mode or "triangular"
  self.gamma = opts.gamma or 1.0
  check_number(name, "gamma", self.gamma)
  if opts.scale_fn ~= nil then
    if type(opts.scale_fn) ~= "function" then fail(name .. ": scale_fn must be a function, got " .. describe(opts.scale_fn)) end
    self.scale_fn = opts.scale_fn
    self.scale_mode = opts.scale_mode or "cycle"
    if self.scale_mode ~= "cycle" and self.scale_mode ~= "iterations" then
      fail(name .. ": scale_mode must be 'cycle' or 'iterations', got " .. tostring(self.scale_mode))
    end
  else
    if mode ~= "triangular" and mode ~= "triangular2" and mode ~= "exp_range" then
      fail(name .. ": mode must be 'triangular', 'triangular2' or 'exp_range' (or give scale_fn), got " .. tostring(mode))
    end
    if opts.scale_mode ~= nil then fail(name .. ": scale_mode is used with scale_fn only") end
    self.scale_mode = mode == "exp_range" and "iterations" or "cycle"
  end
  self.mode = mode
  local cycle = opts.cycle_momentum
  if cycle == nil then cycle = true end
  self.cycle_momentum = cycle and true or false
  if cycle then
    if optimizer.defaults.momentum == nil then
      fail(name .. ": optimizer must support momentum with the cycle_momentum option enabled")
    end
    local base_m = per_group(name, "base_momentum", optimizer, opts.base_momentum or 0.8)
    if last_epoch == -1 then
      for i, group in ipairs(optimizer.param_groups) do group.momentum = base_m[i] end
    end
    self.base_momentums = {}
    for i, group in ipairs(optimizer.param_groups) do self.base_momentums[i] = group.momentum end
    self.max_momentums = per_group(name, "max_momentum", optimizer, opts.max_momentum or 0.9)
  elseif opts.max_momentum ~= nil or opts.base_momentum ~= nil then
    fail(name .. ": base_momentum and max_momentum need cycle_momentum = true")
  end
  LRScheduler.init(self, optimizer, last_epoch, opts.verbose)
  self.base_lrs = base_lrs
end

local function cyclic_scale(self, x)
  if self.scale_fn then
    local v = self.scale_fn(x)
    if type(v) ~= "number" then fail(self.name .. ": scale_fn(" .. x .. ") must return a number, got a " .. describe(v)) end
    return v
  elseif self.mode == "triangular" then
    return 1.0
  elseif self.mode == "triangular2" then
    return 1 / (2.0 ^ (x - 1))
  end
  return self.gamma ^ x
end

function CyclicLR:get_lr()
  local e = self.last_epoch
  local cycle = math.floor(1 + e / self.total_size)
  local x = 1.0 + e / self.total_size - cycle
  local scale_factor
  if x <= self.step_ratio then scale_factor = x / self.step_ratio else scale_factor = (x - 1) / (self.step_ratio - 1) end
  local scale = cyclic_scale(self, self.scale_mode == "cycle" and cycle or e)
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = base + (self.max_lrs[i] - base) * scale_factor * scale
  end
  if self.cycle_momentum then
    for i, group in ipairs(self.optimizer.param_groups) do
      local base_height = (self.max_momentums[i] - self.base_momentums[i]) * scale_factor
      group.momentum = self.max_momentums[i] - base_height * scale
    end
  end
  return lrs
end

-- CosineAnnealingWarmRestarts: cosine annealing from the initial lr to eta_min over T_0
-- epochs, restarted, each period T_mult times the last (SGDR).
local CosineAnnealingWarmRestarts = LRScheduler:extend("CosineAnnealingWarmRestarts")
lr_scheduler.CosineAnnealingWarmRestarts = CosineAnnealingWarmRestarts

function CosineAnnealingWarmRestarts:init(optimizer, opts)
  opts = sched_options(self.name, opts, {"T_0", "T_mult", "eta_min"})
  check_integer(self.name, "T_0", opts.T_0, 1)
  local T_mult, eta_min = opts.T_mult or 1, opts.eta_min or 0
  check_integer(self.name, "T_mult", T_mult, 1)
  check_number(self.name, "eta_min", eta_min)
  self.T_0, self.T_i, self.T_mult, self.eta_min = opts.T_0, opts.T_0, T_mult, eta_min
  self.T_cur = opts.last_epoch or -1
  LRScheduler.init(self, optimizer, opts.last_epoch, opts.verbose)
end

function CosineAnnealingWarmRestarts:get_lr()
  local lrs = {}
  for i, base in ipairs(self.base_lrs) do
    lrs[i] = self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
  end
  return lrs
end

-- Advances one epoch, or goes to `epoch` (a number >= 0, fractions allowed).
function CosineAnnealingWarmRestarts:step(epoch)
  if epoch == nil and self.last_epoch < 0 then epoch = 0 end
  if epoch == nil then
    epoch = self.last_epoch + 1
    self.T_cur = self.T_cur + 1
    if self.T_cur >= self.T_i then
      self.T_cur = self.T_cur - self.T_i
      self.T_i = self.T_i * self.T_mult
    end
  else
    if type(epoch) ~= "number" or not (epoch >= 0) then
      fail(self.name .. ":step: epoch must be a number >= 0, got " .. tostring(epoch))
    end
    if epoch >= self.T_0 then
      if self.T_mult == 1 then
        self.T_cur = epoch % self.T_0
      else
        local n = math.floor(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
        self.T_cur = epoch - self.T_0 * (self.T_mult ^ n - 1) / (self.T_mult - 1)
        self.T_i = self.T_0 * self.T_mult ^ n
      end
    else
      self.T_i = self.T_0
      self.T_cur = epoch
    end
  end
  self.last_epoch = math.floor(epoch)
  self._step_count = self._step_count + 1
  self._last_lr = {}
  for i, lr in ipairs(self:get_lr()) do
    self.optimizer.param_groups[i].lr = lr
    self._last_lr[i] = lr
    self:print_lr(i, lr, epoch)
  end
end

-- ReduceLROnPlateau: multiplies the lr by factor (not below min_lr) once the metric given to
-- step(metric) has not improved for more than patience epochs; then waits cooldown epochs.
local ReduceLROnPlateau = LRScheduler:extend("ReduceLROnPlateau")
lr_scheduler.ReduceLROnPlateau = ReduceLROnPlateau

function ReduceLROnPlateau:init(optimizer, opts)
  local name = self.name
  opts = torch._check_keywords(name, options(name, opts), {"mode", "factor", "patience", "threshold",
                                                          "threshold_mode", "cooldown", "min_lr", "eps", "verbose"})
  check_optimizer(name, optimizer)
  local factor = opts.factor or 0.1
  check_number(name, "factor", factor)
  if not (factor < 1) then fail(name .. ": factor should be < 1.0, got " .. tostring(factor)) end
  self.factor = factor
  self.optimizer = optimizer
  self.min_lrs = per_group(name, "min_lr", optimizer, opts.min_lr or 0)
  self.patience = opts.patience or 10
  check_integer(name, "patience", self.patience, 0)
  self.cooldown = opts.cooldown or 0
  check_integer(name, "cooldown", self.cooldown, 0)
  self.cooldown_counter = 0
  self.mode = opts.mode or "min"
  if self.mode ~= "min" and self.mode ~= "max" then fail(name .. ": mode must be 'min' or 'max', got " .. tostring(self.mode)) end
  self.threshold = opts.threshold or 1e-4
  check_number(name, "threshold", self.threshold)
  self.threshold_mode = opts.threshold_mode or "rel"
  if self.threshold_mode ~= "rel" and self.threshold_mode ~= "abs" then
    fail(name .. ": threshold_mode must be 'rel' or 'abs', got " .. tostring(self.threshold_mode))
  end
  self.eps = opts.eps or 1e-8
  check_number(name, "eps", self.eps)
  self.verbose = verbose_option(name, opts.verbose)
  self.last_epoch = 0
  self.best = self.mode == "min" and math.huge or -math.huge
  self.num_bad_epochs = 0
  self._last_lr = {}
  for i, group in ipairs(optimizer.param_groups) do self._last_lr[i] = group.lr end
end

local function plateau_is_better(self, a, best)
  local t = self.threshold
  if self.mode == "min" then
    if self.threshold_mode == "rel" then return a < best * (1 - t) end
    return a < best - t
  end
  if self.threshold_mode == "rel" then return a > best * (t + 1) end
  return a > best + t
end

-- One epoch with the metric (a number or a one-element tensor).
function ReduceLROnPlateau:step(metric)
  if is_tensor(metric) then metric = metric:item() end
  if type(metric) ~= "number" then
    fail(self.name .. ":step: expected the metric (a number or a one-element tensor), got " .. describe(metric))
  end
  self.last_epoch = self.last_epoch + 1
  if plateau_is_better(self, metric, self.best) then
    self.best = metric
    self.num_bad_epochs = 0
  else
    self.num_bad_epochs = self.num_bad_epochs + 1
  end
  if self.cooldown_counter > 0 then
    self.cooldown_counter = self.cooldown_counter - 1
    self.num_bad_epochs = 0
  end
  if self.num_bad_epochs > self.patience then
    for i, group in ipairs(self.optimizer.param_groups) do
      local new_lr = math.max(group.lr * self.factor, self.min_lrs[i])
      if group.lr - new_lr > self.eps then
        group.lr = new_lr
        if self.verbose then
          print(string.format("Epoch %05d: reducing learning rate of group %d to %.4e.", self.last_epoch, i, new_lr))
        end
      end
    end
    self.cooldown_counter = self.cooldown
    self.num_bad_epochs = 0
  end
  for i, group in ipairs(self.optimizer.param_groups) do self._last_lr[i] = group.lr end
end
