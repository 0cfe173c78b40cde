-- A fully-connected ReLU network with one hidden layer and no biases, trained to predict
-- y from x by minimizing squared Euclidean distance. The forward pass, the loss and the
-- backward pass are written out by hand with torch tensor operations (no autograd): this
-- is the classic PyTorch "tensors" example, translated line by line.
--
--   tide scripts/two_layer_torch.lua [--dtype float64|float32] [--device cpu|cuda]
--        [--steps 500] [--data file.npz] [--seed S] [--print-every 100]
--
-- --data loads x, y, w1, w2 from an .npz file (as written by np.savez) instead of drawing
-- them at random. Prints "step T loss L" every --print-every steps and "final loss L".
local torch = require "torch"
local np = require "numpy"

local function parse_args(argv)
  local opts = {dtype = "float64", device = "cpu", steps = 500, print_every = 100}
  local i = 1
  while i <= #argv do
    local name, value = argv[i], argv[i + 1]
    if name == "--dtype" then opts.dtype = value
    elseif name == "--device" then opts.device = value
    elseif name == "--steps" then opts.steps = math.tointeger(tonumber(value))
    elseif name == "--data" then opts.data = value
    elseif name == "--seed" then opts.seed = math.tointeger(tonumber(value))
    elseif name == "--print-every" then opts.print_every = math.tointeger(tonumber(value))
    else error("unknown option " .. tostring(name) ..
               " (use --dtype, --device, --steps, --data, --seed, --print-every)", 0) end
    if value == nil then error("option " .. name .. " needs a value", 0) end
    i = i + 2
  end
  return opts
end
local opts = parse_args({...})

local dtype = opts.dtype
local device = opts.device

-- N is batch size; D_in is input dimension;
-- H is hidden dimension; D_out is output dimension.
local N, D_in, H, D_out = 64, 1000, 100, 10

local x, y, w1, w2
if opts.data then
  local d = np.load(opts.data)
  x = d.x:to{device = device, dtype = dtype}
  y = d.y:to{device = device, dtype = dtype}
  w1 = d.w1:to{device = device, dtype = dtype}
  w2 = d.w2:to{device = device, dtype = dtype}
else
  if opts.seed then torch.manual_seed(opts.seed) end
  -- Create random input and output data
  x = torch.randn(N, D_in, {device = device, dtype = dtype})
  y = torch.randn(N, D_out, {device = device, dtype = dtype})
  -- Randomly initialize weights
  w1 = torch.randn(D_in, H, {device = device, dtype = dtype})
  w2 = torch.randn(H, D_out, {device = device, dtype = dtype})
end

local learning_rate = 1e-6
local loss
for t = 0, opts.steps - 1 do
  -- Forward pass: compute predicted y
  local h = x:mm(w1)
  local h_relu = h:clamp{min = 0}
  local y_pred = h_relu:mm(w2)

  -- Compute and print loss
  loss = (y_pred - y):pow(2):sum():item()
  if t % opts.print_every == opts.print_every - 1 then
    print(string.format("step %d loss %.17g", t, loss))
  end

  -- Backprop to compute gradients of w1 and w2 with respect to loss
  local grad_y_pred = 2.0 * (y_pred - y)
  local grad_w2 = h_relu:t():mm(grad_y_pred)
  local grad_h_relu = grad_y_pred:mm(w2:t())
  local grad_h = grad_h_relu:clone()
  grad_h[h:lt(0)] = 0
  local grad_w1 = x:t():mm(grad_h)

  -- Update weights using gradient descent
  w1:sub_(learning_rate * grad_w1)
  w2:sub_(learning_rate * grad_w2)
end
print(string.format("final loss %.17g", loss))
