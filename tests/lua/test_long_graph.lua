-- Autograd graphs a million nodes long: recording, backward, torch.autograd.grad (with and
-- without create_graph), retain_graph, freeing the graph without backward or after it, and
-- chains of a million views. None of these may take stack depth proportional to the graph's
-- length: freeing a node used to free its inputs' nodes from inside its destructor, and a
-- loop of 200,000 `total = total + x` crashed (stack overflow) when total was collected.
-- Each test checks exact values (integers that float64 holds exactly). That the graphs are
-- really freed is checked by the engine's tests (tests/cpp/test_autograd.cpp, which watch
-- the nodes through weak pointers) and by LeakSanitizer in the sanitizer build.
--
--   tide tests/lua/test_long_graph.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")

-- Nodes in each chain: 10^6, or 2 x 10^5 under the sanitizers (as deep as any recursion
-- could go, at a fifth of the time; the sanitized build is several times slower).
local N = os.getenv("TIDE_SANITIZED") == "1" and 200000 or 1000000

-- A float64 leaf of one element that requires grad.
local function leaf(v)
  return torch.full({1}, v, {dtype = "float64", requires_grad = true})
end

-- x * 1, then y = step(y, x) until the chain has n (default N) nodes.
local function chain(x, step, n)
  local y = x * 1
  for _ = 2, n or N do y = step(y, x) end
  return y
end

-- Drops the last reference to a graph (the caller has set its root to nil).
local function free()
  collectgarbage()
  collectgarbage()
end

local function add(y, x) return y + x end
local function mul(y, x) return y * x end  -- saves both inputs for backward

T.test("10^6 adds (total = total + x), freed without backward", function()
  local x = leaf(1)
  local y = chain(x, add)
  T.eq(y:item(), N)
  T.eq(y.grad_fn, "AddBackward")
  y = nil
  free()
end)

T.test("backward through 10^6 nodes, then the graph is freed", function()
  local x = leaf(1)
  local y = chain(x, add)
  y:backward()
  T.eq(x.grad:item(), N)
  T.error(function() y:backward() end, "backward through the graph a second time")
  y = nil
  free()
end)

T.test("retain_graph: two backwards through 10^6 nodes, then the retained graph is freed", function()
  local x = leaf(1)
  local y = chain(x, mul)  -- y = x^N: dy/dx = N at x = 1; each node keeps its saved inputs
  y:backward(nil, {retain_graph = true})
  T.eq(x.grad:item(), N)
  y:backward(nil, {retain_graph = true})
  T.eq(x.grad:item(), 2 * N)
  y = nil
  free()
end)

T.test("autograd.grad through 10^6 nodes", function()
  local x = leaf(1)
  local y = chain(x, mul)
  local g = torch.autograd.grad(y, x)[1]
  T.eq(g:item(), N)
  T.eq(x.grad, nil)
  T.eq(g.requires_grad, false)
  y = nil
  free()
end)

T.test("autograd.grad with create_graph: 10^6 nodes recorded by backward, then backward through them", function()
  local x = leaf(1)
  local n = N // 4
  local y = chain(x, mul, n)      -- y = x^n; its backward records 3 nodes per product
  local g = torch.autograd.grad(y, x, {create_graph = true})[1]
  T.eq(g:item(), n)               -- n x^(n-1)
  T.eq(g.requires_grad, true)
  y = nil
  g:backward()                    -- n (n-1) x^(n-2)
  T.eq(x.grad:item(), n * (n - 1))
  g = nil
  free()
end)

T.test("10^6 in-place products on one tensor: backward and free", function()
  local x = leaf(1)
  local y = x * 1
  for _ = 2, N do y:mul_(x) end
  y:backward()
  T.eq(x.grad:item(), N)
  y = nil
  free()
end)

T.test("a chain of 10^6 views (view of a view ...): backward and free", function()
  local x = torch.tensor({1, 2, 3, 4}, {dtype = "float64", requires_grad = true})
  local v = x * 1
  for i = 1, N do v = i % 2 == 1 and v:view(2, 2) or v:view(4) end
  T.eq(v.shape, {4})
  local w = v * torch.tensor({1, 10, 100, 1000}, {dtype = "float64"})
  w:sum():backward()
  T.eq(x.grad:tolist(), {1, 10, 100, 1000})
  v, w = nil, nil
  free()
end)

T.test("a chain of 10^6 slices (x = x[{{1, -1}}] ...): backward and free", function()
  local x = torch.tensor({1, 2, 3}, {dtype = "float64", requires_grad = true})
  local v = x * 1
  for _ = 1, N do v = v[{{1, -1}}] end
  local g = torch.autograd.grad(v[{{2, 3}}]:sum(), x)[1]
  T.eq(g:tolist(), {0, 1, 1})
  v = nil
  free()
end)

T.done()
