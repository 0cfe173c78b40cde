-- torch.utils.progress: the values it iterates over, the exact lines it draws (with a fake
-- clock: percentage, bar, i/n, elapsed, remaining, rate, postfix, padding, the final newline),
-- at most ~10 redraws a second, quiet when stderr is not a terminal, drawn on a real
-- pseudo-terminal (through `script`), TIDE_PROGRESS, and bad arguments.
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local T = dofile(dir .. "harness.lua")
local torch = torch or require("torch")
local progress = torch.utils.progress

-- A file-like object that keeps what is written to it.
local function capture()
  local c = {parts = {}}
  function c:write(...)
    for _, s in ipairs({...}) do self.parts[#self.parts + 1] = s end
    return self
  end
  function c:text() return table.concat(self.parts) end
  return c
end

-- Runs fn with torch.utils.clock replaced by one that returns clock.now (fn moves it).
local clock = {now = 1000}
local function with_fake_clock(fn)
  local real = torch.utils.clock
  torch.utils.clock = function() return clock.now end
  local ok, err = pcall(fn)
  torch.utils.clock = real
  if not ok then error(err, 0) end
end

-- The bar of 25 cells for `eighths` eighths of a cell.
local PARTIAL = {"▏", "▎", "▍", "▌", "▋", "▊", "▉"}
local function cells(eighths)
  local full, part = eighths // 8, eighths % 8
  return string.rep("█", full) .. (PARTIAL[part] or "") .. string.rep(" ", 25 - full - (part > 0 and 1 or 0))
end

-- The lines drawn, split at the carriage returns that start each redraw.
local function lines(text)
  local out = {}
  for line in text:gmatch("\r([^\r]*)") do out[#out + 1] = line end
  return out
end

-- Runs `code` in a fresh tide through the shell; returns stdout, stderr and success.
local TIDE = T.interpreter()
local TMP = os.tmpname()
local function run_tide(code, prefix)
  local cmd = (prefix or "") .. T.quote(TIDE) .. " -e " .. T.quote(code) .. " 2>" .. T.quote(TMP)
  local p = io.popen(cmd)
  local out = p:read("a")
  local ok = p:close()
  local f = io.open(TMP, "rb")
  local err = f:read("a")
  f:close()
  return out, err, ok
end

T.test("iterates 1..n, or index and value over a table", function()
  local got = {}
  for i in progress(5) do got[#got + 1] = i end
  T.eq(got, {1, 2, 3, 4, 5})
  local pairs_seen = {}
  for i, v in progress({"a", "b", "c"}) do pairs_seen[#pairs_seen + 1] = i .. v end
  T.eq(pairs_seen, {"1a", "2b", "3c"})
  for _ in progress(0) do error("progress(0) must not iterate") end
  for _ in progress({}) do error("an empty table must not iterate") end
  local bar = progress(3.0)  -- an integral float is a count
  local n = 0
  for _ in bar do n = n + 1 end
  T.eq(n, 3)
  for _ in bar do error("a finished bar does not iterate again") end
  local count = 0
  for i in progress(10) do
    count = i
    if i == 4 then break end
  end
  T.eq(count, 4)
end)

T.test("the lines drawn: percentage, bar, counts, times, rate, postfix, padding, newline", function()
  with_fake_clock(function()
    local out = capture()
    local bar = progress(4, {desc = "train", file = out, force = true})
    for i in bar do
      clock.now = clock.now + 0.5
      if i == 2 then bar:set_postfix{loss = 0.25, acc = torch.tensor(0.875)} end
      if i == 4 then bar:set_postfix{} end
    end
    local want = {
      "train:   0%|" .. cells(0) .. "| 0/4 [00:00<?, ?it/s]",
      "train:  25%|" .. cells(50) .. "| 1/4 [00:00<00:01, 2.00it/s]",
      "train:  50%|" .. cells(100) .. "| 2/4 [00:01<00:01, 2.00it/s, acc=0.875, loss=0.25]",
      "train:  75%|" .. cells(150) .. "| 3/4 [00:01<00:00, 2.00it/s, acc=0.875, loss=0.25]",
      "train: 100%|" .. cells(200) .. "| 4/4 [00:02<00:00, 2.00it/s]" .. string.rep(" ", 22) .. "\n",  -- over ", acc=0.875, loss=0.25"
    }
    T.eq(lines(out:text()), want)
  end)
end)

T.test("slow steps in s/it, hours, a total that differs from n, integers in the postfix", function()
  with_fake_clock(function()
    local out = capture()
    local bar = progress(2, {file = out, force = true, total = 8})
    for i in bar do
      clock.now = clock.now + 4000
      bar:set_postfix{step = i}
    end
    local l = lines(out:text())
    T.eq(l[2], " 12%|" .. cells(25) .. "| 1/8 [1:06:40<7:46:40, 4000.00s/it, step=1]")
    T.eq(l[3], " 25%|" .. cells(50) .. "| 2/8 [2:13:20<6:40:00, 4000.00s/it, step=2]\n")
  end)
end)

T.test("redraws at most every 0.1 s of the clock", function()
  with_fake_clock(function()
    local out = capture()
    for _ in progress(70, {file = out, force = true}) do clock.now = clock.now + 1 / 64 end
    -- The start, every 7th step (7/64 s >= 0.1 s) up to 63, and the end.
    local l = lines(out:text())
    T.eq(#l, 11)
    T.truthy(l[2]:find("| 7/70 ", 1, true), l[2])
    T.truthy(l[10]:find("| 63/70 ", 1, true), l[10])
  end)
  -- With the real clock, a fast loop draws only a few times.
  local out = capture()
  local t0 = torch.utils.clock()
  for _ in progress(200000, {file = out, force = true}) do end
  local elapsed = torch.utils.clock() - t0
  T.truthy(#lines(out:text()) <= 3 + elapsed * 10, #lines(out:text()) .. " redraws in " .. elapsed .. " s")
end)

T.test("break, an error or <close> end the line; nothing drawn without force on a non-terminal", function()
  with_fake_clock(function()
    local out = capture()
    for i in progress(10, {file = out, force = true}) do
      if i == 3 then break end
      clock.now = clock.now + 1
    end
    local l = lines(out:text())
    T.eq(l[#l], " 20%|" .. cells(40) .. "| 2/10 [00:02<00:08, 1.00it/s]\n")
    local out2 = capture()
    T.error(function()
      for _ in progress(5, {file = out2, force = true}) do error("stop here") end
    end, "stop here")
    T.truthy(out2:text():sub(-1) == "\n", "an error in the loop ends the line")
    local out3 = capture()
    do
      local bar <close> = progress(5, {file = out3, force = true})
      bar()
    end
    T.truthy(out3:text():find("| 0/5 ", 1, true) and out3:text():sub(-1) == "\n", out3:text())
  end)
  local quiet = capture()
  for _ in progress(5, {file = quiet}) do end
  T.eq(quiet:text(), "", "a file that is not a terminal gets nothing")
end)

T.test("stderr redirected: quiet; TIDE_PROGRESS=1 draws anyway", function()
  local code = "for i in torch.utils.progress(30, {desc = 'epoch'}) do end io.write('done')"
  local out, err, ok = run_tide(code)
  T.truthy(ok, "tide failed: " .. err)
  T.eq(out, "done")
  T.eq(err, "", "nothing on a redirected stderr")
  out, err, ok = run_tide(code, "TIDE_PROGRESS=1 ")
  T.truthy(ok, err)
  T.eq(out, "done")
  T.truthy(err:find("\repoch: 100%|" .. cells(200) .. "| 30/30 [", 1, true), err)
  T.eq(err:sub(-1), "\n")
end)

T.test("a real terminal: drawn on a pseudo-terminal, not with TIDE_PROGRESS=0", function()
  if os.execute("command -v script >/dev/null 2>&1") ~= true then
    print("skipped: test_progress pseudo-terminal check (no `script` program)")
    return
  end
  local code = "for i in torch.utils.progress(30, {desc = 'epoch'}) do end print(torch.utils._isatty(2))"
  local function on_pty(prefix)
    local p = io.popen(prefix .. "script -qec " .. T.quote(T.quote(TIDE) .. " -e " .. T.quote(code)) .. " /dev/null </dev/null")
    local out = p:read("a")
    p:close()
    return out
  end
  local out = on_pty("")
  T.truthy(out:find("\repoch: 100%|" .. cells(200) .. "| 30/30 [", 1, true), out)
  T.truthy(out:find("true", 1, true), "stderr is a terminal there: " .. out)
  local quiet = on_pty("TIDE_PROGRESS=0 ")
  T.truthy(not quiet:find("30/30", 1, true) and quiet:find("true", 1, true), quiet)
  T.eq(torch.utils._isatty(io.stdout), torch.utils._isatty(1))
end)

T.test("bad arguments are errors naming utils.progress", function()
  T.error_usable(function() progress(-1) end, "utils.progress: n must be an integer >= 0, got -1")
  T.error_usable(function() progress(2.5) end, "utils.progress: n must be an integer >= 0, got 2.5")
  T.error_usable(function() progress("10") end,
                 "utils.progress: expected a count or a table to iterate over, got a string")
  T.error_usable(function() progress(torch.ones(3)) end, "utils.progress: expected a count or a table to iterate over, got a tensor")
  T.error_usable(function() progress() end, "utils.progress: expected a count or a table to iterate over, got a nil")
  T.error_usable(function() progress(3, 5) end, "utils.progress: options must be a table {desc=, total=, file=, force=}, got a number")
  T.error_usable(function() progress(3, {descr = "x"}) end, "utils.progress: unknown keyword 'descr' (did you mean 'desc'? valid: desc, total, file, force)")
  T.error_usable(function() progress(3, {desc = 5}) end, "utils.progress: option 'desc' must be a string, got a number")
  T.error_usable(function() progress(3, {total = -2}) end, "utils.progress: total must be an integer >= 0, got -2")
  T.error_usable(function() progress(3, {file = 5}) end, "utils.progress: file must be an open file or an object with a write method")
  local bar = progress(3)
  T.error_usable(function() bar:set_postfix(0.5) end, "utils.progress: set_postfix expects a table {name = value}, got a number")
  T.error_usable(function() bar:set_postfix{loss = {}} end,
                 "utils.progress: set_postfix value 'loss' must be a number, a string, a boolean or a one-element tensor, got a table")
  T.error_usable(function() bar:set_postfix{loss = torch.ones(2)} end, "got a tensor of 2 elements")
  T.error_usable(function() torch.utils._isatty(-1) end, "utils._isatty: expected a file descriptor (>= 0) or a file, got -1")
end)

os.remove(TMP)
T.done()
