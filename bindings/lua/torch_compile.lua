-- torch.compile: capture a function's engine work once, replay it on later calls.
--
--   local step = torch.compile(function(x, y) ... end[, {fullgraph=, disable=}])
--   local model_c = torch.compile(model)        -- a module whose calls are compiled
--   torch.compiler.reset()                      -- forget every recording
--   torch._dynamo.explain(fn)(args...)          -- what a call captures, and why not
--   torch._dynamo.config.cache_size_limit = 8   -- variants per function
--
-- The first call with a new signature runs the function eagerly while the engine records
-- every call it makes into the device tables, CPU or CUDA (tensor/capture/): forward ops,
-- backward(), optimizer steps alike. Later calls whose guards hold replay that recording with
-- no Lua, no graph building and no allocation. The guards (bindings/bind_compile.cpp): the
-- arguments' kinds, numbers, strings and tensor layouts; the engine modes; and every value
-- the function reaches through its upvalues (tables, metatables, functions' upvalues, tensor
-- layouts and requires_grad), compared with the state at recording.
--
-- A call that cannot be replayed exactly breaks the capture, and the function runs eagerly
-- from then on, with one message naming the reason and the script line. Breaks: a value read
-- into Lua (item, tolist, printing, comparisons turned into Lua booleans), an op without a
-- device-table path, C functions with effects (print, io, os, math.random), a changed engine
-- mode, reseeding, autocast, a table argument, a tensor argument that requires
-- grad or is modified in place, two results that both leave their backward to the caller,
-- Lua code the engine would call (hooks, a custom Function's backward), and Lua state the
-- call changes every time (a step counter). A call that changes reached Lua
-- state (an optimizer's first step creating its buffers) is recorded again on the next call,
-- up to three times in a row. With {fullgraph = true} a break is an error instead.
local torch = ...

local C = {
  snapshot = torch._compile_snapshot, begin = torch._compile_begin, finish = torch._compile_finish,
  guard_args = torch._compile_guard_args, replay = torch._compile_replay, explain = torch._compile_explain,
  recording = torch._compile_recording, reaches = torch._compile_reaches, set_libset = torch._compile_set_libset,
  spent = torch._compile_spent, spent_copy = torch._compile_spent_copy,
  record_backward = torch._compile_record_backward, live_copy = torch._compile_live_copy,
  bind_output = torch._compile_bind_output, output = torch._compile_output, alias = torch._compile_alias,
  arg_view = torch._compile_arg_view,
}
for name in pairs(C) do torch["_compile_" .. name] = nil end  -- internal: reached through C only
local is_tensor = torch.is_tensor

local dynamo = torch._dynamo or {}
torch._dynamo = dynamo
dynamo.config = dynamo.config or {}
dynamo.config.cache_size_limit = 8
local compiler = torch.compiler or {}
torch.compiler = compiler

-- Recordings in a row that changed reached Lua state before the function is left eager.
local kStateRetries = 3
-- With the variant cache full, the replays per recording below which the function is left
-- eager rather than dropping its least recently used variant.
local kReplaysPerRecording = 4

local function fail(fmt, ...) error("torch.compile: " .. string.format(fmt, ...), 0) end

---------------------------------------------------------------------------------------------
-- The library: tables and functions compared by identity, and the C functions a recorded
-- function may call (besides the bindings, which the engine watches itself).

local allowed_c  -- set of C functions
local libset     -- set of library tables and functions

-- C functions of the standard library with effects a replay would not repeat, or results
-- that vary from call to call.
local kEffectful = {
  print = true, dofile = true, loadfile = true, warn = true,
  ["math.random"] = true, ["math.randomseed"] = true,
}
local kEffectfulLibs = {io = true, os = true, debug = true, coroutine = true}
local kLibraryModules = {"torch", "numpy", "string", "table", "math", "utf8"}

local function is_c_function(f)
  local info = debug and debug.getinfo and debug.getinfo(f, "S")
  return info ~= nil and info.what == "C"
end

local function build_library()
  if libset then return end
  local lib, allowed = {}, {}
  -- Not descended into: the module list itself (which holds io and os) and the effectful libraries.
  local skip = {[package.loaded] = true, [_G] = true}
  for k in pairs(kEffectfulLibs) do skip[package.loaded[k] or false] = true end
  local function collect(v, name)
    if lib[v] or skip[v] then return end
    local kind = type(v)
    if kind == "table" then
      lib[v] = true
      for k, x in pairs(v) do
        if type(k) == "string" then collect(x, name and (name .. "." .. k) or k) else collect(x) end
      end
      local mt = getmetatable(v)
      if type(mt) == "table" then collect(mt) end
    elseif kind == "function" then
      lib[v] = true
      if is_c_function(v) and not kEffectful[name or ""] then allowed[v] = true end
    end
  end
  -- tide's own modules and the standard libraries without effects; a script's own modules
  -- (anything else in package.loaded) are user state, walked and guarded like any table.
  for _, modname in ipairs(kLibraryModules) do
    local m = package.loaded[modname]
    if type(m) == "table" then collect(m, modname ~= "torch" and modname ~= "numpy" and modname or nil) end
  end
  -- The metatables of the engine's value types (a tensor's methods, a device's __tostring and
  -- __eq, a dtype's), which no module table holds.
  collect(getmetatable(torch.empty(0)))
  collect(getmetatable(torch.device("cpu")))
  collect(getmetatable(torch.float32))
  -- The base library lives in _G, which is user state and walked; its C functions are allowed
  -- (but for the effectful ones) without making _G a library table.
  for k, v in pairs(_G) do
    if type(v) == "function" and is_c_function(v) and not kEffectful[k] then allowed[v] = true end
  end
  allowed[select(1, ipairs({}))] = true  -- the iterator of ipairs (pairs' is next)
  for k in pairs(kEffectfulLibs) do lib[package.loaded[k] or false] = true end
  lib[false] = nil
  lib[package.loaded] = true
  libset, allowed_c = lib, allowed
  C.set_libset(libset, allowed_c)
end

---------------------------------------------------------------------------------------------
-- Compiled functions

local compiled = setmetatable({}, {__mode = "k"})  -- compiled function -> its state

local function where(fn)
  local info = debug and debug.getinfo and debug.getinfo(fn, "S")
  return info and (info.short_src .. ":" .. tostring(info.linedefined)) or "?"
end

local function give_up(state, reason)
  state.eager = true
  state.reason = reason
  if state.fullgraph then fail("fullgraph=true, but the function at %s cannot be captured: %s", where(state.fn), reason) end
  if io and io.stderr and not state.quiet then
    io.stderr:write("torch.compile: the function at ", where(state.fn), " runs eagerly: ", reason, "\n")
  end
end

-- Why the arguments cannot be guarded (nil when they can).
local function unguardable(n, ...)
  for i = 1, n do
    local v = select(i, ...)
    local kind = type(v)
    if is_tensor(v) then
      if v.requires_grad then return "argument " .. i .. " is a tensor that requires grad" end
    elseif kind ~= "nil" and kind ~= "number" and kind ~= "boolean" and kind ~= "string" then
      return "argument " .. i .. " is a " .. kind .. " (tensors, numbers, booleans and strings are guarded)"
    end
  end
  return nil
end

-- What a replay returns for each result of the recording call: an argument, a reached tensor
-- itself, a copy of a tensor the call made (sharing its history when a backward inside the
-- call used it up; carrying the recorded backward when that is left to the caller), or a
-- constant. nil and a reason when a result cannot be reproduced.
local function describe_results(handle, args, clones_at, clones, res)
  local outs = {n = res.n - 1}
  local live  -- the result whose graph the caller's backward will use
  local first = {}  -- each tensor result's first position
  for i = 2, res.n do
    local r = res[i]
    local kind = type(r)
    if is_tensor(r) and first[r] then
      outs[i - 1] = {dup = first[r]}  -- the same tensor twice: the same tensor twice, as eagerly
    elseif is_tensor(r) then
      first[r] = i - 1
      local arg = clones_at[r]
      local reached = not arg and C.reaches(handle, r)
      local alias, k
      if not arg and not reached then alias, k = C.alias(handle, r, table.unpack(res, 2, res.n)) end
      if arg then
        outs[i - 1] = {arg = arg}
      elseif reached then
        outs[i - 1] = {same = r}
      elseif alias then
        local of = alias == "reached" and "a tensor the function reaches"
          or alias == "argument" and "argument " .. clones_at[clones[k]] or "result " .. k
        return nil, "result " .. (i - 1) .. " shares memory with " .. of .. " (a view of it), which a replay's copy "
          .. "would not"
      elseif r.requires_grad and C.spent(r) then
        outs[i - 1] = {spent = r}  -- the loss after loss:backward(): copies share its used-up history
      elseif r.requires_grad then
        -- (torch.compile(model) in a training loop): its backward is recorded now, from a
        -- placeholder gradient, and replayed by the grad_fn of each replay's result.
        if live then
          return nil, "results " .. live .. " and " .. (i - 1) .. " both require grad (one result may leave its "
            .. "backward to the caller)"
        end
        local ok, why = C.record_backward(handle, r)
        if not ok then return nil, "result " .. (i - 1) .. " requires grad: " .. why end
        live = i - 1
        outs[i - 1] = {live = r:detach()}
      else
        outs[i - 1] = {copy = r}
      end
    elseif kind == "nil" or kind == "number" or kind == "boolean" or kind == "string" then
      outs[i - 1] = {value = r}
    else
      return nil, "result " .. (i - 1) .. " is a " .. kind
    end
  end
  return outs
end

local function results(variant, ...)
  local outs = variant.outs
  if outs.n == 0 then return end
  local vals = {}
  for i = 1, outs.n do
    local o = outs[i]
    if o.arg then vals[i] = (select(o.arg, ...))
    elseif o.output then vals[i] = C.output(variant.handle, o.output)
    elseif o.copy then vals[i] = o.copy:clone()
    elseif o.spent then vals[i] = C.spent_copy(o.spent)
    elseif o.live then vals[i] = C.live_copy(variant.handle, o.live)
    elseif o.same then vals[i] = o.same
    elseif o.dup then vals[i] = vals[o.dup]
    else vals[i] = o.value end
  end
  return table.unpack(vals, 1, outs.n)
end

-- Runs fn(...) eagerly while recording; adds a variant when the call can be replayed.
local function record(state, ...)
  local n = select("#", ...)
  local args = table.pack(...)
  local why = unguardable(n, ...)
  if why then
    give_up(state, why)
    return state.fn(...)
  end
  build_library()
  local call_args, clones, clones_at = {}, {}, {}
  for i = 1, n do
    local v = args[i]
    if is_tensor(v) then
      local c = v:clone()
      clones[#clones + 1] = c
      clones_at[c] = i
      call_args[i] = c
    else
      call_args[i] = v
    end
  end
  local snap, too_much = C.snapshot(state.fn)
  if not snap then
    give_up(state, too_much)
    return state.fn(...)
  end
  state.recordings = (state.recordings or 0) + 1
  local rec = C.begin()
  local res = table.pack(pcall(state.fn, table.unpack(call_args, 1, n)))
  local handle, reason = C.finish(rec, state.fn, snap, clones)
  -- Tensor arguments written in place: the caller's tensors get the writes, as eagerly.
  local mutated = false
  for i = 1, n do
    local c = call_args[i]
    if is_tensor(c) and not torch.allclose(c, args[i], {rtol = 0, atol = 0, equal_nan = true}) then
      args[i]:copy_(c)
      mutated = true
    end
  end
  if not res[1] then error(res[2], 0) end
  -- The results as the caller sees them: its own tensors where the function returned one.
  local shown, unmapped = {}, nil
  for i = 2, res.n do
    local r = res[i]
    shown[i - 1] = (is_tensor(r) and clones_at[r]) and args[clones_at[r]] or r
    -- A view of an argument's clone is shown as the same view of the caller's tensor (a
    -- replay could not return it: describe_results leaves such a function eager).
    for _, c in ipairs(is_tensor(r) and not clones_at[r] and clones or {}) do
      local view = C.arg_view(r, c, args[clones_at[c]])
      if view == false then
        unmapped = "this call's result " .. (i - 1) .. " views a copy of argument " .. clones_at[c]
          .. ", which is not contiguous"
      elseif view ~= nil then
        shown[i - 1] = view
        break
      end
    end
  end
  local outs, bad
  if handle then outs, bad = describe_results(handle, args, clones_at, clones, res) end
  -- A copied result that a fused group alone writes: replays write it into new memory.
  if outs then
    for i = 1, outs.n do
      if outs[i].copy then outs[i].output = C.bind_output(handle, outs[i].copy, table.unpack(res, 2, res.n)) end
    end
  end
  -- A result the recording made lives in memory each replay rewrites: the caller gets a copy.
  if outs then
    for i = 1, outs.n do
      if outs[i].copy then shown[i] = outs[i].copy:clone() end
      if outs[i].dup then shown[i] = shown[outs[i].dup] end
      if outs[i].spent then shown[i] = C.spent_copy(outs[i].spent) end
      if outs[i].live then shown[i] = C.live_copy(handle, outs[i].live) end
    end
  end
  if mutated then
    give_up(state, "it modifies a tensor argument in place")
  elseif not handle then
    if reason:find("changes Lua state", 1, true) then
      state.state_changes = (state.state_changes or 0) + 1
      if state.state_changes >= kStateRetries then give_up(state, reason .. ", on " .. kStateRetries .. " calls in a row") end
    else
      give_up(state, reason)
    end
  elseif not outs then
    give_up(state, bad .. (unmapped and "; " .. unmapped or ""))
  else
    C.guard_args(handle, ...)
    state.state_changes = 0
    state.variants[#state.variants + 1] = {handle = handle, outs = outs}
  end
  if unmapped and not state.eager then give_up(state, unmapped) end
  return table.unpack(shown, 1, res.n - 1)
end

local function call(state, ...)
  if state.eager or C.recording() then return state.fn(...) end
  local variants = state.variants  -- most recently used first
  for i = 1, #variants do
    local v = variants[i]
    if C.replay(v.handle, state.fn, ...) then
      state.replays = state.replays + 1
      if i > 1 then table.insert(variants, 1, table.remove(variants, i)) end
      return results(v, ...)
    end
  end
  if #variants >= dynamo.config.cache_size_limit then
    -- Full: while replays pay for the recordings (four to one), the least recently used
    -- variant makes room (a learning rate changed each epoch); otherwise the guards keep
    -- missing and the function runs eagerly, as Dynamo does at its limit.
    if state.replays < kReplaysPerRecording * state.recordings then
      give_up(state, "cache_size_limit (" .. tostring(dynamo.config.cache_size_limit) .. ") variants recorded, "
        .. state.replays .. " replays for " .. state.recordings .. " recordings")
      return state.fn(...)
    end
    variants[#variants] = nil
  end
  return record(state, ...)
end

local kCompileOptions = {fullgraph = "boolean", disable = "boolean"}

local function check_options(opts)
  if opts == nil then return {} end
  if type(opts) ~= "table" or is_tensor(opts) then fail("options must be a keyword table such as {fullgraph=true}, got a %s", type(opts)) end
  for k, v in pairs(opts) do
    local want = kCompileOptions[k]
    if not want then fail("unknown keyword '%s' (takes fullgraph, disable)", tostring(k)) end
    if type(v) ~= want then fail("%s must be a %s, got a %s", k, want, type(v)) end
  end
  return opts
end

local function compile_function(fn, opts)
  local state = {fn = fn, variants = {}, fullgraph = opts.fullgraph == true, replays = 0, recordings = 0}
  local f = function(...) return call(state, ...) end
  compiled[f] = state
  return f
end

-- torch.compile(fn[, opts]) -> function; torch.compile(module[, opts]) -> the module with
-- compiled calls (reads and writes reach the module; _orig_mod is the module itself).
function torch.compile(target, opts)
  opts = check_options(opts)
  local kind = type(target)
  local module = kind == "table" and not is_tensor(target) and getmetatable(target) ~= nil and target.forward ~= nil
  if kind ~= "function" and not module then
    fail("expected a function or an nn.Module, got a %s", is_tensor(target) and "tensor" or kind)
  end
  if opts.disable then return target end
  if not module then return compile_function(target, opts) end
  local f = compile_function(function(...) return target(...) end, opts)
  -- Methods called on the wrapper (cm:parameters(), cm:eval()) run on the module itself.
  local proxy
  local methods = {}
  proxy = setmetatable({_orig_mod = target, _compiled = f}, {
    __index = function(_, k)
      local v = target[k]
      if type(v) ~= "function" then return v end
      local m = methods[v]
      if not m then
        m = function(self, ...)
          if rawequal(self, proxy) then self = target end
          return v(self, ...)
        end
        methods[v] = m
      end
      return m
    end,
    __newindex = target,
    __call = function(_, ...) return f(...) end,
    __tostring = function() return "OptimizedModule(" .. tostring(target) .. ")" end,
  })
  return proxy
end

-- torch.compiler.reset(): every compiled function forgets its recordings and breaks.
function compiler.reset(...)
  if select("#", ...) > 0 then fail("reset takes no arguments") end
  for _, state in pairs(compiled) do
    state.variants, state.eager, state.reason, state.state_changes = {}, nil, nil, nil
  end
end

-- torch.compiler.stats(f) -> {recordings=, replays=, variants=, cuda_graphs=, eager=, reason=}:
-- what a compiled function (or module) has done so far: calls recorded, calls replayed,
-- variants kept (cuda_graphs of them replaying as one CUDA graph), and whether (and why) it
-- runs eagerly now.
function compiler.stats(f, ...)
  if select("#", ...) > 0 then fail("stats takes one argument") end
  if type(f) == "table" and rawget(f, "_orig_mod") ~= nil then f = rawget(f, "_compiled") end
  local state = compiled[f]
  if not state then fail("stats expects a function torch.compile returned, got a %s", type(f)) end
  local graphs = 0
  for _, v in ipairs(state.variants) do
    if C.explain(v.handle).graph then graphs = graphs + 1 end
  end
  return {recordings = state.recordings, replays = state.replays, variants = #state.variants,
          cuda_graphs = graphs, eager = state.eager == true, reason = state.reason}
end

-- torch._dynamo.explain(fn)(...) -> report: runs fn(...) once under a fresh compile and says
-- what it captured: graph_count (0 or 1), graph_break_count, break_reasons, op_count, ops (the
-- recorded device-table calls, each "op:entry"), fused_groups (the runs of pointwise ops over
-- the same flat iteration that a replay runs chunk by chunk, each a list of ops with
-- `scratch`, how many of its buffers live only in chunk-sized scratch, and `outputs`, how many
-- results it writes straight into the tensors a replay returns), product_pairs (two
-- matrix-vector products over one matrix run in one pass, each {first, second} ops with
-- `rows`, the pointwise ops run row by row between them, `before` and `after`, the ops between
-- them moved out of the pass, and `scratch`), buffers and bytes (kept by the recording),
-- guarded_values and guarded_tensors, cuda_graph (whether replays run as one CUDA graph) and
-- cuda_graph_reason (why not).
function dynamo.explain(fn, ...)
  if select("#", ...) > 0 then fail("explain(fn) takes one argument; call its result with fn's arguments") end
  if type(fn) ~= "function" then fail("explain expects a function, got a %s", type(fn)) end
  return function(...)
    local state = {fn = compiled[fn] and compiled[fn].fn or fn, variants = {}, quiet = true}
    record(state, ...)
    local report = {graph_count = 0, graph_break_count = 0, break_reasons = {}, op_count = 0, ops = {},
                    fused_groups = {}, product_pairs = {}, buffers = 0, bytes = 0, guarded_values = 0, guarded_tensors = 0,
                    cuda_graph = false, cuda_graph_reason = "nothing was captured"}
    local v = state.variants[1]
    if v then
      local e = C.explain(v.handle)
      report.graph_count = 1
      report.op_count = #e.steps
      for i, s in ipairs(e.steps) do report.ops[i] = s.op .. ":" .. s.entry end
      for i, g in ipairs(e.groups) do
        report.fused_groups[i] = table.move(report.ops, g[1], g[2], 1, {scratch = g.scratch, outputs = g.outputs})
      end
      local function ops_of(steps)
        local ops = {}
        for k, s in ipairs(steps) do ops[k] = report.ops[s] end
        return ops
      end
      for i, p in ipairs(e.pairs) do
        report.product_pairs[i] = {report.ops[p[1]], report.ops[p[2]], rows = ops_of(p.rows),
                                   before = ops_of(p.before), after = ops_of(p.after), scratch = p.scratch}
      end
      report.buffers, report.bytes = e.buffers, e.bytes
      report.guarded_values, report.guarded_tensors = e.guarded_values, e.guarded_tensors
      report.cuda_graph, report.cuda_graph_reason = e.graphable, e.graph_reason
    else
      report.graph_break_count = 1
      report.break_reasons[1] = state.reason or "the call changed Lua state it reaches (recorded again next call)"
    end
    return setmetatable(report, {__tostring = function(r)
      local lines = {string.format("Graph Count: %d", r.graph_count),
                     string.format("Graph Break Count: %d", r.graph_break_count),
                     string.format("Op Count: %d", r.op_count),
                     string.format("Buffers: %d (%d bytes)", r.buffers, r.bytes),
                     string.format("Guarded: %d Lua values, %d tensors", r.guarded_values, r.guarded_tensors),
                     r.cuda_graph and "CUDA graph: yes" or "CUDA graph: no (" .. r.cuda_graph_reason .. ")"}
      if #r.break_reasons > 0 then lines[#lines + 1] = "Break Reasons:\n  " .. table.concat(r.break_reasons, "\n  ") end
      if #r.ops > 0 then lines[#lines + 1] = "Ops:\n  " .. table.concat(r.ops, "\n  ") end
      for i, g in ipairs(r.fused_groups) do
        lines[#lines + 1] = string.format("Fused group %d: %s (buffers in scratch: %d, results written in place: %d)",
                                          i, table.concat(g, ", "), g.scratch, g.outputs)
      end
      local function list(ops) return #ops > 0 and table.concat(ops, ", ") or "none" end
      for i, p in ipairs(r.product_pairs) do
        lines[#lines + 1] = string.format("Product pair %d: %s and %s in one pass over the matrix; row by row between "
                                          .. "them: %s; moved before: %s; moved after: %s (buffers in scratch: %d)",
                                          i, p[1], p[2], list(p.rows), list(p.before), list(p.after), p.scratch)
      end
      return table.concat(lines, "\n")
    end})
  end
end
