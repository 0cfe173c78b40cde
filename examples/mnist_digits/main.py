"""PyTorch's official MNIST example (pytorch/examples, mnist/main.py: a CNN trained with
Adadelta and StepLR through a DataLoader), adapted to the 8x8 handwritten digits of
data/digits.csv.gz: the same layers (conv 3x3 32 -> conv 3x3 64 -> max-pool 2 -> dropout ->
fc 128 -> dropout -> fc 10 -> log_softmax), optimizer, schedule and loop; fc1 takes 64*2*2
inputs instead of 9216. The first 1500 digits train, the other 297 test.

For the comparison with main.lua (tests/lua/test_example_mnist.sh): --save-init writes the
initial weights (torch.save, PyTorch's .pt format, which tide reads) and --save-order the
shuffled order of every epoch; --no-dropout turns dropout off, since the two frameworks draw
different masks.
    /usr/bin/python3 main.py [--epochs 3] [--no-dropout] [--save-init F.pt] [--save-order F.npz]
"""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))


class Net(nn.Module):
    def __init__(self, dropout):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25 if dropout else 0.0)
        self.dropout2 = nn.Dropout(0.5 if dropout else 0.0)
        self.fc1 = nn.Linear(64 * 2 * 2, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def load_digits():
    with gzip.open(os.path.join(HERE, "..", "..", "data", "digits.csv.gz"), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = torch.from_numpy(data[:, :64] / 16).reshape(-1, 1, 8, 8)
    y = torch.from_numpy(data[:, 64].astype(np.int64))
    return TensorDataset(x[:1500], y[:1500]), TensorDataset(x[1500:], y[1500:])


def train(model, loader, optimizer, epoch):
    model.train()
    for batch, (data, target) in enumerate(loader):
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch % 5 == 0:
            print("epoch %d batch %d loss %.8f" % (epoch, batch, loss.item()))


def test(model, loader, epoch):
    model.eval()
    loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            out = model(data)
            loss += F.nll_loss(out, target, reduction="sum").item()
            correct += (out.argmax(dim=1) == target).sum().item()
    n = len(loader.dataset)
    print("test epoch %d loss %.8f accuracy %.6f" % (epoch, loss / n, correct / n))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1.0)
    ap.add_argument("--gamma", type=float, default=0.7)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-dropout", action="store_true")
    ap.add_argument("--save-init")
    ap.add_argument("--save-order")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    train_set, test_set = load_digits()
    model = Net(not args.no_dropout)
    if args.save_init:
        torch.save(model.state_dict(), args.save_init)
    generator = torch.Generator().manual_seed(args.seed)
    orders = [torch.randperm(len(train_set), generator=generator) for _ in range(args.epochs)]
    if args.save_order:
        np.savez(args.save_order, **{"epoch%d" % (e + 1): o.numpy() for e, o in enumerate(orders)})
    test_loader = DataLoader(test_set, batch_size=1000)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    for epoch in range(1, args.epochs + 1):
        loader = DataLoader(train_set, batch_size=64, sampler=orders[epoch - 1].tolist())
        train(model, loader, optimizer, epoch)
        test(model, test_loader, epoch)
        scheduler.step()


if __name__ == "__main__":
    main()
