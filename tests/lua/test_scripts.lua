-- The example scripts run as users run them: the main demo reaches 95% test accuracy on the
-- digits and saves a checkpoint that predict.lua loads to the same accuracy; linear
-- regression recovers its weights; the least-squares gradient matches the closed form;
-- a bad option is a clear error. (The two-layer scripts are checked in test_two_layer.lua.)
local here = arg[0]:match("(.*/)") or "./"
local T = dofile(here .. "harness.lua")
local root = here .. "../../"
local quote, tide = T.quote, T.interpreter()

-- Runs a script with arguments; returns its output and whether it exited with status 0.
local function run(script, args)
  local p = assert(io.popen(table.concat({quote(tide), quote(root .. "scripts/" .. script), args or ""}, " ") .. " 2>&1"))
  local out = p:read("a")
  local ok = p:close()
  return out, ok
end

local checkpoint = os.tmpname()

T.test("demo.lua trains the digits MLP to >= 95% and saves a checkpoint", function()
  local out, ok = run("demo.lua", "--checkpoint " .. quote(checkpoint))
  T.truthy(ok, out)
  local acc = tonumber(out:match("test accuracy (%S+)%%"))
  T.truthy(acc and acc >= 95, "test accuracy below 95%:\n" .. out)
  T.truthy(out:find("(0): Linear(in_features=64, out_features=128, bias=true)", 1, true), out)
  local loss10, loss60 = tonumber(out:match("epoch 10: mean loss (%S+)")), tonumber(out:match("epoch 60: mean loss (%S+)"))
  T.truthy(loss10 and loss60 and loss60 < loss10, "loss did not fall:\n" .. out)
  local pred, pok = run("predict.lua", quote(checkpoint) .. " --show 1")
  T.truthy(pok, pred)
  local pacc = tonumber(pred:match("%((%S+)%%%)"))
  T.near(pacc, acc, 0.051, "predict.lua's accuracy differs from the demo's")
  T.truthy(pred:find("image 1: predicted %d, true %d"), pred)
end)

T.test("predict.lua on a missing or corrupt checkpoint is an error", function()
  local out, ok = run("predict.lua", quote(checkpoint .. ".missing"))
  T.eq(ok, nil)
  T.truthy(out:find("torch.load", 1, true), out)
  local f = assert(io.open(checkpoint, "wb"))
  f:write("not a checkpoint")
  f:close()
  out, ok = run("predict.lua", quote(checkpoint))
  T.eq(ok, nil)
  T.truthy(out:find("torch.load", 1, true), out)
end)

T.test("linear_regression.lua fits y = X w + b", function()
  local out, ok = run("linear_regression.lua", "--epochs 1000")
  T.truthy(ok, out)
  T.truthy(tonumber(out:match("final loss (%S+)")) < 1e-3, out)
  local werr, berr = out:match("max |w %- true_w| (%S+), |b %- true_b| (%S+)")
  T.truthy(tonumber(werr) < 0.01 and tonumber(berr) < 0.01, out)
end)

T.test("least_squares_grad.lua: autograd equals -2 A^T (y - A x)", function()
  for _, d in ipairs({1, 5, 20}) do
    local out, ok = run("least_squares_grad.lua", "--d " .. d)
    T.truthy(ok, out)
    T.truthy(tonumber(out:match("max relative difference (%S+)")) <= 1e-12, out)
  end
end)

T.test("an unknown option names the accepted ones", function()
  local out, ok = run("linear_regression.lua", "--epoch 3")
  T.eq(ok, nil)
  T.truthy(out:find("unknown option --epoch (use --compile, --device, --epochs, --lr, --seed)", 1, true), out)
end)

os.remove(checkpoint)
T.done()
