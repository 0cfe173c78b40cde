-- The part loaded after the others but the docs: every public function of the Lua-written
-- parts (torch, torch.utils, torch.autograd, nn.functional, nn.init, the nn layer classes,
-- the optimizers and schedulers, torch.multiprocessing and its classes) that has a fixed
-- number of parameters rejects a non-nil argument beyond them, which Lua would drop
-- silently: F.relu(x, {inplace = true}) is an error, not a relu. Functions with varargs
-- check theirs themselves (nn._util.args, torch._check_keywords), as the C++ bindings do in
-- their argument reader.
local torch = ...
local strict = torch._strict

-- Methods the framework calls with its own arguments (an optimizer's validate(values,
-- defaults_only) and update(...), a scheduler's get_lr()): subclasses define them with what
-- they use, so they are hooks, not entry points.
local hooks = {validate = true, update = true, get_lr = true, closed_form_lr = true}

-- Wraps the public functions stored in t itself (not inherited); `method`: called with self.
local function wrap(t, prefix, method)
  local names = {}
  for k, v in pairs(t) do
    if type(k) == "string" and type(v) == "function" and k:sub(1, 1) ~= "_" and not (method and hooks[k]) then
      names[#names + 1] = k
    end
  end
  for _, k in ipairs(names) do rawset(t, k, strict(prefix .. k, rawget(t, k), method)) end
end

wrap(torch, "")
wrap(torch.utils, "utils.")
wrap(torch.autograd, "autograd.")
wrap(torch.nn.functional, "")
wrap(torch.nn.init, "init.")
wrap(torch.multiprocessing, "multiprocessing.")
for _, name in ipairs{"Parameter", "is_module"} do torch.nn[name] = strict(name, torch.nn[name]) end

-- Classes: nn layers (tables with _name), optimizers and schedulers (tables with name that
-- are their own __index).
local function is_class(v)
  return type(v) == "table" and (rawget(v, "_name") ~= nil or (rawget(v, "name") ~= nil and rawget(v, "__index") == v))
end
for _, space in ipairs{torch.nn, torch.optim, torch.optim.lr_scheduler, torch.multiprocessing} do
  for _, cls in pairs(space) do
    if is_class(cls) then wrap(cls, (rawget(cls, "_name") or rawget(cls, "name")) .. ":", true) end
  end
end
