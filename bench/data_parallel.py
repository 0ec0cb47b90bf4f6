"""Data-parallel training steps/s: 1 process x 1 thread on the full batch next to 2 processes x 1
thread, each on half the batch, averaging gradients with pmean over MPI.

    python bench/data_parallel.py        # runs both (the second under mpirun -np 2)

The model: an MLP 64-512-512-10 on sklearn's digits, global batch 1024, Adam. Steps/s is the
median over 3 windows of 20 steps (after 5 warm-up steps), each ended by reading the loss.
"""
import functools
import os
import shutil
import subprocess
import sys
import time

BATCH, HIDDEN, WINDOW = 1024, 512, 20


def _model():
    import numpy as np
    from sklearn.datasets import load_digits

    import xjax
    import xjax.numpy as jnp
    from xjax import optim

    digits = load_digits()
    X = np.tile((digits.data / 16.0).astype(np.float32), (2, 1))
    Y = np.tile(digits.target.astype(np.int32), 2)

    def init(key):
        ks = xjax.random.split(key, 3)
        sizes = [(64, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 10)]
        return [(xjax.random.normal(k, s) * (1 / s[0]) ** 0.5, jnp.zeros(s[1])) for k, s in zip(ks, sizes)]

    def loss_fn(params, x, y):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        logits = x @ params[-1][0] + params[-1][1]
        return optim.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    return X, Y, init(xjax.random.PRNGKey(0)), loss_fn, optim.adam(1e-3)


def _steps_per_second(step, state, batch_of):
    for i in range(5):
        state = step(*state, *batch_of(i))
    rates = []
    for w in range(3):
        t = time.perf_counter()
        for i in range(WINDOW):
            state = step(*state, *batch_of(i))
        float(state[-1])
        rates.append(WINDOW / (time.perf_counter() - t))
    return sorted(rates)[1]


def one_process():
    import xjax
    from xjax import optim

    X, Y, params, loss_fn, opt = _model()

    @xjax.jit
    def step(params, opt_state, _loss, x, y):
        loss, grads = xjax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, loss

    def batch_of(i):
        lo = i * BATCH % (len(X) - BATCH)
        return X[lo:lo + BATCH], Y[lo:lo + BATCH]

    return _steps_per_second(step, (params, opt.init(params), 0.0), batch_of)


def processes():
    import xjax
    from xjax import lax, optim

    xjax.distributed.initialize()
    P, p = xjax.process_count(), xjax.process_index()
    X, Y, params, loss_fn, opt = _model()

    @functools.partial(xjax.pmap, axis_name="batch", in_axes=(None, None, None, 0, 0), out_axes=None)
    def step(params, opt_state, _loss, x, y):
        loss, grads = xjax.value_and_grad(loss_fn)(params, x, y)
        grads = lax.pmean(grads, "batch")
        updates, opt_state = opt.update(grads, opt_state, params)
        return optim.apply_updates(params, updates), opt_state, lax.pmean(loss, "batch")

    share = BATCH // P

    def batch_of(i):
        lo = i * BATCH % (len(X) - BATCH) + p * share
        return X[None, lo:lo + share], Y[None, lo:lo + share]

    rate = _steps_per_second(step, (params, opt.init(params), 0.0), batch_of)
    if p == 0:
        print(f"{P} processes x 1 thread: {rate:.1f} steps/s", flush=True)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, XJAX_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([os.path.join(here, "..", "python"), os.environ.get("PYTHONPATH", "")]))
    one = subprocess.run([sys.executable, __file__, "--one"], capture_output=True, text=True, env=env)
    print(one.stdout.strip() or one.stderr)
    mpirun = shutil.which("mpirun", path=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]))
    version = subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout
    flags = ["--oversubscribe"] + (["--allow-run-as-root"] if os.geteuid() == 0 else []) if "Open MPI" in version else []
    two = subprocess.run([mpirun, "-np", "2", *flags, sys.executable, __file__, "--processes"], capture_output=True,
                         text=True, env=env)
    print(two.stdout.strip() or two.stderr)


if __name__ == "__main__":
    if "--one" in sys.argv:
        print(f"1 process x 1 thread: {one_process():.1f} steps/s")
    elif "--processes" in sys.argv:
        processes()
    else:
        main()
