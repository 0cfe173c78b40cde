-- Checkpoints between tide and PyTorch 1.13 (through /usr/bin/python3): a Sequential's
-- state_dict keys are PyTorch's ("0.weight", "2.bias"), so a safetensors file PyTorch wrote
-- loads into the same architecture in tide and gives PyTorch's outputs, and tide's file loads
-- into PyTorch with strict=True. Debian has no safetensors package for Python, so the Python
-- side reads and writes the format itself (8-byte header length, JSON header, raw data).
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local nn = torch.nn

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
local function parse(out)
  local vals = {}
  for v in out:gmatch("[-%d%.e+]+") do vals[#vals + 1] = tonumber(v) end
  return vals
end

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
