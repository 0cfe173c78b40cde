-- The gradient of the least-squares loss ||y - A x||^2 with respect to x, by autograd,
-- checked against the closed form -2 A^T (y - A x). A has shape (10 d, d).
--
--   tide scripts/least_squares_grad.lua [--d 5] [--dtype float64] [--seed 0]
--
-- Prints both gradients' largest relative difference; exits with status 1 if it exceeds
-- what the dtype's rounding explains.
local torch = require "torch"
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local opts = dofile(dir .. "common.lua").parse_args({...}, {d = 5, dtype = "float64", seed = 0})

torch.manual_seed(opts.seed)
local d = math.tointeger(opts.d)
local A = torch.randn(10 * d, d, {dtype = opts.dtype})
local y = torch.randn(10 * d, {dtype = opts.dtype})
local x = torch.randn(d, {dtype = opts.dtype, requires_grad = true})

local r = y - A:mv(x)
local loss = r:dot(r)
loss:backward()

local closed = -2 * A:t():mv(y - A:mv(x:detach()))
local diff = ((x.grad - closed):abs():max() / closed:abs():max()):item()
print("autograd:    ", x.grad)
print("closed form: ", closed)
print(string.format("max relative difference %.3g", diff))
local tolerance = opts.dtype == "float64" and 1e-12 or 1e-4
if diff > tolerance then os.exit(1) end
