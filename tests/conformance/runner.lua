-- The tide half of the conformance harness: builds every case of every row of ops.lua,
-- calls the op, and writes inputs and outputs for check.py, which computes the NumPy
-- reference and compares.
--
--   tide runner.lua OUTDIR [FIRST_ROW]
--
-- Per row it writes OUTDIR/rNNN.npz (inputs and outputs of all its cases, bfloat16 stored
-- as float32) and appends to OUTDIR/manifest.jsonl one "row" line (name, reference,
-- expected-dtype rule, tolerances) and one "case" line per case (dtypes, shapes, layouts,
-- parameters, the op's error if it raised). OUTDIR/progress gets "begin N" / "end N" lines so
-- that run.sh can restart after a crash at the row following the one that crashed.
-- Environment: CONFORMANCE_ROWS (a Lua pattern: only rows whose name matches),
-- TIDE_SANITIZED=1 (fewer cases per row, for the slower sanitizer build).
local here = arg[0]:match("(.*/)") or "./"
local OUT = assert(arg[1], "usage: tide runner.lua OUTDIR [FIRST_ROW]")
local FIRST = tonumber(arg[2] or "1")
local FILTER = os.getenv("CONFORMANCE_ROWS")

local G = dofile(here .. "gen.lua")
G.scale = os.getenv("TIDE_SANITIZED") == "1" and 0.5 or 1.0
local rows = assert(loadfile(here .. "ops.lua"))(G)

---------------------------------------------------------------------------------------------
-- A small JSON encoder (numbers keep their Lua integer/float kind; NaN and infinities use
-- the tokens Python's json module reads).
local json
local function json_number(v)
  if v ~= v then return "NaN" end
  if v == math.huge then return "Infinity" end
  if v == -math.huge then return "-Infinity" end
  if math.type(v) == "integer" then return string.format("%d", v) end
  local s = string.format("%.17g", v)
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end
local function json_string(s)
  return '"' .. s:gsub('[%c"\\\128-\255]', function(c)
    return string.format("\\u%04x", c:byte())
  end) .. '"'
end
function json(v)
  local t = type(v)
  if t == "nil" then return "null" end
  if t == "boolean" then return tostring(v) end
  if t == "number" then return json_number(v) end
  if t == "string" then return json_string(v) end
  if t == "table" and not torch.is_tensor(v) then
    local n = #v
    if n > 0 or next(v) == nil then
      local parts = {}
      for i = 1, n do parts[i] = json(v[i]) end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    local parts = {}
    for i, k in ipairs(keys) do parts[i] = json_string(k) .. ":" .. json(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  return json_string(tostring(v))
end

---------------------------------------------------------------------------------------------
local manifest = assert(io.open(OUT .. "/manifest.jsonl", "a"))
local progress = assert(io.open(OUT .. "/progress", "a"))

-- Describes one input or output value and stores its tensors in `arrays` under `key`.
local function describe(v, key, arrays, layout)
  if torch.is_tensor(v) then
    local d = {kind = "tensor", key = key, dtype = v.dtype, shape = v.shape, layout = layout}
    local ok, err = pcall(function()
      -- A contiguous copy: the op under test may change its input in place afterwards.
      arrays[key] = v.dtype == "bfloat16" and v:float() or v:clone()
    end)
    if not ok then d.save_error = tostring(err) end
    return d
  end
  local t = type(v)
  if t == "number" then return {kind = "scalar", value = v, int = math.type(v) == "integer"} end
  if t == "boolean" then return {kind = "scalar", value = v} end
  if t == "nil" then return {kind = "nil"} end
  if t == "table" then
    local all_tensors = #v > 0
    for i = 1, #v do if not torch.is_tensor(v[i]) then all_tensors = false end end
    if all_tensors then
      local items = {}
      for i = 1, #v do
        items[i] = describe(v[i], key .. "_" .. i, arrays, type(layout) == "table" and layout[i] or layout)
      end
      return {kind = "list", items = items}
    end
    return {kind = "lua", value = v}
  end
  return {kind = "other", value = tostring(v)}
end

local function short_error(e)
  e = tostring(e)
  return (e:gsub("\nstack traceback:.*", ""))
end

local function run_row(ri, row)
  progress:write("begin ", ri, "\n")
  progress:flush()
  manifest:write(json({type = "row", index = ri, name = row.name, ref = row.ref, out = row.out,
                       cast = row.cast, tol = row.tol, expect_error = row.expect_error,
                       compare = row.compare, npstyle = row.npstyle}), "\n")
  local ok_cases, cases = pcall(row.cases)
  if not ok_cases then
    manifest:write(json({type = "case", row = ri, id = 1, gen_error = short_error(cases)}), "\n")
    cases = {}
  end
  local arrays = {}
  local lines = {}
  for ci, case in ipairs(cases) do
    local prefix = string.format("c%d_", ci)
    local rec = {type = "case", row = ri, id = ci, p = case.p, note = case.note, inputs = {}}
    local layouts = case.layouts or {}
    for _, nm in ipairs({"a", "b", "c"}) do
      if case[nm] ~= nil then
        rec.inputs[#rec.inputs + 1] = {name = nm, desc = describe(case[nm], prefix .. nm, arrays, layouts[nm])}
      end
    end
    local res = table.pack(xpcall(row.call, debug.traceback, case.a, case.b, case.c, case.p or {}))
    if not res[1] then
      rec.error = short_error(res[2])
    else
      local outs = {}
      local vals = {}
      for i = 2, res.n do vals[#vals + 1] = res[i] end
      -- A single table of tensors (split, chunk) is a list of outputs.
      if #vals == 1 and type(vals[1]) == "table" and not torch.is_tensor(vals[1]) then vals = vals[1] end
      for i, v in ipairs(vals) do outs[i] = describe(v, prefix .. "o" .. i, arrays) end
      rec.outputs = outs
    end
    lines[#lines + 1] = json(rec)
  end
  local path = string.format("%s/r%03d.npz", OUT, ri)
  local ok, err = true, nil
  if next(arrays) ~= nil then ok, err = pcall(np.savez, path, arrays) end
  for _, l in ipairs(lines) do manifest:write(l, "\n") end
  if not ok then
    manifest:write(json({type = "row_error", row = ri, error = "np.savez: " .. short_error(err)}), "\n")
  end
  manifest:flush()
  arrays = nil
  collectgarbage()
  progress:write("end ", ri, "\n")
  progress:flush()
end

if FIRST == 1 then
  local f = assert(io.open(OUT .. "/rows.txt", "w"))
  for _, row in ipairs(rows) do
    if not FILTER or row.name:find(FILTER) then f:write(row.name, "\n") end
  end
  f:close()
end

for ri, row in ipairs(rows) do
  if ri >= FIRST and (not FILTER or row.name:find(FILTER)) then
    G.seed(row.name)
    run_row(ri, row)
  end
end
progress:write("done\n")
progress:close()
manifest:close()
