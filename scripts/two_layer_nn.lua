-- The two-layer network with torch.nn and torch.optim: nn.Sequential of Linear, ReLU,
-- Linear, the summed squared error nn.MSELoss{reduction = "sum"}, and optim.SGD (the
-- classic PyTorch "nn" + "optim" examples, translated line by line).
--
--   tide scripts/two_layer_nn.lua [--dtype float64|float32] [--device cpu|cuda]
--        [--steps 500] [--lr 1e-4] [--data file.npz] [--seed S] [--print-every 100] [--compile 0|1]
--
-- With --data the layers have no biases and start from the file's w1 and w2 (so the losses
-- equal two_layer_torch.lua's on the same file; lr defaults to 1e-6 then); otherwise they
-- have biases and PyTorch's default initialisation. Prints "step T loss L" every
-- --print-every steps and "final loss L". With --compile 1 each training step is
-- torch.compile'd (docs/compile.md): the same numbers, bit for bit.
local torch = require "torch"
local nn, optim = torch.nn, torch.optim
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local common = dofile(dir .. "common.lua")
local opts = common.parse_args({...}, {dtype = "float64", device = "cpu", steps = 500, print_every = 100,
                                       lr = false, data = false, seed = false, compile = 0})

local N, D_in, H, D_out = 64, 1000, 100, 10
local x, y, w1, w2 = common.two_layer_data(opts, N, D_in, H, D_out)

local bias = not opts.data
local model = nn.Sequential(
  nn.Linear(D_in, H, {bias = bias}),
  nn.ReLU(),
  nn.Linear(H, D_out, {bias = bias})
):to{dtype = opts.dtype, device = opts.device}
if opts.data then
  -- nn.Linear keeps its weight as (out_features, in_features): the transposes of w1, w2.
  model:load_state_dict({["0.weight"] = w1:t(), ["2.weight"] = w2:t()})
end

local loss_fn = nn.MSELoss{reduction = "sum"}
local optimizer = optim.SGD(model:parameters(), {lr = opts.lr or (opts.data and 1e-6 or 1e-4)})
-- One training step; returns the loss before the update.
local function train_step()
  local y_pred = model(x)
  local l = loss_fn(y_pred, y)
  optimizer:zero_grad()
  l:backward()
  optimizer:step()
  return l:detach()
end
common.run_two_layer_steps(train_step, opts)
