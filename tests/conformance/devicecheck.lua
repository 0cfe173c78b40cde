-- The device column of the conformance table: every case of every row of ops.lua run on the
-- CPU and on CUDA (its tensor inputs moved there), the CUDA results compared with the CPU's.
--
--   tide devicecheck.lua [DEVICE]        (DEVICE defaults to "cuda")
--   tide devicecheck.lua reversed        (the layout column: see below)
--   tide devicecheck.lua cuda reversed   (both: reversed views of the inputs on the device)
--
-- With "reversed" every tensor input is instead replaced, on the CPU, by a view with the same
-- values whose strides are all negative (a flipped copy seen through x[{{-1, 1, -1}, ...}]),
-- so that every op meets reversed views (NumPy's a[::-1]) and must give the results it gives
-- for the contiguous inputs; in-place rows write through the view. A row with `layout` (a
-- reason: its result depends on the input's strides) is skipped there.
--
-- Random ops draw after the same manual_seed on both sides, so they must agree too (the
-- Philox stream is keyed by element index). Integer and bool results must be equal; floating
-- results equal within a tolerance per dtype (the GPU's math functions and summation order
-- differ from the CPU's by a few ulps). When the CPU raises an error the device must raise one
-- too. A row with `device_error` (an op that runs on the CPU only) must raise that error on
-- the device; a row with `no_device` (a reason) is skipped, and so is a case whose inputs
-- cannot be moved to the device (complex tensors stay on the CPU); the end counts both. Each
-- case with a tensor input is one test (creation from numbers has nothing to move). Without a
-- CUDA device it prints "skipped: no CUDA device" and
-- checks nothing. Environment: CONFORMANCE_ROWS (a Lua pattern: only matching rows).
local here = arg[0]:match("(.*/)") or "./"
local REVERSED = arg[1] == "reversed" or arg[2] == "reversed"
local DEVICE = arg[1] ~= "reversed" and (arg[1] or "cuda") or nil  -- nil: inputs stay on the CPU
local SIDE = DEVICE or "reversed"  -- how messages name the checked side
local FILTER = os.getenv("CONFORMANCE_ROWS")

if DEVICE and not torch.cuda.is_available() then
  print("skipped: no CUDA device (" .. torch.cuda.unavailable_reason() .. "); the device column was not checked")
  print("0 passed, 0 failed")
  return
end

local G = dofile(here .. "gen.lua")
G.scale = 1.0
local rows = assert(loadfile(here .. "ops.lua"))(G)

-- Relative and absolute tolerance per floating dtype.
local TOL = {float16 = {1e-2, 1e-3}, bfloat16 = {2e-2, 1e-2}, float32 = {1e-4, 1e-5}, float64 = {1e-9, 1e-12}}

local function is_list(v) return type(v) == "table" and not torch.is_tensor(v) end

-- v with every tensor (also inside lists) moved by `move`.
local function mapped(v, move)
  if torch.is_tensor(v) then return move(v) end
  if is_list(v) then
    local r = {}
    for k, x in pairs(v) do r[k] = mapped(x, move) end
    return r
  end
  return v
end

-- Why a (device) and b (cpu) differ, or nil when they agree.
local function difference(a, b, where)
  if torch.is_tensor(b) then
    if not torch.is_tensor(a) then return where .. ": a " .. type(a) .. " instead of a tensor" end
    if DEVICE and a.device.type == "cpu" then return where .. ": the result is on the cpu" end
    if a.dtype ~= b.dtype then return where .. ": dtype " .. a.dtype .. " instead of " .. b.dtype end
    local sa, sb = table.concat(a.shape, "x"), table.concat(b.shape, "x")
    if sa ~= sb then return where .. ": shape " .. sa .. " instead of " .. sb end
    local ah, bh = a:cpu(), b
    if b:is_complex() then  -- both parts, with their real dtype's tolerance (NaN equals NaN)
      return difference(torch.view_as_real(ah:contiguous()), torch.view_as_real(bh:contiguous()), where)
    end
    local tol = TOL[b.dtype]
    local same
    if tol then
      local af, bf = ah:double(), bh:double()
      local both_nan = af:isnan():logical_and(bf:isnan())
      local close = (af - bf):abs():le(bf:abs() * tol[1] + tol[2]):logical_or(af:eq(bf)):logical_or(both_nan)
      same = close:all():item()
    else
      same = ah:eq(bh):all():item()
    end
    if not same then
      return where .. ": values differ (device " .. tostring(ah) .. " vs cpu " .. tostring(bh) .. ")"
    end
    return nil
  end
  if is_list(b) then
    if not is_list(a) or #a ~= #b then return where .. ": a different list" end
    for i = 1, #b do
      local d = difference(a[i], b[i], where .. "[" .. i .. "]")
      if d then return d end
    end
    return nil
  end
  if type(b) == "number" and type(a) == "number" then
    if a == b or (a ~= a and b ~= b) or math.abs(a - b) <= 1e-6 * math.abs(b) + 1e-9 then return nil end
    return where .. ": " .. tostring(a) .. " instead of " .. tostring(b)
  end
  if a ~= b then return where .. ": " .. tostring(a) .. " instead of " .. tostring(b) end
  return nil
end

-- t's values through a view whose strides are all negative (t itself when it has no dims).
local function reversed_view(t)
  if t:dim() == 0 then return t:clone() end
  local all, key = {}, {}
  for d = 1, t:dim() do all[d], key[d] = d, {-1, 1, -1} end
  local v = torch.flip(t, all):clone()[key]  -- clone: flip of a NumPy array is itself a view
  if t.requires_grad then v = v:detach():requires_grad_() end
  return v
end
local function move(t)
  if DEVICE then t = t:to(DEVICE) end
  return REVERSED and reversed_view(t) or t
end

local passed, failed = 0, 0
local skipped = {}  -- reason -> rows
local unmovable = {}  -- why inputs could not be moved to the device -> cases
for ri, row in ipairs(rows) do
  local skip = REVERSED and row.layout or DEVICE and row.no_device
  if skip and (not FILTER or row.name:find(FILTER)) then
    skipped[skip] = (skipped[skip] or 0) + 1
  elseif not FILTER or row.name:find(FILTER) then
    G.seed(row.name)
    local ok_cases, cases = pcall(row.cases)
    if not ok_cases then cases = {} end
    for ci, case in ipairs(cases) do
      local p = case.p or {}
      local has_tensor = false
      mapped({case.a, case.b, case.c}, function(t) has_tensor = true; return t end)
      if not has_tensor then goto next_case end  -- creation from numbers: nothing on the device
      local on_cpu = mapped({case.a, case.b, case.c}, function(t) return t:clone() end)
      local moved, on_dev = pcall(mapped, {case.a, case.b, case.c}, move)
      if not moved then  -- inputs that cannot live on the device (complex tensors): nothing to compare
        local why = tostring(on_dev):gsub("^to: complex%d+ ", "to: complex ")
        unmovable[why] = (unmovable[why] or 0) + 1
        goto next_case
      end
      torch.manual_seed(1000 + ci)
      local want = table.pack(pcall(row.call, on_cpu[1], on_cpu[2], on_cpu[3], p))
      torch.manual_seed(1000 + ci)
      local got = table.pack(pcall(row.call, on_dev[1], on_dev[2], on_dev[3], p))
      local where = string.format("%s case %d", row.name, ci)
      local why
      if row.device_error and DEVICE then
        -- An op that refuses device tensors: the device must raise this error.
        if got[1] then why = where .. ": " .. DEVICE .. " did not raise (expected: " .. row.device_error .. ")"
        elseif not tostring(got[2]):find(row.device_error, 1, true) then
          why = where .. ": " .. DEVICE .. " raised " .. tostring(got[2]) .. " instead of " .. row.device_error
        end
      elseif not want[1] then
        if got[1] then why = where .. ": the cpu raised (" .. tostring(want[2]) .. ") but " .. SIDE .. " did not" end
      elseif not got[1] then
        why = where .. ": " .. SIDE .. " raised " .. tostring(got[2])
      else
        for i = 2, want.n do
          why = why or difference(got[i], want[i], where .. " output " .. (i - 1))
        end
        -- In-place ops: the first input must have changed the same way.
        if not why and torch.is_tensor(on_cpu[1]) then why = difference(on_dev[1], on_cpu[1], where .. " input a") end
      end
      if why then
        failed = failed + 1
        print("FAIL " .. why)
      else
        passed = passed + 1
      end
      ::next_case::
    end
    collectgarbage()
  end
end
for reason, n in pairs(skipped) do print(string.format("skipped: %d rows (%s)", n, reason)) end
for why, n in pairs(unmovable) do print(string.format("skipped: %d cases whose inputs cannot be moved (%s)", n, why)) end
print(string.format("%d passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
