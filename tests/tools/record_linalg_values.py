"""Writes tests/jax_linalg_values.py: what JAX gives for the expressions in tests/linalg_cases.py.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_linalg_values.py
"""
import os
import pprint
import sys
import warnings

import jax
import jax.numpy as jnp
import jax.scipy.linalg as sl
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import linalg_cases  # noqa: E402


def record(value):
    leaves = value if isinstance(value, tuple) else (value,)
    return [(str(np.asarray(v).dtype), list(np.shape(v)), np.asarray(v).tolist()) for v in leaves]


def main():
    warnings.simplefilter("ignore")
    env = dict(vars(linalg_cases), jnp=jnp, sl=sl, jax=jax, np=np)
    values = {label: record(eval(expr, env)) for label, expr, _ in linalg_cases.CASES}
    path = os.path.join(os.path.dirname(HERE), "jax_linalg_values.py")
    with open(path, "w") as f:
        f.write(f'"""Values recorded from jax {jax.__version__} for linalg_cases.py (by '
                'tools/record_linalg_values.py):\nlabel -> [(dtype, shape, values) per result]."""\n\n')
        f.write('nan = float("nan")\ninf = float("inf")\n\n')
        f.write("VALUES = " + pprint.pformat(values, width=116, compact=True) + "\n")


if __name__ == "__main__":
    main()
