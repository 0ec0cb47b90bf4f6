"""The main job's jitted train and eval steps, for any JAX-like module and optax-like optimizer library.

`train_step(state, images, labels) -> (state, loss, correct)` carries (params, opt_state) and
counts the batch's correct predictions, as seed 004's loop does, via value_and_grad(has_aux=True).
"""


def make_steps(jax, optim, model, optimizer):
    """Returns (train_step, eval_step), both jitted: eval_step(params, images, labels) -> correct count."""
    jnp = jax.numpy

    def loss_fn(params, images, labels):
        logits = model.apply(params, images)
        loss = optim.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, logits

    def count_correct(logits, labels):
        return jnp.sum(jnp.argmax(logits, axis=-1) == labels)

    @jax.jit
    def train_step(state, images, labels):
        params, opt_state = state
        (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, images, labels)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optim.apply_updates(params, updates)
        return (params, opt_state), loss, count_correct(logits, labels)

    @jax.jit
    def eval_step(params, images, labels):
        return count_correct(model.apply(params, images), labels)

    return train_step, eval_step
