-- Robustness of the training surface (autograd, fused nn functions, torch.nn, torch.optim,
-- torch.save/load, utils.progress): every bad input raises an error that starts with the
-- op's name and names the offending value, and the interpreter keeps working; where
-- PyTorch accepts an odd input (0-dim, empty), the result matches PyTorch's.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn, optim = torch.nn, torch.optim

local function freed()
  local t = torch.ones(2, 2)
  t:free()
  return t
end

-- Leaves with values fixed by hand, so the accepted cases can be checked exactly.
local function leaf(values) return torch.tensor(values, {dtype = "float32", requires_grad = true}) end

local function params() return nn.Linear(2, 2):parameters() end

---------------------------------------------------------------------------------------------
-- autograd

T.test("backward: bad gradients and non-tensor receivers", function()
  local y = (leaf({1, 2, 3}) * 2):sum()
  T.error_usable(function() y:backward(3) end, "backward: expected a tensor as argument 2, got number")
  T.error_usable(function() y:backward("g") end, "backward: expected a tensor as argument 2, got string")
  T.error_usable(function() y:backward(nn.Linear(1, 1)) end, "backward: expected a tensor as argument 2, got table")
  T.error_usable(function() y:backward(torch.ones(2, 2)) end,
                 "backward: the gradient has shape {2,2} but the output has shape {}")
  T.error_usable(function() y:backward(freed()) end, "this tensor was freed")
  T.error_usable(function() y:backward({gradient = 5}) end, "backward: keyword 'gradient' must be a tensor, got a number")
  local backward = torch.zeros(1).backward
  for _, v in ipairs({5, "x", true, {}, print}) do
    T.error_usable(function() backward(v) end, "backward: expected a tensor as argument 1, got " .. type(v))
  end
  T.error_usable(function() torch.tensor({1, 2}):backward() end, "backward: output 1 does not require grad")
  T.error_usable(function() (leaf({1, 2}) * 2):backward() end,
                 "backward: grad can be implicitly created only for one-element outputs, but the output has shape {2}")
end)

T.test("backward: a 0-dim gradient on a scalar output scales the leaf gradients", function()
  local x = leaf({1, 2, 3})
  local y = (x * x):sum()
  y:backward(torch.tensor(0.5))
  T.near(x.grad, {1, 2, 3})  -- 0.5 * 2x
  local e = leaf({})  -- an empty leaf: the sum is 0 and the gradient is empty
  e:sum():backward()
  T.eq(e.grad.shape, {0})
end)

T.test("autograd.grad and autograd.backward: bad lists", function()
  local x = leaf({1, 2})
  local y = (x * x):sum()
  T.error_usable(function() torch.autograd.grad(3, x) end,
                 "autograd.grad: expected a tensor or a list of tensors as outputs")
  T.error_usable(function() torch.autograd.grad(y, "x") end,
                 "autograd.grad: expected a tensor or a list of tensors as inputs")
  T.error_usable(function() torch.autograd.grad(y, nn.Linear(1, 1)) end,
                 "autograd.grad: expected a tensor or a list of tensors as inputs")
  T.error_usable(function() torch.autograd.grad(y, {}) end, "autograd.grad: inputs is an empty list")
  T.error_usable(function() torch.autograd.grad(y, {x, 5}, {retain_graph = true}) end,
                 "autograd.grad: inputs entry 2 is not a tensor")
  T.error_usable(function() torch.autograd.grad(y, torch.ones(2), {retain_graph = true}) end,
                 "autograd.grad: input 1 does not require grad")
  T.error_usable(function() torch.autograd.grad(x * 2, x, {grad_outputs = 7}) end,
                 "autograd.grad: grad_outputs must be a tensor or a list of tensors")
  T.error_usable(function() torch.autograd.backward(true) end,
                 "autograd.backward: expected a tensor or a list of tensors as tensors")
  T.near(torch.autograd.grad(y, x)[1], {2, 4})
end)

T.test("requires_grad_, .grad, .requires_grad: bad values", function()
  local x = torch.zeros(2)
  T.error_usable(function() x:requires_grad_(1) end, "requires_grad_: expected a boolean as argument 2, got number")
  T.error_usable(function() x:requires_grad_("yes") end, "requires_grad_: expected a boolean as argument 2, got string")
  T.error_usable(function() torch.tensor({1, 2}):requires_grad_() end,
                 "requires_grad_: only floating-point and complex tensors can require gradients, got int64")
  T.error_usable(function() torch.tensor({true}):requires_grad_() end,
                 "requires_grad_: only floating-point and complex tensors can require gradients, got bool")
  local p = leaf({1, 2, 3})
  T.error_usable(function() p.grad = torch.ones(2) end, "grad: assigned gradient has shape {2} but the tensor has shape {3}")
  T.error_usable(function() p.grad = torch.tensor({1, 2, 3}) end,
                 "grad: assigned gradient has dtype int64 but the tensor has dtype float32")
  T.error_usable(function() p.grad = 3 end, "grad: expected a tensor or nil, got a number")
  T.error_usable(function() p.requires_grad = "yes" end, "requires_grad: expected a boolean, got a string")
  T.error_usable(function() (p * 2).requires_grad = false end, "requires_grad: a result of a recorded op always requires grad")
  T.eq(torch.tensor(1.5):requires_grad_().requires_grad, true)  -- 0-dim and empty leaves are fine
  T.eq(torch.zeros(0, 3):requires_grad_().requires_grad, true)
end)

T.test("no_grad and set_grad_enabled: bad arguments leave grad mode on", function()
  T.error_usable(function() torch.no_grad(5) end, "no_grad")
  T.error_usable(function() torch.set_grad_enabled("no") end, "set_grad_enabled: expected a boolean")
  T.eq(torch.is_grad_enabled(), true)
  T.eq(pcall(torch.no_grad, function() error("inside") end), false)
  T.eq(torch.is_grad_enabled(), true)  -- an error inside no_grad restores grad mode
end)

---------------------------------------------------------------------------------------------
-- Fused nn functions

T.test("linear: wrong types, dtypes and shapes", function()
  local x, w = torch.ones(2, 3), torch.ones(4, 3)
  T.error_usable(function() torch.linear(nil, w) end, "linear: expected a tensor as argument 1, got nil")
  T.error_usable(function() torch.linear(x, "w") end, "linear: expected a tensor as argument 2, got string")
  T.error_usable(function() torch.linear(x, nn.Linear(3, 4)) end, "linear: expected a tensor as argument 2, got table")
  T.error_usable(function() torch.linear(x:double(), w) end, "linear: input has dtype float64 but weight has dtype float32")
  T.error_usable(function() torch.linear(torch.tensor(1.0), w) end,
                 "linear: input of shape {} does not end in 3 features, as weight of shape {4,3} expects")
  T.error_usable(function() torch.linear(x, torch.ones(3)) end, "linear: weight must be 2-D (out_features, in_features), got shape {3}")
  T.error_usable(function() torch.linear(x, w, torch.ones(5)) end, "linear: bias must have shape {4}, got {5}")
  T.error_usable(function() torch.linear(freed(), w) end, "this tensor was freed")
  -- An empty batch is fine (PyTorch: shape (0, 4)).
  T.eq(torch.linear(torch.zeros(0, 3), w).shape, {0, 4})
end)

T.test("softmax and log_softmax: dims and 0-dim inputs", function()
  local x = torch.ones(2, 3)
  for _, op in ipairs({"softmax", "log_softmax"}) do
    T.error_usable(function() torch[op](x) end, op .. ": dim is required")
    T.error_usable(function() torch[op](x, 3) end, op .. ": dim 3 is out of range for a tensor of 2 dims")
    T.error_usable(function() torch[op](x, math.maxinteger) end, op .. ": dim 9223372036854775807 is out of range")
    T.error_usable(function() torch[op](x, math.mininteger) end, op .. ": dim -9223372036854775808 is out of range")
    T.error_usable(function() torch[op](x, "a") end, op)
    T.error_usable(function() torch[op]({1, 2}, 1) end, op .. ": expected a tensor as argument 1, got table")
  end
  -- PyTorch: softmax of a 0-dim tensor is 1, log_softmax 0.
  T.eq(torch.softmax(torch.tensor(1.5), 1):item(), 1.0)
  T.eq(torch.log_softmax(torch.tensor(1.5), 1):item(), 0.0)
  T.eq(torch.softmax(torch.zeros(0, 3), 2).shape, {0, 3})
end)

T.test("cross_entropy and nll_loss: targets, weights, options", function()
  local x = torch.zeros(2, 3)
  for _, op in ipairs({"cross_entropy", "nll_loss"}) do
    local f = torch[op]
    T.error_usable(function() f(x, torch.tensor({4, 1})) end, op .. ": target 4 is out of range for 3 classes (valid 1..3)")
    T.error_usable(function() f(x, torch.tensor({0, 1})) end, op .. ": target 0 is out of range for 3 classes")
    T.error_usable(function() f(x, torch.tensor({math.mininteger, 1})) end,
                   op .. ": target -9223372036854775808 is out of range")
    T.error_usable(function() f(x, torch.tensor({1, 1, 1})) end, op .. ": target has shape {3} but input of shape {2,3}")
    T.error_usable(function() f(x, {1, 2}) end, op .. ": expected a tensor as argument 2, got table")
    T.error_usable(function() f(x, torch.tensor({1, 1}), {weight = torch.ones(2)}) end,
                   op .. ": weight must have shape {3} (one per class), got {2}")
    T.error_usable(function() f(x, torch.tensor({1, 1}), {reduction = "avg"}) end, op)
    -- No classes at all: a target cannot be in range (PyTorch: "Target 0 is out of bounds").
    T.error_usable(function() f(torch.zeros(2, 0), torch.tensor({1, 1})) end,
                   op .. ": target 1 is out of range for 0 classes")
  end
  T.error_usable(function() torch.cross_entropy(x, torch.tensor({1, 1}), {label_smoothing = 2}) end,
                 "cross_entropy: label_smoothing must be in [0, 1], got 2")
  T.error_usable(function() torch.cross_entropy(x, torch.tensor({1, 1}), {label_smoothing = 0 / 0}) end,
                 "cross_entropy: label_smoothing must be in [0, 1], got")
  T.error_usable(function() torch.cross_entropy(x, torch.tensor({true, false})) end,
                 "cross_entropy: class targets must be an integer tensor (int64) of 1-based classes, got bool")
  T.error_usable(function() torch.cross_entropy(x, torch.zeros(3, 3)) end,
                 "cross_entropy: probability targets must have the input's shape {2,3}, got {3,3}")
  -- PyTorch: 1-D logits with a 0-dim target; an empty batch or all rows ignored give NaN
  -- under "mean" and 0 under "sum".
  T.near(torch.cross_entropy(torch.tensor({1.0, 2.0, 3.0}), torch.tensor(2)):item(), 1.4076059644443804, 1e-6)
  T.eq(torch.cross_entropy(torch.zeros(0, 3), torch.zeros(0):long()):item(), 0 / 0)
  T.eq(torch.cross_entropy(x, torch.tensor({1, 1}), {ignore_index = 1}):item(), 0 / 0)
  T.eq(torch.cross_entropy(x, torch.tensor({1, 1}), {ignore_index = 1, reduction = "sum"}):item(), 0.0)
end)

T.test("conv2d: bad options, shapes and overflowing sizes", function()
  local x, w = torch.ones(1, 1, 4, 4), torch.ones(2, 1, 2, 2)
  T.error_usable(function() torch.conv2d(torch.ones(4, 4), w) end,
                 "conv2d: expected input of shape (N, C, H, W) or (C, H, W), got {4,4}")
  T.error_usable(function() torch.conv2d(x, "w") end, "conv2d: expected a tensor as argument 2, got string")
  T.error_usable(function() torch.conv2d(x, w, nil, {stride = 0}) end,
                 "conv2d: kernel size, stride and dilation must be positive and padding non-negative, got kernel 2, stride 0")
  T.error_usable(function() torch.conv2d(x, w, nil, {padding = -1}) end, "padding -1")
  T.error_usable(function() torch.conv2d(x, w, nil, {stride = 1.5}) end,
                 "conv2d: stride must be an integer or a table of two integers")
  T.error_usable(function() torch.conv2d(x, w, nil, {padding = {1, 2, 3}}) end,
                 "conv2d: padding must be an integer or a table of two integers")
  T.error_usable(function() torch.conv2d(x, w, nil, {groups = 0}) end, "conv2d: groups 0 must divide in_channels 1")
  T.error_usable(function() torch.conv2d(torch.ones(1, 3, 4, 4), w, nil, {groups = 2}) end,
                 "conv2d: groups 2 must divide in_channels 3 and out_channels 2")
  T.error_usable(function() torch.conv2d(torch.ones(1, 1, 2, 2), torch.ones(2, 1, 3, 3)) end,
                 "conv2d: the input's spatial size 2 (padded by 0 on each side) is smaller than the kernel's extent 3")
  T.error_usable(function() torch.conv2d(torch.ones(1, 1, 2, 2):long(), torch.ones(2, 1, 1, 1):long()) end,
                 "conv2d: input must be a floating-point tensor, got int64")
  -- Sizes whose window or padded length overflow int64 are errors, not wrapped-around shapes.
  T.error_usable(function() torch.conv2d(x, w, nil, {padding = math.maxinteger}) end,
                 "conv2d: kernel size 2, dilation 1 and padding 9223372036854775807 are too large")
  T.error_usable(function() torch.conv2d(x, w, nil, {dilation = math.maxinteger}) end,
                 "conv2d: kernel size 2, dilation 9223372036854775807 and padding 0 are too large")
  T.error_usable(function() torch.conv2d(x, w, nil, {padding = 1 << 40}) end,
                 "conv2d: an output of 2199023255555 x 2199023255555 positions is too large")
  T.eq(torch.conv2d(x, w, nil, {stride = math.maxinteger}):tolist(), {{{{4}}, {{4}}}})
  T.eq(torch.conv2d(torch.zeros(0, 1, 4, 4), w).shape, {0, 2, 3, 3})
end)

T.test("max_pool2d: bad kernels, padding and overflowing sizes", function()
  local x = torch.arange(16.0):reshape(1, 1, 4, 4)
  T.error_usable(function() torch.max_pool2d(x) end, "max_pool2d: kernel_size is required")
  T.error_usable(function() torch.max_pool2d(x, 0) end, "max_pool2d: kernel size, stride and dilation must be positive")
  T.error_usable(function() torch.max_pool2d(x, "2") end, "max_pool2d: kernel_size must be an integer or a table of two integers")
  T.error_usable(function() torch.max_pool2d(x, 5) end,
                 "max_pool2d: the input's spatial size 4 (padded by 0 on each side) is smaller than the kernel's extent 5")
  T.error_usable(function() torch.max_pool2d(x, 2, {padding = 3}) end, "max_pool2d: padding 3 must be at most half the kernel size 2")
  T.error_usable(function() torch.max_pool2d(x, 2, {padding = math.maxinteger}) end,
                 "max_pool2d: padding 9223372036854775807 must be at most half the kernel size 2")
  T.error_usable(function() torch.max_pool2d(x, 2, {dilation = math.maxinteger}) end,
                 "max_pool2d: kernel size 2, dilation 9223372036854775807 and padding 0 are too large")
  -- A window of 2^41 x 2^41 (padding 2^40 keeps one output position) was a segfault.
  T.error_usable(function() torch.max_pool2d(x, 1 << 41, {padding = 1 << 40}) end,
                 "a 2199023255552 x 2199023255552 window over 1 channels is too large")
  T.error_usable(function() torch.max_pool2d(x:long(), 2) end, "max_pool2d: input must be a floating-point tensor, got int64")
  -- PyTorch: kernel 2, padding 1 on a 4x4 ramp.
  T.eq(torch.max_pool2d(x, 2, {padding = 1}):tolist(), {{{{0, 2, 3}, {8, 10, 11}, {12, 14, 15}}}})
  T.eq(torch.max_pool2d(x, 2, {stride = math.maxinteger}):tolist(), {{{{5}}}})
end)

---------------------------------------------------------------------------------------------
-- nn layers: constructors and forwards

T.test("layer constructors: wrong types, negative, huge and NaN sizes", function()
  local cases = {
    {function() nn.Linear(-1, 2) end, "Linear: in_features must be an integer >= 0, got -1"},
    {function() nn.Linear(2, 2.5) end, "Linear: out_features must be an integer >= 0, got 2.5"},
    {function() nn.Linear(2) end, "Linear: missing argument 'out_features'"},
    {function() nn.Linear(2, 2, "yes") end, 'Linear: bias must be true or false, got "yes"'},
    {function() nn.Linear(2, 2, {x = 1}) end, "Linear: unknown keyword 'x' (valid: in_features, out_features, bias, device, dtype)"},
    {function() nn.Linear(math.maxinteger, 2) end, "of float32 is too large (its byte size or strides would pass 2^63-1)"},
    {function() nn.Conv2d(0, 1, 2) end, "Conv2d: in_channels must be an integer >= 1, got 0"},
    {function() nn.Conv2d(1, 1, 0 / 0) end, "Conv2d: kernel_size must be an integer >= 1, got"},
    {function() nn.Conv2d(1, 1, 2, {stride = {}}) end, "Conv2d: stride must be a number or a table of 2 numbers, got 0 numbers"},
    {function() nn.Conv2d(1, 1, 2, {groups = 3}) end, "Conv2d: in_channels (1) must be divisible by groups (3)"},
    {function() nn.MaxPool2d(torch.ones(2)) end, "MaxPool2d: kernel_size must be an integer >= 1, got a tensor of shape {2}"},
    {function() nn.Embedding(-5, 2) end, "Embedding: num_embeddings must be an integer >= 0, got -5"},
    {function() nn.Embedding(3, 2, {padding_idx = 4}) end, "Embedding: padding_idx must be an index in 1..3 (or -3..-1), got 4"},
    {function() nn.LayerNorm(print) end, "LayerNorm: normalized_shape must be an integer >= 0, got function"},
    {function() nn.Dropout(1.5) end, "Dropout: p must be between 0 and 1, got 1.5"},
    {function() nn.Dropout(0 / 0) end, "Dropout: p must be between 0 and 1, got"},
    {function() nn.Dropout("a") end, 'Dropout: p must be a number, got "a"'},
    {function() nn.GELU("fast") end, 'GELU: approximate must be "none" or "tanh", got "fast"'},
    {function() nn.Softmax(1.5) end, "Softmax: dim must be an integer"},
    {function() nn.Softmax() end, "Softmax: missing argument 'dim'"},
    {function() nn.Sequential(nn.ReLU(), 5) end, "Sequential: argument 2 is 5, expected a module"},
    {function() nn.Sequential(torch.ones(2)) end, "Sequential: argument 1 is a tensor of shape {2}, expected a module"},
    {function() nn.ReLU(freed()) end, "ReLU: expected at most 0 positional arguments, got 1"},
  }
  for _, c in ipairs(cases) do T.error_usable(c[1], c[2]) end
end)

T.test("layer forwards: non-tensors, wrong dtypes and shapes", function()
  local cases = {
    {function() nn.Linear(3, 2)(nil) end, "linear: expected a tensor as argument 1, got nil"},
    {function() nn.Linear(3, 2)(nn.ReLU()) end, "linear: expected a tensor as argument 1, got table"},
    {function() nn.Linear(3, 2)(torch.ones(2, 4)) end, "linear: input of shape {2,4} does not end in 3 features"},
    {function() nn.Linear(3, 2)(torch.ones(2, 3):long()) end, "linear: input has dtype int64 but weight has dtype float32"},
    {function() nn.Conv2d(1, 2, 2)(torch.ones(2)) end, "conv2d: expected input of shape (N, C, H, W) or (C, H, W), got {2}"},
    {function() nn.Conv2d(1, 2, 2)(torch.ones(1, 3, 4, 4)) end, "conv2d"},
    {function() nn.MaxPool2d(2)("x") end, "max_pool2d: expected a tensor as argument 1, got string"},
    {function() nn.Embedding(3, 2)(torch.tensor({4})) end, "embedding: index 4 is out of range 1..3"},
    {function() nn.Embedding(3, 2)(torch.tensor({1.0})) end, "embedding: expected an integer tensor of indices, got dtype float32"},
    {function() nn.LayerNorm(3)(torch.ones(2, 4)) end, "layer_norm"},
    {function() nn.Dropout(0.5)(true) end, "dropout: expected a tensor for input, got true"},
    {function() nn.Dropout(0.5)(torch.tensor({1, 2})) end, "dropout: expected a floating-point input, got dtype int64"},
    {function() nn.Flatten()(nil) end, "Flatten: expected a tensor for input, got nil"},
    {function() nn.Flatten()(5) end, "Flatten: expected a tensor for input, got 5"},
    {function() nn.Flatten(math.maxinteger)(torch.ones(2, 3)) end, "flatten: dim 9223372036854775807 is out of range"},
    {function() nn.ReLU()({1, 2}) end, "relu"},
    {function() nn.GELU()("x") end, "gelu"},
    {function() nn.Softmax(5)(torch.ones(2, 3)) end, "softmax: dim 5 is out of range for a tensor of 2 dims"},
    {function() nn.LogSoftmax(2)(freed()) end, "this tensor was freed"},
    {function() nn.Sequential(nn.Linear(3, 2))(torch.ones(1, 2)) end, "linear: input of shape {1,2} does not end in 3 features"},
  }
  for _, c in ipairs(cases) do T.error_usable(c[1], c[2]) end
  -- Empty and 0-dim inputs that PyTorch accepts.
  T.eq(nn.Linear(3, 2)(torch.zeros(0, 3)).shape, {0, 2})
  T.eq(nn.ReLU()(torch.tensor(-1.5)):item(), 0.0)
  T.eq(nn.Flatten()(torch.zeros(0, 3)).shape, {0, 3})
  T.eq(nn.Softmax(2)(torch.zeros(0, 3)).shape, {0, 3})
end)

T.test("losses: constructors and forwards with bad inputs", function()
  T.error_usable(function() nn.MSELoss("avg") end, 'MSELoss: reduction must be "mean", "sum" or "none", got "avg"')
  T.error_usable(function() nn.CrossEntropyLoss({weight = 3}) end, "CrossEntropyLoss: expected a tensor for weight, got 3")
  T.error_usable(function() nn.BCEWithLogitsLoss({pos_weight = "a"}) end,
                 'BCEWithLogitsLoss: expected a tensor for pos_weight, got "a"')
  T.error_usable(function() nn.NLLLoss({x = 1}) end, "NLLLoss: unknown keyword 'x' (valid: weight, ignore_index, reduction)")
  local x = torch.rand(2, 3)
  T.error_usable(function() nn.MSELoss()(x, torch.ones(3, 2)) end, "mse_loss")
  T.error_usable(function() nn.L1Loss()(x, nil) end, "l1_loss")
  T.error_usable(function() nn.BCELoss()(x, torch.ones(2, 3):long()) end,
                 "binary_cross_entropy: expected a floating-point target, got dtype int64")
  T.error_usable(function() nn.BCELoss()(x, torch.ones(3)) end,
                 "binary_cross_entropy: input shape {2,3} and target shape {3} differ")
  T.error_usable(function() nn.BCEWithLogitsLoss()(x, nn.ReLU()) end,
                 "binary_cross_entropy_with_logits: expected a tensor for target, got ReLU()")
  T.error_usable(function() nn.CrossEntropyLoss()(x, torch.tensor({1, 2, 3})) end,
                 "cross_entropy: target has shape {3} but input of shape {2,3} needs a target of shape {2}")
  T.error_usable(function() nn.CrossEntropyLoss({weight = freed()})(x, torch.tensor({1, 2})) end, "this tensor was freed")
  T.error_usable(function() nn.NLLLoss()(x, torch.tensor({1.0, 2.0})) end, "nll_loss")
  -- MSE of (0, 1) against (1, 1): 0.5; sum 1.
  T.eq(nn.MSELoss()(torch.tensor({0.0, 1.0}), torch.tensor({1.0, 1.0})):item(), 0.5)
  T.eq(nn.MSELoss({reduction = "sum"})(torch.tensor({0.0, 1.0}), torch.tensor({1.0, 1.0})):item(), 1.0)
end)

---------------------------------------------------------------------------------------------
-- Module methods

T.test("load_state_dict with garbage leaves the module's values", function()
  local m = nn.Linear(2, 2)
  local before = m.weight:clone()
  T.error_usable(function() m:load_state_dict(5) end, "load_state_dict: expected a table of tensors, got 5")
  T.error_usable(function() m:load_state_dict(torch.ones(2)) end, "load_state_dict: expected a table of tensors, got a tensor of shape {2}")
  T.error_usable(function() m:load_state_dict({}) end, 'load_state_dict: error(s) in loading the state dict for Linear: missing keys "weight", "bias"')
  T.error_usable(function() m:load_state_dict({weight = "w", bias = torch.zeros(2)}) end,
                 'value for "weight" is "w", expected a tensor')
  T.error_usable(function() m:load_state_dict({weight = torch.ones(3, 3), bias = torch.zeros(2)}) end,
                 'size mismatch for "weight": copying a tensor of shape {3,3} from the state dict')
  T.error_usable(function() m:load_state_dict({weight = freed(), bias = torch.zeros(2)}) end, "this tensor was freed")
  T.error_usable(function() m:load_state_dict({weight = torch.ones(2, 2), bias = torch.zeros(2), extra = torch.ones(1)}) end,
                 'unexpected keys "extra"')
  T.eq(m.weight:tolist(), before:tolist())
  -- An integer tensor of the right shape is copied (converted), as PyTorch's copy_ does.
  m:load_state_dict({weight = torch.tensor({{1, 2}, {3, 4}}), bias = torch.zeros(2)})
  T.eq(m.weight:tolist(), {{1, 2}, {3, 4}})
  T.eq(m.weight.dtype, "float32")
end)

T.test("to, train, add_module, register_buffer, Parameter, extend: bad arguments", function()
  local m = nn.Linear(2, 2)
  T.error_usable(function() m:to(5) end, "Linear:to: expected a device, a dtype, a {device=, dtype=} table or a tensor, got 5")
  T.error_usable(function() m:to(print) end, "Linear:to: expected a device, a dtype")
  T.error_usable(function() m:to("int64") end,
                 'Linear:to: only floating-point dtypes (float16, bfloat16, float32, float64) are allowed, got "int64"')
  T.error_usable(function() m:to(torch.tensor({1})) end, 'Linear:to: only floating-point dtypes')
  T.error_usable(function() m:to("abc") end, 'Linear:to: only floating-point dtypes (float16, bfloat16, float32, float64) are allowed, got "abc"')
  T.error_usable(function() m:to({device = "cpu", ddof = 1}) end, "Linear:to: unknown keyword 'ddof'")
  T.error_usable(function() m:to({device = {}}) end, 'Linear:to: device must be a string such as "cpu" or "cuda" or a torch.device, got table')
  T.eq(nn.Linear(2, 2):to({device = "cpu", dtype = "float64"}).weight.dtype, "float64")
  T.eq(m.weight.dtype, "float32")  -- nothing was converted
  T.eq(m:to("float64").weight.dtype, "float64")
  T.error_usable(function() m:train(1) end, "Linear:train: mode must be true or false, got 1")
  T.error_usable(function() nn.Sequential():add_module(3, nn.ReLU()) end,
                 "Sequential:add_module: the name must be a non-empty string without '.', got 3")
  T.error_usable(function() nn.Sequential():add_module("a.b", nn.ReLU()) end,
                 "Sequential:add_module: the name must be a non-empty string without '.', got \"a.b\"")
  T.error_usable(function() nn.Sequential():add_module("", nn.ReLU()) end, "Sequential:add_module: the name must be a non-empty string")
  T.error_usable(function() nn.Sequential():add_module("x", 5) end, "Sequential:add_module: expected a module for 'x', got 5")
  T.error_usable(function() m:register_buffer("b", 5) end, "Linear:register_buffer: expected a tensor for tensor, got 5")
  T.error_usable(function() m.weight = "w" end, "Linear: cannot assign \"w\" to parameter 'weight' (expected a leaf tensor or nil)")
  T.error_usable(function() m.weight = nn.ReLU() end, "Linear: cannot assign a module to 'weight'")
  T.error_usable(function() nn.Parameter(3) end, "Parameter: expected a tensor for data, got 3")
  T.error_usable(function() nn.Parameter(torch.tensor({1, 2})) end, "only floating-point and complex tensors can require gradients, got int64")
  T.error_usable(function() nn.Module:extend(3) end, "Module:extend: expected a class name string, got 3")
end)

---------------------------------------------------------------------------------------------
-- torch.optim

T.test("optimizer constructors: params and hyper-parameters", function()
  T.error_usable(function() optim.SGD(nil, {lr = 0.1}) end, "SGD: params must be a list of tensors or of parameter groups")
  T.error_usable(function() optim.SGD({}, {lr = 0.1}) end, "SGD: got an empty parameter list")
  T.error_usable(function() optim.SGD(torch.ones(2), {lr = 0.1}) end, "SGD: params must be a list of tensors or of parameter groups ({params=..., lr=...}), got a tensor")
  T.error_usable(function() optim.SGD({5}, {lr = 0.1}) end, "SGD: a parameter group must be a table {params=..., ...}, got a number")
  T.error_usable(function() optim.SGD({torch.tensor({1, 2})}, {lr = 0.1}) end,
                 "SGD: can only optimize floating-point tensors, but parameter 1 has dtype int64")
  T.error_usable(function() optim.SGD({freed()}, {lr = 0.1}) end, "this tensor was freed")
  T.error_usable(function() optim.SGD(params(), 0.1) end, "SGD: options must be a keyword table such as {lr=0.01}, got a number")
  T.error_usable(function() optim.SGD(params(), {lr = -1}) end, "SGD: invalid lr -1 (must be >= 0)")
  T.error_usable(function() optim.SGD(params(), {lr = 0 / 0}) end, "SGD: invalid lr")
  T.error_usable(function() optim.SGD(params(), {lr = "0.1"}) end, "SGD: lr must be a number, got string")
  T.error_usable(function() optim.SGD(params(), {lr = 0.1, momentum = -0.5}) end, "SGD: invalid momentum -0.5 (must be >= 0)")
  T.error_usable(function() optim.Adam(params(), {betas = {0.9}}) end, "Adam: betas must be a table of two numbers {beta1, beta2}")
  T.error_usable(function() optim.Adam(params(), {betas = {0.9, 1.5}}) end, "Adam: invalid beta")
  T.error_usable(function() optim.Adam(params(), {eps = -1}) end, "Adam: invalid eps -1 (must be >= 0)")
  T.error_usable(function() optim.AdamW(params(), {weight_decay = 0 / 0}) end, "AdamW: invalid weight_decay")
  T.error_usable(function() optim.RMSprop(params(), {alpha = -1}) end, "RMSprop: invalid alpha -1")
  T.error_usable(function() optim.RMSprop(params(), {momentum = true}) end, "RMSprop: momentum must be a number, got boolean")
  T.error_usable(function() optim.Adam(nn.Linear(2, 2)) end, "Linear: has no length")
end)

T.test("optimizer step, zero_grad, add_param_group, load_state_dict: bad arguments", function()
  local p = leaf({1.0, 2.0})
  local opt = optim.SGD({p}, {lr = 0.5})
  T.error_usable(function() opt:step(5) end, "SGD.step: closure must be a function that returns the loss, got a number")
  T.error_usable(function() opt:step(nn.ReLU()) end, "SGD.step: closure must be a function that returns the loss, got a table")
  T.error_usable(function() opt:add_param_group(3) end, "SGD: a parameter group must be a table {params=..., ...}, got a number")
  T.error_usable(function() opt:add_param_group({}) end, "SGD: a parameter group's params must be a list of tensors, got nil")
  T.error_usable(function() opt:load_state_dict("x") end, "SGD.load_state_dict: expected a table {state=..., param_groups=...}")
  -- The failed calls changed nothing: one step moves p by -lr * grad.
  p.grad = torch.tensor({1.0, -2.0})
  opt:step()
  T.near(p:detach(), {0.5, 3.0})
  -- A closure's loss comes back from step.
  T.eq(opt:step(function() return 7 end), 7)
  -- Empty and 0-dim parameters step without error (PyTorch accepts them).
  local e, s = torch.zeros(0, {requires_grad = true}), torch.tensor(2.0, {requires_grad = true})
  local adam = optim.Adam({e, s}, {lr = 0.1})
  e.grad, s.grad = torch.zeros(0), torch.tensor(1.0)
  adam:step()
  T.near(s:item(), 1.9, 1e-6)  -- Adam's first step moves by lr * sign(grad)
end)

T.test("optimizer load_state_dict: garbage groups and state are errors before anything changes", function()
  local p = leaf({1.0, 2.0})
  local opt = optim.Adam({p}, {lr = 0.1})
  p.grad = torch.tensor({1.0, 1.0})
  opt:step()
  -- state_dict() shares the per-parameter state tables (as PyTorch's does), so edit copies.
  local function with(edit)
    local sd = opt:state_dict()
    local state = {}
    for i, s in pairs(sd.state) do
      state[i] = {}
      for k, v in pairs(s) do state[i][k] = v end
    end
    sd.state = state
    edit(sd)
    return function() opt:load_state_dict(sd) end
  end
  T.error_usable(with(function(sd) sd.state[1].step = "x" end),
                 "Adam.load_state_dict: state 'step' of parameter 1 is a string, expected a number")
  T.error_usable(with(function(sd) sd.state[1].exp_avg = 5 end),
                 "Adam.load_state_dict: state 'exp_avg' of parameter 1 is a number, expected a tensor")
  T.error_usable(with(function(sd) sd.state[1] = true end), "Adam.load_state_dict: state for parameter 1 is a boolean, not a table")
  T.error_usable(with(function(sd) sd.state[1].exp_avg = torch.ones(5) end),
                 "Adam.load_state_dict: state 'exp_avg' of parameter 1 has shape {5} but the parameter {2}")
  T.error_usable(with(function(sd) sd.state[7] = {} end), "Adam.load_state_dict: state for parameter 7 has no parameter")
  T.error_usable(with(function(sd) sd.param_groups[1].lr = "x" end), "Adam: lr must be a number, got string")
  T.error_usable(with(function(sd) sd.param_groups[1].betas = nil end), "Adam: betas must be a table of two numbers")
  T.error_usable(with(function(sd) sd.param_groups[1].params = {1, 2} end),
                 "Adam.load_state_dict: parameter group 1 has 1 parameters but the saved one 2")
  -- The optimizer still steps from its own state: Adam's second step with a constant
  -- gradient moves by lr again (m_hat / sqrt(v_hat) = 1).
  opt:step()
  T.near(p:detach(), {0.8, 1.8}, 1e-5)
  T.eq(opt.state[p].step:item(), 2)
end)

T.test("lr schedulers: bad optimizers and options", function()
  local opt = optim.SGD(params(), {lr = 0.1})
  T.error_usable(function() optim.lr_scheduler.StepLR(nil, {step_size = 1}) end, "StepLR: expected an optimizer, got a nil")
  T.error_usable(function() optim.lr_scheduler.StepLR({}, {step_size = 1}) end, "StepLR: expected an optimizer, got a table")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, 2) end, "StepLR: options must be a keyword table such as {lr=0.01}, got a number")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {}) end, "StepLR: step_size must be a positive integer, got nil")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 0}) end, "StepLR: step_size must be a positive integer, got 0")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 1.5}) end, "StepLR: step_size must be a positive integer, got 1.5")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 1, gamma = "x"}) end, "StepLR: gamma must be a number, got string")
  T.error_usable(function() optim.lr_scheduler.CosineAnnealingLR(opt, {T_max = 0}) end, "CosineAnnealingLR: T_max must be a number > 0, got 0")
  T.error_usable(function() optim.lr_scheduler.CosineAnnealingLR(opt, {T_max = 0 / 0}) end, "CosineAnnealingLR: T_max must be a number > 0")
  local sched = optim.lr_scheduler.StepLR(opt, {step_size = 2, gamma = 0.5})
  T.error_usable(function() sched:step(-1) end, "StepLR:step: epoch must be an integer >= 0, got -1")
  T.error_usable(function() sched:step("x") end, "StepLR:step: epoch must be an integer >= 0, got x")
  sched:step()
  sched:step()
  T.near(sched:get_last_lr()[1], 0.05)  -- the failed calls did not advance it
end)

---------------------------------------------------------------------------------------------
-- torch.save / torch.load

T.test("torch.save: odd objects and paths", function()
  local dir = os.tmpname()
  os.remove(dir)
  local path = dir .. ".safetensors"
  local cyc = {a = torch.ones(2)}
  cyc.self = cyc
  T.error_usable(function() torch.save(cyc, path) end, "torch.save: the table at self is the table itself or one holding it (a cycle)")
  T.error_usable(function() torch.save({a = 1}, path) end, "torch.save: the value at a is a number, not a tensor")
  T.error_usable(function() torch.save({a = {b = "x"}}, path) end, "torch.save: the value at a.b is a string, not a tensor")
  T.error_usable(function() torch.save({a = freed()}, path) end, "torch.save: the tensor at a was freed")
  T.error_usable(function() torch.save({[true] = torch.ones(1)}, path) end, "torch.save: the key true in the table to save is not a string or an integer")
  T.error_usable(function() torch.save({["a.b"] = torch.ones(1), a = {b = torch.ones(1)}}, path) end,
                 "would both be stored as 'a.b'")  -- the two keys are named in pairs() order
  T.error_usable(function() torch.save(nn.Linear(2, 2), path) end, "for a module, save model:state_dict()")
  T.error_usable(function() torch.save(5, path) end, "torch.save: expected a tensor or a table of tensors as argument 1, got number")
  T.error_usable(function() torch.save(torch.ones(1), 5) end, "torch.save: expected a file name (string) as argument 2, got number")
  T.error_usable(function() torch.save(torch.ones(1), "/nonexistent-dir/x.safetensors") end,
                 "torch.save: /nonexistent-dir/x.safetensors: cannot create a file there")
  T.error_usable(function() torch.save(torch.ones(1), "/tmp") end, "torch.save: /tmp: cannot replace the file: Is a directory")
  -- An empty table, a shared tensor and a transposed view round-trip.
  torch.save({}, path)
  T.eq(next(torch.load(path)), nil)
  local shared = torch.tensor({1.0, 2.0})
  torch.save({a = shared, b = shared}, path)
  local back = torch.load(path)
  T.eq(back.a:tolist(), {1, 2})
  T.eq(back.b:tolist(), {1, 2})
  torch.save(torch.arange(6):reshape(2, 3):t(), path)
  T.eq(torch.load(path):tolist(), {{0, 3}, {1, 4}, {2, 5}})
  os.remove(path)
end)

T.test("torch.load: garbage files", function()
  local path = os.tmpname()
  local function write(bytes)
    local f = assert(io.open(path, "wb"))
    f:write(bytes)
    f:close()
  end
  local function header(json, data) return string.pack("<I8", #json) .. json .. (data or "") end
  local cases = {
    {"", "the file is 0 bytes, too short for a safetensors file"},
    {"garbage", "the file is 7 bytes, too short for a safetensors file"},
    {string.pack("<i8", math.maxinteger) .. "{}", "the header length 9223372036854775807 goes beyond the end of the file"},
    {header('{"a":'), "bad JSON"},
    {header('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'), "tensor 'a' has data_offsets [0, 8] beyond the 0-byte data buffer"},
    {header('{"a":{"dtype":"F32","shape":[1000000000000,1000000000],"data_offsets":[0,4]}}', "abcd"), "torch.load"},
    {header('{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}', "abcd"), "torch.load"},
    {header('{"a":{"dtype":"X99","shape":[1],"data_offsets":[0,4]}}', "abcd"), "torch.load"},
    {header('{"a":{"dtype":"F32","shape":[2],"data_offsets":[4,0]}}', "abcdefgh"), "torch.load"},
    {header('[1,2]'), "torch.load"},
  }
  for _, c in ipairs(cases) do
    write(c[1])
    T.error_usable(function() torch.load(path) end, c[2])
  end
  os.remove(path)
  T.error_usable(function() torch.load(path) end, "cannot open file: No such file or directory")
  T.error_usable(function() torch.load("/tmp") end, "torch.load: /tmp: not a regular file")
  T.error_usable(function() torch.load(nil) end, "torch.load: expected a file name (string) as argument 1, got nothing")
  T.error_usable(function() torch.load(torch.ones(1)) end, "torch.load: expected a file name (string) as argument 1, got tensor")
end)

---------------------------------------------------------------------------------------------
-- torch.utils.progress

T.test("utils.progress: odd counts, options and postfixes", function()
  local progress = torch.utils.progress
  T.error_usable(function() progress() end, "utils.progress: expected a count or a table to iterate over, got a nil")
  T.error_usable(function() progress("5") end, "utils.progress: expected a count or a table to iterate over, got a string")
  T.error_usable(function() progress(-1) end, "utils.progress: n must be an integer >= 0, got -1")
  T.error_usable(function() progress(2.5) end, "utils.progress: n must be an integer >= 0, got 2.5")
  T.error_usable(function() progress(math.huge) end, "utils.progress: n must be an integer >= 0, got inf")
  T.error_usable(function() progress(0 / 0) end, "utils.progress: n must be an integer >= 0, got")
  T.error_usable(function() progress(3, 5) end, "utils.progress: options must be a table {desc=, total=, file=, force=}, got a number")
  T.error_usable(function() progress(3, {bogus = 1}) end, "utils.progress: unknown keyword 'bogus' (valid: desc, total, file, force)")
  T.error_usable(function() progress(3, {desc = 5}) end, "utils.progress: option 'desc' must be a string, got a number")
  T.error_usable(function() progress({1}, {total = -1}) end, "utils.progress: total must be an integer >= 0, got -1")
  T.error_usable(function() progress(3, {file = 5, force = true}) end, "utils.progress: file must be an open file or an object with a write method")
  local bar = progress(3)
  T.error_usable(function() bar:set_postfix(5) end, "utils.progress: set_postfix expects a table {name = value}, got a number")
  T.error_usable(function() bar:set_postfix({loss = {}}) end, "utils.progress: set_postfix value 'loss' must be a number, a string, a boolean or a one-element tensor, got a table")
  -- 0 iterations, a count, and a huge count cut short all behave as numeric for loops.
  local n = 0
  for _ in progress(0) do n = n + 1 end
  T.eq(n, 0)
  local seen = {}
  for i in progress(3) do seen[#seen + 1] = i end
  T.eq(seen, {1, 2, 3})
  n = 0
  for _ in progress(math.maxinteger) do
    n = n + 1
    if n == 5 then break end
  end
  T.eq(n, 5)
end)

T.test("calling the tensor finalizer by hand is harmless", function()
  local x = torch.ones(3)
  local mt = getmetatable(x)
  mt.__gc(x)
  mt.__gc(x)  -- twice
  T.error_usable(function() return x + 1 end, "this tensor was freed")
  mt.__gc(io.stdout)  -- another kind of userdata
  mt.__gc({})
  T.truthy(io.type(io.stdout) == "file")
  T.eq(torch.ones(2):sum():item(), 2.0)
end)

T.done()
