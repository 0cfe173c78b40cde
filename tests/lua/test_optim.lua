-- torch.optim: SGD, Adam, AdamW and RMSprop (the fused kernels torch._*_step_ and the Lua
-- optimizers around them) and the lr schedulers StepLR and CosineAnnealingLR.
--
-- Every optimizer configuration below runs 5 steps on the 2x2 parameter P0 with, at step t,
-- the gradient of SCALES[t]/2 * sum((p - TARGET)^2), i.e. g = SCALES[t] * (p - TARGET). The
-- result is checked against (a) the formulas of PyTorch 1.13's optimizers written out by
-- hand on Lua numbers (`hand` below) and (b) PyTorch 1.13's own numbers (PYTORCH below),
-- for float64 and float32. PYTORCH was printed by /usr/bin/python3 (torch 1.13.1) with:
--
--   import torch
--   P0 = [[0.5, -1.25], [2.0, 0.75]]; TARGET = [[1.0, 0.5], [-1.0, 0.25]]
--   SCALES = [2.0, 1.0, 3.0, 0.2, 1.5]
--   CONFIGS = {  # the same configurations, in the same order, as CONFIGS below
--     "SGD": [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.1, momentum=0.9, dampening=0.5),
--             dict(lr=0.1, momentum=0.9, nesterov=True), dict(lr=0.1, momentum=0.5, weight_decay=0.1),
--             dict(lr=0.1, momentum=0.9, maximize=True)],
--     "Adam": [dict(lr=0.1), dict(lr=0.1, betas=(0.8, 0.99), eps=1e-6), dict(lr=0.1, weight_decay=0.1),
--              dict(lr=0.1, betas=(0.9, 0.9), amsgrad=True), dict(lr=0.1, maximize=True)],
--     "AdamW": [dict(lr=0.1), dict(lr=0.1, weight_decay=0.5, betas=(0.9, 0.9), amsgrad=True)],
--     "RMSprop": [dict(), dict(lr=0.01, alpha=0.9, momentum=0.9), dict(lr=0.01, centered=True),
--                 dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.1), dict(lr=0.01, maximize=True)]}
--   for dtype in (torch.float64, torch.float32):
--       for name, configs in CONFIGS.items():
--           for cfg in configs:
--               p = torch.tensor(P0, dtype=dtype, requires_grad=True)
--               t = torch.tensor(TARGET, dtype=dtype)
--               opt = getattr(torch.optim, name)([p], **cfg)
--               for s in SCALES:
--                   opt.zero_grad()
--                   ((p - t) ** 2).sum().mul(s / 2).backward()
--                   opt.step()
--               print(p.detach().tolist())   # %.17g
--
-- The schedulers' sequences (SCHEDULES below) came from the same PyTorch:
--
--   def lrs(make, n, lr=(0.1, 0.02)):
--       ps = [torch.zeros(1, requires_grad=True) for _ in lr]
--       opt = torch.optim.SGD([{"params": [p], "lr": l} for p, l in zip(ps, lr)], lr=1.0)
--       sched = make(opt); out = [sched.get_last_lr()]
--       for _ in range(n):
--           opt.step(); sched.step(); out.append(sched.get_last_lr())
--       return out
--   S = torch.optim.lr_scheduler
--   lrs(lambda o: S.StepLR(o, step_size=3, gamma=0.5), 10)
--   lrs(lambda o: S.CosineAnnealingLR(o, T_max=5, eta_min=0.01), 15)
--   lrs(lambda o: S.CosineAnnealingLR(o, T_max=4), 9)
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = torch or require "torch"
local optim = torch.optim

local P0 = {{0.5, -1.25}, {2.0, 0.75}}
local TARGET = {{1.0, 0.5}, {-1.0, 0.25}}
local SCALES = {2.0, 1.0, 3.0, 0.2, 1.5}

local CONFIGS = {
  SGD = {{lr = 0.1}, {lr = 0.1, momentum = 0.9}, {lr = 0.1, momentum = 0.9, dampening = 0.5},
         {lr = 0.1, momentum = 0.9, nesterov = true}, {lr = 0.1, momentum = 0.5, weight_decay = 0.1},
         {lr = 0.1, momentum = 0.9, maximize = true}},
  Adam = {{lr = 0.1}, {lr = 0.1, betas = {0.8, 0.99}, eps = 1e-6}, {lr = 0.1, weight_decay = 0.1},
          {lr = 0.1, betas = {0.9, 0.9}, amsgrad = true}, {lr = 0.1, maximize = true}},
  AdamW = {{lr = 0.1}, {lr = 0.1, weight_decay = 0.5, betas = {0.9, 0.9}, amsgrad = true}},
  RMSprop = {{}, {lr = 0.01, alpha = 0.9, momentum = 0.9}, {lr = 0.01, centered = true},
             {lr = 0.01, centered = true, momentum = 0.5, weight_decay = 0.1}, {lr = 0.01, maximize = true}},
}

local PYTORCH = {
  float64 = {
    SGD = {{{0.79008400000000001, -0.23470599999999994}, {0.25949599999999984, 0.45991599999999999}}, {{1.2531700000000001, 1.3860950000000001}, {-2.5190200000000003, -0.0031700000000000473}}, {{1.1003106250000001, 0.8510871874999999}, {-1.6018637500000006, 0.14968937499999996}}, {{1.22591385271, 1.290698484485}, {-2.3554831162600003, 0.024086147289999988}}, {{0.91105342709999992, 0.35830274025000003}, {-0.74901347160000009, 0.26827334564999999}}, {{-0.98621000000000014, -6.4517350000000002}, {10.917260000000001, 2.2362100000000003}}},
    Adam = {{{0.9370512655587957, -0.80075268660523957}, {1.5499019966567829, 0.3129487344412043}}, {{0.92409732100843889, -0.80775717845454176}, {1.5560556537991632, 0.32590267899156122}}, {{0.92473527633436903, -0.79792920631954101}, {1.5471169178297624, 0.30683915458178262}}, {{0.93477144610914242, -0.80399727691102607}, {1.5530645065020674, 0.31522855389085769}}, {{0.048853732534824931, -1.7016545714429736}, {2.4514497483083182, 1.2011462674651752}}},
    AdamW = {{{0.93380349821939135, -0.79548866754155212}, {1.540888977617596, 0.3103445222360437}}, {{0.78345690669837476, -0.56763566093715656}, {1.1467633136356588, 0.20026171100331142}}},
    RMSprop = {{{0.7399998392932956, -0.98887209905561224}, {1.7357961604676486, 0.5100001607067044}}, {{0.75727976872276981, -0.98495161293680833}, {1.733779509736137, 0.49272023127723019}}, {{0.74205707439365065, -0.98631026499575281}, {1.7331667979672458, 0.50794292560634935}}, {{0.88248234927241487, -0.79369002614602691}, {1.5366485046780276, 0.34048537409611757}}, {{0.21137546488563375, -1.5248311741823932}, {2.2721904317349644, 1.0386245351143661}}},
  },
  float32 = {
    SGD = {{{0.79008400440216064, -0.23470599949359894}, {0.25949600338935852, 0.45991599559783936}}, {{1.2531700134277344, 1.3860948085784912}, {-2.5190198421478271, -0.0031699708197265863}}, {{1.1003105640411377, 0.85108721256256104}, {-1.6018636226654053, 0.14968939125537872}}, {{1.2259138822555542, 1.2906984090805054}, {-2.355482816696167, 0.024086132645606995}}, {{0.91105341911315918, 0.35830274224281311}, {-0.74901348352432251, 0.26827332377433777}}, {{-0.98620998859405518, -6.4517350196838379}, {10.917259216308594, 2.2362101078033447}}},
    Adam = {{{0.93705117702484131, -0.80075269937515259}, {1.5499019622802734, 0.3129487931728363}}, {{0.92409729957580566, -0.80775701999664307}, {1.5560555458068848, 0.32590267062187195}}, {{0.92473530769348145, -0.79792910814285278}, {1.5471168756484985, 0.30683910846710205}}, {{0.93477147817611694, -0.80399727821350098}, {1.5530644655227661, 0.31522858142852783}}, {{0.04885372519493103, -1.7016545534133911}, {2.4514493942260742, 1.201146125793457}}},
    AdamW = {{{0.93380355834960938, -0.79548877477645874}, {1.5408891439437866, 0.31034457683563232}}, {{0.78345692157745361, -0.56763547658920288}, {1.1467630863189697, 0.20026169717311859}}},
    RMSprop = {{{0.73999983072280884, -0.98887205123901367}, {1.7357960939407349, 0.51000016927719116}}, {{0.75727975368499756, -0.98495161533355713}, {1.7337795495986938, 0.49272024631500244}}, {{0.74205714464187622, -0.98631018400192261}, {1.7331666946411133, 0.50794285535812378}}, {{0.88248234987258911, -0.79368996620178223}, {1.5366483926773071, 0.34048536419868469}}, {{0.21137546002864838, -1.5248312950134277}, {2.2721900939941406, 1.0386245250701904}}},
  },
}

local SCHEDULES = {
  step = {{0.10000000000000001, 0.02}, {0.10000000000000001, 0.02}, {0.10000000000000001, 0.02}, {0.050000000000000003, 0.01}, {0.050000000000000003, 0.01}, {0.050000000000000003, 0.01}, {0.025000000000000001, 0.0050000000000000001}, {0.025000000000000001, 0.0050000000000000001}, {0.025000000000000001, 0.0050000000000000001}, {0.012500000000000001, 0.0025000000000000001}, {0.012500000000000001, 0.0025000000000000001}},
  cosine = {{0.10000000000000001, 0.02}, {0.091405764746872634, 0.019045084971874737}, {0.068905764746872628, 0.016545084971874735}, {0.041094235253127359, 0.013454915028125262}, {0.018594235253127367, 0.010954915028125263}, {0.01, 0.01}, {0.018594235253127367, 0.010954915028125263}, {0.041094235253127387, 0.013454915028125266}, {0.068905764746872669, 0.016545084971874742}, {0.091405764746872689, 0.019045084971874744}, {0.10000000000000006, 0.020000000000000007}, {0.091405764746872717, 0.019045084971874748}, {0.068905764746872683, 0.016545084971874742}, {0.041094235253127401, 0.013454915028125267}, {0.018594235253127381, 0.010954915028125265}, {0.01, 0.01}},
  cosine0 = {{0.10000000000000001, 0.02}, {0.085355339059327379, 0.017071067811865476}, {0.050000000000000003, 0.01}, {0.014644660940672627, 0.0029289321881345253}, {0, 0}, {0.014644660940672622, 0.0029289321881345244}, {0.05000000000000001, 0.010000000000000002}, {0.085355339059327406, 0.017071067811865483}, {0.10000000000000003, 0.020000000000000011}, {0.085355339059327406, 0.017071067811865487}},
}

-- The optimizers' update of one element (param p, gradient g, state table s, options c,
-- step number t), written out by hand from PyTorch 1.13's single-tensor code.
local hand = {}

function hand.SGD(p, g, s, c)
  local momentum, dampening, wd = c.momentum or 0, c.dampening or 0, c.weight_decay or 0
  local d = c.maximize and -g or g
  if wd ~= 0 then d = d + wd * p end
  if momentum ~= 0 then
    s.buf = s.buf and s.buf * momentum + (1 - dampening) * d or d  -- the first step copies d
    d = c.nesterov and d + momentum * s.buf or s.buf
  end
  return p - c.lr * d
end

local function adam_like(decoupled, default_wd)
  return function(p, g, s, c, t)
    local lr, eps, wd = c.lr or 1e-3, c.eps or 1e-8, c.weight_decay or default_wd
    local b1, b2 = table.unpack(c.betas or {0.9, 0.999})
    if c.maximize then g = -g end
    if decoupled then p = p * (1 - lr * wd) elseif wd ~= 0 then g = g + wd * p end
    s.m = (s.m or 0) * b1 + (1 - b1) * g
    s.v = (s.v or 0) * b2 + (1 - b2) * g * g
    local v = s.v
    if c.amsgrad then
      s.vmax = math.max(s.vmax or 0, s.v)
      v = s.vmax
    end
    local denom = math.sqrt(v) / math.sqrt(1 - b2 ^ t) + eps
    return p - lr / (1 - b1 ^ t) * s.m / denom
  end
end
hand.Adam = adam_like(false, 0)
hand.AdamW = adam_like(true, 1e-2)

function hand.RMSprop(p, g, s, c)
  local lr, alpha, eps = c.lr or 1e-2, c.alpha or 0.99, c.eps or 1e-8
  local wd, momentum = c.weight_decay or 0, c.momentum or 0
  if c.maximize then g = -g end
  if wd ~= 0 then g = g + wd * p end
  s.sq = (s.sq or 0) * alpha + (1 - alpha) * g * g
  local avg
  if c.centered then
    s.ga = (s.ga or 0) * alpha + (1 - alpha) * g
    avg = math.sqrt(s.sq - s.ga * s.ga) + eps
  else
    avg = math.sqrt(s.sq) + eps
  end
  if momentum > 0 then
    s.buf = (s.buf or 0) * momentum + g / avg
    return p - lr * s.buf
  end
  return p - lr * g / avg
end

-- The hand formulas over the 5 steps, element by element.
local function hand_run(name, cfg)
  local out = {}
  for i = 1, 2 do
    out[i] = {}
    for j = 1, 2 do
      local p, s = P0[i][j], {}
      for t, scale in ipairs(SCALES) do p = hand[name](p, scale * (p - TARGET[i][j]), s, cfg, t) end
      out[i][j] = p
    end
  end
  return out
end

-- The same 5 steps through torch.optim; returns the parameter and the optimizer.
local function tide_run(name, cfg, dtype)
  local p = torch.tensor(P0, {dtype = dtype})
  local target = torch.tensor(TARGET, {dtype = dtype})
  local opt = optim[name]({p}, cfg)
  for _, scale in ipairs(SCALES) do
    opt:zero_grad()
    p.grad = (p - target) * scale
    opt:step()
  end
  return p, opt
end

local TOL = {float64 = 1e-12, float32 = 2e-6}

for _, name in ipairs({"SGD", "Adam", "AdamW", "RMSprop"}) do
  for _, dtype in ipairs({"float64", "float32"}) do
    T.test(name .. " " .. dtype .. ": 5 steps of every configuration vs hand formulas and PyTorch", function()
      for k, cfg in ipairs(CONFIGS[name]) do
        local p = tide_run(name, cfg, dtype)
        T.eq(p.dtype, dtype)
        local what = name .. " configuration " .. k
        T.near(p, PYTORCH[dtype][name][k], TOL[dtype], what .. " vs PyTorch")
        T.near(p, hand_run(name, cfg), dtype == "float64" and 1e-12 or 2e-6, what .. " vs hand formulas")
      end
    end)
  end
end

T.test("SGD: one step by hand: momentum buffer starts as the gradient, then decays", function()
  local p = torch.tensor({1.0, 2.0, 3.0}, {dtype = "float64"})
  local opt = optim.SGD({p}, {lr = 0.1, momentum = 0.9, dampening = 0.5})
  p.grad = torch.tensor({0.5, -1.0, 2.0}, {dtype = "float64"})
  opt:step()
  -- buf = g (no dampening on the first step); p = p - 0.1 * buf
  T.near(opt.state[p].momentum_buffer, {0.5, -1.0, 2.0}, 1e-15)
  T.near(p, {0.95, 2.1, 2.8}, 1e-15)
  opt:step()
  -- buf = 0.9 * buf + 0.5 * g
  T.near(opt.state[p].momentum_buffer, {0.7, -1.4, 2.8}, 1e-15)
  T.near(p, {0.88, 2.24, 2.52}, 1e-15)
end)

T.test("Adam: first step by hand moves every element by lr * sign(g)", function()
  -- m = 0.1 g, v = 0.001 g^2; with bias correction m^ = g, v^ = g^2: p -= lr * g / (|g| + eps)
  local p = torch.tensor({1.0, -2.0, 0.5}, {dtype = "float64"})
  local opt = optim.Adam({p}, {lr = 0.01})
  p.grad = torch.tensor({3.0, -0.25, 1e-3}, {dtype = "float64"})
  opt:step()
  T.near(p, {1.0 - 0.01 * 3 / (3 + 1e-8), -2.0 + 0.01 * 0.25 / (0.25 + 1e-8), 0.5 - 0.01 * 1e-3 / (1e-3 + 1e-8)}, 1e-14)
  local s = opt.state[p]
  T.eq({s.step:item(), s.step.dtype, s.step.shape}, {1, torch.float32, {}})  -- PyTorch keeps a float32 count
  T.near(s.exp_avg, {0.3, -0.025, 1e-4}, 1e-15)
  T.near(s.exp_avg_sq, {0.009, 0.0000625, 1e-9}, 1e-15)
  T.eq(s.max_exp_avg_sq, nil)
end)

T.test("AdamW: decoupled decay multiplies the parameter by 1 - lr * weight_decay", function()
  local p = torch.tensor({2.0}, {dtype = "float64"})
  local opt = optim.AdamW({p}, {lr = 0.1, weight_decay = 0.5})
  p.grad = torch.tensor({0.0}, {dtype = "float64"})
  opt:step()  -- zero gradient: only the decay acts
  T.near(p, {2.0 * (1 - 0.05)}, 1e-15)
  T.eq(optim.AdamW({torch.zeros(1)}).param_groups[1].weight_decay, 1e-2)
  T.eq(optim.Adam({torch.zeros(1)}).param_groups[1].weight_decay, 0)
end)

T.test("RMSprop: one step by hand", function()
  local p = torch.tensor({1.0, 1.0}, {dtype = "float64"})
  local opt = optim.RMSprop({p}, {lr = 0.01, alpha = 0.9})
  p.grad = torch.tensor({2.0, -0.5}, {dtype = "float64"})
  opt:step()
  -- square_avg = 0.1 g^2; p -= 0.01 * g / (sqrt(0.1) |g| + eps)
  local r = math.sqrt(0.1)
  T.near(p, {1 - 0.01 * 2 / (r * 2 + 1e-8), 1 + 0.01 * 0.5 / (r * 0.5 + 1e-8)}, 1e-15)
  T.near(opt.state[p].square_avg, {0.4, 0.025}, 1e-15)
  T.eq(opt.state[p].step:item(), 1)
end)

T.test("defaults: PyTorch's", function()
  local p = torch.zeros(1)
  local g = optim.SGD({p}, {lr = 0.5}).param_groups[1]
  T.eq({g.lr, g.momentum, g.dampening, g.weight_decay, g.nesterov, g.maximize}, {0.5, 0, 0, 0, false, false})
  g = optim.Adam({p}).param_groups[1]
  T.eq({g.lr, g.betas, g.eps, g.weight_decay, g.amsgrad, g.maximize}, {1e-3, {0.9, 0.999}, 1e-8, 0, false, false})
  g = optim.RMSprop({p}).param_groups[1]
  T.eq({g.lr, g.alpha, g.eps, g.weight_decay, g.momentum, g.centered}, {1e-2, 0.99, 1e-8, 0, 0, false})
end)

T.test("state is kept per parameter, with PyTorch's keys", function()
  local a, b = torch.tensor({1.0, 2.0}), torch.tensor({{3.0}})
  local opt = optim.Adam({a, b}, {amsgrad = true})
  a.grad = torch.tensor({1.0, -1.0})
  b.grad = torch.tensor({{2.0}})
  opt:step()
  a.grad = torch.tensor({1.0, 1.0})
  opt:step()
  T.eq(opt.state[a].step:item(), 2)
  T.eq(opt.state[b].step:item(), 2)
  T.eq(opt.state[a].exp_avg.shape, {2})
  T.eq(opt.state[b].exp_avg.shape, {1, 1})
  T.truthy(opt.state[a].max_exp_avg_sq ~= nil)
  T.near(opt.state[a].exp_avg, {0.1 * 0.9 + 0.1, -0.1 * 0.9 + 0.1}, 1e-6)
  T.near(opt.state[b].exp_avg, {{0.2 * 0.9 + 0.2}}, 1e-6)
  local r = optim.RMSprop({a}, {momentum = 0.5, centered = true})
  r:step()
  T.truthy(r.state[a].momentum_buffer ~= nil and r.state[a].grad_avg ~= nil)
  local s = optim.SGD({a}, {lr = 0.1})
  s:step()
  T.eq(s.state[a].momentum_buffer, nil)  -- no buffer without momentum
end)

T.test("parameters whose grad is nil are untouched and get no state", function()
  local a, b = torch.tensor({1.0, 2.0}), torch.tensor({5.0, 6.0})
  for _, make in ipairs({optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop}) do
    a.grad, b.grad = nil, nil
    local opt = make({a, b}, {lr = 0.1, momentum = make == optim.SGD and 0.9 or nil})
    a.grad = torch.tensor({1.0, 1.0})
    opt:step()
    T.eq(b:tolist(), {5.0, 6.0})
    T.eq(opt.state[b], nil)
    T.truthy(opt.state[a] ~= nil)
  end
end)

T.test("param groups: each group's own options, the defaults for the rest", function()
  local a, b = torch.tensor({1.0}, {dtype = "float64"}), torch.tensor({1.0}, {dtype = "float64"})
  local opt = optim.SGD({{params = {a}}, {params = b, lr = 0.01, momentum = 0.5}}, {lr = 0.1})
  T.eq(#opt.param_groups, 2)
  T.eq(opt.param_groups[1].lr, 0.1)
  T.eq(opt.param_groups[2].lr, 0.01)
  T.eq(opt.param_groups[2].momentum, 0.5)
  T.eq(opt.param_groups[2].params[1] == b, true)
  a.grad = torch.tensor({2.0}, {dtype = "float64"})
  b.grad = torch.tensor({2.0}, {dtype = "float64"})
  opt:step()
  T.near(a, {0.8}, 1e-15)
  T.near(b, {0.98}, 1e-15)
  local c = torch.tensor({0.0})
  opt:add_param_group({params = {c}, lr = 1})
  T.eq(#opt.param_groups, 3)
  T.eq(opt.param_groups[3].momentum, 0)
  T.error_usable(function() optim.SGD({{params = {a}}, {params = {c}}}) end, "SGD: lr is required")
  T.error_usable(function() opt:add_param_group({params = {a}}) end, "SGD: parameter 1 appears more than once")
end)

T.test("zero_grad: sets grads to nil by default, or zeroes them in place", function()
  local p = torch.tensor({1.0, 2.0})
  local opt = optim.SGD({p}, {lr = 0.1})
  p.grad = torch.tensor({3.0, 4.0})
  opt:zero_grad()
  T.eq(p.grad, nil)
  local g = torch.tensor({3.0, 4.0})
  p.grad = g
  opt:zero_grad(false)
  T.eq(p.grad:tolist(), {0, 0})
  T.eq(g:tolist(), {0, 0})  -- in place
  p.grad = torch.tensor({3.0, 4.0})
  opt:zero_grad{set_to_none = false}
  T.eq(p.grad:tolist(), {0, 0})
  opt:zero_grad{set_to_none = true}
  T.eq(p.grad, nil)
end)

T.test("step(closure) re-evaluates the loss with grad on and returns it", function()
  local p = torch.tensor({3.0}, {dtype = "float64", requires_grad = true})
  local opt = optim.SGD({p}, {lr = 0.25})
  local calls = 0
  local loss = opt:step(function()
    calls = calls + 1
    opt:zero_grad()
    local l = (p * p):sum()
    l:backward()
    return l
  end)
  T.eq(calls, 1)
  T.near(loss:item(), 9, 0)
  T.near(p, {3 - 0.25 * 6}, 1e-15)
  T.eq(torch.no_grad(function() return opt:step(torch.is_grad_enabled) end), true)  -- grad mode on inside
end)

T.test("backward then step: the seed's training loop shape", function()
  local p = torch.tensor(P0, {dtype = "float64", requires_grad = true})
  local target = torch.tensor(TARGET, {dtype = "float64"})
  local opt = optim.Adam({p}, {lr = 0.1})
  for _, s in ipairs(SCALES) do
    opt:zero_grad()
    local loss = ((p - target) ^ 2):sum() * (s / 2)
    loss:backward()
    opt:step()
  end
  T.near(p:detach(), PYTORCH.float64.Adam[1], 1e-12)
  T.eq(p.requires_grad, true)
  T.eq(p.is_leaf, true)
end)

T.test("float16 and bfloat16 parameters are computed in float32", function()
  for _, dtype in ipairs({"float16", "bfloat16"}) do
    for _, name in ipairs({"SGD", "Adam", "RMSprop"}) do
      local cfg = CONFIGS[name][2]
      local p = tide_run(name, cfg, dtype)
      T.eq(p.dtype, dtype)
      T.near(p, hand_run(name, cfg), dtype == "float16" and 1e-2 or 4e-2, name .. " " .. dtype)
    end
  end
end)

T.test("non-contiguous parameters and gradients", function()
  local base = torch.tensor({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}, {dtype = "float64"})
  local p = base:t()  -- a transposed view: updated through its strides
  local q = p:contiguous()
  local g = torch.tensor({{0.5, -1.0}, {2.0, 0.25}, {-3.0, 1.5}}, {dtype = "float64"})
  local gt = g:t():contiguous():t()  -- the same values, transposed layout
  local o1 = optim.Adam({p}, {lr = 0.1, amsgrad = true})
  local o2 = optim.Adam({q}, {lr = 0.1, amsgrad = true})
  for _ = 1, 3 do
    p.grad, q.grad = gt, g
    o1:step()
    o2:step()
  end
  T.near(p, q, 0)
  T.near(base, q:t(), 0)  -- the view wrote through to its base
end)

T.test("a big step gives the same bits on 1 and 2 threads", function()
  local saved = torch.get_num_threads()
  torch.manual_seed(7)
  local p0 = torch.randn(1000003)
  local g = torch.randn(1000003)
  local results = {}
  for _, threads in ipairs({1, 2}) do
    torch.set_num_threads(threads)
    local p = p0:clone()
    local opt = optim.Adam({p}, {lr = 0.01, amsgrad = true, weight_decay = 0.1})
    for _ = 1, 3 do
      p.grad = g
      opt:step()
    end
    local r = optim.RMSprop({p}, {momentum = 0.9, centered = true})
    p.grad = g
    r:step()
    results[threads] = p
  end
  torch.set_num_threads(saved)
  T.eq(results[1]:ne(results[2]):any():item(), false)
  T.truthy(results[1]:ne(p0):any():item())
end)

T.test("state_dict and load_state_dict carry the state over", function()
  local function run(opt, p, steps)
    for _ = 1, steps do
      p.grad = (p - 1) * 2
      opt:step()
    end
  end
  local p = torch.tensor({0.0, 3.0}, {dtype = "float64"})
  local opt = optim.Adam({p}, {lr = 0.1})
  run(opt, p, 2)
  local sd = opt:state_dict()
  T.eq(sd.param_groups[1].params, {1})
  T.eq(sd.state[1].step:item(), 2)
  local q = p:clone()
  local opt2 = optim.Adam({q}, {lr = 0.5})
  opt2:load_state_dict(sd)
  T.eq(opt2.param_groups[1].lr, 0.1)
  T.truthy(opt2.param_groups[1].params[1] == q)
  run(opt, p, 3)
  run(opt2, q, 3)
  T.near(q, p, 0)
  T.error_usable(function() optim.Adam({torch.zeros(3, {dtype = "float64"})}):load_state_dict(sd) end,
    "of parameter 1 has shape {2} but the parameter {3}")  -- exp_avg or exp_avg_sq, whichever comes first
  T.error_usable(function() optim.Adam({p, q}):load_state_dict(sd) end,
    "Adam.load_state_dict: parameter group 1 has 2 parameters but the saved one 1")
  T.error_usable(function() optim.Adam({p}):load_state_dict({}) end, "Adam.load_state_dict: expected a table")
end)

T.test("bad hyper-parameters are errors naming the optimizer and the value", function()
  local p = {torch.zeros(2)}
  T.error_usable(function() optim.SGD(p, {lr = -0.1}) end, "SGD: invalid lr -0.1 (must be >= 0)")
  T.error_usable(function() optim.SGD(p) end, "SGD: lr is required")
  T.error_usable(function() optim.SGD(p, {lr = 0.1, momentum = -1}) end, "SGD: invalid momentum -1")
  T.error_usable(function() optim.SGD(p, {lr = 0.1, weight_decay = -1e-4}) end, "SGD: invalid weight_decay -0.0001")
  T.error_usable(function() optim.SGD(p, {lr = 0.1, nesterov = true}) end,
    "SGD: nesterov momentum requires a momentum > 0 and zero dampening, got momentum 0 and dampening 0")
  T.error_usable(function() optim.SGD(p, {lr = 0.1, nesterov = true, momentum = 0.9, dampening = 0.1}) end,
    "got momentum 0.9 and dampening 0.1")
  T.error_usable(function() optim.SGD(p, {lr = "fast"}) end, "SGD: lr must be a number, got string")
  T.error_usable(function() optim.SGD(p, {lr = 0.1, momentom = 0.9}) end, "SGD: unknown keyword 'momentom' (did you mean 'momentum'? valid: dampening, differentiable, foreach, lr, maximize, momentum, nesterov, weight_decay)")
  T.error_usable(function() optim.SGD({{params = p, lr = -1}}, {lr = 0.1}) end, "SGD: invalid lr -1")
  T.error_usable(function() optim.Adam(p, {lr = -1}) end, "Adam: invalid lr -1")
  T.error_usable(function() optim.Adam(p, {eps = -1e-8}) end, "Adam: invalid eps -1e-08")
  T.error_usable(function() optim.Adam(p, {betas = {1.0, 0.999}}) end,
    "Adam: invalid beta parameter at index 1: 1.0 (must be in [0, 1))")
  T.error_usable(function() optim.Adam(p, {betas = {0.9, -0.5}}) end, "Adam: invalid beta parameter at index 2: -0.5")
  T.error_usable(function() optim.Adam(p, {betas = 0.9}) end, "Adam: betas must be a table of two numbers")
  T.error_usable(function() optim.Adam(p, {weight_decay = -1}) end, "Adam: invalid weight_decay -1")
  T.error_usable(function() optim.AdamW(p, {betas = {0.9, 1.5}}) end, "AdamW: invalid beta parameter at index 2: 1.5")
  T.error_usable(function() optim.RMSprop(p, {lr = -1}) end, "RMSprop: invalid lr -1")
  T.error_usable(function() optim.RMSprop(p, {alpha = -0.1}) end, "RMSprop: invalid alpha -0.1")
  T.error_usable(function() optim.RMSprop(p, {eps = -1}) end, "RMSprop: invalid eps -1")
  T.error_usable(function() optim.RMSprop(p, {momentum = -1}) end, "RMSprop: invalid momentum -1")
  T.error_usable(function() optim.RMSprop(p, {weight_decay = -1}) end, "RMSprop: invalid weight_decay -1")
  T.error_usable(function() optim.Adam(p, 0.1) end, "Adam: options must be a keyword table")
end)

T.test("bad parameter lists are errors", function()
  T.error_usable(function() optim.SGD({}, {lr = 0.1}) end, "SGD: got an empty parameter list")
  T.error_usable(function() optim.SGD(torch.zeros(2), {lr = 0.1}) end,
    "SGD: params must be a list of tensors or of parameter groups ({params=..., lr=...}), got a tensor")
  T.error_usable(function() optim.Adam({torch.zeros(2), 5}) end, "Adam: can only optimize tensors, but parameter 2 is a number")
  T.error_usable(function() optim.Adam({torch.zeros(2, {dtype = "int64"})}) end,
    "Adam: can only optimize floating-point tensors, but parameter 1 has dtype int64")
  local a = torch.zeros(2)
  T.error_usable(function() optim.Adam({a, a}) end, "Adam: parameter 2 appears more than once")
  T.error_usable(function() optim.Adam({{params = {a}}, {params = {a}}}) end, "Adam: parameter 1 appears more than once")
  T.error_usable(function() optim.Adam({{params = 3}}) end,
    "Adam: a parameter group's params must be a list of tensors, got number")
  T.error_usable(function() optim.Adam({{params = {a}}, 7}) end, "Adam: a parameter group must be a table")
  local w = torch.zeros(2, {requires_grad = true})
  T.error_usable(function() optim.SGD({w * 2}, {lr = 0.1}) end, "SGD: can't optimize a non-leaf tensor (parameter 1)")
end)

T.test("a failed step leaves the parameter and its state as they were", function()
  local p = torch.tensor({1.0, 2.0}, {dtype = "float64"})
  local opt = optim.SGD({p}, {lr = 0.1, momentum = 0.9, dampening = 0.5})
  p.grad = torch.tensor({1.0, -1.0}, {dtype = "float64"})
  opt.param_groups[1].lr = "fast"  -- groups are plain tables: each step checks them first
  T.error_usable(function() opt:step() end, "SGD: lr must be a number, got string")
  T.eq(p:tolist(), {1.0, 2.0})
  T.eq(opt.state[p], nil)
  opt.param_groups[1].lr = 0.1
  opt:step()  -- still the first step: the buffer takes the gradient undamped
  T.near(opt.state[p].momentum_buffer, {1.0, -1.0}, 0)
  T.near(p, {0.9, 2.1}, 1e-15)
  local a = optim.Adam({p})
  a.param_groups[1].eps = "tiny"
  T.error_usable(function() a:step() end, "Adam: eps must be a number, got string")
  T.eq(a.state[p], nil)
end)

T.test("the built-in optimizers' hooks called by a script check their arguments", function()
  local w = torch.ones(2, {requires_grad = true})
  local opt = optim.SGD({w}, {lr = 0.1, momentum = 0.9})
  T.error_usable(function() opt:validate() end, "SGD:validate: expected a table of options, got nil")
  T.error_usable(function() opt:validate({lr = 1}, 1) end, "SGD:validate: expected true, false or nil for defaults_only, got 1")
  T.error_usable(function() opt:step_group(1) end,
    "SGD:step_group: expected a parameter group (a table with a list params), got 1")
  T.error_usable(function() opt:step_group({params = {w}}, nil) end, "SGD:step_group: expected a table for state, got nil")
  T.error_usable(function() opt:step_group({params = {w}}, {}, 5) end, "SGD:step_group: expected at most 2 arguments")
  T.error_usable(function() opt:step_group({params = {w, "x"}, lr = 0.1}, {}) end,
    "_sgd_group_step_: parameter 2 is a string, not a tensor")
  w.grad = torch.ones(2)
  T.error_usable(function() opt:step_group({params = {w}, lr = 0.1}, {[w] = 3}) end,
    "_sgd_group_step_: the state of parameter 1 is a number, not a table")
  T.error_usable(function()
    opt:step_group({params = {w}, lr = 0.1, momentum = 0.9}, {[w] = {momentum_buffer = "b"}})
  end, "_sgd_group_step_: the momentum_buffer of parameter 1 is a string, not a tensor")
  local adam = optim.Adam({w})
  T.error_usable(function() adam:update(w, "g", {}, {}) end, "Adam:update: expected a tensor for grad, got \"g\"")
  T.error_usable(function() adam:validate(false) end, "Adam:validate: expected a table of options, got false")
  -- called right, they work as the framework calls them
  local s = {}
  torch.no_grad(function()
    opt:step_group({params = {w}, lr = 0.5, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false,
      maximize = false}, s)
  end)
  T.eq(w:detach():tolist(), {0.5, 0.5})
  T.eq(type(s[w]), "table")
  -- the group's options are read from the group, typed
  T.error_usable(function() torch._sgd_group_step_({params = {w}}, {}) end, "SGD: lr must be a number, got nil")
  T.error_usable(function() torch._sgd_group_step_({params = {w}, lr = 0.1, momentum = "m"}, {}) end,
    "SGD: momentum must be a number, got a string")
  T.error_usable(function() torch._sgd_group_step_({params = {w}, lr = 0.1, nesterov = 1}, {}) end,
    "SGD: nesterov must be true or false, got a number")
  T.error_usable(function() torch._sgd_group_step_({params = 3, lr = 0.1}, {}) end,
    "_sgd_group_step_: the group's params is a number, not a list")
  T.error_usable(function() torch._sgd_group_step_({w}, {}) end, "SGD: lr must be a number, got nil")
  -- the state tables are read and written raw: no metamethod runs inside the engine call
  local trap = function() error("a metamethod ran") end
  local held = setmetatable({}, {__index = trap, __newindex = trap})
  torch.no_grad(function() torch._sgd_group_step_({params = {w}, lr = 0.5, momentum = 0.9}, {[w] = held}) end)
  T.truthy(torch.is_tensor(rawget(held, "momentum_buffer")))
  opt:validate({lr = 1, momentum = 0, weight_decay = 0, dampening = 0, nesterov = false})
end)

T.test("a subclass of SGD with its own update: step calls it, not SGD's group step", function()
  local Halved = optim.SGD:extend("HalvedSGD")
  function Halved:update(p, g, state, group)
    p:sub_(g * (group.lr / 2))
    state.calls = (state.calls or 0) + 1
  end
  local p = torch.tensor({1.0, 2.0}, {dtype = "float64", requires_grad = true})
  local opt = Halved({p}, {lr = 0.5})
  p.grad = torch.tensor({1.0, -1.0}, {dtype = "float64"})
  opt:step()
  T.eq(p:detach():tolist(), {0.75, 2.25})
  T.eq(opt.state[p].calls, 1)
end)

T.test("a user optimizer from optim.Optimizer:extend", function()
  local SignSGD = optim.Optimizer:extend("SignSGD")
  SignSGD.defaults = {lr = 0.1}
  function SignSGD:update(p, g, state, group)
    torch.no_grad(function() p:sub_(g:sign() * group.lr) end)
    state.steps = (state.steps or 0) + 1
  end
  local p = torch.tensor({1.0, -1.0}, {dtype = "float64", requires_grad = true})
  local opt = SignSGD({p}, {lr = 0.25})
  p.grad = torch.tensor({3.0, -0.5}, {dtype = "float64"})
  opt:step()
  T.near(p:detach(), {0.75, -0.75}, 1e-15)
  T.eq(opt.state[p].steps, 1)
  T.error_usable(function() SignSGD({p}, {momentum = 0.9}) end, "SignSGD: unknown keyword 'momentum'")
  local Bare = optim.Optimizer:extend("Bare")
  T.error_usable(function() Bare({p}):step() end,
    "Bare: a subclass of optim.Optimizer must define update(param, grad, state, group)")
end)

-- The fused kernels called directly (as torch.optim calls them).
T.test("torch._sgd_step_ / _adam_step_ / _rmsprop_step_ directly", function()
  local p = torch.tensor({1.0, 2.0, 3.0}, {dtype = "float64"})
  local g = torch.tensor({0.5, -1.0, 2.0}, {dtype = "float64"})
  local buf = torch.zeros_like(p)
  T.truthy(torch._sgd_step_(p, g, buf, {lr = 0.1, momentum = 0.9, new_buffer = true}) == p)
  T.near(p, {0.95, 2.1, 2.8}, 1e-15)
  T.near(buf, {0.5, -1.0, 2.0}, 1e-15)
  torch._sgd_step_(p, g, buf, {lr = 0.1, momentum = 0.9, nesterov = true})
  -- buf = 0.9 buf + g = 1.9 g; d = g + 0.9 buf = 2.71 g
  T.near(buf, {0.95, -1.9, 3.8}, 1e-15)
  T.near(p, {0.95 - 0.1 * 2.71 * 0.5, 2.1 + 0.271, 2.8 - 0.1 * 2.71 * 2}, 1e-14)
  -- maximize, weight_decay and dampening, in PyTorch's order: d = -g + wd p, buf = m buf +
  -- (1 - dampening) d, p -= lr buf (the per-parameter step that optim.SGD's group step repeats)
  local q = torch.tensor({1.0, 2.0}, {dtype = "float64"})
  local qb = torch.tensor({0.2, 0.4}, {dtype = "float64"})
  torch._sgd_step_(q, torch.tensor({0.5, -1.0}, {dtype = "float64"}), qb,
    {lr = 0.1, momentum = 0.9, dampening = 0.5, weight_decay = 0.1, maximize = true})
  T.near(qb, {-0.02, 0.96}, 1e-15)
  T.near(q, {1.002, 1.904}, 1e-15)
  local m, v, vmax = torch.zeros_like(p), torch.zeros_like(p), torch.zeros_like(p)
  local q = torch.tensor({0.0, 0.0, 0.0}, {dtype = "float64"})
  torch._adam_step_(q, g, m, v, vmax, {lr = 0.5, step = 1, amsgrad = true})
  T.near(q, {-0.5 * 0.5 / (0.5 + 1e-8), 0.5 / (1 + 1e-8), -0.5 * 2 / (2 + 1e-8)}, 1e-14)
  T.near(vmax, v, 0)
  local sq = torch.zeros_like(p)
  local r = torch.tensor({1.0, 1.0, 1.0}, {dtype = "float64"})
  torch._rmsprop_step_(r, g, sq, nil, nil, {lr = 0.01, alpha = 0.75})
  -- square_avg = 0.25 g^2: p -= 0.01 * g / (0.5 |g| + eps)
  T.near(r, {1 - 0.01 * 0.5 / (0.25 + 1e-8), 1 + 0.01 / (0.5 + 1e-8), 1 - 0.01 * 2 / (1 + 1e-8)}, 1e-14)
end)

T.test("the fused kernels reject bad operands, naming the optimizer and the values", function()
  local p, g = torch.zeros(2, 2), torch.zeros(2, 2)
  T.error_usable(function() torch._sgd_step_(p, torch.zeros(4), nil, {lr = 0.1}) end,
    "SGD: the grad of shape {4} does not match the parameter's shape {2,2}")
  T.error_usable(function() torch._sgd_step_(p, g:double(), nil, {lr = 0.1}) end,
    "SGD: the grad has dtype float64 but the parameter has float32")
  T.error_usable(function() torch._sgd_step_(torch.zeros(2, {dtype = "int32"}), torch.zeros(2, {dtype = "int32"}), nil, {lr = 1}) end,
    "SGD: parameters must be float16, bfloat16, float32 or float64, got int32")
  T.error_usable(function() torch._sgd_step_(p, g, nil, {lr = 0.1, momentum = 0.9}) end,
    "SGD: momentum=0.9 needs the state tensor momentum_buffer, got nil")
  T.error_usable(function() torch._sgd_step_(p, g, torch.zeros(3), {lr = 0.1, momentum = 0.9}) end,
    "SGD: the momentum_buffer of shape {3} does not match the parameter's shape {2,2}")
  T.error_usable(function() torch._sgd_step_(p, g, nil, {}) end, "SGD: keyword 'lr' is required")
  T.error_usable(function() torch._sgd_step_(torch.zeros(1):expand(3), torch.zeros(3), nil, {lr = 1}) end,
    "SGD: unsupported operation: more than one element of the parameter refers to a single memory location. Please clone() the tensor before performing the operation.")
  local m, v = torch.zeros(2, 2), torch.zeros(2, 2)
  T.error_usable(function() torch._adam_step_(p, g, m, v, nil, {lr = 0.1, step = 1, amsgrad = true}) end,
    "Adam: amsgrad=true needs the state tensor max_exp_avg_sq, got nil")
  T.error_usable(function() torch._adam_step_(p, g, m, v:half(), nil, {lr = 0.1, step = 1}) end,
    "Adam: the exp_avg_sq has dtype float16 but the parameter has float32")
  T.error_usable(function() torch._adam_step_(p, g, m, v, nil, {lr = 0.1, step = 0, decoupled_weight_decay = true}) end,
    "AdamW: step must be >= 1 (the count including this step), got 0")
  T.error_usable(function() torch._adam_step_(p, g, torch.zeros(1):expand(2, 2), v, nil, {lr = 0.1, step = 1}) end,
    "Adam: unsupported operation: more than one element of the exp_avg refers to a single memory location. Please clone() the tensor before performing the operation.")
  T.error_usable(function() torch._rmsprop_step_(p, g, m, nil, nil, {lr = 0.1, centered = true}) end,
    "RMSprop: centered=true needs the state tensor grad_avg, got nil")
  T.error_usable(function() torch._rmsprop_step_(p, g, m, nil, nil, {lr = 0.1, momentum = 0.5}) end,
    "RMSprop: momentum=0.5 needs the state tensor momentum_buffer, got nil")
  T.error_usable(function() torch._rmsprop_step_(p, g, nil, nil, nil, {lr = 0.1}) end,
    "_rmsprop_step_: expected a tensor as argument 3, got nil")
  -- The state's step count tensor: one float32/float64 element on the CPU, a whole number,
  -- sharing memory with no operand.
  local function adam(count) return function() torch._adam_step_(p, g, m, v, nil, {lr = 0.1, step = count}) end end
  T.error_usable(adam(torch.zeros(2)), "Adam: the step count must be a tensor of one element, got shape {2}")
  T.error_usable(adam(torch.zeros({}, {dtype = "int64"})), "Adam: the step count must be a float32 or float64 tensor, got int64")
  T.error_usable(adam(m:view(-1)[{{1, 1}}]), "Adam: the step count shares memory with the parameter, its gradient or its state")
  T.error_usable(adam(torch.tensor(-1.0)), "Adam: the step count tensor holds -1, expected a whole number >= 0")
  T.error_usable(adam(torch.tensor(2.5, {dtype = "float64"})), "Adam: the step count tensor holds 2.5, expected a whole number >= 0")
  T.error_usable(adam(torch.tensor(2 ^ 24)), "Adam: the step count tensor holds 16777216, expected a whole number >= 0")
  T.error_usable(adam("x"), "_adam_step_: keyword 'step' must be an integer")
  T.error_usable(function() torch._rmsprop_step_(p, g, m, nil, nil, {lr = 0.1, step = 3}) end,
    "_rmsprop_step_: keyword 'step' must be a tensor, got a number")
  local bad = torch.tensor(-3.0)
  T.error_usable(function() torch._rmsprop_step_(p, g, m, nil, nil, {lr = 0.1, step = bad}) end,
    "RMSprop: the step count tensor holds -3, expected a whole number >= 0")
  T.eq(bad:item(), -3)  -- a refused count is left as it was
  T.eq(p:tolist(), {{0, 0}, {0, 0}})  -- nothing was written by a rejected step
  T.eq(m:tolist(), {{0, 0}, {0, 0}})
end)

-- The fused steps of Adagrad, Adamax, NAdam and RAdam called directly (torch.optim's
-- per-op formulas, bit for bit: test_optim_more.lua checks that against those ops).
T.test("torch._adagrad_step_ / _adamax_step_ / _nadam_step_ / _radam_step_ directly", function()
  local f64 = {dtype = "float64"}
  local g = torch.tensor({0.5, -1.0, 2.0}, f64)
  local function fresh() return torch.tensor({1.0, 2.0, 3.0}, f64), torch.zeros(3, f64), torch.zeros(3, f64) end
  -- Adagrad: sum = g^2, p -= lr * g / (|g| + eps); the count advances.
  local p, sum = fresh()
  local count = torch.zeros({}, f64)
  T.truthy(torch._adagrad_step_(p, g, sum, {lr = 0.1, step = count}) == p)
  T.near(p, {0.9, 2.1, 2.9}, 1e-9)
  T.eq({sum:tolist(), count:item()}, {{0.25, 1, 4}, 1})
  -- lr_decay: the second step's rate is lr / (1 + 1 * lr_decay).
  local q = p:clone()
  torch._adagrad_step_(p, g, sum, {lr = 0.1, lr_decay = 1, step = count})
  T.near(p, {q[1]:item() - 0.05 * 0.5 / math.sqrt(0.5), q[2]:item() + 0.05 / math.sqrt(2), q[3]:item() - 0.05 * 2 / math.sqrt(8)}, 1e-9)
  -- Adamax, step 1: exp_avg = 0.1 g, exp_inf = |g| + eps, p -= lr / 0.1 * 0.1 g / |g|.
  local m, u
  p, m, u = fresh()
  torch._adamax_step_(p, g, m, u, {lr = 0.1, step = 1})
  T.near(p, {0.9, 2.1, 2.9}, 1e-7)
  T.near(u, {0.5, 1, 2}, 1e-8)
  -- RAdam, step 1: rho_t = 1 <= 5, the plain step p -= lr * exp_avg / (1 - beta1).
  local v
  p, m, v = fresh()
  torch._radam_step_(p, g, m, v, {lr = 0.1, step = torch.zeros({})})
  T.near(p, {0.95, 2.1, 2.8}, 1e-12)
  -- NAdam: mu_product (float32 here) is multiplied by mu = beta1 (1 - 0.5 * 0.96^(0.004 step)).
  p, m, v = fresh()
  local mu_product = torch.ones({})
  local mu1 = 0.9 * (1 - 0.5 * 0.96 ^ 0.004)
  torch._nadam_step_(p, g, m, v, mu_product, {lr = 0.1, step = 1})
  T.near(mu_product:item(), mu1, 1e-7)
  torch._nadam_step_(p, g, m, v, mu_product, {lr = 0.1, step = 2})
  T.near(mu_product:item(), mu1 * 0.9 * (1 - 0.5 * 0.96 ^ 0.008), 1e-7)
  T.eq(mu_product.dtype, "float32")
end)

T.test("the fused Adagrad, Adamax, NAdam and RAdam steps reject bad operands", function()
  local p, g, m, v = torch.zeros(2, 2), torch.ones(2, 2), torch.zeros(2, 2), torch.zeros(2, 2)
  local count = torch.zeros({})
  T.error_usable(function() torch._radam_step_(p, g, m, v, {lr = 0.1, maximize = true}) end,
    "_radam_step_: unknown keyword 'maximize' (valid: lr, beta1, beta2, eps, weight_decay, step)")
  T.error_usable(function() torch._nadam_step_(p, g, m, v, nil, {lr = 0.1}) end,
    "_nadam_step_: expected a tensor as argument 5, got nil")
  T.error_usable(function() torch._nadam_step_(p, g, m, v, torch.zeros({}, {dtype = "int64"}), {lr = 0.1}) end,
    "NAdam: the mu_product must be a float32 or float64 tensor, got int64")
  T.error_usable(function() torch._nadam_step_(p, g, m, v, torch.ones(2), {lr = 0.1}) end,
    "NAdam: the mu_product must be a tensor of one element, got shape {2}")
  T.error_usable(function() torch._nadam_step_(p, g, m, v, count, {lr = 0.1, step = count}) end,
    "NAdam: the mu_product shares memory with the step count")
  T.error_usable(function() torch._nadam_step_(p, g, m, v, m:view(-1)[{{1, 1}}], {lr = 0.1}) end,
    "NAdam: the mu_product shares memory with the parameter, its gradient or its state")
  T.error_usable(function() torch._adamax_step_(p, g, m, v, {lr = 0.1, step = 0}) end,
    "Adamax: step must be >= 1 (the count including this step), got 0")
  T.error_usable(function() torch._adamax_step_(p, g, m, v:half(), {lr = 0.1}) end,
    "Adamax: the exp_inf has dtype float16 but the parameter has float32")
  T.error_usable(function() torch._radam_step_(p, g, m, v, {lr = 0.1, step = torch.tensor(2.5, {dtype = "float64"})}) end,
    "RAdam: the step count tensor holds 2.5, expected a whole number >= 0")
  T.error_usable(function() torch._radam_step_(p, g, m, m, {lr = 0.1}) end,
    "RAdam: the exp_avg_sq shares memory with the exp_avg; each state buffer needs its own tensor")
  T.error_usable(function() torch._adagrad_step_(p, g, m, {}) end, "Adagrad: keyword 'lr' is required")
  T.error_usable(function() torch._adagrad_step_(p, g, torch.zeros(3), {lr = 0.1}) end,
    "Adagrad: the sum of shape {3} does not match the parameter's shape {2,2}")
  T.error_usable(function() torch._adagrad_step_(p, g, m, {lr = 0.1, step = torch.zeros(2)}) end,
    "Adagrad: the step count must be a tensor of one element, got shape {2}")
  -- A refused step writes nothing: not the count, the mu_product or a tensor.
  local mu = torch.ones({})
  local bad = torch.tensor(-1.0)
  T.error_usable(function() torch._nadam_step_(p, g, m, v, mu, {lr = 0.1, step = bad}) end,
    "NAdam: the step count tensor holds -1, expected a whole number >= 0")
  T.eq({bad:item(), mu:item(), p:tolist(), m:tolist()}, {-1, 1, {{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}})
end)

T.test("Adam and RMSprop count steps in a tensor that the fused step advances", function()
  local p = torch.tensor({1.0, 2.0}, {dtype = "float64"})
  local count = torch.tensor(4.0, {dtype = "float64"})
  local m, v = torch.zeros(2, {dtype = "float64"}), torch.zeros(2, {dtype = "float64"})
  local q, m2, v2 = p:clone(), m:clone(), v:clone()
  local g = torch.tensor({0.5, -1.0}, {dtype = "float64"})
  local x = torch.tensor(2.0, {dtype = "float64", requires_grad = true})
  local y = x * count  -- saves the count for backward
  torch._adam_step_(p, g, m, v, nil, {lr = 0.1, step = count})
  torch._adam_step_(q, g, m2, v2, nil, {lr = 0.1, step = 5})
  T.eq(count:item(), 5)
  T.error(function() y:backward() end, "was modified by an in-place operation (its version was 0, now 1)")  -- the write is versioned
  T.truthy(torch.equal(p, q), "a count tensor at 4 steps as step = 5")
  torch._rmsprop_step_(p, g, m, nil, nil, {lr = 0.1, step = count})
  T.eq(count:item(), 6)
  -- The optimizers' counts follow the default dtype, as PyTorch's _get_scalar_dtype.
  local saved = torch.get_default_dtype()
  torch.set_default_dtype(torch.float64)
  local opt = optim.RMSprop({torch.zeros(2)}, {lr = 0.1})
  opt.param_groups[1].params[1].grad = torch.ones(2)
  opt:step()
  torch.set_default_dtype(saved)
  local s = opt.state[opt.param_groups[1].params[1]]
  T.eq({s.step.dtype, s.step:item(), s.step.device.type}, {torch.float64, 1, "cpu"})
end)

T.test("load_state_dict: a step count given as a number or a tensor becomes a new count tensor", function()
  local function trained()
    local p = torch.tensor({0.0, 3.0}, {dtype = "float64"})
    local opt = optim.Adam({p}, {lr = 0.1})
    for _ = 1, 3 do
      p.grad = (p - 1) * 2
      opt:step()
    end
    return p, opt
  end
  local p, opt = trained()
  for _, given in ipairs({3, torch.tensor(3.0), torch.tensor({3.0}, {dtype = "float64"})}) do
    local q = p:clone()
    local opt2 = optim.Adam({q}, {lr = 0.1})
    local sd = opt:state_dict()
    local s = {}
    for k, v in pairs(sd.state[1]) do s[k] = v end
    s.step = given
    opt2:load_state_dict({state = {s}, param_groups = sd.param_groups})
    local step = opt2.state[q].step
    T.eq({step:item(), step.shape}, {3, {}})
    T.truthy(not rawequal(step, opt.state[p].step), "a copy, not the saved tensor")
    local r = p:clone()
    local opt3 = optim.Adam({r}, {lr = 0.1})
    opt3:load_state_dict(opt:state_dict())
    q.grad, r.grad = torch.ones(2, {dtype = "float64"}), torch.ones(2, {dtype = "float64"})
    opt2:step()
    opt3:step()
    T.truthy(torch.equal(q, r))
    T.eq(opt2.state[q].step:item(), 4)
  end
  local function load(step)
    local sd = opt:state_dict()
    local s = {}
    for k, v in pairs(sd.state[1]) do s[k] = v end
    s.step = step
    return function() optim.Adam({p:clone()}):load_state_dict({state = {s}, param_groups = sd.param_groups}) end
  end
  T.error_usable(load(-1), "Adam.load_state_dict: state 'step' of parameter 1 is -1, expected a whole number >= 0")
  T.error_usable(load(1.5), "Adam.load_state_dict: state 'step' of parameter 1 is 1.5, expected a whole number >= 0")
  T.error_usable(load(torch.zeros(2)), "Adam.load_state_dict: state 'step' of parameter 1 has 2 elements, expected one")
  T.error_usable(load(true), "Adam.load_state_dict: state 'step' of parameter 1 is a boolean, expected a number or a one-element tensor")
end)

-- The lr of both groups after construction and after each step.
local function schedule(make, n)
  local opt = optim.SGD({{params = {torch.zeros(1)}, lr = 0.1}, {params = {torch.zeros(1)}, lr = 0.02}}, {lr = 1.0})
  local sched = make(opt)
  local out = {sched:get_last_lr()}
  for _ = 1, n do
    opt:step()
    sched:step()
    out[#out + 1] = sched:get_last_lr()
    T.eq(opt.param_groups[1].lr, out[#out][1])
  end
  return out, sched, opt
end

T.test("StepLR: PyTorch's lr sequence", function()
  local lrs = schedule(function(o) return optim.lr_scheduler.StepLR(o, {step_size = 3, gamma = 0.5}) end, 10)
  T.near(lrs, SCHEDULES.step, 0)
  local _, sched = schedule(function(o) return optim.lr_scheduler.StepLR(o, {step_size = 2}) end, 4)
  T.near(sched:get_last_lr(), {0.1 * 0.1 * 0.1, 0.02 * 0.1 * 0.1}, 1e-15)  -- gamma defaults to 0.1
  sched:step(7)  -- the closed form: base_lr * gamma ^ (7 // 2)
  T.near(sched:get_last_lr(), {0.1 * 0.1 ^ 3, 0.02 * 0.1 ^ 3}, 1e-15)
  T.eq(sched.last_epoch, 7)
end)

T.test("CosineAnnealingLR: PyTorch's recursive values, past T_max too", function()
  local lrs = schedule(function(o)
    return optim.lr_scheduler.CosineAnnealingLR(o, {T_max = 5, eta_min = 0.01})
  end, 15)
  T.near(lrs, SCHEDULES.cosine, 0)  -- bit for bit: the recurrence, not the closed form
  lrs = schedule(function(o) return optim.lr_scheduler.CosineAnnealingLR(o, {T_max = 4}) end, 9)
  T.near(lrs, SCHEDULES.cosine0, 0)
  local _, sched = schedule(function(o) return optim.lr_scheduler.CosineAnnealingLR(o, {T_max = 4}) end, 0)
  sched:step(2)
  T.near(sched:get_last_lr(), {0.05, 0.01}, 1e-15)
end)

T.test("schedulers set initial_lr and resume from last_epoch", function()
  local opt = optim.SGD({torch.zeros(1)}, {lr = 0.1})
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 2, last_epoch = 3}) end,
    "StepLR: param 'initial_lr' is not specified in param_groups[1] when resuming an optimizer")
  local s = optim.lr_scheduler.StepLR(opt, {step_size = 2, gamma = 0.5})
  T.eq(opt.param_groups[1].initial_lr, 0.1)
  s:step()
  s:step()
  T.near(opt.param_groups[1].lr, 0.05, 1e-15)
  -- a new scheduler resuming at epoch 3 continues the recurrence from the current lr
  local r = optim.lr_scheduler.StepLR(opt, {step_size = 2, gamma = 0.5, last_epoch = 3})
  T.eq(r.last_epoch, 4)
  T.near(r:get_last_lr(), {0.025}, 1e-15)
end)

T.test("bad scheduler arguments are errors", function()
  local opt = optim.SGD({torch.zeros(1)}, {lr = 0.1})
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 0}) end,
    "StepLR: step_size must be a positive integer, got 0")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {}) end, "StepLR: step_size must be a positive integer, got nil")
  T.error_usable(function() optim.lr_scheduler.StepLR(opt, {step_size = 2, gamma = "x"}) end,
    "StepLR: gamma must be a number, got string")
  T.error_usable(function() optim.lr_scheduler.StepLR({}, {step_size = 2}) end, "StepLR: expected an optimizer, got a table")
  T.error_usable(function() optim.lr_scheduler.CosineAnnealingLR(opt, {T_max = 0}) end,
    "CosineAnnealingLR: T_max must be a number > 0, got 0")
  T.error_usable(function() optim.lr_scheduler.CosineAnnealingLR(opt, {T_max = 3, last_epoch = -2}) end,
    "CosineAnnealingLR: last_epoch must be an integer >= -1, got -2")
  local s = optim.lr_scheduler.CosineAnnealingLR(opt, {T_max = 3})
  T.error_usable(function() s:step(-1) end, "CosineAnnealingLR:step: epoch must be an integer >= 0, got -1")
end)

T.test("torch.optim is the global optim and require 'torch.optim'", function()
  T.truthy(require("torch.optim") == torch.optim)
  T.truthy(optim == torch.optim)
  T.truthy(rawget(_G, "optim") == torch.optim)
end)

T.done()
