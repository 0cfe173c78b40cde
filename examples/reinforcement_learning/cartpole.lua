-- The cart-pole of the classic control tasks (gym's CartPole-v1), written in Lua: a pole
-- hinged on a cart that a force of +-10 N pushes left or right every 0.02 s (Euler steps);
-- the episode ends when the pole leans more than 12 degrees or the cart leaves +-2.4, or after
-- 500 steps (CartPole-v1's time limit). Reward 1 per step; solved at an average of 475.
-- Actions are 1 (push left) and 2 (push right), tide's 1-based spelling of gym's 0 and 1.
-- The physics and constants are gym's (classic_control/cartpole.py); cartpole.py beside it is
-- the same environment in Python, for the comparison with PyTorch.
--
--   local CartPole = dofile("examples/reinforcement_learning/cartpole.lua")
--   local env = CartPole.new({seed = 543})          -- or {uniform = function() return u end}
--   local obs = env:reset()                          -- a float32 tensor of 4 values
--   local obs, reward, terminated, truncated = env:step(action)
local torch = torch or require("torch")

local CartPole = {}
CartPole.__index = CartPole
CartPole.reward_threshold = 475.0
CartPole.max_episode_steps = 500

local gravity, masscart, masspole = 9.8, 1.0, 0.1
local total_mass = masspole + masscart
local length = 0.5  -- half the pole's length
local polemass_length = masspole * length
local force_mag, tau = 10.0, 0.02
local theta_threshold_radians = 12 * 2 * math.pi / 360
local x_threshold = 2.4

-- opts.uniform: a function returning numbers in [0, 1) for the resets (default: a generator
-- seeded with opts.seed, 0 when not given).
function CartPole.new(opts)
  opts = opts or {}
  local uniform = opts.uniform
  if not uniform then
    local g = torch.Generator():manual_seed(opts.seed or 0)
    uniform = function() return torch.rand({}, {dtype = torch.float64, generator = g}):item() end
  end
  return setmetatable({uniform = uniform, state = nil, steps = 0}, CartPole)
end

local function observation(s) return torch.tensor(s, {dtype = torch.float32}) end

-- A new episode: each of x, x_dot, theta, theta_dot uniform in [-0.05, 0.05).
function CartPole:reset()
  local s = {}
  for i = 1, 4 do s[i] = -0.05 + 0.1 * self.uniform() end
  self.state, self.steps = s, 0
  return observation(s)
end

-- One step of 0.02 s pushing left (action 1) or right (action 2).
function CartPole:step(action)
  assert(self.state, "CartPole:step: call reset first")
  assert(action == 1 or action == 2, "CartPole:step: action must be 1 or 2, got " .. tostring(action))
  local x, x_dot, theta, theta_dot = table.unpack(self.state)
  local force = action == 2 and force_mag or -force_mag
  local costheta, sintheta = math.cos(theta), math.sin(theta)
  local temp = (force + polemass_length * theta_dot ^ 2 * sintheta) / total_mass
  local thetaacc = (gravity * sintheta - costheta * temp) /
                   (length * (4.0 / 3.0 - masspole * costheta ^ 2 / total_mass))
  local xacc = temp - polemass_length * thetaacc * costheta / total_mass
  x = x + tau * x_dot
  x_dot = x_dot + tau * xacc
  theta = theta + tau * theta_dot
  theta_dot = theta_dot + tau * thetaacc
  self.state = {x, x_dot, theta, theta_dot}
  self.steps = self.steps + 1
  local terminated = x < -x_threshold or x > x_threshold or theta < -theta_threshold_radians or
                     theta > theta_threshold_radians
  local truncated = self.steps >= CartPole.max_episode_steps
  return observation(self.state), 1.0, terminated, truncated
end

-- A source of uniform numbers read in order from a .npy file of float64 values in [0, 1)
-- (tests/lua/test_example_rl.sh writes one for both sides of the comparison).
function CartPole.uniforms_from(path)
  local np = require("numpy")
  local values = np.load(path):tolist()
  local i = 0
  return function()
    i = i + 1
    return assert(values[i], "uniforms_from: " .. path .. " has only " .. #values .. " numbers")
  end
end

-- The action (1-based) that inverse-CDF sampling picks from probs for a uniform u: the first k
-- with u < probs[1] + ... + probs[k] (the last one if rounding leaves u above the total).
function CartPole.inverse_cdf(probs, u)
  local p = probs:reshape(-1):tolist()
  local c = 0.0
  for k = 1, #p do
    c = c + p[k]
    if u < c then return k end
  end
  return #p
end

return CartPole
