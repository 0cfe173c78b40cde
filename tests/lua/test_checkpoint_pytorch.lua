-- Checkpoints between tide and PyTorch 1.13 (through /usr/bin/python3): a Sequential's
-- state_dict keys are PyTorch's ("0.weight", "2.bias"), so a safetensors file PyTorch wrote
-- loads into the same architecture in tide and gives PyTorch's outputs, and tide's file loads
-- into PyTorch with strict=True. Debian has no safetensors package for Python, so the Python
-- side reads and writes the format itself (8-byte header length, JSON header, raw data).
-- PyTorch's own format (.pt from torch.save): the files of tests/data/make_pt.py, read by
-- torch.load's restricted unpickler, and damaged or hostile ones refused clearly.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn

local DATA = dir .. "../data/"

T.test("torch.load reads a state_dict PyTorch saved as .pt, and gives PyTorch's outputs", function()
  local sd = torch.load(DATA .. "pt_state_dict.pt")
  T.eq(T.sorted_keys(sd), {"0.bias", "0.weight", "2.bias", "2.weight"})
  T.eq(sd["0.weight"].dtype, "float64")
  local m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)):double()
  m:load_state_dict(sd)
  local y = m(torch.tensor({{0.5, -1.0, 2.0}}, {dtype = "float64"})):flatten()
  -- printed by PyTorch 1.13 for the same file (make_pt.py's network, seed 0)
  T.eq(y[1]:item(), -0.0904511691730665)
  T.eq(y[2]:item(), 0.06984987958262323)
end)

T.test("torch.load of a .pt: numbers, strings, lists, tuples, None, views, dtypes, parameters", function()
  local c = torch.load(DATA .. "pt_mixed.pt")
  T.eq(c.epoch, 5)
  T.eq(math.type(c.epoch), "integer")
  T.eq(c.lr, 0.5)
  T.eq(c.name, "run1")
  T.eq(c.flag, true)
  T.eq(c.nothing, nil)
  T.eq(c.big, 2 ^ 40 // 1)
  T.eq(c.neg, -3)
  T.eq(c.list, {1, 2.5, "x"})
  local t = torch.arange(12, {dtype = "float32"}):reshape(3, 4):tolist()
  T.eq(c.pair[1]:tolist(), t)
  T.eq(c.pair[2]:tolist(), torch.tensor(t):t():tolist())
  T.eq(c.pair[1].dtype, "float32")
  T.eq(c.pair[2]:stride(), {1, 4}, "a transposed tensor keeps its strides")
  T.eq(c.half.dtype, "float16")
  T.eq(c.bf16.dtype, "bfloat16")
  T.eq(c.half:tolist(), t)
  T.eq(c.bf16:tolist(), t)
  T.eq(c.i64.dtype, "int64")
  T.eq(c.i64:tolist(), {0, 1, 2, 3, 4})
  T.eq(c.bool:tolist(), {true, false})
  T.eq(c.view:tolist(), {{4, 6}, {8, 10}})
  T.eq(c.view:stride(), {4, 2})
  T.eq(c.param.requires_grad, true)
  T.eq(c.param:tolist(), {1, 1})
  T.eq(c.nested.a.b.dtype, "int8")
  T.eq(c.empty:size(), {0, 3})
  T.eq(torch.load(DATA .. "pt_tensor.pt"):tolist(), t)
  local on = torch.load(DATA .. "pt_tensor.pt", {map_location = "cpu"})
  T.eq(tostring(on.device), "cpu")
end)

T.test("torch.load refuses what is not data, without running anything", function()
  T.error(function() return torch.load(DATA .. "pt_refused.pt") end,
          "cannot read the pickle: refuses to load 'datetime.date' (tide reads tensors, dicts, lists, tuples, " ..
          "numbers, strings, booleans and None, and never runs code from a checkpoint)")
  local s = T.read_bytes(DATA .. "pt_tensor.pt")
  local p = T.tmpdir() .. "/bad.pt"
  T.write_bytes(p, s:sub(1, #s - 30))
  T.error(function() return torch.load(p) end, "torch.load: ")
  -- a byte of the pickle changed: the CRC check fails before the pickle is read
  local at = s:find("_rebuild_tensor_v2", 1, true)
  T.write_bytes(p, s:sub(1, at - 1) .. "X" .. s:sub(at + 1))
  T.error(function() return torch.load(p) end, "CRC-32 mismatch")
  -- the format of PyTorch before 1.6 (a bare pickle with torch's magic number)
  T.write_bytes(p, "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19.")
  T.error(function() return torch.load(p) end, "PyTorch's legacy checkpoint format (before 1.6) is not supported")
end)

if not T.have_python_module("torch") then
  print("skipped: PyTorch interop (no PyTorch at " .. T.PYTHON .. ")")
  T.done()
end

local PY_COMMON = [=[
import json, struct, sys, torch
torch.manual_seed(0)
def arch():
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).double()
def save(sd, path):
    header, blobs, off = {}, [], 0
    for k, v in sd.items():
        b = v.detach().contiguous().numpy().tobytes()
        header[k] = {"dtype": "F64", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b); off += len(b)
    h = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h))); f.write(h); f.write(b"".join(blobs))
def load(path):
    raw = open(path, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n]); data = raw[8 + n:]; out = {}
    for k, d in header.items():
        if k == "__metadata__": continue
        assert d["dtype"] == "F64", d
        a, b = d["data_offsets"]
        out[k] = torch.frombuffer(bytearray(data[a:b]), dtype=torch.float64).reshape(d["shape"])
    return out
x = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], dtype=torch.float64)
]=]

local x = torch.tensor({{0.5, -1.0, 2.0}, {1.5, 0.25, -0.75}}, {dtype = "float64"})
local function arch() return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)):double() end
local parse = T.numbers

T.test("a Sequential saved by PyTorch loads into tide with PyTorch's keys and outputs", function()
  local path = T.tmpdir() .. "/from_torch.safetensors"
  local out, ok = T.python(PY_COMMON .. [[
m = arch(); save(m.state_dict(), sys.argv[1])
print(" ".join(repr(v) for v in m(x).detach().flatten().tolist()))
]], path)
  T.truthy(ok, out)
  local sd = torch.load(path)
  local keys = {}
  for k in pairs(sd) do keys[#keys + 1] = k end
  table.sort(keys)
  T.eq(keys, {"0.bias", "0.weight", "2.bias", "2.weight"})
  local m = arch()
  m:load_state_dict(sd)
  local want = parse(out)
  local got = m(x):flatten()
  T.eq(#want, 4)
  for i = 1, 4 do T.eq(got[i]:item(), want[i]) end
end)

T.test("a Sequential saved by tide loads into PyTorch with strict=True and gives tide's outputs", function()
  local path = T.tmpdir() .. "/from_tide.safetensors"
  torch.manual_seed(3)
  local m = arch()
  torch.save(m:state_dict(), path)
  local out, ok = T.python(PY_COMMON .. [[
m = arch(); m.load_state_dict(load(sys.argv[1]), strict=True)
print(" ".join(repr(v) for v in m(x).detach().flatten().tolist()))
]], path)
  T.truthy(ok, out)
  local want = parse(out)
  local got = m(x):flatten()
  T.eq(#want, 4)
  for i = 1, 4 do T.eq(got[i]:item(), want[i]) end
end)

T.done()
