"""Run under mpirun (2 processes x 2 CPU devices) by tests/test_distributed_sharding.py: pmap across
processes under transformations (jit, grad, vjp, vmap of a pmap, and their compositions). Each process
passes its devices' slice of the mapped axis and gets its slice back, as an eager call does; the numbers
against NumPy in float64 (what one process mapping over all 4 devices computes: collectives span the
processes). Each process prints "ok" when its checks pass."""
import numpy as np

import xjax as jax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.sharded_array import ShardedArray

jax.distributed.initialize()
jax.config.update("jax_enable_x64", True)
me = jax.process_index()
MINE = slice(2 * me, 2 * me + 2)  # this process's devices' rows of the mapped axis (4 devices in all)
rng = np.random.default_rng(0)
X = rng.normal(size=(4, 3))
CT = rng.normal(size=(4, 3))
XS = rng.normal(size=(5, 4, 3))
x, ct = jnp.asarray(X[MINE]), jnp.asarray(CT[MINE])


def f(v):  # one device's program: its collectives over every process's devices
    return jnp.sin(v) * lax.psum(v, "i") + lax.axis_index("i")


pf = jax.pmap(f, axis_name="i")
S = X.sum(0)
REF = np.sin(X) * S + np.arange(4)[:, None]


def close(got, want):
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-12)


eager = pf(x)
close(eager, REF[MINE])
out = jax.jit(pf)(x)
assert type(out) is ShardedArray and out.sharding == eager.sharding and out.shape == (2, 3), out.sharding
close(out, REF[MINE])
close(jax.jit(lambda a: pf(a * 2) + 1)(x), (np.sin(2 * X) * 2 * S + np.arange(4)[:, None] + 1)[MINE])

# reverse mode: the cotangents of every process's slice meet in the psum's transpose
_, vjp = jax.vjp(pf, x)
(g,) = vjp(ct)
close(g, (np.cos(X) * S * CT + (np.sin(X) * CT).sum(0))[MINE])
grad_ref = (np.cos(X) * S + np.sin(X).sum(0))[MINE]
close(jax.grad(lambda a: pf(a).sum())(x), grad_ref)
close(jax.jit(jax.grad(lambda a: pf(a).sum()))(x), grad_ref)
loss = jax.pmap(lambda w, v: lax.psum((jnp.tanh(v * w)).sum(), "i"), axis_name="i", in_axes=(None, 0), out_axes=None)
w = jnp.asarray(np.linspace(0.5, 1.5, 3))
close(jax.grad(loss)(w, x), (X * (1 - np.tanh(X * np.linspace(0.5, 1.5, 3)) ** 2)).sum(0))
# vmap of a pmap: the batch axis in front of the mapped one
close(jax.vmap(pf)(jnp.asarray(XS[:, MINE])),
      (np.sin(XS) * XS.sum(1, keepdims=True) + np.arange(4)[:, None])[:, MINE])
close(jax.jit(jax.vmap(pf))(jnp.asarray(XS[:, MINE])),
      (np.sin(XS) * XS.sum(1, keepdims=True) + np.arange(4)[:, None])[:, MINE])
print("ok")
