-- torch.save / torch.load (safetensors): round trips of every dtype, 0-d, empty and
-- non-contiguous tensors, nested tables and lists, overwriting; the dotted names in the file;
-- files written by PyTorch and NumPy by hand (tests/data, made by tests/data/make_safetensors.py);
-- files written here read back by an independent Python reader; bad values and damaged files.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")

local DATA = dir .. "../data/"
local TMP, tmp = T.tmpdir()
local read_bytes, write_bytes = T.read_bytes, T.write_bytes

-- The JSON header of a safetensors file, as text.
local function header_of(path)
  local s = read_bytes(path)
  return s:sub(9, 8 + string.unpack("<I8", s))
end

-- A file from a header text and data bytes.
local function st_file(header, data) return string.pack("<I8", #header) .. header .. (data or "") end

local DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64"}

-- make_safetensors.py's values for a (2, 3) tensor of dtype dt, flattened.
local function fixture_values(dt)
  local out = {}
  for k = 0, 5 do
    if dt == "bool" then out[#out + 1] = k % 2 == 1
    elseif dt == "uint8" then out[#out + 1] = k
    elseif dt:match("float") then out[#out + 1] = (k - 2) * 0.5
    else out[#out + 1] = k - 2 end
  end
  return out
end

local function flat(t) return t:reshape(-1):tolist() end

-- ---------------------------------------------------------------------------------------
-- Round trips

T.test("a tensor of every dtype, 0-d and empty, comes back as itself", function()
  for _, dt in ipairs(DTYPES) do
    for _, shape in ipairs({{2, 3}, {}, {0, 4}}) do
      local x = torch.tensor(fixture_values(dt), {dtype = dt})
      if #shape == 0 then x = x[2]:clone() elseif shape[1] == 0 then x = torch.zeros(0, 4, {dtype = dt}) else x = x:reshape(2, 3) end
      torch.save(x, tmp("one.safetensors"))
      local y = torch.load(tmp("one.safetensors"))
      T.truthy(torch.is_tensor(y), dt .. ": a tensor comes back")
      T.eq(y.dtype, dt, dt)
      T.eq(y.shape, x.shape, dt)
      T.eq(y:tolist(), x:tolist(), dt)
    end
  end
end)

T.test("nested tables and lists keep their shape; keys become dotted names", function()
  local sd = {
    fc1 = {weight = torch.arange(6):reshape(2, 3):float(), bias = torch.tensor{0.5, -1}},
    layers = {torch.tensor{1, 2}, {w = torch.tensor(true)}},
    ["head.scale"] = torch.tensor(3.0, {dtype = "float64"}),
    [7] = torch.zeros(1, {dtype = "int8"}),
  }
  torch.save(sd, tmp("nested.safetensors"))
  local back = torch.load(tmp("nested.safetensors"))
  T.eq(back.fc1.weight:tolist(), {{0, 1, 2}, {3, 4, 5}})
  T.eq(back.fc1.bias:tolist(), {0.5, -1})
  T.eq(back.layers[1]:tolist(), {1, 2})
  T.eq(back.layers[1].dtype, "int64")
  T.eq(back.layers[2].w:item(), true)
  T.eq(back["head.scale"]:item(), 3.0)
  T.eq(back["head.scale"].dtype, "float64")
  T.eq(back[7]:tolist(), {0})
  T.eq(back["7"], nil, "integer keys stay integers")
  local h = header_of(tmp("nested.safetensors"))
  for _, name in ipairs({"fc1.weight", "fc1.bias", "layers.1", "layers.2.w", "head.scale", "7"}) do
    T.truthy(h:find('"' .. name .. '":{"dtype"', 1, true), name .. " is a tensor name in the header")
  end
  T.truthy(h:find('"format":"pt"', 1, true), "format pt recorded")
  T.truthy(h:find('"tide.object":"table"', 1, true), "tide.object recorded")
  T.eq(#h % 8, 0, "header padded to 8 bytes")
end)

T.test("views are written as their values; an empty table gives an empty table", function()
  local m = torch.arange(12):reshape(3, 4)
  torch.save({t = m.T, col = m[{":", 2}]}, tmp("views.safetensors"))
  local b = torch.load(tmp("views.safetensors"))
  T.eq(b.t:tolist(), m.T:tolist())
  T.eq(b.col:tolist(), {1, 5, 9})
  torch.save({}, tmp("empty.safetensors"))
  T.eq(torch.load(tmp("empty.safetensors")), {})
end)

T.test("overwriting replaces the file; a failed save leaves the old one", function()
  local p = tmp("over.safetensors")
  torch.save({a = torch.ones(3)}, p)
  torch.save({b = torch.zeros(2, {dtype = "int32"})}, p)
  local back = torch.load(p)
  T.eq(back.a, nil)
  T.eq(back.b:tolist(), {0, 0})
  T.error_usable(function() torch.save({b = torch.ones(1), c = "text"}, p) end,
                 "torch.save: the value at c is a string, not a tensor")
  T.eq(torch.load(p).b:tolist(), {0, 0}, "the old checkpoint is intact")
  assert(os.execute("mkdir -p " .. T.quote(tmp("adir/inside"))))
  T.error_usable(function() torch.save({x = torch.ones(1)}, tmp("adir")) end, ": cannot replace the file: ")
  local p2 = io.popen("ls -a " .. T.quote(TMP))
  local listing = p2:read("a")
  p2:close()
  T.truthy(not listing:find("%.tmp%-"), "no temporary file left behind: " .. listing)
end)

-- ---------------------------------------------------------------------------------------
-- Files written elsewhere

T.test("a PyTorch state dict (nn.Linear(3, 2)) loads as a flat table and computes as in PyTorch", function()
  local sd = torch.load(DATA .. "linear.safetensors")
  T.eq(sd.weight.shape, {2, 3})
  T.eq(sd.weight.dtype, "float32")
  -- The values make_safetensors.py printed (float32 values, exact as doubles).
  T.eq(sd.weight:double():tolist(), {{-0.004322517663240433, 0.3097158372402191, -0.4751853346824646},
                                     {-0.4248946011066437, -0.2223689705133438, 0.15482072532176971}})
  T.eq(sd.bias:double():tolist(), {-0.011439144611358643, 0.45777493715286255})
  local x = torch.tensor{{1.0, 2.0, 3.0}}
  T.near(x:mm(sd.weight:t()) + sd.bias, {{-0.8218860030174255, 0.0526045560836792}}, 1e-6)
end)

T.test("every dtype written by NumPy by hand, with escapes, reversed data, 0-d and empty", function()
  local d = torch.load(DATA .. "dtypes.safetensors")
  local names = {bool = "BOOL", uint8 = "U8", int8 = "I8", int16 = "I16", int32 = "I32", int64 = "I64",
                 float16 = "F16", bfloat16 = "BF16", float32 = "F32", float64 = "F64"}
  for _, dt in ipairs(DTYPES) do
    local x = d["dé_" .. names[dt]]
    T.truthy(x, dt .. " present")
    T.eq(x.dtype, dt, dt)
    T.eq(x.shape, {2, 3}, dt)
    T.eq(flat(x), fixture_values(dt), dt)
  end
  T.eq(d.scalar.shape, {})
  T.eq(d.scalar:item(), 2.5)
  T.eq(d.empty.shape, {0, 3})
end)

T.test("files written here are read by an independent Python reader", function()
  if not T.have_python_module("numpy") then
    print("skipped: test_checkpoint Python reader (no NumPy at " .. T.PYTHON .. ")")
    return
  end
  local saved = {}
  for _, dt in ipairs(DTYPES) do saved["w_" .. dt] = torch.tensor(fixture_values(dt), {dtype = dt}):reshape(2, 3) end
  saved.nested = {scalar = torch.tensor(-1.25, {dtype = "float64"}), empty = torch.zeros(0, 2)}
  torch.save(saved, tmp("for_python.safetensors"))
  local out, ok = T.python([==[
import json, struct, sys
import numpy as np
data = open(sys.argv[1], "rb").read()
n, = struct.unpack("<Q", data[:8])
assert n % 8 == 0, "header not padded to 8"
header = json.loads(data[8:8 + n].decode("utf-8"))
meta = header.pop("__metadata__", {})
buf = data[8 + n:]
pos = 0
for begin, end in sorted(tuple(v["data_offsets"]) for v in header.values()):
    assert begin == pos, ("gap or overlap", begin, pos)
    pos = end
assert pos == len(buf), ("buffer not covered", pos, len(buf))
NP = {"BOOL": "|b1", "U8": "|u1", "I8": "|i1", "I16": "<i2", "I32": "<i4", "I64": "<i8",
      "F16": "<f2", "F32": "<f4", "F64": "<f8"}
for name in sorted(header):
    v = header[name]
    raw = buf[v["data_offsets"][0]:v["data_offsets"][1]]
    if v["dtype"] == "BF16":
        a = (np.frombuffer(raw, "<u2").astype("<u4") << 16).view("<f4")
    else:
        a = np.frombuffer(raw, NP[v["dtype"]])
    a = a.reshape(v["shape"])
    print(name, v["dtype"], json.dumps(list(a.shape)), json.dumps(a.astype(float).ravel().tolist()))
print("format", meta.get("format"))
]==], tmp("for_python.safetensors"))
  T.truthy(ok, "the Python reader failed:\n" .. out)
  local seen = {}
  for name, st_dtype, shape, vals in out:gmatch("(%S+) (%S+) (%b[]) (%b[])\n") do
    local nums = {}
    for v in vals:gmatch("[^%[%],%s]+") do nums[#nums + 1] = tonumber(v) end
    local dims = {}
    for v in shape:gmatch("%d+") do dims[#dims + 1] = tonumber(v) end
    seen[name] = {dtype = st_dtype, shape = dims, values = nums}
  end
  local names = {bool = "BOOL", uint8 = "U8", int8 = "I8", int16 = "I16", int32 = "I32", int64 = "I64",
                 float16 = "F16", bfloat16 = "BF16", float32 = "F32", float64 = "F64"}
  for _, dt in ipairs(DTYPES) do
    local s = seen["w_" .. dt]
    T.truthy(s, "Python saw w_" .. dt .. ":\n" .. out)
    T.eq(s.dtype, names[dt], dt)
    T.eq(s.shape, {2, 3}, dt)
    local want = fixture_values(dt)
    if dt == "bool" then for k, v in ipairs(want) do want[k] = v and 1 or 0 end end
    T.eq(s.values, want, dt)
  end
  T.eq(seen["nested.scalar"], {dtype = "F64", shape = {}, values = {-1.25}})
  T.eq(seen["nested.empty"], {dtype = "F32", shape = {0, 2}, values = {}})
  T.truthy(out:find("format pt\n", 1, true), "format pt in the metadata")
end)

-- ---------------------------------------------------------------------------------------
-- Errors

T.test("bad values and arguments to save are errors naming the key", function()
  local p = tmp("bad.safetensors")
  T.error_usable(function() torch.save({fc1 = {weight = torch.ones(1), bias = 0.5}}, p) end,
                 "torch.save: the value at fc1.bias is a number, not a tensor")
  T.error_usable(function() torch.save({layers = {torch.ones(1), "x"}}, p) end,
                 "torch.save: the value at layers[2] is a string, not a tensor")
  T.error_usable(function() torch.save({[1.5] = torch.ones(1)}, p) end,
                 "torch.save: the key 1.5 in the table to save is not a string or an integer")
  T.error_usable(function() torch.save({a = {[true] = torch.ones(1)}}, p) end,
                 "torch.save: the key true in the table at a is not a string or an integer")
  local loop = {}
  loop.inner = {back = loop}
  T.error_usable(function() torch.save(loop, p) end,
                 "torch.save: the table at inner.back is the table itself or one holding it (a cycle)")
  T.error_usable(function() torch.save({a = {["1"] = torch.ones(1), [1] = torch.ones(1)}}, p) end,
                 "would both be stored as 'a.1'")
  T.error_usable(function() torch.save({__metadata__ = torch.ones(1)}, p) end,
                 "torch.save: the name '__metadata__' is reserved by the safetensors format")
  local freed = torch.ones(2)
  freed:free()
  T.error_usable(function() torch.save({w = freed}, p) end, "torch.save: the tensor at w was freed")
  T.error_usable(function() torch.save("text", p) end,
                 "torch.save: expected a tensor or a table of tensors as argument 1, got string")
  T.error_usable(function() torch.save({w = torch.ones(1)}) end,
                 "torch.save: expected a file name (string) as argument 2, got nothing")
  T.error_usable(function() torch.save(torch.ones(1), tmp("no/such/dir.safetensors")) end,
                 "/no/such/dir.safetensors: cannot create a file there: No such file or directory")
  T.error_usable(function() torch.load(tmp("missing.safetensors")) end,
                 "torch.load: " .. tmp("missing.safetensors") .. ": cannot open file: No such file or directory")
  T.error_usable(function() torch.load(42) end, "torch.load: expected a file name (string) as argument 1, got number")
end)

T.test("damaged files are errors naming the file and the fault", function()
  local p = tmp("damaged.safetensors")
  torch.save({a = torch.arange(4), b = torch.ones(2, 2)}, tmp("good.safetensors"))
  local good = read_bytes(tmp("good.safetensors"))
  local cases = {
    {good:sub(1, 5), "the file is 5 bytes, too short for a safetensors file"},
    {good:sub(1, 40), "goes beyond the end of the file"},
    {good:sub(1, #good - 3), "tensor 'b' has data_offsets [32, 48] beyond the 45-byte data buffer"},
    {good .. "extra", "the data buffer is 53 bytes but the tensors cover 48"},
    {string.pack("<I8", 1 << 62) .. good:sub(9), "the header length 4611686018427387904 goes beyond the end of the file"},
    {st_file('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]'), "bad JSON at byte 59: expected ',' or '}' in an object"},
    {st_file('{"w": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}}', ("\0"):rep(8)),
     "tensor 'w' has the unknown dtype 'C64'"},
    {st_file('{"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}', ("\0"):rep(8)),
     "tensor 'w' has data_offsets [0, 8] holding 8 bytes, but its shape [3] of F32 needs 12"},
    {st_file('{"w": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}}', ("\0"):rep(8)),
     "tensor 'w' has data_offsets [8, 16] beyond the 8-byte data buffer"},
    {st_file('{"a": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}, "b": {"dtype": "I32", "shape": [1], "data_offsets": [4, 8]}}',
             ("\0"):rep(8)), "tensors 'a' and 'b' overlap (data_offsets [0, 8] and [4, 8])"},
    {st_file('{"a": {"dtype": "I8", "shape": [1], "data_offsets": [0, 1]}, "a": {"dtype": "I8", "shape": [1], "data_offsets": [1, 2]}}',
             "xy"), "duplicate key 'a'"},
    {st_file('{"__metadata__": {"tide.object": "table"}}'), "metadata tide.object is 'table' but tide.keys is missing"},
  }
  for _, c in ipairs(cases) do
    write_bytes(p, c[1])
    local err = T.error_usable(function() torch.load(p) end, c[2])
    T.truthy(err:find("torch.load: " .. p .. ": ", 1, true) == 1, "message starts with op and file: " .. err)
  end
end)

os.execute("rm -rf " .. T.quote(TMP))
T.done()
