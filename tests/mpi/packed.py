"""Run under mpirun by tests/test_distributed.py: independent all-reduces of a pytree (psum, pmax,
pmin of leaves of several dtypes, and a psum that reads another's result) go out as one exchange
each and give the same values as NumPy. Prints "ok" when all pass."""
import numpy as np

import xjax
from xjax import lax
from xjax._src.distributed import state  # counts the exchanges across processes

xjax.distributed.initialize()
P, p, L, N = xjax.process_count(), xjax.process_index(), xjax.local_device_count(), xjax.device_count()
rng = np.random.default_rng(0)
tree = {"w": rng.normal(size=(N, 3, 4)).astype(np.float32), "b": rng.normal(size=(N, 5)).astype(np.float32),
        "n": rng.integers(-9, 9, size=(N, 2)).astype(np.int32), "h": rng.normal(size=(N, 3)).astype(np.float16)}
local = {k: v[p * L:(p + 1) * L] for k, v in tree.items()}


def f(t):
    s = lax.psum(t, "i")
    hi, lo = lax.pmax(t, "i"), lax.pmin(t, "i")
    again = lax.psum(s["b"] * 2, "i")  # reads a psum's result: a later exchange
    return s, hi, lo, again


before = state.seq
s, hi, lo, again = xjax.pmap(f, axis_name="i")(local)
assert state.seq - before == 4, state.seq - before  # psum, pmax, pmin of the 4 leaves each; the last psum
for k, v in tree.items():
    want = v.astype(np.float64).sum(0)
    tol = 2e-2 if v.dtype == np.float16 else 1e-5
    for d in range(L):
        np.testing.assert_allclose(np.asarray(s[k][d], np.float64), want, rtol=tol, atol=tol, err_msg=k)
        np.testing.assert_array_equal(np.asarray(hi[k][d]), v.max(0))
        np.testing.assert_array_equal(np.asarray(lo[k][d]), v.min(0))
        assert s[k][d].dtype == v.dtype, (k, s[k][d].dtype)
for d in range(L):
    np.testing.assert_allclose(np.asarray(again[d]), N * 2 * tree["b"].sum(0), rtol=1e-5, atol=1e-5)
print("ok")
