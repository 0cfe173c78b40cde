-- Attention and transformers, as PyTorch 2.x has them: F.scaled_dot_product_attention,
-- nn.MultiheadAttention and the Transformer encoder/decoder layers, stacks and model, written
-- on the engine's differentiable ops (linear, bmm, softmax), so autograd differentiates them.
-- Parameter and submodule names are PyTorch's (in_proj_weight, out_proj.weight,
-- layers.0.self_attn.in_proj_weight, linear1, norm1, ...), so PyTorch state_dicts load.
-- Sequences are dim 1 and batches dim 2 unless batch_first (PyTorch's layout); masks follow
-- PyTorch's conventions: for MultiheadAttention and the transformers a true entry of a bool
-- mask is a position that may NOT be attended to, for scaled_dot_product_attention one that
-- may; float masks are added to the attention scores.
local torch = ...
local nn = torch.nn
local F, init, util = nn.functional, nn.init, nn._util
local fail, describe, shape_str, factory = util.fail, util.describe, util.shape_str, util.factory

local NEG_INF = -math.huge

-- A mask argument: nil, a bool tensor or a float tensor of `dtype` (the scores' dtype).
local function check_mask(op, name, mask, dtype)
  if mask == nil then return nil end
  util.check_tensor(op, name, mask)
  if mask.dtype ~= "bool" and not mask:is_floating_point() then
    fail(op, "%s must be a bool or floating-point tensor, got dtype %s", name, mask.dtype)
  end
  if mask.dtype ~= "bool" and mask.dtype ~= dtype then
    fail(op, "%s has dtype %s but the attention scores have dtype %s", name, mask.dtype, dtype)
  end
  return mask
end

-- A bool or float mask as the float mask added to the scores: a bool mask's true entries
-- become -inf when `true_blocks` (MultiheadAttention's convention), its false entries when
-- not (scaled_dot_product_attention's).
local function additive(mask, dtype, true_blocks)
  if mask == nil or mask.dtype ~= "bool" then return mask end
  local blocked = true_blocks and mask or mask:logical_not()
  return torch.zeros(mask.shape, {dtype = dtype, device = mask.device}):masked_fill(blocked, NEG_INF)
end

-- The causal float mask of L queries over S keys: query i sees keys 1..i (top-left aligned,
-- as PyTorch's is_causal).
local function causal_mask(L, S, dtype, device)
  return torch.triu(torch.full({L, S}, NEG_INF, {dtype = dtype, device = device}), 1)
end

---------------------------------------------------------------------------------------------
-- scaled_dot_product_attention

-- softmax(q k^T * scale + mask) v for q (..., L, E), k (..., S, E), v (..., S, Ev): the
-- product over batch dims that broadcast (bmm when they are one dim already); q comes scaled
-- already when scale is nil. Returns the output and the attention weights (after dropout).
local function attend(q, k, v, mask, dropout_p, scale)
  local matmul = (q:dim() == 3 and k:dim() == 3 and v:dim() == 3) and torch.bmm or torch.matmul
  local s = matmul(scale and q * scale or q, k:transpose(-2, -1))
  if mask ~= nil then s = s + mask end
  local a = torch.softmax(s, -1)
  if dropout_p > 0 then a = F.dropout(a, dropout_p, true) end
  return matmul(a, v), a
end

local function check_dropout_p(op, name, p)
  util.check_number(op, name, p)
  if not (p >= 0 and p <= 1) then fail(op, "%s must be between 0 and 1, got %s", name, describe(p)) end
  return p
end

-- The broadcast of shapes a and b, or nil when they do not broadcast.
local function broadcast(a, b)
  local out, n = {}, math.max(#a, #b)
  for i = 1, n do
    local x, y = a[#a - n + i] or 1, b[#b - n + i] or 1
    if x ~= y and x ~= 1 and y ~= 1 then return nil end
    out[i] = x == 1 and y or x
  end
  return out
end

-- F.scaled_dot_product_attention(query, key, value[, attn_mask][, dropout_p][, is_causal]
-- [, scale]): PyTorch 2.x's formula; dropout applies whenever dropout_p > 0.
function F.scaled_dot_product_attention(query, key, value, ...)
  local op = "scaled_dot_product_attention"
  local o = util.args(op, {"attn_mask", "dropout_p", "is_causal", "scale"}, 0, {dropout_p = 0, is_causal = false}, ...)
  for _, nt in ipairs({{"query", query}, {"key", key}, {"value", value}}) do
    local name, t = nt[1], nt[2]
    util.check_float(op, name, t)
    if t:dim() < 2 then fail(op, "%s must have at least 2 dims, got shape %s", name, shape_str(t.shape)) end
  end
  if key.dtype ~= query.dtype or value.dtype ~= query.dtype then
    fail(op, "query, key and value must have one dtype, got %s, %s and %s", query.dtype, key.dtype, value.dtype)
  end
  local qs, ks, vs = query.shape, key.shape, value.shape
  local L, S = qs[#qs - 1], ks[#ks - 1]
  if qs[#qs] ~= ks[#ks] then
    fail(op, "query of shape %s and key of shape %s differ in their last dim", shape_str(qs), shape_str(ks))
  end
  if vs[#vs - 1] ~= S then
    fail(op, "key of shape %s and value of shape %s differ in their sequence dim", shape_str(ks), shape_str(vs))
  end
  local batch = broadcast({table.unpack(qs, 1, #qs - 2)}, {table.unpack(ks, 1, #ks - 2)})
  batch = batch and broadcast(batch, {table.unpack(vs, 1, #vs - 2)})
  if not batch then
    fail(op, "the batch dims of query %s, key %s and value %s do not broadcast", shape_str(qs), shape_str(ks),
         shape_str(vs))
  end
  local scores = batch
  scores[#scores + 1], scores[#scores + 2] = L, S
  local mask = check_mask(op, "attn_mask", o.attn_mask, query.dtype)
  local p = check_dropout_p(op, "dropout_p", o.dropout_p)
  if util.check_bool(op, "is_causal", o.is_causal) then
    if mask ~= nil then fail(op, "is_causal and attn_mask cannot both be given") end
    mask = causal_mask(L, S, query.dtype, query.device)
  elseif mask ~= nil then
    local b = broadcast(mask.shape, scores)
    if not b or not util.same_shape(b, scores) then
      fail(op, "attn_mask of shape %s does not broadcast to the scores' shape %s", shape_str(mask.shape),
           shape_str(scores))
    end
    mask = additive(mask, query.dtype, false)
  end
  local scale = o.scale == nil and 1 / math.sqrt(qs[#qs]) or util.check_number(op, "scale", o.scale)
  return (attend(query, key, value, mask, p, scale))
end

---------------------------------------------------------------------------------------------
-- MultiheadAttention

-- PyTorch's out_proj class: a Linear under the name PyTorch prints.
local OutProj = nn.Linear:extend("NonDynamicallyQuantizableLinear")

local MultiheadAttention = util.module_class("MultiheadAttention")

function MultiheadAttention:init(...)
  local op = "MultiheadAttention"
  local o = util.args(op, {"embed_dim", "num_heads", "dropout", "bias", "add_bias_kv", "add_zero_attn", "kdim", "vdim",
                           "batch_first", "device", "dtype"}, 2,
                      {dropout = 0, bias = true, add_bias_kv = false, add_zero_attn = false, batch_first = false}, ...)
  local E = util.check_int(op, "embed_dim", o.embed_dim, 1)
  local H = util.check_int(op, "num_heads", o.num_heads, 1)
  if E % H ~= 0 then fail(op, "embed_dim (%d) must be divisible by num_heads (%d)", E, H) end
  self.embed_dim, self.num_heads, self.head_dim = E, H, E // H
  self.kdim = o.kdim == nil and E or util.check_int(op, "kdim", o.kdim, 1)
  self.vdim = o.vdim == nil and E or util.check_int(op, "vdim", o.vdim, 1)
  self._qkv_same_embed_dim = self.kdim == E and self.vdim == E
  self.dropout = check_dropout_p(op, "dropout", o.dropout)
  self.batch_first = util.check_bool(op, "batch_first", o.batch_first)
  local bias = util.check_bool(op, "bias", o.bias)
  local add_bias_kv = util.check_bool(op, "add_bias_kv", o.add_bias_kv)
  self.add_zero_attn = util.check_bool(op, "add_zero_attn", o.add_zero_attn)
  local fk = factory(o)
  if self._qkv_same_embed_dim then
    self.in_proj_weight = nn.Parameter(torch.empty({3 * E, E}, fk))
  else
    self.q_proj_weight = nn.Parameter(torch.empty({E, E}, fk))
    self.k_proj_weight = nn.Parameter(torch.empty({E, self.kdim}, fk))
    self.v_proj_weight = nn.Parameter(torch.empty({E, self.vdim}, fk))
  end
  if bias then self.in_proj_bias = nn.Parameter(torch.empty({3 * E}, fk)) end
  if add_bias_kv then
    self.bias_k = nn.Parameter(torch.empty({1, 1, E}, fk))
    self.bias_v = nn.Parameter(torch.empty({1, 1, E}, fk))
  end
  self.out_proj = OutProj(E, E, {bias = bias, dtype = fk.dtype, device = fk.device})
  self:_reset_parameters()
end

-- As PyTorch: Xavier-uniform projections, zero biases, Xavier-normal bias_k and bias_v (the
-- out_proj weight keeps Linear's initialisation).
function MultiheadAttention:_reset_parameters()
  if self._qkv_same_embed_dim then
    init.xavier_uniform_(self.in_proj_weight)
  else
    init.xavier_uniform_(self.q_proj_weight)
    init.xavier_uniform_(self.k_proj_weight)
    init.xavier_uniform_(self.v_proj_weight)
  end
  if self.in_proj_bias ~= nil then
    init.zeros_(self.in_proj_bias)
    init.zeros_(self.out_proj.bias)
  end
  if self.bias_k ~= nil then
    init.xavier_normal_(self.bias_k)
    init.xavier_normal_(self.bias_v)
  end
end

-- The three input projections, each its own product with its rows of the packed weight
-- (whose gradient rows land in one in_proj_weight.grad); q comes scaled by 1/sqrt(head_dim).
local function project(self, query, key, value)
  local E, b = self.embed_dim, self.in_proj_bias
  local function part(x, i, separate)
    local w = separate or self.in_proj_weight:narrow(1, (i - 1) * E + 1, E)
    return torch.linear(x, w, b and b:narrow(1, (i - 1) * E + 1, E))
  end
  local q = part(query, 1, self.q_proj_weight) * (1 / math.sqrt(self.head_dim))
  return q, part(key, 2, self.k_proj_weight), part(value, 3, self.v_proj_weight)
end

local function dims_text(t) return string.format("%d-D (shape %s)", t:dim(), shape_str(t.shape)) end

-- Checks the shapes of a forward's inputs (PyTorch's _mha_shape_check and the size checks of
-- multi_head_attention_forward); returns whether the input is batched.
local function check_inputs(self, op, query, key, value, key_padding_mask, attn_mask)
  local batched = query:dim() == 3
  if query:dim() ~= 2 and not batched then
    fail(op, "query must be 2-D (unbatched) or 3-D (batched), got %s", dims_text(query))
  end
  for _, nt in ipairs({{"key", key}, {"value", value}}) do
    local name, t = nt[1], nt[2]
    if t:dim() ~= query:dim() then fail(op, "query is %d-D, so %s must be too, got %s", query:dim(), name, dims_text(t)) end
  end
  if key_padding_mask ~= nil and key_padding_mask:dim() ~= query:dim() - 1 then
    fail(op, "key_padding_mask must be %d-D for a %d-D query, got %s", query:dim() - 1, query:dim(),
         dims_text(key_padding_mask))
  end
  if attn_mask ~= nil and attn_mask:dim() ~= 2 and attn_mask:dim() ~= 3 then
    fail(op, "attn_mask must be 2-D or 3-D, got %s", dims_text(attn_mask))
  end
  local q, k, v = query.shape, key.shape, value.shape
  if q[#q] ~= self.embed_dim then
    fail(op, "query of shape %s must end in embed_dim (%d)", shape_str(q), self.embed_dim)
  end
  if k[#k] ~= self.kdim then fail(op, "key of shape %s must end in kdim (%d)", shape_str(k), self.kdim) end
  if v[#v] ~= self.vdim then fail(op, "value of shape %s must end in vdim (%d)", shape_str(v), self.vdim) end
  for i = 1, #k - 1 do
    if k[i] ~= v[i] then fail(op, "key of shape %s and value of shape %s differ", shape_str(k), shape_str(v)) end
  end
  if batched then
    local bd = self.batch_first and 1 or 2
    if k[bd] ~= q[bd] then
      fail(op, "query of shape %s and key of shape %s have different batch sizes", shape_str(q), shape_str(k))
    end
  end
  return batched
end

-- forward(query, key, value[, key_padding_mask][, need_weights][, attn_mask]
-- [, average_attn_weights][, is_causal]) -> attn_output, attn_weights (nil unless need_weights).
function MultiheadAttention:forward(...)
  local op = "MultiheadAttention"
  local o = util.args(op, {"query", "key", "value", "key_padding_mask", "need_weights", "attn_mask",
                           "average_attn_weights", "is_causal"}, 3,
                      {need_weights = true, average_attn_weights = true, is_causal = false}, ...)
  local query = util.check_float(op, "query", o.query)
  local key, value = util.check_float(op, "key", o.key), util.check_float(op, "value", o.value)
  local dtype = query.dtype
  for _, nt in ipairs({{"key", key}, {"value", value}}) do
    local name, t = nt[1], nt[2]
    if t.dtype ~= dtype then fail(op, "query has dtype %s but %s has dtype %s", dtype, name, t.dtype) end
  end
  local kpm = check_mask(op, "key_padding_mask", o.key_padding_mask, dtype)
  local attn_mask = check_mask(op, "attn_mask", o.attn_mask, dtype)
  local need_weights = util.check_bool(op, "need_weights", o.need_weights)
  local average = util.check_bool(op, "average_attn_weights", o.average_attn_weights)
  local is_causal = util.check_bool(op, "is_causal", o.is_causal)
  local batched = check_inputs(self, op, query, key, value, kpm, attn_mask)

  -- To (L, N, E): unbatched inputs get a batch of one, batch_first ones are transposed.
  local function seq_first(t)
    if not batched then return t:unsqueeze(2) end
    return self.batch_first and t:transpose(1, 2) or t
  end
  local q_in, k_in, v_in = seq_first(query), seq_first(key), seq_first(value)
  if kpm ~= nil and not batched then kpm = kpm:unsqueeze(1) end
  local E, H, hd = self.embed_dim, self.num_heads, self.head_dim
  local L, N, S = q_in.shape[1], q_in.shape[2], k_in.shape[1]

  -- The masks as one float mask broadcasting over (N, H, L, S'), S' counting the added keys.
  local mask
  if attn_mask ~= nil then
    local want = attn_mask:dim() == 2 and {L, S} or {N * H, L, S}
    if not util.same_shape(attn_mask.shape, want) then
      fail(op, "attn_mask of shape %s should have shape %s", shape_str(attn_mask.shape), shape_str(want))
    end
    mask = additive(attn_mask, dtype, true)
    if is_causal and not mask:eq(causal_mask(L, S, dtype, mask.device)):all():item() then
      fail(op, "is_causal is set but attn_mask is not the causal mask (use nn.Transformer.generate_square_subsequent_mask)")
    end
    mask = attn_mask:dim() == 2 and mask:reshape(1, 1, L, S) or mask:reshape(N, H, L, S)
  elseif is_causal then
    fail(op, "is_causal needs attn_mask (the causal mask, as nn.Transformer.generate_square_subsequent_mask makes)")
  end
  if kpm ~= nil then
    if not util.same_shape(kpm.shape, {N, S}) then
      fail(op, "key_padding_mask of shape %s should have shape %s", shape_str(o.key_padding_mask.shape),
           shape_str(batched and {N, S} or {S}))
    end
    local pad = additive(kpm, dtype, true):reshape(N, 1, 1, S)
    mask = mask and mask + pad or pad
  end

  -- A key and value added (bias_k/bias_v, then zeros) are open to every query: the mask gets
  -- a column of zeros.
  local function open_added_key()
    if mask == nil then return end
    local shape = mask.shape
    shape[4] = 1
    mask = torch.cat({mask, torch.zeros(shape, {dtype = dtype, device = mask.device})}, 4)
  end

  local q, k, v = project(self, q_in, k_in, v_in)
  if self.bias_k ~= nil then
    k, v = torch.cat({k, self.bias_k:expand(1, N, E)}, 1), torch.cat({v, self.bias_v:expand(1, N, E)}, 1)
    open_added_key()
  end
  -- (L, N, E) -> (N, H, L, hd) as a view: the products read each head's rows in place.
  local function heads(t) return t:reshape(t.shape[1], N, H, hd):permute(2, 3, 1, 4) end
  q, k, v = heads(q), heads(k), heads(v)
  if self.add_zero_attn then
    local zeros = torch.zeros({N, H, 1, hd}, {dtype = dtype, device = q.device})
    k, v = torch.cat({k, zeros}, 3), torch.cat({v, zeros}, 3)
    open_added_key()
  end
  local p = self.training and self.dropout or 0
  local out, weights = attend(q, k, v, mask, p, nil)
  out = torch.linear(out:permute(3, 1, 2, 4):reshape(L, N, E), self.out_proj.weight, self.out_proj.bias)
  if not batched then out = out:squeeze(2)
  elseif self.batch_first then out = out:transpose(1, 2) end
  if not need_weights then return out, nil end
  if average then weights = weights:sum(2) / H end
  if not batched then weights = weights:squeeze(1) end
  return out, weights
end

---------------------------------------------------------------------------------------------
-- Copies of a module (PyTorch's copy.deepcopy of a layer for the stacks): new parameters and
-- buffers with the same values and requires_grad, submodules copied the same way (a module
-- or tensor shared inside the tree stays shared in the copy), plain fields copied (tables
-- deeply, functions shared).
local function deepcopy(v, memo)
  if memo[v] ~= nil then return memo[v] end
  if torch.is_tensor(v) then
    local c = v:detach():clone():requires_grad_(v.requires_grad)
    if v.requires_grad then c = nn.Parameter(c) end
    memo[v] = c
    return c
  end
  if type(v) ~= "table" then return v end
  if nn.is_module(v) then
    local c = setmetatable({}, getmetatable(v))
    memo[v] = c
    for _, field in ipairs({"_parameters", "_buffers", "_modules"}) do
      local od = rawget(v, field)
      local copy = setmetatable({keys = {table.unpack(od.keys)}, map = {}}, getmetatable(od))
      for k, x in pairs(od.map) do copy.map[k] = deepcopy(x, memo) end
      rawset(c, field, copy)
    end
    for k, x in next, v do
      if rawget(c, k) == nil then rawset(c, k, deepcopy(x, memo)) end
    end
    return c
  end
  if getmetatable(v) ~= nil then return v end  -- classes and other objects are shared
  local c = {}
  memo[v] = c
  for k, x in pairs(v) do c[deepcopy(k, memo)] = deepcopy(x, memo) end
  return c
end

-- n copies of a layer in a ModuleList (PyTorch's _get_clones).
local function clones(layer, n)
  local list = {}
  for i = 1, n do list[i] = deepcopy(layer, {}) end
  return nn.ModuleList(list)
end

-- The activation of a transformer layer: "relu", "gelu" or a callable (a function or a
-- module; a module is registered as the submodule "activation", as in PyTorch).
local function activation_fn(op, activation)
  if activation == "relu" then return F.relu end
  if activation == "gelu" then return F.gelu end
  if type(activation) == "string" or not util.is_callable(activation) then
    fail(op, "activation must be \"relu\", \"gelu\" or a function, got %s", describe(activation))
  end
  return activation
end

local LAYER_ARGS = {"d_model", "nhead", "dim_feedforward", "dropout", "activation", "layer_norm_eps", "batch_first",
                    "norm_first", "device", "dtype"}
local LAYER_DEFAULTS = {dim_feedforward = 2048, dropout = 0.1, activation = "relu", layer_norm_eps = 1e-5,
                        batch_first = false, norm_first = false}

-- The parts the encoder and decoder layers share: `attentions` MultiheadAttention modules
-- (self_attn, then multihead_attn), linear1, dropout, linear2, `norms` LayerNorms and as many
-- dropouts, in PyTorch's order.
local function build_layer(self, op, o, attentions, norms)
  local d = util.check_int(op, "d_model", o.d_model, 1)
  local nhead = util.check_int(op, "nhead", o.nhead, 1)
  local ff = util.check_int(op, "dim_feedforward", o.dim_feedforward, 1)
  local p = check_dropout_p(op, "dropout", o.dropout)
  local eps = util.check_number(op, "layer_norm_eps", o.layer_norm_eps)
  local batch_first = util.check_bool(op, "batch_first", o.batch_first)
  local fk = factory(o)
  if d % nhead ~= 0 then fail(op, "d_model (%d) must be divisible by nhead (%d)", d, nhead) end
  for _, name in ipairs(attentions) do
    self[name] = nn.MultiheadAttention(d, nhead, {dropout = p, batch_first = batch_first, dtype = fk.dtype,
                                                  device = fk.device})
  end
  self.linear1 = nn.Linear(d, ff, {dtype = fk.dtype, device = fk.device})
  self.dropout = nn.Dropout(p)
  self.linear2 = nn.Linear(ff, d, {dtype = fk.dtype, device = fk.device})
  self.norm_first = util.check_bool(op, "norm_first", o.norm_first)
  for i = 1, norms do self["norm" .. i] = nn.LayerNorm(d, {eps = eps, dtype = fk.dtype, device = fk.device}) end
  for i = 1, norms do self["dropout" .. i] = nn.Dropout(p) end
  self.activation = activation_fn(op, o.activation)
  self.batch_first = batch_first
end

-- The feed-forward block: linear2(dropout(activation(linear1(x)))), then dropout<last>.
local function feed_forward(self, x, last)
  return self["dropout" .. last](self.linear2(self.dropout(self.activation(self.linear1(x)))))
end

-- The attention block: attn(x, mem, mem) with the masks (no weights), then dropout<i>.
local function attention_block(self, attn, i, x, mem, mask, kpm, is_causal)
  local out = self[attn](x, mem, mem, {attn_mask = mask, key_padding_mask = kpm, need_weights = false,
                                       is_causal = is_causal})
  return self["dropout" .. i](out)
end

local EncoderLayer = util.module_class("TransformerEncoderLayer")

function EncoderLayer:init(...)
  local op = "TransformerEncoderLayer"
  build_layer(self, op, util.args(op, LAYER_ARGS, 2, LAYER_DEFAULTS, ...), {"self_attn"}, 2)
end

-- forward(src[, src_mask][, src_key_padding_mask][, is_causal])
function EncoderLayer:forward(...)
  local o = util.args("TransformerEncoderLayer", {"src", "src_mask", "src_key_padding_mask", "is_causal"}, 1,
                      {is_causal = false}, ...)
  local x = o.src
  local function sa(y) return attention_block(self, "self_attn", 1, y, y, o.src_mask, o.src_key_padding_mask,
                                              o.is_causal) end
  if self.norm_first then
    x = x + sa(self.norm1(x))
    return x + feed_forward(self, self.norm2(x), 2)
  end
  x = self.norm1(x + sa(x))
  return self.norm2(x + feed_forward(self, x, 2))
end

local DecoderLayer = util.module_class("TransformerDecoderLayer")

function DecoderLayer:init(...)
  local op = "TransformerDecoderLayer"
  build_layer(self, op, util.args(op, LAYER_ARGS, 2, LAYER_DEFAULTS, ...), {"self_attn", "multihead_attn"}, 3)
end

local DECODER_FORWARD = {"tgt", "memory", "tgt_mask", "memory_mask", "tgt_key_padding_mask", "memory_key_padding_mask",
                         "tgt_is_causal", "memory_is_causal"}

-- forward(tgt, memory[, tgt_mask][, memory_mask][, tgt_key_padding_mask]
-- [, memory_key_padding_mask][, tgt_is_causal][, memory_is_causal])
function DecoderLayer:forward(...)
  local o = util.args("TransformerDecoderLayer", DECODER_FORWARD, 2, {tgt_is_causal = false, memory_is_causal = false},
                      ...)
  local x, mem = o.tgt, o.memory
  local function sa(y) return attention_block(self, "self_attn", 1, y, y, o.tgt_mask, o.tgt_key_padding_mask,
                                              o.tgt_is_causal) end
  local function mha(y) return attention_block(self, "multihead_attn", 2, y, mem, o.memory_mask,
                                               o.memory_key_padding_mask, o.memory_is_causal) end
  if self.norm_first then
    x = x + sa(self.norm1(x))
    x = x + mha(self.norm2(x))
    return x + feed_forward(self, self.norm3(x), 3)
  end
  x = self.norm1(x + sa(x))
  x = self.norm2(x + mha(x))
  return self.norm3(x + feed_forward(self, x, 3))
end

-- The stacks: num_layers copies of a layer (each starting from its weights) and an optional
-- final norm.
local function build_stack(self, op, kind, ...)
  local o = util.args(op, {kind, "num_layers", "norm"}, 2, {}, ...)
  local layer = o[kind]
  if not nn.is_module(layer) then fail(op, "%s must be a module, got %s", kind, describe(layer)) end
  self.num_layers = util.check_int(op, "num_layers", o.num_layers, 0)
  self.layers = clones(layer, self.num_layers)
  if o.norm ~= nil and not nn.is_module(o.norm) then fail(op, "norm must be a module or nil, got %s", describe(o.norm)) end
  self.norm = o.norm
end

local Encoder = util.module_class("TransformerEncoder")

function Encoder:init(...) build_stack(self, "TransformerEncoder", "encoder_layer", ...) end

-- forward(src[, mask][, src_key_padding_mask][, is_causal])
function Encoder:forward(...)
  local o = util.args("TransformerEncoder", {"src", "mask", "src_key_padding_mask", "is_causal"}, 1, {}, ...)
  local x = o.src
  for _, layer in ipairs(self.layers:children()) do
    x = layer(x, {src_mask = o.mask, src_key_padding_mask = o.src_key_padding_mask, is_causal = o.is_causal})
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

local Decoder = util.module_class("TransformerDecoder")

function Decoder:init(...) build_stack(self, "TransformerDecoder", "decoder_layer", ...) end

-- forward(tgt, memory[, tgt_mask][, memory_mask][, tgt_key_padding_mask]
-- [, memory_key_padding_mask][, tgt_is_causal][, memory_is_causal])
function Decoder:forward(...)
  local o = util.args("TransformerDecoder", DECODER_FORWARD, 2, {}, ...)
  local x = o.tgt
  for _, layer in ipairs(self.layers:children()) do
    x = layer(x, o.memory, {tgt_mask = o.tgt_mask, memory_mask = o.memory_mask,
                            tgt_key_padding_mask = o.tgt_key_padding_mask,
                            memory_key_padding_mask = o.memory_key_padding_mask, tgt_is_causal = o.tgt_is_causal,
                            memory_is_causal = o.memory_is_causal})
  end
  if self.norm ~= nil then x = self.norm(x) end
  return x
end

local Transformer = util.module_class("Transformer")

function Transformer:init(...)
  local op = "Transformer"
  local o = util.args(op, {"d_model", "nhead", "num_encoder_layers", "num_decoder_layers", "dim_feedforward", "dropout",
                           "activation", "custom_encoder", "custom_decoder", "layer_norm_eps", "batch_first",
                           "norm_first", "device", "dtype"}, 0,
                      {d_model = 512, nhead = 8, num_encoder_layers = 6, num_decoder_layers = 6, dim_feedforward = 2048,
                       dropout = 0.1, activation = "relu", layer_norm_eps = 1e-5, batch_first = false,
                       norm_first = false}, ...)
  util.check_int(op, "d_model", o.d_model, 1)
  local layer_kw = {dim_feedforward = o.dim_feedforward, dropout = o.dropout, activation = o.activation,
                    layer_norm_eps = o.layer_norm_eps, batch_first = o.batch_first, norm_first = o.norm_first,
                    device = o.device, dtype = o.dtype}
  local norm_kw = {eps = o.layer_norm_eps, device = o.device, dtype = o.dtype}
  for _, part in ipairs({{"encoder", nn.TransformerEncoderLayer, nn.TransformerEncoder, "num_encoder_layers"},
                         {"decoder", nn.TransformerDecoderLayer, nn.TransformerDecoder, "num_decoder_layers"}}) do
    local name, Layer, Stack, count = table.unpack(part)
    local custom = o["custom_" .. name]
    if custom ~= nil then
      if not nn.is_module(custom) then fail(op, "custom_%s must be a module, got %s", name, describe(custom)) end
      self[name] = custom
    else
      local layer = Layer(o.d_model, o.nhead, layer_kw)
      self[name] = Stack(layer, util.check_int(op, count, o[count], 0), nn.LayerNorm(o.d_model, norm_kw))
    end
  end
  self:_reset_parameters()
  self.d_model, self.nhead, self.batch_first = o.d_model, o.nhead, o.batch_first
end

-- Xavier-uniform for every parameter with more than one dim, as PyTorch's Transformer.
function Transformer:_reset_parameters()
  for _, p in ipairs(self:parameters()) do
    if p:dim() > 1 then init.xavier_uniform_(p) end
  end
end

-- forward(src, tgt[, src_mask][, tgt_mask][, memory_mask][, src_key_padding_mask]
-- [, tgt_key_padding_mask][, memory_key_padding_mask][, src_is_causal][, tgt_is_causal]
-- [, memory_is_causal])
function Transformer:forward(...)
  local op = "Transformer"
  local o = util.args(op, {"src", "tgt", "src_mask", "tgt_mask", "memory_mask", "src_key_padding_mask",
                           "tgt_key_padding_mask", "memory_key_padding_mask", "src_is_causal", "tgt_is_causal",
                           "memory_is_causal"}, 2, {}, ...)
  local src, tgt = util.check_tensor(op, "src", o.src), util.check_tensor(op, "tgt", o.tgt)
  if src:dim() == 3 then
    local bd = self.batch_first and 1 or 2
    if tgt:dim() ~= 3 or src.shape[bd] ~= tgt.shape[bd] then
      fail(op, "src of shape %s and tgt of shape %s must have the same batch size", shape_str(src.shape),
           shape_str(tgt.shape))
    end
  end
  if src.shape[src:dim()] ~= self.d_model or tgt.shape[tgt:dim()] ~= self.d_model then
    fail(op, "src of shape %s and tgt of shape %s must end in d_model (%d)", shape_str(src.shape), shape_str(tgt.shape),
         self.d_model)
  end
  local memory = self.encoder(src, {mask = o.src_mask, src_key_padding_mask = o.src_key_padding_mask,
                                    is_causal = o.src_is_causal})
  return self.decoder(tgt, memory, {tgt_mask = o.tgt_mask, memory_mask = o.memory_mask,
                                    tgt_key_padding_mask = o.tgt_key_padding_mask,
                                    memory_key_padding_mask = o.memory_key_padding_mask,
                                    tgt_is_causal = o.tgt_is_causal, memory_is_causal = o.memory_is_causal})
end

-- Transformer.generate_square_subsequent_mask(sz[, {device=, dtype=}]): the float causal mask
-- of sz positions (-inf above the diagonal, 0 elsewhere).
function Transformer.generate_square_subsequent_mask(...)
  local op = "generate_square_subsequent_mask"
  local o = util.args(op, {"sz", "device", "dtype"}, 1, {}, ...)
  local n = util.check_int(op, "sz", o.sz, 0)
  local dtype = o.dtype or torch.get_default_dtype()
  if not torch.empty(0, {dtype = dtype}):is_floating_point() then
    fail(op, "dtype must be a floating dtype (the mask holds -inf), got %s", dtype)
  end
  return causal_mask(n, n, dtype, o.device or "cpu")
end
