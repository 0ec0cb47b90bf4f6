"""Writes tests/jax_values_stax.py: what jax.example_libraries (stax, optimizers) gives for the
cases in tests/stax_cases.py.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_stax_values.py
"""
import os
import pprint
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.example_libraries import optimizers, stax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import stax_cases as cases  # noqa: E402

INIT_KEY, APPLY_KEY = 42, 7


def shape_literal(shape):
    """Output shapes as nested lists of ints (JAX gives numpy ints, tuples, lists or zips)."""
    if isinstance(shape, (tuple, list, zip)) and not all(np.ndim(d) == 0 and not isinstance(d, (tuple, list))
                                                         for d in shape):
        return [shape_literal(s) for s in shape]
    return [int(d) for d in shape]


class F32(float):
    """A float32 value written with its shortest repr (parses back to the same float32)."""

    def __repr__(self):
        return str(np.float32(self))


def leaves(tree):
    """Each leaf as (shape, dtype, flat values)."""
    out = []
    for x in jax.tree.leaves(tree):
        x = np.asarray(x)
        flat = [F32(v) for v in x.ravel().tolist()] if x.dtype == np.float32 else x.ravel().tolist()
        out.append((list(x.shape), str(x.dtype), flat))
    return out


def record_layers():
    out = {}
    for label, make, in_shape, use_rng in cases.LAYERS:
        init_fun, apply_fun = make(stax, jnp)
        out_shape, params = init_fun(jax.random.PRNGKey(INIT_KEY), in_shape)
        kwargs = {"rng": jax.random.PRNGKey(APPLY_KEY)} if use_rng else {}
        x = jnp.asarray(cases.ramp(in_shape))
        y = apply_fun(params, x, **kwargs)
        entry = {"out_shape": shape_literal(out_shape), "params": leaves(params), "outputs": leaves(y)}
        if label in cases.GRAD_LAYERS:
            w = jnp.asarray(cases.ramp(y.shape, 9))
            g = jax.grad(lambda p, x: jnp.sum(apply_fun(p, x, **kwargs) * w), argnums=(0, 1))(params, x)
            entry["grads"] = leaves(g)
        out[label] = entry
    return out


def record_optimizers():
    out = {}
    for label, make in cases.OPTIMIZERS:
        opt_init, opt_update, get_params = make(optimizers)
        state = opt_init(jax.tree.map(jnp.asarray, cases.opt_params()))
        steps = []
        for i in range(cases.OPT_STEPS):
            state = opt_update(i, jax.tree.map(jnp.asarray, cases.opt_grads(i)), state)
            steps.append(leaves(get_params(state)))
        out[label] = {"params": steps, "state": leaves(state)}
    return out


def record_schedules():
    out = {}
    for label, make in cases.SCHEDULES:
        schedule = make(optimizers)
        out[label] = {"python": [float(schedule(i)) for i in cases.SCHEDULE_STEPS],
                      "array": [float(schedule(jnp.int32(i))) for i in cases.SCHEDULE_STEPS]}
    return out


def record_tree_helpers():
    grads = jax.tree.map(jnp.asarray, cases.opt_grads(0))
    return {"l2_norm": float(optimizers.l2_norm(grads)),
            "clip_1": leaves(optimizers.clip_grads(grads, 1.0)),
            "clip_100": leaves(optimizers.clip_grads(grads, 100.0))}


def record_training():
    out = {}
    for kind, make in (("mlp", cases.mlp), ("cnn", cases.cnn)):
        init_fun, apply_fun = make(stax)
        x, y = map(jnp.asarray, cases.train_data(kind))
        _, params = init_fun(jax.random.PRNGKey(0), x.shape)
        opt_init, opt_update, get_params = optimizers.adam(0.01)

        def loss(p, x, y):
            return -jnp.mean(jnp.sum(apply_fun(p, x) * y, axis=-1))

        @jax.jit
        def step(i, state, x, y):
            value, g = jax.value_and_grad(loss)(get_params(state), x, y)
            return value, opt_update(i, g, state)

        state, losses = opt_init(params), []
        for i in range(cases.TRAIN_STEPS):
            value, state = step(i, state, x, y)
            losses.append(float(value))
        out[kind] = {"losses": losses, "params": leaves(get_params(state))}
    return out


def main():
    values = {"layers": record_layers(), "optimizers": record_optimizers(), "schedules": record_schedules(),
              "tree_helpers": record_tree_helpers(), "training": record_training()}
    path = os.path.join(os.path.dirname(HERE), "jax_values_stax.py")
    with open(path, "w") as f:
        f.write(f'"""Values recorded from jax {jax.__version__} (jax.example_libraries) for tests/stax_cases.py '
                '(by tools/record_stax_values.py).\n\nlayers[label]: out_shape, params / outputs / grads as '
                '(shape, dtype, flat values) leaves; optimizers[label]: params leaves after each step, final state '
                'leaves."""\n\n')
        f.write("VALUES = " + pprint.pformat(values, width=116, compact=True) + "\n")


if __name__ == "__main__":
    main()
