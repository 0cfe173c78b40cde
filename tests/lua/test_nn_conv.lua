-- The convolution variants, pooling and resampling layers (bindings/lua/torch_nn_conv.lua):
-- their errors, parameter names, shapes and initialisation, reprs, unbatched inputs, and a
-- checkpoint PyTorch 1.13 wrote loading with PyTorch's outputs. The values themselves are
-- checked against PyTorch in tests/conformance/ops_nn_conv.lua.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn, F = torch.nn, torch.nn.functional

local x4 = torch.randn(1, 4, 5, 5)

T.test("transposed convolution: errors name the op and the values", function()
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(4, 2, 3, 3), nil, {groups = 3}) end,
    "conv_transpose2d: groups 3 must be positive and divide in_channels 4")
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(3, 2, 3, 3)) end,
    "conv_transpose2d: weight of shape {3,2,3,3} expects 3 input channels, but the input of shape {1,4,5,5} has 4")
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(4, 2, 3, 3), nil, {stride = 2, output_padding = 2}) end,
    "conv_transpose2d: output_padding 2 must be non-negative and smaller than either stride 2 or dilation 1")
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(4, 2, 3, 3), nil, {padding = 4}) end,
    "conv_transpose2d: the output size -1 along spatial dim 1 is not positive (input 5, kernel 3, stride 1, " ..
    "padding 4, dilation 1, output_padding 0)")
  T.error_usable(function() F.conv_transpose2d(x4:to("int64"), torch.randn(4, 2, 3, 3)) end,
    "conv_transpose2d: input must be a floating-point tensor, got int64")
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(4, 2, 3, 3), torch.randn(3)) end,
    "conv_transpose2d: bias must have shape {2}, got {3}")
  T.error_usable(function() F.conv_transpose2d(x4, torch.randn(4, 2, 3, 3), nil, {foo = 1}) end,
    "conv_transpose2d: unknown keyword 'foo'")
  T.error_usable(function() nn.ConvTranspose2d(4, 2, 3, {stride = 2, output_padding = 2}) end,
    "ConvTranspose2d: output_padding {2, 2} must be smaller than either stride {2, 2} or dilation {1, 1}")
  T.error_usable(function() nn.ConvTranspose2d(4, 2, 3, {padding_mode = "reflect"}) end,
    'ConvTranspose2d: padding_mode "reflect" is not supported (only "zeros")')
  T.error_usable(function() nn.ConvTranspose2d(4, 2, 3, {stride = 2})(x4, {20, 20}) end,
    "ConvTranspose2d: requested an output size of {20,20}, but the valid sizes along spatial dim 1 are 11 to 12 " ..
    "(input of shape {1,4,5,5})")
  T.error_usable(function() nn.ConvTranspose2d(4, 2, 3, {stride = 2})(x4, {1, 2, 3}) end,
    "ConvTranspose2d: output_size must have 2 or 4 entries for an input of shape {1,4,5,5}, got 3")
  T.error_usable(function() nn.ConvTranspose1d(3, 4, 3, {groups = 2}) end,
    "ConvTranspose1d: in_channels (3) must be divisible by groups (2)")
  local x3 = torch.randn(2, 4, 5)
  T.error_usable(function() F.conv_transpose1d(x3, torch.randn(3, 2, 3)) end,
    "conv_transpose1d: weight of shape {3,2,3} with groups 1 expects 3 input channels, but the input of shape " ..
    "{2,4,5} has 4")
  T.error_usable(function() F.conv_transpose1d(x3, torch.randn(4, 2, 3), nil, {stride = 2, output_padding = 3}) end,
    "conv_transpose1d: output_padding 3 must be smaller than either stride 2 or dilation 1")
  T.error_usable(function() F.conv_transpose1d(torch.randn(2, 4, 1), torch.randn(4, 2, 3), nil, {padding = 3}) end,
    "conv_transpose1d: the output length -3 is not positive (input length 1, kernel 3, stride 1, padding 3, " ..
    "dilation 1, output_padding 0)")
end)

T.test("conv1d: errors name conv1d and the 1-D shapes", function()
  T.error_usable(function() nn.Conv1d(3, 4, 3, {groups = 2}) end, "Conv1d: in_channels (3) must be divisible by groups (2)")
  T.error_usable(function() nn.Conv1d(3, 4, 3, {padding_mode = "circular"}) end,
    'Conv1d: padding_mode "circular" is not supported (only "zeros")')
  T.error_usable(function() nn.Conv2d(3, 4, 3, {padding_mode = "replicate"}) end,
    'Conv2d: padding_mode "replicate" is not supported (only "zeros")')
  T.error_usable(function() nn.Conv1d(3, 4, 3, {foo = 1}) end, "Conv1d: unknown keyword 'foo'")
  T.error_usable(function() nn.Conv1d(3, 4, {3, 3}) end,
    "Conv1d: kernel_size must be an integer or a table of 1 integer, got 2 numbers")
  T.error_usable(function() nn.Conv1d(3, 4, 3, {padding = "same", stride = 2}) end,
    'Conv1d: padding="same" needs stride 1, got stride {1,2}')
  T.error_usable(function() F.conv1d(x4, torch.randn(4, 4, 3)) end,
    "conv1d: expected input of shape (N, C, L) or (C, L), got {1,4,5,5}")
  T.error_usable(function() F.conv1d(torch.randn(2, 4, 5), torch.randn(4, 4, 3, 3)) end,
    "conv1d: expected a 3-D weight, got shape {4,4,3,3}")
  T.error_usable(function() F.conv1d(torch.randn(2, 3, 5), torch.randn(4, 4, 3)) end,
    "conv1d: weight of shape {4,4,3} with groups 1 expects 4 input channels, but the input of shape {2,3,5} has 3")
  T.error_usable(function() F.conv1d(torch.randn(2, 4, 2), torch.randn(4, 4, 3)) end,
    "conv1d: the input's length 2 (padded by 0 on each side) is smaller than the kernel's extent 3")
  T.error_usable(function() F.conv1d(torch.randn(2, 4, 5), torch.randn(4, 4, 3), torch.randn(3)) end,
    "conv1d: bias must be a tensor of shape {4}, got {3}")
  T.error_usable(function() F.conv1d(torch.randn(2, 4, 5), torch.randn(3, 2, 3), nil, {groups = 2}) end,
    "conv1d: groups 2 must divide the 3 output channels")
  T.error_usable(function() F.conv2d(x4, torch.randn(2, 4, 3, 3), nil, {padding = "full"}) end,
    'conv2d: padding must be "same", "valid" or sizes, got "full"')
end)

T.test("pooling: errors name the op and the values", function()
  T.error_usable(function() F.avg_pool2d(x4, 2, {padding = 2}) end, "avg_pool2d: padding 2 must be at most half the kernel size 2")
  T.error_usable(function() F.avg_pool2d(x4, 2, {divisor_override = 0}) end, "avg_pool2d: divisor_override must be positive, got 0")
  T.error_usable(function() nn.AvgPool2d(2, {divisor_override = 0}) end, "AvgPool2d: divisor_override must be an integer >= 1, got 0")
  T.error_usable(function() F.avg_pool2d(x4, 7) end,
    "avg_pool2d: the input's spatial size 5 (padded by 0 on each side) is smaller than the kernel's extent 7")
  T.error_usable(function() F.avg_pool2d(x4, 2, {dilation = 2}) end, "avg_pool2d: unknown keyword 'dilation'")
  T.error_usable(function() F.max_pool1d(torch.randn(2, 3, 4), 5) end,
    "max_pool1d: the input's length 4 (padded by 0 on each side) is smaller than the kernel's extent 5")
  T.error_usable(function() F.max_pool1d(torch.randn(2, 4, 5), 2, {padding = 2}) end,
    "max_pool1d: padding 2 must be at most half the kernel size 2")
  T.error_usable(function() F.max_pool1d(x4, 2) end, "max_pool1d: expected input of shape (N, C, L) or (C, L), got {1,4,5,5}")
  T.error_usable(function() F.max_pool2d(x4, 2, {ceil_mode = 1}) end, "max_pool2d: keyword 'ceil_mode' must be a boolean, got a number")
  T.error_usable(function() nn.MaxPool2d(2, {return_indices = "yes"}) end, 'MaxPool2d: return_indices must be true or false, got "yes"')
  T.error_usable(function() F.adaptive_avg_pool2d(x4, 0) end, "adaptive_avg_pool2d: output_size must be an integer >= 1, got 0")
  T.error_usable(function() F.adaptive_max_pool2d(x4, {1, 2, 3}) end,
    "adaptive_max_pool2d: output_size must be an integer or a table of 2 entries, got 3 entries")
  T.error_usable(function() F.adaptive_avg_pool2d(torch.randn(5, 5), 2) end,
    "adaptive_avg_pool2d: expected input of shape (N, C, H, W) or (C, H, W), got {5,5}")
  T.error_usable(function() F.adaptive_max_pool2d(torch.randn(2, 3, 0, 4), 2) end,
    "adaptive_max_pool2d: expected an input with non-empty spatial dims, got shape {2,3,0,4}")
  T.error_usable(function() nn.AdaptiveMaxPool2d(2, {return_indices = 1}) end, "AdaptiveMaxPool2d: return_indices must be true or false, got 1")
end)

T.test("interpolate and the pixel shuffles: errors name the op and the values", function()
  T.error_usable(function() F.interpolate(x4, {size = 3, scale_factor = 2}) end,
    "interpolate: exactly one of size and scale_factor must be given")
  T.error_usable(function() F.interpolate(x4) end, "interpolate: exactly one of size and scale_factor must be given")
  T.error_usable(function() F.interpolate(x4, {size = 3, mode = "bicubic"}) end,
    'interpolate: mode "bicubic" is not supported ("nearest", "linear" or "bilinear")')
  T.error_usable(function() nn.Upsample({size = 2, mode = "area"})(x4) end,
    'interpolate: mode "area" is not supported ("nearest", "linear" or "bilinear")')
  T.error_usable(function() F.interpolate(x4, {size = 3, align_corners = true}) end,
    'interpolate: align_corners can only be given with the linear modes, not mode "nearest"')
  T.error_usable(function() F.interpolate(torch.randn(1, 2, 5), {size = 3, mode = "bilinear"}) end,
    'interpolate: mode "bilinear" needs a 4-D input, got shape {1,2,5}')
  T.error_usable(function() F.interpolate(x4, {size = 3, antialias = true, mode = "bilinear"}) end,
    "interpolate: antialias=true is not supported")
  T.error_usable(function() F.interpolate(x4, {scale_factor = 0.1}) end,
    "interpolate: scale_factor 0.1 gives an empty output for an input size of 5")
  T.error_usable(function() F.interpolate(x4, {scale_factor = -1}) end, "interpolate: scale_factor must be positive and finite, got -1")
  T.error_usable(function() F.interpolate(x4, {size = {2, 3, 4}}) end,
    "interpolate: size must have 2 entries (one per spatial dim), got 3")
  T.error_usable(function() F.interpolate(x4, {size = 3, method = "nearest"}) end, "interpolate: unknown keyword 'method'")
  T.error_usable(function() F.pixel_shuffle(torch.randn(1, 6, 2, 2), 2) end,
    "pixel_shuffle: the channel count 6 is not divisible by upscale_factor^2 = 4")
  T.error_usable(function() F.pixel_unshuffle(torch.randn(1, 6, 3, 2), 2) end,
    "pixel_unshuffle: the height 3 and width 2 must be divisible by downscale_factor 2")
  T.error_usable(function() F.pixel_shuffle(torch.randn(6, 2), 2) end,
    "pixel_shuffle: expected an input of at least 3 dims (*, C, H, W), got shape {6,2}")
  T.error_usable(function() nn.PixelShuffle(0) end, "PixelShuffle: upscale_factor must be an integer >= 1, got 0")
end)

T.test("huge sizes are clear errors, never a wrap-around or a hang", function()
  local big = math.maxinteger
  local w = torch.randn(4, 2, 3, 3)
  T.error_usable(function() F.conv_transpose2d(x4, w, nil, {stride = big}) end,
    "conv_transpose2d: the output size is too large (more than 2^63-1)")
  T.error_usable(function() F.conv_transpose2d(x4, w, nil, {padding = big}) end,
    "conv_transpose2d: the padding is too large (more than 2^63-1)")
  T.eq(F.avg_pool2d(x4, 2, {stride = big, ceil_mode = true}).shape, {1, 4, 1, 1})
  T.eq(F.max_pool2d(x4, 2, {stride = big, ceil_mode = true}).shape, {1, 4, 1, 1})
  T.error_usable(function() F.conv1d(torch.randn(1, 2, 5), torch.randn(2, 2, 3), nil, {dilation = big}) end,
    "conv1d: the input's length 5 (padded by 0 on each side) is smaller than the kernel's extent 18446744073709551616 " ..
    "(kernel 3, dilation 9223372036854775807)")
  T.error_usable(function() F.interpolate(x4, {scale_factor = 1e300}) end,
    "interpolate: scale_factor 1e+300 gives an output size beyond 2^63 for an input size of 5")
  T.error_usable(function() F.interpolate(x4, {size = big}) end, "interpolate: an output of spatial size")
  T.error_usable(function() F.adaptive_avg_pool2d(x4, big) end,
    "adaptive_avg_pool2d: output_size 9223372036854775807 is too large for an input size of 5")
  T.error_usable(function() F.pixel_shuffle(x4, big) end, "pixel_shuffle: the channel count 4 is not divisible")
  T.error_usable(function() F.interpolate(x4, {size = 3, recompute_scale_factor = true}) end,
    "interpolate: recompute_scale_factor is not meaningful with an explicit size")
end)

T.test("parameters: PyTorch's names, shapes and kaiming_uniform(a = sqrt(5)) bounds", function()
  local cases = {
    {nn.Conv1d(4, 6, 3, {groups = 2}), {6, 2, 3}, 2 * 3},
    {nn.ConvTranspose1d(4, 6, 3, {groups = 2}), {4, 3, 3}, 3 * 3},
    {nn.ConvTranspose2d(4, 6, {3, 2}, {groups = 2}), {4, 3, 3, 2}, 3 * 3 * 2},
    {nn.ConvTranspose2d(2, 8, 5), {2, 8, 5, 5}, 8 * 25},
  }
  for _, c in ipairs(cases) do
    local m, shape, fan_in = c[1], c[2], c[3]
    T.eq(T.sorted_keys(m:state_dict()), {"bias", "weight"})
    T.eq(m.weight.shape, shape)
    T.eq(m.weight.requires_grad, true)
    local bound = 1 / math.sqrt(fan_in)
    T.truthy(m.weight:abs():max():item() <= bound, "weight within 1/sqrt(fan_in)")
    T.truthy(m.weight:abs():max():item() > 0.5 * bound, "weight spread over its bound")
    T.truthy(m.bias:abs():max():item() <= bound, "bias within 1/sqrt(fan_in)")
  end
  T.eq(T.sorted_keys(nn.ConvTranspose2d(2, 3, 3, {bias = false}):state_dict()), {"weight"})
  local d = nn.Conv1d(2, 3, 3, {dtype = "float64"})
  T.eq(d.weight.dtype, "float64")
  for _, m in ipairs{nn.AvgPool2d(2), nn.MaxPool1d(2), nn.AdaptiveAvgPool2d(2), nn.AdaptiveMaxPool2d(2),
                     nn.Upsample({scale_factor = 2}), nn.PixelShuffle(2), nn.PixelUnshuffle(2)} do
    T.eq(next(m:state_dict()), nil)
  end
end)

T.test("reprs as PyTorch's (Lua spelling of tuples and booleans)", function()
  T.eq(tostring(nn.ConvTranspose2d(4, 6, 3, {stride = 2, groups = 2, output_padding = 1, bias = false})),
       "ConvTranspose2d(4, 6, kernel_size={3, 3}, stride={2, 2}, output_padding={1, 1}, groups=2, bias=false)")
  T.eq(tostring(nn.ConvTranspose1d(4, 6, 3)), "ConvTranspose1d(4, 6, kernel_size={3}, stride={1})")
  T.eq(tostring(nn.Conv1d(2, 4, 3, {padding = "same", dilation = 2})),
       'Conv1d(2, 4, kernel_size={3}, stride={1}, padding="same", dilation={2})')
  T.eq(tostring(nn.AvgPool2d(3, {stride = 2})), "AvgPool2d(kernel_size=3, stride=2, padding=0)")
  T.eq(tostring(nn.MaxPool1d(3)), "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=false)")
  T.eq(tostring(nn.AdaptiveAvgPool2d({2, 3})), "AdaptiveAvgPool2d(output_size={2, 3})")
  T.eq(tostring(nn.AdaptiveMaxPool2d(2)), "AdaptiveMaxPool2d(output_size=2)")
  T.eq(tostring(nn.Upsample({scale_factor = 2, mode = "bilinear"})), 'Upsample(scale_factor=2, mode="bilinear")')
  T.eq(tostring(nn.PixelUnshuffle(2)), "PixelUnshuffle(downscale_factor=2)")
end)

T.test("unbatched inputs give the batched result's first entry", function()
  local x = torch.randn(1, 4, 6, 6, {dtype = "float64"})
  local layers = {nn.ConvTranspose2d(4, 2, 3, {stride = 2, dtype = "float64"}), nn.AvgPool2d(3, {stride = 2, padding = 1}),
                  nn.AdaptiveAvgPool2d({4, 3}), nn.AdaptiveMaxPool2d(4), nn.MaxPool2d(3, {ceil_mode = true, stride = 2})}
  for _, m in ipairs(layers) do T.eq(m(x[1]):tolist(), m(x)[1]:tolist()) end
  local x1 = torch.randn(1, 4, 7, {dtype = "float64"})
  for _, m in ipairs{nn.Conv1d(4, 2, 3, {dtype = "float64"}), nn.ConvTranspose1d(4, 2, 3, {dtype = "float64"}),
                     nn.MaxPool1d(2)} do
    T.eq(m(x1[1]):tolist(), m(x1)[1]:tolist())
  end
end)

T.test("return_indices: 1-based flat positions of the maxima", function()
  local x = torch.tensor({{{{1, 5, 2}, {7, 3, 0}, {4, 8, 6}}}}, {dtype = "float32"})
  local v, i = F.max_pool2d(x, 2, {stride = 1, return_indices = true})
  T.eq(v:tolist(), {{{{7, 5}, {8, 8}}}})
  T.eq(i:tolist(), {{{{4, 2}, {8, 8}}}})
  local m = nn.MaxPool2d(2, {ceil_mode = true, return_indices = true})
  v, i = m(x)
  T.eq(v:tolist(), {{{{7, 2}, {8, 6}}}})
  T.eq(i:tolist(), {{{{4, 3}, {8, 9}}}})
  v, i = F.adaptive_max_pool2d(x, 2, {return_indices = true})
  T.eq(i:tolist(), {{{{4, 2}, {8, 8}}}})
  v, i = nn.MaxPool1d(2, {return_indices = true})(torch.tensor({{3, 1, 4, 1, 5}}, {dtype = "float32"}))
  T.eq(v:tolist(), {{3, 4}})
  T.eq(i:tolist(), {{1, 3}})
end)

T.test("gradients reach the layers' parameters", function()
  local m = nn.ConvTranspose2d(2, 3, 3, {stride = 2, groups = 1})
  local y = m(torch.randn(2, 2, 4, 4)):sum()
  y:backward()
  T.eq(m.weight.grad.shape, {2, 3, 3, 3})
  -- d sum / d bias = the number of output positions per channel: 2 images of 9 x 9.
  T.eq(m.bias.grad:tolist(), {162, 162, 162})
end)

T.test("a checkpoint PyTorch wrote loads with PyTorch's names and gives PyTorch's outputs", function()
  if not T.have_python_module("torch") then
    print("  (skipped: no PyTorch)")
    return
  end
  local tmp, path = T.tmpdir()
  local out, ok = T.python([[
import sys, torch
torch.manual_seed(0)
m = torch.nn.ModuleDict({
    "c1": torch.nn.Conv1d(2, 4, 3, padding="same", groups=2),
    "t1": torch.nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1),
    "t2": torch.nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1, groups=2, dilation=(1, 2), bias=False),
    "c2": torch.nn.Conv2d(6, 3, 2, dilation=2, padding="same"),
}).double()
torch.save(m.state_dict(), sys.argv[1])
x1 = torch.linspace(-1, 1, 20, dtype=torch.float64).reshape(2, 2, 5)
x2 = torch.linspace(-2, 1, 2 * 4 * 3 * 3, dtype=torch.float64).reshape(2, 4, 3, 3)
y1 = m["t1"](m["c1"](x1))
y2 = torch.nn.functional.interpolate(m["c2"](m["t2"](x2, output_size=[6, 6])), scale_factor=1.5, mode="bilinear")
y2 = torch.nn.functional.avg_pool2d(torch.nn.functional.pixel_shuffle(y2, 1), 2, ceil_mode=True)
print(" ".join(repr(v) for v in torch.cat([y1.flatten(), y2.flatten()]).tolist()))
print(tuple(y1.shape), tuple(y2.shape))
]], path("conv.pt"))
  T.truthy(ok, out)
  local sd = torch.load(path("conv.pt"))
  T.eq(T.sorted_keys(sd), {"c1.bias", "c1.weight", "c2.bias", "c2.weight", "t1.bias", "t1.weight", "t2.weight"})
  local m = nn.ModuleDict({
    c1 = nn.Conv1d(2, 4, 3, {padding = "same", groups = 2}),
    t1 = nn.ConvTranspose1d(4, 2, 3, {stride = 2, output_padding = 1}),
    t2 = nn.ConvTranspose2d(4, 6, {3, 2}, {stride = 2, padding = 1, groups = 2, dilation = {1, 2}, bias = false}),
    c2 = nn.Conv2d(6, 3, 2, {dilation = 2, padding = "same"}),
  }):double()
  m:load_state_dict(sd)
  local x1 = torch.linspace(-1, 1, 20, {dtype = "float64"}):reshape(2, 2, 5)
  local x2 = torch.linspace(-2, 1, 2 * 4 * 3 * 3, {dtype = "float64"}):reshape(2, 4, 3, 3)
  local y1 = m.t1(m.c1(x1))
  local y2 = F.interpolate(m.c2(m.t2(x2, {6, 6})), {scale_factor = 1.5, mode = "bilinear"})
  y2 = F.avg_pool2d(F.pixel_shuffle(y2, 1), 2, {ceil_mode = true})
  local lines = {}
  for l in out:gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(lines[2], "(2, 2, 12) (2, 3, 5, 5)")
  T.eq(y1.shape, {2, 2, 12})
  T.eq(y2.shape, {2, 3, 5, 5})
  local want = T.numbers(lines[1])
  local got = torch.cat({y1:flatten(), y2:flatten()}):tolist()
  T.eq(#got, #want)
  for i = 1, #want do T.near(got[i], want[i], 1e-12) end
  os.execute("rm -r " .. T.quote(tmp))
end)

-- The engine bindings under F (torch.conv_transpose2d, torch.max_pool2d, torch.avg_pool2d, as
-- PyTorch's torch.* names) take their options positionally or as keywords, alike.
T.test("torch.conv_transpose2d / max_pool2d / avg_pool2d: positional options equal the keyword ones", function()
  torch.manual_seed(3)
  local x = torch.randn(2, 4, 6, 6, {dtype = "float64"})
  local w, b = torch.randn(4, 2, 3, 3, {dtype = "float64"}), torch.randn(4, {dtype = "float64"})
  local kw = torch.conv_transpose2d(x, w, b, {stride = 2, padding = 1, output_padding = 1, groups = 2, dilation = 1})
  T.truthy(torch.equal(torch.conv_transpose2d(x, w, b, 2, 1, 1, 2, 1), kw))
  T.truthy(torch.equal(torch.conv_transpose2d(x, w, {bias = b, stride = 2, padding = 1, output_padding = 1,
                                                     groups = 2}), kw))
  T.eq(kw:size(), {2, 4, 12, 12})
  local mv, mi = torch.max_pool2d(x, 3, 2, 1, 1, true, true)
  local kv, ki = torch.max_pool2d(x, {kernel_size = 3, stride = 2, padding = 1, dilation = 1, ceil_mode = true,
                                      return_indices = true})
  T.truthy(torch.equal(mv, kv) and torch.equal(mi, ki))
  T.truthy(torch.equal(mv, F.max_pool2d(x, 3, {stride = 2, padding = 1, ceil_mode = true})))
  local a = torch.avg_pool2d(x, 3, 2, 1, true, false, 5)
  T.truthy(torch.equal(a, torch.avg_pool2d(x, {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true,
                                              count_include_pad = false, divisor_override = 5})))
  T.truthy(torch.equal(a, F.avg_pool2d(x, 3, {stride = 2, padding = 1, ceil_mode = true, count_include_pad = false,
                                             divisor_override = 5})))
  -- divisor_override 5 over a full 3x3 window: the window's sum / 5.
  T.near(a[{1, 1, 2, 2}]:item(), x[{1, 1, {2, 4}, {2, 4}}]:sum():item() / 5, 1e-12)
end)

-- The CPU's image-by-image Conv2d kernels (tensor/ops/nn.cpp; images of at least 256 output
-- positions; their values against PyTorch are conformance rows of conv2d): no result depends
-- on the thread count, a sum's expanded gradient gives the contiguous one's values, and a
-- backward with create_graph (which goes through unfold and batched products, so that the
-- gradients are differentiable) agrees with the kernels.
T.test("conv2d image by image: thread count, expanded gradients, create_graph", function()
  torch.manual_seed(3)
  local x = torch.randn(20, 3, 16, 16, {requires_grad = true})
  local conv = nn.Conv2d(3, 4, 3, {padding = 1})
  local function grads(threads, gy)
    local saved = torch.get_num_threads()
    torch.set_num_threads(threads)
    x.grad, conv.weight.grad, conv.bias.grad = nil, nil, nil
    local y = conv(x)
    if gy then y:backward(gy) else y:sum():backward() end
    torch.set_num_threads(saved)
    return {y:detach(), x.grad, conv.weight.grad, conv.bias.grad}
  end
  local one, two = grads(1), grads(2)
  local ones = grads(2, torch.ones(20, 4, 16, 16))
  for i = 1, 4 do
    T.eq(one[i]:eq(two[i]):all():item(), true, "1 vs 2 threads, result " .. i)
    T.eq(ones[i]:eq(two[i]):all():item(), true, "contiguous vs expanded gradient, result " .. i)
  end
  local y = conv(x)
  local gx, gw = table.unpack(torch.autograd.grad(y:sum(), {x, conv.weight}, {create_graph = true}))
  T.near((gx - two[2]):abs():max():item(), 0, 1e-5)
  T.near((gw - two[3]):abs():max():item(), 0, 1e-3)
  T.eq(gx.requires_grad and gw.requires_grad, true)
end)

T.done()
