-- Rows of the conformance table for attention: F.scaled_dot_product_attention against the
-- formula PyTorch 2.x documents, and nn.MultiheadAttention, the Transformer encoder/decoder
-- layers, their stacks and nn.Transformer against PyTorch 1.13's modules (ref_attn.py), in
-- float64 with the same weights: each case draws every parameter (in named_parameters order,
-- as inputs b, so the gradient column checks them too) and loads them into PyTorch's module by
-- name. Masks travel in c (their keyword names in p.masks); dropout is checked in eval mode
-- (its training behaviour is in tests/lua/test_nn_attn.lua). Loaded by ops.lua.
local G, add = ...

local nn = torch.nn
local F = nn.functional
local TOL = {float32 = {1e-4, 1e-6}, float64 = {1e-11, 1e-13}}
local REF = "__import__('ref_attn')"

local function copy(t) return G.copy_table(t) or {} end

-- A mask of `shape` whose last-dim position 1 is always open (no query sees only blocked
-- keys): kind "bool" (blocked = true, MultiheadAttention's convention), "allow" (open = true,
-- scaled_dot_product_attention's) or "float" (added: values in [-1, 1], some -inf).
local function mask(kind, shape)
  local S, n = shape[#shape], G.numel(shape)
  local v = {}
  for i = 1, n do
    local first = (i - 1) % S == 0
    local blocked = not first and G.chance(0.3)
    if kind == "bool" then v[i] = blocked
    elseif kind == "allow" then v[i] = not blocked
    else v[i] = blocked and -math.huge or G.uniform(-1, 1) end
  end
  return G.make(shape, kind == "float" and "float64" or "bool", {values = v})
end

-- A float mask in the inputs' dtype (masks must match the scores' dtype).
local function typed(m, dt) return m.dtype == "bool" and m or m:to(dt) end

---------------------------------------------------------------------------------------------
-- scaled_dot_product_attention: {q shape, k shape, v shape, mask kind and shape, keywords}.
local SDPA_CASES = {
  {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}},
  {{2, 2, 3, 4}, {2, 2, 5, 4}, {2, 2, 5, 6}, {"allow", {3, 5}}},
  {{3, 4}, {5, 4}, {5, 2}, {"float", {3, 5}}, {scale = 0.7}},
  {{2, 2, 4, 3}, {1, 2, 4, 3}, {2, 1, 4, 5}, nil, {is_causal = true}},
  {{2, 4, 3}, {2, 6, 3}, {2, 6, 3}, nil, {is_causal = true, dropout_p = 0.0}},
  {{2, 3, 3, 4}, {2, 3, 5, 4}, {2, 3, 5, 4}, {"allow", {2, 1, 3, 5}}, {scale = 2.0}},
  {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}, {"float", {2, 3, 5}}},
}

add({name = "F.scaled_dot_product_attention", grad = {"a"}, out = "same", tol = TOL, cast = "none",
     ref = "N(" .. REF .. ".sdpa(*T(a), attn_mask=T(c), **(p.kw or {})))",
     cases = function()
       local cs = {}
       for _, dt in ipairs({"float64", "float32"}) do
         for i, e in ipairs(SDPA_CASES) do
           if dt == "float64" or i % 2 == 1 then
             local a = {}
             for j = 1, 3 do a[j] = G.view(e[j], dt, G.pick(G.LAYOUTS)) end
             local c = e[4] and typed(mask(e[4][1], e[4][2]), dt) or nil
             cs[#cs + 1] = {a = a, c = c, p = {kw = e[5]}}
           end
         end
       end
       return cs
     end,
     call = function(a, _, c, p)
       local kw = copy(p.kw)
       kw.attn_mask = c
       return F.scaled_dot_product_attention(a[1], a[2], a[3], kw)
     end})

---------------------------------------------------------------------------------------------
-- The modules. A case's p: cls, args (the constructor's keywords), act (an activation given
-- as a function or a module), layer and norm (a stack's layer spec and its final LayerNorm's
-- size), eval, self (one input as query, key and value) or kv_same (key and value one
-- tensor), fwd (forward keywords), masks (the keyword of each mask in c), names (the
-- parameters, filled in here).

local ACTIVATIONS = {tanh = function() return torch.tanh end, Tanh = function() return nn.Tanh() end}

local function build(p)
  local kw = copy(p.args)
  if p.act then kw.activation = ACTIVATIONS[p.act]() end
  if p.layer then
    return nn[p.cls](build(p.layer), kw.num_layers, p.norm and nn.LayerNorm(p.norm) or nil)
  end
  return nn[p.cls](kw)
end

-- Sets the parameter at a dotted path ("layers.0.self_attn.in_proj_weight") to t.
local function set_param(m, path, t)
  local parts = {}
  for part in path:gmatch("[^.]+") do parts[#parts + 1] = part end
  for i = 1, #parts - 1 do m = m[parts[i]] end
  m[parts[#parts]] = t
end

local function run_module(a, b, c, p)
  local m = build(p)
  if p.eval then m:eval() end
  for i, name in ipairs(p.names) do set_param(m, name, b[i]) end
  local args = p.self and {a[1], a[1], a[1]} or p.kv_same and {a[1], a[2], a[2]} or {table.unpack(a)}
  local kw = copy(p.fwd)
  for i, name in ipairs(p.masks or {}) do kw[name] = c[i] end
  args[#args + 1] = kw
  local out, weights = m(table.unpack(args))
  if weights ~= nil then return out, weights end
  return out
end

-- Cases of a module row from {p, input shapes, masks ({keyword, kind, shape}), dtypes}: the
-- parameters drawn from N(0, 0.5^2) (LayerNorm weights around 1), inputs in random layouts.
local function module_cases(list)
  return function()
    local cs = {}
    for _, e in ipairs(list) do
      for _, dt in ipairs(e.dtypes or {"float64"}) do
        local p = copy(e.p)
        p.names = {}
        local b = {}
        for name, t in build(p):named_parameters() do
          p.names[#p.names + 1] = name
          local centre = name:match("norm%d?%.weight$") and 1 or 0
          b[#b + 1] = G.make(t.shape, dt, {fn = function() return centre + 0.5 * G.randn() end})
        end
        local a = {}
        for i, s in ipairs(e.inputs) do a[i] = G.view(s, dt, G.pick(G.LAYOUTS)) end
        local c
        if e.masks then
          c, p.masks = {}, {}
          for i, mk in ipairs(e.masks) do
            p.masks[i] = mk[1]
            c[i] = mk[2] == "causal" and nn.Transformer.generate_square_subsequent_mask(mk[3], {dtype = dt})
                   or typed(mask(mk[2], mk[3]), dt)
          end
        end
        cs[#cs + 1] = {a = a, b = b, c = c, p = p}
      end
    end
    return cs
  end
end

local function module_row(name, list, grad_cases)
  add({name = "nn." .. name, grad = {"a", "b"}, out = "same*", tol = TOL, cast = "none",
       ref = "N(" .. REF .. ".module(p, T(a), T(b), T(c)))",
       grad_if = grad_cases and function(case) return case.p.grad end,
       cases = module_cases(list), call = run_module})
end

-- MultiheadAttention, embed_dim 8 and 2 heads (L = 3 queries, S = 4 keys, batch 2) unless
-- the case says otherwise.
local function mha(args, fwd, more)
  local p = {cls = "MultiheadAttention", args = args, fwd = fwd}
  for k, v in pairs(more or {}) do p[k] = v end
  return p
end
module_row("MultiheadAttention", {
  {p = mha({embed_dim = 8, num_heads = 2}, nil, {self = true}), inputs = {{3, 2, 8}}, dtypes = {"float64", "float32"}},
  {p = mha({embed_dim = 8, num_heads = 2, batch_first = true}, {average_attn_weights = false}),
   inputs = {{2, 3, 8}, {2, 4, 8}, {2, 4, 8}}, masks = {{"key_padding_mask", "bool", {2, 4}}}},
  {p = mha({embed_dim = 8, num_heads = 4, kdim = 5, vdim = 6}, {need_weights = false}),
   inputs = {{3, 2, 8}, {4, 2, 5}, {4, 2, 6}}, masks = {{"attn_mask", "float", {3, 4}}}, dtypes = {"float64", "float32"}},
  {p = mha({embed_dim = 8, num_heads = 2, bias = false, add_bias_kv = true, add_zero_attn = true}),
   inputs = {{3, 2, 8}, {4, 2, 8}, {4, 2, 8}},
   masks = {{"key_padding_mask", "bool", {2, 4}}, {"attn_mask", "bool", {4, 3, 4}}}},
  {p = mha({embed_dim = 8, num_heads = 2}, nil, {kv_same = true}), inputs = {{3, 8}, {4, 8}},
   masks = {{"attn_mask", "bool", {2, 3, 4}}, {"key_padding_mask", "bool", {4}}}},
  {p = mha({embed_dim = 8, num_heads = 2, batch_first = true}, {is_causal = true}, {self = true}),
   inputs = {{2, 4, 8}}, masks = {{"attn_mask", "causal", 4}}},
  {p = mha({embed_dim = 6, num_heads = 3, add_bias_kv = true}),
   inputs = {{3, 2, 6}, {4, 2, 6}, {4, 2, 6}},
   masks = {{"key_padding_mask", "float", {2, 4}}, {"attn_mask", "float", {3, 4}}}},
  {p = mha({embed_dim = 8, num_heads = 2, kdim = 3, vdim = 3, add_zero_attn = true}, {average_attn_weights = false},
           {kv_same = true}),
   inputs = {{3, 8}, {5, 3}}, masks = {{"key_padding_mask", "float", {5}}}},
  {p = mha({embed_dim = 8, num_heads = 2, dropout = 0.4}, nil, {eval = true}), inputs = {{3, 2, 8}, {4, 2, 8}, {4, 2, 8}},
   masks = {{"attn_mask", "bool", {3, 4}}, {"key_padding_mask", "bool", {2, 4}}}},
})

-- The layers: d_model 8, nhead 2, dim_feedforward 12 (source 4 long, target 3, batch 2),
-- dropout 0.1 (the default) in eval mode.
local function layer(cls, args, more)
  local kw = {d_model = 8, nhead = 2, dim_feedforward = 12}
  for k, v in pairs(args or {}) do kw[k] = v end
  local p = {cls = cls, args = kw, eval = true}
  for k, v in pairs(more or {}) do p[k] = v end
  return p
end
local enc = function(args, more) return layer("TransformerEncoderLayer", args, more) end
module_row("TransformerEncoderLayer", {
  {p = enc(), inputs = {{4, 2, 8}}, dtypes = {"float64", "float32"}},
  {p = enc({activation = "gelu", batch_first = true}), inputs = {{2, 4, 8}},
   masks = {{"src_key_padding_mask", "bool", {2, 4}}}},
  {p = enc({norm_first = true, layer_norm_eps = 1e-3}, {fwd = {is_causal = true}}), inputs = {{4, 2, 8}},
   masks = {{"src_mask", "causal", 4}, {"src_key_padding_mask", "bool", {2, 4}}}},
  {p = enc(nil, {act = "tanh"}), inputs = {{4, 8}}, masks = {{"src_mask", "float", {4, 4}}}},
  {p = enc({norm_first = true, batch_first = true}, {act = "Tanh"}), inputs = {{2, 4, 8}},
   masks = {{"src_mask", "bool", {4, 4}}}},
})

local dec = function(args, more) return layer("TransformerDecoderLayer", args, more) end
module_row("TransformerDecoderLayer", {
  {p = dec(), inputs = {{3, 2, 8}, {4, 2, 8}}, dtypes = {"float64", "float32"}},
  {p = dec({activation = "gelu", norm_first = true}, {fwd = {tgt_is_causal = true}}), inputs = {{3, 2, 8}, {4, 2, 8}},
   masks = {{"tgt_mask", "causal", 3}, {"memory_mask", "float", {3, 4}}, {"tgt_key_padding_mask", "bool", {2, 3}},
            {"memory_key_padding_mask", "bool", {2, 4}}}},
  {p = dec({batch_first = true}, {act = "tanh"}), inputs = {{2, 3, 8}, {2, 4, 8}},
   masks = {{"memory_mask", "bool", {3, 4}}, {"memory_key_padding_mask", "bool", {2, 4}}}},
  {p = dec({norm_first = true}), inputs = {{3, 8}, {4, 8}}, masks = {{"tgt_mask", "bool", {3, 3}}}},
  {p = dec(nil, {fwd = {memory_is_causal = true}}), inputs = {{4, 2, 8}, {4, 2, 8}},
   masks = {{"memory_mask", "causal", 4}}},
})

module_row("TransformerEncoder", {
  {p = {cls = "TransformerEncoder", args = {num_layers = 2}, layer = enc(), norm = 8, eval = true, grad = true},
   inputs = {{4, 2, 8}}, masks = {{"mask", "float", {4, 4}}, {"src_key_padding_mask", "bool", {2, 4}}}},
  {p = {cls = "TransformerEncoder", args = {num_layers = 3}, layer = enc({norm_first = true, batch_first = true}),
        eval = true, fwd = {is_causal = true}},
   inputs = {{2, 4, 8}}, masks = {{"mask", "causal", 4}}},
}, true)

module_row("TransformerDecoder", {
  {p = {cls = "TransformerDecoder", args = {num_layers = 2}, layer = dec(), norm = 8, eval = true, grad = true},
   inputs = {{3, 2, 8}, {4, 2, 8}},
   masks = {{"tgt_mask", "causal", 3}, {"memory_key_padding_mask", "bool", {2, 4}}}},
  {p = {cls = "TransformerDecoder", args = {num_layers = 1}, layer = dec({batch_first = true}), eval = true,
        fwd = {tgt_is_causal = true}},
   inputs = {{2, 3, 8}, {2, 4, 8}}, masks = {{"tgt_mask", "causal", 3}, {"memory_mask", "bool", {3, 4}}}},
}, true)

local function transformer(args, more)
  local kw = {d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 1, dim_feedforward = 12}
  for k, v in pairs(args or {}) do kw[k] = v end
  local p = {cls = "Transformer", args = kw, eval = true}
  for k, v in pairs(more or {}) do p[k] = v end
  return p
end
module_row("Transformer", {
  {p = transformer(nil, {grad = true, fwd = {tgt_is_causal = true}}), inputs = {{4, 2, 8}, {3, 2, 8}},
   masks = {{"src_mask", "bool", {4, 4}}, {"tgt_mask", "causal", 3}, {"memory_mask", "float", {3, 4}},
            {"src_key_padding_mask", "bool", {2, 4}}, {"tgt_key_padding_mask", "bool", {2, 3}},
            {"memory_key_padding_mask", "bool", {2, 4}}}},
  {p = transformer({batch_first = true, norm_first = true, activation = "gelu", layer_norm_eps = 1e-4,
                    num_decoder_layers = 2}),
   inputs = {{2, 4, 8}, {2, 3, 8}}, masks = {{"tgt_mask", "causal", 3}}, dtypes = {"float64", "float32"}},
  {p = transformer(nil, {fwd = {src_is_causal = true, tgt_is_causal = true, memory_is_causal = true}}),
   inputs = {{4, 2, 8}, {4, 2, 8}},
   masks = {{"src_mask", "causal", 4}, {"tgt_mask", "causal", 4}, {"memory_mask", "causal", 4}}},
  {p = transformer({num_encoder_layers = 1}, {act = "tanh"}), inputs = {{4, 8}, {3, 8}}},
}, true)
