-- PyTorch's official time-sequence prediction example (pytorch/examples,
-- time_sequence_prediction), ported line by line from train.py beside it: two LSTMCells and
-- a Linear learn sine waves with LBFGS, then predict `--future` steps beyond the test input.
-- Scaled down as train.py is (N waves of length L, --steps LBFGS steps); the waves are
-- generated as generate_sine_wave.py does (tide's np.random gives NumPy's numbers for the
-- same seed).
--
--   tide examples/time_sequence_prediction/train.lua [--steps 2] [--N 13] [--L 100] [--future 100]
--        [--init F.pt]   (train.py's --save-init: the same initial weights, the same losses)
--        [--compile 1]   (the closure's forward and backward under torch.compile: the same
--                         numbers, then the compile statistics)
local torch = torch or require("torch")
local np = np or require("numpy")
local nn, optim = torch.nn, torch.optim

local opt = {steps = 2, N = 13, L = 100, future = 100, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--steps" or a == "--N" or a == "--L" or a == "--future" or a == "--compile" then
    opt[a:sub(3)] = assert(math.tointeger(tonumber(arg[i + 1])), a .. " takes an integer"); i = i + 2
  elseif a == "--init" then opt.init = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("train.lua: unknown option " .. a) end
end

-- generate_sine_wave.py: N waves sin((t + shift) / T), t = 0..L-1, shifts uniform in [-4T, 4T).
local function sine_waves(N, L, T)
  T = T or 20
  np.random.seed(2)
  local x = np.arange(L):reshape(1, L) + np.random.randint(-4 * T, 4 * T, N):reshape(N, 1)
  return np.sin(x / 1.0 / T):astype("float64")
end

local Sequence = nn.Module:extend("Sequence")
function Sequence:init()
  self.lstm1 = nn.LSTMCell(1, 51)
  self.lstm2 = nn.LSTMCell(51, 51)
  self.linear = nn.Linear(51, 1)
end

function Sequence:forward(input, future)
  future = future or 0
  local outputs = {}
  local h_t = torch.zeros(input:size(1), 51, {dtype = "float64"})
  local c_t = torch.zeros(input:size(1), 51, {dtype = "float64"})
  local h_t2 = torch.zeros(input:size(1), 51, {dtype = "float64"})
  local c_t2 = torch.zeros(input:size(1), 51, {dtype = "float64"})
  local output
  for _, input_t in ipairs(input:split(1, 2)) do
    h_t, c_t = self.lstm1(input_t, {h_t, c_t})
    h_t2, c_t2 = self.lstm2(h_t, {h_t2, c_t2})
    output = self.linear(h_t2)
    outputs[#outputs + 1] = output
  end
  for _ = 1, future do  -- if we should predict the future
    h_t, c_t = self.lstm1(output, {h_t, c_t})
    h_t2, c_t2 = self.lstm2(h_t, {h_t2, c_t2})
    output = self.linear(h_t2)
    outputs[#outputs + 1] = output
  end
  return torch.cat(outputs, 2)
end

-- set random seed to 0
np.random.seed(0)
torch.manual_seed(0)
-- load data and make training set (a torch tensor, computing with PyTorch's semantics as
-- train.py does: torch.tensor of a NumPy array would stay a NumPy array, whose 0-d values
-- decide dtypes by value, which mse_loss's backward would read on the host)
local data = torch.from_numpy(sine_waves(opt.N, opt.L))
local input = data[{{4, -1}, {1, -2}}]
local target = data[{{4, -1}, {2, -1}}]
local test_input = data[{{1, 3}, {1, -2}}]
local test_target = data[{{1, 3}, {2, -1}}]
-- build the model
local seq = Sequence()
seq:double()
if opt.init then seq:load_state_dict(torch.load(opt.init)) end
local criterion = nn.MSELoss()
-- use LBFGS as optimizer since we can load the whole data to train
local optimizer = optim.LBFGS(seq:parameters(), {lr = 0.8})
-- The loss and its gradients at the current parameters: the closure's tensor work. With
-- --compile 1 this is the part under torch.compile, as a PyTorch user would compile it: LBFGS
-- calls it several times per step (its line search), and its own step reads numbers on the
-- host (the gradient's size, the curvature pairs, the convergence tests), so optimizer:step
-- stays eager; printing the loss reads it on the host too, so the closure prints outside the
-- compiled function (the same value train.py prints before its backward). seq:zero_grad()
-- clears the same gradients as train.py's optimizer.zero_grad(); through `optimizer` the
-- compiled function would reach (and guard) LBFGS's state, which changes between its calls.
local function loss_and_grad()
  seq:zero_grad()
  local out = seq(input)
  local loss = criterion(out, target)
  loss:backward()
  return loss
end
if opt.compile ~= 0 then loss_and_grad = torch.compile(loss_and_grad) end
-- begin to train
for step = 0, opt.steps - 1 do
  print("STEP: ", step)
  local function closure()
    local loss = loss_and_grad()
    print("loss:", loss:item())
    return loss
  end
  optimizer:step(closure)
  -- begin to predict, no need to track gradient here
  torch.no_grad(function()
    local future = opt.future
    local pred = seq(test_input, future)
    local loss = criterion(pred[{":", {1, -future - 1}}], test_target)
    print("test loss:", loss:item())
  end)
end
if opt.compile ~= 0 then
  local s = torch.compiler.stats(loss_and_grad)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
