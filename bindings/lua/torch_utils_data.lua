-- torch.utils.data: datasets, samplers and the DataLoader, as PyTorch's, in Lua. Receives the
-- torch table (after torch.nn, whose argument helpers it uses).
--
-- Indices are 1-based, as everywhere in tide: a dataset's get(i) takes 1 <= i <= #dataset and
-- samplers yield such indices. A sample is what get returns: one value, or several (as a
-- Python dataset returns a tuple); a batch keeps that shape, so that
--
--   local loader = torch.utils.data.DataLoader(dataset, {batch_size = 64, shuffle = true})
--   for epoch = 1, 10 do
--     for x, y in loader:iter() do ... end       -- each iter() is one epoch
--   end
--   print(#loader)                                -- the number of batches
--
-- reads like PyTorch's `for x, y in loader:`.
local torch = ...
local util = torch.nn._util
local fail, describe = util.fail, util.describe

local data = {}
torch.utils.data = data

---------------------------------------------------------------------------------------------
-- Classes. Instances have their class as metatable; Class:extend("Name") makes a subclass and
-- calling a class makes an instance and runs its init. Integer keys of an instance of a class
-- with get go to it (ds[i] is the first value of ds:get(i)); #instance calls its len.

local function is_instance_of(v, cls)
  local c = type(v) == "table" and getmetatable(v)
  while type(c) == "table" do
    if c == cls then return true end
    local meta = getmetatable(c)
    c = meta and meta.parent
  end
  return false
end

local function construct(cls, ...)
  local self = setmetatable({}, cls)
  self:init(...)
  return self
end

local function class_tostring(cls) return "class " .. cls._name end

-- The metamethods of instances, copied into every subclass (a subclass may define its own).
local function install_metamethods(cls, parent)
  cls.__index = function(self, k)
    if math.type(k) == "integer" and cls.get ~= nil then return (self:get(k)) end
    return cls[k]  -- samplers and loaders are not indexed: nil, as a plain table
  end
  for _, mm in ipairs{"__len", "__add", "__tostring"} do
    if rawget(cls, mm) == nil and parent then cls[mm] = parent[mm] end
  end
end

local function new_class(name, parent)
  local cls = setmetatable({_name = name}, {__index = parent, __call = construct, __tostring = class_tostring,
                                            parent = parent})
  install_metamethods(cls, parent)
  return cls
end

local function extend(self, name)
  if type(name) ~= "string" or name == "" then
    fail(rawget(self, "_name") and self._name .. ":extend" or "extend", "expected a class name string, got %s",
         describe(name))
  end
  if rawget(self, "_name") == nil then fail(name, "call extend on a class, not on an instance") end
  return new_class(name, self)
end

-- The keyword table of a random op: {generator = g}, or nothing for the default stream.
local function generator_kw(g) return g ~= nil and {generator = g} or nil end

local function instance_tostring(self) return getmetatable(self)._name .. "()" end

-- A list of integers given as a table or a 1-D integer tensor, as a Lua table.
local function index_list(op, name, v)
  if torch.is_tensor(v) then
    if v:dim() ~= 1 or v:is_floating_point() then
      fail(op, "%s must be a 1-D integer tensor or a table of integers, got a %s tensor of shape %s", name, v.dtype,
           util.shape_str(v.shape))
    end
    return v:tolist()
  end
  if type(v) ~= "table" or getmetatable(v) ~= nil then
    fail(op, "%s must be a table of integers or a 1-D integer tensor, got %s", name, describe(v))
  end
  for i, x in ipairs(v) do
    if math.type(x) ~= "integer" then fail(op, "%s[%d] must be an integer, got %s", name, i, describe(x)) end
  end
  return v
end

---------------------------------------------------------------------------------------------
-- Datasets.

-- Dataset: subclasses define get(i) (or __getitem(i)) returning the sample i, and len() (or
-- __len()) returning the number of samples.
local Dataset = new_class("Dataset")
data.Dataset = Dataset
Dataset.extend = extend
Dataset.__tostring = instance_tostring

function Dataset:init() end

-- The dispatcher behind #dataset (a subclass's own __len replaces it).
local function dispatch_len(self) return self:len() end
Dataset.__len = dispatch_len

function Dataset:get(i)
  local getitem = self.__getitem
  if getitem == nil then fail(getmetatable(self)._name, "define get(i) or __getitem(i) to index the dataset") end
  return getitem(self, i)
end

function Dataset:len()
  local len = self.__len
  if len == nil or len == dispatch_len then
    fail(getmetatable(self)._name, "define len() or __len() to give the dataset's size")
  end
  return len(self)
end

-- dataset1 + dataset2: their concatenation.
function Dataset.__add(a, b) return data.ConcatDataset({a, b}) end

-- IterableDataset: a stream of samples; subclasses define iter() returning an iterator (a
-- function, or the function, state and control of a generic for) that yields samples.
local IterableDataset = Dataset:extend("IterableDataset")
data.IterableDataset = IterableDataset

function IterableDataset:iter()
  fail(getmetatable(self)._name, "define iter() returning an iterator over the samples")
end

function IterableDataset:get()
  fail(getmetatable(self)._name, "an IterableDataset is not indexed; iterate it with iter()")
end

-- The samples of an IterableDataset: a function returning the next sample's values (nothing
-- at the end).
local function stream(ds)
  local f, s, c = ds:iter()
  if type(f) ~= "function" then
    fail(getmetatable(ds)._name, "iter() must return an iterator function, got %s", describe(f))
  end
  return function()
    local values = table.pack(f(s, c))
    if values[1] == nil then return nil end
    c = values[1]
    return values
  end
end

-- TensorDataset(t1, t2, ...): sample i is t1[i], t2[i], ... (the tensors' first dims agree).
local TensorDataset = Dataset:extend("TensorDataset")
data.TensorDataset = TensorDataset

function TensorDataset:init(...)
  local n = select("#", ...)
  if n == 0 then fail("TensorDataset", "expected at least one tensor") end
  self.tensors = {}
  for i = 1, n do
    local t = select(i, ...)
    if not torch.is_tensor(t) then fail("TensorDataset", "argument %d is %s, expected a tensor", i, describe(t)) end
    if t:dim() == 0 then fail("TensorDataset", "argument %d is a 0-dim tensor; samples are taken along dim 1", i) end
    if t:size(1) ~= select(1, ...):size(1) then
      fail("TensorDataset", "size mismatch between tensors: argument 1 has %d samples, argument %d has %d",
           select(1, ...):size(1), i, t:size(1))
    end
    self.tensors[i] = t
  end
end

function TensorDataset:len() return self.tensors[1]:size(1) end

function TensorDataset:get(i)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t[i] end
  return table.unpack(out, 1, #self.tensors)
end

-- Subset(dataset, indices): sample i is dataset:get(indices[i]).
local Subset = Dataset:extend("Subset")
data.Subset = Subset

function Subset:init(dataset, indices)
  if not is_instance_of(dataset, Dataset) then fail("Subset", "expected a dataset, got %s", describe(dataset)) end
  self.dataset = dataset
  self.indices = index_list("Subset", "indices", indices)
end

function Subset:len() return #self.indices end

function Subset:get(i)
  local j = self.indices[i]
  if j == nil then fail("Subset", "index %s is out of range for a subset of %d samples", describe(i), #self.indices) end
  return self.dataset:get(j)
end

-- ConcatDataset({d1, d2, ...}): the samples of d1, then d2, ... (negative indices count from
-- the end).
local ConcatDataset = Dataset:extend("ConcatDataset")
data.ConcatDataset = ConcatDataset

function ConcatDataset:init(datasets)
  if type(datasets) ~= "table" or getmetatable(datasets) ~= nil then
    fail("ConcatDataset", "expected a table of datasets, got %s", describe(datasets))
  end
  if #datasets == 0 then fail("ConcatDataset", "datasets should not be an empty table") end
  self.datasets, self.cumulative_sizes = {}, {}
  local total = 0
  for i, d in ipairs(datasets) do
    if is_instance_of(d, IterableDataset) then fail("ConcatDataset", "does not support IterableDataset (dataset %d)", i) end
    if not is_instance_of(d, Dataset) then fail("ConcatDataset", "element %d is %s, expected a dataset", i, describe(d)) end
    total = total + #d
    self.datasets[i], self.cumulative_sizes[i] = d, total
  end
end

function ConcatDataset:len() return self.cumulative_sizes[#self.cumulative_sizes] end

function ConcatDataset:get(i)
  local n = self:len()
  if math.type(i) ~= "integer" then fail("ConcatDataset", "index must be an integer, got %s", describe(i)) end
  if i < 0 then
    if -i > n then fail("ConcatDataset", "absolute value of index %d exceeds the dataset's length %d", i, n) end
    i = n + 1 + i
  end
  if i < 1 or i > n then fail("ConcatDataset", "index %d is out of range for %d samples", i, n) end
  local lo, hi = 1, #self.cumulative_sizes  -- the first dataset whose cumulative size reaches i
  while lo < hi do
    local mid = (lo + hi) // 2
    if self.cumulative_sizes[mid] >= i then hi = mid else lo = mid + 1 end
  end
  return self.datasets[lo]:get(i - (self.cumulative_sizes[lo - 1] or 0))
end

-- random_split(dataset, lengths[, {generator=}]) -> subsets: a random partition into Subsets
-- of these lengths (counts summing to #dataset, or fractions summing to 1: each floor(n *
-- fraction), the remainder handed out one at a time from the first).
function data.random_split(dataset, lengths, ...)
  local o = util.args("random_split", {"generator"}, 0, {}, ...)
  if not is_instance_of(dataset, Dataset) then fail("random_split", "expected a dataset, got %s", describe(dataset)) end
  if type(lengths) ~= "table" or getmetatable(lengths) ~= nil or #lengths == 0 then
    fail("random_split", "lengths must be a non-empty table of numbers, got %s", describe(lengths))
  end
  local n, sum = #dataset, 0
  for i, l in ipairs(lengths) do
    if type(l) ~= "number" or l < 0 then fail("random_split", "lengths[%d] must be a number >= 0, got %s", i, describe(l)) end
    sum = sum + l
  end
  local counts = {}
  if math.abs(sum - 1) <= 1e-9 and sum <= 1 then
    local given = 0
    for i, frac in ipairs(lengths) do
      if frac > 1 then fail("random_split", "fraction at index %d is not between 0 and 1", i) end
      counts[i] = math.floor(n * frac)
      given = given + counts[i]
    end
    for i = 0, n - given - 1 do
      local at = i % #counts + 1
      counts[at] = counts[at] + 1
    end
  else
    for i, l in ipairs(lengths) do counts[i] = util.check_int("random_split", "lengths[" .. i .. "]", l, 0) end
    if sum ~= n then
      fail("random_split", "the lengths sum to %s but the dataset has %d samples", describe(sum), n)
    end
  end
  local perm = torch.randperm(n, generator_kw(o.generator)):tolist()
  local subsets, offset = {}, 0
  for i, count in ipairs(counts) do
    subsets[i] = Subset(dataset, table.move(perm, offset + 1, offset + count, 1, {}))
    offset = offset + count
  end
  return table.unpack(subsets, 1, #counts)
end

---------------------------------------------------------------------------------------------
-- Samplers: objects with iter() (an iterator over 1-based indices, a new order each call) and
-- a length. A plain table of indices or a 1-D integer tensor serves as a sampler too.

local Sampler = new_class("Sampler")
data.Sampler = Sampler
Sampler.extend = extend
Sampler.__tostring = instance_tostring
Sampler.__len = dispatch_len

function Sampler:init() end

function Sampler:iter() fail(getmetatable(self)._name, "define iter() returning an iterator over indices") end

function Sampler:len()
  local len = self.__len
  if len == nil or len == dispatch_len then fail(getmetatable(self)._name, "define len() or __len()") end
  return len(self)
end

-- An iterator over the values of a list.
local function list_iter(list)
  local i = 0
  return function()
    i = i + 1
    return list[i]
  end
end

-- The index iterator and length of a sampler, a table of indices or an index tensor.
local function sampler_iter(op, s)
  if is_instance_of(s, Sampler) then
    local f = s:iter()
    if type(f) ~= "function" then fail(op, "the sampler's iter() must return a function, got %s", describe(f)) end
    return f
  end
  return list_iter(index_list(op, "sampler", s))
end

local function check_sampler(op, s)
  if not is_instance_of(s, Sampler) then index_list(op, "sampler", s) end
  return s
end

-- A batch sampler: a Sampler whose items are lists of indices, or a table of such lists.
local function check_batch_sampler(op, s)
  if is_instance_of(s, Sampler) then return s end
  if type(s) ~= "table" or getmetatable(s) ~= nil then
    fail(op, "batch_sampler must be a sampler or a table of lists of indices, got %s", describe(s))
  end
  for i, batch in ipairs(s) do index_list(op, "batch_sampler[" .. i .. "]", batch) end
  return s
end

local function batch_sampler_iter(op, s)
  if is_instance_of(s, Sampler) then return sampler_iter(op, s) end
  return list_iter(s)
end

-- A seed drawn from the global generator: each epoch of a sampler without its own generator
-- gets a new one, the same sequence for the same torch.manual_seed.
local function fresh_generator()
  local seed = torch.randint(0, math.maxinteger, {1})[1]:item()
  return torch.Generator():manual_seed(seed)
end

-- The data_source of a sampler: what has a length, as PyTorch's Sized (a dataset, a plain
-- table or a tensor).
local function check_data_source(op, v)
  if not (is_instance_of(v, Dataset) or torch.is_tensor(v) or (type(v) == "table" and getmetatable(v) == nil)) then
    fail(op, "expected a dataset, a table or a tensor as data_source, got %s", describe(v))
  end
  return v
end

-- SequentialSampler(dataset): 1, 2, ..., #dataset.
local SequentialSampler = Sampler:extend("SequentialSampler")
data.SequentialSampler = SequentialSampler

function SequentialSampler:init(data_source) self.data_source = check_data_source("SequentialSampler", data_source) end
function SequentialSampler:len() return #self.data_source end
function SequentialSampler:iter()
  local i, n = 0, #self.data_source
  return function()
    if i >= n then return nil end
    i = i + 1
    return i
  end
end

-- RandomSampler(dataset[, {replacement=false, num_samples=#dataset, generator=}]): a random
-- permutation (repeated and cut to num_samples), or num_samples indices drawn uniformly with
-- replacement.
local RandomSampler = Sampler:extend("RandomSampler")
data.RandomSampler = RandomSampler

function RandomSampler:init(data_source, ...)
  local o = util.args("RandomSampler", {"replacement", "num_samples", "generator"}, 0, {replacement = false}, ...)
  self.data_source = check_data_source("RandomSampler", data_source)
  self.replacement = util.check_bool("RandomSampler", "replacement", o.replacement)
  if o.num_samples ~= nil then util.check_int("RandomSampler", "num_samples", o.num_samples, 1) end
  self._num_samples = o.num_samples
  self.generator = o.generator
  if #data_source == 0 and (o.num_samples or 0) > 0 then
    fail("RandomSampler", "cannot draw %d samples from an empty dataset", o.num_samples)
  end
end

function RandomSampler:len() return self._num_samples or #self.data_source end

function RandomSampler:iter()
  local n, count = #self.data_source, self:len()
  local g = self.generator or fresh_generator()
  local indices = {}
  if self.replacement then
    for start = 1, count, 32 do
      local chunk = torch.randint(1, n + 1, {math.min(32, count - start + 1)}, {generator = g}):tolist()
      table.move(chunk, 1, #chunk, #indices + 1, indices)
    end
  else
    while #indices < count do
      local perm = torch.randperm(n, {generator = g}):tolist()
      table.move(perm, 1, math.min(n, count - #indices), #indices + 1, indices)
    end
  end
  return list_iter(indices)
end

-- SubsetRandomSampler(indices[, {generator=}]): the given indices in a random order.
local SubsetRandomSampler = Sampler:extend("SubsetRandomSampler")
data.SubsetRandomSampler = SubsetRandomSampler

function SubsetRandomSampler:init(indices, ...)
  local o = util.args("SubsetRandomSampler", {"generator"}, 0, {}, ...)
  self.indices = index_list("SubsetRandomSampler", "indices", indices)
  self.generator = o.generator
end

function SubsetRandomSampler:len() return #self.indices end

function SubsetRandomSampler:iter()
  local order = torch.randperm(#self.indices, generator_kw(self.generator)):tolist()
  local i = 0
  return function()
    i = i + 1
    return order[i] and self.indices[order[i]]
  end
end

-- WeightedRandomSampler(weights, num_samples[, {replacement=true, generator=}]): indices drawn
-- with probabilities proportional to weights (torch.multinomial).
local WeightedRandomSampler = Sampler:extend("WeightedRandomSampler")
data.WeightedRandomSampler = WeightedRandomSampler

function WeightedRandomSampler:init(weights, ...)
  local o = util.args("WeightedRandomSampler", {"num_samples", "replacement", "generator"}, 1, {replacement = true}, ...)
  local w = torch.is_tensor(weights) and weights:double() or
            (type(weights) == "table" and getmetatable(weights) == nil and torch.tensor(weights, {dtype = "float64"}))
  if not w then fail("WeightedRandomSampler", "weights must be a table of numbers or a tensor, got %s", describe(weights)) end
  if w:dim() ~= 1 then
    fail("WeightedRandomSampler", "weights should be a 1-D sequence, but given weights have shape %s", util.shape_str(w.shape))
  end
  self.weights = w
  self.num_samples = util.check_int("WeightedRandomSampler", "num_samples", o.num_samples, 1)
  self.replacement = util.check_bool("WeightedRandomSampler", "replacement", o.replacement)
  self.generator = o.generator
end

function WeightedRandomSampler:len() return self.num_samples end

function WeightedRandomSampler:iter()
  local draw = torch.multinomial(self.weights, self.num_samples, self.replacement, generator_kw(self.generator))
  return list_iter(draw:tolist())
end

-- BatchSampler(sampler, batch_size, drop_last): lists of batch_size indices from sampler (the
-- last one shorter unless drop_last).
local BatchSampler = Sampler:extend("BatchSampler")
data.BatchSampler = BatchSampler

function BatchSampler:init(sampler, batch_size, drop_last)
  self.sampler = check_sampler("BatchSampler", sampler)
  self.batch_size = util.check_int("BatchSampler", "batch_size", batch_size, 1)
  self.drop_last = util.check_bool("BatchSampler", "drop_last", drop_last)
end

function BatchSampler:len()
  local n = #self.sampler
  if self.drop_last then return n // self.batch_size end
  return (n + self.batch_size - 1) // self.batch_size
end

function BatchSampler:iter()
  local next_index = sampler_iter("BatchSampler", self.sampler)
  local size, drop_last = self.batch_size, self.drop_last
  return function()
    local batch = {}
    for _ = 1, size do
      local i = next_index()
      if i == nil then break end
      batch[#batch + 1] = i
    end
    if #batch == 0 or (drop_last and #batch < size) then return nil end
    return batch
  end
end

---------------------------------------------------------------------------------------------
-- Collation.

-- The values of one sample when the dataset returned several (a Python tuple): collated
-- position by position, and a batch of them is handed out as several values.
local Tuple = {}

local function pack_sample(dataset, index, ...)
  local n = select("#", ...)
  if n == 1 and ... ~= nil then return (...) end
  if n == 0 or ... == nil then
    fail("DataLoader", "%s:get(%d) returned %s, not a sample", getmetatable(dataset)._name, index, n == 0 and "nothing" or "nil")
  end
  return setmetatable(table.pack(...), Tuple)
end

local function kind(v)
  if torch.is_tensor(v) then return "tensor" end
  local t = type(v)
  if t == "table" then
    if getmetatable(v) == Tuple then return "tuple" end
    if getmetatable(v) ~= nil then return "object" end
    local n = #v
    if n > 0 then
      local count = 0
      for _ in pairs(v) do count = count + 1 end
      if count == n then return "list" end
    end
    return next(v) == nil and "list" or "map"
  end
  return t
end

-- default_collate(samples) -> batch: PyTorch's default collation, applied recursively:
-- tensors are stacked along a new first dim; Lua integers give an int64 tensor (a float
-- among them the default float dtype), floats a float64 tensor, booleans a bool tensor;
-- strings stay a list; a table with keys gives a table of the collated values of each key,
-- a list (all of one length) a list of the collated positions.
local function collate(batch, where)
  local first = batch[1]
  local k = kind(first)
  for i = 2, #batch do
    if kind(batch[i]) ~= k then
      fail("default_collate", "sample %d%s is %s but sample 1 is %s", i, where, describe(batch[i]), describe(first))
    end
  end
  if k == "tensor" then
    for i = 2, #batch do
      if not util.same_shape(batch[i].shape, first.shape) then
        fail("default_collate", "tensors of shapes %s (sample 1) and %s (sample %d)%s cannot be stacked into a batch",
             util.shape_str(first.shape), util.shape_str(batch[i].shape), i, where)
      end
    end
    return torch.stack(batch)
  elseif k == "number" then
    return math.type(first) == "float" and torch.tensor(batch, {dtype = "float64"}) or torch.tensor(batch)
  elseif k == "boolean" then
    return torch.tensor(batch)
  elseif k == "string" then
    return table.move(batch, 1, #batch, 1, {})
  elseif k == "tuple" or k == "list" then
    local n = k == "tuple" and first.n or #first
    local out = k == "tuple" and setmetatable({n = n}, Tuple) or {}
    for i = 2, #batch do
      local m = k == "tuple" and batch[i].n or #batch[i]
      if m ~= n then
        fail("default_collate", "samples have different lengths (%d in sample 1, %d in sample %d)%s", n, m, i, where)
      end
    end
    for j = 1, n do
      local column = {}
      for i = 1, #batch do
        column[i] = batch[i][j]
        if column[i] == nil then fail("default_collate", "sample %d has nil at position %d%s", i, j, where) end
      end
      out[j] = collate(column, where .. "[" .. j .. "]")
    end
    return out
  elseif k == "map" then
    local out = {}
    for key in pairs(first) do
      local column = {}
      for i = 1, #batch do
        column[i] = batch[i][key]
        if column[i] == nil then fail("default_collate", "sample %d has no key %s%s", i, describe(key), where) end
      end
      out[key] = collate(column, where .. "[" .. describe(key) .. "]")
    end
    return out
  end
  local opaque = type(first) == "function" or type(first) == "userdata" or type(first) == "thread"
  fail("default_collate", "a batch must contain tensors, numbers, booleans, strings or tables of them; found %s%s",
       opaque and "a " .. type(first) or describe(first), where ~= "" and " at sample" .. where or "")
end

function data.default_collate(batch)
  if type(batch) ~= "table" or getmetatable(batch) ~= nil then
    fail("default_collate", "expected a table of samples, got %s", describe(batch))
  end
  if #batch == 0 then fail("default_collate", "the batch is empty") end
  return collate(batch, "")
end

---------------------------------------------------------------------------------------------
-- DataLoader(dataset[, {batch_size=1, shuffle=false, sampler=, batch_sampler=, num_workers=0,
-- collate_fn=, drop_last=false, generator=, prefetch_factor=2, persistent_workers=false,
-- worker_init_fn=, timeout=0}]): batches of samples, for x, y in loader:iter().
--
-- Map-style datasets are read in the order of a sampler (sequential, or RandomSampler with
-- the generator when shuffle=true), grouped by batch_size (or by batch_sampler); an
-- IterableDataset is read in its own order. collate_fn(samples) makes a batch from a list of
-- samples (a sample of several values is a table of them); the default is default_collate.
--
-- With num_workers > 0 (map-style datasets), worker processes make the batches
-- (torch.multiprocessing._batch_workers): batch i by worker (i - 1) % num_workers, at most
-- prefetch_factor batches per worker ahead, tensors returned in shared memory, in the same
-- order as with no workers. Worker w seeds torch with base_seed + w (base_seed drawn from the
-- generator, or torch's, at each start of the workers, as PyTorch does), then calls
-- worker_init_fn(w); get_worker_info() there gives {id=, num_workers=, seed=}.
-- persistent_workers keeps them for the next epoch; timeout > 0 bounds the wait for a batch.

local DataLoader = new_class("DataLoader")
data.DataLoader = DataLoader
DataLoader.__tostring = instance_tostring
DataLoader.__len = dispatch_len

local LOADER_OPTIONS = {"batch_size", "shuffle", "sampler", "batch_sampler", "num_workers", "collate_fn", "drop_last",
                        "generator", "prefetch_factor", "persistent_workers", "worker_init_fn", "timeout"}

function DataLoader:init(dataset, ...)
  local op = "DataLoader"
  local o = util.args(op, LOADER_OPTIONS, 0, {batch_size = 1, shuffle = false, num_workers = 0, drop_last = false,
                                              persistent_workers = false, timeout = 0}, ...)
  if not is_instance_of(dataset, Dataset) then fail(op, "expected a dataset, got %s", describe(dataset)) end
  local workers = util.check_int(op, "num_workers", o.num_workers, 0)
  util.check_bool(op, "persistent_workers", o.persistent_workers)
  util.check_number(op, "timeout", o.timeout)
  if o.timeout < 0 then fail(op, "timeout option should be non-negative, got %s", tostring(o.timeout)) end
  if o.worker_init_fn ~= nil and type(o.worker_init_fn) ~= "function" then
    fail(op, "worker_init_fn must be a function, got %s", describe(o.worker_init_fn))
  end
  if workers == 0 then
    if o.prefetch_factor ~= nil then
      fail(op, "prefetch_factor option could only be specified in multiprocessing (num_workers > 0)")
    end
    if o.persistent_workers then fail(op, "persistent_workers option needs num_workers > 0") end
  else
    if is_instance_of(dataset, IterableDataset) then
      fail(op, "num_workers=%d: worker processes read map-style datasets only (an IterableDataset needs num_workers=0)",
           workers)
    end
    torch.multiprocessing._check_process_count(op, "num_workers", workers)
    self._workers = {num_workers = workers, prefetch_factor = util.check_int(op, "prefetch_factor", o.prefetch_factor or 2, 1),
                     persistent_workers = o.persistent_workers, worker_init_fn = o.worker_init_fn, timeout = o.timeout}
  end
  self.batch_size = util.check_int(op, "batch_size", o.batch_size, 1)
  util.check_bool(op, "shuffle", o.shuffle)
  self.drop_last = util.check_bool(op, "drop_last", o.drop_last)
  if o.collate_fn ~= nil and type(o.collate_fn) ~= "function" then
    fail(op, "collate_fn must be a function, got %s", describe(o.collate_fn))
  end
  self.dataset, self.collate_fn, self.generator, self.num_workers = dataset, o.collate_fn, o.generator, workers
  if is_instance_of(dataset, IterableDataset) then
    for _, name in ipairs{"shuffle", "sampler", "batch_sampler"} do
      if o[name] then fail(op, "with an IterableDataset, %s must be left unset (the dataset gives the order)", name) end
    end
    return
  end
  if o.sampler ~= nil and o.shuffle then fail(op, "sampler option is mutually exclusive with shuffle") end
  if o.batch_sampler ~= nil then
    if o.batch_size ~= 1 or o.shuffle or o.sampler ~= nil or o.drop_last then
      fail(op, "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, and drop_last")
    end
    self.batch_size, self.drop_last = nil, false
    self.batch_sampler = check_batch_sampler(op, o.batch_sampler)
    return
  end
  if o.sampler ~= nil then
    self.sampler = check_sampler(op, o.sampler)
  elseif o.shuffle then
    self.sampler = RandomSampler(dataset, generator_kw(o.generator))
  else
    self.sampler = SequentialSampler(dataset)
  end
  self.batch_sampler = BatchSampler(self.sampler, self.batch_size, self.drop_last)
end

-- #loader: the number of batches in an epoch.
function DataLoader:len()
  if self.batch_sampler then return #self.batch_sampler end
  local n = #self.dataset  -- an IterableDataset without len() raises here
  if self.drop_last then return n // self.batch_size end
  return (n + self.batch_size - 1) // self.batch_size
end

-- The next list of indices from a batch sampler (a sampler whose items are lists).
local function batch_indices(op, item)
  if item == nil then return nil end
  return index_list(op, "a batch of the batch_sampler", item)
end

-- loader:iter() -> an iterator over the batches of one epoch: each step returns the values of
-- one batch (x, y for samples of two values).
-- The batches of one epoch made by the worker processes (see DataLoader), as iter returns them.
local function worker_batches(self, op, collate_fn)
  local w, dataset = self._workers, self.dataset
  -- The sampler's order first, then the workers' seed: the same order as with no workers.
  local next_batch = batch_sampler_iter(op, self.batch_sampler)
  local pool = self._pool
  if not pool then
    local base_seed = torch.randint(0, 1 << 53, {1}, {dtype = "int64", generator = self.generator}):item()
    pool = torch.multiprocessing._batch_workers{
      producer = function(indices)
        local samples = {}
        for i, index in ipairs(indices) do samples[i] = pack_sample(dataset, index, dataset:get(index)) end
        return table.pack(collate_fn(samples))
      end,
      num_workers = w.num_workers, prefetch_factor = w.prefetch_factor, persistent_workers = w.persistent_workers,
      worker_init_fn = w.worker_init_fn, seed = base_seed, timeout = w.timeout}
    if w.persistent_workers then self._pool = pool end
  end
  local results = pool:run(function() return batch_indices(op, next_batch()) end)
  return function()
    local _, batch = results()
    if batch == nil then return nil end
    if batch[1] == nil then fail(op, "collate_fn returned nil for a batch") end
    if batch.n == 1 and getmetatable(batch[1]) == Tuple then return table.unpack(batch[1], 1, batch[1].n) end
    return table.unpack(batch, 1, batch.n)
  end
end

-- get_worker_info() -> {id=, num_workers=, seed=} in a DataLoader's worker process (id
-- 0-based), nil elsewhere.
function data.get_worker_info() return torch.multiprocessing._worker_info() end

function DataLoader:iter()
  local op = "DataLoader"
  local collate_fn = self.collate_fn or data.default_collate
  if self._workers then return worker_batches(self, op, collate_fn) end
  local next_samples
  if self.batch_sampler then
    local next_batch, dataset = batch_sampler_iter(op, self.batch_sampler), self.dataset
    next_samples = function()
      local indices = batch_indices(op, next_batch())
      if indices == nil then return nil end
      local samples = {}
      for i, index in ipairs(indices) do samples[i] = pack_sample(dataset, index, dataset:get(index)) end
      return samples
    end
  else
    local next_sample, size, drop_last = stream(self.dataset), self.batch_size, self.drop_last
    next_samples = function()
      local samples = {}
      while #samples < size do
        local values = next_sample()
        if values == nil then break end
        samples[#samples + 1] = values.n == 1 and values[1] or setmetatable(values, Tuple)
      end
      if #samples == 0 or (drop_last and #samples < size) then return nil end
      return samples
    end
  end
  return function()
    local samples = next_samples()
    if samples == nil then return nil end
    local batch = table.pack(collate_fn(samples))
    if batch[1] == nil then fail(op, "collate_fn returned nil for a batch") end
    if batch.n == 1 and getmetatable(batch[1]) == Tuple then return table.unpack(batch[1], 1, batch[1].n) end
    return table.unpack(batch, 1, batch.n)
  end
end
