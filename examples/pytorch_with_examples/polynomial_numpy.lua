-- "Warm-up: numpy" from PyTorch's tutorial "Learning PyTorch with Examples", in tide's NumPy
-- spelling: a third order polynomial, trained to predict y = sin(x) from -pi to pi by
-- minimizing squared Euclidean distance, with the forward pass, loss and backward pass
-- computed by hand.
--
--   tide polynomial_numpy.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_numpy.py) the weights start where
-- NumPy's did, and the printed losses match NumPy's (tests/lua/test_examples_pytorch.sh).
--
-- With --compile 1 each step runs under torch.compile (PyTorch 2 compiles NumPy code too);
-- here the weights are Lua numbers and every gradient is read with item(), so the first call
-- stops the capture (a value read into Lua) and the steps run eagerly, printing the same
-- numbers, then the compile statistics.

-- The arguments: the positional ones above, and the options (--compile N, N ~= 0: compile
-- the step below).
local positional, compile = {}, 0
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--compile" then
      compile = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
    elseif a:sub(1, 2) == "--" then
      error("polynomial_numpy.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])

-- Create random input and output data
local x = np.linspace(-math.pi, math.pi, 2000)
local y = np.sin(x)

-- Randomly initialize weights
np.random.seed(0)
local function weight(name) return init and init[name]:item() or np.random.randn() end
local a, b, c, d = weight("a"), weight("b"), weight("c"), weight("d")

local learning_rate = 1e-6
-- One step of gradient descent; returns the loss before it.
local function step()
  -- Forward pass: compute predicted y
  -- y = a + b x + c x^2 + d x^3
  local y_pred = a + b * x + c * x ^ 2 + d * x ^ 3

  -- Compute loss
  local loss = np.square(y_pred - y):sum():item()

  -- Backprop to compute gradients of a, b, c, d with respect to loss
  local grad_y_pred = 2.0 * (y_pred - y)
  local grad_a = grad_y_pred:sum():item()
  local grad_b = (grad_y_pred * x):sum():item()
  local grad_c = (grad_y_pred * x ^ 2):sum():item()
  local grad_d = (grad_y_pred * x ^ 3):sum():item()

  -- Update weights
  a = a - learning_rate * grad_a
  b = b - learning_rate * grad_b
  c = c - learning_rate * grad_c
  d = d - learning_rate * grad_d
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, 1999 do
  local loss = step()
  if t % 100 == 99 then print(t, loss) end
end

print(string.format("Result: y = %s + %s x + %s x^2 + %s x^3", a, b, c, d))
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
