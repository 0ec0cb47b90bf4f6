"""Side-by-side timings of the core's layout ops and NumPy on ~16M-element float32 arrays.

Run: PYTHONPATH=python python bench/layout_bench.py [name-substring ...]
xjax times are whole runs of a compiled single-op graph (result allocation included), NumPy
times produce a fresh contiguous result too (np.ascontiguousarray(x.T) etc.).
"""
import sys
import time

import numpy as np

from xjax import _core


def to_core(x):
    x = np.asarray(x)
    return _core.Array.from_buffer(np.ascontiguousarray(x).reshape(-1).view(np.uint8), x.shape, x.dtype.name)


def best_of(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3, float(np.median(times)) * 1e3


def bench(name, op, inputs, attrs, numpy_fn, reps=9):
    arrays = [to_core(x) for x in inputs]
    exe = _core.compile_op(op, [(a.shape, a.dtype) for a in arrays], attrs)

    def run():
        for r in exe.run(arrays):
            r.wait()

    (xb, xm), (nb, nm) = best_of(run, reps), best_of(numpy_fn, reps)
    print(f"{name:42s} xjax {xb:7.2f} ms (median {xm:7.2f})   numpy {nb:7.2f} ms (median {nm:7.2f})")


def main(filters):
    rng = np.random.default_rng(0)
    n = 4096
    x = rng.random((n, n), dtype=np.float32)
    v = rng.random(n, dtype=np.float32)
    top, bottom = x[: n // 2].copy(), x[n // 2:].copy()
    left, right = x[:, : n // 2].copy(), x[:, n // 2:].copy()
    x64 = x.astype(np.float64)
    cube = rng.random((256, 256, 256), dtype=np.float32)
    pad_value = np.float32(0)
    cases = [
        ("transpose 4096x4096 f32", "transpose", [x], dict(permutation=(1, 0)), lambda: np.ascontiguousarray(x.T)),
        ("transpose 4096x4096 f64", "transpose", [x64], dict(permutation=(1, 0)), lambda: np.ascontiguousarray(x64.T)),
        ("transpose 256^3 (2,1,0) f32", "transpose", [cube], dict(permutation=(2, 1, 0)),
         lambda: np.ascontiguousarray(cube.transpose(2, 1, 0))),
        ("broadcast_in_dim (4096,)->(4096,4096) f32", "broadcast_in_dim", [v],
         dict(shape=(n, n), broadcast_dimensions=(1,)), lambda: np.ascontiguousarray(np.broadcast_to(v, (n, n)))),
        ("slice [1:-1, 1:-1] of 4096x4096 f32", "slice", [x], dict(start_indices=(1, 1), limit_indices=(n - 1, n - 1)),
         lambda: np.ascontiguousarray(x[1:-1, 1:-1])),
        ("slice [:, ::2] of 4096x4096 f32", "slice", [x],
         dict(start_indices=(0, 0), limit_indices=(n, n), strides=(1, 2)), lambda: np.ascontiguousarray(x[:, ::2])),
        ("concatenate 2x(2048,4096) axis 0", "concatenate", [top, bottom], dict(dimension=0),
         lambda: np.concatenate([top, bottom], 0)),
        ("concatenate 2x(4096,2048) axis 1", "concatenate", [left, right], dict(dimension=1),
         lambda: np.concatenate([left, right], 1)),
        ("reshape 4096x4096 -> (16M,)", "reshape", [x], dict(new_sizes=(n * n,)), lambda: x.reshape(-1).copy()),
        ("rev axis 1 of 4096x4096 f32", "rev", [x], dict(dimensions=(1,)), lambda: np.ascontiguousarray(x[:, ::-1])),
        ("pad 1 on each side of 4096x4096 f32", "pad", [x, pad_value], dict(padding_config=(1, 1, 0, 1, 1, 0)),
         lambda: np.pad(x, 1)),
    ]
    print(f"threads: {_core.num_threads()}")
    for name, op, inputs, attrs, numpy_fn in cases:
        if not filters or any(f in name for f in filters):
            bench(name, op, inputs, attrs, numpy_fn)


if __name__ == "__main__":
    main(sys.argv[1:])
