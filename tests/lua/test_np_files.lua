-- np.genfromtxt, x:tofile / np.fromfile and np.load's mmap_mode: round trips with files
-- NumPy writes and reads (through /usr/bin/python3 at test time), exact error messages, and
-- the read-only check on a mapped file reaching every kind of write.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local np = np or require("numpy")

local TMP, tmp = T.tmpdir()
local read_bytes, write_bytes = T.read_bytes, T.write_bytes

-- Runs NumPy code (with `np` and the temporary directory `d` defined); returns its output.
local function numpy(code)
  local out, ok = T.python("import sys, numpy as np\nd = sys.argv[1]\n" .. code, TMP)
  assert(ok, out)
  return out
end

-- NumPy's result of a genfromtxt/fromfile call as a nested list (NaN as nil), parsed from repr.
local function numpy_list(expr)
  local out = numpy("import json\na = " .. expr .. "\nprint(json.dumps(np.where(np.isnan(a), None, a).tolist() if a.dtype.kind == 'f' else a.tolist()))")
  local s = out:gsub("%[", "{"):gsub("%]", "}"):gsub("null", "nil"):gsub("Infinity", "(1/0)")
  return assert(load("return " .. s))()
end

-- x:tolist() with NaN as nil, to compare with numpy_list.
local function list(x)
  local function strip(v)
    if type(v) == "table" then
      local r = {}
      for i = 1, #v do r[i] = strip(v[i]) end
      for i = 1, #v do if v[i] ~= v[i] then r[i] = nil end end
      return r
    end
    return v
  end
  return strip(x:tolist())
end

T.test("genfromtxt: missing values, filling, footer, gz, as NumPy", function()
  write_bytes(tmp("m.csv"), "a,b,c\n1,,3\n4,N/A,6\n# note\n\n7,8,9\n10,11,12\n")
  numpy("import gzip, shutil\nshutil.copyfileobj(open(d + '/m.csv', 'rb'), gzip.open(d + '/m.csv.gz', 'wb'))")
  local cases = {
    {{delimiter = ",", skip_header = 1, missing_values = "N/A"}, "delimiter=',', skip_header=1, missing_values='N/A'"},
    {{delimiter = ",", skip_header = 1, missing_values = {"N/A"}, filling_values = -5},
     "delimiter=',', skip_header=1, missing_values=['N/A'], filling_values=-5"},
    {{delimiter = ",", skip_header = 1, missing_values = "N/A", dtype = "int64"},
     "delimiter=',', skip_header=1, missing_values='N/A', dtype=np.int64"},
    {{delimiter = ",", skip_header = 1, skip_footer = 2, missing_values = "N/A"},
     "delimiter=',', skip_header=1, skip_footer=2, missing_values='N/A'"},
    {{delimiter = ",", skip_header = 1, max_rows = 2, usecols = {1, -1}},
     "delimiter=',', skip_header=1, max_rows=2, usecols=[0, -1]"},
    {{delimiter = ",", skip_header = 2, missing_values = "N/A", usecols = 2}, "delimiter=',', skip_header=2, missing_values='N/A', usecols=1"},
  }
  for _, c in ipairs(cases) do
    for _, name in ipairs({"m.csv", "m.csv.gz"}) do
      T.eq(list(np.genfromtxt(tmp(name), c[1])), numpy_list("np.genfromtxt(d + '/" .. name .. "', " .. c[2] .. ")"), c[2])
    end
  end
  local x = np.genfromtxt(tmp("m.csv"), {delimiter = ",", skip_header = 1, missing_values = "N/A"})
  T.eq(x.dtype, "float64")
  T.eq(x.shape, {4, 3})
end)

T.test("genfromtxt: names=true gives a table of columns in file order", function()
  write_bytes(tmp("h.txt"), "# x  y z\n1 2 3\n4 5 6\n")
  local r = np.genfromtxt(tmp("h.txt"), {names = true})
  T.eq({r[1], r[2], r[3], r[4]}, {"x", "y", "z", nil})
  T.eq(r.x:tolist(), {1.0, 4.0})
  T.eq(r.z:tolist(), {3.0, 6.0})
  T.eq(r.y.dtype, "float64")
  write_bytes(tmp("n.csv"), "skip me\na,b,c\n1,,3\n")
  r = np.genfromtxt(tmp("n.csv"), {names = true, delimiter = ",", skip_header = 1, usecols = {3, 2}, dtype = "int32"})
  T.eq({r[1], r[2], r[3]}, {"c", "b", nil})
  T.eq(r.c:tolist(), {3})
  T.eq(r.b:tolist(), {-1})
  T.eq(r.b.dtype, "int32")
  -- NumPy's structured result holds the same columns
  T.eq(numpy_list("np.genfromtxt(d + '/h.txt', names=True)['y']"), r and {2.0, 5.0})
  write_bytes(tmp("dup.txt"), "a a\n1 2\n")
  T.error(function() np.genfromtxt(tmp("dup.txt"), {names = true}) end,
    "np.genfromtxt: the column name 'a' appears twice")
  write_bytes(tmp("short.txt"), "a b\n1 2 3\n")
  T.error(function() np.genfromtxt(tmp("short.txt"), {names = true}) end,
    "np.genfromtxt: " .. tmp("short.txt") .. ": the header names 2 columns, but the rows have 3")
end)

T.test("genfromtxt and loadtxt: errors name the file, line, column and text", function()
  write_bytes(tmp("bad.csv"), "1,2\n3,abc\n")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {delimiter = ","}) end,
    "np.genfromtxt: " .. tmp("bad.csv") .. " line 2, column 2: could not convert 'abc' to float64")
  T.error(function() np.loadtxt(tmp("bad.csv"), {delimiter = ","}) end,
    "np.loadtxt: " .. tmp("bad.csv") .. " line 2, column 2: could not convert 'abc' to float64")
  write_bytes(tmp("ragged.csv"), "1,2\n\n3,4,5\n")
  T.error(function() np.genfromtxt(tmp("ragged.csv"), {delimiter = ","}) end,
    "np.genfromtxt: " .. tmp("ragged.csv") .. " line 3: found 3 columns, but the rows before have 2 (use usecols to read a subset)")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {skip_footer = 1, max_rows = 1}) end,
    "skip_footer and max_rows cannot be used together")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {skip_footer = -1}) end, "np.genfromtxt: skip_footer must be >= 0, got -1")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {skip_header = -1}) end, "np.genfromtxt: skip_header must be >= 0, got -1")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {dtype = "int8", filling_values = 300}) end,
    "filling_values 300 is not a value of int8")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {filling_values = "x"}) end,
    "np.genfromtxt: filling_values must be a number, got a string")
  T.error(function() np.genfromtxt(tmp("bad.csv"), {missing_values = false}) end,
    "np.genfromtxt: missing_values must be a string or a list of strings")
  write_bytes(tmp("empty.txt"), "# only a comment\n")
  local r = np.genfromtxt(tmp("empty.txt"), {names = true})
  T.eq({r[1], r[2], r[3], r.comment.shape}, {"only", "a", "comment", {0}})
  T.error(function() np.genfromtxt(tmp("empty.txt"), {names = true, skip_header = 1}) end,
    "np.genfromtxt: " .. tmp("empty.txt") .. ": names=true, but the file has no header line")
  T.eq(np.genfromtxt(tmp("bad.csv"), {delimiter = ",", comments = {"%"}, max_rows = 1}):tolist(), {1.0, 2.0})
end)

T.test("tofile / fromfile: raw bytes both ways with NumPy", function()
  local x = torch.tensor({{1.5, -2}, {3, 4.25}}, {dtype = "float32"}):t()  -- not contiguous: row-major order of values
  x:tofile(tmp("x.bin"))
  T.eq(numpy("print(np.fromfile(d + '/x.bin', dtype=np.float32).tolist())"), "[1.5, 3.0, -2.0, 4.25]\n")
  numpy("np.arange(-3, 7, dtype=np.int16).tofile(d + '/i.bin')")
  T.eq(np.fromfile(tmp("i.bin"), {dtype = "int16"}):tolist(), {-3, -2, -1, 0, 1, 2, 3, 4, 5, 6})
  T.eq(np.fromfile(tmp("i.bin"), {dtype = "int16", count = 3, offset = 4}):tolist(), {-1, 0, 1})
  T.eq(np.fromfile(tmp("i.bin"), {dtype = "int16", count = 0}).shape, {0})
  T.eq(np.fromfile(tmp("i.bin"), {dtype = "int32"}):tolist(), {-65539, 65535, 131073, 262147, 393221})
  write_bytes(tmp("b.bin"), "\0\1\7")
  T.eq(np.fromfile(tmp("b.bin"), {dtype = "bool"}):tolist(), {false, true, true})
  T.eq(np.fromfile(tmp("b.bin"), {dtype = "uint8", offset = 3}).shape, {0})
  T.error(function() np.fromfile(tmp("i.bin"), {dtype = "int16", count = 11}) end,
    "np.fromfile: " .. tmp("i.bin") .. ": count asks for 11 items of int16, but the file has 10 after offset 0")
  T.error(function() np.fromfile(tmp("i.bin"), {dtype = "float64"}) end,
    "np.fromfile: " .. tmp("i.bin") .. ": the 20 bytes after offset 0 are not a whole number of float64 items (8 bytes each)")
  T.error(function() np.fromfile(tmp("i.bin"), {offset = 21}) end,
    "np.fromfile: " .. tmp("i.bin") .. ": offset 21 is past the end of the file (20 bytes)")
  T.error(function() np.fromfile(tmp("i.bin"), {offset = -1}) end, "np.fromfile: offset must be >= 0, got -1")
  T.error(function() np.fromfile(tmp("i.bin"), {count = -2}) end, "np.fromfile: count must be -1 (all) or >= 0, got -2")
  T.error(function() np.fromfile(tmp("nope.bin")) end, "np.fromfile: " .. tmp("nope.bin") .. ": cannot open file: No such file or directory")
end)

T.test("tofile / fromfile: text as NumPy writes and reads it", function()
  local x = torch.tensor({0.1, 1e-5, 1e16, 123456789.0, 2.0, -0.0, 0 / 0, -1 / 0, 1.5e-7, 1e15}, {dtype = "float64"})
  x:tofile(tmp("f.txt"), {sep = ", "})
  numpy("np.array([0.1, 1e-5, 1e16, 123456789.0, 2.0, -0.0, np.nan, -np.inf, 1.5e-7, 1e15]).tofile(d + '/g.txt', sep=', ')")
  T.eq(read_bytes(tmp("f.txt")), read_bytes(tmp("g.txt")))
  T.eq(read_bytes(tmp("f.txt")), "0.1, 1e-05, 1e+16, 123456789.0, 2.0, -0.0, nan, -inf, 1.5e-07, 1000000000000000.0")
  torch.tensor({0.1, 2.5}, {dtype = "float32"}):tofile(tmp("f32.txt"), {sep = "\n"})
  T.eq(read_bytes(tmp("f32.txt")), "0.10000000149011612\n2.5")
  torch.tensor({{1, 2}, {3, 4}}):tofile(tmp("i.txt"), {sep = " ", format = "%5.2f"})
  T.eq(read_bytes(tmp("i.txt")), " 1.00  2.00  3.00  4.00")
  torch.tensor({true, false}):tofile(tmp("b.txt"), {sep = ","})
  T.eq(read_bytes(tmp("b.txt")), "True,False")
  torch.tensor({-7, 8}, {dtype = "int8"}):tofile(tmp("i8.txt"), {sep = ";"})
  T.eq(read_bytes(tmp("i8.txt")), "-7;8")
  T.eq(list(np.fromfile(tmp("g.txt"), {sep = ","})), numpy_list("np.fromfile(d + '/g.txt', sep=',')"))
  write_bytes(tmp("ws.txt"), " 1 2\n3\t 4 \n")
  T.eq(np.fromfile(tmp("ws.txt"), {sep = " ", dtype = "int64"}):tolist(), {1, 2, 3, 4})
  T.eq(np.fromfile(tmp("ws.txt"), {sep = " ", count = 3}):tolist(), {1.0, 2.0, 3.0})
  T.error(function() np.fromfile(tmp("ws.txt"), {sep = " ", count = 5}) end,
    "np.fromfile: " .. tmp("ws.txt") .. ": count asks for 5 items, but the file has only 4")
  T.error(function() np.fromfile(tmp("f.txt"), {sep = " "}) end,
    "np.fromfile: " .. tmp("f.txt") .. ": could not convert '0.1,' (item 1) to float64")
  T.error(function() np.fromfile(tmp("ws.txt"), {sep = ","}) end,
    "np.fromfile: " .. tmp("ws.txt") .. ": expected the separator ',' after item 1, found '2")
  T.error(function() np.fromfile(tmp("ws.txt"), {sep = " ", dtype = "uint8", count = 1, offset = 1}) end,
    "np.fromfile: offset is only for binary files (sep=\"\")")
  write_bytes(tmp("big.txt"), "1 300")
  T.error(function() np.fromfile(tmp("big.txt"), {sep = " ", dtype = "uint8"}) end,
    "could not convert '300' (item 2) to uint8")
  T.error(function() x:tofile(tmp("e.txt"), {format = "%d"}) end, "tofile: format applies to text output; give sep too")
  T.error(function() x:tofile(tmp("e.txt"), {sep = ",", format = "%d %d"}) end,
    "tofile: format '%d %d' must have one conversion, it has 2")
  T.error(function() torch.tensor({1.5, 1 / 0}):tofile(tmp("e.txt"), {sep = ",", format = "%d"}) end,
    "tofile: cannot format inf with '%d' (an integer conversion)")
end)

T.test("load mmap_mode: maps what NumPy wrote, without copying", function()
  numpy([[
np.save(d + '/a.npy', np.arange(12.).reshape(3, 4))
np.save(d + '/f.npy', np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save(d + '/i.npy', np.arange(5, dtype=np.int16))
np.save(d + '/b.npy', np.array([True, False]))
np.save(d + '/be.npy', np.arange(3, dtype='>f8'))
np.save(d + '/u.npy', np.arange(3, dtype=np.uint16))
np.save(d + '/e.npy', np.zeros((0, 3)))
np.save(d + '/s.npy', np.float64(2.5))
np.savez(d + '/z.npz', a=np.arange(3))
]])
  local a = np.load(tmp("a.npy"), {mmap_mode = "r"})
  T.eq(a:tolist(), np.load(tmp("a.npy")):tolist())
  T.eq(a.dtype, "float64")
  local f = np.load(tmp("f.npy"), {mmap_mode = "r"})
  T.eq(f:tolist(), {{0, 1, 2}, {3, 4, 5}})
  T.eq(f:stride(), {1, 2})  -- Fortran order is mapped as a transposed view
  T.eq(np.load(tmp("i.npy"), {mmap_mode = "c"}):tolist(), {0, 1, 2, 3, 4})
  T.eq(np.load(tmp("e.npy"), {mmap_mode = "r"}).shape, {0, 3})
  T.eq(np.load(tmp("s.npy"), {mmap_mode = "r"}):item(), 2.5)
  T.eq((a:sum(1) * 2):tolist(), {24.0, 30.0, 36.0, 42.0})  -- reads work as on any tensor
  local msg = "it is read-only (a file mapped by np.load with mmap_mode=\"r\"); write to a copy (x:clone()), or load with mmap_mode=\"c\" or \"r+\""
  T.error(function() a:add_(1) end, "add_: cannot write to the tensor: " .. msg)
  T.error(function() np.add(a, 1, {out = a}) end, "add: cannot write to the tensor: " .. msg)
  T.error(function() a:zero_() end, "fill_: cannot write to the tensor: " .. msg)
  T.error(function() a[{1, 1}] = 5 end, "cannot write to the tensor")
  T.error(function() a[2]:mul_(2) end, "mul_: cannot write to the tensor")
  T.error(function() a:copy_(a + 1) end, "copy_: cannot write to the tensor")
  T.error(function() a:uniform_() end, "uniform_: cannot write to the tensor")
  T.error(function() a:index_fill_(1, torch.tensor{1}, 0) end, "index_fill_: cannot write to the tensor")
  T.error(function() a:masked_fill_(a:gt(2), 0) end, "masked_fill_: cannot write to the tensor")
  T.error(function() torch.cumsum(a, 1, {out = a}) end, "cumsum: cannot write to the tensor")
  T.error(function() a:sum(1, {out = a[1]}) end, "sum: cannot write to the tensor")
  a.grad = torch.ones(3, 4, {dtype = "float64"})
  T.error(function() torch.optim.SGD({a}, {lr = 0.1}):step() end, "SGD: cannot write to the parameter: " .. msg)
  T.eq(a:tolist(), np.load(tmp("a.npy")):tolist())  -- nothing was written
  local b = a:clone()
  b:add_(1)
  T.eq(b[1]:tolist(), {1.0, 2.0, 3.0, 4.0})
end)

T.test("load mmap_mode: c keeps writes private, r+ writes the file", function()
  numpy("np.save(d + '/w.npy', np.arange(4.))")
  local c = np.load(tmp("w.npy"), {mmap_mode = "c"})
  c:add_(10)
  T.eq(c:tolist(), {10.0, 11.0, 12.0, 13.0})
  T.eq(np.load(tmp("w.npy")):tolist(), {0.0, 1.0, 2.0, 3.0})
  local w = np.load(tmp("w.npy"), {mmap_mode = "r+"})
  w[{{2, 3}}] = -1
  w:free()
  T.eq(numpy("print(np.load(d + '/w.npy').tolist())"), "[0.0, -1.0, -1.0, 3.0]\n")
end)

T.test("load mmap_mode: refusals", function()
  local where = "np.load: " .. tmp("")
  T.error(function() np.load(tmp("a.npy"), {mmap_mode = "w+"}) end,
    "np.load: mmap_mode \"w+\" creates a new file, which np.load cannot (it has no shape or dtype to give it); save an array with np.save first, then map it with \"r+\"")
  T.error(function() np.load(tmp("a.npy"), {mmap_mode = "rw"}) end, "np.load: mmap_mode must be \"r\", \"c\" or \"r+\", got 'rw'")
  T.error(function() np.load(tmp("z.npz"), {mmap_mode = "r"}) end,
    where .. "z.npz: mmap_mode maps .npy files only; load a .npz archive without it")
  T.error(function() np.load(tmp("b.npy"), {mmap_mode = "r"}) end,
    where .. "b.npy: cannot map a bool array (tide converts it on loading); load without mmap_mode")
  T.error(function() np.load(tmp("be.npy"), {mmap_mode = "r"}) end,
    where .. "be.npy: cannot map data of the other byte order (tide converts it on loading); load without mmap_mode")
  -- Unsigned data maps as itself (uint16 is a tide dtype).
  local u = np.load(tmp("u.npy"), {mmap_mode = "r"})
  T.eq(u.dtype, "uint16") T.eq(u:tolist(), {0, 1, 2})
  T.error(function() np.load(tmp("missing.npy"), {mmap_mode = "r"}) end,
    where .. "missing.npy: cannot open file: No such file or directory")
  write_bytes(tmp("empty.npy"), "")
  T.error(function() np.load(tmp("empty.npy"), {mmap_mode = "r"}) end, where .. "empty.npy: the file is empty")
  -- the header checks are load's own: a truncated file is refused before anything is mapped in
  local bytes = read_bytes(tmp("a.npy"))
  write_bytes(tmp("cut.npy"), bytes:sub(1, #bytes - 8))
  T.error(function() np.load(tmp("cut.npy"), {mmap_mode = "r"}) end,
    where .. "cut.npy: truncated .npy data: shape {3,4} of float64 needs 96 bytes, but only 88 bytes follow the header")
  write_bytes(tmp("hdr.npy"), bytes:sub(1, 8) .. "\255\255" .. bytes:sub(11))
  T.error(function() np.load(tmp("hdr.npy"), {mmap_mode = "r"}) end, where .. "hdr.npy: truncated .npy file")
  local dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }"
  write_bytes(tmp("odd.npy"), "\147NUMPY\1\0\119\0" .. dict .. string.rep(" ", 118 - #dict) .. "\n" .. string.rep("\0", 8))
  T.error(function() np.load(tmp("odd.npy"), {mmap_mode = "r"}) end,
    where .. "odd.npy: cannot map: the data starts at byte 129, not a multiple of the 8-byte item size; load without mmap_mode")
  T.eq(np.load(tmp("odd.npy")):tolist(), {0.0})
end)

T.test("np.savez of 70000 arrays writes zip64 end records that NumPy and tide read", function()
  local arrays = {}
  for i = 1, 70000 do arrays["a" .. i] = torch.tensor({i}, {dtype = "int32"}) end
  np.savez(tmp("many.npz"), arrays)
  local back = np.load(tmp("many.npz"))
  local n = 0
  for k, v in pairs(back) do
    n = n + 1
    if v:tolist()[1] ~= tonumber(k:sub(2)) then T.eq(v:tolist(), {tonumber(k:sub(2))}, k) end
  end
  T.eq(n, 70000)
  T.eq(numpy("z = np.load(d + '/many.npz'); print(len(z.files), z['a1'].tolist(), z['a70000'].tolist(), z['a70000'].dtype)"),
       "70000 [1] [70000] int32\n")
  local s = read_bytes(tmp("many.npz"))
  T.truthy(s:find("PK\6\6", #s - 200, true), "a zip64 end record")
end)

os.execute("rm -rf " .. T.quote(TMP))
T.done()
