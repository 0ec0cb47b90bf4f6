"""Run under mpirun by tests/test_distributed.py (one device per process): all-reduces inside one
compiled program -- in a fori_loop, a scan and a cond, of several dtypes, grouped -- run in the
core, one exchange each (the collective counter says how many), with the values NumPy gives.
Prints "ok" when all pass."""
import numpy as np

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.distributed import state  # counts the exchanges across processes

xjax.distributed.initialize()
P, p = xjax.process_count(), xjax.process_index()
assert xjax.local_device_count() == 1
rng = np.random.default_rng(1)
X = rng.normal(size=(P, 5, 3)).astype(np.float32)


def exchanges(f, *args):
    before = state.seq
    out = f(*args)
    return out, state.seq - before


# K all-reduces in a loop: K exchanges, each reducing the previous result.
K = 5
out, n = exchanges(xjax.pmap(lambda v: lax.fori_loop(0, K, lambda i, c: lax.psum(c, "i") / P + 1, v),
                             axis_name="i"), X[p:p + 1])
want = X.mean(0)
for _ in range(K - 1):
    want = want + 1
np.testing.assert_allclose(np.asarray(out[0]), want + 1, rtol=1e-5)
assert n == K, n


# A scan whose body all-reduces of several dtypes (one exchange per step), and a cond holding one.
def body(c, x):
    total = lax.psum(x, "i")
    hi = lax.pmax(x.astype(jnp.int32), "i")
    return c + total, (hi, lax.pmin(x.astype(jnp.float16), "i"))


def f(xs, flag):
    c, (hi, lo) = lax.scan(body, jnp.zeros(3), xs)
    picked = lax.cond(flag > 0, lambda v: lax.psum(v * 2, "i"), lambda v: lax.psum(v, "i"), c)
    return c, hi, lo, picked, lax.psum(flag > 0, "i"), lax.pmin(flag, "i")


flags = np.array([[1], [1], [1]], np.int32)[:P]
(c, hi, lo, picked, any_flag, min_flag), n = exchanges(xjax.pmap(f, axis_name="i"), X[p:p + 1], flags[p:p + 1])
np.testing.assert_allclose(np.asarray(c[0]), X.sum(0).sum(0), rtol=1e-5)
np.testing.assert_array_equal(np.asarray(hi[0]), X.astype(np.int32).max(0))
np.testing.assert_array_equal(np.asarray(lo[0]), X.astype(np.float16).min(0))
assert lo.dtype == np.float16 and hi.dtype == np.int32
np.testing.assert_allclose(np.asarray(picked[0]), 2 * P * X.sum(0).sum(0), rtol=1e-5)
assert bool(any_flag[0]) and int(min_flag[0]) == 1
# scan: 3 exchanges per step (psum, pmax, pmin: different kinds); cond: 1; the last two (psum,
# pmin: different kinds): 2
assert n == 3 * 5 + 1 + 2, n
print("ok")
