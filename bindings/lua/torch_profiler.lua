-- torch.profiler, the Lua-written half (the recording core is tensor/profiler/, its bindings
-- bindings/bind_profiler.cpp):
--  * profile([{record_shapes=, profile_memory=, with_stack=, activities=}][, fn, ...]): with
--    fn, runs fn(...) under the profiler and returns the profile, then fn's results (the
--    profiler stops also when fn raises); without, starts recording and returns the profile,
--    a to-be-closed value (`local prof <close> = torch.profiler.profile{...}` stops at the
--    end of the scope; prof:stop() earlier);
--  * record_function(name[, fn, ...]): a user label around fn or, to-be-closed, a scope;
--  * prof:events(), prof:key_averages{group_by_input_shape=, group_by_stack_n=} and its
--    :table{sort_by=, row_limit=, ...} (PyTorch's layout, torch/autograd/profiler_util.py),
--    prof:export_chrome_trace(path) (Chrome / Perfetto trace JSON).
-- An event is every binding call (the dispatcher records them: bindings/lua_api.cpp), every
-- autograd node's backward, and every record_function range; times are microseconds.
local torch = ...
local profiler = torch.profiler
local C = {start = profiler._start, stop = profiler._stop, recording = profiler._recording,
           push = profiler._push, pop = profiler._pop}

local function describe(v)
  if type(v) == "table" or type(v) == "function" then return "a " .. type(v) end
  return torch.nn._util.describe(v)
end

local function fail(op, fmt, ...) error(op .. ": " .. string.format(fmt, ...), 0) end

local function plain_table(v) return type(v) == "table" and getmetatable(v) == nil end

-- Methods called with another self (profiler._Profile.stop(x)) fail naming what they got.
local function check_self(op, self, class, what)
  if getmetatable(self) ~= class then fail(op, "expected %s as self, got %s", what, describe(self)) end
end

-- PyTorch's activity kinds; tide times CPU ops only.
profiler.ProfilerActivity = {CPU = "CPU", CUDA = "CUDA"}

---------------------------------------------------------------------------------------------
-- Events

-- "[[10], [10]]" as PyTorch prints input_shapes (str of a list of lists).
local function shapes_string(shapes)
  local parts = {}
  for i, s in ipairs(shapes) do
    local dims = {}
    for k, d in ipairs(s) do dims[k] = tostring(d) end
    parts[i] = "[" .. table.concat(dims, ", ") .. "]"
  end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- The FunctionEvents of a stopped session: name (also key), kind ("op", "backward", "user"),
-- time_range {start, end}, cpu_time_total, self_cpu_time_total, cpu_parent, cpu_children,
-- count (1), and input_shapes / cpu_memory_usage, self_cpu_memory_usage / stack when
-- recorded. Self values are the totals less the children's totals.
local function build_events(raw, opts)
  local events = {}
  for i, r in ipairs(raw) do
    local e = {id = i, name = r.name, key = r.name, kind = r.kind, count = 1,
               time_range = {start = r.start, ["end"] = r["end"]},
               cpu_time_total = r["end"] - r.start, cpu_children = {}}
    if opts.record_shapes then e.input_shapes = r.shapes end
    if opts.profile_memory then e.cpu_memory_usage = r.memory end
    if opts.with_stack then e.stack = r.stack end
    events[i] = e
    if r.parent then
      e.cpu_parent = events[r.parent]
      table.insert(e.cpu_parent.cpu_children, e)
    end
  end
  for _, e in ipairs(events) do
    local self_time, self_mem = e.cpu_time_total, e.cpu_memory_usage
    for _, c in ipairs(e.cpu_children) do
      self_time = self_time - c.cpu_time_total
      if self_mem then self_mem = self_mem - c.cpu_memory_usage end
    end
    e.self_cpu_time_total = math.max(self_time, 0.0)  -- (the clock is monotonic: only rounding)
    e.self_cpu_memory_usage = self_mem
  end
  return events
end

---------------------------------------------------------------------------------------------
-- The table (PyTorch's _build_table)

local function format_time(us)
  if us >= 1e6 then return string.format("%.3fs", us / 1e6) end
  if us >= 1e3 then return string.format("%.3fms", us / 1e3) end
  return string.format("%.3fus", us)
end

local function format_share(us, total)
  if total == 0 then return "NaN" end
  return string.format("%.2f%%", us * 100.0 / total)
end

local function format_memory(n)
  local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
  if math.abs(n) >= GB then return string.format("%.2f Gb", n / GB) end
  if math.abs(n) >= MB then return string.format("%.2f Mb", n / MB) end
  if math.abs(n) >= KB then return string.format("%.2f Kb", n / KB) end
  return tostring(math.tointeger(n) or n) .. " b"
end

local function pad(s, width, left)
  local fill = string.rep(" ", math.max(width - #s, 0))
  return left and s .. fill or fill .. s
end

-- The attributes sort_by takes (PyTorch's CPU ones), largest first.
local SORT_KEYS = {"cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "cpu_memory_usage",
                   "self_cpu_memory_usage"}
local TABLE_KEYWORDS = {"sort_by", "row_limit", "header", "max_name_column_width", "max_shapes_column_width",
                        "max_src_column_width"}

local function check_width(op, name, v, default)
  if v == nil then return default end
  if math.type(v) ~= "integer" or v < 4 then fail(op, "%s must be an integer >= 4, got %s", name, describe(v)) end
  return v
end

local EventList = {name = "EventList"}
EventList.__index = EventList
EventList.__name = "EventList"

-- list:table([{sort_by=, row_limit=100, header=, max_name_column_width=55,
-- max_shapes_column_width=80, max_src_column_width=75}]) -> string.
function EventList:table(kw)
  local op = "EventList:table"
  check_self(op, self, EventList, "an EventList")
  if kw ~= nil and not plain_table(kw) then fail(op, "expected a keyword table, got %s", describe(kw)) end
  kw = torch._check_keywords(op, kw or {}, TABLE_KEYWORDS)
  local sort_by = kw.sort_by
  if sort_by ~= nil then
    local known = false
    for _, k in ipairs(SORT_KEYS) do known = known or k == sort_by end
    if not known then fail(op, "sort_by must be one of %s, got %s", table.concat(SORT_KEYS, ", "), describe(sort_by)) end
    if sort_by:find("memory") and not self._profile_memory then
      fail(op, "sort_by %s needs a profile with profile_memory = true", sort_by)
    end
  end
  local row_limit = kw.row_limit == nil and 100 or kw.row_limit
  if math.type(row_limit) ~= "integer" or row_limit < -1 then
    fail(op, "row_limit must be an integer >= 0 (or -1: no limit), got %s", describe(row_limit))
  end
  if kw.header ~= nil and type(kw.header) ~= "string" then fail(op, "header must be a string, got %s", describe(kw.header)) end
  local max_name = check_width(op, "max_name_column_width", kw.max_name_column_width, 55)
  local max_shapes = check_width(op, "max_shapes_column_width", kw.max_shapes_column_width, 80)
  local max_src = check_width(op, "max_src_column_width", kw.max_src_column_width, 75)
  if #self == 0 then return "" end

  local events = {}
  for i, e in ipairs(self) do events[i] = e end
  if sort_by then
    local index = {}
    for i, e in ipairs(events) do index[e] = i end
    table.sort(events, function(a, b)  -- stable, as Python's sorted
      if a[sort_by] ~= b[sort_by] then return a[sort_by] > b[sort_by] end
      return index[a] < index[b]
    end)
  end
  local has_shapes, has_stack, name_width, shapes_width, src_width = false, false, 0, 0, 0
  for _, e in ipairs(events) do
    name_width = math.max(name_width, #e.key + 4)
    if e.input_shapes and #e.input_shapes > 0 then has_shapes = true end
    shapes_width = math.max(shapes_width, #shapes_string(e.input_shapes or {}) + 4)
    if e.stack and #e.stack > 0 then
      has_stack = true
      for _, entry in ipairs(e.stack) do src_width = math.max(src_width, #entry + 4) end
    end
  end
  name_width, shapes_width, src_width = math.min(name_width, max_name), math.min(shapes_width, max_shapes),
                                        math.min(src_width, max_src)

  local headers = {"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"}
  if self._profile_memory then
    headers[#headers + 1] = "CPU Mem"
    headers[#headers + 1] = "Self CPU Mem"
  end
  headers[#headers + 1] = "# of Calls"
  local widths, left = {name_width}, {}
  for i = 2, #headers do widths[i] = 12 end
  if has_shapes then
    headers[#headers + 1] = "Input Shapes"
    widths[#headers] = shapes_width
  end
  if has_stack then
    headers[#headers + 1] = "Source Location"
    widths[#headers] = src_width
    left[#headers] = true
  end
  local function row(values)
    local parts = {}
    for i, v in ipairs(values) do parts[i] = pad(v, widths[i], left[i]) .. "  " end
    return table.concat(parts)
  end
  local seps = {}
  for i, w in ipairs(widths) do seps[i] = string.rep("-", w) .. "  " end
  local sep = table.concat(seps)
  local function trim_path(path)
    if #path > src_width then
      path = path:sub(#path - src_width + 1)
      if #path > 3 then path = "..." .. path:sub(4) end
    end
    return path
  end

  local total = 0.0
  for _, e in ipairs(events) do total = total + e.self_cpu_time_total end
  local out = {}
  if kw.header then
    out[#out + 1] = string.rep("=", #sep - 2)
    out[#out + 1] = kw.header
  end
  out[#out + 1] = sep
  out[#out + 1] = row(headers)
  out[#out + 1] = sep
  for n, e in ipairs(events) do
    if n - 1 == row_limit then break end
    local name = e.key
    if #name >= max_name - 3 then name = name:sub(1, max_name - 3) .. "..." end
    local values = {name, format_share(e.self_cpu_time_total, total), format_time(e.self_cpu_time_total),
                    format_share(e.cpu_time_total, total), format_time(e.cpu_time_total),
                    format_time(e.cpu_time_total / e.count)}
    if self._profile_memory then
      values[#values + 1] = format_memory(e.cpu_memory_usage)
      values[#values + 1] = format_memory(e.self_cpu_memory_usage)
    end
    values[#values + 1] = tostring(e.count)
    if has_shapes then values[#values + 1] = shapes_string(e.input_shapes or {}):sub(1, shapes_width) end
    if has_stack then values[#values + 1] = e.stack and e.stack[1] and trim_path(e.stack[1]) or "" end
    out[#out + 1] = row(values)
    if has_stack then
      local empty = {}
      for i = 1, #headers - 1 do empty[i] = "" end
      for k = 2, math.min(#(e.stack or {}), 5) do
        empty[#headers] = trim_path(e.stack[k])
        out[#out + 1] = row(empty)
      end
      empty[#headers] = ""
      out[#out + 1] = row(empty)
    end
  end
  out[#out + 1] = sep
  out[#out + 1] = "Self CPU time total: " .. format_time(total)
  return table.concat(out, "\n") .. "\n"
end

-- print(list) prints the table as PyTorch's str(EventList) does.
EventList.__tostring = function(self) return self:table() end

-- The profile's averages by key (name, and input shapes / the first stack frames when
-- grouped by them), in the order the keys first occur: key, count, cpu_time_total,
-- self_cpu_time_total, cpu_time (the mean), cpu_memory_usage, self_cpu_memory_usage,
-- input_shapes and stack (only when grouped by them: one group has one value).
local function average(events, opts, by_shape, stack_n)
  local groups, list = {}, setmetatable({_profile_memory = opts.profile_memory}, EventList)
  for _, e in ipairs(events) do
    local key = e.name
    if by_shape then key = key .. "\0" .. shapes_string(e.input_shapes) end
    local stack
    if stack_n > 0 then
      stack = table.move(e.stack, 1, math.min(stack_n, #e.stack), 1, {})
      key = key .. "\0" .. table.concat(stack, "\n")
    end
    local g = groups[key]
    if not g then
      g = {key = e.name, count = 0, cpu_time_total = 0.0, self_cpu_time_total = 0.0}
      if opts.profile_memory then g.cpu_memory_usage, g.self_cpu_memory_usage = 0, 0 end
      if by_shape then g.input_shapes = e.input_shapes end
      g.stack = stack
      groups[key] = g
      list[#list + 1] = g
    end
    g.count = g.count + 1
    g.cpu_time_total = g.cpu_time_total + e.cpu_time_total
    g.self_cpu_time_total = g.self_cpu_time_total + e.self_cpu_time_total
    if opts.profile_memory then
      g.cpu_memory_usage = g.cpu_memory_usage + e.cpu_memory_usage
      g.self_cpu_memory_usage = g.self_cpu_memory_usage + e.self_cpu_memory_usage
    end
  end
  for _, g in ipairs(list) do g.cpu_time = g.cpu_time_total / g.count end
  return list
end

---------------------------------------------------------------------------------------------
-- The profile

local Profile = {name = "profile"}
Profile.__index = Profile
Profile.__name = "profile"
profiler._Profile = Profile

local PROFILE_KEYWORDS = {"record_shapes", "profile_memory", "with_stack", "activities"}

local function check_boolean(op, name, v)
  if v == nil then return false end
  if type(v) ~= "boolean" then fail(op, "%s must be true or false, got %s", name, describe(v)) end
  return v
end

-- The options of profile{...}: PyTorch's keywords that tide honours.
local function profile_options(op, kw)
  torch._check_keywords(op, kw, PROFILE_KEYWORDS)
  local opts = {}
  for _, name in ipairs{"record_shapes", "profile_memory", "with_stack"} do opts[name] = check_boolean(op, name, kw[name]) end
  if kw.activities ~= nil then
    if not plain_table(kw.activities) then fail(op, "activities must be a list of ProfilerActivity, got %s", describe(kw.activities)) end
    for _, a in pairs(kw.activities) do
      if a == "CUDA" then
        fail(op, "ProfilerActivity.CUDA is not supported: tide's profiler times CPU ops only (a CUDA op's time is its launch)")
      elseif a ~= "CPU" then
        fail(op, "activities must hold ProfilerActivity.CPU, got %s", describe(a))
      end
    end
  end
  return opts
end

local function start(op, opts)
  if C.recording() then fail(op, "a profiler is already recording (profiles do not nest)") end
  local session = C.start(opts.record_shapes, opts.profile_memory, opts.with_stack)
  return setmetatable({_opts = opts, _running = true, _session = session}, Profile)
end

-- Stops the session this profile records (nothing when it stopped already; no events when
-- profiler._stop() ended it behind the profile's back).
local function stop(self)
  if not self._running then return end
  self._running = false
  self._events = C.recording() == self._session and build_events(C.stop(), self._opts) or {}
end

Profile.__close = stop
-- A running profile that nobody can reach any more stops recording when collected.
Profile.__gc = function(self)
  if self._running and C.recording() == self._session then C.stop() end
  self._running = false
end

-- prof:stop(): stops recording (what leaving its <close> scope does); nothing if stopped.
function Profile:stop()
  check_self("profile:stop", self, Profile, "a profile")
  stop(self)
end

local function results(self, op)
  check_self(op, self, Profile, "a profile")
  if self._running then
    fail(op, "the profiler is still recording; call prof:stop() (or leave its <close> scope) first")
  end
  return self._events
end

-- prof:events() -> list of FunctionEvents, in the order they began.
function Profile:events()
  local events = results(self, "profile:events")
  local list = setmetatable({_profile_memory = self._opts.profile_memory}, EventList)
  for i, e in ipairs(events) do list[i] = e end
  return list
end

-- prof:key_averages([{group_by_input_shape=false, group_by_stack_n=0}]) -> EventList of averages.
function Profile:key_averages(kw)
  local op = "profile:key_averages"
  local events = results(self, op)
  if kw ~= nil and not plain_table(kw) then fail(op, "expected a keyword table, got %s", describe(kw)) end
  kw = torch._check_keywords(op, kw or {}, {"group_by_input_shape", "group_by_stack_n"})
  local by_shape = check_boolean(op, "group_by_input_shape", kw.group_by_input_shape)
  if by_shape and not self._opts.record_shapes then
    fail(op, "group_by_input_shape needs a profile with record_shapes = true")
  end
  local stack_n = kw.group_by_stack_n == nil and 0 or kw.group_by_stack_n
  if math.type(stack_n) ~= "integer" or stack_n < 0 then
    fail(op, "group_by_stack_n must be an integer >= 0, got %s", describe(stack_n))
  end
  if stack_n > 0 and not self._opts.with_stack then fail(op, "group_by_stack_n needs a profile with with_stack = true") end
  return average(events, self._opts, by_shape, stack_n)
end

-- A Lua string as a JSON string.
local function json_string(s)
  return '"' .. s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end

local TRACE_CATEGORY = {op = "cpu_op", backward = "cpu_op", user = "user_annotation"}

-- prof:export_chrome_trace(path): the events as Chrome trace JSON (chrome://tracing,
-- https://ui.perfetto.dev): complete events (ph "X") on one thread, ts and dur in
-- microseconds since the profile started, args with "Input Dims", "CPU Mem" / "Self CPU Mem"
-- and "Call stack" when recorded.
function Profile:export_chrome_trace(path)
  local op = "profile:export_chrome_trace"
  local events = results(self, op)
  if type(path) ~= "string" then fail(op, "expected a file path, got %s", describe(path)) end
  local lines = {}
  for i, e in ipairs(events) do
    local args = {string.format('"External id": %d', i)}
    if e.input_shapes then args[#args + 1] = '"Input Dims": ' .. shapes_string(e.input_shapes) end
    if e.cpu_memory_usage then
      args[#args + 1] = string.format('"CPU Mem": %d, "Self CPU Mem": %d', e.cpu_memory_usage, e.self_cpu_memory_usage)
    end
    if e.stack and #e.stack > 0 then args[#args + 1] = '"Call stack": ' .. json_string(table.concat(e.stack, ";")) end
    lines[i] = string.format('  {"ph": "X", "cat": "%s", "name": %s, "pid": 1, "tid": 1, "ts": %.3f, "dur": %.3f, ' ..
                             '"args": {%s}}', TRACE_CATEGORY[e.kind], json_string(e.name), e.time_range.start,
                             e.cpu_time_total, table.concat(args, ", "))
  end
  local f, err = io.open(path, "w")
  if not f then fail(op, "cannot write %s: %s", path, err) end
  f:write('{"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": [\n', table.concat(lines, ",\n"), "\n]}\n")
  f:close()
end

-- torch.profiler.profile([{record_shapes=, profile_memory=, with_stack=, activities=}][, fn, ...])
function profiler.profile(...)
  local op = "profile"
  local kw, nfirst, n = {}, 1, select("#", ...)
  if n >= 1 and plain_table((...)) then kw, nfirst = ..., 2 end
  local fn = nil
  if n >= nfirst then
    fn = select(nfirst, ...)
    if type(fn) ~= "function" then fail(op, "expected a keyword table or a function, got %s", describe(fn)) end
  end
  local prof = start(op, profile_options(op, kw))
  if not fn then return prof end
  local out = table.pack(pcall(fn, select(nfirst + 1, ...)))
  stop(prof)
  if not out[1] then error(out[2], 0) end
  return prof, table.unpack(out, 2, out.n)
end

---------------------------------------------------------------------------------------------
-- record_function

local Range = {name = "record_function"}
Range.__index = Range
Range.__name = "record_function"
Range.__close = function(self) C.pop(self._token) end

-- range:close(): ends the range (what leaving its <close> scope does); nothing if ended.
function Range:close()
  check_self("record_function:close", self, Range, "a record_function range")
  C.pop(self._token)
end

-- torch.profiler.record_function(name[, fn, ...]): with fn, runs fn(...) inside a range named
-- name and returns its results (the range ends also on an error); without, opens the range
-- and returns it, to-be-closed. Without a recording profiler it records nothing.
function profiler.record_function(name, ...)
  local op = "record_function"
  if type(name) ~= "string" then fail(op, "expected a name (a string), got %s", describe(name)) end
  local fn = ...
  if select("#", ...) > 0 and type(fn) ~= "function" then fail(op, "expected a function after the name, got %s", describe(fn)) end
  local token = C.push(name)
  if fn == nil then return setmetatable({_token = token}, Range) end
  local out = table.pack(pcall(fn, select(2, ...)))
  C.pop(token)
  if not out[1] then error(out[2], 0) end
  return table.unpack(out, 2, out.n)
end
profiler._Range = Range
profiler._EventList = EventList
