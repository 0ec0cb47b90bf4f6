"""Operators, methods and properties of xjax.Array, attached to both Array and core.Tracer so that
transformed code sees the same interface as eager code."""
import numpy as np

from xjax import _core
from xjax._src import core, dtypes, lax
from xjax._src.backends import cpu
from xjax._src.config import config
from xjax._src.jit import jit
from xjax._src.array import Array
from xjax._src.lax import elementwise as _ew
from xjax._src.lax.layout import unstack_p as _unstack_p
from xjax._src.numpy import (array_api, creation, indexing, manipulation, products, rearrange, reductions,
                             selection, sorting, ufuncs, updates, util)
from xjax._src.numpy import nonzero as nonzero_mod
from xjax._src.numpy import take as take_mod

_P = _ew.PRIMITIVES
_FLOATING = frozenset(dtypes.FLOATING)
_COMPLEX = frozenset(dtypes.COMPLEX)
_PY_SCALARS = (int, float, bool, complex)


def _operand(other):
    """other as an operator takes it: arrays, tracers, NumPy values and Python scalars as they are, an
    object with __jax_array__ (a Flax Variable) converted, as JAX's operators convert it; else None
    (the operator returns NotImplemented)."""
    if isinstance(other, util._ARRAYLIKE):
        return other
    convert = getattr(other, "__jax_array__", None)
    return convert() if convert is not None else None


def _binop(fn, prim=None, float_only=False, ordered=False):
    """(op, reflected op) for a binary ufunc; with `prim`, matching operands go straight to it (not complex
    ones for the `ordered` comparisons, which jnp compares lexicographically)."""
    if prim is None:
        def op(self, other):
            if getattr(other, "aval", None) is None and (other := _operand(other)) is None:
                return NotImplemented
            return fn(self, other)

        def rop(self, other):
            if getattr(other, "aval", None) is None and (other := _operand(other)) is None:
                return NotImplemented
            return fn(other, self)

        return op, rop
    bind = prim.bind

    def op(self, other):
        oa = getattr(other, "aval", None)
        if oa is not None:
            sa = self.aval
            if (sa.dtype == oa.dtype and sa.shape == oa.shape and sa.weak_type == oa.weak_type
                    and (not float_only or sa.dtype in _FLOATING) and not (ordered and sa.dtype in _COMPLEX)):
                return bind(self, other)
        elif type(other) not in _PY_SCALARS and (other := _operand(other)) is None:
            return NotImplemented
        return fn(self, other)

    def rop(self, other):
        oa = getattr(other, "aval", None)
        if oa is not None:
            sa = self.aval
            if (sa.dtype == oa.dtype and sa.shape == oa.shape and sa.weak_type == oa.weak_type
                    and (not float_only or sa.dtype in _FLOATING) and not (ordered and sa.dtype in _COMPLEX)):
                return bind(other, self)
        elif type(other) not in _PY_SCALARS and (other := _operand(other)) is None:
            return NotImplemented
        return fn(other, self)

    return op, rop


def _fast_op(op, fn, prim, float_only=False, ordered=False):
    """`op` with the C++ path in front: two xjax Arrays whose avals pass `op`'s test for `prim` run
    the one-op executable eager dispatch compiled for them, and an Array with a Python float runs
    `fn` compiled for that signature (jit's program); everything else (tracers, promotion between
    arrays, a primitive with an impl of its own) calls `op`."""

    def resolve(sa, oa):
        if oa is float:
            return _scalar_program(fn, sa)
        if (sa.dtype == oa.dtype and sa.weak_type == oa.weak_type and (not float_only or sa.dtype in _FLOATING)
                and not (ordered and sa.dtype in _COMPLEX) and cpu.runs_here(prim)):
            if sa.shape != oa.shape:
                return _broadcast_program(fn, sa, oa)
            exe, avals_out = cpu.executable_for(prim, (sa, oa), {})
            return (exe, [], None, [avals_out[0]], None), 0
        return None

    return _core.fast_call.BinaryOp(op, resolve)


def _broadcast_program(fn, sa, oa):
    """(program parts, 0) of fn over two arrays of one dtype and weak type whose shapes differ (a bias,
    `x - x.mean()`), or None: jit's program, whose fused op reads the smaller operand broadcast, with
    the bits of the broadcast and the op the eager path runs one by one."""
    if config._values["jax_log_compiles"]:  # (the eager path logs no jit compile)
        return None
    try:
        parts = jit(fn)._parts_for([sa, oa])
    except Exception:  # noqa: BLE001 - the Python path raises it again (shapes that do not broadcast)
        return None
    return None if parts is None else (parts, 0)


def _scalar_program(fn, aval):
    """(program parts, bits of the float operand) of fn(array of `aval`, Python float), or None.

    Only where the float's weak type is the array's dtype (float32 arrays, float64 under x64): the
    program receives the float rounded once to that dtype, as the eager path places it, so that
    the results are those of the ops the eager path runs one by one."""
    dt, weak = dtypes.dtype_and_weak(0.0)
    if aval.dtype != dt or config._values["jax_log_compiles"]:  # (the eager path logs no jit compile)
        return None
    try:
        parts = jit(fn)._parts_for([aval, core.ShapedArray((), dt, weak)])
    except Exception:  # noqa: BLE001 - the Python path raises it again, for this call
        return None
    return None if parts is None else (parts, dt.itemsize * 8)


_BINARY = {
    "add": (ufuncs.add, _P["add"], False),
    "sub": (ufuncs.subtract, _P["sub"], False),
    "mul": (ufuncs.multiply, _P["mul"], False),
    "truediv": (ufuncs.true_divide, _P["div"], True),
    "floordiv": (ufuncs.floor_divide, None, False),
    "mod": (ufuncs.remainder, None, False),
    "divmod": (ufuncs.divmod, None, False),
    "pow": (ufuncs.power, None, False),
    "matmul": (products.matmul, None, False),
    "and": (ufuncs.bitwise_and, _P["and"], False),
    "or": (ufuncs.bitwise_or, _P["or"], False),
    "xor": (ufuncs.bitwise_xor, _P["xor"], False),
    "lshift": (ufuncs.left_shift, None, False),
    "rshift": (ufuncs.right_shift, None, False),
}
_COMPARE = {
    "eq": (ufuncs.equal, _P["eq"]),
    "ne": (ufuncs.not_equal, _P["ne"]),
    "lt": (ufuncs.less, _P["lt"]),
    "le": (ufuncs.less_equal, _P["le"]),
    "gt": (ufuncs.greater, _P["gt"]),
    "ge": (ufuncs.greater_equal, _P["ge"]),
}


def _round(self, ndigits=None):
    if ndigits is None:
        return lax.convert_element_type(ufuncs.round(self), dtypes.default_int_dtype())
    return ufuncs.round(self, ndigits)


def _getitem(self, idx):
    return indexing.getitem(self, idx)


def _iter(self):
    if not self.aval.shape:
        raise TypeError("iteration over a 0-d array")
    n = self.aval.shape[0]
    if n <= 100:  # one op for all rows (as JAX, by chunks of 100): `a, b = split(key)` costs one dispatch
        # (an Array binds unstack itself: lax.unstack's argument handling is a third of the call)
        return iter(_unstack_p.bind(self, axis=0) if type(self) is Array else lax.unstack(self, 0))
    return (row for start in range(0, n, 100)
            for row in lax.unstack(lax.slice_in_dim(self, start, min(start + 100, n), axis=0), 0))


def _reshape(self, *args, order="C", out_sharding=None, **kwargs):
    if "shape" in kwargs:
        shape = kwargs.pop("shape")
    elif "newshape" in kwargs:
        shape = kwargs.pop("newshape")
    elif len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        shape = args[0]
    else:
        shape = args
    if kwargs:
        raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
    return manipulation.reshape(self, shape, order=order, out_sharding=out_sharding)


def _transpose(self, *args):
    if not args:
        axes = None
    elif len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple, list))):
        axes = args[0]
    else:
        axes = args
    return manipulation.transpose(self, axes)


def _astype(self, dtype, copy=False, device=None):
    return manipulation.astype(self, dtype, copy=copy, device=device)


def _array_namespace(self, *, api_version=None):
    return array_api.array_namespace(api_version)


def _clip(self, min=None, max=None, *, a_min=None, a_max=None):  # noqa: A002
    return ufuncs.clip(self, min, max, a_min=a_min, a_max=a_max)


def _nonzero(self, *, size=None, fill_value=None):
    return nonzero_mod.nonzero(self, size=size, fill_value=fill_value)


def _copy(self):
    """A copy with its own buffer."""
    return lax.copy_p.bind(self)


_METHODS = {
    "all": reductions.all,
    "any": reductions.any,
    "argmax": reductions.argmax,
    "argmin": reductions.argmin,
    "argpartition": sorting.argpartition,
    "argsort": sorting.argsort,
    "__array_namespace__": _array_namespace,
    "astype": _astype,
    "choose": selection.choose,
    "clip": _clip,
    "compress": lambda self, condition, axis=None, **kw: selection.compress(condition, self, axis, **kw),
    "conj": ufuncs.conjugate,
    "conjugate": ufuncs.conjugate,
    "cumprod": reductions.cumprod,
    "cumsum": reductions.cumsum,
    "diagonal": creation.diagonal,
    "dot": products.dot,
    "flatten": manipulation.ravel,
    "max": reductions.max,
    "mean": reductions.mean,
    "min": reductions.min,
    "nonzero": _nonzero,
    "prod": reductions.prod,
    "ptp": reductions.ptp,
    "ravel": manipulation.ravel,
    "repeat": rearrange.repeat,
    "reshape": _reshape,
    "round": ufuncs.round,
    "searchsorted": sorting.searchsorted,
    "sort": sorting.sort,
    "squeeze": manipulation.squeeze,
    "std": reductions.std,
    "sum": reductions.sum,
    "swapaxes": manipulation.swapaxes,
    "take": take_mod.take,
    "trace": products.trace,
    "transpose": _transpose,
    "var": reductions.var,
    "__getitem__": _getitem,
    "__iter__": _iter,
    "__round__": _round,
    "__neg__": ufuncs.negative,
    "__pos__": ufuncs.positive,
    "__abs__": ufuncs.absolute,
    "__invert__": ufuncs.bitwise_not,
}

_PROPERTIES = {
    "T": lambda self: manipulation.transpose(self),
    "mT": lambda self: manipulation.matrix_transpose(self),
    "real": lambda self: ufuncs.real(self),
    "imag": lambda self: ufuncs.imag(self),
    "at": lambda self: updates._IndexUpdateHelper(self),
}


def _set(cls, name, value):
    setattr(cls, name, value)


def attach(cls, *, tracer=False):
    """Installs the operators, methods and properties on `cls`."""
    for name, (fn, prim, float_only) in _BINARY.items():
        op, rop = _binop(fn, prim, float_only)
        op.__name__, rop.__name__ = f"__{name}__", f"__r{name}__"
        op.__doc__ = rop.__doc__ = fn.__doc__
        _set(cls, f"__{name}__", op if prim is None or tracer else _fast_op(op, fn, prim, float_only))
        _set(cls, f"__r{name}__", rop)
    for name, (fn, prim) in _COMPARE.items():
        op, _ = _binop(fn, prim, ordered=name not in ("eq", "ne"))
        op.__name__ = f"__{name}__"
        op.__doc__ = fn.__doc__
        ordered = name not in ("eq", "ne")
        _set(cls, f"__{name}__", op if prim is None or tracer else _fast_op(op, fn, prim, ordered=ordered))
    for name, fn in _METHODS.items():
        _set(cls, name, fn)
    for name, fn in _PROPERTIES.items():
        _set(cls, name, property(fn))
    _set(cls, "copy", _copy)
    if tracer:  # (Python conversions of tracers are core.Tracer's own)
        cls.itemsize = property(lambda self: self.aval.dtype.itemsize)
        cls.nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)


attach(Array)
attach(core.Tracer, tracer=True)
