-- torch._doc: the documentation help() prints, keyed by the function or class itself.
-- A registered C function finds its doc in its registration (torch._binding_doc, from the
-- same Binding that binds it); the Lua-written parts (nn, nn.functional, nn.init, optim,
-- the grad-mode switches, utils.progress, utils.data, autograd.Function and functional)
-- have theirs here, in the same form:
-- "signature -> result: one paragraph". Loaded after the other torch_*.lua parts.
local torch = ...
local nn, F, init, optim = torch.nn, torch.nn.functional, torch.nn.init, torch.optim
local sched = optim.lr_scheduler

local docs = setmetatable({}, {
  __mode = "k",
  __index = function(_, f) return torch._binding_doc(f) end,
})
torch._doc = docs

local function document(t, entries)
  for name, doc in pairs(entries) do
    local v = rawget(t, name)
    if v == nil then error("torch_doc.lua: nothing named '" .. name .. "' to document") end
    docs[v] = doc
  end
end

document(torch, {
  no_grad = "no_grad([fn, ...]) -> results of fn, or a to-be-closed guard: runs fn with autograd recording off; " ..
    "without fn, `local _ <close> = torch.no_grad()` turns recording off until the scope ends.",
  enable_grad = "enable_grad([fn, ...]) -> results of fn, or a to-be-closed guard: as no_grad, with recording on.",
  iinfo = "iinfo(dtype) -> table: bits, min, max and dtype of an integer dtype (uint64's max as the float 2^64).",
  finfo = "finfo([dtype]) -> table: bits, eps, max, min, tiny, smallest_normal, resolution (10^-precision) and " ..
    "dtype of a floating dtype (default: the default dtype).",
  einsum = "einsum(equation, a, b, ...[, {optimize=}]) -> Tensor: the sum of products the subscripts name " ..
    "('ij,jk->ik', repeated labels for traces and diagonals, '...' broadcasting); pairs contract through bmm " ..
    "in the order optimize picks (true/'greedy' by default, 'optimal', false: left to right, or a path).",
  tensordot = "tensordot(a, b[, dims][, {dims=}]) -> Tensor: contracts the last dims of a with the first of b " ..
    "(dims a count, default 2) or the 1-based dims in {{dims of a}, {dims of b}}.",
  inner = "inner(a, b) -> Tensor: sums a * b over the last dim of each (a scalar operand multiplies).",
  kron = "kron(a, b) -> Tensor: the Kronecker product (blocks a[i] * b).",
})

document(torch, {
  inference_mode = "inference_mode([mode=true][, fn, ...]) -> results of fn, or a to-be-closed guard: as no_grad " ..
    "(tide has no separate inference tensors); inference_mode(false) leaves the grad mode as it is.",
})

document(torch.autograd, {
  Function = "autograd.Function: the base class of custom differentiable functions. " ..
    "local F = torch.autograd.Function:extend(\"Name\"); define F.forward(ctx, ...) (runs without recording; " ..
    "ctx:save_for_backward(...), ctx:mark_non_differentiable(...), ctx.needs_input_grad, ctx fields) and " ..
    "F.backward(ctx, grad, ...) (one gradient per forward output in, one gradient or nil per forward argument " ..
    "out; ctx.saved_tensors); call F.apply(...).",
  gradcheck = "autograd.gradcheck(fn, inputs[, {eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=true}]) -> true: " ..
    "autograd's Jacobian of fn(inputs...) against central finite differences in float64; a mismatch is an error " ..
    "showing both (false with raise_exception=false).",
})

document(torch.autograd.Function, {
  extend = "Function:extend(\"Name\") -> class: a new custom function; define Name.forward and Name.backward and " ..
    "call Name.apply(...).",
})

document(torch.autograd.functional, {
  jacobian = "autograd.functional.jacobian(func, inputs[, {create_graph=false, strict=false}]) -> Tensor or table: " ..
    "d func(inputs) / d inputs, shaped output.shape .. input.shape; a table [output][input] for several of either.",
  hessian = "autograd.functional.hessian(func, inputs[, {create_graph=false, strict=false}]) -> Tensor or table: " ..
    "the second derivatives of a one-element func, shaped input.shape .. input.shape ([i][j] for a table of inputs).",
})

local data = torch.utils.data
document(data, {
  Dataset = "utils.data.Dataset: the base class of map-style datasets. Dataset:extend(\"Name\"); define " ..
    "__len() (or len()) and __getitem(i) (or get(i)) returning sample i (1-based; several values for a tuple).",
  IterableDataset = "utils.data.IterableDataset: the base class of streams of samples; define iter() returning an " ..
    "iterator over them.",
  TensorDataset = "utils.data.TensorDataset(t1, t2, ...) -> Dataset: sample i is t1[i], t2[i], ... .",
  Subset = "utils.data.Subset(dataset, indices) -> Dataset: sample i is dataset:get(indices[i]).",
  ConcatDataset = "utils.data.ConcatDataset({d1, d2, ...}) -> Dataset: the samples of d1, then d2, ... (also d1 + d2).",
  random_split = "utils.data.random_split(dataset, lengths[, {generator=}]) -> Subset, Subset, ...: a random " ..
    "partition; lengths are counts summing to #dataset or fractions summing to 1.",
  Sampler = "utils.data.Sampler: the base class of samplers; Sampler:extend(\"Name\"), define iter() (an iterator " ..
    "over 1-based indices) and __len() (or len()).",
  SequentialSampler = "utils.data.SequentialSampler(dataset) -> Sampler: 1, 2, ..., #dataset.",
  RandomSampler = "utils.data.RandomSampler(dataset[, {replacement=false, num_samples=#dataset, generator=}]) -> " ..
    "Sampler: a new random order each epoch (with replacement: uniform draws).",
  SubsetRandomSampler = "utils.data.SubsetRandomSampler(indices[, {generator=}]) -> Sampler: the indices in a random order.",
  WeightedRandomSampler = "utils.data.WeightedRandomSampler(weights, num_samples[, {replacement=true, generator=}]) " ..
    "-> Sampler: indices drawn with probabilities proportional to weights.",
  BatchSampler = "utils.data.BatchSampler(sampler, batch_size, drop_last) -> Sampler: lists of batch_size indices.",
  default_collate = "utils.data.default_collate(samples) -> batch: PyTorch's collation (tensors stacked, numbers " ..
    "and booleans into tensors, tables entry by entry).",
  DataLoader = "utils.data.DataLoader(dataset[, {batch_size=1, shuffle=false, sampler=, batch_sampler=, " ..
    "num_workers=0, collate_fn=, drop_last=false, generator=, prefetch_factor=2, persistent_workers=false, " ..
    "worker_init_fn=, timeout=0}]) -> loader: `for x, y in loader:iter() do` runs one epoch of batches (made by " ..
    "num_workers worker processes when > 0, in the same order); #loader is their number.",
  get_worker_info = "utils.data.get_worker_info() -> {id=, num_workers=, seed=} | nil: in a DataLoader's worker " ..
    "process its 0-based id, the number of workers and its seed; nil elsewhere.",
})

document(data.Dataset, {
  extend = "Dataset:extend(\"Name\") -> class: a new dataset class; calling it makes an instance and runs its init.",
  init = "Dataset:init(...): a subclass's constructor body (the base one does nothing).",
  get = "dataset:get(i) -> sample: sample i (1-based); dataset[i] is its first value.",
  len = "dataset:len() -> integer: the number of samples (also #dataset).",
})

document(data.IterableDataset, {
  iter = "IterableDataset:iter() -> iterator: a subclass's stream of samples.",
  get = "IterableDataset:get(): an error (an IterableDataset is iterated, not indexed).",
})

document(data.Sampler, {
  extend = "Sampler:extend(\"Name\") -> class: a new sampler class.",
  init = "Sampler:init(...): a subclass's constructor body.",
  iter = "sampler:iter() -> iterator: the indices of one epoch.",
  len = "sampler:len() -> integer: the number of indices (also #sampler).",
})

document(data.DataLoader, {
  init = "DataLoader:init(dataset[, options]): the constructor (see DataLoader).",
  iter = "loader:iter() -> iterator: the batches of one epoch, each as the values of a batch (x, y, ...).",
  len = "loader:len() -> integer: the number of batches in an epoch (also #loader).",
})

document(torch.utils, {
  progress = "utils.progress(n | list[, {desc=, total=, file=, force=}]) -> iterator: `for i in " ..
    "torch.utils.progress(100) do ... end` draws a progress bar on stderr when it is a terminal " ..
    "(TIDE_PROGRESS=1/0 forces it on/off); bar:set_postfix{loss = l} adds values to the line.",
})

document(nn, {
  Module = "nn.Module: the base class of layers. nn.Module:extend(\"Name\") makes a subclass; define " ..
    "init(self, ...) and forward(self, ...); tensors and modules assigned to self become parameters " ..
    "and submodules (parameters(), state_dict(), to(), train()/eval() follow them).",
  Parameter = "nn.Parameter(t[, requires_grad=true]) -> Tensor: a leaf tensor sharing t's storage that " ..
    "registers as a parameter when assigned to a module.",
  is_module = "nn.is_module(v) -> boolean: whether v is an nn.Module instance.",
  Sequential = "nn.Sequential(m1, m2, ...) -> Module: applies the modules in order; seq[i] is the i-th " ..
    "(1-based; named \"0\", \"1\", ... in state_dict keys, as in PyTorch), seq:append(m) adds one.",
  ModuleList = "nn.ModuleList([{m1, m2, ...}]) -> Module: a list of submodules (registered, indexable " ..
    "1-based, append/extend) with no forward of its own.",
  Linear = "nn.Linear(in_features, out_features[, {bias=true, dtype=, device=}]) -> Module: y = x W^T + b " ..
    "with W of shape {out, in}, initialised U(-1/sqrt(in), 1/sqrt(in)) as in PyTorch.",
  Conv2d = "nn.Conv2d(in_channels, out_channels, kernel_size[, {stride=1, padding=0, dilation=1, groups=1, " ..
    "bias=true, padding_mode=\"zeros\"}]) -> Module: 2-D convolution over (N, C, H, W) input; padding may be " ..
    "\"same\" or \"valid\"; only padding_mode \"zeros\" is implemented.",
  MaxPool2d = "nn.MaxPool2d(kernel_size[, {stride=kernel_size, padding=0, dilation=1, return_indices=false, " ..
    "ceil_mode=false}]) -> Module: the maximum over each window of (N, C, H, W) input (with return_indices " ..
    "also the 1-based flat (H, W) positions of the maxima).",
  Embedding = "nn.Embedding(num_embeddings, embedding_dim[, {padding_idx=, device=, dtype=}]) -> Module: looks " ..
    "rows of a {num, dim} table up by 1-based integer indices; the padding row (negative: from the end) starts " ..
    "zero and gets no gradient. max_norm, norm_type, scale_grad_by_freq and sparse are not supported (errors).",
  LayerNorm = "nn.LayerNorm(normalized_shape[, {eps=1e-5, elementwise_affine=true}]) -> Module: normalises " ..
    "over the trailing dims to mean 0 and variance 1, then scales and shifts.",
  Dropout = "nn.Dropout([p=0.5]) -> Module: in training mode zeroes each element with probability p and " ..
    "scales the rest by 1/(1-p); the identity in eval mode.",
  Flatten = "nn.Flatten([start_dim=2, end_dim=-1]) -> Module: flattens dims start_dim..end_dim " ..
    "(the default keeps the batch dim).",
  ReLU = "nn.ReLU() -> Module: max(x, 0) elementwise.",
  Sigmoid = "nn.Sigmoid() -> Module: 1 / (1 + exp(-x)) elementwise.",
  Tanh = "nn.Tanh() -> Module: tanh(x) elementwise.",
  GELU = "nn.GELU([{approximate=\"none\"}]) -> Module: x * Phi(x) elementwise; approximate=\"tanh\" uses " ..
    "the tanh formula.",
  Softmax = "nn.Softmax(dim) -> Module: exp(x) / sum(exp(x)) along dim (1-based, negative from the end).",
  LogSoftmax = "nn.LogSoftmax(dim) -> Module: log(softmax(x)) along dim, computed stably.",
  MSELoss = "nn.MSELoss([{reduction=\"mean\"}]) -> Module: loss(input, target) = (input - target)^2, " ..
    "reduced by \"mean\", \"sum\" or \"none\".",
  L1Loss = "nn.L1Loss([{reduction=\"mean\"}]) -> Module: loss(input, target) = |input - target|, reduced.",
  CrossEntropyLoss = "nn.CrossEntropyLoss([{weight=, ignore_index=, reduction=\"mean\", label_smoothing=0}]) -> " ..
    "Module: loss(logits (N, C), classes (N)) = log-softmax and negative log-likelihood; class indices " ..
    "are 1-based.",
  NLLLoss = "nn.NLLLoss([{weight=, ignore_index=, reduction=\"mean\"}]) -> Module: loss(log_probs (N, C), " ..
    "classes (N)) = -log_probs[i, class_i], with 1-based classes.",
  BCELoss = "nn.BCELoss([{weight=, reduction=\"mean\"}]) -> Module: binary cross-entropy of probabilities " ..
    "and 0/1 targets.",
  BCEWithLogitsLoss = "nn.BCEWithLogitsLoss([{weight=, reduction=\"mean\", pos_weight=}]) -> Module: sigmoid and " ..
    "binary cross-entropy in one stable step.",
})

document(nn.Module, {
  extend = "Module:extend(\"Name\") -> class: a subclass; calling it constructs an instance and runs its init.",
  init = "Module:init(...): a subclass's constructor body (the base one does nothing).",
  forward = "Module:forward(...) -> output: what calling the module computes (subclasses define it).",
  extra_repr = "Module:extra_repr() -> string: the options shown inside the module's printed form.",
  isinstance = "module:isinstance(cls) -> boolean: whether the module is an instance of cls or a subclass.",
  add_module = "module:add_module(name, m): registers m as the submodule `name`.",
  register_parameter = "module:register_parameter(name, t | nil): registers t as the parameter `name`.",
  register_buffer = "module:register_buffer(name, t[, persistent=true]): a tensor moved by to() and saved " ..
    "by state_dict() (unless not persistent) that is not a parameter.",
  parameters = "module:parameters([recurse=true]) -> list of Tensors: for an optimizer.",
  named_parameters = "module:named_parameters([prefix, recurse=true]) -> iterator: `for name, p in m:named_parameters() do` " ..
    "with dotted names as in PyTorch.",
  buffers = "module:buffers([recurse=true]) -> list of Tensors.",
  named_buffers = "module:named_buffers([prefix, recurse=true]) -> iterator over name, buffer.",
  children = "module:children() -> list of the direct submodules.",
  named_children = "module:named_children() -> iterator over name, direct submodule.",
  modules = "module:modules() -> list of the module and all its submodules.",
  named_modules = "module:named_modules([prefix]) -> iterator over name, module: the module itself first (name \"\"), " ..
    "then every submodule once with dotted names.",
  apply = "module:apply(fn) -> module: calls fn on every submodule and then the module itself.",
  state_dict = "module:state_dict() -> table: dotted name -> tensor for parameters and persistent buffers " ..
    "(torch.save writes it as PyTorch's OrderedDict in this order, or as safetensors).",
  load_state_dict = "module:load_state_dict(sd[, strict=true]) -> module: copies the tensors of sd into the " ..
    "parameters and buffers; strict reports missing and unexpected keys.",
  train = "module:train([mode=true]) -> module: sets training mode (Dropout active) on it and its submodules.",
  eval = "module:eval() -> module: training mode off.",
  zero_grad = "module:zero_grad([set_to_none=true]): clears the parameters' gradients: to nil, or to " ..
    "zeros in place with {set_to_none=false} (PyTorch 2.x's default; 1.13 defaulted to false).",
  requires_grad_ = "module:requires_grad_([flag=true]) -> module: sets requires_grad on every parameter.",
  to = "module:to(dtype | device) -> module: converts parameters and buffers in place.",
  float = "module:float() -> module: parameters and buffers as float32.",
  double = "module:double() -> module: parameters and buffers as float64.",
  half = "module:half() -> module: parameters and buffers as float16.",
  cpu = "module:cpu() -> module: parameters and buffers on the CPU.",
  cuda = "module:cuda() -> module: parameters and buffers on the GPU.",
  share_memory = "module:share_memory() -> module: parameters, their grads and buffers moved to shared memory " ..
    "(Tensor:share_memory_), so that worker processes given the module update the same tensors (Hogwild).",
  register_forward_pre_hook = "module:register_forward_pre_hook(hook) -> handle: hook(module, args) runs before " ..
    "forward (args.n arguments); a table it returns replaces the arguments, another value the only one; " ..
    "handle:remove() takes it out.",
  register_forward_hook = "module:register_forward_hook(hook) -> handle: hook(module, args, output) runs after " ..
    "forward; a value it returns replaces the output.",
  register_full_backward_hook = "module:register_full_backward_hook(hook) -> handle: hook(module, grad_input, " ..
    "grad_output) runs when the gradients of the module's arguments are computed (grad_input: one entry per " ..
    "argument, nil where none); a table it returns replaces grad_input.",
})

document(F, {
  linear = "F.linear(input, weight[, bias]) -> Tensor: input @ weight^T + bias.",
  relu = "F.relu(input) -> Tensor: max(input, 0).",
  sigmoid = "F.sigmoid(input) -> Tensor: 1 / (1 + exp(-input)).",
  tanh = "F.tanh(input) -> Tensor: tanh(input).",
  gelu = "F.gelu(input[, {approximate=\"none\"}]) -> Tensor: input * Phi(input) (\"tanh\": the tanh formula).",
  softmax = "F.softmax(input, dim) -> Tensor: exp / sum(exp) along dim (1-based).",
  log_softmax = "F.log_softmax(input, dim) -> Tensor: log of softmax along dim, computed stably.",
  dropout = "F.dropout(input[, p=0.5][, training=true]) -> Tensor: zeroes elements with probability p and " ..
    "scales the rest by 1/(1-p) when training.",
  embedding = "F.embedding(input, weight[, padding_idx]) -> Tensor: the rows of weight at the 1-based " ..
    "indices in input.",
  layer_norm = "F.layer_norm(input, normalized_shape[, weight, bias, eps=1e-5]) -> Tensor: normalised over " ..
    "the trailing dims, then scaled and shifted.",
  conv2d = "F.conv2d(input, weight[, bias, stride=1, padding=0, dilation=1, groups=1]) -> Tensor: 2-D " ..
    "convolution of (N, C, H, W) input with (O, C/groups, kh, kw) weights.",
  max_pool2d = "F.max_pool2d(input, kernel_size[, stride, padding=0, dilation=1, ceil_mode=false, " ..
    "return_indices=false]) -> Tensor[, Tensor]: window maxima (and their 1-based flat (H, W) positions).",
  flatten = "F.flatten(input[, start_dim=1, end_dim=-1]) -> Tensor: dims start_dim..end_dim merged into one.",
  mse_loss = "F.mse_loss(input, target[, reduction][, {reduction=\"mean\"}]) -> Tensor: mean (or sum, or none) " ..
    "of (input - target)^2, one engine op.",
  l1_loss = "F.l1_loss(input, target[, {reduction=\"mean\"}]) -> Tensor: reduced |input - target|.",
  cross_entropy = "F.cross_entropy(logits, target[, {weight=, ignore_index=, reduction=\"mean\", " ..
    "label_smoothing=0}]) -> Tensor: log-softmax and NLL with 1-based class targets (or class probabilities).",
  nll_loss = "F.nll_loss(log_probs, target[, {weight=, ignore_index=, reduction=\"mean\"}]) -> Tensor: " ..
    "-log_probs at the 1-based target classes, reduced.",
  binary_cross_entropy = "F.binary_cross_entropy(probs, target[, {weight=, reduction=\"mean\"}]) -> Tensor: " ..
    "-(t log p + (1 - t) log(1 - p)), reduced.",
  binary_cross_entropy_with_logits = "F.binary_cross_entropy_with_logits(logits, target[, {weight=, " ..
    "reduction=\"mean\", pos_weight=}]) -> Tensor: sigmoid and binary cross-entropy in one stable step.",
})

-- Containers and shape layers.
document(nn, {
  Identity = "nn.Identity(...) -> Module: returns its input; as in PyTorch it takes any arguments and " ..
    "ignores them, to stand in for a layer with options.",
  Unflatten = "nn.Unflatten(dim, unflattened_size) -> Module: splits dim (1-based) into the given sizes.",
  ModuleDict = "nn.ModuleDict([{name = m, ...} | {{name, m}, ...}]) -> Module: submodules by name (a table's " ..
    "keys sorted, a list of pairs in order); md.name, md:keys(), values(), items(), update(), pop(), clear(), #md.",
  ParameterList = "nn.ParameterList([{t1, t2, ...}]) -> Module: a list of parameters (tensors are made " ..
    "parameters) named \"0\", \"1\", ... as in PyTorch; pl[i] (1-based), append, extend, #pl.",
  ParameterDict = "nn.ParameterDict([{name = t, ...} | {{name, t}, ...}]) -> Module: parameters by name " ..
    "(tensors are made parameters); pd.name, pd:keys(), values(), items(), update(), pop(), clear(), #pd.",
})

-- Convolution variants, pooling and resampling (torch_nn_conv.lua).
document(nn, {
  Conv1d = "nn.Conv1d(in_channels, out_channels, kernel_size[, {stride=1, padding=0, dilation=1, groups=1, " ..
    "bias=true, padding_mode=\"zeros\", dtype=, device=}]) -> Module: 1-D convolution over (N, C, L) or (C, L) " ..
    "input with weight (out, in/groups, k); padding may be \"same\" or \"valid\".",
  ConvTranspose1d = "nn.ConvTranspose1d(in_channels, out_channels, kernel_size[, {stride=1, padding=0, " ..
    "output_padding=0, groups=1, bias=true, dilation=1, padding_mode=\"zeros\", dtype=, device=}]) -> Module: " ..
    "transposed 1-D convolution, weight (in, out/groups, k); forward(x[, output_size]).",
  ConvTranspose2d = "nn.ConvTranspose2d(in_channels, out_channels, kernel_size[, {stride=1, padding=0, " ..
    "output_padding=0, groups=1, bias=true, dilation=1, padding_mode=\"zeros\", dtype=, device=}]) -> Module: " ..
    "transposed 2-D convolution, weight (in, out/groups, kh, kw); forward(x[, output_size]) picks " ..
    "output_padding to reach output_size.",
  AvgPool2d = "nn.AvgPool2d(kernel_size[, {stride=kernel_size, padding=0, ceil_mode=false, " ..
    "count_include_pad=true, divisor_override=}]) -> Module: the mean over each window.",
  MaxPool1d = "nn.MaxPool1d(kernel_size[, {stride=kernel_size, padding=0, dilation=1, return_indices=false, " ..
    "ceil_mode=false}]) -> Module: the maximum over each window of (N, C, L) or (C, L) input.",
  AdaptiveAvgPool2d = "nn.AdaptiveAvgPool2d(output_size) -> Module: means over the windows that split " ..
    "(H, W) into output_size (an integer or a pair).",
  AdaptiveMaxPool2d = "nn.AdaptiveMaxPool2d(output_size[, {return_indices=false}]) -> Module: maxima over the " ..
    "windows that split (H, W) into output_size.",
  Upsample = "nn.Upsample([{size=, scale_factor=, mode=\"nearest\", align_corners=, recompute_scale_factor=}]) " ..
    "-> Module: F.interpolate with these options.",
  PixelShuffle = "nn.PixelShuffle(upscale_factor) -> Module: (*, C r^2, H, W) -> (*, C, H r, W r).",
  PixelUnshuffle = "nn.PixelUnshuffle(downscale_factor) -> Module: (*, C, H r, W r) -> (*, C r^2, H, W).",
})

document(F, {
  conv1d = "F.conv1d(input, weight[, bias, stride=1, padding=0, dilation=1, groups=1]) -> Tensor: 1-D " ..
    "convolution of (N, C, L) or (C, L) input with (O, C/groups, k) weights; padding may be \"same\" or \"valid\".",
  conv_transpose1d = "F.conv_transpose1d(input, weight[, bias, stride=1, padding=0, output_padding=0, " ..
    "groups=1, dilation=1]) -> Tensor: transposed 1-D convolution, weight (C, O/groups, k).",
  conv_transpose2d = "F.conv_transpose2d(input, weight[, bias, stride=1, padding=0, output_padding=0, " ..
    "groups=1, dilation=1]) -> Tensor: transposed 2-D convolution (the input-gradient of conv2d), weight " ..
    "(C, O/groups, kh, kw).",
  avg_pool2d = "F.avg_pool2d(input, kernel_size[, stride, padding=0, ceil_mode=false, count_include_pad=true, " ..
    "divisor_override]) -> Tensor: window means.",
  max_pool1d = "F.max_pool1d(input, kernel_size[, stride, padding=0, dilation=1, ceil_mode=false, " ..
    "return_indices=false]) -> Tensor[, Tensor]: window maxima of (N, C, L) or (C, L) input (and their " ..
    "1-based positions).",
  adaptive_avg_pool2d = "F.adaptive_avg_pool2d(input, output_size) -> Tensor: means over windows " ..
    "floor(i H / out) .. ceil((i + 1) H / out) per dim.",
  adaptive_max_pool2d = "F.adaptive_max_pool2d(input, output_size[, return_indices=false]) -> Tensor[, Tensor]: " ..
    "maxima over the adaptive windows (and their 1-based flat (H, W) positions).",
  interpolate = "F.interpolate(input[, size, scale_factor, mode=\"nearest\", align_corners, " ..
    "recompute_scale_factor, antialias=false]) -> Tensor: resamples (N, C, L) or (N, C, H, W) input; modes " ..
    "\"nearest\", \"linear\" (3-D) and \"bilinear\" (4-D) with PyTorch's source positions.",
  pixel_shuffle = "F.pixel_shuffle(input, upscale_factor) -> Tensor: (*, C r^2, H, W) -> (*, C, H r, W r).",
  pixel_unshuffle = "F.pixel_unshuffle(input, downscale_factor) -> Tensor: (*, C, H r, W r) -> (*, C r^2, H, W).",
})

-- Activations (torch_nn_activation.lua).
document(nn, {
  LeakyReLU = "nn.LeakyReLU([negative_slope=0.01]) -> Module: x where x > 0, else negative_slope * x.",
  ELU = "nn.ELU([alpha=1.0]) -> Module: x where x > 0, else alpha * (exp(x) - 1).",
  SELU = "nn.SELU() -> Module: scale * elu(x, alpha) with PyTorch's constants (alpha 1.6733, scale 1.0507).",
  CELU = "nn.CELU([alpha=1.0]) -> Module: x where x > 0, else alpha * (exp(x / alpha) - 1).",
  SiLU = "nn.SiLU() -> Module: x * sigmoid(x).",
  Mish = "nn.Mish() -> Module: x * tanh(softplus(x)).",
  Softplus = "nn.Softplus([beta=1, threshold=20]) -> Module: log(1 + exp(beta x)) / beta, and x where " ..
    "beta x > threshold.",
  Softsign = "nn.Softsign() -> Module: x / (1 + |x|).",
  Hardtanh = "nn.Hardtanh([min_val=-1.0, max_val=1.0]) -> Module: x clamped to [min_val, max_val].",
  ReLU6 = "nn.ReLU6() -> Module: x clamped to [0, 6].",
  Hardsigmoid = "nn.Hardsigmoid() -> Module: clamp(x + 3, 0, 6) / 6.",
  Hardswish = "nn.Hardswish() -> Module: x * clamp(x + 3, 0, 6) / 6.",
  PReLU = "nn.PReLU([num_parameters=1, init=0.25][, {dtype=, device=}]) -> Module: x where x > 0, else " ..
    "weight * x, with a learnable slope (one, or one per channel: dim 2 of the input).",
  LogSigmoid = "nn.LogSigmoid() -> Module: log(sigmoid(x)), computed stably.",
  GLU = "nn.GLU([dim=-1]) -> Module: a * sigmoid(b) for the two halves a, b of dim (1-based).",
  Threshold = "nn.Threshold(threshold, value) -> Module: x where x > threshold, else value.",
})

document(F, {
  leaky_relu = "F.leaky_relu(input[, negative_slope=0.01]) -> Tensor: input where > 0, else negative_slope * input.",
  elu = "F.elu(input[, alpha=1.0]) -> Tensor: input where > 0, else alpha * (exp(input) - 1).",
  selu = "F.selu(input) -> Tensor: scale * elu(input, alpha) with PyTorch's SELU constants.",
  celu = "F.celu(input[, alpha=1.0]) -> Tensor: input where > 0, else alpha * (exp(input / alpha) - 1).",
  silu = "F.silu(input) -> Tensor: input * sigmoid(input).",
  mish = "F.mish(input) -> Tensor: input * tanh(softplus(input)).",
  softplus = "F.softplus(input[, beta=1, threshold=20]) -> Tensor: log(1 + exp(beta input)) / beta, and input " ..
    "where beta input > threshold.",
  softsign = "F.softsign(input) -> Tensor: input / (1 + |input|).",
  hardtanh = "F.hardtanh(input[, min_val=-1.0, max_val=1.0]) -> Tensor: input clamped to [min_val, max_val].",
  relu6 = "F.relu6(input) -> Tensor: input clamped to [0, 6].",
  hardsigmoid = "F.hardsigmoid(input) -> Tensor: clamp(input + 3, 0, 6) / 6.",
  hardswish = "F.hardswish(input) -> Tensor: input * clamp(input + 3, 0, 6) / 6.",
  prelu = "F.prelu(input, weight) -> Tensor: input where > 0, else weight * input (weight: 1 value or one " ..
    "per channel, dim 2).",
  logsigmoid = "F.logsigmoid(input) -> Tensor: log(sigmoid(input)), computed stably.",
  glu = "F.glu(input[, dim=-1]) -> Tensor: a * sigmoid(b) for the two halves a, b of dim (1-based).",
  threshold = "F.threshold(input, threshold, value) -> Tensor: input where > threshold, else value.",
})

-- Normalization and channel dropout (torch_nn_norm.lua).
document(nn, {
  BatchNorm1d = "nn.BatchNorm1d(num_features[, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true, " ..
    "device=, dtype=}]) -> Module: normalises each channel of (N, C) or (N, C, L) input by the batch's mean and " ..
    "variance in training (updating running_mean and running_var, momentum=false: cumulative average as " ..
    "PyTorch's None) and by the running statistics in eval mode; then weight * x + bias.",
  BatchNorm2d = "nn.BatchNorm2d(num_features[, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true, " ..
    "device=, dtype=}]) -> Module: BatchNorm1d for (N, C, H, W) input.",
  InstanceNorm1d = "nn.InstanceNorm1d(num_features[, {eps=1e-5, momentum=0.1, affine=false, " ..
    "track_running_stats=false, device=, dtype=}]) -> Module: normalises each channel of each sample of " ..
    "(N, C, L) or (C, L) input over L.",
  InstanceNorm2d = "nn.InstanceNorm2d(num_features[, {eps=1e-5, momentum=0.1, affine=false, " ..
    "track_running_stats=false, device=, dtype=}]) -> Module: normalises each channel of each sample of " ..
    "(N, C, H, W) or (C, H, W) input over H and W.",
  GroupNorm = "nn.GroupNorm(num_groups, num_channels[, {eps=1e-5, affine=true, device=, dtype=}]) -> Module: " ..
    "normalises each group of num_channels / num_groups channels of each sample; weight and bias per channel.",
  Dropout1d = "nn.Dropout1d([p=0.5][, {inplace=false}]) -> Module: in training mode zeroes whole channels of " ..
    "(N, C, L) or (C, L) input with probability p and scales the rest by 1/(1-p).",
  Dropout2d = "nn.Dropout2d([p=0.5][, {inplace=false}]) -> Module: in training mode zeroes whole channels of " ..
    "(N, C, H, W) (or (N, C, L)) input with probability p and scales the rest by 1/(1-p).",
})
document(F, {
  batch_norm = "F.batch_norm(input, running_mean, running_var[, weight, bias, training=false, momentum=0.1, " ..
    "eps=1e-5]) -> Tensor: per-channel (dim 2) normalization by the batch statistics when training (moving " ..
    "the running ones, the variance unbiased), else by running_mean and running_var.",
  instance_norm = "F.instance_norm(input[, running_mean, running_var, weight, bias, use_input_stats=true, " ..
    "momentum=0.1, eps=1e-5]) -> Tensor: each channel of each sample normalised over its spatial dims.",
  group_norm = "F.group_norm(input, num_groups[, weight, bias, eps=1e-5]) -> Tensor: each group of channels " ..
    "of each sample normalised; weight and bias per channel.",
  dropout1d = "F.dropout1d(input[, p=0.5, training=true, inplace=false]) -> Tensor: whole channels of (N, C, L) " ..
    "or (C, L) input zeroed with probability p, the rest scaled by 1/(1-p).",
  dropout2d = "F.dropout2d(input[, p=0.5, training=true, inplace=false]) -> Tensor: whole channels of " ..
    "(N, C, H, W) or (N, C, L) input zeroed with probability p, the rest scaled by 1/(1-p).",
})

-- Losses (torch_nn_loss.lua).
document(nn, {
  SmoothL1Loss = "nn.SmoothL1Loss([{reduction=\"mean\", beta=1.0}]) -> Module: 0.5 d^2 / beta where |d| < beta, " ..
    "else |d| - 0.5 beta, for d = input - target.",
  HuberLoss = "nn.HuberLoss([{reduction=\"mean\", delta=1.0}]) -> Module: 0.5 d^2 where |d| < delta, else " ..
    "delta (|d| - 0.5 delta).",
  KLDivLoss = "nn.KLDivLoss([{reduction=\"mean\", log_target=false}]) -> Module: loss(log_probs, target) = " ..
    "target (log target - log_probs); reduction may be \"batchmean\" (sum / batch size).",
  CosineEmbeddingLoss = "nn.CosineEmbeddingLoss([{margin=0, reduction=\"mean\"}]) -> Module: loss(x1, x2, y) = " ..
    "1 - cos(x1, x2) where y = 1, max(0, cos - margin) where y = -1.",
  MarginRankingLoss = "nn.MarginRankingLoss([{margin=0, reduction=\"mean\"}]) -> Module: loss(x1, x2, y) = " ..
    "max(0, -y (x1 - x2) + margin).",
  TripletMarginLoss = "nn.TripletMarginLoss([{margin=1.0, p=2, eps=1e-6, swap=false, reduction=\"mean\"}]) -> " ..
    "Module: loss(anchor, positive, negative) = max(d(a, p) - d(a, n) + margin, 0).",
  HingeEmbeddingLoss = "nn.HingeEmbeddingLoss([{margin=1.0, reduction=\"mean\"}]) -> Module: input where the " ..
    "target is 1, max(0, margin - input) where it is -1.",
  MultiLabelSoftMarginLoss = "nn.MultiLabelSoftMarginLoss([{weight=, reduction=\"mean\"}]) -> Module: " ..
    "binary cross-entropy of sigmoid(input) per class, averaged over the classes.",
  PoissonNLLLoss = "nn.PoissonNLLLoss([{log_input=true, full=false, eps=1e-8, reduction=\"mean\"}]) -> Module: " ..
    "exp(input) - target input (or input - target log(input + eps)); full adds the Stirling term.",
  GaussianNLLLoss = "nn.GaussianNLLLoss([{full=false, eps=1e-6, reduction=\"mean\"}]) -> Module: loss(input, " ..
    "target, var) = 0.5 (log var + (input - target)^2 / var), var clamped to eps.",
})

document(F, {
  smooth_l1_loss = "F.smooth_l1_loss(input, target[, {reduction=\"mean\", beta=1.0}]) -> Tensor: the smooth L1 loss.",
  huber_loss = "F.huber_loss(input, target[, {reduction=\"mean\", delta=1.0}]) -> Tensor: the Huber loss.",
  kl_div = "F.kl_div(log_probs, target[, {reduction=\"mean\", log_target=false}]) -> Tensor: pointwise KL " ..
    "divergence, reduced (\"batchmean\": sum / batch size).",
  cosine_embedding_loss = "F.cosine_embedding_loss(x1, x2, y[, {margin=0, reduction=\"mean\"}]) -> Tensor: " ..
    "1 - cos where y = 1, max(0, cos - margin) where y = -1.",
  margin_ranking_loss = "F.margin_ranking_loss(x1, x2, y[, {margin=0, reduction=\"mean\"}]) -> Tensor: " ..
    "max(0, -y (x1 - x2) + margin).",
  pairwise_distance = "F.pairwise_distance(x1, x2[, {p=2, eps=1e-6, keepdim=false}]) -> Tensor: the p-norm of " ..
    "x1 - x2 + eps over the last dim.",
  triplet_margin_loss = "F.triplet_margin_loss(anchor, positive, negative[, {margin=1.0, p=2, eps=1e-6, " ..
    "swap=false, reduction=\"mean\"}]) -> Tensor: max(d(a, p) - d(a, n) + margin, 0).",
  hinge_embedding_loss = "F.hinge_embedding_loss(input, target[, {margin=1.0, reduction=\"mean\"}]) -> Tensor: " ..
    "input where target = 1, max(0, margin - input) where target = -1.",
  multilabel_soft_margin_loss = "F.multilabel_soft_margin_loss(input, target[, {weight=, reduction=\"mean\"}]) -> " ..
    "Tensor: per-class binary cross-entropy of sigmoid(input), averaged over the classes.",
  poisson_nll_loss = "F.poisson_nll_loss(input, target[, {log_input=true, full=false, eps=1e-8, " ..
    "reduction=\"mean\"}]) -> Tensor: the Poisson negative log-likelihood.",
  gaussian_nll_loss = "F.gaussian_nll_loss(input, target, var[, {full=false, eps=1e-6, reduction=\"mean\"}]) -> " ..
    "Tensor: the Gaussian negative log-likelihood.",
})

document(init, {
  calculate_gain = "init.calculate_gain(nonlinearity[, param]) -> number: PyTorch's recommended gain " ..
    "(\"relu\": sqrt(2), \"tanh\": 5/3, \"leaky_relu\": sqrt(2 / (1 + param^2)), ...).",
  uniform_ = "init.uniform_(t[, a=0, b=1]) -> t: fills t from U(a, b) without recording a gradient.",
  normal_ = "init.normal_(t[, mean=0, std=1]) -> t: fills t from N(mean, std^2).",
  constant_ = "init.constant_(t, val) -> t: fills t with val.",
  zeros_ = "init.zeros_(t) -> t: fills t with 0.",
  ones_ = "init.ones_(t) -> t: fills t with 1.",
  kaiming_uniform_ = "init.kaiming_uniform_(t[, {a=0, mode=\"fan_in\", nonlinearity=\"leaky_relu\"}]) -> t: " ..
    "He initialisation, U(-bound, bound) with bound = gain * sqrt(3 / fan).",
  kaiming_normal_ = "init.kaiming_normal_(t[, {a=0, mode=\"fan_in\", nonlinearity=\"leaky_relu\"}]) -> t: " ..
    "He initialisation, N(0, (gain / sqrt(fan))^2).",
  xavier_uniform_ = "init.xavier_uniform_(t[, gain=1]) -> t: Glorot initialisation, U(-b, b) with " ..
    "b = gain * sqrt(6 / (fan_in + fan_out)).",
  xavier_normal_ = "init.xavier_normal_(t[, gain=1]) -> t: Glorot initialisation, N(0, gain^2 * 2 / " ..
    "(fan_in + fan_out)).",
})

document(nn.utils, {
  clip_grad_norm_ = "nn.utils.clip_grad_norm_(parameters, max_norm[, norm_type=2][, {error_if_nonfinite=false}]) " ..
    "-> Tensor: scales the gradients in place so that their joint norm (any p, math.huge for the max) is at most " ..
    "max_norm; returns the norm before clipping.",
  clip_grad_value_ = "nn.utils.clip_grad_value_(parameters, clip_value): clamps the gradients into " ..
    "[-clip_value, clip_value] in place.",
  parameters_to_vector = "nn.utils.parameters_to_vector(parameters) -> Tensor: the parameters flattened into " ..
    "one 1-D tensor.",
  vector_to_parameters = "nn.utils.vector_to_parameters(vec, parameters): copies consecutive slices of vec " ..
    "into the parameters (PyTorch makes them views of vec instead).",
})

document(nn.utils.rnn, {
  pad_sequence = "nn.utils.rnn.pad_sequence(sequences[, batch_first=false][, padding_value=0]) -> Tensor: " ..
    "sequences of shapes (L_i, *) stacked into (T, B, *) (batch_first: (B, T, *)), padded to the longest.",
})

-- The recurrent layers (torch_nn_rnn.lua).
document(nn, {
  RNN = "nn.RNN(input_size, hidden_size[, num_layers=1][, {nonlinearity=\"tanh\", bias=true, batch_first=false, " ..
    "dropout=0, bidirectional=false, dtype=, device=}]) -> Module: h_t = act(x_t W_ih^T + b_ih + h_{t-1} W_hh^T " ..
    "+ b_hh) (act tanh or relu) over (T, N, input_size) input ((N, T, .) with batch_first, (T, .) unbatched); " ..
    "`output, h_n = rnn(x[, h0])`; dropout between layers in training; parameters weight_ih_l0 ... as in PyTorch.",
  LSTM = "nn.LSTM(input_size, hidden_size[, num_layers=1][, {bias=true, batch_first=false, dropout=0, " ..
    "bidirectional=false, proj_size=0, dtype=, device=}]) -> Module: long short-term memory (gates i, f, g, o as " ..
    "in PyTorch); `output, hc = lstm(x[, {h0, c0}])` with hc = {h_n, c_n}; proj_size projects h by weight_hr_l0.",
  GRU = "nn.GRU(input_size, hidden_size[, num_layers=1][, {bias=true, batch_first=false, dropout=0, " ..
    "bidirectional=false, dtype=, device=}]) -> Module: gated recurrent unit (gates r, z, n as in PyTorch); " ..
    "`output, h_n = gru(x[, h0])`.",
  RNNCell = "nn.RNNCell(input_size, hidden_size[, bias=true][, nonlinearity=\"tanh\"][, {device=, dtype=}]) -> Module: one step " ..
    "h' = act(x W_ih^T + b_ih + h W_hh^T + b_hh) of (N, input_size) or (input_size) input: `h = cell(x[, h])`.",
  LSTMCell = "nn.LSTMCell(input_size, hidden_size[, bias=true][, {device=, dtype=}]) -> Module: one LSTM step: " ..
    "`h, c = cell(x[, {h, c}])`.",
  GRUCell = "nn.GRUCell(input_size, hidden_size[, bias=true][, {device=, dtype=}]) -> Module: one GRU step: `h = cell(x[, h])`.",
})

document(optim, {
  Optimizer = "optim.Optimizer: the base class of optimizers (param_groups, state, step, zero_grad, " ..
    "state_dict); Optimizer:extend(\"Name\") makes a new one with its own defaults and update.",
  SGD = "optim.SGD(params, {lr=, momentum=0, dampening=0, weight_decay=0, nesterov=false, maximize=false}) -> " ..
    "Optimizer: stochastic gradient descent, with momentum as in PyTorch.",
  Adam = "optim.Adam(params[, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, amsgrad=false, " ..
    "maximize=false}]) -> " ..
    "Optimizer: Adam with bias correction; weight_decay adds to the gradient. capturable=true keeps the step " ..
    "count on the parameters' CUDA device (a compiled step is then one CUDA graph).",
  AdamW = "optim.AdamW(params[, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=1e-2, amsgrad=false, " ..
    "maximize=false}]) -> " ..
    "Optimizer: Adam with decoupled weight decay.",
  RMSprop = "optim.RMSprop(params[, {lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, " ..
    "centered=false, maximize=false}]) -> Optimizer: divides by a running root mean square of the gradients.",
  Adagrad = "optim.Adagrad(params[, {lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, " ..
    "maximize=false}]) -> Optimizer: divides by the root of the running sum of squared gradients.",
  Adadelta = "optim.Adadelta(params[, {lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=false}]) -> Optimizer: " ..
    "steps by the ratio of running roots of squared updates and squared gradients.",
  Adamax = "optim.Adamax(params[, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, maximize=false}]) -> " ..
    "Optimizer: Adam with the infinity norm of the gradients.",
  NAdam = "optim.NAdam(params[, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0, momentum_decay=4e-3}]) -> " ..
    "Optimizer: Adam with Nesterov momentum.",
  RAdam = "optim.RAdam(params[, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8, weight_decay=0}]) -> Optimizer: " ..
    "rectified Adam (momentum steps until the variance estimate is tractable).",
  LBFGS = "optim.LBFGS(params[, {lr=1, max_iter=20, max_eval=max_iter*5//4, tolerance_grad=1e-7, " ..
    "tolerance_change=1e-9, history_size=100, line_search_fn=nil|'strong_wolfe'}]) -> Optimizer: " ..
    "limited-memory BFGS; opt:step(closure) needs the closure, which recomputes the loss and gradients.",
})

document(optim.Optimizer, {
  extend = "Optimizer:extend(\"Name\") -> class: a new optimizer; set its defaults (and required options) " ..
    "and define update(param, grad, state, group), and validate(options) to check them.",
  init = "Optimizer:init(params[, options]): the constructor: params is a list of tensors or of groups " ..
    "{params=, lr=, ...}; options fill in the defaults.",
  update = "Optimizer:update(param, grad, state, group): a subclass's update of one parameter " ..
    "(step calls it under no_grad).",
  validate = "Optimizer:validate(options): a subclass's check of its options (an error names the bad one).",
  step = "opt:step([closure]) -> loss or nil: one update of every parameter that has a gradient; the " ..
    "closure, when given, recomputes the loss with grad enabled and its result is returned.",
  zero_grad = "opt:zero_grad([set_to_none=true]): clears the gradients of the optimizer's parameters: to nil, " ..
    "or to zeros in place with {set_to_none=false} (PyTorch 2.x's default; 1.13 defaulted to false).",
  add_param_group = "opt:add_param_group({params=, lr=, ...}): adds parameters with their own options.",
  state_dict = "opt:state_dict() -> table: the options of each group and the per-parameter state.",
  load_state_dict = "opt:load_state_dict(sd): restores the options and state saved by state_dict, checked " ..
    "against the current groups.",
})

document(optim.SGD, {
  step_group = "opt:step_group(group, state): SGD's update of every parameter of a group that has a gradient, " ..
    "one engine call for the group (step calls it under no_grad instead of update per parameter, as for any " ..
    "class that defines step_group, unless a subclass below it defines its own update).",
})

document(sched, {
  LRScheduler = "lr_scheduler.LRScheduler: the base class of schedulers (step, get_last_lr).",
  StepLR = "lr_scheduler.StepLR(optimizer, {step_size=, gamma=0.1}) -> scheduler: multiplies the lr by " ..
    "gamma every step_size epochs.",
  CosineAnnealingLR = "lr_scheduler.CosineAnnealingLR(optimizer, {T_max=, eta_min=0}) -> scheduler: the lr " ..
    "follows half a cosine from the initial lr down to eta_min over T_max epochs.",
  LambdaLR = "lr_scheduler.LambdaLR(optimizer, {lr_lambda=fn | {fn, ...}}) -> scheduler: lr = initial lr * " ..
    "lr_lambda(epoch) (one function, or one per parameter group).",
  MultiplicativeLR = "lr_scheduler.MultiplicativeLR(optimizer, {lr_lambda=fn | {fn, ...}}) -> scheduler: " ..
    "multiplies the lr by lr_lambda(epoch) every epoch.",
  MultiStepLR = "lr_scheduler.MultiStepLR(optimizer, {milestones=, gamma=0.1}) -> scheduler: multiplies the lr " ..
    "by gamma at each milestone epoch.",
  ExponentialLR = "lr_scheduler.ExponentialLR(optimizer, {gamma=}) -> scheduler: multiplies the lr by gamma " ..
    "every epoch.",
  LinearLR = "lr_scheduler.LinearLR(optimizer, {start_factor=1/3, end_factor=1.0, total_iters=5}) -> scheduler: " ..
    "the lr factor goes linearly from start_factor to end_factor over total_iters epochs.",
  ConstantLR = "lr_scheduler.ConstantLR(optimizer, {factor=1/3, total_iters=5}) -> scheduler: the lr times " ..
    "factor until epoch total_iters.",
  SequentialLR = "lr_scheduler.SequentialLR(optimizer, {schedulers=, milestones=}) -> scheduler: runs each " ..
    "scheduler in turn, switching at the milestones.",
  ChainedScheduler = "lr_scheduler.ChainedScheduler({scheduler, ...}) -> scheduler: steps all of them at " ..
    "every step.",
  OneCycleLR = "lr_scheduler.OneCycleLR(optimizer, {max_lr=, total_steps= | epochs=, steps_per_epoch=, " ..
    "pct_start=0.3, anneal_strategy='cos', cycle_momentum=true, base_momentum=0.85, max_momentum=0.95, " ..
    "div_factor=25, final_div_factor=1e4, three_phase=false}) -> scheduler: the 1cycle policy (step it every batch).",
  CyclicLR = "lr_scheduler.CyclicLR(optimizer, {base_lr=, max_lr=, step_size_up=2000, step_size_down=, " ..
    "mode='triangular', gamma=1.0, scale_fn=, scale_mode='cycle', cycle_momentum=true, base_momentum=0.8, " ..
    "max_momentum=0.9}) -> scheduler: the lr cycles between base_lr and max_lr.",
  CosineAnnealingWarmRestarts = "lr_scheduler.CosineAnnealingWarmRestarts(optimizer, {T_0=, T_mult=1, " ..
    "eta_min=0}) -> scheduler: cosine annealing restarted every T_0 epochs (each period T_mult times the last).",
  ReduceLROnPlateau = "lr_scheduler.ReduceLROnPlateau(optimizer, {mode='min', factor=0.1, patience=10, " ..
    "threshold=1e-4, threshold_mode='rel', cooldown=0, min_lr=0, eps=1e-8}) -> scheduler: scheduler:step(metric) " ..
    "multiplies the lr by factor once the metric stops improving for more than patience epochs.",
})

document(sched.LRScheduler, {
  extend = "LRScheduler:extend(\"Name\") -> class: a new scheduler; define init and get_lr.",
  init = "LRScheduler:init(optimizer[, last_epoch=-1][, verbose=false]): the constructor; records each group's " ..
    "initial_lr.",
  print_lr = "scheduler:print_lr(group, lr[, epoch]): with verbose, prints the lr just set for a group (1-based) in " ..
    "PyTorch's words.",
  step = "scheduler:step(): advances one epoch and sets the optimizer's lr.",
  get_last_lr = "scheduler:get_last_lr() -> list of numbers: the lr of each group after the last step.",
  state_dict = "scheduler:state_dict() -> table: the scheduler's state (not its functions or optimizer).",
  load_state_dict = "scheduler:load_state_dict(sd): restores a state_dict() of the same kind of scheduler.",
})

local distributions = torch.distributions
local VALIDATE = " validate_args (default true, or Distribution.set_default_validate_args) checks the parameters " ..
  "and log_prob's values against PyTorch's constraints."
document(distributions, {
  Distribution = "distributions.Distribution: the base class: d:sample([sample_shape]), d:rsample([sample_shape]), " ..
    "d:log_prob(value), d:entropy(), and the properties mean, stddev, variance, batch_shape, event_shape, " ..
    "has_rsample.",
  Normal = "distributions.Normal(loc, scale[, {validate_args=}]) -> Distribution: the normal distribution " ..
    "(tensors or numbers, broadcast); rsample is loc + eps * scale." .. VALIDATE,
  Uniform = "distributions.Uniform(low, high[, {validate_args=}]) -> Distribution: uniform on [low, high) " ..
    "(low < high); rsample is low + u * (high - low)." .. VALIDATE,
  Gamma = "distributions.Gamma(concentration, rate[, {validate_args=}]) -> Distribution: the gamma distribution; " ..
    "rsample's gradient is the implicit one of the standard gamma sample (PyTorch's _standard_gamma_grad)." .. VALIDATE,
  Beta = "distributions.Beta(concentration1, concentration0[, {validate_args=}]) -> Distribution: the beta " ..
    "distribution on [0, 1]; rsample is G1 / (G1 + G0) of reparameterised gamma samples." .. VALIDATE,
  Categorical = "distributions.Categorical({probs=} | {logits=}[, {validate_args=}]) -> Distribution: categories " ..
    "1..K along the last dim (probs normalised to sum 1, logits by logsumexp); samples and log_prob values are " ..
    "1-based." .. VALIDATE,
  Bernoulli = "distributions.Bernoulli({probs=} | {logits=}[, {validate_args=}]) -> Distribution: values 0 and 1 " ..
    "with probability probs (or sigmoid(logits))." .. VALIDATE,
  MultivariateNormal = "distributions.MultivariateNormal(loc, {covariance_matrix= | precision_matrix= | " ..
    "scale_tril=}[, {validate_args=}]) -> Distribution: event_shape {n}; the matrices (..., n, n) broadcast with " ..
    "loc's batch dims; properties scale_tril, covariance_matrix, precision_matrix." .. VALIDATE,
  Independent = "distributions.Independent(base_distribution, reinterpreted_batch_ndims[, {validate_args=}]) -> " ..
    "Distribution: the base's right-most batch dims become event dims (log_prob and entropy summed over them).",
  kl_divergence = "distributions.kl_divergence(p, q) -> Tensor: KL(p || q) of batch_shape, for the pairs PyTorch " ..
    "1.13 registers among Normal, Uniform, Gamma, Beta, Categorical, Bernoulli, MultivariateNormal and " ..
    "Independent (also distributions.kl.kl_divergence); other pairs are an error naming both.",
})

document(distributions.Distribution, {
  sample = "d:sample([sample_shape]) -> Tensor: a sample of shape sample_shape .. batch_shape .. event_shape " ..
    "(sample_shape a list of sizes, or {sample_shape=}), without gradients.",
  rsample = "d:rsample([sample_shape]) -> Tensor: a reparameterised sample (gradients flow to the parameters); an " ..
    "error where has_rsample is false.",
  log_prob = "d:log_prob(value) -> Tensor: the log density (or mass) of value, a tensor whose right-most dims are " ..
    "event_shape and that broadcasts with batch_shape.",
  entropy = "d:entropy() -> Tensor: the entropy, of batch_shape.",
  set_default_validate_args = "Distribution.set_default_validate_args(value): whether distributions made without " ..
    "validate_args check their arguments (true at start).",
})

local mp = torch.multiprocessing
document(mp, {
  Queue = "multiprocessing.Queue() -> queue: items put by any process are received by one getter; tensors travel " ..
    "by shared-memory handle (no copy), numbers, strings, booleans, tables and functions by value.",
  Pipe = "multiprocessing.Pipe([duplex=true]) -> a, b: two connected ends; with duplex=false a only receives and " ..
    "b only sends.",
  Process = "multiprocessing.Process{target=fn[, args={...}]} -> process: start() runs fn(table.unpack(args)) in " ..
    "a new worker process; join([timeout]), is_alive(), terminate(), kill(), exitcode.",
  spawn = "multiprocessing.spawn(fn[, {nprocs=1, args={}, join=true}]) -> nil | context: runs fn(rank, ...) in " ..
    "nprocs worker processes (rank 0-based, at most 4 per CPU); a worker's error is raised here with its " ..
    "traceback; join=false returns a context with join([timeout]) and pids().",
})
document(mp._Queue, {
  put = "queue:put(obj): sends obj to the queue (tensors move to shared memory).",
  get = "queue:get([block=true][, timeout]) or get{block=, timeout=} -> obj: the next item; an error when none " ..
    "arrives in time.",
  get_nowait = "queue:get_nowait() -> obj: get(false).",
  empty = "queue:empty() -> boolean: whether no item waits.",
  close = "queue:close(): closes this process's ends of the queue.",
})
document(mp._Connection, {
  send = "conn:send(obj): sends obj to the other end.",
  recv = "conn:recv() -> obj: the next object, waiting for it.",
  poll = "conn:poll([timeout=0]) -> boolean: whether an object waits, after up to timeout seconds.",
  close = "conn:close(): closes this end.",
})
document(mp._Process, {
  start = "process:start(): starts the worker process.",
  join = "process:join([timeout]): waits until the process ends (or timeout seconds pass); sets exitcode.",
  is_alive = "process:is_alive() -> boolean: whether it was started and has not ended.",
  terminate = "process:terminate(): sends SIGTERM.",
  kill = "process:kill(): sends SIGKILL.",
})
document(mp._SpawnContext, {
  join = "context:join([timeout]) -> boolean: waits for the workers (true when all ended, false when the " ..
    "timeout ran out first); a worker's failure is raised, after the others are ended.",
  pids = "context:pids() -> list: the workers' process ids, by rank.",
})

document(nn.parallel, {
  DistributedDataParallel = "nn.parallel.DistributedDataParallel(module[, {process_group=, bucket_cap_mb=25, " ..
    "find_unused_parameters=false, broadcast_buffers=true}]) -> module: data-parallel training over the ranks: " ..
    "rank 0's parameters and buffers broadcast at construction, gradients averaged during backward in buckets " ..
    "(docs/distributed.md); state_dict keys prefixed with module.",
})
document(nn.parallel.DistributedDataParallel, {
  init = "DistributedDataParallel:init(module[, options]): the constructor (see DistributedDataParallel).",
  forward = "ddp:forward(...) -> module's outputs: broadcasts the buffers (broadcast_buffers), arms the gradient " ..
    "averaging of the next backward, and runs the module.",
  no_sync = "ddp:no_sync([fn, ...]) -> fn's results, or a to-be-closed guard: backwards inside accumulate " ..
    "gradients locally; the next synchronized backward averages the sum.",
})
document(data.distributed, {
  DistributedSampler = "utils.data.distributed.DistributedSampler(dataset[, {num_replicas=, rank=, shuffle=true, " ..
    "seed=0, drop_last=false}]) -> sampler: this rank's share of the indices, split as PyTorch does; num_replicas " ..
    "and rank default to the default group's.",
})
document(data.distributed.DistributedSampler, {
  indices = "sampler:indices() -> list: this rank's indices (1-based) for the current epoch.",
  iter = "sampler:iter() -> iterator: this rank's indices for the current epoch.",
  len = "sampler:len() -> integer: the number of indices a rank gets (also #sampler).",
  set_epoch = "sampler:set_epoch(epoch): the shuffled order of the next epochs (seed + epoch).",
})

-- Mixed precision (bindings/lua/torch_amp.lua; the state's functions are bindings).
document(torch, {
  autocast = "autocast(device_type[, {dtype=, enabled=true, cache_enabled=}][, fn, ...]) -> results of fn, or a " ..
    "to-be-closed scope: ops of PyTorch's autocast lists run in dtype (bfloat16 or float16; default the device's " ..
    "autocast dtype, bfloat16 on \"cpu\", float16 on \"cuda\") on tensors of device_type: products and " ..
    "convolutions in dtype, losses (and on CUDA reductions, softmax, exp, log) in float32; `local ac <close> = " ..
    "torch.autocast(\"cpu\")` lasts to the end of the block; nesting, enabled=false and errors restore the " ..
    "previous state; \"cuda\" without CUDA disables itself with a warning.",
})
document(torch.amp, {
  GradScaler = "amp.GradScaler([device=\"cuda\"][, {device=, init_scale=65536, growth_factor=2, backoff_factor=0.5, " ..
    "growth_interval=2000, enabled=true}]) -> scaler: dynamic loss scaling; scaler:scale(loss):backward(), " ..
    "scaler:step(optimizer) (skipped when a gradient is inf or NaN), scaler:update() (the scale halves after inf/NaN " ..
    "and doubles after growth_interval clean steps). Disabled for \"cuda\" without CUDA, as PyTorch.",
})
document(torch.amp.GradScaler, {
  new = "GradScaler.new([device][, {...}]) -> scaler: as amp.GradScaler(...).",
  scale = "scaler:scale(outputs) -> outputs times the scale: a tensor (its shape broadcast with the 1-element " ..
    "float32 scale) or a table of them, nested; outputs itself when disabled.",
  unscale_ = "scaler:unscale_(optimizer): divides the optimizer's gradients by the scale and records whether one " ..
    "is inf or NaN (once per optimizer between updates; before gradient clipping).",
  step = "scaler:step(optimizer, ...) -> what optimizer:step(...) returns: unscales unless unscale_ was called and " ..
    "runs the step only when every gradient is finite (nil when skipped).",
  update = "scaler:update([new_scale]): the next scale: times backoff_factor after a step with inf/NaN, times " ..
    "growth_factor after growth_interval clean steps in a row, or new_scale (a number or a 1-element float32 tensor).",
  get_scale = "scaler:get_scale() -> number: the current scale (init_scale before the first scale(), 1.0 when disabled).",
  is_enabled = "scaler:is_enabled() -> boolean.",
  get_growth_factor = "scaler:get_growth_factor() -> number.",
  set_growth_factor = "scaler:set_growth_factor(v): a new growth_factor (> 1).",
  get_backoff_factor = "scaler:get_backoff_factor() -> number.",
  set_backoff_factor = "scaler:set_backoff_factor(v): a new backoff_factor (< 1).",
  get_growth_interval = "scaler:get_growth_interval() -> integer.",
  set_growth_interval = "scaler:set_growth_interval(n): a new growth_interval (a positive integer).",
  state_dict = "scaler:state_dict() -> table: PyTorch's keys scale, growth_factor, backoff_factor, growth_interval, " ..
    "_growth_tracker (empty when disabled).",
  load_state_dict = "scaler:load_state_dict(sd): restores a state_dict() (an error for an empty one, as PyTorch).",
})
-- torch.compile (bindings/lua/torch_compile.lua; the recording core is tensor/capture/).
document(torch, {
  compile = "compile(fn[, {fullgraph=false, disable=false}]) -> function; compile(module[, opts]) -> module: the " ..
    "first call with new arguments runs fn eagerly while the engine records its work (forward, backward(), " ..
    "optimizer steps); later calls whose guards hold (arguments' kinds, numbers and tensor layouts, engine modes, " ..
    "every value fn reaches through its upvalues) replay the recording with no Lua, no graph building and no " ..
    "allocation, with results equal to eager mode's bit for bit. A result whose backward is left to the caller " ..
    "(torch.compile(model) in a training loop) carries a grad_fn that replays a backward recorded with it. What " ..
    "cannot be replayed (a value read into Lua, printing, C functions with effects, Lua state changed on every " ..
    "call) " ..
    "makes fn run eagerly from then on, with one message naming the reason and line; with fullgraph=true it is an " ..
    "error. CUDA work is captured too; a step of device work with fixed arguments replays as one CUDA graph. " ..
    "disable=true returns fn itself. docs/compile.md.",
})
document(torch.compiler, {
  reset = "compiler.reset(): every compiled function forgets its recordings and its eager fallback.",
  stats = "compiler.stats(f) -> {recordings=, replays=, variants=, cuda_graphs=, eager=, reason=}: what the compiled " ..
    "function (or module) f has done: calls recorded, calls replayed, variants kept (cuda_graphs of them replaying " ..
    "as one CUDA graph), and whether (and why) it runs eagerly.",
})
document(torch._dynamo, {
  explain = "_dynamo.explain(fn)(...) -> report: runs fn(...) once under a fresh compile and reports graph_count, " ..
    "graph_break_count, break_reasons, op_count, ops (each \"binding:entry\"), fused_groups, buffers and bytes " ..
    "kept, guarded_values, guarded_tensors, cuda_graph and cuda_graph_reason (whether replays are planned as one " ..
    "CUDA graph, and why not); tostring(report) prints them.",
})
-- The profiler (bindings/lua/torch_profiler.lua; the recording core is tensor/profiler/).
local profiler = torch.profiler
document(profiler, {
  profile = "profiler.profile([{record_shapes=false, profile_memory=false, with_stack=false, activities=}][, fn, ...]) " ..
    "-> profile[, results of fn]: with fn, runs fn(...) under the profiler and returns the profile, then fn's " ..
    "results (the profiler stops also on an error); without, starts recording and returns the profile, to-be-closed: " ..
    "`local prof <close> = torch.profiler.profile{...}` records until the end of the block (prof:stop() earlier). " ..
    "Each binding call, autograd backward node and record_function range is an event with its self and total time; " ..
    "record_shapes adds its arguments' shapes, profile_memory the CPU bytes allocated net while it ran, with_stack " ..
    "the Lua stack of the call. activities: {ProfilerActivity.CPU} only. One profiler records at a time.",
  record_function = "profiler.record_function(name[, fn, ...]) -> results of fn, or a to-be-closed range: a labelled " ..
    "range in the profile around fn, or until the end of the block (`local r <close> = record_function(\"step\")`, " ..
    "r:close() earlier); records nothing when no profiler records.",
})
document(profiler._Profile, {
  stop = "prof:stop(): stops recording (what leaving its <close> scope does); nothing when stopped already.",
  events = "prof:events() -> EventList: every event in the order it began: name, kind (\"op\", \"backward\", " ..
    "\"user\"), time_range (start, end), cpu_time_total, self_cpu_time_total (microseconds), cpu_parent, " ..
    "cpu_children, and input_shapes, cpu_memory_usage, self_cpu_memory_usage, stack when recorded.",
  key_averages = "prof:key_averages([{group_by_input_shape=false, group_by_stack_n=0}]) -> EventList: the events " ..
    "summed per name (and per input shapes / first n stack frames): key, count, cpu_time_total, " ..
    "self_cpu_time_total, cpu_time (the mean), cpu_memory_usage, self_cpu_memory_usage, input_shapes, stack.",
  export_chrome_trace = "prof:export_chrome_trace(path): writes the events as Chrome trace JSON (chrome://tracing, " ..
    "ui.perfetto.dev): complete events with ts and dur in microseconds, args Input Dims, CPU Mem, Call stack.",
})
document(profiler._EventList, {
  table = "events:table([{sort_by=, row_limit=100, header=, max_name_column_width=55, max_shapes_column_width=80, " ..
    "max_src_column_width=75}]) -> string: PyTorch's summary table (Name, Self CPU %, Self CPU, CPU total %, CPU " ..
    "total, CPU time avg, CPU Mem and Self CPU Mem with profile_memory, # of Calls, Input Shapes and Source " ..
    "Location when grouped by them), largest sort_by first (cpu_time, cpu_time_total, self_cpu_time_total, count, " ..
    "cpu_memory_usage, self_cpu_memory_usage); row_limit=-1 shows every row.",
})
document(profiler._Range, {
  close = "range:close(): ends a record_function range (and ranges still open inside it); nothing when ended.",
})
document(torch.cuda.amp, {
  GradScaler = "cuda.amp.GradScaler([{init_scale=, growth_factor=, backoff_factor=, growth_interval=, enabled=}]) " ..
    "-> scaler: amp.GradScaler(\"cuda\", {...}).",
})

-- Attention and transformers (torch_nn_attention.lua).
document(F, {
  scaled_dot_product_attention = "F.scaled_dot_product_attention(query, key, value[, {attn_mask=, dropout_p=0, " ..
    "is_causal=false, scale=1/sqrt(E)}]) -> Tensor: softmax(query key^T * scale + mask) value over (..., L, E), " ..
    "(..., S, E), (..., S, Ev) with broadcasting batch dims; a bool attn_mask is true where a query may attend, " ..
    "a float one is added; is_causal masks keys after each query (not with attn_mask); dropout_p drops weights.",
})

document(nn, {
  MultiheadAttention = "nn.MultiheadAttention(embed_dim, num_heads[, {dropout=0, bias=true, add_bias_kv=false, " ..
    "add_zero_attn=false, kdim=, vdim=, batch_first=false, dtype=, device=}]) -> Module: m(query, key, value[, " ..
    "{key_padding_mask=, need_weights=true, attn_mask=, average_attn_weights=true, is_causal=false}]) returns " ..
    "the output (L, N, E) (batch_first: (N, L, E); unbatched: (L, E)) and the attention weights (nil unless " ..
    "need_weights); bool masks are true where attending is NOT allowed, float masks are added; is_causal says " ..
    "attn_mask is the causal mask (checked). Parameters as PyTorch's: in_proj_weight (or q/k/v_proj_weight), " ..
    "in_proj_bias, bias_k, bias_v, out_proj.",
  TransformerEncoderLayer = "nn.TransformerEncoderLayer(d_model, nhead[, {dim_feedforward=2048, dropout=0.1, " ..
    "activation=\"relu\", layer_norm_eps=1e-5, batch_first=false, norm_first=false, dtype=, device=}]) -> Module: " ..
    "self-attention and a feed-forward block, each with a residual and a LayerNorm (before: norm_first); " ..
    "activation \"relu\", \"gelu\" or a function or module; forward(src[, {src_mask=, src_key_padding_mask=, " ..
    "is_causal=}]).",
  TransformerDecoderLayer = "nn.TransformerDecoderLayer(d_model, nhead[, {dim_feedforward=2048, dropout=0.1, " ..
    "activation=\"relu\", layer_norm_eps=1e-5, batch_first=false, norm_first=false, dtype=, device=}]) -> Module: " ..
    "self-attention, attention over memory and a feed-forward block; forward(tgt, memory[, {tgt_mask=, " ..
    "memory_mask=, tgt_key_padding_mask=, memory_key_padding_mask=, tgt_is_causal=, memory_is_causal=}]).",
  TransformerEncoder = "nn.TransformerEncoder(encoder_layer, num_layers[, norm]) -> Module: num_layers copies " ..
    "of encoder_layer (layers.0, layers.1, ...) and an optional final norm; forward(src[, {mask=, " ..
    "src_key_padding_mask=, is_causal=}]).",
  TransformerDecoder = "nn.TransformerDecoder(decoder_layer, num_layers[, norm]) -> Module: num_layers copies " ..
    "of decoder_layer and an optional final norm; forward(tgt, memory[, {tgt_mask=, memory_mask=, " ..
    "tgt_key_padding_mask=, memory_key_padding_mask=, tgt_is_causal=, memory_is_causal=}]).",
  Transformer = "nn.Transformer([{d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6, " ..
    "dim_feedforward=2048, dropout=0.1, activation=\"relu\", custom_encoder=, custom_decoder=, layer_norm_eps=1e-5, " ..
    "batch_first=false, norm_first=false, dtype=, device=}]) -> Module: encoder and decoder stacks with final " ..
    "LayerNorms, Xavier-initialised; forward(src, tgt[, {src_mask=, tgt_mask=, memory_mask=, " ..
    "src_key_padding_mask=, tgt_key_padding_mask=, memory_key_padding_mask=, src_is_causal=, tgt_is_causal=, " ..
    "memory_is_causal=}]). nn.Transformer.generate_square_subsequent_mask(sz[, {dtype=, device=}]) gives the " ..
    "causal float mask (-inf above the diagonal).",
})

document(nn.Transformer, {
  generate_square_subsequent_mask = "nn.Transformer.generate_square_subsequent_mask(sz[, {dtype=, device=}]) -> " ..
    "Tensor: the (sz, sz) float mask with -inf above the diagonal and 0 elsewhere (each position sees itself and " ..
    "the ones before it).",
})
