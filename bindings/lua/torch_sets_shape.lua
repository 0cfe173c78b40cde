-- The PyTorch spellings of the set, counting and shape functions of numpy_sets_shape.lua
-- (unique, bincount, histc, searchsorted, isin, diag, diagonal, trace, triu, tril, meshgrid,
-- repeat_interleave, roll, diff, atleast_nd, column_stack, dstack, rot90, vander), with
-- PyTorch's parameter names and defaults. They share numpy_sets_shape.lua's implementations
-- (np._sets_shape, reached when first called: the numpy module loads after this one). Dims
-- and returned indices are 1-based. Loaded after torch_doc.lua (its docs are set at the end)
-- and after torch_strict.lua, which has nothing to wrap here: every function takes varargs
-- and checks them with np._sets_shape.args.
local torch = ...

local function S() return require("numpy")._sets_shape end

-- A plain Lua table (no metatable: its entries and length are what they look like).
local function is_list(v) return type(v) == "table" and getmetatable(v) == nil end

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

local function tensor_arg(op, name, v)
  return S().check_tensor(op, name, v)
end

-- Values, then inverse indices (1-based, input's shape without dim) and counts as asked.
-- NaNs are distinct values, as in PyTorch; sorted=false gives them sorted too.
function torch.unique(...)
  local s = S()
  local o = s.args("unique", {"input", "sorted", "return_inverse", "return_counts", "dim"}, 1,
    {sorted = true, return_inverse = false, return_counts = false}, ...)
  local x = tensor_arg("unique", "input", o.input)
  for _, k in ipairs{"sorted", "return_inverse", "return_counts"} do s.check_bool("unique", k, o[k]) end
  local r = s.unique("unique", x, false, o.return_inverse, o.return_counts, o.dim, false)
  if o.return_inverse and o.dim == nil then r[2] = r[2]:reshape(x.shape) end
  return table.unpack(r)
end

function torch.bincount(...)
  local s = S()
  local o = s.args("bincount", {"input", "weights", "minlength"}, 1, {minlength = 0}, ...)
  local x = tensor_arg("bincount", "input", o.input)
  if x.dtype == "bool" then fail("bincount", "input must be an integer tensor, got bool") end
  local w = o.weights ~= nil and tensor_arg("bincount", "weights", o.weights) or nil
  local dt = w and (torch.is_floating_point(w) and w.dtype or "float64") or nil
  return s.bincount("bincount", x, w, o.minlength, dt)
end

-- torch.histc: counts in `bins` equal bins over [min, max] (the data's range when both are
-- 0), in the input's dtype; values outside are ignored.
function torch.histc(...)
  local s = S()
  local o = s.args("histc", {"input", "bins", "min", "max"}, 1, {bins = 100, min = 0, max = 0}, ...)
  local x = tensor_arg("histc", "input", o.input)
  if not torch.is_floating_point(x) then fail("histc", "input must be a floating-point tensor, got %s", x.dtype) end
  local bins = s.check_int("histc", "bins", o.bins, 1)
  local lo, hi = o.min, o.max
  if type(lo) ~= "number" or type(hi) ~= "number" then fail("histc", "min and max must be numbers") end
  if lo == hi and x:numel() > 0 then lo, hi = x:min():to("float64"):item(), x:max():to("float64"):item() end
  if lo == hi then lo, hi = lo - 1, hi + 1 end
  if lo > hi then fail("histc", "max must be larger than min, got min %s and max %s", S().num_str(lo), S().num_str(hi)) end
  if lo ~= lo or hi ~= hi or math.abs(lo) == math.huge or math.abs(hi) == math.huge then
    fail("histc", "range of [%s, %s] is not finite", S().num_str(lo), S().num_str(hi))
  end
  local hist = require("numpy").histogram(x:to("float64"), {bins = bins, range = {lo, hi}})
  return hist:to(x.dtype)
end

function torch.searchsorted(...)
  local s = S()
  local o = s.args("searchsorted", {"sorted_sequence", "values", "out_int32", "right", "side", "sorter"}, 2,
    {out_int32 = false, right = false}, ...)
  local a = tensor_arg("searchsorted", "sorted_sequence", o.sorted_sequence)
  local v = o.values
  if type(v) == "number" then v = torch.tensor(v, {dtype = a.dtype, device = a.device}) end
  v = tensor_arg("searchsorted", "values", v)
  s.check_bool("searchsorted", "out_int32", o.out_int32)
  s.check_bool("searchsorted", "right", o.right)
  local side = o.side
  if side ~= nil and (side == "left") == o.right and o.right then
    fail("searchsorted", "side 'left' and right=true disagree")
  end
  side = side or (o.right and "right" or "left")
  local r = s.searchsorted("searchsorted", a, v, side, o.sorter)
  if o.out_int32 then return r:to("int32") end
  return r
end

function torch.isin(...)
  local s = S()
  local o = s.args("isin", {"elements", "test_elements", "assume_unique", "invert"}, 2, {assume_unique = false, invert = false}, ...)
  s.check_bool("isin", "assume_unique", o.assume_unique)
  s.check_bool("isin", "invert", o.invert)
  local e, t = o.elements, o.test_elements
  if not torch.is_tensor(e) and not torch.is_tensor(t) then fail("isin", "elements or test_elements must be a tensor") end
  if type(e) == "number" then e = torch.tensor(e, {dtype = t.dtype}) end
  if type(t) == "number" then t = torch.tensor(t, {dtype = e.dtype}) end
  return s.isin(tensor_arg("isin", "elements", e), tensor_arg("isin", "test_elements", t), o.invert)
end

function torch.diag(...)
  local s = S()
  local o = s.args("diag", {"input", "diagonal"}, 1, {diagonal = 0}, ...)
  return s.diag("diag", tensor_arg("diag", "input", o.input), o.diagonal)
end

function torch.diagonal(...)
  local s = S()
  local o = s.args("diagonal", {"input", "offset", "dim1", "dim2"}, 1, {offset = 0, dim1 = 1, dim2 = 2}, ...)
  return s.diagonal("diagonal", tensor_arg("diagonal", "input", o.input), o.offset, o.dim1, o.dim2)
end

function torch.trace(...)
  local s = S()
  local o = s.args("trace", {"input"}, 1, {}, ...)
  local x = tensor_arg("trace", "input", o.input)
  if x:dim() ~= 2 then fail("trace", "expected a matrix, got shape %s", torch.nn._util.shape_str(x.shape)) end
  return s.diagonal("trace", x, 0, 1, 2):sum()
end

function torch.triu(...)
  local s = S()
  local o = s.args("triu", {"input", "diagonal"}, 1, {diagonal = 0}, ...)
  return s.triangle("triu", tensor_arg("triu", "input", o.input), o.diagonal, true)
end

function torch.tril(...)
  local s = S()
  local o = s.args("tril", {"input", "diagonal"}, 1, {diagonal = 0}, ...)
  return s.triangle("tril", tensor_arg("tril", "input", o.input), o.diagonal, false)
end

-- torch.meshgrid(x1, x2, ... or {x1, x2, ...}[, {indexing=}]): a table of expanded views;
-- indexing "ij" (PyTorch's default) or "xy".
function torch.meshgrid(...)
  local n = select("#", ...)
  local kw = n > 0 and select(n, ...) or nil
  if type(kw) == "table" and getmetatable(kw) == nil and kw[1] == nil and (n > 1 or next(kw) ~= nil) then
    n = n - 1
  else
    kw = {}
  end
  torch._check_keywords("meshgrid", kw, {"indexing"})
  local xs = {}
  local first = (select(1, ...))
  if n == 1 and is_list(first) and not torch.is_tensor(first) then
    for i, x in ipairs(first) do xs[i] = tensor_arg("meshgrid", "tensors", x) end
  else
    for i = 1, n do xs[i] = tensor_arg("meshgrid", "tensors", (select(i, ...))) end
  end
  for _, x in ipairs(xs) do
    if x:dim() > 1 then fail("meshgrid", "expected 0-D or 1-D tensors, got shape %s", torch.nn._util.shape_str(x.shape)) end
  end
  return S().meshgrid("meshgrid", xs, kw.indexing or "ij", false, false)
end

-- torch.repeat_interleave(input, repeats[, dim][, {output_size=}]), or (repeats): the
-- 1-based positions 1..n, each repeated repeats[i] times.
function torch.repeat_interleave(...)
  local s = S()
  local o = s.args("repeat_interleave", {"input", "repeats", "dim", "output_size"}, 1, {}, ...)
  local x = tensor_arg("repeat_interleave", "input", o.input)
  local r
  if o.repeats == nil then
    if o.dim ~= nil then fail("repeat_interleave", "dim needs repeats") end
    if x:dim() ~= 1 or not s.is_int(x) then fail("repeat_interleave", "repeats must be a 1-D integer tensor") end
    r = s.repeat_index("repeat_interleave", x, x:numel(), x.device)
  else
    local rep = o.repeats
    if not torch.is_tensor(rep) and type(rep) ~= "number" then fail("repeat_interleave", "repeats must be a number or a tensor, got %s", torch.nn._util.describe(rep)) end
    r = s.repeat_("repeat_interleave", x, rep, o.dim)
  end
  if o.output_size ~= nil then
    local want = s.check_int("repeat_interleave", "output_size", o.output_size, 0)
    local got = o.dim == nil and r:numel() or r.shape[s.axis_of("repeat_interleave", o.dim, r:dim())]
    if want ~= got then fail("repeat_interleave", "output_size %d does not match the repeated size %d", want, got) end
  end
  return r
end

function torch.roll(...)
  local s = S()
  local o = s.args("roll", {"input", "shifts", "dims"}, 2, {}, ...)
  return s.roll("roll", tensor_arg("roll", "input", o.input), o.shifts, o.dims)
end

function torch.diff(...)
  local s = S()
  local o = s.args("diff", {"input", "n", "dim", "prepend", "append"}, 1, {n = 1, dim = -1}, ...)
  local x = tensor_arg("diff", "input", o.input)
  for _, k in ipairs{"prepend", "append"} do
    if o[k] ~= nil then tensor_arg("diff", k, o[k]) end
  end
  return s.diff("diff", x, o.n, o.dim, o.prepend, o.append)
end

for rank = 1, 3 do
  local name = "atleast_" .. rank .. "d"
  torch[name] = function(...)
    local n = select("#", ...)
    if n == 0 then fail(name, "expected at least one tensor") end
    local first = (select(1, ...))
    local xs = {...}
    if n == 1 and is_list(first) and not torch.is_tensor(first) then xs = first end
    local out = {}
    for i, x in ipairs(xs) do out[i] = S().atleast(tensor_arg(name, "tensors", x), rank) end
    if n == 1 and torch.is_tensor(first) then return out[1] end
    return out
  end
end

local function tensor_list(op, t)
  if not is_list(t) or torch.is_tensor(t) or #t == 0 then fail(op, "expected a non-empty table of tensors, got %s", torch.nn._util.describe(t)) end
  local out = {}
  for i, x in ipairs(t) do out[i] = tensor_arg(op, "tensors", x) end
  return out
end

function torch.column_stack(...)
  local o = S().args("column_stack", {"tensors"}, 1, {}, ...)
  return S().column_stack("column_stack", tensor_list("column_stack", o.tensors))
end

function torch.dstack(...)
  local o = S().args("dstack", {"tensors"}, 1, {}, ...)
  return S().dstack("dstack", tensor_list("dstack", o.tensors))
end

function torch.rot90(...)
  local s = S()
  local o = s.args("rot90", {"input", "k", "dims"}, 1, {k = 1, dims = {1, 2}}, ...)
  return s.rot90("rot90", tensor_arg("rot90", "input", o.input), o.k, o.dims)
end

-- torch.vander(x[, N][, increasing]): in x's dtype (int64 for bool and smaller integers).
function torch.vander(...)
  local s = S()
  local o = s.args("vander", {"x", "N", "increasing"}, 1, {increasing = false}, ...)
  local x = tensor_arg("vander", "x", o.x)
  local dt = (torch.is_floating_point(x) or torch.is_complex(x)) and x.dtype or "int64"
  return s.vander("vander", x, o.N, o.increasing, dt)
end

-- nn.functional.pad(input, pad[, mode][, value]): pad holds {before, after} pairs from the
-- last dim backwards, as PyTorch's; modes constant (value, 0 by default), reflect, replicate
-- and circular (np.pad's constant, reflect, edge, wrap), within PyTorch's limits: reflect
-- needs pads below the dim's size, circular at most its size. Negative pads (cropping) are
-- not supported.
local PAD_MODES = {constant = "constant", reflect = "reflect", replicate = "edge", circular = "wrap"}
function torch.nn.functional.pad(...)
  local s = S()
  local op = "pad"
  local o = s.args(op, {"input", "pad", "mode", "value"}, 2, {mode = "constant"}, ...)
  local x = tensor_arg(op, "input", o.input)
  local mode = PAD_MODES[o.mode]
  if not mode then fail(op, "mode must be 'constant', 'reflect', 'replicate' or 'circular', got %s", torch.nn._util.describe(o.mode)) end
  if o.value ~= nil and mode ~= "constant" then fail(op, "value is only used by mode 'constant' (mode is '%s')", o.mode) end
  if o.value ~= nil and type(o.value) ~= "number" and type(o.value) ~= "boolean" then
    fail(op, "value must be a number, got %s", torch.nn._util.describe(o.value))
  end
  if not is_list(o.pad) then fail(op, "pad must be a table of integers, got %s", torch.nn._util.describe(o.pad)) end
  if #o.pad % 2 ~= 0 then fail(op, "pad must hold an even number of integers (pairs), got %d", #o.pad) end
  local np_ = #o.pad // 2
  if np_ > x:dim() then fail(op, "pad gives %d dims but the input has %d", np_, x:dim()) end
  local widths = {}
  for d = 1, x:dim() do widths[d] = {0, 0} end
  for i = 1, np_ do
    local d = x:dim() + 1 - i
    local b = s.check_int(op, "pad", o.pad[2 * i - 1], 0)
    local a = s.check_int(op, "pad", o.pad[2 * i], 0)
    local n = x.shape[d]
    if mode == "reflect" and (b >= n or a >= n) and (a > 0 or b > 0) then
      fail(op, "reflect padding {%d, %d} of dim %d must be below its size %d", b, a, d, n)
    end
    if mode == "wrap" and (b > n or a > n) then
      fail(op, "circular padding {%d, %d} of dim %d must be at most its size %d", b, a, d, n)
    end
    widths[d] = {b, a}
  end
  return s.pad(op, x, widths, mode, o.value or 0)
end

local docs = {
  unique = "unique(input[, sorted][, return_inverse][, return_counts][, dim][, {sorted=, return_inverse=, return_counts=, dim=}]) -> values[, inverse][, counts]: the sorted distinct values (rows along dim); inverse holds 1-based positions; NaNs stay distinct.",
  bincount = "bincount(input[, weights][, minlength]) -> Tensor: counts (or summed weights) of each value 0..max of a 1-D non-negative integer tensor.",
  histc = "histc(input[, bins][, min][, max]) -> Tensor: counts in bins equal bins over [min, max] (the data's range when both are 0).",
  searchsorted = "searchsorted(sorted_sequence, values[, {out_int32=, right=, side=, sorter=}]) -> int64 Tensor: 1-based insertion positions into a 1-D sorted sequence.",
  isin = "isin(elements, test_elements[, {assume_unique=, invert=}]) -> bool Tensor: whether each element is among test_elements.",
  diag = "diag(input[, diagonal]) -> Tensor: a matrix with the 1-D input on a diagonal, or a 2-D input's diagonal.",
  diagonal = "diagonal(input[, offset][, dim1][, dim2]) -> Tensor: the diagonal of the (dim1, dim2) planes as the last dim (a copy).",
  trace = "trace(input) -> Tensor: the sum of a matrix's diagonal.",
  triu = "triu(input[, diagonal]) -> Tensor: the upper triangle of the last two dims, zeros below.",
  tril = "tril(input[, diagonal]) -> Tensor: the lower triangle of the last two dims, zeros above.",
  meshgrid = "meshgrid(tensors...[, {indexing=}]) -> table: the grids of 1-D tensors as expanded views; indexing 'ij' (default) or 'xy'.",
  repeat_interleave = "repeat_interleave(input, repeats[, dim][, {output_size=}]) -> Tensor: each element (slice along dim) repeated; repeat_interleave(repeats) gives 1-based positions.",
  roll = "roll(input, shifts[, dims]) -> Tensor: elements shifted cyclically along dims (the flattened input without dims).",
  diff = "diff(input[, n][, dim][, prepend][, append]) -> Tensor: the n-th forward difference along dim (the last by default).",
  atleast_1d = "atleast_1d(tensors...) -> Tensor or table: each input with at least 1 dim.",
  atleast_2d = "atleast_2d(tensors...) -> Tensor or table: each input with at least 2 dims.",
  atleast_3d = "atleast_3d(tensors...) -> Tensor or table: each input with at least 3 dims.",
  column_stack = "column_stack(tensors) -> Tensor: 1-D tensors as columns, joined along dim 2.",
  dstack = "dstack(tensors) -> Tensor: joined along dim 3 after atleast_3d.",
  rot90 = "rot90(input[, k][, dims]) -> Tensor: rotated k quarter turns in the plane of dims (default {1, 2}).",
  vander = "vander(x[, N][, increasing]) -> Tensor: the Vandermonde matrix of the 1-D x.",
}
for name, doc in pairs(docs) do torch._doc[torch[name]] = doc end
torch._doc[torch.nn.functional.pad] = "pad(input, pad[, mode][, value]) -> Tensor: padded by {before, after} pairs from the last dim " ..
  "backwards; modes constant (value), reflect, replicate, circular."
