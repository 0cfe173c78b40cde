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
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local common = dofile(dir .. "common.lua")
local opts = common.parse_args({...}, {dtype = "float64", device = "cpu", steps = 500, print_every = 100,
                                       data = false, seed = false})

-- N is batch size; D_in is input dimension;
-- H is hidden dimension; D_out is output dimension.
local N, D_in, H, D_out = 64, 1000, 100, 10
-- Random (or loaded) input and output data and initial weights.
local x, y, w1, w2 = common.two_layer_data(opts, N, D_in, H, D_out)

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
