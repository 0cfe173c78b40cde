-- The Lua-written part of the torch module: receives the module table built from the C++
-- registry and adds what is easier to say in Lua.
local torch = ...

torch.inf = math.huge
torch.nan = 0 / 0
torch.pi = math.pi
torch.e = math.exp(1)
-- The global random stream as a torch.Generator (what rand draws from without generator=).
torch.default_generator = torch._default_generator()

---------------------------------------------------------------------------------------------
-- Argument checking for the Lua-written parts (nn, optim, utils), worded as the C++ argument
-- reader (bindings/lua_api.cpp) words it for the bindings: no argument is silently ignored.

local function edit_distance(a, b)
  local row = {}
  for j = 0, #b do row[j] = j end
  for i = 1, #a do
    local diag = row[0]
    row[0] = i
    for j = 1, #b do
      local up = row[j]
      row[j] = math.min(row[j] + 1, row[j - 1] + 1, diag + (a:byte(i) == b:byte(j) and 0 or 1))
      diag = up
    end
  end
  return row[#b]
end

local function quoted(v)
  if type(v) ~= "string" then return "a " .. type(v) .. " key" end
  return "'" .. torch.utils._quote(v) .. "'"
end

-- torch._check_keywords(op, kw, valid): every key of the keyword table kw must be one of the
-- names in the list `valid`; otherwise "<op>: unknown keyword 'x' (did you mean 'y'? valid:
-- ...)". Returns kw.
function torch._check_keywords(op, kw, valid)
  for key in pairs(kw) do
    local known = false
    for _, name in ipairs(valid) do
      if key == name then known = true break end
    end
    if not known then
      local msg = op .. ": unknown keyword " .. quoted(key)
      if #valid == 0 then error(msg .. " (" .. op .. " takes no keyword arguments)", 0) end
      local best, best_d = nil, math.huge
      if type(key) == "string" then
        for _, name in ipairs(valid) do
          -- a length apart by more than the cut-off below cannot be suggested: skip the
          -- quadratic distance (a 10 MB key took minutes)
          if math.abs(#key - #name) <= math.max(2, #name // 3) then
            local d = edit_distance(key, name)
            if d < best_d then best, best_d = name, d end
          end
        end
      end
      local list = table.concat(valid, ", ")
      if best and best_d <= math.max(2, #best // 3) then
        error(string.format("%s (did you mean '%s'? valid: %s)", msg, best, list), 0)
      end
      error(msg .. " (valid: " .. list .. ")", 0)
    end
  end
  return kw
end

-- A value in an error message about an unexpected argument.
local function describe_argument(v)
  if torch.is_tensor(v) then return "a tensor" end
  if type(v) == "number" then return "the number " .. tostring(v) end
  if type(v) == "string" then return "the string " .. quoted(v) end
  if type(v) == "table" and getmetatable(v) == nil and v[1] == nil and next(v) ~= nil then
    return "a keyword table"
  end
  if v == nil or type(v) == "boolean" then return tostring(v) end
  return "a " .. type(v)
end

-- torch._strict(op, fn[, method]): fn, or (when fn has a fixed number of parameters) a
-- function that first rejects a non-nil argument beyond them, as a Lua function would
-- otherwise drop it silently (F.relu(x, {inplace = true})). `method`: the first parameter
-- is self, not counted in the message, and must be an object (a table): obj.forward(x) for
-- obj:forward(x) is an error naming the method, not a failure inside it.
local function check_self(op, self)
  if type(self) ~= "table" then
    error(string.format("%s: expected an object as self, got %s (call it with a colon: obj:%s(...))", op,
                        describe_argument(self), op:match("[^:.]*$")), 3)
  end
end

-- The function inside each of the hooks' checking wrappers (below, and torch_strict.lua's),
-- for the framework's own calls, whose arguments are known good: Optimizer:step calls an
-- optimizer's validate and update through it (two wrappers a call, ~1 us a step).
torch._unchecked = setmetatable({}, {__mode = "k"})

-- torch._self_checked(op, fn): fn with only the self check of a method (for the framework's
-- hooks, whose arguments their subclasses choose).
function torch._self_checked(op, fn)
  local checked = function(...)
    check_self(op, (...))
    return fn(...)
  end
  torch._unchecked[checked] = torch._unchecked[fn] or fn
  return checked
end

function torch._strict(op, fn, method)
  local nparams, vararg = torch._arity(fn)
  if vararg then return method and torch._self_checked(op, fn) or fn end
  local shift = method and 1 or 0
  return function(...)
    if method then check_self(op, (...)) end
    local n = select("#", ...)
    if n > nparams then
      for i = nparams + 1, n do
        local v = select(i, ...)
        if v ~= nil then
          error(string.format("%s: unexpected argument %d (%s): %s takes %d argument%s and no keywords", op,
                              i - shift, describe_argument(v), op, nparams - shift, nparams - shift == 1 and "" or "s"), 2)
        end
      end
    end
    return fn(...)
  end
end

-- torch.utils.progress(n_or_table[, {desc=, total=, file=, force=}]): an iterator over 1..n
-- (or over a table's index, value pairs, as ipairs) that draws a progress bar like tqdm's:
--   train:  42%|██████████▌              | 210/500 [00:01<00:02, 150.30it/s, loss=0.3]
-- on stderr (or `file`), redrawn in place at most 10 times a second and ended with a newline.
-- It draws only when that file is a terminal, unless force=true or the environment sets
-- TIDE_PROGRESS=1 (TIDE_PROGRESS=0 keeps it quiet even on a terminal). `total` changes the
-- count shown, not the iteration. bar:set_postfix{loss = l} adds values to the line;
-- bar:close() ends the line early (also at the end of a for loop left by break or an error,
-- and for `local bar <close> = ...`).
local Progress = {}
Progress.__index = Progress

local BAR_CELLS = 25
local PARTIAL_CELLS = {"▏", "▎", "▍", "▌", "▋", "▊", "▉"}  -- 1/8 .. 7/8 of a cell
local REDRAW_SECONDS = 0.1
local OPTIONS = {desc = "string", total = "number", file = true, force = "boolean"}

-- "01:05" or "1:01:05"; "?" when not known.
local function clock_text(seconds)
  if not seconds or seconds ~= seconds or seconds == math.huge then return "?" end
  local s = math.floor(seconds)
  if s >= 3600 then return string.format("%d:%02d:%02d", s // 3600, s % 3600 // 60, s % 60) end
  return string.format("%02d:%02d", s // 60, s % 60)
end

-- The bar's cells for a share done of eighths / (BAR_CELLS * 8): full blocks, one partial.
local function bar_cells(eighths)
  local full, part = eighths // 8, eighths % 8
  local cells = string.rep("█", full) .. (PARTIAL_CELLS[part] or "")
  return cells .. string.rep(" ", BAR_CELLS - full - (part > 0 and 1 or 0))
end

-- A postfix value as shown: integers as they are, other numbers to 4 significant digits.
local function postfix_value(key, v)
  if torch.is_tensor(v) and v:numel() == 1 then v = v:item() end
  if math.type(v) == "integer" then return tostring(v) end
  if type(v) == "number" then return string.format("%.4g", v) end
  if type(v) == "string" or type(v) == "boolean" then return tostring(v) end
  error(string.format("utils.progress: set_postfix value '%s' must be a number, a string, a boolean or a " ..
                      "one-element tensor, got a %s", key, torch.is_tensor(v) and "tensor of " .. v:numel() ..
                      " elements" or type(v)), 0)
end

-- The line for `done` finished steps at time `now`.
function Progress:line(now)
  local elapsed = now - self.start
  local rate = (self.done > 0 and elapsed > 0) and self.done / elapsed or nil
  local total = self.total
  local function share(scale)  -- of the total done, in integer steps (exact, capped at full)
    return total > 0 and math.min(self.done * scale // total, scale) or scale
  end
  local rate_text = not rate and "?it/s" or rate >= 1 and string.format("%.2fit/s", rate)
                    or string.format("%.2fs/it", 1 / rate)
  local remaining = rate and math.max(total - self.done, 0) / rate
  return string.format("%s%3d%%|%s| %d/%d [%s<%s, %s%s]", self.desc and self.desc .. ": " or "",
                       share(100), bar_cells(share(BAR_CELLS * 8)), self.done, total,
                       clock_text(elapsed), clock_text(remaining), rate_text, self.postfix)
end

-- Redraws the line in place (padding over a longer previous one); `final` ends it.
function Progress:draw(now, final)
  local text = self:line(now)
  local width = utf8 and utf8.len(text) or #text
  self.file:write("\r", text, string.rep(" ", math.max(0, self.width - width)), final and "\n" or "")
  if self.file.flush then self.file:flush() end
  self.width, self.last_draw = width, now
end

-- One step of the for loop: the next index (and value, over a table), or nil at the end.
function Progress:__call()
  if self.closed then return nil end
  local clock = torch.utils.clock
  if self.done == nil then  -- the loop starts
    self.done, self.start = 0, clock()
    if self.drawing then self:draw(self.start) end
  else
    self.done = self.done + 1
  end
  if self.done >= self.n then
    self:close()
    return nil
  end
  if self.drawing then
    local now = clock()
    if now - self.last_draw >= REDRAW_SECONDS then self:draw(now) end
  end
  local i = self.done + 1
  if self.items then return i, self.items[i] end
  return i
end

-- Values shown after the rate: bar:set_postfix{loss = 0.25, acc = 0.9} (in key order).
function Progress:set_postfix(values)
  if type(values) ~= "table" or torch.is_tensor(values) then
    error("utils.progress: set_postfix expects a table {name = value}, got a " .. type(values), 0)
  end
  local keys = {}
  for k in pairs(values) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = tostring(k) .. "=" .. postfix_value(tostring(k), values[k]) end
  self.postfix = #parts > 0 and ", " .. table.concat(parts, ", ") or ""
end

-- Ends the bar: draws it once more and ends its line (only if anything was drawn).
function Progress:close()
  if self.closed then return end
  self.closed = true
  if self.drawing and self.done then self:draw(torch.utils.clock(), true) end
end
Progress.__close = Progress.close

local function check_options(opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" then
    error("utils.progress: options must be a table {desc=, total=, file=, force=}, got a " .. type(opts), 0)
  end
  torch._check_keywords("utils.progress", opts, {"desc", "total", "file", "force"})
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if want ~= true and type(v) ~= want then
      error(string.format("utils.progress: option '%s' must be a %s, got a %s", k, want, type(v)), 0)
    end
  end
  if opts.total and (math.tointeger(opts.total) == nil or opts.total < 0) then
    error("utils.progress: total must be an integer >= 0, got " .. tostring(opts.total), 0)
  end
  if opts.file ~= nil and not (io and io.type(opts.file) == "file") and
     not (type(opts.file) == "table" and type(opts.file.write) == "function") then
    error("utils.progress: file must be an open file or an object with a write method", 0)
  end
  return opts
end

local function progress(n_or_table, opts)
  opts = check_options(opts)
  local n, items
  if type(n_or_table) == "table" and not torch.is_tensor(n_or_table) then
    items, n = n_or_table, #n_or_table
  elseif type(n_or_table) == "number" then
    n = math.tointeger(n_or_table)
    if not n or n < 0 then error("utils.progress: n must be an integer >= 0, got " .. tostring(n_or_table), 0) end
  else
    error("utils.progress: expected a count or a table to iterate over, got a " ..
          (torch.is_tensor(n_or_table) and "tensor" or type(n_or_table)), 0)
  end
  local file = opts.file or (io and io.stderr)
  local env = os and os.getenv("TIDE_PROGRESS")
  local drawing = file ~= nil and (opts.force or env == "1" or
                  (env ~= "0" and io ~= nil and io.type(file) == "file" and torch.utils._isatty(file)))
  local bar = setmetatable({n = n, items = items, total = math.tointeger(opts.total) or n, desc = opts.desc,
                            file = file, drawing = drawing, postfix = "", width = 0, last_draw = 0}, Progress)
  -- The bar is also the for loop's closing value, so that leaving the loop ends its line.
  return bar, nil, nil, bar
end

torch.utils.progress = progress

-- torch.backends.cuda.matmul.allow_tf32: float32 products on CUDA may use TF32 tensor cores
-- (about 10 bits of mantissa) when set to true; off by default, as in PyTorch since 1.12.
do
  local allow_tf32 = false
  local matmul = setmetatable({}, {
    __index = function(_, k)
      if k == "allow_tf32" then return allow_tf32 end
    end,
    __newindex = function(_, k, v)
      if k ~= "allow_tf32" then
        error("torch.backends.cuda.matmul: unknown setting '" .. torch.utils._quote(tostring(k)) .. "' (allow_tf32 is the one)", 2)
      end
      if type(v) ~= "boolean" then
        error("torch.backends.cuda.matmul.allow_tf32: expected a boolean, got " .. type(v), 2)
      end
      if torch.cuda.is_available() then torch.cuda._set_allow_tf32(v) end
      allow_tf32 = v
    end,
  })
  torch.backends = {cuda = {matmul = matmul}}
end
