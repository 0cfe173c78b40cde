-- torch.nn.init: in-place initialisers of parameters, drawing from the torch generator
-- (torch.manual_seed) under no_grad, with PyTorch's names, arguments and formulas.
-- Each takes positional arguments or a trailing keyword table and returns the tensor.
local torch = ...
local nn = torch.nn
local util = nn._util
local fail = util.fail

local init = {}
nn.init = init

-- The gain PyTorch recommends for a nonlinearity (param: leaky_relu's negative slope).
function init.calculate_gain(nonlinearity, param)
  local op = "calculate_gain"
  local linear = {linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
                  conv_transpose2d = true, conv_transpose3d = true, sigmoid = true}
  if linear[nonlinearity] then return 1 end
  if nonlinearity == "tanh" then return 5 / 3 end
  if nonlinearity == "relu" then return math.sqrt(2) end
  if nonlinearity == "selu" then return 3 / 4 end
  if nonlinearity == "leaky_relu" then
    local slope = param == nil and 0.01 or util.check_number(op, "negative slope", param)
    return math.sqrt(2 / (1 + slope * slope))
  end
  fail(op, "unsupported nonlinearity %s", util.describe(nonlinearity))
end

-- fan_in = size(2) * receptive field, fan_out = size(1) * receptive field.
local function fans(op, t)
  local shape = t.shape
  if #shape < 2 then
    fail(op, "fan in and fan out need a tensor with at least 2 dims, got shape %s", util.shape_str(shape))
  end
  local receptive = 1
  for i = 3, #shape do receptive = receptive * shape[i] end
  return shape[2] * receptive, shape[1] * receptive
end

-- Runs t:method(...) under no_grad and returns t.
local function fill(t, method, ...)
  torch.no_grad(t[method], t, ...)
  return t
end

function init.uniform_(t, ...)
  util.check_tensor("uniform_", "tensor", t)
  local o = util.args("uniform_", {"a", "b"}, 0, {a = 0, b = 1}, ...)
  return fill(t, "uniform_", util.check_number("uniform_", "a", o.a), util.check_number("uniform_", "b", o.b))
end

function init.normal_(t, ...)
  util.check_tensor("normal_", "tensor", t)
  local o = util.args("normal_", {"mean", "std"}, 0, {mean = 0, std = 1}, ...)
  return fill(t, "normal_", util.check_number("normal_", "mean", o.mean), util.check_number("normal_", "std", o.std))
end

function init.constant_(t, ...)
  util.check_tensor("constant_", "tensor", t)
  local o = util.args("constant_", {"val"}, 1, {}, ...)
  return fill(t, "fill_", util.check_number("constant_", "val", o.val))
end

function init.zeros_(t) return fill(util.check_tensor("zeros_", "tensor", t), "zero_") end
function init.ones_(t) return fill(util.check_tensor("ones_", "tensor", t), "fill_", 1) end

-- The standard deviation of Kaiming (He) initialisation for t.
local function kaiming_std(op, t, ...)
  util.check_tensor(op, "tensor", t)
  local o = util.args(op, {"a", "mode", "nonlinearity"}, 0, {a = 0, mode = "fan_in", nonlinearity = "leaky_relu"}, ...)
  local fan_in, fan_out = fans(op, t)
  local fan
  if o.mode == "fan_in" then fan = fan_in
  elseif o.mode == "fan_out" then fan = fan_out
  else fail(op, "mode must be \"fan_in\" or \"fan_out\", got %s", util.describe(o.mode)) end
  return init.calculate_gain(o.nonlinearity, o.a) / math.sqrt(fan)
end

-- The standard deviation of Xavier (Glorot) initialisation for t.
local function xavier_std(op, t, ...)
  util.check_tensor(op, "tensor", t)
  local o = util.args(op, {"gain"}, 0, {gain = 1}, ...)
  local fan_in, fan_out = fans(op, t)
  return util.check_number(op, "gain", o.gain) * math.sqrt(2 / (fan_in + fan_out))
end

-- Zero-element tensors are left alone (their fans may be 0), as in PyTorch.
function init.kaiming_uniform_(t, ...)
  local std = kaiming_std("kaiming_uniform_", t, ...)
  if t:numel() == 0 then return t end
  local bound = math.sqrt(3) * std
  return fill(t, "uniform_", -bound, bound)
end

function init.kaiming_normal_(t, ...)
  local std = kaiming_std("kaiming_normal_", t, ...)
  if t:numel() == 0 then return t end
  return fill(t, "normal_", 0, std)
end

function init.xavier_uniform_(t, ...)
  local std = xavier_std("xavier_uniform_", t, ...)
  if t:numel() == 0 then return t end
  local bound = math.sqrt(3) * std
  return fill(t, "uniform_", -bound, bound)
end

function init.xavier_normal_(t, ...)
  local std = xavier_std("xavier_normal_", t, ...)
  if t:numel() == 0 then return t end
  return fill(t, "normal_", 0, std)
end
