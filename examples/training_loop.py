"""A training loop written from scratch (from the seed "Writing a training loop from scratch"): an MLP on
scikit-learn's 8x8 digits, a jitted train_step that carries (params, optimizer state, metric state) and uses
value_and_grad(has_aux=True), an eval_step, and an accuracy metric. With JAX: `import jax`, `import optax as optim`.

    python examples/training_loop.py [--epochs 20] [--batch-size 32]
"""
import argparse

import numpy as np
from sklearn.datasets import load_digits

import xjax as jax
import xjax.numpy as jnp
from xjax import optim


def init_params(key, sizes=(64, 64, 64, 10)):
    """He-normal weights and zero biases for each dense layer."""
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append({"w": jax.random.normal(sub, (n_in, n_out)) * jnp.sqrt(2.0 / n_in), "b": jnp.zeros((n_out,))})
    return params


def model(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(y, logits):
    """Softmax cross-entropy against one-hot labels."""
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(logits), axis=-1))


def update_accuracy(metric, y, logits):
    """The metric state is (correct, total): the step adds this batch's counts."""
    correct, total = metric
    hits = jnp.sum(jnp.argmax(logits, axis=-1) == jnp.argmax(y, axis=-1))
    return correct + hits, total + y.shape[0]


def compute_loss_and_updates(params, metric, x, y):
    """The loss to differentiate, with the updated metric as auxiliary output."""
    logits = model(params, x)
    return loss_fn(y, logits), update_accuracy(metric, y, logits)


grad_fn = jax.value_and_grad(compute_loss_and_updates, has_aux=True)
optimizer = optim.adam(learning_rate=1e-3)


@jax.jit
def train_step(state, data):
    """A stateless step: everything that changes lives in `state`, which comes back updated."""
    params, opt_state, metric = state
    x, y = data
    (loss, metric), grads = grad_fn(params, metric, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optim.apply_updates(params, updates)
    return loss, (params, opt_state, metric)


@jax.jit
def eval_step(params, metric, data):
    x, y = data
    logits = model(params, x)
    return loss_fn(y, logits), update_accuracy(metric, y, logits)


def zero_metric():
    return jnp.array(0, dtype=jnp.int32), jnp.array(0, dtype=jnp.int32)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=20, help="passes over the training set (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=32, help="examples per step (default: %(default)s)")
    args = parser.parse_args()

    digits = load_digits()
    x_all = (digits.data / 16.0).astype("float32")
    y_all = np.eye(10, dtype="float32")[digits.target]
    x_train, y_train = x_all[:-300], y_all[:-300]
    x_val, y_val = x_all[-300:], y_all[-300:]

    params = init_params(jax.random.PRNGKey(0))
    state = (params, optimizer.init(params), zero_metric())
    rng = np.random.default_rng(0)
    for epoch in range(args.epochs):
        order = rng.permutation(len(x_train))
        params, opt_state, _ = state
        state = (params, opt_state, zero_metric())  # accuracy per epoch: reset the metric
        for step in range(len(x_train) // args.batch_size):
            idx = order[step * args.batch_size:(step + 1) * args.batch_size]
            loss, state = train_step(state, (x_train[idx], y_train[idx]))
        correct, total = state[2]
        print(f"epoch {epoch + 1}: loss {float(loss):.4f}, train accuracy {int(correct) / int(total):.3f}")

    metric = zero_metric()
    for start in range(0, len(x_val), args.batch_size):
        batch = (x_val[start:start + args.batch_size], y_val[start:start + args.batch_size])
        _, metric = eval_step(state[0], metric, batch)
    print(f"validation accuracy: {int(metric[0]) / int(metric[1]):.3f}")


if __name__ == "__main__":
    main()
