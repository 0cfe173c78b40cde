"""PyTorch's official time-sequence prediction example (pytorch/examples,
time_sequence_prediction: generate_sine_wave.py and train.py), scaled down so that it runs in
seconds: N sine waves of length L (the official 100 of 1000), `--steps` LBFGS steps (the
official 15), `--future` predicted steps (the official 1000). The waves are generated here as
generate_sine_wave.py does (NumPy seed 2), instead of through traindata.pt; the plots are left
out. train.lua beside it is the same program in tide.

    python3 train.py [--steps 2] [--N 13] [--L 100] [--future 100] [--save-init F.pt]

--save-init writes the initial weights (state_dict) for train.lua --init, which then prints
the same losses.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


def sine_waves(N, L, T=20):
    np.random.seed(2)
    x = np.empty((N, L), 'int64')
    x[:] = np.array(range(L)) + np.random.randint(-4 * T, 4 * T, N).reshape(N, 1)
    return np.sin(x / 1.0 / T).astype('float64')


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, 51)
        self.lstm2 = nn.LSTMCell(51, 51)
        self.linear = nn.Linear(51, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t = torch.zeros(input.size(0), 51, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), 51, dtype=torch.double)

        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # if we should predict the future
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        outputs = torch.cat(outputs, dim=1)
        return outputs


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--steps', type=int, default=2, help='steps to run')
    parser.add_argument('--N', type=int, default=13, help='sine waves (the first 3 test)')
    parser.add_argument('--L', type=int, default=100, help='length of each wave')
    parser.add_argument('--future', type=int, default=100, help='steps predicted beyond the test input')
    parser.add_argument('--save-init', default=None, help='write the initial weights here')
    opt = parser.parse_args()
    # set random seed to 0
    np.random.seed(0)
    torch.manual_seed(0)
    # load data and make training set
    data = sine_waves(opt.N, opt.L)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    # build the model
    seq = Sequence()
    seq.double()
    if opt.save_init:
        torch.save(seq.state_dict(), opt.save_init)
    criterion = nn.MSELoss()
    # use LBFGS as optimizer since we can load the whole data to train
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8)
    # begin to train
    for i in range(opt.steps):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            out = seq(input)
            loss = criterion(out, target)
            print('loss:', loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        # begin to predict, no need to track gradient here
        with torch.no_grad():
            future = opt.future
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            print('test loss:', loss.item())
            y = pred.detach().numpy()
