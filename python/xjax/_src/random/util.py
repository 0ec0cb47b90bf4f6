"""Helpers of the samplers: argument checks worded as JAX's, and the eager fast path."""
import functools
import operator

import numpy as np

from xjax._src import core, dtypes
from xjax._src.jit import jit
from xjax._src.lax.base import asarray
from xjax._src.numpy import util as jnp_util


_SCALARS = frozenset([float, int, bool])


def staged(*static_argnums):
    """Runs a sampler body eagerly as one cached jit call (one executable, no per-op dispatch); with
    traced arguments (inside jit, vmap, grad) it runs inline in the caller's trace.

    Eager calls take jit's fastest path: one jitted function per value of the static arguments,
    Python scalars passed as weakly typed arrays (as jit would), so the call is a cache lookup."""
    static = frozenset(static_argnums)

    def wrap(fn):
        per_static = {}

        def jitted_for(statics):
            f = per_static.get(statics)
            if f is None:
                if len(per_static) >= 256:
                    per_static.clear()
                values = dict(statics)

                def body(*dyn):
                    it = iter(dyn)
                    return fn(*[values[i] if i in values else next(it) for i in range(len(dyn) + len(values))])

                f = per_static[statics] = jit(body)
            return f

        @functools.wraps(fn)
        def call(*args):
            dyn = []
            for i, a in enumerate(args):
                if i in static:
                    continue
                t = type(a)
                if t in _SCALARS:
                    a = asarray(a)
                elif t is tuple or t is list or isinstance(a, core.Tracer):  # (a tuple: of arrays)
                    return fn(*args)
                dyn.append(a)
            return jitted_for(tuple([(i, args[i]) for i in static_argnums]))(*dyn)

        return call

    return wrap


def canonical_shape(shape):
    if type(shape) is tuple:  # the common case, without jnp's general checks
        try:
            return tuple(map(operator.index, shape))
        except TypeError:
            pass  # jnp's error message
    return jnp_util.canonicalize_shape(shape)


def float_dtype(name, dtype, what="a float dtype"):
    """The canonical float dtype of a sampler's `dtype=` argument (default: float32, float64 with x64)."""
    dt = dtypes.check_user_dtype(float if dtype is None else dtype)
    if not dtypes.is_float(dt):
        raise ValueError(f"dtype argument to `{name}` must be {what}, got {dt}")
    return dt


def int_dtype(dtype):
    return dtypes.check_user_dtype(int if dtype is None else dtype)


def check_shape(name, shape, *param_shapes):
    """ValueError unless the parameters' shapes broadcast to exactly `shape`."""
    if param_shapes:
        got = jnp_util.broadcast_shapes(shape, *param_shapes)
        if tuple(shape) != got:
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape argument, and the "
                             f"result of broadcasting the shapes must equal the shape argument, but got result {got} "
                             f"for shape argument {tuple(shape)}.")


def broadcast_shape(name, shape, *args):
    """`shape` checked against the parameters', or their broadcast shape when None."""
    arg_shapes = [np.shape(a) for a in args]
    if shape is None:
        return jnp_util.broadcast_shapes(*arg_shapes) if arg_shapes else ()
    shape = canonical_shape(shape)
    check_shape(name, shape, *arg_shapes)
    return shape

