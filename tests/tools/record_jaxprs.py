"""Records JAX's jaxprs for tests/tools/jaxpr_programs.py into tests/jaxpr_jax_text_values.py.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_jaxprs.py                  # rewrites tests/jaxpr_jax_text_values.py
    python tests/tools/record_jaxprs.py --lib xjax --diff   # shows where xjax differs from the file
For each program it records str(make_jaxpr(fn)(*args)) and the outputs' (dtype, weak_type).
"""
import argparse
import difflib
import importlib
import os
import pprint
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from jaxpr_programs import PROGRAMS  # noqa: E402

VALUES = os.path.join(os.path.dirname(HERE), "jaxpr_jax_text_values.py")


def run_program(jax, src):
    """(jaxpr text, [(dtype name, weak_type)] of the outputs) of one program under `jax`."""
    ns = dict(jax=jax, jnp=importlib.import_module(jax.__name__ + ".numpy"),
              lax=importlib.import_module(jax.__name__ + ".lax"), np=np)
    exec(src, ns)
    closed = jax.make_jaxpr(ns["fn"])(*ns["args"])
    return str(closed), [(a.dtype.name, bool(a.weak_type)) for a in closed.out_avals]


def record(lib):
    jax = importlib.import_module(lib)
    out = {}
    for name, src in PROGRAMS.items():
        try:
            out[name] = run_program(jax, src)
        except Exception as e:  # noqa: BLE001 - reported per program
            out[name] = (f"{type(e).__name__}: {e}", [])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", default="jax")
    parser.add_argument("--diff", action="store_true", help="compare with the recorded file instead of writing it")
    parser.add_argument("names", nargs="*")
    opts = parser.parse_args()
    if opts.diff:
        ns = {}
        with open(VALUES) as f:
            exec(f.read(), ns)
        want = ns["RECORDED"]
        jax = importlib.import_module(opts.lib)
        same = 0
        names = opts.names or list(PROGRAMS)
        for name in names:
            try:
                got = run_program(jax, PROGRAMS[name])
            except Exception as e:  # noqa: BLE001
                got = (f"{type(e).__name__}: {e}", [])
            if got == want[name]:
                same += 1
                continue
            print(f"==== {name}")
            if got[1] != want[name][1]:
                print(f"  types: got {got[1]} want {want[name][1]}")
            print("\n".join(difflib.unified_diff(want[name][0].splitlines(), got[0].splitlines(), "jax", opts.lib,
                                                 lineterm="", n=2)))
        print(f"{same} of {len(names)} match")
        return
    values = record(opts.lib)
    with open(VALUES, "w") as f:
        f.write('"""Jaxprs recorded from jax 0.10.2 for tools/jaxpr_programs.py (by tools/record_jaxprs.py):\n'
                'name -> (str(make_jaxpr(fn)(*args)), [(dtype, weak_type) of each output])."""\n\n')
        f.write("RECORDED = " + pprint.pformat(values, width=116) + "\n")


if __name__ == "__main__":
    main()
