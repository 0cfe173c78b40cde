# "Warm-up: numpy" from PyTorch's tutorial "Learning PyTorch with Examples": a third order
# polynomial fitted to sin(x) on [-pi, pi] with hand-written gradients. The reference for
# polynomial_numpy.lua; `python3 polynomial_numpy.py init.npz` also saves the initial weights
# there, for the tide script to start from the same ones (tests/lua/test_examples_pytorch.sh).
import math
import sys

import numpy as np

np.random.seed(0)

# Create random input and output data
x = np.linspace(-math.pi, math.pi, 2000)
y = np.sin(x)

# Randomly initialize weights
a = np.random.randn()
b = np.random.randn()
c = np.random.randn()
d = np.random.randn()
if len(sys.argv) > 1:
    np.savez(sys.argv[1], a=a, b=b, c=c, d=d)

learning_rate = 1e-6
for t in range(2000):
    # Forward pass: compute predicted y
    # y = a + b x + c x^2 + d x^3
    y_pred = a + b * x + c * x ** 2 + d * x ** 3

    # Compute and print loss
    loss = np.square(y_pred - y).sum()
    if t % 100 == 99:
        print(t, loss)

    # Backprop to compute gradients of a, b, c, d with respect to loss
    grad_y_pred = 2.0 * (y_pred - y)
    grad_a = grad_y_pred.sum()
    grad_b = (grad_y_pred * x).sum()
    grad_c = (grad_y_pred * x ** 2).sum()
    grad_d = (grad_y_pred * x ** 3).sum()

    # Update weights
    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f'Result: y = {a} + {b} x + {c} x^2 + {d} x^3')
