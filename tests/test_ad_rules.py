"""The differentiation rules of every primitive with float inputs.

check_grads compares forward mode with central differences and reverse mode with forward mode,
to second order, at points where the function is differentiable (float64, so tolerances are
tight). The points where it is not (ties of max/min/sort, clamp bounds, abs at 0, zeros of a
product, out-of-bounds indices, duplicate scatter indices) have the conventions JAX chose: those
are compared with values recorded from JAX 0.10.2 (x64).
"""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax._src.interpreters.ad import float0
from xjax.test_util import check_grads

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3)
FEW = settings(max_examples=3)


@pytest.fixture(autouse=True)
def x64():
    prev = xjax.config.jax_enable_x64
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", prev)


def check(f, *args, order=2, **kw):
    check_grads(f, args, order, modes=("fwd", "rev"), **kw)


def arr(x, dtype=np.float64):
    return jnp.asarray(np.asarray(x, dtype))


# Samplers of points where each function is smooth: rng, shape -> float64 array.
def uniform(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape)


def away_from_zero(lo, hi):
    return lambda rng, shape: rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def off_grid(rng, shape):
    """Away from integers and halves (floor, ceil, round, sign jump there)."""
    return rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape)


def distinct(rng, shape):
    """Values at least 0.4 apart (no ties for max, min, sort)."""
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.5 + rng.uniform(-0.1, 0.1, n)).reshape(shape) - n / 4


ANY = uniform(-2.0, 2.0)
POSITIVE = uniform(0.5, 3.0)
UNIT = uniform(-0.8, 0.8)

UNARY = {
    "neg": ANY, "exp": ANY, "exp2": ANY, "expm1": ANY, "tanh": ANY, "logistic": ANY, "sin": ANY, "cos": ANY,
    "sinh": ANY, "cosh": ANY, "asinh": ANY, "atan": ANY, "erf": ANY, "erfc": ANY, "square": ANY, "copy": ANY,
    "log": POSITIVE, "sqrt": POSITIVE, "rsqrt": POSITIVE, "log1p": uniform(-0.5, 2.0), "lgamma": POSITIVE,
    "digamma": POSITIVE,
    "acosh": uniform(1.2, 3.0), "asin": UNIT, "acos": UNIT, "atanh": UNIT, "erf_inv": UNIT, "tan": uniform(-1.2, 1.2),
    "cbrt": away_from_zero(0.3, 2.0), "abs": away_from_zero(0.3, 2.0),
    "sign": off_grid, "floor": off_grid, "ceil": off_grid, "round": off_grid,
}


def _unary(name):
    if name == "round":
        return lax.round
    if name == "copy":
        return lambda x: lax.copy_p.bind(x)
    return getattr(lax, name)


@pytest.mark.parametrize("name", sorted(UNARY))
@FEW
@given(shape=SHAPES, seed=st.integers(0, 2**16))
def test_unary(name, shape, seed):
    x = arr(UNARY[name](np.random.default_rng(seed), shape))
    check(_unary(name), x, order=2)


@pytest.mark.parametrize("y", [0, 1, 2, 3, -2])
def test_integer_pow(y):
    check(lambda x: lax.integer_pow(x, y), arr(away_from_zero(0.5, 2.0)(np.random.default_rng(y + 5), (2, 3))))


BINARY = {  # samplers of (x, y) away from each op's singular points
    "add": (ANY, ANY), "sub": (ANY, ANY), "mul": (ANY, ANY), "div": (ANY, away_from_zero(0.5, 2.0)),
    "pow": (POSITIVE, ANY), "atan2": (away_from_zero(0.3, 2.0), away_from_zero(0.3, 2.0)),
    "rem": (away_from_zero(0.2, 1.2), away_from_zero(1.5, 2.5)),  # |x| < |y|: x / y is never an integer
    "max": None, "min": None,
}


def _operands(name, rng, x_shape, y_shape):
    if BINARY[name] is None:  # max, min: no ties, even after broadcasting
        nx = int(np.prod(x_shape))
        z = distinct(rng, (nx + int(np.prod(y_shape)),))
        return z[:nx].reshape(x_shape), z[nx:].reshape(y_shape)
    return BINARY[name][0](rng, x_shape), BINARY[name][1](rng, y_shape)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("layout", ["same", "scalar_x", "scalar_y", "unit_dim"])
@settings(max_examples=2)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=3), seed=st.integers(0, 2**16))
def test_binary(name, layout, shape, seed):
    """Equal shapes, and lax's implicit broadcasting of rank-0 and size-1 operands."""
    x_shape = {"scalar_x": (), "unit_dim": (1,) + shape[1:]}.get(layout, shape)
    y_shape = () if layout == "scalar_y" else shape
    x, y = _operands(name, np.random.default_rng(seed), x_shape, y_shape)
    check(getattr(lax, name), arr(x), arr(y))


def test_add_any():
    check(lambda x, y: lax.add_any_p.bind(x, y), arr([1.0, 2.0]), arr([3.0, -1.0]))


@pytest.mark.parametrize("scalar_which", [False, True])
def test_select_n(scalar_which):
    rng = np.random.default_rng(1)
    a, b, c = (arr(rng.normal(size=(2, 3))) for _ in range(3))
    which = jnp.asarray(True) if scalar_which else jnp.asarray(rng.integers(0, 2, (2, 3)).astype(bool))
    check(lambda a, b: lax.select_n(which, a, b), a, b)
    which3 = jnp.asarray(np.int32(2)) if scalar_which else jnp.asarray(rng.integers(0, 3, (2, 3)).astype(np.int32))
    check(lambda a, b, c: lax.select_n(which3, a, b, c), a, b, c)


@pytest.mark.parametrize("bounds", ["scalar", "full"])
def test_clamp(bounds):
    x = arr([-2.0, -0.5, 0.3, 1.7, 2.5, 0.9])
    lo, hi = (arr(-1.0), arr(2.0)) if bounds == "scalar" else (arr(np.full(6, -1.0)), arr(np.linspace(0.5, 2.2, 6)))
    check(lax.clamp, lo, x, hi)


def test_convert_element_type():
    x32 = jnp.asarray(np.array([0.5, -1.25, 3.0], np.float32))
    check(lambda x: lax.convert_element_type(x, np.float64) ** 2, x32, atol=2e-2, rtol=2e-2)
    check(lambda x: lax.convert_element_type(x, np.float32) * 3.0, arr([0.5, -1.25, 3.0]), atol=2e-2, rtol=2e-2)
    _, t = xjax.jvp(lambda x: lax.convert_element_type(x, np.int32), (arr([1.5]),), (arr([1.0]),))
    assert t.dtype == float0


# ---- reductions --------------------------------------------------------------------------------

@st.composite
def shape_and_axes(draw):
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    axes = draw(st.lists(st.integers(0, len(shape) - 1), unique=True, max_size=len(shape)))
    return shape, tuple(axes)


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min"])
@settings(max_examples=4)
@given(sa=shape_and_axes(), seed=st.integers(0, 2**16))
def test_reductions(name, sa, seed):
    shape, axes = sa
    rng = np.random.default_rng(seed)
    x = distinct(rng, shape) if name in ("reduce_max", "reduce_min") else ANY(rng, shape)
    check(lambda x: getattr(lax, name)(x, axes), arr(x))


def test_reduce_prod_with_zeros():
    """Smooth (a polynomial) but the rule must not divide by the zeros."""
    check(lambda x: lax.reduce_prod(x, (1,)), arr([[2.0, 0.0, 3.0, -1.0, 5.0], [0.0, 0.0, 1.5, 2.0, -1.0]]))
    np.testing.assert_allclose(xjax.grad(lambda x: lax.reduce_prod(x, (0,)))(arr([2.0, 0.0, 3.0, 1.0, 5.0])),
                               [0.0, 30.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(xjax.grad(lambda x: lax.reduce_prod(x, (0,)))(arr([2.0, 0.0, 3.0, 0.0, 5.0])), 0.0)
    np.testing.assert_allclose(xjax.hessian(lambda x: lax.reduce_prod(x, (0,)))(arr([2.0, 0.0, 3.0, 1.0])),
                               [[0.0, 3.0, 0.0, 0.0], [3.0, 0.0, 2.0, 6.0], [0.0, 2.0, 0.0, 0.0], [0.0, 6.0, 0.0, 0.0]])


def test_reduce_prod_empty_axis():
    x = jnp.zeros((0, 3), jnp.float64)
    np.testing.assert_array_equal(xjax.jvp(lambda x: lax.reduce_prod(x, (0,)), (x,), (x,))[1], np.zeros(3))


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
@pytest.mark.parametrize("reverse", [False, True])
@settings(max_examples=2)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=7), seed=st.integers(0, 2**16))
def test_cumulative(name, reverse, shape, seed):
    rng = np.random.default_rng(seed)
    axis = int(rng.integers(0, len(shape)))
    x = distinct(rng, shape) if name in ("cummax", "cummin") else ANY(rng, shape)
    check(lambda x: getattr(lax, name)(x, axis, reverse), arr(x))


def test_cumprod_with_zeros():
    check(lambda x: lax.cumprod(x, 1), arr([[2.0, 0.0, 3.0, 0.0, 5.0, 1.5], [0.0, -1.0, 2.0, 0.5, 0.0, 3.0]]))
    z = arr([2.0, 0.0, 3.0, 0.0, 5.0])
    np.testing.assert_allclose(xjax.jacfwd(lax.cumprod)(z), [
        [1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0, 0.0], [0.0, 6.0, 0.0, 0.0, 0.0], [0.0] * 5, [0.0] * 5])
    np.testing.assert_allclose(xjax.jacrev(lambda x: lax.cumprod(x, reverse=True))(z), [
        [0.0] * 5, [0.0] * 5, [0.0, 0.0, 0.0, 15.0, 0.0], [0.0, 0.0, 0.0, 5.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0]])


# JAX 0.10.2: jacfwd of cummax/cummin on [1, 1, 2, 2, 1, 3] (ties share as its parallel scan pairs them).
TIES = [1.0, 1.0, 2.0, 2.0, 1.0, 3.0]
CUM_TIES = {
    ("cummax", False): [[1, 0, 0, 0, 0, 0], [.5, .5, 0, 0, 0, 0], [0, 0, 1, 0, 0, 0], [0, 0, .5, .5, 0, 0],
                        [0, 0, .5, .5, 0, 0], [0, 0, 0, 0, 0, 1]],
    ("cummax", True): [[0, 0, 0, 0, 0, 1]] * 6,
    ("cummin", False): [[1, 0, 0, 0, 0, 0], [.5, .5, 0, 0, 0, 0], [.5, .5, 0, 0, 0, 0], [.5, .5, 0, 0, 0, 0],
                        [.25, .25, 0, 0, .5, 0], [.25, .25, 0, 0, .5, 0]],
    ("cummin", True): [[.25, .25, 0, 0, .5, 0], [0, .5, 0, 0, .5, 0], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 1, 0],
                       [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 1]],
}


@pytest.mark.parametrize("name, reverse", sorted(CUM_TIES))
def test_cumulative_ties_as_jax(name, reverse):
    f = lambda x: getattr(lax, name)(x, 0, reverse)  # noqa: E731
    np.testing.assert_allclose(xjax.jacfwd(f)(arr(TIES)), CUM_TIES[name, reverse])
    np.testing.assert_allclose(xjax.jacrev(f)(arr(TIES)), CUM_TIES[name, reverse])


def test_cumlogsumexp_ties_and_empty_prefixes():
    np.testing.assert_allclose(xjax.jacfwd(lax.cumlogsumexp)(arr([1.0, 1.0, 1.0, 1.0])),
                               [[1, 0, 0, 0], [.5, .5, 0, 0], [1 / 3, 1 / 3, 1 / 3, 0], [.25] * 4])
    # -inf entries (an empty sum so far) get weight 0 once a finite value joins (JAX gives NaN).
    x = arr([-np.inf, -np.inf, 0.0, 1.0])
    w = 1 / (1 + np.e)
    expected = [[1, 0, 0, 0], [.5, .5, 0, 0], [0, 0, 1, 0], [0, 0, w, 1 - w]]
    np.testing.assert_allclose(xjax.jacfwd(lax.cumlogsumexp)(x), expected)
    np.testing.assert_allclose(xjax.jacrev(lax.cumlogsumexp)(x), expected)


def test_reduce_chooser_and_elementwise_ties_as_jax():
    g = xjax.grad(lambda x: lax.reduce_max(x, (0,)))(arr([3.0, 1.0, 3.0, 2.0, 3.0]))
    np.testing.assert_allclose(g, [1 / 3, 0, 1 / 3, 0, 1 / 3])
    g = xjax.grad(lambda x: lax.reduce_min(x, (0,)))(arr([1.0, 2.0, 1.0, 1.0]))
    np.testing.assert_allclose(g, [1 / 3, 0, 1 / 3, 1 / 3])
    m = arr([[1.0, 2.0, 2.0], [0.0, 0.0, -1.0]])
    g = xjax.grad(lambda x: (lax.reduce_max(x, (1,)) * arr([1.0, 10.0])).sum())(m)
    np.testing.assert_allclose(g, [[0.0, 0.5, 0.5], [5.0, 5.0, 0.0]])
    a, b = arr([1.0, 2.0, 3.0]), arr([1.0, 3.0, 2.0])
    np.testing.assert_allclose(xjax.grad(lambda a, b: lax.max(a, b).sum(), (0, 1))(a, b), ([.5, 0, 1], [.5, 1, 0]))
    np.testing.assert_allclose(xjax.grad(lambda a, b: lax.min(a, b).sum(), (0, 1))(a, b), ([.5, 1, 0], [.5, 0, 1]))
    np.testing.assert_allclose(xjax.grad(lambda x: lax.max(x, 0.0).sum())(arr([-1.0, 0.0, 1.0])), [0, .5, 1])
    np.testing.assert_allclose(xjax.grad(lambda x: jnp.abs(x).sum())(arr([-1.0, 0.0, 1.0])), [-1, 1, 1])


def test_clamp_bounds_as_jax():
    x = arr([0.0, 1.0, 2.0, 3.0, 4.0])
    f = lambda lo, x, hi: lax.clamp(lo, x, hi).sum()  # noqa: E731
    g = xjax.grad(f, (0, 1, 2))(arr(np.full(5, 1.0)), x, arr(np.full(5, 3.0)))
    np.testing.assert_allclose(g, ([1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]))
    g = xjax.grad(f, (0, 1, 2))(arr(np.full(5, 3.0)), x, arr(np.full(5, 1.0)))  # crossed bounds
    np.testing.assert_allclose(g, ([0] * 5, [0] * 5, [0, 0, 1, 1, 1]))


def test_argmax_has_zero_tangent():
    _, t = xjax.jvp(lambda x: lax.argmax(x, 0, np.int32), (arr([1.0, 3.0]),), (arr([1.0, 1.0]),))
    assert t.dtype == float0


# ---- dot_general -------------------------------------------------------------------------------

DOTS = [
    ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
    ((4,), (4,), (((0,), (0,)), ((), ()))),
    ((4, 3), (5, 4), (((0,), (1,)), ((), ()))),
    ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2, 4), (4, 5, 2), (((2,), (0,)), ((1,), (2,)))),
    ((2, 3, 4), (4, 3, 2), (((1, 2), (1, 0)), ((0,), (2,)))),
    ((2, 3), (4,), (((), ()), ((), ()))),
]


@pytest.mark.parametrize("xs, ys, dn", DOTS)
def test_dot_general(xs, ys, dn):
    rng = np.random.default_rng(len(xs) + len(ys))
    check(lambda x, y: lax.dot_general(x, y, dn), arr(rng.normal(size=xs)), arr(rng.normal(size=ys)))


def test_dot_general_preferred_element_type():
    x32 = jnp.asarray(np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32))
    y = arr(np.random.default_rng(1).normal(size=(3, 2)))
    f = lambda x: lax.dot_general(x, lax.convert_element_type(y, np.float32), (((1,), (0,)), ((), ())),  # noqa: E731
                                  preferred_element_type=np.float64)
    check(f, x32, atol=2e-2, rtol=2e-2)
    assert xjax.grad(lambda x: f(x).sum())(x32).dtype == np.float32


# ---- layout ------------------------------------------------------------------------------------

def _x(shape, seed=0):
    return arr(np.random.default_rng(seed).normal(size=shape))


LAYOUT = {
    "reshape": (lambda x: lax.reshape(x, (6, 2)), (3, 4)),
    "reshape_dims": (lambda x: lax.reshape(x, (4, 3), dimensions=(1, 0)), (3, 4)),
    "squeeze": (lambda x: lax.squeeze(x, (0, 2)), (1, 3, 1)),
    "expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), (3, 2)),
    "broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1, 2)), (3, 1)),
    "broadcast_scalar": (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), ()),
    "broadcast": (lambda x: lax.broadcast(x, (2,)), (3,)),
    "transpose": (lambda x: lax.transpose(x, (2, 0, 1)), (2, 3, 4)),
    "slice": (lambda x: lax.slice(x, (1, 0), (4, 3)), (5, 3)),
    "slice_strided": (lambda x: lax.slice(x, (0, 1), (5, 6), (2, 3)), (5, 7)),
    "dynamic_slice": (lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), (4, 5)),
    "dynamic_slice_clamped": (lambda x: lax.dynamic_slice(x, (3, -9), (2, 2)), (4, 5)),
    "dynamic_slice_traced": (lambda x: lax.dynamic_slice(x, (jnp.int32(2), jnp.int32(1)), (2, 3)), (4, 5)),
    "concatenate": (lambda x: lax.concatenate([x, x * 2.0, lax.slice(x, (0, 0), (2, 2))], 1), (2, 3)),
    "pad": (lambda x: lax.pad(x, 1.5, ((1, 2, 1), (0, -1, 0))), (3, 4)),
    "pad_negative": (lambda x: lax.pad(x, 0.0, ((-1, 1, 2), (2, -2, 0))), (3, 4)),
    "rev": (lambda x: lax.rev(x, (0, 2)), (2, 3, 2)),
    "collapse": (lambda x: lax.collapse(x, 1), (2, 3, 2)),
}


@pytest.mark.parametrize("name", sorted(LAYOUT))
def test_layout(name):
    f, shape = LAYOUT[name]
    check(f, _x(shape))


def test_pad_value_gradient():
    check(lambda x, v: lax.pad(x, v, ((1, 2, 1), (0, -1, 1))), _x((3, 4)), arr(0.5))


@settings(max_examples=5)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3), data=st.data())
def test_transpose_any_permutation(shape, data):
    perm = data.draw(st.permutations(range(len(shape))))
    check(lambda x: lax.transpose(x, perm), _x(shape))


@pytest.mark.parametrize("start", [(1, 1), (3, 4), (-1, 0)])
def test_dynamic_update_slice(start):
    check(lambda x, u: lax.dynamic_update_slice(x, u, start), _x((4, 5)), _x((2, 3), 1))


# ---- gather and scatter ------------------------------------------------------------------------

ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
ROWS_SCATTER = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))
IN_BOUNDS = np.array([[2], [0], [2], [4]], np.int32)  # with a duplicate
OUT_OF_BOUNDS = np.array([[2], [-3], [7], [4]], np.int32)
MODES = [("clip", IN_BOUNDS), ("clip", OUT_OF_BOUNDS), ("fill", IN_BOUNDS), ("fill", OUT_OF_BOUNDS),
         ("promise_in_bounds", IN_BOUNDS)]


@pytest.mark.parametrize("mode, idx", MODES)
def test_gather(mode, idx):
    f = lambda x: lax.gather(x, jnp.asarray(idx), ROWS, (1, 3), mode=mode, fill_value=0.0)  # noqa: E731
    check(f, _x((5, 3)))


def test_gather_windows_and_batching_dims():
    dn = lax.GatherDimensionNumbers(offset_dims=(1, 2), collapsed_slice_dims=(), start_index_map=(0, 1))
    idx = jnp.asarray(np.array([[0, 1], [2, 0], [1, 1]], np.int32))
    check(lambda x: lax.gather(x, idx, dn, (2, 2), mode="clip"), _x((4, 3)))
    batched = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                         operand_batching_dims=(0,), start_indices_batching_dims=(0,))
    idx = jnp.asarray(np.array([[[2], [0]], [[1], [1]], [[3], [0]]], np.int32))
    check(lambda x: lax.gather(x, idx, batched, (1, 1), mode="fill", fill_value=0.0), _x((3, 4)))


def test_numpy_indexing():
    x = _x((4, 5))
    check(lambda x: x[jnp.asarray([3, 0, 3]), 1:4], x)
    check(lambda x: x[::-2, jnp.asarray([[1, 4], [0, 0]])], x)
    check(lambda x: jnp.take_along_axis(x, jnp.asarray(np.array([[0, 4], [1, 1], [2, 0], [3, 3]])), axis=1), x)


SCATTERS = {"scatter": lax.scatter, "scatter_add": lax.scatter_add, "scatter_max": lax.scatter_max,
            "scatter_min": lax.scatter_min}


@pytest.mark.parametrize("name", sorted(SCATTERS))
@pytest.mark.parametrize("mode, idx", MODES)
def test_scatter(name, mode, idx):
    rng = np.random.default_rng(3)
    x, u = distinct(rng, (5, 3)), distinct(rng, (4, 3)) + 0.25  # no ties between operand and updates

    def f(x, u):
        return SCATTERS[name](x, jnp.asarray(idx), u, ROWS_SCATTER, mode=mode)

    check(f, arr(x), arr(u))


@pytest.mark.parametrize("name", ["scatter", "scatter_mul"])
@pytest.mark.parametrize("mode, idx", [("clip", OUT_OF_BOUNDS), ("fill", OUT_OF_BOUNDS)])
def test_scatter_unique_indices(name, mode, idx):
    idx = np.array([[2], [-3], [1], [9]], np.int32) if mode == "clip" else idx  # unique after clamping
    fn = getattr(lax, name)
    check(lambda x, u: fn(x, jnp.asarray(idx), u, ROWS_SCATTER, mode=mode, unique_indices=True), _x((5, 3)),
          _x((4, 3), 1))


def test_scatter_mul_duplicates():
    """With duplicate indices only the operand's gradient exists (as in JAX)."""
    u = _x((4, 3), 1)
    idx = jnp.asarray(IN_BOUNDS)
    check(lambda x: lax.scatter_mul(x, idx, u, ROWS_SCATTER, mode="fill"), _x((5, 3)))
    with pytest.raises(NotImplementedError, match="scatter_mul gradients are only implemented if"):
        xjax.grad(lambda u: lax.scatter_mul(_x((5, 3)), idx, u, ROWS_SCATTER).sum())(u)


def test_numpy_updates():
    x, v = _x((4, 5)), _x((3, 5), 1)
    idx = jnp.asarray([3, 0, 3])
    check(lambda x, v: x.at[idx].set(v), x, v)
    check(lambda x, v: x.at[idx].add(v), x, v)
    check(lambda x, v: x.at[1:3, 2].set(v[0, :2]), x, v)
    grid = jnp.asarray([[0, 1], [1, 3]])  # a 2-d batch of indices, with a duplicate
    check(lambda x, v: x.at[grid].set(v), x, _x((2, 2, 5), 2))
    check(lambda x, v: x.at[grid, grid].max(v), x, arr(distinct(np.random.default_rng(4), (2, 2)) + 0.25))


# JAX 0.10.2 (x64): gradients of (f(o, u) * [1, 2, 3, 4, 5]).sum() at duplicate or out-of-bounds
# indices, for operand o = arange(5) and updates u = [10, 20, 30, 40] unless given.
DUP = jnp.asarray([1, 3, 1, 1])
OOB = jnp.asarray([-7, 0, 4, 9])
SCATTER_AS_JAX = [
    ("set", DUP, "drop", None, None, ([1, 0, 3, 0, 5], [0, 4, 0, 2])),
    ("add", DUP, "drop", None, None, ([1, 2, 3, 4, 5], [2, 4, 2, 2])),
    ("max", DUP, "drop", [0, 30, 0, 5, 0], [30, 20, 30, 1], ([1, 2 / 3, 3, 0, 5], [2 / 3, 4, 2 / 3, 0])),
    ("min", DUP, "drop", [0, 1, 0, 5, 0], [1, 5, 1, 2], ([1, 2 / 3, 3, 2, 5], [2 / 3, 2, 2 / 3, 0])),
    ("set", OOB, "drop", None, None, ([0, 2, 3, 4, 0], [0, 1, 5, 0])),
    ("add", OOB, "clip", None, None, ([1, 2, 3, 4, 5], [1, 1, 5, 5])),
]


@pytest.mark.parametrize("kind, idx, mode, o, u, expected", SCATTER_AS_JAX)
def test_scatter_ties_and_bounds_as_jax(kind, idx, mode, o, u, expected):
    o = arr(np.arange(5.0) if o is None else o)
    u = arr([10.0, 20.0, 30.0, 40.0] if u is None else u)
    w = arr(np.arange(1.0, 6.0))
    method = {"set": "set", "add": "add", "max": "max", "min": "min"}[kind]
    g = xjax.grad(lambda o, u: (getattr(o.at[idx], method)(u, mode=mode) * w).sum(), (0, 1))(o, u)
    np.testing.assert_allclose(g[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(g[1], expected[1], rtol=1e-12)


def test_scatter_duplicates_value_as_jax():
    """The primal of the JVP path (scatter-add of the winners) is the scatter's value: the last wins."""
    out, t = xjax.jvp(lambda u: arr(np.arange(5.0)).at[DUP].set(u), (arr([10.0, 20.0, 30.0, 40.0]),),
                      (arr([1.0, 2.0, 3.0, 4.0]),))
    np.testing.assert_array_equal(out, [0.0, 40.0, 2.0, 20.0, 4.0])
    np.testing.assert_array_equal(t, [0.0, 4.0, 0.0, 2.0, 0.0])


def test_gather_out_of_bounds_as_jax():
    o, w = arr(np.arange(5.0)), arr(np.arange(1.0, 5.0))
    g = xjax.grad(lambda o: (o.at[OOB].get(mode="fill", fill_value=0.0) * w).sum())(o)
    np.testing.assert_array_equal(g, [2.0, 0.0, 0.0, 0.0, 3.0])
    g = xjax.grad(lambda o: (o.at[OOB].get(mode="clip") * w).sum())(o)
    np.testing.assert_array_equal(g, [3.0, 0.0, 0.0, 0.0, 7.0])


# ---- sorting -----------------------------------------------------------------------------------

@settings(max_examples=4)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), seed=st.integers(0, 2**16))
def test_sort(shape, seed):
    rng = np.random.default_rng(seed)
    dim = int(rng.integers(0, len(shape)))
    check(lambda x: lax.sort(x, dim), arr(distinct(rng, shape)))


def test_sort_multiple_operands():
    rng = np.random.default_rng(0)
    keys, vals = arr(distinct(rng, (3, 4))), _x((3, 4), 1)
    check(lambda k, v: lax.sort((k, v), 1, num_keys=1), keys, vals)
    ints = jnp.asarray(np.array([[1, 0, 1, 0]] * 3, np.int32))  # integer first key, ties broken by the second
    check(lambda k, v: lax.sort((ints, k, v), 1, num_keys=2)[1:], keys, vals)


@pytest.mark.parametrize("k", [1, 3])
def test_top_k(k):
    check(lambda x: lax.top_k(x, k)[0], arr(distinct(np.random.default_rng(k), (2, 5))))


def test_sort_and_top_k_ties_as_jax():
    s = arr([2.0, 1.0, 2.0, 0.0, 1.0])
    perm = [[0, 0, 0, 1, 0], [0, 1, 0, 0, 0], [0, 0, 0, 0, 1], [1, 0, 0, 0, 0], [0, 0, 1, 0, 0]]
    np.testing.assert_array_equal(xjax.jacfwd(lax.sort)(s), perm)
    np.testing.assert_array_equal(xjax.jacrev(lax.sort)(s), perm)
    jac = xjax.jacfwd(lambda x, y: lax.sort((x, y), num_keys=1)[1], (0, 1))(s, arr(np.arange(5.0)))
    np.testing.assert_array_equal(jac[0], np.zeros((5, 5)))
    np.testing.assert_array_equal(jac[1], perm)
    np.testing.assert_array_equal(xjax.jacfwd(lambda x: lax.top_k(x, 3)[0])(s),
                                  [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 1, 0, 0, 0]])


# ---- the rules under jit: they see abstract values only ----------------------------------------

UNDER_JIT = {
    "gather": lambda x: x[jnp.asarray([2, 0, 2])],
    "scatter": lambda x: x.at[jnp.asarray([1, 1, 0])].set(x[:3] * 2.0),
    "scatter_max": lambda x: x.at[jnp.asarray([1, 1, 0])].max(x[1:4] + 0.25),
    "sort": lambda x: lax.sort(x, 0) * arr(np.arange(4.0))[:, None],
    "top_k": lambda x: lax.top_k(x, 2)[0],
    "cumprod": lambda x: lax.cumprod(x, 0, True),
    "cummax": lambda x: lax.cummax(x, 1),
    "reduce_prod": lambda x: lax.reduce_prod(x, (0,)),
}


@pytest.mark.parametrize("name", sorted(UNDER_JIT))
def test_rules_under_jit(name):
    x = arr(distinct(np.random.default_rng(7), (4, 3)))
    check(xjax.jit(UNDER_JIT[name]), x)
    np.testing.assert_allclose(xjax.jit(xjax.grad(lambda x: UNDER_JIT[name](x).sum()))(x),
                               xjax.grad(lambda x: UNDER_JIT[name](x).sum())(x), rtol=1e-12)


# ---- debug callbacks: primal values only, printed once -----------------------------------------

def test_debug_print_under_jvp_and_grad(capsys):
    def f(x):
        xjax.debug.print("x={}", x)
        xjax.debug.callback(lambda v: print("cb", np.asarray(v).tolist()), x * 2.0)
        return (jnp.sin(x) * x).sum()

    x = arr([0.0, 1.0])
    _, t = xjax.jvp(f, (x,), (arr([1.0, 1.0]),))
    assert capsys.readouterr().out == "x=[0. 1.]\ncb [0.0, 2.0]\n"
    g = xjax.grad(f)(x)
    assert capsys.readouterr().out == "x=[0. 1.]\ncb [0.0, 2.0]\n"
    np.testing.assert_allclose(g, np.sin([0.0, 1.0]) + np.array([0.0, 1.0]) * np.cos([0.0, 1.0]))
    np.testing.assert_allclose(float(t), float(g.sum()))
    xjax.grad(xjax.jit(f))(x)
    assert capsys.readouterr().out == "x=[0. 1.]\ncb [0.0, 2.0]\n"
    xjax.grad(lambda x: xjax.grad(f)(x).sum())(x)
    assert capsys.readouterr().out == "x=[0. 1.]\ncb [0.0, 2.0]\n"
    _, f_jvp = xjax.linearize(f, x)  # the primal runs (and prints) once; the linear map does not print
    np.testing.assert_allclose(float(f_jvp(arr([1.0, 1.0]))), float(t))
    assert capsys.readouterr().out == "x=[0. 1.]\ncb [0.0, 2.0]\n"


def test_float32_gradients_stay_float32():
    """Without x64 the rules build no 64-bit values (indices, ids and weights are 32-bit)."""
    xjax.config.update("jax_enable_x64", False)
    x = jnp.asarray(np.array([[3.0, 1.0, 2.0], [0.5, 4.0, 1.5]], np.float32))
    idx = jnp.asarray([1, 1, 0])
    fns = [lambda x: x.at[idx].set(x[0]).sum(), lambda x: x.at[idx].max(x[1]).sum(),
           lambda x: (lax.sort(x, 1) * x).sum(), lambda x: lax.top_k(x, 2)[0].sum(),
           lambda x: lax.cumprod(x, 1).sum(), lambda x: lax.cumlogsumexp(x, 0, True).sum(),
           lambda x: lax.reduce_prod(x, (0, 1))]
    for f in fns:
        g = xjax.grad(f)(x)
        assert g.dtype == np.float32 and not g.weak_type
        check_grads(f, (x,), 1)
