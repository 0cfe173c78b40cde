#!/usr/bin/env python3
"""Writes the small NumPy-made files that tests/lua/test_io.lua reads.

Run with /usr/bin/python3 (NumPy installed): python3 tests/data/make_fixtures.py
The outputs are committed, so the tests need no NumPy to read them; the script is kept to
say exactly how each file was made and to regenerate them. Every array's values follow
np.arange, so the Lua test can recompute what to expect.
"""
import gzip
import io
import os
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def base(dtype):
    a = np.arange(6).reshape(2, 3)
    if dtype == "bool":
        return a % 2 == 1
    if dtype in ("int8", "int16", "int32", "int64", "float16", "float32", "float64"):
        a = a - 2  # some negatives
    if dtype.startswith("float"):
        return (a * 0.5).astype(dtype)
    return a.astype(dtype)


# One .npy per dtype tide reads: shape (2, 3), values base(dtype).
for dt in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]:
    np.save(path("dt_%s.npy" % dt), base(dt))

# uint16 / uint32 (read as themselves since tide has those dtypes).
np.save(path("u16.npy"), np.array([0, 1, 65535], dtype=np.uint16))
np.save(path("u32.npy"), np.array([0, 4294967295], dtype=np.uint32))

# Layouts and byte orders: all hold arange(12).reshape(3, 4).
m = np.arange(12).reshape(3, 4)
np.save(path("fortran.npy"), np.asfortranarray(m.astype("<f8")))
np.save(path("fortran3d.npy"), np.asfortranarray(np.arange(24).reshape(2, 3, 4).astype("<i4")))
np.save(path("big_i4.npy"), m.astype(">i4"))
np.save(path("big_f8.npy"), (m * 0.25).astype(">f8"))
np.save(path("big_f2.npy"), (m * 0.5).astype(">f2"))

# 0-d and empty arrays.
np.save(path("scalar.npy"), np.array(3.5))
np.save(path("scalar_i8.npy"), np.array(-7, dtype=np.int64))
np.save(path("empty.npy"), np.zeros((0, 3), dtype=np.float32))

# Header format versions 2.0 and 3.0 (NumPy writes them only when it must; force them here).
for ver in [(2, 0), (3, 0)]:
    with open(path("v%d.npy" % ver[0]), "wb") as f:
        np.lib.format.write_array(f, np.arange(5, dtype=np.int16), version=ver)

# Archives: stored (np.savez) and deflated (np.savez_compressed), named and positional.
np.savez(path("stored.npz"), a=np.arange(6, dtype=np.float64).reshape(2, 3), b=np.array([1, 2, 3], dtype=np.int32),
         flag=np.array(True))
np.savez_compressed(path("compressed.npz"), a=np.arange(6, dtype=np.float64).reshape(2, 3),
                    b=np.array([1, 2, 3], dtype=np.int32), z=np.zeros(1000, dtype=np.float32))
np.savez(path("positional.npz"), np.arange(4, dtype=np.int64), np.eye(2, dtype=np.float32))
np.savez(path("empty.npz"))

# Text: a small gzip-compressed CSV with a comment line and a header row to skip.
rows = "\n".join(",".join(str(v) for v in r) for r in (np.arange(12).reshape(4, 3) * 1.5).tolist())
with gzip.open(path("small.csv.gz"), "wt") as f:
    f.write("x,y,z\n# a comment\n" + rows + "\n")
