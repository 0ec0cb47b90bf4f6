"""Less common jnp functions (index tricks, windows, gradient, polynomials, put...), values recorded from JAX."""
import numpy as np
import pytest

import xjax.numpy as jnp

# (expression, repr recorded from JAX 0.10.2)
JAX_REPRS = [
    (lambda: jnp.mgrid[0:2, 0:3], "Array([[[0, 0, 0],\n        [1, 1, 1]],\n\n       [[0, 1, 2],\n        [0, 1, 2]]], "
                                  "dtype=int32)"),
    (lambda: jnp.ogrid[0:2, 0:3], "[Array([[0],\n       [1]], dtype=int32), Array([[0, 1, 2]], dtype=int32)]"),
    (lambda: jnp.mgrid[0:1:3j], "Array([0. , 0.5, 1. ], dtype=float32)"),
    (lambda: jnp.iscomplex(jnp.arange(2)), "Array([False, False], dtype=bool)"),
    (lambda: jnp.fill_diagonal(jnp.zeros((3, 3)), 5, inplace=False),
     "Array([[5., 0., 0.],\n       [0., 5., 0.],\n       [0., 0., 5.]], dtype=float32)"),
    (lambda: jnp.bitwise_count(jnp.asarray([7, -1])), "Array([3, 1], dtype=uint8)"),
    (lambda: jnp.trim_zeros(jnp.asarray([0, 1, 0, 2, 0])), "Array([1, 0, 2], dtype=int32)"),
    (lambda: jnp.hanning(4), "Array([0.        , 0.75      , 0.74999994, 0.        ], dtype=float32)"),
    (lambda: jnp.bartlett(4), "Array([0.       , 0.6666666, 0.6666666, 0.       ], dtype=float32)"),
    (lambda: jnp.gradient(jnp.asarray([1., 4., 9., 16.])), "Array([3., 4., 6., 7.], dtype=float32)"),
    (lambda: jnp.unwrap(jnp.asarray([0., 3., 6.5, 0.2])),
     "Array([0.        , 3.        , 0.216815  , 0.20000048], dtype=float32)"),
    (lambda: jnp.block([[jnp.ones((1, 2)), jnp.zeros((1, 1))]]), "Array([[1., 1., 0.]], dtype=float32)"),
    (lambda: jnp.polyadd(jnp.asarray([1, 2]), jnp.asarray([1, 2, 3])), "Array([1, 3, 5], dtype=int32)"),
    (lambda: jnp.polyder(jnp.asarray([1, 2, 3])), "Array([2., 2.], dtype=float32)"),
    (lambda: jnp.polyint(jnp.asarray([3., 2., 1.])), "Array([1., 1., 1., 0.], dtype=float32)"),
    (lambda: jnp.put_along_axis(jnp.zeros((2, 3)), jnp.asarray([[0], [2]]), 5., axis=1, inplace=False),
     "Array([[5., 0., 0.],\n       [0., 0., 5.]], dtype=float32)"),
    (lambda: jnp.spacing(jnp.float32(1)), "Array(1.1920929e-07, dtype=float32)"),
    (lambda: jnp.piecewise(jnp.arange(-2, 3), [jnp.arange(-2, 3) < 0], [lambda v: -v, lambda v: v * 10]),
     "Array([ 2,  1,  0, 10, 20], dtype=int32)"),
    (lambda: jnp.put(jnp.zeros(4), jnp.asarray([0, 2]), 7., inplace=False), "Array([7., 0., 7., 0.], dtype=float32)"),
    (lambda: jnp.packbits(jnp.asarray([1, 0, 1, 1, 0, 0, 0, 1, 1])), "Array([177, 128], dtype=uint8)"),
    (lambda: jnp.unpackbits(jnp.asarray([5, 255], dtype=jnp.uint8)),
     "Array([0, 0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1], dtype=uint8)"),
    (lambda: jnp.packbits(jnp.asarray([[1, 0, 1], [0, 1, 1]]), axis=1, bitorder="little"),
     "Array([[5],\n       [6]], dtype=uint8)"),
    (lambda: jnp.histogram_bin_edges(jnp.asarray([1., 2, 5]), bins=4), "Array([1., 2., 3., 4., 5.], dtype=float32)"),
    (lambda: jnp.frombuffer(b"\x01\x02", dtype=jnp.uint8), "Array([1, 2], dtype=uint8)"),
    (lambda: jnp.linalg.matrix_power(jnp.asarray([[1., 1.], [0., 1.]]), 5),
     "Array([[1., 5.],\n       [0., 1.]], dtype=float32)"),
]


@pytest.mark.parametrize("k", range(len(JAX_REPRS)))
def test_matches_jax_repr(k):
    fn, want = JAX_REPRS[k]
    assert repr(fn()) == want


def test_against_numpy():
    np.testing.assert_allclose(np.asarray(jnp.hamming(5)), np.hamming(5), atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.blackman(6)), np.blackman(6), atol=1e-6)
    x = np.array([[1.0, 2.0, 4.0, 7.0], [0.0, 1.0, 0.0, -1.0]], np.float32)
    for got, want in zip(jnp.gradient(jnp.asarray(x)), np.gradient(x)):
        np.testing.assert_allclose(np.asarray(got), want, atol=1e-6)
    np.testing.assert_allclose(np.asarray(jnp.polymul(jnp.asarray([1, 2]), jnp.asarray([1, 3]))),
                               np.polymul([1, 2], [1, 3]))
    np.testing.assert_allclose(np.asarray(jnp.polysub(jnp.asarray([1, 2]), jnp.asarray([1, 2, 3]))),
                               np.polysub([1, 2], [1, 2, 3]))
    assert jnp.isrealobj(jnp.arange(2)) and not jnp.iscomplexobj(jnp.arange(2))
    assert jnp.s_[1:2] == np.s_[1:2]
    with pytest.raises(NotImplementedError):
        jnp.fill_diagonal(jnp.zeros((2, 2)), 1.0)
