"""Run under mpirun by tests/test_distributed.py: every collective across processes against NumPy,
and compositions (jit, grad, control flow) against vmap over the whole batch in one process.

Each process passes its devices' shards of one global batch X and checks its shards of the result.
Prints "ok <number of checks>" when all pass; an AssertionError ends the run (naming the case).
"""
import sys

import numpy as np

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.experimental import multihost_utils

try:  # a cross-process API before initialize() is an error under a multi-process launch
    multihost_utils.process_allgather(np.zeros(2))
    raise AssertionError("process_allgather ran before initialize()")
except RuntimeError as e:
    assert "initialize" in str(e), e

try:
    xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.ones((1, 3)))
    raise AssertionError("a pmap collective ran before initialize()")
except RuntimeError as e:
    assert "before xjax.distributed.initialize()" in str(e), e

xjax.distributed.initialize()
try:
    xjax.distributed.initialize()
    raise AssertionError("initialize twice did not fail")
except RuntimeError as e:
    assert "only be called once" in str(e), e

P, p = xjax.process_count(), xjax.process_index()
L = xjax.local_device_count()
N = xjax.device_count()
assert L == int(sys.argv[1]), (L, sys.argv)  # the devices per process asked for
assert N == P * L and len(xjax.devices()) == N
assert [d.process_index for d in xjax.devices()] == [q for q in range(P) for _ in range(L)]
assert [d.id for d in xjax.local_devices()] == list(range(p * L, p * L + L))
assert all(d.process_index == p for d in xjax.local_devices())
MINE = slice(p * L, p * L + L)

X = np.random.default_rng(0).standard_normal((N, N, 2 * N)).astype(np.float32)


def split(x, k, axis):
    return np.split(x, N, axis=axis)[k]


def each(f):
    return np.stack([f(j) for j in range(N)])


cyclic = [(i, (i + 1) % N) for i in range(N)]
partial = [(0, N - 1), (N - 1, 1)] if N > 2 else [(0, 1)]
received = dict((t, s) for s, t in partial)

CASES = {
    "psum": (lambda v: lax.psum(v, "i"), lambda X: np.broadcast_to(X.sum(0), X.shape)),
    "pmean": (lambda v: lax.pmean(v, "i"), lambda X: np.broadcast_to(X.mean(0), X.shape)),
    "pmax": (lambda v: lax.pmax(v, "i"), lambda X: np.broadcast_to(X.max(0), X.shape)),
    "pmin": (lambda v: lax.pmin(v, "i"), lambda X: np.broadcast_to(X.min(0), X.shape)),
    "psum_int32": (lambda v: lax.psum((v * 10).astype(jnp.int32), "i"),
                   lambda X: np.broadcast_to((X * 10).astype(np.int32).sum(0), X.shape)),
    "psum_bool": (lambda v: lax.psum(v > 0, "i"), lambda X: np.broadcast_to((X > 0).sum(0), X.shape)),
    "pmax_bool": (lambda v: lax.pmax(v > 1, "i"), lambda X: np.broadcast_to((X > 1).any(0), X.shape)),
    "psum_float16": (lambda v: lax.psum(v.astype(jnp.float16), "i").astype(jnp.float32),
                     lambda X: np.broadcast_to(X.astype(np.float16).astype(np.float32).sum(0)
                                                        .astype(np.float16).astype(np.float32), X.shape)),
    "psum_scalar": (lambda v: lax.psum(v[0, 0], "i"), lambda X: np.broadcast_to(X[:, 0, 0].sum(), (N,))),
    "all_gather": (lambda v: lax.all_gather(v, "i"), lambda X: np.stack([X] * N)),
    "all_gather_axis1": (lambda v: lax.all_gather(v, "i", axis=1), lambda X: each(lambda j: np.stack(list(X), 1))),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                         lambda X: each(lambda j: np.concatenate(list(X), axis=1))),
    "all_to_all": (lambda v: lax.all_to_all(v, "i", 0, 1),
                   lambda X: each(lambda j: np.stack([X[i, j] for i in range(N)], axis=1))),
    "all_to_all_0_0": (lambda v: lax.all_to_all(v, "i", 0, 0),
                       lambda X: each(lambda j: np.stack([X[i, j] for i in range(N)], axis=0))),
    "all_to_all_tiled": (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
                         lambda X: each(lambda j: np.concatenate([split(X[i], j, 1) for i in range(N)], 0))),
    "all_to_all_same_axis": (lambda v: lax.all_to_all(v, "i", 1, 1, tiled=True),
                             lambda X: each(lambda j: np.concatenate([split(X[i], j, 1) for i in range(N)], 1))),
    "ppermute": (lambda v: lax.ppermute(v, "i", cyclic), lambda X: X[[(j - 1) % N for j in range(N)]]),
    "ppermute_partial": (lambda v: lax.ppermute(v, "i", partial),
                         lambda X: np.stack([X[received[j]] if j in received else np.zeros_like(X[0])
                                             for j in range(N)])),
    "axis_index": (lambda v: lax.axis_index("i") + 0 * v.astype(jnp.int32),
                   lambda X: np.broadcast_to(np.arange(N, dtype=np.int32)[:, None, None], X.shape)),
    "axis_size": (lambda v: v * 0 + lax.psum(1, "i"), lambda X: np.full(X.shape, N, np.float32)),
    "psum_scatter": (lambda v: lax.psum_scatter(v, "i"), lambda X: X.sum(0)),
    "psum_scatter_tiled": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                           lambda X: each(lambda k: split(X.sum(0), k, 1))),
}

checks = 0
for name, (fun, ref) in CASES.items():
    got = np.asarray(xjax.pmap(fun, axis_name="i")(X[MINE]))
    want = np.asarray(ref(X))[MINE]
    assert got.shape == want.shape, (name, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=name)
    checks += 1

# As JAX's: the results are this process's blocks over the mesh of its devices, passed on as they are
y = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(X[MINE])
assert y.sharding.spec == xjax.P("i") and list(y.sharding.mesh.devices.flat) == xjax.local_devices(), y.sharding
z = xjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(y)
np.testing.assert_allclose(np.asarray(z), np.broadcast_to(N * X.sum(0), (L,) + X.shape[1:]), rtol=1e-4)
checks += 1


# Compositions: the same function pmapped over the processes and vmapped over the whole batch.
def loss(w, x):
    return lax.psum(jnp.sum(jnp.tanh(x @ w) ** 2), "i") / N


W = np.random.default_rng(1).standard_normal((2 * N, 3)).astype(np.float32)


def chain(v):  # compiled runs with collectives between them, a jitted part holding collectives
    s = lax.psum(v * 2.0, "i")
    inner = xjax.jit(lambda u: lax.pmax(jnp.sin(u) + s, "i") - lax.pmean(u, "i"))
    return inner(v) * lax.axis_index("i") + lax.all_gather(v.sum(), "i").sum()


COMPOSED = {
    "jit_grad_psum": (lambda w, x: xjax.jit(xjax.grad(loss))(w, x), (None, 0)),
    "grad_psum_then_pmean": (lambda w, x: lax.pmean(xjax.grad(loss)(w, x), "i"), (None, 0)),
    "value_and_grad": (lambda w, x: xjax.value_and_grad(lambda w: lax.pmean(jnp.sum(x @ w), "i"))(w), (None, 0)),
    "grad_all_gather": (lambda w, x: xjax.grad(lambda x: jnp.sum(lax.all_gather(x, "i") ** 3))(x), (None, 0)),
    "grad_ppermute": (lambda w, x: xjax.grad(lambda x: jnp.sum(lax.ppermute(x, "i", cyclic) * x[::-1]))(x), (None, 0)),
    "chain": (lambda w, x: chain(x), (None, 0)),
    "cond_with_psum": (lambda w, x: lax.cond(x[0, 0] > 0, lambda u: lax.psum(u, "i"), lambda u: -u, x), (None, 0)),
    "scan_with_psum": (lambda w, x: lax.scan(lambda c, r: (c + lax.psum(r, "i"), c), jnp.zeros(x.shape[1]), x)[1],
                       (None, 0)),
}
for name, (fun, in_axes) in COMPOSED.items():
    got = xjax.pmap(fun, axis_name="i", in_axes=in_axes)(W, X[MINE])
    want = xjax.vmap(fun, axis_name="i", in_axes=in_axes)(W, X)
    for g, w in zip(xjax.tree_util.tree_leaves(got), xjax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w)[MINE], rtol=2e-5, atol=2e-5, err_msg=name)
    checks += 1

# multihost_utils
every = multihost_utils.process_allgather({"a": jnp.arange(3) + 10 * p, "b": np.float32(p)})
np.testing.assert_array_equal(every["a"], np.arange(3)[None] + 10 * np.arange(P)[:, None])
np.testing.assert_array_equal(every["b"], np.arange(P, dtype=np.float32))
tiled = multihost_utils.process_allgather(np.full((2, 1), p), tiled=True)
np.testing.assert_array_equal(tiled[:, 0], np.repeat(np.arange(P), 2))
got = multihost_utils.broadcast_one_to_all({"x": np.full(4, p + 1.0, np.float32)})
np.testing.assert_array_equal(got["x"], np.full(4, 1.0, np.float32))
got = multihost_utils.broadcast_one_to_all(jnp.full((2,), p), is_source=p == P - 1)
np.testing.assert_array_equal(got, np.full(2, P - 1))
multihost_utils.sync_global_devices("end of checks")
multihost_utils.assert_equal(np.arange(5))
try:
    multihost_utils.assert_equal(np.array([p]))
    raise AssertionError("assert_equal passed on different values")
except AssertionError as e:
    assert "Expected equal" in str(e), e
checks += 1
print("ok", checks, flush=True)
