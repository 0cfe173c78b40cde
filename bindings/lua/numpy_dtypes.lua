-- NumPy's np.iinfo and np.finfo (the tables are built by torch._iinfo / torch._finfo in
-- torch_dtypes.lua); finfo's resolution is rounded to the dtype, as NumPy's is.
local np = ...
local torch = require("torch")

np.iinfo = torch._strict("iinfo", function(dtype) return torch._iinfo("iinfo", dtype) end)
np.finfo = torch._strict("finfo", function(dtype) return torch._finfo("finfo", dtype, true) end)
torch._doc[np.iinfo] = "iinfo(dtype) -> table: bits, min, max and dtype of an integer dtype (uint64's max as " ..
  "the float 2^64)."
torch._doc[np.finfo] = "finfo(dtype) -> table: bits, eps, max, min, tiny, smallest_normal, resolution " ..
  "(10^-precision rounded to the dtype, as NumPy's) and dtype of a floating dtype."
np.j = torch.j  -- the imaginary unit (bindings/lua/torch_complex.lua): 3 + 4*np.j is 3+4j
np.conj = np.conjugate  -- NumPy has both names (bindings/bind_complex.cpp)
