"""Random composed programs (tests/compositions/generator.py) against values recorded from JAX.

Each program is rebuilt from its seed and run under xjax in a subprocess, several per process (a
crash or hang is isolated by re-running its program alone, so the failing seed is named); xjax must
raise exactly where JAX raised (the same exception type), and otherwise give JAX's dtypes, weak
types, shapes and values (rtol 1e-4 for float32, or the program's recorded rtol where JAX's own
float32 results are that far from its float64 ones; integers exactly).

The values come from tests/tools/record_composition_values.py (run with JAX installed), which also
stores a hash of each program's source: a generator that no longer makes the recorded programs
fails here until they are recorded again.

Reproduce one program:  python tests/compositions/generator.py SEED   (its source, for xjax)
Long runs against live JAX:  python bench/compositions.py --count 1000
"""
import hashlib
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "compositions"))

from generator import generate  # noqa: E402
from harness import compare, run_programs  # noqa: E402

with open(os.path.join(HERE, "compositions", "jax_values.json")) as _f:
    RECORD = json.load(_f)
PROGRAMS = {int(k): v for k, v in RECORD["programs"].items()}

# Programs that hit a known xjax bug (tests/compositions/known.py names them): left out of the
# batched tests; test_known_bug runs each group (xfail, not strict: an XPASS says the group can go
# back). Delete a group once its bug is fixed.
KNOWN_FAILING = {
    "associative_scan": [4, 36, 39, 78, 81, 91, 96, 118, 123, 144, 154, 166, 171, 190, 232, 250, 251, 256, 284, 295,
                         309, 311, 370, 376, 382, 401, 403, 405, 414, 429, 432, 439, 440, 444, 447, 450, 459, 464,
                         469, 478, 479, 491, 495, 499, 523, 528, 533, 584],
    "at_mul_grad": [241, 332],
    "collective_in_scan_in_vmap": [64, 503, 529],
    "cond_custom_jvp_closure": [151],          # KeyError Var
    "grad_pmax": [111, 276, 289],
    "lax_map_empty_batch": [17, 231, 282],
    "linearize_traced_loop": [68, 189, 264, 297, 398, 485],
    "while_reverse_eager": [51, 82, 321, 456],  # grad/vjp through an unused while_loop (see known.py)
}

# Programs where JAX's outcome is a JAX bug or an accident of its dead-code elimination: not run.
JAX_DIFFERS = {
    363: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    411: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    476: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    593: "JAX raises for the JVP of a custom_vjp function in a dead loop under lax.map(batch_size=)'s vmap only",
}

_LEFT_OUT = {s for seeds in KNOWN_FAILING.values() for s in seeds} | set(JAX_DIFFERS)
CHUNK = 30
SEEDS = sorted(s for s in PROGRAMS if s not in _LEFT_OUT)
CHUNKS = [SEEDS[i:i + CHUNK] for i in range(0, len(SEEDS), CHUNK)]


def _check(seeds, batch):
    stale = [s for s in seeds if hashlib.sha1(generate(s).source.encode()).hexdigest()[:12] != PROGRAMS[s]["sha"]]
    assert not stale, (f"the generator no longer makes the recorded programs of seeds {stale[:10]}...: record "
                       "them again with tests/tools/record_composition_values.py (needs JAX)")
    got = run_programs(seeds, "xjax", batch=batch, timeout=60)
    failures = []
    for s in seeds:
        ref = PROGRAMS[s]["outcome"]
        res = compare(ref, got[s], rtol=max(RECORD["rtol"], PROGRAMS[s].get("rtol", 0.0)))
        if res is not None:
            kind, detail = res
            failures.append(f"seed {s}: {kind}: {detail}\n    (python tests/compositions/generator.py {s})")
    return failures


@pytest.mark.parametrize("chunk", range(len(CHUNKS)), ids=lambda i: f"seeds{CHUNKS[i][0]}-{CHUNKS[i][-1]}")
def test_programs_match_jax(chunk):
    failures = _check(CHUNKS[chunk], CHUNK)
    assert not failures, f"{len(failures)} of {len(CHUNKS[chunk])} programs differ from JAX:\n" + "\n".join(failures)


@pytest.mark.parametrize("bug", sorted(KNOWN_FAILING))
def test_known_bug(bug, request):
    request.applymarker(pytest.mark.xfail(reason=f"known bug: {bug}", strict=False))
    failures = _check(KNOWN_FAILING[bug], CHUNK)
    assert not failures, f"{len(failures)} of {len(KNOWN_FAILING[bug])} still fail:\n" + "\n".join(failures)


# ---- the harness itself: a crash or hang is one program's outcome, named by its seed ---------------

def test_a_crash_is_isolated_to_its_program():
    seeds = SEEDS[:4]
    env = dict(os.environ, COMPOSITIONS_ABORT_SEED=str(seeds[1]))
    got = run_programs(seeds, "xjax", batch=4, timeout=60, env=env)
    assert set(got) == set(seeds)
    assert "crash" in got[seeds[1]] and not got[seeds[1]].get("batch_only")
    assert all("crash" not in got[s] for s in seeds if s != seeds[1])
    assert compare(PROGRAMS[seeds[1]]["outcome"], got[seeds[1]])[0] == "crash"


def test_a_hang_is_isolated_to_its_program():
    seeds = SEEDS[:3]
    env = dict(os.environ, COMPOSITIONS_HANG_SEED=str(seeds[0]))
    got = run_programs(seeds, "xjax", batch=3, timeout=3, env=env)
    assert "hang" in got[seeds[0]]
    assert all("ok" in got[s] or "error" in got[s] for s in seeds[1:])
