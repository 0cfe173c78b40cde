"""The cart-pole of cartpole.lua in Python (gym's CartPole-v1 physics: Euler steps of 0.02 s,
force +-10 N, ends past 12 degrees or +-2.4, or after 500 steps), without gym: the PyTorch side
of the comparison of reinforce.lua and actor_critic.lua with reinforce.py and actor_critic.py.
Actions are gym's 0 (push left) and 1 (push right)."""
import math

import numpy as np

GRAVITY, MASSCART, MASSPOLE = 9.8, 1.0, 0.1
TOTAL_MASS = MASSPOLE + MASSCART
LENGTH = 0.5
POLEMASS_LENGTH = MASSPOLE * LENGTH
FORCE_MAG, TAU = 10.0, 0.02
THETA_THRESHOLD_RADIANS = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4


class CartPole:
    reward_threshold = 475.0
    max_episode_steps = 500

    def __init__(self, seed=0, uniform=None):
        if uniform is None:
            rng = np.random.default_rng(seed)
            uniform = lambda: float(rng.random())
        self.uniform = uniform
        self.state = None
        self.steps = 0

    def reset(self):
        self.state = [-0.05 + 0.1 * self.uniform() for _ in range(4)]
        self.steps = 0
        return np.array(self.state, dtype=np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self.state
        force = FORCE_MAG if action == 1 else -FORCE_MAG
        costheta, sintheta = math.cos(theta), math.sin(theta)
        temp = (force + POLEMASS_LENGTH * theta_dot ** 2 * sintheta) / TOTAL_MASS
        thetaacc = (GRAVITY * sintheta - costheta * temp) / (
            LENGTH * (4.0 / 3.0 - MASSPOLE * costheta ** 2 / TOTAL_MASS))
        xacc = temp - POLEMASS_LENGTH * thetaacc * costheta / TOTAL_MASS
        x = x + TAU * x_dot
        x_dot = x_dot + TAU * xacc
        theta = theta + TAU * theta_dot
        theta_dot = theta_dot + TAU * thetaacc
        self.state = [x, x_dot, theta, theta_dot]
        self.steps += 1
        terminated = bool(x < -X_THRESHOLD or x > X_THRESHOLD or theta < -THETA_THRESHOLD_RADIANS
                          or theta > THETA_THRESHOLD_RADIANS)
        truncated = self.steps >= self.max_episode_steps
        return np.array(self.state, dtype=np.float32), 1.0, terminated, truncated, {}


def uniforms_from(path):
    """Uniform numbers read in order from a .npy file (the same numbers cartpole.lua reads)."""
    values = iter(np.load(path).tolist())
    return lambda: next(values)


def inverse_cdf(probs, u):
    """The action (0-based) that inverse-CDF sampling picks from probs for a uniform u."""
    c = 0.0
    p = probs.reshape(-1).tolist()
    for k, pk in enumerate(p):
        c += pk
        if u < c:
            return k
    return len(p) - 1
