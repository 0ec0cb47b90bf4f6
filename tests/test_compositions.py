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

# Programs where JAX's outcome is a JAX bug or an accident of its dead-code elimination: not run.
JAX_DIFFERS = {
    111: "JAX has no derivative for pmax even where vmap(axis_name=) made it a max over the batch axis; xjax "
         "differentiates that max as jnp.max's",
    251: "JAX has no derivative for pmin even where vmap(axis_name=) made it a min over the batch axis; xjax "
         "differentiates that min as jnp.min's",
    289: "JAX has no derivative for pmax even where vmap(axis_name=) made it a max over the batch axis; xjax "
         "differentiates that max as jnp.max's",
    363: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    411: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    456: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    476: "JAX's lax.map(batch_size=) over an array with an empty non-leading axis: ZeroDivisionError",
    593: "JAX raises for the JVP of a custom_vjp function in a dead loop under lax.map(batch_size=)'s vmap only",
}

CHUNK = 30
SEEDS = sorted(s for s in PROGRAMS if s not in JAX_DIFFERS)
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
