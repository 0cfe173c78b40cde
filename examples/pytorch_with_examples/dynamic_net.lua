-- "PyTorch: Control Flow + Weight Sharing" from PyTorch's tutorial "Learning PyTorch with
-- Examples": to show the power of dynamic graphs, a strange model: a polynomial of order 3 to
-- 5 that on each forward pass chooses a random order between 4 and 5 and reuses the same
-- weight several times to compute the fourth and fifth order.
--
--   tide dynamic_net.lua [init.npz [steps]] [--steps N] [--compile 1]
--
-- With init.npz (written by the PyTorch original, dynamic_net.py) the parameters start where
-- PyTorch's did and every forward pass makes PyTorch's random choice, so the printed losses
-- match PyTorch's (tests/lua/test_examples_pytorch.sh); steps (or --steps N) replaces the
-- 30000 steps.
--
-- With --compile 1 each step (forward, loss, zero_grad, backward, optimizer step) runs under
-- torch.compile. The forward's random choice is math.random (or, with init.npz, a value read
-- with item()), which a replay could not repeat, so the first call stops the capture and the
-- steps run eagerly, with the message saying why: the same numbers, then the statistics.

-- The arguments: the positional ones above, and the options (--compile N, N ~= 0: compile
-- the step below).
local positional, compile, steps_opt = {}, 0
do
  local i = 1
  while i <= #arg do
    local a = arg[i]
    if a == "--compile" or a == "--steps" then
      local v = assert(tonumber(arg[i + 1]), a .. " takes a number")
      if a == "--compile" then compile = v else steps_opt = v end
      i = i + 2
    elseif a:sub(1, 2) == "--" then
      error("dynamic_net.lua: unknown option " .. a .. " (options: --steps N, --compile N)", 0)
    else
      positional[#positional + 1] = a; i = i + 1
    end
  end
end
local init = positional[1] and np.load(positional[1])
local steps = steps_opt or tonumber(positional[2]) or 30000
torch.manual_seed(0)
math.randomseed(0)

-- random.randint(4, 6) of the Python original, or the choice PyTorch's run made at this pass.
local pass = 0
local function random_randint(lo, hi)
  pass = pass + 1
  if init then return init.choices[pass]:item() end
  return math.random(lo, hi)
end

local DynamicNet = nn.Module:extend("DynamicNet")

-- In the constructor we instantiate five parameters and assign them as members.
function DynamicNet:init()
  self.a = nn.Parameter(torch.randn({}))
  self.b = nn.Parameter(torch.randn({}))
  self.c = nn.Parameter(torch.randn({}))
  self.d = nn.Parameter(torch.randn({}))
  self.e = nn.Parameter(torch.randn({}))
end

-- For the forward pass of the model, we randomly choose either 4, 5 and reuse the e parameter
-- to compute the contribution of these orders. Since each forward pass builds a dynamic
-- computation graph, we can use normal Lua control flow like loops or conditional statements
-- when defining the forward pass of the model. Here we also see that it is perfectly safe to
-- reuse the same parameter many times when defining a computational graph.
function DynamicNet:forward(x)
  local y = self.a + self.b * x + self.c * x ^ 2 + self.d * x ^ 3
  for exp = 4, random_randint(4, 6) - 1 do
    y = y + self.e * x ^ exp
  end
  return y
end

-- Just like any class in Lua, you can also define custom methods on modules
function DynamicNet:string()
  return string.format("y = %s + %s x + %s x^2 + %s x^3 + %s x^4 ? + %s x^5 ?", self.a:item(), self.b:item(),
                       self.c:item(), self.d:item(), self.e:item(), self.e:item())
end

-- Create Tensors to hold input and outputs.
local x = torch.linspace(-math.pi, math.pi, 2000)
local y = torch.sin(x)

-- Construct our model by instantiating the class defined above
local model = DynamicNet()
if init then
  model:load_state_dict({a = init.a, b = init.b, c = init.c, d = init.d, e = init.e})
end

-- Construct our loss function and an Optimizer. Training this strange model with vanilla
-- stochastic gradient descent is tough, so we use momentum
local criterion = nn.MSELoss{reduction = "sum"}
local optimizer = optim.SGD(model:parameters(), {lr = 1e-8, momentum = 0.9})
-- One optimization step; returns the loss before it (a 0-dim tensor).
local function step()
  -- Forward pass: Compute predicted y by passing x to the model
  local y_pred = model(x)

  -- Compute loss
  local loss = criterion(y_pred, y)

  -- Zero gradients, perform a backward pass, and update the weights. PyTorch 1.13's
  -- zero_grad() zeroes the gradients (set_to_none=False), so a pass that does not use e still
  -- moves e by its momentum; tide's default (set_to_none=true, PyTorch 2's) would skip it.
  optimizer:zero_grad({set_to_none = false})
  loss:backward()
  optimizer:step()
  return loss
end
if compile ~= 0 then step = torch.compile(step) end
for t = 0, steps - 1 do
  local loss = step()
  -- Print loss
  if t % 2000 == 1999 then print(t, loss:item()) end
end

print("Result: " .. model:string())
if compile ~= 0 then
  local s = torch.compiler.stats(step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
