"""vmap of gather, the scatters, dynamic_slice and dynamic_update_slice (random batch axes, modes and
dtypes, against a Python loop), and of jnp indexing built on them."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batching_util import check_batch
from xjax import lax
from xjax._src.lax.indexing import GatherDimensionNumbers as GDN, ScatterDimensionNumbers as SDN

B = 3

# Per-example gathers: (operand shape, indices batch shape, dimension numbers, slice sizes).
GATHERS = [
    ((5, 4), (3,), GDN((1,), (0,), (0,)), (1, 4)),                       # x[idx]
    ((5, 4), (2, 2), GDN((2,), (1,), (1,)), (5, 1)),                     # x[:, idx]
    ((6, 5, 4), (3,), GDN((1, 2), (0,), (0, 2)), (1, 3, 2)),             # windows, two indexed dims
    ((3, 5), (3,), GDN((), (1,), (1,), (0,), (0,)), (1, 1)),             # batching dims of its own
    ((5, 4), (), GDN((0,), (0,), (0,)), (1, 4)),                         # one index vector
    ((5, 4, 3), (2,), GDN((0, 2), (1,), (1,)), (5, 1, 3)),               # offset dims around the batch
]


def _mapped(rng, shape, axis, make):
    """make(shape) for each example, stacked along `axis` (None: one unmapped value)."""
    if axis is None:
        return make(shape)
    return np.stack([make(shape) for _ in range(B)], axis % (len(shape) + 1))


def _axes(rng, ranks, must=None):
    """A batch axis (or None) per argument of the given per-example ranks; at least one mapped."""
    while True:
        axes = [None if rng.random() < 0.3 else int(rng.integers(-(r + 1), r + 1)) for r in ranks]
        if must is not None:
            axes[must] = axes[must] if axes[must] is not None else 0
        if any(a is not None for a in axes):
            return tuple(axes)


def _values(rng, dtype):
    def make(shape):
        if dtype == np.bool_:
            return rng.random(shape) < 0.5
        if np.issubdtype(dtype, np.integer):
            return rng.integers(-9, 10, shape).astype(dtype)
        return rng.standard_normal(shape).astype(dtype)
    return make


def _indices(rng, operand_shape, dn, sizes, in_bounds):
    """Index vectors for start_index_map: in bounds, or reaching a little past both ends."""
    def make(shape):
        cols = []
        for d in dn.start_index_map:
            hi = operand_shape[d] - sizes[d]
            cols.append(rng.integers(0, hi + 1, shape[:-1]) if in_bounds else rng.integers(-2, hi + 3, shape[:-1]))
        return np.stack(cols, -1).astype(np.int32)
    return make


@pytest.mark.parametrize("case", range(len(GATHERS)))
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("jit", [False, True])
def test_gather(case, mode, jit):
    rng = np.random.default_rng(case * 7 + len(mode) + jit)
    shape, batch, dn, sizes = GATHERS[case]
    idx_shape = batch + (len(dn.start_index_map),)
    for dtype in (np.float32, np.int32, np.bool_):
        xa, ia = _axes(rng, (len(shape), len(idx_shape) - 1))  # never the index vector axis of the indices
        x = _mapped(rng, shape, xa, _values(rng, dtype))
        idx = _mapped(rng, idx_shape, ia, _indices(rng, shape, dn, sizes, mode == "promise_in_bounds"))
        fill = None if dtype == np.bool_ else 7
        f = lambda x, i: lax.gather(x, i, dn, sizes, mode=mode, fill_value=fill)  # noqa: E731
        check_batch(f, (x, idx), in_axes=(xa, ia), jit=jit)


def test_gather_indices_mapped_along_their_last_axis():
    # Per-example indices (3, 1) mapped along axis -1 of (3, 1, B): the index vector axis moves back.
    rng = np.random.default_rng(0)
    shape, _, dn, sizes = GATHERS[0]
    x = rng.standard_normal(shape).astype(np.float32)
    idx = rng.integers(0, 5, (3, 1, B)).astype(np.int32)
    check_batch(lambda x, i: lax.gather(x, i, dn, sizes, mode="clip"), (x, idx), in_axes=(None, -1))


def _scatter_dn(dn):
    return SDN(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map, dn.operand_batching_dims,
               dn.start_indices_batching_dims)


def _unique_indices(rng, operand_shape, dn):
    """Distinct index vectors (scatter with collisions leaves the winner to the backend)."""
    def make(shape):
        dims = [operand_shape[d] for d in dn.scatter_dims_to_operand_dims]
        flat = rng.choice(int(np.prod(dims)), int(np.prod(shape[:-1], dtype=int)), replace=False)
        return np.stack(np.unravel_index(flat, dims), -1).astype(np.int32).reshape(shape)
    return make


SCATTERS = [lax.scatter, lax.scatter_add, lax.scatter_mul, lax.scatter_min, lax.scatter_max]


@pytest.mark.parametrize("case", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("scatter", SCATTERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("mode", ["clip", "drop", "promise_in_bounds"])
@pytest.mark.parametrize("jit", [False, True])
def test_scatter(case, scatter, mode, jit):
    rng = np.random.default_rng(case * 11 + len(mode) + jit)
    shape, batch, gdn, sizes = GATHERS[case]
    dn = _scatter_dn(gdn)
    idx_shape = batch + (len(dn.scatter_dims_to_operand_dims),)
    u_shape = xjax.eval_shape(lambda x, i: lax.gather(x, i, gdn, sizes), np.zeros(shape, np.float32),
                              np.zeros(idx_shape, np.int32)).shape
    dtypes = (np.float32, np.int32) + ((np.bool_,) if scatter is lax.scatter else ())
    for dtype in dtypes:
        xa, ia, ua = _axes(rng, (len(shape), len(idx_shape) - 1, len(u_shape)))
        x = _mapped(rng, shape, xa, _values(rng, dtype))
        if scatter is lax.scatter:  # no collisions: one winner per element
            if case == 2:
                continue  # overlapping windows
            make_idx = _unique_indices(rng, shape, dn)
        else:
            make_idx = _indices(rng, shape, gdn, sizes, mode == "promise_in_bounds")
        idx = _mapped(rng, idx_shape, ia, make_idx)
        u = _mapped(rng, u_shape, ua, _values(rng, dtype))
        f = lambda x, i, u: scatter(x, i, u, dn, mode=mode)  # noqa: E731
        check_batch(f, (x, idx, u), in_axes=(xa, ia, ua), jit=jit, rtol=1e-5, atol=1e-5)


def test_scatter_add_drops_out_of_bounds_windows_per_example():
    # Example 0 writes in bounds, example 1 out of bounds (dropped), example 2 at the clipped edge.
    x = np.zeros((3, 4), np.float32)
    idx = np.array([[[1]], [[9]], [[-1]]], np.int32)
    dn = SDN((), (0,), (0,))
    u = np.ones((3, 1), np.float32)
    drop = xjax.vmap(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode="drop"))(x, idx, u)
    np.testing.assert_array_equal(drop, [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
    clip = xjax.vmap(lambda x, i, u: lax.scatter_add(x, i, u, dn, mode="clip"))(x, idx, u)
    np.testing.assert_array_equal(clip, [[0, 1, 0, 0], [0, 0, 0, 1], [1, 0, 0, 0]])


# ---- dynamic_slice / dynamic_update_slice -----------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("jit", [False, True])
def test_dynamic_slice(seed, jit):
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 6, rng.integers(1, 4)))
    sizes = tuple(int(rng.integers(0, s + 1)) for s in shape)
    idx_dtype = [np.int32, np.int16, np.uint8, np.int8][seed % 4]
    dtype = [np.float32, np.int32][seed % 2]
    axes = _axes(rng, (len(shape),) + (0,) * len(shape))
    x = _mapped(rng, shape, axes[0], _values(rng, dtype))
    lo = 0 if idx_dtype == np.uint8 else -7
    starts = [_mapped(rng, (), a, lambda s: rng.integers(lo, 8, s).astype(idx_dtype)) for a in axes[1:]]
    f = lambda x, *i: lax.dynamic_slice(x, i, sizes)  # noqa: E731
    check_batch(f, (x, *starts), in_axes=axes, jit=jit)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("jit", [False, True])
def test_dynamic_update_slice(seed, jit):
    rng = np.random.default_rng(100 + seed)
    shape = tuple(int(s) for s in rng.integers(1, 6, rng.integers(1, 4)))
    u_shape = tuple(int(rng.integers(0, s + 1)) for s in shape)
    dtype = [np.float32, np.int32][seed % 2]
    axes = _axes(rng, (len(shape), len(shape)) + (0,) * len(shape))
    x = _mapped(rng, shape, axes[0], _values(rng, dtype))
    u = _mapped(rng, u_shape, axes[1], _values(rng, dtype))
    starts = [_mapped(rng, (), a, lambda s: rng.integers(-7, 8, s).astype(np.int32)) for a in axes[2:]]
    f = lambda x, u, *i: lax.dynamic_update_slice(x, u, i)  # noqa: E731
    check_batch(f, (x, u, *starts), in_axes=axes, jit=jit)


def test_dynamic_slice_with_unmapped_starts_is_a_gather_as_in_jax():
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    jaxpr = xjax.make_jaxpr(xjax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), in_axes=(0, None)))(x, 1)
    assert "gather" in {e.primitive.name for e in jaxpr.jaxpr.eqns}
    assert "dynamic_slice" not in {e.primitive.name for e in jaxpr.jaxpr.eqns}
    np.testing.assert_array_equal(xjax.vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), in_axes=(0, None))(x, 5),
                                  x[:, 4:6])


def test_dynamic_slice_mapped_starts_clamp_per_example():
    x = np.arange(6, dtype=np.float32)
    got = xjax.vmap(lambda i: lax.dynamic_slice(x, (i,), (3,)))(np.array([-9, -2, 2, 5], np.int32))
    np.testing.assert_array_equal(got, [[0, 1, 2], [3, 4, 5], [2, 3, 4], [3, 4, 5]])
    got = xjax.vmap(lambda i: lax.dynamic_update_slice(x, np.full(2, -1, np.float32), (i,)))(
        np.array([-1, 0, 9], np.int32))
    np.testing.assert_array_equal(got, [[0, 1, 2, 3, -1, -1], [-1, -1, 2, 3, 4, 5], [0, 1, 2, 3, -1, -1]])


# ---- jnp indexing under vmap ----------------------------------------------------------------

R = np.random.default_rng(3)
X = R.standard_normal((4, 5, 6)).astype(np.float32)
I = np.array([0, -1, 3, 2], np.int32)
IDX = R.integers(-5, 5, (4, 3)).astype(np.int32)
U = R.standard_normal((4, 6)).astype(np.float32)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fun,args,in_axes", [
    (lambda x, i: x[i], (X, I), (0, 0)),
    (lambda x, i: x[i], (X[0], I), (None, 0)),
    (lambda x, i: x[i, 2], (X, I), (0, 0)),
    (lambda x, i: x[1:4, i], (X, I), (0, 0)),
    (lambda x, i: x[..., i], (np.moveaxis(X, 0, 1), I), (1, 0)),
    (lambda x, i: x[i], (X, IDX), (0, 0)),
    (lambda x, i: x[i], (X[0], IDX), (None, 0)),
    (lambda x, i: x[i], (X, IDX[0]), (2, None)),
    (lambda x, i: x[:, i], (X, IDX), (0, 0)),
    (lambda x, i: x[i, i], (X[:, :5, :5], IDX), (0, 0)),
    (lambda x, i: x[i, 1:3], (X, IDX), (0, 0)),
    (lambda x, i: x.at[i].get(mode="fill", fill_value=-1.0), (X, IDX * 3), (0, 0)),
    (lambda x, i: jnp.take(x, i, axis=1), (X, IDX), (0, 0)),
    (lambda x, i: jnp.take(x, i, axis=0, mode="clip"), (X[0], IDX * 2), (None, 0)),
    (lambda x, i: jnp.take(x, i, axis=-1, mode="wrap"), (X, IDX * 2), (0, 0)),
    (lambda x, i: jnp.take(x, i), (X, IDX * 3), (0, 0)),
    (lambda x, i: jnp.take_along_axis(x, i, axis=1), (X, R.integers(-6, 6, (4, 5, 3)).astype(np.int32)), (0, 0)),
    (lambda x, i: jnp.take_along_axis(x, i, axis=0), (X[0], R.integers(0, 5, (4, 3, 1)).astype(np.int32)), (None, 0)),
    (lambda x, i: jnp.take_along_axis(x, i, axis=-1), (X, np.abs(IDX[0])[None, :] % 6), (0, None)),
])
def test_jnp_getitem(fun, args, in_axes, jit):
    check_batch(lambda x, i: fun(jnp.asarray(x), i), args, in_axes=in_axes, jit=jit)


def test_batched_scalar_index_against_numpy():
    np.testing.assert_array_equal(xjax.vmap(lambda x, i: x[i])(X, I), X[np.arange(4), I])
    np.testing.assert_array_equal(xjax.vmap(lambda i: jnp.asarray(X[0])[i])(IDX), X[0][IDX])
    np.testing.assert_array_equal(xjax.jit(xjax.vmap(lambda x, i: jnp.take(x, i, axis=1)))(X, np.abs(IDX)),
                                  np.stack([np.take(X[b], np.abs(IDX[b]), axis=1) for b in range(4)]))


UPDATES = ["set", "add", "multiply", "min", "max"]


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("method", UPDATES)
@pytest.mark.parametrize("mode", [None, "clip", "drop", "promise_in_bounds"])
def test_jnp_at_updates(method, mode, jit):
    rng = np.random.default_rng(len(method) + jit)
    kwargs = {} if mode is None else {"mode": mode}
    in_bounds = mode == "promise_in_bounds"
    idx = np.stack([rng.permutation(5)[:3] for _ in range(4)]).astype(np.int32)  # unique per example
    if not in_bounds:
        idx[:, 0] -= 5  # negative indices count from the end
        idx[1, 1] = 7  # out of bounds: clipped, dropped, or (default) dropped
    u = rng.standard_normal((4, 3, 6)).astype(np.float32)

    def upd(x, i, v):
        return getattr(jnp.asarray(x).at[i], method)(v, **kwargs)

    def upd_scalar_index(x, i, v):
        return getattr(jnp.asarray(x).at[i], method)(v, **kwargs)

    for in_axes in [(0, 0, 0), (None, 0, 0), (0, None, 0), (0, 0, None), (None, None, 0), (1, 0, 2), (-1, -1, -1)]:
        args = [a[0] if ax is None else np.moveaxis(a, 0, ax) for a, ax in zip((X, idx, u), in_axes)]
        check_batch(upd, args, in_axes=in_axes, jit=jit, rtol=1e-6, atol=1e-6)
    check_batch(upd_scalar_index, (X, I, U), jit=jit, rtol=1e-6, atol=1e-6)
    check_batch(upd_scalar_index, (X[0], I, U[0]), in_axes=(None, 0, None), jit=jit, rtol=1e-6, atol=1e-6)


def test_at_add_with_batched_indices_against_numpy():
    idx = np.array([[0, 0, 1], [4, 4, 4], [2, 3, 2], [1, 2, 3]], np.int32)  # repeats add up
    got = xjax.vmap(lambda x, i: x.at[i].add(1.0))(np.zeros((4, 5), np.float32), idx)
    want = np.zeros((4, 5), np.float32)
    for b in range(4):
        np.add.at(want[b], idx[b], 1.0)
    np.testing.assert_array_equal(got, want)
