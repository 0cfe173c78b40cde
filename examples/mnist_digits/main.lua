-- PyTorch's official MNIST example (pytorch/examples, mnist/main.py), ported line by line
-- from main.py beside it, which adapts it to the 8x8 digits of data/digits.csv.gz: a CNN
-- (conv 3x3 32 -> conv 3x3 64 -> max-pool 2 -> dropout -> fc 128 -> dropout -> fc 10 ->
-- log_softmax) trained with Adadelta and StepLR through a DataLoader. The first 1500 digits
-- train, the other 297 test; class targets are 1-based in tide (digit + 1).
--
--   tide examples/mnist_digits/main.lua [--epochs 3] [--no-dropout] [--compile 1]
--        [--init F.pt] [--order F.npz]   (main.py's --save-init / --save-order, to compare)
--
-- --compile 1 trains with the step under torch.compile (PyTorch 2's torch.compile): the same
-- numbers, printed with the compile statistics at the end.
--
-- Without --init the weights are drawn here; without --order the loader shuffles with a
-- seeded generator (the same order on every run).
local torch = torch or require("torch")
local np = np or require("numpy")
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim
local data = torch.utils.data

local opts = {epochs = 3, lr = 1.0, gamma = 0.7, seed = 1, dropout = true, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--no-dropout" then opts.dropout = false; i = i + 1
  elseif a == "--epochs" or a == "--lr" or a == "--gamma" or a == "--seed" or a == "--compile" then
    opts[a:sub(3)] = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
  elseif a == "--init" or a == "--order" then opts[a:sub(3)] = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("main.lua: unknown option " .. a) end
end

local Net = nn.Module:extend("Net")
function Net:init(dropout)
  self.conv1 = nn.Conv2d(1, 32, 3, 1)
  self.conv2 = nn.Conv2d(32, 64, 3, 1)
  self.dropout1 = nn.Dropout(dropout and 0.25 or 0.0)
  self.dropout2 = nn.Dropout(dropout and 0.5 or 0.0)
  self.fc1 = nn.Linear(64 * 2 * 2, 128)
  self.fc2 = nn.Linear(128, 10)
end
function Net:forward(x)
  x = F.relu(self.conv1(x))
  x = F.relu(self.conv2(x))
  x = F.max_pool2d(x, 2)
  x = self.dropout1(x)
  x = torch.flatten(x, 2)
  x = F.relu(self.fc1(x))
  x = self.dropout2(x)
  return F.log_softmax(self.fc2(x), {dim = 2})
end

local function load_digits()
  local dir = arg[0]:match("(.*/)") or "./"
  local d = np.loadtxt(dir .. "../../data/digits.csv.gz", {delimiter = ","}):float()
  local x = (d[{":", {1, 64}}] / 16):reshape(-1, 1, 8, 8)
  local y = d[{":", 65}]:long() + 1
  return data.TensorDataset(x[{{1, 1500}}], y[{{1, 1500}}]), data.TensorDataset(x[{{1501, -1}}], y[{{1501, -1}}])
end

local function train(model, loader, train_step, epoch)
  model:train()
  local batch = 0
  for x, target in loader:iter() do
    local loss = train_step(x, target)
    if batch % 5 == 0 then print(string.format("epoch %d batch %d loss %.8f", epoch, batch, loss:item())) end
    batch = batch + 1
  end
end

local function test(model, loader, epoch)
  model:eval()
  local loss, correct = 0.0, 0
  torch.no_grad(function()
    for x, target in loader:iter() do
      local out = model(x)
      loss = loss + F.nll_loss(out, target, {reduction = "sum"}):item()
      correct = correct + (out:argmax({dim = 2}):eq(target)):sum():item()
    end
  end)
  local n = #loader.dataset
  print(string.format("test epoch %d loss %.8f accuracy %.6f", epoch, loss / n, correct / n))
  return correct / n
end

torch.manual_seed(opts.seed)
local train_set, test_set = load_digits()
local model = Net(opts.dropout)
if opts.init then model:load_state_dict(torch.load(opts.init)) end
local orders = opts.order and np.load(opts.order)
local test_loader = data.DataLoader(test_set, {batch_size = 1000})
local optimizer = optim.Adadelta(model:parameters(), {lr = opts.lr})
local scheduler = optim.lr_scheduler.StepLR(optimizer, {step_size = 1, gamma = opts.gamma})
local generator = torch.Generator():manual_seed(opts.seed)
-- One optimization step on a batch.
local function train_step(x, target)
  optimizer:zero_grad()
  local loss = F.nll_loss(model(x), target)
  loss:backward()
  optimizer:step()
  return loss
end
if opts.compile ~= 0 then train_step = torch.compile(train_step) end
local accuracy
for epoch = 1, opts.epochs do
  local loader
  if orders then  -- main.py's 0-based order of this epoch
    loader = data.DataLoader(train_set, {batch_size = 64, sampler = (orders["epoch" .. epoch] + 1):tolist()})
  else
    loader = data.DataLoader(train_set, {batch_size = 64, shuffle = true, generator = generator})
  end
  train(model, loader, train_step, epoch)
  accuracy = test(model, test_loader, epoch)
  scheduler:step()
end
if opts.compile ~= 0 then
  local s = torch.compiler.stats(train_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
return accuracy
