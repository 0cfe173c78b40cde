-- Rows of the conformance table for the recurrent layers (nn.RNN, nn.LSTM, nn.GRU and their
-- cells), checked against PyTorch 1.13 through ref_rnn.py: the module is built with the same
-- keywords, gets the case's weights (b, a list in named_parameters order) and runs on the
-- case's input and initial states (a = {x[, h0[, c0]]}), in training or eval mode. One row per
-- module gives the outputs (with a gradient column: first and second derivatives against
-- finite differences in float64, the second through the engine loop's create_graph path); a second
-- gives the gradients of a fixed loss, compared with PyTorch's. Dropout is checked as p = 0 in
-- training or p > 0 in eval (its random draws are tide's own; tests/lua/test_nn_rnn.lua checks
-- that it is applied).
local G, add = ...

local DTYPES = {"float32", "float64"}
local TOL = {float32 = {1e-4, 1e-5}, float64 = {1e-12, 1e-13}}

-- Keyword variants per module. train: training mode; unbatched: a 2-D input (1-D for a cell);
-- states: initial states given.
local VARIANTS = {
  RNN = {{}, {kw = {nonlinearity = "relu"}, states = true}, {kw = {num_layers = 2, bias = false}},
         {kw = {batch_first = true, bidirectional = true}, states = true},
         {kw = {num_layers = 2, bidirectional = true, dropout = 0.5}, unbatched = true, states = true},
         {kw = {num_layers = 3, dropout = 0.0, nonlinearity = "relu"}, train = true}},
  LSTM = {{}, {kw = {num_layers = 2}, states = true}, {kw = {bias = false, batch_first = true}, states = true},
          {kw = {bidirectional = true, num_layers = 2, dropout = 0.3}, states = true},
          {kw = {proj_size = 2}, states = true, train = true},
          {kw = {proj_size = 1, num_layers = 2, bidirectional = true, batch_first = true}, states = true},
          {kw = {num_layers = 2, dropout = 0.0}, unbatched = true, states = true, train = true},
          {kw = {proj_size = 2}, unbatched = true}},
  GRU = {{}, {kw = {num_layers = 2}, states = true, train = true}, {kw = {bias = false}, states = true},
         {kw = {batch_first = true, bidirectional = true, num_layers = 2, dropout = 0.5}, states = true},
         {kw = {bidirectional = true}, unbatched = true, states = true}},
  RNNCell = {{}, {kw = {nonlinearity = "relu"}, states = true}, {kw = {bias = false}, states = true, unbatched = true}},
  LSTMCell = {{}, {states = true}, {kw = {bias = false}, states = true, unbatched = true}},
  GRUCell = {{}, {states = true, train = true}, {kw = {bias = false}, states = true, unbatched = true}},
}

local CELL = {RNNCell = true, LSTMCell = true, GRUCell = true}
local LSTM = {LSTM = true, LSTMCell = true}

-- The row's keywords plus the creation options.
local function options(kw, dtype, device)
  local o = {dtype = dtype, device = device}
  for k, v in pairs(kw or {}) do o[k] = v end
  return o
end

-- The weights of a fresh module of that kind, as a list in named_parameters order (shapes
-- only: values are drawn here).
local function weight_list(cls, p, dt)
  local m = torch.nn[cls](p.input_size, p.hidden_size, options(p.kw, dt))
  local ws = {}
  for _, w in ipairs(m:parameters()) do ws[#ws + 1] = G.make(w.shape, dt, {fn = function() return 0.6 * G.randn() end}) end
  return ws
end

local function cases(cls)
  return function()
    local cs = {}
    for _, dt in ipairs(DTYPES) do
      for _, v in ipairs(VARIANTS[cls]) do
        local kw = v.kw or {}
        local p = {cls = cls, input_size = G.randint(1, 3), hidden_size = G.randint((kw.proj_size or 1) + 1, 4), kw = G.kwargs(kw),
                   train = v.train or false}
        local dirs = kw.bidirectional and 2 or 1
        local layers = kw.num_layers or 1
        local real = (kw.proj_size or 0) > 0 and kw.proj_size or p.hidden_size
        local T, N = G.randint(1, 4), G.randint(1, 3)
        local xshape, hshape, cshape
        if CELL[cls] then
          xshape = v.unbatched and {p.input_size} or {N, p.input_size}
          hshape = v.unbatched and {p.hidden_size} or {N, p.hidden_size}
          cshape = hshape
        else
          xshape = v.unbatched and {T, p.input_size} or (kw.batch_first and {N, T, p.input_size} or {T, N, p.input_size})
          hshape = v.unbatched and {layers * dirs, real} or {layers * dirs, N, real}
          cshape = v.unbatched and {layers * dirs, p.hidden_size} or {layers * dirs, N, p.hidden_size}
        end
        local a = {G.make(xshape, dt, {edges = 0})}
        if v.states then
          a[2] = G.make(hshape, dt, {edges = 0})
          if LSTM[cls] then a[3] = G.make(cshape, dt, {edges = 0}) end
        end
        cs[#cs + 1] = {a = a, b = weight_list(cls, p, dt), p = p}
      end
    end
    return cs
  end
end

-- The module of a case with the case's weights as its parameters (assigned, so that the
-- gradient column differentiates through them), in the case's mode.
local function module_of(b, p)
  local m = torch.nn[p.cls](p.input_size, p.hidden_size, options(p.kw, b[1].dtype, b[1].device))
  local names = {}
  for name in m:named_parameters() do names[#names + 1] = name end
  for i, name in ipairs(names) do m[name] = b[i] end
  m:train(p.train)
  return m
end

-- Runs the module; the outputs flattened as PyTorch's nested tuples are by ref_rnn._flat.
local function run(m, p, a)
  local hx = a[2]
  if LSTM[p.cls] and a[2] ~= nil then hx = {a[2], a[3]} end
  local out, h = m(a[1], hx)
  if CELL[p.cls] then
    if LSTM[p.cls] then return {out, h} end
    return {out}
  end
  if LSTM[p.cls] then return {out, h[1], h[2]} end
  return {out, h}
end

for _, cls in ipairs({"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"}) do
  add({name = "nn." .. cls, grad = {"a", "b"}, gradgrad = true, out = "same*", tol = TOL,
       ref = "__import__('ref_rnn').forward(a, b, p)", cases = cases(cls),
       call = function(a, b, _, p) return table.unpack(run(module_of(b, p), p, a)) end})

  -- The gradients of sum_k sum(out_k^2) / k (k from 1) with respect to x, the states and the
  -- parameters, against PyTorch's autograd.
  add({name = "nn." .. cls .. " backward", out = "same*", tol = TOL,
       ref = "__import__('ref_rnn').backward(a, b, p)", cases = cases(cls),
       call = function(a, b, _, p)
         local ws = {}
         for i, w in ipairs(b) do ws[i] = w:clone():requires_grad_() end
         local m = module_of(ws, p)
         local xs = {}
         for i, t in ipairs(a) do xs[i] = t:clone():requires_grad_() end
         local outs = run(m, p, xs)
         local loss = 0
         for k, o in ipairs(outs) do loss = loss + (o * o):sum() / k end
         local inputs = {}
         for _, t in ipairs(xs) do inputs[#inputs + 1] = t end
         for _, w in ipairs(m:parameters()) do inputs[#inputs + 1] = w end
         local grads = torch.autograd.grad({loss}, inputs)
         return table.unpack(grads, 1, #inputs)
       end})
end
