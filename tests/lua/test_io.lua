-- np.save / np.load / np.savez / np.loadtxt / np.savetxt: round trips of every dtype, files
-- written by NumPy (tests/data, made by tests/data/make_fixtures.py), files written here read
-- back by NumPy (through /usr/bin/python3 when it has NumPy), damaged files, and loadtxt speed.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local np = np or require("numpy")

local DATA = dir .. "../data/"
local TMP, tmp = T.tmpdir()
local read_bytes, write_bytes, python = T.read_bytes, T.write_bytes, T.python

local have_numpy = T.have_python_module("numpy")
if not have_numpy then io.stderr:write("test_io: no NumPy at " .. T.PYTHON .. "; skipping the NumPy cross-checks\n") end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() end
  return f ~= nil
end

local DTYPES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"}

-- The values make_fixtures.py's base(dtype) gives: a 2x3 table.
local function base(dt)
  local out = {}
  for r = 0, 1 do
    local row = {}
    for c = 0, 2 do
      local v = r * 3 + c
      if dt == "bool" then row[c + 1] = v % 2 == 1
      elseif dt == "uint8" then row[c + 1] = v
      elseif dt:match("^float") then row[c + 1] = (v - 2) * 0.5
      else row[c + 1] = v - 2 end
    end
    out[r + 1] = row
  end
  return out
end

local function arange_list(n, scale)
  local t = {}
  for i = 0, n - 1 do t[#t + 1] = i * (scale or 1) end
  return t
end

local function reshape_list(flat, rows, cols)
  local out = {}
  for r = 1, rows do
    out[r] = {}
    for c = 1, cols do out[r][c] = flat[(r - 1) * cols + c] end
  end
  return out
end

-- ---------------------------------------------------------------------------------------
-- Round trips

T.test("every dtype round trips through .npy", function()
  for _, dt in ipairs(DTYPES) do
    local x = np.array(base(dt), {dtype = dt})
    local p = tmp("rt_" .. dt .. ".npy")
    np.save(p, x)
    local y = np.load(p)
    T.eq(y.dtype, dt, dt)
    T.eq(y.shape, {2, 3}, dt)
    T.eq(y:tolist(), base(dt), dt)
  end
end)

T.test("np.save adds .npy and np.savez adds .npz", function()
  np.save(tmp("noext"), torch.arange(3))
  T.truthy(exists(tmp("noext.npy")), "noext.npy written")
  T.eq(np.load(tmp("noext.npy")):tolist(), {0, 1, 2})
  np.savez(tmp("arch"), {a = torch.arange(2)})
  T.truthy(exists(tmp("arch.npz")), "arch.npz written")
end)

T.test("0-d, empty and non-contiguous tensors", function()
  np.save(tmp("s.npy"), torch.tensor(2.5, {dtype = "float64"}))
  local s = np.load(tmp("s.npy"))
  T.eq(s.shape, {})
  T.eq(s:item(), 2.5)
  np.save(tmp("e.npy"), torch.zeros(0, 4))
  local e = np.load(tmp("e.npy"))
  T.eq(e.shape, {0, 4})
  T.eq(e.dtype, "float32")
  local m = torch.arange(12):reshape(3, 4)
  np.save(tmp("t.npy"), m.T)
  local t = np.load(tmp("t.npy"))
  T.eq(t.shape, {4, 3})
  T.eq(t:tolist(), m.T:tolist())
  np.save(tmp("col.npy"), m[{":", 2}])
  T.eq(np.load(tmp("col.npy")):tolist(), {1, 5, 9})
end)

T.test("bfloat16 is refused with a hint", function()
  T.error(function() np.save(tmp("bf.npy"), torch.zeros(2, {dtype = "bfloat16"})) end,
    "np.save: bfloat16 has no NumPy dtype; convert with x:float()")
  T.error(function() np.savez(tmp("bf.npz"), {w = torch.zeros(2, {dtype = "bfloat16"})}) end,
    "bfloat16 has no NumPy dtype")
  T.truthy(not exists(tmp("bf.npz")), "no archive is left behind")
  np.save(tmp("bf32.npy"), torch.ones(2, {dtype = "bfloat16"}):float())
  T.eq(np.load(tmp("bf32.npy")):tolist(), {1.0, 1.0})
end)

T.test("savez: named, positional, compressed", function()
  local a, b = torch.arange(6):reshape(2, 3), torch.tensor({true, false})
  np.savez(tmp("m.npz"), a, b, {w = torch.ones(2, 2, {dtype = "float64"}), bias = torch.zeros(3)})
  local z = np.load(tmp("m.npz"))
  T.eq(z.arr_0:tolist(), a:tolist())
  T.eq(z.arr_1:tolist(), {true, false})
  T.eq(z.w:tolist(), {{1, 1}, {1, 1}})
  T.eq(z.bias.dtype, "float32")
  local n = 0
  for _ in pairs(z) do n = n + 1 end
  T.eq(n, 4)
  np.savez_compressed(tmp("c.npz"), {big = torch.zeros(10000), a = a})
  T.truthy(#read_bytes(tmp("c.npz")) < 2000, "compressed archive is small")
  local c = np.load(tmp("c.npz"))
  T.eq(c.big:numel(), 10000)
  T.eq(c.big:sum():item(), 0)
  T.eq(c.a:tolist(), a:tolist())
  T.error(function() np.savez(tmp("clash.npz"), a, {arr_0 = b}) end, "np.savez: the name 'arr_0'")
  T.error(function() np.savez(tmp("bad.npz"), {a = "text"}) end, "np.savez: array 'a' must be a tensor")
  np.savez(tmp("empty.npz"))
  T.eq(next(np.load(tmp("empty.npz"))), nil)
end)

-- ---------------------------------------------------------------------------------------
-- Files written by NumPy

T.test("NumPy .npy files of every dtype", function()
  for _, dt in ipairs(DTYPES) do
    local x = np.load(DATA .. "dt_" .. dt .. ".npy")
    T.eq(x.dtype, dt, dt)
    T.eq(x:tolist(), base(dt), dt)
  end
  local u16 = np.load(DATA .. "u16.npy")
  T.eq(u16.dtype, "uint16")
  T.eq(u16:tolist(), {0, 1, 65535})
  local u32 = np.load(DATA .. "u32.npy")
  T.eq(u32.dtype, "uint32")
  T.eq(u32:tolist(), {0, 4294967295})
end)

T.test("NumPy Fortran order, big-endian, 0-d, empty, v2/v3", function()
  local m = reshape_list(arange_list(12), 3, 4)
  local f = np.load(DATA .. "fortran.npy")
  T.eq(f.dtype, "float64")
  T.eq(f:tolist(), m)
  local f3 = np.load(DATA .. "fortran3d.npy")
  T.eq(f3.shape, {2, 3, 4})
  T.eq(f3:reshape(24):tolist(), arange_list(24))
  local bi = np.load(DATA .. "big_i4.npy")
  T.eq(bi.dtype, "int32")
  T.eq(bi:tolist(), m)
  T.eq(np.load(DATA .. "big_f8.npy"):tolist(), reshape_list(arange_list(12, 0.25), 3, 4))
  local bh = np.load(DATA .. "big_f2.npy")
  T.eq(bh.dtype, "float16")
  T.eq(bh:tolist(), reshape_list(arange_list(12, 0.5), 3, 4))
  local s = np.load(DATA .. "scalar.npy")
  T.eq(s.shape, {})
  T.eq(s:item(), 3.5)
  T.eq(np.load(DATA .. "scalar_i8.npy"):item(), -7)
  local e = np.load(DATA .. "empty.npy")
  T.eq(e.shape, {0, 3})
  T.eq(e.dtype, "float32")
  for _, v in ipairs({"v2", "v3"}) do
    local x = np.load(DATA .. v .. ".npy")
    T.eq(x.dtype, "int16", v)
    T.eq(x:tolist(), {0, 1, 2, 3, 4}, v)
  end
end)

T.test("NumPy .npz archives, stored and compressed", function()
  for _, name in ipairs({"stored", "compressed"}) do
    local z = np.load(DATA .. name .. ".npz")
    T.eq(z.a:tolist(), {{0, 1, 2}, {3, 4, 5}}, name)
    T.eq(z.a.dtype, "float64")
    T.eq(z.b:tolist(), {1, 2, 3}, name)
    T.eq(z.b.dtype, "int32")
  end
  T.eq(np.load(DATA .. "stored.npz").flag:item(), true)
  local c = np.load(DATA .. "compressed.npz")
  T.eq(c.z.shape, {1000})
  T.eq(c.z:abs():sum():item(), 0)
  local p = np.load(DATA .. "positional.npz")
  T.eq(p.arr_0:tolist(), {0, 1, 2, 3})
  T.eq(p.arr_1:tolist(), {{1, 0}, {0, 1}})
  T.eq(next(np.load(DATA .. "empty.npz")), nil)
end)

-- ---------------------------------------------------------------------------------------
-- Files written here, read by NumPy

T.test("NumPy reads what tide writes (byte-identical .npy)", function()
  if not have_numpy then return end
  for _, dt in ipairs(DTYPES) do np.save(tmp("out_" .. dt .. ".npy"), np.array(base(dt), {dtype = dt})) end
  local m = torch.arange(12, {dtype = "float64"}):reshape(3, 4)
  np.save(tmp("out_T.npy"), m.T)
  np.save(tmp("out_0d.npy"), torch.tensor(7, {dtype = "int16"}))
  np.save(tmp("out_empty.npy"), torch.zeros(0, 5, {dtype = "float64"}))
  np.savez(tmp("out.npz"), m, {b = torch.tensor({true, false, true}), c = torch.arange(5):float()})
  np.savez_compressed(tmp("outc.npz"), {a = m, z = torch.zeros(3000)})
  local out, ok = python(string.format([[
import io, sys
import numpy as np
D = %q
def base(dt):
    a = np.arange(6).reshape(2, 3)
    if dt == "bool": return a %% 2 == 1
    if dt != "uint8": a = a - 2
    if dt.startswith("float"): return (a * 0.5).astype(dt)
    return a.astype(dt)
bad = []
def check(name, got, want):
    if got.dtype != want.dtype or got.shape != want.shape or not np.array_equal(got, want):
        bad.append("%%s: got %%r, want %%r" %% (name, got, want))
for dt in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]:
    p = D + "/out_" + dt + ".npy"
    check(dt, np.load(p), base(dt))
    b = io.BytesIO(); np.save(b, base(dt))
    if open(p, "rb").read() != b.getvalue(): bad.append(dt + ": bytes differ from np.save")
m = np.arange(12, dtype=np.float64).reshape(3, 4)
check("T", np.load(D + "/out_T.npy"), m.T.copy())
check("0d", np.load(D + "/out_0d.npy"), np.array(7, dtype=np.int16))
check("empty", np.load(D + "/out_empty.npy"), np.zeros((0, 5)))
z = np.load(D + "/out.npz")
if sorted(z.files) != ["arr_0", "b", "c"]: bad.append("npz names %%r" %% z.files)
check("arr_0", z["arr_0"], m)
check("b", z["b"], np.array([True, False, True]))
check("c", z["c"], np.arange(5, dtype=np.float32))
zc = np.load(D + "/outc.npz")
check("zc.a", zc["a"], m)
check("zc.z", zc["z"], np.zeros(3000, dtype=np.float32))
import zipfile
for f in ["/out.npz", "/outc.npz"]:
    r = zipfile.ZipFile(D + f).testzip()
    if r is not None: bad.append("zip member %%s is corrupt" %% r)
print("\n".join(bad) if bad else "OK")
sys.exit(1 if bad else 0)
]], TMP))
  T.truthy(ok, "NumPy check failed:\n" .. out)
end)

-- ---------------------------------------------------------------------------------------
-- Damaged and hostile files

T.test("truncated .npy and .npz files are errors naming the file", function()
  for _, name in ipairs({"dt_float64.npy", "fortran.npy", "stored.npz", "compressed.npz"}) do
    local s = read_bytes(DATA .. name)
    local p = tmp("cut_" .. name)
    local k = 0
    while k < #s do
      write_bytes(p, s:sub(1, k))
      T.error(function() np.load(p) end, "np.load: " .. p .. ":", name .. " cut at " .. k)
      k = k + (k < 140 and 1 or 13)
    end
  end
end)

T.test("wrong magic, bad versions, lying headers", function()
  local p = tmp("bad.npy")
  write_bytes(p, "\x93NUMPX\1\0\0\0")
  T.error(function() np.load(p) end, "not a .npy file or .npz archive")
  write_bytes(p, "hello, world\n")
  T.error(function() np.load(p) end, "np.load: " .. p .. ": not a .npy file or .npz archive")
  write_bytes(p, "")
  T.error(function() np.load(p) end, "empty")
  local function npy(dict, data, version)
    version = version or 1
    local pre = 10 + (version == 1 and 0 or 2)
    local hlen = #dict + 1
    dict = dict .. string.rep(" ", 64 - (pre + hlen) % 64) .. "\n"
    local len = version == 1 and string.pack("<I2", #dict) or string.pack("<I4", #dict)
    return "\x93NUMPY" .. string.char(version, 0) .. len .. dict .. (data or "")
  end
  write_bytes(p, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000000000), }", "x"))
  T.error(function() np.load(p) end, "truncated .npy data")
  write_bytes(p, npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }"))
  T.error(function() np.load(p) end,
    "bad.npy: shape {4294967296,4294967296,4} of float64 is too large (its byte size or strides would pass 2^63-1)")
  write_bytes(p, npy("{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }", string.rep("\0", 32)))
  T.error(function() np.load(p) end, "unsupported dtype '<c32'")
  write_bytes(p, npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", string.rep("\0", 8)))
  T.error(function() np.load(p) end, "pickle")
  write_bytes(p, npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", string.rep("\0", 8), 4))
  T.error(function() np.load(p) end, "unsupported .npy format version 4.0")
  write_bytes(p, "\x93NUMPY\2\0" .. string.pack("<I4", 0x7fffffff) .. "{")
  T.error(function() np.load(p) end, "exceeds the limit")
  T.error(function() np.load(tmp("does_not_exist.npy")) end, "np.load: " .. tmp("does_not_exist.npy") .. ": cannot open file")
  T.error(function() np.load(TMP) end, "not a regular file")
end)

T.test("corrupted .npz data fails the CRC check", function()
  local s = read_bytes(DATA .. "stored.npz")
  local at = s:find("\x93NUMPY", 1, true) + 130  -- inside member a's data
  local p = tmp("crc.npz")
  write_bytes(p, s:sub(1, at - 1) .. string.char((s:byte(at) + 1) % 256) .. s:sub(at + 1))
  T.error(function() np.load(p) end, "CRC-32 mismatch")
  -- zip64 end record markers are refused clearly
  local eocd = #s - 21
  write_bytes(p, s:sub(1, eocd + 9) .. "\xff\xff" .. s:sub(eocd + 12))
  T.error(function() np.load(p) end, "zip64")
end)

-- ---------------------------------------------------------------------------------------
-- Text

T.test("loadtxt reads .gz with skiprows, comments, usecols, dtype, ndmin", function()
  local x = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1})
  T.eq(x.dtype, "float64")
  T.eq(x:tolist(), reshape_list(arange_list(12, 1.5), 4, 3))
  local y = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1, usecols = {1, -1}, dtype = "float32"})
  T.eq(y.dtype, "float32")
  T.eq(y:tolist(), {{0, 3}, {4.5, 7.5}, {9, 12}, {13.5, 16.5}})
  local col = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1, usecols = 2})
  T.eq(col.shape, {4})
  local col2 = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1, usecols = 2, ndmin = 2})
  T.eq(col2.shape, {4, 1})
  local row = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1, max_rows = 1})
  T.eq(row:tolist(), {0, 1.5, 3})
  local a, b, c = np.loadtxt(DATA .. "small.csv.gz", {delimiter = ",", skiprows = 1, unpack = true})
  T.eq(c:tolist(), {3, 7.5, 12, 16.5})
  T.eq(a.shape, {4})
  T.eq(b:tolist()[1], 1.5)
  T.error(function() np.loadtxt(DATA .. "small.csv.gz", {delimiter = ","}) end,
    "np.loadtxt: " .. DATA .. "small.csv.gz line 1, column 1: could not convert 'x' to float64")
  T.error(function() np.loadtxt(DATA .. "small.csv.gz", {usecols = 0}) end, "1-based")
end)

T.test("loadtxt errors name the file and the line", function()
  local p = tmp("bad.csv")
  write_bytes(p, "1,2\n3,4\n5,x\n")
  T.error(function() np.loadtxt(p, {delimiter = ","}) end,
    "np.loadtxt: " .. p .. " line 3, column 2: could not convert 'x' to float64")
  write_bytes(p, "1 2\n3 4 5\n")
  T.error(function() np.loadtxt(p) end, "np.loadtxt: " .. p .. " line 2: found 3 columns, but the rows before have 2")
  write_bytes(p, "1 2\n3 400\n")
  T.error(function() np.loadtxt(p, {dtype = "uint8"}) end, "line 2, column 2: 400 is out of range for uint8")
  T.eq(np.loadtxt(p, {dtype = "int64"}):tolist(), {{1, 2}, {3, 400}})
  write_bytes(p, "\31\139\8\0garbage")
  T.error(function() np.loadtxt(p) end, "np.loadtxt: " .. p)
  T.error(function() np.loadtxt(tmp("nope.txt")) end, "np.loadtxt: " .. tmp("nope.txt") .. ": cannot open file")
end)

T.test("savetxt round trips, also through .gz", function()
  local x = torch.arange(6, {dtype = "float64"}):reshape(2, 3) / 3
  np.savetxt(tmp("x.txt"), x)
  T.eq(np.loadtxt(tmp("x.txt")):tolist(), x:tolist())
  np.savetxt(tmp("x.csv.gz"), x, {delimiter = ",", fmt = "%.3f", header = "a,b,c"})
  T.near(np.loadtxt(tmp("x.csv.gz"), {delimiter = ","}), x, 1e-3)
  np.savetxt(tmp("i.txt"), torch.arange(4), {fmt = "%d"})
  T.eq(read_bytes(tmp("i.txt")), "0\n1\n2\n3\n")
  T.error(function() np.savetxt(tmp("y.txt"), x, {fmt = "%s"}) end, "np.savetxt: unsupported format '%s'")
  if have_numpy then
    local out, ok = python(string.format([[
import numpy as np
a = np.loadtxt(%q)
assert np.array_equal(a, np.arange(6).reshape(2, 3) / 3), a
print("OK")
]], tmp("x.txt")))
    T.truthy(ok, out)
  end
end)

T.test("loadtxt reads the digits dataset", function()
  local path = dir .. "../../data/digits.csv.gz"
  T.truthy(exists(path), "the project's copy of the digits data is missing: " .. path)
  local d = np.loadtxt(path, {delimiter = ","})
  T.eq(d.shape, {1797, 65})
  T.eq(d.dtype, "float64")
  T.eq(d[1]:tolist(), {0, 0, 5, 13, 9, 1, 0, 0, 0, 0, 13, 15, 10, 15, 5, 0, 0, 3, 15, 2, 0, 11, 8, 0, 0, 4, 12, 0,
    0, 8, 8, 0, 0, 5, 8, 0, 0, 9, 8, 0, 0, 4, 11, 0, 1, 12, 7, 0, 0, 2, 14, 5, 10, 12, 0, 0, 0, 0, 6, 13, 10, 0, 0,
    0, 0})
  T.eq(d[{":", 65}]:max():item(), 9)
end)

os.execute("rm -rf " .. T.quote(TMP))
T.done()
