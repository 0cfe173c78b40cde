-- The activations of torch.nn beyond ReLU / Sigmoid / Tanh / GELU, against PyTorch 1.13:
-- values and gradients, the layers' options and printed forms, PReLU's parameter, and the
-- errors. Reference values come from /usr/bin/python3 with PyTorch 1.13; each block quotes
-- the snippet that printed them. (The conformance table checks every one of them on random
-- inputs too: tests/conformance/ops_nn.lua.)
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn
local F = nn.functional

local function d(values) return torch.tensor(values, {dtype = "float64"}) end

T.test("functional activations match PyTorch", function()
  -- x = torch.tensor([-3.5, -1.25, -0.5, 0.25, 1.5, 4.0, 25.0], dtype=torch.float64)
  -- getattr(F, name)(x, **kw) for each row
  local x = d{-3.5, -1.25, -0.5, 0.25, 1.5, 4.0, 25.0}
  local expect = {
    {"leaky_relu", nil, {-0.035, -0.0125, -0.005, 0.25, 1.5, 4.0, 25.0}},
    {"elu", {alpha = 0.5}, {-0.4849013083, -0.3567476016, -0.1967346701, 0.25, 1.5, 4.0, 25.0}},
    {"selu", nil, {-1.705009341, -1.2543954463, -0.6917581878, 0.2626752468, 1.576051481, 4.2028039494, 26.2675246839}},
    {"celu", {alpha = 2.0}, {-1.6524521131, -0.929477143, -0.4423984339, 0.25, 1.5, 4.0, 25.0}},
    {"silu", nil, {-0.1025928076, -0.2783751735, -0.1887703344, 0.1405441252, 1.2263617143, 3.9280551602, 24.9999999997}},
    {"mish", nil, {-0.1040957545, -0.3084139611, -0.2207437747, 0.1695724097, 1.4033782664, 3.997412807, 25.0}},
    {"softplus", {beta = 2, threshold = 3}, {0.0004557332, 0.0394448671, 0.1566308438, 0.4870384921, 1.5242936758, 4.0, 25.0}},
    {"softsign", nil, {-0.7777777778, -0.5555555556, -0.3333333333, 0.2, 0.6, 0.8, 0.9615384615}},
    {"hardtanh", {min_val = -2.0, max_val = 3.0}, {-2.0, -1.25, -0.5, 0.25, 1.5, 3.0, 3.0}},
    {"relu6", nil, {0.0, 0.0, 0.0, 0.25, 1.5, 4.0, 6.0}},
    {"hardsigmoid", nil, {0.0, 0.2916666667, 0.4166666667, 0.5416666667, 0.75, 1.0, 1.0}},
    {"hardswish", nil, {0.0, -0.3645833333, -0.2083333333, 0.1354166667, 1.125, 4.0, 25.0}},
    {"logsigmoid", nil, {-3.5297504183, -1.5019290813, -0.9740769842, -0.5759394199, -0.201413278, -0.0181499279, 0.0}},
  }
  for _, e in ipairs(expect) do
    local y = e[2] and F[e[1]](x, e[2]) or F[e[1]](x)
    T.near(y, e[3], 1e-9, e[1])
    T.eq(y.dtype, "float64")
  end
  -- F.threshold(x, 0.5, -2.0); F.glu(torch.arange(12.).reshape(2,6)/4-1, 1) (dim 2 here)
  T.near(F.threshold(x, 0.5, -2.0), {-2, -2, -2, -2, 1.5, 4, 25})
  T.near(F.glu(torch.arange(12):reshape(2, 6):float() / 4 - 1, 2),
         {{-0.43782350420951843, -0.375, -0.281088262796402}, {0.38864994049072266, 0.6131808161735535, 0.8519527316093445}},
         1e-6)
end)

T.test("activation gradients match PyTorch", function()
  -- xg = x.clone().requires_grad_(); F.mish(xg).sum().backward(); xg.grad
  local x = d{-3.5, -1.25, -0.5, 0.25, 1.5, 4.0, 25.0}:requires_grad_()
  F.mish(x):sum():backward()
  T.near(x.grad, {-0.0727604134, -0.0146975625, 0.2895106779, 0.7541726677, 1.088487985, 1.0044328769, 1.0}, 1e-9)
  -- Large inputs: no NaN from the branch where() does not take.
  local big = d{-800, 800}:requires_grad_()
  ;(F.softplus(big) + F.elu(big) + F.celu(big, {alpha = 0.5}) + F.selu(big) + F.logsigmoid(big)):sum():backward()
  T.near(big.grad, {1, 4.0507009873554805})
end)

T.test("PReLU: one slope per channel, its gradient and state_dict", function()
  -- w = torch.tensor([0.1,-0.2,0.3], requires_grad=True); x = [[-1,2,-3],[4,-5,-6]]
  -- y = F.prelu(x, w); (y*y).sum().backward()
  local m = nn.PReLU(3)
  T.eq(tostring(m), "PReLU(num_parameters=3)")
  T.near(m.weight, {0.25, 0.25, 0.25})
  m:load_state_dict{weight = torch.tensor{0.1, -0.2, 0.3}}
  local x = torch.tensor({{-1, 2, -3}, {4, -5, -6}}, {dtype = "float32", requires_grad = true})
  local y = m(x)
  T.near(y, {{-0.1, 2.0, -0.9}, {4.0, 1.0, -1.8}}, 1e-6)
  ;(y * y):sum():backward()
  T.near(m.weight.grad, {0.2, -10.0, 27.0}, 1e-5)
  T.near(x.grad, {{-0.02, 4.0, -0.54}, {8.0, -0.4, -1.08}}, 1e-6)
  T.eq(nn.PReLU{init = 0.5, dtype = "float64"}.weight:tolist(), {0.5})
  T.error_usable(function() F.prelu(torch.zeros(2, 3), torch.zeros(2)) end,
                 "prelu: weight of shape {2} must hold 1 value or one per channel (3)")
end)

T.test("activation layers print and take their options as PyTorch", function()
  T.eq(tostring(nn.LeakyReLU()), "LeakyReLU(negative_slope=0.01)")
  T.eq(tostring(nn.LeakyReLU(0.2)), "LeakyReLU(negative_slope=0.2)")
  T.eq(tostring(nn.ELU()), "ELU(alpha=1.0)")
  T.eq(tostring(nn.CELU{alpha = 2}), "CELU(alpha=2)")
  T.eq(tostring(nn.Softplus()), "Softplus(beta=1, threshold=20)")
  T.eq(tostring(nn.Hardtanh()), "Hardtanh(min_val=-1.0, max_val=1.0)")
  T.eq(tostring(nn.Threshold(0.1, 20)), "Threshold(threshold=0.1, value=20)")
  T.eq(tostring(nn.GLU()), "GLU(dim=-1)")
  for _, name in ipairs{"SELU", "SiLU", "Mish", "Softsign", "ReLU6", "Hardsigmoid", "Hardswish", "LogSigmoid"} do
    T.eq(tostring(nn[name]()), name .. "()")
  end
  local x = d{-2, 0.75}
  T.near(nn.LeakyReLU{negative_slope = 0.5}(x), {-1, 0.75})
  T.near(nn.Softplus(2, 1)(x), {math.log(1 + math.exp(-4)) / 2, 0.75})
  T.near(nn.Hardtanh(-1.5, 0.25)(x), {-1.5, 0.25})
  T.near(nn.GLU(1)(x), {-2 / (1 + math.exp(-0.75))})
end)

T.test("activation errors name the op and the bad value", function()
  T.error_usable(function() F.elu(torch.tensor{1, 2}) end, "elu: expected a floating-point input, got dtype int64")
  T.error_usable(function() F.leaky_relu(d{1}, {slope = 1}) end, "leaky_relu: unknown keyword 'slope'")
  T.error_usable(function() F.hardtanh(d{1}, 2, 1) end, "hardtanh: min_val (2) must not exceed max_val (1)")
  T.error_usable(function() nn.Hardtanh(2, 1) end, "Hardtanh: min_val (2) must not exceed max_val (1)")
  T.error_usable(function() F.glu(torch.zeros(3, 3), 1) end, "glu: dim 1 has odd size 3; it must split into two halves")
  T.error_usable(function() F.glu(torch.zeros(4), 2) end, "glu: dim 2 is out of range for a 1-D input")
  T.error_usable(function() nn.Threshold(0.5) end, "Threshold: missing argument 'value'")
  T.error_usable(function() nn.ELU{alpha = "x"} end, "ELU: alpha must be a number, got \"x\"")
  T.error_usable(function() F.softplus(d{1}, 0) end, "softplus: beta must not be 0")
  T.error_usable(function() nn.ReLU6(true) end, "ReLU6: expected at most 0 positional arguments, got 1")
end)

T.done()
