-- torch.save in PyTorch's format (any path not ending in ".safetensors"): tide reads its own
-- files back, and PyTorch 1.13 (/usr/bin/python3) loads them, weights_only=True included for a
-- state_dict, with the values, dtypes, views sharing one storage, strides and parameters
-- checked there; a model trained a step in tide loads into PyTorch's same architecture with
-- strict=True and gives tide's outputs; PyTorch's file of that model comes back the other way.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn

local _, tmp = T.tmpdir()
local DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "complex64", "complex128"}

-- A checkpoint with every kind of value torch.save's PyTorch format takes.
local function mixed()
  local base = torch.arange(12, {dtype = "float64"}):reshape(3, 4)
  local c = {
    epoch = 3, lr = 0.5, name = "run", flag = false, big = 2 ^ 40 // 1, neg = -70000,
    list = {1, 2.5, "x", true}, holes = {1, nil, 3}, [7] = "seven", [2.5] = "half",
    bytes = "\255\0ab",
    base = base, t = base:t(), col = base[{":", 2}], narrow = base[{{2, 3}, {2, 4}}],
    empty = torch.zeros(0, 3), scalar = torch.tensor(7.25), param = nn.Parameter(torch.ones(2)),
    nested = {a = {b = {c = torch.tensor({-1, 2}, {dtype = "int8"})}}},
  }
  for i, dt in ipairs(DTYPES) do c["dt_" .. dt] = torch.tensor({1, 0, i}):to(dt) end
  c.same = c.holes  -- one table reached twice
  return c
end

T.test("torch.save writes PyTorch's zip layout, read back by tide with the same values and sharing", function()
  local p = tmp("mixed.pt")
  torch.save(mixed(), p)
  T.eq(T.read_bytes(p):sub(1, 4), "PK\3\4")
  local c = torch.load(p)
  T.eq({c.epoch, c.lr, c.name, c.flag, c.big, c.neg}, {3, 0.5, "run", false, 2 ^ 40 // 1, -70000})
  T.eq(math.type(c.epoch), "integer")
  T.eq(math.type(c.lr), "float")
  T.eq(c.list, {1, 2.5, "x", true})
  T.eq({c.holes[1], c.holes[2], c.holes[3]}, {1, nil, 3})
  T.eq({c[7], c[2.5], c.bytes}, {"seven", "half", "\255\0ab"})
  T.truthy(rawequal(c.same, c.holes), "a table saved twice is one table")
  T.eq(c.t:tolist(), torch.arange(12, {dtype = "float64"}):reshape(3, 4):t():tolist())
  T.eq(c.t:stride(), {1, 4})
  T.eq(c.col:tolist(), {1, 5, 9})
  T.eq(c.narrow:tolist(), {{5, 6, 7}, {9, 10, 11}})
  c.base[{2, 2}] = 100  -- the views share the loaded storage
  T.eq(c.t[{2, 2}]:item(), 100)
  T.eq(c.col[2]:item(), 100)
  T.eq(c.narrow[{1, 1}]:item(), 100)
  T.eq(c.empty:size(), {0, 3})
  T.eq(c.scalar:dim(), 0)
  T.eq(c.scalar:item(), 7.25)
  T.eq(c.param.requires_grad, true)
  T.eq(c.nested.a.b.c:tolist(), {-1, 2})
  for i, dt in ipairs(DTYPES) do
    local x = c["dt_" .. dt]
    T.eq(x.dtype, dt)
    T.eq(x:tolist(), torch.tensor({1, 0, i}):to(dt):tolist(), dt)
  end
  -- a tensor alone, non-contiguous: the same tensor with its strides
  torch.save(torch.arange(6):reshape(2, 3):t(), tmp("one.pt"))
  local one = torch.load(tmp("one.pt"))
  T.eq(one:tolist(), {{0, 3}, {1, 4}, {2, 5}})
  T.eq(one:stride(), {1, 3})
  T.eq(one.dtype, "int64")
end)

T.test("torch.save keeps a state_dict's module order and an OrderedDict's order from torch.load", function()
  local m = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
  local p = tmp("order.pt")
  local sd = m:state_dict()
  sd.extra = torch.ones(1)  -- a key added later comes after the recorded ones
  torch.save(sd, p)
  local s = T.read_bytes(p)
  local pos = {}
  for _, k in ipairs{"0.weight", "0.bias", "2.weight", "2.bias", "extra"} do pos[#pos + 1] = s:find(k, 1, true) end
  for i = 2, #pos do T.truthy(pos[i - 1] < pos[i], "key order in the pickle") end
  -- read back and saved again: the order read is the order written
  torch.save(torch.load(p), tmp("order2.pt"))
  T.eq(T.read_bytes(tmp("order2.pt")):find("collections\nOrderedDict", 1, true) ~= nil, true)
end)

T.test("torch.save (PyTorch format) refuses what a checkpoint cannot hold, naming where it is", function()
  local p = tmp("bad.pt")
  T.error_usable(function() torch.save({a = {f = print}}, p) end,
                 "torch.save: the value at a.f is a function (a checkpoint holds tensors, tables, numbers, strings and booleans)")
  T.error_usable(function() torch.save({m = nn.Linear(1, 1)}, p) end,
                 "torch.save: the value at m is a table with a metatable, an object a checkpoint cannot hold " ..
                 "(for a module, save model:state_dict())")
  local loop = {inner = {}}
  loop.inner.back = loop
  T.error_usable(function() torch.save(loop, p) end,
                 "torch.save: the table at inner.back is the table itself or one holding it (a cycle)")
  T.error_usable(function() torch.save({w = torch.ones(2, {dtype = "uint16"})}, p) end,
                 "torch.save: " .. p .. ": the value at w is a tensor of dtype uint16, which PyTorch's checkpoints " ..
                 "cannot hold (convert it: x:long() or x:int())")
  T.error_usable(function() torch.save({[{}] = 1}, p) end,
                 "torch.save: the key of type table in the table to save is not a string, a number or a boolean")
  local freed = torch.ones(1)
  freed:free()
  T.error_usable(function() torch.save({list = {freed}}, p) end, "torch.save: the tensor at list[1] was freed")
  T.error_usable(function() torch.save(nil, p) end, "torch.save: expected the value to save as argument 1, got nil")
  T.error_usable(function() torch.save(io.stdout, p) end,
                 "torch.save: the value to save is a userdata that is not a tensor")
  T.eq((io.open(p, "rb")), nil, "no file is left behind")
  T.error_usable(function() torch.save(1, "/no/such/dir.pt") end,
                 "torch.save: /no/such/dir.pt: cannot create a file there: No such file or directory")
  -- a number alone is a checkpoint too, as in PyTorch
  torch.save(5, p)
  T.eq(torch.load(p), 5)
end)

if not T.have_python_module("torch") then
  print("skipped: PyTorch interop (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
end

T.test("PyTorch loads tide's .pt: values, dtypes, shared storages, strides, parameters", function()
  local p = tmp("for_torch.pt")
  torch.save(mixed(), p)
  local out, ok = T.python([[
import sys, torch, collections
c = torch.load(sys.argv[1])
assert (c["epoch"], c["lr"], c["name"], c["flag"], c["big"], c["neg"]) == (3, 0.5, "run", False, 2**40, -70000)
assert type(c["epoch"]) is int and type(c["lr"]) is float
assert c["list"] == [1, 2.5, "x", True] and c["holes"] == [1, None, 3] and c["same"] is c["holes"]
assert c[7] == "seven" and c[2.5] == "half" and c["bytes"] == b"\xff\x00ab"
base = torch.arange(12, dtype=torch.float64).reshape(3, 4)
assert torch.equal(c["base"], base) and torch.equal(c["t"], base.t()) and c["t"].stride() == (1, 4)
assert torch.equal(c["col"], base[:, 1]) and c["col"].stride() == (4,) and c["col"].storage_offset() == 1
assert torch.equal(c["narrow"], base[1:3, 1:4]) and c["narrow"].storage_offset() == 5
ptr = c["base"].storage().data_ptr()
assert all(c[k].storage().data_ptr() == ptr for k in ("t", "col", "narrow")), "views share one storage"
c["base"][1, 1] = 100
assert c["t"][1, 1] == 100 and c["col"][1] == 100 and c["narrow"][0, 0] == 100
assert c["empty"].shape == (0, 3) and c["scalar"].dim() == 0 and c["scalar"].item() == 7.25
assert isinstance(c["param"], torch.nn.Parameter) and c["param"].requires_grad
assert torch.equal(c["nested"]["a"]["b"]["c"], torch.tensor([-1, 2], dtype=torch.int8))
names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
         "complex64", "complex128"]
for i, n in enumerate(names):
    dt = getattr(torch, n)
    x = c["dt_" + n]
    assert x.dtype == dt, (n, x.dtype)
    assert torch.equal(x, torch.tensor([1, 0, i + 1]).to(dt)), (n, x)
one = torch.load(sys.argv[2], weights_only=True)
assert torch.equal(one, torch.arange(6).reshape(2, 3).t()) and one.stride() == (1, 3) and one.dtype == torch.int64
print("ok")
]], p, tmp("one.pt"))
  T.truthy(ok, out)
  T.eq(out, "ok\n")
end)

local PY_ARCH = [=[
import sys, torch, collections
def arch():
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).double()
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64)
]=]
local x = torch.tensor({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}}, {dtype = "float64"})
local function arch() return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)):double() end
local parse = T.numbers

T.test("a model trained a step in tide, saved as .pt, loads into PyTorch (weights_only, strict) with tide's outputs", function()
  torch.manual_seed(5)
  local m = arch()
  local opt = torch.optim.SGD(m:parameters(), {lr = 0.1})
  local loss = (m(x) - 1):pow(2):mean()
  loss:backward()
  opt:step()
  local p = tmp("trained.pt")
  torch.save(m:state_dict(), p)
  local out, ok = T.python(PY_ARCH .. [[
sd = torch.load(sys.argv[1], weights_only=True)
assert type(sd) is collections.OrderedDict, type(sd)
assert list(sd.keys()) == ["0.weight", "0.bias", "2.weight", "2.bias"], list(sd.keys())
assert all(type(v) is torch.Tensor and not v.requires_grad for v in sd.values())
m = arch(); m.load_state_dict(sd, strict=True)
print(" ".join(repr(v) for v in m(x).detach().flatten().tolist()))
]], p)
  T.truthy(ok, out)
  local want, got = parse(out), m(x):flatten()
  T.eq(#want, 4)
  for i = 1, 4 do T.eq(got[i]:item(), want[i]) end
end)

T.test("a .pt PyTorch writes of its model loads into tide and saves back to PyTorch unchanged", function()
  local from = tmp("from_torch.pt")
  local out, ok = T.python(PY_ARCH .. [[
torch.manual_seed(1)
m = arch(); torch.save(m.state_dict(), sys.argv[1])
print(" ".join(repr(v) for v in m(x).detach().flatten().tolist()))
]], from)
  T.truthy(ok, out)
  local m = arch()
  m:load_state_dict(torch.load(from))
  local want, got = parse(out), m(x):flatten()
  for i = 1, 4 do T.eq(got[i]:item(), want[i]) end
  local back = tmp("back.pt")
  torch.save(torch.load(from), back)
  local out2, ok2 = T.python([[
import sys, torch
a, b = torch.load(sys.argv[1]), torch.load(sys.argv[2], weights_only=True)
assert list(a.keys()) == list(b.keys()), (list(a.keys()), list(b.keys()))
assert all(torch.equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
print("ok")
]], from, back)
  T.truthy(ok2, out2)
  T.eq(out2, "ok\n")
end)

T.test("a .pt of 70000 tensors (zip64 end records) loads in PyTorch and in tide", function()
  local list = {}
  for i = 1, 70000 do list[i] = torch.tensor({i}, {dtype = "int32"}) end
  local p = tmp("many.pt")
  torch.save(list, p)
  local back = torch.load(p)
  T.eq({#back, back[1]:item(), back[70000]:item()}, {70000, 1, 70000})
  local out, ok = T.python([[
import sys, torch
l = torch.load(sys.argv[1])
assert len(l) == 70000 and all(t.item() == i + 1 and t.dtype == torch.int32 for i, t in enumerate(l))
print("ok")
]], p)
  T.truthy(ok, out)
  T.eq(out, "ok\n")
end)

T.test("complex tensors PyTorch saved load into tide (ComplexFloatStorage, ComplexDoubleStorage)", function()
  local p = tmp("complex_from_torch.pt")
  local out, ok = T.python([=[
import sys, torch
torch.save({"z": torch.tensor([1 + 2j, 3 - 4j]), "w": torch.tensor([[0.5j], [-1.0]], dtype=torch.complex128).t()}, sys.argv[1])
print("ok")
]=], p)
  T.truthy(ok, out)
  local c = torch.load(p)
  T.eq({c.z.dtype, c.w.dtype}, {"complex64", "complex128"})
  T.eq(torch.view_as_real(c.z):tolist(), {{1, 2}, {3, -4}})
  T.eq(torch.view_as_real(c.w):tolist(), {{{0, 0.5}, {-1, 0}}})
  T.eq(c.w:stride(), {1, 1})
end)

T.done()
