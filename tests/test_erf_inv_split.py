"""float32 erf_inv's loop splits each block into lists by formula (log1p's near-0 rational, log(1 + x),
the rest: tail, NaN, out of domain) and puts the values back: each element's bits must be JAX's (XLA's
algorithm), whatever its neighbours, the array's length and offset, the fused engine's tiles or the
thread count. (The reference interpreter computes in double: not these bits.)"""
import hashlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from core_util import to_core, to_numpy
from isolated import digests_by_thread_count
from xjax import _core

# One of each kind, and the bounds between them: |x| = y^2 = sqrt(2) - 1 (log1p's formulas), 0.996
# (the main range), 0.99662 (the tail's polynomial), 1 and beyond, NaN, zeros and subnormals.
_EDGES = np.array([0.0, 0.3, 0.6435, 0.64359, 0.6436, 0.9, 0.996, 0.9960001, 0.99662, 0.9999, 1.0, 1.5,
                   np.inf, np.nan, 1e-40, 1e-38, 0.7071], np.float32)
_EDGES = np.concatenate([_EDGES, -_EDGES, np.nextafter(_EDGES, np.float32(0))])


# SHA-1 of jax 0.10.2's float32 lax.erf_inv of _mixed(1100, 1) and of _EDGES, NaNs replaced by 0
# (their sign is unspecified).
JAX_MIXED_DIGEST = "d9f547d3c33a4ee324ad02271871c5c133bff2e2"
JAX_EDGES_DIGEST = "20f421b71921e44137e03ccf5ae6ec7416df3b9c"


def _digest(r):
    return hashlib.sha1(np.where(np.isnan(r), np.float32(0), r).tobytes()).hexdigest()


def _erf_inv(y, fused=False):
    g = _core.Graph()
    x = g.parameter(y.shape, "float32")
    if fused:  # neg(erf_inv(neg(x))): the fused engine's tile loop
        (x,) = g.add("neg", [x], {})
    (r,) = g.add("erf_inv", [x], {})
    if fused:
        (r,) = g.add("neg", [r], {})
    g.set_outputs([r])
    (out,) = _core.compile(g).run([to_core(y)])
    return to_numpy(out)


def _assert_bits_equal(got, want):
    nan = np.isnan(want)  # (a NaN's sign is unspecified)
    assert np.array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got[~nan].view(np.uint32), want[~nan].view(np.uint32))


def _mixed(n, seed):
    rng = np.random.default_rng(seed)
    y = rng.uniform(-1, 1, n).astype(np.float32)
    picks = rng.random(n) < 0.1
    y[picks] = rng.choice(_EDGES, picks.sum())
    return y


@pytest.mark.parametrize("fused", [False, True])
def test_every_length_and_offset_is_jaxs(fused):
    y = _mixed(1100, 1)
    want = _erf_inv(y, fused)
    assert _digest(want) == JAX_MIXED_DIGEST
    for n in list(range(1, 71)) + [255, 256, 257, 511, 513]:
        for off in (0, 1, 5, 300):
            _assert_bits_equal(_erf_inv(y[off:off + n], fused), want[off:off + n])


def test_edges_alone_and_in_every_lane():
    want = _erf_inv(_EDGES)
    assert _digest(want) == JAX_EDGES_DIGEST
    for i, v in enumerate(_EDGES):
        _assert_bits_equal(_erf_inv(_EDGES[i:i + 1]), want[i:i + 1])
        for lane in (0, 7, 15, 16, 255, 256):
            y = np.full(300, 0.25, np.float32)
            y[lane] = v
            got = _erf_inv(y)
            _assert_bits_equal(got[lane:lane + 1], want[i:i + 1])
            _assert_bits_equal(np.delete(got, lane), np.full(299, got[lane - 1 if lane else 1], np.float32))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-1.25, 1.25, width=32) | st.sampled_from(_EDGES.tolist()), min_size=1, max_size=600))
def test_hypothesis_arrays_are_their_values_alone(values):
    y = np.array(values, np.float32)
    got = _erf_inv(y)
    for i in range(y.size):
        _assert_bits_equal(got[i:i + 1], _erf_inv(y[i:i + 1]))


def test_large_arrays_at_any_thread_count():
    code = """
        import hashlib
        import numpy as np
        import xjax as jax
        import xjax.numpy as jnp
        rng = np.random.default_rng(5)
        y = rng.uniform(-1, 1, 100_003).astype(np.float32)
        y[::997] = np.float32(0.9999)
        r = np.asarray(jax.jit(lambda v: -jax.lax.erf_inv(v * 1.0))(jnp.asarray(y)))
        print(hashlib.sha1(r.tobytes()).hexdigest())
    """
    (d1, d3) = digests_by_thread_count(code)
    assert d1 == d3
