"""Ahead-of-time stages of a jitted function, as in jax.stages: traced -> lowered -> compiled; and
ShapeDtypeStruct, which stands for an array argument by its shape and dtype."""
import numpy as np

from xjax._src import core, dtypes
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.graph_text import graph_text
from xjax._src.shape_poly import is_symbolic_dim
from xjax._src.sharding import NamedSharding, typed_sharding


class ShapeDtypeStruct:
    """A shape and dtype standing for an array argument (for lower, eval_shape, make_jaxpr)."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding")

    def __init__(self, shape, dtype, *, weak_type=False, sharding=None):
        self.shape = tuple(d if is_symbolic_dim(d) else int(d) for d in shape)
        self.dtype = dtype if dtypes.is_extended(dtype) else dtypes.canonicalize_dtype(dtype)  # key<fry> as it is
        self.weak_type = bool(weak_type)
        self.sharding = sharding

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    @property
    def traced_aval(self):
        """The type a trace gives this argument: with its sharding's Explicit mesh axes, as JAX's."""
        aval = core.ShapedArray(self.shape, self.dtype, self.weak_type)
        s = self.sharding
        if isinstance(s, NamedSharding) and s.mesh.explicit_axes:
            return aval.with_sharding(typed_sharding(s, len(self.shape)))
        return aval

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

    def __eq__(self, other):
        return (isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type)
                == (other.shape, other.dtype, other.weak_type))

    def __hash__(self):
        return hash((self.shape, self.dtype, self.weak_type))


class Traced:
    """A traced jitted function for given argument types."""

    def __init__(self, wrapped, entry, avals):
        self._wrapped = wrapped
        self._entry = entry
        self.in_avals = avals

    jaxpr = property(lambda self: self._entry.jaxpr)

    @property
    def out_info(self):
        return self._entry.out_tree.unflatten(
            [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type, sharding=getattr(a, "_sharding", None))
             for a in self._entry.jaxpr.out_avals])

    def lower(self):
        return Lowered(self._wrapped, self._entry, self.in_avals)


class Lowered:
    """A jitted function lowered for given argument types; `.compile()` gives the executable."""

    def __init__(self, wrapped, entry, avals):
        self._wrapped = wrapped
        self._entry = entry
        self.in_avals = avals

    jaxpr = property(lambda self: self._entry.jaxpr)
    out_info = property(lambda self: Traced(self._wrapped, self._entry, self.in_avals).out_info)

    def as_text(self, dialect=None, *, debug_info=False):
        """The lowered program: the C++ graph, one op per line."""
        return graph_text(self._entry.jaxpr, f"jit_{pe.fun_name(self._wrapped._fun)}")

    def compile(self, compiler_options=None):
        if self._entry.call is None:
            self._wrapped._compile(self._entry, self.in_avals)
        return Compiled(self._wrapped, self._entry, self.in_avals, self.as_text)

    def cost_analysis(self):
        return None


class Compiled:
    """A compiled jitted function: call it with arguments of the types it was lowered for."""

    def __init__(self, wrapped, entry, avals, text_fn):
        self._wrapped = wrapped
        self._entry = entry
        self.in_avals = avals
        self._text_fn = text_fn

    def as_text(self):
        return self._text_fn()

    def cost_analysis(self):
        return None

    def __call__(self, *args, **kwargs):
        key, _, _, avals, ops, tracing, _, _ = self._wrapped._signature(args, kwargs)
        if [(a.shape, a.dtype) for a in avals] != [(a.shape, a.dtype) for a in self.in_avals]:
            raise TypeError(f"Argument types differ from the types for which this computation was compiled: "
                            f"got {[a.str_short() for a in avals]}, compiled for "
                            f"{[a.str_short() for a in self.in_avals]}")
        return self._entry.out_tree.unflatten(self._entry.call(ops))
