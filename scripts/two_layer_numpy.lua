-- A fully-connected ReLU network with one hidden layer and no biases, trained to predict
-- y from x by minimizing squared Euclidean distance. The forward pass, the loss and the
-- backward pass are written out by hand with NumPy-style operations: this is the classic
-- NumPy example, translated line by line.
--
--   tide scripts/two_layer_numpy.lua [--dtype float64|float32] [--steps 500]
--        [--data file.npz] [--seed S] [--print-every 100]
--
-- --data loads x, y, w1, w2 from an .npz file (as written by np.savez) instead of drawing
-- them at random. Prints "step T loss L" every --print-every steps and "final loss L".
local np = require "numpy"

local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local opts = dofile(dir .. "common.lua").parse_args({...}, {dtype = "float64", steps = 500, print_every = 100,
                                                          data = false, seed = false})

-- N is batch size; D_in is input dimension;
-- H is hidden dimension; D_out is output dimension.
local N, D_in, H, D_out = 64, 1000, 100, 10

local x, y, w1, w2
if opts.data then
  local d = np.load(opts.data)
  x, y, w1, w2 = d.x, d.y, d.w1, d.w2
else
  if opts.seed then np.random.seed(opts.seed) end
  -- Create random input and output data
  x = np.random.randn(N, D_in)
  y = np.random.randn(N, D_out)
  -- Randomly initialize weights
  w1 = np.random.randn(D_in, H)
  w2 = np.random.randn(H, D_out)
end
x, y, w1, w2 = x:astype(opts.dtype), y:astype(opts.dtype), w1:astype(opts.dtype), w2:astype(opts.dtype)

local learning_rate = 1e-6
local loss
for t = 0, opts.steps - 1 do
  -- Forward pass: compute predicted y
  local h = x:dot(w1)
  local h_relu = np.maximum(h, 0)
  local y_pred = h_relu:dot(w2)

  -- Compute and print loss
  loss = np.square(y_pred - y):sum():item()
  if t % opts.print_every == opts.print_every - 1 then
    print(string.format("step %d loss %.17g", t, loss))
  end

  -- Backprop to compute gradients of w1 and w2 with respect to loss
  local grad_y_pred = 2.0 * (y_pred - y)
  local grad_w2 = h_relu.T:dot(grad_y_pred)
  local grad_h_relu = grad_y_pred:dot(w2.T)
  local grad_h = grad_h_relu:copy()
  grad_h[np.less(h, 0)] = 0
  local grad_w1 = x.T:dot(grad_h)

  -- Update weights (w1 -= learning_rate * grad_w1)
  np.subtract(w1, learning_rate * grad_w1, {out = w1})
  np.subtract(w2, learning_rate * grad_w2, {out = w2})
end
print(string.format("final loss %.17g", loss))
