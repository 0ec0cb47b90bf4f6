"""Run under mpirun by tests/test_distributed.py (one device per process): all-reduces inside one
compiled program -- in a fori_loop and a scan, of several dtypes, grouped -- run in the core, one
exchange each (the collective counter says how many), with the values NumPy gives. A cond holding
one, whose branch may differ between processes, keeps vmap's meaning (every branch on every shard).
Repeated calls, mapped and unmapped arguments and results. Prints "ok" when all pass."""
import numpy as np

import xjax
import xjax.numpy as jnp
from xjax import _core, lax
from xjax._src import mpi_shim
from xjax._src.distributed import state  # counts the exchanges across processes
from xjax._src.sharded_array import ShardedArray

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
# ... in the core, through the MPI shim built against mpi4py's MPI (not from Python)
assert _core.mpi_seq() == state.seq == K, (_core.mpi_seq(), state.seq)
assert mpi_shim.describe().startswith("compiled by"), mpi_shim.describe()


# A scan whose body all-reduces of several dtypes (one exchange per step).
def body(c, x):
    total = lax.psum(x, "i")
    hi = lax.pmax(x.astype(jnp.int32), "i")
    return c + total, (hi, lax.pmin(x.astype(jnp.float16), "i"))


def f(xs, flag):
    c, (hi, lo) = lax.scan(body, jnp.zeros(3), xs)
    return c, hi, lo, lax.psum(flag > 0, "i"), lax.pmin(flag, "i")


flags = np.ones(P, np.int32)
(c, hi, lo, any_flag, min_flag), n = exchanges(xjax.pmap(f, axis_name="i"), X[p:p + 1], flags[p:p + 1])
np.testing.assert_allclose(np.asarray(c[0]), X.sum(0).sum(0), rtol=1e-5)
np.testing.assert_array_equal(np.asarray(hi[0]), X.astype(np.int32).max(0))
np.testing.assert_array_equal(np.asarray(lo[0]), X.astype(np.float16).min(0))
assert lo.dtype == np.float16 and hi.dtype == np.int32
assert bool(any_flag[0]) and int(min_flag[0]) == 1
# scan: 3 exchanges per step (psum, pmax, pmin: different kinds); the last two (psum, pmin:
# different kinds): 2
assert n == 3 * 5 + 2, n

# A repeated call takes the direct path (pmap_program.Program.whole_runner): unmapped arguments
# and results, results stacked along another axis; each call one exchange, the same values.
h = xjax.pmap(lambda v, w: (lax.psum(v * w, "i"), w + 1, lax.pmax(v, "i")), axis_name="i", in_axes=(1, None),
              out_axes=(1, None, 0))
W = np.float32(3)
for _ in range(3):
    (s3, w1, m), n = exchanges(h, xjax.device_put(X[p][:, None]), xjax.device_put(W))
    assert n == 2 and s3.shape == (5, 1, 3) and w1.shape == () and m.shape == (1, 5, 3), (n, s3.shape, m.shape)
    np.testing.assert_allclose(np.asarray(s3[:, 0]), X.sum(0) * W, rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(m[0]), X.max(0))
    assert float(w1) == 4
    assert type(s3) is type(w1) is type(m) is ShardedArray
assert h._fast_calls.hits == 2, h._fast_calls.hits  # (the repeated calls ran from C++)

# Results passed back in, as a training loop passes its state: ShardedArrays split as pmap splits
# its argument go to the C++ call path as their blocks.
step = xjax.pmap(lambda v: lax.psum(v, "i") / P + v, axis_name="i")
v, want = xjax.device_put(X[p:p + 1]), X.astype(np.float64)
for _ in range(4):
    (v, n), want = exchanges(step, v), want.mean(0) + want
    assert n == 1 and type(v) is ShardedArray and v.shape == (1, 5, 3), (n, type(v), v.shape)
    np.testing.assert_allclose(np.asarray(v[0]), want[p], rtol=1e-5)
assert step._fast_calls.hits == 3, step._fast_calls.hits  # (all but the first: the Array's signature fits)

# The exchange combines in rank order: every process gets the same bits (with 3 processes, one
# hands its operand to another first). pmax propagates NaN, as lax.max does. A sum of more than
# 1 MiB goes through MPI's all-reduce after the check.
noisy = (rng.normal(size=(P, 4096)) * 1e3 ** rng.integers(-3, 4, size=(P, 4096))).astype(np.float32)
noisy[0, 7] = np.nan
total, top = xjax.pmap(lambda v: (lax.psum(v, "i"), lax.pmax(v, "i")), axis_name="i")(noisy[p:p + 1])
everyone = state.control.allgather(np.asarray(total).tobytes() + np.asarray(top).tobytes())
assert all(b == everyone[0] for b in everyone), "the processes' sums differ in their bits"
np.testing.assert_allclose(np.asarray(total[0]), noisy.astype(np.float64).sum(0), rtol=1e-4, atol=1e-3)
assert np.isnan(np.asarray(top[0, 7])) and np.isnan(np.asarray(total[0, 7]))
np.testing.assert_array_equal(np.delete(np.asarray(top[0]), 7), np.delete(noisy.max(0), 7))
big = np.arange(300_000, dtype=np.float32)[None] + p
(out,), n = exchanges(xjax.pmap(lambda v: (lax.psum(v, "i"),), axis_name="i"), big)
np.testing.assert_array_equal(np.asarray(out[0]), np.arange(300_000, dtype=np.float32) * P + P * (P - 1) // 2)
assert n == 1, n

# A cond whose predicate differs between processes, a psum in one branch: as vmap, both branches
# run on every shard (the psum over all of them), from Python.
g = xjax.pmap(lambda v: lax.cond(v[0] > 0, lambda u: lax.psum(u, "i"), lambda u: -u, v), axis_name="i")
signs = np.where(np.arange(P) % 2 == 0, 1.0, -1.0).astype(np.float32)[:, None] * np.abs(X[:, 0])
out = g(signs[p:p + 1])
want = signs.sum(0) if signs[p, 0] > 0 else -signs[p]
np.testing.assert_allclose(np.asarray(out[0]), want, rtol=1e-5)
print("ok")
