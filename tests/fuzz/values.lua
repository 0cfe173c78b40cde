-- Hostile values for the API fuzzer (api_fuzz.lua) and its reproducers: every generated call
-- is Lua source that builds its arguments with plain torch code and these helpers, so a
-- logged call runs again on its own:
--   local H = dofile("tests/fuzz/values.lua")
--   print(pcall(torch.sum, H.t("float32", {2, 3}, 1):t(), {dim = 0/0}))
local H = {}

-- Deterministic values: a 64-bit LCG (Lua integers wrap), independent of torch's generator.
local function lcg(state)
  state = state * 6364136223846793005 + 1442695040888963407
  return state, (state >> 33) / 2147483648.0  -- and a float in [0, 1)
end

local INT_RANGE = {
  int8 = {-128, 127}, uint8 = {0, 255}, int16 = {-32768, 32767},
  int32 = {-2147483648, 2147483647}, int64 = {math.mininteger, math.maxinteger},
  uint16 = {0, 65535}, uint32 = {0, 4294967295}, uint64 = {0, math.maxinteger},
}
local FLOAT_SPECIALS = {0 / 0, 1 / 0, -1 / 0, 0.0, -0.0, 1e30, -1e30, 5e-324, 65504, 3.4e38}

-- H.t(dtype, shape, kind): a new contiguous tensor of that dtype and shape whose values follow
-- `kind` (a small integer; the same kind always gives the same values):
--   kind % 6 == 0  consecutive integers centred on 0       3  zeros
--              1  pseudo-random in [-2, 2) (seeded by kind)  4  ones
--              2  special values (NaN, +-inf, -0, extremes)   5  integers in [-3, n + 2]
-- (index-like, some out of range). Integer dtypes take their values clamped to their range,
-- NaN and infinities replaced by the extremes; bool is value ~= 0.
function H.t(dtype, shape, kind)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local k = kind % 6
  local state = kind
  local vals = {}
  for i = 1, n do
    local v
    if k == 0 then v = i - 1 - n // 2
    elseif k == 1 then state, v = lcg(state); v = v * 4 - 2
    elseif k == 2 then v = FLOAT_SPECIALS[(i + kind) % #FLOAT_SPECIALS + 1]
    elseif k == 3 then v = 0
    elseif k == 4 then v = 1
    else state, v = lcg(state); v = math.floor(v * (n + 6)) - 3 end
    local range = INT_RANGE[dtype]
    if range then
      if v ~= v then v = 0 end
      v = math.max(range[1], math.min(range[2], v))
      v = math.tointeger(v) or (v >= 2^63 and math.maxinteger) or (v <= -2^63 and math.mininteger)
          or math.tointeger(v >= 0 and math.floor(v) or math.ceil(v))
    elseif dtype == "bool" then
      v = v ~= 0
    end
    vals[i] = v
  end
  local flat = torch.tensor(vals, {dtype = dtype})
  if #shape == 1 then return flat end
  if n == 0 and #shape ~= 1 then return torch.zeros(shape, {dtype = dtype}) end
  if #shape == 0 then return flat:reshape({}) end
  return flat:reshape(shape)
end

-- A view whose shape claims far more elements than its one-element storage holds: 2^59
-- elements, the most whose byte size stays below 2^63 for every dtype of 8 bytes or less (a
-- larger view is refused by expand itself; complex128's 16 bytes take half as many). kind:
-- 1 {2^29, 2^30}, 2 {2^59}, 3 {2^40, 0}, 4 {2^19, 2^20, 2^20}, 5 {1, 2^59}.
local HUGE = {{1 << 29, 1 << 30}, {1 << 59}, {1 << 40, 0}, {1 << 19, 1 << 20, 1 << 20}, {1, 1 << 59}}
function H.huge(dtype, kind)
  local shape = {table.unpack(HUGE[(kind - 1) % #HUGE + 1])}
  if dtype == "complex128" then shape[#shape] = shape[#shape] > 1 and shape[#shape] // 2 or shape[#shape] end
  local one = torch.ones(#shape == 1 and {1} or (#shape == 2 and {1, 1} or {1, 1, 1}), {dtype = dtype})
  return one:expand(shape)
end

-- A tensor released with free(): every use must be an error.
function H.freed(dtype)
  local x = torch.ones(2, {dtype = dtype})
  x:free()
  return x
end

-- A table nested `depth` levels deep ({{{...{1}...}}}), built without recursion.
function H.deep(depth)
  local t = {1}
  for _ = 1, depth do t = {t} end
  return t
end

-- A table that contains itself.
function H.selfref()
  local t = {1, 2}
  t[3] = t
  t.self = t
  return t
end

-- Tables whose metamethods misbehave: reading a field raises, the length raises or is
-- absurd, or iteration is redirected.
function H.meta(kind)
  local k = (kind - 1) % 5 + 1
  if k == 1 then return setmetatable({1, 2, dim = 1}, {__index = function() error("fuzz: __index raised") end}) end
  if k == 2 then return setmetatable({1, 2}, {__len = function() error("fuzz: __len raised") end}) end
  if k == 3 then return setmetatable({1, 2}, {__len = function() return math.maxinteger end}) end
  if k == 4 then return setmetatable({}, {__index = function(_, i) return i end, __len = function() return 3 end}) end
  return setmetatable({dtype = "float32"}, {__pairs = function() error("fuzz: __pairs raised") end,
                                           __newindex = function() error("fuzz: __newindex raised") end})
end

-- A coroutine that has finished.
function H.dead_co()
  local co = coroutine.create(function() end)
  coroutine.resume(co)
  return co
end

-- Calls f(...) inside a fresh coroutine (bindings then run on another lua_State than the
-- main one) and returns what it returned, or raises what it raised.
function H.in_coroutine(f, ...)
  local n, args = select("#", ...), {...}
  local co = coroutine.create(function() return f(table.unpack(args, 1, n)) end)
  local res = table.pack(coroutine.resume(co))
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- A value for messages: nested tables as {a, b}, numbers as %.17g.
function H.show(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = H.show(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if math.type(v) == "float" then return string.format("%.17g", v) end
  return tostring(v)
end

-- A 100 kB string, and a file handle (a full userdata that is not a tensor).
H.long = string.rep("ab", 50000)
H.file = io.tmpfile()

-- Constructors of one valid instance of each class, for fuzzing the methods of a real
-- object (api_fuzz.lua reports classes missing here).
H.instances = {
  ["np.random.Generator"] = "np.random.default_rng(0)",
  ["nn.AdaptiveAvgPool2d"] = "nn.AdaptiveAvgPool2d(2)",
  ["nn.AdaptiveMaxPool2d"] = "nn.AdaptiveMaxPool2d(2)",
  ["nn.AvgPool2d"] = "nn.AvgPool2d(2)",
  ["nn.BCELoss"] = "nn.BCELoss()",
  ["nn.BatchNorm1d"] = "nn.BatchNorm1d(3)",
  ["nn.BatchNorm2d"] = "nn.BatchNorm2d(3)",
  ["nn.BCEWithLogitsLoss"] = "nn.BCEWithLogitsLoss()",
  ["nn.CELU"] = "nn.CELU()",
  ["nn.Conv1d"] = "nn.Conv1d(1, 2, 3)",
  ["nn.Conv2d"] = "nn.Conv2d(1, 2, 3)",
  ["nn.ConvTranspose1d"] = "nn.ConvTranspose1d(1, 2, 3)",
  ["nn.ConvTranspose2d"] = "nn.ConvTranspose2d(1, 2, 3)",
  ["nn.CosineEmbeddingLoss"] = "nn.CosineEmbeddingLoss()",
  ["nn.CrossEntropyLoss"] = "nn.CrossEntropyLoss()",
  ["nn.Dropout"] = "nn.Dropout(0.5)",
  ["nn.Dropout1d"] = "nn.Dropout1d(0.5)",
  ["nn.Dropout2d"] = "nn.Dropout2d(0.5)",
  ["nn.ELU"] = "nn.ELU()",
  ["nn.Embedding"] = "nn.Embedding(5, 3)",
  ["nn.Flatten"] = "nn.Flatten()",
  ["nn.GELU"] = "nn.GELU()",
  ["nn.GLU"] = "nn.GLU()",
  ["nn.GRU"] = "nn.GRU(3, 2)",
  ["nn.GRUCell"] = "nn.GRUCell(3, 2)",
  ["nn.GaussianNLLLoss"] = "nn.GaussianNLLLoss()",
  ["nn.GroupNorm"] = "nn.GroupNorm(1, 3)",
  ["nn.Hardsigmoid"] = "nn.Hardsigmoid()",
  ["nn.Hardswish"] = "nn.Hardswish()",
  ["nn.Hardtanh"] = "nn.Hardtanh()",
  ["nn.HingeEmbeddingLoss"] = "nn.HingeEmbeddingLoss()",
  ["nn.HuberLoss"] = "nn.HuberLoss()",
  ["nn.Identity"] = "nn.Identity()",
  ["nn.InstanceNorm1d"] = "nn.InstanceNorm1d(3)",
  ["nn.InstanceNorm2d"] = "nn.InstanceNorm2d(3)",
  ["nn.KLDivLoss"] = "nn.KLDivLoss()",
  ["nn.L1Loss"] = "nn.L1Loss()",
  ["nn.LSTM"] = "nn.LSTM(3, 2, {proj_size = 1})",
  ["nn.LSTMCell"] = "nn.LSTMCell(3, 2)",
  ["nn.LayerNorm"] = "nn.LayerNorm(3)",
  ["nn.LeakyReLU"] = "nn.LeakyReLU()",
  ["nn.Linear"] = "nn.Linear(3, 2)",
  ["nn.LogSigmoid"] = "nn.LogSigmoid()",
  ["nn.LogSoftmax"] = "nn.LogSoftmax(2)",
  ["nn.MSELoss"] = "nn.MSELoss()",
  ["nn.MarginRankingLoss"] = "nn.MarginRankingLoss()",
  ["nn.MaxPool1d"] = "nn.MaxPool1d(2)",
  ["nn.MaxPool2d"] = "nn.MaxPool2d(2)",
  ["nn.Mish"] = "nn.Mish()",
  ["nn.Module"] = "nn.Module()",
  ["nn.ModuleDict"] = "nn.ModuleDict({fc = nn.Linear(2, 2)})",
  ["nn.ModuleList"] = "nn.ModuleList({nn.Linear(2, 2), nn.ReLU()})",
  ["nn.MultiLabelSoftMarginLoss"] = "nn.MultiLabelSoftMarginLoss()",
  ["nn.MultiheadAttention"] = "nn.MultiheadAttention(4, 2)",
  ["nn.NLLLoss"] = "nn.NLLLoss()",
  ["nn.PReLU"] = "nn.PReLU()",
  ["nn.ParameterDict"] = "nn.ParameterDict({w = nn.Parameter(torch.ones(2))})",
  ["nn.ParameterList"] = "nn.ParameterList({nn.Parameter(torch.ones(2))})",
  ["nn.PixelShuffle"] = "nn.PixelShuffle(2)",
  ["nn.PixelUnshuffle"] = "nn.PixelUnshuffle(2)",
  ["nn.PoissonNLLLoss"] = "nn.PoissonNLLLoss()",
  ["nn.RNN"] = "nn.RNN(3, 2, 2)",
  ["nn.RNNCell"] = "nn.RNNCell(3, 2)",
  ["nn.ReLU"] = "nn.ReLU()",
  ["nn.ReLU6"] = "nn.ReLU6()",
  ["nn.SELU"] = "nn.SELU()",
  ["nn.Sequential"] = "nn.Sequential(nn.Linear(3, 2), nn.ReLU())",
  ["nn.SiLU"] = "nn.SiLU()",
  ["nn.Sigmoid"] = "nn.Sigmoid()",
  ["nn.SmoothL1Loss"] = "nn.SmoothL1Loss()",
  ["nn.Softmax"] = "nn.Softmax(2)",
  ["nn.Softplus"] = "nn.Softplus()",
  ["nn.Softsign"] = "nn.Softsign()",
  ["nn.Tanh"] = "nn.Tanh()",
  ["nn.Threshold"] = "nn.Threshold(0.1, 20)",
  ["nn.Transformer"] = "nn.Transformer{d_model = 4, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1, " ..
    "dim_feedforward = 8}",
  ["nn.TransformerDecoder"] = "nn.TransformerDecoder(nn.TransformerDecoderLayer(4, 2, {dim_feedforward = 8}), 2)",
  ["nn.TransformerDecoderLayer"] = "nn.TransformerDecoderLayer(4, 2, {dim_feedforward = 8})",
  ["nn.TransformerEncoder"] = "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, {dim_feedforward = 8}), 2)",
  ["nn.TransformerEncoderLayer"] = "nn.TransformerEncoderLayer(4, 2, {dim_feedforward = 8})",
  ["nn.TripletMarginLoss"] = "nn.TripletMarginLoss()",
  ["nn.Unflatten"] = "nn.Unflatten(2, {2, 2})",
  ["nn.Upsample"] = "nn.Upsample({scale_factor = 2})",
  ["optim.Adam"] = "optim.Adam(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.AdamW"] = "optim.AdamW(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.Optimizer"] = "optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1})",
  ["optim.RMSprop"] = "optim.RMSprop(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.SGD"] = "optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9})",
  ["optim.lr_scheduler.CosineAnnealingLR"] =
    "optim.lr_scheduler.CosineAnnealingLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1}), {T_max = 10})",
  ["optim.lr_scheduler.LRScheduler"] =
    "optim.lr_scheduler.StepLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1}), {step_size = 2})",
  ["optim.lr_scheduler.StepLR"] =
    "optim.lr_scheduler.StepLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1}), {step_size = 2})",
  ["optim.Adagrad"] = "optim.Adagrad(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.Adadelta"] = "optim.Adadelta(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.Adamax"] = "optim.Adamax(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.NAdam"] = "optim.NAdam(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.RAdam"] = "optim.RAdam(nn.Linear(3, 2):parameters(), {lr = 0.01})",
  ["optim.LBFGS"] = "optim.LBFGS(nn.Linear(3, 2):parameters(), {max_iter = 3})",
  ["optim.lr_scheduler.ConstantLR"] =
    "optim.lr_scheduler.ConstantLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {})",
  ["optim.lr_scheduler.CosineAnnealingWarmRestarts"] =
    "optim.lr_scheduler.CosineAnnealingWarmRestarts(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {T_0 = 3, T_mult = 2})",
  ["optim.lr_scheduler.CyclicLR"] =
    "optim.lr_scheduler.CyclicLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {base_lr = 0.01, max_lr = 0.1, step_size_up = 3})",
  ["optim.lr_scheduler.ExponentialLR"] =
    "optim.lr_scheduler.ExponentialLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {gamma = 0.9})",
  ["optim.lr_scheduler.LambdaLR"] =
    "optim.lr_scheduler.LambdaLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {lr_lambda = function(e) return 0.9 ^ e end})",
  ["optim.lr_scheduler.LinearLR"] =
    "optim.lr_scheduler.LinearLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {})",
  ["optim.lr_scheduler.MultiStepLR"] =
    "optim.lr_scheduler.MultiStepLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {milestones = {2, 5}})",
  ["optim.lr_scheduler.MultiplicativeLR"] =
    "optim.lr_scheduler.MultiplicativeLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {lr_lambda = function() return 0.9 end})",
  ["optim.lr_scheduler.OneCycleLR"] =
    "optim.lr_scheduler.OneCycleLR(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {max_lr = 0.5, total_steps = 20})",
  ["optim.lr_scheduler.ReduceLROnPlateau"] =
    "optim.lr_scheduler.ReduceLROnPlateau(optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}), {patience = 1})",
  ["optim.lr_scheduler.SequentialLR"] = "(function() local o = optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}); local S = optim.lr_scheduler; " ..
    "return S.SequentialLR(o, {schedulers = {S.ConstantLR(o), S.ExponentialLR(o, {gamma = 0.9})}, milestones = {3}}) end)()",
  ["optim.lr_scheduler.ChainedScheduler"] = "(function() local o = optim.SGD(nn.Linear(3, 2):parameters(), {lr = 0.1, momentum = 0.9}); local S = optim.lr_scheduler; " ..
    "return S.ChainedScheduler({S.ConstantLR(o), S.ExponentialLR(o, {gamma = 0.9})}) end)()",
  ["torch.amp.GradScaler"] = 'torch.amp.GradScaler("cpu", {init_scale = 4.0, growth_interval = 2})',
  ["torch.cuda.amp.GradScaler"] = "torch.cuda.amp.GradScaler({init_scale = 4.0})",
  ["torch.utils.data.BatchSampler"] = "torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(torch.utils.data.TensorDataset(torch.ones(5))), 2, false)",
  ["torch.utils.data.ConcatDataset"] =
    "torch.utils.data.ConcatDataset({torch.utils.data.TensorDataset(torch.ones(2)), torch.utils.data.TensorDataset(torch.zeros(3))})",
  ["torch.utils.data.DataLoader"] = "torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(5, 2)), {batch_size = 2})",
  ["torch.utils.data.Dataset"] = "torch.utils.data.TensorDataset(torch.ones(4, 2), torch.arange(4))",
  ["torch.utils.data.IterableDataset"] = [[(function()
    local S = torch.utils.data.IterableDataset:extend("S")
    function S:iter() local i = 0 return function() i = i + 1 if i <= 3 then return torch.ones(2) * i end end end
    return S()
  end)()]],
  ["torch.utils.data.distributed.DistributedSampler"] = "torch.utils.data.distributed.DistributedSampler(torch.utils.data.TensorDataset(torch.ones(5)), {num_replicas = 2, rank = 1})",
  ["torch.utils.data.RandomSampler"] = "torch.utils.data.RandomSampler(torch.utils.data.TensorDataset(torch.ones(5)))",
  ["torch.utils.data.Sampler"] = "torch.utils.data.SequentialSampler(torch.utils.data.TensorDataset(torch.ones(5)))",
  ["torch.utils.data.SequentialSampler"] = "torch.utils.data.SequentialSampler(torch.utils.data.TensorDataset(torch.ones(5)))",
  ["torch.utils.data.Subset"] = "torch.utils.data.Subset(torch.utils.data.TensorDataset(torch.ones(5)), {2, 4})",
  ["torch.utils.data.SubsetRandomSampler"] = "torch.utils.data.SubsetRandomSampler({1, 3, 5})",
  ["torch.utils.data.TensorDataset"] = "torch.utils.data.TensorDataset(torch.ones(4, 2), torch.arange(4))",
  ["torch.utils.data.WeightedRandomSampler"] = "torch.utils.data.WeightedRandomSampler({0.5, 1.0, 2.0}, 4)",
  ["torch.distributions.Normal"] = "torch.distributions.Normal(torch.zeros(2), torch.ones(2))",
  ["torch.distributions.Uniform"] = "torch.distributions.Uniform(torch.zeros(2), torch.ones(2))",
  ["torch.distributions.Gamma"] = "torch.distributions.Gamma(torch.ones(2), torch.ones(2))",
  ["torch.distributions.Beta"] = "torch.distributions.Beta(torch.ones(2), torch.ones(2))",
  ["torch.distributions.Categorical"] = "torch.distributions.Categorical(torch.ones(2, 3))",
  ["torch.distributions.Bernoulli"] = "torch.distributions.Bernoulli(torch.full({2}, 0.5))",
  ["torch.distributions.MultivariateNormal"] =
    "torch.distributions.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.eye(2)})",
  ["torch.distributions.Independent"] =
    "torch.distributions.Independent(torch.distributions.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)",
  ["torch.distributions.Distribution"] = "torch.distributions.Normal(0.0, 1.0)",
}

return H
