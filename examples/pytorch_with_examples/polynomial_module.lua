-- "PyTorch: Custom nn Modules" from PyTorch's tutorial "Learning PyTorch with Examples": the
-- polynomial as a subclass of nn.Module with four parameters, trained by SGD. Define a model
-- this way whenever it is more complex than a sequence of existing Modules.
--
--   tide polynomial_module.lua [init.npz] [--compile 1]
--
-- With init.npz (written by the PyTorch original, polynomial_module.py) the parameters start
-- where PyTorch's did, and the printed losses match PyTorch's (tests/lua/test_examples_pytorch.sh).
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
      error("polynomial_module.lua: unknown option " .. a .. " (options: --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])
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
-- One optimization step; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: Compute predicted y by passing x to the model
  local y_pred = model(x)

  -- Compute loss
  local loss = criterion(y_pred, y)

  -- Zero gradients, perform a backward pass, and update the weights.
  optimizer:zero_grad()
  loss:backward()
  optimizer:step()
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, 1999 do
  local loss = step()
  -- Print loss
  if t % 100 == 99 then print(t, loss:item()) end
end

print("Result: " .. model:string())
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
