"""Per-op timings of the core's elementwise loops: one-op executables over 4M elements (medians).

    python bench/bench_elementwise_ops.py                 # every row
    python bench/bench_elementwise_ops.py --only add,exp  # rows whose op is listed
    python bench/bench_elementwise_ops.py --cpu           # CPU time of all threads, not wall time
Used to check that a change to the scalar definitions (src/core/ops/scalar_ops.h) costs nothing.
"""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from core_util import to_core  # noqa: E402
from xjax import _core  # noqa: E402

N = 1 << 22
ROWS = [  # (op, dtype, arity, attrs)
    ("add", "float32", 2, {}), ("mul", "float64", 2, {}), ("add", "int32", 2, {}), ("mul", "int8", 2, {}),
    ("div", "float32", 2, {}), ("div", "int32", 2, {}), ("rem", "int32", 2, {}), ("rem", "float32", 2, {}),
    ("max", "float32", 2, {}), ("min", "int64", 2, {}), ("pow", "float32", 2, {}), ("pow", "int32", 2, {}),
    ("add", "float16", 2, {}), ("mul", "bfloat16", 2, {}), ("lt", "float32", 2, {}), ("eq", "int64", 2, {}),
    ("lt", "float16", 2, {}), ("atan2", "float32", 2, {}), ("nextafter", "float32", 2, {}),
    ("shift_left", "int32", 2, {}), ("shift_right_arithmetic", "int64", 2, {}), ("bitwise_and", "uint8", 2, {}),
    ("neg", "float32", 1, {}), ("abs", "int32", 1, {}), ("sign", "float32", 1, {}), ("square", "float64", 1, {}),
    ("exp", "float32", 1, {}), ("exp", "float64", 1, {}), ("log", "float32", 1, {}), ("log1p", "float64", 1, {}),
    ("tanh", "float32", 1, {}), ("logistic", "float32", 1, {}), ("sin", "float32", 1, {}), ("sqrt", "float32", 1, {}),
    ("rsqrt", "float32", 1, {}), ("erf", "float32", 1, {}), ("erf_inv", "float32", 1, {}), ("exp", "bfloat16", 1, {}),
    ("round", "float32", 1, {"rounding_method": 1}), ("floor", "float64", 1, {}), ("is_finite", "float32", 1, {}),
    ("integer_pow", "float32", 1, {"y": 3}), ("integer_pow", "int32", 1, {"y": 2}),
    ("population_count", "uint32", 1, {}), ("clz", "int64", 1, {}), ("bitwise_not", "bool", 1, {}),
    ("clamp", "float32", 3, {}), ("fma", "float32", 3, {}),
]
SELECTS = [["bool", "float32", "float32"], ["int32", "float32", "float32", "float32"], ["int32", "int8", "int8", "int8"]]
CONVERTS = [("float32", "int32"), ("float64", "float16"), ("int32", "float32"), ("float32", "bfloat16"),
            ("float16", "float32"), ("int64", "bfloat16"), ("float32", "bool")]


def _operand(dtype, k, rng):
    if dtype == "bool":
        return rng.random(N) < 0.5
    if k == 0 and dtype == "int32":  # select_n's which (and integer operands): small values
        return rng.integers(0, 3, N).astype(dtype)
    if dtype in ("float16", "bfloat16", "float32", "float64"):
        x = rng.uniform(0.05, 0.95, N) * (1 if k == 0 else 2)
        from core_util import _NP_DTYPES
        return x.astype(_NP_DTYPES[dtype])
    return rng.integers(1, 100, N).astype(dtype)


def _time(exe, args, reps, clock):
    exe.run(args)
    samples = []
    for _ in range(reps):
        t = clock()
        for r in exe.run(args):
            r.bytes_view()  # waits for the result
        samples.append(clock() - t)
    return statistics.median(samples)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--reps", type=int, default=15)
    p.add_argument("--cpu", action="store_true", help="CPU time of all threads (steadier on a loaded machine)")
    args = p.parse_args()
    only = set(args.only.split(",")) if args.only else None
    clock = time.process_time if args.cpu else time.perf_counter
    rng = np.random.default_rng(0)
    cases = [(op, [dt] * k, attrs) for op, dt, k, attrs in ROWS]
    cases += [("select_n", dts, {}) for dts in SELECTS]
    cases += [("convert_element_type", [a], {"new_dtype": b}) for a, b in CONVERTS]
    for op, dts, attrs in cases:
        if only and op not in only:
            continue
        arrays = [to_core(_operand(dt, k, rng)) for k, dt in enumerate(dts)]
        exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)
        label = f"{op}_{'_'.join(dts[:2] if op == 'select_n' else dts[:1])}" + (f"_x{len(dts) - 1}" if op == "select_n" else "") + (f"_to_{attrs['new_dtype']}" if "new_dtype" in attrs else "")
        label += "".join(f"_{k}{v}" for k, v in attrs.items() if k != "new_dtype")
        print(f"{label:42s} {_time(exe, arrays, args.reps, clock) * 1e3:9.3f} ms", flush=True)


if __name__ == "__main__":
    main()
