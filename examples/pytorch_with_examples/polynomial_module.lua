-- "PyTorch: Custom nn Modules" from PyTorch's tutorial "Learning PyTorch with Examples": the
-- polynomial as a subclass of nn.Module with four parameters, trained by SGD. Define a model
-- this way whenever it is more complex than a sequence of existing Modules.
--
--   tide polynomial_module.lua [init.npz]
--
-- With init.npz (written by the PyTorch original, polynomial_module.py) the parameters start
-- where PyTorch's did, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
local init = arg[1] and np.load(arg[1])
torch.manual_seed(0)

local Polynomial3 = nn.Module:extend("Polynomial3")

-- In the constructor we instantiate four parameters and assign them as member parameters.
function Polynomial3:init()
  self.a = nn.Parameter(torch.randn({}))
  self.b = nn.Parameter(torch.randn({}))
  self.c = nn.Parameter(torch.randn({}))
  self.d = nn.Parameter(torch.randn({}))
end

-- In the forward function we accept a Tensor of input data and we must return a Tensor of
-- output data. We can use Modules defined in the constructor as well as arbitrary operators
-- on Tensors.
function Polynomial3:forward(x)
  return self.a + self.b * x + self.c * x ^ 2 + self.d * x ^ 3
end

-- Just like any class in Lua, you can also define custom methods on modules
function Polynomial3:string()
  return string.format("y = %s + %s x + %s x^2 + %s x^3", self.a:item(), self.b:item(), self.c:item(),
                       self.d:item())
end

-- Create Tensors to hold input and outputs.
local x = torch.linspace(-math.pi, math.pi, 2000)
local y = torch.sin(x)

-- Construct our model by instantiating the class defined above
local model = Polynomial3()
if init then model:load_state_dict(init) end

-- Construct our loss function and an Optimizer. model:parameters() holds the learnable
-- parameters (defined with nn.Parameter) which are members of the model.
local criterion = nn.MSELoss{reduction = "sum"}
local optimizer = optim.SGD(model:parameters(), {lr = 1e-6})
for t = 0, 1999 do
  -- Forward pass: Compute predicted y by passing x to the model
  local y_pred = model(x)

  -- Compute and print loss
  local loss = criterion(y_pred, y)
  if t % 100 == 99 then print(t, loss:item()) end

  -- Zero gradients, perform a backward pass, and update the weights.
  optimizer:zero_grad()
  loss:backward()
  optimizer:step()
end

print("Result: " .. model:string())
