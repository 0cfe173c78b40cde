-- Convolution variants, pooling and resampling of torch.nn and torch.nn.functional: Conv1d,
-- ConvTranspose1d/2d, AvgPool2d, MaxPool1d, the adaptive pools, Upsample / F.interpolate and
-- PixelShuffle / PixelUnshuffle. The 1-D forms are the 2-D engine ops on a height-1 image;
-- transposed convolution and the 2-D pools are engine ops (bindings/bind_nn.cpp); the
-- adaptive pools and interpolation gather rows with index_select per spatial dim, so
-- autograd differentiates them and an inf or NaN reaches only the outputs that read it.
local torch = ...
local nn = torch.nn
local F, init, util = nn.functional, nn.init, nn._util
local fail, describe, shape_str, repr = util.fail, util.describe, util.shape_str, util.repr

---------------------------------------------------------------------------------------------
-- Shared checks

-- A size option of a 1-D layer: an integer or a table of one integer.
local function check_single(op, name, v, min)
  if type(v) == "table" and getmetatable(v) == nil then
    if #v ~= 1 then fail(op, "%s must be an integer or a table of 1 integer, got %d numbers", name, #v) end
    v = v[1]
  end
  return util.check_int(op, name, v, min)
end
util.check_single = check_single

-- padding_mode: only "zeros" (PyTorch's default) is implemented.
local function check_padding_mode(op, mode)
  if mode ~= "zeros" then
    fail(op, "padding_mode %s is not supported (only \"zeros\")", describe(mode))
  end
  return mode
end
util.check_padding_mode = check_padding_mode

-- An input of `ndim` spatial dims, batched or not: its shape checked, and whether batched.
local function check_input(op, input, ndim, what)
  util.check_float(op, "input", input)
  local d = input:dim()
  if d ~= ndim + 1 and d ~= ndim + 2 then
    fail(op, "expected input of shape %s, got %s", what, shape_str(input.shape))
  end
  return d == ndim + 2
end

---------------------------------------------------------------------------------------------
-- 1-D convolution and transposed convolution: the 2-D ops with a height-1 image.

-- The input (N, C, L) or (C, L) and a 3-D weight as height-1 images. The shapes are checked
-- here, so that errors name the 1-D op and its shapes rather than the 2-D op's.
local function as_2d(op, input, weight, bias, groups, transposed)
  check_input(op, input, 1, "(N, C, L) or (C, L)")
  util.check_tensor(op, "weight", weight)
  if weight:dim() ~= 3 then fail(op, "expected a 3-D weight, got shape %s", shape_str(weight.shape)) end
  local g = util.check_int(op, "groups", groups, 1)
  local C, ws = input.shape[input:dim() - 1], weight.shape
  local expects = transposed and ws[1] or ws[2] * g
  if C % g ~= 0 or C ~= expects then
    fail(op, "weight of shape %s with groups %d expects %d input channels, but the input of shape %s has %d",
         shape_str(ws), g, expects, shape_str(input.shape), C)
  end
  local out = transposed and ws[2] * g or ws[1]
  if out % g ~= 0 then fail(op, "groups %d must divide the %d output channels", g, out) end
  if bias ~= nil and not (torch.is_tensor(bias) and bias:dim() == 1 and bias.shape[1] == out) then
    fail(op, "bias must be a tensor of shape {%d}, got %s", out, torch.is_tensor(bias) and shape_str(bias.shape)
         or describe(bias))
  end
  return input:unsqueeze(-2), weight:unsqueeze(3)
end

-- The length of a window of k taps spaced by dilation must fit the padded input (compared
-- in floating point, so that huge sizes cannot wrap around).
local function check_extent(op, length, k, padding, dilation)
  local extent = dilation * (k - 1.0) + 1
  if length + 2.0 * padding < extent then
    fail(op, "the input's length %d (padded by %d on each side) is smaller than the kernel's extent %.0f (kernel " ..
         "%d, dilation %d)", length, padding, extent, k, dilation)
  end
end

function F.conv1d(input, weight, ...)
  local op = "conv1d"
  local o = util.args(op, {"bias", "stride", "padding", "dilation", "groups"}, 0,
                      {stride = 1, padding = 0, dilation = 1, groups = 1}, ...)
  local x, w = as_2d(op, input, weight, o.bias, o.groups, false)
  local stride, dilation = check_single(op, "stride", o.stride, 1), check_single(op, "dilation", o.dilation, 1)
  local padding = o.padding
  if type(padding) ~= "string" then
    padding = check_single(op, "padding", padding, 0)
    check_extent(op, input.shape[input:dim()], weight.shape[3], padding, dilation)
    padding = {0, padding}
  elseif padding == "valid" then
    check_extent(op, input.shape[input:dim()], weight.shape[3], 0, dilation)
  end
  local y = F.conv2d(x, w, o.bias, {stride = {1, stride}, padding = padding, dilation = {1, dilation}, groups = o.groups})
  return y:squeeze(-2)
end

-- output_padding from a requested output_size (the last `ndim` entries count): each size
-- must lie between the smallest output and that plus stride - 1, as PyTorch; output_size
-- lists the spatial sizes or the whole output shape.
local function output_padding_for(op, output_size, input, kernel, stride, padding, dilation)
  local ndim = #kernel
  if type(output_size) ~= "table" or getmetatable(output_size) ~= nil then
    fail(op, "output_size must be a table of sizes, got %s", describe(output_size))
  end
  local n, whole = #output_size, input:dim()
  if n ~= ndim and n ~= whole then
    fail(op, "output_size must have %d or %d entries for an input of shape %s, got %d", ndim, whole,
         shape_str(input.shape), n)
  end
  local shape, out = input.shape, {}
  for i = 1, ndim do
    local size = util.check_int(op, "output_size", output_size[n - ndim + i], 0)
    local in_size = shape[#shape - ndim + i]
    local min = (in_size - 1.0) * stride[i] - 2.0 * padding[i] + dilation[i] * (kernel[i] - 1.0) + 1
    local max = min + stride[i] - 1
    if size < min or size > max then
      fail(op, "requested an output size of %s, but the valid sizes along spatial dim %d are %.0f to %.0f (input " ..
           "of shape %s)", shape_str(output_size), i, min, max, shape_str(shape))
    end
    out[i] = size - math.tointeger(min)
  end
  return out
end

function F.conv_transpose2d(input, weight, ...)
  local op = "conv_transpose2d"
  local o = util.args(op, {"bias", "stride", "padding", "output_padding", "groups", "dilation"}, 0,
                      {stride = 1, padding = 0, output_padding = 0, groups = 1, dilation = 1}, ...)
  return torch.conv_transpose2d(input, weight, o.bias, {stride = o.stride, padding = o.padding,
                                                        output_padding = o.output_padding, groups = o.groups,
                                                        dilation = o.dilation})
end

function F.conv_transpose1d(input, weight, ...)
  local op = "conv_transpose1d"
  local o = util.args(op, {"bias", "stride", "padding", "output_padding", "groups", "dilation"}, 0,
                      {stride = 1, padding = 0, output_padding = 0, groups = 1, dilation = 1}, ...)
  local x, w = as_2d(op, input, weight, o.bias, o.groups, true)
  local stride, padding = check_single(op, "stride", o.stride, 1), check_single(op, "padding", o.padding, 0)
  local dilation = check_single(op, "dilation", o.dilation, 1)
  local output_padding = check_single(op, "output_padding", o.output_padding, 0)
  if output_padding >= stride and output_padding >= dilation then
    fail(op, "output_padding %d must be smaller than either stride %d or dilation %d", output_padding, stride, dilation)
  end
  local length = (input.shape[input:dim()] - 1.0) * stride - 2.0 * padding + dilation * (weight.shape[3] - 1.0)
                 + output_padding + 1
  if length < 1 then
    fail(op, "the output length %.0f is not positive (input length %d, kernel %d, stride %d, padding %d, dilation " ..
         "%d, output_padding %d)", length, input.shape[input:dim()], weight.shape[3], stride, padding, dilation,
         output_padding)
  end
  local y = torch.conv_transpose2d(x, w, o.bias, {stride = {1, stride}, padding = {0, padding},
                                                  output_padding = {0, output_padding}, groups = o.groups,
                                                  dilation = {1, dilation}})
  return y:squeeze(-2)
end

---------------------------------------------------------------------------------------------
-- Convolution layers: Conv1d, ConvTranspose1d, ConvTranspose2d. Weights as PyTorch:
-- (out, in/groups, k...) for Conv1d, (in, out/groups, k...) for the transposed ones, with
-- kaiming_uniform(a = sqrt(5)) and a bias U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

-- The options shared by the convolution layers, checked and stored on self; `sizes` reads a
-- size option (a pair for 2-D, a single integer kept as a table of one for 1-D).
local function conv_layer_init(self, op, o, transposed, sizes)
  self.in_channels = util.check_int(op, "in_channels", o.in_channels, 1)
  self.out_channels = util.check_int(op, "out_channels", o.out_channels, 1)
  self.kernel_size = sizes(op, "kernel_size", o.kernel_size, 1)
  self.stride = sizes(op, "stride", o.stride, 1)
  self.dilation = sizes(op, "dilation", o.dilation, 1)
  self.groups = util.check_int(op, "groups", o.groups, 1)
  self.padding_mode = check_padding_mode(op, o.padding_mode)
  for _, name in ipairs{"in_channels", "out_channels"} do
    if self[name] % self.groups ~= 0 then
      fail(op, "%s (%d) must be divisible by groups (%d)", name, self[name], self.groups)
    end
  end
  local shape = transposed and {self.in_channels, self.out_channels // self.groups}
                or {self.out_channels, self.in_channels // self.groups}
  for _, k in ipairs(self.kernel_size) do shape[#shape + 1] = k end
  local f = util.factory(o)
  self.weight = nn.Parameter(torch.empty(shape, f))
  if util.check_bool(op, "bias", o.bias) then self.bias = nn.Parameter(torch.empty({self.out_channels}, f)) end
  self:reset_parameters()
end

local function conv_reset_parameters(self)
  init.kaiming_uniform_(self.weight, {a = math.sqrt(5)})
  if self.bias ~= nil then
    local fan_in = self.weight.shape[2]
    for _, k in ipairs(self.kernel_size) do fan_in = fan_in * k end
    util.init_bias(self.bias, fan_in)
  end
end

-- As PyTorch: the options that differ from their defaults.
local function conv_extra_repr(self)
  local function is(v, d)
    if type(v) ~= "table" then return v == d end
    for _, x in ipairs(v) do if x ~= d then return false end end
    return true
  end
  local s = string.format("%d, %d, kernel_size=%s, stride=%s", self.in_channels, self.out_channels,
                          repr(self.kernel_size), repr(self.stride))
  if not is(self.padding, 0) then s = s .. ", padding=" .. repr(self.padding) end
  if not is(self.dilation, 1) then s = s .. ", dilation=" .. repr(self.dilation) end
  if self.output_padding and not is(self.output_padding, 0) then
    s = s .. ", output_padding=" .. repr(self.output_padding)
  end
  if self.groups ~= 1 then s = s .. ", groups=" .. self.groups end
  if self.bias == nil then s = s .. ", bias=false" end
  return s
end

local function single(op, name, v, min) return {check_single(op, name, v, min)} end

local Conv1d = util.module_class("Conv1d")

function Conv1d:init(...)
  local op = "Conv1d"
  local o = util.args(op, {"in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "groups",
                           "bias", "padding_mode", "device", "dtype"}, 3,
                      {stride = 1, padding = 0, dilation = 1, groups = 1, bias = true, padding_mode = "zeros"}, ...)
  conv_layer_init(self, op, o, false, single)
  -- "same" / "valid" are kept as given and checked now.
  local padding = util.conv_padding(op, type(o.padding) == "string" and o.padding or {0, check_single(op, "padding", o.padding, 0)},
                                    {1, self.kernel_size[1]}, {1, self.stride[1]}, {1, self.dilation[1]})
  self.padding = type(o.padding) == "string" and o.padding or {padding[2]}
end

Conv1d.reset_parameters = conv_reset_parameters
Conv1d.extra_repr = conv_extra_repr

function Conv1d:forward(x)
  local padding = type(self.padding) == "string" and self.padding or self.padding[1]
  return F.conv1d(x, self.weight, self.bias, {stride = self.stride[1], padding = padding,
                                               dilation = self.dilation[1], groups = self.groups})
end

-- The transposed layers: forward(x[, output_size]) picks output_padding from output_size.
local function transposed_layer(name, ndim, sizes, functional)
  local cls = util.module_class(name)
  function cls:init(...)
    local o = util.args(name, {"in_channels", "out_channels", "kernel_size", "stride", "padding", "output_padding",
                               "groups", "bias", "dilation", "padding_mode", "device", "dtype"}, 3,
                        {stride = 1, padding = 0, output_padding = 0, groups = 1, bias = true, dilation = 1,
                         padding_mode = "zeros"}, ...)
    conv_layer_init(self, name, o, true, sizes)
    self.padding = sizes(name, "padding", o.padding, 0)
    self.output_padding = sizes(name, "output_padding", o.output_padding, 0)
    for i = 1, ndim do
      if not (self.output_padding[i] < self.stride[i] or self.output_padding[i] < self.dilation[i]) then
        fail(name, "output_padding %s must be smaller than either stride %s or dilation %s",
             repr(self.output_padding), repr(self.stride), repr(self.dilation))
      end
    end
  end
  cls.reset_parameters = conv_reset_parameters
  cls.extra_repr = conv_extra_repr
  function cls:forward(x, output_size)
    local output_padding = self.output_padding
    if output_size ~= nil then
      util.check_tensor(name, "input", x)
      output_padding = output_padding_for(name, output_size, x, self.kernel_size, self.stride, self.padding,
                                          self.dilation)
    end
    local function arg(v) return ndim == 1 and v[1] or v end
    return functional(x, self.weight, self.bias, {stride = arg(self.stride), padding = arg(self.padding),
                                                  output_padding = arg(output_padding), groups = self.groups,
                                                  dilation = arg(self.dilation)})
  end
  return cls
end
transposed_layer("ConvTranspose1d", 1, single, F.conv_transpose1d)
transposed_layer("ConvTranspose2d", 2, util.check_pair, F.conv_transpose2d)

---------------------------------------------------------------------------------------------
-- Pooling

function F.avg_pool2d(input, ...)
  local op = "avg_pool2d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"}, 1,
                      {padding = 0, ceil_mode = false, count_include_pad = true}, ...)
  return torch.avg_pool2d(input, o.kernel_size, {stride = o.stride or o.kernel_size, padding = o.padding,
                                                 ceil_mode = o.ceil_mode, count_include_pad = o.count_include_pad,
                                                 divisor_override = o.divisor_override})
end

-- Window maxima of (N, C, L) or (C, L); with return_indices also the 1-based positions.
function F.max_pool1d(input, ...)
  local op = "max_pool1d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "dilation", "ceil_mode", "return_indices"}, 1,
                      {padding = 0, dilation = 1, ceil_mode = false, return_indices = false}, ...)
  check_input(op, input, 1, "(N, C, L) or (C, L)")
  local k = check_single(op, "kernel_size", o.kernel_size, 1)
  local stride = o.stride == nil and k or check_single(op, "stride", o.stride, 1)
  local padding, dilation = check_single(op, "padding", o.padding, 0), check_single(op, "dilation", o.dilation, 1)
  if padding > k // 2 then fail(op, "padding %d must be at most half the kernel size %d", padding, k) end
  check_extent(op, input.shape[input:dim()], k, padding, dilation)
  local y, idx = torch.max_pool2d(input:unsqueeze(-2), {1, k}, {
    stride = {1, stride}, padding = {0, padding}, dilation = {1, dilation}, ceil_mode = o.ceil_mode,
    return_indices = o.return_indices})
  if idx then return y:squeeze(-2), idx:squeeze(-2) end
  return y:squeeze(-2)
end

local AvgPool2d = util.module_class("AvgPool2d")

function AvgPool2d:init(...)
  local op = "AvgPool2d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"}, 1,
                      {padding = 0, ceil_mode = false, count_include_pad = true}, ...)
  util.check_pair(op, "kernel_size", o.kernel_size, 1)
  if o.stride ~= nil then util.check_pair(op, "stride", o.stride, 1) end
  util.check_pair(op, "padding", o.padding, 0)
  self.kernel_size, self.stride, self.padding = o.kernel_size, o.stride or o.kernel_size, o.padding
  self.ceil_mode = util.check_bool(op, "ceil_mode", o.ceil_mode)
  self.count_include_pad = util.check_bool(op, "count_include_pad", o.count_include_pad)
  if o.divisor_override ~= nil then self.divisor_override = util.check_int(op, "divisor_override", o.divisor_override, 1) end
end

function AvgPool2d:forward(x)
  return F.avg_pool2d(x, self.kernel_size, {stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
                                            count_include_pad = self.count_include_pad,
                                            divisor_override = self.divisor_override})
end

function AvgPool2d:extra_repr()
  return string.format("kernel_size=%s, stride=%s, padding=%s", repr(self.kernel_size), repr(self.stride),
                       repr(self.padding))
end

local MaxPool1d = util.module_class("MaxPool1d")

function MaxPool1d:init(...)
  local op = "MaxPool1d"
  local o = util.args(op, {"kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"}, 1,
                      {padding = 0, dilation = 1, return_indices = false, ceil_mode = false}, ...)
  check_single(op, "kernel_size", o.kernel_size, 1)
  if o.stride ~= nil then check_single(op, "stride", o.stride, 1) end
  check_single(op, "padding", o.padding, 0)
  check_single(op, "dilation", o.dilation, 1)
  self.kernel_size, self.stride = o.kernel_size, o.stride or o.kernel_size
  self.padding, self.dilation = o.padding, o.dilation
  self.return_indices = util.check_bool(op, "return_indices", o.return_indices)
  self.ceil_mode = util.check_bool(op, "ceil_mode", o.ceil_mode)
end

function MaxPool1d:forward(x)
  return F.max_pool1d(x, self.kernel_size, {stride = self.stride, padding = self.padding, dilation = self.dilation,
                                            ceil_mode = self.ceil_mode, return_indices = self.return_indices})
end

function MaxPool1d:extra_repr()
  return string.format("kernel_size=%s, stride=%s, padding=%s, dilation=%s, ceil_mode=%s", repr(self.kernel_size),
                       repr(self.stride), repr(self.padding), repr(self.dilation), tostring(self.ceil_mode))
end

-- The windows of an adaptive pool of `n` positions into `out`: window i covers
-- floor(i n / out) .. ceil((i + 1) n / out) - 1 (0-based). Returns the 1-based positions as an
-- (out, width) int64 tensor padded with each window's first position, the mask of the real
-- ones, and the window lengths.
local function adaptive_windows(op, n, out, device)
  if out > math.maxinteger // math.max(n, 1) then
    fail(op, "output_size %d is too large for an input size of %d", out, n)
  end
  local i = torch.arange(0, out, {dtype = "int64", device = device})
  local starts = (i * n):floor_divide(out)
  local lens = -((-(i + 1) * n):floor_divide(out)) - starts
  local width = out > 0 and lens:max():item() or 0
  local j = torch.arange(0, width, {dtype = "int64", device = device}):reshape(1, width)
  local mask = j:lt(lens:reshape(out, 1))
  local idx = torch.where(mask, starts:reshape(out, 1) + j, starts:reshape(out, 1)) + 1
  return idx, mask, lens:to("float64")
end

-- An adaptive pool's input (N, C, H, W) or (C, H, W) with H, W > 0 (every window holds at
-- least one element).
local function check_adaptive_input(op, input)
  check_input(op, input, 2, "(N, C, H, W) or (C, H, W)")
  local shape = input.shape
  if shape[#shape] == 0 or shape[#shape - 1] == 0 then
    fail(op, "expected an input with non-empty spatial dims, got shape %s", shape_str(shape))
  end
end

-- The output size of an adaptive pool: an integer or a pair of integers.
local function adaptive_size(op, output_size)
  local pair = type(output_size) == "table" and getmetatable(output_size) == nil
  if pair and #output_size ~= 2 then
    fail(op, "output_size must be an integer or a table of 2 entries, got %d entries", #output_size)
  end
  local sizes = pair and {output_size[1], output_size[2]} or {output_size, output_size}
  for i = 1, 2 do
    sizes[i] = util.check_int(op, "output_size", sizes[i], 1)
  end
  return sizes
end

-- The windows of dim `dim` (negative: from the end) of x gathered into a new dim after it:
-- (..., n, ...) -> (..., out, width, ...), with `fill` where a window is shorter.
local function gather_windows(op, x, dim, out, fill)
  local n = x.shape[x:dim() + 1 + dim]
  local idx, mask, lens = adaptive_windows(op, n, out, x.device)
  local width = idx.shape[2]
  local picked = x:index_select(dim, idx:reshape(-1))
  local shape = x.shape
  local at = #shape + 1 + dim
  shape[at] = width
  table.insert(shape, at, out)
  picked = picked:reshape(shape)
  local mshape = {}
  for i = 1, #shape do mshape[i] = 1 end
  mshape[at], mshape[at + 1] = out, width
  return torch.where(mask:reshape(mshape), picked, fill), at, idx, lens
end

function F.adaptive_avg_pool2d(input, ...)
  local op = "adaptive_avg_pool2d"
  local o = util.args(op, {"output_size"}, 1, {}, ...)
  check_adaptive_input(op, input)
  local size = adaptive_size(op, o.output_size)
  local y = input
  for i, dim in ipairs{-1, -2} do
    local win, at, _, lens = gather_windows(op, y, dim, size[3 - i], 0)
    local lshape = {}
    for j = 1, win:dim() - 1 do lshape[j] = 1 end
    lshape[at] = size[3 - i]
    y = win:sum(at + 1) / lens:to(input.dtype):reshape(lshape)
  end
  return y
end

-- The 1-based input positions that the maxima of gather_windows picked: `chosen` holds
-- each one's place within its window, windows along dim `at` of chosen.
local function window_positions(idx, chosen, at)
  local out, width = idx.shape[1], idx.shape[2]
  local oshape = {}
  for i = 1, chosen:dim() do oshape[i] = 1 end
  oshape[at] = out
  local offsets = (torch.arange(0, out, {device = chosen.device}) * width):reshape(oshape)
  return idx:reshape(-1):index_select(1, (chosen + offsets):reshape(-1)):reshape(chosen.shape)
end

-- Window maxima, rows then columns; with return_indices also the 1-based flat (H, W)
-- position of each maximum.
function F.adaptive_max_pool2d(input, ...)
  local op = "adaptive_max_pool2d"
  local o = util.args(op, {"output_size", "return_indices"}, 1, {return_indices = false}, ...)
  check_adaptive_input(op, input)
  local size = adaptive_size(op, o.output_size)
  local with_indices = util.check_bool(op, "return_indices", o.return_indices)
  local rows, rat, ridx = gather_windows(op, input, -2, size[1], -math.huge)
  local rmax, rarg = rows:max(rat + 1)
  local cols, cat_, cidx = gather_windows(op, rmax, -1, size[2], -math.huge)
  local cmax, carg = cols:max(cat_ + 1)
  if not with_indices then return cmax end
  local row = window_positions(ridx, rarg, rat)  -- (..., Ho, W): the row of each column's maximum
  local col = window_positions(cidx, carg, cat_)  -- (..., Ho, Wo)
  local W = input.shape[input:dim()]
  return cmax, (torch.gather(row, -1, col) - 1) * W + col
end

---------------------------------------------------------------------------------------------
-- Pixel shuffle

local function check_factor(op, name, v) return util.check_int(op, name, v, 1) end

-- (*, C r^2, H, W) -> (*, C, H r, W r).
function F.pixel_shuffle(input, upscale_factor)
  local op = "pixel_shuffle"
  util.check_tensor(op, "input", input)
  local r = check_factor(op, "upscale_factor", upscale_factor)
  local shape = input.shape
  local n = #shape
  if n < 3 then fail(op, "expected an input of at least 3 dims (*, C, H, W), got shape %s", shape_str(shape)) end
  local C, H, W = shape[n - 2], shape[n - 1], shape[n]
  if 1.0 * r * r > C or C % (r * r) ~= 0 then
    fail(op, "the channel count %d is not divisible by upscale_factor^2 = %.0f", C, 1.0 * r * r)
  end
  local lead = {table.unpack(shape, 1, n - 3)}
  local b = #lead
  local split = {table.unpack(lead)}
  for _, s in ipairs{C // (r * r), r, r, H, W} do split[#split + 1] = s end
  local perm = {}
  for i = 1, b do perm[i] = i end
  for _, p in ipairs{1, 4, 2, 5, 3} do perm[#perm + 1] = b + p end
  local out = {table.unpack(lead)}
  for _, s in ipairs{C // (r * r), H * r, W * r} do out[#out + 1] = s end
  return input:reshape(split):permute(perm):reshape(out)
end

-- (*, C, H r, W r) -> (*, C r^2, H, W).
function F.pixel_unshuffle(input, downscale_factor)
  local op = "pixel_unshuffle"
  util.check_tensor(op, "input", input)
  local r = check_factor(op, "downscale_factor", downscale_factor)
  local shape = input.shape
  local n = #shape
  if n < 3 then fail(op, "expected an input of at least 3 dims (*, C, H, W), got shape %s", shape_str(shape)) end
  local C, H, W = shape[n - 2], shape[n - 1], shape[n]
  if H % r ~= 0 or W % r ~= 0 then
    fail(op, "the height %d and width %d must be divisible by downscale_factor %d", H, W, r)
  end
  local lead = {table.unpack(shape, 1, n - 3)}
  local b = #lead
  local split = {table.unpack(lead)}
  for _, s in ipairs{C, H // r, r, W // r, r} do split[#split + 1] = s end
  local perm = {}
  for i = 1, b do perm[i] = i end
  for _, p in ipairs{1, 3, 5, 2, 4} do perm[#perm + 1] = b + p end
  local out = {table.unpack(lead)}
  for _, s in ipairs{C * r * r, H // r, W // r} do out[#out + 1] = s end
  return input:reshape(split):permute(perm):reshape(out)
end

---------------------------------------------------------------------------------------------
-- Resampling: F.interpolate and Upsample, modes "nearest" (1-D and 2-D), "linear" (1-D) and
-- "bilinear" (2-D), with PyTorch's source positions. One spatial dim at a time (the last
-- first), so that bilinear sums in PyTorch's order.

local f32 = function(v) return (string.unpack("f", string.pack("f", v))) end

-- The output sizes and the scales the kernels use (1/scale_factor when given and not
-- recomputed, else in/out).
local function resample_sizes(op, o, spatial)
  if (o.size == nil) == (o.scale_factor == nil) then fail(op, "exactly one of size and scale_factor must be given") end
  local sizes, scales = {}, {}
  local function per_dim(v, name)
    if type(v) == "table" and getmetatable(v) == nil then
      if #v ~= #spatial then fail(op, "%s must have %d entries (one per spatial dim), got %d", name, #spatial, #v) end
      return v
    end
    local t = {}
    for i = 1, #spatial do t[i] = v end
    return t
  end
  if o.size ~= nil then
    if o.recompute_scale_factor then fail(op, "recompute_scale_factor is not meaningful with an explicit size") end
    for i, s in ipairs(per_dim(o.size, "size")) do sizes[i] = util.check_int(op, "size", s, 1) end
  else
    local recompute = o.recompute_scale_factor ~= nil and util.check_bool(op, "recompute_scale_factor",
                                                                           o.recompute_scale_factor)
    for i, s in ipairs(per_dim(o.scale_factor, "scale_factor")) do
      util.check_number(op, "scale_factor", s)
      if not (s > 0 and s < math.huge) then fail(op, "scale_factor must be positive and finite, got %s", describe(s)) end
      sizes[i] = math.tointeger(math.floor(spatial[i] * s))
      if sizes[i] == nil then
        fail(op, "scale_factor %s gives an output size beyond 2^63 for an input size of %d", describe(s), spatial[i])
      end
      if sizes[i] < 1 then
        fail(op, "scale_factor %s gives an empty output for an input size of %d", describe(s), spatial[i])
      end
      if not recompute then scales[i] = 1 / s end
    end
  end
  return sizes, scales
end

-- Nearest: output i reads input min(floor(i * scale), n - 1), in float32 as PyTorch. Returns
-- the 1-based positions (int64).
local function nearest_index(n, out, scale, device)
  local i = torch.arange(0, out, {dtype = "int64", device = device})
  if out == n then return i + 1 end
  if out == 2 * n then return i:floor_divide(2) + 1 end
  local src = (i:to("float32") * f32(scale or n / out)):floor():to("int64")
  return src:clamp({max = n - 1}) + 1
end

-- Linear: output i reads inputs i0 and i1 (1-based, int64) with weights l0, l1 (float64).
local function linear_weights(n, out, scale, align_corners, device)
  local s
  if align_corners then s = out > 1 and (n - 1) / (out - 1) or 0 else s = scale or n / out end
  local i = torch.arange(0, out, {dtype = "float64", device = device})
  local src = align_corners and i * s or ((i + 0.5) * s - 0.5):clamp({min = 0})
  local h = src:floor()
  local l1 = src - h
  local h0 = h:to("int64")
  return h0 + 1, h0 + h0:lt(n - 1):to("int64") + 1, 1 - l1, l1
end

local LINEAR_MODES = {linear = 1, bilinear = 2}

function F.interpolate(input, ...)
  local op = "interpolate"
  local o = util.args(op, {"size", "scale_factor", "mode", "align_corners", "recompute_scale_factor", "antialias"}, 0,
                      {mode = "nearest", antialias = false}, ...)
  util.check_float(op, "input", input)
  local mode = o.mode
  local spatial_dims = input:dim() - 2
  if spatial_dims < 1 then fail(op, "expected an input of shape (N, C, ...) with spatial dims, got %s", shape_str(input.shape)) end
  if mode ~= "nearest" and mode ~= "linear" and mode ~= "bilinear" then
    fail(op, "mode %s is not supported (\"nearest\", \"linear\" or \"bilinear\")", describe(mode))
  end
  if mode ~= "nearest" and LINEAR_MODES[mode] ~= spatial_dims then
    fail(op, "mode %s needs a %d-D input, got shape %s", describe(mode), LINEAR_MODES[mode] + 2, shape_str(input.shape))
  end
  if spatial_dims > 2 then fail(op, "expected a 3-D or 4-D input, got shape %s", shape_str(input.shape)) end
  if o.align_corners ~= nil and mode == "nearest" then
    fail(op, "align_corners can only be given with the linear modes, not mode \"nearest\"")
  end
  local align = o.align_corners ~= nil and util.check_bool(op, "align_corners", o.align_corners)
  if util.check_bool(op, "antialias", o.antialias) then fail(op, "antialias=true is not supported") end
  local shape = input.shape
  local spatial = {table.unpack(shape, 3)}
  local sizes, scales = resample_sizes(op, o, spatial)
  local count = 1.0 * shape[1] * shape[2]
  for _, n in ipairs(sizes) do count = count * n end
  if count >= 2.0 ^ 62 then fail(op, "an output of spatial size %s is too large", shape_str(sizes)) end
  local y = input
  for i = spatial_dims, 1, -1 do
    local dim, n = 2 + i, spatial[i]
    if mode == "nearest" then
      y = y:index_select(dim, nearest_index(n, sizes[i], scales[i], input.device))
    else
      local i0, i1, l0, l1 = linear_weights(n, sizes[i], scales[i], align, input.device)
      local wshape = {}
      for d = 1, y:dim() do wshape[d] = 1 end
      wshape[dim] = sizes[i]
      y = y:index_select(dim, i0) * l0:to(input.dtype):reshape(wshape)
          + y:index_select(dim, i1) * l1:to(input.dtype):reshape(wshape)
    end
  end
  return y
end

local Upsample = util.module_class("Upsample")

function Upsample:init(...)
  local op = "Upsample"
  local o = util.args(op, {"size", "scale_factor", "mode", "align_corners", "recompute_scale_factor"}, 0,
                      {mode = "nearest"}, ...)
  self.size, self.scale_factor, self.mode = o.size, o.scale_factor, o.mode
  self.align_corners, self.recompute_scale_factor = o.align_corners, o.recompute_scale_factor
end

function Upsample:forward(x)
  return F.interpolate(x, {size = self.size, scale_factor = self.scale_factor, mode = self.mode,
                           align_corners = self.align_corners, recompute_scale_factor = self.recompute_scale_factor})
end

function Upsample:extra_repr()
  local s = self.scale_factor ~= nil and "scale_factor=" .. repr(self.scale_factor) or "size=" .. repr(self.size)
  return s .. ", mode=" .. repr(self.mode)
end

---------------------------------------------------------------------------------------------
-- Layers of the adaptive pools and the pixel shuffles.

local AdaptiveAvgPool2d = util.module_class("AdaptiveAvgPool2d")

function AdaptiveAvgPool2d:init(...)
  local o = util.args("AdaptiveAvgPool2d", {"output_size"}, 1, {}, ...)
  adaptive_size("AdaptiveAvgPool2d", o.output_size)
  self.output_size = o.output_size
end

function AdaptiveAvgPool2d:forward(x) return F.adaptive_avg_pool2d(x, self.output_size) end
function AdaptiveAvgPool2d:extra_repr() return "output_size=" .. repr(self.output_size) end

local AdaptiveMaxPool2d = util.module_class("AdaptiveMaxPool2d")

function AdaptiveMaxPool2d:init(...)
  local op = "AdaptiveMaxPool2d"
  local o = util.args(op, {"output_size", "return_indices"}, 1, {return_indices = false}, ...)
  adaptive_size(op, o.output_size)
  self.output_size = o.output_size
  self.return_indices = util.check_bool(op, "return_indices", o.return_indices)
end

function AdaptiveMaxPool2d:forward(x)
  return F.adaptive_max_pool2d(x, self.output_size, {return_indices = self.return_indices})
end
function AdaptiveMaxPool2d:extra_repr() return "output_size=" .. repr(self.output_size) end

for _, spec in ipairs{{"PixelShuffle", "upscale_factor", F.pixel_shuffle},
                      {"PixelUnshuffle", "downscale_factor", F.pixel_unshuffle}} do
  local name, factor, fn = spec[1], spec[2], spec[3]
  local cls = util.module_class(name)
  function cls:init(...)
    local o = util.args(name, {factor}, 1, {}, ...)
    self[factor] = check_factor(name, factor, o[factor])
  end
  function cls:forward(x) return fn(x, self[factor]) end
  function cls:extra_repr() return factor .. "=" .. self[factor] end
end
