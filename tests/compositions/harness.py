"""Runs generated programs in subprocesses (several per process) and compares outcomes.

`run_programs(seeds, backend)` returns {seed: outcome}. An outcome is the runner's dict ("ok" or
"error"), or {"crash": ...} / {"hang": ...} for a program that ended its process: the program in
flight is named, re-run alone to confirm (a crash seen only after other programs ran in the same
process is kept, marked "batch_only"), and the rest of the batch runs on in a new process.

`compare(ref, got)` returns None when `got` (xjax) agrees with `ref` (JAX), else (kind, detail)
with kind one of: crash, hang, wrong error, wrong value, wrong dtype/shape.
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "runner.py")

KINDS = ("crash", "hang", "wrong error", "wrong value", "wrong dtype/shape")


def _spawn(seeds, backend, timeout, env):
    """One runner process over `seeds`: (results by seed, seed in flight or None, (rc, stderr tail))."""
    cmd = [sys.executable, RUNNER, backend, str(timeout)] + [str(s) for s in seeds]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env,
                           timeout=timeout * len(seeds) + 60)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        rc = "timeout"
    results, started = {}, None
    for line in stdout.splitlines():
        if line.startswith("@@START "):
            started = int(line.split()[1])
        elif line.startswith("@@RESULT "):
            r = json.loads(line[len("@@RESULT "):])
            results[r.pop("seed")] = r
            started = None
    return results, started, (rc, stderr[-3000:])


def _failure(rc, stderr):
    if rc == "timeout" or "Timeout (" in stderr:
        return {"hang": True, "stderr": stderr[-1500:]}
    return {"crash": rc, "stderr": stderr[-1500:]}


def run_programs(seeds, backend, batch=20, timeout=60.0, env=None):
    env = dict(os.environ if env is None else env)
    results = {}
    todo = list(seeds)
    while todo:
        chunk, todo = todo[:batch], todo[batch:]
        while chunk:
            res, culprit, (rc, stderr) = _spawn(chunk, backend, timeout, env)
            results.update(res)
            if culprit is None:
                missing = [s for s in chunk if s not in res]
                if not missing:
                    break
                culprit = missing[0]          # died before it could say which (import failure)
            if len(chunk) > 1:
                solo, _, (rc1, stderr1) = _spawn([culprit], backend, timeout, env)
                if culprit in solo:
                    out = _failure(rc, stderr)
                    out.update(batch_only=True, solo=solo[culprit])
                    results[culprit] = out
                else:
                    results[culprit] = _failure(rc1, stderr1)
            else:
                results[culprit] = _failure(rc, stderr)
            chunk = [s for s in chunk if s not in results]
    return results


def _floats(vals):
    return np.array([float(v) for v in vals], dtype=np.float64)


def _leaf(x):
    """(dtype, shape, values or None, weak_type) of an encoded leaf (recorded leaves may lack weak_type)."""
    return (x[0], list(x[1]), x[2], x[3] if len(x) > 3 else None)


def compare_values(ref, got, rtol=1e-4, atol=1e-5, check_weak=True, dtypes=True):
    """(kind, detail) for the first leaf where `got` differs from `ref`, else None (dtypes=False: a
    float64 reference for float32 results)."""
    if len(ref) != len(got):
        return "wrong dtype/shape", f"{len(got)} outputs, JAX has {len(ref)}"
    for k, (r, g) in enumerate(zip(ref, got)):
        (rd, rs, rv, rw), (gd, gs, gv, gw) = _leaf(r), _leaf(g)
        if (dtypes and rd != gd) or rs != gs:
            return "wrong dtype/shape", f"output {k}: {gd}{gs}, JAX {rd}{rs}"
        if check_weak and rw is not None and gw is not None and rw != gw:
            return "wrong dtype/shape", f"output {k} {rd}{rs}: weak_type={gw}, JAX weak_type={rw}"
        if rv is None:          # not recorded (a large output)
            continue
        if rd.startswith("float") or rd.startswith("bfloat"):
            a, b = _floats(gv), _floats(rv)
            if a.shape != b.shape:
                return "wrong value", f"output {k}: {len(gv)} values, JAX {len(rv)}"
            scale = np.max(np.abs(b[np.isfinite(b)]), initial=0.0)
            ok = np.isclose(a, b, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True)
            ok |= (a == b)      # infinities
            if not ok.all():
                i = int(np.argmin(ok))
                return "wrong value", (f"output {k} {rd}{rs}: element {i} is {a[i]!r}, JAX {b[i]!r} "
                                       f"({int((~ok).sum())} of {ok.size} differ)")
        elif list(gv) != list(rv) and not (gd.startswith("float") and not dtypes):
            i = next(i for i, (x, y) in enumerate(zip(gv, rv)) if x != y) if len(gv) == len(rv) else 0
            return "wrong value", (f"output {k} {rd}{rs}: element {i} is {gv[i] if gv else None}, "
                                   f"JAX {rv[i] if rv else None}")
    return None


def float32_error(ref32, ref64, atol=1e-5):
    """How far JAX's float32 results are from its float64 ones, as the rtol that would accept them
    (None where the float64 run cannot stand in: it failed, or its outputs do not line up)."""
    if "ok" not in ref32 or "ok" not in ref64 or len(ref32["ok"]) != len(ref64["ok"]):
        return None
    worst = 0.0
    for r, w in zip(ref32["ok"], ref64["ok"]):
        (rd, rs, rv, _), (wd, ws, wv, _) = _leaf(r), _leaf(w)
        if rs != ws or rv is None or wv is None or len(rv) != len(wv):
            return None
        if not rd.startswith("float"):
            if list(rv) != list(wv) and not wd.startswith("float"):
                return None      # integer results differ: the float64 program went another way
            continue
        a, b = _floats(rv), _floats(wv)
        fin = np.isfinite(a) & np.isfinite(b)
        if (np.isfinite(a) != np.isfinite(b)).any():
            return None
        if not fin.any():
            continue
        scale = np.max(np.abs(b[fin]), initial=0.0)
        excess = np.abs(a[fin] - b[fin]) - atol * max(1.0, scale)
        rel = np.where(excess > 0, excess / np.maximum(np.abs(b[fin]), 1e-30), 0.0)
        worst = max(worst, float(rel.max()))
    return worst


def arbitrate(ref32, got, ref64):
    """Whether a value mismatch is float32 rounding: xjax's results are within 4x JAX's own distance
    from JAX's float64 results (and so no worse than JAX's)."""
    e = float32_error(ref32, ref64)
    if e is None or "ok" not in got:
        return False
    return compare_values(ref64["ok"], got["ok"], rtol=max(4 * e, 1e-4), check_weak=False, dtypes=False) is None


def compare(ref, got, rtol=1e-4, atol=1e-5, check_weak=True):
    if "crash" in got:
        note = " (only after other programs in its process)" if got.get("batch_only") else ""
        return "crash", f"exit status {got['crash']}{note}\n{got['stderr'][-800:]}"
    if "hang" in got:
        note = " (only after other programs in its process)" if got.get("batch_only") else ""
        return "hang", f"ran past its time limit{note}\n{got['stderr'][-800:]}"
    if "error" in ref and "error" in got:
        if ref["error"] != got["error"]:
            return "wrong error", f"xjax raised {got['error']}: {got['msg']}\nJAX raised {ref['error']}: {ref['msg']}"
        return None
    if "error" in got:
        return "wrong error", f"xjax raised {got['error']}: {got['msg']}\nJAX computed it"
    if "error" in ref:
        return "wrong error", f"xjax computed it\nJAX raised {ref['error']}: {ref['msg']}"
    if "ok" not in ref:
        return None             # JAX itself crashed or hung: nothing to compare against
    return compare_values(ref["ok"], got["ok"], rtol, atol, check_weak)


def round_sig(v, digits=7):
    if isinstance(v, str) or v == 0 or not math.isfinite(v):
        return v
    return float(f"{v:.{digits}g}")


def compact(outcome, max_values=256):
    """The outcome as recorded: floats to 7 significant digits; large leaves keep no values."""
    if "ok" not in outcome:
        return {k: outcome[k] for k in ("error", "msg") if k in outcome} if "error" in outcome else outcome
    leaves = []
    for d, s, vals, weak in outcome["ok"]:
        if len(vals) > max_values:
            vals = None
        elif d.startswith("float"):
            vals = [round_sig(v) for v in vals]
        leaves.append([d, s, vals, weak])
    return {"ok": leaves}
