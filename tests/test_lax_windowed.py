"""lax.reduce_window (sum, max, min and other computations), select_and_gather_add and
select_and_scatter_add: values and gradients against values recorded from JAX and a NumPy
reference, numerical derivative checks in x64, batching against a loop, bad input."""
import numpy as np
import pytest
from batching_util import check_batch
from jax_conv_values import WINDOW

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.lax import windowed
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def det(shape, k):
    """The recorded inputs (see jax_conv_values.py)."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.77 + k) * 1.5).astype(np.float32).reshape(shape)


OPS = {"max": (lax.max, -np.inf, np.max), "min": (lax.min, np.inf, np.min), "add": (lax.add, 0.0, np.sum),
       "mul": (lax.mul, 1.0, np.prod)}


def ref_reduce_window(x, op, init, window, strides, padding, base_dilation, window_dilation):
    """By definition: dilate and pad with init, then reduce every (dilated) window."""
    nd = x.ndim
    xd = np.full(tuple((s - 1) * d + 1 if s else 0 for s, d in zip(x.shape, base_dilation)), init, x.dtype)
    xd[tuple(slice(None, None, d) for d in base_dilation)] = x
    xd = np.pad(xd, [(max(lo, 0), max(hi, 0)) for lo, hi in padding], constant_values=init)
    xd = xd[tuple(slice(max(-lo, 0), xd.shape[i] - max(-hi, 0)) for i, (lo, hi) in enumerate(padding))]
    span = [(w - 1) * d + 1 for w, d in zip(window, window_dilation)]
    out_shape = [max(0, (p - s) // st + 1) for p, s, st in zip(xd.shape, span, strides)]
    out = np.empty(out_shape, x.dtype)
    for pos in np.ndindex(*out_shape):
        win = xd[tuple(slice(p * st, p * st + s, d) for p, st, s, d in zip(pos, strides, span, window_dilation))]
        out[pos] = op(np.concatenate([win.ravel(), np.array([init], x.dtype)]))
    assert len(out_shape) == nd
    return out


def random_case(seed):
    rng = np.random.default_rng(seed)
    nd = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 7)) for _ in range(nd))
    kw = dict(window_dimensions=tuple(int(rng.integers(1, 4)) for _ in range(nd)),
              window_strides=tuple(int(rng.integers(1, 3)) for _ in range(nd)),
              padding=tuple((int(rng.integers(0, 3)), int(rng.integers(0, 3))) for _ in range(nd)),
              base_dilation=tuple(int(rng.integers(1, 3)) for _ in range(nd)),
              window_dilation=tuple(int(rng.integers(1, 3)) for _ in range(nd)))
    return rng.standard_normal(shape), kw


# ---- values -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(WINDOW))
def test_matches_jax(name):
    case = WINDOW[name]
    x = det(case["shape"], 0)
    if case["round_input"]:
        x = np.round(x)
    comp, init, _ = OPS[case["op"]]
    f = lambda x: lax.reduce_window(x, init, comp, **case["kwargs"])  # noqa: E731
    y = f(x)
    assert y.shape == case["y_shape"] and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y).ravel(), case["y"], rtol=1e-5, atol=1e-5)
    ct = det(case["y_shape"], 3)
    gx = xjax.grad(lambda x: jnp.sum(f(x) * ct))(x)
    np.testing.assert_allclose(np.asarray(gx).ravel(), case["gx"], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(xjax.jit(f)(x), y)


@pytest.mark.parametrize("op", ["max", "min", "add", "mul"])
@pytest.mark.parametrize("seed", range(12))
def test_matches_numpy_reference(x64, op, seed):
    x, kw = random_case(seed)
    comp, init, npop = OPS[op]
    want = ref_reduce_window(x, npop, init, kw["window_dimensions"], kw["window_strides"], kw["padding"],
                             kw["base_dilation"], kw["window_dilation"])
    got = lax.reduce_window(x, init, comp, **kw)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_string_padding_and_pytrees():
    x = det((4, 7), 0)
    for pad in ("SAME", "VALID", "SAME_LOWER"):
        pads = lax.padtype_to_pads(x.shape, (2, 3), (1, 2), pad)
        want = ref_reduce_window(x, np.max, -np.inf, (2, 3), (1, 2), pads, (1, 1), (1, 1))
        np.testing.assert_array_equal(lax.reduce_window(x, -np.inf, lax.max, (2, 3), (1, 2), pad), want)
    # Two operands reduced together: a (max, argmax) pair, as a generic computation.
    idx = np.arange(x.size, dtype=np.int32).reshape(x.shape)

    def pick(a, b):
        take_b = lax.gt(b[0], a[0])
        return lax.select(take_b, b[0], a[0]), lax.select(take_b, b[1], a[1])

    vals, where = lax.reduce_window((x, idx), (-np.inf, np.int32(-1)), pick, (2, 2), (2, 2), "VALID")
    np.testing.assert_array_equal(np.asarray(x).ravel()[np.asarray(where)], vals)


def test_integer_and_bool_dtypes():
    x = np.arange(-6, 14, dtype=np.int32).reshape(4, 5)
    np.testing.assert_array_equal(lax.reduce_window(x, 0, lax.add, (2, 2), (1, 1), "VALID"),
                                  ref_reduce_window(x, np.sum, 0, (2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)))
    imin = np.iinfo(np.int32).min
    np.testing.assert_array_equal(lax.reduce_window(x, imin, lax.max, (3, 2), (1, 2), "SAME"),
                                  ref_reduce_window(x, np.max, imin, (3, 2), (1, 2), ((1, 1), (0, 1)), (1, 1), (1, 1)))
    b = x % 3 == 0
    np.testing.assert_array_equal(lax.reduce_window(b, False, lax.max, (2, 2), (1, 1), "VALID"),
                                  ref_reduce_window(b, np.max, False, (2, 2), (1, 1), ((0, 0),) * 2, (1, 1), (1, 1)))
    h = x.astype(np.float16)
    np.testing.assert_array_equal(lax.reduce_window(h, 0.0, lax.add, (2, 2), (2, 2), "VALID"),
                                  ref_reduce_window(h, np.sum, 0, (2, 2), (2, 2), ((0, 0),) * 2, (1, 1), (1, 1)))


def test_monoids_use_their_primitive():
    x = jnp.ones((4, 4))
    for comp, init, prim in ((lax.add, 0.0, "reduce_window_sum"), (lax.max, -np.inf, "reduce_window_max"),
                             (lax.min, np.inf, "reduce_window_min")):
        text = str(xjax.make_jaxpr(lambda x: lax.reduce_window(x, init, comp, (2, 2), (1, 1), "VALID"))(x))
        assert f"{prim}[" in text, text
    # Another init or computation: the fold of strided slices (pad, slice, the computation).
    text = str(xjax.make_jaxpr(lambda x: lax.reduce_window(x, 1.0, lax.add, (2, 2), (1, 1), "VALID"))(x))
    assert "reduce_window_sum" not in text and "slice" in text


def test_grad_of_max_pool_is_select_and_scatter_add():
    text = str(xjax.make_jaxpr(xjax.grad(lambda x: jnp.sum(
        lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 2), "VALID"))))(jnp.ones((4, 4))))
    assert "select_and_scatter_add[" in text and "select_prim=ge" in text


def test_select_and_scatter_add_overlapping_windows():
    """Overlapping windows add into the same element: each window's source at its (first) max."""
    x = np.array([[1., 5., 2., 5.], [0., 3., 9., 1.], [4., 4., 1., 2.]], np.float32)
    src = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    ge = lax.ge_p
    got = windowed.select_and_scatter_add_p.bind(jnp.asarray(src), jnp.asarray(x), select_prim=ge,
                                                 window_dimensions=(2, 2), window_strides=(1, 1),
                                                 padding=((0, 0), (0, 0)))
    want = np.zeros_like(x)
    for i in range(2):
        for j in range(3):
            win = x[i:i + 2, j:j + 2]
            a, b = np.unravel_index(np.argmax(win), win.shape)  # the first maximum
            want[i + a, j + b] += src[i, j]
    np.testing.assert_array_equal(got, want)


# ---- derivatives --------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["max", "min", "add", "mul"])
@pytest.mark.parametrize("seed", [1, 4, 6])
def test_check_grads(x64, op, seed):
    x, kw = random_case(seed)
    x = x + np.arange(x.size).reshape(x.shape) * 1e-3  # no ties
    if op in ("max", "min"):  # the VJP of max/min has no dilations (as JAX); no window of padding only
        pads = tuple((min(lo, w - 1), min(hi, w - 1)) for (lo, hi), w in zip(kw["padding"], kw["window_dimensions"]))
        kw = dict(kw, base_dilation=None, window_dilation=None, padding=pads)
    comp, init, _ = OPS[op]
    modes = ("fwd", "rev")
    check_grads(lambda x: lax.reduce_window(x, init, comp, **kw), (x,), order=2, modes=modes)


def test_max_pool_vjp_with_window_dilation_is_not_implemented():
    f = lambda x: jnp.sum(lax.reduce_window(x, -np.inf, lax.max, (2,), (1,), "VALID", None, (2,)))  # noqa: E731
    with pytest.raises(NotImplementedError, match="window dilation"):
        xjax.grad(f)(jnp.arange(6.0))
    np.testing.assert_allclose(xjax.jvp(f, (jnp.arange(6.0),), (jnp.ones(6),))[1], 4.0)


# ---- batching -----------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["max", "min", "add"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap(op, axis):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 5, 6)).astype(np.float32)
    comp, init, _ = OPS[op]
    f = lambda x: lax.reduce_window(x, init, comp, (2, 3), (1, 2), ((1, 0), (1, 1)), (1, 2), (2, 1))  # noqa: E731
    check_batch(f, (x,), in_axes=axis)
    check_batch(f, (x,), in_axes=axis, jit=True)


def test_vmap_of_max_pool_vjp():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 2, 6, 6, 2)).astype(np.float32)
    ct = rng.standard_normal((3, 2, 3, 3, 2)).astype(np.float32)
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")  # noqa: E731
    check_batch(lambda x, ct: xjax.vjp(pool, x)[1](ct)[0], (x, ct), in_axes=(0, 0), jit=True)
    check_batch(lambda x, t: xjax.jvp(pool, (x,), (t,))[1], (x, x * 2), in_axes=(0, 0))


# ---- bad input ----------------------------------------------------------------------------------

X = jnp.ones((1, 1, 5, 5))


@pytest.mark.parametrize("args,err,match", [
    ((X, 0., lax.add, (1, 1, 2), (1, 1, 1, 1), "VALID"), TypeError, r"window_dimensions for operand.*\(1, 1, 5, 5\)"),
    ((X, 0., lax.add, (1, 1, 0, 2), (1, 1, 1, 1), "VALID"), TypeError, "strictly positive"),
    ((X, 0., lax.add, (1, 1, 2, 2), (1, 1, 1), "VALID"), TypeError, "window_strides"),
    ((X, 0., lax.add, (1, 1, 2, 2), (1, 1, 1, 1), "BAD"), ValueError, "Unrecognized padding type"),
    ((X, 0., lax.add, (1, 1, 2, 2), (1, 1, 1, 1), [(0, 0)]), TypeError, "padding pairs"),
    ((X, 0., lax.add, (1, 1, 2, 2), (1, 1, 1, 1), [(0, 0), (0, 0), (0, 0), (-9, 0)]), ValueError, "negative padding"),
    ((X, jnp.int32(0), lax.mul, (1, 1, 2, 2), (1, 1, 1, 1), "VALID"), TypeError, "init value"),
    ((X, 0., lambda a, b: (a, b), (1, 1, 2, 2), (1, 1, 1, 1), "VALID"), TypeError, "computation returned"),
])
def test_bad_input(args, err, match):
    with pytest.raises(err, match=match):
        lax.reduce_window(*args)


def test_bad_attributes_in_the_core():
    from xjax import _core

    t = [((1, 1, 5, 5), "float32")]
    for op in ("reduce_window_sum", "reduce_window_max"):
        w = dict(window_dimensions=[1, 1, 2, 2])
        for bad in (dict(window_dimensions=[1, 1, 2]), dict(w, window_strides=[1, 1, -1, 1]),
                    dict(window_dimensions=[1, 1, 2, 0]), dict(w, base_dilation=[0, 1, 1, 1]),
                    dict(w, window_dilation=[1, 1, 2 ** 62, 1])):
            with pytest.raises(ValueError, match=rf"\[{op}\]"):
                _core.infer(op, t, bad)
    with pytest.raises(TypeError, match="bool"):
        _core.infer("reduce_window_sum", [((3,), "bool")], dict(window_dimensions=[2]))
    pair = [((1, 1, 2, 2), "float32"), ((1, 1, 5, 5), "float32")]
    with pytest.raises(ValueError, match="select_prim"):
        _core.infer("select_and_scatter_add", pair, dict(window_dimensions=[1, 1, 2, 2], window_strides=[1, 1, 2, 2],
                                                         select_prim="gt"))
    with pytest.raises(TypeError, match="windowed shape"):
        _core.infer("select_and_scatter_add", [((1, 1, 3, 2), "float32"), ((1, 1, 5, 5), "float32")],
                    dict(window_dimensions=[1, 1, 2, 2], window_strides=[1, 1, 2, 2], select_prim="ge"))
    with pytest.raises(TypeError, match="same shape and dtype"):
        _core.infer("select_and_gather_add", pair, dict(window_dimensions=[1, 1, 2, 2], select_prim="ge"))
