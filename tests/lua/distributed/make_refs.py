"""References for collectives.lua, computed by NumPy: make_refs.py WORLD_SIZE DIR.

Every rank r gets x{r}.npy (a 3x4 float64 array of small integers, exact in every dtype
tide has), c{r}.npy (complex128), b{r}.npy (bool) and l{r}.npy (WORLD_SIZE x 3 x 4: rank r's
input list for reduce_scatter and all_to_all). The expected reductions over the ranks are
sum/prod/min/max_{x,c,b}.npy and rs{r}.npy (what reduce_scatter gives rank r)."""
import sys
import numpy as np

w, out = int(sys.argv[1]), sys.argv[2]
rng = np.random.default_rng(17)
xs = [rng.integers(1, 4, size=(3, 4)).astype(np.float64) for _ in range(w)]
cs = [rng.integers(-2, 3, size=(3, 4)) + 1j * rng.integers(-2, 3, size=(3, 4)) for _ in range(w)]
bs = [rng.integers(0, 2, size=(3, 4)).astype(bool) for _ in range(w)]
ls = [rng.integers(0, 20, size=(w, 3, 4)).astype(np.float64) for _ in range(w)]
for r in range(w):
    np.save(f"{out}/x{r}.npy", xs[r])
    np.save(f"{out}/c{r}.npy", cs[r])
    np.save(f"{out}/b{r}.npy", bs[r])
    np.save(f"{out}/l{r}.npy", ls[r])
    np.save(f"{out}/rs{r}.npy", np.sum([ls[j][r] for j in range(w)], axis=0))
for name, arrays in (("x", xs), ("c", cs), ("b", bs)):
    a = np.stack(arrays)
    np.save(f"{out}/sum_{name}.npy", a.sum(axis=0) if name != "b" else a.any(axis=0))
    np.save(f"{out}/prod_{name}.npy", a.prod(axis=0) if name != "b" else a.all(axis=0))
    if name != "c":
        np.save(f"{out}/min_{name}.npy", a.min(axis=0))
        np.save(f"{out}/max_{name}.npy", a.max(axis=0))
