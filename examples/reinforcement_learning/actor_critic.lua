-- PyTorch's official actor-critic example (pytorch/examples,
-- reinforcement_learning/actor_critic.py), ported line by line from actor_critic.py beside
-- it: one network with an actor head (action probabilities) and a critic head (the state's
-- value) on the cart-pole of cartpole.lua; actions sampled from a Categorical; the loss of an
-- episode is the policy loss (-log_prob * advantage) plus the critic's smooth L1 loss
-- against the discounted, normalised returns, minimised with Adam.
--
--   tide examples/reinforcement_learning/actor_critic.lua [--episodes N] [--log-interval 1]
--        [--init F.pt] [--uniforms F.npy]   (actor_critic.py's --save-init and the uniforms
--        it reads, to compare: tests/lua/test_example_rl.sh)
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

local args = {gamma = 0.99, seed = 543, log_interval = 10, episodes = 0, compile = 0}
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--gamma" or a == "--seed" or a == "--log-interval" or a == "--episodes" or a == "--compile" then
    args[a:sub(3):gsub("-", "_")] = assert(tonumber(arg[i + 1]), a .. " takes a number"); i = i + 2
  elseif a == "--init" or a == "--uniforms" or a == "--save" then args[a:sub(3)] = assert(arg[i + 1], a .. " takes a file"); i = i + 2
  else error("actor_critic.lua: unknown option " .. a) end
end

local uniform = args.uniforms and CartPole.uniforms_from(args.uniforms)
local env = CartPole.new({seed = args.seed, uniform = uniform})
torch.manual_seed(args.seed)

-- implements both actor and critic in one model
local Policy = nn.Module:extend("Policy")
function Policy:init()
  self.affine1 = nn.Linear(4, 128)
  -- actor's layer
  self.action_head = nn.Linear(128, 2)
  -- critic's layer
  self.value_head = nn.Linear(128, 1)
  -- action & reward buffer
  self.saved_actions = {}
  self.rewards = {}
end

-- forward of both actor and critic
function Policy:forward(x)
  x = F.relu(self.affine1(x))
  -- actor: choses action to take from state s_t by returning probability of each action
  local action_prob = F.softmax(self.action_head(x), {dim = -1})
  -- critic: evaluates being in the state s_t
  local state_values = self.value_head(x)
  -- the probability of each action and the value from state s_t
  return action_prob, state_values
end

local model = Policy()
if args.init then model:load_state_dict(torch.load(args.init)) end
local optimizer = optim.Adam(model:parameters(), {lr = 3e-2})
local eps = torch.finfo(torch.float32).eps

local function select_action(state)
  state = state:float()
  local probs, state_value = model(state)
  -- create a categorical distribution over the list of probabilities of actions
  local m = Categorical(probs)
  -- and sample an action using the distribution
  local action
  if uniform then
    action = torch.tensor(CartPole.inverse_cdf(m.probs:detach(), uniform()))
  else
    action = m:sample()
  end
  -- save to action buffer
  table.insert(model.saved_actions, {log_prob = m:log_prob(action), value = state_value})
  -- the action to take (1: left, 2: right)
  return action:item()
end

-- The update at the end of an episode. Its loss comes from the log-probabilities saved while
-- acting, through a graph built before the update, so under --compile 1 the loss and its
-- backward stay eager (a compiled function cannot take or reach tensors that require grad
-- through graphs made outside it; the advantages and the action selection read values with
-- item() too). What is compiled is the optimizer step, Adam on the gradients, as PyTorch's
-- recipe for compiling the optimizer does with opt.step(). The gradients are zeroed in place
-- (set_to_none = false), so that each episode's backward writes into the same gradient
-- tensors, which the compiled step's guards check (gradients set to nil would come back as
-- new tensors each episode, and every call would record anew); the printed numbers are the
-- same either way.
local function optimizer_step() optimizer:step() end
if args.compile ~= 0 then optimizer_step = torch.compile(optimizer_step) end

-- Training code. Calculates actor and critic loss and performs backprop.
local function finish_episode()
  local R = 0
  local policy_losses = {}  -- actor (policy) loss
  local value_losses = {}  -- critic (value) loss
  local returns = {}  -- the true values
  -- calculate the true value using rewards returned from the environment
  for k = #model.rewards, 1, -1 do
    -- calculate the discounted value
    R = model.rewards[k] + args.gamma * R
    table.insert(returns, 1, R)
  end
  returns = torch.tensor(returns)
  returns = (returns - returns:mean()) / (returns:std() + eps)

  for k, saved in ipairs(model.saved_actions) do
    local Rk = returns[k]
    local advantage = Rk - saved.value:item()
    -- calculate actor (policy) loss
    table.insert(policy_losses, -saved.log_prob * advantage)
    -- calculate critic (value) loss using L1 smooth loss
    table.insert(value_losses, F.smooth_l1_loss(saved.value, torch.tensor({Rk:item()})))
  end

  -- reset gradients
  optimizer:zero_grad({set_to_none = false})
  -- sum up all the values of policy_losses and value_losses
  local loss = torch.stack(policy_losses):sum() + torch.stack(value_losses):sum()
  -- perform backprop
  loss:backward()
  optimizer_step()
  -- reset rewards and action buffer
  model.rewards = {}
  model.saved_actions = {}
  return loss:item()
end

local function main()
  local running_reward = 10
  -- run episodes until solved (or --episodes of them)
  local i_episode = 0
  while true do
    i_episode = i_episode + 1
    -- reset environment and episode reward
    local state = env:reset()
    local ep_reward, t = 0, 0
    -- for each episode, only run 9999 steps so that we don't infinite loop while learning
    for step = 1, 9999 do
      t = step
      -- select action from policy
      local action = select_action(state)
      -- take the action
      local reward, terminated, truncated
      state, reward, terminated, truncated = env:step(action)
      table.insert(model.rewards, reward)
      ep_reward = ep_reward + reward
      if terminated or truncated then break end
    end

    -- update cumulative reward
    running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
    -- perform backprop
    local loss = finish_episode()
    -- log results
    if i_episode % args.log_interval == 0 then
      print(string.format("Episode %d\tLast reward: %.2f\tAverage reward: %.2f\tLoss: %.6f",
                          i_episode, ep_reward, running_reward, loss))
    end
    -- check if we have "solved" the cart pole problem
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
if args.save then torch.save(model:state_dict(), args.save) end
if args.compile ~= 0 then
  local s = torch.compiler.stats(optimizer_step)
  print(string.format("compiled: %d recordings, %d replays%s", s.recordings, s.replays,
                      s.eager and ", then eager: " .. s.reason or ""))
end
