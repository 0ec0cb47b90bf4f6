"""Tests of the C++ core's elementwise ops and iota against NumPy/SciPy references."""
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
import scipy.special as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from core_util import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, run_op, to_numpy
from xjax import _core

NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES
# Relative tolerances against float64 references: a few ulp of each format.
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-6, "float64": 1e-13}


def npdt(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def to_core(x):
    x = np.asarray(x)
    shape = x.shape  # np.ascontiguousarray would turn a 0-d array into shape (1,)
    flat = np.ascontiguousarray(x).reshape(-1)
    return _core.Array.from_buffer(flat.view(np.uint8), shape, x.dtype.name)


def run(op, *inputs, **attrs):
    """Runs one op on NumPy arrays; returns its (single) result as a NumPy array."""
    arrays = [to_core(x) for x in inputs]
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
    (out,) = exe.run(arrays)
    return to_numpy(out)


def infer(op, *types, **attrs):
    return _core.infer(op, [(shape, dtype) for shape, dtype in types], attrs)


def check_close(got, ref, dtype, rtol=None, atol=None):
    """Compares with a float64 reference rounded to `dtype` (so that overflow to inf matches)."""
    rtol = RTOL[dtype] if rtol is None else rtol
    atol = rtol if atol is None else atol
    with np.errstate(all="ignore"):
        ref = np.asarray(ref, np.float64).astype(npdt(dtype)).astype(np.float64)
    np.testing.assert_allclose(np.asarray(got, np.float64), ref, rtol=rtol, atol=atol, equal_nan=True)


# ---------------------------------------------------------------------------------------------
# Float-only unary ops: (reference on float64, input range).
def _digamma_ref(x):
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, sp.psi(x))


FLOAT_UNARY = {
    "exp": (np.exp, (-10, 10)), "exp2": (np.exp2, (-10, 10)), "log": (np.log, (0.01, 100)),
    "log1p": (np.log1p, (-0.9, 10)), "expm1": (np.expm1, (-5, 5)), "tanh": (np.tanh, (-5, 5)),
    "logistic": (sp.expit, (-20, 20)), "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1.4, 1.4)), "asin": (np.arcsin, (-0.99, 0.99)), "acos": (np.arccos, (-0.99, 0.99)),
    "atan": (np.arctan, (-10, 10)), "sinh": (np.sinh, (-5, 5)), "cosh": (np.cosh, (-5, 5)),
    "asinh": (np.arcsinh, (-10, 10)), "acosh": (np.arccosh, (1, 10)), "atanh": (np.arctanh, (-0.9, 0.9)),
    "sqrt": (np.sqrt, (0, 100)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.01, 100)), "cbrt": (np.cbrt, (-100, 100)),
    "erf": (sp.erf, (-4, 4)), "erfc": (sp.erfc, (-4, 4)), "erf_inv": (sp.erfinv, (-0.999, 0.999)),
    "lgamma": (sp.gammaln, (-9.7, 20)), "digamma": (_digamma_ref, (-9.7, 20)),
    "floor": (np.floor, (-10, 10)), "ceil": (np.ceil, (-10, 10)),
}


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
def test_float_unary(op, dtype):
    fn, (lo, hi) = FLOAT_UNARY[op]
    x = np.linspace(lo, hi, 601).astype(npdt(dtype))  # 601: full 512-blocks and a tail
    got = run(op, x)
    assert got.dtype == npdt(dtype) and got.shape == x.shape
    ref = fn(x.astype(np.float64))
    # Near zeros of the function (sin, lgamma, digamma) errors are absolute in the arguments' scale.
    atol = RTOL[dtype] * (4 if op in ("lgamma", "digamma", "tan") else 1)
    check_close(got, ref, dtype, atol=atol)


@pytest.mark.parametrize("op", sorted(set(FLOAT_UNARY) - {"digamma"}))
def test_float_unary_special_values(op):
    fn = FLOAT_UNARY[op][0]
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0], np.float32)
    with np.errstate(all="ignore"):
        ref = fn(x.astype(np.float64))
    if op == "lgamma":
        ref[2] = np.inf  # lgamma(-inf) = +inf as in C and XLA (SciPy says -inf)
    got = run(op, x)
    np.testing.assert_array_equal(got, ref.astype(np.float32))
    if op != "erf_inv":  # SciPy drops the sign of erfinv(-0); ours keeps it (checked below)
        np.testing.assert_array_equal(np.signbit(got[3:]), np.signbit(ref[3:]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_is_finite(dtype):
    x = np.array([np.nan, np.inf, -np.inf, 0, -1.5, 3], npdt(dtype))
    got = run("is_finite", x)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, [False, False, False, True, True, True])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_round(dtype):
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.4, -0.6, 3.7, np.nan, np.inf, -0.0], npdt(dtype))
    away = run("round", x, rounding_method=0)
    even = run("round", x, rounding_method=1)
    x64 = x.astype(np.float64)
    np.testing.assert_array_equal(away.astype(np.float64), np.copysign(np.floor(np.abs(x64) + 0.5), x64))
    np.testing.assert_array_equal(even.astype(np.float64), np.round(x64))
    np.testing.assert_array_equal(run("round", x).view(np.uint16 if x.itemsize == 2 else np.uint8).ravel(),
                                  away.view(np.uint16 if x.itemsize == 2 else np.uint8).ravel())  # default: 0


# JAX's float32 erf_inv on CPU (XLA's ErfInv32, recorded from jax 0.10.2): inputs and results as bits.
ERF_INV_JAX_BITS = [
    (0x3dcccccd, 0x3db5fa21), (0xbf000000, 0xbef430fe), (0x3f666666, 0x3f94e009), (0x3f7d70a4, 0x3fe92333),
    (0xbf7fbe77, 0xc014e999), (0x3f7fff58, 0x4047e297), (0x1e3ce508, 0x1e27674c), (0x3f350481, 0x3f3e6487),
    (0xbe99999a, 0xbe8b803d),
]


# float64 erf_inv and log1p too (XLA's ErfInv64 on XLA's float64 log1p).
JAX_BITS_F64 = {
    "erf_inv": [(0x3fb999999999999a, 0x3fb6bf442539fd74), (0xbfe0000000000000, 0xbfde861fbb24c008),
                (0x3feccccccccccccd, 0x3ff29c0146770650), (0x3fefae147ae147ae, 0x3ffd2466082bb20e),
                (0xbfeff7ced916872b, 0xc0029d311405cdba), (0x3fefffffca501acb, 0x400e21eb90139ebd),
                (0x16687e92154ef7ac, 0x1665b5260685db94), (0x3fe6a0902de00d1b, 0x3fe7cc911b6c8d2a),
                (0xbfd3333333333333, 0xbfd1700774485ed3)],
    "log1p": [(0xbfd3333333333333, 0xbfd6d3c324e13f4f), (0x3fc999999999999a, 0x3fc7565011e49676),
              (0xbfeccccccccccccd, 0xc0026bb1bbb55516), (0x3ffb333333333333, 0x3fefc8b7f138bdea),
              (0x3e112e0be826d695, 0x3e112e0be801f1d9), (0xbfda3d70a3d70a3d, 0xbfe0e25e0f715c84),
              (0x3fdccccccccccccd, 0x3fd7c7b282d0d46b), (0x4059000000000000, 0x401275e2271bba31)],
}


@pytest.mark.parametrize("op", sorted(JAX_BITS_F64))
def test_float64_erf_inv_and_log1p_are_jaxs(op):
    x = np.array([a for a, _ in JAX_BITS_F64[op]], np.uint64).view(np.float64)
    got = run(op, x)
    assert [hex(v) for v in got.view(np.uint64)] == [hex(b) for _, b in JAX_BITS_F64[op]]


def test_erf_inv_float32_is_jaxs():
    x = np.array([a for a, _ in ERF_INV_JAX_BITS], np.uint32).view(np.float32)
    got = run("erf_inv", x)
    assert [hex(v) for v in got.view(np.uint32)] == [hex(b) for _, b in ERF_INV_JAX_BITS]


# float32 log and log1p are XLA's on CPU (what erf_inv and the random samplers build on).
LOG_JAX_BITS = {
    "log": [(0x3e99999a, 0xbf9a1bc8), (0x3fd9999a, 0x3f07d741), (0x42f6e979, 0x409a1bba), (0x0da24260, 0xc28a27b5),
            (0x3f7fbe77, 0xba8322ca), (0x6158d727, 0x423bdf39), (0x3d4ccccd, 0xc03fba14), (0x40e00000, 0x3ff91396)],
    "log1p": [(0xbe99999a, 0xbeb69e1a), (0x3e4ccccd, 0x3e3ab281), (0xbf666666, 0xc0135d8d), (0x3fd9999a, 0x3f7e45c0),
              (0x358637bd, 0x358637b9), (0xbed1eb85, 0xbf0712f0), (0x3ee66666, 0x3ebe3d95), (0x42c80000, 0x4093af11)],
}


@pytest.mark.parametrize("op", sorted(LOG_JAX_BITS))
def test_log_float32_is_jaxs(op):
    x = np.array([a for a, _ in LOG_JAX_BITS[op]], np.uint32).view(np.float32)
    got = run(op, x)
    assert [hex(v) for v in got.view(np.uint32)] == [hex(b) for _, b in LOG_JAX_BITS[op]]


def test_erf_inv_accuracy():
    rng = np.random.default_rng(0)
    y32 = np.concatenate([rng.uniform(-1, 1, 20000), 1 - np.logspace(-7, -1, 500), np.logspace(-30, -1, 200)])
    y32 = y32.astype(np.float32)
    got = run("erf_inv", y32).astype(np.float64)
    ref = sp.erfinv(y32.astype(np.float64))
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    err = np.abs(got - ref) / ulp
    # XLA's float32 algorithm (which JAX users get): a few ulp, more where 1 - y^2 cancels.
    assert np.max(err[np.abs(y32) < 0.99]) <= 5 and np.max(err) <= 80
    y64 = np.concatenate([rng.uniform(-1, 1, 20000), 1 - np.logspace(-15, -1, 500), -np.logspace(-300, -1, 200)])
    got = run("erf_inv", y64)
    near_one = np.abs(y64) >= 0.999  # where 1 - y^2 cancels in XLA's formula as well
    np.testing.assert_allclose(got[~near_one], sp.erfinv(y64[~near_one]), rtol=1e-13, atol=0)
    np.testing.assert_allclose(got[near_one], sp.erfinv(y64[near_one]), rtol=3e-10, atol=0)
    edges = np.array([1, -1, 1.5, -2, np.nan, 0.0, -0.0])
    for dtype in FLOAT_DTYPES:
        got = run("erf_inv", edges.astype(npdt(dtype))).astype(np.float64)
        np.testing.assert_array_equal(got, [np.inf, -np.inf, np.nan, np.nan, np.nan, 0, 0])
        assert np.signbit(got[-1])


def test_lgamma_digamma_edges():
    x = np.array([0, -0.0, -1, -2, -1e20, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    with np.errstate(all="ignore"):
        ref = sp.gammaln(x)
    ref[6] = np.inf  # lgamma(-inf) = +inf as in C and XLA
    np.testing.assert_array_equal(run("lgamma", x), ref)
    # digamma is NaN at the poles (including 0 and -inf), as JAX.
    got = run("digamma", x)
    np.testing.assert_array_equal(got[:5], np.nan)
    np.testing.assert_array_equal(got[5:8], [np.inf, np.nan, np.nan])
    np.testing.assert_allclose(got[8:], sp.psi(x[8:]), rtol=1e-14)
    x = np.array([1.4616321449683623, 1e-8, -0.5, -1e-8, -7.3, 123.456])
    np.testing.assert_allclose(run("digamma", x), sp.psi(x), rtol=1e-13, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# Numeric unary ops and the binary arithmetic.
def _ints(dtype, n=64, seed=0):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(seed)
    edge = [info.min, info.min + 1, info.max, info.max - 1, 0, 1, 2, 3, 7]
    edge += [] if info.min == 0 else [-1, -2, -3, -7]
    rand = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return np.concatenate([np.array(edge, dtype), rand])


def _wrap(values, dtype):
    """Python ints -> dtype with two's-complement wrap-around."""
    bits = np.iinfo(dtype).bits
    return np.array([v & ((1 << bits) - 1) for v in values], np.uint64).astype(np.dtype(dtype).str.replace("i", "u")).view(dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_unary(dtype):
    x = _ints(dtype)
    xs = [int(v) for v in x]
    np.testing.assert_array_equal(run("neg", x), _wrap([-v for v in xs], dtype))
    np.testing.assert_array_equal(run("abs", x), _wrap([abs(v) for v in xs], dtype))  # abs(INT_MIN) = INT_MIN
    np.testing.assert_array_equal(run("square", x), _wrap([v * v for v in xs], dtype))
    np.testing.assert_array_equal(run("sign", x), np.sign(x).astype(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_numeric_unary(dtype):
    x = np.array([-3.5, -1, -0.0, 0.0, 0.25, 2, 1e3, np.inf, -np.inf, np.nan], npdt(dtype))
    x64 = x.astype(np.float64)
    for op, fn in [("neg", np.negative), ("abs", np.abs), ("square", np.square), ("sign", np.sign)]:
        got = run(op, x)
        assert got.dtype == x.dtype
        check_close(got, fn(x64), dtype)
    # sign keeps the sign of zeros; neg flips it.
    assert list(np.signbit(run("sign", x)[2:4])) == [True, False]
    assert list(np.signbit(run("neg", x)[2:4])) == [False, True]


def _trunc_div(a, b, bits, signed):
    if b == 0:
        return -1 if signed else (1 << bits) - 1
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _trunc_rem(a, b):
    if b == 0:
        return a
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _int_pow(a, b):
    if b < 0:
        return 1 if a == 1 else ((-1 if b % 2 else 1) if a == -1 else 0)
    return pow(a, b, 1 << 64)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_binary(dtype):
    a = _ints(dtype, seed=1)
    b = _ints(dtype, seed=2)[::-1].copy()
    b[:6] = [0, 0, 0, 1, 2, 3]
    if np.iinfo(dtype).min < 0:
        b[6] = -1  # a[6] ... and INT_MIN / -1 below
        a[7], b[7] = np.iinfo(dtype).min, -1
    A, B = [int(v) for v in a], [int(v) for v in b]
    bits, signed = np.iinfo(dtype).bits, np.iinfo(dtype).min < 0
    np.testing.assert_array_equal(run("add", a, b), _wrap([x + y for x, y in zip(A, B)], dtype))
    np.testing.assert_array_equal(run("sub", a, b), _wrap([x - y for x, y in zip(A, B)], dtype))
    np.testing.assert_array_equal(run("mul", a, b), _wrap([x * y for x, y in zip(A, B)], dtype))
    np.testing.assert_array_equal(run("div", a, b), _wrap([_trunc_div(x, y, bits, signed) for x, y in zip(A, B)], dtype))
    np.testing.assert_array_equal(run("rem", a, b), _wrap([_trunc_rem(x, y) for x, y in zip(A, B)], dtype))
    np.testing.assert_array_equal(run("max", a, b), np.maximum(a, b))
    np.testing.assert_array_equal(run("min", a, b), np.minimum(a, b))
    small = (b % 70).astype(dtype)
    if signed:
        small[:8] = [-1, -2, -3, 0, 1, 63, 64, 65]
    S = [int(v) for v in small]
    np.testing.assert_array_equal(run("pow", a, small), _wrap([_int_pow(x, y) for x, y in zip(A, S)], dtype))


def test_int_pow_negative_exponents():
    a = np.array([1, -1, -1, 2, -2, 0, 5], np.int32)
    b = np.array([-3, -3, -4, -1, -1, -2, -2**31], np.int32)
    np.testing.assert_array_equal(run("pow", a, b), [1, -1, 1, 0, 0, 0, 0])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_float_binary(dtype):
    rng = np.random.default_rng(3)
    a = rng.uniform(-10, 10, 600).astype(npdt(dtype))
    b = rng.uniform(-10, 10, 600).astype(npdt(dtype))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    for op, fn in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.divide),
                   ("rem", np.fmod), ("max", np.maximum), ("min", np.minimum), ("atan2", np.arctan2)]:
        got = run(op, a, b)
        assert got.dtype == a.dtype
        check_close(got, fn(a64, b64), dtype, atol=RTOL[dtype] * 10)
    pa = np.abs(a)
    check_close(run("pow", pa, b), np.power(pa.astype(np.float64), b64), dtype, rtol=RTOL[dtype] * 4)


def test_float_binary_special_values():
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -2.0], np.float64)
    a, b = np.meshgrid(v, v)
    a, b = a.ravel(), b.ravel()
    with np.errstate(all="ignore"):
        refs = {"add": a + b, "sub": a - b, "mul": a * b, "div": a / b, "rem": np.fmod(a, b), "pow": np.power(a, b),
                "atan2": np.arctan2(a, b), "max": np.maximum(a, b), "min": np.minimum(a, b)}
    for op, ref in refs.items():
        for dtype in ["float32", "float64"]:
            got = run(op, a.astype(dtype), b.astype(dtype))
            np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=op)
            ok = ~np.isnan(ref) & ~((a == 0) & (b == 0) & np.isin(op, ["max", "min"]))  # +-0 order is free
            # float32 atan2 and pow (ours, computed in double) may differ from the float64 result rounded by an ulp.
            np.testing.assert_allclose(got[ok], ref[ok].astype(dtype), rtol=2.5e-7, atol=0, err_msg=op)
            np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(ref[ok]), err_msg=op)


def test_nextafter():
    for dtype in FLOAT_DTYPES:
        dt = npdt(dtype)
        x = np.array([0, 0, 1, 1, -1, np.inf, 5, np.nan, 1, -0.0], dt)
        y = np.array([1, -1, 2, 0, 0, 0, 5, 1, np.nan, 0.0], dt)
        got = run("nextafter", x, y)
        ref = np.nextafter(x.astype(np.float32) if dtype == "bfloat16" else x, y.astype(np.float32) if dtype == "bfloat16" else y)
        if dtype == "bfloat16":  # NumPy has no bfloat16 nextafter: step the bits
            bits = x.view(np.uint16).astype(np.int64)
            step = np.where((y.astype(np.float32) > x.astype(np.float32)) == (x.astype(np.float32) > 0), 1, -1)
            ref = (bits + step).astype(np.uint16).view(dt).astype(np.float32)
            ref[0:2] = [ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal, -ml_dtypes.finfo(ml_dtypes.bfloat16).smallest_subnormal]
            ref[6], ref[7], ref[8], ref[9] = 5, np.nan, np.nan, 0.0
        np.testing.assert_array_equal(got.astype(np.float64), np.asarray(ref, np.float64), err_msg=dtype)


@pytest.mark.parametrize("dtype", ["bool"] + NUMERIC_DTYPES)
def test_compare(dtype):
    dt = npdt(dtype)
    if dtype == "bool":
        a, b = np.array([0, 0, 1, 1], bool), np.array([0, 1, 0, 1], bool)
    elif dtype in INT_DTYPES:
        a, b = _ints(dtype, seed=4), _ints(dtype, seed=5)
        b[:4] = a[:4]
    else:
        a = np.array([np.nan, 1, np.nan, np.inf, -np.inf, 0.0, 2, -3], dt)
        b = np.array([np.nan, np.nan, 1, np.inf, 0.0, -0.0, 1, 5], dt)
    for op, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less), ("le", np.less_equal),
                   ("gt", np.greater), ("ge", np.greater_equal)]:
        got = run(op, a, b)
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, fn(a.astype(np.float64) if dtype == "bfloat16" else a,
                                              b.astype(np.float64) if dtype == "bfloat16" else b), err_msg=op)


def test_bool_arithmetic():
    a, b = np.array([0, 0, 1, 1], bool), np.array([0, 1, 0, 1], bool)
    np.testing.assert_array_equal(run("add", a, b), a | b)
    np.testing.assert_array_equal(run("mul", a, b), a & b)
    np.testing.assert_array_equal(run("max", a, b), a | b)
    np.testing.assert_array_equal(run("min", a, b), a & b)
    np.testing.assert_array_equal(run("bitwise_and", a, b), a & b)
    np.testing.assert_array_equal(run("bitwise_or", a, b), a | b)
    np.testing.assert_array_equal(run("bitwise_xor", a, b), a ^ b)
    np.testing.assert_array_equal(run("bitwise_not", a), ~a)


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_bits(dtype):
    a, b = _ints(dtype, seed=6), _ints(dtype, seed=7)
    np.testing.assert_array_equal(run("bitwise_and", a, b), a & b)
    np.testing.assert_array_equal(run("bitwise_or", a, b), a | b)
    np.testing.assert_array_equal(run("bitwise_xor", a, b), a ^ b)
    np.testing.assert_array_equal(run("bitwise_not", a), ~a)
    bits = np.iinfo(dtype).bits
    udt = np.dtype(dtype).str.replace("i", "u")
    u = a.view(udt)
    np.testing.assert_array_equal(run("population_count", a), np.bitwise_count(u).astype(dtype))
    np.testing.assert_array_equal(run("clz", a), np.array([bits - int(v).bit_length() for v in u], dtype))
    # Shift amounts in and out of [0, bits), negative ones included.
    amounts = np.arange(-3, bits + 4)
    if np.iinfo(dtype).min == 0:
        amounts = amounts[amounts >= 0]
    x = np.resize(a, amounts.size).astype(dtype)
    s = amounts.astype(dtype)
    X = [int(v) for v in x.view(udt)]
    mask = (1 << bits) - 1
    left = [(v << k) & mask if 0 <= k < bits else 0 for v, k in zip(X, amounts.tolist())]
    logical = [v >> k if 0 <= k < bits else 0 for v, k in zip(X, amounts.tolist())]
    signed = [v - (1 << bits) if v >> (bits - 1) else v for v in X]  # the bit pattern as signed
    arith = [(v >> (k if 0 <= k < bits else bits - 1)) & mask for v, k in zip(signed, amounts.tolist())]
    np.testing.assert_array_equal(run("shift_left", x, s).view(udt), np.array(left, np.uint64).astype(udt))
    np.testing.assert_array_equal(run("shift_right_logical", x, s).view(udt), np.array(logical, np.uint64).astype(udt))
    np.testing.assert_array_equal(run("shift_right_arithmetic", x, s).view(udt), np.array(arith, np.uint64).astype(udt))


# ---------------------------------------------------------------------------------------------
# integer_pow
@pytest.mark.parametrize("y", [0, 1, 2, 3, 5, 8, 16, 17, 31, -1, -2, -7, -16, -25])
def test_integer_pow_float(y):
    x = np.array([-2.5, -1.1, -0.5, 0.3, 1.0, 1.7, 3.0, np.nan, np.inf, -np.inf], np.float64)
    with np.errstate(all="ignore"):
        ref = x ** float(y)
    for dtype in FLOAT_DTYPES:
        xd = x.astype(npdt(dtype))
        with np.errstate(all="ignore"):
            refd = xd.astype(np.float64) ** float(y)
        check_close(run("integer_pow", xd, y=y), refd, dtype, rtol=RTOL[dtype] * (1 + abs(y)), atol=0)
    np.testing.assert_allclose(run("integer_pow", x, y=y), ref, rtol=1e-15 * (1 + abs(y)))


@pytest.mark.parametrize("y", [0, 1, 2, 3, 7, 16, 17, 40])
def test_integer_pow_int(y):
    for dtype in INT_DTYPES:
        x = _ints(dtype, n=16)
        np.testing.assert_array_equal(run("integer_pow", x, y=y), _wrap([int(v) ** y for v in x], dtype), err_msg=dtype)


# ---------------------------------------------------------------------------------------------
# convert_element_type over all 13 x 13 pairs.
_FORMATS = {  # precision bits, smallest normal exponent, largest finite value
    "float16": (11, -14, 65504.0), "bfloat16": (8, -126, float(ml_dtypes.finfo(ml_dtypes.bfloat16).max)),
    "float32": (24, -126, float(np.finfo(np.float32).max)), "float64": (53, -1022, float(np.finfo(np.float64).max)),
}


def _round_exact(v, dtype):
    """Rounds an exact rational to `dtype`, to nearest even (the reference for lossy conversions)."""
    if v == 0:
        return 0.0
    p, emin, fmax = _FORMATS[dtype]
    a = abs(v)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    scale = Fraction(2) ** (max(e, emin) - p + 1)
    r = round(a / scale) * scale  # round() of a Fraction: half to even
    out = math.inf if r > Fraction(fmax) else float(r)
    return -out if v < 0 else out


_TINIEST_NORMAL = {"bfloat16": 2.0**-126, "float32": 2.0**-126, "float64": 2.0**-1022}


def _flushes(src, dst, v):
    """Whether v (a float in src) converts as a zero: float32/float64/bfloat16 subnormal operands
    and results flush as in JAX on CPU (test_core_float_env.py), but a same-type conversion and
    float32 <-> bfloat16 move bits, and float -> bool of a bfloat16 tests its bits."""
    moves = src == dst or {src, dst} == {"float32", "bfloat16"} or (src, dst) == ("bfloat16", "bool")
    if src not in _TINIEST_NORMAL or moves:
        return False
    tiny = [_TINIEST_NORMAL[src]] + ([_TINIEST_NORMAL[dst]] if dst in _TINIEST_NORMAL else [])
    return 0 < abs(v) < max(tiny)


def _convert_ref(x, src, dst):
    out = []
    for v in x.tolist():
        if isinstance(v, float) and _flushes(src, dst, v):
            v = math.copysign(0.0, v)
        if dst == "bool":
            out.append(v != 0)
            continue
        if isinstance(v, float) and math.isnan(v):
            out.append(0 if dst in INT_DTYPES else math.nan)
            continue
        if dst in INT_DTYPES:
            info = np.iinfo(dst)
            if isinstance(v, float):
                if math.isinf(v):
                    out.append(info.max if v > 0 else info.min)
                    continue
                v = int(v)  # truncates toward zero
                out.append(min(max(v, info.min), info.max))  # floats saturate
            else:
                m = int(v) & ((1 << info.bits) - 1)  # ints wrap
                out.append(m - (1 << info.bits) if info.min < 0 and m >> (info.bits - 1) else m)
            continue
        if isinstance(v, float) and math.isinf(v):
            out.append(v)
            continue
        r = _round_exact(Fraction(v), dst)
        out.append(math.copysign(r, v) if v == 0 else r)
    return np.array(out, dtype=npdt(dst))


def _convert_inputs(src):
    if src == "bool":
        return np.array([False, True, True, False], bool)
    if src in INT_DTYPES:
        extra = [2049, 2**24 + 2**16 + 1, 2**24 + 1, 65519, 65520, 65535, 2**31 - 1, 2**53 + 1, 2**60 + 2**36 + 1]
        info = np.iinfo(src)
        extra = [v for v in extra if v <= info.max]
        return np.concatenate([_ints(src, n=20, seed=8), np.array(extra, src)])
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.7, -0.7, 1.5, -2.5, 100.7, -100.7, 127.9, 128.0,
            -128.0, -129.0, 255.9, 256.0, 32767.5, 32768.0, -32769.0, 65504.0, 65520.0, 70000.0, 2.0**31, -(2.0**31),
            2.0**31 + 2**9, 2.0**32, 2.0**63, -(2.0**63), 2.0**64, 1e20, -1e30, 3e38, 1e300, 1e-8, 6e-8, 1e-40,
            1e-300, 1.0 + 2**-11, 1.0 + 2**-11 + 2**-30, 1.0 + 2**-8 + 2**-40, 1 / 3]
    with np.errstate(all="ignore"):
        return np.array(vals, np.float64).astype(npdt(src))


@pytest.mark.parametrize("src", ALL_DTYPES)
def test_convert_element_type(src):
    x = _convert_inputs(src)
    for dst in ALL_DTYPES:
        got = run("convert_element_type", x, new_dtype=dst)
        assert got.dtype == npdt(dst)
        ref = _convert_ref(x, src, dst)
        if dst in FLOAT_DTYPES:
            g, r = got.astype(np.float64), ref.astype(np.float64)
            np.testing.assert_array_equal(g, r, err_msg=f"{src}->{dst}")
            np.testing.assert_array_equal(np.signbit(g), np.signbit(r), err_msg=f"{src}->{dst}")
        else:
            np.testing.assert_array_equal(got, ref, err_msg=f"{src}->{dst}")


def test_convert_half_bit_patterns():
    # Every float16 / bfloat16 value round-trips through float32, and float32 -> 16-bit rounds to
    # nearest even on random bit patterns (vector and scalar tails alike).
    all16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    for dt in ["float16", "bfloat16"]:
        h = all16.view(npdt(dt))
        f = run("convert_element_type", h, new_dtype="float32")
        np.testing.assert_array_equal(f, h.astype(np.float32))
        back = run("convert_element_type", f, new_dtype=dt)
        np.testing.assert_array_equal(back.view(np.uint16)[~np.isnan(f)], all16[~np.isnan(f)])
    bits = np.random.default_rng(9).integers(0, 1 << 32, 100003, dtype=np.uint64).astype(np.uint32)
    f = bits.view(np.float32)
    for dt in ["float16", "bfloat16"]:
        got = run("convert_element_type", f, new_dtype=dt)
        with np.errstate(all="ignore"):
            ref = f.astype(npdt(dt))
        np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), np.isnan(f))
        ok = ~np.isnan(f)
        np.testing.assert_array_equal(got.view(np.uint16)[ok], ref.view(np.uint16)[ok])


def test_bitcast_convert_type():
    x = _convert_inputs("float32")
    for dst in ["int32", "uint32", "float32"]:
        got = run("bitcast_convert_type", x, new_dtype=dst)
        assert got.dtype == npdt(dst)
        np.testing.assert_array_equal(got.view(np.uint32), x.view(np.uint32))
    h = _convert_inputs("bfloat16")
    np.testing.assert_array_equal(run("bitcast_convert_type", h, new_dtype="float16").view(np.uint16), h.view(np.uint16))
    assert infer("bitcast_convert_type", ((2, 3), "float64"), new_dtype="uint64") == [((2, 3), "uint64")]
    with pytest.raises(TypeError, match="different widths"):
        infer("bitcast_convert_type", ((2,), "float32"), new_dtype="int16")
    with pytest.raises(TypeError, match="does not support bool"):
        infer("bitcast_convert_type", ((2,), "uint8"), new_dtype="bool")


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_copy(dtype):
    x = _convert_inputs(dtype)
    x = x[: x.size // 2 * 2].reshape(2, -1)
    got = run("copy", x)
    assert got.dtype == x.dtype and got.shape == x.shape
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8))


# ---------------------------------------------------------------------------------------------
# select_n, clamp, iota
@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "float32", "int64", "float64"])
@pytest.mark.parametrize("num_cases", [1, 2, 3, 8, 9, 12])
def test_select_n(dtype, num_cases):
    rng = np.random.default_rng(num_cases)
    n = 300
    cases = [rng.integers(0, 100, n).astype(npdt(dtype)) for _ in range(num_cases)]
    which = rng.integers(-2, num_cases + 2, n).astype(np.int32)  # out of range: clamped
    ref = np.choose(np.clip(which, 0, num_cases - 1), cases)
    np.testing.assert_array_equal(run("select_n", which, *cases), ref)
    for w in [-5, 0, num_cases - 1, num_cases + 3]:  # 0-d which
        np.testing.assert_array_equal(run("select_n", np.int32(w), *cases), cases[min(max(w, 0), num_cases - 1)])
    if num_cases <= 2:
        pred = rng.integers(0, 2, n).astype(bool)
        np.testing.assert_array_equal(run("select_n", pred, *cases), np.where(pred, cases[-1], cases[0]))
        np.testing.assert_array_equal(run("select_n", np.bool_(True), *cases), cases[-1])


def test_select_n_keeps_bits():
    a = np.array([-0.0, np.nan, 1.0], np.float32)
    b = np.array([0.0, 2.0, -np.inf], np.float32)
    got = run("select_n", np.array([0, 0, 1], np.int32), a, b)
    np.testing.assert_array_equal(got.view(np.uint32), np.array([a[0], a[1], b[2]]).view(np.uint32))


def test_select_n_large_scalar_which():
    n = 100_003  # several threads' chunks and tiles, with a tail
    a, b = np.arange(n, dtype=np.float32), -np.arange(n, dtype=np.float32)
    np.testing.assert_array_equal(run("select_n", np.bool_(True), a, b), b)
    np.testing.assert_array_equal(run("select_n", np.int32(0), a, b), a)
    which = (np.arange(n) % 3 == 0)
    np.testing.assert_array_equal(run("select_n", which, a, b), np.where(which, b, a))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint32", "int64", "uint64", "float16", "float32", "float64"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "max", "min", "lt", "ge", "ne", "bitwise_xor",
                                "shift_left", "shift_right_arithmetic"])
def test_a_one_value_operand_gives_what_the_whole_array_gives(op, dtype):
    # A 0-d operand is read in place where the fused engine has a loop for it (32/64-bit types),
    # else expanded into tiles: either way each element is what the op gives with the value
    # repeated, whichever side it is on, across tiles, chunks and threads.
    dt = npdt(dtype)
    is_int = dt.kind in "iu"
    if (op.startswith("bitwise") or op.startswith("shift")) and not is_int:
        return
    rng = np.random.default_rng(3)
    for n in [2, 5, 1023, 1025, 100_003]:
        x = (rng.integers(1, 9, n) if is_int else rng.standard_normal(n) * 4).astype(dt)
        v = np.array(3 if is_int else -1.75, dt)
        for args, full in [((v, x), (np.full(n, v), x)), ((x, v), (x, np.full(n, v)))]:
            got, want = run(op, *args), run(op, *full)
            assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (op, dtype, n)


@pytest.mark.parametrize("dtype", ["bool", "int8", "uint16", "int32", "int64", "float16", "bfloat16", "float32", "float64"])
def test_clamp(dtype):
    dt = npdt(dtype)
    if dtype == "bool":
        x = np.array([False, True, False, True])
        for lo in [False, True]:
            for hi in [False, True]:
                np.testing.assert_array_equal(run("clamp", np.bool_(lo), x, np.bool_(hi)), (x | lo) & hi)
        return
    x = np.arange(0, 40, dtype=np.int64).astype(dt)
    lo, hi = np.array(5, dt), np.array(30, dt)
    np.testing.assert_array_equal(run("clamp", lo, x, hi), np.clip(x, lo, hi))
    los = np.full(x.shape, 10, dt)
    np.testing.assert_array_equal(run("clamp", los, x, hi), np.clip(x, 10, 30).astype(dt))
    np.testing.assert_array_equal(run("clamp", lo, x, np.full(x.shape, 20, dt)), np.clip(x, 5, 20).astype(dt))
    np.testing.assert_array_equal(run("clamp", hi, x, lo), np.full(x.shape, 5, dt))  # min > max: max wins


def test_clamp_nan_and_large():
    x = np.array([np.nan, -np.inf, np.inf, 0.5, -3], np.float32)
    np.testing.assert_array_equal(run("clamp", np.float32(-1), x, np.float32(1)), [np.nan, -1, 1, 0.5, -1])
    np.testing.assert_array_equal(run("clamp", np.float32(np.nan), x, np.float32(1)), np.nan)
    n = 100_001
    y = np.linspace(-5, 5, n).astype(np.float32)
    np.testing.assert_array_equal(run("clamp", np.float32(-1), y, np.float32(2)), np.clip(y, -1, 2))
    hi = np.linspace(0, 3, n).astype(np.float32)
    np.testing.assert_array_equal(run("clamp", np.float32(-1), y, hi), np.minimum(np.maximum(y, -1), hi))


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_iota(dtype):
    for shape, dim in [((5,), 0), ((3, 4), 0), ((3, 4), 1), ((2, 3, 4), 1), ((2, 0, 3), 2), ((1, 1, 7), 2)]:
        got = run("iota", dtype=dtype, shape=shape, dimension=dim)
        assert got.dtype == npdt(dtype) and got.shape == shape
        idx = np.indices(shape)[dim] if shape else np.zeros(())
        np.testing.assert_array_equal(got.astype(np.float64), idx.astype(npdt(dtype)).astype(np.float64))
    big = run("iota", dtype=dtype, shape=(70000,), dimension=0)
    with np.errstate(all="ignore"):  # float16 overflows to inf past 65520, as in the kernel
        np.testing.assert_array_equal(big, np.arange(70000).astype(npdt(dtype)))


# ---------------------------------------------------------------------------------------------
# Shapes: empty, 0-d, large (threaded), and random shapes.
@pytest.mark.parametrize("shape", [(0,), (3, 0, 2), ()])
def test_empty_and_scalar_shapes(shape):
    x = np.full(shape, 0.5, np.float32)
    for op in ["exp", "neg", "is_finite", "erf_inv", "lgamma", "bessel_i1e"]:
        got = run(op, x)
        assert got.shape == shape
    assert run("igamma", np.float32(2), x).shape == shape  # a 0-d operand broadcasts
    assert run("regularized_incomplete_beta", x, np.float32(2), x).shape == shape
    assert run("add", x, x).shape == shape
    assert run("lt", x, x).dtype == np.bool_
    assert run("convert_element_type", x, new_dtype="int8").shape == shape
    assert run("select_n", np.zeros(shape, bool), x, x).shape == shape
    assert run("clamp", np.float32(0), x, np.float32(1)).shape == shape
    if shape == ():
        np.testing.assert_allclose(run("exp", x), np.exp(np.float32(0.5)), rtol=1e-6)


def test_large_arrays_threaded():
    n = 1_000_003
    rng = np.random.default_rng(10)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    np.testing.assert_array_equal(run("add", a, b), a + b)
    np.testing.assert_allclose(run("exp", a), np.exp(a.astype(np.float64)), rtol=4e-7)
    np.testing.assert_allclose(run("tanh", a), np.tanh(a.astype(np.float64)), rtol=4e-7, atol=1e-7)
    np.testing.assert_array_equal(run("convert_element_type", a, new_dtype="float16"), a.astype(np.float16))


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(0, 5), min_size=0, max_size=4), scalar_which=st.booleans())
def test_random_shapes(shape, scalar_which):
    shape = tuple(shape)
    rng = np.random.default_rng(len(shape))
    a = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(run("mul", a, b), a * b)
    np.testing.assert_array_equal(run("max", a, b), np.maximum(a, b))
    which = np.bool_(True) if scalar_which else (a > b)
    np.testing.assert_array_equal(run("select_n", which, a, b), np.where(which, b, a))


# ---------------------------------------------------------------------------------------------
# Shape rules and bad input.
def test_infer_result_types():
    f32, i32 = ((2, 3), "float32"), ((2, 3), "int32")
    assert infer("add", f32, f32) == [((2, 3), "float32")]
    assert infer("lt", i32, i32) == [((2, 3), "bool")]
    assert infer("is_finite", f32) == [((2, 3), "bool")]
    assert infer("convert_element_type", f32, new_dtype="uint8") == [((2, 3), "uint8")]
    assert infer("select_n", ((), "int32"), f32, f32, f32) == [((2, 3), "float32")]
    assert infer("clamp", ((), "float32"), f32, f32) == [((2, 3), "float32")]
    assert infer("iota", dtype="bfloat16", shape=(4, 5), dimension=1) == [((4, 5), "bfloat16")]
    assert infer("integer_pow", i32, y=3) == [((2, 3), "int32")]


def _dtype_class_cases():
    float_only = ["exp", "log", "tanh", "logistic", "sin", "sqrt", "rsqrt", "cbrt", "erf", "erf_inv", "lgamma",
                  "digamma", "is_finite", "floor", "ceil", "round", "atan2", "nextafter", "bessel_i0e", "bessel_i1e",
                  "igamma", "igammac", "igamma_grad_a", "polygamma", "zeta", "regularized_incomplete_beta"]
    cases = [(op, dt) for op in float_only for dt in ["int32", "bool", "uint8"]]
    cases += [(op, dt) for op in ["shift_left", "shift_right_logical", "shift_right_arithmetic", "population_count",
                                  "clz"] for dt in ["float32", "bool", "float16"]]
    cases += [(op, "float32") for op in ["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not"]]
    cases += [(op, "bool") for op in ["neg", "sign", "abs", "sub", "div", "rem", "pow", "square", "integer_pow"]]
    return cases


@pytest.mark.parametrize("op,dtype", _dtype_class_cases())
def test_disallowed_dtypes(op, dtype):
    arity = 2 if op in ("atan2", "nextafter", "shift_left", "shift_right_logical", "shift_right_arithmetic",
                        "bitwise_and", "bitwise_or", "bitwise_xor", "sub", "div", "rem", "pow", "igamma", "igammac",
                        "igamma_grad_a", "polygamma", "zeta") else 3 if op == "regularized_incomplete_beta" else 1
    attrs = {"y": 2} if op == "integer_pow" else {}
    with pytest.raises(TypeError, match=rf"\[{op}\].*{dtype}"):
        infer(op, *[((3,), dtype)] * arity, **attrs)


def test_bad_operands():
    with pytest.raises(ValueError, match=r"\[add\].*shapes.*\(3,\).*\(4,\)"):
        infer("add", ((3,), "float32"), ((4,), "float32"))
    with pytest.raises(TypeError, match=r"\[mul\].*float32.*int32"):
        infer("mul", ((3,), "float32"), ((3,), "int32"))
    with pytest.raises(ValueError, match=r"\[exp\].*expects 1 operand"):
        infer("exp", ((3,), "float32"), ((3,), "float32"))
    with pytest.raises(ValueError, match=r"\[add\].*shapes"):  # only 0-d operands broadcast
        infer("add", ((1,), "float32"), ((4,), "float32"))
    # select_n
    with pytest.raises(ValueError, match=r"\[select_n\].*at least one case"):
        infer("select_n", ((3,), "bool"))
    with pytest.raises(TypeError, match=r"\[select_n\].*`which`.*bool or int32"):
        infer("select_n", ((3,), "float32"), ((3,), "float32"), ((3,), "float32"))
    with pytest.raises(TypeError, match=r"\[select_n\].*at most 2"):
        infer("select_n", ((3,), "bool"), *[((3,), "float32")] * 3)
    with pytest.raises(ValueError, match=r"\[select_n\].*`which`"):
        infer("select_n", ((2,), "int32"), ((3,), "float32"), ((3,), "float32"))
    with pytest.raises(TypeError, match=r"\[select_n\].*dtypes"):
        infer("select_n", ((3,), "bool"), ((3,), "float32"), ((3,), "int32"))
    with pytest.raises(ValueError, match=r"\[select_n\].*shapes"):
        infer("select_n", ((), "bool"), ((3,), "float32"), ((2,), "float32"))
    # clamp
    with pytest.raises(ValueError, match=r"\[clamp\].*0-d"):
        infer("clamp", ((2,), "float32"), ((3,), "float32"), ((), "float32"))
    with pytest.raises(TypeError, match=r"\[clamp\].*dtypes"):
        infer("clamp", ((), "int32"), ((3,), "float32"), ((), "float32"))


def test_bad_attributes():
    f32, i32 = ((3,), "float32"), ((3,), "int32")
    with pytest.raises(ValueError, match=r"\[integer_pow\].*missing.*'y'"):
        infer("integer_pow", f32)
    with pytest.raises(TypeError, match=r"\[integer_pow\] attribute 'y' must be an int"):
        infer("integer_pow", f32, y=2.5)
    with pytest.raises(TypeError, match=r"\[integer_pow\].*negative exponent"):
        infer("integer_pow", i32, y=-1)
    with pytest.raises(ValueError, match=r"\[round\].*rounding_method"):
        infer("round", f32, rounding_method=2)
    with pytest.raises(ValueError, match=r"\[convert_element_type\].*missing.*new_dtype"):
        infer("convert_element_type", f32)
    with pytest.raises(ValueError, match=r"\[convert_element_type\].*not a dtype.*'complex32'"):
        infer("convert_element_type", f32, new_dtype="complex32")
    with pytest.raises(TypeError, match=r"\[convert_element_type\] attribute 'new_dtype' must be a dtype name"):
        infer("convert_element_type", f32, new_dtype=3)
    with pytest.raises(TypeError, match=r"\[iota\].*bool"):
        infer("iota", dtype="bool", shape=(3,), dimension=0)
    with pytest.raises(ValueError, match=r"\[iota\].*dimension 1 is out of range"):
        infer("iota", dtype="int32", shape=(3,), dimension=1)
    with pytest.raises(ValueError, match=r"\[iota\].*out of range"):
        infer("iota", dtype="int32", shape=(), dimension=0)
    with pytest.raises(ValueError, match=r"\[iota\].*negative"):
        infer("iota", dtype="int32", shape=(3, -1), dimension=0)
    with pytest.raises(ValueError, match=r"\[iota\].*missing.*shape"):
        infer("iota", dtype="int32", dimension=0)
    with pytest.raises(ValueError, match=r"\[iota\].*expects 0 operands"):
        infer("iota", f32, dtype="int32", shape=(3,), dimension=0)


def test_zero_d_operands_broadcast():
    x = np.arange(70000, dtype=np.float32)
    (out,) = run_op("sub", np.float32(2.5), x)
    np.testing.assert_array_equal(out, np.float32(2.5) - x)
    (out,) = run_op("lt", x, np.float32(3))
    np.testing.assert_array_equal(out, x < 3)
    (out,) = run_op("mul", np.float32(3), np.float32(2))
    assert out.shape == () and out == 6


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_fma_rounds_once(dtype):
    from fractions import Fraction

    rng = np.random.default_rng(7)
    a, b, c = (rng.normal(size=300).astype(npdt(dtype)) for _ in range(3))
    c[:50] = -(a[:50].astype(np.float64) * b[:50].astype(np.float64)).astype(npdt(dtype))  # cancellations
    got = run("fma", a, b, c)
    # The exact a * b + c, rounded once to float32 for the 16-bit types (their loops compute in
    # float32) and to the type itself otherwise.
    mid = np.float32 if dtype in ("float16", "bfloat16") else npdt(dtype).type
    exact = [Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)) for x, y, z in zip(a, b, c)]
    want = np.array([_round_fraction(e, mid) for e in exact], mid).astype(npdt(dtype))
    assert got.tobytes() == want.tobytes()
    s = run("fma", a, np.asarray(b[0]), c)  # a 0-d operand broadcasts
    assert s.shape == a.shape


def _round_fraction(q, dtype):
    """The value of `dtype` nearest to the rational q (ties to even)."""
    x = dtype(float(q))  # within an ulp or two; fix up by comparing neighbours exactly
    from fractions import Fraction

    best = x
    for cand in (np.nextafter(x, dtype(-np.inf)), x, np.nextafter(x, dtype(np.inf))):
        d, db = abs(Fraction(float(cand)) - q), abs(Fraction(float(best)) - q)
        if d < db or (d == db and int(np.asarray(cand).view(np.uint32 if dtype is np.float32 else np.uint64)) % 2 == 0):
            best = cand
    return best


def test_fma_rejects_integers():
    with pytest.raises(TypeError, match="fma"):
        run("fma", np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int32))
