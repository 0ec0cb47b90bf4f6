"""Complex numbers (complex64, complex128): creation, printing and promotion as JAX; the elementwise ops
the core computes on them (arithmetic, parts, conj, abs, sign, integer_pow, exp, log, sqrt,
comparisons, conversions) against NumPy in complex128, XLA's special values recorded from JAX; sum and
prod; layout and indexing of 16-byte elements; jit, vmap and gradients with JAX's conventions; ops
that do not take complex numbers yet raise NotImplementedError."""
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def crandn(rng, shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# ---- creation, printing, promotion ----------------------------------------------------------------

def test_creation_and_repr_as_jax():
    # Recorded from JAX 0.10.2 (x64 off).
    assert repr(jnp.array([1 + 2j, -0.5j])) == "Array([ 1.+2.j , -0.-0.5j], dtype=complex64)"
    assert repr(jnp.array(3j)) == "Array(0.+3.j, dtype=complex64, weak_type=True)"
    assert jnp.zeros((2, 2), jnp.complex64).dtype == jnp.complex64
    assert jnp.array(np.array([1j], np.complex128)).dtype == jnp.complex64  # canonicalised


def test_complex128_with_x64(x64):
    a = jnp.array([1 + 2j])
    assert a.dtype == jnp.complex128
    np.testing.assert_array_equal(np.asarray(a * a), np.array([-3 + 4j]))


def test_promotion_as_jax():
    # Recorded from JAX 0.10.2 (x64 off): result_type(array of dtype a, b).
    recorded = {("int32", complex): "complex64", ("float32", complex): "complex64", ("bfloat16", complex): "complex64",
                ("bfloat16", "complex128"): "complex64", ("float64", "complex64"): "complex64",
                ("complex64", float): "complex64", ("bfloat16", float): "bfloat16"}
    for (a, b), want in recorded.items():
        other = b(1) if isinstance(b, type) else jnp.dtype(b)
        assert jnp.result_type(jnp.zeros((), a), other).name == want, (a, b)
    assert jnp.promote_types("float64", "complex64") == jnp.complex128
    x = jnp.ones(2, jnp.float32) * 1j
    assert x.dtype == jnp.complex64 and not x.weak_type
    assert (jnp.ones(2, jnp.float16) * 1j).dtype == jnp.complex64


# ---- elementwise ops against NumPy ------------------------------------------------------------------

UNARY = {"neg": (jnp.negative, np.negative), "conj": (jnp.conj, np.conj), "real": (jnp.real, np.real),
         "imag": (jnp.imag, np.imag), "abs": (jnp.abs, np.abs), "square": (jnp.square, np.square),
         "exp": (jnp.exp, np.exp), "log": (jnp.log, np.log), "sqrt": (jnp.sqrt, np.sqrt),
         "expm1": (jnp.expm1, np.expm1), "log1p": (jnp.log1p, np.log1p), "exp2": (jnp.exp2, np.exp2),
         "rsqrt": (lax.rsqrt, lambda z: 1 / np.sqrt(z)), "logistic": (lax.logistic, lambda z: 1 / (1 + np.exp(-z))),
         **{n: (getattr(jnp, n), getattr(np, n)) for n in ("sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin",
                                                            "arccos", "arctan", "arcsinh", "arccosh", "arctanh")},
         "sign": (lax.sign, lambda z: np.where(z == 0, 0, z / np.where(z == 0, 1, np.abs(z))))}
BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
          "equal": np.equal, "not_equal": np.not_equal}


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(UNARY)), st.lists(st.integers(0, 5), min_size=0, max_size=3), st.integers(0, 2**16))
def test_unary_ops_match_numpy_in_complex128(name, shape, seed):
    z = crandn(np.random.default_rng(seed), shape) * 3
    ours, ref = UNARY[name]
    with xjax.enable_x64(True):
        got = np.asarray(ours(jnp.asarray(z)))
    want = ref(z)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-300)


def test_near_zero_forms_are_accurate(x64):
    # Against the series z +- z^2/2 (exact to double precision here; NumPy's complex expm1 and log1p
    # lose half the digits at such arguments).
    z = np.array([1e-9 + 2e-9j, -3e-10 + 1e-12j])
    np.testing.assert_allclose(np.asarray(jnp.expm1(jnp.asarray(z))), z + z * z / 2, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(jnp.log1p(jnp.asarray(z))), z - z * z / 2, rtol=1e-15)


def test_pow(x64):
    rng = np.random.default_rng(8)
    a, b = crandn(rng, 20), crandn(rng, 20)
    np.testing.assert_allclose(np.asarray(jnp.power(jnp.asarray(a), jnp.asarray(b))), a ** b, rtol=1e-13)
    # Recorded from JAX 0.10.2: 0 ** b is 1 for b = 0, 0 for a positive real b, NaN otherwise.
    got = np.asarray(jnp.power(jnp.zeros(3, jnp.complex128), jnp.asarray([0j, 2 + 0j, 1j])))
    np.testing.assert_array_equal(got, [1 + 0j, 0j, complex(np.nan, np.nan)])


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((1, 4), (4, 1)), ((4,), (4,)), ((2, 3, 4), (2, 4, 5)),
                                    ((5, 4), (4,)), ((64, 70), (70, 80)), ((0, 3), (3, 2))])
def test_matmul_matches_numpy(x64, shapes):
    rng = np.random.default_rng(len(shapes[0]) * 10 + shapes[0][0])
    a, b = crandn(rng, shapes[0]), crandn(rng, shapes[1])
    np.testing.assert_allclose(np.asarray(jnp.asarray(a) @ jnp.asarray(b)), a @ b, rtol=1e-13, atol=1e-13)
    a32, b32 = a.astype(np.complex64), b.astype(np.complex64)
    got = np.asarray(jnp.asarray(a32) @ jnp.asarray(b32))
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, a32.astype(np.complex128) @ b32, rtol=1e-5, atol=1e-5)


def test_contractions_through_einsum_and_grad(x64):
    rng = np.random.default_rng(9)
    a, b = crandn(rng, (3, 4)), crandn(rng, (5, 4))
    np.testing.assert_allclose(np.asarray(jnp.einsum("ik,jk->ij", jnp.asarray(a), jnp.asarray(b))),
                               np.einsum("ik,jk->ij", a, b), rtol=1e-13)
    f = lambda a: jnp.sum(jnp.abs(a @ jnp.asarray(b.T)) ** 2)
    np.testing.assert_allclose(np.asarray(xjax.grad(f)(jnp.asarray(a))),
                               _real_grad_by_differences(lambda v: float(f(jnp.asarray(v))), a), rtol=1e-7)


def test_jnp_predicates_and_nan_aware_reductions():
    # As JAX 0.10.2 gives them.
    z = jnp.array([1 + 1j, complex(np.inf, 0), complex(np.nan, 1), 2.5 - 3.5j])
    np.testing.assert_array_equal(np.asarray(jnp.isfinite(z)), [True, False, False, True])
    np.testing.assert_array_equal(np.asarray(jnp.isinf(z)), [False, True, False, False])
    np.testing.assert_array_equal(np.asarray(jnp.isnan(z)), [False, False, True, False])
    np.testing.assert_array_equal(np.asarray(jnp.round(z)), [1 + 1j, complex(np.inf, 0), complex(np.nan, 1), 2 - 4j])
    np.testing.assert_array_equal(np.asarray(jnp.isclose(z, z + 1e-9)), [True, True, False, True])
    w = jnp.array([1 + 2j, 3 - 1j, complex(np.nan, 0), 2j])
    assert complex(jnp.nansum(w)) == 4 + 3j
    np.testing.assert_allclose(complex(jnp.nanmean(w)), (4 + 3j) / 3, rtol=1e-6)
    v = w[jnp.array([0, 1, 3])]
    assert jnp.var(v).dtype == jnp.float32
    np.testing.assert_allclose(float(jnp.var(v)), np.var(np.asarray(v)), rtol=1e-6)
    np.testing.assert_allclose(float(jnp.std(v)), np.std(np.asarray(v)), rtol=1e-6)


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(BINARY)), st.integers(0, 40), st.integers(0, 2**16))
def test_binary_ops_match_numpy(name, n, seed):
    rng = np.random.default_rng(seed)
    a, b = crandn(rng, n), crandn(rng, n)
    b[::3] = a[::3]  # some equal pairs for the comparisons
    with xjax.enable_x64(True):
        got = np.asarray(getattr(jnp, name)(jnp.asarray(a), jnp.asarray(b)))
    np.testing.assert_allclose(got, BINARY[name](a, b), rtol=1e-14)
    got32 = np.asarray(getattr(jnp, name)(jnp.asarray(a.astype(np.complex64)), jnp.asarray(b.astype(np.complex64))))
    want32 = BINARY[name](a.astype(np.complex64).astype(np.complex128), b.astype(np.complex64).astype(np.complex128))
    np.testing.assert_allclose(got32, want32, rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("y", [-6, -3, -1, 0, 1, 2, 3, 5, 9])
def test_integer_pow(x64, y):
    z = crandn(np.random.default_rng(y + 10), 7)
    np.testing.assert_allclose(np.asarray(lax.integer_pow(jnp.asarray(z), y)), z ** y, rtol=1e-13)


def test_complex_from_parts_and_broadcasting():
    re, im = np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(-2)
    got = lax.complex(re, im)
    assert got.dtype == jnp.complex64
    np.testing.assert_array_equal(np.asarray(got), re - 2j)
    with pytest.raises(TypeError, match="complex"):
        lax.complex(jnp.ones(2, jnp.int32), jnp.ones(2, jnp.int32))
    with pytest.raises(TypeError, match="real does not accept dtype float32"):
        lax.real(jnp.ones(2))


def test_special_values_as_xla(x64):
    # Recorded from JAX 0.10.2 with x64 (XLA's formulas: exp of a real argument stays real, sqrt
    # counts -0 as +0, a zero divisor divides part by part).
    inf, nan = np.inf, np.nan
    z = jnp.array([complex(inf, 0), complex(-inf, 0), 0j, complex(-1, 0), complex(-1, -0.0), complex(inf, 1),
                   complex(nan, 0)])
    exp = [complex(inf, 0), 0j, 1 + 0j, complex(0.36787944117144233, 0), complex(0.36787944117144233, 0),
           complex(inf, inf), complex(nan, 0)]
    log = [complex(inf, 0), complex(inf, np.pi), complex(-inf, 0), complex(0, np.pi), complex(0, -np.pi),
           complex(inf, 0), complex(nan, nan)]
    sqrt = [complex(inf, 0), complex(0, inf), 0j, 1j, 1j, complex(inf, 0), complex(nan, nan)]
    sign = [complex(nan, 0), complex(nan, 0), 0j, -1 + 0j, complex(-1, -0.0), complex(nan, 0), complex(nan, nan)]
    for f, want in ((jnp.exp, exp), (jnp.log, log), (jnp.sqrt, sqrt), (lax.sign, sign)):
        np.testing.assert_allclose(np.asarray(f(z)), np.array(want), rtol=1e-15)
    q = jnp.array([1 + 1j, 1 + 1j, 0j, complex(inf, 1)]) / jnp.array([0j, complex(0, -0.0), 0j, 1 + 1j])
    np.testing.assert_array_equal(np.asarray(q), np.array([complex(inf, inf), complex(inf, inf), complex(nan, nan),
                                                           complex(inf, -inf)]))
    np.testing.assert_array_equal(np.asarray(jnp.array([complex(inf, 0)]) * jnp.array([1 + 0j])),
                                  np.array([complex(inf, nan)]))


def parts(z):
    """Real and imaginary parts as float64, signs of zeros kept (assert_array_equal compares them)."""
    z = np.asarray(z)
    return np.stack([z.real.astype(np.float64), z.imag.astype(np.float64)])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_infinite_and_zero_divisors_as_xla(x64, dtype):
    # Recorded from JAX 0.10.2: a finite number over an infinite one is a signed zero (it used to be
    # NaN, which made logistic of a large negative argument NaN); over a signed zero, each part
    # times an infinity of the zero's sign.
    inf, nan = np.inf, np.nan
    num = [1 + 0j, 1 + 2j, 1 + 0j, 1 + 0j, 1j, -2.5j, 1 + 0j, complex(inf, inf), complex(inf, 0)]
    den = [complex(inf, -inf), complex(inf, -inf), complex(-inf, inf), complex(inf, nan), complex(-0.0, 0),
           complex(-0.0, 0), 0j, 3 + 4j, 3 + 4j]
    want = [(0.0, 0.0), (-0.0, 0.0), (-0.0, -0.0), (0.0, 0.0), (nan, -inf), (nan, inf), (inf, nan), (inf, nan),
            (inf, -inf)]
    a, b = jnp.asarray(np.array(num, dtype)), jnp.asarray(np.array(den, dtype))
    for got in (a / b, xjax.jit(lambda a, b: a / b)(a, b)):
        np.testing.assert_array_equal(parts(got), np.array(want).T)
    z = jnp.asarray(np.array([complex(-1000, -11.881455), complex(1000, -77.400642), complex(-1e30, 5),
                              complex(800, 3)], dtype))
    want = [(0.0, 0.0), (1.0, 0.0), (0.0, -0.0), (1.0, 0.0)]
    for got in (lax.logistic(z), xjax.jit(lambda z: lax.logistic(z + 0))(z)):
        np.testing.assert_array_equal(parts(got), np.array(want).T)

def test_conversions():
    z = jnp.array([1.5 + 2j, -0.0 + 0j, 0 - 3j])
    with pytest.warns(np.exceptions.ComplexWarning):
        np.testing.assert_array_equal(np.asarray(z.astype(jnp.float32)), [1.5, -0.0, 0])
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(z, jnp.int32)), [1, 0, 0])
    np.testing.assert_array_equal(np.asarray(lax.convert_element_type(z, jnp.bool_)), [True, False, True])
    np.testing.assert_array_equal(np.asarray(jnp.arange(3).astype(jnp.complex64)), [0, 1, 2])
    np.testing.assert_array_equal(np.asarray(jnp.ones(2, jnp.bfloat16).astype(jnp.complex64)), [1, 1])
    with xjax.enable_x64(True):
        w = jnp.array([1 / 3 + 1j / 7])
        np.testing.assert_array_equal(np.asarray(w.astype(jnp.complex64)), np.array([1 / 3 + 1j / 7], np.complex64))


def test_predicates_and_angle():
    z = jnp.array([1 + 0j, 1j, -1 + 0j])
    np.testing.assert_array_equal(np.asarray(jnp.iscomplex(z)), [False, True, False])
    np.testing.assert_array_equal(np.asarray(jnp.isreal(z)), [True, False, True])
    assert jnp.iscomplexobj(z) and not jnp.iscomplexobj(jnp.ones(2)) and jnp.isrealobj(jnp.ones(2))
    np.testing.assert_allclose(np.asarray(jnp.angle(z)), [0, np.pi / 2, np.pi], rtol=1e-7)
    np.testing.assert_allclose(np.asarray(jnp.angle(z, deg=True)), [0, 90, 180], rtol=1e-6)


# ---- reductions, layout and indexing ---------------------------------------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1])
def test_sum_and_prod(x64, axis):
    z = crandn(np.random.default_rng(3), (13, 7)) * 0.5
    np.testing.assert_allclose(np.asarray(jnp.sum(jnp.asarray(z), axis=axis)), np.sum(z, axis=axis), rtol=1e-13)
    np.testing.assert_allclose(np.asarray(jnp.prod(jnp.asarray(z), axis=axis)), np.prod(z, axis=axis), rtol=1e-12)
    z32 = z.astype(np.complex64)
    np.testing.assert_allclose(np.asarray(jnp.sum(jnp.asarray(z32), axis=axis)),
                               np.sum(z32.astype(np.complex128), axis=axis), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_layout_and_indexing_move_whole_elements(dtype):
    with xjax.enable_x64(True):
        z = crandn(np.random.default_rng(4), (5, 6), dtype)
        a = jnp.asarray(z)
        checks = [(a.T, z.T), (a[1:4, ::2], z[1:4, ::2]), (a[::-1], z[::-1]), (a.reshape(3, 10), z.reshape(3, 10)),
                  (jnp.concatenate([a, a[:2]]), np.concatenate([z, z[:2]])), (a[jnp.array([4, 0, 2])], z[[4, 0, 2]]),
                  (jnp.pad(a, 1), np.pad(z, 1)), (jnp.where(jnp.abs(a) > 1, a, 0), np.where(np.abs(z) > 1, z, 0)),
                  (lax.dynamic_slice(a, (1, 2), (2, 3)), z[1:3, 2:5]), (jnp.broadcast_to(a[0], (3, 6)), np.broadcast_to(z[0], (3, 6))),
                  (a.at[2, 3].set(7j), np.where(np.arange(30).reshape(5, 6) == 15, 7j, z).astype(dtype))]
        for got, want in checks:
            assert got.dtype == dtype
            np.testing.assert_array_equal(np.asarray(got), want)


# ---- transformations -------------------------------------------------------------------------------

def test_jit_and_vmap():
    z = crandn(np.random.default_rng(5), (4, 3)).astype(np.complex64)
    f = lambda z: jnp.sum(jnp.abs(jnp.exp(z) * z + 1j), axis=-1)
    np.testing.assert_allclose(np.asarray(xjax.jit(f)(z)), np.sum(np.abs(np.exp(z) * z + 1j), -1), rtol=2e-6)
    np.testing.assert_allclose(np.asarray(xjax.vmap(f)(z)), np.asarray(f(z)), rtol=2e-6)
    np.testing.assert_array_equal(np.asarray(xjax.vmap(lambda x: lax.complex(x, 2 * x))(jnp.arange(3.0))),
                                  np.arange(3.0) * (1 + 2j))


def _real_grad_by_differences(f, z, eps=1e-6):
    """JAX's gradient of a real function of complex z: df/dx - i df/dy, by central differences."""
    out = np.zeros_like(z)
    for k in range(z.size):
        e = np.zeros_like(z)
        e.flat[k] = eps
        dx = (f(z + e) - f(z - e)) / (2 * eps)
        dy = (f(z + 1j * e) - f(z - 1j * e)) / (2 * eps)
        out.flat[k] = dx - 1j * dy
    return out


FUNCTIONS = {
    "abs2": lambda z: jnp.sum(jnp.abs(z) ** 2),
    "real_exp": lambda z: jnp.sum(jnp.real(z * jnp.exp(z))),
    "imag_sqrt": lambda z: jnp.sum(jnp.imag(jnp.sqrt(z) / z)),
    "abs_log": lambda z: jnp.sum(jnp.abs(jnp.log(z))),
    "angle": lambda z: jnp.sum(jnp.angle(z)),
    "conj_mix": lambda z: jnp.sum(jnp.real(jnp.conj(z) * lax.integer_pow(z, 3)) + jnp.imag(lax.complex(jnp.real(z), 2.0))),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_of_real_functions_of_complex_inputs(x64, name):
    f = FUNCTIONS[name]
    z = np.array([1 + 2j, 3.5 - 1j, -0.7 + 0.3j])
    got = np.asarray(xjax.grad(f)(jnp.asarray(z)))
    want = _real_grad_by_differences(lambda v: float(f(jnp.asarray(v))), z)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


def test_recorded_gradients_match_jax():
    # Recorded from JAX 0.10.2 (x64 off).
    z = jnp.array([1 + 2j, 3.5 - 1j])
    np.testing.assert_allclose(np.asarray(xjax.grad(FUNCTIONS["abs2"])(z)), [2 - 4j, 7 + 2j], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(xjax.grad(lambda z: jnp.sum(z * z * z), holomorphic=True)(z)),
                               [-9 + 12j, 33.75 - 21j], rtol=1e-6)


def test_holomorphic_jacobians(x64):
    z = np.array([1 + 2j, 3.5 - 1j])
    f = lambda z: z * jnp.exp(z)
    want = np.diag((1 + z) * np.exp(z))
    np.testing.assert_allclose(np.asarray(xjax.jacfwd(f, holomorphic=True)(jnp.asarray(z))), want, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(xjax.jacrev(f, holomorphic=True)(jnp.asarray(z))), want, rtol=1e-13)


def test_jvp_and_vjp_are_linear_in_complex_tangents(x64):
    z, t = jnp.asarray(np.array([1 + 2j, -2 + 0.5j])), jnp.asarray(np.array([0.3 - 1j, 2j]))
    f = lambda z: jnp.exp(z) * jnp.conj(z)
    _, jt = xjax.jvp(f, (z,), (t,))
    eps = 1e-6
    fd = (np.asarray(f(z + eps * t)) - np.asarray(f(z - eps * t))) / (2 * eps)
    np.testing.assert_allclose(np.asarray(jt), fd, rtol=1e-7)
    _, vjp = xjax.vjp(f, z)
    ct = jnp.asarray(np.array([1 - 1j, 0.5 + 2j]))
    # <ct, J t> = <J^T ct, t> for the real bilinear pairing re(sum(a * b))
    lhs = np.real(np.sum(np.asarray(ct) * np.asarray(jt)))
    rhs = np.real(np.sum(np.asarray(vjp(ct)[0]) * np.asarray(t)))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12)


def test_grad_dtype_errors_as_jax():
    z = jnp.array([1 + 2j])
    with pytest.raises(TypeError, match="grad requires real-valued outputs .* pass holomorphic=True"):
        xjax.grad(lambda z: jnp.sum(z))(z)
    with pytest.raises(TypeError, match="holomorphic=True requires inputs with complex dtype, but got float32"):
        xjax.grad(lambda x: jnp.sum(x), holomorphic=True)(jnp.ones(2))
    with pytest.raises(TypeError, match="jacfwd requires real-valued inputs"):
        xjax.jacfwd(lambda z: z)(z)


# ---- what does not take complex numbers yet -----------------------------------------------------------

@pytest.mark.parametrize("f", [lambda z: lax.cummax(z, 0), lambda z: lax.cummin(z, 0)])
def test_unsupported_ops_raise_not_implemented(f):
    with pytest.raises(NotImplementedError, match="complex64"):
        f(jnp.array([[1 + 2j, 3j], [1j, 2.0]]))


def test_lexicographic_order_as_jax():
    # Recorded from JAX 0.10.2: lax.max/min pick b unless a is larger/smaller (NaN compares false),
    # jnp comparisons order by the real parts, then the imaginary parts; max/min reductions give
    # NaN + NaN i where an element has a NaN part.
    nan = np.nan
    a = jnp.array([1 + 2j, 1 + 1j, 2 - 1j, complex(nan, 0), complex(1, nan)])
    b = jnp.array([1 + 1j, 1 + 1j, 1 + 5j, 1 + 0j, 1 + 0j])
    np.testing.assert_array_equal(np.asarray(lax.max(a, b)), [1 + 2j, 1 + 1j, 2 - 1j, 1 + 0j, 1 + 0j])
    np.testing.assert_array_equal(np.asarray(lax.min(a, b)), [1 + 1j, 1 + 1j, 1 + 5j, 1 + 0j, 1 + 0j])
    np.testing.assert_array_equal(np.asarray(jnp.greater(a, b)), [True, False, True, False, False])
    np.testing.assert_array_equal(np.asarray(a <= b), [False, True, False, False, False])
    np.testing.assert_array_equal(np.asarray(a > 1), [True, True, True, False, False])
    assert complex(jnp.max(a[:3])) == 2 - 1j and complex(jnp.min(a[:3])) == 1 + 1j
    assert np.isnan(complex(jnp.max(a)).real) and np.isnan(complex(jnp.min(a)).imag)
    np.testing.assert_array_equal(np.asarray(xjax.jit(lambda z: jnp.max(z, axis=1))(a.reshape(1, 5)[:, :3])),
                                  [2 - 1j])


def test_ops_jax_does_not_define_on_complex_raise_type_errors():
    z = jnp.array([1 + 2j])
    with pytest.raises(TypeError, match="floor does not accept dtype complex64"):
        jnp.floor(z)
    with pytest.raises(ValueError, match="isposinf is not well defined for complex input"):
        jnp.isposinf(z)


def test_export_round_trip():
    from xjax import export
    f = xjax.jit(lambda z: jnp.exp(z) * jnp.conj(z) + 1j)
    z = jnp.array([1 + 2j, 3 - 1j])
    loaded = export.deserialize(export.export(f)(z).serialize())
    np.testing.assert_array_equal(np.asarray(loaded.call(z)), np.asarray(f(z)))


# ---- no silent wrong answers: each jnp function either refuses complex input or agrees with NumPy ----

UNARY_SWEEP = ["abs", "negative", "conj", "real", "imag", "angle", "exp", "exp2", "expm1", "log", "log2", "log10",
               "log1p", "sqrt", "square", "sin", "cos", "tan", "sinh", "cosh", "tanh", "arcsin", "arccos", "arctan",
               "arcsinh", "arccosh", "arctanh", "sign", "reciprocal", "isfinite", "isinf", "isnan", "iscomplex",
               "isreal", "sum", "prod", "mean", "var", "std", "nansum", "nanprod", "nanmean", "nanvar", "nanstd",
               "transpose", "trace", "diag", "tril", "triu", "cumsum", "cumprod", "sort", "argsort", "max", "min",
               "argmax", "argmin", "ptp", "median", "average", "round", "fix", "trunc", "rint", "floor", "ceil", "sinc",
               "nan_to_num", "count_nonzero", "unique", "all", "any", "logical_not", "cbrt", "signbit", "fabs",
               "linalg.norm", "linalg.matrix_norm", "linalg.vector_norm", "linalg.svdvals", "linalg.det",
               "linalg.slogdet", "linalg.inv", "linalg.pinv", "linalg.matrix_rank", "cov", "corrcoef", "diff",
               "gradient", "roll", "rot90"]
BINARY_SWEEP = ["add", "subtract", "multiply", "divide", "power", "float_power", "equal", "not_equal", "less",
                "maximum", "minimum", "fmax", "dot", "vdot", "inner", "outer", "matmul", "kron", "cross", "tensordot",
                "isclose", "allclose", "array_equal", "logaddexp", "arctan2", "hypot", "copysign", "floor_divide",
                "mod", "heaviside", "polymul", "polyadd", "convolve", "correlate", "vecdot", "logical_and"]


def _lookup(module, name):
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _agrees_or_refuses(ours, theirs, *args):
    try:
        want = theirs(*args)
    except Exception:
        pytest.skip("NumPy refuses these operands too")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            got = ours(*[jnp.asarray(a) for a in args])
    except (NotImplementedError, TypeError, ValueError):
        return  # a clear refusal
    if isinstance(want, tuple):
        got, want = got[0], want[0]
    got = np.asarray(got)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("name", UNARY_SWEEP)
def test_jnp_unary_functions_agree_or_refuse(x64, name):
    rng = np.random.default_rng(11)
    x = crandn(rng, (3, 3) if name.startswith("linalg") or name in ("trace", "diag", "tril", "triu") else (3, 4))
    _agrees_or_refuses(_lookup(jnp, name), _lookup(np, name), x)


@pytest.mark.parametrize("name", BINARY_SWEEP)
def test_jnp_binary_functions_agree_or_refuse(x64, name):
    rng = np.random.default_rng(12)
    a, b = crandn(rng, (3, 4)), crandn(rng, (3, 4))
    if name in ("convolve", "correlate", "polymul", "polyadd", "vdot", "inner", "kron"):
        a, b = a[0], b[0]
    elif name == "cross":
        a, b = a[0, :3], b[0, :3]
    elif name in ("dot", "matmul", "tensordot"):
        b = b.T
    _agrees_or_refuses(_lookup(jnp, name), _lookup(np, name), a, b)


def test_log_spaces_logaddexp_and_comparisons_of_complex_as_jax(x64):
    a = np.array([1 + 2j, -3 + 0.5j, 0.25 - 4j])
    b = np.array([2 - 1j, -3 + 2.5j, 1 + 1j])
    # recorded from JAX 0.10.2 (x64)
    np.testing.assert_allclose(jnp.logaddexp(a, b), [1.55045464 - 0.91852774j, -2.92247929 + 1.5j,
                                                     1.19976215 + 1.38002488j], rtol=1e-8)
    np.testing.assert_allclose(jnp.logaddexp2(a, b), [1.80488276 - 0.24469897j, -2.37849637 + 1.5j,
                                                      -0.07192389 + 1.59073499j], rtol=1e-8)
    np.testing.assert_allclose(jnp.geomspace(1 + 1j, 10 + 3j, 4), np.geomspace(1 + 1j, 10 + 3j, 4), rtol=1e-13)
    np.testing.assert_allclose(jnp.linspace(1 + 1j, 2 - 3j, 5), np.linspace(1 + 1j, 2 - 3j, 5), rtol=1e-15)
    # NumPy operands are complex too: lexicographic, not a refusal
    np.testing.assert_array_equal(jnp.greater(a, np.array([1 + 1j, -3 + 0.5j, 0.3 - 9j])), [True, False, False])


def test_atan2_of_complex_as_jax(x64):
    """XLA's -i log((x + i y) / sqrt(x^2 + y^2)) (recorded from JAX 0.10.2), its NaNs and signed zeros."""
    y = np.array([1 + 2j, -0.5 + 0.25j, 3 - 1j, 0.1j])
    x = np.array([0.5 - 1j, -2 + 0.5j, 1 + 1j, -1 + 0j])
    want = [1.9081668 + 0.37908687j, -2.8820196 - 0.05501547j, 1.33897252 - 0.40235948j, 3.14159265 - 0.10033535j]
    np.testing.assert_allclose(jnp.arctan2(y, x), want, rtol=1e-8)
    np.testing.assert_allclose(lax.atan2(y, x), np.asarray(jnp.arctan2(y, x)), rtol=0)
    specials = lax.atan2(np.array([0j, 1 + 0j, -1 + 0j, np.inf + 0j]), np.array([0j, 0j, 0j, 1 + 0j]))
    got = np.asarray(specials)
    assert np.isnan(got[0]) and np.isnan(got[3])
    np.testing.assert_array_equal(got[1:3].real, [np.pi / 2, -np.pi / 2])
    np.testing.assert_array_equal(np.signbit(got[1:3].imag), [False, True])
    assert jnp.arctan2(y.astype(np.complex64), 2.0).dtype == np.complex64
    check_grads(lax.atan2, (y[:3], x[:3]), order=1, modes=["fwd", "rev"])  # (off the branch cuts)
