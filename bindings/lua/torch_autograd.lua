-- The Lua-written part of torch.autograd. Receives the torch table.
--  * the scoped grad-mode switches: torch.no_grad(fn, ...) runs fn with recording off and
--    returns its results; `local _ <close> = torch.no_grad()` turns recording off until the
--    scope ends; torch.enable_grad and torch.inference_mode likewise;
--  * torch.autograd.Function, custom differentiable functions with a Lua backward (the C++
--    half, which records the call and runs the backward, is bindings/bind_function.cpp);
--  * torch.autograd.gradcheck, and torch.autograd.functional.jacobian and hessian.
local torch = ...
local autograd = torch.autograd

-- The to-be-closed values that restore grad mode on and off: a scope returns the one for the
-- mode it replaced, so entering one makes no table (Optimizer:step enters one per step).
local restore = {}
for _, mode in ipairs({true, false}) do
  restore[mode] = setmetatable({}, {__close = function() torch.set_grad_enabled(mode) end})
end

-- Restores the grad mode `previous`, then returns pcall's results or raises its error.
local function restore_and_return(previous, ok, ...)
  torch.set_grad_enabled(previous)
  if not ok then error((...), 0) end
  return ...
end

-- Runs fn(...) with grad mode `enabled` and restores the previous mode, also on an error
-- (the results pass through as arguments: no table per call).
local function with_grad_mode(enabled, fn, ...)
  return restore_and_return(torch._exchange_grad_enabled(enabled), pcall(fn, ...))
end

local function grad_mode(name, enabled)
  return function(fn, ...)
    if fn == nil then return restore[torch._exchange_grad_enabled(enabled)] end
    if type(fn) ~= "function" then
      error(name .. ": expected a function or no argument, got a " .. type(fn), 2)
    end
    return with_grad_mode(enabled, fn, ...)
  end
end

torch.no_grad = grad_mode("no_grad", false)
torch.enable_grad = grad_mode("enable_grad", true)
autograd.no_grad = torch.no_grad
autograd.enable_grad = torch.enable_grad

-- torch.inference_mode([mode=true][, fn, ...]): no_grad for inference. tide has no separate
-- inference tensors, so the mode only turns recording off; inference_mode(false) changes
-- nothing (as in PyTorch, it does not turn recording on).
function torch.inference_mode(mode, fn, ...)
  if type(mode) ~= "boolean" then return torch.inference_mode(true, mode, fn, ...) end
  if fn ~= nil and type(fn) ~= "function" then
    error("inference_mode: expected a function or no argument, got a " .. type(fn), 2)
  end
  local enabled = not mode and torch.is_grad_enabled()
  if fn == nil then return restore[torch._exchange_grad_enabled(enabled)] end
  return with_grad_mode(enabled, fn, ...)
end
autograd.inference_mode = torch.inference_mode

---------------------------------------------------------------------------------------------
-- torch.autograd.Function:
--
--   local Exp = torch.autograd.Function:extend("Exp")
--   function Exp.forward(ctx, x) local y = x:exp(); ctx:save_for_backward(y); return y end
--   function Exp.backward(ctx, grad) local y = table.unpack(ctx.saved_tensors); return grad * y end
--   local y = Exp.apply(x)
--
-- forward runs with recording off and may take any arguments and return several values;
-- backward gets one gradient per value forward returned (zeros for a tensor output that got
-- none or was marked non-differentiable, nil for other values) and returns one gradient or nil
-- per argument of forward. Under create_graph backward runs with recording on, so a backward
-- written with differentiable ops gives higher-order gradients.

local Function = {_name = "Function"}
autograd.Function = Function

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

-- The private state of a ctx (not fields of it, so that a user's ctx.x = ... never clashes):
-- to_save (ctx:save_for_backward's arguments, with n), non_diff (tensors marked), state
-- (the recorded call's C++ state, once recorded), in_forward.
local private = setmetatable({}, {__mode = "k"})

local Ctx = {}

function Ctx.__index(ctx, k)
  if k == "saved_tensors" then
    local p = private[ctx]
    local saved = p.to_save or {n = 0}
    if not p.state then return table.move(saved, 1, saved.n, 1, {}) end
    -- The recorded tensors, put back at their places among the nils that were saved.
    local unpacked = autograd._saved_tensors(p.state, p.name .. "Backward")
    local out, j = {}, 0
    for i = 1, saved.n do
      if saved[i] ~= nil then
        j = j + 1
        out[i] = unpacked[j]
      end
    end
    return out
  end
  return Ctx[k]
end

function Ctx.__newindex(ctx, k, v)
  if k == "saved_tensors" or k == "needs_input_grad" then
    fail(private[ctx].name, "ctx.%s cannot be assigned (use ctx:save_for_backward(...))", k)
  end
  rawset(ctx, k, v)
end

-- ctx:save_for_backward(...): tensors (or nils) that backward reads as ctx.saved_tensors, each
-- checked against in-place changes made in between. Only inside forward.
function Ctx.save_for_backward(ctx, ...)
  local p = private[ctx]
  if not p.in_forward then fail(p.name, "save_for_backward can only be called inside forward") end
  local saved = table.pack(...)
  for i = 1, saved.n do
    local v = saved[i]
    if v ~= nil and not torch.is_tensor(v) then
      fail(p.name, "save_for_backward takes tensors or nil, got a %s as argument %d (keep other values as ctx fields)",
           type(v), i)
    end
  end
  p.to_save = saved
end

-- ctx:mark_non_differentiable(...): outputs that get no gradient (their gradients in
-- backward are zeros), such as indices or masks. Only inside forward.
function Ctx.mark_non_differentiable(ctx, ...)
  local p = private[ctx]
  if not p.in_forward then fail(p.name, "mark_non_differentiable can only be called inside forward") end
  for i = 1, select("#", ...) do
    local t = select(i, ...)
    if not torch.is_tensor(t) then
      fail(p.name, "mark_non_differentiable takes output tensors, got a %s as argument %d", type(t), i)
    end
    p.non_diff[t] = true
  end
end

-- The function given to the engine as the call's backward: it takes one gradient per tensor
-- output, calls cls.backward(ctx, ...) with one value per output of forward, checks that it
-- returns one gradient (or nil) per argument of forward, and returns those of the tensor
-- arguments. It holds no tensor of the call itself (only ctx), so that keeping the graph
-- keeps nothing else alive.
local function make_backward(cls, ctx, nargs, arg_is_tensor, tensor_args, nout, tensor_outs)
  local name = cls._name .. "Backward"
  return function(...)
    local grads = table.pack(...)
    local per_output = {}
    for k, pos in ipairs(tensor_outs) do per_output[pos] = grads[k] end
    local r = table.pack(cls.backward(ctx, table.unpack(per_output, 1, nout)))
    if r.n ~= nargs then
      fail(name, "backward returned %d value%s, but forward took %d argument%s (return one gradient, or nil, per argument)",
           r.n, r.n == 1 and "" or "s", nargs, nargs == 1 and "" or "s")
    end
    for i = 1, nargs do
      local g = r[i]
      if g ~= nil and not torch.is_tensor(g) then
        fail(name, "backward returned a %s for argument %d; expected a tensor or nil", type(g), i)
      end
      if g ~= nil and not arg_is_tensor[i] then
        fail(name, "backward returned a gradient for argument %d, which is not a tensor (return nil there)", i)
      end
    end
    local out = {}
    for k, pos in ipairs(tensor_args) do out[k] = r[pos] end
    return table.unpack(out, 1, #tensor_args)
  end
end

-- F.apply(...): runs forward without recording and, when an argument requires grad and grad
-- mode is on, records the call so that backward runs F.backward.
local function apply(cls, ...)
  local name = cls._name
  if type(cls.forward) ~= "function" then fail(name, "define %s.forward(ctx, ...) before calling apply", name) end
  local nargs = select("#", ...)
  local grad_on = torch.is_grad_enabled()
  local needs, arg_is_tensor, inputs, tensor_args, any = {}, {}, {}, {}, false
  for i = 1, nargs do
    local v = select(i, ...)
    arg_is_tensor[i] = torch.is_tensor(v)
    needs[i] = arg_is_tensor[i] and grad_on and v.requires_grad
    any = any or needs[i]
    if arg_is_tensor[i] then
      inputs[#inputs + 1] = v
      tensor_args[#tensor_args + 1] = i
    end
  end
  local ctx = setmetatable({}, Ctx)
  rawset(ctx, "needs_input_grad", needs)
  local p = {name = name, non_diff = {}, in_forward = true}
  private[ctx] = p
  local ok, out = pcall(function(...) return table.pack(with_grad_mode(false, cls.forward, ctx, ...)) end, ...)
  p.in_forward = false
  if not ok then error(out, 0) end
  if not any then return table.unpack(out, 1, out.n) end
  if type(cls.backward) ~= "function" then
    fail(name, "define %s.backward(ctx, ...): an argument of apply requires grad", name)
  end
  local outputs, tensor_outs, differentiable = {}, {}, {}
  for i = 1, out.n do
    if torch.is_tensor(out[i]) then
      outputs[#outputs + 1] = out[i]
      tensor_outs[#tensor_outs + 1] = i
      differentiable[#differentiable + 1] = not p.non_diff[out[i]]
    end
  end
  local saved = {}
  for i = 1, (p.to_save and p.to_save.n or 0) do
    if p.to_save[i] ~= nil then saved[#saved + 1] = p.to_save[i] end
  end
  local recorded, state = autograd._record_function(name, inputs, outputs, differentiable, saved,
                                                    make_backward(cls, ctx, nargs, arg_is_tensor, tensor_args, out.n,
                                                                  tensor_outs))
  -- The saved tensors now live in the recorded call (kept without cycles); only where the
  -- nils were stays here.
  if state and p.to_save then
    local holes = {n = p.to_save.n}
    for i = 1, p.to_save.n do holes[i] = p.to_save[i] ~= nil or nil end
    p.to_save = holes
  end
  p.state, p.non_diff = state, nil
  for k, pos in ipairs(tensor_outs) do out[pos] = recorded[k] end
  return table.unpack(out, 1, out.n)
end

local function class_tostring(cls) return "class " .. cls._name end

-- Function:extend("Name") -> a new Function class; define Name.forward and Name.backward,
-- call Name.apply(...).
function Function:extend(name)
  if type(name) ~= "string" or name == "" then
    fail("Function:extend", "expected a class name string, got %s", type(name) == "string" and '""' or type(name))
  end
  if rawget(self, "_name") == nil then
    fail("Function:extend", "call it on a class (torch.autograd.Function:extend), not on an instance")
  end
  local cls = setmetatable({_name = name}, {__index = self, __tostring = class_tostring})
  cls.apply = function(...) return apply(cls, ...) end
  return cls
end
setmetatable(Function, {__tostring = class_tostring})

---------------------------------------------------------------------------------------------
-- Shared helpers of gradcheck and the functional API.

-- A plain table of options checked against the valid names.
-- The function argument of gradcheck, jacobian and hessian: a function or a callable table
-- (an nn.Module, say).
local function check_callable(op, fn)
  if type(fn) ~= "function" and not (type(fn) == "table" and getmetatable(fn) and getmetatable(fn).__call) then
    fail(op, "expected a function, got a %s", torch.is_tensor(fn) and "tensor" or type(fn))
  end
end

local function options(op, opts, valid)
  if opts == nil then return {} end
  if type(opts) ~= "table" or getmetatable(opts) ~= nil then
    fail(op, "options must be a table {%s}, got a %s", table.concat(valid, "=, ") .. "=",
         torch.is_tensor(opts) and "tensor" or type(opts))
  end
  return torch._check_keywords(op, opts, valid)
end

-- The inputs as a list and whether they were given as one (a tensor, or a table of them).
local function as_list(op, inputs)
  if torch.is_tensor(inputs) then return {inputs}, false end
  if type(inputs) ~= "table" or getmetatable(inputs) ~= nil then
    fail(op, "inputs must be a tensor or a table of tensors, got a %s", type(inputs))
  end
  return inputs, true
end

-- The results of fn as a list of tensors and whether there were several: several return
-- values, or one table of tensors.
local function outputs_of(op, ...)
  local r = table.pack(...)
  local several = r.n ~= 1
  if r.n == 1 and type(r[1]) == "table" and getmetatable(r[1]) == nil then
    r = table.pack(table.unpack(r[1]))
    several = true
  end
  for i = 1, r.n do
    if not torch.is_tensor(r[i]) then fail(op, "the function must return tensors, got a %s as output %d", type(r[i]), i) end
  end
  return r, several
end

-- The gradients of y (flattened, one element at a time) with respect to `inputs`: for each
-- input a tensor of shape {numel(y), numel(input)} (rows of zeros where y does not depend
-- on it). `used[j]` becomes true when some element of y depends on input j.
local function jacobian_rows(y, inputs, create_graph, used)
  local flat = y:reshape(-1)
  local rows = {}
  for j = 1, #inputs do rows[j] = {} end
  for m = 1, flat:numel() do
    local grads = {}
    if y.requires_grad then
      grads = autograd.grad({flat[m]}, inputs, {retain_graph = true, create_graph = create_graph, allow_unused = true})
    end
    for j, x in ipairs(inputs) do
      local g = grads[j]
      if g ~= nil then used[j] = true end
      rows[j][m] = g ~= nil and g:reshape(-1) or torch.zeros(x:numel(), {dtype = x.dtype, device = x.device})
    end
  end
  local out = {}
  for j, x in ipairs(inputs) do
    out[j] = flat:numel() > 0 and torch.stack(rows[j]) or torch.zeros(0, x:numel(), {dtype = x.dtype})
  end
  return out
end

---------------------------------------------------------------------------------------------
-- torch.autograd.gradcheck(fn, inputs[, {eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=true}])
-- -> true: the gradients autograd computes for fn(inputs...) against central finite
-- differences, in float64. inputs is a tensor or a table of arguments; those that require
-- grad must be float64. A mismatch is an error showing both Jacobians (false instead with
-- raise_exception=false).
function autograd.gradcheck(fn, inputs, opts)
  local op = "autograd.gradcheck"
  local o = options(op, opts, {"eps", "atol", "rtol", "raise_exception"})
  local eps, atol, rtol = o.eps or 1e-6, o.atol or 1e-5, o.rtol or 1e-3
  local raise = o.raise_exception ~= false
  check_callable(op, fn)
  local args = as_list(op, inputs)
  local diff, diff_pos = {}, {}
  for i, v in ipairs(args) do
    if torch.is_tensor(v) and v.requires_grad then
      if v.dtype ~= "float64" then
        fail(op, "input %d requires grad but is %s; gradcheck needs float64 inputs (use x:double())", i, v.dtype)
      end
      diff[#diff + 1] = v
      diff_pos[#diff_pos + 1] = i
    end
  end
  if #diff == 0 then fail(op, "no input requires grad (make the inputs to check leaves with requires_grad=true)") end
  local function call() return outputs_of(op, fn(table.unpack(args, 1, #args))) end

  -- Analytical: one backward per output element.
  local ys = call()
  local analytical = {}
  for k = 1, ys.n do
    if ys[k]:is_floating_point() then analytical[k] = jacobian_rows(ys[k], diff, false, {}) end
  end
  -- Numerical: central differences, perturbing one element of one input at a time.
  local numerical = {}
  torch.no_grad(function()
    for j, x in ipairs(diff) do
      local data = x.data
      local n = x:numel()
      local cols = {}
      for e = 1, n do
        -- The multi-index of element e (row-major, 1-based) for strided in-place access.
        local idx, rest = {}, e - 1
        for d = x:dim(), 1, -1 do
          idx[d] = rest % x:size(d) + 1
          rest = rest // x:size(d)
        end
        local orig = x:dim() == 0 and data:item() or data[idx]:item()
        local function at(v)
          if x:dim() == 0 then data:fill_(v) else data[idx] = v end
          return call()
        end
        local plus, minus = at(orig + eps), at(orig - eps)
        if x:dim() == 0 then data:fill_(orig) else data[idx] = orig end
        for k = 1, ys.n do
          if analytical[k] then
            cols[k] = cols[k] or {}
            cols[k][e] = ((plus[k]:double() - minus[k]:double()) / (2 * eps)):reshape(-1)
          end
        end
      end
      for k = 1, ys.n do
        if analytical[k] then
          numerical[k] = numerical[k] or {}
          numerical[k][j] = n > 0 and torch.stack(cols[k], 2) or torch.zeros(ys[k]:numel(), 0, {dtype = "float64"})
        end
      end
    end
  end)
  for k = 1, ys.n do
    if analytical[k] then
      for j = 1, #diff do
        local a, num = analytical[k][j]:double(), numerical[k][j]
        local bad = (a - num):abs():gt(num:abs() * rtol + atol)
        if bad:any():item() then
          if not raise then return false end
          -- As PyTorch prints them: one row per input element, one column per output element.
          error(string.format("%s: Jacobian mismatch for output %d with respect to input %d,\nnumerical:%s\nanalytical:%s",
                              op, k, diff_pos[j], tostring(num:t()), tostring(a:t())), 0)
        end
      end
    end
  end
  return true
end

---------------------------------------------------------------------------------------------
-- torch.autograd.functional: Jacobians and Hessians of Lua functions of tensors.

local functional = {}
autograd.functional = functional

-- The inputs made into leaves that require grad (under create_graph an input that already
-- requires grad stays connected to its history through a view).
local function grad_inputs(list, create_graph)
  local out = {}
  for i, x in ipairs(list) do
    if not torch.is_tensor(x) then fail("autograd.functional", "input %d is a %s, expected a tensor", i, type(x)) end
    if not x:is_floating_point() then
      fail("autograd.functional", "input %d is %s; differentiation needs floating-point inputs", i, x.dtype)
    end
    out[i] = (create_graph and x.requires_grad) and x:view_as(x) or x:detach():requires_grad_(true)
  end
  return out
end

-- functional.jacobian(func, inputs[, {create_graph=false, strict=false}]): d func(inputs) /
-- d inputs, computed by one backward per output element. With one input tensor and one
-- output the result is a tensor of shape output.shape .. input.shape; with a table of inputs
-- a table with one entry per input; with several outputs (several return values or a table)
-- a table with one entry per output. strict=true makes an output that does not depend on an
-- input an error instead of zeros.
function functional.jacobian(func, inputs, opts)
  local op = "autograd.functional.jacobian"
  check_callable(op, func)
  local o = options(op, opts, {"create_graph", "strict"})
  local list, several_in = as_list(op, inputs)
  local xs = grad_inputs(list, o.create_graph)
  local ys, several_out = torch.enable_grad(function() return outputs_of(op, func(table.unpack(xs, 1, #xs))) end)
  local result = {}
  for k = 1, ys.n do
    local y = ys[k]
    local used = {}
    local rows = torch.enable_grad(jacobian_rows, y, xs, o.create_graph == true, used)
    local per_input = {}
    for j, x in ipairs(xs) do
      if o.strict and not used[j] then
        fail(op, "output %d of the function does not depend on input %d (not allowed with strict=true)", k, j)
      end
      local shape = table.move(x.shape, 1, x:dim(), y:dim() + 1, table.move(y.shape, 1, y:dim(), 1, {}))
      local jac = rows[j]:reshape(shape)
      per_input[j] = o.create_graph and jac or jac:detach()
    end
    result[k] = several_in and per_input or per_input[1]
  end
  if several_out then return result end
  return result[1]
end

-- functional.hessian(func, inputs[, {create_graph=false, strict=false}]): the second
-- derivatives of a function with a single-element output: shape input.shape .. input.shape
-- for one input tensor, a table of tables (hessian[i][j] = d2 f / d input_i d input_j) for a
-- table of inputs.
function functional.hessian(func, inputs, opts)
  local op = "autograd.functional.hessian"
  check_callable(op, func)
  local o = options(op, opts, {"create_graph", "strict"})
  local _, several_in = as_list(op, inputs)
  local function scalar_output(...)
    local ys, several = outputs_of(op, func(...))
    if several or ys[1]:numel() ~= 1 then
      fail(op, "the function must return a single tensor with one element, got %s",
           several and ys.n .. " outputs" or "shape {" .. table.concat(ys[1].shape, ",") .. "}")
    end
    return ys[1]:reshape({})
  end
  local function gradient(...)
    return functional.jacobian(scalar_output, several_in and {...} or (...), {create_graph = true, strict = o.strict})
  end
  return functional.jacobian(gradient, inputs, {create_graph = o.create_graph, strict = o.strict})
end
