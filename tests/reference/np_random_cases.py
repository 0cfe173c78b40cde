#!/usr/bin/env python3
"""Writes tests/lua/np_random_cases.lua: NumPy 1.24's values for the calls that
tests/lua/test_np_random.lua replays in tide (each case is a Lua call and the same call in
NumPy; indices that tide gives 1-based are shifted here).

  /usr/bin/python3 tests/reference/np_random_cases.py > tests/lua/np_random_cases.lua
"""
import numpy as np

# (Lua expression, Python expression); `rng` is the Generator of the seed.
GENERATOR_CALLS = [
    ("rng:random(5)", "rng.random(5)"),
    ("rng:random()", "rng.random()"),
    ("rng:random({2, 3})", "rng.random((2, 3))"),
    ("rng:random(7, 'float32')", "rng.random(7, np.float32)"),
    ("rng:random({size = 3, dtype = 'float32'})", "rng.random(size=3, dtype=np.float32)"),
    ("rng:integers(10)", "rng.integers(10)"),
    ("rng:integers(0, 10, 9)", "rng.integers(0, 10, 9)"),
    ("rng:integers(-3, 3, {2, 4})", "rng.integers(-3, 3, (2, 4))"),
    ("rng:integers(0, 2^40, 4)", "rng.integers(0, 2**40, 4)"),
    ("rng:integers(-2^62, 2^62, 4)", "rng.integers(-2**62, 2**62, 4)"),
    ("rng:integers(math.mininteger, math.maxinteger, 3)", "rng.integers(-2**63, 2**63 - 1, 3)"),
    ("rng:integers(0, 4294967296, 3)", "rng.integers(0, 2**32, 3)"),
    ("rng:integers(5, 9, 6, 'int32')", "rng.integers(5, 9, 6, np.int32)"),
    ("rng:integers(-100000, 100000, 5, {dtype = 'int32'})", "rng.integers(-100000, 100000, 5, dtype=np.int32)"),
    ("rng:integers(0, 1000, 9, 'int16')", "rng.integers(0, 1000, 9, np.int16)"),
    ("rng:integers(-32768, 32767, 5, 'int16', true)", "rng.integers(-32768, 32767, 5, np.int16, True)"),
    ("rng:integers(-10, 10, 11, 'int8')", "rng.integers(-10, 10, 11, np.int8)"),
    ("rng:integers(0, 256, 7, 'uint8')", "rng.integers(0, 256, 7, np.uint8)"),
    ("rng:integers(0, 2, 40, 'bool')", "rng.integers(0, 2, 40, bool).astype(int)"),
    ("rng:integers(1, 6, 8, {endpoint = true})", "rng.integers(1, 6, 8, endpoint=True)"),
    ("rng:integers({low = 3, high = 4, size = 2})", "rng.integers(low=3, high=4, size=2)"),
    ("rng:standard_normal(12)", "rng.standard_normal(12)"),
    ("rng:standard_normal()", "rng.standard_normal()"),
    ("rng:standard_normal({size = {2, 2}})", "rng.standard_normal(size=(2, 2))"),
    ("rng:normal(1.5, 2, 6)", "rng.normal(1.5, 2, 6)"),
    ("rng:normal({loc = -3, scale = 0.25, size = 3})", "rng.normal(loc=-3, scale=0.25, size=3)"),
    ("rng:normal()", "rng.normal()"),
    ("rng:exponential(1, 10)", "rng.exponential(1, 10)"),
    ("rng:exponential({scale = 3, size = 4})", "rng.exponential(scale=3, size=4)"),
    ("rng:exponential()", "rng.exponential()"),
    ("rng:uniform(-2, 3, 5)", "rng.uniform(-2, 3, 5)"),
    ("rng:uniform({low = 10, high = 11, size = 2})", "rng.uniform(low=10, high=11, size=2)"),
    ("rng:uniform()", "rng.uniform()"),
    ("rng:choice(10, 6)", "rng.choice(10, 6) + 1"),
    ("rng:choice(10, 6, false)", "rng.choice(10, 6, False) + 1"),
    ("rng:choice(10, 10, false)", "rng.choice(10, 10, False) + 1"),
    ("rng:choice(10, 6, {replace = false, shuffle = false})", "rng.choice(10, 6, replace=False, shuffle=False) + 1"),
    ("rng:choice(20000, 1000, false)", "rng.choice(20000, 1000, False) + 1"),
    ("rng:choice(20000, 300, false)", "rng.choice(20000, 300, False) + 1"),
    ("rng:choice(20000, 600, {replace = false, shuffle = false})", "rng.choice(20000, 600, replace=False, shuffle=False) + 1"),
    ("rng:choice(5, 8, true, {0.1, 0.2, 0.3, 0.2, 0.2})", "rng.choice(5, 8, True, [0.1, 0.2, 0.3, 0.2, 0.2]) + 1"),
    ("rng:choice(5, 4, {replace = false, p = {0.5, 0, 0.25, 0.125, 0.125}})",
     "rng.choice(5, 4, replace=False, p=[0.5, 0, 0.25, 0.125, 0.125]) + 1"),
    ("rng:choice(np.array{10, 20, 30}, {2, 3})", "rng.choice(np.array([10, 20, 30]), (2, 3))"),
    ("rng:choice(np.array{{1, 2}, {3, 4}, {5, 6}}, 2, false)", "rng.choice(np.array([[1, 2], [3, 4], [5, 6]]), 2, False)"),
    ("rng:choice(7)", "rng.choice(7) + 1"),
    ("rng:choice(np.array{1.5, 2.5, 3.5})", "rng.choice(np.array([1.5, 2.5, 3.5]))"),
    ("rng:permutation(12)", "rng.permutation(12) + 1"),
    ("rng:permutation(np.arange(6):reshape(3, 2))", "rng.permutation(np.arange(6).reshape(3, 2))"),
    ("(function() local x = np.arange(10); rng:shuffle(x); return x end)()",
     "(lambda x: (rng.shuffle(x), x)[1])(np.arange(10))"),
    ("rng:random(3)", "rng.random(3)"),
    # array parameters, broadcast against each other and size (one draw per element)
    ("rng:normal(np.array{0, 10, 100}, np.array{{1}, {2}})", "rng.normal(np.array([0., 10., 100.]), np.array([[1.], [2.]]))"),
    ("rng:normal({0, 10}, 1, {3, 2})", "rng.normal([0, 10], 1, (3, 2))"),
    ("rng:uniform(np.array{0, 1}, 3, {3, 2})", "rng.uniform(np.array([0., 1.]), 3., size=(3, 2))"),
    ("rng:uniform({low = np.array{0, 1}, high = 3})", "rng.uniform(low=np.array([0, 1]), high=3)"),
    ("rng:exponential(np.array{1, 2, 0.5})", "rng.exponential(np.array([1., 2., 0.5]))"),
    ("rng:exponential({scale = np.array{{1, 2}}, size = {2, 2}})", "rng.exponential(scale=np.array([[1., 2.]]), size=(2, 2))"),
    ("rng:normal(np.array(5.0))", "rng.normal(np.array(5.))"),
]

LEGACY_CALLS = [
    ("np.random.rand(5)", "np.random.rand(5)"),
    ("np.random.rand()", "np.random.rand()"),
    ("np.random.rand(2, 3)", "np.random.rand(2, 3)"),
    ("np.random.randn(5)", "np.random.randn(5)"),
    ("np.random.randn()", "np.random.randn()"),
    ("np.random.randn(2, 2)", "np.random.randn(2, 2)"),
    ("np.random.random(4)", "np.random.random(4)"),
    ("np.random.random_sample({size = {1, 3}})", "np.random.random_sample(size=(1, 3))"),
    ("np.random.randint(10)", "np.random.randint(10)"),
    ("np.random.randint(0, 10, 9)", "np.random.randint(0, 10, 9)"),
    ("np.random.randint(-1000, 1000, {2, 3})", "np.random.randint(-1000, 1000, (2, 3))"),
    ("np.random.randint(0, 2^40, 4)", "np.random.randint(0, 2**40, 4)"),
    ("np.random.randint(1, 7, 6, 'int32')", "np.random.randint(1, 7, 6, np.int32)"),
    ("np.random.randint(0, 300, 7, 'int16')", "np.random.randint(0, 300, 7, np.int16)"),
    ("np.random.randint(-5, 5, 9, 'int8')", "np.random.randint(-5, 5, 9, np.int8)"),
    ("np.random.randint({low = 0, high = 2, size = 20, dtype = 'bool'})",
     "np.random.randint(low=0, high=2, size=20, dtype=bool).astype(int)"),
    ("np.random.uniform(-1, 1, 4)", "np.random.uniform(-1, 1, 4)"),
    ("np.random.uniform(5, 4, 3)", "np.random.uniform(5, 4, 3)"),
    ("np.random.uniform()", "np.random.uniform()"),
    ("np.random.normal(10, 3, 5)", "np.random.normal(10, 3, 5)"),
    ("np.random.normal({loc = 1, scale = 0.5, size = 3})", "np.random.normal(loc=1, scale=0.5, size=3)"),
    ("np.random.normal()", "np.random.normal()"),
    ("np.random.choice(10, 6)", "np.random.choice(10, 6) + 1"),
    ("np.random.choice(10, 6, false)", "np.random.choice(10, 6, False) + 1"),
    ("np.random.choice(5, 8, true, {0.1, 0.2, 0.3, 0.2, 0.2})", "np.random.choice(5, 8, True, [0.1, 0.2, 0.3, 0.2, 0.2]) + 1"),
    ("np.random.choice(5, 3, {replace = false, p = {0.5, 0, 0.25, 0.125, 0.125}})",
     "np.random.choice(5, 3, replace=False, p=[0.5, 0, 0.25, 0.125, 0.125]) + 1"),
    ("np.random.choice(np.array{10, 20, 30}, {2, 2})", "np.random.choice(np.array([10, 20, 30]), (2, 2))"),
    ("np.random.choice(4)", "np.random.choice(4) + 1"),
    ("np.random.permutation(9)", "np.random.permutation(9) + 1"),
    ("np.random.permutation(np.arange(8):reshape(4, 2))", "np.random.permutation(np.arange(8).reshape(4, 2))"),
    ("(function() local x = np.arange(7); np.random.shuffle(x); return x end)()",
     "(lambda x: (np.random.shuffle(x), x)[1])(np.arange(7))"),
    ("np.random.rand(3)", "np.random.rand(3)"),
    ("np.random.normal({0, 10}, 1)", "np.random.normal([0., 10.], 1.)"),
    ("np.random.uniform({0, 1}, {1, 3})", "np.random.uniform([0, 1], [1, 3])"),
]

GENERATOR_SEEDS = [0, 1, 42, 12345, 2**32 + 5, 2**63 - 1]
LEGACY_SEEDS = [0, 1, 42, 12345, 2**32 - 1]


def lua_value(v):
    v = np.asarray(v)
    if v.ndim == 0:
        x = v.item()
        return repr(x) if isinstance(x, int) else "%.17g" % x
    return "{" + ", ".join(lua_value(x) for x in v) + "}"


def cases(calls, seeds, start):
    out = []
    for seed in seeds:
        rng = start(seed)
        rows = []
        for lua, py in calls:
            rows.append("      {%r, %s}," % (lua, lua_value(eval(py, {"np": np, "rng": rng}))))
        out.append("    {seed = %d, calls = {\n%s\n    }}," % (seed, "\n".join(rows)))
    return "\n".join(out)


def main():
    def legacy(seed):
        np.random.seed(seed)
        return None

    print("-- Generated by tests/reference/np_random_cases.py with NumPy %s: do not edit." % np.__version__)
    print("return {")
    print("  generator = {")
    print(cases(GENERATOR_CALLS, GENERATOR_SEEDS, np.random.default_rng))
    print("  },")
    print("  legacy = {")
    print(cases(LEGACY_CALLS, LEGACY_SEEDS, legacy))
    print("  },")
    print("}")


main()
