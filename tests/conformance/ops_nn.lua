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

-- A keyword table, or nil when it is empty (an empty table would be a positional argument).
local function kwargs(t) return t ~= nil and next(t) ~= nil and t or nil end

-- f(...) with the keyword table kw appended when there is one.
local function with_kw(f, kw, ...)
  local args = table.pack(...)
  if kwargs(kw) then
    args.n = args.n + 1
    args[args.n] = kw
  end
  return f(table.unpack(args, 1, args.n))
end

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
         local m = torch.nn.PReLU(w:numel())
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
