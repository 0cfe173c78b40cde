-- torch.compile over the example scripts (issue 18: "tests check that for every example script
-- compiled"): each script below runs eagerly and with --compile 1, with small sizes. The
-- compiled run must print exactly the eager run's lines (timings masked), then one line
-- `compiled: R recordings, P replays[, then eager: reason]` from torch.compiler.stats, whose
-- counts are checked exactly: the steps replayed where the engine can capture them, or the
-- expected reason (and the script line) where it cannot, said once on stderr. Where a script
-- can save its weights (--save), the two runs' weights must be equal bit for bit.
-- MNIST, VAE and DCGAN are in test_compile.lua.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"

local root = (arg[0]:match("(.*/)") or "./") .. "../../"
local TMP, tmp = T.tmpdir()

-- Runs the repository's script at `path` (from the root) with `args`: its stdout and stderr.
-- It must exit with status 0.
local function run(path, args)
  local err = tmp("stderr.txt")
  local cmd = table.concat({T.quote(T.interpreter()), T.quote(root .. path), args, "2>" .. T.quote(err)}, " ")
  local p = assert(io.popen(cmd))
  local out = p:read("a")
  local ok = p:close()
  local errs = T.read_bytes(err)
  T.truthy(ok, cmd .. " failed:\n" .. out .. errs)
  return out, errs
end

-- The timings a script prints (ms/batch, an epoch's time), which differ from run to run.
local function mask_timings(s)
  return (s:gsub("ms/batch +[%d.]+", "ms/batch"):gsub("time: +[%d.]+s", "time:"))
end

-- Runs `path` with `args` eagerly and with --compile 1 (and, where save is given, --save
-- with a file for each run). The compiled run prints the eager lines, then its statistics,
-- and the eager run prints nothing on stderr. Returns the statistics {recordings, replays,
-- reason (nil when the function never ran eagerly), stderr of the compiled run} and the two
-- saved files.
local function eager_and_compiled(path, args, save)
  local eager_file, compiled_file = save and tmp("eager.pt"), save and tmp("compiled.pt")
  local eager, eager_err = run(path, args .. (save and " --save " .. T.quote(eager_file) or ""))
  local compiled, compiled_err = run(path, args .. " --compile 1" .. (save and " --save " .. T.quote(compiled_file) or ""))
  local what = path .. " " .. args
  local body, stats = compiled:match("^(.*\n)(compiled: [^\n]*)\n$")
  T.truthy(body, what .. " --compile 1 did not end with its statistics:\n" .. compiled)
  T.eq(mask_timings(body), mask_timings(eager), what .. ": the compiled run's lines")
  T.truthy(#eager > 100, what .. " printed too little: " .. eager)
  T.eq(eager_err, "", what .. ": the eager run's stderr")
  local rec, rep, rest = stats:match("^compiled: (%d+) recordings, (%d+) replays(.*)$")
  T.truthy(rec, stats)
  local reason = rest:match("^, then eager: (.+)$")
  T.truthy(rest == "" or reason, stats)
  return {recordings = tonumber(rec), replays = tonumber(rep), reason = reason, stderr = compiled_err,
          what = what}, eager_file, compiled_file
end

-- The compiled function replayed: exactly `recordings` recordings and `replays` replays, and
-- it never ran eagerly (nothing on stderr).
local function replayed(s, recordings, replays)
  T.eq({s.recordings, s.replays, s.reason}, {recordings, replays, nil}, s.what .. ": recordings, replays, reason")
  T.eq(s.stderr, "", s.what .. ": the compiled run's stderr")
end

-- The line of the script at `path` that holds `text` (once).
local function line_of(path, text)
  local found
  local n = 0
  for line in io.lines(root .. path) do
    n = n + 1
    if line:find(text, 1, true) then
      T.truthy(not found, text .. " is on two lines of " .. path)
      found = n
    end
  end
  T.truthy(found, text .. " is not in " .. path)
  return found
end

-- The compiled function recorded once, found it could not be replayed and ran eagerly from
-- then on: the reason is `reason` at the line of `path` holding `text`, and stderr says it
-- once (the chunk name may be shortened with "..." by Lua).
local function eager_because(s, path, reason, text)
  T.eq({s.recordings, s.replays}, {1, 0}, s.what .. ": recordings and replays")
  T.truthy(s.reason, s.what .. ": expected a reason to run eagerly")
  local where = s.reason:sub(#reason + 1)
  T.eq(s.reason:sub(1, #reason), reason, s.what .. ": the reason")
  local file, line = where:match("^ at (.-):(%d+)$")
  T.truthy(file, s.what .. ": no script line in the reason: " .. s.reason)
  file = file:gsub("^%.%.%.", "")
  T.eq((root .. path):sub(-#file), file, s.what .. ": the reason's script")
  T.eq(tonumber(line), line_of(path, text), s.what .. ": the reason's line")
  local _, count = s.stderr:gsub("runs eagerly: ", "")
  T.eq(count, 1, s.what .. ": one message on stderr: " .. s.stderr)
  T.truthy(s.stderr:find("runs eagerly: " .. s.reason .. "\n", 1, true), s.what .. ": " .. s.stderr)
end

-- Every tensor of the two saved state dicts is equal, bit for bit.
local function same_weights(what, a_file, b_file)
  local a, b = torch.load(a_file), torch.load(b_file)
  T.eq(T.sorted_keys(b), T.sorted_keys(a), what .. ": the saved names")
  T.truthy(#T.sorted_keys(a) >= 2, what .. ": too few saved tensors")
  for k, v in pairs(a) do T.truthy(torch.equal(v, b[k]), what .. ": " .. k .. " differs from eager mode's") end
end

T.test("word_language_model --compile 1: every model's steps replay, the same lines and weights as eagerly", function()
  -- 4 epochs of 19 batches (the last shorter) at lr 20 with dropout 0.2; each run anneals lr
  -- to 5 once. The recurrent models record 5 times in their 76 steps: the first call (which
  -- creates the gradients), the second (that Lua state changed), the shorter last batch, and
  -- after the anneal (lr is a guarded upvalue) the full and the short batch again. The
  -- Transformer remakes its cached causal mask (self.src_mask) whenever the sequence length
  -- changes: at each epoch's first batch (after evaluate's short last batch), again on the
  -- call after it, and at the short batch: 3 recordings an epoch.
  local small = "--emsize 32 --nhid 32 --batch_size 4 --bptt 10 --epochs 4 --log-interval 5"
  for _, case in ipairs({
    {"LSTM", 5, 71}, {"GRU", 5, 71}, {"RNN_TANH", 5, 71}, {"RNN_RELU", 5, 71}, {"LSTM --tied", 5, 71},
    {"Transformer", 12, 64},
  }) do
    local path = "examples/word_language_model/main.lua"
    local s, eager_file, compiled_file = eager_and_compiled(path, "--model " .. case[1] .. " " .. small, true)
    replayed(s, case[2], case[3])
    same_weights(s.what, eager_file, compiled_file)
  end
end)

T.test("time_sequence_prediction --compile 1: LBFGS's closure (forward and backward) replays, the same losses", function()
  -- 2 LBFGS steps of 20 closure calls each: the first call records, the second records
  -- again (the first created the gradients), the other 38 replay. The printed losses have 14
  -- significant digits of float64.
  local s = eager_and_compiled("examples/time_sequence_prediction/train.lua", "--steps 2 --L 50 --future 20")
  replayed(s, 2, 38)
end)

T.test("reinforce and actor_critic --compile 1: each episode's optimizer step replays, the same episodes and weights", function()
  -- 30 episodes, one Adam step each: the first records, the second records again (the first
  -- created Adam's state), 28 replay.
  for _, case in ipairs({
    {"examples/reinforcement_learning/reinforce.lua", "--episodes 30 --log-interval 1"},
    {"examples/reinforcement_learning/reinforce.lua", "--episodes 30 --log-interval 1 --no-dropout"},
    {"examples/reinforcement_learning/actor_critic.lua", "--episodes 30 --log-interval 1"},
  }) do
    local s, eager_file, compiled_file = eager_and_compiled(case[1], case[2], true)
    replayed(s, 2, 28)
    same_weights(s.what, eager_file, compiled_file)
  end
end)

T.test("pytorch_with_examples --compile 1: the tensor steps replay; NumPy, custom-Function and random steps run eagerly, saying why", function()
  local dir = "examples/pytorch_with_examples/"
  -- 2000 steps each; the losses every 100 steps and the final weights print all their digits.
  -- With hand-written gradients and gradients set to nil after each step, the state after a
  -- step is as before it: one recording. With zero_grad (nn, optim, module) the first step
  -- creates the gradients, so the second records again.
  for _, case in ipairs({
    {"polynomial_tensor.lua", 1, 1999},
    {"polynomial_autograd.lua", 1, 1999},
    {"polynomial_nn.lua", 2, 1998},
    {"polynomial_optim.lua", 2, 1998},
    {"polynomial_module.lua", 2, 1998},
  }) do
    replayed(eager_and_compiled(dir .. case[1], ""), case[2], case[3])
  end
  -- NumPy's weights are Lua numbers and its gradients are read with item().
  eager_because(eager_and_compiled(dir .. "polynomial_numpy.lua", ""), dir .. "polynomial_numpy.lua",
                "item: reads or writes tensor data on the host (a value read into Lua, printing, or an op " ..
                "without a device-table path)", "local loss = np.square(y_pred - y):sum():item()")
  -- The custom Function's backward is Lua code that the engine calls.
  eager_because(eager_and_compiled(dir .. "polynomial_custom_function.lua", ""),
                dir .. "polynomial_custom_function.lua",
                "LegendrePolynomial3Backward: runs a Lua function from the engine (a hook or an " ..
                "autograd.Function's backward), which a replay would not run", "  loss:backward()")
  -- The forward's random order comes from math.random, a C function with effects; the
  -- printed numbers (4000 steps) are the eager ones, with the same random choices.
  eager_because(eager_and_compiled(dir .. "dynamic_net.lua", "--steps 4000"), dir .. "dynamic_net.lua",
                "calls random, whose effects a replay would not repeat", "return math.random(lo, hi)")
end)

T.test("the example scripts given an unknown option name it, and list the options where they did", function()
  local cases = {
    {"examples/pytorch_with_examples/polynomial_tensor.lua", "polynomial_tensor.lua: unknown option --bogus (options: --compile N)"},
    {"examples/pytorch_with_examples/dynamic_net.lua", "dynamic_net.lua: unknown option --bogus (options: --steps N, --compile N)"},
    {"examples/time_sequence_prediction/train.lua", "train.lua: unknown option --bogus"},
    {"examples/reinforcement_learning/reinforce.lua", "reinforce.lua: unknown option --bogus"},
    {"examples/reinforcement_learning/actor_critic.lua", "actor_critic.lua: unknown option --bogus"},
    {"examples/word_language_model/main.lua", "main.lua: unknown option --bogus"},
  }
  for _, name in ipairs({"numpy", "autograd", "custom_function", "nn", "optim", "module"}) do
    cases[#cases + 1] = {"examples/pytorch_with_examples/polynomial_" .. name .. ".lua",
                         "polynomial_" .. name .. ".lua: unknown option --bogus (options: --compile N)"}
  end
  for _, case in ipairs(cases) do
    local cmd = table.concat({T.quote(T.interpreter()), T.quote(root .. case[1]), "--bogus 1 2>&1"}, " ")
    local p = assert(io.popen(cmd))
    local out = p:read("a")
    T.truthy(not p:close(), cmd .. " succeeded")
    T.truthy(out:find(case[2], 1, true), cmd .. ": " .. out)
  end
end)

os.execute("rm -rf " .. T.quote(TMP))
T.done()
