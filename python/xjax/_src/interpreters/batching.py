"""Automatic batching (vmap): a BatchTrace carries each value with the axis it is mapped along.

A BatchTracer holds a value of the batched shape and `batch_dim`, the position of the mapped axis
in it. A primitive applied to batch tracers runs its batching rule, with the parent trace current:
    rule(axis, vals, dims, **params) -> (out, out_dim), or (outs, out_dims) for multiple results
where `axis` is the trace's AxisData, `vals` the batched values and `dims` their batch dims
(`not_mapped` for values that are the same across the batch). A rule binds the batched primitive
once, never a loop over the batch. Values of other traces (constants, outer tracers) are unmapped.
"""
import weakref

import numpy as np

from xjax._src import core
from xjax._src.interpreters import partial_eval as pe
from xjax._src.interpreters.array_ops import ops
from xjax._src.jaxpr import axis_names_in, eval_jaxpr, memoize_per_jaxpr
from xjax._src.sharding import NamedSharding, PartitionSpec

not_mapped = None


class AxisData:
    """The mapped axis of one vmap: its name (None when anonymous), size and spmd_axis_name."""

    __slots__ = ("name", "size", "spmd_name")

    def __init__(self, name, size, spmd_name=None):
        self.name = name
        self.size = size
        self.spmd_name = spmd_name

    def key(self):
        return (self.name, self.size, self.spmd_name)


class BatchTracer(core.Tracer):
    """A value mapped along `batch_dim` (its aval is the per-example one)."""

    __slots__ = ("val", "batch_dim")

    def __init__(self, trace, val, batch_dim):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim

    @property
    def aval(self):
        a = getattr(self.val, "traced_aval", None) or core.get_aval(self.val)  # (a split array: its traced type)
        if self.batch_dim is not_mapped:
            return a
        out = a.update(shape=example_shape(self.val, self.batch_dim))
        typed = getattr(a, "_sharding", None)
        if typed is None:
            return out
        spec = list(tuple(typed.spec) + (None,) * (a.ndim - len(typed.spec)))
        del spec[self.batch_dim]  # (the per-example type keeps the other dimensions' splits)
        return out.with_sharding(NamedSharding(typed.mesh, PartitionSpec(*spec)))

    def __repr__(self):
        return f"BatchTracer({self.aval.str_short()}, batch_dim={self.batch_dim})"


def named_axes(params):
    """The axis names a collective's params name (collectives carry them as `axis_name`)."""
    names = params.get("axis_name", ())
    return names if isinstance(names, tuple) else (names,)


class BatchTrace(core.Trace):
    """Interprets primitives on batched values by their batching rules."""

    def __init__(self, parent, axis_data, tag=None):
        super().__init__(parent, tag)
        self.axis_data = axis_data

    def lift(self, x):
        if type(x) is BatchTracer and x._trace.tag is self.tag:
            return x.val, x.batch_dim
        return x, not_mapped

    def process_primitive(self, primitive, args, params):
        vals, dims = [], []
        for a in args:
            v, d = self.lift(a)
            vals.append(v)
            dims.append(d)
        name = self.axis_data.name
        if all(d is not_mapped for d in dims) and (
                name is None or (name not in named_axes(params) and name not in axis_names_in(params))):
            return self.bind_in_parent(primitive, vals, params)
        rule = primitive.batch
        if rule is None:
            raise NotImplementedError(f"Batching rule for '{primitive.name}' not implemented")
        with core.set_current_trace(self.parent):
            out, out_dims = rule(self.axis_data, vals, dims, **params)
        if primitive.multiple_results:
            return [self.pack(v, d) for v, d in zip(out, out_dims)]
        return self.pack(out, out_dims)

    runs_custom_calls_lazily = True

    def process_custom_call(self, primitive, args, params):
        return primitive.process_batched(self, args, params)

    def pack(self, val, dim):
        return val if dim is not_mapped else BatchTracer(self, val, dim)


# ---- moving batch axes (bound in the current trace) ----------------------------------------------

def moveaxis(x, src, dst):
    """x with its axis `src` moved to position `dst` (both non-negative)."""
    if src == dst:
        return x
    perm = [i for i in range(core.get_aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return ops.transpose(x, tuple(perm))


def broadcast_batched(x, size, dst=0):
    """An unmapped x repeated `size` times along a new axis at `dst` (the operand's dims named as JAX
    names them: NumPy integers, which its jaxprs print as such)."""
    shape = list(core.get_aval(x).shape)
    shape.insert(dst, size)
    return ops.broadcast_in_dim(x, tuple(shape), tuple(np.delete(np.arange(len(shape)), dst)))


def matchaxis(x, src, dst, size):
    """x with its batch axis at `dst`: moved from `src`, or materialised when x is unmapped."""
    if src is not_mapped:
        return broadcast_batched(x, size, dst)
    return moveaxis(x, src, dst)


def bdim_at_front(x, dim, size):
    return matchaxis(x, dim, 0, size)


def example_shape(v, dim):
    """The per-example shape of a value mapped along `dim`."""
    shape = core.get_aval(v).shape
    return shape if dim is not_mapped else shape[:dim] + shape[dim + 1:]


def size_of(vals, dims):
    """The batch size, read off the first mapped value."""
    for v, d in zip(vals, dims):
        if d is not not_mapped:
            return core.get_aval(v).shape[d]
    raise ValueError("no mapped value")


# ---- rule helpers: each primitive's definition site calls one of these ----------------------------

def defvectorized(primitive):
    """An op acting on each element (or along axes its params do not name): the batch axis stays."""

    def rule(axis, vals, dims, **params):
        (x,), (d,) = vals, dims
        return primitive.bind(x, **params), d

    primitive.def_rules(batch=rule)


def shift_axes(axes, dim):
    """Per-example axes as axes of the value mapped along `dim`."""
    return tuple(a + (a >= dim) for a in axes)


def defreducer(primitive, param="axes", keeps_rank=False):
    """An op along the axes named by its param `param`: they shift past the batch axis, which stays
    where it is (less the dropped axes before it, unless keeps_rank). As JAX's reducer batcher, the
    shifted axes of a reduction are NumPy integers; a cumulative op's axis stays an int."""
    def rule(axis_data, vals, dims, /, **params):  # positional: the cumulative ops have an `axis` param
        (x,), (d,) = vals, dims
        given = params[param]
        if keeps_rank:
            params[param] = given if given < d else given + 1
            return primitive.bind(x, **params), d
        axes = tuple(np.where(np.less(given, d), given, np.add(given, 1)))
        params[param] = axes
        return primitive.bind(x, **params), int(list(np.delete(np.arange(core.get_aval(x).ndim), axes)).index(d))

    primitive.def_rules(batch=rule)


def broadcast_operands(vals, dims):
    """Operands of an n-ary elementwise op with the batch axis in front, relying on lax's implicit
    broadcasting (rank 0, and size-1 dims between equal ranks) instead of materialising copies."""
    rank = max(core.get_aval(v).ndim - (d is not not_mapped) for v, d in zip(vals, dims))
    out = []
    for v, d in zip(vals, dims):
        shape = core.get_aval(v).shape
        if d is not_mapped:
            out.append(v if not shape else ops.reshape(v, (1,) * (rank + 1 - len(shape)) + shape))
        else:
            v = moveaxis(v, d, 0)
            if len(shape) - 1 < rank:
                v = ops.reshape(v, (shape[d],) + (1,) * (rank - len(shape) + 1) + shape[:d] + shape[d + 1:])
            out.append(v)
    return out


def defbroadcasting(primitive):
    """An n-ary elementwise op with lax's implicit broadcasting (JAX's broadcast batcher): operands
    mapped along one axis (and rank-0 ones) bind as they are; otherwise the batch axes go to the
    front, unmapped operands get a size-1 axis there, and rank-0 mapped ones size-1 trailing axes."""

    def rule(axis, vals, dims, **params):
        shape, dim = next((core.get_aval(v).shape, d) for v, d in zip(vals, dims) if d is not not_mapped)
        if all(core.get_aval(v).shape == shape and d == dim for v, d in zip(vals, dims) if core.get_aval(v).ndim):
            return primitive.bind(*vals, **params), dim
        vals = [bdim_at_front(v, d, 1) if core.get_aval(v).ndim else v for v, d in zip(vals, dims)]
        nd = max(core.get_aval(v).ndim for v in vals)
        vals = [_expand_scalar_batch(v, d, nd) for v, d in zip(vals, dims)]
        return primitive.bind(*vals, **params), 0

    primitive.def_rules(batch=rule)


def _expand_scalar_batch(x, d, nd):
    n = core.get_aval(x).ndim
    return x if d is not_mapped or n == nd else ops.expand_dims(x, tuple(range(n, nd)))


# ---- batched jaxprs (for primitives that hold jaxprs), memoised per jaxpr, pattern and axis ----------

_batched_jaxprs = weakref.WeakKeyDictionary()


def batch_jaxpr(closed, axis, in_batched, instantiate=False):
    """(ClosedJaxpr taking and returning values batched along axis 0 where batched, out batched).

    in_batched[i] says input i carries the batch axis (at 0); instantiate (a bool or one per output)
    makes outputs batched even where they do not depend on a batched input.
    """
    n_out = len(closed.out_avals)
    inst = tuple(instantiate) if isinstance(instantiate, (tuple, list)) else (bool(instantiate),) * n_out
    def make():
        out_batched = []

        def fun(*args):
            trace = BatchTrace(core.current_trace(), axis)
            ins = [BatchTracer(trace, a, 0) if b else a for a, b in zip(args, in_batched)]
            with core.extend_axis_env(axis.name, axis.size), core.new_trace(trace):
                outs = [trace.lift(o) for o in eval_jaxpr(closed.jaxpr, closed.consts, *ins)]
            res = []
            for (v, d), i in zip(outs, inst):
                if d is not_mapped and not i:
                    res.append(v)
                    out_batched.append(False)
                else:
                    res.append(bdim_at_front(v, d, axis.size))
                    out_batched.append(True)
            return res

        avals = [a.update(shape=(axis.size,) + a.shape) if b else a for a, b in zip(closed.in_avals, in_batched)]
        batched = pe.trace_to_jaxpr(fun, avals)
        return batched, tuple(out_batched)

    return memoize_per_jaxpr(_batched_jaxprs, closed, (axis.key(), tuple(in_batched), inst), make)
