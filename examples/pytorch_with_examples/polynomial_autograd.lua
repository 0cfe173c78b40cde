-- "PyTorch: Tensors and autograd" from PyTorch's tutorial "Learning PyTorch with Examples": the
-- polynomial fit of sin(x), with the backward pass computed by autograd. A tensor with
-- requires_grad = true is a node of the graph that autograd records; after loss:backward(),
-- its .grad holds the gradient of the loss with respect to it.
--
--   tide polynomial_autograd.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_autograd.py) the weights start
-- where PyTorch's did, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
--
-- With --compile 1 each step (forward, loss, backward, update) runs under torch.compile; it
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
      error("polynomial_autograd.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])
torch.manual_seed(0)

local dtype = torch.float
local device = "cpu"

-- Create Tensors to hold input and outputs. By default, requires_grad = false, which
-- indicates that we do not need to compute gradients with respect to these Tensors during the
-- backward pass.
local x = torch.linspace(-math.pi, math.pi, 2000, {dtype = dtype, device = device})
local y = torch.sin(x)

-- Create random Tensors for weights. For a third order polynomial, we need 4 weights:
-- y = a + b x + c x^2 + d x^3. Setting requires_grad = true indicates that we want to compute
-- gradients with respect to these Tensors during the backward pass.
local function weight(name)
  if init then return torch.tensor(init[name]:item(), {dtype = dtype, device = device, requires_grad = true}) end
  return torch.randn({}, {dtype = dtype, device = device, requires_grad = true})
end
local a, b, c, d = weight("a"), weight("b"), weight("c"), weight("d")

local learning_rate = 1e-6
-- One step of gradient descent; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: compute predicted y using operations on Tensors.
  local y_pred = a + b * x + c * x ^ 2 + d * x ^ 3

  -- Compute loss using operations on Tensors. loss is a 0-dim tensor; loss:item() (in the
  -- loop below) gets the number it holds.
  local loss = (y_pred - y):pow(2):sum()

  -- Use autograd to compute the backward pass: the gradient of loss with respect to all
  -- Tensors with requires_grad = true lands in a.grad, b.grad, c.grad and d.grad.
  loss:backward()

  -- Manually update weights using gradient descent, under torch.no_grad because the weights
  -- require grad but the update must not be recorded.
  torch.no_grad(function()
    a:sub_(learning_rate * a.grad)
    b:sub_(learning_rate * b.grad)
    c:sub_(learning_rate * c.grad)
    d:sub_(learning_rate * d.grad)

    -- Manually zero the gradients after updating weights
    a.grad = nil
    b.grad = nil
    c.grad = nil
    d.grad = nil
  end)
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
