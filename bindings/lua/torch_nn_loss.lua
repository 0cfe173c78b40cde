-- More torch.nn losses: smooth L1 / Huber, KL divergence, the margin losses (cosine
-- embedding, margin ranking, triplet, hinge embedding), multi-label soft margin, Poisson and
-- Gaussian negative log-likelihood, and pairwise_distance. Each nn.functional form follows
-- PyTorch's formula (written from differentiable tensor ops, so autograd needs no formula of
-- its own), and each loss layer keeps its options as PyTorch's does.
local torch = ...
local nn = torch.nn
local F, util = nn.functional, nn._util
local fail, describe, shape_str = util.fail, util.describe, util.shape_str
local check_float, reduce = util.check_float, util.reduce
local loss = util.loss_class

-- An elementwise loss's input and target (floating, one shape) and its reduction.
local function elementwise(op, input, target, o, valid)
  util.check_reduction(op, o.reduction, valid)
  util.check_loss_pair(op, input, target)
end

-- 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (the L1 loss when beta is 0).
function F.smooth_l1_loss(input, target, ...)
  local op = "smooth_l1_loss"
  local o = util.args(op, {"reduction", "beta"}, 0, {reduction = "mean", beta = 1.0}, ...)
  elementwise(op, input, target, o)
  local beta = util.check_number(op, "beta", o.beta)
  if beta < 0 then fail(op, "beta must be >= 0, got %s", describe(beta)) end
  local z = (input - target):abs()
  if beta == 0 then return reduce(z, o.reduction) end
  return reduce(torch.where(z:lt(beta), z * z * (0.5 / beta), z - 0.5 * beta), o.reduction)
end

-- 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
function F.huber_loss(input, target, ...)
  local op = "huber_loss"
  local o = util.args(op, {"reduction", "delta"}, 0, {reduction = "mean", delta = 1.0}, ...)
  elementwise(op, input, target, o)
  local delta = util.check_number(op, "delta", o.delta)
  if not (delta > 0) then fail(op, "delta must be > 0, got %s", describe(delta)) end
  local z = (input - target):abs()
  return reduce(torch.where(z:lt(delta), z * z * 0.5, (z - 0.5 * delta) * delta), o.reduction)
end

-- t log t, 0 where t is 0 (NaN where t < 0, as PyTorch's xlogy); the log is taken of 1 where
-- t is 0, so that the gradient there is not 0 * inf.
local function xlogx(t)
  local zero = t:eq(0)
  return torch.where(zero, 0, t * torch.where(zero, 1, t):log())
end

-- KL(target || exp(input)) pointwise for log-probabilities input: target (log target - input),
-- or with log_target exp(target) (target - input). "batchmean" divides the sum by the batch
-- size (dim 1), as the KL divergence's definition wants; "mean" by the element count.
function F.kl_div(input, target, ...)
  local op = "kl_div"
  local o = util.args(op, {"reduction", "log_target"}, 0, {reduction = "mean", log_target = false}, ...)
  elementwise(op, input, target, o, {"mean", "batchmean", "sum", "none"})
  local pointwise
  if util.check_bool(op, "log_target", o.log_target) then
    pointwise = target:exp() * (target - input)
  else
    pointwise = xlogx(target) - target * input
  end
  if o.reduction == "batchmean" then
    local total = pointwise:sum()
    return input:dim() > 0 and total / input.shape[1] or total
  end
  return reduce(pointwise, o.reduction)
end

-- Inputs of the pair losses (cosine embedding, margin ranking): two floating tensors and a
-- target of +-1 values.
local function check_pair_inputs(op, x1, x2, target)
  check_float(op, "input1", x1)
  check_float(op, "input2", x2)
  util.check_tensor(op, "target", target)
end

-- 1 - cos(x1, x2) where target is 1, max(0, cos(x1, x2) - margin) where it is -1 (0 for other
-- targets); the cosine over the last dim of (N, D) or (D) inputs, with PyTorch's 1e-12 added to
-- each squared magnitude.
function F.cosine_embedding_loss(input1, input2, target, ...)
  local op = "cosine_embedding_loss"
  local o = util.args(op, {"margin", "reduction"}, 0, {margin = 0, reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  check_pair_inputs(op, input1, input2, target)
  local margin = util.check_number(op, "margin", o.margin)
  local d = input1:dim()
  if (d ~= 1 and d ~= 2) or not util.same_shape(input1.shape, input2.shape) then
    fail(op, "input1 and input2 must be (N, D) or (D) tensors of one shape, got %s and %s", shape_str(input1.shape),
         shape_str(input2.shape))
  end
  if target:dim() ~= d - 1 or (d == 2 and target.shape[1] ~= input1.shape[1]) then
    fail(op, "target must have shape %s for inputs of shape %s, got %s", d == 2 and shape_str({input1.shape[1]}) or "{}",
         shape_str(input1.shape), shape_str(target.shape))
  end
  local EPSILON = 1e-12
  local dot = (input1 * input2):sum(-1)
  local mag1 = (input1 * input1):sum(-1) + EPSILON
  local mag2 = (input2 * input2):sum(-1) + EPSILON
  local cos = dot / (mag1 * mag2):sqrt()
  local out = torch.where(target:eq(1), 1 - cos, 0) + torch.where(target:eq(-1), (cos - margin):clamp{min = 0}, 0)
  return reduce(out, o.reduction)
end

-- max(0, -target (input1 - input2) + margin).
function F.margin_ranking_loss(input1, input2, target, ...)
  local op = "margin_ranking_loss"
  local o = util.args(op, {"margin", "reduction"}, 0, {margin = 0, reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  check_pair_inputs(op, input1, input2, target)
  local margin = util.check_number(op, "margin", o.margin)
  if input1:dim() ~= input2:dim() or input1:dim() ~= target:dim() then
    fail(op, "input1, input2 and target must have the same number of dims, got shapes %s, %s and %s",
         shape_str(input1.shape), shape_str(input2.shape), shape_str(target.shape))
  end
  return reduce((-target * (input1 - input2) + margin):clamp{min = 0}, o.reduction)
end

-- The p-norm of x1 - x2 + eps over the last dim.
function F.pairwise_distance(x1, x2, ...)
  local op = "pairwise_distance"
  local o = util.args(op, {"p", "eps", "keepdim"}, 0, {p = 2.0, eps = 1e-6, keepdim = false}, ...)
  check_float(op, "x1", x1)
  check_float(op, "x2", x2)
  local p, eps = util.check_number(op, "p", o.p), util.check_number(op, "eps", o.eps)
  local diff = x1 - x2 + eps
  if diff:dim() == 0 then fail(op, "expected inputs with at least one dim, got 0-dim tensors") end
  return diff:norm(p, -1, util.check_bool(op, "keepdim", o.keepdim))
end

-- max(d(a, p) - d(a, n) + margin, 0) with d the pairwise distance; swap: d(a, n) is replaced
-- by d(p, n) where that is smaller.
function F.triplet_margin_loss(anchor, positive, negative, ...)
  local op = "triplet_margin_loss"
  local o = util.args(op, {"margin", "p", "eps", "swap", "reduction"}, 0,
                      {margin = 1.0, p = 2.0, eps = 1e-6, swap = false, reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  check_float(op, "anchor", anchor)
  check_float(op, "positive", positive)
  check_float(op, "negative", negative)
  local d = anchor:dim()
  if (d ~= 1 and d ~= 2) or positive:dim() ~= d or negative:dim() ~= d then
    fail(op, "anchor, positive and negative must all be (N, D) or (D) tensors, got shapes %s, %s and %s",
         shape_str(anchor.shape), shape_str(positive.shape), shape_str(negative.shape))
  end
  local margin = util.check_number(op, "margin", o.margin)
  local dist = {p = o.p, eps = o.eps}
  local d_pos = F.pairwise_distance(anchor, positive, dist)
  local d_neg = F.pairwise_distance(anchor, negative, dist)
  if util.check_bool(op, "swap", o.swap) then
    d_neg = torch.minimum(d_neg, F.pairwise_distance(positive, negative, dist))
  end
  return reduce((d_pos - d_neg + margin):clamp{min = 0}, o.reduction)
end

-- input where target is 1, max(0, margin - input) where it is -1 (PyTorch adds both for
-- other target values).
function F.hinge_embedding_loss(input, target, ...)
  local op = "hinge_embedding_loss"
  local o = util.args(op, {"margin", "reduction"}, 0, {margin = 1.0, reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  check_float(op, "input", input)
  util.check_tensor(op, "target", target)
  local margin = util.check_number(op, "margin", o.margin)
  local out = torch.where(target:ne(1), (margin - input):clamp{min = 0}, 0) + torch.where(target:ne(-1), input, 0)
  return reduce(out, o.reduction)
end

-- -(t log sigmoid(x) + (1 - t) log sigmoid(-x)), optionally weighted per class, averaged over
-- the classes (the last dim), then reduced over the samples.
function F.multilabel_soft_margin_loss(input, target, ...)
  local op = "multilabel_soft_margin_loss"
  local o = util.args(op, {"weight", "reduction"}, 0, {reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  util.check_loss_pair(op, input, target)
  if input:dim() == 0 then fail(op, "input must have a class dim, got a 0-dim tensor") end
  local per = -(target * F.logsigmoid(input) + (1 - target) * F.logsigmoid(-input))
  if o.weight ~= nil then per = per * util.check_tensor(op, "weight", o.weight) end
  local C = input.shape[input:dim()]
  return reduce(per:sum(-1) / C, o.reduction)
end

-- exp(input) - target input (log_input), or input - target log(input + eps); full adds the
-- Stirling term t log t - t + log(2 pi t) / 2 where the target is > 1.
function F.poisson_nll_loss(input, target, ...)
  local op = "poisson_nll_loss"
  local o = util.args(op, {"log_input", "full", "eps", "reduction"}, 0,
                      {log_input = true, full = false, eps = 1e-8, reduction = "mean"}, ...)
  elementwise(op, input, target, o)
  local eps = util.check_number(op, "eps", o.eps)
  local out
  if util.check_bool(op, "log_input", o.log_input) then
    out = input:exp() - target * input
  else
    out = input - target * (input + eps):log()
  end
  if util.check_bool(op, "full", o.full) then
    local big = target:gt(1)
    local t = torch.where(big, target, 1)
    out = out + torch.where(big, t * t:log() - t + (t * (2 * math.pi)):log() * 0.5, 0)
  end
  return reduce(out, o.reduction)
end

-- 0.5 (log var + (input - target)^2 / var) (+ 0.5 log(2 pi) with full), var clamped to at least
-- eps for the value but not for the gradient, as PyTorch clamps it under no_grad. var has the
-- input's shape, or that shape without the last dim, or with the last dim 1.
function F.gaussian_nll_loss(input, target, var, ...)
  local op = "gaussian_nll_loss"
  local o = util.args(op, {"full", "eps", "reduction"}, 0, {full = false, eps = 1e-6, reduction = "mean"}, ...)
  util.check_reduction(op, o.reduction)
  check_float(op, "input", input)
  check_float(op, "target", target)
  check_float(op, "var", var)
  local eps = util.check_number(op, "eps", o.eps)
  local ishape, vshape = input.shape, var.shape
  if not util.same_shape(ishape, vshape) then
    local lead = {table.unpack(ishape, 1, #ishape - 1)}
    if #ishape > 0 and util.same_shape(lead, vshape) then
      var = var:unsqueeze(-1)
    elseif not (#ishape > 0 and #vshape == #ishape and vshape[#vshape] == 1 and
                util.same_shape(lead, {table.unpack(vshape, 1, #vshape - 1)})) then
      fail(op, "var of shape %s does not fit input of shape %s (it must be that shape, or that shape with the " ..
           "last dim 1 or removed)", shape_str(vshape), shape_str(ishape))
    end
  end
  if var:numel() > 0 and var:detach():min():item() < 0 then fail(op, "var has negative entries") end
  local clamped = var + (var:detach():clamp{min = eps} - var:detach())
  local diff = input - target
  local out = (clamped:log() + diff * diff / clamped) * 0.5
  if util.check_bool(op, "full", o.full) then out = out + 0.5 * math.log(2 * math.pi) end
  return reduce(out, o.reduction)
end

---------------------------------------------------------------------------------------------
-- The loss layers.

loss("SmoothL1Loss", F.smooth_l1_loss, {"reduction", "beta"}, {}, {beta = 1.0})
loss("HuberLoss", F.huber_loss, {"reduction", "delta"}, {}, {delta = 1.0})
loss("KLDivLoss", F.kl_div, {"reduction", "log_target"}, {}, {log_target = false}, 2,
     {"mean", "batchmean", "sum", "none"})
loss("CosineEmbeddingLoss", F.cosine_embedding_loss, {"margin", "reduction"}, {}, {margin = 0.0}, 3)
loss("MarginRankingLoss", F.margin_ranking_loss, {"margin", "reduction"}, {}, {margin = 0.0}, 3)
loss("TripletMarginLoss", F.triplet_margin_loss, {"margin", "p", "eps", "swap", "reduction"}, {},
     {margin = 1.0, p = 2.0, eps = 1e-6, swap = false}, 3)
loss("HingeEmbeddingLoss", F.hinge_embedding_loss, {"margin", "reduction"}, {}, {margin = 1.0})
loss("MultiLabelSoftMarginLoss", F.multilabel_soft_margin_loss, {"weight", "reduction"}, {weight = true})
loss("PoissonNLLLoss", F.poisson_nll_loss, {"log_input", "full", "eps", "reduction"}, {},
     {log_input = true, full = false, eps = 1e-8})
loss("GaussianNLLLoss", F.gaussian_nll_loss, {"full", "eps", "reduction"}, {}, {full = false, eps = 1e-6}, 3)
