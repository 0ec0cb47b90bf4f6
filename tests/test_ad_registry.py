"""Every primitive has its differentiation rules: a JVP, and a transpose when it is linear.

The primitives are found by walking the xjax modules (not listed by hand), so a new primitive
without rules fails here. A primitive may instead be known to raise the documented
NotImplementedError naming it and the transformation (as JAX does for the same ones).
"""
import sys

import numpy as np
import pytest

import xjax
import xjax.lax  # noqa: F401 - registers the lax primitives
import xjax.numpy as jnp
from xjax._src import core, debugging, jit  # noqa: F401 - debug and jit primitives
from xjax._src.interpreters import ad

# Linear in at least one operand: reverse mode transposes these (mul and div in one operand, the
# scatters with their indices fixed, dot_general and conv_general_dilated in each operand, the
# select_and_* ops in their first operand, triangular_solve and custom_linear_solve in b, jit, cond,
# scan and shard_map by transposing their jaxprs).
LINEAR = {
    "neg", "copy", "add", "sub", "add_any", "mul", "div", "convert_element_type", "select_n", "reduce_sum",
    "cumsum", "reshape", "squeeze", "broadcast_in_dim", "transpose", "slice", "dynamic_slice",
    "dynamic_update_slice", "concatenate", "pad", "rev", "gather", "scatter", "scatter-add", "scatter-mul",
    "dot_general", "jit", "cond", "scan", "shard_map", "custom_jvp_call", "custom_lin", "remat2", "stack", "unstack",
    "split",
    "psum", "psum_invariant", "pvary", "all_gather", "reduce_scatter", "all_to_all", "ppermute",
    "conv_general_dilated", "reduce_window_sum", "select_and_gather_add", "select_and_scatter_add",
    "triangular_solve", "custom_linear_solve", "real", "imag", "conj", "complex", "fft",
    "tridiagonal_solve", "optimization_barrier", "reduce_precision", "reshard", "sharding_constraint",
    "pmap_to_global", "pmap_to_local",  # (pmap across processes: each the other's transpose)
}
# Differentiating these raises NotImplementedError naming the primitive, as in JAX (nextafter).
# custom_lin (a custom_vjp's linear part) has no JVP: forward mode over a custom_vjp raises JAX's TypeError.
# pmax and pmin have no derivative in JAX either; random_gamma_grad has none in JAX.
# The LAPACK forms (schur, hessenberg, tridiagonal, geqrf, householder_product, ormqr) and
# symmetric_product/cholesky_update have no derivative rules in JAX either.
RAISES = {"nextafter", "custom_lin", "pmax", "pmin", "random_gamma_grad", "schur", "hessenberg", "tridiagonal",
          "geqrf", "householder_product", "ormqr", "symmetric_product", "cholesky_update"}
# Linearized as a whole (the tangent loop recorded with its primal part, as JAX does), so it reaches
# transposition, whose rule raises JAX's ValueError: while has no reverse mode.
TRANSPOSE_REFUSED = {"while"}
# Primitives whose rules are being written elsewhere may wait here (none now: control flow landed).
PENDING = set()
# Made by pmap's compiler from psum/pmax/pmin after every transformation has run (lax/parallel_core.py):
# no trace ever sees it, so it has no transformation rules.
LOWERED_ONLY = {"all_reduce_across"}


def _all_primitives():
    found = {}

    def add(v):
        if isinstance(v, core.Primitive):
            found.setdefault(v.name, set()).add(v)

    for name, mod in list(sys.modules.items()):
        if not name.startswith("xjax") or mod is None:
            continue
        for v in list(vars(mod).values()):
            add(v)
            if isinstance(v, dict):
                for w in list(v.values()):
                    add(w)
    return found


PRIMS = _all_primitives()


def test_the_walk_finds_every_family():
    for name in ("sin", "add", "select_n", "reduce_max", "cumlogsumexp", "dot_general", "pad", "gather",
                 "scatter-max", "sort", "top_k", "jit", "debug_print", "debug_callback", "cond", "iota"):
        assert name in PRIMS, name
    assert len(PRIMS) > 100
    assert all(len(ps) == 1 for ps in PRIMS.values()), "two primitives share a name"


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_rules_present(name):
    (prim,) = PRIMS[name]
    if name in PENDING:
        assert prim.jvp is None, f"'{name}' now has a jvp rule: move it from PENDING (to LINEAR too if it transposes)"
        return
    if name in RAISES:
        return
    if name in LOWERED_ONLY:
        assert prim.jvp is None and prim.transpose is None, f"'{name}' has a rule: remove it from LOWERED_ONLY"
        return
    assert prim.jvp is not None, f"'{name}' has no jvp rule"
    if name in TRANSPOSE_REFUSED:
        with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
            prim.transpose(None)
    elif name in LINEAR:
        assert prim.transpose is not None, f"linear '{name}' has no transpose rule"
    else:
        assert prim.transpose is None, f"'{name}' has a transpose rule but is not listed as linear"


def test_lists_name_real_primitives():
    for name in LINEAR | RAISES | PENDING | TRANSPOSE_REFUSED | LOWERED_ONLY:
        assert name in PRIMS, name


# igamma_grad_a and zeta have rules for one operand only (as JAX: none for the other).
@pytest.mark.parametrize("name, fn", [("igamma_grad_a", lambda x: xjax.lax.igamma_grad_a(x, jnp.float32(2.0))),
                                      ("zeta", lambda x: xjax.lax.zeta(x + 2, jnp.float32(2.0))),
                                      ("nextafter", lambda x: xjax.lax.nextafter(x, jnp.float32(2.0)))])
def test_raises_name_primitive_and_transformation(name, fn):
    x = jnp.float32(1.5)
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}'"):
        xjax.grad(fn)(x)
    with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}'"):
        xjax.jvp(fn, (x,), (x,))


def test_missing_rules_name_primitive_and_transformation():
    prim = core.Primitive("no_rules_here")
    prim.def_rules(abstract_eval=lambda x: x, impl=lambda x: x)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'no_rules_here' not implemented"):
        xjax.jvp(lambda x: prim.bind(x), (jnp.float32(1.0),), (jnp.float32(1.0),))
    # A JVP whose tangent uses a primitive without a transpose rule fails in reverse mode only.
    prim.def_rules(jvp=lambda primals, tangents: (prim.bind(*primals), prim.bind(*tangents)))
    _, t = xjax.jvp(lambda x: prim.bind(x), (jnp.float32(1.0),), (jnp.float32(2.0),))
    assert float(t) == 2.0
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'no_rules_here' not implemented"):
        xjax.grad(lambda x: prim.bind(x))(jnp.float32(1.0))


def test_zero_jvp_primitives_give_float0_or_zero_tangents():
    x = jnp.array([1.5, -2.5, 3.0])
    _, t = xjax.jvp(lambda x: xjax.lax.argmax(x, 0, np.int32), (x,), (x,))
    assert t.dtype == ad.float0
    _, t = xjax.jvp(lambda x: xjax.lax.floor(x), (x,), (x,))
    np.testing.assert_array_equal(np.asarray(t), 0.0)
