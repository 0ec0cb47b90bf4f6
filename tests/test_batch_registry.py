"""Every primitive has a batching (vmap) rule, found by the same module walk as test_ad_registry.

A primitive may instead: take no array operands (never batched: vmap binds it unchanged), raise the
documented NotImplementedError naming it (RAISES), or wait in PENDING while its rule is written.
"""
import numpy as np
import pytest

import xjax
import xjax.numpy as jnp
from batch_cases import check_eager_and_jit
from test_ad_registry import LOWERED_ONLY, PRIMS
from xjax._src import core

# Rules being written now, on other branches (none now: every family has landed).
PENDING = set()
# No array operands, so every application is unmapped and vmap binds it in the enclosing trace.
NO_OPERANDS = {"iota", "iota_2x32_shape", "empty2"}
# vmap of these raises NotImplementedError("Batching rule for '<name>' not implemented"), as in JAX.
RAISES = {"cholesky_update"}


@pytest.mark.parametrize("name", sorted(PRIMS))
def test_batch_rule_present(name):
    (prim,) = PRIMS[name]
    if name in PENDING:
        assert prim.batch is None, f"'{name}' now has a batching rule: remove it from PENDING"
    elif name in RAISES | NO_OPERANDS | LOWERED_ONLY:
        assert prim.batch is None, f"'{name}' has a batching rule: remove it from RAISES/NO_OPERANDS/LOWERED_ONLY"
    else:
        assert prim.batch is not None, f"'{name}' has no batching rule"


def test_lists_name_real_primitives():
    for name in PENDING | NO_OPERANDS | RAISES:
        assert name in PRIMS, name
    assert not (PENDING & RAISES) and not (PENDING & NO_OPERANDS)


def test_a_missing_rule_names_the_primitive_and_batching():
    prim = core.Primitive("no_batch_rule_here")
    prim.def_rules(abstract_eval=lambda x: x, impl=lambda x: x)
    with pytest.raises(NotImplementedError, match="Batching rule for 'no_batch_rule_here' not implemented"):
        xjax.vmap(lambda x: prim.bind(x))(jnp.ones((2, 3)))
    # Unmapped operands never reach the rule.
    np.testing.assert_array_equal(xjax.vmap(lambda x, y: prim.bind(y) + x, in_axes=(0, None))(
        jnp.ones(2), jnp.ones(3)), np.full((2, 3), 2.0, np.float32))


def test_primitives_without_operands_run_unbatched():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    check_eager_and_jit(lambda v: v + xjax.lax.iota(np.int32, 3), (x,), 0)
