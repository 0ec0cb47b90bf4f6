"""Run under mpirun (2 processes x 2 CPU devices) by tests/test_distributed_sharding.py: plain jit over
arrays spanning both processes, partitioned (partition.py) with its collectives across them
(mesh_across.MeshPlace), 'data' over the processes or over each process's devices (argv[2]).

  training: jitted data-parallel and Megatron steps, and a training loop inside lax.scan, against
            one device's losses; the partitioned plan ran (sharded results, nothing gathered whole)
  reshard:  programs whose layouts need other processes' blocks (a cumulative sum along a split
            dimension, a transpose times itself, out_shardings, device_put) and loops and conds
            holding collectives against NumPy
Each process prints "ok <case>" when its checks pass; argv[3], when given, is XJAX_NUM_THREADS."""
import os
import sys

import numpy as np

if len(sys.argv) > 3:  # (read when xjax starts)
    os.environ["XJAX_NUM_THREADS"] = sys.argv[3]

import xjax as jax  # noqa: E402
import xjax.numpy as jnp  # noqa: E402
from xjax import lax  # noqa: E402
from xjax._src import program_control  # noqa: E402
from xjax._src.sharded_array import ShardedArray  # noqa: E402
from xjax.experimental import multihost_utils as mh  # noqa: E402
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.distributed.initialize()
program_control.MIN_WORK = 0  # (these small loops holding collectives driven per device, as large ones are)
case, layout = sys.argv[1], sys.argv[2]
me = jax.process_index()
grid = np.array(jax.devices()).reshape(2, 2)  # row p: process p's devices
mesh = Mesh(grid if layout == "processes" else grid.T, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
rng = np.random.default_rng(0)
D, H, O, N = 8, 16, 4, 32
XS = rng.normal(size=(N, D)).astype(np.float32)
YS = rng.normal(size=(N, O)).astype(np.float32)
PARAMS = {"w1": rng.normal(size=(D, H)).astype(np.float32) / 3, "b1": np.zeros(H, np.float32),
          "w2": rng.normal(size=(H, O)).astype(np.float32) / 4, "b2": np.zeros(O, np.float32)}


def put(v, *spec):
    return jax.device_put(v, NamedSharding(mesh, P(*spec)))


def value(x):
    """x's global value: gathered from every process where x spans them."""
    return mh.process_allgather(x) if type(x) is ShardedArray else np.asarray(x)


def loss(p, a, y):
    return jnp.mean((jnp.tanh(a @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)


@jax.jit
def step(p, a, y):
    value, g = jax.value_and_grad(loss)(p, a, y)
    return jax.tree.map(lambda v, d: v - 0.1 * d, p, g), value


@jax.jit
def steps_in_scan(p, a, y):  # the batch cut into 4 steps, each an SGD step
    return lax.scan(lambda q, b: step(q, *b), p, (a.reshape(4, -1, D), y.reshape(4, -1, O)))


def train(p, a, y, n=4):
    losses = []
    for _ in range(n):
        p, loss_value = step(p, a, y)
        assert (type(loss_value) is ShardedArray) == (type(a) is ShardedArray)  # (partitioned, not gathered)
        losses.append(float(value(loss_value)))
    return p, losses


def training():
    whole = {k: jnp.asarray(v) for k, v in PARAMS.items()}
    q_ref, reference = train(whole, jnp.asarray(XS), jnp.asarray(YS))
    megatron = {"w1": (None, "model"), "b1": ("model",), "w2": ("model",), "b2": ()}
    for p, batch in [({k: put(v) for k, v in PARAMS.items()}, (("data", "model"),)),
                     ({k: put(v, *megatron[k]) for k, v in PARAMS.items()}, ("data",))]:
        a, y = put(XS, *batch), put(YS, *batch)
        q, got = train(p, a, y)
        np.testing.assert_allclose(got, reference, rtol=1e-5)
        for k in q:
            assert q[k].sharding.spec == p[k].sharding.spec
            np.testing.assert_allclose(value(q[k]), np.asarray(q_ref[k]), rtol=1e-5, atol=1e-6)
        mh.assert_equal(np.asarray(got))
    q1, l1 = steps_in_scan(whole, jnp.asarray(XS), jnp.asarray(YS))
    # (the rows of each step split over 'data': the batch as (4, 8, D) split along its second dimension)
    q, got = steps_in_scan({k: put(v) for k, v in PARAMS.items()}, put(XS, "data"), put(YS, "data"))
    np.testing.assert_allclose(value(got), np.asarray(l1), rtol=1e-5)
    for k in q:
        np.testing.assert_allclose(value(q[k]), np.asarray(q1[k]), rtol=1e-5, atol=1e-6)
    if me == 0:
        print("bits", np.asarray(got._shards[0]).tobytes().hex())


def doubled(v):
    while (v.astype(np.float64) ** 2).sum() < 1e4:
        v = v * 2
    return v


def reshard():
    x_np = rng.normal(size=(8, 4)).astype(np.float32)
    x = put(x_np, "data", "model")
    for f, want in [(lambda a: jnp.cumsum(a, 0), np.cumsum(x_np, 0)),
                    (lambda a: a.T @ a, x_np.T @ x_np),
                    (lambda a: jnp.sort(a, 0)[::2] * a.sum(), np.sort(x_np, 0)[::2] * x_np.sum()),
                    # control flow whose bodies hold collectives, driven per device (program_control.py)
                    (lambda a: lax.while_loop(lambda c: jnp.sum(c * c) < 1e4, lambda c: c * 2.0, a), doubled(x_np)),
                    (lambda a: lax.fori_loop(0, (a[0, 0] * 0).astype(jnp.int32) + 2,  # (a traced bound: a while)
                                             lambda i, c: c + a.T @ a, a[:4] * 0), 2 * x_np.T @ x_np),
                    (lambda a: lax.cond(a.sum() > 0, lambda u: u @ u.T, lambda u: -(u @ u.T), a),
                     np.sign(x_np.sum()) * x_np @ x_np.T)]:
        out = jax.jit(f)(x)
        assert type(out) is ShardedArray
        np.testing.assert_allclose(mh.process_allgather(out), want, rtol=1e-5, atol=1e-5)
    out = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P(None, "data")))(x)
    assert out.sharding.spec == P(None, "data")
    np.testing.assert_allclose(mh.process_allgather(out), x_np * 2)
    for s in out.addressable_shards:
        np.testing.assert_allclose(np.asarray(s.data), x_np[s.index] * 2)
    for spec in [P(), P("model", "data"), P(("model", "data")), P(None, "data")]:  # device_put's resharding
        y = jax.device_put(x, NamedSharding(mesh, spec))
        assert y.sharding.spec == spec
        for s in y.addressable_shards:
            np.testing.assert_array_equal(np.asarray(s.data), x_np[s.index])


{"training": training, "reshard": reshard}[case]()
print("ok", case)
