"""A Flax linen train step (CNN with BatchNorm and Dropout, optax.adamw, jitted) timed on xjax and
on JAX side by side (bench/side_by_side.py: one worker process per library, alternating rounds).

    python bench/ecosystem_flax.py [--batch 64] [--rounds 5] [--reps 20]
"""


def make_step(batch):
    import numpy as np
    import jax
    import flax.linen as nn
    import optax

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            for features in (16, 32):
                x = nn.Conv(features, (3, 3), use_bias=False)(x)
                x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
                x = nn.relu(x)
                x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.reshape((x.shape[0], -1))
            x = nn.Dropout(0.2, deterministic=not train)(nn.relu(nn.Dense(128)(x)))
            return nn.Dense(10)(x)

    rng = np.random.RandomState(0)
    images = rng.randn(batch, 28, 28, 1).astype(np.float32)
    labels = rng.randint(0, 10, batch)
    model = CNN()
    variables = model.init(jax.random.PRNGKey(0), images, train=False)
    tx = optax.adamw(1e-3, weight_decay=1e-4)
    state = [variables["params"], variables["batch_stats"], tx.init(variables["params"]), jax.random.PRNGKey(1)]

    @jax.jit
    def train_step(params, batch_stats, opt_state, key):
        key, dropout_key = jax.random.split(key)

        def loss_fn(params):
            logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, images, train=True,
                                          rngs={"dropout": dropout_key}, mutable=["batch_stats"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), updates["batch_stats"]

        (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), batch_stats, opt_state, key, loss

    def run():
        *state[:], loss = train_step(*state)
        loss.block_until_ready()

    return run


if __name__ == "__main__":
    from side_by_side import main

    main(__file__, make_step, "flax_linen_cnn_step", batch=64, reps=20)
