"""NumPy's side of the port of "100 numpy exercises" (rougier/numpy-100, MIT licence,
https://github.com/rougier/numpy-100, source/exercises100.ktx at commit 6447594;
Copyright (c) 2016 Nicolas P. Rougier and the authors named in it; licence in LICENSE.txt
beside this file).

One function per ported exercise, holding the original solution line by line; random
inputs are replaced by the fixed streams below (tests/lua/test_numpy100.lua computes the
same numbers with the same integer arithmetic), so the comparison does not depend on
either library's random generator. Printing is replaced by returning the printed values.
Running the file prints one JSON object {"ex<N>": {name: value}}; an array is
{"dtype": ..., "shape": [...], "data": [flat values]}, NaN and infinities as Python's json
writes them (NaN, Infinity, -Infinity).
"""
import io
import json
import sys

import numpy as np
from numpy.lib import stride_tricks
from numpy.lib.stride_tricks import sliding_window_view


# A linear congruential stream: the same integers in Lua (test_numpy100.lua: lcg).
def lcg(seed, n):
    out, s = [], seed
    for _ in range(n):
        s = (s * 1103515245 + 12345) % 2147483648
        out.append(s)
    return out


def fixed_uniform(seed, lo, hi, shape):
    """Stands in for np.random.uniform(lo, hi, shape) (and random/rand for 0, 1)."""
    n = int(np.prod(shape))
    return np.array([lo + (hi - lo) * (s / 2147483648) for s in lcg(seed, n)]).reshape(shape)


def fixed_randint(seed, lo, hi, shape):
    """Stands in for np.random.randint(lo, hi, shape)."""
    n = int(np.prod(shape))
    return np.array([lo + (s // 65536) % (hi - lo) for s in lcg(seed, n)]).reshape(shape)


def ex3():
    Z = np.zeros(10)
    return {"Z": Z}


def ex4():
    Z = np.zeros((10, 10))
    return {"bytes": Z.size * Z.itemsize, "nbytes": Z.nbytes}


def ex6():
    Z = np.zeros(10)
    Z[4] = 1
    return {"Z": Z}


def ex7():
    Z = np.arange(10, 50)
    return {"Z": Z}


def ex8():
    Z = np.arange(50)
    Z = Z[::-1]
    return {"Z": Z}


def ex9():
    Z = np.arange(9).reshape(3, 3)
    return {"Z": Z}


def ex10():
    nz = np.nonzero([1, 2, 0, 0, 4, 0])
    return {"nz": list(nz)}


def ex11():
    Z = np.eye(3)
    return {"Z": Z}


def ex12():
    Z = fixed_uniform(12, 0, 1, (3, 3, 3))  # np.random.random((3,3,3))
    return {"Z": Z}


def ex13():
    Z = fixed_uniform(13, 0, 1, (10, 10))  # np.random.random((10,10))
    Zmin, Zmax = Z.min(), Z.max()
    return {"Zmin": Zmin, "Zmax": Zmax}


def ex14():
    Z = fixed_uniform(14, 0, 1, (30,))  # np.random.random(30)
    m = Z.mean()
    return {"m": m}


def ex15():
    Z = np.ones((10, 10))
    Z[1:-1, 1:-1] = 0
    return {"Z": Z}


def ex16():
    Z = np.ones((5, 5))
    Z = np.pad(Z, pad_width=1, mode='constant', constant_values=0)
    Z1 = Z.copy()
    Z[:, [0, -1]] = 0
    Z[[0, -1], :] = 0
    return {"pad": Z1, "fancy": Z}


def ex17():
    return {"a": 0 * np.nan, "b": np.nan == np.nan, "c": np.inf > np.nan,
            "d": np.nan - np.nan, "f": 0.3 == 3 * 0.1}


def ex18():
    Z = np.diag(1 + np.arange(4), k=-1)
    return {"Z": Z}


def ex19():
    Z = np.zeros((8, 8), dtype=int)
    Z[1::2, ::2] = 1
    Z[::2, 1::2] = 1
    return {"Z": Z}


def ex20():
    return {"idx": list(np.unravel_index(99, (6, 7, 8)))}


def ex21():
    Z = np.tile(np.array([[0, 1], [1, 0]]), (4, 4))
    return {"Z": Z}


def ex22():
    Z = fixed_uniform(22, 0, 1, (5, 5))  # np.random.random((5,5))
    Z = (Z - np.mean(Z)) / (np.std(Z))
    return {"Z": Z}


def ex24():
    Z = np.matmul(np.ones((5, 3)), np.ones((3, 2)))
    return {"Z": Z}


def ex25():
    Z = np.arange(11)
    Z[(3 < Z) & (Z < 8)] *= -1
    return {"Z": Z}


def ex26():
    # the NumPy half: after `from numpy import *`, sum is np.sum and -1 is the axis
    return {"s": np.sum(range(5), -1)}


def ex27():
    Z = np.arange(5)
    return {"pow": Z ** Z, "shift": 2 << Z >> 2, "lt_neg": Z < - Z, "div": Z / 1 / 1}


def ex28():
    with np.errstate(all="ignore"):
        return {"div": np.array(0) / np.array(0), "floordiv": np.array(0) // np.array(0)}


def ex29():
    Z = fixed_uniform(29, -10, +10, (10,))  # np.random.uniform(-10,+10,10)
    return {"copysign": np.copysign(np.ceil(np.abs(Z)), Z),
            "where": np.where(Z > 0, np.ceil(Z), np.floor(Z))}


def ex30():
    Z1 = fixed_randint(301, 0, 10, (10,))  # np.random.randint(0,10,10)
    Z2 = fixed_randint(302, 0, 10, (10,))
    return {"common": np.intersect1d(Z1, Z2)}


def ex35():
    A = np.ones(3) * 1
    B = np.ones(3) * 2
    np.add(A, B, out=B)
    np.divide(A, 2, out=A)
    np.negative(A, out=A)
    np.multiply(A, B, out=A)
    return {"A": A, "B": B}


def ex36():
    Z = fixed_uniform(36, 0, 10, (10,))  # np.random.uniform(0,10,10)
    return {"mod": Z - Z % 1, "floordiv": Z // 1, "floor": np.floor(Z),
            "astype": Z.astype(int), "trunc": np.trunc(Z)}


def ex37():
    Z = np.zeros((5, 5))
    Z += np.arange(5)
    Z2 = np.tile(np.arange(0, 5), (5, 1))
    return {"broadcast": Z, "tile": Z2}


def ex38():
    def generate():
        for x in range(10):
            yield x
    Z = np.fromiter(generate(), dtype=float, count=-1)
    return {"Z": Z}


def ex39():
    Z = np.linspace(0, 1, 11, endpoint=False)[1:]
    return {"Z": Z}


def ex40():
    Z = fixed_uniform(40, 0, 1, (10,))  # np.random.random(10)
    Z.sort()
    return {"Z": Z}


def ex41():
    Z = np.arange(10)
    return {"s": np.add.reduce(Z)}


def ex42():
    A = fixed_randint(421, 0, 2, (5,))  # np.random.randint(0,2,5)
    B = fixed_randint(422, 0, 2, (5,))
    C = A.copy()
    return {"allclose": np.allclose(A, B), "array_equal": np.array_equal(A, B),
            "allclose_same": np.allclose(A, C), "array_equal_same": np.array_equal(A, C)}


def ex44():
    Z = fixed_uniform(44, 0, 1, (10, 2))  # np.random.random((10,2))
    X, Y = Z[:, 0], Z[:, 1]
    R = np.sqrt(X ** 2 + Y ** 2)
    T = np.arctan2(Y, X)
    return {"R": R, "T": T}


def ex45():
    Z = fixed_uniform(45, 0, 1, (10,))  # np.random.random(10)
    Z[Z.argmax()] = 0
    return {"Z": Z}


def ex47():
    X = np.arange(8)
    Y = X + 0.5
    C = 1.0 / np.subtract.outer(X, Y)
    return {"C": C, "det": np.linalg.det(C)}


def ex48():
    r = {}
    for dtype in [np.int8, np.int32, np.int64]:
        r[np.dtype(dtype).name] = [int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)]
    for dtype in [np.float32, np.float64]:
        f = np.finfo(dtype)
        r[np.dtype(dtype).name] = [float(f.min), float(f.max), float(f.eps)]
    return r


def ex50():
    Z = np.arange(100)
    v = 37.6  # np.random.uniform(0,100)
    index = (np.abs(Z - v)).argmin()
    return {"index": index, "value": Z[index]}


def ex52():
    Z = fixed_uniform(52, 0, 1, (10, 2))  # np.random.random((10,2))
    X, Y = np.atleast_2d(Z[:, 0], Z[:, 1])
    D = np.sqrt((X - X.T) ** 2 + (Y - Y.T) ** 2)
    return {"D": D}


def ex53():
    Z = (fixed_uniform(53, 0, 1, (10,)) * 100).astype(np.float32)  # np.random.rand(10)*100
    Y = Z.view(np.int32)
    Y[:] = Z
    return {"Y": Y}


GENFROMTXT_TEXT = '''1, 2, 3, 4, 5

                6,  ,  , 7, 8

                 ,  , 9,10,11
'''


def ex54():
    s = io.StringIO(GENFROMTXT_TEXT)
    Z = np.genfromtxt(s, delimiter=",", dtype=int, filling_values=0)
    return {"Z": Z}


def ex56():
    X, Y = np.meshgrid(np.linspace(-1, 1, 10), np.linspace(-1, 1, 10))
    D = np.sqrt(X * X + Y * Y)
    sigma, mu = 1.0, 0.0
    G = np.exp(-((D - mu) ** 2 / (2.0 * sigma ** 2)))
    return {"G": G}


def ex57():
    n = 10
    p = 3
    Z = np.zeros((n, n))
    np.put(Z, [17, 42, 93], 1)  # np.random.choice(range(n*n), p, replace=False)
    return {"Z": Z}


def ex58():
    X = fixed_uniform(58, 0, 1, (5, 10))  # np.random.rand(5, 10)
    Y = X - X.mean(axis=1, keepdims=True)
    Y2 = X - X.mean(axis=1).reshape(-1, 1)
    return {"Y": Y, "Y2": Y2}


def ex59():
    Z = fixed_randint(59, 0, 10, (3, 3))  # np.random.randint(0,10,(3,3))
    return {"Z": Z, "sorted": Z[Z[:, 1].argsort()]}


def ex60():
    Z = fixed_randint(60, 0, 3, (3, 10))  # np.random.randint(0,3,(3,10))
    Z2 = np.array([[0, 1, np.nan], [1, 2, np.nan], [4, 5, np.nan]])
    return {"null0": (~Z.any(axis=0)).any(), "nullnan": np.isnan(Z2).all(axis=0)}


def ex61():
    Z = fixed_uniform(61, 0, 1, (10,))  # np.random.uniform(0,1,10)
    z = 0.5
    m = Z.flat[np.abs(Z - z).argmin()]
    return {"m": m}


def ex64():
    Z = np.ones(10)
    I = fixed_randint(64, 0, len(Z), (20,))  # np.random.randint(0,len(Z),20)
    Z += np.bincount(I, minlength=len(Z))
    Z1 = Z.copy()
    np.add.at(Z, I, 1)
    return {"bincount": Z1, "add_at": Z}


def ex65():
    X = [1, 2, 3, 4, 5, 6]
    I = [1, 3, 9, 3, 4, 1]
    F = np.bincount(I, X)
    return {"F": F}


def ex66():
    w, h = 256, 256
    I = fixed_randint(66, 0, 4, (h, w, 3)).astype(np.ubyte)  # np.random.randint(0, 4, (h, w, 3))
    colors = np.unique(I.reshape(-1, 3), axis=0)
    n = len(colors)
    I24 = np.dot(I.astype(np.uint32), [1, 256, 65536])
    n2 = len(np.unique(I24))
    return {"colors": colors, "n": n, "n24": n2}


def ex67():
    A = fixed_randint(67, 0, 10, (3, 4, 3, 4))  # np.random.randint(0,10,(3,4,3,4))
    s1 = A.sum(axis=(-2, -1))
    s2 = A.reshape(A.shape[:-2] + (-1,)).sum(axis=-1)
    return {"sum": s1, "sum_reshape": s2}


def ex68():
    D = fixed_uniform(681, 0, 1, (100,))  # np.random.uniform(0,1,100)
    S = fixed_randint(682, 0, 10, (100,))  # np.random.randint(0,10,100)
    D_sums = np.bincount(S, weights=D)
    D_counts = np.bincount(S)
    D_means = D_sums / D_counts
    return {"D_means": D_means}


def ex69():
    A = fixed_uniform(691, 0, 1, (5, 5))  # np.random.uniform(0,1,(5,5))
    B = fixed_uniform(692, 0, 1, (5, 5))
    return {"slow": np.diag(np.dot(A, B)), "fast": np.sum(A * B.T, axis=1),
            "einsum": np.einsum("ij,ji->i", A, B)}


def ex70():
    Z = np.array([1, 2, 3, 4, 5])
    nz = 3
    Z0 = np.zeros(len(Z) + (len(Z) - 1) * (nz))
    Z0[::nz + 1] = Z
    return {"Z0": Z0}


def ex71():
    A = np.ones((5, 5, 3))
    B = 2 * np.ones((5, 5))
    return {"AB": A * B[:, :, None]}


def ex72():
    A = np.arange(25).reshape(5, 5)
    A[[0, 1]] = A[[1, 0]]
    return {"A": A}


def ex73():
    faces = fixed_randint(73, 0, 100, (10, 3))  # np.random.randint(0,100,(10,3))
    F = np.roll(faces.repeat(2, axis=1), -1, axis=1)
    F = F.reshape(len(F) * 3, 2)
    F = np.sort(F, axis=1)
    G = F.view(dtype=[('p0', F.dtype), ('p1', F.dtype)])
    G = np.unique(G)
    return {"G": np.array(G.tolist())}


def ex74():
    C = np.bincount([1, 1, 2, 3, 4, 4, 6])
    A = np.repeat(np.arange(len(C)), C)
    return {"A": A}


def ex75():
    def moving_average(a, n=3):
        ret = np.cumsum(a, dtype=float)
        ret[n:] = ret[n:] - ret[:-n]
        return ret[n - 1:] / n
    Z = np.arange(20)
    return {"cumsum": moving_average(Z, n=3),
            "window": sliding_window_view(Z, window_shape=3).mean(axis=-1)}


def ex76():
    def rolling(a, window):
        shape = (a.size - window + 1, window)
        strides = (a.strides[0], a.strides[0])
        return stride_tricks.as_strided(a, shape=shape, strides=strides)
    Z = rolling(np.arange(10), 3)
    return {"as_strided": Z, "window": sliding_window_view(np.arange(10), window_shape=3)}


def ex77():
    Z = fixed_randint(77, 0, 2, (100,))  # np.random.randint(0,2,100)
    np.logical_not(Z, out=Z)
    Z2 = fixed_uniform(77, -1.0, 1.0, (100,))  # np.random.uniform(-1.0,1.0,100)
    np.negative(Z2, out=Z2)
    return {"not": Z, "neg": Z2}


def ex78():
    P0 = fixed_uniform(781, -10, 10, (10, 2))  # np.random.uniform(-10,10,(10,2))
    P1 = fixed_uniform(782, -10, 10, (10, 2))
    p = fixed_uniform(783, -10, 10, (1, 2))

    def distance_faster(P0, P1, p):
        v = P1 - P0
        v[:, [0, 1]] = v[:, [1, 0]]
        v[:, 1] *= -1
        norm = np.linalg.norm(v, axis=1)
        r = P0 - p
        d = np.abs(np.einsum("ij,ij->i", r, v)) / norm
        return d

    def distance_slower(P0, P1, p):
        T = P1 - P0
        L = (T ** 2).sum(axis=1)
        U = -((P0[:, 0] - p[..., 0]) * T[:, 0] + (P0[:, 1] - p[..., 1]) * T[:, 1]) / L
        U = U.reshape(len(U), 1)
        D = P0 + U * T - p
        return np.sqrt((D ** 2).sum(axis=1))

    return {"faster": distance_faster(P0, P1, p), "slower": distance_slower(P0, P1, p)}


def ex79():
    P0 = fixed_uniform(791, -10, 10, (10, 2))  # np.random.uniform(-10,10,(10,2))
    P1 = fixed_uniform(792, -10, 10, (10, 2))
    p = fixed_uniform(793, -10, 10, (10, 2))

    def distance_points_to_lines(p, p_1, p_2):
        x_0, y_0 = p.T
        x_1, y_1 = p_1.T
        x_2, y_2 = p_2.T
        dx = x_2 - x_1
        dy = y_2 - y_1
        cross_term = x_2 * y_1 - y_2 * x_1
        numerator = np.abs(
            dy[np.newaxis, :] * x_0[:, np.newaxis]
            - dx[np.newaxis, :] * y_0[:, np.newaxis]
            + cross_term[np.newaxis, :]
        )
        denominator = np.sqrt(dx ** 2 + dy ** 2)
        return numerator / denominator[np.newaxis, :]

    return {"D": distance_points_to_lines(p, P0, P1)}


def ex80():
    Z = fixed_randint(80, 0, 10, (10, 10))  # np.random.randint(0,10,(10,10))
    shape = (5, 5)
    fill = 0
    position = (1, 1)

    R = np.ones(shape, dtype=Z.dtype) * fill
    P = np.array(list(position)).astype(int)
    Rs = np.array(list(R.shape)).astype(int)
    Zs = np.array(list(Z.shape)).astype(int)

    R_start = np.zeros((len(shape),)).astype(int)
    R_stop = np.array(list(shape)).astype(int)
    Z_start = (P - Rs // 2)
    Z_stop = (P + Rs // 2) + Rs % 2

    R_start = (R_start - np.minimum(Z_start, 0)).tolist()
    Z_start = (np.maximum(Z_start, 0)).tolist()
    R_stop = np.maximum(R_start, (R_stop - np.maximum(Z_stop - Zs, 0))).tolist()
    Z_stop = (np.minimum(Z_stop, Zs)).tolist()

    r = tuple([slice(start, stop) for start, stop in zip(R_start, R_stop)])
    z = tuple([slice(start, stop) for start, stop in zip(Z_start, Z_stop)])
    R[r] = Z[z]
    return {"R": R}


def ex81():
    Z = np.arange(1, 15, dtype=np.uint32)
    R = stride_tricks.as_strided(Z, (11, 4), (4, 4))
    return {"as_strided": R, "window": sliding_window_view(Z, window_shape=4)}


def ex82():
    Z = fixed_uniform(82, 0, 1, (10, 10))  # np.random.uniform(0,1,(10,10))
    U, S, V = np.linalg.svd(Z)
    threshold = len(S) * S.max() * np.finfo(S.dtype).eps
    rank = np.sum(S > threshold)
    return {"rank": rank, "matrix_rank": np.linalg.matrix_rank(Z)}


def ex83():
    Z = fixed_randint(83, 0, 10, (50,))  # np.random.randint(0,10,50)
    return {"most": np.bincount(Z).argmax()}


def ex84():
    Z = fixed_randint(84, 0, 5, (10, 10))  # np.random.randint(0,5,(10,10))
    n = 3
    i = 1 + (Z.shape[0] - 3)
    j = 1 + (Z.shape[1] - 3)
    C = stride_tricks.as_strided(Z, shape=(i, j, n, n), strides=Z.strides + Z.strides)
    return {"as_strided": C, "window": sliding_window_view(Z, window_shape=(3, 3))}


def ex86():
    p, n = 10, 20
    M = np.ones((p, n, n))
    V = np.ones((p, n, 1))
    S = np.tensordot(M, V, axes=[[0, 2], [0, 1]])
    return {"S": S}


def ex87():
    Z = np.ones((16, 16))
    k = 4
    S = np.add.reduceat(np.add.reduceat(Z, np.arange(0, Z.shape[0], k), axis=0),
                        np.arange(0, Z.shape[1], k), axis=1)
    windows = np.lib.stride_tricks.sliding_window_view(Z, (k, k))
    S2 = windows[::k, ::k, ...].sum(axis=(-2, -1))
    S3 = Z.reshape(4, 4, 4, 4).sum((1, 3))
    return {"reduceat": S, "window": S2, "reshape": S3}


def ex88():
    def iterate(Z):
        N = (Z[0:-2, 0:-2] + Z[0:-2, 1:-1] + Z[0:-2, 2:] +
             Z[1:-1, 0:-2] + Z[1:-1, 2:] +
             Z[2:, 0:-2] + Z[2:, 1:-1] + Z[2:, 2:])
        birth = (N == 3) & (Z[1:-1, 1:-1] == 0)
        survive = ((N == 2) | (N == 3)) & (Z[1:-1, 1:-1] == 1)
        Z[...] = 0
        Z[1:-1, 1:-1][birth | survive] = 1
        return Z

    Z = fixed_randint(88, 0, 2, (50, 50))  # np.random.randint(0,2,(50,50))
    for i in range(100):
        Z = iterate(Z)
    return {"Z": Z}


def ex89():
    Z = np.arange(10000)
    Z = Z[(np.arange(10000) * 7919) % 10000]  # np.random.shuffle(Z)
    n = 5
    return {"slow": Z[np.argsort(Z)[-n:]], "fast_sorted": np.sort(Z[np.argpartition(-Z, n)[:n]])}


def ex90():
    def cartesian(arrays):
        arrays = [np.asarray(a) for a in arrays]
        shape = (len(x) for x in arrays)
        ix = np.indices(shape, dtype=int)
        ix = ix.reshape(len(arrays), -1).T
        for n, arr in enumerate(arrays):
            ix[:, n] = arrays[n][ix[:, n]]
        return ix

    return {"C": cartesian(([1, 2, 3], [4, 5], [6, 7]))}


def ex92():
    x = fixed_uniform(92, 0, 1, (1000,))  # np.random.rand(int(5e7))
    return {"power": np.power(x, 3), "mul": x * x * x, "einsum": np.einsum('i,i,i->i', x, x, x)}


def ex93():
    A = fixed_randint(931, 0, 5, (8, 3))  # np.random.randint(0,5,(8,3))
    B = fixed_randint(932, 0, 5, (2, 2))
    C = (A[..., np.newaxis, np.newaxis] == B)
    rows = np.where(C.any((3, 1)).all(1))[0]
    return {"rows": rows}


def ex94():
    Z = fixed_randint(94, 0, 5, (10, 3))  # np.random.randint(0,5,(10,3))
    E = np.all(Z[:, 1:] == Z[:, :-1], axis=1)
    U = Z[~E]
    U2 = Z[Z.max(axis=1) != Z.min(axis=1), :]
    return {"U": U, "U2": U2}


def ex95():
    I = np.array([0, 1, 2, 3, 15, 16, 32, 64, 128])
    B = ((I.reshape(-1, 1) & (2 ** np.arange(8))) != 0).astype(int)
    I8 = np.array([0, 1, 2, 3, 15, 16, 32, 64, 128], dtype=np.uint8)
    return {"B": B[:, ::-1], "unpackbits": np.unpackbits(I8[:, np.newaxis], axis=1)}


def ex96():
    Z = fixed_randint(96, 0, 2, (6, 3))  # np.random.randint(0,2,(6,3))
    uZ = np.unique(Z, axis=0)
    return {"uZ": uZ}


def ex97():
    A = fixed_uniform(971, 0, 1, (10,))  # np.random.uniform(0,1,10)
    B = fixed_uniform(972, 0, 1, (10,))
    return {"sum": np.einsum('i->', A), "mul": np.einsum('i,i->i', A, B),
            "inner": np.einsum('i,i', A, B), "outer": np.einsum('i,j->ij', A, B),
            "np_sum": np.sum(A), "np_mul": A * B, "np_inner": np.inner(A, B),
            "np_outer": np.outer(A, B)}


def ex98():
    phi = np.arange(0, 10 * np.pi, 0.1)
    a = 1
    x = a * phi * np.cos(phi)
    y = a * phi * np.sin(phi)

    dr = (np.diff(x) ** 2 + np.diff(y) ** 2) ** .5
    r = np.zeros_like(x)
    r[1:] = np.cumsum(dr)
    r_int = np.linspace(0, r.max(), 200)
    x_int = np.interp(r_int, r, x)
    y_int = np.interp(r_int, r, y)
    return {"x_int": x_int, "y_int": y_int}


def ex99():
    X = np.asarray([[1.0, 0.0, 3.0, 8.0],
                    [2.0, 0.0, 1.0, 1.0],
                    [1.5, 2.5, 1.0, 0.0]])
    n = 4
    M = np.logical_and.reduce(np.mod(X, 1) == 0, axis=-1)
    M &= (X.sum(axis=-1) == n)
    return {"rows": X[M]}


def ex100():
    X = fixed_uniform(100, -3, 3, (100,))  # np.random.randn(100)
    N = 1000
    idx = fixed_randint(1001, 0, X.size, (N, X.size))  # np.random.randint(0, X.size, (N, X.size))
    means = X[idx].mean(axis=1)
    confint = np.percentile(means, [2.5, 97.5])
    return {"confint": confint}


def encode(v):
    """JSON form of a result: arrays and NumPy scalars keep their dtype and shape."""
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(v)
        return {"dtype": a.dtype.name, "shape": list(a.shape), "data": a.ravel().tolist()}
    if isinstance(v, (list, tuple)):
        return [encode(x) for x in v]
    if isinstance(v, dict):
        return {k: encode(x) for k, x in v.items()}
    return v


def main():
    names = sys.argv[1:] or sorted((n for n in globals() if n.startswith("ex") and n[2:].isdigit()),
                                   key=lambda n: int(n[2:]))
    print(json.dumps({n: encode(globals()[n]()) for n in names}))


if __name__ == "__main__":
    main()
