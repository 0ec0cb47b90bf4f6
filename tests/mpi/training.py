"""Run under mpirun by tests/test_distributed.py: data-parallel training of an MLP on sklearn's
digits. Each process takes its slice of every batch; pmap averages the gradients with pmean. The
parameters must match a one-process run on the full batches to float32 rounding, and be the same
on every process."""
import functools

import numpy as np
from sklearn.datasets import load_digits

import xjax
import xjax.numpy as jnp
from xjax import lax, optim
from xjax.experimental import multihost_utils

xjax.distributed.initialize()
P, p = xjax.process_count(), xjax.process_index()
L = xjax.local_device_count()

digits = load_digits()
X = (digits.data / 16.0).astype(np.float32)
Y = digits.target.astype(np.int32)
BATCH, STEPS = 120, 15  # divisible by 2 and 3 processes


def init(key):
    k1, k2 = xjax.random.split(key)
    return {"w1": xjax.random.normal(k1, (64, 32)) * 0.1, "b1": jnp.zeros(32),
            "w2": xjax.random.normal(k2, (32, 10)) * 0.1, "b2": jnp.zeros(10)}


def loss_fn(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return optim.softmax_cross_entropy_with_integer_labels(logits, y).mean()


opt = optim.adam(1e-2)


@functools.partial(xjax.pmap, axis_name="batch", in_axes=(None, None, 0, 0), out_axes=None)
def parallel_step(params, state, x, y):
    loss, grads = xjax.value_and_grad(loss_fn)(params, x, y)
    grads = lax.pmean(grads, "batch")
    updates, state = opt.update(grads, state, params)
    return optim.apply_updates(params, updates), state, lax.pmean(loss, "batch")


@xjax.jit
def full_step(params, state, x, y):
    loss, grads = xjax.value_and_grad(loss_fn)(params, x, y)
    updates, state = opt.update(grads, state, params)
    return optim.apply_updates(params, updates), state, loss


params = ref = init(xjax.random.PRNGKey(0))
state = ref_state = opt.init(params)
per_device = BATCH // (P * L)
for step in range(STEPS):
    lo = step * BATCH % (len(X) - BATCH)
    xb, yb = X[lo:lo + BATCH], Y[lo:lo + BATCH]
    mine = slice(p * L * per_device, (p + 1) * L * per_device)  # this process's devices' slices
    params, state, loss = parallel_step(params, state, xb[mine].reshape(L, per_device, 64),
                                        yb[mine].reshape(L, per_device))
    ref, ref_state, ref_loss = full_step(ref, ref_state, xb, yb)
    np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-5)

worst = 0.0
for name in params:
    got, want = np.asarray(params[name]), np.asarray(ref[name])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6, err_msg=name)
    worst = max(worst, float(np.max(np.abs(got - want))))
multihost_utils.assert_equal(params, "parameters differ across processes")
print(f"ok training loss {float(loss):.4f} worst difference {worst:.2e}", flush=True)
