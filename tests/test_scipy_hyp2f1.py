"""jax.scipy.special.hyp2f1 against SciPy in float64 where JAX's algorithm agrees with it, JAX's recorded
values where it does not (x > 1 and non-positive integer c give inf; series capped at 250 terms near x = +-1),
float32, derivatives (check_grads in x64), vmap against a loop."""
import numpy as np
import scipy.special as ss

import xjax
from xjax.scipy.special import hyp2f1
from xjax.test_util import check_grads


def _random_points(n=200, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-3, 3, n), rng.uniform(-3, 3, n)
    c, x = rng.uniform(0.2, 5, n), rng.uniform(-0.85, 0.85, n)
    a[:20] = np.round(a[:20])          # terminating series
    b[20:40] = np.round(b[20:40])
    x[40:70] = rng.uniform(0.9, 0.97, 30)  # past 0.9: Euler's or the digamma transform
    c[40:55] = a[40:55] + b[40:55] + np.round(rng.uniform(-3, 3, 15))  # integer c - a - b
    c[40:55] = np.where(np.abs(c[40:55] - np.round(c[40:55])) < 1e-3, c[40:55] + 0.5, c[40:55])
    b[70:75], a[75:80] = c[70:75], c[75:80]  # (1 - x)^-a, (1 - x)^-b
    x[80:85] = 1.0                            # Gauss's sum where c - a - b > 0
    c[80:85] = a[80:85] + b[80:85] + rng.uniform(0.5, 2, 5)
    x[85:90] = 0.0
    return a, b, c, x


def test_matches_scipy_float64(x64):
    a, b, c, x = _random_points()
    np.testing.assert_allclose(hyp2f1(a, b, c, x), ss.hyp2f1(a, b, c, x), rtol=1e-8, atol=1e-12)


# (a, b, c, x) and JAX 0.10.2's values, float64 and float32, where SciPy differs or the branch is JAX's own.
JAX_POINTS = [(-3.0, -2.758690674572396, 2.4128357059566365, 1.0275596414972337),
              (2.562927318407205, -0.63204121757424, 0.670884551852664, 0.9877677257764277),
              (2.6936620496265924, 0.11899844600539033, 1.611361450344388, 0.9959388045501812),
              (2.1818405414734547, 2.4778446360412687, 3.814858988844909, -0.952656106815587),
              (1.5, 2.0, -2.0, 0.3), (1.5, 2.0, 0.0, 0.3), (0.5, 1.0, 1.2, 1.0), (0.5, 0.25, 3.0, 1.0),
              (1.0, 2.0, 3.0, 2.5), (0.0, 0.0, 0.0, 0.5), (-2.0, 1.5, -3.0, 0.4), (1.0, 1.0, 2.0, 0.95),
              (0.3, 0.7, 1.0, 0.99), (2.0, 3.0, 4.0, 0.999)]
JAX_F64 = [np.inf, -64.44040973506735, 52.28981143824945, 0.37302454868929313, np.inf, np.inf, np.inf,
           1.0598436084750145, np.inf, np.inf, np.inf, 3.153402393214726, 2.107710917717898, 2967.443900663843]
JAX_F32 = [np.inf, -64.44022369384766, 52.28948974609375, 0.37302452325820923, np.inf, np.inf, np.inf,
           1.05984365940094, np.inf, np.inf, np.inf, 3.153397798538208, 2.10771107673645, 2967.48583984375]


def test_jax_recorded_values_float64(x64):
    a, b, c, x = map(np.array, zip(*JAX_POINTS))
    np.testing.assert_allclose(hyp2f1(a, b, c, x), JAX_F64, rtol=1e-12)


def test_jax_recorded_values_float32():
    a, b, c, x = (np.array(v, np.float32) for v in zip(*JAX_POINTS))
    got = hyp2f1(a, b, c, x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, JAX_F32, rtol=2e-5)


def test_float32_against_scipy():
    a, b, c, x = (v.astype(np.float32) for v in _random_points(100, seed=1))
    want = ss.hyp2f1(*(v.astype(np.float64) for v in (a, b, c, x)))
    np.testing.assert_allclose(hyp2f1(a, b, c, x), want, rtol=2e-3, atol=1e-4)


def test_broadcasting_and_integer_inputs():
    assert hyp2f1(1, 1, 2, np.float32(0.5)).dtype == np.float32
    got = hyp2f1(np.array([[1.0], [2.0]], np.float32), 1.0, 3.0, np.array([0.1, 0.2, 0.3], np.float32))
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, ss.hyp2f1(np.array([[1.0], [2.0]]), 1.0, 3.0, [0.1, 0.2, 0.3]), rtol=1e-5)


def test_grads(x64):
    for point in [(0.7, 1.3, 2.1, 0.4), (1.5, -0.5, 3.0, -0.6), (0.3, 0.4, 1.7, 0.2)]:
        check_grads(hyp2f1, point, order=1, modes=["fwd", "rev"], atol=1e-6, rtol=1e-6)
    # Second order in x (the x-derivative is hyp2f1 again); the parameter derivatives are while loops, which
    # reverse mode cannot differentiate again, in JAX as here.
    check_grads(lambda x: hyp2f1(0.7, 1.3, 2.1, x), (0.4,), order=2, modes=["fwd"])
    second = xjax.grad(xjax.grad(lambda x: hyp2f1(0.7, 1.3, 2.1, x)))(0.4)
    np.testing.assert_allclose(second, 0.7 * 1.3 / 2.1 * 1.7 * 2.3 / 3.1 * ss.hyp2f1(2.7, 3.3, 4.1, 0.4), rtol=1e-10)


def test_vmap_matches_loop(x64):
    a, b, c, x = _random_points(100, seed=2)
    want = np.array([hyp2f1(*v) for v in zip(a, b, c, x)])
    np.testing.assert_allclose(xjax.vmap(hyp2f1)(a, b, c, x), want, rtol=1e-14)
    np.testing.assert_allclose(xjax.jit(hyp2f1)(a, b, c, x), want, rtol=1e-14)
