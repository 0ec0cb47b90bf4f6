"""An Equinox train step (eqx.nn.MLP, filter_jit + filter_value_and_grad, SGD through
eqx.apply_updates) timed on xjax and on JAX side by side
(bench/side_by_side.py: one worker process per library, alternating rounds).

    python bench/ecosystem_equinox.py [--batch 256] [--rounds 5] [--reps 50]
"""


def make_step(batch):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import equinox as eqx

    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.randn(batch, 32).astype(np.float32))
    y = jnp.asarray(rng.randn(batch, 1).astype(np.float32))
    model = eqx.nn.MLP(32, 1, width_size=128, depth=3, activation=jax.nn.relu, key=jax.random.PRNGKey(0))

    @eqx.filter_jit
    def train_step(model, x, y):
        def loss(model):
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)

        value, grads = eqx.filter_value_and_grad(loss)(model)
        return eqx.apply_updates(model, jax.tree.map(lambda g: -1e-2 * g, grads)), value

    state = [model]

    def run():
        state[0], value = train_step(state[0], x, y)
        value.block_until_ready()

    return run


if __name__ == "__main__":
    from side_by_side import main

    main(__file__, make_step, "equinox_mlp_step", batch=256, reps=50)
