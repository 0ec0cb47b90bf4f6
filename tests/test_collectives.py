"""Collectives over named axes (lax.psum, all_gather, ppermute, ...) under vmap, against NumPy.

Reference values for derivatives were recorded from JAX 0.10.2 (vmap of grad over axis 'i').
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import lax

N = 3
RNG = np.random.default_rng(0)
X = RNG.standard_normal((N, N, 2 * N)).astype(np.float32)  # the batch: N examples of shape (N, 2N)



def _split(x, k, axis):
    return np.split(x, N, axis=axis)[k]


def _each(f):
    """The batch of f(j) for j over the axis."""
    return np.stack([f(j) for j in range(N)])


# name: (function of one example, NumPy result for the whole batch X)
CASES = {
    "psum": (lambda v: lax.psum(v, "i"), lambda X: np.broadcast_to(X.sum(0), X.shape)),
    "pmean": (lambda v: lax.pmean(v, "i"), lambda X: np.broadcast_to(X.mean(0), X.shape)),
    "pmax": (lambda v: lax.pmax(v, "i"), lambda X: np.broadcast_to(X.max(0), X.shape)),
    "pmin": (lambda v: lax.pmin(v, "i"), lambda X: np.broadcast_to(X.min(0), X.shape)),
    "all_gather": (lambda v: lax.all_gather(v, "i"), lambda X: np.stack([X] * N)),
    "all_gather_axis1": (lambda v: lax.all_gather(v, "i", axis=1), lambda X: _each(lambda j: np.stack(list(X), 1))),
    "all_gather_tiled": (lambda v: lax.all_gather(v, "i", axis=1, tiled=True),
                         lambda X: _each(lambda j: np.concatenate(list(X), axis=1))),
    "all_to_all": (lambda v: lax.all_to_all(v, "i", 0, 1),
                   lambda X: _each(lambda j: np.stack([X[i, j] for i in range(N)], axis=1))),
    "all_to_all_1_0": (lambda v: lax.all_to_all(v, "i", 0, 0),
                       lambda X: _each(lambda j: np.stack([X[i, j] for i in range(N)], axis=0))),
    "all_to_all_tiled": (lambda v: lax.all_to_all(v, "i", 1, 0, tiled=True),
                         lambda X: _each(lambda j: np.concatenate([_split(X[i], j, 1) for i in range(N)], 0))),
    "all_to_all_same_axis": (lambda v: lax.all_to_all(v, "i", 1, 1, tiled=True),
                             lambda X: _each(lambda j: np.concatenate([_split(X[i], j, 1) for i in range(N)], 1))),
    "ppermute": (lambda v: lax.ppermute(v, "i", [(0, 1), (1, 2), (2, 0)]), lambda X: X[[2, 0, 1]]),
    "ppermute_partial": (lambda v: lax.ppermute(v, "i", [(0, 2), (2, 1)]),
                         lambda X: np.stack([np.zeros_like(X[0]), X[2], X[0]])),
    "axis_index": (lambda v: lax.axis_index("i") + 0 * v.astype(jnp.int32),
                   lambda X: np.broadcast_to(np.arange(N, dtype=np.int32)[:, None, None], X.shape)),
    "psum_scatter": (lambda v: lax.psum_scatter(v, "i"), lambda X: X.sum(0)),
    "psum_scatter_tiled": (lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True),
                           lambda X: _each(lambda k: _split(X.sum(0), k, 1))),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("in_axis", [0, 2, -1])
def test_collective_under_vmap(name, in_axis):
    fun, ref = CASES[name]
    got = xjax.vmap(fun, in_axes=in_axis, axis_name="i")(np.moveaxis(X, 0, in_axis))
    want = ref(X)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["psum", "all_gather_tiled", "all_to_all_tiled", "ppermute_partial", "psum_scatter"])
def test_collective_under_jit_of_vmap(name):
    fun, ref = CASES[name]
    got = xjax.jit(xjax.vmap(fun, axis_name="i"))(X)
    np.testing.assert_allclose(np.asarray(got), ref(X), rtol=1e-5, atol=1e-6)


def test_unmapped_operands():
    # Values the same across the batch: psum scales, pmax keeps, all_gather stacks copies.
    f = xjax.vmap(lambda v, c: (lax.psum(c, "i"), lax.pmax(c, "i"), lax.all_gather(c, "i"),
                                lax.ppermute(c, "i", [(0, 1)])), in_axes=(0, None), axis_name="i")
    c = np.array([1.5, -2.0], np.float32)
    s, m, g, p = f(X, c)
    np.testing.assert_allclose(np.asarray(s), np.broadcast_to(3 * c, (N, 2)))
    np.testing.assert_allclose(np.asarray(m), np.broadcast_to(c, (N, 2)))
    np.testing.assert_allclose(np.asarray(g), np.broadcast_to(c, (N, N, 2)))
    np.testing.assert_allclose(np.asarray(p), [[0, 0], c, [0, 0]])


def test_psum_of_python_scalar_and_pytree():
    seen = []

    def f(v):
        n = lax.psum(1, "i")
        seen.append(type(n))
        return lax.psum({"a": v, "b": 2.0, "n": n}, "i")

    out = xjax.vmap(f, axis_name="i")(X)
    assert seen == [int]  # a Python int, as in JAX: usable as a static size
    np.testing.assert_allclose(np.asarray(out["a"]), np.broadcast_to(X.sum(0), X.shape), rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(out["b"]), [6.0] * N)
    np.testing.assert_array_equal(np.asarray(out["n"]), [9] * N)
    assert out["b"].dtype == np.float32 and out["b"].weak_type


def test_psum_of_bool_counts_as_int32():
    out = xjax.vmap(lambda v: lax.psum(v > 0, "i"), axis_name="i")(X)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), np.broadcast_to((X > 0).sum(0), X.shape))


def test_pmean_of_python_scalar():
    out = xjax.vmap(lambda v: v * lax.pmean(2, "i"), axis_name="i")(X)
    np.testing.assert_allclose(np.asarray(out), X * 2.0)


def test_axis_size():
    sizes = []
    xjax.vmap(xjax.vmap(lambda v: sizes.append((lax.axis_size("i"), lax.axis_size(("i", "j")))) or v, axis_name="j"),
              axis_name="i")(np.zeros((3, 2)))
    assert sizes == [(3, 6)]


def test_tuple_axis_name_of_one_axis():
    out = xjax.vmap(lambda v: lax.psum(v, ("i",)), axis_name="i")(X)
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(X.sum(0), X.shape), rtol=1e-5)


def test_collective_over_an_outer_axis_with_an_anonymous_inner_vmap():
    # The inner vmap does not bind 'i': it batches the psum, the outer vmap reduces it.
    f = xjax.vmap(xjax.vmap(lambda v: lax.psum(v, "i")), axis_name="i")
    out = f(X)
    np.testing.assert_allclose(np.asarray(out), np.broadcast_to(X.sum(0), X.shape), rtol=1e-5)


def test_nested_axis_index_of_two_names():
    f = xjax.vmap(xjax.vmap(lambda v: lax.axis_index(("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(np.zeros((3, 2)))), [[0, 1], [2, 3], [4, 5]])
    f = xjax.vmap(xjax.vmap(lambda v: lax.axis_index(("j", "i")), axis_name="j"), axis_name="i")
    np.testing.assert_array_equal(np.asarray(f(np.zeros((3, 2)))), [[0, 3], [1, 4], [2, 5]])


def test_nested_vmap_two_axis_names():
    Y = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    f = xjax.vmap(xjax.vmap(lambda v: (lax.psum(v, "i"), lax.psum(v, "j"), lax.psum(v, ("i", "j")),
                                       lax.pmax(v, ("j", "i"))), axis_name="j"), axis_name="i")
    si, sj, sij, mij = f(Y)
    np.testing.assert_allclose(np.asarray(si), np.broadcast_to(Y.sum(0, keepdims=True), Y.shape), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(sj), np.broadcast_to(Y.sum(1, keepdims=True), Y.shape), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(sij), np.broadcast_to(Y.sum((0, 1)), Y.shape), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(mij), np.broadcast_to(Y.max((0, 1)), Y.shape))


@pytest.mark.parametrize("names", [("i", "j"), ("j", "i")])
def test_nested_all_gather_two_names(names):
    Y = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    f = xjax.vmap(xjax.vmap(lambda v: lax.all_gather(v, names), axis_name="j"), axis_name="i")
    flat = Y.reshape(6, 4) if names == ("i", "j") else Y.transpose(1, 0, 2).reshape(6, 4)
    np.testing.assert_allclose(np.asarray(f(Y)), np.broadcast_to(flat, (3, 2, 6, 4)))


def test_unbound_axis_name():
    with pytest.raises(NameError, match="unbound axis name: j"):
        xjax.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        lax.psum(jnp.ones(3), "i")
    with pytest.raises(NameError, match="unbound axis name: i"):
        xjax.make_jaxpr(lambda v: lax.all_gather(v, "i"))(np.ones(3, np.float32))
    with pytest.raises(NameError, match="unbound axis name: k"):
        xjax.vmap(lambda v: lax.axis_index("k"), axis_name="i")(X)
    with pytest.raises(NameError, match="unbound axis name: i"):
        xjax.vmap(lambda v: lax.ppermute(v, "i", [(0, 1)]))(X)  # an anonymous vmap binds no name


def test_bad_arguments():
    vm = lambda f: xjax.vmap(f, axis_name="i")  # noqa: E731
    with pytest.raises(ValueError, match="all_to_all requires the size of the mapped axis"):
        vm(lambda v: lax.all_to_all(v, "i", 1, 0))(X)
    with pytest.raises(ValueError, match=r"split_axis \(4\) has to be divisible by the size of the named axis"):
        vm(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True))(np.ones((3, 4, 2)))
    with pytest.raises(ValueError, match="scatter dimension size 6 must match"):
        vm(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1))(X)
    with pytest.raises(ValueError, match="must be divisible"):
        vm(lambda v: lax.psum_scatter(v, "i", tiled=True))(np.ones((3, 4, 2)))
    with pytest.raises(ValueError, match="sources and destinations must be unique"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 1), (2, 1)]))(X)
    with pytest.raises(ValueError, match="outside the named axis"):
        vm(lambda v: lax.ppermute(v, "i", [(0, 3)]))(X)
    with pytest.raises(ValueError, match="out of bounds"):
        vm(lambda v: lax.all_gather(v, "i", axis=3))(X)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        vm(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1, 2]]))(X)


# ---- derivatives (values recorded from JAX) -------------------------------------------------------

XS = np.arange(6, dtype=np.float32).reshape(3, 2) - 2.0
WS = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]], np.float32)


def _vgrad(f, *args):
    return np.asarray(xjax.vmap(xjax.grad(f), axis_name="i")(*args))


def _vvjp(f, x, ct):
    """Per example: the cotangent of x for cotangent ct of f(x) (grad of sum(f(x) * ct))."""
    return np.asarray(xjax.vmap(lambda v, c: xjax.vjp(f, v)[1](c)[0], axis_name="i")(x, ct))


def test_grad_of_collectives_under_vmap():
    r = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(_vgrad(lambda v: lax.psum(v, "i"), r), [3.0, 3.0, 3.0])
    np.testing.assert_allclose(_vgrad(lambda v: lax.psum(v * v, "i"), r), [0.0, 6.0, 12.0])
    np.testing.assert_allclose(_vgrad(lambda v: lax.pmean(v * v, "i"), r), [0.0, 2.0, 4.0])


def test_vjp_of_linear_collectives_under_vmap():
    ct = np.broadcast_to(WS[:, None, 0:1], (3, 3, 2))  # per example: its weight, over the gathered (3, 2)
    np.testing.assert_allclose(_vvjp(lambda v: lax.all_gather(v, "i"), XS, ct), [[4.5, 4.5]] * 3)
    perm = [(0, 1), (1, 2), (2, 0)]
    np.testing.assert_allclose(_vvjp(lambda v: lax.ppermute(v, "i", perm), XS, WS),
                               [[3.0, -1.0], [0.5, 4.0], [1.0, 2.0]])
    np.testing.assert_allclose(
        _vvjp(lambda v: lax.psum_scatter(v, "i", tiled=True), np.arange(9.0, dtype=np.float32).reshape(3, 3),
              WS[:, :1]), [[1.0, 3.0, 0.5]] * 3)
    w6 = np.arange(18, dtype=np.float32).reshape(3, 1, 6) * 0.5 - 2
    np.testing.assert_allclose(
        _vvjp(lambda v: lax.all_to_all(v, "i", 0, 1, tiled=True), np.arange(18, dtype=np.float32).reshape(3, 3, 2) - 5,
              w6),
        [[[-2.0, -1.5], [1.0, 1.5], [4.0, 4.5]], [[-1.0, -0.5], [2.0, 2.5], [5.0, 5.5]],
         [[0.0, 0.5], [3.0, 3.5], [6.0, 6.5]]])


def test_grad_of_vmap_with_psum():
    f = lambda x: xjax.vmap(lambda v: lax.psum(v * v, "i"), axis_name="i")(x).sum()  # noqa: E731
    np.testing.assert_allclose(np.asarray(xjax.grad(f)(np.arange(3, dtype=np.float32))), [0.0, 6.0, 12.0])


def test_jvp_of_psum_under_vmap():
    out, tan = xjax.vmap(lambda v, t: xjax.jvp(lambda u: lax.psum(u * u, "i"), (v,), (t,)), axis_name="i")(XS, WS)
    np.testing.assert_allclose(np.asarray(out), [[8.0, 11.0]] * 3)
    np.testing.assert_allclose(np.asarray(tan), [[-2.0, 18.0]] * 3)


def test_pmax_has_no_derivative():
    with pytest.raises(NotImplementedError, match="pmax"):
        xjax.vmap(xjax.grad(lambda v: lax.pmax(v, "i")), axis_name="i")(np.arange(3.0, dtype=np.float32))


# ---- tracing ------------------------------------------------------------------------------------

def test_make_jaxpr_with_axis_env_and_jit_cache_per_axis_env():
    f = xjax.jit(lambda v: lax.all_gather(v, "i"))
    x = np.ones(3, np.float32)
    j2 = xjax.make_jaxpr(lambda v: f(v), axis_env=[("i", 2)])(x)
    j4 = xjax.make_jaxpr(lambda v: f(v), axis_env=[("i", 4)])(x)
    assert j2.out_avals[0].shape == (2, 3)
    assert j4.out_avals[0].shape == (4, 3)  # not the jaxpr traced under size 2
    text = str(xjax.make_jaxpr(lambda v: lax.psum(v, ("i", "j")), axis_env=[("i", 2), ("j", 3)])(x))
    assert "psum[axes=('i', 'j') axis_index_groups=None]" in text  # as JAX prints it
