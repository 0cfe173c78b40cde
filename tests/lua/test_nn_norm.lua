-- The normalization layers (BatchNorm1d/2d, InstanceNorm1d/2d, GroupNorm, LayerNorm), channel
-- dropout (Dropout1d/2d) and Embedding's padding_idx: errors, buffers and state_dict keys,
-- the cumulative moving average, and a checkpoint written by PyTorch 1.13. Their values
-- against PyTorch are in tests/conformance/ops_nn_norm.lua.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn, F = torch.nn, torch.nn.functional

local function keys_in_order(sd)
  return torch._key_order[sd]
end

T.test("BatchNorm: parameters, buffers and state_dict keys in PyTorch's order", function()
  local m = nn.BatchNorm2d(3)
  T.eq(keys_in_order(m:state_dict()), {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})
  T.eq(m.weight:tolist(), {1, 1, 1})
  T.eq(m.bias:tolist(), {0, 0, 0})
  T.eq(m.running_mean:tolist(), {0, 0, 0})
  T.eq(m.running_var:tolist(), {1, 1, 1})
  T.eq(m.num_batches_tracked.dtype, "int64")
  T.eq(m.num_batches_tracked:dim(), 0)
  m:double()
  T.eq(m.running_mean.dtype, "float64")
  T.eq(m.num_batches_tracked.dtype, "int64", "to() leaves the counter an integer")
  T.eq(keys_in_order(nn.BatchNorm1d(2, {track_running_stats = false}):state_dict()), {"weight", "bias"})
  T.eq(keys_in_order(nn.BatchNorm1d(2, {affine = false}):state_dict()),
       {"running_mean", "running_var", "num_batches_tracked"})
  T.eq(keys_in_order(nn.InstanceNorm2d(2):state_dict()), {})
  T.eq(keys_in_order(nn.InstanceNorm1d(2, {affine = true, track_running_stats = true}):state_dict()),
       {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"})
  T.eq(keys_in_order(nn.GroupNorm(2, 4):state_dict()), {"weight", "bias"})
  T.eq(keys_in_order(nn.GroupNorm(2, 4, {affine = false}):state_dict()), {})
  T.eq(tostring(nn.BatchNorm2d(3)), "BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=true, track_running_stats=true)")
  T.eq(tostring(nn.BatchNorm1d(4, {momentum = false})),
       "BatchNorm1d(4, eps=1e-05, momentum=nil, affine=true, track_running_stats=true)")
  T.eq(tostring(nn.GroupNorm(2, 4)), "GroupNorm(2, 4, eps=1e-05, affine=true)")
  T.eq(tostring(nn.Dropout2d(0.25)), "Dropout2d(p=0.25, inplace=false)")
end)

T.test("BatchNorm: training counts batches, eval uses the running statistics", function()
  local m = nn.BatchNorm1d(2):double()
  local x = torch.tensor({{1, 10}, {3, 20}, {5, 60}}, {dtype = "float64"})
  m(x)
  T.eq(m.num_batches_tracked:item(), 1)
  -- batch mean {3, 30}, unbiased variance {4, 700}
  T.near(m.running_mean:tolist(), {0.3, 3.0}, 1e-15)
  T.near(m.running_var:tolist(), {0.9 + 0.4, 0.9 + 70}, 1e-14)
  m:eval()
  local y = m(x)
  T.eq(m.num_batches_tracked:item(), 1, "eval does not count")
  T.near(y[{1, 1}]:item(), (1 - 0.3) / math.sqrt(1.3 + 1e-5), 1e-14)
  -- momentum = false (PyTorch's None): the cumulative average of the batch statistics
  local c = nn.BatchNorm1d(1, {momentum = false}):double()
  for _, v in ipairs({{1, 3}, {5, 9}, {0, 2}}) do c(torch.tensor(v, {dtype = "float64"}):reshape(2, 1)) end
  T.eq(c.num_batches_tracked:item(), 3)
  T.near(c.running_mean:tolist(), {(2 + 7 + 1) / 3}, 1e-15)
  T.near(c.running_var:tolist(), {(2 + 8 + 2) / 3}, 1e-15)
  -- without running statistics the batch statistics are used in eval mode too
  local u = nn.BatchNorm1d(2, {track_running_stats = false}):double():eval()
  T.near(u(x)[{1, 1}]:item(), -2 / math.sqrt(8 / 3 + 1e-5), 1e-14)
  m:reset_running_stats()
  T.eq(m.running_mean:tolist(), {0, 0})
  T.eq(m.num_batches_tracked:item(), 0)
end)

T.test("BatchNorm and friends: errors name the layer and the values", function()
  T.error_usable(function() return nn.BatchNorm2d(3)(torch.randn(2, 4, 3, 3)) end,
                 "BatchNorm2d: expected 3 channels (num_features) at dim 2 of the input, got shape {2,4,3,3}")
  T.error_usable(function() return nn.BatchNorm2d(3)(torch.randn(2, 3, 3)) end,
                 "BatchNorm2d: expected a 4-D input, got shape {2,3,3}")
  T.error_usable(function() return nn.BatchNorm1d(3)(torch.randn(2, 3, 3, 1)) end,
                 "BatchNorm1d: expected a 2-D or 3-D input, got shape {2,3,3,1}")
  T.error_usable(function() return nn.BatchNorm1d(3)(torch.randn(1, 3)) end,
                 "BatchNorm1d: expected more than 1 value per channel when training, got input size {1,3}")
  T.eq(nn.BatchNorm1d(3):eval()(torch.randn(1, 3)):size(), {1, 3}, "a batch of 1 is fine in eval mode")
  T.error_usable(function() return nn.BatchNorm2d(3, {bias = false}) end, "BatchNorm2d: unknown keyword 'bias'")
  T.error_usable(function() return nn.BatchNorm2d(0) end, "BatchNorm2d: num_features must be an integer >= 1, got 0")
  T.error_usable(function() return nn.BatchNorm2d(3, {momentum = "x"}) end,
                 "BatchNorm2d: momentum must be a number, got \"x\"")
  T.error_usable(function() return nn.BatchNorm2d(3)(torch.ones(2, 3, 2, 2, {dtype = "int64"})) end,
                 "BatchNorm2d: expected a floating-point input, got dtype int64")
  T.error_usable(function() return nn.InstanceNorm1d(3, {momentum = false}) end,
                 "InstanceNorm1d: momentum must be a number, got false")
  T.error_usable(function() return nn.InstanceNorm2d(3)(torch.randn(2, 3, 4)) end,
                 "InstanceNorm2d: expected 3 channels (num_features) at dim 1 of the input, got shape {2,3,4}")
  T.error_usable(function() return nn.InstanceNorm1d(3)(torch.randn(2, 3, 1)) end,
                 "InstanceNorm1d: expected more than 1 spatial element when training, got input size {2,3,1}")
  T.error_usable(function() return nn.GroupNorm(3, 4) end,
                 "GroupNorm: num_channels (4) must be divisible by num_groups (3)")
  T.error_usable(function() return nn.GroupNorm(2, 4)(torch.randn(2, 6, 3)) end,
                 "GroupNorm: expected an input (N, 4, ...) with num_channels = 4 channels at dim 2, got shape {2,6,3}")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), nil, nil) end,
                 "batch_norm: running_mean and running_var must be given when not training")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), torch.zeros(2), torch.ones(3)) end,
                 "batch_norm: running_mean should contain 3 elements (the input's channels), got shape {2}")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), nil, nil, torch.ones(3), torch.zeros(4), true) end,
                 "batch_norm: bias should contain 3 elements (the input's channels), got shape {4}")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), nil, nil, {training = true, momentum = false}) end,
                 "batch_norm: momentum must be a number, got false")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), nil, nil, {train = true}) end,
                 "batch_norm: unknown keyword 'train'")
  T.error_usable(function() return F.group_norm(torch.randn(2, 6, 2), 4) end,
                 "group_norm: the input's 6 channels are not divisible by num_groups (4)")
  T.error_usable(function() return F.group_norm(torch.randn(1, 2), 2) end,
                 "group_norm: expected more than 1 value per channel when training, got input size {1,2} and num_groups 2")
  T.eq(F.group_norm(torch.randn(2, 2), 2):tolist(), {{0, 0}, {0, 0}}, "groups of one value (PyTorch's result)")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), nil, nil, torch.ones(3, {dtype = "float64"}), nil, true) end,
                 "batch_norm: weight has dtype float64 but the input has dtype float32")
  T.error_usable(function() return F.batch_norm(torch.randn(4, 3), torch.zeros(3, {dtype = "int64"}), torch.ones(3)) end,
                 "batch_norm: running_mean must be a floating-point tensor, got dtype int64")
  T.error_usable(function() return torch._batch_norm_train(torch.randn(4, 3), torch.ones(2), nil, 1e-5) end,
                 "batch_norm: weight must have shape {3}, got {2}")
  -- the engine ops on empty inputs: empty results (NaN statistics), nothing read
  local y, mean, var = torch._batch_norm_train(torch.zeros(0, 3, 2), nil, nil, 1e-5)
  T.eq(y:size(), {0, 3, 2})
  T.eq(mean:isnan():all():item() and var:isnan():all():item(), true)
  T.eq(torch._batch_norm_train(torch.zeros(2, 3, 0), nil, nil, 1e-5):size(), {2, 3, 0})
  T.eq(torch._layer_norm_rows(torch.zeros(0, 4), nil, nil, 1e-5):size(), {0, 4})
  T.error_usable(function() return torch._layer_norm_rows(torch.zeros(3, 0), nil, nil, 1e-5) end,
                 "layer_norm: expected rows (M, K) with K > 0, got shape {3,0}")
  T.eq(torch._batch_norm_eval(torch.zeros(0, 3), torch.zeros(3), torch.ones(3), nil, nil, 1e-5):size(), {0, 3})
  T.error_usable(function() return F.instance_norm(torch.randn(2, 3)) end,
                 "instance_norm: expected an input of at least 3 dims (N, C, ...), got shape {2,3}")
  T.error_usable(function() return F.layer_norm(torch.randn(2, 3), {3}, torch.ones(1)) end,
                 "layer_norm: weight must be a tensor of shape normalized_shape {3}, got a tensor of shape {1}")
  T.error_usable(function() return nn.LayerNorm(3, {bias = false}) end, "LayerNorm: unknown keyword 'bias'")
end)

T.test("LayerNorm over several dims: weight and bias of normalized_shape", function()
  local m = nn.LayerNorm({2, 3}, {elementwise_affine = true})
  T.eq(m.weight:size(), {2, 3})
  T.eq(keys_in_order(m:state_dict()), {"weight", "bias"})
  T.eq(keys_in_order(nn.LayerNorm({2, 3}, {elementwise_affine = false}):state_dict()), {})
  local y = m(torch.randn(4, 2, 3, {dtype = "float32"}))
  T.near(y:mean{dim = {2, 3}}:abs():max():item(), 0, 1e-6)
end)

T.test("gradients flow through the batch statistics (sum of a normalised channel is constant)", function()
  local x = torch.randn(5, 3, {dtype = "float64"}):requires_grad_()
  local y = F.batch_norm(x, nil, nil, {training = true})
  y:sum():backward()
  T.near(x.grad:abs():max():item(), 0, 1e-12)
  local z = torch.randn(2, 4, 3, {dtype = "float64"}):requires_grad_()
  F.group_norm(z, 2):sum():backward()
  T.near(z.grad:abs():max():item(), 0, 1e-12)
end)

T.test("Dropout1d and Dropout2d zero whole channels and scale the rest", function()
  torch.manual_seed(1)
  local x = torch.ones(8, 6, 3, 2)
  local y = F.dropout2d(x, 0.5)
  local per_channel = y:sum{dim = {3, 4}}
  local zeros, twos = per_channel:eq(0):sum():item(), per_channel:eq(12):sum():item()
  T.eq(zeros + twos, 48, "every channel is all zero or all 2")
  T.truthy(zeros > 5 and twos > 5)
  T.eq(F.dropout2d(x, 0.5, false):equal(x), true, "not training: the identity")
  T.eq(F.dropout2d(x, 1.0):sum():item(), 0)
  local y1 = nn.Dropout1d(0.5)(torch.ones(4, 5, 7))
  local s1 = y1:sum(3)
  T.eq(s1:eq(0):sum():item() + s1:eq(14):sum():item(), 20)
  -- unbatched (C, L): one draw per channel
  local u = F.dropout1d(torch.ones(10, 4), {p = 0.5})
  T.eq(u:sum(2):eq(0):sum():item() + u:sum(2):eq(8):sum():item(), 10)
  -- inplace
  local z = torch.ones(2, 3, 4)
  local r = F.dropout1d(z, {p = 0.5, inplace = true})
  T.eq(z:equal(r), true)
  T.truthy(z:eq(1):sum():item() == 0, "the input was scaled in place")
  local m = nn.Dropout2d({p = 0.3, inplace = true}):eval()
  T.eq(m(x):equal(x), true)
  T.error_usable(function() return F.dropout1d(torch.ones(2, 3, 4, 5)) end,
                 "dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape {2,3,4,5}")
  T.error_usable(function() return F.dropout2d(torch.ones(2, 3)) end,
                 "dropout2d: expected a 3-D or 4-D (N, C, H, W) input, got shape {2,3}")
  T.error_usable(function() return nn.Dropout2d(1.5) end, "Dropout2d: p must be between 0 and 1, got 1.5")
  T.error_usable(function() return F.dropout2d(torch.ones(2, 3, 4), {p = 0.5, inplce = true}) end,
                 "dropout2d: unknown keyword 'inplce'")
  -- gradient: the same mask scales the gradient
  torch.manual_seed(2)
  local a = torch.ones(3, 4, 5):requires_grad_()
  local out = F.dropout1d(a, 0.5)
  out:sum():backward()
  T.eq(a.grad:equal(out:detach()), true)
end)

T.test("Embedding padding_idx: zero row, no gradient, negative from the end, unsupported options", function()
  torch.manual_seed(0)
  local e = nn.Embedding(5, 3, {padding_idx = -2})
  T.eq(e.padding_idx, 4)
  T.eq(e.weight[4]:tolist(), {0, 0, 0})
  local idx = torch.tensor({{1, 4}, {4, 2}})
  e(idx):sum():backward()
  T.eq(e.weight.grad[4]:tolist(), {0, 0, 0})
  T.eq(e.weight.grad[1]:tolist(), {1, 1, 1})
  T.eq(e.weight.grad[2]:tolist(), {1, 1, 1})
  T.eq(nn.Embedding(5, 3, 2).padding_idx, 2, "padding_idx is the third positional, as in PyTorch")
  T.error_usable(function() return nn.Embedding(5, 3, {padding_idx = 6}) end,
                 "Embedding: padding_idx must be an index in 1..5 (or -5..-1), got 6")
  T.error_usable(function() return nn.Embedding(5, 3, {max_norm = 1.0}) end,
                 "Embedding: max_norm is not supported (got 1.0)")
  T.error_usable(function() return nn.Embedding(5, 3, nil, nil, nil, true) end,
                 "Embedding: scale_grad_by_freq is not supported (got true)")
  T.error_usable(function() return nn.Embedding(5, 3, {sparse = false}) end,
                 "Embedding: sparse is not supported (got false)")
end)

T.test("containers: Identity, Unflatten, ModuleDict, ParameterList, ParameterDict", function()
  local x = torch.randn(2, 6)
  T.eq(nn.Identity(3, {foo = 1})(x):equal(x), true)
  T.eq(nn.Unflatten(2, {2, 3})(x):size(), {2, 2, 3})
  local md = nn.ModuleDict({bn = nn.BatchNorm1d(2), lin = nn.Linear(2, 2)})
  T.eq(keys_in_order(md:state_dict()), {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var",
                                        "bn.num_batches_tracked", "lin.weight", "lin.bias"})
  local pl = nn.ParameterList({torch.ones(2), torch.zeros(3)})
  T.eq(keys_in_order(pl:state_dict()), {"0", "1"})
  T.eq(pl[2].requires_grad, true)
  local pd = nn.ParameterDict({b = torch.ones(1), a = torch.ones(2)})
  T.eq(keys_in_order(pd:state_dict()), {"a", "b"})
end)

if not T.have_python_module("torch") then
  print("skipped: PyTorch checkpoint (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
end

T.test("a network with BatchNorm1d/2d, GroupNorm and InstanceNorm trained in PyTorch loads with its outputs", function()
  local path = T.tmpdir() .. "/norm.pt"
  local out, ok = T.python([[
import sys, torch
torch.manual_seed(0)
def net():
    return torch.nn.Sequential(torch.nn.BatchNorm2d(3), torch.nn.GroupNorm(1, 3),
                               torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True),
                               torch.nn.Flatten(), torch.nn.Linear(12, 4), torch.nn.BatchNorm1d(4, momentum=None),
                               torch.nn.LayerNorm(4)).double()
m = net()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(5, 3, 2, 2, dtype=torch.float64) * (step + 1) + step
    loss = m(x).pow(3).sum()
    opt.zero_grad(); loss.backward(); opt.step()
torch.save(m.state_dict(), sys.argv[1])
x = torch.linspace(-2, 3, 60, dtype=torch.float64).reshape(5, 3, 2, 2).cos() * 2
m.eval()
print(" ".join(repr(v) for v in m(x).flatten().tolist()))
m.train()
print(" ".join(repr(v) for v in m(x).flatten().tolist()))
print(" ".join(repr(v) for v in m[5].running_mean.tolist()), int(m[5].num_batches_tracked))
]], path)
  T.truthy(ok, out)
  local want = T.numbers(out)
  local sd = torch.load(path)
  T.eq(sd["0.num_batches_tracked"].dtype, "int64")
  local m = nn.Sequential(nn.BatchNorm2d(3), nn.GroupNorm(1, 3),
                          nn.InstanceNorm2d(3, {affine = true, track_running_stats = true}), nn.Flatten(),
                          nn.Linear(12, 4), nn.BatchNorm1d(4, {momentum = false}), nn.LayerNorm(4)):double()
  T.eq(keys_in_order(m:state_dict()), torch._key_order[sd])
  m:load_state_dict(sd)
  T.eq(m[6].num_batches_tracked:item(), 3)
  local x = torch.linspace(-2, 3, 60, {dtype = "float64"}):reshape(5, 3, 2, 2):cos() * 2
  m:eval()
  local got = m(x):flatten():tolist()
  m:train()
  for _, v in ipairs(m(x):flatten():tolist()) do got[#got + 1] = v end
  for _, v in ipairs(m[6].running_mean:tolist()) do got[#got + 1] = v end
  got[#got + 1] = m[6].num_batches_tracked:item()
  T.eq(#want, #got)
  T.near(got, want, 1e-12)
end)

T.done()
