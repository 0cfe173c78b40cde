-- The Lua-written part of the numpy module; receives the module table built from the
-- C++ registry and adds NumPy's constants.
local np = ...

np.pi = math.pi
np.e = math.exp(1)
np.inf = math.huge
np.nan = 0 / 0
