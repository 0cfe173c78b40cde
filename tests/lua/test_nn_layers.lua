-- torch.nn layers and nn.functional against PyTorch 1.13: forwards and gradients with
-- weights set through load_state_dict, default initialisation ranges and statistics,
-- nn.init, and the functional forms' errors. Reference values come from
-- /usr/bin/python3 with PyTorch 1.13; each block quotes the snippet that printed them
-- (indices there are 0-based where ours are 1-based).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn
local F = nn.functional

-- Float32 tensors from Lua tables (integer literals would give int64).
local function t(values) return torch.tensor(values, {dtype = "float32"}) end
local function flat(x) return x:reshape(-1) end

T.test("Linear forward and gradients", function()
  -- lin = nn.Linear(3, 2); weight [[.1,-.2,.3],[.4,.5,-.6]], bias [.01,-.02]
  -- x = [[1,2,3],[-1,.5,2]]; y = lin(x); (y*y).sum().backward()
  local lin = nn.Linear(3, 2)
  lin:load_state_dict{weight = t{{0.1, -0.2, 0.3}, {0.4, 0.5, -0.6}}, bias = t{0.01, -0.02}}
  local y = lin(t{{1, 2, 3}, {-1, 0.5, 2}})
  T.near(flat(y), {0.61, -0.42, 0.41, -1.37}, 1e-6)
  T.eq(y.grad_fn ~= nil, true)
  ;(y * y):sum():backward()
  T.near(flat(lin.weight.grad), {0.4, 2.85, 5.3, 1.9, -3.05, -8.000001}, 1e-5)
  T.near(lin.bias.grad, {2.04, -3.58}, 1e-5)
  -- (*, in) inputs: a 1-D vector and a 3-D batch.
  T.near(lin(t{1, 2, 3}), {0.61, -0.42}, 1e-6)
  T.eq(lin(torch.zeros(4, 5, 3)).shape, {4, 5, 2})
  T.error_usable(function() lin(torch.zeros(2, 4)) end, "linear: input of shape {2,4}")
end)

-- F.linear records one node (addmm or mm over weight^T): its value and every gradient are
-- those of the composed torch.addmm(bias, x, weight:t()) bit for bit, for 2-D and 3-D input,
-- with and without a bias, and a second derivative flows through it.
T.test("linear equals the composed addmm over weight^T bit for bit", function()
  torch.manual_seed(5)
  for _, dt in ipairs({"float32", "float64"}) do
    for _, shape in ipairs({{6, 4}, {2, 3, 4}}) do
      for _, with_bias in ipairs({true, false}) do
        local x0, w0, b0 = torch.randn(shape, {dtype = dt}), torch.randn(5, 4, {dtype = dt}), torch.randn(5, {dtype = dt})
        local function leaves() return x0:clone():requires_grad_(), w0:clone():requires_grad_(), b0:clone():requires_grad_() end
        local x1, w1, b1 = leaves()
        local x2, w2, b2 = leaves()
        local y1 = F.linear(x1, w1, with_bias and b1 or nil)
        local flat = x2:reshape(-1, 4)
        local y2 = with_bias and torch.addmm(b2, flat, w2:t()) or flat:mm(w2:t())
        y2 = y2:reshape(y1.shape)
        T.truthy(torch.equal(y1, y2), "value")
        local g = torch.randn(y1.shape, {dtype = dt})
        y1:backward(g)
        y2:backward(g)
        T.truthy(torch.equal(x1.grad, x2.grad), "input gradient")
        T.truthy(torch.equal(w1.grad, w2.grad), "weight gradient")
        if with_bias then T.truthy(torch.equal(b1.grad, b2.grad), "bias gradient") else T.eq(b1.grad, nil) end
      end
    end
  end
  -- d/dW of sum((x W^T)^2) is 2 (x W^T)^T x; its derivative along x exists (create_graph).
  local x = torch.tensor({{1.0, 2.0}}, {dtype = "float64", requires_grad = true})
  local w = torch.tensor({{3.0, -1.0}}, {dtype = "float64", requires_grad = true})
  local gw = torch.autograd.grad(F.linear(x, w):pow(2):sum(), w, {create_graph = true})[1]
  T.near(gw, {{2.0, 4.0}})  -- 2 * (x . w) * x = 2 * 1 * {1, 2}
  -- sum(gw) = 2 (x . w)(x1 + x2), whose gradient along x_i is 2 w_i (x1 + x2) + 2 (x . w)
  T.near(torch.autograd.grad(gw:sum(), x)[1], {{20.0, -4.0}})
end)

T.test("Conv2d forward and gradients", function()
  -- conv = nn.Conv2d(1, 2, 3, padding=1); weight arange(18).reshape(2,1,3,3)/10-0.8,
  -- bias [.1,-.1]; x = arange(16).reshape(1,1,4,4)/8-1; y = conv(x); (y*y).sum().backward()
  local conv = nn.Conv2d(1, 2, 3, {padding = 1})
  local w = torch.arange(18):reshape(2, 1, 3, 3):float() / 10 - 0.8
  conv:load_state_dict{weight = w, bias = t{0.1, -0.1}}
  local x = torch.arange(16):reshape(1, 1, 4, 4):float() / 8 - 1
  local y = conv(x)
  T.eq(y.shape, {1, 2, 4, 4})
  T.near(flat(y), {0.8125, 1.3125, 1.125, 0.7875, 1.6375, 2.425, 1.975, 1.225, 0.5875, 0.625, 0.175, -0.125,
                   -0.3625, -0.8625, -1.275, -1.0875, -1.8625, -2.2625, -1.775, -0.9875, -0.925, -0.8125, -0.25,
                   0.0125, 0.725, 1.4375, 2.0, 1.3625, 0.5625, 0.9625, 1.225, 0.7375}, 1e-5)
  ;(y * y):sum():backward()
  T.near(flat(conv.weight.grad), {-11.700001, -14.79375, -11.246875, -14.400002, -16.450001, -11.118751, -0.7875,
                                  1.36875, 3.534375, -0.9, 1.893749, 2.928124, 14.887498, 20.512499, 16.724998,
                                  10.0125, 12.281249, 8.709374}, 1e-5)
  T.near(conv.bias.grad, {17.949999, 0.300001}, 1e-5)
  -- conv2 = nn.Conv2d(1, 2, 3, stride=2, bias=False), same weight: conv2(x)
  local conv2 = nn.Conv2d(1, 2, 3, {stride = 2, bias = false})
  conv2:load_state_dict{weight = w}
  T.near(flat(conv2(x)), {2.325, -0.7125}, 1e-5)
  -- padding="same" is padding 1 for a 3x3 kernel.
  local same = nn.Conv2d(1, 2, 3, {padding = "same"})
  same:load_state_dict(conv:state_dict())
  T.near(same(x), y:detach(), 1e-6)
  T.eq(F.conv2d(x, w, nil, {padding = "valid"}).shape, {1, 2, 2, 2})
end)

T.test("MaxPool2d and Flatten", function()
  -- xp = [[[[1,5,2,0],[3,-1,4,8],[0,2,7,6],[9,1,3,5]]]]
  -- nn.MaxPool2d(2)(xp); nn.MaxPool2d(3, stride=1)(xp)
  local xp = t{{{{1, 5, 2, 0}, {3, -1, 4, 8}, {0, 2, 7, 6}, {9, 1, 3, 5}}}}
  T.near(flat(nn.MaxPool2d(2)(xp)), {5, 8, 9, 7})
  T.near(flat(nn.MaxPool2d(3, {stride = 1})(xp)), {7, 8, 9, 8})
  T.near(flat(F.max_pool2d(xp, 2)), {5, 8, 9, 7})
  local x = torch.arange(12):reshape(2, 3, 2)
  T.eq(nn.Flatten()(x).shape, {2, 6})
  T.eq(nn.Flatten(1)(x).shape, {12})
  T.eq(nn.Flatten(1, 2)(x).shape, {6, 2})
  T.eq(F.flatten(x).shape, {12})
  T.eq(F.flatten(x, 2):tolist(), {{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}})
end)

T.test("Embedding forward, padding row without gradient", function()
  -- emb = nn.Embedding(5, 3, padding_idx=1); weight arange(15).reshape(5,3)/10
  -- y = emb([[0,1],[4,1]]); (y * arange(1,13).reshape(2,2,3)).sum().backward()
  local emb = nn.Embedding(5, 3, {padding_idx = 2})
  emb:load_state_dict{weight = torch.arange(15):reshape(5, 3):float() / 10}
  local y = emb(torch.tensor{{1, 2}, {5, 2}})
  T.eq(y.shape, {2, 2, 3})
  T.near(flat(y), {0, 0.1, 0.2, 0.3, 0.4, 0.5, 1.2, 1.3, 1.4, 0.3, 0.4, 0.5}, 1e-6)
  ;(y * torch.arange(1, 13):reshape(2, 2, 3)):sum():backward()
  T.near(flat(emb.weight.grad), {1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 8, 9})
  -- The default initialisation zeroes the padding row; -1 is the last row.
  T.eq(nn.Embedding(4, 2, {padding_idx = 2}).weight[2]:tolist(), {0, 0})
  T.eq(nn.Embedding(4, 2, {padding_idx = -1}).padding_idx, 4)
  T.eq(emb(torch.tensor(3)).shape, {3})
  T.eq(emb(torch.zeros(0, {dtype = "int64"})).shape, {0, 3})
  T.error_usable(function() emb(torch.tensor{1, 6}) end, "embedding: index 6 is out of range 1..5")
  T.error_usable(function() emb(torch.tensor{0, 2}) end, "embedding: index 0 is out of range 1..5")
  T.error_usable(function() emb(t{1.0, 2.0}) end, "embedding: expected an integer tensor of indices, got dtype float32")
  T.error_usable(function() F.embedding(torch.tensor{1}, torch.ones(3)) end,
    "embedding: expected a 2-D weight (num_embeddings, dim), got shape {3}")
end)

T.test("LayerNorm forward and gradients", function()
  -- ln = nn.LayerNorm(3); weight [1,2,.5], bias [0,.1,-.1]; x = [[1,2,4],[-1,.5,0]]
  -- y = ln(x); (y * [[1,-1,2],[.5,1,-2]]).sum().backward()
  local ln = nn.LayerNorm(3)
  T.eq({ln.weight:tolist(), ln.bias:tolist()}, {{1, 1, 1}, {0, 0, 0}})
  ln:load_state_dict{weight = t{1, 2, 0.5}, bias = t{0, 0.1, -0.1}}
  local x = t{{1, 2, 4}, {-1, 0.5, 0}}:requires_grad_()
  local y = ln(x)
  T.near(flat(y), {-1.069041, -0.434521, 0.568151, -1.336289, 2.238062, 0.033629}, 1e-5)
  ;(y * t{{1, -1, 2}, {0.5, 1, -2}}):sum():backward()
  T.near(flat(x.grad), {1.03086, -1.546292, 0.515433, 0.859021, 1.718104, -2.577124}, 1e-5)
  T.near(ln.weight.grad, {-1.737186, 1.336292, 2.138088}, 1e-5)
  T.near(ln.bias.grad, {1.5, 0, 0}, 1e-5)
  -- nn.LayerNorm([2, 2], elementwise_affine=False)(tensor([[[1,2],[3,5]]]))
  local ln2 = nn.LayerNorm({2, 2}, {elementwise_affine = false})
  T.eq(#ln2:parameters(), 0)
  T.near(flat(ln2(t{{{1, 2}, {3, 5}}})), {-1.183213, -0.507091, 0.16903, 1.521274}, 1e-5)
  T.error_usable(function() ln(torch.ones(2, 4)) end,
    "layer_norm: input of shape {2,4} does not end in normalized_shape {3}")
  T.error_usable(function() F.layer_norm(torch.ones(2, {dtype = "int64"}), 2) end,
    "layer_norm: expected a floating-point input, got dtype int64")
end)

T.test("activations forward and GELU gradients", function()
  -- xa = [[-2,-.5,0,.7,3]]; nn.ReLU()(xa), Sigmoid, Tanh, GELU(), GELU(approximate="tanh");
  -- F.gelu(xa).sum().backward() for both forms
  local xa = t{{-2, -0.5, 0, 0.7, 3}}
  T.near(flat(nn.ReLU()(xa)), {0, 0, 0, 0.7, 3}, 1e-6)
  T.near(flat(nn.Sigmoid()(xa)), {0.119203, 0.377541, 0.5, 0.668188, 0.952574}, 1e-5)
  T.near(flat(nn.Tanh()(xa)), {-0.964028, -0.462117, 0, 0.604368, 0.995055}, 1e-5)
  T.near(flat(nn.GELU()(xa)), {-0.0455, -0.154269, 0, 0.530625, 2.99595}, 1e-5)
  T.near(flat(nn.GELU("tanh")(xa)), {-0.045402, -0.154286, 0, 0.53057, 2.996363}, 1e-5)
  local xg = xa:clone():requires_grad_()
  F.gelu(xg):sum():backward()
  T.near(flat(xg.grad), {-0.085232, 0.132505, 0.5, 0.976614, 1.011946}, 1e-5)
  xg = xa:clone():requires_grad_()
  F.gelu(xg, {approximate = "tanh"}):sum():backward()
  T.near(flat(xg.grad), {-0.086099, 0.13263, 0.5, 0.976357, 1.011584}, 1e-5)
  T.error_usable(function() F.gelu(xa, "exact") end, 'gelu: approximate must be "none" or "tanh", got "exact"')
  T.error_usable(function() F.relu(3) end, "relu: expected a tensor for input, got 3")
end)

T.test("Softmax and LogSoftmax over 1-based dims", function()
  -- xs = [[1,2,3],[0,-1,5]]; nn.Softmax(dim=1)(xs), nn.Softmax(dim=0)(xs), nn.LogSoftmax(dim=1)(xs)
  local xs = t{{1, 2, 3}, {0, -1, 5}}
  T.near(flat(nn.Softmax(2)(xs)), {0.090031, 0.244728, 0.665241, 0.006676, 0.002456, 0.990867}, 1e-5)
  T.near(flat(nn.Softmax{dim = -1}(xs)), {0.090031, 0.244728, 0.665241, 0.006676, 0.002456, 0.990867}, 1e-5)
  T.near(flat(nn.Softmax(1)(xs)), {0.731059, 0.952574, 0.119203, 0.268941, 0.047426, 0.880797}, 1e-5)
  T.near(flat(nn.LogSoftmax(2)(xs)), {-2.407606, -1.407606, -0.407606, -5.009174, -6.009174, -0.009174}, 1e-5)
  T.near(flat(F.softmax(xs, {dim = 1})), {0.731059, 0.952574, 0.119203, 0.268941, 0.047426, 0.880797}, 1e-5)
  T.near(flat(F.log_softmax(xs, 2)), {-2.407606, -1.407606, -0.407606, -5.009174, -6.009174, -0.009174}, 1e-5)
  T.error_usable(function() F.softmax(xs) end, "softmax: missing argument 'dim'")
end)

T.test("Dropout zeroes with probability p while training, identity in eval", function()
  torch.manual_seed(3)
  local drop = nn.Dropout(0.25)
  local x = torch.ones(100000)
  local y = drop(x)
  local zeros = y:eq(0):sum():item()
  T.truthy(math.abs(zeros / 100000 - 0.25) < 0.01, "fraction dropped " .. zeros / 100000)
  T.near(y:sum():item(), y:ne(0):sum():item() / 0.75, 1e-4)
  T.near(y:max():item(), 1 / 0.75, 1e-6)
  drop:eval()
  T.truthy(drop(x) == x)
  T.near(F.dropout(x, 0.5, false), x)
  T.eq(F.dropout(x, {p = 1}):abs():sum():item(), 0)
  -- The kept elements pass their gradient scaled by 1/(1-p).
  local xg = torch.ones(8, {requires_grad = true})
  drop:train()
  local out = drop(xg)
  out:sum():backward()
  T.near(xg.grad, out:detach())
  T.error_usable(function() F.dropout(x, -0.1) end, "dropout: p must be between 0 and 1, got -0.1")
  T.error_usable(function() F.dropout(torch.ones(2, {dtype = "int64"})) end,
    "dropout: expected a floating-point input, got dtype int64")
end)

T.test("default initialisation: Linear and Conv2d in U(-1/sqrt(fan_in), 1/sqrt(fan_in))", function()
  torch.manual_seed(0)
  local lin = nn.Linear(400, 300)
  local bound = 1 / math.sqrt(400)
  local w = lin.weight
  T.truthy(w:min():item() >= -bound and w:max():item() <= bound)
  T.truthy(w:max():item() > 0.99 * bound and w:min():item() < -0.99 * bound)
  T.near(w:mean():item(), 0, 2e-3)
  T.near(w:var():item(), bound * bound / 3, 0.02 * bound * bound)  -- U(-b, b) has variance b^2/3
  T.truthy(lin.bias:abs():max():item() <= bound)
  local conv = nn.Conv2d(4, 64, {3, 5})
  local cb = 1 / math.sqrt(4 * 3 * 5)
  T.truthy(conv.weight:abs():max():item() <= cb and conv.weight:abs():max():item() > 0.98 * cb)
  T.truthy(conv.bias:abs():max():item() <= cb)
  local grouped = nn.Conv2d(4, 8, 3, {groups = 2})
  T.eq(grouped.weight.shape, {8, 2, 3, 3})
  T.truthy(grouped.bias:abs():max():item() <= 1 / math.sqrt(2 * 9))
  -- Embedding: N(0, 1).
  local emb = nn.Embedding(1000, 100)
  T.near(emb.weight:mean():item(), 0, 0.01)
  T.near(emb.weight:std():item(), 1, 0.01)
  -- The same seed gives the same model.
  torch.manual_seed(7)
  local a = nn.Linear(3, 2)
  torch.manual_seed(7)
  local b = nn.Linear(3, 2)
  T.eq(a.weight:tolist(), b.weight:tolist())
  T.eq(a.bias:tolist(), b.bias:tolist())
  -- No-size layers are fine.
  T.eq(nn.Linear(0, 3).bias:abs():max():item(), 0)
end)

T.test("nn.init fills in place under no_grad with PyTorch's formulas", function()
  torch.manual_seed(0)
  local init = nn.init
  local w = nn.Parameter(torch.empty(200, 500))
  T.truthy(init.constant_(w, 0.5) == w)
  T.eq(w:min():item(), 0.5)
  T.truthy(w.is_leaf and w.requires_grad)
  init.zeros_(w); T.eq(w:abs():max():item(), 0)
  init.ones_(w); T.eq(w:min():item(), 1)
  init.uniform_(w, -2, 3)
  T.truthy(w:min():item() >= -2 and w:max():item() <= 3)
  T.near(w:mean():item(), 0.5, 0.02)
  init.uniform_(w, {b = 0.5})
  T.truthy(w:min():item() >= 0 and w:max():item() <= 0.5)
  init.normal_(w, 1, 2)
  T.near(w:mean():item(), 1, 0.02)
  T.near(w:std():item(), 2, 0.02)
  -- fan_in 500, fan_out 200.
  init.kaiming_uniform_(w)
  local b = math.sqrt(2) * math.sqrt(3 / 500)  -- gain of leaky_relu with a = 0
  T.truthy(w:abs():max():item() <= b and w:abs():max():item() > 0.99 * b)
  init.kaiming_uniform_(w, {a = math.sqrt(5)})
  T.truthy(w:abs():max():item() <= 1 / math.sqrt(500))
  init.kaiming_normal_(w, {mode = "fan_out", nonlinearity = "relu"})
  T.near(w:std():item(), math.sqrt(2 / 200), 0.01 * math.sqrt(2 / 200))
  init.xavier_uniform_(w, {gain = 2})
  b = 2 * math.sqrt(6 / 700)
  T.truthy(w:abs():max():item() <= b and w:abs():max():item() > 0.99 * b)
  init.xavier_normal_(w)
  T.near(w:std():item(), math.sqrt(2 / 700), 0.01 * math.sqrt(2 / 700))
  local conv_w = torch.empty(8, 4, 3, 3)
  init.xavier_uniform_(conv_w)  -- fan_in 36, fan_out 72
  T.truthy(conv_w:abs():max():item() <= math.sqrt(6 / 108))
  T.near(init.calculate_gain("tanh"), 5 / 3)
  T.near(init.calculate_gain("leaky_relu", 0.2), math.sqrt(2 / 1.04))
  T.eq(init.calculate_gain("conv2d"), 1)
  T.error_usable(function() init.kaiming_uniform_(torch.empty(3)) end,
    "kaiming_uniform_: fan in and fan out need a tensor with at least 2 dims, got shape {3}")
  T.error_usable(function() init.kaiming_normal_(w, {mode = "fan"}) end,
    'kaiming_normal_: mode must be "fan_in" or "fan_out", got "fan"')
  T.error_usable(function() init.calculate_gain("swish") end, 'calculate_gain: unsupported nonlinearity "swish"')
  T.error_usable(function() init.constant_(w) end, "constant_: missing argument 'val'")
  T.error_usable(function() init.normal_({}) end, "normal_: expected a tensor for tensor, got table")
  T.error_usable(function() init.uniform_(w, "a") end, 'uniform_: a must be a number, got "a"')
end)

T.test("training through modules matches PyTorch's gradients", function()
  -- m = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)) with the weights below;
  -- loss = nn.MSELoss()(m(X), y); loss.backward()
  local m = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
  m:load_state_dict{["0.weight"] = t{{0.5, -0.3}, {0.2, 0.8}, {-0.6, 0.1}}, ["0.bias"] = t{0.1, 0, -0.2},
                    ["2.weight"] = t{{1, -0.5, 0.25}}, ["2.bias"] = t{0.05}}
  local X = t{{1, 2}, {-1, 0.5}, {0.3, -0.7}, {2, 1}}
  local y = t{{1}, {0}, {-1}, {0.5}}
  local loss = nn.MSELoss()(m(X), y)
  T.near(loss:item(), 1.344075, 1e-5)
  loss:backward()
  T.near(flat(m[1].weight.grad), {-0.650057, -2.215744, -0.097209, 0.386837, -0.070378, -0.428843}, 1e-5)
  T.near(m[1].bias.grad, {-0.40769, -0.136863, -0.032619}, 1e-5)
  T.near(flat(m[3].weight.grad), {0.317478, -1.326524, 0.166147}, 1e-5)
  T.near(m[3].bias.grad, {-0.406976}, 1e-5)
end)

T.test("a small CNN with cross-entropy matches PyTorch's gradients", function()
  -- conv(1,2,3,padding=1) -> relu -> MaxPool2d(2) -> flatten(1) -> Linear(8,3), CE with
  -- targets [2, 0]; x = arange(32).reshape(2,1,4,4)/16-1 with x[1] flipped left-right.
  local Net = nn.Module:extend("CNN")
  function Net:init()
    self.conv = nn.Conv2d(1, 2, 3, {padding = 1})
    self.pool = nn.MaxPool2d(2)
    self.fc = nn.Linear(8, 3)
  end
  function Net:forward(x) return self.fc(F.flatten(self.pool(F.relu(self.conv(x))), 2)) end
  local net = Net()
  net:load_state_dict{["conv.weight"] = torch.arange(18):reshape(2, 1, 3, 3):float() / 10 - 0.8,
                      ["conv.bias"] = t{0.1, -0.1},
                      ["fc.weight"] = torch.arange(24):reshape(3, 8):float() / 20 - 0.6, ["fc.bias"] = t{0, 0.1, -0.1}}
  local x = torch.arange(32):reshape(2, 1, 4, 4):float() / 16 - 1
  x[2] = x[2]:flip(-1)
  local loss = nn.CrossEntropyLoss()(net(x), torch.tensor{3, 1})
  T.near(loss:item(), 3.848992, 1e-5)
  loss:backward()
  T.near(flat(net.conv.weight.grad), {0.015254, 0.014124, 0.012994, 0.010734, 0.009604, 0.008474, 0.006215,
                                      0.005085, 0.003955, 0.444231, 0.345513, 0.246795, 0.839103, 0.740385,
                                      0.641667, 1.233975, 1.135257, 1.036539}, 1e-5)
  T.near(net.conv.bias.grad, {-0.018079, 1.579488}, 1e-5)
  T.near(flat(net.fc.weight.grad), {0.000555, 0.000514, 0.000392, 0.000351, -0.999536, -0.858976, -1.561775,
                                    -1.421215, 0.033494, 0.031033, 0.023651, 0.02119, 0.024711, 0.021236, 0.038611,
                                    0.035136, -0.034049, -0.031547, -0.024043, -0.021541, 0.974825, 0.83774,
                                    1.523164, 1.386079}, 1e-5)
  T.near(net.fc.bias.grad, {-0.499587, 0.023292, 0.476294}, 1e-5)
end)

T.done()
