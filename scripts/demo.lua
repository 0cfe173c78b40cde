-- tide's main demo: a PyTorch-style MLP classifier for handwritten digits, in Lua.
--   the UCI digits (data/digits.csv.gz, 1797 8x8 images) read with np.loadtxt and split
--   80/20; an nn.Sequential MLP trained with cross-entropy and Adam on minibatches, with a
--   progress bar showing the loss; the test accuracy; and a checkpoint (safetensors) that
--   scripts/predict.lua loads to classify the held-out images.
--
--   tide scripts/demo.lua [--epochs 60] [--hidden 128] [--batch 64] [--lr 0.001]
--        [--checkpoint digits_mlp.safetensors] [--seed 0] [--device cpu|cuda]
local torch = require "torch"
local nn, optim = torch.nn, torch.optim
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local common = dofile(dir .. "common.lua")
local opts = common.parse_args({...}, {epochs = 60, hidden = 128, batch = 64, lr = 0.001,
                                       checkpoint = "digits_mlp.safetensors", seed = 0, device = "cpu"})
local clock = torch.utils.clock

local t0 = clock()
local d = common.load_digits(opts.seed)
for k, t in pairs(d) do d[k] = t:to(opts.device) end
local n_train = d.x_train:size(1)
print(string.format("digits: %d training and %d test images of 8x8 pixels, loaded in %.0f ms",
                    n_train, d.x_test:size(1), (clock() - t0) * 1000))

torch.manual_seed(opts.seed)
local model = common.digits_mlp(opts.hidden):to(opts.device)
print(model)
local criterion = nn.CrossEntropyLoss()
local optimizer = optim.Adam(model:parameters(), {lr = opts.lr})

-- Accuracy of the model on images x with classes y, without recording a graph.
local function accuracy(x, y)
  return torch.no_grad(function()
    return model(x):argmax(2):eq(y):float():mean():item()
  end)
end

t0 = clock()
local bar = torch.utils.progress(opts.epochs, {desc = "train"})
local epoch_loss
for epoch in bar do
  model:train()
  local perm = torch.randperm(n_train)
  local total, batches = 0, 0
  for first = 1, n_train, opts.batch do
    local idx = perm[{{first, math.min(first + opts.batch - 1, n_train)}}]
    local loss = criterion(model(d.x_train:index_select(1, idx)), d.y_train:index_select(1, idx))
    optimizer:zero_grad()
    loss:backward()
    optimizer:step()
    total, batches = total + loss:item(), batches + 1
  end
  epoch_loss = total / batches
  bar:set_postfix{loss = string.format("%.4f", epoch_loss)}
  if epoch % 10 == 0 then print(string.format("epoch %d: mean loss %.4f", epoch, epoch_loss)) end
end
model:eval()
print(string.format("trained %d epochs in %.2f s; final mean loss %.4f", opts.epochs, clock() - t0, epoch_loss))
print(string.format("train accuracy %.1f%%, test accuracy %.1f%%",
                    accuracy(d.x_train, d.y_train) * 100, accuracy(d.x_test, d.y_test) * 100))

torch.save(model:to("cpu"):state_dict(), opts.checkpoint)
print("saved the model to " .. opts.checkpoint .. "; classify with: build/tide scripts/predict.lua " .. opts.checkpoint)
