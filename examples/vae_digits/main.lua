-- PyTorch's official VAE example (pytorch/examples, vae/main.py), ported line by line from
-- main.py beside it, which adapts it to the 8x8 digits of data/digits.csv.gz: a fully
-- connected variational auto-encoder (fc 400 -> fc 20 (mu) and fc 20 (logvar) ->
-- reparameterisation -> fc 400 -> fc 64 -> sigmoid) trained with Adam on the binary
-- cross-entropy of the reconstruction plus the KL divergence. The first 1500 digits train,
-- the other 297 test.
--
--   tide examples/vae_digits/main.lua [--epochs 10] [--compile 1] [--init F.pt] [--order F.npz]
--        [--noise F.npz]   (main.py's --save-init / --save-order / --save-noise, to compare)
--
-- --compile 1 trains with the step under torch.compile (PyTorch 2's torch.compile): the same
-- numbers, printed with the compile statistics at the end. (With --noise the step reads the
-- next recorded draw, Lua state that changes on every call, so it runs eagerly.)
--
-- Without --init the weights are drawn here; without --order the loader shuffles with a
-- seeded generator; without --noise the reparameterisation draws from torch.randn_like.
local torch = torch or require("torch")
local np = np or require("numpy")
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim
local data = torch.utils.data

local opts = {epochs = 10, batch_size = 128, seed = 1, log_interval = 4, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--epochs" or a == "--seed" or a == "--batch-size" or a == "--log-interval" or a == "--compile" then
    opts[a:sub(3):gsub("-", "_")] = assert(math.tointeger(tonumber(arg[i + 1])), a .. " takes an integer"); i = i + 2
  elseif a == "--init" or a == "--order" or a == "--noise" then
    opts[a:sub(3)] = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("main.lua: unknown option " .. a) end
end

-- The noise of the reparameterisation: main.py's recorded draws in order (--noise), or fresh.
local recorded, drawn = opts.noise and np.load(opts.noise), 0
local function noise_like(std)
  if not recorded then return torch.randn_like(std) end
  drawn = drawn + 1
  return assert(recorded["n" .. drawn], "main.lua: the noise file has no draw " .. drawn)
end

local VAE = nn.Module:extend("VAE")
function VAE:init()
  self.fc1 = nn.Linear(64, 400)
  self.fc21 = nn.Linear(400, 20)
  self.fc22 = nn.Linear(400, 20)
  self.fc3 = nn.Linear(20, 400)
  self.fc4 = nn.Linear(400, 64)
end
function VAE:encode(x)
  local h1 = F.relu(self.fc1(x))
  return self.fc21(h1), self.fc22(h1)
end
function VAE:reparameterize(mu, logvar)
  local std = torch.exp(0.5 * logvar)
  local eps = noise_like(std)
  return mu + eps * std
end
function VAE:decode(z)
  local h3 = F.relu(self.fc3(z))
  return torch.sigmoid(self.fc4(h3))
end
function VAE:forward(x)
  local mu, logvar = self:encode(x:view(-1, 64))
  local z = self:reparameterize(mu, logvar)
  return self:decode(z), mu, logvar
end

-- Reconstruction + KL divergence losses summed over all elements and batch.
local function loss_function(recon_x, x, mu, logvar)
  local BCE = F.binary_cross_entropy(recon_x, x:view(-1, 64), {reduction = "sum"})
  -- see Appendix B from VAE paper: Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
  local KLD = -0.5 * torch.sum(1 + logvar - mu:pow(2) - logvar:exp())
  return BCE + KLD
end

local function load_digits()
  local dir = arg[0]:match("(.*/)") or "./"
  local d = np.loadtxt(dir .. "../../data/digits.csv.gz", {delimiter = ","}):float()
  local x = d[{":", {1, 64}}] / 16
  local y = d[{":", 65}]:long() + 1
  return data.TensorDataset(x[{{1, 1500}}], y[{{1, 1500}}]), data.TensorDataset(x[{{1501, -1}}], y[{{1501, -1}}])
end

local function train(model, loader, train_step, epoch)
  model:train()
  local train_loss, batch_idx = 0, 0
  for x in loader:iter() do
    local loss = train_step(x)
    train_loss = train_loss + loss:item()
    if batch_idx % opts.log_interval == 0 then
      print(string.format("Train Epoch: %d [%d/%d] Loss: %.8f", epoch, batch_idx * x.shape[1], #loader.dataset,
                          loss:item() / x.shape[1]))
    end
    batch_idx = batch_idx + 1
  end
  print(string.format("====> Epoch: %d Average loss: %.8f", epoch, train_loss / #loader.dataset))
  return train_loss / #loader.dataset
end

local function test(model, loader)
  model:eval()
  local test_loss = 0
  torch.no_grad(function()
    for x in loader:iter() do
      local recon_batch, mu, logvar = model(x)
      test_loss = test_loss + loss_function(recon_batch, x, mu, logvar):item()
    end
  end)
  test_loss = test_loss / #loader.dataset
  print(string.format("====> Test set loss: %.8f", test_loss))
  return test_loss
end

torch.manual_seed(opts.seed)
local train_set, test_set = load_digits()
local model = VAE()
if opts.init then model:load_state_dict(torch.load(opts.init)) end
local orders = opts.order and np.load(opts.order)
local test_loader = data.DataLoader(test_set, {batch_size = opts.batch_size})
local optimizer = optim.Adam(model:parameters(), {lr = 1e-3})
local generator = torch.Generator():manual_seed(opts.seed)
-- One optimization step on a batch.
local function train_step(x)
  optimizer:zero_grad()
  local recon_batch, mu, logvar = model(x)
  local loss = loss_function(recon_batch, x, mu, logvar)
  loss:backward()
  optimizer:step()
  return loss
end
if opts.compile ~= 0 then train_step = torch.compile(train_step) end
local losses = {}
for epoch = 1, opts.epochs do
  local loader
  if orders then  -- main.py's 0-based order of this epoch
    loader = data.DataLoader(train_set, {batch_size = opts.batch_size, sampler = (orders["epoch" .. epoch] + 1):tolist()})
  else
    loader = data.DataLoader(train_set, {batch_size = opts.batch_size, shuffle = true, generator = generator})
  end
  losses[epoch] = {train = train(model, loader, train_step, epoch), test = test(model, test_loader)}
end
if opts.compile ~= 0 then
  local s = torch.compiler.stats(train_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
return losses
