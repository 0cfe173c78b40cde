"""PyTorch's official VAE example (pytorch/examples, vae/main.py: a fully connected
variational auto-encoder trained with Adam on the binary cross-entropy plus the KL
divergence), adapted to the 8x8 handwritten digits of data/digits.csv.gz: the same layers
(fc 400 -> fc 20 (mu) and fc 20 (logvar) -> reparameterisation -> fc 400 -> fc 64 ->
sigmoid), loss, optimizer and loop, with 64 inputs instead of 784 and no image files. The
first 1500 digits train, the other 297 test.

For the comparison with main.lua (tests/lua/test_example_vae.sh): --save-init writes the
initial weights (torch.save, PyTorch's .pt format, which tide reads), --save-order the
shuffled order of every epoch and --save-noise every reparameterisation noise drawn, in
order (tide's random numbers differ from PyTorch's).
    /usr/bin/python3 main.py [--epochs 3] [--save-init F.pt] [--save-order F.npz] [--save-noise F.npz]
"""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))
NOISE = []  # every eps drawn, for --save-noise


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 64)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        NOISE.append(eps.numpy().copy())
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 64))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
    # see Appendix B from VAE paper: Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def load_digits():
    with gzip.open(os.path.join(HERE, "..", "..", "data", "digits.csv.gz"), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    x = torch.from_numpy(data[:, :64] / 16)
    y = torch.from_numpy(data[:, 64].astype(np.int64))
    return TensorDataset(x[:1500], y[:1500]), TensorDataset(x[1500:], y[1500:])


def train(model, loader, optimizer, epoch, log_interval):
    model.train()
    train_loss = 0
    for batch_idx, (data, _) in enumerate(loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if batch_idx % log_interval == 0:
            print("Train Epoch: %d [%d/%d] Loss: %.8f" % (epoch, batch_idx * len(data), len(loader.dataset),
                                                          loss.item() / len(data)))
    print("====> Epoch: %d Average loss: %.8f" % (epoch, train_loss / len(loader.dataset)))


def test(model, loader, epoch):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for data, _ in loader:
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
    test_loss /= len(loader.dataset)
    print("====> Test set loss: %.8f" % test_loss)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log-interval", type=int, default=4)
    ap.add_argument("--save-init")
    ap.add_argument("--save-order")
    ap.add_argument("--save-noise")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    train_set, test_set = load_digits()
    model = VAE()
    if args.save_init:
        torch.save(model.state_dict(), args.save_init)
    generator = torch.Generator().manual_seed(args.seed)
    orders = [torch.randperm(len(train_set), generator=generator) for _ in range(args.epochs)]
    if args.save_order:
        np.savez(args.save_order, **{"epoch%d" % (e + 1): o.numpy() for e, o in enumerate(orders)})
    test_loader = DataLoader(test_set, batch_size=args.batch_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(1, args.epochs + 1):
        loader = DataLoader(train_set, batch_size=args.batch_size, sampler=orders[epoch - 1].tolist())
        train(model, loader, optimizer, epoch, args.log_interval)
        test(model, test_loader, epoch)
    if args.save_noise:
        np.savez(args.save_noise, **{"n%d" % (i + 1): n for i, n in enumerate(NOISE)})


if __name__ == "__main__":
    main()
