-- torch.nn.utils: gradient clipping, parameters <-> one flat vector, and
-- nn.utils.rnn.pad_sequence, as in PyTorch 1.13. Receives the torch module table.
local torch = ...
local nn = torch.nn
local util = nn._util
local fail = util.fail
local is_tensor = torch.is_tensor

-- A value for messages: "a tensor", "a table", or the value itself (numbers, strings).
local function describe(v)
  if is_tensor(v) then return "a tensor" end
  if type(v) == "table" or type(v) == "function" or v == nil then return "a " .. type(v) end
  return util.describe(v)
end

local utils = {}
nn.utils = utils
utils.rnn = {}

-- The parameters argument: a tensor or a list of tensors.
local function tensor_list(op, params)
  if is_tensor(params) then return {params} end
  if type(params) ~= "table" then fail(op, "parameters must be a tensor or a list of tensors, got %s", describe(params)) end
  local list = {}
  for i, p in ipairs(params) do
    if not is_tensor(p) then fail(op, "parameters[%d] is %s, not a tensor", i, describe(p)) end
    list[i] = p
  end
  return list
end

local function number_arg(op, name, v)
  if type(v) ~= "number" then fail(op, "%s must be a number, got %s", name, describe(v)) end
  return v
end

-- Scales the gradients in place so that their joint norm_type-norm is at most max_norm
-- (PyTorch's order: the norm of the per-gradient norms; the factor is
-- min(max_norm / (norm + 1e-6), 1)). Returns the joint norm before clipping (a tensor).
function utils.clip_grad_norm_(...)
  local op = "clip_grad_norm_"
  local o = util.args(op, {"parameters", "max_norm", "norm_type", "error_if_nonfinite"}, 2,
                      {norm_type = 2.0, error_if_nonfinite = false}, ...)
  local params = tensor_list(op, o.parameters)
  local max_norm = number_arg(op, "max_norm", o.max_norm)
  local norm_type = number_arg(op, "norm_type", o.norm_type)
  if type(o.error_if_nonfinite) ~= "boolean" then
    fail(op, "error_if_nonfinite must be true or false, got %s", describe(o.error_if_nonfinite))
  end
  local grads = {}
  for _, p in ipairs(params) do
    local g = p.grad
    if g ~= nil then grads[#grads + 1] = g:detach() end
  end
  if #grads == 0 then return torch.tensor(0.0) end
  local _ <close> = torch.no_grad()
  local total
  if norm_type == math.huge then
    local norms = {}
    for i, g in ipairs(grads) do norms[i] = g:abs():max() end
    total = #norms == 1 and norms[1] or torch.stack(norms):max()
  else
    local norms = {}
    for i, g in ipairs(grads) do norms[i] = g:norm(norm_type) end
    total = torch.stack(norms):norm(norm_type)
  end
  if o.error_if_nonfinite and not torch.isfinite(total):item() then
    fail(op, "the total norm of order %s of the gradients is %s, so it cannot be clipped (set " ..
         "error_if_nonfinite = false to scale the gradients by it anyway)", tostring(norm_type), tostring(total:item()))
  end
  -- max_norm / (total + 1e-6) is (total + 1e-6).reciprocal() * max_norm in PyTorch.
  local coef = total:add(1e-6):reciprocal():mul(max_norm):clamp({max = 1.0})
  for _, g in ipairs(grads) do g:mul_(coef) end
  return total
end

-- Clamps every gradient into [-clip_value, clip_value] in place.
function utils.clip_grad_value_(...)
  local op = "clip_grad_value_"
  local o = util.args(op, {"parameters", "clip_value"}, 2, {}, ...)
  local params = tensor_list(op, o.parameters)
  local v = number_arg(op, "clip_value", o.clip_value)
  local _ <close> = torch.no_grad()
  for _, p in ipairs(params) do
    local g = p.grad
    if g ~= nil then g:detach():clamp_({min = -v, max = v}) end
  end
end

-- All parameters flattened and concatenated into one 1-D tensor (a copy; differentiable).
function utils.parameters_to_vector(parameters)
  local op = "parameters_to_vector"
  local params = tensor_list(op, parameters)
  if #params == 0 then fail(op, "expected at least one parameter") end
  local views = {}
  for i, p in ipairs(params) do
    if p.device ~= params[1].device then
      fail(op, "found parameters on different devices (%s and %s)", tostring(params[1].device), tostring(p.device))
    end
    views[i] = p:reshape(-1)
  end
  return torch.cat(views, 1)
end

-- Copies consecutive slices of the 1-D vec into the parameters (their shapes, in order).
-- PyTorch makes the parameters views of vec (param.data = ...); here they keep their own
-- storage and receive the values.
function utils.vector_to_parameters(vec, parameters)
  local op = "vector_to_parameters"
  if not is_tensor(vec) then fail(op, "expected a tensor for vec, got %s", describe(vec)) end
  local params = tensor_list(op, parameters)
  if vec:dim() ~= 1 then fail(op, "vec must be 1-D, got %d dimensions", vec:dim()) end
  local total = 0
  for _, p in ipairs(params) do total = total + p:numel() end
  if total ~= vec:numel() then
    fail(op, "vec has %d elements but the parameters %d", vec:numel(), total)
  end
  local _ <close> = torch.no_grad()
  local offset = 0
  for _, p in ipairs(params) do
    local n = p:numel()
    p:detach():copy_(vec:narrow(1, offset + 1, n):view_as(p))
    offset = offset + n
  end
end

-- Stacks sequences of shapes (L_i, *) into (T, B, *) (B, T, * with batch_first), T the
-- longest L_i, padding with padding_value. Differentiable (cat and stack).
function utils.rnn.pad_sequence(...)
  local op = "pad_sequence"
  local o = util.args(op, {"sequences", "batch_first", "padding_value"}, 1,
                      {batch_first = false, padding_value = 0.0}, ...)
  local seqs = o.sequences
  if is_tensor(seqs) then seqs = seqs:unbind(1) end
  if type(seqs) ~= "table" or #seqs == 0 then
    fail(op, "sequences must be a non-empty list of tensors, got %s", describe(o.sequences))
  end
  if type(o.batch_first) ~= "boolean" then fail(op, "batch_first must be true or false, got %s", describe(o.batch_first)) end
  local value = number_arg(op, "padding_value", o.padding_value)
  local first = seqs[1]
  local longest = 0
  for i, s in ipairs(seqs) do
    if not is_tensor(s) then fail(op, "sequences[%d] is %s, not a tensor", i, describe(s)) end
    if s:dim() < 1 then fail(op, "sequences[%d] is 0-dimensional; sequences must have a length dimension", i) end
    local a, b = s.shape, first.shape
    local same = #a == #b and s.dtype == first.dtype
    for d = 2, #a do same = same and a[d] == b[d] end
    if not same then
      fail(op, "sequences[%d] has shape {%s} and dtype %s, sequences[1] {%s} and %s: all must share the trailing " ..
           "dimensions and the dtype", i, table.concat(a, ", "), s.dtype, table.concat(b, ", "), first.dtype)
    end
    longest = math.max(longest, a[1])
  end
  local padded = {}
  for i, s in ipairs(seqs) do
    local len = s.shape[1]
    if len < longest then
      local shape = s.shape
      shape[1] = longest - len
      s = torch.cat({s, torch.full(shape, value, {dtype = s.dtype, device = s.device})}, 1)
    end
    padded[i] = s
  end
  return torch.stack(padded, o.batch_first and 1 or 2)
end
