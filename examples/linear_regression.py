"""Linear regression by gradient descent (from the seed "JAX As Accelerated NumPy"): fit y = w*x + b to noisy
points with xjax.grad inside a jitted update. Runs unchanged on JAX with `import jax` / `import jax.numpy as jnp`.

    python examples/linear_regression.py [--steps 1000] [--lr 0.1]
"""
import argparse

import numpy as np

import xjax as jax
import xjax.numpy as jnp


def model(theta, x):
    """Computes w*x + b on a batch of inputs x."""
    w, b = theta
    return w * x + b


def loss_fn(theta, x, y):
    """Mean squared error of the model's predictions."""
    prediction = model(theta, x)
    return jnp.mean((prediction - y) ** 2)


@jax.jit
def update(theta, x, y, lr):
    """One step of gradient descent; jitted, so the whole step compiles into one graph."""
    return theta - lr * jax.grad(loss_fn)(theta, x, y)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="gradient descent steps (default: %(default)s)")
    parser.add_argument("--lr", type=float, default=0.1, help="learning rate (default: %(default)s)")
    args = parser.parse_args()

    # 100 points on the line y = 3x - 1, plus a little noise.
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(100,)).astype(np.float32)
    noise = rng.normal(scale=0.1, size=(100,)).astype(np.float32)
    ys = xs * 3 - 1 + noise

    theta = jnp.array([1.0, 1.0])
    print(f"initial loss: {float(loss_fn(theta, xs, ys)):.4f}")
    for _ in range(args.steps):
        theta = update(theta, xs, ys, args.lr)
    w, b = theta
    print(f"final loss: {float(loss_fn(theta, xs, ys)):.4f}")
    print(f"w: {w:<.2f}, b: {b:<.2f}  (the data was made with w = 3, b = -1)")


if __name__ == "__main__":
    main()
