-- torch.nn: modules, layers, losses and nn.functional, written in Lua on the engine's
-- differentiable ops. Receives the torch module table.
local torch = ...
local nn = {}
torch.nn = nn
