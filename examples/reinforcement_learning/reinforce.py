"""PyTorch's official REINFORCE example (pytorch/examples, reinforcement_learning/reinforce.py)
on the cart-pole of cartpole.py instead of gym's CartPole-v1 (the same physics), with options
for the comparison with reinforce.lua (tests/lua/test_example_rl.sh):
    /usr/bin/python3 reinforce.py [--episodes N] [--log-interval 1] [--no-dropout]
                                  [--save-init F.pt] [--uniforms F.npy]
--save-init writes the initial weights; --uniforms takes the reset states and the uniform
numbers that pick the actions (inverse CDF of the Categorical's probs) from a file, so that
both sides draw the same episodes. The log line also prints the episode's loss. An episode
also ends at CartPole-v1's 500-step limit."""
import argparse
from collections import deque
from itertools import count

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.distributions import Categorical

from cartpole import CartPole, inverse_cdf, uniforms_from

parser = argparse.ArgumentParser(description='PyTorch REINFORCE example')
parser.add_argument('--gamma', type=float, default=0.99, metavar='G',
                    help='discount factor (default: 0.99)')
parser.add_argument('--seed', type=int, default=543, metavar='N',
                    help='random seed (default: 543)')
parser.add_argument('--log-interval', type=int, default=10, metavar='N',
                    help='interval between training status logs (default: 10)')
parser.add_argument('--episodes', type=int, default=0, help='stop after this many episodes (0: when solved)')
parser.add_argument('--no-dropout', action='store_true', help='dropout probability 0')
parser.add_argument('--save-init', help='write the initial weights here')
parser.add_argument('--uniforms', help='.npy of uniform numbers for resets and actions')
args = parser.parse_args()

uniform = uniforms_from(args.uniforms) if args.uniforms else None
env = CartPole(seed=args.seed, uniform=uniform)
torch.manual_seed(args.seed)


class Policy(nn.Module):
    def __init__(self):
        super(Policy, self).__init__()
        self.affine1 = nn.Linear(4, 128)
        self.dropout = nn.Dropout(p=0.0 if args.no_dropout else 0.6)
        self.affine2 = nn.Linear(128, 2)

        self.saved_log_probs = []
        self.rewards = []

    def forward(self, x):
        x = self.affine1(x)
        x = self.dropout(x)
        x = F.relu(x)
        action_scores = self.affine2(x)
        return F.softmax(action_scores, dim=1)


policy = Policy()
if args.save_init:
    torch.save(policy.state_dict(), args.save_init)
optimizer = optim.Adam(policy.parameters(), lr=1e-2)
eps = np.finfo(np.float32).eps.item()


def select_action(state):
    state = torch.from_numpy(state).float().unsqueeze(0)
    probs = policy(state)
    m = Categorical(probs)
    if uniform:
        action = torch.tensor([inverse_cdf(m.probs.detach(), uniform())])
    else:
        action = m.sample()
    policy.saved_log_probs.append(m.log_prob(action))
    return action.item()


def finish_episode():
    R = 0
    policy_loss = []
    returns = deque()
    for r in policy.rewards[::-1]:
        R = r + args.gamma * R
        returns.appendleft(R)
    returns = torch.tensor(returns)
    returns = (returns - returns.mean()) / (returns.std() + eps)
    for log_prob, R in zip(policy.saved_log_probs, returns):
        policy_loss.append(-log_prob * R)
    optimizer.zero_grad()
    policy_loss = torch.cat(policy_loss).sum()
    policy_loss.backward()
    optimizer.step()
    del policy.rewards[:]
    del policy.saved_log_probs[:]
    return policy_loss.item()


def main():
    running_reward = 10
    for i_episode in count(1):
        state, _ = env.reset()
        ep_reward = 0
        for t in range(1, 10000):  # Don't infinite loop while learning
            action = select_action(state)
            state, reward, terminated, truncated, _ = env.step(action)
            policy.rewards.append(reward)
            ep_reward += reward
            if terminated or truncated:
                break

        running_reward = 0.05 * ep_reward + (1 - 0.05) * running_reward
        loss = finish_episode()
        if i_episode % args.log_interval == 0:
            print('Episode {}\tLast reward: {:.2f}\tAverage reward: {:.2f}\tLoss: {:.6f}'.format(
                  i_episode, ep_reward, running_reward, loss))
        if running_reward > env.reward_threshold:
            print("Solved! Running reward is now {} and "
                  "the last episode runs to {} time steps!".format(running_reward, t))
            break
        if i_episode == args.episodes:
            break


if __name__ == '__main__':
    main()
