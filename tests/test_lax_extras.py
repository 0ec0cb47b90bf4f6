"""The rest of jax.lax's public names: the composed primitives (tile, mulhi, scatter_sub, reduce_precision,
approx_max_k/approx_min_k) against NumPy and JAX's recorded bits, their derivatives and batching; the
convenience functions against NumPy and JAX's values; lax.composite; the types lax names."""
import hashlib
import itertools

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


# ---- tile ------------------------------------------------------------------------------------------

@settings(max_examples=20, deadline=None)
@given(shape=st.lists(st.integers(0, 3), min_size=0, max_size=3), data=st.data())
def test_tile_matches_numpy(shape, data):
    reps = tuple(data.draw(st.lists(st.integers(0, 3), min_size=len(shape), max_size=len(shape))))
    x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    np.testing.assert_array_equal(lax.tile(x, reps), np.tile(x, reps) if shape else x)


def test_tile_is_a_primitive_with_rules(x64):
    assert "tile[reps=(2, 1)]" in str(xjax.make_jaxpr(lambda x: lax.tile(x, (2, 1)))(np.ones((2, 3))))
    x = np.random.default_rng(0).normal(size=(2, 3))
    check_grads(lambda x: lax.tile(x, (2, 3)), (x,), order=2, modes=["fwd", "rev"])
    xs = np.random.default_rng(1).normal(size=(4, 2, 3))
    np.testing.assert_array_equal(xjax.vmap(lambda x: lax.tile(x, (3, 2)))(xs),
                                  np.stack([np.tile(v, (3, 2)) for v in xs]))
    np.testing.assert_array_equal(xjax.jit(lambda x: lax.tile(x, (1, 2)))(x), np.tile(x, (1, 2)))
    with pytest.raises(ValueError, match="len\\(reps\\)"):
        lax.tile(x, (2,))


# ---- mulhi -----------------------------------------------------------------------------------------

INT_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


@pytest.mark.parametrize("dtype", INT_TYPES)
def test_mulhi_against_exact_products(x64, dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(3)
    x = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    y = rng.integers(info.min, info.max, 200, dtype=dtype, endpoint=True)
    edges = [info.min, info.max, 0, 1, info.min + 1 if info.min else 2]
    x[:25] = np.repeat(np.array(edges, dtype), 5)
    y[:25] = np.tile(np.array(edges, dtype), 5)
    want = np.array([(int(a) * int(b)) >> info.bits for a, b in zip(x, y)], dtype=object)
    want = np.array([int(w) % (1 << info.bits) for w in want], dtype=np.uint64).astype(dtype)  # two's complement
    got = lax.mulhi(x, y)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


def test_mulhi_int32_without_x64_and_rules():
    x = np.array([2**31 - 1, -2**31, 123456789, -5], np.int32)
    y = np.array([2**31 - 1, -2**31, -987654321, 7], np.int32)
    want = [(int(a) * int(b)) >> 32 for a, b in zip(x, y)]
    np.testing.assert_array_equal(lax.mulhi(x, y), want)
    np.testing.assert_array_equal(xjax.jit(lax.mulhi)(x, y), want)
    np.testing.assert_array_equal(xjax.vmap(lax.mulhi)(x, y), want)
    with pytest.raises(TypeError, match="integer"):
        lax.mulhi(np.ones(2, np.float32), np.ones(2, np.float32))


# ---- scatter_sub -----------------------------------------------------------------------------------

DN = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))


@pytest.mark.parametrize("dtype", ["float32", "int32", "uint8", "uint32"])
def test_scatter_sub_against_numpy(dtype):
    rng = np.random.default_rng(5)
    operand = rng.integers(0, 50, 10).astype(dtype)
    idx = rng.integers(0, 10, 25)
    updates = rng.integers(0, 60, 25).astype(dtype)
    want = operand.copy()
    np.subtract.at(want, idx, updates)  # repeated indices accumulate; unsigned wraps
    got = lax.scatter_sub(operand, idx[:, None], updates, DN)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, want)


def test_scatter_sub_jax_values_and_rules(x64):
    # JAX 0.10.2: uint32 wraps; an out-of-bounds index is dropped (FILL_OR_DROP for scatters)
    got = lax.scatter_sub(np.array([5, 1, 0, 9], np.uint32), np.array([[0], [1], [1], [3]]),
                          np.array([7, 1, 2, 3], np.uint32), DN)
    np.testing.assert_array_equal(got, [4294967294, 4294967294, 0, 6])
    got = lax.scatter_sub(np.array([5.0, 1, 0, 9]), np.array([[0], [1], [1], [9]]), np.array([7.0, 1, 2, 3]), DN)
    np.testing.assert_array_equal(got, [-2.0, -2.0, 0.0, 9.0])
    idx = np.array([[0], [2], [2]])
    f = lambda x, u: lax.scatter_sub(x, idx, u, DN)  # noqa: E731
    check_grads(f, (np.arange(4.0), np.array([1.0, 2.0, 3.0])), order=2, modes=["fwd", "rev"])
    xs, us = np.arange(12.0).reshape(3, 4), np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(xjax.vmap(f)(xs, us), np.stack([f(x, u) for x, u in zip(xs, us)]))


# ---- reduce_precision ------------------------------------------------------------------------------

REDUCE_PRECISION_CASES = [(8, 7), (5, 10), (11, 52), (8, 23), (4, 3), (5, 2), (2, 1), (3, 0), (1, 0), (8, 0),
                          (6, 20), (10, 40)]


def reduce_precision_inputs():
    """Zeros, +-1, normal and subnormal values of every type, overflow thresholds, infinities, NaNs and
    random magnitudes from 1e-40 to 1e40."""
    special = [0.0, -0.0, 1.0, -1.0, 1.5, 3.14159, 1e-40, -1e-42, 1e-310, 6.5e4, 7e4, 1e30, 1e38, 3.4e38, 1e300,
               np.inf, -np.inf, np.nan, -np.nan, 0.1, 2.5e-5, 1e-8, 65519.9]
    rng = np.random.default_rng(0)
    return np.concatenate([special, rng.normal(size=50) * 10.0 ** rng.integers(-40, 40, 50)])


# sha256 prefixes of JAX 0.10.2's results (CPU, x64) on reduce_precision_inputs() cast to each type:
# the bytes of lax.reduce_precision(x, e, m) (/tmp/rp.py in the commit that added this file).
JAX_REDUCE_PRECISION = {
    "bfloat16_10_40": "d8221830477d803e",
    "bfloat16_11_52": "d8221830477d803e",
    "bfloat16_1_0": "8a3c809d028313db",
    "bfloat16_2_1": "e9a3c4f36a5d72df",
    "bfloat16_3_0": "502eb1e44083f90a",
    "bfloat16_4_3": "da658cd1abecd891",
    "bfloat16_5_10": "242726517a6bb02e",
    "bfloat16_5_2": "bfd629ac5b37b9fc",
    "bfloat16_6_20": "029d3b686a0e04eb",
    "bfloat16_8_0": "b9533c78bb24eab7",
    "bfloat16_8_23": "d8221830477d803e",
    "bfloat16_8_7": "d8221830477d803e",
    "float16_10_40": "8e9d92edcd7fd581",
    "float16_11_52": "8e9d92edcd7fd581",
    "float16_1_0": "c96dbaff4fb658cf",
    "float16_2_1": "cb62e683149605b0",
    "float16_3_0": "cdebd2e7b9e18631",
    "float16_4_3": "109ddc8ec2b86225",
    "float16_5_10": "8e9d92edcd7fd581",
    "float16_5_2": "e1ceccb03b4292bb",
    "float16_6_20": "8e9d92edcd7fd581",
    "float16_8_0": "61b02b8cdcc008b8",
    "float16_8_23": "8e9d92edcd7fd581",
    "float16_8_7": "d10ea0c8ae7a492d",
    "float32_10_40": "55e536f9937ff6b6",
    "float32_11_52": "55e536f9937ff6b6",
    "float32_1_0": "578a9da22cafb329",
    "float32_2_1": "cb8ededd23f8600c",
    "float32_3_0": "1bdc11af7efe5cf5",
    "float32_4_3": "948d4d930803c956",
    "float32_5_10": "f15541ca4aca942f",
    "float32_5_2": "5163cb2a9ac17aba",
    "float32_6_20": "7b633260b5bb8d18",
    "float32_8_0": "eaf1a12527c04113",
    "float32_8_23": "55e536f9937ff6b6",
    "float32_8_7": "eeb57c8193a4c42f",
    "float64_10_40": "fe609e2fcfedaa88",
    "float64_11_52": "97d98ac08513d90a",
    "float64_1_0": "bc8e4c3563f686d6",
    "float64_2_1": "dc4154bef3a66612",
    "float64_3_0": "5cb94aa2a4735770",
    "float64_4_3": "1494ca208e29f746",
    "float64_5_10": "a716b12100457728",
    "float64_5_2": "dbef0f698079dddd",
    "float64_6_20": "2cf32f5920e98542",
    "float64_8_0": "900dbb5039423f06",
    "float64_8_23": "409f77f4410f759e",
    "float64_8_7": "afe625a8d50e2d7a",
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_reduce_precision_matches_jax_bits(x64, dtype):
    x = jnp.asarray(reduce_precision_inputs()).astype(dtype)
    for e, m in REDUCE_PRECISION_CASES:
        got = lax.reduce_precision(x, e, m)
        assert got.dtype == x.dtype
        digest = hashlib.sha256(np.asarray(got).tobytes()).hexdigest()[:16]
        assert digest == JAX_REDUCE_PRECISION[f"{dtype}_{e}_{m}"], (dtype, e, m)


def test_reduce_precision_against_casts():
    rng = np.random.default_rng(1)
    x = (rng.normal(size=500) * 10.0 ** rng.integers(-30, 30, 500)).astype(np.float32)
    np.testing.assert_array_equal(lax.reduce_precision(x, 8, 7), x.astype(ml_dtypes.bfloat16).astype(np.float32))
    normal16 = x[(np.abs(x) > 6.2e-5) & (np.abs(x) < 6.5e4)]  # float16 has subnormals; reduce_precision flushes
    np.testing.assert_array_equal(lax.reduce_precision(normal16, 5, 10), normal16.astype(np.float16).astype(np.float32))
    np.testing.assert_array_equal(lax.reduce_precision(x, 8, 23), x)


def test_reduce_precision_rules(x64):
    x = np.array([0.3, -1.7, 2.5])
    g = xjax.grad(lambda x: (lax.reduce_precision(x, 5, 2) * x).sum())(x)
    # linear as in JAX: the cotangent x is rounded too, so d/dx = rp(x) + rp(x)
    np.testing.assert_array_equal(g, 2 * lax.reduce_precision(x, 5, 2))
    np.testing.assert_array_equal(xjax.vmap(lambda v: lax.reduce_precision(v, 4, 3))(x[:, None])[:, 0],
                                  lax.reduce_precision(x, 4, 3))
    with pytest.raises(TypeError, match="floating"):
        lax.reduce_precision(np.arange(3), 5, 2)


# ---- approx_max_k / approx_min_k -------------------------------------------------------------------

def test_approx_k_is_exact_top_k():
    x = np.random.default_rng(2).normal(size=(3, 200)).astype(np.float32)
    v, i = lax.approx_max_k(x, 5)
    np.testing.assert_array_equal(v, -np.sort(-x, axis=1)[:, :5])
    np.testing.assert_array_equal(np.take_along_axis(x, np.asarray(i), 1), v)
    v, i = lax.approx_min_k(x, 2, reduction_dimension=0)
    np.testing.assert_array_equal(v, np.sort(x, axis=0)[:2])
    assert i.dtype == np.int32
    v, _ = lax.approx_max_k(x, 5, aggregate_to_topk=False)  # 200 <= one tile: every value, sorted
    np.testing.assert_array_equal(v, -np.sort(-x, axis=1))
    g = xjax.grad(lambda x: lax.approx_max_k(x, 2)[0].sum())(x)
    assert g.sum() == 6 and np.all(g[np.arange(3)[:, None], np.asarray(lax.approx_max_k(x, 2)[1])] == 1)
    np.testing.assert_array_equal(xjax.vmap(lambda r: lax.approx_max_k(r, 3)[0])(x), lax.approx_max_k(x, 3)[0])
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(10), 2)
    with pytest.raises(ValueError, match="smaller than the size"):
        lax.approx_min_k(x, 5, reduction_dimension=0)


# XLA's ApproxTopKReductionOutputSize as JAX 0.10.2 computes it: (input size, rank, k, recall, override) -> size
JAX_OUTPUT_SIZES = [((2000, 2, 5, 0.95, -1), 256), ((2000, 1, 5, 0.95, -1), 2000), ((100000, 2, 10, 0.95, -1), 256),
                    ((100000, 1, 10, 0.9, -1), 2048), ((5000, 2, 100, 0.99, -1), 5000), ((129, 2, 1, 0.9, -1), 128),
                    ((10000, 2, 1, 1.0, -1), 128), ((1024, 2, 1000, 0.5, 3072), 512), ((129, 2, 100, 0.5, 387), 256),
                    ((129, 2, 5, 0.99, 387), 129), ((1025, 1, 1000, 0.5, 3075), 2048), ((200, 2, 5, 0.95, -1), 200)]


def test_approx_output_size_as_xla():
    from xjax._src.lax.composed_ops import approx_top_k_output_size
    for (size, rank, k, recall, override), want in JAX_OUTPUT_SIZES:
        assert approx_top_k_output_size(size, rank, k, recall, False, override) == want
    x = np.random.default_rng(3).normal(size=(2, 2000)).astype(np.float32)
    v, i = lax.approx_max_k(x, 5, aggregate_to_topk=False)
    np.testing.assert_array_equal(v, -np.sort(-x, axis=1)[:, :256])


def test_approx_output_size_against_jaxlib_grid():
    jax_lib = pytest.importorskip("jax._src.lib")
    from xjax._src.lax.composed_ops import approx_top_k_output_size
    for size, rank, k, recall in itertools.product([100, 129, 1025, 4096, 100003], [1, 2], [1, 2, 10, 100],
                                                   [0.5, 0.95, 0.99, 1.0]):
        if k <= size:
            want = jax_lib._jax.approx_top_k_reduction_output_size(size, rank, k, recall, False, -1)[0]
            assert approx_top_k_output_size(size, rank, k, recall, False, -1) == want, (size, rank, k, recall)


# ---- conveniences ----------------------------------------------------------------------------------

def test_conveniences_against_numpy():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 3, 4)).astype(np.float32), rng.normal(size=(2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(a, b), a @ b, rtol=1e-5)
    with pytest.raises(ValueError, match="same ndim"):
        lax.batch_matmul(a, b[0])
    np.testing.assert_array_equal(lax.broadcast_like(np.arange(3), np.zeros((2, 3))),
                                  np.broadcast_to(np.arange(3), (2, 3)))
    np.testing.assert_array_equal(lax.broadcast_like(np.ones((3, 1)), np.zeros((2, 3, 4))), np.ones((2, 3, 4)))
    src = np.arange(24).reshape(2, 3, 4)
    got = lax.index_take(src, (np.array([0, -1, 5]), np.array([1, 2, -7])), (1, 2))
    np.testing.assert_array_equal(got, src[:, [0, 2, 2], [1, 2, 1]].T)  # indices wrap modulo the axis size
    x = np.zeros((4, 4), np.float32)
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(x, np.ones(4), -1, 0)[3], np.ones(4))
    np.testing.assert_array_equal(lax.dynamic_update_index_in_dim(np.zeros(6), 1.0, 10, 0), [0, 0, 0, 0, 0, 1])
    e = lax.empty((2, 3), jnp.bfloat16)
    assert e.shape == (2, 3) and e.dtype == jnp.bfloat16
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
    assert lax.shape_as_value(()).shape == (0,)
    assert lax.dtype(1.0) == np.float32 and lax.dtype("float64") == np.float32 and lax.dtype(np.int8) == np.int8


def _recorded_conv_values():
    """The inputs /tmp/cv.py gave JAX (the commit that added this file); returns (name, xjax result, reference)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 5, 6)).astype("f4")
    return rng, x


def test_patches_and_local_convolution_against_numpy():
    rng, x = _recorded_conv_values()
    p = lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "VALID")
    assert p.shape == (2, 12, 4, 5)
    # feature c * 4 + (i * 2 + j) is x[:, c, h + i, w + j]
    want = np.stack([x[:, c, i:i + 4, j:j + 5] for c in range(3) for i in range(2) for j in range(2)], axis=1)
    np.testing.assert_array_equal(p, want)
    rhs = rng.normal(size=(12, 4, 5, 7)).astype("f4")
    out = lax.conv_general_dilated_local(x, rhs, (1, 1), "VALID", (2, 2), dimension_numbers=("NCHW", "IHWO", "NCHW"))
    np.testing.assert_allclose(out, np.einsum("nfhw,fhwo->nohw", want, rhs), rtol=1e-4, atol=1e-5)


def test_shape_helpers_as_jax():
    assert lax.conv_transpose_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC")) == \
        (1, 10, 10, 8)
    assert lax.conv_transpose_shape_tuple((1, 3, 7, 6), (8, 3, 2, 4), (1, 3), [(1, 0), (2, 2)],
                                          ("NCHW", "OIHW", "NCHW")) == (1, 8, 7, 17)
    assert lax.reduce_window_shape_tuple((5, 6), (2, 2), (1, 2), ((0, 0), (1, 1)), (2, 1), (1, 3)) == (8, 3)


def test_ragged_dot(x64):
    rng = np.random.default_rng(6)
    lhs, rhs = rng.normal(size=(7, 3)), rng.normal(size=(3, 3, 4))
    sizes = np.array([3, 0, 2], np.int32)
    want = np.concatenate([lhs[:3] @ rhs[0], lhs[3:5] @ rhs[2], np.zeros((2, 4))])
    np.testing.assert_allclose(lax.ragged_dot(lhs, rhs, sizes), want, rtol=1e-12)
    check_grads(lambda l, r: lax.ragged_dot(l, r, sizes), (lhs, rhs), order=1, modes=["fwd", "rev"])
    dn = lax.RaggedDotDimensionNumbers((([1], [1]), ([], [])), [0], [0])
    np.testing.assert_allclose(lax.ragged_dot_general(lhs, rhs, sizes, dn), want, rtol=1e-12)
    # a contracting ragged dimension: one product per group (JAX's mode 2)
    left, right = rng.normal(size=(3, 7)), rng.normal(size=(7, 4))
    sizes2 = np.array([2, 0, 3], np.int32)
    got = lax.ragged_dot_general(left, right, sizes2, lax.RaggedDotDimensionNumbers((([1], [0]), ([], [])), [1], []))
    want = np.stack([left[:, :2] @ right[:2], np.zeros((3, 4)), left[:, 2:5] @ right[2:5]])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    # a batch ragged dimension: JAX's CPU computes the whole dot_general
    lb, rb = rng.normal(size=(6, 3, 2)), rng.normal(size=(6, 2, 4))
    got = lax.ragged_dot_general(lb, rb, np.array([2, 3], np.int32),
                                 lax.RaggedDotDimensionNumbers((([2], [1]), ([0], [0])), [0], []))
    np.testing.assert_allclose(got, np.einsum("bmk,bkn->bmn", lb, rb), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="group_offset"):
        lax.ragged_dot(lhs, rhs, sizes, group_offset=np.array([0]))


# ---- composite and types ---------------------------------------------------------------------------

def test_composite():
    tangent = lax.composite(lambda x, *, k: lax.sin(x) / lax.cos(x) * k, name="my.tangent")
    x = np.array([0.0, 0.5, 1.0], np.float32)
    np.testing.assert_allclose(tangent(x, k=2.0), 2 * np.tan(x), rtol=1e-6)
    jaxpr = str(xjax.make_jaxpr(lambda x: tangent(x, k=2.0))(x))
    assert "composite" in jaxpr and "my.tangent" in jaxpr
    np.testing.assert_allclose(xjax.jit(lambda x: tangent(x, k=1.0))(x), np.tan(x), rtol=1e-6)
    np.testing.assert_allclose(xjax.vmap(lambda x: tangent(x, k=1.0))(x), np.tan(x), rtol=1e-6)
    with pytest.raises(ValueError, match="JVP rule for composite"):  # as in JAX
        xjax.grad(lambda x: tangent(x, k=1.0))(0.5)
    pair = lax.composite(lambda a, b: (a + b, {"d": a - b}), name="pair")(1.0, 2.0)
    assert float(pair[0]) == 3.0 and float(pair[1]["d"]) == -1.0


def test_types():
    assert lax.DotAlgorithmPreset.BF16_BF16_F32.name == "BF16_BF16_F32"
    assert lax.RandomAlgorithm.RNG_THREE_FRY.name == "RNG_THREE_FRY"
    assert lax.AccuracyMode.HIGHEST != lax.AccuracyMode.DEFAULT
    assert lax.Tolerance(atol=1e-3).rtol == 0.0
    algorithm = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    np.testing.assert_allclose(lax.dot(np.ones((2, 3)), np.ones((3,)), precision=algorithm), [3.0, 3.0])


# ---- rng_bit_generator, rng_uniform -----------------------------------------------------------------

THREE_FRY = lax.RandomAlgorithm.RNG_THREE_FRY


def test_rng_bit_generator_three_fry_matches_jax_bits(x64):
    # JAX 0.10.2 (CPU) with algorithm=RNG_THREE_FRY; a counter word that carries into the next
    key = np.array([1, 2, 0xFFFFFFFF, 4], np.uint32)
    cases = [((5,), np.uint32, [1, 2, 2, 5], [1659226264, 1696293625, 2593290630, 1369596596, 1606051822]),
             ((3,), np.uint64, [1, 2, 2, 5], [7285525645447514264, 5882372591126215046, 11270731116798699502]),
             ((3,), np.uint8, [1, 2, 1, 5], [152, 249, 134]),
             ((2, 2), np.uint16, [1, 2, 1, 5], [51352, 31110, 25337, 25268])]
    for shape, dtype, want_key, want_bits in cases:
        new_key, bits = lax.rng_bit_generator(key, shape, dtype=dtype, algorithm=THREE_FRY)
        assert bits.shape == shape and bits.dtype == dtype
        np.testing.assert_array_equal(new_key, want_key)
        np.testing.assert_array_equal(np.asarray(bits).ravel(), np.array(want_bits, dtype))
    new_key, bits = lax.rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (2, 3), algorithm=THREE_FRY)
    np.testing.assert_array_equal(new_key, [1, 2, 6, 4])
    np.testing.assert_array_equal(bits, [[1576285164, 740599976, 2436392515], [2249660814, 2425682526, 1497962777]])


def test_rng_bit_generator_default_statistics_and_errors():
    key = np.array([7, 8, 0, 0], np.uint32)
    new_key, bits = lax.rng_bit_generator(key, (1000, 64))  # RNG_DEFAULT: Threefry here (Philox in JAX's CPU)
    assert bits.dtype == np.uint32 and bits.shape == (1000, 64)
    ones = np.unpackbits(np.asarray(bits).view(np.uint8)).mean()
    assert abs(ones - 0.5) < 0.005
    _, again = xjax.jit(lambda k: lax.rng_bit_generator(k, (1000, 64)))(key)
    np.testing.assert_array_equal(again, bits)
    _, following = lax.rng_bit_generator(new_key, (1000, 64))
    assert len(np.intersect1d(np.asarray(following), np.asarray(bits))) < 5  # the new key's counters are new
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(key, (2,), dtype=np.int32)
    with pytest.raises(NotImplementedError, match="PHILOX"):
        lax.rng_bit_generator(key, (2,), algorithm=lax.RandomAlgorithm.RNG_PHILOX)


def test_rng_uniform_statistics_and_state():
    x = lax.rng_uniform(np.float32(-2), np.float32(3), (100000,))
    assert x.dtype == np.float32 and float(x.min()) >= -2 and float(x.max()) < 3
    assert abs(float(x.mean()) - 0.5) < 0.03 and abs(float(x.var()) - 25 / 12) < 0.05
    counts = np.bincount(np.asarray(lax.rng_uniform(np.int32(-3), np.int32(5), (80000,))) + 3, minlength=8)
    assert counts.shape == (8,) and np.all(np.abs(counts - 10000) < 500)
    f = xjax.jit(lambda: lax.rng_uniform(np.float32(0), np.float32(1), (4,)))
    assert not np.array_equal(f(), f())  # stateful, as XLA's: every call draws anew
    with pytest.raises(ValueError, match="identical dtypes"):
        lax.rng_uniform(np.float32(0), np.int32(1), (2,))


# ---- optimization_barrier, tokens, platform_dependent, collectives ----------------------------------

def test_optimization_barrier(x64):
    tree = (np.ones(2), {"b": 3.0})
    out = lax.optimization_barrier(tree)
    np.testing.assert_array_equal(out[0], np.ones(2))
    assert float(out[1]["b"]) == 3.0
    f = lambda a: (lax.optimization_barrier(a * 2) ** 2).sum()  # noqa: E731
    assert "optimization_barrier" in str(xjax.make_jaxpr(f)(np.ones(3)))
    np.testing.assert_array_equal(xjax.jit(f)(np.ones(3)), 12.0)
    check_grads(f, (np.array([0.5, -1.0, 2.0]),), order=2, modes=["fwd", "rev"])
    xs = np.arange(6.0).reshape(2, 3)
    got = xjax.vmap(lambda a: lax.optimization_barrier([a, a + 1]))(xs)
    np.testing.assert_array_equal(got[1], xs + 1)


def test_tokens_and_platform_dependent():
    token = lax.after_all(lax.create_token(), lax.create_token(None))
    assert type(token) is type(lax.create_token()) and repr(token) == "Token()"
    with pytest.raises(TypeError, match="tokens"):
        lax.after_all(np.ones(2))
    x = np.ones(2, np.float32)
    np.testing.assert_array_equal(lax.platform_dependent(x, cpu=lambda v: v + 1, cuda=lambda v: v - 1), x + 1)
    jitted = xjax.jit(lambda v: lax.platform_dependent(v, tpu=lambda v: v, default=lambda v: v * 3))
    np.testing.assert_array_equal(jitted(x), x * 3)
    with pytest.raises(NotImplementedError, match="no branch"):
        lax.platform_dependent(x, tpu=lambda v: v)


def test_collectives_from_others():
    x = np.arange(4.0, dtype=np.float32)
    np.testing.assert_array_equal(xjax.vmap(lambda v: lax.pbroadcast(v, "i", 2), axis_name="i")(x), [2, 2, 2, 2])
    np.testing.assert_array_equal(xjax.vmap(lambda v: lax.pshuffle(v, "i", [1, 2, 3, 0]), axis_name="i")(x),
                                  [1, 2, 3, 0])
    m = np.arange(16.0, dtype=np.float32).reshape(4, 4)
    np.testing.assert_array_equal(xjax.vmap(lambda v: lax.pswapaxes(v, "i", 0), axis_name="i")(m), m.T)
    with pytest.raises(ValueError, match="permutation"):
        lax.pshuffle(x, "i", [0, 0, 1, 2])
    for call, name in [(lambda: lax.psend(x, "i", [(0, 1)]), "psend"),
                       (lambda: lax.precv(lax.create_token(), x, "i", [(0, 1)]), "precv")]:
        with pytest.raises(NotImplementedError, match=name):
            call()
    # pcast outside a shard_map body: JAX's ValueError (under shard_map: tests/test_shard_map_vma.py)
    for call in [lambda: lax.pcast(x, "i", to="varying"),
                 lambda: xjax.vmap(lambda v: lax.pcast(v, "i", to="varying"), axis_name="i")(x)]:
        with pytest.raises(ValueError, match="pvary should be called under jax.shard_map"):
            call()


def test_scatter_apply_as_jax():
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    x = np.arange(5.0, dtype=np.float32)
    idx = np.array([[1], [3], [3], [7]])
    f = lambda v: v * 2 + 1  # noqa: E731
    # JAX 0.10.2: a repeated index applies func twice; out of bounds drops (or clips, with mode="clip")
    np.testing.assert_array_equal(lax.scatter_apply(x, idx, f, dn, update_shape=(4,)), [0, 3, 2, 15, 4])
    np.testing.assert_array_equal(lax.scatter_apply(x, idx, f, dn, update_shape=(4,), mode="clip"), [0, 3, 2, 15, 9])
    np.testing.assert_allclose(xjax.jit(lambda x: lax.scatter_apply(x, idx, jnp.sin, dn, update_shape=(4,)))(x),
                               [0, np.sin(1), 2, np.sin(np.sin(3)), 4], rtol=1e-6)
    rows = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                       scatter_dims_to_operand_dims=(0,))
    m = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    got = lax.scatter_apply(m, np.array([[0], [2], [0]]), f, rows, update_shape=(3, 2))
    np.testing.assert_array_equal(got, JAX_SCATTER_APPLY_ROWS)


JAX_SCATTER_APPLY_ROWS = [[3.0, 7.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [17.0, 19.0, 10.0, 11.0]]  # JAX 0.10.2


def test_convenience_grads_and_vmap(x64):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(1, 2, 4, 4))
    check_grads(lambda x: lax.conv_general_dilated_patches(x, (2, 2), (1, 1), "SAME"), (x,), order=1,
                modes=["fwd", "rev"])
    rhs = rng.normal(size=(8, 3, 3, 2))
    check_grads(lambda x, r: lax.conv_general_dilated_local(x, r, (1, 1), "VALID", (2, 2),
                                                            dimension_numbers=("NCHW", "IHWO", "NCHW")),
                (x, rhs), order=1, modes=["fwd", "rev"])
    a, b = rng.normal(size=(2, 3, 4)), rng.normal(size=(2, 4, 2))
    check_grads(lax.batch_matmul, (a, b), order=2, modes=["fwd", "rev"])
    src = rng.normal(size=(3, 4))
    check_grads(lambda s: lax.index_take(s, (np.array([0, 2, 2]),), (0,)), (src,), order=1, modes=["fwd", "rev"])
    xs = rng.normal(size=(3, 1, 2, 4, 4))
    np.testing.assert_allclose(xjax.vmap(lambda v: lax.conv_general_dilated_patches(v, (2, 2), (1, 1), "VALID"))(xs),
                               np.stack([lax.conv_general_dilated_patches(v, (2, 2), (1, 1), "VALID") for v in xs]),
                               rtol=1e-12)
