"""log Gamma of complex arguments on SciPy's principal branch (one cut along the negative real axis),
by the Lanczos approximation after shifting the argument into Re z >= 1/2."""
import numpy as np

from xjax._src import lax
import xjax.numpy as jnp

# Lanczos (1964) with g = 7 and nine terms: the published coefficients (as in GSL and Numerical Recipes),
# good to about 1e-15 relative for Re z >= 1/2.
_G = 7.0
_COEFFS = np.array([0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
                    -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6,
                    1.5056327351493116e-7])


def _lanczos(z):
    """log Gamma(z) for Re z >= 1/2."""
    w = z - 1
    series = _COEFFS[0] + sum(c / (w + k) for k, c in enumerate(_COEFFS[1:], start=1))
    t = w + (_G + 0.5)
    return 0.5 * np.log(2 * np.pi) + (w + 0.5) * jnp.log(t) - t + jnp.log(series)


def complex_loggamma(z):
    """log Gamma(z) = log Gamma(z + n) - sum_{k < n} log(z + k) with n the steps that bring Re z to at
    least 1/2 (so the imaginary part is continuous off the negative real axis); NaN at the poles."""
    bad = jnp.isnan(z) | ((jnp.imag(z) == 0) & (jnp.real(z) <= 0) & (jnp.real(z) == jnp.floor(jnp.real(z))))
    z = jnp.where(bad, jnp.ones_like(z), z)  # (keeps NaNs out of the other branch's gradients)
    steps = jnp.maximum(jnp.ceil(0.5 - jnp.real(z)), 0)

    def more(state):
        k, _ = state
        return jnp.any(k < steps)

    def step(state):
        k, logs = state
        active = k < steps
        shifted = jnp.where(active, z + k.astype(z.dtype), jnp.ones_like(z))
        return k + 1, logs + jnp.where(active, jnp.log(shifted), jnp.zeros_like(logs))

    _, logs = lax.while_loop(more, step, (jnp.zeros_like(steps), jnp.zeros_like(z)))
    value = _lanczos(z + steps.astype(z.dtype)) - logs
    return jnp.where(bad, jnp.full_like(z, complex(np.nan, np.nan)), value)
