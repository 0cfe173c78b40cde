-- Failures of the API fuzzer whose fixes are being made elsewhere (docs/fuzzing.md). A call
-- that matches an entry is not made: api_fuzz.lua prints "@@SKIP <i> <target> | <owner>"
-- instead, and run_api_fuzz.py counts the skipped calls per entry. An entry says which
-- targets it covers (covers(path)), a text the call's source must contain for it to apply
-- (optional, to skip evaluating the arguments twice) and when a call of one is skipped
-- (when(path, args), args a table with n); it goes away when its fix is merged (api_fuzz.lua known=0 makes every
-- call, to check).
local function is_tensor(v) return torch.is_tensor(v) end

-- Whether x is a tensor view whose elements share memory (a stride of 0 over a size > 1)
-- and that has more than 2^32 of them.
local function huge_overlapping(x)
  if not is_tensor(x) then return false end
  local ok, big = pcall(function()
    if x:numel() <= 2^32 then return false end
    for d = 1, x:dim() do
      if x:stride(d) == 0 and x:size(d) > 1 then return true end
    end
    return false
  end)
  return ok and big
end

-- Whether a call writes into its first argument or an out= keyword (an in-place method or
-- nn.init function, whose name ends with "_") and that tensor is huge and overlapping.
local function writes_into_huge_overlapping(path, args)
  if path:match("_$") and huge_overlapping(args[1]) then return true end
  for k = 1, args.n do
    local v = args[k]
    if type(v) == "table" and not is_tensor(v) and huge_overlapping(rawget(v, "out")) then return true end
  end
  return false
end

-- Whether any argument, or a value in a table argument, is a tensor of 2^63 bytes or more.
local function any_huge(args)
  local function huge(x)
    if not is_tensor(x) then return false end
    local ok, big = pcall(function() return x:numel() * 1.0 * x:element_size() >= 2^63 end)
    return ok and big
  end
  for k = 1, args.n do
    local v = args[k]
    if huge(v) then return true end
    if type(v) == "table" and not is_tensor(v) then
      for _, w in pairs(v) do if huge(w) then return true end end
    end
  end
  return false
end

local writers = {["np.save"] = true, ["np.savez"] = true, ["np.savez_compressed"] = true, ["np.savetxt"] = true,
                 ["torch.save"] = true}

-- Whether the call asks for a list of more than 2^20 views: a tensor argument with a dim that
-- long, or a count (chunk) that large.
local function many_pieces(_, args)
  for k = 1, args.n do
    local v = args[k]
    if math.type(v) == "integer" and v > 2^20 then return true end
    if math.type(v) == "float" and v > 2^20 then return true end
    if is_tensor(v) then
      local ok, long = pcall(function()
        for d = 1, v:dim() do if v:size(d) > 2^20 then return true end end
        return false
      end)
      if ok and long then return true end
    end
  end
  return false
end

local view_lists = {["M.unbind"] = true, ["torch.unbind"] = true, ["M.split"] = true, ["torch.split"] = true,
                    ["M.chunk"] = true, ["torch.chunk"] = true}

local tensor_metamethods = {["MT.__index"] = true, ["MT.__newindex"] = true, ["MT.__len"] = true,
                            ["MT.__tostring"] = true}

return {
  {owner = "lead (non-tensor self in metamethods): a self that is not a tensor crashes",
   covers = function(path) return tensor_metamethods[path] end,
   when = function(_, args) return args.n >= 1 and not is_tensor(args[1]) end},
  {owner = "wt-overlap (writes into overlapping views): a write into a 2^62-element expanded view " ..
           "is not refused, and its loop does not see the interrupt",
   covers = function() return true end, text = "H.huge",
   when = writes_into_huge_overlapping},
  {owner = "wt-overflow (overflowing sizes): the writers stream a view of 2^62 elements without checking its " ..
           "byte size (2^65 overflows: np.savez_compressed passes its 4 GiB check) or the interrupt",
   covers = function(path) return writers[path] end, text = "H.huge",
   when = function(_, args) return any_huge(args) end},
  {owner = "reported to the lead (no owner yet): a list of views as long as the script asks (unbind or split " ..
           "of a 2^31-long dim, chunk(2^29) of an empty dim) is built in C++ before any of it reaches Lua, so the " ..
           "memory limit does not stop it (the process grows until killed), nor the interrupt",
   covers = function(path) return view_lists[path] end,
   when = many_pieces},
}
