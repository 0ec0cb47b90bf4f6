"""xjax.optim against values recorded from optax 0.2.8 (tests/optax_values.py): every optimizer for several
steps eagerly and under jit, schedules, losses; states as pytrees; a training loop; errors."""
import numpy as np
import pytest

import optax_values as ref
import xjax as jax
import xjax.numpy as jnp
from xjax import optim

NAMESPACE = {name: getattr(ref, name) for name in dir(ref) if not name.startswith("_")}


def _rounding(want):
    """One float32 ulp of the array's magnitude."""
    finite = np.abs(want[np.isfinite(want)]) if want.dtype.kind == "f" else np.zeros(1)
    return np.finfo(np.float32).eps * max(1.0, float(finite.max(initial=0.0)))


# Adam-style bias corrections divide by 1 - b2**t (0.003 for b2 = 0.999, t = 3): one ulp of b2**t there is a
# relative 2e-5 in the step, so optimizer trajectories are compared at that resolution.
STEP_RTOL, STEP_ULPS = 1e-4, 100


def _compare(expr, outs, expected, rtol=1e-5, ulps=8):
    assert len(outs) == len(expected), expr
    for i, (got, (values, dtype)) in enumerate(zip(outs, expected)):
        got = got if hasattr(got, "dtype") else np.asarray(got)  # a schedule may return a Python float
        assert str(got.dtype) == dtype, f"{expr}: output {i}"
        want = np.asarray(values, dtype)
        assert got.shape == want.shape, f"{expr}: output {i}"
        np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=ulps * _rounding(want),
                                   err_msg=f"{expr}: output {i}")


def _check(expr, expected):
    if isinstance(expected, str):  # optax raised this exception
        with pytest.raises(getattr(__builtins__, expected, None) or Exception):
            eval(expr, NAMESPACE)
        return
    out = eval(expr, NAMESPACE)
    _compare(expr, out if isinstance(out, tuple) else (out,), expected)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("expr,expected", ref.OPTIMIZERS, ids=[e for e, _ in ref.OPTIMIZERS])
def test_optimizer_steps_match_optax(expr, expected, jit):
    opt = eval(expr, NAMESPACE)
    _compare(expr, ref.run(opt, jit=jit), expected, STEP_RTOL, STEP_ULPS)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case,expected", ref.NAN_CASES, ids=[e for (e, _), _ in ref.NAN_CASES])
def test_apply_if_finite_skips_nonfinite_steps_as_optax(case, expected, jit):
    expr, nan_steps = case
    _compare(expr, ref.run(eval(expr, NAMESPACE), nan_steps=nan_steps, jit=jit), expected, STEP_RTOL, STEP_ULPS)


@pytest.mark.parametrize("expr,expected", ref.SCHEDULES, ids=[e for e, _ in ref.SCHEDULES])
def test_schedule_matches_optax(expr, expected):
    _check(expr, expected)


@pytest.mark.parametrize("expr,expected", ref.LOSSES, ids=[e for e, _ in ref.LOSSES])
def test_loss_matches_optax(expr, expected):
    _check(expr, expected)


def test_states_are_named_pytrees_like_optax():
    state = optim.adam(0.1).init(ref.P0)
    assert isinstance(state, tuple) and isinstance(state[0], optim.ScaleByAdamState)
    assert state[1] == optim.EmptyState()
    assert state[0].count.dtype == np.int32 and state[0].count.shape == ()
    assert jax.tree_util.tree_structure(state[0].mu) == jax.tree_util.tree_structure(ref.P0)
    doubled = jax.jit(lambda s: jax.tree_util.tree_map(lambda x: x * 2, s))(state)
    assert type(doubled[0]) is optim.ScaleByAdamState


def test_linear_regression_with_adam_decreases_the_loss():
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.normal(size=(64, 3)).astype(np.float32))
    y = x @ jnp.array([1.5, -2.0, 0.5]) + 0.3
    params = {"w": jnp.zeros(3), "b": jnp.zeros(())}
    opt = optim.adam(0.1)

    def loss(p):
        return jnp.mean(optim.l2_loss(x @ p["w"] + p["b"], y))

    @jax.jit
    def step(p, s):
        value, g = jax.value_and_grad(loss)(p)
        u, s = opt.update(g, s, p)
        return optim.apply_updates(p, u), s, value

    state = opt.init(params)
    losses = []
    for _ in range(200):
        params, state, value = step(params, state)
        losses.append(float(value))
    assert losses[-1] < 1e-3 * losses[0]
    worst = [max(losses[i:i + 50]) for i in range(0, 200, 50)]  # Adam overshoots a little, then settles
    assert all(b < a for a, b in zip(worst, worst[1:]))
    np.testing.assert_allclose(np.asarray(params["w"]), [1.5, -2.0, 0.5], atol=2e-2)
    assert int(state[0].count) == 200


def test_inject_hyperparams_reads_the_changed_learning_rate():
    opt = optim.inject_hyperparams(optim.sgd)(learning_rate=0.1)
    params = {"w": jnp.ones(2)}
    grads = {"w": jnp.ones(2)}
    state = opt.init(params)
    assert float(state.hyperparams["learning_rate"]) == np.float32(0.1)
    state.hyperparams["learning_rate"] = jnp.asarray(0.5)
    updates, state = jax.jit(opt.update)(grads, state, params)
    np.testing.assert_allclose(np.asarray(updates["w"]), [-0.5, -0.5])
    assert int(state.count) == 1


@pytest.mark.parametrize("call,exc,match", [
    (lambda: optim.chain(optim.sgd(0.1), optim.scale(2.0)).update(ref.P0, (optim.EmptyState(),), ref.P0),
     ValueError, "number of updates and states"),
    (lambda: optim.multi_transform({"a": optim.sgd(0.1)}, {"w": "a", "b": "z", "nested": ["a"]}).init(ref.P0),
     ValueError, "Some parameters have no corresponding transformation"),
    (lambda: optim.adamw(0.1).update(ref.P0, optim.adamw(0.1).init(ref.P0)), ValueError, "requires the current value"),
    (lambda: optim.inject_hyperparams(optim.sgd, static_args="speed"), ValueError, "static_args"),
    (lambda: optim.cosine_decay_schedule(0.1, 0), ValueError, "positive decay_steps"),
    (lambda: optim.piecewise_constant_schedule(0.1, {2: -1.0}), ValueError, "non-negative scale factors"),
    (lambda: optim.scale_by_lion(mode="soft"), ValueError, "Unknown lion mode"),
    (lambda: optim.safe_increment(jnp.array(True)), ValueError, "Cannot safely increment"),
])
def test_errors_name_the_problem(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_counts_saturate_instead_of_wrapping():
    top = jnp.array(np.iinfo(np.int32).max, jnp.int32)
    assert int(optim.safe_increment(top)) == np.iinfo(np.int32).max
    assert int(optim.safe_increment(jnp.array(4, jnp.int32))) == 5
