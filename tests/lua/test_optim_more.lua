-- torch.optim beyond SGD/Adam/RMSprop: Adagrad, Adadelta, Adamax, NAdam, RAdam, LBFGS,
-- amsgrad/maximize, parameter groups, state dicts that resume a run exactly, and the
-- lr_scheduler classes over 100 epochs, checked against PyTorch 1.13's numbers in float64.
-- The numbers are in tests/optim/expected.lua, written by tests/optim/make_expected.py
-- (run it with /usr/bin/python3 from the repository root); every problem below is the one
-- that script runs, written out the same way.
local here = arg[0]:match("(.*/)") or "./"
local T = dofile(here .. "harness.lua")
local torch = torch or require "torch"
local optim = torch.optim
local S = optim.lr_scheduler
local E = dofile(here .. "../optim/expected.lua")

local f64 = {dtype = "float64"}

local function flat(t) return t:reshape(-1):tolist() end

-- Exact equality of two lists of numbers, the first difference in the message.
local function same(got, want, what)
  T.eq(#got, #want, what .. ": length")
  for i = 1, #want do
    if got[i] ~= want[i] then
      error(string.format("%s: element %d is %.17g, PyTorch %.17g", what, i, got[i], want[i]), 2)
    end
  end
end

-- Agreement to 1e-14 relative: PyTorch's CPU kernels compute add(x, y, alpha=a) with a fused
-- multiply-add (vec::fmadd, and FMA-contracted scalar loops), which rounds once where tide's
-- tensor ops round twice; after 10 steps the results differ in the last bit or two.
local function close(got, want, what)
  T.eq(#got, #want, what .. ": length")
  for i = 1, #want do
    if not (math.abs(got[i] - want[i]) <= 1e-14 * math.max(1, math.abs(want[i]))) then
      error(string.format("%s: element %d is %.17g, PyTorch %.17g", what, i, got[i], want[i]), 2)
    end
  end
end

-- The optimizer problem: p (2x2) and q (3), at step t the gradient SCALES[t] * (x - target).
local function problem()
  local p = torch.tensor(E.P0, f64):requires_grad_()
  local q = torch.tensor(E.Q0, f64):requires_grad_()
  return p, q, torch.tensor(E.PT, f64), torch.tensor(E.QT, f64)
end

local function set_grads(p, q, pt, qt, s)
  p.grad = (p:detach() - pt):mul(s)
  q.grad = (q:detach() - qt):mul(s)
end

-- Runs steps first..last of the problem.
local function run_steps(opt, p, q, pt, qt, first, last, groups)
  for i = first, last do
    if groups and i == 5 then opt.param_groups[1].lr = 0.2 end
    set_grads(p, q, pt, qt, E.SCALES[i])
    opt:step()
  end
end

local function describe_cfg(c)
  local keys = T.sorted_keys(c.cfg)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. T.show(c.cfg[k]) end
  return c.name .. "{" .. table.concat(parts, ", ") .. "}"
end

for _, c in ipairs(E.optim) do
  local label = describe_cfg(c)
  T.test(label .. " matches PyTorch after 10 steps", function()
    local p, q, pt, qt = problem()
    local opt = optim[c.name]({p, q}, c.cfg)
    run_steps(opt, p, q, pt, qt, 1, #E.SCALES)
    close(flat(p), c.result[1], label .. " p")
    close(flat(q), c.result[2], label .. " q")
  end)
  T.test(label .. " in float32 matches PyTorch to float32 precision", function()
    local p = torch.tensor(E.P0, {dtype = "float32"}):requires_grad_()
    local q = torch.tensor(E.Q0, {dtype = "float32"}):requires_grad_()
    local pt, qt = torch.tensor(E.PT, {dtype = "float32"}), torch.tensor(E.QT, {dtype = "float32"})
    local opt = optim[c.name]({p, q}, c.cfg)
    run_steps(opt, p, q, pt, qt, 1, #E.SCALES)
    T.eq(p.dtype, "float32")
    for _, s in pairs(opt.state[p]) do
      if torch.is_tensor(s) then T.eq(s.dtype, "float32") end
    end
    T.near(flat(p), c.float32[1], 2e-6, label .. " p")
    T.near(flat(q), c.float32[2], 2e-6, label .. " q")
  end)
  T.test(label .. " with two parameter groups and an lr changed midway", function()
    local p, q, pt, qt = problem()
    local opt = optim[c.name]({{params = {p}}, {params = {q}, lr = 0.03}}, c.cfg)
    run_steps(opt, p, q, pt, qt, 1, #E.SCALES, true)
    close(flat(p), c.groups[1], label .. " p")
    close(flat(q), c.groups[2], label .. " q")
  end)
  T.test(label .. ": 4 steps, state_dict, a new optimizer, load_state_dict, 6 steps == 10 steps", function()
    local p, q, pt, qt = problem()
    local opt = optim[c.name]({{params = {p}}, {params = {q}, lr = 0.03}}, c.cfg)
    run_steps(opt, p, q, pt, qt, 1, 4, true)
    local sd = opt:state_dict()
    local opt2 = optim[c.name]({{params = {p}}, {params = {q}}}, c.cfg)
    opt2:load_state_dict(sd)
    T.eq(opt2.param_groups[2].lr, 0.03)
    run_steps(opt2, p, q, pt, qt, 5, #E.SCALES, true)
    local p2, q2, pt2, qt2 = problem()
    local straight = optim[c.name]({{params = {p2}}, {params = {q2}, lr = 0.03}}, c.cfg)
    run_steps(straight, p2, q2, pt2, qt2, 1, #E.SCALES, true)
    same(flat(p), flat(p2), label .. " p resumed vs straight")
    same(flat(q), flat(q2), label .. " q resumed vs straight")
    close(flat(p), c.groups[1], label .. " p")
    close(flat(q), c.groups[2], label .. " q")
  end)
end

-- Adamax, NAdam and RAdam keep their step count (and NAdam its mu_product) in zero-dim
-- tensors, as PyTorch 2's state dicts do; state dicts of older tide versions, which held
-- numbers there, still load and resume the run exactly.
T.test("Adamax, NAdam, RAdam: step and mu_product are tensors; older state dicts with numbers load", function()
  for _, c in ipairs(E.optim) do
    if c.name == "Adamax" or c.name == "NAdam" or c.name == "RAdam" then
      local label = describe_cfg(c)
      local p, q, pt, qt = problem()
      local opt = optim[c.name]({{params = {p}}, {params = {q}, lr = 0.03}}, c.cfg)
      run_steps(opt, p, q, pt, qt, 1, 4, true)
      local st = opt.state[p]
      T.eq({st.step.dtype, st.step:dim(), tostring(st.step.device), st.step:item()}, {"float32", 0, "cpu", 4}, label)
      if c.name == "NAdam" then
        T.eq({st.mu_product.dtype, st.mu_product:dim(), tostring(st.mu_product.device)}, {"float32", 0, "cpu"}, label)
      end
      -- The state dict as older tide wrote it: numbers for step and mu_product.
      local sd = opt:state_dict()
      local old = {param_groups = sd.param_groups, state = {}}
      for i, s in pairs(sd.state) do
        local o = {}
        for k, v in pairs(s) do o[k] = (k == "step" or k == "mu_product") and v:item() or v end
        old.state[i] = o
      end
      local opt2 = optim[c.name]({{params = {p}}, {params = {q}}}, c.cfg)
      opt2:load_state_dict(old)
      T.truthy(torch.is_tensor(opt2.state[p].step) and opt2.state[p].step:item() == 4, label .. " loaded step")
      if c.name == "NAdam" then
        T.eq(opt2.state[p].mu_product:item(), st.mu_product:item(), label .. " loaded mu_product")
        T.truthy(opt2.state[p].mu_product ~= st.mu_product, label .. " mu_product copied")
      end
      run_steps(opt2, p, q, pt, qt, 5, #E.SCALES, true)
      local p2, q2, pt2, qt2 = problem()
      run_steps(optim[c.name]({{params = {p2}}, {params = {q2}, lr = 0.03}}, c.cfg), p2, q2, pt2, qt2, 1, #E.SCALES, true)
      same(flat(p), flat(p2), label .. " p resumed vs straight")
      same(flat(q), flat(q2), label .. " q resumed vs straight")
    end
  end
  local p = torch.zeros({2}, f64):requires_grad_()
  local opt = optim.NAdam({p})
  p.grad = torch.ones({2}, f64)
  opt:step()
  for _, bad in ipairs({{"x", "is a string, expected a number or a one-element tensor"},
                        {torch.ones({2}), "has 2 elements, expected one"}}) do
    local sd = opt:state_dict()
    sd.state[1] = {step = 1, exp_avg = sd.state[1].exp_avg, exp_avg_sq = sd.state[1].exp_avg_sq, mu_product = bad[1]}
    T.error(function() optim.NAdam({p}):load_state_dict(sd) end,
            "NAdam.load_state_dict: state 'mu_product' of parameter 1 " .. bad[2])
  end
end)

-- Adagrad, Adamax, NAdam and RAdam step with fused kernels (torch._adagrad_step_, ...)
-- whose results are, bit for bit, those of the tensor ops they replaced (commit 814d5af's
-- torch_optim.lua, written out here as the reference): on float16, bfloat16, float32 and
-- float64 parameters, contiguous, transposed and zero-dim (whose ops the zero-dim float64
-- step values promoted to float64), under both default dtypes (the count's and mu_product's
-- dtype), on the CPU and on a CUDA device when there is one.
local REF = {}
do
  local function new_count(n)
    local dt = torch.get_default_dtype() == torch.float64 and torch.float64 or torch.float32
    return n and torch.tensor(n + 0.0, {dtype = dt}) or torch.zeros({}, {dtype = dt})
  end
  local function advance(s) return s.step:add_(1):to(torch.float64) end
  local function effective_grad(p, g, group)
    if group.maximize then g = g:neg() end
    if group.weight_decay ~= 0 then g = g:add(p, {alpha = group.weight_decay}) end
    return g
  end
  local function addcmul_(t, a, b, v) return t:add_(a:mul(v):mul_(b)) end
  local function addcdiv_(t, a, b, v) return t:add_(a:mul(v):div_(b)) end
  function REF.Adagrad(p, g, s, group)
    if s.step == nil then s.step, s.sum = new_count(), torch.full_like(p, group.initial_accumulator_value) end
    g = effective_grad(p, g, group)
    local neg_clr = -group.lr
    if group.lr_decay ~= 0 then neg_clr = -group.lr / (s.step:to(torch.float64) * group.lr_decay + 1) end
    s.step:add_(1)
    s.sum:add_(g:mul(g))
    addcdiv_(p, g, s.sum:sqrt():add_(group.eps), neg_clr)
  end
  function REF.Adamax(p, g, s, group)
    if s.step == nil then s.step, s.exp_avg, s.exp_inf = new_count(), torch.zeros_like(p), torch.zeros_like(p) end
    local beta1, beta2 = group.betas[1], group.betas[2]
    local step = advance(s)
    g = effective_grad(p, g, group)
    s.exp_avg:mul_(beta1):add_(g, {alpha = 1 - beta1})
    s.exp_inf:copy_(torch.maximum(s.exp_inf:mul_(beta2), g:abs():add_(group.eps)))
    addcdiv_(p, s.exp_avg, s.exp_inf, -group.lr / (1 - torch.pow(beta1, step)))
  end
  function REF.NAdam(p, g, s, group)
    if s.step == nil then
      s.step, s.mu_product, s.exp_avg, s.exp_avg_sq = new_count(), new_count(1), torch.zeros_like(p), torch.zeros_like(p)
    end
    local beta1, beta2, lr, decay = group.betas[1], group.betas[2], group.lr, group.momentum_decay
    local step = advance(s)
    local bias_correction2 = 1 - torch.pow(beta2, step)
    g = effective_grad(p, g, group)
    local mu = (1 - torch.pow(0.96, step * decay) * 0.5) * beta1
    local mu_next = (1 - torch.pow(0.96, (step + 1) * decay) * 0.5) * beta1
    local dt = s.mu_product.dtype
    local mu_rounded = mu:to(dt)
    s.mu_product:mul_(mu_rounded)
    local mu_product_next = s.mu_product:mul(mu_rounded):mul_(mu_next:to(dt))
    s.exp_avg:mul_(beta1):add_(g, {alpha = 1 - beta1})
    addcmul_(s.exp_avg_sq:mul_(beta2), g, g, 1 - beta2)
    local denom = s.exp_avg_sq:div(bias_correction2):sqrt():add_(group.eps)
    addcdiv_(p, g, denom, (1 - mu):mul_(-lr):div_(1 - s.mu_product:to(torch.float64)))
    addcdiv_(p, s.exp_avg, denom, mu_next:mul(-lr):div_(1 - mu_product_next:to(torch.float64)))
  end
  function REF.RAdam(p, g, s, group)
    if s.step == nil then s.step, s.exp_avg, s.exp_avg_sq = new_count(), torch.zeros_like(p), torch.zeros_like(p) end
    local beta1, beta2, lr = group.betas[1], group.betas[2], group.lr
    local step = advance(s)
    local bias_correction1 = 1 - torch.pow(beta1, step)
    local beta2_t = torch.pow(beta2, step)
    local bias_correction2 = 1 - beta2_t
    g = effective_grad(p, g, group)
    s.exp_avg:mul_(beta1):add_(g, {alpha = 1 - beta1})
    addcmul_(s.exp_avg_sq:mul_(beta2), g, g, 1 - beta2)
    local corrected = s.exp_avg:div(bias_correction1)
    local rho_inf = 2 / (1 - beta2) - 1
    local rho_t = rho_inf - (step * 2):mul_(beta2_t):div_(bias_correction2)
    local rect = (rho_t - 4):mul_(rho_t - 2):mul_(rho_inf):div_(rho_t * ((rho_inf - 4) * (rho_inf - 2))):sqrt_()
    local adaptive_lr = s.exp_avg_sq:sqrt():add_(group.eps):reciprocal():mul_(bias_correction2:sqrt())
    local plain = corrected:mul_(lr)
    local rectified = plain:mul(adaptive_lr):mul_(rect)
    p:sub_(torch.where(torch.gt(rho_t, 5):to(p.device), rectified, plain))
  end
end

T.test("Adagrad, Adamax, NAdam, RAdam: the fused steps give the tensor ops' bits on every dtype and layout", function()
  local configs = {
    {"Adagrad", {lr = 0.1}}, {"Adagrad", {lr = 0.1, lr_decay = 0.05, weight_decay = 0.1, maximize = true,
                                          initial_accumulator_value = 0.1, eps = 1e-3}},
    {"Adamax", {lr = 0.1}}, {"Adamax", {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-3, weight_decay = 0.3, maximize = true}},
    {"NAdam", {lr = 0.1}}, {"NAdam", {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-3, weight_decay = 0.1, momentum_decay = 0.2}},
    {"RAdam", {lr = 0.1}}, {"RAdam", {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-3, weight_decay = 0.1}},
  }
  local bits = {float16 = "int16", bfloat16 = "int16", float32 = "int32", float64 = "int64"}
  local function same_bits(a, b, what)
    T.eq(a.dtype, b.dtype, what)
    local d = bits[tostring(a.dtype):gsub("^torch%.", "")]
    T.truthy(torch.equal(a:contiguous():view(d), b:contiguous():view(d)), what)
  end
  local devices = {"cpu"}
  if torch.cuda.is_available() then devices[2] = "cuda" end
  local saved = torch.get_default_dtype()
  for _, default in ipairs({"float32", "float64"}) do
    torch.set_default_dtype(default)
    for _, device in ipairs(devices) do
      for _, dtype in ipairs({"float16", "bfloat16", "float32", "float64"}) do
        for _, c in ipairs(configs) do
          local name, cfg = c[1], c[2]
          local group = {}
          for k, v in pairs(optim[name].defaults) do group[k] = v end
          for k, v in pairs(cfg) do group[k] = v end
          torch.manual_seed(3)
          local values = {torch.randn({3, 5}, f64), torch.randn({4, 3}, f64):t(), torch.randn({}, f64)}
          local params, refs, states = {}, {}, {}
          for i, v in ipairs(values) do
            local t = v:to(dtype):to(device)
            if i == 2 then t = t:t():clone():t() end  -- transposed strides
            params[i], refs[i], states[i] = t:clone():requires_grad_(), t:clone(), {}
            if i == 2 then params[i] = t:t():clone():t():requires_grad_() end
          end
          local opt = optim[name](params, cfg)
          for step = 1, 12 do  -- RAdam's rho_t passes 5 at step 6 (beta2 0.999) and 7 (0.9)
            for i, v in ipairs(values) do
              local g = torch.randn(v.shape, f64):mul(step % 3 + 0.5):to(dtype):to(device)
              params[i].grad = g
              REF[name](refs[i], g, states[i], group)
            end
            opt:step()
          end
          for i in ipairs(values) do
            local what = string.format("%s %s %s on %s (default %s), parameter %d", name, T.show(cfg), dtype, device,
              default, i)
            same_bits(params[i]:detach(), refs[i], what)
            for k, v in pairs(states[i]) do same_bits(opt.state[params[i]][k], v, what .. " state " .. k) end
          end
        end
      end
    end
  end
  torch.set_default_dtype(saved)
end)

T.test("add_param_group: the new group steps with its own options", function()
  local p, q, pt, qt = problem()
  local c = E.optim[1]  -- Adagrad{lr=0.1}
  local opt = optim.Adagrad({p}, c.cfg)
  opt:add_param_group({params = {q}, lr = 0.03})
  T.eq(#opt.param_groups, 2)
  T.eq(opt.param_groups[2].eps, 1e-10)
  run_steps(opt, p, q, pt, qt, 1, #E.SCALES, true)
  close(flat(p), c.groups[1], "p")
  close(flat(q), c.groups[2], "q")
end)

-- LBFGS on f(x) = sum(A (x - T)^2 + C (x - T)^4), the gradient set by the closure.
for _, c in ipairs(E.lbfgs) do
  local parts = {}
  for _, k in ipairs(T.sorted_keys(c.cfg)) do parts[#parts + 1] = k .. "=" .. T.show(c.cfg[k]) end
  local label = "LBFGS{" .. table.concat(parts, ", ") .. "} x" .. c.steps
  T.test(label .. " matches PyTorch", function()
    local x = torch.tensor(E.X0, f64):requires_grad_()
    local t, a, cc = torch.tensor(E.XT, f64), torch.tensor(E.XA, f64), torch.tensor(E.XC, f64)
    local opt = optim.LBFGS({x}, c.cfg)
    local evals = 0
    local function closure()
      evals = evals + 1
      local e = x:detach() - t
      x.grad = e:mul(a):mul(2):add(e:pow(3):mul(cc):mul(4))
      return e:pow(2):mul(a):add(e:pow(4):mul(cc)):sum()
    end
    local losses = {}
    for i = 1, c.steps do losses[i] = opt:step(closure):item() end
    T.eq(evals, c.result.evals)
    local st = opt.state[x]
    T.eq(st.func_evals, c.result.func_evals)
    T.eq(st.n_iter, c.result.n_iter)
    for i, v in ipairs(flat(x)) do T.near(v, c.result.x[i], 1e-13, "x[" .. i .. "]") end
    for i, v in ipairs(losses) do T.near(v, c.result.losses[i], 1e-12 * math.max(1, c.result.losses[i]), "loss " .. i) end
  end)
end

-- The schedules: two groups (lr 0.1 and 0.02) of an SGD with momentum 0.9 (Adam for the
-- _adam case); each epoch opt:step() then sched:step(), recording {lr1, lr2, m1, m2}.
local LAMBDA = {
  LambdaLR = function(o) return S.LambdaLR(o, {lr_lambda = function(e) return 0.95 ^ e end}) end,
  LambdaLR_list = function(o)
    return S.LambdaLR(o, {lr_lambda = {function(e) return 1 / (1 + e) end, function(e) return e // 10 end}})
  end,
  MultiplicativeLR = function(o) return S.MultiplicativeLR(o, {lr_lambda = function() return 0.97 end}) end,
  MultiStepLR = function(o) return S.MultiStepLR(o, {milestones = {10, 30, 30, 60}, gamma = 0.5}) end,
  ExponentialLR = function(o) return S.ExponentialLR(o, {gamma = 0.95}) end,
  LinearLR = function(o) return S.LinearLR(o) end,
  LinearLR_args = function(o) return S.LinearLR(o, {start_factor = 0.25, end_factor = 0.75, total_iters = 20}) end,
  ConstantLR = function(o) return S.ConstantLR(o) end,
  ConstantLR_args = function(o) return S.ConstantLR(o, {factor = 0.5, total_iters = 10}) end,
  SequentialLR = function(o)
    return S.SequentialLR(o, {schedulers = {S.LinearLR(o, {start_factor = 0.1, end_factor = 1.0, total_iters = 5}),
      S.ExponentialLR(o, {gamma = 0.9}), S.StepLR(o, {step_size = 7, gamma = 0.5})}, milestones = {5, 40}})
  end,
  ChainedScheduler = function(o)
    return S.ChainedScheduler({S.ConstantLR(o, {factor = 0.1, total_iters = 3}), S.ExponentialLR(o, {gamma = 0.97}),
      S.MultiStepLR(o, {milestones = {50}, gamma = 0.1})})
  end,
  OneCycleLR = function(o) return S.OneCycleLR(o, {max_lr = 0.5, total_steps = 100}) end,
  OneCycleLR_args = function(o)
    return S.OneCycleLR(o, {max_lr = {0.5, 0.1}, epochs = 10, steps_per_epoch = 11, pct_start = 0.25,
      anneal_strategy = "linear", base_momentum = 0.8, max_momentum = 0.9, div_factor = 10.0,
      final_div_factor = 100.0, three_phase = true})
  end,
  OneCycleLR_adam = function(o) return S.OneCycleLR(o, {max_lr = 0.01, total_steps = 101}) end,
  OneCycleLR_nomomentum = function(o) return S.OneCycleLR(o, {max_lr = 0.3, total_steps = 101, cycle_momentum = false}) end,
  CyclicLR = function(o) return S.CyclicLR(o, {base_lr = 0.01, max_lr = 0.1, step_size_up = 7}) end,
  CyclicLR_triangular2 = function(o)
    return S.CyclicLR(o, {base_lr = {0.01, 0.001}, max_lr = {0.1, 0.05}, step_size_up = 6, step_size_down = 4,
      mode = "triangular2", base_momentum = 0.7, max_momentum = 0.95})
  end,
  CyclicLR_exp_range = function(o)
    return S.CyclicLR(o, {base_lr = 0.01, max_lr = 0.1, step_size_up = 5, mode = "exp_range", gamma = 0.97,
      cycle_momentum = false})
  end,
  CyclicLR_scale_fn = function(o)
    return S.CyclicLR(o, {base_lr = 0.01, max_lr = 0.1, step_size_up = 5, scale_fn = function(x) return 1 / (1 + x) end,
      scale_mode = "iterations"})
  end,
  CosineAnnealingWarmRestarts = function(o) return S.CosineAnnealingWarmRestarts(o, {T_0 = 10}) end,
  CosineAnnealingWarmRestarts_args = function(o)
    return S.CosineAnnealingWarmRestarts(o, {T_0 = 3, T_mult = 2, eta_min = 0.001})
  end,
  ReduceLROnPlateau = function(o) return S.ReduceLROnPlateau(o) end,
  ReduceLROnPlateau_args = function(o)
    return S.ReduceLROnPlateau(o, {mode = "min", factor = 0.5, patience = 3, threshold = 0.01, cooldown = 2,
      min_lr = {0.01, 0.001}})
  end,
  ReduceLROnPlateau_max = function(o)
    return S.ReduceLROnPlateau(o, {mode = "max", factor = 0.3, patience = 2, threshold = 0.001,
      threshold_mode = "abs", eps = 1e-3})
  end,
}

local function sched_optimizer(adam)
  local ps = {torch.zeros({1}, {requires_grad = true}), torch.zeros({1}, {requires_grad = true})}
  local groups = {{params = {ps[1]}, lr = 0.1}, {params = {ps[2]}, lr = 0.02}}
  if adam then return optim.Adam(groups, {lr = 1.0}) end
  return optim.SGD(groups, {lr = 1.0, momentum = 0.9})
end

local function record(opt)
  local g1, g2 = opt.param_groups[1], opt.param_groups[2]
  if g1.betas then return {g1.lr, g2.lr, g1.betas[1], g2.betas[1]} end
  return {g1.lr, g2.lr, g1.momentum, g2.momentum}
end

local function sched_step(sched, e)
  if getmetatable(sched) == S.ReduceLROnPlateau then sched:step(E.metrics[e]) else sched:step() end
end

for _, name in ipairs(T.sorted_keys(E.schedules)) do
  local want = E.schedules[name]
  T.test("lr_scheduler " .. name .. " over " .. (#want - 1) .. " epochs matches PyTorch", function()
    local opt = sched_optimizer(name:match("_adam$"))
    local sched = LAMBDA[name](opt)
    same(record(opt), want[1], name .. " epoch 0")
    for e = 1, #want - 1 do
      opt:step()
      sched_step(sched, e)
      same(record(opt), want[e + 1], name .. " epoch " .. e)
      local last = sched:get_last_lr()
      same(last, {want[e + 1][1], want[e + 1][2]}, name .. " get_last_lr at epoch " .. e)
    end
  end)
  T.test("lr_scheduler " .. name .. ": state_dict after 37 epochs resumes the schedule", function()
    local opt = sched_optimizer(name:match("_adam$"))
    local sched = LAMBDA[name](opt)
    for e = 1, 37 do opt:step() sched_step(sched, e) end
    local osd, ssd = opt:state_dict(), sched:state_dict()
    local opt2 = sched_optimizer(name:match("_adam$"))
    local sched2 = LAMBDA[name](opt2)
    opt2:load_state_dict(osd)
    sched2:load_state_dict(ssd)
    for e = 38, #want - 1 do
      opt2:step()
      sched_step(sched2, e)
      same(record(opt2), want[e + 1], name .. " epoch " .. e)
    end
  end)
end

-- Keywords and values PyTorch rejects are errors that name them.
T.test("bad options and unknown keywords are clear errors", function()
  local p = torch.zeros({2}, {dtype = "float64", requires_grad = true})
  local o = optim.SGD({p}, {lr = 0.1})
  local cases = {
    {function() optim.Adagrad({p}, {lr = -1}) end, "Adagrad: invalid lr -1 (must be >= 0)"},
    {function() optim.Adagrad({p}, {lr_decay = -0.1}) end, "Adagrad: invalid lr_decay -0.1 (must be >= 0)"},
    {function() optim.Adagrad({p}, {initial_accumulator_value = -1}) end,
     "Adagrad: invalid initial_accumulator_value -1 (must be >= 0)"},
    {function() optim.NAdam({p}, {maximize = true}) end,
     "NAdam: unknown keyword 'maximize' (valid: betas, eps, foreach, lr, momentum_decay, weight_decay)"},
    {function() optim.NAdam({p}, {momentum_decay = -1}) end, "NAdam: invalid momentum_decay -1 (must be >= 0)"},
    {function() optim.RAdam({p}, {amsgrad = true}) end, "RAdam: unknown keyword 'amsgrad' (valid: betas, eps, foreach, lr, weight_decay)"},
    {function() optim.Adadelta({p}, {rho = 1.5}) end, "Adadelta: invalid rho 1.5 (must be in [0, 1])"},
    {function() optim.Adamax({p}, {betas = {0.9, 1.0}}) end,
     "Adamax: invalid beta parameter at index 2: 1.0 (must be in [0, 1))"},
    {function() optim.Adamax({p}, {eps = -1e-8}) end, "Adamax: invalid eps -1e-08 (must be >= 0)"},
    {function() optim.LBFGS({p}, {line_search_fn = "wolfe"}) end,
     "LBFGS: line_search_fn must be nil or 'strong_wolfe', got wolfe"},
    {function() optim.LBFGS({p}):step() end,
     "LBFGS.step: LBFGS needs a closure that re-evaluates the model and returns the loss, got a nil"},
    {function() optim.LBFGS({p}):step(function() return "x" end) end,
     "LBFGS.step: the closure must return the loss (a tensor or a number), got a string"},
    {function() optim.LBFGS({{params = {p}}, {params = {torch.zeros({1}, {requires_grad = true})}}}) end,
     "LBFGS: doesn't support per-parameter options (parameter groups)"},
    {function() optim.LBFGS({p}, {max_iter = 0}) end, "LBFGS: max_iter must be an integer >= 1, got 0"},
    {function() optim.LBFGS({p}, {max_evals = 3}) end,
     "LBFGS: unknown keyword 'max_evals' (did you mean 'max_eval'? valid: history_size, line_search_fn, lr, "
     .. "max_eval, max_iter, tolerance_change, tolerance_grad)"},
    {function() S.ExponentialLR(o, {gama = 0.9}) end,
     "ExponentialLR: unknown keyword 'gama' (did you mean 'gamma'? valid: last_epoch, verbose, gamma)"},
    {function() S.ExponentialLR(o) end, "ExponentialLR: gamma must be a number, got nil"},
    {function() S.ConstantLR(o, {factor = 2}) end, "ConstantLR: factor must be in [0, 1], got 2"},
    {function() S.LinearLR(o, {start_factor = -0.5}) end, "LinearLR: start_factor must be in [0, 1], got -0.5"},
    {function() S.ReduceLROnPlateau(o, {factor = 1}) end, "ReduceLROnPlateau: factor should be < 1.0, got 1"},
    {function() S.ReduceLROnPlateau(o, {mode = "mid"}) end, "ReduceLROnPlateau: mode must be 'min' or 'max', got mid"},
    {function() S.ReduceLROnPlateau(o, {threshold_mode = "x"}) end,
     "ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got x"},
    {function() S.ReduceLROnPlateau(o, {min_lr = {0, 0}}) end, "ReduceLROnPlateau: expected 1 values for min_lr, got 2"},
    {function() S.ReduceLROnPlateau(o):step("x") end,
     "ReduceLROnPlateau:step: expected the metric (a number or a one-element tensor), got string"},
    {function() local s = S.OneCycleLR(o, {max_lr = 0.1, total_steps = 2}); s:step(); s:step(); s:step() end,
     "OneCycleLR: tried to step 4 times; total_steps is 2"},
    {function() S.OneCycleLR(o, {max_lr = 0.1}) end,
     "OneCycleLR: you must define either total_steps or (epochs and steps_per_epoch)"},
    {function() S.OneCycleLR(o, {max_lr = 0.1, total_steps = 10, anneal_strategy = "exp"}) end,
     "OneCycleLR: anneal_strategy must be 'cos' or 'linear', got exp"},
    {function() S.OneCycleLR(optim.Adagrad({p}), {max_lr = 0.1, total_steps = 10}) end,
     "OneCycleLR: optimizer must support momentum with the cycle_momentum option enabled"},
    {function() S.CyclicLR(o, {base_lr = 0.1, max_lr = 0.2, mode = "tri"}) end,
     "CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' (or give scale_fn), got tri"},
    {function() S.CyclicLR(o, {max_lr = 0.2}) end, "CyclicLR: base_lr is required"},
    {function() S.CyclicLR(optim.Adam({p}), {base_lr = 0.1, max_lr = 0.2}) end,
     "CyclicLR: optimizer must support momentum with the cycle_momentum option enabled"},
    {function() S.LambdaLR(o, {lr_lambda = 3}) end,
     "LambdaLR: lr_lambda must be a function of the epoch (or a list of them), got a number"},
    {function() S.LambdaLR(o, {lr_lambda = {function() end, function() end}}) end,
     "LambdaLR: expected 1 lr_lambdas, but got 2"},
    {function() S.LambdaLR(o, {lr_lambda = function() end}) end, "LambdaLR: lr_lambda(0) must return a number, got a nil"},
    {function() S.SequentialLR(o, {schedulers = {S.ExponentialLR(o, {gamma = 0.9})}, milestones = {3}}) end,
     "SequentialLR: expects one milestone fewer than schedulers, got 1 schedulers and 1 milestones"},
    {function() S.ChainedScheduler({S.ExponentialLR(o, {gamma = 0.9}), S.ExponentialLR(optim.SGD({p}, {lr = 1}),
       {gamma = 0.9})}) end,
     "ChainedScheduler: all schedulers must belong to the same optimizer, but schedulers[2] does not"},
    {function() S.MultiStepLR(o, {milestones = {1.5}}) end, "MultiStepLR: milestones[1] must be an integer >= 0, got 1.5"},
    {function() S.CosineAnnealingWarmRestarts(o, {T_0 = 0}) end,
     "CosineAnnealingWarmRestarts: T_0 must be an integer >= 1, got 0"},
    {function() S.CosineAnnealingWarmRestarts(o, {T_0 = 2, T_mult = 1.5}) end,
     "CosineAnnealingWarmRestarts: T_mult must be an integer >= 1, got 1.5"},
    {function() S.StepLR(o, {step_size = 2}):load_state_dict({foo = 1}) end,
     "StepLR.load_state_dict: entry 'foo' is a number, which this StepLR does not have"},
  }
  for _, c in ipairs(cases) do
    local ok, msg = pcall(c[1])
    T.eq(ok, false, c[2])
    T.eq(msg, c[2])
  end
end)

-- step(epoch) jumps with the closed form where the scheduler has one (PyTorch's deprecated
-- path), and CosineAnnealingWarmRestarts takes fractional epochs.
-- PyTorch 1.13's implementation switches: each optimizer takes the ones PyTorch lists; foreach
-- and fused give the numbers of the plain step (tide's step is always one fused loop per
-- parameter); differentiable must stay false; capturable=true (Adam, AdamW) needs parameters
-- on a CUDA device (the CUDA section below).
local FLAGS = {SGD = {"foreach", "differentiable"}, Adam = {"foreach", "capturable", "differentiable", "fused"},
               AdamW = {"foreach", "capturable"}, RMSprop = {"foreach", "differentiable"}, Adagrad = {"foreach"},
               Adadelta = {"foreach"}, Adamax = {"foreach"}, NAdam = {"foreach"}, RAdam = {"foreach"}}
T.test("foreach, fused, capturable and differentiable as in PyTorch 1.13", function()
  for name, flags in pairs(FLAGS) do
    local cfg = name == "SGD" and {lr = 0.1, momentum = 0.9} or {lr = 0.1}
    local p, q, pt, qt = problem()
    run_steps(optim[name]({p, q}, cfg), p, q, pt, qt, 1, #E.SCALES)
    for _, flag in ipairs(flags) do
      local values = (flag == "foreach" or flag == "fused") and {true, false} or {false}
      for _, v in ipairs(values) do
        local c = {}
        for k, x in pairs(cfg) do c[k] = x end
        c[flag] = v
        local p2, q2, pt2, qt2 = problem()
        local opt = optim[name]({p2, q2}, c)
        T.eq(opt.param_groups[1][flag], v, name .. " " .. flag .. " in param_groups")
        run_steps(opt, p2, q2, pt2, qt2, 1, #E.SCALES)
        same(flat(p2), flat(p), name .. " " .. flag .. "=" .. tostring(v) .. " p")
        same(flat(q2), flat(q), name .. " " .. flag .. "=" .. tostring(v) .. " q")
      end
      T.error(function() optim[name]({p}, {lr = 0.1, [flag] = "yes"}) end,
              name .. ": " .. flag .. " must be a boolean, got string")
      if flag == "differentiable" then
        T.error(function() optim[name]({p}, {lr = 0.1, [flag] = true}) end,
                name .. ": " .. flag .. "=true is not supported")
        T.error(function() optim[name]({{params = {p}, [flag] = true}}, {lr = 0.1}) end,
                name .. ": " .. flag .. "=true is not supported")
      elseif flag == "capturable" then
        local opt = optim[name]({{params = {p}, capturable = true}}, {lr = 0.1})
        p.grad = torch.ones_like(p)
        T.error(function() opt:step() end, name .. ": capturable=true needs parameters on a CUDA device, got one on cpu")
        p.grad = nil
      end
    end
  end
  -- The switches PyTorch does not list for an optimizer stay unknown keywords there.
  local p = problem()
  T.error(function() optim.AdamW({p}, {fused = true}) end, "AdamW: unknown keyword 'fused'")
  T.error(function() optim.Adagrad({p}, {capturable = false}) end, "Adagrad: unknown keyword 'capturable'")
  T.error(function() optim.LBFGS({p}, {foreach = false}) end, "LBFGS: unknown keyword 'foreach'")
end)

-- Runs fn with print captured; returns the printed lines.
local function printed(fn)
  local lines, saved = {}, print
  print = function(...) lines[#lines + 1] = table.concat({...}, "\t") end
  local ok, err = pcall(fn)
  print = saved
  if not ok then error(err, 0) end
  return lines
end

-- PyTorch 1.13's verbose messages, with tide's 1-based group numbers (PyTorch prints 0 and 1).
T.test("lr_scheduler verbose prints PyTorch's messages", function()
  local function two_groups()
    local a, b = torch.zeros({1}):requires_grad_(), torch.zeros({1}):requires_grad_()
    return optim.SGD({{params = {a}, lr = 0.1}, {params = {b}, lr = 0.02}}, {lr = 1.0, momentum = 0.9})
  end
  local o = two_groups()
  T.eq(printed(function()
    local s = S.StepLR(o, {step_size = 2, gamma = 0.5, verbose = true})
    for _ = 1, 3 do o:step(); s:step() end
  end), {"Adjusting learning rate of group 1 to 1.0000e-01.", "Adjusting learning rate of group 2 to 2.0000e-02.",
         "Adjusting learning rate of group 1 to 1.0000e-01.", "Adjusting learning rate of group 2 to 2.0000e-02.",
         "Adjusting learning rate of group 1 to 5.0000e-02.", "Adjusting learning rate of group 2 to 1.0000e-02.",
         "Adjusting learning rate of group 1 to 5.0000e-02.", "Adjusting learning rate of group 2 to 1.0000e-02."})
  o = two_groups()
  T.eq(printed(function()
    local s = S.CosineAnnealingWarmRestarts(o, {T_0 = 3, verbose = true})
    for _ = 1, 2 do o:step(); s:step() end
    s:step(1.5)
  end), {"Epoch 00000: adjusting learning rate of group 1 to 1.0000e-01.",
         "Epoch 00000: adjusting learning rate of group 2 to 2.0000e-02.",
         "Epoch 00001: adjusting learning rate of group 1 to 7.5000e-02.",
         "Epoch 00001: adjusting learning rate of group 2 to 1.5000e-02.",
         "Epoch 00002: adjusting learning rate of group 1 to 2.5000e-02.",
         "Epoch 00002: adjusting learning rate of group 2 to 5.0000e-03.",
         "Epoch 1.50: adjusting learning rate of group 1 to 5.0000e-02.",
         "Epoch 1.50: adjusting learning rate of group 2 to 1.0000e-02."})
  o = two_groups()
  T.eq(printed(function()
    local s = S.ReduceLROnPlateau(o, {patience = 1, verbose = true})
    for _ = 1, 4 do s:step(1) end
  end), {"Epoch 00003: reducing learning rate of group 1 to 1.0000e-02.",
         "Epoch 00003: reducing learning rate of group 2 to 2.0000e-03."})
  o = two_groups()
  T.eq(printed(function()
    local s = S.ExponentialLR(o, {gamma = 0.5, verbose = true})
    s:step(3)
  end), {"Adjusting learning rate of group 1 to 1.0000e-01.", "Adjusting learning rate of group 2 to 2.0000e-02.",
         "Epoch 00003: adjusting learning rate of group 1 to 1.2500e-02.",
         "Epoch 00003: adjusting learning rate of group 2 to 2.5000e-03."})
  -- verbose = false (the default) prints nothing; SequentialLR's verbose does nothing, as in
  -- PyTorch 1.13, while its schedulers print if they were made verbose.
  o = two_groups()
  T.eq(printed(function()
    local s = S.MultiStepLR(o, {milestones = {1}, verbose = false})
    o:step(); s:step()
    local seq = S.SequentialLR(o, {schedulers = {S.ConstantLR(o), S.ExponentialLR(o, {gamma = 0.9})},
                                   milestones = {2}, verbose = true})
    seq:step()
  end), {})
  for _, make in ipairs{function() return S.StepLR(o, {step_size = 1, verbose = 1}) end,
                        function() return S.ReduceLROnPlateau(o, {verbose = "yes"}) end,
                        function() return S.SequentialLR(o, {schedulers = {S.ConstantLR(o)}, milestones = {}, verbose = 0}) end} do
    T.error(make, "verbose must be a boolean")
  end
end)

T.test("step(epoch) uses the closed form", function()
  local p = torch.zeros({1}, {requires_grad = true})
  local o = optim.SGD({p}, {lr = 0.1})
  local s = S.MultiStepLR(o, {milestones = {2, 5, 5}, gamma = 0.5})
  s:step(6)
  T.eq(o.param_groups[1].lr, 0.1 * 0.5 ^ 3)
  s = S.CosineAnnealingWarmRestarts(optim.SGD({p}, {lr = 0.1}), {T_0 = 4, T_mult = 2})
  s:step(5.5)  -- the second period (length 8) at 1.5
  T.eq(s.T_cur, 1.5)
  T.eq(s.T_i, 8)
  T.eq(s:get_last_lr()[1], 0 + 0.1 * (1 + math.cos(math.pi * 1.5 / 8)) / 2)
end)

T.test("LBFGS state_dict resumes the history", function()
  local x = torch.tensor(E.X0, f64):requires_grad_()
  local t = torch.tensor(E.XT, f64)
  local function closure()
    local e = x:detach() - t
    x.grad = e:mul(2):add(e:pow(3))
    return e:pow(2):add(e:pow(4):mul(0.25)):sum()
  end
  local opt = optim.LBFGS({x}, {max_iter = 3})
  opt:step(closure)
  local opt2 = optim.LBFGS({x}, {max_iter = 3})
  opt2:load_state_dict(opt:state_dict())
  local x_mid = x:clone()
  opt:step(closure)
  local want = x:clone()
  x:detach():copy_(x_mid)
  opt2:step(closure)
  T.eq(opt2.state[x].n_iter, opt.state[x].n_iter)
  T.eq(opt2.state[x].func_evals, opt.state[x].func_evals)
  same(flat(x), flat(want), "x")
end)

-- zero_grad: nil by default (PyTorch 2.x; 1.13 defaulted to zeros), zeros with
-- set_to_none = false, on modules and optimizers, positionally or as a keyword.
T.test("zero_grad with and without set_to_none on modules and optimizers", function()
  local m = torch.nn.Linear(2, 1)
  local opt = optim.SGD(m:parameters(), {lr = 0.1})
  local function backward() m(torch.ones({1, 2})):sum():backward() end
  local clears = {
    {function() m:zero_grad() end, nil}, {function() m:zero_grad{set_to_none = true} end, nil},
    {function() m:zero_grad(true) end, nil}, {function() m:zero_grad{set_to_none = false} end, {{0, 0}}},
    {function() m:zero_grad(false) end, {{0, 0}}}, {function() opt:zero_grad() end, nil},
    {function() opt:zero_grad{set_to_none = true} end, nil}, {function() opt:zero_grad(false) end, {{0, 0}}},
    {function() opt:zero_grad{set_to_none = false} end, {{0, 0}}},
  }
  for i, c in ipairs(clears) do
    backward()
    local g = m.weight.grad
    c[1]()
    if c[2] == nil then
      T.eq(m.weight.grad, nil, "case " .. i)
      T.eq(m.bias.grad, nil, "case " .. i)
    else
      T.eq(m.weight.grad:tolist(), c[2], "case " .. i)
      T.eq(m.bias.grad:tolist(), {0}, "case " .. i)
      T.eq(g:tolist(), c[2], "zeroed in place, case " .. i)
    end
  end
  -- A gradient that is part of a graph (create_graph) is detached before it is zeroed.
  local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
  x:pow(3):sum():backward{create_graph = true}
  T.eq(x.grad.requires_grad, true)
  optim.SGD({x}, {lr = 0.1}):zero_grad(false)
  T.eq(x.grad.requires_grad, false)
  T.eq(x.grad:tolist(), {0, 0})
  T.error(function() m:zero_grad("yes") end, 'Linear:zero_grad: set_to_none must be true or false, got "yes"')
  -- the engine call behind both checks its list
  T.error_usable(function() torch._zero_grads_(x, true) end, "_zero_grads_: expected a list of parameters, got a userdata")
  T.error_usable(function() torch._zero_grads_({x, "w"}, true) end, "_zero_grads_: parameter 2 is a string, not a tensor")
  T.error_usable(function() torch._zero_grads_({x}, "yes") end, "_zero_grads_")
  T.error(function() opt:zero_grad{set_to_none = 1} end, "SGD:zero_grad: set_to_none must be true or false, got 1")
  T.error(function() opt:zero_grad{set_to_nil = false} end,
          "SGD:zero_grad: unknown keyword 'set_to_nil' (did you mean 'set_to_none'? valid: set_to_none)")
  T.error(function() opt:zero_grad(false, true) end, "SGD:zero_grad: expected at most 1 positional arguments, got 2")
end)

-- A closure as users write it (zero_grad, forward, backward, return the loss) on a module:
-- LBFGS with the line search solves a least-squares fit.
T.test("LBFGS with an autograd closure fits a linear model", function()
  local x = torch.tensor({{1.0, 0.0}, {0.0, 1.0}, {1.0, 1.0}, {2.0, -1.0}}, f64)
  local y = torch.tensor({{1.0}, {2.0}, {3.5}, {0.5}}, f64)
  local model = torch.nn.Linear(2, 1):to("float64")
  local opt = optim.LBFGS(model:parameters(), {line_search_fn = "strong_wolfe", tolerance_grad = 1e-12,
                                               tolerance_change = 1e-15})
  local function closure()
    opt:zero_grad()
    local l = (model(x) - y):pow(2):mean()
    l:backward()
    return l
  end
  local first = opt:step(closure)
  T.truthy(first:item() > 0.1, "the first loss is returned")
  for _ = 1, 4 do opt:step(closure) end
  -- The least-squares solution of [x 1] w = y (numpy.linalg.lstsq): w = {19/12, 7/3}, b = -5/12,
  -- mean squared residual 1/96.
  local w, b = model.weight:tolist()[1], model.bias:tolist()[1]
  T.near(w[1], 19 / 12, 1e-7)
  T.near(w[2], 7 / 3, 1e-7)
  T.near(b, -5 / 12, 1e-7)
  T.near((model(x) - y):pow(2):mean():item(), 1 / 96, 1e-12)
end)

T.test("a changed group option is checked at the next step", function()
  local p = torch.zeros({2}, {dtype = "float64", requires_grad = true})
  for _, name in ipairs{"SGD", "Adam", "Adagrad", "RAdam", "LBFGS"} do
    local opt = optim[name]({p}, {lr = 0.1})
    opt.param_groups[1].lr = "0.5"
    p.grad = torch.ones({2}, f64)
    T.error(function() opt:step(function() return 0 end) end, name .. ": lr must be a number, got string")
    opt.param_groups[1].lr = -1
    T.error(function() opt:step(function() return 0 end) end, name .. ": invalid lr -1 (must be >= 0)")
  end
  T.eq(p:tolist(), {0, 0})
end)

T.test("LBFGS: a parameter without a gradient counts as a zero gradient and stays put", function()
  local x = torch.tensor({2.0, -1.0}, {dtype = "float64", requires_grad = true})
  local frozen = torch.tensor({{5.0}}, {dtype = "float64", requires_grad = true})
  local opt = optim.LBFGS({x, frozen}, {tolerance_change = 1e-14})
  opt:step(function()
    x.grad = x:detach():mul(2)
    return x:detach():pow(2):sum()
  end)
  T.near(x:tolist(), {0, 0}, 1e-12)
  T.eq(frozen:tolist(), {{5.0}})
end)

-- On a CUDA device (when there is one): every optimizer, LBFGS, clip_grad_norm_ and
-- pad_sequence give the CPU's float64 results with parameters and state on the device.
if torch.cuda.is_available() then
  T.test("CUDA: the optimizers step parameters on the device as on the CPU", function()
    for _, c in ipairs(E.optim) do
      local label = describe_cfg(c)
      local p = torch.tensor(E.P0, f64):to("cuda"):requires_grad_()
      local q = torch.tensor(E.Q0, f64):to("cuda"):requires_grad_()
      local pt, qt = torch.tensor(E.PT, f64):to("cuda"), torch.tensor(E.QT, f64):to("cuda")
      local opt = optim[c.name]({p, q}, c.cfg)
      run_steps(opt, p, q, pt, qt, 1, #E.SCALES)
      T.eq(tostring(p.device):sub(1, 4), "cuda", label)
      -- The step count (and NAdam's mu_product) stays a CPU tensor, as PyTorch's
      -- non-capturable optimizers keep it.
      for key, st in pairs(opt.state[p]) do
        if torch.is_tensor(st) then
          local cpu = key == "step" or key == "mu_product"
          T.eq(tostring(st.device):sub(1, 4), cpu and "cpu" or "cuda", label .. " state " .. key)
        end
      end
      close(flat(p:to("cpu")), c.result[1], label .. " p on cuda")
      close(flat(q:to("cpu")), c.result[2], label .. " q on cuda")
    end
  end)
  -- capturable=true (Adam, AdamW): the step count lives on the device and the step is
  -- computed from it there (PyTorch 1.13's capturable formulas). The count is float32, as
  -- PyTorch's, so 1 - beta2^step is computed in float32, where it loses digits to
  -- cancellation (1 - 0.999^step is about 0.001-0.01): the results agree with PyTorch's plain
  -- step to 1e-4 relative after 10 steps (7e-6 here), not 1e-14, as PyTorch's capturable
  -- step does.
  T.test("CUDA: capturable Adam and AdamW keep the step count on the device", function()
    -- PyTorch's results for the Adam/AdamW configurations of the table, and for Adam with
    -- weight decay the plain step's on the CPU (equal to PyTorch's, tested above).
    local cases = {}
    for _, c in ipairs(E.optim) do
      if c.name == "Adam" or c.name == "AdamW" then cases[#cases + 1] = c end
    end
    local wd = {name = "Adam", cfg = {lr = 0.1, weight_decay = 0.1}}
    local p0, q0, pt0, qt0 = problem()
    run_steps(optim.Adam({p0, q0}, wd.cfg), p0, q0, pt0, qt0, 1, #E.SCALES)
    wd.result = {flat(p0), flat(q0)}
    cases[#cases + 1] = wd
    T.eq(#cases, 3)
    for _, c in ipairs(cases) do
      local label = describe_cfg(c) .. " capturable"
      local cfg = {capturable = true}
      for k, v in pairs(c.cfg) do cfg[k] = v end
      local p = torch.tensor(E.P0, f64):to("cuda"):requires_grad_()
      local q = torch.tensor(E.Q0, f64):to("cuda"):requires_grad_()
      local pt, qt = torch.tensor(E.PT, f64):to("cuda"), torch.tensor(E.QT, f64):to("cuda")
      local opt = optim[c.name]({p, q}, cfg)
      run_steps(opt, p, q, pt, qt, 1, #E.SCALES)
      for key, st in pairs(opt.state[p]) do
        T.eq(tostring(st.device):sub(1, 4), "cuda", label .. " state " .. key)
      end
      T.eq(opt.state[p].step:item(), #E.SCALES, label .. " step count")
      for k, got in ipairs({flat(p:to("cpu")), flat(q:to("cpu"))}) do
        for i, want in ipairs(c.result[k]) do
          T.truthy(math.abs(got[i] - want) <= 1e-4 * math.max(1, math.abs(want)),
                   string.format("%s: element %d is %.17g, PyTorch %.17g", label, i, got[i], want))
        end
      end
      -- A count made without capturable (on the CPU) is refused once capturable is switched on.
      local plain = optim[c.name]({p}, c.cfg)
      p.grad = torch.ones_like(p)
      plain:step()
      plain.param_groups[1].capturable = true
      T.error(function() plain:step() end, c.name .. ": capturable=true needs the step count on the parameter's device")
      -- A saved state loads with its count on the device again.
      local opt2 = optim[c.name]({p, q}, cfg)
      opt2:load_state_dict(opt:state_dict())
      T.eq(tostring(opt2.state[p].step.device):sub(1, 4), "cuda", label .. " loaded step")
      T.eq(opt2.state[p].step:item(), #E.SCALES, label .. " loaded count")
    end
  end)
  T.test("CUDA: LBFGS with the line search and a parameter without a gradient", function()
    local c = E.lbfgs[2]
    local x = torch.tensor(E.X0, f64):to("cuda"):requires_grad_()
    local frozen = torch.zeros({2}, f64):to("cuda"):requires_grad_()
    local t, a, cc = torch.tensor(E.XT, f64):to("cuda"), torch.tensor(E.XA, f64):to("cuda"),
                     torch.tensor(E.XC, f64):to("cuda")
    local opt = optim.LBFGS({x, frozen}, c.cfg)
    local function closure()
      local e = x:detach() - t
      x.grad = e:mul(a):mul(2):add(e:pow(3):mul(cc):mul(4))
      return e:pow(2):mul(a):add(e:pow(4):mul(cc)):sum()
    end
    for _ = 1, c.steps do opt:step(closure) end
    for i, v in ipairs(flat(x:to("cpu"))) do T.near(v, c.result.x[i], 1e-12, "x[" .. i .. "]") end
  end)
end

T.done()
