-- torch.nn normalization layers and channel dropout: F.batch_norm, F.instance_norm,
-- F.group_norm, F.dropout1d, F.dropout2d and the layers BatchNorm1d, BatchNorm2d,
-- InstanceNorm1d, InstanceNorm2d, GroupNorm, Dropout1d, Dropout2d, with PyTorch's
-- arguments, parameter and buffer names (running_mean, running_var, num_batches_tracked),
-- so that a PyTorch state_dict loads. The batch statistics and their closed-form backward are
-- the engine's fused torch._batch_norm_train (tensor/autograd/batch_norm.cpp), which instance
-- and group normalization use too (a sample's channel or group as a channel of a batch of
-- one); normalising by the running statistics is torch._batch_norm_eval. Channels are dim 2
-- (PyTorch's dim 1).
local torch = ...
local nn = torch.nn
local F, init, util = nn.functional, nn.init, nn._util
local fail, repr, describe, shape_str = util.fail, util.repr, util.describe, util.shape_str

---------------------------------------------------------------------------------------------
-- Shared pieces.

-- The shape {1, C, 1, ...} that broadcasts a per-channel vector against an input of `ndim`
-- dims.
local function channel_shape(C, ndim)
  local s = {1, C}
  for i = 3, ndim do s[i] = 1 end
  return s
end

-- An optional per-channel tensor (weight, bias, running_mean, running_var): nil, or a
-- floating tensor of the input's C channels on the input's device; weight and bias are
-- checked for dtype by check_affine (the running statistics may be kept in another floating
-- dtype).
local function check_channels(op, name, t, input)
  if t == nil then return nil end
  util.check_tensor(op, name, t)
  local C = input.shape[2]
  if t:numel() ~= C then
    fail(op, "%s should contain %d elements (the input's channels), got shape %s", name, C, shape_str(t.shape))
  end
  if tostring(t.device) ~= tostring(input.device) then
    fail(op, "%s is on %s but the input is on %s", name, tostring(t.device), tostring(input.device))
  end
  if not t:is_floating_point() then
    fail(op, "%s must be a floating-point tensor, got dtype %s", name, t.dtype)
  end
  return t
end

-- Checks the optional weight and bias: of the input's dtype, or both float32 (where given)
-- for a bfloat16 input. The latter is PyTorch's CPU mixed precision for batch and instance
-- norm (a float32 layer after an op that autocast ran in bfloat16): true is returned and the
-- caller normalises in float32 and rounds the result to bfloat16 once.
local function check_affine(op, input, weight, bias, mixed_ok)
  check_channels(op, "weight", weight, input)
  check_channels(op, "bias", bias, input)
  local wd, bd = weight and weight.dtype, bias and bias.dtype
  if mixed_ok and input.dtype == "bfloat16" and (wd == "float32" or bd == "float32") then
    if wd and bd and wd ~= bd then
      fail(op, "weight has dtype %s but bias has dtype %s (a bfloat16 input takes both bfloat16 or both float32)",
           wd, bd)
    end
    return true
  end
  if wd and wd ~= input.dtype then fail(op, "weight has dtype %s but the input has dtype %s", wd, input.dtype) end
  if bd and bd ~= input.dtype then fail(op, "bias has dtype %s but the input has dtype %s", bd, input.dtype) end
  return false
end

-- x (N, C, *) scaled by weight and shifted by bias (per channel, or nil).
local function affine(x, weight, bias)
  local cs = channel_shape(x.shape[2], x:dim())
  if weight ~= nil then x = x * weight:reshape(cs) end
  if bias ~= nil then x = x + bias:reshape(cs) end
  return x
end

-- x normalised by per-channel mean and var (the running statistics), times weight plus bias:
-- the engine's fused op (one sweep over x on the CPU).
local function normalize(x, mean, var, eps, weight, bias)
  local C = x.shape[2]
  return torch._batch_norm_eval(x, mean:reshape(C), var:reshape(C), weight and weight:reshape(C),
                                bias and bias:reshape(C), eps)
end

-- running = (1 - momentum) * running + momentum * value, in place without recording; value
-- has running's number of elements.
local function update_running(running, value, momentum)
  torch.no_grad(function()
    running:mul_(1 - momentum):add_(value:detach():reshape(running.shape):to(running.dtype) * momentum)
  end)
end

local function check_momentum(op, momentum)
  local m = util.check_number(op, "momentum", momentum)
  if m ~= m then fail(op, "momentum must be a number, got nan") end
  return m
end

-- The checks F.batch_norm and F.instance_norm share, their errors naming `op`: input a
-- floating (N, C, ...) tensor of at least min_dims dims, the running statistics and the
-- affine parameters {C}. Returns the mode flag (o[mode_name]), momentum, eps and the running
-- statistics.
local function check_norm_args(op, input, o, mode_name, min_dims)
  util.check_float(op, "input", input)
  local mode = util.check_bool(op, mode_name, o[mode_name])
  local momentum = check_momentum(op, o.momentum)
  local eps = util.check_number(op, "eps", o.eps)
  if input:dim() < min_dims then
    fail(op, "expected an input of at least %d dims (N, C, ...), got shape %s", min_dims, shape_str(input.shape))
  end
  local rm = check_channels(op, "running_mean", o.running_mean, input)
  local rv = check_channels(op, "running_var", o.running_var, input)
  local mixed = check_affine(op, input, o.weight, o.bias, true)
  return mode, momentum, eps, rm, rv, mixed
end

---------------------------------------------------------------------------------------------
-- F.batch_norm

-- Training: normalises each channel (dim 2) by the batch's mean and biased variance over
-- every other dim and, given running_mean / running_var, moves them toward the batch mean
-- and the unbiased batch variance by momentum. Evaluation: normalises by the running
-- statistics. An empty input is only scaled and shifted, its running statistics untouched.
local BATCH_NORM_ARGS = {"running_mean", "running_var", "weight", "bias", "training", "momentum", "eps"}

-- F.batch_norm's work, its errors naming `op` (the function or the layer); o holds the
-- arguments named in BATCH_NORM_ARGS.
local function batch_norm(op, input, o)
  local training, momentum, eps, rm, rv, mixed = check_norm_args(op, input, o, "training", 2)
  if mixed then return batch_norm(op, input:float(), o):bfloat16() end
  local C = input.shape[2]
  if not training and (rm == nil or rv == nil) then
    fail(op, "running_mean and running_var must be given when not training")
  end
  if input:numel() == 0 then return affine(input * 1, o.weight, o.bias) end
  if not training then
    return normalize(input, rm, rv, eps, o.weight, o.bias)
  end
  local n = input:numel() // C
  if n == 1 then
    fail(op, "expected more than 1 value per channel when training, got input size %s", shape_str(input.shape))
  end
  local out, mean, var = torch._batch_norm_train(input, o.weight and o.weight:reshape(C), o.bias and o.bias:reshape(C),
                                                 eps)
  if rm ~= nil then update_running(rm, mean, momentum) end
  if rv ~= nil then update_running(rv, var * (n / (n - 1)), momentum) end
  return out
end

function F.batch_norm(input, ...)
  return batch_norm("batch_norm", input,
                    util.args("batch_norm", BATCH_NORM_ARGS, 0, {training = false, momentum = 0.1, eps = 1e-5}, ...))
end

---------------------------------------------------------------------------------------------
-- F.instance_norm

-- Normalises each channel of each sample (N, C, *) over its spatial dims. With
-- use_input_stats (the default) it uses the sample's statistics and moves the running
-- statistics (if given) toward their mean over the batch (the variance unbiased over the
-- spatial dims); otherwise it normalises by running_mean and running_var.
local INSTANCE_NORM_ARGS = {"running_mean", "running_var", "weight", "bias", "use_input_stats", "momentum", "eps"}

-- F.instance_norm's work, its errors naming `op`; o holds INSTANCE_NORM_ARGS.
local function instance_norm(op, input, o)
  local use_input_stats, momentum, eps, rm, rv, mixed = check_norm_args(op, input, o, "use_input_stats", 3)
  if mixed then return instance_norm(op, input:float(), o):bfloat16() end
  local C = input.shape[2]
  if not use_input_stats then
    if rm == nil or rv == nil then
      fail(op, "running_mean and running_var must be given when use_input_stats is false")
    end
    return normalize(input, rm, rv, eps, o.weight, o.bias)
  end
  local n = input:numel() // math.max(1, input.shape[1] * C)
  if n == 1 then
    fail(op, "expected more than 1 spatial element when training, got input size %s", shape_str(input.shape))
  end
  if input:numel() == 0 then return affine(input * 1, o.weight, o.bias) end
  -- Each (sample, channel) pair is a channel of a batch of one.
  local N = input.shape[1]
  local out, mean, var = torch._batch_norm_train(input:reshape{1, N * C, -1}, nil, nil, eps)
  if rm ~= nil then update_running(rm, mean:reshape(N, C):mean(1), momentum) end
  if rv ~= nil then update_running(rv, (var * (n / (n - 1))):reshape(N, C):mean(1), momentum) end
  return affine(out:reshape(input.shape), o.weight, o.bias)
end

function F.instance_norm(input, ...)
  return instance_norm("instance_norm", input, util.args("instance_norm", INSTANCE_NORM_ARGS, 0,
                                                         {use_input_stats = true, momentum = 0.1, eps = 1e-5}, ...))
end

---------------------------------------------------------------------------------------------
-- F.group_norm

-- Splits the channels of (N, C, *) into num_groups groups and normalises each group of each
-- sample over its channels and spatial dims; weight and bias are per channel.
-- F.group_norm's work, its errors naming `op`; o holds num_groups, weight, bias, eps.
local function group_norm(op, input, o)
  util.check_float(op, "input", input)
  local groups = util.check_int(op, "num_groups", o.num_groups, 1)
  local eps = util.check_number(op, "eps", o.eps)
  if input:dim() < 2 then
    fail(op, "expected an input of at least 2 dims (N, C, ...), got shape %s", shape_str(input.shape))
  end
  local shape = input.shape
  local N, C = shape[1], shape[2]
  if C % groups ~= 0 then
    fail(op, "the input's %d channels are not divisible by num_groups (%d)", C, groups)
  end
  check_affine(op, input, o.weight, o.bias, false)  -- PyTorch 1.13: no mixed dtypes here
  -- PyTorch's condition: one sample whose groups are single channels without spatial dims
  -- (other single-value groups normalise to 0).
  if N * C // groups * (input:numel() // math.max(1, N * C)) == 1 then
    fail(op, "expected more than 1 value per channel when training, got input size %s and num_groups %d",
         shape_str(shape), groups)
  end
  if input:numel() == 0 then return affine(input * 1, o.weight, o.bias) end
  -- Each (sample, group) pair is a channel of a batch of one.
  local out = torch._batch_norm_train(input:reshape{1, N * groups, -1}, nil, nil, eps)
  return affine(out:reshape(shape), o.weight, o.bias)
end

function F.group_norm(input, ...)
  return group_norm("group_norm", input, util.args("group_norm", {"num_groups", "weight", "bias", "eps"}, 1,
                                                   {eps = 1e-5}, ...))
end

---------------------------------------------------------------------------------------------
-- Channel dropout

-- Zeroes whole channels: a mask of shape (N, C, 1, ...) (or (C, 1, ...) when `batched` is
-- false) drawn from the torch generator, the kept channels scaled by 1/(1-p); the identity
-- when not training. inplace writes into input.
local function channel_dropout(op, input, batched, p, training, inplace)
  if not training or p == 0 then return input end
  local mask_shape = input.shape
  for i = batched and 3 or 2, #mask_shape do mask_shape[i] = 1 end
  local keep
  if p == 1 then
    keep = torch.zeros(mask_shape, {dtype = input.dtype, device = input.device})
  else
    keep = torch.rand(mask_shape, {dtype = input.dtype, device = input.device}):ge(p):to(input.dtype) * (1 / (1 - p))
  end
  if inplace then return input:mul_(keep) end
  return input * keep
end

-- The options of F.dropout1d / F.dropout2d, checked.
local function dropout_options(op, input, ...)
  util.check_float(op, "input", input)
  local o = util.args(op, {"p", "training", "inplace"}, 0, {p = 0.5, training = true, inplace = false}, ...)
  local p = util.check_number(op, "p", o.p)
  if not (p >= 0 and p <= 1) then fail(op, "p must be between 0 and 1, got %s", describe(p)) end
  return p, util.check_bool(op, "training", o.training), util.check_bool(op, "inplace", o.inplace)
end

-- (N, C, L) or unbatched (C, L): each channel zeroed with probability p.
function F.dropout1d(input, ...)
  local op = "dropout1d"
  local p, training, inplace = dropout_options(op, input, ...)
  if input:dim() ~= 2 and input:dim() ~= 3 then
    fail(op, "expected a 2-D (C, L) or 3-D (N, C, L) input, got shape %s", shape_str(input.shape))
  end
  return channel_dropout(op, input, input:dim() == 3, p, training, inplace)
end

-- (N, C, H, W), or (N, C, L) as PyTorch 1.13 takes a 3-D input: each channel zeroed with
-- probability p.
function F.dropout2d(input, ...)
  local op = "dropout2d"
  local p, training, inplace = dropout_options(op, input, ...)
  if input:dim() ~= 3 and input:dim() ~= 4 then
    fail(op, "expected a 3-D or 4-D (N, C, H, W) input, got shape %s", shape_str(input.shape))
  end
  return channel_dropout(op, input, true, p, training, inplace)
end

local function dropout_layer(name, fn)
  local cls = util.module_class(name)
  function cls:init(...)
    local o = util.args(name, {"p", "inplace"}, 0, {p = 0.5, inplace = false}, ...)
    local p = util.check_number(name, "p", o.p)
    if not (p >= 0 and p <= 1) then fail(name, "p must be between 0 and 1, got %s", repr(p)) end
    self.p, self.inplace = p, util.check_bool(name, "inplace", o.inplace)
  end
  function cls:forward(x) return fn(x, self.p, self.training, self.inplace) end
  function cls:extra_repr() return string.format("p=%s, inplace=%s", repr(self.p), tostring(self.inplace)) end
end

dropout_layer("Dropout1d", F.dropout1d)
dropout_layer("Dropout2d", F.dropout2d)

---------------------------------------------------------------------------------------------
-- Batch and instance normalization layers (PyTorch's _NormBase): weight (ones) and bias
-- (zeros) when affine; buffers running_mean (zeros), running_var (ones) and the int64
-- num_batches_tracked when track_running_stats. momentum = false is PyTorch's None: the
-- running statistics are then the cumulative average (factor 1 / num_batches_tracked).

local function norm_base(cls, op, defaults, ...)
  local o = util.args(op, {"num_features", "eps", "momentum", "affine", "track_running_stats", "device", "dtype"}, 1,
                      defaults, ...)
  cls.num_features = util.check_int(op, "num_features", o.num_features, 1)
  cls.eps = util.check_number(op, "eps", o.eps)
  if o.momentum == false then cls.momentum = false else cls.momentum = check_momentum(op, o.momentum) end
  cls.affine = util.check_bool(op, "affine", o.affine)
  cls.track_running_stats = util.check_bool(op, "track_running_stats", o.track_running_stats)
  local f = util.factory(o)
  if cls.affine then
    cls.weight = nn.Parameter(torch.ones({cls.num_features}, f))
    cls.bias = nn.Parameter(torch.zeros({cls.num_features}, f))
  end
  if cls.track_running_stats then
    cls:register_buffer("running_mean", torch.zeros({cls.num_features}, f))
    cls:register_buffer("running_var", torch.ones({cls.num_features}, f))
    cls:register_buffer("num_batches_tracked", torch.tensor(0, {dtype = "int64", device = f.device}))
  end
end

-- Shared methods of the batch and instance norm layers.
local function add_norm_methods(cls)
  function cls:reset_running_stats()
    if self.track_running_stats then
      torch.no_grad(function()
        self.running_mean:zero_()
        self.running_var:fill_(1)
        self.num_batches_tracked:zero_()
      end)
    end
  end
  function cls:reset_parameters()
    self:reset_running_stats()
    if self.affine then
      init.ones_(self.weight)
      init.zeros_(self.bias)
    end
  end
  function cls:extra_repr()
    return string.format("%d, eps=%s, momentum=%s, affine=%s, track_running_stats=%s", self.num_features,
                         repr(self.eps), self.momentum == false and "nil" or repr(self.momentum),
                         tostring(self.affine), tostring(self.track_running_stats))
  end
end

-- An input of one of `dims` (a list of ranks) with num_features channels at dim `channel`.
local function check_input(op, x, dims, channel, num_features)
  util.check_tensor(op, "input", x)
  local ok = false
  for _, d in ipairs(dims) do ok = ok or x:dim() == d end
  if not ok then
    fail(op, "expected a %s input, got shape %s", table.concat(dims, "-D or ") .. "-D", shape_str(x.shape))
  end
  if x.shape[channel] ~= num_features then
    fail(op, "expected %d channels (num_features) at dim %d of the input, got shape %s", num_features, channel,
         shape_str(x.shape))
  end
end

-- nn.BatchNorm1d / nn.BatchNorm2d: inputs of the ranks in `dims`, channels at dim 2.
local function batch_norm_layer(name, dims)
  local cls = util.module_class(name)
  function cls:init(...)
    norm_base(self, name, {eps = 1e-5, momentum = 0.1, affine = true, track_running_stats = true}, ...)
  end
  add_norm_methods(cls)
  -- As PyTorch: training with tracked statistics counts the batch; batch statistics are used
  -- when training or when there are no running statistics.
  function cls:forward(x)
    check_input(name, x, dims, 2, self.num_features)
    local factor = self.momentum or 0.0
    if self.training and self.track_running_stats then
      torch.no_grad(function() self.num_batches_tracked:add_(1) end)
      if self.momentum == false then factor = 1.0 / self.num_batches_tracked:item() end
    end
    local use_batch = self.training or not self.track_running_stats
    local track = not self.training or self.track_running_stats
    return batch_norm(name, x, {running_mean = track and self.running_mean or nil,
                                running_var = track and self.running_var or nil, weight = self.weight,
                                bias = self.bias, training = use_batch, momentum = factor, eps = self.eps})
  end
end

batch_norm_layer("BatchNorm1d", {2, 3})
batch_norm_layer("BatchNorm2d", {4})

-- nn.InstanceNorm1d / nn.InstanceNorm2d: batched inputs of rank `rank` (channels at dim 2)
-- or unbatched of rank - 1 (channels at dim 1).
local function instance_norm_layer(name, rank)
  local cls = util.module_class(name)
  function cls:init(...)
    norm_base(self, name, {eps = 1e-5, momentum = 0.1, affine = false, track_running_stats = false}, ...)
    if self.momentum == false then fail(name, "momentum must be a number, got false") end
  end
  add_norm_methods(cls)
  function cls:forward(x)
    util.check_tensor(name, "input", x)
    local batched = x:dim() == rank
    check_input(name, x, {rank - 1, rank}, batched and 2 or 1, self.num_features)
    local input = batched and x or x:unsqueeze(1)
    local out = instance_norm(name, input, {running_mean = self.running_mean, running_var = self.running_var,
                                            weight = self.weight, bias = self.bias,
                                            use_input_stats = self.training or not self.track_running_stats,
                                            momentum = self.momentum, eps = self.eps})
    return batched and out or out:squeeze(1)
  end
end

instance_norm_layer("InstanceNorm1d", 3)
instance_norm_layer("InstanceNorm2d", 4)

---------------------------------------------------------------------------------------------
-- nn.GroupNorm(num_groups, num_channels[, eps=1e-5, affine=true]): weight ones, bias zeros.

local GroupNorm = util.module_class("GroupNorm")

function GroupNorm:init(...)
  local op = "GroupNorm"
  local o = util.args(op, {"num_groups", "num_channels", "eps", "affine", "device", "dtype"}, 2,
                      {eps = 1e-5, affine = true}, ...)
  self.num_groups = util.check_int(op, "num_groups", o.num_groups, 1)
  self.num_channels = util.check_int(op, "num_channels", o.num_channels, 1)
  if self.num_channels % self.num_groups ~= 0 then
    fail(op, "num_channels (%d) must be divisible by num_groups (%d)", self.num_channels, self.num_groups)
  end
  self.eps = util.check_number(op, "eps", o.eps)
  self.affine = util.check_bool(op, "affine", o.affine)
  if self.affine then
    self.weight = nn.Parameter(torch.ones({self.num_channels}, util.factory(o)))
    self.bias = nn.Parameter(torch.zeros({self.num_channels}, util.factory(o)))
  end
end

function GroupNorm:reset_parameters()
  if self.affine then
    init.ones_(self.weight)
    init.zeros_(self.bias)
  end
end

function GroupNorm:forward(x)
  util.check_tensor("GroupNorm", "input", x)
  if x:dim() < 2 or x.shape[2] ~= self.num_channels then
    fail("GroupNorm", "expected an input (N, %d, ...) with num_channels = %d channels at dim 2, got shape %s",
         self.num_channels, self.num_channels, shape_str(x.shape))
  end
  return group_norm("GroupNorm", x, {num_groups = self.num_groups, weight = self.weight, bias = self.bias,
                                     eps = self.eps})
end

function GroupNorm:extra_repr()
  return string.format("%d, %d, eps=%s, affine=%s", self.num_groups, self.num_channels, repr(self.eps),
                       tostring(self.affine))
end
