"""Flax runs unchanged on xjax (`install_as_jax`): a linen CNN with BatchNorm (its batch_stats a
mutable collection) and Dropout, trained with optax.adamw.

Each program runs in a fresh interpreter (install_as_jax is process-global). The references were
recorded by running the same program with JAX 0.10.2.
"""
import importlib.util
import json

import numpy as np
import pytest

from isolated import run_isolated

PRELUDE = "import xjax\nxjax.install_as_jax()\n"


def _needs(*libraries):
    for lib in libraries:
        if importlib.util.find_spec(lib) is None:
            pytest.skip(f"{lib} is not installed")


LINEN_PROGRAM = """
import json
import numpy as np
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x, train):
        x = nn.Conv(8, (3, 3), use_bias=False)(x)  # BatchNorm follows: a bias would get a zero gradient
        x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, (2, 2), (2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(32)(x)
        x = nn.Dropout(0.25, deterministic=not train)(x)
        x = nn.gelu(x)
        return nn.Dense(3)(x)


rng = np.random.RandomState(0)
images = rng.randn(16, 8, 8, 1).astype(np.float32)
labels = rng.randint(0, 3, 16)

model = CNN()
variables = model.init(jax.random.PRNGKey(0), images, train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.adamw(1e-2, weight_decay=1e-3)
opt_state = tx.init(params)


@jax.jit
def train_step(params, batch_stats, opt_state, key):
    def loss_fn(params):
        logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, images, train=True,
                                      rngs={"dropout": key}, mutable=["batch_stats"])
        loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
        return loss, updates["batch_stats"]

    (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), batch_stats, opt_state, loss


losses = []
key = jax.random.PRNGKey(1)
for step in range(5):
    key, sub = jax.random.split(key)
    params, batch_stats, opt_state, loss = train_step(params, batch_stats, opt_state, sub)
    losses.append(float(loss))

eval_logits = model.apply({"params": params, "batch_stats": batch_stats}, images[:2], train=False)
print(json.dumps({"losses": losses,
                  "bn_mean": np.asarray(batch_stats["BatchNorm_0"]["mean"]).tolist(),
                  "dense_bias": np.asarray(params["Dense_1"]["bias"]).tolist(),
                  "eval_logits": np.asarray(eval_logits).tolist()}))
"""

# Recorded from JAX 0.10.2 (the same program, with jax itself).
JAX_LINEN = {
    "losses": [1.2198776006698608, 0.9737365245819092, 0.892748236656189, 0.7965853214263916, 0.7071949243545532],
    "bn_mean": [-0.016426675021648407, -0.008346501737833023, -0.001003867364488542, 0.008698823861777782,
                0.02566521428525448, -0.007128213532269001, 0.012899777851998806, 0.006285620387643576],
    "dense_bias": [0.00700416648760438, -0.0011438258225098252, -0.000783231167588383],
    "eval_logits": [[-0.3387737572193146, -0.5021374225616455, 1.3866353034973145],
                    [0.9471665620803833, -0.466663122177124, -0.4504018723964691]],
}


def test_linen_cnn_batchnorm_dropout_adamw():
    _needs("flax", "optax")
    out = json.loads(run_isolated(LINEN_PROGRAM, PRELUDE, timeout=300))
    # The dropout masks are JAX's (the same threefry bits), so training follows JAX's to rounding.
    for name, want in JAX_LINEN.items():
        np.testing.assert_allclose(out[name], want, rtol=1e-4, atol=1e-6, err_msg=name)
