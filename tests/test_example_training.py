"""A tiny stax MLP and CNN trained with optimizers.adam in a jitted value_and_grad step: the loss
at every step and the final parameters agree with the same program run by JAX (recorded in
tests/jax_values_stax.py)."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random, tree_util
from xjax.example_libraries import optimizers, stax

from jax_values_stax import VALUES
from stax_cases import TRAIN_STEPS, assert_leaves_close, cnn, mlp, train_data


@pytest.mark.parametrize("kind, make", [("mlp", mlp), ("cnn", cnn)])
def test_training_matches_jax(kind, make):
    init_fun, apply_fun = make(stax)
    x, y = map(jnp.asarray, train_data(kind))
    _, params = init_fun(random.PRNGKey(0), x.shape)
    opt_init, opt_update, get_params = optimizers.adam(0.01)

    def loss(p, x, y):
        return -jnp.mean(jnp.sum(apply_fun(p, x) * y, axis=-1))

    @xjax.jit
    def step(i, state, x, y):
        value, grads = xjax.value_and_grad(loss)(get_params(state), x, y)
        return value, opt_update(i, grads, state)

    state, losses = opt_init(params), []
    for i in range(TRAIN_STEPS):
        value, state = step(i, state, x, y)
        losses.append(float(value))
    recorded = VALUES["training"][kind]
    np.testing.assert_allclose(losses, recorded["losses"], rtol=1e-5)
    assert losses[-1] < losses[0]
    assert_leaves_close(tree_util.tree_leaves(get_params(state)), recorded["params"], 1e-4, 1e-5, kind)
