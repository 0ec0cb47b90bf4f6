"""More of jax.scipy.special: comb, boxcox, boxcox1p, bernoulli and owens_t with JAX's formulas,
and wofz and sph_harm_y, whose values are complex and which xjax therefore cannot give yet."""
import operator

import numpy as np

from xjax._src import lax
from xjax._src.custom_derivatives import custom_jvp
from xjax._src.numpy.util import concrete_value, promote_args_inexact
from xjax._src.scipy.special import gammaln, zeta
import xjax.numpy as jnp


def comb(N, k, *, repetition=False):
    """N choose k as a float, exp(lgamma): 0 where k < 0, N < 0 or k > N; with repetition the
    number of multisets, comb(N + k - 1, k)."""
    N, k = promote_args_inexact("comb", N, k)
    if repetition:
        return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k)).astype(N.dtype)
    valid = (k <= N) & (N >= 0) & (k >= 0)
    n_safe, k_safe = jnp.where(valid, N, 0.0), jnp.where(valid, k, 0.0)
    result = lax.exp(gammaln(n_safe + 1) - gammaln(k_safe + 1) - gammaln(n_safe + 1 - k_safe))
    return jnp.where(valid, result, 0.0).astype(N.dtype)


def _boxcox_of_log(log_x, lmbda):
    """(exp(lmbda log_x) - 1) / lmbda, log_x where lmbda == 0; expm1 keeps small lmbda exact."""
    zero = lmbda == 0
    safe = jnp.where(zero, jnp.ones_like(lmbda), lmbda)
    return jnp.where(zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
    """The Box-Cox transform (x^lmbda - 1) / lmbda, log(x) at lmbda == 0; NaN for x < 0."""
    x, lmbda = promote_args_inexact("boxcox", x, lmbda)
    return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """The Box-Cox transform of 1 + x, accurate for small x; NaN for x < -1."""
    x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
    return _boxcox_of_log(jnp.log1p(x), lmbda)


def bernoulli(n):
    """The Bernoulli numbers B_0 .. B_n (B_1 = -1/2), the even ones from
    B_2m = (-1)^(m+1) 2 (2m)! zeta(2m) / (2 pi)^(2m). (JAX sums zeta to 50 terms, which leaves
    B_4 wrong in its sixth digit; xjax's zeta is accurate there.)"""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"Argument n of bernoulli must be a concrete integer, got {n!r}") from None
    if n < 0:
        raise ValueError("n must be a non-negative integer.")
    first = jnp.array([1.0, -0.5, 1.0 / 6.0])
    if n < 3:
        return first[:n + 1]
    even = jnp.arange(4, n + 1, 2, dtype=first.dtype)
    # (-1)^(m+1) 2 (2m)! / (2 pi)^(2m), built up from B_2's factor by the ratio of successive terms.
    factor = (1.0 / np.pi ** 2) * jnp.cumprod(-(even - 1) * even / (4 * np.pi ** 2))
    return jnp.zeros(n + 1, first.dtype).at[:3].set(first).at[4::2].set(factor * zeta(even, 1.0))


# ---- Owen's T ------------------------------------------------------------------------------------

def _owens_t_rule():
    """Nodes u^2 and weights w / (2 pi) of the 26-point Gauss-Legendre rule's positive half, for
    T(h, a) = a / (2 pi) int_0^1 exp(-h^2 (1 + a^2 u^2) / 2) / (1 + a^2 u^2) du (Patefield and
    Tandy's method T5)."""
    nodes, weights = np.polynomial.legendre.leggauss(26)
    positive = nodes > 0
    return nodes[positive] ** 2, weights[positive] / (2 * np.pi)


_OWENS_T_NODES, _OWENS_T_WEIGHTS = _owens_t_rule()


def _owens_t_quadrature(h, a):
    r = jnp.square(a)[..., None] * _OWENS_T_NODES.astype(a.dtype)
    integrand = jnp.exp(-0.5 * jnp.square(h)[..., None] * (1 + r)) / (1 + r)
    return a * jnp.sum(integrand * _OWENS_T_WEIGHTS.astype(a.dtype), axis=-1)


@custom_jvp
def _owens_t(h, a):
    h, abs_a = jnp.abs(h), jnp.abs(a)
    root_2 = np.sqrt(2).astype(h.dtype)
    # |a| > 1: T(h, a) = (Phi(h) + Phi(ah)) / 2 - Phi(h) Phi(ah) - T(ah, 1/a) (- 1/2 where h < 0).
    a_in = jnp.where(abs_a <= 1, abs_a, 1 / abs_a)
    h_in = jnp.where(abs_a <= 1, h, abs_a * h)
    result = _owens_t_quadrature(h_in, a_in)
    result = jnp.where(h_in == 0, jnp.arctan(a_in) / (2 * np.pi), result)
    result = jnp.where(a_in == 1, 0.125 * lax.erfc(-h_in / root_2) * lax.erfc(h_in / root_2), result)
    tail_h, tail_ah = lax.erfc(h / root_2), lax.erfc(abs_a * h / root_2)
    # Near zero the complements lose their digits: use erf there.
    small = 0.25 - 0.25 * lax.erf(h / root_2) * lax.erf(abs_a * h / root_2) - result
    large = 0.25 * (tail_h + tail_ah - tail_h * tail_ah) - result
    result = jnp.where(abs_a > 1, jnp.where(abs_a * h <= 0.67, small, large), result)
    result = jnp.sign(a) * result
    return jnp.where(jnp.isnan(a) | jnp.isnan(h), np.nan, result).astype(h.dtype)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    h, a = primals
    h_dot, a_dot = tangents
    d_h = -jnp.exp(-0.5 * h * h) * lax.erf(a * h / np.sqrt(2).astype(h.dtype)) / (2 * np.sqrt(2 * np.pi))
    d_a = jnp.exp(-0.5 * (a * a + 1) * h * h) / (2 * np.pi * (a * a + 1))
    return _owens_t(h, a), (d_h * h_dot + d_a * a_dot).astype(h.dtype)


def owens_t(h, a):
    """Owen's T function, (1 / 2 pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, by a 13-node
    Gauss rule on |a| <= 1 and its reflection for |a| > 1 (as JAX)."""
    h, a = promote_args_inexact("owens_t", h, a)
    if jnp.iscomplexobj(h):  # (SciPy's is real; a real-only formula must not drop imaginary parts)
        raise NotImplementedError("jax.scipy.special.owens_t: complex arguments are not supported in xjax")
    return _owens_t(*jnp.broadcast_arrays(h, a))


# ---- complex-valued functions --------------------------------------------------------------------

def _weideman_coefficients(n):
    """Weideman's (1994) rational approximation of the Faddeeva function with n terms: the scale L and
    the coefficients, highest power first, of w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)) with
    Z = (L + iz) / (L - iz), for Im z >= 0. The coefficients are the Fourier coefficients of
    exp(-t^2) (L^2 + t^2) on t = L tan(theta / 2), computed here once with NumPy."""
    m = 2 * n
    scale = np.sqrt(n / np.sqrt(2.0))
    theta = np.arange(-m + 1, m) * np.pi / m
    t = scale * np.tan(theta / 2)
    f = np.concatenate([[0.0], np.exp(-t * t) * (scale * scale + t * t)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return scale, a[1:n + 1][::-1].copy()


_WOFZ_SCALE, _WOFZ_COEFFS = _weideman_coefficients(32)


def _wofz_upper(z):
    """w(z) for Im z >= 0."""
    iz = lax.complex(lax.neg(lax.imag(z)), lax.real(z))
    denom = _WOFZ_SCALE - iz
    p = jnp.polyval(jnp.asarray(_WOFZ_COEFFS, dtype=z.dtype), (_WOFZ_SCALE + iz) / denom)
    return 2 * p / (denom * denom) + (1 / np.sqrt(np.pi)) / denom


@custom_jvp
def _wofz(z):
    upper = lax.ge(lax.imag(z), jnp.zeros_like(lax.real(z)))
    w = _wofz_upper(lax.select(upper, z, lax.neg(z)))
    return lax.select(upper, w, 2 * lax.exp(lax.neg(z * z)) - w)  # w(-z) = 2 exp(-z^2) - w(z) below


@_wofz.defjvp
def _wofz_jvp(primals, tangents):
    (z,), (dz,) = primals, tangents
    w = _wofz(z)
    return w, dz * (-2 * z * w + 2j / np.sqrt(np.pi))


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-i z), by Weideman's rational approximation (as JAX)."""
    (z,) = promote_args_inexact("wofz", z)
    return _wofz(z.astype(jnp.result_type(z.dtype, np.complex64)))


def erfcx_complex(z):
    """exp(z^2) erfc(z) of complex z: w(i z)."""
    return _wofz(lax.complex(lax.neg(lax.imag(z)), lax.real(z)))


def _normalized_legendre(n_max, x):
    """P[n, m] = N_n^m P_n^m(x) for 0 <= m, n <= n_max (0 where m > n), with the Condon-Shortley phase
    and the normalisation of orthonormal spherical harmonics, by the stable three-term recurrence in n."""
    m = np.arange(n_max + 1)
    s = jnp.sqrt(jnp.maximum(1 - x * x, 0))
    # the diagonal P[m, m] = c_m (-s)^m, c_m = sqrt(1 / 4pi) prod_{k <= m} sqrt((2k + 1) / 2k)
    c = np.sqrt(1 / (4 * np.pi)) * np.concatenate([[1.0], np.cumprod(np.sqrt((2 * m[1:] + 1) / (2 * m[1:])))])
    ms = m[:, None]
    diag = jnp.asarray(c, x.dtype)[:, None] * jnp.power(-s[None, :], jnp.asarray(ms, x.dtype))
    zeros = jnp.zeros_like(diag)
    rows = [jnp.where(ms == 0, diag, zeros)]
    for n in range(1, n_max + 1):
        inner = ms < n - 1
        safe = np.where(m < n - 1, m, 0)[:, None]
        a = np.sqrt((4.0 * n * n - 1) / (n * n - safe * safe))
        b = np.sqrt(((n - 1.0) ** 2 - safe * safe) / (4.0 * (n - 1) ** 2 - 1))
        before = rows[n - 2] if n >= 2 else zeros
        row = jnp.where(inner, a * (x[None, :] * rows[n - 1] - b * before), zeros)
        row = jnp.where(ms == n - 1, np.sqrt(2.0 * ms + 3) * x[None, :] * diag, row)
        rows.append(jnp.where(ms == n, diag, row))
    return jnp.stack(rows)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude, phi the longitude), evaluated
    elementwise over the broadcast arguments; n_max, the largest degree, must be static under jit and
    clips larger n (as in JAX)."""
    if diff_n is not None:
        raise NotImplementedError("The 'diff_n' argument to jax.scipy.special.sph_harm_y is not supported.")
    n, m = jnp.asarray(n), jnp.asarray(m)
    n_max = operator.index(int(concrete_value(
        jnp.max(n) if n_max is None else n_max, "The `n_max` argument of `jnp.scipy.special.sph_harm` must be "
        "statically specified to use `sph_harm` within JAX transformations.")))
    (theta, phi) = promote_args_inexact("sph_harm_y", theta, phi)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    shape = theta.shape
    n, m, theta, phi = (jnp.ravel(v) for v in (n, m, theta, phi))
    table = _normalized_legendre(n_max, jnp.cos(theta))
    order = jnp.abs(m)
    p = table.at[jnp.clip(n, 0, n_max), jnp.clip(order, 0, n_max), jnp.arange(n.shape[0])].get(mode="clip")
    angle = order.astype(phi.dtype) * phi
    y = lax.complex(p * jnp.cos(angle), p * jnp.sin(angle))
    negative = jnp.where(order % 2 == 1, -jnp.conjugate(y), jnp.conjugate(y))  # Y_n^-m = (-1)^m conj(Y_n^m)
    return jnp.reshape(jnp.where(m < 0, negative, y), shape)
