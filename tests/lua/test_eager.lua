-- Issue 18 part 2, cheaper eager ops: the arithmetic operators' fast path in the binding
-- dispatcher (plain operands go straight to the op, everything else through the binding),
-- the method lookup of __index ahead of the argument reader, and the kernel loop of a
-- broadcast left operand (a backward formula's g * x). Each must give exactly what the
-- general path gives: the results of torch.add & co. are the reference.
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")
local torch = require "torch"

local ops = {
  {"add", function(a, b) return a + b end}, {"sub", function(a, b) return a - b end},
  {"mul", function(a, b) return a * b end}, {"div", function(a, b) return a / b end},
  {"pow", function(a, b) return a ^ b end}, {"floor_divide", function(a, b) return a // b end},
  {"remainder", function(a, b) return a % b end},
}

T.test("operators equal their ops: values and dtypes for tensors and numbers on either side", function()
  local operands = {
    torch.tensor({1.5, -2.25, 3}, {dtype = "float64"}), torch.tensor({2, 3, -4}, {dtype = "float32"}),
    torch.tensor({1, 2, 3}), torch.tensor({5, 6, 7}, {dtype = "int8"}), torch.tensor(2.5), torch.tensor(3),
    2, 0.5, -3,
  }
  for _, op in ipairs(ops) do
    for i, x in ipairs(operands) do
      for j, y in ipairs(operands) do
        if torch.is_tensor(x) or torch.is_tensor(y) then
          local ok, r = pcall(op[2], x, y)
          local ok_ref, ref = pcall(torch[op[1]], x, y)
          T.eq(ok, ok_ref, op[1] .. " " .. i .. " " .. j)
          if ok then
            T.eq(r.dtype, ref.dtype, op[1] .. " " .. i .. " " .. j)
            T.eq(r:tolist(), ref:tolist(), op[1] .. " " .. i .. " " .. j)
          else
            T.eq(r, ref, op[1] .. " " .. i .. " " .. j)
          end
        end
      end
    end
  end
  local i = torch.tensor{6, 3, 5}
  T.eq((i & 3):tolist(), {2, 3, 1})
  T.eq((i | 8):tolist(), {14, 11, 13})
  T.eq((i ~ i):tolist(), {0, 0, 0})
  T.eq((i << 2):tolist(), {24, 12, 20})
  T.eq((1 << i):tolist(), {64, 8, 32})
  T.eq((i >> 1):tolist(), {3, 1, 2})
end)

T.test("operators: operands the fast path leaves to the binding give its results and errors", function()
  local x = torch.tensor({1, 2}, {dtype = "float64"})
  T.eq((x + true):tolist(), {2, 3})           -- a boolean is a number operand
  T.eq((false * x):tolist(), {0, 0})
  local z = torch.complex(torch.tensor{1.0}, torch.tensor{2.0})
  T.eq((z * 2):tolist(), torch.mul(z, 2):tolist())
  T.error_usable(function() return z // 2 end, "floor_divide: complex64 is not supported")
  local freed = torch.tensor{1.0}
  freed:free()
  T.error_usable(function() return freed * 2 end, "tensor: this tensor was freed")
  T.error_usable(function() return 2 * freed end, "tensor: this tensor was freed")
  T.error_usable(function() return x + {} end, "add: expected a tensor or a number as argument 2, got table")
  T.error_usable(function() return x + torch.tensor{1, 2, 3} end,
                 "add: shapes {2} and {3} cannot be broadcast (2 vs 3 in dim 1)")
  T.error_usable(function() return torch.tensor{1, 2} << 1.5 end,
                 "bitwise_left_shift: expected bool or integer operands, got float32")
  T.error_usable(function() return torch.tensor{1, 2} // 0 end, "floor_divide: integer division by zero")
  -- Called with other arguments than Lua passes an operator, the metamethod is the binding.
  local add = getmetatable(x).__add
  T.error_usable(function() return add(x, x, x) end, "add: expected a number as argument 3, got tensor")
  T.eq(add(x, x, 2):tolist(), {3, 6})        -- alpha
  T.error_usable(function() return add(1, 2) end, "add: expected at least one tensor argument")
  T.error_usable(function() return add(x) end, "add: expected a tensor or a number as argument 2, got nothing")
end)

T.test("operators on NumPy arrays keep NumPy semantics", function()
  local a8 = np.array({1, 2}, {dtype = "int8"})
  T.eq((a8 + 300).dtype, "int16")             -- NumPy's value-based casting
  T.eq((a8 + 300):tolist(), {301, 302})
  local t8 = torch.tensor({1, 2}, {dtype = "int8"})
  T.eq((t8 + 300).dtype, "int8")              -- PyTorch keeps the tensor's dtype
  T.eq((t8 + a8).dtype, "int8")
  T.eq(((a8 + 300) + 1).dtype, "int16")        -- the result is an array again
  T.error(function() return torch.from_numpy(t8 + 1) end, "from_numpy: expected a NumPy array")
  T.eq(torch.from_numpy(t8 + a8):tolist(), {2, 4})
end)

T.test("operators record autograd and honour no_grad", function()
  local w = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
  local loss = ((w * w - 1) / 2):sum()
  T.eq(loss.grad_fn, "SumBackward")
  loss:backward()
  T.eq(w.grad:tolist(), {1, 2, 3})
  torch.no_grad(function() T.eq((w * 2).requires_grad, false) end)
  T.eq((2 * w).grad_fn, "MulBackward")
end)

T.test("operators under autocast cast as the ops do", function()
  local a, b = torch.rand(4, 4), torch.rand(4, 4)
  torch.autocast("cpu", function()
    T.eq((a * b).dtype, torch.mul(a, b).dtype)
    T.eq((a ^ 2).dtype, torch.pow(a, 2).dtype)
  end)
end)

T.test("__index: methods, properties and indexing through one metamethod", function()
  local x = torch.tensor({{1, 2}, {3, 4}}, {dtype = "float64"})
  T.eq(x:sum():item(), 10)
  T.eq(x.shape, {2, 2})
  T.eq(x[2]:tolist(), {3, 4})
  T.eq(x[":"]:tolist(), {{1, 2}, {3, 4}})
  T.error_usable(function() return x.no_such_name end, "tensor: no method or property named 'no_such_name'")
  T.eq(type(getmetatable(x).__index(x, "mm")), "function")
  T.error_usable(function() return getmetatable(x).__index(1, "shape") end,
                 "tensor: __index expects a tensor as self, got a number")
end)

T.test("a 0-dim operand broadcast on either side: the same values in every layout", function()
  for _, dt in ipairs({"float64", "float32", "int64"}) do
    local s = torch.tensor(3, {dtype = dt})
    local v = torch.tensor({1, 2, 4, 8, 16}, {dtype = dt})
    T.eq((s * v):tolist(), {3, 6, 12, 24, 48})
    T.eq((v * s):tolist(), {3, 6, 12, 24, 48})
    T.eq((s - v):tolist(), {2, 1, -1, -5, -13})
    T.eq((v - s):tolist(), {-2, -1, 1, 5, 13})
    local m = torch.arange(1, 7, {dtype = dt}):reshape(2, 3)
    T.eq((s - m:t()):tolist(), {{2, -1}, {1, -2}, {0, -3}})   -- a strided right operand
  end
  -- The gradient of a dot product is g * x with a 0-dim g on the left.
  local r = torch.tensor({1.0, -2.0, 0.5}, {dtype = "float64", requires_grad = true})
  r:dot(r):backward()
  T.eq(r.grad:tolist(), {2, -4, 1})
end)

T.done()
