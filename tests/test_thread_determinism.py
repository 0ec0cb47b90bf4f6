"""The same compiled program gives the same bits for any number of threads (JAX users report
run-to-run differences on multi-threaded CPUs, jax #39741): a CNN train step (convolutions, max
pooling, a dense layer, softmax cross-entropy, value_and_grad, SGD) run for a few steps at 1, 2 and 3
threads, in fresh processes, hashes the same."""
from isolated import digests_by_thread_count

_SCRIPT = """
import hashlib
import numpy as np
import xjax as jax
import xjax.numpy as jnp

rng = np.random.default_rng(3)
params = {
    "c1": jnp.asarray((rng.normal(size=(3, 3, 1, 16)) * 0.3).astype(np.float32)),
    "c2": jnp.asarray((rng.normal(size=(3, 3, 16, 32)) * 0.1).astype(np.float32)),
    "w": jnp.asarray((rng.normal(size=(7 * 7 * 32, 10)) * 0.02).astype(np.float32)),
}
x = jnp.asarray(rng.random((48, 28, 28, 1), dtype=np.float32))
y = jnp.asarray(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 48)])
dn = ("NHWC", "HWIO", "NHWC")

def model(p, x):
    for k in ("c1", "c2"):
        x = jax.lax.conv_general_dilated(x, p[k], (1, 1), "SAME", dimension_numbers=dn)
        x = jax.nn.relu(x)
        x = jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return x.reshape(x.shape[0], -1) @ p["w"]

def loss(p, x, y):
    return -jnp.mean(jnp.sum(y * jax.nn.log_softmax(model(p, x)), axis=-1))

@jax.jit
def step(p, x, y):
    l, g = jax.value_and_grad(loss)(p, x, y)
    return l, jax.tree_util.tree_map(lambda a, b: a - 0.05 * b, p, g)

h = hashlib.sha1()
for _ in range(3):
    l, params = step(params, x, y)
    h.update(np.asarray(l).tobytes())
for k in sorted(params):
    h.update(np.asarray(params[k]).tobytes())
print(h.hexdigest())
"""


def test_cnn_train_step_bits_do_not_depend_on_the_thread_count():
    one, two, three = digests_by_thread_count(_SCRIPT, counts=(1, 2, 3))
    assert one == two == three
