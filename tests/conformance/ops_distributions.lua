-- Rows of the conformance table for torch.distributions, checked against PyTorch 1.13's
-- torch.distributions in float64 (the families' and Categorical's rows also on float32
-- inputs): log_prob, entropy, the moments, kl_divergence for every
-- pair PyTorch registers among the classes, rsample given the same noise (the noise drawn in
-- the case generator after torch.manual_seed(p.seed), which the call repeats), and the
-- standard gamma sample's reparameterisation gradient. The parameters of a distribution come
-- stacked in one input (a[1], a[2] here, P[0], P[1] in the reference); a Uniform's are low and
-- its width (high = low + width), so that every perturbation of the gradient check keeps
-- low < high. Category indices are 1-based in tide, 0-based in the references.
local G, add = ...

local D = torch.distributions
local F64 = "float64"
local TOL = {float64 = {1e-11, 1e-12}, float32 = {2e-5, 1e-6}}

local function concat(a, b)
  local out = {}
  for _, v in ipairs(a) do out[#out + 1] = v end
  for _, v in ipairs(b) do out[#out + 1] = v end
  return out
end

local BATCHES = {{}, {3}, {2, 3}}
local SAMPLES = {{}, {4}, {}}

local function pos() return math.exp(G.uniform(-1.5, 1.5)) end
local function real() return 2 * G.randn() end
local function prob() return G.uniform(0.05, 0.95) end

-- The one-parameter-tensor families: name, the Lua constructor on the stacked parameters,
-- the Python one on P, the parameters' value maker and gradient domain, the value maker of
-- log_prob (given the parameters; nil: no gradient through the value) and its domain.
local FAMILIES = {
  {name = "Normal", n = 2, make = function(a) return D.Normal(a[1], a[2]) end,
   py = "torch.distributions.Normal(P[0], P[1])", param = pos, dom = "pos", value = real, vdom = "real"},
  {name = "Uniform", n = 2, make = function(a) return D.Uniform(a[1], a[1] + a[2]) end,
   py = "torch.distributions.Uniform(P[0], P[0] + P[1])", param = pos, dom = "pos",
   value_of = function(a)
     local u = torch.rand(a[1].shape, {dtype = a.dtype}) * 0.8 + 0.1
     return a[1] + u * a[2]
   end},
  {name = "Gamma", n = 2, make = function(a) return D.Gamma(a[1], a[2]) end,
   py = "torch.distributions.Gamma(P[0], P[1])", param = pos, dom = "pos", value = pos, vdom = "pos"},
  {name = "Beta", n = 2, make = function(a) return D.Beta(a[1], a[2]) end,
   py = "torch.distributions.Beta(P[0], P[1])", param = pos, dom = "pos", value = prob, vdom = "prob"},
  {name = "Bernoulli(probs)", n = 1, make = function(a) return D.Bernoulli({probs = a}) end,
   py = "torch.distributions.Bernoulli(probs=P)", param = prob, dom = "prob",
   value = function() return G.pick({0.0, 1.0}) end, unstacked = true},
  {name = "Bernoulli(logits)", n = 1, make = function(a) return D.Bernoulli({logits = a}) end,
   py = "torch.distributions.Bernoulli(logits=P)", param = real, dom = "real",
   value = function() return G.pick({0.0, 1.0}) end, unstacked = true},
}

-- A case of a family: stacked parameters of batch shape `batch` (just the parameter for the
-- one-parameter families) and a value of shape sample .. batch, in dtype dt (float64 default).
local function family_case(fam, batch, sample, dt)
  local pshape = fam.unstacked and batch or concat({fam.n}, batch)
  local a = G.make(pshape, dt or F64, {fn = fam.param})
  local vshape = concat(sample, batch)
  local b
  if fam.value_of then
    b = fam.value_of(a):expand(vshape):contiguous()
  else
    b = G.make(vshape, dt or F64, {fn = fam.value})
  end
  return {a = a, b = b}
end

-- The batches in float64, then in float32 (against the float64 reference within float32's
-- tolerance).
local function family_cases(fam)
  return function()
    local cs = {}
    for _, dt in ipairs({F64, "float32"}) do
      for i, batch in ipairs(BATCHES) do cs[#cs + 1] = family_case(fam, batch, SAMPLES[i], dt) end
    end
    return cs
  end
end

local function py(fam, expr) return "N((lambda P: " .. fam.py .. expr .. ")(T(a)))" end

for _, fam in ipairs(FAMILIES) do
  local vgrad = fam.vdom and {"a", "b"} or {"a"}
  add({name = fam.name .. ".log_prob", out = "same", tol = TOL, grad = vgrad,
       grad_domain = {a = fam.dom, b = fam.vdom}, cases = family_cases(fam),
       ref = "N((lambda P: " .. fam.py .. ")(T(a)).log_prob(T(b)))",
       call = function(a, b) return fam.make(a):log_prob(b) end})
  add({name = fam.name .. ".entropy", out = "same", tol = TOL, grad = {"a"}, grad_domain = {a = fam.dom},
       cases = family_cases(fam), ref = py(fam, ".entropy()"),
       call = function(a) return fam.make(a):entropy() end})
  add({name = fam.name .. ".moments", out = "same*", tol = TOL, grad = {"a"}, grad_domain = {a = fam.dom},
       cases = family_cases(fam),
       ref = "(lambda d: [N(d.mean), N(d.stddev), N(d.variance)])((lambda P: " .. fam.py .. ")(T(a)))",
       call = function(a)
         local d = fam.make(a)
         return d.mean, d.stddev, d.variance
       end})
end

---------------------------------------------------------------------------------------------
-- Categorical: probs (unnormalised, positive) or logits over K categories.

local function categorical_cases(param)
  return function()
    local cs = {}
    for j = 1, 2 * #BATCHES do
      local i = (j - 1) % #BATCHES + 1
      local batch = BATCHES[i]
      local k = G.pick({2, 3, 5})
      local a = G.make(concat(batch, {k}), j <= #BATCHES and F64 or "float32", {fn = param})
      local b = G.make(concat(SAMPLES[i], batch), "int64", {fn = function() return G.randint(1, k) end})
      cs[#cs + 1] = {a = a, b = b}
    end
    return cs
  end
end

for _, form in ipairs({{"probs", pos, "pos"}, {"logits", real, "real"}}) do
  local kw, name = form[1], "Categorical(" .. form[1] .. ")"
  local make = function(a) return D.Categorical({[kw] = a}) end
  local pyd = "torch.distributions.Categorical(" .. kw .. "=T(a))"
  add({name = name .. ".log_prob", out = "same", tol = TOL, grad = {"a"}, grad_domain = {a = form[3]},
       cases = categorical_cases(form[2]), ref = "N(" .. pyd .. ".log_prob(T(b) - 1))",
       call = function(a, b) return make(a):log_prob(b) end})
  add({name = name .. ".entropy", out = "same", tol = TOL, grad = {"a"}, grad_domain = {a = form[3]},
       cases = categorical_cases(form[2]), ref = "N(" .. pyd .. ".entropy())",
       call = function(a) return make(a):entropy() end})
  add({name = name .. ".params", out = "same*", tol = TOL, grad = {"a"}, grad_domain = {a = form[3]},
       cases = categorical_cases(form[2]), ref = "(lambda d: [N(d.probs), N(d.logits)])(" .. pyd .. ")",
       call = function(a)
         local d = make(a)
         return d.probs, d.logits
       end})
  add({name = name .. ".moments", out = "same*", tol = TOL, cases = categorical_cases(form[2]),
       ref = "(lambda d: [N(d.mean), N(d.variance)])(" .. pyd .. ")",
       call = function(a)
         local d = make(a)
         return d.mean, d.variance
       end})
end

---------------------------------------------------------------------------------------------
-- MultivariateNormal: loc a, the matrix from a factor b (covariance and precision b b^T + I,
-- scale_tril tril(b) with b's positive diagonal), value c.

local MVN_KINDS = {"covariance_matrix", "precision_matrix", "scale_tril"}

local function mvn_matrix(kind, b)
  if kind == "scale_tril" then return torch.tril(b) end
  local n = b.shape[b:dim()]
  return b:matmul(b:transpose(-2, -1)) + torch.eye(n, {dtype = b.dtype, device = b.device})
end

local function mvn_cases()
  local cs = {}
  local shapes = {{{}, {}, {}}, {{3}, {}, {4, 3}}, {{}, {2}, {2}}, {{2, 1}, {3}, {2, 3}}}
  for ci, kind in ipairs(MVN_KINDS) do
    for si, s in ipairs(shapes) do
      local n = 1 + (ci + si) % 3
      local a = G.make(concat(s[1], {n}), F64, {fn = real})
      local b = G.make(concat(s[2], {n, n}), F64, {fn = pos})
      local c = G.make(concat(s[3], {n}), F64, {fn = real})
      cs[#cs + 1] = {a = a, b = b, c = c, p = {kind = kind}}
    end
  end
  return cs
end

local function make_mvn(a, b, p) return D.MultivariateNormal(a, {[p.kind] = mvn_matrix(p.kind, b)}) end
local MVN_PY = "(lambda M: torch.distributions.MultivariateNormal(T(a), **{p.kind: M}))(" ..
               "T(b).tril() if p.kind == 'scale_tril' else T(b) @ T(b).mT + torch.eye(T(b).shape[-1], " ..
               "dtype=torch.float64))"
add({name = "MultivariateNormal.log_prob", out = "float64", tol = TOL, grad = {"a", "b", "c"},
     grad_domain = {a = "real", b = "pos", c = "real"}, cases = mvn_cases,
     ref = "N(" .. MVN_PY .. ".log_prob(T(c)))", call = function(a, b, c, p) return make_mvn(a, b, p):log_prob(c) end})
add({name = "MultivariateNormal.entropy", out = "float64", tol = TOL, grad = {"b"},
     grad_domain = {a = "real", b = "pos"}, cases = mvn_cases,
     ref = "N(" .. MVN_PY .. ".entropy())", call = function(a, b, _, p) return make_mvn(a, b, p):entropy() end})
add({name = "MultivariateNormal.moments", out = "float64*", tol = TOL, grad = {"a", "b"},
     grad_domain = {a = "real", b = "pos"}, cases = mvn_cases,
     ref = "(lambda d: [N(d.mean), N(d.stddev), N(d.variance), N(d.covariance_matrix), N(d.scale_tril), " ..
           "N(d.precision_matrix)])(" .. MVN_PY .. ")",
     call = function(a, b, _, p)
       local d = make_mvn(a, b, p)
       return d.mean, d.stddev, d.variance, d.covariance_matrix, d.scale_tril, d.precision_matrix
     end})

---------------------------------------------------------------------------------------------
-- Independent(Normal or Gamma of batch {2, 3}, 1 or 2).

local function independent_cases()
  local cs = {}
  for _, nd in ipairs({0, 1, 2}) do
    for _, base in ipairs({"Normal", "Gamma"}) do
      local a = G.make({2, 2, 3}, F64, {fn = pos})
      local b = G.make({4, 2, 3}, F64, {fn = pos})
      cs[#cs + 1] = {a = a, b = b, p = {nd = nd, base = base}}
    end
  end
  return cs
end
local function make_independent(a, p) return D.Independent(D[p.base](a[1], a[2]), p.nd) end
local IND_PY = "torch.distributions.Independent(getattr(torch.distributions, p.base)(T(a)[0], T(a)[1]), p.nd)"
add({name = "Independent.log_prob", out = "float64", tol = TOL, grad = {"a", "b"}, grad_domain = "pos",
     cases = independent_cases, ref = "N(" .. IND_PY .. ".log_prob(T(b)))",
     call = function(a, b, _, p) return make_independent(a, p):log_prob(b) end})
add({name = "Independent.entropy", out = "float64*", tol = TOL, grad = {"a"}, grad_domain = "pos",
     cases = independent_cases, ref = "(lambda d: [N(d.entropy()), N(d.mean), N(d.variance)])(" .. IND_PY .. ")",
     call = function(a, _, _, p)
       local d = make_independent(a, p)
       return d:entropy(), d.mean, d.variance
     end})

---------------------------------------------------------------------------------------------
-- kl_divergence(p, q) for the pairs PyTorch 1.13 registers: a holds p's parameters, b q's.

local KL_FAMS = {}
for _, fam in ipairs(FAMILIES) do KL_FAMS[fam.name] = fam end
local function kl_pair(pn, qn, opts)
  opts = opts or {}
  local pf, qf = KL_FAMS[pn], KL_FAMS[qn]
  add({name = "kl_divergence(" .. pn .. ", " .. qn .. ")", out = "float64", tol = TOL,
       grad = not opts.infinite and {"a", "b"} or nil, grad_domain = {a = pf.dom, b = qf.dom},
       cases = function()
         local cs = {}
         for _, batch in ipairs(BATCHES) do
           local pa = family_case(pf, batch, {}).a
           local qa = family_case(qf, batch, {}).a
           if opts.adjust then pa, qa = opts.adjust(pa, qa) end
           cs[#cs + 1] = {a = pa, b = qa}
         end
         return cs
       end,
       ref = "N(torch.distributions.kl_divergence((lambda P: " .. pf.py .. ")(T(a)), (lambda P: " .. qf.py ..
             ")(T(b))))",
       call = function(a, b) return D.kl_divergence(pf.make(a), qf.make(b)) end})
end

kl_pair("Normal", "Normal")
kl_pair("Gamma", "Gamma")
kl_pair("Beta", "Beta")
kl_pair("Bernoulli(probs)", "Bernoulli(probs)")
kl_pair("Bernoulli(logits)", "Bernoulli(probs)")
-- Uniform pairs: q covers p in some elements (finite) and not in others (inf).
kl_pair("Uniform", "Uniform", {infinite = true})
kl_pair("Beta", "Gamma")
kl_pair("Beta", "Normal")
kl_pair("Gamma", "Normal")
kl_pair("Uniform", "Normal")
kl_pair("Beta", "Uniform", {infinite = true})
kl_pair("Uniform", "Beta", {infinite = true})
kl_pair("Uniform", "Gamma", {infinite = true})
-- Uniform inside (0, 1), and inside (0, inf): finite divergences with gradients.
add({name = "kl_divergence(Uniform inside, Beta)", out = "float64", tol = TOL, grad = {"a", "b"},
     grad_domain = {a = "prob", b = "pos"},
     cases = function()
       local cs = {}
       for _, batch in ipairs(BATCHES) do
         local pa = G.make(concat({2}, batch), F64, {fn = function() return G.uniform(0.05, 0.45) end})
         cs[#cs + 1] = {a = pa, b = family_case(KL_FAMS.Beta, batch, {}).a}
       end
       return cs
     end,
     ref = "N(torch.distributions.kl_divergence(torch.distributions.Uniform(T(a)[0], T(a)[0] + T(a)[1]), " ..
           "torch.distributions.Beta(T(b)[0], T(b)[1])))",
     call = function(a, b) return D.kl_divergence(D.Uniform(a[1], a[1] + a[2]), D.Beta(b[1], b[2])) end})
add({name = "kl_divergence(Uniform positive, Gamma)", out = "same", tol = TOL, grad = {"a", "b"},
     grad_domain = "pos", cases = family_cases(KL_FAMS.Uniform),
     ref = "N(torch.distributions.kl_divergence(torch.distributions.Uniform(T(a)[0], T(a)[0] + T(a)[1]), " ..
           "torch.distributions.Gamma(T(a)[1], T(a)[0] + 1)))",
     call = function(a) return D.kl_divergence(D.Uniform(a[1], a[1] + a[2]), D.Gamma(a[2], a[1] + 1)) end})
kl_pair("Gamma", "Beta", {infinite = true})
kl_pair("Gamma", "Uniform", {infinite = true})
kl_pair("Normal", "Uniform", {infinite = true})
kl_pair("Normal", "Gamma", {infinite = true})
kl_pair("Normal", "Beta", {infinite = true})

for _, form in ipairs({{"probs", pos, "pos"}, {"logits", real, "real"}}) do
  local kw = form[1]
  add({name = "kl_divergence(Categorical(" .. kw .. "), Categorical)", out = "float64", tol = TOL, grad = {"a", "b"},
       grad_domain = {a = form[3], b = "pos"},
       cases = function()
         local cs = {}
         for _, batch in ipairs(BATCHES) do
           local k = G.pick({2, 3, 5})
           cs[#cs + 1] = {a = G.make(concat(batch, {k}), F64, {fn = form[2]}),
                          b = G.make(concat(batch, {k}), F64, {fn = pos})}
         end
         return cs
       end,
       ref = "N(torch.distributions.kl_divergence(torch.distributions.Categorical(" .. kw .. "=T(a)), " ..
             "torch.distributions.Categorical(probs=T(b))))",
       call = function(a, b) return D.kl_divergence(D.Categorical({[kw] = a}), D.Categorical({probs = b})) end})
end
-- A category of zero probability: inf where q has it and p not, 0 terms where p has it.
add({name = "kl_divergence(Categorical, Categorical) zeros", out = "float64", tol = TOL,
     cases = function()
       return {{a = torch.tensor({{0.5, 0.5, 0.0}, {0.2, 0.0, 0.8}}, {dtype = F64}),
                b = torch.tensor({{0.25, 0.25, 0.5}, {0.5, 0.5, 0.0}}, {dtype = F64})}}
     end,
     ref = "N(torch.distributions.kl_divergence(torch.distributions.Categorical(probs=T(a)), " ..
           "torch.distributions.Categorical(probs=T(b))))",
     call = function(a, b) return D.kl_divergence(D.Categorical({probs = a}), D.Categorical({probs = b})) end})

add({name = "kl_divergence(MultivariateNormal, MultivariateNormal)", out = "float64", tol = TOL,
     grad = {"a", "b"}, grad_domain = {a = "real", b = "pos"},
     cases = function()
       local cs = {}
       for ci, kind in ipairs(MVN_KINDS) do
         for _, s in ipairs({{{}, {}}, {{3}, {}}, {{}, {2}}, {{2, 1}, {3}}}) do
           local n = 1 + (ci + #s[1]) % 3
           cs[#cs + 1] = {a = G.make(concat({2}, concat(s[1], {n})), F64, {fn = real}),
                          b = G.make(concat({2}, concat(s[2], {n, n})), F64, {fn = pos}), p = {kind = kind}}
         end
       end
       return cs
     end,
     ref = "N(torch.distributions.kl_divergence(*[torch.distributions.MultivariateNormal(T(a)[i], **{p.kind: " ..
           "T(b)[i].tril() if p.kind == 'scale_tril' else T(b)[i] @ T(b)[i].mT + torch.eye(T(b).shape[-1], " ..
           "dtype=torch.float64)}) for i in (0, 1)]))",
     call = function(a, b, _, p) return D.kl_divergence(make_mvn(a[1], b[1], p), make_mvn(a[2], b[2], p)) end})

add({name = "kl_divergence(Independent, Independent)", out = "float64", tol = TOL, grad = {"a", "b"},
     grad_domain = "pos",
     cases = function()
       local cs = {}
       for _, nd in ipairs({0, 1, 2}) do
         for _, base in ipairs({"Normal", "Gamma"}) do
           cs[#cs + 1] = {a = G.make({2, 2, 3}, F64, {fn = pos}), b = G.make({2, 2, 3}, F64, {fn = pos}),
                          p = {nd = nd, base = base}}
         end
       end
       return cs
     end,
     ref = "N(torch.distributions.kl_divergence(" .. IND_PY .. ", " .. IND_PY:gsub("T%(a%)", "T(b)") .. "))",
     call = function(a, b, _, p) return D.kl_divergence(make_independent(a, p), make_independent(b, p)) end})

---------------------------------------------------------------------------------------------
-- rsample given the noise: the case generator draws the noise after torch.manual_seed(p.seed)
-- as rsample does (randn for Normal and MultivariateNormal, rand for Uniform), the reference
-- applies PyTorch's transform to it; the gradient check differentiates the sample itself.

local function noise_case(draw, shape, seed, extra)
  torch.manual_seed(seed)
  local c = draw(shape, {dtype = F64})
  local p = {seed = seed}
  for k, v in pairs(extra or {}) do p[k] = v end
  return c, p
end

-- The cases of a two-parameter family's rsample: a = its parameters (2, batch...), both
-- positive, and the noise of draw over (sample..., batch...) from seed seed_base + i.
local function two_parameter_noise_cases(draw, seed_base)
  return function()
    local cs = {}
    for i, batch in ipairs(BATCHES) do
      local a = G.make(concat({2}, batch), F64, {fn = pos})
      local c, p = noise_case(draw, concat(SAMPLES[i], batch), seed_base + i, {sample = SAMPLES[i]})
      cs[#cs + 1] = {a = a, c = c, p = p}
    end
    return cs
  end
end

add({name = "Normal.rsample", out = "float64", tol = TOL, grad = {"a"}, grad_domain = "pos",
     cases = two_parameter_noise_cases(torch.randn, 100),
     ref = "N(T(a)[0] + T(c) * T(a)[1])",
     call = function(a, _, _, p)
       torch.manual_seed(p.seed)
       return D.Normal(a[1], a[2]):rsample(p.sample)
     end})
add({name = "Uniform.rsample", out = "float64", tol = TOL, grad = {"a"}, grad_domain = "pos",
     cases = two_parameter_noise_cases(torch.rand, 200),
     ref = "N(T(a)[0] + T(c) * T(a)[1])",
     call = function(a, _, _, p)
       torch.manual_seed(p.seed)
       return D.Uniform(a[1], a[1] + a[2]):rsample(p.sample)
     end})
add({name = "MultivariateNormal.rsample", out = "float64", tol = TOL, grad = {"a", "b"},
     grad_domain = {a = "real", b = "pos"},
     cases = function()
       local cs = {}
       for ci, kind in ipairs(MVN_KINDS) do
         for si, s in ipairs({{{}, {}, {}}, {{3}, {}, {2}}, {{2, 1}, {3}, {}}}) do
           local n = 1 + (ci + si) % 3
           local a = G.make(concat(s[1], {n}), F64, {fn = real})
           local b = G.make(concat(s[2], {n, n}), F64, {fn = pos})
           local batch = #s[1] > #s[2] and s[1] or s[2]
           if #s[1] == 2 then batch = {2, 3} end
           local c, p = noise_case(torch.randn, concat(s[3], concat(batch, {n})), 300 + 10 * ci + si,
                                   {sample = s[3], kind = kind})
           cs[#cs + 1] = {a = a, b = b, c = c, p = p}
         end
       end
       return cs
     end,
     ref = "(lambda d: N(d.loc + (d._unbroadcasted_scale_tril @ T(c)[..., None])[..., 0]))(" .. MVN_PY .. ")",
     call = function(a, b, _, p)
       torch.manual_seed(p.seed)
       return make_mvn(a, b, p):rsample(p.sample)
     end})
add({name = "Independent.rsample", out = "float64", tol = TOL, grad = {"a"}, grad_domain = "pos",
     cases = function()
       local a = G.make({2, 2, 3}, F64, {fn = pos})
       local c, p = noise_case(torch.randn, {4, 2, 3}, 400, {sample = {4}, nd = 2, base = "Normal"})
       return {{a = a, c = c, p = p}}
     end,
     ref = "N(T(a)[0] + T(c) * T(a)[1])",
     call = function(a, _, _, p)
       torch.manual_seed(p.seed)
       return make_independent(a, p):rsample(p.sample)
     end})

-- d x / d alpha of a standard gamma sample x (Gamma and Beta rsample's gradient) against
-- torch._standard_gamma_grad, over the three regimes (x < 0.8, alpha > 8, between).
add({name = "distributions._standard_gamma_grad", out = "float64", tol = {float64 = {1e-10, 1e-12}},
     cases = function()
       local cs = {}
       for _, range in ipairs({{-3, 0.5}, {0.5, 2.1}, {2.1, 4.5}}) do
         local alpha = G.make({40}, F64, {fn = function() return math.exp(G.uniform(range[1], range[2])) end})
         local x = alpha * G.make({40}, F64, {fn = function() return math.exp(G.uniform(-2.5, 1)) end})
         cs[#cs + 1] = {a = alpha, b = x}
       end
       -- near the mode of a large alpha (Rice's expansion's inner branch)
       local alpha = G.make({20}, F64, {fn = function() return G.uniform(9, 60) end})
       cs[#cs + 1] = {a = alpha, b = alpha * G.make({20}, F64, {fn = function() return G.uniform(0.92, 1.08) end})}
       return cs
     end,
     ref = "N(torch._standard_gamma_grad(T(a), T(b)))",
     call = function(a, b) return D._standard_gamma_grad(a, b) end})
