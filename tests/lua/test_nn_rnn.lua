-- The recurrent layers (nn.RNN, nn.LSTM, nn.GRU, nn.RNNCell, nn.LSTMCell, nn.GRUCell): bad
-- inputs and options as clear errors, PyTorch's parameter names, printing, dropout between
-- layers in training only, and a checkpoint PyTorch 1.13 wrote that loads and gives PyTorch's
-- outputs. Values and gradients against PyTorch: tests/conformance/ops_nn_rnn.lua.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn

local D = {dtype = "float64"}

T.test("parameter names, shapes and order are PyTorch's", function()
  local m = nn.LSTM(3, 5, 2, {bidirectional = true, proj_size = 2})
  local names, shapes = {}, {}
  for name, p in m:named_parameters() do
    names[#names + 1] = name
    shapes[#shapes + 1] = p.shape
  end
  T.eq(names, {"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
               "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
               "weight_hr_l0_reverse", "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1",
               "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse",
               "weight_hr_l1_reverse"})
  T.eq(shapes[1], {20, 3})
  T.eq(shapes[2], {20, 2})
  T.eq(shapes[5], {2, 5})
  T.eq(shapes[11], {20, 4})
  T.eq(T.sorted_keys(nn.GRU(2, 3, {bias = false}):state_dict()), {"weight_hh_l0", "weight_ih_l0"})
  T.eq(nn.GRU(2, 3).weight_ih_l0.shape, {9, 2})
  T.eq(nn.RNN(2, 3, 3).weight_ih_l2.shape, {3, 3})
  T.eq(T.sorted_keys(nn.LSTMCell(2, 3):state_dict()), {"bias_hh", "bias_ih", "weight_hh", "weight_ih"})
  local gru = nn.GRU(2, 3)
  local before = gru.weight_ih_l0:clone()
  T.eq(select("#", gru:flatten_parameters()), 0, "flatten_parameters is a no-op")
  T.eq(gru.weight_ih_l0:tolist(), before:tolist())
  T.error_usable(function() gru:flatten_parameters(1) end, "flatten_parameters")
  T.eq(nn.LSTMCell(2, 3).weight_ih.shape, {12, 2})
  T.eq(nn.GRUCell(2, 3, false).bias_ih, nil)
end)

T.test("initialisation is U(-1/sqrt(hidden), 1/sqrt(hidden)) for every parameter", function()
  torch.manual_seed(1)
  local m = nn.LSTM(30, 16, 2, {proj_size = 8})
  for name, p in m:named_parameters() do
    local lo, hi = p:min():item(), p:max():item()
    T.truthy(lo >= -0.25 and hi <= 0.25 and hi - lo > 0.4, name .. ": " .. lo .. " .. " .. hi)
  end
end)

T.test("printing is PyTorch's", function()
  T.eq(tostring(nn.LSTM(3, 4, 2, {proj_size = 2, bidirectional = true, dropout = 0.5, batch_first = true})),
       "LSTM(3, 4, proj_size=2, num_layers=2, batch_first=true, dropout=0.5, bidirectional=true)")
  T.eq(tostring(nn.RNN(3, 4, {nonlinearity = "relu", bias = false})), "RNN(3, 4, bias=false)")
  T.eq(tostring(nn.GRU(3, 4)), "GRU(3, 4)")
  T.eq(tostring(nn.RNNCell(3, 4, {nonlinearity = "relu"})), "RNNCell(3, 4, nonlinearity=relu)")
  T.eq(tostring(nn.GRUCell(3, 4, false)), "GRUCell(3, 4, bias=false)")
end)

T.test("shapes of outputs and states, batched, batch_first and unbatched", function()
  local lstm = nn.LSTM(3, 4, 2, {bidirectional = true, proj_size = 2})
  local y, hc = lstm(torch.randn(5, 6, 3))
  T.eq(y.shape, {5, 6, 4})
  T.eq(hc[1].shape, {4, 6, 2})
  T.eq(hc[2].shape, {4, 6, 4})
  local gru = nn.GRU(3, 4, {batch_first = true})
  local y2, h2 = gru(torch.randn(6, 5, 3))
  T.eq(y2.shape, {6, 5, 4})
  T.eq(h2.shape, {1, 6, 4})
  local y3, h3 = nn.RNN(3, 4, 2)(torch.randn(5, 3), torch.zeros(2, 4))
  T.eq(y3.shape, {5, 4})
  T.eq(h3.shape, {2, 4})
  local y4 = nn.RNN(3, 4)(torch.randn(5, 0, 3))
  T.eq(y4.shape, {5, 0, 4})
  local h, c = nn.LSTMCell(3, 4)(torch.randn(3))
  T.eq(h.shape, {4})
  T.eq(c.shape, {4})
end)

T.test("the last output step is h_n, and an unbatched input gives the batched result", function()
  local m = nn.GRU(2, 3, 2, D)
  local x = torch.randn(4, 2, D)
  local y, h = m(x)
  T.eq(y[4]:tolist(), h[2]:tolist())
  local yb, hb = m(x:unsqueeze(2))
  T.eq(y:tolist(), yb:squeeze(2):tolist())
  T.eq(h:tolist(), hb:squeeze(2):tolist())
  local bi = nn.LSTM(2, 3, {bidirectional = true, dtype = "float64"})
  local yy, hc = bi(torch.randn(4, 1, 2, D))
  T.eq(yy[{4, 1, {1, 3}}]:tolist(), hc[1][1][1]:tolist(), "forward direction ends at the last step")
  T.eq(yy[{1, 1, {4, 6}}]:tolist(), hc[1][2][1]:tolist(), "reverse direction ends at the first step")
end)

T.test("dropout is applied between layers in training and not in eval", function()
  local m = nn.LSTM(3, 4, 2, {dropout = 1.0, dtype = "float64"})
  local x = torch.randn(5, 2, 3, D)
  -- With p = 1 the second layer sees zeros: as a one-layer LSTM with its weights on zeros.
  local second = nn.LSTM(4, 4, D)
  for _, w in ipairs({"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) do second[w .. "_l0"] = m[w .. "_l1"] end
  local y = m(x)
  local want = second(torch.zeros(5, 2, 4, D))
  T.eq(y:tolist(), want:tolist())
  m:eval()
  local ye = m(x)
  T.truthy((ye - want):abs():max():item() > 1e-3, "eval mode does not drop")
  local half = nn.GRU(3, 4, 2, {dropout = 0.5, dtype = "float64"})
  half:eval()
  local e1 = half(x)
  half:train()
  torch.manual_seed(4)
  local t1 = half(x)
  torch.manual_seed(4)
  local t2 = half(x)
  T.eq(t1:tolist(), t2:tolist(), "the same seed, the same mask")
  T.truthy((t1 - e1):abs():max():item() > 1e-6, "training mode drops")
end)

T.test("float16 and bfloat16 (the composed steps) follow the float64 result", function()
  torch.manual_seed(5)
  local ref = nn.LSTM(3, 4, 2, {bidirectional = true, proj_size = 2, dtype = "float64"})
  local x = torch.randn(5, 2, 3, D)
  local want = ref(x)
  for _, dt in ipairs({"float16", "bfloat16"}) do
    local m = nn.LSTM(3, 4, 2, {bidirectional = true, proj_size = 2, dtype = dt})
    m:load_state_dict(ref:state_dict())
    local y = m(x:to(dt))
    T.eq(y.dtype, dt)
    T.near(y:double(), want, 0.05, dt)
    y:sum():backward()
    T.eq(m.weight_hh_l1_reverse.grad.dtype, dt)
    local h = nn.GRUCell(3, 4, {dtype = dt})(x[1]:to(dt))
    T.eq(h.dtype, dt)
  end
end)

T.test("bad options are errors naming the layer and the value", function()
  T.error_usable(function() nn.RNN(3, 4, {nonlinearity = "sigmoid"}) end,
                 'RNN: nonlinearity must be "tanh" or "relu", got "sigmoid"')
  T.error_usable(function() nn.LSTM(3, 4, {proj_size = 4}) end, "LSTM: proj_size (4) must be smaller than hidden_size (4)")
  T.error_usable(function() nn.LSTM(3, 4, {proj_size = -1}) end, "LSTM: proj_size must be an integer >= 0, got -1")
  T.error_usable(function() nn.GRU(3, 4, {proj_size = 2}) end, "GRU: unknown keyword 'proj_size'")
  T.error_usable(function() nn.GRU(3, 4, {dropout = 1.5}) end, "GRU: dropout must be between 0 and 1, got 1.5")
  T.error_usable(function() nn.GRU(3, 0) end, "GRU: hidden_size must be an integer >= 1, got 0")
  T.error_usable(function() nn.RNN(3, 4, 0) end, "RNN: num_layers must be an integer >= 1, got 0")
  T.error_usable(function() nn.LSTM(3, 4, {batch_first = 1}) end, "LSTM: batch_first must be true or false, got 1")
  T.error_usable(function() nn.LSTM(3, 4, {nonlinearity = "relu"}) end, "LSTM: unknown keyword 'nonlinearity'")
  T.error_usable(function() nn.LSTMCell(3, 4, {nonlinearity = "relu"}) end,
                 "LSTMCell: unknown keyword 'nonlinearity'")
  T.error_usable(function() nn.RNNCell(3, 4, true, "cube") end, 'RNNCell: nonlinearity must be "tanh" or "relu", got "cube"')
end)

T.test("bad inputs and states are errors naming the layer and the shapes", function()
  local lstm = nn.LSTM(3, 4, 2)
  T.error_usable(function() lstm(torch.randn(5, 2, 4)) end,
                 "LSTM: input.size(-1) must be equal to input_size: expected 3, got 4")
  T.error_usable(function() lstm(torch.randn(5, 2, 3, 1)) end,
                 "LSTM: expected input to be 2-D or 3-D, got a 4-D tensor of shape {5,2,3,1}")
  T.error_usable(function() lstm(torch.randn(0, 2, 3)) end,
                 "LSTM: expected a sequence length larger than 0, got input of shape {0,2,3}")
  T.error_usable(function() lstm(torch.randn(5, 2, 3, D)) end,
                 "LSTM: input has dtype float64 but the parameters have dtype float32")
  T.error_usable(function() lstm(torch.randn(5, 2, 3), {torch.zeros(2, 2, 4), torch.zeros(2, 3, 4)}) end,
                 "LSTM: expected c0 of shape {2,2,4}, got {2,3,4}")
  T.error_usable(function() lstm(torch.randn(5, 2, 3), {torch.zeros(1, 2, 4), torch.zeros(2, 2, 4)}) end,
                 "LSTM: expected h0 of shape {2,2,4}, got {1,2,4}")
  T.error_usable(function() lstm(torch.randn(5, 2, 3), torch.zeros(2, 2, 4)) end,
                 "LSTM: hx must be a table {h0, c0}, got a tensor of shape {2,2,4}")
  T.error_usable(function() lstm(torch.randn(5, 3), {torch.zeros(2, 1, 4), torch.zeros(2, 1, 4)}) end,
                 "LSTM: h0 must be 2-D for a 2-D input, got a 3-D tensor of shape {2,1,4}")
  T.error_usable(function() lstm(torch.randn(5, 2, 3), nil, 1) end, "LSTM: forward takes (input[, hx]), got 3 arguments")
  local gru = nn.GRU(3, 4)
  T.error_usable(function() gru(torch.randn(5, 2, 3), torch.zeros(1, 2, 5)) end,
                 "GRU: expected hx of shape {1,2,4}, got {1,2,5}")
  T.error_usable(function() gru(torch.randn(5, 2, 3), torch.zeros(1, 2, 4, D)) end,
                 "GRU: hx has dtype float64 but input has dtype float32")
  T.error_usable(function() gru("x") end, "GRU: expected a tensor for input, got \"x\"")
  T.error_usable(function() nn.GRUCell(3, 4)(torch.randn(2, 3), torch.zeros(3, 4)) end,
                 "GRUCell: expected hx of shape {2,4}, got {3,4}")
  T.error_usable(function() nn.RNNCell(3, 4)(torch.randn(2, 2, 3)) end,
                 "RNNCell: expected input to be 1-D or 2-D, got a 3-D tensor of shape {2,2,3}")
  T.error_usable(function() nn.LSTMCell(3, 4)(torch.randn(2, 5)) end,
                 "LSTMCell: input.size(-1) must be equal to input_size: expected 3, got 5")
  T.error_usable(function() nn.LSTMCell(3, 4)(torch.randn(2, 3), {torch.zeros(2, 4)}) end,
                 "LSTMCell: hx must be a table {h, c}, got a table of 1 values")
end)

T.test("the engine's loop: a weight changed in place before backward is an error", function()
  local m = nn.LSTM(2, 3, D)
  local out = m(torch.randn(4, 2, 2, D))
  torch.no_grad(function() m.weight_hh_l0:mul_(2) end)
  T.error_usable(function() out:sum():backward() end,
                 "backward: a tensor that RnnLayerBackward saved for the gradient was modified by an in-place operation")
end)

T.test("create_graph=true gives the same first derivatives, and second ones", function()
  for _, cls in ipairs({"LSTM", "GRU", "RNN"}) do
    torch.manual_seed(2)
    local m = nn[cls](2, 3, 2, {bidirectional = true, dtype = "float64"})
    local x = torch.randn(3, 2, 2, {dtype = "float64", requires_grad = true})
    local y = m(x)
    local loss = (y * y):sum()
    local g1 = torch.autograd.grad({loss}, {x, m.weight_hh_l1}, {retain_graph = true})
    local g2 = torch.autograd.grad({loss}, {x, m.weight_hh_l1}, {create_graph = true})
    T.near(g2[1], g1[1], 1e-12, cls .. " d/dx")
    T.near(g2[2], g1[2], 1e-12, cls .. " d/dw_hh_l1")
    T.truthy(g2[1].requires_grad, cls .. ": the gradient has a history")
    local gg = torch.autograd.grad({(g2[1] * g2[1]):sum()}, {m.weight_ih_l0})[1]
    T.eq(gg.shape, m.weight_ih_l0.shape)
  end
end)

T.test("torch._rnn_layer checks its arguments", function()
  local x, h = torch.randn(3, 2, 4), torch.zeros(2, 5)
  local w_ih, w_hh = torch.randn(20, 4), torch.randn(20, 5)
  T.error_usable(function() torch._rnn_layer("LSTMX", x, h, h, w_ih, w_hh) end,
                 '_rnn_layer: mode must be "RNN_TANH", "RNN_RELU", "LSTM" or "GRU", got "LSTMX"')
  T.error_usable(function() torch._rnn_layer("LSTM", x, h, nil, w_ih, w_hh) end, "rnn_layer: c0 is required for LSTM")
  T.error_usable(function() torch._rnn_layer("GRU", x, h, h, torch.randn(15, 4), torch.randn(15, 5)) end,
                 "rnn_layer: c0 is only for LSTM")
  T.error_usable(function() torch._rnn_layer("LSTM", x, torch.zeros(2, 4), h, w_ih, w_hh) end,
                 "rnn_layer: h0 must have shape {2,5}, got {2,4}")
  T.error_usable(function() torch._rnn_layer("LSTM", x, h, h, w_ih, torch.randn(20, 5, D)) end,
                 "rnn_layer: w_hh has dtype float64 but x has dtype float32")
  T.error_usable(function() torch._rnn_layer("RNN_TANH", x:long(), h, nil, w_ih, w_hh) end,
                 "rnn_layer: x must be a floating-point tensor, got dtype int64")
  T.error_usable(function() torch._rnn_layer("GRU", x, h, nil, torch.randn(16, 4), w_hh) end,
                 "rnn_layer: w_ih has 16 rows, not a positive multiple of 3 gates")
  T.error_usable(function() torch._rnn_layer("GRU", x, h, nil, torch.randn(15, 4), torch.randn(15, 5), nil, nil,
                                             torch.randn(5, 5)) end, "rnn_layer: w_hr (a projection) is only for LSTM")
  T.error_usable(function() torch._rnn_layer("RNN_RELU", torch.randn(0, 2, 4), h, nil, torch.randn(5, 4), w_hh:narrow(1, 1, 5)) end,
                 "rnn_layer: the sequence must have at least one step, got x of shape {0,2,4}")
  local y, hn = torch._rnn_layer("RNN_RELU", x, h, nil, torch.randn(5, 4), torch.randn(5, 5), nil, nil, nil, true)
  T.eq(y.shape, {3, 2, 5})
  T.eq(y[1]:tolist(), hn:tolist(), "in reverse the last step is time 1")
end)

T.test("to() and double() carry the parameters; the layers train", function()
  torch.manual_seed(0)
  local m = nn.GRU(2, 3):double()
  T.eq(m.weight_hh_l0.dtype, "float64")
  local opt = torch.optim.SGD(m:parameters(), {lr = 0.1})
  local x, target = torch.randn(4, 2, 2, D), torch.randn(4, 2, 3, D)
  local first, last
  for i = 1, 20 do
    opt:zero_grad()
    local y = m(x)
    local loss = ((y - target) ^ 2):mean()
    loss:backward()
    opt:step()
    if i == 1 then first = loss:item() end
    last = loss:item()
  end
  T.truthy(last < first, "the loss goes down")
end)

if not T.have_python_module("torch") then
  print("skipped: PyTorch checkpoints (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
end

T.test("a checkpoint PyTorch wrote (.pt) loads with strict keys and gives PyTorch's outputs", function()
  local path = T.tmpdir() .. "/rnn.pt"
  local out, ok = T.python([[
import sys, torch
torch.manual_seed(0)
m = torch.nn.Module()
m.lstm = torch.nn.LSTM(3, 4, 2, bidirectional=True, proj_size=2, batch_first=True)
m.gru = torch.nn.GRU(4, 3, dropout=0.5, num_layers=2)
m.rnn = torch.nn.RNN(3, 2, nonlinearity="relu", bias=False)
m.cell = torch.nn.LSTMCell(3, 2)
m.gcell = torch.nn.GRUCell(3, 2)
m.rcell = torch.nn.RNNCell(3, 2, nonlinearity="relu")
m.eval()
x = torch.randn(2, 5, 3)
with torch.no_grad():
    y, (h, c) = m.lstm(x)
    g, gh = m.gru(y.transpose(0, 1))
    r, rh = m.rnn(x[0])
    ch, cc = m.cell(x[:, 0])
    gc = m.gcell(x[:, 1], ch)
    rc = m.rcell(x[:, 2], gc)
torch.save({"state": m.state_dict(), "x": x}, sys.argv[1])
for t in (y, h, c, g, gh, r, rh, ch, cc, gc, rc):
    print(" ".join(repr(v) for v in t.flatten().tolist()))
]], path)
  T.truthy(ok, out)
  local ck = torch.load(path)
  local M = nn.Module:extend("Holder")
  function M:init()
    self.lstm = nn.LSTM(3, 4, 2, {bidirectional = true, proj_size = 2, batch_first = true})
    self.gru = nn.GRU(4, 3, {dropout = 0.5, num_layers = 2})
    self.rnn = nn.RNN(3, 2, {nonlinearity = "relu", bias = false})
    self.cell = nn.LSTMCell(3, 2)
    self.gcell = nn.GRUCell(3, 2)
    self.rcell = nn.RNNCell(3, 2, {nonlinearity = "relu"})
  end
  local m = M()
  m:load_state_dict(ck.state)
  m:eval()
  local x = ck.x
  local y, hc = m.lstm(x)
  local g, gh = m.gru(y:transpose(1, 2))
  local r, rh = m.rnn(x[1])
  local ch, cc = m.cell(x[{":", 1}])
  local gc = m.gcell(x[{":", 2}], ch)
  local rc = m.rcell(x[{":", 3}], gc)
  local lines = {}
  for line in out:gmatch("[^\n]+") do lines[#lines + 1] = T.numbers(line) end
  for i, t in ipairs({y, hc[1], hc[2], g, gh, r, rh, ch, cc, gc, rc}) do
    T.near(t:flatten():tolist(), lines[i], 1e-5, "output " .. i)
  end
end)

T.done()
