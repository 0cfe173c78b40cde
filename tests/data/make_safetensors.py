#!/usr/bin/env python3
"""Writes the safetensors files that tests/lua/test_checkpoint.lua reads.

Run with /usr/bin/python3 (NumPy and PyTorch installed): python3 tests/data/make_safetensors.py
The `safetensors` package is not needed: the format is written by hand here (struct + json),
the way the package lays it out, so that tide is tested against files it did not write.
The outputs are committed; the script says exactly how they were made.

linear.safetensors   torch.nn.Linear(3, 2) after torch.manual_seed(0): its state_dict, with
                     __metadata__ {"format": "pt"}, as safetensors.torch.save_file writes it.
                     The script prints the values and the layer's output for x = [[1, 2, 3]],
                     which the Lua test repeats.
dtypes.safetensors   one (2, 3) tensor per dtype, named "dé_<dtype>", value k at flat index k
                     (minus 2 for signed and float dtypes, times 0.5 for floats; k % 2 == 1 for
                     bool), plus "scalar" (F64, shape [], 2.5) and "empty" (F32, shape [0, 3]).
                     No __metadata__; the data lie in the reverse order of the header's
                     entries, and names are written with \\u escapes by json.dumps.
"""
import json
import os
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))

DTYPES = {"BOOL": np.bool_, "U8": np.uint8, "I8": np.int8, "I16": np.int16, "I32": np.int32,
          "I64": np.int64, "F16": np.float16, "F32": np.float32, "F64": np.float64}


def write(name, tensors, metadata=None, reverse_data=False):
    """tensors: list of (name, dtype name, numpy array or raw bytes with a shape)."""
    header, chunks, offset = {}, [], 0
    order = list(reversed(tensors)) if reverse_data else tensors
    for tname, dtype, shape, raw in order:
        header[tname] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    header = {t[0]: header[t[0]] for t in tensors}  # header entries in the given order
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for c in chunks:
            f.write(c)


def entry(tname, dtype, array):
    return (tname, dtype, array.shape, np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes())


# A PyTorch state dict.
torch.manual_seed(0)
lin = torch.nn.Linear(3, 2)
sd = lin.state_dict()
write("linear.safetensors", [entry(k, "F32", v.numpy()) for k, v in sd.items()], metadata={"format": "pt"})
print("weight", [[float(v) for v in row] for row in sd["weight"].tolist()])
print("bias", [float(v) for v in sd["bias"].tolist()])
print("output for [[1, 2, 3]]", lin(torch.tensor([[1.0, 2.0, 3.0]])).tolist())

# Every dtype.
k = np.arange(6).reshape(2, 3)
tensors = []
for dt, npt in DTYPES.items():
    if dt == "BOOL":
        a = k % 2 == 1
    elif dt == "U8":
        a = k.astype(npt)
    elif dt.startswith("F"):
        a = ((k - 2) * 0.5).astype(npt)
    else:
        a = (k - 2).astype(npt)
    tensors.append(entry("d\u00e9_" + dt, dt, a))
bf16 = (((k - 2) * 0.5).astype("<f4").view("<u4") >> 16).astype("<u2")  # exact: few mantissa bits
tensors.append(("d\u00e9_BF16", "BF16", (2, 3), bf16.tobytes()))
tensors.append(entry("scalar", "F64", np.array(2.5)))
tensors.append(entry("empty", "F32", np.zeros((0, 3), dtype=np.float32)))
write("dtypes.safetensors", tensors, reverse_data=True)
