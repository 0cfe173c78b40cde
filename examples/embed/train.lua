-- Run by host.cpp: trains a linear model on the host's buffers X (n x 2) and y (n x 1),
-- which are the host's own memory (no copy), reports the loss through the host function
-- log_metric, and leaves the trained parameters in the globals `weight` and `bias`.
local torch = require "torch"
local nn, optim = torch.nn, torch.optim

local epochs = tonumber(arg[1]) or 200
torch.manual_seed(0)
local model = nn.Linear(2, 1)
local opt = optim.SGD(model:parameters(), {lr = 0.1})
local loss_fn = nn.MSELoss()
for epoch = 1, epochs do
  opt:zero_grad()
  local loss = loss_fn(model(X), y)
  loss:backward()
  opt:step()
  if epoch % 50 == 0 then log_metric("loss", loss:item()) end
end
weight = model.weight:detach()
bias = model.bias:detach()
