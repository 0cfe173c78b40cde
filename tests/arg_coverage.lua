-- Checks that the test suite exercised every argument of every built-in function: the release
-- half of tests/run_all.sh runs with TIDE_ARG_COVERAGE=<file>, where each process appends the
-- keywords its calls gave and their bindings read ("op<TAB>keyword") and the positions of the
-- positional arguments they gave (not nil) and read ("op<TAB>#position"); this script compares
-- that file (arg[1]) with the keywords and positional parameters each binding declares
-- (torch._binding_keywords, torch._binding_positionals). A varargs parameter ("sizes...") is
-- covered by any argument at its position or later.
-- Prints the arguments no test gave, by op, then "N passed, M failed" (one per argument).
local torch = require "torch"
local np = require "numpy"

local used, last_position = {}, {}
local f = assert(io.open(arg[1], "r"), "arg_coverage: cannot read " .. tostring(arg[1]))
for line in f:lines() do
  local op, kw = line:match("^(.-)\t(.*)$")
  if op then used[op .. "\t" .. kw] = true end
  local pos = tonumber(kw and kw:match("^#(%d+)$"))
  if pos then last_position[op] = math.max(last_position[op] or 0, pos) end
end
f:close()

-- Every binding once, by its registered name (torch and np spellings share one).
local bindings, seen = {}, {}
local function walk(t, depth)
  for _, v in pairs(t) do
    if type(v) == "function" then
      local _, name = torch._binding_doc(v)
      local names, open = torch._binding_keywords(v)
      if name and not seen[v] then
        seen[v] = true
        local positionals, varargs = torch._binding_positionals(v)
        bindings[#bindings + 1] = {name = name, keywords = open and {} or names,
                                   positionals = positionals, varargs = varargs}
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
local function check(op, key, covered, what)
  if done[op .. "\t" .. key] then return end
  done[op .. "\t" .. key] = true
  if covered then
    passed = passed + 1
  else
    missing[op] = missing[op] or {}
    table.insert(missing[op], what)
  end
end
for _, b in ipairs(bindings) do
  for k, p in ipairs(b.positionals) do
    local covered = used[b.name .. "\t#" .. k]
    if b.varargs and k == #b.positionals then covered = (last_position[b.name] or 0) >= k end
    check(b.name, "#" .. k, covered, "#" .. k .. " " .. p)
  end
  for _, kw in ipairs(b.keywords) do check(b.name, kw, used[b.name .. "\t" .. kw], "{" .. kw .. "=}") end
end
local ops, nmissing = {}, 0
for op, list in pairs(missing) do
  ops[#ops + 1] = op
  nmissing = nmissing + #list
end
table.sort(ops)
for _, op in ipairs(ops) do print("no test gives " .. op .. ": " .. table.concat(missing[op], ", ")) end
print(string.format("%d passed, %d failed", passed, nmissing))
os.exit(nmissing == 0 and 0 or 1)
