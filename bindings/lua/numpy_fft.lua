-- np.fft's Lua-written functions (fftfreq, rfftfreq, fftshift, ifftshift): the ones of
-- torch_fft.lua with NumPy's conventions.
local np = ...
require("torch")._fft_install(np, true)
