"""jax.scipy.linalg.expm and expm_frechet: the matrix exponential by Pade approximation with scaling and
squaring (Higham 2005, "The scaling and squaring method for the matrix exponential revisited"), as
JAX computes it; derivatives are those of the algorithm (its control flow is lax.switch and lax.scan)."""
import numpy as np

from xjax._src import dtypes
from xjax._src.autodiff import jvp
from xjax._src.jit import jit
from xjax._src.lax import control_flow, linalg as lax_linalg
from xjax._src.numpy import creation, linalg as jnp_linalg, sorting, ufuncs, util
from xjax._src.numpy.linalg_solve import solve
from xjax._src.numpy.vectorize import vectorize

# Pade coefficients b_0..b_m of the [m/m] approximants, and the 1-norm bounds (theta_m) up to which
# each is accurate to the dtype's unit roundoff (Higham's table 2.3).
_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}
_THETA = {
    np.dtype(np.float64): ((3, 5, 7, 9, 13), (1.495585217958292e-002, 2.539398330063230e-001,
                                              9.504178996162932e-001, 2.097847961257068e+000), 5.371920351148152),
    np.dtype(np.float32): ((3, 5, 7), (4.258730016922831e-001, 1.880152677804762e+000), 3.925724783138660),
}


def _pade(m):
    """(U, V) of the degree-m approximant: U the odd part, V the even part, exp(A) ~ (V - U)^-1 (V + U)."""
    b = _PADE[m]

    def uv(a):
        n = a.aval.shape[-1]
        eye = creation.eye(n, dtype=a.aval.dtype)
        a2 = a @ a
        if m == 13:  # Higham's evaluation scheme with A^2, A^4, A^6 only
            a4 = a2 @ a2
            a6 = a4 @ a2
            u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
            v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye
            return u, v
        powers = [eye, a2]  # A^0, A^2, A^4, ...
        for _ in range(2, m // 2 + 1):
            powers.append(powers[-1] @ a2)
        # Highest power first, as JAX sums them.
        odd = sum(b[2 * i + 1] * p for i, p in reversed(list(enumerate(powers))))
        even = sum(b[2 * i] * p for i, p in reversed(list(enumerate(powers))))
        return a @ odd, even

    return uv


def _scaled_pade(a):
    """(P, Q, s): the numerator and denominator of the Pade approximant of A / 2^s, s chosen from A's 1-norm."""
    dt = a.aval.dtype
    rdt = np.dtype(dtypes.complex_part_dtype(dt)) if dtypes.is_complex(dt) else dt  # the norm's, as JAX's bounds
    if rdt not in _THETA:
        raise TypeError(f"A.dtype={dt} is not supported.")
    degrees, bounds, max_norm = _THETA[rdt]
    norm = jnp_linalg.norm(a, 1)
    squarings = ufuncs.maximum(0, ufuncs.floor(ufuncs.log2(norm / max_norm)))
    a = a / ufuncs.power(2.0, squarings).astype(dt)
    index = sorting.digitize(norm, util.asarray(np.array(bounds, rdt)))
    u, v = control_flow.switch(index, [_pade(m) for m in degrees], a)
    return u + v, v - u, squarings


def _expm_2d(a, upper_triangular, max_squarings):
    p, q, squarings = _scaled_pade(a)

    def compute(operands):
        p, q = operands
        r = lax_linalg.triangular_solve(q, p, left_side=True) if upper_triangular else solve(q, p)

        def square(r, i):
            return control_flow.cond(i < squarings, lambda x: x @ x, lambda x: x, r), None

        return control_flow.scan(square, r, creation.arange(max_squarings, dtype=squarings.aval.dtype))[0]

    # More squarings than allowed: JAX's NaNs rather than an inaccurate result.
    return control_flow.cond(squarings > max_squarings, lambda ops: creation.full_like(ops[0], np.nan),
                             compute, (p, q))


@jit(static_argnames=("upper_triangular", "max_squarings"))
def _expm(a, upper_triangular, max_squarings):
    if a.aval.ndim == 2:
        return _expm_2d(a, upper_triangular, max_squarings)
    return vectorize(lambda x: _expm_2d(x, upper_triangular, max_squarings), signature="(n,n)->(n,n)")(a)


def expm(A, *, upper_triangular=False, max_squarings=16):  # noqa: N803 - JAX's name
    """The matrix exponential of each square matrix in A; NaN where more than max_squarings
    squarings would be needed. upper_triangular=True solves the Pade system as triangular."""
    util.check_arraylike("expm", A)
    a, = util.promote_dtypes_inexact(util.asarray(A))
    shape = a.aval.shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={shape}.")
    return _expm(a, bool(upper_triangular), int(max_squarings))


def expm_frechet(A, E, *, method=None, compute_expm=True):  # noqa: N803 - JAX's names
    """(expm(A), the Frechet derivative of expm at A in the direction E), or the derivative alone."""
    del method
    a, e = util.asarray(A), util.asarray(E)
    sa, se = a.aval.shape, e.aval.shape
    if len(sa) < 2 or sa[-2] != sa[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={sa}")
    if len(se) < 2 or se[-2] != se[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={se}")
    if sa != se:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={sa} E.shape={se}")
    value, derivative = jvp(expm, (a,), (e,))
    return (value, derivative) if compute_expm else derivative
