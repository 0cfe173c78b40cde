-- torch.distributions beyond the conformance rows (tests/conformance/ops_distributions.lua,
-- which check the values and gradients against PyTorch): argument errors and validate_args,
-- sample shapes and dtypes, the statistics of samples (fixed seeds, so each check is one
-- deterministic draw; the tolerances are 5 standard errors or more), the gamma sampler's
-- reparameterisation gradient, and kl_divergence's dispatch.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local D = torch.distributions
local f64 = {dtype = torch.float64}

local function t64(v) return torch.tensor(v, f64) end

T.test("parameters: numbers and tensors broadcast; batch and event shapes", function()
  local n = D.Normal(0.0, 1.0)
  T.eq(n.batch_shape, {})
  T.eq(n.event_shape, {})
  T.eq(n.loc.dtype, torch.get_default_dtype())
  n = D.Normal(t64({{0.0}, {1.0}}), t64({1.0, 2.0, 3.0}))
  T.eq(n.batch_shape, {2, 3})
  T.eq(n.scale.dtype, "float64")
  T.eq(D.Normal(t64({1.0, 2.0}), 3.0).scale:tolist(), {3.0, 3.0})
  T.eq(D.Categorical({probs = torch.ones(4, 5)}).batch_shape, {4})
  T.eq(D.Categorical(torch.ones(5)).batch_shape, {})
  local m = D.MultivariateNormal(torch.zeros(2, 3), {scale_tril = torch.eye(3)})
  T.eq(m.batch_shape, {2})
  T.eq(m.event_shape, {3})
  T.eq(m.covariance_matrix.shape, {2, 3, 3})
  local i = D.Independent(D.Normal(torch.zeros(4, 2, 3), torch.ones(4, 2, 3)), 2)
  T.eq(i.batch_shape, {4})
  T.eq(i.event_shape, {2, 3})
  T.eq(i.has_rsample, true)
  T.eq(D.Independent(D.Bernoulli(torch.full({3}, 0.5)), 1).has_rsample, false)
  T.eq(tostring(i), "Independent(batch_shape={4}, event_shape={2,3})")
  -- the shapes are copies
  local s = i.batch_shape
  s[1] = 7
  T.eq(i.batch_shape, {4})
end)

T.test("sample shapes and dtypes: sample_shape .. batch_shape .. event_shape", function()
  torch.manual_seed(1)
  local cases = {
    {D.Normal(torch.zeros(3), torch.ones(3)), {3}, "float32"},
    {D.Uniform(t64({0.0, 1.0}), t64({1.0, 2.0})), {2}, "float64"},
    {D.Gamma(torch.ones(2, 1), torch.ones(1, 3)), {2, 3}, "float32"},
    {D.Beta(torch.ones(2), torch.ones(2)), {2}, "float32"},
    {D.Bernoulli({logits = torch.zeros(2)}), {2}, "float32"},
    {D.Categorical({logits = torch.zeros(2, 5)}), {2}, "int64"},
    {D.MultivariateNormal(torch.zeros(4), {covariance_matrix = torch.eye(4)}), {4}, "float32"},
    {D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1), {2, 3}, "float32"},
  }
  for _, c in ipairs(cases) do
    local d, shape, dtype = c[1], c[2], c[3]
    local x = d:sample()
    T.eq(x.shape, shape)
    T.eq(x.dtype, dtype)
    local full = {5, 4}
    for _, s in ipairs(shape) do full[#full + 1] = s end
    T.eq(d:sample({5, 4}).shape, full)
    T.eq(d:sample({sample_shape = {5, 4}}).shape, full)
    T.eq(d:sample({0}).shape[1], 0)
    T.eq(d:sample({5, 4}).requires_grad, false)
  end
end)

T.test("sample does not record gradients, rsample does", function()
  local loc = torch.zeros(3, {requires_grad = true})
  local d = D.Normal(loc, 1.0)
  T.eq(d:sample().requires_grad, false)
  local x = d:rsample({2})
  T.eq(x.requires_grad, true)
  x:sum():backward()
  T.eq(loc.grad:tolist(), {2.0, 2.0, 2.0})
  T.error(function() D.Categorical(torch.ones(3)):rsample() end,
          "Categorical:rsample: Categorical has no reparameterised sampler (has_rsample is false); use sample")
  T.error(function() D.Bernoulli(torch.full({3}, 0.5)):rsample() end, "Bernoulli:rsample")
  T.error(function() D.Independent(D.Categorical(torch.ones(2, 3)), 1):rsample() end, "Independent:rsample")
end)

-- Mean and variance of 40000 draws against the distribution's own, within 5 standard errors
-- (seeded: the same draws every run).
local function check_moments(d, mean, var, what)
  torch.manual_seed(7)
  local n = 40000
  local x = d:sample({n}):double()
  local m, v = x:mean(1), x:var(1)
  local se_m = (var / n):sqrt()
  local z = ((m - mean) / se_m):abs():max():item()
  T.truthy(z < 5, what .. ": sample mean " .. T.show(m:tolist()) .. " vs " .. T.show(mean:tolist()))
  local rel = ((v - var) / var):abs():max():item()
  T.truthy(rel < 0.06, what .. ": sample variance " .. T.show(v:tolist()) .. " vs " .. T.show(var:tolist()))
end

T.test("samples have the distribution's moments", function()
  local n = D.Normal(t64({-1.0, 2.0}), t64({0.5, 3.0}))
  check_moments(n, n.mean, n.variance, "Normal")
  local u = D.Uniform(t64({-1.0, 2.0}), t64({0.0, 5.0}))
  check_moments(u, u.mean, u.variance, "Uniform")
  local g = D.Gamma(t64({0.2, 0.9, 1.0, 3.5, 40.0}), t64({1.0, 2.0, 0.5, 1.0, 4.0}))
  check_moments(g, g.mean, g.variance, "Gamma")
  local b = D.Beta(t64({0.3, 2.0, 5.0}), t64({0.7, 2.0, 1.5}))
  check_moments(b, b.mean, b.variance, "Beta")
  local be = D.Bernoulli(t64({0.1, 0.5, 0.9}))
  check_moments(be, be.mean, be.variance, "Bernoulli")
  local cov = t64({{2.0, 0.6}, {0.6, 1.0}})
  local m = D.MultivariateNormal(t64({1.0, -1.0}), {covariance_matrix = cov})
  check_moments(m, m.mean, m.variance, "MultivariateNormal")
  torch.manual_seed(3)
  local x = m:sample({40000})
  local xc = x - x:mean(1)
  T.near((xc:t():matmul(xc) / 40000):tolist()[1][2], 0.6, 0.03, "MultivariateNormal covariance")
  -- Categorical: frequencies of 1..K (1-based categories)
  torch.manual_seed(5)
  local c = D.Categorical({probs = t64({0.1, 0.2, 0.7})})
  local s = c:sample({30000})
  T.eq(s:min():item(), 1)
  T.eq(s:max():item(), 3)
  for k, p in ipairs({0.1, 0.2, 0.7}) do
    local f = s:eq(k):double():mean():item()
    T.truthy(math.abs(f - p) < 5 * math.sqrt(p * (1 - p) / 30000), "Categorical frequency of " .. k .. ": " .. f)
  end
  -- support: Gamma positive, Beta inside [0, 1], Uniform inside [low, high)
  torch.manual_seed(9)
  T.truthy(D.Gamma(t64({0.05}), t64({1.0})):sample({2000}):gt(0):all():item(), "Gamma samples positive")
  local bs = D.Beta(t64({0.05}), t64({0.05})):sample({2000})
  T.truthy(bs:gt(0):logical_and(bs:lt(1)):all():item(), "Beta samples inside (0, 1)")
end)

T.test("Gamma and Beta rsample: the implicit gradient of the standard gamma sample", function()
  torch.manual_seed(11)
  local alpha = t64({0.3, 1.0, 2.5, 12.0}):requires_grad_()
  local rate = t64({2.0, 0.5, 1.0, 3.0}):requires_grad_()
  local x = D.Gamma(alpha, rate):rsample()
  x:sum():backward()
  local std = (x * rate):detach()
  T.near(alpha.grad, D._standard_gamma_grad(alpha:detach(), std) / rate:detach(), 1e-12)
  T.near(rate.grad, -std / rate:detach():pow(2), 1e-12)
  -- The gradient of the mean of many samples is close to the derivative of the mean
  -- (a / r): 1 / r for alpha.
  torch.manual_seed(12)
  local a = t64({0.5, 4.0}):requires_grad_()
  D.Gamma(a, 2.0):rsample({20000}):mean(1):sum():backward()
  T.near(a.grad, {0.5, 0.5}, 0.03)
  -- Beta: d E[x] / d a = b / (a + b)^2
  torch.manual_seed(13)
  local c1 = t64({1.5}):requires_grad_()
  D.Beta(c1, 2.5):rsample({40000}):mean():backward()
  T.near(c1.grad:item(), 2.5 / 16, 0.01)
end)

T.test("validate_args: parameters outside their constraints are errors naming them", function()
  T.error(function() D.Normal(torch.zeros(2), torch.tensor({1.0, -1.0})) end,
          "Normal: expected parameter scale (a tensor of shape {2}) to satisfy the constraint " ..
          "GreaterThan(lower_bound=0.0), but found invalid values: -1")
  T.error(function() D.Normal(0 / 0, 1.0) end, "Normal: expected parameter loc (a tensor of shape {}) to satisfy " ..
          "the constraint Real(), but found invalid values: nan")
  T.error(function() D.Gamma(1.0, 0.0) end, "Gamma: expected parameter rate")
  T.error(function() D.Gamma(-1.0, 1.0) end, "Gamma: expected parameter concentration")
  T.error(function() D.Beta(1.0, -2.0) end, "Beta: expected parameter concentration0 (a tensor of shape {}) to " ..
          "satisfy the constraint GreaterThan(lower_bound=0.0), but found invalid values: -2")
  T.error(function() D.Uniform(t64({0.0, 2.0}), t64({1.0, 1.0})) end,
          "Uniform: low must be less than high (Uniform is not defined when low >= high), but found low values 2")
  T.error(function() D.Bernoulli(1.5) end, "Bernoulli: expected parameter probs (a tensor of shape {}) to satisfy " ..
          "the constraint Interval(lower_bound=0.0, upper_bound=1.0), but found invalid values: 1.5")
  T.error(function() D.Categorical(torch.tensor({1.0, -1.0, 1.0})) end,
          "Categorical: expected parameter probs (a tensor of shape {3}) to satisfy the constraint Simplex()")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.tensor({{1.0, 2.0}, {2.0, 1.0}})}) end,
          "MultivariateNormal: expected parameter covariance_matrix (a tensor of shape {2,2}) to satisfy the " ..
          "constraint PositiveDefinite()")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.tensor({{1.0, 0.5}, {0.0, 1.0}})}) end,
          "PositiveDefinite()")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {scale_tril = torch.tensor({{1.0, 0.5}, {0.0, 1.0}})}) end,
          "MultivariateNormal: expected parameter scale_tril (a tensor of shape {2,2}) to satisfy the constraint " ..
          "LowerCholesky()")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {scale_tril = torch.tensor({{1.0, 0.0}, {0.5, -1.0}})}) end,
          "LowerCholesky()")
  -- validate_args=false: no checks
  T.eq(D.Normal(0.0, -1.0, {validate_args = false}).scale:item(), -1.0)
  T.eq(D.Uniform(1.0, 0.0, {validate_args = false}).low:item(), 1.0)
  T.eq(D.Normal(0.0, 1.0, {validate_args = false}):log_prob(torch.tensor(0 / 0)):isnan():item(), true)
  T.error(function() D.Normal(0.0, 1.0, {validate_args = 1}) end,
          "Normal: validate_args must be true, false or nil, got 1")
  -- the default
  D.Distribution.set_default_validate_args(false)
  local ok = pcall(D.Normal, 0.0, -1.0)
  D.Distribution.set_default_validate_args(true)
  T.eq(ok, true)
  T.error(function() D.Normal(0.0, -1.0) end, "Normal: expected parameter scale")
  T.error(function() D.Distribution.set_default_validate_args("yes") end,
          "Distribution.set_default_validate_args: expected true or false, got \"yes\"")
  T.error(function() D.Distribution.set_default_validate_args(true, 1) end,
          "Distribution.set_default_validate_args: expected 1 argument, got 2")
end)

T.test("log_prob checks its value: tensor, event shape, broadcasting, support", function()
  local n = D.Normal(torch.zeros(2), torch.ones(2))
  T.error(function() n:log_prob(0.5) end, "Normal:log_prob: expected a tensor for value, got 0.5")
  T.error(function() n:log_prob(torch.zeros(3)) end,
          "Normal:log_prob: value of shape {3} does not broadcast with batch_shape + event_shape {2}")
  T.eq(n:log_prob(torch.zeros(4, 1)).shape, {4, 2})
  T.error(function() n:log_prob(torch.tensor({0.0, 0 / 0})) end,
          "Normal:log_prob: expected value (a tensor of shape {2}) to be within the support Real() of the " ..
          "distribution, but found invalid values: nan")
  local m = D.MultivariateNormal(torch.zeros(3), {covariance_matrix = torch.eye(3)})
  T.error(function() m:log_prob(torch.zeros(2)) end,
          "MultivariateNormal:log_prob: the right-most sizes of value must match event_shape: {2} vs {3}")
  T.error(function() D.Gamma(1.0, 1.0):log_prob(torch.tensor(-1.0)) end,
          "Gamma:log_prob: expected value (a tensor of shape {}) to be within the support " ..
          "GreaterThanEq(lower_bound=0.0) of the distribution, but found invalid values: -1")
  T.error(function() D.Beta(1.0, 1.0):log_prob(torch.tensor(1.5)) end, "Beta:log_prob: expected value")
  T.error(function() D.Uniform(0.0, 1.0):log_prob(torch.tensor(2.0)) end,
          "support Interval(lower_bound=low, upper_bound=high)")
  T.error(function() D.Bernoulli(0.5):log_prob(torch.tensor(0.5)) end, "support Boolean()")
  local c = D.Categorical(torch.ones(3))
  T.error(function() c:log_prob(torch.tensor({0})) end,
          "Categorical:log_prob: expected value (a tensor of shape {1}) to be within the support " ..
          "IntegerInterval(lower_bound=1, upper_bound=3) of the distribution, but found invalid values: 0")
  T.error(function() c:log_prob(torch.tensor({1.5})) end, "IntegerInterval(lower_bound=1, upper_bound=3)")
  T.near(c:log_prob(torch.tensor({1, 3})), {math.log(1 / 3), math.log(1 / 3)}, 1e-6)
  T.near(c:log_prob(torch.tensor({2.0})), {math.log(1 / 3)}, 1e-6)
  -- Independent: the base's support, its own event shape
  local i = D.Independent(D.Gamma(torch.ones(2, 3), torch.ones(2, 3)), 1)
  T.error(function() i:log_prob(-torch.ones(2, 3)) end, "Independent:log_prob: expected value")
  T.error(function() i:log_prob(torch.ones(2, 2)) end,
          "Independent:log_prob: the right-most sizes of value must match event_shape: {2,2} vs {3}")
  T.eq(i:log_prob(torch.ones(5, 2, 3)).shape, {5, 2})
end)

T.test("constructor arguments: required, keywords, types, shapes", function()
  T.error(function() D.Normal(0.0) end, "Normal: missing argument 'scale'")
  T.error(function() D.Normal(0.0, 1.0, {sigma = 1}) end,
          "Normal: unknown keyword 'sigma'")
  T.error(function() D.Normal(0.0, 1.0, 2.0) end, "Normal: validate_args must be true, false or nil, got 2.0")
  T.error(function() D.Normal(0.0, 1.0, true, 1) end, "Normal: expected at most 3 positional arguments, got 4")
  T.eq(D.Normal(0.0, -1.0, false).scale:item(), -1.0)
  T.error(function() D.Normal("a", 1.0) end, "Normal: expected a tensor or a number for loc, got \"a\"")
  T.error(function() D.Normal(torch.zeros(2, {dtype = torch.int64}), 1.0) end,
          "Normal: loc must be a floating-point tensor, got dtype int64")
  T.error(function() D.Normal(torch.zeros(2), torch.ones(3)) end,
          "Normal: shapes {2} and {3} cannot be broadcast together")
  T.eq(D.Normal({loc = 1.0, scale = 2.0}).scale:item(), 2.0)
  T.error(function() D.Categorical() end, "Categorical: either probs or logits must be given, but not both (got neither)")
  T.error(function() D.Categorical({probs = torch.ones(2), logits = torch.ones(2)}) end,
          "Categorical: either probs or logits must be given, but not both (got both)")
  T.error(function() D.Categorical(torch.tensor(1.0)) end,
          "Categorical: probs must be at least one-dimensional, got a 0-dim tensor")
  T.error(function() D.Categorical({logits = 1.0}) end, "Categorical: expected a tensor for logits, got 1")
  T.error(function() D.Categorical({logits = torch.ones(3, {dtype = torch.int32})}) end,
          "Categorical: logits must be a floating-point tensor, got dtype int32")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {scale_tril = "L"}) end,
          "MultivariateNormal: expected a tensor for scale_tril, got \"L\"")
  T.error(function() D.Bernoulli({probs = 0.5, logits = 0.0}) end, "Bernoulli: either probs or logits")
  T.error(function() D.Bernoulli({prob = 0.5}) end, "Bernoulli: unknown keyword 'prob' (did you mean 'probs'?")
  T.error(function() D.MultivariateNormal(torch.zeros(2)) end,
          "MultivariateNormal: exactly one of covariance_matrix, precision_matrix or scale_tril must be given, got 0")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.eye(2), scale_tril = torch.eye(2)}) end,
          "got 2")
  T.error(function() D.MultivariateNormal(torch.tensor(0.0), {covariance_matrix = torch.eye(1)}) end,
          "MultivariateNormal: loc must be at least one-dimensional, got a 0-dim tensor")
  T.error(function() D.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.eye(3)}) end,
          "MultivariateNormal: covariance_matrix must have shape (..., 2, 2) for a loc of shape {2}, got {3,3}")
  T.error(function() D.MultivariateNormal(torch.zeros(3, 2), {covariance_matrix = torch.eye(2):expand({4, 2, 2})}) end,
          "MultivariateNormal: shapes {4} and {3} cannot be broadcast together")
  T.error(function() D.Independent(torch.zeros(2), 1) end,
          "Independent: expected a distribution for base_distribution, got a tensor of shape {2}")
  T.error(function() D.Independent(D.Normal(torch.zeros(2), 1.0), 2) end,
          "Independent: expected reinterpreted_batch_ndims <= the number of dims of the base's batch_shape {2}, got 2")
  T.error(function() D.Independent(D.Normal(torch.zeros(2), 1.0), -1) end,
          "Independent: reinterpreted_batch_ndims must be an integer >= 0, got -1")
  T.error(function() D.Independent(D.Normal(torch.zeros(2), 1.0)) end,
          "Independent: missing argument 'reinterpreted_batch_ndims'")
end)

T.test("method arguments: sample_shape, extra arguments", function()
  local n = D.Normal(0.0, 1.0)
  T.error(function() n:sample(3) end, "Normal:sample: sample_shape must be a table of sizes, got 3")
  T.error(function() n:sample({-1}) end, "Normal:sample: sample_shape[1] must be an integer >= 0, got -1")
  T.error(function() n:sample({2.5}) end, "Normal:sample: sample_shape[1] must be an integer >= 0, got 2.5")
  T.error(function() n:rsample({shape = {2}}) end, "Normal:rsample: unknown keyword 'shape'")
  T.error(function() n:sample({2}, 1) end, "Distribution:sample: unexpected argument 2 (the number 1)")
  T.error(function() n:entropy(1) end, "Distribution:entropy: unexpected argument 1 (the number 1)")
  T.error(function() n:log_prob(torch.zeros(1), 1) end, "Distribution:log_prob: unexpected argument 2")
  T.error(function() D.kl_divergence(n, n, n) end, "distributions.kl_divergence: unexpected argument 3")
  T.error(function() D.Normal.log_prob(5, torch.zeros(1)) end,
          "Distribution:log_prob: expected an object as self, got the number 5")
  T.error(function() D.Normal.log_prob({}, torch.zeros(1)) end,
          "Distribution:log_prob: expected a distribution as self, got table")
end)

T.test("kl_divergence: registered pairs, Independent's dims, errors naming both types", function()
  local n = D.Normal(t64({0.0, 1.0}), t64({1.0, 2.0}))
  T.near(D.kl_divergence(n, n), {0, 0}, 1e-15)
  T.eq(D.kl.kl_divergence, D.kl_divergence)
  T.eq(D.kl_divergence(n, D.Uniform(-1.0, 1.0)):tolist(), {math.huge, math.huge})
  T.error(function() D.kl_divergence(n, D.Categorical(torch.ones(2))) end,
          "kl_divergence: no KL(p || q) is implemented for p type Normal and q type Categorical")
  T.error(function() D.kl_divergence(D.Bernoulli(0.5), D.Gamma(1.0, 1.0)) end,
          "no KL(p || q) is implemented for p type Bernoulli and q type Gamma")
  T.error(function() D.kl_divergence(n, 1) end, "kl_divergence: expected a distribution for q, got 1")
  local i1 = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 1)
  local i2 = D.Independent(D.Normal(torch.zeros(2, 3), torch.ones(2, 3)), 2)
  T.eq(D.kl_divergence(i1, i1).shape, {2})
  T.error(function() D.kl_divergence(i1, i2) end,
          "kl_divergence: Independent distributions with different reinterpreted_batch_ndims (1 and 2)")
  T.error(function() D.kl_divergence(i1, n) end, "p type Independent and q type Normal")
  local m2 = D.MultivariateNormal(torch.zeros(2), {covariance_matrix = torch.eye(2)})
  local m3 = D.MultivariateNormal(torch.zeros(3), {covariance_matrix = torch.eye(3)})
  T.error(function() D.kl_divergence(m2, m3) end,
          "kl_divergence: MultivariateNormal distributions of different event shapes {2} and {3}")
end)

T.test("Categorical and Bernoulli keep their parameters: probs normalised, logits by logsumexp", function()
  local c = D.Categorical({probs = t64({1.0, 3.0})})
  T.near(c.probs, {0.25, 0.75}, 1e-15)
  T.near(c.logits, {math.log(0.25), math.log(0.75)}, 1e-15)
  T.eq(c.param_shape, {2})
  local l = D.Categorical({logits = t64({0.0, math.log(3)})})
  T.near(l.probs, {0.25, 0.75}, 1e-15)
  T.eq(c.mean:isnan():item(), true)
  local b = D.Bernoulli({logits = t64({0.0})})
  T.near(b.probs, {0.5}, 1e-15)
  T.near(b:log_prob(t64({1.0})), {math.log(0.5)}, 1e-15)
end)

T.done()
