"""jax.nn's squareplus, sparse_plus, sparse_sigmoid, mish, tanh, log1mexp and logmeanexp, with their
gradients, against values recorded from JAX 0.10.2."""
import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp

X = jnp.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])

# Recorded from JAX 0.10.2: (f(X), vmap(grad(f))(X)).
RECORDED = {
    "squareplus": ([0.41421353816986084, 0.6180340051651001, 0.7807763814926147, 1.0, 1.2807763814926147,
                    1.6180340051651, 3.3027756214141846],
                   [0.1464466154575348, 0.27639320492744446, 0.37873217463493347, 0.5, 0.6212677955627441,
                    0.7236068248748779, 0.9160251617431641]),
    "sparse_plus": ([0.0, 0.0, 0.0625, 0.25, 0.5625, 1.0, 3.0], [0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0]),
    "sparse_sigmoid": ([0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0], [0.0, 0.25, 0.5, 0.5, 0.5, 0.25, 0.0]),
    "mish": ([-0.2525014579296112, -0.3034014403820038, -0.22074377536773682, 0.0, 0.37524524331092834,
              0.8650984764099121, 2.9865355491638184],
             [-0.1083550900220871, 0.05921675264835358, 0.28951066732406616, 0.6000000238418579,
              0.8864244222640991, 1.0490361452102661, 1.0211061239242554]),
    "tanh": ([-0.9640275835990906, -0.7615941762924194, -0.46211716532707214, 0.0, 0.46211716532707214,
              0.7615941762924194, 0.9950547218322754],
             [0.07065081596374512, 0.41997432708740234, 0.7864477634429932, 1.0, 0.7864477038383484,
              0.41997432708740234, 0.009866100735962391]),
}


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_activation_and_gradient(name):
    f = getattr(jax.nn, name)
    value, grad = RECORDED[name]
    np.testing.assert_allclose(f(X), np.float32(value), rtol=2e-7)
    np.testing.assert_allclose(jax.vmap(jax.grad(f))(X), np.float32(grad), rtol=2e-7)


def test_log1mexp_both_branches_and_custom_derivative():
    p = jnp.array([1e-8, 0.1, 0.69, 0.7, 5.0, 50.0])
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(jax.nn.log1mexp(p), np.float32([-18.42068099975586, -2.352168560028076,
                                                               -0.6963042616844177, -0.6863409876823425,
                                                               -0.006760749500244856, -1.9287498933537385e-22]),
                               rtol=2e-7)
    np.testing.assert_allclose(jax.vmap(jax.grad(jax.nn.log1mexp))(p),
                               np.float32([100000000.0, 9.508333206176758, 1.0063241720199585, 0.9864338636398315,
                                           0.006783654913306236, 1.9287498933537385e-22]), rtol=1e-6)


def test_logmeanexp():
    m = jnp.arange(6.0).reshape(2, 3)
    # Recorded from JAX 0.10.2.
    np.testing.assert_allclose(jax.nn.logmeanexp(m), np.float32(3.6644339561462402), rtol=2e-7)
    np.testing.assert_allclose(jax.nn.logmeanexp(m, axis=1), np.float32([1.3089935779571533, 4.308993816375732]),
                               rtol=2e-7)
    np.testing.assert_allclose(jax.nn.logmeanexp(m, axis=0, keepdims=True, where=m > 0.5),
                               np.float32([[3.0, 3.355440139770508, 4.355440139770508]]), rtol=2e-7)
