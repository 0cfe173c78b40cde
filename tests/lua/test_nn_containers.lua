-- nn.Identity, nn.Unflatten and the containers ModuleDict, ParameterList and ParameterDict:
-- registration (parameters(), state_dict() keys as PyTorch's, 1-based list indices), the
-- dict methods, printed forms as PyTorch prints them, and errors. The printed forms were
-- taken from PyTorch 1.13 (print(nn.ParameterList([...])) and so on).
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local nn = torch.nn

local sorted_keys = T.sorted_keys

T.test("Identity and Unflatten", function()
  local x = torch.randn(4, 6)
  T.eq(nn.Identity()(x) == x, true)
  -- As in PyTorch, Identity takes any arguments and ignores them.
  T.eq(tostring(nn.Identity(54, {unused = 0.1})), "Identity()")
  local u = nn.Unflatten(2, {2, 3})
  T.eq(tostring(u), "Unflatten(dim=2, unflattened_size={2, 3})")
  T.eq(u(x).shape, {4, 2, 3})
  T.eq(nn.Unflatten{dim = -1, unflattened_size = {3, -1}}(x).shape, {4, 3, 2})
  T.eq(u(x):flatten(2):tolist(), x:tolist())
  T.error_usable(function() nn.Unflatten(2, 6) end, "Unflatten: unflattened_size must be a table of sizes, got 6")
  T.error_usable(function() nn.Unflatten(2) end, "Unflatten: missing argument 'unflattened_size'")
end)

T.test("ModuleDict registers its modules by name", function()
  local md = nn.ModuleDict{conv = nn.Conv2d(1, 2, 3), act = nn.ReLU()}
  -- A Lua table has no order: its keys are taken sorted.
  T.eq(tostring(md), "ModuleDict(\n  (act): ReLU()\n  (conv): Conv2d(1, 2, kernel_size={3, 3}, stride={1, 1})\n)")
  T.eq(sorted_keys(md:state_dict()), {"conv.bias", "conv.weight"})
  T.eq(#md:parameters(), 2)
  T.eq(md:keys(), {"act", "conv"})
  T.eq(#md, 2)
  T.eq(md.conv.out_channels, 2)
  T.eq(md:contains("act"), true)
  -- A list of pairs keeps its order.
  local ordered = nn.ModuleDict{{"z", nn.ReLU()}, {"a", nn.Tanh()}}
  T.eq(ordered:keys(), {"z", "a"})
  local names = {}
  for k, m in ordered:items() do names[#names + 1] = k .. "=" .. tostring(m) end
  T.eq(names, {"z=ReLU()", "a=Tanh()"})
  ordered:update{{"b", nn.Sigmoid()}}
  T.eq(ordered:keys(), {"z", "a", "b"})
  T.eq(tostring(ordered:pop("a")), "Tanh()")
  T.eq(ordered:keys(), {"z", "b"})
  ordered:clear()
  T.eq(#ordered, 0)
  T.error_usable(function() md:update{keys = nn.ReLU()} end, "ModuleDict: key \"keys\" clashes with a method of ModuleDict")
  T.error_usable(function() nn.ModuleDict{a = 1} end, "ModuleDict: value for \"a\" is 1, expected a module")
  T.error_usable(function() md:pop("nope") end, "ModuleDict:pop: no key \"nope\"")
  T.error_usable(function() md(torch.zeros(1)) end, "ModuleDict: is a container without forward")
end)

T.test("ParameterList: tensors become parameters named 0, 1, ... (PyTorch's keys)", function()
  local pl = nn.ParameterList{nn.Parameter(torch.randn(2, 3)), torch.zeros(4)}
  T.eq(tostring(pl), "ParameterList(\n    (0): Parameter containing: [torch.float32 of size 2x3]\n" ..
                     "    (1): Parameter containing: [torch.float32 of size 4]\n)")
  T.eq(pl[2].requires_grad, true)
  T.eq(pl[-1].shape, {4})
  T.eq(#pl, 2)
  T.eq(sorted_keys(pl:state_dict()), {"0", "1"})
  pl:append(torch.ones(1))
  T.eq(#pl:parameters(), 3)
  pl[1] = torch.ones(5, {dtype = "float64"})
  T.eq(pl[1].shape, {5})
  local sizes = {}
  for i, p in ipairs(pl) do sizes[i] = p:numel() end
  T.eq(sizes, {5, 4, 1})
  T.eq(tostring(nn.ParameterList()), "ParameterList()")
  T.error_usable(function() pl[7] = torch.ones(1) end, "ParameterList: index 7 is out of range for 3 parameters")
  T.error_usable(function() pl:append(3) end, "ParameterList:append: value for 4 is 3, expected a tensor")
end)

T.test("ParameterDict: tensors become parameters by name", function()
  local pd = nn.ParameterDict{b = torch.randn(2), a = torch.zeros(3, {dtype = "float64"})}
  T.eq(tostring(pd), "ParameterDict(\n    (a): Parameter containing: [torch.float64 of size 3]\n" ..
                     "    (b): Parameter containing: [torch.float32 of size 2]\n)")
  pd.c = torch.ones(1)
  T.eq(pd.c.requires_grad, true)
  T.eq(pd:keys(), {"a", "b", "c"})
  T.eq(sorted_keys(pd:state_dict()), {"a", "b", "c"})
  local model = nn.Sequential(nn.Linear(2, 2))
  model.extra = pd
  T.eq(#model:parameters(), 5)
  T.eq(pd:pop("b").shape, {2})
  T.eq(#pd, 2)
  T.error_usable(function() nn.ParameterDict{x = "no"} end, "ParameterDict: value for \"x\" is \"no\", expected a tensor")
  T.error_usable(function() nn.ParameterDict{{"x"}} end, "ParameterDict:update: element 1 must be a {name, value} pair")
end)

T.done()
