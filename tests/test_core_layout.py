"""Tests of the C++ core's layout ops (transpose, reshape, broadcast_in_dim, slice, dynamic_slice,
dynamic_update_slice, concatenate, pad, rev) against NumPy, over all dtypes and many shapes."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import ALL_DTYPES, _NP_DTYPES, to_numpy
from xjax import _core

INDEX_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FAST = settings(max_examples=40, deadline=None)


def _to_core(x):
    # core_util.to_core turns 0-d arrays into shape (1,) (np.ascontiguousarray is at least 1-d).
    x = np.asarray(x)
    c = np.ascontiguousarray(x)
    return _core.Array.from_buffer(c.reshape(-1).view(np.uint8), x.shape, c.dtype.name)


def run(op, *inputs, **attrs):
    arrays = [_to_core(x) for x in inputs]
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
    (out,) = exe.run(arrays)
    return to_numpy(out)


def infer(op, types, **attrs):
    return _core.infer(op, [(tuple(s), d) for s, d in types], attrs)


def make(shape, dtype, seed=0):
    """Random data of a dtype; floats include NaN, +-inf and -0.0 to check bit-exact copies."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    dt = _NP_DTYPES[dtype]
    if dtype == "bool":
        x = rng.integers(0, 2, n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    else:
        x = (rng.standard_normal(n) * 100).astype(dt)
        specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype=np.float32).astype(dt)
        x[: min(n, 4)] = specials[: min(n, 4)]
        x = rng.permutation(x)
    return x.reshape(shape)


def check(got, want):
    want = np.asarray(want)
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


def scalar(value, dtype):
    return np.array(value, dtype=_NP_DTYPES[dtype])


shapes = st.lists(st.integers(0, 5), min_size=0, max_size=4).map(tuple)
dtypes = st.sampled_from(ALL_DTYPES)


# ---------------------------------------------------------------------------------- transpose

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_transpose_dtypes(dtype):
    x = make((3, 4, 5), dtype)
    for perm in itertools.permutations(range(3)):
        check(run("transpose", x, permutation=perm), np.transpose(x, perm))


@pytest.mark.parametrize("dtype", ["uint8", "float16", "float32", "float64"])
@pytest.mark.parametrize("shape,perm", [((300, 517), (1, 0)), ((3, 130, 70), (0, 2, 1)), ((70, 3, 130), (2, 1, 0)),
                                         ((65, 33, 9, 2), (2, 0, 3, 1)), ((1000, 3), (1, 0)), ((3, 1000), (1, 0))])
def test_transpose_large(dtype, shape, perm):
    x = make(shape, dtype)
    check(run("transpose", x, permutation=perm), np.transpose(x, perm))


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_transpose_hypothesis(shape, dtype, data):
    perm = data.draw(st.permutations(range(len(shape))))
    x = make(shape, dtype)
    check(run("transpose", x, permutation=tuple(perm)), np.transpose(x, perm))


# ---------------------------------------------------------------------------------- reshape

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reshape_dtypes(dtype):
    x = make((4, 6), dtype)
    for new in [(24,), (2, 3, 4), (1, 24, 1), (6, 4)]:
        check(run("reshape", x, new_sizes=new), x.reshape(new))
    check(run("reshape", make((), dtype), new_sizes=(1, 1)), make((), dtype).reshape(1, 1))
    check(run("reshape", make((1, 1), dtype), new_sizes=()), make((1, 1), dtype).reshape(()))
    check(run("reshape", make((0, 3), dtype), new_sizes=(3, 0, 5)), np.zeros((3, 0, 5), _NP_DTYPES[dtype]))


def test_reshape_large():
    x = make((1 << 20,), "float32")
    check(run("reshape", x, new_sizes=(256, 4096)), x.reshape(256, 4096))


# ---------------------------------------------------------------------------------- broadcast_in_dim

def broadcast_ref(x, shape, dims):
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_broadcast_in_dim_dtypes(dtype):
    cases = [((), (2, 3), ()), ((3,), (2, 3), (1,)), ((2,), (2, 3), (0,)), ((2, 1), (2, 4, 3), (0, 2)),
             ((1, 3), (5, 3), (0, 1)), ((1,), (4,), (0,)), ((2, 3), (2, 0, 3), (0, 2)), ((0,), (4, 0), (1,))]
    for xs, shape, dims in cases:
        x = make(xs, dtype)
        check(run("broadcast_in_dim", x, shape=shape, broadcast_dimensions=dims), broadcast_ref(x, shape, dims))


@pytest.mark.parametrize("xs,shape,dims", [((4096,), (300, 4096), (1,)), ((300,), (300, 999), (0,)),
                                           ((300, 1, 7), (300, 50, 7), (0, 1, 2))])
def test_broadcast_in_dim_large(xs, shape, dims):
    x = make(xs, "float32")
    check(run("broadcast_in_dim", x, shape=shape, broadcast_dimensions=dims), broadcast_ref(x, shape, dims))


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_broadcast_in_dim_hypothesis(shape, dtype, data):
    dims = sorted(data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True)) if shape else [])
    xs = tuple(data.draw(st.sampled_from([1, shape[d]])) for d in dims)
    x = make(xs, dtype)
    check(run("broadcast_in_dim", x, shape=shape, broadcast_dimensions=dims), broadcast_ref(x, shape, dims))


# ---------------------------------------------------------------------------------- slice

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_slice_dtypes(dtype):
    x = make((5, 6, 7), dtype)
    check(run("slice", x, start_indices=(1, 0, 2), limit_indices=(4, 6, 7)), x[1:4, 0:6, 2:7])
    check(run("slice", x, start_indices=(0, 1, 0), limit_indices=(5, 6, 7), strides=(2, 3, 4)), x[0:5:2, 1:6:3, ::4])
    check(run("slice", x, start_indices=(2, 2, 2), limit_indices=(2, 5, 3)), x[2:2, 2:5, 2:3])
    check(run("slice", make((), dtype), start_indices=(), limit_indices=()), make((), dtype))


def test_slice_huge_stride():
    x = make((10,), "int16")
    check(run("slice", x, start_indices=(2,), limit_indices=(9,), strides=((1 << 63) - 1,)), x[2:3])


def test_slice_large():
    x = make((2048, 1024), "float32")
    check(run("slice", x, start_indices=(1, 7), limit_indices=(2000, 1000)), x[1:2000, 7:1000])
    check(run("slice", x, start_indices=(0, 1), limit_indices=(2048, 1024), strides=(1, 2)), x[:, 1::2])


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_slice_hypothesis(shape, dtype, data):
    start, limit, strides = [], [], []
    for d in shape:
        a = data.draw(st.integers(0, d))
        b = data.draw(st.integers(a, d))
        start.append(a)
        limit.append(b)
        strides.append(data.draw(st.integers(1, 3)))
    x = make(shape, dtype)
    want = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, strides))]
    check(run("slice", x, start_indices=start, limit_indices=limit, strides=strides), want)


# ---------------------------------------------------------------------------------- dynamic_slice

def clamp_starts(starts, dims, sizes):
    return [int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, dims, sizes)]


def dynamic_slice_ref(x, starts, sizes):
    c = clamp_starts(starts, x.shape, sizes)
    return x[tuple(slice(a, a + z) for a, z in zip(c, sizes))]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dynamic_slice_dtypes(dtype):
    x = make((5, 6), dtype)
    for starts in [(1, 2), (-3, 10), (4, 4), (100, -100)]:
        idx = [scalar(s, "int32") for s in starts]
        check(run("dynamic_slice", x, *idx, slice_sizes=(2, 3)), dynamic_slice_ref(x, starts, (2, 3)))
    check(run("dynamic_slice", make((), dtype), slice_sizes=()), make((), dtype))
    check(run("dynamic_slice", x, scalar(3, "int32"), scalar(1, "int32"), slice_sizes=(0, 6)), x[:0, :])


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_dynamic_slice_index_dtypes(index_dtype):
    x = make((7, 9), "float32")
    info = np.iinfo(_NP_DTYPES[index_dtype])
    for starts in [(2, 5), (info.max, info.min), (info.min, info.max)]:
        idx = [scalar(s, index_dtype) for s in starts]
        check(run("dynamic_slice", x, *idx, slice_sizes=(3, 4)), dynamic_slice_ref(x, starts, (3, 4)))


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_dynamic_slice_hypothesis(shape, dtype, data):
    sizes = [data.draw(st.integers(0, d)) for d in shape]
    starts = [data.draw(st.integers(-8, 8)) for _ in shape]
    x = make(shape, dtype)
    idx = [scalar(s, "int64") for s in starts]
    check(run("dynamic_slice", x, *idx, slice_sizes=sizes), dynamic_slice_ref(x, starts, sizes))


# ---------------------------------------------------------------------------------- dynamic_update_slice

def dynamic_update_slice_ref(x, u, starts):
    c = clamp_starts(starts, x.shape, u.shape)
    y = x.copy()
    y[tuple(slice(a, a + z) for a, z in zip(c, u.shape))] = u
    return y


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_dynamic_update_slice_dtypes(dtype):
    x, u = make((5, 6), dtype, 1), make((2, 3), dtype, 2)
    for starts in [(0, 0), (3, 3), (-1, 9), (4, 2)]:
        idx = [scalar(s, "int32") for s in starts]
        check(run("dynamic_update_slice", x, u, *idx), dynamic_update_slice_ref(x, u, starts))
    check(run("dynamic_update_slice", make((), dtype, 1), make((), dtype, 2)), make((), dtype, 2))
    check(run("dynamic_update_slice", x, make((0, 6), dtype), scalar(2, "uint8"), scalar(0, "uint8")), x)
    check(run("dynamic_update_slice", x, x[::-1].copy(), scalar(2, "int16"), scalar(-5, "int16")), x[::-1])


def test_dynamic_update_slice_large():
    x, u = make((1024, 512), "float32", 1), make((1000, 300), "float32", 2)
    idx = [scalar(10, "int64"), scalar(250, "int64")]
    check(run("dynamic_update_slice", x, u, *idx), dynamic_update_slice_ref(x, u, (10, 250)))


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_dynamic_update_slice_hypothesis(shape, dtype, data):
    ushape = tuple(data.draw(st.integers(0, d)) for d in shape)
    starts = [data.draw(st.integers(-8, 8)) for _ in shape]
    x, u = make(shape, dtype, 1), make(ushape, dtype, 2)
    idx = [scalar(s, "int32") for s in starts]
    check(run("dynamic_update_slice", x, u, *idx), dynamic_update_slice_ref(x, u, starts))


# ---------------------------------------------------------------------------------- concatenate

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_concatenate_dtypes(dtype):
    a, b, c = make((2, 3, 4), dtype, 1), make((2, 5, 4), dtype, 2), make((2, 0, 4), dtype, 3)
    check(run("concatenate", a, b, c, dimension=1), np.concatenate([a, b, c], axis=1))
    check(run("concatenate", a, a, dimension=0), np.concatenate([a, a], axis=0))
    check(run("concatenate", a, dimension=2), a)
    d = make((2, 3, 1), dtype, 4)
    check(run("concatenate", d, a, d, dimension=2), np.concatenate([d, a, d], axis=2))


def test_concatenate_large():
    a, b = make((2048, 1000), "float32", 1), make((2048, 24), "float32", 2)
    check(run("concatenate", a, b, a, dimension=1), np.concatenate([a, b, a], axis=1))
    check(run("concatenate", a, a, dimension=0), np.concatenate([a, a], axis=0))


@FAST
@given(shape=shapes.filter(len), dtype=dtypes, data=st.data())
def test_concatenate_hypothesis(shape, dtype, data):
    dim = data.draw(st.integers(0, len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=4))
    xs = [make(shape[:dim] + (n,) + shape[dim + 1:], dtype, i) for i, n in enumerate(sizes)]
    check(run("concatenate", *xs, dimension=dim), np.concatenate(xs, axis=dim))


# ---------------------------------------------------------------------------------- pad

def pad_ref(x, value, config):
    """Interior padding by scattering into a strided view, then np.pad / cropping per edge."""
    y = x
    for axis, (lo, hi, interior) in enumerate(config):
        n = y.shape[axis]
        shape = list(y.shape)
        shape[axis] = n + max(n - 1, 0) * interior
        z = np.full(shape, value, dtype=x.dtype)
        z[(slice(None),) * axis + (slice(None, None, interior + 1),)] = y
        widths = [(0, 0)] * y.ndim
        widths[axis] = (max(lo, 0), max(hi, 0))
        z = np.pad(z, widths, constant_values=value)
        stop = z.shape[axis] - max(-hi, 0)
        y = z[(slice(None),) * axis + (slice(max(-lo, 0), stop),)]
    return y


def flat(config):
    return [v for triple in config for v in triple]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pad_dtypes(dtype):
    x, v = make((3, 4), dtype, 1), make((), dtype, 2)
    for config in [[(1, 2, 0), (0, 3, 0)], [(0, 0, 1), (2, 1, 2)], [(-1, 1, 0), (1, -2, 0)],
                   [(-2, -1, 1), (-3, 2, 3)], [(0, 0, 0), (0, 0, 0)], [(-5, 0, 1), (0, 0, 0)],
                   [(-6, 1, 1), (0, -4, 0)]]:
        check(run("pad", x, v, padding_config=flat(config)), pad_ref(x, v, config))
    check(run("pad", make((), dtype), v, padding_config=()), make((), dtype))
    check(run("pad", make((0, 2), dtype), v, padding_config=(1, 1, 5, 0, 0, 1)), pad_ref(make((0, 2), dtype), v,
                                                                                          [(1, 1, 5), (0, 0, 1)]))


def test_pad_extreme_config():
    # Huge low/high that cancel out must not overflow the kernel's index arithmetic.
    x, v = make((5,), "int32", 1), scalar(-7, "int32")
    lo, hi = -(1 << 63), (1 << 63) - 1
    check(run("pad", x, v, padding_config=(lo, hi, 0)), np.full((4,), -7, np.int32))
    check(run("pad", x, v, padding_config=(hi - 3, lo + 2, 0)), np.full((3,), -7, np.int32))
    check(run("pad", x[:1], v, padding_config=(0, 0, (1 << 62))), x[:1])


def test_pad_large():
    x, v = make((1000, 700), "float32", 1), scalar(7.5, "float32")
    for config in [[(3, 5, 0), (17, 1, 0)], [(-3, 2, 1), (0, -9, 2)]]:
        check(run("pad", x, v, padding_config=flat(config)), pad_ref(x, v, config))


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_pad_hypothesis(shape, dtype, data):
    config = []
    for d in shape:
        interior = data.draw(st.integers(0, 2))
        full = d + max(d - 1, 0) * interior
        lo = data.draw(st.integers(-full - 2, 3))
        hi = data.draw(st.integers(max(-full - lo, -3), 3))
        config.append((lo, hi, interior))
    x, v = make(shape, dtype, 1), make((), dtype, 2)
    check(run("pad", x, v, padding_config=flat(config)), pad_ref(x, v, config))


# ---------------------------------------------------------------------------------- rev

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_rev_dtypes(dtype):
    x = make((3, 4, 5), dtype)
    for r in range(4):
        for dims in itertools.combinations(range(3), r):
            check(run("rev", x, dimensions=dims), np.flip(x, dims) if dims else x)
    check(run("rev", make((), dtype), dimensions=()), make((), dtype))
    check(run("rev", make((0, 3), dtype), dimensions=(0, 1)), make((0, 3), dtype))


def test_rev_large():
    x = make((600, 1001), "float32")
    check(run("rev", x, dimensions=(1,)), x[:, ::-1])
    check(run("rev", x, dimensions=(0,)), x[::-1])
    check(run("rev", x, dimensions=(0, 1)), x[::-1, ::-1])


@FAST
@given(shape=shapes, dtype=dtypes, data=st.data())
def test_rev_hypothesis(shape, dtype, data):
    dims = data.draw(st.lists(st.integers(0, len(shape) - 1), unique=True)) if shape else []
    x = make(shape, dtype)
    check(run("rev", x, dimensions=dims), np.flip(x, dims) if dims else x)


# ---------------------------------------------------------------------------------- bad input

F = "float32"
BAD = [
    ("transpose", [((2, 3), F)], dict(permutation=(0, 0)), ValueError, "permutation"),
    ("transpose", [((2, 3), F)], dict(permutation=(0,)), ValueError, "permutation"),
    ("transpose", [((2, 3), F)], dict(permutation=(1, 2)), ValueError, "permutation"),
    ("transpose", [((2, 3), F)], dict(permutation=(-1, 0)), ValueError, "permutation"),
    ("transpose", [((2, 3), F)], dict(), ValueError, "missing attribute 'permutation'"),
    ("transpose", [((2, 3), F)], dict(permutation=1), TypeError, "permutation"),
    ("reshape", [((2, 3), F)], dict(new_sizes=(4, 2)), ValueError, r"\(2, 3\).*\(4, 2\)"),
    ("reshape", [((2, 3), F)], dict(new_sizes=(-1, 6)), ValueError, "negative"),
    ("reshape", [((2, 3), F)], dict(new_sizes=(1 << 40, 1 << 40)), ValueError, "too large"),
    ("broadcast_in_dim", [((3,), F)], dict(shape=(2, 4), broadcast_dimensions=(1,)), ValueError, "must be 1 or equal"),
    ("broadcast_in_dim", [((3,), F)], dict(shape=(2, 3), broadcast_dimensions=(2,)), ValueError, "out of range"),
    ("broadcast_in_dim", [((3,), F)], dict(shape=(2, 3), broadcast_dimensions=()), ValueError, "one entry"),
    ("broadcast_in_dim", [((1, 1), F)], dict(shape=(2, 3), broadcast_dimensions=(1, 0)), ValueError, "increasing"),
    ("broadcast_in_dim", [((1, 1), F)], dict(shape=(2, 3), broadcast_dimensions=(1, 1)), ValueError, "increasing"),
    ("broadcast_in_dim", [((3,), F)], dict(shape=(-2, 3), broadcast_dimensions=(1,)), ValueError, "negative"),
    ("slice", [((4, 5), F)], dict(start_indices=(0, 0), limit_indices=(5, 5)), ValueError, "limit"),
    ("slice", [((4, 5), F)], dict(start_indices=(-1, 0), limit_indices=(2, 5)), ValueError, "start"),
    ("slice", [((4, 5), F)], dict(start_indices=(3, 0), limit_indices=(2, 5)), ValueError, "start"),
    ("slice", [((4, 5), F)], dict(start_indices=(0,), limit_indices=(2,)), ValueError, "one entry"),
    ("slice", [((4, 5), F)], dict(start_indices=(0, 0), limit_indices=(2, 2), strides=(1, 0)), ValueError, "strides"),
    ("slice", [((4, 5), F)], dict(start_indices=(0, 0), limit_indices=(2, 2), strides=(1,)), ValueError, "strides"),
    ("dynamic_slice", [((4, 5), F), ((), "int32")], dict(slice_sizes=(1, 1)), ValueError, "one start index"),
    ("dynamic_slice", [((4, 5), F), ((), "int32"), ((), "float32")], dict(slice_sizes=(1, 1)), TypeError,
     "integers"),
    ("dynamic_slice", [((4, 5), F), ((), "int32"), ((), "int64")], dict(slice_sizes=(1, 1)), TypeError,
     "same dtype"),
    ("dynamic_slice", [((4, 5), F), ((1,), "int32"), ((), "int32")], dict(slice_sizes=(1, 1)), TypeError, "0-d"),
    ("dynamic_slice", [((4, 5), F), ((), "int32"), ((), "int32")], dict(slice_sizes=(5, 1)), ValueError,
     "slice_sizes"),
    ("dynamic_slice", [((4, 5), F), ((), "int32"), ((), "int32")], dict(slice_sizes=(1,)), ValueError,
     "slice_sizes"),
    ("dynamic_slice", [((4, 5), F), ((), "bool"), ((), "bool")], dict(slice_sizes=(1, 1)), TypeError, "integers"),
    ("dynamic_update_slice", [((4, 5), F), ((2, 2), "int32"), ((), "int32"), ((), "int32")], {}, TypeError,
     "dtype"),
    ("dynamic_update_slice", [((4, 5), F), ((2,), F), ((), "int32"), ((), "int32")], {}, ValueError, "rank"),
    ("dynamic_update_slice", [((4, 5), F), ((2, 6), F), ((), "int32"), ((), "int32")], {}, ValueError, "exceed"),
    ("dynamic_update_slice", [((4, 5), F), ((2, 2), F), ((), "int32")], {}, ValueError, "one start index"),
    ("dynamic_update_slice", [((4, 5), F), ((2, 2), F), ((), F), ((), F)], {}, TypeError, "integers"),
    ("dynamic_update_slice", [((4, 5), F)], {}, ValueError, "update"),
    ("concatenate", [], dict(dimension=0), ValueError, "at least one"),
    ("concatenate", [((2, 3), F), ((2, 3), "int32")], dict(dimension=0), TypeError, "dtype"),
    ("concatenate", [((2, 3), F), ((2,), F)], dict(dimension=0), ValueError, "rank"),
    ("concatenate", [((2, 3), F), ((3, 3), F)], dict(dimension=1), ValueError, "equal dimensions"),
    ("concatenate", [((2, 3), F), ((2, 3), F)], dict(dimension=2), ValueError, "out of range"),
    ("concatenate", [((), F)], dict(dimension=0), ValueError, "out of range"),
    ("concatenate", [((2, 3), F)], dict(dimension=(0,)), TypeError, "dimension"),
    ("pad", [((2, 3), F), ((), "int32")], dict(padding_config=(0,) * 6), TypeError, "padding value"),
    ("pad", [((2, 3), F), ((1,), F)], dict(padding_config=(0,) * 6), ValueError, "padding value"),
    ("pad", [((2, 3), F), ((), F)], dict(padding_config=(0,) * 3), ValueError, "triple"),
    ("pad", [((2, 3), F), ((), F)], dict(padding_config=(0, 0, -1, 0, 0, 0)), ValueError, "interior"),
    ("pad", [((2, 3), F), ((), F)], dict(padding_config=(-2, -1, 0, 0, 0, 0)), ValueError, "negative size"),
    ("pad", [((2, 3), F), ((), F)], dict(padding_config=(0, 0, 0, 1 << 62, 1 << 62, 0)), ValueError, "too large"),
    ("rev", [((2, 3), F)], dict(dimensions=(2,)), ValueError, "dimensions"),
    ("rev", [((2, 3), F)], dict(dimensions=(0, 0)), ValueError, "dimensions"),
    ("rev", [((2, 3), F)], dict(dimensions=(-1,)), ValueError, "dimensions"),
]


@pytest.mark.parametrize("op,types,attrs,exc,match", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input(op, types, attrs, exc, match):
    with pytest.raises(exc, match=rf"\[{op}\].*{match}"):
        infer(op, types, **attrs)


def test_wrong_arity():
    with pytest.raises(ValueError, match=r"\[transpose\].*operands"):
        infer("transpose", [((2,), F), ((2,), F)], permutation=(0,))
    with pytest.raises(ValueError, match=r"\[pad\].*operands"):
        infer("pad", [((2,), F)], padding_config=(0, 0, 0))


def test_inferred_types():
    assert infer("transpose", [((2, 3, 4), "int8")], permutation=(2, 0, 1)) == [((4, 2, 3), "int8")]
    assert infer("slice", [((10,), F)], start_indices=(1,), limit_indices=(8,), strides=(3,)) == [((3,), F)]
    assert infer("pad", [((4,), F), ((), F)], padding_config=(-1, 2, 3)) == [((14,), F)]
    assert infer("pad", [((0,), F), ((), F)], padding_config=(1, 2, 3)) == [((3,), F)]
