// The Lua half of the REPL, compiled once when the REPL starts. It returns a table:
//   format(...)        -> the results of an expression as one printable string
//   complete(text)     -> candidates for the name that ends `text`, and that name's length
//   help(value)        -> prints the value's documentation (also the global `help`)
//   local_note(chunk)  -> a note when the chunk declares locals (they die with it), or nil
//   error_text(msg)    -> the error message with its traceback shortened
// Docs come from torch._doc (bindings/: the registered C functions' docs, and those of the
// Lua-written parts), tensor methods from the Tensor metatable.
#include "repl_lua.hpp"

namespace tide::repl {

const char* const kReplLua = R"lua(
local repl = {}

local torch = package.loaded.torch
local tensor_meta = debug.getregistry()["tide.Tensor"]
local MAX_ITEMS = 20      -- table entries shown before "..."
local MAX_DEPTH = 3       -- nested tables shown before "{...}"
local LINE_WIDTH = 78

local function is_tensor(v) return tensor_meta ~= nil and getmetatable(v) == tensor_meta end

local function is_module(v)
  return type(v) == "table" and torch ~= nil and torch.nn ~= nil and torch.nn.is_module(v)
end

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

-- The tensor methods table: the first upvalue of the metatable's __index.
local function tensor_methods()
  if tensor_meta == nil then return {} end
  local _, methods = debug.getupvalue(tensor_meta.__index, 1)
  return type(methods) == "table" and methods or {}
end

-- The properties x.name that are not methods (bindings/lua_tensor.cpp, index_mm).
local TENSOR_PROPERTIES = {"shape", "ndim", "dtype", "device", "itemsize", "T", "requires_grad",
                           "is_leaf", "grad", "grad_fn"}
repl.tensor_properties = TENSOR_PROPERTIES

---------------------------------------------------------------------------------------
-- Results

-- A tensor in one line: its own form when that is one line, else its shape and dtype.
local function short_tensor(t)
  local s = tostring(t)
  if not s:find("\n") then return s end
  return string.format("tensor<%s %s>", table.concat(t.shape, "x"), t.dtype)
end

local format_value

-- A plain table as {1, 2, k = v, ...}: the array part first, then the other keys sorted;
-- one line when it fits, else one entry per line.
local function format_table(t, depth, seen, indent)
  if seen[t] then return "<cycle>" end
  if depth >= MAX_DEPTH then return "{...}" end
  seen[t] = true
  local items, n = {}, rawlen(t)
  for i = 1, n do
    if #items == MAX_ITEMS then break end
    items[#items + 1] = format_value(rawget(t, i), depth + 1, seen, indent .. "  ")
  end
  local keys = {}
  for k in next, t do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b)
    if type(a) ~= type(b) then return type(a) == "string" end
    if type(a) == "string" or type(a) == "number" then return a < b end
    return tostring(a) < tostring(b)
  end)
  local total = n + #keys
  for _, k in ipairs(keys) do
    if #items == MAX_ITEMS then break end
    local key = is_identifier(k) and k or "[" .. format_value(k, depth + 1, seen, indent) .. "]"
    items[#items + 1] = key .. " = " .. format_value(rawget(t, k), depth + 1, seen, indent .. "  ")
  end
  if total > #items then items[#items + 1] = string.format("... (%d more)", total - #items) end
  seen[t] = nil
  local one_line = "{" .. table.concat(items, ", ") .. "}"
  if #one_line + #indent <= LINE_WIDTH and not one_line:find("\n") then return one_line end
  return "{\n" .. indent .. "  " .. table.concat(items, ",\n" .. indent .. "  ") .. "\n" .. indent .. "}"
end

-- One value: strings as they are at the top level and quoted inside tables; tensors and
-- modules in their own (pretty) form; plain tables by format_table.
function format_value(v, depth, seen, indent)
  if type(v) == "string" then return depth == 0 and v or string.format("%q", v) end
  if is_tensor(v) then return depth == 0 and tostring(v) or short_tensor(v) end
  if type(v) == "table" then
    local mt = getmetatable(v)
    if not (mt and mt.__tostring) then return format_table(v, depth, seen, indent) end
  end
  local ok, s = pcall(tostring, v)
  return ok and s or "<" .. type(v) .. ": " .. tostring(s) .. ">"
end

function repl.format(...)
  local out = {}
  for i = 1, select("#", ...) do out[i] = format_value((select(i, ...)), 0, {}, "") end
  return table.concat(out, "\t")
end

---------------------------------------------------------------------------------------
-- Completion

local KEYWORDS = {"and", "break", "do", "else", "elseif", "end", "false", "for", "function",
                  "goto", "if", "in", "local", "nil", "not", "or", "repeat", "return", "then",
                  "true", "until", "while"}

local function index(v, k)
  local ok, r = pcall(function() return v[k] end)
  if ok then return r end
end

-- Adds the identifier keys of table t (and, through __index tables, of its classes).
local function add_keys(out, t, methods_only)
  for _ = 1, 16 do
    if type(t) ~= "table" then return end
    for k, v in next, t do
      if is_identifier(k) and (not methods_only or type(v) == "function" or type(v) == "table") then
        out[k] = true
      end
    end
    local mt = getmetatable(t)
    t = mt and rawget(mt, "__index")
  end
end

-- The names offered after "v." (or "v:" when methods_only) for a value v.
local function fields(v, methods_only)
  local out = {}
  if is_tensor(v) then
    for k in pairs(tensor_methods()) do out[k] = true end
    if not methods_only then
      for _, k in ipairs(TENSOR_PROPERTIES) do out[k] = true end
    end
  elseif type(v) == "string" then
    if methods_only then add_keys(out, string) end
  elseif is_module(v) then
    -- An nn module keeps its submodules, parameters, buffers and attributes in registries.
    if not methods_only then
      for _, reg in ipairs{"_modules", "_parameters", "_buffers"} do
        local r = rawget(v, reg)
        if type(r) == "table" and type(r.map) == "table" then add_keys(out, r.map) end
      end
      add_keys(out, rawget(v, "_attrs") or {})
    end
    add_keys(out, rawget(v, "_class"), methods_only)
  elseif type(v) == "table" then
    add_keys(out, v, methods_only)
  end
  return out
end

-- Candidates for the name that ends `text`: a global or keyword, or a field or method of
-- a path of names (x:su, torch.ra, model.fc1.we). Names starting with "_" are offered
-- only when the typed part starts with "_". Returns the sorted list and the typed length.
function repl.complete(text)
  local start, path = text:match("()([%a_][%w_%.:]*)$")
  if not path then return {}, 0 end
  local before = text:sub(start - 1, start - 1)
  if before == "." or before == ":" or before:match("[%d]") then return {}, 0 end
  local names, seps = {}, {}
  for sep, name in ("." .. path):gmatch("([.:])([%w_]*)") do
    seps[#seps + 1], names[#names + 1] = sep, name
  end
  local typed = names[#names]
  local candidates = {}
  if #names == 1 then
    candidates = fields(_G, false)
    for _, k in ipairs(KEYWORDS) do candidates[k] = true end
  else
    for i = 1, #names - 1 do
      if names[i] == "" or (i > 1 and seps[i] == ":") then return {}, 0 end
    end
    local v = _G
    for i = 1, #names - 1 do
      v = index(v, names[i])
      if v == nil then return {}, 0 end
    end
    candidates = fields(v, seps[#names] == ":")
  end
  local list = {}
  local want_private = typed:sub(1, 1) == "_"
  for k in pairs(candidates) do
    if k:sub(1, #typed) == typed and (want_private or k:sub(1, 1) ~= "_") then list[#list + 1] = k end
  end
  table.sort(list)
  return list, #typed
end

---------------------------------------------------------------------------------------
-- help()

local function wrap(text, indent)
  local lines, line = {}, indent
  for word in text:gmatch("%S+") do
    if #line > #indent and #line + 1 + #word > LINE_WIDTH then
      lines[#lines + 1] = line
      line = indent
    end
    line = line .. (#line > #indent and " " or "") .. word
  end
  if #line > #indent then lines[#lines + 1] = line end
  return table.concat(lines, "\n")
end

-- "name(args) -> T: paragraph" printed as the signature and the indented paragraph.
local function print_doc(doc)
  local depth, split = 0, nil
  for i = 1, #doc - 1 do
    local c = doc:sub(i, i)
    if c == "(" or c == "[" or c == "{" then depth = depth + 1
    elseif c == ")" or c == "]" or c == "}" then depth = depth - 1
    elseif c == ":" and depth == 0 and doc:sub(i + 1, i + 1) == " " then split = i; break end
  end
  if not split then print(doc) return end
  print(doc:sub(1, split - 1))
  print(wrap(doc:sub(split + 2), "    "))
end

local function doc_of(v)
  local docs = torch and rawget(torch, "_doc")
  if docs == nil or (type(v) ~= "function" and type(v) ~= "table") then return nil end
  local d = docs[v]
  return type(d) == "string" and d ~= "" and d or nil
end

-- A module (torch, np, nn, optim, torch.linalg, ...): its documented names.
local function print_names(title, t)
  local names = {}
  for k, v in pairs(t) do
    if is_identifier(k) and k:sub(1, 1) ~= "_" and (type(v) == "function" or type(v) == "table") then
      names[#names + 1] = k
    end
  end
  table.sort(names)
  print(title)
  print(wrap(table.concat(names, " "), "    "))
end

local HELP_INTRO = [[
tide: Lua 5.4 with the torch and np modules (also nn, optim).
  help(f) or ?f       the signature and doc of a function, class or module (help(torch.mm))
  x:<Tab>, torch.<Tab> complete methods, fields and globals
  expressions         print their values; statements run silently
  a local             lasts only for its own line: use globals (x = 1) to keep values
  Ctrl-C              interrupts running code or drops the line; Ctrl-D leaves]]

-- The name a table is reached by from the globals, one or two levels down (nn, torch.linalg).
local function global_name(t)
  for g, gv in pairs(_G) do
    if gv == t and is_identifier(g) then return g end
  end
  for _, g in ipairs{"torch", "np", "nn", "optim"} do
    local root = rawget(_G, g)
    if type(root) == "table" then
      for k, v in pairs(root) do
        if v == t and is_identifier(k) then return g .. "." .. k end
      end
    end
  end
end

-- The string "torch.mm" or "mm": the value it names (torch.*, then tensor methods).
local function resolve(name)
  local v = _G
  for part in name:gmatch("[^.]+") do
    v = index(v, part)
    if v == nil then break end
  end
  if v ~= nil then return v end
  for _, root in ipairs{torch, torch and torch.nn, torch and torch.optim, package.loaded.numpy} do
    local found = root and index(root, name)
    if found ~= nil then return found end
  end
  return tensor_methods()[name]
end

function repl.help(...)
  if select("#", ...) == 0 then print(HELP_INTRO) return end
  local v = ...
  if type(v) == "string" then
    local found = resolve(v)
    if found == nil then print("help: nothing is named '" .. v .. "'") return end
    v = found
  end
  local doc = doc_of(v)
  if doc then print_doc(doc) return end
  if is_tensor(v) then
    print(string.format("Tensor of shape {%s}, %s on %s", table.concat(v.shape, ", "), v.dtype, v.device))
    local names = {}
    for k in pairs(tensor_methods()) do names[#names + 1] = k end
    table.sort(names)
    print("properties: " .. table.concat(TENSOR_PROPERTIES, " "))
    print("methods (help(x.name) for one):")
    print(wrap(table.concat(names, " "), "    "))
    return
  end
  -- An instance (an nn module, an optimizer): the doc of its class, or the nearest
  -- documented base class.
  local cls = is_module(v) and rawget(v, "_class") or type(v) == "table" and getmetatable(v)
  while type(cls) == "table" and not doc_of(cls) do
    local mt = getmetatable(cls)
    cls = mt and rawget(mt, "__index")
  end
  if type(cls) == "table" then
    print_doc(doc_of(cls))
    if is_module(v) then print(tostring(v)) end
    return
  end
  if type(v) == "table" and getmetatable(v) == nil then
    local label = global_name(v) or "t"
    print_names(label .. ": help(" .. label .. ".name) for one of", v)
    return
  end
  local where = ""
  if type(v) == "function" then
    local info = debug.getinfo(v, "S")
    where = info.what == "C" and " (a built-in of Lua: see the Lua 5.4 reference manual)"
      or " (defined at " .. info.short_src .. ":" .. info.linedefined .. ")"
  end
  print("help: no documentation for this " .. type(v) .. " value" .. where)
end

---------------------------------------------------------------------------------------
-- Notes and errors

-- A chunk that starts with `local` declared names that died when it ended.
function repl.local_note(chunk)
  local names = chunk:match("^%s*local%s+function%s+([%a_][%w_]*)")
    or chunk:match("^%s*local%s+([%a_][%w_%s,<>]-)%s*=") or chunk:match("^%s*local%s+([%a_][%w_%s,<>]-)%s*$")
  if not names then return nil end
  names = names:gsub("%s*<%a+>", ""):gsub("%s+", " ")
  local first = names:match("[%a_][%w_]*")
  return string.format("note: each input is its own chunk, so local %s ended with it; " ..
                       "drop 'local' to keep it (%s = ...)", names, first)
end

-- Keeps an error's traceback short: drops the frames of the C entry point and, when it is
-- long, the middle.
function repl.error_text(msg)
  local head, tb = msg:match("^(.-)\nstack traceback:\n(.*)$")
  if not head then return msg end
  local frames = {}
  for line in tb:gmatch("[^\n]+") do frames[#frames + 1] = line end
  while #frames > 0 and frames[#frames]:match("^%s*%[C%]: in %?$") do frames[#frames] = nil end
  if #frames > 10 then
    local kept = {}
    for i = 1, 5 do kept[#kept + 1] = frames[i] end
    kept[#kept + 1] = "\t..." .. (#frames - 8) .. " more"
    for i = #frames - 2, #frames do kept[#kept + 1] = frames[i] end
    frames = kept
  end
  if #frames == 0 then return head end
  return head .. "\nstack traceback:\n" .. table.concat(frames, "\n")
end

return repl
)lua";

}  // namespace tide::repl
