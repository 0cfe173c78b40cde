-- The Lua-written part of the torch module: receives the module table built from the C++
-- registry and adds what is easier to say in Lua.
local torch = ...

torch.inf = math.huge
torch.nan = 0 / 0
torch.pi = math.pi
torch.e = math.exp(1)
