"""vmap of the jnp functions (and stop_gradient, checkpoint_name) built on the layout, reduction and
sorting primitives, against a Python loop, eager and jitted."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batch_cases import check_eager_and_jit, random_array

R = np.random.default_rng(0)
X = random_array(R, (3, 4), "float32")
X3 = random_array(R, (3, 4, 5), "float32")
I3 = random_array(R, (3, 4, 5), "int32")
S = random_array(R, (3,), "float32")


def test_where_with_a_mapped_scalar():
    check_eager_and_jit(lambda x, s: jnp.where(x > 0, x, s), (X, S), (0, 0))
    got = xjax.vmap(lambda x, s: jnp.where(x > 0, x, s))(X, S)
    np.testing.assert_array_equal(np.asarray(got), np.where(X > 0, X, S[:, None]))


FUNS = {
    "sum_axis": lambda x: jnp.sum(x, axis=1),
    "sum_keepdims": lambda x: jnp.sum(x, axis=(0, -1), keepdims=True),
    "max": lambda x: jnp.max(x, axis=0),
    "mean": lambda x: jnp.mean(x, axis=-1),
    "any": lambda x: jnp.any(x > 0, axis=1),
    "sort": lambda x: jnp.sort(x, axis=0),
    "argsort": lambda x: jnp.argsort(x, axis=-1),
    "argmax": lambda x: jnp.argmax(x, axis=1),
    "argmin_flat": lambda x: jnp.argmin(x),
    "cumsum": lambda x: jnp.cumsum(x, axis=-1),
    "cumprod": lambda x: jnp.cumprod(x, axis=0),
    "concatenate": lambda x: jnp.concatenate([x, x[:1], jnp.zeros((2,) + x.shape[1:], x.dtype)]),
    "stack": lambda x: jnp.stack([x, x + 1], axis=-1),
    "pad": lambda x: jnp.pad(x, ((1, 2), (0, 1))),
    "pad_value": lambda x: jnp.pad(x, 1, constant_values=7),
    "slice": lambda x: x[1:3],
    "strided_slice": lambda x: x[::-2, 1:],
    "T": lambda x: x.T,
    "reshape": lambda x: jnp.reshape(x, (-1,)),
    "reshape_F": lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1], -1), order="F"),
    "squeeze_expand": lambda x: jnp.squeeze(jnp.expand_dims(x, 1), 1),
    "broadcast_to": lambda x: jnp.broadcast_to(x[:, None], (x.shape[0], 2) + x.shape[1:]),
    "flip": lambda x: jnp.flip(x, 0),
    "moveaxis": lambda x: jnp.moveaxis(x, 0, -1),
    "stop_gradient": lambda x: xjax.lax.stop_gradient(x) * 2,
    "checkpoint_name": lambda x: xjax.ad_checkpoint.checkpoint_name(x, "n") + 1,
}


@pytest.mark.parametrize("name", sorted(FUNS))
@pytest.mark.parametrize("x", [X3, I3], ids=["float32", "int32"])
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_jnp_functions(name, x, in_axis):
    check_eager_and_jit(FUNS[name], (x,), in_axis, tol=1e-5)


def test_top_k_and_sort_with_values_unmapped():
    keys = random_array(R, (3, 5), "float32")
    vals = np.arange(5, dtype=np.int32)
    check_eager_and_jit(lambda k, v: xjax.lax.sort_key_val(k, v), (keys, vals), (0, None))
    check_eager_and_jit(lambda k: xjax.lax.top_k(k, 3), (keys,), -1)


def _loss(x):  # sort is left out: its gradient is a gather (batched on another branch)
    y = jnp.concatenate([jnp.cumsum(x, axis=0), jnp.pad(x, ((0, 1), (1, 0)))[1:]], axis=1)
    return jnp.sum(jnp.flip(y, -1)[:, ::2] ** 2) + jnp.max(jnp.reshape(y.T, (-1,)))


def test_per_example_gradients_and_gradient_of_vmap():
    check_eager_and_jit(xjax.grad(_loss), (X3,), 1, tol=1e-5)
    got = xjax.grad(lambda x: jnp.sum(xjax.vmap(_loss, in_axes=-1)(x)))(X3)
    want = np.stack([np.asarray(xjax.grad(_loss)(X3[..., i])) for i in range(X3.shape[-1])], -1)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_nested_vmap():
    check_eager_and_jit(xjax.vmap(lambda x: jnp.cumsum(jnp.sort(x)[::-1]), in_axes=1), (X3,), 2, tol=1e-5)
