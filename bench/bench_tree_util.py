"""Pytree flatten/unflatten speed, xjax next to JAX (JAX's column is left out if it is not installed).

    PYTHONPATH=python python bench/bench_tree_util.py [--rounds 5]

Each cell is the median over rounds of the per-call time of a batch of calls, in microseconds;
xjax and JAX batches alternate so that machine load drifts hit both. ratio = xjax / jax of the
medians (below 1.0: xjax is faster); min ratio, of the fastest batches, is steadier on a loaded
machine. The main row is flatten + unflatten of a 100-leaf nested dict: the cost
jit pays on its arguments at every call.
"""
import argparse
import importlib
import statistics
import time

import numpy as np


def nested_params():
    """100 leaves: 25 layers of {'w', 'b', 'norm': {'scale', 'bias'}}, as a model's parameters."""
    leaf = np.zeros(3, np.float32)
    return {f"layer_{i:02d}": {"w": leaf, "b": leaf, "norm": {"scale": leaf, "bias": leaf}} for i in range(25)}


def workloads(tu):
    tree = nested_params()
    leaves, treedef = tu.tree_flatten(tree)
    assert len(leaves) == 100
    return {
        "flatten+unflatten 100-leaf dict": lambda: treedef.unflatten(tu.tree_flatten(tree)[0]),
        "flatten": lambda: tu.tree_flatten(tree),
        "unflatten": lambda: treedef.unflatten(leaves),
        "tree_leaves": lambda: tu.tree_leaves(tree),
        "tree_map(f, tree)": lambda: tu.tree_map(lambda x: x, tree),
        "tree_map(f, tree, tree)": lambda: tu.tree_map(lambda x, y: x, tree, tree),
        "tree_flatten_with_path": lambda: tu.tree_flatten_with_path(tree),
        "treedef == and hash": lambda: (treedef == treedef, hash(treedef)),
        "flatten (1, 2)": lambda: tu.tree_flatten((1, 2)),
    }


def per_call_us(fn, number):
    t = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t) / number * 1e6


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--number", type=int, default=400, help="calls per timed batch")
    args = p.parse_args()
    libs = {"xjax": importlib.import_module("xjax.tree_util")}
    try:
        libs["jax"] = importlib.import_module("jax.tree_util")
    except ImportError:
        pass
    runs = {name: workloads(tu) for name, tu in libs.items()}
    res = time.get_clock_info("perf_counter").resolution
    print(f"timer: perf_counter, resolution {res * 1e9:.0f} ns; each sample times {args.number} calls "
          f"(batch >= {args.number * 0.1:.0f} us, so resolution is far below 0.01 us per call); "
          f"median of {args.rounds} samples")
    header = f"{'workload':34s} {'xjax us':>9s}"
    if "jax" in libs:
        header += f" {'jax us':>9s} {'ratio':>6s} {'min ratio':>9s}"
    print(header)
    for work in runs["xjax"]:
        samples = {name: [] for name in libs}
        for name in libs:
            per_call_us(runs[name][work], args.number // 4)  # warm up
        for _ in range(args.rounds):
            for name in libs:
                samples[name].append(per_call_us(runs[name][work], args.number))
        med = {name: statistics.median(s) for name, s in samples.items()}
        line = f"{work:34s} {med['xjax']:9.2f}"
        if "jax" in med:
            best = min(samples["xjax"]) / min(samples["jax"])
            line += f" {med['jax']:9.2f} {med['xjax'] / med['jax']:6.2f} {best:9.2f}"
        print(line)


if __name__ == "__main__":
    main()
