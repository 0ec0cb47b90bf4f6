"""Times one train step of a JAX library on xjax and on JAX side by side, for the ecosystem benches
(bench/ecosystem_*.py). Each library runs in its own worker process (xjax through install_as_jax, so
the library itself is unchanged); the parent asks the two workers for a round of timings in turn, so
that drift in the machine's load hits both, and prints the best round's medians and their ratio
(xjax / JAX: below 1.0 means xjax is faster).
"""
import argparse
import json
import statistics
import subprocess
import sys
import time


def _worker(lib, make_step, batch, reps):
    """Answers each line on stdin with the median time of `reps` steps (seconds), as JSON."""
    if lib == "xjax":
        import xjax

        xjax.install_as_jax()
    run = make_step(batch)
    run()  # compile
    print(json.dumps("ready"), flush=True)
    for _ in sys.stdin:
        samples = []
        for _ in range(reps):
            t = time.perf_counter()
            run()
            samples.append(time.perf_counter() - t)
        print(json.dumps(statistics.median(samples)), flush=True)


def main(script, make_step, name, batch=64, reps=20, rounds=5):
    """The bench `script` (its __file__): make_step(batch) builds a jitted step and returns a function
    that runs it once and waits for its result; `name` labels the row (the batch is appended)."""
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=batch)
    p.add_argument("--rounds", type=int, default=rounds)
    p.add_argument("--reps", type=int, default=reps)
    p.add_argument("--worker", choices=("xjax", "jax"))
    args = p.parse_args()
    if args.worker:
        return _worker(args.worker, make_step, args.batch, args.reps)
    libs = ("xjax", "jax")
    procs = {lib: subprocess.Popen([sys.executable, script, "--worker", lib, "--batch", str(args.batch),
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
    print(f"{f'{name}_b{args.batch}':28s} {x:10.3f} {j:10.3f} {x / j:7.2f}")
