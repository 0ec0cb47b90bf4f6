"""The tracing core: abstract values, primitives and `bind`, traces and tracers.

Every operation on arrays is a Primitive. `bind` hands it to the current trace: the EvalTrace
runs it (eagerly, through the backend); the transformations (jit tracing, jvp, vmap) install
their own Trace subclasses, so one primitive definition serves all of them.
"""
import contextlib
import threading

import numpy as np

from xjax._src import dtypes

_SHORT_NAMES = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64",
}


class ShapedArray:
    """The abstract value of an array: static shape, dtype and weak type."""

    __slots__ = ("shape", "dtype", "weak_type", "_hash")

    def __init__(self, shape, dtype, weak_type=False):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self._hash = hash((self.shape, self.dtype, self.weak_type))  # avals key every dispatch cache

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    def update(self, shape=None, dtype=None, weak_type=None):
        return ShapedArray(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type)

    def str_short(self):
        """`f32[3,4]`: the form jaxprs print."""
        return f"{_SHORT_NAMES[self.dtype.name]}[{','.join(str(d) for d in self.shape)}]"

    def __eq__(self, other):
        return (isinstance(other, ShapedArray) and self.shape == other.shape and self.dtype == other.dtype
                and self.weak_type == other.weak_type)

    def __hash__(self):
        return self._hash

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


class Primitive:
    """An operation with one definition site holding all its rules.

    abstract_eval(*avals, **params) -> aval (or list of avals when multiple_results)
    lowering(ctx, *values, **params) -> list of graph values (see backends.lowering)
    jvp / transpose / batch rules are added by the transformations' issues.
    """

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None
        self.lowering = None
        self.impl = None
        self.jvp = None
        self.transpose = None
        self.batch = None

    def bind(self, *args, **params):
        return _state.trace.process_primitive(self, args, params)

    def rule(self, kind):
        """The rule of the given kind, or a NotImplementedError naming primitive and transformation."""
        r = getattr(self, kind)
        if r is None:
            raise NotImplementedError(f"Primitive '{self.name}' has no {kind} rule yet")
        return r

    def __repr__(self):
        return self.name


class Trace:
    """Interprets primitives applied to its tracers."""

    def process_primitive(self, primitive, args, params):
        raise NotImplementedError


class EvalTrace(Trace):
    """Runs primitives on concrete arrays."""

    def process_primitive(self, primitive, args, params):
        for a in args:
            if isinstance(a, Tracer):
                raise a._escaped_error()
        impl = primitive.impl
        if impl is None:
            primitive.rule("impl")
        return impl(*args, **params)


class UnexpectedTracerError(Exception):
    pass


class Tracer:
    """A value standing for an array inside a transformation; subclasses carry their trace's data."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def _escaped_error(self):
        """The error for this tracer used outside its transformation (tracer classes word it)."""
        return UnexpectedTracerError(
            f"Encountered an unexpected tracer: {self}. A function transformed by JAX had a side effect "
            "that let one of its traced values escape its transformation.")


class _TraceState(threading.local):
    def __init__(self):
        self.trace = EvalTrace()


_state = _TraceState()


def current_trace():
    return _state.trace


@contextlib.contextmanager
def set_current_trace(trace):
    """Makes `trace` interpret the primitives bound inside the block."""
    prev, _state.trace = _state.trace, trace
    try:
        yield
    finally:
        _state.trace = prev


def get_aval(x):
    """The abstract value of an array, tracer, NumPy value or Python scalar."""
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    dtype, weak = dtypes.dtype_and_weak(x)
    return ShapedArray(np.shape(x), dtype, weak)


def to_concrete_value(x):
    """The concrete value behind x (x itself when it is not a tracer), or None when it is only known
    abstractly: the one way code asks "is this value concrete?" (a tracer that knows its value may say
    so through its own `to_concrete_value` method)."""
    if isinstance(x, Tracer):
        known = getattr(x, "to_concrete_value", None)
        return known() if known is not None else None
    return x
