"""Writes tests/random_sampler_values.py: what jax.random gives for tests/random_sampler_cases.py.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_random_values.py
"""
import os
import pprint
import sys

import jax
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from random_sampler_cases import CASES, SEEDS  # noqa: E402


def decode(v):
    if isinstance(v, tuple) and len(v) == 3 and v[0] == "array":
        return np.array(v[1], dtype=v[2])
    return v


def main():
    values = {}
    for label, fn, args, kwargs, _, x64 in CASES:
        jax.config.update("jax_enable_x64", x64)
        for seed in SEEDS:
            out = getattr(jax.random, fn)(jax.random.PRNGKey(seed), *map(decode, args),
                                          **{k: decode(v) for k, v in kwargs.items()})
            out = np.asarray(out)
            values[(label, seed)] = (str(out.dtype), out.tolist())
    path = os.path.join(os.path.dirname(HERE), "random_sampler_values.py")
    with open(path, "w") as f:
        f.write('"""Values recorded from jax 0.10.2 for random_sampler_cases.py (by tools/record_random_values.py)."""\n\n')
        f.write("VALUES = " + pprint.pformat(values, width=116, compact=True) + "\n")


if __name__ == "__main__":
    main()
