"""vmap's API: in_axes/out_axes forms, kwargs, axis_size, and JAX's errors for bad specifications."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batching_util import check_batch

R = np.random.default_rng(0)
X = R.standard_normal((3, 4)).astype(np.float32)
Y = R.standard_normal((4, 3)).astype(np.float32)


@pytest.mark.parametrize("in_axes", [(0, 1), (-2, -1), [0, 1]])
def test_in_axes_int_negative_and_list(in_axes):
    check_batch(lambda x, y: jnp.sin(x) * y + 1.0, (X, Y), in_axes=in_axes if isinstance(in_axes, tuple)
                else tuple(in_axes))
    got = xjax.vmap(lambda x, y: x * y, in_axes=in_axes)(X, Y)
    np.testing.assert_allclose(got, X * Y.T, rtol=1e-6)


def test_none_in_axes_broadcasts_the_argument():
    check_batch(lambda x, b: x - b, (X, X[0]), in_axes=(0, None))


@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_out_axes(out_axes):
    check_batch(lambda x: x * 2.0, (X,), in_axes=0, out_axes=out_axes)


def test_pytree_prefixes_for_in_and_out_axes():
    args = ({"a": X, "b": Y}, X[0])
    got = xjax.vmap(lambda d, c: {"s": d["a"] + c, "t": d["b"]}, in_axes=({"a": 0, "b": 1}, None),
                    out_axes={"s": 1, "t": 0})(*args)
    np.testing.assert_allclose(got["s"], (X + X[0]).T, rtol=1e-6)
    np.testing.assert_allclose(got["t"], Y.T, rtol=1e-6)


def test_kwargs_are_mapped_along_axis_0():
    got = xjax.vmap(lambda x, y: x + y, in_axes=(0,))(X, y=X)
    np.testing.assert_allclose(got, 2 * X, rtol=1e-6)


def test_unmapped_outputs_are_broadcast_and_none_out_axes_keeps_them():
    got = xjax.vmap(lambda x: 2.0, axis_size=3, in_axes=None)(X)
    np.testing.assert_array_equal(got, np.full(3, 2.0, np.float32))
    a, b = xjax.vmap(lambda x, c: (x + 1.0, c * 2.0), in_axes=(0, None), out_axes=(0, None))(X, X[0])
    np.testing.assert_allclose(a, X + 1, rtol=1e-6)
    np.testing.assert_allclose(b, X[0] * 2, rtol=1e-6)


def test_nested_vmap_is_an_outer_product():
    f = xjax.vmap(xjax.vmap(lambda a, b: a * b, in_axes=(None, 0)), in_axes=(0, None))
    np.testing.assert_allclose(f(X[:, 0], Y[:, 0]), np.outer(X[:, 0], Y[:, 0]), rtol=1e-6)


def _raises(exc, first_line, fn):
    with pytest.raises(exc) as e:
        fn()
    assert str(e.value).splitlines()[0] == first_line, str(e.value)
    return str(e.value)


def test_inconsistent_sizes_lists_each_argument():
    msg = _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:",
                  lambda: xjax.vmap(lambda x, y, z: x)(jnp.ones(3), jnp.ones((2, 3)), jnp.ones(3)))
    assert msg.splitlines()[1:] == [
        "  * most axes (2 of them) had size 3, e.g. axis 0 of argument x of type float32[3];",
        "  * one axis had size 2: axis 0 of argument y of type float32[2,3]"]
    msg = _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:",
                  lambda: xjax.vmap(lambda x: x, axis_size=2)(jnp.ones(3)))
    assert "the `axis_size` argument was 2" in msg


def test_bad_specifications():
    _raises(ValueError, "vmap in_axes must be an int, None, or a tuple of entries corresponding to the positional "
            "arguments passed to the function, but got len(in_axes)=2, len(args)=1",
            lambda: xjax.vmap(lambda x: x, in_axes=(0, 0))(jnp.ones(3)))
    _raises(TypeError, "vmap in_axes must be an int, None, or (nested) container with those types as leaves, "
            "but got (0.5,).", lambda: xjax.vmap(lambda x: x, in_axes=(0.5,)))
    _raises(ValueError, "vmap in_axes specification must be a tree prefix of the corresponding value; ",
            lambda: xjax.vmap(lambda x: x, in_axes=({"a": 0},))({"b": jnp.ones(3)}))
    _raises(ValueError, "vmap was requested to map its argument along axis 1, which implies that its rank should "
            "be at least 2, but is only 1 (its shape is (3,))", lambda: xjax.vmap(lambda x: x, in_axes=1)(jnp.ones(3)))
    _raises(ValueError, "vmap was requested to map its argument along axis -2, which implies that its rank should "
            "be at least 2, but is only 1 (its shape is (3,))", lambda: xjax.vmap(lambda x: x, in_axes=-2)(jnp.ones(3)))
    _raises(ValueError, "at vmap out_axes, got axis spec None but output was batched on axis 0",
            lambda: xjax.vmap(lambda x: x, out_axes=None)(jnp.ones(3)))
    _raises(ValueError, "vmap must have at least one non-None value in in_axes or axis_size must be specified",
            lambda: xjax.vmap(lambda x: x, in_axes=None)(jnp.ones(3)))
    _raises(ValueError, "axis 2 is out of bounds for array of dimension 1",
            lambda: xjax.vmap(lambda x: x, out_axes=2)(jnp.ones(3)))
    _raises(ValueError, "vmap was requested to map its argument along axis 0, which implies that its rank should "
            "be at least 1, but is only 0 (its shape is ())", lambda: xjax.vmap(lambda x: x)(1.0))


def test_python_control_flow_on_a_batched_value_raises():
    with pytest.raises(TypeError, match="Attempted boolean conversion of traced array with shape bool"):
        xjax.vmap(lambda x: 1 if x > 0 else 0)(jnp.ones(3))


@pytest.mark.parametrize("name", ["add", "sub", "mul", "max", "lt", "atan2"])
@pytest.mark.parametrize("axes", [(0, 0), (1, 0), (None, 1), (0, None)])
def test_binary_elementwise_rules(name, axes):
    from xjax import lax

    op = getattr(lax, name)
    a = R.standard_normal((3, 3)).astype(np.float32)
    b = R.standard_normal((3, 3)).astype(np.float32)
    if axes[0] is None:
        a = a[0]
    if axes[1] is None:
        b = b[0]
    check_batch(op, (a, b), in_axes=axes)
    check_batch(op, (a, b), in_axes=axes, jit=True)

