"""Iotas inside fused kernels (the counters of random draws): a tile's plain count is one loop compiled
per instruction set (fused_loops.cpp: count_up), counting in the slot's own width and wrapping."""
import numpy as np
import pytest
from isolated import digests_by_thread_count

import xjax
from xjax import lax

N = 100_003  # many tiles, split over the threads


@pytest.mark.parametrize("dtype", ["uint8", "int8", "uint16", "int16", "uint32", "int32", "float32"])
def test_fused_iota_counts_in_its_width(dtype):
    f = xjax.jit(lambda x: lax.iota(dtype, N) * x)
    got = np.asarray(f(np.ones((), dtype)))
    want = np.arange(N, dtype=np.int64).astype(dtype)  # wraps modulo the width, as XLA's iota
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["uint32", "int64", "uint64"])
def test_fused_iota_wide_types(dtype):
    xjax.config.update("jax_enable_x64", True)
    try:
        got = np.asarray(xjax.jit(lambda x: lax.iota(dtype, N) + x)(np.asarray(5, dtype)))
    finally:
        xjax.config.update("jax_enable_x64", False)
    np.testing.assert_array_equal(got, np.arange(N, dtype=dtype) + np.asarray(5, dtype))


def test_iota_along_an_inner_dim_is_unchanged():
    got = np.asarray(xjax.jit(lambda x: lax.broadcasted_iota("int32", (301, 7), 0) + x)(np.int32(1)))
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(301, dtype=np.int32)[:, None], (301, 7)) + 1)


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
from xjax import lax
h = hashlib.sha1()
for dtype in ("uint8", "int32", "float32"):
    h.update(np.asarray(xjax.jit(lambda x: lax.iota(dtype, 1_000_003) * x)(np.ones((), dtype))).tobytes())
h.update(np.asarray(xjax.jit(lambda k: xjax.random.normal(k, (1_000_003,)))(xjax.random.PRNGKey(3))).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
