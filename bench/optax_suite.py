"""optax's own test suite (the tests shipped in the optax wheel) on real JAX and on xjax, side by side.

    python bench/optax_suite.py            # both runs, 2 pytest workers each
    python bench/optax_suite.py -n 4 --keep /tmp/optax_runs

Each run is `python -m pytest --pyargs optax` in a fresh process; the xjax run adds the plugin
tests/ecosystem/jax_on_xjax.py, which makes `import jax` give xjax. Prints the number of tests that
pass on each, how many of those that pass on JAX pass on xjax, and the first error line of each
test that passes on JAX but not on xjax, grouped (the classes of the remaining failures).
"""
import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_suite(on_xjax, junit, workers, extra):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--continue-on-collection-errors",
           "--pyargs", "optax", f"--junitxml={junit}"] + (["-n", str(workers)] if workers > 1 else []) + extra
    env = dict(os.environ)
    if on_xjax:
        cmd[3:3] = ["-p", "tests.ecosystem.jax_on_xjax"]
        env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python"), env.get("PYTHONPATH", "")])
    start = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT if on_xjax else tempfile.gettempdir(), env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def outcomes(junit):
    """{test id: (outcome, first line of its error)} from a JUnit XML report; a module that failed to
    import is an entry of its own, its message the error's last line."""
    out = {}
    for case in ET.parse(junit).iter("testcase"):
        if not case.get("classname"):  # a collection error
            text = (case.find("error").text or "").strip().splitlines() if case.find("error") is not None else []
            out[case.get("name")] = ("error", "module import: " + (text[-1] if text else "collection failure"))
            continue
        name = f"{case.get('classname')}::{case.get('name')}"
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                out[name] = (tag, (node.get("message") or "").split("\n")[0])
                break
        else:
            out[name] = ("passed", "")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=2, help="pytest-xdist workers per run")
    parser.add_argument("--keep", help="a folder for the two JUnit reports (default: a temporary one)")
    args, extra = parser.parse_known_args()
    folder = args.keep or tempfile.mkdtemp(prefix="optax_suite_")
    os.makedirs(folder, exist_ok=True)
    results = {}
    for label, on_xjax in (("JAX", False), ("xjax", True)):
        junit = os.path.join(folder, f"{label.lower()}.xml")
        seconds = run_suite(on_xjax, junit, args.n, extra)
        results[label] = outcomes(junit)
        passed = sum(o == "passed" for o, _ in results[label].values())
        print(f"{label:5s} {passed:5d} passed of {len(results[label])} tests ({seconds:.0f} s)")
    jax_passed = [t for t, (o, _) in results["JAX"].items() if o == "passed"]
    both = [t for t in jax_passed if results["xjax"].get(t, ("missing",))[0] == "passed"]
    print(f"xjax passes {len(both)} of the {len(jax_passed)} tests that pass on JAX "
          f"({100 * len(both) / max(len(jax_passed), 1):.1f}%)")
    classes = collections.Counter()
    for t in jax_passed:
        module = t.split("::")[0].rsplit(".", 1)[0]
        outcome, message = results["xjax"].get(t, results["xjax"].get(module, ("missing", "not collected")))
        if outcome != "passed":
            classes[re.sub(r"\d+", "N", message)[:110] or outcome] += 1
    for message, count in classes.most_common():
        print(f"{count:5d}  {message}")


if __name__ == "__main__":
    main()
