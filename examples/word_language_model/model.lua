-- RNNModel of pytorch/examples word_language_model/model.py in tide: an Embedding encoder,
-- a recurrent module (nn.LSTM, nn.GRU, or nn.RNN with tanh or relu) and a Linear decoder,
-- optionally tied to the encoder's weights. The Transformer model of the example is
-- transformer_model.lua.
local torch = torch or require("torch")
local nn, F = torch.nn, torch.nn.functional

local RNNModel = nn.Module:extend("RNNModel")

function RNNModel:init(rnn_type, ntoken, ninp, nhid, nlayers, dropout, tie_weights)
  dropout = dropout or 0.5
  self.ntoken = ntoken
  self.drop = nn.Dropout(dropout)
  self.encoder = nn.Embedding(ntoken, ninp)
  if rnn_type == "LSTM" or rnn_type == "GRU" then
    self.rnn = nn[rnn_type](ninp, nhid, nlayers, {dropout = dropout})
  else
    local nonlinearity = ({RNN_TANH = "tanh", RNN_RELU = "relu"})[rnn_type]
    if nonlinearity == nil then
      error("An invalid option for `--model` was supplied, options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']", 0)
    end
    self.rnn = nn.RNN(ninp, nhid, nlayers, {nonlinearity = nonlinearity, dropout = dropout})
  end
  self.decoder = nn.Linear(nhid, ntoken)
  -- Optionally tie weights as in "Using the Output Embedding to Improve Language Models"
  -- (Press & Wolf 2016) and "Tying Word Vectors and Word Classifiers" (Inan et al. 2016).
  if tie_weights then
    if nhid ~= ninp then error("When using the tied flag, nhid must be equal to emsize", 0) end
    self.decoder.weight = self.encoder.weight
  end
  self:init_weights()
  self.rnn_type = rnn_type
  self.nhid = nhid
  self.nlayers = nlayers
end

function RNNModel:init_weights()
  local initrange = 0.1
  nn.init.uniform_(self.encoder.weight, -initrange, initrange)
  nn.init.zeros_(self.decoder.bias)
  nn.init.uniform_(self.decoder.weight, -initrange, initrange)
end

function RNNModel:forward(input, hidden)
  local emb = self.drop(self.encoder(input))
  local output
  output, hidden = self.rnn(emb, hidden)
  output = self.drop(output)
  local decoded = self.decoder(output)
  decoded = decoded:view(-1, self.ntoken)
  return F.log_softmax(decoded, {dim = 2}), hidden
end

function RNNModel:init_hidden(bsz)
  local weight = self:parameters()[1]
  local function zeros() return torch.zeros({self.nlayers, bsz, self.nhid}, {dtype = weight.dtype, device = weight.device}) end
  if self.rnn_type == "LSTM" then return {zeros(), zeros()} end
  return zeros()
end

return RNNModel
