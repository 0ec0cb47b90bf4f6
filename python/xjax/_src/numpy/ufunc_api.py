"""jnp.ufunc and jnp.frompyfunc: a scalar Python function as a NumPy-style universal function, as JAX
defines them. Calling it vectorizes the function (jnp.vectorize); reduce, accumulate, at and reduceat
loop over the axis with lax's loops (fori_loop, scan) unless the ufunc was given a faster implementation,
and outer is a double vmap."""
import math
import operator

import numpy as np

from xjax._src import dtypes, lax
from xjax._src.jit import jit
from xjax._src.lax.control_flow import fori_loop, scan
from xjax._src.make_jaxpr import eval_shape
from xjax._src.numpy import creation, manipulation, mathfuncs, reductions as r, ufuncs, util
from xjax._src.numpy.vectorize import vectorize
from xjax._src.vmap import vmap

__all__ = ["frompyfunc", "ufunc"]


def _one(x):
    return np.ones((), util.asarray(x).aval.dtype)


def _result_dtype(fun, *args):
    return eval_shape(fun, *[_one(a) for a in args]).dtype


def _canonical_axis(axis, ndim):
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % max(ndim, 1)


class ufunc:
    """A universal function over a scalar function `func` of nin arguments and nout results."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None, call=None, reduce=None,
                 accumulate=None, at=None, reduceat=None):
        self.__doc__ = func.__doc__
        self.__name__ = name or func.__name__
        self._func = func
        self._nin, self._nout = operator.index(nin), operator.index(nout)
        self._nargs = operator.index(nargs or nin)
        self._identity = identity
        self._impls = {"call": call, "reduce": reduce, "accumulate": accumulate, "at": at, "reduceat": reduceat}

    nin = property(lambda self: self._nin)
    nout = property(lambda self: self._nout)
    nargs = property(lambda self: self._nargs)
    identity = property(lambda self: self._identity)

    def _key(self):
        return (self._func, self.__name__, self._identity, self._nin, self._nout, self._nargs)

    def __hash__(self):
        return hash(self._key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._key() == other._key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        util.check_arraylike(self.__name__, *args)
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return (self._impls["call"] or self._call_vectorized)(*args)

    def _call_vectorized(self, *args):
        return _vectorized(self, *args)

    def _binary_only(self, method):
        if self._nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self._nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single value")

    # ---- reduce ---------------------------------------------------------------------------------------

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None, where=None):
        """a reduced along `axis` (None: all axes) by the binary function, from `initial` or the
        identity (where given), else from the first element."""
        util.check_arraylike(f"{self.__name__}.reduce", a)
        self._binary_only("reduce")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if initial is not None:
            util.check_arraylike(f"{self.__name__}.reduce", initial)
        if where is not None:
            util.check_arraylike(f"{self.__name__}.reduce", where)
            if self._identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an identity, so to use a "
                                 "where mask one has to specify 'initial'.")
            if util.asarray(where).aval.dtype != np.bool_:
                raise ValueError(f"where argument must have dtype=bool; got dtype={util.asarray(where).aval.dtype}")
        impl = self._impls["reduce"]
        if impl is not None:
            return impl(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        axis = tuple(axis) if isinstance(axis, list) else axis
        return _reduce_via_loop(self, a, axis, None if dtype is None else dtypes.check_user_dtype(dtype),
                                bool(keepdims), initial, where)

    # ---- accumulate -----------------------------------------------------------------------------------

    def accumulate(self, a, axis=0, dtype=None, out=None):
        """The running reduction along `axis` (each prefix's reduce)."""
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        impl = self._impls["accumulate"]
        if impl is not None:
            return impl(a, axis=axis, dtype=dtype)
        util.check_arraylike(f"{self.__name__}.accumulate", a)
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        return _accumulate_via_scan(self, a, axis, None if dtype is None else dtypes.check_user_dtype(dtype))

    # ---- at -------------------------------------------------------------------------------------------

    def at(self, a, indices, b=None, /, *, inplace=True):
        """a with func(a[indices], b) written at the indices, applied once per index, repeated ones too."""
        if inplace:
            raise NotImplementedError("jax.numpy.ufunc.at does not support inplace=True, because JAX arrays are "
                                      "immutable. Use inplace=False for a functional update.")
        impl = self._impls["at"]
        if impl is not None:
            return impl(a, indices) if b is None else impl(a, indices, b)
        return _at_via_scan(self, a, indices, *(() if b is None else (b,)))

    # ---- reduceat -------------------------------------------------------------------------------------

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices indices[i]:indices[i+1] along `axis` (a[indices[i]] where the next
        index is not larger), as NumPy's reduceat."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        impl = self._impls["reduceat"]
        if impl is not None:
            return impl(a, indices, axis=axis, dtype=dtype)
        util.check_arraylike(f"{self.__name__}.reduceat", a, indices)
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        return _reduceat_via_loop(self, a, indices, axis, None if dtype is None else dtypes.check_user_dtype(dtype))

    # ---- outer ----------------------------------------------------------------------------------------

    def outer(self, A, B, /):
        """func of every element of A with every element of B: shape A.shape + B.shape."""
        self._binary_only("outer")
        util.check_arraylike(f"{self.__name__}.outer", A, B)
        return _outer(self, A, B)


@jit(static_argnums=(0,))
def _vectorized(uf, *args):
    return vectorize(uf._func)(*args)


@jit(static_argnums=(0,))
def _outer(uf, A, B):
    A, B = util.asarray(A), util.asarray(B)
    flat_a, flat_b = A.reshape((A.size,)), B.reshape((B.size,))
    result = vmap(vmap(uf, (None, 0)), (0, None))(flat_a, flat_b)
    return result.reshape((*A.shape, *B.shape))


@jit(static_argnums=(0, 2, 3, 4))
def _reduce_via_loop(uf, arr, axis, dtype, keepdims, initial, where):
    arr = util.asarray(arr)
    if initial is None:
        initial = uf.identity
    if dtype is None:
        dtype = _result_dtype(uf._func, arr, arr)
    if where is not None:
        where = manipulation.broadcast_to(where, arr.shape)
    if isinstance(axis, tuple):
        raise NotImplementedError("tuple of axes")
    if axis is None:
        final_shape = (1,) * arr.ndim if keepdims else ()
        arr = arr.reshape((arr.size,))
        where = None if where is None else where.reshape((where.size,))
        axis = 0
    else:
        axis = _canonical_axis(axis, arr.ndim)
        final_shape = arr.shape[:axis] + ((1,) if keepdims else ()) + arr.shape[axis + 1:]
        arr = manipulation.moveaxis(arr, axis, 0)
        where = None if where is None else manipulation.moveaxis(where, axis, 0)
    if arr.shape[0] == 0:
        if initial is None:
            raise ValueError(f"zero-size array to reduction operation {uf.__name__} which has no identity")
        return lax.full(final_shape, initial, dtype)

    def body(i, acc):
        combined = uf(acc, arr[i].astype(dtype))
        return combined if where is None else ufuncs.where(where[i], combined, acc)

    start, first = (1, arr[0]) if initial is None else (0, initial)
    first = manipulation.broadcast_to(util.asarray(first).astype(dtype), arr.shape[1:])
    result = fori_loop(start, arr.shape[0], body, first)
    return result.reshape(final_shape) if keepdims else result


@jit(static_argnums=(0, 2, 3))
def _accumulate_via_scan(uf, arr, axis, dtype):
    arr = util.asarray(arr)
    if dtype is None:
        dtype = _result_dtype(uf._func, arr, arr)
    axis = _canonical_axis(axis, arr.ndim)
    if arr.size == 0:
        return lax.full(arr.shape, 0, dtype)
    arr = manipulation.moveaxis(arr, axis, 0)

    def step(carry, x):
        y = uf(carry.astype(dtype), x.astype(dtype))
        return y, y

    first = arr[0].astype(dtype)
    _, rest = scan(step, first, arr[1:])
    return manipulation.moveaxis(manipulation.concatenate([first[None], rest], axis=0), 0, axis)


def _at_via_scan(uf, a, indices, *args):
    util.check_arraylike(f"{uf.__name__}.at", a, *args)
    dtype = _result_dtype(uf._func, a, *args)
    a = util.asarray(a).astype(dtype)
    args = tuple(util.asarray(arg).astype(dtype) for arg in args)
    indices = indices if isinstance(indices, tuple) else (indices,)
    indices = tuple(i if isinstance(i, slice) else util.asarray(i) for i in indices)
    if not indices:
        return a
    shapes = [i.shape for i in indices if not isinstance(i, slice)]
    shape = np.broadcast_shapes(*shapes) if shapes else ()
    if not shape:
        return a.at[indices].set(uf(a[indices], *args))
    count = math.prod(shape)
    if args:
        arg = args[0]
        arg = manipulation.broadcast_to(arg, (*shape, *arg.shape[len(shape):]))
        args = (arg.reshape((count, *arg.shape[len(shape):])),)
    flat = [i if isinstance(i, slice) else manipulation.broadcast_to(i, shape).reshape((count,)) for i in indices]

    def step(acc, k):
        idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
        return acc.at[idx].set(uf(acc[idx], *(arg[k] for arg in args))), None

    return scan(step, a, creation.arange(count))[0]


@jit(static_argnums=(0, 3, 4))
def _reduceat_via_loop(uf, a, indices, axis, dtype):
    a, indices = util.asarray(a), util.asarray(indices)
    if a.ndim == 0:
        raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape={a.shape}")
    if indices.ndim != 1:
        raise ValueError(f"reduceat: indices must be one-dimensional, got indices.shape={indices.shape}")
    dtype = a.dtype if dtype is None else dtype
    axis = _canonical_axis(axis, a.ndim)
    out = a.take(indices, axis=axis).astype(dtype)
    bounds = manipulation.concatenate([indices, np.array([a.shape[axis]], indices.dtype)])
    expand = [d for d in range(out.ndim) if d != axis]
    starts = manipulation.expand_dims(bounds[:-1], expand)
    ends = manipulation.expand_dims(bounds[1:], expand)

    def body(i, acc):
        inside = (i > starts) & (i < ends)
        return ufuncs.where(inside, uf(acc, a.take(manipulation.expand_dims(i, (0,)), axis=axis).astype(dtype)), acc)

    return fori_loop(0, a.shape[axis], body, out)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A jnp.ufunc from a scalar function of nin arguments and nout results."""
    return ufunc(func, nin, nout, identity=identity)


# ---- jnp's binary functions as ufuncs (JAX's binary_ufunc): the same call, fast reductions ------------

def _without_dtype(reduce_fn):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        out = reduce_fn(a, axis=axis, keepdims=keepdims, initial=initial, where=where)
        return out if dtype is None else out.astype(dtype)
    return reduce


def _logical(reduce_fn, name):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        if initial is not None:
            return _reduce_via_loop(_UFUNCS[name], a, axis, dtype, keepdims, initial, where)
        out = reduce_fn(a, axis=axis, keepdims=keepdims, where=where)
        return out if dtype is None else out.astype(dtype)
    return reduce


def _at_update(method):
    """a.at[indices].<method>(b), bools through int32 as JAX's add.at."""
    def at(a, indices, b):
        a = util.asarray(a)
        if a.dtype == np.bool_:
            b = util.asarray(b).astype(np.bool_).astype(np.int32)
            return getattr(a.astype(np.int32).at[indices], method)(b).astype(np.bool_)
        return getattr(a.at[indices], method)(b)
    return at


def _subtract_at(a, indices, b):
    return util.asarray(a).at[indices].add(ufuncs.negative(util.asarray(b)))


def _binary_ufuncs():
    specs = {
        "add": (ufuncs.add, 0, r.sum, r.cumsum, _at_update("add")),
        "multiply": (ufuncs.multiply, 1, r.prod, r.cumprod, _at_update("multiply")),
        "subtract": (ufuncs.subtract, None, None, None, _subtract_at),
        "maximum": (ufuncs.maximum, None, _without_dtype(r.max), None, None),
        "minimum": (ufuncs.minimum, None, _without_dtype(r.min), None, None),
        "logical_and": (ufuncs.logical_and, True, _logical(r.all, "logical_and"), None, None),
        "logical_or": (ufuncs.logical_or, False, _logical(r.any, "logical_or"), None, None),
        "logical_xor": (ufuncs.logical_xor, False, None, None, None),
        "bitwise_and": (ufuncs.bitwise_and, -1, None, None, None),
        "bitwise_or": (ufuncs.bitwise_or, 0, None, None, None),
        "bitwise_xor": (ufuncs.bitwise_xor, 0, None, None, None),
        "logaddexp": (mathfuncs.logaddexp, -np.inf, None, None, None),
        "logaddexp2": (mathfuncs.logaddexp2, -np.inf, None, None, None),
    }
    return {name: ufunc(fn, 2, 1, name=name, identity=identity, call=fn, reduce=reduce, accumulate=accumulate, at=at)
            for name, (fn, identity, reduce, accumulate, at) in specs.items()}


_UFUNCS = _binary_ufuncs()
globals().update(_UFUNCS)
__all__ += sorted(_UFUNCS)
