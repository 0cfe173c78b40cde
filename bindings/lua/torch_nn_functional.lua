-- torch.nn.functional (also nn.F): the stateless forms of the layers and losses. Linear,
-- softmax, log_softmax, conv2d, max_pool2d, cross_entropy and nll_loss are the engine's
-- fused differentiable ops; the rest is written from differentiable tensor ops, so autograd
-- differentiates it without a formula of its own. Dims are 1-based, class targets too.
local torch = ...
local nn = torch.nn
local util = nn._util
local fail, describe, shape_str = util.fail, util.describe, util.shape_str

local F = {}
nn.functional = F
nn.F = F

local function check_float(op, name, t)
  util.check_tensor(op, name, t)
  if not t:is_floating_point() then
    fail(op, "expected a floating-point %s, got dtype %s", name, t.dtype)
  end
  return t
end
util.check_float = check_float

function F.linear(input, weight, bias)
  return torch.linear(input, weight, bias)
end

function F.relu(input) return util.check_tensor("relu", "input", input):relu() end
function F.sigmoid(input) return util.check_tensor("sigmoid", "input", input):sigmoid() end
function F.tanh(input) return util.check_tensor("tanh", "input", input):tanh() end

-- gelu(x) = x * Phi(x) with the exact normal CDF (erf), or PyTorch's tanh approximation
-- with {approximate="tanh"}.
function F.gelu(input, ...)
  local op = "gelu"
  check_float(op, "input", input)
  local o = util.args(op, {"approximate"}, 0, {approximate = "none"}, ...)
  if o.approximate == "none" then
    return input * 0.5 * ((input * (1 / math.sqrt(2))):erf() + 1)
  elseif o.approximate == "tanh" then
    local inner = (input + input * input * input * 0.044715) * math.sqrt(2 / math.pi)
    return input * 0.5 * (inner:tanh() + 1)
  end
  fail(op, "approximate must be \"none\" or \"tanh\", got %s", describe(o.approximate))
end

function F.softmax(input, ...)
  local o = util.args("softmax", {"dim"}, 1, {}, ...)
  return torch.softmax(input, o.dim)
end

function F.log_softmax(input, ...)
  local o = util.args("log_softmax", {"dim"}, 1, {}, ...)
  return torch.log_softmax(input, o.dim)
end

-- Zeroes each element with probability p while training and scales the rest by 1/(1-p),
-- drawing from the torch generator; the identity when not training.
function F.dropout(input, ...)
  local op = "dropout"
  check_float(op, "input", input)
  local o = util.args(op, {"p", "training"}, 0, {p = 0.5, training = true}, ...)
  local p = util.check_number(op, "p", o.p)
  if not (p >= 0 and p <= 1) then fail(op, "p must be between 0 and 1, got %s", describe(p)) end
  if not util.check_bool(op, "training", o.training) or p == 0 then return input end
  if p == 1 then return input * 0 end
  local keep = torch.rand_like(input):ge(p):to(input.dtype) * (1 / (1 - p))
  return input * keep
end

-- Rows of weight (num_embeddings, dim) picked by 1-based integer indices of any shape; the
-- result has the indices' shape plus dim. The row padding_idx gets no gradient.
function F.embedding(input, weight, ...)
  local op = "embedding"
  util.check_tensor(op, "input", input)
  util.check_tensor(op, "weight", weight)
  local o = util.args(op, {"padding_idx"}, 0, {}, ...)
  if input:is_floating_point() or input.dtype == "bool" then
    fail(op, "expected an integer tensor of indices, got dtype %s", input.dtype)
  end
  if weight:dim() ~= 2 then fail(op, "expected a 2-D weight (num_embeddings, dim), got shape %s", shape_str(weight.shape)) end
  local n, dim = weight.shape[1], weight.shape[2]
  local flat = input:reshape(-1)
  torch._check_indices(op, flat, n)
  local rows = weight:index_select(1, flat)
  if o.padding_idx ~= nil and weight.requires_grad then
    local padding = util.padding_index(op, o.padding_idx, n)
    rows = torch.where(flat:ne(padding):unsqueeze(2), rows, rows:detach())
  end
  local shape = input.shape
  shape[#shape + 1] = dim
  return rows:reshape(shape)
end

-- A padding_idx (1-based, negative from the end) of a table of n embeddings, as a
-- positive index.
function util.padding_index(op, padding_idx, n)
  local i = math.type(padding_idx) and math.tointeger(padding_idx)
  if not i or i == 0 or i < -n or i > n then
    fail(op, "padding_idx must be an index in 1..%d (or -%d..-1), got %s", n, n, describe(padding_idx))
  end
  return i < 0 and n + 1 + i or i
end

-- Normalises over the trailing dims given by normalized_shape (a number or a table):
-- (x - mean) / sqrt(var + eps) with the biased variance, then * weight + bias. An empty
-- input is only scaled and shifted.
function F.layer_norm(input, ...)
  local op = "layer_norm"
  check_float(op, "input", input)
  local o = util.args(op, {"normalized_shape", "weight", "bias", "eps"}, 1, {eps = 1e-5}, ...)
  local normalized = type(o.normalized_shape) == "table" and o.normalized_shape or {o.normalized_shape}
  local shape, k = input.shape, #normalized
  local fits = k >= 1 and #shape >= k
  for i = 1, k do fits = fits and shape[#shape - k + i] == normalized[i] end
  if not fits then
    fail(op, "input of shape %s does not end in normalized_shape %s", shape_str(shape), shape_str(normalized))
  end
  for _, name in ipairs{"weight", "bias"} do
    local t = o[name]
    if t ~= nil and not (torch.is_tensor(t) and util.same_shape(t.shape, normalized)) then
      fail(op, "%s must be a tensor of shape normalized_shape %s, got %s", name, shape_str(normalized), describe(t))
    end
  end
  local eps = util.check_number(op, "eps", o.eps)
  if input:numel() == 0 then
    local out = input * 1
    if o.weight ~= nil then out = out * o.weight end
    if o.bias ~= nil then out = out + o.bias end
    return out
  end
  -- The engine's fused op on rows of the normalised block (tensor/autograd/batch_norm.cpp).
  local block = 1
  for i = 1, k do block = block * normalized[i] end
  return torch._layer_norm_rows(input:reshape{-1, block}, o.weight and o.weight:reshape(block),
                                o.bias and o.bias:reshape(block), eps):reshape(shape)
end

-- padding="valid" is 0; padding="same" keeps the spatial size (stride 1): dilation *
-- (kernel - 1) split over both sides, an odd one left over at the end (bottom, right) as
-- PyTorch. kernel, stride and dilation are pairs; returns the padding pair and the extra pair.
function util.conv_padding(op, padding, kernel, stride, dilation)
  if padding == "valid" then return {0, 0}, {0, 0} end
  if padding ~= "same" then
    if type(padding) == "string" then fail(op, "padding must be \"same\", \"valid\" or sizes, got %s", describe(padding)) end
    return util.check_pair(op, "padding", padding, 0), {0, 0}
  end
  if stride[1] ~= 1 or stride[2] ~= 1 then fail(op, "padding=\"same\" needs stride 1, got stride %s", shape_str(stride)) end
  local pad, extra = {}, {}
  for i = 1, 2 do
    local total = dilation[i] * (kernel[i] - 1)
    pad[i], extra[i] = total // 2, total % 2
  end
  return pad, extra
end

function F.conv2d(input, weight, ...)
  local op = "conv2d"
  local o = util.args(op, {"bias", "stride", "padding", "dilation", "groups"}, 0,
                      {stride = 1, padding = 0, dilation = 1, groups = 1}, ...)
  util.check_tensor(op, "weight", weight)
  local stride = util.check_pair(op, "stride", o.stride, 1)
  local dilation = util.check_pair(op, "dilation", o.dilation, 1)
  if weight:dim() ~= 4 then fail(op, "expected a 4-D weight, got shape %s", shape_str(weight.shape)) end
  local padding, extra = util.conv_padding(op, o.padding, {weight.shape[3], weight.shape[4]}, stride, dilation)
  if extra[1] + extra[2] > 0 then
    util.check_tensor(op, "input", input)
    for i = 1, 2 do  -- the odd padding of "same": zeros appended to the input's end
      if extra[i] > 0 then
        local shape = input.shape
        shape[#shape - 2 + i] = extra[i]
        input = torch.cat({input, torch.zeros(shape, {dtype = input.dtype, device = input.device})}, #shape - 2 + i)
      end
    end
  end
  return torch.conv2d(input, weight, o.bias, {stride = stride, padding = padding, dilation = dilation, groups = o.groups})
end

-- Window maxima; with return_indices also each maximum's 1-based position in the (H, W) plane.
function F.max_pool2d(input, ...)
  local op = "max_pool2d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"}, 1,
                      {padding = 0, dilation = 1, ceil_mode = false, return_indices = false}, ...)
  return torch.max_pool2d(input, o.kernel_size, {stride = o.stride or o.kernel_size, padding = o.padding,
                                                 dilation = o.dilation, ceil_mode = o.ceil_mode,
                                                 return_indices = o.return_indices})
end

function F.flatten(input, ...)
  local o = util.args("flatten", {"start_dim", "end_dim"}, 0, {start_dim = 1, end_dim = -1}, ...)
  return util.check_tensor("flatten", "input", input):flatten(o.start_dim, o.end_dim)
end

---------------------------------------------------------------------------------------------
-- Losses. reduction is "mean" (the default), "sum" or "none".

local reductions = {"mean", "sum", "none"}

-- reduction, checked against `valid` (a list; by default mean, sum, none).
local function check_reduction(op, reduction, valid)
  valid = valid or reductions
  for _, r in ipairs(valid) do
    if reduction == r then return reduction end
  end
  local quoted = {}
  for i, r in ipairs(valid) do quoted[i] = string.format("%q", r) end
  fail(op, "reduction must be %s or %s, got %s", table.concat(quoted, ", ", 1, #quoted - 1), quoted[#quoted],
       describe(reduction))
end
util.check_reduction = check_reduction

local function reduce(loss, reduction)
  if reduction == "mean" then return loss:mean() end
  if reduction == "sum" then return loss:sum() end
  return loss
end
util.reduce = reduce

-- Input and target of an elementwise loss: floating-point tensors of one shape.
local function check_pair(op, input, target)
  check_float(op, "input", input)
  util.check_tensor(op, "target", target)
  if not target:is_floating_point() then
    fail(op, "expected a floating-point target, got dtype %s", target.dtype)
  end
  if not util.same_shape(input.shape, target.shape) then
    fail(op, "input shape %s and target shape %s differ", shape_str(input.shape), shape_str(target.shape))
  end
end
util.check_loss_pair = check_pair

-- One engine op and graph node (bindings/bind_nn.cpp).
F.mse_loss = torch.mse_loss

function F.l1_loss(input, target, ...)
  local o = util.args("l1_loss", {"reduction"}, 0, {reduction = "mean"}, ...)
  check_reduction("l1_loss", o.reduction)
  check_pair("l1_loss", input, target)
  return reduce((input - target):abs(), o.reduction)
end

-- Keyword table for the fused class losses, with only the options that were given.
local function class_loss_options(op, o)
  check_reduction(op, o.reduction)
  if o.weight ~= nil then util.check_tensor(op, "weight", o.weight) end
  return {reduction = o.reduction, weight = o.weight, ignore_index = o.ignore_index, label_smoothing = o.label_smoothing}
end

-- input: logits (N, C), (N, C, d...) or (C); target: 1-based class indices (int64) or
-- class probabilities shaped like input.
function F.cross_entropy(input, target, ...)
  local op = "cross_entropy"
  local o = util.args(op, {"weight", "ignore_index", "reduction", "label_smoothing"}, 0, {reduction = "mean"}, ...)
  return torch.cross_entropy(input, target, class_loss_options(op, o))
end

-- input: log-probabilities (N, C), (N, C, d...) or (C); target: 1-based class indices.
function F.nll_loss(input, target, ...)
  local op = "nll_loss"
  local o = util.args(op, {"weight", "ignore_index", "reduction"}, 0, {reduction = "mean"}, ...)
  return torch.nll_loss(input, target, class_loss_options(op, o))
end

-- log(x) clamped at -100 as PyTorch's BCE does. Where x is 0 the log is taken of 1 instead
-- and replaced by -100, so the gradient there is 0 rather than 0 * inf = NaN.
local function clamped_log(x)
  local positive = x:gt(0)
  return torch.where(positive, torch.where(positive, x, 1):log():clamp{min = -100}, -100)
end

-- -(t log x + (1 - t) log(1 - x)) for probabilities x in [0, 1].
function F.binary_cross_entropy(input, target, ...)
  local op = "binary_cross_entropy"
  local o = util.args(op, {"weight", "reduction"}, 0, {reduction = "mean"}, ...)
  check_reduction(op, o.reduction)
  check_pair(op, input, target)
  torch._check_probabilities(op, input:detach())
  local loss = -(target * clamped_log(input) + (1 - target) * clamped_log(1 - input))
  if o.weight ~= nil then loss = loss * util.check_tensor(op, "weight", o.weight) end
  return reduce(loss, o.reduction)
end

-- BCE of sigmoid(x) in the stable form PyTorch uses, with m = max(-x, 0):
-- (1 - t) x + w_pos (m + log(exp(-m) + exp(-x - m))), w_pos = 1 + (pos_weight - 1) t.
function F.binary_cross_entropy_with_logits(input, target, ...)
  local op = "binary_cross_entropy_with_logits"
  local o = util.args(op, {"weight", "reduction", "pos_weight"}, 0, {reduction = "mean"}, ...)
  check_reduction(op, o.reduction)
  check_pair(op, input, target)
  local m = (-input):relu()
  local log_term = m + ((-m):exp() + (-input - m):exp()):log()
  if o.pos_weight ~= nil then
    log_term = log_term * ((util.check_tensor(op, "pos_weight", o.pos_weight) - 1) * target + 1)
  end
  local loss = (1 - target) * input + log_term
  if o.weight ~= nil then loss = loss * util.check_tensor(op, "weight", o.weight) end
  return reduce(loss, o.reduction)
end
