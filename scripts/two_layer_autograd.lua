-- The two-layer network of two_layer_torch.lua with autograd: the weights require grad,
-- loss:backward() computes the gradients, and the update runs under torch.no_grad() (the
-- classic PyTorch "autograd" example, translated line by line).
--
--   tide scripts/two_layer_autograd.lua [--dtype float64|float32] [--device cpu|cuda]
--        [--steps 500] [--data file.npz] [--seed S] [--print-every 100] [--compile 0|1]
--
-- Prints "step T loss L" every --print-every steps and "final loss L". With --compile 1 each
-- training step is torch.compile'd (docs/compile.md): the same numbers, bit for bit.
local torch = require "torch"
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local common = dofile(dir .. "common.lua")
local opts = common.parse_args({...}, {dtype = "float64", device = "cpu", steps = 500, print_every = 100,
                                       data = false, seed = false, compile = 0})

-- N is batch size; D_in is input dimension; H is hidden dimension; D_out is output dimension.
local N, D_in, H, D_out = 64, 1000, 100, 10
local x, y, w1, w2 = common.two_layer_data(opts, N, D_in, H, D_out)
-- Autograd records every operation on the weights from here on.
w1:requires_grad_()
w2:requires_grad_()

local learning_rate = 1e-6
-- One training step; returns the loss before the update.
local function train_step()
  -- Forward pass: the same operations as by hand; no intermediate values need keeping.
  local y_pred = x:mm(w1):clamp{min = 0}:mm(w2)
  local l = (y_pred - y):pow(2):sum()

  -- Backward pass: w1.grad and w2.grad receive d loss / d w.
  l:backward()

  -- Update the weights outside the graph, then clear the gradients for the next step.
  torch.no_grad(function()
    w1:sub_(learning_rate * w1.grad)
    w2:sub_(learning_rate * w2.grad)
    w1.grad:zero_()
    w2.grad:zero_()
  end)
  return l:detach()
end
common.run_two_layer_steps(train_step, opts)
