"""Convolutions whose groups have at least 16 input features read the input under each tap in place
(conv_blocks.cpp: tap_rows, the kernels' gemm_indirect) instead of copying it into im2col blocks:
every geometry the pointers must get right (padding, holes, strides, dilations, groups, several tap
blocks and column panels), against the convolution's definition in float64."""
import numpy as np
from conv_reference import ref_conv
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from isolated import digests_by_thread_count

import xjax
from xjax import lax


SPECS = {1: ("NWC", "WIO", "NWC"), 2: ("NHWC", "HWIO", "NHWC"), 3: ("NDHWC", "DHWIO", "NDHWC")}


@st.composite
def cases(draw):
    nsp = draw(st.integers(1, 3))
    fgc = draw(st.sampled_from([1, 1, 2]))
    bgc = 1 if fgc > 1 else draw(st.sampled_from([1, 1, 2]))
    cg = draw(st.sampled_from([16, 17, 32, 48]))  # 48 x 9 taps: more than one tap block
    og = draw(st.sampled_from([2, 5, 32, 33, 70]))  # partial and several column panels
    window = [draw(st.integers(1, 3 if nsp < 3 else 2)) for _ in range(nsp)]
    size = [draw(st.integers(1, 7 if nsp < 3 else 4)) for _ in range(nsp)]
    strides = [draw(st.integers(1, 2)) for _ in range(nsp)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(nsp)]
    pads = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(nsp)]
    batch = draw(st.integers(1, 3)) * bgc
    for n, k, ld, rd, (lo, hi) in zip(size, window, lhs_dil, rhs_dil, pads):  # at least one output
        assume((n - 1) * ld + 1 + lo + hi >= (k - 1) * rd + 1)
    return dict(nsp=nsp, fgc=fgc, bgc=bgc, cg=cg, og=og, window=window, size=size, strides=strides,
                lhs_dil=lhs_dil, rhs_dil=rhs_dil, pads=pads, batch=batch, seed=draw(st.integers(0, 2**16)))


def _operands(c, dtype):
    rng = np.random.default_rng(c["seed"])
    x = rng.standard_normal((c["batch"], *c["size"], c["cg"] * c["fgc"]))
    w = rng.standard_normal((*c["window"], c["cg"], c["og"] * c["fgc"] * c["bgc"]))
    return x.astype(dtype), w.astype(dtype)


def _run(c, x, w):
    dn = SPECS[c["nsp"]]
    args = (c["strides"], c["pads"], c["lhs_dil"], c["rhs_dil"], dn, c["fgc"], c["bgc"])
    got = lax.conv_general_dilated(x, w, *args)
    return np.asarray(got), ref_conv(x.astype(np.float64), w.astype(np.float64), *args)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_float32_matches_the_definition(c):
    got, want = _run(c, *_operands(c, np.float32))
    assert got.shape == want.shape
    k = np.prod(c["window"]) * c["cg"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6 * np.sqrt(k) * 4)


@settings(max_examples=30, deadline=None)
@given(cases())
def test_float64_and_int32_match_the_definition(c):
    with xjax.enable_x64(True):
        got, want = _run(c, *_operands(c, np.float64))
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        xi, wi = (np.round(a * 4).astype(np.int32) for a in _operands(c, np.float64))
        got, want = _run(c, xi, wi)
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, want.astype(np.int32))


_HASH_SCRIPT = """
import hashlib
import numpy as np
import xjax
from xjax import lax
rng = np.random.default_rng(3)
h = hashlib.sha1()
dn = ("NHWC", "HWIO", "NHWC")
for cin, cout, lhs_dil in [(48, 40, (1, 1)), (32, 32, (2, 2)), (16, 70, (1, 1))]:
    x = rng.standard_normal((4, 19, 23, cin)).astype(np.float32)
    w = rng.standard_normal((3, 3, cin, cout)).astype(np.float32)
    y = xjax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 2), ((1, 1), (2, 0)), lhs_dil, (1, 1), dn))(x, w)
    h.update(np.asarray(y).tobytes())
print(h.hexdigest())
"""


def test_bits_do_not_depend_on_the_thread_count():
    first, second = digests_by_thread_count(_HASH_SCRIPT)
    assert first == second
