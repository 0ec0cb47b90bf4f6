"""Inputs at which special_values.py holds what JAX (x64) returns: the lax special-function
primitives over grids of edge cases, jax.scipy.special and jax.scipy.stats functions, and
derivatives. tools/record_special_values.py records them; test_scipy_values.py compares.

A case is (label, kind, name, args, kwargs): kind "lax" calls lax.<name>, "special"
scipy.special.<name>, "stats" scipy.stats.<name> (name "norm.logpdf"); "grad" cases call
grad(special.<name>, argnums) at each point of args (a list of argument tuples).
"""
import itertools

import numpy as np

nan, inf = float("nan"), float("inf")

EDGES = [0.0, 0.5, 1.0, 2.5, -1.0, inf, -inf, nan, 1e-30, 100.0, 1e4]
LINE = [-inf, -10.5, -3.0, -2.5, -1.0, -0.5, -0.0, 0.0, 1e-30, 0.3, 0.5, 1.0, 2.0, 2.5, 7.9, 8.1, 30.0, 100.0,
        1e4, 1e300, inf, nan]
PROBS = [-0.5, 0.0, 1e-300, 1e-20, 1e-5, 0.01, 0.1353352832366127, 0.3, 0.5, 0.7, 0.8646647167633873, 0.99,
         1 - 1e-12, 1.0, 1.5, nan]
UNIT = [-1.5, -1.0, -0.999999, -0.5, 0.0, 0.3, 0.999, 1.0, 1.5, nan]
BETA_AB = [0.0, 0.5, 1.0, 2.5, -1.0, inf, nan, 1e-30, 100.0, 1e4]
BETA_X = [0.0, 0.3, 0.5, 0.99, 1.0, -0.1, 1.1, nan, 1e-20, 1 - 1e-12]
LOGNDTR = [-inf, -60.0, -40.0, -20.5, -20.0, -19.5, -10.5, -10.0, -9.5, -3.0, 0.0, 2.0, 4.5, 5.5, 7.5, 8.5, 40.0, inf,
           nan]


def grid(*axes):
    """The points of the product of axes, as one flat list per argument."""
    return [list(c) for c in zip(*itertools.product(*axes))]


def _lax_cases():
    cases = [(f"lax.{name}", "lax", name, grid(EDGES, EDGES), {}) for name in
             ("igamma", "igammac", "igamma_grad_a", "zeta", "polygamma")]
    cases += [(f"lax.{name}", "lax", name, [LINE], {}) for name in ("bessel_i0e", "bessel_i1e", "lgamma", "digamma")]
    cases.append(("lax.betainc", "lax", "betainc", grid(BETA_AB, BETA_AB, BETA_X), {}))
    return cases


def _special_cases():
    cases = [(name, "special", name, [LINE], {}) for name in
             ("gammaln", "gammasgn", "gamma", "digamma", "erf", "erfc", "expit", "entr", "ndtr", "i0", "i0e", "i1",
              "i1e", "factorial")]
    cases += [(name, "special", name, [UNIT], {}) for name in ("erfinv",)]
    cases += [(name, "special", name, [PROBS], {}) for name in ("ndtri", "logit")]
    cases.append(("log_ndtr", "special", "log_ndtr", [LOGNDTR], {}))
    cases.append(("log_ndtr_order5", "special", "log_ndtr", [LOGNDTR], {"series_order": 5}))
    small = [-2.5, -1.0, 0.0, 0.5, 1.0, 3.0, 9.0, 1e3, inf, nan]
    cases += [(name, "special", name, grid(small, small), {}) for name in
              ("gammainc", "gammaincc", "betaln", "beta", "xlogy", "xlog1py", "rel_entr", "kl_div", "zeta")]
    cases.append(("polygamma", "special", "polygamma",
                  [np.repeat([0, 1, 2, 3, 5], 10).tolist(), small * 5], {}))
    cases += [(f"multigammaln_{d}", "special", "multigammaln", [[0.3, 1.0, 1.7, 2.5, 10.0, 1e3, nan], d], {})
              for d in (1, 2, 3)]
    x = [[1.0, -2.0, 3.0], [-inf, -inf, 0.5], [inf, 1.0, 2.0]]
    b = [[1.0, 2.0, -0.5], [1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]
    cases += [("logsumexp_b", "special", "logsumexp", [x], {"axis": 1, "b": b}),
              ("logsumexp_sign", "special", "logsumexp", [x], {"axis": 1, "b": b, "return_sign": True}),
              ("logsumexp_neg", "special", "logsumexp", [[1.0, 2.0]], {"b": [1.0, -2.0]}),
              ("logsumexp_where", "special", "logsumexp", [x], {"axis": 0, "where": [[True, False, True]] * 3}),
              ("softmax_all", "special", "softmax", [[[1.0, 2.0], [3.0, -1.0]]], {}),
              ("log_softmax_all", "special", "log_softmax", [[[1.0, 2.0], [3.0, -1.0]]], {})]
    return cases


def _stats_cases():
    xs = [-inf, -2.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0, 10.0, inf, nan]
    params = {  # distribution: parameter lists (each broadcast against xs as a column)
        "norm": [[0.0, 1.0, -1.0], [1.0, 2.0, 0.5]],
        "beta": [[0.5, 1.0, 2.0, -1.0], [0.5, 1.0, 3.0, 2.0], [0.0, 0.0, -0.5, 0.0], [1.0, 1.0, 2.0, 1.0]],
        "gamma": [[0.5, 1.0, 3.0], [0.0, 0.5, -1.0], [1.0, 2.0, 0.5]],
        "t": [[1.0, 3.0, 30.0], [0.0, 0.5, -1.0], [1.0, 2.0, 0.5]],
        "chi2": [[1.0, 2.0, 5.0], [0.0, 0.5, -1.0], [1.0, 2.0, 0.5]],
        "uniform": [[0.0, -1.0, 0.5], [1.0, 2.0, 0.25]],
        "expon": [[0.0, -1.0, 0.5], [1.0, 2.0, 0.25]],
        "laplace": [[0.0, -1.0, 0.5], [1.0, 2.0, 0.25]],
        "logistic": [[0.0, -1.0, 0.5], [1.0, 2.0, 0.25]],
        "cauchy": [[0.0, -1.0, 0.5], [1.0, 2.0, 0.25]],
    }
    functions = {
        "norm": ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"), "beta": ("logpdf", "cdf", "sf", "logcdf"),
        "gamma": ("logpdf", "cdf", "sf", "logsf"), "t": ("logpdf", "pdf"), "chi2": ("logpdf", "cdf", "sf"),
        "uniform": ("logpdf", "cdf"), "expon": ("logpdf", "cdf", "logcdf", "sf", "logsf"),
        "laplace": ("logpdf", "cdf"), "logistic": ("logpdf", "cdf", "sf"),
        "cauchy": ("logpdf", "cdf", "logcdf", "sf", "logsf"),
    }
    cases = []
    for dist, fns in functions.items():
        cols = [[[v] for v in p] for p in params[dist]]
        for fn in fns:
            cases.append((f"{dist}.{fn}", "stats", f"{dist}.{fn}", [[xs]] + cols, {}))
    qs = [[-0.1, 0.0, 1e-10, 0.3, 0.5, 0.9, 1.0, 1.1, nan]]
    for name, extra in (("norm.ppf", [[0.0], [2.0]]), ("norm.isf", [[1.0], [0.5]]), ("uniform.ppf", [[1.0], [2.0]]),
                        ("expon.ppf", [[0.5], [2.0]]), ("logistic.ppf", [[0.5], [2.0]]),
                        ("logistic.isf", [[0.5], [2.0]]), ("cauchy.ppf", [[0.5], [2.0]]),
                        ("cauchy.isf", [[0.5], [2.0]]), ("bernoulli.ppf", [[0.0, 0.3, 1.0, 1.5]])):
        cases.append((name, "stats", name, [qs] + [[[v] for v in e] for e in extra], {}))
    ks = [[-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0, 50.0, nan]]
    cases += [("poisson.logpmf", "stats", "poisson.logpmf", [ks, [[0.0], [0.5], [4.0], [-1.0]]], {}),
              ("poisson.cdf", "stats", "poisson.cdf", [ks, [[0.0], [0.5], [4.0]], [[0.0], [1.0], [-1.0]]], {}),
              ("poisson.entropy", "stats", "poisson.entropy", [[0.0, 0.5, 5.0, 20.0, 150.0, 1e4]], {}),
              ("bernoulli.logpmf", "stats", "bernoulli.logpmf", [ks, [[0.0], [0.3], [1.0]]], {}),
              ("bernoulli.cdf", "stats", "bernoulli.cdf", [ks, [[0.0], [0.3], [1.0], [1.5]]], {}),
              ("binom.logpmf", "stats", "binom.logpmf", [ks, [[0.0], [3.0], [10.0]], [[0.0], [0.3], [1.0]]], {}),
              ("geom.logpmf", "stats", "geom.logpmf", [ks, [[0.3], [1.0], [0.01]]], {}),
              ("dirichlet.logpdf", "stats", "dirichlet.logpdf",
               [[[0.2, 0.5, 0.0, 0.3], [0.3, 0.25, 1.0, 0.3], [0.5, 0.25, 0.0, 0.5]], [0.5, 1.0, 3.0]], {}),
              ("dirichlet.logpdf_k1", "stats", "dirichlet.logpdf", [[[0.2, 0.5], [0.3, 0.25]], [0.5, 1.0, 3.0]], {}),
              ("multivariate_normal.scalar", "stats", "multivariate_normal.logpdf",
               [[[0.5, -1.0], [2.0, 0.0]], [0.5, 1.0], 2.0], {}),
              ("multivariate_normal.1d", "stats", "multivariate_normal.logpdf", [[0.5, -1.0, 3.0], 1.0, 2.0], {})]
    return cases


def _grad_cases():
    return [
        ("zeta", (0, 1), [(3.0, 2.0), (2.5, 0.7), (10.0, 1.5), (1.5, 30.0)]),
        ("xlogy", (0, 1), [(0.0, 0.0), (0.0, 1.0), (2.0, 3.0), (1.5, 0.0)]),
        ("xlog1py", (0, 1), [(0.0, -1.0), (0.0, 1.0), (2.0, 3.0)]),
        ("entr", (0,), [(0.0,), (0.5,), (2.0,)]),
        ("rel_entr", (0, 1), [(0.0, 1.0), (0.5, 2.0), (2.0, 0.5)]),
        ("kl_div", (0, 1), [(0.0, 1.0), (0.5, 2.0)]),
        ("logit", (0,), [(0.5,), (0.1,), (0.999,)]),
        ("log_ndtr", (0,), [(-40.0,), (-15.0,), (-3.0,), (0.0,), (6.0,), (10.0,)]),
        ("ndtri", (0,), [(0.01,), (0.5,), (0.9,)]),
        ("i0e", (0,), [(0.0,), (1e-20,), (-3.0,), (10.0,)]),
        ("i1e", (0,), [(0.0,), (1e-20,), (-3.0,), (10.0,)]),
        ("gammainc", (0, 1), [(0.5, 0.3), (2.0, 3.0), (5.0, 30.0)]),
        ("gammaincc", (0, 1), [(0.5, 0.3), (2.0, 3.0)]),
        ("betainc", (2,), [(2.0, 3.0, 0.4), (0.5, 0.5, 0.9)]),
        ("digamma", (0,), [(0.3,), (-1.5,), (10.0,)]),
        ("gammaln", (0,), [(0.3,), (-1.5,), (10.0,)]),
        ("betaln", (0, 1), [(0.5, 3.0), (2.0, 20.0)]),
    ]


CASES = _lax_cases() + _special_cases() + _stats_cases()
GRAD_CASES = _grad_cases()
