-- data.py of pytorch/examples word_language_model in tide: Dictionary (words in the order
-- first seen; ids are 1-based here, as tide's Embedding and NLLLoss take them) and Corpus
-- (train, valid and test as int64 tensors of word ids, one "<eos>" after each line).
local torch = torch or require("torch")

local Dictionary = {}
Dictionary.__index = Dictionary

function Dictionary.new()
  return setmetatable({word2idx = {}, idx2word = {}}, Dictionary)
end

function Dictionary:add_word(word)
  if self.word2idx[word] == nil then
    self.idx2word[#self.idx2word + 1] = word
    self.word2idx[word] = #self.idx2word
  end
  return self.word2idx[word]
end

function Dictionary:__len() return #self.idx2word end

local Corpus = {}
Corpus.__index = Corpus

function Corpus.new(path)
  local self = setmetatable({dictionary = Dictionary.new()}, Corpus)
  self.train = self:tokenize(path .. "/train.txt")
  self.valid = self:tokenize(path .. "/valid.txt")
  self.test = self:tokenize(path .. "/test.txt")
  return self
end

-- The words of a line (split at whitespace, as Python's str.split) and "<eos>".
local function line_words(line)
  local words = {}
  for w in line:gmatch("%S+") do words[#words + 1] = w end
  words[#words + 1] = "<eos>"
  return words
end

-- Tokenizes a text file: adds its words to the dictionary, returns their ids.
function Corpus:tokenize(path)
  local f = assert(io.open(path, "r"))
  local ids = {}
  for line in f:lines() do
    for _, word in ipairs(line_words(line)) do ids[#ids + 1] = self.dictionary:add_word(word) end
  end
  f:close()
  return torch.tensor(ids, {dtype = "int64"})
end

return {Dictionary = Dictionary, Corpus = Corpus}
