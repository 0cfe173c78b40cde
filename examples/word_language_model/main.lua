-- pytorch/examples word_language_model/main.py in tide, on the small text of data/tides:
-- trains a word-level language model (model.lua's RNNModel with --model LSTM, GRU, RNN_TANH
-- or RNN_RELU; transformer_model.lua's TransformerModel with --model Transformer) by
-- truncated back-propagation through time (batchify, get_batch, repackage_hidden), gradient
-- clipping and plain SGD, annealing the learning rate when the validation loss stops
-- improving, then reports the test loss of the best model. main.py beside it is the PyTorch
-- original (less its CUDA and ONNX options); the options are the same, plus
-- --init F.pt (main.py's --save-init: the same initial weights, the same printed losses)
-- and --compile 1: the training step of each batch (zero_grad, forward, loss, backward,
-- gradient clipping, the SGD update) under torch.compile, the same numbers printed, then
-- the compile statistics.
--
--   tide examples/word_language_model/main.lua [--model LSTM] [--epochs 40] [--tied] [--compile 1] ...
local torch = torch or require("torch")
local nn = torch.nn

local here = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local data = dofile(here .. "data.lua")

local args = {data = here .. "../../data/tides", model = "LSTM", emsize = 200, nhid = 200, nlayers = 2, lr = 20,
              clip = 0.25, epochs = 40, batch_size = 20, bptt = 35, dropout = 0.2, tied = false, seed = 1111,
              log_interval = 200, save = "model.pt", nhead = 2, dry_run = false, compile = 0}
local NUMBERS = {emsize = true, nhid = true, nlayers = true, lr = true, clip = true, epochs = true, batch_size = true,
                 bptt = true, dropout = true, seed = true, log_interval = true, nhead = true,
                 encoder_dropout = true, compile = true}
local STRINGS = {data = true, model = true, save = true, init = true}
local i = 1
while i <= #arg do
  local name = arg[i]:match("^%-%-(.+)$")
  local key = name and name:gsub("-", "_")
  if key == "tied" or key == "dry_run" then
    args[key] = true; i = i + 1
  elseif NUMBERS[key] then
    args[key] = assert(tonumber(arg[i + 1]), arg[i] .. " takes a number"); i = i + 2
  elseif STRINGS[key] then
    args[key] = assert(arg[i + 1], arg[i] .. " takes a value"); i = i + 2
  else
    error("main.lua: unknown option " .. tostring(arg[i]), 0)
  end
end

-- Set the random seed manually for reproducibility.
torch.manual_seed(args.seed)

-------------------------------------------------------------------------------
-- Load data
-------------------------------------------------------------------------------

local corpus = data.Corpus.new(args.data)

-- Starting from sequential data, batchify arranges the dataset into columns: with the
-- alphabet as the sequence and batch size 4, the columns are a..f, g..l, m..r, s..x.
-- The columns are treated as independent by the model (the dependence of g on f cannot
-- be learned), which allows more efficient batch processing.
local function batchify(d, bsz)
  -- Work out how cleanly we can divide the dataset into bsz parts.
  local nbatch = d:size(1) // bsz
  -- Trim off any extra elements that wouldn't cleanly fit (remainders).
  d = d:narrow(1, 1, nbatch * bsz)
  -- Evenly divide the data across the bsz batches.
  return d:view(bsz, -1):t():contiguous()
end

local eval_batch_size = 10
local train_data = batchify(corpus.train, args.batch_size)
local val_data = batchify(corpus.valid, eval_batch_size)
local test_data = batchify(corpus.test, eval_batch_size)

-------------------------------------------------------------------------------
-- Build the model
-------------------------------------------------------------------------------

local ntokens = #corpus.dictionary
local transformer = args.model == "Transformer"

-- The Transformer model of this example lives in its own file, returning the class
-- TransformerModel(ntoken, ninp, nhead, nhid, nlayers, dropout) of model.py.
local function transformer_model()
  local path = here .. "transformer_model.lua"
  local f = io.open(path, "r")
  if not f then
    error("main.lua: --model Transformer needs " .. path .. " (the example's TransformerModel), which is not there", 0)
  end
  f:close()
  local m = dofile(path)
  return type(m) == "table" and rawget(m, "TransformerModel") or m
end

local model
if transformer then
  model = transformer_model()(ntokens, args.emsize, args.nhead, args.nhid, args.nlayers, args.dropout)
else
  model = dofile(here .. "model.lua")(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout, args.tied)
end
-- (This port's --encoder-dropout, as main.py's: the dropout inside the encoder layers.)
if transformer and args.encoder_dropout then
  for _, m in ipairs(model.encoder:modules()) do
    if m:isinstance(nn.Dropout) then
      m.p = args.encoder_dropout
    elseif m:isinstance(nn.MultiheadAttention) then
      m.dropout = args.encoder_dropout
    end
  end
end
if args.init then model:load_state_dict(torch.load(args.init)) end

local criterion = nn.NLLLoss()

-------------------------------------------------------------------------------
-- Training code
-------------------------------------------------------------------------------

-- Wraps hidden states in new Tensors, to detach them from their history.
local function repackage_hidden(h)
  if torch.is_tensor(h) then return h:detach() end
  local out = {}
  for k, v in ipairs(h) do out[k] = repackage_hidden(v) end
  return out
end

-- get_batch subdivides the source data into chunks of length args.bptt, starting at row i
-- (1-based): the inputs, and the targets one row later flattened. The chunks are along
-- dim 1, the sequence dim of the recurrent layer (batchify made the batch dim 2).
local function get_batch(source, i)
  local seq_len = math.min(args.bptt, source:size(1) - i)
  local d = source[{{i, i + seq_len - 1}}]
  local target = source[{{i + 1, i + seq_len}}]:reshape(-1)
  return d, target
end

local function evaluate(data_source)
  -- Turn on evaluation mode which disables dropout.
  model:eval()
  local total_loss = 0.0
  local hidden
  if not transformer then hidden = model:init_hidden(eval_batch_size) end
  torch.no_grad(function()
    for i = 1, data_source:size(1) - 1, args.bptt do
      local d, targets = get_batch(data_source, i)
      local output
      if transformer then
        output = model(d):view(-1, ntokens)
      else
        output, hidden = model(d, hidden)
        hidden = repackage_hidden(hidden)
      end
      total_loss = total_loss + d:size(1) * criterion(output, targets):item()
    end
  end)
  return total_loss / (data_source:size(1) - 1)
end

local lr = args.lr
local epoch

-- One training step on a batch: the loss, and for the recurrent models the new hidden state
-- (detached). The hidden state goes in and out as tensors (h, or h and c for the LSTM), not
-- as a table, because torch.compile guards tensor arguments and results, not tables.
local function train_step(d, targets, h, c)
  model:zero_grad()
  local output, hidden
  if transformer then
    output = model(d):view(-1, ntokens)
  else
    output, hidden = model(d, c and {h, c} or h)
  end
  local loss = criterion(output, targets)
  loss:backward()

  -- clip_grad_norm_ helps prevent the exploding gradient problem in RNNs / LSTMs.
  nn.utils.clip_grad_norm_(model:parameters(), args.clip)
  for _, p in ipairs(model:parameters()) do p.data:add_(p.grad, {alpha = -lr}) end

  if transformer then return loss end
  if c then return loss, hidden[1]:detach(), hidden[2]:detach() end
  return loss, hidden:detach()
end
if args.compile ~= 0 then train_step = torch.compile(train_step) end

local function train()
  -- Turn on training mode which enables dropout.
  model:train()
  local total_loss = 0.0
  local start_time = torch.utils.clock()
  local hidden
  if not transformer then hidden = model:init_hidden(args.batch_size) end
  local batch = 0
  for i = 1, train_data:size(1) - 1, args.bptt do
    local d, targets = get_batch(train_data, i)
    -- Starting each batch, we detach the hidden state from how it was previously produced.
    -- If we didn't, the model would try backpropagating all the way to start of the dataset.
    -- (train_step returns it detached, as repackage_hidden would.)
    local loss
    if transformer then
      loss = train_step(d, targets)
    elseif torch.is_tensor(hidden) then
      loss, hidden = train_step(d, targets, hidden)
    else
      local h, c
      loss, h, c = train_step(d, targets, hidden[1], hidden[2])
      hidden = {h, c}
    end

    total_loss = total_loss + loss:item()

    if batch % args.log_interval == 0 and batch > 0 then
      local cur_loss = total_loss / args.log_interval
      local elapsed = torch.utils.clock() - start_time
      print(string.format("| epoch %3d | %5d/%5d batches | lr %02.2f | ms/batch %5.2f | loss %5.2f | ppl %8.2f",
                          epoch, batch, train_data:size(1) // args.bptt, lr, elapsed * 1000 / args.log_interval,
                          cur_loss, math.exp(cur_loss)))
      total_loss = 0
      start_time = torch.utils.clock()
    end
    if args.dry_run then break end
    batch = batch + 1
  end
end

-- Loop over epochs.
local best_val_loss
for e = 1, args.epochs do
  epoch = e
  local epoch_start_time = torch.utils.clock()
  train()
  local val_loss = evaluate(val_data)
  print(string.rep("-", 89))
  print(string.format("| end of epoch %3d | time: %5.2fs | valid loss %5.2f | valid ppl %8.2f", epoch,
                      torch.utils.clock() - epoch_start_time, val_loss, math.exp(val_loss)))
  print(string.rep("-", 89))
  -- Save the model if the validation loss is the best we've seen so far.
  if not best_val_loss or val_loss < best_val_loss then
    torch.save(model:state_dict(), args.save)
    best_val_loss = val_loss
  else
    -- Anneal the learning rate if no improvement has been seen in the validation dataset.
    lr = lr / 4.0
  end
end

-- Load the best saved model.
model:load_state_dict(torch.load(args.save))
-- A no-op here, kept as in main.py (PyTorch packs the weights for cuDNN).
if not transformer then model.rnn:flatten_parameters() end

-- Run on test data.
local test_loss = evaluate(test_data)
print(string.rep("=", 89))
print(string.format("| End of training | test loss %5.2f | test ppl %8.2f", test_loss, math.exp(test_loss)))
print(string.rep("=", 89))
if args.compile ~= 0 then
  local s = torch.compiler.stats(train_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
