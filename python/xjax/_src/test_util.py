"""check_grads: numerical checks of forward- and reverse-mode derivatives, as jax.test_util's.

Forward mode is compared with central differences along a random direction; reverse mode with
forward mode through the identity <ct, J t> == <J^T ct, t>. Higher orders check the derivative
functions themselves, recursively.
"""
import numpy as np

from xjax._src import autodiff, core, tree_util
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.interpreters.ad import float0

_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5}


def _rng():
    return np.random.default_rng(0)


def _leaves(x):
    return tree_util.tree_leaves(x)


def _random_like(rng, x):
    a = np.asarray(x)
    if np.issubdtype(a.dtype, np.complexfloating):
        return cpu.device_put((rng.standard_normal(a.shape) + 1j * rng.standard_normal(a.shape)).astype(a.dtype))
    if not np.issubdtype(a.dtype, np.floating):
        return np.zeros(a.shape, float0)
    return cpu.device_put(rng.standard_normal(a.shape).astype(a.dtype))


def _wide(x):
    """x in float64, or complex128 for complex values (their parts' precision)."""
    a = np.asarray(x)
    return a.astype(np.complex128 if np.issubdtype(a.dtype, np.complexfloating) else np.float64)


def _tol(x, given):
    if given is not None:
        return given
    dtypes = [np.asarray(leaf).dtype for leaf in _leaves(x)]
    dtypes = [np.finfo(d).dtype if np.issubdtype(d, np.complexfloating) else d for d in dtypes]
    return max([_DEFAULT_TOL.get(d, 1e-5) for d in dtypes if np.issubdtype(d, np.floating)] or [1e-5])


def _assert_close(a, b, atol, rtol, what):
    for x, y in zip(_leaves(a), _leaves(b)):
        x, y = _wide(x), _wide(y)
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol, err_msg=what)


def _add(x, t, scale):
    return tree_util.tree_map(lambda a, b: a if np.asarray(b).dtype.names else
                              a + scale * np.asarray(b).astype(np.asarray(a).dtype), x, t)


def numerical_jvp(f, primals, tangents, eps):
    """Central differences of f at primals along tangents, in float64."""
    plus = f(*[_put(x) for x in _add(primals, tangents, eps)])
    minus = f(*[_put(x) for x in _add(primals, tangents, -eps)])
    return tree_util.tree_map(lambda p, m: (_wide(p) - _wide(m)) / (2 * eps), plus, minus)


def _put(x):
    return tree_util.tree_map(lambda a: a if type(a) in core.ARRAY_TYPES else cpu.device_put(np.asarray(a)), x)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=None):
    """Asserts that f_jvp(args, tangents) matches central differences of f along random tangents."""
    eps = eps or (1e-4 if config._values["jax_enable_x64"] else 1e-2)
    rng = _rng()
    tangents = tuple(tree_util.tree_map(lambda x: _random_like(rng, x), a) for a in args)
    out, t_out = f_jvp(args, tangents)
    expected = f(*args)
    tol = _tol(out, atol)
    _assert_close(out, expected, tol, rtol or tol, "primal outputs of jvp differ from the function's")
    t_num = numerical_jvp(f, args, tangents, eps)
    _assert_close(t_out, t_num, tol, rtol or tol, "jvp differs from central differences")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=None):
    """Asserts <ct, J t> (numerical) == <J^T ct, t> (from f_vjp) for random t and ct."""
    eps = eps or (1e-4 if config._values["jax_enable_x64"] else 1e-2)
    rng = _rng()
    out, vjp_fn = f_vjp(*args)
    tangents = tuple(tree_util.tree_map(lambda x: _random_like(rng, x), a) for a in args)
    cts = tree_util.tree_map(lambda x: _random_like(rng, x), out)
    t_out = numerical_jvp(f, args, tangents, eps)
    ct_in = _conj(vjp_fn(_conj(cts)))  # JAX's convention for complex cotangents (jax.test_util)
    tol = _tol(out, atol)
    lhs = _inner(cts, t_out)
    rhs = _inner(ct_in, tangents)
    np.testing.assert_allclose(rhs, lhs, atol=tol, rtol=rtol or tol,
                               err_msg="vjp is not the transpose of the numerical jvp")


def _conj(tree):
    def conj(a):
        v = np.asarray(a)
        return cpu.device_put(np.conj(v)) if np.issubdtype(v.dtype, np.complexfloating) else a

    return tree_util.tree_map(conj, tree)


def _inner(xs, ys):
    total = 0.0
    for x, y in zip(_leaves(xs), _leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype.names or y.dtype.names:
            continue
        total += float(np.real(np.sum(np.conj(_wide(x)) * _wide(y))))  # JAX's Re <x, y> for complex values
    return total


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks f's derivatives at args up to `order` in the given modes ("fwd", "rev")."""
    args = tuple(_put(a) for a in args)

    def check(f, args, order):
        if "fwd" in modes:
            check_jvp(f, lambda a, t: autodiff.jvp(f, a, t), args, atol, rtol, eps)
            if order > 1:
                rng = np.random.default_rng(1)
                ts = tuple(tree_util.tree_map(lambda x: _random_like(rng, x), a) for a in args)
                check(lambda *a: autodiff.jvp(f, a, ts)[1], args, order - 1)
        if "rev" in modes:
            check_vjp(f, lambda *a: autodiff.vjp(f, *a), args, atol, rtol, eps)
            if order > 1:
                rng = np.random.default_rng(2)
                out = f(*args)
                cts = tree_util.tree_map(lambda x: _random_like(rng, x), out)
                check(lambda *a: autodiff.vjp(f, *a)[1](cts), args, order - 1)

    check(f, args, order)
