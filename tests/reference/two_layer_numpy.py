#!/usr/bin/env python3
"""The classic two-layer network trained with NumPy by explicit backprop: the reference
for scripts/two_layer_numpy.lua and scripts/two_layer_torch.lua.

  two_layer_numpy.py --data data.npz --losses losses.txt [--dtype float64|float32]
                     [--steps 500] [--seed 0]

Generates x, y, w1, w2 with NumPy's RNG (float64) and saves them to --data (np.savez) unless
--reuse is given (then it loads them from --data), trains in --dtype, and writes one line
"t loss" per step to --losses (losses printed with 17 significant digits).
"""
import argparse

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--losses", required=True)
    ap.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--reuse", action="store_true", help="load --data instead of writing it")
    a = ap.parse_args()

    # N is batch size; D_in is input dimension;
    # H is hidden dimension; D_out is output dimension.
    N, D_in, H, D_out = 64, 1000, 100, 10

    if a.reuse:
        d = np.load(a.data)
        x, y, w1, w2 = d["x"], d["y"], d["w1"], d["w2"]
    else:
        np.random.seed(a.seed)
        # Create random input and output data
        x = np.random.randn(N, D_in)
        y = np.random.randn(N, D_out)
        # Randomly initialize weights
        w1 = np.random.randn(D_in, H)
        w2 = np.random.randn(H, D_out)
        np.savez(a.data, x=x, y=y, w1=w1, w2=w2)

    dt = np.dtype(a.dtype)
    x, y, w1, w2 = (v.astype(dt) for v in (x, y, w1, w2))

    learning_rate = 1e-6
    losses = []
    for t in range(a.steps):
        # Forward pass: compute predicted y
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)

        # Compute and print loss
        loss = np.square(y_pred - y).sum()
        losses.append(float(loss))

        # Backprop to compute gradients of w1 and w2 with respect to loss
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h_relu = grad_y_pred.dot(w2.T)
        grad_h = grad_h_relu.copy()
        grad_h[h < 0] = 0
        grad_w1 = x.T.dot(grad_h)

        # Update weights
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2

    with open(a.losses, "w") as f:
        for t, loss in enumerate(losses):
            f.write("%d %.17g\n" % (t, loss))


if __name__ == "__main__":
    main()
