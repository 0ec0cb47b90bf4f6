"""vmap of dot_general (random dimension numbers, batch axes and dtypes) and of jnp.dot/matmul/einsum."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batching_util import check_batch
from xjax import lax

B = 3
R = np.random.default_rng(7)
DTYPES = [(np.float32, None), (np.int32, None), (np.float16, np.float32), (np.int8, np.int32)]


def _data(rng, shape, dtype):
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-4, 5, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _batched(rng, shape, axis, dtype):
    """Data of per-example `shape` mapped along `axis` (None: unmapped), and that axis."""
    if axis is None:
        return _data(rng, shape, dtype)
    full = list(shape)
    full.insert(axis % (len(shape) + 1), B)
    return _data(rng, tuple(full), dtype)


def _random_dot(rng):
    """(lhs shape, rhs shape, dimension_numbers): batch, contracting and free dims in random order."""
    nb, nc, nl, nr = rng.integers(0, 3), rng.integers(0, 3), rng.integers(0, 3), rng.integers(0, 3)
    batch, contract = rng.integers(1, 4, nb), rng.integers(1, 4, nc)
    dims = {}
    for side, nfree in (("l", nl), ("r", nr)):
        kinds = [("b", i) for i in range(nb)] + [("c", i) for i in range(nc)] + [("f", i) for i in range(nfree)]
        order = [kinds[i] for i in rng.permutation(len(kinds))]
        free = rng.integers(1, 4, nfree)
        shape = tuple(int({"b": batch, "c": contract, "f": free}[k][i]) for k, i in order)
        dims[side] = (shape, [order.index(("b", i)) for i in range(nb)], [order.index(("c", i)) for i in range(nc)])
    (ls, lb, lc), (rs, rb, rc) = dims["l"], dims["r"]
    return ls, rs, ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))


def _axis(rng, ndim):
    """A batch axis for a per-example rank: any of the batched value's axes, often negative."""
    return int(rng.integers(-(ndim + 1), ndim + 1))


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("jit", [False, True])
def test_dot_general_random(seed, jit):
    rng = np.random.default_rng(seed)
    ls, rs, dn = _random_dot(rng)
    dtype, pet = DTYPES[seed % len(DTYPES)]
    axes = [(_axis(rng, len(ls)), _axis(rng, len(rs))), (_axis(rng, len(ls)), None), (None, _axis(rng, len(rs)))]
    for la, ra in axes:
        x, y = _batched(rng, ls, la, dtype), _batched(rng, rs, ra, dtype)
        f = lambda a, b: lax.dot_general(a, b, dn, preferred_element_type=pet)  # noqa: E731
        tol = 1e-2 if dtype == np.float16 else 1e-5
        check_batch(f, (x, y), in_axes=(la, ra), jit=jit, rtol=tol, atol=tol)


@pytest.mark.parametrize("xs,ys,in_axes,out", [
    ((2, 3, 4), (2, 4, 5), (0, 0), 0),     # both mapped: a new leading batch dim of the contraction
    ((3, 4, 2), (4, 5, 2), (2, 2), 0),
    ((3, 2, 4), (4, 5), (1, None), 1),     # lhs mapped: a free dim of lhs, after its dim 0
    ((3, 4), (4, 5, 2), (None, 2), 2),     # rhs mapped: after lhs's free dim and its own dim 0
    ((3, 4), (2, 4, 5), (None, 0), 1),
])
def test_dot_general_moves_nothing(xs, ys, in_axes, out):
    # The jaxpr is one dot_general (no transpose or broadcast) and the batch axis lands at `out`.
    x, y = R.standard_normal(xs).astype(np.float32), R.standard_normal(ys).astype(np.float32)
    dot = lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())))  # noqa: E731
    jaxpr = xjax.make_jaxpr(xjax.vmap(dot, in_axes=in_axes, out_axes=out))(x, y)
    assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["dot_general"], jaxpr
    check_batch(dot, (x, y), in_axes=in_axes, out_axes=out, rtol=1e-5, atol=1e-5)


def test_dot_general_keeps_preferred_element_type():
    x = np.arange(24, dtype=np.int8).reshape(2, 3, 4)
    f = xjax.vmap(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.int32))
    out = f(x, np.swapaxes(x, 1, 2))
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, np.einsum("bij,bjk->bik", x.astype(np.int32),
                                                 np.swapaxes(x, 1, 2).astype(np.int32)))


M = R.standard_normal((4, 3, 5)).astype(np.float32)
V = R.standard_normal((4, 5)).astype(np.float32)
W = R.standard_normal((5, 2)).astype(np.float32)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("fun,args,in_axes", [
    (jnp.dot, (M, V), (0, 0)),
    (jnp.dot, (M, W), (0, None)),
    (jnp.dot, (M[0], V), (None, 0)),
    (jnp.dot, (V, V), (0, 0)),
    (jnp.dot, (V, W), (0, None)),
    (jnp.matmul, (M, W), (0, None)),
    (jnp.matmul, (np.moveaxis(M, 0, 2), V), (2, 0)),
    (jnp.matmul, (V, np.moveaxis(np.swapaxes(M, 1, 2), 0, -1)), (0, -1)),
    (lambda a, b: a @ b, (V, W), (0, None)),
    (lambda a, b: jnp.einsum("ij,j->i", a, b), (M, V), (0, 0)),
    (lambda a, b: jnp.einsum("ij,jk->ki", a, b), (M, W), (0, None)),
    (lambda a, b: jnp.einsum("i,i->", a, b), (V, V[0]), (0, None)),
    (lambda a, b: jnp.einsum("ij,kj->ik", a, b), (M[0], np.swapaxes(M, 0, 1)), (None, 1)),
    (jnp.vdot, (V, V.T), (0, 1)),
    (jnp.outer, (V, V), (0, None)),
    (jnp.inner, (M, V), (0, 0)),
    (lambda a, b: jnp.tensordot(a, b, axes=1), (M, W), (0, None)),
])
def test_jnp_products(fun, args, in_axes, jit):
    check_batch(fun, args, in_axes=in_axes, jit=jit, rtol=1e-5, atol=1e-5)


def test_vmap_matmul_against_numpy():
    got = xjax.jit(xjax.vmap(jnp.matmul, in_axes=(0, None)))(M, W)
    np.testing.assert_allclose(got, M @ W, rtol=1e-5, atol=1e-5)
    got = xjax.vmap(xjax.vmap(jnp.dot, in_axes=(0, None)), in_axes=(None, 1))(M[0], W)
    np.testing.assert_allclose(got, (M[0] @ W).T, rtol=1e-5, atol=1e-5)
