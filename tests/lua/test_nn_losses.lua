-- torch.nn losses, as modules and through nn.functional, with each reduction: values
-- computed by hand where short and from PyTorch 1.13 otherwise (the snippet is quoted;
-- class indices there are 0-based where ours are 1-based), gradients, and every error.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn
local F = nn.functional

local function t(values) return torch.tensor(values, {dtype = "float32"}) end
local function flat(x) return x:reshape(-1) end

-- d loss / d x of fn(x, ...).
local function grad_of(fn, x, ...)
  x = x:clone():requires_grad_()
  fn(x, ...):backward()
  return flat(x.grad)
end

local a = t{{0.5, -1}, {2, 0}}
local b = t{{1, 0}, {1.5, 0.5}}

T.test("MSELoss and L1Loss with each reduction", function()
  -- differences -0.5, -1, 0.5, -0.5: squares .25, 1, .25, .25; absolute values .5, 1, .5, .5
  T.near(nn.MSELoss()(a, b):item(), 0.4375)
  T.near(nn.MSELoss{reduction = "sum"}(a, b):item(), 1.75)
  T.near(nn.MSELoss("none")(a, b), {{0.25, 1}, {0.25, 0.25}})
  T.near(nn.L1Loss()(a, b):item(), 0.625)
  T.near(F.l1_loss(a, b, {reduction = "sum"}):item(), 2.5)
  T.near(F.l1_loss(a, b, "none"), {{0.5, 1}, {0.5, 0.5}})
  T.near(nn.L1Loss{reduction = "sum"}(a, b):item(), 2.5)
  T.near(nn.L1Loss("none")(a, b), {{0.5, 1}, {0.5, 0.5}})
  -- the module reads its reduction at each call, as PyTorch's does
  local crit = nn.MSELoss()
  crit.reduction = "sum"
  T.near(crit(a, b):item(), 1.75)
  T.error_usable(function() nn.L1Loss()(a, b, "sum") end, "unexpected argument 3")
  T.eq(F.mse_loss(a, b).shape, {})
  -- gradients: 2 d / n and sign(d) / n
  T.near(grad_of(F.mse_loss, a, b), {-0.25, -0.5, 0.25, -0.25})
  T.near(grad_of(F.l1_loss, a, b), {-0.25, -0.25, 0.25, -0.25})
  T.near(F.mse_loss(a:double(), b:double()):item(), 0.4375)
end)

-- F.mse_loss is one engine op and graph node: its values and both gradients are those of the
-- sub, mul and mean it replaces, bit for bit, in each reduction and for mixed dtypes.
T.test("mse_loss equals the composed (input - target)^2 and its gradients bit for bit", function()
  torch.manual_seed(3)
  for _, dts in ipairs({{"float32", "float32"}, {"float64", "float64"}, {"float32", "float64"}}) do
    for _, reduction in ipairs({"mean", "sum", "none"}) do
      local x0, y0 = torch.randn(7, 5, {dtype = dts[1]}), torch.randn(7, 5, {dtype = dts[2]})
      local x1, y1 = x0:clone():requires_grad_(), y0:clone():requires_grad_()
      local x2, y2 = x0:clone():requires_grad_(), y0:clone():requires_grad_()
      local fused = F.mse_loss(x1, y1, {reduction = reduction})
      local d = x2 - y2
      local composed = d * d
      if reduction == "mean" then composed = composed:mean() elseif reduction == "sum" then composed = composed:sum() end
      T.eq(fused.dtype, composed.dtype)
      T.truthy(torch.equal(fused, composed), reduction .. " value")
      local g = torch.rand(composed.shape, {dtype = composed.dtype})
      fused:backward(g)
      composed:backward(g)
      T.eq(x1.grad.dtype, dts[1])
      T.eq(y1.grad.dtype, dts[2])
      T.truthy(torch.equal(x1.grad, x2.grad), reduction .. " input gradient")
      T.truthy(torch.equal(y1.grad, y2.grad), reduction .. " target gradient")
    end
  end
end)

T.test("mse_loss: positional reduction, second derivative, keyword errors", function()
  T.eq(F.mse_loss(a, b, "sum"):item(), F.mse_loss(a, b, {reduction = "sum"}):item())
  T.error_usable(function() F.mse_loss(a, b, "sum", {reduction = "sum"}) end, "mse_loss: reduction given twice")
  T.error_usable(function() F.mse_loss(a, b, {reductio = "sum"}) end, "reductio")
  T.error_usable(function() F.mse_loss(a, b, "avg") end, 'mse_loss: reduction must be "mean", "sum" or "none", got "avg"')
  -- d/dx of sum((x - y)^2) is 2 (x - y); its derivative along x is 2 per element.
  local x = torch.tensor({1.0, -2.0, 0.5}, {dtype = "float64", requires_grad = true})
  local y = torch.tensor({0.0, 1.0, 1.0}, {dtype = "float64"})
  local gx = torch.autograd.grad(F.mse_loss(x, y, {reduction = "sum"}), x, {create_graph = true})[1]
  T.near(gx, {2.0, -6.0, -1.0})
  T.near(torch.autograd.grad(gx:sum(), x)[1], {2.0, 2.0, 2.0})
end)

T.test("BCELoss with each reduction, log clamped at -100", function()
  -- p = [.2,.9,0,1,.5], t = [0,1,1,.5,.25]:
  -- -log .8, -log .9, -clamp(log 0) = 100, -.5 clamp(log 0) = 50, -log .5
  local p, target = t{0.2, 0.9, 0, 1, 0.5}, t{0, 1, 1, 0.5, 0.25}
  T.near(nn.BCELoss{reduction = "none"}(p, target), {0.223144, 0.105361, 100, 50, 0.693147}, 1e-5)
  T.near(nn.BCELoss{reduction = "sum"}(p, target):item(), 151.021652, 1e-5)
  T.near(nn.BCELoss()(p, target):item(), 30.20433, 1e-5)
  -- F.binary_cross_entropy(p, t, weight=[1,2,.5,1,3])
  local w = t{1, 2, 0.5, 1, 3}
  T.near(nn.BCELoss{weight = w}(p, target):item(), 20.502661, 1e-5)
  -- p2 = [.2,.9,.3,.6], t2 = [0,1,1,.5]: F.binary_cross_entropy(p2, t2).backward()
  T.near(grad_of(F.binary_cross_entropy, t{0.2, 0.9, 0.3, 0.6}, t{0, 1, 1, 0.5}),
         {0.3125, -0.277778, -0.833333, 0.104167}, 1e-5)
  -- At p = 0 or 1 the gradient stays finite.
  local g = grad_of(F.binary_cross_entropy, t{0, 1}, t{1, 0})
  T.truthy(g:isfinite():all():item())
end)

T.test("BCEWithLogitsLoss with each reduction, weight and pos_weight", function()
  -- z = [-2,0,3,50,-60], t = [0,1,1,0,.5]; F.binary_cross_entropy_with_logits(z, t, ...)
  local z, target = t{-2, 0, 3, 50, -60}, t{0, 1, 1, 0, 0.5}
  T.near(F.binary_cross_entropy_with_logits(z, target, {reduction = "none"}),
         {0.126928, 0.693147, 0.048587, 50, 30}, 1e-5)
  T.near(nn.BCEWithLogitsLoss{reduction = "sum"}(z, target):item(), 80.868668, 1e-5)
  T.near(nn.BCEWithLogitsLoss()(z, target):item(), 16.173733, 1e-5)
  local pw = t{2}
  T.near(nn.BCEWithLogitsLoss{pos_weight = pw, reduction = "none"}(z, target),
         {0.126928, 1.386294, 0.097175, 50, 60}, 1e-5)
  T.near(nn.BCEWithLogitsLoss{weight = t{1, 2, 0.5, 1, 3}}(z, target):item(), 28.307501, 1e-5)
  -- gradients (sigmoid(z) - t) / n, with pos_weight (the gradient at z = 0 included)
  T.near(grad_of(F.binary_cross_entropy_with_logits, z, target), {0.023841, -0.1, -0.009485, 0.2, -0.1}, 1e-5)
  T.near(grad_of(F.binary_cross_entropy_with_logits, z, target, {pos_weight = pw}),
         {0.023841, -0.2, -0.01897, 0.2, -0.2}, 1e-5)
  -- It equals BCE of the sigmoid where that is finite.
  local zs = t{-1, 0.5, 2}
  T.near(F.binary_cross_entropy_with_logits(zs, t{0, 1, 0.5}), F.binary_cross_entropy(zs:sigmoid(), t{0, 1, 0.5}), 1e-6)
end)

-- logits = [[1,2,.5,-1],[0,0,0,0],[3,-2,1,.5]], targets [1,0,3] (0-based)
local logits = t{{1, 2, 0.5, -1}, {0, 0, 0, 0}, {3, -2, 1, 0.5}}
local target = torch.tensor{2, 1, 4}

T.test("CrossEntropyLoss with each reduction and its options", function()
  -- F.cross_entropy(logits, tgt, reduction=r)
  T.near(nn.CrossEntropyLoss()(logits, target):item(), 1.52791, 1e-5)
  T.near(nn.CrossEntropyLoss{reduction = "sum"}(logits, target):item(), 4.58373, 1e-5)
  T.near(nn.CrossEntropyLoss{reduction = "none"}(logits, target), {0.495182, 1.386294, 2.702254}, 1e-5)
  -- weight=[1,2,.5,3]; ignore_index=0; label_smoothing=.1
  local w = t{1, 2, 0.5, 3}
  T.near(nn.CrossEntropyLoss{weight = w}(logits, target):item(), 1.747237, 1e-5)
  T.near(nn.CrossEntropyLoss{ignore_index = 1}(logits, target):item(), 1.598718, 1e-5)
  T.near(nn.CrossEntropyLoss{label_smoothing = 0.1}(logits, target):item(), 1.569577, 1e-5)
  T.near(F.cross_entropy(logits, target, {label_smoothing = 0.1}):item(), 1.569577, 1e-5)
  -- F.cross_entropy(logits, tgt).backward(): (softmax - onehot) / 3
  T.near(grad_of(F.cross_entropy, logits, target),
         {0.074736, -0.13018, 0.04533, 0.010114, -0.25, 0.083333, 0.083333, 0.083333, 0.272296, 0.001835,
          0.036851, -0.310982}, 1e-5)
  -- The class weights are a buffer: saved and converted with the module.
  local loss = nn.CrossEntropyLoss{weight = w}
  T.eq(loss:state_dict().weight:tolist(), w:tolist())
  loss:to("float64")
  T.eq(loss.weight.dtype, "float64")
  -- Probability targets: one-hot rows give the class-index loss.
  local onehot = t{{0, 1, 0, 0}, {1, 0, 0, 0}, {0, 0, 0, 1}}
  T.near(F.cross_entropy(logits, onehot):item(), 1.52791, 1e-5)
end)

T.test("NLLLoss on log-probabilities with each reduction", function()
  local logp = F.log_softmax(logits, 2)
  T.near(nn.NLLLoss()(logp, target):item(), 1.52791, 1e-5)
  T.near(nn.NLLLoss{reduction = "sum"}(logp, target):item(), 4.58373, 1e-5)
  T.near(F.nll_loss(logp, target, {reduction = "none"}), {0.495182, 1.386294, 2.702254}, 1e-5)
  T.near(nn.NLLLoss{weight = t{1, 2, 0.5, 3}}(logp, target):item(), 1.747237, 1e-5)
  -- By hand: the mean of -logp at the targets.
  local picked = -(logp[{1, 2}] + logp[{2, 1}] + logp[{3, 4}]) / 3
  T.near(F.nll_loss(logp, target):item(), picked:item(), 1e-6)
end)

T.test("loss errors name the loss and the offending shapes, dtypes and classes", function()
  T.error_usable(function() nn.MSELoss()(a, t{1, 2}) end, "mse_loss: input shape {2,2} and target shape {2} differ")
  T.error_usable(function() F.l1_loss(t{1, 2, 3}, t{{1, 2, 3}}) end, "l1_loss: input shape {3} and target shape {1,3} differ")
  T.error_usable(function() nn.BCELoss()(t{0.5}, t{1, 0}) end,
    "binary_cross_entropy: input shape {1} and target shape {2} differ")
  T.error_usable(function() nn.BCEWithLogitsLoss()(t{0.5, 1}, t{1}) end,
    "binary_cross_entropy_with_logits: input shape {2} and target shape {1} differ")
  T.error_usable(function() nn.BCELoss()(t{0.5, 0.5}, torch.tensor{1, 0}) end,
    "binary_cross_entropy: expected a floating-point target, got dtype int64")
  T.error_usable(function() nn.BCEWithLogitsLoss()(t{0.5}, torch.tensor{true}) end,
    "binary_cross_entropy_with_logits: expected a floating-point target, got dtype bool")
  T.error_usable(function() F.mse_loss(torch.tensor{1, 2}, t{1, 2}) end,
    "mse_loss: expected a floating-point input, got dtype int64")
  T.error_usable(function() nn.BCELoss()(t{1.5, 0.5}, t{1, 0}) end,
    "binary_cross_entropy: input values must be between 0 and 1, got values from 0.5 to 1.5")
  T.error_usable(function() nn.NLLLoss()(logits, t{1, 0, 3}) end, "nll_loss: class targets must be an integer tensor")
  T.error_usable(function() nn.NLLLoss()(logits, t{1, 0, 3}) end, "got float32")
  T.error_usable(function() nn.CrossEntropyLoss()(logits, torch.tensor{2, 5, 1}) end,
    "cross_entropy: target 5 is out of range for 4 classes (valid 1..4)")
  T.error_usable(function() nn.NLLLoss()(logits, torch.tensor{0, 1, 1}) end,
    "nll_loss: target 0 is out of range for 4 classes (valid 1..4)")
  T.error_usable(function() nn.CrossEntropyLoss()(logits, torch.tensor{1, 2}) end, "cross_entropy: target has shape {2}")
  T.error_usable(function() F.mse_loss(a, b, {reduction = "avg"}) end,
    'mse_loss: reduction must be "mean", "sum" or "none", got "avg"')
  T.error_usable(function() F.cross_entropy(logits, target, {reduction = "max"}) end,
    'cross_entropy: reduction must be "mean", "sum" or "none", got "max"')
  T.error_usable(function() F.mse_loss(a, {1, 2}) end, "mse_loss: expected a tensor as argument 2, got table")
  T.error_usable(function() nn.BCELoss{weight = 2} end, "BCELoss: expected a tensor for weight, got 2")
  T.error_usable(function() F.cross_entropy(logits, target, {smoothing = 0.1}) end,
    "cross_entropy: unknown keyword 'smoothing' (valid: weight, ignore_index, reduction, label_smoothing)")
end)

T.test("smooth L1, Huber, KL divergence, margin and NLL losses match PyTorch", function()
  -- torch.set_default_dtype(torch.float64); x = [[0.5,-1,2],[1.5,.25,-.75]]; y = [[0,1,1],[-1,.5,0]]
  local function d(v) return torch.tensor(v, {dtype = "float64"}) end
  local x, y = d{{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}}, d{{0.0, 1.0, 1.0}, {-1.0, 0.5, 0.0}}
  -- F.smooth_l1_loss(x, y); F.smooth_l1_loss(x, y, beta=0.5, reduction='none'); F.huber_loss(x, y, delta=0.5)
  T.near(F.smooth_l1_loss(x, y), 0.739583333333, 1e-11)
  T.near(flat(nn.SmoothL1Loss{beta = 0.5, reduction = "none"}(x, y)), {0.25, 1.75, 0.75, 2.25, 0.0625, 0.5}, 1e-12)
  T.near(nn.HuberLoss{delta = 0.5}(x, y), 0.463541666667, 1e-11)
  -- lp = F.log_softmax(x, 1); t = [[.2,0,.8],[.5,.25,.25]]; F.kl_div(lp, t, reduction='batchmean');
  -- F.kl_div(lp, t.log().clamp(min=-5), reduction='sum', log_target=True)
  local lp, tp = F.log_softmax(x, 2), d{{0.2, 0.0, 0.8}, {0.5, 0.25, 0.25}}
  T.near(nn.KLDivLoss{reduction = "batchmean"}(lp, tp), 0.103430355843, 1e-11)
  T.near(F.kl_div(lp, tp:log():clamp{min = -5}, {reduction = "sum", log_target = true}), 0.195010760415, 1e-11)
  -- F.cosine_embedding_loss(x, y, [1,-1], margin=0.1, reduction='none')
  T.near(nn.CosineEmbeddingLoss{margin = 0.1, reduction = "none"}(x, y, torch.tensor{1, -1}), {0.691393300076, 0}, 1e-11)
  -- F.margin_ranking_loss(x[0], x[1], [1,-1,1], margin=0.5)
  T.near(F.margin_ranking_loss(x[1], x[2], d{1, -1, 1}, {margin = 0.5}), 0.5, 1e-12)
  -- F.triplet_margin_loss(x, y, x*2, swap=True, reduction='none')
  T.near(nn.TripletMarginLoss{swap = true, reduction = "none"}(x, y, x * 2), {1.000000436436, 1.926440786489}, 1e-11)
  -- F.hinge_embedding_loss(x, [[1,-1,1],[-1,1,-1]], margin=1.5, reduction='none')
  T.near(flat(F.hinge_embedding_loss(x, d{{1, -1, 1}, {-1, 1, -1}}, {margin = 1.5, reduction = "none"})),
         {0.5, 2.5, 2.0, 0.0, 0.25, 2.25}, 1e-12)
  -- F.multilabel_soft_margin_loss(x, [[1,0,1],[0,1,0]], weight=[1,2,.5], reduction='none')
  T.near(nn.MultiLabelSoftMarginLoss{weight = d{1, 2, 0.5}, reduction = "none"}(x, d{{1, 0, 1}, {0, 1, 0}}),
         {0.388021454913, 1.015575873599}, 1e-11)
  -- F.poisson_nll_loss(x, [[0,2,3],[1,5,0]], full=True, reduction='none')
  T.near(flat(nn.PoissonNLLLoss{full = true, reduction = "none"}(x, d{{0, 2, 3}, {1, 5, 0}})),
         {1.6487212707, 3.019685925776, 3.153137642474, 2.981689070338, 4.80487246828, 0.472366552741}, 1e-10)
  -- F.gaussian_nll_loss(x, y, [0.5, 1e-9], full=True, reduction='none'): var {2} is the input's shape
  -- without its last dim (one variance per row).
  T.near(flat(F.gaussian_nll_loss(x, y, d{0.5, 1e-9}, {full = true, reduction = "none"})),
         {0.822364942925, 4.572364942925, 1.572364942925, 3124994.0111832544, 31244.01118325422, 281244.01118325425}, 1e-11)
  -- v = [0.5, 1e-9] requiring grad; F.gaussian_nll_loss(x, y, v).backward(): var is clamped to eps for the
  -- value only, the gradient passes as if unclamped.
  local v = d{0.5, 1e-9}:requires_grad_()
  nn.GaussianNLLLoss()(x, y, v):backward()
  T.near(v.grad, {-1.25, -572916416666.6666}, 1e-9)
end)

T.test("the new losses' layers and errors", function()
  T.eq(tostring(nn.SmoothL1Loss()), "SmoothL1Loss()")
  T.eq(nn.SmoothL1Loss().beta, 1.0)
  T.eq(nn.TripletMarginLoss{margin = 2}.margin, 2)
  T.eq(nn.KLDivLoss{reduction = "batchmean"}.reduction, "batchmean")
  T.error_usable(function() nn.KLDivLoss{reduction = "avg"} end,
    "KLDivLoss: reduction must be \"mean\", \"batchmean\", \"sum\" or \"none\", got \"avg\"")
  T.error_usable(function() nn.HuberLoss{reduction = "batchmean"} end,
    "HuberLoss: reduction must be \"mean\", \"sum\" or \"none\", got \"batchmean\"")
  T.error_usable(function() F.smooth_l1_loss(t{1}, t{2}, {beta = -1}) end, "smooth_l1_loss: beta must be >= 0, got -1")
  T.error_usable(function() F.huber_loss(t{1}, t{2}, {delta = 0}) end, "huber_loss: delta must be > 0, got 0")
  T.error_usable(function() F.smooth_l1_loss(t{1, 2}, t{2}) end, "smooth_l1_loss: input shape {2} and target shape {1} differ")
  T.error_usable(function() F.cosine_embedding_loss(t{{1, 2}}, t{{1, 2}}, torch.tensor{1, 1}) end,
    "cosine_embedding_loss: target must have shape {1} for inputs of shape {1,2}, got {2}")
  T.error_usable(function() F.margin_ranking_loss(t{1, 2}, t{1, 2}, t{{1}}) end,
    "margin_ranking_loss: input1, input2 and target must have the same number of dims")
  T.error_usable(function() F.triplet_margin_loss(t{{1}}, t{1}, t{1}) end,
    "triplet_margin_loss: anchor, positive and negative must all be (N, D) or (D) tensors, got shapes {1,1}, {1} and {1}")
  T.error_usable(function() F.gaussian_nll_loss(t{1, 2}, t{1, 2}, t{-1, 1}) end, "gaussian_nll_loss: var has negative entries")
  T.error_usable(function() F.gaussian_nll_loss(t{{1, 2}}, t{{1, 2}}, t{1, 2, 3}) end,
    "gaussian_nll_loss: var of shape {3} does not fit input of shape {1,2}")
  T.error_usable(function() F.pairwise_distance(t{1}, t{2}, {p = "x"}) end, "pairwise_distance: p must be a number, got \"x\"")
end)

T.done()
