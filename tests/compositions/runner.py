"""Runs generated programs in this process and prints one line per program.

    python runner.py BACKEND TIMEOUT SEED [SEED ...]      BACKEND: jax, xjax or jax64

For each seed it prints `@@START <seed>`, then `@@RESULT <json>` with the program's outcome:
{"seed": s, "ok": [[dtype, shape, values, weak_type], ...]} or {"seed": s, "error": name, ...}. A program
that runs past TIMEOUT seconds ends the process (faulthandler's watchdog, exit status 1, with
"Timeout" on stderr); a crash ends it too. The parent (harness.py) names the program in flight.
"""
import faulthandler
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import numpy as onp  # noqa: E402

from generator import generate  # noqa: E402


def encode_value(x):
    weak = bool(getattr(x, "weak_type", False))
    a = onp.asarray(x)
    if a.dtype.kind == "f":
        vals = [v if math.isfinite(v) else repr(v) for v in a.astype(onp.float64).ravel().tolist()]
    elif a.dtype.kind == "V" or a.dtype.name.startswith("float0"):
        vals = []
    else:
        vals = a.ravel().tolist()
    return [str(a.dtype), list(a.shape), vals, weak]


def run_source(text, label="<program>"):
    """Executes a program's text (header included) and returns its outcome as a dict."""
    ns = {"__name__": "composition"}
    try:
        exec(compile(text, label, "exec"), ns)
        out = ns["main"]()
        leaves = ns["jax"].tree_util.tree_leaves(out)
        return {"ok": [encode_value(leaf) for leaf in leaves]}
    except Exception as e:  # noqa: BLE001 - any error is an outcome to compare
        t = type(e)
        msg = str(e).strip().splitlines()
        return {"error": t.__name__, "module": t.__module__,
                "bases": [c.__name__ for c in t.__mro__ if c.__module__ == "builtins"],
                "msg": (msg[0] if msg else "")[:400]}


def main():
    backend, timeout, seeds = sys.argv[1], float(sys.argv[2]), [int(s) for s in sys.argv[3:]]
    out = sys.stdout
    for seed in seeds:
        out.write(f"@@START {seed}\n")
        out.flush()
        prog = generate(seed)
        faulthandler.dump_traceback_later(timeout, exit=True)
        if os.environ.get("COMPOSITIONS_ABORT_SEED") == str(seed):  # the harness's own tests
            os.abort()
        if os.environ.get("COMPOSITIONS_HANG_SEED") == str(seed):
            time.sleep(3600)
        res = run_source(prog.text(backend), f"<program {seed}>")
        faulthandler.cancel_dump_traceback_later()
        res["seed"] = seed
        out.write("@@RESULT " + json.dumps(res) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
