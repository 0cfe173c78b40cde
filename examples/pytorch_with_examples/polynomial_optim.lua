-- "PyTorch: optim" from PyTorch's tutorial "Learning PyTorch with Examples": the nn model of
-- polynomial_nn.lua, with the weights updated by an optimizer from the optim package instead
-- of by hand.
--
--   tide polynomial_optim.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_optim.py) the layer starts from
-- PyTorch's weights, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
--
-- With --compile 1 each step (forward, loss, zero_grad, backward, optimizer step) runs under
-- torch.compile; it returns the loss, which the loop reads and prints outside the compiled
-- function. The same numbers, then the compile statistics.

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
      error("polynomial_optim.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])
torch.manual_seed(0)

-- Create Tensors to hold input and outputs.
local x = torch.linspace(-math.pi, math.pi, 2000)
local y = torch.sin(x)

-- Prepare the input tensor (x, x^2, x^3).
local p = torch.tensor{1, 2, 3}
local xx = x:unsqueeze(-1):pow(p)

-- Use the nn package to define our model and loss function.
local model = nn.Sequential(
  nn.Linear(3, 1),
  nn.Flatten(1, 2)
)
if init then
  torch.no_grad(function()
    model[1].weight:copy_(init.weight)
    model[1].bias:copy_(init.bias)
  end)
end
local loss_fn = nn.MSELoss{reduction = "sum"}

-- Use the optim package to define an Optimizer that will update the weights of the model for
-- us. Here we will use SGD; the optim package contains many other optimization algorithms.
-- The first argument to the SGD constructor tells the optimizer which Tensors it should update.
local learning_rate = 1e-6
local optimizer = optim.SGD(model:parameters(), {lr = learning_rate})
-- One optimization step; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: compute predicted y by passing x to the model.
  local y_pred = model(xx)

  -- Compute loss.
  local loss = loss_fn(y_pred, y)

  -- Before the backward pass, use the optimizer object to zero all of the gradients for the
  -- variables it will update (which are the learnable weights of the model). This is because
  -- by default, gradients are accumulated (not overwritten) whenever backward() is called.
  optimizer:zero_grad()

  -- Backward pass: compute gradient of the loss with respect to model parameters
  loss:backward()

  -- Calling the step function on an Optimizer makes an update to its parameters
  optimizer:step()
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, 1999 do
  local loss = step()
  -- Print loss.
  if t % 100 == 99 then print(t, loss:item()) end
end

local linear_layer = model[1]
print(string.format("Result: y = %s + %s x + %s x^2 + %s x^3", linear_layer.bias:item(),
                    linear_layer.weight[{1, 1}]:item(), linear_layer.weight[{1, 2}]:item(),
                    linear_layer.weight[{1, 3}]:item()))
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
