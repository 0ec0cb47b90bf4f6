"""xjax.example_libraries.optimizers against jax.example_libraries.optimizers (values in
tests/jax_values_stax.py, cases in tests/stax_cases.py): every optimizer for several steps, eager
and under jit; every schedule at Python and traced steps; l2_norm and clip_grads; OptimizerState
as a pytree (through jit, pack/unpack); and the errors."""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from xjax import tree_util
from xjax.example_libraries import optimizers

from jax_values_stax import VALUES
from stax_cases import OPT_STEPS, OPTIMIZERS, SCHEDULE_STEPS, SCHEDULES, assert_leaves_close, opt_grads, opt_params

MAKE_OPTIMIZER = dict(OPTIMIZERS)
MAKE_SCHEDULE = dict(SCHEDULES)


def _tree(fn):
    return tree_util.tree_map(jnp.asarray, fn)


@pytest.mark.parametrize("label", list(MAKE_OPTIMIZER))
def test_optimizer_steps_match_jax(label):
    opt_init, opt_update, get_params = MAKE_OPTIMIZER[label](optimizers)
    state = opt_init(_tree(opt_params()))
    for i in range(OPT_STEPS):
        state = opt_update(i, _tree(opt_grads(i)), state)
        assert_leaves_close(tree_util.tree_leaves(get_params(state)), VALUES["optimizers"][label]["params"][i],
                            2e-6, 1e-7, f"{label} step {i}")
    assert_leaves_close(tree_util.tree_leaves(state), VALUES["optimizers"][label]["state"], 2e-6, 1e-7, label)


@pytest.mark.parametrize("label", list(MAKE_OPTIMIZER))
def test_optimizer_steps_under_jit(label):
    # The step is traced, so schedules and bias corrections compute in float32 (JAX's Python steps: float64).
    opt_init, opt_update, get_params = MAKE_OPTIMIZER[label](optimizers)

    @xjax.jit
    def step(i, state, grads):
        state = opt_update(i, grads, state)
        return state, get_params(state)

    state = opt_init(_tree(opt_params()))
    for i in range(OPT_STEPS):
        state, params = step(i, state, _tree(opt_grads(i)))
        assert isinstance(state, optimizers.OptimizerState)
        assert_leaves_close(tree_util.tree_leaves(params), VALUES["optimizers"][label]["params"][i], 1e-5, 1e-6,
                            f"{label} step {i}")


@pytest.mark.parametrize("label", list(MAKE_SCHEDULE))
def test_schedule_matches_jax(label):
    schedule = MAKE_SCHEDULE[label](optimizers)
    recorded = VALUES["schedules"][label]
    python = [float(schedule(i)) for i in SCHEDULE_STEPS]
    np.testing.assert_allclose(python, recorded["python"], rtol=1e-6, err_msg=label)
    array = [float(schedule(jnp.int32(i))) for i in SCHEDULE_STEPS]
    np.testing.assert_allclose(array, recorded["array"], rtol=1e-6, err_msg=label)
    traced = xjax.jit(xjax.vmap(lambda i: jnp.asarray(schedule(i), jnp.float32)))(jnp.asarray(SCHEDULE_STEPS))
    np.testing.assert_allclose(np.asarray(traced), recorded["array"], rtol=1e-6, err_msg=label)


def test_l2_norm_and_clip_grads_match_jax():
    grads = _tree(opt_grads(0))
    np.testing.assert_allclose(float(optimizers.l2_norm(grads)), VALUES["tree_helpers"]["l2_norm"], rtol=1e-6)
    for max_norm, key in ((1.0, "clip_1"), (100.0, "clip_100")):
        clipped = xjax.jit(optimizers.clip_grads, static_argnums=1)(grads, max_norm)
        assert tree_util.tree_structure(clipped) == tree_util.tree_structure(grads)
        assert_leaves_close(tree_util.tree_leaves(clipped), VALUES["tree_helpers"][key], 1e-6, 1e-7, key)
    assert float(optimizers.l2_norm({})) == 0.0


# ---- OptimizerState is a pytree -----------------------------------------------------------------------------
def test_state_is_a_pytree_of_the_moments_only():
    opt_init, _, _ = optimizers.adam(0.1)
    params = _tree(opt_params())
    state = opt_init(params)
    leaves, treedef = tree_util.tree_flatten(state)
    assert len(leaves) == 3 * len(tree_util.tree_leaves(params))  # (x, m, v) per parameter
    rebuilt = tree_util.tree_unflatten(treedef, leaves)
    assert isinstance(rebuilt, optimizers.OptimizerState)
    assert rebuilt.tree_def == state.tree_def and rebuilt.subtree_defs == state.subtree_defs
    doubled = tree_util.tree_map(lambda x: 2 * x, state)
    assert isinstance(doubled, optimizers.OptimizerState)
    np.testing.assert_allclose(np.asarray(doubled.packed_state[0][0]), 2 * np.asarray(state.packed_state[0][0]))


def test_state_round_trips_through_jit_and_keeps_its_structure():
    opt_init, opt_update, get_params = optimizers.momentum(0.1, 0.9)
    state = opt_init(_tree(opt_params()))
    identity = xjax.jit(lambda s: s)(state)
    assert tree_util.tree_structure(identity) == tree_util.tree_structure(state)
    for a, b in zip(tree_util.tree_leaves(identity), tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    calls = []

    @xjax.jit
    def step(i, state):
        calls.append(1)
        return opt_update(i, _tree(opt_grads(0)), state)

    for i in range(3):
        state = step(i, state)
    assert len(calls) == 1  # the state's structure is the same every step: one trace
    assert tree_util.tree_structure(get_params(state)) == tree_util.tree_structure(opt_params())


def test_sm3_of_a_scalar_parameter_under_jit():
    # sm3 keeps the parameter's shape in its state (as JAX's does); get_params must not need it concretely.
    opt_init, opt_update, get_params = optimizers.sm3(0.1)
    state = opt_init(jnp.float32(2.0))
    params = xjax.jit(lambda s: get_params(opt_update(0, jnp.float32(0.5), s)))(state)
    assert np.shape(params) == ()
    np.testing.assert_allclose(float(params), 2.0 - 0.1 * 0.1 * 0.5 / 0.5, rtol=1e-6)


def test_pack_and_unpack_optimizer_state():
    opt_init, opt_update, get_params = optimizers.adagrad(0.1)
    state = opt_update(0, _tree(opt_grads(0)), opt_init(_tree(opt_params())))
    marked = optimizers.unpack_optimizer_state(state)
    assert set(marked) == {"w", "b", "rest"} and isinstance(marked["w"], optimizers.JoinPoint)
    x, g_sq, m = marked["w"].subtree
    np.testing.assert_array_equal(np.asarray(x), np.asarray(get_params(state)["w"]))
    packed = optimizers.pack_optimizer_state(marked)
    assert tree_util.tree_structure(packed) == tree_util.tree_structure(state)
    for a, b in zip(tree_util.tree_leaves(packed), tree_util.tree_leaves(state)):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_optimizer_decorator_lifts_an_array_optimizer_to_pytrees():
    @optimizers.optimizer
    def halve(step_size):
        return (lambda x0: (x0, jnp.zeros_like(x0)),
                lambda i, g, s: (s[0] - step_size * g, s[1] + g),
                lambda s: s[0])

    opt = halve(0.5)
    assert isinstance(opt, optimizers.Optimizer) and halve.__name__ == "halve"
    state = opt.update_fn(0, {"a": jnp.ones(2), "b": [jnp.float32(4.0)]},
                          opt.init_fn({"a": jnp.zeros(2), "b": [jnp.float32(1.0)]}))
    params = opt.params_fn(state)
    np.testing.assert_allclose(np.asarray(params["a"]), [-0.5, -0.5])
    np.testing.assert_allclose(float(params["b"][0]), -1.0)


# ---- errors ---------------------------------------------------------------------------------------------------
def test_gradient_tree_of_another_structure():
    opt_init, opt_update, _ = optimizers.sgd(0.1)
    state = opt_init({"w": jnp.ones(2), "b": jnp.ones(1)})
    with pytest.raises(TypeError, match="gradient tree that did not match the parameter tree structure"):
        opt_update(0, {"w": jnp.ones(2)}, state)


def test_update_changing_the_state_structure():
    @optimizers.optimizer
    def bad():
        return (lambda x0: (x0,), lambda i, g, s: (s[0], g), lambda s: s[0])

    opt_init, opt_update, _ = bad()
    with pytest.raises(TypeError, match="produced an output structure that did not match its input structure"):
        opt_update(0, [jnp.ones(2)], opt_init([jnp.ones(2)]))


def test_state_of_the_wrong_type():
    _, opt_update, get_params = optimizers.sgd(0.1)
    with pytest.raises(TypeError, match="get_params function: expected an OptimizerState"):
        get_params({"w": jnp.ones(2)})
    with pytest.raises(TypeError, match="update function: expected an OptimizerState"):
        opt_update(0, jnp.ones(2), jnp.ones(2))
    with pytest.raises(TypeError, match="pack_optimizer_state: every leaf must be a JoinPoint"):
        optimizers.pack_optimizer_state({"w": jnp.ones(2)})


@pytest.mark.parametrize("step_size", [jnp.ones(2), [0.1, 0.2], "fast"])
def test_step_size_neither_scalar_nor_schedule(step_size):
    with pytest.raises(TypeError, match="step_size must be a scalar or a schedule"):
        optimizers.adam(step_size)


@pytest.mark.parametrize("boundaries, values, match", [
    ([1, 2], [1.0, 2.0], "boundaries length must be one shorter than values length"),
    ([[1, 2]], [[1.0, 2.0, 3.0]], "boundaries and values must be sequences"),
])
def test_piecewise_constant_bad_arguments(boundaries, values, match):
    with pytest.raises(ValueError, match=match):
        optimizers.piecewise_constant(boundaries, values)


def test_state_as_a_fori_loop_carry():
    # As in JAX's examples/mnist_vae.py: the optimizer state is the carry of a jitted fori_loop.
    opt_init, opt_update, get_params = optimizers.adam(0.01)
    grads = _tree(opt_grads(0))

    @xjax.jit
    def run(state):
        return xjax.lax.fori_loop(0, OPT_STEPS, lambda i, s: opt_update(i, grads, s), state)

    looped = run(opt_init(_tree(opt_params())))
    state = opt_init(_tree(opt_params()))
    for i in range(OPT_STEPS):
        state = opt_update(i, grads, state)
    for a, b in zip(tree_util.tree_leaves(looped), tree_util.tree_leaves(state)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
