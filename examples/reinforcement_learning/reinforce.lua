-- PyTorch's official REINFORCE example (pytorch/examples, reinforcement_learning/reinforce.py),
-- ported line by line from reinforce.py beside it: a policy network (Linear 4 -> 128, dropout
-- 0.6, relu, Linear 128 -> 2, softmax) on the cart-pole of cartpole.lua, its actions sampled
-- from a Categorical, trained with Adam on the discounted, normalised returns of each episode.
--
--   tide examples/reinforcement_learning/reinforce.lua [--episodes N] [--log-interval 1]
--        [--no-dropout] [--init F.pt] [--uniforms F.npy]   (reinforce.py's --save-init and
--        the uniforms it reads, to compare: tests/lua/test_example_rl.sh)
--        [--compile 1]   (each episode's optimizer step under torch.compile: the same
--                         numbers, then the compile statistics)
--        [--save F.pt]   (the trained weights at the end)
--
-- Without --uniforms the environment's resets and the actions come from tide's generator
-- (seeded with --seed): the episodes differ from PyTorch's draws, not their statistics.
local torch = torch or require("torch")
local nn, F, optim = torch.nn, torch.nn.functional, torch.optim
local Categorical = torch.distributions.Categorical
local dir = arg and arg[0] and arg[0]:match("(.*/)") or "./"
local CartPole = dofile(dir .. "cartpole.lua")

local args = {gamma = 0.99, seed = 543, log_interval = 10, episodes = 0, dropout = true, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--no-dropout" then args.dropout = false; i = i + 1
  elseif a == "--gamma" or a == "--seed" or a == "--log-interval" or a == "--episodes" or a == "--compile" then
    args[a:sub(3):gsub("-", "_")] = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
  elseif a == "--init" or a == "--uniforms" or a == "--save" then args[a:sub(3)] = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("reinforce.lua: unknown option " .. a) end
end

local uniform = args.uniforms and CartPole.uniforms_from(args.uniforms)
local env = CartPole.new({seed = args.seed, uniform = uniform})
torch.manual_seed(args.seed)

local Policy = nn.Module:extend("Policy")
function Policy:init()
  self.affine1 = nn.Linear(4, 128)
  self.dropout = nn.Dropout(args.dropout and 0.6 or 0.0)
  self.affine2 = nn.Linear(128, 2)
  self.saved_log_probs = {}
  self.rewards = {}
end
function Policy:forward(x)
  x = self.affine1(x)
  x = self.dropout(x)
  x = F.relu(x)
  local action_scores = self.affine2(x)
  return F.softmax(action_scores, {dim = 2})
end

local policy = Policy()
if args.init then policy:load_state_dict(torch.load(args.init)) end
local optimizer = optim.Adam(policy:parameters(), {lr = 1e-2})
local eps = torch.finfo(torch.float32).eps

local function select_action(state)
  state = state:float():unsqueeze(1)
  local probs = policy(state)
  local m = Categorical(probs)
  local action
  if uniform then
    action = torch.tensor({CartPole.inverse_cdf(m.probs:detach(), uniform())})
  else
    action = m:sample()
  end
  table.insert(policy.saved_log_probs, m:log_prob(action))
  return action:item()
end

-- The update at the end of an episode. Its loss comes from the log-probabilities saved while
-- acting, through a graph built before the update, so under --compile 1 the loss and its
-- backward stay eager (a compiled function cannot take or reach tensors that require grad
-- through graphs made outside it; action selection reads its sample with item() too). What
-- is compiled is the optimizer step, Adam on the gradients, as PyTorch's recipe for compiling
-- the optimizer does with opt.step(). The gradients are zeroed in place (set_to_none =
-- false), so that each episode's backward writes into the same gradient tensors, which the
-- compiled step's guards check (gradients set to nil would come back as new tensors each
-- episode, and every call would record anew); the printed numbers are the same either way.
local function optimizer_step() optimizer:step() end
if args.compile ~= 0 then optimizer_step = torch.compile(optimizer_step) end

local function finish_episode()
  local R = 0
  local policy_loss = {}
  local returns = {}
  for k = #policy.rewards, 1, -1 do
    R = policy.rewards[k] + args.gamma * R
    table.insert(returns, 1, R)
  end
  returns = torch.tensor(returns)
  returns = (returns - returns:mean()) / (returns:std() + eps)
  for k, log_prob in ipairs(policy.saved_log_probs) do
    table.insert(policy_loss, -log_prob * returns[k])
  end
  optimizer:zero_grad({set_to_none = false})
  policy_loss = torch.cat(policy_loss):sum()
  policy_loss:backward()
  optimizer_step()
  policy.rewards = {}
  policy.saved_log_probs = {}
  return policy_loss:item()
end

local function main()
  local running_reward = 10
  local i_episode = 0
  while true do
    i_episode = i_episode + 1
    local state = env:reset()
    local ep_reward, t = 0, 0
    for step = 1, 9999 do  -- Don't infinite loop while learning
      t = step
      local action = select_action(state)
      local reward, terminated, truncated
      state, reward, terminated, truncated = env:step(action)
      table.insert(policy.rewards, reward)
      ep_reward = ep_reward + reward
      if terminated or truncated then break end
    end

    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    local loss = finish_episode()
    if i_episode % args.log_interval == 0 then
      print(string.format("Episode %d\tLast reward: %.2f\tAverage reward: %.2f\tLoss: %.6f",
                          i_episode, ep_reward, running_reward, loss))
    end
    if running_reward > CartPole.reward_threshold then
      print(string.format("Solved! Running reward is now %s and the last episode runs to %d time steps!",
                          running_reward, t))
      break
    end
    if i_episode == args.episodes then break end
  end
end

main()
-- (--save F.pt: the trained weights, to compare two runs bit for bit.)
if args.save then torch.save(policy:state_dict(), args.save) end
if args.compile ~= 0 then
  local s = torch.compiler.stats(optimizer_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
