-- Mixed precision, the Lua-written half (the state and the cast policy are C++:
-- bindings/bind_amp.cpp and bindings/autocast.hpp):
--  * the policy's wrapper for Lua-written ops: loaded right after torch.lua, this part makes
--    every Lua function later stored in torch, torch.linalg, torch.fft or nn.functional under
--    a name of the autocast policy go through torch._autocast_wrap (casts its arguments by
--    the op's rules, then runs it with autocast off), so F.mse_loss written in Lua follows the
--    same policy as the C++ bindings, and an op added later under a policy name is covered;
--  * torch.autocast(device_type[, {dtype=, enabled=, cache_enabled=}][, fn, ...]): a scope,
--    as a function call or a to-be-closed value;
--  * torch.amp.GradScaler (also torch.cuda.amp.GradScaler): dynamic loss scaling.
local torch = ...

---------------------------------------------------------------------------------------------
-- The wrapper hook.

local function is_binding(f) return torch._binding_doc(f) ~= nil end

-- A Lua function stored in t[k] (prefix .. k the op's name) is wrapped when the policy names it
-- (after torch._strict, which checks a fixed-arity function's argument count); the wrapper is
-- a Lua function, so that the docs (torch_doc.lua) and help() treat it as the Lua op it is.
-- One function stored under one name twice (F.cosine_similarity and torch.cosine_similarity)
-- gets one wrapper, and a wrapper stored again is not wrapped twice.
local wrappers = setmetatable({}, {__mode = "k"})  -- wrapper -> true
local wrapper_of = setmetatable({}, {__mode = "k"})  -- function -> {name -> wrapper}
local function wrap(name, f)
  local known = wrapper_of[f]
  if known and known[name] then return known[name] end
  local strict = torch._strict(name, f)
  local wrapped = torch._autocast_wrap(name, strict)
  if wrapped == strict then return f end
  local w = function(...) return wrapped(...) end
  wrappers[w] = true
  wrapper_of[f] = known or {}
  wrapper_of[f][name] = w
  return w
end

local function watch(t, prefix, sub)
  setmetatable(t, {__newindex = function(tbl, k, v)
    if type(tbl) ~= "table" then error("autocast's table hook: expected a table, got a " .. type(tbl), 0) end
    if type(k) == "string" and type(v) == "function" and not is_binding(v) and not wrappers[v] then
      v = wrap(prefix .. k, v)
    elseif sub and type(v) == "table" and sub[k] and getmetatable(v) == nil then
      sub[k](v)
    end
    rawset(tbl, k, v)
  end})
end

-- Lua-written tensor methods (torch._add_method, while the parts load) get the same wrapper
-- as the torch function of their name.
local add_method = torch._add_method
rawset(torch, "_add_method", function(name, fn)
  if type(name) == "string" and type(fn) == "function" and not is_binding(fn) then fn = wrap(name, fn) end
  return add_method(name, fn)
end)

local function watch_functional(F) watch(F, "") end
watch(torch, "", {nn = function(nn) watch(nn, "", {functional = watch_functional}) end})
for _, space in ipairs{"linalg", "fft"} do
  if type(rawget(torch, space)) == "table" and getmetatable(torch[space]) == nil then watch(torch[space], space .. ".") end
end

---------------------------------------------------------------------------------------------
-- torch.autocast

-- A value for error messages: "a table", "a function", else as nn's util.describe shows it
-- (numbers by value, strings quoted, tensors by shape; looked up per call, as nn loads after
-- this file).
local function describe(v)
  if type(v) == "table" or type(v) == "function" then return "a " .. type(v) end
  return torch.nn._util.describe(v)
end

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

-- PyTorch's UserWarning, on stderr (where the sandbox leaves io).
local function warn(msg)
  if io and io.stderr then io.stderr:write("warning: " .. msg .. "\n") end
end

local function check_device_type(op, device_type)
  if device_type ~= "cpu" and device_type ~= "cuda" then
    fail(op, 'device_type must be "cpu" or "cuda", got %s', describe(device_type))
  end
  return device_type
end

local function check_boolean(op, name, v)
  if type(v) ~= "boolean" then fail(op, "%s must be true or false, got %s", name, describe(v)) end
  return v
end

-- Restores the state a scope was entered from (its outermost exit drops the cast cache).
local function exit_scope(scope)
  if scope.closed then return end
  scope.closed = true
  if torch.autocast_decrement_nesting() == 0 then torch.clear_autocast_cache() end
  torch.set_autocast_enabled(scope.device_type, scope.prev_enabled)
  torch.set_autocast_dtype(scope.device_type, scope.prev_dtype)
  torch.set_autocast_cache_enabled(scope.prev_cache)
end

local scope_mt = {__close = exit_scope, __name = "autocast"}
scope_mt.__index = {
  -- scope:close(): leaves the scope (what <close> does), for a scope not held in a <close> variable.
  close = function(self, ...)
    if select("#", ...) > 0 then fail("autocast:close", "takes no arguments") end
    exit_scope(self)
  end,
}

-- torch.autocast(device_type[, {dtype=, enabled=, cache_enabled=}][, fn, ...]): with fn, runs
-- fn(...) under autocast and returns its results (restoring the state also on an error);
-- without, enters the scope and returns a to-be-closed value that leaves it
-- (`local ac <close> = torch.autocast("cpu")`). dtype defaults to the device's autocast dtype
-- (bfloat16 on "cpu", float16 on "cuda"), cache_enabled to torch.is_autocast_cache_enabled().
-- "cuda" without CUDA disables itself with a warning, as PyTorch.
function torch.autocast(device_type, ...)
  local op = "autocast"
  if type(device_type) ~= "string" then fail(op, 'expected a device_type ("cpu" or "cuda"), got %s', describe(device_type)) end
  check_device_type(op, device_type)
  local kw, fn, nfirst = nil, nil, 1
  local first = ...
  if type(first) == "table" and getmetatable(first) == nil then
    kw, nfirst = first, 2
    torch._check_keywords(op, kw, {"dtype", "enabled", "cache_enabled"})
  end
  local n = select("#", ...)
  if n >= nfirst then
    fn = select(nfirst, ...)
    if type(fn) ~= "function" then fail(op, "expected a keyword table or a function, got %s", describe(fn)) end
  end
  kw = kw or {}
  local dtype = kw.dtype
  if dtype == nil then dtype = torch.get_autocast_dtype(device_type) end
  if dtype ~= "bfloat16" and dtype ~= "float16" then fail(op, "dtype must be bfloat16 or float16, got %s", describe(dtype)) end
  local enabled = kw.enabled
  if enabled == nil then enabled = true end
  check_boolean(op, "enabled", enabled)
  local cache = kw.cache_enabled
  if cache == nil then cache = torch.is_autocast_cache_enabled() end
  check_boolean(op, "cache_enabled", cache)
  if enabled and device_type == "cuda" and not torch.cuda.is_available() then
    warn('autocast: device_type "cuda" given, but CUDA is not available; disabling')
    enabled = false
  end

  local scope = setmetatable({
    device_type = device_type,
    prev_enabled = torch.is_autocast_enabled(device_type),
    prev_dtype = torch.get_autocast_dtype(device_type),
    prev_cache = torch.is_autocast_cache_enabled(),
  }, scope_mt)
  torch.set_autocast_enabled(device_type, enabled)
  torch.set_autocast_dtype(device_type, dtype)
  torch.autocast_increment_nesting()
  torch.set_autocast_cache_enabled(cache)
  if not fn then return scope end
  local results = table.pack(pcall(fn, select(nfirst + 1, ...)))
  exit_scope(scope)
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

---------------------------------------------------------------------------------------------
-- torch.amp.GradScaler: PyTorch's algorithm (torch/amp/grad_scaler.py). scale() multiplies
-- losses by the scale (a 1-element float32 tensor); unscale_() divides an optimizer's
-- gradients by it and records whether any is inf or NaN; step() unscales if needed and runs
-- the optimizer's step only when all were finite; update() then multiplies the scale by
-- backoff_factor after a step with inf/NaN, or by growth_factor after growth_interval clean
-- steps in a row (when the result is finite).

local READY, UNSCALED, STEPPED = 0, 1, 2

local GradScaler = {name = "GradScaler"}
GradScaler.__index = GradScaler
GradScaler.__name = "GradScaler"

local SCALER_KEYWORDS = {"device", "init_scale", "growth_factor", "backoff_factor", "growth_interval", "enabled"}

local function check_number(op, name, v)
  if type(v) ~= "number" or v ~= v then fail(op, "%s must be a number, got %s", name, describe(v)) end
  return v
end

local function check_growth_factor(op, v)
  if check_number(op, "growth_factor", v) <= 1 then fail(op, "growth_factor must be > 1.0, got %s", v) end
  return v + 0.0
end

local function check_backoff_factor(op, v)
  local b = check_number(op, "backoff_factor", v)
  if not (b < 1) then fail(op, "backoff_factor must be < 1.0, got %s", v) end
  return b + 0.0
end

local function check_growth_interval(op, v)
  if math.type(v) ~= "integer" or v < 1 then fail(op, "growth_interval must be a positive integer, got %s", describe(v)) end
  return v
end

-- GradScaler([device][, {device=, init_scale=65536, growth_factor=2, backoff_factor=0.5,
-- growth_interval=2000, enabled=true}]). device: "cuda" (the default, as PyTorch) or "cpu".
-- Enabled for "cuda" where CUDA is not available, it disables itself with a warning, as PyTorch.
local function new_scaler(op, device, kw)
  kw = kw or {}
  torch._check_keywords(op, kw, SCALER_KEYWORDS)
  if kw.device ~= nil then
    if device ~= nil then fail(op, "device given both as an argument and as a keyword") end
    device = kw.device
  end
  if device == nil then device = "cuda" end
  if device ~= "cpu" and device ~= "cuda" then fail(op, 'device must be "cpu" or "cuda", got %s', describe(device)) end
  local enabled = kw.enabled
  if enabled == nil then enabled = true end
  check_boolean(op, "enabled", enabled)
  local init_scale = kw.init_scale == nil and 65536.0 or check_number(op, "init_scale", kw.init_scale)
  local self = setmetatable({
    _device = device,
    _enabled = enabled,
    _init_scale = init_scale + 0.0,
    _growth_factor = check_growth_factor(op, kw.growth_factor == nil and 2.0 or kw.growth_factor),
    _backoff_factor = check_backoff_factor(op, kw.backoff_factor == nil and 0.5 or kw.backoff_factor),
    _growth_interval = check_growth_interval(op, kw.growth_interval == nil and 2000 or kw.growth_interval),
    _init_growth_tracker = 0,
    _per_optimizer = setmetatable({}, {__mode = "k"}),
  }, GradScaler)
  if enabled and device == "cuda" and not torch.cuda.is_available() then
    warn('GradScaler is enabled for "cuda", but CUDA is not available; disabling')
    self._enabled = false
  end
  return self
end

function GradScaler.new(...)
  local n = select("#", ...)
  local device, kw = nil, nil
  local a, b = ...
  if n >= 1 and type(a) == "table" and getmetatable(a) == nil then
    kw = a
    if n > 1 then fail("GradScaler", "expected at most a device and a keyword table, got %d arguments", n) end
  else
    device, kw = a, b
    if kw ~= nil and (type(kw) ~= "table" or getmetatable(kw) ~= nil) then
      fail("GradScaler", "expected a keyword table after the device, got %s", describe(kw))
    end
    if n > 2 then fail("GradScaler", "expected at most a device and a keyword table, got %d arguments", n) end
  end
  return new_scaler("GradScaler", device, kw)
end

local function check_self(op, self)
  if getmetatable(self) ~= GradScaler then fail(op, "expected a GradScaler as self (call it with ':'), got %s", describe(self)) end
end

local function check_no_more(op, ...)
  if select("#", ...) > 0 then fail(op, "takes no further arguments") end
end

function GradScaler:is_enabled(...)
  check_self("GradScaler:is_enabled", self)
  check_no_more("GradScaler:is_enabled", ...)
  return self._enabled
end

-- The scale and growth tracker, made at the first scale() on the device of the outputs.
local function lazy_init(self, device)
  if self._scale == nil then
    self._scale = torch.full({1}, self._init_scale, {dtype = "float32", device = device})
    self._growth_tracker = torch.full({1}, self._init_growth_tracker, {dtype = "int32", device = device})
  end
end

local FIX = "This may indicate your script did not use scaler.scale(loss or outputs) earlier in the iteration."

local function check_initialized(self, funcname)
  if self._scale == nil then
    fail("GradScaler:" .. funcname, "Attempted %s but _scale is None.  %s", funcname, FIX)
  end
end

-- scale(outputs): outputs (a tensor, or a table of them, nested) times the scale.
function GradScaler:scale(outputs, ...)
  local op = "GradScaler:scale"
  check_self(op, self)
  check_no_more(op, ...)
  local function scaled(v)
    if torch.is_tensor(v) then
      if not self._enabled then return v end
      lazy_init(self, v.device)
      return v * self._scale:to(v.device)
    end
    if type(v) == "table" and getmetatable(v) == nil then
      local out = {}
      for k, x in pairs(v) do out[k] = scaled(x) end
      return out
    end
    fail(op, "outputs must be a tensor or a table of tensors, got %s", describe(v))
  end
  return scaled(outputs)
end

local function optimizer_state(self, optimizer)
  local st = self._per_optimizer[optimizer]
  if st == nil then
    st = {stage = READY, found_inf = nil}
    self._per_optimizer[optimizer] = st
  end
  return st
end

local function check_optimizer(op, optimizer)
  if type(optimizer) ~= "table" or type(optimizer.param_groups) ~= "table" then
    fail(op, "expected an optimizer (a table with param_groups), got %s", describe(optimizer))
  end
end

-- Multiplies every gradient of the optimizer by inv_scale; returns 1.0 when one held inf or
-- NaN, and whether there was any gradient. The gradients are checked before any is changed.
local function unscale_grads(op, optimizer, inv_scale)
  local grads = {}
  for _, group in ipairs(optimizer.param_groups) do
    for _, p in ipairs(group.params) do
      local g = p.grad
      if g ~= nil then
        if g.dtype == "float16" then fail(op, "Attempting to unscale FP16 gradients.") end
        grads[#grads + 1] = g
      end
    end
  end
  local found_inf = 0.0
  torch.no_grad(function()
    for _, g in ipairs(grads) do
      if not g:isfinite():all():item() then found_inf = 1.0 end
      g:mul_(inv_scale)
    end
  end)
  return found_inf, #grads > 0
end

-- unscale_(optimizer): divides the optimizer's gradients by the scale (before clipping them).
function GradScaler:unscale_(optimizer, ...)
  local op = "GradScaler:unscale_"
  check_self(op, self)
  check_optimizer(op, optimizer)
  check_no_more(op, ...)
  if not self._enabled then return end
  check_initialized(self, "unscale_")
  local st = optimizer_state(self, optimizer)
  if st.stage == UNSCALED then
    fail(op, "unscale_() has already been called on this optimizer since the last update().")
  elseif st.stage == STEPPED then
    fail(op, "unscale_() is being called after step().")
  end
  -- The reciprocal in float64, rounded to float32, as PyTorch's scale.double().reciprocal().float().
  local inv_scale = torch.tensor(1.0 / self._scale:item(), {dtype = "float32"}):item()
  local found_inf, any = unscale_grads(op, optimizer, inv_scale)
  st.found_inf = any and found_inf or nil
  st.stage = UNSCALED
end

-- step(optimizer, ...): unscales (unless unscale_ was called) and runs optimizer:step(...)
-- unless a gradient held inf or NaN; returns what optimizer:step returned (nil when skipped).
function GradScaler:step(optimizer, ...)
  local op = "GradScaler:step"
  check_self(op, self)
  check_optimizer(op, optimizer)
  if not self._enabled then return optimizer:step(...) end
  for i = 1, select("#", ...) do
    if type(select(i, ...)) == "function" then
      fail(op, "Closure use is not currently supported if GradScaler is enabled.")
    end
  end
  check_initialized(self, "step")
  local st = optimizer_state(self, optimizer)
  if st.stage == STEPPED then fail(op, "step() has already been called since the last update().") end
  if st.stage == READY then self:unscale_(optimizer) end
  if st.found_inf == nil then fail(op, "No inf checks were recorded for this optimizer.") end
  local results = {n = 0}
  if st.found_inf == 0 then results = table.pack(optimizer:step(...)) end
  st.stage = STEPPED
  return table.unpack(results, 1, results.n)
end

-- update([new_scale]): the scale for the next iteration (see above), or new_scale (a number
-- or a 1-element float32 tensor without requires_grad).
function GradScaler:update(new_scale, ...)
  local op = "GradScaler:update"
  check_self(op, self)
  check_no_more(op, ...)
  if not self._enabled then return end
  check_initialized(self, "update")
  if new_scale ~= nil then
    if type(new_scale) == "number" then
      self._scale:fill_(new_scale)
    else
      local ok = torch.is_tensor(new_scale) and new_scale:numel() == 1 and new_scale.dtype == "float32" and
        not new_scale.requires_grad
      if not ok then
        fail(op, "new_scale should be a number or a 1-element float32 tensor with requires_grad=false, got %s",
             describe(new_scale))
      end
      self._scale:copy_(new_scale:reshape(1))
    end
  else
    local found, any = 0.0, false
    for _, st in pairs(self._per_optimizer) do
      if st.found_inf ~= nil then
        any = true
        found = found + st.found_inf
      end
    end
    if not any then fail(op, "No inf checks were recorded prior to update.") end
    if found > 0 then
      self._scale:mul_(self._backoff_factor)
      self._growth_tracker:fill_(0)
    else
      local successful = self._growth_tracker:item() + 1
      if successful == self._growth_interval then
        local grown = self._scale * self._growth_factor
        if grown:isfinite():all():item() then self._scale:copy_(grown) end
        self._growth_tracker:fill_(0)
      else
        self._growth_tracker:fill_(successful)
      end
    end
  end
  self._per_optimizer = setmetatable({}, {__mode = "k"})
end

-- get_scale() -> number: the current scale (init_scale before the first scale(); 1.0 when disabled).
function GradScaler:get_scale(...)
  check_self("GradScaler:get_scale", self)
  check_no_more("GradScaler:get_scale", ...)
  if not self._enabled then return 1.0 end
  return self._scale == nil and self._init_scale or self._scale:item()
end

local function growth_tracker(self)
  return self._growth_tracker == nil and self._init_growth_tracker or self._growth_tracker:item()
end

function GradScaler:get_growth_factor(...)
  check_self("GradScaler:get_growth_factor", self)
  check_no_more("GradScaler:get_growth_factor", ...)
  return self._growth_factor
end

function GradScaler:set_growth_factor(v)
  check_self("GradScaler:set_growth_factor", self)
  self._growth_factor = check_growth_factor("GradScaler:set_growth_factor", v)
end

function GradScaler:get_backoff_factor(...)
  check_self("GradScaler:get_backoff_factor", self)
  check_no_more("GradScaler:get_backoff_factor", ...)
  return self._backoff_factor
end

function GradScaler:set_backoff_factor(v)
  check_self("GradScaler:set_backoff_factor", self)
  self._backoff_factor = check_backoff_factor("GradScaler:set_backoff_factor", v)
end

function GradScaler:get_growth_interval(...)
  check_self("GradScaler:get_growth_interval", self)
  check_no_more("GradScaler:get_growth_interval", ...)
  return self._growth_interval
end

function GradScaler:set_growth_interval(v)
  check_self("GradScaler:set_growth_interval", self)
  self._growth_interval = check_growth_interval("GradScaler:set_growth_interval", v)
end

local STATE_KEYS = {"scale", "growth_factor", "backoff_factor", "growth_interval", "_growth_tracker"}

-- state_dict() -> table with PyTorch's keys (empty when disabled).
function GradScaler:state_dict(...)
  check_self("GradScaler:state_dict", self)
  check_no_more("GradScaler:state_dict", ...)
  if not self._enabled then return {} end
  return {scale = self:get_scale(), growth_factor = self._growth_factor, backoff_factor = self._backoff_factor,
          growth_interval = self._growth_interval, _growth_tracker = growth_tracker(self)}
end

function GradScaler:load_state_dict(sd, ...)
  local op = "GradScaler:load_state_dict"
  check_self(op, self)
  check_no_more(op, ...)
  if type(sd) ~= "table" or getmetatable(sd) ~= nil then fail(op, "expected a state dict table, got %s", describe(sd)) end
  if not self._enabled then return end
  if next(sd) == nil then
    fail(op, "The source state dict is empty, possibly because it was saved from a disabled instance of GradScaler.")
  end
  for _, k in ipairs(STATE_KEYS) do
    if sd[k] == nil then fail(op, "missing key '%s'", k) end
  end
  local scale = check_number(op, "scale", sd.scale)
  local growth_factor = check_growth_factor(op, sd.growth_factor)
  local backoff_factor = check_backoff_factor(op, sd.backoff_factor)
  local growth_interval = check_growth_interval(op, sd.growth_interval)
  local tracker = sd._growth_tracker
  if math.type(tracker) ~= "integer" or tracker < 0 then
    fail(op, "_growth_tracker must be a non-negative integer, got %s", describe(tracker))
  end
  self._init_scale = scale + 0.0
  if self._scale ~= nil then self._scale:fill_(scale) end
  self._growth_factor, self._backoff_factor, self._growth_interval = growth_factor, backoff_factor, growth_interval
  self._init_growth_tracker = tracker
  if self._growth_tracker ~= nil then self._growth_tracker:fill_(tracker) end
end

setmetatable(GradScaler, {__call = function(_, ...) return GradScaler.new(...) end})

torch.amp = {GradScaler = GradScaler, autocast = torch.autocast}
-- torch.cuda.amp.GradScaler({...}): the "cuda" scaler (keywords only, as PyTorch's).
torch.cuda.amp = {
  GradScaler = setmetatable({}, {__call = function(_, kw, ...)
    if select("#", ...) > 0 or (kw ~= nil and (type(kw) ~= "table" or getmetatable(kw) ~= nil)) then
      fail("cuda.amp.GradScaler", "expected only a keyword table")
    end
    if type(kw) == "table" and kw.device ~= nil then fail("cuda.amp.GradScaler", "takes no device (it is \"cuda\")") end
    return new_scaler("cuda.amp.GradScaler", "cuda", kw)
  end}),
}
