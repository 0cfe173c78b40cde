-- torch.nn activations beyond ReLU / Sigmoid / Tanh / GELU: the nn.functional forms, written
-- from differentiable tensor ops (autograd needs no formula of its own), and their layers with
-- PyTorch's arguments, defaults and printed form. PyTorch's `inplace` flag is not taken: the
-- functions always return a new tensor.
local torch = ...
local nn = torch.nn
local F, util = nn.functional, nn._util
local fail, describe, check_float = util.fail, util.describe, util.check_float

-- PyTorch's SELU constants.
local SELU_ALPHA = 1.6732632423543772848170429916717
local SELU_SCALE = 1.0507009873554804934193349852946

-- The negative branch of elu / selu / celu, alpha * (exp(x / alpha) - 1), computed on min(x, 0)
-- so that where the other branch is taken it never overflows (its gradient would be 0 * inf).
local function exp_branch(x, alpha, input_scale)
  return torch.expm1(x:clamp{max = 0} * input_scale) * alpha
end

function F.leaky_relu(input, ...)
  local op = "leaky_relu"
  check_float(op, "input", input)
  local o = util.args(op, {"negative_slope"}, 0, {negative_slope = 0.01}, ...)
  local slope = util.check_number(op, "negative_slope", o.negative_slope)
  return torch.where(input:gt(0), input, input * slope)
end

function F.elu(input, ...)
  local op = "elu"
  check_float(op, "input", input)
  local o = util.args(op, {"alpha"}, 0, {alpha = 1.0}, ...)
  local alpha = util.check_number(op, "alpha", o.alpha)
  return torch.where(input:gt(0), input, exp_branch(input, alpha, 1))
end

function F.selu(input)
  check_float("selu", "input", input)
  return torch.where(input:gt(0), input, exp_branch(input, SELU_ALPHA, 1)) * SELU_SCALE
end

function F.celu(input, ...)
  local op = "celu"
  check_float(op, "input", input)
  local o = util.args(op, {"alpha"}, 0, {alpha = 1.0}, ...)
  local alpha = util.check_number(op, "alpha", o.alpha)
  if alpha == 0 then fail(op, "alpha must not be 0") end
  return torch.where(input:gt(0), input, exp_branch(input, alpha, 1 / alpha))
end

function F.silu(input)
  check_float("silu", "input", input)
  return input * input:sigmoid()
end

-- log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch).
function F.softplus(input, ...)
  local op = "softplus"
  check_float(op, "input", input)
  local o = util.args(op, {"beta", "threshold"}, 0, {beta = 1, threshold = 20}, ...)
  local beta = util.check_number(op, "beta", o.beta)
  local threshold = util.check_number(op, "threshold", o.threshold)
  if beta == 0 then fail(op, "beta must not be 0") end
  local scaled = input * beta
  return torch.where(scaled:gt(threshold), input, torch.log1p(scaled:clamp{max = threshold}:exp()) / beta)
end

function F.mish(input)
  check_float("mish", "input", input)
  return input * F.softplus(input):tanh()
end

function F.softsign(input)
  check_float("softsign", "input", input)
  return input / (input:abs() + 1)
end

function F.hardtanh(input, ...)
  local op = "hardtanh"
  check_float(op, "input", input)
  local o = util.args(op, {"min_val", "max_val"}, 0, {min_val = -1.0, max_val = 1.0}, ...)
  local lo, hi = util.check_number(op, "min_val", o.min_val), util.check_number(op, "max_val", o.max_val)
  if lo > hi then fail(op, "min_val (%s) must not exceed max_val (%s)", describe(lo), describe(hi)) end
  return input:clamp(lo, hi)
end

function F.relu6(input)
  check_float("relu6", "input", input)
  return input:clamp(0, 6)
end

function F.hardsigmoid(input)
  check_float("hardsigmoid", "input", input)
  return (input + 3):clamp(0, 6) / 6
end

function F.hardswish(input)
  check_float("hardswish", "input", input)
  return input * (input + 3):clamp(0, 6) / 6
end

-- max(x, 0) + weight * min(x, 0) with one weight, or one per channel (dim 2 of the input).
function F.prelu(input, weight)
  local op = "prelu"
  check_float(op, "input", input)
  check_float(op, "weight", weight)
  local n = weight:numel()
  local channels = input:dim() >= 2 and input.shape[2] or 1
  if weight:dim() > 1 or (n ~= 1 and n ~= channels) then
    fail(op, "weight of shape %s must hold 1 value or one per channel (%d)", util.shape_str(weight.shape), channels)
  end
  local w = weight:reshape(-1)
  if n > 1 then
    local shape = {}
    for i = 1, input:dim() do shape[i] = i == 2 and n or 1 end
    w = w:reshape(shape)
  elseif input:dim() == 0 then
    w = w:reshape({})
  end
  return torch.where(input:gt(0), input, input * w)
end

-- log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), stable for large |x|.
function F.logsigmoid(input)
  check_float("logsigmoid", "input", input)
  return input:clamp{max = 0} - torch.log1p((-input:abs()):exp())
end

-- The first half of dim times the sigmoid of the second half.
function F.glu(input, ...)
  local op = "glu"
  check_float(op, "input", input)
  local o = util.args(op, {"dim"}, 0, {dim = -1}, ...)
  local nd = input:dim()
  local dim = util.check_int(op, "dim", o.dim, math.mininteger)
  if nd == 0 then fail(op, "expected a tensor with at least one dim, got a 0-dim tensor") end
  if dim == 0 or dim < -nd or dim > nd then fail(op, "dim %d is out of range for a %d-D input", dim, nd) end
  local d = dim < 0 and nd + 1 + dim or dim
  local size = input.shape[d]
  if size % 2 ~= 0 then fail(op, "dim %d has odd size %d; it must split into two halves", dim, size) end
  local a, b = input:narrow(d, 1, size // 2), input:narrow(d, size // 2 + 1, size // 2)
  return a * b:sigmoid()
end

-- x where x > threshold, else value.
function F.threshold(input, ...)
  local op = "threshold"
  check_float(op, "input", input)
  local o = util.args(op, {"threshold", "value"}, 2, {}, ...)
  local th, value = util.check_number(op, "threshold", o.threshold), util.check_number(op, "value", o.value)
  return torch.where(input:gt(th), input, value)
end

---------------------------------------------------------------------------------------------
-- Layers. Each keeps its options as fields (printed as PyTorch prints them) and forwards to
-- its functional form.

-- nn[name] with the options `names` (defaults in `defaults`, the first `nrequired` required),
-- checked as numbers at construction and passed to fn as keywords.
local function options_layer(name, fn, names, defaults, nrequired)
  local cls = util.module_class(name)
  function cls:init(...)
    local o = util.args(name, names, nrequired or 0, defaults, ...)
    for _, k in ipairs(names) do self[k] = util.check_number(name, k, o[k]) end
  end
  function cls:forward(x)
    local kw = {}
    for _, k in ipairs(names) do kw[k] = self[k] end
    return fn(x, kw)
  end
  function cls:extra_repr()
    local parts = {}
    for i, k in ipairs(names) do parts[i] = k .. "=" .. util.repr(self[k]) end
    return table.concat(parts, ", ")
  end
  return cls
end

-- A layer without options.
local function plain_layer(name, fn)
  local cls = util.module_class(name)
  function cls:init(...) util.args(name, {}, 0, {}, ...) end
  function cls:forward(x) return fn(x) end
end

options_layer("LeakyReLU", F.leaky_relu, {"negative_slope"}, {negative_slope = 0.01})
options_layer("ELU", F.elu, {"alpha"}, {alpha = 1.0})
options_layer("CELU", F.celu, {"alpha"}, {alpha = 1.0})
options_layer("Softplus", F.softplus, {"beta", "threshold"}, {beta = 1, threshold = 20})
options_layer("Threshold", F.threshold, {"threshold", "value"}, {}, 2)
plain_layer("SELU", F.selu)
plain_layer("SiLU", F.silu)
plain_layer("Mish", F.mish)
plain_layer("Softsign", F.softsign)
plain_layer("ReLU6", F.relu6)
plain_layer("Hardsigmoid", F.hardsigmoid)
plain_layer("Hardswish", F.hardswish)
plain_layer("LogSigmoid", F.logsigmoid)

local Hardtanh = options_layer("Hardtanh", F.hardtanh, {"min_val", "max_val"}, {min_val = -1.0, max_val = 1.0})
local hardtanh_init = Hardtanh.init
function Hardtanh:init(...)
  hardtanh_init(self, ...)
  if self.min_val > self.max_val then
    fail("Hardtanh", "min_val (%s) must not exceed max_val (%s)", describe(self.min_val), describe(self.max_val))
  end
end

local GLU = util.module_class("GLU")
function GLU:init(...)
  local o = util.args("GLU", {"dim"}, 0, {dim = -1}, ...)
  self.dim = util.check_int("GLU", "dim", o.dim, math.mininteger)
end
function GLU:forward(x) return F.glu(x, self.dim) end
function GLU:extra_repr() return "dim=" .. self.dim end

-- nn.PReLU(num_parameters=1, init=0.25): one learnable slope, or one per channel.
local PReLU = util.module_class("PReLU")
function PReLU:init(...)
  local op = "PReLU"
  local o = util.args(op, {"num_parameters", "init", "device", "dtype"}, 0, {num_parameters = 1, init = 0.25}, ...)
  self.num_parameters = util.check_int(op, "num_parameters", o.num_parameters, 1)
  self.init_value = util.check_number(op, "init", o.init)
  self.weight = nn.Parameter(torch.empty({self.num_parameters}, util.factory(o)))
  self:reset_parameters()
end
function PReLU:reset_parameters()
  torch.no_grad(function() self.weight:fill_(self.init_value) end)
end
function PReLU:forward(x) return F.prelu(x, self.weight) end
function PReLU:extra_repr() return "num_parameters=" .. self.num_parameters end
