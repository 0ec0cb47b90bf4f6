"""xjax.numpy shape manipulation against NumPy: reshape, transpose, joining, splitting, tile, pad, ..."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax.numpy as jnp


def check(got, want, dtype=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    np.testing.assert_array_equal(got_np, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)


A = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
M = np.arange(12, dtype=np.float32).reshape(3, 4)
V = np.arange(5, dtype=np.int32)


@pytest.mark.parametrize("shape", [(24,), (4, 6), (-1, 4), (2, -1, 3), (1, 24, 1)])
def test_reshape(shape):
    check(jnp.reshape(jnp.asarray(A), shape), A.reshape(shape))
    check(jnp.asarray(A).reshape(shape), A.reshape(shape))


def test_reshape_star_args_and_order_f():
    x = jnp.asarray(A)
    check(x.reshape(4, 6), A.reshape(4, 6))
    check(jnp.reshape(x, (4, 6), order="F"), A.reshape((4, 6), order="F"))
    check(jnp.ravel(x, order="F"), A.ravel(order="F"))


def test_reshape_errors_match_jax():
    x = jnp.asarray(np.arange(6))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(6,\) \(size 6\) into shape \(4,\) "):
        jnp.reshape(x, (4,))
    with pytest.raises(TypeError, match=r"does not evenly divide 6"):
        jnp.reshape(x, (-1, 4))
    with pytest.raises(TypeError, match=r"can only specify one unknown axis size"):
        jnp.reshape(x, (-1, -1))


def test_transpose_family():
    x = jnp.asarray(A)
    check(jnp.transpose(x), A.transpose())
    check(jnp.transpose(x, (1, 0, 2)), A.transpose(1, 0, 2))
    check(x.transpose(2, 0, 1), A.transpose(2, 0, 1))
    check(x.transpose((2, 0, 1)), A.transpose(2, 0, 1))
    check(x.T, A.T)
    check(x.mT, np.swapaxes(A, -1, -2))
    check(jnp.swapaxes(x, 0, -1), np.swapaxes(A, 0, -1))
    check(jnp.moveaxis(x, 0, -1), np.moveaxis(A, 0, -1))
    check(jnp.moveaxis(x, (0, 1), (-1, 0)), np.moveaxis(A, (0, 1), (-1, 0)))
    check(jnp.rollaxis(x, 2), np.rollaxis(A, 2))
    check(jnp.permute_dims(x, (2, 1, 0)), A.transpose(2, 1, 0))
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
        jnp.transpose(x, (1, 0, 3))


def test_expand_squeeze():
    x = jnp.asarray(V)
    check(jnp.expand_dims(x, 0), V[None])
    check(jnp.expand_dims(x, -1), V[:, None])
    check(jnp.expand_dims(x, (0, 2)), np.expand_dims(V, (0, 2)))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        jnp.expand_dims(x, 2)
    y = jnp.asarray(np.zeros((1, 3, 1)))
    check(jnp.squeeze(y), np.zeros(3))
    check(jnp.squeeze(y, -1), np.zeros((1, 3)))
    check(y.squeeze(axis=0), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="cannot select an axis to squeeze out which has size not equal to one"):
        jnp.squeeze(y, 1)


def test_broadcasting_functions():
    assert jnp.broadcast_shapes((2, 3), (1, 3), (3,)) == (2, 3)
    assert jnp.broadcast_shapes((5,), ()) == (5,)
    with pytest.raises(ValueError, match=r"Incompatible shapes for broadcasting: shapes=\[\(3,\), \(4,\)\]"):
        jnp.broadcast_shapes((3,), (4,))
    check(jnp.broadcast_to(jnp.asarray(V), (2, 5)), np.broadcast_to(V, (2, 5)))
    check(jnp.broadcast_to(3.0, (2,)), np.full(2, 3.0, np.float32))
    with pytest.raises(ValueError, match="Incompatible"):
        jnp.broadcast_to(jnp.asarray(V), (2, 4))
    a, b = jnp.broadcast_arrays(jnp.asarray(V), jnp.asarray(M[:, :1]))
    wa, wb = np.broadcast_arrays(V, M[:, :1])
    check(a, wa)
    check(b, wb)


def test_atleast():
    assert jnp.atleast_1d(1).shape == (1,)
    assert jnp.atleast_2d(1).shape == (1, 1)
    assert jnp.atleast_3d(jnp.asarray(V)).shape == (1, 5, 1)
    assert jnp.atleast_3d(jnp.asarray(M)).shape == (3, 4, 1)
    assert [a.shape for a in jnp.atleast_2d(1, jnp.asarray(V))] == [(1, 1), (1, 5)]
    assert repr(jnp.atleast_2d(1)) == "Array([[1]], dtype=int32, weak_type=True)"


def test_concatenate_and_stack():
    x, m = jnp.asarray(V), jnp.asarray(M)
    check(jnp.concatenate([x, x]), np.concatenate([V, V]))
    check(jnp.concatenate([m, m], axis=1), np.concatenate([M, M], axis=1))
    check(jnp.concatenate([m, m], axis=None), np.concatenate([M, M], axis=None))
    check(jnp.concatenate([x, jnp.arange(3.0)]), np.concatenate([V, np.arange(3.0)]).astype(np.float32), "float32")
    i8, u8 = jnp.arange(2, dtype=jnp.int8), jnp.arange(2, dtype=jnp.uint8)
    assert jnp.concatenate([i8, u8]).dtype == np.int16
    with pytest.raises(TypeError, match="Cannot concatenate arrays with different numbers of dimensions"):
        jnp.concatenate([x, m])
    with pytest.raises(ValueError, match="Need at least one array to concatenate"):
        jnp.concatenate([])
    check(jnp.stack([x, x], axis=1), np.stack([V, V], axis=1))
    check(jnp.stack([x, x], axis=-1), np.stack([V, V], axis=-1))
    check(jnp.stack([1, 2]), np.array([1, 2]))
    with pytest.raises(ValueError, match=r"All input arrays must have the same shape"):
        jnp.stack([x, jnp.arange(4)])
    check(jnp.hstack([x, x]), np.hstack([V, V]))
    check(jnp.hstack([m, m]), np.hstack([M, M]))
    check(jnp.vstack([x, x]), np.vstack([V, V]))
    check(jnp.dstack([x, x]), np.dstack([V, V]))
    check(jnp.column_stack([x, x]), np.column_stack([V, V]))
    assert repr(jnp.hstack([1, 2])) == "Array([1, 2], dtype=int32, weak_type=True)"
    assert [u.shape for u in jnp.unstack(m, axis=1)] == [(3,)] * 4


def test_weak_types_survive_layout_ops():
    wa = jnp.full(3, 2.0)
    assert wa.weak_type
    for y in (jnp.reshape(wa, (3, 1)), wa[0], wa[None], jnp.concatenate([wa, wa]), jnp.stack([wa, wa]),
              jnp.transpose(wa), jnp.expand_dims(wa, 0), jnp.broadcast_to(jnp.asarray(2.0), (3,))):
        assert y.weak_type, y
    assert not wa.astype(jnp.float32).weak_type


def test_split_family():
    x, m = jnp.asarray(V), jnp.asarray(M)
    for got, want in zip(jnp.split(x, [1, 3]), np.split(V, [1, 3])):
        check(got, want)
    for got, want in zip(jnp.array_split(x, 3), np.array_split(V, 3)):
        check(got, want)
    for got, want in zip(jnp.split(m, 2, axis=1), np.split(M, 2, axis=1)):
        check(got, want)
    for got, want in zip(jnp.hsplit(m, 2), np.hsplit(M, 2)):
        check(got, want)
    for got, want in zip(jnp.vsplit(jnp.asarray(A[0]), 3), np.vsplit(A[0], 3)):
        check(got, want)
    with pytest.raises(ValueError, match="array split does not result in an equal division: rest is 1"):
        jnp.split(x, 2)


@pytest.mark.parametrize("reps", [2, (2, 1), (1, 2, 3), (0, 2)])
def test_tile(reps):
    check(jnp.tile(jnp.asarray(M), reps), np.tile(M, reps))


def test_repeat():
    x = jnp.asarray(M)
    check(jnp.repeat(x, 2), np.repeat(M, 2))
    check(jnp.repeat(x, 3, axis=1), np.repeat(M, 3, axis=1))
    check(x.repeat(2, axis=0), np.repeat(M, 2, axis=0))
    check(jnp.repeat(jnp.asarray(V), 2, total_repeat_length=7), np.repeat(V, 2)[:7])


def test_flip_roll_rot90():
    x = jnp.asarray(A)
    check(jnp.flip(x), np.flip(A))
    check(jnp.flip(x, 1), np.flip(A, 1))
    check(jnp.flip(x, (0, 2)), np.flip(A, (0, 2)))
    check(jnp.fliplr(jnp.asarray(M)), np.fliplr(M))
    check(jnp.flipud(jnp.asarray(M)), np.flipud(M))
    check(jnp.roll(jnp.asarray(V), 2), np.roll(V, 2))
    check(jnp.roll(jnp.asarray(V), -7), np.roll(V, -7))
    check(jnp.roll(x, 5), np.roll(A, 5))
    check(jnp.roll(x, (1, -1), axis=(0, 2)), np.roll(A, (1, -1), axis=(0, 2)))
    check(jnp.roll(jnp.asarray(V), jnp.asarray(3)), np.roll(V, 3))
    for k in range(-1, 5):
        check(jnp.rot90(jnp.asarray(M), k), np.rot90(M, k))
    check(jnp.rot90(x, 1, axes=(1, 2)), np.rot90(A, 1, axes=(1, 2)))


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric", "wrap", "maximum", "minimum"])
@pytest.mark.parametrize("width", [0, 1, (2, 3), ((1, 0), (0, 2)), 6])
def test_pad(mode, width):
    x = M if np.ndim(width) < 2 else M
    check(jnp.pad(jnp.asarray(x), width, mode=mode), np.pad(x, width, mode=mode))


def test_pad_constant_values():
    check(jnp.pad(jnp.asarray(V), (1, 1), constant_values=9), np.pad(V, (1, 1), constant_values=9))
    check(jnp.pad(jnp.asarray(M), ((1, 2), (3, 0)), constant_values=((1, 2), (3, 4))),
          np.pad(M, ((1, 2), (3, 0)), constant_values=((1, 2), (3, 4))))
    check(jnp.pad(jnp.asarray(V), 2), np.pad(V, 2))


def test_append_insert_delete_diff():
    x = jnp.asarray(V)
    check(jnp.append(x, 7), np.append(V, 7))
    r = jnp.append(x, 1.5)
    assert r.dtype == np.float32 and r.weak_type
    check(jnp.append(jnp.asarray(M), jnp.asarray(M), axis=0), np.append(M, M, axis=0))
    check(jnp.insert(x, 1, 9), np.insert(V, 1, 9))
    check(jnp.insert(x, 5, 9), np.insert(V, 5, 9))
    check(jnp.insert(x, [1, 3], [8, 9]), np.insert(V, [1, 3], [8, 9]))
    check(jnp.insert(jnp.asarray(M), 1, 0.5, axis=1), np.insert(M, 1, 0.5, axis=1))
    check(jnp.delete(x, 1), np.delete(V, 1))
    check(jnp.delete(x, [0, -1]), np.delete(V, [0, -1]))
    check(jnp.delete(jnp.asarray(M), 1, axis=1), np.delete(M, 1, axis=1))
    check(jnp.diff(x), np.diff(V))
    check(jnp.diff(jnp.asarray(M), n=2, axis=0), np.diff(M, n=2, axis=0))
    check(jnp.diff(jnp.asarray([True, False, False])), np.diff([True, False, False]))
    check(jnp.diff(x, prepend=0, append=10), np.diff(V, prepend=0, append=10))
    check(jnp.ediff1d(x, to_begin=-1), np.ediff1d(V, to_begin=-1))
    check(jnp.resize(x, (2, 4)), np.resize(V, (2, 4)))


def test_shape_helpers():
    assert jnp.shape(jnp.asarray(A)) == (2, 3, 4)
    assert jnp.ndim(3.0) == 0
    assert jnp.size(jnp.asarray(A)) == 24
    assert jnp.size(jnp.asarray(A), 1) == 3
    assert jnp.astype(jnp.asarray(V), jnp.float32).dtype == np.float32


def test_empty_arrays():
    e = np.zeros((0, 3), np.float32)
    x = jnp.asarray(e)
    check(jnp.reshape(x, (3, 0)), e.reshape(3, 0))
    check(jnp.concatenate([x, x]), np.concatenate([e, e]))
    check(jnp.transpose(x), e.T)
    check(jnp.flip(x), e)
    check(jnp.tile(x, 2), np.tile(e, 2))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=1, max_size=3), data=st.data())
def test_transpose_and_moveaxis_hypothesis(shape, data):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    perm = data.draw(st.permutations(range(len(shape))))
    check(jnp.transpose(jnp.asarray(a), perm), a.transpose(perm))
    src = data.draw(st.integers(-len(shape), len(shape) - 1))
    dst = data.draw(st.integers(-len(shape), len(shape) - 1))
    check(jnp.moveaxis(jnp.asarray(a), src, dst), np.moveaxis(a, src, dst))
