-- torch.nn module mechanics: subclassing, registration by assignment (order, names,
-- nesting), tostring, train/eval, to(), zero_grad, state_dict and load_state_dict (with every
-- error), containers, and the argument errors shared by all layers.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn

-- The names of an iterator of (name, value) pairs, in order.
local function names_of(iter)
  local out = {}
  for name in iter do out[#out + 1] = name end
  return out
end

local sorted_keys = T.sorted_keys

local Net = nn.Module:extend("Net")
function Net:init(hidden)
  self.fc1 = nn.Linear(2, hidden)
  self.act = nn.ReLU()
  self.scale = nn.Parameter(torch.ones(hidden))
  self.fc2 = nn.Linear(hidden, 1, {bias = false})
end
function Net:forward(x) return self.fc2(self.act(self.fc1(x)) * self.scale) end

T.test("require 'torch.nn' is torch.nn and the global nn", function()
  T.truthy(require("torch.nn") == torch.nn)
  T.truthy(nn.F == nn.functional)
  T.truthy(_G.nn == nil or _G.nn == torch.nn)
end)

T.test("a subclass constructs through init and calls forward", function()
  local m = Net(3)
  T.eq(m.fc1.weight.shape, {3, 2})
  T.eq(m.fc2.bias, nil)
  T.eq(m(torch.ones(4, 2)).shape, {4, 1})
  T.eq(tostring(Net), "class Net")
  T.truthy(m:isinstance(Net) and m:isinstance(nn.Module) and not m:isinstance(nn.Linear))
  T.truthy(m.fc1:isinstance(nn.Linear))
end)

T.test("parameters register in assignment order, own before children's", function()
  local m = Net(3)
  T.eq(names_of(m:named_parameters()), {"scale", "fc1.weight", "fc1.bias", "fc2.weight"})
  local params = m:parameters()
  T.eq(#params, 4)
  T.truthy(params[1] == m.scale and params[2] == m.fc1.weight and params[4] == m.fc2.weight)
  for _, p in ipairs(params) do T.truthy(p.requires_grad and p.is_leaf) end
  T.eq(names_of(m:named_parameters("net")), {"net.scale", "net.fc1.weight", "net.fc1.bias", "net.fc2.weight"})
  T.eq(#m:parameters(false), 1)
end)

T.test("children, modules and their names", function()
  local m = Net(3)
  T.eq(names_of(m:named_children()), {"fc1", "act", "fc2"})
  local kids = m:children()
  T.truthy(kids[1] == m.fc1 and kids[2] == m.act and kids[3] == m.fc2)
  local Outer = nn.Module:extend("Outer")
  function Outer:init() self.body = Net(2); self.head = nn.Sequential(nn.Linear(1, 1), nn.Sigmoid()) end
  local o = Outer()
  T.eq(names_of(o:named_modules()), {"", "body", "body.fc1", "body.act", "body.fc2", "head", "head.0", "head.1"})
  T.eq(#o:modules(), 8)
  T.truthy(o:modules()[1] == o)
  T.eq(names_of(o:named_parameters()), {"body.scale", "body.fc1.weight", "body.fc1.bias", "body.fc2.weight",
                                        "head.0.weight", "head.0.bias"})
end)

T.test("reassignment keeps the place, nil removes, kinds are told apart", function()
  local m = Net(3)
  local old = m.fc1
  m.fc1 = nn.Linear(2, 3)
  T.truthy(m.fc1 ~= old)
  T.eq(names_of(m:named_children()), {"fc1", "act", "fc2"})
  m.act = nil
  T.eq(names_of(m:named_children()), {"fc1", "fc2"})
  T.eq(m.act, nil)
  m.scale = nn.Parameter(torch.zeros(3))
  T.eq(names_of(m:named_parameters())[1], "scale")
  -- Plain tensors and non-leaves are fields, not parameters.
  m.cache = torch.ones(2)
  m.derived = m.scale * 2
  m.frozen = nn.Parameter(torch.ones(1), false)
  m.leaf = torch.zeros(2, {requires_grad = true})
  T.eq(names_of(m:named_parameters(nil, false)), {"scale", "frozen", "leaf"})
  T.eq(m.cache:tolist(), {1, 1})
  T.eq(m.derived.grad_fn, "MulBackward")
  T.eq(m.frozen.requires_grad, false)
  m.hidden = 5
  T.eq(m.hidden, 5)
  m.hidden = nn.Tanh()
  T.eq(names_of(m:named_children()), {"fc1", "fc2", "hidden"})
end)

T.test("nn.Parameter shares storage, is a leaf, and is not the given tensor", function()
  local t = torch.zeros(2)
  local p = nn.Parameter(t)
  T.truthy(p.requires_grad and p.is_leaf and not t.requires_grad)
  torch.no_grad(function() p:fill_(3) end)
  T.eq(t:tolist(), {3, 3})
  T.error_usable(function() nn.Parameter({1, 2}) end, "Parameter: expected a tensor for data, got table")
  T.error_usable(function() nn.Parameter(t, 1) end, "Parameter: requires_grad must be true or false, got 1")
end)

T.test("shared parameters and modules are listed once, saved under every name", function()
  local Tied = nn.Module:extend("Tied")
  function Tied:init()
    self.a = nn.Linear(2, 2)
    self.b = self.a
  end
  local m = Tied()
  T.eq(#m:parameters(), 2)
  T.eq(names_of(m:named_modules()), {"", "a"})
  T.eq(sorted_keys(m:state_dict()), {"a.bias", "a.weight", "b.bias", "b.weight"})
end)

T.test("tostring prints the tree as PyTorch does", function()
  local Outer = nn.Module:extend("Outer")
  function Outer:init()
    self.net = Net(3)
    self.seq = nn.Sequential(nn.Conv2d(1, 8, 3, {padding = 1}), nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.25))
    self.norm = nn.LayerNorm(4)
  end
  T.eq(tostring(Outer()), table.concat({
    "Outer(",
    "  (net): Net(",
    "    (fc1): Linear(in_features=2, out_features=3, bias=true)",
    "    (act): ReLU()",
    "    (fc2): Linear(in_features=3, out_features=1, bias=false)",
    "  )",
    "  (seq): Sequential(",
    "    (0): Conv2d(1, 8, kernel_size={3, 3}, stride={1, 1}, padding={1, 1})",
    "    (1): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1)",
    "    (2): Flatten(start_dim=2, end_dim=-1)",
    "    (3): Dropout(p=0.25)",
    "  )",
    "  (norm): LayerNorm({4}, eps=1e-05, elementwise_affine=true)",
    ")"}, "\n"))
  T.eq(tostring(nn.Module()), "Module()")
  -- A layer whose extra_repr has several lines prints them like children.
  local Multi = nn.Module:extend("Multi")
  function Multi:extra_repr() return "a=1\nb=2" end
  T.eq(tostring(Multi()), "Multi(\n  a=1\n  b=2\n)")
end)

T.test("every layer's one-line repr", function()
  T.eq(tostring(nn.Conv2d(2, 4, {3, 5}, {stride = 2, dilation = 2, groups = 2, bias = false})),
       "Conv2d(2, 4, kernel_size={3, 5}, stride={2, 2}, dilation={2, 2}, groups=2, bias=false)")
  T.eq(tostring(nn.Conv2d(1, 1, 3, {padding = "same"})), 'Conv2d(1, 1, kernel_size={3, 3}, stride={1, 1}, padding="same")')
  T.eq(tostring(nn.MaxPool2d({2, 3}, {stride = 1, padding = 1})), "MaxPool2d(kernel_size={2, 3}, stride=1, padding=1, dilation=1)")
  T.eq(tostring(nn.Embedding(10, 3, {padding_idx = 1})), "Embedding(10, 3, padding_idx=1)")
  T.eq(tostring(nn.Embedding(10, 3)), "Embedding(10, 3)")
  T.eq(tostring(nn.LayerNorm({2, 3}, {eps = 1e-6, elementwise_affine = false})),
       "LayerNorm({2, 3}, eps=1e-06, elementwise_affine=false)")
  T.eq(tostring(nn.GELU{approximate = "tanh"}), 'GELU(approximate="tanh")')
  T.eq(tostring(nn.Softmax(2)), "Softmax(dim=2)")
  T.eq(tostring(nn.LogSoftmax{dim = -1}), "LogSoftmax(dim=-1)")
  T.eq(tostring(nn.Sigmoid()) .. tostring(nn.Tanh()), "Sigmoid()Tanh()")
  T.eq(tostring(nn.CrossEntropyLoss{label_smoothing = 0.1}), "CrossEntropyLoss()")
end)

T.test("train and eval reach every submodule", function()
  local m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout()))
  T.eq(m.training, true)
  T.truthy(m:eval() == m)
  T.eq({m.training, m[1].training, m[2].training, m[2][1].training}, {false, false, false, false})
  m:train()
  T.eq({m.training, m[2][1].training}, {true, true})
  m[2]:train(false)
  T.eq({m.training, m[2][1].training}, {true, false})
  T.error_usable(function() m:train("yes") end, 'Sequential:train: mode must be true or false, got "yes"')
end)

T.test("zero_grad sets gradients to nil, or to zeros on request", function()
  local m = Net(2)
  m(torch.ones(3, 2)):sum():backward()
  T.truthy(m.fc1.weight.grad ~= nil)
  m:zero_grad()
  for _, p in ipairs(m:parameters()) do T.eq(p.grad, nil) end
  m(torch.ones(3, 2)):sum():backward()
  m:zero_grad{set_to_none = false}
  T.eq(m.fc1.weight.grad:tolist(), {{0, 0}, {0, 0}})
end)

T.test("to converts parameters in place of the module and keeps them leaves", function()
  local m = Net(2)
  m.fc1:register_buffer("steps", torch.tensor{3})
  m.fc1:register_buffer("running", torch.zeros(2))
  m(torch.ones(1, 2)):sum():backward()
  local before = m.fc1.weight:clone()
  T.truthy(m:to("float64") == m)
  for name, p in m:named_parameters() do
    T.eq(p.dtype, "float64", name)
    T.truthy(p.is_leaf and p.requires_grad, name)
    T.eq(p.grad.dtype, "float64", name)
  end
  T.near(m.fc1.weight, before)
  T.eq(m.fc1.steps.dtype, "int64")         -- integer buffers keep their dtype
  T.eq(m.fc1.running.dtype, "float64")
  T.eq(names_of(m:named_parameters()), {"scale", "fc1.weight", "fc1.bias", "fc2.weight"})
  m:to{dtype = torch.float}
  T.eq(m.fc2.weight.dtype, "float32")
  m:double()
  T.eq(m.scale.dtype, "float64")
  m:to(torch.zeros(1, {dtype = "float32"}))
  T.eq(m.scale.dtype, "float32")
  -- Where nothing changes, the parameters stay the same tensors (an optimizer keeps them).
  local w = m.fc1.weight
  T.truthy(m:to("cpu") == m)
  m:to{device = "cpu", dtype = "float32"}
  m:float()
  T.truthy(m.fc1.weight == w)
  T.eq(tostring(m.fc1.weight.device), "cpu")
  T.error_usable(function() m:to(5) end, "Net:to: expected a device, a dtype, a {device=, dtype=} table or a tensor, got 5")
end)

T.test("state_dict is flat with dotted keys, detached, and holds buffers", function()
  local m = Net(2)
  m.fc1:register_buffer("running", torch.ones(2))
  m.fc1:register_buffer("scratch", torch.ones(2), false)
  local sd = m:state_dict()
  T.eq(sorted_keys(sd), {"fc1.bias", "fc1.running", "fc1.weight", "fc2.weight", "scale"})
  T.eq(sd["fc1.weight"].requires_grad, false)
  T.near(sd["fc1.weight"], m.fc1.weight)
  T.eq(names_of(m.fc1:named_buffers()), {"running", "scratch"})
  T.eq(#m:buffers(), 2)
end)

T.test("load_state_dict round trip", function()
  torch.manual_seed(1)
  local a = Net(3)
  local b = Net(3)
  local x = torch.randn(4, 2)
  T.truthy(a(x):sub(b(x)):abs():max():item() > 0)
  local result = b:load_state_dict(a:state_dict())
  T.eq(result, {missing_keys = {}, unexpected_keys = {}})
  T.near(b(x), a(x))
  for _, p in ipairs(b:parameters()) do T.truthy(p.is_leaf and p.requires_grad) end
  -- Values are converted to the parameter's dtype.
  local sd = a:state_dict()
  sd.scale = torch.tensor({2, 3, 4}, {dtype = "float64"})
  b:load_state_dict(sd)
  T.eq(b.scale:tolist(), {2, 3, 4})
  T.eq(b.scale.dtype, "float32")
end)

T.test("load_state_dict names missing and unexpected keys and shape mismatches", function()
  local m = Net(2)
  local sd = m:state_dict()
  sd["fc1.bias"] = nil
  sd["fc3.weight"] = torch.ones(1)
  T.error_usable(function() m:load_state_dict(sd) end,
    'load_state_dict: error(s) in loading the state dict for Net: missing keys "fc1.bias"; unexpected keys "fc3.weight"')
  local result = m:load_state_dict(sd, {strict = false})
  T.eq(result, {missing_keys = {"fc1.bias"}, unexpected_keys = {"fc3.weight"}})
  sd = m:state_dict()
  sd["fc1.weight"] = torch.ones(3, 2)
  T.error_usable(function() m:load_state_dict(sd, {strict = false}) end,
    'size mismatch for "fc1.weight": copying a tensor of shape {3,2} from the state dict, the shape in the current model is {2,2}')
  sd["fc1.weight"] = "weights"
  T.error_usable(function() m:load_state_dict(sd) end, 'value for "fc1.weight" is "weights", expected a tensor')
  T.error_usable(function() m:load_state_dict(5) end, "load_state_dict: expected a table of tensors, got 5")
  T.error_usable(function() m:load_state_dict({}, {strict = false, strict_mode = 1}) end,
    "load_state_dict: unknown keyword 'strict_mode' (valid: strict)")
  -- Nothing is copied when loading fails.
  local w = m.fc1.weight:clone()
  sd = m:state_dict()
  sd["fc1.weight"] = torch.zeros(2, 2)
  sd["fc2.weight"] = torch.zeros(5)
  pcall(m.load_state_dict, m, sd)
  T.near(m.fc1.weight, w)
end)

T.test("Sequential: calls in order, indexes from 1, #, ipairs, append", function()
  local seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
  T.eq(#seq, 3)
  T.truthy(seq[1]:isinstance(nn.Linear) and seq[-1] == seq[3] and seq[-3] == seq[1])
  T.eq(seq[4], nil)
  T.eq(seq[0], nil)
  local count = 0
  for i, m in ipairs(seq) do count = count + 1; T.truthy(m == seq[i]) end
  T.eq(count, 3)
  local x = torch.randn(5, 2)
  T.near(seq(x), seq[3](seq[2](seq[1](x))))
  seq:append(nn.Sigmoid())
  T.eq(#seq, 4)
  T.eq(names_of(seq:named_parameters()), {"0.weight", "0.bias", "2.weight", "2.bias"})
  seq[2] = nn.Tanh()
  T.truthy(seq[2]:isinstance(nn.Tanh))
  T.eq(names_of(seq:named_children()), {"0", "1", "2", "3"})
  T.truthy(seq["0"] == seq[1], "the child named \"0\" is seq[1]")
  T.near(nn.Sequential()(x), x)
  T.error_usable(function() seq[7] = nn.ReLU() end, "Sequential: index 7 is out of range for 4 modules")
  T.error_usable(function() seq[1] = 5 end, "Sequential: expected a module at index 1, got 5")
  T.error_usable(function() nn.Sequential(nn.ReLU(), torch.ones(2)) end,
    "Sequential: argument 2 is a tensor of shape {2}, expected a module")
  T.error_usable(function() seq:append("relu") end, 'Sequential:append: expected a module, got "relu"')
end)

T.test("ModuleList registers a list of modules", function()
  local list = nn.ModuleList{nn.Linear(1, 2), nn.Linear(2, 3)}
  T.eq(#list, 2)
  list:append(nn.Linear(3, 4))
  list:extend{nn.ReLU()}
  T.eq(#list, 4)
  T.eq(#list:parameters(), 6)
  T.eq(list[3].out_features, 4)
  T.eq(#nn.ModuleList(nn.ReLU(), nn.Tanh()), 2)
  T.eq(#nn.ModuleList(), 0)
  local Stack = nn.ModuleList:extend("Stack")
  T.eq(tostring(Stack{nn.ReLU()}), "Stack(\n  (0): ReLU()\n)")
  T.error_usable(function() list(torch.ones(1)) end, "ModuleList: is a container without forward")
  T.error_usable(function() nn.ModuleList{nn.ReLU(), 3} end, "ModuleList: element 2 is 3, expected a module")
  T.error_usable(function() list:extend(3) end, "ModuleList:extend: expected a list of modules, got 3")
end)

T.test("buffers, register_parameter, add_module, apply, requires_grad_", function()
  local m = nn.Module()
  m:register_parameter("w", nn.Parameter(torch.ones(2)))
  m:register_buffer("b", torch.zeros(2))
  m:add_module("lin", nn.Linear(2, 2))
  T.eq(names_of(m:named_parameters()), {"w", "lin.weight", "lin.bias"})
  T.eq(sorted_keys(m:state_dict()), {"b", "lin.bias", "lin.weight", "w"})
  m.b = torch.ones(2)  -- assigning to a buffer replaces the buffer
  T.eq(m:state_dict().b:tolist(), {1, 1})
  m:register_parameter("w", nil)
  T.eq(m.w, nil)
  local seen = {}
  m:apply(function(mod) seen[#seen + 1] = tostring(mod):match("^%w+") end)
  T.eq(seen, {"Linear", "Module"})
  m:requires_grad_(false)
  T.eq(m.lin.weight.requires_grad, false)
  T.error_usable(function() m:add_module("x", 5) end, 'Module:add_module: expected a module for \'x\', got 5')
  T.error_usable(function() m:register_buffer("x", 5) end, "Module:register_buffer: expected a tensor for tensor, got 5")
  -- every argument of the registry methods is checked (found by the API fuzzer: raw Lua errors)
  local t = torch.zeros(2)
  T.error_usable(function() m:register_parameter(t, nn.Parameter(t)) end,
    "Module:register_parameter: the name must be a non-empty string without '.', got a tensor of shape {2}")
  T.error_usable(function() m:register_buffer("a.b", t) end,
    "Module:register_buffer: the name must be a non-empty string without '.', got \"a.b\"")
  T.error_usable(function() m:register_buffer("c", t, "yes") end,
    "Module:register_buffer: persistent must be true or false, got \"yes\"")
  T.error_usable(function() m:apply(5) end, "Module:apply: expected a function, got 5")
  T.error_usable(function() m:apply() end, "Module:apply: expected a function, got nil")
  T.error_usable(function() m:named_parameters(t) end, "Module:named_parameters: prefix must be a string, got a tensor of shape {2}")
  T.error_usable(function() m:named_parameters("p", 1) end, "Module:named_parameters: recurse must be true or false, got 1")
  T.error_usable(function() m:named_buffers({}) end, "Module:named_buffers: prefix must be a string, got table")
  T.error_usable(function() m:named_modules(true) end, "Module:named_modules: prefix must be a string, got true")
  T.eq(names_of(m:named_parameters("net")), {"net.lin.weight", "net.lin.bias"})
  T.eq(names_of(m:named_parameters("net", false)), {})
  local called = 0
  m:apply(setmetatable({}, {__call = function() called = called + 1 end}))
  T.eq(called, 2)
  local seq = nn.Sequential(nn.ReLU(), nn.Tanh())
  T.error_usable(function() return seq:__getitem(t) end, "Sequential: an index must be an integer, got a tensor of shape {2}")
  T.error_usable(function() seq[1.5] = nn.ReLU() end, "Sequential: cannot assign ReLU() to the key 1.5 (submodules, parameters and buffers are named by strings)")
  T.error_usable(function() seq:__setitem(1.5, nn.ReLU()) end, "Sequential: an index must be an integer, got 1.5")
  T.eq(tostring(seq[2.0]), "Tanh()")
end)

T.test("module errors name the class and the field", function()
  local m = Net(2)
  T.error_usable(function() m.fc1 = 5 end, "Net: cannot assign 5 to submodule 'fc1' (expected a module or nil)")
  T.error_usable(function() m.scale = "x" end,
    "Net: cannot assign \"x\" to parameter 'scale' (expected a leaf tensor or nil)")
  T.error_usable(function() m.scale = m.scale * 2 end, "cannot assign a tensor of shape {2} to parameter 'scale'")
  T.error_usable(function() m.scale = nn.ReLU() end, "Net: cannot assign a module to 'scale', which is a parameter or buffer")
  T.error_usable(function() nn.Module()(torch.ones(1)) end, "Module: forward is not implemented")
  T.error_usable(function() return #m end, "Net: has no length (only Sequential and ModuleList do)")
  T.error_usable(function() m[1] = nn.ReLU() end, "Net: cannot assign to index 1")
  T.error_usable(function() nn.Module:extend() end, "Module:extend: expected a class name string, got nil")
  T.error_usable(function() m:extend("X") end, "Module:extend: call it on a class")
end)

T.test("constructor arguments: keywords, positionals, and their errors", function()
  T.eq(nn.Linear{in_features = 4, out_features = 2}.weight.shape, {2, 4})
  T.eq(nn.Linear(4, 2, false).bias, nil)
  T.eq(nn.Linear(4, 2, {dtype = "float64"}).weight.dtype, "float64")
  T.eq(nn.Linear(4.0, 2).in_features, 4)
  T.error_usable(function() nn.Linear(4) end, "Linear: missing argument 'out_features'")
  T.error_usable(function() nn.Linear(4, 2, {bais = false}) end, "Linear: unknown keyword 'bais' (did you mean 'bias'? valid: in_features, out_features, bias, device, dtype)")
  T.error_usable(function() nn.Linear(4, 2, true, {bias = false}) end, "Linear: got two values for argument 'bias'")
  T.error_usable(function() nn.Linear(4, 2, true, "cpu", "float32", 1) end,
    "Linear: expected at most 5 positional arguments, got 6")
  T.error_usable(function() nn.Linear(-1, 2) end, "Linear: in_features must be an integer >= 0, got -1")
  T.error_usable(function() nn.Linear(2.5, 2) end, "Linear: in_features must be an integer >= 0, got 2.5")
  T.error_usable(function() nn.Linear(2, 2, {bias = 1}) end, "Linear: bias must be true or false, got 1")
  T.error_usable(function() nn.ReLU(true) end, "ReLU: expected at most 0 positional arguments, got 1")
  T.error_usable(function() nn.Softmax() end, "Softmax: missing argument 'dim'")
  T.error_usable(function() nn.Softmax("last") end, 'Softmax: dim must be an integer >= ')
  T.error_usable(function() nn.Dropout(1.5) end, "Dropout: p must be between 0 and 1, got 1.5")
  T.error_usable(function() nn.GELU("erf") end, 'GELU: approximate must be "none" or "tanh", got "erf"')
  T.error_usable(function() nn.Conv2d(3, 4, 3, {groups = 2}) end, "Conv2d: in_channels (3) must be divisible by groups (2)")
  T.error_usable(function() nn.Conv2d(1, 4, {3, 3, 3}) end,
    "Conv2d: kernel_size must be a number or a table of 2 numbers, got 3 numbers")
  T.error_usable(function() nn.Conv2d(1, 4, 3, {stride = 0}) end, "Conv2d: stride must be an integer >= 1, got 0")
  T.error_usable(function() nn.Conv2d(1, 4, 2, {padding = "same"}) end,
    'Conv2d: padding="same" needs dilation * (kernel_size - 1) even, got kernel_size {2,2} and dilation {1,1}')
  T.error_usable(function() nn.Conv2d(1, 4, 3, {padding = "same", stride = 2}) end,
    'Conv2d: padding="same" needs stride 1, got stride {2,2}')
  T.error_usable(function() nn.MaxPool2d(0) end, "MaxPool2d: kernel_size must be an integer >= 1, got 0")
  T.error_usable(function() nn.Embedding(5, 2, {padding_idx = 6}) end,
    "Embedding: padding_idx must be an index in 1..5 (or -5..-1), got 6")
  T.error_usable(function() nn.LayerNorm({}, 1e-5) end, "LayerNorm: normalized_shape must have at least one size")
  T.error_usable(function() nn.MSELoss{reduction = "avg"} end,
    'MSELoss: reduction must be "mean", "sum" or "none", got "avg"')
  T.error_usable(function() nn.CrossEntropyLoss{weight = {1, 2}} end,
    "CrossEntropyLoss: expected a tensor for weight, got table")
end)

T.done()
