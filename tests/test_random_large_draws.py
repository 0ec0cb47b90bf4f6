"""Large draws run the CPU's block loops (threefry2x32 over interleaved blocks of counters, erf_inv's
main-range blocks): their bits are JAX's whatever the thread count, and so are erf_inv's in blocks of
either kind."""
import hashlib

import numpy as np
import pytest

from core_util import to_core, to_numpy
from isolated import digests_by_thread_count
from xjax import _core

# SHA-1 of the bytes of each draw for PRNGKey(7) and 100_003 elements (odd: a partial last block),
# recorded from jax 0.10.2 (jax_threefry_partitionable, its default).
JAX_DIGESTS = {
    "bits": "d2d3f4ea292be6680af31da271bb089bb53cdc78",
    "uniform": "2f8e768b4714cb37184e113cc6cf95c925380433",
    "normal": "5b67abce3a4638ab7e8274c1c9f4829215772184",
    "split": "bc4baca5547e03ccd2eb8bc00e2a914638965e81",
}

_DRAW = """
    import hashlib
    import numpy as np
    import xjax as jax
    key = jax.random.PRNGKey(7)
    n = 100_003
    draw = {{"bits": lambda: jax.random.bits(key, (n,)), "uniform": lambda: jax.random.uniform(key, (n,)),
            "normal": lambda: jax.random.normal(key, (n,)), "split": lambda: jax.random.split(key, n)}}[{name!r}]
    print(hashlib.sha1(np.asarray({wrap}(draw)()).tobytes()).hexdigest())
"""


@pytest.mark.parametrize("name", sorted(JAX_DIGESTS))
def test_large_draws_are_jaxs_at_any_thread_count(name):
    eager = digests_by_thread_count(_DRAW.format(name=name, wrap=""))
    jitted = digests_by_thread_count(_DRAW.format(name=name, wrap="jax.jit"))
    assert eager + jitted == [JAX_DIGESTS[name]] * 4


def _erf_inv_exe(n, fused):
    g = _core.Graph()
    (x,) = [g.parameter((n,), "float32")]
    if fused:  # neg(erf_inv(neg(x))): the fused engine's tile loop
        (x,) = g.add("neg", [x], {})
    (y,) = g.add("erf_inv", [x], {})
    if fused:
        (y,) = g.add("neg", [y], {})
    g.set_outputs([y])
    return _core.compile(g)


def _erf_inv_inputs():
    """Blocks of 64 inside the main range (|y| <= 0.996), blocks with one value past it, and values
    on both sides of the bounds (0.996, and 0.99662 where the tail's polynomial takes over)."""
    rng = np.random.default_rng(11)
    y = rng.uniform(-0.996, 0.996, 64 * 200).astype(np.float32)
    edges = np.array([0.996, 0.99662, 0.9966, 0.99665, 1.0, 0.999999, 1e-40, 0.0, 2.0, np.nan], np.float32)
    edges = np.concatenate([edges, -edges, np.nextafter(edges, np.float32(0)), np.nextafter(edges, np.float32(2))])
    for i, v in enumerate(edges):  # one past the range in every other block, at varying positions
        y[128 * i + (37 * i) % 64] = v
    return np.concatenate([y, rng.uniform(-1, 1, 1001).astype(np.float32)])


# SHA-1 of jax 0.10.2's float32 lax.erf_inv of _erf_inv_inputs(), NaNs replaced by 0 (their sign is
# unspecified).
JAX_ERF_INV_DIGEST = "4e0f1fa659f013b1aa95f145a618b5d76928ac43"


@pytest.mark.parametrize("fused", [False, True])
def test_erf_inv_blocks_are_jaxs(fused):
    y = _erf_inv_inputs()
    (got,) = [to_numpy(r) for r in _erf_inv_exe(y.size, fused).run([to_core(y)])]
    assert hashlib.sha1(np.where(np.isnan(got), np.float32(0), got).tobytes()).hexdigest() == JAX_ERF_INV_DIGEST
    # and each value alone (a block of one) as inside the array
    alone = _erf_inv_exe(1, fused)
    for i in range(0, y.size, 97):
        (one,) = [to_numpy(r) for r in alone.run([to_core(y[i:i + 1])])]
        assert one.view(np.uint32)[0] == got.view(np.uint32)[i] or (np.isnan(one[0]) and np.isnan(got[i]))


@pytest.mark.parametrize("n", [1, 63, 64, 65, 127, 128, 129, 1000, 1025])
def test_bits_are_a_prefix_of_a_longer_draws(n):
    """Element i's bits depend on i alone (the counters are an iota, JAX's partitionable threefry), so
    a draw of n is the start of a longer one: lengths around the cipher's blocks (64 counters, 128
    with AVX-512) and the fused engine's tiles, eager and jitted."""
    import xjax

    key = xjax.random.PRNGKey(3)
    longer = np.asarray(xjax.random.bits(key, (4096,)))
    np.testing.assert_array_equal(np.asarray(xjax.random.bits(key, (n,))), longer[:n])
    np.testing.assert_array_equal(np.asarray(xjax.jit(lambda k: xjax.random.bits(k, (n,)))(key)), longer[:n])
