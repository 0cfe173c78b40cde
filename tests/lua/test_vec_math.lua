-- The vectorised exp (tensor/cpu/vec_math.hpp; for float64 on CPUs with AVX-512,
-- tensor/cpu/exp_avx512.cpp): accuracy against Lua's math.exp (the C library's) over the
-- whole finite range, the lanes it hands to std::exp (overflow, underflow, subnormal results,
-- NaN, infinities) inside otherwise ordinary blocks and in partial last blocks, in-place
-- exp_, strided inputs (the scalar path) and float32.
--
--   tide tests/lua/test_vec_math.lua
local T = dofile((arg[0]:match("(.*/)") or "./") .. "harness.lua")

-- Largest relative difference between x:exp() and math.exp over the values of x.
local function max_rel_err(x)
  local got, worst = x:exp():tolist(), 0
  for i, v in ipairs(x:tolist()) do
    local want = math.exp(v)
    worst = math.max(worst, math.abs(got[i] - want) / want)
  end
  return worst
end

T.test("float64 exp within 2 ulps of libm from -708 to 709", function()
  local x = torch.linspace(-708, 709, 100003, {dtype = "float64"})
  T.truthy(max_rel_err(x) <= 2 * 2.220446049250313e-16, "max relative error " .. max_rel_err(x))
  local small = torch.linspace(-1, 1, 4097, {dtype = "float64"})
  T.truthy(max_rel_err(small) <= 2 * 2.220446049250313e-16)
end)

T.test("exact values: exp(0) = 1, exp(1) = e to the last bit in float64", function()
  T.eq(torch.zeros(300, {dtype = "float64"}):exp():sum():item(), 300.0)
  local e = torch.ones(300, {dtype = "float64"}):exp():tolist()
  T.truthy(math.abs(e[1] - math.exp(1)) <= 4.5e-16, "exp(1) = " .. string.format("%.17g", e[1]))
end)

T.test("special values inside a block of ordinary ones", function()
  local vals = {}
  for i = 1, 600 do vals[i] = (i % 7) - 3 end
  vals[5], vals[300], vals[301], vals[302], vals[303], vals[599] = 0 / 0, math.huge, -math.huge, 710, -745, -740
  local got = torch.tensor(vals, {dtype = "float64"}):exp():tolist()
  T.truthy(got[5] ~= got[5], "exp(nan) is nan")
  T.eq({got[300], got[301], got[302]}, {math.huge, 0.0, math.huge})
  T.eq(got[303], math.exp(-745))      -- the smallest subnormal
  T.eq(got[599], math.exp(-740))      -- a subnormal result
  for i = 1, 600 do
    if vals[i] == vals[i] and vals[i] >= -3 and vals[i] <= 3 then
      T.near(got[i], math.exp(vals[i]), 1e-15 * math.exp(vals[i]))
    end
  end
end)

-- Lengths that leave a partial last block (the AVX-512 kernel masks it), with an overflow,
-- an underflow and a NaN in that block, out of place and in place.
T.test("partial last blocks with special values, out of place and in place", function()
  for n = 1, 20 do
    local vals = {}
    for i = 1, n do vals[i] = (i - n / 2) / 3 end
    local specials = {710, -746, 0 / 0}
    vals[n] = specials[n % 3 + 1]
    local x = torch.tensor(vals, {dtype = "float64"})
    for _, got in ipairs({x:exp():tolist(), x:clone():exp_():tolist()}) do
      for i = 1, n do
        local want = math.exp(vals[i])
        if want ~= want then
          T.truthy(got[i] ~= got[i], "n = " .. n .. ": exp(nan)")
        elseif want == 0 or want == math.huge then
          T.eq(got[i], want, "n = " .. n)
        else
          T.truthy(math.abs(got[i] - want) <= 2.220446049250313e-16 * want, "n = " .. n .. ", x = " .. vals[i])
        end
      end
    end
  end
end)

T.test("in-place exp_ and a strided (transposed) input give the same values", function()
  local x = torch.linspace(-20, 20, 1000, {dtype = "float64"})
  local want = x:exp():tolist()
  local y = x:clone()
  T.truthy(rawequal(y:exp_(), y))
  T.eq(y:tolist(), want)
  local m = x:view(40, 25)
  T.eq(m:t():exp():t():contiguous():view(1000):tolist(), want)
end)

T.test("float32 exp within 1 ulp of libm, overflow to inf and underflow to 0", function()
  local x = torch.linspace(-87, 88, 20001)
  local got, xs, worst = x:exp():tolist(), x:tolist(), 0
  for i, v in ipairs(xs) do
    local want = math.exp(v)
    worst = math.max(worst, math.abs(got[i] - want) / want)
  end
  T.truthy(worst <= 1.2e-7, "float32 max relative error " .. worst)
  T.eq(torch.tensor({89.0, -104.0, 0.0, -math.huge}):exp():tolist(), {math.huge, 0.0, 1.0, 0.0})
  T.eq(torch.tensor({-100.0}):exp():item(), 3.783505853677006e-44)   -- a float32 subnormal
end)

T.done()
