"""Scatter-add of many one-element updates into a small result (segment_sum's form), which the CPU sums
in fixed chunks of updates (cpu/index_scatter.cpp): against np.add.at in float64, integers exact,
out-of-bounds indices dropped or clipped, index dtypes, multi-dimensional operands and batching
dims; bits independent of the thread count."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from isolated import digests_by_thread_count

import xjax
import xjax.numpy as jnp
from xjax import lax

N_UPDATES = 200_003  # four chunks of 2^16 updates, the last one short


def scatter_add_1d(operand, idx, upd, mode):
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    return lax.scatter_add(operand, idx[:, None], upd, dn, mode=mode)


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 3000), st.sampled_from([np.int32, np.int64, np.uint32, np.int16]),
       st.sampled_from(["drop", "clip"]), st.integers(0, 2**16))
def test_matches_add_at_in_float64(segments, index_dtype, mode, seed):
    rng = np.random.default_rng(seed)
    lo = 0 if np.dtype(index_dtype).kind == "u" else -3
    idx = rng.integers(lo, segments + 3, N_UPDATES).astype(index_dtype)
    upd = rng.standard_normal(N_UPDATES)
    operand = rng.standard_normal(segments)
    with xjax.enable_x64(True):
        got = scatter_add_1d(jnp.asarray(operand), jnp.asarray(idx), jnp.asarray(upd),
                             lax.GatherScatterMode.FILL_OR_DROP if mode == "drop" else lax.GatherScatterMode.CLIP)
    i = idx.astype(np.int64)
    keep = (i >= 0) & (i < segments) if mode == "drop" else np.ones(N_UPDATES, bool)
    want = operand.copy()
    np.add.at(want, np.clip(i, 0, segments - 1)[keep], upd[keep])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-11, atol=1e-11)


def test_float32_and_float16_close_to_float64():
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 500, N_UPDATES).astype(np.int32)
    upd = rng.standard_normal(N_UPDATES)
    want = np.zeros(500)
    np.add.at(want, idx, upd)
    for dtype, tol in ((np.float32, 2e-4), (np.float16, 0.5)):
        got = xjax.ops.segment_sum(jnp.asarray(upd.astype(dtype)), jnp.asarray(idx), num_segments=500)
        assert got.dtype == dtype
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


def test_integers_are_exact_and_wrap():
    rng = np.random.default_rng(2)
    idx = rng.integers(0, 700, N_UPDATES).astype(np.int32)
    upd = rng.integers(-2**31, 2**31, N_UPDATES).astype(np.int32)
    want = np.zeros(700, np.int64)
    np.add.at(want, idx, upd.astype(np.int64))
    got = xjax.jit(lambda u, i: xjax.ops.segment_sum(u, i, num_segments=700))(upd, idx)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(got), want.astype(np.int32))  # wrapped as int32 arithmetic


def test_multi_dimensional_operand():
    # Two index components per update (the decoded-starts path of the chunked sum).
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 40, (N_UPDATES, 2)).astype(np.int32)
    upd = rng.standard_normal(N_UPDATES).astype(np.float32)
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0, 1),
                                     scatter_dims_to_operand_dims=(0, 1))
    got = lax.scatter_add(jnp.zeros((40, 30), jnp.float32), idx, upd, dn, mode=lax.GatherScatterMode.FILL_OR_DROP)
    keep = idx[:, 1] < 30
    want = np.zeros((40, 30))
    np.add.at(want, (idx[keep, 0], idx[keep, 1]), upd[keep].astype(np.float64))
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=2e-4)


def test_float32_sums_in_order_within_each_chunk():
    # Each chunk of 2^16 updates is summed in index order (np.add.at on float32 applies its updates in
    # order, rounding each sum), then the chunks' sums are added to the operand in chunk order. Three
    # segments, so that neighbouring updates keep hitting the same one (the CPU loop takes four per step).
    rng = np.random.default_rng(6)
    idx = rng.integers(0, 3, N_UPDATES).astype(np.int32)
    upd = (rng.standard_normal(N_UPDATES) * 1e3).astype(np.float32)
    operand = rng.standard_normal(3).astype(np.float32)
    chunk = 1 << 16
    want = operand.copy()
    for c0 in range(0, N_UPDATES, chunk):
        part = np.zeros(3, np.float32)
        np.add.at(part, idx[c0:c0 + chunk], upd[c0:c0 + chunk])
        want = want + part
    dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    got = lax.scatter_add(jnp.asarray(operand), jnp.asarray(idx)[:, None], jnp.asarray(upd), dn)
    np.testing.assert_array_equal(np.asarray(got), want)


def test_vmapped_segment_sum():
    # Batching dims: the decoded-starts path, its chunks over all examples' updates.
    rng = np.random.default_rng(4)
    idx = rng.integers(0, 64, (3, N_UPDATES // 2)).astype(np.int32)
    upd = rng.standard_normal((3, N_UPDATES // 2)).astype(np.float32)
    f = lambda u, i: xjax.ops.segment_sum(u, i, num_segments=64)
    got = xjax.vmap(f)(upd, idx)
    for b in range(3):
        want = np.zeros(64)
        np.add.at(want, idx[b], upd[b].astype(np.float64))
        np.testing.assert_allclose(np.asarray(got[b]), want, rtol=2e-4, atol=2e-4)


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
rng = np.random.default_rng(9)
h = hashlib.sha1()
for n, segments in [(1_000_000, 1000), (300_000, 7)]:
    d = rng.standard_normal(n).astype(np.float32)
    i = rng.integers(0, segments, n).astype(np.int32)
    h.update(np.asarray(xjax.jit(lambda d, i: xjax.ops.segment_sum(d, i, num_segments=segments))(d, i)).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
