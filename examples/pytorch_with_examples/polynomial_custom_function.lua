-- "PyTorch: Defining New autograd Functions" from PyTorch's tutorial "Learning PyTorch with
-- Examples": y = a + b * P3(c + d * x), where P3(x) = (5x^3 - 3x) / 2 is the Legendre
-- polynomial of degree three, computed by a custom autograd Function whose backward is
-- P3'(x) = 3/2 (5x^2 - 1). The weights start at fixed values, the same as in the PyTorch
-- original (polynomial_custom_function.py), so the printed losses match PyTorch's
-- (tests/lua/test_examples_pytorch.sh).
--
--   tide polynomial_custom_function.lua [--compile 1]
--
-- With --compile 1 each step (forward through the custom Function, loss, backward, update)
-- runs under torch.compile; it returns the loss, which the loop reads and prints outside the
-- compiled function. The same numbers, then the compile statistics.

-- We can implement our own custom autograd Functions by extending torch.autograd.Function and
-- implementing the forward and backward passes which operate on Tensors.
local LegendrePolynomial3 = torch.autograd.Function:extend("LegendrePolynomial3")

-- The arguments: --compile N (N ~= 0: compile the step below); a positional one (the .npz
-- tests/lua/test_examples_pytorch.sh gives every script) is ignored.
local positional, compile = {}, 0
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--compile" then
      compile = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
    elseif a:sub(1, 2) == "--" then
      error("polynomial_custom_function.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end

-- In the forward pass we receive a Tensor containing the input and return a Tensor
-- containing the output. ctx is a context object that can be used to stash information for
-- backward computation: tensors with ctx:save_for_backward, anything else as ctx fields.
function LegendrePolynomial3.forward(ctx, input)
  ctx:save_for_backward(input)
  return 0.5 * (5 * input ^ 3 - 3 * input)
end

-- In the backward pass we receive a Tensor containing the gradient of the loss with respect
-- to the output, and we need to compute the gradient of the loss with respect to the input.
function LegendrePolynomial3.backward(ctx, grad_output)
  local input = table.unpack(ctx.saved_tensors)
  return grad_output * 1.5 * (5 * input ^ 2 - 1)
end

local dtype = torch.float
local device = "cpu"
-- local device = "cuda"  -- Uncomment this to run on GPU

-- Create Tensors to hold input and outputs.
local x = torch.linspace(-math.pi, math.pi, 2000, {device = device, dtype = dtype})
local y = torch.sin(x)

-- Create Tensors for weights. For this example, we need 4 weights: y = a + b * P3(c + d * x);
-- these weights need to be initialized not too far from the correct result to ensure
-- convergence.
local a = torch.full({}, 0.0, {device = device, dtype = dtype, requires_grad = true})
local b = torch.full({}, -1.0, {device = device, dtype = dtype, requires_grad = true})
local c = torch.full({}, 0.0, {device = device, dtype = dtype, requires_grad = true})
local d = torch.full({}, 0.3, {device = device, dtype = dtype, requires_grad = true})

local learning_rate = 5e-6
-- One step of gradient descent; returns the loss before it (a 0-dim tensor).
local function step()
  -- To apply our Function, we use Function.apply. We alias this as P3.
  local P3 = LegendrePolynomial3.apply

  -- Forward pass: compute predicted y using operations; we compute P3 using our custom
  -- autograd operation.
  local y_pred = a + b * P3(c + d * x)

  -- Compute loss
  local loss = (y_pred - y):pow(2):sum()

  -- Use autograd to compute the backward pass.
  loss:backward()

  -- Update weights using gradient descent
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

print(string.format("Result: y = %s + %s * P3(%s + %s x)", a:item(), b:item(), c:item(), d:item()))
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
