-- Linear regression with torch.nn: 100 samples of 10 features, y = X w + b + noise, fitted
-- by nn.Linear with nn.MSELoss and optim.SGD for 1000 epochs on the device given.
--
--   tide scripts/linear_regression.lua [--device cpu|cuda] [--epochs 1000] [--lr 0.01] [--seed 0]
--        [--compile 0|1]
--
-- Prints the loss every 100 epochs, the final loss, and how far the learned weights are
-- from the true ones. With --compile 1 each epoch's step is torch.compile'd (docs/compile.md):
-- the same numbers, bit for bit.
local torch = require "torch"
local nn, optim = torch.nn, torch.optim
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local opts = dofile(dir .. "common.lua").parse_args({...}, {device = "cpu", epochs = 1000, lr = 0.01, seed = 0, compile = 0})

torch.manual_seed(opts.seed)
local dev = opts.device
local true_w = torch.randn(10, 1, {device = dev})
local true_b = 0.5
local X = torch.randn(100, 10, {device = dev})
local y = X:mm(true_w) + true_b + torch.randn(100, 1, {device = dev}) * 0.01

local model = nn.Linear(10, 1):to(dev)
local criterion = nn.MSELoss()
local opt = optim.SGD(model:parameters(), {lr = opts.lr})
local function train_step()
  opt:zero_grad()
  local l = criterion(model(X), y)
  l:backward()
  opt:step()
  return l:detach()
end
if opts.compile ~= 0 then train_step = torch.compile(train_step) end
local loss
for epoch = 1, opts.epochs do
  loss = train_step()
  if epoch % 100 == 0 then print(string.format("epoch %d loss %.6g", epoch, loss:item())) end
end
print(string.format("final loss %.6g", loss:item()))
local w_err = (model.weight:detach():t() - true_w):abs():max():item()
local b_err = math.abs(model.bias:item() - true_b)
print(string.format("max |w - true_w| %.3g, |b - true_b| %.3g", w_err, b_err))
