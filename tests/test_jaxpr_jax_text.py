"""Jaxprs of transformed programs (grad, value_and_grad, jvp, vmap, scan and their compositions)
print as JAX 0.10.2 prints them, and their outputs have JAX's dtypes and weak types.

The programs are tests/tools/jaxpr_programs.py; the text and types JAX gave for them are recorded
in tests/jaxpr_jax_text_values.py by tests/tools/record_jaxprs.py (run it with JAX installed to
regenerate them; these tests never import jax).
"""
import os
import sys

import numpy as np
import pytest

import xjax as jax
import xjax.numpy as jnp
from xjax import lax

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "tools"))
from jaxpr_programs import PROGRAMS  # noqa: E402
from jaxpr_jax_text_values import RECORDED  # noqa: E402

# Programs whose jaxprs still differ from JAX's (see docs/architecture.md, "Jaxprs as JAX prints them").
KNOWN_DIFFERENT = {
    "grad_irfft": "irfft's transpose rule (in lax, below jit) calls the fft primitive and a constant mask; JAX's calls its jitted lax.fft and builds the mask with dynamic_update_slice (same values)",
    "grad_mean_var": "in a jit linearised inside a linearised jit, JAX passes a scalar constant made by a JVP rule (select_n's zero tangent) as a residual: an output 0.0:f32[] of the known jit and an unread binder of the unknown one; xjax keeps it a literal of the unknown jit",
}


def _run(src):
    ns = dict(jax=jax, jnp=jnp, lax=lax, np=np)
    exec(src, ns)
    closed = jax.make_jaxpr(ns["fn"])(*ns["args"])
    return str(closed), [(a.dtype.name, bool(a.weak_type)) for a in closed.out_avals]


def test_every_program_is_recorded():
    assert sorted(PROGRAMS) == sorted(RECORDED)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_jaxpr_matches_jax(name):
    if name in KNOWN_DIFFERENT:
        pytest.xfail(KNOWN_DIFFERENT[name])
    text, types = _run(PROGRAMS[name])
    want_text, want_types = RECORDED[name]
    assert types == want_types
    assert text == want_text


@pytest.mark.parametrize("name", sorted(KNOWN_DIFFERENT))
def test_known_differences_still_differ(name):
    """A program listed as different that now matches must leave KNOWN_DIFFERENT."""
    assert _run(PROGRAMS[name]) != tuple(RECORDED[name])
