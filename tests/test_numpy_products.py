"""dot, matmul, einsum, tensordot and friends, linalg.norm, convolve/correlate against NumPy."""
import numpy as np
import pytest

import xjax.numpy as jnp

R = np.random.default_rng(2)


def rnd(*shape):
    return R.standard_normal(shape).astype(np.float32)


def check(got, want, dtype=None, rtol=1e-5, atol=1e-5):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)


DOT_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((2, 2, 3), (3, 4)),
              ((2, 3), (5, 3, 4)), ((), (3,)), ((0, 3), (3, 2))]


@pytest.mark.parametrize("sa,sb", DOT_SHAPES)
def test_dot(sa, sb):
    a, b = rnd(*sa), rnd(*sb)
    check(jnp.dot(jnp.asarray(a), jnp.asarray(b)), np.dot(a.astype(np.float64), b), np.float32)


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
                 ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)), ((1, 2, 3), (4, 3, 2)), ((3,), (2, 3, 4)),
                 ((2, 1, 2, 3), (5, 3, 1))]


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul(sa, sb):
    a, b = rnd(*sa), rnd(*sb)
    check(jnp.matmul(jnp.asarray(a), jnp.asarray(b)), np.matmul(a.astype(np.float64), b))
    check(jnp.asarray(a) @ jnp.asarray(b), np.matmul(a.astype(np.float64), b))
    check(a @ jnp.asarray(b), np.matmul(a.astype(np.float64), b))


def test_matmul_errors_and_dtypes():
    with pytest.raises(ValueError, match="matmul input operand 1 must have ndim at least 1, but it has ndim 0"):
        jnp.matmul(jnp.arange(3), 2)
    with pytest.raises(TypeError, match="dot_general requires contracting dimensions to have the same shape"):
        jnp.ones((3, 4)) @ jnp.ones(2)
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    out = jnp.dot(jnp.asarray(i), jnp.asarray(i.T))
    assert out.dtype == np.int32
    check(out, i @ i.T)
    assert repr(jnp.dot(jnp.arange(5), jnp.arange(5))) == "Array(30, dtype=int32)"
    assert repr(jnp.dot(2, jnp.arange(3))) == "Array([0, 2, 4], dtype=int32)"
    wa = jnp.full(3, 2.0)
    assert repr(jnp.dot(wa, wa)) == "Array(12., dtype=float32, weak_type=True)"
    out = jnp.dot(jnp.asarray(i), jnp.asarray(i.T), preferred_element_type=jnp.float32)
    assert out.dtype == np.float32


def test_vdot_inner_outer_tensordot_kron():
    a, b = rnd(2, 3), rnd(2, 3)
    check(jnp.vdot(jnp.asarray(a), jnp.asarray(b)), np.vdot(a, b))
    check(jnp.inner(jnp.asarray(a), jnp.asarray(b)), np.inner(a, b))
    check(jnp.inner(2.0, jnp.asarray(a)), 2.0 * a)
    check(jnp.outer(jnp.asarray(a), jnp.asarray(b[0])), np.outer(a, b[0]))
    t = rnd(2, 3, 4)
    check(jnp.tensordot(jnp.asarray(t), jnp.asarray(t), axes=([1, 2], [1, 2])),
          np.tensordot(t, t, axes=([1, 2], [1, 2])))
    check(jnp.tensordot(jnp.asarray(a), jnp.asarray(b.T), axes=1), np.tensordot(a, b.T, axes=1))
    check(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes=2), np.tensordot(a, b, axes=2))
    check(jnp.tensordot(jnp.asarray(a), jnp.asarray(b), axes=0), np.tensordot(a, b, axes=0))
    check(jnp.kron(jnp.asarray([1, 2]), jnp.asarray([[1, 1]])), np.kron([1, 2], [[1, 1]]))
    check(jnp.kron(jnp.asarray(a), jnp.asarray(b)), np.kron(a, b))
    check(jnp.vecdot(jnp.asarray(a), jnp.asarray(b)), np.sum(a * b, axis=-1))
    v = rnd(4)
    check(jnp.matvec(jnp.asarray(t), jnp.asarray(v)), np.einsum("ijk,k->ij", t, v))
    check(jnp.vecmat(jnp.asarray(v[:3]), jnp.asarray(t)), np.einsum("j,ijk->ik", v[:3], t))


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # NumPy's 2-vector cross product
def test_trace_and_cross():
    m = rnd(3, 4)
    check(jnp.trace(jnp.asarray(m)), np.trace(m))
    check(jnp.trace(jnp.asarray(m), 1), np.trace(m, 1))
    t = rnd(2, 3, 3)
    check(jnp.trace(jnp.asarray(t), axis1=1, axis2=2), np.trace(t, axis1=1, axis2=2))
    assert jnp.trace(jnp.ones((2, 2), jnp.int8)).dtype == np.int32
    a, b = rnd(4, 3), rnd(4, 3)
    check(jnp.cross(jnp.asarray(a), jnp.asarray(b)), np.cross(a, b))
    check(jnp.cross(jnp.asarray(a[:, :2]), jnp.asarray(b[:, :2])), np.cross(a[:, :2], b[:, :2]))
    check(jnp.cross(jnp.asarray(a[:, :2]), jnp.asarray(b)), np.cross(a[:, :2], b))
    check(jnp.cross(jnp.asarray(a.T), jnp.asarray(b.T), axis=0), np.cross(a.T, b.T, axis=0))


EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]), ("i,i->", [(3,), (3,)]),
    ("ij->ji", [(2, 3)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->j", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
    ("ij,jk", [(2, 3), (3, 4)]), ("...ij,...jk", [(2, 2, 3), (2, 3, 4)]), ("ij,ij->i", [(2, 3), (2, 3)]),
    ("ijk,jl,lm->im", [(2, 3, 4), (3, 5), (5, 2)]), ("i->", [(4,)]), ("iij->j", [(2, 2, 3)]),
    ("ba,ca->bc", [(2, 3), (4, 3)]), ("...i,i", [(2, 3), (3,)]), ("ij,j...->i...", [(2, 3), (3, 4)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)]), ("i,i,i->i", [(3,), (3,), (3,)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(spec, shapes):
    ops = [rnd(*s) for s in shapes]
    check(jnp.einsum(spec, *[jnp.asarray(o) for o in ops]), np.einsum(spec, *[o.astype(np.float64) for o in ops]))


def test_einsum_ints_and_errors():
    m = np.arange(12, dtype=np.int32).reshape(3, 4)
    assert repr(jnp.einsum("i,i->", jnp.arange(5), jnp.arange(5))) == "Array(30, dtype=int32)"
    check(jnp.einsum("ij,kj->ik", jnp.asarray(m), jnp.asarray(m)), np.einsum("ij,kj->ik", m, m), np.int32)
    with pytest.raises(ValueError):
        jnp.einsum("ij,jk->ik", jnp.ones((2, 3)), jnp.ones((4, 5)))
    with pytest.raises(ValueError):
        jnp.einsum("ij->k", jnp.ones((2, 3)))


ORDS = [None, 1, 2, np.inf, -np.inf, 0, 3, -1]


@pytest.mark.parametrize("ord", ORDS)
def test_vector_norm(ord):
    v = rnd(5)
    check(jnp.linalg.norm(jnp.asarray(v), ord=ord), np.linalg.norm(v.astype(np.float64), ord=ord), rtol=1e-5)
    m = rnd(3, 4)
    check(jnp.linalg.norm(jnp.asarray(m), ord=ord, axis=1), np.linalg.norm(m.astype(np.float64), ord=ord, axis=1),
          rtol=1e-5)


@pytest.mark.parametrize("ord", [None, "fro", 1, -1, np.inf, -np.inf, 2, -2, "nuc"])
def test_matrix_norm(ord):
    m = rnd(3, 4)
    check(jnp.linalg.norm(jnp.asarray(m), ord=ord), np.linalg.norm(m.astype(np.float64), ord=ord), rtol=1e-5)
    t = rnd(2, 3, 4)
    check(jnp.linalg.norm(jnp.asarray(t), ord=ord, axis=(1, 2), keepdims=True),
          np.linalg.norm(t.astype(np.float64), ord=ord, axis=(1, 2), keepdims=True), rtol=1e-5)


def test_norm_dtypes_from_jax():
    assert repr(jnp.linalg.norm(jnp.asarray([3.0, 4.0]))) == "Array(5., dtype=float32)"
    assert repr(jnp.linalg.norm(jnp.asarray([3, 4]))) == "Array(5., dtype=float32)"
    assert repr(jnp.linalg.norm(jnp.asarray([3.0, -4.0]), ord=0)) == "Array(2., dtype=float32)"
    t = rnd(2, 3, 4)
    check(jnp.linalg.norm(jnp.asarray(t)), np.linalg.norm(t.ravel()))
    assert repr(jnp.linalg.norm(jnp.ones((2, 2)), ord=2)) == "Array(2., dtype=float32)"  # its largest singular value


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("n,m", [(5, 3), (3, 5), (4, 4), (1, 1), (6, 2)])
def test_convolve_correlate(mode, n, m):
    a, v = rnd(n), rnd(m)
    check(jnp.convolve(jnp.asarray(a), jnp.asarray(v), mode=mode), np.convolve(a, v, mode=mode))
    check(jnp.correlate(jnp.asarray(a), jnp.asarray(v), mode=mode), np.correlate(a, v, mode=mode))


def test_convolve_from_jax():
    assert repr(jnp.convolve(jnp.asarray([1., 2., 3.]), jnp.asarray([0., 1., 0.5]))) == (
        "Array([0. , 1. , 2.5, 4. , 1.5], dtype=float32)")
    assert repr(jnp.correlate(jnp.asarray([1, 2, 3]), jnp.asarray([0, 1]))) == "Array([2., 3.], dtype=float32)"


@pytest.mark.parametrize("args", [
    lambda x, y, z: (x, [0, 1], y, [1, 2], [0, 2]),  # with an output sublist
    lambda x, y, z: (x, [0, 1], y, [1, 0]),  # implicit output
    lambda x, y, z: (z, [Ellipsis, 27], [27, Ellipsis]),  # upper-case letters and an ellipsis
    lambda x, y, z: (x, [0, 1], y, [1, 2], z, [0, 2, 3], [3]),
])
def test_einsum_interleaved_sublists(args):
    rng = np.random.default_rng(0)
    x, y, z = rng.standard_normal((2, 3)), rng.standard_normal((3, 2)), rng.standard_normal((2, 2, 4))
    np.testing.assert_allclose(jnp.einsum(*args(x, y, z)), np.einsum(*args(x, y, z)), rtol=1e-5, atol=1e-5)


def test_einsum_interleaved_refuses_bad_subscripts():
    with pytest.raises(ValueError, match=r"int in \[0, 52\) or Ellipsis"):
        jnp.einsum(np.ones(2), [52])
