# "PyTorch: Control Flow + Weight Sharing" from PyTorch's tutorial "Learning PyTorch with
# Examples": a polynomial of order 3 to 5, chosen at random on each forward pass, reusing
# the parameter e for the orders 4 and 5. The reference for dynamic_net.lua;
# `python3 dynamic_net.py init.npz [steps]` also saves the initial parameters and the random
# choice of every step there, and runs `steps` steps instead of 30000.
import math
import random
import sys

import numpy as np
import torch

torch.manual_seed(0)
random.seed(0)
choices = []  # the random order of each forward pass, saved for the tide script


class DynamicNet(torch.nn.Module):
    def __init__(self):
        """
        In the constructor we instantiate five parameters and assign them as members.
        """
        super().__init__()
        self.a = torch.nn.Parameter(torch.randn(()))
        self.b = torch.nn.Parameter(torch.randn(()))
        self.c = torch.nn.Parameter(torch.randn(()))
        self.d = torch.nn.Parameter(torch.randn(()))
        self.e = torch.nn.Parameter(torch.randn(()))

    def forward(self, x):
        """
        For the forward pass of the model, we randomly choose either 4, 5
        and reuse the e parameter to compute the contribution of these orders.

        Since each forward pass builds a dynamic computation graph, we can use normal
        Python control-flow operators like loops or conditional statements when
        defining the forward pass of the model.

        Here we also see that it is perfectly safe to reuse the same parameter many
        times when defining a computational graph.
        """
        y = self.a + self.b * x + self.c * x ** 2 + self.d * x ** 3
        choices.append(random.randint(4, 6))
        for exp in range(4, choices[-1]):
            y = y + self.e * x ** exp
        return y

    def string(self):
        """
        Just like any class in Python, you can also define custom method on PyTorch modules
        """
        return f'y = {self.a.item()} + {self.b.item()} x + {self.c.item()} x^2 + {self.d.item()} x^3 + {self.e.item()} x^4 ? + {self.e.item()} x^5 ?'


# Create Tensors to hold input and outputs.
x = torch.linspace(-math.pi, math.pi, 2000)
y = torch.sin(x)

# Construct our model by instantiating the class defined above
model = DynamicNet()
initial = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 30000

# Construct our loss function and an Optimizer. Training this strange model with
# vanilla stochastic gradient descent is tough, so we use momentum
criterion = torch.nn.MSELoss(reduction='sum')
optimizer = torch.optim.SGD(model.parameters(), lr=1e-8, momentum=0.9)
for t in range(steps):
    # Forward pass: Compute predicted y by passing x to the model
    y_pred = model(x)

    # Compute and print loss
    loss = criterion(y_pred, y)
    if t % 2000 == 1999:
        print(t, loss.item())

    # Zero gradients, perform a backward pass, and update the weights.
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f'Result: {model.string()}')
if len(sys.argv) > 1:
    np.savez(sys.argv[1], choices=np.array(choices, dtype=np.int64), **initial)
