-- np.linalg's Lua-written functions (matrix_rank, matrix_power, cond, multi_dot): the ones
-- of torch_linalg.lua with NumPy's conventions.
local np = ...
require("torch")._linalg_install(np, true)
