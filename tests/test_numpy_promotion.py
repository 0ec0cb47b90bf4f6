"""Result dtypes of jnp functions against JAX 0.10.2, with x64 off and on: result_type and
promote_types, the linspace family, reductions' integer and float promotion, index dtypes."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax._src.config import config


@pytest.fixture
def x64():
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", False)


# (arguments, jnp.result_type with x64 off, with x64 on); recorded from JAX.
RESULT_TYPE = [
    (("bool",), "bool", "bool"),
    ((bool,), "bool", "bool"),
    ((int,), "int32", "int64"),
    ((float,), "float32", "float64"),
    ((np.float64,), "float32", "float64"),
    ((np.int64,), "int32", "int64"),
    ((np.dtype("float64"),), "float32", "float64"),
    ((np.dtype("int64"),), "int32", "int64"),
    ((np.dtype(bool),), "bool", "bool"),
    ((jnp.bool_,), "bool", "bool"),
    ((jnp.int8, int), "int8", "int8"),
    ((jnp.int8, bool), "int8", "int8"),
    ((jnp.float16, float), "float16", "float16"),
    ((jnp.float64, jnp.int64), "float32", "float64"),
    ((np.dtype("int64"), np.dtype("float32")), "float32", "float32"),
    ((bool, int), "int32", "int64"),
    ((int, float), "float32", "float64"),
    ((np.uint32, np.int32), "int32", "int64"),
    (("float32", "int64"), "float32", "float32"),
    ((np.dtype("float64"), 1.0), "float32", "float64"),
    ((jnp.int32, 2.0), "float32", "float64"),
    ((None,), "float32", "float64"),
    ((3,), "int32", "int64"),
    ((3.0,), "float32", "float64"),
    ((True,), "bool", "bool"),
]

# (a, b, jnp.promote_types with x64 off, with x64 on): JAX does not canonicalise here.
PROMOTE_TYPES = [
    ("bool", "bool", "bool", "bool"),
    (bool, bool, "bool", "bool"),
    (int, int, "int64", "int64"),
    (float, float, "float64", "float64"),
    (np.float64, np.float64, "float64", "float64"),
    (np.dtype("int64"), np.dtype("int64"), "int64", "int64"),
    (np.dtype(bool), np.dtype(bool), "bool", "bool"),
    (jnp.int8, int, "int8", "int8"),
    (jnp.int8, bool, "int8", "int8"),
    (jnp.float16, float, "float16", "float16"),
    (jnp.float64, jnp.int64, "float64", "float64"),
    (np.dtype("int64"), np.dtype("float32"), "float32", "float32"),
    (bool, int, "int64", "int64"),
    (int, float, "float64", "float64"),
    (np.uint32, np.int32, "int32", "int64"),
    ("float32", "int64", "float32", "float32"),
    (None, None, "float64", "float64"),
]


@pytest.mark.parametrize("args, want32, want64", RESULT_TYPE)
def test_result_type(args, want32, want64):
    assert jnp.result_type(*args) == np.dtype(want32)
    config.update("jax_enable_x64", True)
    try:
        assert jnp.result_type(*args) == np.dtype(want64)
    finally:
        config.update("jax_enable_x64", False)


@pytest.mark.parametrize("a, b, want32, want64", PROMOTE_TYPES)
def test_promote_types(a, b, want32, want64):
    assert jnp.promote_types(a, b) == np.dtype(want32)
    config.update("jax_enable_x64", True)
    try:
        assert jnp.promote_types(a, b) == np.dtype(want64)
    finally:
        config.update("jax_enable_x64", False)


# (call, repr with x64 off, repr with x64 on), from JAX.
SPACES = [
    (lambda: jnp.linspace(0, 1, 3), "Array([0. , 0.5, 1. ], dtype=float32)", "Array([0. , 0.5, 1. ], dtype=float64)"),
    (lambda: jnp.linspace(jnp.float16(0), 1, 3), "Array([0. , 0.5, 1. ], dtype=float16)", None),
    (lambda: jnp.linspace(jnp.int8(0), 4, 3), "Array([0., 2., 4.], dtype=float32)", None),
    (lambda: jnp.linspace(jnp.bfloat16(0), jnp.float16(1), 3), "Array([0. , 0.5, 1. ], dtype=float32)", None),
    (lambda: jnp.linspace(0, 10, 4, dtype=int), "Array([ 0,  3,  6, 10], dtype=int32)",
     "Array([ 0,  3,  6, 10], dtype=int64)"),
    (lambda: jnp.linspace(jnp.int32(0), 1, 3), "Array([0. , 0.5, 1. ], dtype=float32)", None),
    (lambda: jnp.logspace(0, 2, 3), "Array([  1.,  10., 100.], dtype=float32)",
     "Array([  1.,  10., 100.], dtype=float64)"),
    (lambda: jnp.logspace(jnp.float16(0), 2, 3), "Array([  1.,  10., 100.], dtype=float16)", None),
    (lambda: jnp.logspace(0, 2, 3, dtype=jnp.int32), "Array([  1,  10, 100], dtype=int32)", None),
    (lambda: jnp.logspace(0, 2, 3, base=2), "Array([1., 2., 4.], dtype=float32)", "Array([1., 2., 4.], dtype=float64)"),
    (lambda: jnp.geomspace(1, 100, 3), "Array([  1.,  10., 100.], dtype=float32)",
     "Array([  1.,  10., 100.], dtype=float64)"),
    (lambda: jnp.geomspace(jnp.float16(1), 100, 3), "Array([  1.,  10., 100.], dtype=float16)", None),
    (lambda: jnp.geomspace(-1, -100, 3, dtype=jnp.int16), "Array([  -1,  -10, -100], dtype=int16)", None),
    (lambda: jnp.linspace(np.float64(0), 1, 3), "Array([0. , 0.5, 1. ], dtype=float32)",
     "Array([0. , 0.5, 1. ], dtype=float64)"),
]


@pytest.mark.parametrize("call, want32, want64", SPACES)
def test_linspace_family(call, want32, want64):
    assert repr(call()) == want32
    config.update("jax_enable_x64", True)
    try:
        assert repr(call()) == (want64 or want32)
    finally:
        config.update("jax_enable_x64", False)


def test_cumulative_sum_promotes_narrow_integers():
    x = jnp.full((200,), 1, jnp.int8)
    out = jnp.cumulative_sum(x)
    assert out.dtype == np.int32 and int(out[-1]) == 200
    assert jnp.cumulative_sum(jnp.arange(3, dtype=jnp.uint8)).dtype == np.uint32
    assert jnp.cumulative_sum(jnp.arange(3, dtype=jnp.int16), include_initial=True).dtype == np.int32
    assert repr(jnp.cumulative_sum(jnp.array([[1, 2], [3, 4]], jnp.uint16), axis=1, include_initial=True)) == \
        "Array([[0, 1, 3],\n       [0, 3, 7]], dtype=uint32)"
    assert jnp.cumulative_sum(jnp.arange(3, dtype=jnp.int8), dtype=jnp.int8).dtype == np.int8
    assert jnp.cumulative_sum(jnp.array([True, True])).dtype == np.int32
    # cumsum and cumulative_prod keep narrow integer types, as in JAX.
    assert jnp.cumsum(jnp.arange(3, dtype=jnp.int8)).dtype == np.int8
    assert jnp.cumulative_prod(jnp.arange(3, dtype=jnp.int8)).dtype == np.int8
    assert jnp.cumulative_prod(jnp.array([True, True])).dtype == np.int32


def test_sum_of_bools_without_integer_promotion_is_int32():
    assert repr(jnp.sum(jnp.array([True, True, False]), promote_integers=False)) == "Array(2, dtype=int32)"
    assert repr(jnp.prod(jnp.array([True, True]), promote_integers=False)) == "Array(1, dtype=int32)"


# (function, input dtype, result dtype with x64 on), from JAX: 32-bit and narrower integers and bools
# compute in float32, 64-bit integers in float64; some functions use the default float instead.
X64_FLOAT_RESULTS = [
    ("mean", "int32", "float32"), ("mean", "int64", "float64"), ("mean", "bool", "float32"),
    ("var", "uint16", "float32"), ("std", "int8", "float32"), ("median", "int32", "float32"),
    ("median", "uint64", "float64"), ("average", "int32", "float32"), ("nanmean", "int32", "float32"),
    ("sin", "int32", "float32"), ("sin", "int64", "float64"), ("sqrt", "uint32", "float32"),
    ("linalg.norm", "int32", "float32"),
    ("rint", "int32", "float64"), ("angle", "int8", "float64"), ("unwrap", "int32", "float64"),
    ("linalg.vector_norm", "int32", "float64"), ("polyint", "bool", "float64"), ("polyint", "int8", "float32"),
]


@pytest.mark.parametrize("name, dtype, want", X64_FLOAT_RESULTS)
def test_x64_float_results(x64, name, dtype, want):
    fn = getattr(jnp.linalg, name[7:]) if name.startswith("linalg.") else getattr(jnp, name)
    assert fn(jnp.array([1, 2, 3, 1], dtype=dtype)).dtype == np.dtype(want)


def test_x64_binary_promotion_then_float(x64):
    x = jnp.ones(3, jnp.int32)
    assert jnp.true_divide(x, 2).dtype == np.float32
    assert jnp.true_divide(x, jnp.ones(3, jnp.uint32)).dtype == np.float64  # int64 first
    assert jnp.sin(2).dtype == np.float64 and jnp.sin(2).weak_type


# (call, index dtype with x64 on), from JAX: indices are the default int, except searchsorted's,
# digitize's and argpartition's.
X64_INDEX_RESULTS = [
    (lambda x: jnp.argsort(x), "int64"), (lambda x: jnp.nonzero(x)[0], "int64"), (lambda x: jnp.argwhere(x), "int64"),
    (lambda x: jnp.lexsort((x,)), "int64"), (lambda x: jnp.flatnonzero(x), "int64"),
    (lambda x: jnp.unique(x, return_index=True)[1], "int64"),
    (lambda x: jnp.unique(x.reshape(2, 2), axis=0, return_inverse=True)[1], "int64"),
    (lambda x: jnp.unique_counts(x).counts, "int64"),
    (lambda x: jnp.bincount(jnp.array([1, 2])), "int64"), (lambda x: jnp.tril_indices(3)[0], "int64"),
    (lambda x: jnp.diag_indices(3)[0], "int64"), (lambda x: jnp.unravel_index(3, (2, 2))[0], "int64"),
    (lambda x: jnp.ravel_multi_index((jnp.array([1]), jnp.array([1])), (2, 2)), "int64"),
    (lambda x: jnp.indices((2, 2)), "int64"), (lambda x: jnp.histogram(x)[0], "float64"),
    (lambda x: jnp.searchsorted(x, 2.), "int32"), (lambda x: jnp.digitize(x, jnp.array([1., 2.])), "int32"),
    (lambda x: jnp.argpartition(x, 1), "int32"), (lambda x: jnp.argmax(x), "int64"),
]


@pytest.mark.parametrize("call, want", X64_INDEX_RESULTS)
def test_x64_index_dtypes(x64, call, want):
    assert call(jnp.array([3., 1., 2., 1.])).dtype == np.dtype(want)


def test_x64_linspace_under_jit(x64):
    out = xjax.jit(lambda a: jnp.linspace(a, 1.0, 3))(0.0)
    assert out.dtype == np.float64
