"""Long run of random composed programs (tests/compositions/generator.py) against live JAX.

    PYTHONPATH=python python bench/compositions.py --count 1000 [--start 0] [--jobs 2] [--json out.json]

Each seed's program runs under JAX and under xjax, each in subprocesses (several programs per
process; a crash or hang is isolated to its program and re-run alone). It prints how many programs
ran and passed, and each finding (seed, xjax's outcome against JAX's, the source of one program per
group), grouped by kind: crash, hang, wrong error, wrong value, wrong dtype/shape. Findings that
look like a known bug (tests/compositions/known.py) are labelled with its name.
Reproduce one program: python tests/compositions/generator.py SEED (prints its xjax source).
"""
import argparse
import collections
import json
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "compositions"))

from generator import generate  # noqa: E402
from harness import KINDS, arbitrate, compare, run_programs  # noqa: E402
from known import first_line, known_bug  # noqa: E402


def envs():
    xenv = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    jenv = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    jenv["JAX_PLATFORMS"] = "cpu"
    return jenv, xenv


def signature(detail):
    """A finding's group: its first line with numbers and names blurred."""
    s = first_line(detail)
    s = re.sub(r"element \d+ is .*", "element differs", s)
    s = re.sub(r"\d+(\.\d+)?(e-?\d+)?", "N", s)
    s = re.sub(r"\b[a-z]+\d+\b", "v", s)
    return s[:160]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seeds", type=str, default=None, help="comma-separated seeds (instead of --start/--count)")
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    ap.add_argument("--json", type=str, default=None, help="write every outcome and finding here")
    ap.add_argument("--sources", type=int, default=1, help="sources printed per group of findings")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else list(range(args.start, args.start + args.count))
    jenv, xenv = envs()
    chunks = [seeds[i:i + args.batch] for i in range(0, len(seeds), args.batch)]
    lock = threading.Lock()
    outcomes, findings = {}, []
    stats = collections.Counter()
    t0 = time.time()

    def work(chunk):
        ref = run_programs(chunk, "jax", batch=args.batch, timeout=args.timeout, env=jenv)
        got = run_programs(chunk, "xjax", batch=args.batch, timeout=args.timeout, env=xenv)
        # value mismatches: JAX in float64 tells float32 rounding of ill-conditioned programs apart
        suspects = [s for s in chunk if "ok" in ref.get(s, {}) and "ok" in got.get(s, {})
                    and (compare(ref[s], got[s]) or ("",))[0] == "wrong value"]
        ref64 = run_programs(suspects, "jax64", batch=args.batch, timeout=args.timeout, env=jenv) if suspects else {}
        with lock:
            for s in chunk:
                r, g = ref.get(s, {"crash": "lost"}), got.get(s, {"crash": "lost", "stderr": ""})
                outcomes[s] = {"jax": r, "xjax": g}
                stats["ran"] += 1
                if "ok" not in r and "error" not in r:
                    stats["jax failed to run"] += 1
                    continue
                stats["jax raised" if "error" in r else "jax computed"] += 1
                res = compare(r, g)
                if res is None:
                    stats["passed"] += 1
                    continue
                kind, detail = res
                if s in ref64 and arbitrate(r, g, ref64[s]):
                    stats["passed"] += 1
                    stats["float32 rounding (float64 arbitration)"] += 1
                    continue
                tags = generate(s).tags
                findings.append({"seed": s, "kind": kind, "detail": detail, "known": known_bug(tags, kind, detail),
                                 "tags": tags})
            done = stats["ran"]
            print(f"[{time.time() - t0:6.0f} s] {done}/{len(seeds)} ran, {stats['passed']} passed, "
                  f"{len(findings)} findings", flush=True)

    with ThreadPoolExecutor(args.jobs) as ex:
        list(ex.map(work, chunks))

    print()
    print(f"programs ran: {stats['ran']}  passed: {stats['passed']}  findings: {len(findings)}  "
          f"(JAX computed {stats['jax computed']}, JAX raised {stats['jax raised']}, "
          f"JAX itself failed {stats['jax failed to run']}; passed as float32 rounding after a float64 "
          f"run: {stats['float32 rounding (float64 arbitration)']}; {time.time() - t0:.0f} s)")
    known_n = sum(1 for f in findings if f["known"])
    print(f"findings that look like known bugs: {known_n}; others: {len(findings) - known_n}")
    by_kind = collections.defaultdict(list)
    for f in findings:
        by_kind[f["kind"]].append(f)
    for kind in KINDS:
        fs = by_kind.get(kind, [])
        print(f"\n==== {kind}: {len(fs)}")
        groups = collections.defaultdict(list)
        for f in fs:
            groups[(f["known"] or "", signature(f["detail"]))].append(f)
        for (known, sig), g in sorted(groups.items(), key=lambda kv: (kv[0][0] != "", -len(kv[1]))):
            seeds_s = ", ".join(str(f["seed"]) for f in g[:30]) + (" ..." if len(g) > 30 else "")
            print(f"\n-- {len(g)} x {sig}" + (f"   [known: {known}]" if known else ""))
            print(f"   seeds: {seeds_s}")
            for f in sorted(g, key=lambda f: len(generate(f["seed"]).source))[:args.sources]:
                print(f"   seed {f['seed']} (tags: {' '.join(f['tags'])})")
                print("   " + f["detail"].replace("\n", "\n   "))
                if not known:
                    print("   " + generate(f["seed"]).source.replace("\n", "\n   "))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"stats": stats, "findings": findings,
                       "outcomes": {str(k): v for k, v in outcomes.items()}}, fh)


if __name__ == "__main__":
    main()
