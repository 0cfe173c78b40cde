-- torch.distributions: Normal, Categorical, Bernoulli, Uniform, Beta, Gamma,
-- MultivariateNormal and Independent with PyTorch 1.13's parameters, formulas and argument
-- checks (validate_args), and kl_divergence for the pairs PyTorch registers among them.
-- Written on the engine's differentiable ops, so log_prob, entropy, the moments and the
-- divergences have gradients; rsample is reparameterised (loc + eps * scale, the implicit
-- gradient of the standard gamma sample for Gamma and Beta). Dims and category indices are
-- 1-based as everywhere in tide: a Categorical's samples and log_prob values are 1..K.
-- Loaded before torch_strict.lua, which wraps the classes' fixed-arity methods.
local torch = ...
local util = torch.nn._util
local fail, describe, shape_str = util.fail, util.describe, util.shape_str

local distributions = {}
torch.distributions = distributions
local kl = {}
distributions.kl = kl

local default_validate_args = true

---------------------------------------------------------------------------------------------
-- Shapes and parameters.

local function copy(t)
  local out = {}
  for i, v in ipairs(t) do out[i] = v end
  return out
end

local function concat(...)
  local out = {}
  for _, t in ipairs({...}) do
    for _, v in ipairs(t) do out[#out + 1] = v end
  end
  return out
end

local function slice(t, first, last)
  local out = {}
  for i = first, last or #t do out[#out + 1] = t[i] end
  return out
end

-- The shape that shapes broadcast to, or an error naming them.
local function broadcast_shape(op, shapes)
  local n = 0
  for _, s in ipairs(shapes) do n = math.max(n, #s) end
  local out = {}
  for i = 1, n do
    local size = 1
    for _, s in ipairs(shapes) do
      local d = s[#s - n + i] or 1
      if d ~= 1 then
        if size ~= 1 and size ~= d then
          local strs = {}
          for k, sh in ipairs(shapes) do strs[k] = shape_str(sh) end
          fail(op, "shapes %s cannot be broadcast together", table.concat(strs, " and "))
        end
        size = d
      end
    end
    out[i] = size
  end
  return out
end

local function float_tensor(op, name, v)
  util.check_tensor(op, name, v)
  if not v:is_floating_point() then fail(op, "%s must be a floating-point tensor, got dtype %s", name, v.dtype) end
  return v
end

-- A parameter as a floating-point tensor (a Lua number: a 0-dim tensor of `dtype`).
local function as_param(op, name, v, dtype)
  if torch.is_tensor(v) then return float_tensor(op, name, v) end
  if math.type(v) then return torch.tensor(v + 0.0, {dtype = dtype or torch.get_default_dtype()}) end
  fail(op, "expected a tensor or a number for %s, got %s", name, describe(v))
end

-- PyTorch's broadcast_all: numbers become tensors of the first tensor's dtype, and all are
-- expanded to their common shape. Returns the tensors and whether every value was a number.
local function broadcast_all(op, names, values)
  local dtype
  for _, v in ipairs(values) do
    if torch.is_tensor(v) and v:is_floating_point() then dtype = v.dtype break end
  end
  local ts, shapes, all_numbers = {}, {}, true
  for i, name in ipairs(names) do
    ts[i] = as_param(op, name, values[i], dtype)
    shapes[i] = ts[i].shape
    all_numbers = all_numbers and not torch.is_tensor(values[i])
  end
  local shape = broadcast_shape(op, shapes)
  for i, t in ipairs(ts) do ts[i] = t:expand(shape) end
  return ts, all_numbers
end

-- sample_shape: nil, a list of sizes >= 0, or {sample_shape = list}.
local function sample_shape_arg(op, s)
  if s == nil then return {} end
  if type(s) ~= "table" or getmetatable(s) ~= nil then
    fail(op, "sample_shape must be a table of sizes, got %s", describe(s))
  end
  if s[1] == nil and next(s) ~= nil then
    torch._check_keywords(op, s, {"sample_shape"})
    return sample_shape_arg(op, s.sample_shape)
  end
  local out = {}
  for k, v in pairs(s) do
    if math.type(k) ~= "integer" or k < 1 or k > #s then
      fail(op, "sample_shape must be a list of sizes, got the key %s", describe(k))
    end
    out[k] = util.check_int(op, "sample_shape[" .. k .. "]", v, 0)
  end
  return out
end

local function sum_rightmost(x, n)
  for _ = 1, n do x = x:sum(-1) end
  return x
end

local function finfo(t) return torch.finfo(t.dtype) end

-- Options making a new tensor of t's dtype on t's device.
local function like(t) return {dtype = t.dtype, device = t.device} end

-- Gathers up to three offending values of x (where ok is false) for an error message; ok
-- may have fewer dims (one value per vector or matrix: all its elements are shown).
local function invalid_values(x, ok)
  while ok:dim() < x:dim() do ok = ok:unsqueeze(-1) end
  local bad = x:masked_select(ok:logical_not():expand(x.shape)):reshape(-1)
  local shown = {}
  for i = 1, math.min(bad:numel(), 3) do
    local v = bad[i]:item()
    shown[i] = v ~= v and "nan" or string.format("%.17g", v)
  end
  if bad:numel() > 3 then shown[#shown + 1] = "..." end
  return table.concat(shown, ", ")
end

---------------------------------------------------------------------------------------------
-- Constraints (PyTorch's names in messages); check(x) gives a bool tensor, true where valid
-- (one per batch element for the constraints on whole vectors and matrices).

local function all_last(b, n)
  for _ = 1, n do b = b:all(-1) end
  return b
end

local constraints = {
  real = {"Real()", function(x) return x:eq(x) end},
  positive = {"GreaterThan(lower_bound=0.0)", function(x) return x:gt(0) end},
  nonnegative = {"GreaterThanEq(lower_bound=0.0)", function(x) return x:ge(0) end},
  unit_interval = {"Interval(lower_bound=0.0, upper_bound=1.0)",
                   function(x) return x:ge(0):logical_and(x:le(1)) end},
  boolean = {"Boolean()", function(x) return x:eq(0):logical_or(x:eq(1)) end},
  real_vector = {"IndependentConstraint(Real(), 1)", function(x) return all_last(x:eq(x), 1) end},
  simplex = {"Simplex()", function(x)
    return all_last(x:ge(0), 1):logical_and((x:sum(-1) - 1):abs():lt(1e-6))
  end},
  lower_cholesky = {"LowerCholesky()", function(x)
    return all_last(torch.tril(x):eq(x), 2):logical_and(all_last(torch.diagonal(x, 0, -2, -1):gt(0), 1))
  end},
  positive_definite = {"PositiveDefinite()", function(x)
    local symmetric = all_last((x - x:transpose(-2, -1)):abs():le(1e-6), 2)
    if not symmetric:all():item() then return symmetric end
    local factored = pcall(torch.linalg.cholesky, x)
    return factored and symmetric or symmetric:logical_not()
  end},
}

local function check_param(op, name, x, constraint)
  local c = constraints[constraint]
  local ok = c[2](x)
  if not ok:all():item() then
    fail(op, "expected parameter %s (a tensor of shape %s) to satisfy the constraint %s, but found invalid values: %s",
         name, shape_str(x.shape), c[1], invalid_values(x, ok))
  end
end

local function validate_flag(op, v)
  if v == nil then return default_validate_args end
  if type(v) ~= "boolean" then fail(op, "validate_args must be true, false or nil, got %s", describe(v)) end
  return v
end

---------------------------------------------------------------------------------------------
-- The classes. An instance's fields are its parameters; its properties (mean, stddev,
-- variance, batch_shape, event_shape and lazily computed parameters such as a Categorical's
-- probs) are getters in the class's _props, and the methods each family defines for the
-- public ones (_rsample, _log_prob, _entropy, the support check) are in its _m; the instance
-- metatable's __index finds both (each table inherits from the parent class's).

local Distribution = {_name = "Distribution", _props = {}, _m = {}, has_rsample = false}
Distribution.__index = function(self, k)
  local cls = getmetatable(self)
  local get = cls._props[k]
  if get then return get(self) end
  local private = cls._m[k]
  if private then return private end
  return cls[k]
end
Distribution.__tostring = function(self)
  return string.format("%s(batch_shape=%s, event_shape=%s)", getmetatable(self)._name,
                       shape_str(self._batch_shape), shape_str(self._event_shape))
end
distributions.Distribution = Distribution

-- A subclass of parent with class name `name`; Class(...) calls Class._new(...).
local function class(name, parent)
  local cls = {_name = name, _props = setmetatable({}, {__index = parent._props}),
               _m = setmetatable({}, {__index = parent._m})}
  cls.__index, cls.__tostring = parent.__index, parent.__tostring
  return setmetatable(cls, {__index = parent, __call = function(_, ...) return cls._new(...) end})
end

-- (a static function: it checks its own arity, torch_strict.lua wraps class functions as methods)
function Distribution.set_default_validate_args(...)
  local op = "Distribution.set_default_validate_args"
  if select("#", ...) ~= 1 then fail(op, "expected 1 argument, got %d", select("#", ...)) end
  local value = ...
  if type(value) ~= "boolean" then fail(op, "expected true or false, got %s", describe(value)) end
  default_validate_args = value
end

-- The fields every distribution has.
local function init(cls, self, batch_shape, event_shape, validate)
  self._batch_shape, self._event_shape, self._validate_args = batch_shape, event_shape, validate
  return setmetatable(self, cls)
end

local function instance_of(op, self)
  if type(self) ~= "table" or type(getmetatable(self)) ~= "table" or rawget(self, "_batch_shape") == nil then
    fail(op, "expected a distribution as self, got %s", describe(self))
  end
  return self
end

local function name_of(self) return getmetatable(self)._name end

function Distribution._props.batch_shape(self) return copy(self._batch_shape) end
function Distribution._props.event_shape(self) return copy(self._event_shape) end
function Distribution._props.stddev(self) return self.variance:sqrt() end

function Distribution._m._extended_shape(self, sample_shape)
  return concat(sample_shape, self._batch_shape, self._event_shape)
end

-- Checks a value given to log_prob: a tensor whose right-most dims match event_shape and
-- that broadcasts with batch_shape + event_shape, inside the support (when validating).
function Distribution._m._validate_sample(self, op, value)
  if not torch.is_tensor(value) then fail(op, "expected a tensor for value, got %s", describe(value)) end
  local vs, es = value.shape, self._event_shape
  local tail = slice(vs, #vs - #es + 1)
  if #vs < #es or not util.same_shape(tail, es) then
    fail(op, "the right-most sizes of value must match event_shape: %s vs %s", shape_str(vs), shape_str(es))
  end
  local full = concat(self._batch_shape, es)
  if not pcall(broadcast_shape, op, {vs, full}) then
    fail(op, "value of shape %s does not broadcast with batch_shape + event_shape %s", shape_str(vs), shape_str(full))
  end
  if self._validate_args then self:_check_support(op, value) end
end

function Distribution._m._check_support(self, op, value)
  local c = constraints[self:_support_name()]
  local ok = self:_support_check(value, c)
  if not ok:all():item() then
    fail(op, "expected value (a tensor of shape %s) to be within the support %s of the distribution, " ..
         "but found invalid values: %s", shape_str(value.shape), self:_support_label(c), invalid_values(value, ok))
  end
end

function Distribution._m._support_check(self, value, c) return c[2](value) end
function Distribution._m._support_label(self, c) return c[1] end

function Distribution:sample(sample_shape)
  local op = name_of(instance_of("Distribution:sample", self)) .. ":sample"
  local shape = sample_shape_arg(op, sample_shape)
  return torch.no_grad(function() return self:_rsample(shape) end)
end

function Distribution:rsample(sample_shape)
  local op = name_of(instance_of("Distribution:rsample", self)) .. ":rsample"
  local shape = sample_shape_arg(op, sample_shape)
  if not self.has_rsample then
    fail(op, "%s has no reparameterised sampler (has_rsample is false); use sample", name_of(self))
  end
  return self:_rsample(shape)
end

function Distribution:log_prob(value)
  local op = name_of(instance_of("Distribution:log_prob", self)) .. ":log_prob"
  self:_validate_sample(op, value)
  return self:_log_prob(value)
end

function Distribution:entropy()
  instance_of("Distribution:entropy", self)
  return self:_entropy()
end

-- Reads a constructor's arguments, the last of them validate_args.
local function ctor_args(op, names, nrequired, ...)
  local all = concat(names, {"validate_args"})
  local o = util.args(op, all, nrequired, {}, ...)
  o.validate_args = validate_flag(op, o.validate_args)
  return o
end

---------------------------------------------------------------------------------------------
-- The standard gamma sample and its reparameterisation gradient.

-- Marsaglia and Tsang's sampler on tide's generator, elementwise for alpha (a tensor):
-- for alpha >= 1, d = alpha - 1/3, x = d (1 + z / sqrt(9 d))^3 accepted when
-- log u < z^2 / 2 + d - d v + d log v; alpha < 1 boosts alpha + 1 by u^(1 / alpha).
local function sample_standard_gamma(alpha)
  return torch.no_grad(function()
    local boost = alpha:lt(1)
    local a = torch.where(boost, alpha + 1, alpha)
    local d = a - 1 / 3
    local c = (d * 9):rsqrt()
    -- (NaN, infinite and non-positive alphas, possible without validate_args, give NaN)
    local todo = alpha:gt(0):logical_and(alpha:isfinite())
    local out = torch.full_like(alpha, 0 / 0)
    while todo:any():item() do
      local z = torch.randn(alpha.shape, like(alpha))
      local u = torch.rand(alpha.shape, like(alpha))
      local v = (c * z + 1):pow(3)
      local accept = v:gt(0):logical_and(u:log():lt(z * z * 0.5 + d - d * v + d * v:clamp({min = 1e-300}):log()))
      accept = accept:logical_and(todo)
      out = torch.where(accept, d * v, out)
      todo = todo:logical_and(accept:logical_not())
    end
    local u = torch.rand(alpha.shape, like(alpha))
    out = torch.where(boost, out * u:pow(alpha:reciprocal()), out)
    return out:clamp({min = finfo(out).tiny})
  end)
end

-- d x / d alpha of a standard gamma sample x at alpha, with x's CDF held fixed (implicit
-- reparameterisation): PyTorch's _standard_gamma_grad, its three regimes (a series for
-- x < 0.8, Rice's saddle point expansion for alpha > 8, a rational approximation between)
-- computed on whole tensors and picked elementwise.
local COEF_UV = {
  {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
  {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
  {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
   -1.5247877e-07},
}
local F32 = {p8 = 0.800000011920928955078125, p9 = 0.89999997615814208984375, one1 = 1.10000002384185791015625}

local function standard_gamma_grad(alpha, x)
  return torch.no_grad(function()
    -- Taylor series of the CDF for small x.
    local numer, denom = torch.ones_like(x), alpha
    local series1, series2 = numer / denom, numer / (denom * denom)
    for i = 1, 5 do
      numer = numer * (-x / i)
      denom = denom + 1
      series1 = series1 + numer / denom
      series2 = series2 + numer / (denom * denom)
    end
    local pow_x_alpha = x:pow(alpha)
    local gamma_pdf = x:pow(alpha - 1) * (-x):exp()
    local gamma_cdf = pow_x_alpha * series1
    local gamma_cdf_alpha = (x:log() - torch.digamma(alpha)) * gamma_cdf - pow_x_alpha * series2
    local small = -gamma_cdf_alpha / gamma_pdf
    small = torch.where(small:isnan(), 0.0, small)
    -- Rice saddle point expansion for large alpha: near the mode and away from it.
    local near = (alpha * 24 * (alpha * 12 + 1) + 1) *
                 (alpha * alpha * 1440 + x * 6 * (x * -120 + 53) - x * x * 65 / alpha + alpha * (x * 3600 + 107)) /
                 (alpha * alpha * alpha * alpha * 1244160)
    local sq = (alpha * 8):sqrt()
    local term2 = sq / (alpha - x)
    local term3 = (x - alpha - alpha * (x / alpha):log()):pow(-1.5)
    local term23 = torch.where(x:lt(alpha), term2 - term3, term2 + term3)
    local term1 = (x / alpha):log() * term23 -
                  (alpha:reciprocal() * 2):sqrt() * (alpha + x) / ((alpha - x) * (alpha - x))
    local stirling = (alpha * 12):reciprocal() * ((alpha * 24):reciprocal() + 1) + 1
    local far = -stirling * x * term1 / sq
    local large = torch.where(x:ge(alpha * F32.p9):logical_and(x:le(alpha * F32.one1)), near, far)
    -- Bivariate rational approximation in u = log(x / alpha), v = log(alpha).
    local u, v = (x / alpha):log(), alpha:log()
    local cv = {}
    for i = 1, 8 do cv[i] = (u * COEF_UV[3][i] + COEF_UV[2][i]) * u + COEF_UV[1][i] end
    local p = cv[1] + v * (cv[2] + v * (cv[3] + v * cv[4]))
    local q = cv[5] + v * (cv[6] + v * (cv[7] + v * cv[8]))
    local mid = (p / q):exp()
    return torch.where(x:lt(F32.p8), small, torch.where(alpha:gt(8), large, mid))
  end)
end
distributions._standard_gamma_grad = standard_gamma_grad

-- A standard gamma sample of alpha whose gradient with respect to alpha is the implicit one.
local StandardGamma = torch.autograd.Function:extend("_StandardGamma")
function StandardGamma.forward(ctx, alpha)
  local x = sample_standard_gamma(alpha)
  ctx:save_for_backward(alpha, x)
  return x
end
function StandardGamma.backward(ctx, grad)
  local alpha, x = table.unpack(ctx.saved_tensors)
  return grad * standard_gamma_grad(alpha, x)
end

local function rsample_standard_gamma(alpha) return StandardGamma.apply(alpha:contiguous()) end

---------------------------------------------------------------------------------------------
-- Normal(loc, scale)

local Normal = class("Normal", Distribution)
Normal.has_rsample = true
distributions.Normal = Normal

function Normal._new(...)
  local o = ctor_args("Normal", {"loc", "scale"}, 2, ...)
  local t, numbers = broadcast_all("Normal", {"loc", "scale"}, {o.loc, o.scale})
  local self = {loc = t[1], scale = t[2]}
  if o.validate_args then
    check_param("Normal", "loc", self.loc, "real")
    check_param("Normal", "scale", self.scale, "positive")
  end
  return init(Normal, self, numbers and {} or self.loc.shape, {}, o.validate_args)
end

function Normal._props.mean(self) return self.loc end
function Normal._props.stddev(self) return self.scale end
function Normal._props.variance(self) return self.scale:pow(2) end
function Normal._m._support_name(self) return "real" end

function Normal._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local eps = torch.randn(ext, like(self.loc))
  return self.loc:expand(ext) + eps * self.scale:expand(ext)
end

function Normal._m._log_prob(self, value)
  local var = self.scale:pow(2)
  return -((value - self.loc):pow(2)) / (var * 2) - self.scale:log() - math.log(math.sqrt(2 * math.pi))
end

function Normal._m._entropy(self)
  return self.scale:log() + (0.5 + 0.5 * math.log(2 * math.pi))
end

---------------------------------------------------------------------------------------------
-- Uniform(low, high): the interval [low, high).

local Uniform = class("Uniform", Distribution)
Uniform.has_rsample = true
distributions.Uniform = Uniform

function Uniform._new(...)
  local o = ctor_args("Uniform", {"low", "high"}, 2, ...)
  local t, numbers = broadcast_all("Uniform", {"low", "high"}, {o.low, o.high})
  local self = {low = t[1], high = t[2]}
  if o.validate_args then
    local ok = self.low:lt(self.high)
    if not ok:all():item() then
      fail("Uniform", "low must be less than high (Uniform is not defined when low >= high), " ..
           "but found low values %s", invalid_values(self.low, ok))
    end
  end
  return init(Uniform, self, numbers and {} or self.low.shape, {}, o.validate_args)
end

function Uniform._props.mean(self) return (self.high + self.low) / 2 end
function Uniform._props.stddev(self) return (self.high - self.low) / math.sqrt(12) end
function Uniform._props.variance(self) return (self.high - self.low):pow(2) / 12 end
function Uniform._m._support_name(self) return "real" end
function Uniform._m._support_check(self, value)
  return value:ge(self.low):logical_and(value:le(self.high))
end
function Uniform._m._support_label(self) return "Interval(lower_bound=low, upper_bound=high)" end

function Uniform._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local r = torch.rand(ext, like(self.low))
  return self.low:expand(ext) + r * (self.high - self.low):expand(ext)
end

function Uniform._m._log_prob(self, value)
  local lb = self.low:le(value):to(self.low.dtype)
  local ub = self.high:gt(value):to(self.low.dtype)
  return (lb * ub):log() - (self.high - self.low):log()
end

function Uniform._m._entropy(self) return (self.high - self.low):log() end

---------------------------------------------------------------------------------------------
-- Gamma(concentration, rate)

local Gamma = class("Gamma", Distribution)
Gamma.has_rsample = true
distributions.Gamma = Gamma

function Gamma._new(...)
  local o = ctor_args("Gamma", {"concentration", "rate"}, 2, ...)
  local t, numbers = broadcast_all("Gamma", {"concentration", "rate"}, {o.concentration, o.rate})
  local self = {concentration = t[1], rate = t[2]}
  if o.validate_args then
    check_param("Gamma", "concentration", self.concentration, "positive")
    check_param("Gamma", "rate", self.rate, "positive")
  end
  return init(Gamma, self, numbers and {} or self.concentration.shape, {}, o.validate_args)
end

function Gamma._props.mean(self) return self.concentration / self.rate end
function Gamma._props.variance(self) return self.concentration / self.rate:pow(2) end
function Gamma._m._support_name(self) return "nonnegative" end

function Gamma._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local value = rsample_standard_gamma(self.concentration:expand(ext)) / self.rate:expand(ext)
  return value:clamp({min = finfo(value).tiny})
end

function Gamma._m._log_prob(self, value)
  local c, r = self.concentration, self.rate
  return torch.xlogy(c, r) + torch.xlogy(c - 1, value) - r * value - torch.lgamma(c)
end

function Gamma._m._entropy(self)
  local c = self.concentration
  return c - self.rate:log() + torch.lgamma(c) + (1.0 - c) * torch.digamma(c)
end

---------------------------------------------------------------------------------------------
-- Beta(concentration1, concentration0): log_prob and entropy as PyTorch's (a two-category
-- Dirichlet); rsample is G1 / (G1 + G0) for standard gamma samples of the two concentrations,
-- each with its implicit gradient (PyTorch uses its Dirichlet's own gradient formula, so a
-- sample's gradient differs while the expectation is the same).

local Beta = class("Beta", Distribution)
Beta.has_rsample = true
distributions.Beta = Beta

function Beta._new(...)
  local o = ctor_args("Beta", {"concentration1", "concentration0"}, 2, ...)
  local t, numbers = broadcast_all("Beta", {"concentration1", "concentration0"}, {o.concentration1, o.concentration0})
  local self = {concentration1 = t[1], concentration0 = t[2]}
  if o.validate_args then
    check_param("Beta", "concentration1", self.concentration1, "positive")
    check_param("Beta", "concentration0", self.concentration0, "positive")
  end
  return init(Beta, self, numbers and {} or self.concentration1.shape, {}, o.validate_args)
end

function Beta._props.mean(self) return self.concentration1 / (self.concentration1 + self.concentration0) end
function Beta._props.variance(self)
  local a, b = self.concentration1, self.concentration0
  local total = a + b
  return a * b / (total:pow(2) * (total + 1))
end
function Beta._m._support_name(self) return "unit_interval" end

function Beta._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local g1 = rsample_standard_gamma(self.concentration1:expand(ext))
  local g0 = rsample_standard_gamma(self.concentration0:expand(ext))
  local x = g1 / (g1 + g0)
  local eps = finfo(x).eps
  return x:clamp({min = finfo(x).tiny, max = 1 - eps})
end

function Beta._m._log_prob(self, value)
  local a, b = self.concentration1, self.concentration0
  return torch.xlogy(a - 1, value) + torch.xlogy(b - 1, 1 - value) + torch.lgamma(a + b) - torch.lgamma(a) -
         torch.lgamma(b)
end

function Beta._m._entropy(self)
  local a, b = self.concentration1, self.concentration0
  local a0 = a + b
  return torch.lgamma(a) + torch.lgamma(b) - torch.lgamma(a0) - (2 - a0) * torch.digamma(a0) -
         ((a - 1) * torch.digamma(a) + (b - 1) * torch.digamma(b))
end

---------------------------------------------------------------------------------------------
-- probs <-> logits as PyTorch's distributions.utils.

local function clamp_probs(p)
  local eps = finfo(p).eps
  return p:clamp({min = eps, max = 1 - eps})
end

local function probs_to_logits(p, binary)
  local c = clamp_probs(p)
  if binary then return c:log() - (-c):log1p() end
  return c:log()
end

local function logits_to_probs(l, binary)
  if binary then return l:sigmoid() end
  return l:softmax(-1)
end

-- The probs= / logits= pair of Categorical and Bernoulli: exactly one of them.
local function probs_or_logits(op, o)
  if (o.probs == nil) == (o.logits == nil) then
    fail(op, "either probs or logits must be given, but not both (got %s)",
         o.probs == nil and "neither" or "both")
  end
end

---------------------------------------------------------------------------------------------
-- Categorical(probs | logits): categories 1..K along the last dim.

local Categorical = class("Categorical", Distribution)
distributions.Categorical = Categorical

function Categorical._new(...)
  local op = "Categorical"
  local o = ctor_args(op, {"probs", "logits"}, 0, ...)
  probs_or_logits(op, o)
  local self = {}
  local name = o.probs ~= nil and "probs" or "logits"
  local param = float_tensor(op, name, o[name])
  if param:dim() < 1 then fail(op, "%s must be at least one-dimensional, got a 0-dim tensor", name) end
  if name == "probs" then
    self.probs = param / param:sum(-1, true)
  else
    self.logits = param - param:logsumexp(-1, true)
  end
  self._param = self[name]
  -- (checked once normalised, as PyTorch does: probs need not sum to 1)
  if o.validate_args then check_param(op, name, self._param, name == "probs" and "simplex" or "real_vector") end
  self._num_events = param.shape[param:dim()]
  return init(Categorical, self, slice(param.shape, 1, param:dim() - 1), {}, o.validate_args)
end

function Categorical._props.probs(self)
  local p = logits_to_probs(self.logits)
  rawset(self, "probs", p)
  return p
end
function Categorical._props.logits(self)
  local l = probs_to_logits(self.probs)
  rawset(self, "logits", l)
  return l
end
function Categorical._props.param_shape(self) return self._param.shape end
local function nan_full(self)
  return torch.full(self._batch_shape, 0 / 0, like(self._param))
end
Categorical._props.mean = nan_full
Categorical._props.variance = nan_full
function Categorical._m._support_name(self) return "real" end
function Categorical._m._support_check(self, value)
  local ok = value:ge(1):logical_and(value:le(self._num_events))
  if value:is_floating_point() then ok = ok:logical_and(value:eq(value:floor())) end
  return ok
end
function Categorical._m._support_label(self)
  return string.format("IntegerInterval(lower_bound=1, upper_bound=%d)", self._num_events)
end

function Categorical._m._rsample(self, shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local ext = self:_extended_shape(shape)
  if n == 0 or self._param:numel() == 0 then
    return torch.zeros(ext, {dtype = torch.int64, device = self._param.device})
  end
  local probs_2d = self.probs:reshape({-1, self._num_events})
  return torch.multinomial(probs_2d, n, true):t():reshape(ext)
end

function Categorical._m._log_prob(self, value)
  local idx = value:to(torch.int64):unsqueeze(-1)
  local logits = self.logits
  local shape = broadcast_shape("Categorical:log_prob", {idx.shape, logits.shape})
  local bshape = copy(shape)
  bshape[#bshape] = 1
  shape[#shape] = self._num_events
  return logits:expand(shape):gather(-1, idx:expand(bshape)):squeeze(-1)
end

function Categorical._m._entropy(self)
  local logits = self.logits:clamp({min = finfo(self.logits).min})
  return -(logits * self.probs):sum(-1)
end

---------------------------------------------------------------------------------------------
-- Bernoulli(probs | logits): values 0 and 1.

local Bernoulli = class("Bernoulli", Distribution)
distributions.Bernoulli = Bernoulli

function Bernoulli._new(...)
  local op = "Bernoulli"
  local o = ctor_args(op, {"probs", "logits"}, 0, ...)
  probs_or_logits(op, o)
  local name = o.probs ~= nil and "probs" or "logits"
  local t, numbers = broadcast_all(op, {name}, {o[name]})
  local self = {[name] = t[1]}
  self._param = t[1]
  if o.validate_args then check_param(op, name, t[1], name == "probs" and "unit_interval" or "real") end
  return init(Bernoulli, self, numbers and {} or t[1].shape, {}, o.validate_args)
end

function Bernoulli._props.probs(self)
  local p = logits_to_probs(self.logits, true)
  rawset(self, "probs", p)
  return p
end
function Bernoulli._props.logits(self)
  local l = probs_to_logits(self.probs, true)
  rawset(self, "logits", l)
  return l
end
function Bernoulli._props.param_shape(self) return self._param.shape end
function Bernoulli._props.mean(self) return self.probs end
function Bernoulli._props.variance(self) return self.probs * (1 - self.probs) end
function Bernoulli._m._support_name(self) return "boolean" end

function Bernoulli._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local p = self.probs:expand(ext)
  return torch.rand(ext, like(p)):lt(p):to(p.dtype)
end

-- binary_cross_entropy_with_logits(l, t) without reduction, as PyTorch computes it.
local function bce_with_logits(l, t)
  return l:clamp({min = 0}) - l * t + (-l:abs()):exp():log1p()
end

function Bernoulli._m._log_prob(self, value)
  return -bce_with_logits(self.logits, value)
end

function Bernoulli._m._entropy(self) return bce_with_logits(self.logits, self.probs) end

---------------------------------------------------------------------------------------------
-- MultivariateNormal(loc, covariance_matrix= | precision_matrix= | scale_tril=)

local MultivariateNormal = class("MultivariateNormal", Distribution)
MultivariateNormal.has_rsample = true
distributions.MultivariateNormal = MultivariateNormal

-- L^-1 x for lower-triangular L (..., n, n) and x (..., n), broadcasting their batch dims.
local function tril_solve(op, L, x)
  local batch = broadcast_shape(op, {slice(L.shape, 1, L:dim() - 2), slice(x.shape, 1, x:dim() - 1)})
  local n = x.shape[x:dim()]
  return torch.linalg.solve(L:expand(concat(batch, {n, n})), x:expand(concat(batch, {n})):unsqueeze(-1)):squeeze(-1)
end

local function mahalanobis(op, L, x) return tril_solve(op, L, x):pow(2):sum(-1) end

local function half_log_det(L) return torch.diagonal(L, 0, -2, -1):log():sum(-1) end

function MultivariateNormal._new(...)
  local op = "MultivariateNormal"
  local o = ctor_args(op, {"loc", "covariance_matrix", "precision_matrix", "scale_tril"}, 1, ...)
  local loc = as_param(op, "loc", o.loc)
  if loc:dim() < 1 then fail(op, "loc must be at least one-dimensional, got a 0-dim tensor") end
  local given, name = 0, nil
  for _, k in ipairs({"covariance_matrix", "precision_matrix", "scale_tril"}) do
    if o[k] ~= nil then given, name = given + 1, k end
  end
  if given ~= 1 then
    fail(op, "exactly one of covariance_matrix, precision_matrix or scale_tril must be given, got %d", given)
  end
  local m = float_tensor(op, name, o[name])
  local n = loc.shape[loc:dim()]
  if m:dim() < 2 or m.shape[m:dim()] ~= n or m.shape[m:dim() - 1] ~= n then
    fail(op, "%s must have shape (..., %d, %d) for a loc of shape %s, got %s", name, n, n, shape_str(loc.shape),
         shape_str(m.shape))
  end
  local batch = broadcast_shape(op, {slice(m.shape, 1, m:dim() - 2), slice(loc.shape, 1, loc:dim() - 1)})
  local self = {loc = loc:expand(concat(batch, {n}))}
  if o.validate_args then
    check_param(op, "loc", loc, "real_vector")
    check_param(op, name, m, name == "scale_tril" and "lower_cholesky" or "positive_definite")
  end
  if name == "scale_tril" then
    self._unbroadcasted_scale_tril = m
  elseif name == "covariance_matrix" then
    self._unbroadcasted_scale_tril = torch.linalg.cholesky(m)
  else
    self._unbroadcasted_scale_tril = torch.linalg.cholesky(torch.linalg.inv(m))
  end
  self[name] = m:expand(concat(batch, {n, n}))
  return init(MultivariateNormal, self, batch, {n}, o.validate_args)
end

local function mvn_matrix_shape(self) return concat(self._batch_shape, self._event_shape, self._event_shape) end

function MultivariateNormal._props.scale_tril(self)
  return self._unbroadcasted_scale_tril:expand(mvn_matrix_shape(self))
end
function MultivariateNormal._props.covariance_matrix(self)
  local L = self._unbroadcasted_scale_tril
  return L:matmul(L:transpose(-2, -1)):expand(mvn_matrix_shape(self))
end
function MultivariateNormal._props.precision_matrix(self)
  return torch.linalg.inv(self.covariance_matrix)
end
function MultivariateNormal._props.mean(self) return self.loc end
function MultivariateNormal._props.variance(self)
  return self._unbroadcasted_scale_tril:pow(2):sum(-1):expand(concat(self._batch_shape, self._event_shape))
end
function MultivariateNormal._m._support_name(self) return "real_vector" end

function MultivariateNormal._m._rsample(self, shape)
  local ext = self:_extended_shape(shape)
  local eps = torch.randn(ext, like(self.loc))
  return self.loc + self._unbroadcasted_scale_tril:matmul(eps:unsqueeze(-1)):squeeze(-1)
end

function MultivariateNormal._m._log_prob(self, value)
  local L = self._unbroadcasted_scale_tril
  local M = mahalanobis("MultivariateNormal:log_prob", L, value - self.loc)
  return -0.5 * (M + self._event_shape[1] * math.log(2 * math.pi)) - half_log_det(L)
end

function MultivariateNormal._m._entropy(self)
  local H = half_log_det(self._unbroadcasted_scale_tril) + 0.5 * self._event_shape[1] * (1.0 + math.log(2 * math.pi))
  if #self._batch_shape == 0 then return H end
  return H:expand(self._batch_shape)
end

---------------------------------------------------------------------------------------------
-- Independent(base_distribution, reinterpreted_batch_ndims): the base's right-most batch
-- dims become event dims (log_prob and entropy summed over them).

local Independent = class("Independent", Distribution)
distributions.Independent = Independent

local function is_distribution(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  while type(mt) == "table" do
    if mt == Distribution then return true end
    local up = getmetatable(mt)
    mt = up and up.__index
  end
  return false
end

function Independent._new(...)
  local op = "Independent"
  local o = ctor_args(op, {"base_distribution", "reinterpreted_batch_ndims"}, 2, ...)
  local base = o.base_distribution
  if not is_distribution(base) or rawget(base, "_batch_shape") == nil then
    fail(op, "expected a distribution for base_distribution, got %s", describe(base))
  end
  local n = util.check_int(op, "reinterpreted_batch_ndims", o.reinterpreted_batch_ndims, 0)
  local bs = base._batch_shape
  if n > #bs then
    fail(op, "expected reinterpreted_batch_ndims <= the number of dims of the base's batch_shape %s, got %d",
         shape_str(bs), n)
  end
  local self = {base_dist = base, reinterpreted_batch_ndims = n}
  return init(Independent, self, slice(bs, 1, #bs - n), concat(slice(bs, #bs - n + 1), base._event_shape),
              o.validate_args)
end

function Independent._props.has_rsample(self) return self.base_dist.has_rsample end
function Independent._props.mean(self) return self.base_dist.mean end
function Independent._props.variance(self) return self.base_dist.variance end
function Independent._props.stddev(self) return self.base_dist.stddev end

function Independent._m._check_support(self, op, value) self.base_dist:_check_support(op, value) end

function Independent._m._rsample(self, shape) return self.base_dist:_rsample(shape) end

function Independent._m._log_prob(self, value)
  return sum_rightmost(self.base_dist:_log_prob(value), self.reinterpreted_batch_ndims)
end

function Independent._m._entropy(self)
  return sum_rightmost(self.base_dist:_entropy(), self.reinterpreted_batch_ndims)
end

---------------------------------------------------------------------------------------------
-- kl_divergence(p, q): the formulas of PyTorch 1.13's torch/distributions/kl.py, for the
-- pairs it registers among these classes.

local inf = math.huge
local function inf_like(t) return torch.full_like(t, inf) end
local function x_log_x(t) return t * t:log() end
local softplus = torch.nn.functional.softplus

local KL = {}
local function register(p, q, fn) KL[p] = KL[p] or {}; KL[p][q] = fn end

register(Normal, Normal, function(p, q)
  local var_ratio = (p.scale / q.scale):pow(2)
  local t1 = ((p.loc - q.loc) / q.scale):pow(2)
  return (var_ratio + t1 - 1 - var_ratio:log()) * 0.5
end)

register(Bernoulli, Bernoulli, function(p, q)
  local t1 = p.probs * (softplus(-q.logits) - softplus(-p.logits))
  t1 = torch.where(q.probs:eq(0), inf, t1)
  t1 = torch.where(p.probs:eq(0), 0.0, t1)
  local t2 = (1 - p.probs) * (softplus(q.logits) - softplus(p.logits))
  t2 = torch.where(q.probs:eq(1), inf, t2)
  t2 = torch.where(p.probs:eq(1), 0.0, t2)
  return t1 + t2
end)

register(Categorical, Categorical, function(p, q)
  local t = p.probs * (p.logits - q.logits)
  t = torch.where(q.probs:eq(0):expand(t.shape), inf, t)
  t = torch.where(p.probs:eq(0):expand(t.shape), 0.0, t)
  return t:sum(-1)
end)

register(Uniform, Uniform, function(p, q)
  local result = ((q.high - q.low) / (p.high - p.low)):log()
  return torch.where(q.low:gt(p.low):logical_or(q.high:lt(p.high)), inf, result)
end)

register(Beta, Beta, function(p, q)
  local sp = p.concentration1 + p.concentration0
  local sq = q.concentration1 + q.concentration0
  local t1 = q.concentration1:lgamma() + q.concentration0:lgamma() + sp:lgamma()
  local t2 = p.concentration1:lgamma() + p.concentration0:lgamma() + sq:lgamma()
  local t3 = (p.concentration1 - q.concentration1) * p.concentration1:digamma()
  local t4 = (p.concentration0 - q.concentration0) * p.concentration0:digamma()
  local t5 = (sq - sp) * sp:digamma()
  return t1 - t2 + t3 + t4 + t5
end)

register(Gamma, Gamma, function(p, q)
  local t1 = q.concentration * (p.rate / q.rate):log()
  local t2 = q.concentration:lgamma() - p.concentration:lgamma()
  local t3 = (p.concentration - q.concentration) * p.concentration:digamma()
  local t4 = (q.rate - p.rate) * (p.concentration / p.rate)
  return t1 + t2 + t3 + t4
end)

register(MultivariateNormal, MultivariateNormal, function(p, q)
  local op = "kl_divergence"
  if p._event_shape[1] ~= q._event_shape[1] then
    fail(op, "MultivariateNormal distributions of different event shapes %s and %s",
         shape_str(p._event_shape), shape_str(q._event_shape))
  end
  local Lp, Lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
  local n = p._event_shape[1]
  local term1 = half_log_det(Lq) - half_log_det(Lp)
  local batch = broadcast_shape(op, {slice(Lq.shape, 1, Lq:dim() - 2), slice(Lp.shape, 1, Lp:dim() - 2)})
  local full = concat(batch, {n, n})
  local term2 = torch.linalg.solve(Lq:expand(full), Lp:expand(full)):pow(2):sum(-1):sum(-1)
  local term3 = mahalanobis(op, Lq, q.loc - p.loc)
  return term1 + (term2 + term3 - n) * 0.5
end)

register(Independent, Independent, function(p, q)
  if p.reinterpreted_batch_ndims ~= q.reinterpreted_batch_ndims then
    fail("kl_divergence", "Independent distributions with different reinterpreted_batch_ndims (%d and %d)",
         p.reinterpreted_batch_ndims, q.reinterpreted_batch_ndims)
  end
  return sum_rightmost(distributions.kl_divergence(p.base_dist, q.base_dist), p.reinterpreted_batch_ndims)
end)

register(Beta, Gamma, function(p, q)
  local a, b = p.concentration1, p.concentration0
  local t1 = -p:entropy()
  local t2 = q.concentration:lgamma() - q.concentration * q.rate:log()
  local t3 = (q.concentration - 1) * (a:digamma() - (a + b):digamma())
  local t4 = q.rate * a / (a + b)
  return t1 + t2 - t3 + t4
end)

register(Beta, Normal, function(p, q)
  local a, b = p.concentration1, p.concentration0
  local E = a / (a + b)
  local var_normal = q.scale:pow(2)
  local t1 = -p:entropy()
  local t2 = (var_normal * 2 * math.pi):log() * 0.5
  local t3 = (E * (1 - E) / (a + b + 1) + E:pow(2)) * 0.5
  local t4 = q.loc * E
  local t5 = q.loc:pow(2) * 0.5
  return t1 + t2 + (t3 - t4 + t5) / var_normal
end)

register(Beta, Uniform, function(p, q)
  local result = -p:entropy() + (q.high - q.low):log()
  return torch.where(q.low:gt(0):logical_or(q.high:lt(1)), inf, result)
end)

register(Gamma, Normal, function(p, q)
  local c, r = p.concentration, p.rate
  local var_normal = q.scale:pow(2)
  local beta_sqr = r:pow(2)
  local t1 = (beta_sqr * var_normal * 2 * math.pi):log() * 0.5 - c - c:lgamma()
  local t2 = (c:pow(2) + c) * 0.5 / beta_sqr
  local t3 = q.loc * c / r
  local t4 = q.loc:pow(2) * 0.5
  return t1 + (c - 1) * c:digamma() + (t2 - t3 + t4) / var_normal
end)

for _, q in ipairs({Beta, Uniform}) do
  register(Gamma, q, function(p) return inf_like(p.concentration) end)
end
for _, q in ipairs({Beta, Gamma, Uniform}) do
  register(Normal, q, function(p) return inf_like(p.loc) end)
end

register(Uniform, Beta, function(p, q)
  local common = p.high - p.low
  local t1 = common:log()
  local t2 = (q.concentration1 - 1) * (x_log_x(p.high) - x_log_x(p.low) - common) / common
  local t3 = (q.concentration0 - 1) * (x_log_x(1 - p.high) - x_log_x(1 - p.low) + common) / common
  local t4 = q.concentration1:lgamma() + q.concentration0:lgamma() - (q.concentration1 + q.concentration0):lgamma()
  local result = t3 + t4 - t1 - t2
  return torch.where(p.high:gt(1):logical_or(p.low:lt(0)), inf, result)
end)

register(Uniform, Gamma, function(p, q)
  local common = p.high - p.low
  local t1 = common:log()
  local t2 = q.concentration:lgamma() - q.concentration * q.rate:log()
  local t3 = (1 - q.concentration) * (x_log_x(p.high) - x_log_x(p.low) - common) / common
  local t4 = q.rate * (p.high + p.low) / 2
  local result = -t1 + t2 + t3 + t4
  return torch.where(p.low:lt(0), inf, result)
end)

register(Uniform, Normal, function(p, q)
  local common = p.high - p.low
  local t1 = (q.scale * math.sqrt(math.pi * 2) / common):log()
  local t2 = common:pow(2) / 12
  local t3 = ((p.high + p.low - q.loc * 2) / 2):pow(2)
  return t1 + (t2 + t3) * 0.5 / q.scale:pow(2)
end)

function distributions.kl_divergence(p, q)
  local op = "kl_divergence"
  if not is_distribution(p) or rawget(p, "_batch_shape") == nil then
    fail(op, "expected a distribution for p, got %s", describe(p))
  end
  if not is_distribution(q) or rawget(q, "_batch_shape") == nil then
    fail(op, "expected a distribution for q, got %s", describe(q))
  end
  local fn = KL[getmetatable(p)] and KL[getmetatable(p)][getmetatable(q)]
  if not fn then
    fail(op, "no KL(p || q) is implemented for p type %s and q type %s", name_of(p), name_of(q))
  end
  return fn(p, q)
end
kl.kl_divergence = distributions.kl_divergence
