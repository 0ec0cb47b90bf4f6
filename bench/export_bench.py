"""Export benchmarks: writes a ~50 MB model, tiny functions and the digits train step as .xjx files,
times the Python side (load, the jitted train step), then runs the C++ side (bench/cpp/bench_export:
load time, call overhead, the same train step). Medians.

    cmake -S . -B build/bench -G Ninja -DXJAX_BUILD_BENCH=ON && cmake --build build/bench --target bench_export
    PYTHONPATH=python python bench/export_bench.py build/bench/bench/bench_export
"""
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import xjax as jax
import xjax.numpy as jnp

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "cpp"))
import train_digits  # noqa: E402


def median_time(fn, reps, inner=1):
    fn()
    t = []
    for _ in range(reps):
        a = time.perf_counter()
        for _ in range(inner):
            fn()
        t.append((time.perf_counter() - a) / inner)
    return float(np.median(t))


def write_files(d):
    rng = np.random.default_rng(0)
    ws = [jnp.asarray(rng.standard_normal((2048, 2048), dtype=np.float32) / 45) for _ in range(3)]

    def predict(x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return x

    with jax.export.exporter(d / "big.xjx") as ex:
        ex.add(predict, jax.ShapeDtypeStruct((1, 2048), jnp.float32), name="predict")
    with jax.export.exporter(d / "tiny.xjx") as ex:
        ex.add(lambda x: x, jnp.ones(4), name="identity")
        ex.add(lambda x: x + 1, jnp.ones(4), name="add_one")
    train_digits.main(str(d / "digits.xjx"), 1)


def python_side(d):
    size = os.path.getsize(d / "big.xjx")
    print(f"big.xjx: {size / 1e6:.1f} MB")
    print(f"python xjax.export.load(big.xjx): {median_time(lambda: jax.export.load(d / 'big.xjx'), 15) * 1e3:.2f} ms")
    x = jnp.ones((32, 64))
    y = jax.nn.one_hot(jnp.arange(32) % 10, 10)
    params = train_digits.init_params(jax.random.PRNGKey(0))
    state = [params, train_digits.optimizer.init(params)]
    step = train_digits.train_step

    def run():
        loss, state[0], state[1] = step(state[0], state[1], x, y)
        loss.block_until_ready()

    print(f"python jitted digits train_step (batch 32): {median_time(run, 21, 20) * 1e6:.1f} us")
    mod = jax.export.load(d / "digits.xjx")
    exp = mod["train_step"]

    def run_exported():
        loss, state[0], state[1] = exp.call(state[0], state[1], x, y)
        loss.block_until_ready()

    print(f"python Exported.call digits train_step (batch 32): {median_time(run_exported, 21, 20) * 1e6:.1f} us")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "build" / "bench" / "bench" / "bench_export")
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        write_files(d)
        python_side(d)
        blas = jax._src.blas.find_blas_library()
        subprocess.run([binary, str(d)] + ([blas] if blas else []), check=True)


if __name__ == "__main__":
    main()
