"""xjax.numpy elementwise math against NumPy, and JAX's promotion and weak types (values recorded from JAX)."""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax

F32 = np.array([-2.5, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0], np.float32)
POS = np.array([0.25, 0.5, 1.0, 2.0, 10.0], np.float32)
UNIT = np.array([-0.9, -0.5, 0.0, 0.3, 0.9], np.float32)
I32 = np.array([-7, -3, -1, 0, 1, 2, 5, 9], np.int32)


def check(got, want, dtype=None, rtol=1e-6, atol=1e-6, weak=None):
    got_np = np.asarray(got)
    want = np.asarray(want)
    assert got_np.shape == want.shape, (got_np.shape, want.shape)
    if want.dtype.kind == "f" or got_np.dtype.kind == "f" or got_np.dtype == ml_dtypes.bfloat16:
        np.testing.assert_allclose(got_np.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got_np, want)
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    if weak is not None:
        assert got.weak_type == weak, (got.weak_type, weak)


UNARY_FLOAT = [
    ("exp", np.exp, F32), ("exp2", np.exp2, F32), ("expm1", np.expm1, F32), ("log", np.log, POS),
    ("log1p", np.log1p, POS), ("log2", np.log2, POS), ("log10", np.log10, POS), ("sqrt", np.sqrt, POS),
    ("cbrt", np.cbrt, F32), ("sin", np.sin, F32), ("cos", np.cos, F32), ("tan", np.tan, UNIT),
    ("arcsin", np.arcsin, UNIT), ("arccos", np.arccos, UNIT), ("arctan", np.arctan, F32),
    ("sinh", np.sinh, F32), ("cosh", np.cosh, F32), ("tanh", np.tanh, F32), ("arcsinh", np.arcsinh, F32),
    ("arccosh", np.arccosh, POS + 1), ("arctanh", np.arctanh, UNIT), ("deg2rad", np.deg2rad, F32),
    ("rad2deg", np.rad2deg, F32), ("radians", np.radians, F32), ("degrees", np.degrees, F32),
    ("rint", np.rint, F32), ("sinc", np.sinc, F32), ("reciprocal", np.reciprocal, POS),
    ("fabs", np.fabs, F32),
]


@pytest.mark.parametrize("name,ref,data", UNARY_FLOAT, ids=[u[0] for u in UNARY_FLOAT])
def test_unary_float(name, ref, data):
    fn = getattr(jnp, name)
    check(fn(jnp.asarray(data)), ref(data.astype(np.float64)).astype(np.float32), "float32", rtol=2e-6)


@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "log1p", "tanh"])
def test_unary_float_promotes_ints_and_keeps_weak(name):
    fn = getattr(jnp, name)
    for dt in (np.int8, np.uint16, np.int32, np.bool_):
        out = fn(jnp.asarray(np.array([0, 1], dt)))
        assert out.dtype == np.float32 and not out.weak_type
    out = fn(2)
    assert out.dtype == np.float32 and out.weak_type
    assert fn(jnp.asarray(np.ones(2, np.float16))).dtype == np.float16
    assert fn(jnp.asarray(np.ones(2, ml_dtypes.bfloat16))).dtype == ml_dtypes.bfloat16


def test_unary_float_special_values():
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    with np.errstate(all="ignore"):
        for name in ("exp", "log", "sqrt", "sin", "tanh", "arctan", "expm1", "log1p"):
            check(getattr(jnp, name)(jnp.asarray(x)), getattr(np, name)(x), rtol=1e-6)


BINARY = [
    ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply), ("maximum", np.maximum),
    ("minimum", np.minimum),
]


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.float16, np.float32])
def test_binary_same_dtype(name, ref, dtype):
    a = np.array([0, 1, 2, 3, 100, 127], dtype)
    b = np.array([3, 2, 1, 0, 100, 5], dtype)
    with np.errstate(all="ignore"):
        check(getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b)), ref(a, b), dtype, rtol=1e-3)


def test_integer_overflow_wraps():
    a = np.array([127, -128, 100], np.int8)
    check(jnp.asarray(a) + jnp.asarray(a), (a.astype(np.int32) * 2).astype(np.int8), np.int8)
    u = np.array([0, 1, 2], np.uint8)
    check(jnp.asarray(u) - 1, np.array([255, 0, 1], np.uint8), np.uint8)
    check(jnp.asarray(u) + 300, np.array([44, 45, 46], np.uint8), np.uint8)  # recorded from JAX
    big = np.array([2**31 - 1], np.int32)
    check(jnp.asarray(big) + 1, np.array([-(2**31)], np.int32))


def test_python_int_overflow_raises():
    with pytest.raises(OverflowError):
        jnp.arange(3) + 2**40


def test_bool_arithmetic():
    t = jnp.asarray(True)
    assert repr(t + t) == "Array(True, dtype=bool)"
    assert repr(jnp.multiply(True, False)) == "Array(False, dtype=bool)"
    assert repr(True + jnp.arange(3)) == "Array([1, 2, 3], dtype=int32)"
    with pytest.raises(TypeError, match="neg does not accept dtype bool"):
        -t


# Results recorded from JAX 0.10.2 (repr strings: value, dtype and weak type).
JAX_REPRS = [
    (lambda: jnp.arange(3) / 2, "Array([0. , 0.5, 1. ], dtype=float32)"),
    (lambda: jnp.arange(3, dtype=jnp.uint8) / 2, "Array([0. , 0.5, 1. ], dtype=float32)"),
    (lambda: jnp.arange(3) // 2, "Array([0, 0, 1], dtype=int32)"),
    (lambda: jnp.arange(-3, 3) // 2, "Array([-2, -1, -1,  0,  0,  1], dtype=int32)"),
    (lambda: jnp.arange(-3, 3) % 2, "Array([1, 0, 1, 0, 1, 0], dtype=int32)"),
    (lambda: jnp.arange(-3., 3.) % -2, "Array([-1., -0., -1.,  0., -1.,  0.], dtype=float32)"),
    (lambda: jnp.arange(-3, 3) // -2, "Array([ 1,  1,  0,  0, -1, -1], dtype=int32)"),
    (lambda: jnp.fmod(jnp.arange(-3, 3), 2), "Array([-1,  0, -1,  0,  1,  0], dtype=int32)"),
    (lambda: jnp.arange(3) ** 2, "Array([0, 1, 4], dtype=int32)"),
    (lambda: jnp.arange(3) ** 2.0, "Array([0., 1., 4.], dtype=float32, weak_type=True)"),
    (lambda: jnp.arange(3) ** jnp.arange(3), "Array([1, 1, 4], dtype=int32)"),
    (lambda: jnp.arange(3.) ** 2, "Array([0., 1., 4.], dtype=float32)"),
    (lambda: 2 ** jnp.arange(3), "Array([1, 2, 4], dtype=int32)"),
    (lambda: jnp.float_power(2, 3), "Array(8., dtype=float32, weak_type=True)"),
    (lambda: jnp.arange(3, dtype=jnp.int8) * 2.5, "Array([0. , 2.5, 5. ], dtype=float32, weak_type=True)"),
    (lambda: jnp.arange(3, dtype=jnp.int8) + jnp.arange(3, dtype=jnp.uint8), "Array([0, 2, 4], dtype=int16)"),
    (lambda: ~jnp.asarray([True, False]), "Array([False,  True], dtype=bool)"),
    (lambda: ~jnp.arange(3), "Array([-1, -2, -3], dtype=int32)"),
    (lambda: jnp.abs(jnp.asarray([-1, 2])), "Array([1, 2], dtype=int32)"),
    (lambda: jnp.sign(jnp.asarray([-1, 0, 2])), "Array([-1,  0,  1], dtype=int32)"),
    (lambda: jnp.sign(jnp.asarray([0, 3], dtype=jnp.uint8)), "Array([0, 1], dtype=uint8)"),
    (lambda: jnp.round(jnp.asarray([0.5, 1.5, 2.5, -0.5])), "Array([ 0.,  2.,  2., -0.], dtype=float32)"),
    (lambda: jnp.rint(jnp.asarray([1, 2])), "Array([1., 2.], dtype=float32)"),
    (lambda: jnp.floor(jnp.asarray([1, 2])), "Array([1, 2], dtype=int32)"),
    (lambda: jnp.trunc(jnp.asarray([-1.5, 2.5])), "Array([-1.,  2.], dtype=float32)"),
    (lambda: jnp.clip(jnp.arange(5), 1, 3), "Array([1, 1, 2, 3, 3], dtype=int32)"),
    (lambda: jnp.clip(jnp.arange(5), 1.5, 3), "Array([1.5, 1.5, 2. , 3. , 3. ], dtype=float32, weak_type=True)"),
    (lambda: jnp.clip(jnp.arange(5), max=3), "Array([0, 1, 2, 3, 3], dtype=int32)"),
    (lambda: jnp.maximum(jnp.asarray([1., jnp.nan]), 0.), "Array([ 1., nan], dtype=float32)"),
    (lambda: jnp.fmax(jnp.asarray([1., jnp.nan]), 0.), "Array([1., 0.], dtype=float32)"),
    (lambda: jnp.minimum(1, 2), "Array(1, dtype=int32, weak_type=True)"),
    (lambda: jnp.hypot(3, 4), "Array(5., dtype=float32, weak_type=True)"),
    (lambda: jnp.heaviside(jnp.asarray([-1., 0., 1.]), 0.5), "Array([0. , 0.5, 1. ], dtype=float32)"),
    (lambda: jnp.signbit(jnp.asarray([-1., 0., -0.])), "Array([ True, False,  True], dtype=bool)"),
    (lambda: jnp.signbit(jnp.asarray([-1, 0])), "Array([ True, False], dtype=bool)"),
    (lambda: jnp.copysign(jnp.asarray([1., 2.]), -1), "Array([-1., -2.], dtype=float32)"),
    (lambda: jnp.isnan(jnp.asarray([1, 2])), "Array([False, False], dtype=bool)"),
    (lambda: jnp.isinf(jnp.asarray([1., jnp.inf])), "Array([False,  True], dtype=bool)"),
    (lambda: jnp.isfinite(jnp.asarray([1, 2])), "Array([ True,  True], dtype=bool)"),
    (lambda: jnp.isclose(jnp.asarray([1., jnp.nan]), jnp.asarray([1.000001, jnp.nan])),
     "Array([ True, False], dtype=bool)"),
    (lambda: jnp.allclose(jnp.asarray([1., 2.]), jnp.asarray([1., 2.])), "Array(True, dtype=bool)"),
    (lambda: jnp.array_equal(jnp.asarray([1, 2]), jnp.asarray([1, 2])), "Array(True, dtype=bool)"),
    (lambda: jnp.array_equal(jnp.asarray([1, 2]), jnp.asarray([1, 2, 3])), "Array(False, dtype=bool)"),
    (lambda: jnp.logical_and(jnp.asarray([1, 0]), 1), "Array([ True, False], dtype=bool)"),
    (lambda: jnp.logical_not(jnp.asarray([1.0, 0])), "Array([False,  True], dtype=bool)"),
    (lambda: jnp.bitwise_and(jnp.asarray([1, 3]), 2), "Array([0, 2], dtype=int32)"),
    (lambda: jnp.left_shift(jnp.asarray([1, 3]), 2), "Array([ 4, 12], dtype=int32)"),
    (lambda: jnp.right_shift(jnp.asarray([-8, 8]), 1), "Array([-4,  4], dtype=int32)"),
    (lambda: jnp.right_shift(jnp.asarray([8], dtype=jnp.uint8), 1), "Array([4], dtype=uint8)"),
    (lambda: jnp.where(jnp.asarray([True, False]), 1, 2.5), "Array([1. , 2.5], dtype=float32, weak_type=True)"),
    (lambda: jnp.where(jnp.asarray([True, False]), 1, 2), "Array([1, 2], dtype=int32, weak_type=True)"),
    (lambda: jnp.nan_to_num(jnp.asarray([jnp.nan, jnp.inf, -jnp.inf])),
     "Array([ 0.0000000e+00,  3.4028235e+38, -3.4028235e+38], dtype=float32)"),
    (lambda: jnp.divmod(jnp.asarray([-3, 3]), 2), "(Array([-2,  1], dtype=int32), Array([1, 1], dtype=int32))"),
    (lambda: jnp.modf(jnp.asarray([-1.5, 2.5])),
     "(Array([-0.5,  0.5], dtype=float32), Array([-1.,  2.], dtype=float32))"),
    (lambda: jnp.frexp(jnp.asarray([8., 0.3])), "(Array([0.5, 0.6], dtype=float32), Array([ 4, -1], dtype=int32))"),
    (lambda: jnp.ldexp(jnp.asarray([1., 2.]), 3), "Array([ 8., 16.], dtype=float32)"),
    (lambda: jnp.gcd(jnp.asarray([12, -8]), 18), "Array([6, 2], dtype=int32)"),
    (lambda: jnp.lcm(jnp.asarray([4, 6]), 6), "Array([12,  6], dtype=int32)"),
    (lambda: jnp.real(jnp.asarray([1, 2])), "Array([1, 2], dtype=int32)"),
    (lambda: jnp.imag(jnp.asarray([1., 2])), "Array([0., 0.], dtype=float32)"),
    (lambda: jnp.deg2rad(180), "Array(3.1415927, dtype=float32, weak_type=True)"),
    (lambda: jnp.reciprocal(jnp.asarray([2, 4])), "Array([0.5 , 0.25], dtype=float32)"),
    (lambda: jnp.square(jnp.asarray([2, 4])), "Array([ 4, 16], dtype=int32)"),
    (lambda: jnp.exp2(3), "Array(8., dtype=float32, weak_type=True)"),
    (lambda: jnp.log2(8), "Array(3., dtype=float32)"),
    (lambda: jnp.log10(100.), "Array(2., dtype=float32)"),
    (lambda: jnp.true_divide(1, 2), "Array(0.5, dtype=float32, weak_type=True)"),
    (lambda: jnp.arctan2(1, 1), "Array(0.7853982, dtype=float32, weak_type=True)"),
    (lambda: jnp.logaddexp2(1., 1.), "Array(2., dtype=float32, weak_type=True)"),
    (lambda: jnp.sin(2), "Array(0.9092974, dtype=float32, weak_type=True)"),
    (lambda: jnp.sqrt(True), "Array(1., dtype=float32)"),
    (lambda: jnp.arange(3, dtype=jnp.uint8) - 1, "Array([255,   0,   1], dtype=uint8)"),
    (lambda: abs(jnp.asarray(-2)), "Array(2, dtype=int32, weak_type=True)"),
    (lambda: jnp.arange(3) & True, "Array([0, 1, 0], dtype=int32)"),
    (lambda: np.float32(2) * jnp.arange(3), "Array([0., 2., 4.], dtype=float32)"),
    (lambda: jnp.arange(3) * np.float64(2.5), "Array([0. , 2.5, 5. ], dtype=float32)"),
    (lambda: np.arange(3) + jnp.arange(3), "Array([0, 2, 4], dtype=int32)"),
    (lambda: divmod(jnp.arange(5), 2),
     "(Array([0, 0, 1, 1, 2], dtype=int32), Array([0, 1, 0, 1, 0], dtype=int32))"),
    (lambda: jnp.arange(3) @ jnp.arange(3), "Array(5, dtype=int32)"),
]


@pytest.mark.parametrize("k", range(len(JAX_REPRS)))
def test_matches_jax_repr(k):
    fn, want = JAX_REPRS[k]
    assert repr(fn()) == want


def test_promotion_table_recorded_from_jax():
    cases = [  # (lhs dtype, rhs, result dtype, weak)
        (np.int32, 2, np.int32, False), (np.float32, 2.5, np.float32, False), (np.int32, 2.5, np.float32, True),
        (np.int8, np.uint8, np.int16, False), (np.uint8, 2, np.uint8, False), (np.float16, 2.0, np.float16, False),
        (np.bool_, 1, np.int32, True), (np.int8, 1.0, np.float32, True), (np.uint32, np.int32, np.int32, False),
        (ml_dtypes.bfloat16, np.float16, np.float32, False), (np.int16, np.float16, np.float16, False),
    ]
    for lhs, rhs, want, weak in cases:
        a = jnp.asarray(np.ones(2, lhs))
        b = rhs if isinstance(rhs, (int, float)) else jnp.asarray(np.ones(2, rhs))
        out = jnp.add(a, b)
        assert out.dtype == np.dtype(want), (lhs, rhs, out.dtype)
        assert out.weak_type == weak, (lhs, rhs)


def test_comparisons_and_logical():
    a, b = jnp.asarray(I32), jnp.asarray(I32[::-1].copy())
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        check(getattr(jnp, name)(a, b), getattr(np, name)(I32, I32[::-1]), np.bool_)
    check(a < 1.5, I32 < 1.5, np.bool_)
    assert (jnp.arange(3) == "a") is False
    assert (jnp.arange(3) != None) is True  # noqa: E711
    for name in ("logical_and", "logical_or", "logical_xor"):
        check(getattr(jnp, name)(a, b), getattr(np, name)(I32, I32[::-1]))


def test_floor_divide_and_remainder_match_numpy():
    a = np.array([-7, -3, -1, 0, 1, 5, 9], np.int32)
    b = np.array([2, -2, 3, -3, 4, 2, -5], np.int32)
    check(jnp.floor_divide(jnp.asarray(a), jnp.asarray(b)), a // b)
    check(jnp.remainder(jnp.asarray(a), jnp.asarray(b)), a % b)
    f = np.array([-7.5, -3, -1, 0.5, 1, 5.25, 9], np.float32)
    g = np.array([2, -2, 0.3, -3, 4, 2, -5], np.float32)
    check(jnp.floor_divide(jnp.asarray(f), jnp.asarray(g)), np.floor_divide(f, g))
    check(jnp.remainder(jnp.asarray(f), jnp.asarray(g)), np.remainder(f, g), atol=1e-5)
    check(jnp.fmod(jnp.asarray(f), jnp.asarray(g)), np.fmod(f, g), atol=1e-5)
    u = np.array([7, 3, 200], np.uint8)
    check(jnp.floor_divide(jnp.asarray(u), 2), u // 2, np.uint8)
    check(jnp.mod(jnp.asarray(u), 3), u % 3, np.uint8)


SPECIAL = [1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.5, -2.5, 7.0, 1e-30, -1e-30]


def _bits_equal(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])
    np.testing.assert_array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)]))


# (i, j) with SPECIAL[i] // SPECIAL[j] a zero of the other sign than NumPy's in JAX (jax 0.10.2):
# -1 // -inf, -1 // -2.5, -2.5 // -inf, -1e-30 // (-1, -inf, -2.5), and -0.0 // every nonzero non-NaN.
_JAX_ZERO_SIGN = {(1, 5), (1, 8), (8, 5), (11, 1), (11, 5), (11, 8)} | {(3, j) for j in (0, 1, 4, 5, 7, 8, 9, 10, 11)}


def test_floor_divide_floats_over_signed_zeros_inf_nan():
    # JAX: x / +-0 is +-inf and 0 / 0 nan, as NumPy; NumPy's values elsewhere, but for zero signs.
    n = len(SPECIAL)
    a = np.repeat(np.array(SPECIAL, np.float32), n)
    b = np.tile(np.array(SPECIAL, np.float32), n)
    with np.errstate(all="ignore"):
        want = np.floor_divide(a, b)
    for i, j in _JAX_ZERO_SIGN:
        assert want[i * n + j] == 0
        want[i * n + j] = -want[i * n + j]
    _bits_equal(jnp.floor_divide(jnp.asarray(a), jnp.asarray(b)), want)
    _bits_equal(jnp.asarray(a) // jnp.asarray(b), want)
    _bits_equal(jnp.divmod(jnp.asarray(a), jnp.asarray(b))[0], want)
    _bits_equal(jnp.floor_divide(jnp.float32(1.0), jnp.float32(-0.0)), np.float32(-np.inf))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_signbit_of_negative_nan_zero_and_inf(dtype):
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.5, -1.5], np.float32).astype(dt)
    x[1] = -x[0]  # a NaN with its sign bit set (astype may drop it)
    want = np.signbit(x.astype(np.float32))
    assert list(want) == [False, True, False, True, False, True, False, True]
    np.testing.assert_array_equal(jnp.signbit(jnp.asarray(x)), want)
    np.testing.assert_array_equal(jnp.copysign(jnp.ones(8, dt), jnp.asarray(x)), np.where(want, -1, 1).astype(dt))


def test_signbit_lowers_as_jax():
    text = str(xjax.make_jaxpr(jnp.signbit)(jnp.zeros(3, np.float32)))
    assert "bitcast_convert_type[new_dtype=int32]" in text and "shift_right_arithmetic" in text


def test_lax_bitcast_convert_type():
    x = np.array([1.0, -0.0, np.inf, -np.nan, 3e-41], np.float32)
    got = lax.bitcast_convert_type(jnp.asarray(x), np.int32)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, x.view(np.int32))  # bits, subnormals included
    back = xjax.jit(lambda v: lax.bitcast_convert_type(v * 2, np.float32) + 1)(got)  # fused with arithmetic
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(back), (x.view(np.int32) * 2).view(np.float32) + 1)
    np.testing.assert_array_equal(lax.bitcast_convert_type(jnp.asarray(x[:2]).astype(jnp.bfloat16), np.uint16),
                                  x[:2].astype(ml_dtypes.bfloat16).view(np.uint16))
    with pytest.raises(TypeError, match="does not support bool"):
        lax.bitcast_convert_type(jnp.ones(2, bool), np.uint8)
    with pytest.raises(ValueError, match=r"shape \(3,\) from uint8 of size 8 bits to float32 .* 3 \* 8 != 32"):
        lax.bitcast_convert_type(jnp.ones(3, np.uint8), np.float32)  # JAX's message
    with pytest.raises(ValueError, match=r"shape \(\) from int16"):
        lax.bitcast_convert_type(jnp.ones((), np.int16), np.float32)


# (operand dtype, new dtype) across widths: both directions, signed pieces, 16-bit floats.
WIDTH_PAIRS = [("float32", "uint8"), ("float32", "int16"), ("int32", "int8"), ("bfloat16", "uint8"),
               ("float16", "int8"), ("uint16", "uint8")]


@pytest.mark.parametrize("wide,narrow", WIDTH_PAIRS)
def test_lax_bitcast_convert_type_across_widths(wide, narrow):
    """Memory order (NumPy's view on a little-endian host, JAX's result): a new last axis of pieces."""
    rng = np.random.default_rng(3)
    wdt, ndt = np.dtype(getattr(ml_dtypes, wide, None) or wide), np.dtype(narrow)
    x = np.frombuffer(rng.bytes(2 * 3 * wdt.itemsize), wdt).reshape(2, 3)
    want = x.view(ndt).reshape(2, 3, wdt.itemsize // ndt.itemsize)
    got = lax.bitcast_convert_type(jnp.asarray(x), ndt)
    assert got.shape == want.shape and got.dtype == ndt
    np.testing.assert_array_equal(np.asarray(got), want)
    back = xjax.jit(lambda v: lax.bitcast_convert_type(v, wdt))(got)
    assert back.shape == x.shape and back.dtype == wdt
    np.testing.assert_array_equal(np.asarray(back).view(np.uint8), x.view(np.uint8))
    # vmap over an axis other than 0: the pieces' axis stays last
    np.testing.assert_array_equal(xjax.vmap(lambda v: lax.bitcast_convert_type(v, ndt), in_axes=1)(jnp.asarray(x)),
                                  np.swapaxes(want, 0, 1))


def test_lax_bitcast_convert_type_across_widths_x64():
    prev = xjax.config.jax_enable_x64
    xjax.config.update("jax_enable_x64", True)
    try:
        x = np.array([1.5, -2.0, np.inf], np.float64)
        got = lax.bitcast_convert_type(jnp.asarray(x), np.uint32)
        np.testing.assert_array_equal(got, x.view(np.uint32).reshape(3, 2))
        assert got[0].tolist() == [0, 1073217536]  # JAX's
        np.testing.assert_array_equal(lax.bitcast_convert_type(jnp.asarray(np.array([3, 1], np.uint32)), np.float64),
                                      np.array([3, 1], np.uint32).view(np.float64))
        u8 = lax.bitcast_convert_type(jnp.asarray(x), np.uint8)
        np.testing.assert_array_equal(lax.bitcast_convert_type(u8, np.int64), x.view(np.int64))
    finally:
        xjax.config.update("jax_enable_x64", prev)


def test_power_rules():
    with pytest.raises(TypeError, match="Integers cannot be raised to negative powers"):
        jnp.arange(3) ** -1
    check(jnp.power(jnp.asarray(F32), 3), F32.astype(np.float64) ** 3, "float32")
    check(jnp.power(jnp.asarray(POS), jnp.asarray(POS)), POS ** POS, rtol=1e-5)
    check(jnp.asarray(POS) ** 0.5, np.sqrt(POS), rtol=1e-6)
    check(jnp.power(jnp.asarray([2, 3], dtype=jnp.int8), 3), np.array([8, 27], np.int8), np.int8)


def test_rounding():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 1.234, -5.678], np.float32)
    check(jnp.round(jnp.asarray(x)), np.round(x))
    check(jnp.around(jnp.asarray(x), 1), np.round(x, 1), rtol=1e-6)
    check(jnp.round(jnp.asarray(x), 2), np.round(x, 2), rtol=1e-6)
    check(jnp.floor(jnp.asarray(x)), np.floor(x))
    check(jnp.ceil(jnp.asarray(x)), np.ceil(x))
    check(jnp.trunc(jnp.asarray(x)), np.trunc(x))
    check(jnp.fix(jnp.asarray(x)), np.fix(x))
    with pytest.raises(NotImplementedError, match="integer np.round not implemented for decimals < 0"):
        jnp.round(jnp.asarray([15, 25]), -1)
    assert jnp.round(jnp.asarray([1, 2])).dtype == np.int32


def test_clip_with_a_min_a_max_and_arrays():
    x = jnp.asarray(F32)
    check(jnp.clip(x, a_min=-1, a_max=1), np.clip(F32, -1, 1))
    check(jnp.clip(x, jnp.asarray(F32[::-1].copy()), 2.0), np.clip(F32, F32[::-1], 2.0))
    check(x.clip(0), np.clip(F32, 0, None))


@pytest.mark.parametrize("a,b,want,want2", [  # d/da, d/db recorded from jax 0.10.2 (its custom JVP)
    (0.0, 0.0, (0.5, 0.5), (0.5, 0.5)), (math.inf, math.inf, (1.0, 1.0), (1.0, 1.0)),
    (-math.inf, 1.0, (0.0, 1.0), (0.0, 1.0)), (math.inf, 0.0, (1.0, 1.0), (1.0, 1.0)),
    (-math.inf, -math.inf, (math.nan, math.nan), (math.nan, math.nan)),
    (2.0, -1.0, (0.95257413, 0.04742587), (0.8888889, 0.1111111))])
def test_logaddexp_gradients_match_jax(a, b, want, want2):
    check(jnp.stack(xjax.grad(jnp.logaddexp, argnums=(0, 1))(a, b)), np.float32(want))
    check(jnp.stack(xjax.grad(jnp.logaddexp2, argnums=(0, 1))(a, b)), np.float32(want2))


def test_misc_float_functions():
    a = np.array([-3.0, 0.0, 2.0, 1e30, -np.inf, np.inf], np.float32)
    b = np.array([4.0, 0.0, -1.5, 1e30, 3.0, np.inf], np.float32)
    check(jnp.hypot(jnp.asarray(a), jnp.asarray(b)), np.hypot(a, b), rtol=1e-6)
    with np.errstate(all="ignore"):
        check(jnp.logaddexp(jnp.asarray(a), jnp.asarray(b)), np.logaddexp(a, b), rtol=1e-6)
        check(jnp.logaddexp2(jnp.asarray(a), jnp.asarray(b)), np.logaddexp2(a, b), rtol=1e-6)
    check(jnp.arctan2(jnp.asarray(a), jnp.asarray(b)), np.arctan2(a, b), rtol=1e-6)
    check(jnp.copysign(jnp.asarray(a), jnp.asarray(b)), np.copysign(a, b))
    n = np.array([np.nan, 1.0, np.nan, -2.0], np.float32)
    m = np.array([1.0, np.nan, np.nan, 3.0], np.float32)
    check(jnp.fmax(jnp.asarray(n), jnp.asarray(m)), np.fmax(n, m))
    check(jnp.fmin(jnp.asarray(n), jnp.asarray(m)), np.fmin(n, m))
    check(jnp.nextafter(jnp.asarray(POS), 0.0), np.nextafter(POS, np.float32(0)), rtol=0)
    fr = np.array([8.0, 0.3, -5.0, 0.0, 1e-3, 1024.0], np.float32)
    mant, ex = jnp.frexp(jnp.asarray(fr))
    wm, we = np.frexp(fr)
    check(mant, wm)
    check(ex, we)
    check(jnp.ldexp(jnp.asarray(wm), jnp.asarray(we)), fr)
    check(jnp.nan_to_num(jnp.asarray([np.nan, np.inf, -np.inf, 1.0]), nan=1.0, posinf=2.0, neginf=-2.0),
          [1.0, 2.0, -2.0, 1.0])


def test_isclose_matches_numpy():
    a = np.array([1.0, 1.0, np.inf, -np.inf, np.nan, 1e-9, 0.0], np.float32)
    b = np.array([1.0 + 1e-6, 1.1, np.inf, np.inf, np.nan, 0.0, 1e-9], np.float32)
    check(jnp.isclose(jnp.asarray(a), jnp.asarray(b)), np.isclose(a, b))
    check(jnp.isclose(jnp.asarray(a), jnp.asarray(b), equal_nan=True), np.isclose(a, b, equal_nan=True))
    assert bool(jnp.array_equiv(jnp.asarray([1, 2]), jnp.asarray([[1, 2], [1, 2]])))
    assert not bool(jnp.array_equiv(jnp.asarray([1, 2]), jnp.asarray([1, 2, 3])))


def test_gcd_lcm_match_numpy():
    a = np.array([0, 12, -8, 21, 35, 7], np.int32)
    b = np.array([5, 18, 12, -14, 0, 13], np.int32)
    check(jnp.gcd(jnp.asarray(a), jnp.asarray(b)), np.gcd(a, b))
    check(jnp.lcm(jnp.asarray(a), jnp.asarray(b)), np.lcm(a, b))


def test_bitwise_and_shifts():
    a = np.array([1, 6, -8, 255], np.int32)
    b = np.array([3, 2, 1, 4], np.int32)
    for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
        check(getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b)), getattr(np, name)(a, b))
    check(jnp.invert(jnp.asarray(a)), np.invert(a))
    with pytest.raises(TypeError):
        jnp.arange(3.) & 1


def test_where_broadcasts_and_promotes():
    c = np.array([[True], [False]])
    x = np.arange(3, dtype=np.int8)
    out = jnp.where(jnp.asarray(c), jnp.asarray(x), 2.5)
    check(out, np.where(c, x, 2.5).astype(np.float32), np.float32)
    check(jnp.where(jnp.asarray([1, 0, 3])), (np.array([0, 2]),))
    with pytest.raises(ValueError, match="Either both or neither"):
        jnp.where(jnp.asarray([True]), 1)


def test_broadcasting_rank_promotion_and_errors():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(jnp.asarray(a) + jnp.asarray([1.0, 2.0, 3.0]), a + np.array([1, 2, 3], np.float32))
    check(jnp.asarray(a[:, :1]) * jnp.asarray(a[:1]), a[:, :1] * a[:1])
    check(jnp.add(1.0, jnp.asarray(a)), a + 1)
    with pytest.raises(TypeError, match=r"add got incompatible shapes for broadcasting: \(5,\), \(4,\)"):
        jnp.arange(5) + jnp.arange(4)
    with pytest.raises(TypeError, match="add requires ndarray or scalar arguments, got <class 'list'> at position 0"):
        jnp.add([1], 2)
    with pytest.raises(TypeError, match="unsupported operand"):
        jnp.arange(3) + [1, 2, 3]
    with pytest.raises(TypeError, match="unsupported operand"):
        jnp.arange(3) + None


def test_empty_and_scalar_inputs():
    e = jnp.asarray(np.zeros((0, 3), np.float32))
    check(jnp.exp(e), np.zeros((0, 3)))
    check(e + 1, np.zeros((0, 3)))
    check(jnp.maximum(e, jnp.zeros(3)), np.zeros((0, 3)))
    assert jnp.add(np.float32(1), np.float32(2)).dtype == np.float32
    assert float(jnp.multiply(2.0, 3.0)) == 6.0


@settings(max_examples=25, deadline=None)
@given(s1=st.lists(st.integers(1, 3), max_size=3), s2=st.lists(st.integers(1, 3), max_size=3),
       data=st.data())
def test_broadcasting_hypothesis(s1, s2, data):
    try:
        np.broadcast_shapes(tuple(s1), tuple(s2))
    except ValueError:
        # As JAX: lax's TypeError for operands of one rank, jnp's rank promotion's ValueError otherwise.
        with pytest.raises(TypeError if len(s1) == len(s2) else ValueError):
            jnp.subtract(jnp.zeros(tuple(s1)), jnp.zeros(tuple(s2)))
        return
    a = np.arange(int(np.prod(s1)), dtype=np.float32).reshape(s1)
    b = np.arange(int(np.prod(s2)), dtype=np.float32).reshape(s2) * 0.5
    check(jnp.subtract(jnp.asarray(a), jnp.asarray(b)), a - b)
    check(jnp.asarray(a) * jnp.asarray(b), a * b)


def test_constants_and_dtypes():
    assert jnp.pi == math.pi and jnp.e == math.e and math.isinf(jnp.inf) and math.isnan(jnp.nan)
    assert jnp.newaxis is None
    assert jnp.float32(3).dtype == np.float32
    assert repr(jnp.float32(3)) == "Array(3., dtype=float32)"
    assert repr(jnp.int32(3.7)) == "Array(3, dtype=int32)"
    assert repr(jnp.bool_(1)) == "Array(True, dtype=bool)"
    assert np.dtype(jnp.bfloat16) == ml_dtypes.bfloat16
    assert jnp.arange(3).dtype == jnp.int32
    assert jnp.zeros(2, jnp.float16).dtype == np.float16
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.float32, jnp.floating) and not jnp.issubdtype(jnp.int32, jnp.floating)
    assert jnp.result_type(jnp.int8, 1.0) == np.float32
    assert jnp.promote_types(jnp.int8, jnp.uint8) == np.int16
    assert not jnp.can_cast(jnp.int32, jnp.float32)
    assert jnp.finfo(jnp.bfloat16).eps == 0.0078125
    assert jnp.iinfo(jnp.int8).max == 127
    assert jnp.isdtype(jnp.float32, "real floating") and not jnp.isdtype(jnp.int32, "real floating")
    assert isinstance(jnp.arange(3), jnp.ndarray)
