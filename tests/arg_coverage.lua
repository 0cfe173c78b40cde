-- Checks that the test suite exercised every keyword of every built-in function: the release
-- half of tests/run_all.sh runs with TIDE_ARG_COVERAGE=<file>, where each process appends the
-- keywords its calls gave and their bindings read ("op<TAB>keyword"); this script compares that
-- file (arg[1]) with the keywords each binding declares (torch._binding_keywords).
-- Prints the keywords no test gave, then "N passed, M failed" (one per keyword).
local torch = require "torch"
local np = require "numpy"

local used = {}
local f = assert(io.open(arg[1], "r"), "arg_coverage: cannot read " .. tostring(arg[1]))
for line in f:lines() do
  local op, kw = line:match("^(.-)\t(.*)$")
  if op then used[op .. "\t" .. kw] = true end
end
f:close()

-- Every binding once, by its registered name (torch and np spellings share one).
local bindings, seen = {}, {}
local function walk(t, depth)
  for _, v in pairs(t) do
    if type(v) == "function" then
      local _, name = torch._binding_doc(v)
      local names, open = torch._binding_keywords(v)
      if name and not open and not seen[v] then
        seen[v] = true
        bindings[#bindings + 1] = {name = name, keywords = names}
      end
    elseif type(v) == "table" and depth < 2 then
      walk(v, depth + 1)
    end
  end
end
walk(torch, 0)
walk(np, 0)
local _, methods = debug.getupvalue(getmetatable(torch.ones(1)).__index, 1)
walk(methods, 2)

local passed, missing, done = 0, {}, {}
for _, b in ipairs(bindings) do
  for _, kw in ipairs(b.keywords) do
    local key = b.name .. "\t" .. kw
    if not done[key] then
      done[key] = true
      if used[key] then passed = passed + 1 else missing[#missing + 1] = b.name .. " {" .. kw .. "=}" end
    end
  end
end
table.sort(missing)
for _, m in ipairs(missing) do print("no test gives " .. m) end
print(string.format("%d passed, %d failed", passed, #missing))
os.exit(#missing == 0 and 0 or 1)
