"""jax.scipy.optimize.minimize with BFGS (Nocedal & Wright, Numerical Optimization, algorithm 6.1),
its steps chosen by a line search satisfying the strong Wolfe conditions (algorithms 3.5 and 3.6:
bracketing by doubling, then zooming in by safeguarded cubic or quadratic interpolation or
bisection). Both loops are while_loops, so minimize runs under jit and vmap as JAX's does, and it
follows JAX's choices step by step (start step, thresholds, what a failed search leaves).
"""
from typing import NamedTuple

import numpy as np

import xjax.numpy as jnp
from xjax._src import dtypes
from xjax._src.autodiff import value_and_grad
from xjax._src.lax.conditionals import cond
from xjax._src.lax.control_flow import while_loop


class OptimizeResults(NamedTuple):
    """The result of minimize: the point found, whether and how the search ended, the objective, its
    gradient and the inverse Hessian estimate there, and the counts of evaluations and iterations."""
    x: object
    success: object
    status: object
    fun: object
    jac: object
    hess_inv: object
    nfev: object
    njev: object
    nit: object


def _dot(a, b):
    return jnp.dot(a, b, precision="highest")


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    ra = fb - fa - fpa * db
    rc = fc - fa - fpa * dc
    big_a = (dc ** 2 * ra - db ** 2 * rc) / denom
    big_b = (-dc ** 3 * ra + db ** 3 * rc) / denom
    return a + (-big_b + jnp.sqrt(big_b * big_b - 3.0 * big_a * fpa)) / (3.0 * big_a)


def _quad_min(a, fa, fpa, b, fb):
    """The minimiser of the parabola through (a, fa) with slope fpa at a and (b, fb)."""
    db = b - a
    curvature = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2.0 * curvature)


def _pick(cond, new, old):
    return {k: jnp.where(cond, new[k], old[k]) for k in new}


def line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1=1e-4, c2=0.9, maxiter=20):
    """A step a along pk with f(xk + a pk) <= f(xk) + c1 a f'(0) and |f'(a)| <= c2 |f'(0)|.
    Returns (a, f, gradient at xk + a pk, failed, status, evaluations)."""
    def phi_dphi_g(t):
        phi, g = value_and_grad(f)(xk + jnp.asarray(t, pk.dtype) * pk)
        return phi, _dot(g, pk), g

    phi0, dphi0 = old_fval, _dot(gfk, pk)
    start = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
    start = jnp.where(start > 1, 1.0, start)
    sufficient = lambda a, phi: ~(phi > phi0 + c1 * a * dphi0)  # noqa: E731 - Wolfe's first condition
    curvature = lambda dphi: jnp.abs(dphi) <= -c2 * dphi0  # noqa: E731 - and its second (strong form)
    threshold = 1e-5 if dtypes.finfo(jnp.result_type(pk)).bits < 64 else 1e-10
    f32 = lambda v: jnp.asarray(v, jnp.result_type(phi0))  # noqa: E731
    state = dict(zooming=jnp.array(False), done=jnp.array(False), failed=jnp.array(False), i=jnp.int32(1),
                 j=jnp.int32(0), nfev=jnp.int32(0), a_prev=f32(0.0), phi_prev=phi0, dphi_prev=dphi0,
                 a_lo=f32(0.0), phi_lo=phi0, dphi_lo=dphi0, a_hi=f32(0.0), phi_hi=phi0, dphi_hi=dphi0,
                 a_rec=f32(0.0), phi_rec=phi0, a_star=f32(0.0), phi_star=phi0, g_star=gfk)

    def zoom_step(s):
        """One interpolation step inside the bracket [a_lo, a_hi] (algorithm 3.6)."""
        width = s["a_hi"] - s["a_lo"]
        lo, hi = jnp.minimum(s["a_hi"], s["a_lo"]), jnp.maximum(s["a_hi"], s["a_lo"])
        failed = s["failed"] | (width <= threshold)
        cubic = _cubic_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"], s["a_rec"], s["phi_rec"])
        use_cubic = (s["j"] > 0) & (cubic > lo + 0.2 * width) & (cubic < hi - 0.2 * width)
        quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = ~use_cubic & (quad > lo + 0.1 * width) & (quad < hi - 0.1 * width)
        a = jnp.where(use_cubic, cubic, jnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2.0))
        phi, dphi, g = phi_dphi_g(a)
        to_hi = ~sufficient(a, phi) | (phi >= s["phi_lo"])
        found = curvature(dphi) & ~to_hi
        swap = (dphi * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~to_hi & ~found
        to_lo = ~to_hi & ~found
        s = dict(s, failed=failed, nfev=s["nfev"] + 1, done=s["done"] | found)
        s.update(_pick(to_hi, dict(a_hi=a, phi_hi=phi, dphi_hi=dphi, a_rec=s["a_hi"], phi_rec=s["phi_hi"]), s))
        s.update(_pick(found, dict(a_star=a, phi_star=phi, g_star=g), s))
        s.update(_pick(swap, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"], a_rec=s["a_hi"],
                                  phi_rec=s["phi_hi"]), s))
        s.update(_pick(to_lo & ~swap, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s))
        s.update(_pick(to_lo, dict(a_lo=a, phi_lo=phi, dphi_lo=dphi), s))
        return dict(s, j=s["j"] + 1, failed=s["failed"] | (s["j"] + 1 >= 30))

    def bracket_step(s):
        """One step of the doubling search for a bracket (algorithm 3.5)."""
        a = jnp.where(s["i"] == 1, start, s["a_prev"] * 2.0)
        phi, dphi, g = phi_dphi_g(a)
        zoom_up = ~sufficient(a, phi) | ((phi >= s["phi_prev"]) & (s["i"] > 1))  # the minimum is below a
        found = curvature(dphi) & ~zoom_up
        zoom_down = (dphi >= 0.0) & ~zoom_up & ~found  # ... or behind a, which is uphill already
        lo = _pick(zoom_up, dict(a=s["a_prev"], phi=s["phi_prev"], dphi=s["dphi_prev"]), dict(a=a, phi=phi, dphi=dphi))
        hi = _pick(zoom_up, dict(a=a, phi=phi, dphi=dphi), dict(a=s["a_prev"], phi=s["phi_prev"], dphi=s["dphi_prev"]))
        zoom = zoom_up | zoom_down
        # Entering the zoom: what it leaves if it fails is step 1 from the gradient at xk.
        s = dict(s, nfev=s["nfev"] + 1, zooming=zoom, done=found, i=s["i"] + 1, a_prev=a, phi_prev=phi,
                 dphi_prev=dphi)
        s.update(_pick(zoom, dict(a_lo=lo["a"], phi_lo=lo["phi"], dphi_lo=lo["dphi"], a_hi=hi["a"], phi_hi=hi["phi"],
                                  dphi_hi=hi["dphi"], a_rec=(lo["a"] + hi["a"]) / 2.0,
                                  phi_rec=(lo["phi"] + hi["phi"]) / 2.0, j=jnp.int32(0), a_star=f32(1.0),
                                  phi_star=lo["phi"], g_star=gfk), s))
        s.update(_pick(found, dict(a_star=a, phi_star=phi, g_star=g), s))
        return s

    def body(s):
        return cond(s["zooming"], zoom_step, bracket_step, s)

    def go_on(s):
        return ~s["done"] & ~s["failed"] & (s["zooming"] | (s["i"] <= maxiter))

    s = while_loop(go_on, body, state)
    failed = s["failed"] | ~s["done"]
    status = jnp.where(s["failed"], 1, jnp.where(s["i"] > maxiter, 3, 0))
    a = s["a_star"]
    if dtypes.finfo(a.dtype).bits != 64:  # a step too small to move float32 values
        a = jnp.where(jnp.abs(a) < 1e-8, jnp.sign(a) * 1e-8, a)
    return a, s["phi_star"], s["g_star"], failed, status, s["nfev"]


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """BFGS from x0 until the gradient's `norm` is below gtol, a line search fails or maxiter steps."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    n = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    state = dict(converged=jnp.linalg.norm(g0, ord=norm) < gtol, failed=jnp.array(False), k=jnp.int32(0),
                 nfev=jnp.int32(1), x=x0, f=f0, g=g0, h=jnp.eye(n, dtype=x0.dtype),
                 f_before=f0 + jnp.linalg.norm(g0) / 2, ls_status=jnp.int32(0))

    def step(s):
        p = -_dot(s["h"], s["g"])
        a, f1, g1, failed, ls_status, nfev = line_search(fun, s["x"], p, s["f"], s["f_before"], s["g"],
                                                         maxiter=line_search_maxiter)
        step_x = a * p
        y = g1 - s["g"]
        rho = jnp.reciprocal(_dot(y, step_x))
        w = jnp.eye(n, dtype=rho.dtype) - rho * (step_x[:, None] * y[None, :])
        h = _dot(_dot(w, s["h"]), w.T) + rho * step_x[:, None] * step_x[None, :]
        return dict(converged=jnp.linalg.norm(g1, ord=norm) < gtol, failed=failed, k=s["k"] + 1,
                    nfev=s["nfev"] + nfev, x=s["x"] + step_x, f=f1, g=g1,
                    h=jnp.where(jnp.isfinite(rho), h, s["h"]), f_before=s["f"], ls_status=ls_status)

    s = while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter), step, state)
    status = jnp.where(s["converged"], 0, jnp.where(s["k"] == maxiter, 1,
                                                    jnp.where(s["failed"], 2 + s["ls_status"], -1)))
    return s, status


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimises fun(x, *args) over a 1-D x from x0. method: 'BFGS'. options: maxiter, norm, gtol,
    line_search_maxiter. (tol is accepted and unused, as in JAX.)"""
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
            raise NotImplementedError("jax.scipy.optimize.minimize: the experimental L-BFGS method is not "
                                      "implemented in xjax; use method='BFGS'")
        raise ValueError(f"Method {method} not recognized")
    s, status = minimize_bfgs(lambda x: fun(x, *args), jnp.asarray(x0), **(options or {}))
    return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=status, fun=s["f"], jac=s["g"],
                           hess_inv=s["h"], nfev=s["nfev"], njev=s["nfev"], nit=s["k"])
