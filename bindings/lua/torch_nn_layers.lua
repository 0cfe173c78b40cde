-- torch.nn layers and loss modules: constructors with PyTorch's arguments (positional or a
-- trailing keyword table), PyTorch's default initialisation from the torch generator, and
-- forwards through nn.functional. Dims are 1-based (nn.Softmax(2), nn.Flatten() starts at 2).
local torch = ...
local nn = torch.nn
local F, init, util = nn.functional, nn.init, nn._util
local fail, repr = util.fail, util.repr

-- The creation options of a layer's parameters: {dtype=, device=} with the defaults filled
-- in (an empty table would read as a shape).
local function factory(o)
  return {dtype = o.dtype or torch.get_default_dtype(), device = o.device or "cpu"}
end
util.factory = factory

-- U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for a bias, as PyTorch's Linear and Conv2d do.
local function init_bias(bias, fan_in)
  local bound = fan_in > 0 and 1 / math.sqrt(fan_in) or 0
  init.uniform_(bias, -bound, bound)
end
util.init_bias = init_bias

---------------------------------------------------------------------------------------------
-- Linear

local Linear = util.module_class("Linear")

function Linear:init(...)
  local o = util.args("Linear", {"in_features", "out_features", "bias", "device", "dtype"}, 2, {bias = true}, ...)
  self.in_features = util.check_int("Linear", "in_features", o.in_features, 0)
  self.out_features = util.check_int("Linear", "out_features", o.out_features, 0)
  self.weight = nn.Parameter(torch.empty({self.out_features, self.in_features}, factory(o)))
  if util.check_bool("Linear", "bias", o.bias) then
    self.bias = nn.Parameter(torch.empty({self.out_features}, factory(o)))
  end
  self:reset_parameters()
end

-- Weight: Kaiming-uniform with a = sqrt(5), i.e. U(-1/sqrt(in), 1/sqrt(in)); bias likewise.
function Linear:reset_parameters()
  init.kaiming_uniform_(self.weight, {a = math.sqrt(5)})
  if self.bias ~= nil then init_bias(self.bias, self.in_features) end
end

function Linear:forward(x) return torch.linear(x, self.weight, self.bias) end

function Linear:extra_repr()
  return string.format("in_features=%d, out_features=%d, bias=%s", self.in_features, self.out_features,
                       tostring(self.bias ~= nil))
end

---------------------------------------------------------------------------------------------
-- Conv2d and MaxPool2d

local Conv2d = util.module_class("Conv2d")

function Conv2d:init(...)
  local op = "Conv2d"
  local o = util.args(op, {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                           "bias", "padding_mode", "device", "dtype"}, 3,
                      {stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, padding_mode = "zeros"}, ...)
  self.in_channels = util.check_int(op, "in_channels", o.in_channels, 1)
  self.out_channels = util.check_int(op, "out_channels", o.out_channels, 1)
  self.kernel_size = util.check_pair(op, "kernel_size", o.kernel_size, 1)
  self.stride = util.check_pair(op, "stride", o.stride, 1)
  self.dilation = util.check_pair(op, "dilation", o.dilation, 1)
  self.groups = util.check_int(op, "groups", o.groups, 1)
  self.padding_mode = util.check_padding_mode(op, o.padding_mode)
  -- Checked now; a "same" or "valid" string is kept as given and resolved by F.conv2d.
  local padding = util.conv_padding(op, o.padding, self.kernel_size, self.stride, self.dilation)
  self.padding = type(o.padding) == "string" and o.padding or padding
  for _, name in ipairs{"in_channels", "out_channels"} do
    if self[name] % self.groups ~= 0 then
      fail(op, "%s (%d) must be divisible by groups (%d)", name, self[name], self.groups)
    end
  end
  self.weight = nn.Parameter(torch.empty({self.out_channels, self.in_channels // self.groups,
                                          self.kernel_size[1], self.kernel_size[2]}, factory(o)))
  if util.check_bool(op, "bias", o.bias) then
    self.bias = nn.Parameter(torch.empty({self.out_channels}, factory(o)))
  end
  self:reset_parameters()
end

function Conv2d:reset_parameters()
  init.kaiming_uniform_(self.weight, {a = math.sqrt(5)})
  if self.bias ~= nil then
    init_bias(self.bias, self.in_channels // self.groups * self.kernel_size[1] * self.kernel_size[2])
  end
end

function Conv2d:forward(x)
  return F.conv2d(x, self.weight, self.bias, {stride = self.stride, padding = self.padding,
                                               dilation = self.dilation, groups = self.groups})
end

-- As PyTorch: padding, dilation and groups only when not the default, bias=false when off.
function Conv2d:extra_repr()
  local s = string.format("%d, %d, kernel_size=%s, stride=%s", self.in_channels, self.out_channels,
                          repr(self.kernel_size), repr(self.stride))
  local p, d = self.padding, self.dilation
  if type(p) == "string" or p[1] ~= 0 or p[2] ~= 0 then s = s .. ", padding=" .. repr(p) end
  if d[1] ~= 1 or d[2] ~= 1 then s = s .. ", dilation=" .. repr(d) end
  if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
  if self.bias == nil then s = s .. ", bias=false" end
  return s
end

local MaxPool2d = util.module_class("MaxPool2d")

-- Sizes are kept as given (a number or a pair) for printing; stride defaults to kernel_size.
function MaxPool2d:init(...)
  local op = "MaxPool2d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"}, 1,
                      {padding = 0, dilation = 1, return_indices = false, ceil_mode = false}, ...)
  util.check_pair(op, "kernel_size", o.kernel_size, 1)
  if o.stride ~= nil then util.check_pair(op, "stride", o.stride, 1) end
  util.check_pair(op, "padding", o.padding, 0)
  util.check_pair(op, "dilation", o.dilation, 1)
  self.kernel_size, self.stride = o.kernel_size, o.stride or o.kernel_size
  self.padding, self.dilation = o.padding, o.dilation
  self.return_indices = util.check_bool(op, "return_indices", o.return_indices)
  self.ceil_mode = util.check_bool(op, "ceil_mode", o.ceil_mode)
end

function MaxPool2d:forward(x)
  return F.max_pool2d(x, self.kernel_size, {stride = self.stride, padding = self.padding, dilation = self.dilation,
                                            ceil_mode = self.ceil_mode, return_indices = self.return_indices})
end

function MaxPool2d:extra_repr()
  return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s", repr(self.kernel_size),
                       repr(self.stride), repr(self.padding), repr(self.dilation), tostring(self.ceil_mode))
end

---------------------------------------------------------------------------------------------
-- Embedding, LayerNorm, Dropout, Flatten

local Embedding = util.module_class("Embedding")

function Embedding:init(...)
  local op = "Embedding"
  local o = util.args(op, {"num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type",
                           "scale_grad_by_freq", "sparse", "device", "dtype"}, 2, {}, ...)
  -- PyTorch's positional order; the options that change the lookup are not supported.
  for _, name in ipairs{"max_norm", "norm_type", "scale_grad_by_freq", "sparse"} do
    if o[name] ~= nil then fail(op, "%s is not supported (got %s)", name, util.describe(o[name])) end
  end
  self.num_embeddings = util.check_int(op, "num_embeddings", o.num_embeddings, 0)
  self.embedding_dim = util.check_int(op, "embedding_dim", o.embedding_dim, 0)
  if o.padding_idx ~= nil then self.padding_idx = util.padding_index(op, o.padding_idx, self.num_embeddings) end
  self.weight = nn.Parameter(torch.empty({self.num_embeddings, self.embedding_dim}, factory(o)))
  self:reset_parameters()
end

-- N(0, 1), with the padding row zero.
function Embedding:reset_parameters()
  init.normal_(self.weight)
  if self.padding_idx ~= nil then
    torch.no_grad(function() self.weight[self.padding_idx]:zero_() end)
  end
end

function Embedding:forward(input)
  return F.embedding(input, self.weight, {padding_idx = self.padding_idx})
end

function Embedding:extra_repr()
  local s = string.format("%d, %d", self.num_embeddings, self.embedding_dim)
  if self.padding_idx ~= nil then s = s .. ", padding_idx=" .. self.padding_idx end
  return s
end

local LayerNorm = util.module_class("LayerNorm")

function LayerNorm:init(...)
  local op = "LayerNorm"
  local o = util.args(op, {"normalized_shape", "eps", "elementwise_affine", "device", "dtype"}, 1,
                      {eps = 1e-5, elementwise_affine = true}, ...)
  local shape = type(o.normalized_shape) == "table" and o.normalized_shape or {o.normalized_shape}
  if #shape == 0 then fail(op, "normalized_shape must have at least one size") end
  self.normalized_shape = {}
  for i, n in ipairs(shape) do self.normalized_shape[i] = util.check_int(op, "normalized_shape", n, 0) end
  self.eps = util.check_number(op, "eps", o.eps)
  self.elementwise_affine = util.check_bool(op, "elementwise_affine", o.elementwise_affine)
  if self.elementwise_affine then
    self.weight = nn.Parameter(torch.ones(self.normalized_shape, factory(o)))
    self.bias = nn.Parameter(torch.zeros(self.normalized_shape, factory(o)))
  end
end

function LayerNorm:reset_parameters()
  if self.elementwise_affine then
    init.ones_(self.weight)
    init.zeros_(self.bias)
  end
end

function LayerNorm:forward(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
end

function LayerNorm:extra_repr()
  return string.format("%s, eps=%s, elementwise_affine=%s", repr(self.normalized_shape), repr(self.eps),
                       tostring(self.elementwise_affine))
end

local Dropout = util.module_class("Dropout")

function Dropout:init(...)
  local o = util.args("Dropout", {"p"}, 0, {p = 0.5}, ...)
  local p = util.check_number("Dropout", "p", o.p)
  if not (p >= 0 and p <= 1) then fail("Dropout", "p must be between 0 and 1, got %s", repr(p)) end
  self.p = p
end

function Dropout:forward(x) return F.dropout(x, self.p, self.training) end
function Dropout:extra_repr() return "p=" .. repr(self.p) end

local Flatten = util.module_class("Flatten")

-- Flattens dims start_dim..end_dim; the default keeps the batch dim (PyTorch's start_dim=1
-- is dim 2 here).
function Flatten:init(...)
  local o = util.args("Flatten", {"start_dim", "end_dim"}, 0, {start_dim = 2, end_dim = -1}, ...)
  self.start_dim = util.check_int("Flatten", "start_dim", o.start_dim, math.mininteger)
  self.end_dim = util.check_int("Flatten", "end_dim", o.end_dim, math.mininteger)
end

function Flatten:forward(x)
  return util.check_tensor("Flatten", "input", x):flatten(self.start_dim, self.end_dim)
end
function Flatten:extra_repr() return string.format("start_dim=%d, end_dim=%d", self.start_dim, self.end_dim) end

-- nn.Unflatten(dim, unflattened_size): dim (1-based) split into the given sizes.
local Unflatten = util.module_class("Unflatten")

function Unflatten:init(...)
  local op = "Unflatten"
  local o = util.args(op, {"dim", "unflattened_size"}, 2, {}, ...)
  self.dim = util.check_int(op, "dim", o.dim, math.mininteger)
  local sizes = o.unflattened_size
  if type(sizes) ~= "table" or getmetatable(sizes) ~= nil or #sizes == 0 then
    fail(op, "unflattened_size must be a table of sizes, got %s", util.describe(sizes))
  end
  self.unflattened_size = {}
  for i, n in ipairs(sizes) do self.unflattened_size[i] = util.check_int(op, "unflattened_size", n, -1) end
end

function Unflatten:forward(x)
  return util.check_tensor("Unflatten", "input", x):unflatten(self.dim, self.unflattened_size)
end
function Unflatten:extra_repr()
  return string.format("dim=%d, unflattened_size=%s", self.dim, repr(self.unflattened_size))
end

-- nn.Identity(...): returns its input. As in PyTorch it takes any arguments and ignores
-- them, so that it can stand in for a layer with options.
local Identity = util.module_class("Identity")
function Identity:init(...) end
function Identity:forward(x) return x end

---------------------------------------------------------------------------------------------
-- Activations

-- A layer without options that applies fn.
local function activation(name, fn)
  local cls = util.module_class(name)
  function cls:init(...) util.args(name, {}, 0, {}, ...) end
  function cls:forward(x) return fn(x) end
end

activation("ReLU", F.relu)
activation("Sigmoid", F.sigmoid)
activation("Tanh", F.tanh)

local GELU = util.module_class("GELU")

function GELU:init(...)
  local o = util.args("GELU", {"approximate"}, 0, {approximate = "none"}, ...)
  if o.approximate ~= "none" and o.approximate ~= "tanh" then
    fail("GELU", "approximate must be \"none\" or \"tanh\", got %s", util.describe(o.approximate))
  end
  self.approximate = o.approximate
end

function GELU:forward(x) return F.gelu(x, {approximate = self.approximate}) end
function GELU:extra_repr() return "approximate=" .. repr(self.approximate) end

-- A layer over one dim (1-based, negative from the end): Softmax, LogSoftmax.
local function dim_layer(name, fn)
  local cls = util.module_class(name)
  function cls:init(...)
    local o = util.args(name, {"dim"}, 1, {}, ...)
    self.dim = util.check_int(name, "dim", o.dim, math.mininteger)
  end
  function cls:forward(x) return fn(x, self.dim) end
  function cls:extra_repr() return "dim=" .. self.dim end
end

dim_layer("Softmax", F.softmax)
dim_layer("LogSoftmax", F.log_softmax)

---------------------------------------------------------------------------------------------
-- Loss modules: nn.MSELoss{reduction="sum"}, nn.CrossEntropyLoss{weight=w, ignore_index=1},
-- ... Their options are those of the functional form; tensor options (class weights,
-- pos_weight) are buffers, so to() and state_dict() carry them as in PyTorch.

-- nn[name]: options `names` (PyTorch's order, without the deprecated size_average and
-- reduce) with `defaults` (reduction "mean" unless given); `tensor_options` name those kept
-- as buffers; `reductions` the valid reductions (default mean/sum/none); `inputs` how many
-- tensors forward takes (2: input and target; 3 for the losses of pairs and triplets).
local function loss(name, fn, names, tensor_options, defaults, inputs, reductions)
  local cls = util.module_class(name)
  defaults = defaults or {}
  if defaults.reduction == nil then defaults.reduction = "mean" end
  function cls:init(...)
    local o = util.args(name, names, 0, defaults, ...)
    util.check_reduction(name, o.reduction, reductions)
    for _, k in ipairs(names) do
      if tensor_options[k] then
        self:register_buffer(k, o[k] ~= nil and util.check_tensor(name, k, o[k]) or nil)
      else
        self[k] = o[k]
      end
    end
  end
  local function options(self)
    local kw = {}
    for _, k in ipairs(names) do kw[k] = self[k] end
    return kw
  end
  if inputs == 3 then
    function cls:forward(a, b, c) return fn(a, b, c, options(self)) end
  elseif #names == 1 then
    -- A sole option (MSELoss's and L1Loss's reduction) goes positionally, as their functions
    -- take it: a training step then builds no keyword table for the loss.
    local name = names[1]
    function cls:forward(input, target) return fn(input, target, self[name]) end
  else
    function cls:forward(input, target) return fn(input, target, options(self)) end
  end
end
util.loss_class = loss

loss("MSELoss", F.mse_loss, {"reduction"}, {})
loss("L1Loss", F.l1_loss, {"reduction"}, {})
loss("CrossEntropyLoss", F.cross_entropy, {"weight", "ignore_index", "reduction", "label_smoothing"}, {weight = true})
loss("NLLLoss", F.nll_loss, {"weight", "ignore_index", "reduction"}, {weight = true})
loss("BCELoss", F.binary_cross_entropy, {"weight", "reduction"}, {weight = true})
loss("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits, {"weight", "reduction", "pos_weight"},
     {weight = true, pos_weight = true})
