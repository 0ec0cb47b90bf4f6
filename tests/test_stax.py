"""xjax.example_libraries.stax against jax.example_libraries.stax (values in tests/jax_values_stax.py,
cases in tests/stax_cases.py): every layer's output shape, initial parameters (same key), outputs,
and for the layers in GRAD_LAYERS (max/avg/sum pooling among them) gradients under jit; shapes
with a -1 batch size; and the errors for bad layers and inputs."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import random, tree_util
from xjax.example_libraries import stax
from xjax.test_util import check_grads

from jax_values_stax import VALUES
from stax_cases import GRAD_LAYERS, LAYERS, assert_leaves_close, ramp, recorded_arrays

CASES = {label: (make, shape, use_rng) for label, make, shape, use_rng in LAYERS}
# Gradients through BatchNorm over few elements amplify float32 rounding (E[x^2] - E[x]^2 cancels):
# JAX's own float32 values for "resnet" are up to 4e-5 away from a float64 run (ours: 4e-6).
GRAD_TOLERANCE = {"resnet": (2e-4, 2e-4)}
INIT_KEY, APPLY_KEY = 42, 7


def _shape_literal(shape):
    if isinstance(shape, (tuple, list)) and shape and isinstance(shape[0], (tuple, list)):
        return [_shape_literal(s) for s in shape]
    return [int(d) for d in shape]


def _layer_with_jax_params(label):
    """The layer, its input, its apply kwargs and JAX's initial parameters in our tree structure."""
    make, in_shape, use_rng = CASES[label]
    init_fun, apply_fun = make(stax, jnp)
    _, params = init_fun(random.PRNGKey(INIT_KEY), in_shape)
    treedef = tree_util.tree_structure(params)
    jax_params = tree_util.tree_unflatten(treedef, [jnp.asarray(a) for a in
                                                    recorded_arrays(VALUES["layers"][label]["params"])])
    kwargs = {"rng": random.PRNGKey(APPLY_KEY)} if use_rng else {}
    return apply_fun, jnp.asarray(ramp(in_shape)), kwargs, jax_params


@pytest.mark.parametrize("label", list(CASES))
def test_init_matches_jax(label):
    make, in_shape, _ = CASES[label]
    out_shape, params = make(stax, jnp)[0](random.PRNGKey(INIT_KEY), in_shape)
    assert _shape_literal(out_shape) == VALUES["layers"][label]["out_shape"]
    # Same key, same draws: the initializers agree with JAX's to float32 rounding.
    assert_leaves_close(tree_util.tree_leaves(params), VALUES["layers"][label]["params"], 2e-6, 1e-7, label)


@pytest.mark.parametrize("label", list(CASES))
def test_apply_matches_jax(label):
    apply_fun, x, kwargs, params = _layer_with_jax_params(label)
    out = apply_fun(params, x, **kwargs)
    assert_leaves_close(tree_util.tree_leaves(out), VALUES["layers"][label]["outputs"], 1e-5, 1e-6, label)


@pytest.mark.parametrize("label", GRAD_LAYERS)
def test_grads_match_jax_under_jit(label):
    apply_fun, x, kwargs, params = _layer_with_jax_params(label)
    w = jnp.asarray(ramp(np.shape(apply_fun(params, x, **kwargs)), 9))
    grads = xjax.jit(xjax.grad(lambda p, x: jnp.sum(apply_fun(p, x, **kwargs) * w), argnums=(0, 1)))(params, x)
    rtol, atol = GRAD_TOLERANCE.get(label, (1e-5, 1e-6))
    assert_leaves_close(tree_util.tree_leaves(grads), VALUES["layers"][label]["grads"], rtol, atol, label)


@pytest.mark.parametrize("layer", [stax.MaxPool((2, 2), (1, 2), "SAME"), stax.AvgPool((3, 2), (2, 1), "SAME"),
                                   stax.SumPool((2, 3), padding="VALID")])
def test_pooling_numerical_gradients(layer):
    _, apply_fun = layer
    # Values 0.1 apart, so no window holds a near-tie that central differences would straddle.
    x = jnp.asarray(np.random.RandomState(0).permutation(120).reshape(2, 5, 6, 2).astype(np.float32) * 0.1 - 6)
    check_grads(lambda x: apply_fun((), x), (x,), order=2, modes=("fwd", "rev"), atol=2e-2, rtol=2e-2)


def test_dropout_keeps_rate_fraction_and_is_deterministic_per_key():
    _, apply_fun = stax.Dropout(0.75)
    x = jnp.ones((200, 50))
    y = np.asarray(apply_fun((), x, rng=random.PRNGKey(3)))
    assert set(np.unique(y).tolist()) <= {0.0, np.float32(1 / 0.75)}
    assert abs(np.mean(y != 0) - 0.75) < 0.02
    np.testing.assert_array_equal(y, np.asarray(apply_fun((), x, rng=random.PRNGKey(3))))


def test_unknown_batch_size_passes_through_init():
    # -1 marks a batch size not known yet; JAX's pooling layers turn it into 0, ours keep -1.
    init_fun, _ = stax.serial(stax.Conv(4, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
                              stax.AvgPool((2, 2), padding="SAME"), stax.Flatten, stax.Dense(3))
    out_shape, _ = init_fun(random.PRNGKey(0), (-1, 8, 8, 1))
    assert out_shape == (-1, 3)
    assert stax.MaxPool((2, 2), spec="NCHW")[0](None, (-1, 3, 6, 6))[0] == (-1, 3, 5, 5)


def test_layers_compose_under_jit_and_vmap():
    init_fun, apply_fun = stax.serial(stax.Conv(2, (3, 3)), stax.Relu, stax.MaxPool((2, 2)), stax.Flatten,
                                      stax.Dense(3))
    _, params = init_fun(random.PRNGKey(1), (1, 6, 6, 1))
    xs = jnp.asarray(ramp((4, 1, 6, 6, 1), 2))
    eager = np.stack([np.asarray(apply_fun(params, x)) for x in xs])
    batched = xjax.jit(xjax.vmap(apply_fun, in_axes=(None, 0)))(params, xs)
    np.testing.assert_allclose(np.asarray(batched), eager, rtol=1e-5, atol=1e-6)


# ---- bad layers and inputs ----------------------------------------------------------------------------------
KEY = random.PRNGKey(0)


@pytest.mark.parametrize("make, shape, error, match", [
    (lambda: stax.Conv(2, (3, 3)), (8, 8, 1), ValueError, r"GeneralConv: expected an input of rank 4 \(layout NHWC\)"),
    (lambda: stax.ConvTranspose(2, (3, 3)), (2, 8, 8, 1, 1), ValueError, "GeneralConvTranspose: expected an input"),
    (lambda: stax.MaxPool((2, 2)), (8, 8), ValueError, r"MaxPool: expected an input of rank 4 \(layout NHWC\)"),
    (lambda: stax.AvgPool((2,), spec="NCH"), (2, 3, 4, 5), ValueError, r"AvgPool: expected an input of rank 3"),
    (lambda: stax.Dense(3), (), ValueError, "Dense: the input needs at least one axis"),
    (lambda: stax.Flatten, (), ValueError, "Flatten: the input needs a leading batch axis"),
    (lambda: stax.Dense(3), (2, "4"), TypeError, "Dense: input_shape must be a sequence of ints"),
    (lambda: stax.BatchNorm(axis=(0, 3)), (4, 3, 2), ValueError, r"BatchNorm: axis \(0, 3\) out of range"),
    (lambda: stax.FanInSum, [(2, 3), (2, 4)], ValueError, "FanInSum: inputs must have the same shape"),
    (lambda: stax.FanInSum, (2, 3), TypeError, "FanInSum: expected a list of input shapes"),
    (lambda: stax.FanInConcat(1), [(2, 3), (3, 3)], ValueError, "FanInConcat: inputs must agree except along"),
    (lambda: stax.parallel(stax.Dense(2), stax.Dense(3)), [(2, 3)], ValueError, "parallel: expected 2 input shapes"),
])
def test_bad_input_shape(make, shape, error, match):
    init_fun, _ = make()
    with pytest.raises(error, match=match):
        init_fun(KEY, shape)


@pytest.mark.parametrize("make, error, match", [
    (lambda: stax.Conv(2, (3, 3), padding="FULL"), ValueError, "GeneralConv: unknown padding 'FULL'"),
    (lambda: stax.Conv(2, (3, 3), padding=((1, 1),)), ValueError, r"GeneralConv: padding needs 2 \(low, high\)"),
    (lambda: stax.Conv(2, (3, 3), padding=3), TypeError, "GeneralConv: padding must be a string or 2"),
    (lambda: stax.ConvTranspose(2, (3, 3), padding="SAME_LOWER"), ValueError,
     "GeneralConvTranspose: unknown padding 'SAME_LOWER'; expected 'SAME' or 'VALID'"),
    (lambda: stax.MaxPool((2, 2), padding="FULL"), ValueError, "MaxPool: unknown padding 'FULL'"),
    (lambda: stax.AvgPool((2, 2), padding=((0, 1), (0, 1))), TypeError, "AvgPool: padding must be 'VALID'"),
    (lambda: stax.Conv(2, (3,)), ValueError, r"GeneralConv: filter_shape must be 2 positive ints, got \(3,\)"),
    (lambda: stax.Conv(2, (3, 3), strides=(0, 1)), ValueError, "GeneralConv: strides must be 2 positive ints"),
    (lambda: stax.MaxPool((2, 2), strides=(2,)), ValueError, "MaxPool: strides must be 2 positive ints"),
    (lambda: stax.MaxPool((2, 2), spec="NHW"), ValueError, "MaxPool: spec must be a string of 4 characters"),
    (lambda: stax.GeneralConv(("NHWC", "HWIX", "NHWC"), 2, (3, 3)), TypeError, "dimension_numbers"),
    (lambda: stax.serial(stax.Dense(2), stax.relu), TypeError, r"serial: layer 1 must be an \(init_fun, apply_fun\)"),
])
def test_bad_layer_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_unknown_padding_is_also_a_runtime_error_as_in_jax():
    with pytest.raises(RuntimeError):
        stax.MaxPool((2, 2), padding="FULL")


def test_apply_with_input_of_wrong_rank():
    init_fun, apply_fun = stax.MaxPool((2, 2))
    with pytest.raises(ValueError, match=r"MaxPool: expected an input of rank 4 \(layout NHWC\), got shape \(5, 5\)"):
        apply_fun((), jnp.ones((5, 5)))
    _, conv_apply = stax.Conv(2, (2, 2))
    _, params = stax.Conv(2, (2, 2))[0](KEY, (1, 4, 4, 1))
    with pytest.raises(ValueError, match="GeneralConv: expected an input of rank 4"):
        conv_apply(params, jnp.ones((4, 4, 1)))


def test_dropout_without_key():
    _, apply_fun = stax.Dropout(0.5)
    with pytest.raises(ValueError, match="Dropout layer requires apply_fun to be called with a PRNG key"):
        apply_fun((), jnp.ones(3))


def test_serial_with_params_for_other_layers():
    _, apply_fun = stax.serial(stax.Dense(2), stax.Relu)
    with pytest.raises(ValueError, match="serial: got params for 1 layers, the network has 2"):
        apply_fun([()], jnp.ones((1, 2)))


def test_per_example_gradients_through_pooling():
    # vmap(grad) over examples, the per-example gradient idiom, equals one grad per example.
    init_fun, apply_fun = stax.serial(stax.Conv(2, (3, 3), padding="SAME"), stax.Relu, stax.MaxPool((2, 2), (2, 2)),
                                      stax.AvgPool((2, 2), padding="SAME"), stax.Flatten, stax.Dense(2),
                                      stax.LogSoftmax)
    _, params = init_fun(random.PRNGKey(2), (1, 6, 6, 1))
    xs = jnp.asarray(ramp((3, 1, 6, 6, 1), 4))

    def loss(p, x):
        return -apply_fun(p, x)[0, 0]

    batched = xjax.jit(xjax.vmap(xjax.grad(loss), in_axes=(None, 0)))(params, xs)
    for k in range(3):
        single = xjax.grad(loss)(params, xs[k])
        for b, s in zip(tree_util.tree_leaves(batched), tree_util.tree_leaves(single)):
            np.testing.assert_allclose(np.asarray(b)[k], np.asarray(s), rtol=1e-5, atol=1e-6)
