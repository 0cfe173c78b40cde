-- A child process for tests/lua/test_memory.lua: runs one allocation-heavy loop without ever
-- calling collectgarbage() (other than to pick the collector's mode), then reports its own
-- peak resident memory.
--
--   tide tests/lua/memory_loop.lua [--gc incremental|generational] [--limit-mb M] MODE ARGS...
--
--   MODE temporaries N [SIZE]   N iterations of two SIZE-element float64 temporaries
--   MODE chain N                N discarded results of (a * b + c):relu() on 10^6 float64
--   MODE steps N [DTYPE]        N steps of the two-layer network's step pattern, inline
--   MODE script PATH ARGS...    runs the script PATH with ARGS as `tide PATH ARGS...` would
--
-- --gc picks the collector's mode first (without it: the interpreter's choice; tide, like
-- lua.c, runs generational). --limit-mb stops the temporaries/steps loop early, with an
-- error, once the resident set passes M MiB, so that a broken build cannot eat the machine.
-- The last lines printed are "VmHWM_KB <kilobytes>" (peak RSS from /proc/self/status) and
-- "ELAPSED <seconds>" (wall clock of the loop).
local torch = require "torch"

local function status_kb(field)
  local f = io.open("/proc/self/status", "r")
  if not f then return -1 end
  local text = f:read("a")
  f:close()
  return tonumber(text:match(field .. ":%s*(%d+)")) or -1
end

local function report(t0)
  io.stdout:write(string.format("VmHWM_KB %d\nELAPSED %.3f\n", status_kb("VmHWM"),
                                torch.utils.clock() - t0))
  io.stdout:flush()
end

local limit_kb
while arg[1] and arg[1]:sub(1, 2) == "--" do
  local opt, value = table.remove(arg, 1), table.remove(arg, 1)
  assert(value, opt .. " needs a value")
  if opt == "--gc" then collectgarbage(value)
  elseif opt == "--limit-mb" then limit_kb = tonumber(value) * 1024
  else error("unknown option " .. opt, 0) end
end

local t0 = torch.utils.clock()

-- Every few iterations: stop with an error if the resident set is over the limit.
local function check_limit(i)
  if limit_kb and i % 16 == 0 then
    local rss = status_kb("VmRSS")
    if rss > limit_kb then
      report(t0)
      error(string.format("memory limit exceeded: VmRSS %d KB > %d KB at iteration %d",
                          rss, limit_kb, i), 0)
    end
  end
end

local mode = arg[1]
if mode == "temporaries" then
  local n = math.tointeger(tonumber(arg[2])) or 2000
  local size = math.tointeger(tonumber(arg[3])) or 1000000
  local check = 0
  for i = 1, n do
    -- two temporaries (8 MB each at the default size) per iteration, left to the GC
    local x = torch.ones(size, {dtype = "float64"})
    local y = x * i
    check = check + y[size]:item()
    check_limit(i)
  end
  assert(check == n * (n + 1) / 2, "wrong values in the temporaries loop")
  print("checksum " .. check)
elseif mode == "chain" then
  local n = math.tointeger(tonumber(arg[2])) or 500
  local a, b, c = torch.rand(1000000, {dtype = "float64"}), torch.rand(1000000, {dtype = "float64"}),
                  torch.rand(1000000, {dtype = "float64"})
  local function op() return (a * b + c):relu() end
  for i = 1, n do
    op()
    check_limit(i)
  end
  print("chain done")
elseif mode == "steps" then
  -- The step of scripts/two_layer_torch.lua (the classic PyTorch "tensors" example).
  local n = math.tointeger(tonumber(arg[2])) or 2000
  local dtype = arg[3] or "float64"
  torch.manual_seed(0)
  local N, D_in, H, D_out = 64, 1000, 100, 10
  local x = torch.randn(N, D_in, {dtype = dtype})
  local y = torch.randn(N, D_out, {dtype = dtype})
  local w1 = torch.randn(D_in, H, {dtype = dtype})
  local w2 = torch.randn(H, D_out, {dtype = dtype})
  local learning_rate = 1e-6
  local loss
  for i = 1, n do
    local h = x:mm(w1)
    local h_relu = h:clamp{min = 0}
    local y_pred = h_relu:mm(w2)
    loss = (y_pred - y):pow(2):sum():item()
    local grad_y_pred = 2.0 * (y_pred - y)
    local grad_w2 = h_relu:t():mm(grad_y_pred)
    local grad_h_relu = grad_y_pred:mm(w2:t())
    local grad_h = grad_h_relu:clone()
    grad_h[h:lt(0)] = 0
    local grad_w1 = x:t():mm(grad_h)
    w1:sub_(learning_rate * grad_w1)
    w2:sub_(learning_rate * grad_w2)
    check_limit(i)
  end
  assert(loss == loss, "loss is NaN")
  print(string.format("final loss %.17g", loss))
elseif mode == "script" then
  local path = assert(arg[2], "script mode needs a path")
  local args = {}
  for i = 3, #arg do args[#args + 1] = arg[i] end
  local chunk = assert(loadfile(path))
  local saved = arg
  arg = {[0] = path, table.unpack(args)}  -- as `tide PATH ARGS...` sets it
  chunk(table.unpack(args))
  arg = saved
else
  error("usage: memory_loop.lua [--gc MODE] [--limit-mb M] temporaries N [SIZE] | chain N | steps N [DTYPE] | " ..
        "script PATH ARGS...", 0)
end

report(t0)
