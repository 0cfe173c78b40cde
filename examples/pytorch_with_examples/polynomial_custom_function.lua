-- "PyTorch: Defining New autograd Functions" from PyTorch's tutorial "Learning PyTorch with
-- Examples": y = a + b * P3(c + d * x), where P3(x) = (5x^3 - 3x) / 2 is the Legendre
-- polynomial of degree three, computed by a custom autograd Function whose backward is
-- P3'(x) = 3/2 (5x^2 - 1). The weights start at fixed values, the same as in the PyTorch
-- original (polynomial_custom_function.py), so the printed losses match PyTorch's
-- (tests/lua/test_examples_pytorch.sh).
--
--   tide polynomial_custom_function.lua

-- We can implement our own custom autograd Functions by extending torch.autograd.Function and
-- implementing the forward and backward passes which operate on Tensors.
local LegendrePolynomial3 = torch.autograd.Function:extend("LegendrePolynomial3")

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
for t = 0, 1999 do
  -- To apply our Function, we use Function.apply. We alias this as P3.
  local P3 = LegendrePolynomial3.apply

  -- Forward pass: compute predicted y using operations; we compute P3 using our custom
  -- autograd operation.
  local y_pred = a + b * P3(c + d * x)

  -- Compute and print loss
  local loss = (y_pred - y):pow(2):sum()
  if t % 100 == 99 then print(t, loss:item()) end

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
end

print(string.format("Result: y = %s + %s * P3(%s + %s x)", a:item(), b:item(), c:item(), d:item()))
