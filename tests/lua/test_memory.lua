-- Tensor memory counts for Lua's garbage collector: long loops that never call
-- collectgarbage() stay at a bounded footprint. Each loop runs in a child process (the same
-- tide binary running tests/lua/memory_loop.lua) that reports its peak RSS (VmHWM).
--
--   tide tests/lua/test_memory.lua [path/to/tide]
--
-- Checks:
-- - 2000 iterations of two 8 MB float64 temporaries peak under 400 MB, in the interpreter's
--   own GC mode (generational, as lua.c) and in incremental mode;
-- - 1000 steps of the two-layer network's step pattern peak under 100 MB;
-- - scripts/two_layer_{torch,autograd,nn}.lua with --steps 5000 peak within 1.5x of
--   --steps 200 (the issue's criterion), and each 5000-step run takes under 30 s.
-- Under sanitizers (TIDE_SANITIZED=1) memory figures and timings are not meaningful: the
-- loops still run (and must finish correctly), the ratio and timing checks are skipped and
-- the absolute bounds are only a guard against unbounded growth (4x looser).
local here = arg[0]:match("(.*/)") or "./"
local T = dofile(here .. "harness.lua")
local root = here .. "../../"

local quote, tide = T.quote, T.interpreter()

local sanitized = os.getenv("TIDE_SANITIZED") == "1"
local slack = sanitized and 4 or 1

-- Runs memory_loop.lua with `args` (a list); returns its output, peak RSS in MB and seconds.
local function run_child(args)
  local parts = {quote(tide), quote(here .. "memory_loop.lua")}
  for _, a in ipairs(args) do parts[#parts + 1] = quote(a) end
  local cmd = table.concat(parts, " ") .. " 2>&1"
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok, how, code = p:close()
  if not ok then
    error(string.format("child failed (%s %s): %s\n%s", how, tostring(code), cmd, out), 2)
  end
  local kb = tonumber(out:match("VmHWM_KB (%-?%d+)"))
  local secs = tonumber(out:match("ELAPSED ([%d%.]+)"))
  if not kb or kb <= 0 then error("child printed no VmHWM: " .. cmd .. "\n" .. out, 2) end
  return out, kb / 1024, secs
end

local function bounded(label, args, limit_mb)
  local limit = limit_mb * slack
  -- the child stops itself a little above the limit, so a broken build cannot eat the machine
  local full = {"--limit-mb", tostring(math.floor(limit * 1.5))}
  for _, a in ipairs(args) do full[#full + 1] = a end
  local out, mb, secs = run_child(full)
  print(string.format("%s: peak %.1f MB in %.2f s", label, mb, secs))
  T.truthy(mb < limit, string.format("%s: peak RSS %.1f MB, expected under %d MB", label, mb, limit))
  return out
end

T.test("float64 temporaries loop stays bounded (interpreter's GC mode)", function()
  local out = bounded("temporaries", {"temporaries", "2000"}, 400)
  T.truthy(out:find("checksum 2001000"), out)
end)

T.test("float64 temporaries loop stays bounded (incremental GC)", function()
  local out = bounded("temporaries/incremental", {"--gc", "incremental", "temporaries", "2000"}, 400)
  T.truthy(out:find("checksum 2001000"), out)
end)

-- Dead temporaries give their buffers back before the next op allocates (the step a large
-- result owes runs at the next binding call, bindings/lua_api.cpp): the three 8 MB inputs,
-- a couple of 8 MB buffers and the interpreter, ~53 MB. Stepped at the push instead, the
-- results took fresh buffers until a full collection: 108 MB.
T.test("large temporaries of an op chain are reused at once", function()
  local out = bounded("chain", {"chain", "500"}, 70)
  T.truthy(out:find("chain done"), out)
end)

T.test("two-layer step pattern stays bounded", function()
  local out = bounded("two-layer steps", {"steps", "1000"}, 100)
  T.truthy(out:find("final loss"), out)
end)

-- By hand, with autograd (graphs and saved tensors freed by the GC), and with nn + optim.
for _, name in ipairs({"two_layer_torch", "two_layer_autograd", "two_layer_nn"}) do
T.test(name .. ": 5000 steps peak within 1.5x of 200 steps", function()
  local script = root .. "scripts/" .. name .. ".lua"
  local f = io.open(script, "r")
  T.truthy(f, "missing " .. script)
  f:close()
  local function run(steps)
    local out, mb, secs = run_child({"script", script, "--steps", tostring(steps),
                                     "--print-every", "1000000"})
    local loss = tonumber(out:match("final loss (%S+)"))
    T.truthy(loss and loss == loss, "no final loss from " .. steps .. " steps:\n" .. out)
    print(string.format("%s --steps %d: peak %.1f MB in %.2f s, final loss %.6g",
                        name, steps, mb, secs, loss))
    return mb, secs, loss
  end
  local mb200, _, loss200 = run(200)
  local mb5000, secs5000, loss5000 = run(5000)
  T.truthy(loss5000 < loss200, "training should go on reducing the loss")
  if sanitized then
    print("skipped: memory ratio under sanitizers")
    return
  end
  local ratio = mb5000 / mb200
  T.truthy(ratio <= 1.5, string.format("5000-step peak %.1f MB is %.2fx the 200-step peak %.1f MB",
                                       mb5000, ratio, mb200))
  -- A runaway guard only (speed is measured in bench/, against NumPy and PyTorch): a shared,
  -- loaded 2-core machine took 54 s where an idle one takes 10.
  T.truthy(secs5000 < 300, string.format("5000 steps took %.1f s (a runaway: expected under 300 s)", secs5000))
end)
end

T.done()
