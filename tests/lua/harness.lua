-- A tiny test harness for tide's Lua tests. Each test file does
--   local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
--   T.test("name", function() ... end)
--   T.done()   -- prints "N passed, M failed" and exits non-zero on failure
local T = {passed = 0, failed = 0}

local function show(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = show(x) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return tostring(v)
end
T.show = show

local function deep_eq(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b or (a ~= a and b ~= b) end
  if #a ~= #b then return false end
  for k, v in pairs(a) do if not deep_eq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
T.deep_eq = deep_eq

-- TIDE_TEST_TIMES=1 prints each test's wall time (to find the slow ones).
local show_times = os.getenv("TIDE_TEST_TIMES") == "1"

function T.test(name, fn)
  local t0 = show_times and torch.utils.clock()
  local ok, err = xpcall(fn, debug.traceback)
  if show_times then io.stderr:write(string.format("%7.2f s  %s\n", torch.utils.clock() - t0, name)) end
  if ok then
    T.passed = T.passed + 1
  else
    T.failed = T.failed + 1
    io.stderr:write("FAIL ", name, ": ", tostring(err), "\n")
  end
end

-- Equal values (deep for tables).
-- The keys of t, sorted (state_dict names and the like, for exact comparisons).
function T.sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

function T.eq(a, b, msg)
  if not deep_eq(a, b) then
    error((msg or "values differ") .. ": got " .. show(a) .. ", expected " .. show(b), 2)
  end
end

function T.truthy(v, msg)
  if not v then error(msg or "expected a true value", 2) end
end

-- Numbers, nested tables or tensors close within rtol/atol (NaN equals NaN).
function T.near(a, b, tol, msg)
  tol = tol or 1e-6
  if torch and torch.is_tensor and torch.is_tensor(a) then a = a:double():tolist() end
  if torch and torch.is_tensor and torch.is_tensor(b) then b = b:double():tolist() end
  local function close(x, y, path)
    if type(x) == "table" then
      if type(y) ~= "table" or #x ~= #y then
        error((msg or "values differ") .. " at " .. path .. ": shapes differ (" .. show(x) .. " vs " .. show(y) .. ")", 4)
      end
      for i = 1, #x do close(x[i], y[i], path .. "[" .. i .. "]") end
      return
    end
    if type(x) == "boolean" or type(y) == "boolean" then
      if x ~= y then error((msg or "values differ") .. " at " .. path .. ": " .. show(x) .. " vs " .. show(y), 4) end
      return
    end
    if x ~= x and y ~= y then return end
    if x == y then return end
    if math.abs(x - y) > tol * (1 + math.abs(y)) then
      error((msg or "values differ") .. " at " .. path .. ": " .. show(x) .. " vs " .. show(y), 4)
    end
  end
  close(a, b, "")
end

-- fn must raise an error whose message contains `pattern` (plain text).
function T.error(fn, pattern, msg)
  local ok, err = pcall(fn)
  if ok then error((msg or "expected an error") .. " containing '" .. pattern .. "'", 2) end
  err = tostring(err)
  if not err:find(pattern, 1, true) then
    error((msg or "wrong error") .. ": '" .. err .. "' does not contain '" .. pattern .. "'", 2)
  end
  return err
end

-- The interpreter must still compute after an error.
function T.still_usable()
  local r = (require("torch").tensor{1, 2} + 1):tolist()
  if r[1] ~= 2 or r[2] ~= 3 then error("interpreter unusable after an error", 2) end
end

-- T.error, then a check that the interpreter still works.
function T.error_usable(fn, pattern, msg)
  local err = T.error(fn, pattern, msg)
  T.still_usable()
  return err
end

-- Runs fn with torch's default float dtype set to d, restoring it afterwards.
function T.with_default_dtype(d, fn)
  local torch = require "torch"
  local old = torch.get_default_dtype()
  torch.set_default_dtype(d)
  local ok, e = pcall(fn)
  torch.set_default_dtype(old)
  if not ok then error(e, 0) end
end

-- 0, 1, ..., n-1 (int64) in the shape given as arguments: T.arange_shaped(3, 4).
function T.arange_shaped(...)
  local shape = {...}
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return require("torch").arange(n):reshape(shape)
end

-- The tide binary running this test: arg[1] if given, else the most negative entry of arg.
function T.interpreter()
  if arg[1] then return arg[1] end
  local i = -1
  while arg[i - 1] do i = i - 1 end
  return arg[i]
end

-- s quoted for a POSIX shell command line.
function T.quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- The whole contents of a file, as a byte string.
function T.read_bytes(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- Replaces the contents of a file with the byte string s.
function T.write_bytes(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- A fresh temporary directory: its path, and a function giving the path of a name inside it.
function T.tmpdir()
  local dir = os.tmpname()
  os.remove(dir)
  assert(os.execute("mkdir -p " .. T.quote(dir)))
  return dir, function(name) return dir .. "/" .. name end
end

-- The Python with NumPy and PyTorch 1.13 for reference values (the default python3 lacks them).
T.PYTHON = (os.getenv("TIDE_PYTHON") or "") ~= "" and os.getenv("TIDE_PYTHON") or "/usr/bin/python3"

-- True when T.PYTHON can import the module `name`.
function T.have_python_module(name)
  return os.execute(T.quote(T.PYTHON) .. " -c " .. T.quote("import " .. name) .. " >/dev/null 2>&1") == true
end

-- Runs Python code with the given command-line arguments; returns its output (stdout and
-- stderr together) and whether it exited with status 0.
function T.python(code, ...)
  local script = os.tmpname()
  T.write_bytes(script, code)
  local cmd = {T.quote(T.PYTHON), T.quote(script)}
  for _, a in ipairs({...}) do cmd[#cmd + 1] = T.quote(a) end
  local p = assert(io.popen(table.concat(cmd, " ") .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  os.remove(script)
  return out, ok == true
end

-- The numbers in a program's printed output, in order (to compare a Python reference's prints).
function T.numbers(out)
  local vals = {}
  for v in out:gmatch("[-%d%.e+]+") do vals[#vals + 1] = tonumber(v) end
  return vals
end

-- The number of live registry references (luaL_ref slots in use): a released slot holds the
-- number of the next free one, so the live ones are the integer keys holding anything else.
-- #registry is a high-water mark and never shrinks.
function T.registry_refs()
  local live = 0
  for k, v in pairs(debug.getregistry()) do
    if math.type(k) == "integer" and type(v) ~= "number" then live = live + 1 end
  end
  return live
end

function T.done()
  print(string.format("%d passed, %d failed", T.passed, T.failed))
  os.exit(T.failed == 0 and 0 or 1)
end

return T
