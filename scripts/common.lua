-- What the example scripts share: "--name value" options and the seed workload's data.
-- Load it with dofile(dir .. "common.lua"), dir being the script's directory.
local torch = require "torch"
local np = require "numpy"

local common = {}
local dir_of_common = debug.getinfo(1, "S").source:match("^@(.*/)") or "./"

-- Parses "--name value" pairs (name with '-' for '_') into a copy of `defaults`; only
-- names in `defaults` are accepted (a false default marks an option without a default).
-- Values that read as numbers become numbers.
function common.parse_args(argv, defaults)
  local opts, names = {}, {}
  for k, v in pairs(defaults) do
    opts[k] = v
    names[#names + 1] = "--" .. k:gsub("_", "-")
  end
  table.sort(names)
  local i = 1
  while i <= #argv do
    local name, value = argv[i], argv[i + 1]
    local key = name:match("^%-%-(.+)$")
    key = key and key:gsub("-", "_")
    if key == nil or defaults[key] == nil then
      error("unknown option " .. tostring(name) .. " (use " .. table.concat(names, ", ") .. ")", 0)
    end
    if value == nil then error("option " .. name .. " needs a value", 0) end
    opts[key] = tonumber(value) or value
    i = i + 2
  end
  return opts
end

-- The seed two-layer workload's tensors x (N, D_in), y (N, D_out), w1 (D_in, H), w2 (H, D_out):
-- loaded from opts.data (an .npz written by np.savez) or drawn at random (opts.seed).
function common.two_layer_data(opts, N, D_in, H, D_out)
  local to = {device = opts.device, dtype = opts.dtype}
  if opts.data then
    local d = np.load(opts.data)
    return d.x:to(to), d.y:to(to), d.w1:to(to), d.w2:to(to)
  end
  if opts.seed then torch.manual_seed(opts.seed) end
  return torch.randn(N, D_in, to), torch.randn(N, D_out, to), torch.randn(D_in, H, to), torch.randn(H, D_out, to)
end

-- The handwritten digits (data/digits.csv.gz: 1797 rows of 64 pixels 0..16 and a label),
-- split 80/20 by a seeded permutation into train and test: pixels scaled to 0..1 (float32)
-- and classes 1..10 for the digits 0..9 (class targets are 1-based). Returns
-- {x_train=, y_train=, x_test=, y_test=}.
-- The two-layer scripts' loop: opts.steps calls of train_step (torch.compile'd when
-- opts.compile is not 0), each returning the loss before its update, printed as "step T loss
-- L" every opts.print_every steps, then "final loss L".
function common.run_two_layer_steps(train_step, opts)
  if opts.compile ~= 0 then train_step = torch.compile(train_step) end
  local loss
  for t = 0, opts.steps - 1 do
    loss = train_step():item()
    if t % opts.print_every == opts.print_every - 1 then
      print(string.format("step %d loss %.17g", t, loss))
    end
  end
  print(string.format("final loss %.17g", loss))
end

function common.load_digits(seed)
  local path = dir_of_common .. "../data/digits.csv.gz"
  local data = np.loadtxt(path, {delimiter = ","}):float()
  local n = data:size(1)
  local x = data[{":", {1, 64}}] / 16
  local y = data[{":", 65}]:long() + 1
  torch.manual_seed(seed)
  local perm = torch.randperm(n)
  local n_train = math.floor(n * 0.8)
  local train, test = perm[{{1, n_train}}], perm[{{n_train + 1, n}}]
  return {x_train = x:index_select(1, train), y_train = y:index_select(1, train),
          x_test = x:index_select(1, test), y_test = y:index_select(1, test)}
end

-- The demo's classifier: 64 pixels -> hidden -> 10 classes.
function common.digits_mlp(hidden)
  local nn = torch.nn
  return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10))
end

return common
