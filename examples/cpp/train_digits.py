"""Trains an MLP on scikit-learn's 8x8 digits with xjax, prints its test accuracy, and exports what
the C++ programs next to this file need into one .xjx file:

  predict(x)                     the trained model on a batch of 300 images -> predicted labels
  test_set(), train_set()        the data (images and labels), so that C++ needs no loader
  init_state()                   the trained parameters and the adam state, flat
  train_step(params, opt_state, x, y) -> (loss, params, opt_state)       one adam step, batch 32
  evaluate(params, x)            predicted labels for any parameters (to see C++ training help)

    python train_digits.py digits.xjx [epochs]
"""
import sys

import numpy as np
from sklearn.datasets import load_digits

import xjax as jax
import xjax.numpy as jnp
from xjax import optim

BATCH, TEST = 32, 300


def init_params(key, sizes=(64, 64, 64, 10)):
    params = []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        key, sub = jax.random.split(key)
        params.append({"w": jax.random.normal(sub, (n_in, n_out)) * jnp.sqrt(2.0 / n_in), "b": jnp.zeros((n_out,))})
    return params


def model(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(model(params, x)), axis=-1))


optimizer = optim.adam(learning_rate=1e-3)


@jax.jit
def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return loss, optim.apply_updates(params, updates), opt_state


@jax.jit
def evaluate(params, x):
    return jnp.argmax(model(params, x), axis=-1).astype(jnp.int32)


def main(path, epochs):
    digits = load_digits()
    x_all = (digits.data / 16.0).astype(np.float32)
    labels = digits.target.astype(np.int32)
    y_all = np.eye(10, dtype=np.float32)[labels]
    x_train, y_train, x_test, labels_test = x_all[:-TEST], y_all[:-TEST], x_all[-TEST:], labels[-TEST:]

    params = init_params(jax.random.PRNGKey(0))
    opt_state = optimizer.init(params)
    rng = np.random.default_rng(0)
    for _ in range(epochs):
        order = rng.permutation(len(x_train))
        for step in range(len(x_train) // BATCH):
            idx = order[step * BATCH:(step + 1) * BATCH]
            loss, params, opt_state = train_step(params, opt_state, x_train[idx], y_train[idx])
    accuracy = float(np.mean(np.asarray(evaluate(params, x_test)) == labels_test))
    print(f"python: loss {float(loss):.4f}, test accuracy {accuracy:.4f}")

    x_test_j, labels_test_j = jnp.asarray(x_test), jnp.asarray(labels_test)
    x_train_j, y_train_j = jnp.asarray(x_train), jnp.asarray(y_train)
    with jax.export.exporter(path) as ex:
        ex.add(lambda x: evaluate(params, x), jax.ShapeDtypeStruct((TEST, 64), jnp.float32), name="predict")
        ex.add(lambda: (x_test_j, labels_test_j), name="test_set")
        ex.add(lambda: (x_train_j, y_train_j), name="train_set")
        ex.add(lambda: (params, opt_state), name="init_state")
        ex.add(train_step, params, opt_state, jax.ShapeDtypeStruct((BATCH, 64), jnp.float32),
               jax.ShapeDtypeStruct((BATCH, 10), jnp.float32))
        ex.add(evaluate, params, jax.ShapeDtypeStruct((TEST, 64), jnp.float32))
    print(f"exported to {path}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "digits.xjx", int(sys.argv[2]) if len(sys.argv) > 2 else 20)
