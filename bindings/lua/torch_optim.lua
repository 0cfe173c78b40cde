-- torch.optim: optimizers and learning-rate schedulers. Each step is one fused C++ loop per
-- parameter (torch._*_step_); the bookkeeping is Lua. Receives the torch module table.
local torch = ...
local optim = {}
torch.optim = optim
