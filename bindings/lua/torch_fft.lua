-- The Lua-written parts of torch.fft and (through numpy_fft.lua) np.fft: the sample
-- frequencies fftfreq and rfftfreq, and fftshift / ifftshift, which move the zero frequency
-- to the centre and back (cyclic shifts by n // 2 along each dim, as roll). The transforms are
-- C++ bindings (bindings/bind_fft.cpp). torch._fft_install(M, numpy) adds these to M.fft with
-- M's conventions: NumPy's parameter names (n, d; x, axes) and float64 frequencies, or
-- PyTorch's (n, d, {dtype=, device=, requires_grad=}; input, dim) in the default dtype.
-- Loaded after torch_doc.lua (each function's help() text goes into torch._doc here) and after
-- torch_strict.lua, which has nothing to wrap here: every function takes varargs and checks
-- them with nn._util.args.
local torch = ...
local util = torch.nn._util
local fail, describe = util.fail, util.describe

local FLOATS = {float16 = true, bfloat16 = true, float32 = true, float64 = true}

local function is_list(v) return type(v) == "table" and getmetatable(v) == nil end

-- The frequencies of a length-n transform with sample spacing d: k / (n d) for the n/2+1
-- non-negative k (rfftfreq), or for k = 0, 1, ..., then -(n // 2), ..., -1 (fftfreq).
local function frequencies(M, op, numpy, one_sided, ...)
  local o = numpy and util.args(op, {"n", "d"}, 1, {d = 1.0}, ...)
    or util.args(op, {"n", "d", "dtype", "device", "requires_grad"}, 1, {d = 1.0, requires_grad = false}, ...)
  local n = util.check_int(op, "n", o.n, 1)
  local d = util.check_number(op, "d", o.d)
  local k
  if one_sided then
    k = M.arange(0, n // 2 + 1)
  else
    local cat = numpy and M.concatenate or torch.cat
    k = cat({M.arange(0, (n - 1) // 2 + 1), M.arange(-(n // 2), 0)})
  end
  if numpy then return k * (1.0 / (n * d)) end
  util.check_bool(op, "requires_grad", o.requires_grad)
  local dtype = o.dtype or torch.get_default_dtype()
  if not FLOATS[dtype] then fail(op, "dtype must be a floating-point dtype, got %s", describe(dtype)) end
  local f = k:to{dtype = dtype, device = o.device or "cpu"} * (1.0 / (n * d))
  if o.requires_grad then f:requires_grad_() end
  return f
end

-- x rolled by n // 2 (fftshift) or -(n // 2) (ifftshift) along each of dims (default all).
local function shift(op, x, dims, inverse)
  if x:dim() == 0 then fail(op, "expected an array of at least 1 dimension, got a 0-d one") end
  local list = dims
  if dims == nil then
    list = {}
    for i = 1, x:dim() do list[i] = i end
  elseif not is_list(dims) then
    list = {dims}
  end
  local moved = false
  for _, d in ipairs(list) do
    local i = math.type(d) and math.tointeger(d)
    if not i then fail(op, "dims must be integers, got %s", describe(d)) end
    local nd = x:dim()
    if i == 0 or i > nd or i < -nd then
      fail(op, "dim %d is out of range for a tensor of %d dims (valid 1..%d or -%d..-1)", i, nd, nd, nd)
    end
    if i < 0 then i = nd + 1 + i end
    local n = x.shape[i]
    local s = inverse and (n - n // 2) or n // 2
    if n > 0 and s % n ~= 0 then
      x = torch.cat({x:narrow(i, n - s + 1, s), x:narrow(i, 1, n - s)}, i)
      moved = true
    end
  end
  return moved and x or x:clone()
end

local DOCS = {
  fftfreq = "fft.fftfreq(n[, d]) (np) / (n[, d][, {d=, dtype=, device=, requires_grad=}]) (torch) -> Tensor: the "
    .. "sample frequencies of a length-n fft with spacing d: {0, 1, ..., -(n // 2), ..., -1} / (n d); np: float64, "
    .. "torch: the default dtype.",
  rfftfreq = "fft.rfftfreq(n[, d]) (np) / (n[, d][, {d=, dtype=, device=, requires_grad=}]) (torch) -> Tensor: the "
    .. "n // 2 + 1 non-negative frequencies of an rfft: {0, 1, ..., n // 2} / (n d).",
  fftshift = "fft.fftshift(x[, axes]) (np) / (input[, dim]) (torch) -> Tensor: the zero frequency moved to the "
    .. "centre: a cyclic shift by n // 2 along each of the dims (default all).",
  ifftshift = "fft.ifftshift(x[, axes]) (np) / (input[, dim]) (torch) -> Tensor: the inverse of fftshift (a shift "
    .. "by -(n // 2)).",
}

function torch._fft_install(M, numpy)
  local F = M.fft
  local function input(op, x)
    if numpy then return M.asarray(x) end
    return util.check_tensor(op, "input", x)
  end
  F.fftfreq = function(...) return frequencies(M, "fft.fftfreq", numpy, false, ...) end
  F.rfftfreq = function(...) return frequencies(M, "fft.rfftfreq", numpy, true, ...) end
  for name, inverse in pairs({fftshift = false, ifftshift = true}) do
    local op = "fft." .. name
    F[name] = function(...)
      local o = numpy and util.args(op, {"x", "axes"}, 1, {}, ...) or util.args(op, {"input", "dim"}, 1, {}, ...)
      return shift(op, input(op, numpy and o.x or o.input), numpy and o.axes or o.dim, inverse)
    end
  end
  for name, doc in pairs(DOCS) do torch._doc[F[name]] = doc end
end

torch._fft_install(torch, false)
