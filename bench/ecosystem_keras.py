"""A Keras 3 train step (JAX backend) on xjax next to JAX: a jitted stateless step (stateless_call,
value_and_grad, optimizer.stateless_apply with Adam) of a small MLP, each library in its own process
(Keras binds `jax` at import, and xjax stands in for it through install_as_jax). Rounds alternate the
two libraries; each round prints one median, and the summary the best median of each and their ratio
(xjax / JAX: below 1.0 means xjax is faster).

    python bench/ecosystem_keras.py [--batch 128] [--width 256] [--rounds 3] [--reps 50] [--one-thread]

--one-thread runs both on one thread (XJAX_NUM_THREADS=1; XLA's CPU client without its Eigen thread pool):
on a loaded machine a thread pool's wake-ups dominate a step this small, for either library.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def worker(lib, batch, width, reps):
    os.environ["KERAS_BACKEND"] = "jax"
    if lib == "xjax":
        import xjax

        xjax.install_as_jax()
    import jax
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.random((batch, 64), dtype=np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(width, activation="relu"),
                              keras.layers.Dense(width, activation="relu"), keras.layers.Dense(10)])
    optimizer = keras.optimizers.Adam(1e-3)
    optimizer.build(model.trainable_variables)
    loss_fn = keras.losses.CategoricalCrossentropy(from_logits=True)

    def loss(trainable, non_trainable, x, y):
        y_pred, non_trainable = model.stateless_call(trainable, non_trainable, x, training=True)
        return loss_fn(y, y_pred), non_trainable

    @jax.jit
    def train_step(state, x, y):
        trainable, non_trainable, opt_vars = state
        (value, non_trainable), grads = jax.value_and_grad(loss, has_aux=True)(trainable, non_trainable, x, y)
        trainable, opt_vars = optimizer.stateless_apply(opt_vars, grads, trainable)
        return value, (trainable, non_trainable, opt_vars)

    state = ([v.value for v in model.trainable_variables], [v.value for v in model.non_trainable_variables],
             [v.value for v in optimizer.variables])
    x, y = jax.numpy.asarray(x), jax.numpy.asarray(y)
    for _ in range(5):  # compile and warm up
        value, state = train_step(state, x, y)
    jax.block_until_ready(value)
    samples = []
    for _ in range(reps):
        t = time.perf_counter()
        value, state = train_step(state, x, y)
        jax.block_until_ready((value, state))
        samples.append(time.perf_counter() - t)
    print(json.dumps({"median_ms": statistics.median(samples) * 1e3, "loss": float(value)}))


ONE_THREAD = {"XJAX_NUM_THREADS": "1",
              "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def run(lib, args):
    cmd = [sys.executable, __file__, "--worker", lib, "--batch", str(args.batch), "--width", str(args.width),
           "--reps", str(args.reps)]
    env = dict(os.environ, **(ONE_THREAD if args.one_thread else {}))
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--reps", type=int, default=50)
    p.add_argument("--one-thread", action="store_true")
    p.add_argument("--worker", choices=("xjax", "jax"))
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.batch, args.width, args.reps)
    best = {"xjax": [], "jax": []}
    for r in range(args.rounds):
        for lib in best:
            result = run(lib, args)
            best[lib].append(result["median_ms"])
            print(f"round {r} {lib:5s} {result['median_ms']:8.3f} ms (loss {result['loss']:.4f})", flush=True)
    x, j = min(best["xjax"]), min(best["jax"])
    print(f"{'keras_mlp_train_step':28s} {'xjax ms':>10s} {'jax ms':>10s} {'ratio':>7s}")
    label = f"b{args.batch} w{args.width}" + (" one thread" if args.one_thread else "")
    print(f"{label:28s} {x:10.3f} {j:10.3f} {x / j:7.2f}")


if __name__ == "__main__":
    main()
