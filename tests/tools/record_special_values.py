"""Writes tests/special_values.py: what JAX (x64) returns at tests/special_cases.py's inputs.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_special_values.py
"""
import os
import pprint
import sys

import jax

jax.config.update("jax_enable_x64", True)
import jax.scipy.special  # noqa: E402
import jax.scipy.stats  # noqa: E402
import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from special_cases import CASES, GRAD_CASES  # noqa: E402


def function(kind, name):
    if kind == "lax":
        return getattr(jax.lax, name)
    module = jax.scipy.special if kind == "special" else jax.scipy.stats
    for part in name.split("."):
        module = getattr(module, part)
    return module


def as_lists(out):
    if isinstance(out, tuple):
        return tuple(as_lists(o) for o in out)
    return np.asarray(out, np.float64).tolist()


def main():
    values = {}
    for label, kind, name, args, kwargs in CASES:
        fn = function(kind, name)
        args = [np.asarray(a) if isinstance(a, list) else a for a in args]
        kwargs = {k: np.asarray(v) for k, v in kwargs.items() if k != "series_order" and k != "axis"} | \
            {k: v for k, v in kwargs.items() if k in ("series_order", "axis", "return_sign")}
        values[label] = as_lists(fn(*args, **kwargs))
    grads = {}
    for name, argnums, points in GRAD_CASES:
        g = jax.grad(function("special", name), argnums)
        grads[name] = [as_lists(tuple(g(*[np.float64(p) for p in point]))) for point in points]
    path = os.path.join(os.path.dirname(HERE), "special_values.py")
    with open(path, "w") as f:
        f.write('"""Values recorded from jax 0.10.2 with x64 for special_cases.py (by tools/record_special_values.py)."""\n')
        f.write("nan, inf = float(\"nan\"), float(\"inf\")\n\n")
        f.write("VALUES = " + pprint.pformat(values, width=116, compact=True) + "\n\n")
        f.write("GRADS = " + pprint.pformat(grads, width=116, compact=True) + "\n")


if __name__ == "__main__":
    main()
