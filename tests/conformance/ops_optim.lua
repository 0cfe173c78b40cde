-- Rows of the conformance table for torch.optim and torch.optim.lr_scheduler, against PyTorch
-- 1.13 in float64 (check.py's optim_steps, lbfgs_steps and schedule run the same problem
-- there): each optimizer and configuration over 10 steps on random parameters of random shapes
-- (0-d and empty ones too), LBFGS with and without the line search, and every scheduler over 100
-- epochs on two parameter groups. Loaded by ops.lua with G and add(row).
local G, add = ...
local optim = torch.optim
local S = optim.lr_scheduler

-- The gradient's scale at each step (signs and sizes vary, as a training run's do).
local SCALES = {2.0, 1.0, 3.0, 0.2, 1.5, -0.5, 0.7, 2.5, 1.0, 0.1}

local OPTIMIZERS = {
  SGD = {{lr = 0.1}, {lr = 0.1, momentum = 0.9}, {lr = 0.05, momentum = 0.9, nesterov = true, weight_decay = 0.01},
         {lr = 0.1, momentum = 0.5, dampening = 0.3, maximize = true, foreach = false}},
  Adam = {{}, {lr = 0.1, amsgrad = true}, {lr = 0.05, betas = {0.8, 0.9}, eps = 1e-6, weight_decay = 0.1, maximize = true},
          {lr = 0.1, foreach = true}},
  AdamW = {{lr = 0.1}, {lr = 0.1, amsgrad = true, weight_decay = 0.2}, {lr = 0.05, maximize = true}},
  RMSprop = {{}, {lr = 0.01, momentum = 0.9, centered = true, weight_decay = 0.1}, {alpha = 0.9, eps = 1e-6, maximize = true}},
  Adagrad = {{lr = 0.1}, {lr = 0.1, lr_decay = 0.05, weight_decay = 0.1, initial_accumulator_value = 0.2, eps = 1e-6},
             {lr = 0.1, maximize = true}},
  Adadelta = {{}, {lr = 0.5, rho = 0.8, eps = 1e-4, weight_decay = 0.1}, {lr = 0.5, maximize = true}},
  Adamax = {{}, {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-6, weight_decay = 0.1}, {lr = 0.1, maximize = true}},
  NAdam = {{}, {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-6, weight_decay = 0.1, momentum_decay = 0.01}},
  RAdam = {{}, {lr = 0.1, betas = {0.8, 0.9}, eps = 1e-6, weight_decay = 0.1}},
}
local NAMES = {}
for name in pairs(OPTIMIZERS) do NAMES[#NAMES + 1] = name end
table.sort(NAMES)

for _, name in ipairs(NAMES) do
  add({name = "optim." .. name, out = "same*", cast = "none", tol = {float64 = {1e-11, 1e-13}},
       ref = "optim_steps(p.name, p.kw, [a, b], c, p.scales)",
       cases = function()
         local cs = {}
         for _, cfg in ipairs(OPTIMIZERS[name]) do
           for k = 1, G.count(3) do
             local sa = k == 1 and {} or G.shape({max_rank = 3})
             local sb = k == 2 and {0, 3} or G.shape({max_rank = 2})
             local a, b = G.make(sa, "float64", {edges = 0}), G.make(sb, "float64", {edges = 0})
             local c = {G.make(sa, "float64", {edges = 0}), G.make(sb, "float64", {edges = 0})}
             cs[#cs + 1] = {a = a, b = b, c = c, p = {name = name, kw = cfg, scales = SCALES}}
           end
         end
         return cs
       end,
       call = function(a, b, c, p)
         local pa, pb = a:clone():requires_grad_(), b:clone():requires_grad_()
         local opt = optim[p.name]({pa, pb}, G.copy(p.kw))
         for _, s in ipairs(p.scales) do
           pa.grad = (pa:detach() - c[1]) * s
           pb.grad = (pb:detach() - c[2]) * s
           opt:step()
         end
         return pa:detach(), pb:detach()
       end})
end

-- LBFGS on f(x) = sum(a (x - t)^2 + c (x - t)^4) with the gradient written out.
local LBFGS = {{{max_iter = 5}, 4}, {{max_iter = 5, line_search_fn = "strong_wolfe"}, 4}, {{}, 2},
               {{lr = 0.5, max_iter = 4, history_size = 2}, 4},
               {{max_iter = 6, history_size = 3, line_search_fn = "strong_wolfe", tolerance_change = 1e-12}, 3}}
add({name = "optim.LBFGS", out = "same*", cast = "none", tol = {float64 = {1e-9, 1e-11}},
     ref = "lbfgs_steps(p.kw, a, c[0], c[1], c[2], p.steps)",
     cases = function()
       local cs = {}
       for _, l in ipairs(LBFGS) do
         local n = G.randint(1, 6)
         local x0, t = G.make({n}, "float64", {edges = 0}), G.make({n}, "float64", {edges = 0})
         local qa = G.make({n}, "float64", {fn = function() return G.uniform(0.5, 3) end})
         local qc = G.make({n}, "float64", {fn = function() return G.uniform(0, 2) end})
         cs[#cs + 1] = {a = x0, c = {t, qa, qc}, p = {kw = l[1], steps = l[2]}}
       end
       return cs
     end,
     call = function(a, _, c, p)
       local x = a:clone():requires_grad_()
       local opt = optim.LBFGS({x}, G.copy(p.kw))
       local t, qa, qc = c[1], c[2], c[3]
       local function closure()
         local e = x:detach() - t
         x.grad = e:mul(qa):mul(2):add(e:pow(3):mul(qc):mul(4))
         return e:pow(2):mul(qa):add(e:pow(4):mul(qc)):sum()
       end
       local losses = {}
       for i = 1, p.steps do losses[i] = opt:step(closure):item() end
       return x:detach(), torch.tensor(losses, {dtype = "float64", device = x.device})
     end})

-- The schedulers: the tide construction and PyTorch's (a Python lambda of the optimizer; a
-- leading "Adam:" runs the schedule over Adam, whose betas[1] OneCycleLR and CyclicLR cycle).
local METRICS = {}
for e = 0, 99 do
  METRICS[e + 1] = e < 20 and 1.0 / (1 + e) or (e < 60 and 0.05 + 0.001 * ((e * 7) % 5) or 0.05 - 0.0005 * e / 10)
end
local SCHEDULES = {
  {"StepLR", function(o) return S.StepLR(o, {step_size = 7, gamma = 0.5}) end, "lambda o: S.StepLR(o, 7, 0.5)"},
  {"CosineAnnealingLR", function(o) return S.CosineAnnealingLR(o, {T_max = 30, eta_min = 0.001}) end,
   "lambda o: S.CosineAnnealingLR(o, 30, 0.001)"},
  {"LambdaLR", function(o) return S.LambdaLR(o, {lr_lambda = function(e) return 0.95 ^ e end}) end,
   "lambda o: S.LambdaLR(o, lambda e: 0.95 ** e)"},
  {"MultiplicativeLR", function(o) return S.MultiplicativeLR(o, {lr_lambda = function() return 0.97 end}) end,
   "lambda o: S.MultiplicativeLR(o, lambda e: 0.97)"},
  {"MultiStepLR", function(o) return S.MultiStepLR(o, {milestones = {10, 30, 30, 60}, gamma = 0.5}) end,
   "lambda o: S.MultiStepLR(o, [10, 30, 30, 60], 0.5)"},
  {"ExponentialLR", function(o) return S.ExponentialLR(o, {gamma = 0.95}) end, "lambda o: S.ExponentialLR(o, 0.95)"},
  {"LinearLR", function(o) return S.LinearLR(o, {start_factor = 0.25, end_factor = 0.75, total_iters = 20}) end,
   "lambda o: S.LinearLR(o, 0.25, 0.75, 20)"},
  {"ConstantLR", function(o) return S.ConstantLR(o, {factor = 0.5, total_iters = 10}) end,
   "lambda o: S.ConstantLR(o, 0.5, 10)"},
  {"SequentialLR", function(o)
     return S.SequentialLR(o, {schedulers = {S.LinearLR(o, {start_factor = 0.1, end_factor = 1.0, total_iters = 5}),
                                             S.ExponentialLR(o, {gamma = 0.9}), S.StepLR(o, {step_size = 7, gamma = 0.5})},
                               milestones = {5, 40}})
   end, "lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.1, 1.0, 5), S.ExponentialLR(o, 0.9), S.StepLR(o, 7, 0.5)], "
        .. "milestones=[5, 40])"},
  {"ChainedScheduler", function(o)
     return S.ChainedScheduler({S.ConstantLR(o, {factor = 0.1, total_iters = 3}), S.ExponentialLR(o, {gamma = 0.97}),
                                S.MultiStepLR(o, {milestones = {50}, gamma = 0.1})})
   end, "lambda o: S.ChainedScheduler([S.ConstantLR(o, 0.1, 3), S.ExponentialLR(o, 0.97), S.MultiStepLR(o, [50], 0.1)])"},
  {"OneCycleLR", function(o) return S.OneCycleLR(o, {max_lr = {0.5, 0.1}, epochs = 10, steps_per_epoch = 11,
     pct_start = 0.25, anneal_strategy = "linear", base_momentum = 0.8, max_momentum = 0.9, three_phase = true}) end,
   "lambda o: S.OneCycleLR(o, [0.5, 0.1], epochs=10, steps_per_epoch=11, pct_start=0.25, anneal_strategy='linear', "
   .. "base_momentum=0.8, max_momentum=0.9, three_phase=True)"},
  {"OneCycleLR", function(o) return S.OneCycleLR(o, {max_lr = 0.01, total_steps = 101}) end,
   "Adam:lambda o: S.OneCycleLR(o, 0.01, total_steps=101)", adam = true},
  {"CyclicLR", function(o) return S.CyclicLR(o, {base_lr = {0.01, 0.001}, max_lr = {0.1, 0.05}, step_size_up = 6,
     step_size_down = 4, mode = "triangular2", base_momentum = 0.7, max_momentum = 0.95}) end,
   "lambda o: S.CyclicLR(o, [0.01, 0.001], [0.1, 0.05], 6, 4, 'triangular2', base_momentum=0.7, max_momentum=0.95)"},
  {"CyclicLR", function(o) return S.CyclicLR(o, {base_lr = 0.01, max_lr = 0.1, step_size_up = 5, mode = "exp_range",
     gamma = 0.97, cycle_momentum = false}) end,
   "lambda o: S.CyclicLR(o, 0.01, 0.1, 5, mode='exp_range', gamma=0.97, cycle_momentum=False)"},
  {"CosineAnnealingWarmRestarts", function(o) return S.CosineAnnealingWarmRestarts(o, {T_0 = 3, T_mult = 2, eta_min = 0.001}) end,
   "lambda o: S.CosineAnnealingWarmRestarts(o, 3, 2, 0.001)"},
  {"ReduceLROnPlateau", function(o) return S.ReduceLROnPlateau(o, {factor = 0.5, patience = 3, threshold = 0.01,
     cooldown = 2, min_lr = {0.01, 0.001}}) end,
   "lambda o: S.ReduceLROnPlateau(o, 'min', 0.5, 3, 0.01, cooldown=2, min_lr=[0.01, 0.001])", metrics = true},
  {"ReduceLROnPlateau", function(o) return S.ReduceLROnPlateau(o, {mode = "max", factor = 0.3, patience = 2,
     threshold = 0.001, threshold_mode = "abs", eps = 1e-3}) end,
   "lambda o: S.ReduceLROnPlateau(o, 'max', 0.3, 2, 0.001, 'abs', eps=1e-3)", metrics = true},
}
local by_name, order = {}, {}
for _, s in ipairs(SCHEDULES) do
  if not by_name[s[1]] then by_name[s[1]], order[#order + 1] = {}, s[1] end
  table.insert(by_name[s[1]], s)
end
for _, name in ipairs(order) do
  add({name = "lr_scheduler." .. name, out = "float64", cast = "none", tol = {float64 = {1e-13, 1e-15}},
       ref = "schedule(p.py, 100, p.metrics)",
       cases = function()
         local cs = {}
         for i, s in ipairs(by_name[name]) do cs[i] = {p = {index = i, py = s[3], metrics = s.metrics and METRICS or nil}} end
         return cs
       end,
       call = function(_, _, _, p)
         local s = by_name[name][p.index]
         local a, b = torch.zeros({1}):requires_grad_(), torch.zeros({1}):requires_grad_()
         local groups = {{params = {a}, lr = 0.1}, {params = {b}, lr = 0.02}}
         local o = s.adam and optim.Adam(groups, {lr = 1.0}) or optim.SGD(groups, {lr = 1.0, momentum = 0.9})
         local sched = s[2](o)
         local rows = {}
         local function record()
           local r = {}
           for i, g in ipairs(o.param_groups) do r[i], r[i + 2] = g.lr, s.adam and g.betas[1] or g.momentum end
           rows[#rows + 1] = r
         end
         record()
         for e = 1, 100 do
           o:step()
           if s.metrics then sched:step(METRICS[e]) else sched:step() end
           record()
         end
         return torch.tensor(rows, {dtype = "float64"})
       end})
end

-- The hooks together on one float64 Linear (check.py's hooked_linear does the same in PyTorch):
-- a forward pre-hook and a forward hook changing the input and output, a full backward hook
-- changing grad_input, a tensor hook on the input and retain_grad on the output.
add({name = "hooks on a Linear", out = "same*", cast = "none",
     ref = "hooked_linear(a, b, c)",
     cases = function()
       local cs = {}
       for _ = 1, G.count(6) do
         local n, i, o = G.randint(1, 4), G.randint(1, 5), G.randint(1, 4)
         cs[#cs + 1] = {a = G.make({n, i}, "float64", {edges = 0}), b = G.make({o, i}, "float64", {edges = 0}),
                        c = G.make({o}, "float64", {edges = 0})}
       end
       return cs
     end,
     call = function(a, b, c)
       local lin = torch.nn.Linear(b.shape[2], b.shape[1], {dtype = "float64", device = b.device})
       torch.no_grad(function()
         lin.weight:copy_(b)
         lin.bias:copy_(c)
       end)
       local x = a:clone():requires_grad_()
       x:register_hook(function(g) return g * 0.5 end)
       lin:register_forward_pre_hook(function(_, args) return {args[1] * 2} end)
       lin:register_forward_hook(function(_, _, out) return out + 1 end)
       lin:register_full_backward_hook(function(_, gi) return {gi[1] * 3} end)
       local out = lin(x)
       out:retain_grad()
       local loss = (out ^ 2):sum()
       loss:backward()
       return out:detach(), x.grad, lin.weight.grad, lin.bias.grad, out.grad
     end})
