-- The Transformer of PyTorch's word_language_model example (its model.py: PositionalEncoding
-- and TransformerModel) in tide. Returns the TransformerModel class;
-- TransformerModel.PositionalEncoding is the positional encoding.
--
--   local TransformerModel = dofile("examples/word_language_model/transformer_model.lua")
--   local model = TransformerModel(ntokens, emsize, nhead, nhid, nlayers, dropout)
--   local log_probs = model(data)   -- data: (sequence, batch) of 1-based word indices
--
-- As in PyTorch, TransformerModel is an nn.Transformer whose decoder stack is replaced by a
-- Linear to the vocabulary, so its state_dict keys are the original's (encoder.layers.0...,
-- encoder.norm, decoder, input_emb, pos_encoder.pe) and a checkpoint PyTorch saved loads.
local torch = require("torch")
local nn = torch.nn
local F = nn.functional

-- Adds sin/cos encodings of the position (the buffer pe, (max_len, 1, d_model)) to a
-- (sequence, batch, d_model) input, then dropout.
local PositionalEncoding = nn.Module:extend("PositionalEncoding")

function PositionalEncoding:init(d_model, dropout, max_len)
  dropout, max_len = dropout or 0.1, max_len or 5000
  self.dropout = nn.Dropout(dropout)
  local position = torch.arange(0, max_len, {dtype = "float32"}):unsqueeze(2)
  local div_term = (torch.arange(0, d_model, 2):float() * (-math.log(10000.0) / d_model)):exp()
  local pe = torch.zeros(max_len, d_model)
  pe[{":", {1, -1, 2}}] = torch.sin(position * div_term)
  pe[{":", {2, -1, 2}}] = torch.cos(position * div_term)
  self:register_buffer("pe", pe:unsqueeze(2))
end

function PositionalEncoding:forward(x)
  return self.dropout(x + self.pe[{{1, x:size(1)}}])
end

local TransformerModel = nn.Transformer:extend("TransformerModel")
TransformerModel.PositionalEncoding = PositionalEncoding

-- ntoken words, ninp-dim embeddings, nhead heads, nhid-wide feed-forward blocks, nlayers
-- encoder layers (their dropout is nn.Transformer's default 0.1, as in the original);
-- dropout applies to the positional encoding.
function TransformerModel:init(ntoken, ninp, nhead, nhid, nlayers, dropout)
  nn.Transformer.init(self, {d_model = ninp, nhead = nhead, dim_feedforward = nhid, num_encoder_layers = nlayers})
  self.model_type = "Transformer"
  self.src_mask = nil
  self.pos_encoder = PositionalEncoding(ninp, dropout or 0.5)
  self.input_emb = nn.Embedding(ntoken, ninp)
  self.ninp = ninp
  self.decoder = nn.Linear(ninp, ntoken)
  self:init_weights()
end

-- The causal mask of sz positions: 0 where a position may look, -inf after it.
function TransformerModel:_generate_square_subsequent_mask(sz)
  return nn.Transformer.generate_square_subsequent_mask(sz)
end

function TransformerModel:init_weights()
  local initrange = 0.1
  nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
  nn.init.zeros_(self.decoder.bias)
  nn.init.uniform_(self.decoder.weight, -initrange, initrange)
end

-- src: (sequence, batch) word indices -> (sequence, batch, ntoken) log-probabilities; each
-- position sees itself and the ones before it unless has_mask is false.
function TransformerModel:forward(src, has_mask)
  if has_mask == nil or has_mask then
    if self.src_mask == nil or self.src_mask:size(1) ~= src:size(1) then
      local w = self.input_emb.weight  -- the mask in the model's dtype (the scores' dtype)
      self.src_mask = self:_generate_square_subsequent_mask(src:size(1)):to{device = w.device, dtype = w.dtype}
    end
  else
    self.src_mask = nil
  end
  local x = self.input_emb(src) * math.sqrt(self.ninp)
  x = self.pos_encoder(x)
  local output = self.encoder(x, {mask = self.src_mask})
  output = self.decoder(output)
  return F.log_softmax(output, -1)
end

return TransformerModel
