-- Loads the checkpoint scripts/demo.lua saved and classifies the held-out digits with it:
-- prints the test accuracy and a few images with their predicted and true digits.
--
--   tide scripts/predict.lua [digits_mlp.safetensors] [--seed 0] [--show 3]
local torch = require "torch"
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local common = dofile(dir .. "common.lua")
local argv = {...}
local path = "digits_mlp.safetensors"
if argv[1] and not argv[1]:match("^%-%-") then path = table.remove(argv, 1) end
local opts = common.parse_args(argv, {seed = 0, show = 3})

local state = torch.load(path)
-- The hidden size is the first layer's number of outputs.
local model = common.digits_mlp(state["0.weight"]:size(1))
model:load_state_dict(state)
model:eval()

local d = common.load_digits(opts.seed)  -- the same split as the demo's
local pred = torch.no_grad(function() return model(d.x_test):argmax(2) end)
local correct = pred:eq(d.y_test):sum():item()
print(string.format("%s: %d of %d held-out digits right (%.1f%%)", path, correct, d.y_test:numel(),
                    100 * correct / d.y_test:numel()))

-- A few images drawn with characters by intensity, with the digits (class - 1).
local shades = {" ", ".", ":", "o", "@"}
for i = 1, math.min(opts.show, d.y_test:numel()) do
  local img = d.x_test[i]:view(8, 8)
  print(string.format("image %d: predicted %d, true %d", i, pred[i]:item() - 1, d.y_test[i]:item() - 1))
  for r = 1, 8 do
    local row = {}
    for c = 1, 8 do row[c] = shades[math.floor(img[{r, c}]:item() * 4 + 0.5) + 1] end
    print("  " .. table.concat(row))
  end
end
