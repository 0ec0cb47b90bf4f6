"""The main job's jitted train and eval steps, for any JAX-like module and optax-like optimizer library.

`train_step(state, images, labels) -> (state, loss, correct)` carries (params, opt_state) and
counts the batch's correct predictions, as seed 004's loop does, via value_and_grad(has_aux=True).
"""


def make_steps(jax, optim, model, optimizer, axis_name=None):
    """Returns (train_step, eval_step), both jitted: eval_step(params, images, labels) -> correct count.

    With `axis_name`, train_step is pmapped over that axis instead (every device, of every process,
    takes a slice of the batch: images and labels get a leading device axis) and averages the
    gradients and loss across it, so the parameters stay identical everywhere.
    """
    jnp = jax.numpy

    def loss_fn(params, images, labels):
        logits = model.apply(params, images)
        loss = optim.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, logits

    def count_correct(logits, labels):
        return jnp.sum(jnp.argmax(logits, axis=-1) == labels)

    def train_step(state, images, labels):
        params, opt_state = state
        (loss, logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, images, labels)
        correct = count_correct(logits, labels)
        if axis_name is not None:
            grads, loss = jax.lax.pmean((grads, loss), axis_name)
            correct = jax.lax.psum(correct, axis_name)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optim.apply_updates(params, updates)
        return (params, opt_state), loss, correct

    if axis_name is None:
        train_step = jax.jit(train_step)
    else:
        train_step = jax.pmap(train_step, axis_name=axis_name, in_axes=(None, 0, 0), out_axes=None)

    @jax.jit
    def eval_step(params, images, labels):
        return count_correct(model.apply(params, images), labels)

    return train_step, eval_step
