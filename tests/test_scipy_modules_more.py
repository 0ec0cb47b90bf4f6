"""jax.scipy.integrate.trapezoid against scipy.integrate.trapezoid in float64, with its gradient,
jit and vmap."""
import numpy as np
import pytest
import scipy.integrate as si

import xjax
from xjax.scipy import integrate
from xjax.test_util import check_grads

RNG = np.random.default_rng(4)


@pytest.mark.parametrize("kwargs", [dict(), dict(dx=0.3), dict(axis=0), dict(x="sorted")])
def test_trapezoid_against_scipy(kwargs):
    with xjax.enable_x64(True):
        y = RNG.normal(size=(5, 7))
        if kwargs.get("x") == "sorted":
            kwargs = dict(x=np.sort(RNG.uniform(0, 3, 7)))
        np.testing.assert_allclose(integrate.trapezoid(y, **kwargs), si.trapezoid(y, **kwargs), rtol=1e-13)


def test_trapezoid_grad_jit_vmap():
    with xjax.enable_x64(True):
        y, x = RNG.normal(size=6), np.sort(RNG.uniform(0, 2, 6))
        check_grads(lambda y, x: integrate.trapezoid(y, x), (y, x), order=2)
        np.testing.assert_allclose(xjax.jit(integrate.trapezoid)(y, x), si.trapezoid(y, x), rtol=1e-13)
        ys = RNG.normal(size=(3, 6))
        np.testing.assert_allclose(xjax.vmap(lambda v: integrate.trapezoid(v, x))(ys), si.trapezoid(ys, x),
                                   rtol=1e-13)
