"""An Equinox train step (eqx.nn.MLP, filter_jit + filter_value_and_grad, SGD through
eqx.apply_updates) timed on xjax and on JAX side by side. Each library runs in its own worker
process (xjax through install_as_jax, so Equinox itself is unchanged); the parent asks the workers
for a round of timings in turn, so that drift in the machine's load hits both, and prints the best
round's medians and their ratio (xjax / JAX: below 1.0 means xjax is faster).

    python bench/ecosystem_equinox.py [--batch 256] [--rounds 5] [--reps 50]
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
    import jax.numpy as jnp
    import equinox as eqx

    rng = np.random.RandomState(0)
    x = jnp.asarray(rng.randn(batch, 32).astype(np.float32))
    y = jnp.asarray(rng.randn(batch, 1).astype(np.float32))
    model = eqx.nn.MLP(32, 1, width_size=128, depth=3, activation=jax.nn.relu, key=jax.random.PRNGKey(0))

    @eqx.filter_jit
    def train_step(model, x, y):
        def loss(model):
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)

        value, grads = eqx.filter_value_and_grad(loss)(model)
        return eqx.apply_updates(model, jax.tree.map(lambda g: -1e-2 * g, grads)), value

    state = [model]

    def run():
        state[0], value = train_step(state[0], x, y)
        value.block_until_ready()

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
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reps", type=int, default=50)
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
    print(f"{f'equinox_mlp_step_b{args.batch}':28s} {x:10.3f} {j:10.3f} {x / j:7.2f}")


if __name__ == "__main__":
    main()
