-- The scoped grad-mode switches of torch: torch.no_grad(fn, ...) runs fn with recording off
-- and returns its results; `local _ <close> = torch.no_grad()` turns recording off until the
-- scope ends. torch.enable_grad does the same with recording on. Receives the torch table.
local torch = ...

-- A to-be-closed value that restores the grad mode it was made under.
local restore_mt = {__close = function(self) torch.set_grad_enabled(self.previous) end}

local function grad_mode(enabled)
  return function(fn, ...)
    local previous = torch.is_grad_enabled()
    if fn == nil then
      torch.set_grad_enabled(enabled)
      return setmetatable({previous = previous}, restore_mt)
    end
    if type(fn) ~= "function" then
      error((enabled and "enable_grad" or "no_grad") .. ": expected a function or no argument, got a " .. type(fn), 2)
    end
    torch.set_grad_enabled(enabled)
    local results = table.pack(pcall(fn, ...))
    torch.set_grad_enabled(previous)
    if not results[1] then error(results[2], 0) end
    return table.unpack(results, 2, results.n)
  end
end

torch.no_grad = grad_mode(false)
torch.enable_grad = grad_mode(true)
torch.autograd.no_grad = torch.no_grad
torch.autograd.enable_grad = torch.enable_grad
