-- Rows of the conformance table for the torch.nn layers, activations and losses, checked
-- against PyTorch itself: the references call torch.nn.functional (`F`) on float64 copies of
-- the inputs (`T(a)`; `N(...)` brings the result back to NumPy; see check.py). Loaded by
-- ops.lua with its case generators G and its add(row). Rows alternate between the functional
-- form (p.form = 1) and the layer (p.form = 2) where both exist, so the layers' forwards and
-- their options are checked too. Class targets and dims are 1-based here, 0-based in the
-- references.
local G, add = ...

local MAIN = {"float32", "float64"}
local NN_TOL = {float32 = {1e-5, 1e-6}, float64 = {1e-12, 1e-13}}
local F = torch.nn.functional

local kwargs, with_kw = G.kwargs, G.with_kw

-- Python keyword arguments from p.kw (a JSON object, or null).
local PYKW = "**(p.kw or {})"

---------------------------------------------------------------------------------------------
-- Activations: {functional name, layer name, keyword variants (nil: the defaults), domain}.
local ACTIVATIONS = {
  {"leaky_relu", "LeakyReLU", {{negative_slope = 0.2}, {negative_slope = -1.5}}},
  {"elu", "ELU", {{alpha = 0.5}, {alpha = 2.0}}},
  {"selu", "SELU", {}},
  {"celu", "CELU", {{alpha = 0.5}, {alpha = 3.0}}},
  {"silu", "SiLU", {}},
  {"mish", "Mish", {}},
  {"softplus", "Softplus", {{beta = 2.0}, {beta = 0.5, threshold = 3.0}, {threshold = 1.0}}},
  {"softsign", "Softsign", {}},
  {"hardtanh", "Hardtanh", {{min_val = -0.5, max_val = 2.0}, {min_val = 0.25}}},
  {"relu6", "ReLU6", {}},
  {"hardsigmoid", "Hardsigmoid", {}},
  {"hardswish", "Hardswish", {}},
  {"logsigmoid", "LogSigmoid", {}},
  {"threshold", "Threshold", {{threshold = 0.5, value = -2.0}, {threshold = -1.0, value = 20.0}}, required = true},
}

-- Cases of a pointwise activation: for each dtype, each keyword variant (and the defaults unless
-- the options are required) on a random shape and layout, values of scale 1 to 8 so that
-- thresholds (softplus's 20, hardtanh's bounds, the +-3 of the hard functions) are crossed,
-- plus a 0-dim and a size-0 input.
local function activation_cases(variants, required)
  return function()
    local cs = {}
    for _, dt in ipairs(MAIN) do
      local kws = {}
      if not required then kws[1] = false end
      for _, kw in ipairs(variants) do kws[#kws + 1] = kw end
      for i, kw in ipairs(kws) do
        local shape = ({G.shape({max_rank = 4}), {}, {2, 0}})[math.min(i, 3)]
        if i > 3 then shape = G.shape({max_rank = 3}) end
        local x, l = G.view(shape, dt, G.pick(G.LAYOUTS), {fn = function() return G.pick({1, 3, 8}) * G.randn() end})
        cs[#cs + 1] = {a = x, layouts = {a = l}, p = {kw = kw or nil, form = 1 + i % 2}}
      end
      -- The last variant again in the other form.
      local x = G.make(G.shape({max_rank = 3}), dt, {fn = function() return 4 * G.randn() end})
      cs[#cs + 1] = {a = x, p = {kw = kws[#kws] or nil, form = 1 + (#kws + 1) % 2}}
    end
    return cs
  end
end

for _, act in ipairs(ACTIVATIONS) do
  local fname, lname = act[1], act[2]
  add({name = "F." .. fname, grad = {"a"}, out = "same", tol = NN_TOL,
       ref = "N(F." .. fname .. "(T(a), " .. PYKW .. "))",
       cases = activation_cases(act[3], act.required),
       call = function(x, _, _, p)
         if p.form == 2 then return with_kw(torch.nn[lname], p.kw)(x) end
         return with_kw(F[fname], p.kw, x)
       end})
end

-- prelu: one slope or one per channel (dim 2); the layer with num_parameters and init.
add({name = "F.prelu", grad = {"a", "b"}, out = "same", tol = NN_TOL, ref = "N(F.prelu(T(a), T(b)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, s in ipairs({{{4, 3}, 3}, {{2, 5, 3, 2}, 5}, {{2, 3}, 1}, {{}, 1}, {{6}, 1}, {{2, 4, 3}, 4}}) do
           local x, l = G.view(s[1], dt, G.pick(G.LAYOUTS), {fn = function() return 2 * G.randn() end})
           cs[#cs + 1] = {a = x, b = G.make({s[2]}, dt), layouts = {a = l}, p = {form = 1 + #cs % 2}}
         end
       end
       return cs
     end,
     call = function(x, w, _, p)
       if p.form == 2 and x.dtype == "float32" then
         local m = torch.nn.PReLU(w:numel()):to(x.device)  -- load_state_dict copies into the module's device
         m:load_state_dict({weight = w})
         return m(x)
       end
       return F.prelu(x, w)
     end})

-- glu over a 1-based dim (the reference's dim is 0-based).
add({name = "F.glu", grad = {"a"}, out = "same", tol = NN_TOL,
     ref = "N(F.glu(T(a), ax(p.dim)))",
     cases = function()
       local cs = {}
       for _, dt in ipairs(MAIN) do
         for _, s in ipairs({{{4, 6}, -1}, {{2, 4, 3}, 2}, {{6}, 1}, {{2, 3, 2}, -1}, {{0, 4}, 2}}) do
           local x, l = G.view(s[1], dt, G.pick(G.LAYOUTS))
           cs[#cs + 1] = {a = x, layouts = {a = l}, p = {dim = s[2], form = 1 + #cs % 2}}
         end
       end
       return cs
     end,
     call = function(x, _, _, p)
       if p.form == 2 then return torch.nn.GLU(p.dim)(x) end
       return F.glu(x, {dim = p.dim})
     end})

---------------------------------------------------------------------------------------------
-- Losses: one row per functional form, alternating with the loss layer. `args(a, b, c, p)`
-- gives the call's tensors and keyword table (tensor options such as weight travel in c);
-- `cases` is a list of {shape, keywords (p.kw, passed to both sides), extra parameters}.

-- The cases of a loss row: every entry of `list` for each dtype, its inputs made by
-- make(shape, dt, kw, extra) -> {a=, b=, c=, layouts=}.
local function loss_cases(list, make)
  return function()
    local cs = {}
    for _, dt in ipairs(MAIN) do
      for i, entry in ipairs(list) do
        local case = make(entry[1], dt, entry[2], entry[3] or {})
        case.p = {kw = entry[2], form = 1 + i % 2}
        for k, v in pairs(entry[3] or {}) do case.p[k] = v end
        cs[#cs + 1] = case
      end
    end
    return cs
  end
end

local function loss_row(fname, lname, spec)
  add({name = "F." .. fname, grad = spec.grad or {"a", "b"}, out = "same", tol = spec.tol or NN_TOL, ref = spec.ref,
       cast = spec.cast,
       grad_domain = spec.grad_domain, cases = loss_cases(spec.cases, spec.make),
       call = function(a, b, c, p)
         local args, kw = spec.args(a, b, c, p)
         local n = #args
         if kwargs(kw) then args[n + 1] = kw end
         if p.form == 2 and lname then
           local layer = kwargs(kw) and torch.nn[lname](kw) or torch.nn[lname]()
           return layer(table.unpack(args, 1, n))
         end
         return F[fname](table.unpack(args, 1, #args))
       end})
end

-- Input and target of one shape (random layouts).
local function pair(dom_a, dom_b)
  return function(shape, dt)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = dom_a})
    local b, lb = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = dom_b})
    return {a = a, b = b, layouts = {a = la, b = lb}}
  end
end
local function two(a, b, _, p) return {a, b}, G.copy_table(p.kw) end
local function three(a, b, c, p) return {a, b, c}, G.copy_table(p.kw) end
function G.copy_table(t)
  if t == nil then return nil end
  local r = {}
  for k, v in pairs(t) do r[k] = v end
  return r
end

local REDUCTIONS = {{{4, 5}, nil}, {{3, 2, 4}, {reduction = "sum"}}, {{6}, {reduction = "none"}}, {{}, nil},
                    {{2, 0}, {reduction = "sum"}}}
-- The reduction variants plus `more`.
local function with_reductions(more)
  local list = {}
  for _, e in ipairs(REDUCTIONS) do list[#list + 1] = e end
  for _, e in ipairs(more or {}) do list[#list + 1] = e end
  return list
end

loss_row("mse_loss", "MSELoss", {ref = "N(F.mse_loss(T(a), T(b), " .. PYKW .. "))", args = two, make = pair(),
                                 cases = with_reductions()})
loss_row("l1_loss", "L1Loss", {ref = "N(F.l1_loss(T(a), T(b), " .. PYKW .. "))", args = two, make = pair(),
                               cases = with_reductions()})
loss_row("smooth_l1_loss", "SmoothL1Loss", {
  ref = "N(F.smooth_l1_loss(T(a), T(b), " .. PYKW .. "))", args = two, make = pair(),
  cases = with_reductions({{{5, 4}, {beta = 0.5}}, {{3, 3}, {beta = 2.0, reduction = "none"}}, {{7}, {beta = 0.0}}})})
loss_row("huber_loss", "HuberLoss", {
  ref = "N(F.huber_loss(T(a), T(b), " .. PYKW .. "))", args = two, make = pair(),
  cases = with_reductions({{{5, 4}, {delta = 0.5}}, {{3, 3}, {delta = 2.5, reduction = "none"}}})})
-- kl_div: log-probabilities against probabilities (some exactly 0) or log-probabilities.
loss_row("kl_div", "KLDivLoss", {
  ref = "N(F.kl_div(T(a), T(b), " .. PYKW .. "))", args = two,
  make = function(shape, dt, kw)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = "small"})
    local b
    if kw and kw.log_target then b = G.make(shape, dt, {dom = "small"})
    else b = G.make(shape, dt, {fn = function() return G.chance(0.2) and 0 or math.random() end}) end
    return {a = a, b = b, layouts = {a = la}}
  end,
  grad_domain = {b = "prob"},
  cases = with_reductions({{{4, 3}, {reduction = "batchmean"}}, {{2, 5}, {log_target = true}},
                           {{3, 2, 2}, {log_target = true, reduction = "batchmean"}}, {{}, {reduction = "batchmean"}}})})
-- Pairs with +-1 targets: (N, D) or (D) inputs and (N) or () targets.
loss_row("cosine_embedding_loss", "CosineEmbeddingLoss", {
  ref = "N(F.cosine_embedding_loss(T(a), T(b), T(c), " .. PYKW .. "))", args = three,
  make = function(shape, dt)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    local b, lb = G.view(shape, dt, G.pick(G.LAYOUTS))
    local tshape = #shape == 2 and {shape[1]} or {}
    local c = G.make(tshape, "int64", {fn = function() return G.pick({1, -1}) end})
    return {a = a, b = b, c = c, layouts = {a = la, b = lb}}
  end,
  cases = {{{5, 3}, nil}, {{4, 6}, {margin = 0.25}}, {{6, 2}, {margin = -0.5, reduction = "sum"}},
           {{4}, {reduction = "none"}}, {{3, 4}, {reduction = "none", margin = 0.1}}}})
loss_row("margin_ranking_loss", "MarginRankingLoss", {
  ref = "N(F.margin_ranking_loss(T(a), T(b), T(c), " .. PYKW .. "))", args = three,
  make = function(shape, dt)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    local b, lb = G.view(shape, dt, G.pick(G.LAYOUTS))
    return {a = a, b = b, c = G.make(shape, dt, {fn = function() return G.pick({1.0, -1.0}) end}),
            layouts = {a = la, b = lb}}
  end,
  cases = {{{6}, nil}, {{5}, {margin = 0.5}}, {{4, 3}, {margin = 0.2, reduction = "sum"}}, {{7}, {reduction = "none"}}}})
loss_row("triplet_margin_loss", "TripletMarginLoss", {
  ref = "N(F.triplet_margin_loss(T(a), T(b), T(c), " .. PYKW .. "))", args = three, grad = {"a", "b", "c"},
  make = function(shape, dt)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    return {a = a, b = G.make(shape, dt), c = G.make(shape, dt), layouts = {a = la}}
  end,
  cases = {{{5, 4}, nil}, {{4, 3}, {margin = 2.0, p = 1.0}}, {{3, 5}, {swap = true, reduction = "sum"}},
           {{6}, {p = 3.0, eps = 1e-3}}, {{4, 2}, {reduction = "none", swap = true, margin = 0.5}}}})
loss_row("pairwise_distance", nil, {
  ref = "N(F.pairwise_distance(T(a), T(b), " .. PYKW .. "))", args = two, make = pair(),
  cases = {{{5, 4}, nil}, {{3, 2, 4}, {p = 1.0}}, {{6}, {p = 3.0, eps = 0.0}}, {{4, 3}, {keepdim = true}}}})
loss_row("hinge_embedding_loss", "HingeEmbeddingLoss", {
  ref = "N(F.hinge_embedding_loss(T(a), T(b), " .. PYKW .. "))", args = two, grad = {"a"},
  make = function(shape, dt)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    return {a = a, b = G.make(shape, dt, {fn = function() return G.pick({1.0, -1.0}) end}), layouts = {a = la}}
  end,
  cases = with_reductions({{{5, 3}, {margin = 0.5}}, {{4}, {margin = 2.0, reduction = "none"}}})})
loss_row("multilabel_soft_margin_loss", "MultiLabelSoftMarginLoss", {
  ref = "N(F.multilabel_soft_margin_loss(T(a), T(b), weight=T(c), " .. PYKW .. "))", grad = {"a"},
  args = function(a, b, c, p)
    local kw = G.copy_table(p.kw) or {}
    kw.weight = c
    return {a, b}, kw
  end,
  make = function(shape, dt, _, extra)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    local b = G.make(shape, dt, {fn = function() return G.pick({0.0, 1.0}) end})
    return {a = a, b = b, c = extra.weight and G.make({shape[#shape]}, dt, {dom = "pos"}) or nil, layouts = {a = la}}
  end,
  cases = {{{4, 5}, nil}, {{3, 4}, {reduction = "sum"}, {weight = true}}, {{6, 2}, {reduction = "none"}},
           {{5}, nil, {weight = true}}, {{2, 3}, nil, {weight = true}}}})
loss_row("poisson_nll_loss", "PoissonNLLLoss", {
  ref = "N(F.poisson_nll_loss(T(a), T(b), " .. PYKW .. "))", grad = {"a"},
  args = two,
  make = function(shape, dt, kw)
    local log_input = not kw or kw.log_input ~= false
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = log_input and "small" or "pos"})
    local b = G.make(shape, dt, {fn = function() return G.pick({0, 1, 2, 3, 7}) + 0.0 end})
    return {a = a, b = b, layouts = {a = la}}
  end,
  grad_domain = "pos",
  cases = with_reductions({{{5, 3}, {full = true}}, {{4, 4}, {log_input = false}},
                           {{6}, {log_input = false, full = true, eps = 1e-3, reduction = "none"}}})})
-- var of the input's shape, without its last dim or with the last dim 1.
loss_row("gaussian_nll_loss", "GaussianNLLLoss", {
  ref = "N(F.gaussian_nll_loss(T(a), T(b), T(c), " .. PYKW .. "))", args = three, grad = {"a", "b", "c"},
  grad_domain = {c = "pos"},
  make = function(shape, dt, _, extra)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS))
    local vshape = G.copy(shape)
    if extra.var == "short" then table.remove(vshape) elseif extra.var == "one" then vshape[#vshape] = 1 end
    local c = G.make(vshape, dt, {fn = function() return G.chance(0.15) and 1e-9 or math.exp(G.randn()) end})
    return {a = a, b = G.make(shape, dt), c = c, layouts = {a = la}}
  end,
  cases = {{{4, 3}, nil}, {{5, 2}, {full = true}, {var = "short"}}, {{3, 4}, {reduction = "sum"}, {var = "one"}},
           {{6}, {eps = 1e-2, reduction = "none"}}, {{2, 3, 2}, {full = true, reduction = "none"}, {var = "short"}}}})

-- binary_cross_entropy: probabilities against targets in [0, 1], with an optional weight (c).
loss_row("binary_cross_entropy", "BCELoss", {
  ref = "N(F.binary_cross_entropy(T(a), T(b), weight=T(c), " .. PYKW .. "))", grad = {"a", "b"},
  grad_domain = "prob",
  args = function(a, b, c, p)
    local kw = G.copy_table(p.kw) or {}
    kw.weight = c
    return {a, b}, kw
  end,
  make = function(shape, dt, _, extra)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = "prob"})
    local b = G.make(shape, dt, {dom = "prob"})
    return {a = a, b = b, c = extra.weight and G.make({shape[#shape]}, dt, {dom = "pos"}) or nil, layouts = {a = la}}
  end,
  cases = with_reductions({{{4, 3}, nil, {weight = true}}, {{2, 5}, {reduction = "none"}, {weight = true}}})})
-- binary_cross_entropy_with_logits: weight and pos_weight (per class, the last dim) in c.
loss_row("binary_cross_entropy_with_logits", "BCEWithLogitsLoss", {
  ref = "N(F.binary_cross_entropy_with_logits(T(a), T(b), weight=T(c[0]) if p.w else None, "
     .. "pos_weight=T(c[-1]) if p.pw else None, " .. PYKW .. "))",
  args = function(a, b, c, p)
    local kw = G.copy_table(p.kw) or {}
    if p.w then kw.weight = c[1] end
    if p.pw then kw.pos_weight = c[#c] end
    return {a, b}, kw
  end,
  make = function(shape, dt, _, extra)
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {fn = function() return 4 * G.randn() end})
    local b = G.make(shape, dt, {dom = "prob"})
    local c = {}
    if extra.w then c[#c + 1] = G.make({shape[#shape] or 1}, dt, {dom = "pos"}) end
    if extra.pw then c[#c + 1] = G.make({shape[#shape] or 1}, dt, {dom = "pos"}) end
    return {a = a, b = b, c = #c > 0 and c or nil, layouts = {a = la}}
  end,
  cases = with_reductions({{{4, 3}, nil, {pw = true}}, {{2, 5}, {reduction = "none"}, {w = true, pw = true}},
                           {{3, 2, 4}, {reduction = "sum"}, {w = true}}})})

-- cross_entropy and nll_loss against PyTorch: class targets (1-based here, so the reference
-- gets target - 1 and ignore_index - 1) with weights, ignore_index and label smoothing, and
-- probability targets.
local CLASS_CASES = {
  {{4, 5}, nil}, {{5}, {reduction = "sum"}}, {{2, 3, 2, 2}, {reduction = "none"}, {weight = true}},
  {{6, 4}, {ignore_index = 2, label_smoothing = 0.1}, {weight = true, ignored = 2}},
  {{3, 4}, {label_smoothing = 0.2, reduction = "sum"}, {ignored = 1}},
  {{5, 4}, {label_smoothing = 0.3}, {weight = true}}, {{4, 3}, {label_smoothing = 0.2}, {prob = true, weight = true}},
  {{2, 4, 3}, {reduction = "none"}, {prob = true}}, {{3, 5}, {reduction = "sum", label_smoothing = 0.4}, {prob = true}},
}
local function class_case(with_prob)
  return function(shape, dt, kw, extra)
    local cd = #shape == 1 and 1 or 2
    local C = shape[cd]
    local a, la = G.view(shape, dt, G.pick(G.LAYOUTS), {dom = "small"})
    local target
    if extra.prob and with_prob then
      target = G.make(shape, dt, {dom = "prob"})
      target = target / target:sum(cd, true)
    else
      local tshape = G.copy(shape)
      table.remove(tshape, cd)
      local ig = kw and kw.ignore_index or -100
      local v, n = {}, G.numel(tshape)
      for i = 1, n do v[i] = (i <= (extra.ignored or 0)) and ig or math.random(1, C) end
      target = G.make(tshape, "int64", {values = v})
    end
    return {a = a, b = target, c = extra.weight and G.make({C}, dt, {dom = "pos"}) or nil, layouts = {a = la}}
  end
end
local function class_args(a, b, c, p)
  local kw = G.copy_table(p.kw) or {}
  kw.weight = c
  return {a, b}, kw
end
-- PyTorch's keywords for a case: 0-based ignore_index.
local CLASS_KW = "weight=T(c), ignore_index=(p.kw or {}).get('ignore_index', -100) - (0 if b.dtype.kind == 'f' else 1), "
  .. "**{k: v for k, v in (p.kw or {}).items() if k != 'ignore_index'}"
loss_row("cross_entropy", "CrossEntropyLoss", {
  ref = "N(F.cross_entropy(T(a), T(b if b.dtype.kind == 'f' else b - 1), " .. CLASS_KW .. "))", grad = {"a"},
  cast = "none",
  args = class_args, make = class_case(true), cases = CLASS_CASES})
local NLL_CASES = {}
for _, e in ipairs(CLASS_CASES) do
  if not (e[3] and e[3].prob) then
    local kw = G.copy_table(e[2])
    if kw then kw.label_smoothing = nil end
    NLL_CASES[#NLL_CASES + 1] = {e[1], kwargs(kw), e[3]}
  end
end
loss_row("nll_loss", "NLLLoss", {
  ref = "N(F.nll_loss(T(a), T(b - 1), " .. CLASS_KW .. "))", grad = {"a"}, cast = "none",
  args = class_args, make = class_case(false), cases = NLL_CASES})
