"""Run under mpirun (2 processes x 2 CPU devices) by tests/test_distributed_sharding.py: a 2x2 mesh
over every process's devices, 'data' over the processes or over each process's devices (argv[2]).

  arrays:      global arrays from global, process-local and per-device data, their blocks, errors
  collectives: shard_map's collectives against a loop over the blocks
  training:    data- and tensor-parallel (Megatron) training against one device's losses
  whole:       (1 device per process: a mesh of one axis) a per-device training step compiled whole,
               its all-reduces in the core as pmap's, against one device's losses
Each process prints "ok <case>" when its checks pass; argv[3], when given, is XJAX_NUM_THREADS."""
import os
import sys

import numpy as np
import pytest

if len(sys.argv) > 3:  # (read when xjax starts)
    os.environ["XJAX_NUM_THREADS"] = sys.argv[3]

import xjax as jax  # noqa: E402
import xjax.numpy as jnp  # noqa: E402
from xjax import lax  # noqa: E402
from xjax.experimental import multihost_utils as mh  # noqa: E402
from xjax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

jax.distributed.initialize()
case, layout = sys.argv[1], sys.argv[2]
me = jax.process_index()
if case != "whole":
    grid = np.array(jax.devices()).reshape(2, 2)  # row p: process p's devices
    mesh = Mesh(grid if layout == "processes" else grid.T, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
x_np = np.arange(32, dtype=np.float32).reshape(8, 4)


def blocks(a):
    """a's blocks as a loop sees them under P('data', 'model'): [data position][model position]."""
    r, c = a.shape[0] // 2, a.shape[1] // 2
    return [[a[i * r:(i + 1) * r, j * c:(j + 1) * c] for j in range(2)] for i in range(2)]


def check(x, want):
    """x's global value (gathered from every process) and this process's blocks are want's."""
    np.testing.assert_array_equal(mh.process_allgather(x), want)
    assert len(x.addressable_shards) == 2 and all(s.device.process_index == me for s in x.addressable_shards)
    for s in x.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), want[s.index])


def arrays():
    assert len(jax.devices()) == 4 and jax.local_devices() == [d for d in jax.devices() if d.process_index == me]
    s = NamedSharding(mesh, P("data", "model"))
    x = jax.device_put(x_np, s)
    assert not x.is_fully_addressable and x.shape == (8, 4) and len(x.global_shards) == 4
    check(x, x_np)
    with pytest.raises(RuntimeError, match="spans non-addressable"):
        np.asarray(x)
    assert repr(x) == "Array(shape=(8, 4), dtype=float32)"
    check(jax.device_put(x, NamedSharding(mesh, P())), x_np)  # (its blocks gathered across processes)
    check(jax.device_put(x, NamedSharding(mesh, P("model", "data"))), x_np)
    other = Mesh(mesh.devices.T, ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    with pytest.raises(NotImplementedError, match="resharding an array that spans processes"):
        jax.device_put(x, NamedSharding(other, P()))
    check(x * 2 + 1, x_np * 2 + 1)  # eager elementwise: block by block
    # eager ops needing other processes' blocks: partitioned as a jitted call is
    np.testing.assert_allclose(np.asarray(x.sum()), x_np.sum(), rtol=1e-6)
    check(x.sum(axis=0), x_np.sum(axis=0))
    np.testing.assert_allclose(mh.process_allgather(x.T @ x), x_np.T @ x_np, rtol=1e-6)
    check(jnp.cumsum(x, axis=1), np.cumsum(x_np, axis=1))
    check(jax.make_array_from_callback((8, 4), s, lambda idx: x_np[idx]), x_np)
    mine = [jnp.asarray(x_np[d_idx]) for d_idx in s.addressable_devices_indices_map((8, 4)).values()]
    check(jax.make_array_from_single_device_arrays((8, 4), s, mine), x_np)
    with pytest.raises(ValueError, match="Expected 2 per-device arrays"):
        jax.make_array_from_single_device_arrays((8, 4), s, mine[:1])
    # process-local data: each process's share of the rows along 'data' (all of them where 'data'
    # runs over its own devices), whole along unsplit dimensions
    rows = NamedSharding(mesh, P("data"))
    local = x_np[4 * me:4 * me + 4] if layout == "processes" else x_np
    r = jax.make_array_from_process_local_data(rows, local)
    check(r, x_np)
    if layout == "devices":  # this process holds every block: its value is readable, as in JAX
        np.testing.assert_array_equal(np.asarray(r), x_np)
    check(jax.make_array_from_process_local_data(rows, local, (8, 4)), x_np)
    cols = NamedSharding(mesh, P(None, "model"))
    local = x_np[:, 2 * me:2 * me + 2] if layout == "devices" else x_np
    check(jax.make_array_from_process_local_data(cols, local), x_np)
    with pytest.raises(ValueError, match="In dimension 0, the process data has 3 elements"):
        jax.make_array_from_process_local_data(rows, x_np[:3], (8, 4))
    check(jax.make_array_from_process_local_data(NamedSharding(mesh, P()), x_np), x_np)


def collectives():
    b = blocks(x_np)
    x = jax.device_put(x_np, NamedSharding(mesh, P("data", "model")))

    def sm(f, in_specs, out_specs, *args, check_vma=True):
        return jax.shard_map(f, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=check_vma)(*(args or (x,)))

    check(sm(lambda a: lax.psum(a, "data"), P("data", "model"), P(None, "model")),
          np.concatenate([b[0][j] + b[1][j] for j in range(2)], 1))
    check(sm(lambda a: lax.psum(a, "model"), P("data", "model"), P("data")),
          np.concatenate([b[i][0] + b[i][1] for i in range(2)], 0))
    check(sm(lambda a: lax.psum(a, ("model", "data")), P("data", "model"), P()), sum(b[i][j] for i in range(2)
                                                                                    for j in range(2)))
    check(sm(lambda a: lax.pmax(a, "data") - lax.pmin(a, "model"), P("data", "model"), P("data", "model")),
          np.block([[np.maximum(b[0][j], b[1][j]) - np.minimum(b[i][0], b[i][1]) for j in range(2)] for i in range(2)]))
    check(sm(lambda a: a * (10 * lax.axis_index("data") + lax.axis_index("model")), P("data", "model"),
             P("data", "model")), np.block([[b[i][j] * (10 * i + j) for j in range(2)] for i in range(2)]))
    # (all_gather's result is typed varying over "data", as in JAX: replicating it needs check_vma=False)
    check(sm(lambda a: lax.all_gather(a, "data", tiled=True), P("data", "model"), P(None, "model"), check_vma=False),
          x_np)
    check(sm(lambda a: lax.ppermute(a, "data", [(0, 1), (1, 0)]), P("data", "model"), P("data", "model")),
          np.concatenate([x_np[4:], x_np[:4]]))
    check(sm(lambda a: lax.psum_scatter(a, "model", scatter_dimension=1, tiled=True), P("data"), P("data", "model"),
             x_np), 2 * x_np)
    check(sm(lambda a: lax.all_to_all(a, "model", 1, 0, tiled=True), P("data", "model"), P("data", "model")),
          np.block([[np.concatenate([b[i][k][:, j:j + 1] for k in range(2)], 0) for j in range(2)] for i in range(2)]))
    # several psums of one gradient in one exchange; an int pmax; a collective inside a scan
    w = jax.device_put(x_np, NamedSharding(mesh, P()))
    g = jax.grad(lambda w: sm(lambda a, w: lax.psum(jnp.sum(jnp.tanh(a * w[:4, :2]) ** 2), ("data", "model")),
                              (P("data", "model"), P()), P(), x, w))(w)
    ref = np.zeros_like(x_np, dtype=np.float64)
    for i in range(2):
        for j in range(2):
            t = np.tanh(b[i][j].astype(np.float64) * x_np[:4, :2])
            ref[:4, :2] += 2 * t * (1 - t * t) * b[i][j]
    np.testing.assert_allclose(mh.process_allgather(g), ref, rtol=1e-5, atol=1e-6)
    check(sm(lambda a: lax.pmax(a.astype(jnp.int32), "data"), P("data", "model"), P(None, "model")),
          np.concatenate([np.maximum(b[0][j], b[1][j]) for j in range(2)], 1).astype(np.int32))
    with pytest.raises(NotImplementedError, match=r"holding \[2, 1\] devices of the processes"):
        jax.shard_map(lambda a: lax.psum(a, "i"), mesh=Mesh(np.array(jax.devices()[:3]), ("i",)), in_specs=P("i"),
                      out_specs=P())(np.zeros(3, np.float32))
    scan = lambda a: lax.scan(lambda c, r: (c + lax.psum(r, "data"), None),  # noqa: E731
                              lax.pcast(jnp.zeros(a.shape[1:]), "model", to="varying"), a)[0]
    check(sm(lambda a: scan(a)[None], P("data", "model"), P(None, "model")),
          np.concatenate([(b[0][j] + b[1][j]).sum(0, keepdims=True) for j in range(2)], 1))


_MLP_DATA = np.random.default_rng(0)
D, H, O, N = 8, 16, 4, 32
XS = _MLP_DATA.normal(size=(N, D)).astype(np.float32)
YS = _MLP_DATA.normal(size=(N, O)).astype(np.float32)
PARAMS = {"w1": _MLP_DATA.normal(size=(D, H)).astype(np.float32) / 3, "b1": np.zeros(H, np.float32),
          "w2": _MLP_DATA.normal(size=(H, O)).astype(np.float32) / 4, "b2": np.zeros(O, np.float32)}


def loss_one(p, a, y):
    return jnp.mean((jax.nn.relu(a @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"] - y) ** 2)


def train(loss, p, steps=6, lr=0.1):
    losses = []
    for _ in range(steps):
        loss_value, g = jax.value_and_grad(loss)(p)
        p = jax.tree.map(lambda v, gv: v - lr * gv, p, g)
        losses.append(float(loss_value))
    return losses


def training():
    reference = train(lambda p: loss_one(p, XS, YS), {k: jnp.asarray(v) for k, v in PARAMS.items()})
    # the batch from each process's rows: its share of the 'data' axis (all rows where 'data' is local)
    batch = NamedSharding(mesh, P("data"))
    mine = slice(16 * me, 16 * me + 16) if layout == "processes" else slice(None)
    xs, ys = (jax.make_array_from_process_local_data(batch, a[mine]) for a in (XS, YS))
    # data parallel: the batch split over both axes, the parameters replicated
    both = P(("data", "model"))
    xs2, ys2 = (jax.device_put(a, NamedSharding(mesh, both)) for a in (XS, YS))

    def dp(p):
        local = lambda p, a, y: lax.pmean(loss_one(p, a, y), ("data", "model"))  # noqa: E731
        return jax.shard_map(local, mesh=mesh, in_specs=(P(), both, both), out_specs=P())(p, xs2, ys2)

    replicated = {k: jax.device_put(v, NamedSharding(mesh, P())) for k, v in PARAMS.items()}
    np.testing.assert_allclose(train(dp, replicated), reference, rtol=2e-6)

    # Megatron: w1 split by columns, w2 by rows over 'model', the psum where the row-parallel layer ends
    def tp_local(p, a, y):
        hidden = jax.nn.relu(a @ p["w1"] + p["b1"])
        out = lax.psum(hidden @ p["w2"], "model") + p["b2"]
        return lax.pmean(jnp.mean((out - y) ** 2), "data")

    specs = {"w1": P(None, "model"), "b1": P("model"), "w2": P("model", None), "b2": P()}

    def tp(p):
        return jax.shard_map(tp_local, mesh=mesh, in_specs=(specs, P("data"), P("data")), out_specs=P())(p, xs, ys)

    placed = {k: jax.device_put(v, NamedSharding(mesh, specs[k])) for k, v in PARAMS.items()}
    got = train(tp, placed)
    np.testing.assert_allclose(got, reference, rtol=2e-6)
    assert reference[-1] < reference[0]
    mh.assert_equal(np.asarray(got))
    grads = jax.grad(tp)(placed)  # split as the parameters: each device's share of the layers
    assert [grads[k].addressable_shards[0].data.shape for k in ("w1", "b1", "w2")] == [(8, 8), (8,), (8, 4)]
    if me == 0:
        print("bits", np.asarray(got, np.float32).tobytes().hex())


def whole():
    line = jax.make_mesh((2,), ("data",), axis_types=(AxisType.Auto,))
    reference = train(lambda p: loss_one(p, XS, YS), {k: jnp.asarray(v) for k, v in PARAMS.items()})

    def step(p, a, y):  # each device's gradient, pmean'd (check_vma=False: pmap's semantics)
        loss_value, g = jax.value_and_grad(loss_one)(p, a, y)
        g = lax.pmean(g, "data")
        return lax.pmean(loss_value, "data"), jax.tree.map(lambda v, gv: v - 0.1 * gv, p, g)

    sm = jax.shard_map(step, mesh=line, in_specs=(P(), P("data"), P("data")), out_specs=(P(), P()), check_vma=False)
    p, got = {k: jax.device_put(v, NamedSharding(line, P())) for k, v in PARAMS.items()}, []
    for _ in range(6):
        loss_value, p = sm(p, XS, YS)
        got.append(float(loss_value))
    np.testing.assert_allclose(got, reference, rtol=2e-6)
    from xjax._src.lax import parallel_core
    from xjax._src.shard_map import _programs
    if parallel_core.CORE_MPI:  # (a core built with the MPI shim): the whole-program path ran
        assert all(program._whole for program, _ in _programs.values())


{"arrays": arrays, "collectives": collectives, "training": training, "whole": whole}[case]()
print("ok", case)
