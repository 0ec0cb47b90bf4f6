"""xjax.lax's special-function primitives, xjax.scipy.special and xjax.scipy.stats against values
recorded from JAX (x64) over grids of edge cases (special_cases.py): the same NaN, inf and
signed-zero conventions where JAX's differ from SciPy's (poles, out-of-support points, invalid
parameters, 0 log 0), and the same derivatives where JAX's custom rules define them."""
import numpy as np
import pytest

import xjax
import xjax.lax
import xjax.scipy.special
import xjax.scipy.stats
from special_cases import CASES, GRAD_CASES
from special_values import GRADS, VALUES


def function(kind, name):
    if kind == "lax":
        return getattr(xjax.lax, name)
    module = xjax.scipy.special if kind == "special" else xjax.scipy.stats
    for part in name.split("."):
        module = getattr(module, part)
    return module


def assert_matches(got, want, rtol, atol, label):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, label
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{label}: NaN positions")
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=f"{label}: infinities")
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=atol, err_msg=label)
    exact = finite & ((want == 0) | (np.abs(want) == 1))  # edge values are exact in both
    np.testing.assert_array_equal(got[exact], want[exact], err_msg=f"{label}: exact values")


# Where an ulp of lgamma at large arguments (or cancellation in 1 - x) shows, in both.
TOLERANCE = {"lax.igamma": (1e-9, 0), "lax.igammac": (1e-9, 0), "lax.igamma_grad_a": (1e-9, 0),
             "lax.betainc": (1e-9, 1e-13),
             "gammainc": (1e-9, 0), "gammaincc": (1e-9, 0), "poisson.cdf": (1e-9, 0), "poisson.entropy": (1e-9, 0)}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(case):
    label, kind, name, args, kwargs = case
    rtol, atol = TOLERANCE.get(label, (1e-12, 1e-300))
    with xjax.enable_x64(True):
        args = [np.asarray(a) if isinstance(a, list) else a for a in args]
        kwargs = {k: v if k in ("series_order", "axis", "return_sign") else np.asarray(v) for k, v in kwargs.items()}
        got = function(kind, name)(*args, **kwargs)
        want = VALUES[label]
        if isinstance(want, tuple):
            for g, w in zip(got, want):
                assert_matches(g, w, rtol, atol, label)
        else:
            assert_matches(got, want, rtol, atol, label)


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_derivatives_match_jax(case):
    name, argnums, points = case
    with xjax.enable_x64(True):
        grad = xjax.grad(function("special", name), argnums)
        for point, want in zip(points, GRADS[name]):
            got = grad(*[np.float64(p) for p in point])
            for g, w in zip(got, want):
                assert_matches(g, w, 1e-10, 1e-300, f"grad {name} at {point}")
