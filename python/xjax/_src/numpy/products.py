"""Products of arrays on dot_general: dot, matmul, vdot, inner, outer, tensordot, kron, trace, cross,
vecdot/matvec/vecmat, and 1-D convolve/correlate."""
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.numpy import util
from xjax._src.numpy.creation import diagonal
from xjax._src.numpy.manipulation import expand_dims, moveaxis
from xjax._src.numpy.reductions import sum as _sum
from xjax._src.numpy.ufuncs import multiply


def _pet(preferred_element_type):
    if preferred_element_type is None:
        return None
    return dtypes.canonicalize_dtype(preferred_element_type)


def _dot_general(a, b, contract, batch, preferred_element_type=None, out_sharding=None):
    (ca, cb), (ba, bb) = contract, batch
    sa, sb = a.aval.shape, b.aval.shape
    if tuple(sa[i] for i in ca) != tuple(sb[i] for i in cb):
        raise TypeError("dot_general requires contracting dimensions to have the same shape, got "
                        f"{tuple(sa[i] for i in ca)} and {tuple(sb[i] for i in cb)}.")
    return lax.dot_general(a, b, ((tuple(ca), tuple(cb)), (tuple(ba), tuple(bb))),
                           preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def _operands_and_type(a, b, preferred_element_type):
    """(a, b, the product's dtype, whether it is weakly typed), as JAX's products decide them: the dtype
    goes to dot_general as preferred_element_type and the result is converted to the weak type. The
    operands are promoted only where their dtypes differ (the core contracts operands of one dtype)."""
    a, b = util.asarray(a), util.asarray(b)
    if preferred_element_type is None:
        dtype, weak = util.result_dtype(a, b)
    else:
        dtype, weak = dtypes.canonicalize_dtype(preferred_element_type), False
    if a.aval.dtype != b.aval.dtype:
        a, b = util.promote_dtypes(a, b)
    return a, b, dtype, weak


def _typed(out, dtype, weak):
    return lax.elementwise._convert(out, dtype, weak)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's dot: sum over the last axis of a and the second-to-last of b (a product for scalars)."""
    util.check_arraylike("dot", a, b)
    x, y, pet, weak = _operands_and_type(a, b, preferred_element_type)
    nx, ny = x.aval.ndim, y.aval.ndim
    if nx == 0 or ny == 0:
        contract = ((), ())
    else:
        contract = ((nx - 1,), (0 if ny == 1 else ny - 2,))
    return _typed(_dot_general(x, y, contract, ((), ()), pet, out_sharding), pet, weak)


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """a @ b: matrix products over the last two axes, broadcasting the leading (batch) axes."""
    util.check_arraylike("matmul", a, b)
    x, y, pet, weak = _operands_and_type(a, b, preferred_element_type)
    for i, v in enumerate((x, y)):
        if v.aval.ndim == 0:
            raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim 0")
    x_mat, y_mat = x.aval.ndim > 1, y.aval.ndim > 1
    xb = x.aval.shape[:-2] if x_mat else ()
    yb = y.aval.shape[:-2] if y_mat else ()
    nb = max(len(xb), len(yb))
    xb = (None,) * (nb - len(xb)) + tuple(xb)
    yb = (None,) * (nb - len(yb)) + tuple(yb)
    # Each leading axis is a batch axis of both, a free axis of one (absent or of size 1 in the other:
    # squeezed away), or of size 1 in both (squeezed from both, put back at the end).
    x_squeeze, y_squeeze, both_squeeze = [], [], []
    x_batch, y_batch = [], []
    at_batch, at_x, at_y = [], [], []  # output positions of the batch and free axes, in dot_general's order
    for i, (dx, dy) in enumerate(zip(xb, yb)):
        if dx is None:
            at_y.append(i)
        elif dy is None:
            at_x.append(i)
        elif dx == 1 and dy == 1:
            x_squeeze.append(len(at_batch) + len(at_x) + len(x_squeeze))
            y_squeeze.append(len(at_batch) + len(at_y) + len(y_squeeze))
            both_squeeze.append(i)
        elif dx == 1:
            at_y.append(i)
            x_squeeze.append(len(at_batch) + len(at_x) + len(x_squeeze))
        elif dy == 1:
            at_x.append(i)
            y_squeeze.append(len(at_batch) + len(at_y) + len(y_squeeze))
        elif dx == dy:
            x_batch.append(len(at_batch) + len(at_x))
            y_batch.append(len(at_batch) + len(at_y))
            at_batch.append(i)
        else:
            raise ValueError(f"Incompatible shapes for matmul arguments: {x.aval.shape} and {y.aval.shape}")
    if x_mat:
        at_x.append(nb)
    if y_mat:
        at_y.append(nb + x_mat)
    perm = tuple(int(i) for i in np.argsort(at_batch + at_x + at_y))
    x = lax.squeeze(x, tuple(x_squeeze))
    y = lax.squeeze(y, tuple(y_squeeze))
    out = _dot_general(x, y, ((x.aval.ndim - 1,), (y.aval.ndim - 1 - y_mat,)), (tuple(x_batch), tuple(y_batch)), pet,
                       out_sharding)  # (in dot_general's order of dimensions, as JAX's)
    out = lax.transpose(out, perm)
    if both_squeeze:
        out = lax.expand_dims(out, tuple(both_squeeze))
    return _typed(out, pet, weak)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    """The dot product of the flattened arrays."""
    util.check_arraylike("vdot", a, b)
    x, y = util.asarray(a), util.asarray(b)
    if dtypes.is_complex(x.aval.dtype):  # the first operand conjugated, as NumPy and JAX
        x = lax.conj(x)
    return dot(lax.reshape(x, (x.aval.size,)), lax.reshape(y, (y.aval.size,)),
               preferred_element_type=preferred_element_type)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """Dot products of vectors along axis (broadcasting the others)."""
    util.check_arraylike("vecdot", x1, x2)
    x, y = util.promote_dtypes(x1, x2)
    if dtypes.is_complex(x.aval.dtype):  # conj(x1) . x2, as the array API says
        x = lax.conj(x)
    x, y = util.broadcast_operands("vecdot", [x, y])
    nd = x.aval.ndim
    ax = util.canonicalize_axis(axis, nd)
    x, y = moveaxis(x, ax, -1), moveaxis(y, ax, -1)
    bd = tuple(range(nd - 1))
    return _dot_general(x, y, ((nd - 1,), (nd - 1,)), (bd, bd), _pet(preferred_element_type))


def matvec(x1, x2, /):
    """Matrix-vector products over the last axes, broadcasting the leading ones."""
    out = matmul(x1, expand_dims(util.asarray(x2), -1))
    return lax.reshape(out, out.aval.shape[:-1])


def vecmat(x1, x2, /):
    """Vector-matrix products over the last axes, broadcasting the leading ones."""
    out = matmul(expand_dims(util.asarray(x1), -2), x2)
    return lax.reshape(out, out.aval.shape[:-2] + out.aval.shape[-1:])


def inner(a, b, *, precision=None, preferred_element_type=None):
    """Sum over the last axes of a and b."""
    util.check_arraylike("inner", a, b)
    x, y = util.promote_dtypes(a, b)
    if x.aval.ndim == 0 or y.aval.ndim == 0:
        return multiply(x, y)
    return _dot_general(x, y, ((x.aval.ndim - 1,), (y.aval.ndim - 1,)), ((), ()), _pet(preferred_element_type))


def outer(a, b, out=None):
    """The outer product of the flattened arrays."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
    util.check_arraylike("outer", a, b)
    x, y = util.promote_dtypes(a, b)
    x, y = lax.reshape(x, (x.aval.size,)), lax.reshape(y, (y.aval.size,))
    # As JAX's: a column times a row, lax broadcasting their size-1 axes.
    return lax.mul(lax.expand_dims(x, (1,)), lax.expand_dims(y, (0,)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Sum over the given axes: the last `axes` of a with the first of b, or explicit axis lists."""
    util.check_arraylike("tensordot", a, b)
    x, y, pet, weak = _operands_and_type(a, b, preferred_element_type)
    nx, ny = x.aval.ndim, y.aval.ndim
    if isinstance(axes, (int, np.integer)):
        k = operator.index(axes)
        if k < 0 or k > min(nx, ny):
            raise TypeError(f"Number of tensordot axes (axes {k}) exceeds input ranks ({x.aval.shape} and "
                            f"{y.aval.shape})")
        ca, cb = tuple(range(nx - k, nx)), tuple(range(k))
    else:
        if len(axes) != 2:
            raise TypeError(f"tensordot axes argument must be an int or a pair of sequences, got {axes}")
        ax, bx = axes
        ax = (ax,) if isinstance(ax, (int, np.integer)) else tuple(ax)
        bx = (bx,) if isinstance(bx, (int, np.integer)) else tuple(bx)
        if len(ax) != len(bx):
            raise TypeError(f"tensordot requires axes lists to have equal length, got {ax} and {bx}.")
        ca = tuple(util.canonicalize_axis(i, nx) for i in ax)
        cb = tuple(util.canonicalize_axis(i, ny) for i in bx)
    return _typed(_dot_general(x, y, (ca, cb), ((), ()), pet, out_sharding), pet, weak)


def kron(a, b):
    """The Kronecker product."""
    util.check_arraylike("kron", a, b)
    x, y = util.promote_dtypes(a, b)
    nd = max(x.aval.ndim, y.aval.ndim)
    xs = (1,) * (nd - x.aval.ndim) + x.aval.shape
    ys = (1,) * (nd - y.aval.ndim) + y.aval.shape
    x, y = lax.reshape(x, xs), lax.reshape(y, ys)
    inter = tuple(v for p in zip(xs, ys) for v in p)
    xb = lax.broadcast_in_dim(x, inter, tuple(range(0, 2 * nd, 2)))
    yb = lax.broadcast_in_dim(y, inter, tuple(range(1, 2 * nd, 2)))
    return lax.reshape(lax.mul(xb, yb), tuple(i * j for i, j in zip(xs, ys)))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum of the offset-th diagonal of the (axis1, axis2) planes."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """The cross product of 3-vectors (or 2-vectors) along the given axes."""
    util.check_arraylike("cross", a, b)
    x, y = util.promote_dtypes(a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    x = moveaxis(x, axisa, -1)
    y = moveaxis(y, axisb, -1)
    na, nb = x.aval.shape[-1], y.aval.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")

    def comp(v, i):
        return lax.index_in_dim(v, i, v.aval.ndim - 1, keepdims=False)

    a0, a1 = comp(x, 0), comp(x, 1)
    b0, b1 = comp(y, 0), comp(y, 1)
    a2 = comp(x, 2) if na == 3 else None
    b2 = comp(y, 2) if nb == 3 else None
    a0, a1, b0, b1 = util.broadcast_operands("cross", [a0, a1, b0, b1])
    shp = a0.aval.shape
    if a2 is not None:
        a2 = util.broadcast_to_shape(a2, shp)
    if b2 is not None:
        b2 = util.broadcast_to_shape(b2, shp)
    z = lax.sub(lax.mul(a0, b1), lax.mul(a1, b0))
    if na == 2 and nb == 2:
        return z
    zero = util.full(shp, 0, a0.aval.dtype)
    a2 = zero if a2 is None else a2
    b2 = zero if b2 is None else b2
    cx = lax.sub(lax.mul(a1, b2), lax.mul(a2, b1))
    cy = lax.sub(lax.mul(a2, b0), lax.mul(a0, b2))
    out = lax.concatenate([lax.expand_dims(c, (len(shp),)) for c in (cx, cy, z)], len(shp))
    return moveaxis(out, -1, axisc)


# ---- 1-D convolution ------------------------------------------------------------------------

def _conv(name, a, v, mode, preferred_element_type):
    """1-D convolution (flipped kernel) or correlation on lax.conv_general_dilated, as jnp."""
    util.check_arraylike(name, a, v)
    pet = _pet(preferred_element_type)
    x, w = util.promote_dtypes_inexact(a, v) if pet is None else util.promote_dtypes(a, v)
    if x.aval.ndim != 1 or w.aval.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs.")
    n, m = x.aval.shape[0], w.aval.shape[0]
    if n == 0 or m == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {x.aval.shape} and {w.aval.shape}.")
    if name == "correlate":  # NumPy's and JAX's: the second operand conjugated
        w = lax.conj(w) if dtypes.is_complex(w.aval.dtype) else w
    reverse_out = False
    if m > n:  # the longer operand slides under the shorter; a correlation then comes out reversed
        x, w, n, m = w, x, m, n
        reverse_out = name == "correlate"
    if name == "convolve":
        w = lax.rev(w, (0,))
    if mode == "valid":
        padding = [(0, 0)]
    elif mode == "same":
        padding = [(m // 2, m - m // 2 - 1)]
    elif mode == "full":
        padding = [(m - 1, m - 1)]
    else:
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    out = lax.conv_general_dilated(lax.reshape(x, (1, 1, n)), lax.reshape(w, (1, 1, m)), (1,), padding,
                                   preferred_element_type=pet)
    out = lax.reshape(out, out.aval.shape[2:])
    return lax.rev(out, (0,)) if reverse_out else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-D a and v ('full', 'same' or 'valid')."""
    return _conv("convolve", a, v, mode, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of 1-D a and v ('valid' by default; 'same' and 'full' zero-pad)."""
    return _conv("correlate", a, v, mode, preferred_element_type)
