-- Attention and transformers (bindings/lua/torch_nn_attention.lua): errors, parameter names
-- and initialisation, dropout in training, the copies in the stacks, and checkpoints written
-- by PyTorch 1.13. Values against PyTorch are in the conformance rows (ops_nn_attn.lua).
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn
local F = nn.functional

local function names(m)
  local list = {}
  for name in m:named_parameters() do list[#list + 1] = name end
  return list
end

local function max_abs(t) return t:abs():max():item() end

T.test("MultiheadAttention's parameters: PyTorch's names, order and initialisation", function()
  torch.manual_seed(1)
  local m = nn.MultiheadAttention(8, 2)
  T.eq(names(m), {"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"})
  T.eq(m.in_proj_weight.shape, {24, 8})
  T.eq(max_abs(m.in_proj_bias), 0)
  T.eq(max_abs(m.out_proj.bias), 0)
  local bound = math.sqrt(6 / (8 + 24))  -- Xavier-uniform over fan_in 8, fan_out 24
  T.truthy(max_abs(m.in_proj_weight) <= bound and max_abs(m.in_proj_weight) > 0.8 * bound)
  T.truthy(max_abs(m.out_proj.weight) <= 1 / math.sqrt(8), "out_proj keeps Linear's initialisation")
  local s = nn.MultiheadAttention(8, 4, {kdim = 5, vdim = 6, add_bias_kv = true})
  T.eq(names(s), {"q_proj_weight", "k_proj_weight", "v_proj_weight", "in_proj_bias", "bias_k", "bias_v",
                  "out_proj.weight", "out_proj.bias"})
  T.eq(s.k_proj_weight.shape, {8, 5})
  T.eq(s.v_proj_weight.shape, {8, 6})
  T.eq(s.bias_k.shape, {1, 1, 8})
  T.truthy(max_abs(s.bias_k) > 0, "bias_k is Xavier-normal")
  T.eq(names(nn.MultiheadAttention(8, 2, {bias = false})), {"in_proj_weight", "out_proj.weight"})
  T.eq(tostring(nn.MultiheadAttention(4, 1)),
       "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear(in_features=4, out_features=4, bias=true)\n)")
  T.eq(nn.MultiheadAttention(4, 2, {dtype = "float64"}).in_proj_weight.dtype, "float64")
  T.eq(tostring(nn.MultiheadAttention(4, 2, {device = "cpu"}).out_proj.weight.device), "cpu")
end)

T.test("the transformers' parameters: PyTorch's names, Xavier initialisation in nn.Transformer", function()
  T.eq(names(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16})),
       {"self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight", "self_attn.out_proj.bias",
        "linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
        "norm2.weight", "norm2.bias"})
  local d = names(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16}))
  T.eq(#d, 18)
  T.eq({d[5], d[9], d[16], d[17]}, {"multihead_attn.in_proj_weight", "linear1.weight", "norm2.bias", "norm3.weight"})
  local layer = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, activation = nn.GELU()})
  T.eq(layer.activation.approximate, "none", "a module activation is the submodule 'activation'")
  torch.manual_seed(2)
  local t = nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 1, dim_feedforward = 16}
  local n = names(t)
  T.eq(#n, 2 * 12 + 2 + 18 + 2)
  T.eq({n[1], n[25], n[26], n[27], n[#n]}, {"encoder.layers.0.self_attn.in_proj_weight", "encoder.norm.weight",
                                            "encoder.norm.bias", "decoder.layers.0.self_attn.in_proj_weight",
                                            "decoder.norm.bias"})
  local l1 = t.encoder.layers[1].linear1.weight
  local bound = math.sqrt(6 / (8 + 16))
  T.truthy(max_abs(l1) <= bound and max_abs(l1) > 0.8 * bound, "linear1.weight is Xavier-uniform")
  T.truthy(not torch.equal(t.encoder.layers[1].linear1.weight, t.encoder.layers[2].linear1.weight),
           "nn.Transformer re-initialises each copy")
end)

T.test("TransformerEncoder and TransformerDecoder hold independent copies of the layer", function()
  local layer = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16})
  local enc = nn.TransformerEncoder(layer, 3, nn.LayerNorm(8))
  T.eq(#enc.layers, 3)
  T.eq(enc.num_layers, 3)
  for i = 1, 3 do
    T.truthy(torch.equal(enc.layers[i].self_attn.in_proj_weight, layer.self_attn.in_proj_weight))
    T.truthy(enc.layers[i].linear1.weight.requires_grad)
  end
  torch.no_grad(function() enc.layers[1].linear1.weight:zero_() end)
  T.truthy(max_abs(enc.layers[2].linear1.weight) > 0, "a copy does not share storage with another")
  T.truthy(max_abs(layer.linear1.weight) > 0, "nor with the layer it was copied from")
  T.eq(#enc:parameters(), 3 * 12 + 2)
  local dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16}), 2)
  T.eq(dec.norm, nil)
  T.eq(#dec:parameters(), 2 * 18)
  local y = dec(torch.randn(3, 2, 8), torch.randn(4, 2, 8))
  T.eq(y.shape, {3, 2, 8})
end)

T.test("nn.Transformer with custom_encoder and custom_decoder runs them", function()
  torch.manual_seed(6)
  local enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16}), 1):double():eval()
  local dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, {dim_feedforward = 16}), 1):double():eval()
  local t = nn.Transformer{d_model = 8, nhead = 2, custom_encoder = enc, custom_decoder = dec}:eval()
  T.truthy(rawequal(t.encoder, enc) and rawequal(t.decoder, dec))
  local src, tgt = torch.randn(4, 2, 8, {dtype = "float64"}), torch.randn(3, 2, 8, {dtype = "float64"})
  T.near(t(src, tgt), dec(tgt, enc(src)), 0)
  T.error(function() return nn.Transformer{custom_encoder = 3} end, "Transformer: custom_encoder must be a module, got 3")
end)

T.test("MultiheadAttention: shapes of batched, batch_first and unbatched inputs and weights", function()
  local m = nn.MultiheadAttention(8, 2)
  local q, k = torch.randn(3, 2, 8), torch.randn(5, 2, 8)
  local out, w = m(q, k, k)
  T.eq(out.shape, {3, 2, 8})
  T.eq(w.shape, {2, 3, 5})
  out, w = m(q, k, k, {average_attn_weights = false})
  T.eq(w.shape, {2, 2, 3, 5})
  T.near(w:sum(-1), torch.ones(2, 2, 3), 1e-6, "each query's weights sum to 1")
  out, w = m(q, k, k, {need_weights = false})
  T.eq(w, nil)
  out, w = m(q[{":", 1}], k[{":", 1}], k[{":", 1}])
  T.eq(out.shape, {3, 8})
  T.eq(w.shape, {3, 5})
  local bf = nn.MultiheadAttention(8, 2, {batch_first = true, add_zero_attn = true})
  out, w = bf(q:transpose(1, 2), k:transpose(1, 2), k:transpose(1, 2))
  T.eq(out.shape, {2, 3, 8})
  T.eq(w.shape, {2, 3, 6}, "add_zero_attn adds a key")
end)

T.test("masks: bool and float masks, is_causal as PyTorch's hint", function()
  torch.manual_seed(3)
  local m = nn.MultiheadAttention(8, 2):double()
  local x = torch.randn(4, 2, 8, {dtype = "float64"})
  local causal = nn.Transformer.generate_square_subsequent_mask(4, {dtype = "float64"})
  T.eq(nn.Transformer.generate_square_subsequent_mask(3):tolist(),
       {{0, -math.huge, -math.huge}, {0, 0, -math.huge}, {0, 0, 0}})
  local a, wa = m(x, x, x, {attn_mask = causal})
  local b, wb = m(x, x, x, {attn_mask = causal:isinf(), is_causal = true})
  T.near(a, b, 1e-12, "a bool mask blocks where true, as -inf does")
  local strided = causal:t():contiguous():t()  -- the same values in a transposed layout
  T.near(m(x, x, x, {attn_mask = strided}), a, 1e-12, "a non-contiguous mask")
  local kpm_t = torch.zeros(4, 2, {dtype = "float64"}):t()
  T.near(m(x, x, x, {key_padding_mask = kpm_t}), m(x, x, x), 1e-12, "a non-contiguous key padding mask")
  T.near(wa, wb, 1e-12)
  T.eq(wa[{1, 1, {2, 4}}]:tolist(), {0, 0, 0}, "the first query sees only the first key")
  -- a key padding mask blocks those keys for every query
  local kpm = torch.tensor({{false, false, true, true}, {false, false, false, false}})
  local _, w = m(x, x, x, {key_padding_mask = kpm})
  T.eq(w[{1, ":", {3, 4}}]:abs():max():item(), 0)
  T.truthy(w[2]:min():item() > 0)
  local _, wf = m(x, x, x, {key_padding_mask = torch.zeros(2, 4, {dtype = "float64"}):masked_fill(kpm, -math.huge)})
  T.near(w, wf, 1e-12, "a float key padding mask with -inf is the bool one")
  -- scaled_dot_product_attention's bool masks are the other way round (true: may attend)
  local q, k, v = torch.randn(2, 3, 4, {dtype = "float64"}), torch.randn(2, 3, 4, {dtype = "float64"}),
                  torch.randn(2, 3, 5, {dtype = "float64"})
  local c1 = F.scaled_dot_product_attention(q, k, v, {is_causal = true})
  local allowed = torch.tril(torch.ones(3, 3, {dtype = "bool"}))
  T.near(c1, F.scaled_dot_product_attention(q, k, v, {attn_mask = allowed}), 1e-12)
  T.near(c1, F.scaled_dot_product_attention(q, k, v, nn.Transformer.generate_square_subsequent_mask(3,
                                                {dtype = "float64"})), 1e-12, "attn_mask is also positional")
  T.near(c1[{":", 1}], v[{":", 1}], 1e-12, "the first query takes the first value")
end)

T.test("dropout acts in training and not in eval", function()
  torch.manual_seed(4)
  local m = nn.MultiheadAttention(8, 2, {dropout = 0.5}):double()
  local x = torch.randn(6, 2, 8, {dtype = "float64"})
  m:eval()
  local out_eval, w_eval = m(x, x, x, {average_attn_weights = false})
  m:train()
  local out_train, w = m(x, x, x, {average_attn_weights = false})
  local dropped = w:eq(0)
  local kept = dropped:logical_not()
  T.truthy(dropped:any():item() and kept:any():item(), "some weights dropped, some kept")
  T.near(w[kept], w_eval[kept] * 2, 1e-12, "the kept weights are scaled by 1/(1-p)")
  T.truthy(max_abs(out_train - out_eval) > 1e-3)
  T.eq(max_abs(F.scaled_dot_product_attention(x, x, x, {dropout_p = 1})), 0)
  local layer = nn.TransformerEncoderLayer(8, 2, {dim_feedforward = 16, dropout = 0.3}):double()
  torch.manual_seed(5)
  local y1 = layer(x)
  torch.manual_seed(5)
  T.near(layer(x), y1, 0, "the same seed drops the same elements")
  layer:eval()
  local y2 = layer(x)
  T.truthy(max_abs(y1 - y2) > 1e-3)
  T.near(layer(x), y2, 0, "eval mode is deterministic")
  y1:sum():backward()
  T.truthy(layer.self_attn.in_proj_weight.grad ~= nil, "gradients reach the attention's parameters")
end)

T.test("errors name the layer and the values", function()
  T.error(function() return nn.MultiheadAttention(10, 3) end,
          "MultiheadAttention: embed_dim (10) must be divisible by num_heads (3)")
  T.error(function() return nn.MultiheadAttention(8, 0) end, "MultiheadAttention: num_heads must be an integer >= 1, got 0")
  T.error(function() return nn.MultiheadAttention(8, 2, {dropout = 1.5}) end,
          "MultiheadAttention: dropout must be between 0 and 1, got 1.5")
  T.error(function() return nn.MultiheadAttention(8, 2, {batchfirst = true}) end,
          "MultiheadAttention: unknown keyword 'batchfirst' (did you mean 'batch_first'?")
  T.error(function() return nn.TransformerEncoderLayer(10, 4) end,
          "TransformerEncoderLayer: d_model (10) must be divisible by nhead (4)")
  T.error(function() return nn.TransformerEncoderLayer(8, 2, {activation = "tanh"}) end,
          "TransformerEncoderLayer: activation must be \"relu\", \"gelu\" or a function, got \"tanh\"")
  T.error(function() return nn.TransformerDecoderLayer(8, 2, {bias = false}) end,
          "TransformerDecoderLayer: unknown keyword 'bias'")
  T.error(function() return nn.TransformerEncoder(nil, 2) end, "TransformerEncoder: missing argument 'encoder_layer'")
  T.error(function() return nn.TransformerEncoder(nn.Linear(2, 2), -1) end,
          "TransformerEncoder: num_layers must be an integer >= 0, got -1")
  T.error(function() return nn.TransformerDecoder({}, 1) end, "TransformerDecoder: decoder_layer must be a module")

  local m = nn.MultiheadAttention(8, 2)
  local q, k = torch.randn(3, 2, 8), torch.randn(4, 2, 8)
  T.error(function() return m(q, k, k, {attn_mask = torch.zeros(3, 3, {dtype = "bool"})}) end,
          "MultiheadAttention: attn_mask of shape {3,3} should have shape {3,4}")
  T.error(function() return m(q, k, k, {attn_mask = torch.zeros(2, 3, 4, {dtype = "bool"})}) end,
          "MultiheadAttention: attn_mask of shape {2,3,4} should have shape {4,3,4}")
  T.error(function() return m(q, k, k, {attn_mask = torch.zeros(1, 1, 3, 4)}) end,
          "MultiheadAttention: attn_mask must be 2-D or 3-D, got 4-D (shape {1,1,3,4})")
  T.error(function() return m(q, k, k, {key_padding_mask = torch.zeros(2, 5, {dtype = "bool"})}) end,
          "MultiheadAttention: key_padding_mask of shape {2,5} should have shape {2,4}")
  T.error(function() return m(q, k, k, {key_padding_mask = torch.zeros(4, {dtype = "bool"})}) end,
          "MultiheadAttention: key_padding_mask must be 2-D for a 3-D query, got 1-D (shape {4})")
  T.error(function() return m(q, k, k, {attn_mask = torch.zeros(3, 4, {dtype = "int64"})}) end,
          "MultiheadAttention: attn_mask must be a bool or floating-point tensor, got dtype int64")
  T.error(function() return m(q, k, k, {attn_mask = torch.zeros(3, 4, {dtype = "float64"})}) end,
          "MultiheadAttention: attn_mask has dtype float64 but the attention scores have dtype float32")
  T.error(function() return m(q, k, k, {is_causal = true}) end, "MultiheadAttention: is_causal needs attn_mask")
  T.error(function() return m(q, q, q, {attn_mask = torch.zeros(3, 3), is_causal = true}) end,
          "MultiheadAttention: is_causal is set but attn_mask is not the causal mask")
  T.error(function() return m(q, k, k, {need_weight = false}) end,
          "MultiheadAttention: unknown keyword 'need_weight' (did you mean 'need_weights'?")
  T.error(function() return m(q, k) end, "MultiheadAttention: missing argument 'value'")
  T.error(function() return m(torch.randn(3, 2, 6), k, k) end,
          "MultiheadAttention: query of shape {3,2,6} must end in embed_dim (8)")
  T.error(function() return m(q, torch.randn(4, 3, 8), torch.randn(4, 3, 8)) end,
          "MultiheadAttention: query of shape {3,2,8} and key of shape {4,3,8} have different batch sizes")
  T.error(function() return m(q, k, torch.randn(5, 2, 8)) end,
          "MultiheadAttention: key of shape {4,2,8} and value of shape {5,2,8} differ")
  T.error(function() return m(q, k[1], k) end, "MultiheadAttention: query is 3-D, so key must be too, got 2-D")
  T.error(function() return m(torch.randn(1, 3, 2, 8), k, k) end,
          "MultiheadAttention: query must be 2-D (unbatched) or 3-D (batched), got 4-D (shape {1,3,2,8})")
  T.error(function() return m(q, k:double(), k:double()) end,
          "MultiheadAttention: query has dtype float32 but key has dtype float64")
  T.error(function() return m(q:long(), k, k) end, "MultiheadAttention: expected a floating-point query, got dtype int64")

  local sdpa = F.scaled_dot_product_attention
  local a, b = torch.randn(2, 3, 4), torch.randn(2, 5, 4)
  T.error(function() return sdpa(a, b, b, {is_causal = true, attn_mask = torch.ones(3, 5, {dtype = "bool"})}) end,
          "scaled_dot_product_attention: is_causal and attn_mask cannot both be given")
  T.error(function() return sdpa(a, b, b, {attn_mask = torch.ones(3, 4, {dtype = "bool"})}) end,
          "scaled_dot_product_attention: attn_mask of shape {3,4} does not broadcast to the scores' shape {2,3,5}")
  T.error(function() return sdpa(a, torch.randn(2, 5, 3), b) end,
          "scaled_dot_product_attention: query of shape {2,3,4} and key of shape {2,5,3} differ in their last dim")
  T.error(function() return sdpa(a, b, torch.randn(2, 6, 4)) end,
          "scaled_dot_product_attention: key of shape {2,5,4} and value of shape {2,6,4} differ in their sequence dim")
  T.error(function() return sdpa(a, torch.randn(3, 5, 4), torch.randn(3, 5, 4)) end,
          "scaled_dot_product_attention: the batch dims of query {2,3,4}, key {3,5,4} and value {3,5,4} do not broadcast")
  T.error(function() return sdpa(a, b:double(), b) end,
          "scaled_dot_product_attention: query, key and value must have one dtype, got float32, float64 and float32")
  T.error(function() return sdpa(torch.randn(4), b, b) end,
          "scaled_dot_product_attention: query must have at least 2 dims, got shape {4}")
  T.error(function() return sdpa(a, b, b, {dropout_p = -0.1}) end,
          "scaled_dot_product_attention: dropout_p must be between 0 and 1, got -0.1")
  T.error(function() return sdpa(a, b, b, {scale = "x"}) end, "scaled_dot_product_attention: scale must be a number")

  local t = nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 1, num_decoder_layers = 1, dim_feedforward = 8}
  T.error(function() return t(torch.randn(4, 2, 8), torch.randn(3, 3, 8)) end,
          "Transformer: src of shape {4,2,8} and tgt of shape {3,3,8} must have the same batch size")
  T.error(function() return t(torch.randn(4, 2, 8), torch.randn(3, 2, 6)) end,
          "Transformer: src of shape {4,2,8} and tgt of shape {3,2,6} must end in d_model (8)")
  T.error(function() return t.encoder(torch.randn(4, 2, 8), {src_mask = torch.zeros(4, 4)}) end,
          "TransformerEncoder: unknown keyword 'src_mask' (valid: src, mask, src_key_padding_mask, is_causal)")
  T.error(function() return t.encoder.layers[1](torch.randn(4, 2, 8), {src_mask = torch.zeros(3, 3)}) end,
          "MultiheadAttention: attn_mask of shape {3,3} should have shape {4,4}")
  T.error(function() return nn.Transformer.generate_square_subsequent_mask(-1) end,
          "generate_square_subsequent_mask: sz must be an integer >= 0, got -1")
  T.error(function() return nn.Transformer.generate_square_subsequent_mask(3, {dtype = "int64"}) end,
          "generate_square_subsequent_mask: dtype must be a floating dtype (the mask holds -inf), got int64")
  T.still_usable()
end)

if not T.have_python_module("torch") then
  print("skipped: PyTorch checkpoints (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
  return
end

-- PyTorch writes a model's state_dict with torch.save and prints its names and its output on
-- inputs built from arange (so both sides have them exactly).
local PY = [=[
import math, sys, torch
torch.manual_seed(0)
def inputs(*shape):
    n = math.prod(shape)
    return (torch.arange(n, dtype=torch.float64).reshape(shape) * 0.37).sin()
kind = sys.argv[2]
if kind == "transformer":
    m = torch.nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=12,
                             dropout=0.0).double()
    src, tgt = inputs(4, 2, 8), inputs(3, 2, 8)
    mask = m.generate_square_subsequent_mask(3).double()
    out = m(src, tgt, tgt_mask=mask, src_key_padding_mask=torch.tensor([[False, False, False, True]] * 2))
else:
    m = torch.nn.MultiheadAttention(8, 2, kdim=5, vdim=6, add_bias_kv=True, batch_first=True).double()
    out = torch.cat([t.flatten() for t in m(inputs(2, 3, 8), inputs(2, 4, 5), inputs(2, 4, 6))])
torch.save(m.state_dict(), sys.argv[1])
print(" ".join(m.state_dict().keys()))
print(" ".join(repr(v) for v in out.detach().flatten().tolist()))
]=]

local function inputs(...)
  local shape = {...}
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return (torch.arange(n, {dtype = "float64"}):reshape(shape) * 0.37):sin()
end

-- Runs PY for `kind`; returns the loaded state_dict, PyTorch's key order and its outputs.
local function from_pytorch(kind)
  local path = T.tmpdir() .. "/" .. kind .. ".pt"
  local out, ok = T.python(PY, path, kind)
  T.truthy(ok, out)
  local keys_line, values_line = out:match("([^\n]*)\n([^\n]*)")
  local keys = {}
  for k in keys_line:gmatch("%S+") do keys[#keys + 1] = k end
  return torch.load(path), keys, T.numbers(values_line)
end

local function check_outputs(got, want)
  T.eq(got:numel(), #want)
  local flat = got:flatten()
  for i = 1, #want do T.near(flat[i]:item(), want[i], 1e-12) end
end

T.test("a Transformer checkpoint written by PyTorch loads with PyTorch's names and outputs", function()
  local sd, keys, want = from_pytorch("transformer")
  local m = nn.Transformer{d_model = 8, nhead = 2, num_encoder_layers = 2, num_decoder_layers = 1,
                           dim_feedforward = 12, dropout = 0.0, dtype = "float64"}
  T.eq(names(m), keys, "the parameters in PyTorch's state_dict order")
  local r = m:load_state_dict(sd)
  T.eq(#r.missing_keys + #r.unexpected_keys, 0)
  local kpm = torch.tensor({{false, false, false, true}, {false, false, false, true}})
  local y = m(inputs(4, 2, 8), inputs(3, 2, 8), {tgt_mask = m.generate_square_subsequent_mask(3, {dtype = "float64"}),
                                                 src_key_padding_mask = kpm})
  check_outputs(y, want)
end)

T.test("a MultiheadAttention checkpoint (kdim, vdim, bias_k, bias_v) written by PyTorch loads", function()
  local sd, keys, want = from_pytorch("mha")
  local m = nn.MultiheadAttention(8, 2, {kdim = 5, vdim = 6, add_bias_kv = true, batch_first = true, dtype = "float64"})
  T.eq(names(m), keys)
  m:load_state_dict(sd)
  local out, w = m(inputs(2, 3, 8), inputs(2, 4, 5), inputs(2, 4, 6))
  check_outputs(torch.cat({out:flatten(), w:flatten()}), want)
end)

T.done()
