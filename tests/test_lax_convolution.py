"""lax.conv_general_dilated and its helpers (conv, conv_with_general_padding, conv_transpose,
conv_dimension_numbers, padtype_to_pads): forward values and gradients against values recorded from
JAX and a NumPy reference, numerical derivative checks in x64, batching against a loop, bad input."""
import numpy as np
import pytest
from batching_util import check_batch
from conv_reference import ref_conv
from jax_conv_values import CONV, CONV_TRANSPOSE
from scipy import signal

import xjax
import xjax.numpy as jnp
from xjax import lax
from xjax.test_util import check_grads


@pytest.fixture
def x64():
    xjax.config.update("jax_enable_x64", True)
    yield
    xjax.config.update("jax_enable_x64", False)


def det(shape, k):
    """The recorded inputs (see jax_conv_values.py)."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 0.77 + k) * 1.5).astype(np.float32).reshape(shape)


def _canon_shape(spec, pair, first2, spatial_sizes, spatial_letters):
    sizes = dict(zip(pair, first2))
    sizes.update(zip(spatial_letters, spatial_sizes))
    return tuple(sizes[c] for c in spec)


LAYOUTS = {1: [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("HNC", "IHO", "CHN")],
           2: [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NHWC", "OIHW", "NCHW"), ("CWNH", "IOWH", "WHCN")],
           3: [("NCDHW", "OIDHW", "NCDHW"), ("NDHWC", "DHWIO", "NDHWC")]}


def random_case(seed):
    """A random convolution: layout, sizes, strides, padding, dilations and groups."""
    rng = np.random.default_rng(seed)
    nsp = int(rng.integers(1, 4)) if seed % 5 else 2
    dn = LAYOUTS[nsp][rng.integers(len(LAYOUTS[nsp]))]
    fgc = int(rng.choice([1, 1, 2, 3]))
    bgc = 1 if fgc > 1 else int(rng.choice([1, 1, 2]))
    n, cg = int(rng.integers(1, 3)) * bgc, int(rng.integers(1, 4))
    o = int(rng.integers(1, 3)) * fgc * bgc
    letters = [c for c in dn[1] if c not in "OI"]
    sp = [int(rng.integers(1, 7 if nsp < 3 else 4)) for _ in range(nsp)]
    ks = [int(rng.integers(1, 4)) for _ in range(nsp)]
    kw = dict(window_strides=tuple(int(rng.integers(1, 3)) for _ in range(nsp)),
              lhs_dilation=tuple(int(rng.integers(1, 3)) for _ in range(nsp)),
              rhs_dilation=tuple(int(rng.integers(1, 3)) for _ in range(nsp)),
              padding=tuple((int(rng.integers(-1, 3)), int(rng.integers(-1, 3))) for _ in range(nsp)),
              dimension_numbers=dn, feature_group_count=fgc, batch_group_count=bgc)
    for i in range(nsp):  # keep every padded size non-negative
        lo, hi = kw["padding"][i]
        if (sp[i] - 1) * kw["lhs_dilation"][i] + 1 + lo + hi < 0:
            kw["padding"] = kw["padding"][:i] + ((0, 0),) + kw["padding"][i + 1:]
    x = rng.standard_normal(_canon_shape(dn[0], "NC", (n, cg * fgc), sp, letters))
    w = rng.standard_normal(_canon_shape(dn[1], "OI", (o, cg), ks, letters))
    return x, w, kw


# ---- forward and gradients ----------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CONV))
def test_matches_jax(name):
    case = CONV[name]
    x, w = det(case["lhs_shape"], 0), det(case["rhs_shape"], 1)
    f = lambda x, w: lax.conv_general_dilated(x, w, **case["kwargs"])  # noqa: E731
    y = f(x, w)
    assert y.shape == case["y_shape"] and y.dtype == np.float32
    np.testing.assert_allclose(np.asarray(y).ravel(), case["y"], rtol=1e-4, atol=1e-4)
    ct = det(case["y_shape"], 3)
    gx, gw = xjax.grad(lambda x, w: jnp.sum(f(x, w) * ct), (0, 1))(x, w)
    np.testing.assert_allclose(np.asarray(gx).ravel(), case["gx"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(gw).ravel(), case["gw"], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(xjax.jit(f)(x, w), y, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("seed", range(40))
def test_matches_numpy_reference(x64, seed):
    x, w, kw = random_case(seed)
    want = ref_conv(x, w, kw["window_strides"], kw["padding"], kw["lhs_dilation"], kw["rhs_dilation"],
                    kw["dimension_numbers"], kw["feature_group_count"], kw["batch_group_count"])
    got = lax.conv_general_dilated(x, w, **kw)
    assert got.shape == want.shape and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("strides,lhs_dil,rhs_dil,pads", [
    ((1, 2), (2, 3), (1, 2), ((2, 1), (0, 3))),
    ((2, 3), (3, 2), (2, 1), ((-1, 2), (4, 0))),
    ((3, 1), (4, 4), (3, 2), ((3, 3), (1, 1))),
])
@pytest.mark.parametrize("groups", [(1, 1), (2, 1), (1, 2)])
def test_lhs_dilation_matches_numpy(x64, strides, lhs_dil, rhs_dil, pads, groups):
    """An lhs with holes: the kernel computes one dense convolution per class of output positions."""
    fgc, bgc = groups
    rng = np.random.default_rng(sum(strides) + 10 * fgc + bgc)
    x = rng.standard_normal((2 * bgc, 5, 4, 2 * fgc))
    w = rng.standard_normal((3, 4, 2, 3 * fgc * bgc))
    dn = ("NHWC", "HWIO", "NHWC")
    got = lax.conv_general_dilated(x, w, strides, pads, lhs_dil, rhs_dil, dn, fgc, bgc)
    want = ref_conv(x, w, strides, pads, lhs_dil, rhs_dil, dn, fgc, bgc)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_matches_scipy_correlate():
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((9, 11)).astype(np.float32), rng.standard_normal((4, 3)).astype(np.float32)
    for mode, pad in (("valid", "VALID"), ("full", [(3, 3), (2, 2)])):
        got = lax.conv(x[None, None], w[None, None], (1, 1), pad)[0, 0]
        np.testing.assert_allclose(got, signal.correlate(x, w, mode=mode), rtol=1e-5, atol=1e-5)
    got = lax.conv_with_general_padding(x[None, None], w[None, None], (1, 1), [(0, 0), (0, 0)], None, (2, 1))[0, 0]
    w_dil = np.zeros((7, 3), np.float32)
    w_dil[::2] = w
    np.testing.assert_allclose(got, signal.correlate(x, w_dil, mode="valid"), rtol=1e-5, atol=1e-5)


def test_large_shapes_match_numpy():
    """Sizes that the kernel splits into many blocks (and tap chunks for the kernel gradient)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 20, 20, 24)).astype(np.float32)
    w = rng.standard_normal((3, 3, 24, 40)).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn)
    want = ref_conv(x.astype(np.float64), w.astype(np.float64), (1, 1), [(1, 1), (1, 1)], (1, 1), (1, 1), dn)
    np.testing.assert_allclose(y, want, rtol=2e-4, atol=2e-4)
    ct = rng.standard_normal(y.shape).astype(np.float32)
    gw = xjax.grad(lambda w: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn) * ct))(w)
    # dW[kh, kw, c, o] = sum over n, h, w of the padded x under the tap times ct.
    xp = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    want_gw = np.stack([np.stack([np.einsum("nhwc,nhwo->co", xp[:, i:i + 20, j:j + 20], ct) for j in range(3)])
                        for i in range(3)])
    np.testing.assert_allclose(gw, want_gw, rtol=2e-4, atol=2e-3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int8", "int32", "uint8", "bool"])
def test_dtypes(dtype):
    rng = np.random.default_rng(2)
    x = (rng.random((2, 3, 6, 5)) * 4).astype(np.float32)
    w = (rng.random((4, 3, 2, 3)) * 4).astype(np.float32)
    if "float" not in dtype:
        x, w = np.floor(x), np.floor(w)
    if dtype == "bool":
        x, w = x > 1.5, w > 1.5
    xa, wa = jnp.asarray(x, dtype), jnp.asarray(w, dtype)
    y = lax.conv_general_dilated(xa, wa, (1, 2), [(1, 0), (1, 1)])
    want = ref_conv(np.asarray(xa).astype(np.float64), np.asarray(wa).astype(np.float64), (1, 2), [(1, 0), (1, 1)],
                    (1, 1), (1, 1), ("NCHW", "OIHW", "NCHW"))
    assert y.dtype == xa.dtype
    if dtype == "bool":
        want = want != 0
    elif dtype in ("int8", "uint8"):
        want = want.astype(np.int64).astype(dtype)  # wraps, as XLA
    tol = {"float16": 2e-2, "bfloat16": 1e-1}.get(dtype, 1e-6)
    np.testing.assert_allclose(np.asarray(y).astype(np.float64), np.asarray(want).astype(np.float64), rtol=tol,
                               atol=tol * 10)


def test_preferred_element_type():
    x = jnp.asarray(np.full((1, 2, 3, 3), 100, np.int8))
    w = jnp.asarray(np.full((1, 2, 2, 2), 100, np.int8))
    y = lax.conv_general_dilated(x, w, (1, 1), "VALID", preferred_element_type=jnp.int32)
    assert y.dtype == np.int32 and np.all(np.asarray(y) == 80000)
    yf = lax.conv_general_dilated(x.astype(jnp.float16), w.astype(jnp.float16), (1, 1), "VALID",
                                  preferred_element_type=jnp.float32)
    assert yf.dtype == np.float32 and np.all(np.asarray(yf) == 80000)
    with pytest.raises(TypeError, match="preferred_element_type"):
        lax.conv_general_dilated(x.astype(jnp.float32), w.astype(jnp.float32), (1, 1), "VALID",
                                 preferred_element_type=jnp.int32)


def test_empty_shapes():
    y = lax.conv_general_dilated(jnp.ones((0, 2, 5, 5)), jnp.ones((3, 2, 2, 2)), (1, 1), "VALID")
    assert y.shape == (0, 3, 4, 4)
    y = lax.conv_general_dilated(jnp.ones((1, 0, 5, 5)), jnp.ones((3, 0, 2, 2)), (1, 1), "VALID")
    assert y.shape == (1, 3, 4, 4) and np.all(np.asarray(y) == 0)
    y = lax.conv_general_dilated(jnp.ones((1, 2, 2, 2)), jnp.ones((3, 2, 3, 3)), (1, 1), "VALID")
    assert y.shape == (1, 3, 0, 0)
    g = xjax.grad(lambda w: jnp.sum(lax.conv_general_dilated(jnp.ones((1, 2, 2, 2)), w, (1, 1), "VALID")))(
        jnp.ones((3, 2, 3, 3)))
    assert g.shape == (3, 2, 3, 3) and np.all(np.asarray(g) == 0)


# ---- helpers ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CONV_TRANSPOSE))
def test_conv_transpose_matches_jax(name):
    case = CONV_TRANSPOSE[name]
    y = lax.conv_transpose(det(case["lhs_shape"], 0), det(case["rhs_shape"], 1), **case["kwargs"])
    assert y.shape == case["y_shape"]
    np.testing.assert_allclose(np.asarray(y).ravel(), case["y"], rtol=1e-4, atol=1e-4)


def test_conv_dimension_numbers_and_padtype():
    dn = lax.conv_dimension_numbers((1, 5, 6, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), None) == ((0, 1, 2),) * 3
    assert lax.conv_dimension_numbers((1, 2, 3), (1, 2, 3), dn) is dn
    # Spatial dims follow the kernel's order.
    assert lax.conv_dimension_numbers((1,) * 4, (1,) * 4, ("NWHC", "OIHW", "NHCW")) == ((0, 3, 2, 1), (0, 1, 2, 3),
                                                                                        (0, 2, 1, 3))
    assert lax.padtype_to_pads((5, 6), (3, 2), (2, 2), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((4, 7), (4, 4), (1, 3), "SAME") == [(1, 2), (1, 2)]
    assert lax.padtype_to_pads((4, 7), (4, 4), (1, 3), "SAME_LOWER") == [(2, 1), (2, 1)]
    assert lax.padtype_to_pads((4, 7), (4, 4), (1, 3), "valid") == [(0, 0), (0, 0)]


def test_jaxpr_shows_the_primitive():
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))  # noqa
    text = str(xjax.make_jaxpr(f)(jnp.ones((1, 5, 5, 2)), jnp.ones((3, 3, 2, 4))))
    assert "conv_general_dilated[" in text
    assert "dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), " \
           "out_spec=(0, 3, 1, 2))" in text
    assert "padding=((1, 1), (1, 1))" in text


# ---- derivatives --------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 3, 7, 11, 16, 22])
def test_check_grads(x64, seed):
    x, w, kw = random_case(seed)
    check_grads(lambda x, w: lax.conv_general_dilated(x, w, **kw), (x, w), order=2, modes=("fwd", "rev"))


def test_check_grads_conv_transpose(x64):
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal((1, 3, 3, 2)), rng.standard_normal((3, 3, 2, 3))
    check_grads(lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"), (x, w), order=2)


# ---- batching -----------------------------------------------------------------------------------

def _batch_case(fgc=1, bgc=1):
    rng = np.random.default_rng(fgc * 10 + bgc)
    x = rng.standard_normal((3, 2 * bgc, 2 * fgc, 5, 4)).astype(np.float32)  # (vmapped, N, C, H, W)
    w = rng.standard_normal((3, 2 * fgc * bgc, 2, 2, 3)).astype(np.float32)  # (vmapped, O, I, H, W)
    f = lambda x, w: lax.conv_general_dilated(x, w, (1, 2), [(1, 0), (0, 1)], rhs_dilation=(1, 2),  # noqa: E731
                                              feature_group_count=fgc, batch_group_count=bgc)
    return f, x, w


@pytest.mark.parametrize("fgc,bgc", [(1, 1), (2, 1), (1, 2)])
@pytest.mark.parametrize("axes", [(0, 0), (0, None), (None, 0), (2, 1)])
def test_vmap(fgc, bgc, axes):
    f, x, w = _batch_case(fgc, bgc)
    x = np.moveaxis(x, 0, axes[0]) if axes[0] is not None else x[0]
    w = np.moveaxis(w, 0, axes[1]) if axes[1] is not None else w[0]
    check_batch(f, (x, w), in_axes=axes, rtol=1e-5, atol=1e-5)


def test_vmap_of_vjp_jit():
    """Both transposes batched: the input gradient (kernel fixed) and the kernel gradient."""
    f, x, w = _batch_case()
    ct = np.random.default_rng(9).standard_normal((3,) + f(x[0], w[0]).shape).astype(np.float32)
    g = lambda x, ct: xjax.vjp(f, x, w[0])[1](ct)  # noqa: E731
    check_batch(g, (x, ct), in_axes=(0, 0), rtol=1e-4, atol=1e-4, jit=True)


# ---- bad input ----------------------------------------------------------------------------------

X, W = jnp.ones((1, 2, 5, 5)), jnp.ones((3, 2, 3, 3))


@pytest.mark.parametrize("args,kwargs,err,match", [
    ((jnp.ones((1, 4, 5, 5)), W, (1, 1), "SAME"), {}, ValueError, r"4 // 1 != 2.*\(1, 4, 5, 5\)"),
    ((X, jnp.ones((3, 2, 3)), (1, 1), "SAME"), {}, TypeError, "ndim to be equal"),
    ((X, W, (1, 1), "SAME"), dict(dimension_numbers=("NCHW", "OIHW")), TypeError, "must be length 3"),
    ((X, W, (1, 1), "SAME"), dict(dimension_numbers=("NCHW", "OIHX", "NCHW")), TypeError, "same set of spatial"),
    ((X, W, (1, 1), "SAME"), dict(dimension_numbers=("NCHH", "OIHW", "NCHW")), TypeError, "exactly once|duplicate"),
    ((X, W, (1, 1), "SAME"), dict(dimension_numbers=("NCHW", "OIHW", 7)), TypeError, "must be strings"),
    ((X, W, (1, 1), "FOO"), {}, ValueError, "Unrecognized padding type"),
    ((X, W, (1, 1), [(1, 1)]), {}, TypeError, "expected 2, got 1"),
    ((X, W, (1, 1), [(1, 2, 3), (1, 1)]), {}, ValueError, "sequence of \\(low, high\\) pairs"),
    ((X, W, (1, 1), [(-6, 0), (0, 0)]), {}, ValueError, "negative padding"),
    ((X, W, (1,), "SAME"), {}, ValueError, "same number of dimensions"),
    ((X, W, (0, 1), "SAME"), {}, ValueError, "must be positive"),
    ((X, W, (1, 1), "SAME"), dict(rhs_dilation=(1, -1)), ValueError, "must be positive"),
    ((X, W, (1, 1), "SAME"), dict(lhs_dilation=(2, 1)), ValueError, "String padding"),
    ((X, W, (1, 1), "SAME"), dict(feature_group_count=2), ValueError, "feature_group_count"),
    ((X, W, (1, 1), "SAME"), dict(batch_group_count=2), ValueError, "batch_group_count"),
    ((X, W, (1, 1), "SAME"), dict(batch_group_count=0), ValueError, "positive integer"),
    ((X, W.astype(jnp.float16), (1, 1), "SAME"), {}, TypeError, "same dtypes"),
])
def test_bad_input(args, kwargs, err, match):
    with pytest.raises(err, match=match):
        lax.conv_general_dilated(*args, **kwargs)


def test_bad_attributes_in_the_core():
    """The core checks what crosses the binding too: a clear error, never a crash."""
    from xjax import _core

    types = [((1, 1, 5, 5), "float32"), ((1, 1, 3, 3), "float32")]
    ok = dict(lhs_spec=[0, 1, 2, 3], rhs_spec=[0, 1, 2, 3], out_spec=[0, 1, 2, 3])
    for bad in (dict(lhs_spec=[0, 1, 2, 2]), dict(out_spec=[0, 1, 2]), dict(window_strides=[1, 0]),
                dict(padding=[1, 1]), dict(rhs_dilation=[2 ** 62, 1]), dict(padding=[-(2 ** 62), 2 ** 62, 0, 0]),
                dict(feature_group_count=-1), dict(window_strides="x")):
        with pytest.raises((ValueError, TypeError), match=r"\[conv_general_dilated\]"):
            _core.infer("conv_general_dilated", types, {**ok, **bad})
    with pytest.raises(ValueError, match="missing attribute 'rhs_spec'"):
        _core.infer("conv_general_dilated", types, dict(lhs_spec=[0, 1, 2, 3], out_spec=[0, 1, 2, 3]))


def test_conv_general_shape_tuple():
    # Recorded from JAX 0.10.2.
    assert lax.conv_general_shape_tuple((2, 3, 10, 12), (4, 3, 3, 3), (1, 2), "SAME",
                                        ("NCHW", "OIHW", "NCHW")) == (2, 4, 10, 6)
    assert lax.conv_general_shape_tuple((2, 10, 12, 3), (3, 3, 3, 4), (2, 1), [(1, 0), (2, 2)],
                                        ("NHWC", "HWIO", "NHWC")) == (2, 5, 14, 4)
    assert lax.conv_shape_tuple((2, 3, 10, 12), (4, 3, 3, 3), (1, 1), "VALID") == (2, 4, 8, 10)
    with pytest.raises(TypeError, match="Wrong number of explicit pads"):
        lax.conv_shape_tuple((2, 3, 10, 12), (4, 3, 3, 3), (1, 1), [(0, 0)])
