-- torch.profiler (issue 18 part 5): which calls become events and how they nest, self and
-- total times, counts, input shapes, memory against known allocations, key_averages and its
-- table against PyTorch's own _build_table, the Chrome trace read back by Python's json, the
-- <close> and function forms, record_function, and the errors.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"
local profiler = torch.profiler
local profile, record_function = profiler.profile, profiler.record_function

local function names(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = e.name or e.key end
  return out
end

local function by_key(avgs)
  local out = {}
  for _, g in ipairs(avgs) do out[g.key] = g end
  return out
end

local function message(fn)
  local ok, err = pcall(fn)
  if ok then error("expected an error", 2) end
  return tostring(err)
end

-- With the collector stopped, no finalizer frees an unrelated tensor inside an op.
local function without_gc(fn)
  collectgarbage("collect")
  collectgarbage("stop")
  local ok, err = pcall(fn)
  collectgarbage("restart")
  if not ok then error(err, 0) end
end

T.test("every binding call is an event, in call order; backward nodes nest in backward", function()
  local a, b = torch.ones(10), torch.ones(10)
  local x = torch.ones(4, {requires_grad = true})
  local prof = profile(function()
    local c = a + b
    c = torch.mm(torch.ones(2, 3), torch.ones(3, 4))
    local y = (x * 2):sum()
    y:backward()
  end)
  local events = prof:events()
  T.eq(names(events), {"add", "ones", "ones", "mm", "mul", "sum", "backward", "SumBackward", "MulBackward",
                       "AccumulateGrad"})
  for i = 1, 7 do T.eq(events[i].cpu_parent, nil, events[i].name) end
  for i = 8, 10 do T.truthy(events[i].cpu_parent == events[7], events[i].name .. " is inside backward") end
  T.eq(names(events[7].cpu_children), {"SumBackward", "MulBackward", "AccumulateGrad"})
  T.eq(events[1].kind, "op")
  T.eq(events[8].kind, "backward")
  T.eq(events[1].count, 1)
  T.eq(events[1].key, "add")
  T.eq(events[1].input_shapes, nil)  -- not recorded without record_shapes
  T.eq(events[1].cpu_memory_usage, nil)
  T.eq(events[1].stack, nil)
  -- The gradient is right under the profiler too.
  T.eq(x.grad:tolist(), {2.0, 2.0, 2.0, 2.0})
end)

T.test("times: totals are the time ranges, self is total less the children, children lie inside", function()
  local x = torch.ones(64, 64, {requires_grad = true})
  local prof = profile(function()
    record_function("outer", function()
      record_function("inner", function() (x:mm(x)):sum():backward() end)
    end)
  end)
  local events = prof:events()
  T.eq(names(events), {"outer", "inner", "mm", "sum", "backward", "SumBackward", "MmBackward", "AccumulateGrad"})
  for _, e in ipairs(events) do
    local r = e.time_range
    T.near(e.cpu_time_total, r["end"] - r.start, 1e-9, e.name)
    T.truthy(e.cpu_time_total > 0, e.name .. " took no time")
    T.truthy(e.self_cpu_time_total >= 0 and e.self_cpu_time_total <= e.cpu_time_total, e.name)
    local children = 0
    for _, c in ipairs(e.cpu_children) do
      children = children + c.cpu_time_total
      T.truthy(c.time_range.start >= r.start and c.time_range["end"] <= r["end"], c.name .. " inside " .. e.name)
    end
    T.near(e.self_cpu_time_total, e.cpu_time_total - children, 1e-6, e.name)
    if e.cpu_parent then
      T.truthy(e.time_range.start >= e.cpu_parent.time_range.start, e.name)
    end
  end
  T.eq(names(events[1].cpu_children), {"inner"})
  T.eq(names(events[2].cpu_children), {"mm", "sum", "backward"})
  -- key_averages sums them per name.
  local avg = by_key(prof:key_averages())
  T.eq(avg.outer.count, 1)
  T.near(avg.outer.cpu_time_total, events[1].cpu_time_total, 1e-9)
  T.near(avg.outer.self_cpu_time_total, events[1].self_cpu_time_total, 1e-9)
  T.near(avg.outer.cpu_time, events[1].cpu_time_total, 1e-9)
end)

T.test("key_averages: calls per op, sums and means, in first-occurrence order", function()
  local a, b = torch.ones(10), torch.ones(10)
  local prof = profile(function()
    for _ = 1, 3 do local _ = a + b end
    for _ = 1, 2 do local _ = a * b end
    local _ = a:sum()
  end)
  local avgs = prof:key_averages()
  T.eq(names(avgs), {"add", "mul", "sum"})
  local avg = by_key(avgs)
  T.eq({avg.add.count, avg.mul.count, avg.sum.count}, {3, 2, 1})
  local total = 0
  for _, e in ipairs(prof:events()) do
    if e.name == "add" then total = total + e.cpu_time_total end
  end
  T.near(avg.add.cpu_time_total, total, 1e-9)
  T.near(avg.add.cpu_time, total / 3, 1e-9)
  T.eq(avg.add.input_shapes, nil)  -- only when grouped by them
end)

T.test("record_shapes: every argument's shape, [] for non-tensors; group_by_input_shape splits groups", function()
  local a, b = torch.ones(10), torch.ones(10)
  local prof = profile({record_shapes = true}, function()
    local _ = a + b
    _ = a + 2
    _ = torch.mm(torch.ones(2, 3), torch.ones(3, 4))
    _ = torch.ones(5):sum()
    _ = torch.ones(2, 3):sum{dim = 2}
  end)
  local events = prof:events()
  T.eq(names(events), {"add", "add", "ones", "ones", "mm", "ones", "sum", "ones", "sum"})
  T.eq(events[1].input_shapes, {{10}, {10}})
  T.eq(events[2].input_shapes, {{10}, {}})
  T.eq(events[3].input_shapes, {{}, {}})
  T.eq(events[5].input_shapes, {{2, 3}, {3, 4}})
  T.eq(events[7].input_shapes, {{5}})
  T.eq(events[9].input_shapes, {{2, 3}, {}})  -- the keyword table is an argument too
  local groups = prof:key_averages{group_by_input_shape = true}
  T.eq(#groups, 7)
  local seen = {}
  for _, g in ipairs(groups) do seen[#seen + 1] = g.key .. " " .. T.show(g.input_shapes) .. " " .. g.count end
  T.eq(seen, {"add {{10},{10}} 1", "add {{10},{}} 1", "ones {{},{}} 3", "mm {{2,3},{3,4}} 1", "ones {{}} 1",
              "sum {{5}} 1", "sum {{2,3},{}} 1"})
  -- backward nodes record the incoming gradient's shape
  local x = torch.ones(3, 2, {requires_grad = true})
  prof = profile({record_shapes = true}, function() (x * x):sum():backward() end)
  T.eq(prof:events()[4].name, "SumBackward")
  T.eq(prof:events()[4].input_shapes, {{}})
  T.eq(prof:events()[5].name, "MulBackward")
  T.eq(prof:events()[5].input_shapes, {{3, 2}})
end)

T.test("profile_memory: bytes the CPU allocator hands out while an op runs, self and with children", function()
  without_gc(function()
    local prof = profile({profile_memory = true}, function()
      record_function("block", function()
        local z = torch.zeros(1024)                -- float32: 4096 bytes
        local w = torch.zeros(256, {dtype = "float64"})  -- 2048 bytes
        local _ = z:sum()                          -- a 0-dim result: 4 bytes, a 64-byte block
        z, w = nil, nil
      end)
    end)
    local events = prof:events()
    T.eq(names(events), {"block", "zeros", "zeros", "sum"})
    T.eq(events[2].cpu_memory_usage, 4096)
    T.eq(events[2].self_cpu_memory_usage, 4096)
    T.eq(events[3].cpu_memory_usage, 2048)
    T.eq(events[4].cpu_memory_usage, 64)
    T.eq(events[1].cpu_memory_usage, 4096 + 2048 + 64)
    T.eq(events[1].self_cpu_memory_usage, 0)
    local avg = by_key(prof:key_averages())
    T.eq(avg.zeros.cpu_memory_usage, 6144)
    T.eq(avg.zeros.self_cpu_memory_usage, 6144)
    -- a free inside an op counts against it (in-place ops allocate nothing)
    local x = torch.zeros(1024)
    prof = profile({profile_memory = true}, function() x:add_(1) end)
    T.eq(prof:events()[1].cpu_memory_usage, 0)
  end)
end)

T.test("with_stack: each op's Lua call stack, innermost first; group_by_stack_n groups by it", function()
  local this = debug.getinfo(1, "S").short_src
  local a = torch.ones(2)
  local line
  local prof = profile({with_stack = true}, function()
    line = debug.getinfo(1, "l").currentline + 1
    for _ = 1, 2 do local _ = a + a end
    local _ = a + a
  end)
  local events = prof:events()
  T.eq(events[1].stack[1], this .. ":" .. line)
  T.eq(events[3].stack[1], this .. ":" .. (line + 1))
  T.truthy(#events[1].stack >= 2, "the caller of the profiled function is on the stack")
  local groups = prof:key_averages{group_by_stack_n = 1}
  T.eq(#groups, 2)
  T.eq({groups[1].count, groups[2].count}, {2, 1})
  T.eq(groups[1].stack, {this .. ":" .. line})
end)

T.test("the <close> form: ops until the scope ends or prof:stop(); record_function scopes nest", function()
  local a = torch.ones(3)
  local prof
  do
    local p <close> = profile{record_shapes = true}
    T.eq(math.type(profiler._recording()), "integer")
    local _ = a + a
    do
      local r <close> = record_function("label")
      _ = a * a
    end
    _ = a - a
    prof = p
  end
  T.eq(profiler._recording(), nil)
  local _ = a + a  -- not recorded
  local events = prof:events()
  T.eq(names(events), {"add", "label", "mul", "sub"})
  T.truthy(events[3].cpu_parent == events[2])
  T.eq(events[2].kind, "user")
  -- stop() early, then the <close> does nothing more
  do
    local p <close> = profile()
    _ = a + a
    p:stop()
    _ = a * a
    prof = p
  end
  T.eq(names(prof:events()), {"add"})
  prof:stop()  -- stopping a stopped profile does nothing
  T.eq(names(prof:events()), {"add"})
end)

T.test("profile(fn, ...) passes arguments and returns the profile then fn's results", function()
  local prof, x, y = profile(function(p, q) return p + q, "two" end, torch.ones(2), 1)
  T.eq(x:tolist(), {2.0, 2.0})
  T.eq(y, "two")
  T.eq(names(prof:events()), {"add"})
  local p2, r = profile({record_shapes = true}, function(s) return torch.ones(s):sum():item() end, 4)
  T.eq(r, 4.0)
  T.eq(p2:events()[1].input_shapes, {{}})
  -- record_function with a function returns its results, also outside a profiler (a no-op)
  T.eq({record_function("r", function(u, v) return u * 2, v end, 3, "x")}, {6, "x"})
  local r0 <close> = record_function("nothing records")
  r0:close()
  r0:close()
end)

T.test("unbalanced ranges: one left open ends with its parent or the profile; a late close is ignored", function()
  local a = torch.ones(2)
  local left_open
  local prof = profile(function()
    record_function("outer", function()
      left_open = record_function("never closed")
      local _ = a + a
    end)
    local _ = a * a
  end)
  left_open:close()  -- after the profile: ignored
  local events = prof:events()
  T.eq(names(events), {"outer", "never closed", "add", "mul"})
  T.truthy(events[2].cpu_parent == events[1])
  T.truthy(events[3].cpu_parent == events[2])
  T.eq(events[4].cpu_parent, nil)  -- outer's end closed "never closed" too
  T.truthy(events[2].time_range["end"] <= events[1].time_range["end"])
  -- left open until the profile stops
  local r
  prof = profile(function()
    r = record_function("open at stop")
    local _ = a + a
  end)
  T.eq(names(prof:events()), {"open at stop", "add"})
  T.truthy(prof:events()[1].cpu_time_total >= prof:events()[2].cpu_time_total)
  r:close()
  -- closing an outer range by hand closes the inner one, and the inner's close is then ignored
  prof = profile(function()
    local outer = record_function("o")
    local inner = record_function("i")
    outer:close()
    local _ = a + a
    inner:close()
  end)
  local ev = prof:events()
  T.eq(names(ev), {"o", "i", "add"})
  T.eq(ev[3].cpu_parent, nil)
end)

T.test("an error inside the profiled function or a range stops them and propagates", function()
  local err = message(function() profile(function() local _ = torch.ones(2) + 1; error("boom", 0) end) end)
  T.eq(err, "boom")
  T.eq(profiler._recording(), nil)
  -- an op's own error: the event still ends, the profiler stops
  T.eq(message(function() profile(function() return torch.ones(2) + torch.ones(3) end) end):match("^add: ") ~= nil,
       true)
  T.eq(profiler._recording(), nil)
  -- in a <close> scope
  local prof
  err = message(function()
    local p <close> = profile()
    prof = p
    local _ = torch.ones(2):sum()
    error({code = 7})
  end)
  T.eq(profiler._recording(), nil)
  T.eq(names(prof:events()), {"ones", "sum"})
  -- a table error passes through unchanged
  local ok, e = pcall(profile, function() error({code = 7}) end)
  T.eq(ok, false)
  T.eq(e.code, 7)
  -- record_function's range ends on an error
  prof = profile(function()
    pcall(record_function, "failing", function() local _ = torch.ones(1); error("x") end)
    local _ = torch.zeros(1)
  end)
  local ev = prof:events()
  T.eq(names(ev), {"failing", "ones", "zeros"})
  T.eq(ev[3].cpu_parent, nil)
  T.still_usable()
end)

T.test("table(): PyTorch's _build_table layout for the same averages", function()
  if not T.have_python_module("torch") then
    print("skipped: PyTorch not available")
    return
  end
  local a, b = torch.ones(10), torch.ones(10)
  local x = torch.ones(32, 32, {requires_grad = true})
  local prof
  without_gc(function()
    prof = profile({record_shapes = true, profile_memory = true, with_stack = true}, function()
      record_function("a_very_long_label_" .. string.rep("x", 60), function()
        for _ = 1, 3 do local _ = a + b end
        x:mm(x):sum():backward()
      end)
    end)
  end)
  local cases = {
    {avg = {}, table = {sort_by = "self_cpu_time_total", row_limit = 10}},
    {avg = {}, table = {sort_by = "cpu_time_total", row_limit = 3, header = "TITLE"}},
    {avg = {}, table = {sort_by = "count"}},
    {avg = {}, table = {sort_by = "cpu_time", max_name_column_width = 12}},
    {avg = {}, table = {sort_by = "cpu_memory_usage", row_limit = -1}},
    {avg = {}, table = {sort_by = "self_cpu_memory_usage", row_limit = 0}},
    {avg = {group_by_input_shape = true}, table = {sort_by = "cpu_time_total", max_shapes_column_width = 10}},
    {avg = {group_by_stack_n = 2}, table = {sort_by = "self_cpu_time_total", max_src_column_width = 12}},
    {avg = {group_by_stack_n = 5}, table = {row_limit = 100}},
  }
  local py = {"import sys, json",
              "from torch.autograd.profiler_util import FunctionEventAvg, _build_table",
              "cases = json.load(open(sys.argv[1]))",
              "for c in cases:",
              "    evs = []",
              "    for g in c['events']:",
              "        e = FunctionEventAvg()",
              "        e.key, e.count, e.node_id = g['key'], g['count'], -1",
              "        e.cpu_time_total, e.self_cpu_time_total = g['total'], g['self']",
              "        e.cpu_memory_usage, e.self_cpu_memory_usage = g['mem'], g['self_mem']",
              "        e.input_shapes = g.get('shapes')",
              "        e.stack = g.get('stack', [])",
              "        evs.append(e)",
              "    kw = c['table']",
              "    sys.stdout.write(_build_table(evs, profile_memory=True, **kw) + '@@END@@')"}
  local function json_value(v)
    if type(v) == "string" then return string.format("%q", v) end
    if type(v) == "number" then return string.format("%.17g", v) end
    if type(v) == "table" then
      if next(v) == nil then return "[]" end
      if v[1] ~= nil then
        local parts = {}
        for i, u in ipairs(v) do parts[i] = json_value(u) end
        return "[" .. table.concat(parts, ", ") .. "]"
      end
      local parts = {}
      for _, k in ipairs(T.sorted_keys(v)) do parts[#parts + 1] = string.format("%q: %s", k, json_value(v[k])) end
      return "{" .. table.concat(parts, ", ") .. "}"
    end
    return tostring(v)
  end
  local ours, json_cases = {}, {}
  for i, c in ipairs(cases) do
    local avgs = prof:key_averages(c.avg)
    ours[i] = avgs:table(c.table)
    local events = {}
    for k, g in ipairs(avgs) do
      events[k] = {key = g.key, count = g.count, total = g.cpu_time_total, self = g.self_cpu_time_total,
                   mem = g.cpu_memory_usage, self_mem = g.self_cpu_memory_usage, shapes = g.input_shapes,
                   stack = g.stack}
    end
    json_cases[i] = {events = events, table = c.table}
  end
  local dir, path = T.tmpdir()
  T.write_bytes(path("cases.json"), json_value(json_cases))
  local out, ok = T.python(table.concat(py, "\n") .. "\n", path("cases.json"))
  T.truthy(ok, out:sub(-3000))
  local theirs = {}
  for s in out:gmatch("(.-)@@END@@") do theirs[#theirs + 1] = s end
  T.eq(#theirs, #cases)
  for i = 1, #cases do T.eq(ours[i], theirs[i], "case " .. i) end
  os.execute("rm -rf " .. T.quote(dir))
  -- the columns of a profile without memory, and the empty table
  local p2 = profile(function() local _ = a + b end)
  local lines = {}
  for l in p2:key_averages():table():gmatch("[^\n]+") do lines[#lines + 1] = l end
  T.eq(lines[2], "   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg    # of Calls  ")
  T.truthy(lines[4]:match("^    add       100%.00%%  "), lines[4])
  T.truthy(lines[6]:match("^Self CPU time total: [%d.]+us$"), lines[6])
  T.eq(#lines, 6)
  T.eq(profile(function() end):key_averages():table(), "")
  T.eq(tostring(p2:key_averages()), p2:key_averages():table())  -- print(prof:key_averages())
  T.eq(tostring(p2:events()), p2:events():table())
end)

T.test("export_chrome_trace: JSON that Python reads, complete events that nest as the ops did", function()
  local x = torch.ones(8, {requires_grad = true})
  local prof = profile({record_shapes = true, profile_memory = true, with_stack = true}, function()
    record_function("step \"1\"", function() (x * 3):sum():backward() end)
  end)
  local dir, path = T.tmpdir()
  prof:export_chrome_trace(path("trace.json"))
  local check = [[
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
print(len(ev))
for e in ev:
    assert e["ph"] == "X" and e["pid"] == 1 and e["tid"] == 1, e
    assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0, e
    print(e["name"], e["cat"], json.dumps(e["args"].get("Input Dims")), e["args"].get("CPU Mem"),
          "stack" if "Call stack" in e["args"] else "-")
# nesting: each event lies inside the last earlier event that contains its start
for i, e in enumerate(ev):
    for p in ev[:i]:
        if p["ts"] <= e["ts"] < p["ts"] + p["dur"]:
            assert e["ts"] + e["dur"] <= p["ts"] + p["dur"] + 1e-6, (p, e)
print("nested", sum(1 for i, e in enumerate(ev) if any(p["ts"] <= e["ts"] and e["ts"] + e["dur"] <= p["ts"] + p["dur"] for p in ev[:i])))
]]
  local out, ok = T.python(check, path("trace.json"))
  T.truthy(ok, out)
  local events = prof:events()
  local expect = {"7"}
  for _, e in ipairs(events) do
    local dims = {}
    for k, s in ipairs(e.input_shapes) do dims[k] = "[" .. table.concat(s, ", ") .. "]" end
    expect[#expect + 1] = string.format("%s %s %s %d %s", e.name, e.kind == "user" and "user_annotation" or "cpu_op",
                                        "[" .. table.concat(dims, ", ") .. "]", e.cpu_memory_usage,
                                        e.kind == "op" and "stack" or "-")
  end
  expect[#expect + 1] = "nested 6"
  T.eq(names(events), {"step \"1\"", "mul", "sum", "backward", "SumBackward", "MulBackward", "AccumulateGrad"})
  local got = {}
  for l in out:gmatch("[^\n]+") do got[#got + 1] = l end
  T.eq(got, expect)
  T.eq(got[2], 'step "1" user_annotation [] ' .. events[1].cpu_memory_usage .. " -")
  T.eq(got[3], "mul cpu_op [[8], []] 64 stack")
  os.execute("rm -rf " .. T.quote(dir))
end)

T.test("errors: keywords, types, nesting, results while recording", function()
  T.eq(message(function() profile{recrd_shapes = true} end),
       "profile: unknown keyword 'recrd_shapes' (did you mean 'record_shapes'? valid: record_shapes, profile_memory, " ..
       "with_stack, activities)")
  T.eq(message(function() profile{with_flops = true} end),
       "profile: unknown keyword 'with_flops' (valid: record_shapes, profile_memory, with_stack, activities)")
  T.eq(profiler._recording(), nil)
  T.eq(message(function() profile{record_shapes = 1} end), "profile: record_shapes must be true or false, got 1")
  T.eq(message(function() profile{profile_memory = "yes"} end),
       'profile: profile_memory must be true or false, got "yes"')
  T.eq(message(function() profile{with_stack = 0} end), "profile: with_stack must be true or false, got 0")
  T.eq(message(function() profile(42) end), "profile: expected a keyword table or a function, got 42")
  T.eq(message(function() profile({}, "f") end), "profile: expected a keyword table or a function, got \"f\"")
  -- activities: CPU is what tide times
  local PA = profiler.ProfilerActivity
  local prof = profile({activities = {PA.CPU}}, function() local _ = torch.ones(1) end)
  T.eq(names(prof:events()), {"ones"})
  T.eq(message(function() profile{activities = {PA.CPU, PA.CUDA}} end),
       "profile: ProfilerActivity.CUDA is not supported: tide's profiler times CPU ops only (a CUDA op's time is its " ..
       "launch)")
  T.eq(message(function() profile{activities = {"GPU"}} end), "profile: activities must hold ProfilerActivity.CPU, got \"GPU\"")
  T.eq(message(function() profile{activities = "CPU"} end),
       "profile: activities must be a list of ProfilerActivity, got \"CPU\"")
  T.eq(profiler._recording(), nil)
  -- one profiler at a time; the outer keeps recording
  local outer <close> = profile()
  T.eq(message(function() profile(function() end) end), "profile: a profiler is already recording (profiles do not nest)")
  T.eq(message(function() outer:key_averages() end),
       "profile:key_averages: the profiler is still recording; call prof:stop() (or leave its <close> scope) first")
  T.eq(message(function() outer:events() end),
       "profile:events: the profiler is still recording; call prof:stop() (or leave its <close> scope) first")
  T.eq(message(function() outer:export_chrome_trace("/tmp/x.json") end),
       "profile:export_chrome_trace: the profiler is still recording; call prof:stop() (or leave its <close> scope) first")
  local _ = torch.ones(1)
  outer:stop()
  T.eq(names(outer:events()), {"ones"})
  -- the private bindings
  T.eq(message(function() profiler._stop() end), "profiler._stop: no profiler is recording")
  local id = profiler._start(false, false, false)
  T.eq(profiler._recording(), id)
  T.eq(message(function() profiler._start(false, false, false) end),
       "profiler._start: a profiler is already recording (one at a time)")
  T.eq(profiler._stop(), {})
  -- a profile whose session was stopped behind its back has no events, and does not stop the next
  local p1 = profile()
  profiler._stop()
  local p2 = profile()
  p1:stop()
  T.eq(math.type(profiler._recording()), "integer")
  p2:stop()
  T.eq(#p1:events(), 0)
  -- an unreachable running profile stops when collected
  profile()
  collectgarbage("collect")
  T.eq(profiler._recording(), nil)
  T.eq(profiler._push("no profiler"), -1)
  profiler._pop(-1)
  -- key_averages and table arguments
  T.eq(message(function() prof:key_averages{group_by_input_shapes = true} end),
       "profile:key_averages: unknown keyword 'group_by_input_shapes' (did you mean 'group_by_input_shape'? valid: " ..
       "group_by_input_shape, group_by_stack_n)")
  T.eq(message(function() prof:key_averages{group_by_input_shape = true} end),
       "profile:key_averages: group_by_input_shape needs a profile with record_shapes = true")
  T.eq(message(function() prof:key_averages{group_by_stack_n = 2} end),
       "profile:key_averages: group_by_stack_n needs a profile with with_stack = true")
  T.eq(message(function() prof:key_averages{group_by_stack_n = -1} end),
       "profile:key_averages: group_by_stack_n must be an integer >= 0, got -1")
  T.eq(message(function() prof:key_averages{group_by_input_shape = "yes"} end),
       "profile:key_averages: group_by_input_shape must be true or false, got \"yes\"")
  T.eq(message(function() prof:key_averages(5) end), "profile:key_averages: expected a keyword table, got 5")
  -- A non-object self is refused by every class method's common check (torch._strict), an
  -- object of another class by the profiler's own.
  T.truthy(message(function() prof.key_averages(5) end):find(
    "profile:key_averages: expected an object as self, got the number 5", 1, true))
  T.truthy(message(function() prof.stop(torch.ones(2)) end):find("profile:stop: expected an object as self, got a tensor", 1, true))
  T.eq(message(function() prof.key_averages({}) end), "profile:key_averages: expected a profile as self, got a table")
  T.eq(message(function() prof.stop(nn.Linear(1, 1)) end), "profile:stop: expected a profile as self, got a table")
  T.eq(message(function() profiler._EventList.table({}) end), "EventList:table: expected an EventList as self, got a table")
  T.eq(message(function() profiler._Range.close({}) end), "record_function:close: expected a record_function range as self, got a table")
  T.truthy(message(function() prof:key_averages({}, 1) end):find(
    "profile:key_averages: unexpected argument 2 (the number 1): profile:key_averages takes 1 argument and no keywords", 1, true))
  local avgs = prof:key_averages()
  T.eq(message(function() avgs:table{sort_by = "cuda_time"} end),
       "EventList:table: sort_by must be one of cpu_time, cpu_time_total, self_cpu_time_total, count, " ..
       "cpu_memory_usage, self_cpu_memory_usage, got \"cuda_time\"")
  T.eq(message(function() avgs:table{sort_by = "cpu_memory_usage"} end),
       "EventList:table: sort_by cpu_memory_usage needs a profile with profile_memory = true")
  T.eq(message(function() avgs:table{row_limit = 1.5} end),
       "EventList:table: row_limit must be an integer >= 0 (or -1: no limit), got 1.5")
  T.eq(message(function() avgs:table{row_limit = -2} end),
       "EventList:table: row_limit must be an integer >= 0 (or -1: no limit), got -2")
  T.eq(message(function() avgs:table{header = 1} end), "EventList:table: header must be a string, got 1")
  T.eq(message(function() avgs:table{max_name_column_width = 2} end),
       "EventList:table: max_name_column_width must be an integer >= 4, got 2")
  T.eq(message(function() avgs:table{max_shapes_column_width = "x"} end),
       "EventList:table: max_shapes_column_width must be an integer >= 4, got \"x\"")
  T.eq(message(function() avgs:table{max_src_column_width = 3} end),
       "EventList:table: max_src_column_width must be an integer >= 4, got 3")
  T.eq(message(function() avgs:table{top_level_events_only = true} end),
       "EventList:table: unknown keyword 'top_level_events_only' (valid: sort_by, row_limit, header, " ..
       "max_name_column_width, max_shapes_column_width, max_src_column_width)")
  T.eq(message(function() avgs:table("self_cpu_time_total") end),
       "EventList:table: expected a keyword table, got \"self_cpu_time_total\"")
  T.eq(message(function() prof:export_chrome_trace(1) end), "profile:export_chrome_trace: expected a file path, got 1")
  T.truthy(message(function() prof:export_chrome_trace("/nonexistent/dir/t.json") end):find(
    "^profile:export_chrome_trace: cannot write /nonexistent/dir/t.json: "))
  T.truthy(message(function() prof:stop(1) end):find(
    "profile:stop: unexpected argument 1 (the number 1): profile:stop takes 0 arguments and no keywords", 1, true))
  -- record_function
  T.eq(message(function() record_function(1) end), "record_function: expected a name (a string), got 1")
  T.eq(message(function() record_function("n", 2) end), "record_function: expected a function after the name, got 2")
  T.eq(profiler._recording(), nil)
end)

T.done()
