-- "PyTorch: nn" from PyTorch's tutorial "Learning PyTorch with Examples": the polynomial fit
-- of sin(x) as a linear layer on (x, x^2, x^3), with the nn package's modules and loss, and a
-- hand-written gradient-descent update.
--
--   tide polynomial_nn.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_nn.py) the layer starts from
-- PyTorch's weights, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
--
-- With --compile 1 each step (forward, loss, zero_grad, backward, update) runs under
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
      error("polynomial_nn.lua: unknown option " .. a .. " (options: --compile N)", 0)
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

-- For this example, the output y is a linear function of (x, x^2, x^3), so we can consider it
-- as a linear layer neural network. Let's prepare the tensor (x, x^2, x^3): x:unsqueeze(-1)
-- has shape {2000, 1} and p has shape {3}, so broadcasting gives shape {2000, 3}.
local p = torch.tensor{1, 2, 3}
local xx = x:unsqueeze(-1):pow(p)

-- Use the nn package to define our model as a sequence of layers. nn.Sequential is a Module
-- which contains other Modules, and applies them in sequence to produce its output. The
-- Linear Module computes output from input using a linear function, and holds internal
-- Tensors for its weight and bias. The Flatten layer flattens the output of the linear layer
-- to a 1-D tensor, to match the shape of y (dims 1 to 2: PyTorch's Flatten(0, 1)).
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

-- The nn package also contains definitions of popular loss functions; in this case we will
-- use Mean Squared Error (MSE) as our loss function.
local loss_fn = nn.MSELoss{reduction = "sum"}

local learning_rate = 1e-6
-- One step of gradient descent; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: compute predicted y by passing x to the model. Modules are callable: when
  -- called with a Tensor of input data they produce a Tensor of output data.
  local y_pred = model(xx)

  -- Compute loss. We pass Tensors containing the predicted and true values of y, and the
  -- loss function returns a Tensor containing the loss.
  local loss = loss_fn(y_pred, y)

  -- Zero the gradients before running the backward pass.
  model:zero_grad()

  -- Backward pass: compute gradient of the loss with respect to all the learnable parameters
  -- of the model (tensors with requires_grad = true inside the modules).
  loss:backward()

  -- Update the weights using gradient descent. Each parameter is a Tensor, so we can access
  -- its gradients like we did before.
  torch.no_grad(function()
    for _, param in ipairs(model:parameters()) do
      param:sub_(learning_rate * param.grad)
    end
  end)
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, 1999 do
  local loss = step()
  -- Print loss
  if t % 100 == 99 then print(t, loss:item()) end
end

-- You can access the first layer of model like accessing the first item of a list
local linear_layer = model[1]

-- For linear layer, its parameters are stored as weight and bias.
print(string.format("Result: y = %s + %s x + %s x^2 + %s x^3", linear_layer.bias:item(),
                    linear_layer.weight[{1, 1}]:item(), linear_layer.weight[{1, 2}]:item(),
                    linear_layer.weight[{1, 3}]:item()))
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
