"""jnp.array / jnp.asarray of (nested) lists holding arrays: values as NumPy stacks them, dtypes and
weak types as JAX gives them (recorded from jax 0.10.2), built by lax ops eagerly and traced."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import xjax as jax
import xjax.numpy as jnp
from xjax._src.numpy import array_from_list

_NAMES = {"b": "bool", "i8": "int8", "u8": "uint8", "i16": "int16", "i32": "int32", "f16": "float16",
          "bf16": "bfloat16", "f32": "float32"}
_ORDER = ["b", "i8", "u8", "i16", "i32", "f16", "bf16", "f32"]
# jnp.array([jnp.zeros(2, row), jnp.ones(2, column)]).dtype in JAX (the order of _ORDER)
_JAX_PAIRS = {
    "b": "b i8 u8 i16 i32 f16 bf16 f32",
    "i8": "i8 i8 i16 i16 i32 f16 bf16 f32",
    "u8": "u8 i16 u8 i16 i32 f16 bf16 f32",
    "i16": "i16 i16 i16 i16 i32 f16 bf16 f32",
    "i32": "i32 i32 i32 i32 i32 f16 bf16 f32",
    "f16": "f16 f16 f16 f16 f16 f16 f32 f32",
    "bf16": "bf16 bf16 bf16 bf16 bf16 f32 bf16 f32",
    "f32": "f32 f32 f32 f32 f32 f32 f32 f32",
}
# jnp.array([jnp.zeros((), row), True / 2 / 2.5]).dtype in JAX (never weakly typed)
_JAX_WITH_SCALAR = {
    "b": ("b", "i32", "f32"), "i8": ("i8", "i8", "f32"), "u8": ("u8", "u8", "f32"), "i16": ("i16", "i16", "f32"),
    "i32": ("i32", "i32", "f32"), "f16": ("f16", "f16", "f16"), "bf16": ("bf16", "bf16", "bf16"),
    "f32": ("f32", "f32", "f32"),
}


def _jax_pair(a, b):
    return _NAMES[_JAX_PAIRS[a].split()[_ORDER.index(b)]]


def _host(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 100, size=shape) if dtype != "bool" else rng.integers(0, 2, size=shape)).astype(
        jnp.dtype(dtype))


@given(st.sampled_from(_ORDER), st.sampled_from(_ORDER), st.lists(st.integers(1, 3), max_size=2),
       st.integers(1, 5), st.integers(0, 2 ** 16))
def test_list_of_arrays_matches_numpy_values_and_jax_dtypes(a, b, shape, n, seed):
    leaves = [_host(_NAMES[a if i % 2 == 0 else b], shape, seed + i) for i in range(n)]
    got = jnp.array([jnp.asarray(x) for x in leaves])
    want = _jax_pair(a, b) if n > 1 else _NAMES[a]
    assert (got.dtype.name, got.weak_type, got.shape) == (want, False, (n, *shape))
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64),
                                  np.array([x.astype(np.float64) for x in leaves]))


@given(st.sampled_from(_ORDER), st.sampled_from([True, 2, 2.5]))
def test_mixed_arrays_and_python_scalars(a, s):
    x = jnp.asarray(_host(_NAMES[a], (), 0))
    got = jnp.array([x, s])
    want = _NAMES[_JAX_WITH_SCALAR[a][[bool, int, float].index(type(s))]]
    assert (got.dtype.name, got.weak_type) == (want, False)
    np.testing.assert_array_equal(np.asarray(got).astype(np.float64),
                                  np.array([np.asarray(x).astype(np.float64).item(), np.asarray(s, want).item()]))


@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.sampled_from(["int32", "float32", "bool"]))
def test_nested_lists_and_explicit_dtype(shape, dtype):
    rows, cols = shape[0], 2
    host = [[np.full(shape[1:], 10 * i + j, np.float32) for j in range(cols)] for i in range(rows)]
    nested = [[jnp.asarray(h) if (i + j) % 2 else h.tolist() if h.ndim else float(h) for j, h in enumerate(r)]
              for i, r in enumerate(host)]
    got = jnp.array(nested, dtype=dtype)
    np.testing.assert_array_equal(np.asarray(got), np.array(host).astype(dtype))
    assert got.dtype.name == dtype and got.shape == (rows, cols, *shape[1:])
    np.testing.assert_array_equal(np.asarray(jnp.asarray(tuple(nested), dtype=dtype)), np.asarray(got))


def test_more_than_sixteen_parts_and_numpy_leaves():
    xs = [jnp.asarray(float(i)) for i in range(40)]
    np.testing.assert_array_equal(np.asarray(jnp.array(xs)), np.arange(40.0))
    got = jnp.array([jnp.asarray([1, 2], dtype=jnp.int32), np.array([3.0, 4.0])])
    assert got.dtype == jnp.float32  # the float64 NumPy leaf is canonicalised first, as in JAX
    np.testing.assert_array_equal(np.asarray(got), [[1, 2], [3, 4]])


def test_eager_stacking_is_one_cached_graph():
    a, b, c = jnp.ones(3), jnp.zeros(3), jnp.arange(3.0)
    before = array_from_list._compiled.info()
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(jnp.array([a, b, c])), [[1, 1, 1], [0, 0, 0], [0, 1, 2]])
    after = array_from_list._compiled.info()
    assert after["misses"] - before["misses"] <= 1 and after["hits"] - before["hits"] >= 2


def test_traced_as_jax_prints_it():
    f = jax.make_jaxpr(lambda a, b: jnp.array([[a, 1.0], [2, b]]))
    text = str(f(jnp.asarray(1.0), jnp.asarray(3, dtype=jnp.int32)))
    # recorded from JAX
    assert text == """{ lambda ; a:f32[] b:i32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[1] = broadcast_in_dim c
    e:f32[1] = broadcast_in_dim 1.0:f32[]
    f:f32[2] = concatenate[dimension=0] d e
    g:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] f
    h:f32[1] = broadcast_in_dim 2.0:f32[]
    i:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    j:f32[1] = broadcast_in_dim i
    k:f32[2] = concatenate[dimension=0] h j
    l:f32[1,2] = broadcast_in_dim[broadcast_dimensions=(1,)] k
    m:f32[2,2] = concatenate[dimension=0] g l
  in (m,) }"""
    jf = jax.jit(lambda a, b: jnp.array([[a, 1.0], [2, b]]))
    np.testing.assert_array_equal(np.asarray(jf(jnp.asarray(1.0), jnp.asarray(3, dtype=jnp.int32))), [[1, 1], [2, 3]])


def test_errors_as_jax():
    with pytest.raises(TypeError, match=r"concatenating along dimension 0 for shapes \(1, 2\), \(1, 1\)\."):
        jnp.array([jnp.ones(2), jnp.ones(1)])
    with pytest.raises(TypeError, match=r"different numbers of dimensions: got \(1, 2, 2\), \(1, 2\)\."):
        jnp.array([jnp.ones((2, 2)), jnp.ones(2)])
    with pytest.raises(OverflowError, match="Python integer 300 out of bounds for uint8"):
        jnp.array([jnp.asarray(3, dtype=jnp.uint8), 300])
    with pytest.raises(OverflowError, match="Python integer 2147483648 out of bounds for int32"):
        jnp.array([jnp.asarray(3), 2 ** 31])
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint8"):
        jnp.array(-1, dtype=jnp.uint8)
    with pytest.raises(ValueError, match="None is not a valid value for jnp.array"):
        jnp.array([jnp.ones(2), [1.0, None]])


@pytest.mark.parametrize("values", [[1.0, 2.5, -0.0], [1, 2, -3], [True, False], [1, 2.0], [-2**31, 2**31 - 1],
                                    [1.0, np.float32(2)], [[1.0], [2.0]]])
def test_flat_scalar_lists_take_the_general_paths_dtypes(values):
    """A flat list of one Python scalar type skips the leaf walk: same values, dtype and weak type."""
    for x64 in (False, True):
        with jax.enable_x64(x64):
            fast, general = jnp.array(values), jnp.array(tuple(values))
            assert (fast.dtype, fast.weak_type) == (general.dtype, general.weak_type)
            np.testing.assert_array_equal(fast, general)


def test_flat_int_list_out_of_range_raises_as_numpy():
    with pytest.raises(OverflowError, match="out of bounds for int32"):
        jnp.array([2**40, 1])
