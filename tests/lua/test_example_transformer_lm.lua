-- The Transformer of PyTorch's word_language_model example
-- (examples/word_language_model/transformer_model.lua) against the original model run by
-- PyTorch 1.13 (the Python below follows the example's model.py and main.py): the same
-- initial weights (PyTorch's state_dict, saved as .pt and loaded with strict keys), the text
-- of data/tides/train.txt tokenised as the example's data.py does (words split on spaces plus
-- "<eos>" per line), batchify and get_batch as main.py, dropout 0, float32; the losses of 8
-- training steps (NLL, clip_grad_norm_ 0.25, plain SGD with lr 5) agree within 1e-4.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn

if not T.have_python_module("torch") then
  print("skipped: the PyTorch reference (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
  return
end

local ROOT = dir .. "../../"
local TRAIN = ROOT .. "data/tides/train.txt"
local ARGS = {emsize = 16, nhead = 2, nhid = 32, nlayers = 2, bsz = 4, bptt = 8, steps = 8, lr = 5.0,
                      clip = 0.25}

local PY = [=[
import math, sys, torch
import torch.nn as nn
import torch.nn.functional as F
path, init_path, emsize, nhead, nhid, nlayers, bsz, bptt, steps, lr, clip = sys.argv[1:12]
emsize, nhead, nhid, nlayers, bsz, bptt, steps = map(int, (emsize, nhead, nhid, nlayers, bsz, bptt, steps))
lr, clip = float(lr), float(clip)

# data.py: a word index in order of first appearance, "<eos>" ending each line
words, ids = {}, []
for line in open(path, encoding="utf8"):
    for w in line.split() + ["<eos>"]:
        ids.append(words.setdefault(w, len(words)))
data = torch.tensor(ids, dtype=torch.int64)

class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, d_model)
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(1))
    def forward(self, x):
        return self.dropout(x + self.pe[:x.size(0), :])

class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)
    def forward(self, src):
        if self.src_mask is None or self.src_mask.size(0) != len(src):
            n = len(src)
            self.src_mask = torch.zeros(n, n).masked_fill(torch.ones(n, n).triu(1) == 1, float("-inf"))
        x = self.pos_encoder(self.input_emb(src) * math.sqrt(self.ninp))
        return F.log_softmax(self.decoder(self.encoder(x, mask=self.src_mask)), dim=-1)

torch.manual_seed(1)
ntokens = len(words)
model = TransformerModel(ntokens, emsize, nhead, nhid, nlayers, 0.0)
for m in model.modules():  # dropout 0 everywhere (the layers' default is 0.1)
    if isinstance(m, nn.Dropout):
        m.p = 0.0
    if isinstance(m, nn.MultiheadAttention):
        m.dropout = 0.0
torch.save(model.state_dict(), init_path)

nbatch = data.size(0) // bsz
train = data[:nbatch * bsz].view(bsz, -1).t().contiguous()
model.train()
criterion = nn.NLLLoss()
print(ntokens)
for step, i in enumerate(range(0, train.size(0) - 1, bptt)):
    if step == steps:
        break
    seq_len = min(bptt, len(train) - 1 - i)
    x, y = train[i:i + seq_len], train[i + 1:i + 1 + seq_len].reshape(-1)
    model.zero_grad()
    loss = criterion(model(x).view(-1, ntokens), y)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    for p in model.parameters():
        p.data.add_(p.grad, alpha=-lr)
    print(repr(loss.item()))
]=]

-- data.py's tokenisation, with 1-based indices.
local function tokenize(path)
  local index, ids, n = {}, {}, 0
  for line in io.lines(path) do
    local words = {}
    for w in line:gmatch("%S+") do words[#words + 1] = w end
    words[#words + 1] = "<eos>"
    for _, w in ipairs(words) do
      if not index[w] then n = n + 1; index[w] = n end
      ids[#ids + 1] = index[w]
    end
  end
  return torch.tensor(ids), n
end

T.test("TransformerModel trains as PyTorch's: the same losses from the same weights", function()
  local a = ARGS
  local init = T.tmpdir() .. "/lm_init.pt"
  local out, ok = T.python(PY, TRAIN, init, a.emsize, a.nhead, a.nhid, a.nlayers, a.bsz, a.bptt, a.steps, a.lr, a.clip)
  T.truthy(ok, out)
  local want = T.numbers(out)
  local data, ntokens = tokenize(TRAIN)
  T.eq(ntokens, math.tointeger(want[1]), "the vocabulary size")

  local TransformerModel = dofile(ROOT .. "examples/word_language_model/transformer_model.lua")
  local model = TransformerModel(ntokens, a.emsize, a.nhead, a.nhid, a.nlayers, 0.0)
  for _, m in ipairs(model:modules()) do
    if m:isinstance(nn.Dropout) then m.p = 0 end
    if m:isinstance(nn.MultiheadAttention) then m.dropout = 0 end
  end
  local r = model:load_state_dict(torch.load(init))  -- strict: PyTorch's keys
  T.eq(#r.missing_keys + #r.unexpected_keys, 0)

  local nbatch = data:size(1) // a.bsz
  local train = data:narrow(1, 1, nbatch * a.bsz):view(a.bsz, -1):t():contiguous()
  model:train()
  local criterion = nn.NLLLoss()
  local step = 0
  for i = 1, train:size(1) - 1, a.bptt do
    if step == a.steps then break end
    step = step + 1
    local seq_len = math.min(a.bptt, train:size(1) - i)
    local x, y = train:narrow(1, i, seq_len), train:narrow(1, i + 1, seq_len):reshape(-1)
    model:zero_grad()
    local loss = criterion(model(x):view(-1, ntokens), y)
    loss:backward()
    nn.utils.clip_grad_norm_(model:parameters(), a.clip)
    torch.no_grad(function()
      for _, p in ipairs(model:parameters()) do p:add_(p.grad * -a.lr) end
    end)
    local l = loss:item()
    T.truthy(math.abs(l - want[step + 1]) <= 1e-4 * math.abs(want[step + 1]),
             string.format("step %d: tide's loss %.8g, PyTorch's %.8g", step, l, want[step + 1]))
  end
  T.eq(step, a.steps)
  T.eq(#want, a.steps + 1)
end)

T.done()
