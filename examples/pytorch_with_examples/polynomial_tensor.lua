-- "PyTorch: Tensors" from PyTorch's tutorial "Learning PyTorch with Examples": the polynomial
-- fit of sin(x) with tensors and hand-written gradients. A tensor is like a NumPy array, and
-- it can also live on a GPU: set device to "cuda".
--
--   tide polynomial_tensor.lua [init.npz]
--
-- With init.npz (written by the PyTorch original, polynomial_tensor.py) the weights start where
-- PyTorch's did, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
local init = arg[1] and np.load(arg[1])
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
for t = 0, 1999 do
  -- Forward pass: compute predicted y
  local y_pred = a + (b * x) + (c * x:pow(2)) + (d * x:pow(3))

  -- Compute and print loss
  local loss = (y_pred - y):pow(2):sum():item()
  if t % 100 == 99 then print(t, loss) end

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
end

print(string.format("Result: y = %s + %s x + %s x^2 + %s x^3", a:item(), b:item(), c:item(), d:item()))
