"""Writes tests/compositions/jax_values.json: what JAX gives for the random composed programs of
seeds 0..N-1 (tests/compositions/generator.py), for tests/test_compositions.py.

Run with JAX installed (not a test: tests never import jax):
    python tests/tools/record_composition_values.py [N]            (default 600)

For each program it keeps a hash of its source (the test checks that the generator still makes the
same program), JAX's outcome (outputs' dtypes, shapes, weak types and values to 7 significant
digits; or the error's type and first line) and, where JAX's float32 results are far from what JAX
computes in float64 (an ill-conditioned program), the rtol that the test then uses.
"""
import hashlib
import json
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "compositions"))

from generator import generate  # noqa: E402
from harness import compact, float32_error, run_programs  # noqa: E402

OUT = os.path.join(os.path.dirname(HERE), "compositions", "jax_values.json")
RTOL = 1e-4


def source_hash(seed):
    return hashlib.sha1(generate(seed).source.encode()).hexdigest()[:12]


def main():
    import jax

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["JAX_PLATFORMS"] = "cpu"
    seeds = list(range(n))
    chunks = [seeds[i:i + 25] for i in range(0, n, 25)]
    t0 = time.time()

    def work(chunk):
        ref = run_programs(chunk, "jax", batch=25, env=env)
        ref64 = run_programs(chunk, "jax64", batch=25, env=env)
        print(f"[{time.time() - t0:5.0f} s] seeds {chunk[0]}..{chunk[-1]}", flush=True)
        return ref, ref64

    programs = {}
    with ThreadPoolExecutor(2) as ex:
        for ref, ref64 in ex.map(work, chunks):
            for s, out in ref.items():
                if "ok" not in out and "error" not in out:
                    print(f"seed {s}: JAX itself failed ({next(iter(out))}); not recorded")
                    continue
                entry = {"sha": source_hash(s), "outcome": compact(out)}
                if "ok" in out:
                    e = float32_error(out, ref64.get(s, {}))
                    if e is not None and e > 0.01:
                        print(f"seed {s}: ill-conditioned (JAX's float32 results are {e:.2g} from its float64 ones); "
                              "not recorded")
                        continue
                    if e is not None and 4 * e > RTOL:
                        entry["rtol"] = float(f"{4 * e:.2g}")
                programs[str(s)] = entry
    data = {"jax": jax.__version__, "rtol": RTOL,
            "programs": dict(sorted(programs.items(), key=lambda kv: int(kv[0])))}
    with open(OUT, "w") as f:
        f.write("{\n")
        f.write(f'"jax": {json.dumps(data["jax"])},\n"rtol": {RTOL},\n"programs": {{\n')
        items = list(data["programs"].items())
        for i, (k, v) in enumerate(items):
            f.write(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}{',' if i + 1 < len(items) else ''}\n")
        f.write("}}\n")
    print(f"{len(programs)} programs recorded in {OUT} ({os.path.getsize(OUT)} bytes, {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
