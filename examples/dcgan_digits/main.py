"""PyTorch's official DCGAN example (pytorch/examples, dcgan/main.py: a ConvTranspose2d
generator against a Conv2d discriminator, BCELoss, Adam with betas (0.5, 0.999), the same
training step: D on real then fake, then G), adapted to the 8x8 handwritten digits of
data/digits.csv.gz scaled to [-1, 1]: nz = ngf = ndf = 16 and three layers each
(1x1 -> 2x2 -> 4x4 -> 8x8 and back), with BatchNorm2d where the original has it (after
every generator layer but the last, after every discriminator layer but the first and the
last), in training mode throughout (batch statistics).

For the comparison with main.lua (tests/lua/test_example_dcgan.sh) the noise of every epoch
is drawn up front from the seeded generator; --save-init writes the initial weights of both
networks (torch.save, PyTorch's .pt format, which tide reads) and --save-noise the shuffled
order and the noise of every epoch.
    /usr/bin/python3 main.py [--epochs 2] [--save-init F.pt] [--save-noise F.npz]
"""
import argparse
import gzip
import os

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

HERE = os.path.dirname(os.path.abspath(__file__))
nz, ngf, ndf = 16, 16, 16


def weights_init(m):
    """The example's initialisation: N(0, 0.02) convolution weights, N(1, 0.02) BatchNorm
    weights and zero BatchNorm biases."""
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        torch.nn.init.normal_(m.weight, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        torch.nn.init.normal_(m.weight, 1.0, 0.02)
        torch.nn.init.zeros_(m.bias)


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 2, 1, 0, bias=False),  # 2x2
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),  # 4x4
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),  # 8x8
            nn.Tanh())

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False),  # 4x4
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 2x2
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 2, 1, 0, bias=False),  # 1x1
            nn.Sigmoid())

    def forward(self, x):
        return self.main(x).view(-1, 1).squeeze(1)


def load_digits():
    with gzip.open(os.path.join(HERE, "..", "..", "data", "digits.csv.gz"), "rt") as f:
        data = np.loadtxt(f, delimiter=",", dtype=np.float32)
    return TensorDataset(torch.from_numpy(data[:, :64] / 16 * 2 - 1).reshape(-1, 1, 8, 8))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--lr", type=float, default=0.0002)
    ap.add_argument("--beta1", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--save-init")
    ap.add_argument("--save-noise")
    args = ap.parse_args()
    torch.manual_seed(args.seed)
    dataset = load_digits()
    netG, netD = Generator(), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    if args.save_init:
        torch.save({"netG": netG.state_dict(), "netD": netD.state_dict()}, args.save_init)
    n = len(dataset)
    orders = [torch.randperm(n) for _ in range(args.epochs)]
    noises = [torch.randn(n, nz, 1, 1) for _ in range(args.epochs)]
    if args.save_noise:
        saved = {"order%d" % (e + 1): o.numpy() for e, o in enumerate(orders)}
        saved.update({"noise%d" % (e + 1): z.numpy() for e, z in enumerate(noises)})
        np.savez(args.save_noise, **saved)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(args.beta1, 0.999))
    real_label, fake_label = 1.0, 0.0
    for epoch in range(args.epochs):
        loader = DataLoader(dataset, batch_size=64, sampler=orders[epoch].tolist())
        for i, (real,) in enumerate(loader):
            # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
            netD.zero_grad()
            batch_size = real.size(0)
            label = torch.full((batch_size,), real_label)
            output = netD(real)
            errD_real = criterion(output, label)
            errD_real.backward()
            D_x = output.mean().item()
            noise = noises[epoch][i * 64:i * 64 + batch_size]
            fake = netG(noise)
            label.fill_(fake_label)
            output = netD(fake.detach())
            errD_fake = criterion(output, label)
            errD_fake.backward()
            D_G_z1 = output.mean().item()
            errD = errD_real + errD_fake
            optimizerD.step()
            # (2) Update G: maximize log(D(G(z)))
            netG.zero_grad()
            label.fill_(real_label)
            output = netD(fake)
            errG = criterion(output, label)
            errG.backward()
            D_G_z2 = output.mean().item()
            optimizerG.step()
            print("[%d/%d][%d/%d] Loss_D %.8f Loss_G %.8f D(x) %.8f D(G(z)) %.8f / %.8f"
                  % (epoch, args.epochs, i, len(loader), errD.item(), errG.item(), D_x, D_G_z1, D_G_z2))
    # The running statistics of the discriminator's BatchNorm2d after all its batches
    bn = netD.main[3]
    print("netD.main.3 num_batches_tracked %d" % bn.num_batches_tracked.item())
    print("netD.main.3 running_mean " + " ".join("%.8e" % v for v in bn.running_mean.tolist()))
    print("netD.main.3 running_var " + " ".join("%.8e" % v for v in bn.running_var.tolist()))


if __name__ == "__main__":
    main()
