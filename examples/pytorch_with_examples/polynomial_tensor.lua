-- "PyTorch: Tensors" from PyTorch's tutorial "Learning PyTorch with Examples": the polynomial
-- fit of sin(x) with tensors and hand-written gradients. A tensor is like a NumPy array, and
-- it can also live on a GPU: set device to "cuda".
--
--   tide polynomial_tensor.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_tensor.py) the weights start where
-- PyTorch's did, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
--
-- With --compile 1 each step (forward, loss, gradients, update) runs under torch.compile; it
-- returns the loss, which the loop reads and prints outside the compiled function (reading
-- it inside would stop the capture). The same numbers, then the compile statistics.

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
      error("polynomial_tensor.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])
torch.manual_seed(0)

local dtype = torch.float
local device = "cpu"
-- local device = "cuda"  -- Uncomment this to run on GPU

-- Create random input and output data
local x = torch.linspace(-math.pi, math.pi, 2000, {device = device, dtype = dtype})
local y = torch.sin(x)

-- Randomly initialize weights
local function weight(name)
  if init then return torch.tensor(init[name]:item(), {device = device, dtype = dtype}) end
  return torch.randn({}, {device = device, dtype = dtype})
end
local a, b, c, d = weight("a"), weight("b"), weight("c"), weight("d")

local learning_rate = 1e-6
-- One step of gradient descent; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: compute predicted y
  local y_pred = a + (b * x) + (c * x:pow(2)) + (d * x:pow(3))

  -- Compute loss
  local loss = (y_pred - y):pow(2):sum()

  -- Backprop to compute gradients of a, b, c, d with respect to loss
  local grad_y_pred = -2.0 * (y - y_pred)
  local grad_a = grad_y_pred:sum()
  local grad_b = torch.matmul(grad_y_pred, x):sum()
  local grad_c = torch.matmul(grad_y_pred, x:pow(2)):sum()
  local grad_d = torch.matmul(grad_y_pred, x:pow(3)):sum()

  -- Update weights using gradient descent
  a:sub_(learning_rate * grad_a)
  b:sub_(learning_rate * grad_b)
  c:sub_(learning_rate * grad_c)
  d:sub_(learning_rate * grad_d)
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, 1999 do
  local loss = step()
  -- Print loss
  if t % 100 == 99 then print(t, loss:item()) end
end

print(string.format("Result: y = %s + %s x + %s x^2 + %s x^3", a:item(), b:item(), c:item(), d:item()))
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
