-- torch.nn recurrent layers: RNN, LSTM, GRU and their cells RNNCell, LSTMCell, GRUCell, with
-- PyTorch's arguments, parameter names (weight_ih_l0, bias_hh_l1_reverse, weight_hr_l0),
-- gate order (LSTM i, f, g, o; GRU r, z, n) and initialisation U(-1/sqrt(hidden),
-- 1/sqrt(hidden)), so that a PyTorch state_dict loads and gives the same outputs.
-- Results as PyTorch's tuples, flattened at the top level: `output, h_n = rnn(x, h0)`,
-- `output, hc = lstm(x, {h0, c0})` with hc = {h_n, c_n}; `h = gru_cell(x, h)`,
-- `h, c = lstm_cell(x, {h, c})`. Each layer and direction runs as torch._rnn_layer
-- (tensor/autograd/rnn.cpp: the time loop in the engine), a cell as one step of it.
local torch = ...
local nn = torch.nn
local F, init, util = nn.functional, nn.init, nn._util
local fail, describe, repr = util.fail, util.describe, util.repr

-- Gates per mode: the rows of weight_ih are that many blocks of hidden_size.
local GATES = {RNN_TANH = 1, RNN_RELU = 1, LSTM = 4, GRU = 3}

local function shape_str(t) return util.shape_str(t.shape) end

-- An initial state of a layer or cell for x (the input with its batch dim): zeros of shape
-- `full` when v is nil, else v checked to be a tensor of shape full (without dim batch_dim for
-- an unbatched input) and x's dtype; returned with the batch dim, errors naming `op`.
local function initial_state(op, what, v, x, full, batch_dim, batched)
  if v == nil then return torch.zeros(full, {dtype = x.dtype, device = x.device}) end
  util.check_tensor(op, what, v)
  local want = table.move(full, 1, #full, 1, {})
  if not batched then table.remove(want, batch_dim) end
  if not util.same_shape(v.shape, want) then
    fail(op, "expected %s of shape %s, got %s", what, util.shape_str(want), shape_str(v))
  end
  if v.dtype ~= x.dtype then fail(op, "%s has dtype %s but input has dtype %s", what, v.dtype, x.dtype) end
  return batched and v or v:unsqueeze(batch_dim)
end

-- An LSTM's state {h, c}: checked to be a plain table of two values.
local function check_pair_state(op, hx, what)
  if type(hx) == "table" and getmetatable(hx) == nil then
    if #hx ~= 2 then fail(op, "hx must be a table %s, got a table of %d values", what, #hx) end
    return hx
  end
  fail(op, "hx must be a table %s, got %s", what, describe(hx))
end

-- Every parameter U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as PyTorch's RNNBase and
-- RNNCellBase do.
local function reset_uniform(self)
  local stdv = 1 / math.sqrt(self.hidden_size)
  for _, p in ipairs(self:parameters()) do init.uniform_(p, -stdv, stdv) end
end

---------------------------------------------------------------------------------------------
-- RNN, LSTM, GRU

-- The argument names of each layer in PyTorch's positional order.
local LAYER_ARGS = {
  RNN = {"input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first", "dropout",
         "bidirectional", "device", "dtype"},
  LSTM = {"input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
          "proj_size", "device", "dtype"},
  GRU = {"input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional",
         "device", "dtype"},
}
local LAYER_DEFAULTS = {num_layers = 1, nonlinearity = "tanh", bias = true, batch_first = false, dropout = 0,
                        bidirectional = false, proj_size = 0}

local function check_nonlinearity(op, v)
  if v ~= "tanh" and v ~= "relu" then
    fail(op, "nonlinearity must be \"tanh\" or \"relu\", got %s", describe(v))
  end
  return v
end

-- The parameters of layer k (0-based, as in the names) and direction suffix sfx ("" or
-- "_reverse"), read by name so that assigning or loading new tensors is honoured.
local function layer_weights(self, k, sfx)
  local s = "_l" .. k .. sfx
  return {ih = self["weight_ih" .. s], hh = self["weight_hh" .. s], b_ih = self["bias_ih" .. s],
          b_hh = self["bias_hh" .. s], hr = self["weight_hr" .. s]}
end

local function recurrent_class(name)
  local cls = util.module_class(name)

  function cls:init(...)
    local o = util.args(name, LAYER_ARGS[name], 2, LAYER_DEFAULTS, ...)
    self.input_size = util.check_int(name, "input_size", o.input_size, 1)
    self.hidden_size = util.check_int(name, "hidden_size", o.hidden_size, 1)
    self.num_layers = util.check_int(name, "num_layers", o.num_layers, 1)
    self.bias = util.check_bool(name, "bias", o.bias)
    self.batch_first = util.check_bool(name, "batch_first", o.batch_first)
    local p = util.check_number(name, "dropout", o.dropout)
    if not (p >= 0 and p <= 1) then fail(name, "dropout must be between 0 and 1, got %s", repr(p)) end
    self.dropout = p
    self.bidirectional = util.check_bool(name, "bidirectional", o.bidirectional)
    self.proj_size = util.check_int(name, "proj_size", o.proj_size or 0, 0)
    if self.proj_size >= self.hidden_size then
      fail(name, "proj_size (%d) must be smaller than hidden_size (%d)", self.proj_size, self.hidden_size)
    end
    if name == "RNN" then
      self.nonlinearity = check_nonlinearity(name, o.nonlinearity)
      self.mode = self.nonlinearity == "tanh" and "RNN_TANH" or "RNN_RELU"
    else
      self.mode = name
    end
    local gate_size = GATES[self.mode] * self.hidden_size
    local real_hidden = self.proj_size > 0 and self.proj_size or self.hidden_size
    local dirs = self.bidirectional and 2 or 1
    local fo = util.factory(o)
    for k = 0, self.num_layers - 1 do
      local in_size = k == 0 and self.input_size or real_hidden * dirs
      for d = 1, dirs do
        local s = "_l" .. k .. (d == 2 and "_reverse" or "")
        self["weight_ih" .. s] = nn.Parameter(torch.empty({gate_size, in_size}, fo))
        self["weight_hh" .. s] = nn.Parameter(torch.empty({gate_size, real_hidden}, fo))
        if self.bias then
          self["bias_ih" .. s] = nn.Parameter(torch.empty({gate_size}, fo))
          self["bias_hh" .. s] = nn.Parameter(torch.empty({gate_size}, fo))
        end
        if self.proj_size > 0 then
          self["weight_hr" .. s] = nn.Parameter(torch.empty({self.proj_size, self.hidden_size}, fo))
        end
      end
    end
    self:reset_parameters()
  end

  cls.reset_parameters = reset_uniform

  -- PyTorch's flatten_parameters packs the weights into one buffer for cuDNN (a no-op on the
  -- CPU); the engine's loop reads the parameters as they are, so there is nothing to do. Kept
  -- so that ported scripts (the word language model) run unchanged.
  function cls:flatten_parameters() end

  -- forward(input[, hx]): input (T, N, input_size) (N first with batch_first) or unbatched
  -- (T, input_size); hx h0 (or {h0, c0} for LSTM) of (num_layers * dirs, N, size), 2-D for
  -- an unbatched input; zeros when nil.
  function cls:forward(input, hx, ...)
    if select("#", ...) > 0 then fail(name, "forward takes (input[, hx]), got %d arguments", 2 + select("#", ...)) end
    local lstm = self.mode == "LSTM"
    util.check_tensor(name, "input", input)
    if input:dim() ~= 2 and input:dim() ~= 3 then
      fail(name, "expected input to be 2-D or 3-D, got a %d-D tensor of shape %s", input:dim(), shape_str(input))
    end
    local w0 = self.weight_ih_l0
    if input.dtype ~= w0.dtype then
      fail(name, "input has dtype %s but the parameters have dtype %s", input.dtype, w0.dtype)
    end
    if input:size(-1) ~= self.input_size then
      fail(name, "input.size(-1) must be equal to input_size: expected %d, got %d", self.input_size, input:size(-1))
    end
    local batched = input:dim() == 3
    local x = input
    if not batched then
      x = x:unsqueeze(2)
    elseif self.batch_first then
      x = x:transpose(1, 2)
    end
    if x:size(1) == 0 then fail(name, "expected a sequence length larger than 0, got input of shape %s", shape_str(input)) end
    local dirs = self.bidirectional and 2 or 1
    local nstate, batch = self.num_layers * dirs, x:size(2)
    local real_hidden = self.proj_size > 0 and self.proj_size or self.hidden_size
    -- The initial states, as (num_layers * dirs, batch, size).
    local function state(v, what, size)
      if torch.is_tensor(v) and v:dim() ~= (batched and 3 or 2) then
        fail(name, "%s must be %d-D for a %d-D input, got a %d-D tensor of shape %s", what, batched and 3 or 2,
             input:dim(), v:dim(), shape_str(v))
      end
      return initial_state(name, what, v, x, {nstate, batch, size}, 2, batched)
    end
    local h0, c0
    if lstm then
      if hx ~= nil then check_pair_state(name, hx, "{h0, c0}") end
      h0 = state(hx and hx[1], "h0", real_hidden)
      c0 = state(hx and hx[2], "c0", self.hidden_size)
    else
      h0 = state(hx, "hx", real_hidden)
    end
    local hn, cn = {}, {}
    for k = 0, self.num_layers - 1 do
      local outs = {}
      for d = 1, dirs do
        local i = k * dirs + d
        local w = layer_weights(self, k, d == 2 and "_reverse" or "")
        local out, h, c = torch._rnn_layer(self.mode, x, h0[i], c0 and c0[i], w.ih, w.hh, w.b_ih, w.b_hh, w.hr, d == 2)
        outs[d], hn[i], cn[i] = out, h, c
      end
      x = dirs == 2 and torch.cat(outs, 3) or outs[1]
      if k < self.num_layers - 1 and self.dropout > 0 and self.training then
        x = F.dropout(x, self.dropout, true)
      end
    end
    local h_n = torch.stack(hn, 1)
    local c_n = lstm and torch.stack(cn, 1) or nil
    if not batched then
      x, h_n = x:squeeze(2), h_n:squeeze(2)
      if c_n then c_n = c_n:squeeze(2) end
    elseif self.batch_first then
      x = x:transpose(1, 2)
    end
    if lstm then return x, {h_n, c_n} end
    return x, h_n
  end

  -- As PyTorch: the sizes, then the options that differ from the defaults.
  function cls:extra_repr()
    local s = string.format("%d, %d", self.input_size, self.hidden_size)
    if self.proj_size ~= 0 then s = s .. ", proj_size=" .. self.proj_size end
    if self.num_layers ~= 1 then s = s .. ", num_layers=" .. self.num_layers end
    if not self.bias then s = s .. ", bias=false" end
    if self.batch_first then s = s .. ", batch_first=true" end
    if self.dropout ~= 0 then s = s .. ", dropout=" .. repr(self.dropout) end
    if self.bidirectional then s = s .. ", bidirectional=true" end
    return s
  end
end

recurrent_class("RNN")
recurrent_class("LSTM")
recurrent_class("GRU")

---------------------------------------------------------------------------------------------
-- RNNCell, LSTMCell, GRUCell: one step, input (N, input_size) or unbatched (input_size).

local CELL_ARGS = {
  RNNCell = {"input_size", "hidden_size", "bias", "nonlinearity", "device", "dtype"},
  LSTMCell = {"input_size", "hidden_size", "bias", "device", "dtype"},
  GRUCell = {"input_size", "hidden_size", "bias", "device", "dtype"},
}

local function cell_class(name, gates)
  local cls = util.module_class(name)

  function cls:init(...)
    local o = util.args(name, CELL_ARGS[name], 2, {bias = true, nonlinearity = "tanh"}, ...)
    self.input_size = util.check_int(name, "input_size", o.input_size, 1)
    self.hidden_size = util.check_int(name, "hidden_size", o.hidden_size, 1)
    self.bias = util.check_bool(name, "bias", o.bias)
    if name == "RNNCell" then
      self.nonlinearity = check_nonlinearity(name, o.nonlinearity)
      self.mode = self.nonlinearity == "tanh" and "RNN_TANH" or "RNN_RELU"
    else
      self.mode = name == "LSTMCell" and "LSTM" or "GRU"
    end
    local fo = util.factory(o)
    self.weight_ih = nn.Parameter(torch.empty({gates * self.hidden_size, self.input_size}, fo))
    self.weight_hh = nn.Parameter(torch.empty({gates * self.hidden_size, self.hidden_size}, fo))
    if self.bias then
      self.bias_ih = nn.Parameter(torch.empty({gates * self.hidden_size}, fo))
      self.bias_hh = nn.Parameter(torch.empty({gates * self.hidden_size}, fo))
    end
    self:reset_parameters()
  end

  cls.reset_parameters = reset_uniform

  -- forward(input[, hx]): hx is h (or {h, c} for LSTMCell) of (N, hidden_size), 1-D for an
  -- unbatched input; zeros when nil. Returns h' (and c' for LSTMCell).
  function cls:forward(input, hx, ...)
    if select("#", ...) > 0 then fail(name, "forward takes (input[, hx]), got %d arguments", 2 + select("#", ...)) end
    local lstm = self.mode == "LSTM"
    util.check_tensor(name, "input", input)
    if input:dim() ~= 1 and input:dim() ~= 2 then
      fail(name, "expected input to be 1-D or 2-D, got a %d-D tensor of shape %s", input:dim(), shape_str(input))
    end
    if input.dtype ~= self.weight_ih.dtype then
      fail(name, "input has dtype %s but the parameters have dtype %s", input.dtype, self.weight_ih.dtype)
    end
    if input:size(-1) ~= self.input_size then
      fail(name, "input.size(-1) must be equal to input_size: expected %d, got %d", self.input_size, input:size(-1))
    end
    local batched = input:dim() == 2
    local x = batched and input or input:unsqueeze(1)
    local function state(v, what) return initial_state(name, what, v, x, {x:size(1), self.hidden_size}, 1, batched) end
    local h, c
    if lstm then
      if hx ~= nil then check_pair_state(name, hx, "{h, c}") end
      h, c = state(hx and hx[1], "h"), state(hx and hx[2], "c")
    else
      h = state(hx, "hx")
    end
    -- One step of the layer's loop.
    local _, h1, c1 = torch._rnn_layer(self.mode, x:unsqueeze(1), h, c, self.weight_ih, self.weight_hh, self.bias_ih,
                                       self.bias_hh, nil, false)
    if not batched then
      h1 = h1:squeeze(1)
      if c1 then c1 = c1:squeeze(1) end
    end
    if lstm then return h1, c1 end
    return h1
  end

  function cls:extra_repr()
    local s = string.format("%d, %d", self.input_size, self.hidden_size)
    if not self.bias then s = s .. ", bias=false" end
    if self.nonlinearity ~= nil and self.nonlinearity ~= "tanh" then s = s .. ", nonlinearity=" .. self.nonlinearity end
    return s
  end
end

cell_class("RNNCell", 1)
cell_class("LSTMCell", 4)
cell_class("GRUCell", 3)
