-- PyTorch's official DCGAN example (pytorch/examples, dcgan/main.py), ported line by line
-- from main.py beside it, which adapts it to the 8x8 digits of data/digits.csv.gz scaled to
-- [-1, 1]: a ConvTranspose2d generator (noise 16x1x1 -> 2x2 -> 4x4 -> 8x8, tanh) against a
-- Conv2d discriminator (8x8 -> 4x4 -> 2x2 -> 1x1, sigmoid), BCELoss, Adam with betas
-- (0.5, 0.999); each step trains D on a real and a fake batch, then G. BatchNorm2d where the
-- original has it (after every generator layer but the last, after every discriminator layer
-- but the first and the last), in training mode throughout (batch statistics). At the end it
-- prints the running statistics of the discriminator's BatchNorm2d, as main.py does.
--
--   tide examples/dcgan_digits/main.lua [--epochs 2] [--compile 1] [--init F.pt] [--noise F.npz]
--        (main.py's --save-init / --save-noise, to compare)
--
-- --compile 1 trains with the step under torch.compile (PyTorch 2's torch.compile): the same
-- numbers, printed with the compile statistics at the end.
--
-- Without --init the weights are drawn here (the example's weights_init below);
-- without --noise the order and the noise come from the seeded torch generator.
local torch = torch or require("torch")
local np = np or require("numpy")
local nn, optim = torch.nn, torch.optim
local data = torch.utils.data

local opts = {epochs = 2, lr = 0.0002, beta1 = 0.5, seed = 1, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--epochs" or a == "--lr" or a == "--beta1" or a == "--seed" or a == "--compile" then
    opts[a:sub(3)] = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
  elseif a == "--init" or a == "--noise" then opts[a:sub(3)] = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("main.lua: unknown option " .. a) end
end
local nz, ngf, ndf = 16, 16, 16

-- The example's initialisation: N(0, 0.02) convolution weights, N(1, 0.02) BatchNorm weights
-- and zero BatchNorm biases.
local function weights_init(m)
  if m:isinstance(nn.Conv2d) or m:isinstance(nn.ConvTranspose2d) then
    nn.init.normal_(m.weight, 0.0, 0.02)
  elseif m:isinstance(nn.BatchNorm2d) then
    nn.init.normal_(m.weight, 1.0, 0.02)
    nn.init.zeros_(m.bias)
  end
end

local Generator = nn.Module:extend("Generator")
function Generator:init()
  self.main = nn.Sequential(
    nn.ConvTranspose2d(nz, ngf * 2, 2, 1, 0, {bias = false}),  -- 2x2
    nn.BatchNorm2d(ngf * 2),
    nn.ReLU(),
    nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, {bias = false}),  -- 4x4
    nn.BatchNorm2d(ngf),
    nn.ReLU(),
    nn.ConvTranspose2d(ngf, 1, 4, 2, 1, {bias = false}),  -- 8x8
    nn.Tanh())
end
function Generator:forward(x) return self.main(x) end

local Discriminator = nn.Module:extend("Discriminator")
function Discriminator:init()
  self.main = nn.Sequential(
    nn.Conv2d(1, ndf, 4, 2, 1, {bias = false}),  -- 4x4
    nn.LeakyReLU(0.2),
    nn.Conv2d(ndf, ndf * 2, 4, 2, 1, {bias = false}),  -- 2x2
    nn.BatchNorm2d(ndf * 2),
    nn.LeakyReLU(0.2),
    nn.Conv2d(ndf * 2, 1, 2, 1, 0, {bias = false}),  -- 1x1
    nn.Sigmoid())
end
function Discriminator:forward(x) return self.main(x):reshape(-1) end

local function load_digits()
  local dir = arg[0]:match("(.*/)") or "./"
  local d = np.loadtxt(dir .. "../../data/digits.csv.gz", {delimiter = ","}):float()
  return data.TensorDataset((d[{":", {1, 64}}] / 16 * 2 - 1):reshape(-1, 1, 8, 8))
end

torch.manual_seed(opts.seed)
local dataset = load_digits()
local netG, netD = Generator(), Discriminator()
netG:apply(weights_init)
netD:apply(weights_init)
if opts.init then
  local init = torch.load(opts.init)
  netG:load_state_dict(init.netG)
  netD:load_state_dict(init.netD)
end
local n = #dataset
local saved = opts.noise and np.load(opts.noise)
local orders, noises = {}, {}
for epoch = 1, opts.epochs do
  if saved then  -- main.py's 0-based order and noise of this epoch
    orders[epoch] = (saved["order" .. epoch] + 1):tolist()
    noises[epoch] = saved["noise" .. epoch]:float()
  else
    orders[epoch] = torch.randperm(n):tolist()  -- 1-based
    noises[epoch] = torch.randn(n, nz, 1, 1)
  end
end
local criterion = nn.BCELoss()
local optimizerD = optim.Adam(netD:parameters(), {lr = opts.lr, betas = {opts.beta1, 0.999}})
local optimizerG = optim.Adam(netG:parameters(), {lr = opts.lr, betas = {opts.beta1, 0.999}})
local real_label, fake_label = 1.0, 0.0
-- One training step on a batch of real images and the generator's noise for it: the losses
-- and D's mean outputs, as tensors.
local function train_step(real, noise)
  -- (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
  netD:zero_grad()
  local batch_size = real:size(1)
  local label = torch.full({batch_size}, real_label)
  local output = netD(real)
  local errD_real = criterion(output, label)
  errD_real:backward()
  local D_x = output:detach():mean()
  local fake = netG(noise)
  label:fill_(fake_label)
  output = netD(fake:detach())
  local errD_fake = criterion(output, label)
  errD_fake:backward()
  local D_G_z1 = output:detach():mean()
  local errD = errD_real:detach() + errD_fake:detach()
  optimizerD:step()
  -- (2) Update G: maximize log(D(G(z)))
  netG:zero_grad()
  label:fill_(real_label)
  output = netD(fake)
  local errG = criterion(output, label)
  errG:backward()
  local D_G_z2 = output:detach():mean()
  optimizerG:step()
  return errD, errG, D_x, D_G_z1, D_G_z2
end
if opts.compile ~= 0 then train_step = torch.compile(train_step) end
local errD, errG
for epoch = 1, opts.epochs do
  local loader = data.DataLoader(dataset, {batch_size = 64, sampler = orders[epoch]})
  local batch = 0
  for real in loader:iter() do
    local noise = noises[epoch][{{batch * 64 + 1, batch * 64 + real:size(1)}}]
    local D_x, D_G_z1, D_G_z2
    errD, errG, D_x, D_G_z1, D_G_z2 = train_step(real, noise)
    print(string.format("[%d/%d][%d/%d] Loss_D %.8f Loss_G %.8f D(x) %.8f D(G(z)) %.8f / %.8f", epoch - 1,
                        opts.epochs, batch, #loader, errD:item(), errG:item(), D_x:item(), D_G_z1:item(),
                        D_G_z2:item()))
    batch = batch + 1
  end
end
-- The running statistics of the discriminator's BatchNorm2d (PyTorch's main.3) after all its batches
local bn = netD.main[4]
local function join(t)
  local parts = {}
  for k, v in ipairs(t:tolist()) do parts[k] = string.format("%.8e", v) end
  return table.concat(parts, " ")
end
print(string.format("netD.main.3 num_batches_tracked %d", bn.num_batches_tracked:item()))
print("netD.main.3 running_mean " .. join(bn.running_mean))
print("netD.main.3 running_var " .. join(bn.running_var))
if opts.compile ~= 0 then
  local s = torch.compiler.stats(train_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
return errD:item(), errG:item()
