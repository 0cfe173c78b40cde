-- Rows of the conformance table for the normalization layers (torch_nn_norm.lua and LayerNorm)
-- and Embedding's padding_idx, against PyTorch 1.13 in float64: the functional forms with
-- their gradient column (autograd through the batch statistics against finite differences),
-- and the layers run for three training steps, with the gradients of the first step, an eval
-- forward and the running statistics compared with the same layer in PyTorch (check.py's
-- norm_layer_steps). Loaded by ops.lua with its case generators G and its add(row). Channels
-- are dim 2 here (PyTorch's dim 1).
local G, add = ...

local MAIN = {"float32", "float64"}
local NORM_TOL = {float32 = {2e-5, 2e-6}, float64 = {1e-11, 1e-12}}
-- The layer rows' gradients of (y^3).sum() go through the batch statistics, a sum with
-- cancellation: float32 keeps about 4 digits there (PyTorch's own float32 does the same).
local STEPS_TOL = {float32 = {2e-4, 2e-5}, float64 = {1e-11, 1e-12}}
local F = torch.nn.functional

-- The running statistics the functional rows start from (the reference builds the same).
local function running(x)
  local o = {dtype = x.dtype, device = x.device}
  return torch.linspace(-0.5, 0.5, x.shape[2], o), torch.linspace(0.5, 2.0, x.shape[2], o)
end
local RUNNING_PY = "torch.linspace(-0.5, 0.5, a.shape[1], dtype=torch.float64), "
  .. "torch.linspace(0.5, 2.0, a.shape[1], dtype=torch.float64)"

-- The per-channel weight (b) and bias (c) of a case when p.affine.
local function affine_inputs(case, C, dt)
  case.b = G.make({C}, dt)
  case.c = G.make({C}, dt)
  return case
end

---------------------------------------------------------------------------------------------
-- F.batch_norm: training (with and without running statistics, which the call updates) and
-- evaluation (by the running statistics), with and without weight and bias.
local BN_CASES = {
  {{6, 3}, {training = true, momentum = 0.1, eps = 1e-5, stats = true, affine = true}},
  {{4, 2, 5}, {training = true, momentum = 0.5, eps = 1e-3, stats = false, affine = true}},
  {{3, 4, 3, 2}, {training = true, momentum = 0.1, eps = 1e-5, stats = true, affine = false}},
  {{2, 3, 2, 2}, {training = false, momentum = 0.1, eps = 1e-5, stats = true, affine = true}},
  {{5, 2, 3}, {training = false, momentum = 0.1, eps = 0.1, stats = true, affine = false}},
  {{2, 1}, {training = true, momentum = 0.0, eps = 1e-5, stats = true, affine = true}},
  {{0, 3, 2}, {training = true, momentum = 0.1, eps = 1e-5, stats = true, affine = true}},
  -- a mean far from 0 against a spread of 1 (the statistics must not cancel)
  {{16, 2, 3}, {training = true, momentum = 0.1, eps = 1e-5, stats = true, affine = true, offset = 1000}},
}

local function norm_cases(list)
  return function()
    local cs = {}
    for _, dt in ipairs(MAIN) do
      for _, e in ipairs(list) do
        local opts = e[2].offset and {fn = function() return e[2].offset + G.randn() end} or nil
        local x, l = G.view(e[1], dt, G.pick(G.LAYOUTS), opts)
        local case = {a = x, layouts = {a = l}, p = G.copy_table(e[2])}
        if e[2].affine then affine_inputs(case, e[3] or e[1][2], dt) end
        cs[#cs + 1] = case
      end
    end
    return cs
  end
end

add({name = "F.batch_norm", grad = {"a", "b", "c"}, gradgrad = true, out = "same", tol = NORM_TOL,
     ref = "N(F.batch_norm(T(a), *((" .. RUNNING_PY .. ") if p.stats else (None, None)), weight=T(b), bias=T(c), "
        .. "training=p.training, momentum=p.momentum, eps=p.eps))",
     cases = norm_cases(BN_CASES),
     call = function(x, w, b, p)
       local rm, rv
       if p.stats then rm, rv = running(x) end
       return F.batch_norm(x, rm, rv, w, b, {training = p.training, momentum = p.momentum, eps = p.eps})
     end})

-- Evaluation by given statistics, differentiable in them too (b: mean, c: a positive variance).
add({name = "F.batch_norm eval by tensors that require grad", grad = {"a", "b", "c"}, gradgrad = true, out = "same",
     tol = NORM_TOL, grad_domain = {c = "pos"},
     ref = "N(F.batch_norm(T(a), T(b), T(c), training=False, eps=p.eps))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, e in ipairs({{{4, 3}, 1e-5}, {{2, 3, 5}, 1e-3}, {{2, 2, 3, 2}, 0.1}}) do
           local x, l = G.view(e[1], dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = x, b = G.make({e[1][2]}, dt), c = G.make({e[1][2]}, dt, {dom = "pos"}), layouts = {a = l},
                          p = {eps = e[2]}}
         end
       end
       return cs
     end,
     call = function(x, m, v, p) return F.batch_norm(x, m, v, {eps = p.eps}) end})

-- The running statistics F.batch_norm and F.instance_norm leave after one training call.
add({name = "F.batch_norm running statistics", out = "same*", tol = NORM_TOL,
     ref = "(lambda rm, rv: [N(F.batch_norm(T(a), rm, rv, training=True, momentum=p.momentum, eps=p.eps)), "
        .. "N(rm), N(rv)])(" .. RUNNING_PY .. ")",
     cases = norm_cases({{{6, 3}, {momentum = 0.1, eps = 1e-5}}, {{4, 2, 5}, {momentum = 0.7, eps = 1e-3}},
                         {{3, 4, 3, 2}, {momentum = 1.0, eps = 1e-5}}, {{2, 1}, {momentum = 0.25, eps = 1e-5}}}),
     call = function(x, _, _, p)
       local rm, rv = running(x)
       local y = F.batch_norm(x, rm, rv, {training = true, momentum = p.momentum, eps = p.eps})
       return y, rm, rv
     end})

-- F.instance_norm: the sample's statistics (updating the running ones when given) or the
-- running statistics (use_input_stats = false).
add({name = "F.instance_norm", grad = {"a", "b", "c"}, out = "same", tol = NORM_TOL,
     ref = "N(F.instance_norm(T(a), *((" .. RUNNING_PY .. ") if p.stats else (None, None)), weight=T(b), "
        .. "bias=T(c), use_input_stats=p.use_input_stats, momentum=p.momentum, eps=p.eps))",
     cases = norm_cases({
       {{3, 2, 5}, {use_input_stats = true, momentum = 0.1, eps = 1e-5, stats = false, affine = true}},
       {{2, 3, 3, 4}, {use_input_stats = true, momentum = 0.3, eps = 1e-3, stats = true, affine = false}},
       {{2, 2, 4}, {use_input_stats = false, momentum = 0.1, eps = 1e-5, stats = true, affine = true}},
       {{1, 4, 2, 3}, {use_input_stats = true, momentum = 0.1, eps = 0.1, stats = false, affine = false}},
     }),
     call = function(x, w, b, p)
       local rm, rv
       if p.stats then rm, rv = running(x) end
       return F.instance_norm(x, rm, rv, w, b, {use_input_stats = p.use_input_stats, momentum = p.momentum,
                                                eps = p.eps})
     end})

add({name = "F.instance_norm running statistics", out = "same*", tol = NORM_TOL,
     ref = "(lambda rm, rv: [N(F.instance_norm(T(a), rm, rv, momentum=p.momentum, eps=p.eps)), "
        .. "N(rm), N(rv)])(" .. RUNNING_PY .. ")",
     cases = norm_cases({{{3, 2, 5}, {momentum = 0.1, eps = 1e-5}}, {{2, 3, 3, 4}, {momentum = 0.6, eps = 1e-3}}}),
     call = function(x, _, _, p)
       local rm, rv = running(x)
       local y = F.instance_norm(x, rm, rv, {momentum = p.momentum, eps = p.eps})
       return y, rm, rv
     end})

-- F.group_norm over (N, C, *) with num_groups dividing C.
add({name = "F.group_norm", grad = {"a", "b", "c"}, out = "same", tol = NORM_TOL,
     ref = "N(F.group_norm(T(a), p.groups, weight=T(b), bias=T(c), eps=p.eps))",
     cases = norm_cases({
       {{3, 4, 5}, {groups = 2, eps = 1e-5, affine = true}},
       {{2, 6, 2, 3}, {groups = 3, eps = 1e-3, affine = false}},
       {{4, 3}, {groups = 1, eps = 1e-5, affine = true}},
       {{2, 3, 4}, {groups = 3, eps = 0.1, affine = true}},
       {{0, 4, 2}, {groups = 2, eps = 1e-5, affine = true}},
       {{2, 3}, {groups = 3, eps = 1e-5, affine = true}},  -- groups of one value
     }),
     call = function(x, w, b, p) return F.group_norm(x, p.groups, w, b, p.eps) end})

-- F.layer_norm over one or several trailing dims.
add({name = "F.layer_norm", grad = {"a", "b", "c"}, gradgrad = true, out = "same", tol = NORM_TOL,
     ref = "N(F.layer_norm(T(a), p.shape, weight=T(b), bias=T(c), eps=p.eps))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         -- {input shape, normalized_shape, affine, eps, offset of the values (a mean far from 0)}
         for _, e in ipairs({{{3, 5}, {5}, true, 1e-5}, {{2, 4, 3}, {4, 3}, true, 1e-3},
                             {{2, 3, 2, 2}, {3, 2, 2}, false, 1e-5}, {{6}, {6}, true, 0.1},
                             {{5, 8}, {8}, true, 1e-5, 1000}, {{3, 1}, {1}, true, 1e-5}}) do
           local opts = e[5] and {fn = function() return e[5] + G.randn() end} or nil
           local x, l = G.view(e[1], dt, G.pick(G.LAYOUTS), opts)
           local case = {a = x, layouts = {a = l}, p = {shape = e[2], eps = e[4]}}
           if e[3] then case.b, case.c = G.make(e[2], dt), G.make(e[2], dt) end
           cs[#cs + 1] = case
         end
       end
       return cs
     end,
     call = function(x, w, b, p) return F.layer_norm(x, p.shape, w, b, p.eps) end})

-- F.embedding with padding_idx (1-based here, 0-based in the reference; negative from the end
-- in both): the output and the weight's gradient of (y^2).sum(), whose padding row is zero
-- (finite differences would see that row, so the row has no gradient column).
add({name = "F.embedding padding_idx", out = "p.dtype*", tol = NORM_TOL, cast = "none",
     ref = "(lambda w, y: [N(y), (y ** 2).sum().backward() or N(w.grad)])(*(lambda w: (w, F.embedding(T(a - 1), w, "
        .. "padding_idx=p.pad - 1 if p.pad > 0 else p.pad)))(T(b).requires_grad_()))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, pad in ipairs({1, 3, -1, -2}) do
           local idx = G.make({2, 3}, "int64", {fn = function() return G.randint(1, 4) end})
           cs[#cs + 1] = {a = idx, b = G.make({4, 3}, dt), p = {pad = pad, dtype = dt}}
         end
       end
       return cs
     end,
     call = function(idx, weight, _, p)
       local w = weight:detach():clone():requires_grad_()
       local y = F.embedding(idx, w, {padding_idx = p.pad})
       y:pow(2):sum():backward()
       return y, w.grad
     end})

---------------------------------------------------------------------------------------------
-- The layers: {layer, positional args, keywords (p.kw, also PyTorch's; momentum = false is
-- None), input shape, per-channel parameter shape or nil when not affine}.
local LAYER_CASES = {
  {"BatchNorm1d", {3}, nil, {6, 3}, {3}},
  {"BatchNorm1d", {2}, {momentum = 0.3, eps = 1e-3}, {4, 2, 5}, {2}},
  {"BatchNorm1d", {3}, {momentum = false}, {5, 3}, {3}},
  {"BatchNorm1d", {2}, {affine = false, track_running_stats = false}, {3, 2, 4}},
  {"BatchNorm2d", {3}, nil, {3, 3, 4, 2}, {3}},
  {"BatchNorm2d", {2}, {momentum = false, affine = false}, {2, 2, 3, 3}},
  {"BatchNorm2d", {4}, {track_running_stats = false, eps = 0.01}, {2, 4, 2, 3}, {4}},
  {"BatchNorm2d", {2}, {momentum = 1.0}, {2, 2, 2, 2}, {2}},
  {"InstanceNorm1d", {3}, nil, {4, 3, 6}},
  {"InstanceNorm1d", {2}, {affine = true, track_running_stats = true, momentum = 0.4}, {3, 2, 5}, {2}},
  {"InstanceNorm1d", {3}, {track_running_stats = true}, {3, 7}},
  {"InstanceNorm2d", {2}, {affine = true, eps = 1e-3}, {2, 2, 3, 4}, {2}},
  {"InstanceNorm2d", {3}, {track_running_stats = true, momentum = 0.2}, {2, 3, 3, 3}},
  {"InstanceNorm2d", {2}, {affine = true}, {2, 3, 5}, {2}},
  {"GroupNorm", {2, 4}, nil, {3, 4, 5}, {4}},
  {"GroupNorm", {3, 6}, {eps = 1e-3}, {2, 6, 2, 3}, {6}},
  {"GroupNorm", {1, 3}, {affine = false}, {4, 3}},
  {"LayerNorm", {5}, nil, {3, 5}, {5}},
  {"LayerNorm", {{4, 3}}, {eps = 1e-3}, {2, 4, 3}, {4, 3}},
  {"LayerNorm", {{3, 2, 2}}, {elementwise_affine = false}, {2, 3, 2, 2}},
}

add({name = "norm layers: 3 training steps, gradients, eval, running statistics", out = "same*", tol = STEPS_TOL,
     ref = "norm_layer_steps(p.layer, p.args, p.kw, a, b, c)",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, e in ipairs(LAYER_CASES) do
           local xs = {}
           for i = 1, 3 do xs[i] = G.make(e[4], dt, {fn = function() return i * G.randn() + i - 2 end}) end
           local case = {a = xs, p = {layer = e[1], args = e[2], kw = e[3]}}
           if e[5] then case.b, case.c = G.make(e[5], dt), G.make(e[5], dt) end
           cs[#cs + 1] = case
         end
       end
       return cs
     end,
     call = function(xs, w, b, p)
       local args = G.copy_table(p.args)
       if p.kw then args[#args + 1] = p.kw end
       local m = torch.nn[p.layer](table.unpack(args)):to{dtype = xs[1].dtype, device = xs[1].device}
       if w ~= nil then
         torch.no_grad(function()
           m.weight:copy_(w)
           m.bias:copy_(b)
         end)
       end
       local outs, grads = {}, {}
       for i, x in ipairs(xs) do
         local xi = x:detach():clone():requires_grad_(i == 1)
         local y = m(xi)
         if i == 1 then
           y:pow(3):sum():backward()
           grads = {xi.grad}
           if w ~= nil then grads[2], grads[3] = m.weight.grad, m.bias.grad end
         end
         outs[#outs + 1] = y
       end
       m:eval()
       for _, g in ipairs(grads) do outs[#outs + 1] = g end
       outs[#outs + 1] = m(xs[1])
       if m.running_mean ~= nil then
         outs[#outs + 1] = m.running_mean
         outs[#outs + 1] = m.running_var
         outs[#outs + 1] = m.num_batches_tracked:to(xs[1].dtype)
       end
       return outs
     end})
