"""Writes the PyTorch checkpoints (.pt) that tests/lua/test_checkpoint_pytorch.lua reads and
the file fuzzer starts from. Run with /usr/bin/python3 (PyTorch 1.13): python3 make_pt.py"""
import collections
import datetime
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).double()
torch.save(m.state_dict(), os.path.join(HERE, "pt_state_dict.pt"))
t = torch.arange(12.).reshape(3, 4)
torch.save({"epoch": 5, "lr": 0.5, "name": "run1", "flag": True, "nothing": None, "list": [1, 2.5, "x"],
            "pair": (t, t.t()), "half": t.half(), "bf16": t.bfloat16(), "i64": torch.arange(5),
            "bool": torch.tensor([True, False]), "view": t[1:, ::2], "param": torch.nn.Parameter(torch.ones(2)),
            "big": 2 ** 40, "neg": -3, "nested": collections.OrderedDict(a={"b": torch.zeros(1, dtype=torch.int8)}),
            "empty": torch.zeros(0, 3)}, os.path.join(HERE, "pt_mixed.pt"))
torch.save(t, os.path.join(HERE, "pt_tensor.pt"))
torch.save({"when": datetime.date(2020, 1, 1)}, os.path.join(HERE, "pt_refused.pt"))
