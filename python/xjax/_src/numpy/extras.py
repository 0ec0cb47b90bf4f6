"""Less common jnp functions: index tricks (mgrid, ogrid, s_), window functions, gradient, unwrap,
polynomial arithmetic, block, fill_diagonal/put/put_along_axis, trim_zeros, bitwise_count, and the
complex-number predicates of real arrays."""
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import creation, manipulation, mathfuncs, rearrange, reductions, ufuncs, util
from xjax._src.numpy.selection import histogram
from xjax._src.transfer import from_dlpack as impl

s_ = np.s_
index_exp = np.index_exp


# ---- complex predicates --------------------------------------------------------------------

def iscomplex(x):
    """Where the imaginary part is nonzero (False everywhere for real arrays)."""
    v = util.operand("iscomplex", x)
    if not dtypes.is_complex(v.aval.dtype):
        return util.full(v.aval.shape, False, dtypes.bool_)
    im = lax.imag(v)
    return lax.ne(im, lax.full_like(im, 0))


def isreal(x):
    """Where the imaginary part is zero (True everywhere for real arrays)."""
    v = util.operand("isreal", x)
    if not dtypes.is_complex(v.aval.dtype):
        return util.full(v.aval.shape, True, dtypes.bool_, v.aval.weak_type)
    im = lax.imag(v)
    return lax.eq(im, lax.full_like(im, 0))


def iscomplexobj(x):
    """Whether x has a complex dtype."""
    return x is not None and dtypes.is_complex(util.aval_of(x).dtype)


def isrealobj(x):
    """Whether x does not have a complex dtype."""
    return not iscomplexobj(x)


# ---- index tricks ---------------------------------------------------------------------------

def _grid_axis(s):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return creation.linspace(start, s.stop, int(abs(step)))
    return creation.arange(start, s.stop, step)


class _Grid:
    """mgrid[...] (dense) and ogrid[...] (open) grids from slices."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        single = isinstance(key, slice)
        axes = [_grid_axis(s) for s in ((key,) if single else key)]
        if single:
            return axes[0]
        dt = dtypes.result_type(*axes)
        axes = [util.convert(a, dt) for a in axes]
        grids = creation.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return grids if self.sparse else manipulation.stack(grids)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


# ---- windows --------------------------------------------------------------------------------

def _cosine_window(M, coeffs):
    M = int(M)
    dt = dtypes.default_float_dtype()
    if M <= 1:
        return util.full((max(M, 0),), 1.0, dt)
    n = lax.iota(dt, M)
    out = util.full((M,), coeffs[0], dt)
    for k, c in enumerate(coeffs[1:], start=1):
        arg = lax.mul(n, util.scalar(2 * math.pi * k / (M - 1), dt, False))
        out = lax.add(out, lax.mul(util.scalar(c, dt, False), lax.cos(arg)))
    return out


def hanning(M):
    """The Hann window of M points."""
    return _cosine_window(M, (0.5, -0.5))


def hamming(M):
    """The Hamming window of M points."""
    return _cosine_window(M, (0.54, -0.46))


def blackman(M):
    """The Blackman window of M points."""
    return _cosine_window(M, (0.42, -0.5, 0.08))


def kaiser(M, beta):
    """The Kaiser window of M points with shape parameter beta."""
    M = operator.index(util.concrete_value(M, "M argument of jnp.kaiser") if util.is_array(M) else M)
    dt = dtypes.default_float_dtype()
    if M <= 1:
        return util.full((max(M, 0),), 1, dt)
    n = lax.iota(dt, M)
    alpha = 0.5 * (M - 1)
    arg = ufuncs.sqrt(ufuncs.subtract(1, ufuncs.square(ufuncs.true_divide(ufuncs.subtract(n, alpha), alpha))))
    return ufuncs.true_divide(mathfuncs.i0(ufuncs.multiply(beta, arg)), mathfuncs.i0(beta))


def bartlett(M):
    """The triangular (Bartlett) window of M points."""
    M = int(M)
    dt = dtypes.default_float_dtype()
    if M <= 1:
        return util.full((max(M, 0),), 1.0, dt)
    n = lax.iota(dt, M)
    half = (M - 1) / 2.0
    return ufuncs.subtract(1.0, ufuncs.abs(ufuncs.true_divide(ufuncs.subtract(n, half), half)))


# ---- calculus-like helpers ------------------------------------------------------------------

def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the edges, for each axis: with a scalar
    spacing, or with the coordinates along the axis (a 1-D array: non-uniform differences)."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    util.check_arraylike("gradient", f, *varargs)
    x, *spacing = util.promote_dtypes_inexact(f, *varargs)
    nd = x.aval.ndim
    axes = util.canonicalize_axes(axis, nd)
    if not axes:
        return []
    if min(x.aval.shape[ax] for ax in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements "
                         "are required.")
    if len(spacing) > 1 and len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for {axis=}")
    if len(spacing) <= 1:
        spacing = (spacing or [1.0]) * len(axes)
    outs = [_gradient_along(x, h, ax) for ax, h in zip(axes, spacing)]
    return outs[0] if len(outs) == 1 else outs


def _gradient_along(x, h, ax):
    n = x.aval.shape[ax]
    part = lambda v, lo, hi: lax.slice_in_dim(v, lo, hi, 1, ax)  # noqa: E731
    first = ufuncs.subtract(part(x, 1, 2), part(x, 0, 1))
    last = ufuncs.subtract(part(x, n - 1, n), part(x, n - 2, n - 1))
    if np.ndim(h) == 0:
        inner = ufuncs.true_divide(ufuncs.multiply(ufuncs.subtract(part(x, 2, n), part(x, 0, n - 2)), 0.5), h)
        return lax.concatenate([ufuncs.true_divide(first, h), inner, ufuncs.true_divide(last, h)], ax)
    if np.ndim(h) != 1:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    if h.aval.shape[0] != n:
        raise ValueError("Spacing arrays must have the same length as the dimension along which the gradient "
                         "is calculated.")
    shape = [1] * x.aval.ndim
    shape[ax] = n
    h = lax.reshape(h, tuple(shape))
    dx1 = ufuncs.subtract(part(h, 1, n - 1), part(h, 0, n - 2))  # the steps before and after each inner point
    dx2 = ufuncs.subtract(part(h, 2, n), part(h, 1, n - 1))
    total = ufuncs.add(dx1, dx2)
    w_prev = ufuncs.true_divide(ufuncs.negative(dx2), ufuncs.multiply(dx1, total))
    w_here = ufuncs.true_divide(ufuncs.subtract(dx2, dx1), ufuncs.multiply(dx1, dx2))
    w_next = ufuncs.true_divide(dx1, ufuncs.multiply(dx2, total))
    inner = ufuncs.add(ufuncs.add(ufuncs.multiply(w_prev, part(x, 0, n - 2)), ufuncs.multiply(w_here, part(x, 1, n - 1))),
                       ufuncs.multiply(w_next, part(x, 2, n)))
    first = ufuncs.true_divide(first, ufuncs.subtract(part(h, 1, 2), part(h, 0, 1)))
    last = ufuncs.true_divide(last, ufuncs.subtract(part(h, n - 1, n), part(h, n - 2, n - 1)))
    return lax.concatenate([first, inner, last], ax)


def unwrap(p, discont=None, axis=-1, period=2 * math.pi):
    """p with jumps larger than discont replaced by their period complement."""
    x = util.to_default_float(util.operand("unwrap", p))
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    n = x.aval.shape[ax]
    if n < 2:
        return x
    d = rearrange.diff(x, axis=ax)
    half = period / 2
    if discont is None:
        discont = half
    ddmod = ufuncs.subtract(ufuncs.remainder(ufuncs.add(d, half), period), half)
    ddmod = ufuncs.where(ufuncs.logical_and(ufuncs.equal(ddmod, -half), ufuncs.greater(d, 0)), half, ddmod)
    correction = ufuncs.subtract(ddmod, d)
    correction = ufuncs.where(ufuncs.less(ufuncs.abs(d), discont), 0.0, correction)
    cum = reductions.cumsum(correction, axis=ax)
    head = lax.slice_in_dim(x, 0, 1, 1, ax)
    rest = ufuncs.add(lax.slice_in_dim(x, 1, n, 1, ax), cum)
    return lax.concatenate([head, lax.convert_element_type(rest, head.aval.dtype)], ax)


# ---- polynomials ----------------------------------------------------------------------------

def _poly_operand(name, a):
    x = manipulation.atleast_1d(util.operand(name, a))
    if x.aval.ndim != 1:
        raise ValueError(f"{name}: input must be 1-dimensional")
    return x


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest degree first)."""
    a, b = util.promote_dtypes(_poly_operand("polyadd", a1), _poly_operand("polyadd", a2))
    n = max(a.aval.shape[0], b.aval.shape[0])
    zero = util.scalar(0, a.aval.dtype, False)
    a = lax.pad(a, zero, [(n - a.aval.shape[0], 0, 0)])
    b = lax.pad(b, zero, [(n - b.aval.shape[0], 0, 0)])
    return lax.add(a, b)


def polysub(a1, a2):
    """The difference of two polynomials."""
    return polyadd(a1, ufuncs.negative(_poly_operand("polysub", a2)))


def polyder(p, m=1):
    """The m-th derivative of a polynomial."""
    x = util.to_inexact(manipulation.atleast_1d(util.operand("polyder", p)))
    m = operator.index(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return x
    # Coefficient i (degree n-1-i) gains the factor (n-1-i)(n-2-i)...(n-m-i); as in JAX, an input of
    # higher rank multiplies its leading axis's slices by those factors broadcast over its last axis.
    n = x.aval.shape[0]
    k = max(n - m, 0)
    degrees = lax.rev(lax.iota(x.aval.dtype, k), (0,))
    factor = util.full((k,), 1, x.aval.dtype)
    for j in range(1, m + 1):
        factor = ufuncs.multiply(factor, ufuncs.add(degrees, util.scalar(j, x.aval.dtype, False)))
    return ufuncs.multiply(lax.slice_in_dim(x, 0, k, 1, 0), factor)


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (integration constants k, default 0)."""
    x = _poly_operand("polyint", p)
    # JAX promotes p with k (a weak 0 by default) to an inexact type: bool p becomes the default float.
    kd = 0 if k is None else k if util.is_arraylike(k) else np.asarray(k)
    x = util.convert(x, dtypes.to_inexact_dtype(util.result_dtype(x, kd)[0]), False)
    ks = [0.0] * int(m) if k is None else list(np.atleast_1d(k))
    for i in range(int(m)):
        n = x.aval.shape[0]
        powers = lax.rev(lax.iota(x.aval.dtype, n), (0,))
        x = ufuncs.true_divide(x, ufuncs.add(powers, 1))
        x = lax.concatenate([x, util.full((1,), float(ks[i] if i < len(ks) else 0.0), x.aval.dtype)], 0)
    return x


# ---- assembly and in-place style updates ----------------------------------------------------

def block(arrays):
    """An array assembled from nested lists of blocks (the innermost list joins along the last axis)."""
    def depth(a):
        return 1 + depth(a[0]) if isinstance(a, list) and a else (1 if isinstance(a, list) else 0)

    d = depth(arrays)

    def assemble(a, level):
        if not isinstance(a, list):
            x = util.operand("block", a)
            return x
        parts = [assemble(e, level + 1) for e in a]
        nd = max([d] + [p.aval.ndim for p in parts])
        parts = [lax.reshape(p, (1,) * (nd - p.aval.ndim) + p.aval.shape) for p in parts]
        return manipulation.concatenate(parts, axis=-(d - level))

    return assemble(arrays, 0)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with its main diagonal set to val (JAX requires inplace=False)."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    x = util.operand("fill_diagonal", a)
    shape = x.aval.shape
    if x.aval.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if x.aval.ndim > 2 and len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(shape)
    idx = tuple(lax.iota(dtypes.int32, n) for _ in shape)
    v = util.convert(val, x.aval.dtype)
    v = lax.reshape(v, (v.aval.size,)) if v.aval.ndim else v
    if v.aval.ndim and v.aval.size != n:
        v = rearrange.resize(v, (n,))
    return x.at[idx].set(v)


def put(a, ind, v, mode=None, *, inplace=True):
    """a (flattened) with the entries at ind set to v (JAX requires inplace=False)."""
    if inplace:
        raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    x = util.operand("put", a)
    flat = lax.reshape(x, (x.aval.size,))
    i = manipulation.ravel(util.convert(util.operand("put", ind), dtypes.int32))
    vals = manipulation.ravel(util.convert(util.operand("put", v), x.aval.dtype))
    k = i.aval.shape[0]
    if vals.aval.shape[0] != k and k:
        vals = rearrange.resize(vals, (k,))
    if mode == "wrap":
        i = ufuncs.remainder(i, x.aval.size)
    elif mode == "clip":
        i = ufuncs.clip(i, 0, x.aval.size - 1)
    return lax.reshape(flat.at[i].set(vals, mode="drop" if mode is None else "clip"), x.aval.shape)


def place(arr, mask, vals, *, inplace=True):
    """arr with its masked entries (row-major order) set to vals, repeated as needed (JAX requires
    inplace=False)."""
    util.check_arraylike("place", arr, mask, vals)
    data, mask, vals = (util.asarray(x) for x in (arr, mask, vals))
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    if data.aval.size != mask.aval.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals.aval.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.aval.size:
        return data
    n = mask.aval.size
    indices = ufuncs.where(manipulation.ravel(mask), size=n, fill_value=n)[0]  # unmasked slots point past the end
    vals = manipulation.ravel(vals)
    if vals.aval.size < n:
        vals = rearrange.tile(vals, -(-n // vals.aval.size))
    flat = lax.reshape(data, (data.aval.size,))
    return lax.reshape(flat.at[indices].set(vals[:n], mode="drop"), data.aval.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values written at indices along axis (JAX requires inplace=False)."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays are "
                         "immutable. Pass inplace=False to instead return an updated array.")
    x = util.operand("put_along_axis", arr)
    idx = util.convert(util.operand("put_along_axis", indices), dtypes.int32)
    nd = x.aval.ndim
    ax = util.canonicalize_axis(axis, nd)
    if idx.aval.ndim != nd:
        raise ValueError("indices and arr must have the same number of dimensions")
    shape = tuple(idx.aval.shape[d] if d == ax else x.aval.shape[d] for d in range(nd))
    idx = util.broadcast_to_shape(idx, shape)
    coords = tuple(idx if d == ax else lax.broadcasted_iota(dtypes.int32, shape, d) for d in range(nd))
    vals = util.broadcast_to_shape(util.convert(values, x.aval.dtype), shape)
    return x.at[coords].set(vals, mode=mode)


def trim_zeros(filt, trim="fb"):
    """filt (1-D, concrete) without its leading ('f') and/or trailing ('b') zeros."""
    x = util.operand("trim_zeros", filt)
    nz = np.asarray(util.concrete_value(ufuncs.not_equal(x, 0), "jnp.trim_zeros needs a concrete input"))
    n = nz.shape[0]
    if not nz.any():
        return lax.slice(x, (0,), (0,))
    start = int(nz.argmax()) if "f" in trim.lower() else 0
    stop = n - int(nz[::-1].argmax()) if "b" in trim.lower() else n
    return lax.slice(x, (start,), (stop,))


def bitwise_count(x, /):
    """The number of 1 bits in |x| (uint8)."""
    v = util.operand("bitwise_count", x)
    if v.aval.dtype.kind not in "iub":
        raise TypeError(f"bitwise_count requires an integer input, got {v.aval.dtype.name}")
    if v.aval.dtype == dtypes.bool_:
        return lax.convert_element_type(v, dtypes.uint8)
    return lax.convert_element_type(lax.population_count(ufuncs.absolute(v)), dtypes.uint8)


def spacing(x, /):
    """The distance from x to the next float away from zero."""
    v = util.to_inexact(util.operand("spacing", x))
    inf = util.full(v.aval.shape, math.inf, v.aval.dtype)
    away = lax.select(mathfuncs.signbit(v), lax.neg(inf), inf)
    return lax.sub(lax.nextafter(v, away), v)


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) where condlist[i] holds (a trailing extra function is the default)."""
    v = util.operand("piecewise", x)
    conds = [util.broadcast_to_shape(util.asarray(c), v.aval.shape) for c in condlist]
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")

    def value(f):
        out = f(v, *args, **kw) if callable(f) else f
        return util.broadcast_to_shape(util.convert(out, v.aval.dtype), v.aval.shape)

    out = value(funclist[n]) if len(funclist) == n + 1 else util.full(v.aval.shape, 0, v.aval.dtype)
    for c, f in zip(conds, funclist[:n]):
        out = lax.select(c, value(f), out)
    return out


def apply_over_axes(func, a, axes):
    """func(a, axis) applied over each axis in turn, keeping dimensions."""
    x = util.operand("apply_over_axes", a)
    for ax in axes:
        y = util.asarray(func(x, ax))
        if y.aval.ndim == x.aval.ndim - 1:
            y = manipulation.expand_dims(y, ax)
        elif y.aval.ndim != x.aval.ndim:
            raise ValueError("function is not returning an array of the correct shape")
        x = y
    return x


# ---- bits -----------------------------------------------------------------------------------

def packbits(a, axis=None, bitorder="big"):
    """Truth values packed 8 to a uint8 along axis (flattened if None), zero-padded at the end."""
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x = util.operand("packbits", a)
    if x.aval.dtype.kind not in "iub":
        raise TypeError("Expected an input array of integer or boolean data type")
    if axis is None:
        x = manipulation.ravel(x)
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    bits = lax.convert_element_type(ufuncs.not_equal(x, 0), dtypes.uint8)
    n = bits.aval.shape[ax]
    m = -(-n // 8)
    cfg = [(0, 0, 0)] * bits.aval.ndim
    cfg[ax] = (0, 8 * m - n, 0)
    bits = lax.pad(bits, util.scalar(0, dtypes.uint8, False), cfg)
    s = bits.aval.shape
    bits = lax.reshape(bits, s[:ax] + (m, 8) + s[ax + 1:])
    shifts = lax.iota(dtypes.uint8, 8)
    if bitorder == "big":
        shifts = lax.rev(shifts, (0,))
    shifts = lax.broadcast_in_dim(shifts, bits.aval.shape, (ax + 1,))
    return lax.reduce_or(lax.shift_left(bits, shifts), (ax + 1,))


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as 0/1 uint8 values along axis (flattened if None)."""
    if bitorder not in ("big", "little"):
        raise ValueError("'order' must be either 'little' or 'big'")
    x = util.operand("unpackbits", a)
    if x.aval.dtype != dtypes.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if axis is None:
        x = manipulation.ravel(x)
        axis = 0
    ax = util.canonicalize_axis(axis, x.aval.ndim)
    s = x.aval.shape
    shape8 = s[:ax + 1] + (8,) + s[ax + 1:]
    shifts = lax.iota(dtypes.uint8, 8)
    if bitorder == "big":
        shifts = lax.rev(shifts, (0,))
    xb = lax.broadcast_in_dim(x, shape8, tuple(i for i in range(len(shape8)) if i != ax + 1))
    bits = lax.bitwise_and(lax.shift_right_logical(xb, lax.broadcast_in_dim(shifts, shape8, (ax + 1,))),
                           util.scalar(1, dtypes.uint8, False))
    out = lax.reshape(bits, s[:ax] + (8 * s[ax],) + s[ax + 1:])
    if count is not None:
        out = lax.slice_in_dim(out, 0, min(int(count), out.aval.shape[ax]), 1, ax)
    return out


# ---- conversion at the edges (NumPy reads and writes the bytes) -----------------------------

def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """The bin edges histogram would use."""
    return histogram(a, bins, range, weights)[1]


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array from the bytes of a buffer."""
    return creation.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    """An array from the numbers in a text string separated by sep."""
    return creation.asarray(np.fromstring(string=string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    """Not provided, as in JAX: reading a file is not a pure function."""
    raise NotImplementedError("jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
                              "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) "
                              "instead.")


def fromiter(iterable, dtype, count=-1):
    """An array from an iterable of scalars."""
    return creation.asarray(np.fromiter(iterable, dtype=dtype, count=count))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from an object supporting the DLPack protocol (see xjax.dlpack.from_dlpack)."""
    return impl(x, device=device, copy=copy)


def save(file, arr, allow_pickle=True):
    """np.save of the array's data."""
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    """np.savez of the arrays' data."""
    np.savez(file, *[np.asarray(a) for a in args], **{k: np.asarray(v) for k, v in kwds.items()})


def load(file, *args, **kwargs):
    """np.load, with arrays placed in the runtime."""
    out = np.load(file, *args, **kwargs)
    return creation.asarray(out) if isinstance(out, np.ndarray) else out
