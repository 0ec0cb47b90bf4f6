"""A Flax linen train step (CNN with BatchNorm and Dropout, optax.adamw, jitted) timed on xjax and
on JAX side by side. Each library runs in its own worker process (xjax through install_as_jax, so
Flax itself is unchanged); the parent asks the two workers for a round of timings in turn, so that
drift in the machine's load hits both, and prints the medians and their ratio (xjax / JAX: below
1.0 means xjax is faster).

    python bench/ecosystem_flax.py [--batch 64] [--rounds 5] [--reps 20]
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def make_step(batch):
    import numpy as np
    import jax
    import flax.linen as nn
    import optax

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            for features in (16, 32):
                x = nn.Conv(features, (3, 3), use_bias=False)(x)
                x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
                x = nn.relu(x)
                x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.reshape((x.shape[0], -1))
            x = nn.Dropout(0.2, deterministic=not train)(nn.relu(nn.Dense(128)(x)))
            return nn.Dense(10)(x)

    rng = np.random.RandomState(0)
    images = rng.randn(batch, 28, 28, 1).astype(np.float32)
    labels = rng.randint(0, 10, batch)
    model = CNN()
    variables = model.init(jax.random.PRNGKey(0), images, train=False)
    tx = optax.adamw(1e-3, weight_decay=1e-4)
    state = [variables["params"], variables["batch_stats"], tx.init(variables["params"]), jax.random.PRNGKey(1)]

    @jax.jit
    def train_step(params, batch_stats, opt_state, key):
        key, dropout_key = jax.random.split(key)

        def loss_fn(params):
            logits, updates = model.apply({"params": params, "batch_stats": batch_stats}, images, train=True,
                                          rngs={"dropout": dropout_key}, mutable=["batch_stats"])
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), updates["batch_stats"]

        (loss, batch_stats), grads = jax.value_and_grad(loss_fn, has_aux=True)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), batch_stats, opt_state, key, loss

    def run():
        *state[:], loss = train_step(*state)
        loss.block_until_ready()

    run()  # compile
    return run


def worker(lib, batch, reps):
    """Answers each line on stdin with the median time of `reps` steps (seconds), as JSON."""
    if lib == "xjax":
        import xjax

        xjax.install_as_jax()
    run = make_step(batch)
    print(json.dumps("ready"), flush=True)
    for _ in sys.stdin:
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            run()
            samples.append(time.perf_counter() - t)
        print(json.dumps(statistics.median(samples)), flush=True)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--worker", choices=("xjax", "jax"))
    args = p.parse_args()
    if args.worker:
        return worker(args.worker, args.batch, args.reps)
    libs = ("xjax", "jax")
    procs = {lib: subprocess.Popen([sys.executable, __file__, "--worker", lib, "--batch", str(args.batch),
                                    "--reps", str(args.reps)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   text=True) for lib in libs}
    for proc in procs.values():
        assert json.loads(proc.stdout.readline()) == "ready"
    medians = {lib: [] for lib in libs}
    for _ in range(args.rounds):
        for lib, proc in procs.items():  # one worker at a time, so they never share the cores
            proc.stdin.write("go\n")
            proc.stdin.flush()
            medians[lib].append(json.loads(proc.stdout.readline()))
    for proc in procs.values():
        proc.stdin.close()
        proc.wait()
    x, j = (min(medians[lib]) * 1e3 for lib in libs)
    print(f"{'workload':28s} {'xjax ms':>10s} {'jax ms':>10s} {'ratio':>7s}")
    print(f"{f'flax_linen_cnn_step_b{args.batch}':28s} {x:10.3f} {j:10.3f} {x / j:7.2f}")


if __name__ == "__main__":
    main()
