-- The two-layer network of scripts/two_layer_*.lua against the NumPy original
-- (tests/reference/two_layer_numpy.py), all on the same data: NumPy draws x, y, w1, w2 and
-- saves them to an .npz, and every run trains from that file.
--
--   tide tests/lua/test_two_layer.lua [path/to/tide]
--
-- float64: every step's loss agrees within rtol 1e-6. float32: the losses agree within
-- rtol 1e-3 while the loss is above float32's noise floor (the float64 loss > 1, the first
-- ~250 steps), and training still converges. Needs /usr/bin/python3 with NumPy (skipped
-- with status 77 otherwise). The interpreter is the one running this file (or arg[1]).
local here = arg[0]:match("(.*/)") or "./"
local T = dofile(here .. "harness.lua")
local root = here .. "../../"

local quote, tide = T.quote, T.interpreter()

local python = T.PYTHON
if not T.have_python_module("numpy") then
  print("skipped: " .. python .. " with numpy is not available")
  os.exit(77)
end

-- Runs a command; returns its output, or raises an error with the output.
local function run(cmd)
  local p = assert(io.popen(cmd .. " 2>&1"))
  local out = p:read("a")
  local ok, how, code = p:close()
  if not ok then
    error(string.format("command failed (%s %s): %s\n%s", how, tostring(code), cmd, out), 2)
  end
  return out
end

local tmp = os.tmpname()  -- a file we own; the other files are named after it
local data = tmp .. ".npz"
local ref_file = {float64 = tmp .. "_64.txt", float32 = tmp .. "_32.txt"}
local function cleanup()
  for _, f in ipairs({tmp, data, ref_file.float64, ref_file.float32}) do os.remove(f) end
end

local function read_reference(path)
  local losses = {}
  for line in io.lines(path) do
    local t, loss = line:match("^(%d+) (%S+)$")
    losses[tonumber(t)] = tonumber(loss)
  end
  return losses
end

-- Runs one of the scripts on the saved data; returns {[t] = loss} (t from 0) and the
-- final loss.
local function run_script(name, dtype, extra)
  local out = run(table.concat({quote(tide), quote(root .. "scripts/" .. name), "--data",
                                quote(data), "--dtype", dtype, "--print-every", "1",
                                extra or ""}, " "))
  local losses, final = {}, nil
  for line in out:gmatch("[^\n]+") do
    local t, loss = line:match("^step (%d+) loss (%S+)$")
    if t then losses[tonumber(t)] = tonumber(loss) end
    local f = line:match("^final loss (%S+)$")
    if f then final = tonumber(f) end
  end
  if final == nil then error("no final loss in the output of " .. name .. ":\n" .. out, 2) end
  return losses, final
end

local function rel(a, b) return math.abs(a - b) / math.abs(b) end

local ref = {}
T.test("reference runs", function()
  run(table.concat({quote(python), quote(root .. "tests/reference/two_layer_numpy.py"),
                    "--data", quote(data), "--losses", quote(ref_file.float64)}, " "))
  run(table.concat({quote(python), quote(root .. "tests/reference/two_layer_numpy.py"),
                    "--data", quote(data), "--losses", quote(ref_file.float32),
                    "--dtype", "float32", "--reuse"}, " "))
  ref.float64 = read_reference(ref_file.float64)
  ref.float32 = read_reference(ref_file.float32)
  T.eq(#ref.float64, 499)
  T.truthy(ref.float64[0] > 1e6 and ref.float64[499] < 1e-2, "reference did not train")
end)

-- float64: all 500 losses within rtol 1e-6.
local function check_float64(losses, final)
  for t = 0, 499 do
    local a, b = losses[t], ref.float64[t]
    if a == nil then error("no loss printed for step " .. t) end
    if not (rel(a, b) <= 1e-6) then
      error(string.format("step %d: loss %.17g, NumPy %.17g (rel %.3g)", t, a, b, rel(a, b)))
    end
  end
  T.truthy(rel(final, ref.float64[499]) <= 1e-6, "final loss differs")
end

-- float32: within rtol 1e-3 of NumPy's float32 run while the loss is well above the noise
-- floor, and converged at the end like NumPy's (whose float32 loss ends near 2e-4).
local function check_float32(losses, final)
  local compared = 0
  for t = 0, 499 do
    local a, b = losses[t], ref.float32[t]
    if a == nil then error("no loss printed for step " .. t) end
    if ref.float64[t] > 1 then
      compared = compared + 1
      if not (rel(a, b) <= 1e-3) then
        error(string.format("step %d: loss %.9g, NumPy float32 %.9g (rel %.3g)", t, a, b, rel(a, b)))
      end
    end
  end
  T.truthy(compared >= 200, "too few steps compared")
  T.truthy(final < 1e-2, string.format("float32 training did not converge (final loss %g)", final))
end

-- By hand (NumPy and torch style), with autograd, and with nn + optim: the same losses.
local SCRIPTS = {"two_layer_numpy.lua", "two_layer_torch.lua", "two_layer_autograd.lua", "two_layer_nn.lua"}
for _, script in ipairs(SCRIPTS) do
  T.test(script .. " float64 matches NumPy", function()
    check_float64(run_script(script, "float64"))
  end)
  T.test(script .. " float32 matches NumPy", function()
    check_float32(run_script(script, "float32"))
  end)
end

if torch and torch.cuda and torch.cuda.is_available() then
  T.test("two_layer_torch.lua on cuda, float64", function()
    check_float64(run_script("two_layer_torch.lua", "float64", "--device cuda"))
  end)
  T.test("two_layer_torch.lua on cuda, float32", function()
    check_float32(run_script("two_layer_torch.lua", "float32", "--device cuda"))
  end)
end

-- Without --data the scripts draw their own data; a seeded short run trains.
for _, script in ipairs(SCRIPTS) do
  T.test(script .. " on random data", function()
    local out = run(table.concat({quote(tide), quote(root .. "scripts/" .. script),
                                  "--seed", "1", "--steps", "200"}, " "))
    local l99 = tonumber(out:match("step 99 loss (%S+)"))
    local l199 = tonumber(out:match("step 199 loss (%S+)"))
    local final = tonumber(out:match("final loss (%S+)"))
    T.truthy(l99 and l199 and final, "missing loss lines in:\n" .. out)
    T.truthy(l199 < l99, "loss did not decrease: " .. out)
    T.eq(final, l199)
  end)
end

cleanup()
T.done()
